// SPDX-License-Identifier: MIT
/*
 * daemon_client.c - libpcmtransport's daemon backend (PCM_TP_BACKEND_DAEMON):
 * the public API of pcm/transport.h over a running pcmd.
 *
 * Opening an endpoint connects to pcmd's control socket (SOCK_SEQPACKET,
 * $PCMD_SOCKET or cfg->daemon_socket or /run/pcmd/pcmd.sock), says HELLO,
 * asks for a region (REGION) and maps the sealed memfd it gets back.
 * Listen, connect, accept, close and policy changes are control requests,
 * one at a time under a lock; sends and receives are descriptors on the
 * region's submission ring, and their completions come back on its
 * completion ring (protocol in pcmd-abi/pcmd_proto.h, layout in pcmd-abi/pcmd_region.h).
 * pcm_tp_wait() sleeps on the completion doorbell (an eventfd) only after
 * telling pcmd it sleeps, so a busy poller costs pcmd no doorbell writes.
 *
 * Buffers must lie in the region: pcm_tp_mem_alloc() hands out pieces of it,
 * and pcm_tp_mr_reg() accepts only ranges inside it (-EINVAL otherwise).
 * A descriptor's cookie is the frontend's slot of the post, which pcmd
 * echoes in its completion. The limits (pcm_tp_endpoint_limits()) are
 * pcmd's: the client's outstanding descriptors (limits.outstanding_per_client,
 * which pcmd's engines queue on one connection too) and its longest message;
 * within them pcmd takes every submission (a full submission ring is -EAGAIN
 * at once).
 *
 * A dead pcmd: its socket hangs up. A poll that finds the completion ring
 * empty looks at the socket at most every DEAD_CHECK_NS (read off the
 * coarse clock, a vDSO call: no syscall per poll); wait sleeps on the socket
 * too. Once the socket hung up and the ring is empty, poll and wait say
 * -ESHUTDOWN: every completion pcmd wrote has been handed over, and the
 * frontend completes the rest (tp_comp.h). pcmd's SHUTDOWN notice alone
 * changes nothing: pcmd still completes what it took, then hangs up.
 *
 * It is one backend of libpcmtransport's table (backend.h): api.c chooses
 * it (PCM_TP_BACKEND_DAEMON, or AUTO by $PCM_TRANSPORT); the error texts are
 * tp_error.c's; the in-process backend is inproc.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "pcmd_proto.h"
#include "pcmd_region.h"
#include "tp_error.h"
#include "xp_range.h"

#define DEFAULT_REGION_BYTES (64ull << 20)
#define RPC_TIMEOUT_MS 10000
#define ALLOC_ALIGN 64u
#define DEAD_CHECK_NS 10000000ull /* a busy poller looks at pcmd's socket this often */
#define SQ_TAKEN_WAIT_NS 1000000000ull

struct dc_conn {
	struct tp_conn base;
	struct dc_ep *ep;
	uint32_t id;
	struct dc_conn *prev, *next; /* the endpoint's, for its close */
};

struct dc_region {
	struct tp_region base;
	bool owned; /* pcm_tp_mem_alloc()'s: its span is freed with it */
};

/* A piece of the data area handed out by pcm_tp_mem_alloc(). */
struct span {
	uint64_t off, len;
};

struct dc_ep {
	struct pcm_tp_endpoint pub;
	int sock;
	int memfd, sq_efd, cq_efd;
	uint8_t *base;
	uint8_t *data;
	struct pcmd_region_layout lay;
	struct pcmd_ring sq; /* we produce */
	struct pcmd_ring cq; /* we consume */
	uint32_t seq;
	uint32_t client_id;
	uint32_t max_flows;
	uint32_t max_outstanding;
	uint64_t max_message_bytes;
	_Atomic bool gone;    /* pcmd's socket hung up: nothing more will come */
	uint64_t next_check_ns; /* the poller's next look at the socket */
	char default_policy[PCMD_POLICY_MAX]; /* cfg->policy: connects that name none */
	_Alignas(8) uint8_t rbuf[PCMD_MSG_MAX_BYTES]; /* control replies, under ctl_lock */

	pthread_mutex_t ctl_lock;   /* one control request at a time */
	pthread_mutex_t sq_lock;    /* submissions */
	pthread_mutex_t state_lock; /* conns, allocator, the completion ring */

	struct dc_conn *conns;   /* every connection not yet freed */
	struct span *used;	 /* allocations, sorted by offset */
	uint32_t n_used, cap_used;
};

/* ---- control requests ------------------------------------------------------------------ */

static void fill_hdr(struct dc_ep *ep, struct pcmd_msg_hdr *h, uint16_t type, size_t len)
{
	h->magic = PCMD_PROTO_MAGIC;
	h->version = PCMD_PROTO_VERSION;
	h->type = type;
	h->len = (uint32_t)len;
	h->seq = ++ep->seq;
}

static void close_fds(const struct msghdr *m)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR((struct msghdr *)m, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			int fds[8];

			memcpy(fds, CMSG_DATA(cm), (n > 8 ? 8 : n) * sizeof(int));
			for (size_t i = 0; i < n && i < 8; i++)
				close(fds[i]);
		}
	}
}

/* Take the fds of a REGION reply. Return: how many were found. */
static int take_fds(const struct msghdr *m, int *fds, int want)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR((struct msghdr *)m, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int) * (size_t)want)) {
			memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)want);
			return want;
		}
	}
	close_fds(m);
	return 0;
}

