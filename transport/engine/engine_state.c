// SPDX-License-Identifier: MIT
/*
 * engine_state.c - everything an engine allocates, and its release: the
 * datapath instance, the core (its configuration adjusted to the
 * datapath), the CC bindings, the command and completion rings and the
 * engine's tables. Opened by the thread that will run the engine (THREAD:
 * the engine's own, placed first, so that first-touch puts it all on the
 * NIC's node).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

/* The core's configuration, adjusted to the datapath. */
static void core_config(struct xp_engine *e, struct xp_core_config *c)
{
	*c = e->cfg.core;
	c->ctrl_mtu = e->info.ctrl_mtu;
	if (e->info.line_rate_bps)
		c->line_rate_bps = e->info.line_rate_bps;
	if (c->rto_min_ns < e->info.rto_min_ns)
		c->rto_min_ns = e->info.rto_min_ns;
	if (c->rto_initial_ns < c->rto_min_ns)
		c->rto_initial_ns = c->rto_min_ns;
	if (c->chunk_bytes > e->info.max_write_bytes)
		c->chunk_bytes = e->info.max_write_bytes;
	if (c->min_chunk_bytes > c->chunk_bytes)
		c->min_chunk_bytes = c->chunk_bytes;
	c->now_ns = xp_dp_now_ns(e->dp);
	if (c->seed) /* a test's seed: each engine its own stream (0: the core draws from getrandom()) */
		c->seed ^= ((uint64_t)e->cfg.index + 1) * 0x9e3779b97f4a7c15ull;
}

int xp_engine_init_state(struct xp_engine *e, struct pcm_diag *diag)
{
	struct xp_core_config cc;
	int rc;

	rc = xp_dp_open(e->cfg.dp_ops, &e->cfg.dp, &e->dp, diag);
	if (rc < 0)
		return rc;
	xp_dp_info(e->dp, &e->info);
	e->node = xp_place_node(e->info.numa_node);
	if (e->cfg.progress == XP_PROGRESS_THREAD)
		xp_place_thread(e->node, e->cfg.cpu);
	core_config(e, &cc);
	rc = xp_core_create(&cc, &e->core);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "engine %u: the core's configuration: %s",
			 e->cfg.index, strerror(-rc));
		return rc;
	}
	e->cfg.core = cc;
	xp_cc_table_init(&e->cc, pcm_target_find(e->info.target), e->cfg.cc_flows,
			 e->cfg.async_workers);
	e->cc.numa_node = e->node;
	e->cc.room_for = e->cfg.cc_room_for;
	if (e->cfg.progress != XP_PROGRESS_THREAD)
		e->cc.async_workers = 0; /* nobody else's thread: run the handlers inline */
	rc = xp_mpsc_init(&e->cmds, e->cfg.cmd_slots, sizeof(struct xp_cmd));
	if (rc == 0)
		rc = xp_spsc_init(&e->comps, e->cfg.comp_slots, sizeof(struct xp_engine_comp));
	if (rc < 0)
		goto nomem;
	e->conns = calloc(cc.max_conns, sizeof(*e->conns));
	e->n_ops = cc.ops;
	e->ops = calloc(e->n_ops, sizeof(*e->ops));
	e->n_mrs = e->cfg.max_mrs;
	e->mrs = calloc(e->n_mrs, sizeof(*e->mrs));
	e->mr_used = calloc(e->n_mrs, sizeof(*e->mr_used));
	e->acts = calloc(XP_ENGINE_ACTIONS, sizeof(*e->acts));
	e->ctrl_buf = malloc(XP_ENGINE_CTRL_BUF);
	e->writes = calloc(XP_ENGINE_ACTIONS, sizeof(*e->writes));
	e->evs = calloc(XP_ENGINE_EVENT_BURST, sizeof(*e->evs));
	if (!e->conns || !e->ops || !e->mrs || !e->mr_used || !e->acts || !e->ctrl_buf ||
	    !e->writes || !e->evs)
		goto nomem;
	xp_engine_ops_init(e);
	return 0;
nomem:
	snprintf(diag->msg, sizeof(diag->msg), "engine %u: out of memory", e->cfg.index);
	return -ENOMEM;
}

void xp_engine_fini_state(struct xp_engine *e)
{
	if (e->conns)
		xp_engine_conn_release_all(e);
	for (uint32_t i = 0; e->mr_used && i < e->n_mrs; i++)
		if (e->mr_used[i])
			e->dp->ops->mr_dereg(e->dp, &e->mrs[i]);
	/* Answer control requests nobody will run. */
	while (e->cmds.slots) {
		struct xp_cmd *c = xp_mpsc_peek(&e->cmds);

		if (!c)
			break;
		if (c->op == XP_CMD_CTL) {
			c->ctl->status = -ESHUTDOWN;
			atomic_store_explicit(&c->ctl->done, 1, memory_order_release);
		}
		xp_mpsc_release(&e->cmds);
	}
	xp_core_destroy(e->core);
	e->core = NULL;
	xp_cc_table_fini(&e->cc);
	xp_dp_close(e->dp);
	e->dp = NULL;
	xp_mpsc_fini(&e->cmds);
	xp_spsc_fini(&e->comps);
	free(e->conns);
	free(e->ops);
	free(e->mrs);
	free(e->mr_used);
	free(e->acts);
	free(e->ctrl_buf);
	free(e->writes);
	free(e->evs);
	free(e->overflow);
	free(e->ports);
	e->conns = NULL;
}
