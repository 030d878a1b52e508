// SPDX-License-Identifier: MIT
/*
 * core.c - the per-engine core object: creation with every pool sized up
 * front, the input entry points that are not a connection's own, the
 * completion FIFO, the drain that turns pending work into actions, timers
 * and accounting.
 *
 * Work lists (ready to send, control records to send, waiting for a pool
 * entry) are FIFOs of connection ids that are unlinked lazily: a consumer
 * pops an id and checks the connection's state, so closing a connection
 * never walks a list. An id is on a list at most once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core_int.h"

void xp_core_config_default(struct xp_core_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = 1;
	cfg->max_conns = XP_MAX_CONNS;
	cfg->max_paths = 8;
	cfg->send_msgs = 1024;
	cfg->recv_msgs = 2048;
	cfg->ops = 65536;
	cfg->max_queued = 1024;
	cfg->chunk_bytes = 64 * 1024;
	cfg->min_chunk_bytes = 4 * 1024;
	cfg->ctrl_mtu = 1024;
	cfg->burst_chunks = 8;
	cfg->rto_initial_ns = 1000000;
	cfg->rto_min_ns = 100000;
	cfg->rto_max_ns = 50000000;
	cfg->rto_granularity_ns = 1000;
	cfg->quarantine_ns = 1000000000;
	cfg->line_rate_bps = 100000000000ull;
	cfg->pacer_tick_ns = 1024;
	cfg->pacer_slots = 4096;
}

static int check_config(const struct xp_core_config *c)
{
	if (c->max_conns == 0 || c->max_conns > XP_MAX_CONNS || c->max_paths == 0 ||
	    c->max_paths > XP_MAX_PATHS || !c->send_msgs || !c->recv_msgs || !c->ops ||
	    c->ops == XP_NONE || !c->max_queued || !c->chunk_bytes ||
	    c->chunk_bytes > XP_CHUNK_BYTES_MAX || !c->min_chunk_bytes ||
	    c->min_chunk_bytes > c->chunk_bytes || c->ctrl_mtu < XP_WIRE_MIN_MTU ||
	    c->ctrl_mtu > XP_WIRE_MAX_MTU || !c->burst_chunks)
		return -EINVAL;
	/* The quarantine must outlast any retransmission: four maximum RTOs at least. */
	if (!c->rto_min_ns || c->rto_min_ns > c->rto_max_ns || !c->rto_initial_ns ||
	    c->quarantine_ns < 4 * c->rto_max_ns || !c->line_rate_bps || !c->pacer_tick_ns)
		return -EINVAL;
	return 0;
}

static void *zalloc(struct xp_core *core, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (p)
		core->bytes_total += n * size;
	return p;
}

static int idlist_init(struct xp_core *core, struct xp_idlist *l, uint32_t n)
{
	l->head = l->tail = XP_NONE;
	l->next = zalloc(core, n, sizeof(*l->next));
	l->on = zalloc(core, n, sizeof(*l->on));
	return l->next && l->on ? 0 : -ENOMEM;
}

static void idlist_fini(struct xp_idlist *l)
{
	free(l->next);
	free(l->on);
}

void xp_idlist_push(struct xp_idlist *l, uint32_t id)
{
	if (l->on[id])
		return;
	l->on[id] = 1;
	l->next[id] = XP_NONE;
	if (l->tail == XP_NONE)
		l->head = id;
	else
		l->next[l->tail] = id;
	l->tail = id;
}

uint32_t xp_idlist_pop(struct xp_idlist *l)
{
	uint32_t id = l->head;

	if (id == XP_NONE)
		return XP_NONE;
	l->head = l->next[id];
	if (l->head == XP_NONE)
		l->tail = XP_NONE;
	l->on[id] = 0;
	return id;
}

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

