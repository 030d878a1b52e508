// SPDX-License-Identifier: MIT
/*
 * dcqcn.c - DCQCN's reaction point (the sender's rate controller).
 *
 * Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
 * SIGCOMM 2015.
 *
 * Rates RC (current) and RT (target) are fractions of line rate:
 *   per CNP:        RT = RC;  RC *= 1 - alpha / 2;  alpha = (1 - g) alpha + g;
 *                   the timer, the byte counter and both stage counts restart
 *   no CNP for K:   alpha = (1 - g) alpha                      (ALPHA_TIMER)
 *   increase event: the timer T expires (RATE_TIMER) or the byte counter B
 *                   does (TX_PKTS); T_COUNT or BC_COUNT += 1, then
 *       max(T_COUNT, BC_COUNT) <= F:   fast recovery     RC = (RT + RC) / 2
 *       min(T_COUNT, BC_COUNT) >  F:   hyper increase    RT += i R_HAI, i = min - F;
 *                                                        RC = (RT + RC) / 2
 *       otherwise:                     additive increase RT += R_AI; RC = (RT + RC) / 2
 *   RT and RC stay in [RATE_MIN, 1]; RATE = RC * PCM_RATE_ONE.
 *
 * The notification point is the receiver's NIC (transport/uet/nic/cnp.c): a
 * CNP at once for a marked packet when none went out for 50 us, then one at
 * the end of each 50 us interval in which marks arrived.
 *
 * In the emulation: in an 8:1 incast the flows converge to equal rates
 * (Jain 1.000 over 1 ms to the first completion) and, while marks arrive,
 * a flow's CNPs are 50 us apart. The ramp back up is slow with the paper's
 * constants, which stay the default: R_AI is 0.1% of line rate per 55 us
 * timer period and a 4 MB flow never fills the 10 MB byte counter, so after
 * the early cuts the flows sit at about 9% each (75% of the link) and
 * recover through fast recovery and the timer alone. At 100 Gbit/s the byte
 * counter's 10 MB make hyper increase start about 50 MB after a cut.
 * policies/profiles/dcqcn-htsim.yaml is the same package with htsim's steps
 * (R_AI 5%, R_HAI 10% of line rate).
 *
 * Deviation of the emulation, not of the rule: a rate policy drives no
 * window, so it runs under the scenario's fixed window (InitialCwnd,
 * pcm-sim(1)) and starts at INIT_RATE, line rate (a profile may start
 * lower); docs/policies.md.
 *
 * Timers are DELTA triggers on ELAPSED_TIME: each fires a period after it
 * last fired, and a CNP restarts both (PCM_SIG_REARM). TX_PKTS keeps the
 * packets below one byte-counter period by writing them back. A datapath calls
 * pcm_shell_tick() so timers expire without traffic.
 *
 * Tunables: G (dimensionless), ALPHA_PERIOD_PS and TIMER_PERIOD_PS (ps),
 * BC_PKTS (packets of FABRIC_LINK_MSS), F_STEPS (steps), R_AI, R_HAI and
 * RATE_MIN (fractions of line rate).
 */
#include "dcqcn.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE pcm_fx clamp_rate(pcm_fx r)
{
	return pcm_algo_clamp(r, pcm_algo_fx(RATE_MIN), PCM_FX_ONE);
}

static PCM_FORCE_INLINE void cut(ALGO_CTX_ARGS, pcm_uint cnps)
{
	pcm_fx rc = get_var_fx(RC), alpha = get_var_fx(ALPHA);

	for (pcm_uint i = 0; i < MIN(cnps, CNP_MAX_PER_CALL); i++) {
		set_var_fx(RT, rc);
		rc = pcm_fx_mul(rc, pcm_fx_sub(PCM_FX_ONE, pcm_fx_div(alpha, pcm_fx_from_int(2))));
		rc = clamp_rate(rc);
		alpha = pcm_algo_ewma(alpha, PCM_FX_ONE, pcm_algo_fx(G));
	}
	set_var_fx(RC, rc);
	set_var_fx(ALPHA, alpha);
	set_var_uint(T_COUNT, 0);
	set_var_uint(BC_COUNT, 0);
}

static PCM_FORCE_INLINE void increase(ALGO_CTX_ARGS)
{
	pcm_uint t = get_var_uint(T_COUNT), bc = get_var_uint(BC_COUNT);
	pcm_fx rt = get_var_fx(RT), rc = get_var_fx(RC);

	if (MIN(t, bc) > F_STEPS)
		rt = pcm_fx_add(
		    rt, pcm_fx_mul_int(pcm_algo_fx(R_HAI), (int64_t)(MIN(t, bc) - F_STEPS)));
	else if (MAX(t, bc) > F_STEPS)
		rt = pcm_fx_add(rt, pcm_algo_fx(R_AI));
	rt = clamp_rate(rt);
	rc = clamp_rate(pcm_fx_div(pcm_fx_add(rt, rc), pcm_fx_from_int(2)));
	set_var_fx(RT, rt);
	set_var_fx(RC, rc);
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();

	if (!get_var_uint(INITIALIZED)) {
		set_var_fx(RC, pcm_algo_fx(INIT_RATE));
		set_var_fx(RT, pcm_algo_fx(INIT_RATE));
		set_var_fx(ALPHA, PCM_FX_ONE);
		set_var_uint(INITIALIZED, 1);
	}

	if (mask & NUM_CNP) {
		/* The shell resets the counter; both timers restart from the CNP. */
		cut(ALGO_CTX_PASS, get_signal(NUM_CNP));
		set_signal(ALPHA_TIMER, PCM_SIG_REARM);
		set_signal(RATE_TIMER, PCM_SIG_REARM);
	} else {
		pcm_uint tx = get_signal(TX_PKTS);

		if (mask & ALPHA_TIMER)
			set_var_fx(ALPHA, pcm_fx_mul(get_var_fx(ALPHA),
						     pcm_fx_sub(PCM_FX_ONE, pcm_algo_fx(G))));
		if (mask & RATE_TIMER) {
			set_var_uint(T_COUNT, get_var_uint(T_COUNT) + 1);
			increase(ALGO_CTX_PASS);
		}
		for (; tx >= BC_PKTS; tx -= BC_PKTS) {
			set_var_uint(BC_COUNT, get_var_uint(BC_COUNT) + 1);
			increase(ALGO_CTX_PASS);
		}
		set_signal(TX_PKTS, tx);
	}
	set_control(RATE, pcm_algo_rate_from_frac(get_var_fx(RC)));
	return PCM_SUCCESS;
}
