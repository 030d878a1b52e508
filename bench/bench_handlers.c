// SPDX-License-Identifier: MIT
/*
 * bench_handlers.c - pcm-bench handlers: a policy's handler capacity in a
 * PCM shell, fed a trace of ACKs per event or in bursts, against native
 * Swift run the same way (bench_native.c) in interleaved runs. The
 * synchronous shell is here; --mode async-* hands the package to
 * bench_async.c.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "builtin.h"
#include "shell.h"

/*
 * RTTs around the fabric's 14 us base with queueing of 0-24 us, a few long
 * samples; 5% ECN-marked, 0.2% NACKs, 0.01% timeouts. Each event also
 * reports one transmit event and one packet ready to send (LB demand).
 */
static void trace_fill(struct trace *t)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;

	for (uint32_t i = 0; i < TRACE_LEN; i++) {
		uint64_t r = bench_xorshift64(&s);
		uint32_t q = (uint32_t)(r % 24000);

		t->rtt_ns[i] = 14022 + q + ((r >> 20) % 100 == 0 ? 200000 : 0);
		t->flags[i] = 0;
		if ((r >> 32) % 100 < 5)
			t->flags[i] |= TRACE_ECN;
		if ((r >> 40) % 1000 < 2)
			t->flags[i] |= TRACE_NACK;
		if ((r >> 48) % 10000 < 1)
			t->flags[i] |= TRACE_RTO;
	}
}

/*
 * PCM side. burst == 1 calls pcm_shell_feed() per event; otherwise events
 * are gathered into bursts, as a datapath polling a completion queue would,
 * and handed over with pcm_shell_feed_burst(). The native side is fed the
 * same way in each mode (bench_native.c's run_native(), run_native_bursts()), so both
 * pay for their burst array.
 */
/*
 * Each mode a loop of its own, not inlined into run_pcm(), whose timing state
 * would otherwise compete with it for registers.
 */
static __attribute__((noinline)) void feed_each(struct pcm_shell *shell, const struct trace *t,
						uint64_t events, uint32_t flows)
{
	bench_feed_each(BENCH_SHELL_SYNC, shell, t, events, flows);
}

static __attribute__((noinline)) void feed_bursts(struct pcm_shell *shell, const struct trace *t,
						  uint64_t events, uint32_t flows, uint32_t burst)
{
	static struct pcm_flow_event batch[MAX_BURST];

	bench_feed_bursts(BENCH_SHELL_SYNC, shell, batch, t, events, flows, burst);
}

static struct run_result run_pcm(struct pcm_shell *shell, const struct trace *t,
				 uint64_t events, uint32_t flows, uint32_t burst)
{
	struct pcm_shell_stats st0, st1;
	struct run_result r;
	double t0, c0;

	pcm_shell_stats(shell, &st0);
	t0 = bench_now_s();
	c0 = bench_thread_cpu_s();
	if (burst == 1)
		feed_each(shell, t, events, flows);
	else
		feed_bursts(shell, t, events, flows, burst);
	r.seconds = bench_now_s() - t0;
	r.cpu_seconds = bench_thread_cpu_s() - c0;
	pcm_shell_stats(shell, &st1);
	r.calls = st1.handler_calls - st0.handler_calls;
	return r;
}

/* Medians over the runs; cpu_*: from the thread's CPU time instead of the wall clock. */
struct handler_result {
	double ns_per_event;
	double mcalls_per_s;
	double native_ns_per_event; /* 0 when no native baseline */
	double cpu_ns_per_event;
	double cpu_mcalls_per_s;
	double native_cpu_ns_per_event;
	size_t bytes_per_flow;
};

/* The synchronous shell's side of bench_interleave(): its figures, run by run. */
struct sync_side {
	struct pcm_shell *shell;
	const struct bench_opts *o;
	const struct trace *t;
	struct bench_figures fig;
	double cpu_rate[BENCH_MAX_RUNS]; /* calls per second of CPU time */
};

static void sync_run(void *ctx, uint64_t events, int r)
{
	struct sync_side *s = ctx;
	struct run_result pr = run_pcm(s->shell, s->t, events, s->o->flows, s->o->burst);

	if (r < 0)
		return;
	bench_figures_record(&s->fig, r, events, pr.seconds, pr.cpu_seconds, pr.calls);
	s->cpu_rate[r] = (double)pr.calls / pr.cpu_seconds / 1e6;
}

static int bench_one(const struct pcm_package *pkg, const struct bench_opts *o,
		     const struct trace *t, struct handler_result *res)
{
	struct sync_side side = { .o = o, .t = t };
	struct bench_baseline native;
	struct pcm_diag diag;
	int rc;

	rc = pcm_shell_create(pkg, NULL, o->flows, 0, &side.shell, &diag);
	if (rc < 0) {
		fprintf(stderr, "pcm-bench: %s\n", diag.msg);
		return rc;
	}
	rc = bench_baseline_init(&native, pkg, o->flows, o->burst);
	if (rc == 0) {
		bench_interleave(sync_run, &side, &native, t, o->events, o->runs);
		res->ns_per_event = bench_median(side.fig.ns, o->runs);
		res->mcalls_per_s = bench_median(side.fig.mcalls, o->runs);
		res->cpu_ns_per_event = bench_median(side.fig.cpu_ns, o->runs);
		res->cpu_mcalls_per_s = bench_median(side.cpu_rate, o->runs);
		bench_baseline_medians(&native, o->runs, &res->native_ns_per_event,
				       &res->native_cpu_ns_per_event);
		res->bytes_per_flow = pcm_shell_bytes_per_flow(side.shell);
		bench_baseline_fini(&native);
	}
	pcm_shell_destroy(side.shell);
	return rc;
}

