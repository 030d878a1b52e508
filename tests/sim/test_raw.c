// SPDX-License-Identifier: MIT
/*
 * test_raw.c - the raw UC-like queue pairs: whole messages are delivered or
 * dropped whole, nothing is acknowledged or retransmitted, and a QP keeps
 * one path.
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
	int delivered[8], dropped[8];
	uint32_t reposted;
	struct uet_sim *sim;
	uint32_t qp;
};

static void on_delivered(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps)
{
	struct outcome *o = ctx;

	o->delivered[cookie]++;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_message_with_a_lost_packet_is_dropped_whole),
		cmocka_unit_test(test_raw_message_with_a_trimmed_packet_is_dropped_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
