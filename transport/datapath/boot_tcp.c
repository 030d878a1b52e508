// SPDX-License-Identifier: MIT
/*
 * boot_tcp.c - the TCP bootstrap ("tcp", addresses "host:port"): how two
 * endpoints in different processes or hosts exchange their connection
 * blobs before a connection can bind (the verbs datapath's bootstrap).
 *
 * One short TCP connection per exchange: the dialer connects, sends one
 * request frame with its message, reads one answer frame and closes; the
 * listener reads the request, reports it (XP_BOOT_EV_INCOMING), writes the
 * answer that answer() gives it and closes. Everything is non-blocking and
 * driven by poll(): the bootstrap's fd is an epoll set (the listening
 * socket, every exchange's socket, a timer for the deadlines and an
 * eventfd for events not yet handed out), readable whenever poll() may
 * have something to do.
 *
 * Frame (big-endian), a 16-byte header and the message:
 *
 *     magic u32 = 0x70636d62 ("pcmb"), version u8 = 1, type u8 (1 request,
 *     2 answer), reserved u16 = 0, status u32 (answers: 0 or a positive
 *     errno below 4096; requests: 0), length u32 (<= XP_BOOT_MSG_MAX; 0
 *     when status is not 0)
 *
 * Everything read from a socket is untrusted: a header that fails a check
 * ends the exchange (the listener drops it silently and counts it; the
 * dialer reports -EPROTO), and nothing is allocated before the length is
 * known to be in range. Each exchange has a deadline (timeout_ns, default
 * 10 s) for each of its phases: connecting and sending the request, waiting
 * for the answer; reading the request, waiting for answer(), writing the
 * answer. A dial past it reports -ETIMEDOUT. At most MAX_PENDING_INCOMING (64)
 * incoming exchanges are open at once; more are closed at accept.
 *
 * Host names are resolved with getaddrinfo(), which may block on DNS;
 * numeric addresses ("10.0.2.15:7000", "[fe80::1%eth0]:7000") never do.
 * An empty host or "*" listens on every address.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "bytes.h"
#include "datapath.h"

#define FRAME_MAGIC 0x70636d62u
#define FRAME_VERSION 1
#define FRAME_REQUEST 1
#define FRAME_ANSWER 2
#define FRAME_HDR_BYTES 16
#define STATUS_MAX 4095

#define DEFAULT_TIMEOUT_NS (10ull * 1000 * 1000 * 1000)
#define LISTEN_BACKLOG 64
#define MAX_PENDING_INCOMING 64
#define EPOLL_BATCH 32

/* epoll data of the bootstrap's own fds; exchanges use their pointer. */
#define TAG_LISTEN 1
#define TAG_TIMER 2
#define TAG_PENDING 3

enum xchg_state {
	XS_CONNECTING = 1, /* dial: connect() in progress */
	XS_SEND,           /* dial: writing the request; incoming: writing the answer */
	XS_RECV_HDR,       /* reading a frame header */
	XS_RECV_BODY,      /* reading a frame's message */
	XS_WAIT_ANSWER,    /* incoming: reported, waiting for answer() */
	XS_DONE,           /* finished: its event is queued or it is being freed */
};

struct xchg {
	int fd;
	bool dial;
	uint8_t state;          /* enum xchg_state */
	bool queued;            /* on the event queue */
	uint64_t id;            /* incoming: the request id */
	uint64_t token;         /* dial: dial()'s token */
	uint64_t deadline_ns;
	int32_t status;         /* dial: the result to report */
	uint8_t hdr[FRAME_HDR_BYTES];
	uint32_t hdr_have;
	uint8_t *msg;           /* the frame's message, once its length checked out */
	uint32_t msg_len, msg_have;
	uint8_t *out;           /* the frame being written */
	uint32_t out_len, out_off;
	char peer[64];
	struct xchg *next;      /* all exchanges */
	struct xchg *qnext;     /* the event queue */
};

