// SPDX-License-Identifier: MIT
/*
 * test_xp_close.c - closing: graceful (outstanding work finishes, what the
 * peer can never match fails), abortive (everything fails, the peer is
 * reset), the no-progress timeout, write errors, and what a closed
 * connection still answers.
 */
#include "test_xp_pair.h"

static const struct pair_comp *must(const struct pair_comp *c)
{
	assert_non_null(c);
	return c;
}

static uint32_t log_index(const struct pair *p, const struct pair_comp *c)
{
	return (uint32_t)(c - p->log);
}

static void test_graceful_close_finishes_outstanding_work(void **state)
{
	static uint8_t src[1 << 20], dst[1 << 20];
	const struct pair_comp *send, *close_a;
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.cwnd_bytes = 65536; /* a slow send: many round trips */
	pair_init(&p, &o);
	fill_pattern(src, sizeof(src), 1);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	assert_int_equal(xp_conn_close(pair_core(&p, 0), p.conn[0], XP_CLOSE_GRACEFUL, pair_now(&p)),
			 0);
	xp_net_kick(p.net, 0);
	assert_int_equal(pair_send(&p, 0, src, 10, 3), -ESHUTDOWN);
	assert_int_equal(xp_conn_close(pair_core(&p, 0), p.conn[0], XP_CLOSE_GRACEFUL, pair_now(&p)),
			 -EALREADY);
	pair_run(&p, pair_now(&p) + 1000000000);
	send = must(pair_find(&p, 0, XP_COMP_SEND, 2));
	close_a = must(pair_find(&p, 0, XP_COMP_CLOSE, 0));
	assert_int_equal(send->c.status, 0);
	assert_int_equal(close_a->c.status, 0);
	assert_true(log_index(&p, send) < log_index(&p, close_a));
	assert_memory_equal(src, dst, sizeof(src));
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void test_graceful_close_fails_what_the_peer_never_matches(void **state)
{
	static uint8_t src[3000], dst[3000];
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	pair_init(&p, &o);
	for (int k = 0; k < 3; k++)
		assert_int_equal(pair_send(&p, 0, src + 1000 * k, 1000, 10 + (uint64_t)k), 0);
	assert_int_equal(pair_recv(&p, 1, dst, 1000, 20), 0);
	pair_run(&p, pair_now(&p) + 1000000);
	/* b will take one message only */
	assert_int_equal(xp_conn_close(pair_core(&p, 1), p.conn[1], XP_CLOSE_GRACEFUL, pair_now(&p)),
			 0);
	xp_net_kick(p.net, 1);
	pair_run(&p, pair_now(&p) + 1000000);
	assert_int_equal(must(pair_find(&p, 0, XP_COMP_SEND, 10))->c.status, 0);
	assert_int_equal(must(pair_find(&p, 0, XP_COMP_SEND, 11))->c.status, -ECONNRESET);
	assert_int_equal(must(pair_find(&p, 0, XP_COMP_SEND, 12))->c.status, -ECONNRESET);
	assert_int_equal(must(pair_find(&p, 1, XP_COMP_RECV, 20))->c.status, 0);
	/* after b's FIN, a can no longer post a receive b would never fill */
	assert_int_equal(pair_recv(&p, 0, dst + 1000, 100, 30), -ECONNRESET);
	assert_int_equal(pair_send(&p, 0, src, 10, 31), -ECONNRESET);
	assert_int_equal(must(pair_find(&p, 1, XP_COMP_CLOSE, 0))->c.status, 0);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void test_abort_fails_everything_and_resets_the_peer(void **state)
{
	static uint8_t src[1 << 20], dst[1 << 20], back[1000];
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.cwnd_bytes = 65536;
	pair_init(&p, &o);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	assert_int_equal(pair_recv(&p, 0, back, sizeof(back), 2), 0); /* never sent */
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 3), 0);
	pair_run(&p, pair_now(&p) + 30000); /* in the middle of the transfer */
	assert_int_equal(xp_conn_close(pair_core(&p, 0), p.conn[0], XP_CLOSE_ABORT, pair_now(&p)), 0);
	xp_net_kick(p.net, 0);
	pair_run(&p, pair_now(&p) + 1000000);
	assert_int_equal(must(pair_find(&p, 0, XP_COMP_SEND, 3))->c.status, -ECANCELED);
	assert_int_equal(must(pair_find(&p, 0, XP_COMP_RECV, 2))->c.status, -ECANCELED);
	assert_int_equal(must(pair_find(&p, 0, XP_COMP_CLOSE, 0))->c.status, -ECANCELED);
	assert_int_equal(must(pair_find(&p, 1, XP_COMP_RECV, 1))->c.status, -ECONNRESET);
	assert_int_equal(pair_send(&p, 1, back, 10, 4), -ECONNRESET);
	/* b was reset: its close completes at once, with why */
	assert_null(pair_find(&p, 1, XP_COMP_CLOSE, 0));
	pair_close_and_check_clean(&p);
	assert_int_equal(must(pair_find(&p, 1, XP_COMP_CLOSE, 0))->c.status, -ECONNRESET);
	pair_fini(&p);
}

