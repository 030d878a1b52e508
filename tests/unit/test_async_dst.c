// SPDX-License-Identifier: MIT
/*
 * test_async_dst.c - deterministic interleaving of the asynchronous shell.
 *
 * This program links a build of async.c and pendset.c (and of its probe
 * packages) in which every access to memory shared between threads first
 * calls pcm_dst_point(). Datapath threads, workers and the flows' owners run
 * as coroutines on one thread; at each point a scheduler seeded by the run's
 * seed decides whether to switch and to whom. One seed is one exact
 * interleaving, so a failing seed reproduces.
 *
 * Each seed draws a scenario (mode, bound, workers, datapath threads, flows,
 * events, how often owners swap, reset, remove and add flows) and checks:
 *   - liveness: once feeding stops, every flow's pending trigger is handled
 *     within LIVENESS_ROUNDS worker rounds, and then no trigger holds;
 *   - SUM conservation: the ACKs, bytes and backlog packets the handlers saw
 *     plus what is left equal what was fed, across every swap (no event lost
 *     or applied twice); a reset or removed incarnation never saw more;
 *   - every call had its trigger holding (ACKS >= 1);
 *   - LOCKED snapshots never hold part of an event; BOUNDED ones hold parts of
 *     at most skew_bound events, and the worker's accepted skew is within it;
 *   - controls are never torn (CHECK = 3 TOTAL + BYTES_TOTAL in every read)
 *     and never go back within an incarnation, swaps included;
 *   - add, remove, reset and swap at any point: no crash (ASan), no call for
 *     an incarnation that is gone, nothing stuck.
 * A failing seed prints one line to reproduce it, then the smallest scenario
 * (fewer events, flows, owner operations) that still fails with that seed.
 *
 *   PCM_DST_SEEDS=N     seeds to run (default 10000; suite `slow` runs 1000000)
 *   PCM_DST_SEED=S      first seed (default 1)
 *   PCM_DST_EVENTS=E, PCM_DST_FLOWS=F, PCM_DST_OPS=O  scenario overrides
 *
 * ThreadSanitizer does not follow coroutine switches; that build skips.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "async.h"
#include "dst_hooks.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define DST_ASAN 1
#endif

extern const struct pcm_package pcm_pkg_dst_p;
extern const struct pcm_package pcm_pkg_dst_q;

/* Called by the probe handler (tests/data/pkg/dst_probe.c) on every call. */
void dst_observe(pcm_uint seed, pcm_uint acks, pcm_uint bytes, pcm_uint ev_a, pcm_uint ev_b,
		 pcm_uint backlog_taken);

#define BIT(t) ((pcm_uint)1 << (t))
#define MSS 4096
#define MAX_ACKS 3
#define MAX_ACTORS 8
#define MAX_FLOWS 16
#define MAX_INCARNATIONS 256
#define STACK_BYTES (256 * 1024)
#define STUCK_POINTS 2000000
#define LIVENESS_ROUNDS 6

/* ---- the scenario a seed draws ------------------------------------------------------------ */

struct scenario {
	uint64_t seed;
	enum pcm_async_mode mode;
	uint32_t bound;
	uint32_t n_workers;
	uint32_t n_dp;         /* datapath threads */
	uint32_t flows_per_dp; /* flows each owns */
	uint32_t shared;       /* flows every datapath thread feeds, never changed */
	uint32_t events;       /* per datapath thread */
	uint32_t ops;          /* in 64: chance of an owner operation after an event */
	uint32_t switch_in;    /* a scheduling point switches with chance 1 / switch_in */
};

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t env_u32(const char *name, uint32_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? (uint32_t)strtoul(v, NULL, 10) : dflt;
}

