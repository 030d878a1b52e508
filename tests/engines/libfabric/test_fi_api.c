// SPDX-License-Identifier: MIT
/*
 * test_fi_api.c - the pcm provider through libfabric's API, one process
 * playing both ends (one fabric: a listening pep and a dialing endpoint, so
 * the dials go from the loopback port), in whichever backend the
 * environment picks (test_fi_api.sh runs it through pcmd and in process).
 *
 * Each test names the property it checks: connection management with
 * private data both ways, refusals and rejects, messages of every kind
 * (send, sendv, sendmsg, senddata, inject, injectdata into recv, recvv,
 * recvmsg) with their bytes and remote CQ data, truncation, a message
 * waiting for its receive, cancel, RMA writes and reads and their refusals,
 * shutdown and what the peer sees, blocking reads and wait fds, and the
 * calls refused with the right code. Exit 0, or 1 with the first failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define WAIT_MS 20000

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_eq *eq;
static struct fid_pep *pep;
static const char *current = "setup";

/* A connected pair: c (the dialer) and s (the acceptor), each with its CQ. */
struct pair {
	struct fid_ep *c, *s;
	struct fid_cq *ccq, *scq;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "test_fi_api: %s: ", current);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

#define CHECK(rc, call)                                                                   \
	do {                                                                              \
		long rc_ = (long)(rc);                                                    \
		if (rc_ < 0)                                                              \
			die("%s: %s (%ld)", call, fi_strerror((int)-rc_), rc_);           \
	} while (0)

#define EXPECT(cond, ...)                                                                 \
	do {                                                                              \
		if (!(cond))                                                              \
			die(__VA_ARGS__);                                                 \
	} while (0)

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The next event of the EQ (errors as -FI_EAVAIL with *err filled). */
static ssize_t next_event(uint32_t *event, void *buf, size_t len, struct fi_eq_err_entry *err)
{
	long end = now_ms() + WAIT_MS;
	ssize_t rc;

	do {
		rc = fi_eq_read(eq, event, buf, len, 0);
		if (rc == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			CHECK(fi_eq_readerr(eq, err, 0), "fi_eq_readerr");
			return -FI_EAVAIL;
		}
		if (rc != -FI_EAGAIN)
			return rc;
	} while (now_ms() < end);
	die("no event in %d ms", WAIT_MS);
}

/* The next completion of @cq (an error as -FI_EAVAIL with *err filled). */
static ssize_t next_comp(struct fid_cq *cq, struct fi_cq_data_entry *e, struct fi_cq_err_entry *err)
{
	long end = now_ms() + WAIT_MS;
	ssize_t rc;

	do {
		rc = fi_cq_read(cq, e, 1);
		if (rc == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			CHECK(fi_cq_readerr(cq, err, 0), "fi_cq_readerr");
			return -FI_EAVAIL;
		}
		if (rc != -FI_EAGAIN)
			return rc;
	} while (now_ms() < end);
	die("no completion in %d ms", WAIT_MS);
}

static void comp_ok(struct fid_cq *cq, void *ctx, uint64_t flags, struct fi_cq_data_entry *e)
{
	struct fi_cq_err_entry err;
	ssize_t rc = next_comp(cq, e, &err);

	EXPECT(rc == 1, "completion: %s (prov %d)", rc == -FI_EAVAIL ? fi_strerror(err.err) : "?",
	       err.prov_errno);
	EXPECT(e->op_context == ctx, "completion of context %p, want %p", e->op_context, ctx);
	EXPECT((e->flags & flags) == flags, "flags %#llx lack %#llx",
	       (unsigned long long)e->flags, (unsigned long long)flags);
}

static struct fi_cq_err_entry comp_err(struct fid_cq *cq, void *ctx, int want)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	ssize_t rc = next_comp(cq, &e, &err);

	EXPECT(rc == -FI_EAVAIL, "want error %s, got a success", fi_strerror(want));
	EXPECT(err.err == want, "error %s, want %s", fi_strerror(err.err), fi_strerror(want));
	EXPECT(err.op_context == ctx, "error of context %p, want %p", err.op_context, ctx);
	return err;
}

