// SPDX-License-Identifier: MIT
/*
 * test_xp_recv.c - the receiver, driven by hand: CTS advertisement ahead of
 * the sender, chunk tracking and completion in any order, and every kind of
 * chunk that must be dropped (duplicate, beyond the window, last-flag
 * contradictions, bad lengths, unadvertised slot, wrong path, completed
 * message).
 */
#include "test_xp_pair.h"

#include "imm.h"

static uint32_t imm(const struct solo *s, uint32_t slot, uint32_t chunk, bool last)
{
	struct xp_imm f = { .conn = (uint16_t)s->conn, .slot = (uint8_t)slot,
			    .chunk = (uint16_t)chunk, .last = last };

	return xp_imm_encode(&f);
}

/* A solo core with one receive of @cap bytes posted and its CTS sent. */
static void receiver(struct solo *s, uint64_t cap)
{
	struct xp_buf b = { 0x100000, cap, 33 };

	solo_init(s, 0, NULL);
	assert_int_equal(xp_post_recv(s->core, s->conn, &b, 1, 0), 0);
	solo_drain(s, 0);
}

static void test_receives_are_advertised_ahead_up_to_8(void **state)
{
	struct xp_rec recs[64];
	struct solo s;
	uint32_t n;

	solo_init(&s, 0, NULL);
	for (int k = 0; k < 20; k++) {
		struct xp_buf b = { 0x100000 + 0x10000ull * (uint64_t)k, 1000u + (uint64_t)k, 40u + (uint32_t)k };

		assert_int_equal(xp_post_recv(s.core, s.conn, &b, (uint64_t)k, 0), 0);
	}
	solo_drain(&s, 0);
	n = solo_records(&s, recs, 64);
	assert_int_equal(n, XP_MSG_WINDOW);
	for (uint32_t k = 0; k < n; k++) {
		assert_int_equal(recs[k].type, XP_REC_CTS);
		assert_int_equal(recs[k].conn, s.peer_conn);
		assert_int_equal(recs[k].nonce, s.peer_nonce);
		assert_int_equal(recs[k].u.cts.msg_seq, k);
		assert_int_equal(recs[k].u.cts.raddr, 0x100000 + 0x10000ull * k);
		assert_int_equal(recs[k].u.cts.cap, 1000 + k);
		assert_int_equal(recs[k].u.cts.rkey, 40 + k);
	}
	/* all 8 records share one packet to the one peer */
	assert_int_equal(s.n_acts, 1);
	solo_fini(&s);
}

/* One receive's single chunk, then a drain (its completion, ACK and the next CTSs). */
static void complete_one(struct solo *s, uint32_t seq, uint64_t now_ns)
{
	assert_int_equal(xp_core_on_chunk(s->core, imm(s, seq % XP_MSG_SLOTS, 0, true), 100,
					  s->handle, false, now_ns),
			 0);
	solo_drain(s, now_ns);
	assert_non_null(solo_comp(s, XP_COMP_RECV, seq));
}

/*
 * The race a completion queue opens on UC: a copy of receive k's chunk is
 * placed under k's key before the key is released and reported after k
 * completed. Every receive that can be advertised before it is reported
 * (k + 1 .. k + 8: their chunks were written only after k's key died, so
 * they are reported after it) must leave k's slot alone.
 */
