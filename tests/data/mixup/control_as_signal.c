// SPDX-License-Identifier: MIT
/* A control given to a signal accessor: must not build. */
#include "mixup.h"

int algorithm_main()
{
	return get_signal(CWND_BYTES) > 0 ? PCM_SUCCESS : PCM_ERROR;
}