static void draw_scenario(uint64_t seed, struct scenario *sc)
{
	uint64_t r = seed * 0x2545f4914f6cdd1dull;

	sc->seed = seed;
	sc->mode = (enum pcm_async_mode)(seed % PCM_ASYNC_MODE_COUNT);
	sc->bound = (uint32_t)(splitmix(&r) % 3);
	sc->n_workers = 1 + (uint32_t)(splitmix(&r) % 2);
	sc->n_dp = 1 + (uint32_t)(splitmix(&r) % 2);
	sc->flows_per_dp = env_u32("PCM_DST_FLOWS", 1 + (uint32_t)(splitmix(&r) % 3));
	sc->shared = (uint32_t)(splitmix(&r) % 2);
	sc->events = env_u32("PCM_DST_EVENTS", 4 + (uint32_t)(splitmix(&r) % 14));
	sc->ops = env_u32("PCM_DST_OPS", (uint32_t)(splitmix(&r) % 24));
	sc->switch_in = 1 + (uint32_t)(splitmix(&r) % 6);
}

static void print_repro(FILE *f, const struct scenario *sc)
{
	fprintf(f, "  reproduce: PCM_DST_SEEDS=1 PCM_DST_SEED=%" PRIu64
		   " PCM_DST_EVENTS=%u PCM_DST_FLOWS=%u PCM_DST_OPS=%u %s/tests/unit/%s\n",
		sc->seed, sc->events, sc->flows_per_dp, sc->ops, PCM_BUILD_ROOT, PCM_DST_BINARY);
}

/* ---- coroutines --------------------------------------------------------------------------- */

struct actor {
	ucontext_t ctx;
	unsigned char *stack;
	void (*fn)(struct actor *);
	uint32_t id;
	bool done;
#ifdef DST_ASAN
	void *fake_stack;
#endif
};

static struct {
	ucontext_t main;
	struct actor actors[MAX_ACTORS];
	uint32_t n_actors;
	struct actor *cur;
	uint64_t rng;
	uint64_t points;
	uint64_t points_limit;
	uint32_t switch_in;
	bool failed;
	char why[512];
} S;

static int trace_on = -1;

/* PCM_DST_TRACE=1: what each actor does, for reading a failing seed. */
static void trace(const char *fmt, ...)
{
	va_list ap;

	if (trace_on < 0)
		trace_on = getenv("PCM_DST_TRACE") != NULL;
	if (!trace_on)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	if (S.failed)
		return;
	S.failed = true;
	va_start(ap, fmt);
	vsnprintf(S.why, sizeof(S.why), fmt, ap);
	va_end(ap);
}

#ifdef DST_ASAN
static const void *main_stack_bottom;
static size_t main_stack_size;
#endif

/* Switch from the scheduler to actor @a. */
static void enter_actor(struct actor *a)
{
#ifdef DST_ASAN
	void *fake = NULL;

	__sanitizer_start_switch_fiber(&fake, a->stack, STACK_BYTES);
	swapcontext(&S.main, &a->ctx);
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
	swapcontext(&S.main, &a->ctx);
#endif
}

/* Switch from actor @a back to the scheduler; @dying: it never runs again. */
static void leave_actor(struct actor *a, bool dying)
{
#ifdef DST_ASAN
	__sanitizer_start_switch_fiber(dying ? NULL : &a->fake_stack, main_stack_bottom,
				       main_stack_size);
	swapcontext(&a->ctx, &S.main);
	__sanitizer_finish_switch_fiber(a->fake_stack, NULL, NULL);
#else
	(void)dying;
	swapcontext(&a->ctx, &S.main);
#endif
}

/* Back to the scheduler; it resumes this actor later (or never, after a failure). */
static void yield_actor(void)
{
	struct actor *a = S.cur;

	S.cur = NULL;
	leave_actor(a, false);
	S.cur = a;
}

void pcm_dst_point(void)
{
	if (!S.cur)
		return; /* the scheduler itself: setup and checks */
	if (++S.points > S.points_limit)
		fail("stuck: %llu scheduling points without finishing",
		     (unsigned long long)S.points);
	if (S.failed || splitmix(&S.rng) % S.switch_in == 0)
		yield_actor();
}

static struct actor *trampoline_actor;

static void trampoline(void)
{
	struct actor *a = trampoline_actor;

#ifdef DST_ASAN
	__sanitizer_finish_switch_fiber(NULL, &main_stack_bottom, &main_stack_size);
#endif
	S.cur = a;
	a->fn(a);
	a->done = true;
	S.cur = NULL;
	leave_actor(a, true);
}

