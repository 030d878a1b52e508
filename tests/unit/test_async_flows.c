// SPDX-License-Identifier: MIT
/*
 * test_async_flows.c - flows of the asynchronous shell at run time:
 * placement on the worker the datapath picks, removal of a flow that is
 * still pending, reset, live swap and its handoff, controls read as one
 * set, time going back; then, with real threads, owners swapping their
 * flows every few events while they and another datapath thread feed and
 * two workers run, one hot flow in BOUNDED mode with a bound of 0, and a
 * worker whose flows go quiet.
 * Nothing is timed; the suite also runs under ThreadSanitizer.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "async.h"
#include "probes.h"

#define ALL UINT32_MAX
#define IDLE_SPINS 200 /* empty polls before a worker blocks */

/* The probe handler of dst_p/dst_q reports each call; the controls carry the totals. */
void dst_observe(pcm_uint seed, pcm_uint acks, pcm_uint bytes, pcm_uint ev_a, pcm_uint ev_b,
		 pcm_uint backlog_taken);
void dst_observe(pcm_uint seed, pcm_uint acks, pcm_uint bytes, pcm_uint ev_a, pcm_uint ev_b,
		 pcm_uint backlog_taken)
{
}

static struct pcm_async *open_shell(enum pcm_async_mode mode, uint32_t workers, uint32_t bound)
{
	const struct pcm_package *pkgs[] = { &pcm_pkg_accum_probe, &pcm_pkg_pair_probe,
					     &pcm_pkg_dst_p, &pcm_pkg_dst_q };
	struct pcm_async_config cfg;
	struct pcm_async *as = NULL;
	struct pcm_diag diag;

	pcm_async_config_default(&cfg);
	cfg.mode = mode;
	cfg.n_workers = workers;
	cfg.skew_bound = bound;
	cfg.max_retries = 4;
	cfg.idle_spins = IDLE_SPINS;
	cfg.packages = pkgs;
	cfg.n_packages = 4;
	cfg.max_flows = 1 << 16;
	if (pcm_async_create_cfg(&cfg, &as, &diag) != 0)
		fail_msg("%s", diag.msg);
	return as;
}

static int feed(struct pcm_async *as, uint32_t flow, pcm_uint valid, const pcm_uint *vals,
		pcm_uint now)
{
	struct pcm_event ev = { .valid = valid };

	memcpy(ev.values, vals, sizeof(ev.values));
	return pcm_async_feed(as, flow, &ev, now);
}

static int index_of(const struct pcm_package *pkg, const char *name)
{
	for (uint32_t i = 0; i < pkg->n_signals; i++)
		if (strcmp(pkg->signals[i].name, name) == 0)
			return (int)i;
	fail_msg("%s has no signal %s", pkg->name, name);
	return -1;
}

static pcm_uint peek_signal(struct pcm_async *as, uint32_t flow, const char *name)
{
	pcm_uint s[256];

	assert_int_equal(pcm_async_flow_peek(as, flow, s), 0);
	return s[PCM_REC_SIGNALS_SLOT + index_of(pcm_async_flow_package(as, flow), name)];
}

static pcm_uint peek_var(struct pcm_async *as, uint32_t flow, const char *name, unsigned idx)
{
	const struct pcm_package *pkg = pcm_async_flow_package(as, flow);
	pcm_uint s[256];

	assert_int_equal(pcm_async_flow_peek(as, flow, s), 0);
	for (uint32_t i = 0; i < pkg->n_variables; i++)
		if (strcmp(pkg->variables[i].name, name) == 0)
			return s[2 + pkg->n_signals + pkg->n_controls + pkg->variables[i].slot + idx];
	fail_msg("no variable %s", name);
	return 0;
}

static pcm_uint control(struct pcm_async *as, uint32_t flow, pcm_control_t type)
{
	pcm_uint v = 0;

	assert_int_equal(pcm_async_control(as, flow, type, &v), 0);
	return v;
}

