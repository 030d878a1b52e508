// SPDX-License-Identifier: MIT
/*
 * test_xp_recovery.c - loss recovery: RTT samples and Karn's rule, RACK's
 * reordering window (its growth on duplicates, its persistence per recovery
 * episode), per-path RACK under spraying, a chunk never marked lost again
 * while its retransmission is out, the tail-loss probe (RFC 8985 7.2-7.4),
 * the RTO (selective, backed off), RC mode, and a lost final ACK.
 *
 * Pair tests: 5 us each way, so a 10 us RTT; rto_min (the RTO's variance
 * floor) is 100 us. test_xp_rto.c has the RTO's own rules.
 */
#include "test_xp_txlog.h"

static void test_rtt_sample_excludes_receiver_hold(void **state)
{
	struct xp_conn_info info;
	struct xp_rec ack;
	struct solo s;
	struct xp_buf b = { 0x5000, 1000, 3 };

	solo_init(&s, 0, NULL);
	solo_cts(&s, 0, 1000, 0);
	assert_int_equal(xp_post_send(s.core, s.conn, &b, 1, 100), 0);
	assert_int_equal(solo_drain(&s, 100), 1);
	ack = solo_rec(&s, XP_REC_ACK);
	ack.u.ack = (struct xp_rec_ack){ .msg_seq = 0, .cum = 1, .complete = true,
					 .echo_valid = true, .echo_chunk = 0, .hold_ns = 3000 };
	assert_int_equal(solo_inject(&s, &ack, 10100), 1);
	assert_int_equal(xp_conn_info(s.core, s.conn, &info), 0);
	assert_int_equal(info.srtt_ns, 7000); /* 10 us elapsed, 3 us of it held at the receiver */
	assert_int_equal(info.min_rtt_ns, 7000);
	assert_int_equal(info.path_rtt_ns[0], 7000);
	solo_drain(&s, 10100);
	assert_int_equal(solo_comp(&s, XP_COMP_SEND, 1)->status, 0);
	solo_fini(&s);
}

/* Message @seq of one chunk (cookie @seq), transmitted @n times by RTOs; Return: the time. */
static uint64_t send_by_rtos(struct solo *s, uint32_t seq, unsigned n, uint64_t t)
{
	struct xp_buf b = { 0x5000, 1000, 3 };

	solo_cts(s, seq, 1000, t);
	assert_int_equal(xp_post_send(s->core, s->conn, &b, seq, t), 0);
	assert_int_equal(solo_drain(s, t), 1);
	for (unsigned k = 1; k < n; k++) {
		t = xp_core_next_deadline(s->core);
		xp_core_timer(s->core, t);
		while (!solo_drain(s, t)) { /* the TLP does not count: skip to the RTO */
			t = xp_core_next_deadline(s->core);
			xp_core_timer(s->core, t);
		}
	}
	return t;
}

/* send_by_rtos(), then an ACK echoing @parity. */
static uint64_t karn_case(struct solo *s, uint32_t seq, unsigned n, bool parity, uint64_t t)
{
	struct xp_rec ack;

	t = send_by_rtos(s, seq, n, t) + 5000;
	ack = solo_rec(s, XP_REC_ACK);
	ack.u.ack = (struct xp_rec_ack){ .msg_seq = seq, .cum = 1, .complete = true,
					 .echo_valid = true, .echo_chunk = 0,
					 .echo_parity = parity };
	assert_int_equal(solo_inject(s, &ack, t), 1);
	solo_drain(s, t);
	assert_int_equal(solo_comp(s, XP_COMP_SEND, seq)->status, 0);
	return t + 1000;
}

