// SPDX-License-Identifier: MIT
/*
 * dst_softnic.c - suite 'dst' over the softnic datapath: engines on a k=4
 * fat tree of the UET emulation, stepped in virtual time by the softnic
 * driver, each seed drawing a whole run.
 *
 * A seed draws: 2 to 5 connections between hosts of different pods (1 to 4
 * paths each, no policy or swift in sync or async mode, chunk size 4, 16 or
 * 64 KiB), 1 to 6 messages per connection in either direction (1 byte to
 * 192 KiB), random loss of 0-10% on a fabric link, a link that fails and
 * recovers, trimming, duplication and delay spikes (reordering) at
 * delivery, a policy swap mid-transfer, connections opened late (while the
 * others move data), one connection aborted mid-traffic, chatty connections
 * (24 to 64 small messages, so every message slot of the immediate is
 * reused several times) and a completion lag at the receivers (1 to 40 us
 * between a write's placement and its event reaching the engine, as a
 * NIC's completion queue and a busy poller make it: a late copy of a chunk
 * can then be placed under its receive's key and reported after the
 * receive completed).
 *
 * Invariants, on every run: every operation completes exactly once; every
 * receive that completes with success holds exactly the bytes sent
 * (length and FNV-1a checksum); on a connection that is not aborted every
 * operation succeeds; the run ends before its virtual-time bound; at the
 * end every core's usage (connections, messages, operations, bytes and
 * chunks in flight, pending completions) is back to zero and every
 * softnic send slot is free. ASan (the sanitizer stage) checks the rest.
 *
 * A failing seed prints one line that reproduces it
 * (`dst_softnic --seeds S:S+1 --mask M`); the shrinker then drops
 * ingredients (the bits of the mask) one at a time while the run still
 * fails, and prints the smallest failing mask.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "engine.h"
#include "softnic.h"
#include "softnic_driver.h"
#include "uet.h"

#define N_HOSTS 4
#define MAX_CONNS 5
#define MAX_MSGS 64
#define PLAIN_MSGS 6                 /* per connection, unless chatty */
#define CHATTY_MIN_MSGS 24
#define CHATTY_MAX_BYTES (8u << 10)
#define MAX_MSG_BYTES (192u << 10)
#define BUF_BYTES (8u << 20)
#define BOUND_NS 2000000000ull /* 2 s of virtual time */
#define DRAIN_NS 20000000ull   /* after the last completion */

/* Ingredients a seed may use; the shrinker clears them one at a time. */
enum {
	M_LOSS = 1u << 0,
	M_LINK_DOWN = 1u << 1,
	M_TRIM = 1u << 2,
	M_DUP = 1u << 3,
	M_DELAY = 1u << 4,
	M_SWAP = 1u << 5,
	M_LATE_OPEN = 1u << 6,
	M_ABORT = 1u << 7,
	M_POLICY = 1u << 8,
	M_MULTI = 1u << 9, /* more than one connection */
	M_CHATTY = 1u << 10,
	M_CQ_LAG = 1u << 11,
	M_ALL = (1u << 12) - 1,
};

static const char *const mask_names[] = { "loss", "link-down", "trim", "dup", "delay",
					  "swap", "late-open", "abort", "policy", "multi",
					  "chatty", "cq-lag" };

static bool verbose;

static const uint32_t hosts[N_HOSTS] = { 0, 1, 8, 13 }; /* pods 0, 0, 2, 3 */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ull;
	uint64_t z = r->s;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t between(struct rng *r, uint64_t lo, uint64_t hi)
{
	return lo + rnd(r) % (hi - lo + 1);
}

static bool coin(struct rng *r, unsigned pct)
{
	return rnd(r) % 100 < pct;
}

struct msg {
	int from;             /* 0: the dialer's side sends */
	uint64_t len;
	uint64_t soff, roff;  /* in the sender's and the receiver's buffers */
	uint64_t sum;
	uint32_t send_done, recv_done;
	int send_status, recv_status;
};

