// SPDX-License-Identifier: MIT
/*
 * trap_on_ack.c - test handler: crash the process at the first ACK.
 */
#include "trap_on_ack.h"
#include "pcmh.h"

int algorithm_main()
{
	__builtin_trap();
	return PCM_SUCCESS;
}
