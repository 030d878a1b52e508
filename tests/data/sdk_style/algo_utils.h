/* SPDX-License-Identifier: MIT */
/* Package-local helper header, in the SDK's style: hashing and libm. */
#ifndef SDK_STYLE_ALGO_UTILS_H
#define SDK_STYLE_ALGO_UTILS_H

#include <math.h>
#include <xxhash.h>

#include "pcm.h"

#define HASH(x) sdk_style_hash(x)

static PCM_FORCE_INLINE pcm_uint sdk_style_hash(pcm_uint x)
{
	return (pcm_uint)XXH64(&x, sizeof(x), 0);
}

/* Defined in helper.c, the package's second C file. */
pcm_uint sdk_style_scale(pcm_uint bytes, pcm_float factor);

#endif
