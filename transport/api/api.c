// SPDX-License-Identifier: MIT
/*
 * api.c - libpcmtransport's public calls: the backend chosen at endpoint
 * open, every argument checked here once for both backends (each failure
 * setting the thread's last error with the argument or object it names),
 * handles turned into objects (tp_handle.h), posts admitted within the
 * limits (tp_post.h), completions made by tp_comp.c, and the rest
 * dispatched through the endpoint's backend ops (backend.h).
 *
 * The order of the checks is the contract's (pcm_transport(3), "Errors"):
 * a NULL or foreign object is -EINVAL, a closed or gone connection
 * -ENOTCONN, then the endpoint's state (-ESHUTDOWN: pcmd is gone), the
 * connection's (-ENOTCONN closed, or the error that killed it), the
 * arguments' values, and only then the limits (-EAGAIN); a post refused
 * changes nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "tp_comp.h"
#include "tp_error.h"
#include "tp_handle.h"
#include "tp_post.h"

#define ADDR_MAX 64    /* an address, NUL included */
#define POLICY_MAX 256 /* a policy's name or .so path, NUL included */

/* The backends built into this library, by enum pcm_tp_backend. */
static const struct pcm_tp_backend_ops *backend_of(enum pcm_tp_backend b)
{
	switch (b) {
	case PCM_TP_BACKEND_INPROC:
		return &pcm_tp_inproc_ops;
	case PCM_TP_BACKEND_DAEMON:
		return &pcm_tp_daemon_ops;
	default:
		return NULL;
	}
}

/* pcmd's socket, as the daemon backend finds it. */
static const char *daemon_socket(const struct pcm_tp_config *cfg)
{
	const char *env = getenv("PCMD_SOCKET");

	if (cfg->daemon_socket)
		return cfg->daemon_socket;
	return env && env[0] ? env : "/run/pcmd/pcmd.sock";
}

/*
 * The backend: cfg->backend unless AUTO; then $PCM_TRANSPORT: "daemon"; unset,
 * "" or "inproc": in process; "auto": the daemon when its socket exists.
 */
static int choose(const struct pcm_tp_config *cfg, enum pcm_tp_backend *out)
{
	const char *env = getenv("PCM_TRANSPORT");

	if (cfg->backend != PCM_TP_BACKEND_AUTO) {
		*out = cfg->backend;
		return 0;
	}
	if (env && strcmp(env, "daemon") == 0)
		*out = PCM_TP_BACKEND_DAEMON;
	else if (!env || !env[0] || strcmp(env, "inproc") == 0)
		*out = PCM_TP_BACKEND_INPROC;
	else if (strcmp(env, "auto") == 0)
		*out = access(daemon_socket(cfg), F_OK) == 0 ? PCM_TP_BACKEND_DAEMON
							      : PCM_TP_BACKEND_INPROC;
	else
		return pcm_tp_set_error(-EINVAL,
					"PCM_TRANSPORT='%s': not one of daemon, inproc, auto", env);
	return 0;
}

/* ---- objects from handles ------------------------------------------------------------------ */

/*
 * The object handle @h names, for a call's argument: a live one, or NULL
 * with *rc set (a gone one: @gone_rc, "gone_what"; NULL or no handle of this
 * kind: -EINVAL).
 */
static void *object_arg(const char *call, uintptr_t h, enum tp_handle_kind kind, const char *what,
			int gone_rc, const char *gone_what, int *rc)
{
	void *obj = NULL;

	switch (tp_handle_look(h, kind, &obj)) {
	case TP_HANDLE_LIVE:
		return obj;
	case TP_HANDLE_GONE:
		*rc = pcm_tp_set_error(gone_rc, "%s: %s %p is %s", call, what, (void *)h, gone_what);
		return NULL;
	default:
		*rc = h ? pcm_tp_set_error(-EINVAL, "%s: %p is not a %s", call, (void *)h, what)
			: pcm_tp_set_error(-EINVAL, "%s: the %s is NULL", call, what);
		return NULL;
	}
}

static struct tp_conn *conn_arg(const char *call, struct pcm_tp_conn *h, int *rc)
{
	return object_arg(call, (uintptr_t)h, TP_HANDLE_CONN, "connection", -ENOTCONN,
			  "gone (closed, its CLOSE taken, or its endpoint closed)", rc);
}

