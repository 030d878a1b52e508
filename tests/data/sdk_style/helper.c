// SPDX-License-Identifier: MIT
/* Second C file of the SDK-style package, compiled alongside the handler. */
#include "algo_utils.h"

pcm_uint sdk_style_scale(pcm_uint bytes, pcm_float factor)
{
	return (pcm_uint)floor((pcm_float)bytes * factor);
}
