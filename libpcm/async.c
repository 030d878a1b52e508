// SPDX-License-Identifier: MIT
/*
 * async.c - the asynchronous shell: datapath threads accumulate into
 * per-flow windows, control-plane workers fold them into the flow records
 * and run the handlers (async.h, pcm-handler(7)).
 *
 * A flow's shared slot (flowtab.h), laid out the same for every package of
 * the shell:
 *   header      struct flow_hdr: the ticket lock and the window epoch in one
 *               word, the window tags, the package, the owner's requests, `now`
 *   published   what the datapath needs to evaluate triggers (package.h),
 *               written by the worker, right after the header (lay_out())
 *   windows     two of them, each from a cache line of its own: the
 *               package's window slots and, last, the mask of LAST slots
 *               sampled (package.h)
 *   controls    struct flow_ctrl: the published control set under a
 *               sequence count, on its own cache line
 * The worker's private area holds the flow's record (the synchronous
 * shell's layout; the handler runs on it in place) and what it read of a
 * window whose last event was still being written.
 *
 * The handoff. A datapath event takes a ticket, which in the same atomic
 * add returns the window epoch e: it accumulates into window e & 1. The
 * worker takes window e by advancing the epoch with one compare-and-swap on
 * that same word, which also returns how many tickets were taken before it:
 * exactly those events write window e. They are done once the lock's owner
 * count reaches that number. Nothing but these two atomic words is shared
 * between the two sides in both directions, so:
 * - no event is lost: each event's samples are in the window it got with
 *   its ticket, and the worker reads that window only once every event of
 *   it is done (LOCKED; BOUNDED above its bound), or reads what is there
 *   and folds the rest in later (RELAXED; BOUNDED within its bound), with
 *   window_merge_late(): a SUM by its difference, others when they changed;
 *   events in flight past max_retries checks (their thread preempted) make
 *   the worker leave the flow and come back to it;
 * - no trigger is missed: a flow stays in its worker's pending set while
 *   events keep coming, however they evaluate their triggers, and the
 *   worker visits it again after each call. It takes the flow out only on
 *   a visit that finds no ticket taken since it last switched windows, and
 *   then re-reads the ticket count with a read-modify-write of the same
 *   word (quiet()): either it sees an event that started meanwhile, and
 *   puts the flow back, or that event synchronises with the
 *   read-modify-write, so evaluates its triggers on what the worker
 *   published and finds the flow out of the set.
 * The pending set's lines are written only when flows join or leave it, so
 * a busy flow costs the datapath no write there at all.
 * Each visit moves the flow's lines to the worker's core, and its next event
 * pays to bring them back; so a worker thread passes over a flow whose
 * visits take fewer than COALESCE_EVENTS events for up to 2^MAX_BACKOFF
 * sweeps of its pending set (back_off()), reading only its private area.
 * The worker never writes the windows and the datapath never writes what
 * the worker publishes, so no value is ever compared-and-swapped. The
 * worker takes the ticket lock only to swap, reset or free a flow, which
 * its owner waits for anyway: no event ever waits for a worker.
 *
 * In a deterministic-interleaving test build (PCM_ASYNC_DST) every shared
 * access first yields to the test's scheduler (dst_hooks.h).
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifdef PCM_HAVE_NUMA
#include <numa.h>
#endif

#include "async.h"
#include "flowtab.h"
#include "pendset.h"
#include "pkgset.h"

#ifdef PCM_ASYNC_DST
#include "dst_hooks.h"
#define STEP() pcm_dst_point()
#else
#define STEP() ((void)0)
#endif

#define CACHELINE 64
#define SLOT_BYTES sizeof(pcm_uint)
#define MAX_BATCH 64
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define SLEEP_TIMEOUT_NS 50000000L /* an idle worker re-checks its pending set every 50 ms */
#define SETTLE_SWEEPS 8            /* sweeps a flow stays idle in its set before it leaves */
#define DEFER_SLEEP_NS 20000L      /* one waiting only for unfinished events, every 20 us */
#define COALESCE_EVENTS 4 /* a take with fewer events backs the flow off; twice as many, less */
#define MAX_BACKOFF 6     /* the longest backoff: 2^6 sweeps */
#define NO_PKG 0 /* package ids start at 1: a zeroed slot is not live */
#define TICKET_ONE ((uint64_t)1 << 32)

/* The owner's requests to the flow's worker (flow_hdr.req). */
#define REQ_DEAD 1u  /* free the flow */
#define REQ_PUSHED 8u /* REQ_DEAD: the owner has put the flow in the pending set */
#define REQ_SWAP 2u  /* move it to flow_ctrl.req_pkg */
#define REQ_RESET 4u /* re-initialise it */

/* What a worker has left to do for a flow (flow_priv.state). */
#define PRIV_LATE 1u /* fold in the rest of a window read while an event was written */
#define PRIV_TAKE 2u /* BOUNDED: a window waits for the events still writing it */

struct flow_hdr {
	_Atomic uint64_t tick;   /* tickets taken << 32 | window epoch */
	_Atomic uint32_t owner;  /* the ticket being served */
	_Atomic uint32_t queued; /* epoch + 1 of the window in which the flow was last queued */
	_Atomic uint32_t tag[2]; /* the epoch each window was last cleared for */
	_Atomic uint16_t pkg;    /* id of the package the flow runs; NO_PKG: not live */
	_Atomic uint16_t worker;
	_Atomic uint32_t req;    /* REQ_* */
	_Atomic pcm_uint now;    /* `now` of the latest event or tick */
};

#define HDR_SLOTS (sizeof(struct flow_hdr) / SLOT_BYTES)

struct flow_ctrl {
	_Atomic uint64_t seq;     /* odd while the worker writes the set */
	_Atomic uint32_t pkg;     /* the package the values belong to */
	_Atomic uint32_t req_pkg; /* REQ_SWAP: the package to move to */
	_Atomic pcm_uint req_now; /* REQ_SWAP, REQ_RESET: the time of the request */
	_Atomic pcm_uint value[]; /* the package's controls, in spec order */
};

#define CTRL_HDR_SLOTS (sizeof(struct flow_ctrl) / SLOT_BYTES)

struct flow_priv {
	uint16_t state;       /* PRIV_* */
	uint16_t quiet;       /* visits in a row that found nothing new */
	uint32_t wait_ticket; /* LATE, TAKE: the events concerned are done at this owner count */
	uint32_t epoch;       /* LATE, TAKE: the window concerned */
	uint32_t seen;        /* the tickets taken when the worker last switched windows */
	uint32_t resume_sweep; /* the worker skips the flow until its sweep count reaches this */
	uint32_t news_sweep;   /* the worker's sweep when a visit last found something new */
	uint32_t backoff;      /* log2 of the sweeps skipped after a visit: 0..MAX_BACKOFF */
	pcm_uint read_present;
	pcm_uint words[]; /* what was read of a window (window_slots), then the record */
};

/* Counters written by their worker only; read atomically by pcm_async_stats(). */
struct worker_counters {
	_Atomic uint64_t enqueues;
	_Atomic uint64_t wakeups;
	_Atomic uint64_t handler_calls;
	_Atomic uint64_t handler_errors;
	_Atomic uint64_t no_trigger;
	_Atomic uint64_t retakes;
	_Atomic uint64_t deferrals;
	_Atomic uint64_t partial;
	_Atomic uint64_t settled;
	_Atomic uint64_t idle_polls;
	_Atomic uint64_t sleeps;
	_Atomic uint64_t skew_max_accepted;
	_Atomic uint64_t skew_hist[PCM_ASYNC_SKEW_BUCKETS];
};

/* One flow of a worker's round. */
struct visit {
	uint32_t flow;
	uint32_t next;  /* tickets taken when the window was switched: later ones are new events */
	unsigned char *slot;
	struct flow_priv *priv;
	const struct pcm_package *pkg;
	pcm_uint now;
	int rc;   /* what call() returned */
	bool run; /* a window was taken: call, publish, finish */
};

