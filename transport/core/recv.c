// SPDX-License-Identifier: MIT
/*
 * recv.c - the receiver: posted receives, CTS advertisement and its
 * retransmission, chunk tracking and completion, and the sender's records
 * that concern a receive (CTS_ACK, ABORT, ACK_REQ).
 *
 * Receive k takes the peer's message k. It is advertised (CTS k: address,
 * rkey, capacity) as soon as receive k - XP_MSG_WINDOW has finished and its
 * slot is free (receive k - 16 finished), so up to 8 receives are
 * advertised ahead and a ping-pong with pre-posted receives pays no
 * rendezvous. Why 8 of the immediate's 16 slots (imm.h): a chunk of
 * receive k that the datapath placed before k's key was released but
 * reports after k completed (a completion queue that lags placement) must
 * find its slot not yet reused. Receive k + 16 is advertised only after
 * k + 8 finished, and k + 8 only after k finished, so every chunk of k + 8
 * was written after k's key died, hence reported after any chunk placed
 * under it (one completion queue, in order): the stale chunk is seen while
 * the slot still remembers k, and is dropped as a chunk of a done message.
 * A CTS is retransmitted on the connection's RTO (with backoff)
 * until a sign comes back from the sender: a chunk, a CTS_ACK or an ABORT.
 * Every ABORT, first or repeated, is answered with ABORT_ACK.
 *
 * Per receive: the cumulative chunk (index of the first missing one), a
 * bitmap of the 64 chunks after it, the last chunk's index once seen, and
 * the bytes so far. It completes when the last chunk has arrived with no gap
 * before it; its slot is released after the ACK saying so has gone out.
 *
 * Every immediate is checked before it changes anything: connection id and
 * path (conn.c, xp_conn_for_chunk()), then its state here; an advertised
 * receive in the slot; the chunk index inside
 * [cum, cum + 64]; the last-chunk flag against what was seen; the length
 * (zero only for an empty message, at most XP_CHUNK_BYTES_MAX, within the
 * capacity). Duplicates are counted and re-ACKed with "duplicate seen".
 */
#include <errno.h>
#include <string.h>

#include "xp_conn.h"
#include "xp_core_state.h"
#include "xp_op.h"
#include "xp_recovery.h"
#include "xp_recv.h"

bool xp_recv_done_ok(const struct xp_conn *c, uint32_t seq)
{
	return xp_seqwin_ended(&c->rw, seq, XP_OUT_OK) && c->rw.last[seq & XP_SLOT_MASK].n_chunks;
}

unsigned xp_recv_queued(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	c->recv_posted++;
	return xp_recv_try_advertise(core, c, now_ns);
}

unsigned xp_recv_try_advertise(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	unsigned news = 0;

	if (!xp_conn_live(c))
		return 0;
	while (c->rq.head != XP_NONE) {
		uint32_t op_i = c->rq.head;
		struct xp_op *op = &core->ops[op_i];
		struct xp_rmsg *r;
		uint32_t r_i;

		if (!xp_seqwin_slot_free(&c->rw, c->rmsg, op->seq) ||
		    !xp_seqwin_finished(&c->rw, op->seq - XP_MSG_WINDOW))
			break;
		r_i = xp_pool_get_or_wait(core, &core->rmsg_pool, &core->wait_rmsg, c->id);
		if (r_i == XP_NONE)
			break;
		xp_opq_unlink(core, &c->rq, XP_NONE, op_i);
		r = &core->rmsgs[r_i];
		memset(r, 0, sizeof(*r));
		r->conn = c->id;
		r->seq = op->seq;
		r->op = op_i;
		r->addr = op->addr;
		r->cap = op->len;
		r->rkey = op->key;
		r->last = XP_NO_LAST;
		r->cts_state = XP_CTS_TO_SEND;
		c->rmsg[op->seq & XP_SLOT_MASK] = r_i;
		c->n_rmsgs++;
		c->cts_unconfirmed++;
		c->cts_pend |= xp_slot_bit(op->seq);
		news = XP_NEWS_CTRL;
	}
	return news;
}

