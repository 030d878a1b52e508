// SPDX-License-Identifier: MIT
/*
 * uec_dctcp.c - Ultra Ethernet's DCTCP variant.
 *
 * Ultra Ethernet Consortium, UE Specification 1.0 (2025), congestion
 * management, and its reference simulator (uet-htsim); derived from
 * Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010.
 *
 * DCTCP's per-window alpha is dropped: every ACK acts at once. Windows in
 * packets, per event with `acked` and `marked` packets (marked bytes are
 * min(bytes, ecn_acks * MSS)):
 *   cwnd += AI * (acked - marked) / cwnd          (+AI packets per RTT unmarked)
 *   cwnd -= marked / MARK_DIVISOR                 (a third of each marked packet)
 *   NACK: cwnd -= nacked                          (each trimmed packet's bytes;
 *                                                  one packet per NACK if unreported)
 *   RTO:  cwnd -= one packet per timeout
 *   cwnd is clamped to [FABRIC_MIN_CWND, FABRIC_MAX_CWND] / MSS (the floor is one MTU).
 * The first window is 1.5 BDP, as in uet-htsim and the PCM SDK.
 * Summed over a window with marked fraction p the decrease is p * cwnd / 3
 * against DCTCP's alpha / 2: harsher, but with no per-window smoothing to lag.
 *
 * In the emulation: with step marking at K the bottleneck queue hovers
 * around K, as under dctcp.
 *
 * A call reacts to the most severe kind of event it carries: RTO, then NACK,
 * then ACK; per-event datapaths never mix them.
 *
 * Tunables: AI_PKTS (packets per RTT), MARK_DIVISOR (dimensionless).
 */
#include "uec_dctcp.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE pcm_fx on_ack(ALGO_CTX_ARGS, pcm_fx cwnd)
{
	pcm_uint acked = get_signal(ACKED_BYTES);
	pcm_uint marked = pcm_algo_marked_bytes(acked, get_signal(NUM_ECN), MSS_BYTES);

	cwnd = pcm_algo_ai_step_unmarked(cwnd, AI_PKTS, acked, marked, MSS_BYTES);
	if (marked)
		cwnd = pcm_fx_sub(cwnd, pcm_fx_div(pcm_algo_bytes_to_pkts(marked, MSS_BYTES),
						   pcm_algo_fx(MARK_DIVISOR)));
	return cwnd;
}

static PCM_FORCE_INLINE pcm_fx on_nack(ALGO_CTX_ARGS, pcm_fx cwnd)
{
	pcm_uint nacked = get_signal(NACKED_BYTES);

	if (!nacked)
		nacked = get_signal(NUM_NACK) * MSS_BYTES;
	return pcm_fx_sub(cwnd, pcm_algo_bytes_to_pkts(nacked, MSS_BYTES));
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();
	pcm_fx cwnd = PCM_ALGO_WINDOW_LOAD(INITIALIZED, CWND_PKTS, INIT_CWND_PKTS);

	if (mask & NUM_RTO)
		cwnd = pcm_fx_sub(cwnd, pcm_fx_from_uint(get_signal(NUM_RTO)));
	else if (mask & NUM_NACK)
		cwnd = on_nack(ALGO_CTX_PASS, cwnd);
	else
		cwnd = on_ack(ALGO_CTX_PASS, cwnd);

	PCM_ALGO_WINDOW_STORE(CWND_PKTS, CWND_BYTES, cwnd, MIN_CWND_PKTS, MAX_CWND_PKTS, PKT_BYTES);
	return PCM_SUCCESS;
}
