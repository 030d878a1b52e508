/* SPDX-License-Identifier: MIT */
/*
 * preflight.h - what a start needs of this machine beyond the config's own
 * checks (config.c) and the data plane's (plane.h, create): the groups the
 * config names exist and pcmd may give its files to them, the socket's
 * directory lets pcmd bind there and nothing but a socket is in the way at
 * socket.path, and the stats, records and metrics files can be written. A
 * start runs it before it opens anything, and so does `pcmd --check-config`,
 * so the check says OK only for what would start (but for a live pcmd on the
 * socket: the check is for a config that pcmd may be about to reload).
 */
#ifndef PCMD_PREFLIGHT_H
#define PCMD_PREFLIGHT_H

#include <stddef.h>

struct pcmd_config;

/**
 * pcmd_preflight() - check the machine for @cfg.
 * @cfg: the loaded config.
 * @err: the first problem, "file:line:col: key: what is wrong (what to do)".
 * @err_len: its size.
 *
 * Return: 0, or the problem's -errno (-ENOENT, -EACCES, -EPERM, -EROFS ...).
 */
int pcmd_preflight(const struct pcmd_config *cfg, char *err, size_t err_len);

#endif /* PCMD_PREFLIGHT_H */
