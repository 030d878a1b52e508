/* SPDX-License-Identifier: MIT */
/*
 * xp_idlist.h - the core's work lists: FIFOs of connection ids (ready to
 * send, control records to send, waiting for a pool entry).
 *
 * They are unlinked lazily: a consumer pops an id and checks the
 * connection's state, so closing a connection never walks a list. An id is
 * on a list at most once. The core sizes and frees their arrays (core.c).
 */
#ifndef XP_IDLIST_H
#define XP_IDLIST_H

#include <stdint.h>

#include "pool.h"

struct xp_idlist {
	uint32_t head;
	uint32_t tail;
	uint32_t *next;
	uint8_t *on;
};

/**
 * xp_idlist_push() - append connection @id to work list @l, unless it is on it.
 * @l: the list (ready, ctrl, wait_smsg or wait_rmsg).
 * @id: the connection; its state is checked by whoever pops it.
 */
static inline void xp_idlist_push(struct xp_idlist *l, uint32_t id)
{
	if (l->on[id])
		return;
	l->on[id] = 1;
	l->next[id] = XP_NONE;
	if (l->tail == XP_NONE)
		l->head = id;
	else
		l->next[l->tail] = id;
	l->tail = id;
}

/**
 * xp_idlist_pop() - take the oldest id off a work list.
 *
 * Return: the oldest id on @l, taken off it, or XP_NONE.
 */
static inline uint32_t xp_idlist_pop(struct xp_idlist *l)
{
	uint32_t id = l->head;

	if (id == XP_NONE)
		return XP_NONE;
	l->head = l->next[id];
	if (l->head == XP_NONE)
		l->tail = XP_NONE;
	l->on[id] = 0;
	return id;
}

#endif /* XP_IDLIST_H */
