// SPDX-License-Identifier: MIT
/*
 * smartt.c - SMaRTT, ECN and delay quadrants on every ACK.
 *
 * Bonato et al., "SMaRTT-REPS: Sender-based Marked Rapidly-adapting Trimmed
 * & Timed Transport with Recycled Entropies", arXiv, 2024.
 *
 * Windows in packets, delays in microseconds, `acked` packets per ACK:
 *   no ECN, rtt <  target:  MI  cwnd += X (target - rtt) / rtt * acked
 *                               (fast increase instead, cwnd += FI_GAIN * acked,
 *                               once a whole window was acked at rtt <= base +
 *                               FI_SLACK)
 *   no ECN, rtt >= target:  FI  cwnd += Y * acked / cwnd         (queue draining)
 *   ECN,    rtt <  target:  FD  cwnd -= W * marked               (queue building)
 *   ECN,    rtt >= target:  MD  cwnd *= max(1 - Z (rtt - target) / rtt, 1 - MAX_MDF),
 *                               at most once per RTT
 *   quick adapt (QA), at most once per QA period, on a NACK, an RTO or an
 *   rtt > QA_RTT_FACTOR * target:
 *                           cwnd = min(cwnd, packets acked in the last full QA
 *                                      period or the current one, if more)
 *   NACK within a period that already adapted: cwnd -= nacked packets.
 *   cwnd is clamped to [FABRIC_MIN_CWND, FABRIC_MAX_CWND] / MSS.
 * MI and FD make the window proportional to the distance from the target;
 * QA resets a window that an incast made far too large in one step, to what
 * the path delivered.
 *
 * In the emulation: RTTs held below FABRIC_TRTT (ECN marks, which start at a
 * shorter queue, hold it first); an N:1 incast settles within a few RTTs
 * through quick adapt, with no trims after the first five base RTTs.
 *
 * A call reacts to the most severe kind of event it carries: RTO, then NACK,
 * then ACK; per-event datapaths never mix them.
 *
 * Tunables: X_GAIN, Z_GAIN, MAX_MDF (dimensionless), Y_GAIN (packets per
 * RTT), W_GAIN (packets per marked packet), FI_GAIN (packets per packet),
 * FI_SLACK_US (us), QA_RTT_FACTOR (targets), QA_PERIOD_PS (ps).
 */
#include "smartt.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE pcm_fx fx(double v)
{
	return pcm_fx_from_double(v);
}

/* Roll the quick-adapt period and count this event's bytes into it. */
static PCM_FORCE_INLINE void account_achieved(ALGO_CTX_ARGS, pcm_uint now, pcm_uint acked)
{
	if (now - get_var_uint(QA_PERIOD_START) >= QA_PERIOD_PS) {
		set_var_uint(PREV_ACHIEVED_BYTES, get_var_uint(ACHIEVED_BYTES));
		set_var_uint(ACHIEVED_BYTES, 0);
		set_var_uint(QA_PERIOD_START, now);
	}
	set_var_uint(ACHIEVED_BYTES, get_var_uint(ACHIEVED_BYTES) + acked);
}

static PCM_FORCE_INLINE bool quick_adapt(ALGO_CTX_ARGS, pcm_fx *cwnd, pcm_uint now)
{
	pcm_uint achieved;

	if (get_var_uint(QA_DONE) && now - get_var_uint(T_LAST_QA) < QA_PERIOD_PS)
		return false;
	achieved = MAX(get_var_uint(PREV_ACHIEVED_BYTES), get_var_uint(ACHIEVED_BYTES));
	*cwnd = pcm_fx_min(*cwnd, pcm_algo_bytes_to_pkts(achieved, MSS_BYTES));
	set_var_uint(T_LAST_QA, now);
	set_var_uint(QA_DONE, 1);
	set_var_uint(FI_BYTES, 0);
	return true;
}

