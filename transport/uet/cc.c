// SPDX-License-Identifier: MIT
/*
 * cc.c - the NIC's congestion control and load balancing as PCM handler
 * packages.
 *
 * Each policy of a run gets one synchronous shell (checked against the "uet"
 * target, so a package needing what the NIC cannot measure or enforce is
 * rejected by name) with one handler instance per NIC (a port: the groups of
 * a NIC share its instance variables, pcm-handler(7)) and one flow record
 * per live flow (a PDC group); a flow
 * takes a record when it is created and its record is re-initialised, so a
 * new group starts from the package's initial window, as a new UET group
 * does.
 *
 * A scenario may name an LB package (`lb:`) that runs beside every group's
 * policy, as the paper combines handlers whose controls do not overlap: the
 * group takes a record in each package's shell (struct uet_bind), ACKs, NACKs
 * and timeouts go to both, TX, TX-ready and timer events to the package that
 * reads them, and each control comes from the one package that drives it.
 * An LB whose controls overlap a policy's is rejected when the sim is built.
 *
 * The controls a group obeys are kept apart from the records (struct uet_ctl):
 * - synchronous mode: they are the record's controls after each feed;
 * - asynchronous mode with a scheduling delay of N events: the handler still
 *   runs through the synchronous pipeline when its trigger fires, but its
 *   outputs reach the datapath N feeds (ACK, NACK, timeout, TX or LB events of
 *   that group fed to that package, timer ticks included) later, through a
 *   delay line of N + 1 control sets per package. This is the paper's model
 *   of a control-plane worker that is N datapath events behind, without
 *   threads, so runs stay deterministic.
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

#include "uet_cc.h"
#include "diag.h"
#include "target.h"

#define BIT(t) ((pcm_uint)1 << (t))

int uet_cc_init(struct uet_ccset *set, const struct uet_scenario *scn,
		const struct pcm_package *const *pkgs, uint32_t max_flows, uint32_t n_nics,
		struct pcm_diag *diag)
{
	const struct pcm_target *uet = pcm_target_find("uet");

	for (uint32_t i = 0; i < scn->n_policies; i++) {
		struct uet_cc *cc = &set->cc[i];
		const struct pcm_package *pkg = pkgs ? pkgs[i] : NULL;
		int rc;

		cc->index = i;
		set->n = i + 1;
		if (!pkg)
			continue;
		rc = pcm_shell_create_filled(
			&(struct pcm_shell_config){ .packages = &pkg, .n_packages = 1,
						    .target = uet, .max_flows = max_flows,
						    .n_instances = n_nics },
			0, &cc->shell, diag);
		if (rc < 0)
			return rc;
		cc->pkg = pkg;
		cc->free_slots = malloc(max_flows * sizeof(*cc->free_slots));
		if (!cc->free_slots)
			return -ENOMEM;
		for (uint32_t k = 0; k < max_flows; k++)
			cc->free_slots[k] = max_flows - 1 - k;
		cc->n_free = cc->n_slots = max_flows;
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
	set->lb = scn->has_lb && scn->lb_policy < set->n && set->cc[scn->lb_policy].pkg
			  ? &set->cc[scn->lb_policy]
			  : NULL;
	return 0;
}

void uet_cc_fini(struct uet_ccset *set)
{
	for (uint32_t i = 0; i < set->n; i++) {
		pcm_shell_destroy(set->cc[i].shell);
		free(set->cc[i].free_slots);
		memset(&set->cc[i], 0, sizeof(set->cc[i]));
	}
	set->n = 0;
	set->lb = NULL;
}

/* Copy the controls @cc drives, and only those, from a record or a control set. */
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

static void copy_controls(const struct uet_cc *cc, const struct uet_ctl *from, struct uet_ctl *to)
{
	if (cc->cwnd_slot >= 0)
		to->cwnd = from->cwnd;
	if (cc->rate_slot >= 0)
		to->rate = from->rate;
	if (cc->ev_slot >= 0)
		to->ev = from->ev;
	if (cc->credit_slot >= 0)
		to->credit = from->credit;
}

/* Give @f a record of @cc's package (none if @cc is NULL or has no package). */
static int bind_package(struct uet_ccflow *f, struct uet_bind *b, struct uet_cc *cc,
			uint32_t nic, uint64_t now_ps)
{
	uint32_t slot;

	memset(b, 0, sizeof(*b));
	if (!cc || !cc->pkg)
		return 0;
	if (cc->receiver_credit) {
		/* runs once per receiving NIC (uet_cc_attach_receiver()), not per group */
		b->cc = cc;
		b->slot = UET_NONE;
		return 0;
	}
	if (!cc->n_free)
		return -ENOSPC;
	slot = cc->free_slots[--cc->n_free];
	pcm_shell_flow_reset(cc->shell, slot, now_ps);
	pcm_shell_flow_instance(cc->shell, slot, nic);
	read_controls(cc, pcm_shell_record(cc->shell, slot), &f->ctl);
	if (cc->delay) {
		b->delay_ring = malloc(((size_t)cc->delay + 1) * sizeof(*b->delay_ring));
		if (!b->delay_ring) {
			cc->free_slots[cc->n_free++] = slot;
			return -ENOMEM;
		}
		b->delay_ring[0] = f->ctl;
	}
	b->cc = cc;
	b->slot = slot;
	return 0;
}

static void unbind_package(struct uet_bind *b)
{
	if (b->cc && b->slot != UET_NONE)
		b->cc->free_slots[b->cc->n_free++] = b->slot;
	free(b->delay_ring);
	memset(b, 0, sizeof(*b));
}

