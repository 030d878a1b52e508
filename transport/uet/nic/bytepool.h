/* SPDX-License-Identifier: MIT */
/*
 * bytepool.h - a NIC buffer counted in bytes whose reservations are released
 * at scheduled times (bytepool.c): the egress and receive pools.
 */
#ifndef PCM_UET_BYTEPOOL_H
#define PCM_UET_BYTEPOOL_H

#include <stdint.h>

#include "uet_nic_ring.h"

struct uet_bytepool {
	uint64_t used;          /* reserved, releases up to the last drain applied */
	struct uet_ring rel;    /* scheduled releases (time, bytes), times non-decreasing */
};

/* Apply the releases due by @now_ps. */
static inline void uet_bytepool_drain(struct uet_bytepool *p, uint64_t now_ps)
{
	struct uet_ring *r = &p->rel;

	while (r->len && r->e[r->head].t <= now_ps) {
		p->used -= r->e[r->head].v;
		uet_ring_pop(r);
	}
}

/*
 * Schedule the release of @bytes (already counted in used) at @end_ps, the
 * FIFO growing from @mem. Return: 0, -ENOMEM.
 */
static inline int uet_bytepool_release_at(struct uet_bytepool *p, struct uet_mem *mem,
					  uint64_t end_ps, uint32_t bytes)
{
	return uet_ring_push(&p->rel, mem, end_ps, bytes);
}
/* When the scheduled releases bring used to @level or below; UINT64_MAX if they never do. */
uint64_t uet_bytepool_time_at_or_below(const struct uet_bytepool *p, uint64_t level);
void uet_bytepool_free(struct uet_bytepool *p, struct uet_mem *mem);

#endif /* PCM_UET_BYTEPOOL_H */
