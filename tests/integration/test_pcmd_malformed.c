// SPDX-License-Identifier: MIT
/*
 * test_pcmd_malformed.c - what a client can send pcmd that is wrong, and that
 * pcmd answers each with an error naming the problem and keeps serving:
 * malformed control messages (framing, version, sizes, fields, order, file
 * descriptors, rights, seeded random garbage), and malformed descriptors and
 * ring indices written straight into the shared region by a raw client that
 * bypasses libpcmtransport's own checks. Also: the region is sealed, a client
 * can address only its own data area, and pcmd ignores a scribbled header.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include "pcmd_region.h"
#include "tp_util.h"

static struct pcmd_proc pcmd;
static uint32_t seq = 10;

/* Nobody is an admin here, so admin requests are refused even for root. */
static const char yaml[] = "log_level: debug\n"
			   "socket:\n"
			   "  path: \"@DIR@/pcmd.sock\"\n"
			   "  group: \"\"\n"
			   "  admin_uids: []\n"
			   "limits:\n"
			   "  memory_per_client_bytes: 4MiB\n"
			   "  max_message_bytes: 1MiB\n";

static int start(void **state)
{
	return harness_start(&pcmd, yaml, 0, NULL) == 0 ? 0 : -1;
}

static int stop(void **state)
{
	return harness_finish(&pcmd);
}

/* Send @msg, expect a reply with @status whose text contains @text (if not NULL). */
static void expect(int fd, const void *msg, size_t len, int status, const char *text)
{
	uint8_t rep[PCMD_MSG_MAX_BYTES];
	ssize_t n = harness_raw_rpc(fd, msg, len, rep, sizeof(rep));
	const struct pcmd_reply_error *e = (const void *)rep;

	assert_true(n >= (ssize_t)sizeof(struct pcmd_reply_status));
	if (e->st.status != status)
		fail_msg("expected status %d, got %d (%s)", status, e->st.status,
			 e->st.status < 0 ? e->text : "");
	if (text) {
		assert_int_equal(n, sizeof(*e));
		if (!strstr(e->text, text))
			fail_msg("error text '%s' lacks '%s'", e->text, text);
	}
}

static void hdr(void *m, uint16_t type, size_t len)
{
	harness_hdr(m, type, len, ++seq);
}

/* The daemon still serves: two fresh endpoints move a message. */
static void assert_still_serving(void)
{
	struct pcm_tp_endpoint *a, *b;
	struct pcm_tp_conn *ca, *cb;
	char addr[32];

	snprintf(addr, sizeof(addr), "alive-%u", ++seq);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &a), 0);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &b), 0);
	assert_int_equal(tp_pair(a, b, addr, NULL, &ca, &cb), 0);
	assert_int_equal(tp_exchange(a, ca, b, cb, 100, seq), 0);
	pcm_tp_endpoint_close(a);
	pcm_tp_endpoint_close(b);
}

