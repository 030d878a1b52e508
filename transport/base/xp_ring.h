/* SPDX-License-Identifier: MIT */
/*
 * xp_ring.h - bounded lock-free rings between threads: MPSC (many producers,
 * one consumer: application threads' commands to an engine, null-datapath
 * instances' chunks to one instance) and SPSC (one producer, one consumer:
 * an engine's completions to the application).
 *
 * Both carry fixed-size elements by slot: a producer claims a slot, writes
 * it in place and publishes it; the consumer peeks the oldest published
 * slot, reads it in place and releases it. Capacities are powers of two.
 *
 * MPSC: every slot has a sequence number (the bounded queue of D. Vyukov):
 * slot i is free for the producer of position p when seq == p, published
 * when seq == p + 1, and free again for position p + cap once the consumer
 * stores seq = p + cap. Producers race on the tail with a CAS; a claimed but
 * unpublished slot holds the consumer back (never a later one), so
 * elements come out in claim order. SPSC: a head and a tail, each written
 * by one side, with cached copies of the other side's index.
 *
 * Memory order: publishing is a release store, peeking an acquire load, so
 * what a producer wrote into a slot is visible to the consumer that sees it
 * published. Not async-signal-safe; no allocation after init.
 */
#ifndef XP_RING_H
#define XP_RING_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define XP_CACHELINE 64

/* ---- MPSC --------------------------------------------------------------------------------- */

struct xp_mpsc {
	_Alignas(XP_CACHELINE) _Atomic uint64_t tail; /* producers */
	_Alignas(XP_CACHELINE) uint64_t head;         /* the consumer */
	uint64_t mask;
	size_t stride;                                /* bytes per slot: sequence + element */
	uint8_t *slots;
};

/**
 * xp_mpsc_init() - a ring of @cap elements of @elem_bytes each.
 * @r: the ring.
 * @cap: a power of two, >= 2.
 * @elem_bytes: element size.
 *
 * Return: 0, -EINVAL (@cap not a power of two), -ENOMEM.
 */
static inline int xp_mpsc_init(struct xp_mpsc *r, uint32_t cap, size_t elem_bytes)
{
	if (cap < 2 || (cap & (cap - 1)))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->stride = (sizeof(_Atomic uint64_t) + elem_bytes + 7) & ~(size_t)7;
	r->slots = aligned_alloc(XP_CACHELINE,
				 ((size_t)cap * r->stride + XP_CACHELINE - 1) & ~(size_t)(XP_CACHELINE - 1));
	if (!r->slots)
		return -ENOMEM;
	r->mask = cap - 1;
	for (uint64_t i = 0; i < cap; i++)
		atomic_init((_Atomic uint64_t *)(r->slots + i * r->stride), i);
	atomic_init(&r->tail, 0);
	return 0;
}

static inline void xp_mpsc_fini(struct xp_mpsc *r)
{
	free(r->slots);
	r->slots = NULL;
}

static inline _Atomic uint64_t *xp_mpsc_seq(const struct xp_mpsc *r, uint64_t pos)
{
	return (_Atomic uint64_t *)(r->slots + (pos & r->mask) * r->stride);
}

static inline void *xp_mpsc_elem(const struct xp_mpsc *r, uint64_t pos)
{
	return r->slots + (pos & r->mask) * r->stride + sizeof(_Atomic uint64_t);
}

/**
 * xp_mpsc_claim() - claim the next slot (any thread).
 * @r: the ring.
 * @pos: the slot's position, for xp_mpsc_publish().
 *
 * Return: the slot to write, or NULL when the ring is full.
 */
static inline void *xp_mpsc_claim(struct xp_mpsc *r, uint64_t *pos)
{
	uint64_t p = atomic_load_explicit(&r->tail, memory_order_relaxed);

	for (;;) {
		uint64_t seq = atomic_load_explicit(xp_mpsc_seq(r, p), memory_order_acquire);
		int64_t dif = (int64_t)(seq - p);

		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&r->tail, &p, p + 1,
								  memory_order_relaxed,
								  memory_order_relaxed))
				break;
		} else if (dif < 0) {
			return NULL;
		} else {
			p = atomic_load_explicit(&r->tail, memory_order_relaxed);
		}
	}
	*pos = p;
	return xp_mpsc_elem(r, p);
}

/* Make the slot claimed at @pos visible to the consumer. */
static inline void xp_mpsc_publish(struct xp_mpsc *r, uint64_t pos)
{
	atomic_store_explicit(xp_mpsc_seq(r, pos), pos + 1, memory_order_release);
}

/**
 * xp_mpsc_push() - copy one element in (claim, copy, publish).
 *
 * Return: 0, -EAGAIN (full).
 */
