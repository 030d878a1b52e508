// SPDX-License-Identifier: MIT
/*
 * engine_conn.c - an engine's control requests (memory regions, a
 * connection's setup, policy swaps, figures, ports, calls) and a
 * connection's end (the application's close, the core's CLOSE).
 *
 * Setup, with the bootstrap in between (the endpoint carries the blobs):
 *   dialer     CONN_OPEN: paths created, the core's connection created
 *              (operations may be posted at once), the local blob made;
 *              ... dial, answer ...;
 *              CONN_BIND: the listener's blob read, its control peer
 *              opened, every path connected, the core's connection bound.
 *              CONN_DROP instead when the dial failed.
 *   listener   CONN_ACCEPT: the dialer's blob read; OPEN and BIND in one,
 *              with the dialer's path count, mode and policy; the local
 *              blob answers the dial.
 * A setup that fails after the core's connection exists aborts it
 * ("hidden": its CLOSE completion is the engine's, not the application's).
 *
 * The end: the core's CLOSE completion releases the paths, the peer and the
 * CC flow's binding, then (unless hidden) the application hears of it.
 *
 * CONN_INFO reads the figures of a batch of connections (window, pacing
 * rate, RTT, in flight, retransmissions) on the engine's thread, the only
 * one that may touch the core: one request per engine answers a whole
 * `pcmctl flows`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "engine_int.h"

static int ctl_fail(struct xp_ctl *ctl, int rc, const char *fmt, const char *arg)
{
	snprintf(ctl->diag.msg, sizeof(ctl->diag.msg), fmt, arg);
	return rc;
}

/* ---- regions ------------------------------------------------------------------------------ */

static int mr_reg(struct xp_engine *e, struct xp_ctl *ctl)
{
	uint32_t i;
	int rc;

	for (i = 0; i < e->n_mrs && e->mr_used[i]; i++)
		;
	if (i == e->n_mrs) {
		snprintf(ctl->diag.msg, sizeof(ctl->diag.msg),
			 "engine %u: all %u memory regions are registered", e->cfg.index, e->n_mrs);
		return -ENOSPC;
	}
	rc = e->dp->ops->mr_reg(e->dp, ctl->addr, ctl->len, &e->mrs[i], &ctl->diag);
	if (rc < 0)
		return rc;
	e->mr_used[i] = true;
	ctl->mr = i;
	return 0;
}

static int mr_dereg(struct xp_engine *e, struct xp_ctl *ctl)
{
	if (ctl->mr >= e->n_mrs || !e->mr_used[ctl->mr])
		return -ENOENT;
	e->dp->ops->mr_dereg(e->dp, &e->mrs[ctl->mr]);
	e->mr_used[ctl->mr] = false;
	return 0;
}

/* ---- paths ---------------------------------------------------------------------------------- */

static void paths_destroy(struct xp_engine *e, uint32_t *paths, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		e->dp->ops->path_destroy(e->dp, paths[i]);
}

/* Create @n paths into @paths/@entropy and their blobs into @b. */
static int paths_create(struct xp_engine *e, uint32_t n, bool rc, uint32_t *paths,
			struct xp_conn_blob *b, struct pcm_diag *diag)
{
	for (uint32_t i = 0; i < n; i++) {
		struct xp_dp_path_attr attr = { .rc = rc, .index = i };
		int err = e->dp->ops->path_create(e->dp, &attr, &paths[i], &b->entropy[i],
						  &b->paths[i], diag);

		if (err < 0) {
			paths_destroy(e, paths, i);
			return err;
		}
	}
	return 0;
}

/* Whether -ENOSPC came from @cc's flows running out (not from the core's ids). */
static bool flows_ran_out(struct xp_engine *e, int rc, const struct xp_cc_entry *cc)
{
	struct xp_core_usage u;

	if (rc != -ENOSPC || !cc->pcm)
		return false;
	xp_core_usage(e->core, &u);
	return u.conns_open + u.conns_quarantined < e->cfg.core.max_conns;
}

/* ---- open, bind, accept ---------------------------------------------------------------------- */

