// SPDX-License-Identifier: MIT
/*
 * base_rtt_echo.c - test handler: keep the first and the latest base RTT.
 */
#include "base_rtt_echo.h"
#include "pcmh.h"

int algorithm_main()
{
	if (!get_var_uint(FIRST_BASE_RTT))
		set_var_uint(FIRST_BASE_RTT, get_signal(BASE_RTT));
	set_var_uint(LAST_BASE_RTT, get_signal(BASE_RTT));
	return PCM_SUCCESS;
}