static void test_flows_run_on_the_worker_the_datapath_picks(void **state)
{
	struct pcm_async *as = open_shell(PCM_ASYNC_RELAXED, 2, 0);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };
	uint32_t a, b, c;

	assert_int_equal(pcm_async_flow_add(as, 1, &pcm_pkg_pair_probe, 0, &a), 0);
	assert_int_equal(pcm_async_flow_add(as, 0, &pcm_pkg_pair_probe, 0, &b), 0);
	assert_int_equal(pcm_async_flow_add(as, 1, &pcm_pkg_pair_probe, 0, &c), 0);
	assert_int_equal(pcm_async_worker_of(as, a), 1);
	assert_int_equal(pcm_async_worker_of(as, b), 0);
	assert_int_equal(pcm_async_worker_of(as, c), 1);
	assert_int_equal(c, a + 1); /* a worker's flows share its chunks */
	assert_int_equal(pcm_async_flow_add(as, 2, &pcm_pkg_pair_probe, 0, &c), -EINVAL);
	/* unpinned workers have no node of their own */
	assert_int_equal(pcm_async_worker_node(as, 0), -1);
	v[PCM_SIG_ACK] = 1;
	assert_int_equal(feed(as, a, BIT(PCM_SIG_ACK), v, 1), 1);
	assert_int_equal(feed(as, b, BIT(PCM_SIG_ACK), v, 1), 1);
	assert_int_equal(pcm_async_poll(as, 0, 10), 1);
	assert_int_equal(peek_var(as, a, "CALLS", 0), 0);
	assert_int_equal(peek_var(as, b, "CALLS", 0), 1);
	assert_int_equal(pcm_async_poll(as, 1, 10), 1);
	assert_int_equal(peek_var(as, a, "CALLS", 0), 1);
	printf("pair_probe on the async shell: %zu bytes per flow\n", pcm_async_bytes_per_flow(as));
	pcm_async_destroy(as);
}

static void test_removing_a_pending_flow_is_safe(void **state)
{
	struct pcm_async *as = open_shell(PCM_ASYNC_LOCKED, 1, 0);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };
	struct pcm_async_stats st;
	size_t before;
	uint32_t f, g;

	before = pcm_async_bytes(as);
	assert_int_equal(pcm_async_flow_add(as, 0, &pcm_pkg_pair_probe, 0, &f), 0);
	v[PCM_SIG_ACK] = 1;
	assert_int_equal(feed(as, f, BIT(PCM_SIG_ACK), v, 1), 1);
	assert_int_equal(pcm_async_flow_remove(as, f), 0);
	assert_int_equal(pcm_async_flow_remove(as, f), -ENOENT);
	/* not freed until the worker looks: the handle is not reused yet */
	assert_int_equal(pcm_async_flow_add_at(as, f, 0, &pcm_pkg_pair_probe, 0), -EBUSY);
	assert_int_equal(pcm_async_flow_add(as, 0, &pcm_pkg_pair_probe, 0, &g), 0);
	assert_int_not_equal(g, f);
	assert_int_equal(pcm_async_poll(as, 0, 10), 1);
	assert_int_equal(pcm_async_stats(as, ALL, &st), 0);
	assert_int_equal(st.handler_calls, 0); /* its handler never ran */
	assert_int_equal(pcm_async_flow_add_at(as, f, 0, &pcm_pkg_pair_probe, 0), 0);
	assert_int_equal(peek_var(as, f, "CALLS", 0), 0);
	assert_int_equal(pcm_async_flow_remove(as, f), 0);
	assert_int_equal(pcm_async_flow_remove(as, g), 0);
	assert_int_equal(pcm_async_poll(as, 0, 10), 2);
	assert_int_equal(pcm_async_bytes(as), before); /* the chunk went with its last flow */
	pcm_async_destroy(as);
}

static void test_reset_drops_the_old_state_and_keeps_the_handle(void **state)
{
	struct pcm_async *as = open_shell(PCM_ASYNC_RELAXED, 1, 0);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };
	uint32_t f;

	assert_int_equal(pcm_async_flow_add(as, 0, &pcm_pkg_pair_probe, 0, &f), 0);
	v[PCM_SIG_ACK] = 1;
	feed(as, f, BIT(PCM_SIG_ACK), v, 1);
	assert_int_equal(pcm_async_poll(as, 0, 10), 1);
	assert_int_equal(control(as, f, PCM_CTRL_CWND), 1);
	feed(as, f, BIT(PCM_SIG_ACK), v, 2); /* pending when the reset comes */
	assert_int_equal(pcm_async_flow_reset(as, f, 3), 0);
	assert_int_equal(control(as, f, PCM_CTRL_CWND), 0);
	assert_int_equal(peek_signal(as, f, "ACKS"), 0);
	assert_int_equal(peek_var(as, f, "CALLS", 0), 0);
	assert_int_equal(feed(as, f, BIT(PCM_SIG_ACK), v, 4), 1);
	assert_int_equal(pcm_async_poll(as, 0, 10), 1);
	assert_int_equal(peek_var(as, f, "CALLS", 0), 1);
	assert_int_equal(control(as, f, PCM_CTRL_CWND), 1);
	assert_int_equal(pcm_async_flow_reset(as, f + 1, 3), -ENOENT);
	pcm_async_destroy(as);
}

