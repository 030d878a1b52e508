// SPDX-License-Identifier: MIT
/*
 * pace_half.c - test handler: keep RATE at one half.
 */
#include "pace_half.h"
#include "pcmh.h"

int algorithm_main()
{
	set_control(RATE, PCM_RATE_ONE / 2);
	return PCM_SUCCESS;
}