static struct fid_ep *new_ep(struct fi_info *fi, struct fid_cq **cq)
{
	struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_UNSPEC};
	struct fid_ep *ep;

	CHECK(fi_cq_open(domain, &attr, cq, NULL), "fi_cq_open");
	CHECK(fi_endpoint(domain, fi, &ep, NULL), "fi_endpoint");
	CHECK(fi_ep_bind(ep, &eq->fid, 0), "fi_ep_bind(eq)");
	CHECK(fi_ep_bind(ep, &(*cq)->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
	CHECK(fi_enable(ep), "fi_enable");
	return ep;
}

static struct sockaddr_in pep_addr(void)
{
	struct sockaddr_in a;
	size_t len = sizeof(a);

	CHECK(fi_getname(&pep->fid, &a, &len), "fi_getname(pep)");
	return a;
}

/* Dial the pep with @data; take its request. Return: the request's fi_info. */
static struct fi_info *dial(struct pair *p, const char *data)
{
	struct sockaddr_in a = pep_addr();
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)buf;
	struct fi_eq_err_entry err;
	uint32_t ev;
	ssize_t rc;

	p->c = new_ep(info, &p->ccq);
	CHECK(fi_connect(p->c, &a, data, strlen(data) + 1), "fi_connect");
	rc = next_event(&ev, buf, sizeof(buf), &err);
	EXPECT(rc > 0 && ev == FI_CONNREQ, "want FI_CONNREQ, got %zd/%u", rc, ev);
	EXPECT(cm->fid == &pep->fid, "FI_CONNREQ of another fid");
	EXPECT(!strcmp((char *)cm->data, data), "connect data \"%s\", want \"%s\"",
	       (char *)cm->data, data);
	EXPECT(cm->info->dest_addr && cm->info->handle, "FI_CONNREQ without peer or handle");
	return cm->info;
}

static void connect_pair(struct pair *p)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)buf;
	struct fi_info *req = dial(p, "from the dialer");
	struct fi_eq_err_entry err;
	int connected = 0;
	uint32_t ev;

	p->s = new_ep(req, &p->scq);
	fi_freeinfo(req);
	CHECK(fi_accept(p->s, "from the acceptor", 18), "fi_accept");
	while (connected != 3) {
		ssize_t rc = next_event(&ev, buf, sizeof(buf), &err);

		EXPECT(rc > 0 && ev == FI_CONNECTED, "want FI_CONNECTED, got %zd/%u (%s)", rc, ev,
		       rc == -FI_EAVAIL ? fi_strerror(err.err) : "");
		if (cm->fid == &p->c->fid) {
			EXPECT(!strcmp((char *)cm->data, "from the acceptor"), "accept data \"%s\"",
			       (char *)cm->data);
			connected |= 1;
		} else {
			EXPECT(cm->fid == &p->s->fid, "FI_CONNECTED of another fid");
			connected |= 2;
		}
	}
}

static void close_pair(struct pair *p)
{
	if (p->c)
		CHECK(fi_close(&p->c->fid), "fi_close(ep)");
	if (p->s)
		CHECK(fi_close(&p->s->fid), "fi_close(ep)");
	CHECK(fi_close(&p->ccq->fid), "fi_close(cq)");
	if (p->scq)
		CHECK(fi_close(&p->scq->fid), "fi_close(cq)");
	memset(p, 0, sizeof(*p));
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 11));
}

/* ---- the tests -------------------------------------------------------------------------------- */

static void test_connect_carries_private_data_both_ways(void)
{
	struct pair p = {0};
	struct sockaddr_in peer, a = pep_addr();
	size_t len = sizeof(peer);

	connect_pair(&p);
	CHECK(fi_getpeer(p.c, &peer, &len), "fi_getpeer");
	EXPECT(peer.sin_port == a.sin_port && peer.sin_addr.s_addr == a.sin_addr.s_addr,
	       "the dialer's peer is not the pep's address");
	close_pair(&p);
}