/* The synchronous shell's handoff case (test_shell.c), through the async shell. */
static void test_swap_hands_over_controls_and_unconsumed_samples(void **state)
{
	for (unsigned m = 0; m < PCM_ASYNC_MODE_COUNT; m++) {
		struct pcm_async *as = open_shell((enum pcm_async_mode)m, 1, 0);
		pcm_uint v[PCM_SIG_COUNT] = { 0 };
		uint32_t f;

		assert_int_equal(pcm_async_flow_add(as, 0, &pcm_pkg_pair_probe, 0, &f), 0);
		v[PCM_SIG_ACK] = 1;
		v[PCM_SIG_DATA_TX] = 4096;
		feed(as, f, BIT(PCM_SIG_ACK) | BIT(PCM_SIG_DATA_TX), v, 1);
		pcm_async_poll(as, 0, 10);
		feed(as, f, BIT(PCM_SIG_ACK) | BIT(PCM_SIG_DATA_TX), v, 2);
		pcm_async_poll(as, 0, 10);
		v[PCM_SIG_DATA_TX] = 1000;
		feed(as, f, BIT(PCM_SIG_DATA_TX), v, 3);
		feed(as, f, BIT(PCM_SIG_DATA_TX), v, 4);
		assert_int_equal(pcm_async_flow_swap(as, f, &pcm_pkg_accum_probe, 5), 0);
		assert_ptr_equal(pcm_async_flow_package(as, f), &pcm_pkg_accum_probe);
		assert_int_equal(control(as, f, PCM_CTRL_CWND), 2);
		assert_int_equal(peek_signal(as, f, "S_BYTES"), 2000);
		assert_int_equal(peek_var(as, f, "CALLS", 0), 0);
		v[PCM_SIG_ECN] = 1;
		v[PCM_SIG_DATA_TX] = 96;
		assert_int_equal(feed(as, f, BIT(PCM_SIG_ECN) | BIT(PCM_SIG_DATA_TX), v, 6), 1);
		assert_int_equal(pcm_async_poll(as, 0, 10), 1);
		assert_int_equal(peek_var(as, f, "SEEN", 4), 2096);
		assert_int_equal(control(as, f, PCM_CTRL_CWND), 3);
		pcm_async_destroy(as);
	}
}

/* An ACK still pending at the swap is the old package's: its handler takes it first. */
static void test_swap_lets_the_old_package_take_what_is_pending(void **state)
{
	struct pcm_async *as = open_shell(PCM_ASYNC_LOCKED, 1, 0);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };
	uint32_t f;

	assert_int_equal(pcm_async_flow_add(as, 0, &pcm_pkg_pair_probe, 0, &f), 0);
	v[PCM_SIG_ACK] = 1;
	v[PCM_SIG_DATA_TX] = 4096;
	assert_int_equal(feed(as, f, BIT(PCM_SIG_ACK) | BIT(PCM_SIG_DATA_TX), v, 1), 1);
	assert_int_equal(pcm_async_flow_swap(as, f, &pcm_pkg_accum_probe, 2), 0);
	/* pair_probe ran once (OUT = 1) and consumed the ACK and its bytes */
	assert_int_equal(control(as, f, PCM_CTRL_CWND), 1);
	assert_int_equal(peek_signal(as, f, "S_SUM"), 0);
	assert_int_equal(peek_signal(as, f, "S_BYTES"), 0);
	pcm_async_destroy(as);
}

