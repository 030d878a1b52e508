// SPDX-License-Identifier: MIT
/*
 * test_policies_lb.c - the load balancers of the policy library (ops, reps,
 * strack, ecmp_static), which set PCM_CTRL_EV for each packet the datapath
 * announces with TX_READY_PKTS, driven through the synchronous shell on the
 * "uet" target. Each is checked packet by packet against a reference model
 * of its rules (entropies are integers, so the models are integer models
 * with the policies' xorshift generator restated), and against the path
 * behaviour its paper states.
 */
#include "policy_harness.h"

#define EV_BITS 0xffffull
#define LAST_HOP (1ull << 16)

/* One scripted event: feedback and/or a packet about to leave. */
struct lev {
	bool tx;
	uint32_t acks, ecn, nacks, rtos;
	uint64_t ack_ev, nack_ev;
};

enum {
	TRIG_TX = 1,
	TRIG_ACK = 2, /* ACK and ECN */
	TRIG_NACK = 4,
	TRIG_RTO = 8,
};

static bool lev_calls(const struct lev *e, unsigned trig)
{
	return ((trig & TRIG_TX) && e->tx) || ((trig & TRIG_ACK) && (e->acks || e->ecn)) ||
	       ((trig & TRIG_NACK) && e->nacks) || ((trig & TRIG_RTO) && e->rtos);
}

static void lev_feed_flow(struct pcm_shell *sh, uint32_t flow, const struct lev *e, uint64_t now,
			  unsigned trig)
{
	struct pcm_event ev = { 0 };

	if (e->acks) {
		ph_set(&ev, PCM_SIG_ACK, e->acks);
		ph_set(&ev, PCM_SIG_DATA_TX, e->acks * (uint64_t)F_MSS);
		ph_set(&ev, PCM_SIG_ACK_EV, e->ack_ev);
	}
	if (e->ecn) {
		ph_set(&ev, PCM_SIG_ECN, e->ecn);
		ph_set(&ev, PCM_SIG_ECN_EV, e->ack_ev);
	}
	if (e->nacks) {
		ph_set(&ev, PCM_SIG_NACK, e->nacks);
		ph_set(&ev, PCM_SIG_NACK_EV, e->nack_ev);
	}
	if (e->rtos) {
		ph_set(&ev, PCM_SIG_RTO, e->rtos);
		if (!e->nacks && e->nack_ev) /* the timed-out packet's entropy, as uet reports it */
			ph_set(&ev, PCM_SIG_NACK_EV, e->nack_ev);
	}
	if (e->tx)
		ph_set(&ev, PCM_SIG_TX_READY_PKTS, 1);
	assert_int_equal(pcm_shell_feed(sh, flow, &ev, now), lev_calls(e, trig) ? 1 : 0);
}

static void lev_feed(struct pcm_shell *sh, const struct lev *e, uint64_t now, unsigned trig)
{
	lev_feed_flow(sh, 0, e, now, trig);
}

/* Announce one packet on @flow and return its entropy. */
static uint64_t tx_flow(struct pcm_shell *sh, uint32_t flow, uint64_t now, unsigned trig)
{
	struct lev e = { .tx = true };

	lev_feed_flow(sh, flow, &e, now, trig);
	return ph_ctrl_flow(sh, flow, PCM_CTRL_EV);
}

static uint64_t tx(struct pcm_shell *sh, uint64_t now, unsigned trig)
{
	return tx_flow(sh, 0, now, trig);
}

/* A random mix of feedback and packets; entropies drawn from @evs. */
static struct lev lev_random(uint64_t *s, const uint64_t *evs, unsigned n_evs)
{
	uint64_t r = ph_rand(s);
	struct lev e = { 0 };

	switch (r % 16) {
	case 0:
		e.nacks = 1;
		e.nack_ev = evs[(r >> 8) % n_evs] | ((r >> 20) % 2 ? LAST_HOP : 0);
		e.ecn = (r >> 24) % 4 == 0;
		break;
	case 1:
		e.rtos = (r >> 8) % 8 == 0;
		e.tx = !e.rtos;
		break;
	case 2:
	case 3:
	case 4:
	case 5:
	case 6:
		e.acks = 1;
		e.ack_ev = evs[(r >> 8) % n_evs];
		e.ecn = (r >> 24) % 5 == 0;
		break;
	default:
		e.tx = true;
		break;
	}
	return e;
}

/* ---- ops --------------------------------------------------------------------- */

#define OPS_N 256