static void opts_into_blob(const struct xp_conn_opts *o, struct xp_conn_blob *b)
{
	b->rc = o->rc;
	b->mode = o->mode == XP_CC_PCM_SYNC ? 0 : (uint8_t)(1 + o->async_mode);
	snprintf(b->cc, sizeof(b->cc), "%s", o->cc_name);
	snprintf(b->lb, sizeof(b->lb), "%s", o->lb_name);
}

/*
 * UC needs per-receive keys: without them a late duplicate chunk can be placed into the
 * receive that took its slot (docs/transport.md "Direct placement"). Where the datapath has
 * none, the dialer (@may_switch) takes RC instead (its blob tells the listener), and a
 * listener asked for UC refuses; uc_without_recv_keys allows UC anyway, for experiments.
 * Return: 0 (ctl->opts.rc may now be set), -EOPNOTSUPP with the reason in ctl->diag.
 */
static int check_recv_keys(struct xp_engine *e, struct xp_ctl *ctl, bool may_switch)
{
	if (ctl->opts.rc || (e->info.caps & XP_DP_CAP_RECV_KEYS) || e->cfg.uc_without_recv_keys)
		return 0;
	if (may_switch && (e->info.caps & XP_DP_CAP_RC)) {
		ctl->opts.rc = true;
		return 0;
	}
	snprintf(ctl->diag.msg, sizeof(ctl->diag.msg),
		 "engine %u: UC refused: datapath '%s' gives no per-receive keys (the device has "
		 "no type 1 memory windows), so a late duplicate chunk could be placed into a "
		 "later receive; use RC (reliable_connected), or uc_without_recv_keys for "
		 "experiments", e->cfg.index, e->info.name);
	return -EOPNOTSUPP;
}

/*
 * Create connection state: paths, CC flow, the core's connection; fill the
 * local blob into ctl->msg. @dialer: the options are this side's own (not the
 * peer's blob's), so UC may become RC (check_recv_keys()). Return: 0 with
 * ctl->conn set, or -errno.
 */
static int conn_open(struct xp_engine *e, struct xp_ctl *ctl, bool dialer, uint64_t now)
{
	const struct xp_conn_opts *o = &ctl->opts;
	uint32_t n = o->paths ? o->paths : XP_ENGINE_DEFAULT_PATHS;
	struct xp_conn_config cfg = { 0 };
	struct xp_conn_blob *b;
	struct xp_cc_entry *cc;
	uint32_t *paths, id, nonce;
	int rc;

	if (n > e->cfg.core.max_paths || n > XP_MAX_PATHS) {
		snprintf(ctl->diag.msg, sizeof(ctl->diag.msg),
			 "engine %u: %u paths asked, at most %u", e->cfg.index, n,
			 e->cfg.core.max_paths);
		return -EINVAL;
	}
	rc = check_recv_keys(e, ctl, dialer);
	if (rc < 0)
		return rc;
	if (o->rc ? !(e->info.caps & XP_DP_CAP_RC) : !(e->info.caps & XP_DP_CAP_UC))
		return ctl_fail(ctl, -EOPNOTSUPP, "datapath '%s' has no such data paths (RC/UC)",
				e->info.name);
	b = calloc(1, sizeof(*b));
	paths = calloc(n, sizeof(*paths));
	if (!b || !paths) {
		rc = -ENOMEM;
		goto err_free;
	}
	rc = paths_create(e, n, o->rc, paths, b, &ctl->diag);
	if (rc < 0)
		goto err_free;
	rc = xp_cc_table_get(&e->cc, o, now, &cc, &ctl->diag);
	if (rc < 0)
		goto err_paths;
	cfg.n_paths = n;
	cfg.path_handles = paths;
	cfg.path_entropy = b->entropy;
	cfg.rc_mode = o->rc;
	cfg.no_progress_ns = o->no_progress_ns;
	cfg.cc = xp_cc_entry_binding(cc);
	rc = xp_conn_create(e->core, &cfg, now, &id, &nonce);
	if (flows_ran_out(e, rc, cc)) {
		/* the binding's flows are used up: the next one is fresh */
		cc->exhausted = true;
		xp_cc_table_put(&e->cc, cc);
		rc = xp_cc_table_get(&e->cc, o, now, &cc, &ctl->diag);
		if (rc == 0) {
			cfg.cc = xp_cc_entry_binding(cc);
			rc = xp_conn_create(e->core, &cfg, now, &id, &nonce);
		}
	} else if (rc < 0) {
		xp_cc_table_put(&e->cc, cc);
	}
	if (rc < 0) {
		snprintf(ctl->diag.msg, sizeof(ctl->diag.msg), "engine %u: connection: %s%s",
			 e->cfg.index, strerror(-rc),
			 rc == -ENOSPC ? " (every connection id is in use or quarantined)" : "");
		goto err_paths;
	}
	b->conn_id = id;
	b->nonce = nonce;
	b->n_paths = n;
	opts_into_blob(o, b);
	e->dp->ops->local_addr(e->dp, &b->ctrl);
	rc = xp_blob_encode(b, ctl->msg, sizeof(ctl->msg));
	if (rc < 0) {
		xp_conn_close(e->core, id, XP_CLOSE_ABORT, now);
		e->conns[id] = (struct eng_conn){ .state = ECONN_CLOSING, .hidden = true,
						  .n_paths = (uint8_t)n, .paths = paths, .cc = cc };
		e->conns_open++;
		free(b);
		return ctl_fail(ctl, rc, "engine: the connection blob does not fit (%s)",
				"too many paths");
	}
	ctl->msg_len = (uint32_t)rc;
	e->conns[id] = (struct eng_conn){ .state = ECONN_OPEN, .n_paths = (uint8_t)n,
					  .paths = paths, .cc = cc };
	e->conns_open++;
	ctl->conn = id;
	free(b);
	return 0;

err_paths:
	paths_destroy(e, paths, n);
err_free:
	free(paths);
	free(b);
	return rc;
}

