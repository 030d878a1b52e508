// SPDX-License-Identifier: MIT
/*
 * test_pcmd_channel_random.c - seeded randomized test of pcmd's channels, in
 * process (inproc.h), deterministic per seed.
 *
 * Several clients with random region and ring sizes open connections in
 * pairs and write random streams of descriptors straight into their rings:
 * valid sends and receives (with seeded data), and invalid ones of every kind
 * (outside the region, wrapping, too long, unknown or stale conn ids, bad op,
 * flags or reserved bits, closed conns). Clients poll their completions at
 * random (or stop for a while, filling their rings), close connections, open
 * new ones, and die.
 *
 * Invariants, checked on every run:
 * - every valid descriptor of a live client completes exactly once, with 0 or
 *   a transport error (-EMSGSIZE, -ECONNRESET, -ECONNABORTED); a successful
 *   receive holds exactly the bytes of the send it matched (FIFO);
 * - every invalid descriptor completes exactly once with its specific error;
 * - no completion names a cookie that is not outstanding;
 * - at the end nothing is leaked: pcmd has no clients, flows or region bytes,
 *   every policy's flow count is 0, the data plane holds no regions, flows,
 *   listeners or events, and the process has the descriptors it started with.
 *
 * Built with PCMD_RANDOM_SOFTNIC (test_pcmd_channel_random_softnic), the same
 * runs go through pcmd's own data plane on the embedded softnic fabric: each
 * client its own emulated host, the engines on the fabric thread. The
 * invariants are the same, and at the end every host is detached too; a run
 * is then no longer deterministic (two threads), so a failing seed usually,
 * not always, fails again.
 *
 * Built with PCMD_RANDOM_NULL (test_pcmd_channel_random_null), they go
 * through pcmd's data plane on datapath null with two engine threads that
 * sleep when idle: each client's descriptor path runs on its region's engine
 * thread (a port), woken by the client's doorbell, as in a running pcmd.
 *
 * A failing seed prints one line that reproduces it; the shrinker then cuts
 * the run (fewer clients, fewer steps) while it still fails and prints the
 * smallest failing case. PCMD_RANDOM_SEED=N runs one seed; PCMD_RANDOM_SEEDS=K
 * sets how many (default 300; the `slow` suite runs 20,000).
 */
#include <dirent.h>
#include <stdatomic.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "plane_loopback.h"
#include "harness.h"
#include "inproc.h"
#if defined(PCMD_RANDOM_SOFTNIC)
#include "plane_engine.h"
#define PCMD_RANDOM_ENGINE 1
#define DATAPATH_YAML "datapath: {kind: softnic, chunk_bytes: 4096, softnic: {hosts: 8}}\n"
#define BINARY "test_pcmd_channel_random_softnic"
#define HOSTS_DETACH 1 /* every host is detached at the end */
#elif defined(PCMD_RANDOM_NULL)
#include "plane_engine.h"
#define PCMD_RANDOM_ENGINE 1
#define DATAPATH_YAML                                                                              \
	"datapath: {kind: null, chunk_bytes: 4096}\nengines: {count: 2, spin_ns: 0}\n"
#define BINARY "test_pcmd_channel_random_null"
#define HOSTS_DETACH 0
#else
#define DATAPATH_YAML "datapath: {chunk_bytes: 4096}\n"
#define BINARY "test_pcmd_channel_random"
#endif

#define MAX_CLIENTS 6
#define MAX_PAIRS 24
#define BUF_SLOTS 16
#define MAX_MESSAGE (64u << 10)

static const char config_yaml[] =
    "log_level: error\n"
    "socket: {path: /tmp/pcmd-random-unused.sock, group: \"\"}\n" DATAPATH_YAML "limits:\n"
    "  max_message_bytes: 64KiB\n"
    "  outstanding_per_client: 48\n"
    "  flows_per_client: 8\n"
    "  listeners_per_client: 8\n";

enum { EXPECT_TRANSPORT = 1, EXPECT_ERROR, EXPECT_CLOSED };

