// SPDX-License-Identifier: MIT
/*
 * pacer.c - the pacing gap and the hashed timing wheel (pacer.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "pacer.h"
#include "pcm.h"

#define NO_ID UINT32_MAX
#define OFF_WHEEL UINT64_MAX

int xp_wheel_init(struct xp_wheel *w, uint32_t n_ids, uint32_t n_slots, uint64_t tick_ns,
		  uint64_t now_ns)
{
	if (n_ids == 0 || n_ids == NO_ID || n_slots < 64 || (n_slots & (n_slots - 1)) ||
	    tick_ns == 0)
		return -EINVAL;
	w->head = malloc((size_t)n_slots * sizeof(*w->head));
	w->bitmap = calloc(n_slots / 64, sizeof(*w->bitmap));
	w->next = malloc((size_t)n_ids * sizeof(*w->next));
	w->prev = malloc((size_t)n_ids * sizeof(*w->prev));
	w->tick = malloc((size_t)n_ids * sizeof(*w->tick));
	if (!w->head || !w->bitmap || !w->next || !w->prev || !w->tick) {
		xp_wheel_fini(w);
		return -ENOMEM;
	}
	for (uint32_t s = 0; s < n_slots; s++)
		w->head[s] = NO_ID;
	for (uint32_t i = 0; i < n_ids; i++)
		w->tick[i] = OFF_WHEEL;
	w->tick_ns = tick_ns;
	w->n_slots = n_slots;
	w->n_ids = n_ids;
	w->cur_tick = now_ns / tick_ns;
	w->count = 0;
	return 0;
}

void xp_wheel_fini(struct xp_wheel *w)
{
	free(w->head);
	free(w->bitmap);
	free(w->next);
	free(w->prev);
	free(w->tick);
	w->head = w->next = w->prev = NULL;
	w->bitmap = w->tick = NULL;
	w->count = 0;
}

static uint32_t slot_of(const struct xp_wheel *w, uint64_t tick)
{
	return (uint32_t)(tick & (w->n_slots - 1));
}

void xp_wheel_insert(struct xp_wheel *w, uint32_t id, uint64_t when_ns)
{
	uint64_t tick = when_ns / w->tick_ns + (when_ns % w->tick_ns != 0);
	uint32_t s;

	if (tick < w->cur_tick)
		tick = w->cur_tick;
	s = slot_of(w, tick);
	w->tick[id] = tick;
	w->prev[id] = NO_ID;
	w->next[id] = w->head[s];
	if (w->head[s] != NO_ID)
		w->prev[w->head[s]] = id;
	w->head[s] = id;
	w->bitmap[s / 64] |= 1ull << (s % 64);
	w->count++;
}

void xp_wheel_remove(struct xp_wheel *w, uint32_t id)
{
	uint32_t s;

	if (w->tick[id] == OFF_WHEEL)
		return;
	s = slot_of(w, w->tick[id]);
	if (w->prev[id] != NO_ID)
		w->next[w->prev[id]] = w->next[id];
	else
		w->head[s] = w->next[id];
	if (w->next[id] != NO_ID)
		w->prev[w->next[id]] = w->prev[id];
	if (w->head[s] == NO_ID)
		w->bitmap[s / 64] &= ~(1ull << (s % 64));
	w->tick[id] = OFF_WHEEL;
	w->count--;
}

/* Fire the ids of slot @s whose tick is at most @last; return how many went to @out. */
static uint32_t expire_slot(struct xp_wheel *w, uint32_t s, uint64_t last, uint32_t *out,
			    uint32_t max)
{
	uint32_t n = 0, id = w->head[s];

	while (id != NO_ID && n < max) {
		uint32_t nx = w->next[id];

		if (w->tick[id] <= last) {
			xp_wheel_remove(w, id);
			out[n++] = id;
		}
		id = nx;
	}
	return n;
}

uint32_t xp_wheel_expire(struct xp_wheel *w, uint64_t now_ns, uint32_t *out, uint32_t max)
{
	uint64_t last = now_ns / w->tick_ns, t;
	uint32_t n = 0;

	if (last < w->cur_tick)
		return 0;
	/* One revolution visits every slot; more would only revisit them. */
	for (t = w->cur_tick; t <= last && t - w->cur_tick < w->n_slots && w->count; t++) {
		uint32_t s = slot_of(w, t);

		if (!(w->bitmap[s / 64] & (1ull << (s % 64))))
			continue;
		n += expire_slot(w, s, last, out + n, max - n);
		if (n == max)
			return n; /* the rest stays due; cur_tick is not advanced past it */
	}
	w->cur_tick = last + 1;
	return n;
}

uint64_t xp_wheel_next(const struct xp_wheel *w)
{
	uint32_t start = slot_of(w, w->cur_tick);

	if (!w->count)
		return UINT64_MAX;
	for (uint32_t d = 0; d < w->n_slots;) {
		uint32_t s = (start + d) & (w->n_slots - 1);
		uint64_t word = w->bitmap[s / 64] >> (s % 64);

		if (word) {
			d += (uint32_t)__builtin_ctzll(word);
			return (w->cur_tick + d) * w->tick_ns;
		}
		d += 64 - s % 64;
	}
	return w->cur_tick * w->tick_ns; /* not reached: count > 0 means a bit is set */
}

uint64_t xp_pacer_gap_ns(uint64_t bytes, uint64_t rate, uint64_t line_rate_bps)
{
	unsigned __int128 num = (unsigned __int128)bytes * 8u * 1000000000u * PCM_RATE_ONE;
	unsigned __int128 den = (unsigned __int128)line_rate_bps * (rate ? rate : 1);
	unsigned __int128 gap = (num + den - 1) / den;

	return gap > UINT64_MAX ? UINT64_MAX : (uint64_t)gap;
}

uint64_t xp_pacer_rate_bps(uint64_t rate, uint64_t line_rate_bps)
{
	if (rate >= PCM_RATE_ONE)
		return 0;
	return (uint64_t)((unsigned __int128)line_rate_bps * rate / PCM_RATE_ONE);
}
