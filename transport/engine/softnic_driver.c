// SPDX-License-Identifier: MIT
/*
 * softnic_driver.c - the loop that interleaves softnic engines with the
 * emulation in virtual time (softnic_driver.h).
 */
#include <errno.h>

#include "softnic_driver.h"

uint32_t xp_softnic_run_round(struct xp_engine *const *e, uint32_t n, uint64_t now_ns)
{
	uint32_t work = 0;

	for (uint32_t i = 0; i < n; i++)
		work += xp_engine_run_once(e[i], now_ns);
	return work;
}

uint64_t xp_softnic_next_instant(struct xp_softnic_world *w, struct xp_engine *const *e,
				 uint32_t n)
{
	uint64_t t = xp_softnic_next_event_ns(w);

	for (uint32_t i = 0; i < n; i++) {
		uint64_t d = xp_engine_next_deadline(e[i]);

		if (d < t)
			t = d;
	}
	return t;
}

int xp_softnic_drive(struct xp_softnic_world *w, struct xp_engine *const *e, uint32_t n,
		     uint64_t until_ns, bool (*done)(void *ctx), void *ctx)
{
	uint32_t rounds = 0;

	for (;;) {
		uint64_t now = xp_softnic_now_ns(w), next;
		uint32_t work = xp_softnic_run_round(e, n, now);
		int rc;

		if (done && done(ctx))
			return 0;
		if (work && ++rounds < XP_SOFTNIC_SAME_INSTANT_ROUNDS)
			continue;
		rounds = 0;
		next = xp_softnic_next_instant(w, e, n);
		if (next == UINT64_MAX)
			next = now + 1000; /* nothing scheduled: let the application's step see time */
		if (next <= now)
			next = now + 1;
		if (next > until_ns)
			return -ETIMEDOUT;
		rc = xp_softnic_advance(w, next);
		if (rc < 0)
			return rc;
	}
}
