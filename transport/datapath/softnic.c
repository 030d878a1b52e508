// SPDX-License-Identifier: MIT
/*
 * softnic.c - the softnic datapath: raw UC-like queue pairs and control
 * queue pairs over the UET emulation, in virtual time, with real bytes
 * (softnic.h says what it does; datapath.h what every datapath provides).
 *
 * Every message in the emulation (a write, a control packet) is a "flight":
 * its bytes, copied at post time, and where it goes. The emulation carries
 * only its size and the flight's index as its cookie; when it delivers the
 * message whole, the receiving instance places the bytes through its key
 * and queues an event; when it drops it, the flight is freed and counted.
 * Held deliveries (reordering, delay spikes, duplicates) wait in a list
 * ordered by due time that the driver serves between emulation events.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath.h"
#include "keys.h"
#include "softnic.h"
#include "wire.h"

#define SOFTNIC_MAX_HOSTS 1024
#define SOFTNIC_DEFAULT_SEND_SLOTS 8
#define SOFTNIC_DEFAULT_PATHS 256
#define SOFTNIC_DEFAULT_KEYS 65536
#define SOFTNIC_DEFAULT_CTRL_MTU 1024
#define SOFTNIC_CTRL_ENTROPY 0xF000u /* control QPs' entropy; data paths stay below it */
#define SOFTNIC_RUNS_PER_STEP 256    /* run_once() calls per engine per step, at most */
#define PS_PER_NS 1000ull
#define ADDR_MAGIC 0x5b
#define PATH_MAGIC 0x5c

enum flight_kind { FLIGHT_DATA = 1, FLIGHT_CTRL = 2 };

struct flight {
	uint8_t kind;
	bool used;
	bool in_fabric;          /* posted, neither delivered nor dropped yet */
	uint32_t gen;            /* in the cookie: a late report of a swept flight is ignored */
	uint32_t src_host, dst_host;
	uint32_t dst_path;       /* DATA: the receiver's path handle */
	uint32_t imm, rkey, len;
	uint64_t raddr;
	uint8_t *bytes;
	uint32_t next_free;
};

struct held {
	uint64_t due_ns;
	uint64_t order;          /* ties: first held, first served */
	uint32_t flight;
	bool ce;
	bool keep;               /* a copy of a flight delivered again later: keep the flight */
};

struct sn_path {
	bool used;
	uint16_t entropy;
	int32_t qp;              /* the emulation's QP, -1 until connected */
	uint32_t remote_host;
	uint32_t remote_path;    /* the peer's handle of the path: chunks arrive on it there */
	uint32_t next_free;
};

struct sn_peer {
	uint32_t refs;
	int32_t qp;              /* the control QP to that host, -1 until needed */
};

struct sn_event {
	struct xp_dp_event ev;
	uint32_t flight;         /* CTRL: whose bytes ev.bytes points at */
};

struct softnic {
	struct xp_dp base;
	struct xp_softnic_world *w;
	struct xp_dp_config cfg;
	uint32_t host;
	struct xp_keys keys;
	struct sn_path *paths;
	uint32_t path_free;
	struct sn_peer *peers;   /* by host */
	uint32_t in_sq;          /* writes in the send queue (send slots taken) */
	struct sn_event *evq;    /* a ring */
	uint32_t evq_head, evq_n, evq_cap;
	uint32_t *polled;        /* control flights handed out by the last poll */
	uint32_t n_polled;
	struct xp_dp_stats st;
};

struct xp_softnic_world {
	struct uet_scenario *scn; /* the emulation keeps pointers into it */
	struct uet_sim *sim;
	uint32_t n_hosts;
	uint64_t line_rate_bps;
	uint64_t rtt_ns;
	struct softnic **hosts;
	struct flight *fl;
	uint32_t fl_cap, fl_free, fl_used;
	struct held *held;       /* a binary heap by (due_ns, order) */
	uint32_t held_n, held_cap;
	uint64_t held_order;
	struct xp_softnic_faults faults;
	uint64_t rng;
	int err;                 /* the first -ENOMEM inside a callback */
};

/* ---- randomness ---------------------------------------------------------------------------- */