static void test_reject_refuses_with_its_private_data(void)
{
	struct pair p = {0};
	struct fi_info *req = dial(&p, "let me in");
	struct fi_eq_err_entry err;
	uint8_t buf[512];
	uint32_t ev;

	CHECK(fi_reject(pep, req->handle, "no", 3), "fi_reject");
	fi_freeinfo(req);
	EXPECT(next_event(&ev, buf, sizeof(buf), &err) == -FI_EAVAIL, "want an error event");
	EXPECT(err.err == FI_ECONNREFUSED && err.fid == &p.c->fid, "error %s", fi_strerror(err.err));
	EXPECT(err.err_data_size == 3 && !strcmp(err.err_data, "no"), "reject data of %zu bytes",
	       err.err_data_size);
	EXPECT(fi_send(p.c, buf, 1, NULL, 0, NULL) == -FI_ENOTCONN, "send after a reject");
	close_pair(&p);
}

static void test_connect_to_nobody_is_refused(void)
{
	struct pair p = {0};
	struct sockaddr_in a = pep_addr();
	struct fi_eq_err_entry err;
	uint8_t buf[512];
	uint32_t ev;

	a.sin_port = htons(ntohs(a.sin_port) ^ 1);
	p.c = new_ep(info, &p.ccq);
	CHECK(fi_connect(p.c, &a, NULL, 0), "fi_connect");
	EXPECT(next_event(&ev, buf, sizeof(buf), &err) == -FI_EAVAIL, "want an error event");
	EXPECT(err.err == FI_ECONNREFUSED && err.fid == &p.c->fid, "error %s", fi_strerror(err.err));
	close_pair(&p);
}

static void test_messages_of_every_kind_arrive_whole(void)
{
	static const size_t sizes[] = {0, 1, 4095, 65472, 65473, 200000, (1 << 20) + 3};
	size_t big = (1 << 20) + 3;
	uint8_t *tx = malloc(big), *rx = calloc(1, big);
	struct fi_cq_data_entry e;
	struct pair p = {0};

	connect_pair(&p);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];

		fill(tx, n, (unsigned)i);
		memset(rx, 0, big);
		CHECK(fi_recv(p.s, rx, big, NULL, 0, rx), "fi_recv");
		CHECK(fi_senddata(p.c, tx, n, NULL, 0x1234500 + i, 0, tx), "fi_senddata");
		comp_ok(p.scq, rx, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA, &e);
		EXPECT(e.len == n && e.data == 0x1234500 + i, "%zu bytes, data %#llx", e.len,
		       (unsigned long long)e.data);
		EXPECT(!memcmp(tx, rx, n), "%zu bytes arrived changed", n);
		comp_ok(p.ccq, tx, FI_SEND | FI_MSG, &e);
	}
	/* three pieces gathered, scattered into two */
	{
		struct iovec out[3] = {{tx, 10}, {tx + 100, 70000}, {tx + 80000, 5}};
		struct iovec in[2] = {{rx, 30000}, {rx + 40000, 50000}};
		struct fi_msg m = {.msg_iov = in, .iov_count = 2, .context = in};

		fill(tx, 90000, 99);
		CHECK(fi_recvmsg(p.s, &m, FI_COMPLETION), "fi_recvmsg");
		CHECK(fi_sendv(p.c, out, NULL, 3, 0, out), "fi_sendv");
		comp_ok(p.scq, in, FI_RECV, &e);
		EXPECT(e.len == 70015, "sendv: %zu bytes", e.len);
		EXPECT(!memcmp(rx, tx, 10) && !memcmp(rx + 10, tx + 100, 29990) &&
			       !memcmp(rx + 40000, tx + 100 + 29990, 40010) &&
			       !memcmp(rx + 80010, tx + 80000, 5),
		       "sendv/recvmsg bytes differ");
		comp_ok(p.ccq, out, FI_SEND, &e);
	}
	/* inject: the buffer is free at once, and no completion comes */
	fill(tx, 4096, 5);
	CHECK(fi_recvv(p.s, &(struct iovec){rx, 8192}, NULL, 1, 0, rx), "fi_recvv");
	CHECK(fi_injectdata(p.c, tx, 4096, 77, 0), "fi_injectdata");
	memset(tx, 0, 4096);
	comp_ok(p.scq, rx, FI_RECV | FI_REMOTE_CQ_DATA, &e);
	fill(tx, 4096, 5);
	EXPECT(e.len == 4096 && e.data == 77 && !memcmp(rx, tx, 4096), "injected bytes differ");
	EXPECT(fi_inject(p.c, tx, 4097, 0) == -FI_EINVAL, "an inject above inject_size");
	EXPECT(fi_cq_read(p.ccq, &e, 1) == -FI_EAGAIN, "an inject completed");
	close_pair(&p);
	free(rx);
	free(tx);
}

