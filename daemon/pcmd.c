// SPDX-License-Identifier: MIT
/*
 * pcmd.c - the daemon's lifecycle on its loop: start (config, policies, data
 * plane, socket, signals, READY), the periodic work (status, stats file,
 * watchdog, the deadlines of peers that did not say HELLO or were refused,
 * memory given back to the system after clients left), SIGHUP reloads that
 * apply a new config only once all of it has been checked, and the SIGTERM
 * shutdown: stop taking clients and work, let
 * posted sends finish (drain) up to shutdown.drain_timeout_ms, then abort
 * everything left, so every outstanding descriptor completes (with
 * -ECONNABORTED) before pcmd exits.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "client.h"
#include "control.h"
#include "log.h"
#include "notify.h"
#include "pcm_units.h"
#include "pcmd.h"
#include "pcmd_metrics.h"
#include "preflight.h"

#define PLANE_EVENT_BATCH 64
#define PLANE_EVENT_ROUNDS 16
#define STOP_GRACE_NS 3000000000ull /* after the abort: longest wait for the data plane */
#define FLUSH_GRACE_NS 5000000000ull /* after the stop: longest wait for the files' last lines */

#define OWNER(ptr, member) ((struct pcmd *)((char *)(ptr)-offsetof(struct pcmd, member)))

/* ---- status ------------------------------------------------------------------------------ */

void pcmd_status_line(struct pcmd *d, char *buf, size_t len)
{
	struct pcmd_rep_stats t;
	char rate[32];

	pcmd_clients_totals(d, &t);
	pcm_units_format_rate(d->counters.snap.goodput_bps, "bit/s", rate, sizeof(rate));
	snprintf(buf, len, "%s: %llu clients, %llu flows, goodput %s",
		 d->phase == PCMD_PHASE_RUNNING ? "running" : "stopping",
		 (unsigned long long)t.clients, (unsigned long long)t.flows, rate);
}

/* ---- loop callbacks -------------------------------------------------------------------- */

static void accept_done(struct pcmd_op *op, int res);
static void signal_done(struct pcmd_op *op, int res);
static void plane_done(struct pcmd_bell *bell, int res);
static void status_tick(struct pcmd_op *op, int res);
static void stats_tick(struct pcmd_op *op, int res);
static void watchdog_tick(struct pcmd_op *op, int res);
static void expire_tick(struct pcmd_op *op, int res);
static void drain_expired(struct pcmd_op *op, int res);
static void stop_expired(struct pcmd_op *op, int res);

static void arm_accept(struct pcmd *d)
{
	if (d->phase != PCMD_PHASE_RUNNING || d->listen_fd < 0 || d->accept_op.pending)
		return;
	d->accept_op.done = accept_done;
	if (pcmd_loop_accept(d->loop, &d->accept_op, d->listen_fd) < 0)
		pcmd_err("cannot queue accept on the control socket");
}

static void accept_done(struct pcmd_op *op, int res)
{
	struct pcmd *d = OWNER(op, accept_op);

	if (res >= 0) {
		if (d->phase == PCMD_PHASE_RUNNING)
			pcmd_control_accept(d, res);
		else
			close(res);
	} else if (res != -ECANCELED && d->phase == PCMD_PHASE_RUNNING) {
		pcmd_warn("accept on %s: %s", d->cfg->socket.path, strerror(-res));
		/* Out of fds: do not spin; the next client is taken on the next status tick. */
		if (res == -EMFILE || res == -ENFILE || res == -ENOMEM)
			return;
	}
	arm_accept(d);
}

static void arm_signal(struct pcmd *d)
{
	d->signal_op.done = signal_done;
	if (pcmd_loop_poll(d->loop, &d->signal_op, d->signal_fd, POLLIN) < 0)
		pcmd_err("cannot queue the signal wait");
}

static void signal_done(struct pcmd_op *op, int res)
{
	struct pcmd *d = OWNER(op, signal_op);

	while (res >= 0 &&
	       read(d->signal_fd, &d->siginfo, sizeof(d->siginfo)) == (ssize_t)sizeof(d->siginfo)) {
		if (d->siginfo.ssi_signo == SIGHUP && d->phase == PCMD_PHASE_RUNNING)
			pcmd_reload(d);
		else if (d->siginfo.ssi_signo == SIGTERM || d->siginfo.ssi_signo == SIGINT)
			pcmd_shutdown(d);
	}
	if (d->phase != PCMD_PHASE_DONE)
		arm_signal(d);
}

