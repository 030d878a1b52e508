// SPDX-License-Identifier: MIT
/*
 * cubic.c - CUBIC congestion window, per ACK.
 *
 * Ha, Rhee, Xu, "CUBIC: A New TCP-Friendly High-Speed TCP Variant", ACM
 * SIGOPS OSR 2008; Rhee et al., RFC 8312 (2018).
 *
 * Windows in packets, t and K in base RTTs (FABRIC_BRTT):
 *   loss (NACK, at most once per RTT) or RTO:
 *       Wmax = cwnd, or cwnd * (1 + BETA) / 2 if cwnd < the previous Wmax
 *       (fast convergence); ssthresh = max(BETA * cwnd, min);
 *       cwnd = ssthresh (NACK) or min (RTO); the growth epoch ends
 *   ACK, cwnd < ssthresh:   cwnd += acked                       (slow start)
 *   ACK, otherwise:         on the epoch's first ACK
 *                               K = cbrt(max(Wmax - cwnd, 0) / C), origin = max(Wmax, cwnd)
 *                           t = (now - epoch + rtt) / BRTT      (aim one RTT ahead)
 *                           target = C * clamp(t - K, +-D_MAX)^3 + origin
 *                           cwnd += (target - cwnd) / cwnd * acked    if target > cwnd
 *                           cwnd += SLOW_INCREASE * acked / cwnd      otherwise
 *                           W_est = BETA * Wmax + FRIENDLY_GAIN * (now - epoch) / rtt
 *                           cwnd = max(cwnd, W_est)             (TCP-friendly region)
 *   cwnd is clamped to [FABRIC_MIN_CWND, FABRIC_MAX_CWND] / MSS.
 *
 * RFC 8312 measures t in seconds with C = 0.4; at a 14 us fabric RTT that
 * cubic would never leave the TCP-friendly line, so t is counted in base
 * RTTs instead (C = 0.4 packets per BRTT^3). D_MAX keeps (t - K)^3 inside
 * Q16.16 after long idle periods; beyond it the target is past the window
 * clamp anyway.
 *
 * In the emulation: after a trim the window regrows to Wmax (after fast
 * convergence) within about K base RTTs (K + 2: the target aims one RTT
 * ahead), lingers there (concave), then probes past it faster (convex).
 *
 * A call reacts to the most severe kind of event it carries: RTO, then NACK,
 * then ACK; per-event datapaths never mix them.
 *
 * Tunables: C_PKTS (packets / BRTT^3), BETA (fraction), SLOW_INCREASE and
 * FRIENDLY_GAIN (packets per RTT), D_MAX (BRTTs); RTT_SAMPLE, NOW in ps.
 */
#include "cubic.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE pcm_fx fx(double v)
{
	return pcm_fx_from_double(v);
}

static PCM_FORCE_INLINE pcm_fx on_loss(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now, bool timeout)
{
	pcm_fx ssthresh = pcm_fx_max(pcm_fx_mul(cwnd, fx(BETA)), fx(MIN_CWND_PKTS));
	pcm_fx w_max = cwnd;

	if (FAST_CONVERGENCE && pcm_fx_lt(cwnd, get_var_fx(W_LAST_MAX_PKTS)))
		w_max = pcm_fx_div(pcm_fx_mul(cwnd, pcm_fx_add(PCM_FX_ONE, fx(BETA))),
				   pcm_fx_from_int(2));
	set_var_fx(W_LAST_MAX_PKTS, cwnd);
	set_var_fx(W_MAX_PKTS, w_max);
	set_var_fx(SSTHRESH_PKTS, ssthresh);
	set_var_uint(IN_EPOCH, 0);
	set_var_uint(T_LAST_DECREASE, now);
	set_var_uint(DECREASED, 1);
	return timeout ? fx(MIN_CWND_PKTS) : ssthresh;
}

