// SPDX-License-Identifier: MIT
/*
 * test_shell.c - the synchronous shell and pcmc's generated pipeline:
 * accumulators with valid-mask semantics, saturating SUM, every trigger type
 * and operator, reset_upon_trigger, handler writes and re-arm, ELAPSED_TIME
 * timers (time going back), handler errors, controls; bursts over flows of
 * several packages against feeding each event; flows added, removed,
 * reused and far apart, memory that follows them; live swaps and their
 * handoff; a million flows; the flow-count limits.
 *
 * Drives the test packages in tests/data/pkg through the shell.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "probes.h"
#include "shell.h"
#include "target.h"

static struct pcm_shell *make_shell(const struct pcm_package *pkg, uint32_t flows)
{
	struct pcm_shell *sh = NULL;
	struct pcm_diag diag;

	assert_int_equal(pcm_shell_create(pkg, NULL, flows, 0, &sh, &diag), 0);
	return sh;
}

static pcm_uint var(struct pcm_shell *sh, uint32_t flow, const char *name, unsigned idx)
{
	const struct pcm_package *pkg = pcm_shell_flow_package(sh, flow);
	unsigned var_off = 2 + pkg->n_signals + pkg->n_controls;

	for (uint32_t i = 0; i < pkg->n_variables; i++)
		if (strcmp(pkg->variables[i].name, name) == 0)
			return pcm_shell_record(sh, flow)[var_off + pkg->variables[i].slot + idx];
	fail_msg("no variable %s", name);
	return 0;
}

static struct pcm_shell_stats stats_of(struct pcm_shell *sh)
{
	struct pcm_shell_stats st;

	pcm_shell_stats(sh, &st);
	return st;
}

static pcm_uint sig(struct pcm_shell *sh, uint32_t flow, unsigned i)
{
	return pcm_shell_record(sh, flow)[2 + i];
}

static void feed(struct pcm_shell *sh, uint32_t flow, pcm_uint valid, const pcm_uint *vals,
		 pcm_uint now, int expect)
{
	struct pcm_event ev = { .valid = valid };

	for (int t = 0; t < PCM_SIG_COUNT; t++)
		ev.values[t] = vals[t];
	assert_int_equal(pcm_shell_feed(sh, flow, &ev, now), expect);
}

static void test_sum_min_max_last_accumulate_between_calls(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_accum_probe, 2);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };

	v[PCM_SIG_ACK] = 1;
	v[PCM_SIG_RTT] = 500;
	v[PCM_SIG_DATA_TX] = 4096;
	feed(sh, 0, BIT(PCM_SIG_ACK) | BIT(PCM_SIG_RTT) | BIT(PCM_SIG_DATA_TX), v, 10, 0);
	v[PCM_SIG_RTT] = 300;
	feed(sh, 0, BIT(PCM_SIG_ACK) | BIT(PCM_SIG_RTT) | BIT(PCM_SIG_DATA_TX), v, 20, 0);
	v[PCM_SIG_RTT] = 900;
	feed(sh, 0, BIT(PCM_SIG_ACK) | BIT(PCM_SIG_RTT), v, 30, 0);
	v[PCM_SIG_ECN] = 1;
	feed(sh, 0, BIT(PCM_SIG_ECN), v, 40, 1);

	assert_int_equal(var(sh, 0, "CALLS", 0), 1);
	assert_int_equal(var(sh, 0, "SEEN", 0), 3);    /* SUM of ACKs */
	assert_int_equal(var(sh, 0, "SEEN", 1), 300);  /* MIN of RTT */
	assert_int_equal(var(sh, 0, "SEEN", 2), 900);  /* MAX of RTT */
	assert_int_equal(var(sh, 0, "SEEN", 3), 900);  /* LAST of RTT */
	assert_int_equal(var(sh, 0, "SEEN", 4), 8192); /* only valid DATA_TX counted */
	/* flow 1 untouched */
	assert_int_equal(var(sh, 1, "CALLS", 0), 0);
	pcm_shell_destroy(sh);
}

static void test_last_keeps_value_when_sample_not_valid(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_accum_probe, 1);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };

	v[PCM_SIG_RTT] = 777;
	feed(sh, 0, BIT(PCM_SIG_RTT), v, 1, 0);
	/* A later event with RTT = 0 in its values but not valid must not clobber it. */
	v[PCM_SIG_RTT] = 0;
	v[PCM_SIG_ECN] = 1;
	feed(sh, 0, BIT(PCM_SIG_ECN), v, 2, 1);
	assert_int_equal(var(sh, 0, "SEEN", 3), 777);
	/* reset_upon_trigger false: still there for the next call */
	feed(sh, 0, BIT(PCM_SIG_ECN), v, 3, 1);
	assert_int_equal(var(sh, 0, "SEEN", 3), 777);
	pcm_shell_destroy(sh);
}

