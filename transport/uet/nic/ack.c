// SPDX-License-Identifier: MIT
/*
 * ack.c - acknowledgements ("Acknowledgements", "Selective
 * acknowledgements", and the base-RTT probe).
 *
 * Receiver: a data packet with the ACK-request flag becomes its ACK (copied
 * into a whole packet, pkt.h), held for the receiver's PCIe service time
 * (the receive pool's bytes plus this packet at LaneBps x LaneCount) and
 * reporting that time in 128 ns steps;
 * ACKs leave in the order they were made. An ACK carries the cumulative ACK
 * (every PSN below it arrived) and a 64-PSN bitmap of what arrived beyond
 * it; with more out-of-order packets than one bitmap covers, successive ACKs
 * report successive blocks.
 *
 * Sender: the cumulative ACK and the bitmap retire the PSNs they name (their
 * bytes leave the flight); the policy gets ACK, DATA_TX, RTT (minus the
 * reported service time, and only from a packet sent once: Karn's rule),
 * ACK_EV, QUEUE_DELAY, and ECN and ECN_EV when the ACK echoes CE marks (CNPs
 * come from the receiver's notification point, cnp.c). A gap in the bitmap is never read as a loss.
 * After the first data ACK of each message the sender sends one base-RTT
 * probe, answered at once without the hold; its round trip lowers the
 * group's base RTT. The last ACK of a message is its completion.
 */
#include "nic.h"

/* 64 bits of the received bitmap starting at @base. */
static uint64_t rx_window(const struct uet_rxpdc *rx, uint32_t base, uint32_t npkts)
{
	uint32_t w = base >> 6, sh = base & 63, words = (npkts + 63) / 64;
	uint64_t lo = w < words ? rx->bits[w] : 0, hi = w + 1 < words ? rx->bits[w + 1] : 0;

	return sh ? (lo >> sh) | (hi << (64 - sh)) : lo;
}

void uet_ack_send(struct uet_nics *ns, struct uet_nic *nic, struct uet_pdc *pdc,
		  struct uet_pkt *pkt, uint64_t hold_ps)
{
	struct uet_rxpdc *rx = &pdc->rx;
	uint32_t span = rx->max_psn > rx->expected ? rx->max_psn - rx->expected : 0;
	uint32_t blocks = (span + UET_SACK_BITS - 1) / UET_SACK_BITS;
	uint32_t base = rx->expected;
	uint64_t units = hold_ps / UET_SERVICE_STEP_PS, ack_t;

	pkt = uet_pkt_lengthen(ns->pkts, pkt);
	if (!pkt)
		return;
	if (blocks > 1)
		base += (rx->sack_cursor++ % blocks) * UET_SACK_BITS;
	if (UET_CHECKING(ns)) {
		UET_ASSERT(ns, rx->expected <= rx->max_psn && rx->max_psn <= pdc->npkts);
		UET_ASSERT(ns, !rx->expected || uet_rx_has(rx, rx->expected - 1));
		UET_ASSERT(ns, rx->expected == pdc->npkts || !uet_rx_has(rx, rx->expected));
	}
	pkt->kind = UET_PKT_ACK;
	pkt->cack = rx->expected;
	pkt->sack_base = base;
	pkt->sack_bits = span ? rx_window(rx, base, pdc->npkts) : 0;
	pkt->service_units = (uint16_t)(units > 0xffff ? 0xffff : units);
	pkt->ce = (uint8_t)(rx->ce_pending > 255 ? 255 : rx->ce_pending);
	rx->ce_pending = 0;
	pkt->src = nic->id;
	pkt->dst = pdc->nic;
	pkt->wire = UET_ACK_WIRE_BYTES;
	pkt->dscp = UET_DSCP_CONTROL;
	pkt->flags &= UET_PF_RETX;
	ack_t = uet_now(ns) + hold_ps;
	if (ack_t < nic->last_ack_ps)
		ack_t = nic->last_ack_ps;
	nic->last_ack_ps = ack_t;
	uet_des_arm(ns->des, pkt, ack_t, UET_EV_ACK_RELEASE);
}

void uet_nic_ack_release(struct uet_nics *ns, struct uet_pkt *pkt)
{
	uet_port_send(ns->fab, ns->nics[pkt->src].port, pkt);
}

/* Retire one PSN on an ACK or a SACK bit. Return: payload bytes newly acknowledged. */
static uint32_t retire(struct uet_nics *ns, struct uet_pdc *pdc, uint32_t psn)
{
	struct uet_group *g = pdc->grp;
	struct uet_txpkt *t;
	uint32_t payload;

	if (!uet_tx_kept(pdc, psn))
		return 0; /* acknowledged long ago */
	t = uet_tx(pdc, psn);
	if (t->state != UET_TX_OUT && !uet_tx_queued(t->state))
		return 0;
	payload = uet_pdc_payload(ns, pdc, psn);
	if (t->state == UET_TX_OUT) {
		g->inflight -= payload + UET_NOMINAL_HDR_BYTES;
		t->timer_on = false;
	} else {
		g->backlog_bytes -= payload;
		g->backlog_pkts--;
	}
	t->state = UET_TX_ACKED;
	pdc->n_acked++;
	return payload;
}

