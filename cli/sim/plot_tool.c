// SPDX-License-Identifier: MIT
/*
 * plot_tool.c - running a Python plotting tool of pcm-sim: found beside the
 * pcm-sim program (the build tree and an install keep them together) or at
 * the path an environment variable gives, run with the python3 meson found
 * matplotlib for (PCM_PYTHON, empty when it found none); waited for at once,
 * or started early and waited for later (pcm-sim sweep: see sweep.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot_tool.h"
#include "progdir.h"

pid_t plot_tool_start(const char *flag, const char *tool, const char *env,
		      const char *const *args, int *go_fd)
{
	char beside[PATH_MAX + 64];
	const char *candidates[] = { getenv(env), beside };
	const char *argv[16];
	const char *script = NULL;
	int pipefd[2] = { -1, -1 };
	size_t n = 0;
	pid_t pid;

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
	if (go_fd && pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		pid = -errno;
	} else if (pid == 0) {
		sigset_t none;

		/* the caller may block signals (a sweep waits for SIGCHLD) */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (go_fd && dup2(pipefd[0], 0) < 0)
			_exit(127);
		execv(PCM_PYTHON, (char *const *)argv);
		fprintf(stderr, "pcm-sim: %s: cannot run %s: %s\n", flag, PCM_PYTHON, strerror(errno));
		_exit(127);
	}
	if (go_fd) {
		close(pipefd[0]);
		if (pid > 0)
			*go_fd = pipefd[1];
		else
			close(pipefd[1]);
	}
	return pid;
}

int plot_tool_wait(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

int plot_tool_run(const char *flag, const char *tool, const char *env, const char *const *args)
{
	pid_t pid = plot_tool_start(flag, tool, env, args, NULL);

	return pid < 0 ? (int)pid : plot_tool_wait(pid);
}
