// SPDX-License-Identifier: MIT
/*
 * softnic.c - the softnic datapath: raw UC-like QPs and control QPs over the
 * UET emulation, in virtual time (softnic.h says how it is built).
 *
 * Every write or control packet posted becomes a record in the world's
 * pool, its bytes copied, and one raw message whose cookie is the record's
 * index. A raw QP stays in order, so when a QP reports a message delivered
 * or dropped, every older record of that QP that was never reported (its
 * tail was lost: UC never says) is freed as lost. A record's send slot is
 * freed when the NIC takes its last packet from the send queue.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "datapath.h"
#include "keys.h"
#include "softnic.h"
#include "uet.h"
#include "wire.h"

#define SN_DEFAULT_SEND_SLOTS 1024
#define SN_DEFAULT_MAX_PATHS 65536
#define SN_DEFAULT_MAX_KEYS 65536
#define SN_DEFAULT_CTRL_MTU 1024
#define SN_MAX_WRITE_BYTES (4u << 20)
#define SN_MAX_HOSTS 4096
#define SN_RTO_MIN_NS 50000
#define SN_NONE UINT32_MAX

struct sn_rec {
	bool used;
	bool ctrl;
	bool in_sq;          /* holds a send slot of its sender */
	uint32_t next;       /* the QP's FIFO of unreported records */
	uint32_t qp;
	uint32_t src_host, src_inc;
	uint32_t dst_host, dst_inc;
	uint32_t dst_path;   /* data: the receiver's path handle */
	uint32_t imm, rkey, len;
	uint64_t raddr;
	uint64_t due_ns;     /* held back: deliver then */
	bool ce;
	uint8_t *bytes;
};

struct sn_qp {
	uint32_t host;       /* the sender's */
	uint32_t dst;
	uint16_t entropy;
	bool control;
	bool idle;           /* on the world's free list: no path or peer uses it */
	uint32_t head, tail; /* FIFO of unreported records */
};

struct sn_path {
	bool in_use, connected;
	uint16_t entropy;
	uint32_t qp;
	uint32_t peer_host, peer_inc, peer_path;
	uint32_t next_free;
};

struct sn_peer {
	bool in_use;
	uint32_t refs;
	uint32_t host, inc;
	uint32_t qp;         /* the control QP towards it, SN_NONE until first used */
};

struct sn_dp {
	struct xp_dp base;
	struct xp_softnic_world *w;
	struct xp_dp_config cfg;
	uint32_t host, inc;
	struct xp_keys keys;
	struct sn_path *paths;
	uint32_t n_paths, cap_paths, path_free;
	struct sn_peer *peers;
	uint32_t n_peers;
	uint32_t sq_used;
	/* events waiting for poll(), a growable ring */
	struct xp_dp_event *ev;
	uint8_t **ev_bytes;   /* CTRL: the owned copy behind ev[i].bytes */
	uint64_t *ev_due_ns;  /* when ev[i] reaches poll() (cfg.cq_lag_ns after it happened) */
	uint32_t ev_head, ev_n, ev_cap;
	uint8_t **handed;     /* CTRL copies handed out by the last poll */
	uint32_t n_handed;
	struct xp_dp_stats st;
};

struct xp_softnic_world {
	struct uet_sim *sim;
	struct uet_scenario *scn; /* the world's copy: the sim keeps a pointer to it */
	struct xp_softnic_config cfg;
	uint64_t rng;
	struct sn_dp *inst[SN_MAX_HOSTS];
	uint32_t inc[SN_MAX_HOSTS];
	uint32_t n_hosts;
	struct sn_rec *rec;
	uint32_t cap_rec, rec_free, rec_used;
	uint64_t line_rate_bps;
	struct sn_qp *qps;
	uint32_t n_qps;
	uint32_t *idle_qps;   /* QPs no path or peer uses, reused by the next with their key */
	uint32_t n_idle, cap_idle;
	uint32_t *held;       /* records held back (delay spikes) */
	uint32_t n_held, cap_held;
};

/* ---- the world's records --------------------------------------------------------------------- */

