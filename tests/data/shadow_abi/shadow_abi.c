// SPDX-License-Identifier: MIT
/* Includes pcm's headers by the names the package directory also has. */
#include "pcm.h"
#include "pcmh.h"
#include "shadow_abi.h"

int algorithm_main()
{
	set_control(CWND, get_control(CWND) + get_signal(ACK));
	return PCM_SUCCESS;
}