struct conn {
	int side_host[2];     /* index into the run's engines */
	uint32_t id[2];
	bool open, aborted, closed, late;
	uint64_t open_at_ns, abort_at_ns, swap_at_ns;
	bool swapped;
	struct xp_conn_opts opts;
	uint32_t n_msgs;
	struct msg m[MAX_MSGS];
	uint32_t close_done[2];
};

struct run {
	uint64_t seed;
	uint32_t mask;
	struct xp_softnic_world *w;
	struct xp_engine *e[N_HOSTS];
	uint8_t *buf[N_HOSTS];
	uint32_t mr[N_HOSTS];
	uint64_t used[N_HOSTS];
	struct conn c[MAX_CONNS];
	uint32_t n_conns;
	char why[256];
	bool failed;
};

/* An independent stream per (seed, what, index): one ingredient's draws never shift another's. */
static struct rng rng_for(const struct run *R, uint32_t what, uint32_t index)
{
	struct rng r = { R->seed * 0x2545f4914f6cdd1dull + ((uint64_t)what << 32) + index };

	(void)rnd(&r);
	return r;
}

static void failf(struct run *R, const char *fmt, ...)
{
	va_list ap;

	if (R->failed)
		return;
	R->failed = true;
	va_start(ap, fmt);
	vsnprintf(R->why, sizeof(R->why), fmt, ap);
	va_end(ap);
}

static const struct pcm_package *builtin(const char *name)
{
	for (size_t i = 0; pcm_builtin_policies[i]; i++)
		if (strcmp(pcm_builtin_policies[i]->name, name) == 0)
			return pcm_builtin_policies[i];
	return NULL;
}

static uint64_t fnv1a(const uint8_t *p, uint64_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint64_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* ---- the fabric ------------------------------------------------------------------------------ */

static void add_failure(struct uet_scenario *scn, const char *a, const char *b, uint64_t at,
			uint64_t until, uint32_t loss_ppm, bool reroute)
{
	struct uet_link_failure *f = &scn->failures[scn->n_failures++];

	snprintf(f->a, sizeof(f->a), "%s", a);
	snprintf(f->b, sizeof(f->b), "%s", b);
	f->at_ps = at;
	f->until_ps = until;
	f->loss_ppm = loss_ppm;
	f->reroute = reroute;
}

static int make_world(struct run *R)
{
	struct uet_scenario *scn = calloc(1, sizeof(*scn));
	struct xp_softnic_config cfg = { .seed = R->seed };
	struct pcm_diag diag;
	int rc;

	uet_scenario_defaults(scn);
	snprintf(scn->name, sizeof(scn->name), "dst_softnic");
	snprintf(scn->path, sizeof(scn->path), "dst_softnic");
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "none");
	scn->seed = R->seed;
	scn->topo.kind = UET_TOPO_FAT_TREE;
	scn->topo.k = 4;
	scn->nic.data_rate_bps = 100000000000ull;
	/* every draw made whatever the mask, so clearing an ingredient changes nothing else */
	struct rng f = rng_for(R, 1, 0);
	bool trim = coin(&f, 50), loss = coin(&f, 70), down = coin(&f, 50), reroute = coin(&f, 50);
	uint32_t loss_ppm = (uint32_t)between(&f, 1000, 100000);
	uint64_t down_at = between(&f, 1, 200) * 1000000ull; /* 1-200 us, in ps */
	uint64_t down_for = between(&f, 10, 2000) * 1000000ull;
	uint32_t dup_ppm = (uint32_t)between(&f, 0, 30000);
	uint32_t delay_ppm = (uint32_t)between(&f, 0, 30000);
	uint64_t delay_ns = between(&f, 1, 300) * 1000;
	struct rng lag = rng_for(R, 6, 0);
	uint64_t cq_lag_ns = between(&lag, 1, 40) * 1000;

	if ((R->mask & M_TRIM) && trim) {
		scn->topo.uet_policy = true;
		scn->topo.switch_trimming = true;
		scn->nic.trimming = true;
	}
	if ((R->mask & M_LOSS) && loss)
		add_failure(scn, "edge0.0", "agg0.0", 0, UINT64_MAX, loss_ppm, false);
	if ((R->mask & M_LINK_DOWN) && down)
		add_failure(scn, "edge0.0", "agg0.1", down_at, down_at + down_for, 0, reroute);
	cfg.scn = scn;
	if (R->mask & M_DUP)
		cfg.dup_ppm = dup_ppm;
	if (R->mask & M_DELAY) {
		cfg.delay_ppm = delay_ppm;
		cfg.delay_ns = delay_ns;
	}
	if (R->mask & M_CQ_LAG)
		cfg.cq_lag_ns = cq_lag_ns;
	rc = xp_softnic_world_create(&cfg, &R->w, &diag);
	if (rc < 0)
		failf(R, "world: %s", diag.msg);
	uet_scenario_free(scn);
	return rc;
}

