// SPDX-License-Identifier: MIT
/*
 * cc.c - the NIC's congestion control and load balancing as PCM handler
 * packages.
 *
 * Each policy of a run gets one synchronous shell (checked against the "uet"
 * target, so a package needing what the NIC cannot measure or enforce is
 * rejected by name) with one flow record per live PDC group; a group takes a
 * record when it is created and its record is re-initialised, so a new group
 * starts from the package's initial window, as a new UET group does.
 *
 * The controls a group obeys are kept apart from the record (struct uet_ctl):
 * - synchronous mode: they are the record's controls after each feed;
 * - asynchronous mode with a scheduling delay of N events: the handler still
 *   runs through the synchronous pipeline when its trigger fires, but its
 *   outputs reach the datapath N feeds (ACK, NACK, timeout, TX or LB events of
 *   that group, timer ticks included) later, through a delay line of N + 1
 *   control sets. This is the paper's model of a control-plane worker that is
 *   N datapath events behind, without threads, so runs stay deterministic.
 *
 * A package that drives CUMULATIVE_CREDIT (EQDS) runs at the receiver only,
 * one record per receiving NIC (flow location = destination), fed each
 * sender's requests and ticked while demand is outstanding; its credit is
 * read from the record directly (no delay line). Sender groups of such a
 * policy have no record: they are only credit-gated.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target.h"
#include "uet_int.h"

#define BIT(t) ((pcm_uint)1 << (t))

int uet_cc_init(struct uet_sim *s, const struct pcm_package *const *pkgs, uint32_t max_groups,
		struct pcm_diag *diag)
{
	const struct pcm_target *uet = pcm_target_find("uet");
	const struct uet_scenario *scn = s->scn;

	for (uint32_t i = 0; i < scn->n_policies; i++) {
		struct uet_cc *cc = &s->cc[i];
		const struct pcm_package *pkg = pkgs ? pkgs[i] : NULL;
		int rc;

		cc->index = i;
		s->n_cc = i + 1;
		if (!pkg)
			continue;
		rc = pcm_shell_create(pkg, uet, max_groups, 0, &cc->shell, diag);
		if (rc < 0)
			return rc;
		cc->pkg = pkg;
		cc->free_slots = malloc(max_groups * sizeof(*cc->free_slots));
		if (!cc->free_slots)
			return -ENOMEM;
		for (uint32_t k = 0; k < max_groups; k++)
			cc->free_slots[k] = max_groups - 1 - k;
		cc->n_free = cc->n_slots = max_groups;
		cc->cwnd_slot = pkg->control_slot[PCM_CTRL_CWND];
		cc->rate_slot = pkg->control_slot[PCM_CTRL_RATE];
		cc->ev_slot = pkg->control_slot[PCM_CTRL_EV];
		cc->credit_slot = pkg->control_slot[PCM_CTRL_CUMULATIVE_CREDIT];
		cc->wants_tx_event = pkg->signal_types & BIT(PCM_SIG_TX_EVENT);
		cc->wants_tx_ready = pkg->signal_types &
				     (BIT(PCM_SIG_TX_READY_PKTS) | BIT(PCM_SIG_TX_BACKLOG_BYTES));
		cc->receiver_credit = cc->credit_slot >= 0;
		for (uint32_t k = 0; k < pkg->n_signals; k++)
			if (pkg->signals[k].type == PCM_SIG_ELAPSED_TIME &&
			    pkg->signals[k].trigger != PCM_SIG_TRIGGER_NONE &&
			    pkg->signals[k].threshold != PCM_SIG_NO_TRIGGER)
				cc->has_timer = true;
		cc->delay = scn->shell_mode == UET_SHELL_ASYNC ? scn->delay_events : 0;
	}
	return 0;
}

void uet_cc_fini(struct uet_sim *s)
{
	for (uint32_t i = 0; i < s->n_cc; i++) {
		pcm_shell_destroy(s->cc[i].shell);
		free(s->cc[i].free_slots);
		memset(&s->cc[i], 0, sizeof(s->cc[i]));
	}
	s->n_cc = 0;
}

static void read_controls(const struct uet_cc *cc, const pcm_uint *rec, struct uet_ctl *c)
{
	if (cc->cwnd_slot >= 0)
		c->cwnd = rec[cc->cwnd_slot];
	if (cc->rate_slot >= 0)
		c->rate = rec[cc->rate_slot];
	if (cc->ev_slot >= 0)
		c->ev = rec[cc->ev_slot];
	if (cc->credit_slot >= 0)
		c->credit = rec[cc->credit_slot];
}

int uet_cc_attach(struct uet_sim *s, struct uet_group *g, uint32_t policy)
{
	struct uet_cc *cc;
	uint32_t slot;

	if (policy >= s->n_cc)
		policy = 0;
	cc = &s->cc[policy];
	g->cc = NULL;
	if (!cc->pkg)
		return 0;
	if (cc->receiver_credit) {
		/* runs once per receiving NIC (uet_cc_attach_receiver()), not per group */
		g->cc = cc;
		g->slot = UET_NONE;
		return 0;
	}
	if (!cc->n_free)
		return -ENOSPC;
	slot = cc->free_slots[--cc->n_free];
	pcm_shell_flow_reset(cc->shell, slot, s->des.now_ps);
	g->cc = cc;
	g->slot = slot;
	read_controls(cc, pcm_shell_record(cc->shell, slot), &g->ctl);
	if (cc->delay) {
		g->delay_ring = malloc(((size_t)cc->delay + 1) * sizeof(*g->delay_ring));
		if (!g->delay_ring) {
			cc->free_slots[cc->n_free++] = slot;
			g->cc = NULL;
			return -ENOMEM;
		}
		g->delay_ring[0] = g->ctl;
	}
	return 0;
}

