// SPDX-License-Identifier: MIT
/*
 * raw.c - the NIC's raw, UC-like queue pairs (see uet.h): what the softnic
 * datapath runs its own reliability over. Sender: segment, fetch, queue; no
 * state survives the message. Receiver: one message in progress per QP,
 * delivered whole at its last packet if nothing was missing or trimmed, and
 * dropped whole otherwise. The run hands raw packets here; the NIC model's
 * PDC machinery never sees them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "raw.h"

int uet_raw_qp_add(struct uet_raw *r, uint32_t n_hosts, uint32_t src, uint32_t dst,
		   uint16_t entropy)
{
	struct uet_rawqp *q;

	if (src >= n_hosts || dst >= n_hosts || src == dst)
		return -EINVAL;
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 16;
		struct uet_rawqp *a = realloc(r->qps, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		r->qps = a;
		r->cap = cap;
	}
	q = &r->qps[r->n];
	memset(q, 0, sizeof(*q));
	q->src = src;
	q->dst = dst;
	q->entropy = entropy;
	q->rx_first = UET_NONE;
	return (int)r->n++;
}

int uet_raw_post(struct uet_raw *r, struct uet_nics *ns, uint32_t qp, uint64_t bytes,
		 uint64_t cookie)
{
	uint32_t mss = ns->cfg.rdma_data_mss;
	uint64_t npkts = bytes ? (bytes + mss - 1) / mss : 1;
	struct uet_rawqp *q;
	struct uet_nic *nic;
	uint32_t first;

	if (qp >= r->n || npkts > (1u << 24))
		return -EINVAL;
	q = &r->qps[qp];
	nic = &ns->nics[q->src];
	first = q->next_psn;
	for (uint64_t i = 0; i < npkts; i++) {
		struct uet_pkt *pkt = uet_pkt_alloc(ns->pkts);
		uint32_t payload = i + 1 < npkts ? mss : (uint32_t)(bytes - (npkts - 1) * mss);

		if (!pkt)
			return -ENOMEM;
		uet_pkt_clear(pkt);
		pkt->kind = UET_PKT_RAW;
		pkt->src = q->src;
		pkt->dst = q->dst;
		pkt->pdc = qp;
		pkt->psn = q->next_psn++;
		pkt->sack_base = first;           /* the message's first PSN */
		pkt->cack = (uint32_t)npkts;      /* and its packet count */
		pkt->value = cookie;
		pkt->payload = (uint16_t)payload;
		pkt->wire = (uint16_t)(payload + UET_WIRE_HDR_BYTES);
		pkt->entropy = q->entropy;
		pkt->dscp = ns->cfg.trimming ? UET_DSCP_TRIMMABLE : UET_DSCP_NO_TRIM;
		pkt->flags = i + 1 == npkts ? UET_PF_EOM : 0;
		ns->pkts->raw_live++;
		uet_des_arm(ns->des, &pkt->ev, uet_pcie_fetch(ns, nic, payload), UET_EV_FETCH_DONE,
			    pkt);
	}
	return 0;
}

void uet_raw_tx_start(struct uet_nics *ns, struct uet_nic *nic, const struct uet_pkt *pkt)
{
	if (ns->monitor_on)
		uet_nic_monitor(ns, pkt, nic->id, false);
	nic->st[UET_ST_TX_DATA_PKTS]++;
	nic->st[UET_ST_TX_DATA_BYTES] += pkt->payload;
}

static void report(struct uet_raw *r, uint64_t now_ps, uint32_t qp, uint64_t cookie, bool ok)
{
	void (*fn)(void *, uint32_t, uint64_t, uint64_t) = ok ? r->ops.delivered : r->ops.dropped;

	if (fn)
		fn(r->ops.ctx, qp, cookie, now_ps);
}

void uet_raw_receive(struct uet_raw *r, struct uet_nics *ns, struct uet_nic *nic,
		     struct uet_pkt *pkt)
{
	struct uet_rawqp *q = &r->qps[pkt->pdc];
	uint32_t psn = pkt->psn, first = pkt->sack_base, qpn = pkt->pdc;
	uint64_t cookie = pkt->value, now = uet_now(ns);
	bool trimmed = pkt->dscp == UET_DSCP_TRIMMED || pkt->dscp == UET_DSCP_TRIMMED_LAST_HOP;
	bool last = psn + 1 == first + pkt->cack;
	uint32_t payload = pkt->payload;

	if (ns->monitor_on)
		uet_nic_monitor(ns, pkt, nic->id, true);
	uet_pkt_free(ns->pkts, pkt); /* before the callbacks, which may post more */
	nic->st[UET_ST_RX_DATA_PKTS]++;
	if (q->rx_active && psn != q->expected) {
		/* a PSN gap: the message in progress lost a packet */
		q->rx_active = false;
		report(r, now, qpn, q->rx_cookie, false);
	}
	q->expected = psn + 1;
	if (!q->rx_active) {
		if (first == q->rx_first)
			return; /* the rest of a message already dropped */
		q->rx_first = first;
		q->rx_cookie = cookie;
		if (psn != first) {
			report(r, now, qpn, cookie, false); /* its head never came */
			return;
		}
		q->rx_active = true;
	}
	if (trimmed) {
		nic->st[UET_ST_RX_TRIMMED]++;
		q->rx_active = false;
		report(r, now, qpn, cookie, false);
		return;
	}
	nic->st[UET_ST_RX_DATA_BYTES] += payload;
	if (last) {
		q->rx_active = false;
		report(r, now, qpn, cookie, true);
	}
}

void uet_raw_fini(struct uet_raw *r)
{
	free(r->qps);
	memset(r, 0, sizeof(*r));
}