static void confirm_cts(struct xp_conn *c, struct xp_rmsg *r)
{
	if (r->cts_state == XP_CTS_CONFIRMED)
		return;
	r->cts_state = XP_CTS_CONFIRMED;
	c->cts_unconfirmed--;
	c->cts_timed &= (uint16_t)~xp_slot_bit(r->seq);
	c->cts_pend &= (uint16_t)~xp_slot_bit(r->seq);
}

/* Free @r's slot, recording how its receive ended. */
static void release(struct xp_core *core, struct xp_conn *c, struct xp_rmsg *r,
		    uint16_t n_chunks, uint8_t outcome)
{
	uint32_t seq = r->seq;

	confirm_cts(c, r);
	c->rmsg[seq & XP_SLOT_MASK] = XP_NONE;
	c->n_rmsgs--;
	c->ack_pend &= (uint16_t)~xp_slot_bit(seq);
	xp_pool_put(&core->rmsg_pool, (uint32_t)(r - core->rmsgs));
	xp_seqwin_finish(&c->rw, seq, n_chunks, outcome);
}

unsigned xp_recv_release(struct xp_core *core, struct xp_conn *c, uint32_t slot, uint64_t now_ns)
{
	struct xp_rmsg *r = &core->rmsgs[c->rmsg[slot]];

	release(core, c, r, (uint16_t)(r->last + 1), XP_OUT_OK);
	return xp_recv_try_advertise(core, c, now_ns) | XP_NEWS_FINISHED;
}

/* Highest chunk index received, or -1. */
static int highest_received(const struct xp_rmsg *r)
{
	if (r->sack)
		return r->cum + 64 - __builtin_clzll(r->sack);
	return (int)r->cum - 1;
}

static bool chunk_seen(const struct xp_rmsg *r, uint32_t i)
{
	return i < r->cum || (i > r->cum && ((r->sack >> (i - r->cum - 1)) & 1));
}

static void mark_received(struct xp_rmsg *r, uint32_t i)
{
	if (i != r->cum) {
		r->sack |= 1ull << (i - r->cum - 1);
		return;
	}
	r->cum++;
	/* bit 0 now names chunk cum itself: slide past every chunk already held */
	while (r->sack & 1) {
		r->sack >>= 1;
		r->cum++;
	}
	r->sack >>= 1;
}

static void set_echo(struct xp_rmsg *r, const struct xp_imm *f, bool ecn_ce, uint64_t now_ns)
{
	r->echo_chunk = f->chunk;
	r->echo_parity = f->parity;
	r->echo_ce = ecn_ce;
	r->echo_fresh = true;
	r->echo_arrive_ns = now_ns;
	if (ecn_ce && r->ce < UINT16_MAX)
		r->ce++;
}

static int drop(struct xp_core *core, enum xp_drop why)
{
	xp_drop(core, why);
	return why == XP_DROP_IMM_DUP || why == XP_DROP_IMM_DONE ? -EALREADY : -EINVAL;
}

/* A chunk for a slot with no live receive: a re-ACK if it is of the last one that completed. */
static int chunk_without_receive(struct xp_core *core, struct xp_conn *c, const struct xp_imm *f,
				 unsigned *news)
{
	const struct xp_slot_done *d = &c->rw.last[f->slot];

	if (d->outcome == XP_OUT_OK && d->n_chunks && f->chunk < d->n_chunks) {
		c->done_ack_pend |= xp_slot_bit(f->slot);
		*news = XP_NEWS_CTRL;
		return drop(core, XP_DROP_IMM_DONE);
	}
	return drop(core, XP_DROP_IMM_NO_SLOT);
}

