// SPDX-License-Identifier: MIT
/*
 * test_xp_rtt.c - the RFC 6298 estimator and the RTO: first-sample rule,
 * the 1/8 and 1/4 gains, the variance term bounded below by rto_min (as
 * Linux keeps it, so a steady path's RTO never settles at SRTT), backoff
 * and cap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rtt.h"

static const struct xp_rto_params params = {
	.initial_ns = 1000000, .min_ns = 100000, .max_ns = 50000000, .granularity_ns = 1000,
};

static void test_first_sample_sets_srtt_and_half_rttvar(void **state)
{
	struct xp_rtt r;

	xp_rtt_init(&r);
	xp_rtt_sample(&r, 200000);
	assert_int_equal(r.srtt_ns, 200000);
	assert_int_equal(r.rttvar_ns, 100000);
	assert_int_equal(r.min_ns, 200000);
	/* RTO = 200 + 4 x 100 us */
	assert_int_equal(xp_rtt_rto(&r, &params, 0), 600000);
}

static void test_later_samples_use_rfc6298_gains(void **state)
{
	struct xp_rtt r;

	xp_rtt_init(&r);
	xp_rtt_sample(&r, 800000);
	xp_rtt_sample(&r, 400000);
	/* RTTVAR = 3/4 400000 + 1/4 |800000 - 400000|, SRTT = 7/8 800000 + 1/8 400000 */
	assert_int_equal(r.rttvar_ns, 400000);
	assert_int_equal(r.srtt_ns, 750000);
	assert_int_equal(r.min_ns, 400000);
	assert_int_equal(r.latest_ns, 400000);
}

static void test_rto_min_bounds_the_variance_term(void **state)
{
	struct xp_rtt r;

	xp_rtt_init(&r);
	for (int i = 0; i < 200; i++)
		xp_rtt_sample(&r, 300000);
	assert_true(r.rttvar_ns < 250); /* variance decays away */
	/* SRTT + max(G, 4 RTTVAR, rto_min): not 301 us, which one late ACK would exceed */
	assert_int_equal(xp_rtt_rto(&r, &params, 0), 300000 + params.min_ns);
}

static void test_rto_backs_off_from_srtt_plus_the_floor(void **state)
{
	struct xp_rtt r;

	xp_rtt_init(&r);
	for (int i = 0; i < 200; i++)
		xp_rtt_sample(&r, 10000); /* 10 us: the variance term is rto_min */
	assert_int_equal(xp_rtt_rto(&r, &params, 0), 10000 + params.min_ns);
	assert_int_equal(xp_rtt_rto(&r, &params, 1), 2 * (10000 + params.min_ns));
	assert_int_equal(xp_rtt_rto(&r, &params, 3), 8 * (10000 + params.min_ns));
}

static void test_rto_is_capped_after_backoff(void **state)
{
	struct xp_rtt r;

	xp_rtt_init(&r);
	xp_rtt_sample(&r, 20000000);
	assert_int_equal(xp_rtt_rto(&r, &params, 0), params.max_ns); /* 20 + 40 ms > 50 ms */
	xp_rtt_init(&r);
	assert_int_equal(xp_rtt_rto(&r, &params, 0), params.initial_ns);
	assert_int_equal(xp_rtt_rto(&r, &params, 5), 32 * params.initial_ns);
	assert_int_equal(xp_rtt_rto(&r, &params, 6), params.max_ns);
	assert_int_equal(xp_rtt_rto(&r, &params, 60), params.max_ns);
}

static void test_zero_sample_counts_as_one_ns(void **state)
{
	struct xp_rtt r;

	xp_rtt_init(&r);
	xp_rtt_sample(&r, 0);
	assert_int_equal(r.srtt_ns, 1);
	assert_int_equal(r.min_ns, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_sample_sets_srtt_and_half_rttvar),
		cmocka_unit_test(test_later_samples_use_rfc6298_gains),
		cmocka_unit_test(test_rto_min_bounds_the_variance_term),
		cmocka_unit_test(test_rto_backs_off_from_srtt_plus_the_floor),
		cmocka_unit_test(test_rto_is_capped_after_backoff),
		cmocka_unit_test(test_zero_sample_counts_as_one_ns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
