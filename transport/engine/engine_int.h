/* SPDX-License-Identifier: MIT */
/*
 * engine_int.h - what the engine's files share: the engine object, its
 * connection and operation tables, the CC binding table (cc_table.c),
 * placement (placement.c), and each file's functions for the files above
 * it. Not for use outside transport/engine.
 */
#ifndef XP_ENGINE_INT_H
#define XP_ENGINE_INT_H

#include <pthread.h>
#include <semaphore.h>
#include <sys/types.h>

#include "xp_cc.h"
#include "engine.h"
#include "port.h"
#include "xp_ring.h"

#define XP_ENGINE_CMD_BURST 64   /* commands taken per run */
#define XP_ENGINE_EVENT_BURST 64 /* datapath events per poll */
#define XP_ENGINE_POLLS 4        /* polls per run at most */
#define XP_ENGINE_ACTIONS 256    /* actions per drain */
#define XP_ENGINE_CTRL_BUF (64u << 10)

/* ---- CC bindings (cc_table.c) ---------------------------------------------------------------- */

/* One binding: a PCM shell pair for up to cc_flows connections, or the fixed window. */
struct xp_cc_entry {
	const struct pcm_package *cc; /* NULL: fixed */
	const struct pcm_package *lb;
	enum xp_cc_pcm_mode mode;
	enum pcm_async_mode async_mode;
	struct xp_cc_pcm *pcm;        /* NULL for the fixed one */
	struct xp_cc_fixed fixed;
	struct xp_cc_binding native;  /* ops set: a compiled-in binding (xp_conn_opts.native) */
	uint32_t conns;               /* connections bound to it now */
	bool exhausted;               /* it refused a flow: the next connection needs another */
	struct xp_cc_entry *next;
};

struct xp_cc_table {
	struct xp_cc_entry *head;
	const struct pcm_target *target;
	uint32_t flows;
	uint32_t async_workers;
	int numa_node;           /* the engine's node: where asynchronous flows' workers should be */
	const struct pcm_package *const *room_for; /* packages swapped to in place */
	uint64_t tick_ns;
};

void xp_cc_table_init(struct xp_cc_table *t, const struct pcm_target *target, uint32_t flows,
		      uint32_t async_workers);
void xp_cc_table_fini(struct xp_cc_table *t);

/**
 * xp_cc_table_get() - the binding a connection with @o should use: one with a flow free for
 * those packages and mode, made if needed.
 * @t: the table.
 * @o: the packages and mode.
 * @now_ns: the time.
 * @out: the entry.
 * @diag: what is wrong, naming the package.
 *
 * Return: 0, or xp_cc_pcm_create()'s error.
 */
int xp_cc_table_get(struct xp_cc_table *t, const struct xp_conn_opts *o, uint64_t now_ns,
		    struct xp_cc_entry **out, struct pcm_diag *diag);

/* The binding of @entry for a connection's config. */
struct xp_cc_binding xp_cc_entry_binding(struct xp_cc_entry *entry);

/* A connection left @entry; an exhausted entry nobody uses goes. */
void xp_cc_table_put(struct xp_cc_table *t, struct xp_cc_entry *entry);

/* Bytes of shell state per flow of every binding in use. */
size_t xp_cc_table_bytes_per_flow(const struct xp_cc_table *t);

/* ---- placement (placement.c) ------------------------------------------------------------------ */

/**
 * xp_place_node() - the NUMA node to use for a NIC on @dp_node.
 *
 * Return: the node, or -1 (no NUMA support, one node only, or unknown).
 */
int xp_place_node(int dp_node);

/**
 * xp_place_thread() - run the calling thread on @cpu, or else on node @node, and prefer
 * @node's memory for what it allocates. -1 means no preference; errors are ignored.
 */
void xp_place_thread(int node, int cpu);

/* ---- the engine ------------------------------------------------------------------------------- */

enum eng_conn_state {
	ECONN_FREE = 0,
	ECONN_OPEN = 1,    /* created, not bound yet */
	ECONN_BOUND = 2,
	ECONN_CLOSING = 3, /* closed by the application; waiting for the core's CLOSE */
};

struct eng_conn {
	uint8_t state;
	bool hidden;       /* its CLOSE completion is the engine's own (a failed setup) */
	bool has_peer;
	bool aborted;      /* closed with XP_CLOSE_ABORT */
	uint8_t n_paths;
	uint32_t peer;
	uint32_t *paths;
	struct xp_cc_entry *cc;
};

enum eng_op_via {
	EOP_RING = 0,      /* completes on the engine's completion ring */
	EOP_PORT = 1,      /* completes through its port */
	EOP_DROPPED = 2,   /* its port was removed: the completion goes nowhere */
};

struct eng_op {
	uint64_t cookie;
	uint32_t rkey;
	uint32_t next_free;
	bool has_key;
	uint8_t via;       /* enum eng_op_via */
	struct xp_port *port;
};

struct xp_engine {
	struct xp_engine_config cfg;
	struct xp_dp *dp;
	struct xp_dp_info info;
	struct xp_core *core;
	struct xp_cc_table cc;
	int node;

	struct xp_mpsc cmds;
	struct xp_spsc comps;
	struct xp_engine_comp *overflow; /* completions waiting for ring room, FIFO */
	uint32_t ov_head, ov_n, ov_cap;
	bool published;                  /* completions published this run */

	struct eng_conn *conns;          /* by core connection id */
	uint32_t conns_open;
	struct eng_op *ops;              /* by the core's cookie */
	uint32_t n_ops, op_free, ops_used;
	struct xp_dp_mr *mrs;
	bool *mr_used;
	uint32_t n_mrs;
	struct xp_port **ports;          /* the runner's (port.c) */
	uint32_t n_ports, ports_cap;

