// SPDX-License-Identifier: MIT
/*
 * dst_softnic.c - deterministic simulation testing of engines over the
 * softnic datapath: the whole stack (engine, core, PCM CC, softnic, the UET
 * emulation) in virtual time, one thread.
 *
 * One run: a leaf-spine fabric (2 leaves, 2 spines, 2 hosts per leaf,
 * 100 Gbit/s), one engine per host (external progress, driven by
 * xp_softnic_step()); C connections between random host pairs, 1..4 paths
 * each, each with up to M messages each way (0 B .. 256 KiB of seeded
 * bytes); and, as the mask allows: packet loss 0-10% and trims at the
 * switches, duplicated, reordered and delayed (spikes) deliveries, a
 * leaf-spine link failing and recovering, PCM CC (swift, sync or async in
 * any snapshot mode) and a live CC swap in the middle of a transfer,
 * connections opened late and closed in the middle of other traffic.
 *
 * Invariants, on every run:
 *   - every receive completes once, with success, holding exactly its
 *     message (length, checksum, nothing written past it); every send
 *     completes once, with success;
 *   - nothing hangs: every connection is closed on both sides before a
 *     bound of virtual time;
 *   - nothing leaks: afterwards every engine is idle (its core's accounting
 *     at zero: no connection open or quarantined, no pool entry, no byte in
 *     flight, no timer, no completion unpublished) and the fabric holds no
 *     message; ASan checks the rest in its build;
 *   - with --determinism, the same seed gives the same trace.
 * A failing run prints one line that reproduces it; the shrinker then tries
 * fewer connections, fewer messages and fewer fault kinds while it still
 * fails, and prints the smallest failing case's line.
 *
 *   dst_softnic --seeds 0:1000                         sweep (suite dst)
 *   dst_softnic --seed 17 --conns 3 --msgs 5 --mask 0xff   one case
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "engine.h"
#include "softnic.h"

enum {
	F_LOSS = 1 << 0,
	F_TRIM = 1 << 1,
	F_DUP = 1 << 2,
	F_REORDER = 1 << 3,
	F_SPIKES = 1 << 4,
	F_LINK = 1 << 5,    /* a leaf-spine link fails and recovers */
	F_PCM = 1 << 6,     /* PCM CC and a live swap */
	F_CLOSE = 1 << 7,   /* connections opened late and closed mid-traffic */
	F_ALL = (1 << 8) - 1,
};

#define N_HOSTS 4
#define MAX_CONNS 6
#define MAX_MSGS 8
#define MAX_LEN (256u * 1024)
#define US 1000ull
#define MS 1000000ull
#define WORK_NS (2 * MS)       /* workload events fall in [0, WORK_NS) */
#define LIMIT_NS (3000 * MS)   /* virtual time bound of a run */

struct msg {
	uint8_t from;            /* the sending side of the connection */
	uint32_t k;              /* its index in its direction */
	uint64_t len, post_ns;
	bool posted;
	int send_done, recv_done;
};

struct conn {
	uint32_t host[2];
	uint32_t id[2];
	uint32_t mr[2];
	uint8_t *buf[2];
	uint64_t open_ns, swap_ns;
	uint32_t paths;
	struct xp_conn_opts opts, swap_to;
	bool opened, swapped, closing;
	int closed[2];
	uint32_t n_msgs, done_ops;
	uint32_t next_k[2];
	struct msg m[2 * MAX_MSGS];
};

struct run {
	uint64_t seed;
	uint32_t n_conns, max_msgs, mask;
	uint64_t rng;
	struct xp_softnic_world *w;
	struct xp_engine *e[N_HOSTS];
	struct conn c[MAX_CONNS];
	uint64_t trace;
	char why[640];
};

