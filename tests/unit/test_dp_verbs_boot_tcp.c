// SPDX-License-Identifier: MIT
/*
 * test_dp_verbs_boot_tcp.c - the TCP bootstrap (transport/datapath/boot_tcp.c)
 * that the verbs datapath's endpoints exchange their connection blobs
 * through: a dial answered or refused, nothing listening, deadlines, and
 * what an untrusted peer may send (bad headers, oversized lengths, a
 * truncated frame, a flood of connections, a dialer that leaves). Runs on
 * the host: loopback TCP only, no RDMA device.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "datapath.h"

#define WAIT_MS 5000

static const struct xp_boot_ops *O = &xp_boot_tcp_ops;

static struct xp_boot *boot_new(void)
{
	struct pcm_diag diag;
	struct xp_boot *b = NULL;

	assert_int_equal(O->create(&b, &diag), 0);
	return b;
}

/* A listener on 127.0.0.1, any free port; its "host:port" goes to @addr. */
static struct xp_boot *listener_new(char *addr, size_t n)
{
	struct xp_boot *b = boot_new();
	struct pcm_diag diag;

	assert_int_equal(O->listen(b, "127.0.0.1:0", &diag), 0);
	assert_true(xp_boot_tcp_port(b) > 0);
	snprintf(addr, n, "127.0.0.1:%d", xp_boot_tcp_port(b));
	return b;
}

/* Poll @a (and @b, if any) until @a has an event or WAIT_MS pass. */
static int poll_until(struct xp_boot *a, struct xp_boot *b, struct xp_boot_event *ev, int max)
{
	for (int waited = 0; waited < WAIT_MS; waited += 10) {
		struct pollfd pfd[2] = { { .fd = O->fd(a), .events = POLLIN },
					 { .fd = b ? O->fd(b) : -1, .events = POLLIN } };
		int n;

		if (b)
			assert_int_equal(O->poll(b, ev, 0), 0);
		n = O->poll(a, ev, max);
		if (n)
			return n;
		poll(pfd, 2, 10);
	}
	return 0;
}

/* A raw TCP socket connected to @port on 127.0.0.1. */
static int raw_connect(int port)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	return fd;
}

/* A raw listening socket on 127.0.0.1 (never accepted unless the test does). */
static int raw_listen(int *port)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	assert_int_equal(listen(fd, 8), 0);
	getsockname(fd, (struct sockaddr *)&in, &len);
	*port = ntohs(in.sin_port);
	return fd;
}

static void header(uint8_t *h, uint32_t magic, uint8_t version, uint8_t type, uint32_t status,
		   uint32_t len)
{
	uint32_t be[4] = { htonl(magic), 0, htonl(status), htonl(len) };

	memcpy(h, be, 16);
	h[4] = version;
	h[5] = type;
}

static void test_a_dial_is_answered_with_the_listeners_message(void **state)
{
	struct xp_boot_event ev[4];
	struct pcm_diag diag;
	char addr[64];
	struct xp_boot *l = listener_new(addr, sizeof(addr));
	struct xp_boot *d = boot_new();
	static uint8_t big[XP_BOOT_MSG_MAX];

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 13 + 5);
	assert_int_equal(O->dial(d, addr, big, sizeof(big), 42, &diag), 0);
	assert_int_equal(poll_until(l, d, ev, 4), 1);
	assert_int_equal(ev[0].kind, XP_BOOT_EV_INCOMING);
	assert_int_equal(ev[0].len, sizeof(big));
	assert_memory_equal(ev[0].msg, big, sizeof(big));
	assert_non_null(strstr(ev[0].from, "127.0.0.1:"));
	assert_int_equal(O->answer(l, ev[0].req, 0, "blob!", 5), 0);
	assert_int_equal(O->answer(l, ev[0].req, 0, "blob!", 5), -ENOENT);

	assert_int_equal(poll_until(d, l, ev, 4), 1);
	assert_int_equal(ev[0].kind, XP_BOOT_EV_ANSWERED);
	assert_int_equal(ev[0].status, 0);
	assert_int_equal(ev[0].token, 42);
	assert_int_equal(ev[0].len, 5);
	assert_memory_equal(ev[0].msg, "blob!", 5);
	assert_string_equal(ev[0].from, addr);

	/* an empty message both ways */
	assert_int_equal(O->dial(d, addr, NULL, 0, 43, &diag), 0);
	assert_int_equal(poll_until(l, d, ev, 4), 1);
	assert_int_equal(ev[0].len, 0);
	assert_int_equal(O->answer(l, ev[0].req, 0, NULL, 0), 0);
	assert_int_equal(poll_until(d, l, ev, 4), 1);
	assert_int_equal(ev[0].status, 0);
	assert_int_equal(ev[0].len, 0);
	O->destroy(d);
	O->destroy(l);
}