struct op {
	uint64_t cookie;
	uint8_t op;
	uint8_t kind; /* EXPECT_* */
	int error;    /* EXPECT_ERROR: the status */
	int client;
	int pair, dir;	/* valid data ops: which stream */
	uint64_t index; /* position in the stream (FIFO matching) */
	uint64_t len;
	int slot; /* buffer slot, -1 none */
	int done;
	uint32_t conn;	 /* the conn id it names */
	uint32_t sq_pos; /* its position in the submission ring */
	int or_closed;	 /* its conn closed before pcmd took it: -ENOTCONN/-EBADF allowed */
};

struct dir_stream {
	uint64_t sends, recvs; /* posted (accepted) so far */
	uint64_t *send_len;    /* by index */
	uint64_t cap;
};

struct pair {
	int a, b;		/* clients */
	uint32_t conn[2];	/* a's conn id, b's conn id */
	int open[2];		/* the side has not closed it */
	struct dir_stream s[2]; /* 0: a -> b, 1: b -> a */
};

struct client {
	struct inproc_client ic;
	int alive;
	int quiet; /* steps left without polling */
	uint64_t slot_bytes;
	int slot_busy[BUF_SLOTS];
	char listen_addr[32];
};

struct run {
	uint64_t rng;
	struct inproc ip;
	struct client cl[MAX_CLIENTS];
	int n_clients;
	struct pair pairs[MAX_PAIRS];
	int n_pairs;
	struct op *ops;
	size_t n_ops, cap_ops;
	uint64_t next_cookie;
	uint32_t n_addrs;
	char why[512];
	uint64_t valid, invalid, deaths;
};

