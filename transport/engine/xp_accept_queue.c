// SPDX-License-Identifier: MIT
/*
 * xp_accept_queue.c - a listener's waiting dials and accepts, paired oldest
 * first (xp_accept_queue.h): two FIFOs of 64-bit values in rings, the dials'
 * sized once to the backlog, the accepts' doubling when full.
 */
#include <errno.h>
#include <stdlib.h>

#include "xp_accept_queue.h"

#define FIRST_ACCEPTS 16

/* Give @f room for @cap values, keeping its values in order (from index 0). */
static int fifo_resize(struct xp_accept_fifo *f, uint32_t cap)
{
	uint64_t *v = malloc((size_t)cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->n; i++)
		v[i] = f->v[(f->head + i) % f->cap];
	free(f->v);
	f->v = v;
	f->head = 0;
	f->cap = cap;
	return 0;
}

static int fifo_push(struct xp_accept_fifo *f, uint64_t value)
{
	if (f->n == f->cap && fifo_resize(f, f->cap ? 2 * f->cap : FIRST_ACCEPTS) < 0)
		return -ENOMEM;
	f->v[(f->head + f->n) % f->cap] = value;
	f->n++;
	return 0;
}

static bool fifo_pop(struct xp_accept_fifo *f, uint64_t *value)
{
	if (!f->n)
		return false;
	*value = f->v[f->head];
	f->head = (f->head + 1) % f->cap;
	f->n--;
	return true;
}

static void fifo_free(struct xp_accept_fifo *f)
{
	free(f->v);
	*f = (struct xp_accept_fifo){0};
}

int xp_accept_queue_init(struct xp_accept_queue *q, uint32_t backlog)
{
	*q = (struct xp_accept_queue){.backlog = backlog};
	if (!backlog)
		return -EINVAL;
	return fifo_resize(&q->dials, backlog);
}

void xp_accept_queue_fini(struct xp_accept_queue *q)
{
	fifo_free(&q->dials);
	fifo_free(&q->accepts);
	q->backlog = 0;
}

int xp_accept_queue_dial(struct xp_accept_queue *q, uint64_t dial)
{
	if (xp_accept_queue_full(q))
		return -ECONNREFUSED;
	return fifo_push(&q->dials, dial); /* room was made at init: never -ENOMEM */
}

int xp_accept_queue_accept(struct xp_accept_queue *q, uint64_t accept)
{
	return fifo_push(&q->accepts, accept);
}

bool xp_accept_queue_match(struct xp_accept_queue *q, uint64_t *dial, uint64_t *accept)
{
	if (!q->dials.n || !q->accepts.n)
		return false;
	fifo_pop(&q->dials, dial);
	fifo_pop(&q->accepts, accept);
	return true;
}

bool xp_accept_queue_take_dial(struct xp_accept_queue *q, uint64_t *dial)
{
	return fifo_pop(&q->dials, dial);
}

bool xp_accept_queue_take_accept(struct xp_accept_queue *q, uint64_t *accept)
{
	return fifo_pop(&q->accepts, accept);
}
