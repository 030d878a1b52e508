/* SPDX-License-Identifier: MIT */
/*
 * sweep_grid.h - a sweep's grid file and the cells of its product
 * (sweep_grid.c): scenarios x configurations x each set: key's values x
 * policies x seeds.
 */
#ifndef PCM_SIM_SWEEP_GRID_H
#define PCM_SIM_SWEEP_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The grid's set: keys, at most. */
#define SWEEP_MAX_AXES 16
/* No index: the grid does not give this axis (the scenario's own value is used). */
#define SWEEP_NONE ((size_t)-1)

/* One value of a scenario key: an alternative of a set: key, or a configuration's. */
struct sweep_value {
	char *key;       /* the key path, "topology.link_rate" */
	char *text;      /* YAML, as written, its first line indented to its column */
	char *label;     /* the value on one line, for tables and plots */
	uint32_t line;   /* of the value in the grid file */
	uint32_t key_line, key_col;
};

/* A set: key and its values, one axis of the product. */
struct sweep_axis {
	char *key;
	struct sweep_value *values;
	size_t n;
};

/* A configuration: several keys set together, under a name. */
struct sweep_config {
	char *name;
	struct sweep_value *sets;
	size_t n;
};

struct sweep_scenario {
	char *written;   /* as the grid wrote it */
	char *path;      /* absolute */
	uint64_t hash;   /* of its text: a changed file makes its cells new ones */
};

struct sweep_policy {
	char *name;      /* the label: a built-in's name, a file as written, a build's name */
	char *arg;       /* for --policy: the name, or an absolute path */
	char **build;    /* a package to build with pcmc: SPEC HANDLER [EXTRA...], absolute */
	size_t n_build;
	char *fabric;    /* its --fabric, absolute, or NULL */
	uint64_t hash;   /* of the file, or of a build's sources; 0 for a built-in */
	uint32_t line, col; /* of its entry in the grid file */
};

struct sweep_grid {
	char *path;      /* the grid file as given */
	char *name;      /* name:, or the file's name without .yaml */
	struct sweep_scenario *scenarios;
	size_t n_scenarios;
	struct sweep_config *configs;  /* n_configs 0: none */
	size_t n_configs;
	struct sweep_axis axes[SWEEP_MAX_AXES];
	size_t n_axes;
	struct sweep_policy *policies; /* n_policies 0: each scenario's own */
	size_t n_policies;
	uint64_t *seeds;               /* n_seeds 0: each scenario's own */
	size_t n_seeds;
	size_t n_cells;
};

/* One cell: an index into each axis of the grid (SWEEP_NONE where it gives none). */
struct sweep_cell {
	size_t index;
	size_t scenario, config, policy, seed;
	size_t value[SWEEP_MAX_AXES];
};

/**
 * sweep_grid_load() - read and check a grid file: its keys, and every
 * scenario with every configuration and set: combination laid over it (read
 * by the scenario reader, so that a key or value it rejects is reported at
 * the grid's line and column), every policy.
 * @path: the grid file; the files it names are relative to its directory.
 * @out: the grid (free with sweep_grid_free()).
 * @err: "file:line:col: key: what is wrong" on failure, @err_len bytes.
 *
 * Return: 0, -EINVAL, -ENOENT, -ENOMEM.
 */
int sweep_grid_load(const char *path, struct sweep_grid **out, char *err, size_t err_len);

/**
 * sweep_grid_free() - free a grid.
 * @g: the grid, or NULL.
 */
void sweep_grid_free(struct sweep_grid *g);

/**
 * sweep_cell_of() - cell @index of @g: the scenario varies slowest, then the
 * configuration, the set: keys in order, the policy, and the seed fastest.
 * @g: the grid.
 * @index: 0 .. g->n_cells - 1.
 * @c: the cell.
 */
void sweep_cell_of(const struct sweep_grid *g, size_t index, struct sweep_cell *c);

/**
 * sweep_hash() - FNV-1a, 64 bits, of @len bytes at @p, continuing @h
 * (start with SWEEP_HASH_INIT).
 */
#define SWEEP_HASH_INIT 0xcbf29ce484222325ull
uint64_t sweep_hash(uint64_t h, const void *p, size_t len);

/**
 * sweep_hash_file() - sweep_hash() of the contents of file @path.
 * @path: the file.
 * @out: the hash.
 *
 * Return: 0, -errno.
 */
int sweep_hash_file(const char *path, uint64_t *out);

#endif /* PCM_SIM_SWEEP_GRID_H */
