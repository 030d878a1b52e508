// SPDX-License-Identifier: MIT
/*
 * test_xp_ack.c - ACK records and their batching: what a record carries
 * (cumulative chunk, SACK bitmap, echo of the latest transmission, the
 * receiver's hold time, CE counts), one record per receive per round, and
 * records of many connections to one peer sharing packets up to the MTU.
 */
#include "test_xp_pair.h"

#include "imm.h"

static uint32_t imm_for(uint32_t conn, uint32_t slot, uint32_t chunk, bool last, bool parity)
{
	struct xp_imm f = { .conn = (uint16_t)conn, .slot = (uint8_t)slot,
			    .chunk = (uint16_t)chunk, .last = last, .parity = parity };

	return xp_imm_encode(&f);
}

static void post_recv(struct solo *s, uint32_t conn, uint64_t cookie)
{
	struct xp_buf b = { 0x100000, 1ull << 24, 33 };

	assert_int_equal(xp_post_recv(s->core, conn, &b, cookie, 0), 0);
}

static void test_record_carries_cum_sack_echo_hold_and_ce(void **state)
{
	struct xp_rec recs[4];
	struct solo s;

	solo_init(&s, 0, NULL);
	post_recv(&s, s.conn, 1);
	solo_drain(&s, 0);
	/* chunks 0, 2 and 5 (5 CE-marked, second transmission) arrive in one round */
	assert_int_equal(xp_core_on_chunk(s.core, imm_for(s.conn, 0, 0, false, false), 100,
					  s.handle, true, 1000), 0);
	assert_int_equal(xp_core_on_chunk(s.core, imm_for(s.conn, 0, 2, false, false), 100,
					  s.handle, false, 1100), 0);
	assert_int_equal(xp_core_on_chunk(s.core, imm_for(s.conn, 0, 5, false, true), 100,
					  s.handle, true, 1300), 0);
	solo_drain(&s, 1700);
	assert_int_equal(solo_records(&s, recs, 4), 1); /* one record for the round */
	assert_int_equal(recs[0].type, XP_REC_ACK);
	assert_int_equal(recs[0].conn, s.peer_conn);
	assert_int_equal(recs[0].nonce, s.peer_nonce);
	assert_int_equal(recs[0].u.ack.msg_seq, 0);
	assert_int_equal(recs[0].u.ack.cum, 1);                  /* chunk 1 is missing */
	assert_int_equal(recs[0].u.ack.sack, (1ull << 0) | (1ull << 3)); /* chunks 2 and 5 */
	assert_true(recs[0].u.ack.echo_valid);
	assert_int_equal(recs[0].u.ack.echo_chunk, 5);
	assert_true(recs[0].u.ack.echo_parity);
	assert_true(recs[0].u.ack.echo_ce);
	assert_int_equal(recs[0].u.ack.hold_ns, 400);            /* 1300 -> 1700 */
	assert_int_equal(recs[0].u.ack.ce, 2);
	assert_false(recs[0].u.ack.dup_seen);
	assert_false(recs[0].u.ack.complete);
	/* nothing new: nothing sent */
	assert_int_equal(solo_drain(&s, 2000), 0);
	/* the next record counts CE marks afresh */
	assert_int_equal(xp_core_on_chunk(s.core, imm_for(s.conn, 0, 1, false, false), 100,
					  s.handle, false, 3000), 0);
	solo_drain(&s, 3000);
	assert_int_equal(solo_records(&s, recs, 4), 1);
	assert_int_equal(recs[0].u.ack.cum, 3);
	assert_int_equal(recs[0].u.ack.sack, 1ull << 1); /* chunk 5 = cum + 1 + 1 */
	assert_int_equal(recs[0].u.ack.ce, 0);
	assert_int_equal(recs[0].u.ack.hold_ns, 0);
	solo_fini(&s);
}

static void test_records_of_many_connections_share_a_packet_per_peer(void **state)
{
	uint32_t ids[6], nonces[6], handle = 7;
	struct xp_rec recs[16];
	struct solo s;
	uint32_t packets = 0;

	solo_init(&s, 0, NULL);
	for (int k = 0; k < 6; k++) {
		struct xp_conn_config cc = { .n_paths = 1, .path_handles = &handle,
					     .cc = xp_cc_fixed_binding(&s.cc) };

		assert_int_equal(xp_conn_create(s.core, &cc, 0, &ids[k], &nonces[k]), 0);
		/* connections 0..3 to peer 1, 4..5 to peer 2 */
		assert_int_equal(xp_conn_bind(s.core, ids[k], 20 + (uint32_t)k, 99, k < 4 ? 1 : 2, 0),
				 0);
		post_recv(&s, ids[k], (uint64_t)k);
	}
	solo_drain(&s, 0);
	for (int k = 0; k < 6; k++)
		assert_int_equal(xp_core_on_chunk(s.core, imm_for(ids[k], 0, 0, false, false), 10,
						  handle, false, 5), 0);
	solo_drain(&s, 5);
	for (uint32_t i = 0; i < s.n_acts; i++) {
		if (s.acts[i].kind != XP_ACT_CTRL)
			continue;
		packets++;
		assert_true(s.acts[i].u.ctrl.peer == 1 || s.acts[i].u.ctrl.peer == 2);
	}
	assert_int_equal(packets, 2);
	assert_int_equal(solo_records(&s, recs, 16), 6);
	solo_fini(&s);
}

static void small_mtu(struct xp_core_config *cfg)
{
	cfg->ctrl_mtu = 64; /* header + 1 ACK record (32 B) + a 16 B record */
}

static void test_packets_never_exceed_the_control_mtu(void **state)
{
	uint32_t ids[5], nonces[5], handle = 7;
	struct xp_rec recs[16];
	struct solo s;
	uint32_t packets = 0;

	solo_init(&s, 0, small_mtu);
	for (int k = 0; k < 5; k++) {
		struct xp_conn_config cc = { .n_paths = 1, .path_handles = &handle,
					     .cc = xp_cc_fixed_binding(&s.cc) };

		assert_int_equal(xp_conn_create(s.core, &cc, 0, &ids[k], &nonces[k]), 0);
		assert_int_equal(xp_conn_bind(s.core, ids[k], 20 + (uint32_t)k, 99, 1, 0), 0);
		post_recv(&s, ids[k], (uint64_t)k);
	}
	solo_drain(&s, 0);
	for (int k = 0; k < 5; k++)
		assert_int_equal(xp_core_on_chunk(s.core, imm_for(ids[k], 0, 0, false, false), 10,
						  handle, false, 5), 0);
	solo_drain(&s, 5);
	for (uint32_t i = 0; i < s.n_acts; i++) {
		if (s.acts[i].kind != XP_ACT_CTRL)
			continue;
		packets++;
		assert_true(s.acts[i].u.ctrl.len <= 64);
	}
	assert_int_equal(packets, 5);
	assert_int_equal(solo_records(&s, recs, 16), 5);
	solo_fini(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_carries_cum_sack_echo_hold_and_ce),
		cmocka_unit_test(test_records_of_many_connections_share_a_packet_per_peer),
		cmocka_unit_test(test_packets_never_exceed_the_control_mtu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