/* A new actor, run at once up to its first switch (so that its context is set up). */
static void spawn(void (*fn)(struct actor *), uint32_t id)
{
	struct actor *a = &S.actors[S.n_actors++];

	memset(a, 0, sizeof(*a));
	a->fn = fn;
	a->id = id;
	a->stack = malloc(STACK_BYTES);
	getcontext(&a->ctx);
	a->ctx.uc_stack.ss_sp = a->stack;
	a->ctx.uc_stack.ss_size = STACK_BYTES;
	a->ctx.uc_link = NULL;
	makecontext(&a->ctx, trampoline, 0);
	trampoline_actor = a;
	enter_actor(a);
	S.cur = NULL;
}

/* Run @a until it yields or ends. */
static void resume(struct actor *a)
{
	S.cur = a;
	enter_actor(a);
	S.cur = NULL;
}

static void free_actors(void)
{
	for (uint32_t i = 0; i < S.n_actors; i++)
		free(S.actors[i].stack);
	S.n_actors = 0;
}

/* ---- the model the checks compare against ------------------------------------------------- */

struct incarnation {
	uint32_t flow;
	bool shared; /* fed by several datapath threads: event numbers are not in lock order */
	bool ended; /* reset or removed: its unconsumed samples were dropped */
	bool reset; /* its reset returned: no call may come for it any more */
	uint64_t fed_acks, fed_backlog;
	uint64_t seen_acks, seen_pkts, taken_backlog;
	uint64_t last_total; /* the latest TOTAL a datapath read */
	uint32_t ev;         /* event number, in EV_A and EV_B */
};

struct dp_flow {
	uint32_t flow;
	uint32_t inc; /* index into M.inc */
};

static struct {
	const struct scenario *sc;
	struct pcm_async *as;
	struct incarnation inc[MAX_INCARNATIONS];
	struct incarnation unattributed;
	uint32_t n_inc;
	struct dp_flow own[MAX_ACTORS][MAX_FLOWS];
	struct dp_flow shared[MAX_FLOWS];
	uint32_t dp_running;
	bool stop_workers;
	uint64_t dp_rng[MAX_ACTORS];
	pcm_uint now;
} M;

static uint32_t new_incarnation(uint32_t flow)
{
	uint32_t i = M.n_inc++;

	if (i >= MAX_INCARNATIONS) {
		fail("model: too many incarnations");
		M.n_inc--;
		return MAX_INCARNATIONS - 1;
	}
	memset(&M.inc[i], 0, sizeof(M.inc[i]));
	M.inc[i].flow = flow;
	return i;
}

void dst_observe(pcm_uint seed, pcm_uint acks, pcm_uint bytes, pcm_uint ev_a, pcm_uint ev_b,
		 pcm_uint backlog_taken)
{
	const struct scenario *sc = M.sc;
	struct incarnation *in;
	uint64_t imbal, dist;

	if (seed > M.n_inc) {
		fail("a call with FLOW_SEED %llu, which no incarnation carries",
		     (unsigned long long)seed);
		return;
	}
	if (acks < 1)
		fail("a call with ACKS %llu, whose trigger (>= 1) did not hold",
		     (unsigned long long)acks);
	/*
	 * A snapshot that holds part of the first event of an incarnation
	 * (RELAXED, BOUNDED) may lack its SEED: then it cannot be attributed.
	 * The totals are checked on the controls, which carry them.
	 */
	trace("  call: seed %llu ACKS %llu BYTES %llu EV_A %llu EV_B %llu taken %llu\n",
	      (unsigned long long)seed, (unsigned long long)acks, (unsigned long long)bytes,
	      (unsigned long long)ev_a, (unsigned long long)ev_b,
	      (unsigned long long)backlog_taken);
	in = seed ? &M.inc[seed - 1] : &M.unattributed;
	if (in->reset)
		fail("flow %u: a call for an incarnation whose reset had returned", in->flow);
	in->seen_acks += acks;
	in->seen_pkts += bytes / MSS;
	in->taken_backlog += backlog_taken;
	imbal = acks * MSS > bytes ? acks * MSS - bytes : bytes - acks * MSS;
	dist = ev_a > ev_b ? ev_a - ev_b : ev_b - ev_a;
	if (!seed || in->shared)
		dist = 0; /* the numbers say nothing about the order events took the lock */
	if (sc->mode == PCM_ASYNC_LOCKED && (imbal || dist))
		fail("flow %u: a LOCKED snapshot holds part of an event (ACKS %llu, BYTES %llu, "
		     "EV_A %llu, EV_B %llu)",
		     in->flow, (unsigned long long)acks, (unsigned long long)bytes,
		     (unsigned long long)ev_a, (unsigned long long)ev_b);
	if (sc->mode == PCM_ASYNC_BOUNDED &&
	    (dist > sc->bound || imbal > 2ull * sc->bound * MAX_ACKS * MSS))
		fail("flow %u: a BOUNDED(%u) snapshot holds parts of more events (EV_A %llu, EV_B "
		     "%llu, bytes off by %llu)",
		     in->flow, sc->bound, (unsigned long long)ev_a, (unsigned long long)ev_b,
		     (unsigned long long)imbal);
}

