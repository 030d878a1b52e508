// SPDX-License-Identifier: MIT
/*
 * ring.c - sizing the (time, value) FIFO of uet_nic_ring.h: new arrays, the
 * entries laid out from slot 0.
 */
#include <errno.h>

#include "uet_nic_ring.h"

int uet_ring_resize(struct uet_ring *r, struct uet_mem *mem, uint32_t cap)
{
	uint64_t *t = uet_mem_alloc(mem, cap * sizeof(*t));
	uint32_t *v = uet_mem_alloc(mem, cap * sizeof(*v));
	uint32_t len;

	if (!t || !v) {
		uet_mem_free(mem, t, cap * sizeof(*t));
		uet_mem_free(mem, v, cap * sizeof(*v));
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < r->len; i++) {
		t[i] = r->t[uet_ring_slot(r, i)];
		v[i] = r->v[uet_ring_slot(r, i)];
	}
	len = r->len;
	uet_ring_free(r, mem);
	r->t = t;
	r->v = v;
	r->len = len;
	r->cap = cap;
	return 0;
}

void uet_ring_free(struct uet_ring *r, struct uet_mem *mem)
{
	uet_mem_free(mem, r->t, r->cap * sizeof(*r->t));
	uet_mem_free(mem, r->v, r->cap * sizeof(*r->v));
	r->t = NULL;
	r->v = NULL;
	r->head = r->len = r->cap = 0;
}
