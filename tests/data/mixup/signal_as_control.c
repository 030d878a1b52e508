// SPDX-License-Identifier: MIT
/* A signal given to a control accessor: must not build. */
#include "mixup.h"

int algorithm_main()
{
	set_control(NUM_ECN, 1);
	return PCM_SUCCESS;
}