static void check_controls(struct dp_flow *df)
{
	struct incarnation *in = &M.inc[df->inc];
	struct pcm_control_set set;
	pcm_uint total, rate, check;

	if (pcm_async_controls(M.as, df->flow, &set) < 0) {
		fail("flow %u: controls unreadable", df->flow);
		return;
	}
	total = set.value[PCM_CTRL_CWND];
	rate = set.value[PCM_CTRL_RATE];
	check = set.value[PCM_CTRL_EV];
	if (check != 3 * total + rate)
		fail("flow %u: torn controls: CHECK %llu, TOTAL %llu, BYTES_TOTAL %llu", df->flow,
		     (unsigned long long)check, (unsigned long long)total,
		     (unsigned long long)rate);
	if (total < in->last_total)
		fail("flow %u: TOTAL went back from %llu to %llu", df->flow,
		     (unsigned long long)in->last_total, (unsigned long long)total);
	in->last_total = total;
}

/* ---- actors ------------------------------------------------------------------------------- */

static uint64_t dp_rng(struct actor *a)
{
	if (!M.dp_rng[a->id])
		M.dp_rng[a->id] = M.sc->seed * 31 + a->id + 1;
	return splitmix(&M.dp_rng[a->id]);
}

static void feed_one(struct actor *a, struct dp_flow *df)
{
	struct incarnation *in = &M.inc[df->inc];
	struct pcm_event ev = { 0 };
	pcm_uint acks = 1 + dp_rng(a) % MAX_ACKS;
	int rc;

	ev.valid = BIT(PCM_SIG_ACK) | BIT(PCM_SIG_DATA_TX) | BIT(PCM_SIG_ACK_EV) |
		   BIT(PCM_SIG_ECN_EV) | BIT(PCM_SIG_FLOW_SEED) | BIT(PCM_SIG_RTT);
	ev.values[PCM_SIG_ACK] = acks;
	ev.values[PCM_SIG_DATA_TX] = acks * MSS;
	ev.values[PCM_SIG_ACK_EV] = ev.values[PCM_SIG_ECN_EV] = ++in->ev;
	ev.values[PCM_SIG_FLOW_SEED] = df->inc + 1;
	ev.values[PCM_SIG_RTT] = 10000 + dp_rng(a) % 1000;
	if (dp_rng(a) % 3 == 0) {
		ev.valid |= BIT(PCM_SIG_TX_READY_PKTS);
		ev.values[PCM_SIG_TX_READY_PKTS] = 1;
		in->fed_backlog++;
	}
	in->fed_acks += acks;
	M.now += 1000 + dp_rng(a) % 5000;
	trace("dp %u: feed flow %u ev %u acks %llu\n", a->id, df->flow, in->ev,
	      (unsigned long long)acks);
	rc = pcm_async_feed(M.as, df->flow, &ev, M.now);
	trace("dp %u: fed flow %u ev %u: %d\n", a->id, df->flow, in->ev, rc);
	if (rc < 0)
		fail("flow %u: feed returned %d", df->flow, rc);
}

