// SPDX-License-Identifier: MIT
/*
 * recovery.c - loss recovery in UC mode: RACK-TLP (RFC 8985) and the
 * retransmission timeout (RFC 6298, with Linux's choices where the RFC
 * leaves one), per connection, over chunks.
 *
 * RACK, per path. Delivery of a chunk makes its transmission the newest
 * delivered one on its path (and on the connection) when it was sent after
 * the previous newest (transmission order is a per-connection counter, so
 * equal timestamps are still ordered); its RACK.rtt is now - its send time.
 * A retransmitted chunk delivered sooner than min_RTT after its
 * retransmission was delivered by its original, and moves nothing (RFC
 * 8985 6.2 step 2). A chunk in flight that was sent before the newest
 * delivery on its own path is lost once
 *     now >= its send time + that path's RACK.rtt + reo_wnd,
 * and the reordering timer is armed at the earliest such deadline that is
 * still ahead. Judging a chunk only by deliveries on its path is what makes
 * spraying over paths of different delay not look like reordering: a chunk
 * on a slow path is never overtaken by one on a fast path. A chunk whose
 * latest transmission is a retransmission still out is never marked lost
 * again by RACK: the RTO (which runs from the earliest outstanding
 * transmission) resends it, so a refused or lost retransmission is charged
 * to congestion control and to its path once, not once per round.
 * reo_wnd = min_RTT/4 x mult, capped at SRTT; mult grows by one (at most
 * once per SRTT, up to 16) when the receiver reports a duplicate chunk (the
 * DSACK signal of a spurious retransmission), and falls back to 1 after 16
 * recovery episodes without one (6.2 step 4). An episode begins when a
 * chunk is marked lost (by RACK or the RTO) and ends once nothing that was
 * outstanding when it began is left unacknowledged or unretransmitted.
 *
 * TLP. With chunks in flight, no probe out (one is out until it, or
 * something sent after it, is delivered), no recovery episode, no RTO
 * backoff and no RTO already due: PTO = 2 x SRTT (or 2 x the slowest path's
 * RTT when that is longer: sprayed chunks come back at its pace; the
 * initial RTO before any sample), plus the receiver's recent maximum hold
 * when a single chunk is in flight; when the RTO would fire before that,
 * the probe goes at the RTO's time instead (7.2: clamped, not
 * suppressed). (Re)started by each new chunk sent that
 * is not a probe and by each ACK of new data, so a paced flight is probed a
 * PTO after its newest chunk (for a burst of new chunks, once after the
 * burst: the deadline depends only on the state the last one left, and
 * nothing in between reads it). A probe sends one new chunk of the minimum
 * size (send.c) if there is one, else the newest chunk again, and the RTO
 * restarts from it (7.3). When the probe resent a chunk and the ACK of that
 * chunk echoes the probe with no duplicate seen, the original was lost and
 * only the probe repaired it: congestion control hears of that loss (7.4).
 *
 * RTO. Armed while chunks are in flight, from the earliest outstanding
 * transmission (the first chunk in flight of each message, as Linux times
 * it from the head of its retransmission queue): ACKs of other messages do
 * not push it back. RTO = SRTT + max(G, 4 RTTVAR, rto_min), capped at
 * rto_max, doubled per expiry (rtt.c). On expiry the earliest outstanding
 * chunk is marked lost and resent, over the budget if need be (RFC 6298
 * 5.4), the timer restarts with the backoff doubled (5.5, 5.6), congestion
 * control gets an RTO signal, and an ACK request goes for each message with
 * unacknowledged chunks, so a lost final ACK is recovered even when the
 * retransmissions cannot reach the receiver (its rkey is gone). The other
 * chunks in flight are left to RACK, which judges them against the
 * retransmission's delivery, and to the next expiry. The backoff is cleared
 * only by a valid RTT sample (Karn's rule, 5.7), not by any ACK of new
 * data. What bounds the retries is the connection's no-progress limit
 * (conn.c): with chunks in flight and no ACK of new data for that long, the
 * connection fails with -ETIMEDOUT.
 *
 * Spurious retransmissions. An ACK's echo names the transmission that
 * arrived by its parity; one older than the chunk's latest transmission
 * proves the latest needless (Eifel detection, RFC 3522, with the parity
 * bit as the timestamp). It counts (stats.spurious_retx, and the
 * connection's), widens reo_wnd as the receiver's duplicate report does,
 * and the chunk's delivery does not move RACK (the retransmission's send
 * time would make RACK.rtt too short). When the chunk was sent exactly
 * twice, the echo names the original unambiguously and gives an RTT sample
 * from the original's send time: a late ACK that caused a spurious timeout
 * teaches SRTT and RTTVAR instead of being lost to Karn's rule. The
 * detection needs no duplicate at the receiver: on datapaths that
 * invalidate a receive's rkey at completion a late retransmission never
 * reaches the core, so no duplicate is reported.
 *
 * Karn. The echo in an ACK names a transmission by chunk and parity; an RTT
 * sample (now - send time - receiver hold) is taken only when it names one
 * transmission unambiguously: the latest of at most two, or the one before
 * the latest of two or three (only it has the other parity). The parity
 * flips on every transmission, however many (a flag, not a function of the
 * saturating transmission count).
 *
 * Control records a side retransmits on a timer (CTS, ABORT, FIN, RESET)
 * use the connection's RTO when it has samples; a side that only receives
 * has none, and uses the shortest time from a CTS to its message's first
 * chunk instead (an upper bound of the RTT), not the initial RTO.
 *
 * RC mode: the NIC retransmits, so nothing here marks a chunk lost; the RTO
 * still fires (with backoff) to send ACK_REQs for records lost on the
 * control channel.
 *
 * Functions are xp_rack_* (RACK, TLP, and the entry points) and xp_rto_*
 * (the RTO and its samples). What gives the connection something to send
 * is returned as enum xp_news bits; path.c is the only file called.
 */
