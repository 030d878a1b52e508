/* SPDX-License-Identifier: MIT */
/*
 * keys.h - remote keys a datapath checks before it places a write: a
 * region's key and each receive's own key (datapath.h, "memory").
 *
 * A key is a slot index (low 20 bits) and a generation (high 12 bits, never
 * 0), so a released key's word is refused even after its slot is reused,
 * until the generation wraps (4,095 reuses of the slot later). Slots are
 * reused oldest-released first (a FIFO), so with n slots a word comes back
 * only after 4,095 x n allocations, not 4,095 receives on a hot slot. The owner
 * (one thread) allocates and releases; any thread may place through a key:
 * it holds the slot's writer count while it checks and copies, and a
 * release clears the key, then waits for the writers to leave. Once
 * xp_keys_release() returns nothing lands through that key.
 */
#ifndef XP_KEYS_H
#define XP_KEYS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "datapath.h"

#define XP_KEY_INDEX_BITS 20
#define XP_KEY_INDEX_MASK ((1u << XP_KEY_INDEX_BITS) - 1)
#define XP_KEYS_MAX XP_KEY_INDEX_MASK

struct xp_key {
	_Atomic uint32_t word;    /* 0: free or released */
	_Atomic uint32_t writers; /* placements through it under way */
	uint16_t gen;
	uint32_t next_free;
	uint64_t addr;
	uint64_t len;
};

struct xp_keys {
	struct xp_key *k;
	uint32_t n;
	uint32_t free, free_tail; /* FIFO of free slots, UINT32_MAX: empty */
	uint32_t used;
};

/* Return: 0, -EINVAL (@n above XP_KEYS_MAX or 0), -ENOMEM. */
int xp_keys_init(struct xp_keys *t, uint32_t n);
void xp_keys_fini(struct xp_keys *t);

/**
 * xp_keys_alloc() - a key for [@addr, @addr + @len) (the owner only).
 *
 * Return: 0 with *word set, -ENOSPC.
 */
int xp_keys_alloc(struct xp_keys *t, uint64_t addr, uint64_t len, uint32_t *word);

/* Release key @word (the owner only); an unknown or released word is ignored. */
void xp_keys_release(struct xp_keys *t, uint32_t word);

/**
 * xp_keys_place() - place @len bytes at @raddr through key @word (any thread).
 * @t: the receiver's keys.
 * @word: the write's rkey.
 * @raddr: where.
 * @len: how much.
 * @src: the bytes to copy, or NULL to check only.
 *
 * Return: whether the key allowed it (and the bytes were copied).
 */
bool xp_keys_place(struct xp_keys *t, uint32_t word, uint64_t raddr, uint64_t len,
		   const void *src);

/**
 * xp_keys_mr_reg() - a region's key, for a datapath's mr_reg (lkey = rkey = handle = the key).
 * @t: the instance's keys.
 * @who: the instance, for the message ("null datapath: engine 0").
 * @addr: the region (NULL only with @len 0).
 * @len: its length.
 * @mr: filled in.
 * @diag: on failure, what is wrong, naming @who.
 *
 * Return: 0, -EINVAL (a NULL region), -ENOSPC (every key in use).
 */
int xp_keys_mr_reg(struct xp_keys *t, const char *who, void *addr, size_t len,
		   struct xp_dp_mr *mr, struct pcm_diag *diag);

/**
 * xp_keys_recv_key() - a receive's own key over [@addr, @addr + @len) inside region @mr.
 *
 * Return: 0 with *rkey set, -EINVAL (outside the region), -ENOSPC.
 */
int xp_keys_recv_key(struct xp_keys *t, const struct xp_dp_mr *mr, uint64_t addr, uint64_t len,
		     uint32_t *rkey);

#endif /* XP_KEYS_H */
