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
 * A packet. It is its own DES event (uet_des_arm()): a packet is either
 * travelling (ARRIVE), fetching (FETCH_DONE), held (ACK_RELEASE), or queued,
 * never two at once; a queued or free packet links through next.
 *
 * A data packet is the first UET_PKT_DATA_BYTES (32) only: a block of its
 * own, so that the packets a large fabric has in flight, which every hop
 * touches, take half a cache line each. Its payload is not stored
 * (uet_pkt_payload()). Every other kind is the whole 64 bytes; a data
 * packet that becomes its ACK or NACK is copied into one
 * (uet_pkt_lengthen()). Node ids take 21 bits (UET_PKT_MAX_NODES). A whole
 * packet keeps the egress port that prefetching routed ahead at a switch; a
 * data packet is routed again when it arrives.
 */
struct uet_pkt {
	/* a data packet's 32 bytes */
	struct uet_pkt *next;
	uint64_t node : 21;  /* node the packet travels to */
	uint64_t src : 21, dst : 21;
	uint32_t pdc;        /* sender PDC id */
	uint32_t psn;
	uint16_t wire;
	uint16_t entropy;
	uint8_t kind, dscp, flags;
	uint8_t retx_level;  /* DATA: retransmissions before this one (saturating; timer backoff) */
	/* the other kinds' */
	uint16_t raw_payload;   /* RAW: payload bytes (every kind's: uet_pkt_payload()) */
	uint16_t service_units; /* ACK: receiver service time in UET_SERVICE_STEP_PS */
	uint8_t nack_code;
	uint8_t ce;          /* ACK: CE-marked packets since the previous ACK */
	uint32_t egress_hint; /* at a switch: its egress port + 1, routed ahead (0: not yet) */
	union {
		uint64_t sack_bits; /* ACK */
		uint64_t value;     /* PROBE: send time; CREDIT_REQ: bytes; CREDIT: cumulative credit; RAW: cookie */
	};
	uint32_t cack;       /* ACK: next expected PSN (everything below received) */
	uint32_t sack_base;
} __attribute__((aligned(32)));

#define UET_PKT_DATA_BYTES 32
#define UET_PKT_MAX_NODES ((1u << 21) - 1)

_Static_assert(sizeof(struct uet_pkt) == 64, "a packet is one cache line");
_Static_assert(offsetof(struct uet_pkt, raw_payload) == UET_PKT_DATA_BYTES,
	       "a data packet's fields come first");

#define UET_PKT_NEXT(p) ((p)->next)

struct uet_pkt_pool {
	struct uet_pkt *free;      /* whole packets given back */
	struct uet_pkt *free_data; /* data packets' blocks given back */
	uint64_t live;           /* allocated and not freed */
	uint64_t raw_live;       /* of which raw queue pairs' (a run waits for them) */
	struct uet_pkt_slab {
		void *p;
		size_t bytes;
	} *slabs;
	size_t n_slabs, cap_slabs;
	struct uet_mem *mem;     /* the slabs' */
	bool oom;                /* an allocation failed */
};

/* A packet of any kind but DATA from @pool (its fields hold garbage), or NULL and pool->oom set. */
struct uet_pkt *uet_pkt_alloc(struct uet_pkt_pool *pool);

/* A data packet (its kind set, its other fields garbage), or NULL and pool->oom set. */
struct uet_pkt *uet_pkt_alloc_data(struct uet_pkt_pool *pool);

/*
 * @p, a data packet, as a whole packet about to become another kind: its
 * first 32 bytes copied, the rest zero; @p is given back. NULL (and @p given
 * back, pool->oom set) if none can be had.
 */
struct uet_pkt *uet_pkt_lengthen(struct uet_pkt_pool *pool, struct uet_pkt *p);

static inline bool uet_dscp_is_trimmed(uint8_t dscp)
{
	return dscp == UET_DSCP_TRIMMED || dscp == UET_DSCP_TRIMMED_LAST_HOP;
}

/* Payload bytes @p carries: a data packet's follow from its size, 0 once trimmed. */
static inline uint32_t uet_pkt_payload(const struct uet_pkt *p)
{
	if (p->kind != UET_PKT_DATA)
		return p->raw_payload;
	return uet_dscp_is_trimmed(p->dscp) ? 0 : (uint32_t)p->wire - UET_WIRE_HDR_BYTES;
}

static inline void uet_pkt_free(struct uet_pkt_pool *pool, struct uet_pkt *p)
{
	pool->live--;
	if (p->kind == UET_PKT_DATA) {
		p->next = pool->free_data;
		pool->free_data = p;
		return;
	}
	if (p->kind == UET_PKT_RAW)
		pool->raw_live--;
	p->next = pool->free;
	pool->free = p;
}

/* Zero everything but the link of a packet that is not a data packet. */
static inline void uet_pkt_clear(struct uet_pkt *p)
{
	__builtin_memset((char *)p + sizeof(p->next), 0, sizeof(*p) - sizeof(p->next));
}

void uet_pkt_pool_fini(struct uet_pkt_pool *pool);

/* What hooks and records see of @p at @t_ps, sent or received (@rx) at node @at. */
void uet_pkt_view(const struct uet_pkt *p, uint64_t t_ps, uint32_t at, bool rx,
		  struct uet_pkt_view *v);

#endif /* PCM_UET_PKT_H */
