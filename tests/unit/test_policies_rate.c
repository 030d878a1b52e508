// SPDX-License-Identifier: MIT
/*
 * test_policies_rate.c - the rate controllers (dcqcn, timely) and the
 * receiver-credit policy (eqds) of the policy library, driven through the
 * synchronous shell on the "uet" target with scripted events and timer
 * ticks. Each is checked step by step against a reference model of its
 * rules (double precision for the rate controllers, integers for eqds, which
 * uses nothing else), and against the behaviour its paper states.
 */
#include <stdio.h>
#include <stdlib.h>

#include "policy_harness.h"

/* ---- dcqcn ------------------------------------------------------------------- */

#define DQ_G 0.00390625
#define DQ_K (55 * US)
#define DQ_T (55 * US)
#define DQ_BC (10000000 / F_MSS)
#define DQ_F 5
#define DQ_AI 0.001
#define DQ_HAI 0.01
#define DQ_MIN 0.001

struct dcqcn_m {
	double rc, rt, alpha;
	uint64_t t_count, bc_count;
	uint64_t cnp_sig, tx_sig, epoch_a, epoch_r; /* the shell's view of the signals */
};

static void dq_init(struct dcqcn_m *m)
{
	memset(m, 0, sizeof(*m));
	m->rc = m->rt = m->alpha = 1.0;
}

static double dq_clamp(double r)
{
	return m_clamp(r, DQ_MIN, 1.0);
}

static void dq_increase(struct dcqcn_m *m)
{
	uint64_t lo = m->t_count < m->bc_count ? m->t_count : m->bc_count;
	uint64_t hi = m->t_count < m->bc_count ? m->bc_count : m->t_count;

	if (lo > DQ_F)
		m->rt = m->rt + DQ_HAI * (double)(lo - DQ_F);
	else if (hi > DQ_F)
		m->rt = m->rt + DQ_AI;
	m->rt = dq_clamp(m->rt);
	m->rc = dq_clamp((m->rt + m->rc) / 2.0);
}

/* Feed @cnps and @txs at @now (both 0: a timer tick); returns whether the handler ran. */
static bool dq_step(struct dcqcn_m *m, uint64_t cnps, uint64_t txs, uint64_t now)
{
	bool alpha_fired, rate_fired;

	m->cnp_sig += cnps;
	m->tx_sig += txs;
	alpha_fired = now - m->epoch_a >= DQ_K;
	rate_fired = now - m->epoch_r >= DQ_T;
	if (!(m->cnp_sig >= 1 || m->tx_sig >= DQ_BC || alpha_fired || rate_fired))
		return false;
	if (m->cnp_sig) {
		for (uint64_t i = 0; i < m->cnp_sig && i < 16; i++) {
			m->rt = m->rc;
			m->rc = dq_clamp(m->rc * (1.0 - m->alpha / 2.0));
			m->alpha = m_ewma(m->alpha, 1.0, DQ_G);
		}
		m->t_count = m->bc_count = 0;
		m->tx_sig = 0;
		m->epoch_a = m->epoch_r = now;
	} else {
		if (alpha_fired) {
			m->alpha = m->alpha * (1.0 - DQ_G);
			m->epoch_a = now;
		}
		if (rate_fired) {
			m->t_count++;
			dq_increase(m);
			m->epoch_r = now;
		}
		for (; m->tx_sig >= DQ_BC; m->tx_sig -= DQ_BC) {
			m->bc_count++;
			dq_increase(m);
		}
	}
	m->cnp_sig = 0;
	return true;
}

static void dq_feed(struct pcm_shell *sh, struct dcqcn_m *m, uint64_t cnps, uint64_t txs,
		    uint64_t now)
{
	struct pcm_event ev = { 0 };
	bool call = dq_step(m, cnps, txs, now);

	if (cnps)
		ph_set(&ev, PCM_SIG_CNP, cnps);
	if (txs)
		ph_set(&ev, PCM_SIG_TX_EVENT, txs);
	ph_feed(sh, &ev, now, call);
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_RATE), m_rate(m->rc));
	if (call) {
		assert_true(ph_var_d(sh, "RC") == m->rc);
		assert_true(ph_var_d(sh, "RT") == m->rt);
		assert_true(ph_var_d(sh, "ALPHA") == m->alpha);
	}
}

