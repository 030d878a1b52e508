/* SPDX-License-Identifier: MIT */
/*
 * request.h - one request of a client and its reply: the framing, the
 * sender's credentials (access.h) and role, the message's exact size, then
 * its handler, which checks every field of its own; an error reply says what
 * is wrong for anything malformed, and the daemon's state is untouched by a
 * refused request. The socket I/O around it is control.c's.
 */
#ifndef PCMD_REQUEST_H
#define PCMD_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct pcmd_client;

/* One received request and what came with it. */
struct pcmd_request_in {
	const uint8_t *msg;
	size_t len;
	bool truncated;	    /* longer than any request */
	bool ctl_truncated; /* more ancillary data than pcmd reads */
	int stray_fds;	    /* descriptors the client sent (already closed) */
	bool has_cred;
	const struct ucred *cred; /* the sender's, SCM_CREDENTIALS (else SO_PEERCRED) */
};

/**
 * pcmd_request_handle() - handle one request of @c and build its reply.
 * @c: the client.
 * @in: the request.
 * @reply: the reply buffer.
 * @cap: its size.
 * @fds: descriptors to send with the reply.
 * @n_fds: their count (0 unless a REGION reply).
 *
 * Return: the reply's length.
 */
size_t pcmd_request_handle(struct pcmd_client *c, const struct pcmd_request_in *in, uint8_t *reply,
			   size_t cap, int *fds, int *n_fds);

#endif /* PCMD_REQUEST_H */
