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
 * A full submission ring makes send and receive return -EAGAIN: poll
 * completions and retry.
 *
 * A conn pointer stays valid after pcm_tp_conn_close() until the
 * pcm_tp_poll() call after the one that returned its last completion, so
 * every completion a caller holds names a live object.
 *
 * It is one backend of libpcmtransport's table (backend.h): api.c chooses
 * it (PCM_TP_BACKEND_DAEMON, or AUTO by $PCM_TRANSPORT); the error texts are
 * tp_error.c's; the in-process backend is inproc.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "backend.h"
#include "pcmd_proto.h"
#include "pcmd_region.h"
#include "tp_error.h"
#include "xp_range.h"

#define DEFAULT_REGION_BYTES (64ull << 20)
#define RPC_TIMEOUT_MS 10000
#define ALLOC_ALIGN 64u

struct dc_conn {
	struct pcm_tp_conn pub;
	struct dc_ep *ep;
	uint32_t id;
	uint32_t outstanding; /* posted and not yet polled, CONNECT included */
	bool established;
	bool closed;
	bool in_table;		  /* else on the displaced list */
	struct dc_conn *next; /* displaced or graveyard list */
};

struct dc_mr {
	struct pcm_tp_mr pub;
	struct dc_ep *ep;
	uint64_t off, len;
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
	uint64_t max_message_bytes;
	bool shut_down; /* pcmd said it is stopping, or the socket hung up */
	_Alignas(8) uint8_t rbuf[PCMD_MSG_MAX_BYTES]; /* control replies, under ctl_lock */

	pthread_mutex_t ctl_lock;   /* one control request at a time */
	pthread_mutex_t sq_lock;    /* submissions */
	pthread_mutex_t state_lock; /* conns, allocator */

