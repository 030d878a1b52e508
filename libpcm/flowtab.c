// SPDX-License-Identifier: MIT
/*
 * flowtab.c - the flow table (flowtab.h): address ranges reserved for every
 * handle and committed a chunk of flows at a time on the chunk's group's NUMA
 * node, lowest-free handle allocation, and giving a chunk's memory back with
 * its last flow.
 *
 * Free handles are found through two-level bitmaps: one bit per chunk index
 * that has no chunk, and per group one bit per chunk with a free slot, each
 * with a summary word per 64 words, so finding the lowest takes at most 64
 * plus one word reads however large the table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifdef PCM_HAVE_NUMA
#include <numa.h>
#endif

#include "flowtab.h"

#define CACHELINE 64
#define CHUNK_WORDS (PCM_FLOWTAB_CHUNK_FLOWS / 64)

struct pcm_flowtab_chunk {
	uint32_t group;
	uint32_t live;
	uint64_t used[CHUNK_WORDS]; /* bit per live slot */
};

/* ---- two-level bitmaps: n bits, then n / 64 summary bits ------------------------------- */

static size_t bits_words(uint32_t n)
{
	size_t w0 = (n + 63) / 64;

	return w0 + (w0 + 63) / 64;
}

static void bit_set(uint64_t *b, uint32_t n, uint32_t i)
{
	size_t w0 = (n + 63) / 64;

	b[i / 64] |= (uint64_t)1 << (i % 64);
	b[w0 + i / 4096] |= (uint64_t)1 << ((i / 64) % 64);
}

static void bit_clear(uint64_t *b, uint32_t n, uint32_t i)
{
	size_t w0 = (n + 63) / 64;

	b[i / 64] &= ~((uint64_t)1 << (i % 64));
	if (!b[i / 64])
		b[w0 + i / 4096] &= ~((uint64_t)1 << ((i / 64) % 64));
}

/* The lowest set bit, or -1. */
static int64_t bit_first(const uint64_t *b, uint32_t n)
{
	size_t w0 = (n + 63) / 64, w1 = (w0 + 63) / 64;

	for (size_t s = 0; s < w1; s++) {
		if (b[w0 + s]) {
			size_t w = s * 64 + (size_t)__builtin_ctzll(b[w0 + s]);

			return (int64_t)(w * 64 + (size_t)__builtin_ctzll(b[w]));
		}
	}
	return -1;
}

/* ---- chunk memory ------------------------------------------------------------------------ */

static void *reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t chunk_slot_bytes(const struct pcm_flowtab *tab)
{
	return (size_t)PCM_FLOWTAB_CHUNK_FLOWS * tab->slot_bytes;
}

static size_t chunk_priv_bytes(const struct pcm_flowtab *tab)
{
	return (size_t)PCM_FLOWTAB_CHUNK_FLOWS * tab->priv_bytes;
}

/* Pages of chunk @c, in both ranges, come from @node when first touched. */
static void place_chunk(struct pcm_flowtab *tab, uint32_t c, int node)
{
#ifdef PCM_HAVE_NUMA
	if (node < 0 || numa_available() < 0)
		return;
	numa_tonode_memory(tab->slots + c * chunk_slot_bytes(tab), chunk_slot_bytes(tab), node);
	if (tab->privs)
		numa_tonode_memory(tab->privs + c * chunk_priv_bytes(tab), chunk_priv_bytes(tab),
				   node);
#else
	(void)tab;
	(void)c;
	(void)node;
#endif
}

/* Give chunk @c's pages back; they read as zeroes until touched again. */
static void release_chunk(struct pcm_flowtab *tab, uint32_t c)
{
	madvise(tab->slots + c * chunk_slot_bytes(tab), chunk_slot_bytes(tab), MADV_DONTNEED);
	if (tab->privs)
		madvise(tab->privs + c * chunk_priv_bytes(tab), chunk_priv_bytes(tab),
			MADV_DONTNEED);
}

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/* ---- setup ------------------------------------------------------------------------------- */

