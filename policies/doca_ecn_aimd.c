// SPDX-License-Identifier: MIT
/*
 * doca_ecn_aimd.c - the DOCA PCC tutorial's reaction-point controller.
 *
 * NVIDIA DOCA PCC tutorial (SIGCOMM 2026 BlueField tutorial, part 2), on
 * top of DCQCN-style reaction points (Zhu et al., SIGCOMM 2015).
 *
 * Rate r is a fraction of line rate with PCM_RATE_ONE = 1 << 20 = 100%:
 *   per CNP:               r = max(r * 0.90, RATE_MIN)   (16-bit fixed-point factor)
 *   per 1000th TX event:   r = min(r + AI / 4, RATE_MAX), AI = 5% of line rate
 * Coalesced events are applied one by one, in that order, so a call that
 * carries n CNPs cuts n times. Integer arithmetic only, as on the DPA.
 *
 * In the emulation: each CNP (at most one per CnpInterval per group) cuts the
 * rate by 10% while a competing flow marks the queue; once the marks stop the
 * rate climbs back to line rate, 1.25% per 1000 packets sent.
 */
#include "doca_ecn_aimd.h"
#include "pcmh.h"

static PCM_FORCE_INLINE pcm_uint cut_rate(pcm_uint rate, pcm_uint cnps)
{
	for (pcm_uint i = 0; i < cnps && rate > RATE_MIN; i++)
		rate = MAX(pcm_fxp16_mult((uint32_t)DEC_FACTOR_Q16, (uint32_t)rate), RATE_MIN);
	return rate;
}

static PCM_FORCE_INLINE pcm_uint raise_rate(ALGO_CTX_ARGS, pcm_uint rate, pcm_uint tx_events)
{
	pcm_uint pending = get_var_uint(TX_SINCE_INCREASE) + tx_events;

	while (pending >= TX_EVENTS_PER_INCREASE) {
		pending -= TX_EVENTS_PER_INCREASE;
		rate = MIN(rate + (AI_RATE >> 2), RATE_MAX);
	}
	set_var_uint(TX_SINCE_INCREASE, pending);
	return rate;
}

int algorithm_main()
{
	pcm_uint rate = get_control(RATE);

	rate = cut_rate(rate, get_signal(NUM_CNP));
	rate = raise_rate(ALGO_CTX_PASS, rate, get_signal(NUM_TX));
	set_control(RATE, rate);
	return PCM_SUCCESS;
}