static uint64_t world_rand(struct xp_softnic_world *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static bool world_draw_ppm(struct xp_softnic_world *w, uint32_t ppm)
{
	return ppm && world_rand(w) % 1000000u < ppm;
}

static int grow(void **p, uint32_t *cap, size_t elem, uint32_t need)
{
	uint32_t n = *cap ? *cap : 16;
	void *q;

	while (n < need)
		n *= 2;
	if (n == *cap)
		return 0;
	q = realloc(*p, (size_t)n * elem);
	if (!q)
		return -ENOMEM;
	memset((uint8_t *)q + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
	*p = q;
	*cap = n;
	return 0;
}

static int rec_alloc(struct xp_softnic_world *w, const void *bytes, uint32_t len, uint32_t *out)
{
	uint32_t i = w->rec_free;
	struct sn_rec *r;

	if (i == SN_NONE) {
		uint32_t old = w->cap_rec;

		if (grow((void **)&w->rec, &w->cap_rec, sizeof(*w->rec), w->cap_rec + 1) < 0)
			return -ENOMEM;
		for (uint32_t k = old; k < w->cap_rec; k++)
			w->rec[k].next = k + 1 < w->cap_rec ? k + 1 : SN_NONE;
		i = old;
	}
	r = &w->rec[i];
	w->rec_free = r->next;
	memset(r, 0, sizeof(*r));
	r->next = SN_NONE;
	if (len) {
		r->bytes = malloc(len);
		if (!r->bytes) {
			r->next = w->rec_free;
			w->rec_free = i;
			return -ENOMEM;
		}
		memcpy(r->bytes, bytes, len);
	}
	r->used = true;
	r->len = len;
	w->rec_used++;
	*out = i;
	return 0;
}

/* The instance a record came from, if it is still the one that posted it. */
static struct sn_dp *rec_sender(struct xp_softnic_world *w, const struct sn_rec *r)
{
	struct sn_dp *d = w->inst[r->src_host];

	return d && d->inc == r->src_inc ? d : NULL;
}

static void rec_unslot(struct xp_softnic_world *w, struct sn_rec *r)
{
	struct sn_dp *d = rec_sender(w, r);

	if (r->in_sq && d)
		d->sq_used--;
	r->in_sq = false;
}

static void rec_free(struct xp_softnic_world *w, uint32_t i)
{
	struct sn_rec *r = &w->rec[i];

	rec_unslot(w, r);
	free(r->bytes);
	r->bytes = NULL;
	r->used = false;
	r->next = w->rec_free;
	w->rec_free = i;
	w->rec_used--;
}

static void qp_fifo_push(struct xp_softnic_world *w, uint32_t qp, uint32_t i)
{
	struct sn_qp *q = &w->qps[qp];

	if (q->tail == SN_NONE)
		q->head = i;
	else
		w->rec[q->tail].next = i;
	q->tail = i;
}

/* Take back record @i, the QP's newest, whose post failed. */
static void qp_fifo_drop_tail(struct xp_softnic_world *w, uint32_t qp, uint32_t i)
{
	struct sn_qp *q = &w->qps[qp];
	uint32_t prev = SN_NONE;

	for (uint32_t k = q->head; k != SN_NONE && k != i; k = w->rec[k].next)
		prev = k;
	if (prev == SN_NONE)
		q->head = SN_NONE;
	else
		w->rec[prev].next = SN_NONE;
	q->tail = prev;
	w->rec[i].next = SN_NONE;
}

/* Pop the QP's records up to and including @i; the older ones were lost. Return: false if @i
 * is not in the QP's FIFO (a cookie the world does not know). */
static bool qp_fifo_pop_until(struct xp_softnic_world *w, uint32_t qp, uint32_t i)
{
	struct sn_qp *q = &w->qps[qp];

	for (uint32_t k = q->head; k != SN_NONE; k = w->rec[k].next)
		if (k == i)
			goto found;
	return false;
found:
	while (q->head != i) {
		uint32_t k = q->head;
		struct sn_dp *d = rec_sender(w, &w->rec[k]);

		q->head = w->rec[k].next;
		if (d)
			d->st.writes_lost++;
		rec_free(w, k);
	}
	q->head = w->rec[i].next;
	if (q->head == SN_NONE)
		q->tail = SN_NONE;
	w->rec[i].next = SN_NONE;
	return true;
}

/* ---- events -------------------------------------------------------------------------------- */

static int ev_push(struct sn_dp *d, const struct xp_dp_event *e, uint8_t *bytes)
{
	if (d->ev_n == d->ev_cap) {
		uint32_t cap = d->ev_cap ? d->ev_cap * 2 : 256;
		struct xp_dp_event *ev = calloc(cap, sizeof(*ev));
		uint8_t **b = calloc(cap, sizeof(*b));
		uint64_t *due = calloc(cap, sizeof(*due));

		if (!ev || !b || !due) {
			free(ev);
			free(b);
			free(due);
			return -ENOMEM;
		}
		for (uint32_t k = 0; k < d->ev_n; k++) {
			ev[k] = d->ev[(d->ev_head + k) % d->ev_cap];
			b[k] = d->ev_bytes[(d->ev_head + k) % d->ev_cap];
			due[k] = d->ev_due_ns[(d->ev_head + k) % d->ev_cap];
		}
		free(d->ev);
		free(d->ev_bytes);
		free(d->ev_due_ns);
		d->ev = ev;
		d->ev_bytes = b;
		d->ev_due_ns = due;
		d->ev_head = 0;
		d->ev_cap = cap;
	}
	d->ev[(d->ev_head + d->ev_n) % d->ev_cap] = *e;
	d->ev_bytes[(d->ev_head + d->ev_n) % d->ev_cap] = bytes;
	/* one lag for every event, so the ring stays in due order */
	d->ev_due_ns[(d->ev_head + d->ev_n) % d->ev_cap] =
		xp_softnic_now_ns(d->w) + d->w->cfg.cq_lag_ns;
	d->ev_n++;
	return 0;
}

static void world_qp_release(struct xp_softnic_world *w, uint32_t qp);

/* The receiver's peer handle for a sender host, made on first contact (no reference). */
static int peer_for_host(struct sn_dp *d, uint32_t host, uint32_t inc, uint32_t *out)
{
	uint32_t free_slot = SN_NONE;

	for (uint32_t i = 0; i < d->n_peers; i++) {
		if (d->peers[i].in_use && d->peers[i].host == host) {
			if (d->peers[i].inc != inc) {
				d->peers[i].inc = inc; /* the host's instance was reopened */
				world_qp_release(d->w, d->peers[i].qp);
				d->peers[i].qp = SN_NONE;
			}
			*out = i;
			return 0;
		}
		if (!d->peers[i].in_use && free_slot == SN_NONE)
			free_slot = i;
	}
	if (free_slot == SN_NONE) {
		uint32_t cap = d->n_peers;

		if (grow((void **)&d->peers, &cap, sizeof(*d->peers), d->n_peers + 1) < 0)
			return -ENOMEM;
		free_slot = d->n_peers;
		d->n_peers = cap;
	}
	d->peers[free_slot] = (struct sn_peer){ .in_use = true, .host = host, .inc = inc,
						.qp = SN_NONE };
	*out = free_slot;
	return 0;
}

/* Hand record @i to its receiver (placing its bytes), then free it. */
static void rec_deliver(struct xp_softnic_world *w, uint32_t i)
{
	struct sn_rec *r = &w->rec[i];
	struct sn_dp *d = w->inst[r->dst_host];
	struct xp_dp_event e = { 0 };
	uint32_t peer;

	if (!d || d->inc != r->dst_inc) {
		rec_free(w, i); /* the receiver closed: lost, as on a wire */
		return;
	}
	if (r->ctrl) {
		if (peer_for_host(d, r->src_host, r->src_inc, &peer) < 0) {
			d->st.ctrl_dropped++;
		} else {
			e = (struct xp_dp_event){ .kind = XP_DP_EV_CTRL, .len = r->len,
						  .peer = peer, .bytes = r->bytes };
			if (ev_push(d, &e, r->bytes) == 0) {
				r->bytes = NULL; /* the event owns it now */
				d->st.ctrl_received++;
			}
		}
		rec_free(w, i);
		return;
	}
	if (!xp_keys_place(&d->keys, r->rkey, r->raddr, r->len, r->bytes)) {
		d->st.writes_bad_key++;
	} else {
		e = (struct xp_dp_event){ .kind = XP_DP_EV_CHUNK, .ecn_ce = r->ce, .imm = r->imm,
					  .len = r->len, .path = r->dst_path };
		if (ev_push(d, &e, NULL) == 0) {
			d->st.chunks_delivered++;
			d->st.bytes_copied += r->len;
		}
	}
	rec_free(w, i);
}

/* A data record to deliver twice: a copy delivered first. */
static void rec_duplicate(struct xp_softnic_world *w, uint32_t i)
{
	uint32_t k;

	if (rec_alloc(w, w->rec[i].bytes, w->rec[i].len, &k) < 0)
		return;
	w->rec[k].src_host = w->rec[i].src_host;
	w->rec[k].src_inc = w->rec[i].src_inc;
	w->rec[k].dst_host = w->rec[i].dst_host;
	w->rec[k].dst_inc = w->rec[i].dst_inc;
	w->rec[k].dst_path = w->rec[i].dst_path;
	w->rec[k].imm = w->rec[i].imm;
	w->rec[k].rkey = w->rec[i].rkey;
	w->rec[k].raddr = w->rec[i].raddr;
	w->rec[k].ce = w->rec[i].ce;
	rec_deliver(w, k);
}

static void on_delivered(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps, bool ce)
{
	struct xp_softnic_world *w = ctx;
	uint32_t i = (uint32_t)cookie;

	(void)t_ps;
	if (qp >= w->n_qps || cookie >= w->cap_rec || !qp_fifo_pop_until(w, qp, i))
		return;
	rec_unslot(w, &w->rec[i]);
	w->rec[i].ce = ce;
	if (!w->rec[i].ctrl && world_draw_ppm(w, w->cfg.delay_ppm) &&
	    grow((void **)&w->held, &w->cap_held, sizeof(*w->held), w->n_held + 1) == 0) {
		w->rec[i].due_ns = xp_softnic_now_ns(w) + w->cfg.delay_ns;
		w->held[w->n_held++] = i;
		return;
	}
	if (!w->rec[i].ctrl && world_draw_ppm(w, w->cfg.dup_ppm))
		rec_duplicate(w, i);
	rec_deliver(w, i);
}

static void on_dropped(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps)
{
	struct xp_softnic_world *w = ctx;
	uint32_t i = (uint32_t)cookie;
	struct sn_dp *d;

	(void)t_ps;
	if (qp >= w->n_qps || cookie >= w->cap_rec || !qp_fifo_pop_until(w, qp, i))
		return;
	d = rec_sender(w, &w->rec[i]);
	if (d)
		d->st.writes_lost++;
	rec_free(w, i);
}

static void on_sent(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps)
{
	struct xp_softnic_world *w = ctx;

	(void)qp;
	(void)t_ps;
	if (cookie < w->cap_rec && w->rec[cookie].used)
		rec_unslot(w, &w->rec[cookie]);
}

/* ---- the world ------------------------------------------------------------------------------ */

int xp_softnic_world_create(const struct xp_softnic_config *cfg, struct xp_softnic_world **out,
			    struct pcm_diag *diag)
{
	struct xp_softnic_world *w = calloc(1, sizeof(*w));
	struct uet_raw_ops ops = { .delivered = on_delivered, .dropped = on_dropped,
				   .sent = on_sent };
	int rc;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->cfg = *cfg;
	w->rng = cfg->seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
	w->rec_free = SN_NONE;
	w->scn = uet_scenario_dup(cfg->scn);
	if (!w->scn) {
		free(w);
		return -ENOMEM;
	}
	rc = uet_sim_create(w->scn, NULL, cfg->seed, &w->sim, diag);
	if (rc < 0) {
		uet_scenario_free(w->scn);
		free(w);
		return rc;
	}
	w->n_hosts = uet_sim_n_hosts(w->sim);
	if (w->n_hosts > SN_MAX_HOSTS) {
		snprintf(diag->msg, sizeof(diag->msg), "softnic: %u hosts (at most %u)",
			 w->n_hosts, SN_MAX_HOSTS);
		uet_sim_destroy(w->sim);
		uet_scenario_free(w->scn);
		free(w);
		return -EINVAL;
	}
	ops.ctx = w;
	uet_sim_set_raw_ops(w->sim, &ops);
	w->line_rate_bps = cfg->scn->nic.data_rate_bps;
	w->cfg.scn = w->scn;
	*out = w;
	return 0;
}

void xp_softnic_world_destroy(struct xp_softnic_world *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->cap_rec; i++)
		free(w->rec[i].bytes);
	free(w->rec);
	free(w->qps);
	free(w->idle_qps);
	free(w->held);
	uet_sim_destroy(w->sim);
	uet_scenario_free(w->scn);
	free(w);
}

uint64_t xp_softnic_now_ns(const struct xp_softnic_world *w)
{
	return uet_sim_now(w->sim) / 1000;
}

static uint64_t held_next_ns(const struct xp_softnic_world *w)
{
	uint64_t t = UINT64_MAX;

	for (uint32_t k = 0; k < w->n_held; k++)
		if (w->rec[w->held[k]].due_ns < t)
			t = w->rec[w->held[k]].due_ns;
	return t;
}

/* The earliest event of an instance still to reach poll() (cfg.cq_lag_ns). */
static uint64_t lagged_next_ns(const struct xp_softnic_world *w)
{
	uint64_t now = xp_softnic_now_ns(w), t = UINT64_MAX;

	if (!w->cfg.cq_lag_ns)
		return t;
	for (uint32_t h = 0; h < w->n_hosts; h++) {
		const struct sn_dp *d = w->inst[h];

		if (d && d->ev_n && d->ev_due_ns[d->ev_head] > now &&
		    d->ev_due_ns[d->ev_head] < t)
			t = d->ev_due_ns[d->ev_head];
	}
	return t;
}

uint64_t xp_softnic_next_event_ns(struct xp_softnic_world *w)
{
	uint64_t ps = uet_sim_next_event_ps(w->sim);
	uint64_t ns = ps == UINT64_MAX ? UINT64_MAX : (ps + 999) / 1000;
	uint64_t h = held_next_ns(w), l = lagged_next_ns(w);

	if (l < h)
		h = l;
	return h < ns ? h : ns;
}

int xp_softnic_advance(struct xp_softnic_world *w, uint64_t t_ns)
{
	int rc = uet_sim_run_until(w->sim, t_ns > UINT64_MAX / 1000 ? UINT64_MAX : t_ns * 1000);

	if (rc < 0)
		return rc;
	for (uint32_t k = 0; k < w->n_held;) {
		uint32_t i = w->held[k];

		if (w->rec[i].due_ns > t_ns) {
			k++;
			continue;
		}
		w->held[k] = w->held[--w->n_held];
		rec_deliver(w, i);
	}
	return 0;
}

struct uet_sim *xp_softnic_sim(struct xp_softnic_world *w)
{
	return w->sim;
}

uint64_t xp_softnic_records(const struct xp_softnic_world *w)
{
	return w->rec_used;
}

/*
 * A raw QP from @src to @dst: an idle one with the same entropy and class if
 * there is one (the emulation cannot destroy its QPs, so connections that
 * come and go reuse them, and the world does not grow with their count),
 * else a new one. A reused QP may still carry its previous user's records:
 * they are reported in order, as on one wire, and land nowhere (the paths
 * they were for are gone).
 */
static int world_qp(struct xp_softnic_world *w, uint32_t src, uint32_t dst, uint16_t entropy,
		    bool control, uint32_t *out)
{
	struct uet_raw_qp_attr a = { .entropy = entropy, .control = control };
	uint32_t cap = w->n_qps;
	int qp;

	for (uint32_t k = 0; k < w->n_idle; k++) {
		struct sn_qp *q = &w->qps[w->idle_qps[k]];

		if (q->host == src && q->dst == dst && q->entropy == entropy &&
		    q->control == control) {
			*out = w->idle_qps[k];
			w->idle_qps[k] = w->idle_qps[--w->n_idle];
			q->idle = false;
			return 0;
		}
	}
	if (grow((void **)&w->idle_qps, &w->cap_idle, sizeof(*w->idle_qps), w->n_qps + 1) < 0)
		return -ENOMEM; /* room to give it back later without failing */
	qp = uet_sim_raw_qp_create(w->sim, src, dst, &a);
	if (qp < 0)
		return qp;
	if (grow((void **)&w->qps, &cap, sizeof(*w->qps), (uint32_t)qp + 1) < 0)
		return -ENOMEM;
	for (uint32_t k = w->n_qps; k < cap; k++)
		w->qps[k] = (struct sn_qp){ .head = SN_NONE, .tail = SN_NONE };
	w->n_qps = cap;
	w->qps[qp].host = src;
	w->qps[qp].dst = dst;
	w->qps[qp].entropy = entropy;
	w->qps[qp].control = control;
	*out = (uint32_t)qp;
	return 0;
}

/* No path or peer uses raw QP @qp any more (SN_NONE: none). */
static void world_qp_release(struct xp_softnic_world *w, uint32_t qp)
{
	if (qp == SN_NONE || w->qps[qp].idle)
		return;
	w->qps[qp].idle = true;
	w->idle_qps[w->n_idle++] = qp; /* room made when it was created */
}

/* ---- open / close ---------------------------------------------------------------------------- */

static uint32_t or_default(uint32_t v, uint32_t def)
{
	return v ? v : def;
}

static void sn_close(struct xp_dp *dp)
{
	struct sn_dp *d = (struct sn_dp *)dp;

	if (d->w->inst[d->host] == d)
		d->w->inst[d->host] = NULL;
	for (uint32_t k = 0; k < d->n_paths; k++)
		if (d->paths[k].in_use && d->paths[k].connected)
			world_qp_release(d->w, d->paths[k].qp);
	for (uint32_t k = 0; k < d->n_peers; k++)
		if (d->peers[k].in_use)
			world_qp_release(d->w, d->peers[k].qp);
	for (uint32_t k = 0; k < d->ev_n; k++)
		free(d->ev_bytes[(d->ev_head + k) % d->ev_cap]);
	for (uint32_t k = 0; k < d->n_handed; k++)
		free(d->handed[k]);
	free(d->handed);
	free(d->ev);
	free(d->ev_bytes);
	free(d->ev_due_ns);
	free(d->paths);
	free(d->peers);
	xp_keys_fini(&d->keys);
	free(d);
}

static int sn_open(const struct xp_dp_config *cfg, struct xp_dp **out, struct pcm_diag *diag)
{
	struct xp_softnic_world *w = cfg->world;
	struct sn_dp *d;
	int rc;

	*out = NULL;
	if (!w) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: engine %u: no world (xp_dp_config.world)", cfg->engine);
		return -EINVAL;
	}
	if (cfg->host >= w->n_hosts || w->inst[cfg->host]) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: engine %u: host %u %s (the fabric has %u hosts)",
			 cfg->engine, cfg->host, cfg->host < w->n_hosts ? "is taken" : "is no host",
			 w->n_hosts);
		return cfg->host < w->n_hosts ? -EADDRINUSE : -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->base.ops = &xp_dp_softnic_ops;
	d->w = w;
	d->cfg = *cfg;
	d->cfg.device = NULL;
	d->cfg.send_slots = or_default(cfg->send_slots, SN_DEFAULT_SEND_SLOTS);
	d->cfg.max_paths = or_default(cfg->max_paths, SN_DEFAULT_MAX_PATHS);
	d->cfg.max_keys = or_default(cfg->max_keys, SN_DEFAULT_MAX_KEYS);
	d->cfg.ctrl_mtu = or_default(cfg->ctrl_mtu, SN_DEFAULT_CTRL_MTU);
	d->host = cfg->host;
	d->path_free = SN_NONE;
	if (d->cfg.ctrl_mtu > XP_WIRE_MAX_MTU || d->cfg.max_keys > XP_KEYS_MAX) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: ctrl_mtu %u (max %u) or max_keys %u (max %u) too large",
			 d->cfg.ctrl_mtu, XP_WIRE_MAX_MTU, d->cfg.max_keys, XP_KEYS_MAX);
		free(d);
		return -EINVAL;
	}
	rc = xp_keys_init(&d->keys, d->cfg.max_keys);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "softnic datapath: engine %u: %s",
			 cfg->engine, strerror(-rc));
		free(d);
		return rc;
	}
	d->inc = ++w->inc[d->host];
	w->inst[d->host] = d;
	*out = &d->base;
	return 0;
}