static void test_controls_are_read_as_one_set(void **state)
{
	struct pcm_async *as = open_shell(PCM_ASYNC_BOUNDED, 1, 0);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };
	struct pcm_control_set set;
	uint64_t seq;
	uint32_t f;

	assert_int_equal(pcm_async_flow_add(as, 0, &pcm_pkg_dst_p, 0, &f), 0);
	assert_int_equal(pcm_async_controls(as, f, &set), 0);
	assert_int_equal(set.mask, BIT(PCM_CTRL_CWND) | BIT(PCM_CTRL_RATE) | BIT(PCM_CTRL_EV) |
					   BIT(PCM_CTRL_CUMULATIVE_CREDIT));
	seq = set.seq;
	v[PCM_SIG_ACK] = 2;
	v[PCM_SIG_DATA_TX] = 2 * MSS;
	v[PCM_SIG_FLOW_SEED] = 1;
	feed(as, f, BIT(PCM_SIG_ACK) | BIT(PCM_SIG_DATA_TX) | BIT(PCM_SIG_FLOW_SEED), v, 1);
	assert_int_equal(pcm_async_poll(as, 0, 10), 1);
	assert_int_equal(pcm_async_controls(as, f, &set), 0);
	assert_int_equal(set.seq, seq + 1);
	assert_int_equal(set.value[PCM_CTRL_CWND], 2);
	assert_int_equal(set.value[PCM_CTRL_RATE], 2);
	assert_int_equal(set.value[PCM_CTRL_EV], 3 * 2 + 2);
	/* the same set after a swap: the other package drives the same four */
	assert_int_equal(pcm_async_flow_swap(as, f, &pcm_pkg_dst_q, 2), 0);
	assert_int_equal(pcm_async_controls(as, f, &set), 0);
	assert_int_equal(set.value[PCM_CTRL_EV], 8);
	assert_int_equal(pcm_async_controls(as, f + 1, &set), -ENOENT);
	pcm_async_destroy(as);
}

/* Time going back: ELAPSED_TIME is 0, as in the synchronous shell (both used to differ). */
static void test_elapsed_time_is_zero_when_now_is_before_the_flow_started(void **state)
{
	const struct pcm_package *pkg = &pcm_pkg_writer_probe;
	struct pcm_async_config cfg;
	struct pcm_async *as;
	struct pcm_diag diag;

	pcm_async_config_default(&cfg);
	assert_int_equal(pcm_async_create(pkg, NULL, 1, 5000, &cfg, &as, &diag), 0);
	assert_int_equal(pcm_async_tick(as, 0, 4000), 0);
	assert_int_equal(pcm_async_poll(as, 0, 10), 0);
	assert_int_equal(peek_var(as, 0, "TIMER_FIRES", 0), 0);
	assert_int_equal(pcm_async_tick(as, 0, 1005000), 1);
	assert_int_equal(pcm_async_poll(as, 0, 10), 1);
	assert_int_equal(peek_var(as, 0, "TIMER_FIRES", 0), 1);
	pcm_async_destroy(as);
}

static void test_million_flows_fit_and_report_bytes_per_flow(void **state)
{
	const uint32_t n = 1000000;
	struct pcm_async_config cfg;
	struct pcm_async *as;
	struct pcm_diag diag;
	pcm_uint v[PCM_SIG_COUNT] = { 0 };

	pcm_async_config_default(&cfg);
	cfg.n_workers = 2;
	assert_int_equal(pcm_async_create(&pcm_pkg_pair_probe, NULL, n, 0, &cfg, &as, &diag), 0);
	print_message("pair_probe, async: %zu bytes per flow, %zu MiB for 1M flows\n",
		      pcm_async_bytes_per_flow(as), pcm_async_bytes(as) >> 20);
	assert_true(pcm_async_bytes(as) >= (size_t)n * pcm_async_bytes_per_flow(as));
	v[PCM_SIG_ACK] = 1;
	assert_int_equal(feed(as, n - 1, BIT(PCM_SIG_ACK), v, 1), 1);
	assert_int_equal(pcm_async_poll(as, (uint32_t)pcm_async_worker_of(as, n - 1), 10), 1);
	assert_int_equal(peek_var(as, n - 1, "CALLS", 0), 1);
	pcm_async_destroy(as);
}

/* ---- real threads: swaps while feeding ---------------------------------------------------- */

#define OWNERS 2
#define OWNED 4
#define SWAP_EVENTS 6000

struct owner {
	struct pcm_async *as;
	unsigned id;
	uint32_t flows[OWNED];
	uint64_t fed_acks[OWNED];
	uint64_t fed_backlog[OWNED];
	uint64_t last_total[OWNED];
	uint64_t swaps;
	bool failed;
	char why[256];
};