struct ops_m {
	uint64_t index, xr, salt, rng;
	bool init;
};

static uint64_t ops_next(struct ops_m *m, uint64_t now)
{
	uint64_t ev;

	if (!m->init) {
		m->salt = m_rng_next(&m->rng, now) & EV_BITS & ~(uint64_t)(OPS_N - 1);
		m->xr = m_rng_next(&m->rng, now) & (OPS_N - 1);
		m->init = true;
	}
	ev = ((m->index ^ m->xr) & (OPS_N - 1)) | m->salt;
	if (++m->index == OPS_N) {
		m->index = 0;
		m->xr = m_rng_next(&m->rng, now) & (OPS_N - 1);
	}
	return ev;
}

static void test_ops_matches_reference_packet_by_packet(void **state)
{
	struct pcm_shell *sh = ph_open("ops");
	struct ops_m m = { 0 };
	uint64_t s = 0x0b5, now = 0;

	for (unsigned i = 0; i < 20000; i++) {
		now += 1 + ph_rand(&s) % 400000;
		assert_int_equal(tx(sh, now, TRIG_TX), ops_next(&m, now));
	}
	pcm_shell_destroy(sh);
}

static void test_ops_every_round_sprays_over_all_entropies_once(void **state)
{
	struct pcm_shell *sh = ph_open("ops");
	uint64_t now = 0, salt = 0;

	for (unsigned round = 0; round < 20; round++) {
		uint8_t seen[OPS_N] = { 0 };

		for (unsigned k = 0; k < OPS_N; k++) {
			uint64_t ev = tx(sh, now += 3000, TRIG_TX);

			assert_true(ev <= EV_BITS);
			if (round == 0 && k == 0)
				salt = ev & ~(uint64_t)(OPS_N - 1);
			assert_int_equal(ev & ~(uint64_t)(OPS_N - 1), salt); /* the flow's bits */
			assert_int_equal(seen[ev % OPS_N]++, 0);
		}
	}
	pcm_shell_destroy(sh);
}

static void test_ops_flows_starting_apart_spray_differently(void **state)
{
	struct pcm_shell *sh = ph_open_flows("ops", "uet", 2);
	unsigned same = 0;

	for (unsigned k = 0; k < 512; k++)
		same += tx_flow(sh, 0, 1000000 + k * 3000ull, TRIG_TX) ==
			tx_flow(sh, 1, 7000000 + k * 3000ull, TRIG_TX);
	assert_true(same < 8);
	pcm_shell_destroy(sh);
}

/* ---- ecmp_static ------------------------------------------------------------- */

static void test_ecmp_static_never_changes_the_entropy(void **state)
{
	struct pcm_shell *sh = ph_open("ecmp_static");
	uint64_t s = 0xec3, now = 5000000, rng = 0, ev0, expected;
	static const uint64_t evs[] = { 1, 2, 3 };

	ev0 = tx(sh, now, TRIG_TX);
	expected = m_rng_next(&rng, now) & EV_BITS;
	assert_int_equal(ev0, expected);
	for (unsigned i = 0; i < 20000; i++) {
		struct lev e = lev_random(&s, evs, 3);

		lev_feed(sh, &e, now += 1 + ph_rand(&s) % 100000, TRIG_TX);
		assert_int_equal(ph_ctrl(sh, PCM_CTRL_EV), ev0);
	}
	pcm_shell_destroy(sh);
}

static void test_ecmp_static_flows_starting_apart_take_different_entropies(void **state)
{
	struct pcm_shell *sh = ph_open_flows("ecmp_static", "uet", 64);
	uint8_t seen[EV_BITS + 1];
	unsigned distinct = 0;

	memset(seen, 0, sizeof(seen));
	for (uint32_t f = 0; f < 64; f++) {
		uint64_t ev = tx_flow(sh, f, 1000000 + f * 812345ull, TRIG_TX);

		distinct += !seen[ev]++;
		assert_int_equal(tx_flow(sh, f, 90000000, TRIG_TX), ev);
	}
	assert_true(distinct >= 60);
	pcm_shell_destroy(sh);
}

/* ---- every generator ---------------------------------------------------------- */

