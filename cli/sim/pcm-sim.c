// SPDX-License-Identifier: MIT
/*
 * pcm-sim - run a scenario on the in-process UET emulation (a discrete-event
 * fabric and UET NICs whose CC and LB are PCM handler packages) and say what
 * happened.
 *
 *   pcm-sim [SCENARIO.yaml] [--policy NAME|FILE.so] [--lb NAME|FILE.so|none]
 *           [--seed N] [--mode sync|async] [--delay-events N] [--set KEY=VALUE]...
 *           [--out DIR] [--plot DIR [--baseline RUN_DIR]] [--json]
 *           [--check] [--dst SEED] [--write FILE]
 *   pcm-sim sweep ...   (sweep.c)
 *
 * Without a scenario it runs the built-in one (scenarios/incast-8.yaml, an
 * 8:1 incast with swift, compiled in). --policy replaces the scenario's
 * default policy, --lb its LB package, --mode and --delay-events its shell,
 * --set any key of it (scenario_set.c); --out writes the records, --plot the
 * records and pictures of them (with pcm-plot), over another run's with
 * --baseline; --json prints one JSON object. --check runs the randomized
 * suite's checks on the scenario instead (every message once, nothing
 * leaked, the PSN/SACK invariants, two runs identical); --dst SEED takes the
 * scenario the suite's generator draws from SEED, --write FILE writes the
 * scenario out. See pcm-sim(1).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "embedded.h"
#include "json_out.h"
#include "plot_tool.h"
#include "run_records.h"
#include "spec.h"
#include "sweep.h"
#include "uet.h"
#include "uet_dst.h"

extern const char pcm_embedded_scenario_default[];
extern const size_t pcm_embedded_scenario_default_len;

#define DEFAULT_NAME "(built-in) scenarios/incast-8.yaml"
/* The built-in policies' unloaded RTT is this far off the scenario's before a warning. */
#define BRTT_RATIO_WARN 2.0
/* --set options on one command line. */
#define MAX_SETS 64

struct opts {
	const char *scenario;
	const char *policy;
	const char *lb;
	const char *out;
	const char *plot;
	const char *write;
	const char *baseline;
	struct uet_scenario_set sets[MAX_SETS];
	size_t n_sets;
	uint64_t seed, dst_seed;
	uint32_t delay_events;
	int mode;              /* -1: the scenario's; else enum uet_shell_mode */
	bool have_seed, have_dst, have_delay;
	bool json, check;
	bool help;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: pcm-sim [SCENARIO.yaml] [--policy NAME|FILE.so] [--lb NAME|FILE.so|none]\n"
		   "               [--seed N] [--mode sync|async] [--delay-events N]\n"
		   "               [--set KEY=VALUE]... [--out DIR] [--plot DIR [--baseline RUN_DIR]]\n"
		   "               [--json] [--check] [--dst SEED] [--write FILE]\n"
		   "       pcm-sim sweep GRID.yaml [-j N] [-o DIR] [--resume] (pcm-sim sweep --help)\n"
		   "  without SCENARIO: the built-in 8:1 incast with swift\n");
}

static int parse_u64(const char *flag, const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (*end || errno || s[0] == '-' || !s[0]) {
		fprintf(stderr, "pcm-sim: %s: '%s' is not a non-negative integer\n", flag, s);
		return -EINVAL;
	}
	return 0;
}