static void test_a_refusal_reaches_the_dialer_with_its_errno(void **state)
{
	struct xp_boot_event ev[4];
	struct pcm_diag diag;
	char addr[64];
	struct xp_boot *l = listener_new(addr, sizeof(addr));
	struct xp_boot *d = boot_new();

	assert_int_equal(O->dial(d, addr, "x", 1, 1, &diag), 0);
	assert_int_equal(poll_until(l, d, ev, 4), 1);
	assert_int_equal(O->answer(l, ev[0].req, 1, NULL, 0), -EINVAL); /* not a -errno */
	assert_int_equal(O->answer(l, ev[0].req, -ENOSPC, "ignored", 7), 0);
	assert_int_equal(poll_until(d, l, ev, 4), 1);
	assert_int_equal(ev[0].status, -ENOSPC);
	assert_int_equal(ev[0].len, 0);
	assert_null(ev[0].msg);
	O->destroy(d);
	O->destroy(l);
}

static void test_nothing_listening_is_refused(void **state)
{
	struct xp_boot_event ev[4];
	struct pcm_diag diag;
	int port, fd = raw_listen(&port);
	struct xp_boot *d = boot_new();
	char addr[64];

	close(fd); /* a port nothing listens on any more */
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	assert_int_equal(O->dial(d, addr, "x", 1, 9, &diag), 0);
	assert_int_equal(poll_until(d, NULL, ev, 4), 1);
	assert_int_equal(ev[0].kind, XP_BOOT_EV_ANSWERED);
	assert_int_equal(ev[0].status, -ECONNREFUSED);
	assert_int_equal(ev[0].token, 9);
	assert_string_equal(ev[0].from, addr);
	O->destroy(d);
}

