/* SPDX-License-Identifier: MIT */
/*
 * shell.h - the synchronous shell: a package's pipeline run inline on the
 * datapath thread, over one record per flow.
 *
 * A datapath creates a shell for N flows, feeds it events (a value per signal
 * type plus a valid mask, and `now` in ps) and reads controls back. Feeding
 * accumulates, evaluates triggers and, when one fires, runs the handler in
 * place on the flow's record and commits its writes. Nothing here blocks,
 * allocates or reads a clock after creation. Not thread-safe per flow: one
 * datapath thread owns a flow.
 */
#ifndef PCM_SHELL_H
#define PCM_SHELL_H

#include <errno.h>
#include <stdint.h>

#include "package.h"
#include "spec.h"
#include "target.h"

/*
 * What only the shell knows. Events fed are not counted here: the datapath
 * knows them, and a per-event counter on the fast path costs about 2% of a
 * Swift call (bench/RESULTS.md).
 */
struct pcm_shell_stats {
	uint64_t handler_calls;  /* handler invocations */
	uint64_t handler_errors; /* invocations that returned PCM_ERROR */
};

struct pcm_shell {
	const struct pcm_package *pkg;
	pcm_uint *records;      /* n_flows * record_slots */
	uint32_t n_flows;
	uint32_t record_slots;
	size_t records_bytes;
	struct pcm_shell_stats stats;
};

/**
 * pcm_shell_create() - a shell running @pkg for @n_flows flows.
 * @pkg: a validated package (pcm_package_open()).
 * @target: the datapath's capability descriptor; the package is checked
 *          against it. NULL skips the check (tests, benchmarks).
 * @n_flows: number of flow records, 1 .. PCM_SHELL_MAX_FLOWS.
 * @now_ps: time base for ELAPSED_TIME epochs.
 * @out: the new shell.
 * @diag: why the package was rejected, naming the missing signal or control.
 *
 * Return: 0, -EINVAL (bad arguments or package), -ENOTSUP (@target lacks a
 * signal or control the package needs), -ENOMEM.
 */
int pcm_shell_create(const struct pcm_package *pkg, const struct pcm_target *target,
		     uint32_t n_flows, pcm_uint now_ps, struct pcm_shell **out,
		     struct pcm_diag *diag);

void pcm_shell_destroy(struct pcm_shell *shell);

#define PCM_SHELL_MAX_FLOWS (1u << 26)

static inline pcm_uint *pcm_shell_record(struct pcm_shell *shell, uint32_t flow)
{
	return shell->records + (size_t)flow * shell->record_slots;
}

/**
 * pcm_shell_feed() - feed one event for @flow.
 *
 * Return: 1 if the handler ran, 0 if no trigger fired, -ERANGE for an unknown
 * flow, -EIO if the handler returned PCM_ERROR (its writes are kept).
 */
static inline int pcm_shell_feed(struct pcm_shell *shell, uint32_t flow,
				 const struct pcm_event *ev, pcm_uint now_ps)
{
	int rc;

	if (__builtin_expect(flow >= shell->n_flows, 0))
		return -ERANGE;
	rc = shell->pkg->ops.feed(pcm_shell_record(shell, flow), ev, now_ps);
	shell->stats.handler_calls += rc != 0;
	if (__builtin_expect(rc < 0, 0))
		shell->stats.handler_errors++;
	return rc;
}

/**
 * pcm_shell_feed_burst() - feed a burst of events, each to its own flow, with
 * one call into the package (the generated loop inlines the pipeline).
 *
 * Return: the number of events processed; fewer than @n means evs[return]
 * names an unknown flow and it and the rest were not fed.
 */
static inline uint32_t pcm_shell_feed_burst(struct pcm_shell *shell,
					    const struct pcm_flow_event *evs, uint32_t n)
{
	return shell->pkg->ops.feed_burst(shell->records, shell->n_flows, evs, n,
					  &shell->stats.handler_calls, &shell->stats.handler_errors);
}

/**
 * pcm_shell_tick() - evaluate @flow's triggers at @now_ps with no new sample,
 * so that ELAPSED_TIME timers fire without traffic.
 *
 * Return: as pcm_shell_feed().
 */
int pcm_shell_tick(struct pcm_shell *shell, uint32_t flow, pcm_uint now_ps);

/**
 * pcm_shell_control() - read @flow's control of @type (the first the spec
 * declares of that type).
 *
 * Return: 0, -ERANGE for an unknown flow, -ENOENT if the package has no such control.
 */
int pcm_shell_control(const struct pcm_shell *shell, uint32_t flow, pcm_control_t type,
		      pcm_uint *value);

/* Re-initialise @flow's record, e.g. for a new connection in a reused slot. */
int pcm_shell_flow_reset(struct pcm_shell *shell, uint32_t flow, pcm_uint now_ps);

/* Bytes of per-flow state. */
static inline size_t pcm_shell_bytes_per_flow(const struct pcm_shell *shell)
{
	return (size_t)shell->record_slots * sizeof(pcm_uint);
}

#endif /* PCM_SHELL_H */
