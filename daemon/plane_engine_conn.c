// SPDX-License-Identifier: MIT
/*
 * plane_engine_conn.c - connection setup in the engine data plane, in one
 * process and without a bootstrap: a connect() to a listener opens
 * the dialer's connection on its region's engine (its blob), accepts it on
 * the listener's engine with that blob, and binds the dialer with the
 * answer. The accepted flow then waits in the listener's accept queue until
 * the listener's client accepts it (plane_engine_listen.c). And a flow's
 * packages: the ones an accepted flow runs (flow_setup) and a live swap
 * (set_policy) are the same control request.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "plane_engine_int.h"

/* The engine's options for pcmd's choice of packages. */
static void conn_opts_of(const struct pcmd_plane_flow_opts *o, struct xp_conn_opts *x)
{
	memset(x, 0, sizeof(*x));
	if (!o)
		return;
	x->cc = o->cc;
	x->lb = o->lb;
	x->paths = o->paths;
	x->rc = o->reliable_connected;
	x->no_progress_ns = o->no_progress_ms * 1000000ull;
	x->mode = o->mode == PCMD_SHELL_SYNC ? XP_CC_PCM_SYNC : XP_CC_PCM_ASYNC;
	x->async_mode = o->mode == PCMD_SHELL_ASYNC_LOCKED    ? PCM_ASYNC_LOCKED
			: o->mode == PCMD_SHELL_ASYNC_BOUNDED ? PCM_ASYNC_BOUNDED
							      : PCM_ASYNC_RELAXED;
	if (o->cc)
		snprintf(x->cc_name, sizeof(x->cc_name), "%s", o->cc->name);
	if (o->lb)
		snprintf(x->lb_name, sizeof(x->lb_name), "%s", o->lb->name);
}

/* Open on the dialer's engine, accept on the listener's, bind the dialer. */
static int setup_pair(struct pcmd_plane *pl, struct pcmd_plane_region *dialer,
		      struct pcmd_eng_listener *l, const struct pcmd_plane_flow_opts *opts,
		      uint32_t *a_conn, uint32_t *b_conn)
{
	struct xp_ctl *a = xp_ctl_new(XP_CTL_CONN_OPEN), *b = xp_ctl_new(XP_CTL_CONN_ACCEPT);
	int rc = a && b ? 0 : -ENOMEM;

	if (rc == 0) {
		conn_opts_of(opts, &a->opts);
		rc = pcmd_eng_ctl_run(pl, dialer->engine, a);
	}
	if (rc == 0) {
		/* the accepted side runs without a policy until flow_setup() names one */
		memcpy(b->peer_msg, a->msg, a->msg_len);
		b->peer_len = a->msg_len;
		rc = pcmd_eng_ctl_run(pl, l->r->engine, b);
		if (rc < 0) {
			a->op = XP_CTL_CONN_DROP;
			(void)pcmd_eng_ctl_run(pl, dialer->engine, a);
		}
	}
	if (rc == 0) {
		a->op = XP_CTL_CONN_BIND;
		memcpy(a->peer_msg, b->msg, b->msg_len);
		a->peer_len = b->msg_len;
		rc = pcmd_eng_ctl_run(pl, dialer->engine, a);
		if (rc < 0) {
			/* the dialer's side is gone (the engine aborted it); the listener's
			 * connection is reset by the abort, and closes silently */
			*b_conn = b->conn;
		}
	}
	if (rc == 0) {
		*a_conn = a->conn;
		*b_conn = b->conn;
	}
	free(a);
	free(b);
	return rc;
}

int pcmd_eng_connect(struct pcmd_plane *pl, struct pcmd_plane_region *r, uint32_t listener,
		     const struct pcmd_plane_flow_opts *opts, uint64_t token)
{
	struct pcmd_eng_listener *l = pcmd_eng_listener_of(pl, listener);
	uint32_t a_conn = 0, b_conn = UINT32_MAX, a, b;
	int rc;

	if (!l || xp_accept_queue_full(&l->q)) {
		pcmd_eng_emit_simple(pl, PCMD_PLANE_EV_CONNECTED, -ECONNREFUSED, token, 0);
		pcmd_eng_kick(pl);
		return 0;
	}
	rc = setup_pair(pl, r, l, opts, &a_conn, &b_conn);
	if (rc < 0) {
		if (b_conn != UINT32_MAX) {
			b = pcmd_eng_flow_new(pl, l->r, b_conn);
			pcmd_eng_flow_close(pl, b, true);
		}
		pcmd_eng_emit_simple(pl, PCMD_PLANE_EV_CONNECTED, rc, token, 0);
		pcmd_eng_kick(pl);
		return 0;
	}
	a = pcmd_eng_flow_new(pl, r, a_conn);
	b = pcmd_eng_flow_new(pl, l->r, b_conn);
	pl->flows[a].known = true;
	pl->flows[a].token = token;
	/* who dialed, for the ACCEPTED event (pcmd_eng_listener_match()), copied: the dialer's
	 * flow may be gone and its id reused before the accept; and what it runs, since the
	 * dialer's options decide the connection */
	pl->flows[b].dialer_token = token;
	snprintf(pl->flows[b].dialer, sizeof(pl->flows[b].dialer), "%s", r->name);
	pcmd_plane_opts_names(opts, &pl->flows[b].dialer_opts);
	(void)xp_accept_queue_dial(&l->q, b); /* not full: looked at above, nothing since */
	pcmd_eng_emit_simple(pl, PCMD_PLANE_EV_CONNECTED, 0, token, a);
	pcmd_eng_listener_match(pl, l);
	return 0;
}

int pcmd_eng_set_cc(struct pcmd_plane *pl, uint32_t f, const struct pcmd_plane_flow_opts *opts)
{
	struct pcmd_eng_flow *fl = pcmd_eng_flow_of(pl, f);
	struct xp_ctl *ctl;
	int rc;

	if (!fl)
		return -EINVAL;
	if (fl->closing)
		return -ESHUTDOWN;
	ctl = xp_ctl_new(XP_CTL_SET_CC);
	if (!ctl)
		return -ENOMEM;
	ctl->conn = fl->conn;
	conn_opts_of(opts, &ctl->opts);
	rc = pcmd_eng_ctl_run(pl, fl->engine, ctl);
	free(ctl);
	return rc;
}
