// SPDX-License-Identifier: MIT
/* float_index - a local shadows the variable K; the accessors still mean K. */
#include "float_index.h"

static PCM_FORCE_INLINE void grow(ALGO_CTX_ARGS)
{
	pcm_float K = get_var_float(K); /* the variable K, not this local */

	K = 2 * K + 1;
	set_var_float(K, K); /* the variable K gets the local K */
}

int algorithm_main()
{
	grow(ALGO_CTX_PASS);
	pcm_float K = get_var_float(K);

	set_control(CWND, (pcm_uint)(K * get_var_uint(SCALE)));
	return PCM_SUCCESS;
}
