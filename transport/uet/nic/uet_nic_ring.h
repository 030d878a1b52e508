/* SPDX-License-Identifier: MIT */
/*
 * uet_nic_ring.h - a growable FIFO of (time, value) pairs (ring.c): a PDC's
 * retransmission deadlines and their PSNs (rto.c), a pool's scheduled
 * releases and their bytes (bytepool.c). Both are pushed in time order.
 * A pair is 12 bytes, its time beside its value, so reading or writing an
 * entry touches one cache line (rarely two) on a fabric whose rings are
 * not cached.
 */
#ifndef UET_NIC_RING_H
#define UET_NIC_RING_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "mem.h"

struct uet_ring_ent {
	uint64_t t;
	uint32_t v;
} __attribute__((packed));

struct uet_ring {
	struct uet_ring_ent *e;
	uint32_t head, len, cap;
};

/* The slot of the @i-th entry from the head. */
static inline uint32_t uet_ring_slot(const struct uet_ring *r, uint32_t i)
{
	uint32_t s = r->head + i;

	return s < r->cap ? s : s - r->cap;
}

static inline void uet_ring_pop(struct uet_ring *r)
{
	r->head = r->head + 1 == r->cap ? 0 : r->head + 1;
	r->len--;
}

/* Room for @cap (>= len) entries, from @mem. Return: 0, -ENOMEM. */
int uet_ring_resize(struct uet_ring *r, struct uet_mem *mem, uint32_t cap);

/* Double the room of a full ring. Return: 0, -ENOMEM. */
static inline int uet_ring_grow(struct uet_ring *r, struct uet_mem *mem)
{
	return uet_ring_resize(r, mem, r->cap ? r->cap * 2 : 16);
}

/* Append (@t, @v), growing from @mem. Return: 0, -ENOMEM. */
static inline int uet_ring_push(struct uet_ring *r, struct uet_mem *mem, uint64_t t, uint32_t v)
{
	uint32_t tail;

	if (__builtin_expect(r->len == r->cap, 0) && uet_ring_grow(r, mem) < 0)
		return -ENOMEM;
	tail = uet_ring_slot(r, r->len);
	r->e[tail].t = t;
	r->e[tail].v = v;
	r->len++;
	return 0;
}
/* Give the ring's arrays back to @mem; the ring is empty. */
void uet_ring_free(struct uet_ring *r, struct uet_mem *mem);

#endif /* UET_NIC_RING_H */
