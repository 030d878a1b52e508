// SPDX-License-Identifier: MIT
/*
 * SDK-style handler: includes in the SDK's order, SDK accessor spellings,
 * helper functions taking ALGO_CTX_ARGS. Each ACK call counts ACKs, records a
 * hash of the count, and sets the window to SCALE * FABRIC_MAX_CWND bounded
 * below by HALF_BDP; a NACK halves SCALE and is consumed by hand.
 */
#include "pcmh.h"
#include "algo_utils.h"
#include "pcm.h"
#include "sdk_style.h"

static PCM_FORCE_INLINE void on_nack(ALGO_CTX_ARGS)
{
	set_var_float(SCALE, get_var_float(SCALE) / 2);
	update_signal(NUM_NACK, -get_signal(NUM_NACK));
}

int algorithm_main()
{
	pcm_uint trigger_mask = get_signal_trigger_mask();

	if (trigger_mask & NUM_NACK)
		on_nack(ALGO_CTX_PASS);
	if (trigger_mask & NUM_ACK) {
		set_var_uint(COUNT, get_var(COUNT) + get_signal(NUM_ACK));
		set_arr_uint(HIST, get_var_uint(COUNT) & 3, HASH(get_var_uint(COUNT)));
	}
	set_control(CWND_BYTES, MAX(sdk_style_scale(FABRIC_MAX_CWND, get_var_float(SCALE)),
				    (pcm_uint)HALF_BDP));
	return PCM_SUCCESS;
}
