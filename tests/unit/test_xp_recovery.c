// SPDX-License-Identifier: MIT
/*
 * test_xp_recovery.c - loss recovery: RTT samples and Karn's rule, RACK's
 * reordering window (and its growth on duplicates), the tail-loss probe,
 * the RTO (selective, backed off, floored), RC mode, and a lost final ACK.
 *
 * Pair tests: 5 us each way, so a 10 us RTT; the RTO floor is 100 us.
 */
#include "test_xp_pair.h"

#include "imm.h"

/* Filter: logs chunk transmissions from host 0, drops by a test's rule. */
struct tx_log {
	uint32_t n;
	uint64_t t[4096];
	uint16_t chunk[4096];
	uint8_t slot[4096];
	bool parity[4096];
	bool dropped[4096];
	/* rule: drop transmission number k of (slot, chunk) if bit k of drop_tx[slot][chunk] */
	uint32_t drop_tx[16][64];
	uint32_t seen[16][64];
	uint64_t delay_tx0_ns[64];  /* extra delay of chunk c's first transmission in slot 1 */
	bool drop_acks_until;       /* drop every control packet b->a before ack_until_ns */
	uint64_t ack_until_ns;
	uint32_t drop_complete_acks; /* drop this many b->a packets that carry "complete" */
};

static bool carries_complete(const struct xp_net_pkt *pkt)
{
	struct xp_wire_reader r;
	struct xp_rec rec;
	enum xp_drop why;

	if (xp_wire_open(&r, pkt->bytes, pkt->len, XP_WIRE_MAX_MTU, &why) < 0)
		return false;
	while (xp_wire_next(&r, &rec, &why) == 1)
		if (rec.type == XP_REC_ACK && rec.u.ack.complete)
			return true;
	return false;
}

static enum xp_net_verdict tx_filter(void *arg, const struct xp_net_pkt *pkt, uint64_t *extra)
{
	struct tx_log *l = arg;
	struct xp_imm f;
	uint32_t k;

	if (pkt->is_ctrl) {
		if (pkt->src != 1)
			return XP_NET_PASS;
		if (l->drop_acks_until && pkt->now_ns < l->ack_until_ns)
			return XP_NET_DROP;
		if (l->drop_complete_acks && carries_complete(pkt)) {
			l->drop_complete_acks--;
			return XP_NET_DROP;
		}
		return XP_NET_PASS;
	}
	if (pkt->src != 0 || l->n == 4096)
		return XP_NET_PASS;
	xp_imm_decode(pkt->write->imm, &f);
	k = l->seen[f.slot][f.chunk % 64]++;
	l->t[l->n] = pkt->now_ns;
	l->chunk[l->n] = f.chunk;
	l->slot[l->n] = f.slot;
	l->parity[l->n] = f.parity;
	l->dropped[l->n] = k < 32 && (l->drop_tx[f.slot][f.chunk % 64] >> k) & 1;
	if (!k && f.slot == 1)
		*extra = l->delay_tx0_ns[f.chunk % 64];
	return l->dropped[l->n++] ? XP_NET_DROP : XP_NET_PASS;
}

/* A pair that has exchanged one message (slot 0), so both sides know the 10 us RTT. */
static void warm_pair(struct pair *p, struct tx_log *l, bool rc)
{
	static uint8_t src[64], dst[64];
	struct pair_opts o;

	pair_default_opts(&o);
	o.filter = tx_filter;
	o.filter_arg = l;
	o.rc_mode = rc;
	if (rc)
		o.link.reliable = true;
	memset(l, 0, sizeof(*l));
	pair_init(p, &o);
	assert_int_equal(pair_recv(p, 1, dst, sizeof(dst), 100), 0);
	assert_int_equal(pair_send(p, 0, src, sizeof(src), 101), 0);
	pair_run(p, pair_now(p) + 1000000);
	assert_non_null(pair_find(p, 0, XP_COMP_SEND, 101));
	l->n = 0;
}

