/* SPDX-License-Identifier: MIT */
/*
 * sweep_run.h - running a sweep's cells on every core (sweep_run.c).
 */
#ifndef PCM_SIM_SWEEP_RUN_H
#define PCM_SIM_SWEEP_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "sweep_grid.h"

struct sweep_run_opts {
	const char *dir;      /* the sweep's directory */
	const char *self;     /* the pcm-sim program each cell runs */
	unsigned jobs;        /* cells at once */
	bool resume;          /* skip the cells whose record is there */
	bool quiet;           /* no progress */
	size_t shard, shards; /* run the cells whose index is shard modulo shards */
	/*
	 * If set, called once when the last cells run with a slot of the -j
	 * free (not at -j 1, nor when no cell runs), with @arg.
	 */
	void (*slot_idle)(void *arg);
	void *arg;
};

struct sweep_tally {
	size_t cells;         /* of this shard */
	size_t skipped;       /* their record was there (--resume) */
	size_t ok, failed;    /* of those run now (failed: any status but ok) */
};

/**
 * sweep_run() - run the cells of @g (those of o->shard) in @o->jobs child
 * processes at once, each pcm-sim on one cell (sweep_cell_argv()), its
 * record written when it ends. A cell that fails or crashes is recorded as
 * such; the others go on.
 * @g: the grid.
 * @o: how.
 * @t: what happened.
 *
 * Return: 0 (whatever the cells did), -errno when a child could not be
 * started or a record not written (said on stderr).
 */
int sweep_run(const struct sweep_grid *g, const struct sweep_run_opts *o, struct sweep_tally *t);

/**
 * sweep_cpus() - the CPUs this process may run on.
 *
 * Return: at least 1.
 */
unsigned sweep_cpus(void);

#endif /* PCM_SIM_SWEEP_RUN_H */
