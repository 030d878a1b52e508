// SPDX-License-Identifier: MIT
/*
 * tenant.c - pcm-tenant SOCKET MODE ARGS...: one tenant of a shared pcmd, for
 * the tenancy suite (test_tenancy.sh runs it as unprivileged users with
 * setpriv). Each mode is an attack of issue 23 or a legitimate tenant's work,
 * and prints what it saw as "key value" lines the script checks:
 *
 *   open                     open an endpoint; "open ok" or "open refused ERRNO TEXT"
 *   fdflood CONNS MSGS FDS HELLO
 *                            CONNS connections one after the other (HELLO first if
 *                            HELLO is 1), each sending up to MSGS messages of FDS
 *                            descriptors (more than pcmd's control buffer holds:
 *                            MSG_CTRUNC); "sent_fds N replies N"
 *   connflood N HOLD_MS      N connections that never say HELLO, held HOLD_MS;
 *                            "closed_by_pcmd K" (how many pcmd closed meanwhile)
 *   regions N BYTES HOLD_MS  up to N endpoints of BYTES regions, held HOLD_MS;
 *                            "regions K" and the refusal's text
 *   serve NAME FLAGS K       listen on NAME (FLAGS 1: any user may dial): "listening
 *                            NAME pid P"; accept K dials, print each peer's
 *                            uid/gid/pid and receive one checked message on each;
 *                            "served K"
 *   dial ADDR                "dial_pid P"; connect to ADDR, print the peer's
 *                            uid/gid/pid, send one seeded message; "dial ok" or
 *                            "dial refused ERRNO"
 *   pair NAME SECONDS MSG DEPTH
 *                            two endpoints, NAME between them, DEPTH messages of
 *                            MSG bytes in flight for SECONDS, every byte checked;
 *                            "goodput_bps G"
 *   badflood SECONDS         a client that fills its submission ring with descriptors
 *                            pcmd rejects at once (a conn id it never had) and takes
 *                            their completions, as fast as it can, for SECONDS;
 *                            "ready", then "rejected N"
 *   limits N                 up to N endpoints listening on four names each until pcmd
 *                            refuses a listen, then dials from the first to the second's
 *                            name (a flow at each end) until pcmd refuses one;
 *                            "listeners K", "flows F", each refusal's text
 *   chaos SEED FIRST COUNT VICTIM_UID
 *                            actions FIRST .. FIRST+COUNT-1 of a seeded hostile client,
 *                            each drawn from (SEED, its index) alone: garbage messages
 *                            (with up to 253 descriptors: MSG_CTRUNC), hello-less
 *                            connections, squatting and dialling names (VICTIM_UID's,
 *                            shared ones, hostile bytes), random ring descriptors;
 *                            "chaos seed ..." with the count of each kind
 *   cycle ROUNDS CLIENTS BYTES
 *                            ROUNDS times: CLIENTS endpoints of BYTES regions
 *                            opened, a message through each pair, all closed
 *
 * Exit 0 when the mode did what it was asked (an expected refusal included),
 * 1 otherwise.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "pcmd_region.h"
#include "tp_util.h"

#define MAX_ENDPOINTS 256
#define MAX_CONNS 4096

static const char *sock;

static int usage(void)
{
	fprintf(stderr, "usage: pcm-tenant SOCKET open|fdflood|connflood|regions|serve|dial|pair|"
			"badflood|limits|chaos|cycle ARGS... (see tenant.c)\n");
	return 2;
}

static long arg_long(const char *s)
{
	char *end;
	long v = strtol(s, &end, 0);

	return *end || end == s ? -1 : v;
}

static int raw_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

/* ---- open ------------------------------------------------------------------------------- */

static int mode_open(void)
{
	struct pcm_tp_endpoint *ep;
	int rc = tp_open(sock, 1u << 20, &ep);

	if (rc < 0) {
		printf("open refused %d %s\n", rc, pcm_tp_last_error());
		return 0;
	}
	printf("open ok\n");
	pcm_tp_endpoint_close(ep);
	return 0;
}

/* ---- fdflood ---------------------------------------------------------------------------- */

