// SPDX-License-Identifier: MIT
/*
 * Uses every name of generated_names.yaml, and fails (PCM_ERROR) once more
 * than `cur` ACKs arrived in one call, which the shell must report as -EIO.
 */
#include "generated_names.h"

int algorithm_main()
{
	set_var_uint(valid, get_var_uint(valid) + get_signal(rec));
	set_var_uint(written, get_signal(x));
	set_var_uint(now_ps, get_var_uint(now_ps) + 1);
	set_var_uint(generated_names__VAR_SLOT_COUNT, get_signal(fired));
	set_control(generated_names__CONTROL_COUNT, 1000 * get_var_uint(valid));
	return get_signal(rec) > cur ? PCM_ERROR : PCM_SUCCESS;
}