static uint64_t rnd(struct run *r)
{
	uint64_t z = (r->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t below(struct run *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static uint8_t byte_of(uint64_t seed, uint32_t conn, uint32_t dir, uint32_t k, uint64_t i)
{
	uint64_t x = seed * 0x100000001b3ull ^ ((uint64_t)conn << 40 | (uint64_t)dir << 32 | k);

	x ^= i * 0x9e3779b97f4a7c15ull;
	return (uint8_t)(x ^ x >> 29 ^ x >> 47);
}

static int fail(struct run *r, const char *what, uint32_t conn)
{
	if (!r->why[0])
		snprintf(r->why, sizeof(r->why), "conn %u: %s (t=%" PRIu64 " ns)", conn, what,
			 xp_softnic_now_ns(r->w));
	return -1;
}

static const struct pcm_package *builtin(const char *name)
{
	for (size_t i = 0; pcm_builtin_policies[i]; i++)
		if (strcmp(pcm_builtin_policies[i]->name, name) == 0)
			return pcm_builtin_policies[i];
	return NULL;
}

/* A CC choice: none, swift sync, swift async in one of the three snapshot modes. */
static struct xp_conn_opts pick_cc(struct run *r, uint32_t paths)
{
	static const enum pcm_async_mode modes[] = { PCM_ASYNC_RELAXED, PCM_ASYNC_LOCKED,
						     PCM_ASYNC_BOUNDED };
	struct xp_conn_opts o = { .paths = paths };
	uint64_t c = below(r, 5);

	if (!(r->mask & F_PCM) || c == 0)
		return o;
	o.cc = builtin("swift");
	snprintf(o.cc_name, sizeof(o.cc_name), "swift");
	o.mode = c == 1 ? XP_CC_PCM_SYNC : XP_CC_PCM_ASYNC;
	o.async_mode = modes[c % 3];
	return o;
}

/* ---- driving ------------------------------------------------------------------------------ */

static int step(struct run *r, uint64_t limit_ns)
{
	int rc = xp_softnic_step(r->w, r->e, N_HOSTS, limit_ns);

	return rc == -ETIMEDOUT ? 0 : rc;
}

static int ctl_run(struct run *r, uint32_t host, struct xp_ctl *ctl)
{
	struct xp_cmd cmd = { .op = XP_CMD_CTL, .ctl = ctl };

	atomic_store(&ctl->done, 0);
	if (xp_engine_submit(r->e[host], &cmd) < 0)
		return -EAGAIN;
	/* a control request is the engine's own work: it needs no virtual time */
	for (uint32_t i = 0; !atomic_load_explicit(&ctl->done, memory_order_acquire); i++)
		if (i == 1000 || step(r, xp_softnic_now_ns(r->w)) < 0)
			return -ETIMEDOUT;
	return ctl->status;
}

static int conn_open(struct run *r, uint32_t ci)
{
	struct conn *c = &r->c[ci];
	struct xp_ctl *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	size_t len = 2 * (size_t)MAX_MSGS * MAX_LEN;
	int rc = 0;

	if (!a || !b)
		goto out_fail;
	for (int s = 0; s < 2 && rc == 0; s++) {
		c->buf[s] = calloc(1, len);
		if (!c->buf[s])
			goto out_fail;
		for (uint32_t k = 0; k < MAX_MSGS; k++)
			for (uint64_t i = 0; i < MAX_LEN; i++)
				c->buf[s][(size_t)k * MAX_LEN + i] = byte_of(r->seed, ci, s, k, i);
		memset(a, 0, sizeof(*a));
		a->op = XP_CTL_MR_REG;
		a->addr = c->buf[s];
		a->len = len;
		rc = ctl_run(r, c->host[s], a);
		c->mr[s] = a->mr;
	}
	memset(a, 0, sizeof(*a));
	a->op = XP_CTL_CONN_OPEN;
	a->opts = c->opts;
	if (rc == 0)
		rc = ctl_run(r, c->host[0], a);
	b->op = XP_CTL_CONN_ACCEPT;
	b->opts = c->opts;
	memcpy(b->peer_msg, a->msg, a->msg_len);
	b->peer_len = a->msg_len;
	if (rc == 0)
		rc = ctl_run(r, c->host[1], b);
	a->op = XP_CTL_CONN_BIND;
	memcpy(a->peer_msg, b->msg, b->msg_len);
	a->peer_len = b->msg_len;
	if (rc == 0)
		rc = ctl_run(r, c->host[0], a);
	c->id[0] = a->conn;
	c->id[1] = b->conn;
	c->opened = rc == 0;
	if (rc != 0 && !r->why[0])
		snprintf(r->why, sizeof(r->why), "conn %u: setup failed: %d: %.200s %.200s", ci,
			 rc, a->diag.msg, b->diag.msg);
	free(a);
	free(b);
	return rc == 0 ? 0 : -1;
out_fail:
	free(a);
	free(b);
	return fail(r, "out of memory", ci);
}

static void submit(struct run *r, uint32_t host, const struct xp_cmd *cmd)
{
	while (xp_engine_submit(r->e[host], cmd) == -EAGAIN)
		step(r, xp_softnic_now_ns(r->w));
}

static void post_msg(struct run *r, uint32_t ci, uint32_t mi)
{
	struct conn *c = &r->c[ci];
	struct msg *m = &c->m[mi];
	uint32_t from = m->from, to = 1 - from;
	uint64_t send_at = (uint64_t)(uintptr_t)c->buf[from] + (uint64_t)m->k * MAX_LEN;
	uint64_t recv_at = (uint64_t)(uintptr_t)c->buf[to] + (uint64_t)(MAX_MSGS + m->k) * MAX_LEN;
	struct xp_cmd recv = { .op = XP_CMD_RECV, .conn = c->id[to], .mr = c->mr[to],
			       .addr = recv_at, .len = MAX_LEN,
			       .cookie = (uint64_t)ci << 32 | mi << 1 | 1 };
	struct xp_cmd send = { .op = XP_CMD_SEND, .conn = c->id[from], .mr = c->mr[from],
			       .addr = send_at, .len = m->len,
			       .cookie = (uint64_t)ci << 32 | mi << 1 };

	m->posted = true;
	if (below(r, 2)) {
		submit(r, c->host[to], &recv);
		submit(r, c->host[from], &send);
	} else {
		submit(r, c->host[from], &send);
		submit(r, c->host[to], &recv);
	}
}

/* A receive completed: its bytes are the message's, and nothing lies past them. */
static int check_recv(struct run *r, uint32_t ci, const struct msg *m, uint64_t bytes)
{
	const struct conn *c = &r->c[ci];
	const uint8_t *p = c->buf[1 - m->from] + (size_t)(MAX_MSGS + m->k) * MAX_LEN;

	if (bytes != m->len)
		return fail(r, "a receive completed with the wrong length", ci);
	for (uint64_t i = 0; i < MAX_LEN; i++)
		if (p[i] != (i < m->len ? byte_of(r->seed, ci, m->from, m->k, i) : 0))
			return fail(r, i < m->len ? "received bytes differ from the message's"
						  : "bytes written past the message",
				    ci);
	return 0;
}

static int on_comp(struct run *r, uint32_t host, const struct xp_engine_comp *x)
{
	uint32_t ci = (uint32_t)(x->cookie >> 32), mi = (uint32_t)(x->cookie >> 1) & 0x7fff;
	struct conn *c;
	struct msg *m;

	r->trace = r->trace * 31 + x->cookie + (uint64_t)x->kind * 7 +
		   xp_softnic_now_ns(r->w);
	if (x->kind == XP_ECOMP_CLOSE) {
		for (ci = 0; ci < r->n_conns; ci++)
			for (int s = 0; s < 2; s++)
				if (r->c[ci].closing && r->c[ci].host[s] == host &&
				    r->c[ci].id[s] == x->conn && !r->c[ci].closed[s]) {
					r->c[ci].closed[s] = 1;
					return 0;
				}
		return fail(r, "a close completion nobody asked for", x->conn);
	}
	if (ci >= r->n_conns || mi >= r->c[ci].n_msgs)
		return fail(r, "a completion with an unknown cookie", ci);
	c = &r->c[ci];
	m = &c->m[mi];
	if (x->status != 0)
		return fail(r, x->kind == XP_ECOMP_SEND ? "a send failed" : "a receive failed", ci);
	if (x->kind == XP_ECOMP_SEND) {
		if (m->send_done++)
			return fail(r, "a send completed twice", ci);
	} else {
		if (m->recv_done++)
			return fail(r, "a receive completed twice", ci);
		if (check_recv(r, ci, m, x->bytes) < 0)
			return -1;
	}
	c->done_ops++;
	return 0;
}

static int poll_all(struct run *r)
{
	struct xp_engine_comp comp[64];

	for (uint32_t h = 0; h < N_HOSTS; h++)
		for (uint32_t n; (n = xp_engine_poll(r->e[h], comp, 64)) > 0;)
			for (uint32_t i = 0; i < n; i++)
				if (on_comp(r, h, &comp[i]) < 0)
					return -1;
	return 0;
}

/* Start what is due at @now; return the time of the next workload event. */
static uint64_t workload(struct run *r, uint64_t now)
{
	uint64_t next = LIMIT_NS;

	for (uint32_t ci = 0; ci < r->n_conns; ci++) {
		struct conn *c = &r->c[ci];

		if (!c->opened) {
			if (c->open_ns <= now && conn_open(r, ci) < 0)
				return 0;
			if (!c->opened) {
				next = c->open_ns < next ? c->open_ns : next;
				continue;
			}
		}
		for (uint32_t mi = 0; mi < c->n_msgs; mi++) {
			if (c->m[mi].posted)
				continue;
			if (c->m[mi].post_ns <= now)
				post_msg(r, ci, mi);
			else if (c->m[mi].post_ns < next)
				next = c->m[mi].post_ns;
		}
		if (c->swap_ns && !c->swapped && !c->closing) {
			if (c->swap_ns <= now) {
				struct xp_ctl *ctl = calloc(1, sizeof(*ctl));

				c->swapped = true;
				if (!ctl)
					return fail(r, "out of memory", ci), 0;
				ctl->op = XP_CTL_SET_CC;
				ctl->conn = c->id[0];
				ctl->opts = c->swap_to;
				if (ctl_run(r, c->host[0], ctl) != 0) {
					snprintf(r->why, sizeof(r->why),
						 "conn %u: the live CC swap failed: %d: %.300s", ci,
						 ctl->status, ctl->diag.msg);
					free(ctl);
					return 0;
				}
				free(ctl);
			} else if (c->swap_ns < next) {
				next = c->swap_ns;
			}
		}
		if (!c->closing && c->done_ops == 2 * c->n_msgs) {
			c->closing = true;
			for (int s = 0; s < 2; s++) {
				struct xp_cmd cl = { .op = XP_CMD_CLOSE, .conn = c->id[s],
						     .close_mode = XP_CLOSE_GRACEFUL };

				submit(r, c->host[s], &cl);
			}
		}
	}
	return next;
}

static bool all_closed(const struct run *r)
{
	for (uint32_t ci = 0; ci < r->n_conns; ci++)
		if (!r->c[ci].closed[0] || !r->c[ci].closed[1])
			return false;
	return true;
}

/* ---- one run -------------------------------------------------------------------------------- */

static void draw(struct run *r, struct uet_scenario *scn, struct xp_softnic_faults *f)
{
	uet_scenario_defaults(scn);
	scn->topo.kind = UET_TOPO_LEAF_SPINE;
	scn->topo.leaves = 2;
	scn->topo.spines = 2;
	scn->topo.hosts_per_leaf = 2;
	scn->topo.oversubscription = 1.0;
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "none");
	if (r->mask & F_LINK) {
		struct uet_link_failure *lf = &scn->failures[scn->n_failures++];

		snprintf(lf->a, sizeof(lf->a), "leaf%u", (unsigned)below(r, 2));
		snprintf(lf->b, sizeof(lf->b), "spine%u", (unsigned)below(r, 2));
		lf->at_ps = below(r, WORK_NS) * 1000;
		lf->until_ps = lf->at_ps + (50 + below(r, 2000)) * US * 1000;
		lf->reroute = below(r, 2);
		lf->loss_ppm = below(r, 2) ? 0 : (uint32_t)(1 + below(r, 500000));
	}
	memset(f, 0, sizeof(*f));
	if (r->mask & F_LOSS)
		f->loss_ppm = (uint32_t)below(r, 100001); /* 0-10% of packets */
	if (r->mask & F_TRIM)
		f->trim_ppm = (uint32_t)below(r, 20001);
	if (r->mask & F_DUP)
		f->dup_ppm = (uint32_t)below(r, 50001);
	if (r->mask & F_REORDER) {
		f->reorder_ppm = (uint32_t)below(r, 200001);
		f->reorder_ns = 1 + below(r, 20 * US);
	}
	if (r->mask & F_SPIKES) {
		f->spike_ppm = (uint32_t)below(r, 5001);
		f->spike_ns = 100 * US + below(r, 2 * MS);
	}
	for (uint32_t ci = 0; ci < r->n_conns; ci++) {
		struct conn *c = &r->c[ci];
		bool late = (r->mask & F_CLOSE) && ci > 0 && below(r, 2);

		c->host[0] = (uint32_t)below(r, N_HOSTS);
		c->host[1] = (c->host[0] + 1 + (uint32_t)below(r, N_HOSTS - 1)) % N_HOSTS;
		c->paths = 1 + (uint32_t)below(r, 4);
		c->opts = pick_cc(r, c->paths);
		c->open_ns = late ? below(r, WORK_NS) : 0;
		if ((r->mask & F_PCM) && below(r, 2)) {
			c->swap_to = pick_cc(r, c->paths);
			c->swap_ns = c->open_ns + 1 + below(r, WORK_NS);
		}
		c->n_msgs = 1 + (uint32_t)below(r, 2 * r->max_msgs);
		if (c->n_msgs > 2 * r->max_msgs)
			c->n_msgs = 2 * r->max_msgs;
		for (uint32_t mi = 0; mi < c->n_msgs; mi++) {
			struct msg *m = &c->m[mi];
			uint64_t sz = below(r, 4);

			m->from = (uint8_t)below(r, 2);
			if (c->next_k[m->from] == r->max_msgs)
				m->from = 1 - m->from;
			m->k = c->next_k[m->from]++;
			m->len = sz == 0 ? below(r, 65) : sz == 1 ? below(r, 4097)
					  : sz == 2 ? below(r, 65537) : below(r, MAX_LEN + 1);
			m->post_ns = c->open_ns + below(r, WORK_NS);
		}
		/* messages go in the order of their post times, per direction */
		for (uint32_t a = 0; a < c->n_msgs; a++)
			for (uint32_t b = a + 1; b < c->n_msgs; b++)
				if (c->m[b].from == c->m[a].from && c->m[b].k < c->m[a].k) {
					uint32_t t = c->m[a].k;

					c->m[a].k = c->m[b].k;
					c->m[b].k = t;
				}
		for (uint32_t a = 0; a < c->n_msgs; a++)
			for (uint32_t b = 0; b < c->n_msgs; b++)
				if (c->m[b].from == c->m[a].from && c->m[b].k > c->m[a].k &&
				    c->m[b].post_ns < c->m[a].post_ns) {
					uint64_t t = c->m[a].post_ns;

					c->m[a].post_ns = c->m[b].post_ns;
					c->m[b].post_ns = t;
				}
	}
}

static int engines_open(struct run *r)
{
	struct pcm_diag diag;

	for (uint32_t h = 0; h < N_HOSTS; h++) {
		struct xp_engine_config cfg;

		xp_engine_config_default(&cfg);
		cfg.dp_ops = &xp_dp_softnic_ops;
		cfg.dp.world = r->w;
		cfg.dp.host = h;
		cfg.progress = XP_PROGRESS_EXTERNAL;
		cfg.index = h;
		cfg.async_workers = 0;
		cfg.core.seed = r->seed * 8 + h;
		cfg.core.max_conns = 64;
		cfg.core.rto_max_ns = 10 * MS;
		cfg.core.quarantine_ns = 40 * MS;
		cfg.cc_flows = 64;
		if (xp_engine_create(&cfg, &r->e[h], &diag) < 0) {
			snprintf(r->why, sizeof(r->why), "engine %u: %s", h, diag.msg);
			return -1;
		}
	}
	return 0;
}

/* What each host's datapath and core did, for a failing run's message. */
static void dump(const struct run *r)
{
	for (uint32_t ci = 0; ci < r->n_conns; ci++)
		fprintf(stderr, "  conn %u: hosts %u-%u msgs %u ops done %u closing %d closed %d/%d\n",
			ci, r->c[ci].host[0], r->c[ci].host[1], r->c[ci].n_msgs,
			r->c[ci].done_ops, r->c[ci].closing, r->c[ci].closed[0],
			r->c[ci].closed[1]);
	for (uint32_t h = 0; h < N_HOSTS; h++) {
		struct xp_dp_stats d;
		const struct xp_core_stats *c = xp_core_stats(xp_engine_core(r->e[h]));
		struct xp_dp *dp = xp_engine_dp(r->e[h]);
		uint64_t drops = 0;
		struct xp_core_usage u;

		dp->ops->stats(dp, &d);
		for (int i = 0; i < XP_DROP_COUNT; i++)
			drops += c->drops[i];
		fprintf(stderr,
			"  host %u: dp writes %" PRIu64 " full %" PRIu64 " lost %" PRIu64
			" bad_key %" PRIu64 " chunks %" PRIu64 " ctrl %" PRIu64 "/%" PRIu64
			"/%" PRIu64 "; core sent %" PRIu64 " retx %" PRIu64 " rx %" PRIu64
			" rto %" PRIu64 " drops %" PRIu64 "\n",
			h, d.writes_posted, d.writes_full, d.writes_lost, d.writes_bad_key,
			d.chunks_delivered, d.ctrl_sent, d.ctrl_received, d.ctrl_dropped,
			c->chunks_sent, c->chunks_retx, c->chunks_received, c->rto_fires, drops);
		xp_core_usage(xp_engine_core(r->e[h]), &u);
		fprintf(stderr,
			"    usage: open %u quar %u send %u recv %u ops %u inflight %u timers %u"
			" paced %u comps %u; idle %d\n",
			u.conns_open, u.conns_quarantined, u.send_msgs, u.recv_msgs, u.ops,
			u.in_flight_chunks, u.timers_armed, u.paced, u.completions_pending,
			xp_engine_idle(r->e[h]));
	}
}

static void run_free(struct run *r)
{
	for (uint32_t h = 0; h < N_HOSTS; h++)
		xp_engine_destroy(r->e[h]);
	xp_softnic_world_destroy(r->w);
	for (uint32_t ci = 0; ci < MAX_CONNS; ci++)
		for (int s = 0; s < 2; s++)
			free(r->c[ci].buf[s]);
}

/* Wait for every engine to hold nothing and the fabric to be empty. */
static int drain(struct run *r)
{
	uint64_t until = xp_softnic_now_ns(r->w) + 2000 * MS;

	for (;;) {
		bool idle = !xp_softnic_world_busy(r->w) && xp_softnic_world_flights(r->w) == 0;

		for (uint32_t h = 0; h < N_HOSTS && idle; h++)
			idle = xp_engine_idle(r->e[h]);
		if (idle)
			return 0;
		if (xp_softnic_now_ns(r->w) >= until)
			return fail(r, "something is still held after every connection closed", 0);
		if (xp_softnic_step(r->w, r->e, N_HOSTS, UINT64_MAX) == -EDEADLK)
			return fail(r, "the engines hold something but nothing will happen", 0);
		if (poll_all(r) < 0)
			return -1;
	}
}

static int run_one(uint64_t seed, uint32_t conns, uint32_t msgs, uint32_t mask, uint64_t *trace,
		   char *why, size_t why_len)
{
	struct run *r = calloc(1, sizeof(*r));
	struct uet_scenario *scn = calloc(1, sizeof(*scn));
	struct xp_softnic_faults f;
	struct pcm_diag diag;
	int rc = -1;

	if (!r || !scn) {
		snprintf(why, why_len, "out of memory");
		free(r);
		free(scn);
		return -1;
	}
	r->seed = seed;
	r->rng = seed;
	r->n_conns = conns;
	r->max_msgs = msgs;
	r->mask = mask;
	draw(r, scn, &f);
	if (xp_softnic_world_create(scn, seed, &r->w, &diag) < 0) {
		snprintf(r->why, sizeof(r->why), "fabric: %s", diag.msg);
		goto out;
	}
	xp_softnic_world_set_faults(r->w, &f);
	if (engines_open(r) < 0)
		goto out;
	while (!all_closed(r) && !r->why[0]) {
		uint64_t now, next;

		if (poll_all(r) < 0)
			break;
		now = xp_softnic_now_ns(r->w);
		next = workload(r, now);

		if (r->why[0])
			break;
		if (now >= LIMIT_NS) {
			fail(r, "virtual time ran out before every connection closed", 0);
			break;
		}
		step(r, next > now ? next : now);
	}
	if (!r->why[0] && drain(r) == 0)
		rc = 0;
	*trace = r->trace ^ xp_softnic_now_ns(r->w);
	if (rc < 0 && getenv("DST_VERBOSE"))
		dump(r);
out:
	snprintf(why, why_len, "%s", r->why);
	run_free(r);
	free(r);
	free(scn);
	return rc;
}

/* ---- the command -------------------------------------------------------------------------- */

static void repro(const char *argv0, uint64_t seed, uint32_t conns, uint32_t msgs, uint32_t mask)
{
	fprintf(stderr, "repro: %s --seed %" PRIu64 " --conns %u --msgs %u --mask 0x%x\n", argv0,
		seed, conns, msgs, mask);
}

/* Smaller cases of a failing one, while they still fail. */
static void shrink(const char *argv0, uint64_t seed, uint32_t conns, uint32_t msgs, uint32_t mask)
{
	char why[640];
	uint64_t t;
	bool better = true;

	while (better) {
		better = false;
		if (conns > 1 && run_one(seed, conns - 1, msgs, mask, &t, why, sizeof(why)) < 0) {
			conns--;
			better = true;
		}
		if (msgs > 1 && run_one(seed, conns, msgs - 1, mask, &t, why, sizeof(why)) < 0) {
			msgs--;
			better = true;
		}
		for (uint32_t b = 0; b < 8; b++)
			if ((mask & (1u << b)) &&
			    run_one(seed, conns, msgs, mask & ~(1u << b), &t, why, sizeof(why)) < 0) {
				mask &= ~(1u << b);
				better = true;
			}
	}
	fprintf(stderr, "shrunk: ");
	repro(argv0, seed, conns, msgs, mask);
}

static int one_seed(const char *argv0, uint64_t seed, int conns, int msgs, int mask, bool det)
{
	uint64_t h = seed * 0x2545f4914f6cdd1dull;
	uint32_t c = conns > 0 ? (uint32_t)conns : 1 + (uint32_t)(h >> 7) % 4;
	uint32_t m = msgs > 0 ? (uint32_t)msgs : 1 + (uint32_t)(h >> 17) % 4;
	uint32_t k = mask >= 0 ? (uint32_t)mask : (uint32_t)(h >> 29) & F_ALL;
	uint64_t t1, t2;
	char why[640];

	if (c > MAX_CONNS || m > MAX_MSGS) {
		fprintf(stderr, "--conns is at most %d, --msgs at most %d\n", MAX_CONNS, MAX_MSGS);
		return 2;
	}
	if (run_one(seed, c, m, k, &t1, why, sizeof(why)) < 0) {
		fprintf(stderr, "seed %" PRIu64 ": %s\n", seed, why);
		repro(argv0, seed, c, m, k);
		shrink(argv0, seed, c, m, k);
		return 1;
	}
	if (det && (run_one(seed, c, m, k, &t2, why, sizeof(why)) < 0 || t1 != t2)) {
		fprintf(stderr, "seed %" PRIu64 ": not deterministic (%s)\n", seed, why);
		repro(argv0, seed, c, m, k);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t first = 0, last = 0;
	int conns = 0, msgs = 0, mask = -1, det_every = 0;
	bool range = false, single = false;
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v) {
			fprintf(stderr, "%s: %s needs a value\n", argv[0], a);
			return 2;
		}
		if (strcmp(a, "--seeds") == 0 &&
		    sscanf(v, "%" SCNu64 ":%" SCNu64, &first, &last) == 2 && first < last)
			range = true;
		else if (strcmp(a, "--seed") == 0 && sscanf(v, "%" SCNu64, &first) == 1)
			single = true;
		else if (strcmp(a, "--conns") == 0)
			conns = atoi(v);
		else if (strcmp(a, "--msgs") == 0)
			msgs = atoi(v);
		else if (strcmp(a, "--mask") == 0)
			mask = (int)strtol(v, NULL, 0) & F_ALL;
		else if (strcmp(a, "--determinism") == 0)
			det_every = atoi(v);
		else {
			fprintf(stderr, "%s: bad argument %s %s (--seeds A:B | --seed S [--conns C"
				" --msgs M --mask X] [--determinism N])\n", argv[0], a, v);
			return 2;
		}
		i++;
	}
	if (range == single) {
		fprintf(stderr, "%s: give --seeds A:B or --seed S\n", argv[0]);
		return 2;
	}
	if (single)
		last = first + 1;
	for (uint64_t s = first; s < last; s++) {
		bool det = det_every > 0 && s % (uint64_t)det_every == 0;

		if (one_seed(argv[0], s, conns, msgs, mask, det))
			failed++;
	}
	printf("%" PRIu64 " seeds, %d failed\n", last - first, failed);
	return failed ? 1 : 0;
}