static void sn_info(struct xp_dp *dp, struct xp_dp_info *info)
{
	struct sn_dp *d = (struct sn_dp *)dp;

	*info = (struct xp_dp_info){
		.name = "softnic",
		.target = "softnic",
		.caps = XP_DP_CAP_RECV_KEYS | XP_DP_CAP_UC | XP_DP_CAP_ECN |
			XP_DP_CAP_VIRTUAL_TIME,
		.numa_node = -1,
		.line_rate_bps = d->w->line_rate_bps,
		.rto_min_ns = SN_RTO_MIN_NS,
		.ctrl_mtu = d->cfg.ctrl_mtu,
		.max_write_bytes = SN_MAX_WRITE_BYTES,
		.max_paths = d->cfg.max_paths,
		.send_slots = d->cfg.send_slots,
	};
}

static void sn_stats(struct xp_dp *dp, struct xp_dp_stats *st)
{
	*st = ((struct sn_dp *)dp)->st;
}

/* ---- memory ------------------------------------------------------------------------------------ */

static int sn_mr_reg(struct xp_dp *dp, void *addr, size_t len, struct xp_dp_mr *mr,
		     struct pcm_diag *diag)
{
	struct sn_dp *d = (struct sn_dp *)dp;
	char who[48];

	snprintf(who, sizeof(who), "softnic datapath: host %u", d->host);
	return xp_keys_mr_reg(&d->keys, who, addr, len, mr, diag);
}