static void test_malformed_framing_gets_errors(void **state)
{
	int fd = harness_raw_connect(&pcmd);
	uint8_t big[2000];
	struct pcmd_req_hello h = {.version_min = PCMD_PROTO_VERSION,
				   .version_max = PCMD_PROTO_VERSION,
				   .role = PCMD_ROLE_APP};
	struct pcmd_req_empty e;

	assert_true(fd >= 0);
	expect(fd, "abc", 3, -EBADMSG, "shorter than the 16-byte header");
	hdr(&e, PCMD_MSG_STATUS, sizeof(e));
	e.hdr.magic = 0x12345678;
	expect(fd, &e, sizeof(e), -EPROTO, "not a pcmd message");
	hdr(&e, PCMD_MSG_STATUS, sizeof(e));
	e.hdr.len = 99;
	expect(fd, &e, sizeof(e), -EBADMSG, "the header says 99 bytes");
	hdr(&e, 99, sizeof(e));
	expect(fd, &e, sizeof(e), -EBADMSG, "unknown message type 99");
	hdr(&e, PCMD_MSG_STATUS | PCMD_MSG_REPLY, sizeof(e));
	expect(fd, &e, sizeof(e), -EBADMSG, "unknown message type");
	memset(big, 0, sizeof(big));
	hdr(big, PCMD_MSG_STATUS, sizeof(big));
	expect(fd, big, sizeof(big), -EMSGSIZE, "longer than any request");
	hdr(&e, PCMD_MSG_STATUS, sizeof(e));
	expect(fd, &e, sizeof(e), -EPROTO, "send HELLO first");
	hdr(&h, PCMD_MSG_HELLO, sizeof(h) - 4);
	expect(fd, &h, sizeof(h) - 4, -EBADMSG, "HELLO is");
	hdr(&h, PCMD_MSG_HELLO, sizeof(h));
	h.role = 7;
	expect(fd, &h, sizeof(h), -EINVAL, "role 7");
	h.role = PCMD_ROLE_APP;
	memset(h.name, 'x', sizeof(h.name));
	hdr(&h, PCMD_MSG_HELLO, sizeof(h));
	expect(fd, &h, sizeof(h), -EINVAL, "name is not NUL-terminated");
	memset(h.name, 0, sizeof(h.name));
	h.version_min = 3;
	h.version_max = 2;
	hdr(&h, PCMD_MSG_HELLO, sizeof(h));
	expect(fd, &h, sizeof(h), -EINVAL, "version_min 3 is above version_max 2");
	h.version_min = h.version_max = PCMD_PROTO_VERSION;
	hdr(&h, PCMD_MSG_HELLO, sizeof(h));
	expect(fd, &h, sizeof(h), 0, NULL);
	hdr(&h, PCMD_MSG_HELLO, sizeof(h));
	expect(fd, &h, sizeof(h), -EPROTO, "HELLO was already sent");
	close(fd);
	assert_still_serving();
}

static void test_other_protocol_version_gets_clear_error(void **state)
{
	const uint16_t versions[] = {PCMD_PROTO_VERSION + 1, PCMD_PROTO_VERSION - 1};
	struct pcmd_req_hello h = {.role = PCMD_ROLE_APP};
	uint8_t rep[256];
	char want[64];
	int fd;

	/* A newer client's HELLO, and an older one's (1: before the flows' engine figures). */
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		fd = harness_raw_connect(&pcmd);
		h.version_min = h.version_max = versions[i];
		hdr(&h, PCMD_MSG_HELLO, sizeof(h));
		h.hdr.version = versions[i];
		snprintf(want, sizeof(want), "protocol version %u", versions[i]);
		expect(fd, &h, sizeof(h), -EPROTONOSUPPORT, want);
		/* pcmd hangs up on it. */
		assert_int_equal(harness_raw_rpc(fd, NULL, 0, rep, sizeof(rep)), 0);
		close(fd);
	}
	/* A client of this version that offers only newer versions in HELLO. */
	fd = harness_raw_connect(&pcmd);
	h.hdr.version = PCMD_PROTO_VERSION;
	h.version_min = PCMD_PROTO_VERSION + 1;
	h.version_max = PCMD_PROTO_VERSION + 4;
	hdr(&h, PCMD_MSG_HELLO, sizeof(h));
	snprintf(want, sizeof(want), "versions %u..%u", PCMD_PROTO_VERSION + 1,
		 PCMD_PROTO_VERSION + 4);
	expect(fd, &h, sizeof(h), -EPROTONOSUPPORT, want);
	close(fd);
	assert_still_serving();
}

static int app_client(void)
{
	int fd = harness_raw_connect(&pcmd);

	assert_true(fd >= 0);
	assert_int_equal(harness_raw_hello(fd, PCMD_ROLE_APP), 0);
	return fd;
}