/* The entropy of @flow's first packet at @now with PCM_SIG_FLOW_SEED = @seed. */
static uint64_t first_ev(struct pcm_shell *sh, uint32_t flow, uint64_t now, uint64_t seed)
{
	struct pcm_event ev = { 0 };

	ph_set(&ev, PCM_SIG_TX_READY_PKTS, 1);
	ph_set(&ev, PCM_SIG_FLOW_SEED, seed);
	assert_int_equal(pcm_shell_feed(sh, flow, &ev, now), 1);
	return ph_ctrl_flow(sh, flow, PCM_CTRL_EV) & EV_BITS;
}

static void test_flows_starting_together_draw_apart_by_flow_seed(void **state)
{
	static const char *const lbs[] = { "ecmp_static", "mprdma", "ops", "reps", "strack" };

	for (size_t i = 0; i < sizeof(lbs) / sizeof(lbs[0]); i++) {
		struct pcm_shell *sh = ph_open_flows(lbs[i], "uet", 128);
		uint8_t seen[EV_BITS + 1];
		unsigned distinct = 0;
		uint64_t same = first_ev(sh, 64, 1000000, 77);

		memset(seen, 0, sizeof(seen));
		for (uint32_t f = 0; f < 64; f++)
			distinct += !seen[first_ev(sh, f, 1000000, 0x9e3779b97f4a7c15ull * (f + 1))]++;
		if (distinct < 60)
			fail_msg("%s: %u distinct entropies of 64 flows", lbs[i], distinct);
		/* the same seed at the same instant: the same draw */
		assert_int_equal(first_ev(sh, 65, 1000000, 77), same);
		pcm_shell_destroy(sh);
	}
}

/* ---- reps -------------------------------------------------------------------- */

#define REPS_LEN 8
#define REPS_FREEZE 10000000000ull
#define REPS_EXPLORE 16
#define REPS_TRIG (TRIG_TX | TRIG_ACK | TRIG_NACK | TRIG_RTO)

struct reps_m {
	uint64_t cache[REPS_LEN], head, fresh, filled;
	uint64_t freeze_end, cursor, explore, rng, ev;
	bool frozen;
};

static void reps_push(struct reps_m *m, uint64_t ev)
{
	m->cache[m->head % REPS_LEN] = ev & EV_BITS;
	m->head = (m->head + 1) % REPS_LEN;
	if (m->fresh < REPS_LEN)
		m->fresh++;
	if (m->filled < REPS_LEN)
		m->filled++;
}

static void reps_step(struct reps_m *m, const struct lev *e, uint64_t now)
{
	bool marked = e->ecn != 0;

	if (!lev_calls(e, REPS_TRIG))
		return;
	if (e->rtos && !m->frozen && !m->explore) {
		m->frozen = true;
		m->freeze_end = now + REPS_FREEZE;
		m->cursor = 0;
	}
	if (m->frozen && now > m->freeze_end) {
		m->frozen = false;
		m->head = m->fresh = m->filled = 0;
		m->explore = REPS_EXPLORE;
	}
	if (e->acks && !marked)
		reps_push(m, e->ack_ev);
	if (e->nacks && (e->nack_ev & LAST_HOP) && !marked)
		reps_push(m, e->nack_ev);
	if (!e->tx)
		return;
	if (m->explore) {
		m->explore--;
		m->ev = m_rng_next(&m->rng, now) & EV_BITS;
	} else if (m->frozen) {
		uint64_t c = m->cursor % (m->filled ? m->filled : 1);

		if (!m->filled) {
			m->ev = m_rng_next(&m->rng, now) & EV_BITS;
		} else {
			m->cursor = (c + 1) % m->filled;
			m->ev = m->cache[c];
		}
	} else if (m->fresh) {
		m->ev = m->cache[(m->head + REPS_LEN - m->fresh) % REPS_LEN];
		m->fresh--;
	} else {
		m->ev = m_rng_next(&m->rng, now) & EV_BITS;
	}
}

static void test_reps_matches_reference_on_random_feedback(void **state)
{
	static const uint64_t evs[] = { 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 4000, 65535 };
	struct pcm_shell *sh = ph_open("reps");
	struct reps_m m = { 0 };
	uint64_t s = 0x4e95, now = 0;

	for (unsigned i = 0; i < 100000; i++) {
		struct lev e = lev_random(&s, evs, sizeof(evs) / sizeof(evs[0]));

		/* mostly sub-microsecond gaps, now and then past a freeze */
		now += ph_rand(&s) % 5000 == 0 ? REPS_FREEZE / 3 : ph_rand(&s) % 800000;
		lev_feed(sh, &e, now, REPS_TRIG);
		reps_step(&m, &e, now);
		assert_int_equal(ph_ctrl(sh, PCM_CTRL_EV), m.ev);
		assert_int_equal(ph_var_u(sh, "FROZEN"), m.frozen);
		assert_int_equal(ph_var_u(sh, "CACHE_FRESH"), m.fresh);
	}
	pcm_shell_destroy(sh);
}

