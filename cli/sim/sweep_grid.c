// SPDX-License-Identifier: MIT
/*
 * sweep_grid.c - reading a sweep's grid file (pcm-sim sweep, pcm-sim(1)):
 *
 *   name: incast                      # optional: the file's name
 *   scenarios: [../incast-8.yaml]     # relative to the grid's directory
 *   configurations:                   # optional: keys set together, named
 *     - {name: small, traffic.bytes: 64KB}
 *   set:                              # optional: each key's values, an axis
 *     topology.link_rate: [100Gbps, 400Gbps]
 *   policies: [swift, ./my.so, {name: mine, build: [my.yaml, my.c], fabric: f.yaml}]
 *   seeds: [1, 2]
 *
 * The grid is the product of its lists. A set: or configuration key is a
 * key path into the scenario and its value is YAML as a scenario file
 * writes it: both are checked here by the scenario reader itself, each
 * value laid over each scenario (uet_scenario_load_set()), so that a bad
 * key or value is reported at the grid's line and column. Every other
 * mistake is reported as "file:line:col: key: what is wrong" too.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "builtin.h"
#include "sweep_grid.h"
#include "uet.h"

struct gparser {
	yaml_document_t doc;
	const char *file;
	const char *text;
	size_t len;
	char dir[PATH_MAX];      /* of the grid, absolute */
	char key[160];           /* the key being read, for messages */
	char *err;
	size_t err_len;
	struct sweep_grid *g;
};