static void test_consumed_signals_reset_after_call(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_accum_probe, 1);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };

	v[PCM_SIG_ACK] = 5;
	v[PCM_SIG_ECN] = 1;
	v[PCM_SIG_RTT] = 100;
	feed(sh, 0, BIT(PCM_SIG_ACK) | BIT(PCM_SIG_ECN) | BIT(PCM_SIG_RTT), v, 1, 1);
	assert_int_equal(var(sh, 0, "SEEN", 0), 5);
	/* SUM back to 0, MIN back to its initial UINT64_MAX, MAX back to 0 */
	assert_int_equal(sig(sh, 0, 0), 0);
	assert_true(sig(sh, 0, 1) == UINT64_MAX);
	assert_int_equal(sig(sh, 0, 2), 0);
	feed(sh, 0, BIT(PCM_SIG_ECN), v, 2, 1);
	assert_int_equal(var(sh, 0, "SEEN", 0), 0);
	assert_true(var(sh, 0, "SEEN", 1) == UINT64_MAX);
	/* the trigger signal itself was consumed, so nothing fires without new ECN */
	feed(sh, 0, BIT(PCM_SIG_ACK), v, 3, 0);
	pcm_shell_destroy(sh);
}

static void test_sum_saturates_instead_of_wrapping(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_accum_probe, 1);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };

	v[PCM_SIG_DATA_TX] = UINT64_MAX - 10;
	feed(sh, 0, BIT(PCM_SIG_DATA_TX), v, 1, 0);
	v[PCM_SIG_DATA_TX] = 100;
	feed(sh, 0, BIT(PCM_SIG_DATA_TX), v, 2, 0);
	assert_true(sig(sh, 0, 4) == UINT64_MAX);
	pcm_shell_destroy(sh);
}

static void test_controls_initialised_and_written_by_handler(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_accum_probe, 3);
	pcm_uint v[PCM_SIG_COUNT] = { 0 }, out = 0;

	assert_int_equal(pcm_shell_control(sh, 2, PCM_CTRL_CWND, &out), 0);
	assert_int_equal(out, 7);
	v[PCM_SIG_ECN] = 1;
	feed(sh, 2, BIT(PCM_SIG_ECN), v, 1, 1);
	assert_int_equal(pcm_shell_control(sh, 2, PCM_CTRL_CWND, &out), 0);
	assert_int_equal(out, 8);
	assert_int_equal(pcm_shell_control(sh, 2, PCM_CTRL_RATE, &out), -ENOENT);
	assert_int_equal(pcm_shell_control(sh, 3, PCM_CTRL_CWND, &out), -ENOENT);
	assert_int_equal(pcm_shell_flow_reset(sh, 2, 5), 0);
	assert_int_equal(pcm_shell_control(sh, 2, PCM_CTRL_CWND, &out), 0);
	assert_int_equal(out, 7);
	pcm_shell_destroy(sh);
}

/* Trigger signal order in trigger_probe.yaml. */
enum { T_GT, T_LT, T_GE, T_LE, T_EQ, T_NE, T_BAND, T_BOR, T_BXOR, T_LAND, T_LOR, T_DELTA, T_MAG };

static pcm_uint raw_mask_for(pcm_uint x)
{
	const pcm_uint t = 5;
	pcm_uint m = 0;

	m |= (pcm_uint)(x > t) << T_GT;
	m |= (pcm_uint)(x < t) << T_LT;
	m |= (pcm_uint)(x >= t) << T_GE;
	m |= (pcm_uint)(x <= t) << T_LE;
	m |= (pcm_uint)(x == t) << T_EQ;
	m |= (pcm_uint)(x != t) << T_NE;
	m |= (pcm_uint)((x & t) != 0) << T_BAND;
	m |= (pcm_uint)((x | t) != 0) << T_BOR;
	m |= (pcm_uint)((x ^ t) != 0) << T_BXOR;
	m |= (pcm_uint)(x != 0 && t != 0) << T_LAND;
	m |= (pcm_uint)(x != 0 || t != 0) << T_LOR;
	return m;
}

static void test_every_raw_operator_compares_against_threshold(void **state)
{
	static const pcm_uint samples[] = { 0, 1, 2, 4, 5, 6, 7, 8, 10, 1000 };
	struct pcm_shell *sh = make_shell(&pcm_pkg_trigger_probe, 1);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };

	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		pcm_uint calls = var(sh, 0, "CALLS", 0);

		v[PCM_SIG_IN_FLIGHT] = samples[i];
		feed(sh, 0, BIT(PCM_SIG_IN_FLIGHT), v, i + 1, 1);
		assert_int_equal(var(sh, 0, "CALLS", 0), calls + 1);
		assert_int_equal(var(sh, 0, "LAST_MASK", 0), raw_mask_for(samples[i]));
	}
	pcm_shell_destroy(sh);
}

static void test_delta_trigger_fires_on_growth_since_last_fire(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_trigger_probe, 1);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };

	v[PCM_SIG_IN_FLIGHT] = 0; /* raw triggers: LT, LE, NE, BOR, BXOR, LOR fire on 0 */
	v[PCM_SIG_DATA_TX] = 4;
	feed(sh, 0, BIT(PCM_SIG_DATA_TX), v, 1, 1);
	assert_false(var(sh, 0, "LAST_MASK", 0) & BIT(T_DELTA)); /* 4 < 10 */
	feed(sh, 0, BIT(PCM_SIG_DATA_TX), v, 2, 1);
	feed(sh, 0, BIT(PCM_SIG_DATA_TX), v, 3, 1);
	assert_true(var(sh, 0, "LAST_MASK", 0) & BIT(T_DELTA)); /* 12 - 0 >= 10 */
	feed(sh, 0, BIT(PCM_SIG_DATA_TX), v, 4, 1);
	assert_false(var(sh, 0, "LAST_MASK", 0) & BIT(T_DELTA)); /* 16 - 12 */
	feed(sh, 0, BIT(PCM_SIG_DATA_TX), v, 5, 1);
	feed(sh, 0, BIT(PCM_SIG_DATA_TX), v, 6, 1);
	assert_true(var(sh, 0, "LAST_MASK", 0) & BIT(T_DELTA)); /* 24 - 12 */
	pcm_shell_destroy(sh);
}

