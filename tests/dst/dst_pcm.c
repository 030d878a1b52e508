// SPDX-License-Identifier: MIT
/*
 * dst_pcm.c - a PCM binding driven to its limits through its ops table
 * (dst_pcm.h): dst_core's connections open a handful of flows per binding,
 * so the binding's own limits are reached here, deterministically, with
 * each step checked against what cc_pcm.h promises.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cc_pcm.h"
#include "dst_pcm.h"
#include "pcm.h"

#define TICK_NS 10000ull
#define MAX_PLAN_FLOWS 256

struct check {
	char *why;
	size_t len;
	int rc;
};

static void bad(struct check *k, const char *fmt, ...)
{
	va_list ap;

	if (k->rc)
		return;
	k->rc = -1;
	va_start(ap, fmt);
	vsnprintf(k->why, k->len, fmt, ap);
	va_end(ap);
}

static const struct pcm_package *policy(const char *name)
{
	for (size_t i = 0; pcm_builtin_policies[i]; i++)
		if (strcmp(pcm_builtin_policies[i]->name, name) == 0)
			return pcm_builtin_policies[i];
	abort();
}

/* The per-flow queries on open flow @flow, and on flows that are not there. */
static void check_queries(struct check *k, const struct xp_cc_pcm *p, uint32_t flow,
			  bool async, bool has_lb, uint32_t workers)
{
	static pcm_uint slots[4096];
	const struct pcm_package *cc, *lb;
	int w = xp_cc_pcm_flow_worker(p, flow);

	if (xp_cc_pcm_flow_packages(p, flow, &cc, &lb) < 0 || cc != policy("dcqcn") ||
	    (lb != NULL) != has_lb)
		bad(k, "flow %u: packages not the binding's", flow);
	if (async ? w < 0 || (uint32_t)w >= workers : w != -EOPNOTSUPP)
		bad(k, "flow %u: worker %d", flow, w);
	if (xp_cc_pcm_peek(p, 0, flow, slots) < 0 ||
	    (xp_cc_pcm_peek(p, 1, flow, slots) == 0) != has_lb ||
	    xp_cc_pcm_peek(p, 2, flow, slots) != -ERANGE)
		bad(k, "flow %u: peek", flow);
	if (xp_cc_pcm_flow_packages(p, UINT32_MAX, &cc, &lb) != -ENOENT ||
	    xp_cc_pcm_flow_worker(p, UINT32_MAX) != -ENOENT ||
	    xp_cc_pcm_peek(p, 0, UINT32_MAX, slots) != -ERANGE)
		bad(k, "a flow out of range was not refused");
}

/* Ticks alone must run a timer-triggered handler; its rate stays within line rate. */
static void tick_flow(struct check *k, struct xp_cc_binding b, struct xp_cc_pcm *p, uint32_t flow,
		     uint32_t ticks)
{
	struct xp_cc_ack ack = { .acked_chunks = 1, .acked_bytes = 4096, .rtt_ns = 8000,
				 .ecn_ce = 1, .echo_ce = true, .in_flight_bytes = 4096 };
	uint64_t calls = xp_cc_pcm_handler_calls(p), now = TICK_NS;
	struct xp_cc_ctl ctl;

	b.ops->on_tx(b.ctx, flow, 8192, 4096, now);
	b.ops->on_ack(b.ctx, flow, &ack, now);
	for (uint32_t t = 0; t < ticks; t++) {
		now += 1000 * TICK_NS;
		b.ops->tick(b.ctx, flow, now);
	}
	b.ops->read(b.ctx, flow, &ctl);
	if (xp_cc_pcm_handler_calls(p) <= calls)
		bad(k, "flow %u: no handler call after an ACK and %u ticks", flow, ticks);
	if (!ctl.rate || ctl.rate > PCM_RATE_ONE)
		bad(k, "flow %u: rate %llu out of (0, line rate]", flow, (unsigned long long)ctl.rate);
}

