// SPDX-License-Identifier: MIT
/*
 * des.c - the hierarchical timing wheel, its event pool and the run's random
 * number generator. See des.h for the structure and its invariants:
 * every queued entry with level-0 slot <= cur is in the heap; every other
 * one sits in the first level whose epoch it shares with cur.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "des.h"

#define SLAB_EVENTS 4096

static const unsigned slot_shift[UET_LEVELS] = { 10, 22, 34 };

int uet_des_init(struct uet_des *des)
{
	memset(des, 0, sizeof(*des));
	des->heap_cap = 256;
	des->heap = malloc(des->heap_cap * sizeof(*des->heap));
	if (!des->heap)
		return -ENOMEM;
	return uet_des_grow(des);
}

void uet_des_fini(struct uet_des *des)
{
	for (size_t i = 0; i < des->n_slabs; i++)
		free(des->slabs[i]);
	for (unsigned l = 0; l < UET_LEVELS; l++)
		for (unsigned s = 0; s < UET_WHEEL_SLOTS; s++)
			free(des->lv[l].slot[s].e);
	free(des->overflow.e);
	free(des->slabs);
	free(des->heap);
	memset(des, 0, sizeof(*des));
}

int uet_des_grow(struct uet_des *des)
{
	struct uet_ev *slab;

	if (des->n_slabs == des->slabs_cap) {
		size_t cap = des->slabs_cap ? des->slabs_cap * 2 : 16;
		void **s = realloc(des->slabs, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		des->slabs = s;
		des->slabs_cap = cap;
	}
	slab = calloc(SLAB_EVENTS, sizeof(*slab));
	if (!slab)
		return -ENOMEM;
	des->slabs[des->n_slabs++] = slab;
	for (size_t i = 0; i < SLAB_EVENTS; i++) {
		slab[i].next = des->free_list;
		des->free_list = &slab[i];
	}
	des->n_allocated += SLAB_EVENTS;
	return 0;
}

static inline bool ent_less(const struct uet_qent *a, const struct uet_qent *b)
{
	return a->t_ps < b->t_ps || (a->t_ps == b->t_ps && a->seq < b->seq);
}

static void heap_push(struct uet_des *des, const struct uet_qent *e)
{
	struct uet_qent *h;
	size_t i;

	if (des->heap_len == des->heap_cap) {
		size_t cap = des->heap_cap * 2;

		h = realloc(des->heap, cap * sizeof(*h));
		if (!h) {
			des->oom = true;
			return;
		}
		des->heap = h;
		des->heap_cap = cap;
	}
	h = des->heap;
	i = des->heap_len++;
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!ent_less(e, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = *e;
}

static struct uet_ev *heap_pop(struct uet_des *des, uint64_t *t_ps)
{
	struct uet_qent *h = des->heap, last = h[--des->heap_len];
	struct uet_ev *top = h[0].ev;
	size_t n = des->heap_len, i = 0;

	*t_ps = h[0].t_ps;
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && ent_less(&h[c + 1], &h[c]))
			c++;
		if (!ent_less(&h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (n)
		h[i] = last;
	return top;
}

static inline void bit_set(struct uet_wheel_level *lv, unsigned s)
{
	lv->bits[s >> 6] |= (uint64_t)1 << (s & 63);
	lv->summary |= (uint64_t)1 << (s >> 6);
}

static inline void bit_clear(struct uet_wheel_level *lv, unsigned s)
{
	lv->bits[s >> 6] &= ~((uint64_t)1 << (s & 63));
	if (!lv->bits[s >> 6])
		lv->summary &= ~((uint64_t)1 << (s >> 6));
}

/* First set slot >= @from, or -1. */
static int bit_next(const struct uet_wheel_level *lv, unsigned from)
{
	unsigned w;
	uint64_t m, sum;

	if (from >= UET_WHEEL_SLOTS)
		return -1;
	w = from >> 6;
	m = lv->bits[w] & (~(uint64_t)0 << (from & 63));
	if (m)
		return (int)(w * 64 + (unsigned)__builtin_ctzll(m));
	if (w + 1 >= UET_WHEEL_WORDS)
		return -1;
	sum = lv->summary & (~(uint64_t)0 << (w + 1));
	if (!sum)
		return -1;
	w = (unsigned)__builtin_ctzll(sum);
	return (int)(w * 64 + (unsigned)__builtin_ctzll(lv->bits[w]));
}

static inline struct uet_qent *slot_ent(struct uet_slot *sl, uint32_t i)
{
	return i < UET_SLOT_INLINE ? &sl->inl[i] : &sl->e[i - UET_SLOT_INLINE];
}

static void slot_push(struct uet_des *des, struct uet_slot *sl, const struct uet_qent *e)
{
	if (sl->len < UET_SLOT_INLINE) {
		sl->inl[sl->len++] = *e;
		return;
	}
	if (sl->len - UET_SLOT_INLINE == sl->cap) {
		uint32_t cap = sl->cap ? sl->cap * 2 : 8;
		struct uet_qent *a = realloc(sl->e, cap * sizeof(*a));

		if (!a) {
			des->oom = true;
			return;
		}
		sl->e = a;
		sl->cap = cap;
	}
	sl->e[sl->len++ - UET_SLOT_INLINE] = *e;
}

/* Empty a slot after its entries were moved; a burst's large array is given back. */
static void slot_reset(struct uet_slot *sl, uint32_t keep_cap)
{
	sl->len = 0;
	if (sl->cap > keep_cap) {
		free(sl->e);
		sl->e = NULL;
		sl->cap = 0;
	}
}

