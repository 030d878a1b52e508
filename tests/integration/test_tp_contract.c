// SPDX-License-Identifier: MIT
/*
 * test_tp_contract.c - libpcmtransport keeps its word in both backends
 * (pcm_transport(3), "The contract"): each case runs in process (datapath
 * null) and through a pcmd this test starts (the datapath of
 * $PCMD_TEST_DATAPATH, default softnic), with the same expectations, except
 * the cases only one backend has.
 *
 *   the post contract   each side posts 1,500 receives then 1,500 sends
 *                       without polling, a refused post retried in order:
 *                       every post that returned 0 completes once with
 *                       status 0, and receive k holds message k; past the
 *                       limits a post is refused at once, exactly at the
 *                       limit pcm_tp_endpoint_limits() gives.
 *   misuse              NULLs, foreign and stale handles, double close and
 *                       deregistration, a region in use (-EBUSY), posts on
 *                       closed, gone and dead connections: one code in both
 *                       backends, the last error naming the argument.
 *   policies            the dialer's options decide both sides, as
 *                       pcm_tp_conn_query() reads; cfg.policy names an
 *                       endpoint's connects; a .so path (daemon: -EPERM).
 *   a dead pcmd         kill -9 under a busy poller: everything outstanding
 *                       ends with -ESHUTDOWN in post order, then poll and
 *                       wait say so; a new endpoint works on a new pcmd. The
 *                       completions a killed pcmd wrote, and a stopping
 *                       pcmd's own, come before that. A busy poller makes
 *                       no system call per poll (counted under strace).
 *   one behaviour       AUTO's rule; softnic in process refused with advice.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include "pcm/transport.h"

struct backend {
	const char *name;
	bool daemon;
	struct pcmd_proc pcmd;
};

static struct backend inproc = {.name = "inproc"};
static struct backend daemon_be = {.name = "daemon", .daemon = true};

static int start(void **state)
{
	static const char yaml[] = "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
				   "datapath: {kind: @DATAPATH@}\n";
	struct backend *b = *state;

	return b->daemon ? (harness_start(&b->pcmd, yaml, 0, NULL) == 0 ? 0 : -1) : 0;
}

static int stop(void **state)
{
	struct backend *b = *state;

	return b->daemon ? harness_finish(&b->pcmd) : 0;
}

static struct pcm_tp_endpoint *open_ep(const struct backend *b)
{
	struct pcm_tp_config cfg = {.datapath = "null", .progress = PCM_TP_PROGRESS_INLINE};
	struct pcm_tp_endpoint *ep = NULL;
	int rc;

	cfg.backend = b->daemon ? PCM_TP_BACKEND_DAEMON : PCM_TP_BACKEND_INPROC;
	cfg.daemon_socket = b->daemon ? b->pcmd.sock : NULL;
	cfg.daemon_region_bytes = 16u << 20;
	rc = pcm_tp_endpoint_open(&cfg, &ep);
	if (rc < 0)
		fail_msg("%s: endpoint_open: %d (%s)", b->name, rc, pcm_tp_last_error());
	return ep;
}

/* The next completion of @ep, polling @other too (inline progress needs both driven). */
static struct pcm_tp_completion next_of(struct pcm_tp_endpoint *ep, struct pcm_tp_endpoint *other)
{
	uint64_t until = harness_now_ms() + 20000;
	struct pcm_tp_completion c;

	while (harness_now_ms() < until) {
		if (other)
			pcm_tp_poll(other, NULL, 0);
		if (pcm_tp_poll(ep, &c, 1) == 1)
			return c;
	}
	fail_msg("no completion within 20 s");
	return c;
}

/* A connection from @a to @b at @addr. */
static void pair(struct pcm_tp_endpoint *a, struct pcm_tp_endpoint *b, const char *addr,
		 struct pcm_tp_conn **ca, struct pcm_tp_conn **cb)
{
	struct pcm_tp_completion c;

	assert_int_equal(pcm_tp_listen(b, addr), 0);
	assert_int_equal(pcm_tp_accept(b, 1), 0);
	assert_int_equal(pcm_tp_connect(a, addr, NULL, 2), 0);
	c = next_of(a, b);
	assert_int_equal(c.op, PCM_TP_OP_CONNECT);
	assert_int_equal(c.status, 0);
	*ca = c.conn;
	c = next_of(b, a);
	assert_int_equal(c.op, PCM_TP_OP_ACCEPT);
	assert_int_equal(c.status, 0);
	*cb = c.conn;
}

/* ---- the post contract ------------------------------------------------------------------ */

#define FLOOD 1500u
#define FLOOD_BYTES 64u

/* Take @ep's completions of @op (up to @n posts), checking each once, in order, byte-exact. */
static void take_flood(struct pcm_tp_endpoint *ep, enum pcm_tp_op op, uint8_t *seen,
		       const uint8_t *rbuf, uint32_t n, uint32_t *done)
{
	struct pcm_tp_completion c[64];
	int got = pcm_tp_poll(ep, c, 64);

	assert_true(got >= 0);
	for (int i = 0; i < got; i++) {
		uint64_t k = c[i].cookie;

		if (c[i].op != op)
			continue; /* a close's own completion */
		assert_true(k < n);
		if (c[i].status != 0)
			fail_msg("%s %llu was accepted and then failed: %s",
				 op == PCM_TP_OP_SEND ? "send" : "receive", (unsigned long long)k,
				 pcm_tp_strerror(c[i].status));
		if (seen[k]++)
			fail_msg("%llu completed twice", (unsigned long long)k);
		if (op == PCM_TP_OP_RECV) {
			const uint8_t *p = rbuf + k * FLOOD_BYTES;

			assert_int_equal(c[i].bytes, FLOOD_BYTES);
			if (p[0] != (uint8_t)k || p[1] != (uint8_t)(k >> 8))
				fail_msg("receive %llu holds message %u", (unsigned long long)k,
					 p[0] | p[1] << 8);
		}
		(*done)++;
	}
}

