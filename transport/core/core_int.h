/* SPDX-License-Identifier: MIT */
/*
 * core_int.h - the core's state, shared by its files (conn, send, recv, ack,
 * recovery, path, core). Nothing outside transport/core includes this.
 *
 * Sequence numbers are u32 and compared modulo 2^32 (seq_diff()). A message
 * slot s holds message k with k mod 16 == s. Each direction of a connection
 * keeps a sequence window (struct xp_seqwin, sends sw and receives rw): the
 * oldest message not finished, and per slot the last one that ended there.
 */
#ifndef XP_CORE_INT_H
#define XP_CORE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "xp_cc.h"
#include "core.h"
#include "imm.h"
#include "pacer.h"
#include "pool.h"
#include "rtt.h"
#include "timerq.h"
#include "wire.h"

#define XP_WIN 64 /* chunks a message may have beyond its cumulative ACK: the SACK bitmap */
#define XP_SLOT_MASK (XP_MSG_SLOTS - 1)
#define XP_CTS_WINDOW (2 * XP_MSG_SLOTS) /* CTS seqs a sender accepts beyond its oldest message */
#define XP_NO_LAST 0xffffu
#define XP_MAX_REO_MULT 16  /* RACK reo_wnd grows to at most 16 x min_RTT/4 (then SRTT caps it) */
#define XP_REO_PERSIST 16   /* recoveries a grown reo_wnd lasts (RFC 8985 6.2) */
#define XP_CHUNKS_PER_CWND 4 /* a chunk is at most this fraction of the window */

static inline int32_t seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

enum xp_conn_state {
	XP_CS_FREE = 0,
	XP_CS_OPEN,       /* created (bound or not) */
	XP_CS_CLOSING,    /* graceful close under way */
	XP_CS_DEAD,       /* failed (reset, timeout, I/O); waits for xp_conn_close() */
	XP_CS_QUARANTINE, /* closed; the id is not reused until quarantine_until_ns */
};

enum {
	XP_CH_INFLIGHT = 1, /* counted in bytes in flight */
	XP_CH_LOST = 2,     /* declared lost, waiting to be retransmitted */
	XP_CH_ACKED = 4,
	XP_CH_SAMPLED = 8,  /* its latest transmission gave an RTT sample already */
	XP_CH_SPURIOUS = 16, /* an earlier transmission arrived: the latest one was needless */
};

struct xp_path {
	uint32_t handle;
	uint16_t ev;
	uint64_t rtt_ewma_ns; /* 0: no sample yet */
};

/* One chunk of a message being sent; ring[index mod XP_WIN] of its message. */
struct xp_chunk {
	uint64_t off;
	uint64_t sent_ns;  /* latest transmission */
	uint64_t tx_seq;   /* connection-wide order of the latest transmission */
	uint32_t len;
	uint8_t flags;
	uint8_t tx_count;  /* transmissions, saturating */
	uint8_t path;      /* path index of the latest transmission */
};

/* A message being sent: started once its CTS arrived. */
struct xp_smsg {
	uint32_t conn;
	uint32_t seq;
	uint32_t op;
	uint64_t laddr;
	uint64_t len;
	uint32_t lkey;
	uint32_t rkey;
	uint64_t raddr;
	uint64_t cut_bytes;  /* bytes already cut into chunks */
	uint32_t min_chunk;  /* smallest non-last chunk: max(min_chunk_bytes, ceil(len/4096)) */
	uint16_t n_cut;      /* chunks cut (and sent at least once) */
	uint16_t cum;        /* chunks acknowledged in order */
	uint16_t n_lost;     /* chunks marked lost, not yet retransmitted */
	bool last_cut;
	struct xp_chunk ring[XP_WIN];
};

enum xp_cts_state {
	XP_CTS_TO_SEND = 0, /* not sent yet */
	XP_CTS_SENT,        /* sent, no sign from the sender yet: retransmitted on a timer */
	XP_CTS_CONFIRMED,   /* a chunk, CTS_ACK or ABORT came back */
};

