// SPDX-License-Identifier: MIT
/*
 * group.c - PDC groups ("PDC groups and the transmit scheduler"): their life,
 * and the PCM packages they feed.
 *
 * With PDCGroupsEnabled every PDC of a NIC to one peer, sending or receiving,
 * joins one group; without it each PDC has its own. A group lives while any
 * of its PDCs does, so a message to a peer with no other message in flight,
 * in either direction, starts a new group: a new window from the policy's
 * initial value, InitialBaseRTT, and fresh load-balancing state.
 *
 * Each group is one PCM flow of its policy's package and, when the scenario
 * names one, of an LB package run beside it (disjoint controls; cc.c). Every
 * event carries IN_FLIGHT, TX_BACKLOG_BYTES, FLOW_SEED (a hash of the run's
 * seed and the group) and BASE_RTT; the controls CWND (window), RATE
 * (pacing), EV (entropy of the next packet) and CUMULATIVE_CREDIT (receiver
 * credit) are enforced, each from the package that drives it, and a package
 * with an ELAPSED_TIME trigger is ticked every PcmTickInterval.
 */
#include <stddef.h>
#include <stdlib.h>

#include "nic.h"

uint32_t uet_policy_for(const struct uet_scenario *scn, uint32_t src, uint32_t dst)
{
	for (uint32_t i = 0; i < scn->n_rules; i++) {
		const struct uet_policy_rule *r = &scn->rules[i];

		if ((r->src < 0 || (uint32_t)r->src == src) &&
		    (r->dst < 0 || (uint32_t)r->dst == dst))
			return r->policy;
	}
	return 0;
}

struct uet_group *uet_group_find(struct uet_nic *nic, uint32_t peer)
{
	for (uint32_t i = 0; i < nic->n_groups; i++)
		if (nic->groups[i]->peer == peer)
			return nic->groups[i];
	return NULL;
}

/* A group's PCM_SIG_FLOW_SEED: the run's seed and the group's identity, mixed; never 0. */
static uint64_t flow_seed(const struct uet_nics *ns, uint32_t nic, uint32_t peer, uint32_t id)
{
	uint64_t x = uet_mix64(ns->seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)nic << 40) ^
			       ((uint64_t)peer << 20) ^ id);

	return x ? x : 1;
}

struct uet_group *uet_group_get(struct uet_nics *ns, struct uet_nic *nic, uint32_t peer,
				int policy)
{
	struct uet_group *g = NULL;

	if (ns->cfg.pdc_groups)
		g = uet_group_find(nic, peer);
	if (g)
		return g;
	if (nic->n_groups == nic->cap_groups) {
		uint32_t cap = nic->cap_groups ? nic->cap_groups * 2 : 4;
		struct uet_group **a = uet_mem_realloc(ns->mem, nic->groups,
						       nic->cap_groups * sizeof(*a), cap * sizeof(*a));

		if (!a)
			goto oom;
		nic->groups = a;
		nic->cap_groups = cap;
	}
	g = uet_mem_zalloc(ns->mem, sizeof(*g));
	if (!g)
		goto oom;
	g->nic = nic;
	g->peer = peer;
	g->id = ns->next_group_id++;
	g->base_rtt_ps = ns->cfg.initial_base_rtt_ps;
	g->cc.ctl.cwnd = ns->cfg.initial_cwnd_bytes;
	g->cc.ctl.rate = PCM_RATE_ONE;
	g->credit_granted = ns->cfg.credit_speculative_bytes;
	g->cnp_last_ps = UINT64_MAX;
	g->flow_seed = flow_seed(ns, nic->id, peer, g->id);
	if (uet_cc_attach(&ns->cc, &g->cc,
			  policy >= 0 ? (uint32_t)policy : uet_policy_for(ns->scn, nic->id, peer),
			  nic->id, uet_now(ns)) < 0) {
		uet_mem_free(ns->mem, g, sizeof(*g));
		goto oom;
	}
	nic->groups[nic->n_groups++] = g;
	return g;
oom:
	ns->oom = true;
	return NULL;
}

bool uet_group_release_if_dead(struct uet_nics *ns, struct uet_group *g)
{
	struct uet_nic *nic = g->nic;

	if (g->n_tx || g->n_rx || g->n_doorbell)
		return true;
	if (g->inflight || g->backlog_bytes || g->backlog_pkts) {
		ns->leaked_groups++;
		ns->leaked_inflight += g->inflight;
		ns->leaked_backlog += g->backlog_bytes;
	}
	uet_rq_remove(nic, g);
	uet_gqueue_remove(&nic->pfw, g);
	uet_gqueue_remove(&nic->crr, g);
	if (g->pace_ev)
		uet_des_cancel(ns->des, g->pace_ev);
	if (g->tick_ev)
		uet_des_cancel(ns->des, g->tick_ev);
	if (g->credit_retry_ev)
		uet_des_cancel(ns->des, g->credit_retry_ev);
	if (g->cnp_ev)
		uet_des_cancel(ns->des, g->cnp_ev);
	uet_cc_detach(&g->cc);
	for (uint32_t i = 0; i < nic->n_groups; i++) {
		if (nic->groups[i] == g) {
			nic->groups[i] = nic->groups[--nic->n_groups];
			break;
		}
	}
	uet_mem_free(ns->mem, g, sizeof(*g));
	return false;
}

void uet_group_start_tick(struct uet_nics *ns, struct uet_group *g)
{
	if (uet_group_packages_where(g, uet_cc_has_timer) && !g->tick_ev && ns->cfg.tick_ps)
		g->tick_ev = uet_nic_schedule(ns, uet_now(ns) + ns->cfg.tick_ps, UET_EV_TICK, g, 0);
}

void uet_nic_tick(struct uet_nics *ns, struct uet_group *g)
{
	struct pcm_event ev = { .valid = 0 };

	g->tick_ev = NULL;
	if (!g->n_tx)
		return; /* restarted by the next message */
	if (uet_group_feed_to(ns, g, uet_group_packages_where(g, uet_cc_has_timer), &ev))
		uet_nic_kick(ns, g);
	uet_group_start_tick(ns, g);
}
