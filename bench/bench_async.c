// SPDX-License-Identifier: MIT
/*
 * bench_async.c - pcm-bench's asynchronous-shell benchmarks.
 *
 * handlers --mode async-*: the datapath thread feeds the same ACK trace as the
 * sync benchmark, in bursts, through pcm_async_feed_burst(), while worker
 * threads run the handlers. The datapath is pinned to one CPU and the workers
 * to the others. Reported: the datapath's cost per event against native
 * Swift run on the same CPU in the same process (interleaved runs), and the
 * handler calls the workers made per second of that window. Each call
 * coalesces several events (events_per_call): either the workers run
 * saturated, or, when they could keep up with every event, each flow backs
 * off until its visits take about 3 events or more (pcm-handler(7),
 * "Coalescing"); worker_idle_polls counts the rounds that found nothing to
 * take.
 *
 * validate-rtt-injection: PCM paper, Appendix A. Swift is driven by a
 * synthetic RTT stream with a 500 us sample on every 25th update of each flow,
 * in sync and in each async mode; after each event the datapath observes the
 * flow's window as it would enforce it. Reported per mode: the distribution
 * of the nonzero window adjustments between consecutive observations of a
 * flow, and the fraction of observations that saw no change.
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

/* ---- placement -------------------------------------------------------------------------- */

/*
 * The datapath gets the first CPU this process was allowed when pcm-bench
 * started, the workers the others round-robin; with a single CPU everything
 * shares it, unpinned. The set is read once: later calls must not see the
 * calling thread's own pinning.
 */
