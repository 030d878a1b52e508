// SPDX-License-Identifier: MIT
/*
 * credit.c - receiver credit (EQDS), a pcm extension of the NIC model.
 *
 * A package that drives PCM_CTRL_CUMULATIVE_CREDIT runs once per receiving
 * NIC (flow location = destination): that instance sums every sender's
 * requests and grants cumulative credit at its pace; the NIC hands the credit
 * to the peers with demand round-robin, one full packet (RdmaDataMSS + 106 B)
 * at a time, each grant a CREDIT packet carrying that peer's cumulative
 * credit. Credit counts bytes on the wire, so credit paced at the link rate
 * fills the link and no more. A sender asks for its messages' wire bytes
 * beyond CreditSpeculativeBytes, and again for every packet it loses.
 */
#include "nic.h"

static void crr_push(struct uet_nic *nic, struct uet_group *g)
{
	g->crr_next = NULL;
	if (nic->crr_tail)
		nic->crr_tail->crr_next = g;
	else
		nic->crr_head = g;
	nic->crr_tail = g;
	g->in_crr = true;
}

static struct uet_group *crr_pop(struct uet_nic *nic)
{
	struct uet_group *g = nic->crr_head;

	nic->crr_head = g->crr_next;
	if (!nic->crr_head)
		nic->crr_tail = NULL;
	g->crr_next = NULL;
	g->in_crr = false;
	return g;
}

void uet_credit_forget(struct uet_nic *nic, struct uet_group *g)
{
	struct uet_group **pp = &nic->crr_head;

	if (!g->in_crr)
		return;
	nic->crr_tail = NULL;
	while (*pp) {
		if (*pp == g) {
			*pp = g->crr_next;
		} else {
			nic->crr_tail = *pp;
			pp = &(*pp)->crr_next;
		}
	}
	g->in_crr = false;
}

void uet_credit_request(struct uet_nics *ns, struct uet_group *g, uint32_t pdc_id,
			uint64_t bytes)
{
	g->credit_requested += bytes;
	uet_send_control(ns, g->nic, g->peer, pdc_id, UET_PKT_CREDIT_REQ, bytes,
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

	while ((g = nic->crr_head) && avail) {
		uint64_t q = g->rx_demand < quantum ? g->rx_demand : quantum;

		if (q > avail)
			break;
		avail -= q;
		nic->credit_distributed += q;
		g->rx_demand -= q;
		g->credit_sent += q;
		uet_send_control(ns, nic, g->peer, UET_NONE, UET_PKT_CREDIT, g->credit_sent,
				 UET_CREDIT_WIRE_BYTES);
		crr_pop(nic);
		if (g->rx_demand)
			crr_push(nic, g);
	}
	if (nic->crr_head && !nic->credit_tick_ev) {
		uint64_t dt = ns->cfg.credit_tick_ps;

		if (!dt)
			dt = uet_ser_ps(nic->port->ps_per_byte_q16, ns->cfg.rdma_data_mss);
		nic->credit_tick_ev = uet_nic_schedule(ns, uet_now(ns) + dt, UET_EV_CREDIT_TICK, nic,
						       0);
	}
}

void uet_nic_credit_tick(struct uet_nics *ns, struct uet_nic *nic)
{
	static const struct pcm_event none;

	nic->credit_tick_ev = NULL;
	if (!nic->crr_head)
		return;
	feed_credit(ns, nic, &none);
	distribute(ns, nic);
}

void uet_credit_request_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt)
{
	struct uet_pdc *pdc = ns->pdcs[pkt->pdc];
	struct uet_group *g;
	struct pcm_event ev;

	if (!pdc || !uet_pdc_rx_open(ns, nic, pdc))
		return;
	g = pdc->rx.grp;
	if (!uet_group_credit_gated(g))
		return;
	if (!nic->credit.cc && uet_cc_attach_receiver(g->cc.pol.cc, &nic->credit, uet_now(ns)) < 0) {
		ns->oom = true;
		return;
	}
	g->rx_demand += pkt->value;
	if (!g->in_crr)
		crr_push(nic, g);
	ev.valid = UET_BIT(PCM_SIG_CREDIT_REQUEST);
	ev.values[PCM_SIG_CREDIT_REQUEST] = pkt->value;
	feed_credit(ns, nic, &ev);
	distribute(ns, nic);
}

void uet_credit_grant_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt)
{
	struct uet_group *g = uet_group_find(nic, pkt->src);
	uint64_t granted = ns->cfg.credit_speculative_bytes + pkt->value;

	if (!g)
		return;
	if (granted > g->credit_granted)
		g->credit_granted = granted;
	uet_nic_kick(ns, g);
}
