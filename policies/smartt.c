// SPDX-License-Identifier: MIT
/*
 * smartt.c - SMaRTT, ECN and delay quadrants on every ACK.
 *
 * Bonato et al., "SMaRTT-REPS: Sender-based Marked Rapidly-adapting Trimmed
 * & Timed Transport with Recycled Entropies", arXiv:2404.01630, 2024, in the
 * per-ACK forms of the authors' simulator (spcl/HTSIM uec.cpp, "delayB") and
 * of the PCM SDK's smartt.
 *
 * Windows in packets, delays in microseconds; per ACK of `acked` packets, of
 * which `marked` echo ECN, with rtt r and target t:
 *   no ECN, r <  t:  cwnd += (min(Y (t - r) / r / cwnd, 1) + X / cwnd) acked
 *   no ECN, r >= t:  cwnd += X / cwnd * acked                   (fair increase)
 *   ECN,    r >  t:  cwnd -= min(W (r - t) / r + Z cwnd / BDP, 1) * marked
 *   ECN,    r <= t:  cwnd -= Z cwnd / BDP * marked              (fair decrease)
 * Summed over a window these are additive per RTT, X + Y (t - r) / r
 * packets up and up to a packet per marked packet down, with the
 * window-proportional Z cwnd / BDP term making larger windows give back
 * more: that is what makes competing windows converge.
 *   fast increase: once more than a window of bytes was acked in a row at
 *       r <= base + 5 packet times, unmarked, cwnd += FI_GAIN * acked per
 *       ACK until the next ACK that is not (marked or slower)
 *   quick adapt: a NACK asks for it; at the end of the current
 *       one-base-RTT measurement period, and at most once per 3 base RTTs,
 *       cwnd = max(bytes acked in the last full period, 1 packet); the bytes
 *       then in flight form an ignore window: until as many have been acked,
 *       their marks are stale (ignored), NACKs neither ask for quick adapt
 *       nor shrink the window, and fast increase waits
 *   NACK outside the ignore window, unless quick adapt ran:
 *       cwnd -= one packet per NACK
 *   timeout: cwnd = one packet, as the authors' code resets it (a timeout
 *       means the window's feedback stopped, not one lost packet)
 *   cwnd is clamped to [FABRIC_MIN_CWND, FABRIC_MAX_CWND] / PKT_BYTES.
 * The gains are the authors' simulator defaults (X 0.15, Y 1, W 1, Z 1).
 * The PCM SDK's smartt uses X 2, Y 2.5, W 0.8, Z 2 (the authors' README
 * runs an 800 Gbit/s incast with X 2, Y 2.5, W 2, Z 0.8): on this fabric
 * those hold the windows' Jain at 0.99 at 8:1 but let it fall to 0.87 at
 * 32:1, with 4,607 retransmissions instead of 1,248.
 *
 * Deviations from the authors' code: the measurement period rolls on every
 * ACK, also inside the ignore window (there it stops rolling, so the first
 * period after it counts the whole window); no pacing after quick adapt;
 * the ignore window and the counts are in bytes, not packets.
 *
 * In the emulation: in an N:1 incast the windows are fair over time (Jain of
 * the windows >= 0.98 at every sample); quick adapt ends the first trims
 * within a few RTTs.
 *
 * A call reacts to the most severe kind of event it carries: RTO, then NACK,
 * then ACK; per-event datapaths never mix them.
 *
 * Tunables: X_GAIN, Y_GAIN (packets per window of ACKs), W_GAIN, Z_GAIN
 * (packets per marked packet), FI_GAIN (packets per packet), FI_SLACK_US
 * (us), QA_PERIOD_PS, QA_SPACING_PS (ps), LOSS_DECREASE_PKTS (packets).
 */
#include "smartt.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE bool ignoring(ALGO_CTX_ARGS)
{
	return get_var_uint(RECEIVED_BYTES) < get_var_uint(IGNORE_BYTES);
}

/*
 * Roll the measurement period if it is over and, when a loss asked for it,
 * quick adapt at its end. Return: whether the window was adapted.
 */
static PCM_FORCE_INLINE bool quick_adapt(ALGO_CTX_ARGS, pcm_fx *cwnd, pcm_uint now)
{
	bool first = get_var_uint(PERIOD_END) == 0;
	pcm_uint saved;

	if (now < get_var_uint(PERIOD_END))
		return false;
	saved = get_var_uint(PERIOD_ACKED);
	set_var_uint(SAVED_ACKED, saved);
	set_var_uint(PERIOD_ACKED, 0);
	set_var_uint(PERIOD_END, now + QA_PERIOD_PS);
	if (first || !get_var_uint(NEED_QA) || ignoring(ALGO_CTX_PASS) ||
	    now <= get_var_uint(NEXT_QA))
		return false;
	set_var_uint(NEXT_QA, now + QA_SPACING_PS);
	*cwnd = pcm_fx_max(pcm_algo_bytes_to_pkts(saved, MSS_BYTES), PCM_FX_ONE);
	set_var_uint(IGNORE_BYTES, get_signal(INFLIGHT_BYTES) / PKT_BYTES * MSS_BYTES);
	set_var_uint(RECEIVED_BYTES, 0);
	set_var_uint(NEED_QA, 0);
	set_var_uint(GOOD_BYTES, 0);
	set_var_uint(FAST_ACTIVE, 0);
	return true;
}

