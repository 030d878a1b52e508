/* SPDX-License-Identifier: MIT */
/*
 * async.h - the asynchronous shell: datapath threads only accumulate, control
 * plane workers run the handlers.
 *
 * Each flow belongs to the worker the datapath chose when it added the flow
 * (pcm_async_flow_add()); its state sits in memory on that worker's NUMA
 * node. A datapath event takes the flow's ticket lock, accumulates into the
 * flow's current window (package.h) and evaluates the triggers; when one
 * holds and the flow is not pending yet in this window, the flow joins its
 * worker's pending set. The worker takes a window by switching the flow to
 * the other one, folds it into its private copy of the flow's record, runs
 * the package's call() on it (the same code the synchronous shell runs) and
 * publishes the controls as one consistent set that the datapath reads
 * without locks (pcm_async_controls()).
 *
 * How the worker copies a window is the shell's mode:
 *   PCM_ASYNC_RELAXED  never waits: an event still being written while the
 *                      worker copies is taken in part, the rest in the next call
 *   PCM_ASYNC_LOCKED   a snapshot never holds part of an event: the worker
 *                      waits for the events still writing the window it
 *                      takes, up to max_retries checks, then comes back to
 *                      the flow after the others (no event waits for it)
 *   PCM_ASYNC_BOUNDED  a snapshot may hold parts of at most skew_bound events;
 *                      the worker waits for the others, up to max_retries
 *                      checks, then comes back to the flow after the others
 * pcm-handler(7), "Asynchronous shell", gives each mode's guarantee and cost
 * and the exact semantics of handler writes, of flows added, removed, reset
 * and swapped at run time, and of placement.
 *
 * Threads (each function's comment says more): a flow has an owner, the
 * datapath thread that adds it and changes it (remove, reset, swap); any
 * datapath thread may feed or tick any flow, several threads the same flow
 * included, except while its owner changes it. Controls may be read by any
 * thread. Configuration calls (create, start, stop, destroy, poll, peek) run
 * on one control thread.
 */
#ifndef PCM_ASYNC_H
#define PCM_ASYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "package.h"
#include "spec.h"
#include "target.h"

enum pcm_async_mode {
	PCM_ASYNC_RELAXED = 0,
	PCM_ASYNC_LOCKED = 1,
	PCM_ASYNC_BOUNDED = 2,
	PCM_ASYNC_MODE_COUNT,
};

#define PCM_ASYNC_MAX_WORKERS 256
#define PCM_ASYNC_MAX_FLOWS (1u << 24)
#define PCM_ASYNC_MAX_PACKAGES 32 /* PCM_PKGSET_MAX */

/*
 * Skew histogram: bucket b < 16 counts snapshots taken while exactly b
 * events were still being written into the window; bucket b >= 16 counts
 * those with skew in [2^(b-12), 2^(b-11)).
 */
#define PCM_ASYNC_SKEW_BUCKETS 44

struct pcm_async_config {
	enum pcm_async_mode mode;
	uint32_t n_workers; /* 1 .. PCM_ASYNC_MAX_WORKERS */
	/*
	 * n_workers CPU numbers to pin the workers to (-1: not pinned), or
	 * NULL. A pinned worker's flows are allocated on its CPU's NUMA node.
	 */
	const int *worker_cpus;
	uint32_t skew_bound;  /* BOUNDED: most events a snapshot may hold part of */
	uint32_t max_retries; /* LOCKED, BOUNDED: checks before the worker moves on and comes back */
	uint32_t batch;       /* flows a worker takes per round, 1..64 */
	uint32_t idle_spins;  /* empty polls before an idle worker sleeps */
	/*
	 * `now` (ps) for ELAPSED_TIME at snapshot time. NULL: the `now` of the
	 * flow's latest event or tick, which keeps runs deterministic.
	 */
	pcm_uint (*clock_ps)(void *arg);
	void *clock_arg;
	/* pcm_async_create_cfg() only: the packages flows may run, and the table size */
	const struct pcm_package *const *packages;
	uint32_t n_packages;
	const struct pcm_target *target; /* NULL skips the capability check */
	uint32_t max_flows;              /* handles 0 .. max_flows - 1 */
	/* room per flow for packages added later; 0: what the largest given needs */
	uint32_t record_slots;
	uint32_t window_slots;
	uint32_t pub_slots;
	uint32_t control_slots;
};

