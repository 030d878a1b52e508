/* SPDX-License-Identifier: MIT */
/*
 * plot_tool.h - running pcm-sim's Python plotting tools (pcm-plot,
 * pcm-sweep-plot), which sit beside the pcm-sim program (plot_tool.c).
 */
#ifndef PCM_SIM_PLOT_TOOL_H
#define PCM_SIM_PLOT_TOOL_H

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

#endif /* PCM_SIM_PLOT_TOOL_H */
