// SPDX-License-Identifier: MIT
/*
 * test_algo.c - pcm_algo.h, the math the policies share, in the arithmetic
 * this program is built with (meson builds it once per format, like
 * test_fx): unit conversions that must not saturate Q16.16, the EWMA,
 * slow-start and additive-increase steps, the ECN-marked bytes, the cube root, the rate scaling, the generator
 * and the entropy FIFO, and a window policy's load and store, by slot and by name.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pcm_algo.h"
#include "pcmh.h"

/* One raw step of the build's format; in double mode a relative epsilon. */
static double ulp(double x)
{
#if PCM_FX_IS_DOUBLE
	return fabs(x) * 1e-15 + 1e-300;
#else
	(void)x;
	return 1.0 / (double)((int64_t)1 << PCM_FX_FRAC_BITS);
#endif
}

#define assert_near(got, want, steps) assert_true(fabs((got) - (want)) <= (steps)*ulp(want))

static void test_ps_to_us_keeps_nanoseconds(void **state)
{
	assert_near(pcm_fx_to_double(pcm_algo_ps_to_us(14022720)), 14.022, 2);
	assert_near(pcm_fx_to_double(pcm_algo_ps_to_us(500000000)), 500.0, 1);
	assert_true(pcm_fx_to_double(pcm_algo_ps_to_us(999)) == 0.0); /* below a nanosecond */
}

static void test_ps_to_s_keeps_microseconds_and_seconds(void **state)
{
	/* 14.02 us and 3.5 s: CUBIC's t and K; Q16.16 cannot hold 3.5e6 microseconds */
	assert_true(fabs(pcm_fx_to_double(pcm_algo_ps_to_s(14022720)) - 14e-6) <= 4 * ulp(14e-6));
	assert_true(fabs(pcm_fx_to_double(pcm_algo_ps_to_s(3500000000000ull)) - 3.5) <=
		    4 * ulp(3.5));
	assert_true(pcm_fx_to_double(pcm_algo_ps_to_s(999999)) == 0.0); /* below a microsecond */
}

static void test_window_conversions_do_not_saturate_q16_16(void **state)
{
	/* 262926 bytes is 64.19 packets: fine in every format, although 262926 is not in Q16.16 */
	pcm_fx pkts = pcm_algo_bytes_to_pkts(262926, 4096);

	assert_near(pcm_fx_to_double(pkts), 262926.0 / 4096, 2);
	assert_true(pcm_algo_pkts_to_bytes(pkts, 4096) >= 262926 - 1);
	assert_true(pcm_algo_pkts_to_bytes(pkts, 4096) <= 262926);
	assert_int_equal(pcm_algo_pkts_to_bytes(pcm_fx_from_int(42), 4096), 42 * 4096);
	assert_int_equal(pcm_algo_pkts_to_bytes(pcm_fx_from_int(-3), 4096), 0);
}

static void test_rate_from_frac_maps_one_to_line_rate(void **state)
{
	assert_int_equal(pcm_algo_rate_from_frac(PCM_FX_ONE), PCM_RATE_ONE);
	assert_int_equal(pcm_algo_rate_from_frac(pcm_fx_from_double(0.5)), PCM_RATE_ONE / 2);
	assert_int_equal(pcm_algo_rate_from_frac(PCM_FX_ZERO), 0);
	assert_int_equal(pcm_algo_rate_from_frac(pcm_fx_from_double(-0.25)), 0);
	/* 0.1% of line rate, within one step of the format */
	assert_true(fabs((double)pcm_algo_rate_from_frac(pcm_fx_from_double(0.001)) -
			 0.001 * PCM_RATE_ONE) <= 1.0 + PCM_RATE_ONE * ulp(0.001));
}

static void test_ewma_and_ai_step_follow_their_formulas(void **state)
{
	pcm_fx a = pcm_algo_ewma(pcm_fx_from_double(1.0), pcm_fx_from_double(0.0),
				 pcm_fx_from_double(0.0625));
	pcm_fx c = pcm_algo_ai_step(pcm_fx_from_int(10), PCM_FX_ONE, pcm_fx_from_int(2));

	assert_near(pcm_fx_to_double(a), 0.9375, 1);
	assert_near(pcm_fx_to_double(c), 10.2, 2);
	assert_near(
	    pcm_fx_to_double(pcm_algo_clamp(pcm_fx_from_int(70), PCM_FX_ONE, pcm_fx_from_int(64))),
	    64.0, 0);
}

