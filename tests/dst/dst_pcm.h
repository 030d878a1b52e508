/* SPDX-License-Identifier: MIT */
/*
 * dst_pcm.h - a PCM binding driven to its limits through its ops table, as
 * dst_core's F_LIMITS ingredient: more flows than its first flow table holds,
 * then max_flows and one more, a package with a timer trigger ticked with no
 * traffic, several asynchronous workers (run inline, deterministic) on a
 * NUMA node, live swaps of a flow's CC and LB packages, the per-flow queries
 * on flows open, closed and out of range, and an asynchronous binding's
 * worker threads started and stopped around one flow whose swap makes the
 * LB shell while they run (nothing a thread does reaches the trace).
 */
#ifndef DST_PCM_H
#define DST_PCM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a run draws (dst_core's own stream for the ingredient). */
struct dst_pcm_plan {
	uint32_t max_flows; /* > 64: the flow table grows past its first size */
	uint32_t workers;   /* asynchronous workers, 2 .. 4 */
	bool lb;            /* an LB package beside the CC package */
	uint32_t ticks;     /* timer ticks per flow, 1 .. 8 */
};

/**
 * dst_pcm_limits() - one run of the ingredient: a synchronous binding and an
 * asynchronous inline one, each driven as @plan says, then a threaded one.
 * @plan: the draws.
 * @why: on failure, which check failed.
 * @why_len: its size.
 *
 * Return: 0 when every check held, -1 otherwise.
 */
int dst_pcm_limits(const struct dst_pcm_plan *plan, char *why, size_t why_len);

#endif /* DST_PCM_H */
