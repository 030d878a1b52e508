// SPDX-License-Identifier: MIT
/*
 * sweep_collect.c - a sweep's directory, put together. manifest.tsv lists
 * the grid's cells with their keys, so that the merge takes only the
 * records of this grid (a record left by an earlier grid in the same
 * directory, or by a changed scenario, has another key); results.jsonl is
 * the records in cell order; summary.csv has one row per record and one
 * column per leaf of the records (parameters, the set: keys by their own
 * names, then the run's --json values, nested keys joined by '.'), quoted
 * as RFC 4180 says.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep_cell.h"
#include "sweep_collect.h"
#include "sweep_json.h"

int sweep_manifest_write(const char *dir, const struct sweep_grid *g)
{
	char path[4096], tmp[4096], label[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/manifest.tsv", dir);
	snprintf(tmp, sizeof(tmp), "%s/manifest.tsv.%ld", dir, (long)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "# pcm-sim sweep %s: %zu cells (cell, key, label)\n", g->path, g->n_cells);
	for (size_t i = 0; i < g->n_cells; i++) {
		struct sweep_cell c;

		sweep_cell_of(g, i, &c);
		sweep_cell_label(g, &c, label, sizeof(label));
		fprintf(f, "%zu\t%016" PRIx64 "\t%s\n", i, sweep_cell_key(g, &c), label);
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		int e = errno;

		unlink(tmp);
		return -e;
	}
	return 0;
}

/* The manifest's keys, by cell. Return: 0, -errno. */
static int read_manifest(const char *dir, uint64_t **keys, size_t *n)
{
	char path[4096], line[4096];
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/manifest.tsv", dir);
	f = fopen(path, "r");
	if (!f) {
		int e = errno;

		fprintf(stderr, "pcm-sim sweep: %s: %s (not a sweep's directory: pcm-sim sweep "
				"and --emit write it)\n",
			path, strerror(e));
		return -e;
	}
	*keys = NULL;
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		size_t cell;
		uint64_t key;

		if (line[0] == '#' || sscanf(line, "%zu\t%" SCNx64, &cell, &key) != 2)
			continue;
		if (cell != *n)
			break;
		if (*n == cap) {
			uint64_t *k = realloc(*keys, (cap = cap ? cap * 2 : 256) * sizeof(*k));

			if (!k) {
				fclose(f);
				return -ENOMEM;
			}
			*keys = k;
		}
		(*keys)[(*n)++] = key;
	}
	fclose(f);
	return 0;
}

/* Cell @i's record line if it has the manifest's key, else NULL. */
static char *read_record(const char *dir, size_t i, uint64_t key)
{
	char path[4096], want[48];
	size_t cap = 0;
	char *line = NULL;
	FILE *f;

	sweep_cell_path(dir, i, ".json", path, sizeof(path));
	f = fopen(path, "r");
	if (!f)
		return NULL;
	snprintf(want, sizeof(want), "\"key\":\"%016" PRIx64 "\"", key);
	if (getline(&line, &cap, f) < 0 || !strstr(line, want)) {
		free(line);
		line = NULL;
	}
	fclose(f);
	return line;
}

/* summary.csv's columns, and one row's values by column. */
struct table {
	char **names;
	size_t n, cap;
	char **row;       /* values of the row being read, by column */
	bool adding;      /* a new leaf name becomes a column */
};

/* A leaf's column: set: keys by their own names, the result's beside the parameters. */
static const char *column_of(const char *path)
{
	static const char *const skip[] = { "cells", "key", "command" };

	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strcmp(path, skip[i]) == 0)
			return NULL;
	if (strncmp(path, "set.", 4) == 0)
		return path + 4;
	if (strncmp(path, "result.", 7) == 0)
		return path + 7;
	return path;
}

static int add_column(struct table *t, const char *name)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **a = realloc(t->names, cap * sizeof(*a));
		char **r = a ? realloc(t->row, cap * sizeof(*r)) : NULL;

		if (a)
			t->names = a;
		if (!r)
			return -ENOMEM;
		t->row = r;
		t->cap = cap;
	}
	t->names[t->n] = strdup(name);
	t->row[t->n] = NULL;
	return t->names[t->n++] ? 0 : -ENOMEM;
}

static int leaf(void *ctx, const char *path, const char *value)
{
	struct table *t = ctx;
	const char *col = column_of(path);
	size_t i;

	if (!col)
		return 0;
	for (i = 0; i < t->n; i++)
		if (strcmp(t->names[i], col) == 0)
			break;
	if (i == t->n && (!t->adding || add_column(t, col) < 0))
		return t->adding ? -ENOMEM : 0;
	/* a parameter and the result's value of the same name agree: keep the first */
	if (!t->row[i] && !(t->row[i] = strdup(value)))
		return -ENOMEM;
	return 0;
}

static void clear_row(struct table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->row[i]);
		t->row[i] = NULL;
	}
}

/* One CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180). */
static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_row(FILE *f, char *const *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		csv_field(f, fields[i] ? fields[i] : "");
	}
	fputs("\r\n", f);
}

static int write_outputs(const char *dir, char **records, size_t n)
{
	char jpath[4096], cpath[4096];
	struct table t = { .adding = true };
	FILE *jf, *cf;
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		if (records[i])
			rc = sweep_json_leaves(records[i], leaf, &t) < 0 ? -EINVAL : 0;
		clear_row(&t);
	}
	t.adding = false;
	snprintf(jpath, sizeof(jpath), "%s/results.jsonl", dir);
	snprintf(cpath, sizeof(cpath), "%s/summary.csv", dir);
	jf = rc == 0 ? fopen(jpath, "w") : NULL;
	cf = jf ? fopen(cpath, "w") : NULL;
	if (rc == 0 && (!jf || !cf))
		rc = -errno;
	if (cf)
		csv_row(cf, t.names, t.n);
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!records[i])
			continue;
		fputs(records[i], jf);
		if (sweep_json_leaves(records[i], leaf, &t) == 0)
			csv_row(cf, t.row, t.n);
		clear_row(&t);
	}
	if (jf && fclose(jf) != 0 && rc == 0)
		rc = -EIO;
	if (cf && fclose(cf) != 0 && rc == 0)
		rc = -EIO;
	for (size_t i = 0; i < t.n; i++)
		free(t.names[i]);
	free(t.names);
	free(t.row);
	return rc;
}

int sweep_collect(const char *dir, struct sweep_collected *c)
{
	uint64_t *keys = NULL;
	char **records;
	size_t n = 0;
	int rc = read_manifest(dir, &keys, &n);

	memset(c, 0, sizeof(*c));
	if (rc < 0)
		return rc;
	c->cells = n;
	c->first_missing = SWEEP_NONE;
	records = calloc(n ? n : 1, sizeof(*records));
	if (!records) {
		free(keys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		records[i] = read_record(dir, i, keys[i]);
		if (!records[i]) {
			if (c->first_missing == SWEEP_NONE)
				c->first_missing = i;
			continue;
		}
		c->present++;
		if (strstr(records[i], "\"status\":\"ok\""))
			c->ok++;
		else
			c->failed++;
	}
	rc = write_outputs(dir, records, n);
	for (size_t i = 0; i < n; i++)
		free(records[i]);
	free(records);
	free(keys);
	return rc;
}
