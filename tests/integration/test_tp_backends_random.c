// SPDX-License-Identifier: MIT
/*
 * test_tp_backends_random.c - one randomized API test of libpcmtransport's
 * two backends: a seed makes a sequence of calls (connections made and
 * refused, sends and receives of random sizes, some too long for their
 * receive, closes, policy swaps and queries, regions registered, used and
 * deregistered, floods up to the limits, and misuse: NULLs, foreign and
 * stale handles, double closes and deregistrations, regions in use, posts on
 * closed and dead connections), which runs against the in-process backend
 * (datapath null) and against a pcmd this test starts (datapath null).
 *
 * A model of the contract (pcm_transport(3)) predicts every return code and
 * every completion: at each settling point the test polls until exactly the
 * predicted completions arrived (status, bytes, a receive's bytes checked
 * against its message k: FIFO matching), so nothing depends on timing. A run
 * fails on a return code or completion the model did not predict, a
 * completion lost or extra, a receive holding the wrong message, a hang (a
 * predicted completion that never comes), a crash (each batch of seeds runs
 * in a child process); and the two backends must give the same return codes
 * and the same completions per connection, side and kind, compared in k
 * order (the API orders matching, not completions: a message too long for
 * its receive ends both at once, before the message ahead of it).
 *
 * A failing seed is shrunk (actions removed while it still fails) and
 * printed as a one-line reproduction.
 *
 * Usage: test_tp_backends_random [SEEDS [FIRST]]   ($PCM_TP_SEEDS overrides SEEDS)
 *        test_tp_backends_random --seed S [--keep I,J,...]
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "pcm/transport.h"

#define N_EPS 3            /* endpoints that listen, per backend */
#define N_CONNS 8          /* connections a seed makes at most */
#define SLOT_BYTES 16384u  /* a posted buffer */
#define N_SLOTS 32         /* buffers per endpoint */
#define N_MRS 4            /* regions registered per endpoint at once */
#define MAX_ACTIONS 80
#define MAX_OPS 20000      /* floods included */
#define SETTLE_MS 10000
#define SEED_ALARM_S 60
#define BATCH 500          /* seeds per child process */

static const char *const policies[] = {"swift", "newreno", "dctcp"};

enum act_type {
	A_CONNECT,
	A_CONNECT_NOWHERE,
	A_SEND,
	A_RECV,
	A_SEND_MR,
	A_SETTLE,
	A_CLOSE,
	A_SWAP,
	A_QUERY,
	A_REG,
	A_DEREG,
	A_FREE_BUSY,
	A_MISUSE,
	A_FLOOD,
	A_STALE,
	A_TYPES
};

static const char *const act_names[] = {
    "connect", "connect-nowhere", "send", "recv", "send-mr", "settle", "close", "swap",
    "query", "reg", "dereg", "free-busy", "misuse", "flood", "stale"};

struct action {
	uint8_t type;
	uint8_t a, b, c; /* endpoints, side, policy, misuse kind: by type */
	uint32_t x, y;   /* connection, sizes, regions: by type */
};

/* ---- the sequence -------------------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint32_t rnd(uint64_t *r, uint32_t n)
{
	*r = mix(*r);
	return n ? (uint32_t)(*r % n) : 0;
}

/* Actions by weight: data most, misuse and floods seldom. */
static uint8_t pick_type(uint64_t *r)
{
	static const uint8_t weights[A_TYPES] = {
	    [A_CONNECT] = 8, [A_CONNECT_NOWHERE] = 1, [A_SEND] = 22, [A_RECV] = 22,
	    [A_SEND_MR] = 4, [A_SETTLE] = 10,         [A_CLOSE] = 4, [A_SWAP] = 3,
	    [A_QUERY] = 2,   [A_REG] = 3,             [A_DEREG] = 3, [A_FREE_BUSY] = 1,
	    [A_MISUSE] = 6,  [A_FLOOD] = 0,           [A_STALE] = 3};
	uint32_t total = 0, pick;

	for (int i = 0; i < A_TYPES; i++)
		total += weights[i];
	if (rnd(r, 400) == 0)
		return A_FLOOD;
	pick = rnd(r, total);
	for (int i = 0; i < A_TYPES; i++) {
		if (pick < weights[i])
			return (uint8_t)i;
		pick -= weights[i];
	}
	return A_SETTLE;
}

static uint32_t gen_actions(uint64_t seed, struct action *out)
{
	uint64_t r = mix(seed);
	uint32_t n = 12 + rnd(&r, MAX_ACTIONS - 12);

	for (uint32_t i = 0; i < n; i++) {
		struct action *a = &out[i];

		a->type = i < 2 ? A_CONNECT : pick_type(&r); /* a connection to begin with */
		a->a = (uint8_t)rnd(&r, 256);
		a->b = (uint8_t)rnd(&r, 256);
		a->c = (uint8_t)rnd(&r, 256);
		a->x = rnd(&r, UINT32_MAX);
		a->y = rnd(&r, UINT32_MAX);
	}
	return n;
}

/* ---- the model's state, per run --------------------------------------------------------------- */

struct side {
	struct pcm_tp_conn *h;
	int ep;
	bool closed;     /* the application closed it */
	bool close_done; /* its CLOSE was taken */
	bool gone;       /* and a poll since: the handle is refused */
	int failed;      /* a completion said it died */
	uint32_t n_sends, n_recvs;     /* posted so far (the next k) */
	uint32_t out_sends, out_recvs; /* outstanding */
	int policy, mode;
	uint64_t *recv_cap; /* by k: the capacity of receive k */
	uint32_t recv_cap_n;
};

struct mconn {
	bool up;
	struct side s[2]; /* 0 dialed, 1 accepted */
};

struct mr {
	struct pcm_tp_mr *h;
	bool live;
	uint32_t first_slot, n_slots;
	uint32_t busy;
};

struct mep {
	struct pcm_tp_endpoint *ep;
	uint8_t *arena; /* N_SLOTS x SLOT_BYTES */
	bool slot_used[N_SLOTS];
	uint32_t outstanding;
	struct mr mr[N_MRS * 4]; /* every region a seed registered */
	uint32_t n_mr;
	char name[48];
};

enum op_kind { K_SEND, K_RECV, K_CONNECT, K_ACCEPT };

