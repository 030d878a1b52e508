/* SPDX-License-Identifier: MIT */
/*
 * package.h - a compiled handler package, as pcmc emits it and shells run it.
 *
 * pcmc turns a spec plus a handler source into one C translation unit that
 * holds the handler and its pipeline, specialised for that spec: which event
 * bit feeds which signal, which accumulator, trigger and threshold, what is
 * reset after a call. The pipeline is defined once, in pcmc, and both shells
 * run it: the synchronous shell calls feed() on the datapath thread; the
 * asynchronous shell accumulates into a window with window_feed() on the
 * datapath thread and a worker folds the window into the flow's record with
 * window_merge() and runs call(), which is the second half of feed().
 *
 * The synchronous shell keeps each flow in a slot (struct pcm_flow_slot): the
 * flow's package, its count of handler calls, then its record. The package's
 * feed() and feed_burst() work on slots, so that the loop over a burst and
 * the call count are compiled into the package with its pipeline.
 *
 * Flow record layout (64-bit slots), shared with the handler's snapshot view:
 *   0                 trigger mask of the current call
 *   1                 mask of signals the handler wrote
 *   2 .. 2+S          signals
 *   .. +C             controls
 *   .. +V             variable slots
 *   auxiliary slots   a trigger reference (the signal's value at the last
 *                     fire) per DELTA/MAGNITUDE signal, then an epoch (ps)
 *                     per ELAPSED_TIME signal: the flow's start, which only
 *                     init() sets (the SDK's ELAPSED_TIME), then, in a
 *                     package with instance variables, the address of the
 *                     flow's instance area (shared_ref_slot)
 * The first handler_slots slots are what a handler sees.
 *
 * Instance variables (`scope: instance`, a pcm extension): one value for all
 * the flows of a handler instance (a NIC port in the emulation, an engine in
 * the CPU transport). They have variable slots in the record like the
 * others, so the handler's accessors are the same; the instance keeps them
 * in its area (n_shared_slots slots, pcm_package_shared_init()), and call()
 * copies them from the area into the record before the handler runs and back
 * after it. init() leaves the address 0 (no area: the copies are skipped and
 * the variables are the flow's own); the shell binds the record to its
 * instance's area after init() and after a handoff
 * (pcm_package_bind_shared()). Calls of flows of one instance must not run
 * at the same time: the synchronous shell runs each instance on one thread,
 * the asynchronous shell serialises them (pkgset.h).
 *
 * Window (asynchronous shell, window_slots + 1 slots): one slot per signal
 * other than ELAPSED_TIME, holding what the events since the worker's last
 * take accumulated, starting from window_identity[] (0 for SUM and MAX,
 * 2^64-1 for MIN), then the present mask: bit w set when LAST slot w holds
 * a sample. The flow's value of a signal is its record value combined with
 * its window slot by the signal's own accumulator.
 *
 * Published slots (asynchronous shell, pub_slots slots): what the datapath
 * needs from the record to evaluate triggers: the record value of each
 * signal with a trigger, each trigger reference, and the epoch of each
 * ELAPSED_TIME signal with a trigger. The worker publishes them after a call.
 */
#ifndef PCM_PACKAGE_H
#define PCM_PACKAGE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pcm.h"

#define PCM_PACKAGE_ABI_VERSION 4

/*
 * How generated code reads and writes memory it shares with other threads
 * (the window and the published slots). Stores are releases so that the
 * slots of one event become visible in the order it writes them (free on
 * x86-64). The deterministic-interleaving test build (PCM_ASYNC_DST,
 * dst_hooks.h) yields to its scheduler first.
 */
#ifdef PCM_ASYNC_DST
void pcm_dst_point(void);
#define PCM_SHARED_LOAD(p) (pcm_dst_point(), atomic_load_explicit((p), memory_order_relaxed))
#define PCM_SHARED_STORE(p, v) \
	(pcm_dst_point(), atomic_store_explicit((p), (v), memory_order_release))
#else
#define PCM_SHARED_LOAD(p) atomic_load_explicit((p), memory_order_relaxed)
#define PCM_SHARED_STORE(p, v) atomic_store_explicit((p), (v), memory_order_release)
#endif

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

struct pcm_package;

/*
 * A flow's slot in the synchronous shell. Only the flow's owner writes it;
 * @calls is atomic so that other threads may sum it (pcm_shell_stats()).
 */
struct pcm_flow_slot {
	const struct pcm_package *pkg; /* NULL when the handle is free */
	_Atomic uint64_t calls;        /* handler calls, counted by the package's feed entries */
	pcm_uint rec[];
};

/* Where a table's flow slots are: flow f's at slots + f * slot_bytes, for f < max_flows. */
struct pcm_slot_table {
	unsigned char *slots;
	size_t slot_bytes;
	uint32_t max_flows;
};

/**
 * pcm_slot_at() - @flow's slot in @tab.
 * @tab: the table.
 * @flow: a handle below @tab->max_flows: callers test that first, so that
 *        no NULL test of the address follows.
 *
 * Threads: any; the slot itself belongs to the flow's owner.
 *
 * Return: the slot's address.
 */
