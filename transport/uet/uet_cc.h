/* SPDX-License-Identifier: MIT */
/*
 * uet_cc.h - the emulation's PCM glue (cc.c): each policy of a run is a package
 * with one synchronous shell; a flow (a PDC group, or a receiving NIC for
 * receiver credit) holds a record in it, is fed events, and obeys the
 * controls its packages produce. Nothing here knows NICs or packets.
 */
#ifndef PCM_UET_CC_H
#define PCM_UET_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "shell.h"
#include "uet.h"

/* Controls in force. */
struct uet_ctl {
	uint64_t cwnd, rate, ev, credit;
};

/* One package of the run, its shell and what the NIC must do for it. */
struct uet_cc {
	const struct pcm_package *pkg;
	struct pcm_shell *shell;
	uint32_t index;        /* policy index */
	uint32_t *free_slots;
	uint32_t n_free, n_slots;
	int cwnd_slot, rate_slot, ev_slot, credit_slot;
	bool wants_tx_event, wants_tx_ready, receiver_credit;
	bool has_timer;        /* an ELAPSED_TIME signal has a trigger: tick it */
	uint32_t delay;        /* async: feeds before controls apply */
	uint64_t handler_errors;
};

/*
 * A package bound to a flow: its record in the package's shell, the feeds it
 * has had and, in asynchronous mode, its delay line of control sets.
 */
struct uet_bind {
	struct uet_cc *cc;      /* NULL: no package */
	uint32_t slot;          /* UET_NONE: no record (a receiver-credit policy's sender) */
	uint64_t feeds;
	struct uet_ctl *delay_ring;
};

/* A flow's packages: its policy and the run's LB package beside it, and the controls in force. */
struct uet_ccflow {
	struct uet_ctl ctl;
	struct uet_bind pol;
	struct uet_bind lb;
};

/* The packages of a run. */
struct uet_ccset {
	struct uet_cc cc[UET_MAX_POLICIES];
	uint32_t n;
	struct uet_cc *lb;      /* the LB package's, or NULL */
};

#define UET_NONE UINT32_MAX

/* Which of a flow's packages an event goes to (uet_cc_feed()). */
#define UET_FEED_POL 1u
#define UET_FEED_LB 2u
#define UET_FEED_ALL (UET_FEED_POL | UET_FEED_LB)

/*
 * A shell per package of @scn (pkgs[i] for scn->policies[i]; NULL: none),
 * @max_flows records each, and one handler instance per NIC (@n_nics): the
 * flows of a NIC share its instance variables (one port, one controller).
 */
int uet_cc_init(struct uet_ccset *set, const struct uet_scenario *scn,
		const struct pcm_package *const *pkgs, uint32_t max_flows, uint32_t n_nics,
		struct pcm_diag *diag);
void uet_cc_fini(struct uet_ccset *set);
/* Check the LB package against every policy of @scn (at sim creation). */
int uet_cc_check_lb(const struct uet_scenario *scn, const struct pcm_package *const *pkgs,
		    struct pcm_diag *diag);

/*
 * Give @f, a group of NIC @nic, a fresh record of policy @policy and of the
 * LB package, in @nic's handler instance; controls
 * the packages drive start at their initial values, the others keep @f->ctl.
 * Return: 0, -ENOSPC (no record left), -ENOMEM.
 */
int uet_cc_attach(struct uet_ccset *set, struct uet_ccflow *f, uint32_t policy, uint32_t nic,
		  uint64_t now_ps);
/* Free @f's records and delay lines. */
void uet_cc_detach(struct uet_ccflow *f);
/* Feed @ev to @f's packages in @which (UET_FEED_*) that have a record. Return: handlers run. */
int uet_cc_feed(struct uet_ccflow *f, unsigned which, const struct pcm_event *ev, uint64_t now_ps);
/* UET_FEED_* of @f's packages that have a record. */
static inline unsigned uet_cc_live(const struct uet_ccflow *f)
{
	return (f->pol.cc && f->pol.slot != UET_NONE ? UET_FEED_POL : 0) |
	       (f->lb.cc && f->lb.slot != UET_NONE ? UET_FEED_LB : 0);
}

/* Receiver credit: one record of @cc per receiving NIC @nic, read directly (no delay line). */
int uet_cc_attach_receiver(struct uet_cc *cc, struct uet_bind *b, uint32_t nic, uint64_t now_ps);
/* Return: 1 if a handler ran. */
int uet_cc_credit_feed(struct uet_bind *b, const struct pcm_event *ev, uint64_t now_ps);
uint64_t uet_cc_credit(const struct uet_bind *b);

uint64_t uet_cc_handler_calls(const struct uet_ccset *set);
uint64_t uet_cc_handler_errors(const struct uet_ccset *set);

#endif /* PCM_UET_CC_H */