static struct tp_region *region_arg(const char *call, struct pcm_tp_mr *h, int *rc)
{
	return object_arg(call, (uintptr_t)h, TP_HANDLE_REGION, "memory region", -EINVAL,
			  "deregistered (or its endpoint closed)", rc);
}

static int ep_null(const char *call)
{
	return pcm_tp_set_error(-EINVAL, "%s: the endpoint is NULL", call);
}

/* ---- argument values ---------------------------------------------------------------------------- */

static int check_addr(const char *call, const char *addr)
{
	if (!addr || !addr[0])
		return pcm_tp_set_error(-EINVAL, "%s: no address (%s)", call,
					addr ? "empty" : "NULL");
	if (strlen(addr) >= ADDR_MAX)
		return pcm_tp_set_error(-ENAMETOOLONG, "%s: the address is longer than %d bytes",
					call, ADDR_MAX - 1);
	return 0;
}

static int check_name(const char *call, const char *what, const char *name)
{
	if (name && !name[0])
		return pcm_tp_set_error(-EINVAL, "%s: %s is empty (NULL means the default)", call,
					what);
	if (name && strlen(name) >= POLICY_MAX)
		return pcm_tp_set_error(-ENAMETOOLONG, "%s: %s is longer than %d bytes", call,
					what, POLICY_MAX - 1);
	return 0;
}

/* A connection's options, as both backends take them. */
static int check_opts(const char *call, const struct pcm_tp_conn_opts *o)
{
	int rc;

	if (!o)
		return 0;
	rc = check_name(call, "o->policy", o->policy);
	if (rc == 0)
		rc = check_name(call, "o->lb_policy", o->lb_policy);
	if (rc < 0)
		return rc;
	if ((unsigned)o->mode > PCM_TP_SHELL_ASYNC_BOUNDED)
		return pcm_tp_set_error(-EINVAL, "%s: o->mode %d is not one of pcm_tp_shell_mode",
					call, (int)o->mode);
	if (o->paths > 64)
		return pcm_tp_set_error(-EINVAL, "%s: o->paths is %u, at most 64", call, o->paths);
	return 0;
}

/* The endpoint's state, under its frontend's lock: -ESHUTDOWN once pcmd is gone. */
static int ep_state(const char *call, const struct tp_front *f)
{
	if (f->gone)
		return pcm_tp_set_error(-ESHUTDOWN, "%s: pcmd is gone: close the endpoint, and "
						    "open a new one once pcmd runs again",
					call);
	return 0;
}

/* A connection's state, under its frontend's lock. */
static int conn_state(const char *call, const struct tp_conn *c)
{
	int rc = ep_state(call, c->ep->front);

	if (rc == 0 && c->closed)
		rc = pcm_tp_set_error(-ENOTCONN, "%s: the connection is closed", call);
	if (rc == 0 && c->failed)
		rc = pcm_tp_set_error(c->failed, "%s: the connection failed: %s", call,
				      pcm_tp_strerror(c->failed));
	return rc;
}

/* ---- endpoints ------------------------------------------------------------------------------------ */

int pcm_tp_endpoint_open(const struct pcm_tp_config *cfg, struct pcm_tp_endpoint **out)
{
	enum pcm_tp_backend b = PCM_TP_BACKEND_INPROC;
	const struct pcm_tp_backend_ops *ops;
	struct pcm_tp_endpoint *ep;
	int rc;

	pcm_tp_clear_error();
	if (!out || !cfg)
		return pcm_tp_set_error(-EINVAL, "endpoint_open: %s is NULL",
					cfg ? "out" : "the configuration");
	if ((unsigned)cfg->backend > PCM_TP_BACKEND_DAEMON)
		return pcm_tp_set_error(-EINVAL, "backend %d is not one of pcm_tp_backend",
					(int)cfg->backend);
	rc = choose(cfg, &b);
	if (rc < 0)
		return rc;
	ops = backend_of(b);
	if (!ops)
		return pcm_tp_set_error(-EOPNOTSUPP,
					"backend %d (%s) is not built into this library", (int)b,
					b == PCM_TP_BACKEND_DAEMON ? "daemon" : "unknown");
	rc = ops->endpoint_open(cfg, &ep);
	if (rc < 0)
		return rc;
	rc = tp_front_create(ep);
	if (rc < 0) {
		ops->endpoint_close(ep);
		return rc;
	}
	*out = ep;
	return 0;
}

