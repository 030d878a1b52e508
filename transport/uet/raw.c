// SPDX-License-Identifier: MIT
/*
 * raw.c - the NIC's raw, UC-like queue pairs (see uet.h): what the softnic
 * datapath runs its own reliability over. Sender: segment, fetch, queue; no
 * state survives the message. Receiver: one message in progress per QP,
 * delivered whole at its last packet if nothing was missing or trimmed, and
 * dropped whole otherwise.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uet_int.h"

void uet_sim_set_raw_ops(struct uet_sim *s, const struct uet_raw_ops *ops)
{
	s->raw_ops = *ops;
}

int uet_sim_raw_qp(struct uet_sim *s, uint32_t src, uint32_t dst, uint16_t entropy)
{
	struct uet_rawqp *q;

	if (src >= s->n_hosts || dst >= s->n_hosts || src == dst)
		return -EINVAL;
	if (s->n_rawqps == s->cap_rawqps) {
		uint32_t cap = s->cap_rawqps ? s->cap_rawqps * 2 : 16;
		struct uet_rawqp *a = realloc(s->rawqps, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		s->rawqps = a;
		s->cap_rawqps = cap;
	}
	q = &s->rawqps[s->n_rawqps];
	memset(q, 0, sizeof(*q));
	q->src = src;
	q->dst = dst;
	q->entropy = entropy;
	q->rx_first = UET_NONE;
	return (int)s->n_rawqps++;
}

int uet_sim_raw_post(struct uet_sim *s, uint32_t qp, uint64_t bytes, uint64_t cookie)
{
	uint32_t mss = s->cfg.rdma_data_mss;
	uint64_t npkts = bytes ? (bytes + mss - 1) / mss : 1;
	struct uet_rawqp *q;
	struct uet_nic *nic;
	uint32_t first;

	if (qp >= s->n_rawqps || npkts > (1u << 24))
		return -EINVAL;
	q = &s->rawqps[qp];
	nic = &s->nics[q->src];
	first = q->next_psn;
	for (uint64_t i = 0; i < npkts; i++) {
		struct uet_pkt *pkt = uet_pkt_alloc(s);
		uint32_t payload = i + 1 < npkts ? mss : (uint32_t)(bytes - (npkts - 1) * mss);

		if (!pkt)
			return -ENOMEM;
		memset((char *)pkt + sizeof(pkt->ev), 0, sizeof(*pkt) - sizeof(pkt->ev));
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
		pkt->dscp = s->cfg.trimming ? UET_DSCP_TRIMMABLE : UET_DSCP_NO_TRIM;
		pkt->flags = i + 1 == npkts ? UET_PF_EOM : 0;
		s->raw_live++;
		uet_des_arm(&s->des, &pkt->ev, uet_pcie_fetch(s, nic, payload), UET_EV_FETCH_DONE,
			    pkt);
	}
	return 0;
}

static void report(struct uet_sim *s, uint32_t qp, uint64_t cookie, bool ok)
{
	void (*fn)(void *, uint32_t, uint64_t, uint64_t) =
		ok ? s->raw_ops.delivered : s->raw_ops.dropped;

	if (fn)
		fn(s->raw_ops.ctx, qp, cookie, s->des.now_ps);
}

void uet_raw_receive(struct uet_sim *s, struct uet_nic *nic, struct uet_pkt *pkt)
{
	struct uet_rawqp *q = &s->rawqps[pkt->pdc];
	uint32_t psn = pkt->psn, first = pkt->sack_base, qpn = pkt->pdc;
	uint64_t cookie = pkt->value;
	bool trimmed = pkt->dscp == UET_DSCP_TRIMMED || pkt->dscp == UET_DSCP_TRIMMED_LAST_HOP;
	bool last = psn + 1 == first + pkt->cack;
	uint32_t payload = pkt->payload;

	uet_pkt_free(s, pkt); /* before the callbacks, which may post more */
	nic->st[UET_ST_RX_DATA_PKTS]++;
	if (q->rx_active && psn != q->expected) {
		/* a PSN gap: the message in progress lost a packet */
		q->rx_active = false;
		report(s, qpn, q->rx_cookie, false);
	}
	q->expected = psn + 1;
	if (!q->rx_active) {
		if (first == q->rx_first)
			return; /* the rest of a message already dropped */
		q->rx_first = first;
		q->rx_cookie = cookie;
		if (psn != first) {
			report(s, qpn, cookie, false); /* its head never came */
			return;
		}
		q->rx_active = true;
	}
	if (trimmed) {
		nic->st[UET_ST_RX_TRIMMED]++;
		q->rx_active = false;
		report(s, qpn, cookie, false);
		return;
	}
	nic->st[UET_ST_RX_DATA_BYTES] += payload;
	if (last) {
		q->rx_active = false;
		report(s, qpn, cookie, true);
	}
}