int pcm_flowtab_init(struct pcm_flowtab *tab, uint32_t max_flows, size_t slot_bytes,
		     size_t priv_bytes, uint32_t n_groups, const int *node)
{
	size_t nb;

	memset(tab, 0, sizeof(*tab));
	if (max_flows == 0 || max_flows > PCM_FLOWTAB_MAX_FLOWS || slot_bytes == 0 ||
	    n_groups == 0 || n_groups > PCM_FLOWTAB_MAX_GROUPS)
		return -EINVAL;
	tab->slot_bytes = (uint32_t)round_up(slot_bytes, CACHELINE);
	tab->priv_bytes = (uint32_t)round_up(priv_bytes, CACHELINE);
	tab->n_chunks = (max_flows + PCM_FLOWTAB_CHUNK_FLOWS - 1) / PCM_FLOWTAB_CHUNK_FLOWS;
	tab->max_flows = tab->n_chunks * PCM_FLOWTAB_CHUNK_FLOWS;
	tab->n_groups = n_groups;
	for (uint32_t g = 0; g < PCM_FLOWTAB_MAX_GROUPS; g++)
		tab->node[g] = node && g < n_groups ? node[g] : -1;
	nb = bits_words(tab->n_chunks);
	tab->slots = reserve((size_t)tab->max_flows * tab->slot_bytes);
	tab->privs = tab->priv_bytes ? reserve((size_t)tab->max_flows * tab->priv_bytes) : NULL;
	tab->chunks = calloc(tab->n_chunks, sizeof(*tab->chunks));
	tab->unowned = calloc(nb, sizeof(uint64_t));
	tab->nonfull = calloc(n_groups, sizeof(*tab->nonfull));
	if (!tab->slots || (tab->priv_bytes && !tab->privs) || !tab->chunks || !tab->unowned ||
	    !tab->nonfull)
		goto err_free;
	for (uint32_t g = 0; g < n_groups; g++) {
		tab->nonfull[g] = calloc(nb, sizeof(uint64_t));
		if (!tab->nonfull[g])
			goto err_free;
	}
	for (uint32_t c = 0; c < tab->n_chunks; c++)
		bit_set(tab->unowned, tab->n_chunks, c);
	tab->bytes = tab->n_chunks * sizeof(*tab->chunks) + (n_groups + 1) * nb * sizeof(uint64_t);
	pthread_mutex_init(&tab->lock, NULL);
	return 0;

err_free:
	for (uint32_t g = 0; tab->nonfull && g < n_groups; g++)
		free(tab->nonfull[g]);
	free(tab->nonfull);
	free(tab->unowned);
	free(tab->chunks);
	if (tab->slots)
		munmap(tab->slots, (size_t)tab->max_flows * tab->slot_bytes);
	if (tab->privs)
		munmap(tab->privs, (size_t)tab->max_flows * tab->priv_bytes);
	memset(tab, 0, sizeof(*tab));
	return -ENOMEM;
}

static void chunk_free(struct pcm_flowtab *tab, uint32_t c)
{
	release_chunk(tab, c);
	tab->bytes -= chunk_slot_bytes(tab) + chunk_priv_bytes(tab) + sizeof(*tab->chunks[c]);
	free(tab->chunks[c]);
	tab->chunks[c] = NULL;
	tab->live_chunks--;
}

void pcm_flowtab_fini(struct pcm_flowtab *tab)
{
	if (!tab->slots)
		return;
	for (uint32_t c = 0; c < tab->n_chunks; c++)
		free(tab->chunks[c]);
	for (uint32_t g = 0; g < tab->n_groups; g++)
		free(tab->nonfull[g]);
	free(tab->nonfull);
	free(tab->unowned);
	free(tab->chunks);
	munmap(tab->slots, (size_t)tab->max_flows * tab->slot_bytes);
	if (tab->privs)
		munmap(tab->privs, (size_t)tab->max_flows * tab->priv_bytes);
	pthread_mutex_destroy(&tab->lock);
	memset(tab, 0, sizeof(*tab));
}

