// SPDX-License-Identifier: MIT
/*
 * dataplane_absent.c - the data plane of a pcmd built before the transport
 * engine is bound (see dataplane.h). It moves nothing: pcmd runs its control
 * plane (clients, regions, policies, pcmctl, systemd integration), and every
 * request that needs the transport (listen, connect, accept) fails with
 * -ENOSYS, which pcmd reports to the client as "function not implemented".
 * Nothing here pretends to transfer data.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dataplane.h"
#include "log.h"

struct pcmd_dp_region {
	uint64_t token;
	struct pcmd_dp_region *next;
};

/* Released regions wait here for poll() to report them. */
struct pcmd_dp {
	int efd;
	struct pcmd_dp_region *released;
};

static int absent_create(const struct pcmd_config *cfg, struct pcmd_dp **out, char *err,
			 size_t err_len)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if ((*out)->efd < 0) {
		free(*out);
		return -errno;
	}
	pcmd_warn("this pcmd has no transport engine bound (issue 12): listen, connect and accept "
		  "fail with ENOSYS");
	return 0;
}

static void absent_destroy(struct pcmd_dp *dp)
{
	while (dp->released) {
		struct pcmd_dp_region *r = dp->released;

		dp->released = r->next;
		free(r);
	}
	close(dp->efd);
	free(dp);
}

static int absent_event_fd(struct pcmd_dp *dp)
{
	return dp->efd;
}

static int absent_poll(struct pcmd_dp *dp, struct pcmd_dp_event *evs, int max)
{
	uint64_t v;
	int n = 0;

	if (read(dp->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	while (dp->released && n < max) {
		struct pcmd_dp_region *r = dp->released;

		dp->released = r->next;
		evs[n] =
		    (struct pcmd_dp_event){.kind = PCMD_DP_EV_REGION_RELEASED, .token = r->token};
		free(r);
		n++;
	}
	return n;
}

static int absent_region_add(struct pcmd_dp *dp, void *base, size_t bytes, const char *host,
			     uint64_t token, struct pcmd_dp_region **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->token = token;
	return 0;
}

/* Nothing ever touched the memory: reported released on the next poll. */
static void absent_region_release(struct pcmd_dp *dp, struct pcmd_dp_region *r)
{
	uint64_t one = 1;

	r->next = dp->released;
	dp->released = r;
	if (write(dp->efd, &one, sizeof(one)) < 0)
		pcmd_err("data plane: cannot signal a released region");
}

static int absent_listen(struct pcmd_dp *dp, struct pcmd_dp_region *r, const char *addr,
			 uint32_t backlog, uint32_t *listener)
{
	return -ENOSYS;
}

static void absent_unlisten(struct pcmd_dp *dp, uint32_t listener)
{
}

static int absent_accept(struct pcmd_dp *dp, uint32_t listener, uint64_t token)
{
	return -ENOSYS;
}

static int absent_connect(struct pcmd_dp *dp, struct pcmd_dp_region *r, const char *addr,
			  const struct pcmd_dp_flow_opts *opts, uint64_t token)
{
	return -ENOSYS;
}

static int absent_flow_setup(struct pcmd_dp *dp, uint32_t flow,
			     const struct pcmd_dp_flow_opts *opts)
{
	return -ENOSYS;
}

static int absent_post(struct pcmd_dp *dp, uint32_t flow, uint64_t offset, uint64_t len,
		       uint64_t token)
{
	return -ENOSYS;
}

static void absent_close(struct pcmd_dp *dp, uint32_t flow, bool abort)
{
}

static int absent_flow_stats(struct pcmd_dp *dp, uint32_t flow, struct pcmd_flow_measure *out)
{
	return -ENOSYS;
}

static int absent_set_policy(struct pcmd_dp *dp, uint32_t flow,
			     const struct pcmd_dp_flow_opts *opts)
{
	return -ENOSYS;
}

const struct pcmd_dp_ops pcmd_dp_absent = {
    .name = "absent",
    .create = absent_create,
    .destroy = absent_destroy,
    .event_fd = absent_event_fd,
    .poll = absent_poll,
    .region_add = absent_region_add,
    .region_release = absent_region_release,
    .listen = absent_listen,
    .unlisten = absent_unlisten,
    .accept = absent_accept,
    .connect = absent_connect,
    .flow_setup = absent_flow_setup,
    .post_send = absent_post,
    .post_recv = absent_post,
    .close = absent_close,
    .flow_stats = absent_flow_stats,
    .set_policy = absent_set_policy,
};
