// SPDX-License-Identifier: MIT
/*
 * reno_like - the handler of reno_like.yaml, in the SDK's layout: growth in
 * tcp_shared.c (a second C file), hashing from include/flow_hash.h.
 */
#include "reno_like.h"
#include "flow_hash.h"
#include "tcp_shared.h"

int algorithm_main()
{
	pcm_uint cwnd_pkts = get_control(CWND) / MSS;

	if (get_signal(NACK) > 0) {
		cwnd_pkts = cwnd_pkts > 2 ? cwnd_pkts / 2 : 1;
		set_var_uint(SSTHRESH, cwnd_pkts);
		update_signal(NACK, -get_signal(NACK));
	} else {
		tcp_shared_grow(ALGO_CTX_PASS, &cwnd_pkts, get_signal(ACK));
	}
	set_var_uint(LAST_HASH, FLOW_HASH(cwnd_pkts));
	set_control(CWND, cwnd_pkts * MSS);
	return PCM_SUCCESS;
}