/* Counters of one worker, or summed over all. */
struct pcm_async_stats {
	uint64_t enqueues;          /* windows the worker took (each holds every event since the last) */
	uint64_t wakeups;           /* visits to pending flows that found work */
	uint64_t handler_calls;
	uint64_t handler_errors;    /* calls that returned PCM_ERROR */
	uint64_t no_trigger;        /* windows taken on which no trigger held */
	uint64_t retakes;           /* LOCKED, BOUNDED: checks that found the skew above the bound */
	uint64_t deferrals;         /* flows the worker left for later (skew, late writes) */
	uint64_t partial;           /* snapshots that held part of an event (RELAXED, BOUNDED) */
	uint64_t settled;           /* visits that found nothing new and took the flow out of the set */
	uint64_t idle_polls;        /* polls that found the pending set empty */
	uint64_t sleeps;            /* times the worker blocked */
	uint64_t skew_max_accepted; /* largest skew handed to a handler */
	uint64_t skew_hist[PCM_ASYNC_SKEW_BUCKETS]; /* every check, by skew */
};

struct pcm_async;

/**
 * pcm_async_config_default() - a relaxed shell with one unpinned worker,
 * skew_bound 0 (for BOUNDED) and max_retries 16, batches of 16, the flow's
 * own event time as the clock, and room for 1 << 20 flows.
 * @cfg: filled in.
 *
 * Threads: any; touches @cfg only.
 */
void pcm_async_config_default(struct pcm_async_config *cfg);

/**
 * pcm_async_create_cfg() - an asynchronous shell with no flows.
 * @cfg: mode, workers, packages and size; copied.
 * @out: the new shell, with its workers not yet started.
 * @diag: what was wrong, on failure.
 *
 * No thread runs until pcm_async_start(); before that, pcm_async_poll() runs
 * a worker's share of the work on the calling thread.
 * Threads: any.
 *
 * Return: 0, -EINVAL (bad configuration or package), -ENOTSUP (the target
 * lacks a signal or control a package needs), -ENOMEM.
 */
int pcm_async_create_cfg(const struct pcm_async_config *cfg, struct pcm_async **out,
			 struct pcm_diag *diag);

/**
 * pcm_async_create() - a shell running @pkg with flows 0 .. @n_flows - 1
 * added, flow f on worker (f / 256) % n_workers (each chunk of 256 flows
 * goes to one worker).
 * @pkg: a validated package (pcm_package_open()).
 * @target: the datapath's capability descriptor, or NULL to skip the check.
 * @n_flows: number of flows, 1 .. PCM_ASYNC_MAX_FLOWS; also the handle limit.
 * @now_ps: time base for ELAPSED_TIME epochs.
 * @cfg: mode and workers (its package and size fields are ignored); copied.
 * @out: the new shell, with its workers not yet started.
 * @diag: what was wrong, on failure.
 *
 * Threads: any. Return: as pcm_async_create_cfg().
 */
int pcm_async_create(const struct pcm_package *pkg, const struct pcm_target *target,
		     uint32_t n_flows, pcm_uint now_ps, const struct pcm_async_config *cfg,
		     struct pcm_async **out, struct pcm_diag *diag);

/**
 * pcm_async_start() - start the worker threads, pinned as configured.
 * @as: a shell whose workers are not running.
 *
 * Threads: the control thread.
 *
 * Return: 0, -EALREADY if they run, -EINVAL for a CPU this process may not
 * use, or the -errno of pthread_create(); on failure no worker runs.
 */
int pcm_async_start(struct pcm_async *as);

/**
 * pcm_async_stop() - stop and join the workers. Each first empties its
 * pending set, so once the datapath threads have stopped feeding, no flow
 * with work is left behind and every removed flow is freed. Does nothing if
 * the workers are not running.
 * @as: the shell.
 *
 * Threads: the control thread, once no datapath thread feeds or changes flows.
 */
void pcm_async_stop(struct pcm_async *as);

/* Stops the workers if they run, then frees everything. NULL is a no-op. Threads: as stop. */
void pcm_async_destroy(struct pcm_async *as);

/**
 * pcm_async_package_add() - let flows of this shell run @pkg too.
 *
 * Threads: any; serialised with other additions.
 *
 * Return: 0 (also if already added), -EINVAL (bad package, too many), -E2BIG
 * (it needs more room per flow than the shell reserved), -ENOTSUP.
 */
int pcm_async_package_add(struct pcm_async *as, const struct pcm_package *pkg,
			  struct pcm_diag *diag);