	struct dc_conn **conns;    /* by (conn id & 0xffff) - 1 */
	struct dc_conn *displaced; /* closed conns whose index pcmd gave to a new one */
	struct dc_conn *graveyard; /* freed at the next poll */
	struct span *used;	       /* allocations, sorted by offset */
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

static void note_notice(struct dc_ep *ep, const uint8_t *buf, ssize_t n)
{
	const struct pcmd_notice *no = (const void *)buf;

	if ((size_t)n < sizeof(*no))
		return;
	ep->shut_down = true;
	pcm_tp_set_error(no->status, "pcmd: %.*s", PCMD_ERRTEXT_MAX - 1, no->text);
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
		if (n == 0) {
			ep->shut_down = true;
			return pcm_tp_set_error(-ECONNRESET, "pcmd closed the connection");
		}
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
	ep->client_id = p.client_id;
	ep->max_flows = p.max_flows;
	ep->max_message_bytes = p.max_message_bytes;
	ep->conns = calloc(p.max_flows, sizeof(*ep->conns));
	return ep->conns ? 0 : -ENOMEM;
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
	    h->region_bytes != lay.region_bytes)
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
	for (uint32_t i = 0; ep->conns && i < ep->max_flows; i++)
		free(ep->conns[i]);
	free(ep->conns);
	for (struct dc_conn *l[] = {ep->displaced, ep->graveyard}, **h = l; h < l + 2; h++)
		while (*h) {
			struct dc_conn *c = *h;

			*h = c->next;
			free(c);
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

	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->pub.ops = &pcm_tp_daemon_ops;
	ep->sock = ep->memfd = ep->sq_efd = ep->cq_efd = -1;
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

/* ---- connections ----------------------------------------------------------------------- */

static void opts_to_wire(const struct pcm_tp_conn_opts *o, struct pcmd_flow_opts *w)
{
	memset(w, 0, sizeof(*w));
	w->mode = PCMD_SHELL_DEFAULT;
	if (!o)
		return;
	if (o->policy)
		snprintf(w->policy, sizeof(w->policy), "%s", o->policy);
	if (o->lb_policy)
		snprintf(w->lb_policy, sizeof(w->lb_policy), "%s", o->lb_policy);
	w->mode = (uint32_t)o->mode;
	w->paths = o->paths;
	w->reliable_connected = o->reliable_connected ? 1 : 0;
	w->no_progress_ms = o->no_progress_ms;
}

static int check_name(const char *s, size_t cap, const char *what)
{
	if (!s || !*s)
		return pcm_tp_set_error(-EINVAL, "%s is empty", what);
	if (strlen(s) >= cap)
		return pcm_tp_set_error(-ENAMETOOLONG, "%s is longer than %zu bytes", what, cap - 1);
	return 0;
}

static int check_opts(const struct pcm_tp_conn_opts *o)
{
	if (!o)
		return 0;
	if ((o->policy && strlen(o->policy) >= PCMD_POLICY_MAX) ||
	    (o->lb_policy && strlen(o->lb_policy) >= PCMD_POLICY_MAX))
		return pcm_tp_set_error(-ENAMETOOLONG, "a policy name is longer than %d bytes",
				 PCMD_POLICY_MAX - 1);
	if ((unsigned)o->mode > PCM_TP_SHELL_ASYNC_BOUNDED)
		return pcm_tp_set_error(-EINVAL, "shell mode %d is unknown", (int)o->mode);
	return 0;
}

static int dc_listen(struct dc_ep *ep, const char *addr, uint32_t flags)
{
	struct pcmd_req_listen q = {.hdr.type = PCMD_MSG_LISTEN};
	struct pcmd_rep_listen p;
	int rc = check_name(addr, sizeof(q.addr), "the address");

	if (rc < 0)
		return rc;
	snprintf(q.addr, sizeof(q.addr), "%s", addr);
	q.flags = flags & PCM_TP_LISTEN_ANY_USER ? PCMD_LISTEN_ANY_USER : 0;
	return rpc(ep, &q, sizeof(q), &p, sizeof(p), NULL, 0);
}

/* A new conn for an id pcmd gave. Caller holds state_lock. */
static struct dc_conn *conn_new(struct dc_ep *ep, uint32_t id)
{
	uint32_t i = (id & 0xffff) - 1;
	struct dc_conn *c, *old;

	if ((id & 0xffff) == 0 || i >= ep->max_flows)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pub.ep = &ep->pub;
	c->ep = ep;
	c->id = id;
	c->in_table = true;
	old = ep->conns[i];
	if (old) {
		/* pcmd reuses an index once its old conn closed; its last completions may still
		 * be unread here, so the old conn waits on the displaced list. */
		old->in_table = false;
		old->next = ep->displaced;
		ep->displaced = old;
	}
	ep->conns[i] = c;
	return c;
}

/* The conn a completion names, or NULL. Caller holds state_lock. */
static struct dc_conn *conn_get(struct dc_ep *ep, uint32_t id)
{
	uint32_t i = (id & 0xffff) - 1;

	if ((id & 0xffff) == 0 || i >= ep->max_flows)
		return NULL;
	if (ep->conns[i] && ep->conns[i]->id == id)
		return ep->conns[i];
	for (struct dc_conn *c = ep->displaced; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

/* A closed conn with nothing outstanding goes to the graveyard. Caller holds state_lock. */
static void conn_maybe_free(struct dc_conn *c)
{
	struct dc_ep *ep = c->ep;

	if (!c->closed || c->outstanding)
		return;
	if (c->in_table) {
		ep->conns[(c->id & 0xffff) - 1] = NULL;
	} else {
		for (struct dc_conn **p = &ep->displaced; *p; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				break;
			}
	}
	c->next = ep->graveyard;
	ep->graveyard = c;
}

static void empty_graveyard(struct dc_ep *ep)
{
	while (ep->graveyard) {
		struct dc_conn *c = ep->graveyard;

		ep->graveyard = c->next;
		free(c);
	}
}

static int dc_connect(struct dc_ep *ep, const char *addr, const struct pcm_tp_conn_opts *o,
		   uint64_t cookie)
{
	struct pcmd_req_connect q = {.hdr.type = PCMD_MSG_CONNECT};
	struct pcmd_rep_conn p;
	struct dc_conn *c;
	int rc = check_name(addr, sizeof(q.addr), "the address");

	if (rc == 0)
		rc = check_opts(o);
	if (rc < 0)
		return rc;
	snprintf(q.addr, sizeof(q.addr), "%s", addr);
	opts_to_wire(o, &q.opts);
	q.cookie = cookie;
	/* The completion may be on the ring before the reply is read: hold polls off. */
	pthread_mutex_lock(&ep->state_lock);
	rc = rpc(ep, &q, sizeof(q), &p, sizeof(p), NULL, 0);
	c = rc == 0 ? conn_new(ep, p.conn_id) : NULL;
	if (c)
		c->outstanding = 1;
	pthread_mutex_unlock(&ep->state_lock);
	if (rc == 0 && !c)
		return pcm_tp_set_error(-EPROTO, "pcmd gave conn id %#x, outside this client's table",
				 p.conn_id);
	return rc;
}

static int dc_accept(struct dc_ep *ep, uint64_t cookie)
{
	struct pcmd_req_accept q = {.hdr.type = PCMD_MSG_ACCEPT};
	struct pcmd_reply_status p;

	q.cookie = cookie;
	return rpc(ep, &q, sizeof(q), &p, sizeof(p), NULL, 0);
}

static int dc_conn_close(struct dc_conn *c)
{
	struct dc_ep *ep;
	struct pcmd_req_close q = {.hdr.type = PCMD_MSG_CLOSE};
	struct pcmd_reply_status p;
	int rc;

	if (!c)
		return -EINVAL;
	ep = c->ep;
	q.conn_id = c->id;
	q.flags = PCMD_CLOSE_ABORT;
	rc = ep->shut_down ? 0 : rpc(ep, &q, sizeof(q), &p, sizeof(p), NULL, 0);
	pthread_mutex_lock(&ep->state_lock);
	c->closed = true;
	conn_maybe_free(c);
	pthread_mutex_unlock(&ep->state_lock);
	return rc == -EALREADY ? 0 : rc;
}

static int dc_conn_set_policy(struct dc_conn *c, const struct pcm_tp_conn_opts *o)
{
	struct pcmd_req_set_policy q = {.hdr.type = PCMD_MSG_SET_POLICY};
	struct pcmd_reply_status p;
	int rc;

	if (!c || !o)
		return -EINVAL;
	rc = check_opts(o);
	if (rc < 0)
		return rc;
	q.conn_id = c->id;
	opts_to_wire(o, &q.opts);
	return rpc(c->ep, &q, sizeof(q), &p, sizeof(p), NULL, 0);
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

static int dc_mr_reg(struct dc_ep *ep, void *addr, size_t len, struct dc_mr **out)
{
	uint8_t *p = addr;
	struct dc_mr *mr;

	if (!ep || !out || !xp_range_within_ptr(ep->data, ep->lay.data_bytes, p, len))
		return pcm_tp_set_error(-EINVAL, "in daemon mode buffers must lie in the shared region: "
					  "allocate them with pcm_tp_mem_alloc()");
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	mr->pub.ep = &ep->pub;
	mr->ep = ep;
	mr->off = (uint64_t)(p - ep->data);
	mr->len = len;
	*out = mr;
	return 0;
}

static int dc_mr_dereg(struct dc_mr *mr)
{
	free(mr);
	return 0;
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

static void *dc_mem_alloc(struct dc_ep *ep, size_t len)
{
	uint64_t off;
	int rc;

	if (!ep || len == 0)
		return NULL;
	pthread_mutex_lock(&ep->state_lock);
	rc = span_insert(ep, len, &off);
	pthread_mutex_unlock(&ep->state_lock);
	if (rc < 0) {
		pcm_tp_set_error(rc, "the shared region (%llu bytes) has no %zu contiguous bytes free",
			  (unsigned long long)ep->lay.data_bytes, len);
		return NULL;
	}
	return ep->data + off;
}

static void dc_mem_free(struct dc_ep *ep, void *p)
{
	uint64_t off;

	if (!ep || !p || (uint8_t *)p < ep->data)
		return;
	off = (uint64_t)((uint8_t *)p - ep->data);
	pthread_mutex_lock(&ep->state_lock);
	for (uint32_t lo = 0, hi = ep->n_used; lo < hi;) {
		uint32_t mid = (lo + hi) / 2;

		if (ep->used[mid].off == off) {
			memmove(&ep->used[mid], &ep->used[mid + 1],
				(ep->n_used - mid - 1) * sizeof(*ep->used));
			ep->n_used--;
			break;
		}
		if (ep->used[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	pthread_mutex_unlock(&ep->state_lock);
}

/* ---- data ------------------------------------------------------------------------------ */

static void ring_doorbell(int efd)
{
	uint64_t one = 1;

	/* Only EAGAIN when the counter is saturated, and then pcmd is awake anyway. */
	if (write(efd, &one, sizeof(one)) < 0)
		return;
}

static int post(struct dc_conn *c, struct dc_mr *mr, const void *buf, size_t len,
		uint64_t cookie, uint8_t op)
{
	struct dc_ep *ep;
	const uint8_t *p = buf;
	struct pcmd_sqe e;
	int64_t used;
	int rc = 0;

	if (!c || (!buf && len))
		return -EINVAL;
	ep = c->ep;
	if (c->closed || !c->established)
		return pcm_tp_set_error(-ENOTCONN, "the connection is %s",
				 c->closed ? "closed" : "not established");
	if (len > ep->max_message_bytes)
		return pcm_tp_set_error(-EMSGSIZE,
				 "%zu bytes is above pcmd's limits.max_message_bytes "
				 "(%llu)",
				 len, (unsigned long long)ep->max_message_bytes);
	if (!xp_range_within_ptr(ep->data, ep->lay.data_bytes, p, len) ||
	    (mr && !xp_range_within_ptr(ep->data + mr->off, mr->len, p, len)))
		return pcm_tp_set_error(-EINVAL, "the buffer is not inside %s",
				 mr ? "its memory region" : "the shared region");
	memset(&e, 0, sizeof(e));
	e.op = op;
	e.conn_id = c->id;
	e.offset = (uint64_t)(p - ep->data);
	e.len = len;
	e.cookie = cookie;
	pthread_mutex_lock(&ep->state_lock);
	c->outstanding++;
	pthread_mutex_unlock(&ep->state_lock);
	pthread_mutex_lock(&ep->sq_lock);
	used = pcmd_ring_used(&ep->sq);
	if (used < 0 || used == pcmd_ring_size(&ep->sq)) {
		rc = used < 0 ? -EPROTO : -EAGAIN;
	} else {
		pcmd_ring_put(&ep->sq, &e);
		if (pcmd_ring_publish(&ep->sq))
			ring_doorbell(ep->sq_efd);
	}
	pthread_mutex_unlock(&ep->sq_lock);
	if (rc < 0) {
		pthread_mutex_lock(&ep->state_lock);
		c->outstanding--;
		pthread_mutex_unlock(&ep->state_lock);
	}
	return rc;
}

static int dc_send(struct dc_conn *c, struct dc_mr *mr, const void *buf, size_t len,
		uint64_t cookie)
{
	return post(c, mr, buf, len, cookie, PCMD_OP_SEND);
}

static int dc_recv(struct dc_conn *c, struct dc_mr *mr, void *buf, size_t cap, uint64_t cookie)
{
	return post(c, mr, buf, cap, cookie, PCMD_OP_RECV);
}

/* One completion from the ring into the API's form. Caller holds state_lock. */
static bool translate(struct dc_ep *ep, const struct pcmd_cqe *e,
		      struct pcm_tp_completion *out)
{
	struct dc_conn *c = conn_get(ep, e->conn_id);

	out->op = (enum pcm_tp_op)e->op;
	out->status = e->status;
	out->cookie = e->cookie;
	out->bytes = e->bytes;
	out->conn = NULL;
	switch (e->op) {
	case PCMD_OP_ACCEPT:
		c = e->status == 0 ? conn_new(ep, e->conn_id) : NULL;
		if (c)
			c->established = true;
		out->conn = c ? &c->pub : NULL;
		return true;
	case PCMD_OP_CONNECT:
		if (!c)
			return true;
		c->outstanding--;
		if (e->status == 0 && !c->closed) {
			c->established = true;
			out->conn = &c->pub;
		} else {
			/* A failed connect has no connection to hand out. */
			c->closed = true;
			conn_maybe_free(c);
		}
		return true;
	case PCMD_OP_SEND:
	case PCMD_OP_RECV:
		if (c) {
			c->outstanding--;
			out->conn = &c->pub;
			conn_maybe_free(c);
		}
		return true;
	default:
		return false;
	}
}

static int dc_poll(struct dc_ep *ep, struct pcm_tp_completion *out, int max)
{
	bool taken = false;
	int64_t avail;
	int n = 0;

	if (!ep || !out || max < 0)
		return -EINVAL;
	pthread_mutex_lock(&ep->state_lock);
	empty_graveyard(ep);
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
	/*
	 * Hand slots back only when some were taken: a poll of an empty ring
	 * then writes nothing shared, so a thread that spins on poll does not
	 * pull the head's cache line away from pcmd's producer on every call.
	 */
	if (taken && pcmd_ring_release(&ep->cq))
		ring_doorbell(ep->sq_efd);
	pthread_mutex_unlock(&ep->state_lock);
	return n;
}

static int dc_wait(struct dc_ep *ep, int timeout_ms)
{
	struct pollfd pfd[2];
	uint64_t v;
	int64_t avail;
	int rc;

	if (!ep)
		return -EINVAL;
	for (;;) {
		pthread_mutex_lock(&ep->state_lock);
		avail = pcmd_ring_arm(&ep->cq);
		pthread_mutex_unlock(&ep->state_lock);
		if (avail != 0)
			return avail < 0 ? -EPROTO : 0;
		if (ep->shut_down)
			return pcm_tp_set_error(-ESHUTDOWN, "pcmd has disconnected this client");
		pfd[0] = (struct pollfd){.fd = ep->cq_efd, .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = ep->sock, .events = POLLIN};
		rc = poll(pfd, 2, timeout_ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -errno;
		if (rc == 0)
			return -ETIMEDOUT;
		if (pfd[0].revents & POLLIN)
			if (read(ep->cq_efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				return -errno;
		if (pfd[1].revents) {
			uint8_t buf[sizeof(struct pcmd_notice)];
			ssize_t n;

			/* Only notices arrive unasked; a hang-up means pcmd dropped us. */
			pthread_mutex_lock(&ep->ctl_lock);
			n = recv(ep->sock, buf, sizeof(buf), MSG_DONTWAIT);
			pthread_mutex_unlock(&ep->ctl_lock);
			if (n > 0)
				note_notice(ep, buf, n);
			else if (n == 0)
				ep->shut_down = true;
		}
	}
}

static int dc_fd(struct dc_ep *ep)
{
	if (!ep)
		return -EINVAL;
	pcmd_ring_wake_always(&ep->cq, 1);
	return ep->cq_efd;
}

/* ---- the backend table: the public objects are the first members of ours --------------- */

static struct dc_ep *ep_of(struct pcm_tp_endpoint *b)
{
	return (struct dc_ep *)b;
}

static struct dc_conn *conn_of(struct pcm_tp_conn *b)
{
	return (struct dc_conn *)b;
}

static struct dc_mr *mr_of(struct pcm_tp_mr *b)
{
	return (struct dc_mr *)b;
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

static int op_listen(struct pcm_tp_endpoint *ep, const char *addr, uint32_t flags)
{
	return dc_listen(ep_of(ep), addr, flags);
}

static int op_connect(struct pcm_tp_endpoint *ep, const char *addr,
		      const struct pcm_tp_conn_opts *o, uint64_t cookie)
{
	return dc_connect(ep_of(ep), addr, o, cookie);
}

static int op_accept(struct pcm_tp_endpoint *ep, uint64_t cookie)
{
	return dc_accept(ep_of(ep), cookie);
}

static int op_conn_close(struct pcm_tp_conn *c)
{
	return dc_conn_close(conn_of(c));
}

static int op_conn_set_policy(struct pcm_tp_conn *c, const struct pcm_tp_conn_opts *o)
{
	return dc_conn_set_policy(conn_of(c), o);
}

static int op_conn_peer(struct pcm_tp_conn *c, struct pcm_tp_peer *out)
{
	return dc_conn_peer(conn_of(c), out);
}

static int op_mr_reg(struct pcm_tp_endpoint *ep, void *addr, size_t len, struct pcm_tp_mr **out)
{
	struct dc_mr *mr = NULL;
	int rc = dc_mr_reg(ep_of(ep), addr, len, &mr);

	if (rc == 0)
		*out = &mr->pub;
	return rc;
}

static int op_mr_dereg(struct pcm_tp_mr *mr)
{
	return dc_mr_dereg(mr_of(mr));
}

static void *op_mem_alloc(struct pcm_tp_endpoint *ep, size_t len)
{
	return dc_mem_alloc(ep_of(ep), len);
}

static void op_mem_free(struct pcm_tp_endpoint *ep, void *p)
{
	dc_mem_free(ep_of(ep), p);
}

static int op_send(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, const void *buf, size_t len,
		   uint64_t cookie)
{
	return dc_send(conn_of(c), mr ? mr_of(mr) : NULL, buf, len, cookie);
}

static int op_recv(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, void *buf, size_t cap,
		   uint64_t cookie)
{
	return dc_recv(conn_of(c), mr ? mr_of(mr) : NULL, buf, cap, cookie);
}

static int op_poll(struct pcm_tp_endpoint *ep, struct pcm_tp_completion *out, int max)
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
	.listen = op_listen,
	.connect = op_connect,
	.accept = op_accept,
	.conn_close = op_conn_close,
	.conn_set_policy = op_conn_set_policy,
	.conn_peer = op_conn_peer,
	.mr_reg = op_mr_reg,
	.mr_dereg = op_mr_dereg,
	.mem_alloc = op_mem_alloc,
	.mem_free = op_mem_free,
	.send = op_send,
	.recv = op_recv,
	.poll = op_poll,
	.wait = op_wait,
	.fd = op_fd,
};
