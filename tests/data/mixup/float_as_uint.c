// SPDX-License-Identifier: MIT
/* A float variable read as uint: must not build. */
#include "mixup.h"

int algorithm_main()
{
	return get_var_uint(GAIN) ? PCM_SUCCESS : PCM_ERROR;
}
