// SPDX-License-Identifier: MIT
/*
 * sim_counter.c - test handler: adds every fed count to a variable.
 */
#include "sim_counter.h"
#include "pcmh.h"

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();

	set_var_uint(ACKS, get_var_uint(ACKS) + get_signal(N_ACK));
	set_var_uint(NACKS, get_var_uint(NACKS) + get_signal(N_NACK));
	set_var_uint(RTOS, get_var_uint(RTOS) + get_signal(N_RTO));
	set_var_uint(TXES, get_var_uint(TXES) + get_signal(N_TXE));
	set_var_uint(ECNS, get_var_uint(ECNS) + get_signal(N_ECN));
	set_var_uint(CNPS, get_var_uint(CNPS) + get_signal(N_CNP));
	set_var_uint(ACKED_BYTES, get_var_uint(ACKED_BYTES) + get_signal(ACKED));
	if (mask & N_ACK)
		set_var_uint(LAST_RTT, get_signal(RTT));
	if (mask & N_NACK)
		set_var_uint(LAST_NACK_EV, get_signal(NACK_ENTROPY));
	return PCM_SUCCESS;
}
