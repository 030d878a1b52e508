// SPDX-License-Identifier: MIT
/*
 * boot_registry.c - the in-process bootstrap ("registry") of the null and
 * softnic datapaths: a process-wide table of listening names, through which
 * endpoints of one process exchange their connection blobs.
 *
 * dial(name) queues an INCOMING event, with a copy of the message, on the
 * bootstrap listening at that name; its answer() queues ANSWERED on the
 * dialer's. Nothing listening answers -ECONNREFUSED at once (on the next
 * poll). A bootstrap destroyed with requests pending refuses them, and an
 * answer to a dialer already gone is dropped. One mutex guards the whole
 * table: connection setup is rare, the data path never comes here.
 *
 * Events are delivered in the order they were queued, so a single-threaded
 * run (softnic) is deterministic.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "datapath.h"

#define NAME_MAX_BYTES 64

struct qev {
	struct xp_boot_event ev;
	uint8_t *msg;
	struct qev *next;
};

struct reg_boot {
	struct xp_boot base;
	uint64_t id;
	int efd;
	struct qev *head, *tail;
	struct qev *handed; /* the last poll's events, freed at the next */
	struct reg_boot *next;
};

struct listener {
	char name[NAME_MAX_BYTES];
	struct reg_boot *b;
	struct listener *next;
};

struct request {
	uint64_t id;
	uint64_t dialer;   /* boot id */
	uint64_t token;
	struct reg_boot *listener;
	struct request *next;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reg_boot *g_boots;
static struct listener *g_listeners;
static struct request *g_requests;
static uint64_t g_next_id = 1;

static struct reg_boot *boot_by_id(uint64_t id)
{
	for (struct reg_boot *b = g_boots; b; b = b->next)
		if (b->id == id)
			return b;
	return NULL;
}

/* Queue @ev (and a copy of @msg) on @b. Caller holds g_lock. */
static int enqueue(struct reg_boot *b, const struct xp_boot_event *ev, const void *msg,
		   uint32_t len)
{
	struct qev *q = calloc(1, sizeof(*q));
	uint64_t one = 1;

	if (!q)
		return -ENOMEM;
	q->ev = *ev;
	q->ev.len = 0;
	if (msg && len) {
		q->msg = malloc(len);
		if (!q->msg) {
			free(q);
			return -ENOMEM;
		}
		memcpy(q->msg, msg, len);
		q->ev.len = len;
	}
	if (b->tail)
		b->tail->next = q;
	else
		b->head = q;
	b->tail = q;
	if (write(b->efd, &one, sizeof(one)) < 0)
		return 0; /* saturated: readable anyway */
	return 0;
}

static int answer_dialer(uint64_t dialer, uint64_t token, int status, const void *msg,
			 uint32_t len, const char *from)
{
	struct reg_boot *d = boot_by_id(dialer);
	struct xp_boot_event ev = { .kind = XP_BOOT_EV_ANSWERED, .status = status, .token = token };

	if (!d)
		return 0; /* the dialer is gone */
	snprintf(ev.from, sizeof(ev.from), "%s", from);
	return enqueue(d, &ev, status == 0 ? msg : NULL, status == 0 ? len : 0);
}

static int reg_create(struct xp_boot **out, struct pcm_diag *diag)
{
	struct reg_boot *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->base.ops = &xp_boot_registry_ops;
	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->efd < 0) {
		int rc = -errno;

		snprintf(diag->msg, sizeof(diag->msg), "registry bootstrap: eventfd: %s",
			 strerror(-rc));
		free(b);
		return rc;
	}
	pthread_mutex_lock(&g_lock);
	b->id = g_next_id++;
	b->next = g_boots;
	g_boots = b;
	pthread_mutex_unlock(&g_lock);
	*out = &b->base;
	return 0;
}

static void free_events(struct qev *q)
{
	while (q) {
		struct qev *n = q->next;

		free(q->msg);
		free(q);
		q = n;
	}
}

static void reg_destroy(struct xp_boot *base)
{
	struct reg_boot *b = (struct reg_boot *)base;

	pthread_mutex_lock(&g_lock);
	for (struct reg_boot **p = &g_boots; *p; p = &(*p)->next)
		if (*p == b) {
			*p = b->next;
			break;
		}
	for (struct listener **p = &g_listeners; *p;) {
		struct listener *l = *p;

		if (l->b == b) {
			*p = l->next;
			free(l);
		} else {
			p = &l->next;
		}
	}
	for (struct request **p = &g_requests; *p;) {
		struct request *r = *p;

		if (r->listener == b) {
			answer_dialer(r->dialer, r->token, -ECONNREFUSED, NULL, 0, "registry");
			*p = r->next;
			free(r);
		} else {
			p = &r->next;
		}
	}
	pthread_mutex_unlock(&g_lock);
	free_events(b->head);
	free_events(b->handed);
	close(b->efd);
	free(b);
}

