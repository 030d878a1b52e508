// SPDX-License-Identifier: MIT
/*
 * bench_rig.c - the rig of pcm-bench goodput and latency (bench_rig.h):
 * engines on one datapath driven from this thread, the control calls that
 * set them up, and the --policy and --mode options they run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_rig.h"
#include "builtin.h"
#include "softnic.h"

uint64_t tp_clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t tp_rig_now(const struct tp_rig *r)
{
	return r->w ? xp_softnic_now_ns(r->w) : tp_clock_ns(CLOCK_MONOTONIC);
}

void tp_rig_step(struct tp_rig *r)
{
	if (r->o->threads)
		return; /* the engines' own threads progress them */
	for (uint32_t i = 0; i < r->n_e; i++)
		if (r->w)
			xp_engine_run_once(r->e[i], xp_softnic_now_ns(r->w));
		else
			xp_engine_progress(r->e[i]);
}

int tp_ctl_sync(struct tp_rig *r, int e, struct xp_ctl *ctl)
{
	struct xp_cmd cmd = { .op = XP_CMD_CTL, .ctl = ctl };

	atomic_store(&ctl->done, 0);
	while (xp_engine_submit(r->e[e], &cmd) == -EAGAIN)
		tp_rig_step(r);
	while (!atomic_load_explicit(&ctl->done, memory_order_acquire))
		tp_rig_step(r);
	if (ctl->status < 0)
		fprintf(stderr, "pcm-bench: engine %d: %s\n", e, ctl->diag.msg);
	return ctl->status;
}

int tp_reg(struct tp_rig *r, int e, void *addr, size_t len, uint32_t *mr)
{
	struct xp_ctl *ctl = calloc(1, sizeof(*ctl));
	int rc;

	ctl->op = XP_CTL_MR_REG;
	ctl->addr = addr;
	ctl->len = len;
	rc = tp_ctl_sync(r, e, ctl);
	*mr = ctl->mr;
	free(ctl);
	return rc;
}

int tp_parse_policy(const struct tp_opts *o, struct xp_conn_opts *c)
{
	memset(c, 0, sizeof(*c));
	c->paths = 1;
	c->rc = o->rc;
	if (strcmp(o->policy, "none") != 0) {
		c->cc = pcm_package_find(pcm_builtin_policies, o->policy);
		if (!c->cc) {
			fprintf(stderr, "pcm-bench: --policy %s: no such built-in policy\n",
				o->policy);
			return -EINVAL;
		}
		snprintf(c->cc_name, sizeof(c->cc_name), "%s", o->policy);
	}
	if (strcmp(o->mode, "sync") == 0) {
		c->mode = XP_CC_PCM_SYNC;
	} else if (strncmp(o->mode, "async-", 6) == 0 &&
		   pcm_async_mode_parse(o->mode + 6, &c->async_mode) == 0) {
		c->mode = XP_CC_PCM_ASYNC;
	} else {
		fprintf(stderr,
			"pcm-bench: --mode %s: one of sync, async-relaxed, async-locked, "
			"async-bounded\n",
			o->mode);
		return -EINVAL;
	}
	return 0;
}

int tp_make_engines(struct tp_rig *r, uint32_t n, bool copy)
{
	for (uint32_t i = 0; i < n; i++) {
		struct xp_engine_config cfg;
		struct pcm_diag diag;
		int rc;

		xp_engine_config_default(&cfg);
		cfg.dp_ops = r->dp;
		cfg.dp.copy = copy;
		cfg.dp.world = r->w;
		cfg.dp.host = i;
		cfg.dp.device = r->o->device;
		cfg.dp.gid_index = r->o->gid_index;
		cfg.progress = r->w ? XP_PROGRESS_EXTERNAL :
			       r->o->threads ? XP_PROGRESS_THREAD : XP_PROGRESS_INLINE;
		if (r->o->threads && r->o->spin_ns >= 0)
			cfg.spin_ns = (uint64_t)r->o->spin_ns;
		cfg.index = i;
		cfg.async_workers = 0;
		cfg.core.chunk_bytes = r->o->chunk_size;
		if (cfg.core.min_chunk_bytes > cfg.core.chunk_bytes)
			cfg.core.min_chunk_bytes = cfg.core.chunk_bytes;
		rc = xp_engine_create(&cfg, &r->e[i], &diag);
		if (rc < 0) {
			fprintf(stderr, "pcm-bench: engine %u: %s\n", i, diag.msg);
			return rc;
		}
		r->n_e = i + 1;
	}
	return 0;
}

void tp_submit(struct tp_rig *r, int e, const struct xp_cmd *cmd)
{
	while (xp_engine_submit(r->e[e], cmd) == -EAGAIN)
		tp_rig_step(r);
}

void tp_rig_free(struct tp_rig *r)
{
	for (uint32_t i = 0; i < r->n_e; i++)
		xp_engine_destroy(r->e[i]);
	for (uint32_t i = 0; i < r->n_f; i++) {
		free(r->f[i].sbuf);
		free(r->f[i].rbuf);
	}
	xp_softnic_world_destroy(r->w);
}