static void test_no_progress_fails_with_etimedout(void **state)
{
	static uint8_t src[1000], dst[1000];
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.no_progress_ns = 2000000;
	o.link.n_outages = 1; /* the data path dies for good after 100 us */
	o.link.outage[0].start_ns = 100000;
	o.link.outage[0].end_ns = UINT64_MAX;
	pair_init(&p, &o);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	xp_net_run_until(p.net, 200000); /* the CTS is through; the path has died */
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	pair_run(&p, pair_now(&p) + 100000000);
	assert_int_equal(must(pair_find(&p, 0, XP_COMP_SEND, 2))->c.status, -ETIMEDOUT);
	/* after no progress for the limit, not before */
	assert_true(pair_find(&p, 0, XP_COMP_SEND, 2)->t_ns >= 200000 + 2000000);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->conns_timed_out, 1);
	/* the peer was told (RESET over the control path, which still works) */
	assert_int_equal(must(pair_find(&p, 1, XP_COMP_RECV, 1))->c.status, -ECONNRESET);
	assert_int_equal(pair_send(&p, 0, src, 10, 3), -ETIMEDOUT);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void test_write_error_fails_the_connection_with_eio(void **state)
{
	struct xp_buf b = { 0x5000, 1000, 3 };
	struct xp_write w = { 0 };
	struct xp_rec recs[8];
	struct solo s;
	uint32_t n;

	solo_init(&s, 0, NULL);
	solo_cts(&s, 0, 1000, 0);
	assert_int_equal(xp_post_send(s.core, s.conn, &b, 1, 0), 0);
	solo_drain(&s, 0);
	assert_int_equal(solo_writes(&s, &w, 1), 1);
	/* a stale token (another nonce) is ignored */
	xp_core_on_write_done(s.core, w.token ^ (1ull << 40), -EIO, 10);
	assert_int_equal(solo_drain(&s, 10), 0);
	xp_core_on_write_done(s.core, w.token, 0, 10); /* success: nothing to do */
	xp_core_on_write_done(s.core, w.token, -EIO, 20);
	solo_drain(&s, 20);
	assert_int_equal(solo_comp(&s, XP_COMP_SEND, 1)->status, -EIO);
	n = solo_records(&s, recs, 8);
	assert_int_equal(n, 1);
	assert_int_equal(recs[0].type, XP_REC_RESET);
	assert_int_equal(recs[0].u.reason, XP_RESET_IO);
	assert_int_equal(xp_post_send(s.core, s.conn, &b, 2, 30), -EIO);
	solo_fini(&s);
}

