// SPDX-License-Identifier: MIT
/*
 * nscc.c - NSCC, Ultra Ethernet's network-signal congestion control.
 *
 * Ultra Ethernet Consortium, UE Specification 1.0 (2025), NSCC, as its
 * reference simulator uet-htsim implements it; it descends from SMaRTT
 * (Bonato et al., arXiv:2404.01630).
 *
 * Windows in packets, delays in microseconds; delay = rtt - base_rtt (the
 * smallest RTT seen), avg = EWMA(DELAY_GAIN) of delay (of base/4 when an
 * unmarked ACK sees delay > target: high delay without marks is not
 * congestion). Per ACK of `acked` packets, after quick adapt:
 *   no ECN, delay >= target:  fair increase          inc += FI * acked
 *   no ECN, delay <  target:  fast increase, when delay < FAST_DELAY_US has
 *                             held for a whole window: cwnd += FAST * acked;
 *                             else proportional      inc += PI * acked * (target - delay)
 *   ECN,    delay >= target:  multiplicative decrease, at most once per base RTT,
 *                             if avg > target:
 *                                 cwnd *= max(1 - GAMMA (avg - target) / avg, MD_FLOOR)
 *   ECN,    delay <  target:  nothing (a path effect: the load balancer moves on)
 *   every ADJUST_BYTES acked or ADJUST_PERIOD:  cwnd += inc / cwnd, inc = 0,
 *                             and cwnd += ETA once per ADJUST_PERIOD
 *   quick adapt, once per (base + target) period, if a NACK asked for it or
 *   delay > QA_THRESHOLD, and the period delivered fewer than QA_MAX_BYTES:
 *                             cwnd = max(achieved, min); marks on the bytes then in
 *                             flight are ignored; inc = 0
 *   NACK:  avg moves toward the network RTT; quick adapt is requested;
 *          unless it ran, cwnd -= nacked packets
 *   RTO:   cwnd -= one packet per timeout
 *   cwnd is clamped to [FABRIC_MIN_CWND, FABRIC_MAX_CWND] / MSS after each step.
 * The gains scale with the fabric: SCALE_A = BDP / (100 Gbit/s x 12 us) and
 * SCALE_B = target / 12 us, as the specification derives them.
 *
 * Deviation from uet-htsim: when a smaller base RTT is measured htsim
 * re-derives the BDP and the maximum window from it; here both stay the
 * fabric's (FABRIC_BDP, FABRIC_MAX_CWND), as in the PCM SDK's nscc (whose
 * BDP is a constant too), and so do the gains' scales. In
 * the 8:1 incast the smallest RTT measured is 13.39 us against FABRIC_BRTT's
 * 14.02 us, so htsim's re-derived BDP and maximum window would be 4.5%
 * smaller; on a fabric much shorter than its profile the window overshoots.
 *
 * In the emulation: in an N:1 incast the queueing delay is held near the
 * 0.75 RTT target (median within 25%).
 *
 * A call reacts to the most severe kind of event it carries: RTO, then NACK,
 * then ACK; per-event datapaths never mix them.
 *
 * Tunables: TARGET_US, FAST_DELAY_US, QA_THRESHOLD_US (us); PI_GAIN (1/us);
 * FI_GAIN (packets^2 per packet); FAST_GAIN (packets per packet); ETA_PKTS
 * (packets); GAMMA, MD_FLOOR, DELAY_GAIN (dimensionless); ADJUST_PERIOD_PS
 * (ps); ADJUST_BYTES, QA_MAX_BYTES (bytes).
 */
#include "nscc.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE pcm_fx clamp_cwnd(pcm_fx cwnd)
{
	return pcm_algo_clamp(cwnd, pcm_algo_fx(MIN_CWND_PKTS), pcm_algo_fx(MAX_CWND_PKTS));
}

