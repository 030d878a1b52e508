// SPDX-License-Identifier: MIT
/*
 * sweep.c - pcm-sim sweep: the subcommand's options and its three uses.
 *
 *   pcm-sim sweep GRID.yaml [-j N] [-o DIR] [--resume] [--shard I/N] [--list]
 *   pcm-sim sweep --emit slurm|parallel GRID.yaml [-o DIR] [--shards N] [-j N]
 *                 [--sshloginfile FILE]
 *   pcm-sim sweep --collect DIR [-j N]
 *
 * A run reads the grid (sweep_grid.c), builds the policies it gives as
 * sources (sweep_build.c), writes the manifest, runs the cells
 * (sweep_run.c), then, unless it ran one shard of several, merges the
 * records (sweep_collect.c) and draws the comparison plots with
 * pcm-sweep-plot. --emit writes a script that runs the shards on a cluster
 * (sweep_emit.c); --collect merges what they wrote. See pcm-sim(1).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot_tool.h"
#include "sweep.h"
#include "sweep_build.h"
#include "sweep_cell.h"
#include "sweep_collect.h"
#include "sweep_emit.h"
#include "sweep_grid.h"
#include "sweep_progress.h"
#include "sweep_run.h"

/* Shards an --emit makes by default, at most (one cell each below that). */
#define DEFAULT_MAX_SHARDS 1000

struct sweep_opts {
	const char *grid;
	const char *dir;
	const char *emit;       /* "slurm", "parallel" */
	const char *collect;    /* the directory to collect */
	const char *sshloginfile;
	unsigned jobs;          /* 0: every CPU (emit: 1) */
	size_t shard, shards;   /* --shard I/N */
	size_t emit_shards;     /* --shards N */
	bool resume, list, quiet, have_shard;
};

static void usage(FILE *f)
{
	fputs("usage: pcm-sim sweep GRID.yaml [-j N] [-o DIR] [--resume] [--shard I/N] [--list]\n"
	      "                     [--quiet]\n"
	      "       pcm-sim sweep --emit slurm|parallel GRID.yaml [-o DIR] [--shards N] [-j N]\n"
	      "                     [--sshloginfile FILE]\n"
	      "       pcm-sim sweep --collect DIR [-j N]\n"
	      "  runs every cell of the grid (scenarios x configurations x set: values x\n"
	      "  policies x seeds), -j at once (default: every CPU), into DIR (default\n"
	      "  NAME.sweep): cells/, results.jsonl, summary.csv, plots/. See pcm-sim(1).\n",
	      f);
}

static int parse_count(const char *flag, const char *s, size_t lo, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!s[0] || *end || errno || s[0] == '-' || v < lo || v > 1000000) {
		fprintf(stderr, "pcm-sim sweep: %s: '%s' is not a count from %zu to 1000000\n", flag,
			s, lo);
		return -EINVAL;
	}
	*out = (size_t)v;
	return 0;
}

/* --shard I/N: this run takes the cells whose index is I modulo N. */
static int parse_shard(const char *s, struct sweep_opts *o)
{
	const char *slash = strchr(s, '/');
	char first[32];

	if (!slash || (size_t)(slash - s) >= sizeof(first)) {
		fprintf(stderr, "pcm-sim sweep: --shard: '%s' is not I/N (0 <= I < N)\n", s);
		return -EINVAL;
	}
	snprintf(first, sizeof(first), "%.*s", (int)(slash - s), s);
	if (parse_count("--shard", first, 0, &o->shard) < 0 ||
	    parse_count("--shard", slash + 1, 1, &o->shards) < 0)
		return -EINVAL;
	if (o->shard >= o->shards) {
		fprintf(stderr, "pcm-sim sweep: --shard %s: I must be below N\n", s);
		return -EINVAL;
	}
	o->have_shard = true;
	return 0;
}

