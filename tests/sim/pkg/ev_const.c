// SPDX-License-Identifier: MIT
/*
 * ev_const.c - test handler: pin the entropy.
 */
#include "ev_const.h"
#include "pcmh.h"

int algorithm_main()
{
	set_control(EV, 0x1234);
	set_var_uint(CALLS, get_var_uint(CALLS) + get_signal(TX_READY));
	return PCM_SUCCESS;
}
