// SPDX-License-Identifier: MIT
/*
 * test_accept_queue.c - a listener's accept queue (transport/engine/
 * xp_accept_queue.h), the one matching of waiting dials with waiting accepts
 * that pcmd's engine data plane and libpcmtransport's in-process backend
 * share: the oldest dial meets the oldest accept whichever came first, a
 * full backlog refuses a dial and makes room again once one is accepted,
 * order holds across the rings' wrap and the accepts' growth, and a closing
 * listener takes what is left, oldest first.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "xp_accept_queue.h"

static void test_accepts_meet_dials_oldest_first_whichever_came_first(void **state)
{
	struct xp_accept_queue q;
	uint64_t dial, accept;

	(void)state;
	assert_int_equal(xp_accept_queue_init(&q, 4), 0);
	/* Dials first: nothing meets until an accept is asked for. */
	assert_int_equal(xp_accept_queue_dial(&q, 100), 0);
	assert_int_equal(xp_accept_queue_dial(&q, 101), 0);
	assert_false(xp_accept_queue_match(&q, &dial, &accept));
	assert_int_equal(xp_accept_queue_accept(&q, 7), 0);
	assert_true(xp_accept_queue_match(&q, &dial, &accept));
	assert_int_equal(dial, 100);
	assert_int_equal(accept, 7);
	assert_false(xp_accept_queue_match(&q, &dial, &accept));
	/* Accepts first: the waiting dial 101 goes to the oldest of them. */
	assert_int_equal(xp_accept_queue_accept(&q, 8), 0);
	assert_int_equal(xp_accept_queue_accept(&q, 9), 0);
	assert_true(xp_accept_queue_match(&q, &dial, &accept));
	assert_int_equal(dial, 101);
	assert_int_equal(accept, 8);
	assert_false(xp_accept_queue_match(&q, &dial, &accept));
	assert_int_equal(xp_accept_queue_dial(&q, 102), 0);
	assert_true(xp_accept_queue_match(&q, &dial, &accept));
	assert_int_equal(dial, 102);
	assert_int_equal(accept, 9);
	xp_accept_queue_fini(&q);
}

static void test_full_backlog_refuses_a_dial_until_one_is_accepted(void **state)
{
	struct xp_accept_queue q;
	uint64_t dial, accept;

	(void)state;
	assert_int_equal(xp_accept_queue_init(&q, 2), 0);
	assert_false(xp_accept_queue_full(&q));
	assert_int_equal(xp_accept_queue_dial(&q, 1), 0);
	assert_int_equal(xp_accept_queue_dial(&q, 2), 0);
	assert_true(xp_accept_queue_full(&q));
	assert_int_equal(xp_accept_queue_dial(&q, 3), -ECONNREFUSED);
	assert_int_equal(xp_accept_queue_accept(&q, 50), 0);
	assert_true(xp_accept_queue_match(&q, &dial, &accept));
	assert_int_equal(dial, 1);
	assert_false(xp_accept_queue_full(&q));
	assert_int_equal(xp_accept_queue_dial(&q, 4), 0);
	/* The refused dial was not kept: 2, then 4. */
	assert_int_equal(xp_accept_queue_accept(&q, 51), 0);
	assert_int_equal(xp_accept_queue_accept(&q, 52), 0);
	assert_true(xp_accept_queue_match(&q, &dial, &accept));
	assert_int_equal(dial, 2);
	assert_true(xp_accept_queue_match(&q, &dial, &accept));
	assert_int_equal(dial, 4);
	assert_int_equal(accept, 52);
	xp_accept_queue_fini(&q);
}

/* Dials wrap their fixed ring many times, accepts grow while their ring is wrapped. */
static void test_order_holds_across_wrap_and_growth(void **state)
{
	struct xp_accept_queue q;
	uint64_t next_dial = 0, next_accept = 0, want_dial = 0, want_accept = 0, dial, accept;
	uint32_t most_waiting = 0;

	(void)state;
	assert_int_equal(xp_accept_queue_init(&q, 3), 0);
	for (int round = 0; round < 200; round++) {
		int accepts = 1 + round % 37, dials = 1 + round % 3;

		for (int i = 0; i < accepts; i++)
			assert_int_equal(xp_accept_queue_accept(&q, 1000000 + next_accept++), 0);
		if (q.accepts.n > most_waiting)
			most_waiting = q.accepts.n;
		for (int i = 0; i < dials; i++)
			assert_int_equal(xp_accept_queue_dial(&q, next_dial++), 0);
		while (xp_accept_queue_match(&q, &dial, &accept)) {
			assert_int_equal(dial, want_dial++);
			assert_int_equal(accept, 1000000 + want_accept++);
		}
	}
	assert_int_equal(want_dial, next_dial);
	assert_true(most_waiting > 16); /* the accepts' ring grew past its first 16 */
	xp_accept_queue_fini(&q);
}

static void test_closing_listener_takes_the_rest_oldest_first(void **state)
{
	struct xp_accept_queue q;
	uint64_t v;

	(void)state;
	assert_int_equal(xp_accept_queue_init(&q, 8), 0);
	for (uint64_t i = 0; i < 5; i++)
		assert_int_equal(xp_accept_queue_dial(&q, 10 + i), 0);
	for (uint64_t i = 0; i < 5; i++) {
		assert_true(xp_accept_queue_take_dial(&q, &v));
		assert_int_equal(v, 10 + i);
	}
	assert_false(xp_accept_queue_take_dial(&q, &v));
	for (uint64_t i = 0; i < 40; i++)
		assert_int_equal(xp_accept_queue_accept(&q, 500 + i), 0);
	for (uint64_t i = 0; i < 40; i++) {
		assert_true(xp_accept_queue_take_accept(&q, &v));
		assert_int_equal(v, 500 + i);
	}
	assert_false(xp_accept_queue_take_accept(&q, &v));
	xp_accept_queue_fini(&q);
	xp_accept_queue_fini(&q); /* finishing twice is harmless */
}

static void test_zero_backlog_is_refused_and_zeroed_queue_finishes(void **state)
{
	struct xp_accept_queue q = {0};

	(void)state;
	xp_accept_queue_fini(&q);
	assert_int_equal(xp_accept_queue_init(&q, 0), -EINVAL);
	assert_true(xp_accept_queue_full(&q));
	assert_int_equal(xp_accept_queue_dial(&q, 1), -ECONNREFUSED);
	xp_accept_queue_fini(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_accepts_meet_dials_oldest_first_whichever_came_first),
	    cmocka_unit_test(test_full_backlog_refuses_a_dial_until_one_is_accepted),
	    cmocka_unit_test(test_order_holds_across_wrap_and_growth),
	    cmocka_unit_test(test_closing_listener_takes_the_rest_oldest_first),
	    cmocka_unit_test(test_zero_backlog_is_refused_and_zeroed_queue_finishes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
