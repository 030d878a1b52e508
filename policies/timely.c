// SPDX-License-Identifier: MIT
/*
 * timely.c - TIMELY, RTT-gradient rate control.
 *
 * Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter",
 * SIGCOMM 2015.
 *
 * Rate r as a fraction of line rate, RTTs in microseconds; one update per
 * completion of a 64 KiB segment, i.e. at most once per SEGMENT_US / r:
 *   diff     = EWMA_ALPHA-weighted EWMA of (rtt - prev_rtt);  prev_rtt = rtt
 *   gradient = diff / MIN_RTT
 *   rtt < T_LOW:           r += DELTA
 *   rtt > T_HIGH:          r *= 1 - BETA (1 - T_HIGH / rtt)
 *   gradient <= 0:         r += N DELTA; N = HAI_FACTOR once the raw difference
 *                          rtt - prev_rtt has been negative for HAI_THRESHOLD
 *                          updates in a row (hyperactive increase), else N = 1
 *   otherwise:             r *= 1 - BETA * gradient
 *   r is clamped to [RATE_MIN, 1]; RATE = r * PCM_RATE_ONE.
 * The first sample only sets prev_rtt's reference (its difference is 0).
 *
 * Thresholds come from the fabric profile instead of the paper's 10 GbE
 * values (T_low 50 us, T_high 500 us, minRTT 20 us), keeping the paper's
 * ratio T_high / T_low = 10: minRTT is FABRIC_BRTT (14.0 us), T_low
 * FABRIC_TRTT (24.5 us, 1.75 minRTT; the paper's 2.5 minRTT, 35 us, is above
 * what a one-BDP queue lets the RTT reach, about 36 us, so nothing but the
 * additive increase would ever act) and T_high 10 T_low (245 us). Between
 * them, which is every RTT a queue of the fabric gives, the gradient mode
 * decides, as the paper intends; T_high is the paper's guard against a
 * standing queue far beyond the fabric's buffers. (Before issue 25 T_high
 * was a fifth of the way to a full queue, 25.2 us: a band of 0.7 us, about
 * two packets, in which the gradient mode almost never acted.)
 *
 * Deviations: none in the update rule.
 * Deviation of the emulation, not of the rule: a rate policy drives no
 * window, so it runs under the scenario's fixed window (InitialCwnd,
 * pcm-sim(1)) and starts at INIT_RATE, line rate (a profile may start
 * lower); docs/policies.md.
 *
 * In the emulation: once converged, the gradient mode makes most updates
 * (test test_timely_gradient_mode_acts_once_converged).
 *
 * Tunables: EWMA_ALPHA, BETA (dimensionless); DELTA, RATE_MIN (fractions of
 * line rate); HAI_THRESHOLD (updates), HAI_FACTOR; MIN_RTT_US, T_LOW_US,
 * T_HIGH_US, SEGMENT_US (us).
 */
#include "timely.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE bool update_due(ALGO_CTX_ARGS, pcm_fx rate, pcm_uint now)
{
	pcm_fx since;

	if (!get_var_uint(UPDATED))
		return true;
	since = pcm_algo_ps_to_us(now - get_var_uint(T_LAST_UPDATE));
	return pcm_fx_ge(since, pcm_fx_div(pcm_algo_fx(SEGMENT_US), rate));
}

static PCM_FORCE_INLINE pcm_fx next_rate(ALGO_CTX_ARGS, pcm_fx rate, pcm_fx rtt)
{
	pcm_fx prev = get_var_uint(UPDATED) ? get_var_fx(PREV_RTT_US) : rtt;
	pcm_fx new_diff = pcm_fx_sub(rtt, prev);
	pcm_fx diff = pcm_algo_ewma(get_var_fx(RTT_DIFF_US), new_diff, pcm_algo_fx(EWMA_ALPHA));
	pcm_fx gradient = pcm_fx_div(diff, pcm_algo_fx(MIN_RTT_US));
	pcm_uint neg = pcm_fx_lt(new_diff, PCM_FX_ZERO) ? get_var_uint(NEG_COUNT) + 1 : 0;

	set_var_fx(PREV_RTT_US, rtt);
	set_var_fx(RTT_DIFF_US, diff);
	set_var_uint(NEG_COUNT, neg);
	if (pcm_fx_lt(rtt, pcm_algo_fx(T_LOW_US)))
		return pcm_fx_add(rate, pcm_algo_fx(DELTA));
	if (pcm_fx_gt(rtt, pcm_algo_fx(T_HIGH_US))) {
		pcm_fx excess = pcm_fx_sub(PCM_FX_ONE, pcm_fx_div(pcm_algo_fx(T_HIGH_US), rtt));

		return pcm_fx_mul(rate,
				  pcm_fx_sub(PCM_FX_ONE, pcm_fx_mul(pcm_algo_fx(BETA), excess)));
	}
	if (pcm_fx_le(gradient, PCM_FX_ZERO))
		return pcm_fx_add(rate, pcm_fx_mul_int(pcm_algo_fx(DELTA),
						       neg >= HAI_THRESHOLD ? HAI_FACTOR : 1));
	return pcm_fx_mul(rate, pcm_fx_sub(PCM_FX_ONE, pcm_fx_mul(pcm_algo_fx(BETA), gradient)));
}

int algorithm_main()
{
	pcm_uint now = get_signal(NOW);
	pcm_uint rtt = get_signal(RTT_SAMPLE);
	pcm_fx rate;

	if (!get_var_uint(INITIALIZED)) {
		set_var_fx(RATE_FRAC, pcm_algo_fx(INIT_RATE));
		set_var_uint(INITIALIZED, 1);
	}
	rate = get_var_fx(RATE_FRAC);
	if (!rtt || !update_due(ALGO_CTX_PASS, rate, now))
		return PCM_SUCCESS;

	rate = pcm_algo_clamp(next_rate(ALGO_CTX_PASS, rate, pcm_algo_ps_to_us(rtt)),
			      pcm_algo_fx(RATE_MIN), PCM_FX_ONE);
	set_var_uint(T_LAST_UPDATE, now);
	set_var_uint(UPDATED, 1);
	set_var_fx(RATE_FRAC, rate);
	set_control(RATE, pcm_algo_rate_from_frac(rate));
	return PCM_SUCCESS;
}
