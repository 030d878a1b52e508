// SPDX-License-Identifier: MIT
/*
 * api.c - libpcmtransport's public calls: pick a backend at endpoint open,
 * then dispatch every call through the endpoint's backend ops (backend.h).
 * The error texts (pcm_tp_strerror(), pcm_tp_last_error()) live here, once
 * for every backend.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static _Thread_local char last_error[512];

int pcm_tp_set_error(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return rc;
}

const char *pcm_tp_last_error(void)
{
	return last_error;
}

/* The backends built into this library, by enum pcm_tp_backend. */
static const struct pcm_tp_backend_ops *backend_of(enum pcm_tp_backend b)
{
	switch (b) {
	case PCM_TP_BACKEND_INPROC:
		return &pcm_tp_inproc_ops;
	default:
		return NULL;
	}
}

static enum pcm_tp_backend choose(const struct pcm_tp_config *cfg)
{
	const char *env = getenv("PCM_TRANSPORT");

	if (cfg && cfg->backend != PCM_TP_BACKEND_AUTO)
		return cfg->backend;
	return env && strcmp(env, "daemon") == 0 ? PCM_TP_BACKEND_DAEMON : PCM_TP_BACKEND_INPROC;
}

int pcm_tp_endpoint_open(const struct pcm_tp_config *cfg, struct pcm_tp_endpoint **out)
{
	enum pcm_tp_backend b;
	const struct pcm_tp_backend_ops *ops;

	last_error[0] = '\0';
	if (!out)
		return pcm_tp_set_error(-EINVAL, "no place for the endpoint");
	b = choose(cfg);
	ops = backend_of(b);
	if (!ops)
		return pcm_tp_set_error(-EOPNOTSUPP,
					"backend %d (%s) is not built into this library", (int)b,
					b == PCM_TP_BACKEND_DAEMON ? "daemon" : "unknown");
	return ops->endpoint_open(cfg, out);
}

void pcm_tp_endpoint_close(struct pcm_tp_endpoint *ep)
{
	if (ep)
		ep->ops->endpoint_close(ep);
}

int pcm_tp_listen(struct pcm_tp_endpoint *ep, const char *addr)
{
	return ep ? ep->ops->listen(ep, addr) : -EINVAL;
}

int pcm_tp_connect(struct pcm_tp_endpoint *ep, const char *addr, const struct pcm_tp_conn_opts *o,
		   uint64_t cookie)
{
	return ep ? ep->ops->connect(ep, addr, o, cookie) : -EINVAL;
}

int pcm_tp_accept(struct pcm_tp_endpoint *ep, uint64_t cookie)
{
	return ep ? ep->ops->accept(ep, cookie) : -EINVAL;
}

int pcm_tp_conn_close(struct pcm_tp_conn *c)
{
	return c ? c->ep->ops->conn_close(c) : -EINVAL;
}

int pcm_tp_conn_set_policy(struct pcm_tp_conn *c, const struct pcm_tp_conn_opts *o)
{
	return c && o ? c->ep->ops->conn_set_policy(c, o) : -EINVAL;
}

int pcm_tp_mr_reg(struct pcm_tp_endpoint *ep, void *addr, size_t len, struct pcm_tp_mr **out)
{
	return ep && out ? ep->ops->mr_reg(ep, addr, len, out) : -EINVAL;
}

int pcm_tp_mr_dereg(struct pcm_tp_mr *mr)
{
	return mr ? mr->ep->ops->mr_dereg(mr) : -EINVAL;
}

void *pcm_tp_mem_alloc(struct pcm_tp_endpoint *ep, size_t len)
{
	return ep ? ep->ops->mem_alloc(ep, len) : NULL;
}

void pcm_tp_mem_free(struct pcm_tp_endpoint *ep, void *p)
{
	if (ep)
		ep->ops->mem_free(ep, p);
}

int pcm_tp_send(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, const void *buf, size_t len,
		uint64_t cookie)
{
	return c ? c->ep->ops->send(c, mr, buf, len, cookie) : -EINVAL;
}

int pcm_tp_recv(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, void *buf, size_t cap,
		uint64_t cookie)
{
	return c ? c->ep->ops->recv(c, mr, buf, cap, cookie) : -EINVAL;
}

int pcm_tp_poll(struct pcm_tp_endpoint *ep, struct pcm_tp_completion *out, int max)
{
	return ep && out && max >= 0 ? ep->ops->poll(ep, out, max) : -EINVAL;
}

int pcm_tp_wait(struct pcm_tp_endpoint *ep, int timeout_ms)
{
	return ep ? ep->ops->wait(ep, timeout_ms) : -EINVAL;
}

int pcm_tp_fd(struct pcm_tp_endpoint *ep)
{
	return ep ? ep->ops->fd(ep) : -EINVAL;
}

const char *pcm_tp_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -EAGAIN:
		return "a queue is full (commands, or the connection's queue of operations): poll "
		       "completions, then retry";
	case -ECONNABORTED:
		return "the connection was closed locally before this finished";
	case -ECONNRESET:
		return "the peer closed or reset the connection, or went away";
	case -ECONNREFUSED:
		return "nothing listens at that address";
	case -EADDRINUSE:
		return "that address is already listened on";
	case -EMSGSIZE:
		return "the message is longer than the receive buffer or the largest message "
		       "(4,096 chunks)";
	case -ENOTCONN:
		return "the connection is not established (or already closed)";
	case -ETIMEDOUT:
		return "timed out (no progress on the connection, or the wait's timeout)";
	case -EINVAL:
		return "an invalid argument (a buffer outside its memory region, a bad option)";
	case -ENOENT:
		return "no such policy package, device or connection";
	case -ENODEV:
		return "no such datapath or RDMA device";
	case -ENOTSUP:
		return "the datapath lacks a signal or control the policy needs";
	case -EOPNOTSUPP:
		return "not supported by this backend or datapath";
	case -ENOSPC:
		return "an engine table is full (connections, memory regions)";
	case -ENOMEM:
		return "out of memory (or, with verbs, the memlock limit is too low)";
	case -EPERM:
		return "permission denied (RDMA device or pcmd)";
	case -EPROTO:
		return "the peer or pcmd spoke something this library does not understand";
	case -EBADMSG:
		return "a malformed connection blob from the peer";
	case -ESHUTDOWN:
		return "the endpoint or pcmd is shutting down";
	case -EIO:
		return "the datapath reported a failed write";
	default:
		return err < 0 ? strerror(-err) : "not an error code";
	}
}
