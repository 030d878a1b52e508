// SPDX-License-Identifier: MIT
/*
 * client.c - a client's life in pcmd: accepted with its credentials checked,
 * one control request at a time on the loop, its submissions taken from the
 * ring when its doorbell rings, its data-plane events routed back, and, when
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

#include "client.h"
#include "control.h"
#include "log.h"
#include "pcmd.h"

#define OWNER(ptr, member)                                                                         \
	((struct pcmd_client *)((char *)(ptr)-offsetof(struct pcmd_client, member)))

static void recv_done(struct pcmd_op *op, int res);
static void send_done(struct pcmd_op *op, int res);
static void bell_done(struct pcmd_bell *bell, int res);
static void advance_reclaim(struct pcmd_client *c);

struct pcmd_client *pcmd_client_by_key(struct pcmd *d, uint32_t key)
{
	uint32_t slot = key & 0xffff;

	if (slot >= d->n_slots || !d->slots[slot] || d->slot_gen[slot] != key >> 16)
		return NULL;
	return d->slots[slot];
}

static void send_refusal(int fd, int status, const char *text)
{
	struct pcmd_reply_error e;

	memset(&e, 0, sizeof(e));
	e.st.hdr.magic = PCMD_PROTO_MAGIC;
	e.st.hdr.version = PCMD_PROTO_VERSION;
	e.st.hdr.type = PCMD_MSG_HELLO | PCMD_MSG_REPLY;
	e.st.hdr.len = sizeof(e);
	e.st.status = status;
	snprintf(e.text, sizeof(e.text), "%s", text);
	/* A fresh socket's buffer is empty: this never blocks. */
	if (send(fd, &e, sizeof(e), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		pcmd_debug("refusal not delivered: %s", strerror(errno));
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

static void arm_recv(struct pcmd_client *c)
{
	c->riov.iov_base = c->rbuf;
	c->riov.iov_len = sizeof(c->rbuf);
	memset(&c->rmsg, 0, sizeof(c->rmsg));
	c->rmsg.msg_iov = &c->riov;
	c->rmsg.msg_iovlen = 1;
	c->rmsg.msg_control = c->rctl.buf;
	c->rmsg.msg_controllen = sizeof(c->rctl.buf);
	c->recv_op.done = recv_done;
	if (pcmd_loop_recvmsg(c->d->loop, &c->recv_op, c->fd, &c->rmsg) < 0)
		pcmd_client_kill(c, "cannot queue a receive");
}

int pcmd_client_new(struct pcmd *d, int fd, struct pcmd_client **out, char *why, size_t why_len)
{
	struct pcmd_client *c;
	uint32_t groups[PCMD_MAX_GROUPS], n_groups, slot;
	char refusal[PCMD_ERRTEXT_MAX];
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int rc = 0, refused;

	why[0] = '\0';
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		snprintf(why, why_len, "SO_PEERCRED: %s", strerror(errno));
		return -errno;
	}
	n_groups = peer_groups(fd, groups);
	refused = pcmd_control_check_peer(d, &cred, groups, n_groups, refusal, sizeof(refusal));
	/* Over the limit: refused in-band like bad credentials, in one of the spare slots. */
	if (refused == 0 && d->n_clients - d->n_refused >= d->cfg->limits.max_clients) {
		snprintf(refusal, sizeof(refusal),
			 "pcmd already serves limits.max_clients = %u clients",
			 d->cfg->limits.max_clients);
		refused = -EUSERS;
	}
	if (free_slot(d, &slot) < 0) {
		snprintf(why, why_len, "no client slot free (limits.max_clients at start: %u)",
			 d->n_slots - PCMD_SPARE_SLOTS);
		rc = -EUSERS;
	}
	c = rc == 0 ? calloc(1, sizeof(*c)) : NULL;
	if (rc == 0 && !c) {
		snprintf(why, why_len, "out of memory");
		rc = -ENOMEM;
	}
	if (rc < 0) {
		if (refused < 0) {
			snprintf(why, why_len, "%s", refusal);
			rc = refused;
		}
		pcmd_warn("refused a client (pid %d, uid %u, gid %u): %s", (int)cred.pid,
			  (unsigned)cred.uid, (unsigned)cred.gid, why);
		d->counters.clients_refused++;
		return rc;
	}
	c->d = d;
	c->fd = fd;
	c->cred = cred;
	if (refused < 0) {
		c->refused = refused;
		memcpy(c->refusal, refusal, sizeof(c->refusal));
		pcmd_warn("refused a client (pid %d, uid %u, gid %u): %s", (int)cred.pid,
			  (unsigned)cred.uid, (unsigned)cred.gid, refusal);
		d->counters.clients_refused++;
	}
	c->n_groups = n_groups;
	memcpy(c->groups, groups, n_groups * sizeof(groups[0]));
	c->state = PCMD_CLIENT_ALIVE;
	c->id = ++d->next_client_id;
	c->key = slot | (uint32_t)d->slot_gen[slot] << 16;
	c->connected_ns = pcmd_now_ns();
	d->slots[slot] = c;
	d->n_clients++;
	if (c->refused)
		d->n_refused++;
	else
		d->counters.clients_accepted++;
	pcmd_debug("client %u connected (pid %d, uid %u)", c->id, (int)cred.pid,
		   (unsigned)cred.uid);
	*out = c;
	return 0;
}

void pcmd_client_accept(struct pcmd *d, int fd)
{
	char why[PCMD_ERRTEXT_MAX];
	struct pcmd_client *c;
	int rc = pcmd_client_new(d, fd, &c, why, sizeof(why));

	if (rc < 0) {
		send_refusal(fd, rc, why);
		close(fd);
		return;
	}
	arm_recv(c);
}

/* ---- control requests ------------------------------------------------------------------ */

/* Close every descriptor a message carried: pcmd takes none from clients. */
static int scan_cmsgs(struct pcmd_client *c, struct ucred *msg_cred, bool *has_cred)
{
	int stray = 0;

	*has_cred = false;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&c->rmsg); cm; cm = CMSG_NXTHDR(&c->rmsg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SCM_RIGHTS) {
			size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			int fds[8];

			memcpy(fds, CMSG_DATA(cm), (n > 8 ? 8 : n) * sizeof(int));
			for (size_t i = 0; i < n && i < 8; i++)
				close(fds[i]);
			stray += (int)n;
		} else if (cm->cmsg_type == SCM_CREDENTIALS &&
			   cm->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			memcpy(msg_cred, CMSG_DATA(cm), sizeof(*msg_cred));
			*has_cred = true;
		}
	}
	return stray;
}

