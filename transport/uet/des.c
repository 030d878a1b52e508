// SPDX-License-Identifier: MIT
/*
 * des.c - the hierarchical timing wheel, its event pool and the run's random
 * number generator. See des.h for the structure and its invariants: every
 * queued entry whose level-0 slot is at or before cur is in the sorted run;
 * every other one sits in the first level whose epoch it shares with cur;
 * every slot's array is in insertion order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "des.h"

#define SLAB_EVENTS 4096
/* A slot served sorts at most this many entries by insertion; a larger one is radix-sorted. */
#define SMALL_RUN 16
/* A level-1 slot this full takes the array of the last one served (grow_epoch_slot()). */
#define EPOCH_SPARE_MIN 4096

int uet_des_init(struct uet_des *des, struct uet_mem *mem)
{
	memset(des, 0, sizeof(*des));
	des->mem = mem;
	return uet_des_grow(des);
}

void uet_des_fini(struct uet_des *des)
{
	for (unsigned c = 0; c < UET_DES_SPARE_CLASSES; c++)
		while (des->spare[c]) {
			struct uet_qent *a = des->spare[c];

			des->spare[c] = *(struct uet_qent **)a;
			free(a);
		}
	for (size_t i = 0; i < des->n_slabs; i++)
		uet_mem_free(des->mem, des->slabs[i], SLAB_EVENTS * sizeof(struct uet_ev));
	for (unsigned l = 0; l < UET_LEVELS; l++)
		for (unsigned s = 0; s < UET_WHEEL_SLOTS; s++)
			free(des->lv[l].slot[s].e);
	free(des->overflow.e);
	free(des->epoch_spare);
	free(des->slabs);
	free(des->run);
	free(des->scratch);
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
	slab = uet_mem_zalloc(des->mem, SLAB_EVENTS * sizeof(*slab));
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

/* The class of an array of @cap entries (a power of two, at least 4). */
static unsigned cap_class(uint32_t cap)
{
	return (unsigned)__builtin_ctz(cap) - 2;
}

/* Give an array back: to the spares of its class if small, else to malloc. */
static void array_put(struct uet_des *des, struct uet_qent *a, uint32_t cap)
{
	unsigned c = cap_class(cap);

	if (c >= UET_DES_SPARE_CLASSES) {
		free(a);
		return;
	}
	*(struct uet_qent **)a = des->spare[c];
	des->spare[c] = a;
}

/* Double @a (of *@cap entries, @len used), a spare if there is one. Return: false on ENOMEM. */
static bool grow_array(struct uet_des *des, struct uet_qent **a, uint32_t *cap, uint32_t len)
{
	uint32_t n = *cap ? *cap * 2 : 4;
	unsigned c = cap_class(n);
	struct uet_qent *b;

	if (c >= UET_DES_CLASSES) {
		des->oom = true;
		return false;
	}
	if (c < UET_DES_SPARE_CLASSES && des->spare[c]) {
		b = des->spare[c];
		des->spare[c] = *(struct uet_qent **)b;
		if (*a) {
			memcpy(b, *a, len * sizeof(*b));
			array_put(des, *a, *cap);
		}
	} else {
		b = realloc(*a, n * sizeof(*b));
		if (!b) {
			des->oom = true;
			return false;
		}
	}
	*a = b;
	*cap = n;
	return true;
}

static inline void slot_push(struct uet_des *des, struct uet_slot *sl, const struct uet_qent *e)
{
	if (__builtin_expect(sl->len == sl->cap, 0) && !grow_array(des, &sl->e, &sl->cap, sl->len))
		return;
	sl->e[sl->len++] = *e;
}

/*
 * Grow a busy level-1 slot (EPOCH_SPARE_MIN entries) into the array of the
 * last one served, if that is larger. The slot of the next epoch takes most
 * of what the current one schedules beyond itself, about what the previous
 * such slot took: one copy instead of a copy per doubling, and no fresh
 * memory. Slots further out (timers) stay small and leave it.
 */
static bool grow_epoch_slot(struct uet_des *des, struct uet_slot *sl)
{
	struct uet_qent *b = des->epoch_spare;

	if (sl->cap < EPOCH_SPARE_MIN || des->epoch_spare_cap <= sl->cap)
		return grow_array(des, &sl->e, &sl->cap, sl->len);
	memcpy(b, sl->e, sl->len * sizeof(*b));
	array_put(des, sl->e, sl->cap);
	sl->e = b;
	sl->cap = des->epoch_spare_cap;
	des->epoch_spare = NULL;
	des->epoch_spare_cap = 0;
	return true;
}

/* Empty a slot after its entries were moved; a burst's large array goes to the spares. */
static void slot_reset(struct uet_des *des, struct uet_slot *sl, uint32_t keep_cap)
{
	sl->len = 0;
	if (sl->cap > keep_cap) {
		array_put(des, sl->e, sl->cap);
		sl->e = NULL;
		sl->cap = 0;
	}
}

/*
 * An entry due within the slot being served: after the pending entries of
 * equal or earlier time (it was inserted after all of them).
 */
static void run_insert(struct uet_des *des, const struct uet_qent *e)
{
	uint32_t i;

	if (des->run_len == des->run_cap) {
		if (des->run_pos) {
			memmove(des->run, des->run + des->run_pos,
				(des->run_len - des->run_pos) * sizeof(*des->run));
			des->run_len -= des->run_pos;
			des->run_pos = 0;
		} else if (!grow_array(des, &des->run, &des->run_cap, des->run_len)) {
			return;
		}
	}
	i = des->run_len;
	while (i > des->run_pos && des->run[i - 1].t_ps > e->t_ps)
		i--;
	memmove(des->run + i + 1, des->run + i, (des->run_len - i) * sizeof(*des->run));
	des->run[i] = *e;
	des->run_len++;
}

/* Place an entry by the invariant relative to cur. */
static inline void place(struct uet_des *des, const struct uet_qent *e)
{
	uint64_t t = e->t_ps, cur = des->cur;
	struct uet_wheel_level *lv;
	unsigned s;

	if ((t >> 10) <= cur) {
		run_insert(des, e);
		return;
	}
	if ((t >> 22) == (cur >> 12)) {
		lv = &des->lv[0];
		s = (unsigned)(t >> 10) & (UET_WHEEL_SLOTS - 1);
	} else if ((t >> 34) == (cur >> 24)) {
		lv = &des->lv[1];
		s = (unsigned)(t >> 22) & (UET_WHEEL_SLOTS - 1);
		/* grown here, slot_push() below finds room */
		if (__builtin_expect(lv->slot[s].len == lv->slot[s].cap, 0) &&
		    !grow_epoch_slot(des, &lv->slot[s]))
			return;
	} else if ((t >> 46) == (cur >> 36)) {
		lv = &des->lv[2];
		s = (unsigned)(t >> 34) & (UET_WHEEL_SLOTS - 1);
	} else {
		slot_push(des, &des->overflow, e);
		return;
	}
	slot_push(des, &lv->slot[s], e);
	bit_set(lv, s);
}

void uet_des_place(struct uet_des *des, uint64_t t_ps, uintptr_t ref)
{
	struct uet_qent e = { .t_ps = t_ps, .ref = ref };

	place(des, &e);
}

/*
 * Re-place every entry of a slot, in order; cur must already be set. Entries
 * go to lower levels or the run only, never back into this slot.
 */
static void redistribute(struct uet_des *des, unsigned level, unsigned s)
{
	struct uet_wheel_level *lv = &des->lv[level];
	struct uet_slot *sl = &lv->slot[s];

	bit_clear(lv, s);
	for (uint32_t i = 0; i < sl->len; i++)
		place(des, &sl->e[i]);
	/*
	 * A slot above level 0 can hold a whole epoch's worth: keep only small
	 * arrays, but a level-1 slot's largest array waits for the next busy one.
	 */
	if (level == 1 && sl->cap > 16 && sl->cap > des->epoch_spare_cap) {
		free(des->epoch_spare);
		des->epoch_spare = sl->e;
		des->epoch_spare_cap = sl->cap;
		sl->e = NULL;
		sl->cap = 0;
	}
	slot_reset(des, sl, 16);
}

static void insertion_sort(struct uet_qent *a, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct uet_qent x = a[i];
		uint32_t j = i;

		while (j > 0 && a[j - 1].t_ps > x.t_ps) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
}

/*
 * One stable counting pass of an LSD radix sort: a into b by the 5 bits of
 * the time at @shift.
 */
static void radix_pass(const struct uet_qent *a, struct uet_qent *b, uint32_t n, unsigned shift)
{
	uint32_t pos[32] = { 0 }, sum = 0;

	for (uint32_t i = 0; i < n; i++)
		pos[(a[i].t_ps >> shift) & 31]++;
	for (unsigned d = 0; d < 32; d++) {
		uint32_t c = pos[d];

		pos[d] = sum;
		sum += c;
	}
	for (uint32_t i = 0; i < n; i++)
		b[pos[(a[i].t_ps >> shift) & 31]++] = a[i];
}

/*
 * Stable sort by time of the run just loaded: a level-0 slot's array, in
 * insertion order. Its entries share t_ps >> 10 (one 1.024 ns slot), so
 * two radix passes over the low 10 bits order it: linear in the slot's
 * length, which grows with the fabric (a merge sort's passes grew with it).
 */
static void sort_run(struct uet_des *des)
{
	struct uet_qent *a = des->run, *b;
	uint32_t n = des->run_len, i;

	for (i = 1; i < n && a[i - 1].t_ps <= a[i].t_ps; i++)
		;
	if (i >= n)
		return;
	if (n <= SMALL_RUN) {
		insertion_sort(a, n);
		return;
	}
	if (des->scratch_cap < n) {
		b = realloc(des->scratch, n * sizeof(*b));
		if (!b) {
			/* still correct, only slower */
			insertion_sort(a, n);
			return;
		}
		des->scratch = b;
		des->scratch_cap = n;
	}
	radix_pass(a, des->scratch, n, 0);
	radix_pass(des->scratch, a, n, 5);
}

static inline void *ref_obj(uintptr_t ref)
{
	return (void *)(ref & ~(uintptr_t)UET_DES_TAG_MASK);
}

/* Serve level-0 slot @s next: its array becomes the run, sorted. */
static void load_slot(struct uet_des *des, unsigned s)
{
	struct uet_slot *sl = &des->lv[0].slot[s];
	struct uet_qent *e = des->run;
	uint32_t cap = des->run_cap;

	des->run = sl->e;
	des->run_cap = sl->cap;
	des->run_len = sl->len;
	des->run_pos = 0;
	sl->e = e;
	sl->cap = cap;
	slot_reset(des, sl, 64);
	bit_clear(&des->lv[0], s);
	sort_run(des);
	for (uint32_t i = 0; i < des->run_len && i < UET_DES_PREFETCH; i++)
		__builtin_prefetch(ref_obj(des->run[i].ref));
}

/* Move cur to the next slot that may hold entries and load it. Return: false if none. */
static bool next_slot(struct uet_des *des)
{
	uint64_t cur = des->cur, tmin = UINT64_MAX;
	struct uet_slot ov;
	int j;

	des->run_pos = des->run_len = 0;
	j = bit_next(&des->lv[0], (unsigned)(cur & (UET_WHEEL_SLOTS - 1)) + 1);
	if (j >= 0) {
		des->cur = (cur & ~(uint64_t)(UET_WHEEL_SLOTS - 1)) | (unsigned)j;
		load_slot(des, (unsigned)j);
		return true;
	}
	j = bit_next(&des->lv[1], (unsigned)((cur >> 12) & (UET_WHEEL_SLOTS - 1)) + 1);
	if (j >= 0) {
		des->cur = ((cur >> 24) << 24) | ((uint64_t)j << 12);
		redistribute(des, 1, (unsigned)j);
		return true;
	}
	j = bit_next(&des->lv[2], (unsigned)((cur >> 24) & (UET_WHEEL_SLOTS - 1)) + 1);
	if (j >= 0) {
		des->cur = ((cur >> 36) << 36) | ((uint64_t)j << 24);
		redistribute(des, 2, (unsigned)j);
		return true;
	}
	if (!des->overflow.len)
		return false;
	for (uint32_t i = 0; i < des->overflow.len; i++)
		if (des->overflow.e[i].t_ps < tmin)
			tmin = des->overflow.e[i].t_ps;
	des->cur = (tmin >> 46) << 36;
	/* take the overflow: entries beyond the new epoch go back into it */
	ov = des->overflow;
	des->overflow = (struct uet_slot){ 0 };
	for (uint32_t i = 0; i < ov.len; i++)
		place(des, &ov.e[i]);
	if (ov.e)
		array_put(des, ov.e, ov.cap);
	return true;
}

bool uet_des_prime(struct uet_des *des)
{
	for (;;) {
		while (des->run_pos < des->run_len) {
			uintptr_t ref = des->run[des->run_pos].ref;
			struct uet_ev *ev = (struct uet_ev *)ref;

			if ((ref & UET_DES_TAG_MASK) || ev->type != UET_EV_DEAD)
				return true;
			des->run_pos++;
			uet_des_free(des, ev); /* only pooled events are cancelled */
		}
		if (!next_slot(des))
			return false;
	}
}

uint64_t uet_des_peek_time(struct uet_des *des)
{
	return uet_des_prime(des) ? des->run[des->run_pos].t_ps : UINT64_MAX;
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
