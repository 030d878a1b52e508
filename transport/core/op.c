// SPDX-License-Identifier: MIT
/*
 * op.c - posted operations: the queue each waits in (per connection and
 * direction, linked through the operation pool) until it starts or is
 * advertised, and the core's completion FIFO, by which every operation and
 * every close leaves the core in the order they finished.
 *
 * The FIFO links operations through their queue link (free once they
 * complete) and closes through the connection's comp_next; a close is an
 * item tagged XP_COMP_CONN_TAG | id.
 */
#include <errno.h>
#include <string.h>

#include "xp_conn.h"
#include "xp_core_state.h"
#include "xp_op.h"

#define XP_COMP_CONN_TAG 0x80000000u

int xp_op_post(struct xp_core *core, struct xp_conn *c, struct xp_idq *q, uint8_t kind,
	       const struct xp_buf *buf, uint64_t cookie, uint32_t seq)
{
	struct xp_op *op;
	uint32_t i;

	if (q->len >= core->cfg.max_queued)
		return -EAGAIN;
	i = xp_pool_get(&core->op_pool);
	if (i == XP_NONE)
		return -EAGAIN;
	op = &core->ops[i];
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->addr = buf->addr;
	op->len = buf->len;
	op->key = buf->key;
	op->cookie = cookie;
	op->conn = c->id;
	op->seq = seq;
	xp_opq_append(core, q, i);
	c->ops_open++;
	return 0;
}

void xp_opq_fail_from(struct xp_core *core, struct xp_conn *c, struct xp_idq *q,
		      struct xp_seqwin *w, uint32_t first_seq, int err,
		      void (*each)(struct xp_conn *c, const struct xp_op *op))
{
	uint32_t prev = XP_NONE, i = q->head;

	while (i != XP_NONE) {
		struct xp_op *op = &core->ops[i];
		uint32_t next = op->next;

		if (seq_diff(op->seq, first_seq) < 0) {
			prev = i;
			i = next;
			continue;
		}
		xp_opq_unlink(core, q, prev, i);
		if (each)
			each(c, op);
		xp_complete_op(core, c, i, err, 0);
		xp_seqwin_finish(w, op->seq, 0, XP_OUT_FAILED);
		i = next;
	}
}

void xp_opq_append(struct xp_core *core, struct xp_idq *q, uint32_t op)
{
	core->ops[op].next = XP_NONE;
	if (q->tail == XP_NONE)
		q->head = op;
	else
		core->ops[q->tail].next = op;
	q->tail = op;
	q->len++;
}

void xp_opq_unlink(struct xp_core *core, struct xp_idq *q, uint32_t prev, uint32_t op)
{
	uint32_t next = core->ops[op].next;

	if (prev == XP_NONE)
		q->head = next;
	else
		core->ops[prev].next = next;
	if (q->tail == op)
		q->tail = prev;
	q->len--;
}

/* Completions leave in the order they happened. */
static void comp_append(struct xp_core *core, uint32_t item)
{
	if (core->comp_tail == XP_NONE)
		core->comp_head = item;
	else if (core->comp_tail & XP_COMP_CONN_TAG)
		core->conns[core->comp_tail & ~XP_COMP_CONN_TAG].comp_next = item;
	else
		core->ops[core->comp_tail].next = item;
	core->comp_tail = item;
	core->comp_len++;
	if (item & XP_COMP_CONN_TAG)
		core->conns[item & ~XP_COMP_CONN_TAG].comp_next = XP_NONE;
	else
		core->ops[item].next = XP_NONE;
}

void xp_complete_op(struct xp_core *core, struct xp_conn *c, uint32_t op, int status,
		    uint64_t bytes)
{
	core->ops[op].status = status;
	core->ops[op].bytes = bytes;
	c->ops_open--;
	comp_append(core, op);
}

void xp_complete_close(struct xp_core *core, struct xp_conn *c, int status)
{
	c->close_status = status;
	c->close_comp_pending = true;
	comp_append(core, XP_COMP_CONN_TAG | c->id);
}

static uint32_t comp_next(const struct xp_core *core, uint32_t item)
{
	return item & XP_COMP_CONN_TAG ? core->conns[item & ~XP_COMP_CONN_TAG].comp_next
				       : core->ops[item].next;
}

void xp_complete_emit(struct xp_core *core, struct xp_batch *b)
{
	while (core->comp_head != XP_NONE && b->n < b->cap) {
		uint32_t item = core->comp_head;
		struct xp_completion *comp = &b->acts[b->n].u.comp;

		b->acts[b->n++].kind = XP_ACT_COMPLETE;
		core->comp_head = comp_next(core, item);
		if (core->comp_head == XP_NONE)
			core->comp_tail = XP_NONE;
		core->comp_len--;
		if (item & XP_COMP_CONN_TAG) {
			struct xp_conn *c = &core->conns[item & ~XP_COMP_CONN_TAG];

			comp->conn = c->id;
			comp->kind = XP_COMP_CLOSE;
			comp->status = c->close_status;
			comp->cookie = 0;
			comp->bytes = 0;
			c->close_comp_pending = false;
			continue;
		}
		comp->conn = core->ops[item].conn;
		comp->kind = core->ops[item].kind == XP_OP_SEND ? XP_COMP_SEND : XP_COMP_RECV;
		comp->status = core->ops[item].status;
		comp->cookie = core->ops[item].cookie;
		comp->bytes = core->ops[item].bytes;
		xp_pool_put(&core->op_pool, item);
	}
}