static void test_longer_message_truncates_the_receive(void)
{
	uint8_t tx[1000], rx[1000];
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	struct pair p = {0};

	connect_pair(&p);
	fill(tx, sizeof(tx), 3);
	memset(rx, 0, sizeof(rx));
	CHECK(fi_recv(p.s, rx, 100, NULL, 0, rx), "fi_recv");
	CHECK(fi_send(p.c, tx, 1000, NULL, 0, tx), "fi_send");
	err = comp_err(p.scq, rx, FI_ETRUNC);
	EXPECT(err.len == 100 && err.olen == 900, "len %zu olen %zu", err.len, err.olen);
	EXPECT(!memcmp(rx, tx, 100) && rx[100] == 0, "the first 100 bytes, and nothing after");
	comp_ok(p.ccq, tx, FI_SEND, &e);
	/* the connection goes on */
	CHECK(fi_recv(p.s, rx, sizeof(rx), NULL, 0, rx), "fi_recv");
	CHECK(fi_send(p.c, tx, 10, NULL, 0, tx), "fi_send");
	comp_ok(p.scq, rx, FI_RECV, &e);
	EXPECT(e.len == 10, "the next message: %zu bytes", e.len);
	comp_ok(p.ccq, tx, FI_SEND, &e);
	close_pair(&p);
}

static void test_message_waits_for_a_late_receive_and_cancel(void)
{
	enum { SZ = 2 << 20 }; /* longer than the receiver's ring of segments */
	uint8_t *tx = malloc(SZ), *rx = calloc(1, SZ), one[8];
	struct fi_cq_data_entry e;
	struct pair p = {0};

	connect_pair(&p);
	CHECK(fi_recv(p.s, one, sizeof(one), NULL, 0, one), "fi_recv");
	EXPECT(fi_cancel(&p.s->fid, one) == 0, "fi_cancel of a posted receive");
	comp_err(p.scq, one, FI_ECANCELED);
	EXPECT(fi_cancel(&p.s->fid, one) == -FI_ENOENT, "fi_cancel of a receive no longer there");
	fill(tx, SZ, 11);
	CHECK(fi_send(p.c, tx, SZ, NULL, 0, tx), "fi_send");
	/* nothing posted: the message waits, and fills the ring: the send cannot complete */
	for (int i = 0; i < 200; i++) {
		ssize_t rc = fi_cq_read(p.ccq, &e, 1);

		EXPECT(rc == -FI_EAGAIN, "the send completed with no receive posted");
		fi_cq_read(p.scq, &e, 1);
	}
	CHECK(fi_recv(p.s, rx, SZ, NULL, 0, rx), "fi_recv");
	comp_ok(p.scq, rx, FI_RECV, &e);
	EXPECT(e.len == SZ && !memcmp(tx, rx, SZ), "the late receive's bytes");
	comp_ok(p.ccq, tx, FI_SEND, &e);
	close_pair(&p);
	free(rx);
	free(tx);
}