static int gfail_at(struct gparser *p, size_t line, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int gfail(struct gparser *p, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int vgfail(struct gparser *p, size_t line, size_t col, const char *fmt, va_list ap)
{
	char what[512];

	vsnprintf(what, sizeof(what), fmt, ap);
	snprintf(p->err, p->err_len, "%s:%zu:%zu: %s: %s", p->file, line, col,
		 p->key[0] ? p->key : "(top)", what);
	return -EINVAL;
}

/* The mistake "@what" of the current key, at @line:@col of the grid (1-based). */
static int gfail_at(struct gparser *p, size_t line, size_t col, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vgfail(p, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

/* The mistake "@what" of the current key, at node @n (NULL: the file's start). */
static int gfail(struct gparser *p, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vgfail(p, n ? n->start_mark.line + 1 : 1, n ? n->start_mark.column + 1 : 1, fmt, ap);
	va_end(ap);
	return rc;
}

uint64_t sweep_hash(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int sweep_hash_file(const char *path, uint64_t *out)
{
	FILE *f = fopen(path, "rb");
	unsigned char buf[65536];
	uint64_t h = SWEEP_HASH_INIT;
	size_t n;

	if (!f)
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		h = sweep_hash(h, buf, n);
	n = (size_t)ferror(f);
	fclose(f);
	*out = h;
	return n ? -EIO : 0;
}

static yaml_node_t *node(struct gparser *p, int index)
{
	return yaml_document_get_node(&p->doc, index);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* A scalar, copied. Return: 0, -EINVAL, -ENOMEM. */
static int want_string(struct gparser *p, const yaml_node_t *n, char **out)
{
	const char *s = scalar(n);

	if (!s || !s[0])
		return gfail(p, n, "expected a non-empty single value");
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

static size_t n_items(const yaml_node_t *n)
{
	return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

/* The items of @n: a list's, or @n itself as a list of one (a scalar or a mapping). */
static size_t items_of(struct gparser *p, yaml_node_t *n, yaml_node_t ***out)
{
	size_t count = n->type == YAML_SEQUENCE_NODE ? n_items(n) : 1;
	yaml_node_t **a = calloc(count ? count : 1, sizeof(*a));

	*out = a;
	if (!a)
		return 0;
	if (n->type != YAML_SEQUENCE_NODE) {
		a[0] = n;
		return 1;
	}
	for (size_t i = 0; i < count; i++)
		a[i] = node(p, n->data.sequence.items.start[i]);
	return count;
}

/* The byte offset of character @index of the text (libyaml's marks count characters). */
static size_t byte_at(const struct gparser *p, size_t index)
{
	size_t b = 0;

	for (size_t c = 0; b < p->len && c < index; c++)
		for (b++; b < p->len && ((unsigned char)p->text[b] & 0xc0) == 0x80; b++)
			;
	return b;
}

/*
 * The grid's text of value @n as YAML for --set: its bytes in the file, the
 * first line indented to its column so that a block value's lines keep
 * their places; trailing blanks dropped.
 */
static char *value_text(struct gparser *p, const yaml_node_t *n)
{
	size_t start = byte_at(p, n->start_mark.index), end = byte_at(p, n->end_mark.index);
	size_t col = n->start_mark.column;
	char *t;

	while (end > start && strchr(" \t\r\n", p->text[end - 1]))
		end--;
	t = malloc(col + (end - start) + 1);
	if (!t)
		return NULL;
	memset(t, ' ', col);
	memcpy(t + col, p->text + start, end - start);
	t[col + end - start] = '\0';
	return t;
}

/* The value on one line: a scalar's text, else its YAML with each run of blanks one space. */
static char *value_label(struct gparser *p, const yaml_node_t *n)
{
	char *t, *w;

	if (scalar(n))
		return strdup(scalar(n));
	t = value_text(p, n);
	if (!t)
		return NULL;
	w = t;
	for (const char *r = t; *r; r++) {
		bool blank = strchr(" \t\r\n", *r) != NULL;

		if (blank && (w == t || w[-1] == ' '))
			continue;
		*w++ = blank ? ' ' : *r;
	}
	while (w > t && w[-1] == ' ')
		w--;
	*w = '\0';
	return t;
}

static int make_value(struct gparser *p, const char *key, const yaml_node_t *kn,
		      const yaml_node_t *vn, struct sweep_value *v)
{
	v->key = strdup(key);
	v->text = value_text(p, vn);
	v->label = value_label(p, vn);
	v->line = (uint32_t)vn->start_mark.line + 1;
	v->key_line = (uint32_t)kn->start_mark.line + 1;
	v->key_col = (uint32_t)kn->start_mark.column + 1;
	return v->key && v->text && v->label ? 0 : -ENOMEM;
}

static void free_value(struct sweep_value *v)
{
	free(v->key);
	free(v->text);
	free(v->label);
}

/* @rel as an absolute path: relative paths are beside the grid. */
static char *beside_grid(struct gparser *p, const char *rel)
{
	size_t n = strlen(p->dir) + strlen(rel) + 2;
	char *out = malloc(n);

	if (out && rel[0] == '/')
		snprintf(out, n, "%s", rel);
	else if (out)
		snprintf(out, n, "%s/%s", p->dir, rel);
	return out;
}

/* A file the grid names, made absolute, readable, and its hash. */
static int grid_file(struct gparser *p, const yaml_node_t *n, char **path, uint64_t *hash)
{
	const char *s = scalar(n);
	uint64_t h = 0;
	int rc;

	if (!s || !s[0])
		return gfail(p, n, "expected a file name");
	*path = beside_grid(p, s);
	if (!*path)
		return -ENOMEM;
	rc = sweep_hash_file(*path, &h);
	if (rc < 0)
		return gfail(p, n, "%s: %s (paths are relative to the grid's directory)", *path,
			     strerror(-rc));
	if (hash)
		*hash = h;
	return 0;
}

/*
 * A key that mapping @map (a YAML mapping) gives twice: the second is an
 * error at its place, naming the first's ("@prefix" before the key in the
 * message). libyaml keeps both, and the later would silently win or add.
 */
static int unique_keys(struct gparser *p, yaml_node_t *map, const char *prefix)
{
	for (yaml_node_pair_t *a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top;
	     a++) {
		const yaml_node_t *ka = node(p, a->key);

		for (yaml_node_pair_t *b = map->data.mapping.pairs.start; b < a; b++) {
			const yaml_node_t *kb = node(p, b->key);

			if (!scalar(ka) || !scalar(kb) || strcmp(scalar(ka), scalar(kb)) != 0)
				continue;
			snprintf(p->key, sizeof(p->key), "%s%s", prefix, scalar(ka));
			return gfail(p, ka, "given twice (first at %zu:%zu)",
				     kb->start_mark.line + 1, kb->start_mark.column + 1);
		}
	}
	return 0;
}

/*
 * A list of the grid (or one value, a list of one): @size bytes per item in
 * a new array at *@array, *@count of them, each read by @item with its key,
 * "@name[i]", for messages. A name an earlier item has is an error.
 */
static int read_list(struct gparser *p, yaml_node_t *vn, const char *name, size_t size,
		     void **array, size_t *count,
		     int (*item)(struct gparser *p, yaml_node_t *n, size_t i, void *elem),
		     const char *(*name_of)(const void *elem))
{
	yaml_node_t **items;
	size_t n = items_of(p, vn, &items);
	char *a;
	int rc = 0;

	if (!items)
		return -ENOMEM;
	a = calloc(n ? n : 1, size);
	*array = a;
	if (!a)
		rc = -ENOMEM;
	else if (!n)
		rc = gfail(p, vn, "an empty list");
	for (size_t i = 0; i < n && rc == 0; i++) {
		snprintf(p->key, sizeof(p->key), "%s[%zu]", name, i);
		*count = i + 1;
		rc = item(p, items[i], i, a + i * size);
		for (size_t k = 0; rc == 0 && name_of && k < i; k++)
			if (strcmp(name_of(a + k * size), name_of(a + i * size)) == 0)
				rc = gfail(p, items[i], "'%s' is used twice", name_of(a + i * size));
	}
	free(items);
	return rc;
}

/* Are @a and @b one file (by device and inode)? */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static int read_scenario(struct gparser *p, yaml_node_t *n, size_t i, void *elem)
{
	struct sweep_scenario *s = elem;
	int rc;

	s->written = dup_or_null(scalar(n));
	rc = grid_file(p, n, &s->path, &s->hash);
	for (size_t k = 1; rc == 0 && k <= i; k++)
		if (same_file(s[-(ptrdiff_t)k].path, s->path))
			rc = gfail(p, n, "'%s' is scenarios[%zu] again", s->written ? s->written : "",
				   i - k);
	return rc;
}

static int read_scenarios(struct gparser *p, yaml_node_t *vn)
{
	return read_list(p, vn, "scenarios", sizeof(struct sweep_scenario),
			 (void **)&p->g->scenarios, &p->g->n_scenarios, read_scenario, NULL);
}

static bool is_path(const char *name)
{
	size_t n = strlen(name);

	return strchr(name, '/') || (n > 3 && strcmp(name + n - 3, ".so") == 0);
}

static bool is_builtin(const char *name)
{
	return strcmp(name, "none") == 0 || pcm_package_find(pcm_builtin_policies, name);
}

/* A policy given as one value: a built-in name or a package file. */
/* A package file: it must open as pcm-sim will open it (a pcmc-built .so that validates). */
static int read_policy_file(struct gparser *p, const yaml_node_t *n, struct sweep_policy *pol)
{
	struct pcm_package_handle h;
	char why[512];
	int rc = grid_file(p, n, &pol->arg, &pol->hash);

	if (rc < 0)
		return rc;
	rc = pcm_package_open(pol->arg, pcm_builtin_policies, &h, why, sizeof(why));
	if (rc < 0)
		return gfail(p, n, "%s", why);
	pcm_package_close(&h);
	return 0;
}

static int read_policy_name(struct gparser *p, const yaml_node_t *n, struct sweep_policy *pol)
{
	int rc = want_string(p, n, &pol->name);

	if (rc < 0)
		return rc;
	if (is_path(pol->name))
		return read_policy_file(p, n, pol);
	if (!is_builtin(pol->name))
		return gfail(p, n,
			     "'%s' is not a built-in policy (pcm-bench list) nor a package file "
			     "(a path with a '/' or ending in .so, relative to the grid)",
			     pol->name);
	pol->arg = strdup(pol->name);
	return pol->arg ? 0 : -ENOMEM;
}

/* {name: N, build: [SPEC, HANDLER, EXTRA...], fabric: F}: a package pcmc builds. */
static int read_policy_build(struct gparser *p, yaml_node_t *n, struct sweep_policy *pol)
{
	yaml_node_t *build = NULL, *kn, *vn;
	uint64_t h = SWEEP_HASH_INIT, fh = 0, fabric_hash = 0;
	int rc = 0;

	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
	     rc == 0 && pr < n->data.mapping.pairs.top; pr++) {
		const char *k = scalar(kn = node(p, pr->key));

		vn = node(p, pr->value);
		if (k && strcmp(k, "name") == 0)
			rc = want_string(p, vn, &pol->name);
		else if (k && strcmp(k, "build") == 0)
			build = vn;
		else if (k && strcmp(k, "fabric") == 0)
			rc = grid_file(p, vn, &pol->fabric, &fabric_hash);
		else
			rc = gfail(p, kn, "unknown key '%s' (a policy to build has name, build "
					  "and fabric)",
				   k ? k : "?");
	}
	if (rc < 0)
		return rc;
	if (!pol->name || !build || build->type != YAML_SEQUENCE_NODE || n_items(build) < 2)
		return gfail(p, n, "a policy to build needs name and build: [SPEC.yaml, "
				   "HANDLER.c, EXTRA.c...]");
	if (is_path(pol->name) || strspn(pol->name, "abcdefghijklmnopqrstuvwxyz"
						    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+.") !=
					   strlen(pol->name))
		return gfail(p, n, "name '%s': letters, digits and _-+. only (it names "
				   "the built file)",
			     pol->name);
	pol->n_build = n_items(build);
	pol->build = calloc(pol->n_build, sizeof(*pol->build));
	if (!pol->build)
		return -ENOMEM;
	for (size_t i = 0; i < pol->n_build && rc == 0; i++) {
		rc = grid_file(p, node(p, build->data.sequence.items.start[i]), &pol->build[i],
			       &fh);
		h = sweep_hash(h, &fh, sizeof(fh));
	}
	pol->hash = sweep_hash(h, &fabric_hash, sizeof(fabric_hash));
	return rc;
}

static int read_policy(struct gparser *p, yaml_node_t *n, size_t i, void *elem)
{
	struct sweep_policy *pol = elem;

	pol->line = (uint32_t)n->start_mark.line + 1;
	pol->col = (uint32_t)n->start_mark.column + 1;
	if (n->type == YAML_MAPPING_NODE)
		return read_policy_build(p, n, elem);
	return read_policy_name(p, n, elem);
}

static const char *policy_name(const void *elem)
{
	const char *name = ((const struct sweep_policy *)elem)->name;

	return name ? name : "";
}

static int read_policies(struct gparser *p, yaml_node_t *vn)
{
	return read_list(p, vn, "policies", sizeof(struct sweep_policy),
			 (void **)&p->g->policies, &p->g->n_policies, read_policy, policy_name);
}

static int read_seed(struct gparser *p, yaml_node_t *n, size_t i, void *elem)
{
	const char *s = scalar(n);
	char *end;

	errno = 0;
	*(uint64_t *)elem = s ? strtoull(s, &end, 0) : 0;
	if (!s || !s[0] || *end || errno || s[0] == '-')
		return gfail(p, n, "a seed is a non-negative integer");
	for (size_t k = 1; k <= i; k++)
		if (((uint64_t *)elem)[-(ptrdiff_t)k] == *(uint64_t *)elem)
			return gfail(p, n, "seed %s is used twice", s);
	return 0;
}

static int read_seeds(struct gparser *p, yaml_node_t *vn)
{
	return read_list(p, vn, "seeds", sizeof(uint64_t), (void **)&p->g->seeds,
			 &p->g->n_seeds, read_seed, NULL);
}

/* set: each key path's values, in the grid's order. */
static int read_set(struct gparser *p, yaml_node_t *vn)
{
	struct sweep_grid *g = p->g;
	int rc = 0;

	if (vn->type != YAML_MAPPING_NODE)
		return gfail(p, vn, "expected a mapping of scenario keys to lists of values "
				    "(topology.link_rate: [100Gbps, 400Gbps])");
	rc = unique_keys(p, vn, "set.");
	for (yaml_node_pair_t *pr = vn->data.mapping.pairs.start;
	     rc == 0 && pr < vn->data.mapping.pairs.top; pr++) {
		yaml_node_t *kn = node(p, pr->key), **items;
		const char *k = scalar(kn);
		struct sweep_axis *ax = &g->axes[g->n_axes];
		size_t n;

		snprintf(p->key, sizeof(p->key), "set.%s", k ? k : "?");
		if (!k || !k[0])
			return gfail(p, kn, "a key path, such as topology.link_rate");
		if (g->n_axes == SWEEP_MAX_AXES)
			return gfail(p, kn, "more than %d keys", SWEEP_MAX_AXES);
		n = items_of(p, node(p, pr->value), &items);
		if (!items)
			return -ENOMEM;
		ax->key = strdup(k);
		ax->values = calloc(n ? n : 1, sizeof(*ax->values));
		g->n_axes++;
		if (!ax->key || !ax->values)
			rc = -ENOMEM;
		else if (!n)
			rc = gfail(p, node(p, pr->value), "an empty list (give the key's values)");
		for (size_t i = 0; i < n && rc == 0; i++, ax->n++) {
			rc = make_value(p, k, kn, items[i], &ax->values[i]);
			for (size_t j = 0; rc == 0 && j < i; j++)
				if (strcmp(ax->values[j].label, ax->values[i].label) == 0)
					rc = gfail(p, items[i], "'%s' is used twice",
						   ax->values[i].label);
		}
		free(items);
	}
	return rc;
}

/* configurations: a list of {name: N, KEY: VALUE, ...}. */
static int read_config(struct gparser *p, yaml_node_t *item, size_t index, void *elem)
{
	struct sweep_config *c = elem;
	size_t n = item->type == YAML_MAPPING_NODE
			   ? (size_t)(item->data.mapping.pairs.top - item->data.mapping.pairs.start)
			   : 0;
	int rc = 0;

	if (item->type != YAML_MAPPING_NODE)
		return gfail(p, item, "expected a mapping of scenario keys to values, with an "
				      "optional name");
	rc = unique_keys(p, item, "");
	if (rc < 0)
		return rc;
	c->sets = calloc(n ? n : 1, sizeof(*c->sets));
	if (!c->sets)
		return -ENOMEM;
	for (yaml_node_pair_t *pr = item->data.mapping.pairs.start;
	     rc == 0 && pr < item->data.mapping.pairs.top; pr++) {
		yaml_node_t *kn = node(p, pr->key), *vn = node(p, pr->value);
		const char *k = scalar(kn);

		if (!k || !k[0])
			return gfail(p, kn, "a key path, such as topology.link_rate");
		if (strcmp(k, "name") == 0)
			rc = want_string(p, vn, &c->name);
		else
			rc = make_value(p, k, kn, vn, &c->sets[c->n++]);
	}
	if (rc == 0 && !c->name) {
		char name[32];

		snprintf(name, sizeof(name), "config%zu", index);
		c->name = strdup(name);
	}
	return rc || c->name ? rc : -ENOMEM;
}

static const char *config_name(const void *elem)
{
	const char *name = ((const struct sweep_config *)elem)->name;

	return name ? name : "";
}

static int read_configs(struct gparser *p, yaml_node_t *vn)
{
	return read_list(p, vn, "configurations", sizeof(struct sweep_config),
			 (void **)&p->g->configs, &p->g->n_configs, read_config, config_name);
}

static int read_name(struct gparser *p, yaml_node_t *vn)
{
	free(p->g->name);
	p->g->name = NULL;
	return want_string(p, vn, &p->g->name);
}

static int read_description(struct gparser *p, yaml_node_t *vn)
{
	return scalar(vn) ? 0 : gfail(p, vn, "expected a single value");
}

static const struct grid_key {
	const char *name;
	int (*read)(struct gparser *p, yaml_node_t *vn);
} grid_keys[] = {
	{ "name", read_name },
	{ "description", read_description },
	{ "scenarios", read_scenarios },
	{ "configurations", read_configs },
	{ "set", read_set },
	{ "policies", read_policies },
	{ "seeds", read_seeds },
};

static int read_root(struct gparser *p, yaml_node_t *root)
{
	bool have_scenarios = false;

	if (!root || root->type != YAML_MAPPING_NODE)
		return gfail(p, root, "a grid is a mapping: scenarios, configurations, set, "
				      "policies, seeds");
	if (unique_keys(p, root, "") < 0)
		return -EINVAL;
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
	     pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *kn = node(p, pr->key);
		const char *k = scalar(kn);
		size_t i;
		int rc;

		snprintf(p->key, sizeof(p->key), "%s", k ? k : "?");
		for (i = 0; k && i < sizeof(grid_keys) / sizeof(grid_keys[0]); i++)
			if (strcmp(k, grid_keys[i].name) == 0)
				break;
		if (!k || i == sizeof(grid_keys) / sizeof(grid_keys[0]))
			return gfail(p, kn, "unknown key (valid here: name, description, "
					    "scenarios, configurations, set, policies, seeds)");
		rc = grid_keys[i].read(p, node(p, pr->value));
		if (rc < 0)
			return rc;
		have_scenarios |= grid_keys[i].read == read_scenarios;
	}
	p->key[0] = '\0';
	if (!have_scenarios)
		return gfail(p, root, "no scenarios: (the list of scenario files to run)");
	return 0;
}

/* Does setting key path @a touch what @b sets: the same, or one inside the other? */
static bool keys_overlap(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b), n = na < nb ? na : nb;
	char next = na < nb ? b[n] : a[n];

	return strncmp(a, b, n) == 0 && (next == '\0' || next == '.' || next == '[');
}

/*
 * A set: key that touches what another set: key or a configuration sets:
 * the one laid over last would replace the other in some cells, so each
 * scenario key is either one axis of set: or in the configurations.
 */
static int check_overlaps(struct gparser *p)
{
	const struct sweep_grid *g = p->g;

	for (size_t a = 0; a < g->n_axes; a++) {
		const struct sweep_value *va = &g->axes[a].values[0];

		snprintf(p->key, sizeof(p->key), "set.%s", va->key);
		for (size_t b = 0; b < a; b++) {
			const struct sweep_value *vb = &g->axes[b].values[0];

			if (keys_overlap(va->key, vb->key))
				return gfail_at(p, va->key_line, va->key_col,
						"overlaps set.%s (at %u:%u)", vb->key,
						vb->key_line, vb->key_col);
		}
		for (size_t c = 0; c < g->n_configs; c++)
			for (size_t i = 0; i < g->configs[c].n; i++) {
				const struct sweep_value *vc = &g->configs[c].sets[i];

				if (keys_overlap(va->key, vc->key))
					return gfail_at(p, va->key_line, va->key_col,
							"configurations[%zu] sets %s too (at "
							"%u:%u); a key is either in set: or in "
							"the configurations", c, vc->key,
							vc->key_line, vc->key_col);
			}
	}
	p->key[0] = '\0';
	return 0;
}

/* The settings of configuration @c (SWEEP_NONE: none), and @extra after them. */
static size_t collect_sets(const struct sweep_grid *g, size_t c, const struct sweep_value *extra,
			   struct uet_scenario_set *out, const char *file)
{
	size_t n = 0;

	for (size_t i = 0; c != SWEEP_NONE && i < g->configs[c].n; i++) {
		const struct sweep_value *v = &g->configs[c].sets[i];

		out[n++] = (struct uet_scenario_set){ v->key, v->text, file, v->line, v->key_line,
						      v->key_col };
	}
	if (extra)
		out[n++] = (struct uet_scenario_set){ extra->key, extra->text, file, extra->line,
						      extra->key_line, extra->key_col };
	return n;
}

/* Scenario @s read with configuration @c and @extra laid over it. */
static int check_one(struct gparser *p, size_t s, size_t c, const struct sweep_value *extra,
		     struct uet_scenario_set *sets)
{
	struct uet_scenario *scn = NULL;
	struct pcm_diag diag;
	size_t n = collect_sets(p->g, c, extra, sets, p->file);
	int rc = uet_scenario_load_set(p->g->scenarios[s].path, sets, n, &scn, &diag);

	uet_scenario_free(scn);
	if (rc < 0)
		snprintf(p->err, p->err_len, "%s", diag.msg[0] ? diag.msg : strerror(-rc));
	return rc;
}

/*
 * Every scenario with every configuration, and with each set: value laid
 * over that: each key and value is read by the scenario reader once per
 * scenario and configuration. (Values of different keys are not tried
 * together: a clash between them fails the cells that have it.)
 */
static int check_settings(struct gparser *p)
{
	const struct sweep_grid *g = p->g;
	size_t max = 1, n_configs = g->n_configs ? g->n_configs : 1;
	struct uet_scenario_set *sets;
	int rc = 0;

	for (size_t c = 0; c < g->n_configs; c++)
		max = g->configs[c].n + 1 > max ? g->configs[c].n + 1 : max;
	sets = calloc(max + 1, sizeof(*sets));
	if (!sets)
		return -ENOMEM;
	for (size_t s = 0; s < g->n_scenarios && rc == 0; s++) {
		for (size_t ci = 0; ci < n_configs && rc == 0; ci++) {
			size_t c = g->n_configs ? ci : SWEEP_NONE;

			rc = check_one(p, s, c, NULL, sets);
			for (size_t a = 0; a < g->n_axes && rc == 0; a++)
				for (size_t v = 0; v < g->axes[a].n && rc == 0; v++)
					rc = check_one(p, s, c, &g->axes[a].values[v], sets);
		}
	}
	free(sets);
	return rc;
}

static void count_cells(struct sweep_grid *g)
{
	size_t n = g->n_scenarios * (g->n_configs ? g->n_configs : 1) *
		   (g->n_policies ? g->n_policies : 1) * (g->n_seeds ? g->n_seeds : 1);

	for (size_t a = 0; a < g->n_axes; a++)
		n *= g->axes[a].n;
	g->n_cells = n;
}

void sweep_cell_of(const struct sweep_grid *g, size_t index, struct sweep_cell *c)
{
	size_t rest = index;

	c->index = index;
	c->seed = g->n_seeds ? rest % g->n_seeds : SWEEP_NONE;
	rest /= g->n_seeds ? g->n_seeds : 1;
	c->policy = g->n_policies ? rest % g->n_policies : SWEEP_NONE;
	rest /= g->n_policies ? g->n_policies : 1;
	for (size_t a = g->n_axes; a-- > 0;) {
		c->value[a] = rest % g->axes[a].n;
		rest /= g->axes[a].n;
	}
	c->config = g->n_configs ? rest % g->n_configs : SWEEP_NONE;
	rest /= g->n_configs ? g->n_configs : 1;
	c->scenario = rest;
}

/* The grid's file into @text. Return: 0, -errno (in @err). */
static int read_text(const char *path, char **text, size_t *len, char *err, size_t err_len)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		int e = errno;

		snprintf(err, err_len, "%s: cannot read: %s", path, strerror(e));
		if (f)
			fclose(f);
		return -e;
	}
	*text = malloc((size_t)n + 1);
	if (!*text) {
		fclose(f);
		return -ENOMEM;
	}
	*len = fread(*text, 1, (size_t)n, f);
	(*text)[*len] = '\0';
	fclose(f);
	return 0;
}

/* The grid's directory, absolute; and its default name, the file's without .yaml. */
static int grid_place(struct gparser *p, const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	char dir[PATH_MAX];
	size_t n = strlen(base);

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
		 slash ? path : ".");
	if (!realpath(dir, p->dir)) {
		snprintf(p->err, p->err_len, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	if (n > 5 && strcmp(base + n - 5, ".yaml") == 0)
		n -= 5;
	p->g->name = strndup(base, n);
	p->g->path = strdup(path);
	return p->g->name && p->g->path ? 0 : -ENOMEM;
}

int sweep_grid_load(const char *path, struct sweep_grid **out, char *err, size_t err_len)
{
	struct gparser p = { .file = path, .err = err, .err_len = err_len };
	yaml_parser_t parser;
	char *text = NULL;
	int rc;

	err[0] = '\0';
	p.g = calloc(1, sizeof(*p.g));
	if (!p.g)
		return -ENOMEM;
	rc = read_text(path, &text, &p.len, err, err_len);
	if (rc == 0)
		rc = grid_place(&p, path);
	if (rc < 0)
		goto out;
	p.text = text;
	if (!yaml_parser_initialize(&parser)) {
		rc = -ENOMEM;
		goto out;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, p.len);
	if (!yaml_parser_load(&parser, &p.doc)) {
		snprintf(err, err_len, "%s:%zu:%zu: YAML: %s", path, parser.problem_mark.line + 1,
			 parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "cannot parse");
		yaml_parser_delete(&parser);
		rc = -EINVAL;
		goto out;
	}
	rc = read_root(&p, yaml_document_get_root_node(&p.doc));
	yaml_document_delete(&p.doc);
	yaml_parser_delete(&parser);
	if (rc == 0)
		rc = check_overlaps(&p);
	if (rc == 0)
		rc = check_settings(&p);
	if (rc == 0)
		count_cells(p.g);
out:
	free(text);
	if (rc < 0) {
		if (!err[0])
			snprintf(err, err_len, "%s: %s", path, strerror(-rc));
		sweep_grid_free(p.g);
		return rc;
	}
	*out = p.g;
	return 0;
}

void sweep_grid_free(struct sweep_grid *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n_scenarios; i++) {
		free(g->scenarios[i].written);
		free(g->scenarios[i].path);
	}
	free(g->scenarios);
	for (size_t i = 0; i < g->n_configs; i++) {
		for (size_t k = 0; k < g->configs[i].n; k++)
			free_value(&g->configs[i].sets[k]);
		free(g->configs[i].sets);
		free(g->configs[i].name);
	}
	free(g->configs);
	for (size_t a = 0; a < g->n_axes; a++) {
		for (size_t k = 0; k < g->axes[a].n; k++)
			free_value(&g->axes[a].values[k]);
		free(g->axes[a].values);
		free(g->axes[a].key);
	}
	for (size_t i = 0; i < g->n_policies; i++) {
		struct sweep_policy *pol = &g->policies[i];

		free(pol->name);
		free(pol->arg);
		for (size_t k = 0; k < pol->n_build; k++)
			free(pol->build[k]);
		free(pol->build);
		free(pol->fabric);
	}
	free(g->policies);
	free(g->seeds);
	free(g->name);
	free(g->path);
	free(g);
}