#include "xp_conn.h"
#include "xp_core_state.h"
#include "xp_path.h"
#include "xp_recovery.h"
#include "xp_send.h"

void xp_rack_init(struct xp_conn *c)
{
	xp_rtt_init(&c->rtt);
	c->rack = (struct xp_rack){ .reo_mult = 1 };
}

uint64_t xp_rto_ns(const struct xp_core *core, const struct xp_conn *c)
{
	return xp_rtt_rto(&c->rtt, &core->rto, c->rack.rto_backoff);
}

uint64_t xp_rto_ctl_ns(const struct xp_core *core, const struct xp_conn *c, unsigned backoff)
{
	struct xp_rtt est;

	if (c->rtt.samples || !c->rack.adv_rtt_ns)
		return xp_rtt_rto(&c->rtt, &core->rto, backoff);
	xp_rtt_init(&est);
	xp_rtt_sample(&est, c->rack.adv_rtt_ns);
	return xp_rtt_rto(&est, &core->rto, backoff);
}

void xp_rto_adv_sample(struct xp_conn *c, uint64_t sample_ns)
{
	if (sample_ns && (!c->rack.adv_rtt_ns || sample_ns < c->rack.adv_rtt_ns))
		c->rack.adv_rtt_ns = sample_ns;
}

uint64_t xp_rack_reo_wnd_ns(const struct xp_conn *c)
{
	uint64_t base = c->rtt.samples ? c->rtt.min_ns : c->rack.rtt_ns;
	uint64_t w = base / 4 * c->rack.reo_mult;

	if (c->rtt.samples && w > c->rtt.srtt_ns)
		w = c->rtt.srtt_ns;
	return w;
}

