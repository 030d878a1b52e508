// SPDX-License-Identifier: MIT
/*
 * test_tp_random.c - seeded randomized runs through libpcmtransport's public
 * API (in-process, null datapath): two endpoints, several connections both
 * ways, messages of random sizes (0 .. 256 KiB) and counts posted in random
 * order with random polling, live policy swaps and connections closed in the
 * middle of traffic. Invariants of every run:
 *   - every posted operation completes exactly once (by cookie);
 *   - on a connection never closed, receive k gets message k, byte-exact, status 0;
 *   - on a closed one, whatever completes is byte-exact or an error, and its
 *     CLOSE comes once, after every other completion of it;
 *   - at the end every connection is closed and nothing is left posted: every
 *     cookie came back and a last poll finds nothing.
 * A failing seed is shrunk (fewer connections, then fewer messages, while it
 * still fails) and printed as a one-line command that reproduces it.
 *
 * Usage: test_tp_random [SEEDS [FIRST]] | test_tp_random --seed S [--conns C] [--msgs M]
 *        (defaults: 12 seeds from 1; $PCM_TP_SEEDS overrides the count)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcm/transport.h>

#define MAX_CONNS 6
#define MAX_MSG (256u << 10)
#define SLOTS 4                 /* ops of one kind in flight per connection side */
#define MAX_SPINS 50000000L

/* what the runs did, for the summary line */
static uint64_t g_closes_mid, g_swaps, g_msgs;

static const char *const policies[] = { "swift", "newreno", "dctcp", "none" };

struct side_conn {
	struct pcm_tp_conn *conn;
	uint32_t sent, send_done;   /* posts and completions */
	uint32_t recvd, recv_done;
	uint32_t next_check;        /* the next receive that must arrive in order */
	bool close_seen;            /* its PCM_TP_OP_CLOSE */
	uint8_t *send_buf;          /* SLOTS x MAX_MSG */
	uint8_t *recv_buf;
};

struct run {
	uint64_t seed, rng;
	uint32_t n_conns, n_msgs;
	struct pcm_tp_endpoint *ep[2];
	struct side_conn sc[2][MAX_CONNS];
	bool closed[MAX_CONNS];
	uint8_t *seen;              /* by cookie */
	uint64_t n_cookies;
	char why[256];
};

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(struct run *r, uint64_t n)
{
	r->rng = mix(r->rng);
	return n ? r->rng % n : 0;
}

/* Message k from side s on connection c: its size and bytes, from the seed alone. */
static size_t msg_size(const struct run *r, int s, uint32_t c, uint32_t k)
{
	uint64_t h = mix(r->seed ^ mix(((uint64_t)s << 40) ^ ((uint64_t)c << 32) ^ k));

	return (h & 3) == 0 ? (size_t)(h >> 8) % 64 : (size_t)((h >> 8) % (MAX_MSG + 1));
}

static uint8_t msg_byte(const struct run *r, int s, uint32_t c, uint32_t k, size_t i)
{
	return (uint8_t)(mix(r->seed ^ ((uint64_t)s << 62) ^ ((uint64_t)c << 48) ^
			     ((uint64_t)k << 24) ^ (i >> 3)) >> (8 * (i & 7)));
}

/* cookie = ((conn * 2 + side) * 2 + is_recv) * n_msgs + k */
static uint64_t cookie_of(const struct run *r, uint32_t c, int s, int is_recv, uint32_t k)
{
	return (((uint64_t)c * 2 + (uint64_t)s) * 2 + (uint64_t)is_recv) * r->n_msgs + k;
}

static int fail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->why[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	return -1;
}