struct tcp_boot {
	struct xp_boot base;
	int epfd, tfd, efd, lfd;
	uint16_t port;
	uint64_t timeout_ns;
	uint64_t next_id;
	uint32_t n_incoming;
	struct xchg *all;
	struct xchg *qhead, *qtail;
	struct xchg *handed;    /* answered dials handed out by the last poll, freed at the next */
	uint64_t bad_frames;
	uint64_t refused_busy;
};

/* ---- small helpers ------------------------------------------------------------------------ */

static void sockaddr_name(const struct sockaddr_storage *ss, char *out, size_t n)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		snprintf(out, n, "%s:%u", host, port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		snprintf(out, n, "[%s]:%u", host, port);
	} else {
		snprintf(out, n, "?");
	}
}

/*
 * Split "host:port" or "[v6]:port" and resolve it. @passive: for listen (an
 * empty host or "*" means any address, port 0 an ephemeral one).
 */
static int resolve(const char *addr, bool passive, struct sockaddr_storage *ss, socklen_t *len,
		   struct pcm_diag *diag)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	char host[256], *end;
	const char *colon, *port_s;
	struct addrinfo *res = NULL;
	unsigned long port;
	int rc;

	if (!addr || !*addr || strlen(addr) >= sizeof(host))
		goto bad;
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');

		if (!close || close[1] != ':')
			goto bad;
		memcpy(host, addr + 1, (size_t)(close - addr - 1));
		host[close - addr - 1] = '\0';
		port_s = close + 2;
	} else {
		colon = strrchr(addr, ':');
		if (!colon || strchr(addr, ':') != colon)
			goto bad;
		memcpy(host, addr, (size_t)(colon - addr));
		host[colon - addr] = '\0';
		port_s = colon + 1;
	}
	errno = 0;
	port = strtoul(port_s, &end, 10);
	if (!*port_s || *end || errno || port > 65535 || (!passive && port == 0))
		goto bad;
	if (passive && (!host[0] || strcmp(host, "*") == 0)) {
		struct sockaddr_in6 *any = (struct sockaddr_in6 *)ss;

		memset(ss, 0, sizeof(*ss));
		any->sin6_family = AF_INET6;
		any->sin6_addr = in6addr_any;
		any->sin6_port = htons((uint16_t)port);
		*len = sizeof(*any);
		return 0;
	}
	if (passive)
		hints.ai_flags |= AI_PASSIVE;
	rc = getaddrinfo(host, port_s, &hints, &res);
	if (rc != 0 || !res || res->ai_addrlen > sizeof(*ss)) {
		snprintf(diag->msg, sizeof(diag->msg), "tcp bootstrap: '%s': cannot resolve '%s': %s",
			 addr, host, rc ? gai_strerror(rc) : "no address");
		if (res)
			freeaddrinfo(res);
		return -EHOSTUNREACH;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
bad:
	snprintf(diag->msg, sizeof(diag->msg),
		 "tcp bootstrap: '%s' is not an address: want host:port or [ipv6]:port%s",
		 addr ? addr : "(null)", passive ? " (port 0: any free port)" : " (port 1..65535)");
	return -EINVAL;
}

/* ---- the epoll set, deadlines and the event queue --------------------------------------------- */

static int watch(struct tcp_boot *t, struct xchg *x, uint32_t events, int op)
{
	struct epoll_event ev = { .events = events, .data.ptr = x };

	return epoll_ctl(t->epfd, op, x->fd, &ev) < 0 ? -errno : 0;
}

static void arm_timer(struct tcp_boot *t)
{
	uint64_t first = UINT64_MAX, now = xp_mono_ns();
	struct itimerspec its = { 0 };

	for (struct xchg *x = t->all; x; x = x->next)
		if (x->state != XS_DONE && x->deadline_ns < first)
			first = x->deadline_ns;
	if (first != UINT64_MAX) {
		uint64_t in_ns = first > now ? first - now : 1;

		its.it_value.tv_sec = (time_t)(in_ns / 1000000000ull);
		its.it_value.tv_nsec = (long)(in_ns % 1000000000ull);
	}
	timerfd_settime(t->tfd, 0, &its, NULL);
}