/*
 * One way, past the limits: the receiver posts receives without polling until
 * one is refused, which is exactly the one past recvs_per_conn (-EAGAIN at
 * once, the last error naming the limit); then 1,000 more than the limit flow,
 * each refused post retried in order: every accepted post completes once
 * with status 0 and receive k holds message k.
 */
static void test_a_post_past_the_limits_is_refused_at_once_and_fifo_holds(void **state)
{
	struct backend *b = *state;
	struct pcm_tp_endpoint *tx = open_ep(b), *rx = open_ep(b);
	struct pcm_tp_limits lim;
	uint32_t n, posted_s = 0, posted_r = 0, done_s = 0, done_r = 0, refused = 0;
	uint64_t until = harness_now_ms() + 60000;
	uint8_t *sbuf, *rbuf, *seen_s, *seen_r;
	struct pcm_tp_conn *ct, *cr;
	int rc = 0;

	assert_int_equal(pcm_tp_endpoint_limits(rx, &lim), 0);
	assert_true(lim.recvs_per_conn >= 1024 && lim.recvs_per_conn <= lim.posts_per_endpoint);
	n = lim.recvs_per_conn + 1000;
	sbuf = pcm_tp_mem_alloc(tx, (size_t)n * FLOOD_BYTES);
	rbuf = pcm_tp_mem_alloc(rx, (size_t)n * FLOOD_BYTES);
	seen_s = calloc(n, 1);
	seen_r = calloc(n, 1);
	assert_non_null(sbuf);
	assert_non_null(rbuf);
	pair(tx, rx, "contract-flood", &ct, &cr);
	for (uint32_t k = 0; k < n; k++) {
		memset(sbuf + (size_t)k * FLOOD_BYTES, 0, FLOOD_BYTES);
		sbuf[(size_t)k * FLOOD_BYTES] = (uint8_t)k;
		sbuf[(size_t)k * FLOOD_BYTES + 1] = (uint8_t)(k >> 8);
	}
	memset(rbuf, 0xee, (size_t)n * FLOOD_BYTES);
	while (posted_r < n && (rc = pcm_tp_recv(cr, NULL, rbuf + (size_t)posted_r * FLOOD_BYTES,
						  FLOOD_BYTES, posted_r)) == 0)
		posted_r++;
	assert_int_equal(rc, -EAGAIN);
	assert_int_equal(posted_r, lim.recvs_per_conn);
	assert_non_null(strstr(pcm_tp_last_error(), "limit"));
	while (done_s < n || done_r < n) {
		if (harness_now_ms() > until)
			fail_msg("%s: stuck: %u/%u receives and %u/%u sends posted, %u and %u done",
				 b->name, posted_r, n, posted_s, n, done_r, done_s);
		rc = 0;
		while (posted_r < n &&
		       (rc = pcm_tp_recv(cr, NULL, rbuf + (size_t)posted_r * FLOOD_BYTES,
					 FLOOD_BYTES, posted_r)) == 0)
			posted_r++;
		if (rc != 0 && rc != -EAGAIN)
			fail_msg("receive %u: %d (%s)", posted_r, rc, pcm_tp_last_error());
		refused += rc == -EAGAIN;
		rc = 0;
		while (posted_s < n &&
		       (rc = pcm_tp_send(ct, NULL, sbuf + (size_t)posted_s * FLOOD_BYTES,
					 FLOOD_BYTES, posted_s)) == 0)
			posted_s++;
		if (rc != 0 && rc != -EAGAIN)
			fail_msg("send %u: %d (%s)", posted_s, rc, pcm_tp_last_error());
		refused += rc == -EAGAIN;
		assert_true(posted_r - done_r <= lim.recvs_per_conn);
		assert_true(posted_s - done_s <= lim.sends_per_conn);
		take_flood(rx, PCM_TP_OP_RECV, seen_r, rbuf, n, &done_r);
		take_flood(tx, PCM_TP_OP_SEND, seen_s, NULL, n, &done_s);
	}
	printf("%s: limit %u per connection; %u posts refused with -EAGAIN and retried; every "
	       "accepted post completed once\n",
	       b->name, lim.recvs_per_conn, refused);
	free(seen_s);
	free(seen_r);
	pcm_tp_endpoint_close(tx);
	pcm_tp_endpoint_close(rx);
}

/*
 * The program: each side posts 1,500 receives and then 1,500 sends
 * on one connection without polling, retrying a refused post (after a poll
 * of both) before any later one.
 */
struct side {
	struct pcm_tp_endpoint *ep;
	struct pcm_tp_conn *c;
	uint8_t *sbuf, *rbuf, *seen_s, *seen_r;
	uint32_t posted, done_s, done_r; /* posted: receives first, then sends */
};

static int post_next(struct side *s)
{
	uint32_t k = s->posted % FLOOD;

	if (s->posted < FLOOD)
		return pcm_tp_recv(s->c, NULL, s->rbuf + k * FLOOD_BYTES, FLOOD_BYTES, k);
	return pcm_tp_send(s->c, NULL, s->sbuf + k * FLOOD_BYTES, FLOOD_BYTES, k);
}

static void side_init(struct side *s, const struct backend *b)
{
	memset(s, 0, sizeof(*s));
	s->ep = open_ep(b);
	s->sbuf = pcm_tp_mem_alloc(s->ep, FLOOD * FLOOD_BYTES);
	s->rbuf = pcm_tp_mem_alloc(s->ep, FLOOD * FLOOD_BYTES);
	assert_non_null(s->sbuf);
	assert_non_null(s->rbuf);
	s->seen_s = calloc(FLOOD, 1);
	s->seen_r = calloc(FLOOD, 1);
	for (uint32_t k = 0; k < FLOOD; k++) {
		memset(s->sbuf + k * FLOOD_BYTES, 0, FLOOD_BYTES);
		s->sbuf[k * FLOOD_BYTES] = (uint8_t)k;
		s->sbuf[k * FLOOD_BYTES + 1] = (uint8_t)(k >> 8);
	}
	memset(s->rbuf, 0xee, FLOOD * FLOOD_BYTES);
}

