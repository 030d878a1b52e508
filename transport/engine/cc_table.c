// SPDX-License-Identifier: MIT
/*
 * cc_table.c - an engine's CC bindings: one PCM binding (cc_pcm.h) per
 * (CC package, LB package, shell mode) in use, made on first use, and the
 * fixed window for connections without a policy.
 *
 * A binding holds `flows` connections. A synchronous one reuses a closed
 * connection's flow; an asynchronous one cannot (its shell has no flow
 * reset yet), so once it refuses a flow it is marked exhausted, a fresh one
 * serves the next connections, and the exhausted one goes when its last
 * connection closes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

void xp_cc_table_init(struct xp_cc_table *t, const struct pcm_target *target, uint32_t flows,
		      uint32_t async_workers)
{
	memset(t, 0, sizeof(*t));
	t->target = target;
	t->flows = flows;
	t->async_workers = async_workers;
}

static void entry_free(struct xp_cc_entry *x)
{
	xp_cc_pcm_destroy(x->pcm);
	free(x);
}

void xp_cc_table_fini(struct xp_cc_table *t)
{
	while (t->head) {
		struct xp_cc_entry *x = t->head;

		t->head = x->next;
		entry_free(x);
	}
}

static bool same_key(const struct xp_cc_entry *x, const struct xp_conn_opts *o)
{
	if (x->cc != o->cc || x->lb != o->lb)
		return false;
	if (!o->cc)
		return true;
	return x->mode == o->mode && (o->mode == XP_CC_PCM_SYNC || x->async_mode == o->async_mode);
}

static int entry_make(struct xp_cc_table *t, const struct xp_conn_opts *o, uint64_t now_ns,
		      struct xp_cc_entry **out, struct pcm_diag *diag)
{
	struct xp_cc_entry *x = calloc(1, sizeof(*x));
	struct xp_cc_pcm_config cfg;
	int rc;

	if (!x)
		return -ENOMEM;
	x->cc = o->cc;
	x->lb = o->lb;
	x->mode = o->mode;
	x->async_mode = o->async_mode;
	x->fixed.cwnd_bytes = UINT64_MAX;
	x->fixed.rate = PCM_RATE_ONE;
	if (o->cc) {
		xp_cc_pcm_config_default(&cfg);
		cfg.cc = o->cc;
		cfg.lb = o->lb;
		cfg.target = t->target;
		cfg.mode = o->mode;
		cfg.async.mode = o->async_mode;
		cfg.async_inline = t->async_workers == 0;
		cfg.async.n_workers = t->async_workers ? t->async_workers : 1;
		cfg.max_flows = t->flows;
		cfg.now_ns = now_ns;
		rc = xp_cc_pcm_create(&cfg, &x->pcm, diag);
		if (rc == 0 && !cfg.async_inline && o->mode == XP_CC_PCM_ASYNC)
			rc = xp_cc_pcm_start(x->pcm);
		if (rc < 0) {
			entry_free(x);
			return rc;
		}
	}
	x->next = t->head;
	t->head = x;
	*out = x;
	return 0;
}

int xp_cc_table_get(struct xp_cc_table *t, const struct xp_conn_opts *o, uint64_t now_ns,
		    struct xp_cc_entry **out, struct pcm_diag *diag)
{
	struct xp_cc_entry *x;
	int rc = 0;

	for (x = t->head; x; x = x->next)
		if (same_key(x, o) && !x->exhausted)
			break;
	if (!x)
		rc = entry_make(t, o, now_ns, &x, diag);
	if (rc < 0)
		return rc;
	x->conns++;
	*out = x;
	return 0;
}

struct xp_cc_binding xp_cc_entry_binding(struct xp_cc_entry *x)
{
	return x->pcm ? xp_cc_pcm_binding(x->pcm) : xp_cc_fixed_binding(&x->fixed);
}

void xp_cc_table_put(struct xp_cc_table *t, struct xp_cc_entry *x)
{
	if (!x || !x->conns)
		return;
	if (--x->conns || !x->exhausted)
		return;
	for (struct xp_cc_entry **p = &t->head; *p; p = &(*p)->next)
		if (*p == x) {
			*p = x->next;
			break;
		}
	entry_free(x);
}

size_t xp_cc_table_bytes_per_flow(const struct xp_cc_table *t)
{
	size_t sum = 0;

	for (const struct xp_cc_entry *x = t->head; x; x = x->next)
		if (x->pcm)
			sum += xp_cc_pcm_bytes_per_flow(x->pcm);
	return sum;
}