static int make_engines(struct run *R)
{
	for (int i = 0; i < N_HOSTS; i++) {
		struct xp_engine_config cfg;
		struct pcm_diag diag;
		struct xp_ctl ctl = { .op = XP_CTL_MR_REG };
		struct xp_cmd cmd = { .op = XP_CMD_CTL, .ctl = &ctl };
		int rc;

		xp_engine_config_default(&cfg);
		cfg.dp_ops = &xp_dp_softnic_ops;
		cfg.dp.world = R->w;
		cfg.dp.host = hosts[i];
		cfg.progress = XP_PROGRESS_EXTERNAL;
		cfg.index = (uint32_t)i;
		cfg.async_workers = 0;
		struct rng er = rng_for(R, 2, (uint32_t)i);

		cfg.core.chunk_bytes = 4096u << (2 * between(&er, 0, 2));
		cfg.core.rto_max_ns = 10000000;
		cfg.core.quarantine_ns = 40000000;
		cfg.core.seed = R->seed + 1; /* the test hook: the run replays (0: getrandom()) */
		rc = xp_engine_create(&cfg, &R->e[i], &diag);
		if (rc < 0) {
			failf(R, "engine %d: %s", i, diag.msg);
			return rc;
		}
		R->buf[i] = calloc(1, BUF_BYTES);
		ctl.addr = R->buf[i];
		ctl.len = BUF_BYTES;
		xp_engine_submit(R->e[i], &cmd);
		while (!atomic_load(&ctl.done))
			xp_engine_run_once(R->e[i], xp_softnic_now_ns(R->w));
		if (ctl.status < 0) {
			failf(R, "mr_reg %d: %s", i, ctl.diag.msg);
			return ctl.status;
		}
		R->mr[i] = ctl.mr;
	}
	return 0;
}

/* ---- the workload ------------------------------------------------------------------------ */

static uint64_t take_buf(struct run *R, int h, uint64_t len)
{
	uint64_t off = R->used[h];

	R->used[h] += (len + 63) & ~63ull;
	return off;
}

