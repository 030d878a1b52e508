// SPDX-License-Identifier: MIT
/*
 * recovery.c - loss recovery in UC mode: RACK-TLP (RFC 8985) and the
 * retransmission timeout (RFC 6298), per connection, over chunks.
 *
 * RACK. Delivery of a chunk makes its transmission the newest delivered one
 * when it was sent after the previous newest (transmission order is a
 * per-connection counter, so equal timestamps are still ordered); its
 * RACK.rtt is now - its send time. A retransmitted chunk delivered sooner
 * than min_RTT after its retransmission was delivered by its original, and
 * moves nothing (RFC 8985 6.2 step 2). A chunk in flight that was sent
 * before the newest delivered one is lost once
 *     now >= its send time + RACK.rtt + reo_wnd,
 * and the reordering timer is armed at the earliest such deadline that is
 * still ahead. reo_wnd = min_RTT/4 x mult, capped at SRTT; mult grows by one
 * (at most once per SRTT, up to 16) when the receiver reports a duplicate
 * chunk (the DSACK signal of a spurious retransmission), and falls back to 1
 * after 16 loss episodes without one.
 *
 * TLP. With chunks in flight, no probe out and no RTO recovery under way,
 * PTO = 2 x SRTT (the initial RTO before any sample), plus the receiver's
 * recent maximum hold when a single chunk is in flight; not armed when the
 * RTO would fire first. Armed by a send when not armed, restarted by each
 * new chunk sent and by each ACK of new data (RFC 8985 7.2), so a paced
 * flight is probed a PTO after its newest chunk, not its first. A probe sends one new chunk of the minimum size
 * (send.c) if there is one, else the newest chunk again.
 *
 * RTO. Armed while chunks are in flight: RTO = SRTT + max(G, 4 RTTVAR),
 * floored and capped, doubled per expiry (rtt.c); restarted, with the
 * backoff cleared, by every ACK that acknowledges new data. On expiry every
 * chunk in flight is marked lost (retransmitted selectively, first, under
 * the budget), the CC gets an RTO signal, and an ACK_REQ goes for each
 * message with unacknowledged chunks, so a lost final ACK is recovered even
 * when the retransmissions cannot reach the receiver (its rkey is gone).
 *
 * Spurious retransmissions. An ACK's echo names the transmission that
 * arrived by its parity; one older than the chunk's latest transmission
 * proves the latest needless (Eifel detection, RFC 3522, with the parity
 * bit as the timestamp). It counts (stats.spurious_retx, and the
 * connection's), widens reo_wnd as the receiver's duplicate report does,
 * and the chunk's delivery does not move RACK (the retransmission's send
 * time would make RACK.rtt too short). The detection needs no duplicate at
 * the receiver: on datapaths that invalidate a receive's rkey at completion
 * a late retransmission never reaches the core, so no duplicate is reported.
 *
 * Karn. The echo in an ACK names a transmission by chunk and parity; an RTT
 * sample (now - send time - receiver hold) is taken only when it names the
 * chunk's latest transmission unambiguously: same parity, and at most two
 * transmissions so far (a third would share the first's parity).
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

	if (ch->flags & XP_CH_SPURIOUS)
		return; /* delivered by an earlier transmission, sent before the latest */
	if (ch->tx_count > 1 && c->rtt.samples && since < c->rtt.min_ns)
		return;
	if (ch->tx_seq > c->rack.tx_seq) {
		c->rack.tx_seq = ch->tx_seq;
		c->rack.rtt_ns = since;
		c->rack.dirty = true;
	}
}

bool xp_rto_sample(struct xp_core *core, struct xp_conn *c, struct xp_chunk *ch, bool parity,
		   uint64_t hold_ns, uint64_t now_ns, uint64_t *rtt_ns)
{
	uint64_t elapsed = now_ns - ch->sent_ns;

	if (ch->flags & XP_CH_SAMPLED)
		return false;
	if (!ch->tx_count || parity != ((ch->tx_count - 1) & 1) || ch->tx_count > 2) {
		core->stats.karn_skipped++;
		return false;
	}
	if (elapsed <= hold_ns)
		return false;
	*rtt_ns = elapsed - hold_ns;
	ch->flags |= XP_CH_SAMPLED;
	xp_rtt_sample(&c->rtt, *rtt_ns);
	xp_path_on_rtt(c, ch->path, *rtt_ns);
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
	    (parity == ((ch->tx_count - 1) & 1) && !dup_seen))
		return;
	ch->flags |= XP_CH_SPURIOUS;
	core->stats.spurious_retx++;
	c->spurious_retx++;
	xp_rack_on_dsack(c, now_ns);
}

