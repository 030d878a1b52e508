// SPDX-License-Identifier: MIT
/* Every accessor with a name of its own kind: builds. */
#include "mixup.h"

int algorithm_main()
{
	set_var_uint(COUNT, get_var_uint(COUNT) + get_signal(NUM_ACK));
	set_arr_uint(HIST, get_var(COUNT) & 3, get_signal(NUM_ECN));
	set_var_float(GAIN, get_var_float(GAIN) * 1.0);
	set_control(CWND_BYTES, get_control(CWND_BYTES) + MSS * get_arr_uint(HIST, 0));
	return PCM_SUCCESS;
}
