// SPDX-License-Identifier: MIT
/*
 * dataplane.c - the completeness check every data plane passes before pcmd
 * uses it.
 */
#include <stddef.h>

#include "dataplane.h"

const char *pcmd_dp_ops_check(const struct pcmd_dp_ops *ops)
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
	NEED(post_send);
	NEED(post_recv);
	NEED(close);
	NEED(flow_stats);
	NEED(set_policy);
#undef NEED
	return NULL;
}
