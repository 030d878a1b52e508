// SPDX-License-Identifier: MIT
/*
 * dctcp.c - DCTCP, the ECN-fraction window controller.
 *
 * Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; Bensley et al.,
 * RFC 8257 (2017).
 *
 * Windows in packets; a "window of data" is cwnd bytes acknowledged:
 *   per ACK:        acked += bytes, marked += min(bytes, ecn_acks * MSS)
 *                   marked ACK, no cut in the last RTT:
 *                       cwnd *= 1 - alpha / 2;  ssthresh = cwnd   (RFC 8257 3.3)
 *                   unmarked ACK, cwnd < ssthresh:   cwnd += acked_pkts   (slow start)
 *                   unmarked ACK, otherwise:         cwnd += AI * acked_pkts / cwnd
 *   window end:     F = marked / acked;  alpha = (1 - g) alpha + g F
 *                   (counters restart, the next window is the current cwnd)
 *   NACK, no cut in the last RTT:  ssthresh = max(LOSS_BETA * cwnd, 2); cwnd = ssthresh
 *   RTO:            ssthresh = max(LOSS_BETA * cwnd, 2) (once per RTT); cwnd = 1
 *                   packet; slow start back to ssthresh (RFC 8257 3.5, RFC 5681)
 *   cwnd is clamped to [FABRIC_MIN_CWND, FABRIC_MAX_CWND] / PKT_BYTES.
 * alpha starts at 1 (RFC 8257's conservative choice), so the first marks
 * halve the window; it then tracks the fraction of marked bytes, which is
 * what makes the steady queue sit at the switches' marking threshold.
 * ssthresh starts at the largest window: slow start until the first cut.
 *
 * "At most once per window of data" (RFC 8257) is kept as at most once per
 * RTT sample since the last cut: a window of ACKed bytes can last hundreds
 * of microseconds when most packets are trimmed (590 us at 32:1), during
 * which the sender would ignore every mark and trim. alpha's window stays
 * the window of data.
 *
 * In the emulation: with step marking at K (DCTCP's setting) the bottleneck
 * queue hovers around K (median within 0.5 K to 1.5 K) with the link busy;
 * cuts come at most once per RTT and, while marks keep arriving, again
 * within a few RTTs.
 *
 * Counting marked bytes as min(bytes, ecn_acks * MSS) is exact for per-ACK
 * events and a close bound for coalesced ones.
 * A call reacts to the most severe kind of event it carries: RTO, then NACK,
 * then ACK; per-event datapaths never mix them.
 *
 * Tunables: G (gain per window), AI_PKTS (packets per RTT), LOSS_BETA
 * (fraction), SSTHRESH_MIN_PKTS and LOSS_WINDOW_PKTS (packets).
 */
#include "dctcp.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE void start_window(ALGO_CTX_ARGS, pcm_fx cwnd)
{
	set_var_uint(WIN_ACKED, 0);
	set_var_uint(WIN_MARKED, 0);
	set_var_uint(WIN_END, pcm_algo_pkts_to_bytes(cwnd, MSS_BYTES));
}

/* At most one cut per RTT. */
static PCM_FORCE_INLINE bool may_cut(ALGO_CTX_ARGS, pcm_uint now)
{
	return !get_var_uint(CUT) || now - get_var_uint(T_LAST_CUT) >= get_signal(RTT_SAMPLE);
}

/* A cut to @cwnd at @now: ssthresh follows it (no slow start above it). */
static PCM_FORCE_INLINE pcm_fx cut_to(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	set_var_fx(SSTHRESH_PKTS, cwnd);
	set_var_uint(T_LAST_CUT, now);
	set_var_uint(CUT, 1);
	return cwnd;
}

static PCM_FORCE_INLINE pcm_fx loss_ssthresh(pcm_fx cwnd)
{
	return pcm_fx_max(pcm_fx_mul(cwnd, pcm_algo_fx(LOSS_BETA)), pcm_algo_fx(SSTHRESH_MIN_PKTS));
}

static PCM_FORCE_INLINE pcm_fx on_ack(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now)
{
	pcm_uint acked = get_signal(ACKED_BYTES);
	pcm_uint marked = pcm_algo_marked_bytes(acked, get_signal(NUM_ECN), MSS_BYTES);
	pcm_uint win_acked = get_var_uint(WIN_ACKED) + acked;
	pcm_uint win_marked = get_var_uint(WIN_MARKED) + marked;
	pcm_fx acked_pkts = pcm_algo_bytes_to_pkts(acked, MSS_BYTES);

	if (get_signal(NUM_ECN)) {
		if (may_cut(ALGO_CTX_PASS, now)) {
			pcm_fx half_alpha = pcm_fx_div(get_var_fx(ALPHA), pcm_fx_from_int(2));

			cwnd = cut_to(ALGO_CTX_PASS,
				      pcm_fx_mul(cwnd, pcm_fx_sub(PCM_FX_ONE, half_alpha)), now);
		}
	} else if (pcm_algo_in_slow_start(cwnd, get_var_fx(SSTHRESH_PKTS))) {
		cwnd = pcm_algo_slow_start(cwnd, acked_pkts);
	} else {
		cwnd = pcm_algo_ai_step(cwnd, pcm_algo_fx(AI_PKTS), acked_pkts);
	}
	if (win_acked >= get_var_uint(WIN_END)) {
		pcm_fx frac = pcm_fx_div(pcm_algo_bytes_to_pkts(win_marked, MSS_BYTES),
					 pcm_algo_bytes_to_pkts(win_acked, MSS_BYTES));

		set_var_fx(ALPHA, pcm_algo_ewma(get_var_fx(ALPHA), pcm_fx_min(frac, PCM_FX_ONE),
						pcm_algo_fx(G)));
		start_window(ALGO_CTX_PASS, cwnd);
	} else {
		set_var_uint(WIN_ACKED, win_acked);
		set_var_uint(WIN_MARKED, win_marked);
	}
	return cwnd;
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();
	pcm_uint now = get_signal(NOW);
	pcm_fx cwnd;

	if (!get_var_uint(INITIALIZED)) {
		set_var_fx(ALPHA, PCM_FX_ONE);
		start_window(ALGO_CTX_PASS, pcm_algo_fx(INIT_CWND_PKTS));
	}
	cwnd = PCM_ALGO_WINDOW_LOAD_SS(INITIALIZED, CWND_PKTS, INIT_CWND_PKTS, SSTHRESH_PKTS,
				       MAX_CWND_PKTS);

	if (mask & NUM_RTO) {
		if (may_cut(ALGO_CTX_PASS, now))
			cut_to(ALGO_CTX_PASS, loss_ssthresh(cwnd), now);
		cwnd = pcm_algo_fx(LOSS_WINDOW_PKTS);
		start_window(ALGO_CTX_PASS, cwnd);
	} else if (mask & NUM_NACK) {
		if (may_cut(ALGO_CTX_PASS, now))
			cwnd = cut_to(ALGO_CTX_PASS, loss_ssthresh(cwnd), now);
	} else {
		cwnd = on_ack(ALGO_CTX_PASS, cwnd, now);
	}

	PCM_ALGO_WINDOW_STORE(CWND_PKTS, CWND_BYTES, cwnd, MIN_CWND_PKTS, MAX_CWND_PKTS, PKT_BYTES);
	return PCM_SUCCESS;
}
