// SPDX-License-Identifier: MIT
/*
 * rto.c - per-packet retransmission timers ("Retransmission timer").
 *
 * A packet's timer starts when its serialization ends and runs
 * InitialRetransmitTimeout * 2^min(retransmissions,
 * MaxExponentialRTOBackoffCount), or FixedRexmitTimeout with
 * FixedRexmitTimeEnable; there is no retry limit. When it expires while the
 * packet is outstanding, the packet leaves the flight and is queued for
 * retransmission ahead of new data, the group's packages get an RTO event
 * for it (RTO 1, and its entropy in NACK_EV: the path feedback REPS reads;
 * the page reports each timed-out packet's entropy, so timers expiring
 * together are one event each) and the transmit process restarts. A timer
 * that expires after its packet was acknowledged, NACKed or sent again does
 * nothing.
 *
 * Deviation, documented: a retransmission after a timeout always asks for an
 * ACK (it still counts toward AckRequestEveryNthPacket). With N > 1 a loss
 * pattern of period N (a queue dropping every other packet) could otherwise
 * meet exactly the ACK-requesting copies forever: everything arrives and no
 * ACK ever comes back.
 *
 * Timers of one backoff level have one duration and start in serialization
 * order, so each PDC keeps one FIFO of deadlines per level and one DES event
 * at the earliest live head. With more than one level, level 0 holds first
 * transmissions only, which leave in PSN order: its FIFO is the sender
 * records themselves, walked in PSN order from a cursor (a first
 * transmission's timer runs while its record is in flight, sent once, with
 * its timer on), so a packet does not write a FIFO entry on a line of its
 * own beside its record. A record keeps no deadline: its copy's
 * serialization start gives it (uet_tx_deadline()), and a FIFO entry is
 * live while its deadline is the one its PSN's record gives at its level.
 */
#include <stdlib.h>

#include "nic.h"

static uint32_t rto_levels(const struct uet_nic_cfg *c)
{
	return c->fixed_rexmit_enable ? 1 : c->max_rto_backoff + 1;
}

/* Is level 0 read from the records (first transmissions only) rather than a FIFO? */
static bool first_in_records(const struct uet_nic_cfg *c)
{
	return rto_levels(c) > 1;
}

/*
 * The record of the earliest first transmission whose timer runs, the
 * cursor moved up to it past records whose timer ended (acknowledged,
 * NACKed, timed out, sent again); NULL if none runs, or the next one has
 * not started serialization (nor has any later one: they leave in order).
 * Below una everything is acknowledged (and a grown ring holds no record
 * of it).
 */
static struct uet_txpkt *first_head(struct uet_pdc *pdc)
{
	if (pdc->rto_psn < pdc->una)
		pdc->rto_psn = pdc->una;
	for (; pdc->rto_psn < pdc->next_psn; pdc->rto_psn++) {
		struct uet_txpkt *t = uet_tx(pdc, pdc->rto_psn);

		if (t->tx_count == 0 || (t->tx_count == 1 && t->state == UET_TX_OUT))
			return t->timer_on ? t : NULL;
	}
	return NULL;
}

void uet_rto_free(struct uet_nics *ns, struct uet_pdc *pdc)
{
	if (pdc->rto_ev)
		uet_des_cancel(ns->des, pdc->rto_ev);
	pdc->rto_ev = NULL;
	if (!pdc->rtoq)
		return;
	for (uint32_t l = 0; l < rto_levels(&ns->cfg); l++)
		uet_ring_free(&pdc->rtoq[l], ns->mem);
	uet_mem_free(ns->mem, pdc->rtoq, rto_levels(&ns->cfg) * sizeof(*pdc->rtoq));
	pdc->rtoq = NULL;
}

/* Does the timer of @psn's latest transmission run, at backoff @level, to @deadline? */
static bool timer_live(const struct uet_nics *ns, const struct uet_pdc *pdc, uint32_t psn,
		       uint32_t level, uint64_t deadline)
{
	return uet_tx_state(pdc, psn) == UET_TX_OUT && uet_tx(pdc, psn)->timer_on &&
	       uet_tx_deadline(ns, pdc, psn, level) == deadline;
}