/* Fast increase: a window of bytes acked in a row near the base RTT, unmarked. */
static PCM_FORCE_INLINE bool fast_increase(ALGO_CTX_ARGS, pcm_fx *cwnd, pcm_fx rtt, bool marked,
					   pcm_uint acked_bytes)
{
	pcm_uint good;

	if (marked || pcm_fx_gt(rtt, pcm_fx_add(pcm_algo_fx(BASE_US), pcm_algo_fx(FI_SLACK_US)))) {
		set_var_uint(GOOD_BYTES, 0);
		set_var_uint(GOOD_TARGET_BYTES, pcm_algo_pkts_to_bytes(*cwnd, MSS_BYTES));
		set_var_uint(FAST_ACTIVE, 0);
		return false;
	}
	good = get_var_uint(GOOD_BYTES) + acked_bytes;
	set_var_uint(GOOD_BYTES, good);
	if (ignoring(ALGO_CTX_PASS) ||
	    (!get_var_uint(FAST_ACTIVE) && good <= get_var_uint(GOOD_TARGET_BYTES)))
		return false;
	set_var_uint(FAST_ACTIVE, 1);
	*cwnd = pcm_fx_add(*cwnd, pcm_fx_mul(pcm_algo_fx(FI_GAIN),
					     pcm_algo_bytes_to_pkts(acked_bytes, MSS_BYTES)));
	return true;
}

/* The four quadrants, per ACK. */
static PCM_FORCE_INLINE pcm_fx quadrants(pcm_fx cwnd, pcm_fx rtt, pcm_fx acked, pcm_fx marked)
{
	pcm_fx target = pcm_algo_fx(TARGET_US);
	pcm_fx fair = pcm_fx_div(pcm_algo_fx(X_GAIN), cwnd);
	pcm_fx share = pcm_fx_mul(pcm_algo_fx(Z_GAIN), pcm_fx_div(cwnd, pcm_algo_fx(BDP_PKTS)));

	if (pcm_fx_gt(marked, PCM_FX_ZERO)) {
		pcm_fx step = share;

		if (pcm_fx_gt(rtt, target)) {
			pcm_fx excess = pcm_fx_div(pcm_fx_sub(rtt, target), rtt);

			step = pcm_fx_min(
			    pcm_fx_add(pcm_fx_mul(pcm_algo_fx(W_GAIN), excess), share), PCM_FX_ONE);
		}
		return pcm_fx_sub(cwnd, pcm_fx_mul(step, marked));
	}
	if (pcm_fx_lt(rtt, target)) {
		pcm_fx gap = pcm_fx_div(pcm_fx_sub(target, rtt), rtt);
		pcm_fx prop =
		    pcm_fx_min(pcm_fx_div(pcm_fx_mul(pcm_algo_fx(Y_GAIN), gap), cwnd), PCM_FX_ONE);

		return pcm_fx_add(cwnd, pcm_fx_mul(pcm_fx_add(prop, fair), acked));
	}
	return pcm_fx_add(cwnd, pcm_fx_mul(fair, acked));
}

static PCM_FORCE_INLINE pcm_fx on_ack(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	pcm_uint acked_bytes = get_signal(ACKED_BYTES);
	pcm_uint marked_bytes = pcm_algo_marked_bytes(acked_bytes, get_signal(NUM_ECN), MSS_BYTES);
	pcm_fx rtt = pcm_algo_ps_to_us(get_signal(RTT_SAMPLE));

	set_var_uint(PERIOD_ACKED, get_var_uint(PERIOD_ACKED) + acked_bytes);
	set_var_uint(RECEIVED_BYTES, get_var_uint(RECEIVED_BYTES) + acked_bytes);
	if (quick_adapt(ALGO_CTX_PASS, &cwnd, now))
		return cwnd;
	if (ignoring(ALGO_CTX_PASS) && marked_bytes)
		return cwnd; /* a mark on what was in flight at quick adapt */
	if (!pcm_fx_gt(rtt, PCM_FX_ZERO))
		return cwnd;
	if (fast_increase(ALGO_CTX_PASS, &cwnd, rtt, marked_bytes != 0, acked_bytes))
		return cwnd;
	return quadrants(cwnd, rtt, pcm_algo_bytes_to_pkts(acked_bytes, MSS_BYTES),
			 pcm_algo_bytes_to_pkts(marked_bytes, MSS_BYTES));
}

static PCM_FORCE_INLINE pcm_fx on_loss(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now, pcm_uint losses)
{
	if (ignoring(ALGO_CTX_PASS))
		return cwnd;
	set_var_uint(NEED_QA, 1);
	if (quick_adapt(ALGO_CTX_PASS, &cwnd, now))
		return cwnd;
	return pcm_fx_sub(cwnd, pcm_fx_mul_int(pcm_algo_fx(LOSS_DECREASE_PKTS), (int64_t)losses));
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();
	pcm_uint now = get_signal(NOW);
	pcm_fx cwnd;

	if (!get_var_uint(INITIALIZED))
		set_var_uint(GOOD_TARGET_BYTES,
			     pcm_algo_pkts_to_bytes(pcm_algo_fx(INIT_CWND_PKTS), MSS_BYTES));
	cwnd = PCM_ALGO_WINDOW_LOAD(INITIALIZED, CWND_PKTS, INIT_CWND_PKTS);

	if (mask & NUM_RTO)
		cwnd = pcm_fx_from_uint(1);
	else if (mask & NUM_NACK)
		cwnd = on_loss(ALGO_CTX_PASS, cwnd, now, get_signal(NUM_NACK));
	else
		cwnd = on_ack(ALGO_CTX_PASS, cwnd, now);

	PCM_ALGO_WINDOW_STORE(CWND_PKTS, CWND_BYTES, cwnd, MIN_CWND_PKTS, MAX_CWND_PKTS, PKT_BYTES);
	return PCM_SUCCESS;
}
