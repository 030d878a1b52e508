// SPDX-License-Identifier: MIT
/*
 * timerq.c - the deadline heap (timerq.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "timerq.h"

#define NOT_ARMED UINT32_MAX

int xp_timerq_init(struct xp_timerq *q, uint32_t n_ids)
{
	if (n_ids == 0 || n_ids == NOT_ARMED)
		return -EINVAL;
	q->heap = malloc((size_t)n_ids * sizeof(*q->heap));
	q->pos = malloc((size_t)n_ids * sizeof(*q->pos));
	q->deadline_ns = malloc((size_t)n_ids * sizeof(*q->deadline_ns));
	if (!q->heap || !q->pos || !q->deadline_ns) {
		xp_timerq_fini(q);
		return -ENOMEM;
	}
	q->n_ids = n_ids;
	q->len = 0;
	for (uint32_t i = 0; i < n_ids; i++)
		q->pos[i] = NOT_ARMED;
	return 0;
}

void xp_timerq_fini(struct xp_timerq *q)
{
	free(q->heap);
	free(q->pos);
	free(q->deadline_ns);
	q->heap = q->pos = NULL;
	q->deadline_ns = NULL;
	q->len = q->n_ids = 0;
}

static bool before(const struct xp_timerq *q, uint32_t a, uint32_t b)
{
	uint64_t da = q->deadline_ns[a], db = q->deadline_ns[b];

	return da < db || (da == db && a < b);
}

static void place(struct xp_timerq *q, uint32_t i, uint32_t id)
{
	q->heap[i] = id;
	q->pos[id] = i;
}

static void sift_up(struct xp_timerq *q, uint32_t i)
{
	uint32_t id = q->heap[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!before(q, id, q->heap[parent]))
			break;
		place(q, i, q->heap[parent]);
		i = parent;
	}
	place(q, i, id);
}

static void sift_down(struct xp_timerq *q, uint32_t i)
{
	uint32_t id = q->heap[i];

	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		uint32_t best = id;

		if (l < q->len && before(q, q->heap[l], best))
			m = l, best = q->heap[l];
		if (r < q->len && before(q, q->heap[r], best))
			m = r;
		if (m == i)
			break;
		place(q, i, q->heap[m]);
		i = m;
	}
	place(q, i, id);
}

void xp_timerq_set(struct xp_timerq *q, uint32_t id, uint64_t deadline_ns)
{
	uint32_t i = q->pos[id];

	if (i != NOT_ARMED && q->deadline_ns[id] == deadline_ns)
		return; /* most rearms after a chunk or an ACK leave the deadline as it was */
	q->deadline_ns[id] = deadline_ns;
	if (i == NOT_ARMED) {
		i = q->len++;
		place(q, i, id);
		sift_up(q, i);
		return;
	}
	sift_up(q, i);
	sift_down(q, q->pos[id]);
}

static void remove_at(struct xp_timerq *q, uint32_t i)
{
	uint32_t id = q->heap[i], last = q->heap[--q->len];

	q->pos[id] = NOT_ARMED;
	if (i == q->len)
		return;
	place(q, i, last);
	sift_up(q, i);
	sift_down(q, q->pos[last]);
}

void xp_timerq_cancel(struct xp_timerq *q, uint32_t id)
{
	if (q->pos[id] != NOT_ARMED)
		remove_at(q, q->pos[id]);
}

uint32_t xp_timerq_pop_due(struct xp_timerq *q, uint64_t now_ns)
{
	uint32_t id;

	if (!q->len || q->deadline_ns[q->heap[0]] > now_ns)
		return UINT32_MAX;
	id = q->heap[0];
	remove_at(q, 0);
	return id;
}
