/* SPDX-License-Identifier: MIT */
/*
 * test_util.h - helpers the shells' unit tests share: a seeded generator and
 * running a command (pcmc) with its output captured. Include after cmocka.h.
 */
#ifndef PCM_TEST_UTIL_H
#define PCM_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>

static inline uint64_t tu_xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Run @cmd through the shell; return its exit status, its stdout and stderr in @out. */
static inline int tu_run(const char *cmd, char *out, size_t out_len)
{
	char full[4096];
	size_t n;
	FILE *p;
	int st;

	snprintf(full, sizeof(full), "%s 2>&1", cmd);
	p = popen(full, "r");
	assert_non_null(p);
	n = fread(out, 1, out_len - 1, p);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif /* PCM_TEST_UTIL_H */