/* An ACK names only PSNs the sender has committed to the wire, below the message's end. */
static void check_ack(struct uet_nics *ns, const struct uet_pdc *pdc, const struct uet_pkt *pkt,
		      uint32_t end)
{
	UET_ASSERT(ns, pkt->cack <= pdc->npkts && pkt->sack_base >= pkt->cack);
	for (uint32_t psn = pdc->una; psn < end; psn++)
		UET_ASSERT(ns, uet_tx_state(pdc, psn) != UET_TX_UNSENT &&
				       uet_tx_state(pdc, psn) != UET_TX_PREFETCHED);
	for (uint64_t bits = pkt->sack_bits; bits; bits &= bits - 1) {
		uint32_t psn = pkt->sack_base + (uint32_t)__builtin_ctzll(bits);

		UET_ASSERT(ns, psn < pdc->npkts);
		if (psn < pdc->npkts)
			UET_ASSERT(ns, uet_tx_state(pdc, psn) != UET_TX_UNSENT &&
					       uet_tx_state(pdc, psn) != UET_TX_PREFETCHED);
	}
}

/* The policy's view of one ACK. */
static void feed_ack(struct uet_nics *ns, struct uet_nic *nic, struct uet_pdc *pdc,
		     const struct uet_pkt *pkt, uint64_t bytes)
{
	struct uet_group *g = pdc->grp;
	uint64_t svc = (uint64_t)pkt->service_units * UET_SERVICE_STEP_PS, now = uet_now(ns);
	const struct uet_txpkt *t;
	struct pcm_event ev;

	ev.valid = UET_BIT(PCM_SIG_ACK) | UET_BIT(PCM_SIG_DATA_TX) | UET_BIT(PCM_SIG_ACK_EV) |
		   UET_BIT(PCM_SIG_QUEUE_DELAY);
	ev.values[PCM_SIG_ACK] = 1;
	ev.values[PCM_SIG_DATA_TX] = bytes;
	ev.values[PCM_SIG_ACK_EV] = pkt->entropy;
	ev.values[PCM_SIG_QUEUE_DELAY] = svc;
	/* Karn: an ACK of a packet sent more than once cannot say which copy it acknowledges */
	t = uet_tx_kept(pdc, pkt->psn) ? uet_tx(pdc, pkt->psn) : NULL;
	if (t && t->tx_ps && t->tx_count == 1) {
		uint64_t raw = now - t->tx_ps;

		ev.valid |= UET_BIT(PCM_SIG_RTT);
		ev.values[PCM_SIG_RTT] = raw > svc ? raw - svc : 0;
		g->last_rtt_ps = ev.values[PCM_SIG_RTT];
	}
	if (pkt->ce) {
		ev.valid |= UET_BIT(PCM_SIG_ECN) | UET_BIT(PCM_SIG_ECN_EV);
		ev.values[PCM_SIG_ECN] = pkt->ce;
		ev.values[PCM_SIG_ECN_EV] = pkt->entropy;
		nic->st[UET_ST_RX_ECN] += pkt->ce;
	}
	uet_group_feed(ns, g, &ev);
}

void uet_ack_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt)
{
	struct uet_pdc *pdc = ns->pdcs[pkt->pdc];
	uint64_t bytes = 0, bits = pkt->sack_bits;
	struct uet_group *g;
	uint32_t end;

	nic->st[UET_ST_RX_ACKS]++;
	if (!pdc)
		return; /* a late ACK of a message already complete */
	g = pdc->grp;
	end = pkt->cack < pdc->npkts ? pkt->cack : pdc->npkts;
	if (UET_CHECKING(ns))
		check_ack(ns, pdc, pkt, end);
	for (uint32_t psn = pdc->una; psn < end; psn++)
		bytes += retire(ns, pdc, psn);
	while (bits) {
		uint32_t psn = pkt->sack_base + (uint32_t)__builtin_ctzll(bits);

		if (psn < pdc->npkts)
			bytes += retire(ns, pdc, psn);
		bits &= bits - 1;
	}
	while (pdc->una < pdc->npkts && uet_tx_state(pdc, pdc->una) == UET_TX_ACKED)
		pdc->una++;
	UET_CHECK(ns, pdc->una >= end && pdc->n_acked <= pdc->npkts);
	feed_ack(ns, nic, pdc, pkt, bytes);
	if (!pdc->probe_sent) {
		pdc->probe_sent = true;
		uet_send_control(ns, nic, pdc->peer, pdc->id, UET_PKT_PROBE, uet_now(ns),
				 UET_PROBE_WIRE_BYTES);
	}
	/* the ACK frees window room: the group's other PDCs may send again */
	if (pdc->n_acked == pdc->npkts && !uet_pdc_close(ns, pdc)) {
		uet_nic_tx_pass(ns, nic);
		return;
	}
	uet_nic_kick(ns, g);
}

void uet_probe_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt)
{
	/* answered at once, without the hold */
	pkt->kind = UET_PKT_PROBE_ACK;
	pkt->dst = pkt->src;
	pkt->src = nic->id;
	uet_port_send(ns->fab, nic->port, pkt);
}

void uet_probe_ack_receive(struct uet_nics *ns, struct uet_pkt *pkt)
{
	struct uet_pdc *pdc = ns->pdcs[pkt->pdc];
	uint64_t rtt = uet_now(ns) - pkt->value;

	if (pdc && rtt < pdc->grp->base_rtt_ps)
		pdc->grp->base_rtt_ps = rtt;
}