static void test_malformed_fields_get_errors(void **state)
{
	struct pcmd_req_region rg = {0};
	struct pcmd_req_listen l = {0};
	struct pcmd_req_connect c = {0};
	struct pcmd_req_close cl = {0};
	struct pcmd_req_page pg = {0};
	struct pcmd_req_policy_load pl = {0};
	struct pcmd_req_policy_set ps = {0};
	int fd = app_client();

	hdr(&l, PCMD_MSG_LISTEN, sizeof(l));
	snprintf(l.addr, sizeof(l.addr), "early");
	expect(fd, &l, sizeof(l), -EPROTO, "needs a region");
	hdr(&rg, PCMD_MSG_REGION, sizeof(rg));
	expect(fd, &rg, sizeof(rg), -EINVAL, "data_bytes 0 is outside");
	rg.data_bytes = 1ull << 40;
	hdr(&rg, PCMD_MSG_REGION, sizeof(rg));
	expect(fd, &rg, sizeof(rg), -EINVAL, "limits.memory_per_client_bytes");
	rg.data_bytes = 1u << 20;
	rg.sq_entries = 3;
	hdr(&rg, PCMD_MSG_REGION, sizeof(rg));
	expect(fd, &rg, sizeof(rg), -EINVAL, "power of two");
	rg.sq_entries = 64;
	rg.cq_entries = 32;
	hdr(&rg, PCMD_MSG_REGION, sizeof(rg));
	expect(fd, &rg, sizeof(rg), -EINVAL, "cq >= sq");
	rg.cq_entries = 64;
	memset(rg.host, 'h', sizeof(rg.host));
	hdr(&rg, PCMD_MSG_REGION, sizeof(rg));
	expect(fd, &rg, sizeof(rg), -EINVAL, "host is not NUL-terminated");
	memset(rg.host, 0, sizeof(rg.host));
	hdr(&rg, PCMD_MSG_REGION, sizeof(rg));
	expect(fd, &rg, sizeof(rg), 0, NULL);
	hdr(&rg, PCMD_MSG_REGION, sizeof(rg));
	expect(fd, &rg, sizeof(rg), -EEXIST, "already has its region");
	memset(l.addr, 'a', sizeof(l.addr));
	hdr(&l, PCMD_MSG_LISTEN, sizeof(l));
	expect(fd, &l, sizeof(l), -EINVAL, "addr is not NUL-terminated");
	memset(l.addr, 0, sizeof(l.addr));
	hdr(&l, PCMD_MSG_LISTEN, sizeof(l));
	expect(fd, &l, sizeof(l), -EINVAL, "addr is empty");
	snprintf(c.addr, sizeof(c.addr), "nowhere");
	c.opts.mode = 9;
	hdr(&c, PCMD_MSG_CONNECT, sizeof(c));
	expect(fd, &c, sizeof(c), -EINVAL, "opts.mode 9");
	c.opts.mode = PCMD_SHELL_DEFAULT;
	c.opts.paths = 65;
	hdr(&c, PCMD_MSG_CONNECT, sizeof(c));
	expect(fd, &c, sizeof(c), -EINVAL, "opts.paths 65");
	c.opts.paths = 0;
	snprintf(c.opts.policy, sizeof(c.opts.policy), "/tmp/evil.so");
	hdr(&c, PCMD_MSG_CONNECT, sizeof(c));
	expect(fd, &c, sizeof(c), -EPERM, "pcmctl policies load");
	snprintf(c.opts.policy, sizeof(c.opts.policy), "no_such_policy");
	hdr(&c, PCMD_MSG_CONNECT, sizeof(c));
	expect(fd, &c, sizeof(c), -ENOENT, "no policy named 'no_such_policy'");
	cl.conn_id = 0x12345;
	hdr(&cl, PCMD_MSG_CLOSE, sizeof(cl));
	expect(fd, &cl, sizeof(cl), -EBADF, "names no connection");
	cl.flags = 2;
	hdr(&cl, PCMD_MSG_CLOSE, sizeof(cl));
	expect(fd, &cl, sizeof(cl), -EINVAL, "only PCMD_CLOSE_ABORT");
	pg.max = 100000;
	hdr(&pg, PCMD_MSG_FLOWS, sizeof(pg));
	expect(fd, &pg, sizeof(pg), -EINVAL, "per page");
	snprintf(pl.path, sizeof(pl.path), "/tmp/x.so");
	hdr(&pl, PCMD_MSG_POLICY_LOAD, sizeof(pl));
	expect(fd, &pl, sizeof(pl), -EPERM, "is for admins");
	ps.target = 9;
	hdr(&ps, PCMD_MSG_POLICY_SET, sizeof(ps));
	expect(fd, &ps, sizeof(ps), -EPERM, "is for admins");
	close(fd);
	assert_still_serving();
}