void xp_rack_on_delivered(struct xp_conn *c, const struct xp_chunk *ch, uint64_t now_ns)
{
	uint64_t since = now_ns - ch->sent_ns;
	struct xp_path *p = &c->paths[ch->path];

	if (ch->flags & XP_CH_SPURIOUS)
		return; /* delivered by an earlier transmission, sent before the latest */
	if (ch->tx_count > 1 && c->rtt.samples && since < c->rtt.min_ns)
		return;
	if (ch->tx_seq > p->rack_tx_seq) {
		p->rack_tx_seq = ch->tx_seq;
		p->rack_rtt_ns = since;
		c->rack.dirty = true;
	}
	if (ch->tx_seq > c->rack.tx_seq) {
		c->rack.tx_seq = ch->tx_seq;
		c->rack.rtt_ns = since;
		c->rack.dirty = true;
	}
}

bool xp_rto_sample(struct xp_core *core, struct xp_conn *c, struct xp_chunk *ch, bool parity,
		   uint64_t hold_ns, uint64_t now_ns, uint64_t *rtt_ns)
{
	bool latest = parity == xp_chunk_parity(ch);
	uint64_t sent;

	if (ch->flags & XP_CH_SAMPLED)
		return false;
	if (!ch->tx_count || (latest ? ch->tx_count > 2 : ch->tx_count < 2 || ch->tx_count > 3)) {
		core->stats.karn_skipped++;
		return false;
	}
	sent = latest ? ch->sent_ns : ch->prev_sent_ns;
	if (now_ns - sent <= hold_ns)
		return false;
	*rtt_ns = now_ns - sent - hold_ns;
	ch->flags |= XP_CH_SAMPLED;
	xp_rtt_sample(&c->rtt, *rtt_ns);
	if (latest)
		xp_path_on_rtt(c, ch->path, *rtt_ns);
	c->rack.rto_backoff = 0;
	core->stats.rtt_samples++;
	return true;
}

void xp_rack_on_dsack(struct xp_conn *c, uint64_t now_ns)
{
	if (c->rack.last_dsack_ns && now_ns - c->rack.last_dsack_ns < c->rtt.srtt_ns)
		return;
	if (c->rack.reo_mult < XP_MAX_REO_MULT)
		c->rack.reo_mult++;
	c->rack.reo_persist = XP_REO_PERSIST;
	c->rack.last_dsack_ns = now_ns ? now_ns : 1;
}

void xp_rack_check_spurious(struct xp_core *core, struct xp_conn *c, struct xp_chunk *ch,
			    bool parity, bool dup_seen, uint64_t now_ns)
{
	if (ch->tx_count < 2 || (ch->flags & XP_CH_SPURIOUS) ||
	    (parity == xp_chunk_parity(ch) && !dup_seen))
		return;
	ch->flags |= XP_CH_SPURIOUS;
	core->stats.spurious_retx++;
	c->spurious_retx++;
	xp_rack_on_dsack(c, now_ns);
}

/* A recovery episode begins: everything sent so far is what it must see through; no probe. */
static void episode_begin(struct xp_conn *c)
{
	if (!c->rack.recovery_tx)
		c->rack.recovery_tx = c->tx_seq ? c->tx_seq : 1;
	c->rack.tlp_deadline_ns = 0;
}

/* It ended: a grown reo_wnd lasts XP_REO_PERSIST of them. */
static void episode_end(struct xp_conn *c)
{
	c->rack.recovery_tx = 0;
	if (c->rack.reo_persist && !--c->rack.reo_persist)
		c->rack.reo_mult = 1;
}

static void mark_lost(struct xp_core *core, struct xp_conn *c, struct xp_smsg *m,
		      struct xp_chunk *ch)
{
	xp_inflight_sub(core, c, ch);
	ch->flags |= XP_CH_LOST;
	m->n_lost++;
	c->lost_chunks++;
	xp_path_on_loss(c, ch->path, xp_rto_ns(core, c));
}

static void feed_cc_loss(struct xp_core *core, struct xp_conn *c, uint32_t chunks,
			 uint64_t bytes, uint32_t path, uint64_t now_ns)
{
	struct xp_cc_loss ev;

	ev.lost_chunks = chunks;
	ev.lost_bytes = bytes;
	ev.ev = c->paths[path].ev;
	ev.in_flight_bytes = c->in_flight_bytes;
	ev.backlog_bytes = c->backlog_bytes;
	c->cc.ops->on_loss(c->cc.ctx, c->cc_flow, &ev, now_ns);
}

