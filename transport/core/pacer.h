/* SPDX-License-Identifier: MIT */
/*
 * pacer.h - pacing for the RATE control: the gap a chunk earns at a rate,
 * and the hashed timing wheel that holds connections until they may send.
 *
 * A connection paced at rate r (PCM_RATE_ONE = the datapath's line rate)
 * may send its next chunk at pace_next + gap(len, r) after each chunk of len
 * bytes, where pace_next restarts from `now` only when the connection sent
 * later than a wheel tick past it (it was idle). Because pace_next advances
 * by exact gaps while the connection is busy, the average rate is exact
 * even though the wheel wakes it on tick boundaries.
 *
 * The wheel: n_slots (a power of two) slots of tick_ns each. An id due at t
 * goes in slot ceil(t / tick_ns) mod n_slots and fires on the first expiry
 * at or after that tick, never before t. Deadlines past the wheel's horizon
 * stay in their slot across revolutions. A bitmap of non-empty slots finds
 * the next deadline without scanning empty slots.
 */
#ifndef XP_PACER_H
#define XP_PACER_H

#include <stdbool.h>
#include <stdint.h>

struct xp_wheel {
	uint64_t tick_ns;
	uint32_t n_slots;
	uint32_t n_ids;
	uint64_t cur_tick;   /* first tick not yet expired */
	uint32_t count;      /* ids on the wheel */
	uint32_t *head;      /* slot -> first id */
	uint32_t *next;      /* id -> next id in its slot */
	uint32_t *prev;      /* id -> previous id, or UINT32_MAX at the head */
	uint64_t *tick;      /* id -> its tick, or UINT64_MAX when not on the wheel */
	uint64_t *bitmap;    /* bit per non-empty slot */
};

/**
 * xp_wheel_init() - an empty wheel for ids 0..@n_ids-1.
 * @w: the wheel.
 * @n_ids: ids it can hold.
 * @n_slots: a power of two, >= 64.
 * @tick_ns: slot width, >= 1.
 * @now_ns: the time it starts at.
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int xp_wheel_init(struct xp_wheel *w, uint32_t n_ids, uint32_t n_slots, uint64_t tick_ns,
		  uint64_t now_ns);

/**
 * xp_wheel_fini() - free the wheel's memory.
 * @w: the wheel.
 */
void xp_wheel_fini(struct xp_wheel *w);

/**
 * xp_wheel_insert() - put @id (not on the wheel) on it, due at @when_ns.
 */
void xp_wheel_insert(struct xp_wheel *w, uint32_t id, uint64_t when_ns);

/**
 * xp_wheel_remove() - take @id off the wheel; nothing happens if it is not on it.
 */
void xp_wheel_remove(struct xp_wheel *w, uint32_t id);

/**
 * xp_wheel_holds() - whether @id is on the wheel.
 * @w: the wheel.
 * @id: the id.
 *
 * Return: true if it is waiting on the wheel.
 */
static inline bool xp_wheel_holds(const struct xp_wheel *w, uint32_t id)
{
	return w->tick[id] != UINT64_MAX;
}

/**
 * xp_wheel_expire() - take off the wheel every id due at or before @now_ns.
 * @w: the wheel.
 * @now_ns: the time, not before the previous call's.
 * @out: where the ids go, in slot order.
 * @max: room in @out; ids that do not fit stay on the wheel, due.
 *
 * Return: how many ids were written.
 */
uint32_t xp_wheel_expire(struct xp_wheel *w, uint64_t now_ns, uint32_t *out, uint32_t max);

/**
 * xp_wheel_next() - when the wheel next has work.
 *
 * Return: a time at or before the earliest deadline on the wheel, or
 * UINT64_MAX.
 */
uint64_t xp_wheel_next(const struct xp_wheel *w);

/**
 * xp_pacer_rate_bps() - the pacing rate @rate means, in bit/s.
 * @rate: PCM_RATE_ONE scale.
 * @line_rate_bps: the datapath's line rate in bit/s.
 *
 * Return: @line_rate_bps * @rate / PCM_RATE_ONE; 0 when @rate is at or above
 * PCM_RATE_ONE (the connection is not paced).
 */
uint64_t xp_pacer_rate_bps(uint64_t rate, uint64_t line_rate_bps);

/**
 * xp_pacer_gap_ns() - how long @bytes take at @rate.
 * @bytes: chunk length.
 * @rate: fraction of line rate, PCM_RATE_ONE = 1 << 20 is all of it; 0 counts as 1.
 * @line_rate_bps: the datapath's line rate in bit/s (> 0).
 *
 * Return: the gap in ns, rounded up.
 */
uint64_t xp_pacer_gap_ns(uint64_t bytes, uint64_t rate, uint64_t line_rate_bps);

#endif /* XP_PACER_H */
