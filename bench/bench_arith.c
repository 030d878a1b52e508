// SPDX-License-Identifier: MIT
/*
 * bench_arith.c - pcm-bench validate-arith: numerical validation of a policy
 * across pcm_fx formats (PCM paper, section 6).
 *
 * The policy's own sources are built four times through the real `pcmc build`
 * pipeline, in double, Q42.22, Q32.32 and Q16.16, for the "uet" target, into
 * a scratch directory; each shared object then runs the same scenario on the
 * UET emulation (default: the 8:1 incast of scenarios/incast-8.yaml, compiled
 * in) with the same seed. Per format one result: the largest FCT relative to
 * the double build's in the same invocation (the baseline), retransmits and
 * Jain's fairness index. The emulation is deterministic, so the figures are
 * exact, not timings.
 *
 * pcmc is the one beside this program (both installed in one bin/), else the
 * one in the build tree (<dir of /proc/self/exe>/../cli/pcmc), else $PCMC,
 * else `pcmc` in $PATH. The sources are found through the built-in package's
 * spec_path (relative to the build tree, where meson ran pcmc, or else to the
 * working directory), in the installed share/pcm/policies, or in
 * --policy-dir DIR as DIR/NAME.yaml and DIR/NAME.c.
 *
 * --arith selects the pcm_fx format only; a package that computes on
 * pcm_float with C operators runs the same double arithmetic in every build.
 * pcmc says so when it builds one; this tool passes that on, marks the
 * results "arith_effect":"none" and says the runs are not a fixed-point study.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "builtin.h"
#include "progdir.h"
#include "uet.h"

extern const char pcm_bench_scenario_incast8[];
extern const size_t pcm_bench_scenario_incast8_len;

#define N_ARITH 4

/* double first: it is the baseline of the others. */
static const char *const ariths[N_ARITH] = { "double", "q42.22", "q32.32", "q16.16" };

struct arith_opts {
	const char *policy;
	const char *scenario;   /* NULL: the built-in 8:1 incast */
	const char *policy_dir; /* NULL: from the built-in package's spec_path */
	uint64_t seed;
	bool have_seed;
	bool json;
};

struct arith_result {
	bool ok;                /* built, loaded and run */
	bool no_effect;         /* pcmc: this --arith cannot change the package */
	int run_rc;             /* uet_sim_run() */
	struct uet_results r;
	uint64_t *fct_ps;       /* per message, 0 if it did not complete */
	uint32_t n_msgs;
};

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* @spec with its ".yaml" replaced by ".c". */
static int handler_of(const char *spec, char *out, size_t len)
{
	size_t n = strlen(spec);

	if (n < 5 || strcmp(spec + n - 5, ".yaml") != 0 || n - 5 + 3 > len)
		return -EINVAL;
	snprintf(out, len, "%.*s.c", (int)(n - 5), spec);
	return 0;
}

/* The policy's spec and handler. Return: 0, -ENOENT (what was tried is printed). */
static int find_sources(const struct arith_opts *o, char *spec, char *handler, size_t len)
{
	const struct pcm_package *pkg;
	char dir[PATH_MAX], rel[PATH_MAX];

	if (o->policy_dir) {
		snprintf(spec, len, "%s/%s.yaml", o->policy_dir, o->policy);
		snprintf(handler, len, "%s/%s.c", o->policy_dir, o->policy);
		if (readable(spec) && readable(handler))
			return 0;
		fprintf(stderr, "pcm-bench: validate-arith: no %s and %s\n", spec, handler);
		return -ENOENT;
	}
	pkg = pcm_package_find(pcm_builtin_policies, o->policy);
	if (!pkg) {
		fprintf(stderr,
			"pcm-bench: validate-arith: '%s' is not a built-in policy (see pcm-bench "
			"list); give its sources with --policy-dir DIR\n",
			o->policy);
		return -ENOENT;
	}
	/*
	 * meson ran pcmc from the build tree, the parent of this program's
	 * directory: look there first, so that the sources are the ones this
	 * binary's built-ins came from; then from the working directory.
	 */
	pcm_prog_dir(dir, sizeof(dir));
	for (int attempt = 0; attempt < 3; attempt++) {
		int n;

		if (attempt == 0 && dir[0] && pkg->spec_path[0] != '/')
			n = snprintf(spec, len, "%s/../%s", dir, pkg->spec_path);
		else if (attempt == 1 || pkg->spec_path[0] == '/')
			n = snprintf(spec, len, "%s", pkg->spec_path);
		else if (attempt == 2 && snprintf(rel, sizeof(rel), "policies/%s.yaml", o->policy) <
						 (int)sizeof(rel) &&
			 bench_installed_data(rel, spec, len) == 0)
			n = (int)strlen(spec);
		else
			continue;
		if (n > 0 && (size_t)n < len && handler_of(spec, handler, len) == 0 &&
		    readable(spec) && readable(handler))
			return 0;
	}
	fprintf(stderr,
		"pcm-bench: validate-arith: cannot find the sources of '%s' (its spec_path is "
		"'%s', tried from the build tree, the working directory and share/pcm/policies); "
		"give them with --policy-dir DIR\n",
		o->policy, pkg->spec_path);
	return -ENOENT;
}

