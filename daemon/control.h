/* SPDX-License-Identifier: MIT */
/*
 * control.h - pcmd's control socket: its creation (SOCK_SEQPACKET, mode and
 * group from the config, SO_PASSCRED so every message carries its sender's
 * credentials), the uid/gid policy, and the handling of one request: every
 * field checked, an error reply that says what is wrong for anything
 * malformed, and the daemon's state untouched by a refused request.
 */
#ifndef PCMD_CONTROL_H
#define PCMD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct pcmd;
struct pcmd_client;

/* One received request and what came with it. */
struct pcmd_control_in {
	const uint8_t *msg;
	size_t len;
	bool truncated;	    /* longer than any request */
	bool ctl_truncated; /* more ancillary data than pcmd reads */
	int stray_fds;	    /* descriptors the client sent (already closed) */
	bool has_cred;
	const struct ucred *cred; /* the sender's, SCM_CREDENTIALS (else SO_PEERCRED) */
};

/**
 * pcmd_control_listen() - create, bind and listen on cfg->socket.path, chmod
 * it to socket.mode and chown it to socket.group.
 * @d: the daemon (d->listen_fd, d->socket_gid are set).
 * @err: what failed.
 * @err_len: its size.
 *
 * Return: 0, -EADDRINUSE (another pcmd answers there), or the -errno of the
 * failing call.
 */
int pcmd_control_listen(struct pcmd *d, char *err, size_t err_len);

/* Close the listening socket and remove its path. */
void pcmd_control_close(struct pcmd *d);

/**
 * pcmd_control_check_peer() - may this peer use pcmd? Allowed when the config
 * lists no uids or gids, or its uid is in socket.allow_uids, or its gid or a
 * supplementary group in socket.allow_gids, or it is an admin.
 * @d: the daemon.
 * @cred: the peer's credentials.
 * @groups: its supplementary groups (SO_PEERGROUPS).
 * @n_groups: their count.
 * @why: on refusal, a message naming the uid, gid and the config keys.
 * @why_len: its size.
 *
 * Return: 0, -EACCES.
 */
int pcmd_control_check_peer(const struct pcmd *d, const struct ucred *cred, const uint32_t *groups,
			    uint32_t n_groups, char *why, size_t why_len);

/**
 * pcmd_control_handle() - handle one request of @c and build its reply.
 * @c: the client.
 * @in: the request.
 * @reply: the reply buffer.
 * @cap: its size.
 * @fds: descriptors to send with the reply.
 * @n_fds: their count (0 unless a REGION reply).
 *
 * Return: the reply's length.
 */
size_t pcmd_control_handle(struct pcmd_client *c, const struct pcmd_control_in *in, uint8_t *reply,
			   size_t cap, int *fds, int *n_fds);

/* Name of a message type for messages ("CONNECT", "type 77"). */
const char *pcmd_msg_name(uint32_t type, char *buf, size_t len);

#endif /* PCMD_CONTROL_H */
