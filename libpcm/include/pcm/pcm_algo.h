/* SPDX-License-Identifier: MIT */
/*
 * pcm_algo.h - math that two or more handler packages share, so that no
 * policy carries its own copy: constants as pcm_fx, unit conversions (ps to
 * us or s, bytes to packets), an EWMA, the bytes an ECN echo marks, the
 * per-ACK slow-start and additive-increase steps, a cube root, a
 * deterministic per-flow random generator and a small FIFO of entropy
 * values.
 *
 * Everything is static inline over pcm_fx (pcm_fx.h), so a policy that uses
 * these helpers builds unchanged in double, Q42.22, Q32.32 and Q16.16. Values
 * that do not fit Q16.16's +-32768 (bytes, picoseconds) stay integers until
 * they are scaled into a small unit (packets, microseconds) here.
 *
 * Helpers never read the handler snapshot themselves; a policy passes them
 * the values or the slots (`&get_var_uint(V)`, `&get_arr_uint(A, 0)`).
 */
#ifndef PCM_PCM_ALGO_H
#define PCM_PCM_ALGO_H

#include <stdbool.h>
#include <stdint.h>

#include "pcm.h"
#include "pcm_fx.h"
#include "pcm_minmax.h"

/**
 * pcm_algo_fx() - a constant as pcm_fx.
 * @v: the value: a spec constant or a literal, folded at compile time.
 *
 * Return: pcm_fx_from_double(v).
 */
static PCM_FORCE_INLINE pcm_fx pcm_algo_fx(double v)
{
	return pcm_fx_from_double(v);
}

#define PCM_ALGO_PS_PER_NS 1000u
#define PCM_ALGO_PS_PER_US 1000000u

/**
 * pcm_algo_ps_to_us() - a time in picoseconds as microseconds.
 * @ps: the time, ps.
 *
 * Kept to whole nanoseconds, and split into whole microseconds plus a
 * fraction so that Q16.16 neither overflows nor loses the nanoseconds.
 *
 * Return: trunc(ps / 1000) / 1000, in microseconds.
 */
static inline pcm_fx pcm_algo_ps_to_us(pcm_uint ps)
{
	pcm_fx whole = pcm_fx_from_uint(ps / PCM_ALGO_PS_PER_US);
	pcm_fx ns = pcm_fx_from_uint((ps % PCM_ALGO_PS_PER_US) / PCM_ALGO_PS_PER_NS);

	return pcm_fx_add(whole, pcm_fx_div(ns, pcm_fx_from_uint(1000)));
}

#define PCM_ALGO_PS_PER_MS 1000000000u

/**
 * pcm_algo_ps_to_s() - a time in picoseconds as seconds.
 * @ps: the time, ps.
 *
 * Kept to whole microseconds: whole milliseconds plus the microseconds in
 * pcm_fx, then scaled to seconds, so that Q16.16 holds up to 32 s (its
 * resolution, 15 us, is then the limit).
 *
 * Return: trunc(ps / 10^6) / 10^6, in seconds.
 */
static inline pcm_fx pcm_algo_ps_to_s(pcm_uint ps)
{
	pcm_fx whole_ms = pcm_fx_from_uint(ps / PCM_ALGO_PS_PER_MS);
	pcm_fx us = pcm_fx_from_uint((ps % PCM_ALGO_PS_PER_MS) / PCM_ALGO_PS_PER_US);
	pcm_fx ms = pcm_fx_add(whole_ms, pcm_fx_div(us, pcm_fx_from_uint(1000)));

	return pcm_fx_div(ms, pcm_fx_from_uint(1000));
}

/**
 * pcm_algo_bytes_to_pkts() - a byte count in packets of @mss bytes.
 * @bytes: the count, bytes.
 * @mss: packet size, bytes; nonzero.
 *
 * Whole packets and the remainder are converted apart, so a window of a few
 * hundred kilobytes does not saturate Q16.16 on the way.
 *
 * Return: bytes / mss.
 */
static inline pcm_fx pcm_algo_bytes_to_pkts(pcm_uint bytes, pcm_uint mss)
{
	pcm_fx whole = pcm_fx_from_uint(bytes / mss);
	pcm_fx part = pcm_fx_div(pcm_fx_from_uint(bytes % mss), pcm_fx_from_uint(mss));

	return pcm_fx_add(whole, part);
}