static void start_send(struct pcmd_client *c, size_t len, const int *fds, int n_fds)
{
	c->siov.iov_base = c->sbuf;
	c->siov.iov_len = len;
	memset(&c->smsg, 0, sizeof(c->smsg));
	c->smsg.msg_iov = &c->siov;
	c->smsg.msg_iovlen = 1;
	if (n_fds > 0) {
		struct cmsghdr *cm;

		c->smsg.msg_control = c->sctl.buf;
		c->smsg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n_fds);
		cm = CMSG_FIRSTHDR(&c->smsg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n_fds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n_fds);
	}
	c->send_op.done = send_done;
	if (pcmd_loop_sendmsg(c->d->loop, &c->send_op, c->fd, &c->smsg) < 0)
		pcmd_client_kill(c, "cannot queue a reply");
}

static void recv_done(struct pcmd_op *op, int res)
{
	struct pcmd_client *c = OWNER(op, recv_op);
	struct pcmd_control_in in = {0};
	struct ucred msg_cred;
	int fds[PCMD_REGION_FDS], n_fds = 0;
	size_t reply_len;

	if (c->state != PCMD_CLIENT_ALIVE) {
		pcmd_client_maybe_free(c);
		return;
	}
	if (res <= 0) {
		pcmd_client_kill(c,
				 res == 0 ? "closed its control socket" : "control socket error");
		return;
	}
	in.msg = c->rbuf;
	in.len = (size_t)res;
	in.truncated = (c->rmsg.msg_flags & MSG_TRUNC) != 0;
	in.ctl_truncated = (c->rmsg.msg_flags & MSG_CTRUNC) != 0;
	in.stray_fds = scan_cmsgs(c, &msg_cred, &in.has_cred);
	in.cred = in.has_cred ? &msg_cred : &c->cred;
	reply_len = pcmd_control_handle(c, &in, c->sbuf, sizeof(c->sbuf), fds, &n_fds);
	start_send(c, reply_len, fds, n_fds);
}