static void test_magnitude_trigger_fires_on_change_either_way(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_trigger_probe, 1);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };

	v[PCM_SIG_RTT] = 1050; /* initial/reference 1000: |50| < 100 */
	feed(sh, 0, BIT(PCM_SIG_RTT), v, 1, 1);
	assert_false(var(sh, 0, "LAST_MASK", 0) & BIT(T_MAG));
	v[PCM_SIG_RTT] = 880; /* |880 - 1000| = 120 */
	feed(sh, 0, BIT(PCM_SIG_RTT), v, 2, 1);
	assert_true(var(sh, 0, "LAST_MASK", 0) & BIT(T_MAG));
	v[PCM_SIG_RTT] = 960; /* |960 - 880| = 80 */
	feed(sh, 0, BIT(PCM_SIG_RTT), v, 3, 1);
	assert_false(var(sh, 0, "LAST_MASK", 0) & BIT(T_MAG));
	v[PCM_SIG_RTT] = 990; /* |990 - 880| = 110 */
	feed(sh, 0, BIT(PCM_SIG_RTT), v, 4, 1);
	assert_true(var(sh, 0, "LAST_MASK", 0) & BIT(T_MAG));
	pcm_shell_destroy(sh);
}

enum { W_BACKLOG, W_KEEP, W_CONSUMED, W_TIMER, W_COMMAND };

static void test_handler_update_signal_is_written_back(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_writer_probe, 1);
	pcm_uint v[PCM_SIG_COUNT] = { 0 }, ev_out = 0;

	v[PCM_SIG_ECN] = 1; /* command: consume one backlog packet per call */
	v[PCM_SIG_TX_READY_PKTS] = 3;
	feed(sh, 0, BIT(PCM_SIG_ECN) | BIT(PCM_SIG_TX_READY_PKTS), v, 10, 1);
	assert_int_equal(sig(sh, 0, W_BACKLOG), 2);
	feed(sh, 0, 0, v, 20, 1);
	feed(sh, 0, 0, v, 30, 1);
	assert_int_equal(sig(sh, 0, W_BACKLOG), 0);
	/* backlog empty: the RAW >= 1 trigger no longer fires */
	feed(sh, 0, 0, v, 40, 0);
	assert_int_equal(pcm_shell_control(sh, 0, PCM_CTRL_EV, &ev_out), 0);
	assert_int_equal(ev_out, 3);
	pcm_shell_destroy(sh);
}

static void test_rearm_resets_a_kept_signal(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_writer_probe, 1);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };

	v[PCM_SIG_ACK] = 4;
	v[PCM_SIG_TX_READY_PKTS] = 1;
	feed(sh, 0, BIT(PCM_SIG_ACK) | BIT(PCM_SIG_TX_READY_PKTS), v, 10, 1);
	feed(sh, 0, BIT(PCM_SIG_ACK), v, 20, 1);
	assert_int_equal(sig(sh, 0, W_KEEP), 8); /* reset_upon_trigger false: kept */
	v[PCM_SIG_ECN] = 2;                      /* command: re-arm KEEP */
	feed(sh, 0, BIT(PCM_SIG_ECN), v, 30, 1);
	assert_int_equal(var(sh, 0, "SEEN_KEEP", 0), 8);
	assert_int_equal(sig(sh, 0, W_KEEP), 0);
	pcm_shell_destroy(sh);
}

static void test_handler_set_overrides_reset_of_consumed_signal(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_writer_probe, 1);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };

	v[PCM_SIG_TX_READY_PKTS] = 1;
	v[PCM_SIG_NACK] = 2;
	feed(sh, 0, BIT(PCM_SIG_NACK) | BIT(PCM_SIG_TX_READY_PKTS), v, 10, 1);
	assert_int_equal(var(sh, 0, "SEEN_CONSUMED", 0), 2);
	assert_int_equal(sig(sh, 0, W_CONSUMED), 0); /* consumed and reset */
	v[PCM_SIG_ECN] = 3;                           /* command: CONSUMED = 42 */
	feed(sh, 0, BIT(PCM_SIG_ECN) | BIT(PCM_SIG_NACK), v, 20, 1);
	assert_int_equal(sig(sh, 0, W_CONSUMED), 42); /* written, so not reset */
	pcm_shell_destroy(sh);
}

