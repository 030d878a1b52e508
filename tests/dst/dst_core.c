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
 * and, as the mask allows, connections opened and closed (gracefully or
 * not) in the middle of traffic, messages longer than their receive,
 * RC-mode connections, PCM policies (sync and async) and live CC swaps
 * (to another binding, or in place within one), tiny pools, MTUs and pacer
 * wheels,
 * control records dropped, duplicated or delayed by their kind (ACK, CTS,
 * FIN, RESET, ...), forged records (unknown ids, wrong or stale nonces,
 * another peer, a CTS before the bind, bytes that are no packet, valid
 * packets with one byte changed, cut short or grown; chunks' immediates
 * with a length no datapath reports; records with a field out of range,
 * which the writer must refuse),
 * connections closed and opened again on a few ids (ids reused after
 * quarantine), drains into tiny batches (few actions, writes and control
 * bytes per drain), calls beyond the limits (sends too long; -EAGAIN when
 * the queue is full, retried; core configs with a field out of range, bad
 * paths, calls on ids not open, bad PCM bindings and swaps, CC ops tables
 * with an op missing, calls in each state of a connection's life, each
 * refused with its error; a PCM binding driven to max_flows through its
 * ops, dst_pcm.h), a host that goes away (its process exits, so
 * its engine resets its peers, or it is killed silently), writes the
 * datapath fails, and allocations that fail (on a core and PCM bindings of
 * their own: each made with its k-th allocation failing, k = 1.. until it is
 * made, and flows opened until one fails; each refused with -ENOMEM and
 * nothing leaked, dst_alloc.h). 15% of runs are calm: links with fixed
 * delays only.
 *
 * Invariants, on every run:
 *   - a receive that completes with success holds exactly its message:
 *     length and checksum, and nothing written past it;
 *   - a send that completes with success has its receive completed already;
 *   - every operation posted completes exactly once, with 0 or the error its
 *     situation allows (-EMSGSIZE for a too-long message, -ECANCELED after a
 *     local abort, -ECONNRESET once a side closed or reset, -ETIMEDOUT with a
 *     no-progress limit or a peer gone, -EIO after a failed write); a
 *     connection nobody disturbed loses nothing;
 *   - bounds: on an undisturbed connection every operation completes within
 *     HEAL_BOUND_NS of the later of its posts and the last fault's end; on a
 *     connection whose peer's host went away, within its no-progress limit
 *     of the death (or of the dead host's last packet still on the wire);
 *   - a connection with no fault on any link (paths of different delays,
 *     chunks sprayed over them) retransmits nothing;
 *   - no chunk is sent a third time without an RTO or a probe of its sender
 *     since its second transmission (RACK never marks a chunk lost again
 *     while its retransmission is out: dst_watch.h);
 *   - nothing stuck: every connection is closed on both sides within a
 *     bound of virtual time after the last workload event and fault;
 *   - nothing leaked: afterwards every live core's accounting is zero (open
 *     and quarantined connections, pools, bytes in flight, timers, pacer,
 *     pending completions) and every CC binding's flows are closed;
 *   - the same seed gives the same trace (checked with --determinism).
 *
 * A failing run prints one line that reproduces it, then the shrinker tries
 * fewer connections, fewer messages and fewer fault kinds while it still
 * fails, and prints the smallest failing case's line.
 *
 *   dst_core --seeds 0:2000              sweep (suite dst; 100000 in slow)
 *   dst_core --seed 17 --conns 3 --msgs 5 --mask 0x7ffff  one case
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
#include "dst_alloc.h"
#include "dst_pcm.h"
#include "dst_watch.h"
#include "imm.h"
#include "pcm.h"
#include "wire.h"
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
	F_SMALL = 1 << 10,  /* tiny pools, control MTU, chunks and pacer wheel */
	F_CTRL = 1 << 11,   /* control records dropped, duplicated or delayed by their kind */
	F_FORGE = 1 << 12,  /* forged records: unknown ids, wrong nonces and peers, before the bind */
	F_REUSE = 1 << 13,  /* connections closed and opened again: ids reused after quarantine */
	F_BATCH = 1 << 14,  /* drains into tiny batches: few actions, writes, control bytes */
	F_LIMITS = 1 << 15, /* calls beyond the limits: too long, queue full, bad configs and ids */
	F_KILL = 1 << 16,   /* a host goes away: its process exits (RESET) or is killed */
	F_WERR = 1 << 17,   /* the datapath fails writes */
	F_NOMEM = 1 << 18,  /* allocations failing: cores and PCM bindings made, flows opened */
	N_MASK_BITS = 19,
	F_ALL = (1 << N_MASK_BITS) - 1,
};

static const char *const mask_names[N_MASK_BITS] = {
	"loss", "dup", "reorder", "spikes", "outage", "ecn", "open_close", "too_long", "rc", "pcm",
	"small", "ctrl", "forge", "reuse", "batch", "limits", "kill", "werr", "nomem",
};

#define MAX_CONNS 8
#define MAX_MSGS 48 /* per direction: chatty connections reuse every message slot */
#define MAX_HOSTS 3
#define N_BINDINGS 4
#define US 1000ull
#define MS 1000000ull
#define WORK_NS (6 * MS)          /* workload events fall in [0, WORK_NS) */
#define SETTLE_BOUND_NS (3000 * MS) /* done within this after the last event or fault */
#define HEAL_BOUND_NS (1500 * MS) /* an operation completes within this after its post or the
				    * last fault's end, whichever is later */
#define DEFAULT_LIMIT_NS (1000 * MS) /* the longest default no-progress limit of the cores */
#define KILL_SLACK_NS (2 * MS)    /* a dead peer is reported within its limit and this */
#define MAX_EVENTS 40000000ull
#define N_REC_TYPES 13            /* control record types 1..12 */

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
	uint64_t send_posted_ns;
	uint64_t recv_posted_ns;
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
	uint32_t old_nonce; /* the previous incarnation's (F_REUSE), for forgeries */
	bool bound;
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
	uint32_t gen;      /* incarnation (F_REUSE: opened again after both sides closed) */
	uint32_t n_gen;
	bool werr;         /* its paths may fail writes */
	bool lossless;     /* no fault on any of its links: it must retransmit nothing */
	bool on_dead_host; /* a side's host went away */
	uint64_t bind_delay_ns; /* side 0 binds this long after the open (F_FORGE) */
	bool never;        /* it could not open: a host it joins went away first */
	uint32_t next_post[2][2]; /* [send/recv][dir]: the next message to post, in order */
};

enum wl_kind {
	WL_OPEN = 0,        /* create and bind both sides */
	WL_SEND,
	WL_RECV,
	WL_CLOSE,           /* one side closes in the middle of traffic */
	WL_SWAP,            /* live CC swap on side 0 */
	WL_CLOSE_SIDE,      /* one side closes (after its peer did, or was reset) */
	WL_FINAL_CLOSE,     /* both sides close once every operation finished */
	WL_BIND,            /* side 0 binds, after its peer (F_FORGE: records before the bind) */
	WL_FORGE,           /* forged control input to one host */
	WL_KILL,            /* a host goes away */
	WL_REOPEN,          /* a connection closed on both sides opens again (F_REUSE) */
};

struct wl_event {
	uint64_t t_ns;
	uint8_t kind; /* enum wl_kind */
	uint8_t dir;
	uint8_t conn;
	uint8_t idx;
	uint8_t gen;  /* the connection's generation it was made for (F_REUSE) */
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
	struct dst_watch *watch;
	bool calm;          /* no link faults at all: lossless connections */
	uint32_t kill_host;
	uint64_t kill_at;   /* 0: no host goes away */
	bool kill_exit;     /* its process exits (RESET to its peers), else it is killed */
	bool killed;
	uint32_t ctrl_drop_ppm[N_REC_TYPES]; /* F_CTRL: per record type */
	uint32_t ctrl_dup_ppm[N_REC_TYPES];
	uint32_t ctrl_delay_ppm[N_REC_TYPES];
	uint64_t ctrl_delay_ns;
	uint64_t ctrl_rng;
	uint64_t worst_heal_ns; /* the latest completion after max(post, last fault end) */
	uint32_t ghosts[MAX_HOSTS]; /* CLOSE completions of half-opened connections to come */
	bool ctrl_faulty[MAX_HOSTS][MAX_HOSTS]; /* the control link may lose or reorder a record */
	uint64_t forged;
	uint32_t lossless_checked; /* connections checked to retransmit nothing */
	struct xp_cc_fixed spare;  /* F_LIMITS: the binding of misuse_conn()'s connection */
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
	if (!(R->p.mask & F_OUTAGE) || !coin(r, 30) || R->calm)
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
	if (R->calm) { /* a calm run: nothing on any link but its delay (and ECN marks) */
		l.jitter_ns = 0;
		l.spike_ppm = 0;
	}
	if (reliable) {
		l.reliable = true;
		return l;
	}
	if (R->p.mask & F_LOSS && coin(r, 80))
		l.loss_ppm = (uint32_t)between(r, 0, 100000);
	if (R->p.mask & F_DUP && coin(r, 50))
		l.dup_ppm = (uint32_t)between(r, 0, 20000);
	if (R->calm)
		l.loss_ppm = l.dup_ppm = 0;
	add_outages(R, r, &l);
	return l;
}