	struct xp_action *acts;
	uint8_t *ctrl_buf;
	struct xp_write *writes;
	struct xp_dp_event *evs;

	/* progress */
	pthread_mutex_t run_lock;        /* INLINE: one runner at a time */
	pthread_t thread;
	bool has_thread;
	bool torn_down;                  /* its peers were reset (xp_engine_reset_peers()) */
	pid_t pid;                       /* the process that created it (a fork's copy is not it) */
	struct xp_engine *live_next;     /* the process's engines, for the teardown at exit */
	_Atomic int stop;
	_Atomic int sleeping;
	_Atomic uint64_t asleep_until_ns; /* the thread's own: 0 awake, UINT64_MAX no deadline */
	int efd;                         /* commands wake a sleeping engine through it */
	sem_t started;
	int start_rc;
	struct pcm_diag start_diag;

	struct xp_engine_stats st;       /* XP_ENGINE_STAT_ADD() only: other threads read it */
};

/*
 * Count in an engine's statistics. Only the engine's progressing thread
 * writes them; xp_engine_stats() may read them from any thread, so both go
 * through relaxed atomic accesses (free on x86, and visible to TSan).
 */
#define XP_ENGINE_STAT_ADD(e, field, n)                                                    \
	__atomic_store_n(&(e)->st.field,                                                   \
			 __atomic_load_n(&(e)->st.field, __ATOMIC_RELAXED) + (uint64_t)(n),  \
			 __ATOMIC_RELAXED)

/* Whether @conn names a connection of the application's (not free, not a hidden setup). */
static inline bool xp_engine_conn_ok(const struct xp_engine *e, uint32_t conn)
{
	return conn < e->cfg.core.max_conns && e->conns[conn].state != ECONN_FREE &&
	       !e->conns[conn].hidden;
}

/*
 * The engine's files call each other one way (engine.c's opening comment): a
 * file calls only those after it in engine.c -> engine_thread.c ->
 * engine_state.c -> engine_run.c -> engine_conn.c -> port.c -> engine_op.c ->
 * engine_comp.c. Below, each file's functions for those before it.
 */

/* engine_thread.c: THREAD progress. */
/* Start the thread and wait until it opened the engine's state. Return: 0, or its error. */
int xp_engine_thread_start(struct xp_engine *e, struct pcm_diag *diag);
/* Stop the thread and join it (its state stays, for xp_engine_fini_state()). */
void xp_engine_thread_stop(struct xp_engine *e);

/* engine_state.c: what the engine allocates, opened by the thread that will run it. */
int xp_engine_init_state(struct xp_engine *e, struct pcm_diag *diag);
void xp_engine_fini_state(struct xp_engine *e);

/* engine_run.c: the loop body (engine.h), and an engine's last words. */
/*
 * The engine goes away (destroyed, or the process exits): abort every connection so that each
 * peer gets RESET now rather than finding out at its no-progress limit. Its runner must be
 * stopped (or be the caller).
 */
void xp_engine_reset_peers(struct xp_engine *e);

/* engine_conn.c: control requests, and the end of a connection. */
void xp_engine_ctl(struct xp_engine *e, struct xp_ctl *ctl, uint64_t now_ns);
/* An XP_CMD_CLOSE: the core closes the connection; an error completes at once. */
void xp_engine_close(struct xp_engine *e, const struct xp_cmd *c, uint64_t now);
void xp_engine_conn_closed(struct xp_engine *e, uint32_t conn, int status);
void xp_engine_conn_release_all(struct xp_engine *e);

/* port.c: the port table, served by the runner. */
int xp_engine_port_add(struct xp_engine *e, struct xp_port *port);
int xp_engine_port_del(struct xp_engine *e, struct xp_port *port);
uint32_t xp_engine_ports_intake(struct xp_engine *e, uint64_t now);
void xp_engine_ports_flush(struct xp_engine *e);

/* engine_op.c: operations. */
void xp_engine_ops_init(struct xp_engine *e);
/* A send or receive from the command ring (@port NULL) or a port's intake. */
void xp_engine_post(struct xp_engine *e, const struct xp_cmd *c, struct xp_port *port,
		    uint64_t now);
/* The core completed an operation (a send or a receive): release, complete, free. */
void xp_engine_op_done(struct xp_engine *e, const struct xp_completion *c);
/* @port is going: its operations' completions go nowhere. */
void xp_engine_ops_drop_port(struct xp_engine *e, const struct xp_port *port);

/* engine_comp.c: completions to the application, behind the two inline calls below. */
/* Queue @c in the overflow FIFO (the ring is full, or others wait before it). */
void xp_engine_complete_later(struct xp_engine *e, const struct xp_engine_comp *c);
/* Move waiting completions to the ring while it has room. Return: how many. */
uint32_t xp_engine_overflow_flush_slow(struct xp_engine *e);

/* Publish one completion; it waits in the overflow FIFO while the ring is full. */
static inline void xp_engine_complete(struct xp_engine *e, const struct xp_engine_comp *c)
{
	XP_ENGINE_STAT_ADD(e, completions, 1);
	if (e->ov_n == 0 && xp_spsc_push(&e->comps, c) == 0)
		e->published = true;
	else
		xp_engine_complete_later(e, c);
}

/* Move waiting completions to the ring while it has room. Return: how many. */
static inline uint32_t xp_engine_overflow_flush(struct xp_engine *e)
{
	return e->ov_n ? xp_engine_overflow_flush_slow(e) : 0;
}

#endif /* XP_ENGINE_INT_H */