/**
 * pcm_async_flow_add() - add a flow running @pkg on worker @worker, at the
 * lowest free handle among that worker's.
 * @as: the shell.
 * @worker: the worker whose handlers it runs on; a datapath picks the worker
 *          on its own NUMA node (pcm_async_worker_node()).
 * @pkg: one of the shell's packages (added with pcm_async_package_add() if not).
 * @now_ps: time base of its ELAPSED_TIME epochs.
 * @flow: set to the new flow's handle.
 *
 * Threads: any; the caller becomes the flow's owner. The flow is fully set
 * up before its handle is returned; its worker first hears of it from an event.
 *
 * Return: 0, -EINVAL (bad worker), -ENOSPC, -ENOMEM, or pcm_async_package_add()'s errors.
 */
int pcm_async_flow_add(struct pcm_async *as, uint32_t worker, const struct pcm_package *pkg,
		       pcm_uint now_ps, uint32_t *flow);

/**
 * pcm_async_flow_add_at() - add a flow at handle @flow (see pcm_async_flow_add()).
 *
 * Threads: as pcm_async_flow_add().
 *
 * Return: 0, -EEXIST (@flow is live), -EBUSY (@flow was removed but its
 * worker has not freed it yet), -EXDEV (@flow's chunk of handles belongs to
 * another worker), -ERANGE, -EINVAL, -ENOMEM.
 */
int pcm_async_flow_add_at(struct pcm_async *as, uint32_t flow, uint32_t worker,
			  const struct pcm_package *pkg, pcm_uint now_ps);

/**
 * pcm_async_flow_remove() - remove @flow. Its worker frees it the next time
 * it looks at its pending set, so removing a flow that is pending, or whose
 * handler is running, is safe; until then add_at() of its handle is -EBUSY.
 *
 * Threads: the flow's owner, once no thread feeds the flow. Does not wait.
 *
 * Return: 0, -ENOENT.
 */
int pcm_async_flow_remove(struct pcm_async *as, uint32_t flow);

/**
 * pcm_async_flow_reset() - re-initialise @flow from its package, e.g. for a
 * new connection in a reused slot. Events fed before the call are dropped
 * with the old state; events fed after it see the new state.
 *
 * Threads: the flow's owner, once no other thread feeds the flow. Waits for
 * the flow's worker to do it at its next look at the flow (its handler is
 * never interrupted); with the workers stopped, does it at once.
 *
 * Return: 0, -ENOENT.
 */
int pcm_async_flow_reset(struct pcm_async *as, uint32_t flow, pcm_uint now_ps);

/**
 * pcm_async_flow_swap() - move @flow to package @pkg (live policy swap):
 * the state it starts with is pcm_package_handoff()'s. Every event fed
 * before the call goes to the old package (consumed by its handler or
 * carried over), every event after it to @pkg; none is lost or applied twice.
 *
 * Threads and waiting: as pcm_async_flow_reset().
 *
 * Return: 0, -ENOENT, or pcm_async_package_add()'s errors (then nothing changed).
 */
int pcm_async_flow_swap(struct pcm_async *as, uint32_t flow, const struct pcm_package *pkg,
			pcm_uint now_ps);

/* The worker @flow runs on, or -ENOENT. Threads: any. */
int pcm_async_worker_of(struct pcm_async *as, uint32_t flow);

/* The NUMA node worker @worker's flows live on, or -1 (not pinned, or one node). Threads: any. */
int pcm_async_worker_node(const struct pcm_async *as, uint32_t worker);

/**
 * pcm_async_feed() - accumulate one event for @flow; datapath side.
 * @as: the shell.
 * @flow: the flow.
 * @ev: the samples and their valid mask.
 * @now_ps: the event's time.
 *
 * Takes the flow's ticket lock for the accumulation only (one atomic
 * read-modify-write); it may wait for another event of the same flow, or
 * for the flow's worker during a swap or reset, never for a handler.
 * Threads: any datapath thread.
 *
 * Return: 1 if a trigger held and this event is the first since the
 * worker last took the flow's window to make the flow pending, 0 if no
 * trigger held or an earlier event did, -ENOENT for a flow that is not live.
 */
int pcm_async_feed(struct pcm_async *as, uint32_t flow, const struct pcm_event *ev,
		   pcm_uint now_ps);

