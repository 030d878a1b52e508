// SPDX-License-Identifier: MIT
/*
 * plane.c - the completeness check every data plane passes before pcmd
 * uses it, the datapath name pcmd reports, the longest message it lets
 * clients post, the hosts its regions attach as, and a dialer's options as an ACCEPTED
 * event names them.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "package.h"

#include "config.h"
#include "plane.h"

const char *pcmd_plane_ops_check(const struct pcmd_plane_ops *ops)
{
#define NEED(m)                                                                                    \
	do {                                                                                       \
		if (!ops->m)                                                                       \
			return #m;                                                                 \
	} while (0)
	if (!ops)
		return "its ops table";
	NEED(name);
	NEED(create);
	NEED(destroy);
	NEED(event_fd);
	NEED(poll);
	NEED(region_add);
	NEED(region_release);
	NEED(listen);
	NEED(unlisten);
	NEED(accept);
	NEED(connect);
	NEED(flow_setup);
	NEED(close);
	NEED(flow_stats);
	NEED(set_policy);
#undef NEED
	if ((ops->port_add || ops->call || ops->flow_handle) &&
	    !(ops->port_add && ops->call && ops->flow_handle))
		return "port_add, call and flow_handle (all three or none)";
	if (!ops->port_add && !(ops->post_send && ops->post_recv))
		return "post_send and post_recv (a data plane without ports)";
	return NULL;
}

const char *pcmd_plane_datapath(const struct pcmd_plane_ops *ops, struct pcmd_plane *pl,
				const struct pcmd_config *cfg)
{
	if (ops && pl && ops->datapath)
		return ops->datapath(pl);
	return pcmd_datapath_name(cfg->datapath.resolved);
}

uint64_t pcmd_plane_max_message_bytes(const struct pcmd_plane_ops *ops, struct pcmd_plane *pl,
				      const struct pcmd_config *cfg)
{
	uint64_t limit = cfg->limits.max_message_bytes;
	uint64_t carried = ops && pl && ops->max_message_bytes ? ops->max_message_bytes(pl) : 0;

	return carried && carried < limit ? carried : limit;
}

void pcmd_plane_opts_names(const struct pcmd_plane_flow_opts *o, struct pcmd_flow_opts *out)
{
	memset(out, 0, sizeof(*out));
	if (o->cc)
		snprintf(out->policy, sizeof(out->policy), "%s", o->cc->name);
	if (o->lb)
		snprintf(out->lb_policy, sizeof(out->lb_policy), "%s", o->lb->name);
	out->mode = o->mode;
	out->paths = o->paths;
	out->reliable_connected = o->reliable_connected;
}

uint32_t pcmd_plane_hosts(const struct pcmd_plane_ops *ops, struct pcmd_plane *pl)
{
	return ops && pl && ops->hosts ? ops->hosts(pl) : 0;
}
