// SPDX-License-Identifier: MIT
/*
 * plane_engine_start.c - the engine data plane's start: the datapath the
 * config names among those built (xp_dp_find()), then its engines.
 *
 * null and verbs: engines.count engine threads, each with one instance of the
 * datapath, placed and configured from engines.* and datapath.*; their
 * threads block every signal (pcmd takes signals through its signalfd).
 * softnic: the embedded fabric and one engine slot per host, filled when a
 * client attaches (plane_engine_region.c); host 0's engine is opened once at
 * start to check the configuration and learn the longest message.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fabric_softnic.h"
#include "log.h"
#include "plane_engine_int.h"

static bool have_rdma_device(void)
{
	return access("/sys/class/infiniband", F_OK) == 0 && xp_dp_find("verbs");
}

/* The datapath @cfg asks for, among those built (xp_dp_names()). */
static int choose_datapath(const struct pcmd_config *cfg, const struct xp_dp_ops **out, char *err,
			   size_t err_len)
{
	const char *name = NULL;

	switch (cfg->datapath.kind) {
	case PCMD_DATAPATH_AUTO:
		if (cfg->datapath.resolved == PCMD_DATAPATH_VERBS && have_rdma_device())
			name = "verbs";
		else
			name = "softnic";
		pcmd_info("datapath auto: %s (%s; built: %s)", name,
			  strcmp(name, "verbs") == 0
			      ? "an RDMA device is present"
			      : "no RDMA device: the embedded emulated fabric",
			  xp_dp_names());
		break;
	case PCMD_DATAPATH_SOFTNIC:
		name = "softnic";
		break;
	case PCMD_DATAPATH_VERBS:
		name = "verbs";
		break;
	case PCMD_DATAPATH_NULL:
		name = "null";
		break;
	}
	*out = name ? xp_dp_find(name) : NULL;
	if (!*out) {
		snprintf(err, err_len, "datapath.kind: %s is not built into this pcmd (built: %s)",
			 name ? name : "?", xp_dp_names());
		return -ENOTSUP;
	}
	return 0;
}

/*
 * softnic: a host's engine serves one client, so it needs connection slots
 * for that client's flows and its listeners' backlogs only, twice over for
 * the ids a close quarantines (the core's 16,384 slots cost ~22 MB a host).
 */
static uint32_t host_max_conns(const struct pcmd_config *cfg)
{
	uint64_t n = 2 * ((uint64_t)cfg->limits.flows_per_client +
			  (uint64_t)cfg->limits.listeners_per_client * cfg->limits.backlog);

	return n < XP_MAX_CONNS ? (uint32_t)n : XP_MAX_CONNS;
}

/* The fabric thread runs every softnic engine: a command for one wakes it. */
static void fabric_wake(void *fabric)
{
	pcmd_fabric_kick(fabric);
}

static void engine_config(const struct pcmd_config *cfg, const struct xp_dp_ops *ops, uint32_t i,
			  struct pcmd_plane *pl, struct xp_engine_config *ec)
{
	xp_engine_config_default(ec);
	ec->dp_ops = ops;
	ec->dp.engine = i;
	ec->dp.copy = true;
	ec->index = i;
	ec->progress = XP_PROGRESS_THREAD;
	ec->waiter = &pl->waiter;
	ec->cpu = cfg->engines.n_cpus ? (int)cfg->engines.cpus[i % cfg->engines.n_cpus] : -1;
	ec->async_workers = cfg->workers.count;
	ec->spin_ns = cfg->engines.spin_ns;
	ec->core.chunk_bytes = cfg->datapath.chunk_bytes < XP_CHUNK_BYTES_MAX
				   ? cfg->datapath.chunk_bytes
				   : XP_CHUNK_BYTES_MAX;
	/* a client's whole allowance fits one connection's queue: never refused late */
	if (ec->core.max_queued < cfg->limits.outstanding_per_client)
		ec->core.max_queued = cfg->limits.outstanding_per_client;
	if (ec->core.min_chunk_bytes > ec->core.chunk_bytes)
		ec->core.min_chunk_bytes = ec->core.chunk_bytes;
	if (cfg->datapath.n_devices) {
		const struct pcmd_cfg_device *dev =
		    &cfg->datapath.devices[i % cfg->datapath.n_devices];

		ec->dp.device = dev->name;
		ec->dp.port = (uint8_t)dev->port;
		ec->dp.gid_index = dev->gid_index;
	}
	if (pl->fabric) {
		ec->progress = XP_PROGRESS_EXTERNAL;
		ec->wake_runner = fabric_wake;
		ec->wake_runner_arg = pl->fabric;
		ec->cpu = -1;
		ec->dp.world = pcmd_fabric_world(pl->fabric);
		ec->dp.host = i;
		ec->core.max_conns = host_max_conns(cfg);
	}
}

/*
 * Start an engine whose thread blocks every signal: pcmd takes SIGHUP, SIGTERM
 * and the others through its signalfd, which only works while no thread
 * leaves them unblocked.
 */
static int engine_start(const struct xp_engine_config *ec, struct xp_engine **out,
			struct pcm_diag *diag)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = xp_engine_create(ec, out, diag);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/*
 * Take engine @i's longest message (4,096 chunks of its chunk_bytes, after the
 * datapath's clamp) into the data plane's: a longer send would be refused by
 * the engine after pcmd had accepted it, and the peer's receive would then
 * take the next, shorter message (FIFO matching, pcm_transport(3)).
 */