/* Send a @len-byte message in slot 1 after the warm-up; return the time it went. */
static uint64_t send_second(struct pair *p, uint8_t *src, uint8_t *dst, uint64_t len)
{
	uint64_t t0;

	fill_pattern(src, len, 9);
	assert_int_equal(pair_recv(p, 1, dst, len, 1), 0);
	pair_run(p, pair_now(p) + 100000); /* its CTS arrives */
	t0 = pair_now(p);
	assert_int_equal(pair_send(p, 0, src, len, 2), 0);
	return t0;
}

static void expect_delivered(struct pair *p, const uint8_t *src, const uint8_t *dst, uint64_t len)
{
	const struct pair_comp *s = pair_find(p, 0, XP_COMP_SEND, 2);

	assert_non_null(s);
	assert_int_equal(s->c.status, 0);
	assert_int_equal(pair_count(p, 1, XP_COMP_RECV), 2);
	assert_int_equal(pair_find(p, 1, XP_COMP_RECV, 1)->c.bytes, len);
	assert_memory_equal(src, dst, len);
}

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
	/* two transmissions, echo names the first: not the latest, skipped */
	t = karn_case(&s, 0, 2, false, 0);
	assert_int_equal(st->rtt_samples, 0);
	assert_int_equal(st->karn_skipped, 1);
	/* three transmissions: parity 0 is the first or the third, skipped */
	t = karn_case(&s, 1, 3, false, t);
	assert_int_equal(st->rtt_samples, 0);
	assert_int_equal(st->karn_skipped, 2);
	/* two transmissions, echo names the second: a clean sample */
	karn_case(&s, 2, 2, true, t);
	assert_int_equal(st->rtt_samples, 1);
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
	t0 = send_second(&p, src, dst, sizeof(src));
	pair_run(&p, pair_now(&p) + 10000000);
	expect_delivered(&p, src, dst, sizeof(src));
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
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void test_reordering_inside_the_window_is_not_loss(void **state)
{
	static uint8_t src[4 * 65536], dst[4 * 65536];
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.delay_tx0_ns[0] = 2000; /* chunk 0 late by 2 us < reo_wnd 2.5 us */
	send_second(&p, src, dst, sizeof(src));
	pair_run(&p, pair_now(&p) + 10000000);
	expect_delivered(&p, src, dst, sizeof(src));
	assert_int_equal(l.n, 4);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->chunks_retx, 0);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
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
	send_second(&p, src, dst, sizeof(src));
	pair_run(&p, pair_now(&p) + 10000000);
	expect_delivered(&p, src, dst, sizeof(src));
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->chunks_retx, 2);
	assert_int_equal(xp_core_stats(pair_core(&p, 1))->drops[XP_DROP_IMM_DUP], 1);
	/* the receiver said "duplicate seen": reo_wnd grew by min_RTT/4 */
	assert_int_equal(xp_conn_info(pair_core(&p, 0), p.conn[0], &info), 0);
	assert_int_equal(info.chunks_retx, 2);
	assert_int_equal(info.reo_wnd_ns, 2 * 2500);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
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
	send_second(&p, src, dst, sizeof(src));
	pair_run(&p, pair_now(&p) + 10000000);
	expect_delivered(&p, src, dst, sizeof(src));
	assert_int_equal(l.n, 5);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->chunks_retx, 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 1))->drops[XP_DROP_IMM_DUP], 0);
	/* no duplicate report, yet reo_wnd grew by min_RTT/4, and the connection counts it */
	assert_int_equal(xp_conn_info(pair_core(&p, 0), p.conn[0], &info), 0);
	assert_int_equal(info.reo_wnd_ns, 2 * 2500);
	assert_int_equal(info.spurious_retx, 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->spurious_retx, 1);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

