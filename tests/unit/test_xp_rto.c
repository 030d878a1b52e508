// SPDX-License-Identifier: MIT
/*
 * test_xp_rto.c - the retransmission timeout as RFC 6298 and Linux have it:
 * rto_min bounds the variance term (a steady path's RTO is not SRTT + G),
 * Karn's rule with the backoff kept until a valid sample, an expiry
 * retransmits the earliest outstanding chunk and backs off, the timer runs
 * from the earliest outstanding transmission (later ACKs of other messages
 * do not push it back), a spurious retransmission teaches the estimator
 * (the echo of the original gives a sample), and a receive-only side times
 * its CTS retransmissions on an estimate it has.
 *
 * Pair tests: 5 us each way (10 us RTT) unless a test says otherwise;
 * rto_min 100 us.
 */
#include "test_xp_txlog.h"

/* Run @s's timers (draining after each) until @counter moves; Return: the time it did. */
static uint64_t solo_until(struct solo *s, const uint64_t *counter)
{
	uint64_t before = *counter, t = 0;

	while (*counter == before) {
		t = xp_core_next_deadline(s->core);
		assert_true(t != UINT64_MAX);
		xp_core_timer(s->core, t);
		solo_drain(s, t);
	}
	return t;
}

static struct xp_rec solo_ack(const struct solo *s, uint32_t seq, uint16_t cum, bool complete,
			      uint16_t echo, bool parity)
{
	struct xp_rec ack = solo_rec(s, XP_REC_ACK);

	ack.u.ack = (struct xp_rec_ack){ .msg_seq = seq, .cum = cum, .complete = complete,
					 .echo_valid = true, .echo_chunk = echo,
					 .echo_parity = parity };
	return ack;
}

/*
 * A steady 200 us path: rto_min keeps the variance term at 100 us, so an ACK late by 60 us
 * is no timeout (with the minimum on the whole RTO it settled at 201 us and fired).
 */
static void test_a_late_ack_on_a_steady_path_is_not_an_rto(void **state)
{
	static uint8_t src[1000], dst[1000];
	struct xp_conn_info info;
	struct pair_opts o;
	struct tx_log l;
	struct pair p;

	pair_default_opts(&o);
	o.link.delay_ns = 100000;
	o.ctrl.delay_ns = 100000;
	warm_pair_opts(&p, &l, &o);
	for (uint64_t k = 1; k <= 31; k++) {
		if (k == 31) {
			l.late_ack_seq = 31;
			l.late_acks = 1;
			l.late_ack_ns = 60000;
		}
		assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), k), 0);
		assert_int_equal(pair_send(&p, 0, src, sizeof(src), 1000 + k), 0);
		pair_run(&p, pair_now(&p) + 10000000);
		assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 1000 + k)->c.status, 0);
		if (k == 30) {
			assert_int_equal(xp_conn_info(pair_core(&p, 0), p.conn[0], &info), 0);
			assert_int_equal(info.rto_ns, info.srtt_ns + 100000);
		}
	}
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 0);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->chunks_retx, 0);
	pair_done(&p);
}

/*
 * The original transmission's echo, arriving after a retransmission went, is a valid sample
 * from the original's send time (it names it: two transmissions, its parity): the late
 * delivery teaches SRTT and RTTVAR instead of being skipped.
 */