static int check_recv(struct run *r, int s, uint32_t c, uint32_t k,
		      const struct pcm_tp_completion *e)
{
	const uint8_t *p = r->sc[s][c].recv_buf + (size_t)(k % SLOTS) * MAX_MSG;
	size_t want = msg_size(r, !s, c, k);

	if (e->status < 0)
		return r->closed[c] ? 0 : fail(r, "conn %u side %d recv %u: %s", c, s, k,
					      pcm_tp_strerror(e->status));
	if (!r->closed[c] && k != r->sc[s][c].next_check)
		return fail(r, "conn %u side %d: recv %u completed before %u", c, s, k,
			    r->sc[s][c].next_check);
	r->sc[s][c].next_check = k + 1;
	g_msgs++;
	if (e->bytes != want)
		return fail(r, "conn %u side %d recv %u: %" PRIu64 " bytes, %zu sent", c, s, k,
			    e->bytes, want);
	for (size_t i = 0; i < want; i++)
		if (p[i] != msg_byte(r, !s, c, k, i))
			return fail(r, "conn %u side %d recv %u: byte %zu differs", c, s, k, i);
	return 0;
}

/* A connection's CLOSE: once, after it was closed and all its operations completed. */
static int take_close(struct run *r, int s, const struct pcm_tp_completion *e)
{
	for (uint32_t c = 0; c < r->n_conns; c++) {
		struct side_conn *x = &r->sc[s][c];

		if (x->conn != e->conn)
			continue;
		if (!r->closed[c] || x->close_seen)
			return fail(r, "conn %u side %d: a CLOSE %s", c, s,
				    x->close_seen ? "twice" : "it was never closed");
		if (x->send_done != x->sent || x->recv_done != x->recvd)
			return fail(r, "conn %u side %d: its CLOSE before its last completion", c, s);
		x->close_seen = true;
		return 0;
	}
	return fail(r, "side %d: a CLOSE of no connection", s);
}

static int take(struct run *r, int s, const struct pcm_tp_completion *e)
{
	uint64_t per_conn = 4ull * r->n_msgs, ck = e->cookie;
	uint32_t c = (uint32_t)(ck / per_conn), k = (uint32_t)(ck % r->n_msgs);
	int is_recv = (int)((ck / r->n_msgs) & 1);

	if (e->op == PCM_TP_OP_CLOSE)
		return take_close(r, s, e);
	if (e->op != PCM_TP_OP_SEND && e->op != PCM_TP_OP_RECV)
		return fail(r, "side %d: unexpected op %d", s, (int)e->op);
	if (ck >= r->n_cookies || r->seen[ck])
		return fail(r, "side %d: cookie %" PRIu64 " %s", s, ck,
			    ck >= r->n_cookies ? "never posted" : "completed twice");
	if ((int)((ck / (2ull * r->n_msgs)) & 1) != s || is_recv != (e->op == PCM_TP_OP_RECV))
		return fail(r, "side %d: cookie %" PRIu64 " belongs elsewhere", s, ck);
	r->seen[ck] = 1;
	if (e->conn != r->sc[s][c].conn)
		return fail(r, "cookie %" PRIu64 ": the wrong connection", ck);
	if (is_recv) {
		r->sc[s][c].recv_done++;
		return check_recv(r, s, c, k, e);
	}
	r->sc[s][c].send_done++;
	if (e->status < 0 && !r->closed[c])
		return fail(r, "conn %u side %d send %u: %s", c, s, k, pcm_tp_strerror(e->status));
	return 0;
}

static int poll_side(struct run *r, int s, int max)
{
	struct pcm_tp_completion e[16];
	int n = pcm_tp_poll(r->ep[s], e, max < 16 ? max : 16);

	if (n < 0)
		return fail(r, "poll: %s", pcm_tp_strerror(n));
	for (int i = 0; i < n; i++)
		if (take(r, s, &e[i]) < 0)
			return -1;
	return n;
}