/* Abort connection @id after a failed setup; the engine takes its CLOSE. */
static void conn_abort_hidden(struct xp_engine *e, uint32_t id, uint64_t now)
{
	e->conns[id].hidden = true;
	e->conns[id].state = ECONN_CLOSING;
	xp_conn_close(e->core, id, XP_CLOSE_ABORT, now);
}

static int conn_bind(struct xp_engine *e, uint32_t id, const struct xp_conn_blob *peer,
		     struct pcm_diag *diag, uint64_t now)
{
	struct eng_conn *c = &e->conns[id];
	uint32_t handle;
	int rc;

	if (peer->n_paths != c->n_paths) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "engine %u: the peer has %u paths, this side %u", e->cfg.index,
			 peer->n_paths, c->n_paths);
		return -EPROTO;
	}
	rc = e->dp->ops->peer_open(e->dp, &peer->ctrl, &handle, diag);
	if (rc < 0)
		return rc;
	c->peer = handle;
	c->has_peer = true;
	for (uint32_t i = 0; i < c->n_paths; i++) {
		rc = e->dp->ops->path_connect(e->dp, c->paths[i], handle, &peer->paths[i], diag);
		if (rc < 0)
			return rc;
	}
	rc = xp_conn_bind(e->core, id, peer->conn_id, peer->nonce, handle, now);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "engine %u: bind: %s", e->cfg.index,
			 strerror(-rc));
		return rc;
	}
	c->state = ECONN_BOUND;
	return 0;
}

static int decode_peer(struct xp_ctl *ctl, struct xp_conn_blob *peer)
{
	const char *why = "";
	int rc = xp_blob_decode(ctl->peer_msg, ctl->peer_len, peer, &why);

	if (rc < 0)
		snprintf(ctl->diag.msg, sizeof(ctl->diag.msg),
			 "the peer's connection blob is malformed at '%s'", why);
	return rc;
}

static int ctl_bind(struct xp_engine *e, struct xp_ctl *ctl, uint64_t now)
{
	struct xp_conn_blob *peer;
	int rc;

	if (ctl->conn >= e->cfg.core.max_conns || e->conns[ctl->conn].state != ECONN_OPEN ||
	    e->conns[ctl->conn].hidden)
		return -ENOENT;
	peer = malloc(sizeof(*peer));
	if (!peer)
		return -ENOMEM;
	rc = decode_peer(ctl, peer);
	if (rc == 0)
		rc = conn_bind(e, ctl->conn, peer, &ctl->diag, now);
	free(peer);
	if (rc < 0)
		conn_abort_hidden(e, ctl->conn, now);
	return rc;
}