/* What pcmc says when --arith cannot change a package (pcmc.c, note_arith()). */
#define PCMC_NO_EFFECT "has no effect on"

/* pcmc's output on its way to our stderr, searched for PCMC_NO_EFFECT. */
struct pcmc_output {
	char text[65536];
	size_t used;
	bool no_effect;
};

static void pcmc_chunk(void *ctx, const char *data, size_t n)
{
	struct pcmc_output *o = ctx;

	fwrite(data, 1, n, stderr);
	while (n) {
		size_t take = n < sizeof(o->text) - 1 - o->used ? n : sizeof(o->text) - 1 - o->used;

		memcpy(o->text + o->used, data, take);
		o->used += take;
		o->text[o->used] = '\0';
		o->no_effect = o->no_effect || strstr(o->text, PCMC_NO_EFFECT);
		if (o->used == sizeof(o->text) - 1)
			o->used = 0; /* a full buffer was searched; keep searching the rest */
		data += take;
		n -= take;
	}
}

/*
 * Run `pcmc build` with its stdout and stderr sent to our stderr, so ours
 * carries results only; *no_effect tells whether pcmc warned that --arith has
 * no effect on the package.
 */
static int pcmc_build(const char *pcmc, const char *spec, const char *handler, const char *arith,
		      const char *out, bool *no_effect)
{
	char *argv[] = { (char *)pcmc,	  "build",	   (char *)spec, (char *)handler,
			 "--arith",	  (char *)arith, "--target",   "uet",
			 "-o",		  (char *)out,	 NULL };
	static struct pcmc_output o;
	int rc;

	o.used = 0;
	o.no_effect = false;
	rc = bench_run_piped(argv, true, pcmc_chunk, &o);
	*no_effect = o.no_effect;
	if (rc < 0) {
		fprintf(stderr, "pcm-bench: validate-arith: cannot run %s: %s\n", pcmc,
			strerror(-rc));
		return rc;
	}
	if (rc != 0) {
		fprintf(stderr, "pcm-bench: validate-arith: `%s build ... --arith %s` failed\n",
			pcmc, arith);
		return -EIO;
	}
	return 0;
}

/* Run @scn with the package in @so as its default policy. */
static int run_scenario(const struct uet_scenario *scn, const char *so, uint64_t seed,
			struct arith_result *res)
{
	struct pcm_package_handle h[UET_MAX_POLICIES] = { 0 };
	const struct pcm_package *pkgs[UET_MAX_POLICIES] = { 0 };
	struct uet_sim *sim = NULL;
	struct pcm_diag diag;
	char err[512];
	int rc = 0;

