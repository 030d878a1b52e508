/* SPDX-License-Identifier: MIT */
/*
 * plane.h - the one seam between pcmd and whatever moves the bytes.
 *
 * pcmd (config, control socket, channels, clients, policies, stats) knows the
 * data plane only through this ops table. The transport engine binds to it
 * (engines, datapaths, the sans-IO core); the integration tests bind a
 * loopback that copies between two clients' regions in memory. pcmd links
 * exactly one implementation and passes it to pcmd_main().
 *
 * Contract:
 * - Every call is made from pcmd's event-loop thread. An implementation may
 *   run its own threads (engines); it reports back only through poll(), and
 *   makes event_fd() readable when poll() may return something. event_fd()
 *   is an eventfd whose count pcmd's loop takes itself (a bell, loop.h)
 *   before it calls poll(): the data plane need not read it.
 * - A region is one client's data area (its memfd mapping: with verbs, the
 *   MR). Offsets and lengths posted (post_send()/post_recv(), or through a
 *   port's post function) have been
 *   checked by pcmd against that region; the data plane only ever touches
 *   [base, base + bytes) of the flow's own region.
 * - Names are pcmd's (names.h): a listener is known here by its id only, and
 *   connect() names the listener pcmd resolved the dial to.
 * - Tokens are pcmd's; they come back unchanged in events. Each accepted
 *   post_send()/post_recv() yields exactly one PCMD_PLANE_EV_COMPLETE (a post
 *   through a port: one complete() call instead), each
 *   accepted connect() one PCMD_PLANE_EV_CONNECTED, each accepted accept() one
 *   PCMD_PLANE_EV_ACCEPTED (status < 0 when the listener closed first).
 * - An ACCEPTED event names the packages the dialer's flow runs (peer_opts,
 *   pcmd_plane_opts_names()): pcmd gives the accepted flow the same.
 * - close() starts closing a flow: graceful lets posted sends finish, abort
 *   completes everything outstanding with -ECONNABORTED. The flow's peer sees
 *   its outstanding work complete with -ECONNRESET. After the flow's last
 *   event the data plane emits PCMD_PLANE_EV_CLOSED; the flow id is dead then.
 * - region_release() after every flow and listener of the region is closed:
 *   once the data plane will never touch the memory again it emits
 *   PCMD_PLANE_EV_REGION_RELEASED, and only then does pcmd unmap it.
 *
 * Ports (optional: port_add, call, flow_handle): a data plane with threads of
 * its own may serve a client's descriptor path itself (intake.h), so that
 * pcmd's loop is not in the per-descriptor path. port_add() hands it the
 * region's port: from then on the data plane's thread that runs the region's
 * flows calls intake() (which posts through the post function it is given,
 * naming flows by flow_handle()), complete() for each of those posts instead
 * of a PCMD_PLANE_EV_COMPLETE event, flush() after each round, and arm() before
 * it sleeps; the doorbell fd it returns wakes that thread (the client's
 * submission doorbell). call() runs a function on that thread and waits for
 * it (pcmd's loop uses it for whatever touches the port's state: completion
 * slots, CONNECT and ACCEPT completions); with no port it runs the function
 * at once. region_release() removes the port before the region is released:
 * nothing calls it afterwards. A data plane without ports (the integration
 * tests' loopback) gets posts from pcmd's loop through the same intake, by
 * post_send() and post_recv(), which only such a data plane has: a data
 * plane provides ports or those two.
 */
#ifndef PCMD_PLANE_H
#define PCMD_PLANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcmd_proto.h"

struct pcm_package;
struct pcmd_config;
struct pcmd_plane;
struct pcmd_plane_region;

enum pcmd_plane_event_kind {
	PCMD_PLANE_EV_COMPLETE = 1,    /* a send or receive finished: status, bytes */
	PCMD_PLANE_EV_CONNECTED,       /* connect() finished: status, flow */
	PCMD_PLANE_EV_ACCEPTED,	       /* accept() matched a peer: status, flow, peer */
	PCMD_PLANE_EV_CLOSED,	       /* flow closed: no more events for it */
	PCMD_PLANE_EV_REGION_RELEASED, /* the region's memory is no longer touched */
};