static void side_take(struct side *s)
{
	struct pcm_tp_completion c[64];
	int n = pcm_tp_poll(s->ep, c, 64);

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		uint64_t k = c[i].cookie;
		bool recv = c[i].op == PCM_TP_OP_RECV;

		if (c[i].op != PCM_TP_OP_SEND && !recv)
			continue;
		assert_true(k < FLOOD);
		if (c[i].status != 0)
			fail_msg("%s %llu was accepted and then failed: %s", recv ? "receive" : "send",
				 (unsigned long long)k, pcm_tp_strerror(c[i].status));
		if ((recv ? s->seen_r : s->seen_s)[k]++)
			fail_msg("%llu completed twice", (unsigned long long)k);
		if (recv) {
			const uint8_t *p = s->rbuf + k * FLOOD_BYTES;

			if (p[0] != (uint8_t)k || p[1] != (uint8_t)(k >> 8))
				fail_msg("receive %llu holds message %u", (unsigned long long)k,
					 p[0] | p[1] << 8);
			s->done_r++;
		} else {
			s->done_s++;
		}
	}
}

static void test_1500_receives_then_1500_sends_each_side(void **state)
{
	struct backend *b = *state;
	uint64_t until = harness_now_ms() + 60000;
	uint32_t refused = 0;
	struct side s[2];

	side_init(&s[0], b);
	side_init(&s[1], b);
	pair(s[0].ep, s[1].ep, "contract-both", &s[0].c, &s[1].c);
	while (s[0].done_r + s[0].done_s + s[1].done_r + s[1].done_s < 4 * FLOOD) {
		if (harness_now_ms() > until)
			fail_msg("%s: stuck: posted %u and %u of %u, done %u+%u and %u+%u", b->name,
				 s[0].posted, s[1].posted, 2 * FLOOD, s[0].done_r, s[0].done_s,
				 s[1].done_r, s[1].done_s);
		for (int i = 0; i < 2; i++) {
			int rc = 0;

			while (s[i].posted < 2 * FLOOD && (rc = post_next(&s[i])) == 0)
				s[i].posted++;
			if (rc != 0 && rc != -EAGAIN)
				fail_msg("side %d post %u: %d (%s)", i, s[i].posted, rc,
					 pcm_tp_last_error());
			refused += rc == -EAGAIN;
		}
		side_take(&s[0]);
		side_take(&s[1]);
	}
	printf("%s: %u posts refused with -EAGAIN and retried; every accepted post completed once, "
	       "in order\n", b->name, refused);
	for (int i = 0; i < 2; i++) {
		free(s[i].seen_s);
		free(s[i].seen_r);
		pcm_tp_endpoint_close(s[i].ep);
	}
}

/* ---- misuse ----------------------------------------------------------------------------- */

/* @rc is @want, and the last error is this call's: it names @what. */
#define EXPECT(rc, want, what)                                                                     \
	do {                                                                                       \
		int rc_ = (rc);                                                                    \
		if (rc_ != (want) || !strstr(pcm_tp_last_error(), (what)))                         \
			fail_msg("%s: %s gave %d (%s), want %d naming '%s'", b->name, #rc, rc_,   \
				 pcm_tp_last_error(), (int)(want), (what));                        \
	} while (0)

/* The next completion of @ep that is @op; others (a CLOSE) are skipped. */
static struct pcm_tp_completion next_op(struct pcm_tp_endpoint *ep, struct pcm_tp_endpoint *other,
					enum pcm_tp_op op)
{
	struct pcm_tp_completion c;

	do
		c = next_of(ep, other);
	while (c.op != op);
	return c;
}

/*
 * Every misuse pcm_transport(3) lists, on a live pair: the same code in both
 * backends, the last error naming the argument or object, nothing crashes
 * (the suite runs under ASan too), nothing is written after the call.
 */
