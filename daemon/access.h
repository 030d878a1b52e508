/* SPDX-License-Identifier: MIT */
/*
 * access.h - pcmd's access rules: who may use pcmd at all
 * (socket.allow_uids, socket.allow_gids), who is its admin
 * (socket.admin_uids, socket.admin_gids), and who may dial another user's
 * listening name (its PCMD_LISTEN_ANY_USER, or a shared_names rule), decided
 * from a peer's credentials (SO_PEERCRED, or a message's SCM_CREDENTIALS)
 * and supplementary groups (SO_PEERGROUPS) against the running config.
 *
 * Every uid/gid rule of pcmd is written here, once, on one id-list check: a
 * uid is allowed when the list holds it; a gid when the list holds the
 * primary group or any supplementary one. The socket's own mode and group
 * (socket.mode, socket.group) are the kernel's first gate (control.c).
 */
#ifndef PCMD_ACCESS_H
#define PCMD_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct pcmd_config;

/**
 * pcmd_access_admin() - is the peer an admin (uid in socket.admin_uids, or
 * its gid or a supplementary group in socket.admin_gids)?
 * @cfg: the running config.
 * @cred: the peer's credentials.
 * @groups: its supplementary groups.
 * @n_groups: their count (0 when unknown).
 *
 * Return: true for an admin.
 */
bool pcmd_access_admin(const struct pcmd_config *cfg, const struct ucred *cred,
		       const uint32_t *groups, uint32_t n_groups);

/**
 * pcmd_access_check() - may this peer use pcmd? Allowed when the config
 * lists no uids or gids, or its uid is in socket.allow_uids, or its gid or a
 * supplementary group in socket.allow_gids, or it is an admin.
 * @cfg: the running config.
 * @cred: the peer's credentials.
 * @groups: its supplementary groups (SO_PEERGROUPS).
 * @n_groups: their count (0 when unknown).
 * @why: on refusal, a message naming the uid, gid, the lists and where they
 *       were set.
 * @why_len: its size.
 *
 * Return: 0, -EACCES.
 */
int pcmd_access_check(const struct pcmd_config *cfg, const struct ucred *cred,
		      const uint32_t *groups, uint32_t n_groups, char *why, size_t why_len);

/**
 * pcmd_access_shared_name() - the first shared_names rule that opens @name of
 * some owner to this dialer (its uid in dial_uids, or its gid or a
 * supplementary group in dial_gids).
 * @cfg: the running config.
 * @name: the listening name dialed.
 * @owner: the owner the dial named, or (uint32_t)-1 for any.
 * @cred: the dialer's credentials.
 * @groups: its supplementary groups.
 * @n_groups: their count.
 *
 * Return: the rule, or NULL.
 */
const struct pcmd_name_rule *pcmd_access_shared_name(const struct pcmd_config *cfg,
						     const char *name, uint32_t owner,
						     const struct ucred *cred,
						     const uint32_t *groups, uint32_t n_groups);

/**
 * pcmd_access_may_dial() - may this dialer reach @owner's listener on @name?
 * Yes for the owner itself, for any user when the listener said
 * PCMD_LISTEN_ANY_USER, and for the users a shared_names rule of @owner and
 * @name lists.
 * @cfg: the running config.
 * @owner: the listener's uid.
 * @name: its name.
 * @any_user: it takes dials from any user.
 * @cred: the dialer's credentials.
 * @groups: its supplementary groups.
 * @n_groups: their count.
 *
 * Return: true if it may.
 */
bool pcmd_access_may_dial(const struct pcmd_config *cfg, uint32_t owner, const char *name,
			  bool any_user, const struct ucred *cred, const uint32_t *groups,
			  uint32_t n_groups);

#endif /* PCMD_ACCESS_H */
