// SPDX-License-Identifier: MIT
/*
 * test_liveness.c - the stalls and deviations a review of the NIC model found
 * with several messages per peer and with link failures, one property each:
 * a group resumes after one of its PDCs completes, a failure of the sender's
 * own link releases what the packet held, there is no retry limit, a failed
 * link delivers nothing queued on it, the receive pool charges IP sizes, a new
 * message waits for its doorbell, and RTT samples follow Karn's rule.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "builtin.h"
#include "harness.h"
#include "sim.h"

#define MSS 4096u
#define PKT_NOMINAL (MSS + UET_NOMINAL_HDR_BYTES)
#define US 1000000ull
#define STOP_PS (1000ull * 1000000000ull) /* 1 s */

static const struct pcm_package *builtin(const char *name)
{
	for (size_t i = 0; pcm_builtin_policies[i]; i++)
		if (strcmp(pcm_builtin_policies[i]->name, name) == 0)
			return pcm_builtin_policies[i];
	fail_msg("no built-in policy %s", name);
	return NULL;
}

static void set_link_failure(struct uet_scenario *scn, const char *a, const char *b,
			     uint64_t at_ps, uint64_t until_ps)
{
	struct uet_link_failure *f = &scn->failures[scn->n_failures++];

	memset(f, 0, sizeof(*f));
	snprintf(f->a, sizeof(f->a), "%s", a);
	snprintf(f->b, sizeof(f->b), "%s", b);
	f->at_ps = at_ps;
	f->until_ps = until_ps;
}

/* Run to completion and check that nothing is left held: the leak audit. */
static void run_and_audit(struct uet_sim *sim, uint64_t stop_ps)
{
	struct pcm_diag diag;

	assert_int_equal(uet_sim_run(sim, stop_ps), 0);
	if (uet_sim_audit(sim, &diag) < 0)
		fail_msg("audit: %s", diag.msg);
}

/*
 * uet_sim_start(): once, explicit or from either run function, with its
 * result kept; the run it starts is the one run and run_until go on with.
 */
static void test_run_starts_once_whoever_starts_it(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim = make_sim(scn, NULL);
	struct pcm_diag diag = { .msg = "stale" };

	assert_int_equal(uet_sim_post(sim, 0, 1, 64 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_start(sim, &diag), 0);
	assert_string_equal(diag.msg, "");
	assert_int_equal(uet_sim_start(sim, NULL), 0);
	assert_int_equal(uet_sim_post(sim, 0, 1, MSS, 0, -1), -EBUSY);
	assert_int_equal(uet_sim_run_until(sim, 5 * US), 0);
	assert_int_equal(uet_sim_n_msgs(sim), 1);
	run_and_audit(sim, STOP_PS);
	assert_true(uet_sim_msg(sim, 0)->done_ps > 0);
	uet_sim_destroy(sim);
	free(scn);
}

static void test_group_resumes_after_one_of_its_pdcs_completes(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim;

	/* a window of one packet: the second message waits for the first's ACK */
	scn->nic.initial_cwnd_bytes = PKT_NOMINAL;
	sim = make_sim(scn, NULL);
	assert_int_equal(uet_sim_post(sim, 0, 1, MSS, 0, -1), 0);
	assert_int_equal(uet_sim_post(sim, 0, 1, MSS, 0, -1), 1);
	run_and_audit(sim, STOP_PS);
	assert_true(uet_sim_msg(sim, 1)->done_ps > uet_sim_msg(sim, 0)->done_ps);
	uet_sim_destroy(sim);
	free(scn);
}

/*
 * An incast of @senders with @per messages of @bytes each under @policy, each
 * message starting at a scattered time in the first 20 us (3.3 us links, as
 * scenarios/incast-8.yaml): how many complete.
 */
static uint32_t incast_completions(uint32_t senders, uint32_t per, uint64_t bytes,
				   const char *policy)
{
	struct uet_scenario *scn = pair_scenario();
	const struct pcm_package *pkgs[1] = { builtin(policy) };
	struct uet_results r;
	struct uet_sim *sim;
	int rc;

	scn->topo.senders = senders;
	scn->topo.link_delay_ps = 3300000;
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "%s", policy);
	scn->nic.trimming = true;
	sim = make_sim(scn, pkgs);
	for (uint32_t h = 0; h < senders; h++)
		for (uint32_t k = 0; k < per; k++)
			assert_true(uet_sim_post(sim, h, senders, bytes,
						 (h * 7919u + k * 104729u) % 20000u * 1000u, -1) >= 0);
	rc = uet_sim_run(sim, STOP_PS);
	uet_sim_results(sim, &r);
	if (rc == 0) {
		struct pcm_diag diag;

		if (uet_sim_audit(sim, &diag) < 0)
			fail_msg("audit: %s", diag.msg);
	}
	uet_sim_destroy(sim);
	free(scn);
	return r.completed;
}