static void plan(struct run *R)
{
	struct rng top = rng_for(R, 3, 0);
	uint32_t n = (uint32_t)between(&top, 2, MAX_CONNS);

	R->n_conns = (R->mask & M_MULTI) ? n : 1;
	for (uint32_t i = 0; i < R->n_conns; i++) {
		struct conn *c = &R->c[i];
		struct rng cr = rng_for(R, 4, i), mr = rng_for(R, 5, i), chat = rng_for(R, 7, i);
		int a = (int)between(&cr, 0, 1), b = (int)between(&cr, 2, 3);
		bool dialer_a = coin(&cr, 50), policy = coin(&cr, 60), sync = coin(&cr, 50);
		uint32_t async_mode = (uint32_t)between(&cr, 0, 2);
		bool late = coin(&cr, 40), abort_it = coin(&cr, 40), swap = coin(&cr, 50);
		uint64_t late_ns = between(&cr, 1, 300) * 1000, abort_ns = between(&cr, 1, 200) * 1000;
		uint64_t swap_ns = between(&cr, 1, 100) * 1000;

		c->side_host[0] = dialer_a ? a : b;
		c->side_host[1] = c->side_host[0] == a ? b : a;
		c->opts.paths = (uint32_t)between(&cr, 1, 4);
		if ((R->mask & M_POLICY) && policy) {
			c->opts.cc = builtin("swift");
			snprintf(c->opts.cc_name, sizeof(c->opts.cc_name), "swift");
			c->opts.mode = sync ? XP_CC_PCM_SYNC : XP_CC_PCM_ASYNC;
			c->opts.async_mode = (enum pcm_async_mode)async_mode;
		}
		c->late = i > 0 && (R->mask & M_LATE_OPEN) && late;
		c->open_at_ns = c->late ? late_ns : 0;
		c->abort_at_ns = UINT64_MAX;
		if (i == R->n_conns - 1 && i > 0 && (R->mask & M_ABORT) && abort_it)
			c->abort_at_ns = c->open_at_ns + abort_ns;
		c->swap_at_ns = (R->mask & M_SWAP) && swap ? c->open_at_ns + swap_ns : UINT64_MAX;
		bool chatty = coin(&chat, 50);
		uint32_t chatty_msgs = (uint32_t)between(&chat, CHATTY_MIN_MSGS, MAX_MSGS);
		uint32_t plain_msgs = (uint32_t)between(&mr, 1, PLAIN_MSGS);

		c->n_msgs = (R->mask & M_CHATTY) && chatty ? chatty_msgs : plain_msgs;
		for (uint32_t j = 0; j < c->n_msgs; j++) {
			struct msg *m = &c->m[j];
			/* past the plain ones, a chatty connection draws from its own stream */
			struct rng *mj = j < plain_msgs ? &mr : &chat;
			bool small = coin(mj, 30);
			uint64_t small_len = between(mj, 1, 512);
			uint64_t len = between(mj, 1, j < plain_msgs ? MAX_MSG_BYTES : CHATTY_MAX_BYTES);
			int s, d;

			m->from = (int)between(mj, 0, 1);
			m->len = small ? small_len : len;
			s = c->side_host[m->from];
			d = c->side_host[!m->from];
			m->soff = take_buf(R, s, m->len);
			m->roff = take_buf(R, d, m->len);
			for (uint64_t k = 0; k < m->len; k++)
				R->buf[s][m->soff + k] = (uint8_t)rnd(mj);
			m->sum = fnv1a(R->buf[s] + m->soff, m->len);
		}
	}
}

/* Run control request @ctl on engine @h now, stepping that engine until it is done. */
static void ctl_now(struct run *R, int h, struct xp_ctl *ctl)
{
	struct xp_cmd cmd = { .op = XP_CMD_CTL, .ctl = ctl };

	atomic_store(&ctl->done, 0);
	while (xp_engine_submit(R->e[h], &cmd) == -EAGAIN)
		xp_engine_run_once(R->e[h], xp_softnic_now_ns(R->w));
	while (!atomic_load_explicit(&ctl->done, memory_order_acquire))
		xp_engine_run_once(R->e[h], xp_softnic_now_ns(R->w));
}

static void submit(struct run *R, int h, const struct xp_cmd *cmd)
{
	while (xp_engine_submit(R->e[h], cmd) == -EAGAIN)
		xp_engine_run_once(R->e[h], xp_softnic_now_ns(R->w));
}

static uint64_t cookie_of(uint32_t ci, uint32_t j, int recv)
{
	return ((uint64_t)ci << 16) | ((uint64_t)j << 1) | (uint64_t)recv;
}