static atomic_bool stop_shared;
static uint32_t shared_flow;
static atomic_uint_fast64_t shared_acks;

static void owner_fail(struct owner *o, const char *why, uint32_t flow)
{
	if (!o->failed)
		snprintf(o->why, sizeof(o->why), "flow %u: %s", flow, why);
	o->failed = true;
}

/* Controls are one set (CHECK = 3 TOTAL + BYTES_TOTAL) and TOTAL never goes back. */
static void check_read(struct owner *o, unsigned k)
{
	struct pcm_control_set set;

	if (pcm_async_controls(o->as, o->flows[k], &set) < 0) {
		owner_fail(o, "controls unreadable", o->flows[k]);
		return;
	}
	if (set.value[PCM_CTRL_EV] != 3 * set.value[PCM_CTRL_CWND] + set.value[PCM_CTRL_RATE])
		owner_fail(o, "torn controls", o->flows[k]);
	if (set.value[PCM_CTRL_CWND] < o->last_total[k])
		owner_fail(o, "TOTAL went back", o->flows[k]);
	o->last_total[k] = set.value[PCM_CTRL_CWND];
}

static void make_event(uint64_t n, pcm_uint seed, struct pcm_event *ev)
{
	ev->valid = BIT(PCM_SIG_ACK) | BIT(PCM_SIG_DATA_TX) | BIT(PCM_SIG_FLOW_SEED) |
		    BIT(PCM_SIG_ACK_EV) | BIT(PCM_SIG_ECN_EV);
	ev->values[PCM_SIG_ACK] = 1 + n % 3;
	ev->values[PCM_SIG_DATA_TX] = ev->values[PCM_SIG_ACK] * MSS;
	ev->values[PCM_SIG_FLOW_SEED] = seed;
	ev->values[PCM_SIG_ACK_EV] = ev->values[PCM_SIG_ECN_EV] = n;
	if (n % 4 == 0) {
		ev->valid |= BIT(PCM_SIG_TX_READY_PKTS);
		ev->values[PCM_SIG_TX_READY_PKTS] = 1;
	}
}

static void *owner_main(void *arg)
{
	struct owner *o = arg;

	for (uint64_t n = 0; n < SWAP_EVENTS && !o->failed; n++) {
		unsigned k = (unsigned)(n % OWNED);
		struct pcm_event ev = { 0 };

		make_event(n, 1 + o->id, &ev);
		o->fed_acks[k] += ev.values[PCM_SIG_ACK];
		o->fed_backlog[k] += (ev.valid >> PCM_SIG_TX_READY_PKTS) & 1;
		if (pcm_async_feed(o->as, o->flows[k], &ev, 1000 + n) < 0)
			owner_fail(o, "feed failed", o->flows[k]);
		if (n % 5 == 0)
			check_read(o, k);
		if (n % 7 == 3) {
			const struct pcm_package *to =
				pcm_async_flow_package(o->as, o->flows[k]) == &pcm_pkg_dst_p
					? &pcm_pkg_dst_q
					: &pcm_pkg_dst_p;

			if (pcm_async_flow_swap(o->as, o->flows[k], to, 1000 + n) < 0)
				owner_fail(o, "swap failed", o->flows[k]);
			o->swaps++;
		}
		if (n % 4096 == 0)
			sched_yield();
	}
	return NULL;
}

/* A datapath thread that owns no flow of the owners, feeding a flow no one changes. */
static void *shared_main(void *arg)
{
	struct pcm_async *as = arg;

	for (uint64_t n = 0; n < OWNERS * SWAP_EVENTS && !atomic_load(&stop_shared); n++) {
		struct pcm_event ev = { 0 };

		make_event(n, 99, &ev);
		atomic_fetch_add(&shared_acks, ev.values[PCM_SIG_ACK]);
		pcm_async_feed(as, shared_flow, &ev, 1000 + n);
		if (n % 4096 == 0)
			sched_yield();
	}
	return NULL;
}

static void check_conserved(struct pcm_async *as, uint32_t flow, uint64_t acks, uint64_t backlog)
{
	struct pcm_control_set set;

	assert_int_equal(pcm_async_controls(as, flow, &set), 0);
	assert_int_equal(peek_signal(as, flow, "ACKS"), 0);
	assert_int_equal(set.value[PCM_CTRL_CWND], acks);
	assert_int_equal(set.value[PCM_CTRL_RATE] + peek_signal(as, flow, "BYTES") / MSS, acks);
	if (backlog != UINT64_MAX)
		assert_int_equal(set.value[PCM_CTRL_CUMULATIVE_CREDIT] +
					 peek_signal(as, flow, "BACKLOG"),
				 backlog);
}

