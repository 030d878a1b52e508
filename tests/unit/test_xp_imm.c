// SPDX-License-Identifier: MIT
/*
 * test_xp_imm.c - the 32-bit immediate of a chunk: every field sits where
 * the layout says, round-trips, and the limits it implies are the constants.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "imm.h"

static void test_fields_sit_where_the_layout_says(void **state)
{
	struct xp_imm f = { .conn = 0x2abc, .slot = 0x9, .chunk = 0x5a5, .last = true,
			    .parity = false };

	assert_int_equal(xp_imm_encode(&f), (1u << 31) | (0x2abcu << 16) | (0x9u << 12) | 0x5a5u);
	f.last = false;
	f.parity = true;
	assert_int_equal(xp_imm_encode(&f), (1u << 30) | (0x2abcu << 16) | (0x9u << 12) | 0x5a5u);
}

static void test_every_value_round_trips(void **state)
{
	/* Every value of each field, the others held at a non-trivial pattern. */
	for (uint32_t conn = 0; conn < XP_MAX_CONNS; conn++) {
		struct xp_imm f = { .conn = (uint16_t)conn, .slot = (uint8_t)(conn % 16),
				    .chunk = (uint16_t)(conn % XP_MAX_CHUNKS),
				    .last = conn & 1, .parity = conn & 2 }, g;

		xp_imm_decode(xp_imm_encode(&f), &g);
		assert_int_equal(g.conn, f.conn);
		assert_int_equal(g.slot, f.slot);
		assert_int_equal(g.chunk, f.chunk);
		assert_int_equal(g.last, f.last);
		assert_int_equal(g.parity, f.parity);
	}
}

static void test_any_word_decodes_in_range(void **state)
{
	uint32_t x = 0x12345678;

	for (int i = 0; i < 100000; i++) {
		struct xp_imm g;

		x = x * 1664525u + 1013904223u;
		xp_imm_decode(x, &g);
		assert_true(g.conn < XP_MAX_CONNS);
		assert_true(g.slot < XP_MSG_SLOTS);
		assert_true(g.chunk < XP_MAX_CHUNKS);
		assert_int_equal(xp_imm_encode(&g), x);
	}
}

static void test_limits_are_16384_conns_16_msgs_4096_chunks(void **state)
{
	assert_int_equal(XP_MAX_CONNS, 16384);
	assert_int_equal(XP_MSG_SLOTS, 16);
	assert_int_equal(XP_MAX_CHUNKS, 4096);
	assert_int_equal(XP_IMM_CONN_BITS + XP_IMM_SLOT_BITS + XP_IMM_CHUNK_BITS + 2, 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields_sit_where_the_layout_says),
		cmocka_unit_test(test_every_value_round_trips),
		cmocka_unit_test(test_any_word_decodes_in_range),
		cmocka_unit_test(test_limits_are_16384_conns_16_msgs_4096_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
