// SPDX-License-Identifier: MIT
/* ecn_like - the handler of ecn_like.yaml: tcp_shared.c's growth, cut on ECN. */
#include "ecn_like.h"
#include "tcp_shared.h"

#ifndef ECN_CUT_SHIFT
#error "build ecn_like with -D ECN_CUT_SHIFT=N"
#endif

int algorithm_main()
{
	pcm_uint cwnd_pkts = get_control(CWND) / MSS;

	if (get_signal(ECN) > 0) {
		cwnd_pkts -= cwnd_pkts >> ECN_CUT_SHIFT;
		set_var_uint(MARKED_CALLS, get_var_uint(MARKED_CALLS) + 1);
		update_signal(ECN, -get_signal(ECN));
	} else {
		tcp_shared_grow(ALGO_CTX_PASS, &cwnd_pkts, get_signal(ACK));
	}
	set_control(CWND, cwnd_pkts * MSS);
	return PCM_SUCCESS;
}