/**
 * pcm_async_feed_burst() - pcm_async_feed() over a burst, fetching the
 * records of later events for writing while earlier ones run.
 *
 * Threads: as pcm_async_feed().
 *
 * Return: the number of events fed; fewer than @n means evs[return] names a
 * flow that is not live, and it and the rest were not fed.
 */
uint32_t pcm_async_feed_burst(struct pcm_async *as, const struct pcm_flow_event *evs, uint32_t n);

/**
 * pcm_async_tick() - evaluate @flow's triggers at @now_ps with no new sample,
 * so that ELAPSED_TIME timers fire without traffic.
 *
 * Threads and return: as pcm_async_feed().
 */
int pcm_async_tick(struct pcm_async *as, uint32_t flow, pcm_uint now_ps);

/**
 * pcm_async_controls() - read @flow's controls as one consistent set (all
 * from the same handler call), without locks: a reader retries while the
 * worker is publishing.
 *
 * Threads: any, concurrently with everything but the flow's removal.
 *
 * Return: 0, -ENOENT.
 */
int pcm_async_controls(const struct pcm_async *as, uint32_t flow, struct pcm_control_set *out);

/**
 * pcm_async_control() - read @flow's control of @type (the first the spec
 * declares of that type) as last published by its worker.
 *
 * Threads: as pcm_async_controls(). Return: 0, -ENOENT (no such flow or control).
 */
int pcm_async_control(const struct pcm_async *as, uint32_t flow, pcm_control_t type,
		      pcm_uint *value);

/**
 * pcm_async_poll() - run worker @worker's loop body on the calling thread:
 * take up to @budget flows from its pending set and process them.
 * @as: a shell whose workers are not running (otherwise -EBUSY).
 * @worker: which worker's share.
 * @budget: most flows to process.
 *
 * For tests, single-threaded use and datapaths that run their own control
 * plane. Unlike a worker thread it does not pass over flows that back off
 * (pcm-handler(7), "Coalescing"): it visits every pending flow. Threads: one at a time per worker; not concurrently with flow
 * resets or swaps of that worker's flows made from another thread.
 *
 * Return: flows processed (0 if none was pending), -EINVAL, -EBUSY.
 */
int pcm_async_poll(struct pcm_async *as, uint32_t worker, uint32_t budget);

/**
 * pcm_async_flow_peek() - copy @flow's state in the handler's layout (see
 * pcmh.h): slots 0 and 1 zero, then the signals' current values (the
 * worker's record with the open window folded in), controls and variables;
 * the flow package's handler_slots slots in all.
 * @as: the shell; its workers must be stopped and no datapath feeding.
 * @flow: the flow.
 * @out: handler_slots slots.
 *
 * Threads: the control thread, with the workers stopped and no datapath
 * feeding (it reads the windows and the worker's record without locks).
 *
 * Return: 0, -ENOENT, -EBUSY if the workers run.
 */
int pcm_async_flow_peek(struct pcm_async *as, uint32_t flow, pcm_uint *out);

/* @flow's package, or NULL. Threads: any. */
const struct pcm_package *pcm_async_flow_package(struct pcm_async *as, uint32_t flow);

/**
 * pcm_async_stats() - read @worker's counters, or their sum over all workers
 * when @worker is UINT32_MAX.
 *
 * Threads: any, while the workers run (each counter is read atomically, the
 * set is not a snapshot).
 *
 * Return: 0, -EINVAL for an unknown worker.
 */
int pcm_async_stats(const struct pcm_async *as, uint32_t worker, struct pcm_async_stats *out);

/* Lowest skew counted in histogram bucket @b (see PCM_ASYNC_SKEW_BUCKETS). Threads: any. */
uint64_t pcm_async_skew_bucket_floor(unsigned b);

/*
 * Bytes of per-flow state (the shared slot plus the worker's private part),
 * and bytes the shell has allocated in all. Threads: any.
 */
size_t pcm_async_bytes_per_flow(const struct pcm_async *as);
size_t pcm_async_bytes(struct pcm_async *as);

/* The shell's snapshot mode. Threads: any (set at creation). */
enum pcm_async_mode pcm_async_get_mode(const struct pcm_async *as);

/* "relaxed", "locked", "bounded"; NULL for an unknown mode. Threads: any. */
const char *pcm_async_mode_name(enum pcm_async_mode mode);

/* Return: 0 and *out set, or -EINVAL for a name that is not a mode. Threads: any. */
int pcm_async_mode_parse(const char *name, enum pcm_async_mode *out);

#endif /* PCM_ASYNC_H */