/* Schedule the PDC's timer event at its earliest live deadline, dropping stale heads. */
static void rto_rearm(struct uet_nics *ns, struct uet_pdc *pdc)
{
	uint64_t next = UINT64_MAX;
	uint32_t l = 0;

	if (first_in_records(&ns->cfg)) {
		const struct uet_txpkt *t = first_head(pdc);

		if (t)
			next = uet_tx_deadline(ns, pdc, pdc->rto_psn, 0);
		l = 1;
	}
	for (; pdc->rtoq && l < rto_levels(&ns->cfg); l++) {
		struct uet_ring *q = &pdc->rtoq[l];

		while (q->len) {
			if (timer_live(ns, pdc, q->e[q->head].v, l, q->e[q->head].t))
				break;
			uet_ring_pop(q);
		}
		if (q->len && q->e[q->head].t < next)
			next = q->e[q->head].t;
	}
	if (pdc->rto_ev && pdc->rto_at == next)
		return;
	if (pdc->rto_ev) {
		uet_des_cancel(ns->des, pdc->rto_ev);
		pdc->rto_ev = NULL;
	}
	if (next != UINT64_MAX) {
		pdc->rto_ev = uet_nic_schedule(ns, next, UET_EV_RTO, pdc, 0);
		pdc->rto_at = next;
	}
}

void uet_rto_arm(struct uet_nics *ns, struct uet_pdc *pdc, uint32_t psn, uint32_t level,
		 uint64_t deadline)
{
	uint32_t levels = rto_levels(&ns->cfg);
	uint32_t l = ns->cfg.fixed_rexmit_enable ? 0 : (level < levels - 1 ? level : levels - 1);
	if (l > 0 || !first_in_records(&ns->cfg)) {
		if (!pdc->rtoq) {
			pdc->rtoq = uet_mem_zalloc(ns->mem, levels * sizeof(*pdc->rtoq));
			/* a level-0 FIFO holds a deadline per packet in flight: as many as the records */
			if (!pdc->rtoq || (l == 0 && uet_ring_resize(&pdc->rtoq[0], ns->mem,
								     pdc->tx_mask + 1) < 0)) {
				ns->oom = true;
				return;
			}
		}
		if (uet_ring_push(&pdc->rtoq[l], ns->mem, deadline, psn) < 0) {
			ns->oom = true;
			return;
		}
	}
	uet_tx(pdc, psn)->timer_on = true;
	/* the record gives the deadline back (uet_tx_deadline()) */
	UET_CHECK(ns, uet_tx_deadline(ns, pdc, psn, l) == deadline);
	if (!pdc->rto_ev || deadline < pdc->rto_at) {
		if (pdc->rto_ev)
			uet_des_cancel(ns->des, pdc->rto_ev);
		pdc->rto_ev = uet_nic_schedule(ns, deadline, UET_EV_RTO, pdc, 0);
		pdc->rto_at = deadline;
	}
}

/* A timeout of a packet whose latest copy carried @entropy, as the policy sees it. */
static void feed_timeout(struct uet_nics *ns, struct uet_group *g, uint16_t entropy)
{
	struct pcm_event ev;

	/* the timed-out packet's entropy, as for a NACK: path feedback */
	ev.valid = UET_BIT(PCM_SIG_RTO) | UET_BIT(PCM_SIG_NACK_EV);
	ev.values[PCM_SIG_RTO] = 1;
	ev.values[PCM_SIG_NACK_EV] = entropy;
	uet_group_feed(ns, g, &ev);
}

/* @psn's timer expired while it was out: out of flight, queued ahead of new data. */
static void time_out(struct uet_nics *ns, struct uet_pdc *pdc, uint32_t psn)
{
	uint16_t entropy = uet_tx(pdc, psn)->entropy;

	pdc->grp->nic->st[UET_ST_TIMEOUTS]++;
	uet_requeue(ns, pdc, psn, true);
	feed_timeout(ns, pdc->grp, entropy);
}

void uet_nic_rto(struct uet_nics *ns, struct uet_pdc *pdc)
{
	struct uet_group *g = pdc->grp;
	uint64_t now = uet_now(ns);
	uint32_t fired = 0;

	pdc->rto_ev = NULL;
	if (first_in_records(&ns->cfg)) {
		while (first_head(pdc) && uet_tx_deadline(ns, pdc, pdc->rto_psn, 0) <= now) {
			time_out(ns, pdc, pdc->rto_psn++);
			fired++;
		}
	}
	for (uint32_t l = first_in_records(&ns->cfg) ? 1 : 0;
	     pdc->rtoq && l < rto_levels(&ns->cfg); l++) {
		struct uet_ring *q = &pdc->rtoq[l];

		while (q->len && q->e[q->head].t <= now) {
			uint64_t deadline = q->e[q->head].t;
			uint32_t psn = q->e[q->head].v;

			uet_ring_pop(q);
			if (!timer_live(ns, pdc, psn, l, deadline))
				continue; /* acknowledged, NACKed or sent again since */
			time_out(ns, pdc, psn);
			fired++;
		}
	}
	rto_rearm(ns, pdc);
	if (fired)
		uet_nic_kick(ns, g);
}
