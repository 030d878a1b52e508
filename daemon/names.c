// SPDX-License-Identifier: MIT
/*
 * names.c - listening names per user (names.h): the listeners of every live
 * client, looked up by (owner uid, name), and a dial resolved to one of them
 * with access.h's dial rules.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "access.h"
#include "client.h"
#include "names.h"
#include "pcmd.h"

/* The live listener of user @uid on @name: its client and index. */
static struct pcmd_client *find(const struct pcmd *d, uint32_t uid, const char *name,
				uint32_t *index)
{
	for (uint32_t s = 0; s < d->n_slots; s++) {
		struct pcmd_client *c = d->slots[s];

		if (!c || c->state != PCMD_CLIENT_ALIVE || c->cred.uid != uid || !c->listeners)
			continue;
		for (uint32_t i = 0; i < c->max_listeners; i++) {
			if (c->listeners[i].used && strcmp(c->listeners[i].addr, name) == 0) {
				*index = i;
				return c;
			}
		}
	}
	return NULL;
}

int pcmd_names_check_listen(const struct pcmd_client *c, const char *name, char *err,
			    size_t err_len)
{
	const struct pcmd_client *holder;
	uint32_t i;

	if (strchr(name, '@')) {
		snprintf(err, err_len,
			 "'%s': a listening name holds no '@' (a dial's NAME@OWNER names another "
			 "user's listener)",
			 name);
		return -EINVAL;
	}
	holder = find(c->d, c->cred.uid, name, &i);
	if (holder) {
		snprintf(err, err_len,
			 "listen on '%s': uid %u listens on it already (client %u, pid %d)", name,
			 (unsigned)c->cred.uid, holder->id, (int)holder->cred.pid);
		return -EADDRINUSE;
	}
	return 0;
}

/* Split "NAME@OWNER" at its last '@'; *owner_uid is @c's uid for a bare NAME. */
static int split(const struct pcmd_client *c, const char *addr, char *name, size_t name_len,
		 uint32_t *owner_uid, bool *qualified, char *err, size_t err_len)
{
	const char *at = strrchr(addr, '@');
	int rc;

	*qualified = at != NULL;
	*owner_uid = c->cred.uid;
	snprintf(name, name_len, "%.*s", at ? (int)(at - addr) : (int)strlen(addr), addr);
	if (!name[0] || (at && !at[1])) {
		snprintf(err, err_len, "'%s': NAME or NAME@OWNER, neither empty", addr);
		return -EINVAL;
	}
	if (!at)
		return 0;
	rc = pcmd_config_id(at + 1, false, owner_uid);
	if (rc < 0) {
		snprintf(err, err_len, "'%s': no user '%s' on this system", addr, at + 1);
		return -EINVAL;
	}
	return 0;
}

int pcmd_names_resolve(const struct pcmd_client *c, const char *addr, struct pcmd_client **owner,
		       uint32_t *index, char *err, size_t err_len)
{
	const struct pcmd *d = c->d;
	const struct pcmd_name_rule *rule;
	struct pcmd_client *l;
	char name[PCMD_ADDR_MAX];
	uint32_t uid;
	bool qualified;
	int rc = split(c, addr, name, sizeof(name), &uid, &qualified, err, err_len);

	if (rc < 0)
		return rc;
	l = find(d, uid, name, index);
	if (!l && !qualified) {
		/* Not the dialer's own: the owner an admin's rule gives the name, if any. */
		rule = pcmd_access_shared_name(d->cfg, name, (uint32_t)-1, &c->cred, c->groups,
					       c->n_groups);
		if (rule) {
			uid = rule->owner;
			l = find(d, uid, name, index);
		}
	}
	if (l && pcmd_access_may_dial(d->cfg, uid, name, l->listeners[*index].any_user, &c->cred,
				      c->groups, c->n_groups)) {
		*owner = l;
		return 0;
	}
	/* Absent and closed to this dialer read the same: other users' names stay theirs. */
	snprintf(err, err_len, "no listener '%s' of uid %u takes dials from uid %u", name,
		 (unsigned)uid, (unsigned)c->cred.uid);
	return -ECONNREFUSED;
}
