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
 * connect() to a listening address opens the dialer's connection (its blob),
 * accepts it on the listener's engine with that blob, and binds the dialer
 * with the answer. The accepted flow then waits in the listener's backlog
 * until the listener's client accepts it.
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
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "plane.h"
#include "plane_engine.h"
#include "engine.h"
#include "port.h"
#include "pcmd_region.h"
#include "fabric_softnic.h"
#include "log.h"

#define NO_FLOW UINT32_MAX
#define COMP_BATCH 64
/*
 * How long a control request may take before pcmd gives up on the engine. Registering a
 * client's region (XP_CTL_MR_REG, ibv_reg_mr on rdma_rxe) took 3.9 s and 4.2 s in the rxe
 * suite's TCG guest at a host load average of 16, and over 5 s (the old bound, which
 * aborted pcmd) in another boot: 30 s, so that only an engine that stopped answering ends
 * pcmd.
 */
#define CTL_TIMEOUT_NS (30ull * 1000 * 1000 * 1000)
/* A control request this slow is logged: pcmd's loop serves no one else meanwhile. */
#define CTL_SLOW_MS 1000
/* How long one read of an engine's figures answers flow_stats() (status, stats, flows). */
#define FIGURES_FRESH_NS (10ull * 1000 * 1000)

/* A region's port: pcmd's descriptor path, run by the region's engine (port.h). */
struct eng_port {
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
	struct eng_port *port; /* NULL: none, or removed */
	uint32_t engine;
	uint32_t mr;
	void *base;
	size_t bytes;
	uint32_t refs;	/* flows (open or closing) and listeners on it */
	bool releasing; /* region_release() came: release once refs is 0 */
	char name[PCMD_ADDR_MAX];
};

struct eng_flow {
	bool used;
	bool known;   /* pcmd holds its id (connected, or accepted) */
	bool closing; /* close() or unlisten() sent its CLOSE */
	uint32_t engine;
	uint32_t conn;
	uint64_t token;
	struct pcmd_plane_region *r;
	uint64_t figures_ns;   /* when info was read; 0: never */
	int figures_status;    /* of that read: 0, -ENOENT */
	struct xp_conn_info info;
};

struct eng_listener {
	bool used;
	char addr[PCMD_ADDR_MAX];
	struct pcmd_plane_region *r;
	uint32_t backlog;
	uint32_t n_waiting, n_accepts, cap_accepts;
	uint32_t *waiting; /* accepted by the engine, not yet by the client: flow ids */
	uint64_t *accepts; /* accept() tokens waiting for a connection */
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
	struct xp_engine_config host_ec; /* softnic: every host's engine, but pl.host and index */

	struct eng_flow *flows;
	uint32_t n_flows;
	struct eng_listener *listeners;
	uint32_t n_listeners;

	struct pcmd_plane_event *evs; /* events waiting for poll() */
	uint32_t ev_head, ev_n, ev_cap;

	struct xp_conn_query *queries; /* XP_CTL_CONN_INFO's, n_flows of them */
	uint32_t *query_flow;          /* the flow of each */
	uint32_t queries_cap;
};

/* ---- events --------------------------------------------------------------------------- */

static void *grow(void *p, uint32_t *cap, size_t size)
{
	uint32_t n = *cap ? *cap * 2 : 16;
	void *q = realloc(p, n * size);

	if (!q) {
		pcmd_err("data plane: out of memory");
		abort();
	}
	*cap = n;
	return q;
}

static void emit(struct pcmd_plane *pl, const struct pcmd_plane_event *ev)
{
	if (pl->ev_head && pl->ev_head + pl->ev_n == pl->ev_cap) {
		memmove(pl->evs, pl->evs + pl->ev_head, pl->ev_n * sizeof(*pl->evs));
		pl->ev_head = 0;
	}
	if (pl->ev_n == pl->ev_cap)
		pl->evs = grow(pl->evs, &pl->ev_cap, sizeof(*pl->evs));
	pl->evs[pl->ev_head + pl->ev_n++] = *ev;
}

static void emit_simple(struct pcmd_plane *pl, uint32_t kind, int status, uint64_t token,
			uint32_t flow)
{
	struct pcmd_plane_event ev = {.kind = kind, .status = status, .token = token, .flow = flow};

	emit(pl, &ev);
}