struct async_worker {
	/* read by every producer, written at setup only */
	alignas(CACHELINE) struct pcm_pendset pend;
	struct pcm_async *as;
	int node;
	/* the worker's own */
	alignas(CACHELINE) uint32_t cursor;
	uint32_t sweep;        /* times the cursor went round the pending set */
	uint32_t nudges_seen;  /* the nudges counted when the worker last looked */
	uint32_t urgent_sweep; /* no flow backs off before this sweep: an owner waits */
	pthread_t thread;
	bool thread_live;
	uint32_t ids[MAX_BATCH];
	struct visit visits[MAX_BATCH];
	uint32_t deferred; /* flows of the current round left for later */
	uint32_t quiet;    /* flows of the current round with nothing to do */
	pcm_uint *scratch; /* a record, for swaps */
	alignas(CACHELINE) _Atomic uint32_t sleeping; /* futex word: 1 while blocked */
	alignas(CACHELINE) _Atomic uint32_t nudges;   /* owners' requests made (nudge()) */
	alignas(CACHELINE) struct worker_counters cnt;
};

struct pcm_async {
	struct pcm_flowtab tab;
	struct pcm_pendset_l0 pend0;
	struct pcm_async_config cfg;
	enum pcm_async_mode mode;
	uint32_t n_workers;
	/* the per-flow layout, in slots: each region as large as any package needs */
	uint32_t win_off;
	uint32_t win_stride; /* window_slots + 1 (the present mask is last), to a whole line */
	uint32_t pub_off;
	uint32_t ctrl_off;
	uint32_t record_slots;
	uint32_t window_slots;
	uint32_t pub_slots;
	uint32_t control_slots;
	struct pcm_pkgset pkgs; /* a flow names its package by its number in the set */
	struct async_worker *workers;
	bool running;
	_Atomic bool stop;
};

static const char *const mode_names[PCM_ASYNC_MODE_COUNT] = { "relaxed", "locked", "bounded" };

/* ---- shared-memory accesses ------------------------------------------------------------ */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Prefetch for writing: the line arrives exclusive, so the atomic operation
 * that follows does not stall on an upgrade.
 */
