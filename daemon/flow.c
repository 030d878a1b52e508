// SPDX-License-Identifier: MIT
/*
 * flow.c - a client's conns and listeners: requests, descriptor checks,
 * data-plane events, and the record each closed flow leaves. Listening names
 * and dials are resolved per user (names.h); both ends of a conn know the
 * other's credentials; flows and listeners are charged to the user
 * (tenant.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "log.h"
#include "names.h"
#include "pcmd.h"

/* Does a conn in this state answer to its id? */
static bool conn_known(const struct pcmd_conn *cn)
{
	return cn->state != PCMD_CONN_FREE && cn->state != PCMD_CONN_ACCEPTING;
}

int pcmd_conn_find(const struct pcmd_client *c, uint32_t conn_id, uint32_t *index)
{
	const struct pcmd_conn *cn;
	uint32_t i;

	if (!c->conns || !pcmd_id_index(conn_id, c->max_flows, &i))
		return -EBADF;
	cn = &c->conns[i];
	if (cn->gen != pcmd_id_gen(conn_id) || !conn_known(cn))
		return -EBADF;
	*index = i;
	return 0;
}

/*
 * Tell the descriptor path (intake.h) what conn @index is now. Called after
 * every change of its state, and before the data plane hears of a close: a
 * conn stops taking descriptors before its flow closes.
 */
static void conn_sync(struct pcmd_client *c, uint32_t index)
{
	const struct pcmd_conn *cn = &c->conns[index];
	uint32_t bits = conn_known(cn) ? PCMD_INTAKE_KNOWN : 0;
	uint64_t handle = 0;

	if (!c->intake)
		return;
	if (cn->state == PCMD_CONN_ESTABLISHED && !cn->user_closed && cn->has_plane_flow) {
		bits |= PCMD_INTAKE_USABLE;
		handle = pcmd_intake_flow_handle(c->intake, cn->plane_flow);
	}
	pcmd_intake_conn_set(c->intake, index, cn->gen, bits, handle);
}

static uint32_t conn_id_of(const struct pcmd_client *c, uint32_t index)
{
	return pcmd_conn_id(index, c->conns[index].gen);
}

static int alloc_conn(struct pcmd_client *c, uint32_t *index, char *err, size_t err_len)
{
	for (uint32_t i = 0; i < c->max_flows; i++) {
		if (c->conns[i].state == PCMD_CONN_FREE) {
			struct pcmd_conn *cn = &c->conns[i];
			uint16_t gen = cn->gen;
			int rc =
			    pcmd_tenant_charge(c->d, &c->share, PCMD_TENANT_FLOWS, 1, err, err_len);

			if (rc < 0)
				return rc;
			memset(cn, 0, sizeof(*cn));
			cn->gen = gen;
			cn->opened_ns = pcmd_now_ns();
			c->n_conns_used++;
			if (c->intake)
				pcmd_intake_conn_reset(c->intake, i);
			*index = i;
			return 0;
		}
	}
	snprintf(err, err_len, "this client already has limits.flows_per_client = %u flows",
		 c->max_flows);
	return -EMFILE;
}

static void free_conn(struct pcmd_client *c, uint32_t index)
{
	struct pcmd_conn *cn = &c->conns[index];

	if (cn->choice_held)
		pcmd_policy_choice_hold(&cn->choice, -1);
	cn->choice_held = false;
	cn->state = PCMD_CONN_FREE;
	cn->has_plane_flow = false;
	/* A new generation: the old id now names nothing. */
	cn->gen = (uint16_t)(cn->gen + 1);
	c->n_conns_used--;
	pcmd_tenant_credit(&c->share, PCMD_TENANT_FLOWS, 1);
	conn_sync(c, index);
}

static void plane_opts_of(const struct pcmd_policy_choice *ch, uint32_t paths, bool rc,
			  struct pcmd_plane_flow_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->cc = ch->cc->h.pkg;
	o->lb = ch->lb ? ch->lb->h.pkg : NULL;
	o->mode = ch->mode;
	o->skew_bound = ch->skew_bound;
	o->no_progress_ms = ch->no_progress_ms;
	o->paths = paths;
	o->reliable_connected = rc;
}

static int need_region(struct pcmd_client *c, char *err, size_t err_len)
{
	if (c->chan)
		return 0;
	snprintf(err, err_len, "this request needs a region: send REGION after HELLO");
	return -EPROTO;
}

