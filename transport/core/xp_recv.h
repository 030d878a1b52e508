/* SPDX-License-Identifier: MIT */
/*
 * xp_recv.h - the receiver (recv.c): advertised receives, their lookup, and
 * the receiver's entry points. Those that change what the connection must
 * do next return enum xp_news bits for conn.c to act on.
 */
#ifndef XP_RECV_H
#define XP_RECV_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"
#include "imm.h"
#include "wire.h"
#include "xp_conn.h"
#include "xp_core_state.h"

#define XP_NO_LAST 0xffffu

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
	uint64_t cts_sent_ns;  /* its first transmission: the first chunk gives an RTT bound */
};

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
 * xp_recv_queued() - post.c queued receive number recv_posted of @c: count it, and advertise
 * it if its slot is free.
 *
 * Return: what changed (enum xp_news).
 */
unsigned xp_recv_queued(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_recv_on_chunk() - a chunk was placed on @c's path: check its immediate
 * and length against the receive it names, record it, complete the receive
 * when whole; on a closed connection, answer what can be answered.
 * @core: the core.
 * @c: the connection xp_conn_for_chunk() returned.
 * @f: the decoded immediate.
 * @byte_len: bytes placed.
 * @ecn_ce: it arrived CE-marked.
 * @now_ns: the time.
 * @news: what changed (enum xp_news), set whatever the outcome.
 *
 * Return: 0 if accepted, -EALREADY for a duplicate (re-ACKed), -EINVAL if dropped.
 */
int xp_recv_on_chunk(struct xp_core *core, struct xp_conn *c, const struct xp_imm *f,
		     uint32_t byte_len, bool ecn_ce, uint64_t now_ns, unsigned *news);

/**
 * xp_recv_on_seq_record() - a sender's record about one of @c's receives:
 * CTS_ACK (stop retransmitting the CTS), ABORT (complete it with -EMSGSIZE,
 * answer ABORT_ACK), ACK_REQ (send its ACK record, or "complete" for one
 * that finished). Drops (seq_bad) one naming no such receive.
 * @core: the core.
 * @c: a live connection.
 * @rec: the record.
 * @now_ns: the time.
 *
 * Return: what changed (enum xp_news).
 */
unsigned xp_recv_on_seq_record(struct xp_core *core, struct xp_conn *c, const struct xp_rec *rec,
			       uint64_t now_ns);

/**
 * xp_recv_try_advertise() - advertise (CTS) every queued receive of @c whose slot is free,
 * pools permitting.
 *
 * Return: what changed (enum xp_news).
 */
unsigned xp_recv_try_advertise(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_recv_release() - the "complete" ACK of the receive in @slot went out: free the slot,
 * advertise the next.
 *
 * Return: what changed (enum xp_news).
 */
unsigned xp_recv_release(struct xp_core *core, struct xp_conn *c, uint32_t slot, uint64_t now_ns);

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
 *
 * Return: what changed (enum xp_news).
 */
unsigned xp_recv_on_timer(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

#endif /* XP_RECV_H */
