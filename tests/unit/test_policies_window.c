// SPDX-License-Identifier: MIT
/*
 * test_policies_window.c - the window congestion controllers of the policy
 * library (newreno, cubic, dctcp, uec_dctcp, smartt, nscc, mprdma) driven
 * through the synchronous shell on the "uet" target. Each is checked step
 * by step against a double-precision reference model of its update rules
 * over long scripted traces (exact equality: the double build performs the
 * same operations), and against the behaviour its paper states.
 */
#include "policy_harness.h"

/* One scripted datapath event. */
struct wev {
	uint32_t acks, ecn, nacks, rtos;
	uint64_t acked_bytes, nacked_bytes;
	uint64_t rtt_ps;   /* 0: no RTT sample */
	uint64_t inflight; /* IN_FLIGHT, when nonzero */
	uint64_t ack_ev;   /* ACK_EV, with acks */
};

static bool wev_triggers(const struct wev *e)
{
	return e->acks || e->ecn || e->nacks || e->rtos;
}

static void wev_feed(struct pcm_shell *sh, const struct wev *e, uint64_t now)
{
	struct pcm_event ev = { 0 };

	if (e->acks) {
		ph_set(&ev, PCM_SIG_ACK, e->acks);
		ph_set(&ev, PCM_SIG_DATA_TX, e->acked_bytes);
		ph_set(&ev, PCM_SIG_ACK_EV, e->ack_ev);
	}
	if (e->ecn)
		ph_set(&ev, PCM_SIG_ECN, e->ecn);
	if (e->nacks) {
		ph_set(&ev, PCM_SIG_NACK, e->nacks);
		ph_set(&ev, PCM_SIG_DATA_NACKED, e->nacked_bytes);
	}
	if (e->rtos)
		ph_set(&ev, PCM_SIG_RTO, e->rtos);
	if (e->rtt_ps)
		ph_set(&ev, PCM_SIG_RTT, e->rtt_ps);
	if (e->inflight)
		ph_set(&ev, PCM_SIG_IN_FLIGHT, e->inflight);
	ph_feed(sh, &ev, now, wev_triggers(e));
}

/*
 * A random per-event trace: ACKs of one full packet (sometimes a short one),
 * a marked fraction, RTT samples around the base RTT with queueing, rare
 * NACKs and rarer timeouts, and RTT-only events that trigger nothing.
 */
static struct wev wev_random(uint64_t *s, unsigned ecn_pct, uint64_t rtt_lo_ps,
			     uint64_t rtt_span_ps)
{
	uint64_t r = ph_rand(s);
	struct wev e = { 0 };

	switch (r % 64) {
	case 0:
		e.nacks = 1;
		e.nacked_bytes = (r >> 8) % 3 ? F_MSS : 0;
		break;
	case 1:
		if ((r >> 8) % 8 == 0)
			e.rtos = 1;
		else
			e.rtt_ps = rtt_lo_ps + (r >> 12) % rtt_span_ps;
		break;
	case 2:
		e.rtt_ps = rtt_lo_ps + (r >> 12) % rtt_span_ps;
		break;
	default:
		e.acks = 1;
		e.acked_bytes = (r >> 8) % 16 ? F_MSS : 1000 + (r >> 16) % 3000;
		e.ecn = (r >> 20) % 100 < ecn_pct;
		e.rtt_ps = (r >> 28) % 4 ? rtt_lo_ps + (r >> 32) % rtt_span_ps : 0;
		e.inflight = 100000 + (r >> 40) % 100000;
		e.ack_ev = (r >> 44) & 0xffff;
		break;
	}
	return e;
}

/*
 * RTT regimes for the delay-driven policies, switched every few thousand
 * events: near the base RTT (fast increase), around the target, far above it
 * with sparse ACKs (an incast victim: quick adapt), and a wide mix. Each is
 * {lowest RTT, span, time between events}.
 */
static const uint64_t rtt_regimes[][3] = {
	{ F_BRTT - US / 2, US, US / 2 },
	{ F_BRTT, 20 * US, US / 2 },
	{ F_BRTT + 30 * US, 50 * US, 5 * US },
	{ F_BRTT - 2 * US, 90 * US, US / 2 },
};

static const uint64_t *rtt_regime(unsigned i)
{
	return rtt_regimes[(i / 3000) % (sizeof(rtt_regimes) / sizeof(rtt_regimes[0]))];
}

/* ---- newreno ----------------------------------------------------------------- */

struct reno_m {
	double cwnd, ssthresh;
	uint64_t t_dec, rtt, inflight; /* inflight: the last IN_FLIGHT seen, bytes */
	bool dec;
};

static void reno_init(struct reno_m *m)
{
	memset(m, 0, sizeof(*m));
	m->cwnd = M_INIT_PKTS;
	m->ssthresh = M_MAX_PKTS;
}

/* RFC 5681 (4) and (7): ssthresh = max(FlightSize / 2, 2 segments); after a timeout, LW = 1. */
static void reno_loss(struct reno_m *m, uint64_t now, bool timeout)
{
	double flight = m->inflight ? (double)(m->inflight / F_PKT) +
					      (double)(m->inflight % F_PKT) / (double)F_PKT
				    : m->cwnd;

	m->ssthresh = m_max(flight * 0.5, 2.0);
	m->t_dec = now;
	m->dec = true;
	m->cwnd = timeout ? 1.0 : m->ssthresh;
}

static void reno_step(struct reno_m *m, const struct wev *e, uint64_t now)
{
	if (e->rtt_ps)
		m->rtt = e->rtt_ps;
	if (e->inflight)
		m->inflight = e->inflight;
	if (!(e->acks || e->nacks || e->rtos))
		return;
	if (e->rtos) {
		reno_loss(m, now, true);
	} else if (e->nacks) {
		if (!m->dec || now - m->t_dec >= m->rtt)
			reno_loss(m, now, false);
	} else {
		double acked = m_b2p(e->acked_bytes);

		if (m->cwnd < m->ssthresh)
			m->cwnd = m->cwnd + acked;
		else
			m->cwnd = m->cwnd + (1.0 * acked) / m->cwnd;
	}
	m->cwnd = m_clamp(m->cwnd, M_MIN_PKTS, M_MAX_PKTS);
}

static void test_newreno_matches_reference_on_random_trace(void **state)
{
	struct pcm_shell *sh = ph_open("newreno");
	uint64_t s = 0x5eed1, now = 0;
	struct reno_m m;

	reno_init(&m);
	for (unsigned i = 0; i < 30000; i++) {
		struct wev e = wev_random(&s, 0, F_BRTT, 30 * US);

		e.ecn = 0; /* newreno has no ECN signal */
		now += 1 * US;
		wev_feed(sh, &e, now);
		reno_step(&m, &e, now);
		assert_int_equal(ph_ctrl(sh, PCM_CTRL_CWND), m_p2w(m.cwnd));
		if (e.acks || e.nacks || e.rtos) {
			assert_true(ph_var_d(sh, "CWND_PKTS") == m.cwnd);
			assert_true(ph_var_d(sh, "SSTHRESH_PKTS") == m.ssthresh);
		}
	}
	pcm_shell_destroy(sh);
}

/*
 * RFC 5681: a loss sets ssthresh to half the flight size (not the window),
 * at least 2 segments, once per RTT here; a timeout leaves a loss window of
 * 1 segment, from which slow start grows one packet per packet acked.
 */