static void kick(struct pcmd_plane *pl)
{
	uint64_t one = 1;

	if (write(pl->waiter.efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, so it is readable already */
	}
}

/* ---- the engines' control requests ------------------------------------------------------ */

static void submit(struct pcmd_plane *pl, uint32_t engine, const struct xp_cmd *cmd)
{
	while (xp_engine_submit(pl->engines[engine], cmd) == -EAGAIN) {
		if (pl->fabric)
			pcmd_fabric_kick(pl->fabric); /* a full ring: make sure its runner is awake */
		sched_yield(); /* the engine thread empties its ring without waiting for us */
	}
}

/* Run @ctl on @engine and wait for its answer. Return: its status. */
static int ctl_run(struct pcmd_plane *pl, uint32_t engine, struct xp_ctl *ctl)
{
	uint64_t start_ns = xp_mono_ns(), took_ms;

	if (xp_engine_ctl_run(pl->engines[engine], ctl, CTL_TIMEOUT_NS) < 0) {
		pcmd_err("data plane: engine %u did not answer a control request (op %u) in %llu s",
			 engine, ctl->op, CTL_TIMEOUT_NS / 1000000000ull);
		abort(); /* the engine still owns @ctl: nothing safe is left to do */
	}
	took_ms = (xp_mono_ns() - start_ns) / 1000000;
	if (took_ms >= CTL_SLOW_MS)
		pcmd_warn("data plane: engine %u took %llu ms to answer a control request (op %u)",
			  engine, (unsigned long long)took_ms, ctl->op);
	if (ctl->status < 0 && ctl->diag.msg[0])
		pcmd_warn("data plane: engine %u: %s", engine, ctl->diag.msg);
	return ctl->status;
}

static struct xp_ctl *ctl_new(uint8_t op)
{
	struct xp_ctl *ctl = calloc(1, sizeof(*ctl));

	if (ctl)
		ctl->op = op;
	return ctl;
}

/* ---- create and destroy ------------------------------------------------------------------ */

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
		snprintf(err, err_len,
			 "datapath.kind: %s is not built into this pcmd (built: %s)",
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

static void eng_destroy(struct pcmd_plane *pl)
{
	for (uint32_t i = 0; pl->engines && i < pl->n_engines; i++) {
		if (!pl->fabric)
			xp_engine_destroy(pl->engines[i]);
		free(pl->conn_flow[i]);
	}
	pcmd_fabric_destroy(pl->fabric); /* with the engines still attached */
	for (uint32_t i = 0; i < pl->n_listeners; i++) {
		free(pl->listeners[i].waiting);
		free(pl->listeners[i].accepts);
	}
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

/* Engine @i's table of connection ids to flows, every entry NO_FLOW. */
static int conn_flow_alloc(struct pcmd_plane *pl, uint32_t i)
{
	pl->conn_flow[i] = malloc(pl->max_conns * sizeof(uint32_t));
	if (!pl->conn_flow[i])
		return -ENOMEM;
	memset(pl->conn_flow[i], 0xff, pl->max_conns * sizeof(uint32_t));
	return 0;
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
		rc = conn_flow_alloc(pl, i);
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
	rc = choose_datapath(cfg, &pl->dp_ops, err, err_len);
	if (rc == 0 && strcmp(pl->dp_ops->name, "softnic") == 0) {
		rc = start_fabric(cfg, pl, err, err_len);
	} else if (rc == 0) {
		pl->n_engines = cfg->engines.count ? cfg->engines.count : 1;
		rc = start_engines(cfg, pl, err, err_len);
	}
	if (rc < 0) {
		eng_destroy(pl);
		return rc;
	}
	if (pl->fabric)
		pcmd_info("data plane: the emulated softnic fabric, %u hosts (one per client)",
			  pl->n_engines);
	else
		pcmd_info("data plane: %u engine%s on datapath %s", pl->n_engines,
			  pl->n_engines == 1 ? "" : "s", pl->dp_ops->name);
	*out = pl;
	return 0;
}

static int eng_event_fd(struct pcmd_plane *pl)
{
	return pl->waiter.efd;
}

/* ---- flows --------------------------------------------------------------------------------- */

static uint32_t flow_new(struct pcmd_plane *pl, struct pcmd_plane_region *r, uint32_t conn)
{
	uint32_t f;

	for (f = 0; f < pl->n_flows; f++)
		if (!pl->flows[f].used)
			break;
	if (f == pl->n_flows) {
		uint32_t cap = pl->n_flows;

		pl->flows = grow(pl->flows, &cap, sizeof(*pl->flows));
		memset(pl->flows + pl->n_flows, 0, (cap - pl->n_flows) * sizeof(*pl->flows));
		pl->n_flows = cap;
	}
	pl->flows[f] = (struct eng_flow){.used = true, .engine = r->engine, .conn = conn, .r = r};
	pl->conn_flow[r->engine][conn] = f;
	r->refs++;
	return f;
}

static struct eng_flow *flow_of(struct pcmd_plane *pl, uint32_t f)
{
	if (f >= pl->n_flows || !pl->flows[f].used || !pl->flows[f].known) {
		pcmd_err("data plane: pcmd named flow %u, which it does not hold", f);
		return NULL;
	}
	return &pl->flows[f];
}

static void region_try_release(struct pcmd_plane *pl, struct pcmd_plane_region *r);

static void flow_free(struct pcmd_plane *pl, uint32_t f)
{
	struct eng_flow *fl = &pl->flows[f];
	struct pcmd_plane_region *r = fl->r;

	pl->conn_flow[fl->engine][fl->conn] = NO_FLOW;
	*fl = (struct eng_flow){0};
	r->refs--;
	region_try_release(pl, r);
}

static void flow_close(struct pcmd_plane *pl, uint32_t f, bool abort_now)
{
	struct eng_flow *fl = &pl->flows[f];
	struct xp_cmd cmd = {.op = XP_CMD_CLOSE, .conn = fl->conn,
			     .close_mode = abort_now ? XP_CLOSE_ABORT : XP_CLOSE_GRACEFUL};

	fl->closing = true;
	submit(pl, fl->engine, &cmd);
}

/* ---- regions ------------------------------------------------------------------------------- */

/* softnic: the host a client names ("host3", "3"; "" the first free one). */
static int pick_host(struct pcmd_plane *pl, const char *name, uint32_t *out, char *err, size_t err_len)
{
	const char *digits = strncmp(name, "host", 4) == 0 ? name + 4 : name;
	unsigned long h;
	char *end;

	if (!name[0]) {
		for (uint32_t i = 0; i < pl->n_engines; i++)
			if (!pl->engines[i]) {
				*out = i;
				return 0;
			}
		snprintf(err, err_len,
			 "all %u hosts of the emulated fabric are attached, one per client "
			 "(datapath.softnic.hosts, or the hosts of datapath.softnic.topology)",
			 pl->n_engines);
		return -EUSERS;
	}
	errno = 0;
	h = strtoul(digits, &end, 10);
	if (digits[0] < '0' || digits[0] > '9' || *end || errno || h >= pl->n_engines) {
		snprintf(err, err_len,
			 "'%s' is no host of the emulated fabric (host0..host%u; "
			 "datapath.softnic.hosts)",
			 name, pl->n_engines - 1);
		return -EINVAL;
	}
	if (pl->engines[h]) {
		snprintf(err, err_len, "host%lu is attached by another client", h);
		return -EADDRINUSE;
	}
	*out = (uint32_t)h;
	return 0;
}

/* softnic: open host @h's engine on the fabric. */
static int host_attach(struct pcmd_plane *pl, uint32_t h, char *err, size_t err_len)
{
	struct xp_engine_config ec = pl->host_ec;
	struct pcm_diag diag = {0};
	int rc;

	ec.index = h;
	ec.dp.engine = h;
	ec.dp.host = h;
	rc = pcmd_fabric_attach(pl->fabric, &ec, &pl->engines[h], &diag);
	if (rc < 0) {
		snprintf(err, err_len, "host%u's engine: %s", h,
			 diag.msg[0] ? diag.msg : strerror(-rc));
		return rc;
	}
	rc = conn_flow_alloc(pl, h);
	if (rc < 0) {
		pcmd_fabric_detach(pl->fabric, h);
		pl->engines[h] = NULL;
	}
	return rc;
}

static void on_comp(struct pcmd_plane *pl, uint32_t engine, const struct xp_engine_comp *c);

/* softnic: take host @h's last completions, then close its engine: the host is free. */
static void host_detach(struct pcmd_plane *pl, uint32_t h)
{
	struct xp_engine_comp c[COMP_BATCH];
	uint32_t n;

	do {
		n = xp_engine_poll(pl->engines[h], c, COMP_BATCH);
		for (uint32_t i = 0; i < n; i++)
			on_comp(pl, h, &c[i]);
	} while (n == COMP_BATCH);
	pcmd_fabric_detach(pl->fabric, h);
	pl->engines[h] = NULL;
	free(pl->conn_flow[h]);
	pl->conn_flow[h] = NULL;
	pl->detaching[h] = false;
}

/* softnic: detach the hosts whose region was released (not while their completions are read). */
static void hosts_reap(struct pcmd_plane *pl)
{
	for (uint32_t h = 0; pl->n_detaching && h < pl->n_engines; h++)
		if (pl->detaching[h]) {
			pl->n_detaching--;
			host_detach(pl, h);
		}
}

/* Which engine a new region goes on, and its name as a peer. */
static int region_place(struct pcmd_plane *pl, struct pcmd_plane_region *r, const char *host, char *err,
			size_t err_len)
{
	uint32_t h;
	int rc;

	pl->n_regions++;
	if (!pl->fabric) {
		r->engine = pl->next_engine++ % pl->n_engines;
		if (host && host[0])
			snprintf(r->name, sizeof(r->name), "%s", host);
		else
			snprintf(r->name, sizeof(r->name), "%s-%u", pl->dp_ops->name,
				 pl->n_regions);
		return 0;
	}
	rc = pick_host(pl, host ? host : "", &h, err, err_len);
	if (rc == 0)
		rc = host_attach(pl, h, err, err_len);
	if (rc < 0)
		return rc;
	r->engine = h;
	snprintf(r->name, sizeof(r->name), "host%u", h);
	return 0;
}

static int eng_region_add(struct pcmd_plane *pl, void *base, size_t bytes, const char *host,
			  uint64_t token, struct pcmd_plane_region **out, char *err, size_t err_len)
{
	struct pcmd_plane_region *r = calloc(1, sizeof(*r));
	struct xp_ctl *ctl = ctl_new(XP_CTL_MR_REG);
	int rc;

	if (!r || !ctl) {
		free(r);
		free(ctl);
		return -ENOMEM;
	}
	r->token = token;
	r->base = base;
	r->bytes = bytes;
	rc = region_place(pl, r, host, err, err_len);
	if (rc < 0) {
		free(r);
		free(ctl);
		return rc;
	}
	ctl->addr = base;
	ctl->len = bytes;
	rc = ctl_run(pl, r->engine, ctl);
	r->mr = ctl->mr;
	free(ctl);
	if (rc < 0) {
		if (pl->fabric)
			host_detach(pl, r->engine);
		free(r);
		return rc;
	}
	pl->regions_live++;
	*out = r;
	return 0;
}

static void port_remove(struct pcmd_plane *pl, struct pcmd_plane_region *r);

static void region_try_release(struct pcmd_plane *pl, struct pcmd_plane_region *r)
{
	struct xp_ctl *ctl;

	if (!r->releasing || r->refs)
		return;
	port_remove(pl, r); /* the engine stops serving the client before its memory goes */
	ctl = ctl_new(XP_CTL_MR_DEREG);
	if (!ctl) {
		pcmd_err("data plane: out of memory releasing a region");
		abort();
	}
	ctl->mr = r->mr;
	if (ctl_run(pl, r->engine, ctl) < 0)
		pcmd_err("data plane: engine %u refused to release region %u", r->engine, r->mr);
	free(ctl);
	if (pl->fabric && !pl->detaching[r->engine]) {
		pl->detaching[r->engine] = true;
		pl->n_detaching++;
	}
	emit_simple(pl, PCMD_PLANE_EV_REGION_RELEASED, 0, r->token, 0);
	kick(pl);
	pl->regions_live--;
	free(r);
}

static void eng_region_release(struct pcmd_plane *pl, struct pcmd_plane_region *r)
{
	r->releasing = true;
	region_try_release(pl, r);
}

/* ---- listeners and connection setup ----------------------------------------------------------- */

static struct eng_listener *find_listener(struct pcmd_plane *pl, const char *addr)
{
	for (uint32_t i = 0; i < pl->n_listeners; i++)
		if (pl->listeners[i].used && strcmp(pl->listeners[i].addr, addr) == 0)
			return &pl->listeners[i];
	return NULL;
}

static int eng_listen(struct pcmd_plane *pl, struct pcmd_plane_region *r, const char *addr,
		      uint32_t backlog, uint32_t *id)
{
	struct eng_listener *l;
	uint32_t i;

	if (find_listener(pl, addr))
		return -EADDRINUSE;
	for (i = 0; i < pl->n_listeners; i++)
		if (!pl->listeners[i].used)
			break;
	if (i == pl->n_listeners) {
		uint32_t cap = pl->n_listeners;

		pl->listeners = grow(pl->listeners, &cap, sizeof(*pl->listeners));
		memset(pl->listeners + i, 0, (cap - i) * sizeof(*pl->listeners));
		pl->n_listeners = cap;
	}
	l = &pl->listeners[i];
	free(l->accepts);
	*l = (struct eng_listener){.used = true, .r = r, .backlog = backlog ? backlog : 1};
	l->waiting = calloc(l->backlog, sizeof(*l->waiting));
	if (!l->waiting) {
		l->used = false;
		return -ENOMEM;
	}
	snprintf(l->addr, sizeof(l->addr), "%s", addr);
	r->refs++;
	*id = i;
	return 0;
}

static struct eng_listener *listener_of(struct pcmd_plane *pl, uint32_t id)
{
	if (id >= pl->n_listeners || !pl->listeners[id].used) {
		pcmd_err("data plane: pcmd named listener %u, which it does not hold", id);
		return NULL;
	}
	return &pl->listeners[id];
}

static void match_accepts(struct pcmd_plane *pl, struct eng_listener *l)
{
	while (l->n_waiting && l->n_accepts) {
		uint32_t f = l->waiting[0];
		struct eng_flow *fl = &pl->flows[f];
		struct pcmd_plane_event ev = {.kind = PCMD_PLANE_EV_ACCEPTED, .token = l->accepts[0],
					   .flow = f};
		uint32_t peer = pl->flows[f].token >> 32 ? NO_FLOW : (uint32_t)pl->flows[f].token;

		memmove(l->waiting, l->waiting + 1, --l->n_waiting * sizeof(*l->waiting));
		memmove(l->accepts, l->accepts + 1, --l->n_accepts * sizeof(*l->accepts));
		/* until it is known, a backlog flow's token holds its dialer's flow id */
		if (peer < pl->n_flows && pl->flows[peer].used)
			snprintf(ev.peer, sizeof(ev.peer), "%s", pl->flows[peer].r->name);
		fl->token = ev.token;
		fl->known = true;
		emit(pl, &ev);
	}
	kick(pl);
}

static void eng_unlisten(struct pcmd_plane *pl, uint32_t id)
{
	struct eng_listener *l = listener_of(pl, id);

	if (!l)
		return;
	for (uint32_t i = 0; i < l->n_accepts; i++)
		emit_simple(pl, PCMD_PLANE_EV_ACCEPTED, -ECONNABORTED, l->accepts[i], 0);
	/* Connections nobody accepted: pcmd never heard of them; their close is silent. */
	for (uint32_t i = 0; i < l->n_waiting; i++)
		flow_close(pl, l->waiting[i], true);
	l->n_accepts = l->n_waiting = 0;
	l->used = false;
	free(l->waiting);
	l->waiting = NULL;
	l->r->refs--;
	region_try_release(pl, l->r);
	kick(pl);
}

static int eng_accept(struct pcmd_plane *pl, uint32_t id, uint64_t token)
{
	struct eng_listener *l = listener_of(pl, id);

	if (!l)
		return -EINVAL;
	if (l->n_accepts == l->cap_accepts)
		l->accepts = grow(l->accepts, &l->cap_accepts, sizeof(*l->accepts));
	l->accepts[l->n_accepts++] = token;
	match_accepts(pl, l);
	return 0;
}

/* The engine's options for pcmd's choice of packages. */
static void conn_opts_of(const struct pcmd_plane_flow_opts *o, struct xp_conn_opts *x)
{
	memset(x, 0, sizeof(*x));
	if (!o)
		return;
	x->cc = o->cc;
	x->lb = o->lb;
	x->paths = o->paths;
	x->rc = o->reliable_connected;
	x->mode = o->mode == PCMD_SHELL_SYNC ? XP_CC_PCM_SYNC : XP_CC_PCM_ASYNC;
	x->async_mode = o->mode == PCMD_SHELL_ASYNC_LOCKED    ? PCM_ASYNC_LOCKED
			: o->mode == PCMD_SHELL_ASYNC_BOUNDED ? PCM_ASYNC_BOUNDED
							      : PCM_ASYNC_RELAXED;
	if (o->cc)
		snprintf(x->cc_name, sizeof(x->cc_name), "%s", o->cc->name);
	if (o->lb)
		snprintf(x->lb_name, sizeof(x->lb_name), "%s", o->lb->name);
}

/* Open on the dialer's engine, accept on the listener's, bind the dialer. */
static int setup_pair(struct pcmd_plane *pl, struct pcmd_plane_region *dialer, struct eng_listener *l,
		      const struct pcmd_plane_flow_opts *opts, uint32_t *a_conn, uint32_t *b_conn)
{
	struct xp_ctl *a = ctl_new(XP_CTL_CONN_OPEN), *b = ctl_new(XP_CTL_CONN_ACCEPT);
	int rc = a && b ? 0 : -ENOMEM;

	if (rc == 0) {
		conn_opts_of(opts, &a->opts);
		rc = ctl_run(pl, dialer->engine, a);
	}
	if (rc == 0) {
		/* the accepted side runs without a policy until flow_setup() names one */
		memcpy(b->peer_msg, a->msg, a->msg_len);
		b->peer_len = a->msg_len;
		rc = ctl_run(pl, l->r->engine, b);
		if (rc < 0) {
			a->op = XP_CTL_CONN_DROP;
			(void)ctl_run(pl, dialer->engine, a);
		}
	}
	if (rc == 0) {
		a->op = XP_CTL_CONN_BIND;
		memcpy(a->peer_msg, b->msg, b->msg_len);
		a->peer_len = b->msg_len;
		rc = ctl_run(pl, dialer->engine, a);
		if (rc < 0) {
			/* the dialer's side is gone (the engine aborted it); the listener's
			 * connection is reset by the abort, and closes silently */
			*b_conn = b->conn;
		}
	}
	if (rc == 0) {
		*a_conn = a->conn;
		*b_conn = b->conn;
	}
	free(a);
	free(b);
	return rc;
}

static int eng_connect(struct pcmd_plane *pl, struct pcmd_plane_region *r, const char *addr,
		       const struct pcmd_plane_flow_opts *opts, uint64_t token)
{
	struct eng_listener *l = find_listener(pl, addr);
	uint32_t a_conn = 0, b_conn = UINT32_MAX, a, b;
	int rc;

	if (!l || l->n_waiting == l->backlog) {
		emit_simple(pl, PCMD_PLANE_EV_CONNECTED, -ECONNREFUSED, token, 0);
		kick(pl);
		return 0;
	}
	rc = setup_pair(pl, r, l, opts, &a_conn, &b_conn);
	if (rc < 0) {
		if (b_conn != UINT32_MAX) {
			b = flow_new(pl, l->r, b_conn);
			flow_close(pl, b, true);
		}
		emit_simple(pl, PCMD_PLANE_EV_CONNECTED, rc, token, 0);
		kick(pl);
		return 0;
	}
	a = flow_new(pl, r, a_conn);
	b = flow_new(pl, l->r, b_conn);
	pl->flows[a].known = true;
	pl->flows[a].token = token;
	pl->flows[b].token = a; /* the dialer, for the peer's name (match_accepts) */
	l->waiting[l->n_waiting++] = b;
	emit_simple(pl, PCMD_PLANE_EV_CONNECTED, 0, token, a);
	match_accepts(pl, l);
	return 0;
}

static int set_cc(struct pcmd_plane *pl, uint32_t f, const struct pcmd_plane_flow_opts *opts)
{
	struct eng_flow *fl = flow_of(pl, f);
	struct xp_ctl *ctl;
	int rc;

	if (!fl)
		return -EINVAL;
	if (fl->closing)
		return -ESHUTDOWN;
	ctl = ctl_new(XP_CTL_SET_CC);
	if (!ctl)
		return -ENOMEM;
	ctl->conn = fl->conn;
	conn_opts_of(opts, &ctl->opts);
	rc = ctl_run(pl, fl->engine, ctl);
	free(ctl);
	return rc;
}

static int eng_flow_setup(struct pcmd_plane *pl, uint32_t f, const struct pcmd_plane_flow_opts *opts)
{
	return set_cc(pl, f, opts);
}

static int eng_set_policy(struct pcmd_plane *pl, uint32_t f, const struct pcmd_plane_flow_opts *opts)
{
	return set_cc(pl, f, opts);
}

/* ---- data ------------------------------------------------------------------------------------ */

static void eng_close(struct pcmd_plane *pl, uint32_t f, bool abort_now)
{
	struct eng_flow *fl = flow_of(pl, f);

	if (fl && !fl->closing)
		flow_close(pl, f, abort_now);
}

static int grow_queries(struct pcmd_plane *pl)
{
	struct xp_conn_query *q;
	uint32_t *qf;

	if (pl->queries_cap >= pl->n_flows)
		return 0;
	q = realloc(pl->queries, pl->n_flows * sizeof(*q));
	if (!q)
		return -ENOMEM;
	pl->queries = q;
	qf = realloc(pl->query_flow, pl->n_flows * sizeof(*qf));
	if (!qf)
		return -ENOMEM;
	pl->query_flow = qf;
	pl->queries_cap = pl->n_flows;
	return 0;
}

/* Read the core's figures of every flow on @engine in one control request. */
static int read_figures(struct pcmd_plane *pl, uint32_t engine, uint64_t now_ns)
{
	struct xp_ctl *ctl;
	uint32_t n = 0;
	int rc = grow_queries(pl);

	if (rc < 0)
		return rc;
	for (uint32_t f = 0; f < pl->n_flows; f++) {
		if (!pl->flows[f].used || pl->flows[f].engine != engine)
			continue;
		pl->queries[n] = (struct xp_conn_query){.conn = pl->flows[f].conn};
		pl->query_flow[n++] = f;
	}
	ctl = ctl_new(XP_CTL_CONN_INFO);
	if (!ctl)
		return -ENOMEM;
	ctl->addr = pl->queries;
	ctl->len = n;
	rc = ctl_run(pl, engine, ctl);
	free(ctl);
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		struct eng_flow *fl = &pl->flows[pl->query_flow[i]];

		fl->figures_ns = now_ns;
		fl->figures_status = pl->queries[i].status;
		fl->info = pl->queries[i].info;
	}
	return rc;
}

static int eng_flow_stats(struct pcmd_plane *pl, uint32_t f, struct pcmd_flow_measure *out)
{
	struct eng_flow *fl = flow_of(pl, f);
	uint64_t now = xp_mono_ns();
	int rc;

	if (!fl)
		return -EINVAL;
	if (!fl->figures_ns || now - fl->figures_ns >= FIGURES_FRESH_NS) {
		rc = read_figures(pl, fl->engine, now);
		if (rc < 0)
			return rc;
	}
	if (fl->figures_status < 0)
		return fl->figures_status;
	memset(out, 0, sizeof(*out));
	out->valid = PCMD_FIELD_CWND | PCMD_FIELD_RATE | PCMD_FIELD_RTT | PCMD_FIELD_INFLIGHT |
		     PCMD_FIELD_RETRANSMITS | PCMD_FIELD_RTOS;
	out->cwnd_bytes = fl->info.cwnd_bytes;
	out->rate_bps = fl->info.rate_bps;
	out->srtt_ns = fl->info.srtt_ns;
	out->rttvar_ns = fl->info.rttvar_ns;
	out->in_flight_bytes = fl->info.in_flight_bytes;
	out->retransmits = fl->info.chunks_retx;
	out->rtos = fl->info.rto_fires;
	return 0;
}

/* The seam's status for a post's completion: a local abort reads -ECONNABORTED. */
static int seam_status(bool aborted, int status)
{
	return aborted && status == -ECANCELED ? -ECONNABORTED : status;
}

/* ---- ports: the client's descriptor path on the engine ------------------------------------------ */

static int port_post(void *arg, uint64_t handle, uint8_t op, uint64_t off, uint64_t len,
		     uint64_t token)
{
	struct eng_port *p = arg;
	struct xp_cmd cmd = {.op = op == PCMD_OP_SEND ? XP_CMD_SEND : XP_CMD_RECV,
			     .conn = (uint32_t)handle, .mr = p->mr, .len = len, .cookie = token};

	if (off > p->bytes || len > p->bytes - off)
		return -EFAULT; /* pcmd checked it already: never reached */
	cmd.addr = p->base + off;
	/* the engine checks the connection and the region again; one completion follows */
	xp_engine_port_post(p->e, &p->xp, &cmd, p->now_ns);
	return 0;
}

static uint32_t port_intake(void *arg, struct xp_engine *e, struct xp_port *xp, uint64_t now_ns)
{
	struct eng_port *p = arg;

	(void)e;
	(void)xp;
	p->now_ns = now_ns;
	return p->pcmd.intake(p->pcmd.arg, port_post, p);
}

static void port_complete(void *arg, const struct xp_engine_comp *c)
{
	struct eng_port *p = arg;

	p->pcmd.complete(p->pcmd.arg, c->cookie,
			 seam_status(xp_engine_conn_aborted(p->e, c->conn), c->status), c->bytes);
}

static void port_flush(void *arg)
{
	struct eng_port *p = arg;

	p->pcmd.flush(p->pcmd.arg);
}

static bool port_arm(void *arg)
{
	struct eng_port *p = arg;

	return p->pcmd.arm(p->pcmd.arg);
}

static const struct xp_port_ops eng_port_ops = {
    .intake = port_intake,
    .complete = port_complete,
    .flush = port_flush,
    .arm = port_arm,
};

/* The fd that wakes whoever runs @r's engine: its thread, or the fabric's. */
static int runner_doorbell(struct pcmd_plane *pl, struct pcmd_plane_region *r)
{
	if (pl->fabric)
		return pcmd_fabric_doorbell_fd(pl->fabric);
	return xp_engine_doorbell_fd(pl->engines[r->engine]);
}

static int eng_port_add(struct pcmd_plane *pl, struct pcmd_plane_region *r,
			const struct pcmd_plane_port *port, int *doorbell_fd)
{
	struct eng_port *p;
	struct xp_ctl *ctl;
	int fd, rc;

	if (r->port)
		return -EEXIST;
	fd = runner_doorbell(pl, r);
	fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd < 0)
		return -errno ? -errno : -EBADF;
	p = calloc(1, sizeof(*p));
	ctl = ctl_new(XP_CTL_PORT_ADD);
	if (!p || !ctl) {
		free(p);
		free(ctl);
		close(fd);
		return -ENOMEM;
	}
	*p = (struct eng_port){.xp = {.ops = &eng_port_ops, .arg = p}, .pcmd = *port,
			       .e = pl->engines[r->engine], .mr = r->mr,
			       .base = (uint64_t)(uintptr_t)r->base, .bytes = r->bytes};
	ctl->addr = &p->xp;
	rc = ctl_run(pl, r->engine, ctl);
	free(ctl);
	if (rc < 0) {
		free(p);
		close(fd);
		return rc;
	}
	r->port = p;
	*doorbell_fd = fd;
	return 0;
}

static void port_remove(struct pcmd_plane *pl, struct pcmd_plane_region *r)
{
	struct xp_ctl *ctl;

	if (!r->port)
		return;
	ctl = ctl_new(XP_CTL_PORT_DEL);
	if (!ctl) {
		pcmd_err("data plane: out of memory removing a port");
		abort(); /* the engine would keep serving memory about to be unmapped */
	}
	ctl->addr = &r->port->xp;
	if (ctl_run(pl, r->engine, ctl) < 0)
		pcmd_err("data plane: engine %u did not hold region %u's port", r->engine, r->mr);
	free(ctl);
	free(r->port);
	r->port = NULL;
}

static int eng_call(struct pcmd_plane *pl, struct pcmd_plane_region *r, int (*fn)(void *arg),
		    void *arg)
{
	struct xp_ctl *ctl;
	int rc;

	if (!r->port)
		return fn(arg); /* nothing of the region runs on the engine */
	ctl = ctl_new(XP_CTL_CALL);
	if (!ctl)
		return -ENOMEM;
	ctl->call = fn;
	ctl->call_arg = arg;
	rc = ctl_run(pl, r->engine, ctl);
	free(ctl);
	return rc;
}

static uint64_t eng_flow_handle(struct pcmd_plane *pl, uint32_t f)
{
	struct eng_flow *fl = flow_of(pl, f);

	return fl ? fl->conn : UINT32_MAX;
}

/* ---- completions ------------------------------------------------------------------------------ */

static void on_comp(struct pcmd_plane *pl, uint32_t engine, const struct xp_engine_comp *c)
{
	uint32_t f = c->conn < pl->max_conns ? pl->conn_flow[engine][c->conn] : NO_FLOW;
	struct eng_flow *fl = f != NO_FLOW ? &pl->flows[f] : NULL;

	/* Control requests are waited for, not notified; sends and receives
	 * complete through their port: only closes come back here. */
	if (c->kind != XP_ECOMP_CLOSE || !fl)
		return;
	if (fl->known)
		emit_simple(pl, PCMD_PLANE_EV_CLOSED, 0, fl->token, f);
	flow_free(pl, f);
}

static uint32_t take_completions(struct pcmd_plane *pl)
{
	struct xp_engine_comp c[COMP_BATCH];
	uint32_t total = 0;

	for (uint32_t e = 0; e < pl->n_engines; e++) {
		uint32_t n;

		if (!pl->engines[e])
			continue; /* softnic: a free host */
		do {
			n = xp_engine_poll(pl->engines[e], c, COMP_BATCH);
			for (uint32_t i = 0; i < n; i++)
				on_comp(pl, e, &c[i]);
			total += n;
		} while (n == COMP_BATCH);
	}
	if (total && pl->fabric)
		pcmd_fabric_kick(pl->fabric); /* room in the rings: completions waiting may go */
	return total;
}

static int eng_poll(struct pcmd_plane *pl, struct pcmd_plane_event *evs, int max)
{
	int n;

	/* The eventfd's count is pcmd's loop's to take (its bell read it): no read() here. */
	take_completions(pl);
	/* Announce that pcmd will wait for the eventfd, then look again: an
	 * engine publishing after the look sees `waiting` and writes the
	 * eventfd (a completion taken by the second look costs at most one
	 * spurious wake-up): xp_wake.h's protocol. */
	xp_wake_arm(&pl->waiter.waiting);
	take_completions(pl);
	hosts_reap(pl);
	n = (int)pl->ev_n < max ? (int)pl->ev_n : max;
	if (n > 0)
		memcpy(evs, pl->evs + pl->ev_head, (size_t)n * sizeof(*evs));
	pl->ev_head += (uint32_t)n;
	pl->ev_n -= (uint32_t)n;
	if (!pl->ev_n)
		pl->ev_head = 0;
	else
		kick(pl); /* more wait: poll again */
	return n;
}

static const char *eng_datapath(struct pcmd_plane *pl)
{
	return pl->dp_ops->name;
}

static uint64_t eng_max_message_bytes(struct pcmd_plane *pl)
{
	return pl->max_msg_bytes;
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
    .region_add = eng_region_add,
    .region_release = eng_region_release,
    .listen = eng_listen,
    .unlisten = eng_unlisten,
    .accept = eng_accept,
    .connect = eng_connect,
    .flow_setup = eng_flow_setup,
    .close = eng_close,
    .flow_stats = eng_flow_stats,
    .set_policy = eng_set_policy,
    .datapath = eng_datapath,
    .max_message_bytes = eng_max_message_bytes,
    .port_add = eng_port_add,
    .call = eng_call,
    .flow_handle = eng_flow_handle,
};
