// SPDX-License-Identifier: MIT
/*
 * send.c - the sender: posted messages, CTS matching, chunking under the
 * byte budget, transmission, and the ACK records that come back.
 *
 * Matching: send k of a connection goes into the peer's receive k. Message k
 * starts once the peer's CTS k has arrived and its slot (k mod 16) is free,
 * that is message k - 16 has finished. A message longer than the CTS's
 * capacity is not sent: it completes with -EMSGSIZE and an ABORT k tells the
 * receiver, which completes its receive the same way and answers ABORT_ACK;
 * the ABORT is retransmitted on the RTO until then (or until the slot's next
 * CTS shows the receiver moved on), and a graceful close waits for it.
 *
 * Chunking. With min = max(min_chunk_bytes, ceil(len / 4096)), the cap is
 *   min                     with no RTT sample yet, in RTO recovery (backoff
 *                           not yet cleared by an ACK of new data), or for a
 *                           tail-loss probe: the connection knows nothing of
 *                           the path, so it risks one minimum chunk at a time
 *   cwnd / 4                otherwise, rounded down to whole multiples of min,
 *                           at least min and at most chunk_bytes
 * so a window holds at least four chunks (RACK then finds a loss by a later
 * delivery instead of a timeout, and a lost chunk costs at most a quarter of
 * the window), and chunks grow back to chunk_bytes as the window opens.
 * With budget = cwnd - bytes in flight and want = min(cap, bytes left):
 *   budget >= want          a chunk of want bytes
 *   nothing in flight       one chunk of min(want, min) bytes, over the
 *                           budget (a window below one chunk never deadlocks)
 *   otherwise               wait for an ACK
 * A chunk smaller than the cap goes only as a message's last or over an
 * empty window (sender-side silly-window avoidance, RFC 1122 4.2.3.4):
 * cutting whatever budget an ACK freed would keep the small chunks of a
 * connection's first round trip forever, one freed small chunk at a time.
 * Every chunk but the last is at least min bytes, so a message never needs
 * more than 4096 chunks; a message longer than 4096 x chunk_bytes is refused
 * at post time with -EMSGSIZE. A chunk keeps its offset and length for all
 * its retransmissions, and a message never has a chunk cut more than 63
 * past its cumulative ACK (the receiver's SACK bitmap covers 64).
 *
 * Order: a TLP probe first: one new chunk over the budget (one minimum
 * chunk) if there is one, else the newest chunk again. Then lost chunks,
 * which need budget like new ones (a lost chunk may go over the budget only
 * when nothing is in flight, or as an RTO's retransmission); then new
 * chunks of the oldest message that can cut one. A retransmission of a
 * chunk of a message whose chunks have all been cut queues an ACK_REQ for
 * that message: its receive may have completed and its rkey died, so the
 * retransmission is refused, but the ACK_REQ brings the lost final ACK.
 */
#include <errno.h>
#include <string.h>

#include "pcm.h"
#include "xp_conn.h"
#include "xp_core_state.h"
#include "xp_op.h"
#include "xp_path.h"
#include "xp_recovery.h"
#include "xp_send.h"

bool xp_send_busy(const struct xp_conn *c)
{
	return c->n_smsgs || c->sq.len;
}

unsigned xp_send_queued(struct xp_core *core, struct xp_conn *c, uint64_t len, uint64_t now_ns)
{
	c->send_posted++;
	c->backlog_bytes += len;
	return xp_send_try_start(core, c, now_ns);
}

static uint32_t min_chunk_for(const struct xp_core *core, uint64_t len)
{
	uint64_t m = (len + XP_MAX_CHUNKS - 1) / XP_MAX_CHUNKS;

	if (m < core->cfg.min_chunk_bytes)
		m = core->cfg.min_chunk_bytes;
	return m > core->cfg.chunk_bytes ? core->cfg.chunk_bytes : (uint32_t)m;
}