static void signal_pending(struct tcp_boot *t)
{
	uint64_t one = 1;

	if (write(t->efd, &one, sizeof(one)) < 0) {
		/* saturated: readable anyway */
	}
}

static void enqueue(struct tcp_boot *t, struct xchg *x)
{
	if (x->queued)
		return;
	x->queued = true;
	x->qnext = NULL;
	if (t->qtail)
		t->qtail->qnext = x;
	else
		t->qhead = x;
	t->qtail = x;
}

static void unlink_xchg(struct tcp_boot *t, struct xchg *x)
{
	for (struct xchg **p = &t->all; *p; p = &(*p)->next)
		if (*p == x) {
			*p = x->next;
			break;
		}
	if (x->queued) {
		struct xchg *prev = NULL;

		for (struct xchg *q = t->qhead; q; prev = q, q = q->qnext)
			if (q == x) {
				if (prev)
					prev->qnext = q->qnext;
				else
					t->qhead = q->qnext;
				if (t->qtail == q)
					t->qtail = prev;
				break;
			}
		x->queued = false;
	}
	if (!x->dial && t->n_incoming)
		t->n_incoming--;
}

static void close_socket(struct tcp_boot *t, struct xchg *x)
{
	if (x->fd >= 0) {
		epoll_ctl(t->epfd, EPOLL_CTL_DEL, x->fd, NULL);
		close(x->fd);
		x->fd = -1;
	}
}

static void free_xchg(struct xchg *x)
{
	free(x->msg);
	free(x->out);
	free(x);
}

static void drop_xchg(struct tcp_boot *t, struct xchg *x)
{
	close_socket(t, x);
	unlink_xchg(t, x);
	free_xchg(x);
}

/* A dial is over: close its socket and queue its ANSWERED event. */
static void dial_finish(struct tcp_boot *t, struct xchg *x, int status)
{
	close_socket(t, x);
	x->status = status;
	x->state = XS_DONE;
	enqueue(t, x);
}

/* An incoming exchange still on the event queue is over: poll() drops it there. */
static void incoming_abandon(struct tcp_boot *t, struct xchg *x)
{
	close_socket(t, x);
	x->state = XS_DONE;
}

/* ---- frames --------------------------------------------------------------------------------- */

static int frame_build(struct xchg *x, uint8_t type, int status, const void *msg, uint32_t len)
{
	uint8_t *f = malloc(FRAME_HDR_BYTES + (size_t)len);

	if (!f)
		return -ENOMEM;
	xp_put_be(f, FRAME_MAGIC, 4);
	f[4] = FRAME_VERSION;
	f[5] = type;
	f[6] = 0;
	f[7] = 0;
	xp_put_be(f + 8, (uint32_t)status, 4);
	xp_put_be(f + 12, len, 4);
	if (len)
		memcpy(f + FRAME_HDR_BYTES, msg, len);
	free(x->out);
	x->out = f;
	x->out_len = FRAME_HDR_BYTES + len;
	x->out_off = 0;
	return 0;
}

/*
 * Check a received header (untrusted) against the frame type this side
 * expects. Return: 0 and the message length and status, or -EPROTO.
 */
static int frame_check(const uint8_t *h, uint8_t want_type, uint32_t *len, uint32_t *status)
{
	*status = (uint32_t)xp_get_be(h + 8, 4);
	*len = (uint32_t)xp_get_be(h + 12, 4);
	if (xp_get_be(h, 4) != FRAME_MAGIC || h[4] != FRAME_VERSION || h[5] != want_type ||
	    h[6] || h[7] || *len > XP_BOOT_MSG_MAX || *status > STATUS_MAX ||
	    (want_type == FRAME_REQUEST && *status) || (*status && *len))
		return -EPROTO;
	return 0;
}