static int ctl_accept(struct xp_engine *e, struct xp_ctl *ctl, uint64_t now)
{
	struct xp_conn_blob *peer = malloc(sizeof(*peer));
	int rc;

	if (!peer)
		return -ENOMEM;
	rc = decode_peer(ctl, peer);
	if (rc == 0) {
		ctl->opts.paths = peer->n_paths;
		ctl->opts.rc = peer->rc;
		rc = conn_open(e, ctl, false, now);
	}
	if (rc == 0) {
		rc = conn_bind(e, ctl->conn, peer, &ctl->diag, now);
		if (rc < 0)
			conn_abort_hidden(e, ctl->conn, now);
	}
	free(peer);
	return rc;
}

static int ctl_drop(struct xp_engine *e, struct xp_ctl *ctl, uint64_t now)
{
	if (ctl->conn >= e->cfg.core.max_conns || e->conns[ctl->conn].state == ECONN_FREE ||
	    e->conns[ctl->conn].hidden)
		return -ENOENT;
	conn_abort_hidden(e, ctl->conn, now);
	return 0;
}

/*
 * Swap within the connection's own binding when it has the shells the new
 * policy needs (PCM, same shell mode): the flow moves to the new packages
 * with its state handed over (xp_cc_pcm_flow_swap()). Return: 0, -EXDEV (a
 * move to another binding is needed), or the swap's error.
 */
static int set_cc_in_place(struct xp_engine *e, struct xp_ctl *ctl, uint64_t now)
{
	const struct xp_cc_entry *x = e->conns[ctl->conn].cc;
	const struct xp_conn_opts *o = &ctl->opts;
	struct xp_conn_info info;
	int rc;

	if (!x || !x->pcm || !o->cc || x->mode != o->mode ||
	    (o->mode == XP_CC_PCM_ASYNC && x->async_mode != o->async_mode))
		return -EXDEV;
	rc = xp_conn_info(e->core, ctl->conn, &info);
	if (rc == 0)
		rc = xp_cc_pcm_flow_swap(x->pcm, info.cc_flow, o->cc, o->lb, now, &ctl->diag);
	if (rc == 0)
		xp_conn_cc_refresh(e->core, ctl->conn, now);
	return rc == -E2BIG ? -EXDEV : rc;
}

static int ctl_conn_info(struct xp_engine *e, struct xp_ctl *ctl)
{
	struct xp_conn_query *q = ctl->addr;

	if (!q && ctl->len)
		return -EINVAL;
	for (size_t i = 0; i < ctl->len; i++)
		q[i].status = xp_engine_conn_ok(e, q[i].conn)
				  ? xp_conn_info(e->core, q[i].conn, &q[i].info)
				  : -ENOENT;
	return 0;
}

static int ctl_set_cc(struct xp_engine *e, struct xp_ctl *ctl, uint64_t now)
{
	struct eng_conn *c;
	struct xp_cc_entry *cc;
	int rc;

	if (!xp_engine_conn_ok(e, ctl->conn))
		return -ENOENT;
	c = &e->conns[ctl->conn];
	if (ctl->opts.no_progress_ns)
		(void)xp_conn_set_no_progress(e->core, ctl->conn, ctl->opts.no_progress_ns, now);
	rc = set_cc_in_place(e, ctl, now);
	if (rc != -EXDEV)
		return rc;
	rc = xp_cc_table_get(&e->cc, &ctl->opts, now, &cc, &ctl->diag);
	if (rc < 0)
		return rc;
	rc = xp_conn_set_cc(e->core, ctl->conn, xp_cc_entry_binding(cc), now);
	if (flows_ran_out(e, rc, cc)) {
		cc->exhausted = true;
		xp_cc_table_put(&e->cc, cc);
		rc = xp_cc_table_get(&e->cc, &ctl->opts, now, &cc, &ctl->diag);
		if (rc == 0)
			rc = xp_conn_set_cc(e->core, ctl->conn, xp_cc_entry_binding(cc), now);
		else
			return rc;
	}
	if (rc < 0) {
		xp_cc_table_put(&e->cc, cc);
		snprintf(ctl->diag.msg, sizeof(ctl->diag.msg), "engine %u: policy swap: %s",
			 e->cfg.index, strerror(-rc));
		return rc;
	}
	xp_cc_table_put(&e->cc, c->cc);
	c->cc = cc;
	return 0;
}

