// SPDX-License-Identifier: MIT
/*
 * async.c - the asynchronous shell: lock-free accumulation on the datapath,
 * snapshots and handler calls on control-plane workers.
 *
 * Shared flow record (64-bit atomic slots, 64-byte aligned per flow), laid
 * out so that everything the datapath writes per event shares a cache line
 * when the package has at most six signals:
 *   0        state: bit 0 QUEUED (the flow sits in, or is being pushed onto,
 *            its worker's queue), bit 1 LOCKED (LOCKED mode); above them
 *            LOCKED mode keeps the mask of signals the datapath touched since
 *            the last snapshot (packages of up to 62 signals) and BOUNDED mode
 *            the count of events in progress (bits 2..31) and of events begun
 *            (bits 32..63)
 *   1 .. 1+S signals, accumulated by the datapath
 *   1+S      `now` of the latest event or tick
 *   .. +C    controls as published by the worker, read by the datapath
 *   ..       a trigger reference per DELTA/MAGNITUDE signal, an epoch per
 *            ELAPSED_TIME signal, and the touched mask of LOCKED packages
 *            with more than 62 signals
 * The worker keeps each flow's controls and variables in a private array,
 * laid out as the handler sees them, and runs the handler on a per-worker
 * scratch copy of the handler slots.
 *
 * Pending flows: when a trigger holds after an event, the datapath sets QUEUED
 * with a release read-modify-write on the state word and, if it set it, pushes
 * the flow's id onto its worker's queue. The worker clears QUEUED with an
 * acquire read-modify-write before it takes the snapshot. Both touch the same
 * word, so either the datapath's RMW comes first in its modification order,
 * and the worker, which then synchronises with it, sees the event's samples;
 * or it comes after the clear and the datapath pushes the flow again. No
 * wake-up is lost, and a flow is in at most one queue slot at a time.
 *
 * The queue is a bounded multi-producer ring of flow ids with at least twice
 * as many slots as the worker has flows, so it never fills. Each slot carries
 * the lap of the ticket that wrote it, so the consumer never writes to the
 * ring: it only reads lines the producers write.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "async.h"

#define CACHELINE 64
#define SLOTS_PER_LINE (CACHELINE / sizeof(pcm_uint))

#define ST_QUEUED ((pcm_uint)1)
#define ST_LOCKED ((pcm_uint)2)
#define ST_DIRTY_SHIFT 2 /* LOCKED */
#define ST_DIRTY_MAX_SIGNALS 62
#define ST_INFLIGHT_ONE ((pcm_uint)1 << 2) /* BOUNDED */
#define ST_INFLIGHT_MASK ((pcm_uint)0x3fffffff)
#define ST_BEGUN_ONE ((pcm_uint)1 << 32)

#define REC_STATE 0
#define REC_SIG 1
#define SNAP_SIG PCM_REC_SIGNALS_SLOT /* first signal in the handler's layout */

#define MAX_BATCH 64
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define SLEEP_TIMEOUT_NS 50000000L /* an idle worker re-checks its queue every 50 ms */

struct async_sig {
	uint8_t accum;   /* pcm_signal_accum_t */
	uint8_t trigger; /* pcm_signal_trigger_t */
	bool reset;      /* reset_upon_trigger */
	bool elapsed;    /* ELAPSED_TIME: the value is now - epoch */
	int16_t ref;     /* shared slot of the trigger reference, or -1 */
	int16_t epoch;   /* shared slot of the epoch, or -1 */
	pcm_uint initial;
};

/*
 * A trigger, normalised: it holds when ((x & mask) - lo <= span) != invert,
 * where x is the value (RAW), the value minus its reference (DELTA) or their
 * distance (MAGNITUDE). Every operator of the spec reduces to that form, so
 * evaluating one takes no branch.
 */
struct async_trig {
	uint8_t sig;  /* signal index */
	uint8_t kind; /* pcm_signal_trigger_t */
	bool invert;
	bool elapsed;
	int16_t ref;   /* shared slot of the reference, or -1 */
	int16_t epoch; /* shared slot of the epoch (ELAPSED_TIME), or -1 */
	pcm_uint mask;
	pcm_uint lo;
	pcm_uint span;
};

/* Counters written by their worker only; read atomically by pcm_async_stats(). */
struct worker_counters {
	_Atomic uint64_t wakeups;
	_Atomic uint64_t handler_calls;
	_Atomic uint64_t handler_errors;
	_Atomic uint64_t no_trigger;
	_Atomic uint64_t retakes;
	_Atomic uint64_t deferrals;
	_Atomic uint64_t idle_polls;
	_Atomic uint64_t sleeps;
	_Atomic uint64_t skew_max_accepted;
	_Atomic uint64_t skew_hist[PCM_ASYNC_SKEW_BUCKETS];
};

struct async_worker {
	/* consumer side, touched by the worker only */
	alignas(CACHELINE) struct pcm_async *as;
	_Atomic uint64_t *slots; /* lap << 32 | flow id, see push() */
	uint32_t mask;
	uint32_t lap_shift; /* log2 of the ring size */
	uint32_t id;
	uint64_t head;
	pcm_uint *scratch; /* a batch of handler snapshots, handler_slots each */
	pcm_uint *pre;     /* a batch of signal values as taken, n_sig each */
	pthread_t thread;
	bool thread_live;
	/* producer side */
	alignas(CACHELINE) _Atomic uint64_t tail;
	alignas(CACHELINE) _Atomic uint32_t sleeping; /* futex word: 1 while blocked */
	alignas(CACHELINE) struct worker_counters cnt;
};

struct pcm_async {
	const struct pcm_package *pkg;
	struct pcm_async_config cfg;
	enum pcm_async_mode mode;
	uint32_t n_flows;
	uint32_t n_workers;
	uint32_t n_sig;
	uint32_t n_ctrl;
	uint32_t stride;     /* shared slots per flow, a multiple of a cache line */
	uint32_t priv_slots; /* controls + variable slots per flow */
	uint32_t now_slot;
	uint32_t ctrl_slot;  /* first published control */
	uint32_t dirty_slot; /* LOCKED with more than 62 signals: the touched mask, else 0 */
	bool has_elapsed;
	bool running;
	pcm_uint dp_types; /* event types that feed a signal */
	uint8_t by_type_start[PCM_SIG_COUNT + 1];
	uint8_t by_type[64];
	struct async_trig trig[64];
	uint32_t n_trig;
	pcm_uint ref_mask;    /* DELTA and MAGNITUDE triggers */
	uint8_t consumed[64]; /* reset_upon_trigger signals other than ELAPSED_TIME */
	uint32_t n_consumed;
	uint8_t kept[64]; /* the other non-ELAPSED_TIME signals */
	uint32_t n_kept;
	uint8_t elapsed[64]; /* ELAPSED_TIME signals */
	uint32_t n_elapsed;
	pcm_uint reset_aux; /* consumed signals with a trigger reference or an epoch */
	int8_t ctrl_of_type[PCM_CTRL_COUNT];
	struct async_sig sig[64];
	_Atomic pcm_uint *shared;
	size_t shared_bytes;
	pcm_uint *priv;
	size_t priv_bytes;
	struct async_worker *workers;
	_Atomic bool stop;
};

static const char *const mode_names[PCM_ASYNC_MODE_COUNT] = { "relaxed", "locked", "bounded" };

