// SPDX-License-Identifier: MIT
/*
 * test_policies.c - the built-in policies driven through the synchronous
 * shell with scripted signal sequences, checked step by step against
 * reference models: swift against the hand-written double-precision Swift
 * (bench/native_swift.c), doca_ecn_aimd against an integer model of the DOCA
 * tutorial's rules and a double-precision model of the same rules.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "builtin.h"
#include "native_swift.h"
#include "shell.h"

#define BIT(t) ((pcm_uint)1 << (t))

static struct pcm_shell *open_policy(const char *name)
{
	struct pcm_package_handle h;
	struct pcm_shell *sh = NULL;
	struct pcm_diag diag;
	char err[256];

	assert_int_equal(pcm_package_open(name, pcm_builtin_policies, &h, err, sizeof(err)), 0);
	assert_int_equal(pcm_shell_create(h.pkg, NULL, 1, 0, &sh, &diag), 0);
	return sh;
}

static double var_float(struct pcm_shell *sh, const char *name)
{
	const struct pcm_package *pkg = pcm_shell_flow_package(sh, 0);
	unsigned off = 2 + pkg->n_signals + pkg->n_controls;
	double d;

	for (uint32_t i = 0; i < pkg->n_variables; i++) {
		if (strcmp(pkg->variables[i].name, name) == 0) {
			memcpy(&d, &pcm_shell_record(sh, 0)[off + pkg->variables[i].slot],
			       sizeof(d));
			return d;
		}
	}
	fail_msg("no variable %s", name);
	return 0;
}

/* One scripted step: what happened since the last step. */
struct step {
	uint32_t acks, nacks, rtos;
	uint64_t rtt_ns; /* 0: no RTT sample in this event */
};

struct swift_pair {
	struct pcm_shell *sh;
	struct native_swift_params p;
	struct native_swift_flow ref;
	uint64_t now_ps;
	unsigned decreases;
	unsigned steps;
};

static void swift_step(struct swift_pair *s, const struct step *st)
{
	struct pcm_event ev = { 0 };
	struct native_swift_event nev = {
		.acks = st->acks, .nacks = st->nacks, .rtos = st->rtos,
		.has_rtt = st->rtt_ns != 0, .acked_bytes = (uint64_t)st->acks * 4096,
		.rtt_ps = st->rtt_ns * 1000,
	};
	double before = s->ref.cwnd_pkts;
	pcm_uint cwnd = 0;
	bool ran;
	int rc;

	s->now_ps += 1000000; /* one event per microsecond */
	if (st->acks) {
		ev.valid |= BIT(PCM_SIG_ACK) | BIT(PCM_SIG_DATA_TX);
		ev.values[PCM_SIG_ACK] = st->acks;
		ev.values[PCM_SIG_DATA_TX] = nev.acked_bytes;
	}
	if (st->nacks) {
		ev.valid |= BIT(PCM_SIG_NACK);
		ev.values[PCM_SIG_NACK] = st->nacks;
	}
	if (st->rtos) {
		ev.valid |= BIT(PCM_SIG_RTO);
		ev.values[PCM_SIG_RTO] = st->rtos;
	}
	if (st->rtt_ns) {
		ev.valid |= BIT(PCM_SIG_RTT);
		ev.values[PCM_SIG_RTT] = nev.rtt_ps;
	}
	rc = pcm_shell_feed(s->sh, 0, &ev, s->now_ps);
	ran = native_swift_on_event(&s->ref, &s->p, &nev, s->now_ps);
	assert_int_equal(rc, ran ? 1 : 0);
	assert_int_equal(pcm_shell_control(s->sh, 0, PCM_CTRL_CWND, &cwnd), 0);
	assert_int_equal(cwnd, s->ref.cwnd_bytes);
	if (ran) {
		assert_true(var_float(s->sh, "CWND_PKTS") == s->ref.cwnd_pkts);
		s->decreases += s->ref.cwnd_pkts < before;
	}
	s->steps++;
}

static void swift_run(struct swift_pair *s, const struct step *st, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		swift_step(s, st);
}

static void swift_pair_init(struct swift_pair *s)
{
	memset(s, 0, sizeof(*s));
	s->sh = open_policy("swift");
	native_swift_default_params(&s->p);
	native_swift_init(&s->ref, &s->p, 0);
}

static void test_swift_grows_below_target_like_reference(void **state)
{
	const struct step low = { .acks = 1, .rtt_ns = 15000 };
	struct swift_pair s;

	swift_pair_init(&s);
	swift_run(&s, &low, 1500);
	assert_int_equal(s.decreases, 0);
	/* grew from the initial BDP window up to the FABRIC_MAX_CWND clamp */
	assert_true(s.ref.cwnd_pkts == s.p.max_cwnd_pkts);
	pcm_shell_destroy(s.sh);
}

