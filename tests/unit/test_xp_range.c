// SPDX-License-Identifier: MIT
/*
 * test_xp_range.c - xp_range.h, the one "range inside an object" check: the
 * edges of an object, empty ranges, and sums that would wrap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "xp_range.h"

static void test_range_inside_and_at_the_edges(void **state)
{
	(void)state;
	assert_true(xp_range_within(0, 4096, 4096));
	assert_true(xp_range_within(4095, 1, 4096));
	assert_false(xp_range_within(4095, 2, 4096));
	assert_false(xp_range_within(0, 4097, 4096));
}

static void test_empty_range_is_inside_up_to_the_end(void **state)
{
	(void)state;
	assert_true(xp_range_within(4096, 0, 4096));
	assert_false(xp_range_within(4097, 0, 4096));
	assert_true(xp_range_within(0, 0, 0));
}

static void test_sums_that_would_wrap_are_outside(void **state)
{
	(void)state;
	assert_false(xp_range_within(UINT64_MAX, 2, 4096));
	assert_false(xp_range_within(16, UINT64_MAX - 8, 4096));
	assert_false(xp_range_within(1, UINT64_MAX, UINT64_MAX));
	assert_true(xp_range_within(1, UINT64_MAX - 1, UINT64_MAX));
}

static void test_pointers_below_or_past_the_object_are_outside(void **state)
{
	static char obj[64];

	(void)state;
	assert_true(xp_range_within_ptr(obj, sizeof(obj), obj + 8, 56));
	assert_false(xp_range_within_ptr(obj, sizeof(obj), obj + 8, 57));
	assert_false(xp_range_within_ptr(obj + 8, 8, obj, 1));
	assert_true(xp_range_within_ptr(obj, sizeof(obj), obj + 64, 0));
	assert_false(xp_range_within_ptr(obj, sizeof(obj), obj + 60, UINT64_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_inside_and_at_the_edges),
		cmocka_unit_test(test_empty_range_is_inside_up_to_the_end),
		cmocka_unit_test(test_sums_that_would_wrap_are_outside),
		cmocka_unit_test(test_pointers_below_or_past_the_object_are_outside),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
