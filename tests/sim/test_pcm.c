// SPDX-License-Identifier: MIT
/*
 * test_pcm.c - the NIC's PCM integration: which signals each ACK, NACK,
 * timeout and transmission feeds, and that each control is enforced (CWND as
 * the window, RATE by pacing, EV as the next packet's entropy, receiver
 * credit), in synchronous mode and with a modelled scheduling delay, with the
 * policy chosen per destination.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "builtin.h"
#include "harness.h"
#include "sim.h"

extern const struct pcm_package pcm_pkg_sim_counter;
extern const struct pcm_package pcm_pkg_step_window;
extern const struct pcm_package pcm_pkg_pace_half;
extern const struct pcm_package pcm_pkg_ev_const;
extern const struct pcm_package pcm_pkg_rto_entropy;
extern const struct pcm_package pcm_pkg_base_rtt_echo;

#define MSS 4096u
#define STOP_PS (1000ull * 1000000000ull)

/* A variable of the record in @slot of policy @p's shell (records outlive their groups). */
static pcm_uint var_of(struct uet_sim *sim, uint32_t p, uint32_t slot, const char *name)
{
	const struct pcm_package *pkg = sim->ns.cc.cc[p].pkg;
	const pcm_uint *rec = pcm_shell_record(sim->ns.cc.cc[p].shell, slot);

	for (uint32_t i = 0; i < pkg->n_variables; i++)
		if (strcmp(pkg->variables[i].name, name) == 0)
			return rec[2 + pkg->n_signals + pkg->n_controls + pkg->variables[i].slot];
	fail_msg("no variable %s", name);
	return 0;
}

static pcm_uint var(struct uet_sim *sim, uint32_t slot, const char *name)
{
	return var_of(sim, 0, slot, name);
}

static struct uet_sim *pair_with(struct uet_scenario *scn, const struct pcm_package *pkg)
{
	const struct pcm_package *pkgs[1] = { pkg };

	snprintf(scn->policies[0], sizeof(scn->policies[0]), "%s", pkg ? pkg->name : "none");
	return make_sim(scn, pkgs);
}

/* Drop the first transmission of PSN 20 and trim the first of PSN 3. */
struct two_faults {
	struct capture c;
	bool dropped, trimmed;
};

static enum uet_filter_verdict two_faults_filter(void *ctx, const struct uet_pkt_view *p)
{
	struct two_faults *f = ctx;

	if (p->kind != UET_PKT_DATA || (p->flags & UET_PF_RETX))
		return UET_FILTER_PASS;
	if (p->psn == 20 && !f->dropped) {
		f->dropped = true;
		return UET_FILTER_DROP;
	}
	if (p->psn == 3 && !f->trimmed) {
		f->trimmed = true;
		return UET_FILTER_TRIM;
	}
	return UET_FILTER_PASS;
}

static void two_faults_monitor(void *ctx, const struct uet_pkt_view *p)
{
	capture_monitor(&((struct two_faults *)ctx)->c, p);
}

