// SPDX-License-Identifier: MIT
/*
 * api.c - libpcmtransport's public calls: pick a backend at endpoint open,
 * then dispatch every call through the endpoint's backend ops (backend.h).
 * The backends are reached only through their ops tables; the error texts
 * they share are tp_error.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "tp_error.h"

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
 * The backend: cfg->backend unless AUTO; then $PCM_TRANSPORT ("daemon",
 * "inproc", or "auto"/unset: the daemon when its socket exists, else in process).
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
	else if (env && strcmp(env, "inproc") == 0)
		*out = PCM_TP_BACKEND_INPROC;
	else if (!env || !env[0] || strcmp(env, "auto") == 0)
		*out = access(daemon_socket(cfg), F_OK) == 0 ? PCM_TP_BACKEND_DAEMON
							      : PCM_TP_BACKEND_INPROC;
	else
		return pcm_tp_set_error(-EINVAL,
					"PCM_TRANSPORT='%s': not one of daemon, inproc, auto", env);
	return 0;
}

int pcm_tp_endpoint_open(const struct pcm_tp_config *cfg, struct pcm_tp_endpoint **out)
{
	enum pcm_tp_backend b = PCM_TP_BACKEND_INPROC;
	const struct pcm_tp_backend_ops *ops;
	int rc;

	pcm_tp_clear_error();
	if (!out || !cfg)
		return pcm_tp_set_error(-EINVAL, "no configuration, or no place for the endpoint");
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
	return ep && (out || max == 0) && max >= 0 ? ep->ops->poll(ep, out, max) : -EINVAL;
}

int pcm_tp_wait(struct pcm_tp_endpoint *ep, int timeout_ms)
{
	return ep ? ep->ops->wait(ep, timeout_ms) : -EINVAL;
}

int pcm_tp_fd(struct pcm_tp_endpoint *ep)
{
	return ep ? ep->ops->fd(ep) : -EINVAL;
}
