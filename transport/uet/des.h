/* SPDX-License-Identifier: MIT */
/*
 * des.h - the discrete-event core of the UET emulation.
 *
 * Time is a u64 count of picoseconds. Events are ordered by (time, order of
 * insertion), so a run is a pure function of its inputs and seed.
 *
 * The queue is a three-level hierarchical timing wheel with an overflow slot:
 *   level 0: 4096 slots of 2^10 ps (1.024 ns), one 4.19 us epoch
 *   level 1: 4096 slots of 2^22 ps (4.19 us), one 17.2 ms epoch
 *   level 2: 4096 slots of 2^34 ps (17.2 ms), one 70.4 s epoch
 *   overflow: everything further out, redistributed when level 2 runs dry.
 * An event sits in the level whose epoch it shares with the current slot, so
 * it cascades at most once per level. Slots are arrays of (time, reference)
 * entries, so cascading and ordering never touch the events themselves,
 * which matters because a large fabric's pending events do not fit in cache.
 *
 * No sequence number is stored: every slot's array is in insertion order.
 * An entry enters a slot either directly, or when the slot above it is
 * redistributed, which happens only once every lower slot of the epoch is
 * empty and copies the slot's entries in their order. So a stable sort by
 * time gives (time, insertion) order. The slot being served is that sorted
 * run, consumed from the front; an event scheduled into it (within the
 * current nanosecond) goes after the entries of equal or earlier time. A
 * bitmap per level finds the next non-empty slot in a few word operations.
 *
 * An entry refers either to a pooled event (struct uet_ev, from slabs: no
 * allocation per event) or to an object that is its own event: a 32-byte
 * aligned object, such as a packet or a port, with at most one event
 * pending at a time, whose type travels in the entry's low five bits
 * (uet_des_arm()). Serving such an event touches only the object's lines.
 * A cancelled pooled event is marked dead and recycled when its time comes.
 */
#ifndef PCM_UET_DES_H
#define PCM_UET_DES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mem.h"

#define UET_WHEEL_BITS 12
#define UET_WHEEL_SLOTS (1u << UET_WHEEL_BITS)
#define UET_WHEEL_WORDS (UET_WHEEL_SLOTS / 64)
#define UET_LEVELS 3
/* Capacities of slot arrays: 4 << class; arrays of up to 256 entries are kept as spares. */
#define UET_DES_CLASSES 30
#define UET_DES_SPARE_CLASSES 7

/* Event type 0 marks a cancelled event still queued. */
#define UET_EV_DEAD 0
/* Events whose object is fetched ahead of their turn while a slot is served. */
#define UET_DES_PREFETCH 6
/* Types of events carried in an entry's low bits (uet_des_arm()): 1 .. 31. */
#define UET_DES_TAG_MASK 31u

/* A pooled event (uet_des_schedule()); 32-byte aligned, so its entries' low bits are 0. */
struct uet_ev {
	uint64_t t_ps;
	struct uet_ev *next; /* free-list link */
	void *obj;
	uint32_t arg;
	uint16_t type;
} __attribute__((aligned(32)));

/* What the queue stores: the time beside a reference, so ordering never touches events. */
struct uet_qent {
	uint64_t t_ps;
	uintptr_t ref; /* a struct uet_ev * (low bits 0), or an object | its event type */
};

struct uet_slot {
	struct uet_qent *e;
	uint32_t len, cap;
};

struct uet_wheel_level {
	struct uet_slot slot[UET_WHEEL_SLOTS];
	uint64_t bits[UET_WHEEL_WORDS];
	uint64_t summary; /* bit w set: bits[w] != 0 */
};

/* An event popped: its type, its object and argument; @ev is the pooled event, or NULL. */
struct uet_fired {
	void *obj;
	struct uet_ev *ev;
	uint32_t arg;
	uint16_t type;
};

