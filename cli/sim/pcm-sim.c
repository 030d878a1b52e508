// SPDX-License-Identifier: MIT
/*
 * pcm-sim - run a window policy through the synchronous shell on pcm's
 * built-in event scenario and print what it did.
 *
 *   pcm-sim [--policy NAME|FILE.so] [--flows N] [--duration-us N] [--json]
 *
 * The built-in scenario is a fluid model of N flows sharing one 100 Gbit/s
 * bottleneck with the default fabric's 14 us base RTT: each microsecond the
 * link drains 12,500 bytes, split among the flows by their share of the
 * window; each flow gets one ACK event per MSS acknowledged, carrying an RTT
 * of base + queue / rate. Flow i joins at i * 400 us, flow 0 sees a trimmed
 * packet (NACK) at 1 ms and flow 1 a retransmission timeout at 1.5 ms. The policy's CWND control sets
 * each flow's window. It shows the handler reacting to delay, loss and
 * timeouts; the packet-level UET emulation is a separate, larger piece.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "shell.h"

#define LINK_BYTES_PER_US 12500.0 /* 100 Gbit/s */
#define BASE_RTT_PS 14022720.0
#define MSS 4096.0
#define MAX_FLOWS 64

struct sim_opts {
	const char *policy;
	unsigned flows;
	unsigned duration_us;
	bool json;
};

#define JOIN_INTERVAL_US 400

struct flow {
	double acked_frac; /* bytes acknowledged but not yet a whole MSS */
	uint64_t acked_bytes;
	pcm_uint cwnd;
};

struct sim {
	struct pcm_shell *shell;
	struct flow f[MAX_FLOWS];
	unsigned n;
	double queue_bytes;
	double rtt_sum_us;
	uint64_t rtt_samples;
	uint64_t events;
};