static void sn_mr_dereg(struct xp_dp *dp, struct xp_dp_mr *mr)
{
	xp_keys_release(&((struct sn_dp *)dp)->keys, (uint32_t)mr->handle);
}

static int sn_recv_key(struct xp_dp *dp, const struct xp_dp_mr *mr, uint64_t addr, uint64_t len,
		       uint32_t *rkey)
{
	return xp_keys_recv_key(&((struct sn_dp *)dp)->keys, mr, addr, len, rkey);
}

static void sn_recv_key_release(struct xp_dp *dp, uint32_t rkey)
{
	xp_keys_release(&((struct sn_dp *)dp)->keys, rkey);
}

/* ---- addresses, peers, paths --------------------------------------------------------------- */

#define put32(p, v) xp_put_be((p), (v), 4)
#define get32(p) ((uint32_t)xp_get_be((p), 4))

static void sn_local_addr(struct xp_dp *dp, struct xp_dp_blob *addr)
{
	struct sn_dp *d = (struct sn_dp *)dp;

	addr->len = 8;
	put32(addr->bytes, d->host);
	put32(addr->bytes + 4, d->inc);
}

static int sn_peer_open(struct xp_dp *dp, const struct xp_dp_blob *addr, uint32_t *peer,
			struct pcm_diag *diag)
{
	struct sn_dp *d = (struct sn_dp *)dp;
	uint32_t host, inc;
	int rc;

