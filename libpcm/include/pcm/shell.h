/* SPDX-License-Identifier: MIT */
/*
 * shell.h - the synchronous shell: a package's pipeline run inline on the
 * datapath thread, over one record per flow.
 *
 * A datapath adds flows (each running one of the shell's packages), feeds
 * them events (a value per signal type plus a valid mask, and `now` in ps)
 * and reads controls back. Feeding accumulates, evaluates triggers and, when
 * one fires, runs the handler in place on the flow's record and commits its
 * writes; nothing on that path blocks, allocates or reads a clock. Flows can
 * be added, removed, reset and moved to another package (live swap) at any
 * time; memory grows and shrinks a chunk of flows at a time (flowtab.h).
 *
 * Threads: each flow has one owner, the datapath thread that feeds it; it is
 * the only thread that may feed, tick, read or change that flow. Different
 * flows may have different owners running concurrently: the shell's shared
 * state (the flow table, the counters) is synchronised internally. The
 * flows of one handler instance (pcm_shell_flow_instance()) share their
 * instance variables, so a package with instance variables needs all the
 * flows of an instance fed by one thread.
 */
#ifndef PCM_SHELL_H
#define PCM_SHELL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "flowtab.h"
#include "package.h"
#include "pkgset.h"
#include "spec.h"
#include "target.h"

#define PCM_SHELL_MAX_FLOWS PCM_FLOWTAB_MAX_FLOWS
#define PCM_SHELL_MAX_PACKAGES PCM_PKGSET_MAX

struct pcm_shell_config {
	/* the packages flows may run; each is checked against @target */
	const struct pcm_package *const *packages;
	uint32_t n_packages; /* 1 .. PCM_SHELL_MAX_PACKAGES */
	/* the datapath's capability descriptor; NULL skips the check (tests, benchmarks) */
	const struct pcm_target *target;
	/* flow handles run from 0 to max_flows - 1, 1 .. PCM_SHELL_MAX_FLOWS */
	uint32_t max_flows;
	/* record slots reserved per flow for packages added later; 0: the largest given */
	uint32_t record_slots;
	/* handler instances (package.h, instance variables), 0 .. n - 1; 0 means 1 */
	uint32_t n_instances;
};

/* Counters of the whole shell; each is read atomically, the set is not a snapshot. */
struct pcm_shell_stats {
	uint64_t handler_calls;  /* handler invocations, removed flows included */
	uint64_t handler_errors; /* invocations that returned PCM_ERROR */
	uint32_t flows;          /* live flows */
};

struct pcm_shell {
	struct pcm_flowtab tab;      /* the flows' slots (struct pcm_flow_slot, package.h) */
	struct pcm_slot_table slots; /* where tab keeps them: fixed from creation on */
	struct pcm_pkgset pkgs;
	uint32_t record_slots;
	uint32_t *instance_of; /* by flow handle, with more than one instance; else NULL */
	_Atomic uint64_t errors;
	_Atomic uint64_t retired_calls; /* calls of flows since removed */
};

/**
 * pcm_shell_create_cfg() - an empty shell.
 * @cfg: packages, target and size; copied.
 * @out: the new shell.
 * @diag: what was wrong, naming the package and the missing signal or control.
 *
 * Threads: any; the shell is not shared until this returns.
 *
 * Return: 0, -EINVAL (bad configuration or package), -ENOTSUP (the target
 * lacks a signal or control a package needs), -ENOMEM.
 */
int pcm_shell_create_cfg(const struct pcm_shell_config *cfg, struct pcm_shell **out,
		   struct pcm_diag *diag);

/**
 * pcm_shell_create() - a shell running @pkg with flows 0 .. @n_flows - 1 added.
 * @pkg: a validated package (pcm_package_open()).
 * @target: the datapath's capability descriptor; NULL skips the check.
 * @n_flows: number of flows, 1 .. PCM_SHELL_MAX_FLOWS; also the handle limit.
 * @now_ps: time base for ELAPSED_TIME epochs.
 * @out: the new shell.
 * @diag: why the package was rejected, naming the missing signal or control.
 *
 * Threads: any. Return: as pcm_shell_create_cfg().
 */
