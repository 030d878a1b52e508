// SPDX-License-Identifier: MIT
/*
 * test_tp_api.c - libpcmtransport's public calls, in-process backend on the
 * null datapath: a connection set up by listen/connect/accept carries
 * messages both ways byte-exact, and every error path pcm_transport(3)
 * lists for this backend returns (or completes with) its code: -EINVAL,
 * -ENODEV, -ENOENT, -EOPNOTSUPP, -EADDRINUSE, -ECONNREFUSED, -ENOTCONN,
 * -ECONNABORTED, -ECONNRESET, -EMSGSIZE, -ETIMEDOUT, -EAGAIN, -ENOSPC,
 * -EBADMSG (a forged dial through the registry bootstrap), and
 * pcm_tp_strerror() has a text for each. A live policy swap mid-transfer
 * loses and duplicates nothing. Threaded progress runs under TSan.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "datapath.h"
#include "pcm/transport.h"

struct rig {
	struct pcm_tp_endpoint *ep[2]; /* 0 dials, 1 listens */
	struct pcm_tp_conn *c[2];
	uint8_t *buf[2];
	size_t len;
	char name[32];
};

static int g_names;

static void drive(struct rig *r)
{
	pcm_tp_poll(r->ep[0], NULL, 0);
	pcm_tp_poll(r->ep[1], NULL, 0);
}

/* The next completion of side @s (both sides make progress meanwhile). */
static struct pcm_tp_completion next(struct rig *r, int s)
{
	struct pcm_tp_completion c;

	for (long spins = 0; spins < 20000000; spins++) {
		drive(r);
		if (pcm_tp_poll(r->ep[s], &c, 1) == 1)
			return c;
	}
	fail_msg("side %d: no completion", s);
	return c;
}

static void open_ep(struct pcm_tp_endpoint **ep, enum pcm_tp_progress progress)
{
	struct pcm_tp_config cfg = { .backend = PCM_TP_BACKEND_INPROC, .datapath = "null",
				     .progress = progress };

	assert_int_equal(pcm_tp_endpoint_open(&cfg, ep), 0);
}

static void rig_open(struct rig *r, size_t len, const struct pcm_tp_conn_opts *o,
		     enum pcm_tp_progress progress)
{
	struct pcm_tp_completion c;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "tp-api-%d", g_names++);
	r->len = len;
	for (int s = 0; s < 2; s++) {
		open_ep(&r->ep[s], progress);
		r->buf[s] = pcm_tp_mem_alloc(r->ep[s], len);
		assert_non_null(r->buf[s]);
	}
	assert_int_equal(pcm_tp_listen(r->ep[1], r->name), 0);
	assert_int_equal(pcm_tp_accept(r->ep[1], 77), 0);
	assert_int_equal(pcm_tp_connect(r->ep[0], r->name, o, 66), 0);
	c = next(r, 0);
	assert_int_equal(c.op, PCM_TP_OP_CONNECT);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.cookie, 66);
	r->c[0] = c.conn;
	c = next(r, 1);
	assert_int_equal(c.op, PCM_TP_OP_ACCEPT);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.cookie, 77);
	r->c[1] = c.conn;
}

static void rig_close(struct rig *r)
{
	for (int s = 0; s < 2; s++) {
		pcm_tp_mem_free(r->ep[s], r->buf[s]);
		pcm_tp_endpoint_close(r->ep[s]);
	}
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed * 7 + (i >> 8));
}

static void test_messages_both_ways_arrive_byte_exact(void **state)
{
	enum { MSG = 300000 };
	struct rig r;

	rig_open(&r, 2 * MSG, NULL, PCM_TP_PROGRESS_INLINE);
	for (int s = 0; s < 2; s++) {
		fill(r.buf[s] + MSG, MSG, (uint32_t)s + 1);
		assert_int_equal(pcm_tp_recv(r.c[s], NULL, r.buf[s], MSG, 10 + s), 0);
	}
	for (int s = 0; s < 2; s++)
		assert_int_equal(pcm_tp_send(r.c[s], NULL, r.buf[s] + MSG, MSG - s, 20 + s), 0);
	for (int s = 0; s < 2; s++) {
		int seen = 0;

		for (int k = 0; k < 2; k++) {
			struct pcm_tp_completion c = next(&r, s);

			assert_int_equal(c.status, 0);
			assert_ptr_equal(c.conn, r.c[s]);
			if (c.op == PCM_TP_OP_RECV) {
				assert_int_equal(c.cookie, 10 + s);
				assert_int_equal(c.bytes, MSG - !s);
				assert_memory_equal(r.buf[s], r.buf[!s] + MSG, MSG - !s);
				seen |= 1;
			} else {
				assert_int_equal(c.op, PCM_TP_OP_SEND);
				assert_int_equal(c.cookie, 20 + s);
				seen |= 2;
			}
		}
		assert_int_equal(seen, 3);
	}
	rig_close(&r);
}

