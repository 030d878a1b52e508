// SPDX-License-Identifier: MIT
/*
 * Handler of both probe packages of the deterministic-interleaving test
 * (dst_p.yaml, dst_q.yaml). The generated unit includes the package's own
 * header first, so this file names signals and controls without it. Each
 * call reports its snapshot to the test (dst_observe()), which checks it
 * and keeps the totals across swaps and resets.
 */
#include "pcmh.h"

void dst_observe(pcm_uint seed, pcm_uint acks, pcm_uint bytes, pcm_uint ev_a, pcm_uint ev_b,
		 pcm_uint backlog_taken);

int algorithm_main()
{
	pcm_uint acks = get_signal(ACKS), bytes = get_signal(BYTES), taken = 0;

	if (get_signal(BACKLOG) > 0) {
		update_signal(BACKLOG, -1);
		set_control(TAKEN, get_control(TAKEN) + 1);
		taken = 1;
	}
	set_control(TOTAL, get_control(TOTAL) + acks);
	set_control(BYTES_TOTAL, get_control(BYTES_TOTAL) + bytes / DST_MSS);
	set_control(CHECK, 3 * get_control(TOTAL) + get_control(BYTES_TOTAL));
	dst_observe(get_signal(SEED), acks, bytes, get_signal(EV_A), get_signal(EV_B), taken);
	return PCM_SUCCESS;
}
