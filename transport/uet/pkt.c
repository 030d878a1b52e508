// SPDX-License-Identifier: MIT
/*
 * pkt.c - the packet pool (slabs of 4,096 cache-aligned packets) and the
 * view of a packet that hooks and records get.
 */
#include <stdlib.h>
#include <string.h>

#include "pkt.h"

#define PKT_SLAB 4096

static int grow(struct uet_pkt_pool *pool)
{
	struct uet_pkt *slab;

	if (pool->n_slabs == pool->cap_slabs) {
		size_t cap = pool->cap_slabs ? pool->cap_slabs * 2 : 16;
		void **a = realloc(pool->slabs, cap * sizeof(*a));

		if (!a)
			return -1;
		pool->slabs = a;
		pool->cap_slabs = cap;
	}
	slab = uet_mem_zalloc(pool->mem, PKT_SLAB * sizeof(*slab));
	if (!slab)
		return -1;
	pool->slabs[pool->n_slabs++] = slab;
	for (size_t i = 0; i < PKT_SLAB; i++) {
		slab[i].next = pool->free;
		pool->free = &slab[i];
	}
	return 0;
}

struct uet_pkt *uet_pkt_alloc(struct uet_pkt_pool *pool)
{
	struct uet_pkt *p = pool->free;

	if (__builtin_expect(!p, 0)) {
		if (grow(pool) < 0) {
			pool->oom = true;
			return NULL;
		}
		p = pool->free;
	}
	pool->free = UET_PKT_NEXT(p);
	pool->live++;
	p->egress_hint = 0;
	return p;
}

void uet_pkt_pool_fini(struct uet_pkt_pool *pool)
{
	struct uet_mem *mem = pool->mem;

	for (size_t i = 0; i < pool->n_slabs; i++)
		uet_mem_free(mem, pool->slabs[i], PKT_SLAB * sizeof(struct uet_pkt));
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
	v->nack_code = p->nack_code;
	v->entropy = p->entropy;
	v->wire_bytes = p->wire;
	v->payload_bytes = p->payload;
}
