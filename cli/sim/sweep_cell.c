// SPDX-License-Identifier: MIT
/*
 * sweep_cell.c - one cell of a sweep: the pcm-sim command line that runs it
 * (so that every cell is an ordinary deterministic run, in a process of its
 * own, and its record says how to run it again by hand), the key of what
 * its result depends on, and its record, DIR/cells/NNNNNN.json.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json_out.h"
#include "shell_quote.h"
#include "sweep_cell.h"

/* Each configuration setting, then each set: key's value, in order: the later wins. */
static size_t cell_values(const struct sweep_grid *g, const struct sweep_cell *c,
			  const struct sweep_value **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; c->config != SWEEP_NONE && i < g->configs[c->config].n && n < max; i++)
		out[n++] = &g->configs[c->config].sets[i];
	for (size_t a = 0; a < g->n_axes && n < max; a++)
		out[n++] = &g->axes[a].values[c->value[a]];
	return n;
}

#define MAX_VALUES 256

char **sweep_cell_argv(const struct sweep_grid *g, const struct sweep_cell *c, const char *self)
{
	const struct sweep_value *v[MAX_VALUES];
	size_t nv = cell_values(g, c, v, MAX_VALUES), n = 0;
	char **argv = calloc(8 + 2 * nv, sizeof(*argv));
	char seed[32];

	if (!argv)
		return NULL;
	argv[n++] = strdup(self);
	argv[n++] = strdup(g->scenarios[c->scenario].path);
	argv[n++] = strdup("--json");
	if (c->policy != SWEEP_NONE) {
		argv[n++] = strdup("--policy");
		/* a policy to build is named by its name until it is built */
		argv[n++] = strdup(g->policies[c->policy].arg ? g->policies[c->policy].arg
							      : g->policies[c->policy].name);
	}
	if (c->seed != SWEEP_NONE) {
		snprintf(seed, sizeof(seed), "%" PRIu64, g->seeds[c->seed]);
		argv[n++] = strdup("--seed");
		argv[n++] = strdup(seed);
	}
	for (size_t i = 0; i < nv; i++) {
		/* the indentation matters only to a value of several lines */
		const char *text = v[i]->text + (strchr(v[i]->text, '\n') ? 0
								  : strspn(v[i]->text, " "));
		size_t len = strlen(v[i]->key) + strlen(text) + 2;

		argv[n++] = strdup("--set");
		argv[n] = malloc(len);
		if (argv[n])
			snprintf(argv[n], len, "%s=%s", v[i]->key, text);
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		if (!argv[i]) {
			sweep_argv_free(argv);
			return NULL;
		}
	}
	return argv;
}

void sweep_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return sweep_hash(h, s, strlen(s) + 1);
}

uint64_t sweep_cell_key(const struct sweep_grid *g, const struct sweep_cell *c)
{
	const struct sweep_value *v[MAX_VALUES];
	size_t nv = cell_values(g, c, v, MAX_VALUES);
	const struct sweep_scenario *s = &g->scenarios[c->scenario];
	uint64_t h = hash_str(SWEEP_HASH_INIT, s->path);

	h = sweep_hash(h, &s->hash, sizeof(s->hash));
	for (size_t i = 0; i < nv; i++)
		h = hash_str(hash_str(h, v[i]->key), v[i]->label);
	if (c->policy != SWEEP_NONE) {
		h = hash_str(h, g->policies[c->policy].name);
		h = sweep_hash(h, &g->policies[c->policy].hash, sizeof(uint64_t));
	}
	if (c->seed != SWEEP_NONE)
		h = sweep_hash(h, &g->seeds[c->seed], sizeof(uint64_t));
	return h;
}

/* The scenario as the grid wrote it, without its directories. */
static const char *scenario_base(const struct sweep_grid *g, const struct sweep_cell *c)
{
	const char *w = g->scenarios[c->scenario].written, *slash = strrchr(w, '/');

	return slash ? slash + 1 : w;
}

void sweep_cell_label(const struct sweep_grid *g, const struct sweep_cell *c, char *buf,
		      size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "%s", scenario_base(g, c));

	if (c->config != SWEEP_NONE && used < len)
		used += (size_t)snprintf(buf + used, len - used, " %s", g->configs[c->config].name);
	for (size_t a = 0; a < g->n_axes && used < len; a++)
		used += (size_t)snprintf(buf + used, len - used, " %s=%s", g->axes[a].key,
					 g->axes[a].values[c->value[a]].label);
	if (c->policy != SWEEP_NONE && used < len)
		used += (size_t)snprintf(buf + used, len - used, " %s", g->policies[c->policy].name);
	if (c->seed != SWEEP_NONE && used < len)
		snprintf(buf + used, len - used, " seed %" PRIu64, g->seeds[c->seed]);
}

void sweep_cell_path(const char *dir, size_t index, const char *suffix, char *buf, size_t len)
{
	snprintf(buf, len, "%s/cells/%06zu%s", dir, index, suffix);
}

/* "key":"<16 hex digits>" as records write it. */
static void key_member(uint64_t key, char *buf, size_t len)
{
	snprintf(buf, len, "\"key\":\"%016" PRIx64 "\"", key);
}