/* An owner's operation on one of its flows: swap, reset, or remove and add another. */
static void owner_op(struct actor *a, struct dp_flow *df)
{
	const struct pcm_package *now_pkg = pcm_async_flow_package(M.as, df->flow);
	uint64_t r = dp_rng(a) % 4;
	int rc;

	if (r <= 1) {
		rc = pcm_async_flow_swap(M.as, df->flow,
					 now_pkg == &pcm_pkg_dst_p ? &pcm_pkg_dst_q : &pcm_pkg_dst_p,
					 2000000);
	} else if (r == 2) {
		rc = pcm_async_flow_reset(M.as, df->flow, 2000000);
		M.inc[df->inc].ended = true;
		M.inc[df->inc].reset = true;
		df->inc = new_incarnation(df->flow);
	} else {
		uint32_t w = (uint32_t)(dp_rng(a) % M.sc->n_workers);

		rc = pcm_async_flow_remove(M.as, df->flow);
		M.inc[df->inc].ended = true;
		if (rc == 0)
			rc = pcm_async_flow_add(M.as, w, dp_rng(a) % 2 ? &pcm_pkg_dst_p : &pcm_pkg_dst_q,
						2000000, &df->flow);
		df->inc = new_incarnation(df->flow);
	}
	trace("dp %u: owner op %s -> flow %u: %d\n", a->id,
	      r <= 1 ? "swap" : r == 2 ? "reset" : "remove+add", df->flow, rc);
	if (rc < 0)
		fail("owner operation %llu on flow %u returned %d", (unsigned long long)r,
		     df->flow, rc);
}

static void datapath_actor(struct actor *a)
{
	const struct scenario *sc = M.sc;

	for (uint32_t n = 0; n < sc->events && !S.failed; n++) {
		uint32_t pick = (uint32_t)(dp_rng(a) % (sc->flows_per_dp + sc->shared));
		struct dp_flow *df = pick < sc->flows_per_dp ? &M.own[a->id][pick]
							      : &M.shared[pick - sc->flows_per_dp];

		feed_one(a, df);
		if (dp_rng(a) % 4 == 0)
			check_controls(df);
		if (pick < sc->flows_per_dp && dp_rng(a) % 64 < sc->ops)
			owner_op(a, df);
	}
	M.dp_running--;
}

static void worker_actor(struct actor *a)
{
	uint32_t w = a->id;

	while (!M.stop_workers && !S.failed) {
		int n;

		trace("worker %u: poll\n", w);
		n = pcm_async_poll(M.as, w, 1 + (uint32_t)(splitmix(&S.rng) % 8));
		trace("worker %u: polled %d\n", w, n);

		if (n < 0)
			fail("worker %u: poll returned %d", w, n);
		pcm_dst_point();
	}
}

/* ---- one run ------------------------------------------------------------------------------ */

static int make_shell(const struct scenario *sc)
{
	const struct pcm_package *pkgs[] = { &pcm_pkg_dst_p, &pcm_pkg_dst_q };
	struct pcm_async_config cfg;
	struct pcm_diag diag;

	pcm_async_config_default(&cfg);
	cfg.mode = sc->mode;
	cfg.skew_bound = sc->bound;
	cfg.max_retries = 2;
	cfg.n_workers = sc->n_workers;
	cfg.packages = pkgs;
	cfg.n_packages = 2;
	cfg.max_flows = 4096;
	if (pcm_async_create_cfg(&cfg, &M.as, &diag) < 0) {
		fail("create: %s", diag.msg);
		return -1;
	}
	return pcm_async_start(M.as);
}

static void add_flows(const struct scenario *sc)
{
	uint64_t r = sc->seed;

	for (uint32_t d = 0; d < sc->n_dp; d++) {
		for (uint32_t i = 0; i < sc->flows_per_dp; i++) {
			struct dp_flow *df = &M.own[d][i];

			if (pcm_async_flow_add(M.as, (uint32_t)(splitmix(&r) % sc->n_workers),
					       splitmix(&r) % 2 ? &pcm_pkg_dst_p : &pcm_pkg_dst_q, 0,
					       &df->flow) < 0)
				fail("add failed");
			df->inc = new_incarnation(df->flow);
		}
	}
	for (uint32_t i = 0; i < sc->shared; i++) {
		if (pcm_async_flow_add(M.as, 0, &pcm_pkg_dst_p, 0, &M.shared[i].flow) < 0)
			fail("add failed");
		M.shared[i].inc = new_incarnation(M.shared[i].flow);
		M.inc[M.shared[i].inc].shared = true;
	}
}