static void test_open_rejects_bad_configurations(void **state)
{
	struct pcm_tp_config cfg = { .backend = PCM_TP_BACKEND_INPROC, .datapath = "null" };
	struct pcm_tp_endpoint *ep;

	assert_int_equal(pcm_tp_endpoint_open(&cfg, NULL), -EINVAL);
	assert_int_equal(pcm_tp_endpoint_open(NULL, &ep), -EINVAL);
	/* AUTO follows $PCM_TRANSPORT */
	cfg.backend = PCM_TP_BACKEND_AUTO;
	setenv("PCM_TRANSPORT", "carrier-pigeon", 1);
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), -EINVAL);
	assert_non_null(strstr(pcm_tp_last_error(), "carrier-pigeon"));
	setenv("PCM_TRANSPORT", "inproc", 1);
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), 0);
	pcm_tp_endpoint_close(ep);
	unsetenv("PCM_TRANSPORT");
	cfg.backend = PCM_TP_BACKEND_INPROC;
	cfg.datapath = NULL;
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), -EINVAL);
	cfg.datapath = "nosuch";
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), -ENODEV);
	assert_non_null(strstr(pcm_tp_last_error(), "nosuch"));
	cfg.datapath = "null";
	cfg.engines = 1000;
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), -EINVAL);
	cfg.engines = 1;
	cfg.chunk_bytes = 64u << 20;
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), -EINVAL);
	cfg.chunk_bytes = 0;
	cfg.flags = 1u << 9;
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), -EINVAL);
	cfg.flags = 0;
	cfg.policy = "nosuch-policy";
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), -ENOENT);
	assert_non_null(strstr(pcm_tp_last_error(), "nosuch-policy"));
	cfg.policy = NULL;
	cfg.backend = PCM_TP_BACKEND_DAEMON;
	cfg.daemon_socket = "/nonexistent/pcmd.sock";
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), -ENOENT); /* the daemon backend's */
	assert_non_null(strstr(pcm_tp_last_error(), "/nonexistent/pcmd.sock"));
	cfg.backend = (enum pcm_tp_backend)42;
	assert_int_equal(pcm_tp_endpoint_open(&cfg, &ep), -EINVAL);
}

static void test_null_objects_are_einval(void **state)
{
	struct pcm_tp_completion c;

	assert_int_equal(pcm_tp_listen(NULL, "x"), -EINVAL);
	assert_int_equal(pcm_tp_connect(NULL, "x", NULL, 0), -EINVAL);
	assert_int_equal(pcm_tp_accept(NULL, 0), -EINVAL);
	assert_int_equal(pcm_tp_conn_close(NULL), -EINVAL);
	assert_int_equal(pcm_tp_conn_set_policy(NULL, NULL), -EINVAL);
	assert_int_equal(pcm_tp_mr_reg(NULL, &c, 1, NULL), -EINVAL);
	assert_int_equal(pcm_tp_mr_dereg(NULL), -EINVAL);
	assert_int_equal(pcm_tp_send(NULL, NULL, &c, 1, 0), -EINVAL);
	assert_int_equal(pcm_tp_recv(NULL, NULL, &c, 1, 0), -EINVAL);
	assert_int_equal(pcm_tp_poll(NULL, &c, 1), -EINVAL);
	assert_int_equal(pcm_tp_wait(NULL, 0), -EINVAL);
	assert_int_equal(pcm_tp_fd(NULL), -EINVAL);
	assert_null(pcm_tp_mem_alloc(NULL, 10));
	pcm_tp_endpoint_close(NULL);
}

