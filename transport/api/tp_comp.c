// SPDX-License-Identifier: MIT
/*
 * tp_comp.c - the application's completions from the backend's, a
 * connection's end, and the end of a backend that is gone (tp_comp.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "tp_comp.h"
#include "tp_error.h"
#include "tp_handle.h"
#include "tp_post.h"

#define BATCH 64

/* Whether a completion's status says its connection is dead. */
static bool kills(int status)
{
	return status == -ECONNRESET || status == -ETIMEDOUT || status == -EIO ||
	       status == -ESHUTDOWN;
}

static void closing_append(struct tp_front *f, struct tp_conn *c)
{
	struct tp_conn **p = &f->closing;

	while (*p)
		p = &(*p)->next;
	c->next = NULL;
	*p = c;
}

static void closing_unlink(struct tp_front *f, struct tp_conn *c)
{
	for (struct tp_conn **p = &f->closing; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			return;
		}
}

/*
 * Hand @c to the application: its handle, or 0 when none can be had (then
 * @c is closed at once, and *status says why). Under the lock.
 */
static uintptr_t hand_out(struct pcm_tp_endpoint *ep, struct tp_conn *c, int *status)
{
	c->handle = tp_handle_make(TP_HANDLE_CONN, c, ep);
	if (c->handle)
		return c->handle;
	*status = -ENOMEM;
	c->closed = true;
	closing_append(ep->front, c);
	if (ep->ops->conn_close(c) < 0)
		atomic_store(&c->released, true); /* the backend frees it at endpoint close */
	return 0;
}

/* The application's completion for @r. Under the lock. Return: 1, or 0 (nothing for it). */
static int translate(struct pcm_tp_endpoint *ep, const struct tp_comp *r,
		     struct pcm_tp_completion *out)
{
	struct tp_slot *s;

	if (r->op == PCM_TP_OP_CLOSE) {
		if (r->conn)
			atomic_store(&r->conn->released, true);
		return 0;
	}
	s = tp_post_slot(ep->front, r->slot, r->op);
	if (!s)
		return 0; /* no post of ours: dropped */
	*out = (struct pcm_tp_completion){ .op = r->op, .status = r->status, .cookie = s->cookie };
	switch (r->op) {
	case PCM_TP_OP_SEND:
	case PCM_TP_OP_RECV:
		out->conn = (struct pcm_tp_conn *)s->conn->handle;
		out->bytes = r->status == 0 ? r->bytes : 0;
		if (kills(r->status) && !s->conn->failed)
			s->conn->failed = r->status;
		break;
	case PCM_TP_OP_CONNECT:
		if (r->status == 0)
			out->conn = (struct pcm_tp_conn *)hand_out(ep, s->conn, &out->status);
		else
			ep->ops->conn_free(s->conn);
		break;
	default: /* ACCEPT */
		if (r->status == 0 && r->conn)
			out->conn = (struct pcm_tp_conn *)hand_out(ep, r->conn, &out->status);
		else if (r->status == 0)
			out->status = -EPROTO;
		break;
	}
	tp_post_end(ep, s);
	return 1;
}

/* The CLOSE of each closing connection that is done, up to @room. Under the lock. */
static int closes(struct pcm_tp_endpoint *ep, struct pcm_tp_completion *out, int room)
{
	struct tp_front *f = ep->front;
	struct tp_conn **p = &f->closing;
	int n = 0;

	while (*p && n < room) {
		struct tp_conn *c = *p;

		if (!atomic_load(&c->released) || c->posted[0] || c->posted[1]) {
			p = &c->next;
			continue;
		}
		*p = c->next;
		if (c->handle)
			out[n++] = (struct pcm_tp_completion){ .op = PCM_TP_OP_CLOSE,
							       .conn = (struct pcm_tp_conn *)c->handle };
		c->next = f->grave;
		f->grave = c;
	}
	return n;
}

/* Whether a closing connection's CLOSE can be reported now. Under the lock. */
static bool close_ready(const struct tp_front *f)
{
	for (const struct tp_conn *c = f->closing; c; c = c->next)
		if (atomic_load(&c->released) && !c->posted[0] && !c->posted[1])
			return true;
	return false;
}

/* Free the connections whose CLOSE an earlier poll returned. Under the lock. */
static void bury(struct pcm_tp_endpoint *ep)
{
	struct tp_front *f = ep->front;

	while (f->grave) {
		struct tp_conn *c = f->grave;

		f->grave = c->next;
		tp_handle_drop(c->handle);
		ep->ops->conn_free(c);
	}
}

static void made_append(struct tp_front *f, const struct pcm_tp_completion *c)
{
	struct tp_made *m = malloc(sizeof(*m));

	if (!m)
		abort(); /* a completion lost would break the contract: nothing better to do */
	m->c = *c;
	m->next = NULL;
	if (f->made_tail)
		f->made_tail->next = m;
	else
		f->made = m;
	f->made_tail = m;
}

static int made_take(struct tp_front *f, struct pcm_tp_completion *out, int max)
{
	int n = 0;

	while (f->made && n < max) {
		struct tp_made *m = f->made;

		out[n++] = m->c;
		f->made = m->next;
		if (!f->made)
			f->made_tail = NULL;
		free(m);
	}
	return n;
}