/* A receive whose CTS went (or is about to go) to the sender. */
struct xp_rmsg {
	uint32_t conn;
	uint32_t seq;
	uint32_t op;
	uint64_t addr;
	uint64_t cap;
	uint32_t rkey;
	uint64_t bytes;
	uint64_t sack;       /* bit j: chunk cum + 1 + j received */
	uint16_t cum;        /* chunks received in order = index of the first missing one */
	uint16_t last;       /* index of the last chunk, XP_NO_LAST until seen */
	/* the next ACK record */
	uint16_t echo_chunk;
	bool echo_parity;
	bool echo_ce;
	bool echo_fresh;     /* a chunk arrived since the last ACK record */
	bool dup_seen;
	bool complete;       /* completion delivered; released after its ACK goes */
	uint16_t ce;         /* CE-marked chunks since the last ACK record */
	uint64_t echo_arrive_ns;
	/* CTS */
	uint8_t cts_state;
	uint8_t cts_backoff;
	uint64_t cts_deadline_ns;
};

enum xp_op_kind {
	XP_OP_SEND = 0,
	XP_OP_RECV = 1,
};

/* A posted operation, from post to its completion's emission. */
struct xp_op {
	uint64_t addr;
	uint64_t len; /* send length or receive capacity */
	uint64_t cookie;
	uint64_t bytes;
	uint32_t key;
	uint32_t seq;
	uint32_t conn;
	uint32_t next; /* queue link, then completion-FIFO link */
	int32_t status;
	uint8_t kind;
};

/* A CTS the sender holds until its message starts (held while its bit is in cts_held). */
struct xp_cts {
	uint64_t raddr;
	uint64_t cap;
	uint32_t rkey;
	uint32_t seq;
};

enum xp_outcome {
	XP_OUT_OK = 0,
	XP_OUT_ABORTED, /* too long for its receive */
	XP_OUT_FAILED,  /* any other error */
};

/* The last message that finished in a slot. */
struct xp_slot_done {
	uint32_t seq;
	uint16_t n_chunks;
	uint8_t outcome;
};

/*
 * One direction's message sequence (sends, or receives), the rule both
 * share. Messages finish out of order, but every message not yet finished
 * lies in [below, below + XP_CTS_WINDOW): a message starts only once the one
 * 16 before it finished, and only with a CTS inside that window. So "oldest
 * not finished" is @below plus a bitmap of finished seqs after it. Per slot
 * the window also keeps the last message that completed or was aborted in
 * it (the peer may still ask about those); starting at s - 16, so "slot free
 * for k" is: nothing active there and the last one was k - 16.
 */
struct xp_seqwin {
	uint32_t below;    /* oldest message not finished */
	uint64_t finished; /* bit i: below + i finished */
	struct xp_slot_done last[XP_MSG_SLOTS];
};

static inline void xp_seqwin_init(struct xp_seqwin *w)
{
	w->below = 0;
	w->finished = 0;
	for (uint32_t s = 0; s < XP_MSG_SLOTS; s++)
		w->last[s] = (struct xp_slot_done){ .seq = s - XP_MSG_SLOTS };
}

/* Return: the slot of @seq holds nothing (@active[slot] empty) and its last message was seq - 16. */
static inline bool xp_seqwin_slot_free(const struct xp_seqwin *w, const uint32_t *active,
				       uint32_t seq)
{
	uint32_t s = seq & XP_SLOT_MASK;

	return active[s] == XP_NONE && w->last[s].seq == seq - XP_MSG_SLOTS;
}

/* Return: message @seq is over (completed, aborted or failed), or older than every open one. */
static inline bool xp_seqwin_finished(const struct xp_seqwin *w, uint32_t seq)
{
	uint32_t d = seq - w->below;

	if ((int32_t)d < 0)
		return true;
	return d < 64 && ((w->finished >> d) & 1);
}

/* Return: the slot of @seq remembers it, ended with @outcome. */
static inline bool xp_seqwin_ended(const struct xp_seqwin *w, uint32_t seq, uint8_t outcome)
{
	const struct xp_slot_done *d = &w->last[seq & XP_SLOT_MASK];

	return d->seq == seq && d->outcome == outcome;
}

/*
 * Message @seq is over. A completed or aborted one becomes its slot's last;
 * a failed one is only counted finished, since nothing can follow it on the
 * connection. Seqs outside the window (sends failed wholesale) only go.
 */
static inline void xp_seqwin_finish(struct xp_seqwin *w, uint32_t seq, uint16_t n_chunks,
				    uint8_t outcome)
{
	uint32_t d = seq - w->below;

	if (outcome != XP_OUT_FAILED)
		w->last[seq & XP_SLOT_MASK] = (struct xp_slot_done){ seq, n_chunks, outcome };
	if (d >= 64)
		return;
	w->finished |= 1ull << d;
	while (w->finished & 1) {
		w->finished >>= 1;
		w->below++;
	}
}