static uint64_t rng_next(struct xp_softnic_world *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool chance(struct xp_softnic_world *w, uint32_t ppm)
{
	return ppm && rng_next(w) % 1000000u < ppm;
}

/* ---- flights --------------------------------------------------------------------------------- */

static int flight_grow(struct xp_softnic_world *w)
{
	uint32_t cap = w->fl_cap ? 2 * w->fl_cap : 1024;
	struct flight *fl = realloc(w->fl, (size_t)cap * sizeof(*fl));

	if (!fl)
		return -ENOMEM;
	memset(fl + w->fl_cap, 0, (size_t)(cap - w->fl_cap) * sizeof(*fl));
	for (uint32_t i = w->fl_cap; i < cap; i++)
		fl[i].next_free = i + 1 < cap ? i + 1 : w->fl_free;
	w->fl_free = w->fl_cap;
	w->fl = fl;
	w->fl_cap = cap;
	return 0;
}

static int flight_new(struct xp_softnic_world *w, uint8_t kind, uint32_t len, uint32_t *out)
{
	struct flight *f;
	uint32_t i;

	if (w->fl_free == UINT32_MAX && flight_grow(w) < 0)
		return -ENOMEM;
	i = w->fl_free;
	f = &w->fl[i];
	f->bytes = len ? malloc(len) : NULL;
	if (len && !f->bytes)
		return -ENOMEM;
	w->fl_free = f->next_free;
	f->gen++;
	f->used = true;
	f->kind = kind;
	f->len = len;
	w->fl_used++;
	*out = i;
	return 0;
}

static void flight_free(struct xp_softnic_world *w, uint32_t i)
{
	struct flight *f = &w->fl[i];
	uint32_t gen = f->gen;

	free(f->bytes);
	memset(f, 0, sizeof(*f));
	f->gen = gen;
	f->next_free = w->fl_free;
	w->fl_free = i;
	w->fl_used--;
}

static uint64_t flight_cookie(const struct xp_softnic_world *w, uint32_t i)
{
	return (uint64_t)w->fl[i].gen << 32 | i;
}

/* The flight a report names, or UINT32_MAX when it was swept as lost already. */
static uint32_t flight_of_cookie(const struct xp_softnic_world *w, uint64_t cookie)
{
	uint32_t i = (uint32_t)cookie;

	if (i >= w->fl_cap || !w->fl[i].used || !w->fl[i].in_fabric ||
	    w->fl[i].gen != (uint32_t)(cookie >> 32))
		return UINT32_MAX;
	return i;
}

/* ---- held deliveries: a min-heap --------------------------------------------------------------- */

static bool held_before(const struct held *a, const struct held *b)
{
	return a->due_ns != b->due_ns ? a->due_ns < b->due_ns : a->order < b->order;
}

static int held_push(struct xp_softnic_world *w, struct held h)
{
	uint32_t i;

	if (w->held_n == w->held_cap) {
		uint32_t cap = w->held_cap ? 2 * w->held_cap : 256;
		struct held *n = realloc(w->held, (size_t)cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		w->held = n;
		w->held_cap = cap;
	}
	h.order = w->held_order++;
	for (i = w->held_n++; i > 0 && held_before(&h, &w->held[(i - 1) / 2]); i = (i - 1) / 2)
		w->held[i] = w->held[(i - 1) / 2];
	w->held[i] = h;
	return 0;
}

static struct held held_pop(struct xp_softnic_world *w)
{
	struct held top = w->held[0], last = w->held[--w->held_n];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= w->held_n)
			break;
		if (c + 1 < w->held_n && held_before(&w->held[c + 1], &w->held[c]))
			c++;
		if (!held_before(&w->held[c], &last))
			break;
		w->held[i] = w->held[c];
		i = c;
	}
	if (w->held_n)
		w->held[i] = last;
	return top;
}

/* ---- delivery ---------------------------------------------------------------------------------- */