static int need_running(struct pcmd_client *c, char *err, size_t err_len)
{
	if (c->d->phase == PCMD_PHASE_RUNNING)
		return 0;
	snprintf(err, err_len, "pcmd is shutting down");
	return -ESHUTDOWN;
}

int pcmd_flow_listen(struct pcmd_client *c, const struct pcmd_req_listen *req, uint32_t *id,
		     char *err, size_t err_len)
{
	struct pcmd *d = c->d;
	uint32_t backlog = req->backlog ? req->backlog : d->cfg->limits.backlog;
	int rc = need_region(c, err, err_len);

	if (rc == 0)
		rc = need_running(c, err, err_len);
	if (rc < 0)
		return rc;
	if (backlog > d->cfg->limits.backlog) {
		snprintf(err, err_len, "backlog %u is above limits.backlog = %u", backlog,
			 d->cfg->limits.backlog);
		return -EINVAL;
	}
	if (req->flags & ~PCMD_LISTEN_ANY_USER) {
		snprintf(err, err_len, "flags %#x: only PCMD_LISTEN_ANY_USER (1) is defined",
			 req->flags);
		return -EINVAL;
	}
	rc = pcmd_names_check_listen(c, req->addr, err, err_len);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < c->max_listeners; i++) {
		struct pcmd_listener *l = &c->listeners[i];

		if (l->used)
			continue;
		rc = pcmd_tenant_charge(d, &c->share, PCMD_TENANT_LISTENERS, 1, err, err_len);
		if (rc < 0)
			return rc;
		rc = d->plane_ops->listen(d->plane, c->region, backlog, &l->plane_listener);
		if (rc < 0) {
			pcmd_tenant_credit(&c->share, PCMD_TENANT_LISTENERS, 1);
			snprintf(err, err_len, "listen on '%s': %s", req->addr, strerror(-rc));
			return rc;
		}
		l->used = true;
		l->any_user = req->flags & PCMD_LISTEN_ANY_USER;
		l->gen++;
		snprintf(l->addr, sizeof(l->addr), "%s", req->addr);
		*id = (l->gen & 0xffff) << 16 | (i + 1);
		return 0;
	}
	snprintf(err, err_len, "this client already has limits.listeners_per_client = %u listeners",
		 c->max_listeners);
	return -EMFILE;
}

static int find_listener(struct pcmd_client *c, uint32_t id, uint32_t *index, char *err,
			 size_t err_len)
{
	uint32_t found = UINT32_MAX, n = 0;

	if (id == 0) {
		for (uint32_t i = 0; i < c->max_listeners; i++)
			if (c->listeners[i].used) {
				found = i;
				n++;
			}
		if (n == 1) {
			*index = found;
			return 0;
		}
		snprintf(
		    err, err_len,
		    n ? "%u listeners: name the one to accept on" : "no listener: LISTEN first", n);
		return -EINVAL;
	}
	if (!pcmd_id_index(id, c->max_listeners, &found) || !c->listeners[found].used ||
	    (uint16_t)c->listeners[found].gen != pcmd_id_gen(id)) {
		snprintf(err, err_len, "listener id %#x names no listener of this client", id);
		return -EBADF;
	}
	*index = found;
	return 0;
}

static int reserve_completion(struct pcmd_client *c, char *err, size_t err_len)
{
	uint32_t outstanding = 0;
	int rc = pcmd_intake_reserve(c->intake, &outstanding);

	if (rc == -ENOBUFS)
		snprintf(err, err_len,
			 "no completion slot free (%u outstanding): poll completions "
			 "first",
			 outstanding);
	else if (rc < 0)
		snprintf(err, err_len, "completion ring corrupt");
	return rc;
}

/* A free conn with its completion slot reserved, for a CONNECT or an ACCEPT. */
static int open_conn(struct pcmd_client *c, uint32_t *index, char *err, size_t err_len)
{
	int rc = alloc_conn(c, index, err, err_len);

	if (rc < 0)
		return rc;
	rc = reserve_completion(c, err, err_len);
	if (rc < 0)
		free_conn(c, *index);
	return rc;
}

/* The data plane refused the request: the conn and its slot go back. */
static void drop_conn(struct pcmd_client *c, uint32_t index)
{
	pcmd_intake_unreserve(c->intake);
	free_conn(c, index);
}

/* The credentials of the client at a conn's other end. */
static struct pcmd_peer_cred cred_of(const struct pcmd_client *c)
{
	return (struct pcmd_peer_cred){.uid = (uint32_t)c->cred.uid,
				       .gid = (uint32_t)c->cred.gid,
				       .pid = (uint32_t)c->cred.pid,
				       .known = 1};
}

