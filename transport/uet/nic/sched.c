// SPDX-License-Identifier: MIT
/*
 * sched.c - the transmit scheduler ("PDC groups and the transmit scheduler";
 * the window and egress-pool checks of "Segmentation").
 *
 * The NIC keeps one queue of groups ready to send and serves it in turns: one
 * packet from one PDC of the head group (the PDCs of a group take turns, and
 * the turn passes on once a PDC has sent), then the group goes to the tail if
 * it has more. Within a PDC the oldest waiting retransmission goes first, then
 * a prefetched payload, then a new segment, and a PDC never skips to a later
 * kind while an earlier one waits for room. A new segment needs room in the
 * group's window (payload + 88 B) and in the egress pool (payload + 106 B,
 * held until its serialization ends), then crosses PCIe; a retransmission is
 * rebuilt without PCIe traffic. A group whose window is full leaves the
 * queue: an ACK, NACK or timeout brings it back at the head, a new message or
 * a prefetched payload at the tail. When the egress pool is full the pass
 * stops with the group at the head and retries on each ACK, NACK or timeout,
 * and when the pool has drained to half.
 *
 * Deviation, documented: the window never enforces less than one full packet
 * (RdmaDataMSS + 88 B), so a policy whose window falls below one packet sends
 * one packet at a time instead of stalling its group for good.
 */
#include "nic.h"

/* Room for @nominal more bytes in @g's window, which is never below one full packet. */
static bool window_has_room(const struct uet_nics *ns, const struct uet_group *g,
			    uint32_t nominal)
{
	uint64_t cwnd = g->cc.ctl.cwnd, floor = ns->cfg.rdma_data_mss + UET_NOMINAL_HDR_BYTES;

	return g->inflight + nominal <= (cwnd > floor ? cwnd : floor);
}

void uet_arm_pool_wake(struct uet_nics *ns, struct uet_nic *nic)
{
	uint64_t t;

	if (nic->pool_ev)
		return;
	t = uet_bytepool_time_at_or_below(&nic->egress, ns->cfg.egress_pool_bytes / 2);
	/* not reachable from packets already on the wire: re-armed at the next start */
	if (t != UINT64_MAX)
		nic->pool_ev = uet_nic_schedule(ns, t, UET_EV_POOL_WAKE, nic, 0);
}

/* Take @psn off the head of @pdc's retransmission FIFO. */
static void retx_pop(struct uet_pdc *pdc, uint32_t psn)
{
	pdc->retx_head = uet_tx(pdc, psn)->retx_next;
	if (pdc->retx_head == UET_NONE)
		pdc->retx_tail = UET_NONE;
}

/* Drop heads of the retransmission FIFO that were acknowledged while waiting. */
static void retx_skip_stale(struct uet_pdc *pdc)
{
	while (pdc->retx_head != UET_NONE && !uet_tx_queued(uet_tx_state(pdc, pdc->retx_head)))
		retx_pop(pdc, pdc->retx_head);
}

/* Account for a retransmission or a new segment leaving the backlog. */
static void backlog_take(struct uet_group *g, uint32_t payload, uint32_t wire)
{
	g->backlog_bytes -= payload;
	g->backlog_pkts--;
	g->credit_used += wire;
}

/* Try to send one packet of @pdc. */
static enum uet_try pdc_try(struct uet_nics *ns, struct uet_nic *nic, struct uet_group *g,
			    struct uet_pdc *pdc)
{
	const struct uet_nic_cfg *c = &ns->cfg;
	enum { K_RETX, K_PREFETCHED, K_NEW } kind;
	uint32_t psn, payload, wire;
	uint64_t now = uet_now(ns);
	struct uet_pkt *pkt;

	retx_skip_stale(pdc);
	if (pdc->retx_head != UET_NONE) {
		kind = K_RETX;
		psn = pdc->retx_head;
	} else if (pdc->pf_head) {
		kind = K_PREFETCHED;
		psn = pdc->pf_head->psn;
	} else if (pdc->next_psn < pdc->npkts) {
		kind = K_NEW;
		psn = pdc->next_psn;
	} else {
		return UET_TRY_NOTHING;
	}
	payload = uet_pdc_payload(ns, pdc, psn);
	wire = payload + UET_WIRE_HDR_BYTES;

	/* under receiver credit every byte put on the wire, new or again, spends credit */
	if (kind != K_PREFETCHED && uet_group_credit_gated(g) &&
	    g->credit_used + wire > g->credit_granted)
		return UET_TRY_NO_CREDIT;
	if (kind == K_NEW && c->prefetch_enable)
		return uet_prefetch_fetch(ns, nic, g, pdc);
	if (!window_has_room(ns, g, payload + UET_NOMINAL_HDR_BYTES))
		return UET_TRY_BLOCKED;
	if (uet_group_rate_limited(g) && now < g->next_send_ps)
		return UET_TRY_PACED;
	uet_bytepool_drain(&nic->egress, now);
	if (nic->egress.used + wire > c->egress_pool_bytes)
		return UET_TRY_POOL_FULL;