/* One message carrying @n descriptors (of /dev/null): a STATUS request. */
static int send_with_fds(int fd, int devnull, int n, uint32_t seq)
{
	struct pcmd_req_empty q;
	struct iovec iov = {&q, sizeof(q)};
	size_t ctl_len = CMSG_SPACE(sizeof(int) * (size_t)n);
	union {
		struct cmsghdr align;
		uint8_t b[CMSG_SPACE(sizeof(int) * 253)];
	} ctl;
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = ctl_len};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	harness_hdr(&q.hdr, PCMD_MSG_STATUS, sizeof(q), seq);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++)
		memcpy(CMSG_DATA(cm) + i * sizeof(int), &devnull, sizeof(int));
	return sendmsg(fd, &m, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* One connection: its messages, each with @n_fds descriptors, and their replies. */
static long flood_one(int devnull, long msgs, long n_fds, long hello, long *sent)
{
	uint8_t rep[PCMD_MSG_MAX_BYTES];
	int fd = raw_connect();
	long replies = 0;

	if (fd < 0)
		return 0;
	if (hello)
		(void)harness_raw_hello(fd, PCMD_ROLE_APP); /* a refused peer's first reply */
	for (long i = 0; i < msgs; i++) {
		ssize_t n;

		if (send_with_fds(fd, devnull, (int)n_fds, (uint32_t)i + 2) < 0)
			break;
		*sent += n_fds;
		n = harness_raw_rpc(fd, NULL, 0, rep, sizeof(rep));
		if (n < (ssize_t)sizeof(struct pcmd_reply_status))
			break;
		replies++;
	}
	close(fd);
	return replies;
}

static int mode_fdflood(long conns, long msgs, long n_fds, long hello)
{
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	long replies = 0, sent = 0;

	if (devnull < 0 || n_fds < 1 || n_fds > 253)
		return usage();
	for (long c = 0; c < conns; c++)
		replies += flood_one(devnull, msgs, n_fds, hello, &sent);
	printf("sent_fds %ld\nreplies %ld\n", sent, replies);
	close(devnull);
	return 0;
}

/* ---- connflood -------------------------------------------------------------------------- */

static int mode_connflood(long n, long hold_ms)
{
	static int fds[MAX_CONNS];
	long opened = 0, closed = 0;

	for (long i = 0; i < n && i < MAX_CONNS; i++) {
		fds[i] = raw_connect();
		if (fds[i] < 0)
			break;
		opened++;
	}
	usleep((useconds_t)hold_ms * 1000);
	for (long i = 0; i < opened; i++) {
		char b;

		/* pcmd hung up (a refusal may wait first): readable, then EOF or an error. */
		while (recv(fds[i], &b, 1, MSG_DONTWAIT | MSG_TRUNC) > 0)
			;
		if (recv(fds[i], &b, 1, MSG_DONTWAIT) != -1 || errno != EAGAIN)
			closed++;
		close(fds[i]);
	}
	printf("opened %ld\nclosed_by_pcmd %ld\n", opened, closed);
	return 0;
}

/* ---- regions ---------------------------------------------------------------------------- */

static int mode_regions(long n, long bytes, long hold_ms)
{
	static struct pcm_tp_endpoint *eps[MAX_ENDPOINTS];
	long k = 0;

	for (; k < n && k < MAX_ENDPOINTS; k++) {
		int rc = tp_open(sock, (size_t)bytes, &eps[k]);

		if (rc < 0) {
			printf("refused %d %s\n", rc, pcm_tp_last_error());
			break;
		}
	}
	printf("regions %ld\n", k);
	fflush(stdout);
	usleep((useconds_t)hold_ms * 1000);
	for (long i = 0; i < k; i++)
		pcm_tp_endpoint_close(eps[i]);
	return 0;
}

/* ---- serve and dial --------------------------------------------------------------------- */

static void print_peer(const char *who, struct pcm_tp_conn *c)
{
	struct pcm_tp_peer p;
	int rc = pcm_tp_conn_peer(c, &p);

	if (rc < 0)
		printf("%s_peer unknown %d\n", who, rc);
	else
		printf("%s_peer uid %u gid %u pid %d\n", who, p.uid, p.gid, (int)p.pid);
}

static int mode_serve(const char *name, long flags, long k)
{
	struct pcm_tp_endpoint *ep = NULL;
	struct pcm_tp_completion c;
	long served = 0;
	int rc = tp_open(sock, 4u << 20, &ep);

	if (rc == 0)
		rc = pcm_tp_listen_flags(ep, name, (uint32_t)flags);
	if (rc < 0) {
		printf("listen refused %d %s\n", rc, pcm_tp_last_error());
		fflush(stdout);
		pcm_tp_endpoint_close(ep);
		return 0;
	}
	printf("listening %s pid %d\n", name, (int)getpid());
	fflush(stdout);
	for (; served < k; served++) {
		struct pcm_tp_conn *conn;
		uint8_t *buf = pcm_tp_mem_alloc(ep, 4096);
		size_t bad;

		if (!buf || pcm_tp_accept(ep, (uint64_t)served) < 0 ||
		    tp_wait_op(ep, PCM_TP_OP_ACCEPT, &c, 60000) < 0 || c.status)
			break;
		conn = c.conn;
		print_peer("serve", conn);
		if (pcm_tp_recv(conn, NULL, buf, 4096, 1) < 0 ||
		    tp_wait_op(ep, PCM_TP_OP_RECV, &c, 10000) < 0 || c.status || c.bytes != 4096 ||
		    harness_check(buf, 4096, 42, &bad) < 0)
			printf("serve message %ld lost or damaged\n", served);
		else
			printf("serve got %ld bytes\n", (long)c.bytes);
		fflush(stdout);
		pcm_tp_conn_close(conn);
		pcm_tp_mem_free(ep, buf);
	}
	printf("served %ld\n", served);
	pcm_tp_endpoint_close(ep);
	return served == k ? 0 : 1;
}

static int mode_dial(const char *addr)
{
	struct pcm_tp_endpoint *ep;
	struct pcm_tp_completion c;
	uint8_t *buf;
	int rc = tp_open(sock, 4u << 20, &ep);

	if (rc < 0) {
		printf("open refused %d %s\n", rc, pcm_tp_last_error());
		return 1;
	}
	printf("dial_pid %d\n", (int)getpid());
	rc = pcm_tp_connect(ep, addr, NULL, 1);
	if (rc == 0 && tp_wait_op(ep, PCM_TP_OP_CONNECT, &c, 10000) == 0)
		rc = c.status;
	if (rc < 0) {
		printf("dial refused %d %s\n", rc, pcm_tp_last_error());
		pcm_tp_endpoint_close(ep);
		return 0;
	}
	print_peer("dial", c.conn);
	buf = pcm_tp_mem_alloc(ep, 4096);
	harness_fill(buf, 4096, 42);
	rc = pcm_tp_send(c.conn, NULL, buf, 4096, 2);
	if (rc == 0 && tp_wait_op(ep, PCM_TP_OP_SEND, &c, 10000) == 0)
		rc = c.status;
	printf(rc == 0 ? "dial ok\n" : "dial send failed %d\n", rc);
	pcm_tp_endpoint_close(ep);
	return rc == 0 ? 0 : 1;
}

/* ---- pair: goodput ---------------------------------------------------------------------- */

struct flight {
	struct pcm_tp_endpoint *tx, *rx;
	struct pcm_tp_conn *ctx, *crx;
	uint8_t *sbuf, *rbuf;
	size_t msg;
	uint64_t sent, received, bytes;
	long depth;
	/* slot k % depth's send and receive still posted: messages may complete out of order
	 * (several paths), so a slot is reused only once both of its own completions came */
	bool send_busy[1024], recv_busy[1024];
};

/* Post what the window allows: receives ahead of sends, each in a slot both ends freed. */
static int refill(struct flight *f)
{
	for (;;) {
		uint64_t k = f->sent;
		size_t slot = (size_t)(k % (uint64_t)f->depth);
		uint8_t *r = f->rbuf + slot * f->msg;
		uint8_t *s = f->sbuf + slot * f->msg;
		int rc;

		if (f->send_busy[slot] || f->recv_busy[slot])
			return 0;
		rc = pcm_tp_recv(f->crx, NULL, r, f->msg, k);
		if (rc == -EAGAIN)
			return 0;
		harness_fill(s, f->msg, k);
		if (rc == 0)
			rc = pcm_tp_send(f->ctx, NULL, s, f->msg, k);
		if (rc < 0)
			return rc;
		f->send_busy[slot] = f->recv_busy[slot] = true;
		f->sent++;
	}
}

/* Say how message c->cookie, in @r, was lost or damaged: which message's bytes it holds. */
static int damaged(const struct flight *f, const struct pcm_tp_completion *c, const uint8_t *r,
		   size_t bad)
{
	uint64_t k = c->cookie, span = 2u * (uint64_t)f->depth, from = k > span ? k - span : 0;
	size_t b;

	printf("message %llu (the %lluth received) lost or damaged: status %d, %llu bytes, first "
	       "bad byte %zu",
	       (unsigned long long)k, (unsigned long long)f->received, c->status,
	       (unsigned long long)c->bytes, bad);
	for (uint64_t j = from; j <= k + span && c->bytes; j++)
		if (j != k && harness_check(r, (size_t)c->bytes, j, &b) == 0)
			printf(", holds message %llu's bytes", (unsigned long long)j);
	printf("\n");
	return 1;
}

static int mode_pair(const char *name, long seconds, long msg, long depth)
{
	struct flight f = {.msg = (size_t)msg, .depth = depth};
	size_t region = (size_t)msg * (size_t)depth + (1u << 20);
	uint64_t t0, end;
	int rc;

	if (msg < 1 || depth < 1 || depth > 1024)
		return usage();
	rc = tp_open(sock, region, &f.tx);
	if (rc == 0)
		rc = tp_open(sock, region, &f.rx);
	if (rc == 0)
		rc = tp_pair(f.tx, f.rx, name, NULL, &f.ctx, &f.crx);
	if (rc < 0) {
		printf("pair refused %d %s\n", rc, pcm_tp_last_error());
		return 1;
	}
	f.sbuf = pcm_tp_mem_alloc(f.tx, (size_t)msg * (size_t)depth);
	f.rbuf = pcm_tp_mem_alloc(f.rx, (size_t)msg * (size_t)depth);
	if (!f.sbuf || !f.rbuf)
		return 1;
	printf("ready\n");
	fflush(stdout);
	t0 = harness_now_ms();
	end = t0 + (uint64_t)seconds * 1000;
	while (harness_now_ms() < end) {
		struct pcm_tp_completion c[64];
		struct pollfd pfd[2] = {{.fd = pcm_tp_fd(f.tx), .events = POLLIN},
					{.fd = pcm_tp_fd(f.rx), .events = POLLIN}};
		int n;

		if (refill(&f) < 0)
			return 1;
		while ((n = pcm_tp_poll(f.rx, c, 64)) > 0)
			for (int i = 0; i < n; i++) {
				uint8_t *r = f.rbuf + (c[i].cookie % (uint64_t)depth) * f.msg;
				size_t bad = 0;

				if (c[i].status || c[i].bytes != f.msg ||
				    harness_check(r, f.msg, c[i].cookie, &bad) < 0)
					return damaged(&f, &c[i], r, bad);
				f.recv_busy[c[i].cookie % (uint64_t)depth] = false;
				f.received++;
				f.bytes += c[i].bytes;
			}
		while ((n = pcm_tp_poll(f.tx, c, 64)) > 0)
			for (int i = 0; i < n; i++) {
				if (c[i].status)
					return printf("send failed %d\n", c[i].status), 1;
				f.send_busy[c[i].cookie % (uint64_t)depth] = false;
			}
		poll(pfd, 2, 5);
	}
	printf("goodput_bps %.0f\nmessages %llu\n",
	       (double)f.bytes * 8000.0 / (double)(harness_now_ms() - t0),
	       (unsigned long long)f.received);
	pcm_tp_endpoint_close(f.tx);
	pcm_tp_endpoint_close(f.rx);
	return 0;
}

/* ---- badflood: a client of its own, on the rings ----------------------------------------- */

struct raw_client {
	int fd, sq_efd;
	struct pcmd_ring sq, cq;
};

/* HELLO and REGION by hand, the region mapped. Return: 0, or -1. */
static int raw_client_open(struct raw_client *rc)
{
	struct pcmd_req_region q = {.data_bytes = 1u << 20};
	union {
		struct cmsghdr align;
		uint8_t b[CMSG_SPACE(sizeof(int) * PCMD_REGION_FDS)];
	} ctl;
	_Alignas(8) uint8_t rep[PCMD_MSG_MAX_BYTES];
	struct iovec iov = {rep, sizeof(rep)};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.b,
			   .msg_controllen = sizeof(ctl.b)};
	const struct pcmd_rep_region *p = (const void *)rep;
	struct pcmd_region_hdr *h;
	struct cmsghdr *cm;
	int fds[PCMD_REGION_FDS];
	uint8_t *base;

	rc->fd = raw_connect();
	if (rc->fd < 0 || harness_raw_hello(rc->fd, PCMD_ROLE_APP) != 0)
		return -1;
	harness_hdr(&q.hdr, PCMD_MSG_REGION, sizeof(q), 2);
	if (send(rc->fd, &q, sizeof(q), 0) < 0 || recvmsg(rc->fd, &m, 0) < (ssize_t)sizeof(*p) ||
	    p->st.status || !(cm = CMSG_FIRSTHDR(&m)) || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(fds, CMSG_DATA(cm), sizeof(fds));
	rc->sq_efd = fds[1];
	base = mmap(NULL, p->lay.region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (base == MAP_FAILED)
		return -1;
	h = (struct pcmd_region_hdr *)base;
	pcmd_ring_init(&rc->sq, &h->sq, base + p->lay.sq_off, p->lay.sq_entries,
		       sizeof(struct pcmd_sqe));
	pcmd_ring_init(&rc->cq, &h->cq, base + p->lay.cq_off, p->lay.cq_entries,
		       sizeof(struct pcmd_cqe));
	return 0;
}

static void ring(int efd)
{
	uint64_t one = 1;

	if (write(efd, &one, sizeof(one)) < 0) {
		/* saturated: pcmd is awake anyway */
	}
}

static int mode_badflood(long seconds)
{
	const struct pcmd_sqe bad = {.op = PCMD_OP_SEND, .conn_id = 0xdead0001, .len = 1};
	uint64_t end = harness_now_ms() + (uint64_t)seconds * 1000, n = 0;
	struct raw_client rc;

	if (raw_client_open(&rc) < 0) {
		printf("badflood: no client: %s\n", strerror(errno));
		return 1;
	}
	printf("ready\n");
	while (harness_now_ms() < end) {
		struct pcmd_cqe c;
		int64_t used = pcmd_ring_used(&rc.sq);

		for (int64_t i = used; i >= 0 && i < pcmd_ring_size(&rc.sq); i++)
			pcmd_ring_put(&rc.sq, &bad);
		pcmd_ring_publish(&rc.sq);
		ring(rc.sq_efd);
		while (pcmd_ring_avail(&rc.cq) > 0) {
			pcmd_ring_get(&rc.cq, &c);
			n++;
		}
		if (pcmd_ring_release(&rc.cq))
			ring(rc.sq_efd);
	}
	printf("rejected %llu\n", (unsigned long long)n);
	return 0;
}

/* ---- limits: a user's listeners and flows ------------------------------------------------ */

/*
 * Up to @n endpoints, each listening on a name "lim-I-0" (one address per endpoint,
 * pcm_transport(3)) until pcmd refuses a listen; then dials from the first to the second's
 * lim-1-0, each accepted, until pcmd refuses one. "listeners K", "flows F"
 * and each refusal's text. Return: 0 when both were refused with -EDQUOT.
 */
static int mode_limits(long n)
{
	static struct pcm_tp_endpoint *eps[MAX_ENDPOINTS];
	long k = 0, listeners = 0, flows = 0;
	int rc = 0, frc = 0;

	for (; k < n && k < MAX_ENDPOINTS && rc == 0; k++) {
		char name[32];

		if (tp_open(sock, 1u << 20, &eps[k]) < 0)
			break;
		snprintf(name, sizeof(name), "lim-%ld-0", k);
		rc = pcm_tp_listen(eps[k], name);
		if (rc == 0)
			listeners++;
		else
			printf("listen refused %d %s\n", rc, pcm_tp_last_error());
	}
	printf("listeners %ld\n", listeners);
	/* eps[0] dials eps[1]'s lim-1-0: a flow at each end */
	while (k >= 2 && frc == 0 && flows < 4096) {
		struct pcm_tp_completion c;

		frc = pcm_tp_accept(eps[1], (uint64_t)flows);
		if (frc == 0)
			frc = pcm_tp_connect(eps[0], "lim-1-0", NULL, (uint64_t)flows);
		if (frc == 0 && (frc = tp_wait_op(eps[0], PCM_TP_OP_CONNECT, &c, 10000)) == 0)
			frc = c.status;
		if (frc == 0 && (frc = tp_wait_op(eps[1], PCM_TP_OP_ACCEPT, &c, 10000)) == 0)
			frc = c.status;
		if (frc == 0)
			flows += 2;
		else
			printf("flow refused %d %s\n", frc, pcm_tp_last_error());
	}
	printf("flows %ld\n", flows);
	while (k > 0)
		pcm_tp_endpoint_close(eps[--k]);
	return rc == -EDQUOT && frc == -EDQUOT ? 0 : 1;
}

/* ---- chaos: seeded hostile clients -------------------------------------------------------- */

/*
 * Action @i of seed @seed draws from its own sequence (seed, i): any range of
 * actions replays alone, which is what the script's shrinker relies on.
 */
struct chaos {
	uint64_t state;
	const char *victim; /* the victim's uid, as text: the names dialled "NAME@victim" */
	int devnull;
};

static uint64_t chaos_rand(struct chaos *ch, uint64_t below)
{
	uint64_t v;

	harness_fill(&v, sizeof(v), ch->state++);
	return below ? v % below : v;
}

/* A reply or a hangup, waited for at most @ms; its bytes are not looked at. */
static void chaos_drain(int fd, int ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	uint8_t b[PCMD_MSG_MAX_BYTES];

	while (poll(&pfd, 1, ms) > 0 && recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0)
		ms = 0;
}

/* A message of random bytes: no header, a header of the wrong length, version or type, or a
 * well-formed header over random fields; too short, exact, or too long. */
static size_t chaos_message(struct chaos *ch, uint8_t *m, size_t cap)
{
	static const size_t lens[] = {0, 1, sizeof(struct pcmd_msg_hdr) - 1,
				      sizeof(struct pcmd_msg_hdr), 64, 512, PCMD_MSG_MAX_BYTES,
				      PCMD_MSG_MAX_BYTES + 1};
	size_t len = chaos_rand(ch, 4) ? lens[chaos_rand(ch, 8)] : chaos_rand(ch, cap);
	struct pcmd_msg_hdr h;

	harness_fill(m, len, chaos_rand(ch, 0));
	if (len >= sizeof(h) && chaos_rand(ch, 4)) {
		harness_hdr(&h, (uint16_t)chaos_rand(ch, 20), len, (uint32_t)chaos_rand(ch, 0));
		if (chaos_rand(ch, 4) == 0)
			h.len = (uint32_t)chaos_rand(ch, 0);
		if (chaos_rand(ch, 8) == 0)
			h.version = (uint16_t)chaos_rand(ch, 0);
		if (chaos_rand(ch, 8) == 0)
			h.type |= PCMD_MSG_REPLY;
		memcpy(m, &h, sizeof(h));
	}
	return len;
}

/* Garbage, on a connection that said HELLO or not, each message with descriptors or not
 * (up to 253: more than pcmd's control buffer, MSG_CTRUNC), replies read or not. */
static void chaos_garbage(struct chaos *ch)
{
	static uint8_t m[PCMD_MSG_MAX_BYTES + 64];
	int fd = raw_connect();
	long msgs = 1 + (long)chaos_rand(ch, 8);

	if (fd < 0)
		return;
	if (chaos_rand(ch, 2))
		(void)harness_raw_hello(fd, chaos_rand(ch, 4) ? PCMD_ROLE_APP : PCMD_ROLE_ADMIN);
	for (long i = 0; i < msgs; i++) {
		size_t len = chaos_message(ch, m, sizeof(m));
		int n_fds = chaos_rand(ch, 2) ? 1 + (int)chaos_rand(ch, 253) : 0;

		if (n_fds && len >= sizeof(struct pcmd_req_empty)) {
			if (send_with_fds(fd, ch->devnull, n_fds, (uint32_t)i) < 0)
				break;
		} else if (send(fd, m, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EMSGSIZE) {
			break;
		}
		if (chaos_rand(ch, 2))
			chaos_drain(fd, 20);
	}
	close(fd);
}

/* Connections that never finish HELLO (some send half of one), held up to 200 ms. */
static void chaos_hold(struct chaos *ch)
{
	int fds[24];
	long n = 1 + (long)chaos_rand(ch, 24), k = 0;

	for (; k < n && (fds[k] = raw_connect()) >= 0; k++)
		if (chaos_rand(ch, 4) == 0) {
			struct pcmd_req_hello q = {0};

			harness_hdr(&q.hdr, PCMD_MSG_HELLO, sizeof(q), 1);
			(void)send(fds[k], &q, sizeof(q.hdr) / 2, MSG_NOSIGNAL | MSG_DONTWAIT);
		}
	usleep((useconds_t)chaos_rand(ch, 200) * 1000);
	while (k > 0)
		close(fds[--k]);
}

/* Squatting and dialling: the victim's names, shared ones, names with '@', control
 * characters or random bytes, with random listen flags; dials of the victim's names. */
static void chaos_squat(struct chaos *ch)
{
	static const char *const names[] = {"chaos-victim", "storage-0", "shared-db", "open-1",
					    "shared-", "x@y", "", "\x1b[31mred\x1b[0m\n,\"",
					    "chaos-victim@0"};
	struct pcm_tp_endpoint *ep;
	struct pcm_tp_completion c;
	char name[160], addr[200];

	if (tp_open(sock, 1u << 20, &ep) < 0)
		return;
	if (chaos_rand(ch, 4)) {
		snprintf(name, sizeof(name), "%s", names[chaos_rand(ch, 9)]);
	} else {
		harness_fill(name, sizeof(name) - 1, chaos_rand(ch, 0));
		name[chaos_rand(ch, sizeof(name))] = '\0';
	}
	(void)pcm_tp_listen_flags(ep, name, (uint32_t)chaos_rand(ch, 4));
	for (long i = 1 + (long)chaos_rand(ch, 3); i > 0; i--) {
		snprintf(addr, sizeof(addr), "%s@%s", names[chaos_rand(ch, 4)],
			 chaos_rand(ch, 2) ? ch->victim : "0");
		if (pcm_tp_connect(ep, chaos_rand(ch, 2) ? addr : name, NULL, (uint64_t)i) == 0)
			(void)tp_wait_op(ep, PCM_TP_OP_CONNECT, &c, 200);
	}
	if (chaos_rand(ch, 2))
		(void)pcm_tp_accept(ep, 1);
	pcm_tp_endpoint_close(ep);
}

/* A client of its own on the rings: random descriptors (any op, flags, conn id, offset,
 * length), sometimes a scribbled ring index, then gone without a word. */
static void chaos_ring(struct chaos *ch)
{
	struct raw_client rc = {.fd = -1, .sq_efd = -1};
	long n = 1 + (long)chaos_rand(ch, 64);

	if (raw_client_open(&rc) == 0) {
		for (long i = 0; i < n && pcmd_ring_used(&rc.sq) < pcmd_ring_size(&rc.sq); i++) {
			struct pcmd_sqe e;

			harness_fill(&e, sizeof(e), chaos_rand(ch, 0));
			e.op = (uint8_t)chaos_rand(ch, 6);
			if (chaos_rand(ch, 2))
				e.flags = e.reserved = 0;
			if (chaos_rand(ch, 2))
				e.len = chaos_rand(ch, 1u << 21);
			pcmd_ring_put(&rc.sq, &e);
		}
		pcmd_ring_publish(&rc.sq);
		if (chaos_rand(ch, 8) == 0)
			atomic_store(&rc.sq.ctl->tail.v, (uint32_t)chaos_rand(ch, 0));
		ring(rc.sq_efd);
		chaos_drain(rc.fd, (int)chaos_rand(ch, 50));
	}
	if (rc.sq_efd >= 0)
		close(rc.sq_efd);
	if (rc.fd >= 0)
		close(rc.fd);
}

/* Actions @first .. @first + @count - 1 of @seed, each one of the four kinds. */
static int mode_chaos(uint64_t seed, long first, long count, const char *victim)
{
	struct chaos ch = {.victim = victim, .devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)};
	long kinds[4] = {0};

	if (ch.devnull < 0 || first < 0 || count < 0)
		return usage();
	for (long i = first; i < first + count; i++) {
		uint64_t kind;

		ch.state = seed * 1000003u + (uint64_t)i * 7919u;
		kind = chaos_rand(&ch, 4);
		kinds[kind]++;
		if (kind == 0)
			chaos_garbage(&ch);
		else if (kind == 1)
			chaos_hold(&ch);
		else if (kind == 2)
			chaos_squat(&ch);
		else
			chaos_ring(&ch);
	}
	printf("chaos seed %llu actions %ld..%ld: garbage %ld hold %ld squat %ld ring %ld\n",
	       (unsigned long long)seed, first, first + count - 1, kinds[0], kinds[1], kinds[2],
	       kinds[3]);
	close(ch.devnull);
	return 0;
}

/* ---- cycle ------------------------------------------------------------------------------ */

/* Open, waiting out this user's clients that pcmd still reclaims (they hold its share). */
static int open_reclaimed(size_t bytes, struct pcm_tp_endpoint **ep)
{
	int rc;

	for (int i = 0; (rc = tp_open(sock, bytes, ep)) == -EDQUOT || rc == -EUSERS; i++) {
		if (i == 250)
			break;
		usleep(20000);
	}
	return rc;
}

static int mode_cycle(long rounds, long clients, long bytes)
{
	static struct pcm_tp_endpoint *eps[MAX_ENDPOINTS];

	if (clients < 2 || clients > MAX_ENDPOINTS)
		return usage();
	for (long r = 0; r < rounds; r++) {
		for (long i = 0; i < clients; i++)
			if (open_reclaimed((size_t)bytes, &eps[i]) < 0) {
				printf("round %ld: open %ld: %s\n", r, i, pcm_tp_last_error());
				return 1;
			}
		for (long i = 0; i + 1 < clients; i += 2) {
			struct pcm_tp_conn *a, *b;
			char name[32];

			snprintf(name, sizeof(name), "cycle-%ld", i);
			if (tp_pair(eps[i], eps[i + 1], name, NULL, &a, &b) < 0 ||
			    tp_exchange(eps[i], a, eps[i + 1], b, 65536, (uint64_t)r) < 0) {
				printf("round %ld: pair %ld: %s\n", r, i, pcm_tp_last_error());
				return 1;
			}
		}
		for (long i = 0; i < clients; i++)
			pcm_tp_endpoint_close(eps[i]);
	}
	printf("cycled %ld\n", rounds);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode;

	if (argc < 3)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	sock = argv[1];
	mode = argv[2];
	if (strcmp(mode, "open") == 0 && argc == 3)
		return mode_open();
	if (strcmp(mode, "fdflood") == 0 && argc == 7)
		return mode_fdflood(arg_long(argv[3]), arg_long(argv[4]), arg_long(argv[5]),
				    arg_long(argv[6]));
	if (strcmp(mode, "connflood") == 0 && argc == 5)
		return mode_connflood(arg_long(argv[3]), arg_long(argv[4]));
	if (strcmp(mode, "regions") == 0 && argc == 6)
		return mode_regions(arg_long(argv[3]), arg_long(argv[4]), arg_long(argv[5]));
	if (strcmp(mode, "serve") == 0 && argc == 6)
		return mode_serve(argv[3], arg_long(argv[4]), arg_long(argv[5]));
	if (strcmp(mode, "dial") == 0 && argc == 4)
		return mode_dial(argv[3]);
	if (strcmp(mode, "pair") == 0 && argc == 7)
		return mode_pair(argv[3], arg_long(argv[4]), arg_long(argv[5]), arg_long(argv[6]));
	if (strcmp(mode, "badflood") == 0 && argc == 4)
		return mode_badflood(arg_long(argv[3]));
	if (strcmp(mode, "limits") == 0 && argc == 4)
		return mode_limits(arg_long(argv[3]));
	if (strcmp(mode, "chaos") == 0 && argc == 7)
		return mode_chaos(strtoull(argv[3], NULL, 0), arg_long(argv[4]), arg_long(argv[5]),
				  argv[6]);
	if (strcmp(mode, "cycle") == 0 && argc == 6)
		return mode_cycle(arg_long(argv[3]), arg_long(argv[4]), arg_long(argv[5]));
	return usage();
}