static int evq_push(struct softnic *s, const struct sn_event *e)
{
	if (s->evq_n == s->evq_cap) {
		uint32_t cap = s->evq_cap ? 2 * s->evq_cap : 1024;
		struct sn_event *q = malloc((size_t)cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		for (uint32_t i = 0; i < s->evq_n; i++)
			q[i] = s->evq[(s->evq_head + i) % s->evq_cap];
		free(s->evq);
		s->evq = q;
		s->evq_head = 0;
		s->evq_cap = cap;
	}
	s->evq[(s->evq_head + s->evq_n++) % s->evq_cap] = *e;
	return 0;
}

/*
 * Place flight @i at its receiver now; a control flight moves to the receiver's queue.
 * @keep: the flight is delivered again later (a duplicate): leave it (a control packet is
 * copied).
 */
static void deliver(struct xp_softnic_world *w, uint32_t i, bool ce, bool keep)
{
	struct flight *f = &w->fl[i];
	struct softnic *s = f->dst_host < w->n_hosts ? w->hosts[f->dst_host] : NULL;
	struct sn_event e = { 0 };

	if (!s) {
		if (!keep)
			flight_free(w, i);
		return;
	}
	if (f->kind == FLIGHT_DATA) {
		if (!xp_keys_place(&s->keys, f->rkey, f->raddr, f->len, f->bytes))
			s->st.writes_bad_key++;
		else {
			s->st.bytes_copied += f->len;
			s->st.chunks_delivered++;
			e.ev = (struct xp_dp_event){ .kind = XP_DP_EV_CHUNK, .ecn_ce = ce,
						     .imm = f->imm, .len = f->len,
						     .path = f->dst_path };
			e.flight = UINT32_MAX;
			if (evq_push(s, &e) < 0 && !w->err)
				w->err = -ENOMEM;
		}
		if (!keep)
			flight_free(w, i);
		return;
	}
	/* a control packet: its bytes stay in the flight until the poll after the one that
	 * hands it out (a duplicate gets its own copy) */
	if (keep) {
		uint32_t c;

		if (flight_new(w, FLIGHT_CTRL, f->len, &c) < 0) {
			w->err = -ENOMEM;
			return;
		}
		f = &w->fl[i]; /* flight_new may move the table */
		memcpy(w->fl[c].bytes, f->bytes, f->len);
		w->fl[c].src_host = f->src_host;
		w->fl[c].dst_host = f->dst_host;
		i = c;
		f = &w->fl[c];
	}
	s->st.ctrl_received++;
	e.ev = (struct xp_dp_event){ .kind = XP_DP_EV_CTRL, .len = f->len, .peer = f->src_host };
	e.flight = i;
	if (evq_push(s, &e) < 0) {
		flight_free(w, i);
		w->err = -ENOMEM;
	}
}

/* The emulation delivered flight @cookie whole: place it now or hold it (faults). */
static void on_delivered(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps, bool ce)
{
	struct xp_softnic_world *w = ctx;
	uint64_t now_ns = t_ps / PS_PER_NS;
	uint32_t i = flight_of_cookie(w, cookie);
	struct held h = { .flight = i, .ce = ce };

	(void)qp;
	if (i == UINT32_MAX)
		return;
	w->fl[i].in_fabric = false;
	if (chance(w, w->faults.dup_ppm)) {
		struct held d = { .flight = i, .ce = ce,
				  .due_ns = now_ns + 1 + rng_next(w) % (w->rtt_ns + 1) };

		/* the original goes first (now, or after a spike), its duplicate after it */
		h.keep = true;
		h.due_ns = now_ns;
		if (chance(w, w->faults.spike_ppm))
			h.due_ns += w->faults.spike_ns;
		if (d.due_ns <= h.due_ns)
			d.due_ns = h.due_ns + 1;
		if (held_push(w, h) < 0 || held_push(w, d) < 0)
			w->err = -ENOMEM;
		return;
	}
	if (chance(w, w->faults.spike_ppm))
		h.due_ns = now_ns + w->faults.spike_ns;
	else if (chance(w, w->faults.reorder_ppm))
		h.due_ns = now_ns + 1 + rng_next(w) % (w->faults.reorder_ns + 1);
	else {
		deliver(w, i, ce, false);
		return;
	}
	if (held_push(w, h) < 0)
		w->err = -ENOMEM;
}

static void on_dropped(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps)
{
	struct xp_softnic_world *w = ctx;
	uint32_t i = flight_of_cookie(w, cookie);
	struct softnic *s;

	(void)qp;
	(void)t_ps;
	if (i == UINT32_MAX)
		return;
	s = w->fl[i].src_host < w->n_hosts ? w->hosts[w->fl[i].src_host] : NULL;
	if (s && w->fl[i].kind == FLIGHT_DATA)
		s->st.writes_lost++;
	else if (s)
		s->st.ctrl_dropped++;
	flight_free(w, i);
}

/* A write's last packet left the send queue: its send slot is free. */
static void on_sent(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps)
{
	struct xp_softnic_world *w = ctx;
	uint32_t i = flight_of_cookie(w, cookie);
	struct softnic *s;

	(void)qp;
	(void)t_ps;
	if (i == UINT32_MAX)
		return;
	s = w->fl[i].src_host < w->n_hosts ? w->hosts[w->fl[i].src_host] : NULL;
	if (s && w->fl[i].kind == FLIGHT_DATA && s->in_sq)
		s->in_sq--;
}

/*
 * The switch a host's packets meet first (its node id), where the per-packet
 * faults are drawn once; UINT32_MAX: not known for this topology (fat tree),
 * so they are drawn at every hop.
 */
static uint32_t first_switch(const struct xp_softnic_world *w, uint32_t host)
{
	const struct uet_topo_cfg *t = &w->scn->topo;

	if (t->kind == UET_TOPO_INCAST)
		return w->n_hosts;
	if (t->kind == UET_TOPO_LEAF_SPINE)
		return w->n_hosts + host / t->hosts_per_leaf;
	return UINT32_MAX;
}

/* The switches' fault draws: loss of any raw packet, trims of data packets. */
static enum uet_filter_verdict at_switch(void *ctx, const struct uet_pkt_view *p)
{
	struct xp_softnic_world *w = ctx;
	uint32_t first;

	if (p->kind != UET_PKT_RAW)
		return UET_FILTER_PASS;
	first = first_switch(w, p->src);
	if (first != UINT32_MAX && p->nic != first)
		return UET_FILTER_PASS;
	if (chance(w, w->faults.loss_ppm))
		return UET_FILTER_DROP;
	if (p->entropy < SOFTNIC_CTRL_ENTROPY && chance(w, w->faults.trim_ppm))
		return UET_FILTER_TRIM;
	return UET_FILTER_PASS;
}

/* ---- the world ----------------------------------------------------------------------------------- */

int xp_softnic_world_create(const struct uet_scenario *scn, uint64_t seed,
			    struct xp_softnic_world **out, struct pcm_diag *diag)
{
	struct uet_scenario *copy = malloc(sizeof(*copy));
	struct xp_softnic_world *w = calloc(1, sizeof(*w));
	struct uet_raw_ops ops = { .delivered = on_delivered, .dropped = on_dropped,
				   .sent = on_sent };
	struct uet_hooks hooks = { .at_switch = at_switch };
	int rc;

	if (!copy || !w) {
		free(copy);
		free(w);
		return -ENOMEM;
	}
	*copy = *scn;
	copy->traffic = UET_TRAFFIC_NONE;
	copy->flows = NULL;
	copy->n_flows = 0;
	copy->marks = NULL;
	copy->n_marks = copy->cap_marks = 0;
	w->scn = copy;
	rc = uet_sim_create(copy, NULL, seed, &w->sim, diag);
	if (rc < 0) {
		free(copy);
		free(w);
		return rc;
	}
	w->n_hosts = uet_sim_n_hosts(w->sim);
	if (w->n_hosts > SOFTNIC_MAX_HOSTS) {
		snprintf(diag->msg, sizeof(diag->msg), "softnic: %u hosts (at most %u)",
			 w->n_hosts, SOFTNIC_MAX_HOSTS);
		xp_softnic_world_destroy(w);
		return -EINVAL;
	}
	w->hosts = calloc(w->n_hosts, sizeof(*w->hosts));
	if (!w->hosts) {
		xp_softnic_world_destroy(w);
		return -ENOMEM;
	}
	w->line_rate_bps = scn->nic.data_rate_bps;
	w->rtt_ns = uet_sim_unloaded_rtt_ps(w->sim) / PS_PER_NS;
	w->rng = seed ^ 0x50f7c0de5eedull;
	w->fl_free = UINT32_MAX;
	ops.ctx = w;
	hooks.ctx = w;
	uet_sim_set_raw_ops(w->sim, &ops);
	uet_sim_set_hooks(w->sim, &hooks);
	*out = w;
	return 0;
}

void xp_softnic_world_destroy(struct xp_softnic_world *w)
{
	if (!w)
		return;
	uet_sim_destroy(w->sim);
	for (uint32_t i = 0; i < w->fl_cap; i++)
		free(w->fl[i].bytes);
	free(w->fl);
	free(w->held);
	free(w->hosts);
	free(w->scn);
	free(w);
}

void xp_softnic_world_set_faults(struct xp_softnic_world *w, const struct xp_softnic_faults *f)
{
	w->faults = *f;
}

struct uet_sim *xp_softnic_world_sim(struct xp_softnic_world *w)
{
	return w->sim;
}

uint64_t xp_softnic_now_ns(const struct xp_softnic_world *w)
{
	return uet_sim_now(w->sim) / PS_PER_NS;
}

bool xp_softnic_world_busy(const struct xp_softnic_world *w)
{
	return w->held_n || uet_sim_next_event_ps(w->sim) != UINT64_MAX;
}

/*
 * The emulation never reports a message whose last packets were lost (uet.h):
 * once it has nothing left to do, every flight still in the fabric is lost.
 */
static void sweep_lost(struct xp_softnic_world *w)
{
	for (uint32_t i = 0; i < w->fl_cap && w->fl_used; i++) {
		struct flight *f = &w->fl[i];
		struct softnic *s;

		if (!f->used || !f->in_fabric)
			continue;
		s = f->src_host < w->n_hosts ? w->hosts[f->src_host] : NULL;
		if (s && f->kind == FLIGHT_DATA)
			s->st.writes_lost++;
		else if (s)
			s->st.ctrl_dropped++;
		flight_free(w, i);
	}
}

/* Serve held deliveries due at or before @t_ns, and the emulation's events, up to @t_ns. */
static int world_run_until(struct xp_softnic_world *w, uint64_t t_ns)
{
	for (;;) {
		uint64_t upto = t_ns;
		int rc;

		if (w->held_n && w->held[0].due_ns < upto)
			upto = w->held[0].due_ns;
		rc = uet_sim_run_until(w->sim, upto * PS_PER_NS);
		if (rc < 0)
			return rc;
		while (w->held_n && w->held[0].due_ns <= upto) {
			struct held h = held_pop(w);

			deliver(w, h.flight, h.ce, h.keep);
		}
		if (w->err)
			return w->err;
		if (!w->held_n && uet_sim_next_event_ps(w->sim) == UINT64_MAX)
			sweep_lost(w);
		if (upto == t_ns)
			return 0;
	}
}

uint64_t xp_softnic_next_ns(const struct xp_softnic_world *w)
{
	uint64_t sim_next = uet_sim_next_event_ps(w->sim), next = UINT64_MAX;

	if (sim_next != UINT64_MAX)
		next = (sim_next + PS_PER_NS - 1) / PS_PER_NS;
	if (w->held_n && w->held[0].due_ns < next)
		next = w->held[0].due_ns;
	return next;
}

int xp_softnic_run_until(struct xp_softnic_world *w, uint64_t t_ns)
{
	uint64_t now = xp_softnic_now_ns(w);

	return world_run_until(w, t_ns < now ? now : t_ns);
}

uint32_t xp_softnic_world_flights(const struct xp_softnic_world *w)
{
	return w->fl_used;
}

bool xp_softnic_dp_pending(struct xp_dp *dp)
{
	return ((struct softnic *)dp)->evq_n != 0;
}

/* ---- the instance -------------------------------------------------------------------------------- */

static uint32_t or_default(uint32_t v, uint32_t def)
{
	return v ? v : def;
}

static void softnic_close(struct xp_dp *dp)
{
	struct softnic *s = (struct softnic *)dp;

	if (s->w && s->host < s->w->n_hosts && s->w->hosts[s->host] == s)
		s->w->hosts[s->host] = NULL;
	for (uint32_t i = 0; s->w && i < s->n_polled; i++)
		flight_free(s->w, s->polled[i]);
	for (uint32_t i = 0; s->w && i < s->evq_n; i++) {
		uint32_t f = s->evq[(s->evq_head + i) % s->evq_cap].flight;

		if (f != UINT32_MAX)
			flight_free(s->w, f);
	}
	xp_keys_fini(&s->keys);
	free(s->paths);
	free(s->peers);
	free(s->evq);
	free(s->polled);
	free(s);
}

static int softnic_open(const struct xp_dp_config *cfg, struct xp_dp **out, struct pcm_diag *diag)
{
	struct xp_softnic_world *w = cfg ? cfg->world : NULL;
	struct softnic *s;
	int rc;

	if (!w) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: no emulated fabric (xp_dp_config.world)");
		return -EINVAL;
	}
	if (cfg->host >= w->n_hosts || w->hosts[cfg->host]) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u %s (the fabric has %u hosts)", cfg->host,
			 cfg->host >= w->n_hosts ? "does not exist" : "already has an instance",
			 w->n_hosts);
		return cfg->host >= w->n_hosts ? -EINVAL : -EBUSY;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base.ops = &xp_dp_softnic_ops;
	s->cfg = *cfg;
	s->cfg.send_slots = or_default(cfg->send_slots, SOFTNIC_DEFAULT_SEND_SLOTS);
	s->cfg.max_paths = or_default(cfg->max_paths, SOFTNIC_DEFAULT_PATHS);
	s->cfg.max_keys = or_default(cfg->max_keys, SOFTNIC_DEFAULT_KEYS);
	s->cfg.ctrl_mtu = or_default(cfg->ctrl_mtu, SOFTNIC_DEFAULT_CTRL_MTU);
	s->host = cfg->host;
	s->paths = calloc(s->cfg.max_paths, sizeof(*s->paths));
	s->peers = calloc(w->n_hosts, sizeof(*s->peers));
	rc = s->paths && s->peers ? xp_keys_init(&s->keys, s->cfg.max_keys) : -ENOMEM;
	if (rc < 0 || s->cfg.ctrl_mtu > XP_WIRE_MAX_MTU) {
		snprintf(diag->msg, sizeof(diag->msg), "softnic datapath: host %u: %s", cfg->host,
			 rc < 0 ? strerror(-rc) : "ctrl_mtu too large");
		softnic_close(&s->base);
		return rc < 0 ? rc : -EINVAL;
	}
	for (uint32_t i = 0; i < s->cfg.max_paths; i++)
		s->paths[i].next_free = i + 1 < s->cfg.max_paths ? i + 1 : UINT32_MAX;
	for (uint32_t h = 0; h < w->n_hosts; h++)
		s->peers[h].qp = -1;
	s->w = w;
	w->hosts[s->host] = s;
	*out = &s->base;
	return 0;
}