static void test_elapsed_time_timer_fires_on_tick_without_traffic(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_writer_probe, 1);

	assert_int_equal(pcm_shell_tick(sh, 0, 999999), 0);
	assert_int_equal(pcm_shell_tick(sh, 0, 1000000), 1);
	assert_int_equal(var(sh, 0, "TIMER_FIRES", 0), 1);
	/* the clock is not restarted by consumption (SDK); the DELTA reference moved to 1000000 */
	assert_int_equal(sig(sh, 0, W_TIMER), 1000000);
	assert_int_equal(pcm_shell_tick(sh, 0, 1999999), 0);
	assert_int_equal(pcm_shell_tick(sh, 0, 2000000), 1);
	assert_int_equal(var(sh, 0, "TIMER_FIRES", 0), 2);
	pcm_shell_destroy(sh);
}

/*
 * ELAPSED_TIME as the PCM SDK defines it (include/pcm_vm.hpp): the time since
 * the flow started, which consuming it does not restart; its DELTA trigger
 * compares with the value at its last fire. PCM_SIG_REARM moves that
 * reference to now.
 */
static void test_elapsed_time_is_time_since_flow_start_as_in_the_sdk(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_writer_probe, 1);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };

	assert_int_equal(pcm_shell_tick(sh, 0, 1000000), 1);
	/* a call for another trigger (BACKLOG, which the handler drains) consumes TIMER */
	v[PCM_SIG_TX_READY_PKTS] = 1;
	v[PCM_SIG_ECN] = 1;
	feed(sh, 0, BIT(PCM_SIG_ECN) | BIT(PCM_SIG_TX_READY_PKTS), v, 1500000, 1);
	assert_int_equal(var(sh, 0, "SEEN_TIMER", 0), 1500000); /* not 500000 */
	assert_int_equal(var(sh, 0, "TIMER_FIRES", 0), 1);
	/* ... which does not restart it: the next fire is a period after the last one */
	assert_int_equal(pcm_shell_tick(sh, 0, 1999999), 0);
	assert_int_equal(pcm_shell_tick(sh, 0, 2000000), 1);
	assert_int_equal(var(sh, 0, "TIMER_FIRES", 0), 2);
	assert_int_equal(var(sh, 0, "SEEN_TIMER", 0), 2000000);
	/* re-armed at 2.5 ms: the period restarts there, so 3 ms does not fire, 3.5 ms does */
	v[PCM_SIG_ECN] = 5;
	feed(sh, 0, BIT(PCM_SIG_ECN) | BIT(PCM_SIG_TX_READY_PKTS), v, 2500000, 1);
	assert_int_equal(var(sh, 0, "TIMER_FIRES", 0), 2);
	assert_int_equal(pcm_shell_tick(sh, 0, 3000000), 0);
	assert_int_equal(pcm_shell_tick(sh, 0, 3500000), 1);
	assert_int_equal(var(sh, 0, "TIMER_FIRES", 0), 3);
	assert_int_equal(var(sh, 0, "SEEN_TIMER", 0), 3500000);
	/* a handler's write does not change the clock (the SDK recomputes it) */
	v[PCM_SIG_ECN] = 3;
	feed(sh, 0, BIT(PCM_SIG_ECN) | BIT(PCM_SIG_TX_READY_PKTS), v, 4000000, 1);
	assert_int_equal(sig(sh, 0, W_TIMER), 4000000);
	pcm_shell_destroy(sh);
}

static void test_handler_error_is_reported_and_counted(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_writer_probe, 1);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };

	v[PCM_SIG_ECN] = 4;
	v[PCM_SIG_TX_READY_PKTS] = 1;
	feed(sh, 0, BIT(PCM_SIG_ECN) | BIT(PCM_SIG_TX_READY_PKTS), v, 1, -EIO);
	assert_int_equal(stats_of(sh).handler_errors, 1);
	assert_int_equal(stats_of(sh).handler_calls, 1);
	assert_int_equal(var(sh, 0, "CALLS", 0), 1);
	pcm_shell_destroy(sh);
}

static void test_unknown_flow_is_rejected(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_accum_probe, 4);
	struct pcm_event ev = { 0 };

	assert_int_equal(pcm_shell_feed(sh, 4, &ev, 0), -ENOENT);
	assert_int_equal(pcm_shell_tick(sh, 100, 0), -ENOENT);
	assert_int_equal(stats_of(sh).handler_calls, 0);
	pcm_shell_destroy(sh);
}

/* @n ECN events, round robin over flows 0 .. @flows - 1, at now = 1, 2, ... */
static void fill_burst(struct pcm_flow_event *evs, int n, uint32_t flows)
{
	for (int i = 0; i < n; i++) {
		evs[i].flow = (uint32_t)i % flows;
		evs[i].now_ps = (pcm_uint)i + 1;
		evs[i].ev.valid = BIT(PCM_SIG_ECN);
		evs[i].ev.values[PCM_SIG_ECN] = 1;
	}
}

