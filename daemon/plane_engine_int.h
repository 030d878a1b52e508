/* SPDX-License-Identifier: MIT */
/*
 * plane_engine_int.h - the engine data plane's own state (plane_engine.c
 * describes the whole), shared by its files, each one concept:
 *
 *   plane_engine.c          the seam's ops table: create, destroy, poll, usage
 *   plane_engine_start.c    the datapath chosen, the engines (or the softnic fabric) started
 *   plane_engine_conn.c     connection setup between two engines, a flow's packages
 *   plane_engine_listen.c   listeners and their accept queues
 *   plane_engine_figures.c  per-flow figures, one control request per engine
 *   plane_engine_region.c   client regions, and on softnic the host each attaches as
 *   plane_engine_flow.c     the flow table, closes, a region released with its last flow
 *   plane_engine_port.c     ports: the client's descriptor path on its engine
 *   plane_engine_ctl.c      control requests to the engines
 *   plane_engine_event.c    the events waiting for pcmd's poll()
 *
 * Each calls only files listed below it.
 *
 * Every function declared here runs on pcmd's loop thread (the seam's contract); the
 * engines' threads see only what control requests and ports hand them.
 */
#ifndef PCMD_PLANE_ENGINE_INT_H
#define PCMD_PLANE_ENGINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "plane.h"
#include "port.h"
#include "xp_accept_queue.h"

#define NO_FLOW UINT32_MAX
#define COMP_BATCH 64

/* A region's port: pcmd's descriptor path, run by the region's engine (port.h). */
struct pcmd_eng_port {
	struct xp_port xp;
	struct pcmd_plane_port pcmd;
	struct xp_engine *e;
	uint32_t mr;
	uint64_t base;
	size_t bytes;
	uint64_t now_ns; /* of the intake running now */
};

struct pcmd_plane_region {
	uint64_t token;
	struct pcmd_eng_port *port; /* NULL: none, or removed */
	uint32_t engine;
	uint32_t mr;
	void *base;
	size_t bytes;
	uint32_t refs;	/* flows (open or closing) and listeners on it */
	bool releasing; /* region_release() came: release once refs is 0 */
	char name[PCMD_ADDR_MAX];
};

struct pcmd_eng_flow {
	bool used;
	bool known;   /* pcmd holds its id (connected, or accepted) */
	bool closing; /* close() or unlisten() sent its CLOSE */
	uint32_t engine;
	uint32_t conn;
	uint64_t token;
	struct pcmd_plane_region *r;
	uint64_t dialer_token;	    /* a backlog flow: its dialer's connect() token */
	char dialer[PCMD_ADDR_MAX]; /* and the dialer's region's name */
	struct pcmd_flow_opts dialer_opts; /* an accepted flow: what its dialer runs */
	uint64_t figures_ns;	    /* when info was read; 0: never */
	int figures_status;	    /* of that read: 0, -ENOENT */
	struct xp_conn_info info;
};

struct pcmd_eng_listener {
	bool used;
	struct pcmd_plane_region *r;
	/* Dials: flows the engine accepted and the client did not yet; accepts: accept() tokens. */
	struct xp_accept_queue q;
};

struct pcmd_plane {
	const struct xp_dp_ops *dp_ops;
	uint32_t n_engines;
	struct xp_engine **engines;
	uint32_t **conn_flow; /* per engine: conn id -> flow id */
	uint32_t max_conns;
	uint32_t next_engine;
	uint64_t max_msg_bytes; /* the longest message every engine carries */
	struct xp_waiter waiter;
	uint32_t n_regions; /* for names */
	uint32_t regions_live;
	struct pcmd_fabric *fabric; /* softnic: engines[h] is host h's, NULL while it is free */
	bool *detaching;	    /* softnic: host h's region is released; detach it */
	uint32_t n_detaching;
	struct xp_engine_config host_ec; /* softnic: every host's engine, but dp.host and index */

	struct pcmd_eng_flow *flows;
	uint32_t n_flows;
	struct pcmd_eng_listener *listeners;
	uint32_t n_listeners;

	struct pcmd_plane_event *evs; /* events waiting for poll() */
	uint32_t ev_head, ev_n, ev_cap;

	struct xp_conn_query *queries; /* XP_CTL_CONN_INFO's, n_flows of them */
	uint32_t *query_flow;	       /* the flow of each */
	uint32_t queries_cap;
};

/* ---- plane_engine_event.c -------------------------------------------------------------------- */

/* Double @p's room (16 at first) for elements of @size; out of memory aborts pcmd. */
void *pcmd_eng_grow(void *p, uint32_t *cap, size_t size);
/* Queue an event for poll(); pcmd_eng_kick() makes the event fd readable. */
void pcmd_eng_emit(struct pcmd_plane *pl, const struct pcmd_plane_event *ev);
void pcmd_eng_emit_simple(struct pcmd_plane *pl, uint32_t kind, int status, uint64_t token,
			  uint32_t flow);
void pcmd_eng_kick(struct pcmd_plane *pl);
/* Hand out up to @max queued events. Return: how many. */
int pcmd_eng_events_take(struct pcmd_plane *pl, struct pcmd_plane_event *evs, int max);