/* Whether @l may lose, duplicate, reorder or delay a packet beyond its fixed delay. */
static bool link_faulty(const struct xp_link *l)
{
	return l->loss_ppm || l->dup_ppm || l->jitter_ns || l->spike_ppm || l->n_outages ||
	       l->werr_ppm;
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

/* Events of the workload proper: the settle bound runs from the last one. */
static bool is_work(uint8_t kind)
{
	return kind <= WL_SWAP || kind >= WL_BIND;
}

static void add_event(struct run *R, uint64_t t, uint8_t kind, uint8_t dir, uint8_t conn,
		      uint8_t idx)
{
	if (R->n_ev == R->cap_ev) {
		R->cap_ev = R->cap_ev ? 2 * R->cap_ev : 256;
		R->ev = realloc(R->ev, R->cap_ev * sizeof(*R->ev));
		if (!R->ev)
			abort();
	}
	R->ev[R->n_ev++] = (struct wl_event){ t, kind, dir, conn, idx,
					      (uint8_t)R->conns[conn].gen };
	R->ev_dirty = true;
	if (is_work(kind) && t > R->last_work_ns)
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

extern const struct pcm_package pcm_pkg_xp_tick; /* pkg/xp_tick.yaml: a timer trigger */

/* The packages a live swap within a binding moves a flow to: these, and xp_tick. */
static const char *const swap_to[] = { "newreno", "swift", "cubic", "dctcp" };

#define N_SWAP_TO (sizeof(swap_to) / sizeof(swap_to[0]) + 1)

static const struct pcm_package *swap_pkg(size_t i)
{
	return i < N_SWAP_TO - 1 ? builtin(swap_to[i]) : &pcm_pkg_xp_tick;
}

/* Room in a binding for every package a swap moves to and for "reps" (NULL-terminated). */
static const struct pcm_package *const *swap_room(void)
{
	static const struct pcm_package *room[N_SWAP_TO + 2];

	for (size_t i = 0; i < N_SWAP_TO; i++)
		room[i] = swap_pkg(i);
	room[N_SWAP_TO] = builtin("reps");
	return room;
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
		if (k == 0) /* room for every package swap_in_place() moves to */
			cfg.room_for = swap_room();
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
	struct rng r = rng_for(R->p.seed, 1, host, 0), lim = rng_for(R->p.seed, 24, host, 0);
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
	/* The default no-progress limit: well inside the settle bound, far beyond any outage. */
	cfg->no_progress_ns = between(&lim, 200 * MS, 1000 * MS);
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
	/* A tiny pacer wheel: paced chunks' gaps wrap it (more than one revolution ahead). */
	{
		struct rng w = rng_for(R->p.seed, 28, host, 0);

		if (R->p.mask & F_SMALL && coin(&w, 30)) {
			cfg->pacer_slots = 64;
			cfg->pacer_tick_ns = between(&w, 16, 256);
		}
	}
	/* The control MTU is the datapath's: one value for every host of a run. */
	{
		struct rng m = rng_for(R->p.seed, 7, 0, 0);

		if (R->p.mask & F_SMALL && coin(&m, 30))
			cfg->ctrl_mtu = (uint32_t)between(&m, 64, 200);
	}
	/* A few ids, a short quarantine: connections opened again reuse ids. */
	if (R->p.mask & F_REUSE) {
		cfg->max_conns = 4;
		cfg->rto_max_ns = 1 * MS;
		cfg->quarantine_ns = 4 * cfg->rto_max_ns;
	}
	if (R->p.mask & F_LIMITS) {
		struct rng q = rng_for(R->p.seed, 11, host, 0);

		cfg->max_queued = (uint32_t)between(&q, 1, 4);
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
	{
		struct rng w = rng_for(R->p.seed, 13, i, 0), g = rng_for(R->p.seed, 18, i, 0);
		struct rng b = rng_for(R->p.seed, 17, i, 0);

		c->werr = R->p.mask & F_WERR && coin(&w, 30) && !R->calm;
		c->n_gen = R->p.mask & F_REUSE && coin(&g, 50) ? (uint32_t)between(&g, 2, 3) : 1;
		if (R->p.mask & F_FORGE && coin(&b, 50))
			c->bind_delay_ns = between(&b, 1, 100 * US);
	}
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
			coin(&r, 30) && !R->calm;
	uint64_t b_start = c->open_at + below(&r, WORK_NS), b_end = b_start + between(&r, 25 * MS, 40 * MS);

	if (blackout && b_end > R->last_fault_ns)
		R->last_fault_ns = b_end;
	c->lossless = !blackout && !c->close_at;
	for (uint32_t k = 0; k < c->n_paths; k++) {
		struct xp_link ab = make_link(R, &r, c->rc), ba = make_link(R, &r, c->rc);
		struct rng w = rng_for(R->p.seed, 13, i, k + 1);

		if (c->werr)
			ab.werr_ppm = ba.werr_ppm = (uint32_t)between(&w, 100, 3000);
		if (link_faulty(&ab) || link_faulty(&ba))
			c->lossless = false;
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

static int bind_side(struct run *R, struct conn *c, int s)
{
	int rc = xp_conn_bind(xp_net_core(R->net, c->s[s].host), c->s[s].id, c->s[!s].id,
			      c->s[!s].nonce, c->s[!s].host, xp_net_now(R->net));

	if (rc < 0 && rc != -ESHUTDOWN)
		return rc; /* closed or aborted before its bind: nothing to bind */
	c->s[s].bound = rc == 0;
	xp_net_kick(R->net, c->s[s].host);
	return 0;
}

/*
 * Create both sides and bind them (side 0 maybe later: F_FORGE's window for records before the
 * bind). Return: 0, 1 when a host has no id out of quarantine yet (F_REUSE: try again), -1.
 */
static int open_conn(struct run *R, uint32_t i)
{
	struct conn *c = &R->conns[i];
	uint64_t now = xp_net_now(R->net);

	if (xp_net_dead(R->net, c->s[0].host) || xp_net_dead(R->net, c->s[1].host))
		return 2; /* never: a host it joins is gone */
	for (int s = 0; s < 2; s++) {
		struct xp_conn_config cc = { .n_paths = c->n_paths, .path_handles = c->s[s].handles,
					     .rc_mode = c->rc,
					     .no_progress_ns = c->s[s].no_progress_ns };
		int rc;

		cc.cc = binding_of(R, c, s);
		c->s[s].old_nonce = c->s[s].nonce;
		rc = xp_conn_create(xp_net_core(R->net, c->s[s].host), &cc, now, &c->s[s].id,
				    &c->s[s].nonce);
		if (rc == -ENOSPC && R->p.mask & F_REUSE) {
			if (s == 1) /* undo side 0 */
			{
				xp_conn_close(xp_net_core(R->net, c->s[0].host), c->s[0].id,
					      XP_CLOSE_ABORT, now);
				R->ghosts[c->s[0].host]++;
				xp_net_kick(R->net, c->s[0].host);
			}
			return 1;
		}
		if (rc < 0) {
			failf(R, "conn %u side %d: create: %s", i, s, strerror(-rc));
			return -1;
		}
		dst_watch_conn_new(R->watch, i, c->s[s].host, c->s[s].id);
	}
	c->opened = true;
	if (bind_side(R, c, 1) < 0)
		return -1;
	if (c->bind_delay_ns) {
		add_event(R, now + c->bind_delay_ns, WL_BIND, 0, (uint8_t)i, 0);
		return 0;
	}
	return bind_side(R, c, 0) < 0 ? -1 : 0;
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
	return c->s[0].closed || c->s[1].closed || c->s[0].failed || c->s[1].failed || c->werr ||
	       c->on_dead_host;
}

/* May an operation on side @s of @c end with @status? */
static bool status_allowed(const struct conn *c, int s, const struct msg *m, int status)
{
	switch (status) {
	case 0:
		return true;
	case -EMSGSIZE:
		return m->len > m->cap;
	case -ECANCELED: /* an abort, or a close before the bind: no peer to finish with */
		return c->s[s].aborted || (c->s[s].closed && !c->s[s].bound);
	case -ECONNRESET:
		return conn_disturbed(c);
	case -ETIMEDOUT: /* a limit of its own, or a peer that closed or went away (its RESET lost) */
		return c->s[s].no_progress_ns != 0 || conn_disturbed(c);
	case -EIO:
		return c->werr;
	default:
		return false;
	}
}

/* A side whose host went away: its operations never complete, nothing of it is checked. */
static bool side_gone(const struct run *R, const struct conn *c, int s)
{
	return xp_net_dead(R->net, c->s[s].host);
}

/* The no-progress limit of side @s. */
static uint64_t limit_of(const struct run *R, const struct conn *c, int s)
{
	struct xp_conn_info info;

	if (c->s[s].no_progress_ns)
		return c->s[s].no_progress_ns;
	if (xp_conn_info(xp_net_core(R->net, c->s[s].host), c->s[s].id, &info) == 0)
		return info.no_progress_ns;
	return DEFAULT_LIMIT_NS;
}

static bool all_ops_done(const struct run *R, const struct conn *c)
{
	for (int d = 0; d < 2; d++)
		for (uint32_t j = 0; j < c->n_msgs[d]; j++) {
			const struct msg *m = &c->m[d][j];

			if ((m->send_posted && !m->send_done && !side_gone(R, c, d)) ||
			    (m->recv_posted && !m->recv_done && !side_gone(R, c, !d)))
				return false;
		}
	return true;
}

static bool workload_posted(const struct run *R, uint32_t i)
{
	for (uint32_t k = R->next_ev; k < R->n_ev; k++)
		if (R->ev[k].conn == i && (R->ev[k].kind <= WL_RECV || R->ev[k].kind == WL_BIND))
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

/*
 * The bounds an operation completes within: on a connection whose peer's host went away, one
 * no-progress limit after the latest of the death, the post and the arrival of the dead host's
 * last packet; on a connection nobody disturbed, HEAL_BOUND_NS after the later of the
 * message's posts (both sides) and the end of the run's last fault.
 */
static void check_bounds(struct run *R, struct conn *c, uint32_t ci, int s, const struct msg *m,
			 bool send)
{
	uint64_t now = xp_net_now(R->net), posted = send ? m->send_posted_ns : m->recv_posted_ns;
	uint64_t from;

	if (c->on_dead_host && R->killed && !side_gone(R, c, s)) {
		/* from its death, or the last of its packets that were still on the wire then */
		uint64_t last = xp_net_last_arrival(R->net, R->kill_host, c->s[s].host);

		from = posted > R->kill_at ? posted : R->kill_at;
		if (last > from)
			from = last;
		if (now > from + limit_of(R, c, s) + KILL_SLACK_NS)
			failf(R, "conn %u side %d: a %s finished %" PRIu64 " us after its peer's host "
				 "went away (or its last packet arrived), beyond the no-progress "
				 "limit (%" PRIu64 " us)", ci, s,
			      send ? "send" : "receive", (now - from) / US, limit_of(R, c, s) / US);
		return;
	}
	if (conn_disturbed(c))
		return; /* closed, reset or failed: its limit bounds it (the settle bound checks) */
	from = m->send_posted_ns > m->recv_posted_ns ? m->send_posted_ns : m->recv_posted_ns;
	if (R->last_fault_ns > from)
		from = R->last_fault_ns;
	if (now > from && now - from > R->worst_heal_ns)
		R->worst_heal_ns = now - from;
	if (now > from + HEAL_BOUND_NS)
		failf(R, "conn %u side %d: a %s finished %" PRIu64 " ms after the later of its posts "
			 "and the last fault's end (bound %" PRIu64 " ms)", ci, s,
		      send ? "send" : "receive", (now - from) / MS, HEAL_BOUND_NS / MS);
}

static void on_op(struct run *R, struct conn *c, uint32_t ci, int s,
		  const struct xp_completion *comp)
{
	bool send = comp->kind == XP_COMP_SEND;
	uint32_t j = (uint32_t)(comp->cookie & 0xff);
	int d = send ? s : !s;
	struct msg *m;

	if ((comp->cookie >> 8) != ((uint64_t)c->gen << 8 | ((uint64_t)ci * 2 + (uint64_t)d)) ||
	    j >= c->n_msgs[d]) {
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
	if (comp->status == -ECONNRESET || comp->status == -ETIMEDOUT || comp->status == -ECANCELED ||
	    comp->status == -EIO)
		c->s[s].failed = true;
	check_bounds(R, c, ci, s, m, send);
	if (send) /* its sender is done with it: the slot's next message may go */
		dst_watch_msg_done(R->watch, ci, c->s[!s].host, c->s[!s].id,
				   j & (XP_MSG_SLOTS - 1));
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
	if (!c && comp->kind == XP_COMP_CLOSE && R->ghosts[host]) {
		R->ghosts[host]--; /* a half-open connection undone (open_conn()) */
		return;
	}
	if (!c) {
		failf(R, "host %u: completion for connection %u, which is no test connection", host,
		      comp->conn);
		return;
	}
	ci = (uint32_t)(c - R->conns);
	if (comp->kind == XP_COMP_CLOSE) {
		c->s[s].close_done = true;
		c->s[s].close_comps++;
		if (c->s[!s].close_done && c->gen + 1 < c->n_gen)
			add_event(R, xp_net_now(net) + MS, WL_REOPEN, 0, (uint8_t)ci, 0);
		return;
	}
	on_op(R, c, ci, s, comp);
	R->completed = true;
	/* A connection whose peer reset it (or that failed) must still be closed by its owner. */
	if ((comp->status == -ECONNRESET || comp->status == -ETIMEDOUT || comp->status == -EIO) &&
	    !c->s[s].closed)
		add_event(R, xp_net_now(net), WL_CLOSE_SIDE, (uint8_t)s, (uint8_t)ci, 0);
}

/* Workload */

static void check_conn(struct run *R, uint32_t i);

static void close_side(struct run *R, struct conn *c, int s, bool abort_it)
{
	struct xp_core *core = xp_net_core(R->net, c->s[s].host);
	int rc;

	if (c->s[s].closed)
		return;
	c->s[s].closed = true;
	c->s[s].aborted = abort_it;
	if (side_gone(R, c, s))
		return;
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
	if (rc == -ENOENT) /* closed, and its quarantine is over: the id names nothing now */
		return c->s[s].close_done;
	if (rc == -ECONNRESET || rc == -ETIMEDOUT || rc == -EIO)
		return conn_disturbed(c);
	return false;
}

/* F_LIMITS: a send longer than the core's largest message is refused at once, and leaves nothing. */
static void post_too_long(struct run *R, struct conn *c, int s, const struct wl_event *e)
{
	struct xp_core *core = xp_net_core(R->net, c->s[s].host);
	struct xp_buf big = { 1ull << 40, xp_core_max_msg_bytes(core) + 1, 1 };
	struct rng r = rng_for(R->p.seed, 19, e->conn, (uint64_t)e->dir << 8 | e->idx);
	int rc;

	if (!(R->p.mask & F_LIMITS) || !coin(&r, 10))
		return;
	rc = xp_post_send(core, c->s[s].id, &big, ~0ull, xp_net_now(R->net));
	if (rc != -EMSGSIZE && !refusal_allowed(c, s, rc))
		failf(R, "conn %u dir %u: a send of %" PRIu64 " bytes (over the limit) returned %d",
		      e->conn, e->dir, big.len, rc);
}

/*
 * Post message e->idx's send or receive. Posts go in order (receive k takes message k): one
 * whose predecessor waits goes after it, and one the core refuses with -EAGAIN (its queue or
 * pool is full) is tried again a little later.
 */
static void post(struct run *R, const struct wl_event *e)
{
	struct conn *c = &R->conns[e->conn];
	struct msg *m = &c->m[e->dir][e->idx];
	bool send = e->kind == WL_SEND;
	int s = send ? e->dir : !e->dir;
	struct xp_core *core = xp_net_core(R->net, c->s[s].host);
	uint64_t cookie = ((uint64_t)c->gen << 8 | ((uint64_t)e->conn * 2 + e->dir)) << 8 | e->idx;
	uint32_t *next = &c->next_post[!send][e->dir];
	uint64_t now = xp_net_now(R->net);
	struct xp_buf b;
	int rc;

	if (side_gone(R, c, s)) {
		(*next)++;
		return; /* its host is gone: nothing is posted there any more */
	}
	if (e->idx < *next)
		return; /* posted already (an earlier generation's retry) */
	if (e->idx > *next) {
		add_event(R, now + 10 * US, e->kind, e->dir, e->conn, e->idx);
		return;
	}
	if (send)
		post_too_long(R, c, s, e);
	/* Virtual addresses: the core (and the trace) never see where malloc put a buffer. */
	if (send) {
		b.len = m->len;
		b.key = xp_net_reg_virtual(R->net, c->s[s].host, m->src, m->len, &b.addr);
		rc = xp_post_send(core, c->s[s].id, &b, cookie, now);
		m->send_posted = rc == 0;
		m->send_posted_ns = now;
	} else {
		b.len = m->cap;
		b.key = xp_net_reg_virtual(R->net, c->s[s].host, m->dst, m->cap, &b.addr);
		rc = xp_post_recv(core, c->s[s].id, &b, cookie, now);
		m->recv_posted = rc == 0;
		m->recv_posted_ns = now;
		m->rkey = b.key;
	}
	if (rc == -EAGAIN) {
		add_event(R, now + 20 * US, e->kind, e->dir, e->conn, e->idx);
		return;
	}
	(*next)++;
	if (rc < 0 && !refusal_allowed(c, s, rc))
		failf(R, "conn %u dir %u msg %u: post %s refused: %s", e->conn, e->dir, e->idx,
		      send ? "send" : "recv", strerror(-rc));
	xp_net_kick(R->net, c->s[s].host);
}

/*
 * A live swap within the connection's PCM binding (xp_cc_pcm_flow_swap(): the flow's state is
 * handed over); Return: false when the binding has no room for the package (then the swap
 * moves the connection to another binding instead).
 */
static bool swap_in_place(struct run *R, struct conn *c, struct rng *r)
{
	struct xp_core *core = xp_net_core(R->net, c->s[0].host);
	struct xp_cc_pcm *p = R->bind[c->s[0].host][c->s[0].binding];
	uint64_t now = xp_net_now(R->net);
	struct xp_conn_info info;
	struct pcm_diag diag;
	int rc;

	if (xp_conn_info(core, c->s[0].id, &info) < 0)
		return true;
	/* none of these may change anything: a flow not open, no CC package */
	if (xp_cc_pcm_flow_swap(p, UINT32_MAX, builtin("newreno"), NULL, now, &diag) != -ENOENT ||
	    xp_cc_pcm_flow_swap(p, info.cc_flow, NULL, NULL, now, &diag) != -EINVAL)
		failf(R, "conn %u: a bad in-place swap was not refused", (unsigned)(c - R->conns));
	/* with an LB package added, kept, or taken away */
	rc = xp_cc_pcm_flow_swap(p, info.cc_flow, swap_pkg(below(r, N_SWAP_TO)),
				 coin(r, 50) ? builtin("reps") : NULL, now, &diag);
	if (rc == -E2BIG)
		return false;
	if (rc < 0)
		failf(R, "conn %u: in-place swap: %s", (unsigned)(c - R->conns), diag.msg);
	else
		xp_conn_cc_refresh(core, c->s[0].id, now);
	xp_net_kick(R->net, c->s[0].host);
	return true;
}

static void swap_cc(struct run *R, struct conn *c)
{
	struct xp_core *core = xp_net_core(R->net, c->s[0].host);
	struct rng r = rng_for(R->p.seed, 20, (uint64_t)(c - R->conns), c->gen);
	int rc;

	if (c->s[0].closed || c->s[0].failed || side_gone(R, c, 0))
		return;
	if (c->s[0].binding >= 0 && coin(&r, 50) && swap_in_place(R, c, &r))
		return;
	c->s[0].binding = c->s[0].binding < 0 ? 0 : -1;
	rc = xp_conn_set_cc(core, c->s[0].id, binding_of(R, c, 0), xp_net_now(R->net));
	if (rc < 0 && rc != -ENOENT)
		failf(R, "conn %u: CC swap: %s", (unsigned)(c - R->conns), strerror(-rc));
	xp_net_kick(R->net, c->s[0].host);
}

/* F_FORGE: a record body that passes the static checks, so it reaches the identity checks. */
static void forge_body(struct rng *r, struct xp_rec *rec)
{
	switch (rec->type) {
	case XP_REC_ACK:
		rec->u.ack.msg_seq = (uint32_t)below(r, 40);
		rec->u.ack.cum = (uint16_t)below(r, 64);
		rec->u.ack.sack = coin(r, 50) ? next(r) : 0;
		rec->u.ack.complete = !rec->u.ack.sack && coin(r, 30);
		rec->u.ack.echo_valid = coin(r, 50);
		rec->u.ack.echo_chunk = rec->u.ack.echo_valid ? (uint16_t)below(r, 64) : 0;
		rec->u.ack.dup_seen = coin(r, 20);
		break;
	case XP_REC_CTS:
		rec->u.cts.msg_seq = (uint32_t)below(r, 40);
		rec->u.cts.rkey = (uint32_t)next(r);
		rec->u.cts.raddr = 1ull << 40;
		rec->u.cts.cap = below(r, 1 << 20);
		break;
	case XP_REC_FIN:
		rec->u.fin.sends_total = (uint32_t)below(r, 40);
		rec->u.fin.recvs_total = (uint32_t)below(r, 40);
		break;
	case XP_REC_RESET:
		rec->u.reason = (uint32_t)between(r, 1, XP_RESET_REASON_END - 1);
		break;
	default:
		rec->u.msg_seq = (uint32_t)below(r, 40);
		break;
	}
}

/*
 * A packet made wrong in one place: a byte changed (a header field, a record's type, size or
 * reserved bits, a field out of range), cut short, or grown by a byte. Return: its length.
 */
static uint32_t mutate(struct rng *r, uint8_t *buf, uint32_t len)
{
	uint32_t at = (uint32_t)below(r, len);

	switch (below(r, 4)) {
	case 0:
		return at;
	case 1:
		buf[len] = (uint8_t)next(r);
		return len + 1;
	case 2: /* the header, or a record's head */
		at = (uint32_t)below(r, len < 16 ? len : 16);
		break;
	default:
		break;
	}
	buf[at] ^= (uint8_t)between(r, 1, 255);
	return len;
}

/* A connection with a side on @host (0 when none: then only the kinds that need none go). */
static struct conn *forge_victim(struct run *R, struct rng *r, uint32_t host, int *side)
{
	uint32_t k0 = (uint32_t)below(r, R->p.conns);

	for (uint32_t k = 0; k < R->p.conns; k++) {
		struct conn *c = &R->conns[(k0 + k) % R->p.conns];

		for (int s = 0; s < 2 && c->opened; s++)
			if (c->s[s].host == host) {
				*side = s;
				return c;
			}
	}
	return NULL;
}

/*
 * F_FORGE: a chunk's immediate, on a path of a connection of host @h, that no datapath could
 * report: a length of 0 for a chunk that is not an empty message's only one, or one above
 * XP_CHUNK_BYTES_MAX. Whatever its slot, index and last flag, the core must drop it, or take it
 * as the duplicate or late chunk it names (re-ACKed, as a duplicate from the network is). A
 * connection with no fault on its links sees no duplicate, so it is left alone.
 */
static void forge_chunk(struct run *R, uint32_t h, uint32_t idx)
{
	struct rng r = rng_for(R->p.seed, 26, idx, h);
	struct xp_imm f;
	uint32_t len, imm;
	struct conn *c;
	int s = 0, rc;

	if (!coin(&r, 50))
		return;
	c = forge_victim(R, &r, h, &s);
	if (!c || c->lossless)
		return;
	f.conn = coin(&r, 10) ? XP_MAX_CONNS - 1 : (uint16_t)c->s[s].id; /* an id past max_conns */
	f.slot = (uint8_t)below(&r, XP_MSG_SLOTS);
	f.chunk = (uint16_t)below(&r, 80);
	f.last = coin(&r, 30);
	f.parity = coin(&r, 50);
	len = coin(&r, 50) && !(f.chunk == 0 && f.last) ? 0
							: XP_CHUNK_BYTES_MAX + 1 + (uint32_t)below(&r, 4096);
	imm = xp_imm_encode(&f);
	rc = xp_core_on_chunk(xp_net_core(R->net, h), imm, len,
			      c->s[s].handles[below(&r, c->n_paths)], false, xp_net_now(R->net));
	if (rc == 0)
		failf(R, "host %u: a forged chunk (imm 0x%08x, %u bytes) was taken", h, imm, len);
	R->forged++;
	xp_net_kick(R->net, h);
}

/* The record type field @k of break_field() belongs to (0 and 1: any, @any). */
static uint8_t broken_type(unsigned k, uint8_t any)
{
	static const uint8_t types[] = { XP_REC_ACK, XP_REC_ACK, XP_REC_ACK, XP_REC_ACK,
					 XP_REC_CTS, XP_REC_RESET, XP_REC_RESET };

	return k >= 2 ? types[k - 2] : any;
}

/* Field @k of @rec set out of its range (0..8: nonce, id, ACK fields, CTS span, RESET reason). */
static void break_field(struct xp_rec *rec, unsigned k)
{
	switch (k) {
	case 0: rec->nonce = 0; break;
	case 1: rec->conn = XP_MAX_CONNS; break;
	case 2: rec->u.ack.cum = XP_MAX_CHUNKS + 1; break;
	case 3: rec->u.ack.cum = XP_MAX_CHUNKS - 8; rec->u.ack.sack = 1ull << 20; break;
	case 4: rec->u.ack.echo_valid = true; rec->u.ack.echo_chunk = XP_MAX_CHUNKS; break;
	case 5: rec->u.ack.complete = true; rec->u.ack.sack = 1; break;
	case 6: rec->u.cts.raddr = UINT64_MAX - 8; rec->u.cts.cap = 64; break;
	case 7: rec->u.reason = 0; break;
	default: rec->u.reason = XP_RESET_REASON_END; break;
	}
}

#define N_BROKEN_FIELDS 9

/* F_FORGE: a record with a field out of range, which the wire's writer must refuse to encode. */
static void forge_broken(struct run *R, uint32_t h, uint32_t idx)
{
	struct rng r = rng_for(R->p.seed, 27, idx, h);
	uint8_t buf[XP_WIRE_MAX_MTU];
	struct xp_wire_writer w;
	struct xp_rec rec;
	unsigned k;

	if (!coin(&r, 20))
		return;
	k = (unsigned)below(&r, N_BROKEN_FIELDS);
	memset(&rec, 0, sizeof(rec));
	rec.type = broken_type(k, (uint8_t)between(&r, 1, XP_REC_TYPE_END - 1));
	forge_body(&r, &rec);
	rec.conn = (uint16_t)below(&r, XP_MAX_CONNS);
	rec.nonce = (uint32_t)next(&r) | 1;
	break_field(&rec, k);
	xp_wire_begin(&w, buf, sizeof(buf));
	if (xp_wire_put(&w, &rec) != -EINVAL)
		failf(R, "a record with field %u out of range was encoded", k);
}

/*
 * F_FORGE: control input to host e->dir that its identity checks must refuse: a record for an
 * unknown id, one with a live id and a wrong (or the previous incarnation's) nonce, one with
 * the right id and nonce from another peer (before the bind, a CTS from another peer than the
 * bind names), or bytes that are no packet. None may change anything: the data invariants
 * catch one that does.
 */
static void forge(struct run *R, const struct wl_event *e)
{
	struct rng r = rng_for(R->p.seed, 21, e->idx, e->dir);
	uint32_t h = e->dir, from = 7; /* no host: another peer */
	uint8_t buf[XP_WIRE_MAX_MTU];
	struct xp_wire_writer w;
	struct xp_rec rec;
	struct conn *c;
	uint32_t len;
	int s = 0;

	if (xp_net_dead(R->net, h))
		return;
	forge_chunk(R, h, e->idx);
	forge_broken(R, h, e->idx);
	c = forge_victim(R, &r, h, &s);
	memset(&rec, 0, sizeof(rec));
	rec.type = (uint8_t)between(&r, 1, XP_REC_TYPE_END - 1);
	forge_body(&r, &rec);
	rec.conn = (uint16_t)below(&r, XP_MAX_CONNS);
	rec.nonce = (uint32_t)next(&r) | 1;
	if (c) {
		switch (below(&r, 4)) {
		case 0: /* a wrong nonce */
			rec.conn = (uint16_t)c->s[s].id;
			rec.nonce = c->s[s].nonce ^ (uint32_t)between(&r, 1, 0xffff);
			break;
		case 1: /* the previous incarnation's nonce */
			rec.conn = (uint16_t)c->s[s].id;
			if (c->s[s].old_nonce && c->s[s].old_nonce != c->s[s].nonce)
				rec.nonce = c->s[s].old_nonce;
			break;
		case 2: /* right id and nonce, another peer; a CTS most often (the pre-bind case) */
			rec.conn = (uint16_t)c->s[s].id;
			rec.nonce = c->s[s].nonce;
			if (coin(&r, 60)) {
				rec.type = XP_REC_CTS;
				forge_body(&r, &rec);
			}
			for (uint32_t k = 0; k < R->n_hosts; k++)
				if (k != h && k != c->s[!s].host)
					from = k;
			break;
		default: /* an unknown id (or a random one) */
			break;
		}
	}
	xp_wire_begin(&w, buf, sizeof(buf));
	if (coin(&r, 10)) { /* not even a packet */
		len = (uint32_t)below(&r, 64);
		for (uint32_t i = 0; i < len; i++)
			buf[i] = (uint8_t)next(&r);
	} else if (xp_wire_put(&w, &rec) == 0) {
		len = xp_wire_finish(&w);
		if (coin(&r, 30))
			len = mutate(&r, buf, len);
	} else {
		return;
	}
	xp_core_on_ctrl(xp_net_core(R->net, h), from, buf, len, xp_net_now(R->net));
	R->forged++;
	xp_net_kick(R->net, h);
}

/*
 * F_KILL: host R->kill_host goes away. Its process exiting aborts its connections first (the
 * engine's teardown: each peer gets RESET); a killed one just stops. Either way every
 * operation of its peers must finish within their no-progress limit (check_bounds()).
 */
static void kill_host(struct run *R)
{
	uint32_t h = R->kill_host;

	for (uint32_t i = 0; i < R->p.conns; i++) {
		struct conn *c = &R->conns[i];

		for (int s = 0; s < 2; s++) {
			if (c->s[s].host != h)
				continue;
			c->on_dead_host = true;
			if (R->kill_exit && c->opened && !c->s[s].closed)
				close_side(R, c, s, true);
		}
	}
	xp_net_kill(R->net, h);
	R->killed = true;
}

/* Open connection e->conn, again later while a host has no id out of quarantine. */
static void open_or_retry(struct run *R, const struct wl_event *e)
{
	int rc = open_conn(R, e->conn);

	if (rc == 1)
		add_event(R, xp_net_now(R->net) + MS, WL_OPEN, 0, e->conn, 0);
	else if (rc == 2)
		R->conns[e->conn].never = true;
	else if (rc < 0)
		failf(R, "conn %u: open failed", e->conn);
}

/*
 * F_REUSE: connection e->conn closed on both sides; its generation is checked, and it opens
 * again (new ids, maybe reused ones, with new nonces) to carry its messages once more.
 */
static void reopen(struct run *R, const struct wl_event *e)
{
	struct conn *c = &R->conns[e->conn];
	uint64_t now = xp_net_now(R->net);

	check_conn(R, e->conn);
	if (R->fail[0] || c->on_dead_host)
		return;
	c->gen++;
	for (int s = 0; s < 2; s++) {
		struct side *sd = &c->s[s];

		sd->closed = sd->aborted = sd->close_done = sd->failed = sd->bound = false;
		sd->close_comps = 0;
	}
	for (int d = 0; d < 2; d++) {
		c->next_post[0][d] = c->next_post[1][d] = 0;
		for (uint32_t j = 0; j < c->n_msgs[d]; j++) {
			struct msg *m = &c->m[d][j];

			m->send_posted = m->recv_posted = false;
			m->send_done = m->recv_done = 0;
			m->send_status = m->recv_status = 0;
			memset(m->dst, TAIL_BYTE, m->cap + TAIL_CHECK);
			add_event(R, now + (m->t_send - c->open_at), WL_SEND, (uint8_t)d, e->conn,
				  (uint8_t)j);
			add_event(R, now + (m->t_recv - c->open_at), WL_RECV, (uint8_t)d, e->conn,
				  (uint8_t)j);
		}
	}
	c->opened = false;
	c->final_close_scheduled = false;
	add_event(R, now, WL_OPEN, 0, e->conn, 0);
}

/*
 * A connection with no fault on any of its links (paths of different delays, chunks sprayed
 * over them) retransmits nothing: RACK judges each chunk by its own path, and the probe waits
 * for the slowest path.
 */
static void check_lossless(struct run *R, uint32_t i)
{
	struct conn *c = &R->conns[i];

	if (!c->lossless || conn_disturbed(c))
		return;
	R->lossless_checked++;
	for (int s = 0; s < 2; s++) {
		struct xp_conn_info info;

		if (xp_conn_info(xp_net_core(R->net, c->s[s].host), c->s[s].id, &info) == 0 &&
		    info.chunks_retx)
			failf(R, "conn %u side %d: %" PRIu64 " chunks retransmitted over %u lossless "
				 "paths", i, s, info.chunks_retx, c->n_paths);
	}
}

static void run_event(struct run *R, const struct wl_event *e)
{
	struct conn *c = &R->conns[e->conn];

	struct rng r = rng_for(R->p.seed, 6, e->conn, 0);

	if (e->kind != WL_FORGE && e->kind != WL_KILL && (e->gen != (uint8_t)c->gen || c->never))
		return; /* made for an earlier generation, or one that never opens */
	if (!c->opened && e->kind != WL_OPEN && e->kind != WL_FORGE && e->kind != WL_KILL &&
	    e->kind != WL_REOPEN) {
		/* its open waits for an id out of quarantine */
		add_event(R, xp_net_now(R->net) + 100 * US, e->kind, e->dir, e->conn, e->idx);
		return;
	}
	switch (e->kind) {
	case WL_OPEN:
		open_or_retry(R, e);
		break;
	case WL_BIND:
		if (c->opened && !c->s[0].bound && !c->s[0].closed && !side_gone(R, c, 0) &&
		    bind_side(R, c, 0) < 0)
			failf(R, "conn %u: bind failed", e->conn);
		break;
	case WL_FORGE:
		forge(R, e);
		break;
	case WL_KILL:
		kill_host(R);
		break;
	case WL_REOPEN:
		reopen(R, e);
		break;
	case WL_SEND:
	case WL_RECV:
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
		check_lossless(R, e->conn);
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
		    !all_ops_done(R, c))
			continue;
		c->final_close_scheduled = true;
		add_event(R, xp_net_now(R->net), WL_FINAL_CLOSE, 0, (uint8_t)i, 0);
	}
}

static bool everything_closed(const struct run *R)
{
	for (uint32_t i = 0; i < R->p.conns; i++) {
		const struct conn *c = &R->conns[i];

		for (int s = 0; s < 2 && !c->never; s++)
			if (!c->s[s].close_done && !side_gone(R, c, s))
				return false;
		if (c->gen + 1 < c->n_gen && !c->never && !c->on_dead_host)
			return false; /* it opens again */
	}
	return true;
}

/* Checks at the end */

/* One connection's generation: every operation completed once; one close per side. */
static void check_conn(struct run *R, uint32_t i)
{
	struct conn *c = &R->conns[i];

	if (c->never)
		return;
	for (int s = 0; s < 2; s++)
		if (c->s[s].close_comps != 1 && !side_gone(R, c, s))
			failf(R, "conn %u side %d: %u close completions", i, s, c->s[s].close_comps);
	for (int d = 0; d < 2; d++)
		for (uint32_t j = 0; j < c->n_msgs[d]; j++) {
			struct msg *m = &c->m[d][j];

			if ((m->send_posted != m->send_done && !side_gone(R, c, d)) ||
			    (m->recv_posted != m->recv_done && !side_gone(R, c, !d)))
				failf(R, "conn %u dir %d msg %u: posted but not completed", i, d, j);
			/* A connection left alone loses nothing. */
			if (!conn_disturbed(c) && m->len <= m->cap &&
			    (m->send_status || m->recv_status || !m->send_posted))
				failf(R, "conn %u dir %d msg %u: failed (%d/%d) on an undisturbed "
					 "connection", i, d, j, m->send_status, m->recv_status);
		}
}

static void check_final(struct run *R)
{
	for (uint32_t i = 0; i < R->p.conns && !R->fail[0]; i++)
		check_conn(R, i);
	for (uint32_t h = 0; h < R->n_hosts && !R->fail[0]; h++) {
		struct xp_core_usage u;

		if (xp_net_dead(R->net, h))
			continue; /* gone with everything it held */
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
			if (R->conns[i].fixed[s].open_flows && !side_gone(R, &R->conns[i], s))
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
		{
			struct xp_core_usage u;

			xp_core_usage(xp_net_core(R->net, h), &u);
			printf("\n   usage: open %u quarantined %u ops %u timers %u%s", u.conns_open,
			       u.conns_quarantined, u.ops, u.timers_armed,
			       xp_net_dead(R->net, h) ? " (gone)" : "");
		}
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
	uint64_t forged;
	uint32_t lossless_checked; /* connections checked to retransmit nothing */
	uint64_t kills;
	uint64_t write_errors;
	uint64_t reincarnations;
	uint64_t lossless_conns;
	uint64_t worst_heal_ns;
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
	totals.forged += R->forged;
	totals.kills += R->killed;
	totals.write_errors += ns->write_errors;
	totals.lossless_conns += R->lossless_checked;
	for (uint32_t i = 0; i < R->p.conns; i++)
		totals.reincarnations += R->conns[i].gen;
	if (R->worst_heal_ns > totals.worst_heal_ns)
		totals.worst_heal_ns = R->worst_heal_ns;
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
	printf("dst_core: %" PRIu64 " forged inputs, %" PRIu64 " hosts gone, %" PRIu64
	       " write errors, %" PRIu64 " connections opened again, %" PRIu64
	       " lossless connections (none retransmitted); latest completion after the later of "
	       "its posts and the last fault: %.1f ms (bound %" PRIu64 " ms)\n",
	       totals.forged, totals.kills, totals.write_errors, totals.reincarnations,
	       totals.lossless_conns, (double)totals.worst_heal_ns / 1e6,
	       (uint64_t)(HEAL_BOUND_NS / MS));
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
	dst_watch_destroy(R->watch);
	for (uint32_t h = 0; h < MAX_HOSTS; h++)
		for (int k = 0; k < N_BINDINGS; k++)
			xp_cc_pcm_destroy(R->bind[h][k]);
	free(R->ev);
}

/* F_LIMITS: calls beyond the limits */

/* A core config with one field out of its range (@k picks which). */
static void break_config(struct xp_core_config *cfg, unsigned k)
{
	switch (k) {
	case 0: cfg->max_conns = 0; break;
	case 1: cfg->max_conns = XP_MAX_CONNS + 1; break;
	case 2: cfg->max_paths = 0; break;
	case 3: cfg->max_paths = XP_MAX_PATHS + 1; break;
	case 4: cfg->send_msgs = 0; break;
	case 5: cfg->recv_msgs = 0; break;
	case 6: cfg->ops = 0; break;
	case 7: cfg->ops = UINT32_MAX; break; /* XP_NONE */
	case 8: cfg->max_queued = 0; break;
	case 9: cfg->chunk_bytes = 0; break;
	case 10: cfg->chunk_bytes = XP_CHUNK_BYTES_MAX + 1; break;
	case 11: cfg->min_chunk_bytes = 0; break;
	case 12: cfg->min_chunk_bytes = cfg->chunk_bytes + 1; break;
	case 13: cfg->ctrl_mtu = XP_WIRE_MIN_MTU - 1; break;
	case 14: cfg->ctrl_mtu = XP_WIRE_MAX_MTU + 1; break;
	case 15: cfg->burst_chunks = 0; break;
	case 16: cfg->rto_min_ns = 0; break;
	case 17: cfg->rto_min_ns = cfg->rto_max_ns + 1; break;
	case 18: cfg->rto_initial_ns = 0; break;
	case 19: cfg->quarantine_ns = 4 * cfg->rto_max_ns - 1; break;
	case 20: cfg->line_rate_bps = 0; break;
	default: cfg->pacer_tick_ns = 0; break;
	}
}

#define N_BROKEN_CONFIGS 22

/* An ops table with op @k missing (k = 10: no name; 11: no table at all). */
static const struct xp_cc_ops *broken_ops(struct xp_cc_ops *o, unsigned k)
{
	*o = xp_cc_fixed_ops;
	switch (k) {
	case 0: o->info = NULL; break;
	case 1: o->flow_open = NULL; break;
	case 2: o->flow_close = NULL; break;
	case 3: o->on_ack = NULL; break;
	case 4: o->on_loss = NULL; break;
	case 5: o->on_rto = NULL; break;
	case 6: o->on_tx = NULL; break;
	case 7: o->tick = NULL; break;
	case 8: o->read = NULL; break;
	case 9: o->name = NULL; break;
	default: return NULL;
	}
	return o;
}

#define N_BROKEN_OPS 11

/* A binding with no room for another flow. */
static int refuse_flow(void *ctx, uint64_t flow_seed, uint64_t now_ns, uint32_t *flow)
{
	(void)ctx;
	(void)flow_seed;
	(void)now_ns;
	(void)flow;
	return -ENOSPC;
}

/* One record of @type to connection @id (nonce @nonce) of @core from @peer; Return: applied. */
static int feed_rec(struct xp_core *core, uint32_t peer, uint32_t id, uint32_t nonce,
		    uint8_t type, uint32_t a, uint32_t b)
{
	uint8_t buf[XP_WIRE_MAX_MTU];
	struct xp_wire_writer w;
	struct xp_rec rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = type;
	rec.conn = (uint16_t)id;
	rec.nonce = nonce;
	if (type == XP_REC_FIN) {
		rec.u.fin.sends_total = a;
		rec.u.fin.recvs_total = b;
	} else if (type == XP_REC_CTS) {
		rec.u.cts.raddr = 1ull << 40;
		rec.u.cts.cap = a;
	}
	xp_wire_begin(&w, buf, sizeof(buf));
	if (xp_wire_put(&w, &rec) < 0)
		return -1;
	return xp_core_on_ctrl(core, peer, buf, xp_wire_finish(&w), 0);
}

/*
 * Records from the peer itself that a connection's lifecycle checks must refuse or answer, on
 * misuse_conn()'s second connection @id: before the bind, a CTS from a second peer; bound to peer 0
 * (id 1, nonce 1), a FIN naming fewer messages than were delivered, then a good FIN, then ones
 * that disagree with it, then the same one again (its FIN_ACK was lost), a FIN_ACK with no FIN
 * sent; then it closes. The drop counters say which were refused.
 */
static void misuse_records(struct run *R, struct xp_core *core, uint32_t id, uint32_t nonce)
{
	const struct xp_core_stats *st = xp_core_stats(core);
	uint64_t bad = st->drops[XP_DROP_FIN_BAD], peer = st->drops[XP_DROP_REC_WRONG_PEER];

	feed_rec(core, 3, id, nonce, XP_REC_CTS, 64, 0);
	feed_rec(core, 4, id, nonce, XP_REC_CTS, 64, 0);
	if (st->drops[XP_DROP_REC_WRONG_PEER] != peer + 1)
		failf(R, "a CTS before the bind from a second peer was taken");
	if (xp_conn_bind(core, id, 1, 1, 0, 0) < 0)
		failf(R, "misuse: bind");
	feed_rec(core, 0, id, nonce, XP_REC_FIN, UINT32_MAX, 0);
	feed_rec(core, 0, id, nonce, XP_REC_FIN, 0, 0);
	feed_rec(core, 0, id, nonce, XP_REC_FIN, 1, 0);
	feed_rec(core, 0, id, nonce, XP_REC_FIN, 0, 1);
	feed_rec(core, 0, id, nonce, XP_REC_FIN, 0, 0);
	feed_rec(core, 0, id, nonce, XP_REC_FIN_ACK, 0, 0);
	if (st->drops[XP_DROP_FIN_BAD] != bad + 3)
		failf(R, "FINs that disagree: %" PRIu64 " refused of 3",
		      st->drops[XP_DROP_FIN_BAD] - bad);
	if (xp_conn_close(core, id, XP_CLOSE_GRACEFUL, 0) < 0)
		failf(R, "misuse: a close after the peer's FIN");
}

/*
 * misuse_conn()'s connection @id (nonce @nonce, binding @b) through its life, each call with
 * the answer its state gives: write errors for another id and incarnation ignored, a swap, the
 * default no-progress limit back, sends with no buffer or one that wraps, a bind (and a second
 * one refused), a graceful close (and a second one refused), an abort on top, the peer's
 * RESET_ACKs, then every call a closed connection refuses.
 */
static void misuse_lifecycle(struct run *R, struct xp_core *core, uint32_t id, uint32_t nonce,
			     const struct xp_cc_binding *b)
{
	struct xp_conn_info info;
	int rc;

	xp_core_on_write_done(core, (uint64_t)nonce << 32 | (id + 1), -EIO, 0);
	xp_core_on_write_done(core, (uint64_t)(nonce ^ 1) << 32 | id, -EIO, 0);
	if ((rc = xp_conn_set_cc(core, id, *b, 0)) < 0 ||
	    (rc = xp_conn_set_no_progress(core, id, 0, 0)) < 0)
		failf(R, "a call on a live connection: %s", strerror(-rc));
	if ((rc = xp_post_send(core, id, NULL, 0, 0)) != -EINVAL ||
	    (rc = xp_post_send(core, id, &(struct xp_buf){ UINT64_MAX - 8, 64, 1 }, 0, 0)) != -EINVAL)
		failf(R, "a send with no buffer or one that wraps: %d", rc);
	if ((rc = xp_conn_bind(core, id, 1, 1, 0, 0)) < 0 ||
	    (rc = xp_conn_info(core, id, &info)) < 0)
		failf(R, "a bind, info on a live connection: %d", rc);
	if ((rc = xp_conn_bind(core, id, 1, 1, 0, 0)) != -EALREADY)
		failf(R, "a second bind: %d", rc);
	if ((rc = xp_conn_close(core, id, XP_CLOSE_GRACEFUL, 0)) < 0)
		failf(R, "a close: %d", rc);
	if ((rc = xp_conn_close(core, id, XP_CLOSE_GRACEFUL, 0)) != -EALREADY)
		failf(R, "a second close: %d", rc);
	if ((rc = xp_conn_close(core, id, XP_CLOSE_ABORT, 0)) < 0)
		failf(R, "an abort on top: %d", rc);
	{
		const struct xp_core_stats *st = xp_core_stats(core);
		uint64_t unexpected = st->drops[XP_DROP_REC_UNEXPECTED];

		feed_rec(core, 0, id, nonce, XP_REC_RESET_ACK, 0, 0); /* answers the abort's RESET */
		feed_rec(core, 0, id, nonce, XP_REC_RESET_ACK, 0, 0); /* a second one: unexpected */
		feed_rec(core, 0, id, nonce, XP_REC_KEEPALIVE, 0, 0); /* answered with a RESET */
		xp_core_on_write_done(core, (uint64_t)nonce << 32 | id, -EIO, 0); /* closed: none */
		if (st->drops[XP_DROP_REC_UNEXPECTED] != unexpected + 1)
			failf(R, "RESET_ACKs to an aborted connection: %" PRIu64 " unexpected of 1",
			      st->drops[XP_DROP_REC_UNEXPECTED] - unexpected);
	}
	if ((rc = xp_conn_bind(core, id, 1, 1, 0, 0)) != -ESHUTDOWN ||
	    (rc = xp_conn_set_cc(core, id, *b, 0)) != -ENOENT ||
	    (rc = xp_conn_set_no_progress(core, id, 0, 0)) != -ENOENT ||
	    (rc = xp_conn_cc_refresh(core, id, 0)) != -ENOENT ||
	    (rc = xp_conn_close(core, id, XP_CLOSE_ABORT, 0)) != -EALREADY)
		failf(R, "a call on a closed connection: %d", rc);
}

/*
 * Calls on a live connection that must be refused, each with its error: CC bindings with an op
 * missing (at create and at a swap), binds to a bad peer, an unknown close mode; and the ones
 * that must not be: a swap to a complete binding, the default no-progress limit back, an abort
 * (which closes its flow). On a core of its own, configured as host @h's, so that the run's
 * ids, nonces and completions stay as they are.
 */
static void misuse_conn(struct run *R, uint32_t h)
{
	struct xp_conn_config cc = { .n_paths = 1, .path_handles = R->conns[0].s[0].handles };
	uint32_t id, nonce, id2, nonce2;
	struct xp_core_config cfg;
	struct xp_core *core;
	struct xp_cc_ops o;
	int rc;

	tune_core(R, h, &cfg);
	if (xp_core_create(&cfg, &core) < 0) {
		failf(R, "misuse: a core of its own");
		return;
	}
	R->spare = R->conns[0].fixed[0];
	R->spare.open_flows = 0;
	cc.cc = xp_cc_fixed_binding(&R->spare);
	if ((rc = xp_conn_create(core, &cc, 0, &id, &nonce)) < 0) {
		failf(R, "misuse: a connection to misuse: %s", strerror(-rc));
		xp_core_destroy(core);
		return;
	}
	for (unsigned k = 0; k < N_BROKEN_OPS; k++) {
		struct xp_cc_binding b = { broken_ops(&o, k), &R->spare };
		struct xp_conn_config bc = cc;

		bc.cc = b;
		if ((rc = xp_conn_set_cc(core, id, b, 0)) != -EINVAL ||
		    (rc = xp_conn_create(core, &bc, 0, &id2, &nonce2)) != -EINVAL)
			failf(R, "a CC binding without op %u: %d", k, rc);
	}
	if ((rc = xp_conn_bind(core, id, XP_MAX_CONNS, 1, 0, 0)) != -EINVAL ||
	    (rc = xp_conn_bind(core, id, 0, 0, 0, 0)) != -EINVAL ||
	    (rc = xp_conn_close(core, id, (enum xp_close_mode)7, 0)) != -EINVAL)
		failf(R, "a bad bind or close mode: %d", rc);
	{
		struct xp_cc_binding b = { broken_ops(&o, 0), &R->spare };
		struct xp_conn_config bc = cc;

		o.info = xp_cc_fixed_ops.info;
		o.flow_open = refuse_flow;
		bc.cc = b;
		if ((rc = xp_conn_set_cc(core, id, b, 0)) != -ENOSPC ||
		    (rc = xp_conn_create(core, &bc, 0, &id2, &nonce2)) != -ENOSPC)
			failf(R, "a CC binding with no room for a flow: %d", rc);
	}
	misuse_lifecycle(R, core, id, nonce, &cc.cc);
	if ((rc = xp_conn_create(core, &cc, 0, &id2, &nonce2)) < 0)
		failf(R, "misuse: a second connection: %s", strerror(-rc));
	else
		misuse_records(R, core, id2, nonce2);
	if (R->spare.open_flows)
		failf(R, "misuse: %u flows left open", R->spare.open_flows);
	xp_core_destroy(core);
	xp_core_destroy(NULL);
}

#define DRAIN_CONNS 8

/* Count the records of each type in @b's control packets into @n; Return: the actions. */
static uint32_t count_ctrl(const struct xp_batch *b, uint32_t n[N_REC_TYPES])
{
	for (uint32_t i = 0; i < b->n; i++) {
		struct xp_wire_reader rd;
		struct xp_rec rec;
		enum xp_drop why;

		if (b->acts[i].kind != XP_ACT_CTRL ||
		    xp_wire_open(&rd, b->acts[i].u.ctrl.bytes, b->acts[i].u.ctrl.len,
				 XP_WIRE_MAX_MTU, &why) < 0)
			continue;
		while (xp_wire_next(&rd, &rec, &why) > 0)
			if (rec.type < N_REC_TYPES)
				n[rec.type]++;
	}
	return b->n;
}

/*
 * F_LIMITS: answers that overflow control packets and batches. Connections of a core of its
 * own, bound to three peers, each owe a KEEPALIVE_ACK and a FIN_ACK; drains into batches of
 * 1..3 actions and one or two packets of the smallest MTU take them until nothing is left.
 * However the batches cut them, each answer goes out exactly once.
 */
static void misuse_drain(struct run *R, uint32_t h)
{
	struct rng r = rng_for(R->p.seed, 29, h, 0);
	struct xp_conn_config cc = { .n_paths = 1, .path_handles = R->conns[0].s[0].handles };
	uint8_t buf[2 * XP_WIRE_MIN_MTU];
	uint32_t n[N_REC_TYPES] = { 0 }, id[DRAIN_CONNS], nonce;
	struct xp_action acts[3];
	struct xp_core_config cfg;
	struct xp_core *core;

	tune_core(R, h, &cfg);
	cfg.ctrl_mtu = XP_WIRE_MIN_MTU;
	cfg.max_conns = DRAIN_CONNS;
	if (xp_core_create(&cfg, &core) < 0) {
		failf(R, "misuse: a core to drain");
		return;
	}
	cc.cc = xp_cc_fixed_binding(&R->spare);
	for (uint32_t k = 0; k < DRAIN_CONNS; k++) {
		if (xp_conn_create(core, &cc, 0, &id[k], &nonce) < 0 ||
		    xp_conn_bind(core, id[k], k + 1, 1, k % 3, 0) < 0)
			failf(R, "misuse: a connection to drain");
		feed_rec(core, k % 3, id[k], nonce, XP_REC_KEEPALIVE, 0, 0);
		feed_rec(core, k % 3, id[k], nonce, XP_REC_FIN, 0, 0);
	}
	for (uint32_t d = 0; d < 100; d++) {
		struct xp_batch b = { .acts = acts, .cap = (uint32_t)between(&r, 1, 3), .ctrl_buf = buf,
				      .ctrl_cap = XP_WIRE_MIN_MTU * (uint32_t)between(&r, 1, 2) };

		xp_batch_reset(&b, 0);
		xp_core_drain(core, 0, &b);
		if (!count_ctrl(&b, n))
			break;
	}
	if (n[XP_REC_KEEPALIVE_ACK] != DRAIN_CONNS || n[XP_REC_FIN_ACK] != DRAIN_CONNS)
		failf(R, "answers drained in small batches: %u KEEPALIVE_ACK, %u FIN_ACK of %u",
		      n[XP_REC_KEEPALIVE_ACK], n[XP_REC_FIN_ACK], DRAIN_CONNS);
	for (uint32_t k = 0; k < DRAIN_CONNS; k++)
		xp_conn_close(core, id[k], XP_CLOSE_ABORT, 0);
	if (R->spare.open_flows)
		failf(R, "misuse: %u flows left open after a drain", R->spare.open_flows);
	xp_core_destroy(core);
}

/* F_LIMITS: a PCM binding at its limits (dst_pcm.h), with draws of its own stream. */
static void misuse_pcm(struct run *R)
{
	struct rng r = rng_for(R->p.seed, 25, 0, 0);
	struct dst_pcm_plan plan = {
		.max_flows = (uint32_t)between(&r, 65, 100),
		.workers = (uint32_t)between(&r, 2, 4),
		.lb = coin(&r, 50),
		.ticks = (uint32_t)between(&r, 1, 8),
	};
	char why[256];

	if (dst_pcm_limits(&plan, why, sizeof(why)) < 0)
		failf(R, "PCM binding at its limits: %s", why);
}

/*
 * Calls that must be refused, each with its error and nothing changed: cores with a field out
 * of range, connections with bad paths, and every per-connection call on an id out of range
 * or not open (host @h's core, before its connections open).
 */
static void misuse(struct run *R, uint32_t h)
{
	struct xp_core *core = xp_net_core(R->net, h), *bad = NULL;
	struct xp_buf b = { 1ull << 40, 1, 1 };
	uint32_t ids[] = { 0, XP_MAX_CONNS, UINT32_MAX }, handle = 0, id, nonce;
	struct xp_conn_info info;
	int rc;

	for (unsigned k = 0; k < N_BROKEN_CONFIGS; k++) {
		struct xp_core_config cfg;

		tune_core(R, h, &cfg);
		break_config(&cfg, k);
		if ((rc = xp_core_create(&cfg, &bad)) != -EINVAL)
			failf(R, "a core config with field %u out of range: %d", k, rc);
		if (rc == 0)
			xp_core_destroy(bad);
	}
	if ((rc = xp_core_create(NULL, &bad)) != -EINVAL)
		failf(R, "a core with no config: %d", rc);
	{
		struct xp_core_config cfg;

		tune_core(R, h, &cfg);
		if ((rc = xp_core_create(&cfg, NULL)) != -EINVAL)
			failf(R, "a core with nowhere to go: %d", rc);
	}
	{
		struct xp_cc_pcm_config pc;
		struct xp_cc_pcm *pcm = NULL;
		struct pcm_diag diag;

		xp_cc_pcm_config_default(&pc);
		if (xp_cc_pcm_create(&pc, &pcm, &diag) != -EINVAL || /* no CC package */
		    xp_cc_pcm_create(NULL, &pcm, &diag) != -EINVAL)
			failf(R, "a PCM binding without a CC package was not refused");
		pc.cc = builtin("newreno");
		pc.max_flows = 0;
		if (xp_cc_pcm_create(&pc, &pcm, &diag) != -EINVAL)
			failf(R, "a PCM binding with room for no flow was not refused");
		pc.cc = pc.lb = builtin("reps"); /* both would drive the same controls */
		pc.max_flows = 1;
		if (xp_cc_pcm_create(&pc, &pcm, &diag) != -EINVAL)
			failf(R, "a PCM binding whose packages share a control was not refused");
	}
	for (unsigned k = 0; k < 3; k++) {
		struct xp_conn_config cc = { .n_paths = k == 0 ? 0 : k == 1 ? XP_MAX_PATHS + 1 : 1,
					     .path_handles = k == 2 ? NULL : &handle };

		cc.cc = xp_cc_fixed_binding(&R->conns[0].fixed[0]);
		if ((rc = xp_conn_create(core, &cc, xp_net_now(R->net), &id, &nonce)) != -EINVAL)
			failf(R, "a connection with bad paths (%u): %d", k, rc);
	}
	for (unsigned k = 0; k < 3; k++) {
		uint64_t now = xp_net_now(R->net);
		int rcs[7];

		rcs[0] = xp_post_send(core, ids[k], &b, 0, now);
		rcs[1] = xp_post_recv(core, ids[k], &b, 0, now);
		rcs[2] = xp_conn_close(core, ids[k], XP_CLOSE_GRACEFUL, now);
		rcs[3] = xp_conn_bind(core, ids[k], 0, 1, 0, now);
		rcs[4] = xp_conn_info(core, ids[k], &info);
		rcs[5] = xp_conn_cc_refresh(core, ids[k], now);
		rcs[6] = xp_conn_set_no_progress(core, ids[k], MS, now);
		for (unsigned j = 0; j < 7; j++)
			if (rcs[j] != -ENOENT)
				failf(R, "call %u on connection id %u, not open: %d", j, ids[k], rcs[j]);
	}
	for (unsigned k = 0; k <= XP_DROP_COUNT; k++)
		if ((strcmp(xp_drop_name(k), "?") == 0) != (k == XP_DROP_COUNT))
			failf(R, "drop reason %u: name %s", k, xp_drop_name(k));
	misuse_conn(R, h);
	misuse_drain(R, h);
	misuse_pcm(R);
}

/*
 * F_NOMEM: allocation failures (dst_alloc.h), on a private core and bindings, so the run's
 * trace is untouched. Each thing is made with its k-th allocation failing, k = 1, 2, ...,
 * until it is made with none failing: each failure must return -ENOMEM and leave nothing
 * allocated; what is made must be destroyed with nothing left either.
 */
#define NOMEM_MAX_ALLOCS 1000

struct nomem_maker {
	const char *what;
	int (*make)(struct nomem_maker *m);
	void (*destroy)(struct nomem_maker *m);
	struct xp_core_config core_cfg;
	struct xp_cc_pcm_config pcm_cfg;
	struct xp_core *core;
	struct xp_cc_pcm *pcm;
};

static int nomem_core_make(struct nomem_maker *m)
{
	return xp_core_create(&m->core_cfg, &m->core);
}

static void nomem_core_destroy(struct nomem_maker *m)
{
	xp_core_destroy(m->core);
}

static int nomem_pcm_make(struct nomem_maker *m)
{
	struct pcm_diag diag;

	return xp_cc_pcm_create(&m->pcm_cfg, &m->pcm, &diag);
}

static void nomem_pcm_destroy(struct nomem_maker *m)
{
	xp_cc_pcm_destroy(m->pcm);
}

/* Make @m with allocation k failing, k = 1.. until it is made; Return: its allocations. */
static uint64_t nomem_make(struct run *R, struct nomem_maker *m)
{
	struct dst_alloc_tally t;

	for (uint64_t k = 1; k <= NOMEM_MAX_ALLOCS && !R->fail[0]; k++) {
		int rc;

		dst_alloc_arm(k);
		rc = m->make(m);
		if (rc == 0)
			m->destroy(m);
		dst_alloc_disarm(&t);
		if (t.live)
			failf(R, "nomem: %s, allocation %" PRIu64 " failing: %" PRId64 " blocks left",
			      m->what, k, t.live);
		else if (!t.failed && rc == 0)
			return t.seen;
		else if (rc != -ENOMEM)
			failf(R, "nomem: %s, allocation %" PRIu64 " failing: %d, not -ENOMEM",
			      m->what, k, rc);
	}
	failf(R, "nomem: %s not made within %d allocations", m->what, NOMEM_MAX_ALLOCS);
	return 0;
}

/*
 * Flows opened on binding @m until one fails on the allocation @r draws among those that
 * opening max_flows flows takes (the flow table grows past its first size on the way): it
 * must fail with -ENOMEM and open nothing; the rest open; after all closed and the binding
 * destroyed, nothing is left. @made: the binding's own allocations.
 */
static void nomem_flows(struct run *R, struct nomem_maker *m, uint64_t made, struct rng *r)
{
	uint32_t max = m->pcm_cfg.max_flows, flows[128], n = 0, failed = 0;
	uint64_t opens = 0;
	struct dst_alloc_tally t;

	for (int pass = 0; pass < 2 && !R->fail[0]; pass++) {
		struct xp_cc_binding b;

		dst_alloc_arm(pass ? made + between(r, 1, opens) : 0);
		if (m->make(m) < 0) {
			dst_alloc_disarm(&t);
			failf(R, "nomem: %s, then no allocation failing: not made", m->what);
			return;
		}
		b = xp_cc_pcm_binding(m->pcm);
		for (n = 0, failed = 0; n + failed < max;) {
			int rc = b.ops->flow_open(b.ctx, n + 1, 0, &flows[n]);

			if (rc == 0)
				n++;
			else if (rc == -ENOMEM && !failed++ && xp_cc_pcm_flows_open(m->pcm) == n)
				continue;
			else
				failf(R, "nomem: flow %u: %d", n, rc);
			if (R->fail[0])
				break;
		}
		for (uint32_t i = 0; i < n; i++)
			b.ops->flow_close(b.ctx, flows[i], 0);
		m->destroy(m);
		dst_alloc_disarm(&t);
		if (!pass)
			opens = t.seen - made;
		if (t.live || t.failed != (failed == 1))
			failf(R, "nomem: flows of %s: %" PRId64 " blocks left, failed %d/%u", m->what,
			      t.live, t.failed, failed);
	}
}

static void nomem(struct run *R)
{
	struct rng r = rng_for(R->p.seed, 30, 0, 0);
	struct nomem_maker core = { .what = "a core", .make = nomem_core_make,
				    .destroy = nomem_core_destroy };
	struct nomem_maker pcm = { .what = "a PCM binding", .make = nomem_pcm_make,
				   .destroy = nomem_pcm_destroy };
	static const char *const lbs[] = { "reps", "ops" };
	uint64_t made;

	tune_core(R, (uint32_t)below(&r, R->n_hosts), &core.core_cfg);
	nomem_make(R, &core);
	xp_cc_pcm_config_default(&pcm.pcm_cfg);
	pcm.pcm_cfg.cc = builtin(pcm_policies[below(&r, N_BINDINGS)]);
	pcm.pcm_cfg.lb = coin(&r, 50) ? builtin(lbs[below(&r, 2)]) : NULL;
	pcm.pcm_cfg.max_flows = (uint32_t)between(&r, 65, 128);
	if (coin(&r, 50)) {
		pcm.pcm_cfg.mode = XP_CC_PCM_ASYNC;
		pcm.pcm_cfg.async.mode = PCM_ASYNC_BOUNDED;
		pcm.pcm_cfg.async.n_workers = (uint32_t)between(&r, 1, 4);
		pcm.pcm_cfg.async_inline = true; /* no threads: the same allocations every run */
	}
	made = nomem_make(R, &pcm);
	if (!R->fail[0])
		nomem_flows(R, &pcm, made, &r);
}

/* The wire, as the filter sees it */

/* F_CTRL: a control packet's faults, by the kinds of its records. */
static enum xp_net_verdict on_ctrl_pkt(struct run *R, const struct xp_net_pkt *pkt,
				       uint64_t *extra)
{
	uint32_t drop = 0, dup = 0, delay = 0;
	struct xp_wire_reader rd;
	struct xp_rec rec;
	enum xp_drop why;
	struct rng r;

	if (!(R->p.mask & F_CTRL) ||
	    xp_wire_open(&rd, pkt->bytes, pkt->len, XP_WIRE_MAX_MTU, &why) < 0)
		return XP_NET_PASS;
	while (xp_wire_next(&rd, &rec, &why) != 0) {
		if (rec.type < N_REC_TYPES) {
			drop = drop > R->ctrl_drop_ppm[rec.type] ? drop : R->ctrl_drop_ppm[rec.type];
			dup = dup > R->ctrl_dup_ppm[rec.type] ? dup : R->ctrl_dup_ppm[rec.type];
			delay = delay > R->ctrl_delay_ppm[rec.type] ? delay
								   : R->ctrl_delay_ppm[rec.type];
		}
	}
	r.s = R->ctrl_rng++;
	if (below(&r, 1000000) < drop)
		return XP_NET_DROP;
	if (below(&r, 1000000) < delay)
		*extra = between(&r, 1, R->ctrl_delay_ns);
	return below(&r, 1000000) < dup ? XP_NET_DUP : XP_NET_PASS;
}

/* The test connection whose side on @host has path handle @handle (MAX_CONNS: none). */
static uint32_t sender_of(const struct run *R, uint32_t host, uint32_t handle)
{
	for (uint32_t i = 0; i < R->p.conns; i++)
		for (int s = 0; s < 2; s++)
			for (uint32_t k = 0; R->conns[i].s[s].host == host && k < R->conns[i].n_paths;
			     k++)
				if (R->conns[i].s[s].handles[k] == handle)
					return i;
	return MAX_CONNS;
}

/*
 * Every packet: a chunk sent a third time must follow an RTO or a probe of its sender since
 * the second (dst_watch.h: no chunk is marked lost again while its retransmission is out).
 */
static enum xp_net_verdict dst_filter(void *arg, const struct xp_net_pkt *pkt, uint64_t *extra)
{
	struct run *R = arg;
	const struct xp_core_stats *st;

	if (pkt->is_ctrl)
		return on_ctrl_pkt(R, pkt, extra);
	st = xp_core_stats(xp_net_core(R->net, pkt->src));
	if (!dst_watch_chunk(R->watch, sender_of(R, pkt->src, pkt->write->path), pkt->dst,
			     pkt->write->imm, st->rto_fires + st->tlp_fires))
		failf(R, "host %u: a chunk (imm 0x%08x) went a third time with no RTO or probe since "
			 "its retransmission", pkt->src, pkt->write->imm);
	return XP_NET_PASS;
}

/* The run's own ingredients: calm links, control faults, a host that goes away, forgeries. */
static void plan_run(struct run *R)
{
	struct rng calm = rng_for(R->p.seed, 22, 0, 0), k = rng_for(R->p.seed, 14, 0, 0);
	struct rng cf = rng_for(R->p.seed, 15, 0, 0), fg = rng_for(R->p.seed, 23, 0, 0);

	R->calm = coin(&calm, 15); /* then no control faults and no write errors either */
	if (R->p.mask & F_KILL && coin(&k, 40)) {
		R->kill_host = (uint32_t)below(&k, R->n_hosts);
		R->kill_at = between(&k, 500 * US, WORK_NS);
		R->kill_exit = coin(&k, 50);
		add_event(R, R->kill_at, WL_KILL, 0, 0, 0);
	}
	for (unsigned t = 1; t < N_REC_TYPES && !R->calm; t++) {
		R->ctrl_drop_ppm[t] = coin(&cf, 50) ? (uint32_t)below(&cf, 200000) : 0;
		R->ctrl_dup_ppm[t] = coin(&cf, 30) ? (uint32_t)below(&cf, 100000) : 0;
		R->ctrl_delay_ppm[t] = coin(&cf, 30) ? (uint32_t)below(&cf, 200000) : 0;
	}
	R->ctrl_delay_ns = between(&cf, 10 * US, 2 * MS);
	R->ctrl_rng = next(&cf);
	if (R->p.mask & F_FORGE)
		for (uint32_t n = 0, t = 0; n < 200; n++) {
			t += (uint32_t)between(&fg, 1, 60 * US);
			if (t >= WORK_NS)
				break;
			add_event(R, t, WL_FORGE, (uint8_t)below(&fg, R->n_hosts), 0, (uint8_t)n);
		}
}

/* F_BATCH: drains into tiny batches (few actions, writes and control bytes at a time). */
static void tune_net(const struct params *p, struct xp_net_config *ncfg)
{
	struct rng b = rng_for(p->seed, 12, 0, 0);

	if (!(p->mask & F_BATCH) || !coin(&b, 70))
		return;
	ncfg->batch_actions = (uint32_t)between(&b, 1, 16);
	ncfg->max_writes = (uint32_t)between(&b, 1, 4);
	ncfg->ctrl_mtus = (uint32_t)between(&b, 1, 2);
}

/* Return: 0 if the run held every invariant; fills @trace with its trace hash. */
static int run_case(const struct params *p, uint64_t *trace, char *why, size_t why_len)
{
	struct xp_net_config ncfg = { .seed = p->seed, .on_complete = on_complete,
				      .filter = dst_filter };
	struct run *R = calloc(1, sizeof(*R));
	struct rng r = rng_for(p->seed, 0, 0, 0);
	int rc;

	if (!R)
		abort();
	R->p = *p;
	ncfg.arg = R;
	tune_net(p, &ncfg);
	R->n_hosts = 2 + (uint32_t)below(&r, 2);
	if (xp_net_create(&ncfg, &R->net) < 0 || dst_watch_create(&R->watch) < 0)
		abort();
	plan_run(R);
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

			R->ctrl_faulty[a][b] = link_faulty(&l) || (R->p.mask & F_CTRL && !R->calm);
			if (a != b)
				xp_net_set_ctrl(R->net, a, b, &l);
		}
	for (uint32_t i = 0; i < p->conns && !R->fail[0]; i++) {
		struct conn *c = &R->conns[i];

		plan_conn(R, i);
		if (plan_msgs(R, i) < 0 || setup_paths(R, i) < 0)
			failf(R, "conn %u: setup failed", i);
		if (R->ctrl_faulty[c->s[0].host][c->s[1].host] ||
		    R->ctrl_faulty[c->s[1].host][c->s[0].host] || c->werr)
			c->lossless = false;
	}
	if (p->mask & F_LIMITS && !R->fail[0])
		misuse(R, 0);
	if (p->mask & F_NOMEM && !R->fail[0])
		nomem(R);
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
		for (unsigned b = 0; b < N_MASK_BITS && !progress; b++) {
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