/* ---- small helpers ---------------------------------------------------------------------- */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Prefetch for writing: the line arrives exclusive, so the locked
 * instructions that follow do not stall on an upgrade. PREFETCHW is a no-op
 * on x86-64 parts without it; elsewhere the compiler's write prefetch.
 */
static inline void prefetch_w(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

static inline pcm_uint ld(_Atomic pcm_uint *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

static inline void st(_Atomic pcm_uint *p, pcm_uint v)
{
	atomic_store_explicit(p, v, memory_order_relaxed);
}

static inline bool cas(_Atomic pcm_uint *p, pcm_uint *expected, pcm_uint desired)
{
	return atomic_compare_exchange_weak_explicit(p, expected, desired, memory_order_relaxed,
						     memory_order_relaxed);
}

/*
 * Datapath writes to signals are releases and the worker's reads of them
 * acquires (both free on x86-64), so a worker that sees any sample of an
 * event also sees that event's BOUNDED begin count. This does the job of a
 * fence pair without atomic_thread_fence(), which ThreadSanitizer cannot model.
 */
static inline void st_rel(_Atomic pcm_uint *p, pcm_uint v)
{
	atomic_store_explicit(p, v, memory_order_release);
}

static inline bool cas_rel(_Atomic pcm_uint *p, pcm_uint *expected, pcm_uint desired)
{
	return atomic_compare_exchange_weak_explicit(p, expected, desired, memory_order_release,
						     memory_order_relaxed);
}

static inline pcm_uint ld_acq(_Atomic pcm_uint *p)
{
	return atomic_load_explicit(p, memory_order_acquire);
}

/* A counter with a single writer: a plain load and store, no locked instruction. */
static inline void cnt_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static inline pcm_uint sat_add(pcm_uint a, pcm_uint b)
{
	pcm_uint s;

	return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

static inline pcm_uint abs_diff(pcm_uint a, pcm_uint b)
{
	return a >= b ? a - b : b - a;
}

static inline pcm_uint since(pcm_uint now, pcm_uint epoch)
{
	return now > epoch ? now - epoch : 0;
}

static ALWAYS_INLINE bool trigger_holds(const struct async_trig *t, pcm_uint x)
{
	return (((x & t->mask) - t->lo) <= t->span) != t->invert;
}

/* Reduce `x <op> threshold` to the form of struct async_trig. */
static void normalise_trigger(struct async_trig *t, unsigned op, pcm_uint thr)
{
	const pcm_uint all = UINT64_MAX;
	bool never = false, always = false;

	t->mask = all;
	t->lo = 0;
	t->span = 0;
	t->invert = false;
	switch (op) {
	case PCM_TRIG_OP_GT:
		never = thr == all;
		t->lo = thr + 1;
		t->span = all - t->lo;
		break;
	case PCM_TRIG_OP_LT:
		never = thr == 0;
		t->span = thr - 1;
		break;
	case PCM_TRIG_OP_GE:
		t->lo = thr;
		t->span = all - thr;
		break;
	case PCM_TRIG_OP_LE:
		t->span = thr;
		break;
	case PCM_TRIG_OP_EQ:
		t->lo = thr;
		break;
	case PCM_TRIG_OP_NE:
	case PCM_TRIG_OP_BIT_XOR: /* (x ^ t) != 0 */
		t->lo = thr;
		t->invert = true;
		break;
	case PCM_TRIG_OP_BIT_AND: /* (x & t) != 0 */
		t->mask = thr;
		t->invert = true;
		break;
	case PCM_TRIG_OP_BIT_OR: /* (x | t) != 0 */
	case PCM_TRIG_OP_OR: /* x || t */
		always = thr != 0;
		t->invert = true; /* x != 0 */
		break;
	case PCM_TRIG_OP_AND: /* x && t */
		never = thr == 0;
		t->invert = true;
		break;
	default:
		never = true;
	}
	if (never || always) {
		t->mask = 0; /* x & mask = 0 */
		t->lo = never ? 1 : 0;
		t->span = 0;
		t->invert = false;
	}
}

static inline _Atomic pcm_uint *flow_rec(const struct pcm_async *as, uint32_t flow)
{
	return as->shared + (size_t)flow * as->stride;
}

static inline pcm_uint *flow_priv(const struct pcm_async *as, uint32_t flow)
{
	return as->priv + (size_t)flow * as->priv_slots;
}

static inline struct async_worker *worker_of(const struct pcm_async *as, uint32_t flow)
{
	return &as->workers[as->n_workers == 1 ? 0 : flow % as->n_workers];
}

static void futex_wait(_Atomic uint32_t *word, uint32_t val, long timeout_ns)
{
	struct timespec ts = { .tv_sec = timeout_ns / 1000000000L,
			       .tv_nsec = timeout_ns % 1000000000L };

	syscall(SYS_futex, (void *)word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (void *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void wake_if_sleeping(struct async_worker *w)
{
	if (atomic_load_explicit(&w->sleeping, memory_order_seq_cst) &&
		atomic_exchange_explicit(&w->sleeping, 0, memory_order_seq_cst))
		futex_wake(&w->sleeping);
}

/* ---- the queue -------------------------------------------------------------------------- */

/*
 * A slot holds (lap + 1) << 32 | flow, where lap = ticket / ring size: the
 * consumer at position head takes a slot only if it carries head's lap, so
 * stale entries from earlier laps read as empty and nobody clears slots.
 */
static inline uint64_t slot_tag(const struct async_worker *w, uint64_t ticket)
{
	return ((ticket >> w->lap_shift) + 1) << 32;
}

/*
 * Push @flow, whose QUEUED bit the caller has just set. The slot store and
 * the load of `sleeping` are sequentially consistent, as are the worker's
 * store of `sleeping` and its re-check of the queue before it blocks, so
 * either the worker sees the flow or the pusher sees the sleeper.
 */
static void push(struct pcm_async *as, uint32_t flow)
{
	struct async_worker *w = worker_of(as, flow);
	uint64_t t = atomic_fetch_add_explicit(&w->tail, 1, memory_order_relaxed);

	atomic_store_explicit(&w->slots[t & w->mask], slot_tag(w, t) | flow, memory_order_seq_cst);
	wake_if_sleeping(w);
}

static uint32_t pop_batch(struct async_worker *w, uint32_t *ids, uint32_t max)
{
	uint32_t n = 0;

	while (n < max) {
		uint64_t v =
			atomic_load_explicit(&w->slots[w->head & w->mask], memory_order_acquire);

		/* empty, or its producer has its ticket but has not stored yet */
		if ((v & ~(uint64_t)UINT32_MAX) != slot_tag(w, w->head))
			break;
		w->head++;
		ids[n++] = (uint32_t)v;
	}
	return n;
}

static bool queue_nonempty(struct async_worker *w)
{
	uint64_t v = atomic_load_explicit(&w->slots[w->head & w->mask], memory_order_seq_cst);

	return (v & ~(uint64_t)UINT32_MAX) == slot_tag(w, w->head);
}

/* ---- datapath side ---------------------------------------------------------------------- */

/* RELAXED and BOUNDED: each signal is its own atomic; MIN and MAX write only on change. */
static ALWAYS_INLINE void accumulate_atomic(_Atomic pcm_uint *p, unsigned accum, pcm_uint v)
{
	pcm_uint cur;

	switch (accum) {
	case PCM_SIG_ACCUM_SUM:
		if (!v)
			return;
		cur = ld(p);
		while (!cas_rel(p, &cur, sat_add(cur, v)))
			;
		return;
	case PCM_SIG_ACCUM_MIN:
		cur = ld(p);
		while (v < cur && !cas_rel(p, &cur, v))
			;
		return;
	case PCM_SIG_ACCUM_MAX:
		cur = ld(p);
		while (v > cur && !cas_rel(p, &cur, v))
			;
		return;
	default:
		st_rel(p, v);
	}
}

/* LOCKED: the flow's lock is held, so plain (relaxed) loads and stores suffice. */
static ALWAYS_INLINE void accumulate_locked(_Atomic pcm_uint *p, unsigned accum, pcm_uint v)
{
	pcm_uint cur = ld(p);

	switch (accum) {
	case PCM_SIG_ACCUM_SUM:
		st(p, sat_add(cur, v));
		return;
	case PCM_SIG_ACCUM_MIN:
		if (v < cur)
			st(p, v);
		return;
	case PCM_SIG_ACCUM_MAX:
		if (v > cur)
			st(p, v);
		return;
	default:
		st(p, v);
	}
}

/* Return: the mask of signals that took a sample. */
static ALWAYS_INLINE pcm_uint accumulate(const struct pcm_async *as, _Atomic pcm_uint *rec,
					 const struct pcm_event *ev, bool locked)
{
	pcm_uint valid = ev->valid & as->dp_types, touched = 0;

	while (valid) {
		unsigned t = (unsigned)__builtin_ctzll(valid);

		valid &= valid - 1;
		for (unsigned k = as->by_type_start[t]; k < as->by_type_start[t + 1]; k++) {
			unsigned i = as->by_type[k];

			if (locked)
				accumulate_locked(&rec[REC_SIG + i], as->sig[i].accum,
						  ev->values[t]);
			else
				accumulate_atomic(&rec[REC_SIG + i], as->sig[i].accum,
						  ev->values[t]);
			touched |= (pcm_uint)1 << i;
		}
	}
	return touched;
}

/* The trigger's operand when its signal's value is @v. */
static ALWAYS_INLINE pcm_uint trigger_operand(const struct async_trig *t, _Atomic pcm_uint *rec,
					      pcm_uint v)
{
	if (t->kind == PCM_SIG_TRIGGER_DELTA)
		return v - ld(&rec[t->ref]);
	if (t->kind == PCM_SIG_TRIGGER_MAGNITUDE)
		return abs_diff(v, ld(&rec[t->ref]));
	return v;
}

/* Does any trigger hold on the record as the datapath sees it now? */
static ALWAYS_INLINE bool any_trigger(const struct pcm_async *as, _Atomic pcm_uint *rec,
				      pcm_uint now)
{
	for (uint32_t k = 0; k < as->n_trig; k++) {
		const struct async_trig *t = &as->trig[k];
		pcm_uint v =
			t->elapsed ? since(now, ld(&rec[t->epoch])) : ld(&rec[REC_SIG + t->sig]);

		if (trigger_holds(t, trigger_operand(t, rec, v)))
			return true;
	}
	return false;
}

static ALWAYS_INLINE pcm_uint lock_flow(_Atomic pcm_uint *state)
{
	pcm_uint old = atomic_fetch_or_explicit(state, ST_LOCKED, memory_order_acquire);

	while (old & ST_LOCKED) {
		do
			cpu_relax();
		while (ld(state) & ST_LOCKED);
		old = atomic_fetch_or_explicit(state, ST_LOCKED, memory_order_acquire);
	}
	return old;
}

static inline void unlock_flow(_Atomic pcm_uint *state, pcm_uint value)
{
	atomic_store_explicit(state, value & ~ST_LOCKED, memory_order_release);
}

static ALWAYS_INLINE int feed_relaxed(struct pcm_async *as, uint32_t flow,
				      const struct pcm_event *ev, pcm_uint now)
{
	_Atomic pcm_uint *rec = flow_rec(as, flow);
	pcm_uint old;

	if (as->has_elapsed)
		st(&rec[as->now_slot], now);
	accumulate(as, rec, ev, false);
	if (!any_trigger(as, rec, now))
		return 0;
	old = atomic_fetch_or_explicit(&rec[REC_STATE], ST_QUEUED, memory_order_release);
	if (old & ST_QUEUED)
		return 0;
	push(as, flow);
	return 1;
}

/*
 * BOUNDED: count the event as begun before touching a signal and as finished
 * after. The samples are written with release order, so a worker that reads
 * one also reads this begin count.
 */
static ALWAYS_INLINE int feed_bounded(struct pcm_async *as, uint32_t flow,
				      const struct pcm_event *ev, pcm_uint now)
{
	_Atomic pcm_uint *rec = flow_rec(as, flow);
	pcm_uint old, set;

	atomic_fetch_add_explicit(&rec[REC_STATE], ST_BEGUN_ONE + ST_INFLIGHT_ONE,
				  memory_order_relaxed);
	if (as->has_elapsed)
		st_rel(&rec[as->now_slot], now);
	accumulate(as, rec, ev, false);
	set = any_trigger(as, rec, now) ? ST_QUEUED : 0;
	old = ld(&rec[REC_STATE]);
	while (!atomic_compare_exchange_weak_explicit(&rec[REC_STATE], &old,
						      (old - ST_INFLIGHT_ONE) | set,
						      memory_order_release, memory_order_relaxed))
		;
	if (!set || (old & ST_QUEUED))
		return 0;
	push(as, flow);
	return 1;
}

static ALWAYS_INLINE int feed_locked(struct pcm_async *as, uint32_t flow,
				     const struct pcm_event *ev, pcm_uint now)
{
	_Atomic pcm_uint *rec = flow_rec(as, flow);
	pcm_uint old = lock_flow(&rec[REC_STATE]), touched;
	bool fired;

	if (as->has_elapsed)
		st(&rec[as->now_slot], now);
	touched = accumulate(as, rec, ev, true);
	if (as->dirty_slot)
		st(&rec[as->dirty_slot], ld(&rec[as->dirty_slot]) | touched);
	else
		old |= touched << ST_DIRTY_SHIFT;
	fired = any_trigger(as, rec, now);
	unlock_flow(&rec[REC_STATE], old | (fired ? ST_QUEUED : 0));
	if (!fired || (old & ST_QUEUED))
		return 0;
	push(as, flow);
	return 1;
}

static ALWAYS_INLINE int feed_one(struct pcm_async *as, uint32_t flow, const struct pcm_event *ev,
				  pcm_uint now, const enum pcm_async_mode mode)
{
	switch (mode) {
	case PCM_ASYNC_LOCKED:
		return feed_locked(as, flow, ev, now);
	case PCM_ASYNC_BOUNDED:
		return feed_bounded(as, flow, ev, now);
	default:
		return feed_relaxed(as, flow, ev, now);
	}
}

int pcm_async_feed(struct pcm_async *as, uint32_t flow, const struct pcm_event *ev, pcm_uint now_ps)
{
	if (__builtin_expect(flow >= as->n_flows, 0))
		return -ERANGE;
	switch (as->mode) {
	case PCM_ASYNC_LOCKED:
		return feed_one(as, flow, ev, now_ps, PCM_ASYNC_LOCKED);
	case PCM_ASYNC_BOUNDED:
		return feed_one(as, flow, ev, now_ps, PCM_ASYNC_BOUNDED);
	default:
		return feed_one(as, flow, ev, now_ps, PCM_ASYNC_RELAXED);
	}
}

/*
 * How far ahead in a burst to prefetch records for writing: far enough that
 * a line a worker holds has arrived by the time its event is fed.
 */
#define PREFETCH_AHEAD 32

/* The burst loop, compiled once per mode. */
static ALWAYS_INLINE uint32_t feed_burst(struct pcm_async *as, const struct pcm_flow_event *evs,
					 uint32_t n, const enum pcm_async_mode mode)
{
	uint32_t i;

	for (i = 0; i < n && i < PREFETCH_AHEAD; i++)
		if (evs[i].flow < as->n_flows)
			prefetch_w((const void *)flow_rec(as, evs[i].flow));
	for (i = 0; i < n; i++) {
		const uint32_t flow = evs[i].flow;

		if (__builtin_expect(flow >= as->n_flows, 0))
			break;
		if (i + PREFETCH_AHEAD < n && evs[i + PREFETCH_AHEAD].flow < as->n_flows)
			prefetch_w((const void *)flow_rec(as, evs[i + PREFETCH_AHEAD].flow));
		feed_one(as, flow, &evs[i].ev, evs[i].now_ps, mode);
	}
	return i;
}

uint32_t pcm_async_feed_burst(struct pcm_async *as, const struct pcm_flow_event *evs, uint32_t n)
{
	switch (as->mode) {
	case PCM_ASYNC_LOCKED:
		return feed_burst(as, evs, n, PCM_ASYNC_LOCKED);
	case PCM_ASYNC_BOUNDED:
		return feed_burst(as, evs, n, PCM_ASYNC_BOUNDED);
	default:
		return feed_burst(as, evs, n, PCM_ASYNC_RELAXED);
	}
}

int pcm_async_tick(struct pcm_async *as, uint32_t flow, pcm_uint now_ps)
{
	static const struct pcm_event empty;

	return pcm_async_feed(as, flow, &empty, now_ps);
}

int pcm_async_control(const struct pcm_async *as, uint32_t flow, pcm_control_t type,
		      pcm_uint *value)
{
	if (flow >= as->n_flows)
		return -ERANGE;
	if ((unsigned)type >= PCM_CTRL_COUNT || as->ctrl_of_type[type] < 0)
		return -ENOENT;
	*value = atomic_load_explicit(&flow_rec(as, flow)[as->ctrl_slot + as->ctrl_of_type[type]],
				      memory_order_relaxed);
	return 0;
}

/* ---- worker side: snapshots ------------------------------------------------------------- */

static inline pcm_uint worker_now(const struct pcm_async *as, _Atomic pcm_uint *rec)
{
	if (as->cfg.clock_ps)
		return as->cfg.clock_ps(as->cfg.clock_arg);
	return ld_acq(&rec[as->now_slot]);
}

/*
 * RELAXED and BOUNDED: take the signals one by one. Consumed signals are
 * exchanged for their initial value, so what the snapshot holds is exactly
 * what leaves the record; samples that land later stay for the next call.
 */
static void take_atomic(const struct pcm_async *as, _Atomic pcm_uint *rec, pcm_uint now,
			pcm_uint *pre)
{
	for (uint32_t k = 0; k < as->n_consumed; k++) {
		const unsigned i = as->consumed[k];
		const pcm_uint initial = as->sig[i].initial;
		_Atomic pcm_uint *p = &rec[REC_SIG + i];

		pre[i] = ld_acq(p);
		if (pre[i] != initial)
			pre[i] = atomic_exchange_explicit(p, initial, memory_order_acquire);
	}
	for (uint32_t k = 0; k < as->n_kept; k++)
		pre[as->kept[k]] = ld_acq(&rec[REC_SIG + as->kept[k]]);
	for (uint32_t k = 0; k < as->n_elapsed; k++) {
		const unsigned i = as->elapsed[k];

		pre[i] = since(now, ld(&rec[as->sig[i].epoch]));
	}
}

static void atomic_min_u64(_Atomic pcm_uint *p, pcm_uint v)
{
	pcm_uint cur = ld(p);

	while (v < cur && !cas(p, &cur, v))
		;
}

static void atomic_max_u64(_Atomic pcm_uint *p, pcm_uint v)
{
	pcm_uint cur = ld(p);

	while (v > cur && !cas(p, &cur, v))
		;
}

static void atomic_add_sat(_Atomic pcm_uint *p, pcm_uint v)
{
	pcm_uint cur = ld(p);

	while (!cas(p, &cur, sat_add(cur, v)))
		;
}

/* Undo take_atomic() for a snapshot that is not used: fold what was taken back in. */
static void put_back(const struct pcm_async *as, _Atomic pcm_uint *rec, const pcm_uint *pre)
{
	for (uint32_t k = 0; k < as->n_consumed; k++) {
		const unsigned i = as->consumed[k];
		const struct async_sig *s = &as->sig[i];
		_Atomic pcm_uint *p = &rec[REC_SIG + i];
		pcm_uint expect = s->initial;

		if (pre[i] == s->initial)
			continue;
		switch (s->accum) {
		case PCM_SIG_ACCUM_SUM:
			if (pre[i] >= s->initial)
				atomic_add_sat(p, pre[i] - s->initial);
			else
				atomic_fetch_add_explicit(p, pre[i] - s->initial,
							  memory_order_relaxed);
			break;
		case PCM_SIG_ACCUM_MIN:
			atomic_min_u64(p, pre[i]);
			break;
		case PCM_SIG_ACCUM_MAX:
			atomic_max_u64(p, pre[i]);
			break;
		default:
			/* a newer sample wins over the one taken */
			atomic_compare_exchange_strong_explicit(
				p, &expect, pre[i], memory_order_relaxed, memory_order_relaxed);
		}
	}
}

/* Triggers on a snapshot; moves fired DELTA/MAGNITUDE references to the snapshot's value. */
static pcm_uint fire_snapshot(const struct pcm_async *as, _Atomic pcm_uint *rec,
			      const pcm_uint *pre)
{
	pcm_uint fired = 0;

	for (uint32_t k = 0; k < as->n_trig; k++) {
		const struct async_trig *t = &as->trig[k];

		fired |= (pcm_uint)trigger_holds(t, trigger_operand(t, rec, pre[t->sig])) << t->sig;
	}
	for (uint32_t k = 0; (fired & as->ref_mask) && k < as->n_trig; k++) {
		const struct async_trig *t = &as->trig[k];

		if (t->ref >= 0 && (fired & ((pcm_uint)1 << t->sig)))
			st(&rec[t->ref], pre[t->sig]);
	}
	return fired;
}

static inline unsigned skew_bucket(uint64_t skew)
{
	unsigned lg;

	if (skew < 16)
		return (unsigned)skew;
	lg = 63u - (unsigned)__builtin_clzll(skew);
	return MIN(16 + lg - 4, PCM_ASYNC_SKEW_BUCKETS - 1);
}

uint64_t pcm_async_skew_bucket_floor(unsigned b)
{
	if (b < 16)
		return b;
	if (b >= PCM_ASYNC_SKEW_BUCKETS)
		return UINT64_MAX;
	return (uint64_t)1 << (b - 12);
}

static void requeue(struct pcm_async *as, _Atomic pcm_uint *rec, uint32_t flow)
{
	pcm_uint old = atomic_fetch_or_explicit(&rec[REC_STATE], ST_QUEUED, memory_order_release);

	if (!(old & ST_QUEUED))
		push(as, flow);
}

/*
 * BOUNDED: skew = events in progress when the copy started plus events begun
 * during it, i.e. every event whose samples may be partly in the snapshot.
 * Return: the fired mask, 0 if none fired or the flow was requeued.
 */
static pcm_uint snapshot_bounded(struct pcm_async *as, struct async_worker *w,
				 _Atomic pcm_uint *rec, uint32_t flow, pcm_uint *pre, pcm_uint *now)
{
	struct worker_counters *c = &w->cnt;
	pcm_uint fired;

	atomic_fetch_and_explicit(&rec[REC_STATE], ~ST_QUEUED, memory_order_acq_rel);
	for (uint32_t attempt = 0;; attempt++) {
		pcm_uint before = atomic_load_explicit(&rec[REC_STATE], memory_order_acquire);
		pcm_uint after;
		uint64_t skew;

		*now = worker_now(as, rec);
		take_atomic(as, rec, *now, pre);
		after = ld(&rec[REC_STATE]);
		skew = (uint32_t)((after >> 32) - (before >> 32));
		skew += (before >> 2) & ST_INFLIGHT_MASK;
		cnt_add(&c->skew_hist[skew_bucket(skew)], 1);
		if (skew <= as->cfg.skew_bound) {
			if (skew >
				atomic_load_explicit(&c->skew_max_accepted, memory_order_relaxed))
				atomic_store_explicit(&c->skew_max_accepted, skew,
						      memory_order_relaxed);
			break;
		}
		put_back(as, rec, pre);
		cnt_add(&c->retakes, 1);
		if (attempt >= as->cfg.max_retries) {
			cnt_add(&c->deferrals, 1);
			requeue(as, rec, flow);
			return 0;
		}
		cpu_relax();
	}
	fired = fire_snapshot(as, rec, pre);
	if (!fired)
		put_back(as, rec, pre);
	return fired;
}

static pcm_uint snapshot_relaxed(struct pcm_async *as, _Atomic pcm_uint *rec, pcm_uint *pre,
				 pcm_uint *now)
{
	pcm_uint fired;

	atomic_fetch_and_explicit(&rec[REC_STATE], ~ST_QUEUED, memory_order_acq_rel);
	*now = worker_now(as, rec);
	take_atomic(as, rec, *now, pre);
	fired = fire_snapshot(as, rec, pre);
	if (!fired)
		put_back(as, rec, pre);
	return fired;
}

/* LOCKED: copy, evaluate and consume under the flow's lock; the dirty mask restarts. */
static pcm_uint snapshot_locked(struct pcm_async *as, _Atomic pcm_uint *rec, pcm_uint *pre,
				pcm_uint *now)
{
	pcm_uint fired;

	lock_flow(&rec[REC_STATE]);
	*now = worker_now(as, rec);
	if (as->dirty_slot)
		st(&rec[as->dirty_slot], 0);
	for (uint32_t i = 0; i < as->n_sig; i++) {
		const struct async_sig *s = &as->sig[i];

		pre[i] = s->elapsed ? since(*now, ld(&rec[s->epoch])) : ld(&rec[REC_SIG + i]);
	}
	fired = fire_snapshot(as, rec, pre);
	for (uint32_t k = 0; fired && k < as->n_consumed; k++)
		st(&rec[REC_SIG + as->consumed[k]], as->sig[as->consumed[k]].initial);
	/* no longer QUEUED, and the touched mask starts over */
	unlock_flow(&rec[REC_STATE], 0);
	return fired;
}

/* ---- worker side: commit ---------------------------------------------------------------- */

/*
 * A handler wrote @post to a LAST/MIN/MAX or SUM signal whose record value
 * was @base right after the snapshot. SUM adds post - base on top of what
 * arrived since; the others take @post unless the datapath changed the
 * value since, in which case the newer sample wins (LAST) or is folded with
 * @post (MIN, MAX).
 */
static void write_atomic(_Atomic pcm_uint *p, unsigned accum, pcm_uint base, pcm_uint post)
{
	pcm_uint cur = base;

	if (accum == PCM_SIG_ACCUM_SUM) {
		atomic_fetch_add_explicit(p, post - base, memory_order_relaxed);
		return;
	}
	if (atomic_compare_exchange_strong_explicit(p, &cur, post, memory_order_relaxed,
							memory_order_relaxed))
		return;
	if (accum == PCM_SIG_ACCUM_MIN)
		atomic_min_u64(p, post);
	else if (accum == PCM_SIG_ACCUM_MAX)
		atomic_max_u64(p, post);
}

static void write_locked(_Atomic pcm_uint *p, unsigned accum, pcm_uint base, pcm_uint post,
			 bool changed)
{
	pcm_uint cur = ld(p);

	switch (accum) {
	case PCM_SIG_ACCUM_SUM:
		st(p, cur + (post - base));
		return;
	case PCM_SIG_ACCUM_MIN:
		st(p, changed ? MIN(cur, post) : post);
		return;
	case PCM_SIG_ACCUM_MAX:
		st(p, changed ? MAX(cur, post) : post);
		return;
	default:
		if (!changed)
			st(p, post);
	}
}

/*
 * Apply the handler's signal writes and the resets. Consumed signals were
 * already reset when the snapshot was taken; what remains is the handler's
 * writes, PCM_SIG_REARM on signals that are not consumed, and the trigger
 * references and ELAPSED_TIME epochs of everything reset.
 */
static void commit_signals(struct pcm_async *as, _Atomic pcm_uint *rec, const pcm_uint *handler,
			   const pcm_uint *pre, pcm_uint now)
{
	const pcm_uint *snap = handler + SNAP_SIG;
	const pcm_uint written = handler[PCM_REC_SET_MASK_SLOT];
	/* without handler writes only references and epochs move: no lock needed */
	const bool locked = as->mode == PCM_ASYNC_LOCKED && written;
	pcm_uint old = 0, dirty = 0;

	if (locked) {
		old = lock_flow(&rec[REC_STATE]);
		dirty = as->dirty_slot ? ld(&rec[as->dirty_slot]) : old >> ST_DIRTY_SHIFT;
	}
	/* signals the handler wrote, and consumed ones with a reference or epoch to reset */
	for (pcm_uint todo = written | as->reset_aux; todo; todo &= todo - 1) {
		const unsigned i = (unsigned)__builtin_ctzll(todo);
		const struct async_sig *s = &as->sig[i];
		_Atomic pcm_uint *p = &rec[REC_SIG + i];
		const bool wrote = (written >> i) & 1;
		const bool changed = (dirty >> i) & 1;
		const bool rearm = wrote && snap[i] == PCM_SIG_REARM;
		const bool reset = rearm || (!wrote && s->reset);

		if (wrote && !rearm && !s->elapsed) {
			pcm_uint base = s->reset ? s->initial : pre[i];

			if (locked)
				write_locked(p, s->accum, base, snap[i], changed);
			else
				write_atomic(p, s->accum, base, snap[i]);
		} else if (rearm && !s->reset && !s->elapsed) {
			/* re-arm a kept signal: drop what the snapshot held */
			if (s->accum == PCM_SIG_ACCUM_SUM) {
				if (locked)
					st(p, ld(p) + (s->initial - pre[i]));
				else
					atomic_fetch_add_explicit(p, s->initial - pre[i],
								  memory_order_relaxed);
			} else if (locked) {
				if (!changed)
					st(p, s->initial);
			} else {
				write_atomic(p, PCM_SIG_ACCUM_LAST, pre[i], s->initial);
			}
		}
		if (reset) {
			if (s->ref >= 0)
				st(&rec[s->ref], s->initial);
			if (s->epoch >= 0)
				st(&rec[s->epoch], now);
		}
	}
	if (locked)
		unlock_flow(&rec[REC_STATE], old);
}

/* A few slots: a loop the compiler inlines beats a call to memcpy(). */
static inline void copy_slots(pcm_uint *restrict dst, const pcm_uint *restrict src, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		dst[i] = src[i];
}

static pcm_uint take_snapshot(struct pcm_async *as, struct async_worker *w, uint32_t flow,
			      pcm_uint *pre, pcm_uint *now)
{
	_Atomic pcm_uint *rec = flow_rec(as, flow);

	switch (as->mode) {
	case PCM_ASYNC_LOCKED:
		return snapshot_locked(as, rec, pre, now);
	case PCM_ASYNC_BOUNDED:
		return snapshot_bounded(as, w, rec, flow, pre, now);
	default:
		return snapshot_relaxed(as, rec, pre, now);
	}
}

/*
 * One round: dequeue a batch, take all its snapshots, run all its handlers,
 * commit them all. The handlers of a batch touch no shared memory and do not
 * depend on each other, so the core overlaps them; the locked instructions
 * of the snapshots and commits stay out of their way.
 */
static uint32_t worker_round(struct pcm_async *as, struct async_worker *w, uint32_t budget)
{
	const uint32_t hs = as->pkg->handler_slots, ctrl_off = SNAP_SIG + as->n_sig;
	pcm_uint fired[MAX_BATCH], now[MAX_BATCH];
	uint32_t ids[MAX_BATCH], calls = 0, errors = 0;
	uint32_t n = pop_batch(w, ids, MIN(budget, as->cfg.batch));

	for (uint32_t k = 0; k < n; k++) {
		const char *r = (const char *)flow_rec(as, ids[k]);

		for (uint32_t off = 0; off < as->stride * sizeof(pcm_uint); off += CACHELINE)
			prefetch_w(r + off);
		__builtin_prefetch(flow_priv(as, ids[k]), 1, 3);
	}
	for (uint32_t k = 0; k < n; k++)
		fired[k] = take_snapshot(as, w, ids[k], w->pre + (size_t)k * as->n_sig, &now[k]);
	for (uint32_t k = 0; k < n; k++) {
		pcm_uint *snap = w->scratch + (size_t)k * hs;

		if (!fired[k])
			continue;
		snap[PCM_REC_MASK_SLOT] = fired[k];
		snap[PCM_REC_SET_MASK_SLOT] = 0;
		copy_slots(snap + SNAP_SIG, w->pre + (size_t)k * as->n_sig, as->n_sig);
		copy_slots(snap + ctrl_off, flow_priv(as, ids[k]), as->priv_slots);
		errors += as->pkg->ops.handler(snap) != PCM_SUCCESS;
		calls++;
	}
	for (uint32_t k = 0; k < n; k++) {
		const pcm_uint *snap = w->scratch + (size_t)k * hs;
		_Atomic pcm_uint *rec = flow_rec(as, ids[k]);
		pcm_uint *priv = flow_priv(as, ids[k]);

		if (!fired[k])
			continue;
		commit_signals(as, rec, snap, w->pre + (size_t)k * as->n_sig, now[k]);
		for (uint32_t c = 0; c < as->n_ctrl; c++)
			if (snap[ctrl_off + c] != priv[c])
				atomic_store_explicit(&rec[as->ctrl_slot + c], snap[ctrl_off + c],
						      memory_order_relaxed);
		copy_slots(priv, snap + ctrl_off, as->priv_slots);
	}
	if (n) {
		cnt_add(&w->cnt.wakeups, n);
		cnt_add(&w->cnt.no_trigger, n - calls);
		cnt_add(&w->cnt.handler_calls, calls);
		cnt_add(&w->cnt.handler_errors, errors);
	}
	return n;
}

static void *worker_main(void *arg)
{
	struct async_worker *w = arg;
	struct pcm_async *as = w->as;
	uint32_t idle = 0;

	for (;;) {
		if (worker_round(as, w, MAX_BATCH)) {
			idle = 0;
			continue;
		}
		cnt_add(&w->cnt.idle_polls, 1);
		if (atomic_load_explicit(&as->stop, memory_order_seq_cst))
			break;
		if (++idle < as->cfg.idle_spins) {
			cpu_relax();
			continue;
		}
		idle = 0;
		atomic_store_explicit(&w->sleeping, 1, memory_order_seq_cst);
		if (queue_nonempty(w) || atomic_load_explicit(&as->stop, memory_order_seq_cst)) {
			atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
			continue;
		}
		cnt_add(&w->cnt.sleeps, 1);
		futex_wait(&w->sleeping, 1, SLEEP_TIMEOUT_NS);
		atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
	}
	while (worker_round(as, w, MAX_BATCH))
		;
	return NULL;
}

/* ---- setup ------------------------------------------------------------------------------ */

void pcm_async_config_default(struct pcm_async_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = PCM_ASYNC_RELAXED;
	cfg->n_workers = 1;
	cfg->skew_bound = 0;
	cfg->max_retries = 16;
	cfg->batch = 16;
	cfg->idle_spins = 20000;
}

const char *pcm_async_mode_name(enum pcm_async_mode mode)
{
	return (unsigned)mode < PCM_ASYNC_MODE_COUNT ? mode_names[mode] : NULL;
}

int pcm_async_mode_parse(const char *name, enum pcm_async_mode *out)
{
	for (int m = 0; m < PCM_ASYNC_MODE_COUNT; m++) {
		if (strcmp(name, mode_names[m]) == 0) {
			*out = (enum pcm_async_mode)m;
			return 0;
		}
	}
	return -EINVAL;
}

static int check_config(const struct pcm_async_config *cfg, uint32_t n_flows, struct pcm_diag *diag)
{
	if ((unsigned)cfg->mode >= PCM_ASYNC_MODE_COUNT) {
		snprintf(diag->msg, sizeof(diag->msg), "unknown async mode %d", (int)cfg->mode);
		return -EINVAL;
	}
	if (cfg->n_workers == 0 || cfg->n_workers > PCM_ASYNC_MAX_WORKERS) {
		snprintf(diag->msg, sizeof(diag->msg), "worker count %u is outside 1..%u",
			 cfg->n_workers, PCM_ASYNC_MAX_WORKERS);
		return -EINVAL;
	}
	if (n_flows == 0 || n_flows > PCM_ASYNC_MAX_FLOWS) {
		snprintf(diag->msg, sizeof(diag->msg), "flow count %u is outside 1..%u", n_flows,
			 PCM_ASYNC_MAX_FLOWS);
		return -EINVAL;
	}
	if (cfg->batch == 0 || cfg->batch > MAX_BATCH) {
		snprintf(diag->msg, sizeof(diag->msg), "batch %u is outside 1..%u", cfg->batch,
			 MAX_BATCH);
		return -EINVAL;
	}
	for (uint32_t i = 0; cfg->worker_cpus && i < cfg->n_workers; i++) {
		if (cfg->worker_cpus[i] >= CPU_SETSIZE || cfg->worker_cpus[i] < -1) {
			snprintf(diag->msg, sizeof(diag->msg),
				 "worker %u: CPU %d is not a CPU number", i, cfg->worker_cpus[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_package(const struct pcm_package *pkg, const struct pcm_target *target,
			 struct pcm_diag *diag)
{
	const char *why;

	if (pcm_package_validate(pkg, &why) < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "package '%s': %s",
			 pkg && pkg->name ? pkg->name : "?", why);
		return -EINVAL;
	}
	if (pkg->n_signals > 64 || pkg->n_signals + pkg->n_controls + 8 > INT16_MAX) {
		snprintf(diag->msg, sizeof(diag->msg), "package '%s': too many signals or controls",
			 pkg->name);
		return -EINVAL;
	}
	if (target)
		return pcm_target_check_package(target, pkg, diag);
	return 0;
}

/* Lay the shared record out and build the per-signal tables the hot paths walk. */
static void build_tables(struct pcm_async *as)
{
	const struct pcm_package *pkg = as->pkg;
	uint32_t next, n_by_type = 0;

	as->n_sig = pkg->n_signals;
	as->n_ctrl = pkg->n_controls;
	as->priv_slots = pkg->n_controls + pkg->n_var_slots;
	as->now_slot = REC_SIG + as->n_sig;
	as->ctrl_slot = as->now_slot + 1;
	next = as->ctrl_slot + as->n_ctrl;
	for (uint32_t i = 0; i < as->n_sig; i++) {
		const struct pcm_pkg_signal *ps = &pkg->signals[i];
		struct async_sig *s = &as->sig[i];

		s->accum = ps->accum;
		s->trigger = ps->trigger;
		s->reset = ps->reset_upon_trigger;
		s->elapsed = ps->type == PCM_SIG_ELAPSED_TIME;
		s->initial = ps->initial;
		s->ref = -1;
		s->epoch = -1;
		if (s->trigger == PCM_SIG_TRIGGER_DELTA || s->trigger == PCM_SIG_TRIGGER_MAGNITUDE)
			s->ref = (int16_t)next++;
		if (s->elapsed) {
			s->epoch = (int16_t)next++;
			as->has_elapsed = true;
		}
		if (s->trigger < PCM_SIG_TRIGGER_NONE) {
			struct async_trig *t = &as->trig[as->n_trig++];

			t->sig = (uint8_t)i;
			t->kind = s->trigger;
			t->elapsed = s->elapsed;
			t->ref = s->ref;
			t->epoch = s->epoch;
			normalise_trigger(t, ps->op, ps->threshold);
			if (s->ref >= 0)
				as->ref_mask |= (pcm_uint)1 << i;
		}
		if (s->elapsed)
			as->elapsed[as->n_elapsed++] = (uint8_t)i;
		else if (s->reset)
			as->consumed[as->n_consumed++] = (uint8_t)i;
		else
			as->kept[as->n_kept++] = (uint8_t)i;
		if (s->reset && (s->ref >= 0 || s->epoch >= 0))
			as->reset_aux |= (pcm_uint)1 << i;
	}
	if (as->mode == PCM_ASYNC_LOCKED && as->n_sig > ST_DIRTY_MAX_SIGNALS)
		as->dirty_slot = next++;
	as->stride = (uint32_t)((next + SLOTS_PER_LINE - 1) / SLOTS_PER_LINE * SLOTS_PER_LINE);
	for (unsigned t = 0; t < PCM_SIG_COUNT; t++) {
		as->by_type_start[t] = (uint8_t)n_by_type;
		for (uint32_t i = 0; i < as->n_sig; i++) {
			if (pkg->signals[i].type != t || as->sig[i].elapsed)
				continue;
			as->by_type[n_by_type++] = (uint8_t)i;
			as->dp_types |= (pcm_uint)1 << t;
		}
	}
	as->by_type_start[PCM_SIG_COUNT] = (uint8_t)n_by_type;
	for (int t = 0; t < PCM_CTRL_COUNT; t++) {
		int slot = pkg->control_slot[t];

		as->ctrl_of_type[t] = (int8_t)(slot < 0 ? -1 : slot - (int)(SNAP_SIG + as->n_sig));
	}
}

static void *map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Every flow starts as the sync shell's init would leave it. */
static int init_records(struct pcm_async *as, pcm_uint now_ps)
{
	const struct pcm_package *pkg = as->pkg;
	pcm_uint *tmpl = calloc(pkg->record_slots, sizeof(pcm_uint));

	if (!tmpl)
		return -ENOMEM;
	pkg->ops.init(tmpl, now_ps);
	for (uint32_t f = 0; f < as->n_flows; f++) {
		_Atomic pcm_uint *rec = flow_rec(as, f);

		for (uint32_t i = 0; i < as->n_sig; i++) {
			const struct async_sig *s = &as->sig[i];

			st(&rec[REC_SIG + i], tmpl[SNAP_SIG + i]);
			if (s->ref >= 0)
				st(&rec[s->ref], s->initial);
			if (s->epoch >= 0)
				st(&rec[s->epoch], now_ps);
		}
		st(&rec[as->now_slot], now_ps);
		for (uint32_t c = 0; c < as->n_ctrl; c++)
			st(&rec[as->ctrl_slot + c], tmpl[SNAP_SIG + as->n_sig + c]);
		memcpy(flow_priv(as, f), tmpl + SNAP_SIG + as->n_sig,
		       as->priv_slots * sizeof(pcm_uint));
	}
	free(tmpl);
	return 0;
}

static int create_workers(struct pcm_async *as)
{
	uint32_t per_worker = (as->n_flows + as->n_workers - 1) / as->n_workers;
	uint32_t cap = 2, shift = 1;

	while (cap < 2 * per_worker) {
		cap <<= 1;
		shift++;
	}
	as->workers = aligned_alloc(CACHELINE, sizeof(*as->workers) * as->n_workers);
	if (!as->workers)
		return -ENOMEM;
	memset(as->workers, 0, sizeof(*as->workers) * as->n_workers);
	for (uint32_t i = 0; i < as->n_workers; i++) {
		struct async_worker *w = &as->workers[i];

		w->as = as;
		w->id = i;
		w->mask = cap - 1;
		w->lap_shift = shift;
		w->slots = calloc(cap, sizeof(*w->slots));
		w->scratch = calloc((size_t)as->cfg.batch * as->pkg->handler_slots,
				    sizeof(pcm_uint));
		w->pre = calloc((size_t)as->cfg.batch * (as->n_sig ? as->n_sig : 1),
				sizeof(pcm_uint));
		if (!w->slots || !w->scratch || !w->pre)
			return -ENOMEM;
	}
	return 0;
}

static void free_workers(struct pcm_async *as)
{
	if (!as->workers)
		return;
	for (uint32_t i = 0; i < as->n_workers; i++) {
		free((void *)as->workers[i].slots);
		free(as->workers[i].scratch);
		free(as->workers[i].pre);
	}
	free(as->workers);
}

int pcm_async_create(const struct pcm_package *pkg, const struct pcm_target *target,
		     uint32_t n_flows, pcm_uint now_ps, const struct pcm_async_config *cfg,
		     struct pcm_async **out, struct pcm_diag *diag)
{
	struct pcm_async *as;
	int rc;

	diag->msg[0] = '\0';
	if (!cfg || !out) {
		snprintf(diag->msg, sizeof(diag->msg), "no configuration or result pointer");
		return -EINVAL;
	}
	rc = check_config(cfg, n_flows, diag);
	if (rc < 0)
		return rc;
	rc = check_package(pkg, target, diag);
	if (rc < 0)
		return rc;
	as = calloc(1, sizeof(*as));
	if (!as)
		return -ENOMEM;
	as->pkg = pkg;
	as->cfg = *cfg;
	as->cfg.worker_cpus = NULL;
	as->mode = cfg->mode;
	as->n_flows = n_flows;
	as->n_workers = cfg->n_workers;
	build_tables(as);
	rc = -ENOMEM;
	if (cfg->worker_cpus) {
		int *cpus = malloc(sizeof(int) * cfg->n_workers);

		if (!cpus)
			goto err_free;
		memcpy(cpus, cfg->worker_cpus, sizeof(int) * cfg->n_workers);
		as->cfg.worker_cpus = cpus;
	}
	as->shared_bytes = (size_t)n_flows * as->stride * sizeof(pcm_uint);
	as->shared = map_zeroed(as->shared_bytes);
	if (!as->shared)
		goto err_free;
	as->priv_bytes = (size_t)n_flows * (as->priv_slots ? as->priv_slots : 1) * sizeof(pcm_uint);
	as->priv = map_zeroed(as->priv_bytes);
	if (!as->priv)
		goto err_unmap_shared;
	rc = create_workers(as);
	if (rc < 0)
		goto err_free_workers;
	rc = init_records(as, now_ps);
	if (rc < 0)
		goto err_free_workers;
	*out = as;
	return 0;

err_free_workers:
	free_workers(as);
	munmap(as->priv, as->priv_bytes);
err_unmap_shared:
	munmap((void *)as->shared, as->shared_bytes);
err_free:
	free((void *)as->cfg.worker_cpus);
	free(as);
	snprintf(diag->msg, sizeof(diag->msg), "out of memory for %u flows", n_flows);
	return rc;
}

static int start_one(struct async_worker *w, int cpu)
{
	pthread_attr_t attr;
	int rc = pthread_attr_init(&attr);

	if (rc)
		return -rc;
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		rc = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		if (rc) {
			pthread_attr_destroy(&attr);
			return -rc;
		}
	}
	rc = pthread_create(&w->thread, &attr, worker_main, w);
	pthread_attr_destroy(&attr);
	if (rc)
		return rc == EINVAL && cpu >= 0 ? -EINVAL : -rc;
	w->thread_live = true;
	return 0;
}

int pcm_async_start(struct pcm_async *as)
{
	int rc = 0;

	if (as->running)
		return -EALREADY;
	atomic_store_explicit(&as->stop, false, memory_order_seq_cst);
	for (uint32_t i = 0; i < as->n_workers && rc == 0; i++)
		rc = start_one(&as->workers[i], as->cfg.worker_cpus ? as->cfg.worker_cpus[i] : -1);
	as->running = true;
	if (rc < 0)
		pcm_async_stop(as);
	return rc;
}

void pcm_async_stop(struct pcm_async *as)
{
	if (!as->running)
		return;
	atomic_store_explicit(&as->stop, true, memory_order_seq_cst);
	for (uint32_t i = 0; i < as->n_workers; i++) {
		struct async_worker *w = &as->workers[i];

		if (!w->thread_live)
			continue;
		wake_if_sleeping(w);
		pthread_join(w->thread, NULL);
		w->thread_live = false;
	}
	as->running = false;
}

void pcm_async_destroy(struct pcm_async *as)
{
	if (!as)
		return;
	pcm_async_stop(as);
	free_workers(as);
	munmap(as->priv, as->priv_bytes);
	munmap((void *)as->shared, as->shared_bytes);
	free((void *)as->cfg.worker_cpus);
	free(as);
}

int pcm_async_poll(struct pcm_async *as, uint32_t worker, uint32_t budget)
{
	uint32_t done = 0, n;

	if (worker >= as->n_workers)
		return -EINVAL;
	if (as->running)
		return -EBUSY;
	while (done < budget) {
		n = worker_round(as, &as->workers[worker], budget - done);
		if (!n)
			break;
		done += n;
	}
	return (int)MIN(done, (uint32_t)INT_MAX);
}

int pcm_async_flow_peek(const struct pcm_async *as, uint32_t flow, pcm_uint *out)
{
	_Atomic pcm_uint *rec;

	if (flow >= as->n_flows)
		return -ERANGE;
	if (as->running)
		return -EBUSY;
	rec = flow_rec(as, flow);
	out[0] = 0;
	out[1] = 0;
	for (uint32_t i = 0; i < as->n_sig; i++)
		out[SNAP_SIG + i] = as->sig[i].elapsed
					? since(ld(&rec[as->now_slot]), ld(&rec[as->sig[i].epoch]))
					: ld(&rec[REC_SIG + i]);
	memcpy(out + SNAP_SIG + as->n_sig, flow_priv(as, flow), as->priv_slots * sizeof(pcm_uint));
	return 0;
}

int pcm_async_stats(const struct pcm_async *as, uint32_t worker, struct pcm_async_stats *out)
{
	uint32_t first = worker, last = worker + 1;

	if (worker == UINT32_MAX) {
		first = 0;
		last = as->n_workers;
	} else if (worker >= as->n_workers) {
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	for (uint32_t i = first; i < last; i++) {
		struct async_worker *w = &as->workers[i];
		struct worker_counters *c = &w->cnt;
		uint64_t m;

		out->enqueues += atomic_load_explicit(&w->tail, memory_order_relaxed);
		out->wakeups += atomic_load_explicit(&c->wakeups, memory_order_relaxed);
		out->handler_calls += atomic_load_explicit(&c->handler_calls, memory_order_relaxed);
		out->handler_errors +=
			atomic_load_explicit(&c->handler_errors, memory_order_relaxed);
		out->no_trigger += atomic_load_explicit(&c->no_trigger, memory_order_relaxed);
		out->retakes += atomic_load_explicit(&c->retakes, memory_order_relaxed);
		out->deferrals += atomic_load_explicit(&c->deferrals, memory_order_relaxed);
		out->idle_polls += atomic_load_explicit(&c->idle_polls, memory_order_relaxed);
		out->sleeps += atomic_load_explicit(&c->sleeps, memory_order_relaxed);
		m = atomic_load_explicit(&c->skew_max_accepted, memory_order_relaxed);
		out->skew_max_accepted = MAX(out->skew_max_accepted, m);
		for (unsigned b = 0; b < PCM_ASYNC_SKEW_BUCKETS; b++)
			out->skew_hist[b] +=
				atomic_load_explicit(&c->skew_hist[b], memory_order_relaxed);
	}
	return 0;
}

size_t pcm_async_bytes_per_flow(const struct pcm_async *as)
{
	return ((size_t)as->stride + as->priv_slots) * sizeof(pcm_uint);
}

uint32_t pcm_async_n_flows(const struct pcm_async *as)
{
	return as->n_flows;
}

uint32_t pcm_async_n_workers(const struct pcm_async *as)
{
	return as->n_workers;
}

enum pcm_async_mode pcm_async_get_mode(const struct pcm_async *as)
{
	return as->mode;
}

const struct pcm_package *pcm_async_package(const struct pcm_async *as)
{
	return as->pkg;
}
