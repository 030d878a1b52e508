/* SPDX-License-Identifier: MIT */
/*
 * plot_tool.h - running pcm-sim's Python plotting tools (pcm-plot,
 * pcm-sweep-plot), which sit beside the pcm-sim program (plot_tool.c).
 */
#ifndef PCM_SIM_PLOT_TOOL_H
#define PCM_SIM_PLOT_TOOL_H

#include <sys/types.h>

/**
 * plot_tool_run() - run plotting tool @tool (a file beside pcm-sim, or the
 * one environment variable @env names) with this build's Python 3 and
 * matplotlib, and wait for it.
 * @flag: what asked for it, for messages ("--plot", "sweep").
 * @tool: the script's name ("pcm-plot").
 * @env: the environment variable that overrides its path ("PCM_PLOT").
 * @args: its arguments, NULL-terminated.
 *
 * Return: 0, -ENOTSUP (built without matplotlib; said on stderr), -ENOENT
 * (no such script; said), -EIO (it failed), -errno (fork, wait).
 */
int plot_tool_run(const char *flag, const char *tool, const char *env, const char *const *args);

/**
 * plot_tool_start() - start plotting tool @tool as plot_tool_run() does, and
 * do not wait for it.
 * @flag, @tool, @env, @args: as for plot_tool_run().
 * @go_fd: if not NULL, the tool's stdin becomes a pipe whose writing end is
 *         returned here (for a tool that imports its libraries, then waits
 *         for a line on stdin: pcm-sweep-plot --wait).
 *
 * Return: the tool's pid, or -ENOTSUP, -ENOENT (said on stderr), -errno.
 */
pid_t plot_tool_start(const char *flag, const char *tool, const char *env,
		      const char *const *args, int *go_fd);

/**
 * plot_tool_wait() - wait for a tool plot_tool_start() started.
 *
 * Return: 0 if it exited 0, -EIO if it failed, -errno (wait).
 */
int plot_tool_wait(pid_t pid);

#endif /* PCM_SIM_PLOT_TOOL_H */