static void test_setup_errors(void **state)
{
	struct pcm_tp_conn_opts bad_mode = { .mode = (enum pcm_tp_shell_mode)9 };
	struct pcm_tp_conn_opts bad_policy = { .policy = "no-such-package" };
	struct pcm_tp_conn_opts bad_paths = { .paths = 1000 };
	struct pcm_tp_endpoint *a, *b;
	struct pcm_tp_completion c;
	struct rig r = { 0 };

	open_ep(&a, PCM_TP_PROGRESS_INLINE);
	open_ep(&b, PCM_TP_PROGRESS_INLINE);
	r.ep[0] = a;
	r.ep[1] = b;
	assert_int_equal(pcm_tp_listen(a, NULL), -EINVAL);
	assert_int_equal(pcm_tp_listen(a, ""), -EINVAL);
	assert_int_equal(pcm_tp_accept(a, 1), -EINVAL); /* not listening */
	assert_int_equal(pcm_tp_listen(a, "tp-api-setup"), 0);
	assert_int_equal(pcm_tp_listen(a, "tp-api-other"), -EADDRINUSE);
	assert_int_equal(pcm_tp_listen(b, "tp-api-setup"), -EADDRINUSE);
	assert_int_equal(pcm_tp_connect(b, NULL, NULL, 0), -EINVAL);
	assert_int_equal(pcm_tp_connect(b, "tp-api-setup", &bad_mode, 0), -EINVAL);
	assert_int_equal(pcm_tp_connect(b, "tp-api-setup", &bad_policy, 0), -ENOENT);
	assert_non_null(strstr(pcm_tp_last_error(), "no-such-package"));
	assert_int_equal(pcm_tp_connect(b, "tp-api-setup", &bad_paths, 0), -EINVAL);
	/* nothing listens there: the CONNECT completion says so */
	assert_int_equal(pcm_tp_connect(b, "tp-api-nobody", NULL, 5), 0);
	c = next(&r, 1);
	assert_int_equal(c.op, PCM_TP_OP_CONNECT);
	assert_int_equal(c.status, -ECONNREFUSED);
	assert_int_equal(c.cookie, 5);
	assert_null(c.conn);
	/* a dial no accept() takes waits; nothing completes meanwhile */
	assert_int_equal(pcm_tp_connect(b, "tp-api-setup", NULL, 6), 0);
	for (int i = 0; i < 1000; i++)
		drive(&r);
	assert_int_equal(pcm_tp_poll(b, &c, 1), 0);
	assert_int_equal(pcm_tp_accept(a, 7), 0);
	c = next(&r, 0);
	assert_int_equal(c.op, PCM_TP_OP_ACCEPT);
	assert_int_equal(c.status, 0);
	c = next(&r, 1);
	assert_int_equal(c.op, PCM_TP_OP_CONNECT);
	assert_int_equal(c.status, 0);
	/* inline progress has no fd; the wait times out with nothing to do */
	assert_int_equal(pcm_tp_fd(a), -EOPNOTSUPP);
	assert_int_equal(pcm_tp_wait(a, 1), -ETIMEDOUT);
	pcm_tp_endpoint_close(a);
	pcm_tp_endpoint_close(b);
}

static void test_a_forged_dial_is_refused_with_ebadmsg(void **state)
{
	const uint8_t junk[] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3 };
	struct pcm_tp_endpoint *a;
	struct pcm_tp_completion c;
	struct xp_boot_event ev;
	struct xp_boot *fake;
	struct pcm_diag diag;
	int n = 0;

	open_ep(&a, PCM_TP_PROGRESS_INLINE);
	assert_int_equal(pcm_tp_listen(a, "tp-api-forged"), 0);
	assert_int_equal(pcm_tp_accept(a, 9), 0);
	assert_int_equal(xp_boot_registry_ops.create(&fake, &diag), 0);
	assert_int_equal(fake->ops->dial(fake, "tp-api-forged", junk, sizeof(junk), 1, &diag), 0);
	while (pcm_tp_poll(a, &c, 1) == 0)
		;
	assert_int_equal(c.op, PCM_TP_OP_ACCEPT);
	assert_int_equal(c.status, -EBADMSG);
	assert_null(c.conn);
	assert_non_null(strstr(pcm_tp_last_error(), "malformed"));
	while ((n = fake->ops->poll(fake, &ev, 1)) == 0)
		;
	assert_int_equal(ev.kind, XP_BOOT_EV_ANSWERED);
	assert_int_equal(ev.status, -EBADMSG); /* the forger hears the refusal */
	fake->ops->destroy(fake);
	pcm_tp_endpoint_close(a);
}

