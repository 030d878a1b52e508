// SPDX-License-Identifier: MIT
/*
 * dst_core.c - deterministic simulation testing of the transport core.
 *
 * One run: 2 or 3 hosts, each a core, joined by the virtual-time network of
 * xp_net.c; C connections between random host pairs, each with 1..4 paths;
 * up to M messages each way per connection, 0 B .. 4 MiB, real buffers of
 * seeded bytes, receives posted before or after their sends; faults on
 * every link as the mask allows: loss 0-10%, duplication, reordering
 * (jitter), delay spikes, outages (for a connection with a no-progress
 * limit, sometimes of every path for longer than the limit), ECN marks;
 * and, as the mask allows,
 * connections opened and closed (gracefully or not) in the middle of
 * traffic, messages
 * longer than their receive, RC-mode connections, PCM policies (sync and
 * async) and a live CC swap.
 *
 * Invariants, on every run:
 *   - a receive that completes with success holds exactly its message:
 *     length and checksum, and nothing written past it;
 *   - a send that completes with success has its receive completed already;
 *   - every operation posted completes exactly once, with 0 or the error its
 *     situation allows (-EMSGSIZE for a too-long message, -ECANCELED after a
 *     local abort, -ECONNRESET once a side closed or reset, -ETIMEDOUT only
 *     with a no-progress limit); a connection nobody closed early loses
 *     nothing;
 *   - nothing stuck: every connection is closed on both sides within a
 *     bound of virtual time after the last workload event and fault;
 *   - nothing leaked: afterwards every core's accounting is zero (open and
 *     quarantined connections, pools, bytes in flight, timers, pacer,
 *     pending completions) and every CC binding's flows are closed;
 *   - the same seed gives the same trace (checked with --determinism).
 *
 * A failing run prints one line that reproduces it, then the shrinker tries
 * fewer connections, fewer messages and fewer fault kinds while it still
 * fails, and prints the smallest failing case's line.
 *
 *   dst_core --seeds 0:2000              sweep (suite dst; 100000 in slow)
 *   dst_core --seed 17 --conns 3 --msgs 5 --mask 0x3ff    one case
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cc_pcm.h"
#include "core.h"
#include "pcm.h"
#include "xp_net.h"

enum {
	F_LOSS = 1 << 0,
	F_DUP = 1 << 1,
	F_REORDER = 1 << 2,
	F_SPIKES = 1 << 3,
	F_OUTAGE = 1 << 4,
	F_ECN = 1 << 5,
	F_CLOSE = 1 << 6,   /* connections opened and closed in the middle of traffic */
	F_TOO_LONG = 1 << 7,/* messages longer than their receive */
	F_RC = 1 << 8,      /* RC-mode connections over reliable paths */
	F_PCM = 1 << 9,     /* PCM policies, sync and async, and a live swap */
	F_SMALL = 1 << 10,  /* tiny pools, control MTU and chunks */
	F_ALL = (1 << 11) - 1,
};

static const char *const mask_names[] = {
	"loss", "dup", "reorder", "spikes", "outage", "ecn", "open_close", "too_long", "rc", "pcm",
	"small",
};

#define MAX_CONNS 8
#define MAX_MSGS 48 /* per direction: chatty connections reuse every message slot */
#define MAX_HOSTS 3
#define N_BINDINGS 4
#define US 1000ull
#define MS 1000000ull
#define WORK_NS (6 * MS)          /* workload events fall in [0, WORK_NS) */
#define SETTLE_BOUND_NS (3000 * MS) /* done within this after the last event or fault */
#define MAX_EVENTS 40000000ull

struct params {
	uint64_t seed;
	uint32_t conns;
	uint32_t msgs;
	uint32_t mask;
};

struct msg {
	uint64_t len;
	uint64_t cap;
	uint64_t t_send;
	uint64_t t_recv;
	uint64_t sum;      /* checksum of the source bytes */
	uint8_t *src;
	uint8_t *dst;
	uint32_t rkey;     /* the receive's own key, invalidated when it completes */
	bool send_posted;
	bool recv_posted;
	uint8_t send_done; /* completions seen */
	uint8_t recv_done;
	int send_status;
	int recv_status;
};

struct side {
	uint32_t host;
	uint32_t id;
	uint32_t nonce;
	uint32_t handles[4];
	bool closed;       /* xp_conn_close() called */
	bool aborted;      /* by this side */
	bool close_done;   /* CLOSE completion seen */
	bool failed;       /* an error said the connection is gone */
	int binding;       /* -1 fixed */
	uint32_t close_comps;
	uint64_t no_progress_ns;
};

struct conn {
	struct side s[2];  /* s[0] sends messages m[0][*] to s[1], and so on */
	uint32_t n_paths;
	bool rc;
	struct msg m[2][MAX_MSGS];
	uint32_t n_msgs[2];
	uint64_t open_at;  /* 0: from the start */
	bool opened;
	uint64_t close_at; /* 0: none in the middle of traffic */
	int close_side;
	bool close_abort;
	uint64_t swap_at;
	bool final_close_scheduled;
	struct xp_cc_fixed fixed[2];
};

enum wl_kind {
	WL_OPEN = 0,        /* create and bind both sides */
	WL_SEND,
	WL_RECV,
	WL_CLOSE,           /* one side closes in the middle of traffic */
	WL_SWAP,            /* live CC swap on side 0 */
	WL_CLOSE_SIDE,      /* one side closes (after its peer did, or was reset) */
	WL_FINAL_CLOSE,     /* both sides close once every operation finished */
};

struct wl_event {
	uint64_t t_ns;
	uint8_t kind; /* enum wl_kind */
	uint8_t dir;
	uint8_t conn;
	uint8_t idx;
};

struct run {
	struct params p;
	struct xp_net *net;
	uint32_t n_hosts;
	struct conn conns[MAX_CONNS];
	struct xp_cc_pcm *bind[MAX_HOSTS][N_BINDINGS];
	struct wl_event *ev;
	uint32_t n_ev;
	uint32_t cap_ev;
	uint32_t next_ev;
	bool ev_dirty;      /* events were added out of order */
	bool completed;     /* a completion came since the last look */
	uint64_t last_fault_ns;
	uint64_t last_work_ns;
	char fail[512];
};

