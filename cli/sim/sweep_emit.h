/* SPDX-License-Identifier: MIT */
/*
 * sweep_emit.h - scripts that run a sweep beyond this machine
 * (sweep_emit.c): a Slurm job array, or GNU parallel over ssh.
 */
#ifndef PCM_SIM_SWEEP_EMIT_H
#define PCM_SIM_SWEEP_EMIT_H

#include <stddef.h>
#include <stdio.h>

struct sweep_emit {
	const char *self;         /* pcm-sim, absolute */
	const char *grid;         /* the grid file, absolute */
	const char *name;         /* the grid's name */
	const char *dir;          /* the shared directory, absolute */
	size_t cells, shards;
	unsigned jobs;            /* cells at once in a shard (Slurm: its CPUs) */
	const char *sshloginfile; /* parallel: the machines, or NULL for this one */
};

/**
 * sweep_emit_slurm() - a script for sbatch: a job array of e->shards tasks,
 * task I running shard I/shards of the grid into e->dir with --resume (a
 * task run again continues), its output in e->dir/slurm/.
 * @f: where to write it.
 * @e: the sweep.
 */
void sweep_emit_slurm(FILE *f, const struct sweep_emit *e);

/**
 * sweep_emit_parallel() - a shell script that runs the shards with GNU
 * parallel, as many at once on each machine as it has cores (on the
 * machines of --sshloginfile, or here), then collects.
 * @f: where to write it.
 * @e: the sweep.
 */
void sweep_emit_parallel(FILE *f, const struct sweep_emit *e);

#endif /* PCM_SIM_SWEEP_EMIT_H */