static void test_post_errors(void **state)
{
	struct pcm_tp_endpoint *other;
	struct pcm_tp_completion c;
	struct pcm_tp_mr *mr;
	uint8_t outside[64];
	struct rig r;

	rig_open(&r, 8192, NULL, PCM_TP_PROGRESS_INLINE);
	open_ep(&other, PCM_TP_PROGRESS_INLINE);
	/* outside every region; outside the region named; a region of another endpoint */
	assert_int_equal(pcm_tp_send(r.c[0], NULL, outside, sizeof(outside), 1), -EINVAL);
	assert_int_equal(pcm_tp_mr_reg(r.ep[0], outside, sizeof(outside), &mr), 0);
	assert_int_equal(pcm_tp_send(r.c[0], mr, r.buf[0], 16, 1), -EINVAL);
	assert_int_equal(pcm_tp_send(r.c[0], mr, outside, sizeof(outside) + 1, 1), -EINVAL);
	assert_int_equal(pcm_tp_mr_dereg(mr), 0);
	assert_int_equal(pcm_tp_mr_reg(other, outside, sizeof(outside), &mr), 0);
	assert_int_equal(pcm_tp_send(r.c[0], mr, outside, 8, 1), -EINVAL);
	assert_int_equal(pcm_tp_mr_dereg(mr), 0);
	assert_int_equal(pcm_tp_mr_reg(r.ep[0], NULL, 10, &mr), -EINVAL);
	assert_int_equal(pcm_tp_mr_reg(r.ep[0], outside, 0, &mr), -EINVAL);
	assert_int_equal(pcm_tp_send(r.c[0], NULL, NULL, 5, 1), -EINVAL);
	assert_null(pcm_tp_mem_alloc(r.ep[0], 0));
	pcm_tp_endpoint_close(other);
	/* pcm_tp_mem_alloc()'s memory is freed with pcm_tp_mem_free(), not deregistered */
	/* a message longer than the receive: both sides complete with -EMSGSIZE */
	assert_int_equal(pcm_tp_recv(r.c[1], NULL, r.buf[1], 1000, 2), 0);
	assert_int_equal(pcm_tp_send(r.c[0], NULL, r.buf[0], 2000, 3), 0);
	c = next(&r, 0);
	assert_int_equal(c.op, PCM_TP_OP_SEND);
	assert_int_equal(c.status, -EMSGSIZE);
	c = next(&r, 1);
	assert_int_equal(c.op, PCM_TP_OP_RECV);
	assert_int_equal(c.status, -EMSGSIZE);
	/* the connection goes on after it */
	assert_int_equal(pcm_tp_recv(r.c[1], NULL, r.buf[1], 1000, 4), 0);
	assert_int_equal(pcm_tp_send(r.c[0], NULL, r.buf[0], 999, 5), 0);
	assert_int_equal(next(&r, 1).status, 0);
	assert_int_equal(next(&r, 0).status, 0);
	rig_close(&r);
}

static void test_close_aborts_local_work_and_resets_the_peer(void **state)
{
	struct pcm_tp_completion c;
	struct rig r;

	rig_open(&r, 8192, NULL, PCM_TP_PROGRESS_INLINE);
	assert_int_equal(pcm_tp_recv(r.c[0], NULL, r.buf[0], 4096, 1), 0);
	assert_int_equal(pcm_tp_recv(r.c[1], NULL, r.buf[1], 4096, 2), 0);
	assert_int_equal(pcm_tp_conn_close(r.c[0]), 0);
	assert_int_equal(pcm_tp_conn_close(r.c[0]), -ENOTCONN);
	assert_int_equal(pcm_tp_send(r.c[0], NULL, r.buf[0], 10, 3), -ENOTCONN);
	assert_int_equal(pcm_tp_conn_set_policy(r.c[0], &(struct pcm_tp_conn_opts){ 0 }),
			 -ENOTCONN);
	c = next(&r, 0);
	assert_int_equal(c.op, PCM_TP_OP_RECV);
	assert_int_equal(c.status, -ECONNABORTED);
	assert_ptr_equal(c.conn, r.c[0]);
	c = next(&r, 1);
	assert_int_equal(c.op, PCM_TP_OP_RECV);
	assert_int_equal(c.status, -ECONNRESET);
	assert_int_equal(pcm_tp_conn_close(r.c[1]), 0);
	/* each side's last completion: its CLOSE */
	for (int s = 0; s < 2; s++) {
		c = next(&r, s);
		assert_int_equal(c.op, PCM_TP_OP_CLOSE);
		assert_ptr_equal(c.conn, r.c[s]);
		assert_int_equal(c.status, 0);
	}
	for (int i = 0; i < 100; i++)
		drive(&r);
	assert_int_equal(pcm_tp_poll(r.ep[0], &c, 1), 0); /* nothing more, ever */
	assert_int_equal(pcm_tp_poll(r.ep[1], &c, 1), 0);
	/* the poll after the CLOSE freed it: its handle is refused, not read */
	assert_int_equal(pcm_tp_conn_close(r.c[0]), -ENOTCONN);
	assert_int_equal(pcm_tp_send(r.c[1], NULL, r.buf[1], 10, 9), -ENOTCONN);
	assert_non_null(strstr(pcm_tp_last_error(), "gone"));
	r.c[0] = r.c[1] = NULL;
	rig_close(&r);
}

