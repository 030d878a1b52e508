// SPDX-License-Identifier: MIT
/* scale_helper.c - a library a package links with -L DIR -l pcmtestscale (test_pcmc). */
#include <stdint.h>

uint64_t pcm_test_scale(uint64_t v);

uint64_t pcm_test_scale(uint64_t v)
{
	return 3 * v;
}
