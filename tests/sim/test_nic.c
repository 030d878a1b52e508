// SPDX-License-Identifier: MIT
/*
 * test_nic.c - the UET NIC model against seeds/uet-nic-datapath.txt, one
 * documented property per test, on a one-switch fabric with a fixed window
 * (no policy) so every packet is predictable.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "harness.h"
#include "sim.h"

#define MSS 4096u
#define STOP_PS (1000ull * 1000000000ull) /* 1 s */

static uint32_t count_rows(const struct capture *c, uint32_t nic, bool rx, enum uet_pkt_kind kind)
{
	uint32_t n = 0;

	ROWS_FOREACH(c, r)
		n += r->nic == nic && r->rx == rx && r->kind == kind;
	return n;
}

static void test_256_packet_message_draws_256_acks(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim = make_sim(scn, NULL);
	struct capture c;
	uint32_t ar = 0;

	capture_init(&c);
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, 256 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	ROWS_FOREACH(&c, r)
		if (r->nic == 0 && !r->rx && r->kind == UET_PKT_DATA)
			ar += !!(r->flags & UET_PF_AR);
	assert_int_equal(count_rows(&c, 0, false, UET_PKT_DATA), 256);
	assert_int_equal(ar, 256);
	assert_int_equal(count_rows(&c, 1, false, UET_PKT_ACK), 256);
	assert_int_equal(count_rows(&c, 0, true, UET_PKT_ACK), 256);
	/* one base-RTT probe and its answer */
	assert_int_equal(count_rows(&c, 0, false, UET_PKT_PROBE), 1);
	assert_int_equal(count_rows(&c, 1, false, UET_PKT_PROBE_ACK), 1);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

/* PSNs of the AR-flagged packets of one message of @npkts under N, first, last. */
static void ar_pattern(uint32_t n, bool first, bool last, uint32_t npkts, uint32_t *out,
		       uint32_t *n_out)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim;
	struct capture c;

	scn->nic.ack_every_nth = n;
	scn->nic.ack_first = first;
	scn->nic.ack_last = last;
	sim = make_sim(scn, NULL);
	capture_init(&c);
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, (uint64_t)npkts * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	*n_out = 0;
	ROWS_FOREACH(&c, r)
		if (r->nic == 0 && !r->rx && r->kind == UET_PKT_DATA && (r->flags & UET_PF_AR))
			out[(*n_out)++] = r->psn;
	/* exactly one ACK per AR packet */
	assert_int_equal(count_rows(&c, 1, false, UET_PKT_ACK), *n_out);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

static void test_ack_request_every_4th_with_first_and_last(void **state)
{
	static const uint32_t want_first[] = { 0, 4, 8, 12, 16, 17 };
	static const uint32_t want_nth[] = { 3, 7, 11, 15, 17 };
	static const uint32_t want_neither[] = { 3, 7, 11, 15 };
	uint32_t got[64], n;

	/* 18 packets: 1st, 5th, 9th, ... with AckRequestFirstPacket, plus the last */
	ar_pattern(4, true, true, 18, got, &n);
	assert_int_equal(n, 6);
	assert_memory_equal(got, want_first, sizeof(want_first));
	/* without AckRequestFirstPacket: the 4th, 8th, ... plus the last */
	ar_pattern(4, false, true, 18, got, &n);
	assert_int_equal(n, 5);
	assert_memory_equal(got, want_nth, sizeof(want_nth));
	/* without AckRequestLastPacket the tail is recovered by the timer */
	ar_pattern(4, false, false, 18, got, &n);
	assert_true(n >= 4);
	assert_memory_equal(got, want_neither, sizeof(want_neither));
}

/*
 * With AckCoalesceBytes (a pcm extension, htsim's receiver) the receiver ACKs
 * once per that many payload bytes: a 256-packet message under a window of
 * 64 packets draws one ACK per 4 packets (16 KiB) plus the first and the
 * last, where the UET page's receiver sends 256 (the test above).
 */
static void test_coalescing_receiver_acks_once_per_threshold(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim;
	struct uet_results res;
	struct capture c;
	uint32_t acks;

	scn->nic.ack_coalesce_bytes = 4 * MSS;
	sim = make_sim(scn, NULL);
	capture_init(&c);
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, 256 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	uet_sim_results(sim, &res);
	acks = count_rows(&c, 1, false, UET_PKT_ACK);
	print_message("  %u data packets, %u ACKs, %llu timeouts\n",
		      count_rows(&c, 0, false, UET_PKT_DATA), acks,
		      (unsigned long long)res.timeouts);
	assert_int_equal(count_rows(&c, 0, false, UET_PKT_DATA), 256);
	assert_in_range(acks, 256 / 4, 256 / 4 + 3);
	assert_int_equal(res.timeouts, 0);
	assert_int_equal(res.completed, 1);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

/*
 * A coalescing receiver never leaves a full window waiting: the packet
 * that fills the window asks for an ACK, so a window of 3 packets under a
 * 64 KiB threshold runs with no timeout (raising AckRequestEveryNthPacket
 * instead leaves such a window to its timers).
 */
static void test_coalescing_full_window_asks_for_an_ack(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim;
	struct uet_results res;

	scn->nic.ack_coalesce_bytes = 16 * MSS;
	scn->nic.initial_cwnd_bytes = 3 * (MSS + UET_NOMINAL_HDR_BYTES);
	sim = make_sim(scn, NULL);
	assert_int_equal(uet_sim_post(sim, 0, 1, 64 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	uet_sim_results(sim, &res);
	print_message("  %llu data packets, %llu ACKs, %llu timeouts, FCT %.1f us\n",
		      (unsigned long long)res.data_packets, (unsigned long long)res.acks,
		      (unsigned long long)res.timeouts, res.fct_max_us);
	assert_int_equal(res.timeouts, 0);
	assert_int_equal(res.data_packets, 64);
	/* 22 round trips of a 3-packet window, not 22 timeouts of 100 us */
	assert_true(res.fct_max_us < 22 * 30.0);
	uet_sim_destroy(sim);
	free(scn);
}

/*
 * Without the UET policy a switch takes the class from DSCP / 8 (the page's
 * "Packet marking"): control codepoints are TC2, data TC0, so an ACK on a
 * port whose data queue is long waits for at most the packet being
 * serialized. Hosts 0 and 1 send to 2 and hosts 1 and 2 to 0, each with a
 * 20-packet window, so both ports towards 0 and 2 hold a data queue the
 * ACKs must cross.
 */
static void test_acks_do_not_queue_behind_data_without_the_uet_policy(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	const uint64_t ser_mtu = (MSS + UET_WIRE_HDR_BYTES) * 80, ser_ack = UET_ACK_WIRE_BYTES * 80;
	uint64_t worst = 0, bound;
	struct uet_sim *sim;
	struct capture c;

	scn->topo.senders = 2;
	scn->topo.uet_policy = false;
	scn->topo.switch_trimming = false;
	scn->topo.queue_bytes = 1ull << 20;
	scn->nic.initial_cwnd_bytes = 20 * (MSS + UET_NOMINAL_HDR_BYTES);
	sim = make_sim(scn, NULL);
	capture_init(&c);
	capture_attach(&c, sim);
	assert_true(uet_sim_post(sim, 0, 2, 200 * MSS, 0, -1) >= 0);
	assert_true(uet_sim_post(sim, 1, 2, 200 * MSS, 0, -1) >= 0);
	assert_true(uet_sim_post(sim, 1, 0, 200 * MSS, 0, -1) >= 0);
	assert_true(uet_sim_post(sim, 2, 0, 200 * MSS, 0, -1) >= 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	/* each ACK from its receiver's NIC to its sender's: two links, and one MTU ahead of it at most */
	ROWS_FOREACH(&c, tx) {
		if (tx->kind != UET_PKT_ACK || tx->rx)
			continue;
		for (const struct uet_pkt_view *rx = tx + 1; rx < c.rows + c.n; rx++)
			if (rx->kind == UET_PKT_ACK && rx->rx && rx->pdc == tx->pdc &&
			    rx->psn == tx->psn) {
				worst = rx->t_ps - tx->t_ps > worst ? rx->t_ps - tx->t_ps : worst;
				break;
			}
	}
	bound = 2 * scn->topo.link_delay_ps + 2 * ser_ack + ser_mtu + 1000;
	print_message("  slowest ACK, NIC to NIC: %.3f us (two links and one MTU ahead: %.3f us)\n",
		      worst / 1e6, bound / 1e6);
	assert_true(worst > 0 && worst <= bound);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

static void test_trim_nack_requeues_ahead_of_new_data(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim;
	struct capture c;
	uint64_t nack_at = 0;
	const struct uet_pkt_view *next = NULL;
	struct uet_results res;

	scn->nic.initial_cwnd_bytes = 4 * (MSS + UET_NOMINAL_HDR_BYTES);
	scn->nic.trimming = true;
	sim = make_sim(scn, NULL);
	capture_init(&c);
	c.drop_kind = UET_PKT_DATA;
	c.drop_psn = 5;
	c.drop_count = 1;
	c.verdict = UET_FILTER_TRIM;
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, 64 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	ROWS_FOREACH(&c, r) {
		if (r->nic == 1 && !r->rx && r->kind == UET_PKT_NACK) {
			assert_int_equal(r->psn, 5);
			/* trimmed on the port facing the receiver: the last-hop code */
			assert_int_equal(r->nack_code, UET_NACK_TRIMMED_LAST_HOP);
		}
		if (r->nic == 0 && r->rx && r->kind == UET_PKT_NACK)
			nack_at = r->t_ps;
		if (nack_at && !next && r->nic == 0 && !r->rx && r->kind == UET_PKT_DATA &&
		    r->t_ps >= nack_at)
			next = r;
	}
	assert_true(nack_at > 0);
	assert_non_null(next);
	/* new data was waiting (PSNs up to 63), but the retransmission went first */
	assert_int_equal(next->psn, 5);
	assert_true(next->flags & UET_PF_RETX);
	assert_int_equal(next->dscp, UET_DSCP_TRIMMABLE_RETX);
	uet_sim_results(sim, &res);
	assert_int_equal(res.nacks, 1);
	assert_int_equal(res.retransmits, 1);
	assert_int_equal(res.timeouts, 0);
	assert_int_equal(res.trims, 1);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

/* Serialization starts of data packets from host 0. */
static uint32_t data_starts(const struct capture *c, uint64_t *t, uint32_t max)
{
	uint32_t n = 0;

	ROWS_FOREACH(c, r)
		if (r->nic == 0 && !r->rx && r->kind == UET_PKT_DATA && n < max)
			t[n++] = r->t_ps;
	return n;
}

static void test_lost_ack_recovered_by_rto_with_doubled_timeout(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	uint64_t ser = 80ull * (100 + UET_WIRE_HDR_BYTES); /* 100 B payload at 80 ps/B */
	uint64_t rto = scn->nic.initial_rto_ps, t[8];
	struct uet_results res;
	struct uet_sim *sim;
	struct capture c;

	sim = make_sim(scn, NULL);
	capture_init(&c);
	c.drop_kind = UET_PKT_ACK;
	c.drop_count = 2;
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, 100, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	assert_int_equal(data_starts(&c, t, 8), 3);
	/* the timer starts when serialization ends; each retransmission doubles it */
	assert_int_equal(t[1] - (t[0] + ser), rto);
	assert_int_equal(t[2] - (t[1] + ser), 2 * rto);
	uet_sim_results(sim, &res);
	assert_int_equal(res.timeouts, 2);
	assert_int_equal(res.retransmits, 2);
	/* the receiver got the data once; the retransmissions were duplicates */
	assert_int_equal(res.bytes_delivered, 100);
	assert_int_equal(res.dup_packets, 2);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

static void test_rto_backoff_stops_at_cap_and_never_gives_up(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	uint64_t ser = 80ull * (100 + UET_WIRE_HDR_BYTES), rto, t[16];
	struct uet_sim *sim;
	struct capture c;
	uint32_t n;

	scn->nic.max_rto_backoff = 2;
	rto = scn->nic.initial_rto_ps;
	sim = make_sim(scn, NULL);
	capture_init(&c);
	c.drop_kind = UET_PKT_ACK;
	c.drop_count = 9;
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, 100, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	n = data_starts(&c, t, 16);
	assert_int_equal(n, 10);
	for (uint32_t i = 1; i < n; i++)
		assert_int_equal(t[i] - (t[i - 1] + ser), rto << (i - 1 < 2 ? i - 1 : 2));
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);

	/* FixedRexmitTimeEnable: every attempt waits FixedRexmitTimeout */
	scn = pair_scenario();
	scn->nic.fixed_rexmit_enable = true;
	scn->nic.fixed_rexmit_ps = 7000000;
	sim = make_sim(scn, NULL);
	capture_init(&c);
	c.drop_kind = UET_PKT_ACK;
	c.drop_count = 3;
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, 100, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	n = data_starts(&c, t, 16);
	assert_int_equal(n, 4);
	for (uint32_t i = 1; i < n; i++)
		assert_int_equal(t[i] - (t[i - 1] + ser), 7000000);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

static void test_sack_retires_out_of_order_packets_without_retransmitting(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_results res;
	struct uet_sim *sim;
	struct capture c;
	bool block[4] = { false };
	uint32_t retx_psn = UINT32_MAX, n_retx = 0;

	scn->nic.initial_cwnd_bytes = 256ull * (MSS + UET_NOMINAL_HDR_BYTES);
	sim = make_sim(scn, NULL);
	capture_init(&c);
	c.drop_kind = UET_PKT_DATA;
	c.drop_psn = 3;
	c.drop_count = 1;
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, 200 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	ROWS_FOREACH(&c, r) {
		if (r->nic == 0 && !r->rx && r->kind == UET_PKT_DATA && (r->flags & UET_PF_RETX)) {
			retx_psn = r->psn;
			n_retx++;
		}
		if (r->nic == 1 && !r->rx && r->kind == UET_PKT_ACK && r->cack == 2 && r->psn > 3) {
			/* the hole at PSN 3 holds the cumulative ACK at 2; the bitmap
			 * reports 64-PSN blocks beyond it in turn */
			assert_int_equal((r->sack_base - 3) % 64, 0);
			if ((r->sack_base - 3) / 64 < 4)
				block[(r->sack_base - 3) / 64] = true;
			if (r->sack_base == 3) /* PSN 3 itself is missing, 4.. arrived */
				assert_int_equal(r->sack_bits & 3, 2);
			else
				assert_true(r->sack_bits & 1);
		}
	}
	assert_true(block[0] && block[1] && block[2] && block[3]);
	/* only the lost packet went again, after its timer; SACKed ones never */
	assert_int_equal(n_retx, 1);
	assert_int_equal(retx_psn, 3);
	uet_sim_results(sim, &res);
	assert_int_equal(res.timeouts, 1);
	assert_int_equal(res.dup_packets, 0);
	assert_int_equal(res.bytes_delivered, 200ull * MSS);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

/* Largest in-flight of host 0's groups, sampled at every packet. */
struct window_probe {
	struct uet_sim *sim;
	uint64_t max_group_inflight, max_nic_inflight;
	uint32_t max_pdcs;
	uint32_t alternations;
	int last_pdc;
};

static void window_monitor(void *ctx, const struct uet_pkt_view *p)
{
	struct window_probe *w = ctx;
	const struct uet_nic *nic = &w->sim->ns.nics[0];
	uint64_t total = 0;

	for (uint32_t i = 0; i < nic->n_groups; i++) {
		const struct uet_group *g = nic->groups[i];

		total += g->inflight;
		if (g->inflight > w->max_group_inflight)
			w->max_group_inflight = g->inflight;
		if (g->n_tx > w->max_pdcs)
			w->max_pdcs = g->n_tx;
	}
	if (total > w->max_nic_inflight)
		w->max_nic_inflight = total;
	if (p->nic == 0 && !p->rx && p->kind == UET_PKT_DATA) {
		if (w->last_pdc >= 0 && (int)p->pdc != w->last_pdc)
			w->alternations++;
		w->last_pdc = (int)p->pdc;
	}
}

static void run_two_messages(bool groups, struct window_probe *w)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_hooks h = { .ctx = w, .monitor = window_monitor };

	scn->nic.pdc_groups = groups;
	scn->nic.initial_cwnd_bytes = 8 * (MSS + UET_NOMINAL_HDR_BYTES);
	memset(w, 0, sizeof(*w));
	w->last_pdc = -1;
	w->sim = make_sim(scn, NULL);
	uet_sim_set_hooks(w->sim, &h);
	assert_int_equal(uet_sim_post(w->sim, 0, 1, 100 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_post(w->sim, 0, 1, 100 * MSS, 0, -1), 1);
	assert_int_equal(uet_sim_run(w->sim, STOP_PS), 0);
	uet_sim_destroy(w->sim);
	free(scn);
}

static void test_pdcs_of_a_group_share_its_window(void **state)
{
	uint64_t w8 = 8 * (MSS + UET_NOMINAL_HDR_BYTES);
	struct window_probe w;

	run_two_messages(true, &w);
	assert_int_equal(w.max_pdcs, 2);             /* both PDCs in one group */
	assert_true(w.max_group_inflight <= w8);      /* one window between them */
	assert_true(w.max_nic_inflight <= w8);
	assert_true(w.alternations > 150);           /* and they take turns */

	run_two_messages(false, &w);
	assert_int_equal(w.max_pdcs, 1);             /* a group per PDC */
	assert_true(w.max_group_inflight <= w8);
	assert_true(w.max_nic_inflight > w8);         /* two windows */
}

struct prefetch_probe {
	struct uet_sim *sim;
	uint64_t max_prefetch, max_inflight;
};

static void prefetch_monitor(void *ctx, const struct uet_pkt_view *p)
{
	struct prefetch_probe *w = ctx;
	const struct uet_nic *nic = &w->sim->ns.nics[0];

	if (nic->prefetch_used > w->max_prefetch)
		w->max_prefetch = nic->prefetch_used;
	for (uint32_t i = 0; i < nic->n_groups; i++)
		if (nic->groups[i]->inflight > w->max_inflight)
			w->max_inflight = nic->groups[i]->inflight;
}

static void test_prefetch_buffer_bounds_fetches_and_window_applies_at_commit(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	uint64_t pkt_wire = MSS + UET_WIRE_HDR_BYTES, pkt_nominal = MSS + UET_NOMINAL_HDR_BYTES;
	struct prefetch_probe w = { 0 };
	struct uet_hooks h = { .ctx = &w, .monitor = prefetch_monitor };
	struct uet_results res;

	scn->nic.prefetch_enable = true;
	scn->nic.prefetch_bytes = (uint32_t)(3 * pkt_wire);
	scn->nic.initial_cwnd_bytes = 2 * pkt_nominal;
	w.sim = make_sim(scn, NULL);
	uet_sim_set_hooks(w.sim, &h);
	assert_int_equal(uet_sim_post(w.sim, 0, 1, 100 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(w.sim, STOP_PS), 0);
	uet_sim_results(w.sim, &res);
	assert_int_equal(res.bytes_delivered, 100ull * MSS);
	assert_true(w.max_prefetch <= 3 * pkt_wire);
	assert_true(w.max_prefetch >= 2 * pkt_wire); /* it did fetch ahead */
	assert_true(w.max_inflight <= 2 * pkt_nominal);
	uet_sim_destroy(w.sim);
	free(scn);

	/* a buffer that cannot hold one packet on the wire stops the run before it starts */
	scn = pair_scenario();
	scn->nic.prefetch_enable = true;
	scn->nic.prefetch_bytes = (uint32_t)pkt_wire - 1;
	{
		struct uet_sim *sim = NULL;
		struct pcm_diag diag;

		assert_int_equal(uet_sim_create(scn, NULL, 1, &sim, &diag), -EINVAL);
		assert_non_null(strstr(diag.msg, "PrefetchBufferSize"));
	}
	free(scn);
}

static void test_every_byte_is_delivered_once(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_results res;
	struct uet_sim *sim;
	uint64_t total = 0;

	/* a k=4 fat tree, small queues, trimming for first transmissions off: drops,
	 * trims of retransmissions, reordering across paths and a failed link */
	scn->topo.kind = UET_TOPO_FAT_TREE;
	scn->topo.k = 4;
	scn->topo.queue_bytes = 6 * (MSS + UET_WIRE_HDR_BYTES);
	scn->nic.initial_cwnd_bytes = 64 * (MSS + UET_NOMINAL_HDR_BYTES);
	scn->nic.initial_rto_ps = 50000000;
	scn->n_failures = 1;
	snprintf(scn->failures[0].a, sizeof(scn->failures[0].a), "agg0.0");
	snprintf(scn->failures[0].b, sizeof(scn->failures[0].b), "core0");
	scn->failures[0].at_ps = 20000000;
	scn->failures[0].until_ps = UINT64_MAX;
	sim = make_sim(scn, NULL);
	assert_non_null(sim);
	for (uint32_t i = 0; i < 16; i++) {
		for (uint32_t j = 1; j <= 3; j++) {
			uint64_t bytes = 1000 + (uint64_t)(i * 7919 + j * 104729) % 300000;

			int id = uet_sim_post(sim, i, (i + j * 5) % 16, bytes, j * 1000000ull, -1);

			assert_true(id >= 0);
			total += bytes;
		}
	}
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	uet_sim_results(sim, &res);
	assert_int_equal(res.completed, 48);
	/* each message completed at the receiver too */
	for (uint32_t i = 0; i < uet_sim_n_msgs(sim); i++) {
		const struct uet_msg_info *m = uet_sim_msg(sim, i);

		assert_true(m->rx_done_ps > 0 && m->rx_done_ps <= m->done_ps);
	}
	/* new bytes counted once each, whatever was retransmitted or duplicated */
	assert_int_equal(res.bytes_delivered, total);
	assert_true(res.retransmits > 0);
	assert_true(res.drops > 0);
	uet_sim_destroy(sim);
	free(scn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_256_packet_message_draws_256_acks),
		cmocka_unit_test(test_ack_request_every_4th_with_first_and_last),
		cmocka_unit_test(test_coalescing_receiver_acks_once_per_threshold),
		cmocka_unit_test(test_coalescing_full_window_asks_for_an_ack),
		cmocka_unit_test(test_acks_do_not_queue_behind_data_without_the_uet_policy),
		cmocka_unit_test(test_trim_nack_requeues_ahead_of_new_data),
		cmocka_unit_test(test_lost_ack_recovered_by_rto_with_doubled_timeout),
		cmocka_unit_test(test_rto_backoff_stops_at_cap_and_never_gives_up),
		cmocka_unit_test(test_sack_retires_out_of_order_packets_without_retransmitting),
		cmocka_unit_test(test_pdcs_of_a_group_share_its_window),
		cmocka_unit_test(test_prefetch_buffer_bounds_fetches_and_window_applies_at_commit),
		cmocka_unit_test(test_every_byte_is_delivered_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
