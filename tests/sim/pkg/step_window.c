// SPDX-License-Identifier: MIT
/*
 * step_window.c - test handler: open the window to 16 packets.
 */
#include "step_window.h"
#include "pcmh.h"

int algorithm_main()
{
	set_control(CWND, 16 * 4184);
	return PCM_SUCCESS;
}