static void test_newreno_halves_the_flight_once_per_rtt_and_timeout_falls_to_one_packet(
	void **state)
{
	struct pcm_shell *sh = ph_open("newreno");
	struct wev ack = { .acks = 1, .acked_bytes = F_MSS, .rtt_ps = 20 * US };
	struct wev nack = { .nacks = 1, .nacked_bytes = F_MSS };
	struct wev rto = { .rtos = 1 };
	uint64_t now = 0;
	double before;

	for (int i = 0; i < 5; i++)
		wev_feed(sh, &ack, now += US);
	/* 10 packets in flight, well below the window: ssthresh follows the flight */
	ack.inflight = 10 * F_PKT;
	wev_feed(sh, &ack, now += US);
	assert_true(ph_var_d(sh, "CWND_PKTS") > 20.0);
	wev_feed(sh, &nack, now += US);
	assert_true(ph_var_d(sh, "SSTHRESH_PKTS") == 5.0);
	assert_true(ph_var_d(sh, "CWND_PKTS") == 5.0);
	/* more NACKs within the same 20 us RTT: one recovery episode, no further cut */
	for (int i = 0; i < 10; i++)
		wev_feed(sh, &nack, now += US);
	assert_true(ph_var_d(sh, "CWND_PKTS") == 5.0);
	/* congestion avoidance: about +1 packet per window of ACKs (1/5 + 1/5.2 + ... at 5) */
	before = ph_var_d(sh, "CWND_PKTS");
	for (int i = 0; i < (int)(before + 0.5); i++)
		wev_feed(sh, &ack, now += US);
	assert_true(fabs(ph_var_d(sh, "CWND_PKTS") - (before + 1.0)) < 0.1);
	/* a flight of 3 packets: ssthresh floors at 2 segments, not half of it */
	ack.inflight = 3 * F_PKT;
	wev_feed(sh, &ack, now += US);
	wev_feed(sh, &rto, now += US);
	assert_true(ph_var_d(sh, "SSTHRESH_PKTS") == 2.0);
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_CWND), F_PKT);
	/* slow start again below ssthresh: one packet per packet acked */
	wev_feed(sh, &ack, now += US);
	assert_true(ph_var_d(sh, "CWND_PKTS") == 2.0);
	pcm_shell_destroy(sh);
}

/* ---- cubic (RFC 9438) --------------------------------------------------------- */

#define CUBIC_C 0.4
#define CUBIC_BETA 0.7
#define CUBIC_ALPHA (3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA))

/* pcm_algo_ps_to_s(), restated: whole microseconds, then seconds */
static double m_ps_to_s(uint64_t ps)
{
	return ((double)(ps / 1000000000) + (double)((ps % 1000000000) / 1000000) / 1000.0) /
	       1000.0;
}

struct cubic_m {
	double cwnd, ssthresh, w_max, prior, epoch_cwnd, w_est, k;
	uint64_t t_epoch, t_dec, rtt, inflight;
	bool in_epoch, after_rto, dec;
};

static void cubic_init(struct cubic_m *m)
{
	memset(m, 0, sizeof(*m));
	m->cwnd = M_INIT_PKTS;
	m->ssthresh = M_MAX_PKTS;
}

static double cubic_reduce(struct cubic_m *m, uint64_t now)
{
	double flight = m->inflight ? (double)(m->inflight / F_PKT) +
					      (double)(m->inflight % F_PKT) / (double)F_PKT
				    : m->cwnd;
	double ssthresh = flight * CUBIC_BETA, w_max = m->cwnd;

	if (m->cwnd < m->w_max)
		w_max = (m->cwnd * (1.0 + CUBIC_BETA)) / 2.0;
	m->ssthresh = m_max(ssthresh, 2.0);
	m->prior = m->cwnd;
	m->w_max = w_max;
	m->in_epoch = false;
	m->t_dec = now;
	m->dec = true;
	return m->ssthresh;
}

static double cubic_w(const struct cubic_m *m, double t)
{
	const double d_max = ceil(pow(2.0 * M_MAX_PKTS / CUBIC_C, 1.0 / 3.0));
	double d = m_clamp(t - m->k, 0.0 - d_max, d_max);

	return CUBIC_C * ((d * d) * d) + m->w_max;
}

static double cubic_ca(struct cubic_m *m, double acked, uint64_t now)
{
	double t, target;

	if (!m->in_epoch) {
		if (m->after_rto || m->w_max < m->cwnd) {
			m->w_max = m->cwnd;
			m->after_rto = false;
		}
		m->k = cbrt((m->w_max - m->cwnd) / CUBIC_C);
		m->epoch_cwnd = m->cwnd;
		m->w_est = m->cwnd;
		m->t_epoch = now;
		m->in_epoch = true;
	}
	t = m_ps_to_s(now - m->t_epoch);
	m->w_est = m->w_est + ((m->w_est >= m->prior ? 1.0 : CUBIC_ALPHA) * acked) / m->cwnd;
	if (cubic_w(m, t) < m->w_est)
		return m->w_est;
	target = m_clamp(cubic_w(m, t + m_ps_to_s(m->rtt)), m->cwnd, m->cwnd * 1.5);
	return m->cwnd + ((target - m->cwnd) / m->cwnd) * acked;
}

static void cubic_step(struct cubic_m *m, const struct wev *e, uint64_t now)
{
	bool may;

	if (e->rtt_ps)
		m->rtt = e->rtt_ps;
	if (e->inflight)
		m->inflight = e->inflight;
	if (!(e->acks || e->ecn || e->nacks || e->rtos))
		return;
	may = !m->dec || now - m->t_dec >= m->rtt;
	if (e->rtos) {
		if (may)
			cubic_reduce(m, now);
		m->in_epoch = false;
		m->after_rto = true;
		m->cwnd = 1.0;
	} else if (e->nacks || e->ecn) {
		if (may)
			m->cwnd = cubic_reduce(m, now);
	} else if (m->cwnd < m->ssthresh) {
		m->cwnd = m->cwnd + m_b2p(e->acked_bytes);
	} else {
		m->cwnd = cubic_ca(m, m_b2p(e->acked_bytes), now);
	}
	m->cwnd = m_clamp(m->cwnd, M_MIN_PKTS, M_MAX_PKTS);
}

static void test_cubic_matches_reference_on_random_trace(void **state)
{
	struct pcm_shell *sh = ph_open("cubic");
	uint64_t s = 0xc0b1c, now = 0;
	struct cubic_m m;

	cubic_init(&m);
	for (unsigned i = 0; i < 30000; i++) {
		struct wev e = wev_random(&s, 2, F_BRTT, 30 * US);

		/* epochs of milliseconds to seconds: the cubic term matters at the long ones */
		now += (i / 5000) % 2 ? 20000 * US : 2 * US;
		wev_feed(sh, &e, now);
		cubic_step(&m, &e, now);
		assert_int_equal(ph_ctrl(sh, PCM_CTRL_CWND), m_p2w(m.cwnd));
		if (e.acks || e.ecn || e.nacks || e.rtos) {
			assert_true(ph_var_d(sh, "CWND_PKTS") == m.cwnd);
			assert_true(ph_var_d(sh, "W_MAX_PKTS") == m.w_max);
			assert_true(ph_var_d(sh, "SSTHRESH_PKTS") == m.ssthresh);
			assert_true(ph_var_d(sh, "K_S") == m.k);
			assert_true(ph_var_d(sh, "W_EST_PKTS") == m.w_est);
		}
	}
	pcm_shell_destroy(sh);
}

/* Feed @e every @gap_ps until @now reaches @until_ps. */
static void feed_until(struct pcm_shell *sh, const struct wev *e, uint64_t *now, uint64_t until_ps,
		       uint64_t gap_ps)
{
	while (*now < until_ps)
		wev_feed(sh, e, *now += gap_ps);
}

