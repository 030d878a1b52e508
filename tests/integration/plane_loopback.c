// SPDX-License-Identifier: MIT
/*
 * plane_loopback.c - pcmd's data-plane seam over memcpy, for tests.
 *
 * A connect to a listener (pcmd resolves names) makes two linked flows; a
 * send on one is delivered whole into the next posted receive of the other
 * (FIFO, like the transport), copied chunk by chunk (datapath.chunk_bytes, a
 * bounded number of chunks per poll) so a large message stays in flight
 * across many loop turns. A message longer than its receive completes both
 * with -EMSGSIZE; like the transport, it carries messages of up to 4,096
 * chunks (max_message_bytes). Closing a flow completes its outstanding work with
 * -ECONNABORTED and its peer's with -ECONNRESET, then reports CLOSED.
 *
 * It also checks pcmd: every offset it is given must lie inside the flow's
 * region, and a region must be released only after all its flows and
 * listeners are gone; a violation aborts the process (a pcmd bug).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "config.h"
#include "plane_loopback.h"
#include "xp_accept_queue.h"
#include "xp_range.h"

#define NONE UINT32_MAX
#define CHUNKS_PER_POLL 16
#define MAX_CHUNKS 4096 /* per message, as the transport's immediate allows */

struct pcmd_plane_region {
	uint8_t *base;
	size_t bytes;
	uint64_t token;
	uint32_t refs; /* flows and listeners using it */
	uint32_t id;
	char name[PCMD_ADDR_MAX];
};

struct lb_op {
	uint64_t token;
	uint64_t off, len;
	uint64_t done;
};

/* A FIFO of ops that grows; bounded in practice by pcmd's per-client limits. */
struct lb_fifo {
	struct lb_op *ops;
	uint32_t head, n, cap;
};

struct lb_flow {
	bool used;
	bool closing, graceful;
	uint32_t peer;
	struct pcmd_plane_region *r;
	uint64_t token; /* of the connect or accept that made it; 0 until pcmd knows it */
	bool known;	/* pcmd knows this flow (connected or accepted) */
	struct lb_fifo sends, recvs;
	struct pcmd_flow_measure st;
	const struct pcm_package *cc, *lb;
	uint32_t mode;
};

struct lb_listener {
	bool used;
	struct pcmd_plane_region *r;
	struct xp_accept_queue q; /* flows not yet accepted, accept tokens not yet matched */
};

struct pcmd_plane {
	int efd;
	uint64_t chunk_bytes;
	struct pcmd_plane_event *evs;
	uint32_t ev_head, ev_n, ev_cap;
	struct lb_flow *flows;
	uint32_t n_flows;
	struct lb_listener *listeners;
	uint32_t n_listeners;
	uint32_t regions;
	uint32_t next_region_id;
	uint64_t bytes_copied;
	uint64_t swaps;
};

static void die(const char *what)
{
	fprintf(stderr, "plane_loopback: pcmd broke the seam's contract: %s\n", what);
	abort();
}

static void kick(struct pcmd_plane *pl)
{
	uint64_t one = 1;

	if (write(pl->efd, &one, sizeof(one)) < 0)
		die("eventfd write");
}

static void emit(struct pcmd_plane *pl, const struct pcmd_plane_event *ev)
{
	if (pl->ev_n == pl->ev_cap) {
		struct pcmd_plane_event *n = calloc(pl->ev_cap ? pl->ev_cap * 2 : 64, sizeof(*n));

		if (!n)
			die("out of memory");
		for (uint32_t i = 0; i < pl->ev_n; i++)
			n[i] = pl->evs[(pl->ev_head + i) % pl->ev_cap];
		free(pl->evs);
		pl->evs = n;
		pl->ev_head = 0;
		pl->ev_cap = pl->ev_cap ? pl->ev_cap * 2 : 64;
	}
	pl->evs[(pl->ev_head + pl->ev_n) % pl->ev_cap] = *ev;
	pl->ev_n++;
	kick(pl);
}

static void emit_simple(struct pcmd_plane *pl, uint32_t kind, int status, uint64_t token,
			uint64_t bytes, uint32_t flow)
{
	struct pcmd_plane_event ev = {
	    .kind = kind, .status = status, .token = token, .bytes = bytes, .flow = flow};

	emit(pl, &ev);
}