static inline uint16_t xp_slot_bit(uint32_t seq)
{
	return (uint16_t)(1u << (seq & XP_SLOT_MASK));
}

/* Control records a connection has to send (bit per slot where per message). */
enum {
	XP_CTL_FIN = 1,
	XP_CTL_FIN_ACK = 2,
	XP_CTL_RESET = 4,
	XP_CTL_RESET_ACK = 8,
};

struct xp_idq {
	uint32_t head;
	uint32_t tail;
	uint32_t len;
};

struct xp_conn {
	uint32_t id;
	uint8_t state;
	bool bound;
	bool rc_mode;
	bool reset_end;      /* ended by a reset: answer the peer with RESET */
	uint32_t nonce;
	uint32_t peer_id;
	uint32_t peer_nonce;
	uint32_t ctrl_peer;
	uint32_t n_paths;
	struct xp_path *paths;
	int32_t err;         /* DEAD: what every later post returns */
	int32_t close_status;

	/* CC */
	struct xp_cc_binding cc;
	struct xp_cc_info cc_info;
	uint32_t cc_flow;
	uint64_t flow_seed;
	uint64_t cc_tick_ns;  /* next tick, 0: none */

	/* sender */
	uint32_t send_posted;     /* next send seq */
	struct xp_seqwin sw;      /* sends */
	struct xp_idq sq;         /* queued sends not started, by seq (op links) */
	uint32_t smsg[XP_MSG_SLOTS];
	uint16_t smsg_mask;       /* slots with a running message */
	struct xp_cts cts[XP_MSG_SLOTS];
	uint16_t cts_held;        /* slots whose cts[] is held */
	uint32_t n_smsgs;
	uint64_t backlog_bytes;   /* posted, not yet cut into chunks */
	uint64_t in_flight_bytes;
	uint32_t in_flight_chunks;
	uint32_t lost_chunks;
	uint64_t tx_seq;
	uint64_t pace_next_ns;
	uint64_t chunks_retx;     /* xp_conn_info() */
	uint64_t rto_fires;
	uint64_t spurious_retx;

	/* loss recovery (recovery.c) */
	struct xp_rtt rtt;
	uint64_t rack_tx_seq;     /* newest transmission known delivered */
	uint64_t rack_rtt_ns;
	uint64_t reo_deadline_ns;
	uint64_t last_dsack_ns;
	uint8_t reo_mult;
	uint8_t reo_persist;
	uint8_t rto_backoff;
	bool tlp_out;             /* a probe is outstanding */
	bool probe_pending;       /* send a probe on the next turn */
	bool rack_dirty;          /* delivery news since the last loss detection */
	uint64_t rto_deadline_ns;
	uint64_t tlp_deadline_ns;
	uint64_t max_hold_ns;

	/* receiver */
	uint32_t recv_posted;
	struct xp_seqwin rw;      /* receives */
	struct xp_idq rq;
	uint32_t rmsg[XP_MSG_SLOTS];
	uint32_t n_rmsgs;
	uint32_t cts_unconfirmed;

	/* operations not yet completed (queued or active, both directions) */
	uint32_t ops_open;

	/* control records to send */
	uint16_t ack_pend;      /* ACK of rmsg[s] */
	uint16_t done_ack_pend; /* "complete" ACK of rw.last[s] */
	uint16_t cts_pend;
	uint16_t cts_ack_pend;
	uint16_t abort_pend;    /* ABORT of sw.last[s].seq */
	uint16_t abort_unacked; /* ABORTs sent and not acknowledged yet (retransmitted) */
	uint16_t abort_ack_pend;/* ABORT_ACK of rw.last[s].seq */
	uint8_t abort_backoff;
	uint64_t abort_rtx_ns;  /* ABORT retransmission, 0: none */
	uint16_t ack_req_pend;  /* ACK_REQ of smsg[s] */
	uint8_t ctl_pend;       /* XP_CTL_* */
	uint8_t reset_reason;

	/* close */
	bool fin_sent;
	bool fin_acked;
	bool reset_acked;
	bool peer_fin;
	uint32_t peer_sends_total;
	uint32_t peer_recvs_total;
	uint8_t close_backoff;
	uint64_t close_rtx_ns;  /* FIN or RESET retransmission, 0: none */
	uint64_t quarantine_until_ns;
	bool close_comp_pending;

	/* no-progress timeout */
	uint64_t no_progress_ns;
	uint64_t last_progress_ns;
	bool was_owed;

	/* intrusive links */
	uint32_t comp_next;
};

