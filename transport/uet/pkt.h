/* SPDX-License-Identifier: MIT */
/*
 * pkt.h - the emulation's packet and its pool. A packet is its own DES
 * event, so moving it through the fabric allocates nothing; packets come
 * from slabs and go back to a free list.
 */
#ifndef PCM_UET_PKT_H
#define PCM_UET_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "des.h"
#include "uet.h"

/*
 * A packet: one cache line. It is its own DES event (uet_des_arm()): a packet
 * is either travelling (ARRIVE), fetching (FETCH_DONE), held (ACK_RELEASE),
 * or queued, never two at once; a queued or free packet links through next.
 */
struct uet_pkt {
	struct uet_pkt *next;
	uint32_t node;       /* node the packet travels to */
	uint32_t src, dst;
	uint32_t pdc;        /* sender PDC id */
	uint32_t psn;
	uint16_t wire;
	uint16_t payload;
	uint16_t entropy;
	uint16_t service_units; /* ACK: receiver service time in UET_SERVICE_STEP_PS */
	uint8_t kind, dscp, flags, nack_code;
	uint8_t ce;          /* ACK: CE-marked packets since the previous ACK */
	uint8_t retx_level;  /* DATA: retransmissions before this one (saturating; timer backoff) */
	uint32_t egress_hint; /* at a switch: its egress port + 1, routed ahead (0: not yet) */
	union {
		uint64_t sack_bits; /* ACK */
		uint64_t value;     /* PROBE: send time; CREDIT_REQ: bytes; CREDIT: cumulative credit; RAW: cookie */
	};
	uint32_t cack;       /* ACK: next expected PSN (everything below received) */
	uint32_t sack_base;
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct uet_pkt) == 64, "a packet is one cache line");

#define UET_PKT_NEXT(p) ((p)->next)

struct uet_pkt_pool {
	struct uet_pkt *free;
	uint64_t live;           /* allocated and not freed */
	uint64_t raw_live;       /* of which raw queue pairs' (a run waits for them) */
	void **slabs;
	size_t n_slabs, cap_slabs;
	struct uet_mem *mem;     /* the slabs' */
	bool oom;                /* an allocation failed */
};

/* A packet from @pool (its fields hold garbage), or NULL and pool->oom set. */
struct uet_pkt *uet_pkt_alloc(struct uet_pkt_pool *pool);

static inline void uet_pkt_free(struct uet_pkt_pool *pool, struct uet_pkt *p)
{
	if (p->kind == UET_PKT_RAW)
		pool->raw_live--;
	pool->live--;
	p->next = pool->free;
	pool->free = p;
}

/* Zero everything but the link. */
static inline void uet_pkt_clear(struct uet_pkt *p)
{
	__builtin_memset((char *)p + sizeof(p->next), 0, sizeof(*p) - sizeof(p->next));
}

void uet_pkt_pool_fini(struct uet_pkt_pool *pool);

/* What hooks and records see of @p at @t_ps, sent or received (@rx) at node @at. */
void uet_pkt_view(const struct uet_pkt *p, uint64_t t_ps, uint32_t at, bool rx,
		  struct uet_pkt_view *v);

#endif /* PCM_UET_PKT_H */
