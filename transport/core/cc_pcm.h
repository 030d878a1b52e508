/* SPDX-License-Identifier: MIT */
/*
 * cc_pcm.h - the core's CC seam (xp_cc.h) bound to PCM handler packages.
 *
 * One binding runs CC packages, and optionally LB packages, each kind in its
 * own shell (synchronous, or asynchronous in any snapshot mode). Every
 * connection bound to it gets a flow of its own in each shell it uses: added
 * when the connection opens (pcm_shell_flow_add() / pcm_async_flow_add()),
 * removed when it closes, so handles are reused and nothing is allocated per
 * connection up front. The core's events become PCM signals (the mapping is
 * in cc_pcm.c and docs/transport.md), filtered to what the capability target
 * provides, and the controls come back as the byte budget (CWND), the
 * pacer's rate (RATE) and the path (EV).
 *
 * Per connection, the packages can change on a live connection
 * (xp_cc_pcm_flow_swap()): the flow stays where it is and moves to the new
 * package through the shell's swap, which hands the state over
 * (pcm_package_handoff()) between two events, so no signal is lost or
 * counted twice; the core's data is not touched at all.
 *
 * Placement: an asynchronous flow runs on a worker the binding picks when
 * the connection opens: the least loaded of the workers on the engine's
 * NUMA node (xp_cc_pcm_config.numa_node), or of all of them when none is
 * there (or the node is unknown).
 */
#ifndef XP_CC_PCM_H
#define XP_CC_PCM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async.h"
#include "xp_cc.h"
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
	uint32_t max_flows; /* flow handles per shell (connections bound at once) */
	/*
	 * Packages a live swap may move flows to later: each shell reserves
	 * room per flow for the largest of them as well (NULL-terminated, may
	 * be NULL). A swap to a package larger than the room fails with -E2BIG.
	 */
	const struct pcm_package *const *room_for;
	int numa_node;    /* ASYNC: the engine's node, where flows' workers should be; -1: any */
	uint64_t tick_ns; /* ELAPSED_TIME ticks for packages with a timer trigger; 0: 10 us */
	uint64_t now_ns;
};

struct xp_cc_pcm;

/**
 * xp_cc_pcm_config_default() - sync mode, no LB, target "reference", 1024
 * flows, no extra room, any node, 10 us ticks, the async shell's own defaults.
 * @cfg: filled in; the caller sets cfg->cc.
 */
void xp_cc_pcm_config_default(struct xp_cc_pcm_config *cfg);

/**
 * xp_cc_pcm_create() - shells for the packages of @cfg, with no flows yet.
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
 * xp_cc_pcm_flow_swap() - move flow @flow to packages @cc and @lb, live.
 * @p: the binding the flow is in.
 * @flow: the flow (the core's cc_flow of the connection, xp_conn_info()).
 * @cc: the CC package from now on (not NULL).
 * @lb: the LB package from now on; NULL: none (the core's power of two
 *      choices picks the path). An LB flow is added or removed as needed.
 * @now_ns: the time of the swap.
 * @diag: on failure, what is wrong, naming the package.
 *
 * Every event fed before the call was applied to the old package, every
 * later one goes to the new one (the shells' swap); a package that stays
 * keeps its state. The controls the core reads next are the new package's.
 * The engine's thread (the flow's owner) only; with asynchronous worker
 * threads running it waits for the flow's worker to take the swap.
 *
 * Return: 0; -ENOENT (no such flow); -EINVAL (@cc NULL, or @cc and @lb
 * drive one control); -ENOTSUP (the target lacks what a package needs);
 * -E2BIG (a package needs more room per flow than the binding reserved,
 * see room_for); -ENOMEM. On failure the flow runs its old packages.
 */
int xp_cc_pcm_flow_swap(struct xp_cc_pcm *p, uint32_t flow, const struct pcm_package *cc,
			const struct pcm_package *lb, uint64_t now_ns, struct pcm_diag *diag);

/**
 * xp_cc_pcm_flow_packages() - the packages flow @flow runs now.
 * @p: the binding.
 * @flow: the flow.
 * @cc: set to its CC package.
 * @lb: set to its LB package, or NULL.
 *
 * Return: 0, -ENOENT.
 */
int xp_cc_pcm_flow_packages(const struct xp_cc_pcm *p, uint32_t flow,
			    const struct pcm_package **cc, const struct pcm_package **lb);

/**
 * xp_cc_pcm_flow_worker() - the asynchronous worker flow @flow's CC handler runs on.
 *
 * Return: the worker, -ENOENT (no such flow), -EOPNOTSUPP (a synchronous binding).
 */
int xp_cc_pcm_flow_worker(const struct xp_cc_pcm *p, uint32_t flow);

/**
 * xp_cc_pcm_bytes_per_flow() - memory per connection.
 *
 * Return: bytes of shell state per flow, every shell in use, plus the binding's own.
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
 * signals, controls and variables, the package's handler_slots slots.
 * @p: the binding; asynchronous shells must have no worker running.
 * @which: 0 for the CC package, 1 for the LB package.
 * @flow: the flow (handles are handed out lowest first).
 * @out: room for that package's handler_slots slots.
 *
 * Return: 0, -ERANGE (no such package or flow), -EBUSY (workers running).
 */
int xp_cc_pcm_peek(const struct xp_cc_pcm *p, unsigned which, uint32_t flow, pcm_uint *out);

/**
 * xp_cc_pcm_handler_calls() - handler invocations so far.
 *
 * Return: handler invocations so far, both kinds of package. Threads: any;
 * an asynchronous shell's workers may be running (its per-worker counters
 * are summed, each read atomically).
 */
uint64_t xp_cc_pcm_handler_calls(const struct xp_cc_pcm *p);

#endif /* XP_CC_PCM_H */
