/* SPDX-License-Identifier: MIT */
/*
 * xp_accept_queue.h - where one listener's dials meet its accepts: the dials
 * that arrived and wait for an accept (at most the backlog), and the accepts
 * asked for that wait for a dial, each kept in arrival order. A dial and an
 * accept meet as soon as both wait, the oldest of each first, so the k-th
 * accept takes the k-th dial that was not refused.
 *
 * Both of libpcmtransport's worlds match this way through it: pcmd's engine
 * data plane (daemon/plane_engine_listen.c, a dial being an accepted flow) and
 * the in-process backend (transport/api/inproc.c, a dial being a bootstrap
 * request). To the queue a dial and an accept are opaque 64-bit values (a flow
 * id, a pointer, a caller's token); it never looks inside them.
 *
 * Not thread-safe: its owner serializes the calls (pcmd's loop; the
 * endpoint's lock).
 */
#ifndef XP_ACCEPT_QUEUE_H
#define XP_ACCEPT_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

/* A FIFO of values in a ring that grows (the queue's own). */
struct xp_accept_fifo {
	uint64_t *v;
	uint32_t head, n, cap;
};

struct xp_accept_queue {
	struct xp_accept_fifo dials;   /* waiting for an accept; room for backlog, made at init */
	struct xp_accept_fifo accepts; /* waiting for a dial; grows */
	uint32_t backlog;
};

/**
 * xp_accept_queue_init() - an empty queue whose room for @backlog dials is
 * made now, so that a dial taken while the queue is not full never fails.
 * @q: the queue (its previous contents are not freed).
 * @backlog: dials that may wait at once (>= 1).
 *
 * Return: 0, -EINVAL (@backlog is 0), -ENOMEM.
 */
int xp_accept_queue_init(struct xp_accept_queue *q, uint32_t backlog);

/* Free what the queue holds (not the values' objects); a zeroed or finished queue is fine. */
void xp_accept_queue_fini(struct xp_accept_queue *q);

/* Are @backlog dials waiting already (a new one would be refused)? */
static inline bool xp_accept_queue_full(const struct xp_accept_queue *q)
{
	return q->dials.n >= q->backlog;
}

/**
 * xp_accept_queue_dial() - a dial arrived: it waits behind the others.
 * @q: the queue.
 * @dial: the caller's value for it.
 *
 * Return: 0, -ECONNREFUSED (the backlog is full: the dial is not kept).
 */
int xp_accept_queue_dial(struct xp_accept_queue *q, uint64_t dial);

/**
 * xp_accept_queue_accept() - an accept was asked for: it waits behind the others.
 * @q: the queue.
 * @accept: the caller's value for it.
 *
 * Return: 0, -ENOMEM (the accept is not kept).
 */
int xp_accept_queue_accept(struct xp_accept_queue *q, uint64_t accept);

/**
 * xp_accept_queue_match() - take the oldest waiting dial and the oldest
 * waiting accept, when both wait.
 * @q: the queue.
 * @dial: the dial's value.
 * @accept: the accept's value.
 *
 * Return: true when a pair was taken; false (nothing changed) when either side is empty.
 */
bool xp_accept_queue_match(struct xp_accept_queue *q, uint64_t *dial, uint64_t *accept);

/* For a listener that closes: take the oldest waiting dial. Return: false when none is left. */
bool xp_accept_queue_take_dial(struct xp_accept_queue *q, uint64_t *dial);

/* For a listener that closes: take the oldest waiting accept. Return: false when none is left. */
bool xp_accept_queue_take_accept(struct xp_accept_queue *q, uint64_t *accept);

#endif /* XP_ACCEPT_QUEUE_H */