static PCM_FORCE_INLINE bool quick_adapt(ALGO_CTX_ARGS, pcm_fx *cwnd, bool is_loss, bool marked,
					 pcm_fx delay, pcm_uint now)
{
	bool done = false;

	if (get_var_uint(BYTES_IGNORED) < get_var_uint(BYTES_TO_IGNORE) && marked) {
		done = true;
	} else if (now > get_var_uint(QA_END_PS)) {
		pcm_uint achieved = get_var_uint(ACHIEVED_BYTES);

		if (get_var_uint(QA_END_PS) &&
		    (get_var_uint(TRIGGER_QA) || is_loss ||
		     pcm_fx_gt(delay, pcm_algo_fx(QA_THRESHOLD_US))) &&
		    achieved < QA_MAX_BYTES) {
			*cwnd = pcm_fx_max(pcm_algo_bytes_to_pkts(achieved, MSS_BYTES),
					   pcm_algo_fx(MIN_CWND_PKTS));
			set_var_uint(BYTES_TO_IGNORE, get_signal(INFLIGHT_BYTES));
			set_var_uint(BYTES_IGNORED, 0);
			set_var_uint(TRIGGER_QA, 0);
			done = true;
		}
		set_var_uint(ACHIEVED_BYTES, 0);
		set_var_uint(QA_END_PS, now + get_var_uint(BASE_RTT_PS) + TARGET_PS);
	}
	if (done) {
		set_var_fx(INC, PCM_FX_ZERO);
		set_var_uint(RECEIVED_BYTES, 0);
	}
	return done;
}

/* Fast increase; returns whether it applied (then the proportional step is skipped). */
static PCM_FORCE_INLINE bool fast_increase(ALGO_CTX_ARGS, pcm_fx *cwnd, pcm_uint acked_bytes,
					   pcm_fx delay)
{
	if (pcm_fx_lt(delay, pcm_algo_fx(FAST_DELAY_US))) {
		pcm_uint count = get_var_uint(FI_COUNT_BYTES) + acked_bytes;

		set_var_uint(FI_COUNT_BYTES, count);
		if (count > pcm_algo_pkts_to_bytes(*cwnd, MSS_BYTES) || get_var_uint(FAST_MODE)) {
			*cwnd = pcm_fx_add(
			    *cwnd, pcm_fx_mul(pcm_algo_bytes_to_pkts(acked_bytes, MSS_BYTES),
					      pcm_algo_fx(FAST_GAIN)));
			set_var_uint(FAST_MODE, 1);
			return true;
		}
	} else {
		set_var_uint(FI_COUNT_BYTES, 0);
	}
	set_var_uint(FAST_MODE, 0);
	return false;
}

static PCM_FORCE_INLINE pcm_fx multiplicative_decrease(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	pcm_fx avg = get_var_fx(AVG_DELAY_US);
	pcm_fx factor;

	set_var_uint(FAST_MODE, 0);
	set_var_uint(FI_COUNT_BYTES, 0);
	if (!pcm_fx_gt(avg, pcm_algo_fx(TARGET_US)) ||
	    now - get_var_uint(LAST_DEC_PS) <= get_var_uint(BASE_RTT_PS))
		return cwnd;
	factor = pcm_fx_sub(
	    PCM_FX_ONE,
	    pcm_fx_div(pcm_fx_mul(pcm_algo_fx(GAMMA), pcm_fx_sub(avg, pcm_algo_fx(TARGET_US))),
		       avg));
	set_var_uint(LAST_DEC_PS, now);
	return pcm_fx_mul(cwnd, pcm_fx_max(factor, pcm_algo_fx(MD_FLOOR)));
}

static PCM_FORCE_INLINE pcm_fx fulfill_adjustment(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	cwnd = pcm_fx_add(cwnd, pcm_fx_div(get_var_fx(INC), cwnd));
	if (now - get_var_uint(LAST_ADJUST_PS) >= ADJUST_PERIOD_PS) {
		cwnd = pcm_fx_add(cwnd, pcm_algo_fx(ETA_PKTS));
		set_var_uint(LAST_ADJUST_PS, now);
	}
	set_var_fx(INC, PCM_FX_ZERO);
	set_var_uint(RECEIVED_BYTES, 0);
	return cwnd;
}

/* The queueing delay of this ACK, updating base RTT and the average on the way. */
static PCM_FORCE_INLINE pcm_fx measure_delay(ALGO_CTX_ARGS, bool marked)
{
	pcm_uint rtt = get_signal(RTT_SAMPLE);
	pcm_uint base = get_var_uint(BASE_RTT_PS);
	pcm_fx delay, sample;

	if (!rtt)
		return get_var_fx(AVG_DELAY_US);
	if (rtt < base) {
		base = rtt;
		set_var_uint(BASE_RTT_PS, base);
	}
	delay = pcm_algo_ps_to_us(rtt - base);
	sample = delay;
	if (!marked && pcm_fx_gt(delay, pcm_algo_fx(TARGET_US)))
		sample = pcm_fx_div(pcm_algo_ps_to_us(base), pcm_fx_from_int(4));
	set_var_fx(AVG_DELAY_US,
		   pcm_algo_ewma(get_var_fx(AVG_DELAY_US), sample, pcm_algo_fx(DELAY_GAIN)));
	return delay;
}

