// SPDX-License-Identifier: MIT
/*
 * bytepool.c - a NIC buffer counted in bytes whose reservations end at known
 * times: the egress pool (held from fetch until serialization ends) and the
 * receive pool (held from arrival until the PCIe write is done).
 *
 * Reservations are released in the order they were scheduled, and each pool's
 * release times never decrease (one serializer, one PCIe direction), so a FIFO
 * of (time, bytes) releases them lazily: a pool drains itself to `now` before
 * it is read.
 */
#include <errno.h>
#include <stdlib.h>

#include "bytepool.h"

void uet_bytepool_drain(struct uet_bytepool *p, uint64_t now_ps)
{
	while (p->len && p->end_ps[p->head] <= now_ps) {
		p->used -= p->bytes[p->head];
		p->head = p->head + 1 == p->cap ? 0 : p->head + 1;
		p->len--;
	}
}

static int grow(struct uet_bytepool *p)
{
	uint32_t cap = p->cap ? p->cap * 2 : 64;
	uint64_t *e = malloc(cap * sizeof(*e));
	uint32_t *b = malloc(cap * sizeof(*b));

	if (!e || !b) {
		free(e);
		free(b);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < p->len; i++) {
		e[i] = p->end_ps[(p->head + i) % p->cap];
		b[i] = p->bytes[(p->head + i) % p->cap];
	}
	free(p->end_ps);
	free(p->bytes);
	p->end_ps = e;
	p->bytes = b;
	p->head = 0;
	p->cap = cap;
	return 0;
}

int uet_bytepool_release_at(struct uet_bytepool *p, uint64_t end_ps, uint32_t bytes)
{
	uint32_t tail;

	if (p->len == p->cap && grow(p) < 0)
		return -ENOMEM;
	tail = p->head + p->len < p->cap ? p->head + p->len : p->head + p->len - p->cap;
	p->end_ps[tail] = end_ps;
	p->bytes[tail] = bytes;
	p->len++;
	return 0;
}

uint64_t uet_bytepool_time_at_or_below(const struct uet_bytepool *p, uint64_t level)
{
	uint64_t used = p->used;

	for (uint32_t i = 0; i < p->len; i++) {
		uint32_t j = p->head + i < p->cap ? p->head + i : p->head + i - p->cap;

		used -= p->bytes[j];
		if (used <= level)
			return p->end_ps[j];
	}
	return UINT64_MAX;
}

void uet_bytepool_free(struct uet_bytepool *p)
{
	free(p->end_ps);
	free(p->bytes);
	p->end_ps = NULL;
	p->bytes = NULL;
	p->head = p->len = p->cap = 0;
}