static void start_message(struct xp_core *core, struct xp_conn *c, uint32_t op_i, uint32_t m_i)
{
	struct xp_op *op = &core->ops[op_i];
	struct xp_cts *cts = &c->cts[op->seq & XP_SLOT_MASK];
	struct xp_smsg *m = &core->smsgs[m_i];

	m->conn = c->id;
	m->seq = op->seq;
	m->op = op_i;
	m->laddr = op->addr;
	m->len = op->len;
	m->lkey = op->key;
	m->rkey = cts->rkey;
	m->raddr = cts->raddr;
	m->cut_bytes = 0;
	m->min_chunk = min_chunk_for(core, op->len);
	m->n_cut = m->cum = m->n_lost = 0;
	m->last_cut = false;
	c->cts_held &= (uint16_t)~xp_slot_bit(op->seq);
	/* CTS k means receive k - 16 is over at the receiver: its ABORT arrived. */
	c->abort_unacked &= (uint16_t)~xp_slot_bit(op->seq);
	c->smsg[op->seq & XP_SLOT_MASK] = m_i;
	c->smsg_mask |= xp_slot_bit(op->seq);
	c->n_smsgs++;
}

/* Return: the news (an ABORT to send). */
static unsigned abort_message(struct xp_core *core, struct xp_conn *c, uint32_t op_i)
{
	struct xp_op *op = &core->ops[op_i];

	c->cts_held &= (uint16_t)~xp_slot_bit(op->seq);
	c->backlog_bytes -= op->len;
	core->stats.msgs_aborted++;
	c->abort_pend |= xp_slot_bit(op->seq);
	c->abort_unacked |= xp_slot_bit(op->seq);
	xp_complete_op(core, c, op_i, -EMSGSIZE, 0);
	xp_seqwin_finish(&c->sw, op->seq, 0, XP_OUT_ABORTED);
	return XP_NEWS_CTRL;
}

unsigned xp_send_try_start(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	uint32_t prev = XP_NONE, i = c->sq.head;
	unsigned news = 0;

	if (!xp_conn_live(c) || !c->bound)
		return 0; /* before the bind a CTS is only held: the bind checks where it came from */
	while (i != XP_NONE) {
		struct xp_op *op = &core->ops[i];
		struct xp_cts *cts = &c->cts[op->seq & XP_SLOT_MASK];
		uint32_t next = op->next, m_i;

		if (seq_diff(op->seq, c->sw.below) >= (int32_t)XP_CTS_WINDOW)
			break; /* no CTS can be held this far ahead */
		if (!(c->cts_held & xp_slot_bit(op->seq)) || cts->seq != op->seq ||
		    !xp_seqwin_slot_free(&c->sw, c->smsg, op->seq)) {
			prev = i;
			i = next;
			continue;
		}
		if (op->len > cts->cap) {
			xp_opq_unlink(core, &c->sq, prev, i);
			news |= abort_message(core, c, i);
			i = next;
			continue;
		}
		m_i = xp_pool_get_or_wait(core, &core->smsg_pool, &core->wait_smsg, c->id);
		if (m_i == XP_NONE)
			break;
		xp_opq_unlink(core, &c->sq, prev, i);
		start_message(core, c, i, m_i);
		news |= XP_NEWS_SEND;
		i = next;
	}
	return news;
}

unsigned xp_send_on_cts(struct xp_core *core, struct xp_conn *c, const struct xp_rec_cts *cts,
			uint64_t now_ns)
{
	uint32_t seq = cts->msg_seq, s = seq & XP_SLOT_MASK;
	int32_t d = seq_diff(seq, c->sw.below);
	struct xp_cts *held = &c->cts[s];
	bool finished = c->sw.last[s].seq == seq;
	bool is_held = c->cts_held & xp_slot_bit(seq);

	if (d >= (int32_t)XP_CTS_WINDOW) {
		xp_drop(core, XP_DROP_CTS_BAD_SEQ);
		return 0;
	}
	if (d < 0 || finished || xp_smsg_at(core, c, seq) || (is_held && held->seq == seq)) {
		/* A retransmitted CTS: the receiver has not heard from us. */
		if (finished && c->sw.last[s].outcome == XP_OUT_ABORTED)
			c->abort_pend |= xp_slot_bit(seq);
		else if (d >= 0 && !finished)
			c->cts_ack_pend |= xp_slot_bit(seq);
		xp_drop(core, XP_DROP_CTS_DUP);
		return XP_NEWS_CTRL;
	}
	/* New: the slot's previous message must be seq - 16, running or finished. */
	if (is_held || !(c->sw.last[s].seq == seq - XP_MSG_SLOTS ||
			     xp_smsg_at(core, c, seq - XP_MSG_SLOTS))) {
		xp_drop(core, XP_DROP_CTS_BAD_SEQ);
		return 0;
	}
	c->cts_held |= xp_slot_bit(seq);
	held->seq = seq;
	held->raddr = cts->raddr;
	held->cap = cts->cap;
	held->rkey = cts->rkey;
	return XP_NEWS_PROGRESS | xp_send_try_start(core, c, now_ns);
}