static void test_karn_skips_ambiguous_samples(void **state)
{
	const struct xp_core_stats *st;
	struct xp_conn_info info;
	struct solo s;
	uint64_t t;

	solo_init(&s, 0, NULL);
	st = xp_core_stats(s.core);
	/* two transmissions, echo names the first: the original, a sample from its send time */
	t = karn_case(&s, 0, 2, false, 0);
	assert_int_equal(st->rtt_samples, 1);
	assert_int_equal(st->karn_skipped, 0);
	/* three transmissions: parity 0 is the first or the third, skipped */
	t = karn_case(&s, 1, 3, false, t);
	assert_int_equal(st->rtt_samples, 1);
	assert_int_equal(st->karn_skipped, 1);
	/* two transmissions, echo names the second: a clean sample */
	t = karn_case(&s, 2, 2, true, t);
	assert_int_equal(st->rtt_samples, 2);
	/* three transmissions, parity 1: only the second had it, a clean sample */
	t = karn_case(&s, 3, 3, true, t);
	assert_int_equal(st->rtt_samples, 3);
	/* four: parity 0 is the first or the third, skipped */
	karn_case(&s, 4, 4, false, t);
	assert_int_equal(st->rtt_samples, 3);
	assert_int_equal(st->karn_skipped, 2);
	assert_true(st->chunks_retx >= 4);
	/* the core's only connection: its own counts are the core's */
	assert_int_equal(xp_conn_info(s.core, s.conn, &info), 0);
	assert_int_equal(info.chunks_retx, st->chunks_retx);
	assert_int_equal(info.rto_fires, st->rto_fires);
	assert_true(info.rto_fires >= 1);
	solo_fini(&s);
}

static void test_rack_marks_lost_only_after_reorder_window(void **state)
{
	static uint8_t src[4 * 65536], dst[4 * 65536];
	struct xp_conn_info info;
	struct tx_log l;
	struct pair p;
	uint64_t t0;

	warm_pair(&p, &l, false);
	l.drop_tx[1][0] = 1; /* chunk 0's first transmission is lost */
	t0 = run_second(&p, src, dst, sizeof(src), 10000000);
	assert_int_equal(xp_conn_info(pair_core(&p, 0), p.conn[0], &info), 0);
	assert_int_equal(info.min_rtt_ns, 10000);
	assert_int_equal(info.reo_wnd_ns, 2500);
	/* 4 first transmissions, then chunk 0 again: at sent + RACK.rtt + reo_wnd, not before */
	assert_int_equal(l.n, 5);
	assert_int_equal(l.chunk[4], 0);
	assert_true(l.parity[4]);
	assert_int_equal(l.t[4] - t0, 10000 + 2500);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rack_losses, 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 0);
	/* the connection's own counts (pcmctl flows): the one retransmission, no RTO */
	assert_int_equal(xp_conn_info(pair_core(&p, 0), p.conn[0], &info), 0);
	assert_int_equal(info.chunks_retx, 1);
	assert_int_equal(info.rto_fires, 0);
	pair_done(&p);
}

static void test_reordering_inside_the_window_is_not_loss(void **state)
{
	static uint8_t src[4 * 65536], dst[4 * 65536];
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.delay_tx0_ns[0] = 2000; /* chunk 0 late by 2 us < reo_wnd 2.5 us */
	run_second(&p, src, dst, sizeof(src), 10000000);
	assert_int_equal(l.n, 4);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->chunks_retx, 0);
	pair_done(&p);
}

static void test_spurious_retransmission_grows_reorder_window(void **state)
{
	static uint8_t src[4 * 65536], dst[4 * 65536];
	struct xp_conn_info info;
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.delay_tx0_ns[0] = 6000; /* late by 6 us: RACK resends it, then both copies arrive */
	l.drop_tx[1][3] = 1;      /* and the receive stays open meanwhile */
	run_second(&p, src, dst, sizeof(src), 10000000);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->chunks_retx, 2);
	assert_int_equal(xp_core_stats(pair_core(&p, 1))->drops[XP_DROP_IMM_DUP], 1);
	/* the receiver said "duplicate seen": reo_wnd grew by min_RTT/4 */
	assert_int_equal(xp_conn_info(pair_core(&p, 0), p.conn[0], &info), 0);
	assert_int_equal(info.chunks_retx, 2);
	assert_int_equal(info.reo_wnd_ns, 2 * 2500);
	pair_done(&p);
}

/*
 * As above but the receive completes before the retransmission lands, so the rkey refuses it
 * and the receiver never reports a duplicate: the echo of chunk 0's first transmission, arriving
 * after the retransmission went, is what shows it needless.
 */