static inline void prefetch_w(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/*
 * Every access to memory another thread may touch goes through these, so
 * that the deterministic-interleaving build can schedule at each of them.
 * Type-generic, like the C11 atomics they wrap.
 */
#define LD(p) (STEP(), atomic_load_explicit((p), memory_order_relaxed))
#define LD_ACQ(p) (STEP(), atomic_load_explicit((p), memory_order_acquire))
#define ST(p, v) (STEP(), atomic_store_explicit((p), (v), memory_order_relaxed))
#define ST_REL(p, v) (STEP(), atomic_store_explicit((p), (v), memory_order_release))

/* A counter with a single writer: a plain load and store, no locked instruction. */
static inline void cnt_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static inline int32_t ticket_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

/* ---- the flow's slot --------------------------------------------------------------------- */

static inline struct flow_hdr *hdr_of(unsigned char *slot)
{
	return (struct flow_hdr *)slot;
}

static inline _Atomic pcm_uint *window_of(const struct pcm_async *as, unsigned char *slot,
					  uint32_t epoch)
{
	return (_Atomic pcm_uint *)slot + as->win_off + (epoch & 1) * as->win_stride;
}

static inline _Atomic pcm_uint *present_of(const struct pcm_package *pkg, _Atomic pcm_uint *win)
{
	return &win[pkg->window_slots];
}

static inline _Atomic pcm_uint *pub_of(const struct pcm_async *as, unsigned char *slot)
{
	return (_Atomic pcm_uint *)slot + as->pub_off;
}

static inline struct flow_ctrl *ctrl_of(const struct pcm_async *as, unsigned char *slot)
{
	return (struct flow_ctrl *)((_Atomic pcm_uint *)slot + as->ctrl_off);
}

static inline pcm_uint *read_of(struct flow_priv *priv)
{
	return priv->words;
}

static inline pcm_uint *rec_of(const struct pcm_async *as, struct flow_priv *priv)
{
	return priv->words + as->window_slots;
}

static inline struct flow_priv *priv_of(const struct pcm_async *as, uint32_t flow)
{
	return (struct flow_priv *)pcm_flowtab_priv(&as->tab, flow);
}

/* ---- the flow's ticket lock -------------------------------------------------------------- */

/* Take a ticket and wait for it to be served. Return: the tick word as it was. */
static ALWAYS_INLINE uint64_t lock_flow(struct flow_hdr *h)
{
	uint64_t tk;
	uint32_t t;

	STEP();
	tk = atomic_fetch_add_explicit(&h->tick, TICKET_ONE, memory_order_seq_cst);
	t = (uint32_t)(tk >> 32);
	while (LD_ACQ(&h->owner) != t)
		cpu_relax();
	return tk;
}

static ALWAYS_INLINE void unlock_flow(struct flow_hdr *h, uint64_t tk)
{
	ST_REL(&h->owner, (uint32_t)(tk >> 32) + 1);
}

/* Advance the window epoch. Return: the tick word as it was. */
static uint64_t advance_epoch(struct flow_hdr *h)
{
	uint64_t old, next;

	STEP();
	old = atomic_load_explicit(&h->tick, memory_order_relaxed);
	do {
		next = (old & ~(uint64_t)UINT32_MAX) | (uint32_t)(old + 1);
		STEP();
	} while (!atomic_compare_exchange_weak_explicit(&h->tick, &old, next,
							memory_order_seq_cst,
							memory_order_relaxed));
	return old;
}

/* The tickets taken so far, read with a read-modify-write so that it orders like one. */
static uint32_t tickets_taken(struct flow_hdr *h)
{
	STEP();
	return (uint32_t)(atomic_fetch_add_explicit(&h->tick, 0, memory_order_seq_cst) >> 32);
}

/* ---- the pending sets -------------------------------------------------------------------- */

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

#ifndef PCM_ASYNC_DST
static void futex_wake_all(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (void *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#endif

static void wake_if_sleeping(struct async_worker *w)
{
	STEP();
	if (atomic_load_explicit(&w->sleeping, memory_order_seq_cst) &&
	    atomic_exchange_explicit(&w->sleeping, 0, memory_order_seq_cst))
		futex_wake(&w->sleeping);
}

/* Put @flow into worker @wi's pending set; the set's ordering covers the wake-up. */
static void push_to(struct pcm_async *as, uint16_t wi, uint32_t flow)
{
	struct async_worker *w = &as->workers[wi];

	if (pcm_pendset_add(&w->pend, &as->pend0, flow))
		wake_if_sleeping(w);
}

static void push(struct pcm_async *as, unsigned char *slot, uint32_t flow)
{
	push_to(as, LD(&hdr_of(slot)->worker), flow);
}

/*
 * An owner has made a request of a flow of worker @wi: for two sweeps of
 * its pending set the worker lets no flow back off, so that the request is
 * served within a sweep.
 */
static void nudge(struct pcm_async *as, uint16_t wi)
{
	STEP();
	atomic_fetch_add_explicit(&as->workers[wi].nudges, 1, memory_order_release);
}

/* ---- datapath side ----------------------------------------------------------------------- */

static void clear_window(const struct pcm_async *as, const struct pcm_package *pkg,
			 _Atomic pcm_uint *win)
{
	for (uint32_t i = 0; i < pkg->window_slots; i++)
		ST(&win[i], pkg->window_identity[i]);
	ST(present_of(pkg, win), 0);
}

/*
 * One event, under the flow's lock: accumulate into the window the ticket
 * names, evaluate the triggers, and note the flow as queued in this window
 * if one holds. Return: whether to add the flow to its pending set.
 */
static ALWAYS_INLINE int accumulate_locked(struct pcm_async *as, unsigned char *slot,
					   uint32_t epoch, const struct pcm_event *ev,
					   pcm_uint now)
{
	struct flow_hdr *h = hdr_of(slot);
	uint16_t pi = LD(&h->pkg);
	const struct pcm_package *pkg;
	_Atomic pcm_uint *win;
	bool queued;

	if (__builtin_expect(pi == NO_PKG, 0))
		return -ENOENT;
	pkg = as->pkgs.pkg[pi];
	win = window_of(as, slot, epoch);
	if (LD(&h->tag[epoch & 1]) != epoch) {
		clear_window(as, pkg, win);
		ST(&h->tag[epoch & 1], epoch);
	}
	if (pkg->window_slots != pkg->n_signals) /* a timer: the worker needs `now` */
		ST(&h->now, now);
	/* a flow already queued in this window needs no trigger evaluated */
	queued = LD(&h->queued) == epoch + 1;
	if (!pkg->ops.window_feed(win, pub_of(as, slot), ev, now, !queued))
		return 0;
	ST(&h->queued, epoch + 1);
	return 1;
}

static ALWAYS_INLINE int feed_one(struct pcm_async *as, uint32_t flow, const struct pcm_event *ev,
				  pcm_uint now)
{
	unsigned char *slot = pcm_flowtab_slot(&as->tab, flow);
	uint64_t tk;
	int rc;

	if (__builtin_expect(!slot, 0))
		return -ENOENT;
	tk = lock_flow(hdr_of(slot));
	rc = accumulate_locked(as, slot, (uint32_t)tk, ev, now);
	unlock_flow(hdr_of(slot), tk);
	if (rc > 0)
		push(as, slot, flow);
	return rc;
}

int pcm_async_feed(struct pcm_async *as, uint32_t flow, const struct pcm_event *ev, pcm_uint now_ps)
{
	return feed_one(as, flow, ev, now_ps);
}

/*
 * How far ahead in a burst to prefetch records for writing: far enough that
 * a line a worker holds has arrived by the time its event is fed.
 */
#define PREFETCH_AHEAD 16

static void prefetch_flow(const struct pcm_async *as, uint32_t flow)
{
	const unsigned char *slot = pcm_flowtab_slot(&as->tab, flow);

	if (!slot)
		return;
	prefetch_w(slot);
	for (uint32_t off = as->win_off * SLOT_BYTES; off < as->ctrl_off * SLOT_BYTES;
	     off += CACHELINE)
		prefetch_w(slot + off);
}

uint32_t pcm_async_feed_burst(struct pcm_async *as, const struct pcm_flow_event *evs, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n && i < PREFETCH_AHEAD; i++)
		prefetch_flow(as, evs[i].flow);
	for (i = 0; i < n; i++) {
		if (i + PREFETCH_AHEAD < n)
			prefetch_flow(as, evs[i + PREFETCH_AHEAD].flow);
		if (feed_one(as, evs[i].flow, &evs[i].ev, evs[i].now_ps) < 0)
			break;
	}
	return i;
}

int pcm_async_tick(struct pcm_async *as, uint32_t flow, pcm_uint now_ps)
{
	static const struct pcm_event empty;

	return feed_one(as, flow, &empty, now_ps);
}

/* ---- controls ---------------------------------------------------------------------------- */

/* Publish @rec's controls as one set, if any changed. Threads: the flow's worker. */
static void publish_controls(const struct pcm_async *as, unsigned char *slot,
			     const struct pcm_package *pkg, uint16_t pi, const pcm_uint *rec,
			     bool force)
{
	struct flow_ctrl *c = ctrl_of(as, slot);
	const pcm_uint *ctrl = rec + PCM_REC_SIGNALS_SLOT + pkg->n_signals;
	uint64_t seq;
	bool changed = force;

	for (uint32_t i = 0; i < pkg->n_controls && !changed; i++)
		changed = LD(&c->value[i]) != ctrl[i];
	if (!changed)
		return;
	seq = atomic_load_explicit(&c->seq, memory_order_relaxed);
#ifndef PCM_DST_FAULT_TORN /* test_async_dst must catch its absence */
	STEP();
	atomic_store_explicit(&c->seq, seq + 1, memory_order_relaxed);
#endif
	/* release: a reader that sees any value also sees the odd count before it */
	ST_REL(&c->pkg, pi);
	for (uint32_t i = 0; i < pkg->n_controls; i++)
		ST_REL(&c->value[i], ctrl[i]);
#ifndef PCM_DST_FAULT_TORN
	STEP();
	atomic_store_explicit(&c->seq, seq + 2, memory_order_release);
#else
	(void)seq;
#endif
}

int pcm_async_controls(const struct pcm_async *as, uint32_t flow, struct pcm_control_set *out)
{
	unsigned char *slot = pcm_flowtab_slot(&as->tab, flow);
	struct flow_ctrl *c;

	if (!slot || LD(&hdr_of(slot)->pkg) == NO_PKG)
		return -ENOENT;
	c = ctrl_of(as, slot);
	for (;;) {
		const struct pcm_package *pkg;
		uint64_t s1, s2;

		STEP();
		s1 = atomic_load_explicit(&c->seq, memory_order_acquire);
		if (s1 & 1) {
			cpu_relax();
			continue;
		}
		pkg = as->pkgs.pkg[LD_ACQ(&c->pkg)];
		out->mask = 0;
		for (int t = 0; t < PCM_CTRL_COUNT; t++) {
			int slot_t = pkg->control_slot[t];
			int i = slot_t - (int)(PCM_REC_SIGNALS_SLOT + pkg->n_signals);

			out->value[t] = slot_t >= 0 ? LD_ACQ(&c->value[i]) : 0;
			out->mask |= (pcm_uint)(slot_t >= 0) << t;
		}
		STEP();
		s2 = atomic_load_explicit(&c->seq, memory_order_relaxed);
		if (s1 == s2) {
			out->seq = s1 / 2;
			return 0;
		}
	}
}

int pcm_async_control(const struct pcm_async *as, uint32_t flow, pcm_control_t type,
		      pcm_uint *value)
{
	struct pcm_control_set set;
	int rc = pcm_async_controls(as, flow, &set);

	if (rc < 0)
		return rc;
	if ((unsigned)type >= PCM_CTRL_COUNT || !(set.mask & ((pcm_uint)1 << type)))
		return -ENOENT;
	*value = set.value[type];
	return 0;
}

/* ---- worker side: taking a window -------------------------------------------------------- */

static inline pcm_uint worker_now(const struct pcm_async *as, struct flow_hdr *h)
{
	if (as->cfg.clock_ps)
		return as->cfg.clock_ps(as->cfg.clock_arg);
	return LD_ACQ(&h->now);
}

/*
 * Copy window @epoch into @out and its present mask into *@present (the
 * identity if no event of that epoch touched it). An event writes its slots
 * in spec order and then the present mask, with release stores; reading the
 * mask first and the slots backwards with acquire loads, an event still
 * being written shows as a prefix of its writes: whenever a slot holds its
 * sample, every earlier slot does too.
 * Return: whether an event of @epoch touched the window.
 */
static bool copy_window(const struct pcm_async *as, unsigned char *slot,
			const struct pcm_package *pkg, uint32_t epoch, pcm_uint *out,
			pcm_uint *present)
{
	_Atomic pcm_uint *win = window_of(as, slot, epoch);

	if (LD_ACQ(&hdr_of(slot)->tag[epoch & 1]) != epoch) {
		memcpy(out, pkg->window_identity, pkg->window_slots * sizeof(pcm_uint));
		*present = 0;
		return false;
	}
	*present = LD_ACQ(present_of(pkg, win));
	for (uint32_t i = pkg->window_slots; i-- > 0;)
		out[i] = LD_ACQ(&win[i]);
	return true;
}

/*
 * Fold window @epoch into @rec, if an event touched it: an untouched one
 * means no event since, and the synchronous shell would not have run the
 * pipeline either (ELAPSED_TIME stays as the last event left it).
 */
static bool fold_window(const struct pcm_async *as, unsigned char *slot,
			const struct pcm_package *pkg, uint32_t epoch, pcm_uint *rec, pcm_uint *buf,
			pcm_uint *present, pcm_uint now)
{
	if (!copy_window(as, slot, pkg, epoch, buf, present))
		return false;
	pkg->ops.window_merge(rec, buf, *present, now);
	return true;
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

static void count_skew(struct worker_counters *c, uint64_t skew)
{
	cnt_add(&c->skew_hist[skew_bucket(skew)], 1);
}

static void count_accepted(struct worker_counters *c, uint64_t skew)
{
	if (skew > atomic_load_explicit(&c->skew_max_accepted, memory_order_relaxed))
		atomic_store_explicit(&c->skew_max_accepted, skew, memory_order_relaxed);
	if (skew)
		cnt_add(&c->partial, 1);
}

enum take {
	TAKE_CALL,     /* the window went into the record: run call() */
	TAKE_EMPTY,    /* no event touched it: nothing to run */
	TAKE_DEFERRED, /* events still write it beyond the bound: come back later */
};

/*
 * Read window @epoch, which the events with tickets below @wait_ticket write,
 * into the record. Events still writing it are the snapshot's skew: above
 * the bound (0 for LOCKED, skew_bound for BOUNDED, none for RELAXED) the
 * worker checks again up to max_retries times, then leaves the window for
 * its next look at the flow. A window read while events still wrote it is
 * finished later (PRIV_LATE).
 */
static enum take read_window(struct pcm_async *as, struct async_worker *w, struct visit *v,
			     uint32_t epoch, uint32_t wait_ticket)
{
	struct flow_priv *p = v->priv;
	struct flow_hdr *h = hdr_of(v->slot);
	uint64_t bound = as->mode == PCM_ASYNC_RELAXED ? UINT64_MAX :
			 as->mode == PCM_ASYNC_BOUNDED ? as->cfg.skew_bound :
							 0;
	uint32_t attempts = as->mode == PCM_ASYNC_RELAXED ? 1 : as->cfg.max_retries + 1;
	uint64_t skew;
	bool touched;

	for (;;) {
		int32_t left = ticket_diff(wait_ticket, LD_ACQ(&h->owner));

		skew = left > 0 ? (uint64_t)left : 0;
		count_skew(&w->cnt, skew);
		if (skew <= bound)
			break;
		cnt_add(&w->cnt.retakes, 1);
		if (--attempts == 0) {
			p->state |= PRIV_TAKE;
			p->epoch = epoch;
			p->wait_ticket = wait_ticket;
			return TAKE_DEFERRED;
		}
		cpu_relax();
	}
	p->state &= ~PRIV_TAKE;
	count_accepted(&w->cnt, skew);
	v->now = worker_now(as, h);
	touched = fold_window(as, v->slot, v->pkg, epoch, rec_of(as, p), read_of(p),
			      &p->read_present, v->now);
#ifndef PCM_DST_FAULT_NO_LATE /* test_async_dst must catch its absence */
	if (skew) {
#else
	if (0) {
#endif
		p->state |= PRIV_LATE;
		p->epoch = epoch;
		p->wait_ticket = wait_ticket;
	}
	return touched ? TAKE_CALL : TAKE_EMPTY;
}

/*
 * Fold in what events that were still writing a window when it was read
 * wrote afterwards. Return: false if they are not done yet.
 */
static bool finish_late(struct pcm_async *as, struct visit *v)
{
	struct flow_priv *p = v->priv;
	pcm_uint fin[PCM_SPEC_MAX_SIGNALS], fin_present;

	if (ticket_diff(LD_ACQ(&hdr_of(v->slot)->owner), p->wait_ticket) < 0)
		return false;
	copy_window(as, v->slot, v->pkg, p->epoch, fin, &fin_present);
	v->pkg->ops.window_merge_late(rec_of(as, p), read_of(p), p->read_present, fin, fin_present);
	p->state &= ~PRIV_LATE;
	return true;
}

/*
 * After a visit that took @events events: skip the flow for 2^backoff - 1
 * sweeps, the backoff growing when the visit found fewer than
 * COALESCE_EVENTS and shrinking when it found twice as many or more.
 */
static void back_off(struct async_worker *w, struct flow_priv *p, uint32_t events)
{
	if (events < COALESCE_EVENTS && p->backoff < MAX_BACKOFF)
		p->backoff++;
	else if (events >= 2 * COALESCE_EVENTS && p->backoff)
		p->backoff--;
	p->resume_sweep = w->sweep + (1u << p->backoff) - 1;
}

/*
 * Advance the epoch (events from then on write the other window) and read
 * the old window, which the events with earlier tickets write; or, for a
 * window left for later, read it again.
 */
static enum take take_window_of(struct pcm_async *as, struct async_worker *w, struct visit *v)
{
	struct flow_priv *p = v->priv;
	uint64_t old;

	if (p->state & PRIV_TAKE) {
		v->next = p->wait_ticket;
		return read_window(as, w, v, p->epoch, p->wait_ticket);
	}
	old = advance_epoch(hdr_of(v->slot));
	cnt_add(&w->cnt.enqueues, 1);
	v->next = (uint32_t)(old >> 32);
	back_off(w, p, v->next - p->seen);
	p->seen = v->next;
	return read_window(as, w, v, (uint32_t)old, v->next);
}

/* ---- worker side: requests from the owner ------------------------------------------------ */

/* Under the flow's lock: fold every event so far into the worker's record. */
static void fold_all(struct pcm_async *as, struct visit *v, uint64_t tk)
{
	struct flow_priv *p = v->priv;
	uint32_t epoch = (uint32_t)tk;

	if (p->state & PRIV_LATE)
		finish_late(as, v);
	if (p->state & PRIV_TAKE)
		fold_window(as, v->slot, v->pkg, p->epoch, rec_of(as, p), read_of(p),
			    &p->read_present, v->now);
	fold_window(as, v->slot, v->pkg, epoch, rec_of(as, p), read_of(p), &p->read_present,
		    v->now);
	p->state = 0;
}

/* Under the flow's lock: the flow starts over as package @pi, from the worker's record. */
static void restart_shared(struct pcm_async *as, unsigned char *slot, uint16_t pi, uint32_t epoch,
			   const pcm_uint *rec)
{
	struct flow_hdr *h = hdr_of(slot);
	const struct pcm_package *pkg = as->pkgs.pkg[pi];

	/* tags that match neither this window's epoch nor the next: cleared when first used */
	ST(&h->tag[0], epoch - 2);
	ST(&h->tag[1], epoch - 2);
	ST(&h->queued, 0);
	ST(&h->pkg, pi);
	pkg->ops.publish(pub_of(as, slot), rec);
	publish_controls(as, slot, pkg, pi, rec, true);
}

/*
 * call() of @pkg on @rec. All the flows of the shell are one handler
 * instance, and workers run flows in parallel: the calls of a package with
 * instance variables are serialised on its instance's lock (pkgset.h).
 */
static int run_call(struct pcm_async *as, const struct pcm_package *pkg, pcm_uint *rec,
		    pcm_uint now)
{
	pthread_mutex_t *lock;
	int rc;

	if (!pkg->n_shared_slots)
		return pkg->ops.call(rec, now);
	lock = &as->pkgs.shared_lock[pcm_pkgset_find(&as->pkgs, pkg)];
	pthread_mutex_lock(lock);
	rc = pkg->ops.call(rec, now);
	pthread_mutex_unlock(lock);
	return rc;
}

/* Bind @rec, a record of package number @pi, to the shell's instance area (package.h). */
static void bind_instance(struct pcm_async *as, uint16_t pi, pcm_uint *rec)
{
	pcm_package_bind_shared(as->pkgs.pkg[pi], rec, pcm_pkgset_shared(&as->pkgs, pi, 0));
}

static void count_call(struct async_worker *w, int rc)
{
	cnt_add(&w->cnt.handler_calls, rc != 0);
	cnt_add(&w->cnt.handler_errors, rc < 0);
	cnt_add(&w->cnt.no_trigger, rc == 0);
}

/* REQ_SWAP, REQ_RESET: done by the worker under the flow's lock, the owner waiting. */
static void do_handoff(struct pcm_async *as, struct async_worker *w, struct visit *v,
		       uint32_t req)
{
	struct flow_hdr *h = hdr_of(v->slot);
	struct flow_ctrl *c = ctrl_of(as, v->slot);
	pcm_uint *rec = rec_of(as, v->priv);
	uint64_t tk = lock_flow(h);
	uint16_t to = req & REQ_SWAP ? (uint16_t)LD(&c->req_pkg) : LD(&h->pkg);
	const struct pcm_package *next = as->pkgs.pkg[to];

	v->now = LD(&c->req_now);
	fold_all(as, v, tk);
	if (req & REQ_SWAP) {
		/* what the old package's triggers hold for, its handler takes, as it would have */
		count_call(w, run_call(as, v->pkg, rec, v->now));
		pcm_package_handoff(v->pkg, rec, next, w->scratch, v->now);
		memcpy(rec, w->scratch, next->record_slots * sizeof(pcm_uint));
	} else {
		next->ops.init(rec, v->now);
	}
	bind_instance(as, to, rec);
	restart_shared(as, v->slot, to, (uint32_t)tk, rec);
	v->priv->seen = (uint32_t)(tk >> 32) + 1; /* every event before this handoff's ticket */
	unlock_flow(h, tk);
	STEP();
	atomic_fetch_and_explicit(&h->req, ~(REQ_SWAP | REQ_RESET), memory_order_release);
#ifndef PCM_ASYNC_DST
	futex_wake_all(&h->req);
#endif
}

/*
 * Leave a flow for a later round: it waits for an event still being written.
 * It stays in the pending set (only its worker takes flows out of it).
 */
static void defer(struct async_worker *w)
{
	cnt_add(&w->cnt.deferrals, 1);
	w->deferred++;
}

/*
 * REQ_DEAD: free the flow, once the owner's push is done; no event can be
 * writing it any more. Its pending bit may have been set again meanwhile:
 * it goes first, so that a later flow with the same handle starts clean.
 */
static void do_free(struct pcm_async *as, struct async_worker *w, struct visit *v, uint32_t req)
{
	struct flow_hdr *h = hdr_of(v->slot);
	uint64_t tk;

	if (!(req & REQ_PUSHED)) {
		defer(w);
		return;
	}
	tk = lock_flow(h);
	ST(&h->pkg, NO_PKG);
	unlock_flow(h, tk);
	pcm_pendset_remove(&w->pend, &as->pend0, v->flow);
	pcm_flowtab_remove(&as->tab, v->flow);
}

/* ---- worker side: a round ---------------------------------------------------------------- */

static void begin_visit(struct pcm_async *as, uint32_t flow, struct visit *v)
{
	v->flow = flow;
	v->slot = pcm_flowtab_slot(&as->tab, flow);
	v->run = false;
	v->priv = NULL;
	if (!v->slot)
		return;
	prefetch_w(v->slot);
	for (uint32_t off = as->win_off * SLOT_BYTES; off < as->ctrl_off * SLOT_BYTES;
	     off += CACHELINE)
		__builtin_prefetch(v->slot + off, 0, 3);
	v->priv = priv_of(as, flow);
	__builtin_prefetch(v->priv, 1, 3);
}

/* Handle the owner's request, if any. Return: true if it took the visit. */
static bool handle_request(struct pcm_async *as, struct async_worker *w, struct visit *v)
{
	uint32_t req;

	STEP();
	req = atomic_load_explicit(&hdr_of(v->slot)->req, memory_order_acquire);
	if (!req)
		return false;
	if (req & REQ_DEAD)
		do_free(as, w, v, req);
	else
		do_handoff(as, w, v, req);
	return true;
}

/*
 * A flow with nothing new since the worker last switched its windows has
 * nothing to do on this visit, and backs off further. Once it has been idle
 * for SETTLE_SWEEPS sweeps, over two such visits in a row at least, it
 * leaves the pending set (sooner, it would only come back: taking it out and
 * adding it again writes the set's line on both sides). Then its
 * tickets and requests are read again, with a read-modify-write of the word
 * events take their tickets from: an event or request that came meanwhile
 * either shows there, and the flow goes back in, or its thread sees the flow
 * gone and adds it itself (pcm_pendset_add() reads the bit after the
 * event's ticket), then synchronises with that read-modify-write and so sees
 * what the worker published last.
 * Return: true if the visit has nothing to do.
 */
static bool quiet(struct pcm_async *as, struct async_worker *w, struct visit *v)
{
	struct flow_hdr *h = hdr_of(v->slot);
	struct flow_priv *p = v->priv;
	bool news;

	if ((uint32_t)(LD(&h->tick) >> 32) != p->seen) {
		p->quiet = 0;
		p->news_sweep = w->sweep;
		return false;
	}
	w->quiet++;
	back_off(w, p, 0);
	if (p->quiet < UINT16_MAX)
		p->quiet++;
	if (p->quiet < 2 || w->sweep - p->news_sweep < SETTLE_SWEEPS)
		return true;
	pcm_pendset_remove(&w->pend, &as->pend0, v->flow);
	news = tickets_taken(h) != p->seen ||
	       (STEP(), atomic_load_explicit(&h->req, memory_order_seq_cst));
#ifdef PCM_DST_FAULT_NO_RECHECK /* test_async_dst must catch its absence */
	news = false;
#endif
	p->quiet = 0;
	if (news) {
		p->news_sweep = w->sweep;
		pcm_pendset_add(&w->pend, &as->pend0, v->flow);
		w->quiet--;
		return false;
	}
	cnt_add(&w->cnt.settled, 1);
	return true;
}

static void take_window(struct pcm_async *as, struct async_worker *w, struct visit *v)
{
	enum take taken;
	uint16_t pi;
	bool late;

	/* an earlier flow of this round may have freed the chunk (do_free()): look again */
	v->slot = pcm_flowtab_slot(&as->tab, v->flow);
	if (!v->slot)
		return;
	v->priv = priv_of(as, v->flow);
	pi = LD(&hdr_of(v->slot)->pkg);
	if (pi == NO_PKG)
		return;
	v->pkg = as->pkgs.pkg[pi];
	if (handle_request(as, w, v))
		return;
	if (!(v->priv->state & (PRIV_LATE | PRIV_TAKE)) && quiet(as, w, v))
		return;
	late = v->priv->state & PRIV_LATE;
	if (late && !finish_late(as, v)) {
		defer(w);
		return;
	}
	taken = take_window_of(as, w, v);
	/* what the late writes brought in is an event's worth of news too */
	v->run = taken == TAKE_CALL || (late && taken == TAKE_EMPTY);
	if (taken == TAKE_DEFERRED || (taken == TAKE_EMPTY && (v->priv->state & PRIV_LATE)))
		defer(w);
}

/*
 * After a call: publish. The flow stays in the pending set, so events that
 * came during the call are taken on its next visit (quiet()).
 */
static void finish_visit(struct pcm_async *as, struct visit *v)
{
	const pcm_uint *rec = rec_of(as, v->priv);

	v->pkg->ops.publish(pub_of(as, v->slot), rec);
	publish_controls(as, v->slot, v->pkg, LD(&hdr_of(v->slot)->pkg), rec, false);
}

/*
 * Drop from @ids the flows backing off; they count as quiet visits. Return:
 * how many are left.
 */
static uint32_t skip_backing_off(struct pcm_async *as, struct async_worker *w, uint32_t *ids,
				 uint32_t n)
{
	uint32_t kept = 0, nudges = LD_ACQ(&w->nudges);

	if (nudges != w->nudges_seen) {
		w->nudges_seen = nudges;
		w->urgent_sweep = w->sweep + 2;
	}
	if ((int32_t)(w->urgent_sweep - w->sweep) > 0)
		return n;
	for (uint32_t k = 0; k < n; k++) {
		const struct flow_priv *p = priv_of(as, ids[k]);

		if ((int32_t)(p->resume_sweep - w->sweep) > 0)
			w->quiet++;
		else
			ids[kept++] = ids[k];
	}
	return kept;
}

/*
 * One round: take a batch of pending flows, take all their windows, run all
 * their handlers, then publish them all. The handlers of a batch touch no
 * shared memory and do not depend on each other, so the core overlaps them.
 * @coalesce: pass over the flows backing off (a worker thread); a caller
 * polling on its own thread (pcm_async_poll()) has no transfer between cores
 * to save, and visits them too.
 */
static uint32_t worker_round(struct pcm_async *as, struct async_worker *w, uint32_t budget,
			     bool coalesce)
{
	uint32_t before = w->cursor;
	uint32_t got = pcm_pendset_next(&w->pend, &as->pend0, &w->cursor, w->ids,
					MIN(budget, as->cfg.batch));
	uint32_t n, calls = 0, errors = 0, taken = 0;

	w->deferred = 0;
	w->quiet = 0;
	if (got && w->cursor <= before)
		w->sweep++;
	n = coalesce ? skip_backing_off(as, w, w->ids, got) : got;
	for (uint32_t k = 0; k < n; k++)
		begin_visit(as, w->ids[k], &w->visits[k]);
	for (uint32_t k = 0; k < n; k++)
		take_window(as, w, &w->visits[k]);
	for (uint32_t k = 0; k < n; k++) {
		struct visit *v = &w->visits[k];

		if (!v->run)
			continue;
		v->rc = run_call(as, v->pkg, rec_of(as, v->priv), v->now);
		calls += v->rc != 0;
		errors += v->rc < 0;
		taken++;
	}
	for (uint32_t k = 0; k < n; k++)
		if (w->visits[k].run)
			finish_visit(as, &w->visits[k]);
	if (n) {
		cnt_add(&w->cnt.wakeups, got - w->quiet);
		cnt_add(&w->cnt.no_trigger, taken - calls);
		cnt_add(&w->cnt.handler_calls, calls);
		cnt_add(&w->cnt.handler_errors, errors);
	}
	return got;
}

/*
 * Poll; after idle_spins polls that found nothing to do, block until a
 * datapath adds a flow. Flows left for later only wait for an event still
 * being written (its thread may be preempted), which wakes nobody when it
 * ends: with only those pending the worker blocks for DEFER_SLEEP_NS at a
 * time (a flow added meanwhile may wait that long too).
 */
static void *worker_main(void *arg)
{
	struct async_worker *w = arg;
	struct pcm_async *as = w->as;
	uint32_t idle = 0, n;
	bool only_deferred;

	for (;;) {
		n = worker_round(as, w, MAX_BATCH, true);
		if (n > w->deferred + w->quiet) {
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
		only_deferred = w->deferred > 0;
		if (!only_deferred)
			idle = 0; /* otherwise the next such poll blocks again */
		atomic_store_explicit(&w->sleeping, 1, memory_order_seq_cst);
		if ((!only_deferred && pcm_pendset_nonempty(&w->pend)) ||
		    atomic_load_explicit(&as->stop, memory_order_seq_cst)) {
			atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
			continue;
		}
		cnt_add(&w->cnt.sleeps, 1);
		futex_wait(&w->sleeping, 1, only_deferred ? DEFER_SLEEP_NS : SLEEP_TIMEOUT_NS);
		atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
	}
	while (worker_round(as, w, MAX_BATCH, true))
		;
	return NULL;
}

/* ---- packages ---------------------------------------------------------------------------- */

static int fits(const void *arg, const struct pcm_package *pkg, struct pcm_diag *diag)
{
	const struct pcm_async *as = arg;

	if (pkg->record_slots <= as->record_slots && pkg->window_slots <= as->window_slots &&
	    pkg->pub_slots <= as->pub_slots && pkg->n_controls <= as->control_slots)
		return 0;
	snprintf(diag->msg, sizeof(diag->msg),
		 "package '%s': it needs more room per flow than the shell reserved (record %u/%u, "
		 "window %u/%u, published %u/%u, controls %u/%u slots)",
		 pkg->name, pkg->record_slots, as->record_slots, pkg->window_slots, as->window_slots,
		 pkg->pub_slots, as->pub_slots, pkg->n_controls, as->control_slots);
	return -E2BIG;
}

int pcm_async_package_add(struct pcm_async *as, const struct pcm_package *pkg,
			  struct pcm_diag *diag)
{
	return pcm_pkgset_add(&as->pkgs, pkg, NULL, diag);
}

/* @pkg's number, adding it to the shell first if needed. */
static int admit(struct pcm_async *as, const struct pcm_package *pkg, uint16_t *index)
{
	struct pcm_diag diag;

	return pcm_pkgset_add(&as->pkgs, pkg, index, &diag);
}

/* ---- flows ------------------------------------------------------------------------------- */

/* A new flow's slot and private area (both zeroed by the table). */
static void start_flow(struct pcm_async *as, uint32_t flow, uint32_t worker, uint16_t pi,
		       pcm_uint now_ps)
{
	unsigned char *slot = pcm_flowtab_slot(&as->tab, flow);
	struct flow_hdr *h = hdr_of(slot);
	const struct pcm_package *pkg = as->pkgs.pkg[pi];
	pcm_uint *rec = rec_of(as, priv_of(as, flow));

	pkg->ops.init(rec, now_ps);
	bind_instance(as, pi, rec);
	ST(&h->worker, (uint16_t)worker);
	ST(&h->now, now_ps);
	restart_shared(as, slot, pi, 0, rec);
}

static int check_worker(const struct pcm_async *as, uint32_t worker)
{
	return worker < as->n_workers ? 0 : -EINVAL;
}

/* The slot of a live flow that is not being removed, or NULL. */
static unsigned char *live_slot(const struct pcm_async *as, uint32_t flow)
{
	unsigned char *slot = pcm_flowtab_slot(&as->tab, flow);

	if (!slot || LD(&hdr_of(slot)->pkg) == NO_PKG)
		return NULL;
	STEP();
	if (atomic_load_explicit(&hdr_of(slot)->req, memory_order_acquire) & REQ_DEAD)
		return NULL;
	return slot;
}

/* Add a flow at *@flow (@at) or at the lowest free handle, stored in *@flow. */
static int add_flow(struct pcm_async *as, uint32_t worker, const struct pcm_package *pkg,
		    pcm_uint now_ps, uint32_t *flow, bool at)
{
	uint16_t pi;
	int rc = check_worker(as, worker);

	if (rc == 0)
		rc = admit(as, pkg, &pi);
	if (rc == 0)
		rc = at ? pcm_flowtab_add_at(&as->tab, worker, *flow) :
			  pcm_flowtab_add(&as->tab, worker, flow);
	if (rc == -EEXIST && !live_slot(as, *flow))
		rc = -EBUSY;
	if (rc == 0)
		start_flow(as, *flow, worker, pi, now_ps);
	return rc;
}

int pcm_async_flow_add(struct pcm_async *as, uint32_t worker, const struct pcm_package *pkg,
		       pcm_uint now_ps, uint32_t *flow)
{
	return add_flow(as, worker, pkg, now_ps, flow, false);
}

int pcm_async_flow_add_at(struct pcm_async *as, uint32_t flow, uint32_t worker,
			  const struct pcm_package *pkg, pcm_uint now_ps)
{
	return add_flow(as, worker, pkg, now_ps, &flow, true);
}

int pcm_async_flow_remove(struct pcm_async *as, uint32_t flow)
{
	unsigned char *slot = live_slot(as, flow);
	uint16_t worker;

	if (!slot)
		return -ENOENT;
	worker = LD(&hdr_of(slot)->worker);
	STEP();
	atomic_fetch_or_explicit(&hdr_of(slot)->req, REQ_DEAD, memory_order_release);
	push_to(as, worker, flow);
	nudge(as, worker);
	/* the worker frees the flow only after this, so the push never outlives it */
	STEP();
	atomic_fetch_or_explicit(&hdr_of(slot)->req, REQ_PUSHED, memory_order_release);
	return 0;
}

/* Ask the flow's worker for a handoff and wait for it; without running workers, do it here. */
static void request_handoff(struct pcm_async *as, uint32_t flow, unsigned char *slot, uint32_t req,
			    uint16_t to, pcm_uint now_ps)
{
	struct flow_hdr *h = hdr_of(slot);
	struct flow_ctrl *c = ctrl_of(as, slot);

	ST(&c->req_pkg, to);
	ST(&c->req_now, now_ps);
	STEP();
	atomic_fetch_or_explicit(&h->req, req, memory_order_release);
	if (!as->running) {
		struct visit v;

		begin_visit(as, flow, &v);
		v.pkg = as->pkgs.pkg[LD(&h->pkg)];
		do_handoff(as, &as->workers[LD(&h->worker)], &v, req);
		return;
	}
	push(as, slot, flow);
	nudge(as, LD(&h->worker));
	for (unsigned spins = 0;; spins++) {
		uint32_t now_req;

		STEP();
		now_req = atomic_load_explicit(&h->req, memory_order_acquire);
		if (!(now_req & req))
			return;
#ifndef PCM_ASYNC_DST
		/* the worker is a round away at best: after a short spin, sleep until it wakes us */
		if (spins > 100)
			futex_wait(&h->req, now_req, 1000000);
		else
#endif
			cpu_relax();
	}
}

int pcm_async_flow_reset(struct pcm_async *as, uint32_t flow, pcm_uint now_ps)
{
	unsigned char *slot = live_slot(as, flow);

	if (!slot)
		return -ENOENT;
	request_handoff(as, flow, slot, REQ_RESET, 0, now_ps);
	return 0;
}

int pcm_async_flow_swap(struct pcm_async *as, uint32_t flow, const struct pcm_package *pkg,
			pcm_uint now_ps)
{
	unsigned char *slot = live_slot(as, flow);
	uint16_t pi;
	int rc;

	if (!slot)
		return -ENOENT;
	rc = admit(as, pkg, &pi);
	if (rc == 0)
		request_handoff(as, flow, slot, REQ_SWAP, pi, now_ps);
	return rc;
}

int pcm_async_worker_of(struct pcm_async *as, uint32_t flow)
{
	unsigned char *slot = live_slot(as, flow);

	return slot ? LD(&hdr_of(slot)->worker) : -ENOENT;
}

int pcm_async_worker_node(const struct pcm_async *as, uint32_t worker)
{
	return worker < as->n_workers ? as->workers[worker].node : -1;
}

const struct pcm_package *pcm_async_flow_package(struct pcm_async *as, uint32_t flow)
{
	unsigned char *slot = live_slot(as, flow);

	return slot ? as->pkgs.pkg[LD(&hdr_of(slot)->pkg)] : NULL;
}

/* ---- setup ------------------------------------------------------------------------------- */

void pcm_async_config_default(struct pcm_async_config *cfg)
{
	static const struct pcm_async_config defaults = {
		.mode = PCM_ASYNC_RELAXED,
		.n_workers = 1,
		.skew_bound = 0,
		.max_retries = 16,
		.batch = 16,
		.idle_spins = 20000,
		.max_flows = 1u << 20,
	};

	*cfg = defaults;
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

static int check_config(const struct pcm_async_config *cfg, struct pcm_diag *diag)
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
	if (cfg->max_flows == 0 || cfg->max_flows > PCM_ASYNC_MAX_FLOWS) {
		snprintf(diag->msg, sizeof(diag->msg), "flow count %u is outside 1..%u",
			 cfg->max_flows, PCM_ASYNC_MAX_FLOWS);
		return -EINVAL;
	}
	if (cfg->batch == 0 || cfg->batch > MAX_BATCH) {
		snprintf(diag->msg, sizeof(diag->msg), "batch %u is outside 1..%u", cfg->batch,
			 MAX_BATCH);
		return -EINVAL;
	}
	if (!cfg->packages || cfg->n_packages == 0 || cfg->n_packages > PCM_ASYNC_MAX_PACKAGES) {
		snprintf(diag->msg, sizeof(diag->msg), "package count %u is outside 1..%u",
			 cfg->n_packages, PCM_ASYNC_MAX_PACKAGES);
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

/* Each region as large as the largest package, or the room the configuration reserves. */
static void size_regions(struct pcm_async *as, const struct pcm_async_config *cfg)
{
	as->record_slots = cfg->record_slots;
	as->window_slots = cfg->window_slots;
	as->pub_slots = cfg->pub_slots;
	as->control_slots = cfg->control_slots;
	for (uint32_t i = 0; i < cfg->n_packages; i++) {
		const struct pcm_package *pkg = cfg->packages[i];

		if (!pkg)
			continue;
		as->record_slots = MAX(as->record_slots, pkg->record_slots);
		as->window_slots = MAX(as->window_slots, pkg->window_slots);
		as->pub_slots = MAX(as->pub_slots, pkg->pub_slots);
		as->control_slots = MAX(as->control_slots, pkg->n_controls);
	}
}

static uint32_t line_up(uint32_t slot)
{
	const uint32_t per_line = CACHELINE / SLOT_BYTES;

	return (slot + per_line - 1) / per_line * per_line;
}

/*
 * The header and the published slots, then each window and the controls on
 * lines of their own. A handoff moves the header's line to the worker and
 * back, and the worker publishes right before it re-reads the tickets there:
 * the datapath's next event finds both on the one line it fetches.
 */
static size_t lay_out(struct pcm_async *as)
{
	as->pub_off = HDR_SLOTS;
	as->win_off = line_up(as->pub_off + as->pub_slots);
	as->win_stride = line_up(as->window_slots + 1);
	as->ctrl_off = as->win_off + 2 * as->win_stride;
	return (size_t)line_up(as->ctrl_off + CTRL_HDR_SLOTS + as->control_slots) * SLOT_BYTES;
}

/* The NUMA node a worker pinned to @cpu allocates on; -1 without libnuma or with one node. */
static int node_of_cpu(int cpu)
{
#ifdef PCM_HAVE_NUMA
	if (cpu >= 0 && numa_available() >= 0 && numa_num_configured_nodes() > 1)
		return numa_node_of_cpu(cpu);
#endif
	(void)cpu;
	return -1;
}

static int create_workers(struct pcm_async *as, int *nodes)
{
	as->workers = aligned_alloc(CACHELINE, sizeof(*as->workers) * as->n_workers);
	if (!as->workers)
		return -ENOMEM;
	memset(as->workers, 0, sizeof(*as->workers) * as->n_workers);
	for (uint32_t i = 0; i < as->n_workers; i++) {
		struct async_worker *w = &as->workers[i];
		int cpu = as->cfg.worker_cpus ? as->cfg.worker_cpus[i] : -1;

		w->as = as;
		w->node = nodes[i] = node_of_cpu(cpu);
		w->scratch = calloc(as->record_slots, sizeof(pcm_uint));
		if (!w->scratch || pcm_pendset_init(&w->pend, as->cfg.max_flows) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void free_workers(struct pcm_async *as)
{
	if (!as->workers)
		return;
	for (uint32_t i = 0; i < as->n_workers; i++) {
		pcm_pendset_fini(&as->workers[i].pend);
		free(as->workers[i].scratch);
	}
	free(as->workers);
}

static int copy_cpus(struct pcm_async *as, const struct pcm_async_config *cfg)
{
	int *cpus;

	as->cfg.worker_cpus = NULL;
	if (!cfg->worker_cpus)
		return 0;
	cpus = malloc(sizeof(int) * cfg->n_workers);
	if (!cpus)
		return -ENOMEM;
	memcpy(cpus, cfg->worker_cpus, sizeof(int) * cfg->n_workers);
	as->cfg.worker_cpus = cpus;
	return 0;
}

static int build_shell(struct pcm_async *as, const struct pcm_async_config *cfg,
		       struct pcm_diag *diag)
{
	int nodes[PCM_ASYNC_MAX_WORKERS];
	size_t slot_bytes;
	int rc;

	size_regions(as, cfg);
	slot_bytes = lay_out(as);
	rc = copy_cpus(as, cfg);
	if (rc == 0)
		rc = create_workers(as, nodes);
	if (rc == 0)
		rc = pcm_flowtab_init(&as->tab, cfg->max_flows, slot_bytes,
				      sizeof(struct flow_priv) +
					      (size_t)(as->window_slots + as->record_slots) *
						      SLOT_BYTES,
				      as->n_workers, nodes);
	if (rc == 0)
		rc = pcm_pendset_l0_init(&as->pend0, as->tab.max_flows);
	if (rc == -ENOMEM)
		snprintf(diag->msg, sizeof(diag->msg), "out of memory for %u flows", cfg->max_flows);
	for (uint32_t i = 0; rc == 0 && i < cfg->n_packages; i++)
		rc = pcm_pkgset_add(&as->pkgs, cfg->packages[i], NULL, diag);
	return rc;
}

static void free_shell(struct pcm_async *as)
{
	pcm_flowtab_fini(&as->tab);
	pcm_pendset_l0_fini(&as->pend0);
	free_workers(as);
	free((void *)as->cfg.worker_cpus);
	pcm_pkgset_fini(&as->pkgs);
	free(as);
}

int pcm_async_create_cfg(const struct pcm_async_config *cfg, struct pcm_async **out,
			 struct pcm_diag *diag)
{
	struct pcm_async *as;
	int rc;

	diag->msg[0] = '\0';
	if (!cfg || !out) {
		snprintf(diag->msg, sizeof(diag->msg), "no configuration or result pointer");
		return -EINVAL;
	}
	rc = check_config(cfg, diag);
	if (rc < 0)
		return rc;
	as = calloc(1, sizeof(*as));
	if (!as)
		return -ENOMEM;
	as->cfg = *cfg;
	as->cfg.packages = NULL;
	as->mode = cfg->mode;
	as->n_workers = cfg->n_workers;
	pcm_pkgset_init(&as->pkgs, cfg->target, fits, as, 1);
	rc = build_shell(as, cfg, diag);
	if (rc < 0) {
		free_shell(as);
		return rc;
	}
	*out = as;
	return 0;
}

int pcm_async_create(const struct pcm_package *pkg, const struct pcm_target *target,
		     uint32_t n_flows, pcm_uint now_ps, const struct pcm_async_config *cfg,
		     struct pcm_async **out, struct pcm_diag *diag)
{
	struct pcm_async_config c;
	struct pcm_async *as;
	int rc;

	if (!cfg || !out) {
		snprintf(diag->msg, sizeof(diag->msg), "no configuration or result pointer");
		return -EINVAL;
	}
	c = *cfg;
	c.packages = &pkg;
	c.n_packages = 1;
	c.target = target;
	c.max_flows = n_flows;
	rc = pcm_async_create_cfg(&c, &as, diag);
	if (rc < 0)
		return rc;
	for (uint32_t f = 0; rc == 0 && f < n_flows; f++)
		rc = pcm_async_flow_add_at(as, f, (f >> PCM_FLOWTAB_CHUNK_SHIFT) % as->n_workers,
					   pkg, now_ps);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "cannot add %u flows: %s", n_flows,
			 strerror(-rc));
		free_shell(as);
		return rc;
	}
	*out = as;
	return 0;
}

static int start_one(struct async_worker *w, int cpu)
{
	pthread_attr_t attr;
	int rc;

#ifdef PCM_ASYNC_DST
	/* the test's scheduler runs the workers through pcm_async_poll() */
	(void)cpu;
	(void)attr;
	(void)rc;
	w->thread_live = false;
	return 0;
#endif
	rc = pthread_attr_init(&attr);
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
	free_shell(as);
}

int pcm_async_poll(struct pcm_async *as, uint32_t worker, uint32_t budget)
{
	uint32_t done = 0, n;

	if (worker >= as->n_workers)
		return -EINVAL;
#ifndef PCM_ASYNC_DST
	if (as->running)
		return -EBUSY;
#endif
	while (done < budget) {
		struct async_worker *w = &as->workers[worker];

		n = worker_round(as, w, budget - done, false);
		if (!n)
			break;
		done += n - w->quiet;
	}
	return (int)MIN(done, (uint32_t)INT_MAX);
}

/* ---- inspection -------------------------------------------------------------------------- */

int pcm_async_flow_peek(struct pcm_async *as, uint32_t flow, pcm_uint *out)
{
	unsigned char *slot = live_slot(as, flow);
	const struct pcm_package *pkg;
	struct flow_priv *p;
	pcm_uint *rec, win[PCM_SPEC_MAX_SIGNALS], present;
	uint32_t epoch;
	pcm_uint now;

	if (!slot)
		return -ENOENT;
	if (as->running)
		return -EBUSY;
	pkg = as->pkgs.pkg[LD(&hdr_of(slot)->pkg)];
	p = priv_of(as, flow);
	rec = as->workers[0].scratch;
	now = worker_now(as, hdr_of(slot));
	memcpy(rec, rec_of(as, p), pkg->record_slots * sizeof(pcm_uint));
	if (p->state & PRIV_LATE) {
		copy_window(as, slot, pkg, p->epoch, win, &present);
		pkg->ops.window_merge_late(rec, read_of(p), p->read_present, win, present);
	}
	if (p->state & PRIV_TAKE)
		fold_window(as, slot, pkg, p->epoch, rec, win, &present, now);
	epoch = (uint32_t)atomic_load_explicit(&hdr_of(slot)->tick, memory_order_relaxed);
	fold_window(as, slot, pkg, epoch, rec, win, &present, now);
	out[PCM_REC_MASK_SLOT] = 0;
	out[PCM_REC_SET_MASK_SLOT] = 0;
	memcpy(out + PCM_REC_SIGNALS_SLOT, rec + PCM_REC_SIGNALS_SLOT,
	       (pkg->handler_slots - PCM_REC_SIGNALS_SLOT) * sizeof(pcm_uint));
	return 0;
}

static void add_counters(struct pcm_async_stats *out, struct worker_counters *c)
{
	uint64_t m;

#define ADD(field) out->field += atomic_load_explicit(&c->field, memory_order_relaxed)
	ADD(enqueues);
	ADD(wakeups);
	ADD(handler_calls);
	ADD(handler_errors);
	ADD(no_trigger);
	ADD(retakes);
	ADD(deferrals);
	ADD(partial);
	ADD(settled);
	ADD(idle_polls);
	ADD(sleeps);
#undef ADD
	m = atomic_load_explicit(&c->skew_max_accepted, memory_order_relaxed);
	out->skew_max_accepted = MAX(out->skew_max_accepted, m);
	for (unsigned b = 0; b < PCM_ASYNC_SKEW_BUCKETS; b++)
		out->skew_hist[b] += atomic_load_explicit(&c->skew_hist[b], memory_order_relaxed);
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
	for (uint32_t i = first; i < last; i++)
		add_counters(out, &as->workers[i].cnt);
	/* what the worker itself put back is not the datapath's doing */
	return 0;
}

size_t pcm_async_bytes_per_flow(const struct pcm_async *as)
{
	return (size_t)as->tab.slot_bytes + as->tab.priv_bytes;
}

size_t pcm_async_bytes(struct pcm_async *as)
{
	size_t b = pcm_flowtab_bytes(&as->tab) + as->pend0.bytes + sizeof(*as);

	for (uint32_t i = 0; i < as->n_workers; i++)
		b += as->workers[i].pend.bytes + sizeof(as->workers[i]);
	return b;
}

enum pcm_async_mode pcm_async_get_mode(const struct pcm_async *as)
{
	return as->mode;
}
