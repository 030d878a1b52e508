/* SPDX-License-Identifier: MIT */
/*
 * flowtab.h - the flow table both shells keep their per-flow state in.
 *
 * A flow is a 32-bit handle the shell gives out (or the caller picks): the
 * handle's upper bits name a chunk of PCM_FLOWTAB_CHUNK_FLOWS flows, its low
 * bits the flow's slot in the chunk. Each flow has a slot of slot_bytes
 * (state shared with other threads) and a private area of priv_bytes (its
 * group's own), both cache-line aligned, at fixed addresses in two address
 * ranges reserved for all max_flows handles but backed by memory only one
 * chunk at a time: a chunk's pages are committed when a flow is first added
 * to it (on its group's NUMA node) and given back when its last flow goes.
 * So memory grows and shrinks one chunk at a time, handles need not be
 * dense, and each chunk belongs to one group (the asynchronous shell's
 * worker): flows of two groups never share a cache line.
 *
 * The lookup is inline because both shells call it per event: a bounds
 * check and one multiply. Everything else (adding, removing, iterating)
 * takes the table's lock and is in flowtab.c.
 *
 * Thread safety: pcm_flowtab_slot() and pcm_flowtab_priv() may run on any
 * thread at any time; a slot whose chunk has been given back reads as
 * zeroes. The other functions serialise on the table's lock.
 */
#ifndef PCM_FLOWTAB_H
#define PCM_FLOWTAB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCM_FLOWTAB_CHUNK_SHIFT 8
#define PCM_FLOWTAB_CHUNK_FLOWS (1u << PCM_FLOWTAB_CHUNK_SHIFT)
#define PCM_FLOWTAB_MAX_FLOWS (1u << 26)
#define PCM_FLOWTAB_MAX_GROUPS 256

struct pcm_flowtab_chunk;

struct pcm_flowtab {
	unsigned char *slots; /* max_flows slots, committed a chunk at a time */
	unsigned char *privs; /* max_flows private areas, likewise (NULL if priv_bytes is 0) */
	uint32_t slot_bytes;
	uint32_t priv_bytes;
	uint32_t max_flows;
	uint32_t n_chunks;  /* max_flows / PCM_FLOWTAB_CHUNK_FLOWS */
	uint32_t n_groups;
	/* below: under lock */
	pthread_mutex_t lock;
	struct pcm_flowtab_chunk **chunks;
	uint64_t *unowned;       /* bit per chunk index with no chunk */
	uint64_t **nonfull;      /* per group: bit per chunk with a free slot */
	int node[PCM_FLOWTAB_MAX_GROUPS]; /* NUMA node of each group, -1 for any */
	size_t bytes;            /* allocated for chunks and the table itself */
	uint32_t live;           /* flows */
	uint32_t live_chunks;
};

/**
 * pcm_flowtab_init() - an empty table.
 * @tab: the table.
 * @max_flows: handles run from 0 to @max_flows - 1 (rounded up to a whole
 *             chunk), 1 .. PCM_FLOWTAB_MAX_FLOWS.
 * @slot_bytes: bytes of shared state per flow (rounded up to a cache line).
 * @priv_bytes: bytes of private state per flow (rounded up to a cache line), may be 0.
 * @n_groups: 1 .. PCM_FLOWTAB_MAX_GROUPS.
 * @node: NUMA node per group (-1: local allocation), or NULL for all -1.
 *
 * Threads: any; @tab is not shared until this returns.
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int pcm_flowtab_init(struct pcm_flowtab *tab, uint32_t max_flows, size_t slot_bytes,
		     size_t priv_bytes, uint32_t n_groups, const int *node);

/* Free every chunk and the table's own memory. Threads: once no other thread uses @tab. */
void pcm_flowtab_fini(struct pcm_flowtab *tab);

/**
 * pcm_flowtab_add() - take the lowest free handle among @group's chunks,
 * allocating a chunk at the lowest unused chunk index if they are full.
 * @tab: the table.
 * @group: the group the flow belongs to.
 * @flow: set to the handle.
 *
 * The flow's slot and private area are zeroed.
 * Threads: any; serialised on the table's lock. The zeroed slot is written
 * before the handle is returned; whoever hands the handle to another thread
 * orders that.
 *
 * Return: 0, -EINVAL (bad group), -ENOSPC (no handle left), -ENOMEM.
 */
int pcm_flowtab_add(struct pcm_flowtab *tab, uint32_t group, uint32_t *flow);

/**
 * pcm_flowtab_add_at() - take handle @flow for a flow of @group.
 *
 * Threads: as pcm_flowtab_add().
 *
 * Return: 0, -EINVAL (bad group), -ERANGE (@flow beyond max_flows), -EEXIST
 * (@flow is live), -EXDEV (its chunk belongs to another group), -ENOMEM.
 */
int pcm_flowtab_add_at(struct pcm_flowtab *tab, uint32_t group, uint32_t flow);

/**
 * pcm_flowtab_remove() - give @flow's handle back; frees its chunk when it
 * was the chunk's last flow.
 *
 * Threads: any; serialised on the table's lock. The caller makes sure no
 * thread still uses the flow's slot (a freed chunk reads as zeroes).
 *
 * Return: 0, -ENOENT if @flow is not live.
 */
int pcm_flowtab_remove(struct pcm_flowtab *tab, uint32_t flow);

/* Is @flow a live handle? Threads: any; takes the table's lock. */
bool pcm_flowtab_live(struct pcm_flowtab *tab, uint32_t flow);

/* The group @flow's chunk belongs to, or -1 when it has no chunk. Threads: any; locks. */
int pcm_flowtab_group(struct pcm_flowtab *tab, uint32_t flow);

typedef void (*pcm_flowtab_visit_fn)(void *arg, uint32_t flow, unsigned char *slot,
				     unsigned char *priv);

/*
 * Call @fn for every live flow, in handle order, with the table locked.
 * Threads: any; @fn must not add or remove flows.
 */
void pcm_flowtab_for_each(struct pcm_flowtab *tab, pcm_flowtab_visit_fn fn, void *arg);

/* Bytes allocated (chunks plus the table's directories), and live flows. Threads: any; lock. */
size_t pcm_flowtab_bytes(struct pcm_flowtab *tab);
uint32_t pcm_flowtab_n_live(struct pcm_flowtab *tab);

/*
 * @flow's shared slot, or NULL beyond max_flows; all zeroes unless @flow was
 * added. Threads: any, at any time, without the lock.
 */
static inline unsigned char *pcm_flowtab_slot(const struct pcm_flowtab *tab, uint32_t flow)
{
	if (__builtin_expect(flow >= tab->max_flows, 0))
		return NULL;
	return tab->slots + (size_t)flow * tab->slot_bytes;
}

/* @flow's private area; @flow must be below max_flows. Threads: as pcm_flowtab_slot(). */
static inline unsigned char *pcm_flowtab_priv(const struct pcm_flowtab *tab, uint32_t flow)
{
	return tab->privs + (size_t)flow * tab->priv_bytes;
}

#endif /* PCM_FLOWTAB_H */