static inline void wheel_add(struct uet_des *des, unsigned level, const struct uet_qent *e)
{
	struct uet_wheel_level *lv = &des->lv[level];
	unsigned s = (unsigned)(e->t_ps >> slot_shift[level]) & (UET_WHEEL_SLOTS - 1);

	slot_push(des, &lv->slot[s], e);
	bit_set(lv, s);
}

/* Place an entry by the invariant relative to cur. */
static void place(struct uet_des *des, const struct uet_qent *e)
{
	uint64_t t = e->t_ps, cur = des->cur;

	if ((t >> 10) <= cur)
		heap_push(des, e);
	else if ((t >> 22) == (cur >> 12))
		wheel_add(des, 0, e);
	else if ((t >> 34) == (cur >> 24))
		wheel_add(des, 1, e);
	else if ((t >> 46) == (cur >> 36))
		wheel_add(des, 2, e);
	else
		slot_push(des, &des->overflow, e);
}

void uet_des_insert(struct uet_des *des, struct uet_ev *ev)
{
	struct uet_qent e = { .t_ps = ev->t_ps, .seq = des->seq++, .ev = ev };

	des->n_pending++;
	place(des, &e);
}

/*
 * Re-place every entry of a slot; cur must already be set. Entries go to lower
 * levels or the heap only, never back into this slot.
 */
static void redistribute(struct uet_des *des, unsigned level, unsigned s)
{
	struct uet_wheel_level *lv = &des->lv[level];
	struct uet_slot *sl = &lv->slot[s];

	bit_clear(lv, s);
	for (uint32_t i = 0; i < sl->len; i++)
		place(des, slot_ent(sl, i));
	/* a level-1 slot can hold a whole epoch's worth: keep only small arrays */
	slot_reset(sl, 16);
}

/* Move cur to the next slot that may hold entries (not yet loaded). Return: false if none. */
static bool next_slot(struct uet_des *des)
{
	uint64_t cur = des->cur, tmin = UINT64_MAX;
	struct uet_slot ov;
	int j;

	j = bit_next(&des->lv[0], (unsigned)(cur & (UET_WHEEL_SLOTS - 1)) + 1);
	if (j >= 0) {
		des->cur = (cur & ~(uint64_t)(UET_WHEEL_SLOTS - 1)) | (unsigned)j;
		des->loaded = false;
		return true;
	}
	j = bit_next(&des->lv[1], (unsigned)((cur >> 12) & (UET_WHEEL_SLOTS - 1)) + 1);
	if (j >= 0) {
		des->cur = ((cur >> 24) << 24) | ((uint64_t)j << 12);
		des->loaded = false;
		redistribute(des, 1, (unsigned)j);
		return true;
	}
	j = bit_next(&des->lv[2], (unsigned)((cur >> 24) & (UET_WHEEL_SLOTS - 1)) + 1);
	if (j >= 0) {
		des->cur = ((cur >> 36) << 36) | ((uint64_t)j << 24);
		des->loaded = false;
		redistribute(des, 2, (unsigned)j);
		return true;
	}
	if (!des->overflow.len)
		return false;
	for (uint32_t i = 0; i < des->overflow.len; i++)
		if (slot_ent(&des->overflow, i)->t_ps < tmin)
			tmin = slot_ent(&des->overflow, i)->t_ps;
	des->cur = (tmin >> 46) << 36;
	des->loaded = false;
	/* take the overflow: entries beyond the new epoch go back into it */
	ov = des->overflow;
	des->overflow.len = 0;
	des->overflow.e = NULL;
	des->overflow.cap = 0;
	for (uint32_t i = 0; i < ov.len; i++)
		place(des, slot_ent(&ov, i));
	free(ov.e);
	return true;
}

/* Make sure the heap holds the earliest pending entry. Return: false if none is pending. */
static bool prime(struct uet_des *des)
{
	for (;;) {
		if (!des->loaded) {
			unsigned s = (unsigned)(des->cur & (UET_WHEEL_SLOTS - 1));
			struct uet_slot *sl = &des->lv[0].slot[s];

			if (sl->len) {
				/* these run within the next nanosecond: fetch them together */
				for (uint32_t i = 0; i < sl->len; i++)
					__builtin_prefetch(slot_ent(sl, i)->ev);
				for (uint32_t i = 0; i < sl->len; i++)
					heap_push(des, slot_ent(sl, i));
				slot_reset(sl, 64);
				bit_clear(&des->lv[0], s);
			}
			des->loaded = true;
		}
		while (des->heap_len && des->heap[0].ev->type == UET_EV_DEAD) {
			uint64_t t;

			uet_des_free(des, heap_pop(des, &t)); /* only pooled events are cancelled */
		}
		if (des->heap_len)
			return true;
		if (!next_slot(des))
			return false;
	}
}

struct uet_ev *uet_des_pop(struct uet_des *des)
{
	struct uet_ev *ev;

	if (!prime(des))
		return NULL;
	ev = heap_pop(des, &des->now_ps);
	des->n_pending--;
	des->n_processed++;
	return ev;
}

struct uet_ev *uet_des_pop_until(struct uet_des *des, uint64_t limit_ps)
{
	struct uet_ev *ev;

	if (!prime(des) || des->heap[0].t_ps > limit_ps)
		return NULL;
	ev = heap_pop(des, &des->now_ps);
	des->n_pending--;
	des->n_processed++;
	return ev;
}

uint64_t uet_des_peek_time(struct uet_des *des)
{
	return prime(des) ? des->heap[0].t_ps : UINT64_MAX;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void uet_rng_seed(struct uet_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}