/**
 * pcm_algo_pkts_to_bytes() - a packet count in bytes, truncated.
 * @pkts: the count, packets; negative counts give 0.
 * @mss: packet size, bytes.
 *
 * The integer part is scaled in integers, the fraction in pcm_fx, so the
 * result does not saturate at Q16.16's 32767.
 *
 * Return: whole * mss + trunc(fraction * mss).
 */
static inline pcm_uint pcm_algo_pkts_to_bytes(pcm_fx pkts, pcm_uint mss)
{
	pcm_uint whole = pcm_fx_to_uint(pkts);
	pcm_fx frac = pcm_fx_sub(pkts, pcm_fx_from_uint(whole));

	return whole * mss + pcm_fx_to_uint(pcm_fx_mul_int(frac, (int64_t)mss));
}

#define PCM_ALGO_RATE_SHIFT 20 /* PCM_RATE_ONE == 1 << PCM_ALGO_RATE_SHIFT */

/**
 * pcm_algo_rate_from_frac() - a fraction of line rate as a RATE control value.
 * @frac: the rate, 1.0 = line rate; negative values give 0.
 *
 * Scales by 2^20 with a shift of the raw value in fixed modes, so 1.0 does
 * not saturate Q16.16 on the way to PCM_RATE_ONE.
 *
 * Return: trunc(frac * PCM_RATE_ONE).
 */
static inline pcm_uint pcm_algo_rate_from_frac(pcm_fx frac)
{
#if PCM_FX_IS_DOUBLE
	return pcm_fx_to_uint(frac * (double)PCM_RATE_ONE);
#else
	if (frac <= 0)
		return 0;
#if PCM_FX_FRAC_BITS <= PCM_ALGO_RATE_SHIFT
	return (pcm_uint)frac << (PCM_ALGO_RATE_SHIFT - PCM_FX_FRAC_BITS);
#else
	return (pcm_uint)frac >> (PCM_FX_FRAC_BITS - PCM_ALGO_RATE_SHIFT);
#endif
#endif
}

/**
 * pcm_algo_clamp() - @x limited to [@lo, @hi].
 * @x: the value.
 * @lo: lower bound.
 * @hi: upper bound, >= @lo.
 *
 * Return: min(max(x, lo), hi).
 */
static inline pcm_fx pcm_algo_clamp(pcm_fx x, pcm_fx lo, pcm_fx hi)
{
	return pcm_fx_min(pcm_fx_max(x, lo), hi);
}

/**
 * pcm_algo_ewma() - one step of an exponentially weighted moving average.
 * @avg: the average so far.
 * @sample: the new sample.
 * @gain: weight of the sample, 0..1.
 *
 * Return: avg + gain * (sample - avg), i.e. (1 - gain) * avg + gain * sample.
 */
static inline pcm_fx pcm_algo_ewma(pcm_fx avg, pcm_fx sample, pcm_fx gain)
{
	return pcm_fx_add(avg, pcm_fx_mul(gain, pcm_fx_sub(sample, avg)));
}

/**
 * pcm_algo_ai_step() - the per-ACK additive increase of a window.
 * @cwnd: the window, packets; > 0.
 * @ai: increase per window of ACKs, packets (1 for Reno: one packet per RTT).
 * @acked: packets this ACK covers.
 *
 * Return: cwnd + ai * acked / cwnd.
 */
static inline pcm_fx pcm_algo_ai_step(pcm_fx cwnd, pcm_fx ai, pcm_fx acked)
{
	return pcm_fx_add(cwnd, pcm_fx_div(pcm_fx_mul(ai, acked), cwnd));
}

/**
 * pcm_algo_ai_step_unmarked() - the additive increase an ACK's unmarked bytes earn.
 * @cwnd: the window, packets; > 0.
 * @ai: increase per window of unmarked ACKs, packets: a float constant,
 *      converted with pcm_algo_fx() only when there is an increase.
 * @acked: bytes the ACK covers.
 * @marked: of those, bytes an ECN echo marks (pcm_algo_marked_bytes()).
 * @mss: packet size, bytes.
 *
 * Return: pcm_algo_ai_step() over (acked - marked) / mss packets, or @cwnd
 * when every byte was marked.
 */
