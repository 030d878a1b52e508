// SPDX-License-Identifier: MIT
/*
 * xp_net.c - the virtual-time network of cores (xp_net.h).
 *
 * Events are kept in a binary heap ordered by (time, sequence number), so
 * equal times run in the order they were scheduled. Each host has at most
 * one live timer event; a newer one supersedes it by generation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "xp_net.h"

enum ev_kind {
	EV_WRITE = 1,
	EV_CTRL = 2,
	EV_TIMER = 3,
	EV_WRITE_FAILED = 4, /* to the sender: its write failed */
};

struct ev {
	uint64_t t_ns;
	uint64_t seq;
	uint8_t kind;
	bool ce;
	uint32_t host;
	uint32_t from;    /* CTRL: sender host */
	uint32_t path;    /* WRITE: the receiver's path handle */
	uint32_t imm;
	uint32_t len;
	uint32_t rkey;
	uint64_t gen;     /* TIMER */
	uint64_t token;   /* WRITE_FAILED */
	const void *src;  /* WRITE: the sender's bytes */
	uint64_t raddr;
	uint8_t *bytes;   /* CTRL: owned copy */
};

struct region {
	uint8_t *addr;
	uint64_t vbase; /* the address the core uses for addr */
	size_t len;
	uint32_t host;
	bool valid;
};

struct path_end {
	uint32_t host;
	uint32_t peer_handle;
	struct xp_link link; /* towards the peer */
	uint64_t last_arrival_ns; /* reliable links stay in order */
};

struct host {
	struct xp_core *core;
	bool dead;
	uint64_t last_from[XP_NET_MAX_HOSTS]; /* arrival of the last packet from each host */
	uint64_t timer_at;
	uint64_t timer_gen;
	struct xp_link ctrl[XP_NET_MAX_HOSTS];
};

struct xp_net {
	struct xp_net_config cfg;
	uint64_t now_ns;
	uint64_t rng;
	uint64_t seq;
	uint64_t trace;
	struct ev *heap;
	uint32_t n_ev;
	uint32_t cap_ev;
	struct host hosts[XP_NET_MAX_HOSTS];
	uint32_t n_hosts;
	struct path_end *paths;
	uint32_t n_paths;
	uint32_t cap_paths;
	struct region *regions;
	uint32_t n_regions;
	uint32_t cap_regions;
	struct xp_action *acts;
	uint8_t *ctrl_buf;
	struct xp_net_stats stats;
};