struct order {
	uint64_t seq;
	uint32_t slot;
};

static int by_seq(const void *a, const void *b)
{
	uint64_t x = ((const struct order *)a)->seq, y = ((const struct order *)b)->seq;

	return x < y ? -1 : x > y;
}

/*
 * The backend is gone: every operation still posted completes with @err, in
 * post order, and every closing connection is released. Under the lock.
 */
static void go(struct pcm_tp_endpoint *ep, int err)
{
	struct tp_front *f = ep->front;
	struct order *o = calloc(f->used ? f->used : 1, sizeof(*o));
	uint32_t n = 0;

	if (!o)
		abort(); /* a completion lost would break the contract: nothing better to do */
	f->gone = true;
	f->gone_err = err;
	for (uint32_t i = 0; i < f->limits.posts_per_endpoint; i++)
		if (f->slots[i].op)
			o[n++] = (struct order){ .seq = f->slots[i].seq, .slot = i };
	qsort(o, n, sizeof(*o), by_seq);
	for (uint32_t k = 0; k < n; k++) {
		const struct tp_slot *s = &f->slots[o[k].slot];
		struct tp_comp r = { .op = s->op, .status = err,
				     .slot = (uint64_t)s->gen << 32 | o[k].slot };
		struct pcm_tp_completion c;

		if (translate(ep, &r, &c))
			made_append(f, &c);
	}
	free(o);
	for (struct tp_conn *c = f->closing; c; c = c->next)
		atomic_store(&c->released, true);
}

int tp_comp_poll(struct pcm_tp_endpoint *ep, struct pcm_tp_completion *out, int max)
{
	struct tp_front *f = ep->front;
	struct tp_comp raw[BATCH];
	bool gone, done;
	int n, k;

	pthread_mutex_lock(&f->lock);
	bury(ep);
	n = made_take(f, out, max);
	gone = f->gone;
	pthread_mutex_unlock(&f->lock);
	while (!gone) {
		int want = max - n < BATCH ? max - n : BATCH;

		k = ep->ops->poll(ep, raw, want);
		pthread_mutex_lock(&f->lock);
		if (k == -ESHUTDOWN) {
			go(ep, k);
			n += made_take(f, out + n, max - n);
		}
		for (int i = 0; i < k; i++)
			n += translate(ep, &raw[i], &out[n]);
		pthread_mutex_unlock(&f->lock);
		if (k < 0 && k != -ESHUTDOWN)
			return n ? n : k;
		if (k < want || n >= max)
			break;
	}
	pthread_mutex_lock(&f->lock);
	n += closes(ep, out + n, max - n);
	done = f->gone && !f->made && !f->used && !f->closing;
	pthread_mutex_unlock(&f->lock);
	if (n == 0 && done)
		return pcm_tp_set_error(f->gone_err,
					"poll: pcmd is gone and every completion has been taken: "
					"close the endpoint, and open a new one once pcmd runs again");
	return n;
}

int tp_comp_wait(struct pcm_tp_endpoint *ep, int timeout_ms)
{
	struct tp_front *f = ep->front;
	bool ready, gone, left;
	int rc;

	pthread_mutex_lock(&f->lock);
	ready = f->made || close_ready(f);
	gone = f->gone;
	pthread_mutex_unlock(&f->lock);
	if (ready)
		return 0;
	rc = gone ? -ESHUTDOWN : ep->ops->wait(ep, timeout_ms);
	if (rc != -ESHUTDOWN)
		return rc;
	pthread_mutex_lock(&f->lock);
	left = f->used || f->closing; /* the next poll completes them */
	pthread_mutex_unlock(&f->lock);
	return left ? 0
		    : pcm_tp_set_error(-ESHUTDOWN, "wait: pcmd is gone and every completion has "
						   "been taken: close the endpoint, and open a "
						   "new one once pcmd runs again");
}

int tp_conn_close(struct tp_conn *c)
{
	struct tp_front *f = c->ep->front;
	int rc;

	pthread_mutex_lock(&f->lock);
	if (c->closed) {
		pthread_mutex_unlock(&f->lock);
		return pcm_tp_set_error(-ENOTCONN, "close: the connection is closed already");
	}
	c->closed = true;
	closing_append(f, c);
	pthread_mutex_unlock(&f->lock);
	rc = c->ep->ops->conn_close(c);
	if (rc < 0) {
		pthread_mutex_lock(&f->lock);
		closing_unlink(f, c);
		c->closed = false;
		pthread_mutex_unlock(&f->lock);
	}
	return rc;
}

void tp_comp_endpoint_close(struct pcm_tp_endpoint *ep)
{
	struct tp_front *f = ep->front;

	pthread_mutex_lock(&f->lock);
	tp_handle_drop_owner(ep);
	bury(ep);
	while (f->closing) {
		struct tp_conn *c = f->closing;

		f->closing = c->next;
		if (atomic_load(&c->released))
			ep->ops->conn_free(c); /* the backend forgot it: ours to free */
	}
	pthread_mutex_unlock(&f->lock);
}
