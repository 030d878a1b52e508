// SPDX-License-Identifier: MIT
/*
 * swift.c - Swift, delay-based window congestion control.
 *
 * Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control
 * in the Datacenter", SIGCOMM 2020.
 *
 * Per call, with cwnd in packets and delays in microseconds:
 *   target = base + hops * h + clamp(alpha / sqrt(cwnd) + beta, 0, fs_range)
 *   delay < target:  cwnd += ai * acked / cwnd      (cwnd >= 1)
 *                    cwnd += ai * acked             (cwnd < 1)
 *   delay >= target: cwnd *= max(1 - beta_md * (delay - target) / delay, 1 - max_mdf)
 *                    at most once per RTT
 *   NACK:            cwnd *= 1 - max_mdf, at most once per RTT
 *   RTO:             after RTX_RESET_THRESHOLD in a row cwnd = min, else as NACK
 *   cwnd is clamped to [FABRIC_MIN_CWND, FABRIC_MAX_CWND] / MSS.
 * alpha and beta scale the target with 1/sqrt(cwnd) so that small windows
 * (many competing flows) tolerate more queueing (paper section 3.5).
 *
 * In the emulation: in an N:1 incast the RTT stays near the target of the
 * flow's current window (median within 10%).
 *
 * All arithmetic goes through pcm_fx so the same source builds in double,
 * Q42.22, Q32.32 and Q16.16 (pcmc --arith); bytes and picoseconds are
 * converted with pcm_algo.h's split conversions so Q16.16 never sees a value
 * beyond its +-32768 range.
 */
#include "swift.h"
#include "pcmh.h"
#include "pcm_algo.h"

static PCM_FORCE_INLINE pcm_fx target_delay_us(pcm_fx cwnd)
{
	pcm_fx fs =
	    pcm_fx_add(pcm_fx_div(pcm_algo_fx(FS_ALPHA), pcm_fx_sqrt(cwnd)), pcm_algo_fx(FS_BETA));
	pcm_fx hops = pcm_fx_mul_int(pcm_algo_fx(HOP_SCALE_US), FABRIC_HOP_COUNT);

	fs = pcm_fx_max(pcm_fx_min(fs, pcm_algo_fx(FS_RANGE_US)), PCM_FX_ZERO);
	return pcm_fx_add(pcm_fx_add(pcm_algo_fx(BASE_TARGET_US), hops), fs);
}

static PCM_FORCE_INLINE pcm_fx additive_increase(pcm_fx cwnd, pcm_uint acked_bytes)
{
	pcm_fx acked = pcm_algo_bytes_to_pkts(acked_bytes, MSS_BYTES);
	pcm_fx step = pcm_fx_mul(pcm_algo_fx(AI_PKTS), acked);

	if (pcm_fx_ge(cwnd, PCM_FX_ONE))
		step = pcm_fx_div(step, cwnd);
	return pcm_fx_add(cwnd, step);
}

static PCM_FORCE_INLINE pcm_fx delay_decrease(pcm_fx cwnd, pcm_fx delay, pcm_fx target)
{
	pcm_fx excess = pcm_fx_div(pcm_fx_sub(delay, target), delay);
	pcm_fx factor = pcm_fx_sub(PCM_FX_ONE, pcm_fx_mul(pcm_algo_fx(BETA), excess));

	factor = pcm_fx_max(factor, pcm_fx_sub(PCM_FX_ONE, pcm_algo_fx(MAX_MDF)));
	return pcm_fx_mul(cwnd, factor);
}

static PCM_FORCE_INLINE pcm_fx max_decrease(pcm_fx cwnd)
{
	return pcm_fx_mul(cwnd, pcm_fx_sub(PCM_FX_ONE, pcm_algo_fx(MAX_MDF)));
}

static PCM_FORCE_INLINE pcm_fx on_timeout(ALGO_CTX_ARGS, pcm_fx cwnd, bool can_decrease)
{
	pcm_uint retx = get_var_uint(RETX_COUNT) + get_signal(NUM_RTO);

	set_var_uint(RETX_COUNT, retx);
	if (retx >= RTX_RESET_THRESHOLD)
		return pcm_algo_fx(MIN_CWND_PKTS);
	return can_decrease ? max_decrease(cwnd) : cwnd;
}

static PCM_FORCE_INLINE pcm_fx on_nack(ALGO_CTX_ARGS, pcm_fx cwnd, bool can_decrease)
{
	set_var_uint(RETX_COUNT, 0);
	return can_decrease ? max_decrease(cwnd) : cwnd;
}

static PCM_FORCE_INLINE pcm_fx on_ack(ALGO_CTX_ARGS, pcm_fx cwnd, bool can_decrease)
{
	pcm_fx delay = pcm_algo_ps_to_us(get_signal(RTT_SAMPLE));
	pcm_fx target = target_delay_us(cwnd);

	set_var_uint(RETX_COUNT, 0);
	if (pcm_fx_lt(delay, target))
		return additive_increase(cwnd, get_signal(ACKED_BYTES));
	return can_decrease ? delay_decrease(cwnd, delay, target) : cwnd;
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();
	pcm_uint now = get_signal(NOW);
	pcm_fx cwnd, next;
	bool can_decrease;

	if (!get_var_uint(INITIALIZED)) {
		set_var_fx(CWND_PKTS, pcm_algo_bytes_to_pkts(get_control(CWND_BYTES), PKT_BYTES));
		set_var_uint(INITIALIZED, 1);
	}
	cwnd = get_var_fx(CWND_PKTS);
	can_decrease = now - get_var_uint(T_LAST_DECREASE) >= get_signal(RTT_SAMPLE);

	if (mask & NUM_RTO)
		next = on_timeout(ALGO_CTX_PASS, cwnd, can_decrease);
	else if (mask & NUM_NACK)
		next = on_nack(ALGO_CTX_PASS, cwnd, can_decrease);
	else
		next = on_ack(ALGO_CTX_PASS, cwnd, can_decrease);

	next = pcm_fx_max(pcm_fx_min(next, pcm_algo_fx(MAX_CWND_PKTS)), pcm_algo_fx(MIN_CWND_PKTS));
	if (pcm_fx_lt(next, cwnd))
		set_var_uint(T_LAST_DECREASE, now);
	set_var_fx(CWND_PKTS, next);
	set_control(CWND_BYTES, pcm_algo_pkts_to_bytes(next, PKT_BYTES));
	return PCM_SUCCESS;
}
