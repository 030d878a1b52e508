/* SPDX-License-Identifier: MIT */
/*
 * spec.h - the handler package spec (YAML) and the fabric profile (YAML),
 * parsed with libyaml into plain structs.
 *
 * A spec names the package's signals, controls, variables and constants, in
 * the public PCM SDK's format. Every value in it is a number, a name (a
 * FABRIC_* constant or a constant of the spec, in any order), or
 * `!eval "<expression>"`. The loader evaluates each value; pcmc emits the
 * values, never the spec's text, into generated C. Nothing here does I/O
 * besides reading the file.
 */
#ifndef PCM_SPEC_H
#define PCM_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "pcm.h"

#define PCM_NAME_MAX 64
#define PCM_SPEC_MAX_SIGNALS 64   /* the trigger mask is 64 bits wide */
#define PCM_SPEC_MAX_CONTROLS 16
#define PCM_SPEC_MAX_VAR_SLOTS 4096 /* all variable slots, arrays included */
#define PCM_SPEC_MAX_ARR_LEN 1024
#define PCM_SPEC_MAX_CONSTANTS 256
#define PCM_FABRIC_MAX_ENTRIES 128
#define PCM_DIAG_MAX 512

/* A diagnostic: "file:line:col: key 'x': what is wrong". */
struct pcm_diag {
	char msg[PCM_DIAG_MAX];
};

/* Where a node sits in its YAML file, 1-based. */
struct pcm_srcloc {
	unsigned line;
	unsigned col;
};

enum pcm_num_type {
	PCM_NUM_UINT = 0,
	PCM_NUM_INT = 1,
	PCM_NUM_FLOAT = 2,
};

/* An evaluated value. Exactly one member is meaningful, chosen by type. */
struct pcm_num {
	enum pcm_num_type type;
	union {
		uint64_t u;
		int64_t i;
		double f;
	};
};

/* A value as written in the spec: its text and its value. */
struct pcm_value {
	char *c_expr; /* the text as written (for messages); never emitted into C */
	struct pcm_num num;
	struct pcm_srcloc loc;
};

struct pcm_spec_constant {
	char name[PCM_NAME_MAX];
	enum pcm_num_type type; /* the spec's `type`: uint|int|float */
	struct pcm_value value; /* converted to `type` */
	char *description;      /* the SDK's `description`, or NULL */
	struct pcm_srcloc loc;
};

struct pcm_spec_signal {
	char name[PCM_NAME_MAX];
	pcm_signal_t type;
	pcm_signal_accum_t accum;
	pcm_signal_trigger_t trigger; /* NONE without a threshold or with PCM_SIG_NO_TRIGGER */
	pcm_trigger_op_t op;          /* default PCM_TRIG_OP_GE */
	struct pcm_value threshold;   /* meaningful when trigger != NONE */
	bool reset_upon_trigger;      /* default true */
	struct pcm_value initial;     /* default 0 */
	char *description;            /* or NULL */
	struct pcm_srcloc loc;        /* of the list item */
	struct pcm_srcloc type_loc;   /* of the `type` value */
};

struct pcm_spec_control {
	char name[PCM_NAME_MAX];
	pcm_control_t type;
	struct pcm_value initial; /* default 0 */
	char *description;        /* or NULL */
	struct pcm_srcloc loc;
	struct pcm_srcloc type_loc;
};

struct pcm_spec_variable {
	char name[PCM_NAME_MAX];
	enum pcm_num_type type;
	struct pcm_value initial; /* converted to `type`; default 0 */
	uint32_t arr_len;         /* 1 for a scalar */
	bool is_array;            /* `arr_len` was given: get_arr_uint/set_arr_uint only */
	uint32_t slot;            /* first slot in the variable area */
	bool shared;              /* `scope: instance` (pcm extension): one value for all the
				   * flows of a handler instance, not one per flow */
	char *description;        /* or NULL */
	struct pcm_srcloc loc;
};

/* One FABRIC_* entry of a fabric profile. */
struct pcm_fabric_entry {
	char name[PCM_NAME_MAX];
	struct pcm_value value;
};

