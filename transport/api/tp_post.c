// SPDX-License-Identifier: MIT
/*
 * tp_post.c - an endpoint's posted operations and the regions they use
 * (tp_post.h): the limits, the slot table, admission and release.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tp_error.h"
#include "tp_post.h"
#include "xp_range.h"

#define NO_SLOT UINT32_MAX

int tp_front_create(struct pcm_tp_endpoint *ep)
{
	struct tp_front *f = calloc(1, sizeof(*f));
	uint32_t n;

	if (!f)
		return pcm_tp_set_error(-ENOMEM, "out of memory for the endpoint");
	ep->ops->limits(ep, &f->limits);
	n = f->limits.posts_per_endpoint;
	f->slots = calloc(n ? n : 1, sizeof(*f->slots));
	if (!f->slots) {
		free(f);
		return pcm_tp_set_error(-ENOMEM, "out of memory for %u posted operations", n);
	}
	for (uint32_t i = 0; i < n; i++)
		f->slots[i].next_free = i + 1 < n ? i + 1 : NO_SLOT;
	f->free = n ? 0 : NO_SLOT;
	pthread_mutex_init(&f->lock, NULL);
	ep->front = f;
	return 0;
}

void tp_front_destroy(struct tp_front *f)
{
	if (!f)
		return;
	while (f->made) {
		struct tp_made *m = f->made;

		f->made = m->next;
		free(m);
	}
	pthread_mutex_destroy(&f->lock);
	free(f->slots);
	free(f);
}

static const char *op_name(enum pcm_tp_op op)
{
	switch (op) {
	case PCM_TP_OP_SEND:
		return "send";
	case PCM_TP_OP_RECV:
		return "recv";
	case PCM_TP_OP_CONNECT:
		return "connect";
	case PCM_TP_OP_ACCEPT:
		return "accept";
	default:
		return "close";
	}
}

int tp_post_admit(struct pcm_tp_endpoint *ep, enum pcm_tp_op op, struct tp_conn *c,
		  struct tp_region *r, uint64_t cookie, uint64_t *slot)
{
	struct tp_front *f = ep->front;
	const struct pcm_tp_limits *l = &f->limits;
	bool data = op == PCM_TP_OP_SEND || op == PCM_TP_OP_RECV;
	uint32_t dir = op == PCM_TP_OP_RECV, i;
	struct tp_slot *s;

	if (data && c->posted[dir] >= (dir ? l->recvs_per_conn : l->sends_per_conn))
		return pcm_tp_set_error(-EAGAIN,
					"%s: the connection has %u %ss posted and not completed, "
					"its limit: poll completions, then retry",
					op_name(op), c->posted[dir], op_name(op));
	if (f->free == NO_SLOT)
		return pcm_tp_set_error(-EAGAIN,
					"%s: the endpoint has %u operations posted and not "
					"completed, its limit: poll completions, then retry",
					op_name(op), f->used);
	i = f->free;
	s = &f->slots[i];
	f->free = s->next_free;
	f->used++;
	s->op = (uint8_t)op;
	s->gen++;
	s->cookie = cookie;
	s->seq = f->seq++;
	s->conn = data ? c : NULL;
	s->region = data ? r : NULL;
	if (data) {
		c->posted[dir]++;
		r->busy++;
	}
	*slot = (uint64_t)s->gen << 32 | i;
	return 0;
}

struct tp_slot *tp_post_slot(struct tp_front *f, uint64_t cookie, enum pcm_tp_op op)
{
	uint32_t i = (uint32_t)cookie;
	struct tp_slot *s;

	if (i >= f->limits.posts_per_endpoint)
		return NULL;
	s = &f->slots[i];
	if (!s->op || s->gen != (uint32_t)(cookie >> 32) || (op && s->op != (uint8_t)op))
		return NULL;
	return s;
}

void tp_post_end(struct pcm_tp_endpoint *ep, struct tp_slot *s)
{
	struct tp_front *f = ep->front;
	struct tp_region *r = s->region;

	if (s->conn && (s->op == PCM_TP_OP_SEND || s->op == PCM_TP_OP_RECV))
		s->conn->posted[s->op == PCM_TP_OP_RECV]--;
	if (r && --r->busy == 0 && r->free_pending)
		tp_region_remove(ep, r);
	s->op = 0;
	s->conn = NULL;
	s->region = NULL;
	s->next_free = f->free;
	f->free = (uint32_t)(s - f->slots);
	f->used--;
}

static bool holds(const struct tp_region *r, const void *buf, size_t len)
{
	return !buf || xp_range_within_ptr(r->addr, r->len, buf, len);
}

struct tp_region *tp_region_find(struct pcm_tp_endpoint *ep, struct tp_region *r,
				 const void *buf, size_t len)
{
	if (r)
		return r->ep == ep && !r->free_pending && holds(r, buf, len) ? r : NULL;
	for (r = ep->regions; r; r = r->next)
		if (!r->free_pending && holds(r, buf, len))
			return r;
	return NULL;
}

void tp_region_link(struct pcm_tp_endpoint *ep, struct tp_region *r)
{
	struct tp_region **p = &ep->regions;

	while (*p) /* oldest first: a post without a region takes the oldest that holds it */
		p = &(*p)->next;
	r->ep = ep;
	r->next = NULL;
	*p = r;
}

void tp_region_remove(struct pcm_tp_endpoint *ep, struct tp_region *r)
{
	for (struct tp_region **p = &ep->regions; *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			break;
		}
	ep->ops->region_remove(r);
}
