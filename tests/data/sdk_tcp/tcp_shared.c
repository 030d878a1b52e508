// SPDX-License-Identifier: MIT
/* tcp_shared.c - the second C file of reno_like and ecn_like (tcp_shared.h). */
#include "tcp_shared.h"

void tcp_shared_grow(ALGO_CTX_ARGS, pcm_uint *cwnd_pkts, pcm_uint acks)
{
	pcm_uint total;

	if (*cwnd_pkts < get_var_uint(SSTHRESH)) {
		*cwnd_pkts += acks;
		return;
	}
	total = get_var_uint(ACKED_TOTAL) + acks;
	while (total >= *cwnd_pkts) {
		total -= *cwnd_pkts;
		(*cwnd_pkts)++;
	}
	set_var_uint(ACKED_TOTAL, total);
}