struct pcmd_plane_event {
	uint32_t kind;		  /* enum pcmd_plane_event_kind */
	int32_t status;		  /* 0 or -errno */
	uint64_t token;		  /* as posted (CLOSED: the flow's token from connect/accept) */
	uint64_t bytes;		  /* COMPLETE: bytes sent or received */
	uint32_t flow;		  /* CONNECTED, ACCEPTED, CLOSED */
	char peer[PCMD_ADDR_MAX]; /* ACCEPTED: the connecting side's address */
	uint64_t peer_token;	  /* ACCEPTED: the connect()'s token; 0: the dialer is gone */
	/* ACCEPTED: the packages and shell mode the dialer's flow runs (names; "" unknown):
	 * the dialer's options decide the connection (pcm_transport(3)) */
	struct pcmd_flow_opts peer_opts;
};

/* What pcmd chose for a flow: its CC and LB packages and how they run. */
struct pcmd_plane_flow_opts {
	const struct pcm_package *cc; /* never NULL */
	const struct pcm_package *lb; /* NULL: the datapath's default path choice */
	uint32_t mode;		      /* enum pcmd_shell_mode */
	uint32_t skew_bound;	      /* ASYNC_BOUNDED */
	uint32_t paths;		      /* 0: default */
	bool reliable_connected;
	uint32_t no_progress_ms;      /* 0: the engine's default (5 s) */
};

/* How a port's intake posts a checked descriptor: @handle is flow_handle()'s. */
typedef int (*pcmd_plane_post_fn)(void *post_arg, uint64_t handle, uint8_t op, uint64_t offset,
				  uint64_t len, uint64_t token);

/* A client's descriptor path, run by the data plane's thread (intake.h). */
struct pcmd_plane_port {
	/* Take and post submissions through @post. Return: how many taken. */
	uint32_t (*intake)(void *arg, pcmd_plane_post_fn post, void *post_arg);
	/* A post's completion (the seam's statuses, as PCMD_PLANE_EV_COMPLETE's). */
	void (*complete)(void *arg, uint64_t token, int status, uint64_t bytes);
	void (*flush)(void *arg);
	/* Before the thread sleeps. Return: true if input waits (do not sleep). */
	bool (*arm)(void *arg);
	void *arg;
};

struct pcmd_plane_ops {
	const char *name;
	/* Start the data plane described by @cfg (datapath, engines, workers). */
	int (*create)(const struct pcmd_config *cfg, struct pcmd_plane **out, char *err,
		      size_t err_len);
	void (*destroy)(struct pcmd_plane *pl);
	/* Readable when poll() may return events; -1 if the data plane has none. */
	int (*event_fd)(struct pcmd_plane *pl);
	/* Drain up to @max events. Return: count, or -errno. */
	int (*poll)(struct pcmd_plane *pl, struct pcmd_plane_event *evs, int max);

	/* A client's data area. @host: softnic host to attach as ("" any). On
	 * failure @err may say why, for the client (naming the limit or key). */
	int (*region_add)(struct pcmd_plane *pl, void *base, size_t bytes, const char *host,
			  uint64_t token, struct pcmd_plane_region **out, char *err,
			  size_t err_len);
	void (*region_release)(struct pcmd_plane *pl, struct pcmd_plane_region *r);

	/* A listener on @r's engine, with room for @backlog dials not yet accepted. */
	int (*listen)(struct pcmd_plane *pl, struct pcmd_plane_region *r, uint32_t backlog,
		      uint32_t *listener);
	void (*unlisten)(struct pcmd_plane *pl, uint32_t listener);
	int (*accept)(struct pcmd_plane *pl, uint32_t listener, uint64_t token);
	/* Dial @listener (-ECONNREFUSED in the CONNECTED event when its backlog is full). */
	int (*connect)(struct pcmd_plane *pl, struct pcmd_plane_region *r, uint32_t listener,
		       const struct pcmd_plane_flow_opts *opts, uint64_t token);
	/* The options of a flow that accept() produced, before its first post. */
	int (*flow_setup)(struct pcmd_plane *pl, uint32_t flow,
			  const struct pcmd_plane_flow_opts *opts);

