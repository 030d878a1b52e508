// SPDX-License-Identifier: MIT
/*
 * raw.c - the NIC's raw, UC-like queue pairs (see uet.h): what the softnic
 * datapath runs its own reliability over.
 *
 * Sender: a posted message waits in its QP's send queue; the host serves
 * the QPs that have packets round robin, one packet per turn. A data QP's
 * packet reserves payload + 106 B of the NIC's egress pool (shared with the
 * NIC model's own traffic) until its serialization ends, so the NIC holds at
 * most EgressBufferSize bytes and the rest waits in host memory; when the
 * pool is full the host stops and retries once it has drained to half. A
 * paced QP (rate_bps) spaces its packets at that rate (wire bytes), waiting
 * on its own event. A control QP's packets use the control class: no pool
 * reservation, not trimmable, the NIC port's control queue. Each packet is
 * fetched over PCIe, then queued on the port; no state survives the
 * message and nothing is retransmitted.
 *
 * Receiver: one message in progress per QP, delivered whole at its last
 * packet if nothing was missing or trimmed (with a CE flag if any packet was
 * marked), and dropped whole otherwise. The run hands raw packets here; the
 * NIC model's PDC machinery never sees them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "raw.h"

int uet_raw_init(struct uet_raw *r, uint32_t n_hosts)
{
	memset(r, 0, sizeof(*r));
	r->hosts = calloc(n_hosts ? n_hosts : 1, sizeof(*r->hosts));
	if (!r->hosts)
		return -ENOMEM;
	r->n_hosts = n_hosts;
	for (uint32_t h = 0; h < n_hosts; h++)
		r->hosts[h].id = h;
	return 0;
}

int uet_raw_qp_add(struct uet_raw *r, uint32_t src, uint32_t dst,
		   const struct uet_raw_qp_attr *attr)
{
	struct uet_rawqp *q;

	if (src >= r->n_hosts || dst >= r->n_hosts || src == dst)
		return -EINVAL;
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 16;
		struct uet_rawqp **a = realloc(r->qps, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		r->qps = a;
		r->cap = cap;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->id = r->n;
	q->src = src;
	q->dst = dst;
	q->entropy = attr->entropy;
	q->control = attr->control;
	q->rx_first = UET_NONE;
	q->rate_bps = attr->rate_bps;
	q->ps_per_byte_q16 = attr->rate_bps ? uet_ps_per_byte_q16(attr->rate_bps) : 0;
	r->qps[r->n] = q;
	return (int)r->n++;
}

int uet_raw_set_rate(struct uet_raw *r, uint32_t qp, uint64_t rate_bps)
{
	if (qp >= r->n)
		return -EINVAL;
	r->qps[qp]->rate_bps = rate_bps;
	r->qps[qp]->ps_per_byte_q16 = rate_bps ? uet_ps_per_byte_q16(rate_bps) : 0;
	return 0;
}

/* ---- send queues and the ready ring ----------------------------------------------------------- */

