// SPDX-License-Identifier: MIT
/*
 * rto_entropy.c - test handler: on a timeout, keep the entropy it reports.
 */
#include "rto_entropy.h"
#include "pcmh.h"

int algorithm_main()
{
	set_var_uint(RTOS, get_var_uint(RTOS) + get_signal(N_RTO));
	set_var_uint(LAST_RTO_EV, get_signal(LOST_ENTROPY));
	return PCM_SUCCESS;
}