static void test_misuse_is_an_error_with_the_same_code_in_both_backends(void **state)
{
	struct backend *b = *state;
	struct pcm_tp_endpoint *a = open_ep(b), *z = open_ep(b);
	struct pcm_tp_conn_opts bad_mode = {.mode = (enum pcm_tp_shell_mode)99};
	struct pcm_tp_completion c;
	struct pcm_tp_conn *ca, *cz;
	struct pcm_tp_conn_info info;
	struct pcm_tp_peer peer;
	struct pcm_tp_endpoint *ep;
	struct pcm_tp_mr *mr, *mr2;
	char long_addr[80];
	uint8_t heap[64], *buf, *freed;

	pair(a, z, "contract-misuse", &ca, &cz);
	buf = pcm_tp_mem_alloc(a, 8192);
	assert_non_null(buf);
	memset(long_addr, 'x', sizeof(long_addr) - 1);
	long_addr[sizeof(long_addr) - 1] = '\0';

	/* NULL and foreign objects, out-of-range arguments */
	EXPECT(pcm_tp_send(NULL, NULL, buf, 1, 0), -EINVAL, "connection is NULL");
	EXPECT(pcm_tp_recv((struct pcm_tp_conn *)heap, NULL, buf, 1, 0), -EINVAL,
	       "is not a connection");
	EXPECT(pcm_tp_send(ca, (struct pcm_tp_mr *)ca, buf, 1, 0), -EINVAL,
	       "is not a memory region");
	EXPECT(pcm_tp_send(ca, NULL, NULL, 5, 0), -EINVAL, "buffer is NULL");
	EXPECT(pcm_tp_send(ca, NULL, (void *)(UINTPTR_MAX - 10), 100, 0), -EINVAL, "wraps");
	EXPECT(pcm_tp_send(ca, NULL, heap, sizeof(heap), 0), -EINVAL, "is not inside");
	EXPECT(pcm_tp_conn_set_policy(ca, NULL), -EINVAL, "options are NULL");
	EXPECT(pcm_tp_conn_set_policy(ca, &bad_mode), -EINVAL, "o->mode");
	EXPECT(pcm_tp_conn_query(ca, NULL), -EINVAL, "out is NULL");
	EXPECT(pcm_tp_conn_peer(ca, NULL), -EINVAL, "conn_peer: out is NULL");
	EXPECT(pcm_tp_conn_peer((struct pcm_tp_conn *)heap, &peer), -EINVAL, "is not a connection");
	/* both ends are this process: in process by definition, through pcmd by its record */
	assert_int_equal(pcm_tp_conn_peer(ca, &peer), 0);
	assert_int_equal(peer.uid, getuid());
	assert_int_equal(peer.pid, getpid());
	EXPECT(pcm_tp_connect(a, NULL, NULL, 0), -EINVAL, "no address");
	EXPECT(pcm_tp_connect(a, long_addr, NULL, 0), -ENAMETOOLONG, "longer than 63");
	EXPECT(pcm_tp_listen(z, "contract-misuse-2"), -EADDRINUSE, "listens already");
	EXPECT(pcm_tp_accept(a, 0), -EINVAL, "does not listen");
	EXPECT(pcm_tp_poll(NULL, &c, 1), -EINVAL, "endpoint is NULL");
	EXPECT(pcm_tp_poll(a, NULL, 1), -EINVAL, "out NULL");
	EXPECT(pcm_tp_wait(NULL, 0), -EINVAL, "wait: the endpoint is NULL");
	EXPECT(pcm_tp_mr_reg(a, NULL, 10, &mr), -EINVAL, "addr NULL");
	EXPECT(pcm_tp_mr_reg(a, buf, 0, &mr), -EINVAL, "len 0");
	EXPECT(pcm_tp_mr_dereg(NULL), -EINVAL, "memory region is NULL");
	EXPECT(pcm_tp_endpoint_limits(a, NULL), -EINVAL, "endpoint_limits: out is NULL");
	EXPECT(pcm_tp_connect(a, "contract-misuse", &(struct pcm_tp_conn_opts){.paths = 65}, 0),
	       -EINVAL, "o->paths is 65");
	EXPECT(pcm_tp_poll(a, &c, -1), -EINVAL, "poll: max -1");
	EXPECT(pcm_tp_mr_reg(a, (void *)(UINTPTR_MAX - 10), 100, &mr), -EINVAL, "wraps");
	EXPECT(pcm_tp_endpoint_open(NULL, &ep), -EINVAL, "the configuration is NULL");
	EXPECT(pcm_tp_endpoint_open(&(struct pcm_tp_config){.backend = 9}, &ep), -EINVAL,
	       "backend 9");
	pcm_tp_mem_free(a, heap);
	assert_non_null(strstr(pcm_tp_last_error(), "is not memory pcm_tp_mem_alloc() gave"));

	/* double deregistration; deregistration of a region in use (-EBUSY: nothing changed) */
	assert_int_equal(pcm_tp_mr_reg(a, buf, 4096, &mr), 0);
	assert_int_equal(pcm_tp_mr_dereg(mr), 0);
	EXPECT(pcm_tp_mr_dereg(mr), -EINVAL, "is deregistered");
	EXPECT(pcm_tp_send(ca, mr, buf, 1, 0), -EINVAL, "is deregistered");
	assert_int_equal(pcm_tp_mr_reg(a, buf, 4096, &mr2), 0);
	assert_int_equal(pcm_tp_recv(ca, mr2, buf, 4096, 41), 0);
	EXPECT(pcm_tp_mr_dereg(mr2), -EBUSY, "posted operations use");
	/* memory freed while a receive uses it goes when that receive's completion is taken */
	freed = pcm_tp_mem_alloc(a, 4096);
	assert_non_null(freed);
	assert_int_equal(pcm_tp_recv(ca, NULL, freed, 4096, 42), 0);
	pcm_tp_mem_free(a, freed);
	EXPECT(pcm_tp_send(ca, NULL, freed, 1, 0), -EINVAL, "is not inside");

	/* double close; posts on a closed connection; its CLOSE; a gone handle */
	assert_int_equal(pcm_tp_conn_close(ca), 0);
	EXPECT(pcm_tp_conn_close(ca), -ENOTCONN, "closed already");
	EXPECT(pcm_tp_send(ca, NULL, buf, 1, 0), -ENOTCONN, "send: the connection is closed");
	EXPECT(pcm_tp_recv(ca, NULL, buf, 1, 0), -ENOTCONN, "recv: the connection is closed");
	EXPECT(pcm_tp_conn_set_policy(ca, &(struct pcm_tp_conn_opts){0}), -ENOTCONN,
	       "set_policy: the connection is closed");
	EXPECT(pcm_tp_conn_query(ca, &info), -ENOTCONN, "conn_query: the connection is closed");
	EXPECT(pcm_tp_conn_peer(ca, &peer), -ENOTCONN, "conn_peer: the connection is closed");
	c = next_op(a, z, PCM_TP_OP_RECV);
	assert_int_equal(c.status, -ECONNABORTED);
	assert_int_equal(c.cookie, 41);
	c = next_op(a, z, PCM_TP_OP_RECV);
	assert_int_equal(c.status, -ECONNABORTED);
	assert_int_equal(c.cookie, 42);
	c = next_op(a, z, PCM_TP_OP_CLOSE);
	assert_ptr_equal(c.conn, ca);
	assert_int_equal(pcm_tp_mr_dereg(mr2), 0); /* its receive's completion was taken */
	assert_int_equal(pcm_tp_poll(a, NULL, 0), 0); /* the poll after the CLOSE frees it */
	EXPECT(pcm_tp_conn_close(ca), -ENOTCONN, "is gone");
	EXPECT(pcm_tp_send(ca, NULL, buf, 1, 0), -ENOTCONN, "is gone");
	EXPECT(pcm_tp_conn_peer(ca, &peer), -ENOTCONN, "is gone");

	/* a dead connection: the peer's close reset it; once a completion said so, posts fail */
	assert_int_equal(pcm_tp_recv(cz, NULL, pcm_tp_mem_alloc(z, 64), 64, 51), 0);
	c = next_op(z, a, PCM_TP_OP_RECV);
	assert_int_equal(c.status, -ECONNRESET);
	EXPECT(pcm_tp_send(cz, NULL, pcm_tp_mem_alloc(z, 64), 1, 52), -ECONNRESET,
	       "the connection failed");
	assert_int_equal(pcm_tp_conn_close(cz), 0);

	/* an endpoint closed: its handles are refused, not read */
	assert_int_equal(pcm_tp_mr_reg(a, buf, 64, &mr), 0);
	pcm_tp_endpoint_close(a);
	EXPECT(pcm_tp_mr_dereg(mr), -EINVAL, "is deregistered");
	pcm_tp_endpoint_close(z);
	EXPECT(pcm_tp_conn_close(cz), -ENOTCONN, "is gone");
}