static void run_swaps_while_feeding(enum pcm_async_mode mode, uint32_t bound)
{
	struct pcm_async *as = open_shell(mode, 2, bound);
	struct owner o[OWNERS];
	pthread_t th[OWNERS], sh;
	struct pcm_async_stats st;
	uint64_t swaps = 0;

	for (unsigned i = 0; i < OWNERS; i++) {
		o[i] = (struct owner){ .as = as, .id = i };
		for (unsigned k = 0; k < OWNED; k++)
			assert_int_equal(pcm_async_flow_add(as, k % 2,
							    k % 2 ? &pcm_pkg_dst_q : &pcm_pkg_dst_p,
							    0, &o[i].flows[k]),
					 0);
	}
	assert_int_equal(pcm_async_flow_add(as, 0, &pcm_pkg_dst_p, 0, &shared_flow), 0);
	atomic_store(&shared_acks, 0);
	atomic_store(&stop_shared, false);
	assert_int_equal(pcm_async_start(as), 0);
	assert_int_equal(pthread_create(&sh, NULL, shared_main, as), 0);
	for (unsigned i = 0; i < OWNERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, owner_main, &o[i]), 0);
	for (unsigned i = 0; i < OWNERS; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		if (o[i].failed)
			fail_msg("%s: owner %u: %s", pcm_async_mode_name(mode), i, o[i].why);
		swaps += o[i].swaps;
	}
	atomic_store(&stop_shared, true);
	assert_int_equal(pthread_join(sh, NULL), 0);
	pcm_async_stop(as);
	for (unsigned i = 0; i < OWNERS; i++)
		for (unsigned k = 0; k < OWNED; k++)
			check_conserved(as, o[i].flows[k], o[i].fed_acks[k], o[i].fed_backlog[k]);
	check_conserved(as, shared_flow, atomic_load(&shared_acks), UINT64_MAX);
	assert_int_equal(pcm_async_stats(as, ALL, &st), 0);
	if (mode == PCM_ASYNC_BOUNDED)
		assert_true(st.skew_max_accepted <= bound);
	if (mode == PCM_ASYNC_LOCKED)
		assert_int_equal(st.skew_max_accepted, 0);
	print_message("[ measure  ] %s: %llu swaps, %llu calls, %llu partial snapshots, "
		      "%llu settled, %llu deferrals\n",
		      pcm_async_mode_name(mode), (unsigned long long)swaps,
		      (unsigned long long)st.handler_calls, (unsigned long long)st.partial,
		      (unsigned long long)st.settled, (unsigned long long)st.deferrals);
	pcm_async_destroy(as);
}

static void test_swaps_every_few_events_lose_and_double_nothing(void **state)
{
	run_swaps_while_feeding(PCM_ASYNC_RELAXED, 0);
	run_swaps_while_feeding(PCM_ASYNC_LOCKED, 0);
	run_swaps_while_feeding(PCM_ASYNC_BOUNDED, 0);
	run_swaps_while_feeding(PCM_ASYNC_BOUNDED, 1);
}

/* ---- real threads: one hot flow, BOUNDED with bound 0 ------------------------------------- */

struct hot {
	struct pcm_async *as;
	uint32_t flow;
	uint64_t acks;
};

static void *hot_main(void *arg)
{
	struct hot *h = arg;

	for (uint64_t n = 0; n < 50000; n++) {
		struct pcm_event ev = { 0 };

		make_event(n, 7, &ev);
		h->acks += ev.values[PCM_SIG_ACK];
		pcm_async_feed(h->as, h->flow, &ev, n);
		if (n % 4096 == 0)
			sched_yield();
	}
	return NULL;
}