static void softnic_info(struct xp_dp *dp, struct xp_dp_info *info)
{
	struct softnic *s = (struct softnic *)dp;

	memset(info, 0, sizeof(*info));
	info->name = "softnic";
	info->target = "softnic";
	info->caps = XP_DP_CAP_RECV_KEYS | XP_DP_CAP_UC | XP_DP_CAP_ECN |
		     XP_DP_CAP_VIRTUAL_TIME;
	info->numa_node = -1;
	info->line_rate_bps = s->w->line_rate_bps;
	/* a few unloaded round trips: no scheduler noise in virtual time */
	info->rto_min_ns = 4 * s->w->rtt_ns > 20000 ? 4 * s->w->rtt_ns : 20000;
	info->ctrl_mtu = s->cfg.ctrl_mtu;
	info->max_write_bytes = XP_CHUNK_BYTES_MAX;
	info->max_paths = s->cfg.max_paths;
	info->send_slots = s->cfg.send_slots;
}

static void softnic_stats(struct xp_dp *dp, struct xp_dp_stats *st)
{
	*st = ((struct softnic *)dp)->st;
}

static int softnic_mr_reg(struct xp_dp *dp, void *addr, size_t len, struct xp_dp_mr *mr,
			  struct pcm_diag *diag)
{
	struct softnic *s = (struct softnic *)dp;
	uint32_t key;
	int rc;

