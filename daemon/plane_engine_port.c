// SPDX-License-Identifier: MIT
/*
 * plane_engine_port.c - ports in the engine data plane: each region has a
 * port (port.h) on its engine that runs the client's descriptor path
 * (intake.h) on the engine's runner, so posts go from the client's
 * submission ring to the core and completions into the client's completion
 * ring without pcmd's loop. The client's submission doorbell is a dup of the
 * fd the runner sleeps on (the engine thread's eventfd; on softnic the
 * fabric thread's). call() runs pcmd's loop's work for the port (completion
 * slots, CONNECT and ACCEPT completions) on that runner.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fabric_softnic.h"
#include "log.h"
#include "pcmd_region.h"
#include "plane_engine_int.h"
#include "xp_range.h"

/* The seam's status for a post's completion: a local abort reads -ECONNABORTED. */
static int seam_status(bool aborted, int status)
{
	return aborted && status == -ECANCELED ? -ECONNABORTED : status;
}

static int port_post(void *arg, uint64_t handle, uint8_t op, uint64_t off, uint64_t len,
		     uint64_t token)
{
	struct pcmd_eng_port *p = arg;
	struct xp_cmd cmd = {.op = op == PCMD_OP_SEND ? XP_CMD_SEND : XP_CMD_RECV,
			     .conn = (uint32_t)handle,
			     .mr = p->mr,
			     .len = len,
			     .cookie = token};

	if (!xp_range_within(off, len, p->bytes))
		return -EFAULT; /* pcmd checked it already: never reached */
	cmd.addr = p->base + off;
	/* the engine checks the connection and the region again; one completion follows */
	xp_engine_port_post(p->e, &p->xp, &cmd, p->now_ns);
	return 0;
}

static uint32_t port_intake(void *arg, struct xp_engine *e, struct xp_port *xp, uint64_t now_ns)
{
	struct pcmd_eng_port *p = arg;

	(void)e;
	(void)xp;
	p->now_ns = now_ns;
	return p->pcmd.intake(p->pcmd.arg, port_post, p);
}

static void port_complete(void *arg, const struct xp_engine_comp *c)
{
	struct pcmd_eng_port *p = arg;

	p->pcmd.complete(p->pcmd.arg, c->cookie,
			 seam_status(xp_engine_conn_aborted(p->e, c->conn), c->status), c->bytes);
}

static void port_flush(void *arg)
{
	struct pcmd_eng_port *p = arg;

	p->pcmd.flush(p->pcmd.arg);
}

static bool port_arm(void *arg)
{
	struct pcmd_eng_port *p = arg;

	return p->pcmd.arm(p->pcmd.arg);
}

static const struct xp_port_ops eng_port_ops = {
    .intake = port_intake,
    .complete = port_complete,
    .flush = port_flush,
    .arm = port_arm,
};

/* The fd that wakes whoever runs @r's engine: its thread, or the fabric's. */
static int runner_doorbell(struct pcmd_plane *pl, struct pcmd_plane_region *r)
{
	if (pl->fabric)
		return pcmd_fabric_doorbell_fd(pl->fabric);
	return xp_engine_doorbell_fd(pl->engines[r->engine]);
}

int pcmd_eng_port_add(struct pcmd_plane *pl, struct pcmd_plane_region *r,
		      const struct pcmd_plane_port *port, int *doorbell_fd)
{
	struct pcmd_eng_port *p;
	struct xp_ctl *ctl;
	int fd, rc;

	if (r->port)
		return -EEXIST;
	fd = runner_doorbell(pl, r);
	fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd < 0)
		return -errno ? -errno : -EBADF;
	p = calloc(1, sizeof(*p));
	ctl = xp_ctl_new(XP_CTL_PORT_ADD);
	if (!p || !ctl) {
		free(p);
		free(ctl);
		close(fd);
		return -ENOMEM;
	}
	*p = (struct pcmd_eng_port){.xp = {.ops = &eng_port_ops, .arg = p},
				    .pcmd = *port,
				    .e = pl->engines[r->engine],
				    .mr = r->mr,
				    .base = (uint64_t)(uintptr_t)r->base,
				    .bytes = r->bytes};
	ctl->addr = &p->xp;
	rc = pcmd_eng_ctl_run(pl, r->engine, ctl);
	free(ctl);
	if (rc < 0) {
		free(p);
		close(fd);
		return rc;
	}
	r->port = p;
	*doorbell_fd = fd;
	return 0;
}

void pcmd_eng_port_remove(struct pcmd_plane *pl, struct pcmd_plane_region *r)
{
	struct xp_ctl *ctl;

	if (!r->port)
		return;
	ctl = xp_ctl_new(XP_CTL_PORT_DEL);
	if (!ctl) {
		pcmd_err("data plane: out of memory removing a port");
		abort(); /* the engine would keep serving memory about to be unmapped */
	}
	ctl->addr = &r->port->xp;
	if (pcmd_eng_ctl_run(pl, r->engine, ctl) < 0)
		pcmd_err("data plane: engine %u did not hold region %u's port", r->engine, r->mr);
	free(ctl);
	free(r->port);
	r->port = NULL;
}

int pcmd_eng_call(struct pcmd_plane *pl, struct pcmd_plane_region *r, int (*fn)(void *arg),
		  void *arg)
{
	struct xp_ctl *ctl;
	int rc;

	if (!r->port)
		return fn(arg); /* nothing of the region runs on the engine */
	ctl = xp_ctl_new(XP_CTL_CALL);
	if (!ctl)
		return -ENOMEM;
	ctl->call = fn;
	ctl->call_arg = arg;
	rc = pcmd_eng_ctl_run(pl, r->engine, ctl);
	free(ctl);
	return rc;
}