/*
 * RFC 9438 on a long RTT (1 s, an ACK every 33 ms, about a window's worth
 * per RTT): after a loss the window is ssthresh = 0.7 flight, returns to
 * Wmax at about K seconds (concave: the growth slows towards it), then
 * grows ever faster past it (convex); an ECN echo is a congestion event like
 * a loss; after a timeout the window is one packet and the next epoch starts
 * with K = 0 and Wmax = its window.
 */
static void test_cubic_regrows_to_wmax_in_k_seconds_then_probes_beyond(void **state)
{
	const uint64_t gap = 33333 * US, sec = 1000000 * US;
	struct pcm_shell *sh = ph_open("cubic");
	struct wev ack = { .acks = 1, .acked_bytes = F_MSS, .rtt_ps = sec, .inflight = 40 * F_PKT };
	struct wev nack = { .nacks = 1, .nacked_bytes = F_MSS };
	struct wev ecn = { .acks = 1, .acked_bytes = F_MSS, .ecn = 1 };
	struct wev rto = { .rtos = 1 };
	uint64_t now = 0, t_epoch;
	double w_max, k, at_k, g[3], prev = 1e9;

	wev_feed(sh, &ack, now += gap); /* slow start; the flight is 40 packets */
	w_max = ph_var_d(sh, "CWND_PKTS");
	wev_feed(sh, &nack, now += gap);
	assert_true(ph_var_d(sh, "W_MAX_PKTS") == w_max);
	assert_true(ph_var_d(sh, "CWND_PKTS") == 40.0 * CUBIC_BETA);
	wev_feed(sh, &ack, now += gap);
	t_epoch = now;
	k = ph_var_d(sh, "K_S");
	assert_true(fabs(k - cbrt((w_max - 40.0 * CUBIC_BETA) / CUBIC_C)) < 1e-9);
	/* concave: each fifth of K grows the window less than the one before */
	for (int r = 1; r <= 5; r++) {
		double c = ph_var_d(sh, "CWND_PKTS"), d;

		feed_until(sh, &ack, &now, t_epoch + (uint64_t)(r * k / 5 * 1e12), gap);
		d = ph_var_d(sh, "CWND_PKTS") - c;
		assert_true(d < prev);
		prev = d;
	}
	at_k = ph_var_d(sh, "CWND_PKTS");
	print_message("cubic: Wmax %.3f, K %.3f s, cwnd at K %.3f\n", w_max, k, at_k);
	assert_true(fabs(at_k - w_max) < 0.03 * w_max);
	/* convex past Wmax: growth per second keeps rising */
	for (int r = 0; r < 3; r++) {
		double c = ph_var_d(sh, "CWND_PKTS");

		feed_until(sh, &ack, &now, now + sec, gap);
		g[r] = ph_var_d(sh, "CWND_PKTS") - c;
	}
	print_message("cubic: growth per second after K: %.3f %.3f %.3f packets\n", g[0], g[1],
		      g[2]);
	assert_true(g[0] < g[1] && g[1] < g[2]);
	/* an ECN echo cuts like a loss */
	wev_feed(sh, &ecn, now += 2 * sec);
	assert_true(ph_var_d(sh, "CWND_PKTS") == 40.0 * CUBIC_BETA);
	/* a timeout: one packet, then K = 0 and Wmax = cwnd when the epoch starts */
	wev_feed(sh, &rto, now += 2 * sec);
	assert_true(ph_var_d(sh, "CWND_PKTS") == 1.0);
	while (ph_var_d(sh, "CWND_PKTS") < ph_var_d(sh, "SSTHRESH_PKTS"))
		wev_feed(sh, &ack, now += gap);
	wev_feed(sh, &ack, now += gap);
	assert_true(ph_var_d(sh, "K_S") == 0.0);
	pcm_shell_destroy(sh);
}

/*
 * RFC 9438 4.2: the target is clamped to 1.5 cwnd, so however far the cubic
 * curve has run ahead (here 100 s past K on a 1 s RTT), one ACK of a packet
 * adds at most half a packet: (1.5 cwnd - cwnd) / cwnd per packet acked.
 */
static void test_cubic_target_is_capped_at_one_and_a_half_windows(void **state)
{
	const uint64_t gap = 33333 * US, sec = 1000000 * US;
	struct pcm_shell *sh = ph_open("cubic");
	struct wev ack = { .acks = 1, .acked_bytes = F_MSS, .rtt_ps = sec, .inflight = 40 * F_PKT };
	struct wev nack = { .nacks = 1, .nacked_bytes = F_MSS };
	uint64_t now = 0;
	double before, step, uncapped;

	wev_feed(sh, &ack, now += gap);
	wev_feed(sh, &nack, now += gap);
	wev_feed(sh, &ack, now += gap); /* the epoch starts: K seconds to Wmax */
	before = ph_var_d(sh, "CWND_PKTS");
	wev_feed(sh, &ack, now += 100 * sec);
	step = ph_var_d(sh, "CWND_PKTS") - before;
	uncapped = CUBIC_C * pow(101.0 - ph_var_d(sh, "K_S"), 3.0) / before;
	print_message("cubic: one ACK 100 s past K adds %.6f packets (uncapped: %.1f)\n", step,
		      uncapped);
	assert_true(fabs(step - 0.5) < 1e-9); /* half a packet per packet acked */
	assert_true(uncapped > 100.0);
	pcm_shell_destroy(sh);
}

/*
 * On the 14 us fabric K is seconds and the cubic curve is flat within a
 * flow, so CUBIC runs in its Reno-friendly region (RFC 9438 4.3): the
 * window is W_est, which grows by ALPHA_CUBIC = 3 (1 - beta) / (1 + beta)
 * packets per window of ACKs, not by the cubic target's (W_cubic(t + rtt) -
 * cwnd) / cwnd.
 */
static void test_cubic_runs_reno_friendly_on_a_short_rtt(void **state)
{
	struct pcm_shell *sh = ph_open("cubic");
	struct wev ack = { .acks = 1, .acked_bytes = F_PKT, .rtt_ps = F_BRTT,
			   .inflight = 40 * F_PKT };
	struct wev nack = { .nacks = 1, .nacked_bytes = F_MSS };
	uint64_t now = 0;
	double start, grown;
	unsigned n;

	wev_feed(sh, &ack, now += US);
	wev_feed(sh, &nack, now += US);
	start = ph_var_d(sh, "CWND_PKTS");
	assert_true(start == 40.0 * CUBIC_BETA);
	/* one window of ACKs, one per packet time */
	for (n = 0; n < (unsigned)start; n++) {
		wev_feed(sh, &ack, now += US / 3);
		assert_true(ph_var_d(sh, "CWND_PKTS") == ph_var_d(sh, "W_EST_PKTS"));
	}
	grown = ph_var_d(sh, "CWND_PKTS") - start;
	print_message("cubic: %u ACKs at a 14 us RTT grow the window %.4f packets (ALPHA_CUBIC "
		      "%.4f), K %.3f s\n",
		      n, grown, CUBIC_ALPHA, ph_var_d(sh, "K_S"));
	assert_true(ph_var_d(sh, "K_S") > 1.0);
	assert_true(fabs(grown - CUBIC_ALPHA) < 0.05 * CUBIC_ALPHA);
	pcm_shell_destroy(sh);
}

/* ---- dctcp ------------------------------------------------------------------- */

#define DCTCP_G 0.0625

struct dctcp_m {
	double cwnd, alpha, ssthresh;
	uint64_t win_acked, win_marked, win_end, rtt, t_cut;
	bool cut;
};

