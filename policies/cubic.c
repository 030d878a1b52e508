// SPDX-License-Identifier: MIT
/*
 * cubic.c - CUBIC congestion window, per ACK.
 *
 * Xu, Ha, Rhee, Goel, Eggert, "CUBIC for Fast and Long-Distance Networks",
 * RFC 9438 (2023); Ha, Rhee, Xu, "CUBIC: A New TCP-Friendly High-Speed TCP
 * Variant", ACM SIGOPS OSR 2008.
 *
 * Windows in packets, t, K and RTTs in seconds (RFC 9438 section 4):
 *   congestion event (NACK or ECN echo, at most once per RTT):
 *       cwnd_prior = cwnd
 *       Wmax = cwnd * (1 + BETA) / 2 if cwnd < Wmax (fast convergence), else cwnd
 *       ssthresh = max(flight * BETA, 2);  cwnd = ssthresh;  the epoch ends
 *   timeout (section 4.8): ssthresh as above (once per RTT), cwnd = 1 packet;
 *       the first epoch after it has K = 0 and Wmax = cwnd at its start
 *   ACK, cwnd < ssthresh:   cwnd += acked                       (slow start)
 *   ACK, otherwise (congestion avoidance):
 *       at the epoch's start: cwnd_epoch = W_est = cwnd,
 *                             K = cbrt((Wmax - cwnd_epoch) / C)  (Wmax = cwnd, K = 0 if below)
 *       W_cubic(t) = C (t - K)^3 + Wmax,  t = now - epoch start
 *       W_est += ALPHA_CUBIC * acked / cwnd  (1 once W_est >= cwnd_prior)
 *       W_cubic(t) < W_est:  cwnd = W_est                      (Reno-friendly region)
 *       otherwise:           target = clamp(W_cubic(t + rtt), cwnd, 1.5 cwnd)
 *                            cwnd += (target - cwnd) / cwnd * acked
 *   cwnd is clamped to [FABRIC_MIN_CWND, FABRIC_MAX_CWND] / PKT_BYTES.
 * flight is IN_FLIGHT in packets (the window when the datapath does not
 * report it); rtt is the latest sample, not a smoothed one.
 *
 * On a 14 us fabric RFC 9438's units make the cubic term all but flat
 * within a flow (K is seconds), so CUBIC runs in its Reno-friendly region
 * there, as the RFC intends for short RTTs; the cubic curve shows on long
 * RTTs (test_cubic_follows_the_cubic_curve_after_a_loss: 200 ms).
 *
 * Deviations from RFC 9438: once per RTT is once per RTT sample since the
 * last reduction (sequence numbers are not signals); no HyStart++; no undo
 * of spurious reductions. D_MAX_S bounds |t - K| so (t - K)^3 stays inside
 * Q16.16 after long epochs; beyond it the target is past the window clamp.
 *
 * A call reacts to the most severe kind of event it carries: RTO, then
 * NACK or ECN, then ACK; per-event datapaths never mix them.
 *
 * Tunables: C_PKTS (packets / s^3), BETA, TARGET_CAP (fractions),
 * ALPHA_CUBIC (packets per RTT), SSTHRESH_MIN_PKTS and LOSS_WINDOW_PKTS
 * (packets), D_MAX_S (s); RTT_SAMPLE, NOW in ps.
 */
#include "cubic.h"
#include "pcm_algo.h"
#include "pcmh.h"

/* The flight size in packets: IN_FLIGHT, or the window if the datapath does not report it. */
static PCM_FORCE_INLINE pcm_fx flight_pkts(ALGO_CTX_ARGS, pcm_fx cwnd)
{
	pcm_uint inflight = get_signal(INFLIGHT_BYTES);

	return inflight ? pcm_algo_bytes_to_pkts(inflight, PKT_BYTES) : cwnd;
}

static PCM_FORCE_INLINE bool may_decrease(ALGO_CTX_ARGS, pcm_uint now)
{
	return !get_var_uint(DECREASED) ||
	       now - get_var_uint(T_LAST_DECREASE) >= get_signal(RTT_SAMPLE);
}

/* A congestion event: Wmax, ssthresh and the end of the epoch (RFC 9438 4.6, 4.7). */
static PCM_FORCE_INLINE pcm_fx reduce(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	pcm_fx ssthresh = pcm_fx_mul(flight_pkts(ALGO_CTX_PASS, cwnd), pcm_algo_fx(BETA));
	pcm_fx w_max = cwnd;

	if (FAST_CONVERGENCE && pcm_fx_lt(cwnd, get_var_fx(W_MAX_PKTS)))
		w_max = pcm_fx_div(pcm_fx_mul(cwnd, pcm_fx_add(PCM_FX_ONE, pcm_algo_fx(BETA))),
				   pcm_fx_from_int(2));
	ssthresh = pcm_fx_max(ssthresh, pcm_algo_fx(SSTHRESH_MIN_PKTS));
	set_var_fx(CWND_PRIOR_PKTS, cwnd);
	set_var_fx(W_MAX_PKTS, w_max);
	set_var_fx(SSTHRESH_PKTS, ssthresh);
	set_var_uint(IN_EPOCH, 0);
	set_var_uint(T_LAST_DECREASE, now);
	set_var_uint(DECREASED, 1);
	return ssthresh;
}