static int post_one(struct run *r, int s, uint32_t c, bool is_recv)
{
	struct side_conn *x = &r->sc[s][c];
	int rc;

	if (is_recv) {
		if (x->recvd == r->n_msgs || x->recvd - x->recv_done >= SLOTS)
			return 0;
		rc = pcm_tp_recv(x->conn, NULL, x->recv_buf + (size_t)(x->recvd % SLOTS) * MAX_MSG,
				 MAX_MSG, cookie_of(r, c, s, 1, x->recvd));
		if (rc == 0)
			x->recvd++;
	} else {
		uint8_t *p = x->send_buf + (size_t)(x->sent % SLOTS) * MAX_MSG;
		size_t n = msg_size(r, s, c, x->sent);

		if (x->sent == r->n_msgs || x->sent - x->send_done >= SLOTS)
			return 0;
		for (size_t i = 0; i < n; i++)
			p[i] = msg_byte(r, s, c, x->sent, i);
		rc = pcm_tp_send(x->conn, NULL, p, n, cookie_of(r, c, s, 0, x->sent));
		if (rc == 0)
			x->sent++;
	}
	/* a closed connection, or one whose peer's close reset it */
	if (rc == -EAGAIN || ((rc == -ENOTCONN || rc == -ECONNRESET) && r->closed[c]))
		return 0;
	return rc < 0 ? fail(r, "conn %u side %d: post: %s", c, s, pcm_tp_strerror(rc)) : 0;
}

static int setup(struct run *r)
{
	struct pcm_tp_config cfg = { .backend = PCM_TP_BACKEND_INPROC, .datapath = "null",
				     .progress = PCM_TP_PROGRESS_INLINE };
	struct pcm_tp_completion e;
	char name[64];

	snprintf(name, sizeof(name), "tp-random-%" PRIu64 "-%u-%u", r->seed, r->n_conns,
		 r->n_msgs);
	for (int s = 0; s < 2; s++)
		if (pcm_tp_endpoint_open(&cfg, &r->ep[s]) < 0)
			return fail(r, "open: %s", pcm_tp_last_error());
	if (pcm_tp_listen(r->ep[1], name) < 0)
		return fail(r, "listen: %s", pcm_tp_last_error());
	for (uint32_t c = 0; c < r->n_conns; c++) {
		struct pcm_tp_conn_opts o = { .policy = policies[rnd(r, 4)],
					      .paths = 1 + (uint32_t)rnd(r, 4),
					      .mode = (enum pcm_tp_shell_mode)rnd(r, 2) };

		if (pcm_tp_accept(r->ep[1], c) < 0 || pcm_tp_connect(r->ep[0], name, &o, c) < 0)
			return fail(r, "setup of conn %u: %s", c, pcm_tp_last_error());
		for (int s = 0; s < 2; s++) {
			long spins = 0;

			while (pcm_tp_poll(r->ep[s], &e, 1) == 0) {
				pcm_tp_poll(r->ep[!s], NULL, 0);
				if (++spins > MAX_SPINS)
					return fail(r, "conn %u: no setup completion", c);
			}
			if (e.status < 0)
				return fail(r, "conn %u: setup: %s", c, pcm_tp_strerror(e.status));
			r->sc[s][e.cookie].conn = e.conn;
		}
	}
	for (int s = 0; s < 2; s++)
		for (uint32_t c = 0; c < r->n_conns; c++) {
			r->sc[s][c].send_buf = pcm_tp_mem_alloc(r->ep[s], (size_t)SLOTS * MAX_MSG);
			r->sc[s][c].recv_buf = pcm_tp_mem_alloc(r->ep[s], (size_t)SLOTS * MAX_MSG);
			if (!r->sc[s][c].send_buf || !r->sc[s][c].recv_buf)
				return fail(r, "mem_alloc: %s", pcm_tp_last_error());
		}
	return 0;
}

static bool all_done(const struct run *r)
{
	for (int s = 0; s < 2; s++)
		for (uint32_t c = 0; c < r->n_conns; c++) {
			const struct side_conn *x = &r->sc[s][c];

			if (x->send_done < x->sent || x->recv_done < x->recvd)
				return false;
			if (!r->closed[c] && (x->send_done < r->n_msgs || x->recv_done < r->n_msgs))
				return false;
		}
	return true;
}

