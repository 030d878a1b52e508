// SPDX-License-Identifier: MIT
/*
 * ecmp_static.c - one entropy value per flow (static ECMP).
 *
 * Equal-cost multi-path forwarding by flow hash: Hopps, "Analysis of an
 * Equal-Cost Multi-Path Algorithm", RFC 2992 (2000). The switches hash the
 * entropy, so a constant entropy pins the flow to one path.
 *
 * On the flow's first packet: EV = rand() & EV_MASK, from a per-flow
 * xorshift64 that folds in NOW (ps) and FLOW_SEED, so flows that start
 * together still get different entropies; every later packet reuses it.
 *
 * In the emulation: one entropy per flow, so no reordering of first
 * transmissions; flows that hash onto one path share it.
 *
 * Tunables: EV_MASK (entropy width).
 */
#include "ecmp_static.h"
#include "pcm_algo.h"
#include "pcmh.h"

int algorithm_main()
{
	if (!(get_signal_trigger_mask() & TX_READY))
		return PCM_SUCCESS;
	if (!get_var_uint(CHOSEN)) {
		pcm_algo_rng_mix(&get_var_uint(RNG), get_signal(NOW) ^ get_signal(FLOW_SEED));
		set_control(EV, (pcm_algo_xorshift64(&get_var_uint(RNG)) >> 32) & EV_MASK);
		set_var_uint(CHOSEN, 1);
	}
	update_signal(TX_READY, -1);
	return PCM_SUCCESS;
}
