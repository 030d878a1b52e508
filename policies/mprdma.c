// SPDX-License-Identifier: MIT
/*
 * mprdma.c - MP-RDMA's congestion window and packet distribution.
 *
 * Lu et al., "Multi-Path Transport for RDMA in Datacenters", NSDI 2018.
 *
 * One window covers all virtual paths (VPs, here entropy values). Per ACK
 * event with `acked` packets, `marked` of them ECN-marked:
 *   cwnd += AI * (acked - marked) / cwnd     (+1/cwnd per unmarked packet)
 *   cwnd -= MD * marked                      (-1/2 per marked packet)
 *   NACK: cwnd -= MD per NACK (a trim is a mark); RTO: cwnd = min
 *   cwnd is clamped to [FABRIC_MIN_CWND, FABRIC_MAX_CWND] / MSS.
 * Packet distribution is ACK-clocked: an unmarked ACK queues its own VP for
 * the next packet, a marked ACK or a NACK queues nothing (the paper: that VP
 * is not reused), and each packet (TX_READY) takes the oldest queued VP, or
 * a new random one when none is queued (the first window, and each packet
 * the window grows by or a marked ACK left unclocked, so a growing window
 * explores new paths). Congested paths thus lose their share within one RTT
 * while good ones keep theirs.
 *
 * In the emulation: traffic shifts off paths whose ACKs come back marked.
 *
 * A call reacts to the most severe kind of feedback it carries (RTO, then
 * NACK, then ACK) and then, if TX_READY fired, picks the packet's VP.
 *
 * Deviations (not modelled): the paper's out-of-order window (a packet
 * beyond snd_una + delta is not sent; the sender falls back to one path)
 * and its synchronise mechanism (probing paths that return no ACKs), which
 * need sequence numbers and per-path ACK timing, not signals.
 *
 * Tunables: AI_PKTS, MD_PKTS (packets); VPQ_LEN (VPs); EV_MASK (entropy
 * width). The generator is a per-flow xorshift64 that folds in NOW (ps) and
 * FLOW_SEED (flows that start together still draw apart).
 */
#include "mprdma.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE pcm_uint random_vp(ALGO_CTX_ARGS)
{
	pcm_algo_rng_mix(&get_var_uint(RNG), get_signal(NOW) ^ get_signal(FLOW_SEED));
	return (pcm_algo_xorshift64(&get_var_uint(RNG)) >> 32) & EV_MASK;
}

static PCM_FORCE_INLINE void queue_vp(ALGO_CTX_ARGS, pcm_uint vp)
{
	pcm_algo_evq_push(&get_arr_uint(VPQ, 0), VPQ_LEN, &get_var_uint(VPQ_HEAD),
			  &get_var_uint(VPQ_COUNT), vp);
}

static PCM_FORCE_INLINE pcm_fx on_ack(ALGO_CTX_ARGS, pcm_fx cwnd)
{
	pcm_uint acked = get_signal(ACKED_BYTES);
	pcm_uint marked = pcm_algo_marked_bytes(acked, get_signal(NUM_ECN), MSS_BYTES);

	cwnd = pcm_algo_ai_step_unmarked(cwnd, AI_PKTS, acked, marked, MSS_BYTES);
	if (marked)
		cwnd = pcm_fx_sub(cwnd, pcm_fx_mul(pcm_algo_fx(MD_PKTS),
						   pcm_algo_bytes_to_pkts(marked, MSS_BYTES)));
	if (!get_signal(NUM_ECN) && (get_signal_trigger_mask() & NUM_ACK))
		queue_vp(ALGO_CTX_PASS, get_signal(ACK_PATH) & EV_MASK);
	return cwnd;
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();
	pcm_fx cwnd = PCM_ALGO_WINDOW_LOAD(INITIALIZED, CWND_PKTS, INIT_CWND_PKTS);

	if (mask & NUM_RTO) {
		cwnd = pcm_algo_fx(MIN_CWND_PKTS);
	} else if (mask & NUM_NACK) {
		cwnd = pcm_fx_sub(
		    cwnd, pcm_fx_mul_int(pcm_algo_fx(MD_PKTS), (int64_t)get_signal(NUM_NACK)));
	} else if (mask & (NUM_ACK | NUM_ECN)) {
		cwnd = on_ack(ALGO_CTX_PASS, cwnd);
	}
	PCM_ALGO_WINDOW_STORE(CWND_PKTS, CWND_BYTES, cwnd, MIN_CWND_PKTS, MAX_CWND_PKTS, PKT_BYTES);

	if (mask & TX_READY) {
		pcm_uint vp;

		if (!pcm_algo_evq_pop(&get_arr_uint(VPQ, 0), VPQ_LEN, &get_var_uint(VPQ_HEAD),
				      &get_var_uint(VPQ_COUNT), &vp))
			vp = random_vp(ALGO_CTX_PASS);
		set_control(PATH, vp);
		update_signal(TX_READY, -1);
	}
	return PCM_SUCCESS;
}
