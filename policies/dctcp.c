// SPDX-License-Identifier: MIT
/*
 * dctcp.c - DCTCP, the ECN-fraction window controller.
 *
 * Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; RFC 8257.
 *
 * Windows in packets; a "window of data" is cwnd bytes acknowledged:
 *   per ACK:        acked += bytes, marked += min(bytes, ecn_acks * MSS)
 *                   first marked ACK of a window:  cwnd *= 1 - alpha / 2
 *                   unmarked ACK:                  cwnd += AI * acked_pkts / cwnd
 *   window end:     F = marked / acked;  alpha = (1 - g) alpha + g F
 *                   (counters restart, the next window is the current cwnd)
 *   NACK:           cwnd *= LOSS_BETA, at most once per window
 *   RTO:            cwnd = min; the window restarts
 *   cwnd is clamped to [FABRIC_MIN_CWND, FABRIC_MAX_CWND] / MSS.
 * alpha starts at 1 (RFC 8257's conservative choice), so the first marks
 * halve the window; it then tracks the fraction of marked bytes, which is
 * what makes the steady queue sit at the switches' marking threshold.
 *
 * In the emulation: with step marking at K (DCTCP's setting) the bottleneck
 * queue hovers around K (median within 0.5 K to 1.5 K) with the link busy.
 *
 * Counting marked bytes as min(bytes, ecn_acks * MSS) is exact for per-ACK
 * events and a close bound for coalesced ones.
 * A call reacts to the most severe kind of event it carries: RTO, then NACK,
 * then ACK; per-event datapaths never mix them.
 *
 * Tunables: G (gain per window), AI_PKTS (packets per RTT), LOSS_BETA (fraction).
 */
#include "dctcp.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE pcm_fx fx(double v)
{
	return pcm_fx_from_double(v);
}

static PCM_FORCE_INLINE void start_window(ALGO_CTX_ARGS, pcm_fx cwnd)
{
	set_var_uint(WIN_ACKED, 0);
	set_var_uint(WIN_MARKED, 0);
	set_var_uint(CUT_IN_WINDOW, 0);
	set_var_uint(WIN_END, pcm_algo_pkts_to_bytes(cwnd, MSS_BYTES));
}

static PCM_FORCE_INLINE pcm_fx on_ack(ALGO_CTX_ARGS, pcm_fx cwnd)
{
	pcm_uint acked = get_signal(ACKED_BYTES);
	pcm_uint marked = MIN(acked, get_signal(NUM_ECN) * MSS_BYTES);
	pcm_uint win_acked = get_var_uint(WIN_ACKED) + acked;
	pcm_uint win_marked = get_var_uint(WIN_MARKED) + marked;

	if (get_signal(NUM_ECN)) {
		if (!get_var_uint(CUT_IN_WINDOW)) {
			pcm_fx half_alpha = pcm_fx_div(get_var_fx(ALPHA), pcm_fx_from_int(2));

			cwnd = pcm_fx_mul(cwnd, pcm_fx_sub(PCM_FX_ONE, half_alpha));
			set_var_uint(CUT_IN_WINDOW, 1);
		}
	} else {
		cwnd =
		    pcm_algo_ai_step(cwnd, fx(AI_PKTS), pcm_algo_bytes_to_pkts(acked, MSS_BYTES));
	}

	if (win_acked >= get_var_uint(WIN_END)) {
		pcm_fx frac = pcm_fx_div(pcm_algo_bytes_to_pkts(win_marked, MSS_BYTES),
					 pcm_algo_bytes_to_pkts(win_acked, MSS_BYTES));

		set_var_fx(ALPHA,
			   pcm_algo_ewma(get_var_fx(ALPHA), pcm_fx_min(frac, PCM_FX_ONE), fx(G)));
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
	pcm_fx cwnd;

	if (!get_var_uint(INITIALIZED)) {
		set_var_fx(CWND_PKTS, fx(INIT_CWND_PKTS));
		set_var_fx(ALPHA, PCM_FX_ONE);
		start_window(ALGO_CTX_PASS, fx(INIT_CWND_PKTS));
		set_var_uint(INITIALIZED, 1);
	}
	cwnd = get_var_fx(CWND_PKTS);

	if (mask & NUM_RTO) {
		cwnd = fx(MIN_CWND_PKTS);
		start_window(ALGO_CTX_PASS, cwnd);
	} else if (mask & NUM_NACK) {
		if (!get_var_uint(CUT_IN_WINDOW)) {
			cwnd = pcm_fx_mul(cwnd, fx(LOSS_BETA));
			set_var_uint(CUT_IN_WINDOW, 1);
		}
	} else {
		cwnd = on_ack(ALGO_CTX_PASS, cwnd);
	}

	cwnd = pcm_algo_clamp(cwnd, fx(MIN_CWND_PKTS), fx(MAX_CWND_PKTS));
	set_var_fx(CWND_PKTS, cwnd);
	set_control(CWND_BYTES, pcm_algo_pkts_to_bytes(cwnd, PKT_BYTES));
	return PCM_SUCCESS;
}