static void test_spurious_retransmission_seen_by_the_echo_grows_reorder_window(void **state)
{
	static uint8_t src[4 * 65536], dst[4 * 65536];
	struct xp_conn_info info;
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.delay_tx0_ns[0] = 6000; /* late by 6 us: RACK resends it at 12.5 us, it arrives at 11 */
	run_second(&p, src, dst, sizeof(src), 10000000);
	assert_int_equal(l.n, 5);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->chunks_retx, 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 1))->drops[XP_DROP_IMM_DUP], 0);
	/* no duplicate report, yet reo_wnd grew by min_RTT/4, and the connection counts it */
	assert_int_equal(xp_conn_info(pair_core(&p, 0), p.conn[0], &info), 0);
	assert_int_equal(info.reo_wnd_ns, 2 * 2500);
	assert_int_equal(info.spurious_retx, 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->spurious_retx, 1);
	pair_done(&p);
}

/*
 * A spurious timeout as on a loaded host (before any sample the probe goes at the initial
 * RTO's time, in its place): the one chunk and its retransmission reach the receiver
 * together, so the ACK echoes the retransmission and says "duplicate seen". Another such
 * record for the same transmission does not count again.
 */
static void test_duplicate_report_marks_the_echoed_retransmission_spurious(void **state)
{
	struct xp_conn_info info;
	struct xp_rec ack;
	struct solo s;
	uint64_t t;

	solo_init(&s, 0, NULL);
	t = send_by_rtos(&s, 0, 2, 0);
	assert_int_equal(xp_core_stats(s.core)->rto_fires + xp_core_stats(s.core)->tlp_fires, 1);
	assert_int_equal(xp_core_stats(s.core)->chunks_retx, 1);
	ack = solo_rec(&s, XP_REC_ACK);
	ack.u.ack = (struct xp_rec_ack){ .msg_seq = 0, .cum = 1, .echo_valid = true,
					 .echo_chunk = 0, .echo_parity = true, .dup_seen = true };
	assert_int_equal(solo_inject(&s, &ack, t + 5000), 1);
	assert_int_equal(solo_inject(&s, &ack, t + 6000), 1);
	assert_int_equal(xp_core_stats(s.core)->spurious_retx, 1);
	assert_int_equal(xp_conn_info(s.core, s.conn, &info), 0);
	assert_int_equal(info.spurious_retx, 1);
	solo_fini(&s);
}

/* A retransmission whose own copy arrived (the echo names it) is not spurious. */
static void test_needed_retransmission_is_not_spurious(void **state)
{
	static uint8_t src[4 * 65536], dst[4 * 65536];
	struct xp_conn_info info;
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.drop_tx[1][0] = 1;
	run_second(&p, src, dst, sizeof(src), 10000000);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->chunks_retx, 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->spurious_retx, 0);
	assert_int_equal(xp_conn_info(pair_core(&p, 0), p.conn[0], &info), 0);
	assert_int_equal(info.reo_wnd_ns, 2500);
	pair_done(&p);
}

/* A paced second chunk restarts the probe timer (RFC 8985 7.2): PTO runs from the newest send. */
static void test_tlp_runs_from_the_newest_transmission(void **state)
{
	struct xp_buf b = { 0x5000, 2 * 65536, 3 };
	struct xp_conn_info info;
	struct solo s;
	uint64_t t0, t1;

	solo_warm(&s, 0);
	assert_int_equal(xp_conn_info(s.core, s.conn, &info), 0);
	assert_int_equal(info.srtt_ns, 20000); /* PTO 40 us, RTO 120 us */

	s.cc.rate = PCM_RATE_ONE / 4; /* a 64 KiB chunk every 21 us at 100 Gbit/s */
	t0 = 30000;
	solo_cts(&s, 1, b.len, t0);
	assert_int_equal(xp_post_send(s.core, s.conn, &b, 2, t0), 0);
	assert_int_equal(solo_drain(&s, t0), 1);
	t1 = t0;
	do {
		t1 = xp_core_next_deadline(s.core);
		assert_true(t1 < t0 + 40000); /* the pacer's turn comes before the probe */
		xp_core_timer(s.core, t1);
	} while (!solo_drain(&s, t1));
	assert_true(t1 - t0 >= 20000);
	/* the probe goes a PTO after the second chunk; before, a PTO after the first (t0 + 40 us) */
	while (!xp_core_stats(s.core)->tlp_fires) {
		uint64_t t = xp_core_next_deadline(s.core);

		xp_core_timer(s.core, t);
		if (xp_core_stats(s.core)->tlp_fires)
			assert_int_equal(t, t1 + 40000);
		solo_drain(&s, t);
	}
	assert_int_equal(xp_core_stats(s.core)->rto_fires, 0);
	solo_fini(&s);
}