static void open_conn(struct run *R, uint32_t ci)
{
	struct conn *c = &R->c[ci];
	struct xp_ctl *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	int ha = c->side_host[0], hb = c->side_host[1];

	a->op = XP_CTL_CONN_OPEN;
	a->opts = c->opts;
	ctl_now(R, ha, a);
	if (a->status == 0) {
		b->op = XP_CTL_CONN_ACCEPT;
		b->opts = c->opts;
		memcpy(b->peer_msg, a->msg, a->msg_len);
		b->peer_len = a->msg_len;
		ctl_now(R, hb, b);
	}
	if (a->status == 0 && b->status == 0) {
		a->op = XP_CTL_CONN_BIND;
		memcpy(a->peer_msg, b->msg, b->msg_len);
		a->peer_len = b->msg_len;
		ctl_now(R, ha, a);
	}
	if (a->status || b->status) {
		failf(R, "conn %u: setup: %d/%d: %s%s", ci, a->status, b->status, a->diag.msg,
		      b->diag.msg);
	} else {
		c->id[0] = a->conn;
		c->id[1] = b->conn;
		c->open = true;
		/* receives first (they send the CTSs), then the sends */
		for (int pass = 0; pass < 2; pass++)
			for (uint32_t j = 0; j < c->n_msgs; j++) {
				const struct msg *m = &c->m[j];
				int side = pass == 0 ? !m->from : m->from;
				int h = c->side_host[side];
				struct xp_cmd cmd = {
					.op = pass == 0 ? XP_CMD_RECV : XP_CMD_SEND,
					.conn = c->id[side], .mr = R->mr[h],
					.addr = (uint64_t)(uintptr_t)R->buf[h] +
						(pass == 0 ? m->roff : m->soff),
					.len = m->len, .cookie = cookie_of(ci, j, pass == 0),
				};

				submit(R, h, &cmd);
			}
	}
	free(a);
	free(b);
}

static void swap_policy(struct run *R, struct conn *c)
{
	struct xp_ctl *ctl = calloc(1, sizeof(*ctl));

	ctl->op = XP_CTL_SET_CC;
	ctl->conn = c->id[0];
	if (!c->opts.cc) {
		ctl->opts.cc = builtin("swift");
		snprintf(ctl->opts.cc_name, sizeof(ctl->opts.cc_name), "swift");
		ctl->opts.mode = XP_CC_PCM_SYNC;
	} /* else: back to no policy */
	ctl_now(R, c->side_host[0], ctl);
	if (ctl->status < 0)
		failf(R, "swap: %d: %s", ctl->status, ctl->diag.msg);
	c->swapped = true;
	free(ctl);
}

static void close_conn(struct run *R, struct conn *c, enum xp_close_mode mode)
{
	for (int s = 0; s < 2; s++) {
		struct xp_cmd cmd = { .op = XP_CMD_CLOSE, .conn = c->id[s],
				      .close_mode = (uint8_t)mode };

		submit(R, c->side_host[s], &cmd);
	}
	c->closed = true;
}

static bool conn_ops_done(const struct conn *c)
{
	for (uint32_t j = 0; j < c->n_msgs; j++)
		if (!c->m[j].send_done || !c->m[j].recv_done)
			return false;
	return true;
}

static void on_comp(struct run *R, int h, const struct xp_engine_comp *k)
{
	uint32_t ci = (uint32_t)(k->cookie >> 16), j = (uint32_t)((k->cookie >> 1) & 0x7fff);
	bool recv = k->cookie & 1;
	struct conn *c;
	struct msg *m;

	if (k->kind == XP_ECOMP_CLOSE) {
		for (uint32_t i = 0; i < R->n_conns; i++)
			for (int s = 0; s < 2; s++)
				if (R->c[i].open && R->c[i].side_host[s] == h &&
				    R->c[i].id[s] == k->conn && R->c[i].closed)
					if (R->c[i].close_done[s]++)
						failf(R, "conn %u side %d: closed twice", i, s);
		return;
	}
	if (k->kind == XP_ECOMP_CTL)
		return;
	if (ci >= R->n_conns || j >= R->c[ci].n_msgs) {
		failf(R, "a completion with an unknown cookie %#" PRIx64, k->cookie);
		return;
	}
	c = &R->c[ci];
	m = &c->m[j];
	if (recv) {
		if (m->recv_done++)
			failf(R, "conn %u msg %u: receive completed twice", ci, j);
		m->recv_status = k->status;
		if (k->status == 0 &&
		    (k->bytes != m->len ||
		     fnv1a(R->buf[c->side_host[!m->from]] + m->roff, m->len) != m->sum))
			failf(R, "conn %u msg %u: %" PRIu64 " of %" PRIu64 " bytes, checksum %s", ci,
			      j, (uint64_t)k->bytes, m->len,
			      fnv1a(R->buf[c->side_host[!m->from]] + m->roff, m->len) == m->sum ?
				      "right" : "wrong");
	} else {
		if (m->send_done++)
			failf(R, "conn %u msg %u: send completed twice", ci, j);
		m->send_status = k->status;
	}
	if (k->status != 0 && !c->aborted)
		failf(R, "conn %u msg %u: %s failed with %d on a connection not aborted", ci, j,
		      recv ? "receive" : "send", k->status);
}