static void test_stale_chunk_reported_after_completion_never_counts_for_k_plus_16(void **state)
{
	struct xp_rec recs[64];
	struct solo s;
	uint32_t n;

	solo_init(&s, 0, NULL);
	for (uint32_t k = 0; k < 40; k++) {
		struct xp_buf b = { 0x100000 + 0x1000ull * k, 100, 40u + k };

		assert_int_equal(xp_post_recv(s.core, s.conn, &b, k, 0), 0);
	}
	solo_drain(&s, 0);
	/*
	 * Receive 0 completes, then 1..7 (advertised before 0's key died, so
	 * their chunks may come before the stale copy); receive 8 was advertised
	 * after, so none of its chunks can.
	 */
	complete_one(&s, 0, 10);
	n = solo_records(&s, recs, 64);
	assert_int_equal(n, 2); /* receive 0's ACK and receive 8's CTS */
	assert_int_equal(recs[1].type, XP_REC_CTS);
	assert_int_equal(recs[1].u.cts.msg_seq, XP_MSG_WINDOW);
	for (uint32_t k = 1; k < XP_MSG_WINDOW; k++)
		complete_one(&s, k, 10 + k);
	/* the copy of receive 0's chunk, reported only now: its slot still remembers 0 */
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 0, true), 100, s.handle, false, 30),
			 -EALREADY);
	assert_int_equal(drops(s.core, XP_DROP_IMM_DONE), 1);
	solo_drain(&s, 30);
	/* receive 16, in slot 0, is advertised once 8 finished, and completes */
	for (uint32_t k = XP_MSG_WINDOW; k <= 16; k++)
		complete_one(&s, k, 40 + k);
	assert_int_equal(xp_core_stats(s.core)->msgs_received, 17);
	solo_fini(&s);
}

static void test_message_completes_when_last_and_all_before_arrived(void **state)
{
	static const uint32_t order[] = { 3, 0, 5, 1, 4, 2 };
	struct solo s;

	receiver(&s, 6 * 1000);
	for (int k = 0; k < 6; k++) {
		uint32_t c = order[k];

		assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, c, c == 5), 1000, s.handle,
						  false, 100 + (uint64_t)k),
				 0);
		solo_drain(&s, 100 + (uint64_t)k);
		if (k < 5)
			assert_null(solo_comp(&s, XP_COMP_RECV, 1));
	}
	assert_non_null(solo_comp(&s, XP_COMP_RECV, 1));
	assert_int_equal(solo_comp(&s, XP_COMP_RECV, 1)->status, 0);
	assert_int_equal(solo_comp(&s, XP_COMP_RECV, 1)->bytes, 6000);
	assert_int_equal(xp_core_stats(s.core)->chunks_received, 6);
	solo_fini(&s);
}

static void test_duplicate_chunks_are_counted_and_reacked(void **state)
{
	struct xp_rec recs[8];
	struct solo s;

	receiver(&s, 10000);
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 0, false), 1000, s.handle, false, 10), 0);
	solo_drain(&s, 10);
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 0, false), 1000, s.handle, false, 20),
			 -EALREADY);
	assert_int_equal(drops(s.core, XP_DROP_IMM_DUP), 1);
	solo_drain(&s, 25);
	assert_int_equal(solo_records(&s, recs, 8), 1);
	assert_int_equal(recs[0].type, XP_REC_ACK);
	assert_true(recs[0].u.ack.dup_seen);
	assert_int_equal(recs[0].u.ack.cum, 1);
	/* bytes count once */
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 1, true), 500, s.handle, false, 30), 0);
	solo_drain(&s, 30);
	assert_int_equal(solo_comp(&s, XP_COMP_RECV, 1)->bytes, 1500);
	/* and a chunk of the completed message is re-ACKed as complete */
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 1, true), 500, s.handle, false, 40),
			 -EALREADY);
	assert_int_equal(drops(s.core, XP_DROP_IMM_DONE), 1);
	solo_drain(&s, 40);
	assert_int_equal(solo_records(&s, recs, 8), 1);
	assert_true(recs[0].u.ack.complete);
	assert_int_equal(recs[0].u.ack.cum, 2);
	solo_fini(&s);
}

static void test_chunk_past_the_sack_window_is_dropped(void **state)
{
	struct solo s;

	receiver(&s, 1ull << 30);
	/* cum is 0: the bitmap covers chunks 1..64, so 65 is outside */
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 64, false), 100, s.handle, false, 1), 0);
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 65, false), 100, s.handle, false, 1),
			 -EINVAL);
	assert_int_equal(drops(s.core, XP_DROP_IMM_BEYOND_WINDOW), 1);
	solo_fini(&s);
}