void pcm_tp_endpoint_close(struct pcm_tp_endpoint *ep)
{
	struct tp_front *f;

	if (!ep)
		return;
	f = ep->front;
	tp_comp_endpoint_close(ep);
	ep->ops->endpoint_close(ep);
	tp_front_destroy(f);
}

int pcm_tp_endpoint_limits(struct pcm_tp_endpoint *ep, struct pcm_tp_limits *out)
{
	if (!ep || !out)
		return ep ? pcm_tp_set_error(-EINVAL, "endpoint_limits: out is NULL")
			  : ep_null("endpoint_limits");
	*out = ep->front->limits;
	return 0;
}

/* ---- listen, connect, accept ------------------------------------------------------------------------ */

int pcm_tp_listen(struct pcm_tp_endpoint *ep, const char *addr)
{
	return pcm_tp_listen_flags(ep, addr, 0);
}

int pcm_tp_listen_flags(struct pcm_tp_endpoint *ep, const char *addr, uint32_t flags)
{
	struct tp_front *f;
	int rc;

	if (!ep)
		return ep_null("listen");
	rc = check_addr("listen", addr);
	if (rc < 0)
		return rc;
	if (flags & ~PCM_TP_LISTEN_ANY_USER)
		return pcm_tp_set_error(-EINVAL, "listen: flags %#x (PCM_TP_LISTEN_ANY_USER only)",
					flags);
	f = ep->front;
	pthread_mutex_lock(&f->lock);
	rc = ep_state("listen", f);
	if (rc == 0 && f->listening)
		rc = pcm_tp_set_error(-EADDRINUSE,
				      "listen '%s': this endpoint listens already (one address "
				      "per endpoint)",
				      addr);
	if (rc == 0)
		rc = ep->ops->listen(ep, addr, flags);
	if (rc == 0)
		f->listening = true;
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int pcm_tp_connect(struct pcm_tp_endpoint *ep, const char *addr, const struct pcm_tp_conn_opts *o,
		   uint64_t cookie)
{
	struct tp_front *f;
	struct tp_conn *c = NULL;
	uint64_t slot = 0;
	int rc;

	if (!ep)
		return ep_null("connect");
	rc = check_addr("connect", addr);
	if (rc == 0)
		rc = check_opts("connect", o);
	if (rc < 0)
		return rc;
	f = ep->front;
	/* held across the backend's call: its CONNECT completion must find the slot's connection */
	pthread_mutex_lock(&f->lock);
	rc = ep_state("connect", f);
	if (rc == 0)
		rc = tp_post_admit(ep, PCM_TP_OP_CONNECT, NULL, NULL, cookie, &slot);
	if (rc == 0) {
		rc = ep->ops->connect(ep, addr, o, slot, &c);
		if (rc == 0)
			tp_post_slot(f, slot, PCM_TP_OP_CONNECT)->conn = c;
		else
			tp_post_end(ep, tp_post_slot(f, slot, PCM_TP_OP_CONNECT));
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int pcm_tp_accept(struct pcm_tp_endpoint *ep, uint64_t cookie)
{
	struct tp_front *f;
	uint64_t slot = 0;
	int rc;

	if (!ep)
		return ep_null("accept");
	f = ep->front;
	pthread_mutex_lock(&f->lock);
	rc = ep_state("accept", f);
	if (rc == 0 && !f->listening)
		rc = pcm_tp_set_error(-EINVAL, "accept: the endpoint does not listen");
	if (rc == 0)
		rc = tp_post_admit(ep, PCM_TP_OP_ACCEPT, NULL, NULL, cookie, &slot);
	pthread_mutex_unlock(&f->lock);
	if (rc < 0)
		return rc;
	rc = ep->ops->accept(ep, slot);
	if (rc < 0) {
		pthread_mutex_lock(&f->lock);
		tp_post_end(ep, tp_post_slot(f, slot, PCM_TP_OP_ACCEPT));
		pthread_mutex_unlock(&f->lock);
	}
	return rc;
}

/* ---- connections -------------------------------------------------------------------------------------- */

int pcm_tp_conn_close(struct pcm_tp_conn *h)
{
	int rc = 0;
	struct tp_conn *c = conn_arg("close", h, &rc);

	return c ? tp_conn_close(c) : rc;
}

int pcm_tp_conn_set_policy(struct pcm_tp_conn *h, const struct pcm_tp_conn_opts *o)
{
	int rc = 0;
	struct tp_conn *c = conn_arg("set_policy", h, &rc);

	if (!c)
		return rc;
	if (!o)
		return pcm_tp_set_error(-EINVAL, "set_policy: the options are NULL");
	rc = check_opts("set_policy", o);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&c->ep->front->lock);
	rc = conn_state("set_policy", c);
	pthread_mutex_unlock(&c->ep->front->lock);
	return rc < 0 ? rc : c->ep->ops->conn_set_policy(c, o);
}

/* A reader of an open connection (conn_query, conn_peer): @h and @out checked, or NULL and *rc. */
static struct tp_conn *conn_read_arg(const char *call, struct pcm_tp_conn *h, const void *out,
				     int *rc)
{
	struct tp_conn *c = conn_arg(call, h, rc);

	if (!c)
		return NULL;
	if (!out) {
		*rc = pcm_tp_set_error(-EINVAL, "%s: out is NULL", call);
		return NULL;
	}
	pthread_mutex_lock(&c->ep->front->lock);
	*rc = ep_state(call, c->ep->front);
	if (*rc == 0 && c->closed)
		*rc = pcm_tp_set_error(-ENOTCONN, "%s: the connection is closed", call);
	pthread_mutex_unlock(&c->ep->front->lock);
	return *rc < 0 ? NULL : c;
}

int pcm_tp_conn_query(struct pcm_tp_conn *h, struct pcm_tp_conn_info *out)
{
	int rc = 0;
	struct tp_conn *c = conn_read_arg("conn_query", h, out, &rc);

	return c ? c->ep->ops->conn_query(c, out) : rc;
}

int pcm_tp_conn_peer(struct pcm_tp_conn *h, struct pcm_tp_peer *out)
{
	int rc = 0;
	struct tp_conn *c = conn_read_arg("conn_peer", h, out, &rc);

	return c ? c->ep->ops->conn_peer(c, out) : rc;
}

/* ---- memory ------------------------------------------------------------------------------------------- */

int pcm_tp_mr_reg(struct pcm_tp_endpoint *ep, void *addr, size_t len, struct pcm_tp_mr **out)
{
	struct tp_region *r = NULL;
	int rc;

	if (!ep)
		return ep_null("mr_reg");
	if (!out)
		return pcm_tp_set_error(-EINVAL, "mr_reg: out is NULL");
	if (!addr || !len)
		return pcm_tp_set_error(-EINVAL, "mr_reg: an empty region (%s)",
					addr ? "len 0" : "addr NULL");
	if ((uintptr_t)addr + len < (uintptr_t)addr)
		return pcm_tp_set_error(-EINVAL, "mr_reg: [%p, +%zu) wraps the address space", addr,
					len);
	rc = ep->ops->region_add(ep, addr, len, &r);
	if (rc < 0)
		return rc;
	r->handle = tp_handle_make(TP_HANDLE_REGION, r, ep);
	pthread_mutex_lock(&ep->front->lock);
	if (r->handle)
		tp_region_link(ep, r);
	pthread_mutex_unlock(&ep->front->lock);
	if (!r->handle) {
		ep->ops->region_remove(r);
		return pcm_tp_set_error(-ENOMEM, "mr_reg: no handle left for the region");
	}
	*out = (struct pcm_tp_mr *)r->handle;
	return 0;
}

int pcm_tp_mr_dereg(struct pcm_tp_mr *h)
{
	int rc = 0;
	struct tp_region *r = region_arg("mr_dereg", h, &rc);
	struct pcm_tp_endpoint *ep;

	if (!r)
		return rc;
	ep = r->ep;
	pthread_mutex_lock(&ep->front->lock);
	if (r->busy) {
		rc = pcm_tp_set_error(-EBUSY,
				      "mr_dereg: %u posted operations use region %p and have "
				      "not completed: poll them first",
				      r->busy, (void *)h);
	} else {
		tp_handle_drop(r->handle);
		tp_region_remove(ep, r);
	}
	pthread_mutex_unlock(&ep->front->lock);
	return rc;
}

void *pcm_tp_mem_alloc(struct pcm_tp_endpoint *ep, size_t len)
{
	struct tp_region *r = NULL;

	if (!ep) {
		ep_null("mem_alloc");
		return NULL;
	}
	if (!len) {
		pcm_tp_set_error(-EINVAL, "mem_alloc: 0 bytes");
		return NULL;
	}
	if (ep->ops->region_alloc(ep, len, &r) < 0)
		return NULL;
	pthread_mutex_lock(&ep->front->lock);
	tp_region_link(ep, r);
	pthread_mutex_unlock(&ep->front->lock);
	return r->addr;
}

void pcm_tp_mem_free(struct pcm_tp_endpoint *ep, void *p)
{
	struct tp_region *r;

	if (!ep) {
		ep_null("mem_free");
		return;
	}
	if (!p)
		return;
	pthread_mutex_lock(&ep->front->lock);
	for (r = ep->regions; r; r = r->next)
		if (!r->handle && !r->free_pending && r->addr == p)
			break;
	if (!r)
		pcm_tp_set_error(-EINVAL, "mem_free: %p is not memory pcm_tp_mem_alloc() gave this "
					  "endpoint (or it was freed already)",
				 p);
	else if (r->busy)
		r->free_pending = true; /* freed when its last operation completes */
	else
		tp_region_remove(ep, r);
	pthread_mutex_unlock(&ep->front->lock);
}

/* ---- data ----------------------------------------------------------------------------------------------- */

static int post(const char *call, enum pcm_tp_op op, struct pcm_tp_conn *h, struct pcm_tp_mr *mh,
		const void *buf, size_t len, uint64_t cookie)
{
	struct tp_region *want = NULL, *r = NULL;
	struct tp_conn *c;
	struct tp_front *f;
	uint64_t slot = 0;
	int rc = 0;

	c = conn_arg(call, h, &rc);
	if (c && mh)
		want = region_arg(call, mh, &rc);
	if (rc < 0)
		return rc;
	f = c->ep->front;
	if (op == PCM_TP_OP_RECV && len > f->limits.max_message_bytes)
		len = f->limits.max_message_bytes; /* no message is longer */
	pthread_mutex_lock(&f->lock);
	rc = conn_state(call, c);
	if (rc == 0 && !buf && len)
		rc = pcm_tp_set_error(-EINVAL, "%s: the buffer is NULL and len %zu", call, len);
	if (rc == 0 && (uintptr_t)buf + len < (uintptr_t)buf)
		rc = pcm_tp_set_error(-EINVAL, "%s: [%p, +%zu) wraps the address space", call, buf,
				      len);
	if (rc == 0 && op == PCM_TP_OP_SEND && len > f->limits.max_message_bytes)
		rc = pcm_tp_set_error(-EMSGSIZE, "%s: %zu bytes, above the longest message (%llu)",
				      call, len, (unsigned long long)f->limits.max_message_bytes);
	if (rc == 0 && !(r = tp_region_find(c->ep, want, buf, len)))
		rc = pcm_tp_set_error(-EINVAL, "%s: [%p, +%zu) is not inside %s", call, buf, len,
				      mh ? "that memory region of this endpoint"
					 : "any region registered or allocated on this endpoint");
	if (rc == 0)
		rc = tp_post_admit(c->ep, op, c, r, cookie, &slot);
	pthread_mutex_unlock(&f->lock);
	if (rc < 0)
		return rc;
	rc = c->ep->ops->post(c, op, r, buf, len, slot);
	if (rc < 0) {
		pthread_mutex_lock(&f->lock);
		tp_post_end(c->ep, tp_post_slot(f, slot, op));
		pthread_mutex_unlock(&f->lock);
	}
	return rc;
}

int pcm_tp_send(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, const void *buf, size_t len,
		uint64_t cookie)
{
	return post("send", PCM_TP_OP_SEND, c, mr, buf, len, cookie);
}

int pcm_tp_recv(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, void *buf, size_t cap,
		uint64_t cookie)
{
	return post("recv", PCM_TP_OP_RECV, c, mr, buf, cap, cookie);
}

/* ---- completions ------------------------------------------------------------------------------------------- */

int pcm_tp_poll(struct pcm_tp_endpoint *ep, struct pcm_tp_completion *out, int max)
{
	if (!ep)
		return ep_null("poll");
	if (max < 0 || (!out && max))
		return pcm_tp_set_error(-EINVAL, "poll: max %d with out %s", max,
					out ? "set" : "NULL");
	return tp_comp_poll(ep, out, max);
}

int pcm_tp_wait(struct pcm_tp_endpoint *ep, int timeout_ms)
{
	return ep ? tp_comp_wait(ep, timeout_ms) : ep_null("wait");
}

int pcm_tp_fd(struct pcm_tp_endpoint *ep)
{
	return ep ? ep->ops->fd(ep) : ep_null("fd");
}
