/* SPDX-License-Identifier: MIT */
/*
 * tp_post.h - an endpoint's posted operations, as libpcmtransport's frontend
 * keeps them for both backends: the limits, one slot per operation posted
 * and not yet completed (send, receive, connect, accept), and the regions
 * those operations use.
 *
 * The contract it keeps: a post is admitted only within the endpoint's
 * limits (pcm_tp_endpoint_limits()), else it is refused with -EAGAIN before
 * anything else happens; a backend never sees more, so it never refuses an
 * admitted post for lack of room. A backend knows a post by its slot
 * (tp_post_cookie()), never by the application's cookie, and reports its
 * completion with that slot; tp_post_end() turns it back into the
 * application's and frees the slot. A region is busy while a slot uses it:
 * it cannot be deregistered, and a pcm_tp_mem_free() of it waits for the
 * last use.
 *
 * Everything here runs under the frontend's lock (struct tp_front.lock).
 */
#ifndef PCM_TP_POST_H
#define PCM_TP_POST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"

struct tp_slot {
	uint64_t cookie;          /* the application's */
	uint64_t seq;             /* post order */
	struct tp_conn *conn;     /* SEND, RECV: the connection; CONNECT: the one dialing */
	struct tp_region *region; /* SEND, RECV */
	uint32_t gen;             /* moves on at each use, in the backend's cookie */
	uint32_t next_free;
	uint8_t op;               /* enum pcm_tp_op; 0: free */
};

/* A completion the frontend made (a closed connection's CLOSE, pcmd's death). */
struct tp_made {
	struct pcm_tp_completion c;
	struct tp_made *next;
};

struct tp_front {
	pthread_mutex_t lock;
	struct pcm_tp_limits limits;
	struct tp_slot *slots;    /* limits.posts_per_endpoint */
	uint32_t free, used;
	uint64_t seq;
	bool listening;
	bool gone;                /* the backend said -ESHUTDOWN: nothing more comes from it */
	int gone_err;
	struct tp_conn *closing;  /* closed, CLOSE not yet reported */
	struct tp_conn *grave;    /* CLOSE reported: freed at the next poll */
	struct tp_made *made, *made_tail; /* completions waiting to be taken */
};

/**
 * tp_front_create() - the frontend's state of a newly opened endpoint.
 * @ep: the endpoint (its ops give the limits).
 *
 * Return: 0, -ENOMEM.
 */
int tp_front_create(struct pcm_tp_endpoint *ep);

/* Free the frontend's state (the backend's objects are the backend's to free). */
void tp_front_destroy(struct tp_front *f);

/**
 * tp_post_admit() - take a slot for a post, within the limits.
 * @ep: the endpoint.
 * @op: enum pcm_tp_op (SEND, RECV, CONNECT, ACCEPT).
 * @c: SEND, RECV: the connection (its per-connection limit is checked).
 * @r: SEND, RECV: the region (made busy).
 * @cookie: the application's.
 * @slot: out: the backend's cookie for it.
 *
 * Return: 0, -EAGAIN (a limit; the last error says which).
 */
int tp_post_admit(struct pcm_tp_endpoint *ep, enum pcm_tp_op op, struct tp_conn *c,
		  struct tp_region *r, uint64_t cookie, uint64_t *slot);

/* The slot a backend's cookie names, if it is in use for @op (0: any op). */
struct tp_slot *tp_post_slot(struct tp_front *f, uint64_t cookie, enum pcm_tp_op op);

/**
 * tp_post_end() - the post of @s ended (completed, or refused by the backend):
 * its connection's and region's counts go down, and the slot is free again.
 * @ep: the endpoint.
 * @s: the slot.
 */
void tp_post_end(struct pcm_tp_endpoint *ep, struct tp_slot *s);

/**
 * tp_region_find() - the region for a post: @r if [buf, buf + len) is in it,
 * or (@r NULL) the oldest region holding it (registered or allocated first:
 * registering and deregistering pieces of allocated memory then never
 * touches the posts that name no region); an empty message without a
 * buffer takes any region.
 *
 * Return: the region, or NULL.
 */
struct tp_region *tp_region_find(struct pcm_tp_endpoint *ep, struct tp_region *r,
				 const void *buf, size_t len);

/* Link @r into @ep's regions. */
void tp_region_link(struct pcm_tp_endpoint *ep, struct tp_region *r);

/* Unlink @r and have the backend remove it (nothing uses it). */
void tp_region_remove(struct pcm_tp_endpoint *ep, struct tp_region *r);

#endif /* PCM_TP_POST_H */
