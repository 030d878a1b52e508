// SPDX-License-Identifier: MIT
/* A constant given to a variable accessor, in code that never runs: must not build. */
#include "mixup.h"

int algorithm_main()
{
	if (0)
		return (int)get_var(MSS);
	return PCM_SUCCESS;
}
