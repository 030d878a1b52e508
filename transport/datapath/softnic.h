/* SPDX-License-Identifier: MIT */
/*
 * softnic.h - the softnic world: one UET emulation (transport/uet) whose
 * hosts carry softnic datapath instances, the faults it injects, and the
 * driver that steps engines in one thread, in virtual time.
 *
 * A softnic instance (xp_dp_softnic_ops, cfg.world = the world, cfg.host =
 * its host) is one host's NIC: each data path is a raw UC-like queue pair of
 * the emulation with its own entropy (so its own route through the fabric),
 * and each peer host gets one control queue pair in the control class. A
 * write's bytes are copied out of the sender's region when it is posted and
 * into the receiver's region when the emulation delivers the whole message,
 * through the receiver's key (so a released receive key refuses a late
 * chunk); a message the fabric drops (loss, trim, a failed link) is lost, as
 * on UC. Time is the emulation's: now_ns() is its clock.
 *
 * Faults, besides those of the scenario (link failures) and the fabric
 * (queues, ECN): per packet, at the first switch a packet meets (incast,
 * leaf-spine; every switch on a fat tree), loss and trims; per delivered
 * message, duplication, reordering (held back a little) and delay spikes
 * (held back a lot). Every draw comes from the world's seed: a run is a
 * function of (scenario, seed, faults, what the engines do).
 *
 * Threading: one thread drives a world and every engine on it.
 */
#ifndef XP_SOFTNIC_H
#define XP_SOFTNIC_H

#include <stdbool.h>
#include <stdint.h>

#include "pcm/uet.h"

struct xp_engine;
struct xp_dp;

/* Faults, in parts per million; 0: none. */
struct xp_softnic_faults {
	uint32_t loss_ppm;        /* a data or control packet dropped at a switch */
	uint32_t trim_ppm;        /* a data packet trimmed at a switch (its message is lost) */
	uint32_t dup_ppm;         /* a delivered message delivered again, later */
	uint32_t reorder_ppm;     /* a delivered message held back up to reorder_ns */
	uint32_t spike_ppm;       /* a delivered message held back spike_ns */
	uint64_t reorder_ns;
	uint64_t spike_ns;
};

struct xp_softnic_world;

/**
 * xp_softnic_world_create() - an emulated fabric for softnic instances.
 * @scn: the scenario (topology, NIC, link failures); its traffic is ignored.
 * @seed: every random draw of the emulation and of the faults.
 * @out: the world.
 * @diag: on failure, what is wrong.
 *
 * Return: 0, -EINVAL, -ENOMEM, or the emulation's error.
 */
int xp_softnic_world_create(const struct uet_scenario *scn, uint64_t seed,
			    struct xp_softnic_world **out, struct pcm_diag *diag);

/* Free the world; every instance on it must be closed first. NULL is a no-op. */
void xp_softnic_world_destroy(struct xp_softnic_world *w);

/* Set the faults from now on. */
void xp_softnic_world_set_faults(struct xp_softnic_world *w, const struct xp_softnic_faults *f);

/* The emulation itself (its hosts, results). */
struct uet_sim *xp_softnic_world_sim(struct xp_softnic_world *w);

/* The virtual time, ns. */
uint64_t xp_softnic_now_ns(const struct xp_softnic_world *w);

/**
 * xp_softnic_world_busy() - whether anything is still moving: packets in the
 * emulation, held deliveries, writes in send queues.
 */
bool xp_softnic_world_busy(const struct xp_softnic_world *w);

/**
 * xp_softnic_next_ns() - when the world next has something to do (an
 * emulation event, a held delivery).
 *
 * Return: ns, UINT64_MAX when nothing is pending.
 */
uint64_t xp_softnic_next_ns(const struct xp_softnic_world *w);

/**
 * xp_softnic_run_until() - serve everything due at or before @t_ns (the
 * emulation's events and held deliveries, in time order) and stop the
 * clock there (never backwards).
 *
 * Return: 0, -ENOMEM.
 */
int xp_softnic_run_until(struct xp_softnic_world *w, uint64_t t_ns);

/* Messages (writes, control packets) the world holds now: 0 once everything landed. */
uint32_t xp_softnic_world_flights(const struct xp_softnic_world *w);

/* Whether softnic instance @dp holds events not yet polled. */
bool xp_softnic_dp_pending(struct xp_dp *dp);

/**
 * xp_softnic_step() (libpcmxpengine, softnic_drive.c) - one step of the
 * driver: run every engine until it has no work now; if one did work,
 * return (the caller takes completions and submits more); otherwise advance
 * virtual time to the earliest of the next emulation event, the next held
 * delivery and the engines' next deadlines, serving what happens there.
 * @w: the world.
 * @engines: the engines on it (XP_PROGRESS_EXTERNAL).
 * @n: how many.
 * @limit_ns: never advance past this time (UINT64_MAX: no limit).
 *
 * Return: 0, -ETIMEDOUT (nothing to do before @limit_ns: the clock moved to
 * it), -EDEADLK (no limit, and nothing will ever happen again), -ENOMEM.
 */
int xp_softnic_step(struct xp_softnic_world *w, struct xp_engine *const *engines, uint32_t n,
		    uint64_t limit_ns);

#endif /* XP_SOFTNIC_H */