/* ---- policies ---------------------------------------------------------------------------- */

/* The dialer's options decide both sides; the acceptor's own default is no override. */
static void test_the_dialers_options_decide_and_conn_query_says_so(void **state)
{
	struct backend *b = *state;
	struct pcm_tp_conn_opts dctcp = {.policy = "dctcp", .mode = PCM_TP_SHELL_ASYNC_LOCKED};
	struct pcm_tp_conn_opts swift = {.policy = "swift", .mode = PCM_TP_SHELL_SYNC};
	struct pcm_tp_config cfg = {.datapath = "null", .progress = PCM_TP_PROGRESS_INLINE,
				    .policy = "newreno"};
	struct pcm_tp_endpoint *a = open_ep(b), *z;
	struct pcm_tp_conn_info ia, iz;
	struct pcm_tp_completion c;
	struct pcm_tp_conn *ca, *cz;

	cfg.backend = b->daemon ? PCM_TP_BACKEND_DAEMON : PCM_TP_BACKEND_INPROC;
	cfg.daemon_socket = b->daemon ? b->pcmd.sock : NULL;
	cfg.daemon_region_bytes = 1u << 20;
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &z), 0);
	assert_int_equal(pcm_tp_listen(z, "contract-policy"), 0);
	assert_int_equal(pcm_tp_accept(z, 1), 0);
	assert_int_equal(pcm_tp_connect(a, "contract-policy", &dctcp, 2), 0);
	ca = next_op(a, z, PCM_TP_OP_CONNECT).conn;
	c = next_op(z, a, PCM_TP_OP_ACCEPT);
	assert_int_equal(c.status, 0);
	cz = c.conn;
	assert_int_equal(pcm_tp_conn_query(ca, &ia), 0);
	assert_int_equal(pcm_tp_conn_query(cz, &iz), 0);
	printf("%s: dialer runs %s mode %d, acceptor %s mode %d\n", b->name, ia.policy, ia.mode,
	       iz.policy, iz.mode);
	assert_string_equal(ia.policy, "dctcp");
	assert_string_equal(iz.policy, "dctcp");
	assert_int_equal(ia.mode, PCM_TP_SHELL_ASYNC_LOCKED);
	assert_int_equal(iz.mode, PCM_TP_SHELL_ASYNC_LOCKED);
	/* a swap is seen by the query */
	assert_int_equal(pcm_tp_conn_set_policy(ca, &swift), 0);
	assert_int_equal(pcm_tp_conn_query(ca, &ia), 0);
	assert_string_equal(ia.policy, "swift");
	assert_int_equal(ia.mode, PCM_TP_SHELL_SYNC);
	/* the endpoint's cfg.policy names its own connects' policy */
	assert_int_equal(pcm_tp_listen(a, "contract-policy-2"), 0);
	assert_int_equal(pcm_tp_accept(a, 3), 0);
	assert_int_equal(pcm_tp_connect(z, "contract-policy-2", NULL, 4), 0);
	ca = next_op(z, a, PCM_TP_OP_CONNECT).conn;
	cz = next_op(a, z, PCM_TP_OP_ACCEPT).conn;
	assert_int_equal(pcm_tp_conn_query(ca, &ia), 0);
	assert_int_equal(pcm_tp_conn_query(cz, &iz), 0);
	assert_string_equal(ia.policy, "newreno");
	assert_string_equal(iz.policy, "newreno");
	pcm_tp_endpoint_close(a);
	pcm_tp_endpoint_close(z);
}

/* ---- a dead pcmd ----------------------------------------------------------------------- */

/*
 * kill -9 of pcmd under a busy-polling client with work outstanding: within a
 * bounded time every outstanding post (receives, a send, an accept) completes
 * once with -ESHUTDOWN, in post order, closed connections give their CLOSE,
 * then poll and wait say -ESHUTDOWN and so does every later call; once a new
 * pcmd runs on the same socket, a new endpoint carries messages again.
 */