static PCM_FORCE_INLINE pcm_fx pcm_algo_ai_step_unmarked(pcm_fx cwnd, double ai, pcm_uint acked,
							 pcm_uint marked, pcm_uint mss)
{
	if (acked > marked)
		cwnd = pcm_algo_ai_step(cwnd, pcm_algo_fx(ai),
					pcm_algo_bytes_to_pkts(acked - marked, mss));
	return cwnd;
}

/**
 * pcm_algo_in_slow_start() - whether a window is in slow start (RFC 5681 3.1).
 * @cwnd: the window, packets.
 * @ssthresh: the slow-start threshold, packets.
 *
 * Return: cwnd < ssthresh; otherwise the policy's congestion avoidance applies.
 */
static inline bool pcm_algo_in_slow_start(pcm_fx cwnd, pcm_fx ssthresh)
{
	return pcm_fx_lt(cwnd, ssthresh);
}

/**
 * pcm_algo_slow_start() - the per-ACK slow-start step of a window.
 * @cwnd: the window, packets; in slow start (pcm_algo_in_slow_start()).
 * @acked: packets this ACK covers.
 *
 * Return: cwnd + acked: the window doubles per RTT.
 */
static inline pcm_fx pcm_algo_slow_start(pcm_fx cwnd, pcm_fx acked)
{
	return pcm_fx_add(cwnd, acked);
}

/**
 * pcm_algo_marked_bytes() - the bytes of an ACK that an ECN echo marks.
 * @acked: bytes the ACK covers.
 * @ecn_acks: ECN-echoing ACKs it carries (the NUM_ECN signal).
 * @mss: packet size, bytes.
 *
 * Exact for per-ACK events, a close bound for coalesced ones.
 *
 * Return: min(acked, ecn_acks * mss).
 */
static inline pcm_uint pcm_algo_marked_bytes(pcm_uint acked, pcm_uint ecn_acks, pcm_uint mss)
{
	return MIN(acked, ecn_acks * mss);
}

/*
 * The window of a window policy. It lives in a uint variable as pcm_fx
 * packets (CWND_PKTS in pcm's policies). A uint variable that starts at 0
 * (INITIALIZED) marks the flow's first call, which sets the first window.
 * Each call loads the window, computes the next one, and stores it clamped
 * to the window's bounds, publishing it in bytes on the CWND control. The
 * initial window and the bounds are the spec's float constants, converted
 * here with pcm_algo_fx() where the value is used (the first window only on
 * the first call).
 *
 * pcm_algo_window_load(), pcm_algo_window_load_ss() and
 * pcm_algo_window_store() take the slots, like the other helpers here.
 * PCM_ALGO_WINDOW_LOAD(), PCM_ALGO_WINDOW_LOAD_SS() and
 * PCM_ALGO_WINDOW_STORE() take the spec's names instead and pass those
 * functions their slots, so that a handler writes each in a line. They
 * expand to pcmh.h's accessors at the handler's site and use only the names
 * they are given: variables with get_var_uint(), the control with
 * get_control(), constants as they are.
 */

/**
 * pcm_algo_window_load_ss() - the window at the start of a call, set on the first call,
 *                             with slow start.
 * @initialized: the first-call flag's slot: a uint variable that starts at 0; set to 1.
 * @cwnd_pkts: the window's slot: a uint variable holding pcm_fx packets.
 * @init_pkts: the first window, packets.
 * @ssthresh_pkts: the slow-start threshold's slot, a uint variable holding
 *                 pcm_fx packets; NULL for a window without slow start.
 * @max_pkts: ssthresh's first value, packets: the largest window, RFC 5681's
 *            "arbitrarily high", so that slow start runs until the first
 *            loss or the clamp.
 *
 * A policy with more first-call state sets it before this call, under the
 * same test: `if (!get_var_uint(INITIALIZED))`.
 *
 * Return: the window: @init_pkts on the first call, the stored one after.
 */