static void test_rma_writes_and_reads_land_in_the_region(void)
{
	size_t n = (3 << 20) + 5;
	uint8_t *target = calloc(1, n), *src = malloc(n), *back = calloc(1, n);
	uint64_t access = FI_REMOTE_READ | FI_REMOTE_WRITE, addr;
	struct fi_cq_data_entry e;
	struct fid_mr *mr;
	struct pair p = {0};

	connect_pair(&p);
	CHECK(fi_mr_reg(domain, target, n, access, 0, 7, 0, &mr, NULL), "fi_mr_reg");
	addr = info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ? (uintptr_t)target : 0;
	fill(src, n, 21);
	CHECK(fi_write(p.c, src, n, NULL, 0, addr, fi_mr_key(mr), src), "fi_write");
	comp_ok(p.ccq, src, FI_RMA | FI_WRITE, &e);
	EXPECT(!memcmp(target, src, n), "the written bytes");
	CHECK(fi_read(p.c, back, n, NULL, 0, addr, fi_mr_key(mr), back), "fi_read");
	comp_ok(p.ccq, back, FI_RMA | FI_READ, &e);
	EXPECT(!memcmp(back, src, n), "the read bytes");
	CHECK(fi_writedata(p.c, src, 64, NULL, 0xfeed, 0, addr + 100, fi_mr_key(mr), src),
	      "fi_writedata");
	comp_ok(p.ccq, src, FI_RMA | FI_WRITE, &e);
	comp_ok(p.scq, NULL, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA, &e);
	EXPECT(e.data == 0xfeed, "remote CQ data %#llx", (unsigned long long)e.data);
	EXPECT(!memcmp(target + 100, src, 64), "writedata's bytes");
	CHECK(fi_close(&mr->fid), "fi_close(mr)");
	close_pair(&p);
	free(back);
	free(src);
	free(target);
}

static void test_rma_outside_what_a_region_allows_fails_the_operation(void)
{
	uint8_t target[4096], buf[4096];
	uint64_t addr;
	struct fi_cq_data_entry e;
	struct fid_mr *ro;
	struct pair p = {0};

	connect_pair(&p);
	CHECK(fi_mr_reg(domain, target, sizeof(target), FI_REMOTE_READ, 0, 8, 0, &ro, NULL),
	      "fi_mr_reg");
	addr = info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ? (uintptr_t)target : 0;
	CHECK(fi_write(p.c, buf, 16, NULL, 0, addr, fi_mr_key(ro) ^ 0x55, buf), "fi_write");
	comp_err(p.ccq, buf, FI_EKEYREJECTED);
	CHECK(fi_write(p.c, buf, 16, NULL, 0, addr, fi_mr_key(ro), buf), "fi_write");
	comp_err(p.ccq, buf, FI_EACCES);
	CHECK(fi_read(p.c, buf, 16, NULL, 0, addr + 4090, fi_mr_key(ro), buf), "fi_read");
	comp_err(p.ccq, buf, FI_EACCES);
	CHECK(fi_read(p.c, buf, 16, NULL, 0, addr + 8, fi_mr_key(ro), buf), "fi_read");
	comp_ok(p.ccq, buf, FI_READ, &e);
	CHECK(fi_close(&ro->fid), "fi_close(mr)");
	CHECK(fi_read(p.c, buf, 16, NULL, 0, addr + 8, fi_mr_key(ro), buf), "fi_read");
	comp_err(p.ccq, buf, FI_EKEYREJECTED);
	close_pair(&p);
}

static void test_shutdown_is_seen_by_the_peer(void)
{
	uint8_t rx[64], buf[512];
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)buf;
	struct fi_eq_err_entry err;
	struct pair p = {0};
	uint32_t ev;

	connect_pair(&p);
	CHECK(fi_recv(p.s, rx, sizeof(rx), NULL, 0, rx), "fi_recv");
	CHECK(fi_recv(p.c, rx, sizeof(rx), NULL, 0, buf), "fi_recv");
	CHECK(fi_shutdown(p.c, 0), "fi_shutdown");
	comp_err(p.ccq, buf, FI_ECANCELED);
	EXPECT(next_event(&ev, buf, sizeof(buf), &err) > 0 && ev == FI_SHUTDOWN, "want FI_SHUTDOWN");
	EXPECT(cm->fid == &p.s->fid, "FI_SHUTDOWN of another fid");
	comp_err(p.scq, rx, FI_ECANCELED);
	EXPECT(fi_send(p.s, rx, 1, NULL, 0, NULL) == -FI_ENOTCONN, "send after FI_SHUTDOWN");
	close_pair(&p);
}