struct uet_des {
	uint64_t now_ps;
	uint64_t cur;     /* absolute level-0 slot index being served */
	bool oom;
	uint64_t n_pending;
	uint64_t n_processed;
	/* the slot being served, sorted: entries run[pos .. len) are pending */
	struct uet_qent *run;
	uint32_t run_pos, run_len, run_cap;
	struct uet_qent *scratch; /* for sorting a large slot */
	uint32_t scratch_cap;
	/* small slot arrays given back, by capacity (4 << class): reused, not freed */
	struct uet_qent *spare[UET_DES_SPARE_CLASSES];
	/* the largest array of a level-1 slot served, for the next busy one (des.c) */
	struct uet_qent *epoch_spare;
	uint32_t epoch_spare_cap;
	struct uet_wheel_level lv[UET_LEVELS];
	struct uet_slot overflow;
	struct uet_ev *free_list;
	struct uet_mem *mem;     /* the run's: the event slabs */
	void **slabs;
	size_t n_slabs, slabs_cap;
	uint64_t n_allocated;
};

/**
 * uet_des_init() - an empty event queue at time 0, its events from @mem.
 *
 * Return: 0, -ENOMEM.
 */
int uet_des_init(struct uet_des *des, struct uet_mem *mem);

void uet_des_fini(struct uet_des *des);

/* Grow the event pool; the slow path of uet_des_schedule(). */
int uet_des_grow(struct uet_des *des);

/* uet_des_insert()'s slow path: an entry for any level, the run or the overflow. */
void uet_des_place(struct uet_des *des, uint64_t t_ps, uintptr_t ref);

/* Queue @ref at @t_ps (>= now); sets des->oom if a slot cannot grow. */
static inline void uet_des_insert(struct uet_des *des, uint64_t t_ps, uintptr_t ref)
{
	uint64_t cur = des->cur;

	des->n_pending++;
	/* the common case: later in this level-0 epoch, into a slot with room */
	if ((t_ps >> 22) == (cur >> 12) && (t_ps >> 10) > cur) {
		struct uet_wheel_level *lv = &des->lv[0];
		unsigned s = (unsigned)(t_ps >> 10) & (UET_WHEEL_SLOTS - 1);
		struct uet_slot *sl = &lv->slot[s];

		if (__builtin_expect(sl->len < sl->cap, 1)) {
			sl->e[sl->len++] = (struct uet_qent){ .t_ps = t_ps, .ref = ref };
			lv->bits[s >> 6] |= (uint64_t)1 << (s & 63);
			lv->summary |= (uint64_t)1 << (s >> 6);
			return;
		}
	}
	uet_des_place(des, t_ps, ref);
}

/**
 * uet_des_schedule() - schedule a pooled event of @type at @t_ps (earlier
 * times mean now).
 *
 * Return: the event (for uet_des_cancel()), or NULL if the pool cannot grow.
 */
static inline struct uet_ev *uet_des_schedule(struct uet_des *des, uint64_t t_ps, uint16_t type,
					      void *obj, uint32_t arg)
{
	struct uet_ev *ev = des->free_list;

	if (__builtin_expect(!ev, 0)) {
		if (uet_des_grow(des) < 0)
			return NULL;
		ev = des->free_list;
	}
	des->free_list = ev->next;
	ev->t_ps = t_ps < des->now_ps ? des->now_ps : t_ps;
	ev->type = type;
	ev->obj = obj;
	ev->arg = arg;
	uet_des_insert(des, ev->t_ps, (uintptr_t)ev);
	return ev;
}

/**
 * uet_des_arm() - schedule the event of @type (1 .. 31) of a 32-byte aligned
 * object at @t_ps (earlier times mean now). The object has no other event
 * pending, and the event is never cancelled; it is popped with @obj as its
 * object and an argument of 0.
 */
static inline void uet_des_arm(struct uet_des *des, void *obj, uint64_t t_ps, uint16_t type)
{
	uet_des_insert(des, t_ps < des->now_ps ? des->now_ps : t_ps, (uintptr_t)obj | type);
}