/* What one pass of detection found. */
struct detect {
	uint64_t earliest;  /* the next reordering deadline */
	uint64_t bytes;
	uint32_t lost;
	uint32_t path;      /* of the last chunk marked lost */
	bool old_left;      /* a chunk outstanding since before the episode began */
};

static void detect_chunk(struct xp_core *core, struct xp_conn *c, struct xp_smsg *m,
			 struct xp_chunk *ch, uint64_t reo, uint64_t now_ns, struct detect *d)
{
	const struct xp_path *p = &c->paths[ch->path];
	uint64_t deadline;

	if (ch->flags & XP_CH_ACKED)
		return;
	if (c->rack.recovery_tx && ch->tx_seq <= c->rack.recovery_tx)
		d->old_left = true;
	/* In flight, a first transmission (a retransmission out is the RTO's), overtaken on its path */
	if (!(ch->flags & XP_CH_INFLIGHT) || ch->tx_count > 1 || ch->tx_seq >= p->rack_tx_seq)
		return;
	deadline = ch->sent_ns + p->rack_rtt_ns + reo;
	if (now_ns >= deadline) {
		mark_lost(core, c, m, ch);
		d->lost++;
		d->bytes += ch->len;
		d->path = ch->path;
	} else if (deadline < d->earliest) {
		d->earliest = deadline;
	}
}

/*
 * @ch was sent once, at or after the newest delivery on any path (c->rack.tx_seq is the
 * newest of the paths' own). A message's first transmissions go in chunk order, so every
 * later chunk of it was sent once after it, or more than once: none can be marked lost or
 * arm the reordering timer, and the scan of the message may stop there unless it still
 * looks for a chunk older than the recovery episode.
 */
static bool past_newest(const struct xp_conn *c, const struct xp_chunk *ch)
{
	return ch->tx_count == 1 && ch->tx_seq >= c->rack.tx_seq;
}

unsigned xp_rack_detect(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	struct detect d = { .earliest = UINT64_MAX };
	struct xp_smsg *ms[XP_MSG_SLOTS];
	uint64_t reo;
	uint32_t n;

	c->rack.dirty = false;
	c->rack.reo_deadline_ns = 0;
	if (c->rc_mode || !c->rack.tx_seq)
		return 0;
	reo = xp_rack_reo_wnd_ns(c);
	n = xp_smsgs(core, c, ms);
	for (uint32_t k = 0; k < n; k++)
		for (uint32_t i = ms[k]->cum; i < ms[k]->n_cut; i++) {
			struct xp_chunk *ch = &ms[k]->ring[i % XP_WIN];

			if (past_newest(c, ch) && (!c->rack.recovery_tx || d.old_left))
				break;
			detect_chunk(core, c, ms[k], ch, reo, now_ns, &d);
		}
	if (d.earliest != UINT64_MAX)
		c->rack.reo_deadline_ns = d.earliest;
	if (!d.lost) {
		if (c->rack.recovery_tx && !d.old_left)
			episode_end(c);
		return 0;
	}
	episode_begin(c);
	core->stats.rack_losses += d.lost;
	feed_cc_loss(core, c, d.lost, d.bytes, d.path, now_ns);
	return XP_NEWS_SEND;
}

/*
 * SRTT, or the RTT of the slowest path with chunks in flight if that is longer: chunks sprayed
 * over paths of different delay come back at the slowest one's pace, and a probe before that
 * would be needless. 0 when a chunk is in flight on a path never sampled: its RTT is unknown.
 */
