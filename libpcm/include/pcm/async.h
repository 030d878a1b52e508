/* SPDX-License-Identifier: MIT */
/*
 * async.h - the asynchronous shell: datapath threads only accumulate, control
 * plane workers run the handlers.
 *
 * Each flow has a record shared between the datapath and one worker (flow
 * f belongs to worker f % n_workers). pcm_async_feed() accumulates an event
 * into it with atomic operations, evaluates the package's triggers on the
 * result and, when one holds and the flow is not already pending, marks it
 * pending and pushes its id onto its worker's queue. A worker therefore only
 * ever looks at flows that have something to do: idle flows cost nothing,
 * however many there are. The worker takes a snapshot of the flow's signals
 * (consuming what it took), re-evaluates the triggers on that snapshot, runs
 * the handler on it and publishes the controls, which the datapath reads
 * without locks (pcm_async_control()).
 *
 * How the snapshot is taken is the shell's mode:
 *   PCM_ASYNC_RELAXED  per-signal atomics; a snapshot may mix events
 *   PCM_ASYNC_LOCKED   a per-flow lock that the datapath also takes: no skew
 *   PCM_ASYNC_BOUNDED  per-flow sequence counts; a snapshot that overlapped
 *                      more than skew_bound events is put back and retaken
 * pcm-handler(7), "Asynchronous shell", gives each mode's guarantee and cost
 * and the exact semantics of consumption and of handler writes to signals.
 *
 * Thread safety: any number of datapath threads may feed any flows
 * concurrently, including the same flow. Configuration calls (create, start,
 * stop, destroy, flow_peek) are not thread-safe.
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

/*
 * Skew histogram: bucket b < 16 counts snapshots that overlapped exactly b
 * events; bucket b >= 16 counts those with skew in [2^(b-12), 2^(b-11)).
 */
#define PCM_ASYNC_SKEW_BUCKETS 44

struct pcm_async_config {
	enum pcm_async_mode mode;
	uint32_t n_workers; /* 1 .. PCM_ASYNC_MAX_WORKERS */
	/* n_workers CPU numbers to pin the workers to (-1: not pinned), or NULL */
	const int *worker_cpus;
	uint32_t skew_bound;  /* BOUNDED: most events a snapshot may overlap */
	uint32_t max_retries; /* BOUNDED: retakes before the flow is requeued */
	uint32_t batch;       /* flows a worker dequeues (and prefetches) at once, 1..64 */
	uint32_t idle_spins;  /* empty polls before an idle worker sleeps */
	/*
	 * `now` (ps) for ELAPSED_TIME at snapshot time. NULL: the `now` of the
	 * flow's latest event or tick, which keeps runs deterministic.
	 */
	pcm_uint (*clock_ps)(void *arg);
	void *clock_arg;
};

/* Counters of one worker, or summed over all. */
struct pcm_async_stats {
	uint64_t enqueues;          /* flows pushed onto the worker's queue */
	uint64_t wakeups;           /* flows the worker dequeued */
	uint64_t handler_calls;
	uint64_t handler_errors;    /* calls that returned PCM_ERROR */
	uint64_t no_trigger;        /* dequeued, but no trigger held on the snapshot */
	uint64_t retakes;           /* BOUNDED: snapshots put back for exceeding the bound */
	uint64_t deferrals;         /* BOUNDED: flows requeued after max_retries retakes */
	uint64_t idle_polls;        /* polls that found the queue empty */
	uint64_t sleeps;            /* times the worker blocked */
	uint64_t skew_max_accepted; /* BOUNDED: largest skew handed to a handler */
	/* BOUNDED: every snapshot taken, by skew (see PCM_ASYNC_SKEW_BUCKETS) */
	uint64_t skew_hist[PCM_ASYNC_SKEW_BUCKETS];
};

struct pcm_async;

/**
 * pcm_async_config_default() - a relaxed shell with one unpinned worker,
 * skew_bound 0 and max_retries 16 (for BOUNDED), batches of 16 and the flow's
 * own event time as the clock.
 * @cfg: filled in.
 */
void pcm_async_config_default(struct pcm_async_config *cfg);

/**
 * pcm_async_create() - an asynchronous shell running @pkg for @n_flows flows.
 * @pkg: a validated package (pcm_package_open()).
 * @target: the datapath's capability descriptor, or NULL to skip the check.
 * @n_flows: number of flows, 1 .. PCM_ASYNC_MAX_FLOWS.
 * @now_ps: time base for ELAPSED_TIME epochs.
 * @cfg: mode and workers; copied.
 * @out: the new shell, with its workers not yet started.
 * @diag: what was wrong, on failure.
 *
 * Records are allocated and initialised here; no thread runs until
 * pcm_async_start(). Before that, pcm_async_poll() runs a worker's share of
 * the work on the calling thread.
 *
 * Return: 0, -EINVAL (bad arguments, configuration or package), -ENOTSUP
 * (@target lacks a signal or control the package needs), -ENOMEM.
 */
int pcm_async_create(const struct pcm_package *pkg, const struct pcm_target *target,
		     uint32_t n_flows, pcm_uint now_ps, const struct pcm_async_config *cfg,
		     struct pcm_async **out, struct pcm_diag *diag);