static void test_slow_start_grows_by_acked_only_below_ssthresh(void **state)
{
	pcm_fx ten = pcm_algo_fx(10), acked = pcm_algo_fx(2.5);

	assert_true(pcm_algo_in_slow_start(pcm_algo_fx(9.5), ten));
	assert_false(pcm_algo_in_slow_start(ten, ten));
	assert_near(pcm_fx_to_double(pcm_algo_slow_start(pcm_algo_fx(9.5), acked)), 12.0, 1);
}

static void test_marked_bytes_are_the_echoed_packets_at_most_the_acked_bytes(void **state)
{
	assert_int_equal(pcm_algo_marked_bytes(8192, 0, 4096), 0);
	assert_int_equal(pcm_algo_marked_bytes(8192, 1, 4096), 4096);
	assert_int_equal(pcm_algo_marked_bytes(6000, 2, 4096), 6000); /* a short last packet */
}

static void test_cbrt_is_within_one_step_of_the_root(void **state)
{
	static const double xs[] = { 27.0, 0.001, 2.5, 80.0, 160.0, 1.0, 0.5 };

	for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
		pcm_fx x = pcm_fx_from_double(xs[i]);
		double want = cbrt(pcm_fx_to_double(x));
		double got = pcm_fx_to_double(pcm_algo_cbrt(x));

		assert_true(got <= want + ulp(want) && got >= want - 2 * ulp(want));
	}
	assert_true(pcm_fx_to_double(pcm_algo_cbrt(PCM_FX_ZERO)) == 0.0);
	assert_true(pcm_fx_to_double(pcm_algo_cbrt(pcm_fx_from_int(-8))) == 0.0);
}

static void test_generator_is_deterministic_and_never_stuck_at_zero(void **state)
{
	pcm_uint a = 0, b = 0;

	for (int i = 0; i < 1000; i++) {
		pcm_algo_rng_mix(&a, (pcm_uint)i * 1000);
		pcm_algo_rng_mix(&b, (pcm_uint)i * 1000);
		assert_int_equal(pcm_algo_xorshift64(&a), pcm_algo_xorshift64(&b));
		assert_true(a != 0);
	}
	/* the only input that would zero the state is replaced by the seed */
	a = 5 * PCM_ALGO_RNG_SEED;
	pcm_algo_rng_mix(&a, 5);
	assert_int_equal(a, PCM_ALGO_RNG_SEED);
}

static void test_entropy_fifo_keeps_the_latest_len_in_arrival_order(void **state)
{
	pcm_uint slots[4] = { 0 }, head = 0, count = 0, ev = 99;

	assert_false(pcm_algo_evq_pop(slots, 4, &head, &count, &ev));
	assert_int_equal(ev, 99);
	for (pcm_uint v = 1; v <= 6; v++)
		pcm_algo_evq_push(slots, 4, &head, &count, v);
	assert_int_equal(count, 4);
	for (pcm_uint v = 3; v <= 6; v++) {
		assert_true(pcm_algo_evq_pop(slots, 4, &head, &count, &ev));
		assert_int_equal(ev, v);
	}
	assert_false(pcm_algo_evq_pop(slots, 4, &head, &count, &ev));
}

static void test_ai_step_unmarked_grows_by_the_unmarked_packets_only(void **state)
{
	pcm_fx ten = pcm_fx_from_int(10);

	/* 3 packets acked, 1 marked: ai_step over 2 packets */
	assert_true(pcm_algo_ai_step_unmarked(ten, 1.0, 3 * 4096, 4096, 4096) ==
		    pcm_algo_ai_step(ten, PCM_FX_ONE, pcm_fx_from_int(2)));
	assert_true(pcm_algo_ai_step_unmarked(ten, 1.0, 4096, 4096, 4096) == ten);
	assert_true(pcm_algo_ai_step_unmarked(ten, 1.0, 0, 0, 4096) == ten);
}