static void test_last_flag_contradictions_are_dropped(void **state)
{
	struct solo s;

	receiver(&s, 1ull << 20);
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 5, false), 100, s.handle, false, 1), 0);
	/* "last" at 3 when 5 was seen */
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 3, true), 100, s.handle, false, 2),
			 -EINVAL);
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 7, true), 100, s.handle, false, 3), 0);
	/* a second, different last */
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 6, true), 100, s.handle, false, 4),
			 -EINVAL);
	/* a chunk after the last */
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 9, false), 100, s.handle, false, 5),
			 -EINVAL);
	assert_int_equal(drops(s.core, XP_DROP_IMM_LAST_MISMATCH), 3);
	solo_fini(&s);
}

static void test_bad_lengths_are_dropped(void **state)
{
	struct solo s;

	receiver(&s, 2500);
	/* zero bytes is only for the single chunk of an empty message */
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 1, false), 0, s.handle, false, 1),
			 -EINVAL);
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 0, false), XP_CHUNK_BYTES_MAX + 1,
					  s.handle, false, 1),
			 -EINVAL);
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 0, false), 2000, s.handle, false, 1), 0);
	/* over the receive's capacity */
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 1, true), 501, s.handle, false, 1),
			 -EINVAL);
	assert_int_equal(drops(s.core, XP_DROP_IMM_LEN), 3);
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 1, true), 500, s.handle, false, 1), 0);
	solo_drain(&s, 2);
	assert_int_equal(solo_comp(&s, XP_COMP_RECV, 1)->bytes, 2500);
	solo_fini(&s);
}

static void test_chunk_for_an_unadvertised_slot_is_dropped(void **state)
{
	struct xp_buf b = { 0x100000, 1000, 33 };
	struct solo s;

	solo_init(&s, 0, NULL);
	/* nothing posted in slot 3 */
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 3, 0, true), 10, s.handle, false, 1),
			 -EINVAL);
	/* posted but its CTS not sent yet (no drain): a chunk cannot be for it */
	assert_int_equal(xp_post_recv(s.core, s.conn, &b, 1, 1), 0);
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 0, true), 10, s.handle, false, 2),
			 -EINVAL);
	assert_int_equal(drops(s.core, XP_DROP_IMM_NO_SLOT), 2);
	solo_drain(&s, 3);
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 0, true), 10, s.handle, false, 4), 0);
	solo_fini(&s);
}

static void test_chunk_on_a_foreign_path_or_conn_is_dropped(void **state)
{
	struct xp_imm f = { .conn = 9, .slot = 0, .chunk = 0, .last = true };
	struct solo s;

	receiver(&s, 1000);
	assert_int_equal(xp_core_on_chunk(s.core, imm(&s, 0, 0, true), 10, s.handle + 1, false, 1),
			 -EINVAL);
	assert_int_equal(drops(s.core, XP_DROP_IMM_WRONG_PATH), 1);
	assert_int_equal(xp_core_on_chunk(s.core, xp_imm_encode(&f), 10, s.handle, false, 1),
			 -EINVAL);
	f.conn = 16383;
	assert_int_equal(xp_core_on_chunk(s.core, xp_imm_encode(&f), 10, s.handle, false, 1),
			 -EINVAL);
	assert_int_equal(drops(s.core, XP_DROP_IMM_UNKNOWN_CONN), 2);
	solo_fini(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_receives_are_advertised_ahead_up_to_8),
		cmocka_unit_test(test_stale_chunk_reported_after_completion_never_counts_for_k_plus_16),
		cmocka_unit_test(test_message_completes_when_last_and_all_before_arrived),
		cmocka_unit_test(test_duplicate_chunks_are_counted_and_reacked),
		cmocka_unit_test(test_chunk_past_the_sack_window_is_dropped),
		cmocka_unit_test(test_last_flag_contradictions_are_dropped),
		cmocka_unit_test(test_bad_lengths_are_dropped),
		cmocka_unit_test(test_chunk_for_an_unadvertised_slot_is_dropped),
		cmocka_unit_test(test_chunk_on_a_foreign_path_or_conn_is_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