static void test_blocking_reads_and_wait_fds(void)
{
	struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_FD};
	uint8_t tx[100], rx[100];
	struct fi_cq_data_entry ce; /* new_ep()'s queues: FI_CQ_FORMAT_DATA */
	struct fi_cq_entry fce;     /* fdcq's: FI_CQ_FORMAT_CONTEXT */
	struct fid_cq *fdcq;
	struct fid *fids[1];
	struct pair p = {0};
	int fd, got = 0;

	connect_pair(&p);
	EXPECT(fi_cq_sread(p.scq, &ce, 1, NULL, 50) == -FI_EAGAIN, "sread of nothing: -FI_EAGAIN");
	CHECK(fi_recv(p.s, rx, sizeof(rx), NULL, 0, rx), "fi_recv");
	CHECK(fi_send(p.c, tx, sizeof(tx), NULL, 0, tx), "fi_send");
	EXPECT(fi_cq_sread(p.scq, &ce, 1, NULL, WAIT_MS) == 1 && ce.op_context == rx, "sread");
	EXPECT(fi_cq_sread(p.ccq, &ce, 1, NULL, WAIT_MS) == 1 && ce.op_context == tx, "sread");
	/* a wait fd */
	CHECK(fi_cq_open(domain, &attr, &fdcq, NULL), "fi_cq_open(FI_WAIT_FD)");
	CHECK(fi_control(&fdcq->fid, FI_GETWAIT, &fd), "FI_GETWAIT");
	close_pair(&p);
	{
		struct fi_info *req;
		struct fid_cq *spare;

		req = dial(&p, "fd");
		CHECK(fi_endpoint(domain, req, &p.s, NULL), "fi_endpoint");
		fi_freeinfo(req);
		CHECK(fi_ep_bind(p.s, &eq->fid, 0), "bind");
		CHECK(fi_ep_bind(p.s, &fdcq->fid, FI_TRANSMIT | FI_RECV), "bind");
		CHECK(fi_accept(p.s, NULL, 0), "fi_accept");
		for (int connected = 0; connected < 2;) {
			uint8_t buf[512];
			struct fi_eq_err_entry err;
			uint32_t ev;

			EXPECT(next_event(&ev, buf, sizeof(buf), &err) > 0 && ev == FI_CONNECTED,
			       "FI_CONNECTED");
			connected++;
		}
		CHECK(fi_recv(p.s, rx, sizeof(rx), NULL, 0, rx), "fi_recv");
		CHECK(fi_send(p.c, tx, sizeof(tx), NULL, 0, tx), "fi_send");
		fids[0] = &fdcq->fid;
		for (long end = now_ms() + WAIT_MS; !got && now_ms() < end;) {
			struct pollfd pfd = {.fd = fd, .events = POLLIN};

			if (fi_trywait(fabric, fids, 1) == 0)
				poll(&pfd, 1, 100);
			got = fi_cq_read(fdcq, &fce, 1) == 1;
			fi_cq_read(p.ccq, &ce, 1);
		}
		EXPECT(got && fce.op_context == rx, "no completion through the wait fd");
		CHECK(fi_close(&p.s->fid), "fi_close");
		spare = p.ccq;
		CHECK(fi_close(&p.c->fid), "fi_close");
		CHECK(fi_close(&spare->fid), "fi_close");
		memset(&p, 0, sizeof(p));
	}
	CHECK(fi_close(&fdcq->fid), "fi_close(cq)");
}

