// SPDX-License-Identifier: MIT
/*
 * ack.c - the receiver's ACK records, and the batching of every control
 * record into packets, per peer, once per round.
 *
 * Each arriving chunk only marks its receive's ACK record dirty; the drain
 * at the end of a round writes the dirty records of all connections, so a
 * burst of chunks costs one record and many connections to one peer share
 * a packet. An ACK record carries the cumulative chunk, the 64-chunk SACK
 * bitmap after it, an echo of the transmission that dirtied it last (chunk
 * index, parity, CE), the receiver's hold time of that chunk (arrival to
 * this emission, in ns: its own queueing delay), the CE marks since the
 * previous record, and "duplicate seen" / "complete" flags.
 *
 * Up to XP_OPEN_PACKETS packets (one per peer) are open at once in a drain;
 * opening another flushes the oldest. A packet reserves one action and
 * ctrl_mtu bytes of the batch's ctrl_buf when it opens; a connection whose
 * records no longer fit goes back on the list for the next drain.
 *
 * Writing a record changes state at once: a "complete" ACK frees its
 * receive's slot (so the next receive's CTS goes in the same packet), a
 * FIN, RESET or ABORT arms its retransmission. So the drain calls into
 * conn.c, recv.c and send.c; only core.c's drain calls it.
 */
#include <string.h>

#include "xp_ack.h"
#include "xp_conn.h"
#include "xp_core_state.h"
#include "xp_recovery.h"
#include "xp_recv.h"
#include "xp_send.h"

#define XP_OPEN_PACKETS 4

struct open_pkt {
	uint32_t peer;
	uint32_t act;
	uint32_t buf_off;
	struct xp_wire_writer w;
};

struct batcher {
	struct xp_core *core;
	struct xp_batch *b;
	struct open_pkt open[XP_OPEN_PACKETS];
	uint32_t n_open;
};

/* The ACK record of receive @slot (or, @from_done, the "complete" one of its last receive). */
static void ack_fill(struct xp_core *core, struct xp_conn *c, uint32_t slot, bool from_done,
		     uint64_t now_ns, struct xp_rec *rec)
{
	struct xp_rec_ack *a = &rec->u.ack;

	memset(rec, 0, sizeof(*rec));
	rec->type = XP_REC_ACK;
	rec->conn = (uint16_t)c->peer_id;
	rec->nonce = c->peer_nonce;
	if (from_done) {
		a->msg_seq = c->rw.last[slot].seq;
		a->cum = c->rw.last[slot].n_chunks;
		a->complete = true;
		return;
	}
	{
		struct xp_rmsg *r = &core->rmsgs[c->rmsg[slot]];
		uint64_t hold = now_ns > r->echo_arrive_ns ? now_ns - r->echo_arrive_ns : 0;

		a->msg_seq = r->seq;
		a->cum = r->cum;
		a->sack = r->sack;
		a->complete = r->complete;
		a->echo_valid = r->echo_fresh;
		if (r->echo_fresh) {
			a->echo_chunk = r->echo_chunk;
			a->echo_parity = r->echo_parity;
			a->echo_ce = r->echo_ce;
			a->hold_ns = hold > UINT32_MAX ? UINT32_MAX : (uint32_t)hold;
		}
		a->ce = r->ce;
		a->dup_seen = r->dup_seen;
		r->ce = 0;
		r->dup_seen = false;
		r->echo_fresh = false;
	}
}

static void flush(struct batcher *bt, uint32_t k)
{
	struct open_pkt *p = &bt->open[k];
	struct xp_batch *b = bt->b;
	uint32_t len = xp_wire_finish(&p->w);
	struct xp_action *act = &b->acts[p->act];

	act->kind = XP_ACT_CTRL;
	act->u.ctrl.peer = p->peer;
	act->u.ctrl.len = len;
	act->u.ctrl.bytes = b->ctrl_buf + p->buf_off;
	/* Give back the unused tail of the reservation when it is the last one. */
	if (p->buf_off + bt->core->cfg.ctrl_mtu == b->ctrl_used)
		b->ctrl_used = p->buf_off + len;
	bt->core->stats.ctrl_packets_tx++;
	memmove(&bt->open[k], &bt->open[k + 1], (bt->n_open - k - 1) * sizeof(bt->open[0]));
	bt->n_open--;
}

static struct open_pkt *open_for(struct batcher *bt, uint32_t peer)
{
	struct xp_batch *b = bt->b;
	uint32_t mtu = bt->core->cfg.ctrl_mtu;
	struct open_pkt *p;

