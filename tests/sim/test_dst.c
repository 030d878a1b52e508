// SPDX-License-Identifier: MIT
/*
 * test_dst.c - randomized scenario testing of the UET emulation: for each
 * seed of a range, the generator draws a whole scenario (uet_dst.h), which
 * must read back from its file unchanged and pass every invariant: each
 * message completes exactly once with its bytes within the bound, nothing is
 * left afterwards, the PSN and SACK checks hold, and a second run gives the
 * same records and packets.
 *
 *   test_dst FIRST_SEED COUNT [OUT_DIR]
 *
 * A failing seed prints one line to reproduce it with pcm-sim, writes the
 * generated scenario to OUT_DIR (default: the current directory), shrinks
 * it, and writes the reduced scenario beside it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builtin.h"
#include "uet_dst.h"

#define SHRINK_CHECKS 400

static const struct pcm_package *builtin(const char *name)
{
	for (size_t i = 0; pcm_builtin_policies[i]; i++)
		if (strcmp(pcm_builtin_policies[i]->name, name) == 0)
			return pcm_builtin_policies[i];
	return NULL;
}

/* The scenario's packages; "none" is a fixed window. Return: 0, -ENOENT. */
static int packages(const struct uet_scenario *scn, const struct pcm_package **pkgs)
{
	for (uint32_t i = 0; i < scn->n_policies; i++) {
		pkgs[i] = strcmp(scn->policies[i], "none") ? builtin(scn->policies[i]) : NULL;
		if (strcmp(scn->policies[i], "none") && !pkgs[i])
			return -ENOENT;
	}
	return 0;
}

static char *to_text(const struct uet_scenario *scn)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	uet_scenario_write(scn, f);
	fclose(f);
	return buf;
}

/* The generated scenario must read back from its file as itself. */
static int round_trip(const struct uet_scenario *scn, char *why, size_t len)
{
	char *a = to_text(scn), *b = NULL;
	struct uet_scenario *back = NULL;
	struct pcm_diag diag;
	int rc = -EFAULT;

	if (!a)
		return -ENOMEM;
	if (uet_scenario_parse(scn->path, a, strlen(a), &back, &diag) < 0) {
		snprintf(why, len, "its file does not read back: %s", diag.msg);
	} else {
		b = to_text(back);
		if (b && strcmp(a, b) == 0)
			rc = 0;
		else
			snprintf(why, len, "its file reads back as a different scenario");
	}
	uet_scenario_free(back);
	free(a);
	free(b);
	return rc;
}

static int write_file(const char *dir, const char *name, const struct uet_scenario *scn,
		      char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	uet_scenario_write(scn, f);
	return fclose(f) ? -EIO : 0;
}

static void report_failure(uint64_t seed, struct uet_scenario *scn, const char *dir,
			   struct uet_dst_result *res)
{
	const struct pcm_package *pkgs[UET_MAX_POLICIES] = { 0 };
	char path[4096], name[64];
	int kept;

	snprintf(name, sizeof(name), "dst-%" PRIu64 ".yaml", seed);
	if (write_file(dir, name, scn, path, sizeof(path)) < 0)
		snprintf(path, sizeof(path), "(could not write %s/%s)", dir, name);
	printf("FAIL seed %" PRIu64 ": %s\n  reproduce: pcm-sim --check %s  "
	       "(or: pcm-sim --dst %" PRIu64 ")\n",
	       seed, res->what, path, seed);
	fflush(stdout);
	if (packages(scn, pkgs) < 0)
		return;
	kept = uet_dst_shrink(&scn, pkgs, SHRINK_CHECKS, res);
	snprintf(name, sizeof(name), "dst-%" PRIu64 "-min.yaml", seed);
	if (kept >= 0 && write_file(dir, name, scn, path, sizeof(path)) == 0)
		printf("  shrunk (%d reductions, %u hosts, %u messages, %u faults): "
		       "pcm-sim --check %s: %s\n",
		       kept, res->hosts, scn->n_flows, scn->n_failures, path, res->what);
	uet_scenario_free(scn);
}

int main(int argc, char **argv)
{
	struct uet_dst_policy pols[64];
	uint32_t n_pols = uet_dst_policies(pcm_builtin_policies, pols, 64);
	uint64_t first, count, failed = 0, events = 0, msgs = 0, faults = 0;
	const char *dir = argc > 3 ? argv[3] : ".";
	struct timespec t0, t1;

	if (argc < 3) {
		fprintf(stderr, "usage: test_dst FIRST_SEED COUNT [OUT_DIR]\n");
		return 2;
	}
	first = strtoull(argv[1], NULL, 0);
	count = strtoull(argv[2], NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t seed = first; seed < first + count; seed++) {
		const struct pcm_package *pkgs[UET_MAX_POLICIES] = { 0 };
		struct uet_scenario *scn = NULL;
		struct uet_dst_result res = { .what = "" };
		int rc = uet_dst_generate(seed, pols, n_pols, &scn);

		if (rc < 0) {
			fprintf(stderr, "seed %" PRIu64 ": %s\n", seed, strerror(-rc));
			return 1;
		}
		msgs += scn->n_flows;
		faults += scn->n_failures;
		rc = round_trip(scn, res.what, sizeof(res.what));
		if (rc == 0 && packages(scn, pkgs) < 0) {
			snprintf(res.what, sizeof(res.what), "a policy of the scenario is not built in");
			rc = -ENOENT;
		}
		if (rc == 0)
			rc = uet_dst_check(scn, pkgs, true, &res);
		events += res.events;
		if (rc < 0) {
			failed++;
			report_failure(seed, scn, dir, &res);
			continue;
		}
		uet_scenario_free(scn);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("seeds %" PRIu64 "..%" PRIu64 ": %" PRIu64 " passed, %" PRIu64
	       " failed; %" PRIu64 " messages, %" PRIu64 " faults, %" PRIu64
	       " events per run; %.1f s wall\n",
	       first, first + count - 1, count - failed, failed, msgs, faults, events,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return failed ? 1 : 0;
}
