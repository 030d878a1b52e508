/* SPDX-License-Identifier: MIT */
/*
 * cli_run.h - shared helpers of the tests that run pcm-sim as a program
 * (test_pcm_sim.c, test_pcm_sweep.c): a command line run in a directory
 * with its exit status, stdout and stderr kept, files written and read, and
 * the check of what it said. Include after <cmocka.h>; PCM_SIM is the
 * program.
 */
#ifndef PCM_TESTS_SIM_CLI_RUN_H
#define PCM_TESTS_SIM_CLI_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

struct out {
	int status;
	char stdout_text[65536];
	char stderr_text[65536];
};

static inline void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

/* Shell command @command in directory @cwd; its output kept in @scratch. */
static inline void cli_shell(const char *scratch, const char *cwd, const char *command,
			     struct out *o)
{
	char cmd[10240], so[512], se[512];
	int st;

	snprintf(so, sizeof(so), "%s/stdout", scratch);
	snprintf(se, sizeof(se), "%s/stderr", scratch);
	snprintf(cmd, sizeof(cmd), "cd '%s' && %s >'%s' 2>'%s'", cwd, command, so, se);
	st = system(cmd);
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	slurp(so, o->stdout_text, sizeof(o->stdout_text));
	slurp(se, o->stderr_text, sizeof(o->stderr_text));
}

/* pcm-sim @args in directory @cwd; its output kept in @scratch. */
static inline void cli_run(const char *scratch, const char *cwd, const char *args, struct out *o)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "'%.1024s' %.7000s", PCM_SIM, args);
	cli_shell(scratch, cwd, cmd, o);
}

static inline void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static inline void expect(const struct out *o, int status, const char *in_stdout,
			  const char *in_stderr)
{
	if (o->status != status || (in_stdout && !strstr(o->stdout_text, in_stdout)) ||
	    (in_stderr && !strstr(o->stderr_text, in_stderr)))
		fail_msg("exit %d (wanted %d)\nstdout:\n%s\nstderr:\n%s\nwanted in stdout: %s\n"
			 "wanted in stderr: %s",
			 o->status, status, o->stdout_text, o->stderr_text,
			 in_stdout ? in_stdout : "-", in_stderr ? in_stderr : "-");
}

/* A new scratch directory, $TMPDIR/@name.XXXXXX, into @dir. Return: 0, -1. */
static inline int scratch_make(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "%s/%s.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
	return mkdtemp(dir) ? 0 : -1;
}

/* The scratch directory @dir and everything in it, removed. Return: 0, -1. */
static inline int scratch_remove(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif /* PCM_TESTS_SIM_CLI_RUN_H */
