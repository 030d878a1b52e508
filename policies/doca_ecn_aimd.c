// SPDX-License-Identifier: MIT
/*
 * doca_ecn_aimd.c - the DOCA PCC tutorial's reaction-point controller.
 *
 * NVIDIA DOCA PCC tutorial (SIGCOMM 2026 BlueField tutorial, part 2), on
 * top of DCQCN-style reaction points (Zhu et al., SIGCOMM 2015).
 *
 * Rate r is a fraction of line rate with PCM_RATE_ONE = 1 << 20 = 100%:
 *   per CNP:                 r = max(r * 0.90, RATE_MIN)   (16-bit fixed-point factor)
 *   per 1000th TX event of the port:
 *                            r = min(r + AI / 4, RATE_MAX), AI = 5% of line rate
 * Coalesced CNPs are applied one by one, so a call that carries n CNPs cuts
 * n times. Integer arithmetic only, as on the DPA.
 *
 * TX events are coalesced, as the tutorial's NIC does them ("one event
 * stands for many packets"): the emulated NIC sends one per burst of
 * TxEventBurst packets (16, pcm-sim(1)), its value the packets it stands for.
 * The handler counts events, one per call that carries one, not packets.
 * As the tutorial's handler, it keeps one counter for all the flows of its
 * port ("a global counter (that persists across calls)"; "one controller
 * governs all the flows on its port"): TX_SINCE_INCREASE is an instance
 * variable (`scope: instance`, pcm-handler(7)), one per NIC port in the
 * emulation, one per engine (its binding of the package) in the CPU
 * transport. Every TX_EVENTS_PER_INCREASE = 1000th TX event of the port,
 * whichever flow it belongs to, raises the rate of the flow whose event it
 * is by AI / 4. At
 * 16 packets per event that is +1.25% per 16,000 packets (about 67 MB) the
 * port sends, so a flow of a few MB alone on its port never increases; two
 * flows on one port share the count and rise at their combined pace.
 * Deviation of the emulation, not of the rule: a rate policy drives no
 * window, so it runs under the scenario's fixed window (InitialCwnd,
 * pcm-sim(1)) and starts at INIT_RATE, line rate (a profile may start
 * lower); docs/policies.md.
 *
 * In the emulation: each CNP (at most one per CnpInterval per group, from the
 * receiver) cuts the rate by 10% while the queue marks; once the marks stop
 * the rate climbs back, 1.25% per 1000 TX events of the port. The first RTTs
 * start at line rate with an InitialCwnd window and trim until the CNPs, 10%
 * each, have cut the rates to the fair share (20 CNPs, about 1 ms, at 8:1).
 */
#include "doca_ecn_aimd.h"
#include "pcm_minmax.h"
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
	/* the NIC feeds coalesced TX events one by one: a call that carries one counts one */
	rate = raise_rate(ALGO_CTX_PASS, rate, (get_signal_trigger_mask() & NUM_TX) ? 1 : 0);
	set_control(RATE, rate);
	return PCM_SUCCESS;
}