/* The largest chunk @c may cut of @m now (the cap in the header comment). */
static uint64_t chunk_cap(const struct xp_core *core, const struct xp_conn *c,
			  const struct xp_smsg *m, const struct xp_cc_ctl *ctl)
{
	uint64_t cap;

	if (!c->rtt.samples || c->rack.rto_backoff)
		return m->min_chunk;
	cap = ctl->cwnd_bytes / XP_CHUNKS_PER_CWND;
	if (cap >= core->cfg.chunk_bytes)
		return core->cfg.chunk_bytes;
	cap -= cap % m->min_chunk;
	return cap > m->min_chunk ? cap : m->min_chunk;
}

/* Chunking (the rule in the header comment). Return: false when no chunk may go. */
static bool chunk_len(const struct xp_core *core, const struct xp_conn *c,
		      const struct xp_smsg *m, const struct xp_cc_ctl *ctl, uint64_t budget,
		      bool probe, uint32_t *len)
{
	uint64_t left = m->len - m->cut_bytes;
	uint64_t cap = probe ? m->min_chunk : chunk_cap(core, c, m, ctl);
	uint64_t want = left < cap ? left : cap;
	uint64_t small = want < m->min_chunk ? want : m->min_chunk;

	if (budget >= want)
		*len = (uint32_t)want;
	else if (probe || c->in_flight_bytes == 0)
		*len = (uint32_t)small; /* over the budget, which is below small here */
	else
		return false;
	return true;
}

static uint64_t budget_of(const struct xp_conn *c, const struct xp_cc_ctl *ctl)
{
	return ctl->cwnd_bytes > c->in_flight_bytes ? ctl->cwnd_bytes - c->in_flight_bytes : 0;
}

/* Put chunk @idx of @m on the wire (first transmission or not); @probe: as a tail-loss probe. */
static void transmit(struct xp_core *core, struct xp_conn *c, struct xp_smsg *m, uint32_t idx,
		     uint64_t now_ns, struct xp_batch *b, struct xp_cc_ctl *ctl, bool probe)
{
	struct xp_chunk *ch = &m->ring[idx % XP_WIN];
	struct xp_action *act = &b->acts[b->n++];
	bool new_data = !ch->tx_count;
	struct xp_imm f;
	uint32_t p;

	if (c->cc_info.wants_tx) {
		c->cc.ops->on_tx(c->cc.ctx, c->cc_flow, c->backlog_bytes, c->in_flight_bytes, now_ns);
		xp_cc_read(c, ctl);
	}
	p = xp_path_choose(core, c, ctl);
	if (ch->flags & XP_CH_LOST) {
		ch->flags &= (uint8_t)~XP_CH_LOST;
		m->n_lost--;
		c->lost_chunks--;
	}
	if (ch->flags & XP_CH_INFLIGHT) /* a probe of a chunk in flight: it moves to path p */
		xp_inflight_sub(core, c, ch);
	ch->path = (uint8_t)p;
	xp_inflight_add(core, c, ch);
	f.conn = (uint16_t)c->peer_id;
	f.slot = (uint8_t)(m->seq & XP_SLOT_MASK);
	f.chunk = (uint16_t)idx;
	f.last = m->last_cut && idx + 1 == m->n_cut;
	/* The parity flips on every transmission: 0 first, then 1, 0, ... however many. */
	f.parity = !new_data && !xp_chunk_parity(ch);
	if (!new_data) {
		core->stats.chunks_retx++;
		c->chunks_retx++;
		/* Its receive may be complete and its rkey gone: ask for the ACK record too. */
		if (m->last_cut)
			c->ack_req_pend |= xp_slot_bit(m->seq);
	}
	if (ch->tx_count < UINT8_MAX)
		ch->tx_count++;
	ch->prev_sent_ns = ch->sent_ns;
	ch->sent_ns = now_ns;
	ch->tx_seq = ++c->tx_seq;
	ch->flags &= (uint8_t)~(XP_CH_SAMPLED | XP_CH_SPURIOUS | XP_CH_PARITY);
	if (f.parity)
		ch->flags |= XP_CH_PARITY;

	act->kind = XP_ACT_WRITE;
	act->u.write.path = c->paths[p].handle;
	act->u.write.lkey = m->lkey;
	act->u.write.rkey = m->rkey;
	act->u.write.imm = xp_imm_encode(&f);
	act->u.write.len = ch->len;
	act->u.write.laddr = m->laddr + ch->off;
	act->u.write.raddr = m->raddr + ch->off;
	act->u.write.token = (uint64_t)c->nonce << 32 | c->id;
	b->n_writes++;

	if (ctl->rate < PCM_RATE_ONE) {
		/* Late by less than a wheel tick is the wheel's rounding: keep the schedule. */
		uint64_t from = c->pace_next_ns + core->cfg.pacer_tick_ns >= now_ns ? c->pace_next_ns
										     : now_ns;

		c->pace_next_ns = from + xp_pacer_gap_ns(ch->len, ctl->rate,
							 core->cfg.line_rate_bps);
	}
	xp_rack_on_sent(core, c, probe ? XP_TX_PROBE : new_data ? XP_TX_NEW : XP_TX_RETX, now_ns);
}