struct mop {
	uint8_t kind;
	uint8_t side;
	int16_t conn; /* model index; -1: none (connect nowhere) */
	int ep;
	uint32_t k;
	uint64_t len;
	int slot; /* -1: none */
	int mr;   /* -1: none */
	bool done, predicted;
	int want_status;
	uint64_t want_bytes;
};

/* A completion as both backends must give it, kept per (connection, side, kind). */
struct seen {
	uint32_t conn, side, kind, k;
	int status;
	uint64_t bytes;
};

struct run {
	bool daemon;
	const char *sock;
	uint64_t seed;
	const struct action *acts;
	const uint32_t *idx;
	uint32_t n_acts;
	struct mep *eps;          /* N_EPS + 1: the last one never listens */
	struct pcm_tp_limits lim;
	struct mconn conn[N_CONNS];
	uint32_t n_conns;
	struct mop *ops;
	uint32_t n_ops;
	int *rcs;                 /* per action: its return code (or a count) */
	struct seen *seen;
	uint32_t n_seen;
	uint32_t closes_predicted;
	int at;                   /* the action running */
	char why[512];
};

static int fail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct run *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->why[0])
		return -1;
	n = snprintf(r->why, sizeof(r->why), "%s, action #%d: ", r->daemon ? "daemon" : "inproc",
		     r->at);
	va_start(ap, fmt);
	vsnprintf(r->why + n, sizeof(r->why) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- endpoints, kept across the seeds of a batch -------------------------------------------- */

static int eps_open(struct mep *eps, bool daemon, const char *sock)
{
	struct pcm_tp_config cfg = {.backend = daemon ? PCM_TP_BACKEND_DAEMON
						      : PCM_TP_BACKEND_INPROC,
				    .datapath = "null", .progress = PCM_TP_PROGRESS_INLINE,
				    .daemon_socket = sock, .daemon_region_bytes = 2u << 20};

	for (int e = 0; e <= N_EPS; e++) {
		int rc = pcm_tp_endpoint_open(&cfg, &eps[e].ep);

		if (rc < 0) {
			fprintf(stderr, "%s endpoint %d: %s\n", daemon ? "daemon" : "inproc", e,
				pcm_tp_last_error());
			return rc;
		}
		eps[e].arena = pcm_tp_mem_alloc(eps[e].ep, (size_t)N_SLOTS * SLOT_BYTES);
		if (!eps[e].arena)
			return -ENOMEM;
		snprintf(eps[e].name, sizeof(eps[e].name), "rnd-%d-%c-%d", (int)getpid(),
			 daemon ? 'd' : 'i', e);
		if (e < N_EPS && (rc = pcm_tp_listen(eps[e].ep, eps[e].name)) < 0)
			return rc;
	}
	return 0;
}

static void eps_close(struct mep *eps)
{
	for (int e = 0; e <= N_EPS; e++)
		pcm_tp_endpoint_close(eps[e].ep);
}

/* ---- messages ---------------------------------------------------------------------------------- */

static uint8_t msg_byte(uint64_t seed, uint32_t conn, uint32_t from, uint32_t k, uint64_t i)
{
	return (uint8_t)(mix(seed ^ ((uint64_t)conn << 56) ^ ((uint64_t)from << 48) ^
			     ((uint64_t)k << 24) ^ (i >> 3)) >> (8 * (i & 7)));
}

static uint8_t *slot_buf(struct mep *m, int slot)
{
	return m->arena + (size_t)slot * SLOT_BYTES;
}

static int slot_take(struct mep *m, uint32_t first, uint32_t n, uint32_t pick)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = first + (pick + i) % n;

		if (!m->slot_used[s]) {
			m->slot_used[s] = true;
			return (int)s;
		}
	}
	return -1;
}

/* ---- the model's predictions -------------------------------------------------------------------- */

static struct side *side_of(struct run *r, uint32_t c, int s)
{
	return &r->conn[c].s[s];
}

/* The code a post on side @x returns, before its arguments are looked at. */
static int post_state(const struct side *x)
{
	if (x->gone || x->closed)
		return -ENOTCONN;
	return x->failed;
}

static struct mop *op_new(struct run *r)
{
	struct mop *o;

	if (r->n_ops == MAX_OPS)
		return NULL;
	o = &r->ops[r->n_ops++];
	memset(o, 0, sizeof(*o));
	o->slot = o->mr = -1;
	o->conn = -1;
	return o;
}

static void predict(struct mop *o, int status, uint64_t bytes)
{
	o->predicted = true;
	o->want_status = status;
	o->want_bytes = status == 0 ? bytes : 0;
}

/* The capacity of side @x's receive @k. */
static uint64_t recv_cap(const struct side *x, uint32_t k)
{
	return k < x->recv_cap_n ? x->recv_cap[k] : 0;
}

/* What the next settling point completes: matched pairs, and everything of closed ends. */
static uint32_t predict_all(struct run *r)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < r->n_ops; i++) {
		struct mop *o = &r->ops[i];
		struct side *x, *y;

		if (o->done || o->predicted)
			continue;
		if (o->kind == K_CONNECT || o->kind == K_ACCEPT)
			continue; /* predicted when posted */
		x = side_of(r, (uint32_t)o->conn, o->side);
		y = side_of(r, (uint32_t)o->conn, !o->side);
		if (x->closed)
			predict(o, -ECONNABORTED, 0);
		else if (y->closed)
			predict(o, -ECONNRESET, 0);
		else if (o->kind == K_SEND && o->k < y->n_recvs)
			predict(o, o->len <= recv_cap(y, o->k) ? 0 : -EMSGSIZE, o->len);
		else if (o->kind == K_RECV && o->k < y->n_sends) {
			/* the matching send's length decides */
			for (uint32_t j = 0; j < r->n_ops; j++) {
				const struct mop *s = &r->ops[j];

				if (s->kind == K_SEND && s->conn == o->conn && s->side != o->side &&
				    s->k == o->k) {
					predict(o, s->len <= o->len ? 0 : -EMSGSIZE, s->len);
					break;
				}
			}
		}
	}
	for (uint32_t i = 0; i < r->n_ops; i++)
		n += r->ops[i].predicted && !r->ops[i].done;
	return n;
}

/* ---- settling ---------------------------------------------------------------------------------- */

static int find_side(struct run *r, const struct pcm_tp_conn *h, int ep, uint32_t *c, int *s)
{
	for (uint32_t i = 0; i < r->n_conns; i++)
		for (int k = 0; k < 2; k++)
			if (r->conn[i].up && r->conn[i].s[k].h == h && r->conn[i].s[k].ep == ep &&
			    !r->conn[i].s[k].close_done) {
				*c = i;
				*s = k;
				return 0;
			}
	return -1;
}