static inline struct pcm_flow_slot *pcm_slot_at(const struct pcm_slot_table *tab, uint32_t flow)
{
	return (struct pcm_flow_slot *)(tab->slots + (size_t)flow * tab->slot_bytes);
}

/**
 * pcm_slot_prefetch() - start fetching @flow's slot for writing.
 * @tab: the table.
 * @flow: any handle. A prefetch never faults, so a handle beyond the table
 *        needs no test: its address is formed as an integer (no
 *        out-of-bounds pointer) and fetches nothing useful.
 *
 * Threads: any.
 */
static inline void pcm_slot_prefetch(const struct pcm_slot_table *tab, uint32_t flow)
{
	__builtin_prefetch((const void *)((uintptr_t)tab->slots + (uintptr_t)flow * tab->slot_bytes),
			   1);
}

/* How many events ahead a burst fetches slots: enough to cover a miss to DRAM. */
#define PCM_BURST_PREFETCH 4

/**
 * pcm_slot_count_call() - count one more handler call of @slot's flow.
 * @slot: the flow's slot.
 *
 * A relaxed load and store, not a read-modify-write: only the owner writes
 * the count, and readers on other threads see either value.
 * Threads: the flow's owner.
 */
static inline void pcm_slot_count_call(struct pcm_flow_slot *slot)
{
	atomic_store_explicit(&slot->calls,
			      atomic_load_explicit(&slot->calls, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/*
 * A flow's controls as one consistent set: every value comes from the same
 * handler call (or the initial values). @seq counts the sets published so
 * far; @mask has bit t set for each pcm_control_t the package drives.
 */
struct pcm_control_set {
	uint64_t seq;
	pcm_uint mask;
	pcm_uint value[PCM_CTRL_COUNT];
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
	pcm_uint initial;     /* bit pattern of the typed initial value */
	bool shared;          /* `scope: instance` */
	uint32_t shared_slot; /* its first slot in the instance area, if shared */
};

/* Entry points pcmc generates for one package. None blocks or allocates. */
struct pcm_package_ops {
	/* Fill a new flow record: initial values; references at the signals'
	 * initial values; epochs at @now_ps. */
	void (*init)(pcm_uint *rec, pcm_uint now_ps);
	/*
	 * The whole pipeline on @slot's record: accumulate @ev, then call(), and
	 * count the call in @slot->calls if the handler ran. Return: 1 if the
	 * handler ran, 0 if no trigger fired, -EIO if the handler returned
	 * PCM_ERROR (its writes are kept).
	 */
	int (*feed)(struct pcm_flow_slot *slot, const struct pcm_event *ev, pcm_uint now_ps);
	/*
	 * feed() for each of @evs in order, fetching the slots of later events
	 * while earlier ones run, as long as the event's flow is in @tab and
	 * runs @self (this package, as the slot's pkg names it). Adds the number
	 * of handler errors to *@errors. Return: the number of events fed; the
	 * caller goes on from the first one not fed.
	 */
	uint32_t (*feed_burst)(const struct pcm_package *self, const struct pcm_slot_table *tab,
			       const struct pcm_flow_event *evs, uint32_t n, uint32_t *errors);
	/*
	 * The pipeline after accumulation: evaluate the triggers on @rec and, if
	 * any fired, move the fired references, run the handler in place and
	 * commit (handler writes, PCM_SIG_REARM, resets of consumed signals;
	 * ELAPSED_TIME signals back to @now_ps - epoch, a re-armed one's
	 * reference with them). Return: as feed().
	 */
	int (*call)(pcm_uint *rec, pcm_uint now_ps);
	/* The raw handler over a snapshot laid out like the record's first slots. */
	int (*handler)(pcm_uint *snapshot);
	/*
	 * Asynchronous datapath side: accumulate @ev into @win (and its present
	 * mask) and, if @triggers, evaluate the triggers on the flow's value,
	 * @pub combined with @win. Return: the mask of signals whose trigger
	 * holds (0 without @triggers).
	 */
	pcm_uint (*window_feed)(_Atomic pcm_uint *win, const _Atomic pcm_uint *pub,
				const struct pcm_event *ev, pcm_uint now_ps, bool triggers);
	/* Fold a window (copied out of shared memory) into @rec; ELAPSED_TIME
	 * signals become now_ps - epoch. */
	void (*window_merge)(pcm_uint *rec, const pcm_uint *win, pcm_uint present,
			     pcm_uint now_ps);
	/*
	 * Fold into @rec what an event that was still being written when a window
	 * was copied (@read, @read_present) added to it afterwards (@final,
	 * @final_present): the difference for SUM, the final value for the
	 * others when it differs from what was read.
	 */
	void (*window_merge_late)(pcm_uint *rec, const pcm_uint *read, pcm_uint read_present,
				  const pcm_uint *final, pcm_uint final_present);
	/* Store the published slots of @rec into @pub, writing only those that changed. */
	void (*publish)(_Atomic pcm_uint *pub, const pcm_uint *rec);
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
	uint32_t record_slots;  /* handler_slots + references + epochs */
	uint32_t window_slots;  /* signals other than ELAPSED_TIME; fewer than n_signals: a timer */
	uint32_t pub_slots;
	uint32_t n_shared_slots;  /* slots of the instance area; 0: no instance variables */
	uint32_t shared_ref_slot; /* record slot of the instance area's address, if any */
	pcm_uint signal_types;  /* bit per pcm_signal_t the package consumes */
	pcm_uint control_types; /* bit per pcm_control_t the package drives */
	int8_t control_slot[PCM_CTRL_COUNT]; /* record slot of the first control of a type, or -1 */
	const struct pcm_pkg_signal *signals;
	const struct pcm_pkg_control *controls;
	const struct pcm_pkg_variable *variables;
	const pcm_uint *window_identity; /* window_slots start values */
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
 * Threads: any; reads @pkg only.
 *
 * Return: 0, -EINVAL (missing op, bad counts), -EPROTO for an ABI version
 * this library does not speak.
 */
int pcm_package_validate(const struct pcm_package *pkg, const char **why);

/**
 * pcm_package_controls() - copy the controls of a record into a control set.
 * @pkg: the record's package.
 * @rec: a flow record of @pkg.
 * @out: filled in (value of each type the package drives, its mask); @out->seq is untouched.
 *
 * The value of a type is that of the first control the spec declares of it.
 * Threads: any that may read @rec (its shell says which); synchronises with nothing.
 */
void pcm_package_controls(const struct pcm_package *pkg, const pcm_uint *rec,
			  struct pcm_control_set *out);

/**
 * pcm_package_handoff() - the state a flow starts with when it moves from
 * package @from to package @to (live policy swap).
 * @from: the package the flow ran.
 * @from_rec: its record, with every event fed so far accumulated in it.
 * @to: the package it moves to.
 * @to_rec: filled in: @to's initial record, except that
 *          - each control type both packages drive takes @from's value;
 *          - each signal of @to whose type and accumulator match a signal
 *            of @from takes that signal's value, unless it is still at its
 *            initial value in @from (nothing to carry), so samples @from had
 *            not consumed yet are neither lost nor counted twice;
 *          - epochs of ELAPSED_TIME signals start at @now_ps.
 * @now_ps: the time of the swap.
 *
 * Threads: any; reads @from_rec, writes @to_rec, which the caller keeps to itself.
 */
void pcm_package_handoff(const struct pcm_package *from, const pcm_uint *from_rec,
			 const struct pcm_package *to, pcm_uint *to_rec, pcm_uint now_ps);

/**
 * pcm_package_shared_init() - set an instance area to the initial values of
 * @pkg's instance variables.
 * @pkg: the package.
 * @area: @pkg->n_shared_slots slots.
 *
 * Threads: any; writes @area, which no flow may be using.
 */
void pcm_package_shared_init(const struct pcm_package *pkg, pcm_uint *area);

/**
 * pcm_package_bind_shared() - make @rec's instance variables those of @area.
 * @pkg: @rec's package.
 * @rec: a flow record of @pkg, just initialised or handed off.
 * @area: the flow's instance area for @pkg (pcm_package_shared_init()), or
 *        NULL when @pkg has no instance variables.
 *
 * Threads: the record's owner.
 */
static inline void pcm_package_bind_shared(const struct pcm_package *pkg, pcm_uint *rec,
					   pcm_uint *area)
{
	if (pkg->n_shared_slots)
		rec[pkg->shared_ref_slot] = (pcm_uint)(uintptr_t)area;
}

/* An opened package: a built-in one, or one dlopen()ed from a shared object. */
struct pcm_package_handle {
	const struct pcm_package *pkg;
	void *dl; /* NULL for built-ins */
};

/**
 * pcm_package_find() - a package of a table by name.
 * @table: NULL-terminated table of packages, such as the built-in policies
 *         (may be NULL).
 * @name: the package's name, "swift".
 *
 * Threads: any.
 *
 * Return: the first package of @table named @name, or NULL.
 */
const struct pcm_package *pcm_package_find(const struct pcm_package *const *table,
					   const char *name);

/**
 * pcm_package_open() - open a package by built-in name or by .so path.
 * @name_or_path: "swift", or a path containing '/' or ending in ".so".
 * @builtins: NULL-terminated table of built-in packages (may be NULL).
 * @out: the opened package.
 * @err: buffer for a message naming the package and the problem.
 * @err_len: its size.
 *
 * Threads: any (dlopen() serialises itself).
 *
 * Return: 0, -ENOENT (no such built-in or file), -ELIBBAD (no pcm_package_entry
 * symbol or dlopen failure), -EINVAL/-EPROTO (descriptor rejected).
 */
int pcm_package_open(const char *name_or_path, const struct pcm_package *const *builtins,
		     struct pcm_package_handle *out, char *err, size_t err_len);

/*
 * Close @h. Threads: any, once, after every shell that runs its package is
 * destroyed (a package's code and descriptor live in its shared object).
 */
void pcm_package_close(struct pcm_package_handle *h);

#endif /* PCM_PACKAGE_H */
