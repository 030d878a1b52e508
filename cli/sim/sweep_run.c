// SPDX-License-Identifier: MIT
/*
 * sweep_run.c - a sweep's cells on every core: each cell is pcm-sim run as
 * a child process (so a crash takes one cell, and each run is the same
 * deterministic run as by hand), with its stdout and stderr in files beside
 * its record; up to -j children at once, the next started as one ends.
 * SIGCHLD is waited for with a timeout, so that a terminal's progress bar
 * keeps its clock going while long cells run. When no cell is left to start
 * and a slot is free, the caller is told once (slot_idle), to use it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sweep_cell.h"
#include "sweep_progress.h"
#include "sweep_run.h"

/* What a cell's run printed, kept, at most. */
#define OUTPUT_MAX (1u << 20)

struct slot {
	pid_t pid;
	size_t cell;
	double t0, started; /* monotonic, and Unix time */
};

unsigned sweep_cpus(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

static double unix_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A file's text (at most OUTPUT_MAX bytes, the last ones), or "" if there is none. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *t = malloc(OUTPUT_MAX + 1);
	size_t n = 0;
	long size;

	if (!t) {
		if (f)
			fclose(f);
		return NULL;
	}
	if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0) {
		fseek(f, size > (long)OUTPUT_MAX ? size - (long)OUTPUT_MAX : 0, SEEK_SET);
		n = fread(t, 1, OUTPUT_MAX, f);
	}
	if (f)
		fclose(f);
	t[n] = '\0';
	return t;
}

/* In the child: stdout and stderr into the cell's files, then pcm-sim. */
static void exec_cell(const struct sweep_run_opts *o, char **argv, size_t cell,
		      const sigset_t *mask)
{
	char out[4096], err[4096];
	int fo, fe, fi;

	sigprocmask(SIG_SETMASK, mask, NULL);
	sweep_cell_path(o->dir, cell, ".out", out, sizeof(out));
	sweep_cell_path(o->dir, cell, ".err", err, sizeof(err));
	fo = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	fe = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	fi = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fo < 0 || fe < 0 || fi < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0 || dup2(fi, 0) < 0)
		_exit(126);
	execv(argv[0], argv);
	fprintf(stderr, "pcm-sim sweep: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static int start_cell(const struct sweep_grid *g, const struct sweep_run_opts *o, size_t cell,
		      const sigset_t *mask, struct slot *s)
{
	struct sweep_cell c;
	char **argv;
	pid_t pid;

	sweep_cell_of(g, cell, &c);
	argv = sweep_cell_argv(g, &c, o->self);
	if (!argv)
		return -ENOMEM;
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		exec_cell(o, argv, cell, mask);
	sweep_argv_free(argv);
	if (pid < 0) {
		fprintf(stderr, "pcm-sim sweep: cannot start cell %zu: %s\n", cell, strerror(errno));
		return -errno;
	}
	*s = (struct slot){ .pid = pid, .cell = cell, .t0 = sweep_now_s(), .started = unix_s() };
	return 0;
}

/* Cell @s ended with @status: its record, its files gone, the progress told. */
static int finish_cell(const struct sweep_grid *g, const struct sweep_run_opts *o,
		       const struct slot *s, int status, struct sweep_progress *pr,
		       struct sweep_tally *t)
{
	char out_path[4096], err_path[4096], label[512];
	struct sweep_outcome oc = { .wait_status = status, .started = s->started,
				    .wall_s = sweep_now_s() - s->t0 };
	char *out, *err;
	const char *st = "failed";
	struct sweep_cell c;
	int rc;