void uet_cc_detach(struct uet_sim *s, struct uet_group *g)
{
	if (!g->cc || g->slot == UET_NONE) {
		g->cc = NULL;
		return;
	}
	g->cc->free_slots[g->cc->n_free++] = g->slot;
	g->cc = NULL;
}

int uet_cc_feed(struct uet_sim *s, struct uet_group *g, struct pcm_event *ev)
{
	struct uet_cc *cc = g->cc;
	pcm_uint *rec = pcm_shell_record(cc->shell, g->slot);
	int rc = pcm_shell_feed(cc->shell, g->slot, ev, s->des.now_ps);

	if (rc < 0)
		s->handler_errors++;
	g->feeds++;
	if (!cc->delay) {
		if (rc)
			read_controls(cc, rec, &g->ctl);
		return rc;
	}
	{
		uint64_t n = (uint64_t)cc->delay + 1;
		struct uet_ctl cur = g->delay_ring[(g->feeds - 1) % n];

		read_controls(cc, rec, &cur);
		g->delay_ring[g->feeds % n] = cur;
		if (g->feeds >= cc->delay)
			g->ctl = g->delay_ring[(g->feeds - cc->delay) % n];
	}
	return rc;
}

int uet_cc_attach_receiver(struct uet_sim *s, struct uet_nic *nic, struct uet_cc *cc)
{
	if (!cc->n_free)
		return -ENOSPC;
	nic->credit_slot = cc->free_slots[--cc->n_free];
	nic->credit_cc = cc;
	pcm_shell_flow_reset(cc->shell, nic->credit_slot, s->des.now_ps);
	return 0;
}

/* Feed the NIC's receiver-credit instance; its controls are read straight from the record. */
void uet_cc_credit_feed(struct uet_sim *s, struct uet_nic *nic, const struct pcm_event *ev)
{
	int rc = pcm_shell_feed(nic->credit_cc->shell, nic->credit_slot, ev, s->des.now_ps);

	if (rc < 0)
		s->handler_errors++;
	if (rc > 0)
		nic->st[UET_ST_HANDLER_CALLS]++;
}

uint64_t uet_cc_handler_calls(const struct uet_sim *s)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < s->n_cc; i++)
		if (s->cc[i].shell)
			n += s->cc[i].shell->stats.handler_calls;
	return n;
}