static void dctcp_window(struct dctcp_m *m, double cwnd)
{
	m->win_acked = m->win_marked = 0;
	m->win_end = m_p2b(cwnd);
}

static void dctcp_init(struct dctcp_m *m)
{
	memset(m, 0, sizeof(*m));
	m->cwnd = M_INIT_PKTS;
	m->ssthresh = M_MAX_PKTS;
	m->alpha = 1.0;
	dctcp_window(m, M_INIT_PKTS);
}

static bool dctcp_may_cut(const struct dctcp_m *m, uint64_t now)
{
	return !m->cut || now - m->t_cut >= m->rtt;
}

static double dctcp_cut(struct dctcp_m *m, double cwnd, uint64_t now)
{
	m->ssthresh = cwnd;
	m->t_cut = now;
	m->cut = true;
	return cwnd;
}

static void dctcp_step(struct dctcp_m *m, const struct wev *e, uint64_t now)
{
	if (e->rtt_ps)
		m->rtt = e->rtt_ps;
	if (!wev_triggers(e))
		return;
	if (e->rtos) {
		if (dctcp_may_cut(m, now))
			dctcp_cut(m, m_max(m->cwnd * 0.5, 2.0), now);
		m->cwnd = 1.0;
		dctcp_window(m, m->cwnd);
	} else if (e->nacks) {
		if (dctcp_may_cut(m, now))
			m->cwnd = dctcp_cut(m, m_max(m->cwnd * 0.5, 2.0), now);
	} else {
		uint64_t acked = e->acks ? e->acked_bytes : 0;
		uint64_t marked =
		    acked < e->ecn * (uint64_t)F_MSS ? acked : e->ecn * (uint64_t)F_MSS;
		uint64_t wa = m->win_acked + acked, wm = m->win_marked + marked;

		if (e->ecn) {
			if (dctcp_may_cut(m, now))
				m->cwnd = dctcp_cut(m, m->cwnd * (1.0 - m->alpha / 2.0), now);
		} else if (m->cwnd < m->ssthresh) {
			m->cwnd = m->cwnd + m_b2p(acked);
		} else {
			m->cwnd = m->cwnd + (1.0 * m_b2p(acked)) / m->cwnd;
		}
		if (wa >= m->win_end) {
			m->alpha = m_ewma(m->alpha, m_min(m_b2p(wm) / m_b2p(wa), 1.0), DCTCP_G);
			dctcp_window(m, m->cwnd);
		} else {
			m->win_acked = wa;
			m->win_marked = wm;
		}
	}
	m->cwnd = m_clamp(m->cwnd, M_MIN_PKTS, M_MAX_PKTS);
}

static void test_dctcp_matches_reference_on_random_trace(void **state)
{
	struct pcm_shell *sh = ph_open("dctcp");
	uint64_t s = 0xdc7c9, now = 0;
	struct dctcp_m m;

	dctcp_init(&m);
	for (unsigned i = 0; i < 40000; i++) {
		struct wev e = wev_random(&s, 10, F_BRTT, 20 * US);

		wev_feed(sh, &e, now += US);
		dctcp_step(&m, &e, now);
		assert_int_equal(ph_ctrl(sh, PCM_CTRL_CWND), m_p2w(m.cwnd));
		if (wev_triggers(&e)) {
			assert_true(ph_var_d(sh, "CWND_PKTS") == m.cwnd);
			assert_true(ph_var_d(sh, "ALPHA") == m.alpha);
			assert_true(ph_var_d(sh, "SSTHRESH_PKTS") == m.ssthresh);
		}
	}
	pcm_shell_destroy(sh);
}

static void test_dctcp_alpha_converges_to_the_marked_fraction(void **state)
{
	static const unsigned every[] = { 4, 10, 2 }; /* one ACK in N marked */

	for (size_t k = 0; k < sizeof(every) / sizeof(every[0]); k++) {
		struct pcm_shell *sh = ph_open("dctcp");
		uint64_t now = 0;
		double p = 1.0 / every[k], alpha;

		for (unsigned i = 0; i < 60000; i++) {
			struct wev e = { .acks = 1,
					 .acked_bytes = F_MSS,
					 .ecn = i % every[k] == 0 };

			wev_feed(sh, &e, now += US);
		}
		alpha = ph_var_d(sh, "ALPHA");
		print_message("dctcp: 1 in %u marked: alpha %.4f\n", every[k], alpha);
		assert_true(fabs(alpha - p) < 0.03);
		pcm_shell_destroy(sh);
	}
}

/*
 * RFC 8257: the first marks cut by alpha / 2 (alpha starts at 1: halve), at
 * most once per RTT however many marks follow, and again once an RTT has
 * passed, even within the same window of data; a timeout leaves one packet
 * and slow start back to ssthresh (section 3.5).
 */
static void test_dctcp_cuts_by_half_alpha_at_most_once_per_rtt(void **state)
{
	struct pcm_shell *sh = ph_open("dctcp");
	struct wev marked = { .acks = 1, .acked_bytes = F_MSS, .ecn = 1, .rtt_ps = 20 * US };
	struct wev ack = { .acks = 1, .acked_bytes = F_MSS, .rtt_ps = 20 * US };
	struct wev rto = { .rtos = 1 };
	uint64_t now = 0;
	double before, ssthresh;

	wev_feed(sh, &marked, now += US); /* alpha starts at 1: halve */
	assert_true(ph_var_d(sh, "CWND_PKTS") == M_INIT_PKTS * 0.5);
	before = ph_var_d(sh, "CWND_PKTS");
	for (int i = 0; i < 19; i++) /* the rest of this 20 us RTT: no further cut */
		wev_feed(sh, &marked, now += US);
	assert_true(ph_var_d(sh, "CWND_PKTS") == before);
	/* one RTT after the cut (20 of a window's 21 packets acked): the next mark cuts */
	wev_feed(sh, &marked, now += US);
	assert_true(ph_var_d(sh, "CWND_PKTS") < before);
	/* timeout: one packet, then slow start (a packet per packet) up to ssthresh */
	wev_feed(sh, &rto, now += 30 * US);
	assert_true(ph_var_d(sh, "CWND_PKTS") == 1.0);
	ssthresh = ph_var_d(sh, "SSTHRESH_PKTS");
	wev_feed(sh, &ack, now += US);
	assert_true(ph_var_d(sh, "CWND_PKTS") == 2.0);
	while (ph_var_d(sh, "CWND_PKTS") < ssthresh)
		wev_feed(sh, &ack, now += US);
	before = ph_var_d(sh, "CWND_PKTS");
	wev_feed(sh, &ack, now += US);
	assert_true(ph_var_d(sh, "CWND_PKTS") - before < 1.0); /* congestion avoidance */
	pcm_shell_destroy(sh);
}

/* ---- uec_dctcp --------------------------------------------------------------- */

/* uec_dctcp starts at 1.5 BDP (uet-htsim, the PCM SDK) */
#define UECD_INIT_PKTS (1.5 * F_BDP / F_PKT)

static double uecd_step(double cwnd, const struct wev *e)
{
	if (!wev_triggers(e))
		return cwnd;
	if (e->rtos) {
		cwnd = cwnd - (double)e->rtos;
	} else if (e->nacks) {
		uint64_t nacked = e->nacked_bytes ? e->nacked_bytes : e->nacks * (uint64_t)F_MSS;

		cwnd = cwnd - m_b2p(nacked);
	} else {
		uint64_t acked = e->acks ? e->acked_bytes : 0;
		uint64_t marked =
		    acked < e->ecn * (uint64_t)F_MSS ? acked : e->ecn * (uint64_t)F_MSS;

		if (acked > marked)
			cwnd = cwnd + (1.0 * m_b2p(acked - marked)) / cwnd;
		if (marked)
			cwnd = cwnd - m_b2p(marked) / 3.0;
	}
	return m_clamp(cwnd, M_MIN_PKTS, M_MAX_PKTS);
}