static void test_tlp_probes_a_lost_tail(void **state)
{
	static uint8_t src[1000], dst[1000];
	struct tx_log l;
	struct pair p;
	uint64_t t0;

	warm_pair(&p, &l, false);
	l.drop_tx[1][0] = 1; /* the only chunk: no later delivery can reveal the loss */
	t0 = run_second(&p, src, dst, sizeof(src), 10000000);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->tlp_fires, 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.t[1] - t0, 2 * 10000); /* PTO = 2 x SRTT */
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 2)->t_ns - t0, 30000);
	pair_done(&p);
}

static void test_rto_retransmits_only_what_was_lost(void **state)
{
	static uint8_t src[8 * 65536], dst[8 * 65536];
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	for (int c = 4; c < 8; c++)
		l.drop_tx[1][c] = 1;
	l.drop_tx[1][7] = 3; /* and the tail probe, which resends chunk 7 */
	run_second(&p, src, dst, sizeof(src), 100000000);
	/*
	 * The RTO resends chunk 4, the earliest outstanding; its delivery shows 5 and 6 lost to
	 * RACK; the probe (chunk 7 again) is a retransmission RACK leaves to the RTO, which runs
	 * from it and is overdue when the ACK of chunk 4 restarts the timer: a second expiry.
	 */
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 2);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rack_losses, 2);
	assert_int_equal(l.n, 8 + 1 + 4);
	for (uint32_t i = 8; i < l.n; i++)
		assert_true(l.chunk[i] >= 4); /* chunks 0..3 were acknowledged: never sent again */
	pair_done(&p);
}

static void test_selective_retransmission_fills_only_the_holes(void **state)
{
	static uint8_t src[10 * 65536], dst[10 * 65536];
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.drop_tx[1][2] = 1;
	l.drop_tx[1][5] = 1;
	run_second(&p, src, dst, sizeof(src), 10000000);
	assert_int_equal(l.n, 12);
	assert_int_equal(l.chunk[10] + l.chunk[11], 2 + 5);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 0);
	pair_done(&p);
}

static void test_rto_restarts_from_the_probe_and_backs_off(void **state)
{
	static uint8_t src[1000], dst[1000];
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.drop_tx[1][0] = 0x3f; /* six transmissions lost */
	run_second(&p, src, dst, sizeof(src), 1000000000);
	/*
	 * original, tail probe at 2 SRTT, then RTOs from the probe: SRTT + rto_min = 110 us,
	 * doubling
	 */
	assert_int_equal(l.n, 7);
	assert_int_equal(l.t[1] - l.t[0], 20000);
	assert_int_equal(l.t[2] - l.t[1], 110000);
	for (uint32_t i = 3; i < l.n; i++)
		assert_int_equal(l.t[i] - l.t[i - 1], 110000ull << (i - 2));
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 5);
	pair_done(&p);
}

static void test_rc_mode_never_retransmits(void **state)
{
	static uint8_t src[3 * 65536], dst[3 * 65536];
	struct tx_log l;
	struct pair p;
	uint64_t t0;

	warm_pair(&p, &l, true);
	t0 = send_second(&p, src, dst, sizeof(src));
	l.drop_acks_until = true;
	l.ack_until_ns = t0 + 300000; /* every ACK of the first 300 us is lost */
	pair_run(&p, pair_now(&p) + 100000000);
	expect_delivered(&p, src, dst, sizeof(src));
	assert_int_equal(l.n, 3);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->chunks_retx, 0);
	assert_true(xp_core_stats(pair_core(&p, 0))->rto_fires >= 1); /* it asked with ACK_REQ */
	pair_done(&p);
}

