// SPDX-License-Identifier: MIT
/*
 * ring.c - growing the (time, value) FIFO of uet_nic_ring.h: double the arrays and
 * lay the entries out from slot 0.
 */
#include <errno.h>
#include <stdlib.h>

#include "uet_nic_ring.h"

int uet_ring_grow(struct uet_ring *r)
{
	uint32_t cap = r->cap ? r->cap * 2 : 16;
	uint64_t *t = malloc(cap * sizeof(*t));
	uint32_t *v = malloc(cap * sizeof(*v));

	if (!t || !v) {
		free(t);
		free(v);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < r->len; i++) {
		t[i] = r->t[uet_ring_slot(r, i)];
		v[i] = r->v[uet_ring_slot(r, i)];
	}
	free(r->t);
	free(r->v);
	r->t = t;
	r->v = v;
	r->head = 0;
	r->cap = cap;
	return 0;
}

void uet_ring_free(struct uet_ring *r)
{
	free(r->t);
	free(r->v);
	r->t = NULL;
	r->v = NULL;
	r->head = r->len = r->cap = 0;
}
