// SPDX-License-Identifier: MIT
/*
 * credit.c - receiver credit (EQDS), a pcm extension of the NIC model: the
 * sender's side. credit_grant.c is the receiver's.
 *
 * A package that drives PCM_CTRL_CUMULATIVE_CREDIT runs once per receiving
 * NIC and grants credit at its pace (credit_grant.c); credit counts bytes on
 * the wire. A sender may put CreditSpeculativeBytes on the wire before any
 * grant, and asks for the rest of what its messages need, and again for
 * every packet it loses: the scheduler spends credit on every byte it puts
 * on the wire, new or again, and stops a group that has none.
 *
 * Requests and grants are control packets, which links can lose, and the two
 * ends' groups live and die on their own; so both carry cumulative totals of
 * one sender group (named by its id): a request says how many bytes the group
 * has asked for in all, a grant how many it has been granted in all. A
 * sender stopped for want of credit asks again every InitialRetransmitTimeout
 * (or FixedRexmitTimeout), so a lost request or grant costs a timeout, never
 * the message. What credit starts (a transmit pass) is the caller's to run:
 * this side sits below the scheduler, which calls it.
 */
#include "nic.h"

/* Sender: one request carrying the group's cumulative total, naming an open PDC of it. */
static void send_request(struct uet_nics *ns, struct uet_group *g, uint32_t pdc_id)
{
	struct uet_pkt *pkt = uet_control_packet(ns, g->nic, g->peer, pdc_id, UET_PKT_CREDIT_REQ,
						 g->credit_requested, UET_CREDIT_WIRE_BYTES);

	if (!pkt)
		return;
	pkt->psn = g->id;
	pkt->sack_base = g->cc.pol.cc->index;
	uet_port_send(ns->fab, g->nic->port, pkt);
}

void uet_credit_need(struct uet_nics *ns, struct uet_group *g, uint32_t pdc_id, uint64_t wire)
{
	uint64_t spec = ns->cfg.credit_speculative_bytes;

	g->credit_need += wire;
	if (g->credit_need > spec && g->credit_need - spec > g->credit_requested) {
		g->credit_requested = g->credit_need - spec;
		send_request(ns, g, pdc_id);
	}
}

static uint64_t retry_ps(const struct uet_nics *ns)
{
	return uet_rto_ps(&ns->cfg, 0);
}

void uet_credit_blocked(struct uet_nics *ns, struct uet_group *g)
{
	if (!g->credit_retry_ev)
		g->credit_retry_ev = uet_nic_schedule(ns, uet_now(ns) + retry_ps(ns),
						      UET_EV_CREDIT_RETRY, g, 0);
}

bool uet_nic_credit_retry(struct uet_nics *ns, struct uet_group *g)
{
	g->credit_retry_ev = NULL;
	if (!g->turn || !g->backlog_pkts)
		return false;
	/* ask again, naming a PDC that is open; a pass tells whether credit came meanwhile */
	send_request(ns, g, g->turn->id);
	return true;
}

struct uet_group *uet_credit_grant_receive(struct uet_nics *ns, struct uet_nic *nic,
					   const struct uet_pkt *pkt)
{
	uint64_t granted = ns->cfg.credit_speculative_bytes + pkt->value;

	for (uint32_t i = 0; i < nic->n_groups; i++) {
		struct uet_group *g = nic->groups[i];

		if (g->id != pkt->pdc || g->peer != pkt->src)
			continue;
		if (granted > g->credit_granted)
			g->credit_granted = granted;
		return g;
	}
	return NULL;
}