/* A loss episode: a grown reo_wnd lasts XP_REO_PERSIST of them. */
static void loss_episode(struct xp_conn *c)
{
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

unsigned xp_rack_detect(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	uint64_t reo, earliest = UINT64_MAX, bytes = 0;
	uint32_t lost = 0, path = 0, n;
	struct xp_smsg *ms[XP_MSG_SLOTS];

	c->rack.dirty = false;
	c->rack.reo_deadline_ns = 0;
	if (c->rc_mode || !c->rack.tx_seq)
		return 0;
	reo = xp_rack_reo_wnd_ns(c);
	n = xp_smsgs(core, c, ms);
	for (uint32_t k = 0; k < n; k++) {
		struct xp_smsg *m = ms[k];

		for (uint32_t i = m->cum; i < m->n_cut; i++) {
			struct xp_chunk *ch = &m->ring[i % XP_WIN];
			uint64_t deadline;

			if (!(ch->flags & XP_CH_INFLIGHT) || ch->tx_seq >= c->rack.tx_seq)
				continue;
			deadline = ch->sent_ns + c->rack.rtt_ns + reo;
			if (now_ns >= deadline) {
				mark_lost(core, c, m, ch);
				lost++;
				bytes += ch->len;
				path = ch->path;
			} else if (deadline < earliest) {
				earliest = deadline;
			}
		}
	}
	if (earliest != UINT64_MAX)
		c->rack.reo_deadline_ns = earliest;
	if (!lost)
		return 0;
	core->stats.rack_losses += lost;
	loss_episode(c);
	feed_cc_loss(core, c, lost, bytes, path, now_ns);
	return XP_NEWS_SEND;
}

static void arm_tlp(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	uint64_t pto, at;

	c->rack.tlp_deadline_ns = 0;
	/* No probe in RTO recovery: the backoff is cleared by the first ACK of new data. */
	if (c->rc_mode || !c->in_flight_chunks || c->rack.tlp_out || c->rack.rto_backoff)
		return;
	pto = c->rtt.samples ? 2 * c->rtt.srtt_ns : core->cfg.rto_initial_ns;
	if (c->in_flight_chunks == 1)
		pto += c->rack.max_hold_ns;
	at = now_ns + pto;
	if (!c->rack.rto_deadline_ns || at < c->rack.rto_deadline_ns)
		c->rack.tlp_deadline_ns = at;
}

void xp_rack_on_new_ack(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	c->rack.rto_backoff = 0;
	c->rack.tlp_out = false;
	c->rack.rto_deadline_ns = c->in_flight_chunks ? now_ns + xp_rto_ns(core, c) : 0;
	arm_tlp(core, c, now_ns);
}

void xp_rack_on_sent(struct xp_core *core, struct xp_conn *c, bool new_data, uint64_t now_ns)
{
	if (!c->rack.rto_deadline_ns)
		c->rack.rto_deadline_ns = now_ns + xp_rto_ns(core, c);
	if (!c->rack.tlp_deadline_ns || new_data)
		arm_tlp(core, c, now_ns);
}

/* Return: the news (lost chunks and ACK requests to send). */
static unsigned on_rto(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	struct xp_smsg *ms[XP_MSG_SLOTS];
	uint32_t n;

	core->stats.rto_fires++;
	c->rto_fires++;
	c->rack.rto_deadline_ns = c->rack.tlp_deadline_ns = c->rack.reo_deadline_ns = 0;
	c->rack.tlp_out = false;
	c->rack.probe_pending = false;
	if (c->rack.rto_backoff < 30)
		c->rack.rto_backoff++;
	n = xp_smsgs(core, c, ms);
	for (uint32_t k = 0; k < n; k++) {
		struct xp_smsg *m = ms[k];

		if (m->cum == m->n_cut)
			continue;
		c->ack_req_pend |= xp_slot_bit(m->seq);
		for (uint32_t i = m->cum; !c->rc_mode && i < m->n_cut; i++) {
			struct xp_chunk *ch = &m->ring[i % XP_WIN];

			if (ch->flags & XP_CH_INFLIGHT)
				mark_lost(core, c, m, ch);
		}
	}
	loss_episode(c);
	c->cc.ops->on_rto(c->cc.ctx, c->cc_flow, c->in_flight_bytes, now_ns);
	if (c->in_flight_chunks)
		c->rack.rto_deadline_ns = now_ns + xp_rto_ns(core, c);
	return XP_NEWS_CTRL | XP_NEWS_SEND;
}

unsigned xp_rack_on_timer(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	unsigned news = 0;

	if (c->rack.rto_deadline_ns && now_ns >= c->rack.rto_deadline_ns) {
		if (c->in_flight_chunks)
			return on_rto(core, c, now_ns);
		c->rack.rto_deadline_ns = 0; /* what was in flight finished otherwise */
		return 0;
	}
	if (c->rack.tlp_deadline_ns && now_ns >= c->rack.tlp_deadline_ns) {
		core->stats.tlp_fires++;
		c->rack.tlp_deadline_ns = 0;
		c->rack.tlp_out = true;
		c->rack.probe_pending = true;
		news = XP_NEWS_SEND;
	}
	if (c->rack.reo_deadline_ns && now_ns >= c->rack.reo_deadline_ns)
		news |= xp_rack_detect(core, c, now_ns);
	return news;
}