static void record(struct run *r, uint32_t conn, uint32_t side, uint32_t kind, uint32_t k,
		   int status, uint64_t bytes)
{
	if (r->n_seen < MAX_OPS + 4 * N_CONNS)
		r->seen[r->n_seen++] = (struct seen){conn, side, kind, k, status, bytes};
}

static bool kills(int status)
{
	return status == -ECONNRESET || status == -ETIMEDOUT || status == -EIO;
}

static int take_close(struct run *r, int ep, const struct pcm_tp_completion *c)
{
	uint32_t ci;
	int s;
	struct side *x;

	if (find_side(r, c->conn, ep, &ci, &s) < 0)
		return fail(r, "endpoint %d: a CLOSE of no connection of ours", ep);
	x = side_of(r, ci, s);
	if (!x->closed || x->out_sends || x->out_recvs)
		return fail(r, "conn %u side %d: a CLOSE %s", ci, s,
			    !x->closed ? "it was never closed" : "before its last completion");
	x->close_done = true;
	r->closes_predicted--;
	record(r, ci, (uint32_t)s, 4, 0, c->status, 0);
	return 0;
}

static int check_recv(struct run *r, const struct mop *o, const struct pcm_tp_completion *c)
{
	const uint8_t *p;

	if (o->slot < 0)
		return 0; /* an empty receive into memory of its own */
	p = slot_buf(&r->eps[o->ep], o->slot);
	for (uint64_t i = 0; i < c->bytes; i++)
		if (p[i] != msg_byte(r->seed, (uint32_t)o->conn, !o->side, o->k, i))
			return fail(r, "conn %d side %d receive %u holds another message (byte %" PRIu64
					" differs)",
				    o->conn, o->side, o->k, i);
	return 0;
}

static void op_end(struct run *r, struct mop *o, int status)
{
	struct mep *m = &r->eps[o->ep];

	o->done = true;
	m->outstanding--;
	if (o->slot >= 0)
		m->slot_used[o->slot] = false;
	if (o->mr >= 0)
		m->mr[o->mr].busy--;
	if (o->conn >= 0 && (o->kind == K_SEND || o->kind == K_RECV)) {
		struct side *x = side_of(r, (uint32_t)o->conn, o->side);

		if (o->kind == K_SEND)
			x->out_sends--;
		else
			x->out_recvs--;
		if (kills(status) && !x->failed)
			x->failed = status;
	}
}

static int take(struct run *r, int ep, const struct pcm_tp_completion *c)
{
	struct mop *o;

	if (c->op == PCM_TP_OP_CLOSE)
		return take_close(r, ep, c);
	if (c->cookie >= r->n_ops)
		return fail(r, "endpoint %d: a completion with cookie %" PRIu64 ", never posted", ep,
			    c->cookie);
	o = &r->ops[c->cookie];
	if (o->done)
		return fail(r, "op %" PRIu64 " completed twice", c->cookie);
	if (!o->predicted || o->ep != ep)
		return fail(r, "op %" PRIu64 " (%s on conn %d side %d, #%u) completed with %d, which "
				"the model did not predict",
			    c->cookie, o->kind == K_SEND ? "send" : o->kind == K_RECV ? "recv" : "setup",
			    o->conn, o->side, o->k, c->status);
	if (c->status != o->want_status || c->bytes != o->want_bytes)
		return fail(r, "op %" PRIu64 " (kind %d, conn %d side %d, #%u): status %d bytes %" PRIu64
				", the model says %d and %" PRIu64,
			    c->cookie, o->kind, o->conn, o->side, o->k, c->status, c->bytes,
			    o->want_status, o->want_bytes);
	if (o->kind == K_CONNECT || o->kind == K_ACCEPT) {
		if (o->conn >= 0 && c->status == 0) {
			if (!c->conn)
				return fail(r, "a connection's completion names none");
			side_of(r, (uint32_t)o->conn, o->kind == K_ACCEPT)->h = c->conn;
		}
	} else if (o->kind == K_RECV && c->status == 0 && check_recv(r, o, c) < 0) {
		return -1;
	}
	if (o->kind == K_SEND || o->kind == K_RECV) {
		if (c->conn != side_of(r, (uint32_t)o->conn, o->side)->h)
			return fail(r, "op %" PRIu64 ": the wrong connection", c->cookie);
		record(r, (uint32_t)o->conn, o->side, o->kind, o->k, c->status, c->bytes);
	}
	op_end(r, o, c->status);
	return 0;
}

/* The closed ends whose last operation is done: their CLOSE is due. */
static void predict_closes(struct run *r)
{
	r->closes_predicted = 0;
	for (uint32_t i = 0; i < r->n_conns; i++)
		for (int s = 0; s < 2; s++) {
			const struct side *x = &r->conn[i].s[s];

			r->closes_predicted += r->conn[i].up && x->closed && !x->close_done;
		}
}

/* Poll until exactly what the model predicts has come. */
static int settle(struct run *r)
{
	uint64_t until = harness_now_ms() + SETTLE_MS;
	uint32_t left;

	predict_all(r);
	predict_closes(r);
	for (;;) {
		left = r->closes_predicted;
		for (uint32_t i = 0; i < r->n_ops; i++)
			left += r->ops[i].predicted && !r->ops[i].done;
		if (!left)
			break;
		if (harness_now_ms() > until)
			return fail(r, "hang: %u predicted completions never came", left);
		for (int e = 0; e <= N_EPS; e++) {
			struct pcm_tp_completion c[32];
			int n = pcm_tp_poll(r->eps[e].ep, c, 32);

			if (n < 0)
				return fail(r, "poll: %s (%s)", pcm_tp_strerror(n), pcm_tp_last_error());
			for (int i = 0; i < n; i++)
				if (take(r, e, &c[i]) < 0)
					return -1;
		}
		if (r->daemon)
			sched_yield();
	}
	/* one poll more: a connection whose CLOSE was taken is gone */
	for (int e = 0; e <= N_EPS; e++)
		if (pcm_tp_poll(r->eps[e].ep, NULL, 0) < 0)
			return fail(r, "poll: %s", pcm_tp_last_error());
	for (uint32_t i = 0; i < r->n_conns; i++)
		for (int s = 0; s < 2; s++)
			r->conn[i].s[s].gone = r->conn[i].s[s].close_done;
	return 0;
}