static uint64_t slowest_rtt_ns(const struct xp_conn *c)
{
	uint64_t r = c->rtt.srtt_ns;

	for (uint32_t p = 0; c->n_paths > 1 && p < c->n_paths; p++) {
		const struct xp_path *path = &c->paths[p];

		if (!path->in_flight)
			continue;
		if (!path->rtt_ewma_ns)
			return 0;
		if (path->rtt_ewma_ns > r)
			r = path->rtt_ewma_ns;
	}
	return r;
}

static void arm_tlp(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	uint64_t pto, at;

	c->rack.tlp_deadline_ns = 0;
	/* No probe in recovery (RACK's episode, or the RTO's until a valid sample). */
	if (c->rc_mode || !c->in_flight_chunks || c->rack.tlp_out || c->rack.rto_backoff ||
	    c->rack.recovery_tx || c->lost_chunks)
		return;
	/* An RTO already due is the last resort: no probe takes its place (7.3). */
	if (c->rack.rto_deadline_ns && c->rack.rto_deadline_ns <= now_ns)
		return;
	pto = c->rtt.samples ? 2 * slowest_rtt_ns(c) : 0;
	if (!pto) /* no sample, or a chunk on a path never sampled */
		pto = core->cfg.rto_initial_ns;
	if (c->in_flight_chunks == 1)
		pto += c->rack.max_hold_ns;
	at = now_ns + pto;
	if (c->rack.rto_deadline_ns && at > c->rack.rto_deadline_ns)
		at = c->rack.rto_deadline_ns; /* 7.2: at the RTO's time rather than never */
	c->rack.tlp_deadline_ns = at;
}

/* An ACK delivered the outstanding probe or something sent after it: another may go. */
static void tlp_episode_check(struct xp_conn *c)
{
	if (c->rack.tlp_out && c->rack.tx_seq >= c->rack.tlp_end_tx) {
		c->rack.tlp_out = false;
		c->rack.tlp_rtx = false;
	}
}

/* The send time of the earliest outstanding transmission: each message's first chunk in flight. */
static uint64_t head_sent_ns(struct xp_core *core, struct xp_conn *c)
{
	struct xp_smsg *ms[XP_MSG_SLOTS];
	uint32_t n = xp_smsgs(core, c, ms);
	uint64_t head = UINT64_MAX;

	for (uint32_t k = 0; k < n; k++) {
		for (uint32_t i = ms[k]->cum; i < ms[k]->n_cut; i++) {
			const struct xp_chunk *ch = &ms[k]->ring[i % XP_WIN];

			if (!(ch->flags & XP_CH_INFLIGHT))
				continue;
			if (ch->sent_ns < head)
				head = ch->sent_ns;
			break;
		}
	}
	return head;
}

/* The RTO from the earliest outstanding transmission, or none with nothing in flight. */
static void arm_rto(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	uint64_t head;

	c->rack.rto_deadline_ns = 0;
	if (!c->in_flight_chunks)
		return;
	head = head_sent_ns(core, c);
	if (head > now_ns)
		head = now_ns;
	c->rack.rto_deadline_ns = head + xp_rto_ns(core, c);
	if (c->rack.rto_deadline_ns < now_ns)
		c->rack.rto_deadline_ns = now_ns; /* overdue: on the next timer run */
}

void xp_rack_on_new_ack(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	tlp_episode_check(c);
	arm_rto(core, c, now_ns);
	arm_tlp(core, c, now_ns);
}

void xp_rack_on_probe_acked(struct xp_core *core, struct xp_conn *c, const struct xp_chunk *ch,
			    bool repaired, uint64_t now_ns)
{
	c->rack.tlp_rtx = false;
	if (!repaired || (ch->flags & XP_CH_SPURIOUS))
		return;
	core->stats.tlp_recoveries++;
	feed_cc_loss(core, c, 1, ch->len, ch->path, now_ns);
}

void xp_rack_on_sent(struct xp_core *core, struct xp_conn *c, enum xp_tx_kind kind,
		     uint64_t now_ns)
{
	if (kind == XP_TX_PROBE) {
		c->rack.tlp_end_tx = c->tx_seq;
		c->rack.rto_deadline_ns = now_ns + xp_rto_ns(core, c); /* 7.3 */
	} else if (!c->rack.rto_deadline_ns)
		c->rack.rto_deadline_ns = now_ns + xp_rto_ns(core, c);
	if (kind == XP_TX_NEW)
		c->rack.tlp_rearm = true;
}

