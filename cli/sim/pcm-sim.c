// SPDX-License-Identifier: MIT
/*
 * pcm-sim - run a scenario on the in-process UET emulation (a discrete-event
 * fabric and UET NICs whose CC and LB are PCM handler packages) and say what
 * happened.
 *
 *   pcm-sim [SCENARIO.yaml] [--policy NAME|FILE.so] [--lb NAME|FILE.so|none] [--seed N]
 *           [--out DIR] [--json]
 *
 * Without a scenario it runs the built-in one (scenarios/incast-8.yaml, an
 * 8:1 incast with swift, compiled in). --policy replaces the scenario's
 * default policy, --lb its LB package (run beside every group's policy);
 * --out writes the records (uet-transport-stats.csv,
 * uet-events.csv, uet-monitor.csv when EnableUETMonitor is set,
 * uet-flows.csv) plus fct.csv and summary.json; --json prints one JSON object.
 * See pcm-sim(1).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "builtin.h"
#include "uet.h"

extern const char pcm_embedded_scenario_default[];
extern const size_t pcm_embedded_scenario_default_len;

#define DEFAULT_NAME "(built-in) scenarios/incast-8.yaml"

struct opts {
	const char *scenario;
	const char *policy;
	const char *lb;
	const char *out;
	uint64_t seed;
	bool have_seed;
	bool json;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: pcm-sim [SCENARIO.yaml] [--policy NAME|FILE.so]\n"
		   "               [--lb NAME|FILE.so|none] [--seed N] [--out DIR] [--json]\n"
		   "  without SCENARIO: the built-in 8:1 incast with swift\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "lb", required_argument, NULL, 'l' },
		{ "seed", required_argument, NULL, 's' },
		{ "out", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "p:l:s:o:jh", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->policy = optarg;
			break;
		case 'l':
			o->lb = optarg;
			break;
		case 's':
			errno = 0;
			o->seed = strtoull(optarg, &end, 0);
			if (*end || errno || optarg[0] == '-' || !optarg[0]) {
				fprintf(stderr,
					"pcm-sim: --seed: '%s' is not a non-negative integer\n",
					optarg);
				return -EINVAL;
			}
			o->have_seed = true;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
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

static FILE *open_out(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "pcm-sim: %s: cannot write: %s\n", path, strerror(errno));
	return f;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
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
static void print_json(FILE *f, const struct uet_scenario *scn, const char *policy, uint64_t seed,
		       const struct uet_results *r, double wall, double ideal, bool timing)
{
	fputs("{\"scenario\":", f);
	json_str(f, scn->name);
	fputs(",\"policy\":", f);
	json_str(f, policy);
	if (scn->has_lb) {
		fputs(",\"lb\":", f);
		json_str(f, scn->policies[scn->lb_policy]);
	}
	fprintf(f,
		",\"seed\":%llu,\"hosts\":%u,\"flows\":%u,\"completed\":%u,\"sim_time_us\":%.3f,"
		"\"fct_us\":{\"min\":%.3f,\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f},",
		(unsigned long long)seed, r->hosts, r->flows, r->completed,
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

static void print_text(const struct uet_scenario *scn, const char *policy, uint64_t seed,
		       const struct uet_sim *sim, const struct uet_results *r, double wall,
		       double ideal, int rc)
{
	uint32_t n = uet_sim_n_msgs(sim);

	printf("pcm-sim: %s (%s): %u hosts, %u flows, policy %s%s%s, seed %llu\n", scn->name,
	       scn->path, r->hosts, r->flows, policy, scn->has_lb ? ", lb " : "",
	       scn->has_lb ? scn->policies[scn->lb_policy] : "", (unsigned long long)seed);
	if (scn->description[0])
		printf("%s\n", scn->description);
	if (n <= 32) {
		printf("\n  flow  src -> dst        bytes    start us      FCT us"
		       "   goodput Gb/s\n");
		for (uint32_t i = 0; i < n; i++) {
			const struct uet_msg_info *m = uet_sim_msg(sim, i);
			double fct = m->done_ps ? (double)(m->done_ps - m->post_ps) / 1e6 : 0;

			printf("  %4u %4u -> %-4u %12llu %11.3f %11.3f %14.2f\n", i, m->src, m->dst,
			       (unsigned long long)m->bytes, (double)m->post_ps / 1e6, fct,
			       fct > 0 ? (double)m->bytes * 8 / fct / 1e3 : 0);
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
	FILE *f = open_out(dir, "fct.csv");

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

int main(int argc, char **argv)
{
	struct pcm_package_handle h[UET_MAX_POLICIES] = { 0 };
	const struct pcm_package *pkgs[UET_MAX_POLICIES] = { 0 };
	struct uet_records rec = { 0 };
	struct uet_scenario *scn = NULL;
	struct uet_sim *sim = NULL;
	struct uet_results r;
	struct opts o = { 0 };
	struct pcm_diag diag;
	double t0, wall, ideal;
	int rc, ret = 2;

	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	if (o.scenario)
		rc = uet_scenario_load(o.scenario, &scn, &diag);
	else
		rc = uet_scenario_parse(DEFAULT_NAME, pcm_embedded_scenario_default,
					pcm_embedded_scenario_default_len, &scn, &diag);
	if (rc < 0) {
		fprintf(stderr, "pcm-sim: %s\n", diag.msg[0] ? diag.msg : strerror(-rc));
		return 2;
	}
	if (o.policy) {
		if (strlen(o.policy) >= sizeof(scn->policies[0])) {
			fprintf(stderr, "pcm-sim: --policy: name too long\n");
			goto out;
		}
		snprintf(scn->policies[0], sizeof(scn->policies[0]), "%s", o.policy);
	}
	if (o.lb) {
		rc = uet_scenario_set_lb(scn, o.lb);
		if (rc < 0) {
			fprintf(stderr, "pcm-sim: --lb: %s\n",
				rc == -ENOSPC ? "the scenario already names 8 packages"
					      : "name too long");
			goto out;
		}
	}
	for (uint32_t i = 0; i < scn->n_policies; i++) {
		char err[512];

		if (strcmp(scn->policies[i], "none") == 0)
			continue;
		rc = pcm_package_open(scn->policies[i], pcm_builtin_policies, &h[i], err,
				      sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "pcm-sim: %s: policy '%s': %s\n", scn->path,
				scn->policies[i], err);
			goto out;
		}
		pkgs[i] = h[i].pkg;
	}
	rc = uet_sim_create(scn, pkgs, o.have_seed ? o.seed : scn->seed, &sim, &diag);
	if (rc < 0) {
		fprintf(stderr, "pcm-sim: %s\n", diag.msg[0] ? diag.msg : strerror(-rc));
		goto out;
	}
	if (o.out) {
		if (mkdir(o.out, 0777) < 0 && errno != EEXIST) {
			fprintf(stderr, "pcm-sim: --out %s: %s\n", o.out, strerror(errno));
			goto out;
		}
		rec.transport_stats = scn->nic.transport_stats
					      ? open_out(o.out, "uet-transport-stats.csv")
					      : NULL;
		rec.events = scn->nic.event_logging ? open_out(o.out, "uet-events.csv") : NULL;
		rec.monitor = scn->nic.uet_monitor ? open_out(o.out, "uet-monitor.csv") : NULL;
		rec.flows = open_out(o.out, "uet-flows.csv");
		if ((scn->nic.transport_stats && !rec.transport_stats) ||
		    (scn->nic.event_logging && !rec.events) ||
		    (scn->nic.uet_monitor && !rec.monitor) || !rec.flows)
			goto out;
		uet_sim_set_records(sim, &rec);
	}
	t0 = now_s();
	rc = uet_sim_run(sim, scn->stop_ps);
	wall = now_s() - t0;
	if (rc == -ENOMEM || rc == -ENOSPC) {
		fprintf(stderr, "pcm-sim: %s: out of memory during the run\n", scn->path);
		ret = 1;
		goto out;
	}
	uet_sim_results(sim, &r);
	ideal = ideal_us(scn, sim);
	if (o.json)
		print_json(stdout, scn, scn->policies[0], o.have_seed ? o.seed : scn->seed, &r,
			   wall, ideal, true);
	else
		print_text(scn, scn->policies[0], o.have_seed ? o.seed : scn->seed, sim, &r, wall,
			   ideal, rc);
	ret = rc == 0 ? 0 : 1;
	if (rc < 0)
		fprintf(stderr, "pcm-sim: %s: %u of %u flows did not complete by %.3f us%s\n",
			scn->path, r.flows - r.completed, r.flows, (double)uet_sim_now(sim) / 1e6,
			rc == -ETIMEDOUT ? " (raise 'stop' in the scenario)" : "");
	if (o.out) {
		FILE *f;

		if (write_fct(o.out, sim) < 0)
			ret = 1;
		f = open_out(o.out, "summary.json");
		if (f) {
			print_json(f, scn, scn->policies[0], o.have_seed ? o.seed : scn->seed, &r,
				   0, ideal, false);
			if (fclose(f) != 0)
				ret = 1;
		} else {
			ret = 1;
		}
	}
out:
	if (rec.transport_stats && fclose(rec.transport_stats) != 0)
		ret = 1;
	if (rec.events && fclose(rec.events) != 0)
		ret = 1;
	if (rec.monitor && fclose(rec.monitor) != 0)
		ret = 1;
	if (rec.flows && fclose(rec.flows) != 0)
		ret = 1;
	uet_sim_destroy(sim);
	for (uint32_t i = 0; i < UET_MAX_POLICIES; i++)
		if (h[i].pkg)
			pcm_package_close(&h[i]);
	uet_scenario_free(scn);
	return ret;
}
