// SPDX-License-Identifier: MIT
/*
 * plane_engine_figures.c - per-flow figures (the seam's flow_stats()): the
 * core's, read on the engine's thread by a control request
 * (XP_CTL_CONN_INFO) rather than published by the engine, so nothing is
 * added to the per-chunk path and the figures of one connection come from
 * one instant. One request per engine reads every flow on it; its answer
 * serves the reads of the next FIGURES_FRESH_NS, so a `pcmctl flows` of N
 * flows costs pcmd's loop one round trip per engine, not N.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plane_engine_int.h"

/* How long one read of an engine's figures answers flow_stats() (status, stats, flows). */
#define FIGURES_FRESH_NS (10ull * 1000 * 1000)

static int grow_queries(struct pcmd_plane *pl)
{
	struct xp_conn_query *q;
	uint32_t *qf;

	if (pl->queries_cap >= pl->n_flows)
		return 0;
	q = realloc(pl->queries, pl->n_flows * sizeof(*q));
	if (!q)
		return -ENOMEM;
	pl->queries = q;
	qf = realloc(pl->query_flow, pl->n_flows * sizeof(*qf));
	if (!qf)
		return -ENOMEM;
	pl->query_flow = qf;
	pl->queries_cap = pl->n_flows;
	return 0;
}

/* Read the core's figures of every flow on @engine in one control request. */
static int read_figures(struct pcmd_plane *pl, uint32_t engine, uint64_t now_ns)
{
	struct xp_ctl *ctl;
	uint32_t n = 0;
	int rc = grow_queries(pl);

	if (rc < 0)
		return rc;
	for (uint32_t f = 0; f < pl->n_flows; f++) {
		if (!pl->flows[f].used || pl->flows[f].engine != engine)
			continue;
		pl->queries[n] = (struct xp_conn_query){.conn = pl->flows[f].conn};
		pl->query_flow[n++] = f;
	}
	ctl = xp_ctl_new(XP_CTL_CONN_INFO);
	if (!ctl)
		return -ENOMEM;
	ctl->addr = pl->queries;
	ctl->len = n;
	rc = pcmd_eng_ctl_run(pl, engine, ctl);
	free(ctl);
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		struct pcmd_eng_flow *fl = &pl->flows[pl->query_flow[i]];

		fl->figures_ns = now_ns;
		fl->figures_status = pl->queries[i].status;
		fl->info = pl->queries[i].info;
	}
	return rc;
}

int pcmd_eng_flow_stats(struct pcmd_plane *pl, uint32_t f, struct pcmd_flow_measure *out)
{
	struct pcmd_eng_flow *fl = pcmd_eng_flow_of(pl, f);
	uint64_t now = xp_mono_ns();
	int rc;

	if (!fl)
		return -EINVAL;
	if (!fl->figures_ns || now - fl->figures_ns >= FIGURES_FRESH_NS) {
		rc = read_figures(pl, fl->engine, now);
		if (rc < 0)
			return rc;
	}
	if (fl->figures_status < 0)
		return fl->figures_status;
	memset(out, 0, sizeof(*out));
	out->valid = PCMD_FIELD_CWND | PCMD_FIELD_RATE | PCMD_FIELD_RTT | PCMD_FIELD_INFLIGHT |
		     PCMD_FIELD_RETRANSMITS | PCMD_FIELD_RTOS;
	out->cwnd_bytes = fl->info.cwnd_bytes;
	out->rate_bps = fl->info.rate_bps;
	out->srtt_ns = fl->info.srtt_ns;
	out->rttvar_ns = fl->info.rttvar_ns;
	out->in_flight_bytes = fl->info.in_flight_bytes;
	out->retransmits = fl->info.chunks_retx;
	out->rtos = fl->info.rto_fires;
	return 0;
}
