// SPDX-License-Identifier: MIT
/*
 * test_xp_timerq.c - the deadline heap: ids come out by deadline then id,
 * moving and cancelling keep the order, and a random sequence of operations
 * matches a brute-force model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "timerq.h"

static void test_due_ids_come_out_by_deadline_then_id(void **state)
{
	struct xp_timerq q;

	assert_int_equal(xp_timerq_init(&q, 8), 0);
	xp_timerq_set(&q, 5, 300);
	xp_timerq_set(&q, 2, 100);
	xp_timerq_set(&q, 7, 100);
	xp_timerq_set(&q, 1, 200);
	assert_int_equal(xp_timerq_next(&q), 100);
	assert_int_equal(xp_timerq_pop_due(&q, 99), UINT32_MAX);
	assert_int_equal(xp_timerq_pop_due(&q, 250), 2);
	assert_int_equal(xp_timerq_pop_due(&q, 250), 7);
	assert_int_equal(xp_timerq_pop_due(&q, 250), 1);
	assert_int_equal(xp_timerq_pop_due(&q, 250), UINT32_MAX);
	assert_int_equal(xp_timerq_next(&q), 300);
	xp_timerq_fini(&q);
}

static void test_moving_and_cancelling_keep_order(void **state)
{
	struct xp_timerq q;

	assert_int_equal(xp_timerq_init(&q, 4), 0);
	xp_timerq_set(&q, 0, 10);
	xp_timerq_set(&q, 1, 20);
	xp_timerq_set(&q, 2, 30);
	xp_timerq_set(&q, 0, 40); /* later */
	xp_timerq_set(&q, 2, 5);  /* earlier */
	xp_timerq_cancel(&q, 1);
	xp_timerq_cancel(&q, 3);  /* not armed: nothing */
	assert_int_equal(q.len, 2);
	assert_int_equal(xp_timerq_pop_due(&q, 100), 2);
	assert_int_equal(xp_timerq_pop_due(&q, 100), 0);
	assert_int_equal(xp_timerq_next(&q), UINT64_MAX);
	xp_timerq_fini(&q);
}

static void test_random_operations_match_a_model(void **state)
{
	enum { N = 64 };
	uint64_t model[N];
	struct xp_timerq q;
	uint64_t x = 1;

	assert_int_equal(xp_timerq_init(&q, N), 0);
	for (int i = 0; i < N; i++)
		model[i] = UINT64_MAX;
	for (int step = 0; step < 20000; step++) {
		uint32_t id;
		uint64_t best = UINT64_MAX;
		int best_id = -1;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		id = (uint32_t)(x >> 33) % N;
		if ((x >> 20) % 4 == 0) {
			xp_timerq_cancel(&q, id);
			model[id] = UINT64_MAX;
		} else {
			model[id] = (x >> 40) % 1000;
			xp_timerq_set(&q, id, model[id]);
		}
		for (int i = 0; i < N; i++)
			if (model[i] < best)
				best = model[i], best_id = i;
		assert_int_equal(xp_timerq_next(&q), best);
		if (step % 7 == 0 && best_id >= 0) {
			assert_int_equal(xp_timerq_pop_due(&q, best), (uint32_t)best_id);
			model[best_id] = UINT64_MAX;
		}
	}
	xp_timerq_fini(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_due_ids_come_out_by_deadline_then_id),
		cmocka_unit_test(test_moving_and_cancelling_keep_order),
		cmocka_unit_test(test_random_operations_match_a_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