static void test_swift_decreases_at_most_once_per_rtt_like_reference(void **state)
{
	const struct step high = { .acks = 1, .rtt_ns = 80000 };
	struct swift_pair s;

	swift_pair_init(&s);
	swift_run(&s, &high, 400); /* 400 us of 80 us RTTs: 5 decreases at most */
	assert_true(s.decreases >= 4 && s.decreases <= 5);
	assert_true(s.ref.cwnd_pkts < 175284.0 / 4096);
	pcm_shell_destroy(s.sh);
}

static void test_swift_nack_and_rto_reactions_like_reference(void **state)
{
	const struct step low = { .acks = 1, .rtt_ns = 16000 };
	const struct step nack = { .nacks = 1 };
	const struct step rto = { .rtos = 1 };
	const struct step rtt_only = { .rtt_ns = 30000 };
	struct swift_pair s;

	swift_pair_init(&s);
	swift_run(&s, &low, 50);
	swift_run(&s, &nack, 3);      /* one halving; the rest within the same RTT */
	swift_run(&s, &rtt_only, 5);  /* RTT-only events accumulate, never call */
	swift_run(&s, &low, 100);
	swift_run(&s, &rto, 6);       /* fifth RTO in a row: down to the minimum */
	assert_true(s.ref.cwnd_pkts == s.p.min_cwnd_pkts);
	swift_run(&s, &low, 200);
	assert_true(s.ref.cwnd_pkts > s.p.min_cwnd_pkts);
	pcm_shell_destroy(s.sh);
}

static void test_swift_mixed_trace_matches_reference_every_step(void **state)
{
	uint64_t x = 0x1234567;
	struct swift_pair s;

	swift_pair_init(&s);
	for (unsigned i = 0; i < 20000; i++) {
		struct step st = { 0 };

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		st.acks = (uint32_t)(x % 4);
		st.rtt_ns = x % 3 ? 14000 + (x >> 8) % 60000 : 0;
		st.nacks = (x >> 30) % 50 == 0;
		st.rtos = (x >> 40) % 400 == 0;
		swift_step(&s, &st);
	}
	assert_true(s.decreases > 10);
	pcm_shell_destroy(s.sh);
}

/* DOCA tutorial rules on integers, as a DPA would compute them. */
struct doca_ref {
	uint64_t rate;
	uint64_t tx_pending;
};

#define DOCA_ONE (1u << 20)
#define DOCA_DEC (((1u << 16) * 900) / 1000)
#define DOCA_AI (DOCA_ONE * 5 / 100)
#define DOCA_MIN (DOCA_ONE / 1000)
#define DOCA_EVENTS_PER_INCREASE 1000 /* coalesced TX events of a port (doca_ecn_aimd.yaml) */

static void doca_ref_step(struct doca_ref *r, unsigned cnps, unsigned txs)
{
	for (unsigned i = 0; i < cnps && r->rate > DOCA_MIN; i++) {
		uint64_t cut = ((uint64_t)DOCA_DEC * r->rate) >> 16;

		r->rate = cut < DOCA_MIN ? DOCA_MIN : cut;
	}
	r->tx_pending += txs;
	while (r->tx_pending >= DOCA_EVENTS_PER_INCREASE) {
		r->tx_pending -= DOCA_EVENTS_PER_INCREASE;
		r->rate = r->rate + (DOCA_AI >> 2) > DOCA_ONE ? DOCA_ONE : r->rate + (DOCA_AI >> 2);
	}
}

/*
 * One event to @flow: @cnps CNPs and, if @tx_pkts, one coalesced TX event
 * standing for that many packets. Return: the flow's rate after it.
 */
static uint64_t doca_feed_flow(struct pcm_shell *sh, uint32_t flow, unsigned cnps,
			       unsigned tx_pkts, uint64_t now)
{
	struct pcm_event ev = { 0 };
	pcm_uint rate = 0;

	if (cnps) {
		ev.valid |= BIT(PCM_SIG_CNP);
		ev.values[PCM_SIG_CNP] = cnps;
	}
	if (tx_pkts) {
		ev.valid |= BIT(PCM_SIG_TX_EVENT);
		ev.values[PCM_SIG_TX_EVENT] = tx_pkts;
	}
	assert_int_equal(pcm_shell_feed(sh, flow, &ev, now), (cnps || tx_pkts) ? 1 : 0);
	assert_int_equal(pcm_shell_control(sh, flow, PCM_CTRL_RATE, &rate), 0);
	return rate;
}