static void test_a_killed_pcmd_ends_everything_and_a_new_endpoint_works(void **state)
{
	struct backend *b = *state;
	struct pcm_tp_endpoint *a = open_ep(b), *z = open_ep(b);
	struct pcm_tp_completion c[8];
	struct pcm_tp_conn *ca, *cz;
	uint64_t t0, learned_ms, want = 10, got = 0;
	uint8_t *buf;
	int n, rc;

	pair(a, z, "contract-kill", &ca, &cz);
	buf = pcm_tp_mem_alloc(a, 4096);
	for (uint64_t k = 10; k < 13; k++)
		assert_int_equal(pcm_tp_recv(ca, NULL, buf, 4096, k), 0);
	assert_int_equal(pcm_tp_listen(a, "contract-kill-2"), 0);
	assert_int_equal(pcm_tp_accept(a, 13), 0);
	assert_int_equal(kill(b->pcmd.pid, SIGKILL), 0);
	waitpid(b->pcmd.pid, NULL, 0);
	b->pcmd.pid = 0;
	/* a busy poller: pcm_tp_poll() only, no wait */
	t0 = harness_now_ms();
	for (;;) {
		n = pcm_tp_poll(a, c, 8);
		if (n == -ESHUTDOWN)
			break;
		assert_true(n >= 0);
		for (int i = 0; i < n; i++, got++) {
			assert_int_equal(c[i].status, -ESHUTDOWN);
			assert_int_equal(c[i].cookie, want++); /* in post order */
			assert_int_equal(c[i].op, c[i].cookie < 13 ? PCM_TP_OP_RECV : PCM_TP_OP_ACCEPT);
		}
		if (harness_now_ms() - t0 > 5000)
			fail_msg("the poller learned nothing of pcmd's death in 5 s (%llu of 4 ended)",
				 (unsigned long long)got);
	}
	learned_ms = harness_now_ms() - t0;
	assert_int_equal(got, 4);
	assert_non_null(strstr(pcm_tp_last_error(), "pcmd is gone"));
	assert_int_equal(pcm_tp_poll(a, c, 8), -ESHUTDOWN);
	assert_int_equal(pcm_tp_wait(a, 100), -ESHUTDOWN);
	assert_int_equal(pcm_tp_send(ca, NULL, buf, 1, 20), -ESHUTDOWN);
	assert_int_equal(pcm_tp_connect(a, "anywhere", NULL, 21), -ESHUTDOWN);
	/* a closed connection's CLOSE still comes, then -ESHUTDOWN again */
	assert_int_equal(pcm_tp_conn_close(ca), 0);
	assert_int_equal(pcm_tp_poll(a, c, 8), 1);
	assert_int_equal(c[0].op, PCM_TP_OP_CLOSE);
	assert_int_equal(pcm_tp_poll(a, c, 8), -ESHUTDOWN);
	assert_int_equal(pcm_tp_wait(z, 100), -ESHUTDOWN);
	assert_int_equal(pcm_tp_conn_close(cz), 0);
	printf("a busy poller learned of pcmd's death in %llu ms: 3 receives and an accept "
	       "ended with -ESHUTDOWN in post order\n",
	       (unsigned long long)learned_ms);
	assert_true(learned_ms < 1000);
	/* reopen once pcmd runs again */
	pcm_tp_endpoint_close(a);
	pcm_tp_endpoint_close(z);
	rc = pcm_tp_endpoint_open(&(struct pcm_tp_config){.backend = PCM_TP_BACKEND_DAEMON,
							   .daemon_socket = b->pcmd.sock},
				  &a);
	/* -ECONNRESET: the dying pcmd's listening socket still took the connection */
	assert_true(rc == -ECONNREFUSED || rc == -ENOENT || rc == -ECONNRESET);
	assert_int_equal(harness_restart(&b->pcmd, NULL), 0);
	a = open_ep(b);
	z = open_ep(b);
	pair(a, z, "contract-kill", &ca, &cz);
	assert_int_equal(pcm_tp_recv(cz, NULL, pcm_tp_mem_alloc(z, 64), 64, 30), 0);
	assert_int_equal(pcm_tp_send(ca, NULL, pcm_tp_mem_alloc(a, 64), 64, 31), 0);
	assert_int_equal(next_op(z, a, PCM_TP_OP_RECV).status, 0);
	assert_int_equal(next_op(a, z, PCM_TP_OP_SEND).status, 0);
	pcm_tp_endpoint_close(a);
	pcm_tp_endpoint_close(z);
}

/*
 * kill -9 of pcmd after it wrote completions the client has not polled: those
 * come first, with pcmd's status, and only then the library's -ESHUTDOWN of
 * what pcmd never finished (receives no send will match), in post order.
 */
#define KILL_SENDS 16u

static void test_a_killed_pcmds_written_completions_come_before_eshutdown(void **state)
{
	struct backend *b = *state;
	struct pcm_tp_endpoint *a = open_ep(b), *z = open_ep(b);
	struct pcm_tp_completion c[8];
	struct pcm_tp_conn *ca, *cz;
	uint32_t ok = 0, shut = 0, taken = 0;
	uint8_t *sbuf, *rbuf;
	int n;

	pair(a, z, "contract-kill-written", &ca, &cz);
	sbuf = pcm_tp_mem_alloc(a, 4096);
	rbuf = pcm_tp_mem_alloc(z, 4096);
	for (uint64_t k = 0; k < KILL_SENDS; k++)
		assert_int_equal(pcm_tp_recv(cz, NULL, rbuf, 4096, k), 0);
	for (uint64_t k = 0; k < KILL_SENDS; k++)
		assert_int_equal(pcm_tp_send(ca, NULL, sbuf, 64, k), 0);
	for (uint64_t k = KILL_SENDS; k < KILL_SENDS + 4; k++)
		assert_int_equal(pcm_tp_recv(ca, NULL, sbuf + 2048, 2048, k), 0);
	for (uint32_t got = 0; got < KILL_SENDS;) /* z has every message: a's sends are done */
		got += next_op(z, NULL, PCM_TP_OP_RECV).status == 0;
	assert_int_equal(pcm_tp_wait(a, 5000), 0); /* pcmd wrote at least one of a's */
	usleep(300 * 1000);                         /* and, by now, the others */
	assert_int_equal(kill(b->pcmd.pid, SIGKILL), 0);
	waitpid(b->pcmd.pid, NULL, 0);
	b->pcmd.pid = 0;
	while ((n = pcm_tp_poll(a, c, 8)) != -ESHUTDOWN) {
		assert_true(n >= 0);
		for (int i = 0; i < n; i++, taken++) {
			assert_int_equal(c[i].cookie, taken); /* post order: the sends, then the recvs */
			if (c[i].status == 0 && shut)
				fail_msg("send %llu's completion came after an -ESHUTDOWN",
					 (unsigned long long)c[i].cookie);
			ok += c[i].status == 0;
			shut += c[i].status == -ESHUTDOWN;
		}
	}
	printf("after kill -9: %u completions pcmd wrote, then %u -ESHUTDOWN, then poll said "
	       "-ESHUTDOWN\n", ok, shut);
	assert_int_equal(taken, KILL_SENDS + 4);
	assert_true(ok >= 1);
	assert_int_equal(ok + shut, taken);
	pcm_tp_endpoint_close(a);
	pcm_tp_endpoint_close(z);
}

