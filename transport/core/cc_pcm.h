/* SPDX-License-Identifier: MIT */
/*
 * cc_pcm.h - the core's CC seam (cc.h) bound to PCM handler packages.
 *
 * One binding runs a CC package and optionally an LB package, each in its
 * own shell (synchronous, or asynchronous in any snapshot mode), with one
 * flow per connection in each. Every connection bound to it gets a flow
 * slot; the core's events become PCM signals (the mapping is in cc_pcm.c
 * and docs/transport.md), filtered to what the capability target provides,
 * and the controls come back as the byte budget (CWND), the pacer's rate
 * (RATE) and the path (EV).
 *
 * Flow slots: today's shells have a fixed flow count, so a binding is
 * created for max_flows slots. A synchronous slot is reset and reused when
 * its connection closes; an asynchronous one is not reused (today's
 * asynchronous shell cannot reset a flow), so an asynchronous binding serves
 * max_flows connections over its life. Both rules live in the slot
 * allocator in cc_pcm.c, the one place that changes when the shells gain
 * dynamic flows.
 */
#ifndef XP_CC_PCM_H
#define XP_CC_PCM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async.h"
#include "cc.h"
#include "package.h"
#include "spec.h"
#include "target.h"

enum xp_cc_pcm_mode {
	XP_CC_PCM_SYNC = 0,
	XP_CC_PCM_ASYNC = 1,
};

struct xp_cc_pcm_config {
	const struct pcm_package *cc; /* drives CWND and/or RATE (and may drive EV) */
	const struct pcm_package *lb; /* optional: drives EV; its controls may not overlap cc's */
	const struct pcm_target *target; /* what the datapath provides; NULL: "reference" */
	enum xp_cc_pcm_mode mode;
	struct pcm_async_config async;   /* ASYNC: snapshot mode and workers */
	/*
	 * ASYNC: run each flow's worker share on the feeding thread right after
	 * each event (pcm_async_poll()), with no worker threads: deterministic,
	 * for tests and single-threaded engines.
	 */
	bool async_inline;
	uint32_t max_flows;
	uint64_t tick_ns; /* ELAPSED_TIME ticks for packages with a timer trigger; 0: 10 us */
	uint64_t now_ns;
};

struct xp_cc_pcm;

/**
 * xp_cc_pcm_config_default() - sync mode, no LB, target "reference", 1024
 * flows, 10 us ticks, the async shell's own defaults.
 * @cfg: filled in; the caller sets cfg->cc.
 */
void xp_cc_pcm_config_default(struct xp_cc_pcm_config *cfg);

/**
 * xp_cc_pcm_create() - shells for the packages of @cfg.
 * @cfg: configuration; copied.
 * @out: the binding's context.
 * @diag: on failure, what is wrong, naming the package and signal or control.
 *
 * Return: 0, -EINVAL (no CC package, overlapping controls, bad shell
 * configuration), -ENOTSUP (the target lacks a signal or control a package
 * needs), -ENOMEM.
 */
int xp_cc_pcm_create(const struct xp_cc_pcm_config *cfg, struct xp_cc_pcm **out,
		     struct pcm_diag *diag);

/**
 * xp_cc_pcm_destroy() - stops any worker threads, then frees everything. NULL is a no-op.
 */
void xp_cc_pcm_destroy(struct xp_cc_pcm *p);

/**
 * xp_cc_pcm_start() - start the asynchronous shells' worker threads.
 * @p: the binding.
 *
 * Return: 0 (also for a sync or inline binding, which has none), or
 * pcm_async_start()'s error.
 */
int xp_cc_pcm_start(struct xp_cc_pcm *p);

/**
 * xp_cc_pcm_stop() - stop the worker threads, if any.
 */
void xp_cc_pcm_stop(struct xp_cc_pcm *p);

/**
 * xp_cc_pcm_binding() - the binding that runs connections on these packages.
 *
 * Return: the binding for xp_conn_config.cc or xp_conn_set_cc().
 */
struct xp_cc_binding xp_cc_pcm_binding(struct xp_cc_pcm *p);

/**
 * xp_cc_pcm_bytes_per_flow() - memory per connection.
 *
 * Return: bytes of shell state per flow slot, both packages.
 */
size_t xp_cc_pcm_bytes_per_flow(const struct xp_cc_pcm *p);

/**
 * xp_cc_pcm_flows_open() - connections bound now.
 *
 * Return: flows open now (connections bound to @p).
 */
uint32_t xp_cc_pcm_flows_open(const struct xp_cc_pcm *p);

/**
 * xp_cc_pcm_peek() - copy a flow's state in the handler's layout (pcmh.h):
 * signals, controls and variables, pkg->handler_slots slots.
 * @p: the binding; asynchronous shells must have no worker running.
 * @which: 0 for the CC package, 1 for the LB package.
 * @flow: the flow (slots are handed out from 0 in order of connection).
 * @out: room for that package's handler_slots slots.
 *
 * Return: 0, -ERANGE (no such package or flow), -EBUSY (workers running).
 */
int xp_cc_pcm_peek(const struct xp_cc_pcm *p, unsigned which, uint32_t flow, pcm_uint *out);

/**
 * xp_cc_pcm_handler_calls() - handler invocations so far.
 *
 * Return: handler invocations so far, both packages (sync shells
 * only; 0 for async).
 */
uint64_t xp_cc_pcm_handler_calls(const struct xp_cc_pcm *p);

#endif /* XP_CC_PCM_H */
