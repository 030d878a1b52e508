// SPDX-License-Identifier: MIT
/*
 * scenario.c - scenarios as values: the defaults of every setting, the LB
 * package, copies, and where a key was in its file (scenario_read.c reads
 * files into them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcm_units.h"
#include "scenario.h"

void uet_nic_cfg_defaults(struct uet_nic_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->rdma_data_mss = 4096;
	c->ack_every_nth = 1;
	c->ack_first = true;
	c->ack_last = true;
	c->initial_rto_ps = 100 * PCM_UNITS_PS_PER_US;
	c->max_rto_backoff = 5;
	c->fixed_rexmit_enable = false;
	c->fixed_rexmit_ps = 100 * PCM_UNITS_PS_PER_US;
	c->pdc_groups = true;
	c->prefetch_enable = false;
	c->prefetch_bytes = 131072;
	c->trimming = false;
	c->trimmable_retx = true;
	c->data_rate_bps = 400000000000ull;
	c->initial_base_rtt_ps = 14 * PCM_UNITS_PS_PER_US;
	c->transport_stats = true;
	c->stats_interval_ps = 10 * PCM_UNITS_PS_PER_US;
	c->event_logging = false;
	c->uet_monitor = false;
	c->lane_bps = 31520000000ull;
	c->lane_count = 16;
	c->egress_pool_bytes = 32768;
	c->rx_pool_bytes = 1u << 20;
	c->doorbell_ps = 15000;
	c->initial_cwnd_bytes = 175284;
	c->credit_speculative_bytes = UINT64_MAX;
	c->cnp_interval_ps = 50 * PCM_UNITS_PS_PER_US;
	c->tx_event_burst = 16;
	c->tick_ps = 1 * PCM_UNITS_PS_PER_US;
	c->credit_tick_ps = 0;
}

void uet_scenario_defaults(struct uet_scenario *scn)
{
	memset(scn, 0, sizeof(*scn));
	snprintf(scn->name, sizeof(scn->name), "unnamed");
	scn->seed = 1;
	scn->topo.kind = UET_TOPO_INCAST;
	scn->topo.senders = 8;
	scn->topo.k = 4;
	scn->topo.oversubscription = 1.0;
	scn->topo.link_rate_bps = 100000000000ull;
	scn->topo.link_delay_ps = 1 * PCM_UNITS_PS_PER_US;
	scn->topo.ecn_kmin_bytes = UINT64_MAX;
	scn->topo.ecn_kmax_bytes = UINT64_MAX;
	scn->topo.uet_policy = true;
	scn->topo.switch_trimming = true;
	uet_nic_cfg_defaults(&scn->nic);
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "swift");
	scn->n_policies = 1;
	scn->stop_ps = 1000000 * PCM_UNITS_PS_PER_US; /* 1 s */
}

int uet_scenario_set_lb(struct uet_scenario *scn, const char *name)
{
	bool none = strcmp(name, "none") == 0;

	if (strlen(name) >= sizeof(scn->policies[0]))
		return -ENAMETOOLONG;
	if (!scn->has_lb) {
		if (none)
			return 0;
		if (scn->n_policies >= UET_MAX_POLICIES)
			return -ENOSPC;
		scn->lb_policy = scn->n_policies++;
	}
	snprintf(scn->policies[scn->lb_policy], sizeof(scn->policies[0]), "%s", name);
	scn->has_lb = !none;
	return 0;
}

void uet_scenario_free(struct uet_scenario *scn)
{
	if (!scn)
		return;
	free(scn->flows);
	free(scn->marks);
	free(scn);
}

struct uet_scenario *uet_scenario_dup(const struct uet_scenario *scn)
{
	struct uet_scenario *d = malloc(sizeof(*d));

	if (!d)
		return NULL;
	*d = *scn;
	d->flows = NULL;
	d->marks = NULL;
	d->cap_marks = scn->n_marks;
	if (scn->n_flows) {
		d->flows = malloc(scn->n_flows * sizeof(*d->flows));
		if (!d->flows)
			goto err;
		memcpy(d->flows, scn->flows, scn->n_flows * sizeof(*d->flows));
	}
	if (scn->n_marks) {
		d->marks = malloc(scn->n_marks * sizeof(*d->marks));
		if (!d->marks)
			goto err;
		memcpy(d->marks, scn->marks, scn->n_marks * sizeof(*d->marks));
	}
	return d;
err:
	uet_scenario_free(d);
	return NULL;
}

const char *uet_scenario_where(const struct uet_scenario *scn, const char *key, char *buf,
			       size_t len)
{
	const char *file = scn->path[0] ? scn->path : scn->name;

	for (uint32_t i = 0; i < scn->n_marks; i++) {
		const struct uet_scenario_mark *m = &scn->marks[i];

		if (strcmp(m->key, key) == 0) {
			snprintf(buf, len, "%s:%u:%u: %s", file, m->line, m->col, key);
			return buf;
		}
	}
	snprintf(buf, len, "%s: %s", file, key);
	return buf;
}