static uint64_t rnd(struct xp_net *net)
{
	uint64_t z = (net->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t xp_net_rand(struct xp_net *net)
{
	return rnd(net);
}

static bool chance(struct xp_net *net, uint32_t ppm)
{
	return ppm && rnd(net) % 1000000u < ppm;
}

static void trace(struct xp_net *net, uint64_t v)
{
	net->trace = (net->trace ^ v) * 0x100000001b3ull;
}

static int grow(void **p, uint32_t *cap, size_t size)
{
	uint32_t n = *cap ? *cap * 2 : 64;
	void *q = realloc(*p, (size_t)n * size);

	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

int xp_net_create(const struct xp_net_config *cfg, struct xp_net **out)
{
	struct xp_net *net = calloc(1, sizeof(*net));

	if (!net)
		return -ENOMEM;
	net->cfg = *cfg;
	if (!net->cfg.batch_actions)
		net->cfg.batch_actions = 256;
	net->rng = cfg->seed;
	net->trace = 0xcbf29ce484222325ull;
	net->acts = calloc(net->cfg.batch_actions, sizeof(*net->acts));
	net->ctrl_buf = malloc((size_t)net->cfg.batch_actions * XP_WIRE_MAX_MTU);
	if (!net->acts || !net->ctrl_buf) {
		xp_net_destroy(net);
		return -ENOMEM;
	}
	*out = net;
	return 0;
}

void xp_net_destroy(struct xp_net *net)
{
	if (!net)
		return;
	for (uint32_t i = 0; i < net->n_ev; i++)
		free(net->heap[i].bytes);
	for (uint32_t h = 0; h < net->n_hosts; h++)
		xp_core_destroy(net->hosts[h].core);
	free(net->heap);
	free(net->paths);
	free(net->regions);
	free(net->acts);
	free(net->ctrl_buf);
	free(net);
}

static void default_ctrl(struct xp_link *l)
{
	memset(l, 0, sizeof(*l));
	l->delay_ns = 1000;
}

int xp_net_add_host(struct xp_net *net, const struct xp_core_config *cfg)
{
	struct xp_core_config c = *cfg;
	struct host *h;
	int rc;

	if (net->n_hosts == XP_NET_MAX_HOSTS)
		return -ENOSPC;
	h = &net->hosts[net->n_hosts];
	c.now_ns = net->now_ns;
	rc = xp_core_create(&c, &h->core);
	if (rc < 0)
		return rc;
	h->timer_at = UINT64_MAX;
	for (uint32_t k = 0; k < XP_NET_MAX_HOSTS; k++)
		default_ctrl(&h->ctrl[k]);
	return (int)net->n_hosts++;
}

struct xp_core *xp_net_core(struct xp_net *net, uint32_t host)
{
	return net->hosts[host].core;
}

int xp_net_add_path(struct xp_net *net, uint32_t a, uint32_t b, const struct xp_link *a_to_b,
		    const struct xp_link *b_to_a, uint32_t *handle_a, uint32_t *handle_b)
{
	uint32_t ha = net->n_paths, hb = ha + 1;

	if (a >= net->n_hosts || b >= net->n_hosts)
		return -EINVAL;
	while (net->n_paths + 2 > net->cap_paths)
		if (grow((void **)&net->paths, &net->cap_paths, sizeof(*net->paths)) < 0)
			return -ENOMEM;
	net->paths[ha] = (struct path_end){ .host = a, .peer_handle = hb, .link = *a_to_b };
	net->paths[hb] = (struct path_end){ .host = b, .peer_handle = ha, .link = *b_to_a };
	net->n_paths += 2;
	*handle_a = ha;
	*handle_b = hb;
	return 0;
}

void xp_net_set_ctrl(struct xp_net *net, uint32_t a, uint32_t b, const struct xp_link *link)
{
	net->hosts[a].ctrl[b] = *link;
}

static uint32_t reg(struct xp_net *net, uint32_t host, void *addr, size_t len, uint64_t vbase)
{
	struct region *r;

	while (net->n_regions + 1 > net->cap_regions)
		if (grow((void **)&net->regions, &net->cap_regions, sizeof(*net->regions)) < 0)
			abort();
	r = &net->regions[net->n_regions];
	r->addr = addr;
	r->vbase = vbase;
	r->len = len;
	r->host = host;
	r->valid = true;
	return ++net->n_regions; /* key 0 is never valid */
}

uint32_t xp_net_reg(struct xp_net *net, uint32_t host, void *addr, size_t len)
{
	return reg(net, host, addr, len, (uintptr_t)addr);
}

uint32_t xp_net_reg_virtual(struct xp_net *net, uint32_t host, void *addr, size_t len,
			    uint64_t *vaddr)
{
	uint32_t key = reg(net, host, addr, len, 0);

	*vaddr = (uint64_t)key << 32;
	net->regions[key - 1].vbase = *vaddr;
	return key;
}

/* The real bytes behind [va, va+len) of region @key at @host, or NULL. */
static uint8_t *translate(struct xp_net *net, uint32_t host, uint32_t key, uint64_t va,
			  uint64_t len, bool need_valid)
{
	struct region *r;

	if (!key || key > net->n_regions)
		return NULL;
	r = &net->regions[key - 1];
	if ((need_valid && !r->valid) || r->host != host || va < r->vbase ||
	    va - r->vbase > r->len || len > r->len - (va - r->vbase))
		return NULL;
	return r->addr + (va - r->vbase);
}

void xp_net_invalidate(struct xp_net *net, uint32_t host, uint32_t key)
{
	if (key && key <= net->n_regions && net->regions[key - 1].host == host)
		net->regions[key - 1].valid = false;
}

/* Event heap */

static bool ev_before(const struct ev *a, const struct ev *b)
{
	return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->seq < b->seq);
}

static void push(struct xp_net *net, struct ev *e)
{
	uint32_t i;

	if (net->n_ev == net->cap_ev && grow((void **)&net->heap, &net->cap_ev, sizeof(*e)) < 0)
		abort();
	e->seq = net->seq++;
	i = net->n_ev++;
	while (i > 0 && ev_before(e, &net->heap[(i - 1) / 2])) {
		net->heap[i] = net->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	net->heap[i] = *e;
}

static struct ev pop(struct xp_net *net)
{
	struct ev top = net->heap[0], last = net->heap[--net->n_ev];
	uint32_t i = 0;

	for (;;) {
		uint32_t l = 2 * i + 1, m = l;

		if (l >= net->n_ev)
			break;
		if (l + 1 < net->n_ev && ev_before(&net->heap[l + 1], &net->heap[l]))
			m = l + 1;
		if (!ev_before(&net->heap[m], &last))
			break;
		net->heap[i] = net->heap[m];
		i = m;
	}
	if (net->n_ev)
		net->heap[i] = last;
	return top;
}

uint64_t xp_net_next_event(const struct xp_net *net)
{
	return net->n_ev ? net->heap[0].t_ns : UINT64_MAX;
}

/* Sending */

/* Return: the end of the outage @t falls in, or 0. */
static uint64_t in_outage(const struct xp_link *l, uint64_t t)
{
	for (uint32_t k = 0; k < l->n_outages; k++)
		if (t >= l->outage[k].start_ns && t < l->outage[k].end_ns)
			return l->outage[k].end_ns;
	return 0;
}

/* How many copies of a packet the link delivers (0, 1 or 2), the filter first. */
static unsigned copies(struct xp_net *net, const struct xp_link *l, const struct xp_net_pkt *pkt,
		       uint64_t *extra_ns)
{
	*extra_ns = 0;
	if (net->cfg.filter) {
		enum xp_net_verdict v = net->cfg.filter(net->cfg.arg, pkt, extra_ns);

		if (v == XP_NET_DROP)
			return 0;
		if (v == XP_NET_DUP)
			return 2;
	}
	if (l->reliable) /* held through outages; one that never ends loses it */
		return in_outage(l, net->now_ns) == UINT64_MAX ? 0 : 1;
	if (in_outage(l, net->now_ns) || chance(net, l->loss_ppm))
		return 0;
	return chance(net, l->dup_ppm) ? 2 : 1;
}

static uint64_t arrival(struct xp_net *net, const struct xp_link *l)
{
	uint64_t t = net->now_ns + l->delay_ns, out = in_outage(l, net->now_ns);

	/* a reliable link (an RC QP's NIC) retransmits until the outage is over */
	if (l->reliable && out)
		t = out + l->delay_ns;

	if (l->jitter_ns)
		t += rnd(net) % (l->jitter_ns + 1);
	if (chance(net, l->spike_ppm))
		t += l->spike_ns;
	return t;
}

static void send_write(struct xp_net *net, uint32_t host, const struct xp_write *w)
{
	struct path_end *pe;
	struct xp_net_pkt pkt;
	uint64_t extra;
	unsigned n;

	net->stats.writes++;
	if (w->path >= net->n_paths || net->paths[w->path].host != host)
		abort(); /* the core named a path this host does not have */
	pe = &net->paths[w->path];
	pkt = (struct xp_net_pkt){ .src = host, .dst = net->paths[pe->peer_handle].host,
				   .now_ns = net->now_ns, .write = w, .len = w->len };
	if (chance(net, pe->link.werr_ppm)) {
		struct ev e = { .kind = EV_WRITE_FAILED, .host = host, .token = w->token,
				.t_ns = net->now_ns };

		net->stats.write_errors++;
		push(net, &e);
		return;
	}
	n = copies(net, &pe->link, &pkt, &extra);
	if (!n)
		net->stats.lost++;
	for (unsigned k = 0; k < n; k++) {
		struct ev e = { .kind = EV_WRITE, .host = pkt.dst, .path = pe->peer_handle,
				.imm = w->imm, .len = w->len, .rkey = w->rkey, .raddr = w->raddr };

		/* the source region must hold what the core asked to send */
		e.src = w->lkey ? translate(net, host, w->lkey, w->laddr, w->len, false)
				: (const void *)(uintptr_t)w->laddr;
		if (!e.src && w->len)
			abort();

		e.t_ns = arrival(net, &pe->link) + extra;
		if (pe->link.reliable) {
			if (e.t_ns < pe->last_arrival_ns)
				e.t_ns = pe->last_arrival_ns;
			pe->last_arrival_ns = e.t_ns;
		}
		e.ce = chance(net, pe->link.ecn_ppm);
		if (k)
			net->stats.duplicated++;
		push(net, &e);
	}
}

static void send_ctrl(struct xp_net *net, uint32_t host, const struct xp_ctrl *c)
{
	const struct xp_link *l;
	struct xp_net_pkt pkt;
	uint64_t extra;
	unsigned n;

	net->stats.ctrls++;
	if (c->peer >= net->n_hosts)
		abort();
	l = &net->hosts[host].ctrl[c->peer];
	pkt = (struct xp_net_pkt){ .src = host, .dst = c->peer, .is_ctrl = true,
				   .now_ns = net->now_ns, .bytes = c->bytes, .len = c->len };
	n = copies(net, l, &pkt, &extra);
	if (!n)
		net->stats.lost++;
	for (unsigned k = 0; k < n; k++) {
		struct ev e = { .kind = EV_CTRL, .host = c->peer, .from = host, .len = c->len };

		e.bytes = malloc(c->len ? c->len : 1);
		if (!e.bytes)
			abort();
		memcpy(e.bytes, c->bytes, c->len);
		e.t_ns = arrival(net, l) + extra;
		if (k)
			net->stats.duplicated++;
		push(net, &e);
	}
}

static void trace_action(struct xp_net *net, uint32_t host, const struct xp_action *a)
{
	trace(net, net->now_ns);
	trace(net, (uint64_t)host << 8 | a->kind);
	switch (a->kind) {
	case XP_ACT_WRITE:
		trace(net, (uint64_t)a->u.write.imm << 32 | a->u.write.len);
		trace(net, a->u.write.path);
		break;
	case XP_ACT_CTRL:
		for (uint32_t i = 0; i < a->u.ctrl.len; i++)
			trace(net, a->u.ctrl.bytes[i]);
		break;
	default:
		trace(net, (uint64_t)a->u.comp.conn << 40 | (uint64_t)a->u.comp.kind << 32 |
				   (uint32_t)a->u.comp.status);
		trace(net, a->u.comp.cookie);
		trace(net, a->u.comp.bytes);
		break;
	}
}

static void schedule_timer(struct xp_net *net, uint32_t host)
{
	struct host *h = &net->hosts[host];
	uint64_t d = xp_core_next_deadline(h->core);
	struct ev e = { .kind = EV_TIMER, .host = host };

	if (d == UINT64_MAX || d >= h->timer_at)
		return;
	if (d < net->now_ns)
		d = net->now_ns;
	h->timer_at = d;
	e.t_ns = d;
	e.gen = ++h->timer_gen;
	push(net, &e);
}

void xp_net_kick(struct xp_net *net, uint32_t host)
{
	struct host *h = &net->hosts[host];
	uint32_t mtus = net->cfg.ctrl_mtus && net->cfg.ctrl_mtus < net->cfg.batch_actions
				? net->cfg.ctrl_mtus
				: net->cfg.batch_actions;
	struct xp_batch b = { .acts = net->acts, .cap = net->cfg.batch_actions,
			      .ctrl_buf = net->ctrl_buf, .ctrl_cap = mtus * XP_WIRE_MAX_MTU };

	if (h->dead)
		return;
	for (;;) {
		xp_batch_reset(&b, net->cfg.max_writes ? net->cfg.max_writes : UINT32_MAX);
		if (!xp_core_drain(h->core, net->now_ns, &b))
			break;
		for (uint32_t i = 0; i < b.n; i++) {
			const struct xp_action *a = &b.acts[i];

			trace_action(net, host, a);
			if (a->kind == XP_ACT_WRITE)
				send_write(net, host, &a->u.write);
			else if (a->kind == XP_ACT_CTRL)
				send_ctrl(net, host, &a->u.ctrl);
			else if (net->cfg.on_complete)
				net->cfg.on_complete(net->cfg.arg, net, host, &a->u.comp);
		}
	}
	schedule_timer(net, host);
}

/* Delivery */

static bool place(struct xp_net *net, const struct ev *e)
{
	uint8_t *dst = translate(net, e->host, e->rkey, e->raddr, e->len, true);

	if (!dst)
		return false;
	if (e->len)
		memcpy(dst, e->src, e->len);
	return true;
}

static void run(struct xp_net *net, struct ev *e)
{
	struct host *h = &net->hosts[e->host];

	net->now_ns = e->t_ns;
	net->stats.events++;
	if (h->dead) {
		free(e->bytes);
		return;
	}
	switch (e->kind) {
	case EV_WRITE:
		h->last_from[net->paths[net->paths[e->path].peer_handle].host] = net->now_ns;
		if (!place(net, e)) {
			net->stats.rkey_drops++;
			break;
		}
		net->stats.delivered_chunks++;
		xp_core_on_chunk(h->core, e->imm, e->len, e->path, e->ce, net->now_ns);
		break;
	case EV_CTRL:
		h->last_from[e->from] = net->now_ns;
		xp_core_on_ctrl(h->core, e->from, e->bytes, e->len, net->now_ns);
		free(e->bytes);
		break;
	case EV_WRITE_FAILED:
		xp_core_on_write_done(h->core, e->token, -EIO, net->now_ns);
		break;
	default:
		if (e->gen != h->timer_gen)
			return; /* superseded */
		h->timer_at = UINT64_MAX;
		xp_core_timer(h->core, net->now_ns);
		break;
	}
	xp_net_kick(net, e->host);
}

bool xp_net_step(struct xp_net *net)
{
	struct ev e;

	if (!net->n_ev)
		return false;
	e = pop(net);
	run(net, &e);
	return true;
}

void xp_net_run_until(struct xp_net *net, uint64_t t_ns)
{
	while (net->n_ev && net->heap[0].t_ns <= t_ns)
		xp_net_step(net);
	if (t_ns > net->now_ns)
		net->now_ns = t_ns;
}

void xp_net_kill(struct xp_net *net, uint32_t host)
{
	net->hosts[host].dead = true;
}

bool xp_net_dead(const struct xp_net *net, uint32_t host)
{
	return net->hosts[host].dead;
}

uint64_t xp_net_last_arrival(const struct xp_net *net, uint32_t src, uint32_t dst)
{
	return net->hosts[dst].last_from[src];
}

uint64_t xp_net_now(const struct xp_net *net)
{
	return net->now_ns;
}

uint64_t xp_net_trace_hash(const struct xp_net *net)
{
	return net->trace;
}

const struct xp_net_stats *xp_net_stats(const struct xp_net *net)
{
	return &net->stats;
}