static void test_bounded_hot_flow_with_bound_zero_makes_progress(void **state)
{
	struct pcm_async *as = open_shell(PCM_ASYNC_BOUNDED, 1, 0);
	struct hot h[2];
	pthread_t th[2];
	struct pcm_async_stats st;
	uint32_t flow;

	assert_int_equal(pcm_async_flow_add(as, 0, &pcm_pkg_dst_p, 0, &flow), 0);
	assert_int_equal(pcm_async_start(as), 0);
	for (unsigned i = 0; i < 2; i++) {
		h[i] = (struct hot){ .as = as, .flow = flow };
		assert_int_equal(pthread_create(&th[i], NULL, hot_main, &h[i]), 0);
	}
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	pcm_async_stop(as);
	check_conserved(as, flow, h[0].acks + h[1].acks, UINT64_MAX);
	assert_int_equal(pcm_async_stats(as, ALL, &st), 0);
	assert_int_equal(st.skew_max_accepted, 0);
	/* a visit checks at most max_retries + 1 times, then comes back: never a retake storm */
	assert_true(st.retakes <= (uint64_t)(4 + 1) * st.wakeups);
	print_message("[ measure  ] hot flow, bound 0: %llu calls, %llu wakeups, %llu retakes, "
		      "%llu deferrals\n",
		      (unsigned long long)st.handler_calls, (unsigned long long)st.wakeups,
		      (unsigned long long)st.retakes, (unsigned long long)st.deferrals);
	pcm_async_destroy(as);
}

/* ---- real threads: a worker with nothing left to do ----------------------------------- */

/*
 * Busy flows stay in the pending set, so the worker must notice when they go
 * quiet: it takes them out and, with the set empty, blocks on its futex.
 *
 * The events are all fed before the worker starts, so each flow goes quiet
 * exactly once (fed while the worker runs, a feeder that is preempted lets a
 * flow settle and come back, and settled counts it twice). The wait is bounded
 * by the worker's own polls, not by wall time: a loaded machine only makes it
 * slower. A worker that never sleeps fails once it has polled its empty set
 * IDLE_POLLS_BEFORE_FAIL times its idle_spins over.
 */
#define IDLE_POLLS_BEFORE_FAIL 1000

static void test_an_idle_worker_empties_its_set_and_sleeps(void **state)
{
	struct pcm_async *as = open_shell(PCM_ASYNC_RELAXED, 1, 0);
	const struct timespec ms = { 0, 1000000 };
	pcm_uint v[PCM_SIG_COUNT] = { 0 };
	struct pcm_async_stats st;
	uint32_t f[8];

	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(pcm_async_flow_add(as, 0, &pcm_pkg_pair_probe, 0, &f[i]), 0);
	v[PCM_SIG_ACK] = 1;
	for (unsigned n = 0; n < 1000; n++)
		assert_true(feed(as, f[n % 8], BIT(PCM_SIG_ACK), v, n + 1) >= 0);
	assert_int_equal(pcm_async_start(as), 0);
	for (;;) {
		assert_int_equal(pcm_async_stats(as, ALL, &st), 0);
		if (st.sleeps > 0)
			break;
		if (st.idle_polls > (uint64_t)IDLE_POLLS_BEFORE_FAIL * IDLE_SPINS)
			fail_msg("%llu idle polls and no sleep: settled %llu, calls %llu",
				 (unsigned long long)st.idle_polls, (unsigned long long)st.settled,
				 (unsigned long long)st.handler_calls);
		nanosleep(&ms, NULL);
	}
	pcm_async_stop(as); /* joined: the counters below are final */
	assert_int_equal(pcm_async_stats(as, ALL, &st), 0);
	assert_int_equal(st.settled, 8);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(peek_var(as, f[i], "ACK_SEEN", 0), 125);
	pcm_async_destroy(as);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flows_run_on_the_worker_the_datapath_picks),
		cmocka_unit_test(test_removing_a_pending_flow_is_safe),
		cmocka_unit_test(test_reset_drops_the_old_state_and_keeps_the_handle),
		cmocka_unit_test(test_swap_hands_over_controls_and_unconsumed_samples),
		cmocka_unit_test(test_swap_lets_the_old_package_take_what_is_pending),
		cmocka_unit_test(test_controls_are_read_as_one_set),
		cmocka_unit_test(test_elapsed_time_is_zero_when_now_is_before_the_flow_started),
		cmocka_unit_test(test_million_flows_fit_and_report_bytes_per_flow),
		cmocka_unit_test(test_swaps_every_few_events_lose_and_double_nothing),
		cmocka_unit_test(test_bounded_hot_flow_with_bound_zero_makes_progress),
		cmocka_unit_test(test_an_idle_worker_empties_its_set_and_sleeps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