/*
 * The listener a dial reaches (names.h), or *owner NULL when it reaches none
 * that takes it: that connect completes with -ECONNREFUSED, as a dial to a
 * name nobody listens on does.
 */
static int dial_target(struct pcmd_client *c, const char *addr, struct pcmd_client **owner,
		       uint32_t *listener, char *err, size_t err_len)
{
	char why[PCMD_ERRTEXT_MAX];
	int rc = pcmd_names_resolve(c, addr, owner, listener, why, sizeof(why));

	if (rc == -ECONNREFUSED) {
		pcmd_debug("client %u (uid %u): %s", c->id, (unsigned)c->cred.uid, why);
		*owner = NULL;
		return 0;
	}
	if (rc < 0)
		snprintf(err, err_len, "%s", why);
	return rc;
}

/* A dial that reached no listener: its completion (-ECONNREFUSED) is posted now. */
static void refuse_dial(struct pcmd_client *c, uint32_t index)
{
	const struct pcmd_plane_event ev = {.kind = PCMD_PLANE_EV_CONNECTED,
					    .status = -ECONNREFUSED};
	struct pcmd_cqe done;

	if (pcmd_flow_on_connected(c, index, &ev, &done))
		pcmd_intake_post_completion(c->intake, &done);
}

int pcmd_flow_connect(struct pcmd_client *c, const struct pcmd_req_connect *req, uint32_t *conn_id,
		      char *err, size_t err_len)
{
	struct pcmd *d = c->d;
	struct pcmd_client *owner = NULL;
	struct pcmd_plane_flow_opts o;
	struct pcmd_policy_choice ch;
	struct pcmd_conn *cn;
	uint32_t index, lst = 0;
	int rc = need_region(c, err, err_len);

	if (rc == 0)
		rc = need_running(c, err, err_len);
	if (rc == 0)
		rc = pcmd_policies_choose(d->policies, d->cfg, req->addr, &req->opts, &ch, err,
					  err_len);
	if (rc == 0)
		rc = dial_target(c, req->addr, &owner, &lst, err, err_len);
	if (rc == 0)
		rc = open_conn(c, &index, err, err_len);
	if (rc < 0)
		return rc;
	cn = &c->conns[index];
	cn->state = PCMD_CONN_CONNECTING;
	conn_sync(c, index);
	cn->cookie = req->cookie;
	cn->choice = ch;
	cn->choice_held = true;
	pcmd_policy_choice_hold(&ch, 1);
	cn->flow_id = ++d->next_flow_id;
	snprintf(cn->peer, sizeof(cn->peer), "%s", req->addr);
	*conn_id = conn_id_of(c, index);
	if (!owner) {
		d->counters.snap.flows_opened++;
		refuse_dial(c, index); /* frees the conn: *conn_id names it no more */
		return 0;
	}
	cn->peer_cred = cred_of(owner);
	plane_opts_of(&ch, req->opts.paths, req->opts.reliable_connected, &o);
	rc = d->plane_ops->connect(d->plane, c->region, owner->listeners[lst].plane_listener, &o,
				   pcmd_token(c->key, PCMD_TOKEN_CONN | index));
	if (rc < 0) {
		snprintf(err, err_len, "connect to '%s': %s", req->addr, strerror(-rc));
		drop_conn(c, index);
		return rc;
	}
	d->counters.snap.flows_opened++;
	return 0;
}

int pcmd_flow_accept(struct pcmd_client *c, const struct pcmd_req_accept *req, char *err,
		     size_t err_len)
{
	struct pcmd *d = c->d;
	uint32_t lst, index;
	int rc = need_region(c, err, err_len);

	if (rc == 0)
		rc = need_running(c, err, err_len);
	if (rc == 0)
		rc = find_listener(c, req->listener_id, &lst, err, err_len);
	if (rc == 0)
		rc = open_conn(c, &index, err, err_len);
	if (rc < 0)
		return rc;
	c->conns[index].state = PCMD_CONN_ACCEPTING;
	c->conns[index].cookie = req->cookie;
	c->conns[index].listener = lst;
	rc = d->plane_ops->accept(d->plane, c->listeners[lst].plane_listener,
				  pcmd_token(c->key, PCMD_TOKEN_CONN | index));
	if (rc < 0) {
		snprintf(err, err_len, "accept on '%s': %s", c->listeners[lst].addr, strerror(-rc));
		drop_conn(c, index);
	}
	return rc;
}