	for (uint32_t i = 0; i < scn->n_policies && rc == 0; i++) {
		const char *name = i == 0 ? so : scn->policies[i];

		if (strcmp(name, "none") == 0)
			continue;
		rc = pcm_package_open(name, pcm_builtin_policies, &h[i], err, sizeof(err));
		if (rc < 0)
			fprintf(stderr, "pcm-bench: validate-arith: %s: %s\n", scn->path, err);
		else
			pkgs[i] = h[i].pkg;
	}
	if (rc == 0) {
		rc = uet_sim_create(scn, pkgs, seed, &sim, &diag);
		if (rc < 0)
			fprintf(stderr, "pcm-bench: validate-arith: %s\n",
				diag.msg[0] ? diag.msg : strerror(-rc));
	}
	if (rc == 0) {
		res->run_rc = uet_sim_run(sim, scn->stop_ps);
		uet_sim_results(sim, &res->r);
		res->ok = res->run_rc != -ENOMEM && res->run_rc != -ENOSPC;
		if (!res->ok)
			rc = res->run_rc;
	}
	if (rc == 0) {
		res->n_msgs = uet_sim_n_msgs(sim);
		res->fct_ps = calloc(res->n_msgs ? res->n_msgs : 1, sizeof(*res->fct_ps));
		if (!res->fct_ps)
			rc = -ENOMEM;
		for (uint32_t i = 0; rc == 0 && i < res->n_msgs; i++) {
			const struct uet_msg_info *m = uet_sim_msg(sim, i);

			res->fct_ps[i] = m->done_ps ? m->done_ps - m->post_ps : 0;
		}
	}
	uet_sim_destroy(sim);
	for (uint32_t i = 0; i < UET_MAX_POLICIES; i++)
		if (h[i].pkg)
			pcm_package_close(&h[i]);
	return rc;
}

static void print_result(const struct arith_opts *o, const struct uet_scenario *scn,
			 uint64_t seed, const char *arith, const struct arith_result *res,
			 const struct arith_result *base)
{
	const struct uet_results *r = &res->r;
	double ratio = base->ok && base->r.fct_max_us > 0 ? r->fct_max_us / base->r.fct_max_us
							   : 0;
	uint32_t differ = 0;
	uint64_t max_diff = 0;

	/* how far the format's run drifted from double's, flow by flow */
	for (uint32_t i = 0; base->ok && i < res->n_msgs && i < base->n_msgs; i++) {
		uint64_t a = res->fct_ps[i], b = base->fct_ps[i], d = a > b ? a - b : b - a;

		differ += a != b;
		max_diff = d > max_diff ? d : max_diff;
	}

	if (!o->json) {
		printf("%-14s %-7s %-16s seed %-4llu %u/%u flows  max FCT %10.3f us  x%.4f of "
		       "double  retransmits %6llu  Jain %.4f  timeouts %llu  FCTs differing %u "
		       "(by up to %.3f us)%s\n",
		       o->policy, arith, scn->name, (unsigned long long)seed, r->completed, r->flows,
		       r->fct_max_us, ratio, (unsigned long long)r->retransmits, r->jain,
		       (unsigned long long)r->timeouts, differ, (double)max_diff / 1e6,
		       res->no_effect ? "  [--arith has no effect: all double]" : "");
		return;
	}
	printf("{\"bench\":\"validate-arith\",\"policy\":\"%s\",\"arith\":\"%s\","
	       "\"scenario\":\"%s\",\"seed\":%llu,\"flows\":%u,\"completed\":%u,"
	       "\"max_fct_us\":%.3f,\"max_fct_ratio_vs_double\":%.6f,\"retransmits\":%llu,"
	       "\"retransmits_double\":%llu,\"jain\":%.4f,\"timeouts\":%llu,\"trims\":%llu,"
	       "\"handler_calls\":%llu,\"handler_errors\":%llu,\"fcts_differing\":%u,"
	       "\"max_fct_diff_us\":%.3f,\"arith_effect\":\"%s\"}\n",
	       o->policy, arith, scn->name, (unsigned long long)seed, r->flows, r->completed,
	       r->fct_max_us, ratio, (unsigned long long)r->retransmits,
	       (unsigned long long)base->r.retransmits, r->jain, (unsigned long long)r->timeouts,
	       (unsigned long long)r->trims, (unsigned long long)r->handler_calls,
	       (unsigned long long)r->handler_errors, differ, (double)max_diff / 1e6,
	       res == base ? "reference" : res->no_effect ? "none" : "pcm_fx");
	fflush(stdout);
}

