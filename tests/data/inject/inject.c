// SPDX-License-Identifier: MIT
/* The handler of inject.yaml: doubles the window per call. */
#include "inject.h"

int algorithm_main()
{
	set_control(CWND, 2 * get_control(CWND));
	return PCM_SUCCESS;
}