static int parse_opts(int argc, char **argv, struct sweep_opts *o)
{
	static const struct option lo[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "out", required_argument, NULL, 'o' },
		{ "resume", no_argument, NULL, 'r' },
		{ "shard", required_argument, NULL, 'S' },
		{ "shards", required_argument, NULL, 'N' },
		{ "emit", required_argument, NULL, 'e' },
		{ "collect", required_argument, NULL, 'c' },
		{ "sshloginfile", required_argument, NULL, 'l' },
		{ "list", no_argument, NULL, 'L' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	size_t v;
	int c;

	o->shards = 1;
	while ((c = getopt_long(argc, argv, "j:o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (parse_count("-j", optarg, 1, &v) < 0)
				return -EINVAL;
			o->jobs = (unsigned)v;
			break;
		case 'o':
			o->dir = optarg;
			break;
		case 'r':
			o->resume = true;
			break;
		case 'S':
			if (parse_shard(optarg, o) < 0)
				return -EINVAL;
			break;
		case 'N':
			if (parse_count("--shards", optarg, 1, &o->emit_shards) < 0)
				return -EINVAL;
			break;
		case 'e':
			if (strcmp(optarg, "slurm") && strcmp(optarg, "parallel")) {
				fprintf(stderr, "pcm-sim sweep: --emit: '%s' is not slurm or "
						"parallel\n",
					optarg);
				return -EINVAL;
			}
			o->emit = optarg;
			break;
		case 'c':
			o->collect = optarg;
			break;
		case 'l':
			o->sshloginfile = optarg;
			break;
		case 'L':
			o->list = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->grid = argv[optind++];
	if (optind < argc || (!o->grid) == !o->collect) {
		fprintf(stderr, "pcm-sim sweep: %s\n",
			o->collect ? "--collect DIR takes no grid"
				   : "one grid file (or --collect DIR)");
		usage(stderr);
		return -EINVAL;
	}
	if ((o->sshloginfile && (!o->emit || strcmp(o->emit, "parallel"))) ||
	    (o->emit_shards && !o->emit) || (o->emit && (o->have_shard || o->resume))) {
		fprintf(stderr, "pcm-sim sweep: --shards goes with --emit, --sshloginfile with "
				"--emit parallel; --shard and --resume are the emitted tasks'\n");
		return -EINVAL;
	}
	return 0;
}

/* The sweep's directory, made if needed, as an absolute path in @abs. */
static int make_dir(const struct sweep_opts *o, const struct sweep_grid *g, char *abs)
{
	char def[PATH_MAX];
	const char *dir = o->dir;

	if (!dir) {
		snprintf(def, sizeof(def), "%s.sweep", g->name);
		dir = def;
	}
	if ((mkdir(dir, 0777) < 0 && errno != EEXIST) || !realpath(dir, abs)) {
		fprintf(stderr, "pcm-sim sweep: %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Whether results.jsonl is older than a record of the manifest's cells (or absent). */
static bool collect_needed(const char *dir, const struct sweep_grid *g)
{
	char path[PATH_MAX + 32];
	struct stat results, rec;

	snprintf(path, sizeof(path), "%s/summary.csv", dir);
	if (stat(path, &results) < 0)
		return true;
	snprintf(path, sizeof(path), "%s/results.jsonl", dir);
	if (stat(path, &results) < 0)
		return true;
	for (size_t i = 0; i < g->n_cells; i++) {
		sweep_cell_path(dir, i, ".json", path, sizeof(path));
		if (stat(path, &rec) == 0 &&
		    (rec.st_mtim.tv_sec > results.st_mtim.tv_sec ||
		     (rec.st_mtim.tv_sec == results.st_mtim.tv_sec &&
		      rec.st_mtim.tv_nsec >= results.st_mtim.tv_nsec)))
			return true;
	}
	return false;
}

/*
 * The plotting tool of a sweep that runs its cells here, started with --wait
 * as soon as a slot of the -j is left free by the last cells: Python and
 * matplotlib load while those cells run, and the figures are drawn once "go"
 * comes on its stdin after the merge. At -j 1 no slot frees early, and the
 * tool runs after the merge as it would anyway.
 */
struct early_plots {
	const char *dir;
	char jobs[16];
	pid_t pid;  /* 0: not started */
	int go;     /* its stdin */
};

static void plots_start(void *arg)
{
	struct early_plots *p = arg;
	const char *args[] = { "--wait", "-j", p->jobs, p->dir, NULL };
	pid_t pid;

	if (!PCM_PYTHON[0])
		return; /* collect() says so */
	pid = plot_tool_start("sweep", "pcm-sweep-plot", "PCM_SWEEP_PLOT", args, &p->go);
	if (pid > 0)
		p->pid = pid;
}

/* Tell an early tool to draw (@draw) or to exit; wait for it. Return: 0, -errno. */
static int plots_finish(struct early_plots *p, bool draw)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	int rc = 0;

	if (!p || !p->pid)
		return 0;
	/* a tool that already died gives EPIPE, not SIGPIPE */
	sigaction(SIGPIPE, &ign, &old);
	if (draw && write(p->go, "go\n", 3) != 3)
		rc = -errno;
	close(p->go);
	sigaction(SIGPIPE, &old, NULL);
	if (plot_tool_wait(p->pid) < 0 && draw)
		rc = -EIO;
	p->pid = 0;
	return rc;
}

/*
 * Merge, draw (in @jobs processes, by @early if it was started), and say
 * what there is. Return: the exit status.
 */
static int collect(const char *dir, unsigned jobs, struct early_plots *early)
{
	char j[16];
	const char *args[] = { "-j", j, dir, NULL };
	struct sweep_collected c;
	int rc = sweep_collect(dir, &c);

	snprintf(j, sizeof(j), "%u", jobs);
	if (rc < 0) {
		plots_finish(early, false);
		if (rc != -ENOENT)
			fprintf(stderr, "pcm-sim sweep: %s: cannot merge the records: %s\n", dir,
				strerror(-rc));
		return 2;
	}
	printf("pcm-sim sweep: %s: %zu of %zu cells recorded: %zu ok, %zu not ok; "
	       "results.jsonl, summary.csv\n",
	       dir, c.present, c.cells, c.ok, c.failed);
	if (c.present < c.cells)
		printf("pcm-sim sweep: %zu cells have no record yet (the first is cell %zu): run "
		       "their shards, or pcm-sim sweep GRID -o %s --resume\n",
		       c.cells - c.present, c.first_missing, dir);
	fflush(stdout);
	if (early && early->pid)
		rc = plots_finish(early, c.present > 0);
	else if (c.present)
		rc = plot_tool_run("sweep", "pcm-sweep-plot", "PCM_SWEEP_PLOT", args);
	if (rc < 0)
		return 1;
	return c.ok == c.cells ? 0 : 1;
}

static int list_cells(const struct sweep_grid *g, const char *self)
{
	for (size_t i = 0; i < g->n_cells; i++) {
		struct sweep_cell c;
		char label[512], **argv;

		sweep_cell_of(g, i, &c);
		sweep_cell_label(g, &c, label, sizeof(label));
		argv = sweep_cell_argv(g, &c, self);
		if (!argv)
			return 2;
		printf("%zu\t%s\t", i, label);
		for (size_t k = 0; argv[k]; k++)
			printf("%s%s", k ? " " : "", argv[k]);
		putchar('\n');
		sweep_argv_free(argv);
	}
	return 0;
}

static int emit(const struct sweep_opts *o, const struct sweep_grid *g, const char *self,
		const char *dir)
{
	char grid[PATH_MAX], logins[PATH_MAX], slurm[PATH_MAX + 8];
	struct sweep_emit e = {
		.self = self, .grid = grid, .name = g->name, .dir = dir, .cells = g->n_cells,
		.jobs = o->jobs ? o->jobs : 1, .sshloginfile = o->sshloginfile ? logins : NULL,
	};

	if (!realpath(o->grid, grid))
		return 2;
	if (o->sshloginfile && !realpath(o->sshloginfile, logins)) {
		fprintf(stderr, "pcm-sim sweep: --sshloginfile %s: %s\n", o->sshloginfile,
			strerror(errno));
		return 2;
	}
	e.shards = o->emit_shards ? o->emit_shards
				  : g->n_cells < DEFAULT_MAX_SHARDS ? g->n_cells
								    : DEFAULT_MAX_SHARDS;
	if (e.shards > g->n_cells)
		e.shards = g->n_cells;
	snprintf(slurm, sizeof(slurm), "%s/slurm", dir);
	if (strcmp(o->emit, "slurm") == 0) {
		if (mkdir(slurm, 0777) < 0 && errno != EEXIST) {
			fprintf(stderr, "pcm-sim sweep: %s: %s\n", slurm, strerror(errno));
			return 2;
		}
		sweep_emit_slurm(stdout, &e);
	} else {
		sweep_emit_parallel(stdout, &e);
	}
	fprintf(stderr, "pcm-sim sweep: %s: %zu cells in %zu shards into %s\n", o->grid,
		g->n_cells, e.shards, dir);
	return 0;
}

static int run(const struct sweep_opts *o, const struct sweep_grid *g, const char *self,
	       const char *dir)
{
	struct early_plots plots = { .dir = dir };
	struct sweep_run_opts ro = {
		.dir = dir, .self = self, .jobs = o->jobs ? o->jobs : sweep_cpus(),
		.resume = o->resume, .quiet = o->quiet, .shard = o->shard, .shards = o->shards,
	};
	struct sweep_tally t;
	double t0 = sweep_now_s();
	int rc;

	snprintf(plots.jobs, sizeof(plots.jobs), "%u", ro.jobs);
	/* a shard of several leaves the merge and the plots to --collect */
	if (!(o->have_shard && o->shards > 1)) {
		ro.slot_idle = plots_start;
		ro.arg = &plots;
	}
	rc = sweep_run(g, &ro, &t);
	if (rc < 0) {
		plots_finish(&plots, false);
		return 2;
	}
	if (!o->quiet)
		fprintf(stderr, "pcm-sim sweep: %s: %zu cells%s, %zu recorded before, %zu run "
				"(%zu ok, %zu not ok) with -j %u in %.2f s\n",
			o->grid, t.cells, o->have_shard ? " in this shard" : "", t.skipped,
			t.ok + t.failed, t.ok, t.failed, ro.jobs, sweep_now_s() - t0);
	if (o->have_shard && o->shards > 1)
		return t.failed ? 1 : 0;
	if (!collect_needed(dir, g)) {
		plots_finish(&plots, false);
		if (!o->quiet)
			fprintf(stderr, "pcm-sim sweep: %s: results.jsonl, summary.csv and the "
					"plots are up to date\n",
				dir);
		return t.failed ? 1 : 0;
	}
	return collect(dir, ro.jobs, &plots);
}

int sweep_main(int argc, char **argv)
{
	struct sweep_opts o = { 0 };
	struct sweep_grid *g = NULL;
	char self[PATH_MAX], dir[PATH_MAX], err[1024];
	ssize_t n;
	int ret = 2;

	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	if (o.collect)
		return collect(o.collect, o.jobs ? o.jobs : sweep_cpus(), NULL);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 2;
	self[n] = '\0';
	if (sweep_grid_load(o.grid, &g, err, sizeof(err)) < 0) {
		fprintf(stderr, "pcm-sim sweep: %s\n", err);
		return 2;
	}
	if (o.list) {
		ret = list_cells(g, self);
		goto out;
	}
	if (make_dir(&o, g, dir) < 0 || sweep_build_policies(g, dir) < 0)
		goto out;
	if (sweep_manifest_write(dir, g) < 0) {
		fprintf(stderr, "pcm-sim sweep: %s: cannot write manifest.tsv: %s\n", dir,
			strerror(errno));
		goto out;
	}
	ret = o.emit ? emit(&o, g, self, dir) : run(&o, g, self, dir);
out:
	sweep_grid_free(g);
	return ret;
}