static int alloc_state(struct xp_core *core)
{
	const struct xp_core_config *cfg = &core->cfg;
	uint32_t n = cfg->max_conns;
	int rc;

	core->conns = zalloc(core, n, sizeof(*core->conns));
	core->paths = zalloc(core, (size_t)n * cfg->max_paths, sizeof(*core->paths));
	core->free_ids = zalloc(core, n, sizeof(*core->free_ids));
	core->scratch = zalloc(core, n, sizeof(*core->scratch));
	core->smsgs = zalloc(core, cfg->send_msgs, sizeof(*core->smsgs));
	core->rmsgs = zalloc(core, cfg->recv_msgs, sizeof(*core->rmsgs));
	core->ops = zalloc(core, cfg->ops, sizeof(*core->ops));
	if (!core->conns || !core->paths || !core->free_ids || !core->scratch || !core->smsgs ||
	    !core->rmsgs || !core->ops)
		return -ENOMEM;
	if ((rc = xp_pool_init(&core->smsg_pool, cfg->send_msgs)) < 0 ||
	    (rc = xp_pool_init(&core->rmsg_pool, cfg->recv_msgs)) < 0 ||
	    (rc = xp_pool_init(&core->op_pool, cfg->ops)) < 0 ||
	    (rc = xp_timerq_init(&core->timers, n)) < 0 ||
	    (rc = xp_wheel_init(&core->wheel, n, cfg->pacer_slots, cfg->pacer_tick_ns,
				cfg->now_ns)) < 0 ||
	    (rc = idlist_init(core, &core->ready, n)) < 0 ||
	    (rc = idlist_init(core, &core->ctrl, n)) < 0 ||
	    (rc = idlist_init(core, &core->wait_smsg, n)) < 0 ||
	    (rc = idlist_init(core, &core->wait_rmsg, n)) < 0)
		return rc;
	core->bytes_total += (size_t)(cfg->send_msgs + cfg->recv_msgs + cfg->ops) * 4 +
			     (size_t)n * (4 + 4 + 8) + (size_t)n * (4 + 4 + 8) +
			     (size_t)cfg->pacer_slots * 4 + cfg->pacer_slots / 8;
	return 0;
}

int xp_core_create(const struct xp_core_config *cfg, struct xp_core **out)
{
	struct xp_core *core;
	int rc;

	if (!cfg || !out || check_config(cfg) < 0)
		return -EINVAL;
	core = calloc(1, sizeof(*core));
	if (!core)
		return -ENOMEM;
	core->bytes_total = sizeof(*core);
	core->cfg = *cfg;
	core->rto.initial_ns = cfg->rto_initial_ns;
	core->rto.min_ns = cfg->rto_min_ns;
	core->rto.max_ns = cfg->rto_max_ns;
	core->rto.granularity_ns = cfg->rto_granularity_ns;
	core->rng = cfg->seed;
	core->max_msg_bytes = (uint64_t)XP_MAX_CHUNKS * cfg->chunk_bytes;
	core->comp_head = core->comp_tail = XP_NONE;
	rc = alloc_state(core);
	if (rc < 0) {
		xp_core_destroy(core);
		return rc;
	}
	for (uint32_t i = 0; i < cfg->max_conns; i++) {
		core->conns[i].id = i;
		core->conns[i].paths = &core->paths[(size_t)i * cfg->max_paths];
		core->free_ids[i] = i;
	}
	core->free_len = cfg->max_conns;
	*out = core;
	return 0;
}

void xp_core_destroy(struct xp_core *core)
{
	if (!core)
		return;
	xp_pool_fini(&core->smsg_pool);
	xp_pool_fini(&core->rmsg_pool);
	xp_pool_fini(&core->op_pool);
	xp_timerq_fini(&core->timers);
	xp_wheel_fini(&core->wheel);
	idlist_fini(&core->ready);
	idlist_fini(&core->ctrl);
	idlist_fini(&core->wait_smsg);
	idlist_fini(&core->wait_rmsg);
	free(core->conns);
	free(core->paths);
	free(core->free_ids);
	free(core->scratch);
	free(core->smsgs);
	free(core->rmsgs);
	free(core->ops);
	free(core);
}