static void test_what_is_not_provided_is_refused(void)
{
	struct fi_info *hints = fi_allocinfo(), *got = NULL;
	struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_SET};
	struct fid_cq *cq;
	struct fid_av *av;
	struct fi_av_attr av_attr = {.type = FI_AV_MAP};
	struct pair p = {0};
	uint8_t b[8];
	struct iovec iov[5] = {{b, 1}, {b, 1}, {b, 1}, {b, 1}, {b, 1}};

	hints->fabric_attr->prov_name = strdup("pcm");
	hints->ep_attr->type = FI_EP_RDM;
	EXPECT(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &got) == -FI_ENODATA ||
		       strstr(got->fabric_attr->prov_name, "ofi_rxm"),
	       "pcm itself offered FI_EP_RDM");
	fi_freeinfo(got);
	fi_freeinfo(hints);
	EXPECT(fi_cq_open(domain, &attr, &cq, NULL) == -FI_ENOSYS, "FI_WAIT_SET not refused");
	EXPECT(fi_av_open(domain, &av_attr, &av, NULL) == -FI_ENOSYS, "an AV not refused");
	p.c = new_ep(info, &p.ccq);
	EXPECT(fi_send(p.c, b, 1, NULL, 0, NULL) == -FI_ENOTCONN, "send before connect");
	EXPECT(fi_tsend(p.c, b, 1, NULL, 0, 1, NULL) == -FI_ENOSYS, "tagged send not refused");
	close_pair(&p);
	connect_pair(&p);
	EXPECT(fi_sendv(p.c, iov, NULL, 5, 0, NULL) == -FI_EINVAL, "5 iovecs not refused");
	EXPECT(fi_connect(p.c, NULL, NULL, 0) == -FI_EISCONN, "a second connect");
	close_pair(&p);
}

static void setup(void)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_UNSPEC};

	hints->fabric_attr->prov_name = strdup("pcm");
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info), "fi_getinfo");
	fi_freeinfo(hints);
	CHECK(fi_fabric(info->fabric_attr, &fabric, NULL), "fi_fabric");
	CHECK(fi_domain(fabric, info, &domain, NULL), "fi_domain");
	CHECK(fi_eq_open(fabric, &eq_attr, &eq, NULL), "fi_eq_open");
	CHECK(fi_passive_ep(fabric, info, &pep, NULL), "fi_passive_ep");
	CHECK(fi_pep_bind(pep, &eq->fid, 0), "fi_pep_bind");
	CHECK(fi_listen(pep), "fi_listen");
}

int main(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
#define T(f) {#f, f}
		T(test_connect_carries_private_data_both_ways),
		T(test_reject_refuses_with_its_private_data),
		T(test_connect_to_nobody_is_refused),
		T(test_messages_of_every_kind_arrive_whole),
		T(test_longer_message_truncates_the_receive),
		T(test_message_waits_for_a_late_receive_and_cancel),
		T(test_rma_writes_and_reads_land_in_the_region),
		T(test_rma_outside_what_a_region_allows_fails_the_operation),
		T(test_shutdown_is_seen_by_the_peer),
		T(test_blocking_reads_and_wait_fds),
		T(test_what_is_not_provided_is_refused),
#undef T
	};

	setup();
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		current = tests[i].name;
		tests[i].fn();
		printf("ok %zu %s\n", i + 1, tests[i].name);
		fflush(stdout);
	}
	current = "teardown";
	CHECK(fi_close(&pep->fid), "fi_close(pep)");
	CHECK(fi_close(&eq->fid), "fi_close(eq)");
	CHECK(fi_close(&domain->fid), "fi_close(domain)");
	CHECK(fi_close(&fabric->fid), "fi_close(fabric)");
	fi_freeinfo(info);
	printf("test_fi_api: %zu tests passed (%s)\n", sizeof(tests) / sizeof(tests[0]),
	       getenv("FI_PCM_BACKEND") ? getenv("FI_PCM_BACKEND") : "daemon");
	return 0;
}
