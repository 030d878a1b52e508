// SPDX-License-Identifier: MIT
/*
 * test_xp_liveness.c - a connection whose peer is gone reports it: the
 * default no-progress limit (5 s) fails a send the peer never acknowledges
 * with -ETIMEDOUT, retransmitting one chunk per backed-off RTO meanwhile
 * (not the window); an idle connection with a receive posted keeps asking
 * (KEEPALIVE, a quarter of the limit apart) and fails when nothing answers,
 * but stays up for as long as its peer answers, lost answers included (an
 * unanswered KEEPALIVE goes again after the control RTO); a connection gone
 * at the peer answers a keepalive with RESET.
 *
 * Pairs at the cores' defaults: 5 us each way, no-progress limit 5 s.
 */
#include "test_xp_pair.h"

#define MS 1000000ull
#define S 1000000000ull

/*
 * Drops everything host @host sends from @from_ns on, and the next @lose_ka_acks packets from
 * host 1 with a KEEPALIVE_ACK; counts KEEPALIVEs from host 0 and KEEPALIVE_ACKs from host 1
 * (the lost ones too).
 */
struct vanish {
	uint32_t host;
	uint64_t from_ns;
	bool on;
	uint32_t lose_ka_acks;
	uint32_t keepalives;
	uint32_t ka_acks;
};

static void count_records(struct vanish *v, const struct xp_net_pkt *pkt)
{
	struct xp_wire_reader r;
	struct xp_rec rec;
	enum xp_drop why;

	if (xp_wire_open(&r, pkt->bytes, pkt->len, XP_WIRE_MAX_MTU, &why) < 0)
		return;
	while (xp_wire_next(&r, &rec, &why) == 1) {
		v->keepalives += pkt->src == 0 && rec.type == XP_REC_KEEPALIVE;
		v->ka_acks += pkt->src == 1 && rec.type == XP_REC_KEEPALIVE_ACK;
	}
}

static enum xp_net_verdict vanish_filter(void *arg, const struct xp_net_pkt *pkt, uint64_t *extra)
{
	struct vanish *v = arg;

	if (v->on && pkt->src == v->host && pkt->now_ns >= v->from_ns)
		return XP_NET_DROP;
	if (pkt->is_ctrl) {
		uint32_t ka_acks = v->ka_acks;

		count_records(v, pkt);
		if (v->ka_acks > ka_acks && v->lose_ka_acks) {
			v->lose_ka_acks--;
			return XP_NET_DROP;
		}
	}
	return XP_NET_PASS;
}

static void vanish_pair(struct pair *p, struct vanish *v)
{
	struct pair_opts o;

	pair_default_opts(&o);
	o.filter = vanish_filter;
	o.filter_arg = v;
	memset(v, 0, sizeof(*v));
	pair_init(p, &o);
}

/*
 * The peer goes silent in the middle of a 1 MiB send: the send fails with -ETIMEDOUT within
 * the default limit, each RTO having resent one chunk, and the connection is DEAD.
 */
static void test_send_to_a_silent_peer_times_out_at_the_default_limit(void **state)
{
	static uint8_t src[1 << 20], dst[1 << 20];
	const struct xp_core_stats *st;
	const struct pair_comp *c;
	struct vanish v;
	struct pair p;

	vanish_pair(&p, &v);
	st = xp_core_stats(pair_core(&p, 0));
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	pair_run(&p, 100000);
	v.on = true;
	v.host = 1;
	v.from_ns = pair_now(&p) + 12000; /* the first round of ACKs gets through */
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	pair_run(&p, 20 * S);
	c = pair_find(&p, 0, XP_COMP_SEND, 2);
	assert_non_null(c);
	assert_int_equal(c->c.status, -ETIMEDOUT);
	/* the limit runs from the last ACK of new data, a few us before the silence began */
	assert_true(c->t_ns >= v.from_ns + 5 * S - MS);
	assert_true(c->t_ns <= v.from_ns + 5 * S + 100 * MS);
	assert_int_equal(st->conns_timed_out, 1);
	/* one chunk per expiry (and per probe), not the window */
	assert_true(st->chunks_retx <= st->rto_fires + st->tlp_fires + st->rack_losses);
	assert_true(st->rto_fires < 120);
	assert_int_equal(pair_send(&p, 0, src, 1, 3), -ETIMEDOUT);
	pair_fini(&p);
}

/*
 * A receive posted on an idle connection: while the peer answers its keepalives (one a
 * quarter of the limit after the last word, 1.25 s), it waits as long as it takes; when the
 * peer goes silent, it keeps asking on the control RTO and fails with -ETIMEDOUT one limit
 * after the last word.
 */