	if (addr->len != 8 || (host = get32(addr->bytes)) >= d->w->n_hosts) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u: a control address of %u bytes naming no host",
			 d->host, addr->len);
		return -EINVAL;
	}
	inc = get32(addr->bytes + 4);
	rc = peer_for_host(d, host, inc, peer);
	if (rc < 0)
		return rc;
	d->peers[*peer].refs++;
	return 0;
}

static void sn_peer_close(struct xp_dp *dp, uint32_t peer)
{
	struct sn_dp *d = (struct sn_dp *)dp;

	if (peer < d->n_peers && d->peers[peer].in_use && d->peers[peer].refs)
		d->peers[peer].refs--;
}

static int sn_path_create(struct xp_dp *dp, const struct xp_dp_path_attr *attr, uint32_t *path,
			  uint16_t *entropy, struct xp_dp_blob *blob, struct pcm_diag *diag)
{
	struct sn_dp *d = (struct sn_dp *)dp;
	uint32_t i = d->path_free;
	struct sn_path *p;

	if (attr->rc) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u: no RC paths (raw QPs are UC-like)", d->host);
		return -EOPNOTSUPP;
	}
	if (i == SN_NONE) {
		if (d->n_paths >= d->cfg.max_paths ||
		    grow((void **)&d->paths, &d->cap_paths, sizeof(*d->paths), d->n_paths + 1)) {
			snprintf(diag->msg, sizeof(diag->msg),
				 "softnic datapath: host %u: all %u paths are in use", d->host,
				 d->cfg.max_paths);
			return -ENOSPC;
		}
		i = d->n_paths++;
	} else {
		d->path_free = d->paths[i].next_free;
	}
	p = &d->paths[i];
	memset(p, 0, sizeof(*p));
	p->in_use = true;
	/* every path its own entropy (its own ECMP choice), the hint mixed in */
	p->entropy = (uint16_t)(0xc000u | ((d->host * 7919u + i * 2654435761u +
					    attr->entropy * 40503u) & 0x3fffu));
	*path = i;
	*entropy = p->entropy;
	blob->len = 12;
	put32(blob->bytes, d->host);
	put32(blob->bytes + 4, d->inc);
	put32(blob->bytes + 8, i);
	return 0;
}