/* Write what is left of x->out. Return: 1 all written, 0 would block, -errno. */
static int flush_out(struct xchg *x)
{
	while (x->out_off < x->out_len) {
		ssize_t k = send(x->fd, x->out + x->out_off, x->out_len - x->out_off, MSG_NOSIGNAL);

		if (k < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		x->out_off += (uint32_t)k;
	}
	return 1;
}

/* Read into @buf up to @want; Return: 1 complete, 0 would block, -ECONNRESET at EOF, -errno. */
static int read_some(int fd, uint8_t *buf, uint32_t *have, uint32_t want)
{
	while (*have < want) {
		ssize_t k = recv(fd, buf + *have, want - *have, 0);

		if (k == 0)
			return -ECONNRESET;
		if (k < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		*have += (uint32_t)k;
	}
	return 1;
}

/*
 * Read one frame of @type. Return: 1 when it is complete (x->msg, x->msg_len,
 * and *status), 0 would block, -EPROTO for a bad header, -errno.
 */
static int read_frame(struct xchg *x, uint8_t type, uint32_t *status)
{
	int rc;

	if (x->state == XS_RECV_HDR) {
		rc = read_some(x->fd, x->hdr, &x->hdr_have, FRAME_HDR_BYTES);
		if (rc <= 0)
			return rc;
		rc = frame_check(x->hdr, type, &x->msg_len, status);
		if (rc < 0)
			return rc;
		x->msg = malloc(x->msg_len ? x->msg_len : 1);
		if (!x->msg)
			return -ENOMEM;
		x->msg_have = 0;
		x->state = XS_RECV_BODY;
	}
	*status = (uint32_t)xp_get_be(x->hdr + 8, 4);
	return read_some(x->fd, x->msg, &x->msg_have, x->msg_len);
}

/* ---- dials ---------------------------------------------------------------------------------- */

static void dial_step(struct tcp_boot *t, struct xchg *x, uint32_t events)
{
	uint32_t status;
	int rc;

	if (x->state == XS_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		if (getsockopt(x->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err) {
			dial_finish(t, x, -err);
			return;
		}
		x->state = XS_SEND;
		x->deadline_ns = xp_mono_ns() + t->timeout_ns;
	}
	if (x->state == XS_SEND) {
		rc = flush_out(x);
		if (rc < 0) {
			dial_finish(t, x, rc);
			return;
		}
		if (rc == 0) {
			watch(t, x, EPOLLOUT | EPOLLIN | EPOLLRDHUP, EPOLL_CTL_MOD);
			return;
		}
		x->state = XS_RECV_HDR;
		x->hdr_have = 0;
		watch(t, x, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_MOD);
	}
	rc = read_frame(x, FRAME_ANSWER, &status);
	if (rc == 0)
		return;
	if (rc == -EPROTO)
		t->bad_frames++;
	dial_finish(t, x, rc < 0 ? rc : -(int)status);
}

/* ---- incoming exchanges ---------------------------------------------------------------------- */

static void incoming_step(struct tcp_boot *t, struct xchg *x, uint32_t events)
{
	uint32_t status;
	int rc;

	if (x->state == XS_RECV_HDR || x->state == XS_RECV_BODY) {
		rc = read_frame(x, FRAME_REQUEST, &status);
		if (rc == 0)
			return;
		if (rc < 0) {
			if (rc == -EPROTO)
				t->bad_frames++;
			drop_xchg(t, x);
			return;
		}
		/* Reported; the dialer waits for our answer, nothing more to read. */
		x->state = XS_WAIT_ANSWER;
		x->deadline_ns = xp_mono_ns() + t->timeout_ns;
		watch(t, x, EPOLLRDHUP, EPOLL_CTL_MOD);
		enqueue(t, x);
		return;
	}
	if (x->state == XS_WAIT_ANSWER) {
		/* the dialer gave up: an answer() now is -ENOENT */
		if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
			if (!x->queued)
				drop_xchg(t, x);
			else
				incoming_abandon(t, x);
		}
		return;
	}
	if (x->state == XS_SEND) {
		rc = flush_out(x);
		if (rc == 0)
			return;
		drop_xchg(t, x); /* sent, or the dialer is gone: over either way */
	}
}

static void accept_all(struct tcp_boot *t)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(t->lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct xchg *x;

		if (fd < 0)
			return; /* EAGAIN, or a connection that went away before accept */
		if (t->n_incoming >= MAX_PENDING_INCOMING || !(x = calloc(1, sizeof(*x)))) {
			t->refused_busy++;
			close(fd);
			continue;
		}
		x->fd = fd;
		x->state = XS_RECV_HDR;
		x->id = t->next_id++;
		x->deadline_ns = xp_mono_ns() + t->timeout_ns;
		sockaddr_name(&ss, x->peer, sizeof(x->peer));
		if (watch(t, x, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_ADD) < 0) {
			close(fd);
			free(x);
			continue;
		}
		x->next = t->all;
		t->all = x;
		t->n_incoming++;
	}
}

static void expire(struct tcp_boot *t, uint64_t now)
{
	struct xchg *next;

	for (struct xchg *x = t->all; x; x = next) {
		next = x->next;
		if (x->state == XS_DONE || x->deadline_ns > now)
			continue;
		if (x->dial)
			dial_finish(t, x, -ETIMEDOUT);
		else if (!x->queued)
			drop_xchg(t, x);
		else
			incoming_abandon(t, x);
	}
}

/* ---- the ops ---------------------------------------------------------------------------------- */

static int add_own_fd(struct tcp_boot *t, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static void tcp_destroy(struct xp_boot *b)
{
	struct tcp_boot *t = (struct tcp_boot *)b;

	while (t->all)
		drop_xchg(t, t->all);
	while (t->handed) {
		struct xchg *x = t->handed;

		t->handed = x->qnext;
		free_xchg(x);
	}
	if (t->lfd >= 0)
		close(t->lfd);
	if (t->tfd >= 0)
		close(t->tfd);
	if (t->efd >= 0)
		close(t->efd);
	if (t->epfd >= 0)
		close(t->epfd);
	free(t);
}

static int tcp_create(struct xp_boot **out, struct pcm_diag *diag)
{
	struct tcp_boot *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return -ENOMEM;
	t->base.ops = &xp_boot_tcp_ops;
	t->lfd = -1;
	t->timeout_ns = DEFAULT_TIMEOUT_NS;
	t->next_id = 1;
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	t->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	t->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (t->epfd < 0 || t->tfd < 0 || t->efd < 0) {
		rc = -errno;
		goto err;
	}
	rc = add_own_fd(t, t->tfd, TAG_TIMER);
	if (rc == 0)
		rc = add_own_fd(t, t->efd, TAG_PENDING);
	if (rc < 0)
		goto err;
	*out = &t->base;
	return 0;
err:
	snprintf(diag->msg, sizeof(diag->msg), "tcp bootstrap: %s", strerror(-rc));
	tcp_destroy(&t->base);
	return rc;
}

static int tcp_listen(struct xp_boot *b, const char *addr, struct pcm_diag *diag)
{
	struct tcp_boot *t = (struct tcp_boot *)b;
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, zero = 0, fd, rc;

	if (t->lfd >= 0) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "tcp bootstrap: already listening on port %u", t->port);
		return -EALREADY;
	}
	rc = resolve(addr, true, &ss, &len, diag);
	if (rc < 0)
		return rc;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 && errno == EAFNOSUPPORT && ss.ss_family == AF_INET6 &&
	    IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr)) {
		/* no IPv6 here: "any" is IPv4's */
		struct sockaddr_in *any4 = (struct sockaddr_in *)&ss;
		uint16_t port = ((struct sockaddr_in6 *)&ss)->sin6_port;

		memset(&ss, 0, sizeof(ss));
		any4->sin_family = AF_INET;
		any4->sin_port = port;
		len = sizeof(*any4);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	}
	if (fd < 0) {
		rc = -errno;
		goto err;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6) /* "*" takes IPv4 too */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		rc = -errno;
		close(fd);
		goto err;
	}
	len = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &len);
	t->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						: ((struct sockaddr_in6 *)&ss)->sin6_port);
	t->lfd = fd;
	rc = add_own_fd(t, fd, TAG_LISTEN);
	if (rc < 0) {
		close(fd);
		t->lfd = -1;
		goto err;
	}
	return 0;