/* ---- actions ----------------------------------------------------------------------------------------- */

static int expect(struct run *r, const char *what, int rc, int want)
{
	r->rcs[r->at] = rc;
	if (rc != want)
		return fail(r, "%s returned %d (%s), the model says %d", what, rc, pcm_tp_last_error(),
			    want);
	if (rc < 0 && !pcm_tp_last_error()[0])
		return fail(r, "%s failed with no last error", what);
	return 0;
}

/* A side to act on: conn @x of those made, side @s; NULL when none is up. */
static struct side *pick_side(struct run *r, uint32_t x, int s, uint32_t *ci)
{
	if (!r->n_conns)
		return NULL;
	*ci = x % r->n_conns;
	return r->conn[*ci].up ? &r->conn[*ci].s[s & 1] : NULL;
}

/*
 * Whether a post on @x would race the peer's close: its reset may or may not
 * have reached @x (a send may then meet an older receive's capacity first).
 * Until a completion told @x it is dead, the model makes no such post.
 */
static bool racy(const struct run *r, uint32_t ci, const struct side *x)
{
	return !x->failed && !x->closed && r->conn[ci].s[!(x - r->conn[ci].s)].closed;
}

static int admit(const struct run *r, const struct side *x, bool send)
{
	if ((send ? x->out_sends : x->out_recvs) >=
	    (send ? r->lim.sends_per_conn : r->lim.recvs_per_conn))
		return -EAGAIN;
	return r->eps[x->ep].outstanding >= r->lim.posts_per_endpoint ? -EAGAIN : 0;
}

static int act_connect(struct run *r, const struct action *a, bool nowhere)
{
	int f = a->a % N_EPS, t = (f + 1 + a->b % (N_EPS - 1)) % N_EPS;
	struct pcm_tp_conn_opts o = {.policy = policies[a->c % 3],
				     .mode = (enum pcm_tp_shell_mode)(a->x % 4)};
	struct mop *oc, *oa = NULL;
	char addr[64];
	int rc;

	if ((!nowhere && r->n_conns == N_CONNS) || r->n_ops + 2 > MAX_OPS)
		return 0;
	if (r->eps[f].outstanding >= r->lim.posts_per_endpoint ||
	    (!nowhere && r->eps[t].outstanding >= r->lim.posts_per_endpoint)) {
		/* a full endpoint: the one that is full refuses, at once */
		rc = r->eps[t].outstanding >= r->lim.posts_per_endpoint && !nowhere
			 ? pcm_tp_accept(r->eps[t].ep, 0)
			 : pcm_tp_connect(r->eps[f].ep, "anywhere", NULL, 0);
		return expect(r, "a post on a full endpoint", rc, -EAGAIN);
	}
	oc = op_new(r);
	oc->kind = K_CONNECT;
	oc->ep = f;
	if (nowhere) {
		snprintf(addr, sizeof(addr), "nowhere-%d-%" PRIu64, (int)getpid(), r->seed);
		predict(oc, -ECONNREFUSED, 0);
	} else {
		struct mconn *m = &r->conn[r->n_conns];

		memset(m, 0, sizeof(*m));
		snprintf(addr, sizeof(addr), "%s", r->eps[t].name);
		oc->conn = (int16_t)r->n_conns;
		predict(oc, 0, 0);
		oa = op_new(r);
		oa->kind = K_ACCEPT;
		oa->ep = t;
		oa->conn = oc->conn;
		predict(oa, 0, 0);
		for (int s = 0; s < 2; s++) {
			m->s[s].ep = s ? t : f;
			m->s[s].policy = a->c % 3;
			m->s[s].mode = (int)(a->x % 4);
		}
		rc = pcm_tp_accept(r->eps[t].ep, (uint64_t)(oa - r->ops));
		if (expect(r, "accept", rc, 0) < 0)
			return -1;
		r->eps[t].outstanding++;
	}
	rc = pcm_tp_connect(r->eps[f].ep, addr, &o, (uint64_t)(oc - r->ops));
	if (expect(r, "connect", rc, 0) < 0)
		return -1;
	r->eps[f].outstanding++;
	if (!nowhere)
		r->conn[r->n_conns++].up = true;
	return settle(r);
}

static int act_post(struct run *r, const struct action *a, bool send, bool use_mr)
{
	uint32_t ci, first = 0, n = N_SLOTS;
	struct side *x = pick_side(r, a->x, a->a, &ci);
	struct mep *m;
	struct mop *o;
	struct pcm_tp_mr *mh = NULL;
	uint64_t len = a->y % 4 == 0 ? a->y % 64 : a->y % (SLOT_BYTES + 1);
	int want, rc, slot, mri = -1;
	bool stale_mr = false;
	uint8_t *buf;

	if (!x || r->n_ops == MAX_OPS || racy(r, ci, x))
		return 0;
	m = &r->eps[x->ep];
	if (use_mr) {
		struct mep *owner = a->b % 4 == 0 ? &r->eps[(x->ep + 1) % N_EPS] : m;

		if (!owner->n_mr)
			return 0;
		mri = (int)(a->c % owner->n_mr);
		mh = owner->mr[mri].h;
		stale_mr = !owner->mr[mri].live;
		if (owner == m && m->mr[mri].live) {
			first = m->mr[mri].first_slot;
			n = m->mr[mri].n_slots;
		}
		if (owner != m || !m->mr[mri].live)
			mri = -2; /* refused: a region of another endpoint, or deregistered */
	}
	/* a gone connection, then a stale region (objects), then the connection's state */
	want = x->gone ? -ENOTCONN : stale_mr ? -EINVAL : post_state(x);
	if (want == 0 && mri == -2)
		want = -EINVAL;
	if (want == 0)
		want = admit(r, x, send);
	/* a refused post still names a buffer inside its region: only its own code refuses it */
	slot = want == 0 ? slot_take(m, first, n, a->b) : (int)first;
	if (slot < 0)
		return 0; /* no buffer free: the test's own limit */
	buf = slot_buf(m, slot);
	if (!send && a->b % 8 == 0 && len > 16)
		len /= 2; /* a receive shorter than most messages */
	if (send && want == 0) /* a refused post's buffer may be another's in flight: untouched */
		for (uint64_t i = 0; i < len; i++)
			buf[i] = msg_byte(r->seed, ci, (uint32_t)(x - r->conn[ci].s), x->n_sends, i);
	o = op_new(r);
	o->kind = send ? K_SEND : K_RECV;
	o->conn = (int16_t)ci;
	o->side = (uint8_t)(x - r->conn[ci].s);
	o->ep = x->ep;
	o->len = len;
	o->slot = want == 0 ? slot : -1;
	o->mr = mri >= 0 ? mri : -1;
	rc = send ? pcm_tp_send(x->h, mh, buf, len, (uint64_t)(o - r->ops))
		  : pcm_tp_recv(x->h, mh, buf, len, (uint64_t)(o - r->ops));
	if (expect(r, send ? "send" : "recv", rc, want) < 0)
		return -1;
	if (rc < 0) {
		if (slot >= 0 && want == 0)
			m->slot_used[slot] = false;
		r->n_ops--;
		return 0;
	}
	o->k = send ? x->n_sends++ : x->n_recvs++;
	if (!send) {
		uint64_t *caps = realloc(x->recv_cap, (size_t)(o->k + 1) * sizeof(*caps));

		if (!caps)
			return fail(r, "out of memory");
		x->recv_cap = caps;
		caps[o->k] = len;
		x->recv_cap_n = o->k + 1;
	}
	if (send)
		x->out_sends++;
	else
		x->out_recvs++;
	m->outstanding++;
	if (o->mr >= 0)
		m->mr[o->mr].busy++;
	return 0;
}