static void send_done(struct pcmd_op *op, int res)
{
	struct pcmd_client *c = OWNER(op, send_op);

	if (c->state != PCMD_CLIENT_ALIVE) {
		pcmd_client_maybe_free(c);
		return;
	}
	if (res < 0) {
		pcmd_client_kill(c, "its reply could not be sent");
		return;
	}
	if (c->close_after_send) {
		pcmd_client_kill(c, "refused");
		return;
	}
	arm_recv(c);
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
	c->d->counters.control_errors++;
	pcmd_client_send_notice(c, PCMD_NOTICE_ERROR, -EPROTO, text);
	pcmd_client_kill(c, "broke the ring protocol");
}

/* ---- the data channel ------------------------------------------------------------------ */

static void arm_bell(struct pcmd_client *c)
{
	if (c->bell.op.pending || c->state != PCMD_CLIENT_ALIVE || !c->chan || c->port)
		return;
	if (pcmd_loop_bell(c->d->loop, &c->bell, c->chan->sq_efd, bell_done) < 0)
		pcmd_client_kill(c, "cannot queue a doorbell wait");
}

void pcmd_client_flush(struct pcmd_client *c)
{
	if (c->chan)
		pcmd_channel_flush(c->chan);
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

	if (!c->intake || c->port || c->state != PCMD_CLIENT_ALIVE)
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

int pcmd_client_on_data_path(struct pcmd_client *c, int (*fn)(void *arg), void *arg)
{
	if (c->port && c->region)
		return c->d->plane_ops->call(c->d->plane, c->region, fn, arg);
	return fn(arg);
}

struct reserve_call {
	struct pcmd_intake *in;
	uint32_t outstanding;
};

static int reserve_fn(void *arg)
{
	struct reserve_call *r = arg;
	int rc = pcmd_intake_reserve(r->in);

	r->outstanding = pcmd_channel_outstanding(r->in->chan);
	return rc;
}

int pcmd_client_reserve(struct pcmd_client *c, uint32_t *outstanding)
{
	struct reserve_call r = {.in = c->intake};
	int rc = pcmd_client_on_data_path(c, reserve_fn, &r);

	*outstanding = r.outstanding;
	return rc;
}

static int unreserve_fn(void *arg)
{
	pcmd_intake_unreserve(arg);
	return 0;
}

void pcmd_client_unreserve(struct pcmd_client *c)
{
	(void)pcmd_client_on_data_path(c, unreserve_fn, c->intake);
}

uint64_t pcmd_client_flow_handle(const struct pcmd_client *c, uint32_t flow)
{
	return c->port ? c->d->plane_ops->flow_handle(c->d->plane, flow) : flow;
}

struct complete_call {
	struct pcmd_intake *in;
	struct pcmd_cqe cqe;
};

static int complete_fn(void *arg)
{
	struct complete_call *k = arg;

	pcmd_intake_write(k->in, &k->cqe);
	pcmd_intake_flush(k->in);
	return 0;
}

void pcmd_client_complete(struct pcmd_client *c, uint8_t op, uint32_t conn_id, uint64_t cookie,
			  int status, uint64_t bytes)
{
	struct complete_call k = {.in = c->intake};

	k.cqe.op = op;
	k.cqe.status = status;
	k.cqe.conn_id = conn_id;
	k.cqe.cookie = cookie;
	k.cqe.bytes = bytes;
	(void)pcmd_client_on_data_path(c, complete_fn, &k);
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

	if (!c) {
		pcmd_err("data plane event %u for a client that is gone (token %#llx): dropped",
			 ev->kind, (unsigned long long)ev->token);
		return;
	}
	if (ev->kind == PCMD_PLANE_EV_REGION_RELEASED && obj == PCMD_TOKEN_REGION) {
		/* The data plane removed the port first: the loop owns the channel again. */
		c->region = NULL;
		c->region_releasing = false;
		c->port = false;
	} else if (ev->kind == PCMD_PLANE_EV_COMPLETE && !(obj & PCMD_TOKEN_CONN) && c->intake) {
		if (pcmd_intake_complete(c->intake, ev->token, ev->status, ev->bytes) < 0)
			pcmd_err("data plane completed descriptor slot %u of client %u, which is "
				 "not outstanding: dropped",
				 obj, c->id);
	} else if (ev->kind == PCMD_PLANE_EV_CONNECTED && conn_index_ok(c, obj)) {
		pcmd_flow_on_connected(c, obj & ~PCMD_TOKEN_CONN, ev);
	} else if (ev->kind == PCMD_PLANE_EV_ACCEPTED && conn_index_ok(c, obj)) {
		pcmd_flow_on_accepted(c, obj & ~PCMD_TOKEN_CONN, ev);
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

void pcmd_clients_expire_refused(struct pcmd *d, uint64_t now_ns)
{
	for (uint32_t i = 0; i < d->n_slots; i++) {
		struct pcmd_client *c = d->slots[i];

		if (c && c->refused && c->state == PCMD_CLIENT_ALIVE &&
		    now_ns - c->connected_ns > PCMD_REFUSED_LINGER_NS)
			pcmd_client_kill(c, "was refused and did not ask why");
	}
}

void pcmd_clients_flush_all(struct pcmd *d)
{
	for (uint32_t i = 0; i < d->n_slots; i++) {
		struct pcmd_client *c = d->slots[i];

		if (!c || !c->intake || c->state != PCMD_CLIENT_ALIVE)
			continue;
		if (c->port) {
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

/* ---- credentials ----------------------------------------------------------------------- */

static bool id_in(uint32_t id, const uint32_t *ids, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static bool any_group_in(uint32_t gid, const uint32_t *groups, uint32_t n_groups,
			 const uint32_t *ids, uint32_t n)
{
	if (id_in(gid, ids, n))
		return true;
	for (uint32_t i = 0; i < n_groups; i++)
		if (id_in(groups[i], ids, n))
			return true;
	return false;
}

bool pcmd_client_is_admin(const struct pcmd *d, const struct ucred *cred, const uint32_t *groups,
			  uint32_t n_groups)
{
	const struct pcmd_config *cfg = d->cfg;

	return id_in(cred->uid, cfg->socket.admin_uids, cfg->socket.n_admin_uids) ||
	       any_group_in(cred->gid, groups, n_groups, cfg->socket.admin_gids,
			    cfg->socket.n_admin_gids);
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
	/* Wake the pending receive (and any reply) so their ops come back. */
	shutdown(c->fd, SHUT_RDWR);
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

void pcmd_client_maybe_free(struct pcmd_client *c)
{
	struct pcmd *d = c->d;
	uint32_t slot = c->key & 0xffff;

	if (c->state != PCMD_CLIENT_DYING || c->recv_op.pending || c->send_op.pending ||
	    c->bell.op.pending || !pcmd_flow_all_free(c) || c->region)
		return;
	if (c->intake) {
		/* Its descriptor counts stay in the daemon's totals. */
		d->counters.descriptors_ok += c->intake->descriptors_ok;
		d->counters.descriptors_rejected += c->intake->descriptors_rejected;
		d->counters.completions += c->intake->completions;
		pcmd_intake_destroy(c->intake);
	}
	if (c->chan) {
		/* Completions written during the reclaim stay readable in the client's mapping. */
		pcmd_channel_flush(c->chan);
		d->region_bytes -= c->chan->lay.region_bytes;
		pcmd_channel_destroy(c->chan);
	}
	close(c->fd);
	free(c->conns);
	free(c->listeners);
	d->slots[slot] = NULL;
	d->slot_gen[slot]++;
	d->n_clients--;
	if (c->refused)
		d->n_refused--;
	d->counters.clients_reclaimed++;
	pcmd_debug("client %u freed", c->id);
	free(c);
}
