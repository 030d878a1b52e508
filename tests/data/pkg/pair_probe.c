// SPDX-License-Identifier: MIT
/*
 * Test handler: tallies the paired signals it is given. A snapshot is mixed
 * when BYTES != ACKS * PAIR_MSS (its imbalance, in events, is the
 * difference / PAIR_MSS) or EV_A != EV_B (their distance, in events, is how
 * many events landed between the two reads). Takes one backlog packet per call.
 */
#include "pair_probe.h"
#include "pcmh.h"

static PCM_FORCE_INLINE pcm_uint dist(pcm_uint a, pcm_uint b)
{
	return a > b ? a - b : b - a;
}

int algorithm_main()
{
	pcm_uint acks = get_signal(ACKS), bytes = get_signal(BYTES);
	pcm_uint imbal = dist(acks * PAIR_MSS, bytes) / PAIR_MSS;
	pcm_uint ev_skew = dist(get_signal(EV_A), get_signal(EV_B));

	set_var_uint(CALLS, get_var_uint(CALLS) + 1);
	set_var_uint(ACK_SEEN, get_var_uint(ACK_SEEN) + acks);
	set_var_uint(BYTES_SEEN, get_var_uint(BYTES_SEEN) + bytes);
	if (imbal || ev_skew)
		set_var_uint(MIXED, get_var_uint(MIXED) + 1);
	set_var_uint(IMBAL_MAX, MAX(get_var_uint(IMBAL_MAX), imbal));
	set_var_uint(IMBAL_SUM, get_var_uint(IMBAL_SUM) + imbal);
	set_var_uint(EV_SKEW_MAX, MAX(get_var_uint(EV_SKEW_MAX), ev_skew));
	set_var_uint(EV_SKEW_SUM, get_var_uint(EV_SKEW_SUM) + ev_skew);
	if (get_signal(BACKLOG) > 0) {
		update_signal(BACKLOG, -1);
		set_var_uint(BACKLOG_TAKEN, get_var_uint(BACKLOG_TAKEN) + 1);
	}
	set_control(OUT, get_control(OUT) + 1);
	return PCM_SUCCESS;
}