/* ---- allocation (lock held) -------------------------------------------------------------- */

static int chunk_create(struct pcm_flowtab *tab, uint32_t group, uint32_t c)
{
	struct pcm_flowtab_chunk *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return -ENOMEM;
	ch->group = group;
	place_chunk(tab, c, tab->node[group]);
	tab->chunks[c] = ch;
	tab->bytes += chunk_slot_bytes(tab) + chunk_priv_bytes(tab) + sizeof(*ch);
	tab->live_chunks++;
	bit_clear(tab->unowned, tab->n_chunks, c);
	bit_set(tab->nonfull[group], tab->n_chunks, c);
	return 0;
}

static void slot_take(struct pcm_flowtab *tab, uint32_t flow)
{
	uint32_t c = flow >> PCM_FLOWTAB_CHUNK_SHIFT, i = flow & (PCM_FLOWTAB_CHUNK_FLOWS - 1);
	struct pcm_flowtab_chunk *ch = tab->chunks[c];

	ch->used[i / 64] |= (uint64_t)1 << (i % 64);
	if (++ch->live == PCM_FLOWTAB_CHUNK_FLOWS)
		bit_clear(tab->nonfull[ch->group], tab->n_chunks, c);
	tab->live++;
	memset(pcm_flowtab_slot(tab, flow), 0, tab->slot_bytes);
	if (tab->priv_bytes)
		memset(pcm_flowtab_priv(tab, flow), 0, tab->priv_bytes);
}

static uint32_t lowest_free_slot(const struct pcm_flowtab_chunk *ch)
{
	for (uint32_t w = 0; w < CHUNK_WORDS; w++)
		if (~ch->used[w])
			return w * 64 + (uint32_t)__builtin_ctzll(~ch->used[w]);
	return PCM_FLOWTAB_CHUNK_FLOWS; /* not reached: the chunk is in nonfull */
}

int pcm_flowtab_add(struct pcm_flowtab *tab, uint32_t group, uint32_t *flow)
{
	int64_t c;
	int rc = 0;

	if (group >= tab->n_groups)
		return -EINVAL;
	pthread_mutex_lock(&tab->lock);
	c = bit_first(tab->nonfull[group], tab->n_chunks);
	if (c < 0) {
		c = bit_first(tab->unowned, tab->n_chunks);
		rc = c < 0 ? -ENOSPC : chunk_create(tab, group, (uint32_t)c);
	}
	if (rc == 0) {
		*flow = ((uint32_t)c << PCM_FLOWTAB_CHUNK_SHIFT) +
			lowest_free_slot(tab->chunks[c]);
		slot_take(tab, *flow);
	}
	pthread_mutex_unlock(&tab->lock);
	return rc;
}

int pcm_flowtab_add_at(struct pcm_flowtab *tab, uint32_t group, uint32_t flow)
{
	uint32_t c = flow >> PCM_FLOWTAB_CHUNK_SHIFT, i = flow & (PCM_FLOWTAB_CHUNK_FLOWS - 1);
	int rc = 0;

	if (group >= tab->n_groups)
		return -EINVAL;
	if (flow >= tab->max_flows)
		return -ERANGE;
	pthread_mutex_lock(&tab->lock);
	if (!tab->chunks[c])
		rc = chunk_create(tab, group, c);
	else if (tab->chunks[c]->group != group)
		rc = -EXDEV;
	else if (tab->chunks[c]->used[i / 64] & ((uint64_t)1 << (i % 64)))
		rc = -EEXIST;
	if (rc == 0)
		slot_take(tab, flow);
	pthread_mutex_unlock(&tab->lock);
	return rc;
}

