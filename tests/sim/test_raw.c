// SPDX-License-Identifier: MIT
/*
 * test_raw.c - the raw UC-like queue pairs: whole messages are delivered or
 * dropped whole, nothing is acknowledged or retransmitted, a QP keeps one
 * path; the NIC's egress pool bounds what a QP puts on the port (QPs share
 * the port round robin), a paced QP is spaced at its rate, a CE mark is
 * reported with its message, control QPs travel in the control class, and
 * run_until() interleaves with the caller's own posts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "harness.h"

#define MSS 4096u
#define STOP_PS (1000ull * 1000000000ull)

struct outcome {
	int delivered[8], dropped[8], ce[8], sent[8];
	uint32_t reposted;
	struct uet_sim *sim;
	uint32_t qp;
};

static void on_delivered(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps, bool ce)
{
	struct outcome *o = ctx;

	o->delivered[cookie]++;
	o->ce[cookie] += ce;
}

static void on_sent(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps)
{
	struct outcome *o = ctx;

	o->sent[cookie]++;
}

static void on_dropped(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps)
{
	struct outcome *o = ctx;

	o->dropped[cookie]++;
	/* the transport above resends it, from the callback */
	if (!o->reposted++)
		assert_int_equal(uet_sim_raw_post(o->sim, o->qp, 10 * MSS, 7), 0);
}

static void run_three_messages(enum uet_filter_verdict verdict, struct outcome *o,
			       struct capture *c)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_raw_ops ops = { .ctx = o, .delivered = on_delivered, .dropped = on_dropped };
	struct uet_sim *sim;
	int qp;

	scn->topo.kind = UET_TOPO_FAT_TREE;
	scn->topo.k = 4;
	scn->nic.trimming = true;
	sim = make_sim(scn, NULL);
	memset(o, 0, sizeof(*o));
	capture_init(c);
	c->drop_kind = UET_PKT_RAW;
	c->drop_psn = 14; /* the 5th packet of the second message */
	c->drop_count = 1;
	c->verdict = verdict;
	capture_attach(c, sim);
	uet_sim_set_raw_ops(sim, &ops);
	qp = uet_sim_raw_qp(sim, 0, 9, 777);
	assert_true(qp >= 0);
	o->sim = sim;
	o->qp = (uint32_t)qp;
	for (uint64_t m = 1; m <= 3; m++)
		assert_int_equal(uet_sim_raw_post(sim, (uint32_t)qp, 10 * MSS, m), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	uet_sim_destroy(sim);
	free(scn);
}

static void check_outcome(const struct outcome *o, const struct capture *c)
{
	uint32_t data = 0;

	assert_int_equal(o->delivered[1], 1);
	assert_int_equal(o->dropped[1], 0);
	assert_int_equal(o->delivered[2], 0);
	assert_int_equal(o->dropped[2], 1); /* once, not once per packet */
	assert_int_equal(o->delivered[3], 1);
	assert_int_equal(o->dropped[3], 0);
	assert_int_equal(o->delivered[7], 1); /* the resend */
	ROWS_FOREACH(c, r) {
		assert_true(r->kind == UET_PKT_RAW); /* no ACK, NACK or probe */
		if (!r->rx) {
			assert_int_equal(r->entropy, 777); /* one path */
			assert_false(r->flags & UET_PF_RETX);
			data++;
		}
	}
	assert_int_equal(data, 40);
}

static void test_raw_message_with_a_lost_packet_is_dropped_whole(void **state)
{
	struct outcome o;
	struct capture c;

	run_three_messages(UET_FILTER_DROP, &o, &c);
	check_outcome(&o, &c);
	free(c.rows);
}

static void test_raw_message_with_a_trimmed_packet_is_dropped_whole(void **state)
{
	struct outcome o;
	struct capture c;

	run_three_messages(UET_FILTER_TRIM, &o, &c);
	check_outcome(&o, &c);
	free(c.rows);
}


/* First transmission time of a raw packet of QP @qp at host @nic, or UINT64_MAX. */
static uint64_t first_tx(const struct capture *c, uint32_t qp, uint32_t nic)
{
	uint64_t t = UINT64_MAX;

	ROWS_FOREACH(c, r)
		if (!r->rx && r->pdc == qp && r->nic == nic && r->t_ps < t)
			t = r->t_ps;
	return t;
}

static struct uet_sim *raw_sim(struct uet_scenario *scn, struct outcome *o, struct capture *c)
{
	struct uet_raw_ops ops = { .ctx = o, .delivered = on_delivered, .dropped = on_dropped,
				   .sent = on_sent };
	struct uet_sim *sim;

	scn->nic.uet_monitor = true;
	sim = make_sim(scn, NULL);
	assert_non_null(sim);
	memset(o, 0, sizeof(*o));
	capture_init(c);
	capture_attach(c, sim);
	uet_sim_set_raw_ops(sim, &ops);
	o->sim = sim;
	return sim;
}

