// SPDX-License-Identifier: MIT
/*
 * RATE = FROM_CC * 1000 + FROM_CFLAGS * 100 + FROM_D * 10 + pcm_test_scale(1)
 * when built with -D USE_SCALE_LIB (and -L/-l to link it), else + 0.
 */
#include <stdint.h>

#include "flags_probe.h"

#ifndef HANDLER_BUILD
#error "pcmc defines HANDLER_BUILD, as the SDK's build does"
#endif
#ifndef BUILD_ALGO_FLAGS_PROBE
#error "pcmc defines BUILD_ALGO_<NAME>, as the SDK's build does"
#endif
#ifndef FROM_CC
#define FROM_CC 0
#endif
#ifndef FROM_CFLAGS
#define FROM_CFLAGS 0
#endif
#ifndef FROM_D
#define FROM_D 0
#endif

#ifdef USE_SCALE_LIB
uint64_t pcm_test_scale(uint64_t v);
#define SCALED_ONE pcm_test_scale(1)
#else
#define SCALED_ONE 0
#endif

int algorithm_main()
{
	set_control(RATE, FROM_CC * 1000 + FROM_CFLAGS * 100 + FROM_D * 10 + SCALED_ONE);
	return PCM_SUCCESS;
}
