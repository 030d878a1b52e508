// SPDX-License-Identifier: MIT
/*
 * bench_util.c - the helpers pcm-bench's subcommands share (bench.h): the
 * clocks, the handler benchmarks' simulated clock, a generator, the median
 * of a run's figures and the parsing of a number option. It calls no other
 * file of pcm-bench.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

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