err:
	snprintf(diag->msg, sizeof(diag->msg), "tcp bootstrap: cannot listen on '%s': %s", addr,
		 strerror(-rc));
	return rc;
}

static int tcp_dial(struct xp_boot *b, const char *addr, const void *msg, uint32_t len,
		    uint64_t token, struct pcm_diag *diag)
{
	struct tcp_boot *t = (struct tcp_boot *)b;
	struct sockaddr_storage ss;
	struct xchg *x;
	socklen_t slen;
	int one = 1, rc;

	if (len > XP_BOOT_MSG_MAX || (len && !msg)) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "tcp bootstrap: a message of %u bytes (at most %u)", len, XP_BOOT_MSG_MAX);
		return -EINVAL;
	}
	rc = resolve(addr, false, &ss, &slen, diag);
	if (rc < 0)
		return rc;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->dial = true;
	x->token = token;
	snprintf(x->peer, sizeof(x->peer), "%s", addr);
	rc = frame_build(x, FRAME_REQUEST, 0, msg, len);
	if (rc < 0)
		goto err_free;
	x->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (x->fd < 0) {
		rc = -errno;
		goto err_free;
	}
	setsockopt(x->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	x->deadline_ns = xp_mono_ns() + t->timeout_ns;
	x->state = XS_CONNECTING;
	x->next = t->all;
	t->all = x;
	if (connect(x->fd, (struct sockaddr *)&ss, slen) < 0 && errno != EINPROGRESS) {
		/* refused at once (or unroutable): reported as the answer, like a late refusal */
		dial_finish(t, x, -errno);
		signal_pending(t);
		return 0;
	}
	rc = watch(t, x, EPOLLOUT | EPOLLRDHUP, EPOLL_CTL_ADD);
	if (rc < 0) {
		unlink_xchg(t, x);
		close(x->fd);
		goto err_free;
	}
	arm_timer(t);
	return 0;
err_free:
	snprintf(diag->msg, sizeof(diag->msg), "tcp bootstrap: dial '%s': %s", addr, strerror(-rc));
	free_xchg(x);
	return rc;
}

