/* SPDX-License-Identifier: MIT */
/*
 * sweep_cell.h - one cell of a sweep (sweep_cell.c): the pcm-sim command
 * that runs it, the key that tells its record from another cell's, its
 * label, and its record in DIR/cells/.
 */
#ifndef PCM_SIM_SWEEP_CELL_H
#define PCM_SIM_SWEEP_CELL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sweep_grid.h"

/* How a cell's run ended: its wait status, wall time, and what it printed. */
struct sweep_outcome {
	int wait_status;
	double started;   /* Unix time, s */
	double wall_s;
	const char *out;  /* its stdout: the --json line */
	const char *err;  /* its stderr */
};

/**
 * sweep_cell_argv() - the command that runs cell @c: @self (pcm-sim) with the
 * scenario, --json, and the cell's --policy, --seed and --set options.
 * @g: the grid.
 * @c: the cell.
 * @self: the pcm-sim program.
 *
 * Return: a NULL-terminated vector (free with sweep_argv_free()), or NULL
 * without memory.
 */
char **sweep_cell_argv(const struct sweep_grid *g, const struct sweep_cell *c, const char *self);

/**
 * sweep_argv_free() - free a vector from sweep_cell_argv().
 * @argv: the vector, or NULL.
 */
void sweep_argv_free(char **argv);

/**
 * sweep_cell_key() - a hash of everything the cell's result depends on: the
 * scenario's file and text, the settings, the policy (a file's contents, a
 * build's sources), the seed.
 * @g: the grid.
 * @c: the cell.
 *
 * Return: the key.
 */
uint64_t sweep_cell_key(const struct sweep_grid *g, const struct sweep_cell *c);

/**
 * sweep_cell_label() - the cell in a few words, "incast-8.yaml swift seed 2
 * topology.link_rate=400Gbps", for the log.
 * @g: the grid.
 * @c: the cell.
 * @buf: the text, @len bytes.
 */
void sweep_cell_label(const struct sweep_grid *g, const struct sweep_cell *c, char *buf,
		      size_t len);

/**
 * sweep_cell_path() - DIR/cells/NNNNNN.json, or with @suffix ".out", ".err"
 * (the run's output while it runs).
 * @dir: the sweep's directory.
 * @index: the cell.
 * @suffix: ".json", ".out", ".err", ".tmp".
 * @buf: the path, @len bytes.
 */
void sweep_cell_path(const char *dir, size_t index, const char *suffix, char *buf, size_t len);

/**
 * sweep_cell_done() - whether @dir holds this cell's record (its key matches).
 * @dir: the sweep's directory.
 * @g: the grid.
 * @c: the cell.
 *
 * Return: true if it does.
 */
bool sweep_cell_done(const char *dir, const struct sweep_grid *g, const struct sweep_cell *c);

/**
 * sweep_cell_record() - write the cell's record, one JSON line: its
 * parameters, how it ended ("status": ok, incomplete (flows left at the
 * stop time), failed or crashed; "exit", "error", "started", "cell_wall_s"),
 * the command,
 * and the run's --json result. Written to a temporary file and renamed, so
 * a record is whole or absent.
 * @dir: the sweep's directory.
 * @g: the grid.
 * @c: the cell.
 * @o: how its run ended.
 * @status: set to the status written.
 *
 * Return: 0, -errno.
 */
int sweep_cell_record(const char *dir, const struct sweep_grid *g, const struct sweep_cell *c,
		      const struct sweep_outcome *o, const char **status);

#endif /* PCM_SIM_SWEEP_CELL_H */
