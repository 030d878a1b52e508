// SPDX-License-Identifier: MIT
/*
 * fixed_window: cwnd = WINDOW_BYTES (bytes), whatever the feedback. For tests.
 */
#include "fixed_window.h"
#include "pcmh.h"

int algorithm_main()
{
	set_control(WINDOW, WINDOW_BYTES);
	return PCM_SUCCESS;
}
