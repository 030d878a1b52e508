/* SPDX-License-Identifier: MIT */
/*
 * xp_conn.h - a connection and its state (conn.c): identity, lifecycle,
 * the sender's and receiver's per-slot state, the control records it owes,
 * and what the other files report back to it.
 *
 * Each direction keeps a sequence window (xp_seqwin.h: sends sw, receives
 * rw). send.c, recv.c and recovery.c do not call back into conn.c: they
 * return what changed (enum xp_news), and their caller acts on it with
 * xp_conn_act().
 */
#ifndef XP_CONN_H
#define XP_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"
#include "rtt.h"
#include "wire.h"
#include "xp_cc.h"
#include "xp_core_state.h"
#include "xp_op.h"
#include "xp_path.h"
#include "xp_recovery.h"
#include "xp_seqwin.h"

enum xp_conn_state {
	XP_CS_FREE = 0,
	XP_CS_OPEN,       /* created (bound or not) */
	XP_CS_CLOSING,    /* graceful close under way */
	XP_CS_DEAD,       /* failed (reset, timeout, I/O); waits for xp_conn_close() */
	XP_CS_QUARANTINE, /* closed; the id is not reused until quarantine_until_ns */
};

/* Control records a connection has to send (bit per slot where per message). */
enum {
	XP_CTL_FIN = 1,
	XP_CTL_FIN_ACK = 2,
	XP_CTL_RESET = 4,
	XP_CTL_RESET_ACK = 8,
	XP_CTL_KEEPALIVE = 16,
	XP_CTL_KEEPALIVE_ACK = 32,
};

/* What a connection's liveness clock watches (conn.c). */
enum xp_watch {
	XP_WATCH_NONE = 0,
	XP_WATCH_OWED,  /* something owed by the peer: no progress for the limit fails it */
	XP_WATCH_IDLE,  /* nothing owed, operations waiting: keepalives, and silence fails it */
};

/*
 * What an input changed on a connection, as send.c, recv.c and recovery.c
 * report it (a bit set); xp_conn_act() acts on it in this order.
 */
enum xp_news {
	XP_NEWS_PROGRESS = 1, /* something moved forward: the no-progress clock restarts */
	XP_NEWS_CTRL = 2,     /* control records to send: onto the control work list */
	XP_NEWS_SEND = 4,     /* chunks may go: onto the ready list if live, bound and sending */
	XP_NEWS_FINISHED = 8, /* an operation or an ABORT finished: a graceful close may be done */
};

/* A CTS the sender holds until its message starts (held while its bit is in cts_held). */
struct xp_cts {
	uint64_t raddr;
	uint64_t cap;
	uint32_t rkey;
	uint32_t seq;
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
	uint32_t pre_peer;   /* before the bind: the control handle CTSs came from */
	bool pre_heard;      /* ... once one came */
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

	/* sender (send.c) */
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
	struct xp_rack rack;

	/* receiver (recv.c) */
	uint32_t recv_posted;
	struct xp_seqwin rw;      /* receives */
	struct xp_idq rq;
	uint32_t rmsg[XP_MSG_SLOTS];
	uint32_t n_rmsgs;
	uint32_t cts_unconfirmed;
	uint16_t cts_timed;       /* slots whose CTS is XP_CTS_SENT: on its retransmission timer */

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

	/* liveness: the no-progress limit and keepalives */
	uint64_t no_progress_ns;
	uint64_t last_progress_ns;
	uint64_t ka_sent_ns;    /* the last KEEPALIVE */
	uint8_t ka_backoff;     /* KEEPALIVEs unanswered before the last one */
	uint8_t watch;          /* enum xp_watch, as of the last rearm */

	/* intrusive links */
	uint32_t comp_next;
};

/**
 * xp_conn_live() - is the connection open or closing.
 *
 * Return: @c is OPEN or CLOSING.
 */
static inline bool xp_conn_live(const struct xp_conn *c)
{
	return c->state == XP_CS_OPEN || c->state == XP_CS_CLOSING;
}

/**
 * xp_cc_read() - read @c's controls from its CC binding into @ctl.
 */
static inline void xp_cc_read(struct xp_conn *c, struct xp_cc_ctl *ctl)
{
	c->cc.ops->read(c->cc.ctx, c->cc_flow, ctl);
}

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
 * @why: the reason when there is none: unknown id, wrong nonce, wrong peer;
 *       before the bind, a record that is not a CTS (unexpected) or a CTS
 *       from another peer than the first one's (wrong peer), which it
 *       remembers: the bind drops what came from a peer it does not name.
 *
 * Return: the connection, or NULL.
 */
struct xp_conn *xp_conn_for_record(struct xp_core *core, const struct xp_rec *rec,
				   uint32_t peer, enum xp_drop *why);

/**
 * xp_conn_for_chunk() - the connection a chunk's immediate names, if it may (inline: it is
 * on the per-chunk path).
 * @core: the core.
 * @f: the decoded immediate.
 * @path: the datapath handle the chunk arrived on.
 * @why: the reason when there is none: unknown id, or a path not the connection's.
 *
 * Return: the connection (in any state but FREE), or NULL.
 */
static inline struct xp_conn *xp_conn_for_chunk(struct xp_core *core, const struct xp_imm *f,
						uint32_t path, enum xp_drop *why)
{
	struct xp_conn *c;

	if (f->conn >= core->cfg.max_conns || core->conns[f->conn].state == XP_CS_FREE) {
		*why = XP_DROP_IMM_UNKNOWN_CONN;
		return NULL;
	}
	c = &core->conns[f->conn];
	for (uint32_t p = 0; p < c->n_paths; p++)
		if (c->paths[p].handle == path)
			return c;
	*why = XP_DROP_IMM_WRONG_PATH;
	return NULL;
}

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
 * xp_conn_check_closed() - if @c is closing gracefully and nothing is left to wait for, close
 * it (quarantine).
 */
void xp_conn_check_closed(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_conn_want_send() - @c may have chunks to send: put it on the ready list if it is live,
 * bound and sending.
 */
static inline void xp_conn_want_send(struct xp_core *core, struct xp_conn *c)
{
	if (xp_conn_live(c) && c->bound && c->n_smsgs)
		xp_idlist_push(&core->ready, c->id);
}

/**
 * xp_conn_act() - act on what changed on @c (enum xp_news bits in @news): restart the
 * no-progress clock, put it on the control or ready work list, close it if a graceful close
 * has nothing left to wait for. Inline: it follows every chunk and every ACK.
 * @core: the core.
 * @c: the connection.
 * @news: what send.c, recv.c or recovery.c reported.
 * @now_ns: the time.
 */
static inline void xp_conn_act(struct xp_core *core, struct xp_conn *c, unsigned news,
			       uint64_t now_ns)
{
	if (news & XP_NEWS_PROGRESS)
		c->last_progress_ns = now_ns;
	if (news & XP_NEWS_CTRL)
		xp_idlist_push(&core->ctrl, c->id);
	if (news & XP_NEWS_SEND)
		xp_conn_want_send(core, c);
	if (news & XP_NEWS_FINISHED)
		xp_conn_check_closed(core, c, now_ns);
}

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
 * xp_conn_on_close_record_sent() - A FIN or RESET of @c went out: arm its retransmission if it
 * is not armed.
 */
void xp_conn_on_close_record_sent(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

#endif /* XP_CONN_H */
