// SPDX-License-Identifier: MIT
/*
 * port.c - an engine's port table (port.h): added and removed by control
 * requests on the runner's thread, served once per run, armed before the
 * runner sleeps.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine_int.h"

int xp_engine_port_add(struct xp_engine *e, struct xp_port *port)
{
	if (!port || !port->ops || !port->ops->intake || !port->ops->complete ||
	    !port->ops->flush || !port->ops->arm)
		return -EINVAL;
	if (e->n_ports == e->ports_cap) {
		uint32_t cap = e->ports_cap ? e->ports_cap * 2 : 8;
		struct xp_port **p = realloc(e->ports, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		e->ports = p;
		e->ports_cap = cap;
	}
	port->slot = e->n_ports;
	e->ports[e->n_ports++] = port;
	return 0;
}

int xp_engine_port_del(struct xp_engine *e, struct xp_port *port)
{
	uint32_t s = port ? port->slot : UINT32_MAX;

	if (s >= e->n_ports || e->ports[s] != port)
		return -ENOENT;
	e->ports[s] = e->ports[--e->n_ports];
	e->ports[s]->slot = s;
	/* Operations still outstanding complete into nothing: the owner is going away. */
	xp_engine_ops_drop_port(e, port);
	return 0;
}

uint32_t xp_engine_ports_intake(struct xp_engine *e, uint64_t now)
{
	uint32_t work = 0;

	for (uint32_t i = 0; i < e->n_ports; i++)
		work += e->ports[i]->ops->intake(e->ports[i]->arg, e, e->ports[i], now);
	return work;
}

void xp_engine_ports_flush(struct xp_engine *e)
{
	for (uint32_t i = 0; i < e->n_ports; i++)
		e->ports[i]->ops->flush(e->ports[i]->arg);
}

bool xp_engine_ports_arm(struct xp_engine *e)
{
	bool waiting = false;

	/* Arm every port, even after one said yes: each must ask for its doorbell. */
	for (uint32_t i = 0; i < e->n_ports; i++)
		waiting |= e->ports[i]->ops->arm(e->ports[i]->arg);
	return waiting;
}

void xp_engine_port_post(struct xp_engine *e, struct xp_port *port, const struct xp_cmd *cmd,
			 uint64_t now_ns)
{
	xp_engine_post(e, cmd, port, now_ns);
}

bool xp_engine_conn_aborted(const struct xp_engine *e, uint32_t conn)
{
	return conn < e->cfg.core.max_conns && e->conns[conn].aborted;
}

int xp_engine_doorbell_fd(const struct xp_engine *e)
{
	return e->cfg.progress == XP_PROGRESS_THREAD ? e->efd : -1;
}