static int sq_push(struct uet_rawqp *q, const struct uet_rawmsg *m)
{
	if (q->sq_n == q->sq_cap) {
		uint32_t cap = q->sq_cap ? q->sq_cap * 2 : 8;
		struct uet_rawmsg *a = malloc(cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		for (uint32_t i = 0; i < q->sq_n; i++)
			a[i] = q->sq[(q->sq_head + i) % q->sq_cap];
		free(q->sq);
		q->sq = a;
		q->sq_cap = cap;
		q->sq_head = 0;
	}
	q->sq[(q->sq_head + q->sq_n) % q->sq_cap] = *m;
	q->sq_n++;
	return 0;
}

static int ready_push(struct uet_rawhost *h, struct uet_rawqp *q)
{
	if (q->ready)
		return 0;
	if (h->rq_n == h->rq_cap) {
		uint32_t cap = h->rq_cap ? h->rq_cap * 2 : 16;
		uint32_t *a = malloc(cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		for (uint32_t i = 0; i < h->rq_n; i++)
			a[i] = h->ready[(h->rq_head + i) % h->rq_cap];
		free(h->ready);
		h->ready = a;
		h->rq_cap = cap;
		h->rq_head = 0;
	}
	h->ready[(h->rq_head + h->rq_n) % h->rq_cap] = q->id;
	h->rq_n++;
	q->ready = true;
	return 0;
}

static void ready_pop(struct uet_raw *r, struct uet_rawhost *h)
{
	r->qps[h->ready[h->rq_head]]->ready = false;
	h->rq_head = (h->rq_head + 1) % h->rq_cap;
	h->rq_n--;
}

/* ---- transmit ------------------------------------------------------------------------------- */

static void arm_wake(struct uet_nics *ns, struct uet_nic *nic, struct uet_rawhost *h)
{
	uint64_t t;

	if (h->wake_armed)
		return;
	t = uet_bytepool_time_at_or_below(&nic->egress, ns->cfg.egress_pool_bytes / 2);
	/* not reachable from packets already on the wire: re-armed at the next start */
	if (t == UINT64_MAX)
		return;
	h->wake_armed = true;
	uet_nic_schedule(ns, t, UET_EV_RAW_WAKE, h, 0);
}

/* Build and fetch the next packet of @q's head message. Return: 0, -ENOMEM. */
static int send_one(struct uet_raw *r, struct uet_nics *ns, struct uet_nic *nic,
		    struct uet_rawqp *q, uint32_t wire, uint32_t payload)
{
	struct uet_rawmsg *m = &q->sq[q->sq_head];
	struct uet_pkt *pkt = uet_pkt_alloc(ns->pkts);
	uint32_t i = m->sent;

	if (!pkt)
		return -ENOMEM;
	uet_pkt_clear(pkt);
	pkt->kind = UET_PKT_RAW;
	pkt->src = q->src;
	pkt->dst = q->dst;
	pkt->pdc = q->id;
	pkt->psn = m->first_psn + i;
	pkt->sack_base = m->first_psn;   /* the message's first PSN */
	pkt->cack = m->npkts;            /* and its packet count */
	pkt->value = m->cookie;
	pkt->raw_payload = (uint16_t)payload;
	pkt->wire = (uint16_t)wire;
	pkt->entropy = q->entropy;
	if (q->control)
		pkt->dscp = UET_DSCP_CONTROL;
	else
		pkt->dscp = ns->cfg.trimming ? UET_DSCP_TRIMMABLE : UET_DSCP_NO_TRIM;
	pkt->flags = i + 1 == m->npkts ? UET_PF_EOM : 0;
	if (!q->control)
		nic->egress.used += wire;
	ns->pkts->raw_live++;
	r->queued_pkts--;
	uet_des_arm(ns->des, pkt, uet_pcie_fetch(ns, nic, payload), UET_EV_FETCH_DONE);
	if (q->ps_per_byte_q16) {
		uint64_t now = uet_now(ns), base = q->next_ps > now ? q->next_ps : now;

		q->next_ps = base + uet_ser_ps(q->ps_per_byte_q16, wire);
	}
	if (++m->sent == m->npkts) {
		uint64_t done = m->cookie;

		q->sq_head = (q->sq_head + 1) % q->sq_cap;
		q->sq_n--;
		if (r->ops.sent)
			r->ops.sent(r->ops.ctx, q->id, done, uet_now(ns));
	}
	return 0;
}

/* Serve @h's QPs with packets, round robin, until the pool, pacing or the queues stop it. */
static void raw_pass(struct uet_raw *r, struct uet_nics *ns, struct uet_rawhost *h)
{
	struct uet_nic *nic = &ns->nics[h->id];
	uint32_t mss = ns->cfg.rdma_data_mss;

	h->blocked = false;
	while (h->rq_n) {
		struct uet_rawqp *q = r->qps[h->ready[h->rq_head]];
		const struct uet_rawmsg *m = &q->sq[q->sq_head];
		uint64_t now = uet_now(ns), left = m->bytes - (uint64_t)m->sent * mss;
		uint32_t payload = m->sent + 1 < m->npkts ? mss : (uint32_t)left;
		uint32_t wire = payload + UET_WIRE_HDR_BYTES;

		if (q->ps_per_byte_q16 && now < q->next_ps) {
			ready_pop(r, h);
			if (!q->pace_armed) {
				q->pace_armed = true;
				uet_nic_schedule(ns, q->next_ps, UET_EV_RAW_PACE, q, 0);
			}
			continue;
		}
		if (!q->control) {
			uet_bytepool_drain(&nic->egress, now);
			if (nic->egress.used + wire > ns->cfg.egress_pool_bytes) {
				h->blocked = true;
				arm_wake(ns, nic, h);
				return;
			}
		}
		if (send_one(r, ns, nic, q, wire, payload) < 0) {
			ns->oom = true;
			return;
		}
		ready_pop(r, h);
		if (q->sq_n && ready_push(h, q) < 0) {
			ns->oom = true;
			return;
		}
	}
}

int uet_raw_post(struct uet_raw *r, struct uet_nics *ns, uint32_t qp, uint64_t bytes,
		 uint64_t cookie)
{
	uint32_t mss = ns->cfg.rdma_data_mss;
	uint64_t npkts = bytes ? (bytes + mss - 1) / mss : 1;
	struct uet_rawmsg m = { .bytes = bytes, .cookie = cookie };
	struct uet_rawqp *q;
	int rc;

	if (qp >= r->n || npkts > (1u << 24))
		return -EINVAL;
	q = r->qps[qp];
	m.first_psn = q->next_psn;
	m.npkts = (uint32_t)npkts;
	rc = sq_push(q, &m);
	if (rc < 0)
		return rc;
	q->next_psn += (uint32_t)npkts;
	r->queued_pkts += npkts;
	if (!q->pace_armed) {
		rc = ready_push(&r->hosts[q->src], q);
		if (rc < 0)
			return rc;
	}
	if (!r->hosts[q->src].blocked)
		raw_pass(r, ns, &r->hosts[q->src]);
	return ns->oom ? -ENOMEM : 0;
}

void uet_raw_wake(struct uet_raw *r, struct uet_nics *ns, struct uet_rawhost *h)
{
	h->wake_armed = false;
	raw_pass(r, ns, h);
}

void uet_raw_pace(struct uet_raw *r, struct uet_nics *ns, struct uet_rawqp *q)
{
	struct uet_rawhost *h = &r->hosts[q->src];

	q->pace_armed = false;
	if (q->sq_n && ready_push(h, q) < 0) {
		ns->oom = true;
		return;
	}
	if (!h->blocked)
		raw_pass(r, ns, h);
}

void uet_raw_tx_start(struct uet_raw *r, struct uet_nics *ns, struct uet_nic *nic,
		      const struct uet_pkt *pkt, uint64_t end_ps)
{
	struct uet_rawhost *h = &r->hosts[nic->id];

	if (ns->monitor_on)
		uet_nic_monitor(ns, pkt, nic->id, false);
	nic->st[UET_ST_TX_DATA_PKTS]++;
	nic->st[UET_ST_TX_DATA_BYTES] += pkt->raw_payload;
	if (pkt->dscp == UET_DSCP_CONTROL)
		return;
	if (uet_bytepool_release_at(&nic->egress, ns->mem, end_ps, pkt->wire) < 0) {
		ns->oom = true;
		nic->egress.used -= pkt->wire;
	}
	if (h->blocked)
		arm_wake(ns, nic, h);
}

/* ---- receive -------------------------------------------------------------------------------- */

static void report(struct uet_raw *r, uint64_t now_ps, uint32_t qp, uint64_t cookie, bool ok,
		   bool ce)
{
	if (ok && r->ops.delivered)
		r->ops.delivered(r->ops.ctx, qp, cookie, now_ps, ce);
	else if (!ok && r->ops.dropped)
		r->ops.dropped(r->ops.ctx, qp, cookie, now_ps);
}

void uet_raw_receive(struct uet_raw *r, struct uet_nics *ns, struct uet_nic *nic,
		     struct uet_pkt *pkt)
{
	struct uet_rawqp *q = r->qps[pkt->pdc];
	uint32_t psn = pkt->psn, first = pkt->sack_base, qpn = pkt->pdc;
	uint64_t cookie = pkt->value, now = uet_now(ns);
	bool trimmed = uet_dscp_is_trimmed(pkt->dscp);
	bool last = psn + 1 == first + pkt->cack, ce = pkt->flags & UET_PF_CE;
	uint32_t payload = pkt->raw_payload;

	if (ns->monitor_on)
		uet_nic_monitor(ns, pkt, nic->id, true);
	uet_pkt_free(ns->pkts, pkt); /* before the callbacks, which may post more */
	nic->st[UET_ST_RX_DATA_PKTS]++;
	if (q->rx_active && psn != q->expected) {
		/* a PSN gap: the message in progress lost a packet */
		q->rx_active = false;
		report(r, now, qpn, q->rx_cookie, false, false);
	}
	q->expected = psn + 1;
	if (!q->rx_active) {
		if (first == q->rx_first)
			return; /* the rest of a message already dropped */
		q->rx_first = first;
		q->rx_cookie = cookie;
		q->rx_ce = false;
		if (psn != first) {
			report(r, now, qpn, cookie, false, false); /* its head never came */
			return;
		}
		q->rx_active = true;
	}
	if (trimmed) {
		nic->st[UET_ST_RX_TRIMMED]++;
		q->rx_active = false;
		report(r, now, qpn, cookie, false, false);
		return;
	}
	q->rx_ce |= ce;
	nic->st[UET_ST_RX_DATA_BYTES] += payload;
	if (last) {
		q->rx_active = false;
		report(r, now, qpn, cookie, true, q->rx_ce);
	}
}

void uet_raw_fini(struct uet_raw *r)
{
	for (uint32_t i = 0; i < r->n; i++) {
		free(r->qps[i]->sq);
		free(r->qps[i]);
	}
	for (uint32_t h = 0; h < r->n_hosts; h++)
		free(r->hosts[h].ready);
	free(r->qps);
	free(r->hosts);
	memset(r, 0, sizeof(*r));
}
