// SPDX-License-Identifier: MIT
/*
 * datapath.c - the explicit table of the datapaths built, and the checks
 * that every table is complete before an instance opens.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "datapath.h"

static const struct xp_dp_ops *const datapaths[] = {
	&xp_dp_null_ops,
	&xp_dp_softnic_ops,
	&xp_dp_verbs_ops,
	NULL,
};

const struct xp_dp_ops *xp_dp_find(const char *name)
{
	for (size_t i = 0; name && datapaths[i]; i++)
		if (strcmp(datapaths[i]->name, name) == 0)
			return datapaths[i];
	return NULL;
}

const char *xp_dp_names(void)
{
	static char names[128];

	if (!names[0])
		for (size_t i = 0; datapaths[i]; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? ", " : "", datapaths[i]->name);
	return names;
}

static int boot_ops_check(const struct xp_boot_ops *b)
{
	return b && b->name && b->create && b->destroy && b->listen && b->dial && b->answer &&
			       b->poll && b->fd
		       ? 0
		       : -EINVAL;
}

int xp_dp_ops_check(const struct xp_dp_ops *o)
{
	if (!o || !o->name || !o->open || !o->close || !o->info || !o->stats || !o->mr_reg ||
	    !o->mr_dereg || !o->recv_key || !o->recv_key_release || !o->local_addr ||
	    !o->peer_open || !o->peer_close || !o->path_create || !o->path_connect ||
	    !o->path_destroy || !o->send_slots || !o->post_writes || !o->post_ctrl || !o->poll ||
	    !o->wait_fd || !o->arm || !o->now_ns)
		return -EINVAL;
	return boot_ops_check(o->boot);
}

int xp_dp_open(const struct xp_dp_ops *ops, const struct xp_dp_config *cfg, struct xp_dp **out,
	       struct pcm_diag *diag)
{
	if (xp_dp_ops_check(ops) < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "datapath '%s': incomplete ops table",
			 ops && ops->name ? ops->name : "?");
		return -EINVAL;
	}
	diag->msg[0] = '\0';
	return ops->open(cfg, out, diag);
}