static void test_dcqcn_matches_reference_on_random_trace(void **state)
{
	struct pcm_shell *sh = ph_open("dcqcn");
	struct dcqcn_m m;
	uint64_t s = 0xdc9c, now = 0;

	dq_init(&m);
	for (unsigned i = 0; i < 50000; i++) {
		uint64_t r = ph_rand(&s);

		now += 1 * US + (r >> 8) % (30 * US);
		switch (r % 20) {
		case 0:
			dq_feed(sh, &m, 1 + (r >> 50) % 3, 0, now);
			break;
		case 1:
		case 2:
			dq_feed(sh, &m, 0, 0, now);
			break;
		default:
			dq_feed(sh, &m, 0, (r >> 40) % 600, now);
			break;
		}
	}
	pcm_shell_destroy(sh);
}

static void test_dcqcn_cuts_on_cnp_then_recovers_through_fr_ai_hai(void **state)
{
	struct pcm_shell *sh = ph_open("dcqcn");
	uint64_t now = 0;
	struct dcqcn_m m;
	double rt;

	dq_init(&m);
	/* two CNPs: RC halves twice (alpha starts at 1), RT is the rate before the last cut */
	dq_feed(sh, &m, 1, 0, now += US);
	assert_true(m.rc == 0.5);
	dq_feed(sh, &m, 1, 0, now += US);
	assert_true(m.rt == 0.5 && m.rc < 0.26);
	/* fast recovery: F timer periods, each halfway back to RT, RT unchanged */
	for (int i = 0; i < DQ_F; i++) {
		double before = m.rc;

		dq_feed(sh, &m, 0, 0, now += DQ_T);
		assert_true(m.rt == 0.5 && m.rc == (0.5 + before) / 2.0);
	}
	/* additive increase: the timer count passed F, the byte counter did not */
	dq_feed(sh, &m, 0, 0, now += DQ_T);
	assert_true(m.rt == 0.5 + DQ_AI);
	/* hyper increase: both counts past F; RT grows by i * R_HAI */
	rt = m.rt;
	for (int i = 0; i < DQ_F + 1; i++)
		dq_feed(sh, &m, 0, DQ_BC, now += US);
	assert_true(m.bc_count == DQ_F + 1 && m.rt > rt + DQ_HAI / 2);
	/* and all the way back to line rate */
	for (int i = 0; i < 400; i++)
		dq_feed(sh, &m, 0, DQ_BC, now += US);
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_RATE), PCM_RATE_ONE);
	pcm_shell_destroy(sh);
}

static void test_dcqcn_alpha_decays_only_without_cnps(void **state)
{
	struct pcm_shell *sh = ph_open("dcqcn");
	uint64_t now = 0;
	struct dcqcn_m m;

	dq_init(&m);
	dq_feed(sh, &m, 1, 0, now += US);
	/* a CNP every 50 us keeps restarting the 55 us alpha timer: alpha stays up */
	for (int i = 0; i < 20; i++)
		dq_feed(sh, &m, 1, 0, now += 50 * US);
	assert_true(m.alpha > 0.99);
	/* silence: one decay per K */
	for (int i = 0; i < 256; i++)
		dq_feed(sh, &m, 0, 0, now += DQ_K);
	assert_true(m.alpha < 0.4 && m.alpha > 0.3);
	/* a cut with a small alpha is small */
	{
		double before = m.rc;

		dq_feed(sh, &m, 1, 0, now += US);
		assert_true(m.rc > before * 0.8);
	}
	pcm_shell_destroy(sh);
}

/*
 * policies/profiles/dcqcn-htsim.yaml is policies/dcqcn.yaml with htsim's
 * increase steps: after their header comments the two files must agree line
 * for line except inside the R_AI and R_HAI entries, and the profile's steps
 * must be htsim's (5% and 10% of line rate).
 */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void test_dcqcn_htsim_profile_differs_only_in_its_increase_steps(void **state)
{
	char *base = read_text(PCM_SOURCE_ROOT "/policies/dcqcn.yaml");
	char *prof = read_text(PCM_SOURCE_ROOT "/policies/profiles/dcqcn-htsim.yaml");
	char *a = strstr(base, "\nalgorithm:"), *b = strstr(prof, "\nalgorithm:");
	char entry[64] = "", *sa, *sb;
	unsigned differ = 0;

	assert_non_null(a);
	assert_non_null(b);
	for (char *la = strtok_r(a, "\n", &sa), *lb = strtok_r(b, "\n", &sb); la || lb;
	     la = strtok_r(NULL, "\n", &sa), lb = strtok_r(NULL, "\n", &sb)) {
		assert_non_null(la);
		assert_non_null(lb);
		if (strncmp(la, "  - name: ", 10) == 0)
			sscanf(la + 10, "%63s", entry);
		if (strcmp(la, lb) == 0)
			continue;
		if (strcmp(entry, "R_AI") != 0 && strcmp(entry, "R_HAI") != 0)
			fail_msg("the profile differs from dcqcn.yaml in %s: '%s' / '%s'", entry, la,
				 lb);
		differ++;
		if (strncmp(lb, "    value: ", 11) == 0)
			assert_true(strtod(lb + 11, NULL) == (strcmp(entry, "R_AI") == 0 ? 0.05 : 0.1));
	}
	assert_true(differ >= 2);
	free(base);
	free(prof);
}

