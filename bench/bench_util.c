// SPDX-License-Identifier: MIT
/*
 * bench_util.c - the helpers pcm-bench's subcommands share (bench.h): the
 * clocks, the handler benchmarks' simulated clock, a generator, the median
 * of a run's figures, the parsing of a number option and running another
 * program with its output piped back. It calls no other file of pcm-bench.
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "progdir.h"

uint64_t bench_xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

double bench_thread_cpu_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

double bench_process_cpu_s(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/*
 * The benchmarks' clock, ps: one event per ns. It only moves forward, across
 * runs and shells too, so ELAPSED_TIME timers never see time go back.
 */
pcm_uint bench_now_ps = 1000000;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_parse_u64(const char *flag, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "pcm-bench: %s: '%s' is not a number in %llu..%llu\n", flag, s,
			(unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int bench_parse_u32(const char *flag, const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int rc = bench_parse_u64(flag, s, min, max, &v);

	if (rc == 0)
		*out = (uint32_t)v;
	return rc;
}

extern char **environ;

/* Start @argv[0] with its stdout (and stderr) into a pipe: *fd reads it. Return: 0, -errno. */
static int spawn_piped(char *const argv[], bool merge_stderr, pid_t *pid, int *fd)
{
	posix_spawn_file_actions_t fa;
	int rc, fds[2];

	if (pipe(fds) < 0)
		return -errno;
	rc = posix_spawn_file_actions_init(&fa);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	if (!rc && merge_stderr)
		rc = posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
	if (!rc)
		rc = posix_spawn_file_actions_addclose(&fa, fds[0]);
	if (!rc)
		rc = posix_spawn(pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc) {
		close(fds[0]);
		return -rc;
	}
	*fd = fds[0];
	return 0;
}

int bench_run_piped(char *const argv[], bool merge_stderr,
		    void (*chunk)(void *ctx, const char *data, size_t n), void *ctx)
{
	char buf[4096];
	int rc, fd = -1, status;
	ssize_t n;
	pid_t pid;

	rc = spawn_piped(argv, merge_stderr, &pid, &fd);
	if (rc < 0)
		return rc;
	/* read to the end before waiting: a long output must not block the program */
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		chunk(ctx, buf, (size_t)n);
	}
	close(fd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int bench_installed_data(const char *rel, char *out, size_t len)
{
	char dir[PATH_MAX];
	int n;

	if (PCM_DATADIR_FROM_BINDIR[0] == '/') {
		n = snprintf(out, len, "%s/pcm/%s", PCM_DATADIR_FROM_BINDIR, rel);
	} else {
		pcm_prog_dir(dir, sizeof(dir));
		if (!dir[0])
			return -ENOENT;
		n = snprintf(out, len, "%s/%s/pcm/%s", dir, PCM_DATADIR_FROM_BINDIR, rel);
	}
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}
