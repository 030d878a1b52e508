// SPDX-License-Identifier: MIT
/*
 * prefetch.c - the prefetch buffer ("Prefetch buffer").
 *
 * With PrefetchBufferEnable the NIC fetches new segments ahead into one
 * NIC-wide buffer of PrefetchBufferSize bytes (a packet's full size on the
 * wire each), gated by the buffer's room rather than by the window and the
 * egress pool; the window and the pool are checked when a prefetched payload
 * is committed to the wire, and its buffer space is released then. A payload
 * arriving in the buffer brings its group back at the tail of the ready
 * queue; when the buffer drains to half its size or less, the transmit
 * process starts again. Without the buffer a fetched payload goes straight to
 * the port.
 *
 * A full buffer stops only fetches: a group whose PDCs can send nothing else
 * (no retransmission, no prefetched payload) waits off the ready queue, and
 * the others go on committing what they prefetched, which is what drains the
 * buffer; the waiters come back at the tail when it is half empty.
 *
 * The scheduler calls down into this file; what a prefetched payload starts
 * (a transmit pass) is left to the caller, as uet_nic_fetch_done() says.
 */
#include "nic.h"

enum uet_try uet_prefetch_fetch(struct uet_nics *ns, struct uet_nic *nic, struct uet_group *g,
				struct uet_pdc *pdc)
{
	uint32_t psn = pdc->next_psn, payload = uet_pdc_payload(ns, pdc, psn);
	uint32_t wire = payload + UET_WIRE_HDR_BYTES;
	struct uet_pkt *pkt;

	if (nic->prefetch_used + wire > ns->cfg.prefetch_bytes)
		return UET_TRY_PREFETCH_FULL;
	pkt = uet_pkt_alloc(ns->pkts);
	if (!pkt)
		return UET_TRY_BLOCKED;
	if (!uet_segment_claim_psn(ns, pdc)) {
		uet_pkt_free(ns->pkts, pkt);
		return UET_TRY_BLOCKED;
	}
	g->backlog_bytes -= payload;
	g->backlog_pkts--;
	g->credit_used += wire;
	nic->prefetch_used += wire;
	pkt->kind = UET_PKT_DATA;
	pkt->src = nic->id;
	pkt->dst = pdc->peer;
	pkt->pdc = pdc->id;
	pkt->psn = psn;
	uet_des_arm(ns->des, pkt, uet_pcie_fetch(ns, nic, payload), UET_EV_FETCH_DONE);
	return UET_TRY_SENT;
}

void uet_prefetch_wait(struct uet_nic *nic, struct uet_group *g)
{
	uet_gqueue_push(&nic->pfw, g);
	nic->prefetch_blocked = true;
}

void uet_prefetch_release(struct uet_nics *ns, struct uet_nic *nic, uint32_t wire)
{
	nic->prefetch_used -= wire;
	if (!nic->prefetch_blocked || nic->prefetch_used > ns->cfg.prefetch_bytes / 2)
		return;
	nic->prefetch_blocked = false;
	for (struct uet_group *g; (g = uet_gqueue_pop(&nic->pfw));)
		uet_rq_push_tail(nic, g);
	if (!nic->pass_ev)
		nic->pass_ev = uet_nic_schedule(ns, uet_now(ns), UET_EV_TX_PASS, nic, 0);
}

bool uet_nic_fetch_done(struct uet_nics *ns, struct uet_pkt *pkt)
{
	struct uet_nic *nic = &ns->nics[pkt->src];
	struct uet_pdc *pdc;

	if (!ns->cfg.prefetch_enable) {
		uet_port_send(ns->fab, nic->port, pkt);
		return false;
	}
	pdc = ns->pdcs[pkt->pdc];
	pkt->next = NULL;
	if (pdc->pf_tail)
		pdc->pf_tail->next = pkt;
	else
		pdc->pf_head = pkt;
	pdc->pf_tail = pkt;
	uet_tx(pdc, pkt->psn)->state = UET_TX_PREFETCHED;
	uet_gqueue_remove(&nic->pfw, pdc->grp);
	uet_rq_push_tail(nic, pdc->grp);
	return true;
}