static void arm_plane(struct pcmd *d)
{
	if (d->plane_fd < 0 || d->phase == PCMD_PHASE_DONE)
		return;
	if (pcmd_loop_bell(d->loop, &d->plane_bell, d->plane_fd, plane_done) < 0)
		pcmd_err("cannot queue the data plane's event wait");
}

void pcmd_plane_drain(struct pcmd *d)
{
	struct pcmd_plane_event evs[PLANE_EVENT_BATCH];

	for (int round = 0; round < PLANE_EVENT_ROUNDS; round++) {
		int n = d->plane_ops->poll(d->plane, evs, PLANE_EVENT_BATCH);

		if (n < 0) {
			pcmd_err("data plane poll: %s", strerror(-n));
			break;
		}
		for (int i = 0; i < n; i++)
			pcmd_client_plane_event(d, &evs[i]);
		if (n < PLANE_EVENT_BATCH)
			break;
	}
	pcmd_clients_flush_all(d);
}

static void plane_done(struct pcmd_bell *bell, int res)
{
	struct pcmd *d = OWNER(bell, plane_bell);

	if (res >= 0)
		pcmd_plane_drain(d);
	arm_plane(d);
}

static void arm_timer(struct pcmd *d, struct pcmd_op *op, pcmd_op_fn fn, uint64_t ns)
{
	op->done = fn;
	if (pcmd_loop_timeout(d->loop, op, ns) < 0)
		pcmd_err("cannot queue a timer");
}

static void status_tick(struct pcmd_op *op, int res)
{
	struct pcmd *d = OWNER(op, status_timer);
	struct pcmd_rep_stats t;
	char line[256];

	if (d->phase == PCMD_PHASE_DONE)
		return;
	pcmd_clients_totals(d, &t);
	pcmd_stats_goodput_update(&d->counters, t.rx_bytes, pcmd_now_ns());
	pcmd_clients_user_goodput(d, pcmd_now_ns());
	pcmd_status_line(d, line, sizeof(line));
	pcmd_notify_status(line);
	arm_accept(d); /* after an fd shortage */
	arm_timer(d, op, status_tick, (uint64_t)d->cfg->output.status_interval_ms * 1000000ull);
}

/* The flows the metrics file's per-flow series show. Return: their count (*out malloc'd). */
static uint32_t open_flows(struct pcmd *d, struct pcmd_flow_info **out)
{
	uint32_t n = 0, cap = 0;

	*out = NULL;
	for (uint32_t s = 0; s < d->n_slots; s++) {
		struct pcmd_client *c = d->slots[s];

		for (uint32_t i = 0; c && c->conns && i < c->max_flows; i++) {
			if (!pcmd_conn_listed(&c->conns[i]))
				continue;
			if (n == cap) {
				struct pcmd_flow_info *grown =
				    realloc(*out, (cap = cap ? 2 * cap : 64) * sizeof(**out));

				if (!grown)
					return n;
				*out = grown;
			}
			pcmd_flow_info(c, i, &(*out)[n++]);
		}
	}
	return n;
}

/* The metrics file: the Prometheus text of the snapshot, replaced whole. */
static void write_metrics(struct pcmd *d, const struct pcmd_rep_stats *s)
{
	struct pcmd_flow_info *flows = NULL;
	uint32_t n = d->cfg->output.metrics_per_flow ? open_flows(d, &flows) : 0;
	bool per_flow = d->cfg->output.metrics_per_flow;
	size_t len = pcmd_metrics_prometheus(s, per_flow ? flows : NULL, n, d->run_id, NULL, 0);
	char *text = malloc(len + 1);

	if (text) {
		pcmd_metrics_prometheus(s, per_flow ? flows : NULL, n, d->run_id, text, len + 1);
		pcmd_replacer_write(&d->output.metrics, text, len);
	}
	free(text);
	free(flows);
}