/* The index, last flag and length rules; Return: 0 or the drop reason. */
static int check_chunk(const struct xp_rmsg *r, const struct xp_imm *f, uint32_t byte_len)
{
	uint32_t i = f->chunk;

	if (i > (uint32_t)r->cum + XP_WIN)
		return XP_DROP_IMM_BEYOND_WINDOW;
	if (chunk_seen(r, i))
		return XP_DROP_IMM_DUP;
	if (f->last ? (r->last != XP_NO_LAST && r->last != i) || highest_received(r) > (int)i
		    : r->last != XP_NO_LAST && i >= r->last)
		return XP_DROP_IMM_LAST_MISMATCH;
	if ((byte_len == 0 && !(i == 0 && f->last)) || byte_len > XP_CHUNK_BYTES_MAX ||
	    r->bytes + byte_len > r->cap)
		return XP_DROP_IMM_LEN;
	return 0;
}

int xp_recv_on_chunk(struct xp_core *core, struct xp_conn *c, const struct xp_imm *f,
		     uint32_t byte_len, bool ecn_ce, uint64_t now_ns, unsigned *news)
{
	struct xp_rmsg *r;
	int why;

	*news = 0;
	if (!xp_conn_live(c)) {
		if (!c->reset_end)
			return chunk_without_receive(core, c, f, news);
		c->ctl_pend |= XP_CTL_RESET;
		if (!c->reset_reason)
			c->reset_reason = XP_RESET_CLOSED;
		*news = XP_NEWS_CTRL;
		return drop(core, XP_DROP_IMM_CLOSED_CONN);
	}
	if (c->rmsg[f->slot] == XP_NONE)
		return chunk_without_receive(core, c, f, news);
	r = &core->rmsgs[c->rmsg[f->slot]];
	if (r->cts_state == XP_CTS_TO_SEND)
		return drop(core, XP_DROP_IMM_NO_SLOT); /* not advertised yet: a stale chunk */
	if (r->complete) {
		r->dup_seen = true;
		set_echo(r, f, ecn_ce, now_ns);
		c->ack_pend |= xp_slot_bit(r->seq);
		*news = XP_NEWS_CTRL;
		return drop(core, XP_DROP_IMM_DONE);
	}
	why = check_chunk(r, f, byte_len);
	if (why == XP_DROP_IMM_DUP) {
		r->dup_seen = true;
		set_echo(r, f, ecn_ce, now_ns);
		c->ack_pend |= xp_slot_bit(r->seq);
		*news = XP_NEWS_CTRL;
	}
	if (why)
		return drop(core, (enum xp_drop)why);
	mark_received(r, f->chunk);
	r->bytes += byte_len;
	if (f->last)
		r->last = f->chunk;
	set_echo(r, f, ecn_ce, now_ns);
	/* The first chunk after a CTS sent once: how long a CTS takes to bring data. */
	if (r->cts_state == XP_CTS_SENT && !r->cts_backoff)
		xp_rto_adv_sample(c, now_ns - r->cts_sent_ns);
	confirm_cts(c, r);
	c->ack_pend |= xp_slot_bit(r->seq);
	core->stats.chunks_received++;
	*news = XP_NEWS_PROGRESS | XP_NEWS_CTRL;
	if (r->last != XP_NO_LAST && r->cum == r->last + 1u) {
		r->complete = true;
		core->stats.msgs_received++;
		xp_complete_op(core, c, r->op, 0, r->bytes);
	}
	return 0;
}

bool xp_recv_aborted(const struct xp_conn *c, uint32_t seq)
{
	return xp_seqwin_ended(&c->rw, seq, XP_OUT_ABORTED);
}

