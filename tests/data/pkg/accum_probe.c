// SPDX-License-Identifier: MIT
/* Test handler: records the signal values it is given. */
#include "accum_probe.h"
#include "pcmh.h"

int algorithm_main()
{
	set_var_uint(CALLS, get_var_uint(CALLS) + 1);
	set_arr_uint(SEEN, 0, get_signal(S_SUM));
	set_arr_uint(SEEN, 1, get_signal(S_MIN));
	set_arr_uint(SEEN, 2, get_signal(S_MAX));
	set_arr_uint(SEEN, 3, get_signal(S_LAST));
	set_arr_uint(SEEN, 4, get_signal(S_BYTES));
	set_control(OUT, get_control(OUT) + 1);
	return PCM_SUCCESS;
}
