// SPDX-License-Identifier: MIT
/* progdir.c - the directory of the running program (progdir.h). */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
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