/* Ask the data plane to close; keep the flow's last counters for its record. */
static void start_close(struct pcmd_client *c, uint32_t index, bool abort)
{
	struct pcmd_conn *cn = &c->conns[index];

	cn->state = PCMD_CONN_CLOSING;
	conn_sync(c, index);
	c->d->plane_ops->close(c->d->plane, cn->plane_flow, abort);
}

int pcmd_flow_close(struct pcmd_client *c, const struct pcmd_req_close *req, char *err,
		    size_t err_len)
{
	uint32_t index;
	struct pcmd_conn *cn;

	if (pcmd_conn_find(c, req->conn_id, &index) < 0) {
		snprintf(err, err_len, "conn id %#x names no connection of this client",
			 req->conn_id);
		return -EBADF;
	}
	cn = &c->conns[index];
	if (cn->user_closed || cn->state == PCMD_CONN_CLOSING) {
		snprintf(err, err_len, "conn id %#x is already closing", req->conn_id);
		return -EALREADY;
	}
	cn->user_closed = true;
	conn_sync(c, index);
	if (cn->state == PCMD_CONN_ESTABLISHED)
		start_close(c, index, req->flags & PCMD_CLOSE_ABORT);
	/* CONNECTING: closed when the connect finishes; its completion says -ECONNABORTED. */
	return 0;
}

int pcmd_flow_set_policy(struct pcmd_client *c, uint32_t index, const struct pcmd_flow_opts *opts,
			 char *err, size_t err_len)
{
	struct pcmd *d = c->d;
	struct pcmd_conn *cn = &c->conns[index];
	struct pcmd_policy_choice ch;
	struct pcmd_plane_flow_opts o;
	int rc;

	if (cn->state != PCMD_CONN_ESTABLISHED) {
		snprintf(err, err_len, "flow %u is not established", cn->flow_id);
		return -ENOTCONN;
	}
	rc = pcmd_policies_choose(d->policies, d->cfg, cn->peer, opts, &ch, err, err_len);
	if (rc < 0)
		return rc;
	plane_opts_of(&ch, opts->paths, opts->reliable_connected, &o);
	rc = d->plane_ops->set_policy(d->plane, cn->plane_flow, &o);
	if (rc < 0) {
		snprintf(err, err_len, "flow %u: the data plane refused the swap: %s", cn->flow_id,
			 strerror(-rc));
		return rc;
	}
	pcmd_policy_choice_hold(&ch, 1);
	if (cn->choice_held)
		pcmd_policy_choice_hold(&cn->choice, -1);
	cn->choice = ch;
	cn->choice_held = true;
	d->counters.snap.policy_swaps++;
	return 0;
}

/* ---- data-plane events ----------------------------------------------------------------- */

/* Is the conn an event names in the state the event needs? Logs the data plane's bug if not. */
static bool event_fits(const struct pcmd_client *c, uint32_t index, uint32_t state,
		       const char *event)
{
	static const char *const names[] = {"free", "connecting", "accepting", "established",
					    "closing"};

	if (c->conns[index].state == state)
		return true;
	pcmd_err("data plane reported %s for conn %u of client %u, which is %s, not %s: dropped",
		 event, index, c->id, names[c->conns[index].state], names[state]);
	return false;
}

/* The completion of a conn's CONNECT or ACCEPT, for the caller to post. */
static void completion(struct pcmd_cqe *done, uint8_t op, uint32_t conn_id, uint64_t cookie,
		       int status)
{
	memset(done, 0, sizeof(*done));
	done->op = op;
	done->status = status;
	done->conn_id = conn_id;
	done->cookie = cookie;
}

/* The data plane's flow @ev->flow now carries conn @index. */
static void establish(struct pcmd_client *c, uint32_t index, const struct pcmd_plane_event *ev)
{
	struct pcmd_conn *cn = &c->conns[index];

	cn->has_plane_flow = true;
	cn->plane_flow = ev->flow;
	cn->state = PCMD_CONN_ESTABLISHED;
}

/* May a conn that just came up stay up? Not when its client or pcmd is going away. */
static bool may_stay_up(const struct pcmd_client *c)
{
	return c->state == PCMD_CLIENT_ALIVE && c->d->phase == PCMD_PHASE_RUNNING;
}

