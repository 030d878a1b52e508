// SPDX-License-Identifier: MIT
/*
 * client.c - a client's life in pcmd: made with its credentials checked
 * (access.h; its control requests are control.c's), its submissions taken
 * from the ring when its doorbell rings, its data-plane events routed back
 * (a connect's or accept's completion as flow.c returns it), and, when
 * its socket hangs up (exit, crash, SIGKILL), everything it held reclaimed:
 * flows aborted, listeners closed, region released by the data plane and then
 * unmapped, fds closed, tables freed.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "access.h"
#include "client.h"
#include "log.h"
#include "pcmd.h"

#define OWNER(ptr, member)                                                                         \
	((struct pcmd_client *)((char *)(ptr)-offsetof(struct pcmd_client, member)))

static void bell_done(struct pcmd_bell *bell, int res);
static void advance_reclaim(struct pcmd_client *c);

struct pcmd_client *pcmd_client_by_key(struct pcmd *d, uint32_t key)
{
	uint32_t slot = key & 0xffff;

	if (slot >= d->n_slots || !d->slots[slot] || d->slot_gen[slot] != key >> 16)
		return NULL;
	return d->slots[slot];
}

static uint32_t peer_groups(int fd, uint32_t *groups)
{
	gid_t g[PCMD_MAX_GROUPS];
	socklen_t len = sizeof(g);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) < 0)
		return 0;
	for (uint32_t i = 0; i < len / sizeof(gid_t); i++)
		groups[i] = g[i];
	return len / sizeof(gid_t);
}

static int free_slot(struct pcmd *d, uint32_t *slot)
{
	for (uint32_t i = 0; i < d->n_slots; i++) {
		if (!d->slots[i]) {
			*slot = i;
			return 0;
		}
	}
	return -EUSERS;
}

/*
 * Is there room for one more client of this kind (an admin may also take
 * limits.admin_clients), and for one more of its user's? Else why not.
 */
static int admit(struct pcmd *d, struct pcmd_client *c, char *why, size_t why_len)
{
	const struct pcmd_config *cfg = d->cfg;
	uint32_t accepted = d->n_clients - d->n_refused;

	if (!c->admin && accepted - d->n_admins >= cfg->limits.max_clients) {
		snprintf(
		    why, why_len,
		    "pcmd already serves limits.max_clients = %u clients (limits.admin_clients "
		    "= %u more are kept for admins)",
		    cfg->limits.max_clients, cfg->limits.admin_clients);
		return -EUSERS;
	}
	if (accepted >= cfg->limits.max_clients + cfg->limits.admin_clients) {
		snprintf(why, why_len,
			 "pcmd already serves limits.max_clients = %u clients and "
			 "limits.admin_clients = %u more for admins",
			 cfg->limits.max_clients, cfg->limits.admin_clients);
		return -EUSERS;
	}
	return pcmd_tenant_charge(d, &c->share, PCMD_TENANT_CLIENTS, 1, why, why_len);
}

/* The peer's credentials, groups, role and share, and whether pcmd takes it. */
static int check_peer(struct pcmd *d, struct pcmd_client *c, char *why, size_t why_len)
{
	socklen_t len = sizeof(c->cred);
	int rc;

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) < 0) {
		rc = -errno;
		snprintf(why, why_len, "SO_PEERCRED: %s", strerror(errno));
		return rc;
	}
	c->n_groups = peer_groups(c->fd, c->groups);
	rc = pcmd_access_check(d->cfg, &c->cred, c->groups, c->n_groups, why, why_len);
	if (rc < 0)
		return rc;
	c->admin = pcmd_access_admin(d->cfg, &c->cred, c->groups, c->n_groups);
	rc = pcmd_tenant_join(d, c->cred.uid, c->admin, &c->share);
	if (rc < 0) {
		snprintf(why, why_len, "out of memory");
		return rc;
	}
	rc = admit(d, c, why, why_len);
	if (rc < 0)
		pcmd_tenant_leave(d, &c->share);
	return rc;
}