/* Cut the next chunk of the oldest message that can; Return: false if none may go. */
static bool send_new(struct xp_core *core, struct xp_conn *c, uint64_t now_ns,
		     struct xp_batch *b, struct xp_cc_ctl *ctl, bool probe)
{
	uint64_t budget = budget_of(c, ctl);
	struct xp_smsg_walk w;
	struct xp_smsg *m;

	xp_smsg_walk_init(c, &w);
	while ((m = xp_smsg_walk_next(core, c, &w))) {
		struct xp_chunk *ch;
		uint32_t len, idx;

		if (m->last_cut || m->n_cut >= m->cum + XP_WIN)
			continue;
		if (!chunk_len(core, c, m, ctl, budget, probe, &len))
			return false; /* the budget is the connection's: no other message fits */
		idx = m->n_cut++;
		ch = &m->ring[idx % XP_WIN];
		ch->off = m->cut_bytes;
		ch->len = len;
		ch->flags = 0;
		ch->tx_count = 0;
		m->cut_bytes += len;
		m->last_cut = m->cut_bytes == m->len;
		c->backlog_bytes -= len;
		core->stats.chunks_sent++;
		core->stats.bytes_sent += len;
		transmit(core, c, m, idx, now_ns, b, ctl, probe);
		return true;
	}
	return false;
}

/* The first chunk marked lost, oldest message first. */
static bool first_lost(struct xp_core *core, struct xp_conn *c, struct xp_smsg **mp,
		       uint32_t *idxp)
{
	struct xp_smsg *ms[XP_MSG_SLOTS];
	uint32_t n = c->lost_chunks ? xp_smsgs(core, c, ms) : 0;

	for (uint32_t k = 0; k < n; k++) {
		struct xp_smsg *m = ms[k];

		if (!m->n_lost)
			continue;
		for (uint32_t i = m->cum; i < m->n_cut; i++) {
			if (m->ring[i % XP_WIN].flags & XP_CH_LOST) {
				*mp = m;
				*idxp = i;
				return true;
			}
		}
	}
	return false;
}

/* TLP without new data: the chunk in flight sent last goes again. */
static bool send_newest_again(struct xp_core *core, struct xp_conn *c, uint64_t now_ns,
			      struct xp_batch *b, struct xp_cc_ctl *ctl)
{
	struct xp_smsg *best = NULL;
	uint32_t best_idx = 0;
	uint64_t best_tx = 0;
	struct xp_smsg *ms[XP_MSG_SLOTS];
	uint32_t n = xp_smsgs(core, c, ms);

	for (uint32_t k = 0; k < n; k++) {
		struct xp_smsg *m = ms[k];

		for (uint32_t i = m->cum; i < m->n_cut; i++) {
			const struct xp_chunk *ch = &m->ring[i % XP_WIN];

			if ((ch->flags & XP_CH_INFLIGHT) && ch->tx_seq > best_tx) {
				best = m;
				best_idx = i;
				best_tx = ch->tx_seq;
			}
		}
	}
	if (!best)
		return false;
	transmit(core, c, best, best_idx, now_ns, b, ctl, true);
	c->rack.tlp_rtx = true; /* 7.4: whether it repaired a loss shows in its ACK */
	return true;
}

