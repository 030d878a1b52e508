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
#include "bytepool.h"

uint64_t uet_bytepool_time_at_or_below(const struct uet_bytepool *p, uint64_t level)
{
	const struct uet_ring *r = &p->rel;
	uint64_t used = p->used;

	for (uint32_t i = 0; i < r->len; i++) {
		uint32_t j = uet_ring_slot(r, i);

		used -= r->e[j].v;
		if (used <= level)
			return r->e[j].t;
	}
	return UINT64_MAX;
}

void uet_bytepool_free(struct uet_bytepool *p, struct uet_mem *mem)
{
	uet_ring_free(&p->rel, mem);
}
