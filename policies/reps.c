// SPDX-License-Identifier: MIT
/*
 * reps.c - REPS, recycled entropy packet spraying.
 *
 * Bonato et al., "REPS: Recycled Entropy Packet Spraying for Adaptive Load
 * Balancing and Failure Mitigation", EuroSys; path feedback as the UET NIC
 * gives it (seeds/uet-nic-datapath.txt).
 *
 * A FIFO caches up to CACHE_LEN entropies that recently crossed the network
 * well. Feedback, per event:
 *   ACK without ECN:                 cache its entropy (recycle)
 *   ACK with ECN:                    drop it (the path is congested)
 *   NACK, trimmed on the way:        drop it
 *   NACK, trimmed on the last hop:   cache it unless marked (the path is fine,
 *                                    the receiver's link is not)
 *   RTO, not frozen, not exploring:  freeze for FREEZE_PS
 * Each packet (TX_READY) takes, in order of precedence:
 *   exploring (EXPLORE_LEFT > 0):    a random entropy
 *   frozen:                          the cached entropies round-robin, fresh or
 *                                    not: known-good paths, no exploration that
 *                                    could land on a failed link
 *   otherwise:                       the oldest fresh cached entropy, or a random
 *                                    one when none is fresh
 * When a freeze expires the cache is emptied and EXPLORE_PKTS random entropies
 * go out before recycling resumes.
 *
 * A datapath reports a last-hop trim by setting NACK_LAST_HOP_FLAG (bit 16)
 * in NACK_EV; entropies are 16 bits, so the flag never collides with one.
 * Without it every NACK counts as trimmed on the way. An ACK's entropy is
 * ACK_EV and its ECN echo is ECN in the same event, so events are per ACK.
 *
 * In the emulation (beside a CC package, `lb: reps`): traffic steers away
 * from a failed link once its first timeouts fire, with fewer timeouts
 * than ops.
 *
 * Tunables: CACHE_LEN (entropies), FREEZE_PS (ps), EXPLORE_PKTS (packets),
 * EV_MASK (entropy width). The generator is a per-flow xorshift64 that folds
 * in NOW and FLOW_SEED (flows that start together still draw apart).
 */
#include "reps.h"
#include "pcm_algo.h"
#include "pcmh.h"

static PCM_FORCE_INLINE pcm_uint random_ev(ALGO_CTX_ARGS)
{
	pcm_algo_rng_mix(&get_var_uint(RNG), get_signal(NOW) ^ get_signal(FLOW_SEED));
	return (pcm_algo_xorshift64(&get_var_uint(RNG)) >> 32) & EV_MASK;
}

static PCM_FORCE_INLINE void recycle(ALGO_CTX_ARGS, pcm_uint ev)
{
	pcm_algo_evq_push(&get_arr_uint(CACHE, 0), CACHE_LEN, &get_var_uint(CACHE_HEAD),
			  &get_var_uint(CACHE_FRESH), ev & EV_MASK);
	if (get_var_uint(CACHE_FILLED) < CACHE_LEN)
		set_var_uint(CACHE_FILLED, get_var_uint(CACHE_FILLED) + 1);
}

static PCM_FORCE_INLINE void feedback(ALGO_CTX_ARGS, pcm_uint mask, pcm_uint now)
{
	bool marked = get_signal(NUM_ECN) != 0;

	if ((mask & NUM_RTO) && !get_var_uint(FROZEN) && !get_var_uint(EXPLORE_LEFT)) {
		set_var_uint(FROZEN, 1);
		set_var_uint(FREEZE_END, now + FREEZE_PS);
		set_var_uint(FROZEN_CURSOR, 0);
	}
	if (get_var_uint(FROZEN) && now > get_var_uint(FREEZE_END)) {
		set_var_uint(FROZEN, 0);
		set_var_uint(CACHE_HEAD, 0);
		set_var_uint(CACHE_FRESH, 0);
		set_var_uint(CACHE_FILLED, 0);
		set_var_uint(EXPLORE_LEFT, EXPLORE_PKTS);
	}
	if ((mask & NUM_ACK) && !marked)
		recycle(ALGO_CTX_PASS, get_signal(ACK_ENTROPY));
	if ((mask & NUM_NACK) && (get_signal(NACK_ENTROPY) & NACK_LAST_HOP_FLAG) && !marked)
		recycle(ALGO_CTX_PASS, get_signal(NACK_ENTROPY));
}

static PCM_FORCE_INLINE pcm_uint next_ev(ALGO_CTX_ARGS)
{
	pcm_uint filled = get_var_uint(CACHE_FILLED);
	pcm_uint ev;

	if (get_var_uint(EXPLORE_LEFT)) {
		set_var_uint(EXPLORE_LEFT, get_var_uint(EXPLORE_LEFT) - 1);
		return random_ev(ALGO_CTX_PASS);
	}
	if (get_var_uint(FROZEN)) {
		pcm_uint cursor = get_var_uint(FROZEN_CURSOR) % (filled ? filled : 1);

		if (!filled)
			return random_ev(ALGO_CTX_PASS);
		set_var_uint(FROZEN_CURSOR, (cursor + 1) % filled);
		return get_arr_uint(CACHE, cursor);
	}
	if (pcm_algo_evq_pop(&get_arr_uint(CACHE, 0), CACHE_LEN, &get_var_uint(CACHE_HEAD),
			     &get_var_uint(CACHE_FRESH), &ev))
		return ev;
	return random_ev(ALGO_CTX_PASS);
}

int algorithm_main()
{
	pcm_uint mask = get_signal_trigger_mask();

	feedback(ALGO_CTX_PASS, mask, get_signal(NOW));
	if (mask & TX_READY) {
		set_control(EV, next_ev(ALGO_CTX_PASS));
		update_signal(TX_READY, -1);
	}
	return PCM_SUCCESS;
}
