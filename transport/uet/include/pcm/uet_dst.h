/* SPDX-License-Identifier: MIT */
/*
 * uet_dst.h - randomized scenario testing of the UET emulation (deterministic
 * simulation testing): a generator that draws a whole scenario from a seed, a
 * checker that runs it and checks every invariant, and a shrinker that
 * reduces a failing scenario to a small one that still fails.
 *
 * The invariants of a run:
 *   - every message completes exactly once, with its byte count delivered
 *     once, by the scenario's stop time (the generator sets it to a bound
 *     after the last fault ends and the last message is posted);
 *   - afterwards nothing is left: no PDC, group, pool reservation, byte in
 *     flight, timer, queued or allocated packet (uet_sim_audit());
 *   - the PSN and SACK invariants of the checking mode hold throughout;
 *   - the same scenario and seed give byte-identical records and the same
 *     packets (two runs compared).
 */
#ifndef PCM_UET_DST_H
#define PCM_UET_DST_H

#include <stdbool.h>
#include <stdint.h>

#include "uet.h"

/* A package the generator may pick, by name, with the controls it drives. */
struct uet_dst_policy {
	const char *name;
	uint32_t controls; /* bit per pcm_control_t */
};

/**
 * uet_dst_policies() - the generator's choices from a table of packages.
 * @pkgs: a NULL-terminated table (the built-in policies).
 * @out: one entry per package, in table order.
 * @max: room in @out.
 *
 * Return: the number of entries.
 */
uint32_t uet_dst_policies(const struct pcm_package *const *pkgs, struct uet_dst_policy *out,
			  uint32_t max);

/**
 * uet_dst_generate() - draw a scenario from @seed: a topology (incast,
 * leaf-spine or fat tree of up to 16 hosts), NIC attributes (window, MSS,
 * prefetch, ACK-request cadence, timeout mode, pools, PDC groups, trimming),
 * policies from @pols (a default, per-destination rules, an LB package
 * beside them, sync or async with a random delay), messages of 0 B to 16 MB
 * in incast, permutation, all-to-all and random patterns with several
 * messages per peer and random start times, and faults (link failures and
 * recoveries on senders', receivers' and fabric links, outages longer than
 * many timeouts, lossy links).
 * @seed: the seed; the scenario's own seed is derived from it.
 * @pols: the packages to draw from (NULL: "none" only).
 * @n_pols: their number.
 * @out: the scenario (free with uet_scenario_free()).
 *
 * Return: 0, -ENOMEM.
 */
int uet_dst_generate(uint64_t seed, const struct uet_dst_policy *pols, uint32_t n_pols,
		     struct uet_scenario **out);

/* What a check found. */
struct uet_dst_result {
	char what[640];        /* the first invariant that failed, or "" */
	uint32_t msgs, hosts;
	uint64_t sim_time_ps, events, data_packets, retransmits, timeouts;
};

/**
 * uet_dst_check() - run @scn twice with @pkgs (one per scenario policy) and
 * check every invariant (see above).
 * @scn: the scenario; its seed and stop time are used.
 * @pkgs: its packages (NULL entries: a fixed window).
 * @twice: also run it a second time, prefetching in stages
 *	(uet_sim_set_prefetch(), off in the first run of a small fabric), and
 *	compare: the same seed gives the same run, prefetched or not.
 * @res: what happened.
 *
 * Return: 0 if every invariant held, -EFAULT if one failed (res->what says
 * which), another -errno if the scenario could not run (res->what too).
 */
int uet_dst_check(const struct uet_scenario *scn, const struct pcm_package *const *pkgs,
		  bool twice, struct uet_dst_result *res);

/**
 * uet_dst_shrink() - reduce a scenario that fails uet_dst_check(): fewer
 * faults, messages, rules and hosts, smaller messages, NIC attributes back to
 * their defaults, no LB, synchronous shells; each step is kept only if the
 * scenario still fails.
 * @scn: the failing scenario, replaced by the reduced one.
 * @pkgs: its packages (the reduction keeps the scenario's policy list).
 * @max_checks: how many checks the reduction may run.
 * @res: the last failure of the reduced scenario.
 *
 * Return: the number of reductions kept (>= 0), or -ENOMEM.
 */
int uet_dst_shrink(struct uet_scenario **scn, const struct pcm_package *const *pkgs,
		   unsigned max_checks, struct uet_dst_result *res);

#endif /* PCM_UET_DST_H */
