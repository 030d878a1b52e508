/* SPDX-License-Identifier: MIT */
/*
 * pool.h - a fixed-size allocator of indices 0..n-1, for the core's object
 * arrays (sender messages, receiver messages, posted operations).
 *
 * All memory is taken at creation; get and put are O(1) and never allocate,
 * so the core's fast path has no malloc. The free list is a stack, which
 * makes the order of indices handed out a function of the calls alone
 * (deterministic runs).
 */
#ifndef XP_POOL_H
#define XP_POOL_H

#include <stdint.h>

#define XP_NONE UINT32_MAX

struct xp_pool {
	uint32_t n;     /* capacity */
	uint32_t used;  /* indices handed out */
	uint32_t *free; /* stack of n - used free indices */
};

/**
 * xp_pool_init() - a pool of @n indices, all free.
 * @pool: the pool.
 * @n: capacity, 1 .. UINT32_MAX - 1.
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int xp_pool_init(struct xp_pool *pool, uint32_t n);

/**
 * xp_pool_fini() - free the pool's memory; its indices must no longer be used.
 * @pool: the pool.
 */
void xp_pool_fini(struct xp_pool *pool);

/**
 * xp_pool_get() - take a free index.
 *
 * Return: a free index, or XP_NONE when the pool is exhausted.
 */
static inline uint32_t xp_pool_get(struct xp_pool *pool)
{
	if (pool->used == pool->n)
		return XP_NONE;
	return pool->free[pool->n - 1 - pool->used++];
}

/**
 * xp_pool_put() - give back @idx, which xp_pool_get() returned and was not put back since.
 */
static inline void xp_pool_put(struct xp_pool *pool, uint32_t idx)
{
	pool->free[pool->n - pool->used--] = idx;
}

#endif /* XP_POOL_H */