static PCM_FORCE_INLINE void start_epoch(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	pcm_fx w_max = get_var_fx(W_MAX_PKTS);
	pcm_fx gap = pcm_fx_max(pcm_fx_sub(w_max, cwnd), PCM_FX_ZERO);

	set_var_fx(K_BRTT, pcm_algo_cbrt(pcm_fx_div(gap, fx(C_PKTS))));
	set_var_fx(ORIGIN_PKTS, pcm_fx_max(w_max, cwnd));
	set_var_uint(T_EPOCH, now);
	set_var_uint(IN_EPOCH, 1);
}

static PCM_FORCE_INLINE pcm_fx cubic_target(ALGO_CTX_ARGS, pcm_fx t_brtt)
{
	pcm_fx d = pcm_algo_clamp(pcm_fx_sub(t_brtt, get_var_fx(K_BRTT)),
				  pcm_fx_sub(PCM_FX_ZERO, fx(D_MAX)), fx(D_MAX));
	pcm_fx cube = pcm_fx_mul(pcm_fx_mul(d, d), d);

	return pcm_fx_add(pcm_fx_mul(fx(C_PKTS), cube), get_var_fx(ORIGIN_PKTS));
}

static PCM_FORCE_INLINE pcm_fx congestion_avoidance(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_fx acked,
						    pcm_uint now)
{
	pcm_uint rtt = get_signal(RTT_SAMPLE);
	pcm_fx since_us, t_brtt, target, w_est;

	if (!get_var_uint(IN_EPOCH))
		start_epoch(ALGO_CTX_PASS, cwnd, now);
	since_us = pcm_algo_ps_to_us(now - get_var_uint(T_EPOCH));
	t_brtt = pcm_fx_div(pcm_fx_add(since_us, pcm_algo_ps_to_us(rtt)), fx(BRTT_US));
	target = cubic_target(ALGO_CTX_PASS, t_brtt);
	if (pcm_fx_gt(target, cwnd))
		cwnd =
		    pcm_fx_add(cwnd, pcm_fx_mul(pcm_fx_div(pcm_fx_sub(target, cwnd), cwnd), acked));
	else
		cwnd = pcm_algo_ai_step(cwnd, fx(SLOW_INCREASE), acked);
	if (rtt) {
		w_est = pcm_fx_add(
		    pcm_fx_mul(fx(BETA), get_var_fx(W_MAX_PKTS)),
		    pcm_fx_mul(fx(FRIENDLY_GAIN), pcm_fx_div(since_us, pcm_algo_ps_to_us(rtt))));
		cwnd = pcm_fx_max(cwnd, w_est);
	}
	return cwnd;
}

static PCM_FORCE_INLINE pcm_fx on_ack(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	pcm_fx acked = pcm_algo_bytes_to_pkts(get_signal(ACKED_BYTES), MSS_BYTES);

	if (pcm_fx_lt(cwnd, get_var_fx(SSTHRESH_PKTS)))
		return pcm_fx_add(cwnd, acked);
	return congestion_avoidance(ALGO_CTX_PASS, cwnd, acked, now);
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();
	pcm_uint now = get_signal(NOW);
	pcm_fx cwnd;

	if (!get_var_uint(INITIALIZED)) {
		set_var_fx(CWND_PKTS, fx(INIT_CWND_PKTS));
		set_var_fx(SSTHRESH_PKTS, fx(MAX_CWND_PKTS));
		set_var_uint(INITIALIZED, 1);
	}
	cwnd = get_var_fx(CWND_PKTS);

	if (mask & NUM_RTO) {
		cwnd = on_loss(ALGO_CTX_PASS, cwnd, now, true);
	} else if (mask & NUM_NACK) {
		if (!get_var_uint(DECREASED) ||
		    now - get_var_uint(T_LAST_DECREASE) >= get_signal(RTT_SAMPLE))
			cwnd = on_loss(ALGO_CTX_PASS, cwnd, now, false);
	} else {
		cwnd = on_ack(ALGO_CTX_PASS, cwnd, now);
	}

	cwnd = pcm_algo_clamp(cwnd, fx(MIN_CWND_PKTS), fx(MAX_CWND_PKTS));
	set_var_fx(CWND_PKTS, cwnd);
	set_control(CWND_BYTES, pcm_algo_pkts_to_bytes(cwnd, PKT_BYTES));
	return PCM_SUCCESS;
}
