// SPDX-License-Identifier: MIT
/*
 * newreno.c - TCP NewReno's AIMD congestion window, per ACK.
 *
 * Allman, Paxson, Blanton, "TCP Congestion Control", RFC 5681 (2009);
 * Henderson et al., "The NewReno Modification to TCP's Fast Recovery
 * Algorithm", RFC 6582 (2012).
 *
 * With cwnd and ssthresh in packets and `acked` the packets an ACK covers:
 *   cwnd <  ssthresh:   cwnd += acked                       (slow start)
 *   cwnd >= ssthresh:   cwnd += AI * acked / cwnd           (+AI packets per RTT)
 *   NACK (loss):        ssthresh = max(BETA * flight, 2); cwnd = ssthresh,
 *                       at most once per RTT (one recovery episode per window)
 *   RTO:                ssthresh = max(BETA * flight, 2); cwnd = 1 (the loss window)
 *   cwnd is clamped to [FABRIC_MIN_CWND, FABRIC_MAX_CWND] / MSS.
 * flight is IN_FLIGHT in packets (RFC 5681's FlightSize; the window when the
 * datapath does not report it). Sequence numbers are not signals, so "once
 * per window of data" is "once per RTT sample since the last reduction". The first window is one BDP and
 * ssthresh starts at the maximum window, so slow start runs until the first
 * loss or the clamp.
 *
 * In the emulation: a sawtooth that fills the bottleneck buffer until trims,
 * then halves; every flow completes.
 *
 * Tunables: BETA (fraction), AI_PKTS, SSTHRESH_MIN_PKTS, LOSS_WINDOW_PKTS
 * (packets); windows in packets of PKT_BYTES; RTT_SAMPLE and NOW in ps. One call handles one kind
 * of event, in the order RTO, NACK, ACK.
 */
#include "newreno.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE bool may_decrease(ALGO_CTX_ARGS, pcm_uint now)
{
	return !get_var_uint(DECREASED) ||
	       now - get_var_uint(T_LAST_DECREASE) >= get_signal(RTT_SAMPLE);
}

static PCM_FORCE_INLINE pcm_fx on_loss(ALGO_CTX_ARGS, pcm_fx cwnd, pcm_uint now, bool timeout)
{
	pcm_uint inflight = get_signal(INFLIGHT_BYTES);
	pcm_fx flight = inflight ? pcm_algo_bytes_to_pkts(inflight, PKT_BYTES) : cwnd;
	pcm_fx ssthresh =
	    pcm_fx_max(pcm_fx_mul(flight, pcm_algo_fx(BETA)), pcm_algo_fx(SSTHRESH_MIN_PKTS));

	set_var_fx(SSTHRESH_PKTS, ssthresh);
	set_var_uint(T_LAST_DECREASE, now);
	set_var_uint(DECREASED, 1);
	return timeout ? pcm_algo_fx(LOSS_WINDOW_PKTS) : ssthresh;
}

static PCM_FORCE_INLINE pcm_fx on_ack(ALGO_CTX_ARGS, pcm_fx cwnd)
{
	pcm_fx acked = pcm_algo_bytes_to_pkts(get_signal(ACKED_BYTES), MSS_BYTES);

	if (pcm_algo_in_slow_start(cwnd, get_var_fx(SSTHRESH_PKTS)))
		return pcm_algo_slow_start(cwnd, acked);
	return pcm_algo_ai_step(cwnd, pcm_algo_fx(AI_PKTS), acked);
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();
	pcm_uint now = get_signal(NOW);
	pcm_fx cwnd = PCM_ALGO_WINDOW_LOAD_SS(INITIALIZED, CWND_PKTS, INIT_CWND_PKTS, SSTHRESH_PKTS,
					      MAX_CWND_PKTS);

	if (mask & NUM_RTO)
		cwnd = on_loss(ALGO_CTX_PASS, cwnd, now, true);
	else if (mask & NUM_NACK)
		cwnd = may_decrease(ALGO_CTX_PASS, now) ? on_loss(ALGO_CTX_PASS, cwnd, now, false)
							: cwnd;
	else
		cwnd = on_ack(ALGO_CTX_PASS, cwnd);

	PCM_ALGO_WINDOW_STORE(CWND_PKTS, CWND_BYTES, cwnd, MIN_CWND_PKTS, MAX_CWND_PKTS, PKT_BYTES);
	return PCM_SUCCESS;
}