#define REFUSALS_LOGGED_PER_S 10

/* Say in the log that refusals went unlogged, and start a new second. */
static void refusals_summary(struct pcmd *d, uint64_t now_ns)
{
	if (d->refusals_quiet)
		pcmd_warn("refused %u more client(s) in the last second (at most %d are logged one "
			  "by one)",
			  d->refusals_quiet, REFUSALS_LOGGED_PER_S);
	d->refusals_since_ns = now_ns;
	d->refusals_logged = 0;
	d->refusals_quiet = 0;
}

/* A refusal for the log: at most REFUSALS_LOGGED_PER_S a second, so a flood of
 * connections cannot flood the journal; the rest are counted. */
static void log_refusal(struct pcmd *d, const struct pcmd_client *c, const char *why)
{
	uint64_t now = pcmd_now_ns();

	if (now - d->refusals_since_ns >= 1000000000ull)
		refusals_summary(d, now);
	if (d->refusals_logged++ < REFUSALS_LOGGED_PER_S)
		pcmd_warn("refused a client (pid %d, uid %u, gid %u): %s", (int)c->cred.pid,
			  (unsigned)c->cred.uid, (unsigned)c->cred.gid, why);
	else
		d->refusals_quiet++;
}

int pcmd_client_new(struct pcmd *d, int fd, struct pcmd_client **out, char *why, size_t why_len)
{
	struct pcmd_client *c = calloc(1, sizeof(*c));
	char refusal[PCMD_ERRTEXT_MAX];
	uint32_t slot;
	int refused;

	why[0] = '\0';
	if (!c) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	c->d = d;
	c->fd = fd;
	refused = check_peer(d, c, refusal, sizeof(refusal));
	if (refused < 0) {
		log_refusal(d, c, refusal);
		d->counters.snap.clients_refused++;
	}
	/* A refused peer waits in a spare slot to read why; with none free, it is refused now. */
	if ((refused < 0 && d->n_refused >= PCMD_SPARE_SLOTS) || free_slot(d, &slot) < 0) {
		snprintf(why, why_len, "%s",
			 refused < 0 ? refusal : "no client slot free (a pcmd bug: say so)");
		pcmd_tenant_leave(d, &c->share);
		free(c);
		return refused < 0 ? refused : -EUSERS;
	}
	if (refused < 0) {
		c->refused = refused;
		memcpy(c->refusal, refusal, sizeof(c->refusal));
	}
	c->state = PCMD_CLIENT_ALIVE;
	c->id = ++d->next_client_id;
	c->key = slot | (uint32_t)d->slot_gen[slot] << 16;
	c->connected_ns = pcmd_now_ns();
	d->slots[slot] = c;
	d->n_clients++;
	if (c->refused)
		d->n_refused++;
	else
		d->counters.snap.clients_accepted++;
	if (!c->refused && c->admin)
		d->n_admins++;
	pcmd_debug("client %u connected (pid %d, uid %u%s)", c->id, (int)c->cred.pid,
		   (unsigned)c->cred.uid, c->admin ? ", admin" : "");
	*out = c;
	return 0;
}

