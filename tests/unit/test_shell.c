// SPDX-License-Identifier: MIT
/*
 * test_shell.c - the synchronous shell and pcmc's generated pipeline:
 * accumulators with valid-mask semantics, saturating SUM, every trigger type
 * and operator, reset_upon_trigger, handler writes and re-arm, ELAPSED_TIME
 * timers, handler errors, controls, and the flow-count limits.
 *
 * Drives the test packages in tests/data/pkg through the shell.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "shell.h"
#include "target.h"

extern const struct pcm_package pcm_pkg_accum_probe;
extern const struct pcm_package pcm_pkg_trigger_probe;
extern const struct pcm_package pcm_pkg_writer_probe;

#define BIT(t) ((pcm_uint)1 << (t))

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
	/* consumed: the epoch moved to 1000000 */
	assert_int_equal(sig(sh, 0, W_TIMER), 0);
	assert_int_equal(pcm_shell_tick(sh, 0, 1999999), 0);
	assert_int_equal(pcm_shell_tick(sh, 0, 2000000), 1);
	assert_int_equal(var(sh, 0, "TIMER_FIRES", 0), 2);
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

static void test_burst_feeds_each_flow_and_stops_at_unknown_flow(void **state)
{
	struct pcm_shell *sh = make_shell(&pcm_pkg_accum_probe, 3);
	struct pcm_flow_event evs[5] = { 0 };
	pcm_uint out;

	for (int i = 0; i < 5; i++) {
		evs[i].flow = (uint32_t)(i % 3);
		evs[i].now_ps = (pcm_uint)i + 1;
		evs[i].ev.valid = BIT(PCM_SIG_ECN);
		evs[i].ev.values[PCM_SIG_ECN] = 1;
	}
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
		cmocka_unit_test(test_handler_error_is_reported_and_counted),
		cmocka_unit_test(test_unknown_flow_is_rejected),
		cmocka_unit_test(test_burst_feeds_each_flow_and_stops_at_unknown_flow),
		cmocka_unit_test(test_flow_count_limits),
		cmocka_unit_test(test_million_flows_fit_and_report_bytes_per_flow),
		cmocka_unit_test(test_shell_rejects_package_missing_target_capability),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
