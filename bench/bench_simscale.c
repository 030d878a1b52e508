// SPDX-License-Identifier: MIT
/*
 * bench_simscale.c - pcm-bench sim-scale: how the emulation's speed holds as
 * the fabric grows (issue 25, point 4: at 8,192 hosts at least half the
 * 128-host rate, in at most 150 MB).
 *
 * Each round runs pcm-sim on one scenario (by default the fat-tree
 * permutation of scenarios/fattree-permutation.yaml) once per fat-tree
 * size k, in the order given, each run a process of its own with
 * `--set topology.k=K --json`: its data packets per wall second and its peak
 * memory are pcm-sim's own figures, the ones bench/RESULTS.md quotes. The
 * first k is the baseline: every run gets its rate over the baseline's in
 * the same round, so that a machine slowing down between rounds moves both.
 * After the rounds, one summary per k: the medians, the ratio of the
 * medians, and the median, lowest and highest per-round ratio.
 *
 * pcm-sim is the one beside this program, in the build tree
 * (../cli/sim/pcm-sim), in $PCM_SIM or on $PATH (pcm_find_program()).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "pcm_text.h"
#include "progdir.h"

#define MAX_KS 8
#define MAX_ROUNDS 100
#define MAX_SETS 16
#define DEFAULT_SCENARIO "fattree-permutation.yaml"

struct simscale_opts {
	const char *scenario;
	uint32_t ks[MAX_KS];
	unsigned n_ks;
	uint32_t rounds;
	const char *sets[MAX_SETS];
	unsigned n_sets;
	bool json;
	const char *scenario_json; /* the scenario inside a JSON string (pcm_text_json()) */
};

/* One pcm-sim run: the figures its --json line gives. */
struct simscale_run {
	double hosts, data_packets, events, wall_s, rate, rss_mb;
};

static void simscale_usage(FILE *f)
{
	fputs("usage: pcm-bench sim-scale [--scenario FILE] [--k K1,K2,...] [--rounds N]\n"
	      "                           [--set KEY=VALUE]... [--json]\n"
	      "  runs pcm-sim on FILE (default: scenarios/" DEFAULT_SCENARIO ") once per\n"
	      "  fat-tree size k per round (default --k 8,32, --rounds 5); the first k is\n"
	      "  the baseline of each round's ratios\n",
	      f);
}

/* "8,16,32" into o->ks. Return: 0, -EINVAL (said on stderr). */
static int parse_ks(const char *s, struct simscale_opts *o)
{
	char *copy = strdup(s), *save = NULL;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	o->n_ks = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->n_ks == MAX_KS) {
			fprintf(stderr, "pcm-bench: sim-scale: --k: at most %d sizes\n", MAX_KS);
			rc = -EINVAL;
		} else {
			rc = bench_parse_u32("--k", tok, 2, 128, &o->ks[o->n_ks++]);
		}
	}
	free(copy);
	if (rc == 0 && o->n_ks == 0) {
		fprintf(stderr, "pcm-bench: sim-scale: --k: give at least one size, as 8,32\n");
		rc = -EINVAL;
	}
	return rc;
}

/* The default scenario: from the working directory (a source tree), else the installed one. */
static const char *default_scenario(char *buf, size_t len)
{
	static const char local[] = "scenarios/" DEFAULT_SCENARIO;
	char path[2 * PATH_MAX];

	if (access(local, R_OK) == 0)
		return local;
	/* bin/../share/...: named as the user would */
	if (bench_installed_data(local, path, sizeof(path)) == 0 && len >= PATH_MAX &&
	    realpath(path, buf))
		return buf;
	return local; /* unreadable: the error names the usual place */
}