static void stats_tick(struct pcmd_op *op, int res)
{
	struct pcmd *d = OWNER(op, stats_timer);
	struct pcmd_rep_stats s;
	char line[4096];

	if (d->phase == PCMD_PHASE_DONE)
		return;
	pcmd_clients_totals(d, &s);
	pcmd_stats_fill(&d->output, pcmd_now_ns() - d->start_ns, &s);
	if (pcmd_writer_active(&d->output.stats)) {
		pcmd_stats_json_line(&s, pcmd_now_ns(), pcmd_wall_ns(), line, sizeof(line));
		pcmd_writer_append(&d->output.stats, line);
	}
	if (d->output.metrics.path[0])
		write_metrics(d, &s);
	arm_timer(d, op, stats_tick, (uint64_t)d->cfg->output.stats_interval_ms * 1000000ull);
}

/* How often deadlines are looked at: a quarter of the HELLO timeout, 10 ms to 1 s. */
static uint64_t expire_period_ns(const struct pcmd *d)
{
	uint64_t ms = d->cfg->limits.hello_timeout_ms / 4;

	return (ms < 10 ? 10 : ms > 1000 ? 1000 : ms) * 1000000ull;
}

static void expire_tick(struct pcmd_op *op, int res)
{
	struct pcmd *d = OWNER(op, expire_timer);

	if (d->phase == PCMD_PHASE_DONE)
		return;
	pcmd_clients_expire(d, pcmd_now_ns());
	/*
	 * The engines of departed clients were freed on other threads, into malloc arenas
	 * that keep their pages: give them back (an attach and detach cycle of 14 softnic
	 * hosts otherwise leaves pcmd at ~240 MB).
	 */
	if (d->trim_memory) {
		d->trim_memory = false;
		malloc_trim(0);
	}
	arm_timer(d, op, expire_tick, expire_period_ns(d));
}

static void watchdog_tick(struct pcmd_op *op, int res)
{
	struct pcmd *d = OWNER(op, watchdog_timer);

	if (d->phase == PCMD_PHASE_DONE)
		return;
	pcmd_notify_watchdog();
	arm_timer(d, op, watchdog_tick, d->watchdog_ns);
}

/* ---- shutdown -------------------------------------------------------------------------- */

static uint32_t sends_outstanding(const struct pcmd *d)
{
	uint32_t n = 0;

	for (uint32_t s = 0; s < d->n_slots; s++)
		if (d->slots[s] && d->slots[s]->state == PCMD_CLIENT_ALIVE && d->slots[s]->intake)
			n += pcmd_intake_sends_outstanding(d->slots[s]->intake);
	return n;
}

static void begin_abort(struct pcmd *d)
{
	d->phase = PCMD_PHASE_ABORTING;
	pcmd_loop_cancel(d->loop, &d->drain_timer);
	pcmd_info("aborting what is left: %u client(s)", d->n_clients);
	for (uint32_t s = 0; s < d->n_slots; s++) {
		struct pcmd_client *c = d->slots[s];

		if (!c || c->state != PCMD_CLIENT_ALIVE)
			continue;
		pcmd_client_send_notice(c, PCMD_NOTICE_SHUTDOWN, -ESHUTDOWN,
					"pcmd is stopping: outstanding work completes with "
					"-ECONNABORTED");
		pcmd_client_kill(c, "was disconnected: pcmd is stopping");
	}
	/* The data plane gets a few seconds to give everything back. */
	arm_timer(d, &d->stop_timer, stop_expired, STOP_GRACE_NS);
}

static void drain_expired(struct pcmd_op *op, int res)
{
	struct pcmd *d = OWNER(op, drain_timer);

	if (res == -ECANCELED || d->phase != PCMD_PHASE_DRAINING)
		return;
	pcmd_warn("drain timeout (%u ms): %u send(s) still outstanding are aborted",
		  d->cfg->shutdown.drain_timeout_ms, sends_outstanding(d));
	begin_abort(d);
}

static void stop_expired(struct pcmd_op *op, int res)
{
	struct pcmd *d = OWNER(op, stop_timer);

	if (res == -ECANCELED || d->phase != PCMD_PHASE_ABORTING)
		return;
	pcmd_err("the data plane did not release %u client(s) in time; exiting anyway",
		 d->n_clients);
	d->phase = PCMD_PHASE_DONE;
}