	if (!addr && len) {
		snprintf(diag->msg, sizeof(diag->msg), "softnic datapath: a NULL region");
		return -EINVAL;
	}
	rc = xp_keys_alloc(&s->keys, (uint64_t)(uintptr_t)addr, len, &key);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u: all %u keys are in use", s->host, s->keys.n);
		return rc;
	}
	*mr = (struct xp_dp_mr){ .addr = addr, .len = len, .lkey = key, .rkey = key,
				 .handle = key };
	return 0;
}

static void softnic_mr_dereg(struct xp_dp *dp, struct xp_dp_mr *mr)
{
	xp_keys_release(&((struct softnic *)dp)->keys, (uint32_t)mr->handle);
}

static int softnic_recv_key(struct xp_dp *dp, const struct xp_dp_mr *mr, uint64_t addr,
			    uint64_t len, uint32_t *rkey)
{
	uint64_t base = (uint64_t)(uintptr_t)mr->addr;

	if (addr < base || len > mr->len || addr - base > mr->len - len)
		return -EINVAL;
	return xp_keys_alloc(&((struct softnic *)dp)->keys, addr, len, rkey);
}

static void softnic_recv_key_release(struct xp_dp *dp, uint32_t rkey)
{
	xp_keys_release(&((struct softnic *)dp)->keys, rkey);
}