static int place_threads(uint32_t n_workers, int *worker_cpus)
{
	static int cpus[CPU_SETSIZE], n = -1;
	cpu_set_t set;

	if (n < 0) {
		if (sched_getaffinity(0, sizeof(set), &set) < 0)
			return -errno;
		n = 0;
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cpus[n++] = c;
	}
	for (uint32_t i = 0; i < n_workers; i++)
		worker_cpus[i] = n > 1 ? cpus[1 + i % (uint32_t)(n - 1)] : -1;
	if (n > 0) {
		CPU_ZERO(&set);
		CPU_SET(cpus[0], &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			return -errno;
	}
	return 0;
}

static int create_async(const struct pcm_package *pkg, uint32_t flows, enum pcm_async_mode mode,
			uint32_t workers, uint32_t skew_bound, struct pcm_async **out)
{
	struct pcm_async_config cfg;
	struct pcm_diag diag;
	int *cpus, rc;

	cpus = calloc(workers, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	rc = place_threads(workers, cpus);
	if (rc < 0) {
		fprintf(stderr, "pcm-bench: cannot pin threads: %s\n", strerror(-rc));
		goto out;
	}
	pcm_async_config_default(&cfg);
	cfg.mode = mode;
	cfg.n_workers = workers;
	cfg.worker_cpus = cpus;
	cfg.skew_bound = skew_bound;
	rc = pcm_async_create(pkg, NULL, flows, 0, &cfg, out, &diag);
	if (rc < 0) {
		fprintf(stderr, "pcm-bench: %s\n", diag.msg);
		goto out;
	}
	rc = pcm_async_start(*out);
	if (rc < 0) {
		fprintf(stderr, "pcm-bench: cannot start the async workers: %s\n", strerror(-rc));
		pcm_async_destroy(*out);
	}
out:
	free(cpus);
	return rc;
}

static const char *mode_label(bool async, enum pcm_async_mode mode)
{
	static const char *const labels[PCM_ASYNC_MODE_COUNT] = {
		"async-relaxed",
		"async-locked",
		"async-bounded",
	};

	return async ? labels[mode] : "sync";
}

/* ---- handlers --mode async-* ------------------------------------------------------------ */

struct async_run {
	double seconds;
	double cpu_seconds;        /* the datapath thread's CPU time */
	double worker_cpu_seconds; /* the workers' (the rest of the process's) */
	uint64_t calls;
	uint64_t idle_polls;
};

/* The datapath side, as run_pcm() in bench_handlers.c feeds the sync shell. */
static struct async_run run_async(struct pcm_async *as, const struct trace *t, uint64_t events,
				  uint32_t flows, uint32_t burst)
{
	static struct pcm_flow_event batch[MAX_BURST];
	struct pcm_async_stats s0, s1;
	struct async_run r;
	double t0, c0, p0;

	pcm_async_stats(as, UINT32_MAX, &s0);
	t0 = bench_now_s();
	c0 = bench_thread_cpu_s();
	p0 = bench_process_cpu_s();
	if (burst == 1)
		bench_feed_each(BENCH_SHELL_ASYNC, as, t, events, flows);
	else
		bench_feed_bursts(BENCH_SHELL_ASYNC, as, batch, t, events, flows, burst);
	r.seconds = bench_now_s() - t0;
	r.cpu_seconds = bench_thread_cpu_s() - c0;
	r.worker_cpu_seconds = bench_process_cpu_s() - p0 - r.cpu_seconds;
	pcm_async_stats(as, UINT32_MAX, &s1);
	r.calls = s1.handler_calls - s0.handler_calls;
	r.idle_polls = s1.idle_polls - s0.idle_polls;
	return r;
}

static void print_skew_hist(const struct pcm_async_stats *s)
{
	bool first = true;

	printf(",\"skew_hist\":{");
	for (unsigned b = 0; b < PCM_ASYNC_SKEW_BUCKETS; b++) {
		if (!s->skew_hist[b])
			continue;
		printf("%s\"%llu\":%llu", first ? "" : ",",
		       (unsigned long long)pcm_async_skew_bucket_floor(b),
		       (unsigned long long)s->skew_hist[b]);
		first = false;
	}
	putchar('}');
}

struct async_result {
	double ns_per_event;
	double mcalls_per_s;
	double events_per_call;
	double native_ns_per_event; /* 0 when no native baseline */
	/* the same from CPU times: the workers' calls per second of their CPU time */
	double cpu_ns_per_event;
	double worker_cpu_mcalls_per_s;
	double native_cpu_ns_per_event;
	uint64_t idle_polls;
	size_t bytes_per_flow;
};

static void print_async_result(const struct pcm_package *pkg, const struct bench_opts *o,
			       const struct async_result *r, const struct pcm_async_stats *st)
{
	const char *mode = mode_label(true, o->async_mode);

	if (!o->json) {
		printf("%-16s %s burst %-3u %8.2f ns/event  %7.2f Mcalls/s (%u worker%s)  "
		       "%.2f events/call  %zu B/flow",
		       pkg->name, mode, o->burst, r->ns_per_event, r->mcalls_per_s, o->workers,
		       o->workers == 1 ? "" : "s", r->events_per_call, r->bytes_per_flow);
		bench_print_ratio_text(r->ns_per_event, r->native_ns_per_event);
		printf("\n%-16s   cpu time %8.2f ns/event  %7.2f Mcalls/s per worker", "",
		       r->cpu_ns_per_event, r->worker_cpu_mcalls_per_s);
		bench_print_ratio_text(r->cpu_ns_per_event, r->native_cpu_ns_per_event);
		putchar('\n');
		fflush(stdout);
		return;
	}
	printf("{\"bench\":\"handlers\",\"policy\":\"%s\",\"arith\":\"%s\",\"mode\":\"%s\","
	       "\"flows\":%u,\"burst\":%u,\"events\":%llu,\"runs\":%u,\"workers\":%u,"
	       "\"ns_per_event\":%.3f,\"mcalls_per_s\":%.3f,\"worker_mcalls_per_s\":%.3f,"
	       "\"events_per_call\":%.2f,\"worker_idle_polls\":%llu,\"bytes_per_flow\":%zu",
	       pkg->name, pkg->arith, mode, o->flows, o->burst, (unsigned long long)o->events,
	       o->runs, o->workers, r->ns_per_event, r->mcalls_per_s, r->mcalls_per_s / o->workers,
	       r->events_per_call, (unsigned long long)r->idle_polls, r->bytes_per_flow);
	bench_print_ratio_json("native_ns_per_event", "native_ratio", r->ns_per_event,
			       r->native_ns_per_event);
	printf(",\"cpu_ns_per_event\":%.3f,\"worker_cpu_mcalls_per_s\":%.3f", r->cpu_ns_per_event,
	       r->worker_cpu_mcalls_per_s);
	bench_print_ratio_json("native_cpu_ns_per_event", "cpu_native_ratio", r->cpu_ns_per_event,
			       r->native_cpu_ns_per_event);
	if (o->async_mode == PCM_ASYNC_BOUNDED) {
		printf(",\"skew_bound\":%u,\"retakes\":%llu,\"deferrals\":%llu,"
		       "\"skew_max_accepted\":%llu",
		       o->skew_bound, (unsigned long long)st->retakes,
		       (unsigned long long)st->deferrals,
		       (unsigned long long)st->skew_max_accepted);
		print_skew_hist(st);
	}
	puts("}");
	fflush(stdout);
}

/* The asynchronous shell's side of bench_interleave(): its figures, run by run. */
struct async_side {
	struct pcm_async *as;
	const struct bench_opts *o;
	const struct trace *t;
	struct bench_figures fig; /* the datapath thread's */
	double epc[BENCH_MAX_RUNS], wk_rate[BENCH_MAX_RUNS];
	uint64_t idle_polls; /* over the measured runs */
};

static void async_side_run(void *ctx, uint64_t events, int r)
{
	struct async_side *s = ctx;
	struct async_run ar = run_async(s->as, s->t, events, s->o->flows, s->o->burst);

	if (r < 0)
		return;
	bench_figures_record(&s->fig, r, events, ar.seconds, ar.cpu_seconds, ar.calls);
	s->epc[r] = ar.calls ? (double)events / (double)ar.calls : 0;
	s->wk_rate[r] =
		ar.worker_cpu_seconds > 0 ? (double)ar.calls / ar.worker_cpu_seconds / 1e6 : 0;
	s->idle_polls += ar.idle_polls;
}

int bench_async_handlers(const struct pcm_package *pkg, const struct bench_opts *o,
			 const struct trace *t)
{
	struct async_side side = { .o = o, .t = t };
	struct bench_baseline native;
	struct pcm_async_stats st;
	struct async_result res;
	int rc;

	rc = create_async(pkg, o->flows, o->async_mode, o->workers, o->skew_bound, &side.as);
	if (rc < 0)
		return rc;
	/* native runs per event: what the datapath thread would do without PCM */
	rc = bench_baseline_init(&native, pkg, o->flows, 1);
	if (rc < 0) {
		pcm_async_destroy(side.as);
		return rc;
	}
	bench_interleave(async_side_run, &side, &native, t, o->events, o->runs);
	pcm_async_stop(side.as);
	pcm_async_stats(side.as, UINT32_MAX, &st);
	res.ns_per_event = bench_median(side.fig.ns, o->runs);
	res.mcalls_per_s = bench_median(side.fig.mcalls, o->runs);
	res.events_per_call = bench_median(side.epc, o->runs);
	res.cpu_ns_per_event = bench_median(side.fig.cpu_ns, o->runs);
	res.worker_cpu_mcalls_per_s = bench_median(side.wk_rate, o->runs) / o->workers;
	bench_baseline_medians(&native, o->runs, &res.native_ns_per_event,
			       &res.native_cpu_ns_per_event);
	res.idle_polls = side.idle_polls;
	res.bytes_per_flow = pcm_async_bytes_per_flow(side.as);
	print_async_result(pkg, o, &res, &st);
	bench_baseline_fini(&native);
	pcm_async_destroy(side.as);
	return 0;
}

/* ---- validate-rtt-injection ------------------------------------------------------------- */

struct rtt_opts {
	uint64_t observations;
	uint32_t flows;
	uint64_t gap_ns;
	uint64_t queue_ns; /* RTT samples are 14 us plus up to this much queueing */
	uint32_t inject_every;
	uint32_t skew_bound;
	const char *csv;
	bool json;
};

#define RTT_BASE_PS 14000000ull	   /* 14 us: the fabric's unloaded RTT */
#define RTT_INJECT_PS 500000000ull /* the injected 500 us sample */
#define ACK_SPACING_PS 1000000ull  /* each flow gets an ACK every 1 us of flow time */

struct rtt_result {
	const char *mode;
	uint64_t observations;
	uint64_t unchanged;
	uint64_t calls;
	int64_t *adj; /* nonzero adjustments, bytes */
	uint64_t n_adj;
	double p1, median, p99, mean;
};

/* One shell or the other, behind the two calls the study needs. */
struct rtt_target {
	struct pcm_shell *sync;
	struct pcm_async *as;
};

static int rtt_feed(struct rtt_target *tg, uint32_t flow, const struct pcm_event *ev, pcm_uint now)
{
	return tg->sync ? pcm_shell_feed(tg->sync, flow, ev, now)
			: pcm_async_feed(tg->as, flow, ev, now);
}

static pcm_uint rtt_window(struct rtt_target *tg, uint32_t flow)
{
	pcm_uint v = 0;

	if (tg->sync)
		pcm_shell_control(tg->sync, flow, PCM_CTRL_CWND, &v);
	else
		pcm_async_control(tg->as, flow, PCM_CTRL_CWND, &v);
	return v;
}

static void spin_until(double t)
{
	while (bench_now_s() < t)
		;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static double quantile(const int64_t *sorted, uint64_t n, double q)
{
	uint64_t i;

	if (!n)
		return 0;
	i = (uint64_t)(q * (double)(n - 1) + 0.5);
	return (double)sorted[i < n ? i : n - 1];
}

static int rtt_run(const struct pcm_package *swift, bool async, enum pcm_async_mode mode,
		   const struct rtt_opts *o, struct rtt_result *res)
{
	pcm_uint *last = calloc(o->flows, sizeof(*last));
	uint64_t *updates = calloc(o->flows, sizeof(*updates));
	uint64_t rng = 0x853c49e6748fea9bull;
	struct rtt_target tg = { 0 };
	struct pcm_event ev = { 0 };
	struct pcm_diag diag;
	pcm_uint now = 0;
	double next;
	int rc;

	memset(res, 0, sizeof(*res));
	res->mode = mode_label(async, mode);
	res->adj = malloc(o->observations * sizeof(*res->adj));
	if (!last || !updates || !res->adj) {
		rc = -ENOMEM;
		goto out;
	}
	if (async)
		rc = create_async(swift, o->flows, mode, 1, o->skew_bound, &tg.as);
	else
		rc = pcm_shell_create(swift, NULL, o->flows, 0, &tg.sync, &diag);
	if (rc < 0)
		goto out;
	for (uint32_t f = 0; f < o->flows; f++)
		last[f] = rtt_window(&tg, f);
	ev.valid = SIGBIT(ACK) | SIGBIT(DATA_TX) | SIGBIT(RTT);
	ev.values[PCM_SIG_ACK] = 1;
	ev.values[PCM_SIG_DATA_TX] = 4096;
	next = bench_now_s();
	for (uint64_t n = 0; n < o->observations; n++) {
		uint32_t flow = (uint32_t)(n % o->flows);
		pcm_uint cwnd;

		now += ACK_SPACING_PS / o->flows;
		ev.values[PCM_SIG_RTT] =
			++updates[flow] % o->inject_every == 0
			? RTT_INJECT_PS
			: RTT_BASE_PS + bench_xorshift64(&rng) % (o->queue_ns * 1000 + 1);
		if (async && o->gap_ns) {
			next += (double)o->gap_ns * 1e-9;
			spin_until(next);
		}
		rtt_feed(&tg, flow, &ev, now);
		cwnd = rtt_window(&tg, flow);
		if (cwnd == last[flow])
			res->unchanged++;
		else
			res->adj[res->n_adj++] = (int64_t)cwnd - (int64_t)last[flow];
		last[flow] = cwnd;
	}
	res->observations = o->observations;
	if (async) {
		struct pcm_async_stats st;

		pcm_async_stop(tg.as);
		pcm_async_stats(tg.as, UINT32_MAX, &st);
		res->calls = st.handler_calls;
		pcm_async_destroy(tg.as);
	} else {
		struct pcm_shell_stats st;

		pcm_shell_stats(tg.sync, &st);
		res->calls = st.handler_calls;
		pcm_shell_destroy(tg.sync);
	}
	qsort(res->adj, res->n_adj, sizeof(*res->adj), cmp_i64);
	res->p1 = quantile(res->adj, res->n_adj, 0.01);
	res->median = quantile(res->adj, res->n_adj, 0.5);
	res->p99 = quantile(res->adj, res->n_adj, 0.99);
	for (uint64_t i = 0; i < res->n_adj; i++)
		res->mean += (double)res->adj[i];
	res->mean = res->n_adj ? res->mean / (double)res->n_adj : 0;
	rc = 0;
out:
	free(last);
	free(updates);
	return rc;
}

static void rtt_print(const struct rtt_result *r, const struct rtt_opts *o, bool async)
{
	printf("{\"bench\":\"validate-rtt-injection\",\"policy\":\"swift\",\"mode\":\"%s\","
	       "\"observations\":%llu,\"flows\":%u,\"inject_every\":%u,\"queue_ns\":%llu,"
	       "\"gap_ns\":%llu,",
	       r->mode, (unsigned long long)r->observations, o->flows, o->inject_every,
	       (unsigned long long)o->queue_ns, (unsigned long long)(async ? o->gap_ns : 0));
	if (async && strcmp(r->mode, "async-bounded") == 0)
		printf("\"skew_bound\":%u,", o->skew_bound);
	printf("\"handler_calls\":%llu,\"nonzero_adjustments\":%llu,\"adj_p1_bytes\":%.0f,"
	       "\"adj_median_bytes\":%.0f,\"adj_p99_bytes\":%.0f,\"adj_mean_bytes\":%.2f,"
	       "\"unchanged_fraction\":%.4f}\n",
	       (unsigned long long)r->calls, (unsigned long long)r->n_adj, r->p1, r->median, r->p99,
	       r->mean, (double)r->unchanged / (double)r->observations);
	fflush(stdout);
}

/* One row per mode and per 0.1% quantile of the nonzero adjustments: a CDF to plot. */
static int rtt_write_csv(const char *path, const struct rtt_result *res, unsigned n)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "pcm-bench: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fputs("mode,quantile,adjustment_bytes,unchanged_fraction\n", f);
	for (unsigned m = 0; m < n; m++)
		for (unsigned q = 0; q <= 1000; q++)
			fprintf(f, "%s,%.3f,%.0f,%.4f\n", res[m].mode, q / 1000.0,
				quantile(res[m].adj, res[m].n_adj, q / 1000.0),
				(double)res[m].unchanged / (double)res[m].observations);
	if (fclose(f) != 0) {
		fprintf(stderr, "pcm-bench: %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

static int parse_rtt_opts(int argc, char **argv, struct rtt_opts *o)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"observations", required_argument, NULL, 'n'},
		{"flows", required_argument, NULL, 'f'},
		{"gap-ns", required_argument, NULL, 'g'},
		{"queue-ns", required_argument, NULL, 'q'},
		{"skew-bound", required_argument, NULL, 's'},
		{"csv", required_argument, NULL, 'c'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = true;
			break;
		case 'n':
			if (bench_parse_u64("--observations", optarg, 100, 1ull << 32,
						&o->observations) < 0)
				return -EINVAL;
			break;
		case 'f':
			if (bench_parse_u32("--flows", optarg, 1, 1u << 20, &o->flows) < 0)
				return -EINVAL;
			break;
		case 'g':
			if (bench_parse_in("--gap-ns", optarg, PCM_UNIT_TIME, "ns", 0, 1000000,
					   &o->gap_ns) < 0)
				return -EINVAL;
			break;
		case 'q':
			if (bench_parse_in("--queue-ns", optarg, PCM_UNIT_TIME, "ns", 0, 10000000,
					   &o->queue_ns) < 0)
				return -EINVAL;
			break;
		case 's':
			if (bench_parse_u32("--skew-bound", optarg, 0, UINT32_MAX, &o->skew_bound) < 0)
				return -EINVAL;
			break;
		case 'c':
			o->csv = optarg;
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pcm-bench validate-rtt-injection: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int bench_validate_rtt_injection(int argc, char **argv)
{
	struct rtt_opts o = { .observations = 400000, .flows = 16, .gap_ns = 250,
			      .queue_ns = 3600, .inject_every = 25, .skew_bound = 2 };
	struct rtt_result res[1 + PCM_ASYNC_MODE_COUNT];
	struct pcm_package_handle h;
	unsigned done = 0;
	char err[512];
	int rc;

	if (parse_rtt_opts(argc, argv, &o) < 0)
		return 2;
	rc = pcm_package_open("swift", pcm_builtin_policies, &h, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "pcm-bench: %s\n", err);
		return 1;
	}
	for (int m = -1; m < PCM_ASYNC_MODE_COUNT && rc == 0; m++) {
		bool async = m >= 0;

		rc = rtt_run(h.pkg, async, async ? (enum pcm_async_mode)m : PCM_ASYNC_RELAXED, &o,
			     &res[done]);
		if (rc < 0) {
			free(res[done].adj);
			break;
		}
		rtt_print(&res[done], &o, async);
		done++;
	}
	if (rc == 0 && o.csv)
		rc = rtt_write_csv(o.csv, res, done);
	for (unsigned m = 0; m < done; m++)
		free(res[m].adj);
	pcm_package_close(&h);
	return rc < 0 ? 1 : 0;
}