static void test_incast16_with_two_messages_per_sender_completes_every_message(void **state)
{
	assert_int_equal(incast_completions(16, 2, 20000, "swift"), 32);
}

static void test_32_senders_with_four_messages_each_complete_every_message(void **state)
{
	assert_int_equal(incast_completions(32, 4, 20000, "swift"), 128);
	assert_int_equal(incast_completions(32, 4, 20000, "newreno"), 128);
}

static void test_sender_own_link_failure_times_out_and_releases_its_reservations(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	const struct pcm_package *pkgs[1] = { builtin("swift") };
	struct uet_results r;
	struct uet_sim *sim;

	snprintf(scn->policies[0], sizeof(scn->policies[0]), "swift");
	set_link_failure(scn, "host0", "sw0", 5 * US, 30 * US);
	sim = make_sim(scn, pkgs);
	assert_int_equal(uet_sim_post(sim, 0, 1, 1000000, 0, -1), 0);
	run_and_audit(sim, STOP_PS);
	uet_sim_results(sim, &r);
	/* what went onto the dead link was lost and recovered by its timers */
	assert_true(r.timeouts > 0);
	assert_int_equal(r.bytes_delivered, 1000000);
	uet_sim_destroy(sim);
	free(scn);
}

static void test_fixed_timeout_keeps_retransmitting_past_255_attempts(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_results r;
	struct uet_sim *sim;

	scn->nic.fixed_rexmit_enable = true;
	scn->nic.fixed_rexmit_ps = 2 * US;
	/* the receiver's link is down for 1,000 timeouts, then back */
	set_link_failure(scn, "sw0", "host1", 0, 2000 * US);
	sim = make_sim(scn, NULL);
	assert_int_equal(uet_sim_post(sim, 0, 1, MSS, 0, -1), 0);
	run_and_audit(sim, STOP_PS);
	uet_sim_results(sim, &r);
	assert_true(r.timeouts > 800); /* a 2 ms outage, a timeout every 2 us plus a packet time */
	assert_true(uet_sim_msg(sim, 0)->done_ps > 2000 * US);
	uet_sim_destroy(sim);
	free(scn);
}

/* Data packets the receiver got from a link after it failed and before it came back. */
struct link_watch {
	uint32_t host;
	uint64_t lost_from_ps, up_ps;
	uint32_t arrived_while_down;
};

static void link_watch_monitor(void *ctx, const struct uet_pkt_view *p)
{
	struct link_watch *w = ctx;

	if (p->rx && p->nic == w->host && p->kind == UET_PKT_DATA && p->t_ps > w->lost_from_ps &&
	    p->t_ps <= w->up_ps)
		w->arrived_while_down++;
}