void pcmd_shutdown(struct pcmd *d)
{
	if (d->phase != PCMD_PHASE_RUNNING) {
		if (d->phase == PCMD_PHASE_DRAINING) {
			pcmd_info("second stop request: aborting at once");
			begin_abort(d);
		}
		return;
	}
	d->phase = PCMD_PHASE_DRAINING;
	pcmd_notify_stopping();
	pcmd_info("stopping (%s): %u client(s), %u send(s) outstanding",
		  d->cfg->shutdown.mode == PCMD_SHUTDOWN_ABORT ? "abort" : "drain", d->n_clients,
		  sends_outstanding(d));
	pcmd_loop_cancel(d->loop, &d->accept_op);
	pcmd_control_close(d);
	if (d->cfg->shutdown.mode == PCMD_SHUTDOWN_ABORT || sends_outstanding(d) == 0)
		begin_abort(d);
	else
		arm_timer(d, &d->drain_timer, drain_expired,
			  (uint64_t)d->cfg->shutdown.drain_timeout_ms * 1000000ull);
}

static void shutdown_check(struct pcmd *d)
{
	if (d->phase == PCMD_PHASE_DRAINING && sends_outstanding(d) == 0)
		begin_abort(d);
	if (d->phase == PCMD_PHASE_ABORTING && d->n_clients == 0)
		d->phase = PCMD_PHASE_DONE;
}

/* ---- reload ---------------------------------------------------------------------------- */

/*
 * The allow and admin lists apply to connected clients too: a client the
 * reloaded config no longer allows is told why and disconnected (its flows
 * aborted, as for any client that leaves); admin rights follow the lists.
 */
static void recheck_access(struct pcmd *d)
{
	char why[PCMD_ERRTEXT_MAX], text[PCMD_ERRTEXT_MAX];

	for (uint32_t s = 0; s < d->n_slots; s++) {
		struct pcmd_client *c = d->slots[s];

		if (!c || c->state != PCMD_CLIENT_ALIVE || c->refused)
			continue;
		if (pcmd_access_check(d->cfg, &c->cred, c->groups, c->n_groups, why,
				      sizeof(why)) == 0) {
			c->admin = pcmd_access_admin(d->cfg, &c->cred, c->groups, c->n_groups);
			continue;
		}
		snprintf(text, sizeof(text), "the reloaded configuration no longer allows it: %s",
			 why);
		pcmd_client_send_notice(c, PCMD_NOTICE_REVOKED, -EACCES, text);
		pcmd_client_kill(c, "was disconnected: the reloaded configuration no longer allows "
				    "it");
	}
}

/* Keys that need a restart keep their running values; say so. */
static void keep_restart_only(const struct pcmd_config *old, struct pcmd_config *new)
{
	static const struct {
		const char *key;
		size_t off, len;
	} keys[] = {
#define K(k, m) {k, offsetof(struct pcmd_config, m), sizeof(((struct pcmd_config *)0)->m)}
	    K("socket.path", socket.path),
	    K("socket.group", socket.group),
	    K("socket.mode", socket.mode),
	    K("datapath", datapath),
	    K("engines", engines),
	    K("workers", workers),
	    K("limits.max_clients", limits.max_clients),
	    K("limits.admin_clients", limits.admin_clients),
#undef K
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const uint8_t *o = (const uint8_t *)old + keys[i].off;
		uint8_t *n = (uint8_t *)new + keys[i].off;

		if (memcmp(o, n, keys[i].len) != 0) {
			pcmd_warn("reload: %s changed; it takes effect when pcmd restarts",
				  keys[i].key);
			memcpy(n, o, keys[i].len);
		}
	}
}

/*
 * Who may read the files: the stats and records files (uids, pids, peers)
 * only pcmd's user, or output.group too; the metrics file (counters without
 * names, unless output.metrics_per_flow) whoever can reach its directory.
 */
static void output_access(const struct pcmd_config *cfg, struct pcmd_file_access *files,
			  struct pcmd_file_access *metrics)
{
	uint32_t gid;

	*files = (struct pcmd_file_access){.mode = 0600, .gid = (gid_t)-1};
	if (cfg->output.group[0] && pcmd_config_group_id(cfg->output.group, &gid) == 0)
		*files = (struct pcmd_file_access){.mode = 0640, .gid = (gid_t)gid};
	*metrics = (struct pcmd_file_access){.mode = 0644, .gid = (gid_t)-1};
}