void xp_rack_on_burst_end(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	if (!c->rack.tlp_rearm)
		return;
	c->rack.tlp_rearm = false;
	arm_tlp(core, c, now_ns);
}

/* The earliest outstanding chunk (by its latest send time), to resend on an RTO. */
static bool earliest_in_flight(struct xp_core *core, struct xp_conn *c, struct xp_smsg **mp,
			       struct xp_chunk **chp)
{
	struct xp_smsg *ms[XP_MSG_SLOTS];
	uint32_t n = xp_smsgs(core, c, ms);

	*chp = NULL;
	for (uint32_t k = 0; k < n; k++)
		for (uint32_t i = ms[k]->cum; i < ms[k]->n_cut; i++) {
			struct xp_chunk *ch = &ms[k]->ring[i % XP_WIN];

			if ((ch->flags & XP_CH_INFLIGHT) && (!*chp || ch->sent_ns < (*chp)->sent_ns)) {
				*mp = ms[k];
				*chp = ch;
			}
		}
	return *chp != NULL;
}

/* Return: the news (the retransmission and the ACK requests to send). */
static unsigned on_rto(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	struct xp_smsg *ms[XP_MSG_SLOTS], *m;
	struct xp_chunk *ch;
	uint32_t n;

	core->stats.rto_fires++;
	c->rto_fires++;
	c->rack.tlp_deadline_ns = c->rack.reo_deadline_ns = 0;
	c->rack.tlp_out = false;
	c->rack.probe_pending = false;
	c->rack.tlp_rtx = false;
	if (c->rack.rto_backoff < 30)
		c->rack.rto_backoff++;
	n = xp_smsgs(core, c, ms);
	for (uint32_t k = 0; k < n; k++)
		if (ms[k]->cum != ms[k]->n_cut)
			c->ack_req_pend |= xp_slot_bit(ms[k]->seq);
	if (!c->rc_mode && earliest_in_flight(core, c, &m, &ch)) {
		episode_begin(c);
		mark_lost(core, c, m, ch);
		c->rack.rto_rtx = true;
	}
	c->cc.ops->on_rto(c->cc.ctx, c->cc_flow, c->in_flight_bytes, now_ns);
	c->rack.rto_deadline_ns = now_ns + xp_rto_ns(core, c);
	return XP_NEWS_CTRL | XP_NEWS_SEND;
}

static unsigned on_tlp(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	core->stats.tlp_fires++;
	c->rack.tlp_deadline_ns = 0;
	c->rack.tlp_out = true;
	c->rack.probe_pending = true;
	/* 7.3: the RTO restarts from the probe (again when it goes, xp_rack_on_sent()) */
	c->rack.rto_deadline_ns = now_ns + xp_rto_ns(core, c);
	return XP_NEWS_SEND;
}

unsigned xp_rack_on_timer(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	const struct xp_rack *r = &c->rack;
	unsigned news = 0;

	/* A probe due no later than the RTO goes instead of it (7.2); the RTO restarts from it. */
	if (r->tlp_deadline_ns && now_ns >= r->tlp_deadline_ns &&
	    (!r->rto_deadline_ns || r->tlp_deadline_ns <= r->rto_deadline_ns)) {
		news = on_tlp(core, c, now_ns);
	} else if (r->rto_deadline_ns && now_ns >= r->rto_deadline_ns) {
		if (c->in_flight_chunks)
			return on_rto(core, c, now_ns);
		c->rack.rto_deadline_ns = 0; /* what was in flight finished otherwise */
		return 0;
	}
	if (r->reo_deadline_ns && now_ns >= r->reo_deadline_ns)
		news |= xp_rack_detect(core, c, now_ns);
	return news;
}
