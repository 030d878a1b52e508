// SPDX-License-Identifier: MIT
/*
 * xp_probe.c - test handler: sums the counts it is fed (each is consumed by
 * the call, reset_upon_trigger), keeps the last value of the others, and sets
 * EV to the number of transmit events so far.
 */
#include "pcmh.h"
#include "xp_probe.h"

static PCM_FORCE_INLINE void add(ALGO_CTX_ARGS, unsigned i, pcm_uint v)
{
	set_arr_uint(TOT, i, get_arr_uint(TOT, i) + v);
}

int algorithm_main()
{
	add(ALGO_CTX_PASS, 0, get_signal(N_ACK));
	add(ALGO_CTX_PASS, 1, get_signal(N_NACK));
	add(ALGO_CTX_PASS, 2, get_signal(N_RTO));
	add(ALGO_CTX_PASS, 3, get_signal(N_TX));
	add(ALGO_CTX_PASS, 4, get_signal(N_ECN));
	add(ALGO_CTX_PASS, 5, get_signal(ACKED));
	add(ALGO_CTX_PASS, 6, get_signal(NACKED));
	add(ALGO_CTX_PASS, 7, 1);
	set_arr_uint(LAST, 0, get_signal(RTT));
	set_arr_uint(LAST, 1, get_signal(QDELAY));
	set_arr_uint(LAST, 2, get_signal(INFL));
	set_arr_uint(LAST, 3, get_signal(BACKLOG));
	set_arr_uint(LAST, 4, get_signal(AEV));
	set_arr_uint(LAST, 5, get_signal(EEV));
	set_arr_uint(LAST, 6, get_signal(NEV));
	set_arr_uint(LAST, 7, get_signal(SEED));
	/* The next transmission takes the next path. */
	if (get_signal(N_TX))
		set_control(EV, get_arr_uint(TOT, 3));
	return PCM_SUCCESS;
}