static int reload_outputs(struct pcmd *d, const struct pcmd_config *cfg)
{
	struct pcmd_file_access files, metrics;
	int rc;

	output_access(cfg, &files, &metrics);
	pcmd_replacer_set(&d->output.metrics, d->loop, cfg->output.metrics_path, &metrics);
	rc = pcmd_writer_open(&d->output.stats, d->loop, cfg->output.stats_path, NULL, &files);
	if (rc < 0) {
		pcmd_warn("output.stats_path %s: %s", cfg->output.stats_path, strerror(-rc));
		return rc;
	}
	rc = pcmd_writer_open(&d->output.records, d->loop, cfg->output.records_path,
			      PCMD_RECORDS_HEADER, &files);
	if (rc < 0)
		pcmd_warn("output.records_path %s: %s", cfg->output.records_path, strerror(-rc));
	return rc;
}

static void refresh_rule_indices(struct pcmd *d)
{
	for (uint32_t s = 0; s < d->n_slots; s++) {
		struct pcmd_client *c = d->slots[s];

		for (uint32_t i = 0; c && c->conns && i < c->max_flows; i++)
			if (c->conns[i].state != PCMD_CONN_FREE)
				c->conns[i].choice.rule =
				    pcmd_config_find_rule(d->cfg, c->conns[i].peer);
	}
}

int pcmd_reload(struct pcmd *d)
{
	struct pcmd_config *cfg = malloc(sizeof(*cfg));
	char err[PCMD_CFG_ERR_MAX], line[256];
	int rc;

	if (!cfg)
		return -ENOMEM;
	pcmd_notify_reloading();
	rc = pcmd_config_load(d->config_path[0] ? d->config_path : NULL, &d->ovr, cfg, err,
			      sizeof(err));
	if (rc == 0) {
		pcmd_config_resolve(cfg, d->sysfs_ib);
		keep_restart_only(d->cfg, cfg);
		rc = pcmd_preflight(cfg, err, sizeof(err));
	}
	if (rc == 0)
		rc = pcmd_policies_prepare(d->policies, cfg, err, sizeof(err));
	if (rc < 0) {
		pcmd_err("reload rejected, the running configuration is unchanged: %s", err);
		d->counters.snap.reload_failures++;
		free(cfg);
		pcmd_status_line(d, line, sizeof(line));
		pcmd_notify_ready(line);
		return rc;
	}
	free(d->cfg);
	d->cfg = cfg;
	pcmd_policies_gc(d->policies, cfg);
	refresh_rule_indices(d);
	recheck_access(d);
	reload_outputs(d, cfg);
	pcmd_log_set_level(cfg->log_level);
	d->generation++;
	d->counters.snap.reloads++;
	pcmd_info("configuration reloaded from %s (generation %u)",
		  d->config_path[0] ? d->config_path : "(defaults)", d->generation);
	pcmd_status_line(d, line, sizeof(line));
	pcmd_notify_ready(line);
	return 0;
}

/* ---- create, run, destroy -------------------------------------------------------------- */

static int open_signals(struct pcmd *d)
{
	sigset_t mask;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	d->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return d->signal_fd < 0 ? -errno : 0;
}

/* Say so when the data plane carries less than limits.max_message_bytes. */
static void note_max_message(const struct pcmd *d)
{
	uint64_t given = pcmd_plane_max_message_bytes(d->plane_ops, d->plane, d->cfg);

	/* (The data plane says why, when its chunks are smaller than datapath.chunk_bytes.) */
	if (given < d->cfg->limits.max_message_bytes)
		pcmd_warn("limits.max_message_bytes (%llu) is above the %llu bytes data plane %s "
			  "carries: clients are given %llu",
			  (unsigned long long)d->cfg->limits.max_message_bytes,
			  (unsigned long long)given,
			  pcmd_plane_datapath(d->plane_ops, d->plane, d->cfg),
			  (unsigned long long)given);
}

static int open_plane(struct pcmd *d, const struct pcmd_plane_ops *plane, char *err, size_t err_len)
{
	const char *missing = pcmd_plane_ops_check(plane);
	int rc;

	if (missing) {
		snprintf(err, err_len, "data plane '%s' lacks %s", plane->name ? plane->name : "?",
			 missing);
		return -EINVAL;
	}
	d->plane_ops = plane;
	rc = plane->create(d->cfg, &d->plane, err, err_len);
	if (rc < 0)
		return rc;
	d->plane_fd = plane->event_fd(d->plane);
	note_max_message(d);
	return 0;
}