static void test_burst_feeds_each_flow_and_stops_at_unknown_flow(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_accum_probe, 3);
	struct pcm_flow_event evs[5] = { 0 };
	pcm_uint out;

	fill_burst(evs, 5, 3);
	evs[3].flow = 7; /* unknown: evs[3] and evs[4] are not fed */
	assert_int_equal(pcm_shell_feed_burst(sh, evs, 5), 3);
	assert_int_equal(stats_of(sh).handler_calls, 3);
	for (uint32_t f = 0; f < 3; f++) {
		assert_int_equal(pcm_shell_control(sh, f, PCM_CTRL_CWND, &out), 0);
		assert_int_equal(out, 8);
	}
	assert_int_equal(pcm_shell_feed_burst(sh, evs + 4, 1), 1);
	assert_int_equal(pcm_shell_control(sh, 1, PCM_CTRL_CWND, &out), 0);
	assert_int_equal(out, 9);
	pcm_shell_destroy(sh);
}

/*
 * A burst longer than the prefetch distance: a stop in the part that fetches
 * ahead, and an out-of-range handle that is fetched (ahead) before it is
 * reached, feed exactly the events before them.
 */
static void test_long_burst_stops_exactly_at_unknown_flow(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_accum_probe, 3);
	struct pcm_flow_event evs[12] = { 0 };
	pcm_uint out;

	fill_burst(evs, 12, 3);
	evs[9].flow = UINT32_MAX;
	assert_int_equal(pcm_shell_feed_burst(sh, evs, 12), 9);
	assert_int_equal(stats_of(sh).handler_calls, 9);
	for (uint32_t f = 0; f < 3; f++) {
		assert_int_equal(pcm_shell_control(sh, f, PCM_CTRL_CWND, &out), 0);
		assert_int_equal(out, 10);
	}
	evs[1].flow = 7;
	assert_int_equal(pcm_shell_feed_burst(sh, evs, 12), 1);
	assert_int_equal(stats_of(sh).handler_calls, 10);
	assert_int_equal(pcm_shell_control(sh, 0, PCM_CTRL_CWND, &out), 0);
	assert_int_equal(out, 11);
	pcm_shell_destroy(sh);
}

/* Three packages, flow f running the one of (f / 2) % 3: runs of two flows per package. */
static struct pcm_shell *mixed_shell(uint32_t flows)
{
	const struct pcm_package *pkgs[] = { &pcm_pkg_accum_probe, &pcm_pkg_pair_probe,
					     &pcm_pkg_writer_probe };
	struct pcm_shell_config cfg = { .packages = pkgs, .n_packages = 3, .max_flows = flows };
	struct pcm_shell *sh = NULL;
	struct pcm_diag diag;

	assert_int_equal(pcm_shell_create_cfg(&cfg, &sh, &diag), 0);
	for (uint32_t f = 0; f < flows; f++)
		assert_int_equal(pcm_shell_flow_add_at(sh, f, pkgs[(f / 2) % 3], 0), 0);
	return sh;
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A random event for a random flow: small values, any subset of a few signal types. */
static void random_flow_event(uint64_t *seed, uint32_t flows, pcm_uint now,
			      struct pcm_flow_event *e)
{
	static const int types[] = { PCM_SIG_ACK, PCM_SIG_ECN, PCM_SIG_RTT, PCM_SIG_DATA_TX,
				     PCM_SIG_TX_READY_PKTS, PCM_SIG_NACK };
	uint64_t r = next_rand(seed);

	memset(e, 0, sizeof(*e));
	e->flow = (uint32_t)(r % flows);
	e->now_ps = now;
	for (unsigned k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
		r = next_rand(seed);
		if (r & 1) {
			e->ev.valid |= BIT(types[k]);
			/* ECN carries writer_probe's COMMAND: 0..5, 4 is an error */
			e->ev.values[types[k]] = (r >> 8) % (types[k] == PCM_SIG_ECN ? 6 : 5000);
		}
	}
}

/*
 * Bursts of random length over flows of three packages (runs of every
 * length, each one call into a package's feed_burst()) leave every record,
 * call count and error count as feeding the same events one by one does.
 */
static void test_burst_over_several_packages_equals_feeding_each_event(void **state)
{
	enum { FLOWS = 12, EVENTS = 4000 };
	struct pcm_shell *bursts = mixed_shell(FLOWS), *each = mixed_shell(FLOWS);
	static struct pcm_flow_event evs[EVENTS];
	uint64_t seed = 0x5eed5eedULL;
	uint32_t done = 0;

	for (uint32_t i = 0; i < EVENTS; i++)
		random_flow_event(&seed, FLOWS, 1000 * ((pcm_uint)i + 1), &evs[i]);
	while (done < EVENTS) {
		uint32_t n = 1 + (uint32_t)(next_rand(&seed) % 40);

		if (n > EVENTS - done)
			n = EVENTS - done;
		assert_int_equal(pcm_shell_feed_burst(bursts, evs + done, n), n);
		done += n;
	}
	for (uint32_t i = 0; i < EVENTS; i++)
		pcm_shell_feed(each, evs[i].flow, &evs[i].ev, evs[i].now_ps);
	assert_true(stats_of(each).handler_errors > 0);
	assert_int_equal(stats_of(bursts).handler_calls, stats_of(each).handler_calls);
	assert_int_equal(stats_of(bursts).handler_errors, stats_of(each).handler_errors);
	for (uint32_t f = 0; f < FLOWS; f++) {
		const struct pcm_package *pkg = pcm_shell_flow_package(each, f);
		struct pcm_control_set a, b;

		assert_memory_equal(pcm_shell_record(bursts, f), pcm_shell_record(each, f),
				    pkg->record_slots * sizeof(pcm_uint));
		assert_int_equal(pcm_shell_controls(bursts, f, &a), 0);
		assert_int_equal(pcm_shell_controls(each, f, &b), 0);
		assert_int_equal(a.seq, b.seq);
	}
	pcm_shell_destroy(bursts);
	pcm_shell_destroy(each);
}

static void test_flow_count_limits(void **state)
{
	struct pcm_shell *sh = NULL;
	struct pcm_diag diag;

	assert_int_equal(pcm_shell_create(&pcm_pkg_accum_probe, NULL, 0, 0, &sh, &diag), -EINVAL);
	assert_non_null(strstr(diag.msg, "flow count"));
	assert_int_equal(pcm_shell_create(&pcm_pkg_accum_probe, NULL, PCM_SHELL_MAX_FLOWS + 1, 0,
					  &sh, &diag),
			 -EINVAL);
	assert_null(sh);
}

static void test_million_flows_fit_and_report_bytes_per_flow(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_accum_probe, 1000000);
	pcm_uint v[PCM_SIG_COUNT] = { 0 }, out;