bool pcmd_flow_on_connected(struct pcmd_client *c, uint32_t index,
			    const struct pcmd_plane_event *ev, struct pcmd_cqe *done)
{
	struct pcmd_conn *cn = &c->conns[index];
	int status = ev->status;

	if (!event_fits(c, index, PCMD_CONN_CONNECTING, "a connect"))
		return false;
	if (status == 0) {
		establish(c, index, ev);
		conn_sync(c, index);
		if (cn->user_closed || !may_stay_up(c)) {
			status = -ECONNABORTED;
			start_close(c, index, true);
		}
	}
	completion(done, PCMD_OP_CONNECT, conn_id_of(c, index), cn->cookie, status);
	if (ev->status < 0)
		free_conn(c, index);
	return true;
}

static int setup_accepted(struct pcmd_client *c, uint32_t index, const struct pcmd_plane_event *ev)
{
	struct pcmd *d = c->d;
	struct pcmd_conn *cn = &c->conns[index];
	struct pcmd_plane_flow_opts o;
	char err[PCMD_ERRTEXT_MAX];
	int rc;

	snprintf(cn->peer, sizeof(cn->peer), "%.*s", PCMD_ADDR_MAX - 1, ev->peer);
	/* the dialer's packages and mode decide (pcm_transport(3)); one unloaded meanwhile
	 * leaves the rule's or the default */
	rc = -ENOENT;
	if (ev->peer_opts.policy[0])
		rc = pcmd_policies_choose(d->policies, d->cfg, cn->peer, &ev->peer_opts,
					  &cn->choice, err, sizeof(err));
	if (rc < 0)
		rc = pcmd_policies_choose(d->policies, d->cfg, cn->peer, NULL, &cn->choice, err,
					  sizeof(err));
	if (rc < 0) {
		pcmd_warn("client %u: accepted flow from '%s' refused: %s", c->id, cn->peer, err);
		return rc;
	}
	pcmd_policy_choice_hold(&cn->choice, 1);
	cn->choice_held = true;
	plane_opts_of(&cn->choice, 0, false, &o);
	rc = d->plane_ops->flow_setup(d->plane, cn->plane_flow, &o);
	if (rc < 0)
		pcmd_warn("client %u: accepted flow from '%s': data plane setup failed: %s", c->id,
			  cn->peer, strerror(-rc));
	return rc;
}

bool pcmd_flow_on_accepted(struct pcmd_client *c, uint32_t index, const struct pcmd_plane_event *ev,
			   const struct pcmd_client *dialer, struct pcmd_cqe *done)
{
	struct pcmd_conn *cn = &c->conns[index];
	int status = ev->status;

	if (!event_fits(c, index, PCMD_CONN_ACCEPTING, "an accept"))
		return false;
	if (status < 0) {
		completion(done, PCMD_OP_ACCEPT, 0, cn->cookie, status);
		free_conn(c, index);
		return true;
	}
	establish(c, index, ev);
	if (dialer)
		cn->peer_cred = cred_of(dialer);
	cn->flow_id = ++c->d->next_flow_id;
	cn->opened_ns = pcmd_now_ns();
	c->d->counters.snap.flows_opened++;
	status = setup_accepted(c, index, ev);
	if (status == 0 && !may_stay_up(c))
		status = -ECONNABORTED;
	if (status < 0)
		start_close(c, index, true);
	else
		conn_sync(c, index);
	completion(done, PCMD_OP_ACCEPT, status == 0 ? conn_id_of(c, index) : 0, cn->cookie,
		   status);
	return true;
}

static void write_record(struct pcmd_client *c, const struct pcmd_conn *cn,
			 const struct pcmd_intake_counters *n)
{
	struct pcmd *d = c->d;
	struct pcmd_flow_record r = {
	    .run_id = d->run_id,
	    .flow_id = cn->flow_id,
	    .client_id = c->id,
	    .pid = (uint32_t)c->cred.pid,
	    .uid = (uint32_t)c->cred.uid,
	    .peer = cn->peer,
	    .policy = cn->choice.cc ? cn->choice.cc->h.pkg->name : "",
	    .lb_policy = cn->choice.lb ? cn->choice.lb->h.pkg->name : "",
	    .mode = pcmd_shell_mode_name(cn->choice.mode),
	    .opened_unix_ns = pcmd_wall_of_ns(cn->opened_ns),
	    .opened_ns = cn->opened_ns,
	    .duration_ns = pcmd_now_ns() - cn->opened_ns,
	    .tx_bytes = n->tx_bytes,
	    .rx_bytes = n->rx_bytes,
	    .tx_msgs = n->tx_msgs,
	    .rx_msgs = n->rx_msgs,
	};
	char row[PCMD_RECORD_LINE_MAX];

	if (!pcmd_writer_active(&d->output.records))
		return;
	pcmd_stats_record_line(&r, row, sizeof(row));
	pcmd_writer_append(&d->output.records, row);
}

