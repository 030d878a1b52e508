// SPDX-License-Identifier: MIT
/*
 * pool.c - setup of the index pools (pool.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "pool.h"

int xp_pool_init(struct xp_pool *pool, uint32_t n)
{
	if (n == 0 || n == XP_NONE)
		return -EINVAL;
	pool->free = malloc((size_t)n * sizeof(*pool->free));
	if (!pool->free)
		return -ENOMEM;
	pool->n = n;
	pool->used = 0;
	/* Stack top is free[n - 1 - used]: hand out 0, 1, 2, ... first. */
	for (uint32_t i = 0; i < n; i++)
		pool->free[i] = n - 1 - i;
	return 0;
}

void xp_pool_fini(struct xp_pool *pool)
{
	free(pool->free);
	pool->free = NULL;
	pool->n = pool->used = 0;
}