/* One chunk, if any may go now. */
static bool send_one(struct xp_core *core, struct xp_conn *c, uint64_t now_ns, struct xp_batch *b,
		     struct xp_cc_ctl *ctl)
{
	bool over_budget = c->rack.rto_rtx; /* an RTO's retransmission goes whatever the window */
	struct xp_smsg *m;
	uint32_t idx;

	if (c->rack.probe_pending) {
		c->rack.probe_pending = false;
		if (send_new(core, c, now_ns, b, ctl, true) ||
		    send_newest_again(core, c, now_ns, b, ctl))
			return true;
	}
	c->rack.rto_rtx = false;
	if (c->lost_chunks && first_lost(core, c, &m, &idx)) {
		const struct xp_chunk *ch = &m->ring[idx % XP_WIN];

		if (!over_budget && ch->len > budget_of(c, ctl) && c->in_flight_bytes)
			return false; /* retransmissions go first: new chunks wait too */
		transmit(core, c, m, idx, now_ns, b, ctl, false);
		return true;
	}
	return send_new(core, c, now_ns, b, ctl, false);
}

/* Up to burst_chunks chunks; Return: whether more could go now. */
static bool push(struct xp_core *core, struct xp_conn *c, uint64_t now_ns, struct xp_batch *b)
{
	struct xp_cc_ctl ctl;

	xp_cc_read(c, &ctl);
	for (uint32_t sent = 0; sent < core->cfg.burst_chunks; sent++) {
		if (b->n == b->cap || b->n_writes >= b->max_writes)
			return true;
		if (ctl.rate < PCM_RATE_ONE && c->pace_next_ns > now_ns) {
			if (!xp_wheel_holds(&core->wheel, c->id))
				xp_wheel_insert(&core->wheel, c->id, c->pace_next_ns);
			return false;
		}
		if (!send_one(core, c, now_ns, b, &ctl))
			return false;
	}
	return true;
}

unsigned xp_send_push(struct xp_core *core, struct xp_conn *c, uint64_t now_ns,
		      struct xp_batch *b)
{
	uint16_t asked = c->ack_req_pend;
	unsigned news;

	if (!xp_conn_live(c) || !c->bound || !c->n_smsgs)
		return 0;
	news = push(core, c, now_ns, b) ? XP_NEWS_SEND : 0;
	xp_rack_on_burst_end(core, c, now_ns);
	if (c->ack_req_pend & (uint16_t)~asked)
		news |= XP_NEWS_CTRL;
	return news;
}

/* Finish message @m: its completion, its slot, and whatever it had in flight. */
static void finish(struct xp_core *core, struct xp_conn *c, struct xp_smsg *m, int status)
{
	uint32_t s = m->seq & XP_SLOT_MASK;

	for (uint32_t i = m->cum; i < m->n_cut; i++) {
		struct xp_chunk *ch = &m->ring[i % XP_WIN];

		if (ch->flags & XP_CH_INFLIGHT)
			xp_inflight_sub(core, c, ch);
		if (ch->flags & XP_CH_LOST)
			c->lost_chunks--;
	}
	c->backlog_bytes -= m->len - m->cut_bytes;
	c->smsg[s] = XP_NONE;
	c->smsg_mask &= (uint16_t)~xp_slot_bit(m->seq);
	c->n_smsgs--;
	c->ack_req_pend &= (uint16_t)~xp_slot_bit(m->seq);
	c->cts_ack_pend &= (uint16_t)~xp_slot_bit(m->seq);
	if (!status)
		core->stats.msgs_sent++;
	xp_complete_op(core, c, m->op, status, status ? 0 : m->len);
	xp_seqwin_finish(&c->sw, m->seq, m->n_cut, status ? XP_OUT_FAILED : XP_OUT_OK);
	xp_pool_put(&core->smsg_pool, (uint32_t)(m - core->smsgs));
}