/* A notice (pcmd stops, or drops us): its text; the hang-up that follows ends the endpoint. */
static void note_notice(struct dc_ep *ep, const uint8_t *buf, ssize_t n)
{
	const struct pcmd_notice *no = (const void *)buf;

	(void)ep;
	if ((size_t)n < sizeof(*no))
		return;
	pcm_tp_set_error(no->status, "pcmd: %.*s", PCMD_ERRTEXT_MAX - 1, no->text);
}

/* pcmd's socket hung up. */
static int hung_up(struct dc_ep *ep)
{
	atomic_store(&ep->gone, true);
	return pcm_tp_set_error(-ESHUTDOWN, "pcmd closed its socket (it stopped or died)");
}

static ssize_t recv_one(struct dc_ep *ep, uint32_t seq, uint16_t type, int *fds,
			int want_fds, void *ctlbuf);

/*
 * After ECONNRESET: pcmd refused this client outright and closed its end
 * before reading all this client sent. The kernel reports the reset first,
 * once; the refusal pcmd sent before closing may still wait behind it, and
 * says why (pcm_tp_last_error()) where ECONNRESET alone would not. Return:
 * recvmsg()'s, with errno ECONNRESET when nothing waits.
 */
static ssize_t read_after_reset(struct dc_ep *ep, struct msghdr *m)
{
	ssize_t n = recvmsg(ep->sock, m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

	if (n <= 0)
		errno = ECONNRESET;
	return n <= 0 ? -1 : n;
}

/* Receive the reply to request @seq (skipping notices). Return: its length or -errno. */
static ssize_t recv_reply(struct dc_ep *ep, uint32_t seq, uint16_t type, void *buf,
			  size_t cap, int *fds, int want_fds)
{
	union {
		struct cmsghdr align;
		uint8_t b[CMSG_SPACE(sizeof(int) * 8)];
	} ctl;
	ssize_t n = recv_one(ep, seq, type, fds, want_fds, &ctl);

	if (n > 0)
		memcpy(buf, ep->rbuf, (size_t)n < cap ? (size_t)n : cap);
	return n;
}

/* Receive into ep->rbuf (any reply fits: an error is larger than most). */
static ssize_t recv_one(struct dc_ep *ep, uint32_t seq, uint16_t type, int *fds,
			int want_fds, void *ctlbuf)
{
	uint8_t *buf = ep->rbuf;
	size_t cap = sizeof(ep->rbuf);

	for (;;) {
		struct pollfd pfd = {.fd = ep->sock, .events = POLLIN};
		struct iovec iov = {buf, cap};
		struct msghdr m = {.msg_iov = &iov,
				   .msg_iovlen = 1,
				   .msg_control = ctlbuf,
				   .msg_controllen = CMSG_SPACE(sizeof(int) * 8)};
		const struct pcmd_reply_status *st = (const void *)buf;
		ssize_t n;
		int rc = poll(&pfd, 1, RPC_TIMEOUT_MS);

		if (rc == 0)
			return pcm_tp_set_error(-ETIMEDOUT, "pcmd did not answer within %d ms",
					 RPC_TIMEOUT_MS);
		if (rc < 0 && errno == EINTR)
			continue;
		n = recvmsg(ep->sock, &m, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == ECONNRESET)
			n = read_after_reset(ep, &m);
		if (n == 0)
			return hung_up(ep);
		if (n < 0)
			return pcm_tp_set_error(-errno, "receiving from pcmd: %s", strerror(errno));
		if ((size_t)n >= sizeof(struct pcmd_msg_hdr) && st->hdr.type == PCMD_MSG_NOTICE) {
			close_fds(&m);
			note_notice(ep, buf, n);
			continue;
		}
		if ((size_t)n < sizeof(*st) || st->hdr.magic != PCMD_PROTO_MAGIC ||
		    st->hdr.len != (uint32_t)n || !(st->hdr.type & PCMD_MSG_REPLY)) {
			close_fds(&m);
			return pcm_tp_set_error(-EPROTO, "pcmd sent a malformed reply");
		}
		/* A refusal at accept time answers a HELLO that had no seq yet. */
		if (st->hdr.seq != seq && !(st->status < 0 && st->hdr.seq == 0)) {
			close_fds(&m);
			continue;
		}
		if (st->status < 0) {
			const struct pcmd_reply_error *e = (const void *)buf;

			close_fds(&m);
			if ((size_t)n >= sizeof(*e))
				return pcm_tp_set_error(st->status, "pcmd: %.*s", PCMD_ERRTEXT_MAX - 1,
						 e->text);
			return pcm_tp_set_error(st->status, "pcmd refused the request");
		}
		if ((st->hdr.type & ~PCMD_MSG_REPLY) != type)
			return pcm_tp_set_error(-EPROTO, "pcmd answered another request");
		if (want_fds && take_fds(&m, fds, want_fds) != want_fds)
			return pcm_tp_set_error(-EPROTO, "pcmd's reply lacks its file descriptors");
		if (!want_fds)
			close_fds(&m);
		return n;
	}
}

/**
 * rpc() - one control request and its reply.
 * @ep: the endpoint.
 * @req: the request (header filled here).
 * @req_len: its size.
 * @rep: reply buffer.
 * @rep_len: the reply size expected.
 * @fds: descriptors of a REGION reply.
 * @want_fds: their count, else 0.
 *
 * Return: 0, or -errno with pcm_tp_last_error() saying why.
 */
static int rpc(struct dc_ep *ep, void *req, size_t req_len, void *rep, size_t rep_len,
	       int *fds, int want_fds)
{
	struct pcmd_msg_hdr *h = req;
	uint16_t type = h->type;
	ssize_t n;

	if (atomic_load(&ep->gone))
		return pcm_tp_set_error(-ESHUTDOWN, "pcmd is gone: close the endpoint, and open a "
						    "new one once pcmd runs again");
	pthread_mutex_lock(&ep->ctl_lock);
	fill_hdr(ep, h, type, req_len);
	/* A refused peer may already be gone: its reason still waits in the socket. */
	if (send(ep->sock, req, req_len, MSG_NOSIGNAL) < 0 && errno != EPIPE &&
	    errno != ECONNRESET) {
		n = pcm_tp_set_error(-errno, "sending to pcmd: %s", strerror(errno));
		goto out;
	}
	n = recv_reply(ep, h->seq, type, rep, rep_len, fds, want_fds);
	if (n >= 0 && (size_t)n != rep_len)
		n = pcm_tp_set_error(-EPROTO, "pcmd's reply has %zd bytes, expected %zu", n, rep_len);
out:
	pthread_mutex_unlock(&ep->ctl_lock);
	return n < 0 ? (int)n : 0;
}

/* ---- endpoint -------------------------------------------------------------------------- */

static int connect_socket(struct dc_ep *ep, const struct pcm_tp_config *cfg)
{
	const char *path = cfg && cfg->daemon_socket ? cfg->daemon_socket : getenv("PCMD_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	if (!path)
		path = PCMD_DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path))
		return pcm_tp_set_error(-ENAMETOOLONG, "socket path '%s' is too long", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ep->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (ep->sock < 0)
		return pcm_tp_set_error(-errno, "socket: %s", strerror(errno));
	if (connect(ep->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return pcm_tp_set_error(-errno,
				 "cannot reach pcmd at %s: %s (is pcmd running? may you "
				 "use its socket?)",
				 path, strerror(errno));
	return 0;
}

static int say_hello(struct dc_ep *ep)
{
	struct pcmd_req_hello q = {.hdr.type = PCMD_MSG_HELLO};
	struct pcmd_rep_hello p;
	int rc;

	q.version_min = PCMD_PROTO_VERSION;
	q.version_max = PCMD_PROTO_VERSION;
	q.role = PCMD_ROLE_APP;
	snprintf(q.name, sizeof(q.name), "pid %d", (int)getpid());
	rc = rpc(ep, &q, sizeof(q), &p, sizeof(p), NULL, 0);
	if (rc < 0)
		return rc;
	if (p.max_flows == 0 || p.max_flows > 65535)
		return pcm_tp_set_error(-EPROTO, "pcmd announced %u flows", p.max_flows);
	if (p.max_outstanding == 0)
		return pcm_tp_set_error(-EPROTO, "pcmd announced 0 outstanding descriptors");
	ep->client_id = p.client_id;
	ep->max_flows = p.max_flows;
	ep->max_outstanding = p.max_outstanding;
	ep->max_message_bytes = p.max_message_bytes;
	return 0;
}

/* The daemon's layout must be the one both sides compute, and fit the memfd. */
static int check_layout(struct dc_ep *ep, const struct pcmd_rep_region *p)
{
	struct pcmd_region_layout lay;
	const struct pcmd_region_hdr *h;

	if (pcmd_region_layout_compute(p->lay.data_bytes, p->lay.sq_entries, p->lay.cq_entries,
				       &lay) < 0 ||
	    memcmp(&lay, &p->lay, sizeof(lay)) != 0)
		return pcm_tp_set_error(-EPROTO, "pcmd's region layout does not match this library's");
	ep->lay = lay;
	ep->base = mmap(NULL, lay.region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ep->memfd, 0);
	if (ep->base == MAP_FAILED) {
		ep->base = NULL;
		return pcm_tp_set_error(-errno, "mapping the region: %s", strerror(errno));
	}
	h = (const struct pcmd_region_hdr *)ep->base;
	if (h->magic != PCMD_REGION_MAGIC || h->version != PCMD_REGION_VERSION ||
	    memcmp(&h->lay, &lay, sizeof(lay)) != 0)
		return pcm_tp_set_error(-EPROTO, "the region's header is not pcmd's");
	ep->data = ep->base + lay.data_off;
	pcmd_ring_init(&ep->sq, &((struct pcmd_region_hdr *)ep->base)->sq, ep->base + lay.sq_off,
		       lay.sq_entries, sizeof(struct pcmd_sqe));
	pcmd_ring_init(&ep->cq, &((struct pcmd_region_hdr *)ep->base)->cq, ep->base + lay.cq_off,
		       lay.cq_entries, sizeof(struct pcmd_cqe));
	return 0;
}

static int map_region(struct dc_ep *ep, const struct pcm_tp_config *cfg)
{
	struct pcmd_req_region q = {.hdr.type = PCMD_MSG_REGION};
	struct pcmd_rep_region p;
	const char *host = getenv("PCM_TP_DAEMON_HOST");
	int fds[PCMD_REGION_FDS], rc;

	q.data_bytes =
	    cfg && cfg->daemon_region_bytes ? cfg->daemon_region_bytes : DEFAULT_REGION_BYTES;
	/* pcmd on its softnic fabric: the emulated host to attach as ("" the first free one) */
	if (host && strlen(host) >= sizeof(q.host))
		return pcm_tp_set_error(-EINVAL, "$PCM_TP_DAEMON_HOST is longer than %zu bytes",
					sizeof(q.host) - 1);
	if (host)
		memcpy(q.host, host, strlen(host) + 1);
	rc = rpc(ep, &q, sizeof(q), &p, sizeof(p), fds, PCMD_REGION_FDS);
	if (rc < 0)
		return rc;
	ep->memfd = fds[0];
	ep->sq_efd = fds[1];
	ep->cq_efd = fds[2];
	return check_layout(ep, &p);
}

static void endpoint_free(struct dc_ep *ep)
{
	if (ep->sock >= 0)
		close(ep->sock);
	if (ep->base)
		munmap(ep->base, ep->lay.region_bytes);
	if (ep->memfd >= 0)
		close(ep->memfd);
	if (ep->sq_efd >= 0)
		close(ep->sq_efd);
	if (ep->cq_efd >= 0)
		close(ep->cq_efd);
	while (ep->conns) {
		struct dc_conn *c = ep->conns;

		ep->conns = c->next;
		free(c);
	}
	while (ep->pub.regions) {
		struct tp_region *r = ep->pub.regions;

		ep->pub.regions = r->next;
		free(r);
	}
	free(ep->used);
	pthread_mutex_destroy(&ep->ctl_lock);
	pthread_mutex_destroy(&ep->sq_lock);
	pthread_mutex_destroy(&ep->state_lock);
	free(ep);
}

static int dc_endpoint_open(const struct pcm_tp_config *cfg, struct dc_ep **out)
{
	struct dc_ep *ep;
	int rc;

	if (cfg->policy && strlen(cfg->policy) >= PCMD_POLICY_MAX)
		return pcm_tp_set_error(-EINVAL, "policy name longer than %d bytes",
					PCMD_POLICY_MAX - 1);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return pcm_tp_set_error(-ENOMEM, "out of memory for the endpoint");
	ep->pub.ops = &pcm_tp_daemon_ops;
	ep->sock = ep->memfd = ep->sq_efd = ep->cq_efd = -1;
	if (cfg->policy)
		snprintf(ep->default_policy, sizeof(ep->default_policy), "%s", cfg->policy);
	pthread_mutex_init(&ep->ctl_lock, NULL);
	pthread_mutex_init(&ep->sq_lock, NULL);
	pthread_mutex_init(&ep->state_lock, NULL);
	rc = connect_socket(ep, cfg);
	if (rc == 0)
		rc = say_hello(ep);
	if (rc == 0)
		rc = map_region(ep, cfg);
	if (rc < 0) {
		endpoint_free(ep);
		return rc;
	}
	*out = ep;
	return 0;
}

static void dc_endpoint_close(struct dc_ep *ep)
{
	/* pcmd sees the hang-up and reclaims every flow and the region. */
	if (ep)
		endpoint_free(ep);
}

static void dc_limits(struct dc_ep *ep, struct pcm_tp_limits *out)
{
	/* pcmd takes as many as it reserves completions for; its engines queue them all on
	 * one connection (pcmd.conf(5), limits.outstanding_per_client); */
	uint32_t n = ep->max_outstanding;

	/* and never more than the submission ring holds: a full ring is then never met */
	if (n > ep->lay.cq_entries)
		n = ep->lay.cq_entries;
	if (n > ep->lay.sq_entries)
		n = ep->lay.sq_entries;

	*out = (struct pcm_tp_limits){.sends_per_conn = n,
				      .recvs_per_conn = n,
				      .posts_per_endpoint = n,
				      .max_message_bytes = ep->max_message_bytes};
}

/* ---- connections ----------------------------------------------------------------------- */

/*
 * A policy as pcmd takes it: a name it has. A .so path is a file pcmd would
 * load, which a connection may not name (pcmd's rule, said here before the
 * path is cut to the wire's size).
 */
static int wire_policy(const char *name, char *w, size_t cap)
{
	size_t n = name ? strlen(name) : 0;

	if (!name)
		return 0;
	if (strchr(name, '/') || (n > 3 && strcmp(name + n - 3, ".so") == 0))
		return pcm_tp_set_error(-EPERM,
					"policy '%s': in daemon mode a connection names a policy "
					"pcmd has, never a file, admins included: load it first "
					"(`pcmctl policies load PATH`, an admin's operation), then "
					"name the policy it loaded",
					name);
	if (n >= cap)
		return pcm_tp_set_error(-ENOENT,
					"policy '%.40s...': pcmd has no policy of that name (its "
					"names are at most %zu bytes)",
					name, cap - 1);
	memcpy(w, name, n + 1);
	return 0;
}

static int opts_to_wire(const struct dc_ep *ep, const struct pcm_tp_conn_opts *o,
			struct pcmd_flow_opts *w)
{
	const char *cc = o && o->policy ? o->policy : ep->default_policy[0] ? ep->default_policy
									    : NULL;
	int rc;

	memset(w, 0, sizeof(*w));
	w->mode = o ? (uint32_t)o->mode : PCMD_SHELL_DEFAULT;
	rc = wire_policy(cc, w->policy, sizeof(w->policy));
	if (rc == 0 && o)
		rc = wire_policy(o->lb_policy, w->lb_policy, sizeof(w->lb_policy));
	if (o) {
		w->paths = o->paths;
		w->reliable_connected = o->reliable_connected ? 1 : 0;
		w->no_progress_ms = o->no_progress_ms;
	}
	return rc;
}

static int dc_listen(struct dc_ep *ep, const char *addr, uint32_t flags)
{
	struct pcmd_req_listen q = {.hdr.type = PCMD_MSG_LISTEN};
	struct pcmd_rep_listen p;

	snprintf(q.addr, sizeof(q.addr), "%s", addr);
	q.flags = flags & PCM_TP_LISTEN_ANY_USER ? PCMD_LISTEN_ANY_USER : 0;
	return rpc(ep, &q, sizeof(q), &p, sizeof(p), NULL, 0);
}

/* A new conn for an id pcmd gave. Caller holds state_lock. */
static struct dc_conn *conn_new(struct dc_ep *ep, uint32_t id)
{
	struct dc_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->base.ep = &ep->pub;
	c->ep = ep;
	c->id = id;
	c->next = ep->conns;
	if (ep->conns)
		ep->conns->prev = c;
	ep->conns = c;
	return c;
}

static void dc_conn_free(struct dc_conn *c)
{
	struct dc_ep *ep = c->ep;

	pthread_mutex_lock(&ep->state_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		ep->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&ep->state_lock);
	free(c);
}

static int dc_connect(struct dc_ep *ep, const char *addr, const struct pcm_tp_conn_opts *o,
		      uint64_t slot, struct dc_conn **out)
{
	struct pcmd_req_connect q = {.hdr.type = PCMD_MSG_CONNECT};
	struct pcmd_rep_conn p;
	int rc = opts_to_wire(ep, o, &q.opts);

	if (rc < 0)
		return rc;
	snprintf(q.addr, sizeof(q.addr), "%s", addr);
	q.cookie = slot;
	rc = rpc(ep, &q, sizeof(q), &p, sizeof(p), NULL, 0);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&ep->state_lock);
	*out = conn_new(ep, p.conn_id);
	pthread_mutex_unlock(&ep->state_lock);
	/* pcmd's flow is reclaimed with the endpoint; its CONNECT completion finds no conn */
	return *out ? 0 : pcm_tp_set_error(-ENOMEM, "connect: out of memory");
}

static int dc_accept(struct dc_ep *ep, uint64_t slot)
{
	struct pcmd_req_accept q = {.hdr.type = PCMD_MSG_ACCEPT};
	struct pcmd_reply_status p;

	q.cookie = slot;
	return rpc(ep, &q, sizeof(q), &p, sizeof(p), NULL, 0);
}

/*
 * Wait until pcmd has taken every submission published so far (at most
 * SQ_TAKEN_WAIT_NS: it takes them at once, having a completion slot for
 * each). A close then follows the posts before it, as in process: they end
 * with -ECONNABORTED, not as posts on a connection pcmd no longer has.
 */
static void sq_taken(struct dc_ep *ep)
{
	struct timespec ts;
	uint64_t until = 0, now;
	uint32_t tail;

	pthread_mutex_lock(&ep->sq_lock);
	tail = ep->sq.local;
	pthread_mutex_unlock(&ep->sq_lock);
	while ((int32_t)(atomic_load_explicit(&ep->sq.ctl->head.v, memory_order_acquire) - tail) <
		   0 &&
	       !atomic_load(&ep->gone)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		if (!until)
			until = now + SQ_TAKEN_WAIT_NS;
		else if (now > until)
			return;
		sched_yield();
	}
}

static int dc_conn_close(struct dc_conn *c)
{
	struct pcmd_req_close q = {.hdr.type = PCMD_MSG_CLOSE};
	struct pcmd_reply_status p;
	int rc;

	sq_taken(c->ep);
	q.conn_id = c->id;
	q.flags = PCMD_CLOSE_ABORT;
	rc = rpc(c->ep, &q, sizeof(q), &p, sizeof(p), NULL, 0);
	/* pcmd completes what it took with -ECONNABORTED; gone, or a flow it no longer
	 * has, leaves nothing to wait for either */
	if (rc == 0 || rc == -ESHUTDOWN || rc == -EALREADY || rc == -EBADF || rc == -ENOTCONN) {
		atomic_store(&c->base.released, true);
		return 0;
	}
	return rc;
}

static int dc_conn_set_policy(struct dc_conn *c, const struct pcm_tp_conn_opts *o)
{
	struct pcmd_req_set_policy q = {.hdr.type = PCMD_MSG_SET_POLICY};
	struct pcmd_reply_status p;
	int rc = opts_to_wire(c->ep, o, &q.opts);

	if (rc < 0)
		return rc;
	q.conn_id = c->id;
	return rpc(c->ep, &q, sizeof(q), &p, sizeof(p), NULL, 0);
}

/* One page of pcmd's list of this client's flows, from @start. Return: its length, or -errno. */
static ssize_t flows_page(struct dc_ep *ep, uint32_t start, struct pcmd_rep_flows *rep)
{
	struct pcmd_req_page q = {.hdr.type = PCMD_MSG_FLOWS, .start = start,
				  .max = PCMD_FLOWS_PER_PAGE};
	struct pcmd_msg_hdr *h = &q.hdr;
	ssize_t n;

	if (atomic_load(&ep->gone))
		return pcm_tp_set_error(-ESHUTDOWN, "conn_query: pcmd is gone");
	pthread_mutex_lock(&ep->ctl_lock);
	fill_hdr(ep, h, PCMD_MSG_FLOWS, sizeof(q));
	if (send(ep->sock, &q, sizeof(q), MSG_NOSIGNAL) < 0)
		n = pcm_tp_set_error(-errno, "sending to pcmd: %s", strerror(errno));
	else
		n = recv_reply(ep, h->seq, PCMD_MSG_FLOWS, rep, PCMD_MSG_MAX_BYTES, NULL, 0);
	pthread_mutex_unlock(&ep->ctl_lock);
	if (n >= 0 && ((size_t)n < sizeof(*rep) || rep->n > PCMD_FLOWS_PER_PAGE ||
		       (size_t)n < sizeof(*rep) + rep->n * sizeof(rep->flows[0])))
		n = pcm_tp_set_error(-EPROTO, "pcmd's list of flows is malformed");
	return n;
}

static int dc_conn_query(struct dc_conn *c, struct pcm_tp_conn_info *out)
{
	struct pcmd_rep_flows *rep = malloc(PCMD_MSG_MAX_BYTES);
	uint32_t start = 0;
	int rc = rep ? -ENOENT : -ENOMEM;

	while (rep && rc == -ENOENT) {
		ssize_t n = flows_page(c->ep, start, rep);

		if (n < 0) {
			rc = (int)n;
			break;
		}
		for (uint32_t i = 0; i < rep->n && rc == -ENOENT; i++) {
			const struct pcmd_flow_info *f = &rep->flows[i];

			if (f->conn_id != c->id || f->client_id != c->ep->client_id)
				continue;
			memset(out, 0, sizeof(*out));
			snprintf(out->policy, sizeof(out->policy), "%.*s", PCMD_POLICY_MAX - 1,
				 f->policy);
			snprintf(out->lb_policy, sizeof(out->lb_policy), "%.*s",
				 PCMD_POLICY_MAX - 1, f->lb_policy);
			out->mode = f->mode < PCMD_SHELL_MODE_COUNT ? (enum pcm_tp_shell_mode)f->mode
								    : PCM_TP_SHELL_SYNC;
			rc = 0;
		}
		if (rep->n == 0 || rep->next >= rep->total || rep->next <= start)
			break;
		start = rep->next;
	}
	free(rep);
	if (rc == -ENOENT)
		pcm_tp_set_error(rc, "conn_query: pcmd does not list connection %#x", c->id);
	return rc;
}

/* The other end's credentials, as pcmd recorded them when it paired the two (PEER). */
static int dc_conn_peer(struct dc_conn *c, struct pcm_tp_peer *out)
{
	struct pcmd_req_peer q = {.hdr.type = PCMD_MSG_PEER};
	struct pcmd_rep_peer p;
	int rc;

	q.conn_id = c->id;
	rc = rpc(c->ep, &q, sizeof(q), &p, sizeof(p), NULL, 0);
	if (rc < 0)
		return rc;
	*out = (struct pcm_tp_peer){
	    .uid = p.peer.uid, .gid = p.peer.gid, .pid = (int32_t)p.peer.pid};
	return 0;
}

/* ---- memory ---------------------------------------------------------------------------- */

static struct dc_region *region_new(struct dc_ep *ep, uint8_t *p, size_t len, bool owned)
{
	struct dc_region *r = calloc(1, sizeof(*r));

	if (!r) {
		pcm_tp_set_error(-ENOMEM, "out of memory for a region");
		return NULL;
	}
	r->base.ep = &ep->pub;
	r->base.addr = p;
	r->base.len = len;
	r->owned = owned;
	return r;
}

static int dc_region_add(struct dc_ep *ep, void *addr, size_t len, struct dc_region **out)
{
	if (!xp_range_within_ptr(ep->data, ep->lay.data_bytes, addr, len))
		return pcm_tp_set_error(-EINVAL, "mr_reg: in daemon mode buffers must lie in the "
						 "shared region: allocate them with "
						 "pcm_tp_mem_alloc()");
	*out = region_new(ep, addr, len, false);
	return *out ? 0 : -ENOMEM;
}

/* First fit between the sorted allocations. Caller holds state_lock. */
static int span_insert(struct dc_ep *ep, uint64_t len, uint64_t *off)
{
	uint64_t at = 0;
	uint32_t i;

	for (i = 0; i < ep->n_used; i++) {
		if (ep->used[i].off - at >= len)
			break;
		at = pcmd_align_up(ep->used[i].off + ep->used[i].len, ALLOC_ALIGN);
	}
	if (at > ep->lay.data_bytes || ep->lay.data_bytes - at < len)
		return -ENOMEM;
	if (ep->n_used == ep->cap_used) {
		uint32_t cap = ep->cap_used ? ep->cap_used * 2 : 16;
		struct span *n = realloc(ep->used, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ep->used = n;
		ep->cap_used = cap;
	}
	memmove(&ep->used[i + 1], &ep->used[i], (ep->n_used - i) * sizeof(*ep->used));
	ep->used[i] = (struct span){at, len};
	ep->n_used++;
	*off = at;
	return 0;
}

/* Free the allocation at @off. Caller holds state_lock. */
static void span_remove(struct dc_ep *ep, uint64_t off)
{
	for (uint32_t lo = 0, hi = ep->n_used; lo < hi;) {
		uint32_t mid = (lo + hi) / 2;

		if (ep->used[mid].off == off) {
			memmove(&ep->used[mid], &ep->used[mid + 1],
				(ep->n_used - mid - 1) * sizeof(*ep->used));
			ep->n_used--;
			return;
		}
		if (ep->used[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
}

static int dc_region_alloc(struct dc_ep *ep, size_t len, struct dc_region **out)
{
	uint64_t off;
	int rc;

	pthread_mutex_lock(&ep->state_lock);
	rc = span_insert(ep, len, &off);
	pthread_mutex_unlock(&ep->state_lock);
	if (rc < 0)
		return pcm_tp_set_error(rc, "mem_alloc: the shared region (%llu bytes) has no %zu "
					    "contiguous bytes free",
					(unsigned long long)ep->lay.data_bytes, len);
	*out = region_new(ep, ep->data + off, len, true);
	if (*out)
		return 0;
	pthread_mutex_lock(&ep->state_lock);
	span_remove(ep, off);
	pthread_mutex_unlock(&ep->state_lock);
	return -ENOMEM;
}

static void dc_region_remove(struct dc_region *r)
{
	struct dc_ep *ep = (struct dc_ep *)r->base.ep;

	if (r->owned) {
		pthread_mutex_lock(&ep->state_lock);
		span_remove(ep, (uint64_t)(r->base.addr - ep->data));
		pthread_mutex_unlock(&ep->state_lock);
	}
	free(r);
}

/* ---- data ------------------------------------------------------------------------------ */

static void ring_doorbell(int efd)
{
	uint64_t one = 1;

	/* Only EAGAIN when the counter is saturated, and then pcmd is awake anyway. */
	if (write(efd, &one, sizeof(one)) < 0)
		return;
}

static int dc_post(struct dc_conn *c, enum pcm_tp_op op, struct tp_region *r, const void *buf,
		   size_t len, uint64_t slot)
{
	struct dc_ep *ep = c->ep;
	const uint8_t *p = buf ? buf : r->addr;
	struct pcmd_sqe e;
	int64_t used;
	int rc = 0;

	if (atomic_load(&ep->gone))
		return pcm_tp_set_error(-ESHUTDOWN, "pcmd is gone: close the endpoint, and open a "
						    "new one once pcmd runs again");
	memset(&e, 0, sizeof(e));
	e.op = op == PCM_TP_OP_SEND ? PCMD_OP_SEND : PCMD_OP_RECV;
	e.conn_id = c->id;
	e.offset = (uint64_t)(p - ep->data);
	e.len = len;
	e.cookie = slot;
	pthread_mutex_lock(&ep->sq_lock);
	used = pcmd_ring_used(&ep->sq);
	if (used < 0) {
		rc = pcm_tp_set_error(-EPROTO, "pcmd's submission ring is corrupt");
	} else if (used == pcmd_ring_size(&ep->sq)) {
		rc = pcm_tp_set_error(-EAGAIN, "pcmd has not yet taken the %lld submissions "
					       "before: poll, then retry",
				      (long long)used);
	} else {
		pcmd_ring_put(&ep->sq, &e);
		if (pcmd_ring_publish(&ep->sq))
			ring_doorbell(ep->sq_efd);
	}
	pthread_mutex_unlock(&ep->sq_lock);
	return rc;
}

/* One completion from the ring in the frontend's form. Return: false if it is none of ours. */
static bool translate(struct dc_ep *ep, const struct pcmd_cqe *e, struct tp_comp *out)
{
	*out = (struct tp_comp){.op = (enum pcm_tp_op)e->op, .status = e->status,
				.slot = e->cookie, .bytes = e->bytes};
	switch (e->op) {
	case PCMD_OP_ACCEPT:
		if (e->status == 0) {
			struct dc_conn *c = conn_new(ep, e->conn_id);

			out->conn = c ? &c->base : NULL;
			out->status = c ? 0 : -ENOMEM;
		}
		return true;
	case PCMD_OP_CONNECT:
	case PCMD_OP_SEND:
	case PCMD_OP_RECV:
		return true;
	default:
		return false;
	}
}

/*
 * Whether pcmd hung up: a look at the socket without blocking (a notice is
 * read; a reply some control request waits for is left to it).
 */
static bool socket_hung_up(struct dc_ep *ep)
{
	struct pollfd pfd = {.fd = ep->sock, .events = POLLIN};
	uint8_t buf[sizeof(struct pcmd_notice)];
	ssize_t n;

	if (atomic_load(&ep->gone))
		return true;
	if (poll(&pfd, 1, 0) <= 0)
		return false;
	if (pthread_mutex_trylock(&ep->ctl_lock) != 0)
		return false; /* a control request reads the socket: it sees the hang-up */
	n = recv(ep->sock, buf, sizeof(buf), MSG_DONTWAIT);
	pthread_mutex_unlock(&ep->ctl_lock);
	if (n > 0)
		note_notice(ep, buf, n);
	else if (n == 0 || (pfd.revents & (POLLHUP | POLLERR)))
		hung_up(ep);
	return atomic_load(&ep->gone);
}

/* A busy poller's look at the socket, at most every DEAD_CHECK_NS: no syscall in between. */
static bool time_to_look(struct dc_ep *ep)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (now < ep->next_check_ns)
		return false;
	ep->next_check_ns = now + DEAD_CHECK_NS;
	return true;
}

static int dc_poll(struct dc_ep *ep, struct tp_comp *out, int max)
{
	bool taken = false, gone = false;
	int64_t avail;
	int n = 0;

	pthread_mutex_lock(&ep->state_lock);
	for (int round = 0; round < 2 && n < max; round++) {
		avail = pcmd_ring_avail(&ep->cq);
		if (avail < 0) {
			pthread_mutex_unlock(&ep->state_lock);
			return pcm_tp_set_error(-EPROTO, "pcmd's completion ring is corrupt");
		}
		while (n < max && avail > 0) {
			struct pcmd_cqe e;

			pcmd_ring_get(&ep->cq, &e);
			taken = true;
			avail--;
			if (translate(ep, &e, &out[n]))
				n++;
		}
		/* the ring was empty: has pcmd died? Then look once more: it wrote before it died */
		if (n || avail || round || !time_to_look(ep) || !socket_hung_up(ep))
			break;
		gone = true;
	}
	/*
	 * Hand slots back only when some were taken: a poll of an empty ring
	 * then writes nothing shared, so a thread that spins on poll does not
	 * pull the head's cache line away from pcmd's producer on every call.
	 */
	if (taken && pcmd_ring_release(&ep->cq) && !atomic_load(&ep->gone))
		ring_doorbell(ep->sq_efd);
	pthread_mutex_unlock(&ep->state_lock);
	if (n == 0 && (gone || (atomic_load(&ep->gone) && pcmd_ring_avail(&ep->cq) == 0)))
		return -ESHUTDOWN;
	return n;
}

static int dc_wait(struct dc_ep *ep, int timeout_ms)
{
	struct pollfd pfd[2];
	uint64_t v;
	int64_t avail;
	int rc;

	for (;;) {
		pthread_mutex_lock(&ep->state_lock);
		avail = pcmd_ring_arm(&ep->cq);
		pthread_mutex_unlock(&ep->state_lock);
		if (avail != 0)
			return avail < 0 ? pcm_tp_set_error(-EPROTO, "pcmd's completion ring is corrupt")
					 : 0;
		if (atomic_load(&ep->gone))
			return pcm_tp_set_error(-ESHUTDOWN, "pcmd closed its socket (it stopped or "
							    "died)");
		pfd[0] = (struct pollfd){.fd = ep->cq_efd, .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = ep->sock, .events = POLLIN};
		rc = poll(pfd, 2, timeout_ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return pcm_tp_set_error(-errno, "wait: %s", strerror(errno));
		if (rc == 0)
			return -ETIMEDOUT;
		if (pfd[0].revents & POLLIN)
			if (read(ep->cq_efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				return pcm_tp_set_error(-errno, "wait: %s", strerror(errno));
		if (pfd[1].revents)
			socket_hung_up(ep); /* then the ring is looked at once more */
	}
}

static int dc_fd(struct dc_ep *ep)
{
	pcmd_ring_wake_always(&ep->cq, 1);
	return ep->cq_efd;
}

/* ---- the backend table: the frontend's objects are the first members of ours ----------- */

static struct dc_ep *ep_of(struct pcm_tp_endpoint *b)
{
	return (struct dc_ep *)b;
}

static struct dc_conn *conn_of(struct tp_conn *b)
{
	return (struct dc_conn *)b;
}

static int op_endpoint_open(const struct pcm_tp_config *cfg, struct pcm_tp_endpoint **out)
{
	struct dc_ep *ep = NULL;
	int rc = dc_endpoint_open(cfg, &ep);

	if (rc == 0)
		*out = &ep->pub;
	return rc;
}

static void op_endpoint_close(struct pcm_tp_endpoint *ep)
{
	dc_endpoint_close(ep_of(ep));
}

static void op_limits(struct pcm_tp_endpoint *ep, struct pcm_tp_limits *out)
{
	dc_limits(ep_of(ep), out);
}

static int op_listen(struct pcm_tp_endpoint *ep, const char *addr, uint32_t flags)
{
	return dc_listen(ep_of(ep), addr, flags);
}

static int op_connect(struct pcm_tp_endpoint *ep, const char *addr,
		      const struct pcm_tp_conn_opts *o, uint64_t slot, struct tp_conn **out)
{
	struct dc_conn *c = NULL;
	int rc = dc_connect(ep_of(ep), addr, o, slot, &c);

	if (rc == 0)
		*out = &c->base;
	return rc;
}

static int op_accept(struct pcm_tp_endpoint *ep, uint64_t slot)
{
	return dc_accept(ep_of(ep), slot);
}

static int op_conn_close(struct tp_conn *c)
{
	return dc_conn_close(conn_of(c));
}

static void op_conn_free(struct tp_conn *c)
{
	dc_conn_free(conn_of(c));
}

static int op_conn_set_policy(struct tp_conn *c, const struct pcm_tp_conn_opts *o)
{
	return dc_conn_set_policy(conn_of(c), o);
}

static int op_conn_peer(struct tp_conn *c, struct pcm_tp_peer *out)
{
	return dc_conn_peer(conn_of(c), out);
}

static int op_conn_query(struct tp_conn *c, struct pcm_tp_conn_info *out)
{
	return dc_conn_query(conn_of(c), out);
}

static int op_region_add(struct pcm_tp_endpoint *ep, void *addr, size_t len,
			 struct tp_region **out)
{
	struct dc_region *r = NULL;
	int rc = dc_region_add(ep_of(ep), addr, len, &r);

	if (rc == 0)
		*out = &r->base;
	return rc;
}

static int op_region_alloc(struct pcm_tp_endpoint *ep, size_t len, struct tp_region **out)
{
	struct dc_region *r = NULL;
	int rc = dc_region_alloc(ep_of(ep), len, &r);

	if (rc == 0)
		*out = &r->base;
	return rc;
}

static void op_region_remove(struct tp_region *r)
{
	dc_region_remove((struct dc_region *)r);
}

static int op_post(struct tp_conn *c, enum pcm_tp_op op, struct tp_region *r, const void *buf,
		   size_t len, uint64_t slot)
{
	return dc_post(conn_of(c), op, r, buf, len, slot);
}

static int op_poll(struct pcm_tp_endpoint *ep, struct tp_comp *out, int max)
{
	return dc_poll(ep_of(ep), out, max);
}

static int op_wait(struct pcm_tp_endpoint *ep, int timeout_ms)
{
	return dc_wait(ep_of(ep), timeout_ms);
}

static int op_fd(struct pcm_tp_endpoint *ep)
{
	return dc_fd(ep_of(ep));
}

const struct pcm_tp_backend_ops pcm_tp_daemon_ops = {
	.name = "daemon",
	.endpoint_open = op_endpoint_open,
	.endpoint_close = op_endpoint_close,
	.limits = op_limits,
	.listen = op_listen,
	.connect = op_connect,
	.accept = op_accept,
	.conn_close = op_conn_close,
	.conn_free = op_conn_free,
	.conn_set_policy = op_conn_set_policy,
	.conn_peer = op_conn_peer,
	.conn_query = op_conn_query,
	.region_add = op_region_add,
	.region_alloc = op_region_alloc,
	.region_remove = op_region_remove,
	.post = op_post,
	.poll = op_poll,
	.wait = op_wait,
	.fd = op_fd,
};