/* Run the actors until all are done; the workers stop once no datapath runs. */
static void run_actors(void)
{
	while (!S.failed) {
		uint32_t live = 0, pick;

		for (uint32_t i = 0; i < S.n_actors; i++)
			live += !S.actors[i].done;
		if (!live)
			return;
		pick = (uint32_t)(splitmix(&S.rng) % S.n_actors);
		while (S.actors[pick].done)
			pick = (pick + 1) % S.n_actors;
		resume(&S.actors[pick]);
		if (!M.dp_running)
			M.stop_workers = true;
	}
}

/* Feeding has stopped: worker rounds until none finds work, at most LIVENESS_ROUNDS. */
static void drain(const struct scenario *sc)
{
	for (uint32_t pass = 0; !S.failed; pass++) {
		int n = 0;

		for (uint32_t w = 0; w < sc->n_workers; w++)
			n += pcm_async_poll(M.as, w, 64);
		if (!n)
			return;
		if (pass == LIVENESS_ROUNDS)
			fail("not quiet %u worker rounds after feeding stopped", LIVENESS_ROUNDS);
	}
}

static int signal_index(const struct pcm_package *pkg, const char *name)
{
	for (uint32_t i = 0; i < pkg->n_signals; i++)
		if (strcmp(pkg->signals[i].name, name) == 0)
			return (int)i;
	return -1;
}

/*
 * Totals of one live incarnation against what the flow holds now: its
 * controls (TOTAL, BYTES_TOTAL, TAKEN: what its handlers consumed, carried
 * across swaps) plus what is left equal what was fed.
 */
static void check_live(struct incarnation *in)
{
	const struct pcm_package *pkg = pcm_async_flow_package(M.as, in->flow);
	pcm_uint s[256], acks, pkts, backlog, total, total_pkts, taken;
	struct pcm_control_set set;

	if (!pkg || pcm_async_flow_peek(M.as, in->flow, s) < 0 ||
	    pcm_async_controls(M.as, in->flow, &set) < 0) {
		fail("flow %u: gone", in->flow);
		return;
	}
	acks = s[PCM_REC_SIGNALS_SLOT + signal_index(pkg, "ACKS")];
	pkts = s[PCM_REC_SIGNALS_SLOT + signal_index(pkg, "BYTES")] / MSS;
	backlog = s[PCM_REC_SIGNALS_SLOT + signal_index(pkg, "BACKLOG")];
	total = set.value[PCM_CTRL_CWND];
	total_pkts = set.value[PCM_CTRL_RATE];
	taken = set.value[PCM_CTRL_CUMULATIVE_CREDIT];
	if (acks)
		fail("flow %u: ACKS %llu still pending after the drain", in->flow,
		     (unsigned long long)acks);
	if (total + acks != in->fed_acks || total_pkts + pkts != in->fed_acks)
		fail("flow %u: fed %llu ACKs; handlers consumed %llu ACKs and %llu packets of "
		     "bytes, %llu and %llu left",
		     in->flow, (unsigned long long)in->fed_acks, (unsigned long long)total,
		     (unsigned long long)total_pkts, (unsigned long long)acks,
		     (unsigned long long)pkts);
	if (taken + backlog != in->fed_backlog)
		fail("flow %u: fed %llu backlog packets, handlers took %llu, %llu left", in->flow,
		     (unsigned long long)in->fed_backlog, (unsigned long long)taken,
		     (unsigned long long)backlog);
	if (!in->shared && (s[PCM_REC_SIGNALS_SLOT + signal_index(pkg, "EV_A")] != in->ev ||
			    s[PCM_REC_SIGNALS_SLOT + signal_index(pkg, "EV_B")] != in->ev))
		fail("flow %u: a LAST signal does not hold the newest sample (event %u)", in->flow,
		     in->ev);
	if (in->seen_acks > total)
		fail("flow %u: its calls saw %llu ACKs, its TOTAL says %llu", in->flow,
		     (unsigned long long)in->seen_acks, (unsigned long long)total);
}