static uint64_t doca_feed(struct pcm_shell *sh, unsigned cnps, unsigned tx_pkts, uint64_t now)
{
	return doca_feed_flow(sh, 0, cnps, tx_pkts, now);
}

static void test_doca_cuts_by_090_per_cnp_with_floor(void **state)
{
	struct pcm_shell *sh = open_policy("doca_ecn_aimd");
	struct doca_ref ref = { .rate = DOCA_ONE };
	double model = DOCA_ONE;

	assert_int_equal(doca_feed(sh, 1, 0, 1), 943712); /* (1 << 20) * 58982 >> 16 */
	doca_ref_step(&ref, 1, 0);
	model *= 0.9;
	for (unsigned i = 0; i < 80; i++) {
		doca_ref_step(&ref, 1, 0);
		model = fmax(model * 0.9, DOCA_MIN);
		assert_int_equal(doca_feed(sh, 1, 0, 2 + i), ref.rate);
		/*
		 * Against exact x0.90 in double: the 16-bit factor is 0.8999939
		 * (7e-6 low) and each >> 16 truncates by under one unit, so after k
		 * cuts the integer rate is within k * (1e-5 * rate + 1) of the model.
		 */
		assert_true(fabs((double)ref.rate - model) <= (i + 2) * (1e-5 * model + 1));
	}
	assert_int_equal(ref.rate, DOCA_MIN);
	pcm_shell_destroy(sh);
}

/*
 * The tutorial's increase, on coalesced TX events: every 1000th event adds
 * AI / 4 whatever the number of packets each stands for (events, not
 * packets, are counted), and the rate never passes line rate.
 */
static void test_doca_adds_quarter_ai_every_1000th_coalesced_tx_event(void **state)
{
	struct pcm_shell *sh = open_policy("doca_ecn_aimd");
	struct doca_ref ref = { .rate = DOCA_ONE };
	uint64_t now = 1;

	for (unsigned i = 0; i < 10; i++) { /* go down first */
		doca_ref_step(&ref, 1, 0);
		assert_int_equal(doca_feed(sh, 1, 0, now++), ref.rate);
	}
	for (unsigned i = 0; i < DOCA_EVENTS_PER_INCREASE - 1; i++) /* unchanged until the 1000th */
		assert_int_equal(doca_feed(sh, 0, 1 + i % 16, now++), ref.rate);
	doca_ref_step(&ref, 0, DOCA_EVENTS_PER_INCREASE);
	assert_int_equal(doca_feed(sh, 0, 16, now++), ref.rate);
	/* an event standing for 1,000 packets is still one event */
	assert_int_equal(doca_feed(sh, 0, 1000, now++), ref.rate);
	doca_ref_step(&ref, 0, 1);
	/* recovery caps at line rate */
	for (unsigned i = 0; i < 100 * DOCA_EVENTS_PER_INCREASE; i++) {
		doca_ref_step(&ref, 0, 1);
		assert_int_equal(doca_feed(sh, 0, 16, now++), ref.rate);
	}
	assert_int_equal(ref.rate, DOCA_ONE);
	pcm_shell_destroy(sh);
}

/*
 * A shell of doca_ecn_aimd with @n_flows flows: flow f in handler instance
 * @instance_of[f], every flow cut by ten CNPs first (room to rise).
 */
static struct pcm_shell *doca_port(uint32_t n_flows, const uint32_t *instance_of)
{
	const struct pcm_package *pkg = pcm_package_find(pcm_builtin_policies, "doca_ecn_aimd");
	struct pcm_shell_config cfg = {
		.packages = &pkg, .n_packages = 1, .max_flows = n_flows, .n_instances = 2,
	};
	struct pcm_shell *sh = NULL;
	struct pcm_diag diag;

	assert_non_null(pkg);
	assert_int_equal(pcm_shell_create_filled(&cfg, 0, &sh, &diag), 0);
	for (uint32_t f = 0; f < n_flows; f++) {
		assert_int_equal(pcm_shell_flow_instance(sh, f, instance_of[f]), 0);
		for (unsigned i = 0; i < 10; i++)
			doca_feed_flow(sh, f, 1, 0, 1);
	}
	return sh;
}

/*
 * The increase's rate, counted over the port: TX events of two flows of one
 * instance (one port), interleaved unevenly, raise the flows' rates exactly
 * floor(N / 1000) times in all after N events, checked after every event
 * (never more often, never less), each time on the flow whose event was
 * the 1000th and by AI / 4; each flow alone would have seen fewer than
 * 1000 of them. The old per-flow count (or any count below 1000) fails.
 */