int pcm_flowtab_remove(struct pcm_flowtab *tab, uint32_t flow)
{
	uint32_t c = flow >> PCM_FLOWTAB_CHUNK_SHIFT, i = flow & (PCM_FLOWTAB_CHUNK_FLOWS - 1);
	struct pcm_flowtab_chunk *ch;
	int rc = 0;

	if (flow >= tab->max_flows)
		return -ENOENT;
	pthread_mutex_lock(&tab->lock);
	ch = tab->chunks[c];
	if (!ch || !(ch->used[i / 64] & ((uint64_t)1 << (i % 64)))) {
		rc = -ENOENT;
	} else {
		ch->used[i / 64] &= ~((uint64_t)1 << (i % 64));
		tab->live--;
		if (ch->live-- == PCM_FLOWTAB_CHUNK_FLOWS)
			bit_set(tab->nonfull[ch->group], tab->n_chunks, c);
		if (!ch->live) {
			bit_clear(tab->nonfull[ch->group], tab->n_chunks, c);
			bit_set(tab->unowned, tab->n_chunks, c);
			chunk_free(tab, c);
		}
	}
	pthread_mutex_unlock(&tab->lock);
	return rc;
}

bool pcm_flowtab_live(struct pcm_flowtab *tab, uint32_t flow)
{
	uint32_t c = flow >> PCM_FLOWTAB_CHUNK_SHIFT, i = flow & (PCM_FLOWTAB_CHUNK_FLOWS - 1);
	bool live;

	if (flow >= tab->max_flows)
		return false;
	pthread_mutex_lock(&tab->lock);
	live = tab->chunks[c] && (tab->chunks[c]->used[i / 64] & ((uint64_t)1 << (i % 64)));
	pthread_mutex_unlock(&tab->lock);
	return live;
}

int pcm_flowtab_group(struct pcm_flowtab *tab, uint32_t flow)
{
	int group = -1;

	if (flow >= tab->max_flows)
		return -1;
	pthread_mutex_lock(&tab->lock);
	if (tab->chunks[flow >> PCM_FLOWTAB_CHUNK_SHIFT])
		group = (int)tab->chunks[flow >> PCM_FLOWTAB_CHUNK_SHIFT]->group;
	pthread_mutex_unlock(&tab->lock);
	return group;
}

void pcm_flowtab_for_each(struct pcm_flowtab *tab, pcm_flowtab_visit_fn fn, void *arg)
{
	pthread_mutex_lock(&tab->lock);
	for (uint32_t c = 0; c < tab->n_chunks; c++) {
		const struct pcm_flowtab_chunk *ch = tab->chunks[c];

		for (uint32_t w = 0; ch && w < CHUNK_WORDS; w++) {
			for (uint64_t m = ch->used[w]; m; m &= m - 1) {
				uint32_t flow = (c << PCM_FLOWTAB_CHUNK_SHIFT) + w * 64 +
						(uint32_t)__builtin_ctzll(m);

				fn(arg, flow, pcm_flowtab_slot(tab, flow),
				   tab->priv_bytes ? pcm_flowtab_priv(tab, flow) : NULL);
			}
		}
	}
	pthread_mutex_unlock(&tab->lock);
}

/* The table's size and live flows, read together under its lock. */
static void read_counts(struct pcm_flowtab *tab, size_t *bytes, uint32_t *live)
{
	pthread_mutex_lock(&tab->lock);
	*bytes = tab->bytes;
	*live = tab->live;
	pthread_mutex_unlock(&tab->lock);
}

size_t pcm_flowtab_bytes(struct pcm_flowtab *tab)
{
	size_t bytes;
	uint32_t live;

	read_counts(tab, &bytes, &live);
	return bytes;
}

uint32_t pcm_flowtab_n_live(struct pcm_flowtab *tab)
{
	size_t bytes;
	uint32_t live;

	read_counts(tab, &bytes, &live);
	return live;
}