static int parse_simscale(int argc, char **argv, struct simscale_opts *o, char *scn_buf,
			  size_t scn_len)
{
	static const struct option longs[] = {
		{ "scenario", required_argument, NULL, 's' },
		{ "k", required_argument, NULL, 'k' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "set", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct simscale_opts){ .ks = { 8, 32 }, .n_ks = 2, .rounds = 5 };
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "", longs, NULL)) != -1) {
		switch (c) {
		case 's':
			o->scenario = optarg;
			break;
		case 'k':
			if (parse_ks(optarg, o) < 0)
				return -EINVAL;
			break;
		case 'r':
			if (bench_parse_u32("--rounds", optarg, 1, MAX_ROUNDS, &o->rounds) < 0)
				return -EINVAL;
			break;
		case 'S':
			if (o->n_sets == MAX_SETS || !strchr(optarg, '=')) {
				fprintf(stderr,
					"pcm-bench: sim-scale: --set '%s': give KEY=VALUE, at most "
					"%d times\n",
					optarg, MAX_SETS);
				return -EINVAL;
			}
			o->sets[o->n_sets++] = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			simscale_usage(stdout);
			exit(0);
		default:
			simscale_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "pcm-bench: sim-scale: unexpected argument '%s'\n", argv[optind + 1]);
		return -EINVAL;
	}
	if (!o->scenario)
		o->scenario = default_scenario(scn_buf, scn_len);
	return 0;
}

/* The number after "KEY": in pcm-sim's flat JSON line. Return: 0, -ENOENT. */
static int json_number(const char *line, const char *key, double *out)
{
	char pat[64];
	const char *p;
	char *end;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	if (!p)
		return -ENOENT;
	*out = strtod(p + strlen(pat), &end);
	return end == p + strlen(pat) ? -ENOENT : 0;
}

static int parse_run(const char *line, struct simscale_run *r)
{
	int rc = json_number(line, "hosts", &r->hosts);

	rc = rc ? rc : json_number(line, "data_packets", &r->data_packets);
	rc = rc ? rc : json_number(line, "events", &r->events);
	rc = rc ? rc : json_number(line, "wall_s", &r->wall_s);
	rc = rc ? rc : json_number(line, "data_packets_per_wall_s", &r->rate);
	rc = rc ? rc : json_number(line, "max_rss_mb", &r->rss_mb);
	return rc;
}

/* pcm-sim's stdout, kept up to its buffer's size. */
struct sim_output {
	char *text;
	size_t used, len;
};

static void sim_chunk(void *ctx, const char *data, size_t n)
{
	struct sim_output *o = ctx;
	size_t take = n < o->len - 1 - o->used ? n : o->len - 1 - o->used;

	memcpy(o->text + o->used, data, take);
	o->used += take;
	o->text[o->used] = '\0';
}

/*
 * pcm-sim's stdout for one run into @out; its stderr goes to ours.
 * Return: its exit status, or -errno.
 */
static int spawn_sim(const char *sim, const struct simscale_opts *o, uint32_t k, char *out,
		     size_t len)
{
	char kset[32];
	char *argv[4 + 2 * MAX_SETS + 2];
	struct sim_output so = { .text = out, .len = len };
	int argc = 0;

	snprintf(kset, sizeof(kset), "topology.k=%u", k);
	argv[argc++] = (char *)sim;
	argv[argc++] = (char *)o->scenario;
	argv[argc++] = "--set";
	argv[argc++] = kset;
	for (unsigned i = 0; i < o->n_sets; i++) {
		argv[argc++] = "--set";
		argv[argc++] = (char *)o->sets[i];
	}
	argv[argc++] = "--json";
	argv[argc] = NULL;
	out[0] = '\0';
	return bench_run_piped(argv, false, sim_chunk, &so);
}

static void print_run(const struct simscale_opts *o, uint32_t round, uint32_t k,
		      const struct simscale_run *r, double ratio)
{
	if (!o->json) {
		printf("round %2u  k=%-3u %6.0f hosts  %9.0f data packets/s  %6.1f MB  ratio %.3f\n",
		       round, k, r->hosts, r->rate, r->rss_mb, ratio);
		return;
	}
	printf("{\"bench\":\"sim-scale\",\"scenario\":\"%s\",\"round\":%u,\"k\":%u,"
	       "\"hosts\":%.0f,\"data_packets\":%.0f,\"events\":%.0f,\"wall_s\":%.3f,"
	       "\"data_packets_per_wall_s\":%.0f,\"max_rss_mb\":%.1f,"
	       "\"baseline_k\":%u,\"ratio\":%.4f}\n",
	       o->scenario_json, round, k, r->hosts, r->data_packets, r->events, r->wall_s,
	       r->rate, r->rss_mb, o->ks[0], ratio);
}