static void test_descriptors_sent_to_pcmd_are_refused_and_closed(void **state)
{
	struct pcmd_req_empty e;
	union {
		struct cmsghdr a;
		uint8_t b[CMSG_SPACE(sizeof(int) * 2)];
	} ctl;
	struct iovec iov = {&e, sizeof(e)};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.b,
			   .msg_controllen = sizeof(ctl.b)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	uint8_t rep[PCMD_MSG_MAX_BYTES];
	int fd = app_client(), fds[2], left = -1;
	char passed[400];
	uint64_t deadline;

	/* A file of this test's own, so that pcmd's descriptors on it are counted alone: a total
	 * count moves while pcmd still reclaims the earlier tests' clients. */
	snprintf(passed, sizeof(passed), "%s/passed-descriptor", pcmd.dir);
	fds[0] = open(passed, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	fds[1] = open(passed, O_RDONLY | O_CLOEXEC);
	assert_true(fds[0] >= 0 && fds[1] >= 0);
	assert_int_equal(harness_fds_on(getpid(), passed), 2); /* the count sees them */
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	hdr(&e, PCMD_MSG_STATUS, sizeof(e));
	for (int i = 0; i < 50; i++)
		assert_int_equal(sendmsg(fd, &m, 0), (ssize_t)sizeof(e));
	for (int i = 0; i < 50; i++) {
		const struct pcmd_reply_error *r = (const void *)rep;

		assert_true(harness_raw_rpc(fd, NULL, 0, rep, sizeof(rep)) > 0);
		assert_int_equal(r->st.status, -EINVAL);
		assert_non_null(strstr(r->text, "pcmd takes none"));
	}
	/* 100 descriptors arrived and none stayed open in pcmd (while this client is connected:
	 * not closed only at its reclaim). */
	deadline = harness_now_ms() + 10000;
	while ((left = harness_fds_on(pcmd.pid, passed)) != 0 && harness_now_ms() < deadline)
		usleep(5000);
	assert_int_equal(left, 0);
	close(fds[0]);
	close(fds[1]);
	unlink(passed);
	close(fd);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_random_control_garbage_gets_replies_and_daemon_survives(void **state)
{
	uint64_t seed = 0x5eed0001, s = seed;
	uint8_t msg[600], rep[PCMD_MSG_MAX_BYTES];
	int fd = app_client();
	uint32_t errors = 0;

	printf("seed %#llx\n", (unsigned long long)seed);
	for (int i = 0; i < 3000; i++) {
		size_t len = rnd(&s) % sizeof(msg);
		ssize_t n;

		for (size_t j = 0; j < len; j++)
			msg[j] = (uint8_t)rnd(&s);
		/* Most with a valid frame, so the handlers' own checks are reached. */
		if (len >= sizeof(struct pcmd_msg_hdr) && rnd(&s) % 4) {
			hdr(msg, (uint16_t)(1 + rnd(&s) % (PCMD_MSG_TYPE_END - 1)), len);
			if (rnd(&s) % 2 && ((struct pcmd_msg_hdr *)msg)->type == PCMD_MSG_HELLO)
				((struct pcmd_msg_hdr *)msg)->len = (uint32_t)len;
		}
		if (len == 0)
			continue;
		n = harness_raw_rpc(fd, msg, len, rep, sizeof(rep));
		if (n == 0) {
			/* A garbled version: pcmd hung up, as it should before HELLO. */
			close(fd);
			fd = app_client();
			continue;
		}
		assert_true(n >= (ssize_t)sizeof(struct pcmd_reply_status));
		errors += ((struct pcmd_reply_status *)rep)->status < 0;
	}
	printf("3000 random messages: %u refused\n", errors);
	assert_true(errors > 2500);
	close(fd);
	assert_still_serving();
}

/* ---- raw rings -------------------------------------------------------------------------- */

struct raw {
	int fd;
	int memfd, sq_efd, cq_efd;
	uint8_t *base;
	struct pcmd_rep_region rep;
	struct pcmd_region_layout lay;
	struct pcmd_ring sq, cq;
	uint32_t conn;
};

static void raw_region(struct raw *r, uint64_t bytes)
{
	struct pcmd_req_region q = {.data_bytes = bytes, .sq_entries = 64, .cq_entries = 64};
	union {
		struct cmsghdr a;
		uint8_t b[CMSG_SPACE(sizeof(int) * 3)];
	} ctl;
	struct iovec iov = {&r->rep, sizeof(r->rep)};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.b,
			   .msg_controllen = sizeof(ctl.b)};
	struct pcmd_region_hdr *h;
	int fds[3];

	r->fd = app_client();
	hdr(&q, PCMD_MSG_REGION, sizeof(q));
	assert_int_equal(send(r->fd, &q, sizeof(q), 0), (ssize_t)sizeof(q));
	assert_int_equal(recvmsg(r->fd, &m, 0), (ssize_t)sizeof(r->rep));
	assert_int_equal(r->rep.st.status, 0);
	r->lay = r->rep.lay;
	memcpy(fds, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(fds));
	r->memfd = fds[0];
	r->sq_efd = fds[1];
	r->cq_efd = fds[2];
	r->base = mmap(NULL, r->lay.region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->memfd, 0);
	assert_true(r->base != MAP_FAILED);
	h = (struct pcmd_region_hdr *)r->base;
	pcmd_ring_init(&r->sq, &h->sq, r->base + r->lay.sq_off, r->lay.sq_entries,
		       sizeof(struct pcmd_sqe));
	pcmd_ring_init(&r->cq, &h->cq, r->base + r->lay.cq_off, r->lay.cq_entries,
		       sizeof(struct pcmd_cqe));
}

static void raw_put(struct raw *r, uint8_t op, uint32_t conn, uint64_t off, uint64_t len,
		    uint64_t cookie)
{
	struct pcmd_sqe e = {
	    .op = op, .conn_id = conn, .offset = off, .len = len, .cookie = cookie};
	uint64_t one = 1;

	pcmd_ring_put(&r->sq, &e);
	pcmd_ring_publish(&r->sq);
	assert_int_equal(write(r->sq_efd, &one, sizeof(one)), 8);
}

static struct pcmd_cqe raw_next(struct raw *r)
{
	uint64_t deadline = harness_now_ms() + 5000;
	struct pcmd_cqe e;

	while (pcmd_ring_avail(&r->cq) == 0 && harness_now_ms() < deadline)
		usleep(1000);
	assert_true(pcmd_ring_avail(&r->cq) > 0);
	pcmd_ring_get(&r->cq, &e);
	pcmd_ring_release(&r->cq);
	return e;
}

static void raw_pair(struct raw *a, struct raw *b, const char *addr)
{
	struct pcmd_req_listen l = {0};
	struct pcmd_req_accept ac = {.cookie = 1};
	struct pcmd_req_connect c = {.cookie = 2};
	struct pcmd_rep_conn rc;
	struct pcmd_cqe e;

	raw_region(a, 1u << 20);
	raw_region(b, 1u << 20);
	snprintf(l.addr, sizeof(l.addr), "%s", addr);
	hdr(&l, PCMD_MSG_LISTEN, sizeof(l));
	expect(b->fd, &l, sizeof(l), 0, NULL);
	hdr(&ac, PCMD_MSG_ACCEPT, sizeof(ac));
	expect(b->fd, &ac, sizeof(ac), 0, NULL);
	snprintf(c.addr, sizeof(c.addr), "%s", addr);
	c.opts.mode = PCMD_SHELL_DEFAULT;
	hdr(&c, PCMD_MSG_CONNECT, sizeof(c));
	assert_int_equal(harness_raw_rpc(a->fd, &c, sizeof(c), &rc, sizeof(rc)),
			 (ssize_t)sizeof(rc));
	assert_int_equal(rc.st.status, 0);
	e = raw_next(a);
	assert_int_equal(e.op, PCMD_OP_CONNECT);
	assert_int_equal(e.status, 0);
	a->conn = e.conn_id;
	e = raw_next(b);
	assert_int_equal(e.op, PCMD_OP_ACCEPT);
	assert_int_equal(e.status, 0);
	b->conn = e.conn_id;
}

static void raw_close(struct raw *r)
{
	munmap(r->base, r->lay.region_bytes);
	close(r->memfd);
	close(r->sq_efd);
	close(r->cq_efd);
	close(r->fd);
}

static void expect_cqe(struct raw *r, uint64_t cookie, int status)
{
	struct pcmd_cqe e = raw_next(r);

	if (e.cookie != cookie || e.status != status)
		fail_msg("completion cookie %llu status %d, expected cookie %llu status %d",
			 (unsigned long long)e.cookie, e.status, (unsigned long long)cookie,
			 status);
}

static void test_malformed_descriptors_complete_with_errors(void **state)
{
	struct raw a, b;
	uint64_t data = 1u << 20;
	uint8_t *bdata;
	uint32_t sum_before = 0, sum_after = 0;

	raw_pair(&a, &b, "raw-pair");
	bdata = b.base + b.lay.data_off;
	memset(bdata, 0xbb, data);
	for (size_t i = 0; i < data; i++)
		sum_before += bdata[i];
	raw_put(&a, PCMD_OP_SEND, a.conn, data, 1, 1); /* one byte past the end */
	expect_cqe(&a, 1, -EFAULT);
	raw_put(&a, PCMD_OP_SEND, a.conn, UINT64_MAX - 10, 100, 2); /* wraps */
	expect_cqe(&a, 2, -EFAULT);
	raw_put(&a, PCMD_OP_SEND, a.conn, 0, 2u << 20, 3); /* above max_message_bytes */
	expect_cqe(&a, 3, -EMSGSIZE);
	raw_put(&a, PCMD_OP_SEND, 0x7777, 0, 10, 4); /* no such conn */
	expect_cqe(&a, 4, -EBADF);
	raw_put(&a, PCMD_OP_SEND, a.conn + (1u << 16), 0, 10, 5); /* stale generation */
	expect_cqe(&a, 5, -EBADF);
	raw_put(&a, 9, a.conn, 0, 10, 6); /* no such op */
	expect_cqe(&a, 6, -EINVAL);
	{
		struct pcmd_sqe e = {
		    .op = PCMD_OP_SEND, .flags = 1, .conn_id = a.conn, .len = 1, .cookie = 7};
		uint64_t one = 1;

		pcmd_ring_put(&a.sq, &e);
		pcmd_ring_publish(&a.sq);
		assert_int_equal(write(a.sq_efd, &one, 8), 8);
		expect_cqe(&a, 7, -EINVAL);
	}
	/* A valid one between them still works: receive into b, send from a. */
	memset(a.base + a.lay.data_off, 0x5a, 4096);
	raw_put(&b, PCMD_OP_RECV, b.conn, 4096, 4096, 8);
	raw_put(&a, PCMD_OP_SEND, a.conn, 0, 4096, 9);
	expect_cqe(&a, 9, 0);
	expect_cqe(&b, 8, 0);
	for (size_t i = 0; i < 4096; i++)
		assert_int_equal(bdata[4096 + i], 0x5a);
	/* Scribbling over the shared header changes nothing pcmd does. */
	((struct pcmd_region_hdr *)a.base)->lay.data_bytes = UINT64_MAX;
	((struct pcmd_region_hdr *)a.base)->lay.sq_off = 12345;
	raw_put(&a, PCMD_OP_SEND, a.conn, data, 1, 10);
	expect_cqe(&a, 10, -EFAULT);
	/* b's memory outside the one receive was never written. */
	for (size_t i = 0; i < data; i++)
		sum_after += i >= 4096 && i < 8192 ? 0xbb : bdata[i];
	assert_int_equal(sum_after, sum_before);
	raw_close(&a);
	raw_close(&b);
	assert_still_serving();
}

static void test_corrupt_ring_indices_disconnect_only_that_client(void **state)
{
	struct raw a, b;
	struct pcmd_notice n;
	uint64_t one = 1;
	ssize_t len;

	raw_pair(&a, &b, "raw-corrupt");
	/* a claims 5000 submissions in a 64-entry ring. */
	atomic_store(&a.sq.ctl->tail.v, a.sq.local + 5000);
	assert_int_equal(write(a.sq_efd, &one, 8), 8);
	len = recv(a.fd, &n, sizeof(n), 0);
	assert_int_equal(len, sizeof(n));
	assert_int_equal(n.hdr.type, PCMD_MSG_NOTICE);
	assert_int_equal(n.kind, PCMD_NOTICE_ERROR);
	assert_non_null(strstr(n.text, "ring indices are corrupt"));
	assert_int_equal(recv(a.fd, &n, sizeof(n), 0), 0); /* then hung up */
	/* b lost its peer, nothing else: its receive is reset. */
	raw_put(&b, PCMD_OP_RECV, b.conn, 0, 64, 1);
	expect_cqe(&b, 1, -ECONNRESET);
	raw_close(&a);
	raw_close(&b);
	assert_still_serving();
}

/*
 * Conn ids are indexes into the poster's own table: the ids of other
 * clients' connections name nothing of a client that has none (-EBADF), and
 * a client's closed connection takes nothing more (its engine connection may
 * be another client's later). The other clients' receives see only their own
 * peers' bytes. On the null datapath two engines serve three regions, so two
 * of these clients' descriptor paths share one engine thread.
 */
static void test_a_client_cannot_reach_another_clients_connections(void **state)
{
	struct raw a, b, e;
	uint8_t *bdata;
	uint64_t cookie = 100;

	raw_pair(&a, &b, "raw-isolation");
	raw_region(&e, 1u << 20);
	bdata = b.base + b.lay.data_off;
	memset(bdata, 0xbb, 8192);
	memset(e.base + e.lay.data_off, 0xee, 8192);
	raw_put(&b, PCMD_OP_RECV, b.conn, 0, 4096, 1);
	/* e names a's and b's connections, and every small id besides. */
	raw_put(&e, PCMD_OP_SEND, a.conn, 0, 4096, cookie);
	expect_cqe(&e, cookie++, -EBADF);
	raw_put(&e, PCMD_OP_SEND, b.conn, 0, 4096, cookie);
	expect_cqe(&e, cookie++, -EBADF);
	for (uint32_t gen = 0; gen < 4; gen++)
		for (uint32_t idx = 1; idx <= 8; idx++) {
			raw_put(&e, PCMD_OP_SEND, gen << 16 | idx, 0, 4096, cookie);
			expect_cqe(&e, cookie++, -EBADF);
		}
	/* b's receive is still waiting for a's send, not e's. */
	usleep(20000);
	assert_int_equal(pcmd_ring_avail(&b.cq), 0);
	memset(a.base + a.lay.data_off, 0x5a, 4096);
	raw_put(&a, PCMD_OP_SEND, a.conn, 0, 4096, 2);
	expect_cqe(&a, 2, 0);
	expect_cqe(&b, 1, 0);
	for (size_t i = 0; i < 4096; i++)
		assert_int_equal(bdata[i], 0x5a);
	/* a closes its connection: a's id names nothing it may post on. */
	{
		struct pcmd_req_close c = {.conn_id = a.conn};

		hdr(&c, PCMD_MSG_CLOSE, sizeof(c));
		expect(a.fd, &c, sizeof(c), 0, NULL);
	}
	raw_put(&a, PCMD_OP_SEND, a.conn, 0, 4096, 3);
	{
		struct pcmd_cqe c = raw_next(&a);

		assert_int_equal(c.cookie, 3);
		assert_true(c.status == -ENOTCONN || c.status == -EBADF);
	}
	for (size_t i = 4096; i < 8192; i++)
		assert_int_equal(bdata[i], 0xbb);
	raw_close(&a);
	raw_close(&b);
	raw_close(&e);
	assert_still_serving();
}

static void test_region_is_sealed(void **state)
{
	struct raw a;
	int seals;

	raw_region(&a, 1u << 20);
	seals = fcntl(a.memfd, F_GET_SEALS);
	assert_int_equal(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
			 F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	assert_int_equal(ftruncate(a.memfd, 4096), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(a.memfd, (off_t)a.lay.region_bytes * 2), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fcntl(a.memfd, F_ADD_SEALS, F_SEAL_WRITE), -1);
	raw_close(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_malformed_framing_gets_errors),
	    cmocka_unit_test(test_other_protocol_version_gets_clear_error),
	    cmocka_unit_test(test_malformed_fields_get_errors),
	    cmocka_unit_test(test_descriptors_sent_to_pcmd_are_refused_and_closed),
	    cmocka_unit_test(test_random_control_garbage_gets_replies_and_daemon_survives),
	    cmocka_unit_test(test_malformed_descriptors_complete_with_errors),
	    cmocka_unit_test(test_corrupt_ring_indices_disconnect_only_that_client),
	    cmocka_unit_test(test_a_client_cannot_reach_another_clients_connections),
	    cmocka_unit_test(test_region_is_sealed),
	};

	return cmocka_run_group_tests(tests, start, stop);
}