static int act_close(struct run *r, const struct action *a)
{
	uint32_t ci;
	struct side *x = pick_side(r, a->x, a->a, &ci);
	int rc;

	if (!x)
		return 0;
	if (settle(r) < 0) /* so the close races nothing */
		return -1;
	rc = pcm_tp_conn_close(x->h);
	if (expect(r, "close", rc, x->closed || x->gone ? -ENOTCONN : 0) < 0)
		return -1;
	x->closed = true;
	return 0;
}

static int act_swap(struct run *r, const struct action *a)
{
	uint32_t ci;
	struct side *x = pick_side(r, a->x, a->a, &ci);
	struct pcm_tp_conn_opts o = {.policy = policies[a->c % 3],
				     .mode = (enum pcm_tp_shell_mode)(a->y % 4)};
	int want, rc;

	if (!x)
		return 0;
	want = post_state(x);
	if (want == 0 && r->conn[ci].s[!(x - r->conn[ci].s)].closed)
		return 0; /* the peer's reset may or may not have reached it yet: no prediction */
	rc = pcm_tp_conn_set_policy(x->h, &o);
	if (expect(r, "set_policy", rc, want) < 0)
		return -1;
	if (rc == 0) {
		x->policy = a->c % 3;
		x->mode = (int)(a->y % 4);
	}
	return 0;
}

static int act_query(struct run *r, const struct action *a)
{
	uint32_t ci;
	struct side *x = pick_side(r, a->x, a->a, &ci);
	struct pcm_tp_conn_info info;
	int rc;

	if (!x)
		return 0;
	rc = pcm_tp_conn_query(x->h, &info);
	if (expect(r, "conn_query", rc, x->closed || x->gone ? -ENOTCONN : 0) < 0)
		return -1;
	if (rc == 0 && (strcmp(info.policy, policies[x->policy]) || (int)info.mode != x->mode))
		return fail(r, "conn %u side %d runs %s mode %d, the model says %s mode %d", ci,
			    (int)(x - r->conn[ci].s), info.policy, (int)info.mode,
			    policies[x->policy], x->mode);
	return 0;
}

static int act_reg(struct run *r, const struct action *a)
{
	struct mep *m = &r->eps[a->a % N_EPS];
	uint32_t first = a->x % N_SLOTS, n = 1 + a->y % (N_SLOTS - first), live = 0;
	struct mr *mr;
	int rc;

	for (uint32_t i = 0; i < m->n_mr; i++)
		live += m->mr[i].live;
	if (live >= N_MRS || m->n_mr == N_MRS * 4)
		return 0;
	mr = &m->mr[m->n_mr];
	rc = pcm_tp_mr_reg(m->ep, slot_buf(m, (int)first), (size_t)n * SLOT_BYTES, &mr->h);
	if (expect(r, "mr_reg", rc, 0) < 0)
		return -1;
	mr->live = true;
	mr->first_slot = first;
	mr->n_slots = n;
	mr->busy = 0;
	m->n_mr++;
	return 0;
}

static int act_dereg(struct run *r, const struct action *a)
{
	struct mep *m = &r->eps[a->a % N_EPS];
	struct mr *mr;
	int rc;

	if (!m->n_mr)
		return 0;
	mr = &m->mr[a->x % m->n_mr];
	rc = pcm_tp_mr_dereg(mr->h);
	if (expect(r, "mr_dereg", rc, !mr->live ? -EINVAL : mr->busy ? -EBUSY : 0) < 0)
		return -1;
	if (rc == 0)
		mr->live = false;
	return 0;
}

/* Memory freed while a receive uses it: freed when the receive's completion is taken. */
static int act_free_busy(struct run *r, const struct action *a)
{
	uint32_t ci;
	struct side *x = pick_side(r, a->x, a->a, &ci);
	struct mop *o;
	uint64_t *caps;
	uint8_t *p;
	int rc;

	if (!x || post_state(x) || admit(r, x, false) || r->n_ops == MAX_OPS || racy(r, ci, x))
		return 0;
	p = pcm_tp_mem_alloc(r->eps[x->ep].ep, 4096);
	if (!p)
		return fail(r, "mem_alloc: %s", pcm_tp_last_error());
	caps = realloc(x->recv_cap, (size_t)(x->n_recvs + 1) * sizeof(*caps));
	if (!caps)
		return fail(r, "out of memory");
	x->recv_cap = caps;
	o = op_new(r);
	o->kind = K_RECV;
	o->conn = (int16_t)ci;
	o->side = (uint8_t)(x - r->conn[ci].s);
	o->ep = x->ep;
	o->len = 0; /* a capacity of 0: only an empty message fits, a longer one fails both */
	rc = pcm_tp_recv(x->h, NULL, p, 0, (uint64_t)(o - r->ops));
	pcm_tp_mem_free(r->eps[x->ep].ep, p);
	if (expect(r, "recv into memory then freed", rc, 0) < 0)
		return -1;
	o->k = x->n_recvs++;
	caps[o->k] = 0;
	x->recv_cap_n = o->k + 1;
	x->out_recvs++;
	r->eps[x->ep].outstanding++;
	rc = pcm_tp_send(x->h, NULL, p, 1, 0);
	return expect(r, "send from memory freed", rc, -EINVAL);
}