static void engine_max_msg(struct pcmd_plane *pl, uint32_t i)
{
	uint64_t m = xp_core_max_msg_bytes(xp_engine_core(pl->engines[i]));

	if (!pl->max_msg_bytes || m < pl->max_msg_bytes)
		pl->max_msg_bytes = m;
}

static int engine_slots_alloc(struct pcmd_plane *pl)
{
	pl->engines = calloc(pl->n_engines, sizeof(*pl->engines));
	pl->conn_flow = calloc(pl->n_engines, sizeof(*pl->conn_flow));
	return pl->engines && pl->conn_flow ? 0 : -ENOMEM;
}

/* null, verbs: engines.count engine threads, started now. */
static int start_engines(const struct pcmd_config *cfg, struct pcmd_plane *pl, char *err,
			 size_t err_len)
{
	struct xp_engine_config ec;
	struct pcm_diag diag;
	int rc = engine_slots_alloc(pl);

	for (uint32_t i = 0; rc == 0 && i < pl->n_engines; i++) {
		engine_config(cfg, pl->dp_ops, i, pl, &ec);
		pl->max_conns = ec.core.max_conns;
		memset(&diag, 0, sizeof(diag));
		rc = engine_start(&ec, &pl->engines[i], &diag);
		if (rc < 0) {
			snprintf(err, err_len, "datapath %s, engine %u: %s", pl->dp_ops->name, i,
				 diag.msg[0] ? diag.msg : strerror(-rc));
			break;
		}
		rc = pcmd_eng_conn_flow_alloc(pl, i);
		if (rc == 0)
			engine_max_msg(pl, i);
	}
	return rc;
}

/*
 * softnic: the fabric, and one engine slot per host, each filled when a
 * client attaches. Host 0's engine is opened once now, to check the engine
 * configuration on this fabric at start and learn the longest message.
 */
static int start_fabric(const struct pcmd_config *cfg, struct pcmd_plane *pl, char *err,
			size_t err_len)
{
	struct pcm_diag diag = {0};
	int rc = pcmd_fabric_create(cfg, &pl->fabric, err, err_len);

	if (rc < 0)
		return rc;
	pl->n_engines = pcmd_fabric_hosts(pl->fabric);
	rc = engine_slots_alloc(pl);
	pl->detaching = calloc(pl->n_engines, sizeof(*pl->detaching));
	if (rc == 0 && !pl->detaching)
		rc = -ENOMEM;
	if (rc < 0)
		return rc;
	engine_config(cfg, pl->dp_ops, 0, pl, &pl->host_ec);
	pl->max_conns = pl->host_ec.core.max_conns;
	rc = pcmd_fabric_attach(pl->fabric, &pl->host_ec, &pl->engines[0], &diag);
	if (rc < 0) {
		snprintf(err, err_len, "datapath softnic, host0's engine: %s",
			 diag.msg[0] ? diag.msg : strerror(-rc));
		return rc;
	}
	engine_max_msg(pl, 0);
	pcmd_fabric_detach(pl->fabric, 0);
	pl->engines[0] = NULL;
	if (cfg->engines.count > 1 || cfg->workers.count > 1)
		pcmd_info("datapath softnic: one fabric thread runs every host's engine; "
			  "engines.count and workers.count do not apply");
	return 0;
}

/*
 * Say so when the engines carry smaller chunks than datapath.chunk_bytes:
 * the engine takes at most XP_CHUNK_BYTES_MAX, a datapath at most its largest
 * write (verbs: the device's; on rdma_rxe one MTU). A message is at most
 * XP_MAX_CHUNKS of them: this is why the longest one is shorter.
 */
static void note_chunk(const struct pcmd_config *cfg, const struct pcmd_plane *pl)
{
	uint64_t chunk = pl->max_msg_bytes / XP_MAX_CHUNKS;

	if (chunk && chunk < cfg->datapath.chunk_bytes)
		pcmd_info("datapath %s: chunks of %llu bytes, not datapath.chunk_bytes' %u (the "
			  "engine takes at most %u, the datapath its largest write: on rdma_rxe "
			  "one MTU), so messages of at most %llu bytes (%u chunks)",
			  pl->dp_ops->name, (unsigned long long)chunk, cfg->datapath.chunk_bytes,
			  (unsigned)XP_CHUNK_BYTES_MAX, (unsigned long long)pl->max_msg_bytes,
			  (unsigned)XP_MAX_CHUNKS);
}

int pcmd_eng_start(const struct pcmd_config *cfg, struct pcmd_plane *pl, char *err, size_t err_len)
{
	int rc = choose_datapath(cfg, &pl->dp_ops, err, err_len);

	if (rc == 0 && strcmp(pl->dp_ops->name, "softnic") == 0) {
		rc = start_fabric(cfg, pl, err, err_len);
	} else if (rc == 0) {
		pl->n_engines = cfg->engines.count ? cfg->engines.count : 1;
		rc = start_engines(cfg, pl, err, err_len);
	}
	if (rc < 0)
		return rc;
	if (pl->fabric)
		pcmd_info("data plane: the emulated softnic fabric, %u hosts (one per client)",
			  pl->n_engines);
	else
		pcmd_info("data plane: %u engine%s on datapath %s", pl->n_engines,
			  pl->n_engines == 1 ? "" : "s", pl->dp_ops->name);
	note_chunk(cfg, pl);
	return 0;
}
