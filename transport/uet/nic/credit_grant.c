// SPDX-License-Identifier: MIT
/*
 * credit_grant.c - receiver credit (EQDS), a pcm extension of the NIC model:
 * the receiver's side. credit.c is the sender's.
 *
 * A package that drives PCM_CTRL_CUMULATIVE_CREDIT runs once per receiving
 * NIC (flow location = destination): that instance sums every sender's
 * requests and grants cumulative credit at its pace; the NIC hands the credit
 * to the peers with demand round-robin, one full packet (RdmaDataMSS + 106 B)
 * at a time, and feeds the package again every CreditTickInterval (by
 * default the time RdmaDataMSS bytes take on the link) while demand is left. Credit counts bytes on the wire, so
 * credit paced at the link rate fills the link and no more.
 *
 * Requests carry the sender group's cumulative total (credit.c): a receiver
 * meeting a new sender group starts its count afresh, and a repeated request
 * makes it send its grant again, which may have been lost.
 */
#include "nic.h"

/* Receiver: send @g's sender group its cumulative grant. */
static void send_grant(struct uet_nics *ns, struct uet_nic *nic, struct uet_group *g)
{
	uet_send_control(ns, nic, g->peer, g->cr_sender - 1, UET_PKT_CREDIT, g->cr_granted,
			 UET_CREDIT_WIRE_BYTES);
}

static void feed_credit(struct uet_nics *ns, struct uet_nic *nic, const struct pcm_event *ev)
{
	if (uet_cc_credit_feed(&nic->credit, ev, uet_now(ns)))
		nic->st[UET_ST_HANDLER_CALLS]++;
}

static void distribute(struct uet_nics *ns, struct uet_nic *nic)
{
	uint64_t total = uet_cc_credit(&nic->credit);
	uint64_t avail = total > nic->credit_distributed ? total - nic->credit_distributed : 0;
	uint64_t quantum = ns->cfg.rdma_data_mss + UET_WIRE_HDR_BYTES;
	struct uet_group *g;

	while ((g = nic->crr.head) && avail) {
		uint64_t demand = g->cr_requested - g->cr_granted;
		uint64_t q = demand < quantum ? demand : quantum;

		if (q > avail)
			break;
		avail -= q;
		nic->credit_distributed += q;
		g->cr_granted += q;
		send_grant(ns, nic, g);
		uet_gqueue_pop(&nic->crr);
		if (g->cr_requested > g->cr_granted)
			uet_gqueue_push(&nic->crr, g);
	}
	if (nic->crr.head && !nic->credit_tick_ev) {
		uint64_t dt = ns->cfg.credit_tick_ps;

		if (!dt)
			dt = uet_ser_ps(uet_port_ps_per_byte_q16(ns->fab, nic->port), ns->cfg.rdma_data_mss);
		nic->credit_tick_ev = uet_nic_schedule(ns, uet_now(ns) + dt, UET_EV_CREDIT_TICK, nic,
						       0);
	}
}

void uet_nic_credit_tick(struct uet_nics *ns, struct uet_nic *nic)
{
	static const struct pcm_event none;

	nic->credit_tick_ev = NULL;
	if (!nic->crr.head)
		return;
	feed_credit(ns, nic, &none);
	distribute(ns, nic);
}

void uet_credit_request_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt)
{
	struct uet_pdc *pdc = ns->pdcs[pkt->pdc];
	uint32_t policy = pkt->sack_base;
	struct uet_group *g;
	struct pcm_event ev;

	if (!pdc || policy >= ns->cc.n || !ns->cc.cc[policy].receiver_credit ||
	    !uet_pdc_rx_open(ns, nic, pdc))
		return; /* a late request of a message already complete */
	g = pdc->rx.grp;
	/* the instance runs the sender's credit package, whatever this side's group runs */
	if (!nic->credit.cc &&
	    uet_cc_attach_receiver(&ns->cc.cc[policy], &nic->credit, nic->id, uet_now(ns)) < 0) {
		ns->oom = true;
		return;
	}
	if (g->cr_sender != pkt->psn + 1) {
		/* a new sender group: its totals start from zero */
		g->cr_sender = pkt->psn + 1;
		g->cr_requested = g->cr_granted = 0;
		uet_gqueue_remove(&nic->crr, g);
	}
	if (pkt->value <= g->cr_requested) {
		/* asked again: the grant may have been lost */
		if (g->cr_granted)
			send_grant(ns, nic, g);
		return;
	}
	ev.valid = UET_BIT(PCM_SIG_CREDIT_REQUEST);
	ev.values[PCM_SIG_CREDIT_REQUEST] = pkt->value - g->cr_requested;
	g->cr_requested = pkt->value;
	uet_gqueue_push(&nic->crr, g);
	feed_credit(ns, nic, &ev);
	distribute(ns, nic);
}
