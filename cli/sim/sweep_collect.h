/* SPDX-License-Identifier: MIT */
/*
 * sweep_collect.h - a sweep's directory: its manifest of cells, and the
 * merge of the cells' records into results.jsonl and summary.csv
 * (sweep_collect.c).
 */
#ifndef PCM_SIM_SWEEP_COLLECT_H
#define PCM_SIM_SWEEP_COLLECT_H

#include <stddef.h>

#include "sweep_grid.h"

struct sweep_collected {
	size_t cells;     /* in the manifest */
	size_t present;   /* with a record of the manifest's key */
	size_t ok, failed;
	size_t first_missing; /* a cell without a record, if any */
};

/**
 * sweep_manifest_write() - DIR/manifest.tsv: the grid, and each cell's index,
 * key and label, which --collect merges by (written whole or not at all).
 * @dir: the sweep's directory.
 * @g: the grid.
 *
 * Return: 0, -errno.
 */
int sweep_manifest_write(const char *dir, const struct sweep_grid *g);

/**
 * sweep_collect() - merge the records of the manifest's cells, in cell
 * order, into DIR/results.jsonl (the records) and DIR/summary.csv (the same
 * flat: a column per parameter, set: key and result value; RFC 4180).
 * @dir: the sweep's directory.
 * @c: what was found.
 *
 * Return: 0, -ENOENT (no manifest: said on stderr), -errno.
 */
int sweep_collect(const char *dir, struct sweep_collected *c);

#endif /* PCM_SIM_SWEEP_COLLECT_H */
