/* SPDX-License-Identifier: MIT */
/*
 * scratch_dir.h - a scratch directory per test program, made before its
 * tests and removed after them (cmocka group setup and teardown).
 */
#ifndef PCM_TEST_SCRATCH_DIR_H
#define PCM_TEST_SCRATCH_DIR_H

#include <stdio.h>
#include <stdlib.h>

static char scratch[256];

static int make_scratch(void **state)
{
	(void)state;
	snprintf(scratch, sizeof(scratch), "/tmp/pcm-test.XXXXXX");
	return mkdtemp(scratch) ? 0 : -1;
}

static int remove_scratch(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	return system(cmd) == 0 ? 0 : -1;
}

#endif /* PCM_TEST_SCRATCH_DIR_H */
