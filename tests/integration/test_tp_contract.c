// SPDX-License-Identifier: MIT
/*
 * test_tp_contract.c - libpcmtransport keeps its word in both backends
 * (pcm_transport(3), "The contract"): every case runs in process (datapath
 * null) and through a pcmd this test starts (the datapath of
 * $PCMD_TEST_DATAPATH, default softnic), with the same expectations.
 *
 *   the post contract   1,500 receives and 1,500 sends posted without polling,
 *                       each refused post retried in order: every post that
 *                       returned 0 completes exactly once with status 0, and
 *                       receive k holds message k.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
#define BOTH(fn)                                                                                   \
	cmocka_unit_test_prestate_setup_teardown(fn, start, stop, &inproc),                        \
	    cmocka_unit_test_prestate_setup_teardown(fn, start, stop, &daemon_be)
	    BOTH(test_1500_receives_then_1500_sends_each_side),
	    BOTH(test_a_post_past_the_limits_is_refused_at_once_and_fifo_holds),
#undef BOTH
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