	print_message("accum_probe: %zu bytes per flow, %zu MiB for 1M flows\n",
		      pcm_shell_bytes_per_flow(sh), pcm_shell_bytes(sh) >> 20);
	assert_true(pcm_shell_bytes_per_flow(sh) >=
		    pcm_shell_flow_package(sh, 0)->record_slots * sizeof(pcm_uint));
	v[PCM_SIG_ECN] = 1;
	feed(sh, 999999, BIT(PCM_SIG_ECN), v, 1, 1);
	assert_int_equal(pcm_shell_control(sh, 999999, PCM_CTRL_CWND, &out), 0);
	assert_int_equal(out, 8);
	pcm_shell_destroy(sh);
}

static void test_shell_rejects_package_missing_target_capability(void **state)
{
	struct pcm_shell *sh = NULL;
	struct pcm_diag diag;

	/* writer_probe needs PCM_SIG_TX_READY_PKTS, which the doca target lacks */
	assert_int_equal(pcm_shell_create(&pcm_pkg_writer_probe, pcm_target_find("doca"), 1, 0,
					  &sh, &diag),
			 -ENOTSUP);
	assert_null(sh);
	assert_non_null(strstr(diag.msg, "PCM_SIG_TX_READY_PKTS"));
	assert_non_null(strstr(diag.msg, "BACKLOG"));
	assert_non_null(strstr(diag.msg, "PCM_CTRL_EV"));
}

/* Time going back: ELAPSED_TIME is 0, not 2^64 - 1000 (the two shells used to disagree). */
static void test_elapsed_time_is_zero_when_now_is_before_the_flow_started(void **state)
{
	struct pcm_shell *sh = NULL;
	struct pcm_diag diag;

	assert_int_equal(pcm_shell_create(&pcm_pkg_writer_probe, NULL, 1, 5000, &sh, &diag), 0);
	assert_int_equal(pcm_shell_tick(sh, 0, 4000), 0);
	assert_int_equal(sig(sh, 0, W_TIMER), 0);
	assert_int_equal(pcm_shell_tick(sh, 0, 1005000), 1);
	pcm_shell_destroy(sh);
}

static struct pcm_shell *empty_shell(uint32_t max_flows)
{
	const struct pcm_package *pkgs[] = { &pcm_pkg_accum_probe, &pcm_pkg_pair_probe };
	struct pcm_shell_config cfg = { .packages = pkgs, .n_packages = 2, .max_flows = max_flows };
	struct pcm_shell *sh = NULL;
	struct pcm_diag diag;

	assert_int_equal(pcm_shell_create_cfg(&cfg, &sh, &diag), 0);
	return sh;
}

static void test_flows_are_added_removed_and_reused_at_run_time(void **state)
{
	struct pcm_shell *sh = empty_shell(1024);
	pcm_uint v[PCM_SIG_COUNT] = { 0 }, out;
	uint32_t a, b, c;

	assert_int_equal(stats_of(sh).flows, 0);
	assert_int_equal(pcm_shell_flow_add(sh, &pcm_pkg_accum_probe, 0, &a), 0);
	assert_int_equal(pcm_shell_flow_add(sh, &pcm_pkg_pair_probe, 0, &b), 0);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_ptr_equal(pcm_shell_flow_package(sh, b), &pcm_pkg_pair_probe);
	v[PCM_SIG_ECN] = 1;
	feed(sh, a, BIT(PCM_SIG_ECN), v, 1, 1);
	assert_int_equal(pcm_shell_control(sh, a, PCM_CTRL_CWND, &out), 0);
	assert_int_equal(out, 8);
	assert_int_equal(pcm_shell_flow_remove(sh, a), 0);
	assert_int_equal(pcm_shell_flow_remove(sh, a), -ENOENT);
	feed(sh, a, BIT(PCM_SIG_ECN), v, 2, -ENOENT);
	assert_int_equal(pcm_shell_control(sh, a, PCM_CTRL_CWND, &out), -ENOENT);
	/* the handle is free again, and the new flow starts from scratch */
	assert_int_equal(pcm_shell_flow_add(sh, &pcm_pkg_accum_probe, 0, &c), 0);
	assert_int_equal(c, a);
	assert_int_equal(pcm_shell_control(sh, c, PCM_CTRL_CWND, &out), 0);
	assert_int_equal(out, 7);
	assert_int_equal(var(sh, c, "CALLS", 0), 0);
	/* the removed flow's call is still counted */
	assert_int_equal(stats_of(sh).handler_calls, 1);
	assert_int_equal(stats_of(sh).flows, 2);
	assert_int_equal(pcm_shell_flow_add_at(sh, b, &pcm_pkg_accum_probe, 0), -EEXIST);
	assert_int_equal(pcm_shell_flow_add_at(sh, 1024, &pcm_pkg_accum_probe, 0), -ERANGE);
	/* a package the shell was not given is added on the fly, if its record fits */
	if (pcm_pkg_writer_probe.record_slots <= pcm_pkg_pair_probe.record_slots) {
		assert_int_equal(pcm_shell_flow_add(sh, &pcm_pkg_writer_probe, 0, &c), 0);
		assert_ptr_equal(pcm_shell_flow_package(sh, c), &pcm_pkg_writer_probe);
	}
	pcm_shell_destroy(sh);
}

