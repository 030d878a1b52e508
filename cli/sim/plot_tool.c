// SPDX-License-Identifier: MIT
/*
 * plot_tool.c - running a Python plotting tool of pcm-sim: found beside the
 * pcm-sim program (the build tree and an install keep them together) or at
 * the path an environment variable gives, run with the python3 meson found
 * matplotlib for (PCM_PYTHON, empty when it found none).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot_tool.h"
#include "progdir.h"

int plot_tool_run(const char *flag, const char *tool, const char *env, const char *const *args)
{
	char beside[PATH_MAX + 64];
	const char *candidates[] = { getenv(env), beside };
	const char *argv[16];
	const char *script = NULL;
	size_t n = 0;
	pid_t pid;
	int status;

	if (!PCM_PYTHON[0]) {
		fprintf(stderr, "pcm-sim: %s: this pcm-sim was built without python3-matplotlib "
				"(apt-get install python3-matplotlib, then rebuild); the records "
				"are kept\n",
			flag);
		return -ENOTSUP;
	}
	pcm_prog_dir(beside, PATH_MAX);
	snprintf(beside + strlen(beside), 64, "/%s", tool);
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]) && !script; i++)
		if (candidates[i] && access(candidates[i], R_OK) == 0)
			script = candidates[i];
	if (!script) {
		fprintf(stderr, "pcm-sim: %s: no %s beside pcm-sim (%s); set %s\n", flag, tool,
			beside, env);
		return -ENOENT;
	}
	argv[n++] = PCM_PYTHON;
	argv[n++] = script;
	for (size_t i = 0; args[i] && n + 1 < sizeof(argv) / sizeof(argv[0]); i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execv(PCM_PYTHON, (char *const *)argv);
		fprintf(stderr, "pcm-sim: %s: cannot run %s: %s\n", flag, PCM_PYTHON, strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}
