// SPDX-License-Identifier: MIT
/*
 * gqueue.c - FIFOs of PDC groups waiting for something: receivers' peers
 * with credit demand (credit_grant.c), groups waiting for prefetch buffer
 * room (prefetch.c). A group waits in each through a link of its own
 * (struct uet_glink), so it can wait in several at once; pushing a group
 * that waits already does nothing.
 */
#include "nic.h"

static struct uet_glink *link_of(const struct uet_gqueue *q, const struct uet_group *g)
{
	return (struct uet_glink *)((char *)g + q->link);
}

void uet_gqueue_push(struct uet_gqueue *q, struct uet_group *g)
{
	struct uet_glink *l = link_of(q, g);

	if (l->queued)
		return;
	l->next = NULL;
	l->queued = true;
	if (q->tail)
		link_of(q, q->tail)->next = g;
	else
		q->head = g;
	q->tail = g;
}

struct uet_group *uet_gqueue_pop(struct uet_gqueue *q)
{
	struct uet_group *g = q->head;
	struct uet_glink *l;

	if (!g)
		return NULL;
	l = link_of(q, g);
	q->head = l->next;
	if (!q->head)
		q->tail = NULL;
	l->next = NULL;
	l->queued = false;
	return g;
}

void uet_gqueue_remove(struct uet_gqueue *q, struct uet_group *g)
{
	struct uet_group **pp = &q->head;

	if (!link_of(q, g)->queued)
		return;
	q->tail = NULL;
	while (*pp) {
		if (*pp == g) {
			*pp = link_of(q, g)->next;
		} else {
			q->tail = *pp;
			pp = &link_of(q, *pp)->next;
		}
	}
	link_of(q, g)->next = NULL;
	link_of(q, g)->queued = false;
}

bool uet_gqueue_has(const struct uet_gqueue *q, const struct uet_group *g)
{
	return link_of(q, g)->queued;
}