	for (uint32_t k = 0; k < bt->n_open; k++)
		if (bt->open[k].peer == peer)
			return &bt->open[k];
	if (bt->n_open == XP_OPEN_PACKETS)
		flush(bt, 0);
	if (b->n == b->cap || b->ctrl_cap - b->ctrl_used < mtu)
		return NULL;
	p = &bt->open[bt->n_open++];
	p->peer = peer;
	p->act = b->n++;
	b->acts[p->act].kind = XP_ACT_CTRL;
	b->acts[p->act].u.ctrl.len = 0;
	p->buf_off = b->ctrl_used;
	b->ctrl_used += mtu;
	xp_wire_begin(&p->w, b->ctrl_buf + p->buf_off, mtu);
	return p;
}

/* Append @rec to @c's peer's packet. Return: false when the batch has no room. */
static bool put(struct batcher *bt, const struct xp_conn *c, const struct xp_rec *rec)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		struct open_pkt *p = open_for(bt, c->ctrl_peer);

		if (!p)
			return false;
		if (xp_wire_put(&p->w, rec) == 0)
			return true;
		flush(bt, (uint32_t)(p - bt->open)); /* full: start another packet */
	}
	return false;
}

static void rec_head(struct xp_rec *rec, const struct xp_conn *c, uint8_t type)
{
	memset(rec, 0, sizeof(*rec));
	rec->type = type;
	rec->conn = (uint16_t)c->peer_id;
	rec->nonce = c->peer_nonce;
}

/* The connection-wide records (RESET_ACK, RESET, FIN_ACK, FIN, KEEPALIVE, KEEPALIVE_ACK). */
static bool emit_flag(struct batcher *bt, struct xp_conn *c, uint8_t flag, uint64_t now_ns)
{
	struct xp_rec rec;

	if (!(c->ctl_pend & flag))
		return true;
	switch (flag) {
	case XP_CTL_KEEPALIVE:
		rec_head(&rec, c, XP_REC_KEEPALIVE);
		break;
	case XP_CTL_KEEPALIVE_ACK:
		rec_head(&rec, c, XP_REC_KEEPALIVE_ACK);
		break;
	case XP_CTL_RESET_ACK:
		rec_head(&rec, c, XP_REC_RESET_ACK);
		break;
	case XP_CTL_RESET:
		rec_head(&rec, c, XP_REC_RESET);
		rec.u.reason = c->reset_reason ? c->reset_reason : XP_RESET_CLOSED;
		break;
	case XP_CTL_FIN_ACK:
		rec_head(&rec, c, XP_REC_FIN_ACK);
		break;
	default:
		rec_head(&rec, c, XP_REC_FIN);
		rec.u.fin.sends_total = c->send_posted;
		rec.u.fin.recvs_total = c->recv_posted;
		break;
	}
	if (!put(bt, c, &rec))
		return false;
	c->ctl_pend &= (uint8_t)~flag;
	if (flag == XP_CTL_FIN)
		c->fin_sent = true;
	if (flag == XP_CTL_FIN || (flag == XP_CTL_RESET && !c->reset_acked))
		xp_conn_on_close_record_sent(bt->core, c, now_ns);
	return true;
}

/* The seq a per-slot sender record names, or false if it names nothing now. */
static bool sender_seq(struct xp_core *core, struct xp_conn *c, uint8_t type, uint32_t s,
		       uint32_t *seq)
{
	uint32_t m = c->smsg[s];

	switch (type) {
	case XP_REC_ABORT:
		*seq = c->sw.last[s].seq;
		return c->sw.last[s].outcome == XP_OUT_ABORTED;
	case XP_REC_ABORT_ACK:
		*seq = c->rw.last[s].seq;
		return c->rw.last[s].outcome == XP_OUT_ABORTED;
	case XP_REC_CTS_ACK:
		if (c->cts_held & (1u << s)) {
			*seq = c->cts[s].seq;
			return true;
		}
		break;
	default: /* ACK_REQ */
		break;
	}
	if (m == XP_NONE)
		return false;
	*seq = core->smsgs[m].seq;
	return true;
}

static bool emit_seq_records(struct batcher *bt, struct xp_conn *c, uint16_t *pend, uint8_t type)
{
	while (*pend) {
		uint32_t s = (uint32_t)__builtin_ctz(*pend);
		struct xp_rec rec;
		uint32_t seq;

		if (sender_seq(bt->core, c, type, s, &seq)) {
			rec_head(&rec, c, type);
			rec.u.msg_seq = seq;
			if (!put(bt, c, &rec))
				return false;
		}
		*pend &= (uint16_t)~(1u << s);
	}
	return true;
}