static int parse_arith_opts(int argc, char **argv, struct arith_opts *o)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "scenario", required_argument, NULL, 's' },
		{ "policy-dir", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': o->policy = optarg; break;
		case 's': o->scenario = optarg; break;
		case 'd': o->policy_dir = optarg; break;
		case 'j': o->json = true; break;
		case 'S':
			if (bench_parse_u64("--seed", optarg, 0, UINT64_MAX, &o->seed) < 0)
				return -EINVAL;
			o->have_seed = true;
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pcm-bench validate-arith: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (!o->policy || !o->policy[0] || strchr(o->policy, '/')) {
		fprintf(stderr, "pcm-bench validate-arith: --policy NAME is required (a built-in "
				"policy, or NAME.yaml and NAME.c in --policy-dir)\n");
		return -EINVAL;
	}
	return 0;
}

int bench_validate_arith(int argc, char **argv)
{
	struct arith_result res[N_ARITH] = { 0 };
	char pcmc[PATH_MAX], spec[PATH_MAX], handler[PATH_MAX], scratch[PATH_MAX];
	char so[N_ARITH][PATH_MAX + 32];
	const char *tmp = getenv("TMPDIR");
	struct arith_opts o = { 0 };
	struct uet_scenario *scn = NULL;
	struct pcm_diag diag;
	uint64_t seed;
	int rc, failed = 0;

	if (parse_arith_opts(argc, argv, &o) < 0)
		return 2;
	if (pcm_find_program("pcmc", "PCMC", pcmc, sizeof(pcmc)) < 0) {
		fprintf(stderr, "pcm-bench: validate-arith: no pcmc beside pcm-bench, in the build "
				"tree (../cli/pcmc), in $PCMC or on $PATH\n");
		return 1;
	}
	if (find_sources(&o, spec, handler, sizeof(spec)) < 0)
		return 1;
	if (o.scenario)
		rc = uet_scenario_load(o.scenario, &scn, &diag);
	else
		rc = uet_scenario_parse("(built-in) scenarios/incast-8.yaml",
					pcm_bench_scenario_incast8, pcm_bench_scenario_incast8_len,
					&scn, &diag);
	if (rc < 0) {
		fprintf(stderr, "pcm-bench: validate-arith: %s\n",
			diag.msg[0] ? diag.msg : strerror(-rc));
		return 1;
	}
	seed = o.have_seed ? o.seed : scn->seed;
	snprintf(scratch, sizeof(scratch), "%s/pcm-arith-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(scratch)) {
		fprintf(stderr, "pcm-bench: validate-arith: mkdtemp %s: %s\n", scratch,
			strerror(errno));
		uet_scenario_free(scn);
		return 1;
	}
	for (int a = 0; a < N_ARITH; a++) {
		snprintf(so[a], sizeof(so[a]), "%s/%s-%s.so", scratch, o.policy, ariths[a]);
		rc = pcmc_build(pcmc, spec, handler, ariths[a], so[a], &res[a].no_effect);
		if (rc == 0)
			rc = run_scenario(scn, so[a], seed, &res[a]);
		if (rc < 0) {
			failed++;
			continue;
		}
		print_result(&o, scn, seed, ariths[a], &res[a], &res[0]);
		if (res[a].run_rc < 0)
			fprintf(stderr,
				"pcm-bench: validate-arith: %s in %s: %u of %u flows did not complete "
				"(%s)\n",
				o.policy, ariths[a], res[a].r.flows - res[a].r.completed, res[a].r.flows,
				res[a].run_rc == -ETIMEDOUT ? "stopped at the scenario's stop time"
							    : "stalled");
	}
	for (int a = 1; a < N_ARITH; a++) {
		if (!res[a].no_effect)
			continue;
		fprintf(stderr,
			"pcm-bench: validate-arith: --arith has no effect on '%s': it computes on "
			"pcm_float (double) with C operators, not with pcm_fx, so its %s run is the "
			"double run again, not a fixed-point study\n",
			o.policy, ariths[a]);
	}
	for (int a = 0; a < N_ARITH; a++) {
		unlink(so[a]);
		free(res[a].fct_ps);
	}
	rmdir(scratch);
	uet_scenario_free(scn);
	return failed ? 1 : 0;
}
