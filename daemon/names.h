/* SPDX-License-Identifier: MIT */
/*
 * names.h - listening names, each in its owner's namespace: a name a client
 * listens on belongs to the client's user (its uid), so two users may listen
 * on the same name and neither can take the other's.
 *
 * A dial names a listener as:
 *   NAME        the dialer's own user's NAME; if that user does not listen on
 *               NAME, the owner of the first shared_names rule (pcmd.conf(5))
 *               that lets the dialer dial NAME;
 *   NAME@OWNER  OWNER's NAME (OWNER a user name or a uid), reached only when
 *               that listener takes dials from the dialer's user: it said so
 *               (PCMD_LISTEN_ANY_USER), or a shared_names rule of OWNER lets
 *               the dialer in (access.h).
 * A dial that reaches nothing, and one refused by those rules, look alike to
 * the dialer (-ECONNREFUSED): it learns nothing of other users' names.
 */
#ifndef PCMD_NAMES_H
#define PCMD_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct pcmd_client;

/**
 * pcmd_names_check_listen() - may @c listen on @name: a name without '@'
 * that no client of @c's user listens on already?
 * @c: the client.
 * @name: the name (NUL-terminated, not empty).
 * @err: why not.
 * @err_len: its size.
 *
 * Return: 0, -EINVAL ('@' in it), -EADDRINUSE.
 */
int pcmd_names_check_listen(const struct pcmd_client *c, const char *name, char *err,
			    size_t err_len);

/**
 * pcmd_names_resolve() - the listener a dial of @addr by @c reaches.
 * @c: the dialer.
 * @addr: "NAME" or "NAME@OWNER" (NUL-terminated, not empty).
 * @owner: the listening client.
 * @index: its listener.
 * @err: why not.
 * @err_len: its size.
 *
 * Return: 0, -EINVAL (an empty name or owner, no user OWNER), -ECONNREFUSED
 * (no such listener, or one that does not take this dialer's dials).
 */
int pcmd_names_resolve(const struct pcmd_client *c, const char *addr, struct pcmd_client **owner,
		       uint32_t *index, char *err, size_t err_len);

#endif /* PCMD_NAMES_H */