/*
 * A lost final ACK: the receive completed and its rkey is gone, so the tail probe's
 * retransmission is refused by the NIC; it carries an ACK request, whose answer finishes the
 * send about one RTT after the probe instead of at the RTO.
 */
static void test_lost_final_ack_costs_about_one_rtt(void **state)
{
	static uint8_t src[1000], dst[1000];
	struct tx_log l;
	struct pair p;
	uint64_t t0;

	warm_pair(&p, &l, false);
	l.drop_complete_acks = 1;
	t0 = run_second(&p, src, dst, sizeof(src), 100000000);
	assert_true(xp_net_stats(p.net)->rkey_drops >= 1);
	/* probe at 2 SRTT (20 us), its ACK request answered 10 us later */
	assert_true(pair_find(&p, 0, XP_COMP_SEND, 2)->t_ns - t0 <= 40000);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 0);
	pair_done(&p);
}

/*
 * The same with 15 messages sent behind it, one every 5 us: their ACKs show the chunk lost
 * once; its retransmission (refused) carries an ACK request, and RACK does not mark it lost
 * again while that retransmission is out, so congestion control hears of one loss, not one
 * per round.
 */
static void test_lost_final_ack_behind_other_messages_is_lost_once(void **state)
{
	static uint8_t src[16][1000], dst[16][1000];
	struct tx_log l;
	struct pair p;
	uint64_t t0;

	warm_pair(&p, &l, false);
	l.drop_complete_acks = 1;
	for (int k = 0; k < 16; k++)
		assert_int_equal(pair_recv(&p, 1, dst[k], sizeof(dst[k]), 1 + (uint64_t)k), 0);
	pair_run(&p, pair_now(&p) + 100000);
	t0 = pair_now(&p);
	for (int k = 0; k < 16; k++) {
		pair_run(&p, t0 + 5000ull * (uint64_t)k);
		assert_int_equal(pair_send(&p, 0, src[k], sizeof(src[k]), 200 + (uint64_t)k), 0);
	}
	pair_run(&p, pair_now(&p) + 100000000);
	for (int k = 0; k < 16; k++)
		assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 200 + (uint64_t)k)->c.status, 0);
	assert_true(pair_find(&p, 0, XP_COMP_SEND, 200)->t_ns - t0 <= 40000);
	assert_true(txlog_count(&l, 1, 0) <= 2);
	assert_int_equal(p.cc[0].lost_chunks, 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rack_losses, 1);
	pair_done(&p);
}

/*
 * Spraying over paths of different delay (two of four paths 20 us slower), with no loss at
 * all: RACK judges each chunk against deliveries on its own path, so nothing is retransmitted.
 */
static void test_spraying_over_paths_of_different_delay_retransmits_nothing(void **state)
{
	static uint8_t src[5][4 << 20], dst[5][4 << 20];
	struct xp_link links[4];
	struct pair_opts o;
	struct tx_log l;
	struct pair p;
	uint32_t on_slow = 0;

	pair_default_opts(&o);
	o.n_paths = 4;
	o.tune = pair_one_chunk_size;
	for (int k = 0; k < 4; k++) {
		links[k] = o.link;
		links[k].delay_ns = k < 2 ? 5000 : 25000;
	}
	o.path_links = links;
	warm_pair_opts(&p, &l, &o);
	for (int k = 0; k < 5; k++)
		assert_int_equal(pair_recv(&p, 1, dst[k], sizeof(dst[k]), 1 + (uint64_t)k), 0);
	pair_run(&p, pair_now(&p) + 100000);
	for (int k = 0; k < 5; k++) {
		fill_pattern(src[k], sizeof(src[k]), (uint32_t)k);
		assert_int_equal(pair_send(&p, 0, src[k], sizeof(src[k]), 200 + (uint64_t)k), 0);
	}
	pair_run(&p, pair_now(&p) + 100000000);
	for (int k = 0; k < 5; k++) {
		assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 200 + (uint64_t)k)->c.status, 0);
		assert_memory_equal(src[k], dst[k], sizeof(src[k]));
	}
	for (uint32_t i = 0; i < l.n; i++)
		on_slow += l.path[i] >= 2;
	assert_int_equal(l.n, 5 * 64);
	assert_true(on_slow >= 16); /* the slow paths did carry chunks */
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->chunks_retx, 0);
	pair_done(&p);
}