static void test_spurious_retransmission_teaches_the_estimator(void **state)
{
	struct xp_conn_info info;
	struct xp_rec ack;
	struct solo s;
	uint64_t t0 = 30000;

	solo_warm(&s, 0);
	solo_cts(&s, 1, 1000, t0);
	assert_int_equal(xp_post_send(s.core, s.conn, &(struct xp_buf){ 0x5000, 1000, 3 }, 1, t0),
			 0);
	assert_int_equal(solo_drain(&s, t0), 1);
	solo_until(&s, &xp_core_stats(s.core)->chunks_retx); /* the probe resends it */
	ack = solo_ack(&s, 1, 1, true, 0, false);          /* the original's echo */
	assert_int_equal(solo_inject(&s, &ack, t0 + 150000), 1);
	assert_int_equal(xp_core_stats(s.core)->rtt_samples, 2);
	assert_int_equal(xp_core_stats(s.core)->spurious_retx, 1);
	assert_int_equal(xp_conn_info(s.core, s.conn, &info), 0);
	assert_int_equal(info.srtt_ns, 20000 - 20000 / 8 + 150000 / 8);
	assert_true(info.rttvar_ns > 10000);
	solo_fini(&s);
}

/*
 * Karn: an ACK of new data whose echo is ambiguous (the third transmission shares the first's
 * parity) keeps the backoff; the next valid sample clears it.
 */
static void test_backoff_is_cleared_only_by_a_valid_sample(void **state)
{
	struct xp_conn_info info;
	struct xp_rec ack;
	struct solo s;
	uint64_t t0 = 30000, t;
	uint32_t backoff;

	solo_warm(&s, 0);
	solo_cts(&s, 1, 1000, t0);
	assert_int_equal(xp_post_send(s.core, s.conn, &(struct xp_buf){ 0x5000, 1000, 3 }, 1, t0),
			 0);
	assert_int_equal(solo_drain(&s, t0), 1);
	solo_until(&s, &xp_core_stats(s.core)->rto_fires);
	t = solo_until(&s, &xp_core_stats(s.core)->rto_fires);
	assert_int_equal(xp_conn_info(s.core, s.conn, &info), 0);
	backoff = info.rto_backoff;
	assert_true(backoff >= 2);
	ack = solo_ack(&s, 1, 1, true, 0, false);
	assert_int_equal(solo_inject(&s, &ack, t + 5000), 1);
	solo_drain(&s, t + 5000);
	assert_int_equal(solo_comp(&s, XP_COMP_SEND, 1)->status, 0);
	assert_int_equal(xp_conn_info(s.core, s.conn, &info), 0);
	assert_int_equal(info.rto_backoff, backoff);

	t += 10000;
	solo_cts(&s, 2, 1000, t);
	assert_int_equal(xp_post_send(s.core, s.conn, &(struct xp_buf){ 0x5000, 1000, 3 }, 2, t),
			 0);
	assert_int_equal(solo_drain(&s, t), 1);
	ack = solo_ack(&s, 2, 1, true, 0, false);
	assert_int_equal(solo_inject(&s, &ack, t + 20000), 1);
	assert_int_equal(xp_conn_info(s.core, s.conn, &info), 0);
	assert_int_equal(info.rto_backoff, 0);
	solo_fini(&s);
}

/*
 * RFC 6298 5.4: an expiry retransmits the earliest outstanding chunk (not the window), then
 * backs off; the rest waits for RACK or the next expiry.
 */
static void test_rto_retransmits_the_earliest_outstanding_chunk_then_backs_off(void **state)
{
	struct xp_buf b = { 0x5000, 4 * 65536, 3 };
	struct xp_conn_info info;
	struct xp_write w[8];
	struct xp_imm f;
	struct solo s;
	uint64_t t0 = 30000, t, rto;

	solo_warm(&s, 0);
	solo_cts(&s, 1, b.len, t0);
	assert_int_equal(xp_post_send(s.core, s.conn, &b, 1, t0), 0);
	assert_int_equal(solo_drain(&s, t0), 4);
	t = solo_until(&s, &xp_core_stats(s.core)->rto_fires);
	assert_int_equal(xp_conn_info(s.core, s.conn, &info), 0);
	rto = info.rto_ns; /* backed off once */
	assert_int_equal(solo_writes(&s, w, 8), 1);
	xp_imm_decode(w[0].imm, &f);
	assert_int_equal(f.chunk, 0);
	assert_int_equal(xp_core_next_deadline(s.core), t + rto);
	solo_fini(&s);
}