static void test_egress_pool_bounds_a_qp_and_qps_share_the_port(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct outcome o;
	struct capture c;
	struct uet_sim *sim = raw_sim(scn, &o, &c);
	int big = uet_sim_raw_qp(sim, 0, 1, 11), small = uet_sim_raw_qp(sim, 0, 1, 12);
	uint64_t pkt_ps = (MSS + UET_WIRE_HDR_BYTES) * 8ull * 1000 / 100; /* at 100 Gbit/s */

	o.qp = UINT32_MAX;
	assert_int_equal(uet_sim_raw_post(sim, (uint32_t)big, 1 << 20, 1), 0);
	/* 2 us later, a one-packet message on another QP of the same NIC */
	assert_int_equal(uet_sim_run_until(sim, 2000000), 0);
	assert_int_equal(uet_sim_raw_post(sim, (uint32_t)small, MSS, 2), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	assert_int_equal(o.delivered[1], 1);
	assert_int_equal(o.delivered[2], 1);
	assert_int_equal(o.sent[1], 1);
	assert_int_equal(o.sent[2], 1);
	/*
	 * The NIC holds at most the egress pool (32 KiB: 7 packets) of the big
	 * message, so the small one goes within that many packet times, not
	 * after the whole megabyte (256 packets).
	 */
	assert_true(first_tx(&c, (uint32_t)small, 0) - 2000000 <
		    (scn->nic.egress_pool_bytes / (MSS + UET_WIRE_HDR_BYTES) + 2) * pkt_ps);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

static void test_a_paced_qp_is_spaced_at_its_rate(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_raw_qp_attr attr = { .entropy = 5, .rate_bps = 10000000000ull };
	uint64_t gap_ps = (MSS + UET_WIRE_HDR_BYTES) * 8ull * 100, prev = 0;
	struct outcome o;
	struct capture c;
	struct uet_sim *sim = raw_sim(scn, &o, &c);
	int qp = uet_sim_raw_qp_create(sim, 0, 1, &attr);
	uint32_t n = 0;

	assert_true(qp >= 0);
	assert_int_equal(uet_sim_raw_post(sim, (uint32_t)qp, 20 * MSS, 1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	assert_int_equal(o.delivered[1], 1);
	ROWS_FOREACH(&c, r) {
		if (r->rx || r->nic != 0)
			continue;
		if (n++ && r->t_ps - prev < gap_ps - 1000)
			fail_msg("packet %u: %llu ps after the previous (kind %d psn %u)", n,
				 (unsigned long long)(r->t_ps - prev), r->kind, r->psn);
		prev = r->t_ps;
	}
	assert_int_equal(n, 20);
	/* 19 gaps of one packet at 10 Gbit/s */
	assert_true(prev >= 19 * gap_ps - 1000);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

static void test_a_ce_mark_is_reported_with_its_message(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct outcome o;
	struct capture c;
	struct uet_sim *sim = raw_sim(scn, &o, &c);
	int qp = uet_sim_raw_qp(sim, 0, 1, 9);

	c.drop_kind = UET_PKT_RAW;
	c.drop_psn = 12; /* a packet of the second message */
	c.drop_count = 1;
	c.verdict = UET_FILTER_MARK;
	for (uint64_t m = 1; m <= 3; m++)
		assert_int_equal(uet_sim_raw_post(sim, (uint32_t)qp, 10 * MSS, m), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	for (int m = 1; m <= 3; m++)
		assert_int_equal(o.delivered[m], 1);
	assert_int_equal(o.ce[1], 0);
	assert_int_equal(o.ce[2], 1);
	assert_int_equal(o.ce[3], 0);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

static void test_control_qps_use_the_control_class(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_raw_qp_attr attr = { .entropy = 3, .control = true };
	struct outcome o;
	struct capture c;
	struct uet_sim *sim;
	int qp;

	scn->nic.trimming = true;
	sim = raw_sim(scn, &o, &c);
	qp = uet_sim_raw_qp_create(sim, 1, 0, &attr);
	assert_int_equal(uet_sim_raw_post(sim, (uint32_t)qp, 256, 4), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	assert_int_equal(o.delivered[4], 1);
	ROWS_FOREACH(&c, r)
		assert_int_equal(r->dscp, UET_DSCP_CONTROL);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_message_with_a_lost_packet_is_dropped_whole),
		cmocka_unit_test(test_raw_message_with_a_trimmed_packet_is_dropped_whole),
		cmocka_unit_test(test_egress_pool_bounds_a_qp_and_qps_share_the_port),
		cmocka_unit_test(test_a_paced_qp_is_spaced_at_its_rate),
		cmocka_unit_test(test_a_ce_mark_is_reported_with_its_message),
		cmocka_unit_test(test_control_qps_use_the_control_class),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