static void test_failed_link_delivers_nothing_queued_on_it(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	uint64_t down_ps = 10 * US, up_ps = 40 * US;
	uint64_t ser_ps = 80ull * (MSS + UET_WIRE_HDR_BYTES); /* at 100 Gbit/s */
	struct link_watch w = { .host = 2 };
	struct uet_hooks h = { .ctx = &w, .monitor = link_watch_monitor };
	struct uet_sim *sim;

	/* two senders into one receiver: the switch's port to it has a queue */
	scn->topo.senders = 2;
	set_link_failure(scn, "sw0", "host2", down_ps, up_ps);
	/* a packet on the wire at the failure still arrives; nothing after it */
	w.lost_from_ps = down_ps + ser_ps + scn->topo.link_delay_ps;
	w.up_ps = up_ps + scn->topo.link_delay_ps;
	sim = make_sim(scn, NULL);
	uet_sim_set_hooks(sim, &h);
	assert_int_equal(uet_sim_post(sim, 0, 2, 1000 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_post(sim, 1, 2, 1000 * MSS, 0, -1), 1);
	run_and_audit(sim, STOP_PS);
	assert_int_equal(w.arrived_while_down, 0);
	uet_sim_destroy(sim);
	free(scn);
}

/*
 * Eight senders, one full packet each, over a PCIe link so slow that no write
 * completes during the test: the receiver's pool of exactly four full packets
 * at their IP size (4,184 B) takes four and drops four.
 */
static struct uet_sim *slow_pcie_incast(struct uet_scenario *scn, FILE *events)
{
	struct uet_records rec = { .events = events };
	struct uet_sim *sim;

	scn->topo.senders = 8;
	scn->nic.lane_bps = 1000000;
	scn->nic.lane_count = 1;
	scn->nic.rx_pool_bytes = 4 * PKT_NOMINAL;
	scn->nic.event_logging = true;
	sim = make_sim(scn, NULL);
	if (events)
		uet_sim_set_records(sim, &rec);
	for (uint32_t h = 0; h < 8; h++)
		assert_true(uet_sim_post(sim, h, 8, MSS, 0, -1) >= 0);
	/* every fetch takes 35.7 ms at 1 Mbit/s; stop after the arrivals, before any
	 * timer fires (100 us) and long before the first write ends */
	assert_int_equal(uet_sim_run(sim, 35800 * US), -ETIMEDOUT);
	return sim;
}

static void test_receive_pool_charges_each_packet_its_ip_size(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim = slow_pcie_incast(scn, NULL);
	const struct uet_nic *rx = &sim->ns.nics[8];

	assert_int_equal(rx->st[UET_ST_RX_DATA_PKTS], 4);
	assert_int_equal(rx->st[UET_ST_RX_POOL_DROPS], 4);
	uet_sim_destroy(sim);
	free(scn);
}

static void test_packet_dropped_by_the_pool_creates_no_receiver_pdc(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct uet_sim *sim = slow_pcie_incast(scn, f);
	uint32_t created = 0;

	fflush(f);
	/* rows: time_ps,nic,ip,event,pdc,peer_ip,bytes; the receiver is NIC 8 */
	for (const char *at = buf; (at = strstr(at, ",8,10.0.0.8,pdc_created,")); at++)
		created++;
	assert_int_equal(created, 4);
	uet_sim_destroy(sim);
	fclose(f);
	free(buf);
	free(scn);
}

static void test_new_message_waits_for_its_doorbell_delay(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim;

	/* host 0 sends to hosts 1 and 2; message B rings 10 ns after A; the
	 * egress pool is large enough not to stop either */
	scn->topo.senders = 2;
	scn->nic.egress_pool_bytes = 1u << 20;
	sim = make_sim(scn, NULL);
	assert_int_equal(uet_sim_post(sim, 0, 2, 64 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_post(sim, 0, 1, 64 * MSS, 10000, -1), 1);
	/* A's transmit process runs at 15 ns: B's 15 ns are not over before 25 ns */
	assert_int_equal(uet_sim_run(sim, 24000), -ETIMEDOUT);
	assert_int_equal(sim->ns.pdcs[0]->next_psn > 0, 1);
	assert_int_equal(sim->ns.pdcs[1]->next_psn, 0);
	assert_int_equal(uet_sim_run(sim, 26000), -ETIMEDOUT);
	assert_true(sim->ns.pdcs[1]->next_psn > 0);
	uet_sim_destroy(sim);
	free(scn);
}

/* The smallest RTT sample the senders' groups held at any packet. */
struct rtt_watch {
	struct uet_sim *sim;
	uint64_t min_rtt_ps;
};

static void rtt_watch_monitor(void *ctx, const struct uet_pkt_view *p)
{
	struct rtt_watch *w = ctx;
	for (uint32_t h = 0; h < 2; h++) {
		const struct uet_nic *nic = &w->sim->ns.nics[h];

		for (uint32_t i = 0; i < nic->n_groups; i++) {
			uint64_t rtt = nic->groups[i]->last_rtt_ps;

			if (rtt && rtt < w->min_rtt_ps)
				w->min_rtt_ps = rtt;
		}
	}
}

static void test_rtt_sample_is_never_taken_from_a_retransmitted_packet(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct rtt_watch w = { .min_rtt_ps = UINT64_MAX };
	struct uet_hooks h = { .ctx = &w, .monitor = rtt_watch_monitor };
	struct uet_results r;

	/*
	 * Two senders into one receiver and a fixed timeout just above the
	 * unloaded round trip (about 4.8 us): the first packets are acknowledged
	 * in time, the later ones wait in the switch's queue and go twice.
	 */
	scn->topo.senders = 2;
	scn->nic.fixed_rexmit_enable = true;
	scn->nic.fixed_rexmit_ps = 5 * US;
	w.sim = make_sim(scn, NULL);
	uet_sim_set_hooks(w.sim, &h);
	assert_int_equal(uet_sim_post(w.sim, 0, 2, 32 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_post(w.sim, 1, 2, 32 * MSS, 0, -1), 1);
	run_and_audit(w.sim, STOP_PS);
	uet_sim_results(w.sim, &r);
	assert_true(r.retransmits > 0);
	/* propagation alone is two 1 us links each way; an ACK of the first copy
	 * timed from the retransmission would read less */
	assert_true(w.min_rtt_ps != UINT64_MAX);
	assert_true(w.min_rtt_ps >= 4 * scn->topo.link_delay_ps);
	uet_sim_destroy(w.sim);
	free(scn);
}

/* Drop every other data packet reaching the switch, whatever it is. */
static enum uet_filter_verdict every_other_filter(void *ctx, const struct uet_pkt_view *p)
{
	unsigned *n = ctx;

	if (p->kind != UET_PKT_DATA)
		return UET_FILTER_PASS;
	return (*n)++ % 2 ? UET_FILTER_DROP : UET_FILTER_PASS;
}

static void test_ack_requests_survive_a_loss_pattern_of_their_period(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	unsigned n = 0;
	struct uet_hooks h = { .ctx = &n, .at_switch = every_other_filter };
	struct uet_sim *sim;

	/* every 2nd packet asks for an ACK, and every 2nd packet is lost */
	scn->nic.ack_every_nth = 2;
	scn->nic.ack_first = false;
	scn->nic.ack_last = false;
	scn->nic.initial_rto_ps = 10 * US;
	scn->nic.max_rto_backoff = 0;
	sim = make_sim(scn, NULL);
	uet_sim_set_hooks(sim, &h);
	assert_int_equal(uet_sim_post(sim, 0, 1, 16 * MSS, 0, -1), 0);
	run_and_audit(sim, 100000 * US);
	uet_sim_destroy(sim);
	free(scn);
}

static void test_window_below_one_packet_sends_one_packet_at_a_time(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim;

	/* documented deviation: the window is never smaller than one packet */
	scn->nic.initial_cwnd_bytes = 100;
	sim = make_sim(scn, NULL);
	assert_int_equal(uet_sim_post(sim, 0, 1, 8 * MSS, 0, -1), 0);
	run_and_audit(sim, STOP_PS);
	uet_sim_destroy(sim);
	free(scn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_starts_once_whoever_starts_it),
		cmocka_unit_test(test_group_resumes_after_one_of_its_pdcs_completes),
		cmocka_unit_test(test_incast16_with_two_messages_per_sender_completes_every_message),
		cmocka_unit_test(test_32_senders_with_four_messages_each_complete_every_message),
		cmocka_unit_test(test_sender_own_link_failure_times_out_and_releases_its_reservations),
		cmocka_unit_test(test_fixed_timeout_keeps_retransmitting_past_255_attempts),
		cmocka_unit_test(test_failed_link_delivers_nothing_queued_on_it),
		cmocka_unit_test(test_receive_pool_charges_each_packet_its_ip_size),
		cmocka_unit_test(test_packet_dropped_by_the_pool_creates_no_receiver_pdc),
		cmocka_unit_test(test_new_message_waits_for_its_doorbell_delay),
		cmocka_unit_test(test_rtt_sample_is_never_taken_from_a_retransmitted_packet),
		cmocka_unit_test(test_ack_requests_survive_a_loss_pattern_of_their_period),
		cmocka_unit_test(test_window_below_one_packet_sends_one_packet_at_a_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