static void close_conn(struct run *r, uint32_t c)
{
	if (r->closed[c])
		return;
	r->closed[c] = true;
	pcm_tp_conn_close(r->sc[0][c].conn);
	pcm_tp_conn_close(r->sc[1][c].conn);
}

static int traffic(struct run *r)
{
	long spins = 0;

	while (!all_done(r)) {
		uint64_t what = rnd(r, 100);
		uint32_t c = (uint32_t)rnd(r, r->n_conns);
		int s = (int)rnd(r, 2);

		if (++spins > MAX_SPINS)
			return fail(r, "stuck: operations never completed");
		if (what < 35) {
			if (!r->closed[c] && post_one(r, s, c, what & 1) < 0)
				return -1;
		} else if (what < 99 || r->n_conns < 2) {
			if (poll_side(r, s, 1 + (int)rnd(r, 16)) < 0)
				return -1;
		} else if (rnd(r, 8) == 0) {
			g_closes_mid += !r->closed[c];
			close_conn(r, c); /* mid-traffic */
		} else if (!r->closed[c]) {
			struct pcm_tp_conn_opts o = { .policy = policies[rnd(r, 3)],
						      .mode = (enum pcm_tp_shell_mode)rnd(r, 2) };
			int rc = pcm_tp_conn_set_policy(r->sc[s][c].conn, &o);

			if (rc < 0)
				return fail(r, "conn %u: live swap: %s", c, pcm_tp_last_error());
			g_swaps++;
		}
	}
	return 0;
}

static int finish(struct run *r)
{
	struct pcm_tp_completion e;

	bool all;

	for (uint32_t c = 0; c < r->n_conns; c++)
		close_conn(r, c);
	for (long spins = 0;; spins++) {
		all = true;
		for (uint32_t c = 0; c < r->n_conns; c++)
			all = all && r->sc[0][c].close_seen && r->sc[1][c].close_seen;
		if (all)
			break;
		if (spins > MAX_SPINS)
			return fail(r, "a closed connection's CLOSE never came");
		for (int s = 0; s < 2; s++)
			if (poll_side(r, s, 16) < 0)
				return -1;
	}
	for (int i = 0; i < 1000; i++)
		for (int s = 0; s < 2; s++)
			if (pcm_tp_poll(r->ep[s], &e, 1) > 0)
				return fail(r, "side %d: a completion after every op completed", s);
	for (uint64_t ck = 0; ck < r->n_cookies; ck++) {
		uint32_t c = (uint32_t)(ck / (4ull * r->n_msgs)), k = (uint32_t)(ck % r->n_msgs);
		int s = (int)((ck / (2ull * r->n_msgs)) & 1), is_recv = (int)((ck / r->n_msgs) & 1);
		uint32_t posted = is_recv ? r->sc[s][c].recvd : r->sc[s][c].sent;

		if ((k < posted) != (r->seen[ck] != 0))
			return fail(r, "cookie %" PRIu64 ": posted %d, completed %d", ck, k < posted,
				    r->seen[ck]);
	}
	return 0;
}

static void teardown(struct run *r)
{
	for (int s = 0; s < 2; s++) {
		if (!r->ep[s])
			continue;
		for (uint32_t c = 0; c < r->n_conns; c++) {
			pcm_tp_mem_free(r->ep[s], r->sc[s][c].send_buf);
			pcm_tp_mem_free(r->ep[s], r->sc[s][c].recv_buf);
		}
		pcm_tp_endpoint_close(r->ep[s]);
	}
	free(r->seen);
}

