/* SPDX-License-Identifier: MIT */
/*
 * package.h - a compiled handler package, as pcmc emits it and shells run it.
 *
 * pcmc turns a spec plus a handler source into one C translation unit that
 * holds the handler and a pipeline specialised for that spec: accumulate,
 * evaluate triggers, run the handler in place on the flow record, commit.
 * Constants, offsets and accumulator kinds are folded at compile time, so a
 * shell pays one indirect call per event. The unit exports one
 * `struct pcm_package` (named in the spec's generated header), and a shared
 * object built by `pcmc build` also exports it as `pcm_package_entry`.
 *
 * Flow record layout (64-bit slots), shared with the handler's snapshot view:
 *   0                 trigger mask of the current call
 *   1                 mask of signals the handler wrote
 *   2 .. 2+S          signals
 *   .. +C             controls
 *   .. +V             variable slots
 *   auxiliary slots   a trigger reference (value at the last fire) per
 *                     DELTA/MAGNITUDE signal, an epoch (ps) per ELAPSED_TIME
 *                     signal, as many as the spec needs
 * The first handler_slots slots are what a handler sees.
 */
#ifndef PCM_PACKAGE_H
#define PCM_PACKAGE_H

#include <stddef.h>
#include <stdint.h>

#include "pcm.h"

#define PCM_PACKAGE_ABI_VERSION 1

/* One datapath event: a value per signal type, valid where its bit is set. */
struct pcm_event {
	pcm_uint valid;                /* bit t set: values[t] carries a new sample */
	pcm_uint values[PCM_SIG_COUNT];
};

/* An event addressed to a flow, for burst feeding. */
struct pcm_flow_event {
	uint32_t flow;
	pcm_uint now_ps;
	struct pcm_event ev;
};

struct pcm_pkg_signal {
	const char *name;
	uint8_t type;    /* pcm_signal_t */
	uint8_t accum;   /* pcm_signal_accum_t */
	uint8_t trigger; /* pcm_signal_trigger_t */
	uint8_t op;      /* pcm_trigger_op_t */
	bool reset_upon_trigger;
	pcm_uint threshold;
	pcm_uint initial;
};

struct pcm_pkg_control {
	const char *name;
	uint8_t type; /* pcm_control_t */
	pcm_uint initial;
};

struct pcm_pkg_variable {
	const char *name;
	uint8_t type; /* 0 uint, 1 int, 2 float (enum pcm_num_type) */
	uint32_t slot;
	uint32_t arr_len;
	pcm_uint initial; /* bit pattern of the typed initial value */
};

/* Entry points pcmc generates for one package. */
struct pcm_package_ops {
	/* Fill a new flow record: initial values, zeroed references, epoch = now_ps. */
	void (*init)(pcm_uint *rec, pcm_uint now_ps);
	/*
	 * Accumulate @ev, evaluate triggers and, if any fired, run the handler in
	 * place and commit. Return: 1 if the handler ran, 0 if no trigger fired,
	 * -EIO if the handler returned PCM_ERROR (its writes are kept).
	 */
	int (*feed)(pcm_uint *rec, const struct pcm_event *ev, pcm_uint now_ps);
	/* The raw handler over a snapshot laid out like the record's first slots. */
	int (*handler)(pcm_uint *snapshot);
	/*
	 * feed() over a burst: @records holds @n_flows records; each event goes
	 * to its flow's record. Stops at the first event whose flow is not below
	 * @n_flows. Adds handler invocations to *calls and PCM_ERROR returns to
	 * *errors. Return: the number of events processed.
	 */
	uint32_t (*feed_burst)(pcm_uint *records, uint32_t n_flows,
			       const struct pcm_flow_event *evs, uint32_t n, uint64_t *calls,
			       uint64_t *errors);
};

struct pcm_package {
	uint32_t abi_version;   /* PCM_PACKAGE_ABI_VERSION */
	const char *name;       /* algorithm.name */
	const char *description;
	const char *arith;      /* "double", "q16.16", "q32.32", "q42.22" */
	const char *spec_path;  /* the spec it was built from, for messages */
	uint32_t n_signals;
	uint32_t n_controls;
	uint32_t n_var_slots;
	uint32_t n_variables;
	uint32_t handler_slots; /* 2 + S + C + V */
	uint32_t record_slots;  /* handler_slots + S + 1 */
	pcm_uint signal_types;  /* bit per pcm_signal_t the package consumes */
	pcm_uint control_types; /* bit per pcm_control_t the package drives */
	int8_t control_slot[PCM_CTRL_COUNT]; /* record slot of the first control of a type, or -1 */
	const struct pcm_pkg_signal *signals;
	const struct pcm_pkg_control *controls;
	const struct pcm_pkg_variable *variables;
	struct pcm_package_ops ops;
};

#define PCM_REC_MASK_SLOT 0
#define PCM_REC_SET_MASK_SLOT 1
#define PCM_REC_SIGNALS_SLOT 2

/**
 * pcm_package_validate() - check that a package descriptor is complete and sane.
 * @pkg: the descriptor, typically from a shared object.
 * @why: set to a static string saying what is wrong, on failure.
 *
 * Return: 0, -EINVAL (missing op, bad counts, ABI mismatch), -EPROTO for an
 * ABI version this library does not speak.
 */
int pcm_package_validate(const struct pcm_package *pkg, const char **why);

/* An opened package: a built-in one, or one dlopen()ed from a shared object. */
struct pcm_package_handle {
	const struct pcm_package *pkg;
	void *dl; /* NULL for built-ins */
};

/**
 * pcm_package_open() - open a package by built-in name or by .so path.
 * @name_or_path: "swift", or a path containing '/' or ending in ".so".
 * @builtins: NULL-terminated table of built-in packages (may be NULL).
 * @out: the opened package.
 * @err: buffer for a message naming the package and the problem.
 * @err_len: its size.
 *
 * Return: 0, -ENOENT (no such built-in or file), -ELIBBAD (no pcm_package_entry
 * symbol or dlopen failure), -EINVAL/-EPROTO (descriptor rejected).
 */
int pcm_package_open(const char *name_or_path, const struct pcm_package *const *builtins,
		     struct pcm_package_handle *out, char *err, size_t err_len);

void pcm_package_close(struct pcm_package_handle *h);

#endif /* PCM_PACKAGE_H */
