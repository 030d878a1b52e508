// SPDX-License-Identifier: MIT
/*
 * bench_native.c - the native baseline of the handler benchmarks (bench.h):
 * hand-written Swift (native_swift.c) fed the same trace as a PCM shell,
 * per event or in bursts, in runs interleaved with the shell's, and the
 * ratio of a figure to it as text or JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Native side: the hand-written Swift is called per event, as a transport calls it. */
static __attribute__((noinline)) struct run_result
run_native(struct native_swift_flow *fl, const struct native_swift_params *p,
	   const struct trace *t, uint64_t events, uint32_t flows)
{
	struct native_swift_event ev;
	struct run_result r = { 0 };
	uint32_t flow = 0;
	double t0 = bench_now_s(), c0 = bench_thread_cpu_s();

	for (uint64_t n = 0; n < events; n++) {
		make_native_event(t, (uint32_t)n & (TRACE_LEN - 1), &ev);
		r.calls += native_swift_on_event(&fl[flow], p, &ev, bench_now_ps += 1000);
		flow = flow + 1 == flows ? 0 : flow + 1;
	}
	r.seconds = bench_now_s() - t0;
	r.cpu_seconds = bench_thread_cpu_s() - c0;
	return r;
}

/* An event of a native burst: what a hand-written transport's completion-queue poll gathers. */
struct native_flow_event {
	uint32_t flow;
	uint64_t now_ps;
	struct native_swift_event ev;
};

/* The native counterpart of pcm_shell_feed_burst(), out of line as that one is. */
static __attribute__((noinline)) uint64_t native_feed_burst(struct native_swift_flow *fl,
							    const struct native_swift_params *p,
							    const struct native_flow_event *evs,
							    uint32_t n)
{
	uint64_t calls = 0;

	for (uint32_t i = 0; i < n; i++)
		calls += native_swift_on_event(&fl[evs[i].flow], p, &evs[i].ev, evs[i].now_ps);
	return calls;
}

/*
 * Native side in bursts: the events are gathered into a burst array of the
 * native event, then handled one by one, as bench.h's bench_feed_bursts()
 * does with PCM's.
 */
static __attribute__((noinline)) struct run_result
run_native_bursts(struct native_swift_flow *fl, const struct native_swift_params *p,
		  const struct trace *t, uint64_t events, uint32_t flows, uint32_t burst)
{
	static struct native_flow_event batch[MAX_BURST];
	struct run_result r = { 0 };
	uint32_t flow = 0, fill = 0;
	double t0 = bench_now_s(), c0 = bench_thread_cpu_s();

	for (uint64_t n = 0; n < events; n++) {
		batch[fill].flow = flow;
		batch[fill].now_ps = bench_now_ps += 1000;
		make_native_event(t, (uint32_t)n & (TRACE_LEN - 1), &batch[fill].ev);
		if (++fill == burst) {
			r.calls += native_feed_burst(fl, p, batch, fill);
			fill = 0;
		}
		flow = flow + 1 == flows ? 0 : flow + 1;
	}
	if (fill)
		r.calls += native_feed_burst(fl, p, batch, fill);
	r.seconds = bench_now_s() - t0;
	r.cpu_seconds = bench_thread_cpu_s() - c0;
	return r;
}

static bool has_baseline(const struct pcm_package *pkg)
{
	return strcmp(pkg->name, "swift") == 0 && strcmp(pkg->arith, "double") == 0;
}

int bench_baseline_init(struct bench_baseline *b, const struct pcm_package *pkg, uint32_t flows,
			uint32_t burst)
{
	memset(b, 0, sizeof(*b));
	b->n_flows = flows;
	b->burst = burst;
	if (!has_baseline(pkg))
		return 0;
	native_swift_default_params(&b->params);
	b->flows = calloc(flows, sizeof(*b->flows));
	if (!b->flows)
		return -ENOMEM;
	for (uint32_t f = 0; f < flows; f++)
		native_swift_init(&b->flows[f], &b->params, 0);
	return 0;
}

void bench_baseline_run(struct bench_baseline *b, const struct trace *t, uint64_t events, int run)
{
	struct run_result r;

	if (!b->flows)
		return;
	if (b->burst == 1)
		r = run_native(b->flows, &b->params, t, events, b->n_flows);
	else
		r = run_native_bursts(b->flows, &b->params, t, events, b->n_flows, b->burst);
	if (run < 0)
		return;
	b->ns[run] = r.seconds * 1e9 / (double)events;
	b->cpu_ns[run] = r.cpu_seconds * 1e9 / (double)events;
}

void bench_baseline_medians(struct bench_baseline *b, unsigned runs, double *ns, double *cpu_ns)
{
	*ns = b->flows ? bench_median(b->ns, runs) : 0;
	*cpu_ns = b->flows ? bench_median(b->cpu_ns, runs) : 0;
}

void bench_baseline_fini(struct bench_baseline *b)
{
	free(b->flows);
	b->flows = NULL;
}

void bench_figures_record(struct bench_figures *f, int run, uint64_t events, double seconds,
			  double cpu_seconds, uint64_t calls)
{
	f->ns[run] = seconds * 1e9 / (double)events;
	f->cpu_ns[run] = cpu_seconds * 1e9 / (double)events;
	f->mcalls[run] = (double)calls / seconds / 1e6;
}

void bench_interleave(bench_run_fn run, void *ctx, struct bench_baseline *native,
		      const struct trace *t, uint64_t events, unsigned runs)
{
	run(ctx, events / 4, -1);
	bench_baseline_run(native, t, events / 4, -1);
	for (unsigned r = 0; r < runs; r++) {
		run(ctx, events, (int)r);
		bench_baseline_run(native, t, events, (int)r);
	}
}

void bench_print_ratio_text(double ns, double native_ns)
{
	if (native_ns > 0)
		printf("  native %.2f ns  ratio %.3f", native_ns, ns / native_ns);
}

void bench_print_ratio_json(const char *native_key, const char *ratio_key, double ns,
			    double native_ns)
{
	if (native_ns > 0)
		printf(",\"%s\":%.3f,\"%s\":%.4f", native_key, native_ns, ratio_key,
		       ns / native_ns);
}
