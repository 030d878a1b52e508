// SPDX-License-Identifier: MIT
/*
 * sweep_build.c - a grid's policies given as sources ({name, build: [SPEC,
 * HANDLER, EXTRA...], fabric}), built once per sweep directory by pcmc for
 * the uet target: the author edits a handler and sweeps again, and only a
 * change to the sources (their hash, kept beside the package) builds anew,
 * so that --resume of a finished sweep does no work.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progdir.h"
#include "sweep_build.h"

/* Whether NAME.key beside the package holds @hash. */
static bool stamp_matches(const char *stamp, uint64_t hash)
{
	FILE *f = fopen(stamp, "r");
	uint64_t v = 0;
	bool same = f && fscanf(f, "%" SCNx64, &v) == 1 && v == hash;

	if (f)
		fclose(f);
	return same;
}

static int write_stamp(const char *stamp, uint64_t hash)
{
	FILE *f = fopen(stamp, "w");

	if (!f)
		return -errno;
	fprintf(f, "%016" PRIx64 "\n", hash);
	return fclose(f) == 0 ? 0 : -EIO;
}

/* pcmc build SOURCES... --target uet [--fabric F] -o @out, its output on our stderr. */
static int run_pcmc(const char *pcmc, const struct sweep_policy *pol, const char *out)
{
	const char **argv = calloc(pol->n_build + 10, sizeof(*argv));
	size_t n = 0;
	int status;
	pid_t pid;

	if (!argv)
		return -ENOMEM;
	argv[n++] = pcmc;
	argv[n++] = "build";
	for (size_t i = 0; i < pol->n_build; i++)
		argv[n++] = pol->build[i];
	argv[n++] = "--target";
	argv[n++] = "uet";
	if (pol->fabric) {
		argv[n++] = "--fabric";
		argv[n++] = pol->fabric;
	}
	argv[n++] = "-o";
	argv[n++] = out;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(2, 1);
		execv(pcmc, (char *const *)argv);
		_exit(127);
	}
	free(argv);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static int build_one(const char *pcmc, const struct sweep_grid *g, size_t i, const char *dir)
{
	struct sweep_policy *pol = &g->policies[i];
	char so[PATH_MAX], stamp[PATH_MAX], tmp[PATH_MAX];
	int rc;

	snprintf(so, sizeof(so), "%s/policies/%s.so", dir, pol->name);
	snprintf(stamp, sizeof(stamp), "%s/policies/%s.key", dir, pol->name);
	snprintf(tmp, sizeof(tmp), "%s/policies/.%s.%ld.so", dir, pol->name, (long)getpid());
	free(pol->arg);
	pol->arg = strdup(so);
	if (!pol->arg)
		return -ENOMEM;
	if (access(so, R_OK) == 0 && stamp_matches(stamp, pol->hash))
		return 0;
	fprintf(stderr, "pcm-sim sweep: building policy '%s' with pcmc\n", pol->name);
	rc = run_pcmc(pcmc, pol, tmp);
	if (rc == 0 && rename(tmp, so) != 0)
		rc = -errno;
	if (rc == 0)
		rc = write_stamp(stamp, pol->hash);
	if (rc < 0) {
		unlink(tmp);
		fprintf(stderr, "pcm-sim sweep: %s:%u:%u: policies[%zu]: pcmc could not build "
				"policy '%s' (its messages are above)\n",
			g->path, pol->line, pol->col, i, pol->name);
	}
	return rc;
}

int sweep_build_policies(struct sweep_grid *g, const char *dir)
{
	char pcmc[PATH_MAX], pdir[PATH_MAX];
	bool any = false;
	int rc = 0;

	for (size_t i = 0; i < g->n_policies; i++)
		any |= g->policies[i].n_build > 0;
	if (!any)
		return 0;
	if (pcm_find_program("pcmc", "PCMC", pcmc, sizeof(pcmc)) < 0) {
		fprintf(stderr, "pcm-sim sweep: the grid builds policies, and there is no pcmc "
				"beside pcm-sim, in $PCMC or on $PATH\n");
		return -ENOENT;
	}
	snprintf(pdir, sizeof(pdir), "%s/policies", dir);
	if (mkdir(pdir, 0777) < 0 && errno != EEXIST)
		return -errno;
	for (size_t i = 0; i < g->n_policies && rc == 0; i++)
		if (g->policies[i].n_build)
			rc = build_one(pcmc, g, i, dir);
	return rc;
}