	sweep_cell_of(g, s->cell, &c);
	sweep_cell_path(o->dir, s->cell, ".out", out_path, sizeof(out_path));
	sweep_cell_path(o->dir, s->cell, ".err", err_path, sizeof(err_path));
	out = slurp(out_path);
	err = slurp(err_path);
	if (!out || !err) {
		rc = -ENOMEM;
	} else {
		oc.out = out;
		oc.err = err;
		rc = sweep_cell_record(o->dir, g, &c, &oc, &st);
	}
	free(out);
	free(err);
	if (rc < 0) {
		fprintf(stderr, "pcm-sim sweep: %s: cell %zu: cannot write its record: %s\n",
			o->dir, s->cell, strerror(-rc));
		return rc;
	}
	unlink(out_path);
	unlink(err_path);
	if (strcmp(st, "ok") == 0)
		t->ok++;
	else
		t->failed++;
	sweep_cell_label(g, &c, label, sizeof(label));
	sweep_progress_cell(pr, s->cell, label, st, oc.wall_s);
	return 0;
}

/* The cells of this shard that are to run now. */
static size_t cells_to_run(const struct sweep_grid *g, const struct sweep_run_opts *o,
			   size_t *todo, struct sweep_tally *t)
{
	size_t n = 0;

	for (size_t i = o->shard; i < g->n_cells; i += o->shards) {
		struct sweep_cell c;

		t->cells++;
		sweep_cell_of(g, i, &c);
		if (o->resume && sweep_cell_done(o->dir, g, &c))
			t->skipped++;
		else
			todo[n++] = i;
	}
	return n;
}

/* Wait for a child to end (a second at most). Return: its pid, 0 if none yet, -errno. */
static pid_t reap(const sigset_t *chld, int *status)
{
	struct timespec second = { 1, 0 };
	pid_t pid = waitpid(-1, status, WNOHANG);

	if (pid != 0)
		return pid < 0 ? -errno : pid;
	if (sigtimedwait(chld, NULL, &second) < 0 && errno != EAGAIN && errno != EINTR)
		return -errno;
	return 0;
}

int sweep_run(const struct sweep_grid *g, const struct sweep_run_opts *o, struct sweep_tally *t)
{
	size_t *todo = calloc(g->n_cells ? g->n_cells : 1, sizeof(*todo));
	struct slot *slots = calloc(o->jobs ? o->jobs : 1, sizeof(*slots));
	struct sweep_progress pr;
	sigset_t chld, old;
	size_t n, next = 0, running = 0;
	bool idle_told = false;
	char cells[4096];
	int rc = 0;

	memset(t, 0, sizeof(*t));
	snprintf(cells, sizeof(cells), "%s/cells", o->dir);
	if (!todo || !slots) {
		rc = -ENOMEM;
		goto out;
	}
	if (mkdir(cells, 0777) < 0 && errno != EEXIST) {
		rc = -errno;
		fprintf(stderr, "pcm-sim sweep: %s: %s\n", cells, strerror(errno));
		goto out;
	}
	n = cells_to_run(g, o, todo, t);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	sweep_progress_start(&pr, stderr, n, o->quiet);
	while (rc == 0 && (next < n || running)) {
		int status;
		pid_t pid;

		while (rc == 0 && next < n && running < o->jobs)
			rc = start_cell(g, o, todo[next++], &old, &slots[running++]);
		if (rc < 0) {
			running--;
			break;
		}
		if (next == n && running && running < o->jobs && o->slot_idle && !idle_told) {
			o->slot_idle(o->arg);
			idle_told = true;
		}
		pr.running = running;
		pid = reap(&chld, &status);
		if (pid < 0) {
			rc = pid;
			break;
		}
		if (pid == 0) {
			sweep_progress_tick(&pr);
			continue;
		}
		for (size_t i = 0; i < running; i++) {
			if (slots[i].pid != pid)
				continue;
			rc = finish_cell(g, o, &slots[i], status, &pr, t);
			slots[i] = slots[--running];
			break;
		}
	}
	/* after an error, the cells still running end before we do */
	while (running) {
		int status;
		pid_t pid = waitpid(-1, &status, 0);

		if (pid < 0)
			break;
		for (size_t i = 0; i < running; i++)
			if (slots[i].pid == pid)
				slots[i] = slots[--running];
	}
	sweep_progress_end(&pr);
	sigprocmask(SIG_SETMASK, &old, NULL);
out:
	free(todo);
	free(slots);
	return rc;
}