static void test_uec_dctcp_matches_reference_on_random_trace(void **state)
{
	struct pcm_shell *sh = ph_open("uec_dctcp");
	uint64_t s = 0x0ec0, now = 0;
	double cwnd = UECD_INIT_PKTS;

	for (unsigned i = 0; i < 40000; i++) {
		struct wev e = wev_random(&s, 8, F_BRTT, 20 * US);

		wev_feed(sh, &e, now += US);
		cwnd = uecd_step(cwnd, &e);
		assert_int_equal(ph_ctrl(sh, PCM_CTRL_CWND), m_p2w(cwnd));
		if (wev_triggers(&e))
			assert_true(ph_var_d(sh, "CWND_PKTS") == cwnd);
	}
	pcm_shell_destroy(sh);
}

static void test_uec_dctcp_marked_ack_takes_back_a_third_of_its_bytes(void **state)
{
	struct pcm_shell *sh = ph_open("uec_dctcp");
	struct wev marked = { .acks = 1, .acked_bytes = F_MSS, .ecn = 1 };
	struct wev nack = { .nacks = 1, .nacked_bytes = 2 * F_MSS };
	uint64_t now = 0;
	double before = ph_var_d(sh, "CWND_PKTS");

	wev_feed(sh, &marked, now += US);
	assert_true(ph_var_d(sh, "CWND_PKTS") == UECD_INIT_PKTS - 1.0 / 3.0);
	before = ph_var_d(sh, "CWND_PKTS");
	wev_feed(sh, &nack, now += US);
	assert_true(ph_var_d(sh, "CWND_PKTS") == before - 2.0);
	/* every ACK marked: down to one MTU and held there */
	for (int i = 0; i < 500; i++)
		wev_feed(sh, &marked, now += US);
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_CWND), m_p2w(M_MIN_PKTS));
	pcm_shell_destroy(sh);
}

/* ---- smartt ------------------------------------------------------------------ */

#define SM_TARGET_US (F_TRTT / 1000000.0)
#define SM_BASE_US (F_BRTT / 1000000.0)
#define SM_BDP_PKTS ((double)F_BDP / F_PKT)
#define SM_X 0.15
#define SM_Y 1.0
#define SM_W 1.0
#define SM_Z 1.0
#define SM_FI_SLACK_US (5.0 * (F_MSS + 64) * 8.0 / (F_RATE_GBPS * 1000.0))

struct smartt_m {
	double cwnd;
	uint64_t rtt, inflight, period_end, period_acked, next_qa, ignore, received, good, good_target;
	bool need_qa, fast, init;
};

static bool sm_ignoring(const struct smartt_m *m)
{
	return m->received < m->ignore;
}

static bool sm_quick_adapt(struct smartt_m *m, uint64_t now)
{
	bool first = m->period_end == 0;
	uint64_t saved;

	if (now < m->period_end)
		return false;
	saved = m->period_acked;
	m->period_acked = 0;
	m->period_end = now + F_BRTT;
	if (first || !m->need_qa || sm_ignoring(m) || now <= m->next_qa)
		return false;
	m->next_qa = now + 3ull * F_BRTT;
	m->cwnd = m_max(m_b2p(saved), 1.0);
	m->ignore = m->inflight / F_PKT * F_MSS;
	m->received = 0;
	m->need_qa = false;
	m->good = 0;
	m->fast = false;
	return true;
}

static double sm_quadrants(double cwnd, double rtt, double acked, double marked)
{
	double fair = SM_X / cwnd, share = SM_Z * (cwnd / SM_BDP_PKTS);

	if (marked > 0) {
		double step = share;

		if (rtt > SM_TARGET_US)
			step = m_min(SM_W * ((rtt - SM_TARGET_US) / rtt) + share, 1.0);
		return cwnd - step * marked;
	}
	if (rtt < SM_TARGET_US) {
		double prop = m_min((SM_Y * ((SM_TARGET_US - rtt) / rtt)) / cwnd, 1.0);

		return cwnd + (prop + fair) * acked;
	}
	return cwnd + fair * acked;
}

static void sm_ack(struct smartt_m *m, const struct wev *e, uint64_t now)
{
	uint64_t acked = e->acks ? e->acked_bytes : 0;
	uint64_t marked = acked < e->ecn * (uint64_t)F_MSS ? acked : e->ecn * (uint64_t)F_MSS;
	double rtt = m_ps_to_us(m->rtt);

	m->period_acked += acked;
	m->received += acked;
	if (sm_quick_adapt(m, now))
		return;
	if (sm_ignoring(m) && marked)
		return;
	if (!(rtt > 0.0))
		return;
	if (marked || rtt > SM_BASE_US + SM_FI_SLACK_US) {
		m->good = 0;
		m->good_target = m_p2b(m->cwnd);
		m->fast = false;
	} else {
		m->good += acked;
		if (!sm_ignoring(m) && (m->fast || m->good > m->good_target)) {
			m->fast = true;
			m->cwnd = m->cwnd + 1.0 * m_b2p(acked);
			return;
		}
	}
	m->cwnd = sm_quadrants(m->cwnd, rtt, m_b2p(acked), m_b2p(marked));
}

static void smartt_step(struct smartt_m *m, const struct wev *e, uint64_t now)
{
	if (e->rtt_ps)
		m->rtt = e->rtt_ps;
	if (e->inflight)
		m->inflight = e->inflight;
	if (!wev_triggers(e))
		return;
	if (!m->init) {
		m->cwnd = M_INIT_PKTS;
		m->good_target = m_p2b(M_INIT_PKTS);
		m->init = true;
	}
	if (e->rtos) {
		m->cwnd = 1.0; /* the authors' code: a timeout resets the window to one packet */
	} else if (e->nacks) {
		if (!sm_ignoring(m)) {
			m->need_qa = true;
			if (!sm_quick_adapt(m, now))
				m->cwnd = m->cwnd - 1.0 * (double)e->nacks;
		}
	} else {
		sm_ack(m, e, now);
	}
	m->cwnd = m_clamp(m->cwnd, M_MIN_PKTS, M_MAX_PKTS);
}

static void test_smartt_matches_reference_on_random_trace(void **state)
{
	struct pcm_shell *sh = ph_open("smartt");
	uint64_t s = 0x53a77, now = 0;
	struct smartt_m m = { 0 };

	for (unsigned i = 0; i < 40000; i++) {
		const uint64_t *r = rtt_regime(i);
		struct wev e = wev_random(&s, i % 6000 < 3000 ? 15 : 2, r[0], r[1]);

		wev_feed(sh, &e, now += r[2]);
		smartt_step(&m, &e, now);
		if (m.init)
			assert_int_equal(ph_ctrl(sh, PCM_CTRL_CWND), m_p2w(m.cwnd));
		if (wev_triggers(&e))
			assert_true(ph_var_d(sh, "CWND_PKTS") == m.cwnd);
	}
	pcm_shell_destroy(sh);
}

static double smartt_after(const struct wev *e, unsigned n)
{
	struct pcm_shell *sh = ph_open("smartt");
	uint64_t now = 0;
	double cwnd;

	for (unsigned i = 0; i < n; i++)
		wev_feed(sh, e, now += US / 4);
	cwnd = ph_var_d(sh, "CWND_PKTS");
	pcm_shell_destroy(sh);
	return cwnd;
}