static uint64_t rnd(struct run *r)
{
	uint64_t x = (r->rng += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t below(struct run *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static int failf(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int failf(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->why[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	return -1;
}

static struct op *new_op(struct run *r)
{
	if (r->n_ops == r->cap_ops) {
		r->cap_ops = r->cap_ops ? r->cap_ops * 2 : 1024;
		r->ops = realloc(r->ops, r->cap_ops * sizeof(*r->ops));
	}
	memset(&r->ops[r->n_ops], 0, sizeof(r->ops[0]));
	r->ops[r->n_ops].cookie = ++r->next_cookie;
	r->ops[r->n_ops].slot = -1;
	return &r->ops[r->n_ops++];
}

static struct op *find_op(struct run *r, uint64_t cookie)
{
	/* Cookies are 1, 2, 3... in creation order: a direct index. */
	if (cookie == 0 || cookie > r->n_ops)
		return NULL;
	return &r->ops[cookie - 1];
}

static uint64_t data_seed(int pair, int dir, uint64_t index)
{
	return ((uint64_t)pair << 48) ^ ((uint64_t)dir << 40) ^ index ^ 0xabcdef;
}

/* ---- setup ------------------------------------------------------------------------------ */

static int open_client(struct run *r, int i)
{
	static const uint32_t rings[] = {8, 16, 32, 64};
	struct client *c = &r->cl[i];
	uint32_t sq = rings[below(r, 4)], cq = rings[below(r, 4)];
	uint64_t bytes = (uint64_t)(1 + below(r, 16)) * 64 * 1024;

	if (cq < sq)
		cq = sq;
	memset(c, 0, sizeof(*c));
	if (inproc_client_open(&r->ip, &c->ic, PCMD_ROLE_APP, bytes, sq, cq) < 0)
		return failf(r, "client %d: open: %s", i, c->ic.last_error);
	c->alive = 1;
	c->slot_bytes = c->ic.lay.data_bytes / BUF_SLOTS;
	snprintf(c->listen_addr, sizeof(c->listen_addr), "rnd-%d", i);
	return 0;
}

static void pump(struct run *r, int rounds)
{
	inproc_pump(&r->ip, rounds);
}

/* CQEs of connect/accept come on the rings; find them among the client's completions. */
static int take_conn_cqe(struct run *r, int ci, uint8_t op, uint64_t cookie, uint32_t *conn_id);

static int open_pair(struct run *r, int a, int b)
{
	struct pcmd_req_listen l = {0};
	struct pcmd_req_accept ac = {.cookie = (1ull << 63) | r->next_cookie};
	struct pcmd_req_connect cn = {.cookie = (1ull << 62) | r->next_cookie};
	struct pcmd_rep_listen lrep;
	struct pair *p;
	int rc;

	if (r->n_pairs == MAX_PAIRS)
		return 0;
	p = &r->pairs[r->n_pairs];
	memset(p, 0, sizeof(*p));
	p->a = a;
	p->b = b;
	snprintf(l.addr, sizeof(l.addr), "%s-%u", r->cl[b].listen_addr, ++r->n_addrs);
	if (inproc_request(&r->ip, &r->cl[b].ic, &l, PCMD_MSG_LISTEN, sizeof(l), &lrep,
			   sizeof(lrep)) < 0)
		return r->cl[b].ic.last_status == -EMFILE
			   ? 0
			   : failf(r, "listen: %s", r->cl[b].ic.last_error);
	ac.listener_id = lrep.listener_id;
	if (inproc_request(&r->ip, &r->cl[b].ic, &ac, PCMD_MSG_ACCEPT, sizeof(ac), NULL, 0) < 0)
		return r->cl[b].ic.last_status == -EMFILE || r->cl[b].ic.last_status == -ENOBUFS
			   ? 0
			   : failf(r, "accept: %s", r->cl[b].ic.last_error);
	snprintf(cn.addr, sizeof(cn.addr), "%s", l.addr);
	cn.opts.mode = PCMD_SHELL_DEFAULT;
	rc = inproc_request(&r->ip, &r->cl[a].ic, &cn, PCMD_MSG_CONNECT, sizeof(cn), NULL, 0);
	if (rc == -EMFILE || rc == -ENOBUFS)
		return 0; /* limits: a legal refusal; the accept waits until the end */
	if (rc < 0)
		return failf(r, "connect: %s", r->cl[a].ic.last_error);
	pump(r, 4);
	if (take_conn_cqe(r, a, PCMD_OP_CONNECT, cn.cookie, &p->conn[0]) < 0 ||
	    take_conn_cqe(r, b, PCMD_OP_ACCEPT, ac.cookie, &p->conn[1]) < 0)
		return -1;
	p->open[0] = p->open[1] = 1;
	r->n_pairs++;
	return 0;
}

/* ---- checking completions --------------------------------------------------------------- */

static int check_data_completion(struct run *r, struct op *o, const struct pcmd_cqe *e)
{
	struct pair *p = &r->pairs[o->pair];
	struct dir_stream *s = &p->s[o->dir];
	struct client *c = &r->cl[o->client];
	size_t bad;

	if (e->status != 0 && e->status != -EMSGSIZE && e->status != -ECONNRESET &&
	    e->status != -ECONNABORTED)
		return failf(r, "cookie %llu (%s %llu bytes) completed with %d",
			     (unsigned long long)o->cookie, o->op == PCMD_OP_SEND ? "send" : "recv",
			     (unsigned long long)o->len, e->status);
	if (e->status == 0 && o->op == PCMD_OP_SEND && e->bytes != o->len)
		return failf(r, "send cookie %llu: %llu bytes reported, %llu posted",
			     (unsigned long long)o->cookie, (unsigned long long)e->bytes,
			     (unsigned long long)o->len);
	if (e->status == 0 && o->op == PCMD_OP_RECV) {
		uint64_t want;

		if (o->index >= s->sends)
			return failf(r, "recv cookie %llu (index %llu) completed with no send",
				     (unsigned long long)o->cookie, (unsigned long long)o->index);
		want = s->send_len[o->index];
		if (e->bytes != want)
			return failf(r, "recv cookie %llu: %llu bytes, its send had %llu",
				     (unsigned long long)o->cookie, (unsigned long long)e->bytes,
				     (unsigned long long)want);
		if (harness_check(c->ic.data + (uint64_t)o->slot * c->slot_bytes, want,
				  data_seed(o->pair, o->dir, o->index), &bad) < 0)
			return failf(r,
				     "recv cookie %llu (stream %d.%d message %llu) differs at "
				     "byte %zu",
				     (unsigned long long)o->cookie, o->pair, o->dir,
				     (unsigned long long)o->index, bad);
	}
	return 0;
}

static int on_cqe(struct run *r, int ci, const struct pcmd_cqe *e)
{
	struct op *o = find_op(r, e->cookie);

	if (!o || o->client != ci)
		return failf(r, "client %d got a completion for cookie %llu it never posted", ci,
			     (unsigned long long)e->cookie);
	if (o->done)
		return failf(r, "cookie %llu completed twice", (unsigned long long)e->cookie);
	o->done = 1;
	if (o->slot >= 0)
		r->cl[ci].slot_busy[o->slot] = 0;
	if (o->or_closed && (e->status == -ENOTCONN || e->status == -EBADF))
		return 0;
	if (o->kind == EXPECT_ERROR && e->status != o->error)
		return failf(r, "invalid descriptor cookie %llu completed with %d, expected %d",
			     (unsigned long long)o->cookie, e->status, o->error);
	if (o->kind == EXPECT_CLOSED && e->status != -ENOTCONN && e->status != -EBADF)
		return failf(r, "descriptor on a closed conn (cookie %llu) completed with %d",
			     (unsigned long long)o->cookie, e->status);
	if (o->kind == EXPECT_TRANSPORT)
		return check_data_completion(r, o, e);
	return 0;
}

static int take_conn_cqe(struct run *r, int ci, uint8_t op, uint64_t cookie, uint32_t *conn_id)
{
	struct pcmd_cqe e;

	for (int tries = 0; tries < 64; tries++) {
		while (inproc_take(&r->cl[ci].ic, &e)) {
			if (e.cookie == cookie && e.op == op) {
				if (e.status)
					return failf(r, "client %d: %s completed with %d", ci,
						     op == PCMD_OP_CONNECT ? "connect" : "accept",
						     e.status);
				*conn_id = e.conn_id;
				return 0;
			}
			if (on_cqe(r, ci, &e) < 0)
				return -1;
		}
		pump(r, 1);
	}
	return failf(r, "client %d: no %s completion", ci,
		     op == PCMD_OP_CONNECT ? "connect" : "accept");
}

static int drain_client(struct run *r, int ci)
{
	struct pcmd_cqe e;

	while (inproc_take(&r->cl[ci].ic, &e)) {
		/* Late accepts and connects of refused pairs: not data ops. */
		if (e.op == PCMD_OP_ACCEPT || e.op == PCMD_OP_CONNECT)
			continue;
		if (on_cqe(r, ci, &e) < 0)
			return -1;
	}
	return 0;
}

/* ---- actions ---------------------------------------------------------------------------- */

static int free_slot(struct run *r, struct client *c)
{
	int start = (int)below(r, BUF_SLOTS);

	for (int i = 0; i < BUF_SLOTS; i++)
		if (!c->slot_busy[(start + i) % BUF_SLOTS])
			return (start + i) % BUF_SLOTS;
	return -1;
}

/* Post @e (its cookie set here) on @c's ring. Return: its record, or NULL when the ring is full. */
static struct op *submit(struct run *r, struct client *c, struct pcmd_sqe *e)
{
	struct op *o = new_op(r);

	e->cookie = o->cookie;
	o->sq_pos = c->ic.sq.local;
	o->conn = e->conn_id;
	o->op = e->op;
	if (inproc_post(&c->ic, e) < 0) {
		r->n_ops--;
		r->next_cookie--;
		return NULL;
	}
	return o;
}

static void stream_push_send(struct dir_stream *s, uint64_t len)
{
	if (s->sends == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->send_len = realloc(s->send_len, s->cap * sizeof(*s->send_len));
	}
	s->send_len[s->sends++] = len;
}

static int post_valid(struct run *r)
{
	struct pair *p = &r->pairs[below(r, (uint64_t)r->n_pairs)];
	int side = (int)below(r, 2), ci = side ? p->b : p->a, send = (int)below(r, 2);
	struct client *c = &r->cl[ci];
	int dir = send ? side : !side, slot;
	uint64_t max = c->slot_bytes < MAX_MESSAGE ? c->slot_bytes : MAX_MESSAGE;
	struct pcmd_sqe e = {.op = send ? PCMD_OP_SEND : PCMD_OP_RECV, .conn_id = p->conn[side]};
	struct op *o;

	if (!c->alive || !p->open[side] || (slot = free_slot(r, c)) < 0)
		return 0;
	/* Mostly sizes that fit their receive; sometimes larger sends (-EMSGSIZE). */
	e.len = below(r, 4) ? below(r, max / 2 + 1) : below(r, max + 1);
	if (!send)
		e.len = max / 2 + below(r, max / 2 + 1);
	e.offset = (uint64_t)slot * c->slot_bytes;
	/* The buffer is ready before the descriptor is published: pcmd's data path may take it
	 * at once (ports: the data plane's thread serves the ring, not this one's pump). */
	if (send)
		harness_fill(c->ic.data + e.offset, e.len, data_seed((int)(p - r->pairs), dir, p->s[dir].sends));
	else
		memset(c->ic.data + e.offset, 0xee, e.len);
	o = submit(r, c, &e);
	if (!o)
		return 0;
	o->kind = EXPECT_TRANSPORT;
	o->client = ci;
	o->pair = (int)(p - r->pairs);
	o->dir = dir;
	o->len = e.len;
	o->slot = slot;
	c->slot_busy[slot] = 1;
	if (send) {
		o->index = p->s[dir].sends;
		stream_push_send(&p->s[dir], e.len);
	} else {
		o->index = p->s[dir].recvs++;
	}
	r->valid++;
	return 0;
}

static int post_invalid(struct run *r)
{
	int ci = (int)below(r, (uint64_t)r->n_clients), side = 0;
	struct client *c = &r->cl[ci];
	struct pcmd_sqe e = {.op = below(r, 2) ? PCMD_OP_SEND : PCMD_OP_RECV, .len = 16};
	uint32_t conn = 0;
	struct op *o;
	int kind = (int)below(r, 9), expect = -EINVAL, closed = 0;

	if (!c->alive)
		return 0;
	for (int i = 0; i < r->n_pairs; i++) {
		struct pair *p = &r->pairs[i];

		if ((p->a == ci && (side = 0, 1)) || (p->b == ci && (side = 1, 1))) {
			conn = p->conn[side];
			closed = !p->open[side];
			if (below(r, 2))
				break;
		}
	}
	if (!conn)
		kind = 0; /* no conn: only the conn-independent kinds */
	e.conn_id = conn;
	switch (kind) {
	case 0:
		e.conn_id = 0x7000 + (uint32_t)below(r, 0x1000);
		expect = -EBADF;
		break;
	case 1:
		e.offset = c->ic.lay.data_bytes + below(r, 64);
		e.len = 1;
		expect = -EFAULT;
		break;
	case 2:
		e.offset = UINT64_MAX - below(r, 1000);
		e.len = 4096;
		expect = -EFAULT;
		break;
	case 3:
		e.offset = below(r, c->ic.lay.data_bytes);
		e.len = c->ic.lay.data_bytes - e.offset + 1 + below(r, 100);
		expect = e.len > MAX_MESSAGE ? -EMSGSIZE : -EFAULT;
		break;
	case 4:
		e.len = MAX_MESSAGE + 1 + below(r, 1000);
		expect = -EMSGSIZE;
		break;
	case 5:
		e.op = (uint8_t)(5 + below(r, 250));
		break;
	case 6:
		e.flags = (uint8_t)(1 + below(r, 255));
		break;
	case 7:
		e.reserved = (uint16_t)(1 + below(r, 65535));
		break;
	default:
		e.conn_id = conn ^ (0x8000u << 16); /* same index, a generation never reached */
		expect = -EBADF;
		break;
	}
	o = submit(r, c, &e);
	if (!o)
		return 0;
	o->client = ci;
	o->kind = EXPECT_ERROR;
	o->error = expect;
	/* On a conn this side closed, the conn check may come first. */
	if (closed && (kind == 1 || kind == 2 || kind == 3 || kind == 4))
		o->kind = EXPECT_CLOSED;
	r->invalid++;
	return 0;
}

/* Descriptors of @ci on @conn still in the ring (not taken by pcmd) may now be refused. */
static void widen_untaken(struct run *r, int ci, uint32_t conn)
{
	uint32_t head = atomic_load(&r->cl[ci].ic.sq.ctl->head.v);

	for (size_t i = 0; i < r->n_ops; i++) {
		struct op *o = &r->ops[i];

		if (o->client == ci && o->conn == conn && !o->done &&
		    (int32_t)(o->sq_pos - head) >= 0)
			o->or_closed = 1;
	}
}

static int close_conn(struct run *r)
{
	struct pair *p = &r->pairs[below(r, (uint64_t)r->n_pairs)];
	int side = (int)below(r, 2), ci = side ? p->b : p->a;
	struct pcmd_req_close q = {.conn_id = p->conn[side], .flags = PCMD_CLOSE_ABORT};

	if (!r->cl[ci].alive || !p->open[side])
		return 0;
	widen_untaken(r, ci, q.conn_id);
	if (inproc_request(&r->ip, &r->cl[ci].ic, &q, PCMD_MSG_CLOSE, sizeof(q), NULL, 0) < 0)
		return failf(r, "close: %s", r->cl[ci].ic.last_error);
	p->open[side] = 0;
	return 0;
}

static void kill_client(struct run *r, int ci)
{
	struct client *c = &r->cl[ci];

	if (!c->alive)
		return;
	inproc_client_kill(&r->ip, &c->ic);
	c->alive = 0;
	r->deaths++;
	for (int i = 0; i < r->n_pairs; i++) {
		if (r->pairs[i].a == ci)
			r->pairs[i].open[0] = 0;
		if (r->pairs[i].b == ci)
			r->pairs[i].open[1] = 0;
	}
	/* Its own descriptors died with it: nothing is expected of them. */
	for (size_t i = 0; i < r->n_ops; i++)
		if (r->ops[i].client == ci)
			r->ops[i].done = 1;
}

static int step(struct run *r)
{
	uint64_t what = below(r, 100);
	int ci = (int)below(r, (uint64_t)r->n_clients);

	if (what < 45)
		return post_valid(r);
	if (what < 60)
		return post_invalid(r);
	if (what < 85) {
		for (int i = 0; i < r->n_clients; i++) {
			if (!r->cl[i].alive)
				continue;
			if (r->cl[i].quiet) {
				r->cl[i].quiet--;
				continue;
			}
			if (drain_client(r, i) < 0)
				return -1;
		}
		pump(r, 1 + (int)below(r, 3));
		return 0;
	}
	if (what < 89) {
		r->cl[ci].quiet = 20 + (int)below(r, 80); /* stops reading for a while */
		return 0;
	}
	if (what < 93)
		return close_conn(r);
	if (what < 97) {
		int a = (int)below(r, (uint64_t)r->n_clients),
		    b = (int)below(r, (uint64_t)r->n_clients);

		return a != b && r->cl[a].alive && r->cl[b].alive ? open_pair(r, a, b) : 0;
	}
	if (r->n_clients - (int)r->deaths > 2)
		kill_client(r, ci);
	return 0;
}

/* ---- the end ---------------------------------------------------------------------------- */

static bool all_done(const struct run *r)
{
	for (size_t i = 0; i < r->n_ops; i++)
		if (!r->ops[i].done)
			return false;
	return true;
}

#ifdef PCMD_RANDOM_ENGINE
/* Every region released and, on softnic, every host detached (the last ones a few turns later). */
static int data_plane_leaks(struct run *r)
{
	struct pcmd_plane_engine_usage u;

	for (int i = 0; i < 5000; i++) {
		pcmd_plane_engine_usage(r->ip.d->plane, &u);
		if (!u.regions && !u.flows && !u.listeners && !u.queued_events &&
		    (!HOSTS_DETACH || !u.engines))
			return 0;
		pump(r, 1);
		usleep(1000);
	}
	return failf(r,
		     "leak: the data plane holds %u regions, %u flows, %u listeners, %u events, "
		     "%u hosts attached",
		     u.regions, u.flows, u.listeners, u.queued_events, u.engines);
}
#else
static int data_plane_leaks(struct run *r)
{
	struct pcmd_plane_loopback_usage u;

	pcmd_plane_loopback_usage(r->ip.d->plane, &u);
	if (u.regions || u.flows || u.listeners || u.queued_events)
		return failf(r,
			     "leak: the data plane holds %u regions, %u flows, %u listeners, "
			     "%u events",
			     u.regions, u.flows, u.listeners, u.queued_events);
	return 0;
}
#endif

static int create(struct inproc *ip)
{
#ifdef PCMD_RANDOM_ENGINE
	return inproc_create_on(ip, config_yaml, &pcmd_plane_engine);
#else
	return inproc_create(ip, config_yaml);
#endif
}

static int finish(struct run *r)
{
	struct pcmd *d = r->ip.d;

	/* Close what is open, so receives nobody will match complete too. */
	for (int i = 0; i < r->n_pairs; i++)
		for (int side = 0; side < 2; side++) {
			struct pair *p = &r->pairs[i];
			int ci = side ? p->b : p->a;
			struct pcmd_req_close q = {.conn_id = p->conn[side],
						   .flags = PCMD_CLOSE_ABORT};

			if (r->cl[ci].alive && p->open[side]) {
				widen_untaken(r, ci, q.conn_id);
				inproc_request(&r->ip, &r->cl[ci].ic, &q, PCMD_MSG_CLOSE, sizeof(q),
					       NULL, 0);
			}
			p->open[side] = 0;
		}
	for (int round = 0; round < 200 || (round < 20000 && !all_done(r)); round++) {
		for (int i = 0; i < r->n_clients; i++)
			if (r->cl[i].alive && drain_client(r, i) < 0)
				return -1;
		pump(r, 1);
		if (round >= 200)
			usleep(500); /* a data plane with threads: give it time (~10 s at most) */
	}
	for (size_t i = 0; i < r->n_ops; i++)
		if (!r->ops[i].done)
			return failf(r, "cookie %llu (client %d, %s) never completed",
				     (unsigned long long)r->ops[i].cookie, r->ops[i].client,
				     r->ops[i].kind == EXPECT_TRANSPORT ? "valid" : "invalid");
	for (int i = 0; i < r->n_clients; i++)
		kill_client(r, i);
	pump(r, 10);
	if (d->n_clients || d->region_bytes)
		return failf(r, "leak: pcmd still has %u clients and %llu region bytes",
			     d->n_clients, (unsigned long long)d->region_bytes);
	for (uint32_t i = 0; i < d->policies->n; i++)
		if (d->policies->items[i]->flows)
			return failf(r, "leak: policy %s still counts %u flows",
				     d->policies->items[i]->h.pkg->name,
				     d->policies->items[i]->flows);
	return data_plane_leaks(r);
}

static int fd_count(void)
{
	struct dirent *e;
	int n = 0;
	DIR *d = opendir("/proc/self/fd");

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* One run. Return: 0, or -1 with @why set. */
static int run_seed(uint64_t seed, int max_clients, int steps, char *why, size_t why_len,
		    uint64_t *valid, uint64_t *invalid)
{
	struct run *r = calloc(1, sizeof(*r));
	int fds0 = fd_count(), rc = 0;

	r->rng = seed;
	if (create(&r->ip) < 0) {
		snprintf(why, why_len, "inproc_create failed");
		free(r);
		return -1;
	}
	r->n_clients = 2 + (int)below(r, (uint64_t)max_clients - 1);
	for (int i = 0; i < r->n_clients && rc == 0; i++)
		rc = open_client(r, i);
	for (int i = 0; i < r->n_clients && rc == 0; i++)
		rc = open_pair(r, i, (i + 1) % r->n_clients);
	for (int i = 0; i < steps && rc == 0; i++)
		if (r->n_pairs)
			rc = step(r);
	if (rc == 0)
		rc = finish(r);
	for (int i = 0; i < r->n_clients; i++)
		kill_client(r, i);
	inproc_destroy(&r->ip);
	if (rc == 0 && fd_count() != fds0)
		rc = failf(r, "leak: %d descriptors open after the run, %d before", fd_count(),
			   fds0);
	snprintf(why, why_len, "%s", r->why);
	*valid = r->valid;
	*invalid = r->invalid;
	for (int i = 0; i < r->n_pairs; i++)
		for (int d = 0; d < 2; d++)
			free(r->pairs[i].s[d].send_len);
	free(r->ops);
	free(r);
	return rc;
}

/* Cut a failing case down: fewer clients, then fewer steps, while it still fails. */
static void shrink(uint64_t seed, int clients, int steps)
{
	char why[512];
	uint64_t v, iv;

	while (clients > 2 && run_seed(seed, clients - 1, steps, why, sizeof(why), &v, &iv) < 0)
		clients--;
	for (int s = steps / 2; s > 0; s /= 2)
		if (run_seed(seed, clients, s, why, sizeof(why), &v, &iv) < 0)
			steps = s;
	run_seed(seed, clients, steps, why, sizeof(why), &v, &iv);
	fprintf(stderr,
		"shrunk: seed %llu fails with %d clients and %d steps: %s\n"
		"reproduce: PCMD_RANDOM_SEED=%llu PCMD_RANDOM_CLIENTS=%d PCMD_RANDOM_STEPS=%d "
		"%s\n",
		(unsigned long long)seed, clients, steps, why, (unsigned long long)seed, clients,
		steps, "build/tests/integration/" BINARY);
}

static int env_int(const char *name, int dflt)
{
	const char *s = getenv(name);

	return s ? atoi(s) : dflt;
}

static void test_random_descriptor_streams_complete_exactly_once_and_leak_nothing(void **state)
{
	const char *one = getenv("PCMD_RANDOM_SEED");
	int seeds = one ? 1 : env_int("PCMD_RANDOM_SEEDS", 300);
	int clients = env_int("PCMD_RANDOM_CLIENTS", MAX_CLIENTS);
	int steps = env_int("PCMD_RANDOM_STEPS", 600);
	uint64_t first = one ? strtoull(one, NULL, 0) : 1, valid = 0, invalid = 0;

	for (int i = 0; i < seeds; i++) {
		uint64_t seed = first + (uint64_t)i, v = 0, iv = 0;
		char why[512];

		if (run_seed(seed, clients, steps, why, sizeof(why), &v, &iv) < 0) {
			fprintf(stderr,
				"seed %llu failed: %s\nreproduce: PCMD_RANDOM_SEED=%llu "
				"build/tests/integration/" BINARY "\n",
				(unsigned long long)seed, why, (unsigned long long)seed);
			shrink(seed, clients, steps);
			fail_msg("seed %llu: %s", (unsigned long long)seed, why);
		}
		valid += v;
		invalid += iv;
	}
	printf("%d seeds from %llu: %llu valid and %llu invalid descriptors, each completed "
	       "exactly once, nothing leaked\n",
	       seeds, (unsigned long long)first, (unsigned long long)valid,
	       (unsigned long long)invalid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random_descriptor_streams_complete_exactly_once_and_leak_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
