// SPDX-License-Identifier: MIT
/*
 * tp_handle.c - handles with generations for connections and regions
 * (tp_handle.h): one process-wide table of slots in chunks that never move,
 * so a lookup reads a slot without a lock while another thread makes a new
 * chunk.
 *
 * A slot's generation is odd while it holds an object and even while free;
 * a handle carries the odd value, so it matches only while its object lives.
 * Freed slots are reused oldest first, which spreads the reuse of any one
 * slot over every other slot's.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "tp_handle.h"

#define CHUNK_SLOTS 4096u
#define MAX_CHUNKS 1024u /* 4 Mi handles alive at once */
#define INDEX_BITS 30
#define INDEX_MASK ((1u << INDEX_BITS) - 1)
#define NO_SLOT UINT32_MAX

_Static_assert(sizeof(uintptr_t) >= 8, "a handle needs 64-bit pointers");

struct slot {
	_Atomic uint32_t gen;
	_Atomic(void *) obj;
	_Atomic uint32_t kind;
	const void *owner;  /* under the lock */
	uint32_t next_free; /* under the lock */
};

static _Atomic(struct slot *) chunks[MAX_CHUNKS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t n_slots;                             /* slots ever used */
static uint32_t free_head = NO_SLOT, free_tail = NO_SLOT; /* FIFO of freed slots */

static struct slot *slot_at(uint32_t i)
{
	struct slot *c = atomic_load_explicit(&chunks[i / CHUNK_SLOTS], memory_order_acquire);

	return c ? &c[i % CHUNK_SLOTS] : NULL;
}

static uintptr_t encode(uint32_t gen, enum tp_handle_kind kind, uint32_t i)
{
	return (uintptr_t)((uint64_t)gen << 32 | (uint64_t)kind << INDEX_BITS | (i + 1));
}

/* The slot index a handle names, or NO_SLOT. */
static uint32_t index_of(uintptr_t h)
{
	uint32_t low = (uint32_t)h & INDEX_MASK;

	return low == 0 || low - 1 >= MAX_CHUNKS * CHUNK_SLOTS ? NO_SLOT : low - 1;
}

/* A free slot's index, or NO_SLOT. Under the lock. */
static uint32_t slot_take(void)
{
	uint32_t i = free_head;

	if (i != NO_SLOT) {
		free_head = slot_at(i)->next_free;
		if (free_head == NO_SLOT)
			free_tail = NO_SLOT;
		return i;
	}
	if (n_slots == MAX_CHUNKS * CHUNK_SLOTS)
		return NO_SLOT;
	if (n_slots % CHUNK_SLOTS == 0) {
		struct slot *c = calloc(CHUNK_SLOTS, sizeof(*c));

		if (!c)
			return NO_SLOT;
		atomic_store_explicit(&chunks[n_slots / CHUNK_SLOTS], c, memory_order_release);
	}
	return n_slots++;
}

uintptr_t tp_handle_make(enum tp_handle_kind kind, void *obj, const void *owner)
{
	uint32_t i, gen;
	struct slot *s;

	pthread_mutex_lock(&lock);
	i = slot_take();
	if (i == NO_SLOT) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	s = slot_at(i);
	s->owner = owner;
	atomic_store_explicit(&s->obj, obj, memory_order_relaxed);
	atomic_store_explicit(&s->kind, (uint32_t)kind, memory_order_relaxed);
	gen = atomic_load_explicit(&s->gen, memory_order_relaxed) + 1; /* odd: alive */
	atomic_store_explicit(&s->gen, gen, memory_order_release);
	pthread_mutex_unlock(&lock);
	return encode(gen, kind, i);
}

enum tp_handle_look tp_handle_look(uintptr_t h, enum tp_handle_kind kind, void **obj)
{
	uint32_t i = index_of(h), want = (uint32_t)((uint64_t)h >> 32), g;
	struct slot *s;
	void *o;

	if (i == NO_SLOT || (((uint32_t)h >> INDEX_BITS) & 3u) != (uint32_t)kind || !(want & 1))
		return TP_HANDLE_NONE;
	s = slot_at(i);
	if (!s)
		return TP_HANDLE_NONE;
	g = atomic_load_explicit(&s->gen, memory_order_acquire);
	if (g != want)
		return g - want < 0x80000000u ? TP_HANDLE_GONE : TP_HANDLE_NONE;
	o = atomic_load_explicit(&s->obj, memory_order_acquire);
	if (atomic_load_explicit(&s->kind, memory_order_relaxed) != (uint32_t)kind ||
	    atomic_load_explicit(&s->gen, memory_order_acquire) != want)
		return TP_HANDLE_GONE;
	*obj = o;
	return TP_HANDLE_LIVE;
}

/* Free slot @i if @gen is its live generation. Under the lock. */
static void slot_drop(uint32_t i, uint32_t gen)
{
	struct slot *s = slot_at(i);

	if (!s || atomic_load_explicit(&s->gen, memory_order_relaxed) != gen || !(gen & 1))
		return;
	atomic_store_explicit(&s->obj, NULL, memory_order_relaxed);
	atomic_store_explicit(&s->gen, gen + 1, memory_order_release);
	s->owner = NULL;
	s->next_free = NO_SLOT;
	if (free_tail == NO_SLOT)
		free_head = i;
	else
		slot_at(free_tail)->next_free = i;
	free_tail = i;
}

void tp_handle_drop(uintptr_t h)
{
	uint32_t i = index_of(h);

	if (i == NO_SLOT)
		return;
	pthread_mutex_lock(&lock);
	slot_drop(i, (uint32_t)((uint64_t)h >> 32));
	pthread_mutex_unlock(&lock);
}

void tp_handle_drop_owner(const void *owner)
{
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0; i < n_slots; i++) {
		struct slot *s = slot_at(i);
		uint32_t g = atomic_load_explicit(&s->gen, memory_order_relaxed);

		if ((g & 1) && s->owner == owner)
			slot_drop(i, g);
	}
	pthread_mutex_unlock(&lock);
}
