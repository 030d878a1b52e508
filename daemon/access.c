// SPDX-License-Identifier: MIT
/*
 * access.c - pcmd's uid/gid rules (access.h): one id-list check, used for
 * the allow lists, the admin lists and the shared names' dial lists alike,
 * and the refusal that says which lists refused the peer and where they were
 * set.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "access.h"
#include "config.h"

static bool id_listed(uint32_t id, const uint32_t *ids, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* The primary group or any supplementary group in the list. */
static bool groups_listed(uint32_t gid, const uint32_t *groups, uint32_t n_groups,
			  const uint32_t *ids, uint32_t n)
{
	if (id_listed(gid, ids, n))
		return true;
	for (uint32_t i = 0; i < n_groups; i++)
		if (id_listed(groups[i], ids, n))
			return true;
	return false;
}

bool pcmd_access_admin(const struct pcmd_config *cfg, const struct ucred *cred,
		       const uint32_t *groups, uint32_t n_groups)
{
	return id_listed(cred->uid, cfg->socket.admin_uids, cfg->socket.n_admin_uids) ||
	       groups_listed(cred->gid, groups, n_groups, cfg->socket.admin_gids,
			     cfg->socket.n_admin_gids);
}

static void format_ids(const uint32_t *ids, uint32_t n, char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "[");

	for (uint32_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%u", i ? ", " : "", ids[i]);
	if (used < len)
		snprintf(buf + used, len - used, "]");
}

/* "file:line:col" of a list key, or "not set" when it kept its default. */
static void where_set(const struct pcmd_config *cfg, const struct pcmd_cfg_loc *loc, char *buf,
		      size_t len)
{
	if (loc->line || loc->cli)
		pcmd_config_where(cfg, loc, buf, len);
	else
		snprintf(buf, len, "not set");
}

int pcmd_access_check(const struct pcmd_config *cfg, const struct ucred *cred,
		      const uint32_t *groups, uint32_t n_groups, char *why, size_t why_len)
{
	char uids[160], gids[160], w1[PCMD_CFG_PATH_MAX + 32], w2[PCMD_CFG_PATH_MAX + 32];

	why[0] = '\0';
	if (cfg->socket.n_allow_uids == 0 && cfg->socket.n_allow_gids == 0)
		return 0;
	if (pcmd_access_admin(cfg, cred, groups, n_groups) ||
	    id_listed(cred->uid, cfg->socket.allow_uids, cfg->socket.n_allow_uids) ||
	    groups_listed(cred->gid, groups, n_groups, cfg->socket.allow_gids,
			  cfg->socket.n_allow_gids))
		return 0;
	format_ids(cfg->socket.allow_uids, cfg->socket.n_allow_uids, uids, sizeof(uids));
	format_ids(cfg->socket.allow_gids, cfg->socket.n_allow_gids, gids, sizeof(gids));
	where_set(cfg, &cfg->socket.allow_uids_loc, w1, sizeof(w1));
	where_set(cfg, &cfg->socket.allow_gids_loc, w2, sizeof(w2));
	snprintf(why, why_len,
		 "uid %u / gid %u may not use pcmd: socket.allow_uids (%s) is %s and "
		 "socket.allow_gids (%s) is %s",
		 (unsigned)cred->uid, (unsigned)cred->gid, w1, uids, w2, gids);
	return -EACCES;
}

/* A rule's name: exactly @name, or a prefix ending in '*'. */
static bool name_matches(const char *rule, const char *name)
{
	size_t n = strlen(rule);

	if (n && rule[n - 1] == '*')
		return strncmp(rule, name, n - 1) == 0;
	return strcmp(rule, name) == 0;
}

const struct pcmd_name_rule *pcmd_access_shared_name(const struct pcmd_config *cfg,
						     const char *name, uint32_t owner,
						     const struct ucred *cred,
						     const uint32_t *groups, uint32_t n_groups)
{
	for (uint32_t i = 0; i < cfg->n_shared_names; i++) {
		const struct pcmd_name_rule *r = &cfg->shared_names[i];

		if ((owner != (uint32_t)-1 && r->owner != owner) || !name_matches(r->name, name))
			continue;
		if (id_listed(cred->uid, r->dial_uids, r->n_dial_uids) ||
		    groups_listed(cred->gid, groups, n_groups, r->dial_gids, r->n_dial_gids))
			return r;
	}
	return NULL;
}

bool pcmd_access_may_dial(const struct pcmd_config *cfg, uint32_t owner, const char *name,
			  bool any_user, const struct ucred *cred, const uint32_t *groups,
			  uint32_t n_groups)
{
	return cred->uid == owner || any_user ||
	       pcmd_access_shared_name(cfg, name, owner, cred, groups, n_groups) != NULL;
}
