/* SPDX-License-Identifier: MIT */
/*
 * softnic.h - the softnic datapath's world: one UET emulation (a fabric of
 * hosts with NICs, raw UC-like queue pairs) shared by every softnic
 * instance, one instance per host, all in one thread and in virtual time.
 *
 * An instance's data path is one raw QP with its own entropy (so one ECMP
 * path through the fabric, in order); its control peer is one control-class
 * raw QP per peer host. A write's bytes are copied when it is posted (the
 * NIC's DMA read) and placed at delivery through the receiver's keys
 * (keys.h), so integrity is checked end to end. What the raw QPs lose
 * (trims, PSN gaps, failed links) is lost; the core recovers it.
 *
 * Impairments the fabric does not model are injected at delivery, drawn
 * from the world's seed: duplication (a data message delivered twice) and
 * delay spikes (a data message held back, so later ones overtake it). A
 * completion lag (cq_lag_ns) separates placement from its report, as a
 * NIC's completion queue and a busy poller do: a write is placed (its key
 * checked, its bytes copied) on arrival, and its event reaches poll() only
 * cq_lag_ns later, every event of an instance in arrival order.
 *
 * A driver (transport/engine/softnic_driver.c) steps the engines: it runs
 * each engine at the current virtual time, then advances the world to the
 * earlier of its next event and the engines' next deadline.
 */
#ifndef XP_SOFTNIC_H
#define XP_SOFTNIC_H

#include <stdbool.h>
#include <stdint.h>

#include "spec.h" /* struct pcm_diag */

struct uet_scenario;
struct uet_sim;
struct xp_softnic_world;

struct xp_softnic_config {
	const struct uet_scenario *scn; /* the fabric (its flows are ignored); copied */
	uint64_t seed;
	uint32_t dup_ppm;               /* data messages delivered twice, parts per million */
	uint32_t delay_ppm;             /* data messages held back by delay_ns */
	uint64_t delay_ns;
	uint64_t cq_lag_ns;             /* a placed write or arrived packet reaches poll() this late */
};

/**
 * xp_softnic_world_create() - a world over a new emulation of @cfg->scn.
 * @cfg: the fabric and the impairments.
 * @out: the world.
 * @diag: on failure, what is wrong with the scenario.
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int xp_softnic_world_create(const struct xp_softnic_config *cfg, struct xp_softnic_world **out,
			    struct pcm_diag *diag);

/* Destroy a world after every instance on it closed. NULL is a no-op. */
void xp_softnic_world_destroy(struct xp_softnic_world *w);

/* The virtual time, ns. */
uint64_t xp_softnic_now_ns(const struct xp_softnic_world *w);

/* The time of the world's next event (emulation or held-back delivery), ns; UINT64_MAX: none. */
uint64_t xp_softnic_next_event_ns(struct xp_softnic_world *w);

/**
 * xp_softnic_advance() - serve every event at or before @t_ns.
 *
 * Return: 0, -ENOMEM.
 */
int xp_softnic_advance(struct xp_softnic_world *w, uint64_t t_ns);

/* The emulation, for its own knobs (rates, results). */
struct uet_sim *xp_softnic_sim(struct xp_softnic_world *w);

/* What is in flight in the world (for leak checks): write records held. */
uint64_t xp_softnic_records(const struct xp_softnic_world *w);

#endif /* XP_SOFTNIC_H */