static PCM_FORCE_INLINE pcm_fx pcm_algo_window_load_ss(pcm_uint *initialized, pcm_uint *cwnd_pkts,
						       double init_pkts, pcm_uint *ssthresh_pkts,
						       double max_pkts)
{
	if (!*initialized) {
		*cwnd_pkts = pcm_fx_to_slot(pcm_algo_fx(init_pkts));
		if (ssthresh_pkts)
			*ssthresh_pkts = pcm_fx_to_slot(pcm_algo_fx(max_pkts));
		*initialized = 1;
	}
	return pcm_fx_from_slot(*cwnd_pkts);
}

/**
 * pcm_algo_window_load() - pcm_algo_window_load_ss() for a window without slow start.
 * @initialized: the first-call flag's slot; set to 1.
 * @cwnd_pkts: the window's slot.
 * @init_pkts: the first window, packets.
 *
 * Return: the window: @init_pkts on the first call, the stored one after.
 */
static PCM_FORCE_INLINE pcm_fx pcm_algo_window_load(pcm_uint *initialized, pcm_uint *cwnd_pkts,
						    double init_pkts)
{
	return pcm_algo_window_load_ss(initialized, cwnd_pkts, init_pkts, NULL, 0.0);
}

/**
 * pcm_algo_window_store() - store the window at the end of a call, clamped, and publish it.
 * @cwnd_pkts: the window's slot, as for pcm_algo_window_load().
 * @cwnd_bytes: the CWND control's slot (`&get_control(C)`); set to the window in bytes.
 * @cwnd: the new window, packets.
 * @min_pkts: the smallest window, packets.
 * @max_pkts: the largest window, packets; >= @min_pkts.
 * @pkt_bytes: what one packet counts in the window, bytes.
 *
 * The window is pcm_algo_clamp()ed to [@min_pkts, @max_pkts] and the
 * control gets pcm_algo_pkts_to_bytes() of it.
 */
static PCM_FORCE_INLINE void pcm_algo_window_store(pcm_uint *cwnd_pkts, pcm_uint *cwnd_bytes,
						   pcm_fx cwnd, double min_pkts, double max_pkts,
						   pcm_uint pkt_bytes)
{
	cwnd = pcm_algo_clamp(cwnd, pcm_algo_fx(min_pkts), pcm_algo_fx(max_pkts));
	*cwnd_pkts = pcm_fx_to_slot(cwnd);
	*cwnd_bytes = pcm_algo_pkts_to_bytes(cwnd, pkt_bytes);
}

/*
 * PCM_ALGO_WINDOW_LOAD() - pcm_algo_window_load() by name: the flag and
 * window variables @initialized and @cwnd_pkts, the float constant @init_pkts.
 */
#define PCM_ALGO_WINDOW_LOAD(initialized, cwnd_pkts, init_pkts)                                    \
	pcm_algo_window_load(&get_var_uint(initialized), &get_var_uint(cwnd_pkts), (init_pkts))

/*
 * PCM_ALGO_WINDOW_LOAD_SS() - pcm_algo_window_load_ss() by name: variables
 * @initialized, @cwnd_pkts and @ssthresh_pkts, float constants @init_pkts
 * and @max_pkts.
 */
#define PCM_ALGO_WINDOW_LOAD_SS(initialized, cwnd_pkts, init_pkts, ssthresh_pkts, max_pkts)        \
	pcm_algo_window_load_ss(&get_var_uint(initialized), &get_var_uint(cwnd_pkts), (init_pkts), \
				&get_var_uint(ssthresh_pkts), (max_pkts))

/*
 * PCM_ALGO_WINDOW_STORE() - pcm_algo_window_store() by name: the window
 * variable @cwnd_pkts, the CWND control @cwnd_bytes, the value @cwnd, float
 * constants @min_pkts and @max_pkts, and the uint constant @pkt_bytes.
 */
#define PCM_ALGO_WINDOW_STORE(cwnd_pkts, cwnd_bytes, cwnd, min_pkts, max_pkts, pkt_bytes)          \
	pcm_algo_window_store(&get_var_uint(cwnd_pkts), &get_control(cwnd_bytes), (cwnd),          \
			      (min_pkts), (max_pkts), (pkt_bytes))