/*
 * A lost retransmission is not marked lost again by RACK while it is out, however many later
 * deliveries pass it: the RTO (from its transmission) resends it.
 */
static void test_rack_leaves_an_outstanding_retransmission_to_the_rto(void **state)
{
	static uint8_t src[8 * 65536], dst[8 * 65536];
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	p.cc[0].rate = PCM_RATE_ONE / 16; /* a 64 KiB chunk every 84 us: deliveries keep coming */
	l.drop_tx[1][0] = 3;              /* chunk 0 and its first retransmission are lost */
	run_second(&p, src, dst, sizeof(src), 100000000);
	assert_int_equal(txlog_count(&l, 1, 0), 3);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rack_losses, 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 1);
	assert_int_equal(p.cc[0].lost_chunks, 1);
	pair_done(&p);
}

/*
 * RFC 8985 7.2: when the RTO would fire before the probe, the probe is sent at the RTO's time
 * (clamped, not suppressed), and 7.3: the RTO then restarts from the probe.
 */
static void test_tlp_is_clamped_to_the_rto_and_restarts_it(void **state)
{
	struct xp_buf b = { 0x5000, 6 * 65536, 3 };
	struct xp_conn_info info;
	struct xp_write w[4];
	struct solo s;
	uint64_t t0, t;
	uint32_t sent;

	solo_warm(&s, 0);
	assert_int_equal(xp_conn_info(s.core, s.conn, &info), 0); /* RTO 120 us, PTO 40 us */

	/* 6 chunks paced 21 us apart: the newest's PTO (t0 + 145 us) ends after the head's RTO */
	s.cc.rate = PCM_RATE_ONE / 4;
	t0 = 30000;
	solo_cts(&s, 1, b.len, t0);
	assert_int_equal(xp_post_send(s.core, s.conn, &b, 2, t0), 0);
	sent = solo_drain(&s, t0);
	while (sent < 6) {
		t = xp_core_next_deadline(s.core);
		xp_core_timer(s.core, t);
		sent += solo_drain(&s, t);
	}
	assert_int_equal(xp_core_stats(s.core)->tlp_fires + xp_core_stats(s.core)->rto_fires, 0);
	s.cc.rate = PCM_RATE_ONE; /* the probe is not held by the pacer */
	t = xp_core_next_deadline(s.core);
	xp_core_timer(s.core, t);
	assert_int_equal(xp_core_stats(s.core)->rto_fires, 0);
	assert_int_equal(xp_core_stats(s.core)->tlp_fires, 1);
	assert_int_equal(t, t0 + info.rto_ns); /* the head's RTO time */
	solo_drain(&s, t);
	assert_int_equal(solo_writes(&s, w, 4), 1); /* the probe (the newest chunk again) */
	/* 7.3: the RTO runs from the probe now */
	while (xp_core_next_deadline(s.core) < t + info.rto_ns) {
		uint64_t d = xp_core_next_deadline(s.core);

		xp_core_timer(s.core, d);
		solo_drain(&s, d);
	}
	assert_int_equal(xp_core_stats(s.core)->rto_fires, 0);
	xp_core_timer(s.core, t + info.rto_ns);
	assert_int_equal(xp_core_stats(s.core)->rto_fires, 1);
	solo_fini(&s);
}

/* 7.3: after a probe the RTO restarts from it. */
static void test_rto_restarts_after_a_probe(void **state)
{
	struct xp_conn_info info;
	struct solo s;
	uint64_t t;

	solo_warm(&s, 0);
	solo_cts(&s, 1, 1000, 30000);
	assert_int_equal(xp_post_send(s.core, s.conn, &(struct xp_buf){ 0x5000, 1000, 3 }, 2,
				      30000), 0);
	assert_int_equal(solo_drain(&s, 30000), 1);
	t = xp_core_next_deadline(s.core);
	assert_int_equal(t, 30000 + 40000); /* PTO = 2 SRTT */
	xp_core_timer(s.core, t);
	assert_int_equal(xp_core_stats(s.core)->tlp_fires, 1);
	assert_true(solo_drain(&s, t) >= 1);
	assert_int_equal(xp_conn_info(s.core, s.conn, &info), 0);
	assert_int_equal(xp_core_next_deadline(s.core), t + info.rto_ns);
	solo_fini(&s);
}

