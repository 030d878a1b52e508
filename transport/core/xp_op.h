/* SPDX-License-Identifier: MIT */
/*
 * xp_op.h - posted operations (op.c): the queue a send or a receive waits
 * in until it starts or is advertised, and the completion FIFO every
 * operation, and every close, leaves the core by.
 */
#ifndef XP_OP_H
#define XP_OP_H

#include <stdint.h>

#include "core.h"
#include "xp_seqwin.h"

struct xp_conn;
struct xp_core;

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

/* A connection's queue of operations not yet started (sends) or advertised (receives). */
struct xp_idq {
	uint32_t head;
	uint32_t tail;
	uint32_t len;
};

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
 * xp_complete_emit() - hand queued completions out, oldest first, while @b has room.
 * @core: the core.
 * @b: the batch; each completion takes one action.
 */
void xp_complete_emit(struct xp_core *core, struct xp_batch *b);

#endif /* XP_OP_H */