static int act_misuse(struct run *r, const struct action *a)
{
	struct mep *m = &r->eps[a->a % N_EPS];
	uint32_t ci = 0;
	struct side *x = pick_side(r, a->x, a->b, &ci);
	struct pcm_tp_conn_opts bad = {.mode = (enum pcm_tp_shell_mode)7};
	struct pcm_tp_completion c;
	static char long_addr[100];
	int st = x ? (x->gone ? -ENOTCONN : 0) : 0;
	int live = x ? post_state(x) : 0;

	memset(long_addr, 'y', sizeof(long_addr) - 1);
	switch (a->c % 14) {
	case 0:
		return expect(r, "send(NULL)", pcm_tp_send(NULL, NULL, m->arena, 1, 0), -EINVAL);
	case 1:
		return expect(r, "poll(out NULL)", pcm_tp_poll(m->ep, NULL, 1), -EINVAL);
	case 2:
		return x ? expect(r, "set_policy(NULL)", pcm_tp_conn_set_policy(x->h, NULL),
				  st ? st : -EINVAL)
			 : 0;
	case 3:
		return x ? expect(r, "set_policy(bad mode)", pcm_tp_conn_set_policy(x->h, &bad),
				  st ? st : -EINVAL)
			 : 0;
	case 4:
		return expect(r, "connect(NULL)", pcm_tp_connect(m->ep, NULL, NULL, 0), -EINVAL);
	case 5:
		return expect(r, "connect(long)", pcm_tp_connect(m->ep, long_addr, NULL, 0),
			      -ENAMETOOLONG);
	case 6:
		return expect(r, "listen again", pcm_tp_listen(m->ep, "again"), -EADDRINUSE);
	case 7:
		return expect(r, "accept(not listening)", pcm_tp_accept(r->eps[N_EPS].ep, 0),
			      -EINVAL);
	case 8:
		pcm_tp_mem_free(m->ep, m->arena + 1);
		r->rcs[r->at] = 0;
		return strstr(pcm_tp_last_error(), "not memory") ? 0
								  : fail(r, "mem_free(bogus): '%s'",
									 pcm_tp_last_error());
	case 9:
		return x ? expect(r, "send(NULL buffer)", pcm_tp_send(x->h, NULL, NULL, 5, 0),
				  live ? live : -EINVAL)
			 : 0;
	case 10:
		return x ? expect(r, "send(wrapping)",
				  pcm_tp_send(x->h, NULL, (void *)(UINTPTR_MAX - 8), 64, 0),
				  live ? live : -EINVAL)
			 : 0;
	case 11:
		return x ? expect(r, "recv(mr: a connection)",
				  pcm_tp_recv(x->h, (struct pcm_tp_mr *)x->h, m->arena, 1, 0),
				  st ? st : -EINVAL)
			 : 0;
	case 12:
		return expect(r, "mr_dereg(NULL)", pcm_tp_mr_dereg(NULL), -EINVAL);
	default:
		(void)c;
		return x ? expect(r, "send(too long)",
				  pcm_tp_send(x->h, NULL, r->eps[x->ep].arena,
					      r->lim.max_message_bytes + 1, 0),
				  live ? live : -EMSGSIZE)
			 : 0;
	}
}

/* Empty sends until the limits refuse one: exactly where pcm_tp_endpoint_limits() says. */
static int act_flood(struct run *r, const struct action *a)
{
	uint32_t ci, n = 0, want_n;
	struct side *x = pick_side(r, a->x, a->a, &ci);
	int rc;

	if (!x || post_state(x) || racy(r, ci, x))
		return 0;
	want_n = r->lim.sends_per_conn - x->out_sends;
	if (r->lim.posts_per_endpoint - r->eps[x->ep].outstanding < want_n)
		want_n = r->lim.posts_per_endpoint - r->eps[x->ep].outstanding;
	if (r->n_ops + want_n + 1 > MAX_OPS)
		return 0;
	for (;;) {
		struct mop *o = op_new(r);

		o->kind = K_SEND;
		o->conn = (int16_t)ci;
		o->side = (uint8_t)(x - r->conn[ci].s);
		o->ep = x->ep;
		rc = pcm_tp_send(x->h, NULL, r->eps[x->ep].arena, 0, (uint64_t)(o - r->ops));
		if (rc < 0) {
			r->n_ops--;
			break;
		}
		o->k = x->n_sends++;
		x->out_sends++;
		r->eps[x->ep].outstanding++;
		n++;
	}
	if (expect(r, "flood's last send", rc, -EAGAIN) < 0)
		return -1;
	r->rcs[r->at] = (int)n;
	if (n != want_n)
		return fail(r, "flood: %u sends taken, the limits say %u", n, want_n);
	return 0;
}

/* A handle whose CLOSE was taken, and a poll since: refused, never read. */
static int act_stale(struct run *r, const struct action *a)
{
	uint32_t ci;
	struct side *x = pick_side(r, a->x, a->a, &ci);
	struct pcm_tp_conn_info info;

	if (!x || !x->gone)
		return 0;
	if (expect(r, "close(gone)", pcm_tp_conn_close(x->h), -ENOTCONN) < 0 ||
	    expect(r, "send(gone)", pcm_tp_send(x->h, NULL, r->eps[x->ep].arena, 1, 0),
		   -ENOTCONN) < 0)
		return -1;
	return expect(r, "conn_query(gone)", pcm_tp_conn_query(x->h, &info), -ENOTCONN);
}

static int act(struct run *r, const struct action *a)
{
	switch (a->type) {
	case A_CONNECT:
	case A_CONNECT_NOWHERE:
		return act_connect(r, a, a->type == A_CONNECT_NOWHERE);
	case A_SEND:
	case A_RECV:
	case A_SEND_MR:
		return act_post(r, a, a->type != A_RECV, a->type == A_SEND_MR);
	case A_SETTLE:
		return settle(r);
	case A_CLOSE:
		return act_close(r, a);
	case A_SWAP:
		return act_swap(r, a);
	case A_QUERY:
		return act_query(r, a);
	case A_REG:
		return act_reg(r, a);
	case A_DEREG:
		return act_dereg(r, a);
	case A_FREE_BUSY:
		return act_free_busy(r, a);
	case A_MISUSE:
		return act_misuse(r, a);
	case A_FLOOD:
		return act_flood(r, a);
	default:
		return act_stale(r, a);
	}
}