static void test_posts_past_the_limit_are_eagain_and_lose_nothing(void **state)
{
	struct pcm_tp_completion c[64];
	uint64_t posted = 0, done = 0;
	struct pcm_tp_limits lim;
	bool closed = false;
	uint8_t *seen;
	struct rig r;
	int rc;

	rig_open(&r, 4096, NULL, PCM_TP_PROGRESS_INLINE);
	assert_int_equal(pcm_tp_endpoint_limits(r.ep[0], &lim), 0);
	/* the engine's command ring (1,024) fills on the way: that is no refusal */
	while ((rc = pcm_tp_send(r.c[0], NULL, r.buf[0], 64, posted)) == 0)
		posted++;
	assert_int_equal(rc, -EAGAIN);
	assert_int_equal(posted, lim.sends_per_conn);
	/* every accepted post completes exactly once, never with -EAGAIN */
	seen = calloc(posted, 1);
	assert_int_equal(pcm_tp_conn_close(r.c[0]), 0);
	while (!closed) {
		int n;

		drive(&r);
		n = pcm_tp_poll(r.ep[0], c, 64);
		for (int i = 0; i < n; i++) {
			if (c[i].op == PCM_TP_OP_CLOSE) {
				assert_int_equal(done, posted); /* the connection's last completion */
				closed = true;
				continue;
			}
			assert_int_equal(c[i].op, PCM_TP_OP_SEND);
			assert_true(c[i].cookie < posted);
			assert_false(seen[c[i].cookie]);
			seen[c[i].cookie] = 1;
			assert_true(c[i].status == -ECONNABORTED || c[i].status == 0);
			done++;
		}
	}
	free(seen);
	r.c[0] = NULL;
	rig_close(&r);
}

static void test_region_table_full_is_enospc(void **state)
{
	static uint8_t area[2048];
	struct pcm_tp_endpoint *ep;
	struct pcm_tp_mr *mr[2048];
	int n = 0, rc;

	open_ep(&ep, PCM_TP_PROGRESS_INLINE);
	while (n < 2048 && (rc = pcm_tp_mr_reg(ep, area + n, 1, &mr[n])) == 0)
		n++;
	assert_int_equal(rc, -ENOSPC);
	assert_non_null(strstr(pcm_tp_last_error(), "memory regions"));
	while (n > 0)
		assert_int_equal(pcm_tp_mr_dereg(mr[--n]), 0);
	pcm_tp_endpoint_close(ep);
}