/* ---- timely ------------------------------------------------------------------ */

#define TM_ALPHA 0.02
#define TM_BETA 0.8
#define TM_DELTA 0.001
#define TM_MIN_RTT_US (F_BRTT / 1000000.0)
#define TM_T_LOW_US (F_TRTT / 1000000.0)
/* the paper's ratio: T_high = 10 T_low (500 / 50 us) */
#define TM_T_HIGH_US (10.0 * TM_T_LOW_US)
#define TM_SEG_US (65536.0 * 8.0 / (F_RATE_GBPS * 1000.0))

struct timely_m {
	double rate, prev, diff;
	uint64_t neg, t_last, rtt;
	bool updated;
};

/* One ACK event, with an RTT sample when @rtt_ps is nonzero. */
static void tm_step(struct timely_m *m, uint64_t rtt_ps, uint64_t now)
{
	double rtt, prev, grad, r;

	if (rtt_ps)
		m->rtt = rtt_ps;
	if (!m->rtt)
		return;
	if (m->updated && !(m_ps_to_us(now - m->t_last) >= TM_SEG_US / m->rate))
		return;
	rtt = m_ps_to_us(m->rtt);
	prev = m->updated ? m->prev : rtt;
	m->diff = m_ewma(m->diff, rtt - prev, TM_ALPHA);
	grad = m->diff / TM_MIN_RTT_US;
	/* HAI counts raw differences below zero, not the smoothed gradient */
	m->neg = rtt - prev < 0.0 ? m->neg + 1 : 0;
	m->prev = rtt;
	if (rtt < TM_T_LOW_US)
		r = m->rate + TM_DELTA;
	else if (rtt > TM_T_HIGH_US)
		r = m->rate * (1.0 - TM_BETA * (1.0 - TM_T_HIGH_US / rtt));
	else if (grad <= 0.0)
		r = m->rate + TM_DELTA * (double)(m->neg >= 5 ? 5 : 1);
	else
		r = m->rate * (1.0 - TM_BETA * grad);
	m->rate = m_clamp(r, 0.001, 1.0);
	m->t_last = now;
	m->updated = true;
}

static void tm_feed(struct pcm_shell *sh, struct timely_m *m, uint64_t rtt_ps, uint64_t now)
{
	struct pcm_event ev = { 0 };

	ph_set(&ev, PCM_SIG_ACK, 1);
	if (rtt_ps)
		ph_set(&ev, PCM_SIG_RTT, rtt_ps);
	ph_feed(sh, &ev, now, true);
	tm_step(m, rtt_ps, now);
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_RATE), m_rate(m->rate));
	if (m->updated) {
		assert_true(ph_var_d(sh, "RATE_FRAC") == m->rate);
		assert_true(ph_var_d(sh, "RTT_DIFF_US") == m->diff);
	}
}

static void test_timely_matches_reference_on_random_trace(void **state)
{
	struct pcm_shell *sh = ph_open("timely");
	struct timely_m m = { .rate = 1.0 };
	uint64_t s = 0x7133, now = 0, rtt = F_BRTT;

	for (unsigned i = 0; i < 50000; i++) {
		uint64_t r = ph_rand(&s);

		/* a random walk of the RTT from the base RTT to past T_high */
		if (r % 2)
			rtt += (r >> 8) % (2 * US);
		else if (rtt > F_BRTT + 2 * US)
			rtt -= (r >> 8) % (2 * US);
		if ((r >> 40) % 500 == 0)
			rtt = 250 * US; /* now and then past T_high (245 us) */
		if (rtt > 300 * US)
			rtt = 40 * US;
		now += (r >> 30) % (4 * US);
		tm_feed(sh, &m, (r >> 20) % 4 ? rtt : 0, now);
	}
	pcm_shell_destroy(sh);
}