static int reg_listen(struct xp_boot *base, const char *addr, struct pcm_diag *diag)
{
	struct reg_boot *b = (struct reg_boot *)base;
	struct listener *l;
	int rc = 0;

	if (!addr || !*addr || strlen(addr) >= NAME_MAX_BYTES) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "registry bootstrap: a name must have 1 to %d bytes", NAME_MAX_BYTES - 1);
		return -EINVAL;
	}
	pthread_mutex_lock(&g_lock);
	for (l = g_listeners; l; l = l->next)
		if (strcmp(l->name, addr) == 0)
			break;
	if (l) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "registry bootstrap: '%s' is already listened on in this process", addr);
		rc = -EADDRINUSE;
	} else if (!(l = calloc(1, sizeof(*l)))) {
		rc = -ENOMEM;
	} else {
		snprintf(l->name, sizeof(l->name), "%s", addr);
		l->b = b;
		l->next = g_listeners;
		g_listeners = l;
	}
	pthread_mutex_unlock(&g_lock);
	return rc;
}

static int reg_dial(struct xp_boot *base, const char *addr, const void *msg, uint32_t len,
		    uint64_t token, struct pcm_diag *diag)
{
	struct reg_boot *b = (struct reg_boot *)base;
	struct xp_boot_event ev = { .kind = XP_BOOT_EV_INCOMING };
	struct listener *l;
	struct request *r;
	int rc;

	if (!addr || len > XP_BOOT_MSG_MAX) {
		snprintf(diag->msg, sizeof(diag->msg), "registry bootstrap: bad dial");
		return -EINVAL;
	}
	pthread_mutex_lock(&g_lock);
	for (l = g_listeners; l; l = l->next)
		if (strcmp(l->name, addr) == 0)
			break;
	if (!l) {
		char from[64];

		snprintf(from, sizeof(from), "registry:%.48s", addr);
		rc = answer_dialer(b->id, token, -ECONNREFUSED, NULL, 0, from);
		goto out;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		rc = -ENOMEM;
		goto out;
	}
	r->id = g_next_id++;
	r->dialer = b->id;
	r->token = token;
	r->listener = l->b;
	ev.req = r->id;
	snprintf(ev.from, sizeof(ev.from), "registry:dialer%llu", (unsigned long long)b->id);
	rc = enqueue(l->b, &ev, msg, len);
	if (rc < 0) {
		free(r);
		goto out;
	}
	r->next = g_requests;
	g_requests = r;
out:
	pthread_mutex_unlock(&g_lock);
	return rc;
}

static int reg_answer(struct xp_boot *base, uint64_t req, int status, const void *msg, uint32_t len)
{
	struct reg_boot *b = (struct reg_boot *)base;
	int rc = -ENOENT;

	if (len > XP_BOOT_MSG_MAX)
		return -EINVAL;
	pthread_mutex_lock(&g_lock);
	for (struct request **p = &g_requests; *p; p = &(*p)->next) {
		struct request *r = *p;

		if (r->id != req || r->listener != b)
			continue;
		*p = r->next;
		rc = answer_dialer(r->dialer, r->token, status, msg, len, "registry");
		free(r);
		break;
	}
	pthread_mutex_unlock(&g_lock);
	return rc;
}

static int reg_poll(struct xp_boot *base, struct xp_boot_event *ev, int max)
{
	struct reg_boot *b = (struct reg_boot *)base;
	struct qev **tail;
	uint64_t v;
	int n = 0;

	free_events(b->handed);
	b->handed = NULL;
	tail = &b->handed;
	pthread_mutex_lock(&g_lock);
	if (read(b->efd, &v, sizeof(v)) < 0) {
		/* nothing signalled: the queue may still hold what a previous poll left */
	}
	while (n < max && b->head) {
		struct qev *q = b->head;

		b->head = q->next;
		if (!b->head)
			b->tail = NULL;
		q->next = NULL;
		ev[n] = q->ev;
		ev[n].msg = q->msg;
		n++;
		*tail = q;
		tail = &q->next;
	}
	if (b->head) {
		uint64_t one = 1;

		if (write(b->efd, &one, sizeof(one)) < 0) {
			/* saturated: readable anyway */
		}
	}
	pthread_mutex_unlock(&g_lock);
	return n;
}

static int reg_fd(struct xp_boot *base)
{
	return ((struct reg_boot *)base)->efd;
}

const struct xp_boot_ops xp_boot_registry_ops = {
	.name = "registry",
	.create = reg_create,
	.destroy = reg_destroy,
	.listen = reg_listen,
	.dial = reg_dial,
	.answer = reg_answer,
	.poll = reg_poll,
	.fd = reg_fd,
};