	switch (kind) {
	case K_RETX: {
		bool rto = uet_tx(pdc, psn)->state == UET_TX_RTXQ_RTO;

		pkt = uet_pkt_alloc_data(ns->pkts);
		if (!pkt)
			return UET_TRY_BLOCKED;
		retx_pop(pdc, psn);
		backlog_take(g, payload, wire);
		uet_segment_commit(ns, nic, g, pdc, pkt, psn, true, rto);
		uet_port_send(ns->fab, nic->port, pkt);
		break;
	}
	case K_PREFETCHED:
		pkt = pdc->pf_head;
		pdc->pf_head = UET_PKT_NEXT(pkt);
		if (!pdc->pf_head)
			pdc->pf_tail = NULL;
		uet_segment_commit(ns, nic, g, pdc, pkt, psn, false, false);
		uet_port_send(ns->fab, nic->port, pkt);
		uet_prefetch_release(ns, nic, wire);
		break;
	case K_NEW:
		pkt = uet_segment_new(ns, pdc);
		if (!pkt)
			return UET_TRY_BLOCKED;
		backlog_take(g, payload, wire);
		uet_segment_commit(ns, nic, g, pdc, pkt, psn, false, false);
		uet_des_arm(ns->des, pkt, uet_pcie_fetch(ns, nic, payload), UET_EV_FETCH_DONE);
		break;
	}
	return UET_TRY_SENT;
}

/*
 * One packet from the group's PDC whose turn it is, or the next that can
 * send. A PDC stopped only by a full prefetch buffer lets the others go (what
 * they commit drains the buffer); the group waits for room if none can.
 */
static enum uet_try group_try(struct uet_nics *ns, struct uet_nic *nic, struct uet_group *g)
{
	struct uet_pdc *pdc = g->turn;
	bool prefetch_full = false;

	for (uint32_t i = 0; i < g->n_tx && pdc; i++, pdc = pdc->ring_next) {
		enum uet_try r = pdc_try(ns, nic, g, pdc);

		if (r == UET_TRY_NOTHING)
			continue;
		if (r == UET_TRY_PREFETCH_FULL) {
			prefetch_full = true;
			continue;
		}
		if (r == UET_TRY_SENT)
			g->turn = pdc->ring_next;
		return r;
	}
	return prefetch_full ? UET_TRY_PREFETCH_FULL : UET_TRY_NOTHING;
}

void uet_nic_tx_pass(struct uet_nics *ns, struct uet_nic *nic)
{
	struct uet_group *g;

	nic->pool_blocked = false;
	while ((g = nic->rq_head)) {
		switch (group_try(ns, nic, g)) {
		case UET_TRY_SENT:
			uet_rq_remove(nic, g);
			if (uet_group_has_work(g))
				uet_rq_push_tail(nic, g);
			break;
		case UET_TRY_POOL_FULL:
			nic->pool_blocked = true;
			uet_arm_pool_wake(ns, nic);
			return;
		case UET_TRY_PREFETCH_FULL:
			uet_rq_remove(nic, g);
			uet_prefetch_wait(nic, g);
			break;
		case UET_TRY_PACED:
			uet_rq_remove(nic, g);
			if (!g->pace_ev)
				g->pace_ev = uet_nic_schedule(ns, g->next_send_ps, UET_EV_PACE, g, 0);
			break;
		case UET_TRY_NO_CREDIT:
			uet_rq_remove(nic, g);
			uet_credit_blocked(ns, g);
			break;
		case UET_TRY_BLOCKED:
		case UET_TRY_NOTHING:
			uet_rq_remove(nic, g);
			break;
		}
	}
}

void uet_nic_kick(struct uet_nics *ns, struct uet_group *g)
{
	if (!g->in_rq && uet_group_has_work(g))
		uet_rq_push_head(g->nic, g);
	uet_nic_tx_pass(ns, g->nic);
}

void uet_nic_pool_wake(struct uet_nics *ns, struct uet_nic *nic)
{
	nic->pool_ev = NULL;
	uet_nic_tx_pass(ns, nic);
}

void uet_nic_pace(struct uet_nics *ns, struct uet_group *g)
{
	g->pace_ev = NULL;
	if (!g->in_rq && uet_group_has_work(g))
		uet_rq_push_tail(g->nic, g);
	uet_nic_tx_pass(ns, g->nic);
}

void uet_requeue(struct uet_nics *ns, struct uet_pdc *pdc, uint32_t psn, bool timeout)
{
	struct uet_txpkt *t = uet_tx(pdc, psn);
	struct uet_group *g = pdc->grp;
	uint32_t payload = uet_pdc_payload(ns, pdc, psn);

	t->timer_on = false;
	t->state = timeout ? UET_TX_RTXQ_RTO : UET_TX_RTXQ;
	t->retx_next = UET_NONE;
	if (pdc->retx_tail != UET_NONE)
		uet_tx(pdc, pdc->retx_tail)->retx_next = psn;
	else
		pdc->retx_head = psn;
	pdc->retx_tail = psn;
	g->inflight -= payload + UET_NOMINAL_HDR_BYTES;
	g->backlog_bytes += payload;
	g->backlog_pkts++;
	if (uet_group_credit_gated(g))
		/* the lost packet must be pulled again */
		uet_credit_need(ns, g, pdc->id, payload + UET_WIRE_HDR_BYTES);
}