/* Whether flow @flow of @p runs @cc and @lb now. */
static bool runs(const struct xp_cc_pcm *p, uint32_t flow, const struct pcm_package *cc,
		 const struct pcm_package *lb)
{
	const struct pcm_package *c, *l;

	return xp_cc_pcm_flow_packages(p, flow, &c, &l) == 0 && c == cc && l == lb;
}

/*
 * Live swaps of flow @flow: to another CC and LB package (an LB flow added, or the LB
 * package swapped), the same again (nothing to do), the LB taken away, and back to the
 * binding's own packages; each must leave the flow running what it named.
 */
static void swap_flow(struct check *k, struct xp_cc_pcm *p, uint32_t flow, bool has_lb)
{
	const struct pcm_package *cc = policy("dcqcn"), *lb = has_lb ? policy("reps") : NULL;
	const struct pcm_package *steps[][2] = {
		{ policy("newreno"), policy("ops") }, { policy("newreno"), policy("ops") },
		{ policy("newreno"), NULL }, { cc, lb },
	};
	struct pcm_diag diag;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (xp_cc_pcm_flow_swap(p, flow, steps[i][0], steps[i][1], TICK_NS, &diag) < 0 ||
		    !runs(p, flow, steps[i][0], steps[i][1]))
			bad(k, "flow %u: swap %zu: %s", flow, i, diag.msg);
}

/* Fill @p to max_flows, one more refused, then close every flow; nothing may stay open. */
static void fill_and_empty(struct check *k, struct xp_cc_pcm *p, const struct dst_pcm_plan *plan,
			   bool async)
{
	struct xp_cc_binding b = xp_cc_pcm_binding(p);
	static uint32_t flows[MAX_PLAN_FLOWS];
	struct xp_cc_info info;
	struct xp_cc_ctl ctl;
	uint32_t extra;

	b.ops->info(b.ctx, &info);
	if (!info.tick_ns || !xp_cc_pcm_bytes_per_flow(p))
		bad(k, "a binding with a timer-triggered package asks for no ticks");
	for (uint32_t i = 0; i < plan->max_flows; i++)
		if (b.ops->flow_open(b.ctx, i + 1, 0, &flows[i]) < 0)
			bad(k, "flow %u of %u refused", i, plan->max_flows);
	if (k->rc)
		return;
	if (b.ops->flow_open(b.ctx, 1, 0, &extra) != -ENOSPC ||
	    xp_cc_pcm_flows_open(p) != plan->max_flows)
		bad(k, "a flow beyond max_flows (%u) was not refused", plan->max_flows);
	swap_flow(k, p, flows[0], plan->lb);
	for (uint32_t i = 0; i < plan->max_flows; i += plan->max_flows / 4) {
		check_queries(k, p, flows[i], async, plan->lb, plan->workers);
		tick_flow(k, b, p, flows[i], plan->ticks);
	}
	for (uint32_t i = 0; i < plan->max_flows; i++)
		b.ops->flow_close(b.ctx, flows[i], 0);
	b.ops->flow_close(b.ctx, flows[0], 0); /* closed already: nothing to do */
	b.ops->read(b.ctx, flows[0], &ctl);
	if (xp_cc_pcm_flows_open(p) || ctl.cwnd_bytes != UINT64_MAX || ctl.rate != PCM_RATE_ONE)
		bad(k, "flows left open, or a closed flow with controls");
}

/* The configuration of a binding running @cc (and "reps" as LB when @plan says so). */
static void base_config(struct xp_cc_pcm_config *cfg, const char *cc,
			const struct dst_pcm_plan *plan, const struct pcm_package *const *room)
{
	xp_cc_pcm_config_default(cfg);
	cfg->cc = policy(cc);
	cfg->lb = plan->lb ? policy("reps") : NULL;
	cfg->room_for = room;
}

/* The binding @cfg describes, started; NULL (with the reason in @k) when it cannot be. */
static struct xp_cc_pcm *start_binding(struct check *k, const struct xp_cc_pcm_config *cfg)
{
	struct xp_cc_pcm *p;
	struct pcm_diag diag;