/* Seeded draws: one stream per (seed, tag, a, b), so cutting connections or
 * messages leaves the others' draws unchanged (what the shrinker relies on). */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct rng {
	uint64_t s;
};

static struct rng rng_for(uint64_t seed, uint64_t tag, uint64_t a, uint64_t b)
{
	struct rng r = { mix(seed * 0x9e3779b97f4a7c15ull ^ mix(tag << 48 ^ a << 24 ^ b)) };

	return r;
}

static uint64_t next(struct rng *r)
{
	return mix(r->s += 0x9e3779b97f4a7c15ull);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? next(r) % n : 0;
}

static uint64_t between(struct rng *r, uint64_t lo, uint64_t hi)
{
	return lo + below(r, hi - lo + 1);
}

static bool coin(struct rng *r, unsigned pct)
{
	return below(r, 100) < pct;
}

static void failf(struct run *R, const char *fmt, ...)
{
	va_list ap;

	if (R->fail[0])
		return;
	va_start(ap, fmt);
	vsnprintf(R->fail, sizeof(R->fail), fmt, ap);
	va_end(ap);
}

/* Links */

static void add_outages(struct run *R, struct rng *r, struct xp_link *l)
{
	if (!(R->p.mask & F_OUTAGE) || !coin(r, 30))
		return;
	l->n_outages = (uint32_t)between(r, 1, 2);
	for (uint32_t k = 0; k < l->n_outages; k++) {
		l->outage[k].start_ns = below(r, WORK_NS);
		l->outage[k].end_ns = l->outage[k].start_ns + between(r, 100 * US, 5 * MS);
		if (l->outage[k].end_ns > R->last_fault_ns)
			R->last_fault_ns = l->outage[k].end_ns;
	}
}

static struct xp_link make_link(struct run *R, struct rng *r, bool reliable)
{
	struct xp_link l;

	memset(&l, 0, sizeof(l));
	l.delay_ns = between(r, 2 * US, 20 * US);
	if (R->p.mask & F_REORDER && coin(r, 70))
		l.jitter_ns = between(r, 0, 2 * l.delay_ns);
	if (R->p.mask & F_ECN && coin(r, 50))
		l.ecn_ppm = (uint32_t)between(r, 0, 200000);
	if (R->p.mask & F_SPIKES && coin(r, 50)) {
		l.spike_ppm = 5000;
		l.spike_ns = between(r, 100 * US, 2 * MS);
	}
	if (reliable) {
		l.reliable = true;
		return l;
	}
	if (R->p.mask & F_LOSS && coin(r, 80))
		l.loss_ppm = (uint32_t)between(r, 0, 100000);
	if (R->p.mask & F_DUP && coin(r, 50))
		l.dup_ppm = (uint32_t)between(r, 0, 20000);
	add_outages(R, r, &l);
	return l;
}

/* Messages */

static uint64_t msg_len(struct rng *r)
{
	uint64_t k = below(r, 100);

	if (k < 35)
		return below(r, 1024);
	if (k < 65)
		return between(r, 1024, 64 * 1024);
	if (k < 96)
		return between(r, 64 * 1024, 512 * 1024);
	return between(r, 512 * 1024, 4 * 1024 * 1024);
}