static void test_idle_receive_keeps_alive_then_finds_a_silent_peer(void **state)
{
	static uint8_t dst[64];
	const struct pair_comp *c;
	struct vanish v;
	struct pair p;
	uint64_t t_gone;
	uint32_t ka_before;

	vanish_pair(&p, &v);
	assert_int_equal(pair_recv(&p, 0, dst, sizeof(dst), 1), 0);
	pair_run(&p, 30 * S);
	assert_null(pair_find(&p, 0, XP_COMP_RECV, 1)); /* 30 s idle: still waiting */
	assert_true(v.keepalives >= 20 && v.keepalives <= 25);
	assert_int_equal(v.ka_acks, v.keepalives);
	t_gone = pair_now(&p);
	ka_before = v.keepalives;
	v.on = true;
	v.host = 1;
	v.from_ns = t_gone;
	pair_run(&p, t_gone + 20 * S);
	c = pair_find(&p, 0, XP_COMP_RECV, 1);
	assert_non_null(c);
	assert_int_equal(c->c.status, -ETIMEDOUT);
	assert_true(c->t_ns <= t_gone + 5 * S);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->conns_timed_out, 1);
	/* unanswered, asked again on the backed-off control RTO: ~75 at one per 50 ms (rto_max) */
	assert_true(v.keepalives - ka_before >= 60 && v.keepalives - ka_before <= 90);
	pair_fini(&p);
}

/*
 * The peer is there, but its answers to three keepalives in a row are lost: with a keepalive
 * only every quarter of the limit that was the whole limit, and the receive failed with
 * -ETIMEDOUT at 5 s. Each unanswered keepalive goes again after the control RTO, so the fourth
 * comes within milliseconds of the first, its answer gets through, and the receive waits on.
 */
static void test_idle_receive_outlasts_lost_keepalive_answers(void **state)
{
	static uint8_t dst[64];
	struct vanish v;
	struct pair p;

	vanish_pair(&p, &v);
	v.lose_ka_acks = 3;
	assert_int_equal(pair_recv(&p, 0, dst, sizeof(dst), 1), 0);
	pair_run(&p, 2 * S);
	assert_int_equal(v.lose_ka_acks, 0);
	assert_int_equal(v.keepalives, 4); /* at 1.25 s, then three on the RTO, all within 2 s */
	pair_run(&p, 20 * S);
	assert_null(pair_find(&p, 0, XP_COMP_RECV, 1)); /* still waiting */
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->conns_timed_out, 0);
	assert_int_equal(v.ka_acks, v.keepalives);
	pair_fini(&p);
}

/* With no operation waiting, an idle connection sends nothing and never times out. */
static void test_idle_connection_without_operations_is_quiet(void **state)
{
	struct vanish v;
	struct pair p;

	vanish_pair(&p, &v);
	v.on = true;
	v.host = 1;
	pair_run(&p, 60 * S);
	assert_int_equal(v.keepalives, 0);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->conns_timed_out, 0);
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->ctrl_packets_tx, 0);
	pair_fini(&p);
}

/* A connection closed here (gracefully, so not after a reset) answers a keepalive with RESET. */
static void test_closed_connection_answers_a_keepalive_with_reset(void **state)
{
	struct xp_rec recs[16], r;
	struct solo s;
	uint32_t n, resets = 0;

	solo_init(&s, 0, NULL);
	assert_int_equal(xp_conn_close(s.core, s.conn, XP_CLOSE_GRACEFUL, 0), 0);
	solo_drain(&s, 0); /* the FIN */
	r = solo_rec(&s, XP_REC_FIN_ACK);
	assert_int_equal(solo_inject(&s, &r, 1000), 1);
	solo_drain(&s, 1000);
	assert_non_null(solo_comp(&s, XP_COMP_CLOSE, 0));
	r = solo_rec(&s, XP_REC_KEEPALIVE);
	assert_int_equal(solo_inject(&s, &r, 2000), 1);
	solo_drain(&s, 2000);
	n = solo_records(&s, recs, 16);
	for (uint32_t i = 0; i < n; i++)
		resets += recs[i].type == XP_REC_RESET && recs[i].u.reason == XP_RESET_CLOSED;
	assert_int_equal(resets, 1);
	solo_fini(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_to_a_silent_peer_times_out_at_the_default_limit),
		cmocka_unit_test(test_idle_receive_keeps_alive_then_finds_a_silent_peer),
		cmocka_unit_test(test_idle_receive_outlasts_lost_keepalive_answers),
		cmocka_unit_test(test_idle_connection_without_operations_is_quiet),
		cmocka_unit_test(test_closed_connection_answers_a_keepalive_with_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