static int tcp_answer(struct xp_boot *b, uint64_t req, int status, const void *msg, uint32_t len)
{
	struct tcp_boot *t = (struct tcp_boot *)b;
	struct xchg *x;
	int rc;

	if (len > XP_BOOT_MSG_MAX || status > 0 || status < -STATUS_MAX || (len && !msg))
		return -EINVAL;
	for (x = t->all; x; x = x->next)
		if (!x->dial && x->id == req)
			break;
	if (!x || x->state != XS_WAIT_ANSWER || x->queued)
		return -ENOENT; /* no such request, the dialer gave up, or not handed out yet */
	rc = frame_build(x, FRAME_ANSWER, -status, status ? NULL : msg, status ? 0 : len);
	if (rc < 0)
		return rc;
	free(x->msg);
	x->msg = NULL;
	x->state = XS_SEND;
	x->deadline_ns = xp_mono_ns() + t->timeout_ns;
	rc = flush_out(x);
	if (rc != 0) {
		drop_xchg(t, x); /* all sent (or the dialer is gone) */
		return 0;
	}
	watch(t, x, EPOLLOUT | EPOLLRDHUP, EPOLL_CTL_MOD);
	arm_timer(t);
	return 0;
}

static void handle_ready(struct tcp_boot *t)
{
	struct epoll_event evs[EPOLL_BATCH];
	int n = epoll_wait(t->epfd, evs, EPOLL_BATCH, 0);
	uint64_t v;

	for (int i = 0; i < n; i++) {
		uint64_t tag = evs[i].data.u64;

		if (tag == TAG_LISTEN) {
			accept_all(t);
		} else if (tag == TAG_TIMER) {
			if (read(t->tfd, &v, sizeof(v)) < 0) {
				/* not expired after all */
			}
		} else if (tag == TAG_PENDING) {
			if (read(t->efd, &v, sizeof(v)) < 0) {
				/* already read */
			}
		} else {
			struct xchg *x = evs[i].data.ptr;

			if (x->dial)
				dial_step(t, x, evs[i].events);
			else
				incoming_step(t, x, evs[i].events);
		}
	}
}