static void test_timely_reacts_to_thresholds_and_gradient(void **state)
{
	struct pcm_shell *sh = ph_open("timely");
	struct timely_m m = { .rate = 1.0 };
	uint64_t now = 0, rtt;
	double r0;

	/* above T_high: multiplicative decrease by BETA (1 - T_high / rtt) */
	tm_feed(sh, &m, 300 * US, now += US);
	assert_true(m.rate == 1.0 * (1.0 - TM_BETA * (1.0 - TM_T_HIGH_US / 300.0)));
	/* within one segment time no second update */
	r0 = m.rate;
	tm_feed(sh, &m, 300 * US, now += US);
	assert_true(m.rate == r0);
	/*
	 * A steady RTT between the thresholds: a zero gradient, so an additive
	 * increase; the raw differences are zero, not negative, so never 5x.
	 */
	rtt = 24900000;
	for (int i = 0; i < 700; i++) {
		r0 = m.rate;
		tm_feed(sh, &m, rtt, now += 40 * US);
		assert_true(m.neg == (i == 0)); /* the first steps down from 300 us */
		assert_true(m.rate == 1.0 || fabs(m.rate - (r0 + TM_DELTA)) < 1e-12);
	}
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_RATE), PCM_RATE_ONE);
	/* far above T_high again, then back between the thresholds */
	tm_feed(sh, &m, 2000 * US, now += 40 * US);
	for (int i = 0; i < 250; i++)
		tm_feed(sh, &m, rtt, now += 40 * US);
	assert_true(m.rate < 0.9);
	/* a rising RTT between the thresholds: positive gradient, decrease */
	r0 = m.rate;
	for (int i = 0; i < 60; i++)
		tm_feed(sh, &m, rtt += US / 5, now += 40 * US);
	assert_true(rtt < TM_T_HIGH_US * US);
	assert_true(m.rate < r0 && m.diff > 0.0);
	/* a falling RTT: negative differences; increase once the gradient is <= 0, 5x after 5 */
	while (m.diff > 0.0)
		tm_feed(sh, &m, rtt -= US / 100, now += 40 * US);
	for (int i = 0; i < 4; i++)
		tm_feed(sh, &m, rtt -= US / 100, now += 40 * US);
	assert_true(m.neg >= 5 && rtt > TM_T_LOW_US * US);
	r0 = m.rate;
	tm_feed(sh, &m, rtt -= US / 100, now += 40 * US);
	assert_true(fabs(m.rate - (r0 + 5 * TM_DELTA)) < 1e-12);
	/* below T_low: additive increase back to line rate */
	for (int i = 0; i < 3000; i++)
		tm_feed(sh, &m, F_BRTT, now += 40 * US);
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_RATE), PCM_RATE_ONE);
	pcm_shell_destroy(sh);
}

/* ---- eqds -------------------------------------------------------------------- */

#define EQ_PSB (8000u / F_RATE_GBPS)
#define EQ_Q F_MSS
#define EQ_BURST (8u * F_MSS)
#define EQ_INTERVAL ((uint64_t)F_MSS * EQ_PSB)

struct eqds_m {
	uint64_t requested, bank, last, credit, req_sig, timer_epoch;
	bool init;
};

static bool eq_step(struct eqds_m *m, uint64_t req, uint64_t now)
{
	uint64_t demand, affordable, grant;
	bool timer = now - m->timer_epoch >= EQ_INTERVAL;

	m->req_sig += req;
	if (!(m->req_sig >= 1 || timer))
		return false;
	if (timer) /* a DELTA timer: its reference moves to now when it fires */
		m->timer_epoch = now;
	if (!m->init) {
		m->bank = EQ_BURST * EQ_PSB;
		m->last = now;
		m->init = true;
	}
	m->requested += m->req_sig;
	m->bank += now - m->last;
	if (m->bank > EQ_BURST * EQ_PSB)
		m->bank = EQ_BURST * EQ_PSB;
	demand = m->requested > m->credit ? m->requested - m->credit : 0;
	affordable = m->bank / EQ_PSB;
	grant = demand <= affordable ? demand : affordable / EQ_Q * EQ_Q;
	m->bank -= grant * EQ_PSB;
	m->last = now;
	m->credit += grant;
	m->req_sig = 0;
	return true;
}