/* --set KEY=VALUE: the value is YAML, as in a scenario file. */
static int add_set(struct opts *o, char *arg)
{
	char *eq = strchr(arg, '=');
	struct uet_scenario_set *s = &o->sets[o->n_sets];

	if (!eq || eq == arg) {
		fprintf(stderr, "pcm-sim: --set: '%s' is not KEY=VALUE (--set "
				"topology.link_rate=400Gbps)\n",
			arg);
		return -EINVAL;
	}
	if (o->n_sets == MAX_SETS) {
		fprintf(stderr, "pcm-sim: --set: more than %d\n", MAX_SETS);
		return -EINVAL;
	}
	*eq = '\0';
	*s = (struct uet_scenario_set){ .key = arg, .value = eq + 1, .file = "--set", .line = 1,
					.key_line = 1, .key_col = 1 };
	o->n_sets++;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "lb", required_argument, NULL, 'l' },
		{ "seed", required_argument, NULL, 's' },
		{ "mode", required_argument, NULL, 'm' },
		{ "delay-events", required_argument, NULL, 'd' },
		{ "out", required_argument, NULL, 'o' },
		{ "plot", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "check", no_argument, NULL, 'c' },
		{ "dst", required_argument, NULL, 'D' },
		{ "write", required_argument, NULL, 'w' },
		{ "set", required_argument, NULL, 'S' },
		{ "baseline", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	o->mode = -1;
	while ((c = getopt_long(argc, argv, "p:l:s:o:jh", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->policy = optarg;
			break;
		case 'l':
			o->lb = optarg;
			break;
		case 's':
			if (parse_u64("--seed", optarg, &o->seed) < 0)
				return -EINVAL;
			o->have_seed = true;
			break;
		case 'm':
			if (strcmp(optarg, "sync") == 0) {
				o->mode = UET_SHELL_SYNC;
			} else if (strcmp(optarg, "async") == 0) {
				o->mode = UET_SHELL_ASYNC;
			} else {
				fprintf(stderr, "pcm-sim: --mode: '%s' is not sync or async\n", optarg);
				return -EINVAL;
			}
			break;
		case 'd':
			if (parse_u64("--delay-events", optarg, &v) < 0)
				return -EINVAL;
			if (v < 1 || v > 1u << 16) {
				fprintf(stderr, "pcm-sim: --delay-events: %s is outside 1..65536 (the "
						"handler feeds before its controls apply)\n",
					optarg);
				return -EINVAL;
			}
			o->delay_events = (uint32_t)v;
			o->have_delay = true;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'P':
			o->plot = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'c':
			o->check = true;
			break;
		case 'D':
			if (parse_u64("--dst", optarg, &o->dst_seed) < 0)
				return -EINVAL;
			o->have_dst = true;
			break;
		case 'w':
			o->write = optarg;
			break;
		case 'S':
			if (add_set(o, optarg) < 0)
				return -EINVAL;
			break;
		case 'B':
			o->baseline = optarg;
			break;
		case 'h':
			o->help = true;
			return 0; /* main() prints the usage: nothing else is read */
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->scenario = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "pcm-sim: one scenario at a time ('%s' is extra)\n", argv[optind]);
		return -EINVAL;
	}
	if (o->have_dst && o->scenario) {
		fprintf(stderr, "pcm-sim: --dst draws its own scenario; drop '%s' or --dst\n",
			o->scenario);
		return -EINVAL;
	}
	if (o->have_dst && o->n_sets) {
		fprintf(stderr, "pcm-sim: --set changes a scenario file; --dst draws its own\n");
		return -EINVAL;
	}
	if (o->baseline && !o->plot) {
		fprintf(stderr, "pcm-sim: --baseline RUN_DIR is drawn under this run by --plot DIR\n");
		return -EINVAL;
	}
	if (o->have_delay && o->mode == UET_SHELL_SYNC) {
		fprintf(stderr, "pcm-sim: --delay-events is the asynchronous shell's: use it "
				"with --mode async (or alone)\n");
		return -EINVAL;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long max_rss_kb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* The scenario, from its file, the built-in default, or the generator. */
static int load_scenario(const struct opts *o, struct uet_scenario **scn)
{
	struct pcm_diag diag;
	int rc;

	if (o->have_dst) {
		struct uet_dst_policy pols[64];
		uint32_t n = uet_dst_policies(pcm_builtin_policies, pols, 64);

		rc = uet_dst_generate(o->dst_seed, pols, n, scn);
		if (rc < 0)
			fprintf(stderr, "pcm-sim: --dst %llu: %s\n", (unsigned long long)o->dst_seed,
				strerror(-rc));
		return rc;
	}
	if (o->scenario)
		rc = uet_scenario_load_set(o->scenario, o->sets, o->n_sets, scn, &diag);
	else
		rc = uet_scenario_parse_set(DEFAULT_NAME, pcm_embedded_scenario_default,
					    pcm_embedded_scenario_default_len, o->sets, o->n_sets,
					    scn, &diag);
	if (rc < 0)
		fprintf(stderr, "pcm-sim: %s\n", diag.msg[0] ? diag.msg : strerror(-rc));
	return rc;
}

/*
 * A package named on the command line: a built-in name, or a shared object.
 * A name ending in ".so" without a '/' is a file in the current directory
 * when one exists (dlopen would search the library path instead).
 */
static int command_line_package(const char *flag, const char *name, char *buf, size_t len)
{
	size_t n = strlen(name);

	if (n + 3 > len) {
		fprintf(stderr, "pcm-sim: %s: name too long\n", flag);
		return -ENAMETOOLONG;
	}
	if (!strchr(name, '/') && n > 3 && strcmp(name + n - 3, ".so") == 0) {
		if (access(name, R_OK) != 0) {
			fprintf(stderr,
				"pcm-sim: %s %s: no such file here; a package built by pcmc is a "
				"path (./%s, /path/to/%s), a built-in one a name (swift, ...; "
				"pcm-bench list)\n",
				flag, name, name, name);
			return -ENOENT;
		}
		snprintf(buf, len, "./%s", name);
		return 0;
	}
	snprintf(buf, len, "%s", name);
	return 0;
}

/* The command line's changes to the scenario. Return: 0, or 2 (usage error). */
static int apply_opts(const struct opts *o, struct uet_scenario *scn)
{
	char name[sizeof(scn->policies[0])];

	if (o->policy) {
		if (command_line_package("--policy", o->policy, name, sizeof(name)) < 0)
			return 2;
		snprintf(scn->policies[0], sizeof(scn->policies[0]), "%s", name);
	}
	if (o->lb) {
		int rc;

		if (command_line_package("--lb", o->lb, name, sizeof(name)) < 0)
			return 2;
		rc = uet_scenario_set_lb(scn, name);
		if (rc < 0) {
			fprintf(stderr, "pcm-sim: --lb: %s\n",
				rc == -ENOSPC ? "the scenario already names 8 packages"
					      : "name too long");
			return 2;
		}
	}
	if (o->have_seed)
		scn->seed = o->seed;
	if (o->mode >= 0)
		scn->shell_mode = (enum uet_shell_mode)o->mode;
	if (o->have_delay) {
		scn->shell_mode = UET_SHELL_ASYNC;
		scn->delay_events = o->delay_events;
	}
	if (scn->shell_mode == UET_SHELL_ASYNC && !scn->delay_events) {
		fprintf(stderr, "pcm-sim: --mode async needs a delay: --delay-events N (N >= 1), "
				"or shell.delay_events in the scenario\n");
		return 2;
	}
	return 0;
}

/* The key that named policy @i: "policy", "lb", or the first rule or flow naming it. */
static const char *policy_key(const struct uet_scenario *scn, uint32_t i, char *buf, size_t len)
{
	if (i == 0)
		return "policy";
	if (scn->has_lb && i == scn->lb_policy)
		return "lb";
	for (uint32_t k = 0; k < scn->n_rules; k++)
		if (scn->rules[k].policy == i)
			return snprintf(buf, len, "rules[%u].policy", k), buf;
	for (uint32_t k = 0; k < scn->n_flows; k++)
		if (scn->flows[k].policy == (int32_t)i)
			return snprintf(buf, len, "flows[%u].policy", k), buf;
	return "policy";
}

static int open_packages(const struct uet_scenario *scn, struct pcm_package_handle *h,
			 const struct pcm_package **pkgs)
{
	for (uint32_t i = 0; i < scn->n_policies; i++) {
		char err[512], key[48], where[320];

		if (strcmp(scn->policies[i], "none") == 0)
			continue;
		if (pcm_package_open(scn->policies[i], pcm_builtin_policies, &h[i], err,
				     sizeof(err)) < 0) {
			uet_scenario_where(scn, policy_key(scn, i, key, sizeof(key)), where,
					   sizeof(where));
			fprintf(stderr, "pcm-sim: %s: '%s': %s\n", where, scn->policies[i], err);
			return -ENOENT;
		}
		pkgs[i] = h[i].pkg;
	}
	return 0;
}

static bool is_builtin(const struct pcm_package *pkg)
{
	for (size_t i = 0; pcm_builtin_policies[i]; i++)
		if (pcm_builtin_policies[i] == pkg)
			return true;
	return false;
}

/*
 * The built-in packages are built with the default fabric profile: a
 * scenario whose unloaded RTT is far from its FABRIC_BRTT runs them with
 * constants (target delays, base RTTs) meant for another fabric.
 */
static void warn_brtt(const struct uet_scenario *scn, const struct pcm_package *const *pkgs,
		      const struct uet_sim *sim)
{
	struct pcm_fabric *fab = NULL;
	struct pcm_diag diag;
	double brtt = 0, rtt = (double)uet_sim_unloaded_rtt_ps(sim);
	bool builtin = false;

	for (uint32_t i = 0; i < scn->n_policies; i++)
		builtin |= pkgs[i] && is_builtin(pkgs[i]);
	if (!builtin || pcm_fabric_parse("policies/fabric/default.yaml",
					 pcm_embedded_fabric_default,
					 pcm_embedded_fabric_default_len, &fab, &diag) < 0)
		return;
	for (unsigned i = 0; i < fab->n_entries; i++)
		if (strcmp(fab->entries[i].name, "FABRIC_BRTT") == 0)
			brtt = fab->entries[i].value.num.type == PCM_NUM_FLOAT
				       ? fab->entries[i].value.num.f
				       : (double)fab->entries[i].value.num.u;
	pcm_fabric_free(fab);
	if (brtt > 0 && (rtt > brtt * BRTT_RATIO_WARN || rtt * BRTT_RATIO_WARN < brtt))
		fprintf(stderr,
			"pcm-sim: warning: %s: the unloaded RTT of the longest path is %.2f us, "
			"the built-in policies were built for FABRIC_BRTT %.2f us (their "
			"targets and base RTTs will be off; pcmc build --fabric makes a "
			"package for this fabric)\n",
			scn->path, rtt / 1e6, brtt / 1e6);
}

/* Ideal completion of an incast: every byte into the receiver at its link rate. */
static double ideal_us(const struct uet_scenario *scn, const struct uet_sim *sim)
{
	uint64_t rate = scn->nic.data_rate_bps < scn->topo.link_rate_bps ? scn->nic.data_rate_bps
									 : scn->topo.link_rate_bps;
	uint64_t bytes = 0;

	if (scn->traffic != UET_TRAFFIC_INCAST || scn->n_flows)
		return 0;
	for (uint32_t i = 0; i < uet_sim_n_msgs(sim); i++)
		bytes += uet_sim_msg(sim, i)->bytes;
	return (double)bytes * 8 / (double)rate * 1e6;
}

/* @timing: add wall-clock figures (left out of summary.json, which must be reproducible). */
static void print_json(FILE *f, const struct uet_scenario *scn, const struct uet_results *r,
		       double wall, double ideal, bool timing)
{
	fputs("{\"scenario\":", f);
	json_str(f, scn->name);
	fputs(",\"policy\":", f);
	json_str(f, scn->policies[0]);
	if (scn->has_lb) {
		fputs(",\"lb\":", f);
		json_str(f, scn->policies[scn->lb_policy]);
	}
	fprintf(f,
		",\"seed\":%llu,\"hosts\":%u,\"flows\":%u,\"completed\":%u,\"sim_time_us\":%.3f,"
		"\"fct_us\":{\"min\":%.3f,\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f},",
		(unsigned long long)scn->seed, r->hosts, r->flows, r->completed,
		(double)r->sim_time_ps / 1e6, r->fct_min_us, r->fct_p50_us, r->fct_p99_us,
		r->fct_max_us);
	if (ideal > 0)
		fprintf(f, "\"ideal_fct_us\":%.3f,\"max_fct_over_ideal\":%.4f,", ideal,
			r->fct_max_us / ideal);
	fprintf(f,
		"\"jain\":%.4f,\"goodput_gbps\":%.3f,\"data_packets\":%llu,\"retransmits\":%llu,"
		"\"nacks\":%llu,\"trims\":%llu,\"drops\":%llu,\"timeouts\":%llu,\"ecn_marks\":%llu,"
		"\"acks\":%llu,\"probes\":%llu,\"handler_calls\":%llu,\"handler_errors\":%llu,"
		"\"events\":%llu",
		r->jain, r->goodput_gbps, (unsigned long long)r->data_packets,
		(unsigned long long)r->retransmits, (unsigned long long)r->nacks,
		(unsigned long long)r->trims, (unsigned long long)r->drops,
		(unsigned long long)r->timeouts, (unsigned long long)r->ecn_marks,
		(unsigned long long)r->acks, (unsigned long long)r->probes,
		(unsigned long long)r->handler_calls, (unsigned long long)r->handler_errors,
		(unsigned long long)r->events);
	if (timing)
		fprintf(f,
			",\"wall_s\":%.3f,\"data_packets_per_wall_s\":%.0f,"
			"\"events_per_wall_s\":%.0f,\"max_rss_mb\":%.1f",
			wall, wall > 0 ? (double)r->data_packets / wall : 0,
			wall > 0 ? (double)r->events / wall : 0, (double)max_rss_kb() / 1024);
	fputs("}\n", f);
}

/* The group policy each message ran: its own, else the rules' (resolved at the start). */
static const char *msg_policy(const struct uet_scenario *scn, const struct uet_msg_info *m)
{
	return m->policy < scn->n_policies ? scn->policies[m->policy] : scn->policies[0];
}

/* "policy swift", or "policies swift (8 flows), dctcp (4 flows)" when rules or flows differ. */
static void print_policies(const struct uet_scenario *scn, const struct uet_sim *sim)
{
	uint32_t count[UET_MAX_POLICIES] = { 0 }, used = 0;

	for (uint32_t i = 0; i < uet_sim_n_msgs(sim); i++) {
		const struct uet_msg_info *m = uet_sim_msg(sim, i);

		if (m->policy < scn->n_policies && !count[m->policy]++)
			used++;
	}
	if (used <= 1) {
		printf("policy %s", used ? msg_policy(scn, uet_sim_msg(sim, 0)) : scn->policies[0]);
		return;
	}
	printf("policies");
	for (uint32_t p = 0, k = 0; p < scn->n_policies; p++)
		if (count[p])
			printf("%s %s (%u flow%s)", k++ ? "," : "", scn->policies[p], count[p],
			       count[p] == 1 ? "" : "s");
}

static void print_text(const struct uet_scenario *scn, const struct uet_sim *sim,
		       const struct uet_results *r, double wall, double ideal, int rc)
{
	uint32_t n = uet_sim_n_msgs(sim);

	printf("pcm-sim: %s (%s): %u hosts, %u flows, ", scn->name, scn->path, r->hosts, r->flows);
	print_policies(scn, sim);
	printf("%s%s, seed %llu\n", scn->has_lb ? ", lb " : "",
	       scn->has_lb ? scn->policies[scn->lb_policy] : "", (unsigned long long)scn->seed);
	if (scn->description[0])
		printf("%s\n", scn->description);
	if (n <= 32) {
		printf("\n  flow  src -> dst        bytes    start us      FCT us"
		       "   goodput Gb/s  policy\n");
		for (uint32_t i = 0; i < n; i++) {
			const struct uet_msg_info *m = uet_sim_msg(sim, i);
			double fct = m->done_ps ? (double)(m->done_ps - m->post_ps) / 1e6 : 0;

			printf("  %4u %4u -> %-4u %12llu %11.3f %11.3f %14.2f  %s\n", i, m->src, m->dst,
			       (unsigned long long)m->bytes, (double)m->post_ps / 1e6, fct,
			       fct > 0 ? (double)m->bytes * 8 / fct / 1e3 : 0, msg_policy(scn, m));
		}
	}
	printf("\n%u of %u flows completed in %.3f us of simulated time%s\n", r->completed,
	       r->flows, (double)r->sim_time_ps / 1e6,
	       rc == 0 ? "" : rc == -ETIMEDOUT ? " (stopped at the scenario's stop time)"
					      : " (stalled)");
	printf("FCT us: min %.3f  p50 %.3f  p99 %.3f  max %.3f\n", r->fct_min_us, r->fct_p50_us,
	       r->fct_p99_us, r->fct_max_us);
	if (ideal > 0)
		printf("ideal (all bytes through the receiver's link): %.3f us; max FCT / ideal "
		       "%.4f\n",
		       ideal, r->fct_max_us / ideal);
	printf("goodput %.2f Gbit/s, Jain fairness %.4f\n", r->goodput_gbps, r->jain);
	printf("data packets %llu, retransmits %llu, NACKs %llu, trims %llu, drops %llu, "
	       "timeouts %llu, ECN marks %llu\n",
	       (unsigned long long)r->data_packets, (unsigned long long)r->retransmits,
	       (unsigned long long)r->nacks, (unsigned long long)r->trims,
	       (unsigned long long)r->drops, (unsigned long long)r->timeouts,
	       (unsigned long long)r->ecn_marks);
	printf("handler calls %llu (errors %llu), events %llu, %.3f s wall, %.2f M data "
	       "packets/s\n",
	       (unsigned long long)r->handler_calls, (unsigned long long)r->handler_errors,
	       (unsigned long long)r->events, wall,
	       wall > 0 ? (double)r->data_packets / wall / 1e6 : 0);
}

static int write_fct(const char *dir, const struct uet_sim *sim)
{
	FILE *f = records_open(dir, "fct.csv");

	if (!f)
		return -EIO;
	fputs("flow,src,dst,bytes,post_ps,send_complete_ps,recv_complete_ps,msg_complete_ps,"
	      "fct_ps\n",
	      f);
	for (uint32_t i = 0; i < uet_sim_n_msgs(sim); i++) {
		const struct uet_msg_info *m = uet_sim_msg(sim, i);

		fprintf(f, "%u,%u,%u,%llu,%llu,%llu,%llu,%llu,%llu\n", i, m->src, m->dst,
			(unsigned long long)m->bytes, (unsigned long long)m->post_ps,
			(unsigned long long)m->tx_done_ps, (unsigned long long)m->rx_done_ps,
			(unsigned long long)m->done_ps,
			(unsigned long long)(m->done_ps ? m->done_ps - m->post_ps : 0));
	}
	return fclose(f) == 0 ? 0 : -EIO;
}

static int write_scenario(const char *path, const struct uet_scenario *scn)
{
	FILE *f = fopen(path, "w");

	if (!f || uet_scenario_write(scn, f) < 0) {
		fprintf(stderr, "pcm-sim: --write %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -EIO;
	}
	return fclose(f) ? -EIO : 0;
}

/* --check: the randomized suite's invariants on this scenario. Return: the exit status. */
static int check(const struct uet_scenario *scn, const struct pcm_package *const *pkgs)
{
	struct uet_dst_result res;
	double t0 = now_s();
	int rc = uet_dst_check(scn, pkgs, true, &res);

	if (rc == 0) {
		printf("pcm-sim: %s: check passed: %u messages each completed once with every "
		       "byte, nothing leaked, the PSN/SACK invariants held, two runs gave "
		       "identical records (%.3f us simulated, %llu events, %.3f s wall)\n",
		       scn->path, res.msgs, (double)res.sim_time_ps / 1e6,
		       (unsigned long long)res.events, now_s() - t0);
		return 0;
	}
	printf("pcm-sim: %s: check FAILED: %s\n", scn->path, res.what);
	return 1;
}

/* The records a run writes into @dir. Return: 0, -EIO. */
static int open_records(const char *dir, const struct uet_scenario *scn, struct uet_records *rec)
{
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "pcm-sim: %s: %s\n", dir, strerror(errno));
		return -EIO;
	}
	rec->transport_stats =
		scn->nic.transport_stats ? records_open(dir, "uet-transport-stats.csv") : NULL;
	rec->events = scn->nic.event_logging ? records_open(dir, "uet-events.csv") : NULL;
	rec->monitor = scn->nic.uet_monitor ? records_open(dir, "uet-monitor.csv") : NULL;
	rec->flows = records_open(dir, "uet-flows.csv");
	rec->queues = records_open(dir, "uet-queues.csv");
	if ((scn->nic.transport_stats && !rec->transport_stats) ||
	    (scn->nic.event_logging && !rec->events) || (scn->nic.uet_monitor && !rec->monitor) ||
	    !rec->flows || !rec->queues)
		return -EIO;
	return 0;
}

static int close_records(struct uet_records *rec)
{
	FILE *all[] = { rec->transport_stats, rec->events, rec->monitor, rec->flows, rec->queues };
	int ret = 0;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i] && fclose(all[i]) != 0)
			ret = -EIO;
	memset(rec, 0, sizeof(*rec));
	return ret;
}

