// SPDX-License-Identifier: MIT
/*
 * progdir.c - the directory of the running program, and the other pcm
 * programs found from it (progdir.h).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progdir.h"

void pcm_prog_dir(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	out[0] = '\0';
	if (n <= 0)
		return;
	exe[n] = '\0';
	snprintf(out, len, "%s", dirname(exe));
}

/* @name on $PATH (or @name itself if it has a '/'), executable. Return: 0, -ENOENT. */
static int search_path(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(out, X_OK) == 0 ? 0 : -ENOENT;
	}
	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);

		snprintf(out, len, "%.*s/%s", (int)n, n ? path : ".", name);
		if (access(out, X_OK) == 0)
			return 0;
		path = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

int pcm_find_program(const char *name, const char *env, char *out, size_t len)
{
	/* an install keeps them together; the build tree has cli/pcmc, cli/sim/pcm-sim, bench/ */
	static const char *const beside[] = { "%s/%s", "%s/../%s", "%s/../cli/%s",
					      "%s/../cli/sim/%s" };
	const char *env_path = env ? getenv(env) : NULL;
	char dir[PATH_MAX];

	pcm_prog_dir(dir, sizeof(dir));
	for (size_t i = 0; dir[0] && i < sizeof(beside) / sizeof(beside[0]); i++) {
		int n = snprintf(out, len, beside[i], dir, name);

		if (n > 0 && (size_t)n < len && access(out, X_OK) == 0)
			return 0;
	}
	if (env_path && env_path[0])
		return search_path(env_path, out, len);
	return search_path(name, out, len);
}