/* A closed flow's bytes and messages, kept in the totals. */
static void add_closed(struct pcmd_counters *k, const struct pcmd_intake_counters *n)
{
	k->snap.tx_bytes += n->tx_bytes;
	k->snap.rx_bytes += n->rx_bytes;
	k->snap.tx_msgs += n->tx_msgs;
	k->snap.rx_msgs += n->rx_msgs;
}

void pcmd_flow_on_closed(struct pcmd_client *c, uint32_t index)
{
	struct pcmd_conn *cn = &c->conns[index];
	struct pcmd_counters *k = &c->d->counters;
	struct pcmd_intake_counters n;

	if (!event_fits(c, index, PCMD_CONN_CLOSING, "a close"))
		return;
	/* The data path completed the flow's posts before the data plane reported its close. */
	pcmd_intake_conn_counters(c->intake, index, &n);
	if (n.outstanding)
		pcmd_err("data plane closed conn %u of client %u with %u descriptors outstanding",
			 index, c->id, n.outstanding);
	write_record(c, cn, &n);
	add_closed(k, &n);
	if (c->share.t)
		add_closed(&c->share.t->counters, &n);
	free_conn(c, index);
}

void pcmd_flow_abort_all(struct pcmd_client *c)
{
	struct pcmd *d = c->d;

	for (uint32_t i = 0; c->listeners && i < c->max_listeners; i++) {
		if (c->listeners[i].used) {
			d->plane_ops->unlisten(d->plane, c->listeners[i].plane_listener);
			c->listeners[i].used = false;
			pcmd_tenant_credit(&c->share, PCMD_TENANT_LISTENERS, 1);
		}
	}
	for (uint32_t i = 0; c->conns && i < c->max_flows; i++) {
		struct pcmd_conn *cn = &c->conns[i];

		cn->user_closed = true;
		conn_sync(c, i);
		if (cn->state == PCMD_CONN_ESTABLISHED)
			start_close(c, i, true);
	}
}

bool pcmd_flow_all_free(const struct pcmd_client *c)
{
	return c->n_conns_used == 0;
}

void pcmd_flow_info(struct pcmd_client *c, uint32_t index, struct pcmd_flow_info *out)
{
	struct pcmd *d = c->d;
	struct pcmd_conn *cn = &c->conns[index];

	memset(out, 0, sizeof(*out));
	out->flow_id = cn->flow_id;
	out->client_id = c->id;
	out->pid = (uint32_t)c->cred.pid;
	out->uid = (uint32_t)c->cred.uid;
	out->gid = (uint32_t)c->cred.gid;
	out->peer_cred = cn->peer_cred;
	out->conn_id = conn_id_of(c, index);
	out->state = cn->state == PCMD_CONN_CONNECTING	  ? PCMD_FLOW_CONNECTING
		     : cn->state == PCMD_CONN_ESTABLISHED ? PCMD_FLOW_ESTABLISHED
							  : PCMD_FLOW_CLOSING;
	out->mode = cn->choice.mode;
	out->rule = cn->choice.rule;
	snprintf(out->peer, sizeof(out->peer), "%s", cn->peer);
	if (cn->choice.cc)
		snprintf(out->policy, sizeof(out->policy), "%s", cn->choice.cc->h.pkg->name);
	if (cn->choice.lb)
		snprintf(out->lb_policy, sizeof(out->lb_policy), "%s", cn->choice.lb->h.pkg->name);
	if (c->intake) {
		struct pcmd_intake_counters n;

		pcmd_intake_conn_counters(c->intake, index, &n);
		out->tx_bytes = n.tx_bytes;
		out->rx_bytes = n.rx_bytes;
		out->tx_msgs = n.tx_msgs;
		out->rx_msgs = n.rx_msgs;
	}
	if (cn->state != PCMD_CONN_ESTABLISHED || !cn->has_plane_flow ||
	    d->plane_ops->flow_stats(d->plane, cn->plane_flow, &out->m) < 0)
		memset(&out->m, 0, sizeof(out->m));
}
