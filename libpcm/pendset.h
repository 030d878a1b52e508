/* SPDX-License-Identifier: MIT */
/*
 * pendset.h - the set of flows with work for one asynchronous-shell worker.
 *
 * A hierarchical bitmap over flow handles: level 0 has a bit per flow (one
 * cache line per flow-table chunk, so two workers never share a line), and
 * each level above has a bit per word of the level below, up to a single
 * word. Any number of datapath threads add flows; one worker visits them,
 * round-robin across the set so a busy flow cannot starve the others, and
 * takes a flow out only once it finds the flow idle: a busy flow stays in,
 * and adding it again is a load of a line nobody writes. A flow is in the
 * set once however often it is added. A producer that stops halfway (is
 * preempted) delays only its own flow: every producer sets every level it
 * needs itself.
 *
 * Memory: the level-0 array is shared by all workers (a flow belongs to one);
 * the levels above are per worker. Both are mapped lazily, so an idle range
 * of handles costs nothing.
 */
#ifndef PCM_PENDSET_H
#define PCM_PENDSET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCM_PENDSET_LEVELS 3 /* above level 0 */

/* Level 0, shared: 8 words (a cache line) per chunk of flows, 4 of them used. */
struct pcm_pendset_l0 {
	_Atomic uint64_t *words;
	size_t bytes;
};

struct pcm_pendset {
	_Atomic uint64_t *level[PCM_PENDSET_LEVELS]; /* level[0] has a bit per used l0 word */
	uint32_t bits[PCM_PENDSET_LEVELS];           /* bits in each level */
	size_t bytes;
};

int pcm_pendset_l0_init(struct pcm_pendset_l0 *l0, uint32_t max_flows);
void pcm_pendset_l0_fini(struct pcm_pendset_l0 *l0);

int pcm_pendset_init(struct pcm_pendset *ps, uint32_t max_flows);
void pcm_pendset_fini(struct pcm_pendset *ps);

/**
 * pcm_pendset_add() - put @flow in @ps (a no-op if it is there).
 *
 * Threads: any. Sequentially consistent, so a consumer that then checks
 * whether to sleep either sees the flow or is seen sleeping.
 *
 * Return: true if this call added it.
 */
bool pcm_pendset_add(struct pcm_pendset *ps, struct pcm_pendset_l0 *l0, uint32_t flow);

/**
 * pcm_pendset_next() - the next up to @max flows in @ps, round-robin; they
 * stay in it until the worker takes them out (pcm_pendset_remove()).
 * @cursor: the consumer's position, for round-robin; kept by the caller
 *          (on the consumer's own cache line), 0 at first.
 * @flows: at least @max entries.
 *
 * Threads: the worker that owns @ps only.
 *
 * Return: how many were returned; 0 means the set is empty.
 */
uint32_t pcm_pendset_next(struct pcm_pendset *ps, struct pcm_pendset_l0 *l0, uint32_t *cursor,
			  uint32_t *flows, uint32_t max);

/*
 * Take @flow out of @ps if it is there; sequentially consistent, like
 * pcm_pendset_add(). Threads: the worker that owns @ps only.
 */
void pcm_pendset_remove(struct pcm_pendset *ps, struct pcm_pendset_l0 *l0, uint32_t flow);

/*
 * Is anything in @ps? It clears the bits it finds stale on the way, so: the
 * worker that owns @ps only. Sequentially consistent (see pcm_pendset_add()):
 * a producer whose add it does not see sees what the worker stored before.
 */
bool pcm_pendset_nonempty(struct pcm_pendset *ps);

#endif /* PCM_PENDSET_H */
