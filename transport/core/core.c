// SPDX-License-Identifier: MIT
/*
 * core.c - the per-engine core object: creation with every pool and work
 * list (xp_idlist.h) sized up front, the input entry points that are not a
 * connection's own, the drain that turns pending work into actions, timers
 * and accounting. It is the top of the core's files: it calls the others,
 * none calls it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xp_ack.h"
#include "xp_conn.h"
#include "xp_core_state.h"
#include "xp_op.h"
#include "xp_path.h"
#include "xp_recv.h"
#include "xp_send.h"

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

		xp_conn_act(core, c, xp_send_try_start(core, c, now_ns), now_ns);
		xp_conn_rearm(core, c, now_ns);
	}
	while (core->rmsg_pool.used < core->rmsg_pool.n &&
	       (id = xp_idlist_pop(&core->wait_rmsg)) != XP_NONE) {
		struct xp_conn *c = &core->conns[id];

		xp_conn_act(core, c, xp_recv_try_advertise(core, c, now_ns), now_ns);
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
	xp_complete_emit(core, batch);
	if (batch->n < batch->cap)
		xp_ctrl_drain(core, now_ns, batch);
	push_ready(core, now_ns, batch);
	/* Emitting records can complete closes; hand those out in the same call. */
	xp_complete_emit(core, batch);
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
	unsigned news = 0;
	struct xp_conn *c;
	struct xp_imm f;
	enum xp_drop why = XP_DROP_IMM_UNKNOWN_CONN; /* set on NULL; GCC under ASan cannot tell */
	int rc;

	xp_imm_decode(imm, &f);
	c = xp_conn_for_chunk(core, &f, path, &why);
	if (!c) {
		xp_drop(core, why);
		return -EINVAL;
	}
	rc = xp_recv_on_chunk(core, c, &f, byte_len, ecn_ce, now_ns, &news);
	xp_conn_act(core, c, news, now_ns);
	if (rc == 0)
		xp_conn_rearm(core, c, now_ns);
	return rc;
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