static void test_window_load_sets_the_first_window_on_the_first_call_only(void **state)
{
	pcm_uint initialized = 0, cwnd = 0, ssthresh = 0;

	assert_true(pcm_algo_window_load(&initialized, &cwnd, 10.0) == pcm_algo_fx(10.0));
	assert_int_equal(initialized, 1);
	assert_true(pcm_fx_from_slot(cwnd) == pcm_algo_fx(10.0));
	cwnd = pcm_fx_to_slot(pcm_algo_fx(3.5)); /* what the last call stored */
	assert_true(pcm_algo_window_load(&initialized, &cwnd, 10.0) == pcm_algo_fx(3.5));

	initialized = 0;
	assert_true(pcm_algo_window_load_ss(&initialized, &cwnd, 10.0, &ssthresh, 64.0) ==
		    pcm_algo_fx(10.0));
	assert_true(pcm_fx_from_slot(ssthresh) == pcm_algo_fx(64.0));
	ssthresh = pcm_fx_to_slot(pcm_algo_fx(5.0)); /* after a loss */
	pcm_algo_window_load_ss(&initialized, &cwnd, 10.0, &ssthresh, 64.0);
	assert_true(pcm_fx_from_slot(ssthresh) == pcm_algo_fx(5.0));
}

static void test_window_store_clamps_and_publishes_whole_bytes(void **state)
{
	pcm_uint cwnd = 0, bytes = 0;

	pcm_algo_window_store(&cwnd, &bytes, pcm_algo_fx(100.0), 1.0, 64.0, 4096);
	assert_true(pcm_fx_from_slot(cwnd) == pcm_algo_fx(64.0));
	assert_int_equal(bytes, 64 * 4096);
	pcm_algo_window_store(&cwnd, &bytes, pcm_algo_fx(0.25), 1.0, 64.0, 4096);
	assert_true(pcm_fx_from_slot(cwnd) == PCM_FX_ONE);
	assert_int_equal(bytes, 4096);
	pcm_algo_window_store(&cwnd, &bytes, pcm_algo_fx(10.5), 1.0, 64.0, 4096);
	assert_int_equal(bytes, 10 * 4096 + 2048);
}

/* A handler's snapshot for the by-name macros: one control, then three variables. */
enum { CONTROL_OFFSET = 0, VAR_OFFSET = 1 };
enum { pcm_ctl_WIN_BYTES = 0, pcm_var_u_FIRST = 0, pcm_var_u_WIN = 1, pcm_var_u_THRESH = 2 };

static void test_window_macros_reach_the_slots_they_are_named(void **state)
{
	pcm_uint snapshot[4] = { 0 };
	pcm_fx cwnd = PCM_ALGO_WINDOW_LOAD_SS(FIRST, WIN, 10.0, THRESH, 64.0);

	assert_true(cwnd == pcm_algo_fx(10.0));
	assert_int_equal(get_var_uint(FIRST), 1);
	assert_true(get_var_fx(THRESH) == pcm_algo_fx(64.0));
	PCM_ALGO_WINDOW_STORE(WIN, WIN_BYTES, pcm_algo_fx(2.0), 1.0, 64.0, 4096);
	assert_true(get_var_fx(WIN) == pcm_algo_fx(2.0));
	assert_int_equal(get_control(WIN_BYTES), 2 * 4096);
	assert_true(PCM_ALGO_WINDOW_LOAD(FIRST, WIN, 10.0) == pcm_algo_fx(2.0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ps_to_us_keeps_nanoseconds),
		cmocka_unit_test(test_ps_to_s_keeps_microseconds_and_seconds),
		cmocka_unit_test(test_window_conversions_do_not_saturate_q16_16),
		cmocka_unit_test(test_rate_from_frac_maps_one_to_line_rate),
		cmocka_unit_test(test_ewma_and_ai_step_follow_their_formulas),
		cmocka_unit_test(test_slow_start_grows_by_acked_only_below_ssthresh),
		cmocka_unit_test(test_marked_bytes_are_the_echoed_packets_at_most_the_acked_bytes),
		cmocka_unit_test(test_cbrt_is_within_one_step_of_the_root),
		cmocka_unit_test(test_generator_is_deterministic_and_never_stuck_at_zero),
		cmocka_unit_test(test_entropy_fifo_keeps_the_latest_len_in_arrival_order),
		cmocka_unit_test(test_ai_step_unmarked_grows_by_the_unmarked_packets_only),
		cmocka_unit_test(test_window_load_sets_the_first_window_on_the_first_call_only),
		cmocka_unit_test(test_window_store_clamps_and_publishes_whole_bytes),
		cmocka_unit_test(test_window_macros_reach_the_slots_they_are_named),
	};

	print_message("pcm_algo in %s arithmetic\n", PCM_FX_NAME);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