/* The end of a seed: every connection closed, every CLOSE taken, every region deregistered. */
static int finish(struct run *r)
{
	r->at = -1;
	if (settle(r) < 0)
		return -1;
	/* the dialers' ends first, then the acceptors': two closes never race */
	for (int s = 0; s < 2; s++) {
		for (uint32_t i = 0; i < r->n_conns; i++) {
			struct side *x = &r->conn[i].s[s];

			if (r->conn[i].up && !x->closed) {
				int rc = pcm_tp_conn_close(x->h);

				if (rc < 0)
					return fail(r, "the last close: %s", pcm_tp_last_error());
				x->closed = true;
			}
		}
		if (settle(r) < 0)
			return -1;
	}
	for (int e = 0; e <= N_EPS; e++) {
		struct mep *m = &r->eps[e];

		for (uint32_t i = 0; i < m->n_mr; i++)
			if (m->mr[i].live && pcm_tp_mr_dereg(m->mr[i].h) < 0)
				return fail(r, "the last dereg: %s", pcm_tp_last_error());
		if (m->outstanding)
			return fail(r, "endpoint %d: %u operations never completed", e,
				    m->outstanding);
	}
	/* and nothing more comes */
	for (int i = 0; i < 20; i++)
		for (int e = 0; e <= N_EPS; e++) {
			struct pcm_tp_completion c;

			if (pcm_tp_poll(r->eps[e].ep, &c, 1) != 0)
				return fail(r, "endpoint %d: a completion after the end (op %d, "
					       "cookie %" PRIu64 ")",
					    e, c.op, c.cookie);
		}
	return 0;
}

static void run_free(struct run *r)
{
	for (uint32_t i = 0; i < r->n_conns; i++)
		for (int s = 0; s < 2; s++)
			free(r->conn[i].s[s].recv_cap);
	free(r->ops);
	free(r->rcs);
	free(r->seen);
}

static int run_seed(struct run *r, struct mep *eps, bool daemon, uint64_t seed,
		    const struct action *acts, const uint32_t *idx, uint32_t n)
{
	memset(r, 0, sizeof(*r));
	r->daemon = daemon;
	r->seed = seed;
	r->acts = acts;
	r->idx = idx;
	r->n_acts = n;
	r->eps = eps;
	r->ops = calloc(MAX_OPS, sizeof(*r->ops));
	r->rcs = calloc(MAX_ACTIONS + 1, sizeof(*r->rcs));
	r->seen = calloc(MAX_OPS + 4 * N_CONNS, sizeof(*r->seen));
	for (int e = 0; e <= N_EPS; e++) {
		eps[e].outstanding = 0;
		eps[e].n_mr = 0;
		memset(eps[e].slot_used, 0, sizeof(eps[e].slot_used));
	}
	if (!r->ops || !r->rcs || !r->seen)
		return fail(r, "out of memory");
	pcm_tp_endpoint_limits(eps[0].ep, &r->lim);
	for (uint32_t i = 0; i < n; i++) {
		r->at = (int)idx[i];
		if (act(r, &acts[idx[i]]) < 0)
			return -1;
	}
	return finish(r);
}

/* ---- the two backends compared ------------------------------------------------------------------ */

static int by_key(const void *pa, const void *pb)
{
	const struct seen *a = pa, *b = pb;

	if (a->conn != b->conn)
		return a->conn < b->conn ? -1 : 1;
	if (a->side != b->side)
		return a->side < b->side ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	/*
	 * By k: matching is FIFO (receive k takes message k, checked byte for byte),
	 * but completions are not ordered: a message too long for its receive ends
	 * both at once, before the message ahead of it has finished.
	 */
	if (a->k != b->k)
		return a->k < b->k ? -1 : 1;
	return 0;
}

static void sort_seen(struct seen *s, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct seen v = s[i];
		uint32_t j = i;

		while (j > 0 && by_key(&s[j - 1], &v) > 0) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = v;
	}
}

static void compare(struct run *a, struct run *b, char *why, size_t len)
{
	for (uint32_t i = 0; i < a->n_acts; i++) {
		uint32_t k = a->idx[i];

		if (a->rcs[k] != b->rcs[k]) {
			snprintf(why, len, "action #%u (%s): in process %d, through pcmd %d", k,
				 act_names[a->acts[k].type], a->rcs[k], b->rcs[k]);
			return;
		}
	}
	sort_seen(a->seen, a->n_seen);
	sort_seen(b->seen, b->n_seen);
	for (uint32_t i = 0; i < a->n_seen || i < b->n_seen; i++) {
		const struct seen *x = i < a->n_seen ? &a->seen[i] : NULL;
		const struct seen *y = i < b->n_seen ? &b->seen[i] : NULL;

		if (!x || !y || memcmp(x, y, sizeof(*x)) != 0) {
			const struct seen *z = x ? x : y;

			snprintf(why, len,
				 "completion %u of conn %u side %u kind %u differs: in process %s "
				 "#%u %d %" PRIu64 ", through pcmd %s #%u %d %" PRIu64,
				 i, z->conn, z->side, z->kind, x ? "" : "none", x ? x->k : 0,
				 x ? x->status : 0, x ? x->bytes : 0, y ? "" : "none", y ? y->k : 0,
				 y ? y->status : 0, y ? y->bytes : 0);
			return;
		}
	}
}

struct shared {
	uint64_t cur;        /* the seed running */
	uint64_t done, msgs, actions;
	char why[640];
};

static struct shared *sh;
static const char *g_sock;

/* Run @seed (only the actions @keep, if any) in both backends. Return: 0, or -1 (sh->why). */
static int run_pair(uint64_t seed, const uint32_t *keep, uint32_t n_keep, struct mep *ie,
		    struct mep *de)
{
	static struct action acts[MAX_ACTIONS];
	static uint32_t idx[MAX_ACTIONS];
	uint32_t n = gen_actions(seed, acts), m = 0;
	struct run a, b;
	int rc;