/*
 * Cancel a pending pooled event: it is marked dead and recycled when its time
 * comes. The pointer must not be used afterwards.
 */
static inline void uet_des_cancel(struct uet_des *des, struct uet_ev *ev)
{
	ev->type = UET_EV_DEAD;
	des->n_pending--;
}

/* uet_des_pop_until()'s slow path: make run[run_pos] the earliest live entry. Return: false if none. */
bool uet_des_prime(struct uet_des *des);

/**
 * uet_des_pop_until() - remove the next live event in (time, insertion)
 * order if it is due by @limit_ps, advance now_ps to its time and describe it
 * in @out. The caller dispatches it, then returns a pooled event (out->ev)
 * with uet_des_free().
 *
 * Return: true, or false (and nothing removed) when nothing is due by @limit_ps.
 */
static inline bool uet_des_pop_until(struct uet_des *des, uint64_t limit_ps, struct uet_fired *out)
{
	const struct uet_qent *e;
	uintptr_t tag;

	/* a pooled event may be dead: the slow path skips those */
	if ((des->run_pos == des->run_len || !(des->run[des->run_pos].ref & UET_DES_TAG_MASK)) &&
	    !uet_des_prime(des))
		return false;
	e = &des->run[des->run_pos];
	if (e->t_ps > limit_ps)
		return false;
	des->run_pos++;
	if (des->run_pos + UET_DES_PREFETCH <= des->run_len)
		__builtin_prefetch((void *)(des->run[des->run_pos + UET_DES_PREFETCH - 1].ref &
					    ~(uintptr_t)UET_DES_TAG_MASK));
	des->now_ps = e->t_ps;
	des->n_pending--;
	des->n_processed++;
	tag = e->ref & UET_DES_TAG_MASK;
	if (tag) {
		out->obj = (void *)(e->ref & ~(uintptr_t)UET_DES_TAG_MASK);
		out->ev = NULL;
		out->arg = 0;
		out->type = (uint16_t)tag;
	} else {
		struct uet_ev *ev = (struct uet_ev *)e->ref;

		out->obj = ev->obj;
		out->ev = ev;
		out->arg = ev->arg;
		out->type = ev->type;
	}
	return true;
}

/*
 * The reference of the event @ahead places after the next one due in the
 * slot being served (0: none that far, or not popped yet). For a second
 * prefetch stage: its object was fetched UET_DES_PREFETCH events ahead, so
 * the caller can read it and fetch what its handler will touch.
 */
static inline uintptr_t uet_des_ahead(const struct uet_des *des, uint32_t ahead)
{
	return des->run_pos + ahead < des->run_len ? des->run[des->run_pos + ahead].ref : 0;
}

static inline bool uet_des_pop(struct uet_des *des, struct uet_fired *out)
{
	return uet_des_pop_until(des, UINT64_MAX, out);
}

/* Return a popped pooled event to the pool. */
static inline void uet_des_free(struct uet_des *des, struct uet_ev *ev)
{
	ev->next = des->free_list;
	des->free_list = ev;
}

/* Time of the next pending event, or UINT64_MAX; does not advance the clock. */
uint64_t uet_des_peek_time(struct uet_des *des);

/*
 * xoshiro256** seeded through splitmix64: the emulation's only source of
 * randomness, one stream per run.
 */
struct uet_rng {
	uint64_t s[4];
};

void uet_rng_seed(struct uet_rng *r, uint64_t seed);

static inline uint64_t uet_rng_next(struct uet_rng *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5;
	uint64_t result = ((x << 7) | (x >> 57)) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return result;
}

/* A 64-bit finalizer (murmur3's): hashes for ECMP salts and per-flow seeds. */
static inline uint64_t uet_mix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

/* Uniform in [0, n) without modulo bias worth caring about (n < 2^32). */
static inline uint32_t uet_rng_below(struct uet_rng *r, uint32_t n)
{
	return (uint32_t)(((uet_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

#endif /* PCM_UET_DES_H */
