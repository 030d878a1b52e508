/* SPDX-License-Identifier: MIT */
/*
 * control.h - pcmd's control socket: its creation (SOCK_SEQPACKET, mode and
 * group from the config, SO_PASSCRED so every message carries its sender's
 * credentials), the peers it accepts as clients (or refuses, with the
 * reason), and each client's requests and replies on the loop, one at a
 * time; what a request does is request.h's.
 */
#ifndef PCMD_CONTROL_H
#define PCMD_CONTROL_H

#include <stddef.h>

struct pcmd;

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
 * pcmd_control_accept() - take a new connection: the client object
 * (pcmd_client_new()) with its first receive armed, or, when none could be
 * made, a refusal sent before closing.
 * @d: the daemon.
 * @fd: the accepted socket.
 */
void pcmd_control_accept(struct pcmd *d, int fd);

#endif /* PCMD_CONTROL_H */
