/* SPDX-License-Identifier: MIT */
/*
 * pcmh.h - the handler API: what a handler's C source sees.
 *
 * A handler is `int algorithm_main() { ... }` over one flow's snapshot, a flat
 * array of 64-bit slots laid out by pcmc:
 *
 *   [MASK_OFFSET]            signals whose trigger fired (bit i = signal i)
 *   [SET_SIGNAL_MASK_OFFSET] signals the handler wrote (maintained here)
 *   [SIGNAL_OFFSET + i]      signal i
 *   [CONTROL_OFFSET + j]     control j
 *   [VAR_OFFSET + k]         variable slot k (arrays take arr_len slots)
 *
 * The generated "<algorithm>.h" defines the offsets and the names: a signal
 * name is its bit (1 << i) so it can test the trigger mask directly, and
 * get_signal() turns the bit back into an index at compile time. Controls and
 * variables are plain indices. Every accessor is an inline load or store at a
 * constant offset; nothing is looked up or called.
 */
#ifndef PCM_PCMH_H
#define PCM_PCMH_H

#include <string.h>

#include "pcm.h"
#include "pcm_fx.h"

typedef pcm_uint *pcm_handler_datapath_snapshot;

#define ALGO_CTX_ARGS pcm_handler_datapath_snapshot snapshot
#define ALGO_CTX_PASS snapshot

/*
 * The entry point. The generated header names it per package (PCM_HANDLER_ENTRY)
 * so that several packages link into one program.
 */
#ifndef PCM_HANDLER_ENTRY
#define PCM_HANDLER_ENTRY __algorithm_main
#endif
#define algorithm_main() PCM_HANDLER_ENTRY(ALGO_CTX_ARGS)

/* Bit of a signal name -> its index; constant-folds for constant names. */
#define PCM_MASK_TO_IDX(m) ((size_t)__builtin_ctzll((pcm_uint)(m)))
#define UTIL_MASK_TO_ARR_IDX(m) PCM_MASK_TO_IDX(m)

static PCM_FORCE_INLINE pcm_uint pcm_encode_int(pcm_int v)
{
	pcm_uint u;

	memcpy(&u, &v, sizeof(u));
	return u;
}

static PCM_FORCE_INLINE pcm_int pcm_decode_int(pcm_uint u)
{
	pcm_int v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

static PCM_FORCE_INLINE pcm_uint pcm_encode_float(pcm_float v)
{
	pcm_uint u;

	memcpy(&u, &v, sizeof(u));
	return u;
}

static PCM_FORCE_INLINE pcm_float pcm_decode_float(pcm_uint u)
{
	pcm_float v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

/* SDK spellings of the same helpers. */
#define encode_pcm_int(v) pcm_encode_int(v)
#define decode_pcm_int(v) pcm_decode_int(v)
#define encode_pcm_float(v) pcm_encode_float(v)
#define decode_pcm_float(v) pcm_decode_float(v)

/* Signals */
#define get_signal_trigger_mask() (snapshot[MASK_OFFSET])
#define get_signal(m) (snapshot[SIGNAL_OFFSET + PCM_MASK_TO_IDX(m)])
#define set_signal(m, val)                                                                         \
	do {                                                                                       \
		snapshot[SIGNAL_OFFSET + PCM_MASK_TO_IDX(m)] = (pcm_uint)(val);                    \
		snapshot[SET_SIGNAL_MASK_OFFSET] |= (pcm_uint)(m);                                 \
	} while (0)
#define update_signal(m, val)                                                                      \
	do {                                                                                       \
		snapshot[SIGNAL_OFFSET + PCM_MASK_TO_IDX(m)] += (pcm_uint)(val);                   \
		snapshot[SET_SIGNAL_MASK_OFFSET] |= (pcm_uint)(m);                                 \
	} while (0)

/* Controls */
#define get_control(i) (snapshot[CONTROL_OFFSET + (i)])
#define set_control(i, val) (snapshot[CONTROL_OFFSET + (i)] = (pcm_uint)(val))

/* Variables: one 64-bit slot each; arrays are arr_len consecutive uint slots. */
#define get_var(i) (snapshot[VAR_OFFSET + (i)])
#define set_var(i, val) (snapshot[VAR_OFFSET + (i)] = (pcm_uint)(val))
#define get_var_uint(i) (snapshot[VAR_OFFSET + (i)])
#define set_var_uint(i, val) (snapshot[VAR_OFFSET + (i)] = (pcm_uint)(val))
#define get_var_int(i) pcm_decode_int(snapshot[VAR_OFFSET + (i)])
#define set_var_int(i, val) (snapshot[VAR_OFFSET + (i)] = pcm_encode_int((pcm_int)(val)))
#define get_var_float(i) pcm_decode_float(snapshot[VAR_OFFSET + (i)])
#define set_var_float(i, val) (snapshot[VAR_OFFSET + (i)] = pcm_encode_float((pcm_float)(val)))
#define get_arr_uint(arr, idx) (snapshot[VAR_OFFSET + (arr) + (idx)])
#define set_arr_uint(arr, idx, val) (snapshot[VAR_OFFSET + (arr) + (idx)] = (pcm_uint)(val))
/* Fixed-point variables (pcm_fx.h), stored in a uint slot. */
#define get_var_fx(i) pcm_fx_from_slot(snapshot[VAR_OFFSET + (i)])
#define set_var_fx(i, val) (snapshot[VAR_OFFSET + (i)] = pcm_fx_to_slot(val))

#endif /* PCM_PCMH_H */