int uet_cc_attach(struct uet_ccset *set, struct uet_ccflow *f, uint32_t policy, uint32_t nic,
		  uint64_t now_ps)
{
	int rc;

	if (policy >= set->n)
		policy = 0;
	rc = bind_package(f, &f->pol, &set->cc[policy], nic, now_ps);
	if (rc == 0)
		rc = bind_package(f, &f->lb, set->lb, nic, now_ps);
	if (rc < 0)
		unbind_package(&f->pol);
	return rc;
}

void uet_cc_detach(struct uet_ccflow *f)
{
	unbind_package(&f->pol);
	unbind_package(&f->lb);
}

/* Feed one package; its controls reach the flow at once or through its delay line. */
static int feed_one(struct uet_ccflow *f, struct uet_bind *b, const struct pcm_event *ev,
		    uint64_t now_ps)
{
	struct uet_cc *cc = b->cc;
	pcm_uint *rec = pcm_shell_record(cc->shell, b->slot);
	int rc = pcm_shell_feed(cc->shell, b->slot, ev, now_ps);

	if (rc < 0)
		cc->handler_errors++;
	b->feeds++;
	if (!cc->delay) {
		if (rc)
			read_controls(cc, rec, &f->ctl);
		return rc > 0;
	}
	{
		uint64_t n = (uint64_t)cc->delay + 1;
		struct uet_ctl cur = b->delay_ring[(b->feeds - 1) % n];

		read_controls(cc, rec, &cur);
		b->delay_ring[b->feeds % n] = cur;
		if (b->feeds >= cc->delay)
			copy_controls(cc, &b->delay_ring[(b->feeds - cc->delay) % n], &f->ctl);
	}
	return rc > 0;
}

int uet_cc_feed(struct uet_ccflow *f, unsigned which, const struct pcm_event *ev, uint64_t now_ps)
{
	unsigned live = uet_cc_live(f) & which;
	int n = 0;

	if (live & UET_FEED_POL)
		n += feed_one(f, &f->pol, ev, now_ps);
	if (live & UET_FEED_LB)
		n += feed_one(f, &f->lb, ev, now_ps);
	return n;
}

int uet_cc_check_lb(const struct uet_scenario *scn, const struct pcm_package *const *pkgs,
		    struct pcm_diag *diag)
{
	const struct pcm_package *lb;
	char where[256];

	if (!scn->has_lb)
		return 0;
	uet_scenario_where(scn, "lb", where, sizeof(where));
	if (scn->lb_policy >= scn->n_policies || scn->lb_policy == 0) {
		uet_diag_set(diag, "%s: the LB package must be a package of its own, not the "
				   "default policy",
			     where);
		return -EINVAL;
	}
	lb = pkgs ? pkgs[scn->lb_policy] : NULL;
	if (!lb)
		return 0;
	if (lb->control_types & BIT(PCM_CTRL_CUMULATIVE_CREDIT)) {
		uet_diag_set(diag,
			     "%s: '%s' drives PCM_CTRL_CUMULATIVE_CREDIT, which runs at the "
			     "receiver; make it the policy instead",
			     where, scn->policies[scn->lb_policy]);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < scn->n_policies; i++) {
		const struct pcm_package *pkg = pkgs[i];
		pcm_uint both;

		if (i == scn->lb_policy || !pkg)
			continue;
		both = pkg->control_types & lb->control_types;
		if (both) {
			uet_diag_set(diag,
				     "%s: policy '%s' and lb '%s' both drive %s; a group runs a "
				     "policy and an LB package only when their controls do not "
				     "overlap",
				     where, scn->policies[i], scn->policies[scn->lb_policy],
				     pcm_control_name((pcm_control_t)__builtin_ctzll(both)));
			return -EINVAL;
		}
	}
	/* a rule or flow naming the LB gets an entry of its own: this is a scenario built in code */
	for (uint32_t i = 0; i < scn->n_rules; i++) {
		if (scn->rules[i].policy == scn->lb_policy) {
			uet_diag_set(diag, "%s: rules[%u]: the LB package is not a group policy",
				     where, i);
			return -EINVAL;
		}
	}
	for (uint32_t i = 0; i < scn->n_flows; i++) {
		if (scn->flows[i].policy >= 0 && (uint32_t)scn->flows[i].policy == scn->lb_policy) {
			uet_diag_set(diag, "%s: flows[%u]: the LB package is not a group policy",
				     where, i);
			return -EINVAL;
		}
	}
	return 0;
}

int uet_cc_attach_receiver(struct uet_cc *cc, struct uet_bind *b, uint32_t nic, uint64_t now_ps)
{
	if (!cc->n_free)
		return -ENOSPC;
	memset(b, 0, sizeof(*b));
	b->cc = cc;
	b->slot = cc->free_slots[--cc->n_free];
	pcm_shell_flow_reset(cc->shell, b->slot, now_ps);
	pcm_shell_flow_instance(cc->shell, b->slot, nic);
	return 0;
}

int uet_cc_credit_feed(struct uet_bind *b, const struct pcm_event *ev, uint64_t now_ps)
{
	int rc = pcm_shell_feed(b->cc->shell, b->slot, ev, now_ps);

	b->feeds++;
	if (rc < 0)
		b->cc->handler_errors++;
	return rc > 0;
}

uint64_t uet_cc_credit(const struct uet_bind *b)
{
	return pcm_shell_record(b->cc->shell, b->slot)[b->cc->credit_slot];
}

uint64_t uet_cc_handler_calls(const struct uet_ccset *set)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < set->n; i++) {
		struct pcm_shell_stats st;

		if (!set->cc[i].shell)
			continue;
		pcm_shell_stats(set->cc[i].shell, &st);
		n += st.handler_calls;
	}
	return n;
}

uint64_t uet_cc_handler_errors(const struct uet_ccset *set)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < set->n; i++)
		n += set->cc[i].handler_errors;
	return n;
}
