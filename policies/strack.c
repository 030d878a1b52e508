// SPDX-License-Identifier: MIT
/*
 * strack.c - STrack's adaptive packet spraying.
 *
 * Le et al., "STrack: A Reliable Multipath Transport for AI/ML Clusters",
 * arXiv, 2024: congestion-aware spraying that steers packets away from paths
 * whose entropies draw ECN marks or trims. Implemented here as a penalty
 * sprayer (the shape uet-htsim's bitmap load balancer also takes).
 *
 * Paths are N_PATHS entropies EV(p) = p | salt. Spraying walks them like OPS,
 * each round in a fresh random order (p = k XOR x_r). Feedback charges the
 * path an entropy names:
 *   ECN-marked ACK:  penalty[p] += ECN_PENALTY
 *   NACK (trim):     penalty[p] += NACK_PENALTY
 *   timeout:         penalty[p] += RTO_PENALTY   (p: the timed-out packet's
 *                                                 entropy, NACK_EV on uet)
 *   penalty[p] <= MAX_PENALTY
 * When a path's turn comes with penalty[p] > 0 it sits out, and the next
 * path is tried, at most N_PATHS times (if every path is penalised the last
 * one tried is used); only the first path skipped pays for it, penalty[p]
 * -= 1, as in uet-htsim and the PCM SDK. A penalised path thus misses turns
 * until its penalty has been paid off one skip at a time, and unpenalised
 * paths carry its share meanwhile.
 * Entropies whose upper bits are not this flow's salt are ignored.
 *
 * Deviation, deliberate: a NACK that a datapath flags as a trim on the last
 * hop (bit 16 of NACK_EV, see reps.c) is not charged, where htsim and the
 * SDK charge every NACK: the receiver's link, not the path, was congested,
 * and every path shares it.
 *
 * In the emulation: fewer packets on paths that mark or trim than ops sends.
 *
 * Tunables: N_PATHS (entropies, a power of two), ECN_PENALTY, NACK_PENALTY,
 * MAX_PENALTY (rounds), EV_MASK (entropy width). The generator is a per-flow
 * xorshift64 that folds in NOW (ps) and FLOW_SEED (flows that start
 * together still draw different salts).
 */
#include "strack.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE pcm_uint draw(ALGO_CTX_ARGS)
{
	pcm_algo_rng_mix(&get_var_uint(RNG), get_signal(NOW) ^ get_signal(FLOW_SEED));
	return pcm_algo_xorshift64(&get_var_uint(RNG)) >> 32;
}

static PCM_FORCE_INLINE void charge(ALGO_CTX_ARGS, pcm_uint ev, pcm_uint penalty)
{
	pcm_uint p = ev & (N_PATHS - 1);

	if (ev > EV_MASK || (ev & ~(N_PATHS - 1)) != get_var_uint(SALT))
		return;
	set_arr_uint(PENALTY, p, MIN(get_arr_uint(PENALTY, p) + penalty, MAX_PENALTY));
}

/* The next path of the spraying order; starts a new round after the last. */
static PCM_FORCE_INLINE pcm_uint next_in_order(ALGO_CTX_ARGS)
{
	pcm_uint index = get_var_uint(INDEX);
	pcm_uint p = (index ^ get_var_uint(ROUND_XOR)) & (N_PATHS - 1);

	if (++index == N_PATHS) {
		index = 0;
		set_var_uint(ROUND_XOR, draw(ALGO_CTX_PASS) & (N_PATHS - 1));
	}
	set_var_uint(INDEX, index);
	return p;
}

static PCM_FORCE_INLINE pcm_uint next_path(ALGO_CTX_ARGS)
{
	pcm_uint p = next_in_order(ALGO_CTX_PASS);

	if (!get_arr_uint(PENALTY, p))
		return p;
	/* only the first path skipped pays off a round */
	set_arr_uint(PENALTY, p, get_arr_uint(PENALTY, p) - 1);
	for (pcm_uint tries = 1; tries < N_PATHS; tries++) {
		p = next_in_order(ALGO_CTX_PASS);
		if (!get_arr_uint(PENALTY, p))
			return p;
	}
	return p; /* every path is penalised: the last one tried */
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();

	if (!get_var_uint(INITIALIZED)) {
		set_var_uint(SALT, draw(ALGO_CTX_PASS) & EV_MASK & ~(N_PATHS - 1));
		set_var_uint(ROUND_XOR, draw(ALGO_CTX_PASS) & (N_PATHS - 1));
		set_var_uint(INITIALIZED, 1);
	}
	if ((mask & (NUM_ACK | NUM_ECN)) && get_signal(NUM_ECN))
		charge(ALGO_CTX_PASS, get_signal(ACK_ENTROPY), ECN_PENALTY);
	if (mask & NUM_NACK)
		charge(ALGO_CTX_PASS, get_signal(NACK_ENTROPY), NACK_PENALTY);
	if (mask & NUM_RTO)
		charge(ALGO_CTX_PASS, get_signal(NACK_ENTROPY), RTO_PENALTY);
	if (mask & TX_READY) {
		set_control(EV, next_path(ALGO_CTX_PASS) | get_var_uint(SALT));
		update_signal(TX_READY, -1);
	}
	return PCM_SUCCESS;
}
