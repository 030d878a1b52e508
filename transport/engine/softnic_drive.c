// SPDX-License-Identifier: MIT
/*
 * softnic_drive.c - the driver of engines on a softnic world: one thread,
 * virtual time (softnic.h, xp_softnic_step()). Each step runs every engine
 * until it has no work at the current time, then advances the clock to the
 * earliest thing that can happen next: an emulation event, a held delivery,
 * an engine's timer.
 */
#include <errno.h>

#include "engine.h"
#include "softnic.h"

#define RUNS_PER_STEP 256 /* run_once() calls per engine per step, at most */

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int xp_softnic_step(struct xp_softnic_world *w, struct xp_engine *const *engines, uint32_t n,
		    uint64_t limit_ns)
{
	uint64_t now = xp_softnic_now_ns(w), next;
	bool worked = false;
	int rc;

	for (uint32_t i = 0; i < n; i++)
		for (uint32_t r = 0; r < RUNS_PER_STEP; r++) {
			if (!xp_engine_run_once(engines[i], now))
				break;
			worked = true;
		}
	/* the caller sees what the engines published (completions) before time moves */
	if (worked)
		return 0;
	next = xp_softnic_next_ns(w);
	for (uint32_t i = 0; i < n; i++) {
		/* work an engine could not finish in its runs (events left, commands): now */
		if (xp_softnic_dp_pending(xp_engine_dp(engines[i])) ||
		    xp_engine_has_input(engines[i]))
			next = now;
		next = min_u64(next, xp_engine_next_deadline(engines[i]));
	}
	if (next == UINT64_MAX && limit_ns == UINT64_MAX)
		return -EDEADLK;
	if (next > limit_ns) {
		rc = xp_softnic_run_until(w, limit_ns);
		return rc < 0 ? rc : -ETIMEDOUT;
	}
	return xp_softnic_run_until(w, next);
}