/* Blobs: magic u8, host u32, then (paths) the path handle u32; little endian. */
static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void softnic_local_addr(struct xp_dp *dp, struct xp_dp_blob *addr)
{
	addr->len = 5;
	addr->bytes[0] = ADDR_MAGIC;
	put32(addr->bytes + 1, ((struct softnic *)dp)->host);
}

static int parse_host(const struct softnic *s, const struct xp_dp_blob *b, uint8_t magic,
		      uint8_t len, uint32_t *host, struct pcm_diag *diag)
{
	if (b->len != len || b->bytes[0] != magic) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u: a malformed %s blob (%u bytes)", s->host,
			 magic == ADDR_MAGIC ? "address" : "path", b->len);
		return -EINVAL;
	}
	*host = get32(b->bytes + 1);
	if (*host >= s->w->n_hosts || *host == s->host) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u: peer host %u is %s", s->host, *host,
			 *host == s->host ? "this host" : "not in the fabric");
		return -EINVAL;
	}
	return 0;
}

static int softnic_peer_open(struct xp_dp *dp, const struct xp_dp_blob *addr, uint32_t *peer,
			     struct pcm_diag *diag)
{
	struct softnic *s = (struct softnic *)dp;
	uint32_t host;
	int rc = parse_host(s, addr, ADDR_MAGIC, 5, &host, diag);