/*
 * A spurious RTO as on a loaded host: the one chunk and its retransmission reach the receiver
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
	assert_int_equal(xp_core_stats(s.core)->rto_fires, 1);
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
	send_second(&p, src, dst, sizeof(src));
	pair_run(&p, pair_now(&p) + 10000000);
	expect_delivered(&p, src, dst, sizeof(src));
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->chunks_retx, 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->spurious_retx, 0);
	assert_int_equal(xp_conn_info(pair_core(&p, 0), p.conn[0], &info), 0);
	assert_int_equal(info.reo_wnd_ns, 2500);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

/* A paced second chunk restarts the probe timer (RFC 8985 7.2): PTO runs from the newest send. */
static void test_tlp_runs_from_the_newest_transmission(void **state)
{
	struct xp_buf b = { 0x5000, 2 * 65536, 3 };
	struct xp_conn_info info;
	struct xp_rec ack;
	struct solo s;
	uint64_t t0, t1;

	solo_init(&s, 0, NULL);
	solo_cts(&s, 0, 1000, 0);
	assert_int_equal(xp_post_send(s.core, s.conn, &(struct xp_buf){ 0x5000, 1000, 3 }, 1, 0),
			 0);
	assert_int_equal(solo_drain(&s, 0), 1);
	ack = solo_rec(&s, XP_REC_ACK);
	ack.u.ack = (struct xp_rec_ack){ .msg_seq = 0, .cum = 1, .complete = true,
					 .echo_valid = true, .echo_chunk = 0 };
	assert_int_equal(solo_inject(&s, &ack, 20000), 1);
	assert_int_equal(xp_conn_info(s.core, s.conn, &info), 0);
	assert_int_equal(info.srtt_ns, 20000); /* PTO 40 us, RTO at its 100 us floor */
	solo_drain(&s, 20000);

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
	t0 = send_second(&p, src, dst, sizeof(src));
	pair_run(&p, pair_now(&p) + 10000000);
	expect_delivered(&p, src, dst, sizeof(src));
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->tlp_fires, 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.t[1] - t0, 2 * 10000); /* PTO = 2 x SRTT */
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 2)->t_ns - t0, 30000);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
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
	send_second(&p, src, dst, sizeof(src));
	pair_run(&p, pair_now(&p) + 100000000);
	expect_delivered(&p, src, dst, sizeof(src));
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 1);
	assert_int_equal(l.n, 8 + 1 + 4);
	for (uint32_t i = 8; i < l.n; i++)
		assert_true(l.chunk[i] >= 4); /* chunks 0..3 were acknowledged: never sent again */
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void test_selective_retransmission_fills_only_the_holes(void **state)
{
	static uint8_t src[10 * 65536], dst[10 * 65536];
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.drop_tx[1][2] = 1;
	l.drop_tx[1][5] = 1;
	send_second(&p, src, dst, sizeof(src));
	pair_run(&p, pair_now(&p) + 10000000);
	expect_delivered(&p, src, dst, sizeof(src));
	assert_int_equal(l.n, 12);
	assert_int_equal(l.chunk[10] + l.chunk[11], 2 + 5);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 0);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void test_rto_backs_off_and_is_floored(void **state)
{
	static uint8_t src[1000], dst[1000];
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.drop_tx[1][0] = 0x3f; /* six transmissions lost */
	send_second(&p, src, dst, sizeof(src));
	pair_run(&p, pair_now(&p) + 1000000000);
	expect_delivered(&p, src, dst, sizeof(src));
	/* original, tail probe at 2 SRTT, then RTOs: floored at 100 us from the original, doubling */
	assert_int_equal(l.n, 7);
	assert_int_equal(l.t[1] - l.t[0], 20000);
	assert_int_equal(l.t[2] - l.t[0], 100000);
	for (uint32_t i = 3; i < l.n; i++)
		assert_int_equal(l.t[i] - l.t[i - 1], 100000ull << (i - 2));
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 5);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
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
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void test_lost_final_ack_is_recovered_by_ack_request(void **state)
{
	static uint8_t src[1000], dst[1000];
	struct tx_log l;
	struct pair p;

	warm_pair(&p, &l, false);
	l.drop_complete_acks = 1;
	send_second(&p, src, dst, sizeof(src));
	pair_run(&p, pair_now(&p) + 100000000);
	expect_delivered(&p, src, dst, sizeof(src));
	/* the probe could not reach the completed receive (its rkey is gone): ACK_REQ did it */
	assert_true(xp_net_stats(p.net)->rkey_drops >= 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->rto_fires, 1);
	assert_int_equal(pair_count(&p, 1, XP_COMP_RECV), 2);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
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
		cmocka_unit_test(test_rto_backs_off_and_is_floored),
		cmocka_unit_test(test_rc_mode_never_retransmits),
		cmocka_unit_test(test_lost_final_ack_is_recovered_by_ack_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