int pcm_shell_create(const struct pcm_package *pkg, const struct pcm_target *target,
		     uint32_t n_flows, pcm_uint now_ps, struct pcm_shell **out,
		     struct pcm_diag *diag);

/**
 * pcm_shell_create_filled() - pcm_shell_create() with a whole configuration:
 * a shell with flows 0 .. @cfg->max_flows - 1 added, running @cfg->packages[0].
 * @cfg: as pcm_shell_create_cfg()'s.
 * @now_ps: time base for ELAPSED_TIME epochs.
 * @out: the new shell.
 * @diag: why a package was rejected.
 *
 * Threads: any. Return: as pcm_shell_create_cfg().
 */
int pcm_shell_create_filled(const struct pcm_shell_config *cfg, pcm_uint now_ps,
			    struct pcm_shell **out, struct pcm_diag *diag);

/* Free the shell and every flow. Threads: once no thread uses the shell. NULL is a no-op. */
void pcm_shell_destroy(struct pcm_shell *shell);

/**
 * pcm_shell_package_add() - let flows of this shell run @pkg too.
 *
 * Threads: any; serialised with other additions.
 *
 * Return: 0 (also if already added), -EINVAL (bad package, too many), -E2BIG
 * (its record is larger than the shell reserved), -ENOTSUP (target check).
 */
int pcm_shell_package_add(struct pcm_shell *shell, const struct pcm_package *pkg,
			  struct pcm_diag *diag);

/**
 * pcm_shell_flow_add() - add a flow running @pkg, at the lowest free handle.
 * @shell: the shell.
 * @pkg: one of the shell's packages (added with pcm_shell_package_add() if not).
 * @now_ps: time base of its ELAPSED_TIME epochs.
 * @flow: set to the new flow's handle.
 *
 * Threads: any; the caller becomes the flow's owner.
 *
 * Return: 0, -ENOSPC (no free handle), -ENOMEM, or pcm_shell_package_add()'s errors.
 */
int pcm_shell_flow_add(struct pcm_shell *shell, const struct pcm_package *pkg, pcm_uint now_ps,
		       uint32_t *flow);

/**
 * pcm_shell_flow_add_at() - add a flow running @pkg at handle @flow.
 *
 * Threads: any; the caller becomes the flow's owner.
 *
 * Return: 0, -EEXIST (@flow is live), -ERANGE (beyond max_flows), -ENOMEM,
 * or pcm_shell_package_add()'s errors.
 */
int pcm_shell_flow_add_at(struct pcm_shell *shell, uint32_t flow, const struct pcm_package *pkg,
			  pcm_uint now_ps);

/**
 * pcm_shell_flow_remove() - remove @flow; its handle may be reused at once.
 *
 * Threads: the flow's owner. Return: 0, -ENOENT.
 */
int pcm_shell_flow_remove(struct pcm_shell *shell, uint32_t flow);

/**
 * pcm_shell_flow_reset() - re-initialise @flow's record from its package,
 * e.g. for a new connection in a reused slot.
 *
 * Threads: the flow's owner. Return: 0, -ENOENT.
 */
int pcm_shell_flow_reset(struct pcm_shell *shell, uint32_t flow, pcm_uint now_ps);

/**
 * pcm_shell_flow_swap() - move @flow to package @pkg, between two events
 * (pcm_package_handoff() says what state it starts with).
 *
 * Every event fed before this call was applied to the old package, every
 * event after it goes to @pkg; none is lost or applied twice.
 * Threads: the flow's owner.
 *
 * Return: 0, -ENOENT, -ENOMEM, or pcm_shell_package_add()'s errors; on
 * failure the flow runs its old package unchanged.
 */
int pcm_shell_flow_swap(struct pcm_shell *shell, uint32_t flow, const struct pcm_package *pkg,
			pcm_uint now_ps);

/**
 * pcm_shell_flow_instance() - make @flow one of the flows of handler
 * instance @instance, whose instance variables it shares from its next call
 * on (a new flow belongs to instance 0).
 * @shell: the shell.
 * @flow: a live flow.
 * @instance: below the shell's n_instances.
 *
 * Threads: the flow's owner. Return: 0, -ENOENT, -ERANGE (no such instance).
 */
int pcm_shell_flow_instance(struct pcm_shell *shell, uint32_t flow, uint32_t instance);

