// SPDX-License-Identifier: MIT
/*
 * ops.c - oblivious packet spraying.
 *
 * Per-packet spraying as evaluated by Dixit et al., "On the Impact of Packet
 * Spraying in Data Center Networks", INFOCOM 2013, and as the Ultra Ethernet
 * specification's oblivious mode (UE 1.0, 2025).
 *
 * Packet k of round r (k = 0..N_EVS-1) gets
 *   EV = ((k XOR x_r) & (N_EVS - 1)) | salt
 * where x_r is drawn afresh for each round and salt, the upper 16 - log2(N_EVS)
 * bits, once per flow. XOR with a constant permutes 0..N_EVS-1, so every
 * round uses every entropy exactly once: switches that hash the entropy see
 * an even spread with no feedback at all. The generator is a per-flow
 * xorshift64 that folds in NOW and FLOW_SEED, so flows that start at the
 * same instant still draw different salts and rounds.
 *
 * In the emulation (beside a CC package, `lb: ops`): an even spread over
 * all paths with no feedback; with a failed link, its share of packets
 * keeps timing out.
 *
 * Tunables: N_EVS (entropies, a power of two), EV_MASK (entropy width).
 */
#include "ops.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE pcm_uint draw(ALGO_CTX_ARGS)
{
	pcm_algo_rng_mix(&get_var_uint(RNG), get_signal(NOW) ^ get_signal(FLOW_SEED));
	return pcm_algo_xorshift64(&get_var_uint(RNG)) >> 32;
}

int algorithm_main()
{
	pcm_uint index;

	if (!(get_signal_trigger_mask() & TX_READY))
		return PCM_SUCCESS;
	if (!get_var_uint(INITIALIZED)) {
		set_var_uint(SALT, draw(ALGO_CTX_PASS) & EV_MASK & ~(N_EVS - 1));
		set_var_uint(ROUND_XOR, draw(ALGO_CTX_PASS) & (N_EVS - 1));
		set_var_uint(INITIALIZED, 1);
	}
	index = get_var_uint(INDEX);
	set_control(EV, ((index ^ get_var_uint(ROUND_XOR)) & (N_EVS - 1)) | get_var_uint(SALT));
	if (++index == N_EVS) {
		index = 0;
		set_var_uint(ROUND_XOR, draw(ALGO_CTX_PASS) & (N_EVS - 1));
	}
	set_var_uint(INDEX, index);
	update_signal(TX_READY, -1);
	return PCM_SUCCESS;
}