static void check_end(const struct scenario *sc)
{
	struct pcm_async_stats st;

	pcm_async_stop(M.as);
	for (uint32_t i = 0; i < M.n_inc && !S.failed; i++) {
		struct incarnation *in = &M.inc[i];

		if (!in->ended)
			check_live(in);
		else if (in->seen_acks > in->fed_acks || in->seen_pkts > in->fed_acks ||
			 in->taken_backlog > in->fed_backlog)
			fail("flow %u: an ended incarnation saw more than it was fed", in->flow);
	}
	pcm_async_stats(M.as, UINT32_MAX, &st);
	if (sc->mode == PCM_ASYNC_LOCKED && st.skew_max_accepted)
		fail("LOCKED accepted a snapshot of skew %llu",
		     (unsigned long long)st.skew_max_accepted);
	if (sc->mode == PCM_ASYNC_BOUNDED && st.skew_max_accepted > sc->bound)
		fail("BOUNDED(%u) accepted a snapshot of skew %llu", sc->bound,
		     (unsigned long long)st.skew_max_accepted);
}

/* One seed. Return: true if every property held. */
static bool run_seed(const struct scenario *sc)
{
	memset(&M, 0, sizeof(M));
	memset(&S, 0, sizeof(S));
	M.sc = sc;
	M.now = 1000000;
	S.rng = sc->seed ^ 0x5851f42d4c957f2dull;
	S.switch_in = sc->switch_in;
	S.points_limit = STUCK_POINTS;
	if (make_shell(sc) == 0) {
		add_flows(sc);
		M.dp_running = sc->n_dp;
		for (uint32_t d = 0; d < sc->n_dp; d++)
			spawn(datapath_actor, d);
		for (uint32_t w = 0; w < sc->n_workers; w++)
			spawn(worker_actor, w);
		run_actors();
		if (!S.failed)
			drain(sc);
		if (!S.failed)
			check_end(sc);
	}
	free_actors();
	pcm_async_destroy(M.as);
	return !S.failed;
}

/* The smallest scenario that still fails with the same seed: fewer events, flows, operations. */
static void shrink(struct scenario *sc, char *why, size_t why_len)
{
	for (bool smaller = true; smaller;) {
		struct scenario t = *sc;

		smaller = false;
		for (int knob = 0; knob < 3 && !smaller; knob++) {
			t = *sc;
			if (knob == 0 && t.events > 1)
				t.events /= 2;
			else if (knob == 1 && t.flows_per_dp > 1)
				t.flows_per_dp--;
			else if (knob == 2 && t.ops > 0)
				t.ops /= 2;
			else
				continue;
			if (!run_seed(&t)) {
				*sc = t;
				snprintf(why, why_len, "%s", S.why);
				smaller = true;
			}
		}
	}
}

int main(void)
{
	uint64_t first = env_u32("PCM_DST_SEED", 1), n = env_u32("PCM_DST_SEEDS", 10000);
	uint64_t by_mode[PCM_ASYNC_MODE_COUNT] = { 0 };

#if defined(__SANITIZE_THREAD__)
	puts("test_async_dst: skipped: ThreadSanitizer does not follow coroutine switches, and "
	     "this program runs on one thread");
	return 77;
#endif
	for (uint64_t seed = first; seed < first + n; seed++) {
		struct scenario sc;

		draw_scenario(seed, &sc);
		if (!run_seed(&sc)) {
			char why[sizeof(S.why)];

			memcpy(why, S.why, sizeof(why));
			fprintf(stderr, "test_async_dst: FAIL seed %" PRIu64 " (%s, bound %u): %s\n",
				seed, pcm_async_mode_name(sc.mode), sc.bound, why);
			print_repro(stderr, &sc);
			shrink(&sc, why, sizeof(why));
			fprintf(stderr, "  smallest failing scenario (%s):\n", why);
			print_repro(stderr, &sc);
			return 1;
		}
		by_mode[sc.mode]++;
	}
	printf("test_async_dst: %" PRIu64 " seeds from %" PRIu64 " passed (relaxed %" PRIu64
	       ", locked %" PRIu64 ", bounded %" PRIu64 ")\n",
	       n, first, by_mode[0], by_mode[1], by_mode[2]);
	return 0;
}