/*
 * The quadrants in the authors' per-ACK forms: below target x / cwnd plus
 * min(y (t - r) / r / cwnd, 1) packets per packet; above it x / cwnd; a
 * marked ACK below target takes z cwnd / BDP, above it min(w (r - t) / r +
 * z cwnd / BDP, 1). So a window of ACKs changes the window by a few packets,
 * whatever its size (additive per RTT), and larger windows give back more.
 */
static void test_smartt_quadrants_are_additive_per_rtt(void **state)
{
	const uint64_t low = F_BRTT + 4 * US, high = F_TRTT + 10 * US;
	const double rl = m_ps_to_us(low), rh = m_ps_to_us(high), c0 = M_INIT_PKTS;
	struct wev mi = { .acks = 1, .acked_bytes = F_MSS, .rtt_ps = low };
	struct wev fi = { .acks = 1, .acked_bytes = F_MSS, .rtt_ps = high };
	struct wev fd = { .acks = 1, .acked_bytes = F_MSS, .ecn = 1, .rtt_ps = low };
	struct wev md = { .acks = 1, .acked_bytes = F_MSS, .ecn = 1, .rtt_ps = high };
	double share = SM_Z * c0 / SM_BDP_PKTS;

	assert_true(smartt_after(&mi, 1) ==
		    c0 + (m_min((SM_Y * ((SM_TARGET_US - rl) / rl)) / c0, 1.0) + SM_X / c0));
	assert_true(smartt_after(&fi, 1) == c0 + SM_X / c0);
	assert_true(smartt_after(&fd, 1) == c0 - share);
	assert_true(smartt_after(&md, 1) ==
		    c0 - m_min(SM_W * ((rh - SM_TARGET_US) / rh) + share, 1.0));
	/* a whole window of unmarked ACKs above target: + x packets, not x per packet */
	assert_true(fabs(smartt_after(&fi, (unsigned)c0) - (c0 + SM_X)) < 0.01);
}

/* A timeout (authors' code): the window restarts from one packet, wherever it was; a NACK takes one. */
static void test_smartt_timeout_resets_the_window_to_one_packet(void **state)
{
	struct pcm_shell *sh = ph_open("smartt");
	struct wev ack = { .acks = 1, .acked_bytes = F_MSS, .rtt_ps = F_TRTT + 10 * US };
	struct wev nack = { .nacks = 1, .nacked_bytes = F_MSS };
	struct wev rto = { .rtos = 1 };
	uint64_t now = 0;
	double before;

	for (unsigned i = 0; i < 200; i++)
		wev_feed(sh, &ack, now += US / 4);
	before = ph_var_d(sh, "CWND_PKTS");
	assert_true(before > 4.0);
	wev_feed(sh, &nack, now += US / 4);
	assert_true(ph_var_d(sh, "CWND_PKTS") == before - 1.0);
	wev_feed(sh, &rto, now += US / 4);
	assert_true(ph_var_d(sh, "CWND_PKTS") == 1.0);
	assert_int_equal(ph_ctrl(sh, PCM_CTRL_CWND), m_p2w(1.0));
	pcm_shell_destroy(sh);
}

/*
 * Quick adapt (authors' code): a trim asks for it; at the end of the current
 * one-base-RTT period the window becomes what the last full period
 * delivered; then the bytes in flight are an ignore window in which marks
 * and trims change nothing; after it a trim takes one packet.
 */
static void test_smartt_quick_adapt_sets_the_window_to_one_base_rtt_of_delivery(void **state)
{
	struct pcm_shell *sh = ph_open("smartt");
	struct wev ack = { .acks = 1, .acked_bytes = F_MSS, .rtt_ps = F_TRTT + 5 * US,
			   .inflight = 20 * F_PKT };
	struct wev marked = ack;
	struct wev nack = { .nacks = 1, .nacked_bytes = F_MSS };
	uint64_t now = 0;
	double before;

	marked.ecn = 1;
	/* 3 packets per base RTT delivered (an incast share) */
	for (int i = 0; i < 12; i++)
		wev_feed(sh, &ack, now += F_BRTT / 3);
	wev_feed(sh, &nack, now += 1000); /* asks; the period is not over */
	before = ph_var_d(sh, "CWND_PKTS");
	assert_true(before > 10.0);
	while (ph_var_d(sh, "CWND_PKTS") > 4.0 && now < 10ull * F_BRTT)
		wev_feed(sh, &ack, now += F_BRTT / 3);
	assert_true(ph_var_d(sh, "CWND_PKTS") == 3.0);
	/* the ignore window: what was in flight (20 packets) */
	before = ph_var_d(sh, "CWND_PKTS");
	wev_feed(sh, &marked, now += 1000);
	wev_feed(sh, &nack, now += 1000);
	assert_true(ph_var_d(sh, "CWND_PKTS") == before);
	for (int i = 0; i < 20; i++)
		wev_feed(sh, &ack, now += F_BRTT / 3);
	before = ph_var_d(sh, "CWND_PKTS");
	wev_feed(sh, &nack, now += 1000);
	assert_true(ph_var_d(sh, "CWND_PKTS") == m_max(before - 1.0, M_MIN_PKTS));
	pcm_shell_destroy(sh);
}

/* ---- nscc -------------------------------------------------------------------- */

#define N_TARGET_US (0.75 * F_BRTT / 1000000.0)
#define N_TARGET_PS ((uint64_t)(0.75 * F_BRTT))
#define N_SCALE_A (F_BDP / 150000.0)
#define N_SCALE_B (N_TARGET_US / 12.0)
#define N_PI (4.0 * N_SCALE_A * N_SCALE_B / N_TARGET_US)
#define N_FI (5.0 * N_SCALE_A)
#define N_ETA (0.15 * N_SCALE_A)
#define N_FAST (0.25 * N_SCALE_A)
#define N_GAIN 0.0125
#define N_ADJ_BYTES (8u * F_MTU)
#define N_QA_THRESH (4.0 * N_TARGET_US)
#define N_QA_MAX (F_MAX_CWND >> 3)

struct nscc_m {
	double cwnd, inc, avg;
	uint64_t rtt, inflight, base, received, last_adjust, last_dec, fi_count, achieved, qa_end;
	uint64_t to_ignore, ignored;
	bool fast, trigger_qa, init;
};

static double n_clamp(double c)
{
	return m_clamp(c, M_MIN_PKTS, M_MAX_PKTS);
}

static bool n_quick_adapt(struct nscc_m *m, bool loss, bool marked, double delay, uint64_t now)
{
	bool done = false;

	if (m->ignored < m->to_ignore && marked) {
		done = true;
	} else if (now > m->qa_end) {
		if (m->qa_end && (m->trigger_qa || loss || delay > N_QA_THRESH) &&
		    m->achieved < N_QA_MAX) {
			m->cwnd = m_max(m_b2p(m->achieved), M_MIN_PKTS);
			m->to_ignore = m->inflight;
			m->ignored = 0;
			m->trigger_qa = false;
			done = true;
		}
		m->achieved = 0;
		m->qa_end = now + m->base + N_TARGET_PS;
	}
	if (done) {
		m->inc = 0.0;
		m->received = 0;
	}
	return done;
}