/* A lazily-unlinked FIFO of connection ids (ready, ctrl, waiting for a pool). */
struct xp_idlist {
	uint32_t head;
	uint32_t tail;
	uint32_t *next;
	uint8_t *on;
};

#define XP_COMP_CONN_TAG 0x80000000u

struct xp_core {
	struct xp_core_config cfg;
	struct xp_rto_params rto;
	uint64_t rng;
	uint64_t max_msg_bytes;

	struct xp_conn *conns;
	struct xp_path *paths;
	uint32_t *free_ids;      /* FIFO ring of ids out of quarantine */
	uint32_t free_head;
	uint32_t free_len;
	uint32_t conns_open;
	uint32_t conns_quarantined;

	struct xp_smsg *smsgs;
	struct xp_pool smsg_pool;
	struct xp_rmsg *rmsgs;
	struct xp_pool rmsg_pool;
	struct xp_op *ops;
	struct xp_pool op_pool;

	struct xp_timerq timers;
	struct xp_wheel wheel;
	uint32_t *scratch;       /* ids expired off the wheel */

	struct xp_idlist ready;  /* may have chunks to send */
	struct xp_idlist ctrl;   /* have control records to send */
	struct xp_idlist wait_smsg; /* a queued send waits for a sender message entry */
	struct xp_idlist wait_rmsg; /* a queued receive waits for a receive entry */

	uint32_t comp_head;      /* completion FIFO of tagged items */
	uint32_t comp_tail;
	uint32_t comp_len;

	uint64_t in_flight_bytes;
	uint32_t in_flight_chunks;
	struct xp_core_stats stats;
	size_t bytes_total;
};

/*
 * core.c
 */

/**
 * xp_rand() - draw from the core's generator.
 *
 * Return: the core's next pseudo-random word (splitmix64 of the seed and the draws
 * so far).
 */
uint64_t xp_rand(struct xp_core *core);

/**
 * xp_idlist_push() - append connection @id to work list @l, unless it is on it.
 * @l: the list (ready, ctrl, wait_smsg or wait_rmsg).
 * @id: the connection; its state is checked by whoever pops it.
 */
void xp_idlist_push(struct xp_idlist *l, uint32_t id);

/**
 * xp_idlist_pop() - take the oldest id off a work list.
 *
 * Return: the oldest id on @l, taken off it, or XP_NONE.
 */
uint32_t xp_idlist_pop(struct xp_idlist *l);

/**
 * xp_complete_op() - operation @op of @c is over: queue its completion.
 * @core: the core.
 * @c: its connection; its open-operation count drops.
 * @op: the operation's pool index; freed when the completion is drained.
 * @status: 0 or -errno.
 * @bytes: bytes sent or received.
 */
void xp_complete_op(struct xp_core *core, struct xp_conn *c, uint32_t op, int status,
		    uint64_t bytes);

/**
 * xp_complete_close() - queue @c's XP_COMP_CLOSE, after every completion queued before.
 * @core: the core.
 * @c: the connection, now quarantined; its id is not freed before this is drained.
 * @status: the close's status.
 */
void xp_complete_close(struct xp_core *core, struct xp_conn *c, int status);

/**
 * xp_drop() - count one input dropped for @why.
 */
void xp_drop(struct xp_core *core, enum xp_drop why);

/**
 * xp_op_post() - a new operation of @c, queued on @q: the part of posting a
 * send or a receive that both share.
 * @core: the core.
 * @c: the connection; its open-operation count grows.
 * @q: its send or receive queue.
 * @kind: XP_OP_SEND or XP_OP_RECV.
 * @buf: the buffer.
 * @cookie: the caller's.
 * @seq: the operation's message sequence number.
 *
 * Return: 0, -EAGAIN (queue or operation pool full).
 */
int xp_op_post(struct xp_core *core, struct xp_conn *c, struct xp_idq *q, uint8_t kind,
	       const struct xp_buf *buf, uint64_t cookie, uint32_t seq);

/**
 * xp_opq_fail_from() - fail every operation queued on @q (not yet started or
 * advertised) with seq >= @first_seq: each completes with @err and counts as
 * finished in @w. The rule the send and receive queues share.
 * @core: the core.
 * @c: the connection.
 * @q: its send or receive queue.
 * @w: the direction's sequence window.
 * @first_seq: the first seq to fail.
 * @err: the status.
 * @each: called on each operation before it completes, or NULL.
 */