static void fill_event(struct xchg *x, struct xp_boot_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	snprintf(ev->from, sizeof(ev->from), "%s", x->peer);
	if (x->dial) {
		ev->kind = XP_BOOT_EV_ANSWERED;
		ev->token = x->token;
		ev->status = x->status;
		if (x->status == 0) {
			ev->msg = x->msg;
			ev->len = x->msg_len;
		}
	} else {
		ev->kind = XP_BOOT_EV_INCOMING;
		ev->req = x->id;
		ev->msg = x->msg;
		ev->len = x->msg_len;
	}
}

static int tcp_poll(struct xp_boot *b, struct xp_boot_event *ev, int max)
{
	struct tcp_boot *t = (struct tcp_boot *)b;
	int n = 0;

	while (t->handed) {
		struct xchg *x = t->handed;

		t->handed = x->qnext;
		free_xchg(x);
	}
	/* Incoming exchanges whose dialer left while they were queued. */
	for (struct xchg *x = t->all, *next; x; x = next) {
		next = x->next;
		if (!x->dial && x->state == XS_DONE && !x->queued)
			drop_xchg(t, x);
	}
	handle_ready(t);
	expire(t, xp_mono_ns());
	while (n < max && t->qhead) {
		struct xchg *x = t->qhead;

		t->qhead = x->qnext;
		if (!t->qhead)
			t->qtail = NULL;
		x->queued = false;
		if (!x->dial && x->state == XS_DONE) {
			drop_xchg(t, x); /* the dialer left before we reported it */
			continue;
		}
		fill_event(x, &ev[n++]);
		if (x->dial) {
			unlink_xchg(t, x);
			x->qnext = t->handed;
			t->handed = x;
		}
	}
	if (t->qhead)
		signal_pending(t);
	arm_timer(t);
	return n;
}

static int tcp_fd(struct xp_boot *b)
{
	return ((struct tcp_boot *)b)->epfd;
}

int xp_boot_tcp_port(struct xp_boot *b)
{
	struct tcp_boot *t = (struct tcp_boot *)b;

	if (b->ops != &xp_boot_tcp_ops)
		return -EINVAL;
	return t->lfd >= 0 ? t->port : -ENOTCONN;
}

int xp_boot_tcp_set_timeout(struct xp_boot *b, uint64_t timeout_ns)
{
	if (b->ops != &xp_boot_tcp_ops || timeout_ns == 0)
		return -EINVAL;
	((struct tcp_boot *)b)->timeout_ns = timeout_ns;
	return 0;
}

void xp_boot_tcp_counters(struct xp_boot *b, uint64_t *bad_frames, uint64_t *refused_busy)
{
	struct tcp_boot *t = (struct tcp_boot *)b;

	*bad_frames = b->ops == &xp_boot_tcp_ops ? t->bad_frames : 0;
	*refused_busy = b->ops == &xp_boot_tcp_ops ? t->refused_busy : 0;
}

const struct xp_boot_ops xp_boot_tcp_ops = {
	.name = "tcp",
	.create = tcp_create,
	.destroy = tcp_destroy,
	.listen = tcp_listen,
	.dial = tcp_dial,
	.answer = tcp_answer,
	.poll = tcp_poll,
	.fd = tcp_fd,
};