static int sn_path_connect(struct xp_dp *dp, uint32_t path, uint32_t peer,
			   const struct xp_dp_blob *remote, struct pcm_diag *diag)
{
	struct sn_dp *d = (struct sn_dp *)dp;
	struct sn_path *p;
	uint32_t host;
	int rc;

	(void)peer;
	if (path >= d->n_paths || !d->paths[path].in_use || d->paths[path].connected) {
		snprintf(diag->msg, sizeof(diag->msg), "softnic datapath: host %u: path %u %s",
			 d->host, path, path < d->n_paths && d->paths[path].in_use ?
			 "is connected already" : "does not exist");
		return -EINVAL;
	}
	if (remote->len != 12 || (host = get32(remote->bytes)) >= d->w->n_hosts) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u: path %u: a remote blob of %u bytes naming no "
			 "host", d->host, path, remote->len);
		return -EINVAL;
	}
	p = &d->paths[path];
	rc = world_qp(d->w, d->host, host, p->entropy, false, &p->qp);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "softnic datapath: host %u: path %u: no raw QP to host %u: %s", d->host,
			 path, host, strerror(-rc));
		return rc;
	}
	p->peer_host = host;
	p->peer_inc = get32(remote->bytes + 4);
	p->peer_path = get32(remote->bytes + 8);
	p->connected = true;
	return 0;
}