static void ack(struct pcm_shell *sh, uint64_t ev, bool ecn, uint64_t now)
{
	struct lev e = { .acks = 1, .ack_ev = ev, .ecn = ecn };

	lev_feed(sh, &e, now, REPS_TRIG);
}

static void nack(struct pcm_shell *sh, uint64_t ev, uint64_t now)
{
	struct lev e = { .nacks = 1, .nack_ev = ev };

	lev_feed(sh, &e, now, REPS_TRIG);
}

static void test_reps_reuses_good_entropies_in_arrival_order(void **state)
{
	struct pcm_shell *sh = ph_open("reps");
	uint64_t now = 0;

	for (uint64_t ev = 101; ev <= 108; ev++)
		ack(sh, ev, false, now += 1000);
	for (uint64_t ev = 101; ev <= 108; ev++)
		assert_int_equal(tx(sh, now += 1000, REPS_TRIG), ev);
	assert_int_equal(ph_var_u(sh, "CACHE_FRESH"), 0); /* next one explores */
	/* a ninth good ACK overwrites the oldest: the cache holds the last eight */
	for (uint64_t ev = 201; ev <= 209; ev++)
		ack(sh, ev, false, now += 1000);
	for (uint64_t ev = 202; ev <= 209; ev++)
		assert_int_equal(tx(sh, now += 1000, REPS_TRIG), ev);
	pcm_shell_destroy(sh);
}

static void test_reps_avoids_entropies_that_drew_ecn_or_a_trim(void **state)
{
	struct pcm_shell *sh = ph_open("reps");
	uint64_t now = 0;

	ack(sh, 301, true, now += 1000); /* ECN-marked: congested path, dropped */
	nack(sh, 302, now += 1000);	 /* trimmed on the way: dropped */
	ack(sh, 303, false, now += 1000);
	assert_int_equal(tx(sh, now += 1000, REPS_TRIG), 303);
	for (int i = 0; i < 1000; i++) {
		uint64_t ev = tx(sh, now += 1000, REPS_TRIG);

		assert_true(ev != 301 && ev != 302);
	}
	pcm_shell_destroy(sh);
}

static void test_reps_recycles_entropy_trimmed_on_the_last_hop(void **state)
{
	struct pcm_shell *sh = ph_open("reps");
	struct lev marked_lh = { .nacks = 1, .nack_ev = 402 | LAST_HOP, .ecn = 1 };
	uint64_t now = 0;

	nack(sh, 401 | LAST_HOP, now += 1000); /* the receiver's link, not the path */
	assert_int_equal(tx(sh, now += 1000, REPS_TRIG), 401);
	lev_feed(sh, &marked_lh, now += 1000, REPS_TRIG); /* ...unless the path marked it too */
	assert_int_equal(ph_var_u(sh, "CACHE_FRESH"), 0);
	pcm_shell_destroy(sh);
}