	for (uint32_t i = 0; i < (keep ? n_keep : n); i++)
		if (!keep || keep[i] < n)
			idx[m++] = keep ? keep[i] : i;
	rc = run_seed(&a, ie, false, seed, acts, idx, m);
	if (rc == 0)
		rc = run_seed(&b, de, true, seed, acts, idx, m);
	if (rc < 0) {
		snprintf(sh->why, sizeof(sh->why), "%s", a.why[0] ? a.why : b.why);
	} else {
		sh->why[0] = '\0';
		compare(&a, &b, sh->why, sizeof(sh->why));
		rc = sh->why[0] ? -1 : 0;
		for (uint32_t i = 0; i < a.n_seen; i++)
			sh->msgs += a.seen[i].kind == K_RECV && a.seen[i].status == 0;
		sh->actions += m;
		run_free(&b);
	}
	run_free(&a);
	return rc;
}

/* A child runs seeds [first, first + n) (or one seed with @keep); its exit status says how. */
static int child(uint64_t first, uint64_t n, const uint32_t *keep, uint32_t n_keep)
{
	static struct mep ie[N_EPS + 1], de[N_EPS + 1];

	if (eps_open(ie, false, NULL) < 0 || eps_open(de, true, g_sock) < 0) {
		snprintf(sh->why, sizeof(sh->why), "endpoints: %s", pcm_tp_last_error());
		return 2;
	}
	for (uint64_t s = first; s < first + n; s++) {
		sh->cur = s;
		alarm(SEED_ALARM_S);
		if (run_pair(s, keep, n_keep, ie, de) < 0)
			return 1;
		sh->done++;
	}
	alarm(0);
	eps_close(ie);
	eps_close(de);
	return 0;
}

/* Fork a child for child(); return 0 (all passed) or -1 with sh->why and sh->cur set. */
static int in_child(uint64_t first, uint64_t n, const uint32_t *keep, uint32_t n_keep)
{
	pid_t pid;
	int status;

	sh->why[0] = '\0';
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(child(first, n, keep, n_keep));
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		snprintf(sh->why, sizeof(sh->why), "fork: %s", strerror(errno));
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		snprintf(sh->why, sizeof(sh->why), "%s (signal %d)",
			 WTERMSIG(status) == SIGALRM ? "a hang: the seed ran past its alarm"
						     : "a crash",
			 WTERMSIG(status));
	return -1;
}

/* Shrink seed @seed's actions while it still fails; print them and a one-line reproduction. */
static void shrink(const char *prog, uint64_t seed, const char *first_why)
{
	static struct action acts[MAX_ACTIONS];
	uint32_t keep[MAX_ACTIONS], n = gen_actions(seed, acts), trials = 0;
	char why[sizeof(sh->why)];

	snprintf(why, sizeof(why), "%s", first_why);
	for (uint32_t i = 0; i < n; i++)
		keep[i] = i;
	for (uint32_t chunk = n / 2; chunk >= 1; chunk /= 2) {
		for (uint32_t at = 0; at + chunk <= n && n > 1;) {
			uint32_t trial[MAX_ACTIONS], m = 0;

			for (uint32_t i = 0; i < n; i++)
				if (i < at || i >= at + chunk)
					trial[m++] = keep[i];
			trials++;
			if (in_child(seed, 1, trial, m) < 0) {
				memcpy(keep, trial, m * sizeof(*keep));
				n = m;
				snprintf(why, sizeof(why), "%s", sh->why);
			} else {
				at += chunk;
			}
		}
		if (chunk == 1)
			break;
	}
	printf("seed %" PRIu64 " shrunk to %u actions (%u trials): %s\n", seed, n, trials, why);
	for (uint32_t i = 0; i < n; i++) {
		const struct action *a = &acts[keep[i]];

		printf("  #%u %s a=%u b=%u c=%u x=%u y=%u\n", keep[i], act_names[a->type], a->a, a->b,
		       a->c, a->x, a->y);
	}
	printf("repro: %s --seed %" PRIu64 " --keep ", prog, seed);
	for (uint32_t i = 0; i < n; i++)
		printf("%s%u", i ? "," : "", keep[i]);
	printf("\n");
}

static uint32_t parse_keep(const char *s, uint32_t *out)
{
	uint32_t n = 0;

	while (*s && n < MAX_ACTIONS) {
		char *end;

		out[n++] = (uint32_t)strtoul(s, &end, 10);
		s = *end == ',' ? end + 1 : end;
		if (end == s && *s)
			break;
	}
	return n;
}

int main(int argc, char **argv)
{
	static const char yaml[] = "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
				   "datapath: {kind: null}\n";
	uint64_t seeds = 24, first = 1, failed = 0, t0;
	uint32_t keep[MAX_ACTIONS], n_keep = 0;
	bool one = false;
	struct pcmd_proc pcmd;
	const char *env = getenv("PCM_TP_SEEDS");

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			first = strtoull(argv[++i], NULL, 0);
			seeds = 1;
			one = true;
		} else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc) {
			n_keep = parse_keep(argv[++i], keep);
		} else if (!one && i == 1) {
			seeds = strtoull(argv[i], NULL, 0);
		} else if (!one && i == 2) {
			first = strtoull(argv[i], NULL, 0);
		}
	}
	if (env && env[0] && !one)
		seeds = strtoull(env, NULL, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	if (harness_start(&pcmd, yaml, 0, NULL) < 0) {
		fprintf(stderr, "pcmd did not start\n");
		return 2;
	}
	g_sock = pcmd.sock;
	t0 = harness_now_ms();
	for (uint64_t s = first; s < first + seeds;) {
		uint64_t n = first + seeds - s < BATCH ? first + seeds - s : BATCH;

		sh->cur = s;
		if (in_child(s, n, n_keep ? keep : NULL, n_keep) == 0) {
			s += n;
			continue;
		}
		failed++;
		printf("seed %" PRIu64 " failed: %s\n", sh->cur, sh->why);
		if (!n_keep)
			shrink(argv[0], sh->cur, sh->why);
		s = sh->cur + 1;
		if (failed >= 3)
			break;
	}
	printf("test_tp_backends_random: %" PRIu64 " seed(s) from %" PRIu64 " in %.1f s, %" PRIu64
	       " failed; %" PRIu64 " actions, %" PRIu64 " messages received and checked, each in "
	       "process and through pcmd\n",
	       seeds, first, (double)(harness_now_ms() - t0) / 1000.0, failed, sh->actions,
	       sh->msgs);
	if (harness_finish(&pcmd) < 0)
		failed++;
	return failed ? 1 : 0;
}