static void test_a_peer_that_never_answers_times_out(void **state)
{
	struct xp_boot_event ev[4];
	struct pcm_diag diag;
	int port, fd = raw_listen(&port); /* the kernel accepts; nobody answers */
	struct xp_boot *d = boot_new();
	struct timespec t0, t1;
	char addr[64];

	assert_int_equal(xp_boot_tcp_set_timeout(d, 0), -EINVAL);
	assert_int_equal(xp_boot_tcp_set_timeout(d, 200 * 1000 * 1000), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(O->dial(d, addr, "hello", 5, 3, &diag), 0);
	assert_int_equal(poll_until(d, NULL, ev, 4), 1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(ev[0].status, -ETIMEDOUT);
	assert_int_equal(ev[0].token, 3);
	/* the timer fd woke the poll loop: not before the deadline */
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 >= 190);
	close(fd);
	O->destroy(d);
}

/* Send @bytes to the listener raw; the listener must report nothing and count a bad frame. */
static void expect_refused_request(struct xp_boot *l, int port, const uint8_t *bytes, size_t n,
				   uint64_t bad_before)
{
	struct xp_boot_event ev[4];
	uint64_t bad, busy;
	uint8_t c;
	int fd = raw_connect(port);

	assert_int_equal(send(fd, bytes, n, 0), (ssize_t)n);
	for (int waited = 0; waited < WAIT_MS; waited += 5) { /* not a fixed 1 s: a loaded machine */
		assert_int_equal(O->poll(l, ev, 4), 0);
		xp_boot_tcp_counters(l, &bad, &busy);
		if (bad > bad_before)
			break;
		usleep(5000);
	}
	assert_int_equal(bad, bad_before + 1);
	/* and the listener closed the connection */
	assert_int_equal(recv(fd, &c, 1, 0), 0);
	close(fd);
}

static void test_bad_request_headers_are_dropped_and_counted(void **state)
{
	char addr[64];
	struct xp_boot *l = listener_new(addr, sizeof(addr));
	int port = xp_boot_tcp_port(l);
	uint8_t h[16];
	uint64_t bad = 0;

	header(h, 0x70636d63, 1, 1, 0, 0); /* magic */
	expect_refused_request(l, port, h, 16, bad++);
	header(h, 0x70636d62, 2, 1, 0, 0); /* version */
	expect_refused_request(l, port, h, 16, bad++);
	header(h, 0x70636d62, 1, 2, 0, 0); /* an answer sent as a request */
	expect_refused_request(l, port, h, 16, bad++);
	header(h, 0x70636d62, 1, 1, 5, 0); /* a status in a request */
	expect_refused_request(l, port, h, 16, bad++);
	header(h, 0x70636d62, 1, 1, 0, XP_BOOT_MSG_MAX + 1); /* too long */
	expect_refused_request(l, port, h, 16, bad++);
	header(h, 0x70636d62, 1, 1, 0, 0xffffffffu); /* absurdly long: never allocated */
	expect_refused_request(l, port, h, 16, bad++);
	header(h, 0x70636d62, 1, 1, 0, 0);
	h[6] = 1; /* reserved */
	expect_refused_request(l, port, h, 16, bad++);
	O->destroy(l);
}

static void test_a_truncated_request_is_dropped_and_the_listener_goes_on(void **state)
{
	struct xp_boot_event ev[4];
	struct pcm_diag diag;
	char addr[64];
	struct xp_boot *l = listener_new(addr, sizeof(addr));
	struct xp_boot *d = boot_new();
	uint8_t h[16 + 3];
	int fd = raw_connect(xp_boot_tcp_port(l));

	header(h, 0x70636d62, 1, 1, 0, 100);
	memcpy(h + 16, "abc", 3);
	assert_int_equal(send(fd, h, sizeof(h), 0), (ssize_t)sizeof(h));
	close(fd); /* 97 bytes short */
	for (int i = 0; i < 20; i++) {
		assert_int_equal(O->poll(l, ev, 4), 0);
		usleep(2000);
	}
	/* a good dial still works */
	assert_int_equal(O->dial(d, addr, "ok", 2, 5, &diag), 0);
	assert_int_equal(poll_until(l, d, ev, 4), 1);
	assert_int_equal(ev[0].len, 2);
	assert_int_equal(O->answer(l, ev[0].req, 0, "ok", 2), 0);
	assert_int_equal(poll_until(d, l, ev, 4), 1);
	assert_int_equal(ev[0].status, 0);
	O->destroy(d);
	O->destroy(l);
}

/* A fake listener answers the dial with @answer; the dialer must report @want. */
static void expect_dial_status(const uint8_t *answer, size_t n, int want)
{
	struct xp_boot_event ev[4];
	struct pcm_diag diag;
	int port, lfd = raw_listen(&port), cfd;
	struct xp_boot *d = boot_new();
	uint8_t req[64];
	char addr[64];

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	assert_int_equal(O->dial(d, addr, "q", 1, 77, &diag), 0);
	assert_int_equal(O->poll(d, ev, 4), 0);
	cfd = accept(lfd, NULL, NULL);
	assert_true(cfd >= 0);
	/* let the dialer send its request */
	for (int i = 0; i < 100 && recv(cfd, req, sizeof(req), MSG_DONTWAIT) <= 0; i++) {
		assert_int_equal(O->poll(d, ev, 4), 0);
		usleep(2000);
	}
	if (n)
		assert_int_equal(send(cfd, answer, n, 0), (ssize_t)n);
	close(cfd);
	assert_int_equal(poll_until(d, NULL, ev, 4), 1);
	assert_int_equal(ev[0].token, 77);
	assert_int_equal(ev[0].status, want);
	close(lfd);
	O->destroy(d);
}

static void test_a_bad_answer_is_a_protocol_error_for_the_dialer(void **state)
{
	uint8_t h[16 + 4];

	header(h, 0x70636d62, 1, 1, 0, 0); /* a request, not an answer */
	expect_dial_status(h, 16, -EPROTO);
	header(h, 0x70636d62, 1, 2, 4096, 0); /* status out of range */
	expect_dial_status(h, 16, -EPROTO);
	header(h, 0x70636d62, 1, 2, ENOSPC, 4); /* a refusal with a message */
	memcpy(h + 16, "abcd", 4);
	expect_dial_status(h, 20, -EPROTO);
	header(h, 0x70636d62, 1, 2, 0, 10); /* cut short */
	expect_dial_status(h, 20, -ECONNRESET);
	expect_dial_status(NULL, 0, -ECONNRESET); /* closed without a word */
	header(h, 0x70636d62, 1, 2, EACCES, 0); /* a well-formed refusal */
	expect_dial_status(h, 16, -EACCES);
}

static void test_a_flood_of_connections_is_refused_beyond_the_pending_limit(void **state)
{
	struct xp_boot_event ev[4];
	struct pcm_diag diag;
	char addr[64];
	struct xp_boot *l = listener_new(addr, sizeof(addr));
	struct xp_boot *d = boot_new();
	int fds[80];
	uint64_t bad, busy = 0;

	assert_int_equal(xp_boot_tcp_set_timeout(l, 300 * 1000 * 1000), 0);
	for (int i = 0; i < 80; i++) {
		fds[i] = raw_connect(xp_boot_tcp_port(l));
		assert_int_equal(O->poll(l, ev, 4), 0); /* accepts, so the backlog never fills */
	}
	for (int waited = 0; waited < WAIT_MS && busy < 16; waited += 2) { /* not a fixed 200 ms */
		assert_int_equal(O->poll(l, ev, 4), 0);
		xp_boot_tcp_counters(l, &bad, &busy);
		usleep(2000);
	}
	assert_int_equal(busy, 16); /* 64 pending, the rest closed at accept */
	/* the stalled ones expire; then a real dial gets through */
	usleep(400 * 1000);
	assert_int_equal(O->poll(l, ev, 4), 0);
	assert_int_equal(O->dial(d, addr, "late", 4, 1, &diag), 0);
	assert_int_equal(poll_until(l, d, ev, 4), 1);
	assert_int_equal(ev[0].kind, XP_BOOT_EV_INCOMING);
	assert_int_equal(O->answer(l, ev[0].req, 0, NULL, 0), 0);
	assert_int_equal(poll_until(d, l, ev, 4), 1);
	assert_int_equal(ev[0].status, 0);
	for (int i = 0; i < 80; i++)
		close(fds[i]);
	O->destroy(d);
	O->destroy(l);
}

static void test_a_dialer_that_leaves_makes_the_answer_fail(void **state)
{
	struct xp_boot_event ev[4];
	struct pcm_diag diag;
	char addr[64];
	struct xp_boot *l = listener_new(addr, sizeof(addr));
	struct xp_boot *d = boot_new();
	uint64_t req;

	assert_int_equal(O->dial(d, addr, "bye", 3, 1, &diag), 0);
	assert_int_equal(poll_until(l, d, ev, 4), 1);
	req = ev[0].req;
	O->destroy(d);
	for (int i = 0; i < 50; i++) {
		assert_int_equal(O->poll(l, ev, 4), 0);
		usleep(2000);
	}
	assert_int_equal(O->answer(l, req, 0, "late", 4), -ENOENT);
	O->destroy(l);
}

static void test_bad_addresses_are_refused_with_a_reason(void **state)
{
	struct xp_boot *b = boot_new();
	struct pcm_diag diag;
	static const char *const bad[] = { "", "nohost", "1.2.3.4:", "1.2.3.4:x", "1.2.3.4:65536",
					   "1.2.3.4:-1", "[::1:80", "::1:80" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		diag.msg[0] = '\0';
		assert_int_equal(O->dial(b, bad[i], "x", 1, 0, &diag), -EINVAL);
		assert_non_null(strstr(diag.msg, "host:port"));
	}
	assert_int_equal(O->dial(b, "127.0.0.1:0", "x", 1, 0, &diag), -EINVAL);
	assert_int_equal(O->dial(b, "127.0.0.1:1", "x", XP_BOOT_MSG_MAX + 1, 0, &diag), -EINVAL);
	assert_int_equal(xp_boot_tcp_port(b), -ENOTCONN);
	assert_int_equal(O->listen(b, "127.0.0.1:0", &diag), 0);
	assert_int_equal(O->listen(b, "127.0.0.1:0", &diag), -EALREADY);
	O->destroy(b);
	/* the TCP-only calls refuse another bootstrap */
	assert_int_equal(xp_boot_registry_ops.create(&b, &diag), 0);
	assert_int_equal(xp_boot_tcp_set_timeout(b, 1), -EINVAL);
	assert_int_equal(xp_boot_tcp_port(b), -EINVAL);
	xp_boot_registry_ops.destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_dial_is_answered_with_the_listeners_message),
		cmocka_unit_test(test_a_refusal_reaches_the_dialer_with_its_errno),
		cmocka_unit_test(test_nothing_listening_is_refused),
		cmocka_unit_test(test_a_peer_that_never_answers_times_out),
		cmocka_unit_test(test_bad_request_headers_are_dropped_and_counted),
		cmocka_unit_test(test_a_truncated_request_is_dropped_and_the_listener_goes_on),
		cmocka_unit_test(test_a_bad_answer_is_a_protocol_error_for_the_dialer),
		cmocka_unit_test(test_a_flood_of_connections_is_refused_beyond_the_pending_limit),
		cmocka_unit_test(test_a_dialer_that_leaves_makes_the_answer_fail),
		cmocka_unit_test(test_bad_addresses_are_refused_with_a_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