static void test_far_apart_handles_need_no_memory_in_between(void **state)
{
	struct pcm_shell *sh = empty_shell(1u << 24);
	pcm_uint v[PCM_SIG_COUNT] = { 0 };
	size_t empty = pcm_shell_bytes(sh), two;

	assert_int_equal(pcm_shell_flow_add_at(sh, 3, &pcm_pkg_accum_probe, 0), 0);
	assert_int_equal(pcm_shell_flow_add_at(sh, 15000000, &pcm_pkg_accum_probe, 0), 0);
	two = pcm_shell_bytes(sh) - empty;
	print_message("two flows 15M handles apart: %zu bytes\n", two);
	assert_true(two <= 2 * PCM_FLOWTAB_CHUNK_FLOWS * pcm_shell_bytes_per_flow(sh) + 1024);
	v[PCM_SIG_ECN] = 1;
	feed(sh, 15000000, BIT(PCM_SIG_ECN), v, 1, 1);
	feed(sh, 14999999, BIT(PCM_SIG_ECN), v, 1, -ENOENT);
	pcm_shell_destroy(sh);
}

static void test_memory_follows_the_flows_in_chunk_steps(void **state)
{
	struct pcm_shell *sh = empty_shell(1u << 20);
	size_t empty = pcm_shell_bytes(sh), full, step = 0;
	uint32_t f;

	for (uint32_t i = 0; i < 10000; i++) {
		size_t before = pcm_shell_bytes(sh);

		assert_int_equal(pcm_shell_flow_add(sh, &pcm_pkg_accum_probe, 0, &f), 0);
		if (pcm_shell_bytes(sh) != before) {
			/* every step is one chunk */
			assert_true(step == 0 || pcm_shell_bytes(sh) - before == step);
			step = pcm_shell_bytes(sh) - before;
		}
	}
	full = pcm_shell_bytes(sh);
	for (uint32_t i = 0; i < 10000; i++)
		assert_int_equal(pcm_shell_flow_remove(sh, i), 0);
	print_message("10000 flows: %zu KiB, in steps of %zu KiB; empty again: %zu KiB\n",
		      (full - empty) >> 10, step >> 10, (pcm_shell_bytes(sh) - empty) >> 10);
	assert_int_equal(pcm_shell_bytes(sh), empty);
	assert_int_equal(stats_of(sh).flows, 0);
	pcm_shell_destroy(sh);
}

