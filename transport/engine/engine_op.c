// SPDX-License-Identifier: MIT
/*
 * engine_op.c - an engine's operations: the sends and receives it has given
 * the core, by the core's cookie (an index in the op table), each with the
 * application's cookie, its receive key and where it completes (the
 * engine's completion ring, or the port that posted it).
 *
 * A post is checked (connection, region), given an op slot and, for a
 * receive, a key from the datapath over exactly its buffer; then the core
 * takes it. A post the core refuses completes at once with the error. The
 * core's completion of an operation releases its key before the completion
 * is published (docs/transport.md "Direct placement"), then frees the slot.
 */
#include <errno.h>

#include "engine_int.h"
#include "xp_range.h"

void xp_engine_ops_init(struct xp_engine *e)
{
	for (uint32_t i = 0; i < e->n_ops; i++)
		e->ops[i].next_free = i + 1 < e->n_ops ? i + 1 : UINT32_MAX;
	e->op_free = 0;
}

static int op_alloc(struct xp_engine *e, uint64_t cookie)
{
	uint32_t i = e->op_free;

	if (i == UINT32_MAX)
		return -EAGAIN;
	e->op_free = e->ops[i].next_free;
	e->ops_used++;
	e->ops[i].cookie = cookie;
	e->ops[i].has_key = false;
	return (int)i;
}

static void op_free(struct xp_engine *e, uint32_t i)
{
	e->ops[i].next_free = e->op_free;
	e->op_free = i;
	e->ops_used--;
}

/* A send's or receive's completion: to its port, or to the ring (@via enum eng_op_via). */
static void complete_op(struct xp_engine *e, uint8_t via, struct xp_port *port, uint8_t kind,
			int status, uint32_t conn, uint64_t cookie, uint64_t bytes)
{
	struct xp_engine_comp c = { .kind = kind, .status = status, .conn = conn,
				    .cookie = cookie, .bytes = bytes };

	if (via == EOP_PORT) {
		XP_ENGINE_STAT_ADD(e, completions, 1);
		port->ops->complete(port->arg, &c);
	} else if (via == EOP_RING) {
		xp_engine_complete(e, &c);
	}
}

static bool mr_ok(const struct xp_engine *e, uint32_t mr, uint64_t addr, uint64_t len)
{
	uint64_t base;

	if (mr >= e->n_mrs || !e->mr_used[mr])
		return false;
	base = (uint64_t)(uintptr_t)e->mrs[mr].addr;
	return addr >= base && xp_range_within(addr - base, len, e->mrs[mr].len);
}

void xp_engine_post(struct xp_engine *e, const struct xp_cmd *c, struct xp_port *port,
		    uint64_t now)
{
	bool recv = c->op == XP_CMD_RECV;
	uint8_t kind = recv ? XP_ECOMP_RECV : XP_ECOMP_SEND;
	uint8_t via = port ? EOP_PORT : EOP_RING;
	struct xp_buf buf = { .addr = c->addr, .len = c->len };
	int op, rc;

	if (!xp_engine_conn_ok(e, c->conn) || !mr_ok(e, c->mr, c->addr, c->len)) {
		rc = !xp_engine_conn_ok(e, c->conn) ? -ENOTCONN : -EINVAL;
		goto err;
	}
	op = op_alloc(e, c->cookie);
	if (op < 0) {
		rc = op;
		goto err;
	}
	e->ops[op].via = via;
	e->ops[op].port = port;
	if (recv) {
		rc = e->dp->ops->recv_key(e->dp, &e->mrs[c->mr], c->addr, c->len, &buf.key);
		if (rc < 0)
			goto err_op;
		e->ops[op].rkey = buf.key;
		e->ops[op].has_key = true;
		rc = xp_post_recv(e->core, c->conn, &buf, (uint64_t)op, now);
	} else {
		buf.key = e->mrs[c->mr].lkey;
		rc = xp_post_send(e->core, c->conn, &buf, (uint64_t)op, now);
	}
	if (rc == 0)
		return;
	if (e->ops[op].has_key)
		e->dp->ops->recv_key_release(e->dp, e->ops[op].rkey);
err_op:
	op_free(e, (uint32_t)op);
err:
	XP_ENGINE_STAT_ADD(e, post_errors, 1);
	complete_op(e, via, port, kind, rc, c->conn, c->cookie, 0);
}

void xp_engine_op_done(struct xp_engine *e, const struct xp_completion *c)
{
	struct eng_op *op = &e->ops[c->cookie];
	uint8_t kind = c->kind == XP_COMP_RECV ? XP_ECOMP_RECV : XP_ECOMP_SEND;

	if (op->has_key)
		e->dp->ops->recv_key_release(e->dp, op->rkey);
	complete_op(e, op->via, op->port, kind, c->status, c->conn, op->cookie, c->bytes);
	op_free(e, (uint32_t)c->cookie);
}

void xp_engine_ops_drop_port(struct xp_engine *e, const struct xp_port *port)
{
	for (uint32_t i = 0; i < e->n_ops; i++)
		if (e->ops[i].via == EOP_PORT && e->ops[i].port == port) {
			e->ops[i].via = EOP_DROPPED;
			e->ops[i].port = NULL;
		}
}