static void test_doca_counts_tx_events_of_all_flows_of_a_port(void **state)
{
	static const uint32_t one_port[2] = { 0, 0 };
	struct pcm_shell *sh = doca_port(2, one_port);
	uint64_t rate[2], increases = 0, now = 2;
	const unsigned n = 5 * DOCA_EVENTS_PER_INCREASE + 321;

	rate[0] = rate[1] = doca_feed_flow(sh, 0, 0, 0, now);
	for (unsigned i = 1; i <= n; i++) {
		uint32_t f = (i % 7) < 3; /* 3 of every 7 events to flow 1 */
		uint64_t r = doca_feed_flow(sh, f, 0, 16, now++);

		assert_true(r == rate[f] || r == rate[f] + (DOCA_AI >> 2));
		increases += r != rate[f];
		rate[f] = r;
		assert_int_equal(increases, i / DOCA_EVENTS_PER_INCREASE);
	}
	assert_int_equal(increases, 5);
	pcm_shell_destroy(sh);
}

/*
 * Two instances (two ports) count apart: 999 events on each raise neither;
 * the next one does. A reset flow keeps its port's count, which is not its own.
 */
static void test_doca_ports_count_apart(void **state)
{
	static const uint32_t two_ports[2] = { 0, 1 };
	struct pcm_shell *sh = doca_port(2, two_ports);
	uint64_t start = doca_feed_flow(sh, 0, 0, 0, 2), now = 3;

	for (unsigned i = 0; i < DOCA_EVENTS_PER_INCREASE - 1; i++) {
		assert_int_equal(doca_feed_flow(sh, 0, 0, 16, now++), start);
		assert_int_equal(doca_feed_flow(sh, 1, 0, 16, now++), start);
	}
	assert_int_equal(doca_feed_flow(sh, 1, 0, 16, now++), start + (DOCA_AI >> 2));
	assert_int_equal(doca_feed_flow(sh, 0, 0, 16, now++), start + (DOCA_AI >> 2));
	for (unsigned i = 0; i < DOCA_EVENTS_PER_INCREASE / 2; i++)
		doca_feed_flow(sh, 0, 0, 16, now++);
	assert_int_equal(pcm_shell_flow_reset(sh, 0, now), 0);
	for (unsigned i = 0; i < 10; i++)
		start = doca_feed_flow(sh, 0, 1, 0, now++);
	for (unsigned i = 1; i < DOCA_EVENTS_PER_INCREASE / 2; i++)
		assert_int_equal(doca_feed_flow(sh, 0, 0, 16, now++), start);
	assert_int_equal(doca_feed_flow(sh, 0, 0, 16, now++), start + (DOCA_AI >> 2));
	assert_int_equal(pcm_shell_flow_instance(sh, 0, 2), -ERANGE);
	pcm_shell_destroy(sh);
}

/* A descriptor whose instance-variable layout disagrees with its variables is refused. */
static void test_package_validate_checks_the_instance_layout(void **state)
{
	const struct pcm_package *pkg = pcm_package_find(pcm_builtin_policies, "doca_ecn_aimd");
	struct pcm_package bad;
	const char *why = NULL;

	assert_non_null(pkg);
	assert_int_equal(pkg->n_shared_slots, 1);
	assert_int_equal(pcm_package_validate(pkg, &why), 0);
	bad = *pkg;
	bad.n_shared_slots = 2;
	assert_int_equal(pcm_package_validate(&bad, &why), -EINVAL);
	assert_string_equal(why, "instance-variable layout does not match the variables");
	bad = *pkg;
	bad.shared_ref_slot = pkg->record_slots;
	assert_int_equal(pcm_package_validate(&bad, &why), -EINVAL);
	bad = *pkg;
	bad.shared_ref_slot = pkg->handler_slots - 1;
	assert_int_equal(pcm_package_validate(&bad, &why), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swift_grows_below_target_like_reference),
		cmocka_unit_test(test_swift_decreases_at_most_once_per_rtt_like_reference),
		cmocka_unit_test(test_swift_nack_and_rto_reactions_like_reference),
		cmocka_unit_test(test_swift_mixed_trace_matches_reference_every_step),
		cmocka_unit_test(test_doca_cuts_by_090_per_cnp_with_floor),
		cmocka_unit_test(test_doca_adds_quarter_ai_every_1000th_coalesced_tx_event),
		cmocka_unit_test(test_doca_counts_tx_events_of_all_flows_of_a_port),
		cmocka_unit_test(test_doca_ports_count_apart),
		cmocka_unit_test(test_package_validate_checks_the_instance_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