/* splitmix64: nonces and path draws, a function of the seed and the inputs only. */
uint64_t xp_rand(struct xp_core *core)
{
	uint64_t z = (core->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void xp_drop(struct xp_core *core, enum xp_drop why)
{
	core->stats.drops[why]++;
}

void xp_cc_read(struct xp_core *core, struct xp_conn *c, struct xp_cc_ctl *ctl)
{
	c->cc.ops->read(c->cc.ctx, c->cc_flow, ctl);
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

static void emit_completions(struct xp_core *core, struct xp_batch *b)
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

/*
 * Connections waiting for a pool entry get one, oldest first, while entries
 * are free. One that still waits has put itself back at the end, and then
 * the pool is empty again: the work is bounded by the entries freed, not by
 * the number of connections waiting.
 */
static void retry_waiters(struct xp_core *core, uint64_t now_ns)
{
	uint32_t id;

	while (core->smsg_pool.used < core->smsg_pool.n &&
	       (id = xp_idlist_pop(&core->wait_smsg)) != XP_NONE) {
		struct xp_conn *c = &core->conns[id];

		xp_send_try_start(core, c, now_ns);
		xp_conn_rearm(core, c, now_ns);
	}
	while (core->rmsg_pool.used < core->rmsg_pool.n &&
	       (id = xp_idlist_pop(&core->wait_rmsg)) != XP_NONE) {
		struct xp_conn *c = &core->conns[id];

		xp_recv_try_advertise(core, c, now_ns);
		xp_conn_rearm(core, c, now_ns);
	}
}

static bool batch_full(const struct xp_batch *b)
{
	return b->n == b->cap || b->n_writes >= b->max_writes;
}

static void push_ready(struct xp_core *core, uint64_t now_ns, struct xp_batch *b)
{
	uint32_t id;

	while (!batch_full(b) && (id = xp_idlist_pop(&core->ready)) != XP_NONE) {
		struct xp_conn *c = &core->conns[id];

		if (xp_send_push(core, c, now_ns, b))
			xp_idlist_push(&core->ready, id);
		xp_conn_rearm(core, c, now_ns);
	}
}

uint32_t xp_core_drain(struct xp_core *core, uint64_t now_ns, struct xp_batch *batch)
{
	uint32_t start = batch->n;

	retry_waiters(core, now_ns);
	emit_completions(core, batch);
	if (batch->n < batch->cap)
		xp_ctrl_drain(core, now_ns, batch);
	push_ready(core, now_ns, batch);
	/* Emitting records can complete closes; hand those out in the same call. */
	emit_completions(core, batch);
	return batch->n - start;
}

void xp_core_timer(struct xp_core *core, uint64_t now_ns)
{
	uint32_t n = 0, id;

	/* Collect first: a handler re-arming at or before now runs on the next call. */
	while ((id = xp_timerq_pop_due(&core->timers, now_ns)) != XP_NONE)
		core->scratch[n++] = id;
	for (uint32_t k = 0; k < n; k++)
		xp_conn_on_timer(core, &core->conns[core->scratch[k]], now_ns);
	n = xp_wheel_expire(&core->wheel, now_ns, core->scratch, core->cfg.max_conns);
	for (uint32_t k = 0; k < n; k++)
		xp_conn_want_send(core, &core->conns[core->scratch[k]]);
}

uint64_t xp_core_next_deadline(const struct xp_core *core)
{
	uint64_t t = xp_timerq_next(&core->timers), w = xp_wheel_next(&core->wheel);

	return t < w ? t : w;
}

int xp_core_on_chunk(struct xp_core *core, uint32_t imm, uint32_t byte_len, uint32_t path,
		     bool ecn_ce, uint64_t now_ns)
{
	return xp_recv_on_chunk(core, imm, byte_len, path, ecn_ce, now_ns);
}

int xp_core_on_ctrl(struct xp_core *core, uint32_t peer, const void *bytes, size_t len,
		    uint64_t now_ns)
{
	struct xp_wire_reader r;
	struct xp_rec rec;
	enum xp_drop why;
	int applied = 0, rc;

	if (xp_wire_open(&r, bytes, len, core->cfg.ctrl_mtu, &why) < 0) {
		xp_drop(core, why);
		return 0;
	}
	core->stats.ctrl_packets_rx++;
	while ((rc = xp_wire_next(&r, &rec, &why)) != 0) {
		struct xp_conn *c;

		if (rc < 0) {
			xp_drop(core, why);
			continue;
		}
		c = xp_conn_for_record(core, &rec, peer, &why);
		if (!c) {
			xp_drop(core, why);
			continue;
		}
		xp_conn_on_record(core, c, &rec, now_ns);
		xp_conn_rearm(core, c, now_ns);
		applied++;
	}
	return applied;
}

void xp_core_on_write_done(struct xp_core *core, uint64_t token, int status, uint64_t now_ns)
{
	uint32_t id = (uint32_t)(token & 0xffffffffu);
	struct xp_conn *c = xp_conn_get(core, id);

	if (status >= 0 || !c || c->nonce != (uint32_t)(token >> 32) || !xp_conn_live(c))
		return;
	xp_conn_fail(core, c, -EIO, XP_RESET_IO, now_ns);
}

const struct xp_core_stats *xp_core_stats(const struct xp_core *core)
{
	return &core->stats;
}

void xp_core_usage(const struct xp_core *core, struct xp_core_usage *u)
{
	u->conns_open = core->conns_open;
	u->conns_quarantined = core->conns_quarantined;
	u->send_msgs = core->smsg_pool.used;
	u->recv_msgs = core->rmsg_pool.used;
	u->ops = core->op_pool.used;
	u->in_flight_bytes = core->in_flight_bytes;
	u->in_flight_chunks = core->in_flight_chunks;
	u->timers_armed = core->timers.len;
	u->paced = core->wheel.count;
	u->completions_pending = core->comp_len;
}

size_t xp_core_bytes_per_conn(const struct xp_core *core)
{
	/* state, paths, free-id ring, scratch, four work lists, timer heap, wheel links */
	return sizeof(struct xp_conn) + core->cfg.max_paths * sizeof(struct xp_path) + 4 + 4 +
	       4 * (4 + 1) + (4 + 4 + 8) + (4 + 4 + 8);
}

size_t xp_core_bytes_total(const struct xp_core *core)
{
	return core->bytes_total;
}

uint64_t xp_core_max_msg_bytes(const struct xp_core *core)
{
	return core->max_msg_bytes;
}