void xp_opq_fail_from(struct xp_core *core, struct xp_conn *c, struct xp_idq *q,
		      struct xp_seqwin *w, uint32_t first_seq, int err,
		      void (*each)(struct xp_conn *c, const struct xp_op *op));

/**
 * xp_opq_append() - append operation @op to queue @q (posted, not yet started or advertised).
 */
void xp_opq_append(struct xp_core *core, struct xp_idq *q, uint32_t op);

/**
 * xp_opq_unlink() - unlink @op from @q; @prev is its predecessor there, or XP_NONE at the head.
 */
void xp_opq_unlink(struct xp_core *core, struct xp_idq *q, uint32_t prev, uint32_t op);

/**
 * xp_cc_read() - read @c's controls from its CC binding into @ctl.
 */
void xp_cc_read(struct xp_core *core, struct xp_conn *c, struct xp_cc_ctl *ctl);

/**
 * xp_smsg_at() - find a running message.
 *
 * Return: @c's running message @seq, or NULL.
 */
static inline struct xp_smsg *xp_smsg_at(struct xp_core *core, struct xp_conn *c, uint32_t seq)
{
	uint32_t i = c->smsg[seq & XP_SLOT_MASK];

	return i != XP_NONE && core->smsgs[i].seq == seq ? &core->smsgs[i] : NULL;
}

/**
 * xp_rmsg_at() - find an advertised receive.
 *
 * Return: @c's advertised receive @seq, or NULL.
 */
static inline struct xp_rmsg *xp_rmsg_at(struct xp_core *core, struct xp_conn *c, uint32_t seq)
{
	uint32_t i = c->rmsg[seq & XP_SLOT_MASK];

	return i != XP_NONE && core->rmsgs[i].seq == seq ? &core->rmsgs[i] : NULL;
}

/**
 * xp_smsgs() - @c's running messages, oldest first.
 * @core: the core.
 * @c: the connection.
 * @out: room for XP_MSG_SLOTS.
 *
 * By slot from the window's start, which is seq order except that a message
 * 16 or more past the oldest unfinished one comes among the first (it runs
 * only because the one 16 before it finished, so no older message shares
 * its slot). Cost: one step per running message, not per window seq.
 *
 * Return: how many.
 */
static inline uint32_t xp_smsgs(struct xp_core *core, const struct xp_conn *c,
				struct xp_smsg **out)
{
	uint32_t rot = c->sw.below & XP_SLOT_MASK, n = 0;
	uint32_t mask = ((uint32_t)c->smsg_mask >> rot | (uint32_t)c->smsg_mask << (XP_MSG_SLOTS - rot)) &
			0xffffu;

	while (mask) {
		uint32_t j = (uint32_t)__builtin_ctz(mask);

		mask &= mask - 1;
		out[n++] = &core->smsgs[c->smsg[(rot + j) & XP_SLOT_MASK]];
	}
	return n;
}

/**
 * xp_inflight_add() - count @ch in flight, for its connection and the core. The one place it is
 * added.
 */
static inline void xp_inflight_add(struct xp_core *core, struct xp_conn *c, struct xp_chunk *ch)
{
	ch->flags |= XP_CH_INFLIGHT;
	c->in_flight_bytes += ch->len;
	c->in_flight_chunks++;
	core->in_flight_bytes += ch->len;
	core->in_flight_chunks++;
}

/**
 * xp_inflight_sub() - take @ch, which is in flight, out of the counts. The one place it is
 * subtracted.
 */
static inline void xp_inflight_sub(struct xp_core *core, struct xp_conn *c, struct xp_chunk *ch)
{
	ch->flags &= (uint8_t)~XP_CH_INFLIGHT;
	c->in_flight_bytes -= ch->len;
	c->in_flight_chunks--;
	core->in_flight_bytes -= ch->len;
	core->in_flight_chunks--;
}

/*
 * conn.c
 */

/**
 * xp_conn_get() - look a connection up.
 *
 * Return: connection @id if it exists (any state but FREE), else NULL.
 */
struct xp_conn *xp_conn_get(struct xp_core *core, uint32_t id);

/**
 * xp_conn_for_record() - the connection a decoded record names, if it may.
 * @core: the core.
 * @rec: the record.
 * @peer: the control handle it arrived from.
 * @why: the reason when there is none: unknown id, wrong nonce, wrong peer
 *       (checked once the connection is bound).
 *
 * Return: the connection, or NULL.
 */
struct xp_conn *xp_conn_for_record(struct xp_core *core, const struct xp_rec *rec,
				   uint32_t peer, enum xp_drop *why);

