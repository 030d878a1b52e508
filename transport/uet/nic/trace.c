// SPDX-License-Identifier: MIT
/*
 * trace.c - what the NICs show the outside as they run: every packet to the
 * monitor hook and the uet-monitor record, events to uet-events, the
 * periodic uet-transport-stats and flow rows, and the checking build's
 * invariant failures (UET_CHECK()), counted with the first one's place for
 * the leak audit (audit.c) to report. Every file of the NIC calls down to
 * it; it calls none of them.
 */
#include <stdio.h>

#include "nic.h"

void uet_nic_monitor(struct uet_nics *ns, const struct uet_pkt *pkt, uint32_t at, bool rx)
{
	struct uet_pkt_view v;

	uet_pkt_view(pkt, uet_now(ns), at, rx, &v);
	if (ns->monitor)
		ns->monitor(ns->monitor_ctx, &v);
	if (ns->rec.monitor && ns->cfg.uet_monitor)
		uet_rec_monitor_row(ns->rec.monitor, &v, ns->nics[v.src].ip, ns->nics[v.dst].ip);
}

void uet_nic_log(struct uet_nics *ns, uint32_t nic, const char *what, uint32_t pdc,
		 uint32_t peer, uint64_t bytes)
{
	if (ns->rec.events && ns->cfg.event_logging)
		uet_rec_event_row(ns->rec.events, uet_now(ns), nic, ns->nics[nic].ip, what, pdc,
				  ns->nics[peer].ip, bytes);
}

void uet_nic_stats_rows(struct uet_nics *ns)
{
	FILE *f = ns->rec.transport_stats;

	if (!f || !ns->cfg.transport_stats)
		return;
	for (uint32_t h = 0; h < ns->n_hosts; h++) {
		struct uet_nic *nic = &ns->nics[h];

		uet_rec_stats_row(f, uet_now(ns), h, nic->ip, nic->st, nic->st_last);
	}
}

void uet_nic_flow_rows(struct uet_nics *ns)
{
	FILE *f = ns->rec.flows;

	if (!f)
		return;
	for (uint32_t h = 0; h < ns->n_hosts; h++) {
		const struct uet_nic *nic = &ns->nics[h];

		for (uint32_t i = 0; i < nic->n_groups; i++) {
			const struct uet_group *g = nic->groups[i];
			struct uet_flow_row r = {
				.t_ps = uet_now(ns),
				.nic = h,
				.peer = g->peer,
				.group = g->id,
				.policy = g->cc.pol.cc ? g->cc.pol.cc->pkg->name : "none",
				.cwnd_bytes = g->cc.ctl.cwnd,
				.rate = g->cc.ctl.rate,
				.inflight_bytes = g->inflight,
				.backlog_bytes = g->backlog_bytes,
				.base_rtt_ps = g->base_rtt_ps,
				.last_rtt_ps = g->last_rtt_ps,
				.feeds = g->cc.pol.feeds,
			};

			if (g->n_tx)
				uet_rec_flow_row(f, &r);
		}
	}
}

void uet_check_fail(struct uet_nics *ns, const char *file, int line, const char *what)
{
	if (!ns->check_failures++)
		snprintf(ns->check_msg, sizeof(ns->check_msg), "%s:%d: %s, at %llu ps", file, line,
			 what, (unsigned long long)uet_now(ns));
}
