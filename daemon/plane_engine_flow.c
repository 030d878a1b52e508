// SPDX-License-Identifier: MIT
/*
 * plane_engine_flow.c - the engine data plane's flows: each an engine's
 * connection that pcmd (or a listener's backlog) holds, found by pcmd's flow
 * id or by (engine, connection id); its close sent to the engine, and freed
 * when the engine reports the connection closed (the only completions that
 * come back here: sends and receives complete through their port, control
 * requests are waited for). A region holds a count of the flows and
 * listeners on it; when pcmd released it and the last of them goes, its port
 * and registration go and REGION_RELEASED is reported.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_softnic.h"
#include "log.h"
#include "plane_engine_int.h"

int pcmd_eng_conn_flow_alloc(struct pcmd_plane *pl, uint32_t i)
{
	pl->conn_flow[i] = malloc(pl->max_conns * sizeof(uint32_t));
	if (!pl->conn_flow[i])
		return -ENOMEM;
	memset(pl->conn_flow[i], 0xff, pl->max_conns * sizeof(uint32_t));
	return 0;
}

uint32_t pcmd_eng_flow_new(struct pcmd_plane *pl, struct pcmd_plane_region *r, uint32_t conn)
{
	uint32_t f;

	for (f = 0; f < pl->n_flows; f++)
		if (!pl->flows[f].used)
			break;
	if (f == pl->n_flows) {
		uint32_t cap = pl->n_flows;

		pl->flows = pcmd_eng_grow(pl->flows, &cap, sizeof(*pl->flows));
		memset(pl->flows + pl->n_flows, 0, (cap - pl->n_flows) * sizeof(*pl->flows));
		pl->n_flows = cap;
	}
	pl->flows[f] =
	    (struct pcmd_eng_flow){.used = true, .engine = r->engine, .conn = conn, .r = r};
	pl->conn_flow[r->engine][conn] = f;
	r->refs++;
	return f;
}

struct pcmd_eng_flow *pcmd_eng_flow_of(struct pcmd_plane *pl, uint32_t f)
{
	if (f >= pl->n_flows || !pl->flows[f].used || !pl->flows[f].known) {
		pcmd_err("data plane: pcmd named flow %u, which it does not hold", f);
		return NULL;
	}
	return &pl->flows[f];
}

void pcmd_eng_region_try_release(struct pcmd_plane *pl, struct pcmd_plane_region *r)
{
	struct xp_ctl *ctl;

	if (!r->releasing || r->refs)
		return;
	pcmd_eng_port_remove(pl,
			     r); /* the engine stops serving the client before its memory goes */
	ctl = xp_ctl_new(XP_CTL_MR_DEREG);
	if (!ctl) {
		pcmd_err("data plane: out of memory releasing a region");
		abort();
	}
	ctl->mr = r->mr;
	if (pcmd_eng_ctl_run(pl, r->engine, ctl) < 0)
		pcmd_err("data plane: engine %u refused to release region %u", r->engine, r->mr);
	free(ctl);
	if (pl->fabric && !pl->detaching[r->engine]) {
		pl->detaching[r->engine] = true;
		pl->n_detaching++;
	}
	pcmd_eng_emit_simple(pl, PCMD_PLANE_EV_REGION_RELEASED, 0, r->token, 0);
	pcmd_eng_kick(pl);
	pl->regions_live--;
	free(r);
}

static void flow_free(struct pcmd_plane *pl, uint32_t f)
{
	struct pcmd_eng_flow *fl = &pl->flows[f];
	struct pcmd_plane_region *r = fl->r;

	pl->conn_flow[fl->engine][fl->conn] = NO_FLOW;
	*fl = (struct pcmd_eng_flow){0};
	r->refs--;
	pcmd_eng_region_try_release(pl, r);
}

void pcmd_eng_flow_close(struct pcmd_plane *pl, uint32_t f, bool abort_now)
{
	struct pcmd_eng_flow *fl = &pl->flows[f];
	struct xp_cmd cmd = {.op = XP_CMD_CLOSE,
			     .conn = fl->conn,
			     .close_mode = abort_now ? XP_CLOSE_ABORT : XP_CLOSE_GRACEFUL};

	fl->closing = true;
	pcmd_eng_submit(pl, fl->engine, &cmd);
}

void pcmd_eng_close(struct pcmd_plane *pl, uint32_t f, bool abort_now)
{
	struct pcmd_eng_flow *fl = pcmd_eng_flow_of(pl, f);

	if (fl && !fl->closing)
		pcmd_eng_flow_close(pl, f, abort_now);
}

uint64_t pcmd_eng_flow_handle(struct pcmd_plane *pl, uint32_t f)
{
	struct pcmd_eng_flow *fl = pcmd_eng_flow_of(pl, f);

	return fl ? fl->conn : UINT32_MAX;
}

static void on_comp(struct pcmd_plane *pl, uint32_t engine, const struct xp_engine_comp *c)
{
	uint32_t f = c->conn < pl->max_conns ? pl->conn_flow[engine][c->conn] : NO_FLOW;
	struct pcmd_eng_flow *fl = f != NO_FLOW ? &pl->flows[f] : NULL;

	/* Control requests are waited for, not notified; sends and receives
	 * complete through their port: only closes come back here. */
	if (c->kind != XP_ECOMP_CLOSE || !fl)
		return;
	if (fl->known)
		pcmd_eng_emit_simple(pl, PCMD_PLANE_EV_CLOSED, 0, fl->token, f);
	flow_free(pl, f);
}

uint32_t pcmd_eng_drain(struct pcmd_plane *pl, uint32_t e)
{
	struct xp_engine_comp c[COMP_BATCH];
	uint32_t n, total = 0;

	do {
		n = xp_engine_poll(pl->engines[e], c, COMP_BATCH);
		for (uint32_t i = 0; i < n; i++)
			on_comp(pl, e, &c[i]);
		total += n;
	} while (n == COMP_BATCH);
	return total;
}

uint32_t pcmd_eng_take_completions(struct pcmd_plane *pl)
{
	uint32_t total = 0;

	for (uint32_t e = 0; e < pl->n_engines; e++)
		if (pl->engines[e]) /* softnic: NULL for a free host */
			total += pcmd_eng_drain(pl, e);
	if (total && pl->fabric)
		pcmd_fabric_kick(pl->fabric); /* room in the rings: completions waiting may go */
	return total;
}