static void fifo_push(struct lb_fifo *f, const struct lb_op *op)
{
	if (f->n == f->cap) {
		struct lb_op *n = calloc(f->cap ? f->cap * 2 : 16, sizeof(*n));

		if (!n)
			die("out of memory");
		for (uint32_t i = 0; i < f->n; i++)
			n[i] = f->ops[(f->head + i) % f->cap];
		free(f->ops);
		f->ops = n;
		f->head = 0;
		f->cap = f->cap ? f->cap * 2 : 16;
	}
	f->ops[(f->head + f->n) % f->cap] = *op;
	f->n++;
}

static struct lb_op *fifo_front(struct lb_fifo *f)
{
	return f->n ? &f->ops[f->head] : NULL;
}

static void fifo_pop(struct lb_fifo *f)
{
	f->head = (f->head + 1) % f->cap;
	f->n--;
}

/* Complete everything queued on @f with @status. */
static void fifo_fail(struct pcmd_plane *pl, struct lb_fifo *f, int status)
{
	while (f->n) {
		emit_simple(pl, PCMD_PLANE_EV_COMPLETE, status, fifo_front(f)->token, 0, 0);
		fifo_pop(f);
	}
}

/* ---- lifecycle ------------------------------------------------------------------------- */

static int lb_create(const struct pcmd_config *cfg, struct pcmd_plane **out, char *err,
		     size_t err_len)
{
	struct pcmd_plane *pl = calloc(1, sizeof(*pl));

	if (!pl)
		return -ENOMEM;
	pl->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (pl->efd < 0) {
		snprintf(err, err_len, "eventfd: %s", strerror(errno));
		free(pl);
		return -errno;
	}
	pl->chunk_bytes = cfg->datapath.chunk_bytes;
	*out = pl;
	return 0;
}

static void lb_destroy(struct pcmd_plane *pl)
{
	for (uint32_t i = 0; i < pl->n_flows; i++) {
		free(pl->flows[i].sends.ops);
		free(pl->flows[i].recvs.ops);
	}
	for (uint32_t i = 0; i < pl->n_listeners; i++)
		xp_accept_queue_fini(&pl->listeners[i].q);
	free(pl->flows);
	free(pl->listeners);
	free(pl->evs);
	close(pl->efd);
	free(pl);
}

static int lb_event_fd(struct pcmd_plane *pl)
{
	return pl->efd;
}

static int lb_region_add(struct pcmd_plane *pl, void *base, size_t bytes, const char *host,
			 uint64_t token, struct pcmd_plane_region **out, char *err, size_t err_len)
{
	(void)err;
	(void)err_len;
	struct pcmd_plane_region *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->base = base;
	r->bytes = bytes;
	r->token = token;
	r->id = ++pl->next_region_id;
	if (host[0])
		snprintf(r->name, sizeof(r->name), "%s", host);
	else
		snprintf(r->name, sizeof(r->name), "loopback-%u", r->id);
	pl->regions++;
	*out = r;
	return 0;
}

static void lb_region_release(struct pcmd_plane *pl, struct pcmd_plane_region *r)
{
	if (r->refs)
		die("region released while flows or listeners still use it");
	emit_simple(pl, PCMD_PLANE_EV_REGION_RELEASED, 0, r->token, 0, 0);
	pl->regions--;
	free(r);
}

/* ---- flows ----------------------------------------------------------------------------- */

static uint32_t new_flow(struct pcmd_plane *pl, struct pcmd_plane_region *r)
{
	uint32_t i;

	for (i = 0; i < pl->n_flows; i++)
		if (!pl->flows[i].used)
			break;
	if (i == pl->n_flows) {
		struct lb_flow *n = realloc(pl->flows, (pl->n_flows + 1) * sizeof(*n));

		if (!n)
			die("out of memory");
		pl->flows = n;
		memset(&pl->flows[pl->n_flows++], 0, sizeof(*n));
	}
	free(pl->flows[i].sends.ops);
	free(pl->flows[i].recvs.ops);
	memset(&pl->flows[i], 0, sizeof(pl->flows[i]));
	pl->flows[i].used = true;
	pl->flows[i].peer = NONE;
	pl->flows[i].r = r;
	r->refs++;
	return i;
}

