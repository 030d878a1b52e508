// SPDX-License-Identifier: MIT
/*
 * xp_tick.c - test handler: runs on its timer, keeps RATE at line rate.
 */
#include "pcmh.h"
#include "xp_tick.h"

int algorithm_main()
{
	set_control(RATE, PCM_RATE_ONE);
	return PCM_SUCCESS;
}
