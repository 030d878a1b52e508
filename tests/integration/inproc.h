/* SPDX-License-Identifier: MIT */
/*
 * inproc.h - pcmd driven in process, for the seeded randomized channel test
 * and the fuzzers: the daemon's core (config, policies, client table, loop,
 * the loopback data plane, or another) without its socket or signals; clients are
 * socketpairs whose requests go straight to pcmd_request_handle() and whose
 * rings the test reads and writes through its own mapping of the memfd. One
 * thread, no timing: the same calls give the same results.
 */
#ifndef PCMD_TEST_INPROC_H
#define PCMD_TEST_INPROC_H

#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "pcmd.h"
#include "pcmd_region.h"

struct inproc {
	struct pcmd *d;
	char config[64];
};

struct inproc_client {
	struct pcmd_client *c; /* valid only while inproc_client_alive() */
	uint32_t key;
	int peer_fd; /* our end of the socketpair */
	int memfd;
	int sq_efd; /* the submission doorbell, rung as a client does (pcmd_region.h) */
	uint8_t *map; /* our own mapping of the region */
	uint8_t *data;
	struct pcmd_region_layout lay;
	struct pcmd_ring sq, cq;
	uint32_t seq;
	int last_status;
	char last_error[PCMD_ERRTEXT_MAX];
};

/* @yaml: a whole config (its socket is never bound). Return: 0 or -errno. */
int inproc_create(struct inproc *ip, const char *yaml);

/* As inproc_create() on data plane @plane instead of the loopback (its own threads: no
 * longer deterministic). */
int inproc_create_on(struct inproc *ip, const char *yaml, const struct pcmd_plane_ops *plane);
void inproc_destroy(struct inproc *ip);

/* A client that said HELLO as @role and, for apps with @data_bytes > 0, got a region. */
int inproc_client_open(struct inproc *ip, struct inproc_client *cl, uint32_t role,
		       uint64_t data_bytes, uint32_t sq_entries, uint32_t cq_entries);

/* Hand one request to pcmd; copy its reply. Return: the reply's status (also in last_status). */
int inproc_request(struct inproc *ip, struct inproc_client *cl, void *req, uint16_t type,
		   size_t len, void *reply, size_t cap);

/* Raw bytes as one request (fuzzing). Return: the reply length. */
size_t inproc_raw(struct inproc *ip, struct inproc_client *cl, const void *msg, size_t len,
		  void *reply, size_t cap);

/* Let pcmd run: data-plane events, every client's intake, the loop's own completions. */
void inproc_pump(struct inproc *ip, int rounds);

/* Does pcmd still serve this client (not reclaimed, not dying)? */
int inproc_client_alive(struct inproc *ip, const struct inproc_client *cl);

/* The client hangs up: pcmd reclaims it (pumped until it is gone). */
void inproc_client_kill(struct inproc *ip, struct inproc_client *cl);

/* Post one raw descriptor on the client's submission ring. Return: 0, -EAGAIN (full). */
int inproc_post(struct inproc_client *cl, const struct pcmd_sqe *e);

/* Take one completion. Return: 1 taken, 0 none. */
int inproc_take(struct inproc_client *cl, struct pcmd_cqe *out);

#endif /* PCMD_TEST_INPROC_H */