	if (rc < 0)
		return rc;
	s->peers[host].refs++;
	*peer = host;
	return 0;
}

static void softnic_peer_close(struct xp_dp *dp, uint32_t peer)
{
	struct softnic *s = (struct softnic *)dp;

	/* the control QP stays: the emulation has no QP removal, and a peer opened again
	 * reuses it */
	if (peer < s->w->n_hosts && s->peers[peer].refs)
		s->peers[peer].refs--;
}

static int softnic_path_create(struct xp_dp *dp, const struct xp_dp_path_attr *attr,
			       uint32_t *path, uint16_t *entropy, struct xp_dp_blob *blob,
			       struct pcm_diag *diag)
{
	struct softnic *s = (struct softnic *)dp;
	uint32_t i = s->path_free;

	if (attr->rc) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u: no RC paths (raw UC-like QPs only)", s->host);
		return -EOPNOTSUPP;
	}
	if (i == UINT32_MAX) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u: all %u paths are in use", s->host,
			 s->cfg.max_paths);
		return -ENOSPC;
	}
	s->path_free = s->paths[i].next_free;
	s->paths[i].used = true;
	s->paths[i].qp = -1;
	/* its own entropy: the hint if any, else drawn, below the control QPs' */
	s->paths[i].entropy = (uint16_t)((attr->entropy ? attr->entropy
							: (uint16_t)rng_next(s->w)) %
					 SOFTNIC_CTRL_ENTROPY);
	*entropy = s->paths[i].entropy;
	*path = i;
	blob->len = 9;
	blob->bytes[0] = PATH_MAGIC;
	put32(blob->bytes + 1, s->host);
	put32(blob->bytes + 5, i);
	return 0;
}

static int softnic_path_connect(struct xp_dp *dp, uint32_t path, uint32_t peer,
				const struct xp_dp_blob *remote, struct pcm_diag *diag)
{
	struct softnic *s = (struct softnic *)dp;
	struct uet_raw_qp_attr qa = { 0 };
	uint32_t host;
	int rc;

	if (path >= s->cfg.max_paths || !s->paths[path].used || s->paths[path].qp >= 0) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u: path %u is not a fresh path", s->host, path);
		return -EINVAL;
	}
	rc = parse_host(s, remote, PATH_MAGIC, 9, &host, diag);
	if (rc < 0)
		return rc;
	if (host != peer) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u: path %u's peer is host %u, not %u", s->host,
			 path, host, peer);
		return -EINVAL;
	}
	qa.entropy = s->paths[path].entropy;
	rc = uet_sim_raw_qp_create(s->w->sim, s->host, host, &qa);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u: no raw QP to host %u: %s", s->host, host,
			 strerror(-rc));
		return rc;
	}
	s->paths[path].qp = rc;
	s->paths[path].remote_host = host;
	s->paths[path].remote_path = get32(remote->bytes + 5);
	return 0;
}

static void softnic_path_destroy(struct xp_dp *dp, uint32_t path)
{
	struct softnic *s = (struct softnic *)dp;

	if (path >= s->cfg.max_paths || !s->paths[path].used)
		return;
	s->paths[path] = (struct sn_path){ .qp = -1, .next_free = s->path_free };
	s->path_free = path;
}

static uint32_t softnic_send_slots(struct xp_dp *dp)
{
	struct softnic *s = (struct softnic *)dp;

	return s->cfg.send_slots - s->in_sq;
}

/* Post one write; false: dropped (counted), as a UC NIC drops what it cannot take. */
static bool post_write(struct softnic *s, const struct xp_write *wr)
{
	struct xp_softnic_world *w = s->w;
	const struct sn_path *p = wr->path < s->cfg.max_paths ? &s->paths[wr->path] : NULL;
	struct flight *f;
	uint32_t i;

	if (!p || !p->used || p->qp < 0 || s->in_sq >= s->cfg.send_slots ||
	    !xp_keys_place(&s->keys, wr->lkey, wr->laddr, wr->len, NULL))
		return false;
	if (flight_new(w, FLIGHT_DATA, wr->len, &i) < 0)
		return false;
	f = &w->fl[i];
	if (wr->len)
		memcpy(f->bytes, (const void *)(uintptr_t)wr->laddr, wr->len);
	f->src_host = s->host;
	f->dst_host = p->remote_host;
	f->imm = wr->imm;
	f->rkey = wr->rkey;
	f->raddr = wr->raddr;
	f->dst_path = p->remote_path;
	/* before the post: the emulation may report at once */
	f->in_fabric = true;
	s->in_sq++;
	if (uet_sim_raw_post(w->sim, (uint32_t)p->qp, wr->len, flight_cookie(w, i)) < 0) {
		flight_free(w, i);
		s->in_sq--;
		return false;
	}
	return true;
}

