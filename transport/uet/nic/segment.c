// SPDX-License-Identifier: MIT
/*
 * segment.c - building packets ("Segmentation", "Packet marking").
 *
 * A message of N bytes is ceil(N / RdmaDataMSS) packets (one empty packet for
 * 0 B); a packet takes its PSN when its fetch is issued (and the sender a
 * record of it, in a ring kept for the latest PSNs: nic.h) and counts payload +
 * 88 B against the group's window and payload + 106 B against the egress
 * pool. The ACK-request flag follows AckRequestEveryNthPacket (counting every
 * data packet of the PDC, retransmissions included, from the first or the
 * Nth) and AckRequestLastPacket, and a retransmission after a timeout always
 * carries it (rto.c); with AckCoalesceBytes (a pcm extension) coalesce.c's
 * rule replaces these. First transmissions are trimmable with
 * TrimmingEnabled and no-trim otherwise; retransmissions carry the retransmit
 * flag, the trimmable-retransmission codepoint and a new entropy value.
 * Control packets (ACKs, NACKs, probes, credit) carry the control codepoint.
 * A package that reads PCM_SIG_TX_EVENT gets one event per burst of
 * TxEventBurst packets (tx_event_coalesce()).
 */
#include <stdlib.h>

#include "nic.h"

/* Double the ring of a PDC's records, keeping the latest PSNs'. Return: false on ENOMEM. */
static bool tx_ring_grow(struct uet_nics *ns, struct uet_pdc *pdc)
{
	uint32_t cap = pdc->tx_mask + 1, ncap = cap * 2;
	uint32_t first = pdc->next_psn > cap ? pdc->next_psn - cap : 0;
	struct uet_txpkt *tx = uet_mem_zalloc(ns->mem, ncap * sizeof(*tx));

	if (!tx) {
		ns->oom = true;
		return false;
	}
	for (uint32_t psn = first; psn < pdc->next_psn; psn++)
		tx[psn & (ncap - 1)] = *uet_tx(pdc, psn);
	uet_mem_free(ns->mem, pdc->tx, cap * sizeof(*tx));
	pdc->tx = tx;
	pdc->tx_mask = ncap - 1;
	return true;
}

/* Take PSN next_psn of @pdc for a new segment, its record cleared. Return: false on ENOMEM. */
static bool claim_psn(struct uet_nics *ns, struct uet_pdc *pdc)
{
	uint64_t span = (uint64_t)pdc->next_psn + 1 - pdc->una;

	/* the retransmission FIFO links through records: it is empty when new data goes */
	UET_CHECK(ns, pdc->retx_head == UET_NONE);
	/* keep a record of every PSN not acknowledged, and as many behind them */
	while ((uint64_t)pdc->tx_mask + 1 < 2 * span &&
	       pdc->tx_mask + 1 < uet_pow2_at_least(pdc->npkts))
		if (!tx_ring_grow(ns, pdc))
			return false;
	*uet_tx(pdc, pdc->next_psn) = (struct uet_txpkt){ 0 };
	pdc->next_psn++;
	return true;
}

struct uet_pkt *uet_segment_new(struct uet_nics *ns, struct uet_pdc *pdc)
{
	struct uet_pkt *pkt = uet_pkt_alloc_data(ns->pkts);

	if (pkt && !claim_psn(ns, pdc)) {
		uet_pkt_free(ns->pkts, pkt);
		return NULL;
	}
	return pkt;
}

/* Does the @count-th data packet of a PDC (0-based), PSN @psn, ask for an ACK? */
static bool ack_requested(const struct uet_nic_cfg *c, const struct uet_pdc *pdc, uint32_t count,
			  uint32_t psn)
{
	if (c->ack_last && psn + 1 == pdc->npkts)
		return true;
	return c->ack_first ? count % c->ack_every_nth == 0 : (count + 1) % c->ack_every_nth == 0;
}

/*
 * The packet's entropy (its UDP source port): the EV control of the package
 * that drives it, asked first with TX_READY if it reads that; without one,
 * oblivious spraying.
 */
static uint16_t next_entropy(struct uet_nics *ns, struct uet_group *g)
{
	unsigned which = uet_group_packages_where(g, uet_cc_drives_ev);

	if (which) {
		const struct uet_cc *cc = which & UET_FEED_POL ? g->cc.pol.cc : g->cc.lb.cc;

		if (cc->wants_tx_ready) {
			struct pcm_event ev;

			ev.valid = UET_BIT(PCM_SIG_TX_READY_PKTS);
			ev.values[PCM_SIG_TX_READY_PKTS] = 1;
			uet_group_feed_to(ns, g, which, &ev);
		}
		return (uint16_t)g->cc.ctl.ev;
	}
	return (uint16_t)(uet_rng_next(ns->rng) >> 48);
}

/*
 * TX events are coalesced, as a DOCA NIC's are ("one event stands for many
 * packets"): one per TxEventBurst data packets of the group, and one for the
 * rest when the group has nothing left to send, so every packet is reported
 * once. PCM_SIG_TX_EVENT carries the packets the event stands for.
 */
