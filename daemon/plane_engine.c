// SPDX-License-Identifier: MIT
/*
 * plane_engine.c - pcmd's data-plane seam (plane.h) bound to the
 * transport engine (transport/engine/engine.h).
 *
 * null and verbs: pcmd runs engines.count engines, each an engine thread
 * (XP_PROGRESS_THREAD, placed by the engine with libnuma on engines.cpus[i]
 * or the NIC's node) with one instance of the datapath; asynchronous
 * policies get workers.count workers per binding. Every client region (its
 * memfd data area) is registered as an MR on one engine, chosen round robin,
 * and every flow of that client runs on that engine. Two flows of one
 * connection may sit on different engines: their datapath instances talk to
 * each other.
 *
 * softnic: the embedded fabric (fabric_softnic.h) owns the emulated network
 * and one engine per attached host, all run by its one thread in virtual
 * time (EXTERNAL progress; asynchronous policies run inline on it). Each
 * client region attaches as its own host, the one it names ("host3" or "3")
 * or the first free one, and is that host's engine's only region: the
 * client's flows cross the emulated network to their peers' hosts. When the
 * region is released its host is detached and free for the next client.
 * engines.count and workers do not apply.
 *
 * Connection setup happens here, in one process, without a bootstrap: a
 * connect() to a listener (pcmd resolved the name) opens the dialer's connection (its blob),
 * accepts it on the listener's engine with that blob, and binds the dialer
 * with the answer. The accepted flow then waits in the listener's accept
 * queue until the listener's client accepts it.
 *
 * Control requests to an engine (region registration, connection setup, a
 * policy swap, region release) are answered by the engine thread within
 * microseconds; pcmd's loop waits for that answer, so that errors reach the
 * client with its request.
 *
 * Descriptors: each region has a port (port.h) on its engine that runs the
 * client's descriptor path (intake.h) on the engine's runner: posts go from
 * the client's submission ring to the core and completions into the client's
 * completion ring without pcmd's loop. The client's submission doorbell is a
 * dup of the fd the runner sleeps on (the engine thread's eventfd; on
 * softnic the fabric thread's). So this data plane has no post_send() or
 * post_recv(): every descriptor goes through the port. Connection closes
 * still come back through poll(), woken by the engines through one eventfd
 * (struct xp_waiter).
 *
 * Datapaths: the engine's table (xp_dp_find()). "auto" takes verbs when an
 * RDMA device is present and verbs is built in, else softnic; a datapath
 * named in the config that this build lacks is refused at start with the
 * list of those built. null moves the bytes (copy on): pcmd's clients are
 * all on this machine.
 *
 * Per-flow figures (flow_stats) are the core's, read on the engine's thread
 * by a control request (XP_CTL_CONN_INFO) rather than published by the
 * engine: nothing is added to the per-chunk path, and the figures of one
 * connection come from one instant. One request per engine reads every flow
 * on it; its answer serves the reads of the next FIGURES_FRESH_NS, so a
 * `pcmctl flows` of N flows costs pcmd's loop one round trip per engine, not
 * N.
 *
 * Rates are in wall time on every datapath (softnic's virtual clock never
 * runs ahead of the wall clock).
 *
 * This file is the ops table and what ties the others together (create,
 * destroy, poll); each concept above has its own file (plane_engine_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fabric_softnic.h"
#include "plane_engine.h"
#include "plane_engine_int.h"
#include "xp_wake.h"

static void eng_destroy(struct pcmd_plane *pl)
{
	for (uint32_t i = 0; pl->engines && i < pl->n_engines; i++) {
		if (!pl->fabric)
			xp_engine_destroy(pl->engines[i]);
		free(pl->conn_flow[i]);
	}
	pcmd_fabric_destroy(pl->fabric); /* with the engines still attached */
	for (uint32_t i = 0; i < pl->n_listeners; i++)
		xp_accept_queue_fini(&pl->listeners[i].q);
	free(pl->engines);
	free(pl->conn_flow);
	free(pl->detaching);
	free(pl->flows);
	free(pl->listeners);
	free(pl->evs);
	free(pl->queries);
	free(pl->query_flow);
	if (pl->waiter.efd >= 0)
		close(pl->waiter.efd);
	free(pl);
}

static int eng_create(const struct pcmd_config *cfg, struct pcmd_plane **out, char *err,
		      size_t err_len)
{
	struct pcmd_plane *pl = calloc(1, sizeof(*pl));
	int rc;

	if (!pl)
		return -ENOMEM;
	pl->waiter.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (pl->waiter.efd < 0) {
		free(pl);
		return -errno;
	}
	rc = pcmd_eng_start(cfg, pl, err, err_len);
	if (rc < 0) {
		eng_destroy(pl);
		return rc;
	}
	*out = pl;
	return 0;
}

static int eng_event_fd(struct pcmd_plane *pl)
{
	return pl->waiter.efd;
}

static int eng_poll(struct pcmd_plane *pl, struct pcmd_plane_event *evs, int max)
{
	/* The eventfd's count is pcmd's loop's to take (its bell read it): no read() here. */
	pcmd_eng_take_completions(pl);
	/* Announce that pcmd will wait for the eventfd, then look again: an
	 * engine publishing after the look sees `waiting` and writes the
	 * eventfd (a completion taken by the second look costs at most one
	 * spurious wake-up): xp_wake.h's protocol. */
	xp_wake_arm(&pl->waiter.waiting);
	pcmd_eng_take_completions(pl);
	pcmd_eng_hosts_reap(pl);
	return pcmd_eng_events_take(pl, evs, max);
}

static const char *eng_datapath(struct pcmd_plane *pl)
{
	return pl->dp_ops->name;
}

static uint64_t eng_max_message_bytes(struct pcmd_plane *pl)
{
	return pl->max_msg_bytes;
}

/* softnic: every region attaches as one of the fabric's hosts. */
static uint32_t eng_hosts(struct pcmd_plane *pl)
{
	return pl->fabric ? pcmd_fabric_hosts(pl->fabric) : 0;
}

void pcmd_plane_engine_usage(struct pcmd_plane *pl, struct pcmd_plane_engine_usage *out)
{
	memset(out, 0, sizeof(*out));
	out->regions = pl->regions_live;
	out->queued_events = pl->ev_n;
	for (uint32_t f = 0; f < pl->n_flows; f++)
		out->flows += pl->flows[f].used;
	for (uint32_t l = 0; l < pl->n_listeners; l++)
		out->listeners += pl->listeners[l].used;
	for (uint32_t e = 0; e < pl->n_engines; e++)
		out->engines += pl->engines[e] != NULL;
}

const struct pcmd_plane_ops pcmd_plane_engine = {
    .name = "engine",
    .create = eng_create,
    .destroy = eng_destroy,
    .event_fd = eng_event_fd,
    .poll = eng_poll,
    .region_add = pcmd_eng_region_add,
    .region_release = pcmd_eng_region_release,
    .listen = pcmd_eng_listen,
    .unlisten = pcmd_eng_unlisten,
    .accept = pcmd_eng_accept,
    .connect = pcmd_eng_connect,
    .flow_setup = pcmd_eng_set_cc,
    .close = pcmd_eng_close,
    .flow_stats = pcmd_eng_flow_stats,
    .set_policy = pcmd_eng_set_cc,
    .datapath = eng_datapath,
    .max_message_bytes = eng_max_message_bytes,
    .hosts = eng_hosts,
    .port_add = pcmd_eng_port_add,
    .call = pcmd_eng_call,
    .flow_handle = pcmd_eng_flow_handle,
};
