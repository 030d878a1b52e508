// SPDX-License-Identifier: MIT
/* An array read as a scalar variable: must not build. */
#include "mixup.h"

int algorithm_main()
{
	set_var_uint(HIST, 1);
	return PCM_SUCCESS;
}