static struct lb_flow *flow_of(struct pcmd_plane *pl, uint32_t f)
{
	if (f >= pl->n_flows || !pl->flows[f].used)
		die("a flow id the data plane never gave, or already closed");
	return &pl->flows[f];
}

/* Break the link: the peer's outstanding work fails with -ECONNRESET. */
static void unlink_peer(struct pcmd_plane *pl, struct lb_flow *fl)
{
	if (fl->peer == NONE)
		return;
	struct lb_flow *p = &pl->flows[fl->peer];

	fifo_fail(pl, &p->sends, -ECONNRESET);
	fifo_fail(pl, &p->recvs, -ECONNRESET);
	p->peer = NONE;
	fl->peer = NONE;
}

static void free_flow(struct pcmd_plane *pl, uint32_t f, bool report)
{
	struct lb_flow *fl = &pl->flows[f];

	unlink_peer(pl, fl);
	fifo_fail(pl, &fl->sends, -ECONNABORTED);
	fifo_fail(pl, &fl->recvs, -ECONNABORTED);
	if (report)
		emit_simple(pl, PCMD_PLANE_EV_CLOSED, 0, fl->token, 0, f);
	fl->r->refs--;
	fl->used = false;
}

static int lb_listen(struct pcmd_plane *pl, struct pcmd_plane_region *r, uint32_t backlog,
		     uint32_t *id)
{
	uint32_t i;

	for (i = 0; i < pl->n_listeners; i++)
		if (!pl->listeners[i].used)
			break;
	if (i == pl->n_listeners) {
		struct lb_listener *n = realloc(pl->listeners, (i + 1) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		pl->listeners = n;
		memset(&n[i], 0, sizeof(*n));
		pl->n_listeners++;
	}
	struct lb_listener *l = &pl->listeners[i];

	memset(l, 0, sizeof(*l));
	if (xp_accept_queue_init(&l->q, backlog) < 0)
		return -ENOMEM;
	l->used = true;
	l->r = r;
	r->refs++;
	*id = i;
	return 0;
}

static struct lb_listener *listener_of(struct pcmd_plane *pl, uint32_t id)
{
	if (id >= pl->n_listeners || !pl->listeners[id].used)
		die("a listener id the data plane never gave, or already closed");
	return &pl->listeners[id];
}

static void match_accept(struct pcmd_plane *pl, struct lb_listener *l)
{
	uint64_t f, token;

	while (xp_accept_queue_match(&l->q, &f, &token)) {
		struct lb_flow *fl = &pl->flows[f];
		struct pcmd_plane_event ev = {
		    .kind = PCMD_PLANE_EV_ACCEPTED, .token = token, .flow = (uint32_t)f};

		fl->token = ev.token;
		fl->known = true;
		if (fl->peer != NONE) {
			const struct lb_flow *d = &pl->flows[fl->peer];
			struct pcmd_plane_flow_opts o = {.cc = d->cc, .lb = d->lb, .mode = d->mode};

			snprintf(ev.peer, sizeof(ev.peer), "%s", d->r->name);
			ev.peer_token = d->token;
			pcmd_plane_opts_names(&o, &ev.peer_opts);
		}
		emit(pl, &ev);
	}
}

static void lb_unlisten(struct pcmd_plane *pl, uint32_t id)
{
	struct lb_listener *l = listener_of(pl, id);
	uint64_t v;

	while (xp_accept_queue_take_accept(&l->q, &v))
		emit_simple(pl, PCMD_PLANE_EV_ACCEPTED, -ECONNABORTED, v, 0, 0);
	/* Flows nobody accepted: pcmd never heard of them, so no CLOSED. */
	while (xp_accept_queue_take_dial(&l->q, &v))
		free_flow(pl, (uint32_t)v, false);
	xp_accept_queue_fini(&l->q);
	l->r->refs--;
	l->used = false;
}

static int lb_accept(struct pcmd_plane *pl, uint32_t id, uint64_t token)
{
	struct lb_listener *l = listener_of(pl, id);

	if (xp_accept_queue_accept(&l->q, token) < 0)
		die("out of memory");
	match_accept(pl, l);
	return 0;
}

static int lb_connect(struct pcmd_plane *pl, struct pcmd_plane_region *r, uint32_t listener,
		      const struct pcmd_plane_flow_opts *opts, uint64_t token)
{
	struct lb_listener *l = listener_of(pl, listener);
	uint32_t a, b;

	if (xp_accept_queue_full(&l->q)) {
		emit_simple(pl, PCMD_PLANE_EV_CONNECTED, -ECONNREFUSED, token, 0, 0);
		return 0;
	}
	a = new_flow(pl, r);
	b = new_flow(pl, l->r);
	pl->flows[a].peer = b;
	pl->flows[b].peer = a;
	pl->flows[a].token = token;
	pl->flows[a].known = true;
	pl->flows[a].cc = opts->cc;
	pl->flows[a].lb = opts->lb;
	pl->flows[a].mode = opts->mode;
	(void)xp_accept_queue_dial(&l->q, b); /* not full: looked at above */
	emit_simple(pl, PCMD_PLANE_EV_CONNECTED, 0, token, 0, a);
	match_accept(pl, l);
	return 0;
}

static int lb_flow_setup(struct pcmd_plane *pl, uint32_t f, const struct pcmd_plane_flow_opts *opts)
{
	struct lb_flow *fl = flow_of(pl, f);

	fl->cc = opts->cc;
	fl->lb = opts->lb;
	fl->mode = opts->mode;
	return 0;
}

static void check_range(const struct lb_flow *fl, uint64_t off, uint64_t len)
{
	if (!xp_range_within(off, len, fl->r->bytes))
		die("a buffer outside the flow's region");
}

static int post(struct pcmd_plane *pl, uint32_t f, uint64_t off, uint64_t len, uint64_t token,
		bool send)
{
	struct lb_flow *fl = flow_of(pl, f);
	struct lb_op op = {.token = token, .off = off, .len = len};

	check_range(fl, off, len);
	if (fl->closing || !fl->known)
		die("a post on a flow pcmd is closing or does not know");
	if (fl->peer == NONE) {
		emit_simple(pl, PCMD_PLANE_EV_COMPLETE, -ECONNRESET, token, 0, 0);
		return 0;
	}
	fifo_push(send ? &fl->sends : &fl->recvs, &op);
	if (send)
		fl->st.in_flight_bytes += len;
	kick(pl);
	return 0;
}

static int lb_post_send(struct pcmd_plane *pl, uint32_t f, uint64_t off, uint64_t len,
			uint64_t token)
{
	return post(pl, f, off, len, token, true);
}

static int lb_post_recv(struct pcmd_plane *pl, uint32_t f, uint64_t off, uint64_t cap,
			uint64_t token)
{
	return post(pl, f, off, cap, token, false);
}

static void lb_close(struct pcmd_plane *pl, uint32_t f, bool abort_now)
{
	struct lb_flow *fl = flow_of(pl, f);

	fl->closing = true;
	fl->graceful = !abort_now;
	if (abort_now || fl->sends.n == 0 || fl->peer == NONE)
		free_flow(pl, f, true);
	/* Graceful with sends queued: finished by progress() once they are delivered. */
}

static int lb_flow_stats(struct pcmd_plane *pl, uint32_t f, struct pcmd_flow_measure *out)
{
	struct lb_flow *fl = flow_of(pl, f);

	*out = fl->st;
	out->valid = PCMD_FIELD_INFLIGHT;
	return 0;
}

static int lb_set_policy(struct pcmd_plane *pl, uint32_t f, const struct pcmd_plane_flow_opts *opts)
{
	struct lb_flow *fl = flow_of(pl, f);

	if (!opts->cc)
		die("a policy change without a CC package");
	fl->cc = opts->cc;
	fl->lb = opts->lb;
	fl->mode = opts->mode;
	pl->swaps++;
	return 0;
}

/* ---- moving bytes ---------------------------------------------------------------------- */

/* Move up to @budget chunks from @fl's first send into its peer's first receive. */
static uint32_t progress_flow(struct pcmd_plane *pl, uint32_t f, uint32_t budget)
{
	struct lb_flow *fl = &pl->flows[f], *p;
	uint32_t used = 0;

	while (used < budget && fl->peer != NONE && fl->sends.n) {
		struct lb_op *s = fifo_front(&fl->sends), *r;
		uint64_t n;

		p = &pl->flows[fl->peer];
		r = fifo_front(&p->recvs);
		if (!r)
			break;
		if (s->len > r->len) {
			emit_simple(pl, PCMD_PLANE_EV_COMPLETE, -EMSGSIZE, s->token, 0, 0);
			emit_simple(pl, PCMD_PLANE_EV_COMPLETE, -EMSGSIZE, r->token, 0, 0);
			fl->st.in_flight_bytes -= s->len - s->done;
			fifo_pop(&fl->sends);
			fifo_pop(&p->recvs);
			continue;
		}
		n = s->len - s->done < pl->chunk_bytes ? s->len - s->done : pl->chunk_bytes;
		memcpy(p->r->base + r->off + s->done, fl->r->base + s->off + s->done, n);
		s->done += n;
		fl->st.in_flight_bytes -= n;
		pl->bytes_copied += n;
		used++;
		if (s->done < s->len)
			continue;
		emit_simple(pl, PCMD_PLANE_EV_COMPLETE, 0, s->token, s->len, 0);
		emit_simple(pl, PCMD_PLANE_EV_COMPLETE, 0, r->token, s->len, 0);
		fifo_pop(&fl->sends);
		fifo_pop(&p->recvs);
	}
	if (fl->closing && fl->graceful && fl->sends.n == 0)
		free_flow(pl, f, true);
	return used;
}

static bool progress(struct pcmd_plane *pl)
{
	uint32_t budget = CHUNKS_PER_POLL;
	bool more = false;

	for (uint32_t f = 0; f < pl->n_flows; f++) {
		struct lb_flow *fl = &pl->flows[f];

		if (!fl->used || !fl->sends.n)
			continue;
		budget -= progress_flow(pl, f, budget);
		if (fl->used && fl->sends.n && fl->peer != NONE && pl->flows[fl->peer].recvs.n)
			more = true;
		if (budget == 0)
			break;
	}
	return more;
}

static int lb_poll(struct pcmd_plane *pl, struct pcmd_plane_event *evs, int max)
{
	uint64_t v;
	int n = 0;

	if (read(pl->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	if (pl->ev_n < (uint32_t)max && progress(pl))
		kick(pl);
	while (n < max && pl->ev_n) {
		evs[n++] = pl->evs[pl->ev_head];
		pl->ev_head = (pl->ev_head + 1) % pl->ev_cap;
		pl->ev_n--;
	}
	if (pl->ev_n)
		kick(pl);
	return n;
}

void pcmd_plane_loopback_usage(struct pcmd_plane *pl, struct pcmd_plane_loopback_usage *out)
{
	memset(out, 0, sizeof(*out));
	out->regions = pl->regions;
	for (uint32_t i = 0; i < pl->n_flows; i++)
		out->flows += pl->flows[i].used;
	for (uint32_t i = 0; i < pl->n_listeners; i++)
		out->listeners += pl->listeners[i].used;
	out->queued_events = pl->ev_n;
	out->bytes_copied = pl->bytes_copied;
	out->policy_swaps = pl->swaps;
}

static uint64_t lb_max_message_bytes(struct pcmd_plane *pl)
{
	return MAX_CHUNKS * pl->chunk_bytes;
}

const struct pcmd_plane_ops pcmd_plane_loopback = {
    .name = "loopback (tests)",
    .create = lb_create,
    .destroy = lb_destroy,
    .event_fd = lb_event_fd,
    .poll = lb_poll,
    .region_add = lb_region_add,
    .region_release = lb_region_release,
    .listen = lb_listen,
    .unlisten = lb_unlisten,
    .accept = lb_accept,
    .connect = lb_connect,
    .flow_setup = lb_flow_setup,
    .post_send = lb_post_send,
    .post_recv = lb_post_recv,
    .close = lb_close,
    .flow_stats = lb_flow_stats,
    .set_policy = lb_set_policy,
    .max_message_bytes = lb_max_message_bytes,
};