static void tx_event_coalesce(struct uet_nics *ns, struct uet_group *g, unsigned which)
{
	struct pcm_event ev;

	if (++g->tx_unreported < ns->cfg.tx_event_burst && uet_group_has_work(g))
		return;
	ev.valid = UET_BIT(PCM_SIG_TX_EVENT);
	ev.values[PCM_SIG_TX_EVENT] = g->tx_unreported;
	g->tx_unreported = 0;
	uet_group_feed_to(ns, g, which, &ev);
}

/* The group's pacing: the next packet may start one packet time at the rate later. */
static void pace(struct uet_nics *ns, struct uet_nic *nic, struct uet_group *g, uint32_t wire)
{
	uint64_t rate = g->cc.ctl.rate ? g->cc.ctl.rate : 1;
	uint64_t ser = uet_ser_ps(uet_port_ps_per_byte_q16(ns->fab, nic->port), wire);
	uint64_t start = g->next_send_ps > uet_now(ns) ? g->next_send_ps : uet_now(ns);

	g->next_send_ps = start + (uint64_t)((double)ser * PCM_RATE_ONE / (double)rate);
}

void uet_segment_commit(struct uet_nics *ns, struct uet_nic *nic, struct uet_group *g,
			struct uet_pdc *pdc, struct uet_pkt *pkt, uint32_t psn, bool retx, bool rto)
{
	const struct uet_nic_cfg *c = &ns->cfg;
	struct uet_txpkt *t = uet_tx(pdc, psn);
	uint32_t payload = uet_pdc_payload(ns, pdc, psn);
	/* a copy resent because no ACK came asks for one (rto.c) */
	bool ar = ack_requested(c, pdc, pdc->n_sent++, psn) || rto;
	uint64_t floor = c->rdma_data_mss + UET_NOMINAL_HDR_BYTES;
	/* checks: the window the scheduler checked (a handler fed below may change it) */
	uint64_t window = UET_CHECKING(ns) && g->cc.ctl.cwnd > floor ? g->cc.ctl.cwnd : floor;
	unsigned tx_event;

	pkt->kind = UET_PKT_DATA;
	pkt->src = nic->id;
	pkt->dst = pdc->peer;
	pkt->pdc = pdc->id;
	pkt->psn = psn;
	pkt->wire = (uint16_t)(payload + UET_WIRE_HDR_BYTES);
	pkt->flags = (uint8_t)((ar ? UET_PF_AR : 0) | (retx ? UET_PF_RETX : 0) |
			       (psn + 1 == pdc->npkts ? UET_PF_EOM : 0));
	pkt->dscp = c->trimming ? UET_DSCP_TRIMMABLE : UET_DSCP_NO_TRIM;
	if (retx && c->trimmable_retx)
		pkt->dscp = UET_DSCP_TRIMMABLE_RETX;
	pkt->retx_level = t->tx_count;
	pkt->entropy = next_entropy(ns, g);
	t->entropy = pkt->entropy;
	t->state = UET_TX_OUT;
	if (t->tx_count < UINT8_MAX)
		t->tx_count++;
	g->inflight += payload + UET_NOMINAL_HDR_BYTES;
	nic->egress.used += pkt->wire;
	/* coalescing receivers (a pcm extension): the ACK requests htsim's sender makes */
	if (c->ack_coalesce_bytes)
		pkt->flags = (uint8_t)((pkt->flags & ~UET_PF_AR) |
				       (uet_coalesce_ar(ns, g, pdc, psn, retx) ? UET_PF_AR : 0));
	/* the scheduler let it go: it fits the window (never below a packet) and the pool */
	if (UET_CHECKING(ns)) {
		UET_ASSERT(ns, g->inflight <= window);
		UET_ASSERT(ns, nic->egress.used <= c->egress_pool_bytes);
		UET_ASSERT(ns, psn < pdc->next_psn);
	}
	if (uet_group_rate_limited(g))
		pace(ns, nic, g, pkt->wire);
	tx_event = uet_group_packages_where(g, uet_cc_wants_tx_event);
	if (tx_event)
		tx_event_coalesce(ns, g, tx_event);
}

struct uet_pkt *uet_control_packet(struct uet_nics *ns, struct uet_nic *nic, uint32_t peer,
				   uint32_t pdc_id, enum uet_pkt_kind kind, uint64_t value,
				   uint16_t wire)
{
	struct uet_pkt *pkt = uet_pkt_alloc(ns->pkts);

	if (!pkt)
		return NULL;
	uet_pkt_clear(pkt);
	pkt->kind = (uint8_t)kind;
	pkt->src = nic->id;
	pkt->dst = peer;
	pkt->pdc = pdc_id;
	pkt->wire = wire;
	pkt->dscp = UET_DSCP_CONTROL;
	pkt->value = value;
	pkt->entropy = (uint16_t)(uet_rng_next(ns->rng) >> 48);
	return pkt;
}

void uet_send_control(struct uet_nics *ns, struct uet_nic *nic, uint32_t peer, uint32_t pdc_id,
		      enum uet_pkt_kind kind, uint64_t value, uint16_t wire)
{
	struct uet_pkt *pkt = uet_control_packet(ns, nic, peer, pdc_id, kind, value, wire);

	if (pkt)
		uet_port_send(ns->fab, nic->port, pkt);
}