/* One run. Return: 0, or -1 with @why set. */
static int run_one(uint64_t seed, uint32_t n_conns, uint32_t n_msgs, char *why, size_t why_len)
{
	struct run *r = calloc(1, sizeof(*r));
	int rc;

	r->seed = seed;
	r->rng = mix(seed);
	r->n_conns = n_conns;
	r->n_msgs = n_msgs;
	r->n_cookies = 4ull * n_conns * n_msgs;
	r->seen = calloc(r->n_cookies, 1);
	rc = setup(r);
	if (rc == 0)
		rc = traffic(r);
	if (rc == 0)
		rc = finish(r);
	snprintf(why, why_len, "%s", r->why);
	teardown(r);
	free(r);
	return rc;
}

static void shape_of(uint64_t seed, uint32_t *n_conns, uint32_t *n_msgs)
{
	uint64_t h = mix(seed * 7919u);

	*n_conns = 1 + (uint32_t)(h % MAX_CONNS);
	*n_msgs = 1 + (uint32_t)((h >> 16) % 40);
}

/* Shrink a failing run: fewer connections, then fewer messages, while it still fails. */
static void shrink(uint64_t seed, uint32_t *n_conns, uint32_t *n_msgs, char *why, size_t len)
{
	char w[256];

	for (bool smaller = true; smaller;) {
		smaller = false;
		if (*n_conns > 1 && run_one(seed, *n_conns - 1, *n_msgs, w, sizeof(w)) < 0) {
			(*n_conns)--;
			smaller = true;
			snprintf(why, len, "%s", w);
		} else if (*n_msgs > 1 && run_one(seed, *n_conns, *n_msgs / 2, w, sizeof(w)) < 0) {
			*n_msgs /= 2;
			smaller = true;
			snprintf(why, len, "%s", w);
		}
	}
}

int main(int argc, char **argv)
{
	uint64_t first = 1, n_seeds = 12;
	uint32_t n_conns = 0, n_msgs = 0;
	bool one = false;
	int failed = 0;

	if (getenv("PCM_TP_SEEDS"))
		n_seeds = strtoull(getenv("PCM_TP_SEEDS"), NULL, 0);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			first = strtoull(argv[++i], NULL, 0);
			one = true;
		} else if (strcmp(argv[i], "--conns") == 0 && i + 1 < argc) {
			n_conns = (uint32_t)strtoul(argv[++i], NULL, 0);
		} else if (strcmp(argv[i], "--msgs") == 0 && i + 1 < argc) {
			n_msgs = (uint32_t)strtoul(argv[++i], NULL, 0);
		} else if (i == 1) {
			n_seeds = strtoull(argv[i], NULL, 0);
		} else if (i == 2) {
			first = strtoull(argv[i], NULL, 0);
		} else {
			fprintf(stderr, "usage: %s [SEEDS [FIRST]] | --seed S [--conns C] [--msgs M]\n",
				argv[0]);
			return 2;
		}
	}
	if ((n_conns && n_conns > MAX_CONNS) || (one && !n_conns != !n_msgs)) {
		fprintf(stderr, "--conns 1..%d and --msgs go together\n", MAX_CONNS);
		return 2;
	}
	for (uint64_t seed = first; seed < first + (one ? 1 : n_seeds); seed++) {
		uint32_t c = n_conns, m = n_msgs;
		char why[256];

		if (!c)
			shape_of(seed, &c, &m);
		if (run_one(seed, c, m, why, sizeof(why)) == 0)
			continue;
		failed++;
		fprintf(stderr, "seed %" PRIu64 " (%u conns, %u msgs) failed: %s\n", seed, c, m, why);
		shrink(seed, &c, &m, why, sizeof(why));
		fprintf(stderr, "shrunk to %u conns, %u msgs: %s\nrepro: %s --seed %" PRIu64
				" --conns %u --msgs %u\n", c, m, why, argv[0], seed, c, m);
	}
	printf("test_tp_random: %" PRIu64 " seed(s) from %" PRIu64 ", %d failed; %" PRIu64
	       " messages checked, %" PRIu64 " live swaps, %" PRIu64 " closes mid-traffic\n",
	       one ? 1 : n_seeds, first, failed, g_msgs, g_swaps, g_closes_mid);
	return failed ? 1 : 0;
}
