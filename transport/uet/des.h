/* SPDX-License-Identifier: MIT */
/*
 * des.h - the discrete-event core of the UET emulation.
 *
 * Time is a u64 count of picoseconds. Events are ordered by (time, sequence
 * number of insertion), so a run is a pure function of its inputs and seed.
 *
 * The queue is a three-level hierarchical timing wheel with an overflow slot:
 *   level 0: 4096 slots of 2^10 ps (1.024 ns), one 4.19 us epoch
 *   level 1: 4096 slots of 2^22 ps (4.19 us), one 17.2 ms epoch
 *   level 2: 4096 slots of 2^34 ps (17.2 ms), one 70.4 s epoch
 *   overflow: everything further out, redistributed when level 2 runs dry.
 * An event sits in the level whose epoch it shares with the current slot, so
 * it cascades at most once per level. Slots are arrays of (time, sequence,
 * event) entries: cascading and ordering never touch the events themselves,
 * which matters because a large fabric's pending events do not fit in cache.
 * The slot being served is poured into a small binary heap that orders its
 * entries exactly (and its events are prefetched together); a bitmap per
 * level finds the next non-empty slot in a few word operations. Insertion
 * and cancellation are O(1) amortized, removal O(log n) in that heap, whose
 * size is the number of events within one nanosecond.
 *
 * Events come from a pool grown in slabs, or are embedded in their owner:
 * nothing is allocated per event. A cancelled event is marked dead and
 * recycled when its time comes.
 */
#ifndef PCM_UET_DES_H
#define PCM_UET_DES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UET_WHEEL_BITS 12
#define UET_WHEEL_SLOTS (1u << UET_WHEEL_BITS)
#define UET_WHEEL_WORDS (UET_WHEEL_SLOTS / 64)
#define UET_LEVELS 3

/* Event type 0 marks a cancelled event still queued. */
#define UET_EV_DEAD 0

/*
 * An event. Most come from the pool (uet_des_schedule()); an object that has at
 * most one event pending at a time can embed one instead (uet_des_arm()), so
 * that serving the event touches the object's own cache lines only.
 */
struct uet_ev {
	uint64_t t_ps;
	struct uet_ev *next; /* pool link; free for the owner's use while not queued */
	void *obj;
	uint32_t arg;
	uint16_t type;
	bool pooled;
};

/* What the queue stores: the order key beside the event, so ordering never touches events. */
struct uet_qent {
	uint64_t t_ps;
	uint64_t seq;
	struct uet_ev *ev;
};

/* A slot: its first two entries inline (one cache line when sparse), the rest in e[]. */
#define UET_SLOT_INLINE 2

struct uet_slot {
	struct uet_qent inl[UET_SLOT_INLINE];
	struct uet_qent *e;   /* entries UET_SLOT_INLINE.. */
	uint32_t len, cap;    /* cap: of e[] */
} __attribute__((aligned(64)));

struct uet_wheel_level {
	struct uet_slot slot[UET_WHEEL_SLOTS];
	uint64_t bits[UET_WHEEL_WORDS];
	uint64_t summary; /* bit w set: bits[w] != 0 */
};

struct uet_des {
	uint64_t now_ps;
	uint64_t cur;     /* absolute level-0 slot index being served */
	bool loaded;      /* the heap holds slot `cur` */
	bool oom;
	uint64_t seq;
	uint64_t n_pending;
	uint64_t n_processed;
	struct uet_qent *heap;
	size_t heap_len, heap_cap;
	struct uet_wheel_level lv[UET_LEVELS];
	struct uet_slot overflow;
	struct uet_ev *free_list;
	void **slabs;
	size_t n_slabs, slabs_cap;
	uint64_t n_allocated;
};

/**
 * uet_des_init() - an empty event queue at time 0.
 *
 * Return: 0, -ENOMEM.
 */
int uet_des_init(struct uet_des *des);

void uet_des_fini(struct uet_des *des);

/* Grow the event pool; the slow path of uet_des_schedule(). */
int uet_des_grow(struct uet_des *des);

/* Queue @ev at ev->t_ps; sets des->oom if a slot cannot grow. */
void uet_des_insert(struct uet_des *des, struct uet_ev *ev);

/**
 * uet_des_schedule() - schedule a pooled event of @type at @t_ps (>= now).
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
	ev->pooled = true;
	ev->t_ps = t_ps < des->now_ps ? des->now_ps : t_ps;
	ev->type = type;
	ev->obj = obj;
	ev->arg = arg;
	uet_des_insert(des, ev);
	return ev;
}

/**
 * uet_des_arm() - schedule an event embedded in its owner at @t_ps. It must
 * not be pending already, and is never cancelled.
 */
static inline void uet_des_arm(struct uet_des *des, struct uet_ev *ev, uint64_t t_ps,
			       uint16_t type, void *obj)
{
	ev->pooled = false;
	ev->t_ps = t_ps < des->now_ps ? des->now_ps : t_ps;
	ev->type = type;
	ev->obj = obj;
	uet_des_insert(des, ev);
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

/**
 * uet_des_pop() - remove the next live event in (time, sequence) order and
 * advance now_ps to its time. The caller dispatches it, then returns a pooled
 * event with uet_des_free().
 *
 * Return: the event, or NULL when nothing is pending.
 */
struct uet_ev *uet_des_pop(struct uet_des *des);

/* uet_des_pop(), but NULL (and nothing removed) if the next event is after @limit_ps. */
struct uet_ev *uet_des_pop_until(struct uet_des *des, uint64_t limit_ps);

/*
 * Return a popped pooled event to the pool. An embedded event belongs to its
 * owner, which may have re-armed it while handling it: do not call this on one.
 */
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