/* pair_probe (P) to accum_probe (Q): both drive CWND; DATA_TX is a SUM in both. */
static void test_swap_hands_over_controls_and_unconsumed_samples(void **state)
{
	struct pcm_shell *sh = empty_shell(16);
	pcm_uint v[PCM_SIG_COUNT] = { 0 }, out;
	uint32_t f;

	assert_int_equal(pcm_shell_flow_add(sh, &pcm_pkg_pair_probe, 0, &f), 0);
	v[PCM_SIG_ACK] = 1;
	v[PCM_SIG_DATA_TX] = 4096;
	feed(sh, f, BIT(PCM_SIG_ACK) | BIT(PCM_SIG_DATA_TX), v, 1, 1);
	feed(sh, f, BIT(PCM_SIG_ACK) | BIT(PCM_SIG_DATA_TX), v, 2, 1);
	/* bytes without an ACK: pair_probe's BYTES has no trigger, so they wait */
	v[PCM_SIG_DATA_TX] = 1000;
	feed(sh, f, BIT(PCM_SIG_DATA_TX), v, 3, 0);
	feed(sh, f, BIT(PCM_SIG_DATA_TX), v, 4, 0);
	assert_int_equal(pcm_shell_control(sh, f, PCM_CTRL_CWND, &out), 0);
	assert_int_equal(out, 2); /* pair_probe counts its calls in OUT */

	assert_int_equal(pcm_shell_flow_swap(sh, f, &pcm_pkg_accum_probe, 5), 0);
	assert_ptr_equal(pcm_shell_flow_package(sh, f), &pcm_pkg_accum_probe);
	/* CWND both drive: the flow's value, not accum_probe's initial 7 */
	assert_int_equal(pcm_shell_control(sh, f, PCM_CTRL_CWND, &out), 0);
	assert_int_equal(out, 2);
	/* the 2000 bytes pair_probe had not consumed reach accum_probe's S_BYTES */
	assert_int_equal(sig(sh, f, 4), 2000);
	/* accum_probe's own state starts from its initial values */
	assert_int_equal(var(sh, f, "CALLS", 0), 0);
	assert_true(sig(sh, f, 1) == UINT64_MAX);
	v[PCM_SIG_ECN] = 1;
	v[PCM_SIG_DATA_TX] = 96;
	feed(sh, f, BIT(PCM_SIG_ECN) | BIT(PCM_SIG_DATA_TX), v, 6, 1);
	assert_int_equal(var(sh, f, "SEEN", 4), 2096);
	assert_int_equal(pcm_shell_control(sh, f, PCM_CTRL_CWND, &out), 0);
	assert_int_equal(out, 3);
	/* and back: the flow keeps its handle and its count of calls */
	assert_int_equal(pcm_shell_flow_swap(sh, f, &pcm_pkg_pair_probe, 7), 0);
	assert_int_equal(pcm_shell_control(sh, f, PCM_CTRL_CWND, &out), 0);
	assert_int_equal(out, 3);
	assert_int_equal(stats_of(sh).handler_calls, 3);
	assert_int_equal(pcm_shell_flow_swap(sh, 9, &pcm_pkg_pair_probe, 7), -ENOENT);
	pcm_shell_destroy(sh);
}

static void test_package_larger_than_the_reserved_record_is_refused(void **state)
{
	const struct pcm_package *pkgs[] = { &pcm_pkg_trigger_probe };
	struct pcm_shell_config cfg = { .packages = pkgs, .n_packages = 1, .max_flows = 4 };
	struct pcm_shell *sh = NULL;
	struct pcm_diag diag;
	uint32_t f;

	assert_int_equal(pcm_shell_create_cfg(&cfg, &sh, &diag), 0);
	if (pcm_pkg_accum_probe.record_slots > pcm_pkg_trigger_probe.record_slots) {
		assert_int_equal(pcm_shell_package_add(sh, &pcm_pkg_accum_probe, &diag), -E2BIG);
		assert_non_null(strstr(diag.msg, "accum_probe"));
		assert_int_equal(pcm_shell_flow_add(sh, &pcm_pkg_accum_probe, 0, &f), -E2BIG);
	}
	assert_int_equal(pcm_shell_flow_add(sh, &pcm_pkg_trigger_probe, 0, &f), 0);
	pcm_shell_destroy(sh);
	cfg.record_slots = 4096;
	assert_int_equal(pcm_shell_create_cfg(&cfg, &sh, &diag), 0);
	assert_int_equal(pcm_shell_flow_add(sh, &pcm_pkg_accum_probe, 0, &f), 0);
	pcm_shell_destroy(sh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sum_min_max_last_accumulate_between_calls),
		cmocka_unit_test(test_last_keeps_value_when_sample_not_valid),
		cmocka_unit_test(test_consumed_signals_reset_after_call),
		cmocka_unit_test(test_sum_saturates_instead_of_wrapping),
		cmocka_unit_test(test_controls_initialised_and_written_by_handler),
		cmocka_unit_test(test_every_raw_operator_compares_against_threshold),
		cmocka_unit_test(test_delta_trigger_fires_on_growth_since_last_fire),
		cmocka_unit_test(test_magnitude_trigger_fires_on_change_either_way),
		cmocka_unit_test(test_handler_update_signal_is_written_back),
		cmocka_unit_test(test_rearm_resets_a_kept_signal),
		cmocka_unit_test(test_handler_set_overrides_reset_of_consumed_signal),
		cmocka_unit_test(test_elapsed_time_timer_fires_on_tick_without_traffic),
		cmocka_unit_test(test_elapsed_time_is_time_since_flow_start_as_in_the_sdk),
		cmocka_unit_test(test_handler_error_is_reported_and_counted),
		cmocka_unit_test(test_unknown_flow_is_rejected),
		cmocka_unit_test(test_burst_feeds_each_flow_and_stops_at_unknown_flow),
		cmocka_unit_test(test_long_burst_stops_exactly_at_unknown_flow),
		cmocka_unit_test(test_burst_over_several_packages_equals_feeding_each_event),
		cmocka_unit_test(test_flow_count_limits),
		cmocka_unit_test(test_million_flows_fit_and_report_bytes_per_flow),
		cmocka_unit_test(test_shell_rejects_package_missing_target_capability),
		cmocka_unit_test(test_elapsed_time_is_zero_when_now_is_before_the_flow_started),
		cmocka_unit_test(test_flows_are_added_removed_and_reused_at_run_time),
		cmocka_unit_test(test_far_apart_handles_need_no_memory_in_between),
		cmocka_unit_test(test_memory_follows_the_flows_in_chunk_steps),
		cmocka_unit_test(test_swap_hands_over_controls_and_unconsumed_samples),
		cmocka_unit_test(test_package_larger_than_the_reserved_record_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