/**
 * xp_conn_on_record() - apply one record to its connection: live ones go to
 * the sender (ACK, CTS, ABORT_ACK), the receiver (CTS_ACK, ABORT, ACK_REQ) or
 * the lifecycle (FIN, FIN_ACK, RESET); dead and quarantined ones answer
 * what they can (FIN_ACK, "complete", ABORT_ACK, RESET).
 * @core: the core.
 * @c: the connection xp_conn_for_record() returned.
 * @rec: the record.
 * @now_ns: the time.
 */
void xp_conn_on_record(struct xp_core *core, struct xp_conn *c, const struct xp_rec *rec,
		       uint64_t now_ns);

/**
 * xp_conn_fail() - @c failed: every operation completes with @err, and it
 * becomes DEAD (or, if it was closing, closed).
 * @core: the core.
 * @c: a live connection.
 * @err: -ECONNRESET, -ETIMEDOUT or -EIO.
 * @reset_reason: the RESET to send the peer (enum xp_reset_reason), 0 for none.
 * @now_ns: the time.
 */
void xp_conn_fail(struct xp_core *core, struct xp_conn *c, int err, unsigned reset_reason,
		  uint64_t now_ns);

/**
 * xp_conn_check_closed() - if @c is closing gracefully and nothing is left to wait for, close
 * it (quarantine).
 */