/* ---- plane_engine_ctl.c ---------------------------------------------------------------------- */

/* Submit a command to @engine's ring, waiting for room. */
void pcmd_eng_submit(struct pcmd_plane *pl, uint32_t engine, const struct xp_cmd *cmd);
/* Run @ctl on @engine and wait for its answer. Return: its status. */
int pcmd_eng_ctl_run(struct pcmd_plane *pl, uint32_t engine, struct xp_ctl *ctl);

/* ---- plane_engine_start.c -------------------------------------------------------------------- */

/* The datapath @cfg asks for, and its engines started (or the softnic fabric). Return: 0, -errno.
 */
int pcmd_eng_start(const struct pcmd_config *cfg, struct pcmd_plane *pl, char *err, size_t err_len);

/* ---- plane_engine_flow.c --------------------------------------------------------------------- */

/* Engine @i's table of connection ids to flows, every entry NO_FLOW. Return: 0, -ENOMEM. */
int pcmd_eng_conn_flow_alloc(struct pcmd_plane *pl, uint32_t i);
/* A new flow for connection @conn of @r's engine. Return: its id. */
uint32_t pcmd_eng_flow_new(struct pcmd_plane *pl, struct pcmd_plane_region *r, uint32_t conn);
/* The flow pcmd named, or NULL (logged: pcmd's bug) when it holds no such flow. */
struct pcmd_eng_flow *pcmd_eng_flow_of(struct pcmd_plane *pl, uint32_t f);
/* Send flow @f's CLOSE (graceful or abort); it is freed when the engine reports it closed. */
void pcmd_eng_flow_close(struct pcmd_plane *pl, uint32_t f, bool abort_now);
/* Release @r once it was asked for and no flow or listener is left on it. */
void pcmd_eng_region_try_release(struct pcmd_plane *pl, struct pcmd_plane_region *r);
/* Take engine @e's completions (the closes). Return: how many. */
uint32_t pcmd_eng_drain(struct pcmd_plane *pl, uint32_t e);
/* Take every engine's completions. Return: how many. */
uint32_t pcmd_eng_take_completions(struct pcmd_plane *pl);
void pcmd_eng_close(struct pcmd_plane *pl, uint32_t f, bool abort_now);
uint64_t pcmd_eng_flow_handle(struct pcmd_plane *pl, uint32_t f);

/* ---- plane_engine_region.c ------------------------------------------------------------------- */

int pcmd_eng_region_add(struct pcmd_plane *pl, void *base, size_t bytes, const char *host,
			uint64_t token, struct pcmd_plane_region **out, char *err, size_t err_len);
void pcmd_eng_region_release(struct pcmd_plane *pl, struct pcmd_plane_region *r);
/* softnic: detach the hosts whose region was released. */
void pcmd_eng_hosts_reap(struct pcmd_plane *pl);

/* ---- plane_engine_listen.c ------------------------------------------------------------------- */

/* Listener @id, or NULL (logged: pcmd's bug) when it holds no such listener. */
struct pcmd_eng_listener *pcmd_eng_listener_of(struct pcmd_plane *pl, uint32_t id);
/* Pair @l's waiting flows with its waiting accept()s: one ACCEPTED event each. */
void pcmd_eng_listener_match(struct pcmd_plane *pl, struct pcmd_eng_listener *l);
int pcmd_eng_listen(struct pcmd_plane *pl, struct pcmd_plane_region *r, uint32_t backlog,
		    uint32_t *id);
void pcmd_eng_unlisten(struct pcmd_plane *pl, uint32_t id);
int pcmd_eng_accept(struct pcmd_plane *pl, uint32_t id, uint64_t token);

/* ---- plane_engine_conn.c --------------------------------------------------------------------- */

int pcmd_eng_connect(struct pcmd_plane *pl, struct pcmd_plane_region *r, uint32_t listener,
		     const struct pcmd_plane_flow_opts *opts, uint64_t token);
/* A flow's packages: the seam's flow_setup() and set_policy() alike. */
int pcmd_eng_set_cc(struct pcmd_plane *pl, uint32_t f, const struct pcmd_plane_flow_opts *opts);

/* ---- plane_engine_figures.c ------------------------------------------------------------------ */

int pcmd_eng_flow_stats(struct pcmd_plane *pl, uint32_t f, struct pcmd_flow_measure *out);

/* ---- plane_engine_port.c --------------------------------------------------------------------- */

int pcmd_eng_port_add(struct pcmd_plane *pl, struct pcmd_plane_region *r,
		      const struct pcmd_plane_port *port, int *doorbell_fd);
/* The engine stops serving @r's port (before the region's memory goes). */
void pcmd_eng_port_remove(struct pcmd_plane *pl, struct pcmd_plane_region *r);
int pcmd_eng_call(struct pcmd_plane *pl, struct pcmd_plane_region *r, int (*fn)(void *arg),
		  void *arg);

#endif /* PCMD_PLANE_ENGINE_INT_H */