/* Cumulative, SACK and echo must name chunks that were sent; "complete" a fully sent message. */
static bool ack_in_range(struct xp_core *core, const struct xp_smsg *m,
			 const struct xp_rec_ack *a)
{
	if (a->cum > m->n_cut || (a->echo_valid && a->echo_chunk >= m->n_cut) ||
	    (a->sack && (uint32_t)a->cum + 64u - (uint32_t)__builtin_clzll(a->sack) >= m->n_cut)) {
		xp_drop(core, XP_DROP_ACK_NEVER_SENT);
		return false;
	}
	if (a->complete && !(m->last_cut && a->cum == m->n_cut)) {
		xp_drop(core, XP_DROP_ACK_BAD_COMPLETE);
		return false;
	}
	return true;
}

struct ack_news {
	uint32_t chunks;
	uint64_t bytes;
	uint32_t newest_path;
	uint64_t newest_tx;
	struct xp_chunk *probed; /* the chunk the outstanding probe resent, acknowledged now */
};

static void ack_chunk(struct xp_core *core, struct xp_conn *c, struct xp_smsg *m, uint32_t i,
		      uint64_t now_ns, struct ack_news *news)
{
	struct xp_chunk *ch = &m->ring[i % XP_WIN];

	if (ch->flags & XP_CH_ACKED)
		return;
	ch->flags |= XP_CH_ACKED;
	if (ch->flags & XP_CH_INFLIGHT)
		xp_inflight_sub(core, c, ch);
	if (ch->flags & XP_CH_LOST) {
		ch->flags &= (uint8_t)~XP_CH_LOST;
		m->n_lost--;
		c->lost_chunks--;
	}
	news->chunks++;
	news->bytes += ch->len;
	if (c->rack.tlp_rtx && ch->tx_seq == c->rack.tlp_end_tx)
		news->probed = ch;
	if (ch->tx_seq >= news->newest_tx) {
		news->newest_tx = ch->tx_seq;
		news->newest_path = ch->path;
	}
	xp_rack_on_delivered(c, ch, now_ns);
}

/* The ACK echoes the probe's own transmission of @ch, with no duplicate seen: the original was lost. */
static bool probe_repaired(const struct xp_smsg *m, const struct xp_chunk *ch,
			   const struct xp_rec_ack *a)
{
	return a->echo_valid && !a->dup_seen && &m->ring[a->echo_chunk % XP_WIN] == ch &&
	       a->echo_parity == xp_chunk_parity(ch);
}

static void feed_cc_ack(struct xp_core *core, struct xp_conn *c, const struct xp_rec_ack *a,
			const struct ack_news *news, uint64_t rtt_ns, int echo_path,
			uint64_t now_ns)
{
	struct xp_cc_ack ev;
	uint32_t p = echo_path >= 0 ? (uint32_t)echo_path : news->newest_path;

	ev.acked_chunks = news->chunks;
	ev.acked_bytes = news->bytes;
	ev.rtt_ns = rtt_ns;
	ev.ecn_ce = a->ce;
	ev.echo_ce = a->echo_ce;
	ev.hold_ns = a->hold_ns;
	ev.ev = c->paths[p < c->n_paths ? p : 0].ev;
	ev.in_flight_bytes = c->in_flight_bytes;
	ev.backlog_bytes = c->backlog_bytes;
	c->cc.ops->on_ack(c->cc.ctx, c->cc_flow, &ev, now_ns);
}

