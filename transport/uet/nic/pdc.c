// SPDX-License-Identifier: MIT
/*
 * pdc.c - messages and their packet delivery contexts ("Messages and packet
 * delivery contexts", "Completion").
 *
 * The host posts a message by ringing the doorbell: its PDC's sending side is
 * created at once (the Chakra workload's PDC per message) in the group of
 * PDCs to its peer, and 15 ns later (DoorbellDelay) the PDC joins its group's
 * turns and the group the back of the ready queue, and the transmit process
 * starts; nothing sends the message sooner, even a pass that an ACK starts
 * meanwhile. The first packet of the message that the receiving NIC lets in
 * creates the PDC's receiving side. The message completes at the sender with
 * its last ACK: the PDC closes, both sides, and the sender's group goes on if
 * it has other PDCs.
 */
#include <errno.h>
#include <stdlib.h>

#include "nic.h"

/* The receiver's bitmap of @pdc: a bit per packet, and a word to spare. */
static size_t rx_bits_bytes(const struct uet_pdc *pdc)
{
	return ((size_t)(pdc->npkts + 63) / 64 + 1) * sizeof(uint64_t);
}

void uet_pdc_free(struct uet_nics *ns, struct uet_pdc *pdc)
{
	uet_rto_free(ns, pdc);
	uet_mem_free(ns->mem, pdc->rx.bits, rx_bits_bytes(pdc));
	uet_mem_free(ns->mem, pdc->tx, ((size_t)pdc->tx_mask + 1) * sizeof(*pdc->tx));
	uet_mem_free(ns->mem, pdc, sizeof(*pdc));
}

/* How many records a PDC of @npkts packets starts with (nic.h). */
static uint32_t tx_ring_first(const struct uet_nics *ns, uint64_t npkts)
{
	uint64_t window = ns->cfg.initial_cwnd_bytes / ns->cfg.rdma_data_mss + 2;
	uint64_t n = 4 * window;

	if (n < UET_TX_RING_MIN)
		n = UET_TX_RING_MIN;
	if (n > UET_TX_RING_FIRST_MAX)
		n = UET_TX_RING_FIRST_MAX;
	return uet_pow2_at_least(n < npkts ? n : npkts);
}

int uet_nic_post(struct uet_nics *ns, struct uet_msg_info *m)
{
	struct uet_nic *nic = &ns->nics[m->src];
	uint32_t mss = ns->cfg.rdma_data_mss;
	uint64_t npkts = m->bytes ? (m->bytes + mss - 1) / mss : 1;
	struct uet_pdc *pdc;
	struct uet_group *g;

	if (npkts > UINT32_MAX - 2)
		return -EINVAL;
	pdc = uet_mem_zalloc(ns->mem, sizeof(*pdc));
	if (!pdc)
		return -ENOMEM;
	pdc->tx_mask = tx_ring_first(ns, npkts) - 1;
	pdc->tx = uet_mem_zalloc(ns->mem, ((size_t)pdc->tx_mask + 1) * sizeof(*pdc->tx));
	if (!pdc->tx) {
		uet_mem_free(ns->mem, pdc, sizeof(*pdc));
		return -ENOMEM;
	}
	pdc->id = m->id;
	pdc->nic = m->src;
	pdc->peer = m->dst;
	pdc->ps_per_byte_q16 = uet_port_ps_per_byte_q16(ns->fab, nic->port);
	pdc->msg = m;
	pdc->npkts = (uint32_t)npkts;
	pdc->last_payload = (uint32_t)(m->bytes - (npkts - 1) * mss);
	pdc->retx_head = pdc->retx_tail = UET_NONE;
	g = uet_group_get(ns, nic, m->dst, (int)m->policy);
	if (!g) {
		uet_pdc_free(ns, pdc);
		return -ENOMEM;
	}
	pdc->grp = g;
	g->n_doorbell++;
	ns->pdcs[m->id] = pdc;
	nic->st[UET_ST_MSGS_POSTED]++;
	uet_nic_log(ns, nic->id, "pdc_created", pdc->id, pdc->peer, 0);
	uet_nic_log(ns, nic->id, "msg_posted", pdc->id, pdc->peer, m->bytes);
	if (uet_group_credit_gated(g))
		uet_credit_need(ns, g, m->id, m->bytes + npkts * UET_WIRE_HDR_BYTES);
	if (!uet_nic_schedule(ns, uet_now(ns) + ns->cfg.doorbell_ps, UET_EV_DOORBELL, pdc, 0))
		return -ENOMEM;
	return 0;
}