/* 7.4: a loss that only the probe repaired is a loss congestion control hears of. */
static void test_loss_repaired_by_the_probe_is_reported(void **state)
{
	static uint8_t src[1000], dst[1000];
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.drop_tx[1][0] = 1;
	run_second(&p, src, dst, sizeof(src), 10000000);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->tlp_fires, 1);
	assert_int_equal(p.cc[0].lost_chunks, 1);
	assert_int_equal(p.cc[0].loss_events, 1);
	pair_done(&p);
}

/* ... but a probe whose original arrived too (the echo names the original) repaired nothing. */
static void test_needless_probe_reports_no_loss(void **state)
{
	static uint8_t src[1000], dst[1000];
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.delay_tx0_ns[0] = 16000; /* the original arrives at 21 us, after the probe went at 20 */
	run_second(&p, src, dst, sizeof(src), 10000000);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->tlp_fires, 1);
	assert_int_equal(p.cc[0].lost_chunks, 0);
	pair_done(&p);
}

/*
 * No probe while RACK recovery is under way (RFC 8985 7.2): a lost retransmission is the
 * RTO's; a probe would only send it once more, early.
 */
static void test_no_probe_during_rack_recovery(void **state)
{
	static uint8_t src[4 * 65536], dst[4 * 65536];
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.drop_tx[1][0] = 3; /* chunk 0 and its retransmission */
	run_second(&p, src, dst, sizeof(src), 100000000);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->tlp_fires, 0);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 1);
	assert_int_equal(txlog_count(&l, 1, 0), 3);
	pair_done(&p);
}

/*
 * A grown reordering window lasts 16 recovery episodes (RFC 8985 6.2), not 16 detections:
 * one burst of 16 losses found one by one is one episode.
 */
static void tune_1k_chunks(struct xp_core_config *cfg)
{
	cfg->chunk_bytes = 1024;
	cfg->min_chunk_bytes = 1024;
}

static void test_grown_reorder_window_persists_per_recovery_episode(void **state)
{
	static uint8_t src[64 * 1024], dst[64 * 1024], src2[4096], dst2[4096];
	struct xp_conn_info info;
	struct pair_opts o;
	struct tx_log l;
	struct pair p;
	uint64_t grown;

	pair_default_opts(&o);
	o.tune = tune_1k_chunks;
	warm_pair_opts(&p, &l, &o);
	/* slot 1: chunk 0 late by 6 us: resent by RACK, then reported duplicate: reo_wnd grows */
	l.delay_tx0_ns[0] = 6000;
	l.drop_tx[1][3] = 1;
	fill_pattern(src2, sizeof(src2), 3);
	assert_int_equal(pair_recv(&p, 1, dst2, sizeof(dst2), 1), 0);
	pair_run(&p, pair_now(&p) + 100000);
	assert_int_equal(pair_send(&p, 0, src2, sizeof(src2), 2), 0);
	pair_run(&p, pair_now(&p) + 10000000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 2)->c.status, 0);
	assert_int_equal(xp_conn_info(pair_core(&p, 0), p.conn[0], &info), 0);
	grown = info.reo_wnd_ns;
	assert_true(grown > 2500);

	/* slot 2: 64 paced chunks, every even one of the first 32 lost: 16 losses, found apart */
	p.cc[0].rate = PCM_RATE_ONE / 8;
	for (int c = 0; c < 32; c += 2)
		l.drop_tx[2][c] = 1;
	fill_pattern(src, sizeof(src), 4);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 3), 0);
	pair_run(&p, pair_now(&p) + 100000);
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 4), 0);
	pair_run(&p, pair_now(&p) + 10000000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 4)->c.status, 0);
	assert_memory_equal(src, dst, sizeof(src));
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rack_losses, 1 + 16);
	assert_int_equal(xp_conn_info(pair_core(&p, 0), p.conn[0], &info), 0);
	assert_int_equal(info.reo_wnd_ns, grown);
	pair_done(&p);
}

