// SPDX-License-Identifier: MIT
/*
 * pkt.c - the packet pool and the view of a packet that hooks and records
 * get. Whole packets come from slabs of 4,096 cache lines, data packets
 * from slabs of 4,096 half lines (pkt.h). Under a sanitizer every packet is
 * a block of its own, so that a data packet's neighbour is not its
 * overflow.
 */
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "pkt.h"

#define PKT_SLAB (UET_MEM_SANITIZED ? 1 : 4096)

/* A slab of packets of @size bytes onto the free list at @free. Return: 0, -1. */
static int grow(struct uet_pkt_pool *pool, size_t size, struct uet_pkt **free)
{
	size_t bytes = PKT_SLAB * size;
	char *slab;

	if (pool->n_slabs == pool->cap_slabs) {
		size_t cap = pool->cap_slabs ? pool->cap_slabs * 2 : 16;
		struct uet_pkt_slab *a = realloc(pool->slabs, cap * sizeof(*a));

		if (!a)
			return -1;
		pool->slabs = a;
		pool->cap_slabs = cap;
	}
	slab = uet_mem_zalloc(pool->mem, bytes);
	if (!slab)
		return -1;
	pool->slabs[pool->n_slabs++] = (struct uet_pkt_slab){ .p = slab, .bytes = bytes };
	for (size_t i = 0; i < PKT_SLAB; i++) {
		struct uet_pkt *p = (struct uet_pkt *)(slab + i * size);

		p->next = *free;
		*free = p;
	}
	return 0;
}

/* The head of @free, growing it by a slab of @size-byte packets when empty. */
static struct uet_pkt *take(struct uet_pkt_pool *pool, size_t size, struct uet_pkt **free)
{
	struct uet_pkt *p = *free;

	if (__builtin_expect(!p, 0)) {
		if (grow(pool, size, free) < 0) {
			pool->oom = true;
			return NULL;
		}
		p = *free;
	}
	*free = UET_PKT_NEXT(p);
	pool->live++;
	return p;
}

struct uet_pkt *uet_pkt_alloc(struct uet_pkt_pool *pool)
{
	struct uet_pkt *p = take(pool, sizeof(*p), &pool->free);

	/* not a data packet, should it be given back before its kind is set */
	if (p) {
		p->kind = UET_PKT_KIND_COUNT;
		p->egress_hint = 0;
	}
	return p;
}

struct uet_pkt *uet_pkt_alloc_data(struct uet_pkt_pool *pool)
{
	struct uet_pkt *p = take(pool, UET_PKT_DATA_BYTES, &pool->free_data);

	if (p)
		p->kind = UET_PKT_DATA;
	return p;
}

struct uet_pkt *uet_pkt_lengthen(struct uet_pkt_pool *pool, struct uet_pkt *p)
{
	struct uet_pkt *whole = uet_pkt_alloc(pool);

	if (whole) {
		memcpy(whole, p, UET_PKT_DATA_BYTES);
		memset((char *)whole + UET_PKT_DATA_BYTES, 0, sizeof(*whole) - UET_PKT_DATA_BYTES);
	}
	uet_pkt_free(pool, p);
	return whole;
}

void uet_pkt_pool_fini(struct uet_pkt_pool *pool)
{
	struct uet_mem *mem = pool->mem;

	for (size_t i = 0; i < pool->n_slabs; i++)
		uet_mem_free(mem, pool->slabs[i].p, pool->slabs[i].bytes);
	free(pool->slabs);
	memset(pool, 0, sizeof(*pool));
	pool->mem = mem;
}

void uet_pkt_view(const struct uet_pkt *p, uint64_t t_ps, uint32_t at, bool rx,
		  struct uet_pkt_view *v)
{
	bool ack = p->kind == UET_PKT_ACK;

	v->t_ps = t_ps;
	v->nic = at;
	v->rx = rx;
	v->kind = (enum uet_pkt_kind)p->kind;
	v->dscp = (enum uet_dscp)p->dscp;
	v->flags = p->flags;
	v->src = p->src;
	v->dst = p->dst;
	v->pdc = p->pdc;
	v->psn = p->psn;
	v->cack = ack ? (int64_t)p->cack - 1 : -1;
	v->sack_base = ack ? p->sack_base : 0;
	v->sack_bits = ack ? p->sack_bits : 0;
	v->service_ps = ack ? (uint32_t)p->service_units * UET_SERVICE_STEP_PS : 0;
	v->nack_code = p->kind == UET_PKT_DATA ? 0 : p->nack_code;
	v->entropy = p->entropy;
	v->wire_bytes = p->wire;
	v->payload_bytes = uet_pkt_payload(p);
}