static void sn_path_destroy(struct xp_dp *dp, uint32_t path)
{
	struct sn_dp *d = (struct sn_dp *)dp;

	if (path >= d->n_paths || !d->paths[path].in_use)
		return;
	if (d->paths[path].connected)
		world_qp_release(d->w, d->paths[path].qp);
	d->paths[path].in_use = false;
	d->paths[path].connected = false;
	d->paths[path].next_free = d->path_free;
	d->path_free = path;
}

/* ---- data and control ------------------------------------------------------------------------ */

static uint32_t sn_send_slots(struct xp_dp *dp)
{
	struct sn_dp *d = (struct sn_dp *)dp;

	return d->cfg.send_slots - d->sq_used;
}

/*
 * Post record @i on raw QP @qp, holding a send slot. The record is complete
 * before the post: the NIC may take its packets (and call on_sent) at once.
 * Return: 0, or -errno (record freed).
 */
static int post_rec(struct sn_dp *d, uint32_t qp, uint32_t i)
{
	struct xp_softnic_world *w = d->w;
	int rc;

	w->rec[i].qp = qp;
	w->rec[i].src_host = d->host;
	w->rec[i].src_inc = d->inc;
	w->rec[i].in_sq = !w->rec[i].ctrl; /* control packets take no data send slot */
	if (w->rec[i].in_sq)
		d->sq_used++;
	qp_fifo_push(w, qp, i);
	rc = uet_sim_raw_post(w->sim, qp, w->rec[i].len, i);
	if (rc < 0) {
		qp_fifo_drop_tail(w, qp, i);
		rec_free(w, i);
	}
	return rc;
}