struct pcm_fabric {
	char *path;
	unsigned n_entries;
	struct pcm_fabric_entry entries[PCM_FABRIC_MAX_ENTRIES];
};

struct pcm_spec {
	char *path;
	char name[PCM_NAME_MAX];
	char *description;
	unsigned n_constants;
	unsigned n_signals;
	unsigned n_controls;
	unsigned n_variables;
	uint32_t n_var_slots;
	struct pcm_spec_constant *constants;
	struct pcm_spec_signal *signals;
	struct pcm_spec_control *controls;
	struct pcm_spec_variable *variables;
};

/**
 * pcm_fabric_load() - read a fabric profile: a YAML map of FABRIC_* names to values.
 * @path: file to read.
 * @out: set to a new profile on success; free with pcm_fabric_free().
 * @diag: filled with "file:line:col: ..." on failure.
 *
 * Return: 0, -ENOENT/-EIO when the file cannot be read, -EINVAL on bad content,
 * -ENOMEM.
 */
int pcm_fabric_load(const char *path, struct pcm_fabric **out, struct pcm_diag *diag);

/**
 * pcm_fabric_parse() - like pcm_fabric_load() on a buffer; @name labels diagnostics.
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int pcm_fabric_parse(const char *name, const char *buf, size_t len, struct pcm_fabric **out,
		     struct pcm_diag *diag);

void pcm_fabric_free(struct pcm_fabric *fabric);

/**
 * pcm_spec_load() - read and validate a handler package spec.
 * @path: the spec file.
 * @fabric: the fabric profile whose FABRIC_* names values may use; may be NULL.
 * @out: set to a new spec on success; free with pcm_spec_free().
 * @diag: filled on failure with file:line:col, the key, and what is wrong.
 *
 * Checks: required keys, known enum names, unique names across constants,
 * signals, controls and variables, valid C identifiers that collide with
 * nothing a handler's translation unit already defines (see
 * pcm_name_is_reserved()), numbers, !eval expressions (syntax, unknown
 * names, division by zero, cycles between constants), at most 64 signals,
 * array lengths, and unknown keys (with the closest valid key). Constants may
 * refer to each other in any order; they are evaluated in dependency order.
 * A trigger_threshold of PCM_SIG_NO_TRIGGER means no trigger.
 *
 * Return: 0, -ENOENT/-EIO when unreadable, -EINVAL on a bad spec, -ENOMEM.
 */
int pcm_spec_load(const char *path, const struct pcm_fabric *fabric, struct pcm_spec **out,
		  struct pcm_diag *diag);

/**
 * pcm_spec_parse() - like pcm_spec_load() on a buffer; @name labels diagnostics.
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int pcm_spec_parse(const char *name, const char *buf, size_t len, const struct pcm_fabric *fabric,
		   struct pcm_spec **out, struct pcm_diag *diag);

void pcm_spec_free(struct pcm_spec *spec);

/* Name tables, for messages and generated code. Return NULL when out of range. */
const char *pcm_signal_name(pcm_signal_t type);   /* "PCM_SIG_ACK" */
const char *pcm_control_name(pcm_control_t type); /* "PCM_CTRL_CWND" */
const char *pcm_accum_name(pcm_signal_accum_t accum);
const char *pcm_trigger_name(pcm_signal_trigger_t trigger);
const char *pcm_trigger_op_text(pcm_trigger_op_t op); /* ">=" */

/**
 * pcm_name_is_reserved() - whether a spec may not use @name for a constant,
 * signal, control or variable, and why.
 * @name: a C identifier.
 * @why: filled with the reason when reserved ("<errno.h> defines it as a macro").
 * @size: size of @why.
 *
 * A spec name becomes a file-scope identifier (or, for a constant, a macro)
 * in the handler's translation unit, beside the handler API, the C library
 * headers a handler may include (the C11 headers and <xxhash.h>, as the C
 * compiler that built pcm sees them) and C itself. Names that any of those
 * already use are refused rather than failing, or worse compiling, later.
 *
 * Return: true when @name is reserved.
 */
bool pcm_name_is_reserved(const char *name, char *why, size_t size);

#endif /* PCM_SPEC_H */
