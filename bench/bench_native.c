// SPDX-License-Identifier: MIT
/*
 * bench_native.c - the native baseline of the handler benchmarks (bench.h):
 * hand-written Swift (native_swift.c) fed the same trace as a PCM shell,
 * per event or in bursts, so that a run's figures have a ratio to it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Native side: the hand-written Swift is called per event, as a transport calls it. */
struct run_result bench_run_native(struct native_swift_flow *fl,
				   const struct native_swift_params *p, const struct trace *t,
				   uint64_t events, uint32_t flows)
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
 * native event, then handled one by one, as bench_handlers.c's feed_bursts() does with PCM's.
 */
__attribute__((noinline)) struct run_result
bench_run_native_bursts(struct native_swift_flow *fl, const struct native_swift_params *p,
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

bool bench_has_native_baseline(const struct pcm_package *pkg)
{
	return strcmp(pkg->name, "swift") == 0 && strcmp(pkg->arith, "double") == 0;
}

struct native_swift_flow *bench_native_create(const struct pcm_package *pkg, uint32_t flows,
					      struct native_swift_params *params, int *err)
{
	struct native_swift_flow *native;

	*err = 0;
	if (!bench_has_native_baseline(pkg))
		return NULL;
	native_swift_default_params(params);
	native = calloc(flows, sizeof(*native));
	if (!native) {
		*err = -ENOMEM;
		return NULL;
	}
	for (uint32_t f = 0; f < flows; f++)
		native_swift_init(&native[f], params, 0);
	return native;
}