/**
 * pcm_algo_cbrt() - cube root.
 * @x: the value; values <= 0 give 0.
 *
 * Double mode is libm's cbrt(). Fixed modes take the integer cube root of
 * raw * 2^(2 * frac_bits) bit by bit in 128 bits, truncated: the result is
 * at most one ulp below the real root.
 *
 * Return: cbrt(x), or 0.
 */
static inline pcm_fx pcm_algo_cbrt(pcm_fx x)
{
#if PCM_FX_IS_DOUBLE
	return x > 0.0 ? cbrt(x) : 0.0;
#else
	pcm_fx_u128 n, root = 0;

	if (x <= 0)
		return 0;
	/* x < 2^63 and 2 * frac_bits <= 64, so n < 2^127 and the root < 2^43. */
	n = (pcm_fx_u128)x << (2 * PCM_FX_FRAC_BITS);
	for (int b = 42; b >= 0; b--) {
		pcm_fx_u128 c = root | ((pcm_fx_u128)1 << b);

		/* c^3 <= n  <=>  c^2 <= floor(n / c), without forming c^3. */
		if (c * c <= n / c)
			root = c;
	}
	return (pcm_fx)root;
#endif
}

/*
 * Deterministic randomness for load balancers: a xorshift64 state kept in a
 * per-flow uint variable. A state of 0 would stay 0, so it is replaced by
 * PCM_ALGO_RNG_SEED, which is also what a policy's seed variable starts at.
 */
#define PCM_ALGO_RNG_SEED UINT64_C(0x9e3779b97f4a7c15)

/**
 * pcm_algo_xorshift64() - advance a xorshift64 state (Marsaglia, 13/7/17).
 * @state: the state slot; 0 is treated as PCM_ALGO_RNG_SEED.
 *
 * Return: the new state, never 0.
 */
static inline pcm_uint pcm_algo_xorshift64(pcm_uint *state)
{
	pcm_uint x = *state ? *state : PCM_ALGO_RNG_SEED;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/**
 * pcm_algo_rng_mix() - fold a flow-local input into a xorshift64 state.
 * @state: the state slot.
 * @input: anything that differs between flows or over time, e.g. the flow's
 *         elapsed time in ps XOR its PCM_SIG_FLOW_SEED (flows that start at
 *         the same instant have the same elapsed times); 0 leaves the state
 *         as it is.
 *
 * Flows that start alike diverge as soon as their inputs differ, while a
 * given input sequence always gives the same outputs.
 */
static inline void pcm_algo_rng_mix(pcm_uint *state, pcm_uint input)
{
	pcm_uint x = *state ^ (input * PCM_ALGO_RNG_SEED);

	*state = x ? x : PCM_ALGO_RNG_SEED;
}

/*
 * A FIFO of entropy values over a uint array of @len slots, with two uint
 * variables: @head, the slot the next push writes, and @count, how many of
 * the latest pushes are still unread. When full, a push overwrites the
 * oldest unread value. Slots keep their last value after a pop, so a policy
 * may still walk them (REPS's frozen mode).
 */

/**
 * pcm_algo_evq_push() - append @ev, dropping the oldest unread value when full.
 * @slots: the array, @len slots.
 * @len: its length, > 0.
 * @head: slot the next push writes.
 * @count: unread values, <= @len.
 * @ev: the value.
 */
static inline void pcm_algo_evq_push(pcm_uint *slots, pcm_uint len, pcm_uint *head, pcm_uint *count,
				     pcm_uint ev)
{
	slots[*head % len] = ev;
	*head = (*head + 1) % len;
	if (*count < len)
		(*count)++;
}

/**
 * pcm_algo_evq_pop() - take the oldest unread value.
 * @slots: the array, @len slots.
 * @len: its length, > 0.
 * @head: slot the next push writes.
 * @count: unread values; decremented.
 * @ev: set to the value.
 *
 * Return: true, or false (and @ev untouched) when nothing is unread.
 */
static inline bool pcm_algo_evq_pop(pcm_uint *slots, pcm_uint len, const pcm_uint *head,
				    pcm_uint *count, pcm_uint *ev)
{
	if (*count == 0)
		return false;
	*ev = slots[(*head + len - *count) % len];
	(*count)--;
	return true;
}

#endif /* PCM_PCM_ALGO_H */