/*
 * pcmd stopping (abort mode) hands over what it aborts before it hangs up:
 * the receives end with pcmd's -ECONNABORTED, none with the library's
 * -ESHUTDOWN, and only then do poll and wait say -ESHUTDOWN.
 */
#define STOP_RECVS 1000u

static void test_a_stopping_pcmd_hands_over_its_completions_before_eshutdown(void **state)
{
	static const char yaml[] = "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
				   "datapath: {kind: @DATAPATH@}\n"
				   "shutdown: {mode: abort}\n";
	struct backend *b = *state;
	struct pcm_tp_endpoint *a, *z;
	struct pcm_tp_completion c[8];
	struct pcm_tp_conn *ca, *cz;
	uint32_t aborted = 0;
	uint8_t *buf;
	int n;

	harness_finish(&b->pcmd);
	assert_int_equal(harness_start(&b->pcmd, yaml, 0, NULL), 0);
	a = open_ep(b);
	z = open_ep(b);
	pair(a, z, "contract-stop", &ca, &cz);
	buf = pcm_tp_mem_alloc(a, 4096);
	for (uint64_t k = 0; k < STOP_RECVS; k++)
		assert_int_equal(pcm_tp_recv(ca, NULL, buf, 4096, k), 0);
	/* pcmd has them all once a send through the same ring came back */
	assert_int_equal(pcm_tp_recv(cz, NULL, pcm_tp_mem_alloc(z, 64), 64, 99), 0);
	assert_int_equal(pcm_tp_send(ca, NULL, buf, 8, 100), 0);
	assert_int_equal(next_op(a, z, PCM_TP_OP_SEND).status, 0);
	kill(b->pcmd.pid, SIGTERM);
	/* asleep in wait, the client hears the hang-up at once: it must come last */
	while (pcm_tp_wait(a, 5000) == 0 && (n = pcm_tp_poll(a, c, 8)) != -ESHUTDOWN) {
		assert_true(n >= 0);
		for (int i = 0; i < n; i++) {
			assert_int_equal(c[i].op, PCM_TP_OP_RECV);
			if (c[i].status != -ECONNABORTED)
				fail_msg("receive %llu ended with %s, not pcmd's -ECONNABORTED",
					 (unsigned long long)c[i].cookie, pcm_tp_strerror(c[i].status));
			aborted++;
		}
	}
	assert_int_equal(aborted, STOP_RECVS);
	assert_int_equal(pcm_tp_wait(a, 0), -ESHUTDOWN);
	assert_int_equal(pcm_tp_poll(a, c, 8), -ESHUTDOWN);
	pcm_tp_endpoint_close(a);
	pcm_tp_endpoint_close(z);
}

/*
 * A busy poller of a daemon-mode endpoint makes no system call per poll: it
 * looks at pcmd's socket at most every 10 ms (pcm_transport(3), "When pcmd
 * dies"). The polls run in a child of this test under strace, between two
 * getppid() markers; the system calls between the markers are counted.
 */
#define BUSY_POLLS 200000u
#define BUSY_MS 300u

static uint64_t coarse_ms(void) /* the vDSO's coarse clock: no system call */
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The child: poll an idle endpoint BUSY_POLLS times and at least BUSY_MS; print both. */
static int busy_poll_child(const char *sock)
{
	struct pcm_tp_config cfg = {.backend = PCM_TP_BACKEND_DAEMON, .daemon_socket = sock,
				    .daemon_region_bytes = 1u << 20};
	struct pcm_tp_completion c[8];
	struct pcm_tp_endpoint *ep;
	uint64_t polls = 0, t0, ms;

	if (pcm_tp_endpoint_open(&cfg, &ep) < 0)
		return 2;
	getppid();
	t0 = coarse_ms();
	do {
		for (int i = 0; i < 1024; i++, polls++)
			if (pcm_tp_poll(ep, c, 8) != 0)
				return 3;
		ms = coarse_ms() - t0;
	} while (polls < BUSY_POLLS || ms < BUSY_MS);
	getppid();
	printf("%llu %llu\n", (unsigned long long)polls, (unsigned long long)ms);
	pcm_tp_endpoint_close(ep);
	return 0;
}

/* The system calls strace logged in @path between the first and the last getppid(). */
static long calls_between_markers(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	long n = 0, at_last = -1;
	bool in = false;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "getppid(")) {
			if (in)
				at_last = n;
			in = true;
			continue;
		}
		if (in && !strstr(line, "resumed>") && !strstr(line, "+++") && !strstr(line, "---"))
			n++;
	}
	fclose(f);
	return at_last;
}

static void test_a_busy_poller_makes_no_system_call_per_poll(void **state)
{
	struct backend *b = *state;
	char self[256], trace[] = "/tmp/pcm-busy-poll-XXXXXX", cmd[1024];
	unsigned long long polls = 0, ms = 0;
	long calls;
	ssize_t len;
	FILE *p;
	int fd;

	if (system("strace -o /dev/null true >/dev/null 2>&1") != 0)
		skip(); /* no strace, or no ptrace here */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(len > 0);
	self[len] = '\0';
	fd = mkstemp(trace);
	assert_true(fd >= 0);
	close(fd);
	/* LeakSanitizer cannot run under ptrace: the traced child checks no leaks */
	snprintf(cmd, sizeof(cmd),
		 "ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" strace -f -o %s %s --busy-poll %s",
		 trace, self, b->pcmd.sock);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%llu %llu", &polls, &ms), 2);
	assert_int_equal(pclose(p), 0);
	calls = calls_between_markers(trace);
	unlink(trace);
	printf("%llu polls of an idle daemon-mode endpoint in %llu ms: %ld system calls\n", polls,
	       ms, calls);
	assert_true(calls >= 0);
	assert_true((unsigned long long)calls * 100 < polls);
	assert_true((unsigned long long)calls <= 2 * (ms / 10 + 2)); /* a look: poll(), recv() */
}

