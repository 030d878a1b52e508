/* SPDX-License-Identifier: MIT */
/*
 * engine.h - an engine: one sans-IO core, one datapath instance, and the
 * rings between it and the application's threads.
 *
 * Application threads submit commands (send, receive, close, and control
 * requests such as memory registration and connection setup) on the
 * engine's lock-free MPSC ring; the engine publishes completions on an SPSC
 * ring that one application thread at a time consumes. The engine's loop
 * body is xp_engine_run_once(engine, now): take commands, poll the
 * datapath, run the core's timers, drain the core's actions into the
 * datapath, publish completions. Who calls it is the engine's progress
 * mode:
 *   XP_PROGRESS_THREAD    the engine's own thread, placed on the NIC's NUMA
 *                         node; it busy-polls for spin_ns after its last
 *                         work, then sleeps on an eventfd and the
 *                         datapath's wait fd until a command, an event or
 *                         its next timer;
 *   XP_PROGRESS_INLINE    no thread: the application's poll drives it
 *                         (xp_engine_progress()), like libfabric's manual
 *                         progress; best on a machine with few cores;
 *   XP_PROGRESS_EXTERNAL  a driver steps it (softnic: the emulation, in
 *                         virtual time, one thread for every engine).
 *
 * Connections are the core's: the engine adds their paths, control peer and
 * CC binding, exchanged as a connection blob (blob.h) by the bootstrap.
 * Every command that names an operation completes exactly once (a post the
 * core refuses completes at once with the error).
 */
#ifndef XP_ENGINE_H
#define XP_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cc_pcm.h"
#include "xp_wake.h"
#include "core.h"
#include "datapath.h"

enum xp_progress {
	XP_PROGRESS_THREAD = 0,
	XP_PROGRESS_INLINE = 1,
	XP_PROGRESS_EXTERNAL = 2,
};

/* Where an application thread sleeps for completions of several engines. */
struct xp_waiter {
	_Atomic int waiting; /* xp_wake.h's flag: armed by the thread before it sleeps on efd */
	int efd;             /* an eventfd */
};

#define XP_ENGINE_POLICY_NAME_MAX 128

/* How a connection runs: paths, reliability, CC (a PCM package, or none). */
struct xp_conn_opts {
	const struct pcm_package *cc;  /* NULL: a fixed, unlimited window at line rate */
	const struct pcm_package *lb;  /* optional */
	enum xp_cc_pcm_mode mode;
	enum pcm_async_mode async_mode;
	uint32_t paths;                /* 0: XP_ENGINE_DEFAULT_PATHS */
	bool rc;
	uint64_t no_progress_ns;       /* the no-progress limit; 0: the core's default (5 s) */
	char cc_name[XP_ENGINE_POLICY_NAME_MAX]; /* what the blob tells the peer */
	/*
	 * With native.ops set: this compiled-in binding instead of a PCM
	 * package (cc, lb and mode are ignored). For a benchmark's native
	 * baseline (pcm-bench's native Swift); its ctx must outlive the engine.
	 */
	struct xp_cc_binding native;
	char lb_name[XP_ENGINE_POLICY_NAME_MAX];
};

#define XP_ENGINE_DEFAULT_PATHS 4

enum xp_ctl_op {
	XP_CTL_MR_REG = 1,     /* addr, len -> mr */
	XP_CTL_MR_DEREG = 2,   /* mr */
	XP_CTL_CONN_OPEN = 3,  /* opts -> conn, msg (the local blob), opts.rc: dialer, before the dial */
	XP_CTL_CONN_BIND = 4,  /* conn, peer_msg: dialer, with the listener's answer */
	XP_CTL_CONN_ACCEPT = 5,/* opts, peer_msg -> conn, msg: listener */
	XP_CTL_CONN_DROP = 6,  /* conn: undo an OPEN whose dial failed (no completion follows) */
	XP_CTL_SET_CC = 7,     /* conn, opts (cc, lb, mode; no_progress_ns if set): live swap */
	XP_CTL_CONN_INFO = 8,  /* addr: len struct xp_conn_query, each filled in */
	XP_CTL_PORT_ADD = 9,   /* addr: a struct xp_port (port.h), served from the next run */
	XP_CTL_PORT_DEL = 10,  /* addr: the port; never called again once answered */
	XP_CTL_CALL = 11,      /* call(call_arg) on the engine's runner; status: its return */
};

/*
 * One connection's figures for XP_CTL_CONN_INFO, read by the engine's
 * thread through the core's accessor (xp_conn_info()): a coherent snapshot
 * at one instant, at no cost to the data path between requests.
 */
struct xp_conn_query {
	uint32_t conn;             /* in */
	int32_t status;            /* out: 0, -ENOENT (no such connection on the engine) */
	struct xp_conn_info info;  /* out, when status is 0 */
};

/*
 * A control request: the caller allocates it, submits it, and owns it
 * again once done is set (and, with notify, once its completion is polled).
 */