/* The summary of size @ki over the rounds: @rate and @ratio hold one figure per round. */
static void print_summary(const struct simscale_opts *o, unsigned ki, double hosts, double *rate,
			  double base_median, double *ratio, double rss_max)
{
	double lo = ratio[0], hi = ratio[0], median_rate, median_ratio;

	for (uint32_t i = 1; i < o->rounds; i++) {
		lo = ratio[i] < lo ? ratio[i] : lo;
		hi = ratio[i] > hi ? ratio[i] : hi;
	}
	median_rate = bench_median(rate, o->rounds);
	median_ratio = bench_median(ratio, o->rounds);
	if (!o->json) {
		printf("k=%-3u %6.0f hosts: median %9.0f data packets/s, %.3f of k=%u's median "
		       "(per round: median %.3f, %.3f-%.3f), peak %.1f MB\n",
		       o->ks[ki], hosts, median_rate, median_rate / base_median, o->ks[0],
		       median_ratio, lo, hi, rss_max);
		return;
	}
	printf("{\"bench\":\"sim-scale\",\"summary\":true,\"scenario\":\"%s\",\"k\":%u,"
	       "\"hosts\":%.0f,\"rounds\":%u,\"median_data_packets_per_wall_s\":%.0f,"
	       "\"baseline_k\":%u,\"ratio_of_medians\":%.4f,\"median_round_ratio\":%.4f,"
	       "\"min_round_ratio\":%.4f,\"max_round_ratio\":%.4f,\"max_rss_mb\":%.1f}\n",
	       o->scenario_json, o->ks[ki], hosts, o->rounds, median_rate, o->ks[0],
	       median_rate / base_median, median_ratio, lo, hi, rss_max);
}

int bench_sim_scale(int argc, char **argv)
{
	static double rate[MAX_KS][MAX_ROUNDS], ratio[MAX_KS][MAX_ROUNDS];
	static char scn_json[PCM_TEXT_JSON_MAX(PATH_MAX)];
	double hosts[MAX_KS] = { 0 }, rss_max[MAX_KS] = { 0 };
	struct simscale_opts o;
	char sim[PATH_MAX], scn_buf[PATH_MAX], out[65536];

	if (parse_simscale(argc, argv, &o, scn_buf, sizeof(scn_buf)) < 0)
		return 2;
	if (access(o.scenario, R_OK) != 0) {
		fprintf(stderr, "pcm-bench: sim-scale: cannot read the scenario %s: %s\n",
			o.scenario, strerror(errno));
		return 2;
	}
	pcm_text_json(scn_json, sizeof(scn_json), o.scenario);
	o.scenario_json = scn_json;
	if (pcm_find_program("pcm-sim", "PCM_SIM", sim, sizeof(sim)) < 0) {
		fprintf(stderr, "pcm-bench: sim-scale: no pcm-sim beside pcm-bench, in the build "
				"tree (../cli/sim/pcm-sim), in $PCM_SIM or on $PATH\n");
		return 2;
	}
	for (uint32_t round = 0; round < o.rounds; round++) {
		double base = 0;

		for (unsigned ki = 0; ki < o.n_ks; ki++) {
			struct simscale_run r;
			int rc = spawn_sim(sim, &o, o.ks[ki], out, sizeof(out));

			if (rc != 0 || parse_run(out, &r) < 0 || r.rate <= 0) {
				fprintf(stderr,
					"pcm-bench: sim-scale: round %u, k=%u: `%s %s --set "
					"topology.k=%u ... --json` %s\n",
					round + 1, o.ks[ki], sim, o.scenario, o.ks[ki],
					rc < 0	 ? strerror(-rc) :
					rc > 0	 ? "failed (its message is above)" :
						   "printed no rate");
				return 1;
			}
			if (ki == 0)
				base = r.rate;
			rate[ki][round] = r.rate;
			ratio[ki][round] = r.rate / base;
			hosts[ki] = r.hosts;
			rss_max[ki] = r.rss_mb > rss_max[ki] ? r.rss_mb : rss_max[ki];
			print_run(&o, round + 1, o.ks[ki], &r, ratio[ki][round]);
			fflush(stdout);
		}
	}
	{
		double base_median = bench_median(rate[0], o.rounds);

		for (unsigned ki = 0; ki < o.n_ks; ki++)
			print_summary(&o, ki, hosts[ki], rate[ki], base_median, ratio[ki],
				      rss_max[ki]);
	}
	return 0;
}