void xp_conn_check_closed(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_conn_rearm() - recompute @c's earliest deadline and (re)arm its timer.
 * Call after anything that may have moved one; it also starts the
 * no-progress clock when something becomes owed.
 * @core: the core.
 * @c: the connection.
 * @now_ns: the time.
 */
void xp_conn_rearm(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_conn_on_timer() - run whichever of @c's timers are due at @now_ns, then rearm.
 */
void xp_conn_on_timer(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_conn_progress() - something moved forward on @c (data acknowledged or accepted, a control
 * exchange).
 */
void xp_conn_progress(struct xp_conn *c, uint64_t now_ns);

/**
 * xp_conn_want_ctrl() - @c has control records to send: put it on the control work list.
 */
void xp_conn_want_ctrl(struct xp_core *core, struct xp_conn *c);

/**
 * xp_conn_want_send() - @c may have chunks to send: put it on the ready list if it is live,
 * bound and sending.
 */
void xp_conn_want_send(struct xp_core *core, struct xp_conn *c);

/**
 * xp_conn_on_close_record_sent() - A FIN or RESET of @c went out: arm its retransmission if it
 * is not armed.
 */
void xp_conn_on_close_record_sent(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_conn_post_check() - may the connection take new operations.
 *
 * Return: 0 if @c accepts new operations, else what a post returns
 * (-ESHUTDOWN or its error).
 */
int xp_conn_post_check(const struct xp_conn *c);

/**
 * xp_conn_live() - is the connection open or closing.
 *
 * Return: @c is OPEN or CLOSING.
 */
bool xp_conn_live(const struct xp_conn *c);

/*
 * send.c
 */

/**
 * xp_send_on_cts() - the peer advertised its receive @cts->msg_seq: keep the
 * CTS and start the message if it can; answer a repeated CTS (CTS_ACK, or
 * ABORT again for an aborted message); drop one outside the window.
 * @core: the core.
 * @c: a live connection.
 * @cts: the record's body.
 * @now_ns: the time.
 */
void xp_send_on_cts(struct xp_core *core, struct xp_conn *c, const struct xp_rec_cts *cts,
		    uint64_t now_ns);

/**
 * xp_send_on_ack() - apply an ACK record: check it names only chunks sent,
 * acknowledge chunks, take the RTT sample (Karn), feed RACK and the CC,
 * finish the message when all of it is acknowledged.
 * @core: the core.
 * @c: a live connection.
 * @ack: the record's body.
 * @now_ns: the time.
 */
void xp_send_on_ack(struct xp_core *core, struct xp_conn *c, const struct xp_rec_ack *ack,
		    uint64_t now_ns);

/**
 * xp_send_try_start() - start every queued send of @c that has its CTS and a free slot (or
 * abort it if too long).
 */
void xp_send_try_start(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_send_push() - let @c send up to burst_chunks chunks into @batch, under its
 * budget and pacing: lost chunks first, then new ones, or a TLP probe.
 * @core: the core.
 * @c: the connection.
 * @now_ns: the time.
 * @batch: where the writes go.
 *
 * Return: true if @c has more it could send now (keep it on the ready list).
 */
bool xp_send_push(struct xp_core *core, struct xp_conn *c, uint64_t now_ns,
		  struct xp_batch *batch);

/**
 * xp_send_fail_from() - fail every send of @c with seq >= @first_seq (queued ones first) with
 * @err.
 */
void xp_send_fail_from(struct xp_core *core, struct xp_conn *c, uint32_t first_seq, int err);

/**
 * xp_send_busy() - does the connection have sends.
 *
 * Return: @c has sends running or queued.
 */
bool xp_send_busy(const struct xp_conn *c);

/**
 * xp_send_on_abort_ack() - the receiver saw our ABORT of @seq: stop retransmitting it. Drops
 * (seq_bad) a stray one.
 */
void xp_send_on_abort_ack(struct xp_core *core, struct xp_conn *c, uint32_t seq,
			  uint64_t now_ns);

/**
 * xp_send_on_abort_sent() - ABORTs of @c went out: arm their retransmission while any is
 * unacknowledged.
 */
void xp_send_on_abort_sent(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_send_on_timer() - @c's sender timers: ABORT retransmission when due.
 */
void xp_send_on_timer(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/*
 * recv.c
 */

/**
 * xp_recv_on_chunk() - a chunk was placed: check its immediate and length
 * against the receive it names, record it, complete the receive when whole.
 * @core: the core.
 * @imm: the immediate, host order.
 * @byte_len: bytes placed.
 * @path: the datapath handle it arrived on; must be one of the connection's.
 * @ecn_ce: it arrived CE-marked.
 * @now_ns: the time.
 *
 * Return: 0 if accepted, -EALREADY for a duplicate (re-ACKed), -EINVAL if dropped.
 */
int xp_recv_on_chunk(struct xp_core *core, uint32_t imm, uint32_t byte_len, uint32_t path,
		     bool ecn_ce, uint64_t now_ns);

/**
 * xp_recv_on_seq_record() - a sender's record about one of @c's receives:
 * CTS_ACK (stop retransmitting the CTS), ABORT (complete it with -EMSGSIZE,
 * answer ABORT_ACK), ACK_REQ (send its ACK record, or "complete" for one
 * that finished). Drops (seq_bad) one naming no such receive.
 * @core: the core.
 * @c: a live connection.
 * @rec: the record.
 * @now_ns: the time.
 */
void xp_recv_on_seq_record(struct xp_core *core, struct xp_conn *c, const struct xp_rec *rec,
			   uint64_t now_ns);

/**
 * xp_recv_try_advertise() - advertise (CTS) every queued receive of @c whose slot is free,
 * pools permitting.
 */
void xp_recv_try_advertise(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_recv_release() - the "complete" ACK of the receive in @slot went out: free the slot,
 * advertise the next.
 */
void xp_recv_release(struct xp_core *core, struct xp_conn *c, uint32_t slot, uint64_t now_ns);

/**
 * xp_recv_fail_from() - fail every receive of @c with seq >= @first_seq with @err (completed
 * ones just go).
 */
void xp_recv_fail_from(struct xp_core *core, struct xp_conn *c, uint32_t first_seq, int err);

/**
 * xp_recv_done_ok() - did a receive complete with data.
 *
 * Return: receive @seq of @c completed with data and its slot still
 * remembers it.
 */
bool xp_recv_done_ok(const struct xp_conn *c, uint32_t seq);

/**
 * xp_recv_aborted() - was a receive aborted.
 *
 * Return: receive @seq of @c was aborted (too long) and its slot still
 * remembers it.
 */
bool xp_recv_aborted(const struct xp_conn *c, uint32_t seq);

/**
 * xp_recv_cts_deadline() - the next CTS retransmission.
 *
 * Return: the earliest CTS retransmission deadline of @c, or 0.
 */
uint64_t xp_recv_cts_deadline(struct xp_core *core, const struct xp_conn *c);

/**
 * xp_recv_on_timer() - queue a retransmission of each of @c's unanswered CTSs that is due.
 */
void xp_recv_on_timer(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/*
 * ack.c
 */

/**
 * xp_ctrl_drain() - write the control records of every connection that has
 * some (ACKs, CTSs, their answers, FIN/RESET), batched per peer into
 * packets of at most ctrl_mtu bytes, into @batch.
 * @core: the core.
 * @now_ns: the time (ACK hold times are measured to it).
 * @batch: where the packets go; a connection whose records do not fit waits
 *         for the next drain.
 */
void xp_ctrl_drain(struct xp_core *core, uint64_t now_ns, struct xp_batch *batch);

/*
 * recovery.c
 */

/**
 * xp_rec_init() - reset @c's RTT estimator and RACK, TLP and RTO state.
 */
void xp_rec_init(struct xp_conn *c);

/**
 * xp_rec_on_delivered() - chunk @ch was delivered: advance RACK's newest delivered transmission
 * if it is newer.
 */
void xp_rec_on_delivered(struct xp_conn *c, const struct xp_chunk *ch, uint64_t now_ns);

/**
 * xp_rec_rtt_sample() - the RTT sample an echo gives, under Karn's rule.
 * @core: the core.
 * @c: the connection.
 * @ch: the echoed chunk.
 * @parity: the echoed transmission's parity.
 * @hold_ns: the receiver's hold of it.
 * @now_ns: the time.
 * @rtt_ns: the sample, when there is one.
 *
 * Return: true if the echo named the chunk's latest transmission
 * unambiguously and the sample was taken (fed to SRTT and the path's EWMA).
 */
bool xp_rec_rtt_sample(struct xp_core *core, struct xp_conn *c, struct xp_chunk *ch,
		       bool parity, uint64_t hold_ns, uint64_t now_ns, uint64_t *rtt_ns);

/**
 * xp_rec_check_spurious() - an ACK's echo named transmission @parity of @ch, in a record that
 * says "duplicate seen" if @dup_seen. If that transmission is not the latest, an earlier one
 * arrived and the latest retransmission was needless (the immediate's parity bit as Eifel's
 * timestamp, RFC 3522); if it is the latest and a duplicate was seen, the echo names (as the
 * transmission that dirtied the record last) the copy that arrived second. Counts it once per
 * transmission, widens reo_wnd as a DSACK does (RFC 8985 6.2), and keeps RACK from crediting
 * the retransmission. Only chunks sent more than once qualify.
 */
void xp_rec_check_spurious(struct xp_core *core, struct xp_conn *c, struct xp_chunk *ch,
			   bool parity, bool dup_seen, uint64_t now_ns);

/**
 * xp_rec_on_dsack() - the receiver saw a duplicate (a spurious retransmission): widen reo_wnd,
 * once per SRTT.
 */
void xp_rec_on_dsack(struct xp_conn *c, uint64_t now_ns);

/**
 * xp_rec_detect() - RACK loss detection over @c's chunks in flight: mark the lost, arm the
 * reordering timer.
 */
void xp_rec_detect(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_rec_on_new_ack() - new data was acknowledged: clear the backoff, restart the RTO, re-arm
 * the TLP.
 */
void xp_rec_on_new_ack(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_rec_on_sent() - A chunk went out (@new_data: its first transmission): arm the RTO if it is
 * not armed; arm the TLP if it is not armed, and restart it after new data (RFC 8985 7.2), so
 * the probe waits a PTO after the newest transmission rather than the first of the flight.
 */
void xp_rec_on_sent(struct xp_core *core, struct xp_conn *c, bool new_data, uint64_t now_ns);

/**
 * xp_rec_on_timer() - @c's recovery timers: RTO, TLP, RACK reordering, whichever is due.
 */
void xp_rec_on_timer(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_rec_reo_wnd_ns() - RACK's reordering window.
 *
 * Return: @c's RACK reordering window, ns.
 */
uint64_t xp_rec_reo_wnd_ns(const struct xp_conn *c);

/**
 * xp_rec_rto_ns() - the current RTO.
 *
 * Return: @c's RTO with its current backoff, ns.
 */
uint64_t xp_rec_rto_ns(const struct xp_core *core, const struct xp_conn *c);

/*
 * path.c
 */

/**
 * xp_path_choose() - pick the path of the next chunk.
 *
 * Return: the path index for @c's next chunk: EV mod n_paths, else power of
 * two choices.
 */
uint32_t xp_path_choose(struct xp_core *core, struct xp_conn *c, const struct xp_cc_ctl *ctl);

/**
 * xp_path_on_rtt() - fold an RTT sample into @path's EWMA (alpha 1/8).
 */
void xp_path_on_rtt(struct xp_conn *c, uint32_t path, uint64_t rtt_ns);

/**
 * xp_path_on_loss() - A chunk on @path was declared lost: fold a penalty sample (the RTO) into
 * its EWMA.
 */
void xp_path_on_loss(struct xp_core *core, struct xp_conn *c, uint32_t path);

#endif /* XP_CORE_INT_H */