bool sweep_cell_done(const char *dir, const struct sweep_grid *g, const struct sweep_cell *c)
{
	char path[4096], line[512], want[64];
	FILE *f;
	bool done;

	sweep_cell_path(dir, c->index, ".json", path, sizeof(path));
	f = fopen(path, "r");
	if (!f)
		return false;
	key_member(sweep_cell_key(g, c), want, sizeof(want));
	/* the key is among the first members, well inside the first 512 bytes */
	done = fgets(line, sizeof(line), f) && strstr(line, want);
	fclose(f);
	return done;
}

/* The command, each argument quoted for a POSIX shell where it needs it. */
static void command_member(FILE *f, char *const *argv)
{
	char *cmd = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&cmd, &len);

	for (size_t i = 0; m && argv[i]; i++) {
		if (i)
			fputc(' ', m);
		shell_quote(m, argv[i]);
	}
	fputs(",\"command\":", f);
	if (m && fclose(m) == 0 && cmd)
		json_str(f, cmd);
	else
		fputs("null", f);
	free(cmd);
}

static void params_members(FILE *f, const struct sweep_grid *g, const struct sweep_cell *c)
{
	char key[64];

	key_member(sweep_cell_key(g, c), key, sizeof(key));
	fprintf(f, "{\"cell\":%zu,\"cells\":%zu,%s,\"scenario_file\":", c->index, g->n_cells, key);
	json_str(f, g->scenarios[c->scenario].written);
	if (c->config != SWEEP_NONE) {
		fputs(",\"configuration\":", f);
		json_str(f, g->configs[c->config].name);
	}
	if (g->n_axes) {
		fputs(",\"set\":{", f);
		for (size_t a = 0; a < g->n_axes; a++) {
			if (a)
				fputc(',', f);
			json_str(f, g->axes[a].key);
			fputc(':', f);
			json_str(f, g->axes[a].values[c->value[a]].label);
		}
		fputc('}', f);
	}
	if (c->policy != SWEEP_NONE) {
		fputs(",\"policy\":", f);
		json_str(f, g->policies[c->policy].name);
	}
	if (c->seed != SWEEP_NONE)
		fprintf(f, ",\"seed\":%" PRIu64, g->seeds[c->seed]);
}

/* The last @max bytes of @s, from a line start when there is one, trailing newlines cut. */
static void tail_of(const char *s, size_t max, char *buf, size_t len)
{
	size_t n = strlen(s);
	const char *from = n > max ? s + n - max : s, *nl = strchr(from, '\n');

	if (from != s && nl && nl[1])
		from = nl + 1;
	snprintf(buf, len, "%s", from);
	for (n = strlen(buf); n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'); n--)
		buf[n - 1] = '\0';
}

/* A run's status from how it ended: pcm-sim exits 0, 1 (flows left) or 2 (refused). */
static const char *status_of(const struct sweep_outcome *o, bool have_json)
{
	if (WIFSIGNALED(o->wait_status))
		return "crashed";
	if (have_json && WEXITSTATUS(o->wait_status) == 0)
		return "ok";
	if (have_json && WEXITSTATUS(o->wait_status) == 1)
		return "incomplete";
	return "failed";
}

static void outcome_members(FILE *f, const struct sweep_outcome *o, const char *status)
{
	char err[2048];

	fputs(",\"status\":", f);
	json_str(f, status);
	if (WIFSIGNALED(o->wait_status)) {
		int sig = WTERMSIG(o->wait_status);
		char last[1024];

		tail_of(o->err, 800, last, sizeof(last));
		snprintf(err, sizeof(err), "killed by signal %d (%s)%s%s", sig, strsignal(sig),
			 last[0] ? ": " : "", last);
		fputs(",\"exit\":null", f);
	} else {
		tail_of(strcmp(status, "ok") ? o->err : "", 1500, err, sizeof(err));
		fprintf(f, ",\"exit\":%d", WEXITSTATUS(o->wait_status));
	}
	fprintf(f, ",\"started\":%.3f,\"cell_wall_s\":%.3f,\"error\":", o->started, o->wall_s);
	json_str(f, err);
}

/* The run's --json line, if its stdout is one object. */
static size_t json_line(const char *out)
{
	size_t n = strlen(out);

	while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' '))
		n--;
	return n >= 2 && out[0] == '{' && out[n - 1] == '}' && !memchr(out, '\n', n) ? n : 0;
}

int sweep_cell_record(const char *dir, const struct sweep_grid *g, const struct sweep_cell *c,
		      const struct sweep_outcome *o, const char **status)
{
	char tmp[4096], path[4096];
	size_t result = json_line(o->out);
	char **argv = sweep_cell_argv(g, c, "pcm-sim");
	FILE *f;
	int rc = 0;

	*status = status_of(o, result > 0);
	sweep_cell_path(dir, c->index, ".tmp", tmp, sizeof(tmp));
	sweep_cell_path(dir, c->index, ".json", path, sizeof(path));
	f = fopen(tmp, "w");
	if (!f) {
		sweep_argv_free(argv);
		return -errno;
	}
	params_members(f, g, c);
	outcome_members(f, o, *status);
	if (argv)
		command_member(f, argv);
	sweep_argv_free(argv);
	if (result)
		fprintf(f, ",\"result\":%.*s", (int)result, o->out);
	fputs("}\n", f);
	if (fclose(f) != 0)
		rc = -EIO;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}
