// SPDX-License-Identifier: MIT
/*
 * engine_comp.c - an engine's completions on their way to the application:
 * the SPSC completion ring, and the FIFO behind it where completions wait
 * while the ring is full (a completion is never lost: "every command that
 * names an operation completes exactly once", engine.h).
 *
 * The runner publishes with xp_engine_complete(); each run starts by moving
 * what waits in the FIFO to the ring (xp_engine_overflow_flush()), so the
 * order the application sees is the order of publication. `published` tells
 * the run to wake the application's waiter. Both are inline in engine_int.h
 * for the common case (room in the ring, nothing waiting: once per operation
 * and once per run); this file is the FIFO behind them.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine_int.h"

static int overflow_push(struct xp_engine *e, const struct xp_engine_comp *c)
{
	if (e->ov_n == e->ov_cap) {
		uint32_t cap = e->ov_cap ? e->ov_cap * 2 : 256;
		struct xp_engine_comp *a = malloc((size_t)cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		for (uint32_t i = 0; i < e->ov_n; i++)
			a[i] = e->overflow[(e->ov_head + i) % e->ov_cap];
		free(e->overflow);
		e->overflow = a;
		e->ov_cap = cap;
		e->ov_head = 0;
	}
	e->overflow[(e->ov_head + e->ov_n) % e->ov_cap] = *c;
	e->ov_n++;
	XP_ENGINE_STAT_ADD(e, overflows, 1);
	return 0;
}

void xp_engine_complete_later(struct xp_engine *e, const struct xp_engine_comp *c)
{
	if (overflow_push(e, c) < 0)
		abort(); /* cannot lose a completion; out of memory here is fatal */
}

uint32_t xp_engine_overflow_flush_slow(struct xp_engine *e)
{
	uint32_t n = 0;

	while (e->ov_n && xp_spsc_push(&e->comps, &e->overflow[e->ov_head]) == 0) {
		e->ov_head = (e->ov_head + 1) % e->ov_cap;
		e->ov_n--;
		n++;
	}
	if (n)
		e->published = true;
	return n;
}
