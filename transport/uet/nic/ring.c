// SPDX-License-Identifier: MIT
/*
 * ring.c - sizing the (time, value) FIFO of uet_nic_ring.h: new arrays, the
 * entries laid out from slot 0.
 */
#include <errno.h>

#include "uet_nic_ring.h"

int uet_ring_resize(struct uet_ring *r, struct uet_mem *mem, uint32_t cap)
{
	struct uet_ring_ent *e = uet_mem_alloc(mem, cap * sizeof(*e));
	uint32_t len;

	if (!e)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->len; i++)
		e[i] = r->e[uet_ring_slot(r, i)];
	len = r->len;
	uet_ring_free(r, mem);
	r->e = e;
	r->len = len;
	r->cap = cap;
	return 0;
}

void uet_ring_free(struct uet_ring *r, struct uet_mem *mem)
{
	uet_mem_free(mem, r->e, r->cap * sizeof(*r->e));
	r->e = NULL;
	r->head = r->len = r->cap = 0;
}