static uint32_t softnic_post_writes(struct xp_dp *dp, const struct xp_write *w, uint32_t n)
{
	struct softnic *s = (struct softnic *)dp;
	uint32_t i;

	for (i = 0; i < n && s->in_sq < s->cfg.send_slots; i++) {
		if (post_write(s, &w[i]))
			s->st.writes_posted++;
		else
			s->st.writes_full++;
	}
	return i;
}

static int softnic_post_ctrl(struct xp_dp *dp, uint32_t peer, const void *bytes, uint32_t len)
{
	struct softnic *s = (struct softnic *)dp;
	struct xp_softnic_world *w = s->w;
	uint32_t i;
	int rc;

	if (peer >= w->n_hosts || peer == s->host || len > s->cfg.ctrl_mtu)
		return -EINVAL;
	if (s->peers[peer].qp < 0) {
		struct uet_raw_qp_attr qa = { .control = true,
					      .entropy = (uint16_t)(SOFTNIC_CTRL_ENTROPY +
								    s->host % 0x0fff) };

		rc = uet_sim_raw_qp_create(w->sim, s->host, peer, &qa);
		if (rc < 0)
			return rc;
		s->peers[peer].qp = rc;
	}
	rc = flight_new(w, FLIGHT_CTRL, len, &i);
	if (rc < 0) {
		s->st.ctrl_dropped++;
		return rc;
	}
	memcpy(w->fl[i].bytes, bytes, len);
	w->fl[i].src_host = s->host;
	w->fl[i].dst_host = peer;
	w->fl[i].in_fabric = true;
	rc = uet_sim_raw_post(w->sim, (uint32_t)s->peers[peer].qp, len, flight_cookie(w, i));
	if (rc < 0) {
		flight_free(w, i);
		s->st.ctrl_dropped++;
		return rc;
	}
	s->st.ctrl_sent++;
	return 0;
}

static int softnic_poll(struct xp_dp *dp, struct xp_dp_event *ev, uint32_t max)
{
	struct softnic *s = (struct softnic *)dp;
	uint32_t n = 0;

	/* the control bytes handed out last time are no longer valid */
	for (uint32_t i = 0; i < s->n_polled; i++)
		flight_free(s->w, s->polled[i]);
	s->n_polled = 0;
	if (!s->polled) {
		s->polled = calloc(max ? max : 1, sizeof(*s->polled));
		if (!s->polled)
			return -ENOMEM;
		s->cfg.recv_slots = max ? max : 1;
	}
	if (max > s->cfg.recv_slots)
		max = s->cfg.recv_slots;
	while (n < max && s->evq_n) {
		struct sn_event *e = &s->evq[s->evq_head];

		ev[n] = e->ev;
		if (e->flight != UINT32_MAX) {
			ev[n].bytes = s->w->fl[e->flight].bytes;
			s->polled[s->n_polled++] = e->flight;
		}
		s->evq_head = (s->evq_head + 1) % s->evq_cap;
		s->evq_n--;
		n++;
	}
	return (int)n;
}

static int softnic_wait_fd(struct xp_dp *dp)
{
	(void)dp;
	return -1;
}

static int softnic_arm(struct xp_dp *dp)
{
	(void)dp;
	return -EOPNOTSUPP;
}

static uint64_t softnic_now_ns(struct xp_dp *dp)
{
	return xp_softnic_now_ns(((struct softnic *)dp)->w);
}

const struct xp_dp_ops xp_dp_softnic_ops = {
	.name = "softnic",
	.boot = &xp_boot_registry_ops,
	.open = softnic_open,
	.close = softnic_close,
	.info = softnic_info,
	.stats = softnic_stats,
	.mr_reg = softnic_mr_reg,
	.mr_dereg = softnic_mr_dereg,
	.recv_key = softnic_recv_key,
	.recv_key_release = softnic_recv_key_release,
	.local_addr = softnic_local_addr,
	.peer_open = softnic_peer_open,
	.peer_close = softnic_peer_close,
	.path_create = softnic_path_create,
	.path_connect = softnic_path_connect,
	.path_destroy = softnic_path_destroy,
	.send_slots = softnic_send_slots,
	.post_writes = softnic_post_writes,
	.post_ctrl = softnic_post_ctrl,
	.poll = softnic_poll,
	.wait_fd = softnic_wait_fd,
	.arm = softnic_arm,
	.now_ns = softnic_now_ns,
};