static int load_config(struct pcmd *d, char *err, size_t err_len)
{
	int rc;

	d->cfg = malloc(sizeof(*d->cfg));
	if (!d->cfg)
		return -ENOMEM;
	rc = pcmd_config_load(d->config_path[0] ? d->config_path : NULL, &d->ovr, d->cfg, err,
			      err_len);
	if (rc < 0)
		return rc;
	pcmd_config_resolve(d->cfg, d->sysfs_ib);
	pcmd_log_set_level(d->cfg->log_level);
	rc = pcmd_policies_create(pcmd_datapath_target(d->cfg->datapath.resolved), &d->policies);
	if (rc < 0) {
		snprintf(err, err_len, "policy registry: %s", strerror(-rc));
		return rc;
	}
	return pcmd_policies_prepare(d->policies, d->cfg, err, err_len);
}

static int alloc_slots(struct pcmd *d)
{
	d->n_slots = d->cfg->limits.max_clients + d->cfg->limits.admin_clients + PCMD_SPARE_SLOTS;
	d->slots = calloc(d->n_slots, sizeof(*d->slots));
	d->slot_gen = calloc(d->n_slots, sizeof(*d->slot_gen));
	return d->slots && d->slot_gen ? 0 : -ENOMEM;
}

/* 64 random bits (the wall clock and pid stirred in if the kernel has no randomness yet). */
static uint64_t new_run_id(void)
{
	uint64_t id = 0;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id))
		id = pcmd_wall_ns() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32;
	return id;
}

/* The end of a constructor: hand out @d, or say why and undo it. */
static int created(struct pcmd *d, int rc, struct pcmd **out, char *err, size_t err_len)
{
	if (rc < 0) {
		if (!err[0])
			snprintf(err, err_len, "%s", strerror(-rc));
		pcmd_destroy(d);
		return rc;
	}
	*out = d;
	return 0;
}

int pcmd_create_core(const char *config_path, const struct pcmd_overrides *ovr,
		     const struct pcmd_plane_ops *plane, struct pcmd **out, char *err,
		     size_t err_len)
{
	struct pcmd *d = calloc(1, sizeof(*d));
	int rc;

	err[0] = '\0';
	if (!d)
		return -ENOMEM;
	d->listen_fd = d->signal_fd = d->plane_fd = -1;
	d->output.stats.fd = d->output.stats.retired_fd = -1;
	d->output.records.fd = d->output.records.retired_fd = -1;
	d->output.metrics.fd = -1;
	d->phase = PCMD_PHASE_RUNNING;
	d->generation = 1;
	d->start_ns = pcmd_now_ns();
	d->run_id = new_run_id();
	snprintf(d->config_path, sizeof(d->config_path), "%s", config_path ? config_path : "");
	snprintf(d->sysfs_ib, sizeof(d->sysfs_ib), "/sys/class/infiniband");
	if (ovr)
		d->ovr = *ovr;
	rc = load_config(d, err, err_len);
	if (rc == 0)
		rc = alloc_slots(d);
	if (rc == 0 && (rc = pcmd_loop_create(256, &d->loop)) < 0)
		snprintf(err, err_len, "io_uring: %s", strerror(-rc));
	if (rc == 0)
		rc = open_plane(d, plane, err, err_len);
	return created(d, rc, out, err, err_len);
}

int pcmd_create(const char *config_path, const struct pcmd_overrides *ovr,
		const struct pcmd_plane_ops *plane, struct pcmd **out, char *err, size_t err_len)
{
	struct pcmd *d;
	int rc = pcmd_create_core(config_path, ovr, plane, &d, err, err_len);

	if (rc < 0)
		return rc;
	rc = pcmd_preflight(d->cfg, err, err_len);
	if (rc == 0 && (rc = open_signals(d)) < 0)
		snprintf(err, err_len, "signalfd: %s", strerror(-rc));
	if (rc == 0)
		rc = pcmd_control_listen(d, err, err_len);
	if (rc == 0 && reload_outputs(d, d->cfg) < 0)
		snprintf(err, err_len, "cannot open the stats or records file"), rc = -EIO;
	return created(d, rc, out, err, err_len);
}