/* ---- one behaviour, one doc -------------------------------------------------------------- */

/*
 * PCM_TP_BACKEND_AUTO: a program with $PCMD_SOCKET set (and a pcmd there)
 * stays in process unless $PCM_TRANSPORT says daemon (or auto). In process,
 * malloc'd memory registers; in daemon mode it cannot.
 */
static void test_auto_goes_to_pcmd_only_when_told(void **state)
{
	struct backend *b = *state;
	struct pcm_tp_config cfg = {.backend = PCM_TP_BACKEND_AUTO, .datapath = "null",
				    .daemon_region_bytes = 1u << 20};
	struct pcm_tp_endpoint *ep;
	struct pcm_tp_mr *mr;
	static uint8_t heap[4096];
	static const struct {
		const char *env; /* NULL: unset */
		int daemon;
	} cases[] = {{NULL, 0}, {"", 0}, {"inproc", 0}, {"daemon", 1}, {"auto", 1}};

	setenv("PCMD_SOCKET", b->pcmd.sock, 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].env)
			setenv("PCM_TRANSPORT", cases[i].env, 1);
		else
			unsetenv("PCM_TRANSPORT");
		assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), 0);
		assert_int_equal(pcm_tp_mr_reg(ep, heap, sizeof(heap), &mr),
				 cases[i].daemon ? -EINVAL : 0);
		if (!cases[i].daemon)
			assert_int_equal(pcm_tp_mr_dereg(mr), 0);
		pcm_tp_endpoint_close(ep);
	}
	setenv("PCM_TRANSPORT", "carrier-pigeon", 1);
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), -EINVAL);
	assert_non_null(strstr(pcm_tp_last_error(), "PCM_TRANSPORT='carrier-pigeon'"));
	unsetenv("PCM_TRANSPORT");
	unsetenv("PCMD_SOCKET");
}

/* softnic in process is refused, saying where it runs; through pcmd it runs. */
static void test_softnic_in_process_is_refused_with_advice(void **state)
{
	struct pcm_tp_config cfg = {.backend = PCM_TP_BACKEND_INPROC, .datapath = "softnic"};
	struct pcm_tp_endpoint *ep;

	(void)state;
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), -EOPNOTSUPP);
	assert_non_null(strstr(pcm_tp_last_error(), "pcmd"));
	assert_null(strstr(pcm_tp_last_error(), "xp_dp_config"));
}

/* A .so path: in process a file this program opens; through pcmd, -EPERM with advice. */
static void test_a_so_policy_opens_in_process_and_is_refused_with_advice_by_pcmd(void **state)
{
	struct backend *b = *state;
	struct pcm_tp_conn_opts so = {.policy = PCMD_TEST_PKG_SO};
	struct pcm_tp_endpoint *a = open_ep(b), *z = open_ep(b);
	struct pcm_tp_conn_info info;
	struct pcm_tp_conn *ca, *cz;

	pair(a, z, "contract-so", &ca, &cz);
	if (b->daemon) {
		assert_int_equal(pcm_tp_conn_set_policy(ca, &so), -EPERM);
		assert_non_null(strstr(pcm_tp_last_error(), "pcmctl policies load"));
		assert_int_equal(pcm_tp_connect(a, "contract-so", &so, 3), -EPERM);
	} else {
		assert_int_equal(pcm_tp_conn_set_policy(ca, &so), 0);
		assert_int_equal(pcm_tp_conn_query(ca, &info), 0);
		assert_string_equal(info.policy, "fixed_window");
	}
	pcm_tp_endpoint_close(a);
	pcm_tp_endpoint_close(z);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
#define BOTH(fn)                                                                                   \
	cmocka_unit_test_prestate_setup_teardown(fn, start, stop, &inproc),                        \
	    cmocka_unit_test_prestate_setup_teardown(fn, start, stop, &daemon_be)
	    BOTH(test_1500_receives_then_1500_sends_each_side),
	    BOTH(test_a_post_past_the_limits_is_refused_at_once_and_fifo_holds),
	    BOTH(test_misuse_is_an_error_with_the_same_code_in_both_backends),
	    BOTH(test_the_dialers_options_decide_and_conn_query_says_so),
	    BOTH(test_a_so_policy_opens_in_process_and_is_refused_with_advice_by_pcmd),
	    cmocka_unit_test_prestate_setup_teardown(
		test_a_killed_pcmd_ends_everything_and_a_new_endpoint_works, start, stop,
		&daemon_be),
	    cmocka_unit_test_prestate_setup_teardown(
		test_a_killed_pcmds_written_completions_come_before_eshutdown, start, stop,
		&daemon_be),
	    cmocka_unit_test_prestate_setup_teardown(
		test_a_stopping_pcmd_hands_over_its_completions_before_eshutdown, start, stop,
		&daemon_be),
	    cmocka_unit_test_prestate_setup_teardown(
		test_a_busy_poller_makes_no_system_call_per_poll, start, stop, &daemon_be),
	    cmocka_unit_test_prestate_setup_teardown(test_auto_goes_to_pcmd_only_when_told, start,
						     stop, &daemon_be),
	    cmocka_unit_test(test_softnic_in_process_is_refused_with_advice),
#undef BOTH
	};

	if (argc == 3 && strcmp(argv[1], "--busy-poll") == 0)
		return busy_poll_child(argv[2]); /* test_a_busy_poller_makes_no_system_call_per_poll */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