static unsigned on_abort(struct xp_core *core, struct xp_conn *c, uint32_t seq, uint64_t now_ns)
{
	struct xp_rmsg *r = xp_rmsg_at(core, c, seq);

	if (xp_recv_aborted(c, seq)) { /* again: our ABORT_ACK was lost */
		c->abort_ack_pend |= xp_slot_bit(seq);
		return XP_NEWS_CTRL;
	}
	/* Only a receive that saw nothing: the sender aborts before its first chunk. */
	if (!r || r->complete || r->cum || r->sack) {
		xp_drop(core, XP_DROP_SEQ_BAD);
		return 0;
	}
	core->stats.msgs_aborted++;
	xp_complete_op(core, c, r->op, -EMSGSIZE, 0);
	release(core, c, r, 0, XP_OUT_ABORTED);
	c->abort_ack_pend |= xp_slot_bit(seq);
	return XP_NEWS_CTRL | XP_NEWS_PROGRESS | xp_recv_try_advertise(core, c, now_ns) |
	       XP_NEWS_FINISHED;
}

unsigned xp_recv_on_seq_record(struct xp_core *core, struct xp_conn *c, const struct xp_rec *rec,
			       uint64_t now_ns)
{
	uint32_t seq = rec->u.msg_seq;
	struct xp_rmsg *r = xp_rmsg_at(core, c, seq);
	unsigned news;

	switch (rec->type) {
	case XP_REC_ABORT:
		return on_abort(core, c, seq, now_ns);
	case XP_REC_CTS_ACK:
		if (!r || r->cts_state == XP_CTS_TO_SEND) {
			xp_drop(core, XP_DROP_SEQ_BAD);
			return 0;
		}
		news = r->cts_state == XP_CTS_SENT ? XP_NEWS_PROGRESS : 0;
		confirm_cts(c, r);
		return news;
	default: /* ACK_REQ */
		if (r && r->cts_state != XP_CTS_TO_SEND) {
			confirm_cts(c, r); /* the sender has started it */
			c->ack_pend |= xp_slot_bit(seq);
		} else if (xp_recv_done_ok(c, seq)) {
			c->done_ack_pend |= xp_slot_bit(seq);
		} else {
			xp_drop(core, XP_DROP_SEQ_BAD);
			return 0;
		}
		return XP_NEWS_CTRL;
	}
}

void xp_recv_fail_from(struct xp_core *core, struct xp_conn *c, uint32_t first_seq, int err)
{
	xp_opq_fail_from(core, c, &c->rq, &c->rw, first_seq, err, NULL);
	for (uint32_t s = 0; s < XP_MSG_SLOTS; s++) {
		struct xp_rmsg *r;

		if (c->rmsg[s] == XP_NONE)
			continue;
		r = &core->rmsgs[c->rmsg[s]];
		if (seq_diff(r->seq, first_seq) < 0)
			continue;
		if (r->complete) {
			/* Completed already; only its final ACK is lost with the connection. */
			release(core, c, r, (uint16_t)(r->last + 1), XP_OUT_OK);
			continue;
		}
		xp_complete_op(core, c, r->op, err, 0);
		release(core, c, r, 0, XP_OUT_FAILED);
	}
}

uint64_t xp_recv_cts_deadline(struct xp_core *core, const struct xp_conn *c)
{
	uint64_t d = 0;

	for (uint32_t bits = c->cts_timed; bits; bits &= bits - 1) {
		const struct xp_rmsg *r = &core->rmsgs[c->rmsg[__builtin_ctz(bits)]];

		if (!d || r->cts_deadline_ns < d)
			d = r->cts_deadline_ns;
	}
	return d;
}

unsigned xp_recv_on_timer(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	unsigned news = 0;

	for (uint32_t bits = c->cts_timed; bits; bits &= bits - 1) {
		struct xp_rmsg *r = &core->rmsgs[c->rmsg[__builtin_ctz(bits)]];

		if (now_ns < r->cts_deadline_ns)
			continue;
		/* Sent again by ack.c, which re-arms the deadline then. */
		r->cts_deadline_ns = UINT64_MAX;
		if (r->cts_backoff < 30)
			r->cts_backoff++;
		c->cts_pend |= xp_slot_bit(r->seq);
		news = XP_NEWS_CTRL;
	}
	return news;
}