static uint64_t checksum(const uint8_t *p, uint64_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (uint64_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void fill(uint8_t *p, uint64_t n, uint64_t seed)
{
	struct rng r = { seed };

	for (uint64_t i = 0; i < n; i += 8) {
		uint64_t v = next(&r);

		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

#define TAIL_BYTE 0xa5
#define TAIL_CHECK 64 /* bytes checked past a message's end */

/* Workload events */

static void add_event(struct run *R, uint64_t t, uint8_t kind, uint8_t dir, uint8_t conn,
		      uint8_t idx)
{
	if (R->n_ev == R->cap_ev) {
		R->cap_ev = R->cap_ev ? 2 * R->cap_ev : 256;
		R->ev = realloc(R->ev, R->cap_ev * sizeof(*R->ev));
		if (!R->ev)
			abort();
	}
	R->ev[R->n_ev++] = (struct wl_event){ t, kind, dir, conn, idx };
	R->ev_dirty = true;
	if (kind <= WL_SWAP && t > R->last_work_ns)
		R->last_work_ns = t;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct wl_event *x = a, *y = b;

	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	if (x->conn != y->conn)
		return x->conn - y->conn;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	if (x->dir != y->dir)
		return x->dir - y->dir;
	return x->idx - y->idx;
}

/* Setup */

static const char *const pcm_policies[N_BINDINGS] = { "swift", "newreno", "dctcp", "swift" };

static const struct pcm_package *builtin(const char *name)
{
	for (size_t i = 0; pcm_builtin_policies[i]; i++)
		if (strcmp(pcm_builtin_policies[i]->name, name) == 0)
			return pcm_builtin_policies[i];
	abort();
}

static int make_bindings(struct run *R, uint32_t host)
{
	for (int k = 0; k < N_BINDINGS; k++) {
		struct xp_cc_pcm_config cfg;
		struct pcm_diag diag;

		xp_cc_pcm_config_default(&cfg);
		cfg.cc = builtin(pcm_policies[k]);
		cfg.target = pcm_target_find("softnic");
		cfg.max_flows = MAX_CONNS * 2 + 4;
		if (k == 2) { /* dctcp in the asynchronous shell, run inline: deterministic */
			cfg.mode = XP_CC_PCM_ASYNC;
			cfg.async.mode = PCM_ASYNC_BOUNDED;
			cfg.async_inline = true;
		}
		if (k == 3)
			cfg.lb = builtin("reps");
		if (xp_cc_pcm_create(&cfg, &R->bind[host][k], &diag) < 0) {
			failf(R, "cc_pcm %s: %s", pcm_policies[k], diag.msg);
			return -1;
		}
	}
	return 0;
}

static struct xp_cc_binding binding_of(struct run *R, struct conn *c, int side)
{
	int b = c->s[side].binding;

	if (b < 0)
		return xp_cc_fixed_binding(&c->fixed[side]);
	return xp_cc_pcm_binding(R->bind[c->s[side].host][b]);
}

static void tune_core(struct run *R, uint32_t host, struct xp_core_config *cfg)
{
	struct rng r = rng_for(R->p.seed, 1, host, 0);
	static const uint32_t chunks[] = { 4096, 16384, 65536 };

	xp_core_config_default(cfg);
	cfg->seed = R->p.seed * 31 + host + 1; /* never 0: 0 draws from getrandom() */
	cfg->max_conns = 64;
	cfg->max_paths = 4;
	cfg->chunk_bytes = chunks[below(&r, 3)];
	cfg->min_chunk_bytes = coin(&r, 50) ? 1024 : 4096;
	if (cfg->min_chunk_bytes > cfg->chunk_bytes)
		cfg->min_chunk_bytes = cfg->chunk_bytes;
	cfg->rto_min_ns = between(&r, 50 * US, 200 * US);
	cfg->rto_initial_ns = 1 * MS;
	cfg->rto_max_ns = 10 * MS;
	cfg->quarantine_ns = 500 * MS;
	cfg->send_msgs = 256;
	cfg->recv_msgs = 256;
	cfg->ops = 4096;
	cfg->line_rate_bps = 100000000000ull;
	cfg->burst_chunks = (uint32_t)between(&r, 1, 16);
	if (R->p.mask & F_SMALL && coin(&r, 50)) {
		cfg->send_msgs = (uint32_t)between(&r, 1, 6);
		cfg->recv_msgs = (uint32_t)between(&r, 1, 6);
		cfg->chunk_bytes = 1024;
		cfg->min_chunk_bytes = 256;
	}
	/* The control MTU is the datapath's: one value for every host of a run. */
	{
		struct rng m = rng_for(R->p.seed, 7, 0, 0);

		if (R->p.mask & F_SMALL && coin(&m, 30))
			cfg->ctrl_mtu = (uint32_t)between(&m, 64, 200);
	}
}

static void plan_conn(struct run *R, uint32_t i)
{
	struct conn *c = &R->conns[i];
	struct rng r = rng_for(R->p.seed, 2, i, 0);

	c->s[0].host = (uint32_t)below(&r, R->n_hosts);
	c->s[1].host = (c->s[0].host + 1 + (uint32_t)below(&r, R->n_hosts - 1)) % R->n_hosts;
	c->n_paths = (uint32_t)between(&r, 1, 4);
	c->rc = R->p.mask & F_RC && coin(&r, 20);
	for (int s = 0; s < 2; s++) {
		static const uint64_t cwnds[] = { 4096, 32768, 262144, 4194304, UINT64_MAX };

		c->fixed[s].cwnd_bytes = cwnds[below(&r, 5)];
		c->fixed[s].rate = PCM_RATE_ONE;
		if (coin(&r, 20))
			c->fixed[s].rate = PCM_RATE_ONE >> between(&r, 1, 4);
		c->s[s].binding = R->p.mask & F_PCM && coin(&r, 50) ? (int)below(&r, N_BINDINGS) : -1;
		c->s[s].no_progress_ns = coin(&r, 10) ? 20 * MS : 0;
	}
	if (R->p.mask & F_CLOSE && coin(&r, 30))
		c->open_at = between(&r, 1, WORK_NS / 2);
	if (R->p.mask & F_CLOSE && coin(&r, 25)) {
		c->close_at = c->open_at + between(&r, 1, WORK_NS);
		c->close_side = (int)below(&r, 2);
		c->close_abort = coin(&r, 40);
	}
	if (R->p.mask & F_PCM && coin(&r, 20))
		c->swap_at = c->open_at + between(&r, 1, WORK_NS);
}

static int plan_msgs(struct run *R, uint32_t i)
{
	struct conn *c = &R->conns[i];

	for (int d = 0; d < 2; d++) {
		struct rng r = rng_for(R->p.seed, 3, i, (uint64_t)d);
		uint64_t ts = c->open_at + below(&r, MS), tr = c->open_at + below(&r, MS);

		/* A chatty direction sends many small messages: slots get reused. */
		bool chatty = R->p.msgs && coin(&r, 25);

		c->n_msgs[d] = (uint32_t)below(&r, R->p.msgs + 1);
		if (chatty)
			c->n_msgs[d] = (uint32_t)between(&r, R->p.msgs, 6 * R->p.msgs);
		if (c->n_msgs[d] > MAX_MSGS)
			c->n_msgs[d] = MAX_MSGS;
		for (uint32_t j = 0; j < c->n_msgs[d]; j++) {
			struct msg *m = &c->m[d][j];

			m->len = chatty ? below(&r, 3000) : msg_len(&r);
			m->cap = coin(&r, 50) ? m->len : m->len + below(&r, 4096);
			if (R->p.mask & F_TOO_LONG && m->len && coin(&r, 7))
				m->cap = below(&r, m->len);
			ts += below(&r, chatty ? WORK_NS / 64 : WORK_NS / 8);
			tr += below(&r, chatty ? WORK_NS / 64 : WORK_NS / 8);
			m->t_send = ts;
			m->t_recv = tr;
			m->src = malloc(m->len + 1);
			m->dst = malloc(m->cap + TAIL_CHECK);
			if (!m->src || !m->dst)
				return -1;
			fill(m->src, m->len, mix(R->p.seed ^ mix(i << 20 | (uint64_t)d << 10 | j)));
			memset(m->dst, TAIL_BYTE, m->cap + TAIL_CHECK);
			m->sum = checksum(m->src, m->len);
			add_event(R, ts, WL_SEND, (uint8_t)d, (uint8_t)i, (uint8_t)j);
			add_event(R, tr, WL_RECV, (uint8_t)d, (uint8_t)i, (uint8_t)j);
		}
	}
	add_event(R, c->open_at, WL_OPEN, 0, (uint8_t)i, 0);
	if (c->close_at)
		add_event(R, c->close_at, WL_CLOSE, 0, (uint8_t)i, 0);
	if (c->swap_at)
		add_event(R, c->swap_at, WL_SWAP, 0, (uint8_t)i, 0);
	return 0;
}

/* Paths, at the start (their outages are planned then); connections open later maybe. */
static int setup_paths(struct run *R, uint32_t i)
{
	struct conn *c = &R->conns[i];
	struct rng r = rng_for(R->p.seed, 4, i, 0);

	/* A connection with a no-progress limit may lose every path for longer than it. */
	bool blackout = R->p.mask & F_OUTAGE && (c->s[0].no_progress_ns || c->s[1].no_progress_ns) &&
			coin(&r, 30);
	uint64_t b_start = c->open_at + below(&r, WORK_NS), b_end = b_start + between(&r, 25 * MS, 40 * MS);

	if (blackout && b_end > R->last_fault_ns)
		R->last_fault_ns = b_end;
	for (uint32_t k = 0; k < c->n_paths; k++) {
		struct xp_link ab = make_link(R, &r, c->rc), ba = make_link(R, &r, c->rc);

		if (blackout) {
			ab.outage[ab.n_outages].start_ns = ba.outage[ba.n_outages].start_ns = b_start;
			ab.outage[ab.n_outages++].end_ns = ba.outage[ba.n_outages++].end_ns = b_end;
		}

		if (xp_net_add_path(R->net, c->s[0].host, c->s[1].host, &ab, &ba,
				    &c->s[0].handles[k], &c->s[1].handles[k]) < 0)
			return -1;
	}
	return 0;
}

static int open_conn(struct run *R, uint32_t i)
{
	struct conn *c = &R->conns[i];
	uint64_t now = xp_net_now(R->net);

	for (int s = 0; s < 2; s++) {
		struct xp_conn_config cc = { .n_paths = c->n_paths, .path_handles = c->s[s].handles,
					     .rc_mode = c->rc,
					     .no_progress_ns = c->s[s].no_progress_ns };
		int rc;

		cc.cc = binding_of(R, c, s);
		rc = xp_conn_create(xp_net_core(R->net, c->s[s].host), &cc, now, &c->s[s].id,
				    &c->s[s].nonce);
		if (rc < 0) {
			failf(R, "conn %u side %d: create: %s", i, s, strerror(-rc));
			return -1;
		}
	}
	for (int s = 0; s < 2; s++) {
		if (xp_conn_bind(xp_net_core(R->net, c->s[s].host), c->s[s].id, c->s[!s].id,
				 c->s[!s].nonce, c->s[!s].host, now) < 0)
			return -1;
		xp_net_kick(R->net, c->s[s].host);
	}
	c->opened = true;
	return 0;
}

/* Completions */

/* The connection and side a completion belongs to. */
static struct conn *find_conn(struct run *R, uint32_t host, uint32_t id, int *side)
{
	for (uint32_t i = 0; i < R->p.conns; i++)
		for (int s = 0; s < 2; s++)
			if (R->conns[i].opened && R->conns[i].s[s].host == host &&
			    R->conns[i].s[s].id == id && !R->conns[i].s[s].close_done) {
				*side = s;
				return &R->conns[i];
			}
	return NULL;
}

static bool conn_disturbed(const struct conn *c)
{
	return c->s[0].closed || c->s[1].closed || c->s[0].failed || c->s[1].failed;
}

/* May an operation on side @s of @c end with @status? */
static bool status_allowed(const struct conn *c, int s, const struct msg *m, int status)
{
	switch (status) {
	case 0:
		return true;
	case -EMSGSIZE:
		return m->len > m->cap;
	case -ECANCELED:
		return c->s[s].aborted;
	case -ECONNRESET:
		return conn_disturbed(c);
	case -ETIMEDOUT:
		return c->s[s].no_progress_ns != 0;
	default:
		return false;
	}
}

static bool all_ops_done(const struct conn *c)
{
	for (int d = 0; d < 2; d++)
		for (uint32_t j = 0; j < c->n_msgs[d]; j++) {
			const struct msg *m = &c->m[d][j];

			if ((m->send_posted && !m->send_done) || (m->recv_posted && !m->recv_done))
				return false;
		}
	return true;
}

static bool workload_posted(const struct run *R, uint32_t i)
{
	for (uint32_t k = R->next_ev; k < R->n_ev; k++)
		if (R->ev[k].conn == i && R->ev[k].kind <= WL_RECV)
			return false;
	return true;
}

static void check_recv(struct run *R, struct conn *c, uint32_t ci, int d, uint32_t j,
		       const struct xp_completion *comp)
{
	struct msg *m = &c->m[d][j];

	if (comp->status)
		return;
	if (m->len > m->cap)
		failf(R, "conn %u dir %d msg %u: a too-long message (%" PRIu64 " > %" PRIu64
			 ") was received", ci, d, j, m->len, m->cap);
	else if (comp->bytes != m->len)
		failf(R, "conn %u dir %d msg %u: received %" PRIu64 " bytes, sent %" PRIu64, ci, d, j,
		      (uint64_t)comp->bytes, m->len);
	else if (checksum(m->dst, m->len) != m->sum)
		failf(R, "conn %u dir %d msg %u: checksum mismatch (%" PRIu64 " bytes)", ci, d, j,
		      m->len);
	else
		for (uint64_t k = m->len; k < m->cap + TAIL_CHECK && k < m->len + TAIL_CHECK; k++)
			if (m->dst[k] != TAIL_BYTE) {
				failf(R, "conn %u dir %d msg %u: byte %" PRIu64 " past the message "
					 "was written", ci, d, j, k);
				break;
			}
}

static void on_op(struct run *R, struct conn *c, uint32_t ci, int s,
		  const struct xp_completion *comp)
{
	bool send = comp->kind == XP_COMP_SEND;
	uint32_t j = (uint32_t)(comp->cookie & 0xff);
	int d = send ? s : !s;
	struct msg *m;

	if ((comp->cookie >> 8) != (uint64_t)ci * 2 + (uint64_t)d || j >= c->n_msgs[d]) {
		failf(R, "conn %u: completion with a cookie never posted (%" PRIx64 ")", ci,
		      (uint64_t)comp->cookie);
		return;
	}
	m = &c->m[d][j];
	if (send ? (!m->send_posted || m->send_done++) : (!m->recv_posted || m->recv_done++)) {
		failf(R, "conn %u dir %d msg %u: %s completed twice or unposted", ci, d, j,
		      send ? "send" : "receive");
		return;
	}
	if (send)
		m->send_status = comp->status;
	else
		m->recv_status = comp->status;
	if (!status_allowed(c, s, m, comp->status)) {
		failf(R, "conn %u dir %d msg %u (%" PRIu64 " B, cap %" PRIu64 "): %s status %d (%s) "
			 "not allowed here", ci, d, j, m->len, m->cap, send ? "send" : "receive",
		      comp->status, strerror(-comp->status));
		return;
	}
	if (comp->status == -ECONNRESET || comp->status == -ETIMEDOUT || comp->status == -ECANCELED)
		c->s[s].failed = true;
	if (send && comp->status == 0) {
		if (m->recv_done != 1 || m->recv_status != 0)
			failf(R, "conn %u dir %d msg %u: send completed before its receive", ci, d, j);
		if (comp->bytes != m->len)
			failf(R, "conn %u dir %d msg %u: send says %" PRIu64 " bytes", ci, d, j,
			      (uint64_t)comp->bytes);
	}
	if (!send) {
		check_recv(R, c, ci, d, j, comp);
		xp_net_invalidate(R->net, c->s[s].host, m->rkey);
	}
}

static void on_complete(void *arg, struct xp_net *net, uint32_t host,
			const struct xp_completion *comp)
{
	struct run *R = arg;
	struct conn *c;
	uint32_t ci;
	int s;

	c = find_conn(R, host, comp->conn, &s);
	if (!c) {
		failf(R, "host %u: completion for connection %u, which is no test connection", host,
		      comp->conn);
		return;
	}
	ci = (uint32_t)(c - R->conns);
	if (comp->kind == XP_COMP_CLOSE) {
		c->s[s].close_done = true;
		c->s[s].close_comps++;
		return;
	}
	on_op(R, c, ci, s, comp);
	R->completed = true;
	/* A connection whose peer reset it must still be closed by its owner. */
	if ((comp->status == -ECONNRESET || comp->status == -ETIMEDOUT) && !c->s[s].closed)
		add_event(R, xp_net_now(net), WL_CLOSE_SIDE, (uint8_t)s, (uint8_t)ci, 0);
}

/* Workload */

static void close_side(struct run *R, struct conn *c, int s, bool abort_it)
{
	struct xp_core *core = xp_net_core(R->net, c->s[s].host);
	int rc;

	if (c->s[s].closed)
		return;
	c->s[s].closed = true;
	c->s[s].aborted = abort_it;
	rc = xp_conn_close(core, c->s[s].id, abort_it ? XP_CLOSE_ABORT : XP_CLOSE_GRACEFUL,
			   xp_net_now(R->net));
	if (rc < 0)
		failf(R, "conn %u side %d: close: %s", (unsigned)(c - R->conns), s, strerror(-rc));
	xp_net_kick(R->net, c->s[s].host);
}

static bool refusal_allowed(const struct conn *c, int s, int rc)
{
	if (rc == -ESHUTDOWN)
		return c->s[s].closed;
	if (rc == -ECONNRESET || rc == -ETIMEDOUT)
		return conn_disturbed(c);
	return false;
}

static void post(struct run *R, const struct wl_event *e)
{
	struct conn *c = &R->conns[e->conn];
	struct msg *m = &c->m[e->dir][e->idx];
	int s = e->kind == WL_SEND ? e->dir : !e->dir;
	struct xp_core *core = xp_net_core(R->net, c->s[s].host);
	uint64_t cookie = ((uint64_t)e->conn * 2 + e->dir) << 8 | e->idx;
	struct xp_buf b;
	int rc;

	/* Virtual addresses: the core (and the trace) never see where malloc put a buffer. */
	if (e->kind == WL_SEND) {
		b.len = m->len;
		b.key = xp_net_reg_virtual(R->net, c->s[s].host, m->src, m->len, &b.addr);
		rc = xp_post_send(core, c->s[s].id, &b, cookie, xp_net_now(R->net));
		m->send_posted = rc == 0;
	} else {
		b.len = m->cap;
		b.key = xp_net_reg_virtual(R->net, c->s[s].host, m->dst, m->cap, &b.addr);
		rc = xp_post_recv(core, c->s[s].id, &b, cookie, xp_net_now(R->net));
		m->recv_posted = rc == 0;
		m->rkey = b.key;
	}
	if (rc < 0 && !refusal_allowed(c, s, rc))
		failf(R, "conn %u dir %u msg %u: post %s refused: %s", e->conn, e->dir, e->idx,
		      e->kind == WL_RECV ? "recv" : "send", strerror(-rc));
	xp_net_kick(R->net, c->s[s].host);
}

static void swap_cc(struct run *R, struct conn *c)
{
	struct xp_core *core = xp_net_core(R->net, c->s[0].host);
	int rc;

	if (c->s[0].closed || c->s[0].failed)
		return;
	c->s[0].binding = c->s[0].binding < 0 ? 0 : -1;
	rc = xp_conn_set_cc(core, c->s[0].id, binding_of(R, c, 0), xp_net_now(R->net));
	if (rc < 0 && rc != -ENOENT)
		failf(R, "conn %u: CC swap: %s", (unsigned)(c - R->conns), strerror(-rc));
	xp_net_kick(R->net, c->s[0].host);
}

static void run_event(struct run *R, const struct wl_event *e)
{
	struct conn *c = &R->conns[e->conn];

	struct rng r = rng_for(R->p.seed, 6, e->conn, 0);

	switch (e->kind) {
	case WL_OPEN:
		if (open_conn(R, e->conn) < 0)
			failf(R, "conn %u: open failed", e->conn);
		break;
	case WL_SEND:
	case WL_RECV:
		if (c->opened)
			post(R, e);
		break;
	case WL_CLOSE: /* the other side follows a little later */
		close_side(R, c, c->close_side, c->close_abort);
		add_event(R, xp_net_now(R->net) + below(&r, 2 * MS), WL_CLOSE_SIDE,
			  (uint8_t)!c->close_side, e->conn, 0);
		break;
	case WL_SWAP:
		swap_cc(R, c);
		break;
	case WL_CLOSE_SIDE:
		close_side(R, c, e->dir, false);
		break;
	default:
		close_side(R, c, 0, false);
		close_side(R, c, 1, false);
		break;
	}
}

static void schedule_final_closes(struct run *R)
{
	for (uint32_t i = 0; i < R->p.conns; i++) {
		struct conn *c = &R->conns[i];

		if (c->final_close_scheduled || !c->opened || !workload_posted(R, i) ||
		    !all_ops_done(c))
			continue;
		c->final_close_scheduled = true;
		add_event(R, xp_net_now(R->net), WL_FINAL_CLOSE, 0, (uint8_t)i, 0);
	}
}

static bool everything_closed(const struct run *R)
{
	for (uint32_t i = 0; i < R->p.conns; i++)
		if (!R->conns[i].s[0].close_done || !R->conns[i].s[1].close_done)
			return false;
	return true;
}

/* Checks at the end */

static void check_final(struct run *R)
{
	for (uint32_t i = 0; i < R->p.conns && !R->fail[0]; i++) {
		struct conn *c = &R->conns[i];

		for (int s = 0; s < 2; s++)
			if (c->s[s].close_comps != 1)
				failf(R, "conn %u side %d: %u close completions", i, s,
				      c->s[s].close_comps);
		for (int d = 0; d < 2; d++)
			for (uint32_t j = 0; j < c->n_msgs[d]; j++) {
				struct msg *m = &c->m[d][j];

				if (m->send_posted != m->send_done || m->recv_posted != m->recv_done)
					failf(R, "conn %u dir %d msg %u: posted but not completed", i,
					      d, j);
				/* A connection left alone loses nothing. */
				if (!conn_disturbed(c) && m->len <= m->cap &&
				    (m->send_status || m->recv_status || !m->send_posted))
					failf(R, "conn %u dir %d msg %u: failed (%d/%d) on an "
						 "undisturbed connection", i, d, j, m->send_status,
					      m->recv_status);
			}
	}
	for (uint32_t h = 0; h < R->n_hosts && !R->fail[0]; h++) {
		struct xp_core_usage u;

		xp_core_usage(xp_net_core(R->net, h), &u);
		if (u.conns_open || u.conns_quarantined || u.send_msgs || u.recv_msgs || u.ops ||
		    u.in_flight_bytes || u.in_flight_chunks || u.timers_armed || u.paced ||
		    u.completions_pending)
			failf(R, "host %u leaks: open %u quarantined %u smsg %u rmsg %u ops %u "
				 "inflight %" PRIu64 "/%u timers %u paced %u comps %u",
			      h, u.conns_open, u.conns_quarantined, u.send_msgs, u.recv_msgs, u.ops,
			      u.in_flight_bytes, u.in_flight_chunks, u.timers_armed, u.paced,
			      u.completions_pending);
		for (int k = 0; k < N_BINDINGS && R->bind[h][k]; k++)
			if (xp_cc_pcm_flows_open(R->bind[h][k]))
				failf(R, "host %u binding %d: %u flows left open", h, k,
				      xp_cc_pcm_flows_open(R->bind[h][k]));
	}
	for (uint32_t i = 0; i < R->p.conns && !R->fail[0]; i++)
		for (int s = 0; s < 2; s++)
			if (R->conns[i].fixed[s].open_flows)
				failf(R, "conn %u side %d: fixed CC flows left open", i, s);
}

static void run_loop(struct run *R)
{
	uint64_t bound, events = 0;

	while (!R->fail[0]) {
		uint64_t t_net = xp_net_next_event(R->net);
		uint64_t t_wl = R->next_ev < R->n_ev ? R->ev[R->next_ev].t_ns : UINT64_MAX;

		if (t_net == UINT64_MAX && t_wl == UINT64_MAX)
			break;
		if (t_wl <= t_net) {
			struct wl_event e = R->ev[R->next_ev++];

			xp_net_run_until(R->net, e.t_ns);
			run_event(R, &e);
		} else {
			xp_net_step(R->net);
		}
		if (R->completed || t_wl <= t_net) {
			R->completed = false;
			schedule_final_closes(R);
		}
		if (R->ev_dirty) { /* events added at "now" go after the current one */
			qsort(R->ev + R->next_ev, R->n_ev - R->next_ev, sizeof(*R->ev), ev_cmp);
			R->ev_dirty = false;
		}
		bound = (R->last_work_ns > R->last_fault_ns ? R->last_work_ns : R->last_fault_ns) +
			SETTLE_BOUND_NS;
		if (xp_net_now(R->net) > bound && !everything_closed(R))
			failf(R, "stuck: not every connection closed %" PRIu64 " ms after the last "
				 "event or fault", SETTLE_BOUND_NS / MS);
		if (++events > MAX_EVENTS)
			failf(R, "stuck: %" PRIu64 " events without finishing", events);
	}
	if (!R->fail[0] && !everything_closed(R))
		failf(R, "stuck: the network went quiet with connections still open");
}

/* --verbose: where every connection and operation stands, and each core's counters. */
static void dump(const struct run *R)
{
	for (uint32_t i = 0; i < R->p.conns; i++) {
		const struct conn *c = &R->conns[i];

		printf("  conn %u: hosts %u->%u paths %u rc %d open@%" PRIu64 " close@%" PRIu64
		       " side %d abort %d swap@%" PRIu64 "\n",
		       i, c->s[0].host, c->s[1].host, c->n_paths, c->rc, c->open_at, c->close_at,
		       c->close_side, c->close_abort, c->swap_at);
		for (int s = 0; s < 2; s++)
			printf("    side %d: id %u binding %d cwnd %" PRIu64 " rate %" PRIu64
			       " closed %d aborted %d failed %d close_done %d no_progress %" PRIu64 "\n",
			       s, c->s[s].id, c->s[s].binding, c->fixed[s].cwnd_bytes, c->fixed[s].rate,
			       c->s[s].closed, c->s[s].aborted, c->s[s].failed, c->s[s].close_done,
			       c->s[s].no_progress_ns);
		for (int d = 0; d < 2; d++)
			for (uint32_t j = 0; j < c->n_msgs[d]; j++) {
				const struct msg *m = &c->m[d][j];

				printf("    dir %d msg %u: len %" PRIu64 " cap %" PRIu64 " send@%" PRIu64
				       " posted %d done %d st %d | recv posted %d done %d st %d\n",
				       d, j, m->len, m->cap, m->t_send, m->send_posted, m->send_done,
				       m->send_status, m->recv_posted, m->recv_done, m->recv_status);
			}
	}
	for (uint32_t h = 0; h < R->n_hosts; h++) {
		const struct xp_core_stats *st = xp_core_stats(xp_net_core(R->net, h));

		printf("  host %u: sent %" PRIu64 " retx %" PRIu64 " rto %" PRIu64 " tlp %" PRIu64
		       " rack %" PRIu64 " acks tx %" PRIu64 " rx %" PRIu64 " ctrl tx %" PRIu64
		       " rx %" PRIu64 "\n   drops:",
		       h, st->chunks_sent, st->chunks_retx, st->rto_fires, st->tlp_fires,
		       st->rack_losses, st->ack_records_tx, st->ack_records_rx, st->ctrl_packets_tx,
		       st->ctrl_packets_rx);
		for (unsigned k = 0; k < XP_DROP_COUNT; k++)
			if (st->drops[k])
				printf(" %s=%" PRIu64, xp_drop_name(k), st->drops[k]);
		printf("\n");
	}
	printf("  now %" PRIu64 " ns, last work %" PRIu64 ", last fault %" PRIu64 "\n",
	       xp_net_now(R->net), R->last_work_ns, R->last_fault_ns);
}

static bool verbose;

/* What a sweep exercised, summed over its runs. */
struct totals {
	uint64_t runs;
	uint64_t ops_ok;
	uint64_t ops_failed[5]; /* EMSGSIZE, ECANCELED, ECONNRESET, ETIMEDOUT, other */
	uint64_t bytes_received;
	uint64_t chunks_sent;
	uint64_t chunks_retx;
	uint64_t rto;
	uint64_t tlp;
	uint64_t rack;
	uint64_t lost;
	uint64_t duplicated;
	uint64_t rkey_drops;
	uint64_t drops;
	uint64_t digest; /* of every run's trace: equal across builds of the same code */
};

static struct totals totals;
static bool counting = true; /* not while re-running a seed for the determinism check */

static void count_run(const struct run *R)
{
	const struct xp_net_stats *ns = xp_net_stats(R->net);

	totals.runs++;
	for (uint32_t i = 0; i < R->p.conns; i++)
		for (int d = 0; d < 2; d++)
			for (uint32_t j = 0; j < R->conns[i].n_msgs[d]; j++) {
				const struct msg *m = &R->conns[i].m[d][j];
				int st[2] = { m->send_posted ? m->send_status : 1,
					      m->recv_posted ? m->recv_status : 1 };

				for (int k = 0; k < 2; k++) {
					if (st[k] == 1)
						continue;
					if (!st[k])
						totals.ops_ok++;
					else
						totals.ops_failed[st[k] == -EMSGSIZE ? 0 :
								  st[k] == -ECANCELED ? 1 :
								  st[k] == -ECONNRESET ? 2 :
								  st[k] == -ETIMEDOUT ? 3 : 4]++;
				}
				if (m->recv_posted && !m->recv_status)
					totals.bytes_received += m->len;
			}
	for (uint32_t h = 0; h < R->n_hosts; h++) {
		const struct xp_core_stats *st = xp_core_stats(xp_net_core(R->net, h));

		totals.chunks_sent += st->chunks_sent;
		totals.chunks_retx += st->chunks_retx;
		totals.rto += st->rto_fires;
		totals.tlp += st->tlp_fires;
		totals.rack += st->rack_losses;
		for (unsigned k = 0; k < XP_DROP_COUNT; k++)
			totals.drops += st->drops[k];
	}
	totals.digest = (totals.digest ^ xp_net_trace_hash(R->net)) * 0x100000001b3ull;
	totals.lost += ns->lost;
	totals.duplicated += ns->duplicated;
	totals.rkey_drops += ns->rkey_drops;
}

static void print_totals(void)
{
	printf("dst_core: %" PRIu64 " runs, %" PRIu64 " operations ok, failed: %" PRIu64
	       " too long, %" PRIu64 " cancelled, %" PRIu64 " reset, %" PRIu64 " timed out, %" PRIu64
	       " other; %.1f MB received; %" PRIu64 " chunks sent, %" PRIu64 " retransmitted (%"
	       PRIu64 " RACK losses, %" PRIu64 " TLP, %" PRIu64 " RTO); network: %" PRIu64
	       " lost, %" PRIu64 " duplicated, %" PRIu64 " refused by rkey; %" PRIu64
	       " inputs dropped by the cores; trace digest %016" PRIx64 "\n",
	       totals.runs, totals.ops_ok, totals.ops_failed[0], totals.ops_failed[1],
	       totals.ops_failed[2], totals.ops_failed[3], totals.ops_failed[4],
	       (double)totals.bytes_received / 1e6, totals.chunks_sent, totals.chunks_retx,
	       totals.rack, totals.tlp, totals.rto, totals.lost, totals.duplicated,
	       totals.rkey_drops, totals.drops, totals.digest);
}

static void free_run(struct run *R)
{
	for (uint32_t i = 0; i < MAX_CONNS; i++)
		for (int d = 0; d < 2; d++)
			for (uint32_t j = 0; j < R->conns[i].n_msgs[d]; j++) {
				free(R->conns[i].m[d][j].src);
				free(R->conns[i].m[d][j].dst);
			}
	xp_net_destroy(R->net);
	for (uint32_t h = 0; h < MAX_HOSTS; h++)
		for (int k = 0; k < N_BINDINGS; k++)
			xp_cc_pcm_destroy(R->bind[h][k]);
	free(R->ev);
}

/* Return: 0 if the run held every invariant; fills @trace with its trace hash. */
static int run_case(const struct params *p, uint64_t *trace, char *why, size_t why_len)
{
	struct xp_net_config ncfg = { .seed = p->seed, .on_complete = on_complete };
	struct run *R = calloc(1, sizeof(*R));
	struct rng r = rng_for(p->seed, 0, 0, 0);
	int rc;

	if (!R)
		abort();
	R->p = *p;
	ncfg.arg = R;
	R->n_hosts = 2 + (uint32_t)below(&r, 2);
	if (xp_net_create(&ncfg, &R->net) < 0)
		abort();
	for (uint32_t h = 0; h < R->n_hosts && !R->fail[0]; h++) {
		struct xp_core_config cfg;

		tune_core(R, h, &cfg);
		if (xp_net_add_host(R->net, &cfg) < 0)
			failf(R, "host %u: core create failed", h);
		if (R->p.mask & F_PCM)
			make_bindings(R, h);
	}
	for (uint32_t a = 0; a < R->n_hosts; a++)
		for (uint32_t b = 0; b < R->n_hosts; b++) {
			struct rng lr = rng_for(p->seed, 5, a, b);
			struct xp_link l = make_link(R, &lr, false);

			if (a != b)
				xp_net_set_ctrl(R->net, a, b, &l);
		}
	for (uint32_t i = 0; i < p->conns && !R->fail[0]; i++) {
		plan_conn(R, i);
		if (plan_msgs(R, i) < 0 || setup_paths(R, i) < 0)
			failf(R, "conn %u: setup failed", i);
	}
	qsort(R->ev, R->n_ev, sizeof(*R->ev), ev_cmp);
	R->ev_dirty = false;
	if (!R->fail[0])
		run_loop(R);
	if (!R->fail[0])
		check_final(R);
	if (R->fail[0] && verbose)
		dump(R);
	if (!R->fail[0] && counting)
		count_run(R);
	*trace = xp_net_trace_hash(R->net);
	rc = R->fail[0] ? -1 : 0;
	snprintf(why, why_len, "%s", R->fail);
	free_run(R);
	free(R);
	return rc;
}

/* Driver: sweep, reproduce, shrink */

static void print_case(FILE *f, const char *argv0, const struct params *p)
{
	fprintf(f, "%s --seed %" PRIu64 " --conns %u --msgs %u --mask 0x%x", argv0, p->seed,
		p->conns, p->msgs, p->mask);
}

static void print_mask(FILE *f, uint32_t mask)
{
	for (unsigned b = 0; b < sizeof(mask_names) / sizeof(mask_names[0]); b++)
		if (mask & (1u << b))
			fprintf(f, " %s", mask_names[b]);
}

static bool fails(const struct params *p)
{
	char why[512];
	uint64_t t;

	return run_case(p, &t, why, sizeof(why)) < 0;
}

/* Greedy: keep any smaller variant that still fails, until none does. */
static struct params shrink(struct params p)
{
	bool progress = true;

	while (progress) {
		progress = false;
		for (uint32_t c = 1; c < p.conns && !progress; c++) {
			struct params q = p;

			q.conns = c;
			if (fails(&q))
				p = q, progress = true;
		}
		for (uint32_t m = 0; m < p.msgs && !progress; m++) {
			struct params q = p;

			q.msgs = m;
			if (fails(&q))
				p = q, progress = true;
		}
		for (unsigned b = 0; b < 11 && !progress; b++) {
			struct params q = p;

			if (!(p.mask & (1u << b)))
				continue;
			q.mask &= ~(1u << b);
			if (fails(&q))
				p = q, progress = true;
		}
	}
	return p;
}

static int report_failure(const char *argv0, const struct params *p, const char *why, bool do_shrink)
{
	struct params s;
	char why2[512];
	uint64_t t;

	printf("DST FAIL: %s\n  reproduce: ", why);
	print_case(stdout, argv0, p);
	printf("\n");
	if (!do_shrink)
		return 1;
	s = shrink(*p);
	run_case(&s, &t, why2, sizeof(why2));
	printf("  shrunk to: ");
	print_case(stdout, argv0, &s);
	printf("   (faults:");
	print_mask(stdout, s.mask);
	printf(")\n  %s\n", why2);
	fflush(stdout);
	return 1;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s --seeds A:B [--conns C] [--msgs M] [--mask X] [--determinism N]"
		" [--no-shrink] [--verbose]\n"
		"       %s --seed S --conns C --msgs M --mask X [--verbose]\n",
		argv0, argv0);
}

int main(int argc, char **argv)
{
	uint64_t first = 0, last = 0, det_every = 0;
	uint32_t max_conns = 4, msgs = 6, mask = F_ALL;
	bool single = false, do_shrink = true, conns_given = false;
	uint64_t failures = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--no-shrink")) {
			do_shrink = false;
			continue;
		}
		if (!strcmp(a, "--verbose")) {
			verbose = true;
			continue;
		}
		if (!v) {
			usage(argv[0]);
			return 2;
		}
		i++;
		if (!strcmp(a, "--seeds")) {
			if (sscanf(v, "%" SCNu64 ":%" SCNu64, &first, &last) != 2 || last <= first) {
				usage(argv[0]);
				return 2;
			}
		} else if (!strcmp(a, "--seed")) {
			first = strtoull(v, NULL, 0);
			last = first + 1;
			single = true;
		} else if (!strcmp(a, "--conns")) {
			max_conns = (uint32_t)strtoul(v, NULL, 0);
			conns_given = true;
		} else if (!strcmp(a, "--msgs")) {
			msgs = (uint32_t)strtoul(v, NULL, 0);
		} else if (!strcmp(a, "--mask")) {
			mask = (uint32_t)strtoul(v, NULL, 0) & F_ALL;
		} else if (!strcmp(a, "--determinism")) {
			det_every = strtoull(v, NULL, 0);
		} else {
			usage(argv[0]);
			return 2;
		}
	}
	if (max_conns < 1 || max_conns > MAX_CONNS || msgs > MAX_MSGS / 6 || last <= first) {
		usage(argv[0]);
		return 2;
	}
	for (uint64_t seed = first; seed < last; seed++) {
		struct rng r = rng_for(seed, 9, 0, 0);
		struct params p = { .seed = seed, .msgs = msgs, .mask = mask };
		char why[512];
		uint64_t t1, t2;

		/* In a sweep each seed draws its connection count; a case names it exactly. */
		p.conns = single || conns_given ? max_conns : 1 + (uint32_t)below(&r, max_conns);
		if (single)
			p.conns = max_conns;
		if (run_case(&p, &t1, why, sizeof(why)) < 0) {
			failures += (uint64_t)report_failure(argv[0], &p, why, do_shrink);
			if (failures >= 3)
				break;
			continue;
		}
		if (det_every && seed % det_every == 0) {
			int rc2;

			counting = false;
			rc2 = run_case(&p, &t2, why, sizeof(why));
			counting = true;
			if (rc2 < 0 || t1 != t2) {
				printf("DST FAIL: the same seed gave another trace (%" PRIx64 " vs %" PRIx64
				       ")\n  reproduce: ", t1, t2);
				print_case(stdout, argv[0], &p);
				printf("\n");
				failures++;
			}
		}
	}
	print_totals();
	printf("dst_core: seeds %" PRIu64 "..%" PRIu64 ": %" PRIu64 " failed\n", first, last - 1,
	       failures);
	return failures ? 1 : 0;
}