static void test_reps_freezes_on_timeout_then_explores(void **state)
{
	struct pcm_shell *sh = ph_open("reps");
	struct lev rto = { .rtos = 1 };
	uint64_t now = 0, t_rto;

	/* a timeout before anything is cached: frozen on nothing, so still random */
	lev_feed(sh, &rto, now += 1000, REPS_TRIG);
	assert_int_equal(ph_var_u(sh, "FROZEN"), 1);
	tx(sh, now += 1000, REPS_TRIG);
	now += REPS_FREEZE + 1;
	for (int i = 0; i <= REPS_EXPLORE; i++)
		tx(sh, now += 1000, REPS_TRIG);
	assert_int_equal(ph_var_u(sh, "FROZEN"), 0);
	assert_int_equal(ph_var_u(sh, "EXPLORE_LEFT"), 0);

	for (uint64_t ev = 501; ev <= 503; ev++)
		ack(sh, ev, false, now += 1000);
	assert_int_equal(tx(sh, now += 1000, REPS_TRIG), 501);
	lev_feed(sh, &rto, now += 1000, REPS_TRIG);
	t_rto = now;
	assert_int_equal(ph_var_u(sh, "FROZEN"), 1);
	/* frozen: the cached entropies round-robin, used or not; nothing new */
	for (int i = 0; i < 9; i++)
		assert_int_equal(tx(sh, now += 1000, REPS_TRIG), 501 + i % 3);
	ack(sh, 504, false, now += 1000); /* good feedback still joins the rotation */
	for (int i = 0; i < 8; i++)
		assert_int_equal(tx(sh, now += 1000, REPS_TRIG), 501 + i % 4);
	lev_feed(sh, &rto, now += 1000, REPS_TRIG); /* already frozen: no extension */
	/* the freeze ends: cache emptied, EXPLORE_PKTS random entropies */
	now = t_rto + REPS_FREEZE + 1;
	ack(sh, 600, false, now);
	assert_int_equal(ph_var_u(sh, "FROZEN"), 0);
	assert_int_equal(ph_var_u(sh, "EXPLORE_LEFT"), REPS_EXPLORE);
	lev_feed(sh, &rto, now += 1000, REPS_TRIG); /* exploring: a timeout does not refreeze */
	assert_int_equal(ph_var_u(sh, "FROZEN"), 0);
	for (int i = 0; i < REPS_EXPLORE; i++) {
		uint64_t ev = tx(sh, now += 1000, REPS_TRIG);

		assert_true(ev < 501 || ev > 504);
	}
	/* then recycling resumes with what arrived meanwhile */
	assert_int_equal(tx(sh, now += 1000, REPS_TRIG), 600);
	pcm_shell_destroy(sh);
}

/* ---- strack ------------------------------------------------------------------ */

#define ST_N 32
#define ST_TRIG (TRIG_TX | TRIG_ACK | TRIG_NACK | TRIG_RTO)

struct strack_m {
	uint64_t pen[ST_N], index, xr, salt, rng;
	bool init;
};

static uint64_t st_in_order(struct strack_m *m, uint64_t now)
{
	uint64_t p = (m->index ^ m->xr) & (ST_N - 1);

	if (++m->index == ST_N) {
		m->index = 0;
		m->xr = m_rng_next(&m->rng, now) & (ST_N - 1);
	}
	return p;
}

static void st_charge(struct strack_m *m, uint64_t ev, uint64_t penalty)
{
	uint64_t p = ev & (ST_N - 1);

	if (ev > EV_BITS || (ev & ~(uint64_t)(ST_N - 1)) != m->salt)
		return;
	m->pen[p] = m->pen[p] + penalty < 15 ? m->pen[p] + penalty : 15;
}

/* Returns the entropy of the packet, if @e sends one. */
static uint64_t strack_step(struct strack_m *m, const struct lev *e, uint64_t now)
{
	uint64_t p;

	if (!lev_calls(e, ST_TRIG))
		return 0;
	if (!m->init) {
		m->salt = m_rng_next(&m->rng, now) & EV_BITS & ~(uint64_t)(ST_N - 1);
		m->xr = m_rng_next(&m->rng, now) & (ST_N - 1);
		m->init = true;
	}
	if ((e->acks || e->ecn) && e->ecn)
		st_charge(m, e->ack_ev, 1);
	if (e->nacks)
		st_charge(m, e->nack_ev, 4);
	if (e->rtos) /* the datapath names the timed-out packet's entropy in NACK_EV */
		st_charge(m, e->nack_ev, 4);
	if (!e->tx)
		return 0;
	p = st_in_order(m, now);
	if (!m->pen[p])
		return p | m->salt;
	m->pen[p]--; /* only the first path skipped pays */
	for (unsigned tries = 1; tries < ST_N; tries++) {
		p = st_in_order(m, now);
		if (!m->pen[p])
			break;
	}
	return p | m->salt;
}

static void test_strack_matches_reference_on_random_feedback(void **state)
{
	struct pcm_shell *sh = ph_open("strack");
	struct strack_m m = { 0 };
	uint64_t s = 0x57ac, now = 0, evs[40];
	struct lev first = { .tx = true };

	/* the first packet fixes the flow's salt; feedback then names its paths */
	lev_feed(sh, &first, now += 1000, ST_TRIG);
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_EV), strack_step(&m, &first, now));
	for (unsigned i = 0; i < 40; i++)
		evs[i] = i < ST_N ? (m.salt | i) : (i == ST_N ? 7 : (m.salt | (i % ST_N)) ^ 0x100);
	for (unsigned i = 0; i < 100000; i++) {
		struct lev e = lev_random(&s, evs, 40);
		uint64_t ev;

		lev_feed(sh, &e, now += ph_rand(&s) % 500000, ST_TRIG);
		ev = strack_step(&m, &e, now);
		if (e.tx)
			assert_int_equal(ph_ctrl(sh, PCM_CTRL_EV), ev);
		for (unsigned p = 0; p < ST_N; p += 7)
			assert_int_equal(ph_arr_u(sh, "PENALTY", p), m.pen[p]);
	}
	pcm_shell_destroy(sh);
}