/* swift -> newreno (sync) -> swift (async locked) in the middle of a transfer */
static void live_swap(enum pcm_tp_progress progress)
{
	enum { MSG = 4 << 20 };
	struct pcm_tp_conn_opts nr = { .policy = "newreno" };
	struct pcm_tp_conn_opts bad = { .policy = "nosuch" };
	struct pcm_tp_conn_opts async = { .policy = "swift", .mode = PCM_TP_SHELL_ASYNC_LOCKED };
	struct pcm_tp_completion c;
	struct rig r;

	rig_open(&r, 2 * (size_t)MSG, NULL, progress);
	fill(r.buf[0] + MSG, MSG, 9);
	assert_int_equal(pcm_tp_recv(r.c[1], NULL, r.buf[1], MSG, 1), 0);
	assert_int_equal(pcm_tp_send(r.c[0], NULL, r.buf[0] + MSG, MSG, 2), 0);
	assert_int_equal(pcm_tp_conn_set_policy(r.c[0], &nr), 0);
	assert_int_equal(pcm_tp_conn_set_policy(r.c[0], &bad), -ENOENT);
	drive(&r);
	assert_int_equal(pcm_tp_conn_set_policy(r.c[0], &async), 0);
	c = next(&r, 1);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.bytes, MSG);
	assert_memory_equal(r.buf[1], r.buf[0] + MSG, MSG);
	c = next(&r, 0);
	assert_int_equal(c.op, PCM_TP_OP_SEND);
	assert_int_equal(c.status, 0);
	rig_close(&r);
}

static void test_live_policy_swap_inline(void **state)
{
	live_swap(PCM_TP_PROGRESS_INLINE);
}

static void test_live_policy_swap_with_engine_threads(void **state)
{
	live_swap(PCM_TP_PROGRESS_THREAD);
}

static void test_engine_threads_wake_the_waiter(void **state)
{
	struct pcm_tp_completion c;
	struct rig r;

	struct pollfd pfd = { .events = POLLIN };

	rig_open(&r, 8192, NULL, PCM_TP_PROGRESS_THREAD);
	assert_int_equal(pcm_tp_wait(r.ep[1], 1), -ETIMEDOUT);
	assert_int_equal(pcm_tp_recv(r.c[1], NULL, r.buf[1], 4096, 1), 0);
	assert_int_equal(pcm_tp_send(r.c[0], NULL, r.buf[0], 4096, 2), 0);
	assert_int_equal(pcm_tp_wait(r.ep[1], 10000), 0);
	assert_int_equal(pcm_tp_poll(r.ep[1], &c, 1), 1);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.bytes, 4096);
	/* the sender's completion makes its armed fd readable */
	pfd.fd = pcm_tp_fd(r.ep[0]);
	assert_true(pfd.fd >= 0);
	if (pcm_tp_poll(r.ep[0], &c, 1) == 0) {
		assert_int_equal(poll(&pfd, 1, 10000), 1);
		assert_int_equal(pcm_tp_wait(r.ep[0], 10000), 0);
		assert_int_equal(pcm_tp_poll(r.ep[0], &c, 1), 1);
	}
	assert_int_equal(c.op, PCM_TP_OP_SEND);
	assert_int_equal(c.status, 0);
	rig_close(&r);
}

static void test_every_error_code_has_a_text(void **state)
{
	const int codes[] = { EAGAIN, ECONNABORTED, ECONNRESET, ECONNREFUSED, EADDRINUSE,
			      EMSGSIZE, ENOTCONN, ETIMEDOUT, EINVAL, ENOENT, ENODEV, EOPNOTSUPP,
			      ENOSPC, ENOMEM, EPERM, EPROTO, EBADMSG, ESHUTDOWN, EIO, EBADF,
			      EFAULT, EPROTONOSUPPORT, EACCES, ENAMETOOLONG, EBUSY };

	assert_string_equal(pcm_tp_strerror(0), "success");
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *t = pcm_tp_strerror(-codes[i]);

		assert_non_null(t);
		assert_true(strlen(t) > 10);
		assert_string_not_equal(t, strerror(codes[i]));
	}
	assert_string_equal(pcm_tp_strerror(5), "not an error code");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_messages_both_ways_arrive_byte_exact),
		cmocka_unit_test(test_open_rejects_bad_configurations),
		cmocka_unit_test(test_null_objects_are_einval),
		cmocka_unit_test(test_setup_errors),
		cmocka_unit_test(test_a_forged_dial_is_refused_with_ebadmsg),
		cmocka_unit_test(test_post_errors),
		cmocka_unit_test(test_close_aborts_local_work_and_resets_the_peer),
		cmocka_unit_test(test_posts_past_the_limit_are_eagain_and_lose_nothing),
		cmocka_unit_test(test_region_table_full_is_enospc),
		cmocka_unit_test(test_live_policy_swap_inline),
		cmocka_unit_test(test_live_policy_swap_with_engine_threads),
		cmocka_unit_test(test_engine_threads_wake_the_waiter),
		cmocka_unit_test(test_every_error_code_has_a_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