/* The application's step between instants: due actions, then completions. */
static bool app_step(void *ctx)
{
	struct run *R = ctx;
	uint64_t now = xp_softnic_now_ns(R->w);
	bool all = true;

	for (uint32_t i = 0; i < R->n_conns; i++) {
		struct conn *c = &R->c[i];

		if (!c->open && !c->closed && now >= c->open_at_ns && !R->failed)
			open_conn(R, i);
		if (!c->open)
			continue;
		if (!c->swapped && now >= c->swap_at_ns && !c->closed)
			swap_policy(R, c);
		if (!c->closed && now >= c->abort_at_ns) {
			c->aborted = true;
			close_conn(R, c, XP_CLOSE_ABORT);
		}
	}
	for (int h = 0; h < N_HOSTS; h++) {
		struct xp_engine_comp k[64];
		uint32_t n;

		while ((n = xp_engine_poll(R->e[h], k, 64)) > 0)
			for (uint32_t i = 0; i < n; i++)
				on_comp(R, h, &k[i]);
	}
	for (uint32_t i = 0; i < R->n_conns; i++) {
		struct conn *c = &R->c[i];

		if (c->open && !c->closed && conn_ops_done(c))
			close_conn(R, c, XP_CLOSE_GRACEFUL);
		if (!c->open || !c->close_done[0] || !c->close_done[1] || !conn_ops_done(c))
			all = false;
	}
	return all || R->failed;
}

/* ---- one run ------------------------------------------------------------------------------ */

static void check_end(struct run *R)
{
	for (int h = 0; h < N_HOSTS; h++) {
		struct xp_dp *dp = xp_engine_dp(R->e[h]);
		struct xp_core_usage u;
		struct xp_dp_info info;

		xp_dp_info(dp, &info);
		if (xp_dp_send_slots(dp) != info.send_slots)
			failf(R, "host %d: %u of %u softnic send slots still held", h,
			      info.send_slots - xp_dp_send_slots(dp), info.send_slots);

		xp_core_usage(xp_engine_core(R->e[h]), &u);
		if (u.conns_open || u.send_msgs || u.recv_msgs || u.ops || u.in_flight_bytes ||
		    u.in_flight_chunks || u.completions_pending)
			failf(R,
			      "host %d: the core still holds %u conns, %u sends, %u receives, %u ops, "
			      "%" PRIu64 " bytes in flight",
			      h, u.conns_open, u.send_msgs, u.recv_msgs, u.ops, u.in_flight_bytes);
	}
}

static void run_free(struct run *R)
{
	for (int h = 0; h < N_HOSTS; h++) {
		xp_engine_destroy(R->e[h]);
		free(R->buf[h]);
	}
	xp_softnic_world_destroy(R->w);
}

static void print_run(struct run *R)
{
	uint64_t bytes = 0, lost = 0, retx = 0, chunks = 0;
	uint32_t msgs = 0;

	for (uint32_t i = 0; i < R->n_conns; i++)
		for (uint32_t j = 0; j < R->c[i].n_msgs; j++)
			if (R->c[i].m[j].recv_status == 0 && R->c[i].m[j].recv_done) {
				bytes += R->c[i].m[j].len;
				msgs++;
			}
	for (int h = 0; h < N_HOSTS; h++) {
		struct xp_dp_stats st;
		const struct xp_core_stats *cs = xp_core_stats(xp_engine_core(R->e[h]));

		xp_engine_dp(R->e[h])->ops->stats(xp_engine_dp(R->e[h]), &st);
		lost += st.writes_lost;
		retx += cs->chunks_retx;
		chunks += st.chunks_delivered;
	}
	fprintf(stderr,
		"seed %" PRIu64 ": %u conns, %u msgs / %" PRIu64 " bytes delivered, %" PRIu64
		" chunks, %" PRIu64 " writes lost, %" PRIu64 " retransmitted, %" PRIu64
		" us virtual\n",
		R->seed, R->n_conns, msgs, bytes, chunks, lost, retx,
		xp_softnic_now_ns(R->w) / 1000);
}