/* pcm-plot over the records in @dir, over @baseline's if given. */
static int plot(const char *dir, const char *baseline)
{
	const char *args[] = { dir, dir, baseline ? "--baseline" : NULL, baseline, NULL };

	return plot_tool_run("--plot", "pcm-plot", "PCM_PLOT", args);
}

/* A run with its report and records. Return: the exit status. */
static int run(const struct opts *o, const struct uet_scenario *scn,
	       const struct pcm_package *const *pkgs)
{
	const char *dir = o->out ? o->out : o->plot;
	struct uet_records rec = { 0 };
	struct goodput_rec goodput = { 0 };
	struct uet_sim *sim = NULL;
	struct uet_results r;
	struct pcm_diag diag;
	double t0, wall, ideal;
	int rc, ret = 1;

	rc = uet_sim_create(scn, pkgs, scn->seed, &sim, &diag);
	if (rc < 0) {
		fprintf(stderr, "pcm-sim: %s\n", diag.msg[0] ? diag.msg : strerror(-rc));
		return 2;
	}
	for (const char *w = uet_sim_warnings(sim), *nl; *w; w = nl + 1) {
		nl = strchr(w, '\n');
		fprintf(stderr, "pcm-sim: warning: %.*s\n", (int)(nl - w), w);
	}
	warn_brtt(scn, pkgs, sim);
	if (dir) {
		if (open_records(dir, scn, &rec) < 0 || failures_write(dir, scn) < 0 ||
		    goodput_rec_start(&goodput, dir, scn, sim) < 0)
			goto out;
		uet_sim_set_records(sim, &rec);
	}
	t0 = now_s();
	rc = uet_sim_start(sim, &diag);
	if (rc < 0) {
		fprintf(stderr, "pcm-sim: %s: the run does not start: %s\n", scn->path, diag.msg);
		goto out;
	}
	rc = uet_sim_run(sim, scn->stop_ps);
	wall = now_s() - t0;
	if (rc == -ENOMEM) {
		fprintf(stderr, "pcm-sim: %s: out of memory during the run\n", scn->path);
		goto out;
	}
	uet_sim_results(sim, &r);
	ideal = ideal_us(scn, sim);
	if (o->json)
		print_json(stdout, scn, &r, wall, ideal, true);
	else
		print_text(scn, sim, &r, wall, ideal, rc);
	ret = rc == 0 ? 0 : 1;
	if (rc < 0)
		fprintf(stderr, "pcm-sim: %s: %u of %u flows did not complete by %.3f us%s\n",
			scn->path, r.flows - r.completed, r.flows, (double)uet_sim_now(sim) / 1e6,
			rc == -ETIMEDOUT ? " (raise 'stop' in the scenario)" : "");
	if (dir) {
		FILE *f;

		if (write_fct(dir, sim) < 0)
			ret = 1;
		f = records_open(dir, "summary.json");
		if (!f)
			ret = 1;
		if (f) {
			print_json(f, scn, &r, 0, ideal, false);
			if (fclose(f) != 0)
				ret = 1;
		}
		if (close_records(&rec) < 0 || goodput_rec_finish(&goodput) < 0)
			ret = 1;
		if (o->plot && plot(o->plot, o->baseline) < 0)
			ret = 1;
	}
out:
	close_records(&rec);
	goodput_rec_finish(&goodput);
	uet_sim_destroy(sim);
	return ret;
}

int main(int argc, char **argv)
{
	struct pcm_package_handle h[UET_MAX_POLICIES] = { 0 };
	const struct pcm_package *pkgs[UET_MAX_POLICIES] = { 0 };
	struct uet_scenario *scn = NULL;
	struct opts o = { 0 };
	int ret = 2;

	if (argc > 1 && strcmp(argv[1], "sweep") == 0)
		return sweep_main(argc - 1, argv + 1);
	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	if (o.help) {
		usage(stdout);
		return 0;
	}
	if (load_scenario(&o, &scn) < 0)
		return 2;
	ret = apply_opts(&o, scn);
	if (ret)
		goto out;
	ret = 2;
	if (o.write && write_scenario(o.write, scn) < 0)
		goto out;
	if (open_packages(scn, h, pkgs) < 0)
		goto out;
	if (o.check || o.have_dst)
		ret = check(scn, pkgs);
	else
		ret = run(&o, scn, pkgs);
out:
	for (uint32_t i = 0; i < UET_MAX_POLICIES; i++)
		if (h[i].pkg)
			pcm_package_close(&h[i]);
	uet_scenario_free(scn);
	return ret;
}
