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
 * Accessors resolve the name they are given themselves, by pasting it onto a
 * per-kind prefix: get_signal(N) reads slot SIGNAL_OFFSET + pcm_sig_N, and the
 * generated "<algorithm>.h" defines pcm_sig_N only for a signal N. So:
 *   - the name always means the spec's name, whatever local shadows it
 *     (`pcm_float K = get_var_float(K);` reads the variable K);
 *   - a name of another kind fails to compile with a message that names it
 *     and its kind (get_signal(CWND) when CWND is a control), and so does a
 *     variable read as the wrong type (get_var_uint() of a float variable);
 *   - the first argument must be a spec name as written, not an expression.
 * Every accessor is a load or a store at a constant offset; nothing is looked
 * up or called. The spec's names themselves are what the SDK's headers make
 * them: a signal name is its bit in the trigger mask, a control or variable
 * name its index, a constant a macro.
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

/*
 * What the generated header expands a name of the wrong kind to: a compile
 * error carrying @msg. It fires where the accessor is written, even in code
 * that never runs.
 */
#define PCM_NAME_MIXUP(msg) (sizeof(struct { _Static_assert(0, msg); char pcm_mixup; }))

/*
 * pcm_encode_<name>() and pcm_decode_<name>(): a 64-bit @type value and the
 * slot holding its bits, both ways, bit for bit (memcpy: no conversion and
 * no aliasing question), defined once for int and float.
 */
#define PCM_SLOT_CODEC(name, type)                                                                 \
	static PCM_FORCE_INLINE pcm_uint pcm_encode_##name(type v)                                 \
	{                                                                                          \
		pcm_uint u;                                                                        \
                                                                                                   \
		memcpy(&u, &v, sizeof(u));                                                         \
		return u;                                                                          \
	}                                                                                          \
                                                                                                   \
	static PCM_FORCE_INLINE type pcm_decode_##name(pcm_uint u)                                 \
	{                                                                                          \
		type v;                                                                            \
                                                                                                   \
		memcpy(&v, &u, sizeof(v));                                                         \
		return v;                                                                          \
	}

PCM_SLOT_CODEC(int, pcm_int)
PCM_SLOT_CODEC(float, pcm_float)

/* SDK spellings of the same helpers. */
#define encode_pcm_int(v) pcm_encode_int(v)
#define decode_pcm_int(v) pcm_decode_int(v)
#define encode_pcm_float(v) pcm_encode_float(v)
#define decode_pcm_float(v) pcm_decode_float(v)

/*
 * A signal write also marks the signal as written, for the commit step. The
 * offsets are arguments: a handler may include this header before its
 * generated one, which defines them.
 */
static PCM_FORCE_INLINE void pcm_signal_store(pcm_uint *snapshot, size_t signal_offset,
					      size_t set_mask_offset, size_t idx, pcm_uint val,
					      bool add)
{
	snapshot[signal_offset + idx] = add ? snapshot[signal_offset + idx] + val : val;
	snapshot[set_mask_offset] |= (pcm_uint)1 << idx;
}

/* Signals: get_signal() is the slot itself; writes go through pcm_signal_store(). */
#define get_signal_trigger_mask() (snapshot[MASK_OFFSET])
#define get_signal(name) (snapshot[SIGNAL_OFFSET + pcm_sig_##name])
#define set_signal(name, val)                                                                      \
	pcm_signal_store(snapshot, SIGNAL_OFFSET, SET_SIGNAL_MASK_OFFSET, pcm_sig_##name,          \
			 (pcm_uint)(val), false)
#define update_signal(name, val)                                                                   \
	pcm_signal_store(snapshot, SIGNAL_OFFSET, SET_SIGNAL_MASK_OFFSET, pcm_sig_##name,          \
			 (pcm_uint)(val), true)

/* Controls */
#define get_control(name) (snapshot[CONTROL_OFFSET + pcm_ctl_##name])
#define set_control(name, val) (snapshot[CONTROL_OFFSET + pcm_ctl_##name] = (pcm_uint)(val))

/*
 * Variables: one 64-bit slot each, read and written as their spec type; the
 * uint ones (and arrays) are plain slots, so `&get_var_uint(V)` is a pointer.
 */
#define get_var(name) (snapshot[VAR_OFFSET + pcm_var_u_##name])
#define set_var(name, val) (snapshot[VAR_OFFSET + pcm_var_u_##name] = (pcm_uint)(val))
#define get_var_uint(name) (snapshot[VAR_OFFSET + pcm_var_u_##name])
#define set_var_uint(name, val) (snapshot[VAR_OFFSET + pcm_var_u_##name] = (pcm_uint)(val))
#define get_var_int(name) pcm_decode_int(snapshot[VAR_OFFSET + pcm_var_i_##name])
#define set_var_int(name, val)                                                                     \
	(snapshot[VAR_OFFSET + pcm_var_i_##name] = pcm_encode_int((pcm_int)(val)))
#define get_var_float(name) pcm_decode_float(snapshot[VAR_OFFSET + pcm_var_f_##name])
#define set_var_float(name, val)                                                                   \
	(snapshot[VAR_OFFSET + pcm_var_f_##name] = pcm_encode_float((pcm_float)(val)))
/* Arrays: arr_len consecutive uint slots; the index is not checked. */
#define get_arr_uint(name, idx) (snapshot[VAR_OFFSET + pcm_arr_u_##name + (idx)])
#define set_arr_uint(name, idx, val)                                                               \
	(snapshot[VAR_OFFSET + pcm_arr_u_##name + (idx)] = (pcm_uint)(val))
/* Fixed-point values (pcm_fx.h), kept in a uint variable's slot. */
#define get_var_fx(name) pcm_fx_from_slot(snapshot[VAR_OFFSET + pcm_var_u_##name])
#define set_var_fx(name, val) (snapshot[VAR_OFFSET + pcm_var_u_##name] = pcm_fx_to_slot(val))

#endif /* PCM_PCMH_H */