static PCM_FORCE_INLINE void start_epoch(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	pcm_fx w_max = get_var_fx(W_MAX_PKTS);

	if (get_var_uint(AFTER_RTO) || pcm_fx_lt(w_max, cwnd)) {
		w_max = cwnd;
		set_var_fx(W_MAX_PKTS, w_max);
		set_var_uint(AFTER_RTO, 0);
	}
	set_var_fx(K_S, pcm_algo_cbrt(pcm_fx_div(pcm_fx_sub(w_max, cwnd), pcm_algo_fx(C_PKTS))));
	set_var_fx(CWND_EPOCH_PKTS, cwnd);
	set_var_fx(W_EST_PKTS, cwnd);
	set_var_uint(T_EPOCH, now);
	set_var_uint(IN_EPOCH, 1);
}

/* W_cubic(t) = C (t - K)^3 + Wmax, t in seconds since the epoch began. */
static PCM_FORCE_INLINE pcm_fx w_cubic(ALGO_CTX_ARGS, pcm_fx t_s)
{
	pcm_fx d =
	    pcm_algo_clamp(pcm_fx_sub(t_s, get_var_fx(K_S)),
			   pcm_fx_sub(PCM_FX_ZERO, pcm_algo_fx(D_MAX_S)), pcm_algo_fx(D_MAX_S));
	pcm_fx cube = pcm_fx_mul(pcm_fx_mul(d, d), d);

	return pcm_fx_add(pcm_fx_mul(pcm_algo_fx(C_PKTS), cube), get_var_fx(W_MAX_PKTS));
}

/* The Reno-friendly estimate after this ACK (RFC 9438 4.3). */
static PCM_FORCE_INLINE pcm_fx reno_estimate(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_fx acked)
{
	pcm_fx w_est = get_var_fx(W_EST_PKTS);
	pcm_fx alpha =
	    pcm_fx_ge(w_est, get_var_fx(CWND_PRIOR_PKTS)) ? PCM_FX_ONE : pcm_algo_fx(ALPHA_CUBIC);

	w_est = pcm_fx_add(w_est, pcm_fx_div(pcm_fx_mul(alpha, acked), cwnd));
	set_var_fx(W_EST_PKTS, w_est);
	return w_est;
}

static PCM_FORCE_INLINE pcm_fx congestion_avoidance(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_fx acked,
						    pcm_uint now)
{
	pcm_fx t_s, w_est, target;

	if (!get_var_uint(IN_EPOCH))
		start_epoch(ALGO_CTX_PASS, cwnd, now);
	t_s = pcm_algo_ps_to_s(now - get_var_uint(T_EPOCH));
	w_est = reno_estimate(ALGO_CTX_PASS, cwnd, acked);
	if (pcm_fx_lt(w_cubic(ALGO_CTX_PASS, t_s), w_est))
		return w_est;
	target = w_cubic(ALGO_CTX_PASS, pcm_fx_add(t_s, pcm_algo_ps_to_s(get_signal(RTT_SAMPLE))));
	target = pcm_algo_clamp(target, cwnd, pcm_fx_mul(cwnd, pcm_algo_fx(TARGET_CAP)));
	return pcm_fx_add(cwnd, pcm_fx_mul(pcm_fx_div(pcm_fx_sub(target, cwnd), cwnd), acked));
}

static PCM_FORCE_INLINE pcm_fx on_ack(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	pcm_fx acked = pcm_algo_bytes_to_pkts(get_signal(ACKED_BYTES), MSS_BYTES);

	if (pcm_algo_in_slow_start(cwnd, get_var_fx(SSTHRESH_PKTS)))
		return pcm_algo_slow_start(cwnd, acked);
	return congestion_avoidance(ALGO_CTX_PASS, cwnd, acked, now);
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();
	pcm_uint now = get_signal(NOW);
	pcm_fx cwnd = PCM_ALGO_WINDOW_LOAD_SS(INITIALIZED, CWND_PKTS, INIT_CWND_PKTS, SSTHRESH_PKTS,
					      MAX_CWND_PKTS);

	if (mask & NUM_RTO) {
		if (may_decrease(ALGO_CTX_PASS, now))
			reduce(ALGO_CTX_PASS, cwnd, now);
		set_var_uint(IN_EPOCH, 0);
		set_var_uint(AFTER_RTO, 1);
		cwnd = pcm_algo_fx(LOSS_WINDOW_PKTS);
	} else if (mask & (NUM_NACK | NUM_ECN)) {
		if (may_decrease(ALGO_CTX_PASS, now))
			cwnd = reduce(ALGO_CTX_PASS, cwnd, now);
	} else {
		cwnd = on_ack(ALGO_CTX_PASS, cwnd, now);
	}

	PCM_ALGO_WINDOW_STORE(CWND_PKTS, CWND_BYTES, cwnd, MIN_CWND_PKTS, MAX_CWND_PKTS, PKT_BYTES);
	return PCM_SUCCESS;
}