unsigned xp_send_on_ack(struct xp_core *core, struct xp_conn *c, const struct xp_rec_ack *a,
			uint64_t now_ns)
{
	struct xp_smsg *m = xp_smsg_at(core, c, a->msg_seq);
	unsigned out = XP_NEWS_SEND;
	struct ack_news news = { 0 };
	uint64_t rtt_ns = 0;
	int echo_path = -1;
	bool sampled = false;

	if (!m) {
		if (seq_diff(a->msg_seq, c->sw.below) < 0 ||
		    c->sw.last[a->msg_seq & XP_SLOT_MASK].seq == a->msg_seq)
			xp_drop(core, XP_DROP_ACK_STALE);
		else
			xp_drop(core, XP_DROP_ACK_UNKNOWN_MSG);
		return 0;
	}
	if (!ack_in_range(core, m, a))
		return 0;
	core->stats.ack_records_rx++;
	/* The RTT sample first: the echoed chunk's entry is still live. */
	if (a->echo_valid && a->echo_chunk >= m->cum) {
		struct xp_chunk *ch = &m->ring[a->echo_chunk % XP_WIN];

		xp_rack_check_spurious(core, c, ch, a->echo_parity, a->dup_seen, now_ns);
		sampled = xp_rto_sample(core, c, ch, a->echo_parity, a->hold_ns, now_ns, &rtt_ns);
		echo_path = ch->path;
	}
	xp_rack_on_hold(&c->rack, a->hold_ns);
	for (uint32_t i = m->cum; i < a->cum; i++)
		ack_chunk(core, c, m, i, now_ns, &news);
	for (uint64_t bits = a->sack; bits; bits &= bits - 1) {
		uint32_t i = (uint32_t)a->cum + 1u + (uint32_t)__builtin_ctzll(bits);

		if (i >= m->cum)
			ack_chunk(core, c, m, i, now_ns, &news);
	}
	if (a->complete)
		for (uint32_t i = m->cum; i < m->n_cut; i++)
			ack_chunk(core, c, m, i, now_ns, &news);
	while (m->cum < m->n_cut && (m->ring[m->cum % XP_WIN].flags & XP_CH_ACKED))
		m->cum++;
	if (news.probed)
		xp_rack_on_probe_acked(core, c, news.probed, probe_repaired(m, news.probed, a),
				       now_ns);
	if (a->dup_seen)
		xp_rack_on_dsack(c, now_ns);
	if (news.chunks) {
		out |= XP_NEWS_PROGRESS;
		xp_rack_on_new_ack(core, c, now_ns);
	}
	if (news.chunks || sampled || a->ce)
		feed_cc_ack(core, c, a, &news, rtt_ns, echo_path, now_ns);
	if (m->last_cut && m->cum == m->n_cut) {
		finish(core, c, m, 0);
		out |= xp_send_try_start(core, c, now_ns) | XP_NEWS_FINISHED;
	}
	if (c->rack.dirty)
		out |= xp_rack_detect(core, c, now_ns);
	return out;
}

unsigned xp_send_on_abort_ack(struct xp_core *core, struct xp_conn *c, uint32_t seq,
			      uint64_t now_ns)
{
	uint32_t s = seq & XP_SLOT_MASK;

	if (c->sw.last[s].seq != seq || c->sw.last[s].outcome != XP_OUT_ABORTED ||
	    !(c->abort_unacked & xp_slot_bit(seq))) {
		xp_drop(core, XP_DROP_SEQ_BAD);
		return 0;
	}
	c->abort_unacked &= (uint16_t)~xp_slot_bit(seq);
	if (!c->abort_unacked) {
		c->abort_rtx_ns = 0;
		c->abort_backoff = 0;
	}
	return XP_NEWS_PROGRESS | XP_NEWS_FINISHED;
}

void xp_send_on_abort_sent(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	if (c->abort_unacked && !c->abort_rtx_ns)
		c->abort_rtx_ns = now_ns + xp_rto_ctl_ns(core, c, c->abort_backoff);
}

unsigned xp_send_on_timer(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	if (!c->abort_rtx_ns || now_ns < c->abort_rtx_ns)
		return 0;
	c->abort_rtx_ns = 0;
	if (!c->abort_unacked)
		return 0;
	c->abort_pend |= c->abort_unacked;
	if (c->abort_backoff < 30)
		c->abort_backoff++;
	return XP_NEWS_CTRL;
}

/* A queued send goes: its bytes leave the backlog, its CTS (not an earlier one's) is dropped. */
static void forget_queued(struct xp_conn *c, const struct xp_op *op)
{
	c->backlog_bytes -= op->len;
	if (c->cts[op->seq & XP_SLOT_MASK].seq == op->seq)
		c->cts_held &= (uint16_t)~xp_slot_bit(op->seq);
}

void xp_send_fail_from(struct xp_core *core, struct xp_conn *c, uint32_t first_seq, int err)
{
	/* Queued first, so finishing an active one cannot start a doomed one. */
	xp_opq_fail_from(core, c, &c->sq, &c->sw, first_seq, err, forget_queued);
	for (uint32_t s = 0; s < XP_MSG_SLOTS; s++) {
		uint32_t m_i = c->smsg[s];

		if (m_i != XP_NONE && seq_diff(core->smsgs[m_i].seq, first_seq) >= 0)
			finish(core, c, &core->smsgs[m_i], err);
	}
}