/**
 * pcm_async_start() - start the worker threads, pinned as configured.
 * @as: a shell whose workers are not running.
 *
 * Return: 0, -EALREADY if they run, -EINVAL for a CPU this process may not
 * use, or the -errno of pthread_create(); on failure no worker runs.
 */
int pcm_async_start(struct pcm_async *as);

/**
 * pcm_async_stop() - stop and join the workers. Each first drains its queue,
 * so once the datapath threads have stopped feeding, no pending flow is left
 * behind. Does nothing if the workers are not running.
 * @as: the shell.
 */
void pcm_async_stop(struct pcm_async *as);

/* Stops the workers if they run, then frees everything. NULL is a no-op. */
void pcm_async_destroy(struct pcm_async *as);

/**
 * pcm_async_feed() - accumulate one event for @flow; datapath side.
 * @as: the shell.
 * @flow: the flow.
 * @ev: the samples and their valid mask.
 * @now_ps: the event's time.
 *
 * Lock-free in RELAXED and BOUNDED mode; in LOCKED mode it takes the flow's
 * lock for the accumulation only. Never blocks on a handler.
 *
 * Return: 1 if this event made the flow pending for its worker, 0 if no
 * trigger held or the flow was already pending, -ERANGE for an unknown flow.
 */
int pcm_async_feed(struct pcm_async *as, uint32_t flow, const struct pcm_event *ev,
		   pcm_uint now_ps);

/**
 * pcm_async_feed_burst() - pcm_async_feed() over a burst, prefetching ahead.
 * @as: the shell.
 * @evs: the events, each with its flow and time.
 * @n: how many.
 *
 * Return: the number of events fed; fewer than @n means evs[return] names an
 * unknown flow, and it and the rest were not fed.
 */
uint32_t pcm_async_feed_burst(struct pcm_async *as, const struct pcm_flow_event *evs, uint32_t n);

/**
 * pcm_async_tick() - evaluate @flow's triggers at @now_ps with no new sample,
 * so that ELAPSED_TIME timers fire without traffic.
 *
 * Return: as pcm_async_feed().
 */
int pcm_async_tick(struct pcm_async *as, uint32_t flow, pcm_uint now_ps);

/**
 * pcm_async_control() - read @flow's control of @type (the first the spec
 * declares of that type) as last published by its worker. Lock-free.
 *
 * Return: 0, -ERANGE for an unknown flow, -ENOENT if the package has no such control.
 */
int pcm_async_control(const struct pcm_async *as, uint32_t flow, pcm_control_t type,
		      pcm_uint *value);

/**
 * pcm_async_poll() - run worker @worker's loop body on the calling thread:
 * dequeue up to @budget pending flows and process them.
 * @as: a shell whose workers are not running (otherwise -EBUSY).
 * @worker: which worker's queue.
 * @budget: most flows to process.
 *
 * For tests, single-threaded use and datapaths that run their own control
 * plane. Must not run concurrently with another poll of the same worker.
 *
 * Return: flows processed (0 if none was pending), -EINVAL, -EBUSY.
 */
int pcm_async_poll(struct pcm_async *as, uint32_t worker, uint32_t budget);

/**
 * pcm_async_flow_peek() - copy @flow's state in the handler's layout (see
 * pcmh.h): slots 0 and 1 zero, then the signals' current values, controls
 * and variables; pkg->handler_slots slots in all.
 * @as: the shell; its workers must be stopped and no datapath feeding.
 * @flow: the flow.
 * @out: pkg->handler_slots slots.
 *
 * Return: 0, -ERANGE, -EBUSY if the workers run.
 */
int pcm_async_flow_peek(const struct pcm_async *as, uint32_t flow, pcm_uint *out);

/**
 * pcm_async_stats() - read @worker's counters, or their sum over all workers
 * when @worker is UINT32_MAX. Safe while the workers run (each counter is
 * read atomically, the set is not a snapshot).
 *
 * Return: 0, -EINVAL for an unknown worker.
 */
int pcm_async_stats(const struct pcm_async *as, uint32_t worker, struct pcm_async_stats *out);

/* Lowest skew counted in histogram bucket @b (see PCM_ASYNC_SKEW_BUCKETS). */
uint64_t pcm_async_skew_bucket_floor(unsigned b);

/* Bytes of per-flow state: the shared record plus the worker's private part. */
size_t pcm_async_bytes_per_flow(const struct pcm_async *as);

uint32_t pcm_async_n_flows(const struct pcm_async *as);
uint32_t pcm_async_n_workers(const struct pcm_async *as);
enum pcm_async_mode pcm_async_get_mode(const struct pcm_async *as);
const struct pcm_package *pcm_async_package(const struct pcm_async *as);

/* "relaxed", "locked", "bounded"; NULL for an unknown mode. */
const char *pcm_async_mode_name(enum pcm_async_mode mode);

/* Return: 0 and *out set, or -EINVAL for a name that is not a mode. */
int pcm_async_mode_parse(const char *name, enum pcm_async_mode *out);

#endif /* PCM_ASYNC_H */