/*
 * After the stop, the files' last lines (every closed flow's record among
 * them) are written before pcmd exits: the loop turns until the writers are
 * idle, for FLUSH_GRACE_NS at most (a disk that hangs longer is logged).
 */
static void flush_outputs(struct pcmd *d)
{
	uint64_t deadline = pcmd_now_ns() + FLUSH_GRACE_NS;

	while ((pcmd_writer_pending(&d->output.stats) || pcmd_writer_pending(&d->output.records) ||
		d->output.metrics.op.pending) &&
	       pcmd_now_ns() < deadline)
		if (pcmd_loop_turn(d->loop, 100) < 0)
			break;
	if (pcmd_writer_pending(&d->output.stats) || pcmd_writer_pending(&d->output.records))
		pcmd_err("the stats or records file was not written within %llu s of the stop: "
			 "its last lines are lost",
			 FLUSH_GRACE_NS / 1000000000ull);
}

int pcmd_run(struct pcmd *d)
{
	char line[256];
	int rc = 0;

	arm_accept(d);
	arm_signal(d);
	arm_plane(d);
	arm_timer(d, &d->status_timer, status_tick,
		  (uint64_t)d->cfg->output.status_interval_ms * 1000000ull);
	arm_timer(d, &d->stats_timer, stats_tick,
		  (uint64_t)d->cfg->output.stats_interval_ms * 1000000ull);
	arm_timer(d, &d->expire_timer, expire_tick, expire_period_ns(d));
	d->watchdog_ns = pcmd_notify_watchdog_ns();
	if (d->watchdog_ns)
		arm_timer(d, &d->watchdog_timer, watchdog_tick, d->watchdog_ns);
	pcmd_info("listening on %s (datapath %s, data plane %s, %u rule(s), %u policies)",
		  d->cfg->socket.path, pcmd_plane_datapath(d->plane_ops, d->plane, d->cfg),
		  d->plane_ops->name, d->cfg->policies.n_rules, d->policies->n);
	pcmd_status_line(d, line, sizeof(line));
	pcmd_notify_ready(line);
	while (d->phase != PCMD_PHASE_DONE) {
		rc = pcmd_loop_turn(d->loop, -1);
		if (rc < 0) {
			pcmd_err("event loop: %s", strerror(-rc));
			break;
		}
		rc = 0;
		shutdown_check(d);
	}
	flush_outputs(d);
	pcmd_info("stopped");
	return rc;
}

static void stop_ops(struct pcmd *d)
{
	struct pcmd_op *ops[] = {&d->accept_op,	       &d->signal_op,	&d->plane_bell.op,
				 &d->status_timer,     &d->stats_timer, &d->watchdog_timer,
				 &d->drain_timer,      &d->stop_timer,	&d->expire_timer,
				 &d->output.stats.op,  &d->output.records.op, &d->output.metrics.op};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		pcmd_loop_cancel(d->loop, ops[i]);
	/* Let every cancelled op come back before their memory goes. */
	for (int turns = 0; turns < 100 && pcmd_loop_pending(d->loop); turns++)
		pcmd_loop_turn(d->loop, 100);
}

void pcmd_destroy(struct pcmd *d)
{
	if (!d)
		return;
	d->phase = PCMD_PHASE_DONE;
	if (d->loop)
		stop_ops(d);
	/* The data plane first: after it is gone nothing touches the regions. */
	if (d->plane)
		d->plane_ops->destroy(d->plane);
	d->plane = NULL;
	for (uint32_t s = 0; d->slots && s < d->n_slots; s++)
		if (d->slots[s])
			pcmd_client_destroy(d->slots[s]);
	pcmd_writer_close(&d->output.stats);
	pcmd_writer_close(&d->output.records);
	pcmd_replacer_destroy(&d->output.metrics);
	pcmd_control_close(d);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	pcmd_loop_destroy(d->loop);
	pcmd_policies_destroy(d->policies);
	free(d->slots);
	free(d->slot_gen);
	free(d->tenants); /* empty: each client's destroy left its tenant */
	free(d->cfg);
	free(d);
}