void uet_nic_doorbell(struct uet_nics *ns, struct uet_pdc *pdc)
{
	struct uet_group *g = pdc->grp;
	struct uet_nic *nic = g->nic;

	g->n_doorbell--;
	if (g->turn) {
		pdc->ring_next = g->turn;
		pdc->ring_prev = g->turn->ring_prev;
		pdc->ring_prev->ring_next = pdc;
		g->turn->ring_prev = pdc;
	} else {
		pdc->ring_next = pdc->ring_prev = pdc;
		g->turn = pdc;
	}
	g->n_tx++;
	g->backlog_bytes += pdc->msg->bytes;
	g->backlog_pkts += pdc->npkts;
	uet_group_start_tick(ns, g);
	uet_rq_push_tail(nic, g);
	uet_nic_tx_pass(ns, nic);
}

bool uet_pdc_rx_create(struct uet_nics *ns, struct uet_nic *nic, struct uet_pdc *pdc)
{
	pdc->rx.bits = uet_mem_zalloc(ns->mem, rx_bits_bytes(pdc));
	if (!pdc->rx.bits) {
		ns->oom = true;
		return false;
	}
	pdc->rx.grp = uet_group_get(ns, nic, pdc->nic, (int)pdc->msg->policy);
	if (!pdc->rx.grp) {
		uet_mem_free(ns->mem, pdc->rx.bits, rx_bits_bytes(pdc));
		pdc->rx.bits = NULL;
		return false;
	}
	pdc->rx.grp->n_rx++;
	pdc->rx_open = true;
	uet_nic_log(ns, nic->id, "pdc_created", pdc->id, pdc->nic, 0);
	return true;
}

/* Take @pdc out of its group's turns. */
static void ring_remove(struct uet_group *g, struct uet_pdc *pdc)
{
	if (g->turn == pdc)
		g->turn = pdc->ring_next != pdc ? pdc->ring_next : NULL;
	pdc->ring_prev->ring_next = pdc->ring_next;
	pdc->ring_next->ring_prev = pdc->ring_prev;
	g->n_tx--;
	if (!g->n_tx)
		g->turn = NULL;
}

bool uet_pdc_close(struct uet_nics *ns, struct uet_pdc *pdc)
{
	struct uet_group *g = pdc->grp;
	struct uet_nic *nic = g->nic;

	/* every PSN acknowledged, the receiver has the whole message */
	if (UET_CHECKING(ns)) {
		UET_ASSERT(ns, pdc->una == pdc->npkts && pdc->n_acked == pdc->npkts);
		UET_ASSERT(ns, pdc->rx_open && pdc->rx.expected == pdc->npkts);
		UET_ASSERT(ns, pdc->msg->done_ps == 0);
	}
	pdc->msg->done_ps = uet_now(ns);
	ns->n_done++;
	ns->last_done_ps = uet_now(ns);
	nic->st[UET_ST_MSGS_SENT]++;
	uet_nic_log(ns, nic->id, "msg_complete", pdc->id, pdc->peer, pdc->msg->bytes);
	uet_nic_log(ns, nic->id, "pdc_closed", pdc->id, pdc->peer, 0);
	ring_remove(g, pdc);
	if (pdc->rx_open) {
		struct uet_group *rg = pdc->rx.grp;

		uet_nic_log(ns, pdc->peer, "pdc_closed", pdc->id, pdc->nic, 0);
		rg->n_rx--;
		uet_group_release_if_dead(ns, rg);
	}
	for (struct uet_pkt *pf = pdc->pf_head, *next; pf; pf = next) {
		next = UET_PKT_NEXT(pf);
		uet_pkt_free(ns->pkts, pf);
	}
	ns->pdcs[pdc->id] = NULL;
	uet_pdc_free(ns, pdc);
	return uet_group_release_if_dead(ns, g);
}