static PCM_FORCE_INLINE pcm_fx increase(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_fx rtt, pcm_fx acked,
					pcm_uint acked_bytes)
{
	pcm_fx target = fx(TARGET_US);

	if (pcm_fx_ge(rtt, target)) {
		set_var_uint(FI_BYTES, 0);
		return pcm_algo_ai_step(cwnd, fx(Y_GAIN), acked);
	}
	if (pcm_fx_le(rtt, pcm_fx_add(fx(BASE_US), fx(FI_SLACK_US)))) {
		pcm_uint fi = get_var_uint(FI_BYTES);

		if (fi >= pcm_algo_pkts_to_bytes(cwnd, MSS_BYTES))
			return pcm_fx_add(cwnd, pcm_fx_mul(fx(FI_GAIN), acked));
		set_var_uint(FI_BYTES, fi + acked_bytes);
	} else {
		set_var_uint(FI_BYTES, 0);
	}
	return pcm_fx_add(
	    cwnd,
	    pcm_fx_mul(pcm_fx_mul(fx(X_GAIN), pcm_fx_div(pcm_fx_sub(target, rtt), rtt)), acked));
}

static PCM_FORCE_INLINE pcm_fx decrease(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_fx rtt, pcm_fx marked,
					pcm_uint now)
{
	pcm_fx target = fx(TARGET_US);
	pcm_fx factor;

	set_var_uint(FI_BYTES, 0);
	if (pcm_fx_lt(rtt, target))
		return pcm_fx_sub(cwnd, pcm_fx_mul(fx(W_GAIN), marked));
	if (get_var_uint(MD_DONE) && now - get_var_uint(T_LAST_MD) < get_signal(RTT_SAMPLE))
		return cwnd;
	factor = pcm_fx_sub(PCM_FX_ONE,
			    pcm_fx_mul(fx(Z_GAIN), pcm_fx_div(pcm_fx_sub(rtt, target), rtt)));
	set_var_uint(T_LAST_MD, now);
	set_var_uint(MD_DONE, 1);
	return pcm_fx_mul(cwnd, pcm_fx_max(factor, pcm_fx_sub(PCM_FX_ONE, fx(MAX_MDF))));
}

static PCM_FORCE_INLINE pcm_fx on_ack(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	pcm_uint acked_bytes = get_signal(ACKED_BYTES);
	pcm_uint marked_bytes = MIN(acked_bytes, get_signal(NUM_ECN) * MSS_BYTES);
	pcm_fx rtt = pcm_algo_ps_to_us(get_signal(RTT_SAMPLE));

	account_achieved(ALGO_CTX_PASS, now, acked_bytes);
	if (!pcm_fx_gt(rtt, PCM_FX_ZERO))
		return cwnd;
	if (pcm_fx_gt(rtt, pcm_fx_mul(fx(QA_RTT_FACTOR), fx(TARGET_US))) &&
	    quick_adapt(ALGO_CTX_PASS, &cwnd, now))
		return cwnd;
	if (marked_bytes)
		return decrease(ALGO_CTX_PASS, cwnd, rtt,
				pcm_algo_bytes_to_pkts(marked_bytes, MSS_BYTES), now);
	return increase(ALGO_CTX_PASS, cwnd, rtt, pcm_algo_bytes_to_pkts(acked_bytes, MSS_BYTES),
			acked_bytes);
}

static PCM_FORCE_INLINE pcm_fx on_loss(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now, bool timeout)
{
	pcm_uint nacked = get_signal(NACKED_BYTES);

	if (quick_adapt(ALGO_CTX_PASS, &cwnd, now))
		return cwnd;
	if (timeout)
		return cwnd;
	if (!nacked)
		nacked = get_signal(NUM_NACK) * MSS_BYTES;
	return pcm_fx_sub(cwnd, pcm_algo_bytes_to_pkts(nacked, MSS_BYTES));
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();
	pcm_uint now = get_signal(NOW);
	pcm_fx cwnd;

	if (!get_var_uint(INITIALIZED)) {
		set_var_fx(CWND_PKTS, fx(INIT_CWND_PKTS));
		set_var_uint(QA_PERIOD_START, now);
		set_var_uint(INITIALIZED, 1);
	}
	cwnd = get_var_fx(CWND_PKTS);

	if (mask & NUM_RTO)
		cwnd = on_loss(ALGO_CTX_PASS, cwnd, now, true);
	else if (mask & NUM_NACK)
		cwnd = on_loss(ALGO_CTX_PASS, cwnd, now, false);
	else
		cwnd = on_ack(ALGO_CTX_PASS, cwnd, now);

	cwnd = pcm_algo_clamp(cwnd, fx(MIN_CWND_PKTS), fx(MAX_CWND_PKTS));
	set_var_fx(CWND_PKTS, cwnd);
	set_control(CWND_BYTES, pcm_algo_pkts_to_bytes(cwnd, PKT_BYTES));
	return PCM_SUCCESS;
}