static bool emit_acks(struct batcher *bt, struct xp_conn *c, uint64_t now_ns)
{
	struct xp_core *core = bt->core;
	struct xp_rec rec;

	while (c->done_ack_pend) {
		uint32_t s = (uint32_t)__builtin_ctz(c->done_ack_pend);

		ack_fill(core, c, s, true, now_ns, &rec);
		if (!put(bt, c, &rec))
			return false;
		c->done_ack_pend &= (uint16_t)~(1u << s);
		core->stats.ack_records_tx++;
	}
	while (c->ack_pend) {
		uint32_t s = (uint32_t)__builtin_ctz(c->ack_pend);
		struct xp_rec_ack keep;
		struct xp_rmsg *r;

		if (c->rmsg[s] == XP_NONE) {
			c->ack_pend &= (uint16_t)~(1u << s);
			continue;
		}
		r = &core->rmsgs[c->rmsg[s]];
		keep.ce = r->ce;
		keep.dup_seen = r->dup_seen;
		keep.echo_valid = r->echo_fresh;
		ack_fill(core, c, s, false, now_ns, &rec);
		if (!put(bt, c, &rec)) {
			/* Not sent: put back what filling consumed. */
			r->ce = keep.ce;
			r->dup_seen = keep.dup_seen;
			r->echo_fresh = keep.echo_valid;
			return false;
		}
		c->ack_pend &= (uint16_t)~(1u << s);
		core->stats.ack_records_tx++;
		if (r->complete)
			xp_conn_act(core, c, xp_recv_release(core, c, s, now_ns), now_ns);
	}
	return true;
}

static bool emit_cts(struct batcher *bt, struct xp_conn *c, uint64_t now_ns)
{
	struct xp_core *core = bt->core;

	while (c->cts_pend) {
		uint32_t s = (uint32_t)__builtin_ctz(c->cts_pend);
		struct xp_rmsg *r;
		struct xp_rec rec;

		if (c->rmsg[s] == XP_NONE) {
			c->cts_pend &= (uint16_t)~(1u << s);
			continue;
		}
		r = &core->rmsgs[c->rmsg[s]];
		rec_head(&rec, c, XP_REC_CTS);
		rec.u.cts.msg_seq = r->seq;
		rec.u.cts.rkey = r->rkey;
		rec.u.cts.raddr = r->addr;
		rec.u.cts.cap = r->cap;
		if (!put(bt, c, &rec))
			return false;
		c->cts_pend &= (uint16_t)~(1u << s);
		if (r->cts_state != XP_CTS_CONFIRMED) {
			r->cts_state = XP_CTS_SENT;
			c->cts_timed |= (uint16_t)(1u << s);
			if (!r->cts_backoff)
				r->cts_sent_ns = now_ns;
			r->cts_deadline_ns = now_ns + xp_rto_ctl_ns(core, c, r->cts_backoff);
		}
	}
	return true;
}

static bool emit_aborts(struct batcher *bt, struct xp_conn *c, uint64_t now_ns)
{
	if (!emit_seq_records(bt, c, &c->abort_pend, XP_REC_ABORT))
		return false;
	xp_send_on_abort_sent(bt->core, c, now_ns);
	return true;
}

/* Everything @c has to say. Return: false when the batch filled up first. */
static bool emit_conn(struct batcher *bt, struct xp_conn *c, uint64_t now_ns)
{
	return emit_flag(bt, c, XP_CTL_RESET_ACK, now_ns) &&
	       emit_flag(bt, c, XP_CTL_RESET, now_ns) &&
	       emit_flag(bt, c, XP_CTL_FIN_ACK, now_ns) &&
	       emit_seq_records(bt, c, &c->cts_ack_pend, XP_REC_CTS_ACK) &&
	       emit_aborts(bt, c, now_ns) &&
	       emit_seq_records(bt, c, &c->abort_ack_pend, XP_REC_ABORT_ACK) &&
	       emit_acks(bt, c, now_ns) && emit_cts(bt, c, now_ns) &&
	       emit_seq_records(bt, c, &c->ack_req_pend, XP_REC_ACK_REQ) &&
	       emit_flag(bt, c, XP_CTL_KEEPALIVE, now_ns) &&
	       emit_flag(bt, c, XP_CTL_KEEPALIVE_ACK, now_ns) &&
	       emit_flag(bt, c, XP_CTL_FIN, now_ns);
}

void xp_ctrl_drain(struct xp_core *core, uint64_t now_ns, struct xp_batch *batch)
{
	struct batcher bt = { .core = core, .b = batch };
	uint32_t id;

	while ((id = xp_idlist_pop(&core->ctrl)) != XP_NONE) {
		struct xp_conn *c = &core->conns[id];

		if (c->state == XP_CS_FREE || !c->bound)
			continue;
		if (!emit_conn(&bt, c, now_ns)) {
			xp_idlist_push(&core->ctrl, id);
			break;
		}
		xp_conn_rearm(core, c, now_ns);
	}
	while (bt.n_open)
		flush(&bt, bt.n_open - 1);
}