static void test_strack_round_robins_all_paths_without_feedback(void **state)
{
	struct pcm_shell *sh = ph_open("strack");
	uint64_t now = 0;

	for (unsigned round = 0; round < 10; round++) {
		uint8_t seen[ST_N] = { 0 };

		for (unsigned k = 0; k < ST_N; k++)
			assert_int_equal(seen[tx(sh, now += 1000, ST_TRIG) % ST_N]++, 0);
	}
	pcm_shell_destroy(sh);
}

static void test_strack_penalised_path_sits_out_rounds(void **state)
{
	struct pcm_shell *sh = ph_open("strack");
	uint64_t now = 0, salt, bad;
	unsigned absent;
	struct lev trim;

	salt = tx(sh, now += 1000, ST_TRIG) & ~(uint64_t)(ST_N - 1);
	bad = salt | 5;
	/* a trim costs four rounds: path 5 misses its next four turns */
	trim = (struct lev){ .nacks = 1, .nack_ev = bad };
	lev_feed(sh, &trim, now += 1000, ST_TRIG);
	assert_int_equal(ph_arr_u(sh, "PENALTY", 5), 4);
	for (absent = 0; tx(sh, now += 1000, ST_TRIG) != bad; absent++)
		assert_true(absent < 6 * ST_N);
	assert_true(absent >= 3 * (ST_N - 1));
	assert_int_equal(ph_arr_u(sh, "PENALTY", 5), 0);
	/* ECN marks cost a round each, up to MAX_PENALTY */
	for (int i = 0; i < 20; i++)
		ack(sh, bad, true, now += 1000);
	assert_int_equal(ph_arr_u(sh, "PENALTY", 5), 15);
	/* feedback on entropies that are not this flow's, or trims on the last hop: ignored */
	trim.nack_ev = (salt ^ 0x400) | 6;
	lev_feed(sh, &trim, now += 1000, ST_TRIG);
	trim.nack_ev = (salt | 6) | LAST_HOP;
	lev_feed(sh, &trim, now += 1000, ST_TRIG);
	assert_int_equal(ph_arr_u(sh, "PENALTY", 6), 0);
	pcm_shell_destroy(sh);
}

/* A timeout charges the path of the packet that timed out (NACK_EV), as a trim does. */
static void test_strack_timeout_charges_its_path(void **state)
{
	struct pcm_shell *sh = ph_open("strack");
	uint64_t now = 0, salt;
	struct lev rto;

	salt = tx(sh, now += 1000, ST_TRIG) & ~(uint64_t)(ST_N - 1);
	rto = (struct lev){ .rtos = 1, .nack_ev = salt | 9 };
	lev_feed(sh, &rto, now += 1000, ST_TRIG);
	assert_int_equal(ph_arr_u(sh, "PENALTY", 9), 4);
	pcm_shell_destroy(sh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops_matches_reference_packet_by_packet),
		cmocka_unit_test(test_ops_every_round_sprays_over_all_entropies_once),
		cmocka_unit_test(test_ops_flows_starting_apart_spray_differently),
		cmocka_unit_test(test_ecmp_static_never_changes_the_entropy),
		cmocka_unit_test(test_ecmp_static_flows_starting_apart_take_different_entropies),
		cmocka_unit_test(test_flows_starting_together_draw_apart_by_flow_seed),
		cmocka_unit_test(test_reps_matches_reference_on_random_feedback),
		cmocka_unit_test(test_reps_reuses_good_entropies_in_arrival_order),
		cmocka_unit_test(test_reps_avoids_entropies_that_drew_ecn_or_a_trim),
		cmocka_unit_test(test_reps_recycles_entropy_trimmed_on_the_last_hop),
		cmocka_unit_test(test_reps_freezes_on_timeout_then_explores),
		cmocka_unit_test(test_strack_matches_reference_on_random_feedback),
		cmocka_unit_test(test_strack_round_robins_all_paths_without_feedback),
		cmocka_unit_test(test_strack_penalised_path_sits_out_rounds),
		cmocka_unit_test(test_strack_timeout_charges_its_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