/*
 * The RTO runs from the earliest outstanding transmission (Linux): ACKs of another message
 * that keep coming do not push it back, so a lost retransmission is resent one RTO after it
 * went, and RACK, which leaves it alone while it is out, does not resend it every round.
 */
static void test_rto_runs_from_the_earliest_outstanding_transmission(void **state)
{
	struct xp_buf a = { 0x5000, 1000, 3 }, bb = { 0x9000, 1 << 20, 3 };
	struct xp_write w[16];
	struct solo s;
	uint64_t t0 = 30000, t;
	uint32_t a_tx = 1;

	solo_warm(&s, 64 << 10);
	solo_cts(&s, 1, a.len, t0);
	solo_cts(&s, 2, bb.len, t0);
	assert_int_equal(xp_post_send(s.core, s.conn, &a, 1, t0), 0);
	assert_int_equal(xp_post_send(s.core, s.conn, &bb, 2, t0), 0);
	solo_drain(&s, t0);
	/* B's chunks are acknowledged one every 20 us; A's never is */
	for (uint16_t k = 0; k < 20; k++) {
		struct xp_rec ack = solo_ack(&s, 2, (uint16_t)(k + 1), false, k, false);

		t = t0 + 20000ull * (k + 1);
		while (xp_core_next_deadline(s.core) <= t) {
			uint64_t d = xp_core_next_deadline(s.core);
			uint32_t n;

			xp_core_timer(s.core, d);
			solo_drain(&s, d);
			n = solo_writes(&s, w, 16);
			for (uint32_t i = 0; i < n; i++) {
				struct xp_imm f;

				xp_imm_decode(w[i].imm, &f);
				a_tx += f.slot == 1;
			}
		}
		assert_int_equal(solo_inject(&s, &ack, t), 1);
		solo_drain(&s, t);
		for (uint32_t i = 0, n = solo_writes(&s, w, 16); i < n; i++) {
			struct xp_imm f;

			xp_imm_decode(w[i].imm, &f);
			a_tx += f.slot == 1;
		}
	}
	/* in 400 us: the original, RACK's retransmission, then one per RTO, which did fire */
	assert_true(xp_core_stats(s.core)->rto_fires >= 1);
	assert_int_equal(xp_core_stats(s.core)->rack_losses, 1);
	assert_int_equal(a_tx, 2 + xp_core_stats(s.core)->rto_fires);
	solo_fini(&s);
}

/*
 * A receive-only side has no RTT sample of its own; it times its CTS retransmission on the
 * time from a CTS to its message's first chunk (10 us here), not on the 1 ms initial RTO.
 */
static void test_cts_timer_of_a_receive_only_side_uses_its_own_estimate(void **state)
{
	static uint8_t src[1000], dst[1000];
	struct tx_log l;
	struct pair p;
	uint64_t t0;

	warm_pair(&p, &l, false);
	l.drop_cts = 1;
	l.cts_seq = 1;
	t0 = run_second(&p, src, dst, sizeof(src), 100000000);
	/* the CTS goes again 10 + 100 us after the first (not 1 ms), then one RTT and a half */
	assert_true(pair_find(&p, 0, XP_COMP_SEND, 2)->t_ns - t0 <= 150000);
	pair_done(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_late_ack_on_a_steady_path_is_not_an_rto),
		cmocka_unit_test(test_spurious_retransmission_teaches_the_estimator),
		cmocka_unit_test(test_backoff_is_cleared_only_by_a_valid_sample),
		cmocka_unit_test(test_rto_retransmits_the_earliest_outstanding_chunk_then_backs_off),
		cmocka_unit_test(test_rto_runs_from_the_earliest_outstanding_transmission),
		cmocka_unit_test(test_cts_timer_of_a_receive_only_side_uses_its_own_estimate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