static int parse_opts(int argc, char **argv, struct sim_opts *o)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "flows", required_argument, NULL, 'f' },
		{ "duration-us", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "p:f:d:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'p': o->policy = optarg; break;
		case 'j': o->json = true; break;
		case 'f':
			o->flows = (unsigned)strtoul(optarg, &end, 10);
			if (*end || o->flows < 1 || o->flows > MAX_FLOWS) {
				fprintf(stderr, "pcm-sim: --flows: '%s' is not in 1..%d\n", optarg,
					MAX_FLOWS);
				return -EINVAL;
			}
			break;
		case 'd':
			o->duration_us = (unsigned)strtoul(optarg, &end, 10);
			if (*end || o->duration_us < 100 || o->duration_us > 10000000) {
				fprintf(stderr, "pcm-sim: --duration-us: '%s' is not in 100..10000000\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'h':
			printf("usage: pcm-sim [--policy NAME|FILE.so] [--flows N] [--duration-us N] "
			       "[--json]\n");
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr,
			"pcm-sim: '%s': scenario files need the packet-level UET emulation, which "
			"this build does not have yet; run without it for the built-in scenario\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static void deliver(struct sim *s, unsigned i, double bytes, pcm_uint now_ps)
{
	struct flow *f = &s->f[i];
	double rtt_ps = BASE_RTT_PS + s->queue_bytes / LINK_BYTES_PER_US * 1e6;
	struct pcm_event ev = { .valid = (1u << PCM_SIG_ACK) | (1u << PCM_SIG_DATA_TX) |
					 (1u << PCM_SIG_RTT) };

	f->acked_frac += bytes;
	while (f->acked_frac >= MSS) {
		f->acked_frac -= MSS;
		f->acked_bytes += (uint64_t)MSS;
		ev.values[PCM_SIG_ACK] = 1;
		ev.values[PCM_SIG_DATA_TX] = (pcm_uint)MSS;
		ev.values[PCM_SIG_RTT] = (pcm_uint)rtt_ps;
		pcm_shell_feed(s->shell, i, &ev, now_ps);
		s->rtt_sum_us += rtt_ps / 1e6;
		s->rtt_samples++;
		s->events++;
	}
}

static void inject(struct sim *s, unsigned flow, pcm_signal_t type, pcm_uint now_ps)
{
	struct pcm_event ev = { .valid = (pcm_uint)1 << type };

	if (flow >= s->n)
		return;
	ev.values[type] = 1;
	pcm_shell_feed(s->shell, flow, &ev, now_ps);
	s->events++;
}

/* One microsecond of the fluid model. */
static void step(struct sim *s, unsigned t_us)
{
	pcm_uint now_ps = (pcm_uint)t_us * 1000000;
	double total = 0, bdp = LINK_BYTES_PER_US * BASE_RTT_PS / 1e6;

	for (unsigned i = 0; i < s->n; i++) {
		s->f[i].cwnd = 0;
		if (t_us >= i * JOIN_INTERVAL_US)
			pcm_shell_control(s->shell, i, PCM_CTRL_CWND, &s->f[i].cwnd);
		total += (double)s->f[i].cwnd;
	}
	s->queue_bytes = total > bdp ? total - bdp : 0;
	for (unsigned i = 0; i < s->n; i++)
		if (s->f[i].cwnd)
			deliver(s, i, LINK_BYTES_PER_US * (double)s->f[i].cwnd / total, now_ps);
	if (t_us == 1000)
		inject(s, 0, PCM_SIG_NACK, now_ps);
	if (t_us == 1500)
		inject(s, 1, PCM_SIG_RTO, now_ps);
}

static double jain(const struct sim *s)
{
	double sum = 0, sq = 0;

	for (unsigned i = 0; i < s->n; i++) {
		sum += (double)s->f[i].acked_bytes;
		sq += (double)s->f[i].acked_bytes * (double)s->f[i].acked_bytes;
	}
	return sq > 0 ? sum * sum / (s->n * sq) : 0;
}

static void print_row(const struct sim *s, unsigned t_us)
{
	printf("%7u us  queue %8.0f B  rtt %6.2f us  cwnd", t_us, s->queue_bytes,
	       (BASE_RTT_PS + s->queue_bytes / LINK_BYTES_PER_US * 1e6) / 1e6);
	for (unsigned i = 0; i < s->n && i < 8; i++)
		printf(" %7llu", (unsigned long long)s->f[i].cwnd);
	printf("%s\n", s->n > 8 ? " ..." : "");
}

static void print_summary(const struct sim *s, const struct sim_opts *o)
{
	double goodput = 0;

	for (unsigned i = 0; i < s->n; i++)
		goodput += (double)s->f[i].acked_bytes * 8 / (o->duration_us * 1e3);
	if (o->json) {
		printf("{\"scenario\":\"builtin-fluid\",\"policy\":\"%s\",\"flows\":%u,"
		       "\"sim_time_us\":%u,\"events\":%llu,\"handler_calls\":%llu,"
		       "\"goodput_gbps\":%.3f,\"mean_rtt_us\":%.3f,\"jain\":%.4f}\n",
		       s->shell->pkg->name, s->n, o->duration_us,
		       (unsigned long long)s->events,
		       (unsigned long long)s->shell->stats.handler_calls, goodput,
		       s->rtt_sum_us / (double)s->rtt_samples, jain(s));
		return;
	}
	printf("\n%s on %u flows for %u us: %llu events, %llu handler calls, %llu errors\n",
	       s->shell->pkg->name, s->n, o->duration_us, (unsigned long long)s->events,
	       (unsigned long long)s->shell->stats.handler_calls,
	       (unsigned long long)s->shell->stats.handler_errors);
	printf("goodput %.2f Gbit/s of 100, mean RTT %.2f us (base 14.02), Jain fairness %.4f\n",
	       goodput, s->rtt_sum_us / (double)s->rtt_samples, jain(s));
}

static int run(const struct pcm_package *pkg, const struct sim_opts *o)
{
	struct pcm_diag diag;
	struct sim s = { .n = o->flows };
	int rc;

	if (!(pkg->control_types & (1u << PCM_CTRL_CWND))) {
		fprintf(stderr, "pcm-sim: policy '%s' has no PCM_CTRL_CWND control; the built-in "
				"scenario drives window policies\n", pkg->name);
		return -ENOTSUP;
	}
	rc = pcm_shell_create(pkg, pcm_target_find("uet"), o->flows, 0, &s.shell, &diag);
	if (rc < 0) {
		fprintf(stderr, "pcm-sim: %s\n", diag.msg);
		return rc;
	}
	if (!o->json)
		printf("pcm-sim: built-in scenario, %u flows, 100 Gbit/s bottleneck, policy %s "
		       "(%s)\n\n", o->flows, pkg->name, pkg->arith);
	for (unsigned t = 1; t <= o->duration_us; t++) {
		step(&s, t);
		if (!o->json && (t % (o->duration_us / 20) == 0 || t == 1001 || t == 1501))
			print_row(&s, t);
	}
	print_summary(&s, o);
	pcm_shell_destroy(s.shell);
	return 0;
}

int main(int argc, char **argv)
{
	struct sim_opts o = { .policy = "swift", .flows = 4, .duration_us = 3000 };
	struct pcm_package_handle h;
	char err[512];
	int rc;

	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	rc = pcm_package_open(o.policy, pcm_builtin_policies, &h, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "pcm-sim: %s\n", err);
		return 1;
	}
	rc = run(h.pkg, &o);
	pcm_package_close(&h);
	return rc < 0 ? 1 : 0;
}
