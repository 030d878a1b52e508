/* SPDX-License-Identifier: MIT */
/*
 * timerq.h - a min-heap of deadlines, one per id (the core keeps one per
 * connection: the earliest of its RACK, TLP, RTO, control-retransmit,
 * no-progress, CC-tick and quarantine deadlines).
 *
 * Ties break by id, so the order timers fire in depends on the inputs only.
 * Memory is fixed at creation; set and cancel are O(log n).
 */
#ifndef XP_TIMERQ_H
#define XP_TIMERQ_H

#include <stdint.h>

struct xp_timerq {
	uint32_t n_ids;
	uint32_t len;         /* armed ids */
	uint32_t *heap;       /* ids, heap-ordered by (deadline, id) */
	uint32_t *pos;        /* id -> index in heap, or UINT32_MAX */
	uint64_t *deadline_ns;/* id -> deadline */
};

/**
 * xp_timerq_init() - an empty queue for ids 0..@n_ids-1.
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int xp_timerq_init(struct xp_timerq *q, uint32_t n_ids);

/**
 * xp_timerq_fini() - free the queue's memory.
 * @q: the queue.
 */
void xp_timerq_fini(struct xp_timerq *q);

/**
 * xp_timerq_set() - arm (or move) @id's deadline to @deadline_ns.
 */
void xp_timerq_set(struct xp_timerq *q, uint32_t id, uint64_t deadline_ns);

/**
 * xp_timerq_cancel() - disarm @id; nothing happens if it is not armed.
 */
void xp_timerq_cancel(struct xp_timerq *q, uint32_t id);

/**
 * xp_timerq_next() - the earliest deadline.
 *
 * Return: the earliest deadline, or UINT64_MAX when nothing is armed.
 */
static inline uint64_t xp_timerq_next(const struct xp_timerq *q)
{
	return q->len ? q->deadline_ns[q->heap[0]] : UINT64_MAX;
}

/**
 * xp_timerq_pop_due() - disarm and return the id with the earliest deadline
 * if it is at or before @now_ns.
 *
 * Return: the id, or UINT32_MAX if none is due.
 */
uint32_t xp_timerq_pop_due(struct xp_timerq *q, uint64_t now_ns);

#endif /* XP_TIMERQ_H */