	if (xp_cc_pcm_create(cfg, &p, &diag) < 0) {
		bad(k, "binding: %s", diag.msg);
		return NULL;
	}
	if (xp_cc_pcm_start(p) < 0) {
		bad(k, "binding: start failed");
		xp_cc_pcm_destroy(p);
		return NULL;
	}
	return p;
}

/* A synchronous or an inline asynchronous binding (no threads: start does nothing). */
static void one_binding(struct check *k, const struct dst_pcm_plan *plan, bool async)
{
	const struct pcm_package *room[] = { policy("newreno"), policy("ops"), NULL };
	struct xp_cc_pcm_config cfg;
	struct xp_cc_pcm *p;

	base_config(&cfg, "dcqcn", plan, room);
	cfg.max_flows = plan->max_flows;
	if (async) {
		cfg.mode = XP_CC_PCM_ASYNC;
		cfg.async.mode = PCM_ASYNC_BOUNDED;
		cfg.async.n_workers = plan->workers;
		cfg.async_inline = true;
		cfg.numa_node = 0;
	}
	p = start_binding(k, &cfg);
	if (!p)
		return;
	fill_and_empty(k, p, plan, async);
	xp_cc_pcm_destroy(p);
}

/*
 * One flow on running workers: an ACK fed (its window and rate read back, whatever the workers
 * made of it so far), an LB package swapped in (without one, the binding makes its LB
 * shell now and starts its workers), then closed; the flow runs what the swap named.
 */
static void threaded_flow(struct check *k, struct xp_cc_pcm *p, bool has_lb)
{
	struct xp_cc_binding b = xp_cc_pcm_binding(p);
	struct pcm_diag diag;
	struct xp_cc_ctl ctl;
	uint32_t flow;

	if (b.ops->flow_open(b.ctx, 1, 0, &flow) < 0) {
		bad(k, "threaded binding: a flow refused");
		return;
	}
	b.ops->on_ack(b.ctx, flow, &(struct xp_cc_ack){ .acked_chunks = 1, .acked_bytes = 4096 },
		      TICK_NS);
	b.ops->read(b.ctx, flow, &ctl);
	if (!ctl.cwnd_bytes || !ctl.rate)
		bad(k, "threaded binding: no window or rate");
	if (xp_cc_pcm_flow_swap(p, flow, policy("dctcp"), policy(has_lb ? "ops" : "reps"), 0,
				&diag) < 0 ||
	    !runs(p, flow, policy("dctcp"), policy(has_lb ? "ops" : "reps")))
		bad(k, "threaded binding: swap: %s", diag.msg);
	b.ops->flow_close(b.ctx, flow, 0);
	if (xp_cc_pcm_flows_open(p))
		bad(k, "threaded binding: a flow left open");
}

/* Worker threads started, one flow on them, stopped: nothing they do reaches the trace. */
static void threaded(struct check *k, const struct dst_pcm_plan *plan)
{
	const struct pcm_package *room[] = { policy("reps"), policy("ops"), NULL };
	struct xp_cc_pcm_config cfg;
	struct xp_cc_pcm *p;

	base_config(&cfg, "dctcp", plan, room);
	cfg.mode = XP_CC_PCM_ASYNC;
	cfg.async.n_workers = plan->workers;
	p = start_binding(k, &cfg);
	if (!p)
		return;
	threaded_flow(k, p, plan->lb);
	xp_cc_pcm_stop(p);
	xp_cc_pcm_destroy(p);
}

int dst_pcm_limits(const struct dst_pcm_plan *plan, char *why, size_t why_len)
{
	struct check k = { why, why_len, 0 };

	if (plan->max_flows > MAX_PLAN_FLOWS || plan->max_flows < 4 || !plan->workers) {
		bad(&k, "a plan out of range");
		return k.rc;
	}
	one_binding(&k, plan, false);
	one_binding(&k, plan, true);
	threaded(&k, plan);
	return k.rc;
}