void xp_engine_ctl(struct xp_engine *e, struct xp_ctl *ctl, uint64_t now_ns)
{
	int rc;

	switch (ctl->op) {
	case XP_CTL_MR_REG:
		rc = mr_reg(e, ctl);
		break;
	case XP_CTL_MR_DEREG:
		rc = mr_dereg(e, ctl);
		break;
	case XP_CTL_CONN_OPEN:
		rc = conn_open(e, ctl, true, now_ns);
		break;
	case XP_CTL_CONN_BIND:
		rc = ctl_bind(e, ctl, now_ns);
		break;
	case XP_CTL_CONN_ACCEPT:
		rc = ctl_accept(e, ctl, now_ns);
		break;
	case XP_CTL_CONN_DROP:
		rc = ctl_drop(e, ctl, now_ns);
		break;
	case XP_CTL_SET_CC:
		rc = ctl_set_cc(e, ctl, now_ns);
		break;
	case XP_CTL_CONN_INFO:
		rc = ctl_conn_info(e, ctl);
		break;
	case XP_CTL_PORT_ADD:
		rc = xp_engine_port_add(e, ctl->addr);
		break;
	case XP_CTL_PORT_DEL:
		rc = xp_engine_port_del(e, ctl->addr);
		break;
	case XP_CTL_CALL:
		rc = ctl->call ? ctl->call(ctl->call_arg) : -EINVAL;
		break;
	default:
		rc = -EINVAL;
		break;
	}
	ctl->status = rc;
}

/* ---- the end --------------------------------------------------------------------------------- */

void xp_engine_close(struct xp_engine *e, const struct xp_cmd *c, uint64_t now)
{
	struct xp_engine_comp comp = { .kind = XP_ECOMP_CLOSE, .conn = c->conn,
				       .cookie = c->cookie };
	int rc;

	if (!xp_engine_conn_ok(e, c->conn)) {
		comp.status = -ENOTCONN;
		xp_engine_complete(e, &comp);
		return;
	}
	if (c->close_mode == XP_CLOSE_ABORT)
		e->conns[c->conn].aborted = true;
	rc = xp_conn_close(e->core, c->conn, (enum xp_close_mode)c->close_mode, now);
	e->conns[c->conn].state = ECONN_CLOSING;
	if (rc < 0 && rc != -EALREADY) {
		comp.status = rc;
		xp_engine_complete(e, &comp);
	}
}

static void conn_release(struct xp_engine *e, uint32_t id)
{
	struct eng_conn *c = &e->conns[id];

	paths_destroy(e, c->paths, c->n_paths);
	free(c->paths);
	if (c->has_peer)
		e->dp->ops->peer_close(e->dp, c->peer);
	if (c->cc)
		xp_cc_table_put(&e->cc, c->cc);
	*c = (struct eng_conn){ .state = ECONN_FREE };
	e->conns_open--;
}

void xp_engine_conn_closed(struct xp_engine *e, uint32_t conn, int status)
{
	bool hidden;

	if (conn >= e->cfg.core.max_conns || e->conns[conn].state == ECONN_FREE)
		return;
	hidden = e->conns[conn].hidden;
	conn_release(e, conn);
	if (!hidden) {
		struct xp_engine_comp c = { .kind = XP_ECOMP_CLOSE, .status = status,
					    .conn = conn };

		xp_engine_complete(e, &c);
	}
}

void xp_engine_conn_release_all(struct xp_engine *e)
{
	for (uint32_t i = 0; i < e->cfg.core.max_conns; i++)
		if (e->conns[i].state != ECONN_FREE)
			conn_release(e, i);
}
