/* SPDX-License-Identifier: MIT */
/*
 * flow_hash.h - a helper header outside the package directory (pcmc -I),
 * hashing with xxhash as the SDK's packages do; pcmc links libxxhash because
 * the package includes <xxhash.h>.
 */
#ifndef FLOW_HASH_H
#define FLOW_HASH_H

#include <xxhash.h>

#include "pcm.h"

#define FLOW_HASH(v) flow_hash_u64(v)

static inline pcm_uint flow_hash_u64(pcm_uint v)
{
	return (pcm_uint)XXH64(&v, sizeof(v), 0);
}

#endif /* FLOW_HASH_H */