/* @flow's slot if it is live, or NULL. Threads: the flow's owner. */
static inline struct pcm_flow_slot *pcm_shell_slot(const struct pcm_shell *shell, uint32_t flow)
{
	struct pcm_flow_slot *f;

	if (__builtin_expect(flow >= shell->slots.max_flows, 0))
		return NULL;
	f = pcm_slot_at(&shell->slots, flow);
	return f->pkg ? f : NULL;
}

/* @flow's record (the handler's layout, package.h), or NULL. Threads: the owner. */
static inline pcm_uint *pcm_shell_record(struct pcm_shell *shell, uint32_t flow)
{
	struct pcm_flow_slot *f = pcm_shell_slot(shell, flow);

	return f ? f->rec : NULL;
}

/* @flow's package, or NULL. Threads: the owner. */
static inline const struct pcm_package *pcm_shell_flow_package(const struct pcm_shell *shell,
								uint32_t flow)
{
	struct pcm_flow_slot *f = pcm_shell_slot(shell, flow);

	return f ? f->pkg : NULL;
}

/**
 * pcm_shell_feed() - feed one event for @flow.
 *
 * One lookup and one call into the flow's package, which runs the pipeline
 * and counts the call (package.h's feed()).
 * Threads: the flow's owner.
 *
 * Return: 1 if the handler ran, 0 if no trigger fired, -ENOENT for a flow
 * that is not live, -EIO if the handler returned PCM_ERROR (its writes are kept).
 */
static inline int pcm_shell_feed(struct pcm_shell *shell, uint32_t flow,
				 const struct pcm_event *ev, pcm_uint now_ps)
{
	struct pcm_flow_slot *f = pcm_shell_slot(shell, flow);
	int rc;

	if (__builtin_expect(!f, 0))
		return -ENOENT;
	rc = f->pkg->ops.feed(f, ev, now_ps);
	if (__builtin_expect(rc < 0, 0))
		atomic_fetch_add_explicit(&shell->errors, 1, memory_order_relaxed);
	return rc;
}

/**
 * pcm_shell_feed_burst() - feed a burst of events, each to its own flow,
 * fetching the records of later events while earlier ones run.
 *
 * Each run of events whose flows share a package is one call into that
 * package's feed_burst() (package.h), which loops over the run itself.
 *
 * Threads: the owner of every flow in the burst.
 *
 * Return: the number of events processed; fewer than @n means evs[return]
 * names a flow that is not live, and it and the rest were not fed.
 */
uint32_t pcm_shell_feed_burst(struct pcm_shell *shell, const struct pcm_flow_event *evs,
			      uint32_t n);

/**
 * pcm_shell_tick() - evaluate @flow's triggers at @now_ps with no new sample,
 * so that ELAPSED_TIME timers fire without traffic.
 *
 * Threads: the flow's owner. Return: as pcm_shell_feed().
 */
int pcm_shell_tick(struct pcm_shell *shell, uint32_t flow, pcm_uint now_ps);

/**
 * pcm_shell_control() - read @flow's control of @type (the first the spec
 * declares of that type).
 *
 * Threads: the flow's owner.
 *
 * Return: 0, -ENOENT for a flow that is not live or a package without such a control.
 */
int pcm_shell_control(const struct pcm_shell *shell, uint32_t flow, pcm_control_t type,
		      pcm_uint *value);

/**
 * pcm_shell_controls() - read all of @flow's controls (out->seq counts its handler calls).
 *
 * Threads: the flow's owner. Return: 0, -ENOENT.
 */
int pcm_shell_controls(const struct pcm_shell *shell, uint32_t flow, struct pcm_control_set *out);

/**
 * pcm_shell_stats() - the shell's counters, summed over its flows.
 *
 * Threads: any, concurrently with feeding (each per-flow count is read atomically).
 */
void pcm_shell_stats(struct pcm_shell *shell, struct pcm_shell_stats *out);

/* Bytes of state per flow (its slot), and bytes the shell has allocated in all. Threads: any. */
size_t pcm_shell_bytes_per_flow(const struct pcm_shell *shell);
size_t pcm_shell_bytes(struct pcm_shell *shell);

#endif /* PCM_SHELL_H */
