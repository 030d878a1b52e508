// SPDX-License-Identifier: MIT
/* Test handler: records which triggers fired. */
#include "trigger_probe.h"
#include "pcmh.h"

int algorithm_main()
{
	set_var_uint(LAST_MASK, get_signal_trigger_mask());
	set_var_uint(CALLS, get_var_uint(CALLS) + 1);
	return PCM_SUCCESS;
}