struct xp_ctl {
	uint8_t op;
	bool notify;          /* also publish an XP_ECOMP_CTL completion */
	_Atomic int done;     /* set last, with release */
	int status;
	struct pcm_diag diag;
	uint64_t token;       /* the caller's */
	void *addr;
	size_t len;
	uint32_t mr;
	uint32_t conn;
	struct xp_conn_opts opts;
	int (*call)(void *arg);  /* XP_CTL_CALL */
	void *call_arg;
	uint32_t peer_len;
	uint32_t msg_len;
	uint8_t peer_msg[XP_BOOT_MSG_MAX];
	uint8_t msg[XP_BOOT_MSG_MAX];
};

enum xp_cmd_op {
	XP_CMD_SEND = 1,
	XP_CMD_RECV = 2,
	XP_CMD_CLOSE = 3,
	XP_CMD_CTL = 4,
};

struct xp_cmd {
	uint8_t op;
	uint8_t close_mode;   /* enum xp_close_mode */
	uint32_t conn;
	uint32_t mr;          /* SEND/RECV: the engine's region */
	uint64_t addr;
	uint64_t len;
	uint64_t cookie;
	struct xp_ctl *ctl;
};

enum xp_ecomp_kind {
	XP_ECOMP_SEND = 1,
	XP_ECOMP_RECV = 2,
	XP_ECOMP_CLOSE = 3,
	XP_ECOMP_CTL = 4,
};

struct xp_engine_comp {
	uint8_t kind;         /* enum xp_ecomp_kind */
	int32_t status;
	uint32_t conn;
	uint64_t cookie;
	uint64_t bytes;
	struct xp_ctl *ctl;   /* CTL */
};

struct xp_engine_config {
	const struct xp_dp_ops *dp_ops;
	struct xp_dp_config dp;
	/*
	 * The core's configuration. Its ctrl_mtu and line rate come from the
	 * datapath; its RTO floor is raised to the datapath's.
	 */
	struct xp_core_config core;
	enum xp_progress progress;
	uint32_t index;
	uint32_t cmd_slots;      /* power of two */
	uint32_t comp_slots;     /* power of two */
	uint32_t max_mrs;
	uint64_t spin_ns;        /* THREAD: busy-poll this long after the last work, then sleep */
	int cpu;                 /* THREAD: pin to this CPU; -1: any CPU of the NIC's node */
	struct xp_waiter *waiter;/* woken when completions are published; may be NULL */
	/* EXTERNAL: called after a command is queued, to wake the runner; may be NULL */
	void (*wake_runner)(void *arg);
	void *wake_runner_arg;
	uint32_t cc_flows;       /* flows per PCM binding */
	uint32_t async_workers;  /* per asynchronous binding; 0: run on the engine's thread */
	/* packages a live swap may move a connection to in place (cc_pcm.h room_for); may be NULL */
	const struct pcm_package *const *cc_room_for;
	/*
	 * UC on a datapath without per-receive keys (no XP_DP_CAP_RECV_KEYS): false (the
	 * default) makes a dialer use RC instead and a listener refuse UC, saying why; true
	 * allows it, for experiments (docs/transport.md "Direct placement").
	 */
	bool uc_without_recv_keys;
};

struct xp_engine_stats {
	uint64_t runs;           /* xp_engine_run_once() calls */
	uint64_t busy_runs;      /* runs that found work */
	uint64_t commands;
	uint64_t events;         /* datapath events */
	uint64_t writes;         /* writes the datapath took */
	uint64_t writes_dropped; /* writes it could not take (recovered as losses) */
	uint64_t ctrl_sent;
	uint64_t completions;
	uint64_t overflows;      /* completions that waited for room in the ring */
	uint64_t sleeps;         /* THREAD: times the engine blocked */
	uint64_t post_errors;    /* posts the core refused (completed at once) */
	uint64_t idle_polls;
};

/* Memory, for the per-connection report (docs/transport.md). */
struct xp_engine_memory {
	size_t core_total;       /* the core's pools */
	size_t core_per_conn;    /* the core's state per connection slot */
	size_t engine_total;     /* rings, op table, connection table */
	size_t engine_per_conn;  /* the engine's state per connection (paths included) */
	size_t cc_per_flow;      /* the PCM shells' state per connection, per binding in use */
	uint32_t conns;          /* connections open now */
	uint32_t max_conns;
};

struct xp_engine;

/**
 * xp_engine_config_default() - defaults: THREAD progress, 1,024 command and
 * 4,096 completion slots, 1,024 regions, 20 us of busy polling, no pinning,
 * 1,024 flows per PCM binding, one worker per asynchronous binding, the
 * core's defaults.
 * @cfg: filled in; the caller sets cfg->dp_ops.
 */
void xp_engine_config_default(struct xp_engine_config *cfg);

/**
 * xp_engine_create() - open the datapath, create the core and the rings
 * (on the NIC's NUMA node) and, with THREAD progress, start the thread.
 * @cfg: configuration; copied.
 * @out: the engine.
 * @diag: on failure, what is wrong (the datapath's message names the device).
 *
 * Return: 0, -EINVAL, -ENOMEM, or the datapath's error.
 */