/* Return: true when the run held every invariant. */
static bool run_one(uint64_t seed, uint32_t mask, char *why, size_t why_len)
{
	struct run *R = calloc(1, sizeof(*R));
	bool ok;
	int rc;

	R->seed = seed;
	R->mask = mask;
	if (make_world(R) == 0 && make_engines(R) == 0) {
		plan(R);
		rc = xp_softnic_drive(R->w, R->e, N_HOSTS, BOUND_NS, app_step, R);
		if (rc == -ETIMEDOUT)
			failf(R, "not done after %llu ms of virtual time",
			      (unsigned long long)(BOUND_NS / 1000000));
		else if (rc < 0)
			failf(R, "driver: %d", rc);
		/* let the NICs drain what is still queued (late retransmissions), then check */
		if (!R->failed)
			(void)xp_softnic_drive(R->w, R->e, N_HOSTS,
					       xp_softnic_now_ns(R->w) + DRAIN_NS, NULL, NULL);
		if (!R->failed)
			check_end(R);
		if (verbose)
			print_run(R);
	}
	ok = !R->failed;
	snprintf(why, why_len, "%s", R->why);
	run_free(R);
	free(R);
	return ok;
}

static void print_mask(uint32_t mask)
{
	for (unsigned b = 0; b < sizeof(mask_names) / sizeof(mask_names[0]); b++)
		if (mask & (1u << b))
			fprintf(stderr, " %s", mask_names[b]);
	fprintf(stderr, "\n");
}

/* Clear the mask's bits one at a time while the seed still fails. */
static uint32_t shrink(uint64_t seed, uint32_t mask)
{
	char why[256];

	for (unsigned b = 0; b < sizeof(mask_names) / sizeof(mask_names[0]); b++) {
		uint32_t m = mask & ~(1u << b);

		if (m != mask && !run_one(seed, m, why, sizeof(why)))
			mask = m;
	}
	return mask;
}

int main(int argc, char **argv)
{
	uint64_t first = 0, last = 100;
	uint32_t mask = M_ALL;
	uint32_t failures = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc &&
		    sscanf(argv[++i], "%" SCNu64 ":%" SCNu64, &first, &last) == 2 && first < last)
			continue;
		if (strcmp(argv[i], "--mask") == 0 && i + 1 < argc &&
		    sscanf(argv[++i], "%" SCNx32, &mask) == 1)
			continue;
		if (strcmp(argv[i], "--verbose") == 0) {
			verbose = true;
			continue;
		}
		fprintf(stderr, "usage: %s [--seeds FIRST:END] [--mask HEX] [--verbose]\n",
			argv[0]);
		return 2;
	}
	for (uint64_t s = first; s < last; s++) {
		char why[256];
		uint32_t small;

		if (run_one(s, mask, why, sizeof(why)))
			continue;
		failures++;
		fprintf(stderr, "FAIL seed %" PRIu64 ": %s\n  repro: %s --seeds %" PRIu64 ":%" PRIu64
				" --mask %x\n",
			s, why, argv[0], s, s + 1, mask);
		small = shrink(s, mask);
		fprintf(stderr, "  shrunk: %s --seeds %" PRIu64 ":%" PRIu64 " --mask %x:", argv[0],
			s, s + 1, small);
		print_mask(small);
		if (failures >= 3)
			break;
	}
	printf("dst_softnic: seeds %" PRIu64 "..%" PRIu64 ": %u failed\n", first, last, failures);
	return failures ? 1 : 0;
}