static void n_ack(struct nscc_m *m, const struct wev *e, uint64_t now)
{
	uint64_t acked = e->acks ? e->acked_bytes : 0;
	bool marked = e->ecn != 0;
	double delay, ap;

	m->achieved += acked;
	m->received += acked;
	m->ignored += acked;
	if (!m->rtt) {
		delay = m->avg;
	} else {
		double sample;

		if (m->rtt < m->base)
			m->base = m->rtt;
		delay = m_ps_to_us(m->rtt - m->base);
		sample = !marked && delay > N_TARGET_US ? m_ps_to_us(m->base) / 4.0 : delay;
		m->avg = m_ewma(m->avg, sample, N_GAIN);
	}
	if (n_quick_adapt(m, false, marked, delay, now)) {
		m->cwnd = n_clamp(m->cwnd);
		return;
	}
	ap = m_b2p(acked);
	if (!marked && delay >= N_TARGET_US) {
		m->inc = m->inc + N_FI * ap;
	} else if (!marked) {
		bool fast = false;

		if (delay < 1.0) {
			m->fi_count += acked;
			if (m->fi_count > m_p2b(m->cwnd) || m->fast) {
				m->cwnd = m->cwnd + ap * N_FAST;
				m->fast = fast = true;
			}
		} else {
			m->fi_count = 0;
		}
		if (!fast) {
			m->fast = false;
			m->inc = m->inc + (N_PI * ap) * (N_TARGET_US - delay);
		}
	} else if (delay >= N_TARGET_US) {
		m->fast = false;
		m->fi_count = 0;
		if (m->avg > N_TARGET_US && now - m->last_dec > m->base) {
			double f = 1.0 - (0.8 * (m->avg - N_TARGET_US)) / m->avg;

			m->last_dec = now;
			m->cwnd = m->cwnd * m_max(f, 0.5);
		}
	}
	m->cwnd = n_clamp(m->cwnd);
	if (m->received > N_ADJ_BYTES || now - m->last_adjust > F_BRTT) {
		m->cwnd = m->cwnd + m->inc / m->cwnd;
		if (now - m->last_adjust >= F_BRTT) {
			m->cwnd = m->cwnd + N_ETA;
			m->last_adjust = now;
		}
		m->inc = 0.0;
		m->received = 0;
		m->cwnd = n_clamp(m->cwnd);
	}
}

static void nscc_step(struct nscc_m *m, const struct wev *e, uint64_t now)
{
	if (e->rtt_ps)
		m->rtt = e->rtt_ps;
	if (e->inflight)
		m->inflight = e->inflight;
	if (!wev_triggers(e))
		return;
	if (!m->init) {
		m->cwnd = M_MAX_PKTS;
		m->base = F_BRTT;
		m->last_adjust = now;
		m->init = true;
	}
	if (e->rtos) {
		m->cwnd = n_clamp(m->cwnd - (double)e->rtos);
	} else if (e->nacks) {
		uint64_t nacked = e->nacked_bytes ? e->nacked_bytes : e->nacks * (uint64_t)F_MSS;

		m->ignored += nacked;
		m->avg = m_ewma(m->avg, m_ps_to_us(F_BRTT), N_GAIN);
		m->trigger_qa = true;
		if (n_quick_adapt(m, true, true, 0.0, now))
			m->cwnd = n_clamp(m->cwnd);
		else
			m->cwnd = n_clamp(m->cwnd - m_b2p(nacked));
	} else {
		n_ack(m, e, now);
	}
	m->rtt = 0; /* RTT_SAMPLE is consumed by every call */
}

static void test_nscc_matches_reference_on_random_trace(void **state)
{
	struct pcm_shell *sh = ph_open("nscc");
	uint64_t s = 0x25cc, now = 0;
	struct nscc_m m = { 0 };

	for (unsigned i = 0; i < 60000; i++) {
		const uint64_t *r = rtt_regime(i);
		struct wev e = wev_random(&s, i % 9000 < 3000 ? 2 : 20, r[0], r[1]);

		wev_feed(sh, &e, now += r[2]);
		nscc_step(&m, &e, now);
		if (m.init)
			assert_int_equal(ph_ctrl(sh, PCM_CTRL_CWND), m_p2w(m.cwnd));
		if (wev_triggers(&e)) {
			assert_true(ph_var_d(sh, "CWND_PKTS") == m.cwnd);
			assert_true(ph_var_d(sh, "AVG_DELAY_US") == m.avg);
			assert_true(ph_var_d(sh, "INC") == m.inc);
			assert_int_equal(ph_var_u(sh, "BASE_RTT_PS"), m.base);
		}
	}
	pcm_shell_destroy(sh);
}

static void test_nscc_decreases_on_ecn_with_delay_and_grows_without(void **state)
{
	struct pcm_shell *sh = ph_open("nscc");
	struct wev calm = { .acks = 1, .acked_bytes = F_MSS, .rtt_ps = F_BRTT + 3 * US };
	struct wev hot = { .acks = 1, .acked_bytes = F_MSS, .ecn = 1, .rtt_ps = F_BRTT + 30 * US };
	struct wev noisy = { .acks = 1, .acked_bytes = F_MSS, .ecn = 1, .rtt_ps = F_BRTT + 2 * US };
	uint64_t now = 0;
	double c0, c1;
	unsigned cuts = 0;

	/* marks with a low delay are a path effect: the window does not move down */
	for (int i = 0; i < 50; i++)
		wev_feed(sh, &noisy, now += US / 4);
	assert_true(ph_var_d(sh, "CWND_PKTS") == M_MAX_PKTS);
	/* marks with a high delay: cuts, at most one per base RTT (14 us) */
	for (int i = 0; i < 400; i++) {
		double before = ph_var_d(sh, "CWND_PKTS");

		wev_feed(sh, &hot, now += US / 2);
		cuts += ph_var_d(sh, "CWND_PKTS") < before;
	}
	c0 = ph_var_d(sh, "CWND_PKTS");
	assert_true(c0 < M_MAX_PKTS);
	assert_true(cuts >= 1 && cuts <= 200 / 14 + 1);
	/* unmarked ACKs below the target: proportional increase, applied in batches */
	for (int i = 0; i < 400; i++)
		wev_feed(sh, &calm, now += US / 2);
	c1 = ph_var_d(sh, "CWND_PKTS");
	assert_true(c1 > c0);
	pcm_shell_destroy(sh);
}

static void test_nscc_trim_requests_quick_adapt_to_delivered_bytes(void **state)
{
	struct pcm_shell *sh = ph_open("nscc");
	struct wev ack = {
		.acks = 1, .acked_bytes = F_MSS, .rtt_ps = F_BRTT + 12 * US, .inflight = 50000
	};
	struct wev nack = { .nacks = 1, .nacked_bytes = F_MSS };
	uint64_t now = 0;

	/* two packets per QA period (base + target = ~24.5 us) */
	for (int i = 0; i < 10; i++)
		wev_feed(sh, &ack, now += 12 * US);
	wev_feed(sh, &nack, now += 30 * US);
	assert_true(ph_var_d(sh, "CWND_PKTS") <= 3.0);
	assert_int_equal(ph_var_u(sh, "BYTES_TO_IGNORE"), 50000);
	pcm_shell_destroy(sh);
}

/* ---- mprdma ------------------------------------------------------------------ */

#define VPQ_LEN 32

struct mprdma_m {
	double cwnd;
	uint64_t q[VPQ_LEN], head, count, rng, ev;
};

static void mp_push(struct mprdma_m *m, uint64_t vp)
{
	m->q[m->head % VPQ_LEN] = vp;
	m->head = (m->head + 1) % VPQ_LEN;
	if (m->count < VPQ_LEN)
		m->count++;
}