static void eq_feed(struct pcm_shell *sh, struct eqds_m *m, uint64_t req, uint64_t now)
{
	struct pcm_event ev = { 0 };

	if (req)
		ph_set(&ev, PCM_SIG_CREDIT_REQUEST, req);
	ph_feed(sh, &ev, now, eq_step(m, req, now));
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_CUMULATIVE_CREDIT), m->credit);
}

static void test_eqds_matches_reference_on_random_trace(void **state)
{
	struct pcm_shell *sh = ph_open("eqds");
	struct eqds_m m = { 0 };
	uint64_t s = 0xe9d5, now = 0;

	for (unsigned i = 0; i < 50000; i++) {
		uint64_t r = ph_rand(&s);

		now += (r >> 8) % (2 * EQ_INTERVAL);
		eq_feed(sh, &m, r % 16 == 0 ? (r >> 32) % 200000 : 0, now);
		assert_true(m.credit <= m.requested);
	}
	assert_true(m.credit > 0);
	pcm_shell_destroy(sh);
}

static void test_eqds_grants_at_the_link_pace_and_never_more_than_requested(void **state)
{
	struct pcm_shell *sh = ph_open("eqds");
	struct eqds_m m = { 0 };
	const uint64_t want = 1000000;
	uint64_t now = 0, credit;

	eq_feed(sh, &m, want, now);
	/* the bank starts full: one burst at once */
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_CUMULATIVE_CREDIT), EQ_BURST);
	/* ticks every 0.2 us: the credit follows 1 byte per 80 ps, in whole pulls */
	for (unsigned i = 1; i <= 200; i++) {
		now += 200000;
		pcm_shell_tick(sh, 0, now);
		eq_step(&m, 0, now);
		credit = ph_ctrl(sh, PCM_CTRL_CUMULATIVE_CREDIT);
		assert_int_equal(credit, m.credit);
		assert_true(credit <= EQ_BURST + now / EQ_PSB);
		assert_true(credit + 2 * EQ_Q >= EQ_BURST + now / EQ_PSB);
		assert_true(credit % EQ_Q == 0);
	}
	/* 40 us at 100 Gbit/s is 500 kB */
	print_message("eqds: %llu bytes of credit after %llu us\n", (unsigned long long)credit,
		      (unsigned long long)(now / US));
	/* ticks keep coming: the credit stops at exactly the request */
	for (unsigned i = 0; i < 1000; i++)
		eq_feed(sh, &m, 0, now += EQ_INTERVAL);
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_CUMULATIVE_CREDIT), want);
	/* a new request is served from the banked burst at once */
	eq_feed(sh, &m, 1000, now += EQ_INTERVAL);
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_CUMULATIVE_CREDIT), want + 1000);
	pcm_shell_destroy(sh);
}

static void test_eqds_is_not_loadable_where_credit_cannot_be_enforced(void **state)
{
	struct pcm_package_handle h;
	struct pcm_shell *sh = NULL;
	struct pcm_diag diag;
	char err[256];

	assert_int_equal(pcm_package_open("eqds", pcm_builtin_policies, &h, err, sizeof(err)), 0);
	assert_int_equal(pcm_shell_create(h.pkg, pcm_target_find("verbs"), 1, 0, &sh, &diag),
			 -ENOTSUP);
	assert_non_null(strstr(diag.msg, "PCM_CTRL_CUMULATIVE_CREDIT"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dcqcn_matches_reference_on_random_trace),
		cmocka_unit_test(test_dcqcn_cuts_on_cnp_then_recovers_through_fr_ai_hai),
		cmocka_unit_test(test_dcqcn_alpha_decays_only_without_cnps),
		cmocka_unit_test(test_dcqcn_htsim_profile_differs_only_in_its_increase_steps),
		cmocka_unit_test(test_timely_matches_reference_on_random_trace),
		cmocka_unit_test(test_timely_reacts_to_thresholds_and_gradient),
		cmocka_unit_test(test_eqds_matches_reference_on_random_trace),
		cmocka_unit_test(test_eqds_grants_at_the_link_pace_and_never_more_than_requested),
		cmocka_unit_test(test_eqds_is_not_loadable_where_credit_cannot_be_enforced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