static void print_result(const struct pcm_package *pkg, const struct bench_opts *o,
			 const struct handler_result *r)
{
	if (!o->json) {
		printf("%-16s sync burst %-3u %8.2f ns/event  %7.2f Mcalls/s  %zu B/flow", pkg->name,
		       o->burst, r->ns_per_event, r->mcalls_per_s, r->bytes_per_flow);
		bench_print_ratio_text(r->ns_per_event, r->native_ns_per_event);
		printf("\n%-16s   cpu time %8.2f ns/event  %7.2f Mcalls/s", "", r->cpu_ns_per_event,
		       r->cpu_mcalls_per_s);
		bench_print_ratio_text(r->cpu_ns_per_event, r->native_cpu_ns_per_event);
		putchar('\n');
		return;
	}
	printf("{\"bench\":\"handlers\",\"policy\":\"%s\",\"arith\":\"%s\",\"mode\":\"sync\","
	       "\"flows\":%u,\"burst\":%u,\"events\":%llu,\"runs\":%u,\"ns_per_event\":%.3f,"
	       "\"mcalls_per_s\":%.3f,\"bytes_per_flow\":%zu",
	       pkg->name, pkg->arith, o->flows, o->burst, (unsigned long long)o->events, o->runs,
	       r->ns_per_event, r->mcalls_per_s, r->bytes_per_flow);
	bench_print_ratio_json("native_ns_per_event", "native_ratio", r->ns_per_event,
			       r->native_ns_per_event);
	printf(",\"cpu_ns_per_event\":%.3f,\"cpu_mcalls_per_s\":%.3f", r->cpu_ns_per_event,
	       r->cpu_mcalls_per_s);
	bench_print_ratio_json("native_cpu_ns_per_event", "cpu_native_ratio", r->cpu_ns_per_event,
			       r->native_cpu_ns_per_event);
	puts("}");
	fflush(stdout);
}

static void pin_to_current_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int bench_policy(const char *name, const struct bench_opts *o, const struct trace *t)
{
	struct pcm_package_handle h;
	struct handler_result r = { 0 };
	char err[512];
	int rc;

	rc = pcm_package_open(name, pcm_builtin_policies, &h, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "pcm-bench: %s\n", err);
		return rc;
	}
	if (o->async) {
		rc = bench_async_handlers(h.pkg, o, t);
	} else {
		rc = bench_one(h.pkg, o, t, &r);
		if (rc == 0)
			print_result(h.pkg, o, &r);
	}
	pcm_package_close(&h);
	return rc;
}

static int parse_handlers_opts(int argc, char **argv, struct bench_opts *o)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },     { "policy", required_argument, NULL, 'p' },
		{ "flows", required_argument, NULL, 'f' }, { "events", required_argument, NULL, 'e' },
		{ "runs", required_argument, NULL, 'r' }, { "mode", required_argument, NULL, 'm' },
		{ "burst", required_argument, NULL, 'b' }, { "workers", required_argument, NULL, 'w' },
		{ "skew-bound", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j': o->json = true; break;
		case 'p': o->policy = optarg; break;
		case 'm':
			o->async = strcmp(optarg, "sync") != 0;
			if (o->async && (strncmp(optarg, "async-", 6) != 0 ||
					 pcm_async_mode_parse(optarg + 6, &o->async_mode) < 0)) {
				fprintf(stderr, "pcm-bench: --mode: '%s' is not one of sync, "
						"async-relaxed, async-locked, async-bounded\n", optarg);
				return -EINVAL;
			}
			break;
		case 'w':
			if (bench_parse_u32("--workers", optarg, 1, PCM_ASYNC_MAX_WORKERS, &o->workers) < 0)
				return -EINVAL;
			break;
		case 's':
			if (bench_parse_u32("--skew-bound", optarg, 0, UINT32_MAX, &o->skew_bound) < 0)
				return -EINVAL;
			break;
		case 'f':
			if (bench_parse_u32("--flows", optarg, 1, PCM_SHELL_MAX_FLOWS, &o->flows) < 0)
				return -EINVAL;
			break;
		case 'e':
			if (bench_parse_u64("--events", optarg, 1000, 1ull << 40, &o->events) < 0)
				return -EINVAL;
			break;
		case 'b':
			if (bench_parse_u32("--burst", optarg, 1, MAX_BURST, &o->burst) < 0)
				return -EINVAL;
			break;
		case 'r':
			if (bench_parse_u32("--runs", optarg, 1, BENCH_MAX_RUNS, &o->runs) < 0)
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pcm-bench handlers: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int bench_handlers(int argc, char **argv)
{
	struct bench_opts o = { .flows = 4096, .events = 20000000, .runs = 5, .burst = 0,
				.workers = 1, .skew_bound = 2 };
	struct trace *t;
	int rc = 0;

	if (parse_handlers_opts(argc, argv, &o) < 0)
		return 2;
	/*
	 * Default feeding: per event for the synchronous shell (as a transport
	 * calls its CC on each ACK), bursts of 32 for the asynchronous one, whose
	 * datapath side prefetches a burst's records.
	 */
	if (!o.burst)
		o.burst = o.async ? 32 : 1;
	t = malloc(sizeof(*t));
	if (!t)
		return 1;
	trace_fill(t);
	if (!o.async) /* bench_async_handlers() places the datapath and the workers itself */
		pin_to_current_cpu();
	if (o.policy)
		rc = bench_policy(o.policy, &o, t);
	for (size_t i = 0; !o.policy && pcm_builtin_policies[i] && rc == 0; i++)
		rc = bench_policy(pcm_builtin_policies[i]->name, &o, t);
	free(t);
	return rc < 0 ? 1 : 0;
}