static void test_closed_connection_still_answers_its_peer(void **state)
{
	struct xp_rec recs[8], r;
	struct solo s;
	uint32_t n;

	solo_init(&s, 0, NULL);
	assert_int_equal(xp_conn_close(s.core, s.conn, XP_CLOSE_GRACEFUL, 0), 0);
	solo_drain(&s, 0);
	n = solo_records(&s, recs, 8);
	assert_int_equal(n, 1);
	assert_int_equal(recs[0].type, XP_REC_FIN);
	assert_int_equal(recs[0].u.fin.sends_total, 0);
	assert_int_equal(recs[0].u.fin.recvs_total, 0);
	/* the FIN is retransmitted until acknowledged */
	xp_core_timer(s.core, xp_core_next_deadline(s.core));
	solo_drain(&s, 1);
	assert_int_equal(solo_records(&s, recs, 8), 1);
	assert_int_equal(recs[0].type, XP_REC_FIN);
	assert_int_equal(solo_inject(&s, &(struct xp_rec){ .type = XP_REC_FIN_ACK, .conn = (uint16_t)s.conn,
							   .nonce = s.nonce }, 100), 1);
	solo_drain(&s, 100);
	assert_non_null(solo_comp(&s, XP_COMP_CLOSE, 0));
	/* quarantined: a FIN from the peer still gets its FIN_ACK */
	r = solo_rec(&s, XP_REC_FIN);
	assert_int_equal(solo_inject(&s, &r, 200), 1);
	solo_drain(&s, 200);
	assert_int_equal(solo_records(&s, recs, 8), 1);
	assert_int_equal(recs[0].type, XP_REC_FIN_ACK);
	/* after the quarantine the id is free: the old nonce names nothing */
	xp_core_timer(s.core, 2000000000);
	assert_int_equal(solo_inject(&s, &r, 2000000000), 0);
	assert_int_equal(drops(s.core, XP_DROP_REC_UNKNOWN_CONN), 1);
	solo_fini(&s);
}

static void test_aborted_connection_resets_whoever_writes_to_it(void **state)
{
	struct xp_rec recs[8], r;
	struct solo s;

	solo_init(&s, 0, NULL);
	assert_int_equal(xp_conn_close(s.core, s.conn, XP_CLOSE_ABORT, 0), 0);
	solo_drain(&s, 0);
	assert_int_equal(solo_records(&s, recs, 8), 1);
	assert_int_equal(recs[0].type, XP_REC_RESET);
	assert_int_equal(recs[0].u.reason, XP_RESET_ABORT);
	assert_int_equal(solo_comp(&s, XP_COMP_CLOSE, 0)->status, -ECANCELED);
	/* a CTS still in flight meets a RESET */
	r = solo_rec(&s, XP_REC_CTS);
	r.u.cts.cap = 10;
	solo_inject(&s, &r, 10);
	solo_drain(&s, 10);
	assert_int_equal(solo_records(&s, recs, 8), 1);
	assert_int_equal(recs[0].type, XP_REC_RESET);
	/* RESET_ACK stops the retransmissions */
	assert_int_equal(solo_inject(&s, &(struct xp_rec){ .type = XP_REC_RESET_ACK,
							   .conn = (uint16_t)s.conn, .nonce = s.nonce },
				     20),
			 1);
	solo_drain(&s, 20);
	xp_core_timer(s.core, 50000000);
	assert_int_equal(solo_drain(&s, 50000000), 0);
	solo_fini(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_graceful_close_finishes_outstanding_work),
		cmocka_unit_test(test_graceful_close_fails_what_the_peer_never_matches),
		cmocka_unit_test(test_abort_fails_everything_and_resets_the_peer),
		cmocka_unit_test(test_no_progress_fails_with_etimedout),
		cmocka_unit_test(test_write_error_fails_the_connection_with_eio),
		cmocka_unit_test(test_closed_connection_still_answers_its_peer),
		cmocka_unit_test(test_aborted_connection_resets_whoever_writes_to_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