/* One event: feedback (like the window models) and, with @tx, a packet's path. */
static void mprdma_step(struct mprdma_m *m, const struct wev *e, bool tx, uint64_t now)
{
	if (e->rtos) {
		m->cwnd = M_MIN_PKTS;
	} else if (e->nacks) {
		m->cwnd = m->cwnd - 0.5 * (double)e->nacks;
	} else if (e->acks || e->ecn) {
		uint64_t acked = e->acks ? e->acked_bytes : 0;
		uint64_t marked =
		    acked < e->ecn * (uint64_t)F_MSS ? acked : e->ecn * (uint64_t)F_MSS;

		if (acked > marked)
			m->cwnd = m->cwnd + (1.0 * m_b2p(acked - marked)) / m->cwnd;
		if (marked)
			m->cwnd = m->cwnd - 0.5 * m_b2p(marked);
		if (!e->ecn && e->acks)
			mp_push(m, e->ack_ev & 0xffff);
	}
	m->cwnd = m_clamp(m->cwnd, M_MIN_PKTS, M_MAX_PKTS);
	if (tx) {
		if (m->count) {
			m->ev = m->q[(m->head + VPQ_LEN - m->count) % VPQ_LEN];
			m->count--;
		} else {
			m->ev = m_rng_next(&m->rng, now) & 0xffff;
		}
	}
}

static void mprdma_feed(struct pcm_shell *sh, const struct wev *e, bool tx, uint64_t now)
{
	struct pcm_event ev = { 0 };

	if (e->acks) {
		ph_set(&ev, PCM_SIG_ACK, e->acks);
		ph_set(&ev, PCM_SIG_DATA_TX, e->acked_bytes);
		ph_set(&ev, PCM_SIG_ACK_EV, e->ack_ev);
	}
	if (e->ecn)
		ph_set(&ev, PCM_SIG_ECN, e->ecn);
	if (e->nacks)
		ph_set(&ev, PCM_SIG_NACK, e->nacks);
	if (e->rtos)
		ph_set(&ev, PCM_SIG_RTO, e->rtos);
	if (tx)
		ph_set(&ev, PCM_SIG_TX_READY_PKTS, 1);
	ph_feed(sh, &ev, now, tx || wev_triggers(e));
}

static void test_mprdma_matches_reference_on_random_trace(void **state)
{
	struct pcm_shell *sh = ph_open("mprdma");
	struct mprdma_m m = { .cwnd = M_INIT_PKTS };
	uint64_t s = 0x3e7d, now = 0;

	for (unsigned i = 0; i < 40000; i++) {
		struct wev e = wev_random(&s, 12, F_BRTT, 10 * US);
		bool tx = ph_rand(&s) % 3 != 0;

		e.rtt_ps = 0;
		if (!tx && !wev_triggers(&e))
			continue;
		mprdma_feed(sh, &e, tx, now += 300000);
		mprdma_step(&m, &e, tx, now);
		assert_int_equal(ph_ctrl(sh, PCM_CTRL_CWND), m_p2w(m.cwnd));
		assert_true(ph_var_d(sh, "CWND_PKTS") == m.cwnd);
		assert_int_equal(ph_ctrl(sh, PCM_CTRL_EV), m.ev);
	}
	pcm_shell_destroy(sh);
}

static void test_mprdma_next_packet_follows_unmarked_acks_and_leaves_marked_paths(void **state)
{
	struct pcm_shell *sh = ph_open("mprdma");
	struct wev none = { 0 };
	uint64_t now = 0;

	for (uint64_t vp = 100; vp < 110; vp++) {
		struct wev good = { .acks = 1, .acked_bytes = F_MSS, .ack_ev = vp };
		struct wev bad = { .acks = 1, .acked_bytes = F_MSS, .ecn = 1, .ack_ev = vp + 1000 };

		mprdma_feed(sh, &good, false, now += 1000);
		mprdma_feed(sh, &none, true, now += 1000);
		assert_int_equal(ph_ctrl(sh, PCM_CTRL_EV), vp); /* clocked onto the same path */
		mprdma_feed(sh, &bad, false, now += 1000);
		mprdma_feed(sh, &none, true, now += 1000);
		assert_int_not_equal(ph_ctrl(sh, PCM_CTRL_EV), vp + 1000); /* moved off it */
	}
	/* a marked ACK or a NACK only stops its path being reused: queued good paths go first */
	{
		struct wev g1 = { .acks = 1, .acked_bytes = F_MSS, .ack_ev = 200 };
		struct wev bad = { .acks = 1, .acked_bytes = F_MSS, .ecn = 1, .ack_ev = 1200 };
		struct wev nack = { .nacks = 1 };
		struct wev g2 = { .acks = 1, .acked_bytes = F_MSS, .ack_ev = 201 };

		mprdma_feed(sh, &g1, false, now += 1000);
		mprdma_feed(sh, &bad, false, now += 1000);
		mprdma_feed(sh, &nack, false, now += 1000);
		mprdma_feed(sh, &g2, false, now += 1000);
		mprdma_feed(sh, &none, true, now += 1000);
		assert_int_equal(ph_ctrl(sh, PCM_CTRL_EV), 200);
		mprdma_feed(sh, &none, true, now += 1000);
		assert_int_equal(ph_ctrl(sh, PCM_CTRL_EV), 201);
	}
	/* window: +1/cwnd per unmarked ACK, -1/2 per marked one */
	{
		double c = ph_var_d(sh, "CWND_PKTS");
		struct wev good = { .acks = 1, .acked_bytes = F_MSS, .ack_ev = 7 };
		struct wev bad = { .acks = 1, .acked_bytes = F_MSS, .ecn = 1, .ack_ev = 7 };

		mprdma_feed(sh, &good, false, now += 1000);
		assert_true(ph_var_d(sh, "CWND_PKTS") == c + 1.0 / c);
		c = ph_var_d(sh, "CWND_PKTS");
		mprdma_feed(sh, &bad, false, now += 1000);
		assert_true(ph_var_d(sh, "CWND_PKTS") == c - 0.5);
	}
	pcm_shell_destroy(sh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_newreno_matches_reference_on_random_trace),
		cmocka_unit_test(
			test_newreno_halves_the_flight_once_per_rtt_and_timeout_falls_to_one_packet),
		cmocka_unit_test(test_cubic_matches_reference_on_random_trace),
		cmocka_unit_test(test_cubic_regrows_to_wmax_in_k_seconds_then_probes_beyond),
		cmocka_unit_test(test_cubic_target_is_capped_at_one_and_a_half_windows),
		cmocka_unit_test(test_cubic_runs_reno_friendly_on_a_short_rtt),
		cmocka_unit_test(test_dctcp_matches_reference_on_random_trace),
		cmocka_unit_test(test_dctcp_alpha_converges_to_the_marked_fraction),
		cmocka_unit_test(test_dctcp_cuts_by_half_alpha_at_most_once_per_rtt),
		cmocka_unit_test(test_uec_dctcp_matches_reference_on_random_trace),
		cmocka_unit_test(test_uec_dctcp_marked_ack_takes_back_a_third_of_its_bytes),
		cmocka_unit_test(test_smartt_matches_reference_on_random_trace),
		cmocka_unit_test(test_smartt_quadrants_are_additive_per_rtt),
		cmocka_unit_test(test_smartt_timeout_resets_the_window_to_one_packet),
		cmocka_unit_test(test_smartt_quick_adapt_sets_the_window_to_one_base_rtt_of_delivery),
		cmocka_unit_test(test_nscc_matches_reference_on_random_trace),
		cmocka_unit_test(test_nscc_decreases_on_ecn_with_delay_and_grows_without),
		cmocka_unit_test(test_nscc_trim_requests_quick_adapt_to_delivered_bytes),
		cmocka_unit_test(test_mprdma_matches_reference_on_random_trace),
		cmocka_unit_test(
		    test_mprdma_next_packet_follows_unmarked_acks_and_leaves_marked_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