	/* Without ports only (a data plane with ports leaves them NULL). */
	int (*post_send)(struct pcmd_plane *pl, uint32_t flow, uint64_t offset, uint64_t len,
			 uint64_t token);
	int (*post_recv)(struct pcmd_plane *pl, uint32_t flow, uint64_t offset, uint64_t cap,
			 uint64_t token);
	void (*close)(struct pcmd_plane *pl, uint32_t flow, bool abort);

	/* The flow's figures (pcmd_flow_measure, proto.h); valid says which it measures. */
	int (*flow_stats)(struct pcmd_plane *pl, uint32_t flow, struct pcmd_flow_measure *out);
	/* Swap the flow's packages live (the shells' swap): nothing lost or doubled. */
	int (*set_policy)(struct pcmd_plane *pl, uint32_t flow,
			  const struct pcmd_plane_flow_opts *opts);
	/* Optional: the datapath it runs ("null", "softnic", "verbs"); NULL: the config's. */
	const char *(*datapath)(struct pcmd_plane *pl);
	/* Optional: the longest message its datapath carries; NULL or 0: no limit of its own. */
	uint64_t (*max_message_bytes)(struct pcmd_plane *pl);
	/* Optional: how many hosts of an emulated fabric there are, each region taking one;
	 * NULL or 0: regions are not hosts. */
	uint32_t (*hosts)(struct pcmd_plane *pl);

	/* Optional, all three or none: ports (above). port_add() copies @port and
	 * returns in @doorbell_fd a new fd that the caller owns. */
	int (*port_add)(struct pcmd_plane *pl, struct pcmd_plane_region *r,
			const struct pcmd_plane_port *port, int *doorbell_fd);
	int (*call)(struct pcmd_plane *pl, struct pcmd_plane_region *r, int (*fn)(void *arg),
		    void *arg);
	uint64_t (*flow_handle)(struct pcmd_plane *pl, uint32_t flow);
};

/**
 * pcmd_plane_datapath() - the name of the datapath a data plane runs, for status.
 * @ops: its ops table.
 * @pl: the data plane; NULL before it is created.
 * @cfg: the configuration it was created from.
 *
 * Return: what the data plane says, else the configuration's resolved kind.
 */
const char *pcmd_plane_datapath(const struct pcmd_plane_ops *ops, struct pcmd_plane *pl,
				const struct pcmd_config *cfg);

/**
 * pcmd_plane_max_message_bytes() - the longest message pcmd lets a client post.
 * @ops: the data plane's ops table.
 * @pl: the data plane.
 * @cfg: the configuration (limits.max_message_bytes).
 *
 * Return: the smaller of limits.max_message_bytes and what the data plane
 * carries (its max_message_bytes op), so that no post the client's library
 * accepts is refused by the engine afterwards.
 */
uint64_t pcmd_plane_max_message_bytes(const struct pcmd_plane_ops *ops, struct pcmd_plane *pl,
				      const struct pcmd_config *cfg);

/**
 * pcmd_plane_opts_names() - a flow's options as names, for an ACCEPTED event's peer_opts.
 * @o: the dialer's options, as pcmd gave them to connect().
 * @out: its package names and shell mode.
 */
void pcmd_plane_opts_names(const struct pcmd_plane_flow_opts *o, struct pcmd_flow_opts *out);

/**
 * pcmd_plane_hosts() - the hosts a data plane's regions attach as (softnic).
 * @ops: its ops table.
 * @pl: the data plane; NULL before it is created.
 *
 * Return: their count, or 0 when regions are not hosts.
 */
uint32_t pcmd_plane_hosts(const struct pcmd_plane_ops *ops, struct pcmd_plane *pl);

/**
 * pcmd_plane_ops_check() - check that an ops table is complete.
 * @ops: the table.
 *
 * Return: NULL, or the name of the first missing member.
 */
const char *pcmd_plane_ops_check(const struct pcmd_plane_ops *ops);

#endif /* PCMD_PLANE_H */