static inline int xp_mpsc_push(struct xp_mpsc *r, const void *elem, size_t elem_bytes)
{
	uint64_t pos;
	void *slot = xp_mpsc_claim(r, &pos);

	if (!slot)
		return -EAGAIN;
	memcpy(slot, elem, elem_bytes);
	xp_mpsc_publish(r, pos);
	return 0;
}

/**
 * xp_mpsc_peek() - the oldest published element (the consumer only).
 *
 * Return: it, or NULL when none is published.
 */
static inline void *xp_mpsc_peek(struct xp_mpsc *r)
{
	uint64_t seq = atomic_load_explicit(xp_mpsc_seq(r, r->head), memory_order_acquire);

	return seq == r->head + 1 ? xp_mpsc_elem(r, r->head) : NULL;
}

/* Hand the slot of the element peeked last back to the producers. */
static inline void xp_mpsc_release(struct xp_mpsc *r)
{
	atomic_store_explicit(xp_mpsc_seq(r, r->head), r->head + r->mask + 1,
			      memory_order_release);
	r->head++;
}

/**
 * xp_mpsc_peek_at() - the published element @i places past the oldest (the consumer only), so
 * that a consumer may hand several slots out in place and release them later.
 *
 * Return: it, or NULL when it is not published yet.
 */
static inline void *xp_mpsc_peek_at(struct xp_mpsc *r, uint64_t i)
{
	uint64_t pos = r->head + i;
	uint64_t seq = atomic_load_explicit(xp_mpsc_seq(r, pos), memory_order_acquire);

	return seq == pos + 1 ? xp_mpsc_elem(r, pos) : NULL;
}

/* Whether an element is published (the consumer only). */
static inline bool xp_mpsc_ready(struct xp_mpsc *r)
{
	return xp_mpsc_peek(r) != NULL;
}

/* ---- SPSC --------------------------------------------------------------------------------- */

struct xp_spsc {
	_Alignas(XP_CACHELINE) _Atomic uint64_t tail; /* written by the producer */
	uint64_t head_cache;                          /* the producer's view of head */
	_Alignas(XP_CACHELINE) _Atomic uint64_t head; /* written by the consumer */
	uint64_t tail_cache;                          /* the consumer's view of tail */
	_Alignas(XP_CACHELINE) uint64_t mask;
	size_t elem_bytes;
	uint8_t *slots;
};

/**
 * xp_spsc_init() - a ring of @cap elements of @elem_bytes each.
 *
 * Return: 0, -EINVAL (@cap not a power of two), -ENOMEM.
 */
static inline int xp_spsc_init(struct xp_spsc *r, uint32_t cap, size_t elem_bytes)
{
	if (cap < 2 || (cap & (cap - 1)))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->slots = calloc(cap, elem_bytes);
	if (!r->slots)
		return -ENOMEM;
	r->mask = cap - 1;
	r->elem_bytes = elem_bytes;
	atomic_init(&r->tail, 0);
	atomic_init(&r->head, 0);
	return 0;
}

static inline void xp_spsc_fini(struct xp_spsc *r)
{
	free(r->slots);
	r->slots = NULL;
}

/* The producer's next free slot, or NULL when full. */
static inline void *xp_spsc_claim(struct xp_spsc *r)
{
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	if (t - r->head_cache > r->mask) {
		r->head_cache = atomic_load_explicit(&r->head, memory_order_acquire);
		if (t - r->head_cache > r->mask)
			return NULL;
	}
	return r->slots + (t & r->mask) * r->elem_bytes;
}

/* Publish the slot xp_spsc_claim() returned. */
static inline void xp_spsc_publish(struct xp_spsc *r)
{
	atomic_store_explicit(&r->tail, atomic_load_explicit(&r->tail, memory_order_relaxed) + 1,
			      memory_order_release);
}

/* Return: 0, -EAGAIN (full). */
static inline int xp_spsc_push(struct xp_spsc *r, const void *elem)
{
	void *slot = xp_spsc_claim(r);

	if (!slot)
		return -EAGAIN;
	memcpy(slot, elem, r->elem_bytes);
	xp_spsc_publish(r);
	return 0;
}

/* The consumer's oldest element, or NULL when empty. */
static inline void *xp_spsc_peek(struct xp_spsc *r)
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	if (h == r->tail_cache) {
		r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (h == r->tail_cache)
			return NULL;
	}
	return r->slots + (h & r->mask) * r->elem_bytes;
}

/* Release the element xp_spsc_peek() returned. */
static inline void xp_spsc_release(struct xp_spsc *r)
{
	atomic_store_explicit(&r->head, atomic_load_explicit(&r->head, memory_order_relaxed) + 1,
			      memory_order_release);
}

/* Elements published and not yet released; exact only on the consumer's thread. */
static inline uint64_t xp_spsc_count(struct xp_spsc *r)
{
	return atomic_load_explicit(&r->tail, memory_order_acquire) -
	       atomic_load_explicit(&r->head, memory_order_acquire);
}

#endif /* XP_RING_H */
