// SPDX-License-Identifier: MIT
/*
 * plane_engine_event.c - the engine data plane's events for pcmd (the seam's
 * poll()): queued in order as they happen on pcmd's loop, the shared eventfd
 * kicked so the loop comes back for them, handed out in batches.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "plane_engine_int.h"

void *pcmd_eng_grow(void *p, uint32_t *cap, size_t size)
{
	uint32_t n = *cap ? *cap * 2 : 16;
	void *q = realloc(p, n * size);

	if (!q) {
		pcmd_err("data plane: out of memory");
		abort();
	}
	*cap = n;
	return q;
}

void pcmd_eng_emit(struct pcmd_plane *pl, const struct pcmd_plane_event *ev)
{
	if (pl->ev_head && pl->ev_head + pl->ev_n == pl->ev_cap) {
		memmove(pl->evs, pl->evs + pl->ev_head, pl->ev_n * sizeof(*pl->evs));
		pl->ev_head = 0;
	}
	if (pl->ev_n == pl->ev_cap)
		pl->evs = pcmd_eng_grow(pl->evs, &pl->ev_cap, sizeof(*pl->evs));
	pl->evs[pl->ev_head + pl->ev_n++] = *ev;
}

void pcmd_eng_emit_simple(struct pcmd_plane *pl, uint32_t kind, int status, uint64_t token,
			  uint32_t flow)
{
	struct pcmd_plane_event ev = {.kind = kind, .status = status, .token = token, .flow = flow};

	pcmd_eng_emit(pl, &ev);
}

void pcmd_eng_kick(struct pcmd_plane *pl)
{
	uint64_t one = 1;

	if (write(pl->waiter.efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, so it is readable already */
	}
}

int pcmd_eng_events_take(struct pcmd_plane *pl, struct pcmd_plane_event *evs, int max)
{
	int n = (int)pl->ev_n < max ? (int)pl->ev_n : max;

	if (n > 0)
		memcpy(evs, pl->evs + pl->ev_head, (size_t)n * sizeof(*evs));
	pl->ev_head += (uint32_t)n;
	pl->ev_n -= (uint32_t)n;
	if (!pl->ev_n)
		pl->ev_head = 0;
	else
		pcmd_eng_kick(pl); /* more wait: poll again */
	return n;
}
