/* SPDX-License-Identifier: MIT */
/*
 * harness.h - integration-test helpers: run pcmd (over the loopback data
 * plane) in a scratch directory with a given config, stop it, read its
 * memory and descriptor counts from /proc, and speak raw control messages.
 */
#ifndef PCMD_TEST_HARNESS_H
#define PCMD_TEST_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pcmd_proto.h"

struct pcmd_proc {
	pid_t pid;
	char dir[256];
	char sock[300];
	char config[300];
	char log[300];
	char notify[300]; /* NOTIFY_SOCKET path, "" when not asked for */
	int notify_fd;
};

/*
 * Start pcmd with @yaml as its config; "@DIR@" in it becomes the scratch
 * directory and "@DATAPATH@" harness_datapath(). NULL: a minimal config
 * (socket in the directory, no group, datapath auto).
 * With @notify, pcmd gets a NOTIFY_SOCKET the test can read (harness_notify_read).
 * @env: extra "NAME=value" for pcmd's environment, NULL-terminated (or NULL).
 * Return: 0, or -errno (pcmd exited or its socket never appeared; its log is printed).
 */
int harness_start(struct pcmd_proc *p, const char *yaml, int notify, const char *const *env);

/*
 * Start pcmd again in @p's directory, with its config and socket, once the
 * last one is gone (a test of what clients see when pcmd dies and comes back).
 * Return: as harness_start().
 */
int harness_restart(struct pcmd_proc *p, const char *const *env);

/* The datapath "@DATAPATH@" in a config becomes: $PCMD_TEST_DATAPATH, default softnic. */
const char *harness_datapath(void);

/* Write a new config file (same substitution), e.g. before a SIGHUP. */
int harness_write_config(struct pcmd_proc *p, const char *yaml);

/* Signal pcmd and wait for it (up to @timeout_ms). Return: its exit status, or -1. */
int harness_stop(struct pcmd_proc *p, int sig, int timeout_ms);

/* Remove the scratch directory. */
void harness_cleanup(struct pcmd_proc *p);

/*
 * A test's teardown: SIGTERM a pcmd still running, print its log unless it
 * exits 0 (a sanitizer's report makes it exit non-zero), clean up.
 * Return: 0, or -1 when pcmd did not stop cleanly.
 */
int harness_finish(struct pcmd_proc *p);

/* Print pcmd's log (after a failure). */
void harness_dump_log(const struct pcmd_proc *p);

/* Does pcmd's log contain @needle? */
int harness_log_has(const struct pcmd_proc *p, const char *needle);

/* /proc figures of a process (map count: mappings of clients' regions). */
long harness_rss_kb(pid_t pid);
long harness_vm_kb(pid_t pid);
int harness_fd_count(pid_t pid);
int harness_map_count(pid_t pid);

/* Wait until @pid has @want descriptors open (reclaims finish asynchronously). Return: the count.
 */
int harness_wait_fds(pid_t pid, int want, int timeout_ms);

/*
 * How many of @pid's descriptors are open on the file @path (an absolute path, as
 * /proc/PID/fd's links name it; NULL: every descriptor, harness_fd_count()). Unlike a
 * total count, this does not move while @pid reclaims other clients. Return: the
 * count, or -1 if @pid's descriptors cannot be read.
 */
int harness_fds_on(pid_t pid, const char *path);

/* Wait until @pid's descriptor count has not changed for 100 ms. Return: the count. */
int harness_settled_fds(pid_t pid);

/* The notify datagrams received so far, concatenated with '\n' between them. */
int harness_notify_read(struct pcmd_proc *p, char *buf, size_t len, int wait_ms, const char *until);

/* A raw control connection (no HELLO sent). Return: the fd or -errno. */
int harness_raw_connect(const struct pcmd_proc *p);

/*
 * Send @len bytes of @msg on @fd and receive one reply into @reply (@cap).
 * Return: the reply's length, or -errno.
 */
ssize_t harness_raw_rpc(int fd, const void *msg, size_t len, void *reply, size_t cap);

/* Fill a header. */
void harness_hdr(struct pcmd_msg_hdr *h, uint16_t type, size_t len, uint32_t seq);

/* HELLO as @role on a raw connection. Return: 0 or the reply's status. */
int harness_raw_hello(int fd, uint32_t role);

/* Seeded bytes: fill and check a buffer with a pattern of (seed, index). */
void harness_fill(void *buf, size_t len, uint64_t seed);
int harness_check(const void *buf, size_t len, uint64_t seed, size_t *first_bad);

/* Monotonic milliseconds. */
uint64_t harness_now_ms(void);

/* STATS and STATUS through a fresh admin connection. Return: 0 or -errno. */
int harness_stats(const struct pcmd_proc *p, struct pcmd_rep_stats *out);
int harness_status(const struct pcmd_proc *p, struct pcmd_rep_status *out);

/* Poll STATS until @cond holds or @timeout_ms passes. Return: 1 if it held. */
int harness_wait_stats(const struct pcmd_proc *p, int (*cond)(const struct pcmd_rep_stats *),
		       int timeout_ms, struct pcmd_rep_stats *last);

#endif /* PCMD_TEST_HARNESS_H */