void pcmd_client_send_notice(struct pcmd_client *c, uint32_t kind, int status, const char *text)
{
	struct pcmd_notice n;

	memset(&n, 0, sizeof(n));
	n.hdr.magic = PCMD_PROTO_MAGIC;
	n.hdr.version = PCMD_PROTO_VERSION;
	n.hdr.type = PCMD_MSG_NOTICE;
	n.hdr.len = sizeof(n);
	n.kind = kind;
	n.status = status;
	snprintf(n.text, sizeof(n.text), "%s", text);
	/* Best effort: a client whose socket is full just misses the notice. */
	if (send(c->fd, &n, sizeof(n), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		pcmd_debug("client %u: notice not delivered: %s", c->id, strerror(errno));
}

static void protocol_error(struct pcmd_client *c, const char *text)
{
	pcmd_warn("client %u (pid %d): %s; disconnecting it", c->id, (int)c->cred.pid, text);
	c->errors++;
	c->d->counters.snap.control_errors++;
	pcmd_client_send_notice(c, PCMD_NOTICE_ERROR, -EPROTO, text);
	pcmd_client_kill(c, "broke the ring protocol");
}

/* ---- the data channel ------------------------------------------------------------------ */

int pcmd_client_start_data_path(struct pcmd_client *c, struct pcmd_channel *ch)
{
	struct pcmd *d = c->d;
	int doorbell = -1, rc;

	rc = pcmd_intake_create(ch, c->key, c->max_flows, c->max_outstanding, c->max_message_bytes,
				&d->phase, d->plane_fd, &c->intake);
	if (rc < 0)
		return rc;
	c->chan = ch;
	if (!d->plane_ops->port_add)
		return 0;
	rc = pcmd_intake_port_add(c->intake, d->plane_ops, d->plane, c->region, &doorbell);
	if (rc < 0) {
		pcmd_intake_destroy(c->intake);
		c->intake = NULL;
		c->chan = NULL;
		return rc;
	}
	close(ch->sq_efd);
	ch->sq_efd = doorbell;
	return 0;
}

static void arm_bell(struct pcmd_client *c)
{
	if (c->bell.op.pending || c->state != PCMD_CLIENT_ALIVE || !c->chan ||
	    pcmd_intake_is_port(c->intake))
		return;
	if (pcmd_loop_bell(c->d->loop, &c->bell, c->chan->sq_efd, bell_done) < 0)
		pcmd_client_kill(c, "cannot queue a doorbell wait");
}

/* Without ports: a checked descriptor goes to the data plane from the loop. */
static int loop_post(void *arg, uint64_t handle, uint8_t op, uint64_t offset, uint64_t len,
		     uint64_t token)
{
	struct pcmd *d = arg;

	if (op == PCMD_OP_SEND)
		return d->plane_ops->post_send(d->plane, (uint32_t)handle, offset, len, token);
	return d->plane_ops->post_recv(d->plane, (uint32_t)handle, offset, len, token);
}

void pcmd_client_intake(struct pcmd_client *c)
{
	uint64_t one = 1;
	int rc;

	if (!c->intake || pcmd_intake_is_port(c->intake) || c->state != PCMD_CLIENT_ALIVE)
		return;
	/*
	 * The doorbell's count was taken by the bell's read before this look
	 * (or, called for another reason, the bell still waits): a ring after
	 * this look is never lost.
	 */
	for (;;) {
		rc = pcmd_intake_take(c->intake, loop_post, c->d, PCMD_INTAKE_BUDGET);
		if (rc < 0) {
			protocol_error(c, "its submission or completion ring indices are corrupt");
			return;
		}
		pcmd_intake_flush(c->intake);
		if (rc == PCMD_INTAKE_BUDGET) {
			/* More waiting: ring our own doorbell so the loop comes back. */
			if (write(c->chan->sq_efd, &one, sizeof(one)) < 0)
				pcmd_debug("client %u: self-doorbell: %s", c->id, strerror(errno));
			break;
		}
		rc = pcmd_intake_arm(c->intake);
		if (rc < 0) {
			protocol_error(c, "its completion ring head is corrupt");
			return;
		}
		if (rc == 0)
			break;
	}
	arm_bell(c);
}

static void bell_done(struct pcmd_bell *bell, int res)
{
	struct pcmd_client *c = OWNER(bell, bell);

	if (c->state != PCMD_CLIENT_ALIVE) {
		pcmd_client_maybe_free(c);
		return;
	}
	if (res < 0) {
		pcmd_client_kill(c, "doorbell wait failed");
		return;
	}
	pcmd_client_intake(c);
}

/* ---- data-plane events ----------------------------------------------------------------- */

static bool conn_index_ok(const struct pcmd_client *c, uint32_t obj)
{
	return (obj & PCMD_TOKEN_CONN) && obj != PCMD_TOKEN_REGION &&
	       (obj & ~PCMD_TOKEN_CONN) < c->max_flows;
}

void pcmd_client_plane_event(struct pcmd *d, const struct pcmd_plane_event *ev)
{
	struct pcmd_client *c = pcmd_client_by_key(d, (uint32_t)(ev->token >> 32));
	uint32_t obj = (uint32_t)ev->token;
	struct pcmd_cqe done;

	if (!c) {
		pcmd_err("data plane event %u for a client that is gone (token %#llx): dropped",
			 ev->kind, (unsigned long long)ev->token);
		return;
	}
	if (ev->kind == PCMD_PLANE_EV_REGION_RELEASED && obj == PCMD_TOKEN_REGION) {
		/* The data plane removed the port first: the loop owns the channel again. */
		c->region = NULL;
		c->region_releasing = false;
		if (c->intake)
			pcmd_intake_port_removed(c->intake);
	} else if (ev->kind == PCMD_PLANE_EV_COMPLETE && !(obj & PCMD_TOKEN_CONN) && c->intake) {
		if (pcmd_intake_complete(c->intake, ev->token, ev->status, ev->bytes) < 0)
			pcmd_err("data plane completed descriptor slot %u of client %u, which is "
				 "not outstanding: dropped",
				 obj, c->id);
	} else if (ev->kind == PCMD_PLANE_EV_CONNECTED && conn_index_ok(c, obj)) {
		if (pcmd_flow_on_connected(c, obj & ~PCMD_TOKEN_CONN, ev, &done))
			pcmd_intake_post_completion(c->intake, &done);
	} else if (ev->kind == PCMD_PLANE_EV_ACCEPTED && conn_index_ok(c, obj)) {
		const struct pcmd_client *dialer =
		    ev->peer_token ? pcmd_client_by_key(d, (uint32_t)(ev->peer_token >> 32)) : NULL;

		if (pcmd_flow_on_accepted(c, obj & ~PCMD_TOKEN_CONN, ev, dialer, &done))
			pcmd_intake_post_completion(c->intake, &done);
	} else if (ev->kind == PCMD_PLANE_EV_CLOSED && conn_index_ok(c, obj)) {
		pcmd_flow_on_closed(c, obj & ~PCMD_TOKEN_CONN);
	} else {
		pcmd_err("data plane event %u with token %#llx names nothing: dropped", ev->kind,
			 (unsigned long long)ev->token);
		return;
	}
	if (c->state == PCMD_CLIENT_DYING)
		advance_reclaim(c);
}

void pcmd_clients_expire(struct pcmd *d, uint64_t now_ns)
{
	uint64_t hello_ns = (uint64_t)d->cfg->limits.hello_timeout_ms * 1000000ull;

	if (d->refusals_quiet && now_ns - d->refusals_since_ns >= 1000000000ull)
		refusals_summary(d, now_ns);
	for (uint32_t i = 0; i < d->n_slots; i++) {
		struct pcmd_client *c = d->slots[i];

		if (!c || c->state != PCMD_CLIENT_ALIVE)
			continue;
		if (c->refused && now_ns - c->connected_ns > PCMD_REFUSED_LINGER_NS)
			pcmd_client_kill(c, "was refused and did not ask why");
		else if (!c->refused && !c->hello_done && now_ns - c->connected_ns > hello_ns)
			pcmd_client_kill(c, "did not say HELLO within limits.hello_timeout_ms");
	}
}

void pcmd_clients_flush_all(struct pcmd *d)
{
	for (uint32_t i = 0; i < d->n_slots; i++) {
		struct pcmd_client *c = d->slots[i];

		if (!c || !c->intake || c->state != PCMD_CLIENT_ALIVE)
			continue;
		if (pcmd_intake_is_port(c->intake)) {
			/* The data path flushes its own; it wakes the loop for a broken ring. */
			if (pcmd_intake_broken(c->intake))
				protocol_error(c, "its submission or completion ring indices are "
						  "corrupt");
			continue;
		}
		if (c->intake->stopped == PCMD_INTAKE_OUTSTANDING &&
		    pcmd_channel_outstanding(c->chan) < c->chan->max_reserved)
			pcmd_client_intake(c);
		else
			pcmd_intake_flush(c->intake);
	}
}

/* ---- totals ---------------------------------------------------------------------------- */

static void add_client(struct pcmd *d, const struct pcmd_client *c, struct pcmd_rep_stats *t)
{
	/* Applications: pcmctl's own query is not one. */
	if (c->state == PCMD_CLIENT_ALIVE && !c->refused && c->role == PCMD_ROLE_APP)
		t->clients++;
	if (c->chan)
		t->cq_full_waits += pcmd_channel_cq_full_waits(c->chan);
	if (c->intake) {
		t->descriptors_ok +=
		    atomic_load_explicit(&c->intake->descriptors_ok, memory_order_relaxed);
		t->descriptors_rejected +=
		    atomic_load_explicit(&c->intake->descriptors_rejected, memory_order_relaxed);
		t->completions +=
		    atomic_load_explicit(&c->intake->completions, memory_order_relaxed);
	}
	for (uint32_t i = 0; c->listeners && i < c->max_listeners; i++)
		t->listeners += c->listeners[i].used;
	for (uint32_t i = 0; c->conns && i < c->max_flows; i++) {
		const struct pcmd_conn *cn = &c->conns[i];
		struct pcmd_intake_counters n;
		struct pcmd_flow_measure st;

		if (cn->state == PCMD_CONN_FREE || cn->state == PCMD_CONN_ACCEPTING)
			continue;
		t->flows++;
		pcmd_intake_conn_counters(c->intake, i, &n);
		t->tx_bytes += n.tx_bytes;
		t->rx_bytes += n.rx_bytes;
		t->tx_msgs += n.tx_msgs;
		t->rx_msgs += n.rx_msgs;
		if (cn->state == PCMD_CONN_ESTABLISHED && cn->has_plane_flow &&
		    d->plane_ops->flow_stats(d->plane, cn->plane_flow, &st) == 0 &&
		    (st.valid & PCMD_FIELD_RETRANSMITS))
			t->retransmits += st.retransmits;
	}
}

/* @k's counters (closed flows and clients included), plus the live clients of @uid (ALL_USERS). */
#define ALL_USERS UINT64_MAX

static void sum_clients(struct pcmd *d, const struct pcmd_counters *k, uint64_t uid,
			struct pcmd_rep_stats *t)
{
	*t = k->snap;
	for (uint32_t s = 0; s < d->n_slots; s++) {
		const struct pcmd_client *c = d->slots[s];

		if (!c || (uid != ALL_USERS && (c->refused || c->cred.uid != uid)))
			continue;
		add_client(d, c, t);
		if (uid != ALL_USERS && c->chan)
			t->region_bytes += c->chan->lay.region_bytes;
	}
}

void pcmd_clients_totals_of(struct pcmd *d, uint32_t uid, struct pcmd_rep_stats *t)
{
	static const struct pcmd_counters none;
	const struct pcmd_counters *k = &none;

	for (uint32_t i = 0; i < d->n_tenants; i++)
		if (d->tenants[i]->uid == uid)
			k = &d->tenants[i]->counters;
	sum_clients(d, k, uid, t);
}

void pcmd_clients_user_goodput(struct pcmd *d, uint64_t now_ns)
{
	struct pcmd_rep_stats t;

	for (uint32_t i = 0; i < d->n_tenants; i++) {
		struct pcmd_tenant *u = d->tenants[i];

		pcmd_clients_totals_of(d, u->uid, &t);
		pcmd_stats_goodput_update(&u->counters, t.rx_bytes, now_ns);
	}
}

void pcmd_clients_totals(struct pcmd *d, struct pcmd_rep_stats *t)
{
	sum_clients(d, &d->counters, ALL_USERS, t);
	t->region_bytes = d->region_bytes;
}

/* ---- reclaim --------------------------------------------------------------------------- */

void pcmd_client_kill(struct pcmd_client *c, const char *why)
{
	struct pcmd *d = c->d;

	if (c->state == PCMD_CLIENT_DYING)
		return;
	c->state = PCMD_CLIENT_DYING;
	/* An app's end is news; a pcmctl query's is not. */
	pcmd_log(c->chan ? PCMD_LOG_INFO : PCMD_LOG_DEBUG,
		 "client %u (pid %d, uid %u) %s: reclaiming %u flow(s) and %llu bytes of region",
		 c->id, (int)c->cred.pid, (unsigned)c->cred.uid, why, c->n_conns_used,
		 c->chan ? (unsigned long long)c->chan->lay.region_bytes : 0ull);
	pcmd_flow_abort_all(c);
	/*
	 * Wake the pending receive so its op comes back; the client sees the
	 * hang-up only when pcmd_client_destroy() closes the socket, after every
	 * completion of the reclaim is in its ring: libpcmtransport says
	 * -ESHUTDOWN once it has them all (pcm_transport(3)).
	 */
	shutdown(c->fd, SHUT_RD);
	pcmd_loop_cancel(d->loop, &c->recv_op);
	pcmd_loop_cancel(d->loop, &c->send_op);
	pcmd_loop_cancel(d->loop, &c->bell.op);
	advance_reclaim(c);
}

static void advance_reclaim(struct pcmd_client *c)
{
	struct pcmd *d = c->d;

	if (!pcmd_flow_all_free(c))
		return;
	if (c->region && !c->region_releasing) {
		/* The data plane may still touch the memory until it says otherwise. */
		c->region_releasing = true;
		d->plane_ops->region_release(d->plane, c->region);
		return;
	}
	pcmd_client_maybe_free(c);
}

void pcmd_client_destroy(struct pcmd_client *c)
{
	pcmd_tenant_leave(c->d, &c->share);
	pcmd_intake_destroy(c->intake);
	if (c->chan)
		pcmd_channel_destroy(c->chan);
	close(c->fd);
	free(c->conns);
	free(c->listeners);
	free(c);
}

void pcmd_client_maybe_free(struct pcmd_client *c)
{
	struct pcmd *d = c->d;
	uint32_t slot = c->key & 0xffff;

	if (c->state != PCMD_CLIENT_DYING || c->recv_op.pending || c->send_op.pending ||
	    c->bell.op.pending || !pcmd_flow_all_free(c) || c->region)
		return;
	if (c->intake) {
		/* Its descriptor counts stay in the daemon's totals. */
		d->counters.snap.descriptors_ok += c->intake->descriptors_ok;
		d->counters.snap.descriptors_rejected += c->intake->descriptors_rejected;
		d->counters.snap.completions += c->intake->completions;
	}
	if (c->chan) {
		/* Completions written during the reclaim stay readable in the client's mapping. */
		pcmd_channel_flush(c->chan);
		d->region_bytes -= c->chan->lay.region_bytes;
		d->trim_memory = true;
	}
	d->slots[slot] = NULL;
	d->slot_gen[slot]++;
	d->n_clients--;
	if (c->refused)
		d->n_refused--;
	else if (c->admin)
		d->n_admins--;
	d->counters.snap.clients_reclaimed++;
	pcmd_debug("client %u freed", c->id);
	pcmd_client_destroy(c);
}