/*
 * The parity bit flips on every transmission, however many: a counter of transmissions that
 * stops at 255 must not freeze it (every later echo would look like an earlier transmission's).
 */
static void tune_fast_rto_no_limit(struct xp_core_config *cfg)
{
	cfg->rto_initial_ns = 10000;
	cfg->rto_min_ns = 10000;
	cfg->rto_max_ns = 20000;
	cfg->no_progress_ns = 0;
}

static void test_parity_flips_on_every_transmission(void **state)
{
	struct xp_buf b = { 0x5000, 1000, 3 };
	struct xp_write w[4];
	struct xp_rec ack;
	struct solo s;
	bool parity = false;
	uint32_t n = 0;
	uint64_t t = 0;

	solo_init(&s, 0, tune_fast_rto_no_limit);
	solo_cts(&s, 0, 1000, 0);
	assert_int_equal(xp_post_send(s.core, s.conn, &b, 1, 0), 0);
	while (n < 300) {
		uint32_t k = solo_drain(&s, t), nw = solo_writes(&s, w, 4);

		for (uint32_t i = 0; i < nw; i++) {
			struct xp_imm f;

			xp_imm_decode(w[i].imm, &f);
			assert_int_equal(f.parity, n & 1);
			parity = f.parity;
			n++;
		}
		(void)k;
		t = xp_core_next_deadline(s.core);
		xp_core_timer(s.core, t);
	}
	ack = solo_rec(&s, XP_REC_ACK);
	ack.u.ack = (struct xp_rec_ack){ .msg_seq = 0, .cum = 1, .complete = true,
					 .echo_valid = true, .echo_chunk = 0,
					 .echo_parity = parity };
	assert_int_equal(solo_inject(&s, &ack, t + 1000), 1);
	assert_int_equal(xp_core_stats(s.core)->spurious_retx, 0);
	solo_drain(&s, t + 1000);
	assert_int_equal(solo_comp(&s, XP_COMP_SEND, 1)->status, 0);
	solo_fini(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rtt_sample_excludes_receiver_hold),
		cmocka_unit_test(test_karn_skips_ambiguous_samples),
		cmocka_unit_test(test_rack_marks_lost_only_after_reorder_window),
		cmocka_unit_test(test_reordering_inside_the_window_is_not_loss),
		cmocka_unit_test(test_spurious_retransmission_grows_reorder_window),
		cmocka_unit_test(test_spurious_retransmission_seen_by_the_echo_grows_reorder_window),
		cmocka_unit_test(test_needed_retransmission_is_not_spurious),
		cmocka_unit_test(test_duplicate_report_marks_the_echoed_retransmission_spurious),
		cmocka_unit_test(test_tlp_runs_from_the_newest_transmission),
		cmocka_unit_test(test_tlp_probes_a_lost_tail),
		cmocka_unit_test(test_rto_retransmits_only_what_was_lost),
		cmocka_unit_test(test_selective_retransmission_fills_only_the_holes),
		cmocka_unit_test(test_rto_restarts_from_the_probe_and_backs_off),
		cmocka_unit_test(test_rc_mode_never_retransmits),
		cmocka_unit_test(test_lost_final_ack_costs_about_one_rtt),
		cmocka_unit_test(test_lost_final_ack_behind_other_messages_is_lost_once),
		cmocka_unit_test(test_spraying_over_paths_of_different_delay_retransmits_nothing),
		cmocka_unit_test(test_rack_leaves_an_outstanding_retransmission_to_the_rto),
		cmocka_unit_test(test_tlp_is_clamped_to_the_rto_and_restarts_it),
		cmocka_unit_test(test_rto_restarts_after_a_probe),
		cmocka_unit_test(test_loss_repaired_by_the_probe_is_reported),
		cmocka_unit_test(test_needless_probe_reports_no_loss),
		cmocka_unit_test(test_no_probe_during_rack_recovery),
		cmocka_unit_test(test_grown_reorder_window_persists_per_recovery_episode),
		cmocka_unit_test(test_parity_flips_on_every_transmission),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