static PCM_FORCE_INLINE pcm_fx on_ack(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	pcm_uint acked = get_signal(ACKED_BYTES);
	bool marked = get_signal(NUM_ECN) != 0;
	pcm_fx delay, acked_pkts;

	set_var_uint(ACHIEVED_BYTES, get_var_uint(ACHIEVED_BYTES) + acked);
	set_var_uint(RECEIVED_BYTES, get_var_uint(RECEIVED_BYTES) + acked);
	set_var_uint(BYTES_IGNORED, get_var_uint(BYTES_IGNORED) + acked);
	delay = measure_delay(ALGO_CTX_PASS, marked);
	if (quick_adapt(ALGO_CTX_PASS, &cwnd, false, marked, delay, now))
		return clamp_cwnd(cwnd);

	acked_pkts = pcm_algo_bytes_to_pkts(acked, MSS_BYTES);
	if (!marked && pcm_fx_ge(delay, pcm_algo_fx(TARGET_US))) {
		set_var_fx(
		    INC, pcm_fx_add(get_var_fx(INC), pcm_fx_mul(pcm_algo_fx(FI_GAIN), acked_pkts)));
	} else if (!marked) {
		if (!fast_increase(ALGO_CTX_PASS, &cwnd, acked, delay)) {
			pcm_fx step = pcm_fx_mul(pcm_fx_mul(pcm_algo_fx(PI_GAIN), acked_pkts),
						 pcm_fx_sub(pcm_algo_fx(TARGET_US), delay));

			set_var_fx(INC, pcm_fx_add(get_var_fx(INC), step));
		}
	} else if (pcm_fx_ge(delay, pcm_algo_fx(TARGET_US))) {
		cwnd = multiplicative_decrease(ALGO_CTX_PASS, cwnd, now);
	}
	cwnd = clamp_cwnd(cwnd);
	if (get_var_uint(RECEIVED_BYTES) > ADJUST_BYTES ||
	    now - get_var_uint(LAST_ADJUST_PS) > ADJUST_PERIOD_PS)
		cwnd = clamp_cwnd(fulfill_adjustment(ALGO_CTX_PASS, cwnd, now));
	return cwnd;
}

static PCM_FORCE_INLINE pcm_fx on_nack(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	pcm_uint nacked = get_signal(NACKED_BYTES);

	if (!nacked)
		nacked = get_signal(NUM_NACK) * MSS_BYTES;
	set_var_uint(BYTES_IGNORED, get_var_uint(BYTES_IGNORED) + nacked);
	set_var_fx(AVG_DELAY_US,
		   pcm_algo_ewma(get_var_fx(AVG_DELAY_US), pcm_algo_ps_to_us(NET_RTT_PS),
				 pcm_algo_fx(DELAY_GAIN)));
	set_var_uint(TRIGGER_QA, 1);
	if (quick_adapt(ALGO_CTX_PASS, &cwnd, true, true, PCM_FX_ZERO, now))
		return clamp_cwnd(cwnd);
	return clamp_cwnd(pcm_fx_sub(cwnd, pcm_algo_bytes_to_pkts(nacked, MSS_BYTES)));
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();
	pcm_uint now = get_signal(NOW);
	pcm_fx cwnd;

	if (!get_var_uint(INITIALIZED))
		set_var_uint(LAST_ADJUST_PS, now);
	cwnd = PCM_ALGO_WINDOW_LOAD(INITIALIZED, CWND_PKTS, INIT_CWND_PKTS);

	if (mask & NUM_RTO)
		cwnd = clamp_cwnd(pcm_fx_sub(cwnd, pcm_fx_from_uint(get_signal(NUM_RTO))));
	else if (mask & NUM_NACK)
		cwnd = on_nack(ALGO_CTX_PASS, cwnd, now);
	else
		cwnd = on_ack(ALGO_CTX_PASS, cwnd, now);

	PCM_ALGO_WINDOW_STORE(CWND_PKTS, CWND_BYTES, cwnd, MIN_CWND_PKTS, MAX_CWND_PKTS, PKT_BYTES);
	return PCM_SUCCESS;
}