static void test_ack_nack_rto_and_tx_signals_reach_the_handler(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct two_faults f = { 0 };
	struct uet_hooks h = { .ctx = &f, .monitor = two_faults_monitor,
			       .at_switch = two_faults_filter };
	uint32_t acks = 0, data = 0, trimmed_entropy = 0;
	const struct uet_pkt_view *last_ack = NULL;
	uint64_t tx_of[64] = { 0 }, rtt;
	struct uet_sim *sim;

	scn->nic.trimming = true;
	sim = pair_with(scn, &pcm_pkg_sim_counter);
	uet_sim_set_hooks(sim, &h);
	assert_int_equal(uet_sim_post(sim, 0, 1, 64 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	ROWS_FOREACH(&f.c, r) {
		if (r->nic == 0 && !r->rx && r->kind == UET_PKT_DATA) {
			data++;
			tx_of[r->psn] = r->t_ps;
			if (r->psn == 3 && !(r->flags & UET_PF_RETX))
				trimmed_entropy = r->entropy;
		}
		if (r->nic == 0 && r->rx && r->kind == UET_PKT_ACK) {
			acks++;
			last_ack = r;
		}
	}
	/* the sender's group took record 0 */
	assert_int_equal(var(sim, 0, "ACKS"), acks);
	assert_int_equal(var(sim, 0, "NACKS"), 1);
	assert_int_equal(var(sim, 0, "RTOS"), 1);
	assert_int_equal(var(sim, 0, "TXES"), data);
	assert_int_equal(data, 66);
	assert_int_equal(var(sim, 0, "ACKED_BYTES"), 64 * MSS);
	/* trimmed on the port facing the receiver: bit 16 flags the last hop */
	assert_int_equal(var(sim, 0, "LAST_NACK_EV"), trimmed_entropy | (1u << 16));
	/* RTT: ACK arrival minus the acknowledged packet's start, minus the reported service */
	rtt = last_ack->t_ps - tx_of[last_ack->psn] - last_ack->service_ps;
	assert_int_equal(var(sim, 0, "LAST_RTT"), rtt);
	uet_sim_destroy(sim);
	free(f.c.rows);
	free(scn);
}

/* For each of the first @n data packets: was it sent before the previous one's ACK came back? */
static uint32_t sent_before_previous_ack(const struct capture *c, uint32_t n)
{
	uint64_t tx[64] = { 0 }, ack[64] = { 0 };
	uint32_t early = 0;

	ROWS_FOREACH(c, r) {
		if (r->nic == 0 && !r->rx && r->kind == UET_PKT_DATA && r->psn < 64 && !tx[r->psn])
			tx[r->psn] = r->t_ps;
		if (r->nic == 0 && r->rx && r->kind == UET_PKT_ACK && r->psn < 64 && !ack[r->psn])
			ack[r->psn] = r->t_ps;
	}
	for (uint32_t i = 1; i < n; i++)
		early += tx[i] < ack[i - 1];
	return early;
}

static void test_cwnd_applies_at_once_in_sync_and_n_events_late_in_async(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim;
	struct capture c;

	/* sync: the first ACK opens the window to 16 packets */
	sim = pair_with(scn, &pcm_pkg_step_window);
	capture_init(&c);
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, 40 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	assert_int_equal(sent_before_previous_ack(&c, 2), 0); /* one packet at first */
	assert_true(sent_before_previous_ack(&c, 10) >= 8);   /* then a burst */
	uet_sim_destroy(sim);
	free(c.rows);

	/* async, 8 events late: stop-and-wait until the 8th ACK has been fed */
	scn->shell_mode = UET_SHELL_ASYNC;
	scn->delay_events = 8;
	sim = pair_with(scn, &pcm_pkg_step_window);
	capture_init(&c);
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, 40 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	assert_int_equal(sent_before_previous_ack(&c, 9), 0);
	assert_true(sent_before_previous_ack(&c, 16) >= 6);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

static void test_rate_control_is_enforced_by_pacing(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	uint64_t ser = 80ull * (MSS + UET_WIRE_HDR_BYTES), prev = 0;
	struct uet_sim *sim = pair_with(scn, &pcm_pkg_pace_half);
	const struct uet_msg_info *m;
	struct capture c;
	uint32_t n = 0;

	capture_init(&c);
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, 200 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	ROWS_FOREACH(&c, r) {
		if (r->nic == 0 && !r->rx && r->kind == UET_PKT_DATA) {
			if (n++)
				assert_true(r->t_ps - prev >= 2 * ser);
			prev = r->t_ps;
		}
	}
	assert_int_equal(n, 200);
	m = uet_sim_msg(sim, 0);
	/* 200 packets at half of 100 Gbit/s take at least 199 gaps of two packet times */
	assert_true(m->done_ps - m->post_ps >= 199 * 2 * ser);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

static void test_ev_control_sets_each_packets_entropy(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim = pair_with(scn, &pcm_pkg_ev_const);
	struct capture c;
	uint32_t n = 0;

	capture_init(&c);
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, 50 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	ROWS_FOREACH(&c, r) {
		if (r->nic == 0 && !r->rx && r->kind == UET_PKT_DATA) {
			assert_int_equal(r->entropy, 0x1234);
			n++;
		}
	}
	assert_int_equal(n, 50);
	/* one TX_READY call per packet, before it was built */
	assert_int_equal(var(sim, 0, "CALLS"), 50);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

/* step_window drives the window, ev_const beside it (the scenario's LB) the entropy. */
static struct uet_sim *pair_with_lb(struct uet_scenario *scn)
{
	const struct pcm_package *pkgs[2] = { &pcm_pkg_step_window, &pcm_pkg_ev_const };

	snprintf(scn->policies[0], sizeof(scn->policies[0]), "step_window");
	assert_int_equal(uet_scenario_set_lb(scn, "ev_const"), 0);
	assert_int_equal(scn->lb_policy, 1);
	return make_sim(scn, pkgs);
}

static void test_lb_package_runs_beside_the_policy_each_driving_its_own_control(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim;
	struct capture c;
	uint32_t n, fixed;

	for (int async = 0; async < 2; async++) {
		scn->shell_mode = async ? UET_SHELL_ASYNC : UET_SHELL_SYNC;
		scn->delay_events = async ? 8 : 0;
		sim = pair_with_lb(scn);
		capture_init(&c);
		capture_attach(&c, sim);
		assert_int_equal(uet_sim_post(sim, 0, 1, 40 * MSS, 0, -1), 0);
		assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
		n = fixed = 0;
		ROWS_FOREACH(&c, r) {
			if (r->nic == 0 && !r->rx && r->kind == UET_PKT_DATA) {
				fixed += r->entropy == 0x1234;
				n++;
			}
		}
		assert_int_equal(n, 40);
		/* async: the LB's EV, too, reaches the NIC 8 of its feeds (TX_READY or ACK) late */
		if (async)
			assert_true(fixed >= 40 - 8 && fixed < 40);
		else
			assert_int_equal(fixed, 40);
		/* the window is step_window's, as when it runs alone */
		if (async) {
			assert_int_equal(sent_before_previous_ack(&c, 9), 0);
			assert_true(sent_before_previous_ack(&c, 16) >= 6);
		} else {
			assert_int_equal(sent_before_previous_ack(&c, 2), 0);
			assert_true(sent_before_previous_ack(&c, 10) >= 8);
		}
		/* the LB's record: one TX_READY call per packet */
		assert_int_equal(var_of(sim, 1, 0, "CALLS"), 40);
		uet_sim_destroy(sim);
		free(c.rows);
	}
	free(scn);
}

static void test_lb_overlapping_a_policy_is_rejected_naming_both_and_the_control(void **state)
{
	static const struct {
		const char *policy, *lb, *want[3];
	} cases[] = {
		{ "swift", "mprdma", { "'swift'", "'mprdma'", "PCM_CTRL_CWND" } },
		{ "mprdma", "reps", { "'mprdma'", "'reps'", "PCM_CTRL_EV" } },
		{ "swift", "eqds", { "'eqds'", "PCM_CTRL_CUMULATIVE_CREDIT", "receiver" } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct uet_scenario *scn = pair_scenario();
		const struct pcm_package *pkgs[2] = { 0 };
		struct uet_sim *sim = NULL;
		struct pcm_diag diag;

		snprintf(scn->policies[0], sizeof(scn->policies[0]), "%s", cases[i].policy);
		assert_int_equal(uet_scenario_set_lb(scn, cases[i].lb), 0);
		for (uint32_t p = 0; p < 2; p++)
			for (size_t b = 0; pcm_builtin_policies[b]; b++)
				if (strcmp(pcm_builtin_policies[b]->name, scn->policies[p]) == 0)
					pkgs[p] = pcm_builtin_policies[b];
		assert_int_equal(uet_sim_create(scn, pkgs, 1, &sim, &diag), -EINVAL);
		assert_null(sim);
		for (int w = 0; w < 3; w++)
			if (!strstr(diag.msg, cases[i].want[w]))
				fail_msg("case %zu: '%s' lacks %s", i, diag.msg, cases[i].want[w]);
		free(scn);
	}
}

static void test_cnp_at_most_one_per_interval(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	const struct pcm_package *pkgs[1] = { &pcm_pkg_sim_counter };
	struct uet_sim *sim;
	uint64_t span_ps;

	scn->topo.senders = 4;
	scn->topo.ecn_kmin_bytes = 0;
	scn->topo.ecn_kmax_bytes = 1; /* mark whatever finds a queue */
	scn->nic.cnp_interval_ps = 20000000;
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "sim_counter");
	sim = make_sim(scn, pkgs);
	assert_int_equal(uet_sim_post(sim, 0, 4, 400 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_post(sim, 1, 4, 400 * MSS, 0, -1), 1);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	span_ps = uet_sim_msg(sim, 0)->done_ps;
	assert_true(var(sim, 0, "ECNS") > 100);
	assert_true(var(sim, 0, "CNPS") >= 1);
	assert_true(var(sim, 0, "CNPS") <= 1 + span_ps / scn->nic.cnp_interval_ps);
	uet_sim_destroy(sim);
	free(scn);
}

static void test_eqds_credit_keeps_the_last_hop_from_trimming(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct pcm_package_handle h;
	const struct pcm_package *pkgs[1];
	struct uet_results r;
	struct uet_sim *sim;
	char err[256];

	assert_int_equal(pcm_package_open("eqds", pcm_builtin_policies, &h, err, sizeof(err)), 0);
	pkgs[0] = h.pkg;
	scn->topo.senders = 8;
	scn->nic.trimming = true;
	scn->nic.credit_speculative_bytes = 0; /* everything is pulled */
	scn->nic.initial_cwnd_bytes = 1u << 20;
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "eqds");
	sim = make_sim(scn, pkgs);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(uet_sim_post(sim, i, 8, 300 * MSS, 0, -1), (int)i);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	uet_sim_results(sim, &r);
	assert_int_equal(r.completed, 8);
	assert_int_equal(r.trims, 0);
	assert_int_equal(r.retransmits, 0);
	/* credit paced at the receiver's link keeps it busy */
	assert_true(r.goodput_gbps > 80);
	uet_sim_destroy(sim);
	free(scn);

	/* without credit the same incast of fixed windows trims */
	scn = pair_scenario();
	scn->topo.senders = 8;
	scn->nic.trimming = true;
	scn->nic.initial_cwnd_bytes = 1u << 20;
	sim = make_sim(scn, NULL);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(uet_sim_post(sim, i, 8, 300 * MSS, 0, -1), (int)i);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	uet_sim_results(sim, &r);
	assert_true(r.trims > 100);
	uet_sim_destroy(sim);
	free(scn);
}

static void test_policy_is_chosen_per_destination(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	const struct pcm_package *pkgs[2] = { NULL, &pcm_pkg_pace_half };
	struct uet_sim *sim;
	uint64_t fct_paced, fct_free;

	scn->topo.kind = UET_TOPO_FAT_TREE;
	scn->topo.k = 4;
	snprintf(scn->policies[1], sizeof(scn->policies[1]), "pace_half");
	scn->n_policies = 2;
	scn->rules[0] = (struct uet_policy_rule){ .src = -1, .dst = 5, .policy = 1 };
	scn->n_rules = 1;
	sim = make_sim(scn, pkgs);
	assert_int_equal(uet_sim_post(sim, 0, 5, 300 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_post(sim, 1, 6, 300 * MSS, 0, -1), 1);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	assert_int_equal(uet_sim_msg(sim, 0)->policy, 1);
	assert_int_equal(uet_sim_msg(sim, 1)->policy, 0);
	fct_paced = uet_sim_msg(sim, 0)->done_ps;
	fct_free = uet_sim_msg(sim, 1)->done_ps;
	assert_true(fct_paced > fct_free * 3 / 2);
	uet_sim_destroy(sim);
	free(scn);
}

static void test_timeout_reports_the_timed_out_packets_entropy(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim = pair_with(scn, &pcm_pkg_rto_entropy);
	uint32_t lost_entropy = UINT32_MAX;
	struct capture c;

	/* the first copy of PSN 7 is lost: only its timer recovers it */
	capture_drop(&c, sim, UET_PKT_DATA, 7, 1, UET_FILTER_DROP);
	assert_int_equal(uet_sim_post(sim, 0, 1, 16 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	ROWS_FOREACH(&c, r)
		if (r->nic == 0 && !r->rx && r->kind == UET_PKT_DATA && r->psn == 7 &&
		    !(r->flags & UET_PF_RETX))
			lost_entropy = r->entropy;
	assert_int_equal(var(sim, 0, "RTOS"), 1);
	/* path feedback for an LB: the entropy of the packet that timed out */
	assert_int_equal(var(sim, 0, "LAST_RTO_EV"), lost_entropy);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

static void test_policy_reads_the_base_rtt_its_probe_measured(void **state)
{
	struct uet_scenario *scn = pair_scenario();
	struct uet_sim *sim = pair_with(scn, &pcm_pkg_base_rtt_echo);
	uint64_t probe_tx = 0, probe_ack_rx = 0, last;
	struct capture c;

	capture_init(&c);
	capture_attach(&c, sim);
	assert_int_equal(uet_sim_post(sim, 0, 1, 64 * MSS, 0, -1), 0);
	assert_int_equal(uet_sim_run(sim, STOP_PS), 0);
	ROWS_FOREACH(&c, r) {
		if (r->nic == 0 && !r->rx && r->kind == UET_PKT_PROBE)
			probe_tx = r->t_ps;
		if (r->nic == 0 && r->rx && r->kind == UET_PKT_PROBE_ACK)
			probe_ack_rx = r->t_ps;
	}
	assert_true(probe_tx && probe_ack_rx > probe_tx);
	/* before the probe returns: InitialBaseRTT */
	assert_int_equal(var(sim, 0, "FIRST_BASE_RTT"), scn->nic.initial_base_rtt_ps);
	/* after: the probe's round trip (timed from its queueing, at most one packet
	 * time before its serialization started) */
	last = var(sim, 0, "LAST_BASE_RTT");
	assert_true(last >= probe_ack_rx - probe_tx);
	assert_true(last <= probe_ack_rx - probe_tx + 80ull * (MSS + UET_WIRE_HDR_BYTES));
	assert_true(last < scn->nic.initial_base_rtt_ps);
	uet_sim_destroy(sim);
	free(c.rows);
	free(scn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ack_nack_rto_and_tx_signals_reach_the_handler),
		cmocka_unit_test(test_timeout_reports_the_timed_out_packets_entropy),
		cmocka_unit_test(test_policy_reads_the_base_rtt_its_probe_measured),
		cmocka_unit_test(test_cwnd_applies_at_once_in_sync_and_n_events_late_in_async),
		cmocka_unit_test(test_rate_control_is_enforced_by_pacing),
		cmocka_unit_test(test_ev_control_sets_each_packets_entropy),
		cmocka_unit_test(test_cnp_at_most_one_per_interval),
		cmocka_unit_test(test_eqds_credit_keeps_the_last_hop_from_trimming),
		cmocka_unit_test(test_policy_is_chosen_per_destination),
		cmocka_unit_test(test_lb_package_runs_beside_the_policy_each_driving_its_own_control),
		cmocka_unit_test(test_lb_overlapping_a_policy_is_rejected_naming_both_and_the_control),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