static uint32_t sn_post_writes(struct xp_dp *dp, const struct xp_write *wr, uint32_t n)
{
	struct sn_dp *d = (struct sn_dp *)dp;
	uint32_t k = 0;

	for (; k < n && d->sq_used < d->cfg.send_slots; k++) {
		const struct xp_write *x = &wr[k];
		struct sn_path *p;
		struct sn_rec *r;
		uint32_t i;

		d->st.writes_posted++;
		if (x->path >= d->n_paths || !d->paths[x->path].connected ||
		    x->len > SN_MAX_WRITE_BYTES) {
			d->st.writes_lost++;
			continue;
		}
		p = &d->paths[x->path];
		if (rec_alloc(d->w, (const void *)(uintptr_t)x->laddr, x->len, &i) < 0) {
			d->st.writes_lost++;
			continue;
		}
		r = &d->w->rec[i];
		r->dst_host = p->peer_host;
		r->dst_inc = p->peer_inc;
		r->dst_path = p->peer_path;
		r->imm = x->imm;
		r->rkey = x->rkey;
		r->raddr = x->raddr;
		if (post_rec(d, p->qp, i) < 0)
			d->st.writes_lost++;
	}
	d->st.writes_full += n - k;
	return k;
}

static int sn_post_ctrl(struct xp_dp *dp, uint32_t peer, const void *bytes, uint32_t len)
{
	struct sn_dp *d = (struct sn_dp *)dp;
	struct sn_peer *p;
	uint32_t i;
	int rc;

	if (peer >= d->n_peers || !d->peers[peer].in_use || len > d->cfg.ctrl_mtu)
		return -EINVAL;
	p = &d->peers[peer];
	if (p->qp == SN_NONE) {
		rc = world_qp(d->w, d->host, p->host, (uint16_t)(0x8000u | (d->host & 0x3fffu)),
			      true, &p->qp);
		if (rc < 0)
			return rc;
		p = &d->peers[peer];
	}
	rc = rec_alloc(d->w, bytes, len, &i);
	if (rc < 0) {
		d->st.ctrl_dropped++;
		return rc;
	}
	d->w->rec[i].ctrl = true;
	d->w->rec[i].dst_host = p->host;
	d->w->rec[i].dst_inc = p->inc;
	rc = post_rec(d, p->qp, i);
	if (rc < 0) {
		d->st.ctrl_dropped++;
		return rc;
	}
	d->st.ctrl_sent++;
	return 0;
}

static int sn_poll(struct xp_dp *dp, struct xp_dp_event *ev, uint32_t max)
{
	struct sn_dp *d = (struct sn_dp *)dp;
	uint32_t k = 0;

	for (uint32_t j = 0; j < d->n_handed; j++)
		free(d->handed[j]);
	d->n_handed = 0;
	if (max > d->ev_n)
		max = d->ev_n;
	if (max) {
		uint8_t **h = realloc(d->handed, (size_t)max * sizeof(*h));

		if (!h)
			return 0;
		d->handed = h;
	}
	for (; k < max; k++) {
		uint32_t at = d->ev_head;

		if (d->ev_due_ns[at] > xp_softnic_now_ns(d->w))
			break; /* still on its way to the completion queue */

		ev[k] = d->ev[at];
		if (d->ev_bytes[at])
			d->handed[d->n_handed++] = d->ev_bytes[at];
		d->ev_bytes[at] = NULL;
		d->ev_head = (d->ev_head + 1) % d->ev_cap;
		d->ev_n--;
	}
	return (int)k;
}

static int sn_wait_fd(struct xp_dp *dp)
{
	(void)dp;
	return -1;
}

static int sn_arm(struct xp_dp *dp)
{
	(void)dp;
	return -EOPNOTSUPP;
}

static uint64_t sn_now_ns(struct xp_dp *dp)
{
	return xp_softnic_now_ns(((struct sn_dp *)dp)->w);
}

const struct xp_dp_ops xp_dp_softnic_ops = {
	.name = "softnic",
	.boot = &xp_boot_registry_ops,
	.open = sn_open,
	.close = sn_close,
	.info = sn_info,
	.stats = sn_stats,
	.mr_reg = sn_mr_reg,
	.mr_dereg = sn_mr_dereg,
	.recv_key = sn_recv_key,
	.recv_key_release = sn_recv_key_release,
	.local_addr = sn_local_addr,
	.peer_open = sn_peer_open,
	.peer_close = sn_peer_close,
	.path_create = sn_path_create,
	.path_connect = sn_path_connect,
	.path_destroy = sn_path_destroy,
	.send_slots = sn_send_slots,
	.post_writes = sn_post_writes,
	.post_ctrl = sn_post_ctrl,
	.poll = sn_poll,
	.wait_fd = sn_wait_fd,
	.arm = sn_arm,
	.now_ns = sn_now_ns,
};
