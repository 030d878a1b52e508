/* SPDX-License-Identifier: MIT */
/*
 * pcmd.h - the daemon object: the running config, the loop, the data plane,
 * the policy registry, the client table, the counters, and the service
 * lifecycle (start, reload on SIGHUP, drain or abort on SIGTERM).
 */
#ifndef PCMD_PCMD_H
#define PCMD_PCMD_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/signalfd.h>

#include "clock.h"
#include "config.h"
#include "loop.h"
#include "phase.h"
#include "plane.h"
#include "policy.h"
#include "stats.h"

/* Slots beyond limits.max_clients and limits.admin_clients, for refused peers reading
 * their reason. */
#define PCMD_SPARE_SLOTS 16

struct pcmd_client;
struct pcmd_tenant;

struct pcmd {
	struct pcmd_config *cfg;
	struct pcmd_overrides ovr;
	char config_path[PCMD_CFG_PATH_MAX]; /* "" none */
	char sysfs_ib[256];
	_Atomic uint32_t phase; /* enum pcmd_phase; read by the data path's threads (intake.h) */
	uint32_t generation;
	uint64_t start_ns;
	uint64_t run_id; /* random at each start: flow ids are unique across restarts with it */

	struct pcmd_loop *loop;
	const struct pcmd_plane_ops *plane_ops;
	struct pcmd_plane *plane;
	struct pcmd_policies *policies;

	/* Clients by slot; a client's key is slot | generation << 16. */
	uint32_t n_slots;
	struct pcmd_client **slots;
	uint16_t *slot_gen;
	uint32_t n_clients;
	uint32_t n_refused;	      /* of n_clients: refused peers waiting to read why */
	uint32_t n_admins;	      /* of n_clients: admins (they may use limits.admin_clients) */
	struct pcmd_tenant **tenants; /* the users with live clients (tenant.h) */
	uint32_t n_tenants;
	bool trim_memory; /* a region went: give freed memory back at the next tick */
	/* Refusals logged one by one in the current second, and those only counted. */
	uint64_t refusals_since_ns;
	uint32_t refusals_logged, refusals_quiet;
	uint32_t next_client_id;
	uint32_t next_flow_id;
	uint64_t region_bytes;

	int listen_fd;
	uint32_t socket_gid; /* (uint32_t)-1: unchanged */
	struct pcmd_op accept_op;
	int signal_fd;
	struct pcmd_op signal_op;
	struct signalfd_siginfo siginfo;
	int plane_fd;
	struct pcmd_bell plane_bell; /* the data plane's event fd */
	struct pcmd_op status_timer, stats_timer, watchdog_timer, drain_timer, stop_timer;
	struct pcmd_op expire_timer; /* hello deadlines, refused peers' linger */
	uint64_t watchdog_ns;

	struct pcmd_counters counters;
	struct pcmd_output output;
};

/**
 * pcmd_main() - pcmd's command line: run the daemon, or --check-config.
 * @argc: argument count.
 * @argv: arguments.
 * @plane: the data plane this binary links.
 *
 * Return: the process exit status.
 */
int pcmd_main(int argc, char **argv, const struct pcmd_plane_ops *plane);

/**
 * pcmd_create() - load and check the config, open the data plane, the socket,
 * the signalfd and the loop.
 * @config_path: the YAML file, or NULL.
 * @ovr: command-line overrides.
 * @plane: the data plane.
 * @out: the daemon.
 * @err: what failed, for the log.
 * @err_len: its size.
 *
 * Return: 0 or -errno.
 */
int pcmd_create(const char *config_path, const struct pcmd_overrides *ovr,
		const struct pcmd_plane_ops *plane, struct pcmd **out, char *err, size_t err_len);

/**
 * pcmd_create_core() - pcmd_create() without the service parts (control
 * socket, signals, output files): the config, policies, client table, loop and
 * data plane. For tests and fuzzers that drive clients in process.
 * @config_path: the YAML file, or NULL.
 * @ovr: command-line overrides, or NULL.
 * @plane: the data plane.
 * @out: the daemon.
 * @err: what failed.
 * @err_len: its size.
 *
 * Return: 0 or -errno.
 */
int pcmd_create_core(const char *config_path, const struct pcmd_overrides *ovr,
		     const struct pcmd_plane_ops *plane, struct pcmd **out, char *err,
		     size_t err_len);

/* Run until SIGTERM/SIGINT has drained everything. Return: 0 or -errno. */
int pcmd_run(struct pcmd *d);

void pcmd_destroy(struct pcmd *d);

/**
 * pcmd_reload() - reread the config and overrides; apply it only if every
 * check passes (policies included), else log why and keep the old one.
 * @d: the daemon.
 *
 * Return: 0, or the failure's -errno (the old config keeps running).
 */
int pcmd_reload(struct pcmd *d);

/* Begin the SIGTERM shutdown (drain, then abort). */
void pcmd_shutdown(struct pcmd *d);

/* Route every data-plane event waiting now to its client, then flush the
 * clients' completion rings (the loop calls it when the event fd is readable). */
void pcmd_plane_drain(struct pcmd *d);

/* The one-line status for sd_notify and the log. */
void pcmd_status_line(struct pcmd *d, char *buf, size_t len);

#endif /* PCMD_PCMD_H */