int xp_engine_create(const struct xp_engine_config *cfg, struct xp_engine **out,
		     struct pcm_diag *diag);

/**
 * xp_engine_destroy() - stop the thread, abort every connection (each peer
 * gets RESET at once; no completions reach the application), close the
 * datapath. Submitted control requests are answered with -ESHUTDOWN first.
 * NULL is a no-op. An engine still alive when its process exits (through
 * exit() or a return from main) resets its peers the same way, from an
 * atexit() handler; a process that is killed sends nothing, and its peers
 * find out at their no-progress limit.
 */
void xp_engine_destroy(struct xp_engine *e);

/**
 * xp_engine_submit() - hand a command to the engine (any thread).
 * @e: the engine.
 * @cmd: copied.
 *
 * Return: 0, -EAGAIN (the command ring is full: poll completions, retry).
 */
int xp_engine_submit(struct xp_engine *e, const struct xp_cmd *cmd);

/**
 * xp_ctl_new() - a control request for @op, every other field zero,
 * allocated (it holds two connection blobs, over 8 KiB: no stack object).
 * @op: enum xp_ctl_op.
 *
 * Return: the request, to free() once the engine no longer owns it; NULL
 * when out of memory.
 */
struct xp_ctl *xp_ctl_new(uint8_t op);

/**
 * xp_engine_ctl_run() - submit control request @ctl and wait for its answer
 * (any thread but the engine's). While it waits, an INLINE engine is driven
 * (xp_engine_progress()); a THREAD or EXTERNAL one is left to its runner.
 * @e: the engine.
 * @ctl: the request (op and arguments set); not notified.
 * @timeout_ns: how long to wait; 0: for ever.
 *
 * Return: 0 once answered (the request's own result is in ctl->status),
 * -ETIMEDOUT (the engine still owns @ctl: it must not be freed or reused).
 */
int xp_engine_ctl_run(struct xp_engine *e, struct xp_ctl *ctl, uint64_t timeout_ns);

/**
 * xp_engine_poll() - take published completions (one thread at a time).
 * @e: the engine.
 * @out: room for @max.
 * @max: how many.
 *
 * Return: how many were taken.
 */
uint32_t xp_engine_poll(struct xp_engine *e, struct xp_engine_comp *out, uint32_t max);

/**
 * xp_engine_run_once() - the engine's loop body: commands, datapath events,
 * timers, the core's actions, completions.
 * @e: the engine.
 * @now_ns: the time (the datapath's clock).
 *
 * Return: a count of work done; 0 when there was none.
 */
uint32_t xp_engine_run_once(struct xp_engine *e, uint64_t now_ns);

/**
 * xp_engine_progress() - INLINE progress: run once at the datapath's time
 * unless another thread is running it now.
 *
 * Return: as xp_engine_run_once(), 0 when another thread had it.
 */
uint32_t xp_engine_progress(struct xp_engine *e);

/**
 * xp_engine_next_deadline() - when the engine next has timer work.
 *
 * Return: the core's next deadline, or UINT64_MAX.
 */
uint64_t xp_engine_next_deadline(const struct xp_engine *e);

/**
 * xp_engine_has_input() - whether commands wait (any thread; approximate).
 */
bool xp_engine_has_input(struct xp_engine *e);

/**
 * xp_engine_prepare_wait() - INLINE progress: prepare to sleep on the datapath's fd.
 * @e: the engine.
 * @fd: the fd to wait on.
 *
 * Return: 0 (sleep on @fd until readable or the next deadline), -EAGAIN
 * (work is pending: do not sleep), -EOPNOTSUPP (the datapath cannot block).
 */
int xp_engine_prepare_wait(struct xp_engine *e, int *fd);

struct xp_dp *xp_engine_dp(struct xp_engine *e);
struct xp_core *xp_engine_core(struct xp_engine *e);
void xp_engine_stats(const struct xp_engine *e, struct xp_engine_stats *st);
void xp_engine_memory(const struct xp_engine *e, struct xp_engine_memory *m);

/**
 * xp_engine_describe() - one line on an engine's wake-up state, for the report of
 * a wait that stopped making progress (any thread): whether its thread sleeps in
 * ppoll() and until when, its sleeping flag (cleared by the submitter that wakes
 * it), commands submitted and taken, completions published and taken, and its
 * counters. The figures are read one by one while the engine runs: each is exact,
 * the line is not a snapshot.
 * @e: the engine.
 * @buf: where the line goes (NUL-terminated, cut to @len).
 * @len: its size.
 */
void xp_engine_describe(const struct xp_engine *e, char *buf, size_t len);

/**
 * xp_engine_idle() - whether the engine holds nothing: no connection (open or
 * quarantined), no operation, no completion unpublished. Engine thread or
 * a stopped engine only.
 */
bool xp_engine_idle(const struct xp_engine *e);

#endif /* XP_ENGINE_H */
