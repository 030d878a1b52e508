// SPDX-License-Identifier: MIT
/*
 * request.c - one request of a client and its reply. A handler runs only
 * after the framing (magic, version, type, length), the sender's
 * credentials, the role and the message's exact size have been checked; it
 * checks its own fields (NUL-terminated strings, reserved fields zero, ranges)
 * before changing anything. What a query shows depends on who asks: an
 * admin sees every user's clients, flows and counters, any other user only
 * its own (visible()).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access.h"
#include "client.h"
#include "log.h"
#include "pcmd.h"
#include "request.h"

#ifndef PCM_VERSION
#define PCM_VERSION "unknown"
#endif

/* ---- replies --------------------------------------------------------------------------- */

struct req {
	struct pcmd_client *c;
	struct pcmd *d;
	const struct pcmd_request_in *in;
	struct pcmd_msg_hdr hdr;
	uint8_t *reply;
	size_t cap;
	int *fds;
	int *n_fds;
};

static const char *const msg_names[PCMD_MSG_TYPE_END] = {
    [PCMD_MSG_HELLO] = "HELLO",
    [PCMD_MSG_REGION] = "REGION",
    [PCMD_MSG_LISTEN] = "LISTEN",
    [PCMD_MSG_CONNECT] = "CONNECT",
    [PCMD_MSG_ACCEPT] = "ACCEPT",
    [PCMD_MSG_CLOSE] = "CLOSE",
    [PCMD_MSG_SET_POLICY] = "SET_POLICY",
    [PCMD_MSG_STATUS] = "STATUS",
    [PCMD_MSG_FLOWS] = "FLOWS",
    [PCMD_MSG_STATS] = "STATS",
    [PCMD_MSG_POLICY_LIST] = "POLICY_LIST",
    [PCMD_MSG_POLICY_LOAD] = "POLICY_LOAD",
    [PCMD_MSG_POLICY_UNLOAD] = "POLICY_UNLOAD",
    [PCMD_MSG_POLICY_SET] = "POLICY_SET",
    [PCMD_MSG_LOG_LEVEL] = "LOG_LEVEL",
    [PCMD_MSG_PEER] = "PEER",
};

/* Name of a message type for messages ("CONNECT", "type 77"). */
static const char *msg_name(uint32_t type, char *buf, size_t len)
{
	if (type > 0 && type < PCMD_MSG_TYPE_END)
		return msg_names[type];
	snprintf(buf, len, "type %u", type);
	return buf;
}

static size_t finish(struct req *r, size_t len, int status)
{
	struct pcmd_reply_status *st = (struct pcmd_reply_status *)r->reply;

	st->hdr.magic = PCMD_PROTO_MAGIC;
	st->hdr.version = PCMD_PROTO_VERSION;
	st->hdr.type = (uint16_t)((r->hdr.type & 0x3fff) | PCMD_MSG_REPLY);
	st->hdr.len = (uint32_t)len;
	st->hdr.seq = r->hdr.seq;
	st->status = status;
	st->reserved = 0;
	return len;
}

static void *ok_body(struct req *r, size_t len)
{
	memset(r->reply, 0, len);
	return r->reply;
}

static size_t fail(struct req *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static size_t fail(struct req *r, int status, const char *fmt, ...)
{
	struct pcmd_reply_error *e = (struct pcmd_reply_error *)r->reply;
	char name[32];
	va_list ap;

	memset(e, 0, sizeof(*e));
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
	r->c->errors++;
	r->d->counters.snap.control_errors++;
	pcmd_debug("client %u: %s refused: %s", r->c->id, msg_name(r->hdr.type, name, sizeof(name)),
		   e->text);
	return finish(r, sizeof(*e), status);
}

/* ---- field checks ---------------------------------------------------------------------- */

static bool terminated(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

static size_t check_opts(struct req *r, const struct pcmd_flow_opts *o, bool *ok)
{
	*ok = false;
	if (!terminated(o->policy, sizeof(o->policy)))
		return fail(r, -EINVAL, "opts.policy is not NUL-terminated");
	if (!terminated(o->lb_policy, sizeof(o->lb_policy)))
		return fail(r, -EINVAL, "opts.lb_policy is not NUL-terminated");
	if (o->mode >= PCMD_SHELL_MODE_COUNT && o->mode != PCMD_SHELL_DEFAULT)
		return fail(r, -EINVAL,
			    "opts.mode %u is not a shell mode (0..%u, or %u for the "
			    "rule's)",
			    o->mode, PCMD_SHELL_MODE_COUNT - 1, PCMD_SHELL_DEFAULT);
	if (o->paths > 64)
		return fail(r, -EINVAL, "opts.paths %u is above 64", o->paths);
	if (o->reliable_connected > 1)
		return fail(r, -EINVAL, "opts.reliable_connected is %u, not 0 or 1",
			    o->reliable_connected);
	if (o->no_progress_ms > PCMD_NO_PROGRESS_MS_MAX)
		return fail(r, -EINVAL, "opts.no_progress_ms %u is above %u (an hour)",
			    o->no_progress_ms, PCMD_NO_PROGRESS_MS_MAX);
	*ok = true;
	return 0;
}

static size_t check_addr(struct req *r, const char *addr, bool *ok)
{
	*ok = false;
	if (!terminated(addr, PCMD_ADDR_MAX))
		return fail(r, -EINVAL, "addr is not NUL-terminated within %d bytes",
			    PCMD_ADDR_MAX);
	if (!addr[0])
		return fail(r, -EINVAL, "addr is empty");
	*ok = true;
	return 0;
}

/* ---- handlers -------------------------------------------------------------------------- */

static int alloc_app_tables(struct pcmd_client *c)
{
	c->conns = calloc(c->max_flows, sizeof(*c->conns));
	c->listeners = calloc(c->max_listeners, sizeof(*c->listeners));
	if (!c->conns || !c->listeners)
		return -ENOMEM;
	return 0;
}

static size_t on_hello(struct req *r)
{
	const struct pcmd_req_hello *q = (const void *)r->in->msg;
	const struct pcmd_config *cfg = r->d->cfg;
	struct pcmd_client *c = r->c;
	struct pcmd_rep_hello *p;

	if (c->hello_done)
		return fail(r, -EPROTO, "HELLO was already sent on this connection");
	if (q->version_min > q->version_max)
		return fail(r, -EINVAL, "version_min %u is above version_max %u", q->version_min,
			    q->version_max);
	if (q->version_min > PCMD_PROTO_VERSION || q->version_max < PCMD_PROTO_VERSION_MIN) {
		c->close_after_send = true;
		return fail(r, -EPROTONOSUPPORT,
			    "this client speaks pcmd protocol versions %u..%u and pcmd %s speaks "
			    "%u..%u: use a libpcmtransport and a pcmd of matching releases",
			    q->version_min, q->version_max, PCM_VERSION, PCMD_PROTO_VERSION_MIN,
			    PCMD_PROTO_VERSION);
	}
	if (q->role != PCMD_ROLE_APP && q->role != PCMD_ROLE_ADMIN)
		return fail(r, -EINVAL, "role %u is neither 1 (app) nor 2 (admin)", q->role);
	if (!terminated(q->name, sizeof(q->name)))
		return fail(r, -EINVAL, "name is not NUL-terminated");
	c->role = q->role;
	memcpy(c->name, q->name, sizeof(c->name));
	c->max_flows = cfg->limits.flows_per_client;
	c->max_outstanding = cfg->limits.outstanding_per_client;
	c->max_listeners = cfg->limits.listeners_per_client;
	c->max_region_bytes = cfg->limits.memory_per_client_bytes;
	c->max_message_bytes = pcmd_plane_max_message_bytes(r->d->plane_ops, r->d->plane, cfg);
	if (c->role == PCMD_ROLE_APP && alloc_app_tables(c) < 0) {
		c->close_after_send = true;
		return fail(r, -ENOMEM, "out of memory for this client's tables");
	}
	c->hello_done = true;
	p = ok_body(r, sizeof(*p));
	p->version = PCMD_PROTO_VERSION;
	p->client_id = c->id;
	p->max_flows = c->max_flows;
	p->max_outstanding = c->max_outstanding;
	p->max_region_bytes = c->max_region_bytes;
	p->max_message_bytes = c->max_message_bytes;
	p->admin = c->admin;
	return finish(r, sizeof(*p), 0);
}

static size_t region_sizes(struct req *r, const struct pcmd_req_region *q,
			   struct pcmd_region_layout *lay, bool *ok)
{
	const struct pcmd_config *cfg = r->d->cfg;
	uint32_t sq = q->sq_entries ? q->sq_entries : cfg->limits.sq_entries;
	uint32_t cq = q->cq_entries ? q->cq_entries : cfg->limits.cq_entries;

	*ok = false;
	if (!q->cq_entries && cq < sq)
		cq = sq;
	if (q->data_bytes == 0 || q->data_bytes > r->c->max_region_bytes)
		return fail(r, -EINVAL,
			    "data_bytes %llu is outside 1..%llu "
			    "(limits.memory_per_client_bytes)",
			    (unsigned long long)q->data_bytes,
			    (unsigned long long)r->c->max_region_bytes);
	if (!pcmd_ring_entries_ok(sq) || !pcmd_ring_entries_ok(cq) || cq < sq)
		return fail(r, -EINVAL,
			    "ring sizes sq %u, cq %u: each a power of two in %u..%u, "
			    "cq >= sq",
			    sq, cq, PCMD_RING_MIN_ENTRIES, PCMD_RING_MAX_ENTRIES);
	if (!terminated(q->host, sizeof(q->host)))
		return fail(r, -EINVAL, "host is not NUL-terminated");
	if (pcmd_region_layout_compute(q->data_bytes, sq, cq, lay) < 0)
		return fail(r, -EINVAL, "no layout for %llu bytes",
			    (unsigned long long)q->data_bytes);
	if (r->d->region_bytes + lay->region_bytes > cfg->limits.memory_total_bytes)
		return fail(r, -ENOMEM,
			    "%llu more bytes would exceed limits.memory_total_bytes = "
			    "%llu (%llu mapped for clients now)",
			    (unsigned long long)lay->region_bytes,
			    (unsigned long long)cfg->limits.memory_total_bytes,
			    (unsigned long long)r->d->region_bytes);
	*ok = true;
	return 0;
}

/* A region, its bytes and (softnic) its host, charged to the client's user (tenant.h). */
static int charge_region(struct req *r, const struct pcmd_region_layout *lay, char *err,
			 size_t err_len)
{
	struct pcmd_tenant_share *s = &r->c->share;
	const struct pcmd *d = r->d;
	int rc = pcmd_tenant_charge(d, s, PCMD_TENANT_REGIONS, 1, err, err_len);

	if (rc < 0)
		return rc;
	rc = pcmd_tenant_charge(d, s, PCMD_TENANT_REGION_BYTES, lay->region_bytes, err, err_len);
	if (rc < 0)
		goto err_regions;
	rc = pcmd_tenant_charge(d, s, PCMD_TENANT_HOSTS, 1, err, err_len);
	if (rc < 0)
		goto err_bytes;
	return 0;

err_bytes:
	pcmd_tenant_credit(s, PCMD_TENANT_REGION_BYTES, lay->region_bytes);
err_regions:
	pcmd_tenant_credit(s, PCMD_TENANT_REGIONS, 1);
	return rc;
}

static void credit_region(struct req *r, const struct pcmd_region_layout *lay)
{
	pcmd_tenant_credit(&r->c->share, PCMD_TENANT_HOSTS, 1);
	pcmd_tenant_credit(&r->c->share, PCMD_TENANT_REGION_BYTES, lay->region_bytes);
	pcmd_tenant_credit(&r->c->share, PCMD_TENANT_REGIONS, 1);
}

static size_t on_region(struct req *r)
{
	const struct pcmd_req_region *q = (const void *)r->in->msg;
	char err[PCMD_ERRTEXT_MAX];
	struct pcmd_client *c = r->c;
	struct pcmd *d = r->d;
	struct pcmd_region_layout lay;
	struct pcmd_rep_region *p;
	struct pcmd_channel *ch;
	bool ok;
	size_t n;
	int rc;

	if (c->chan)
		return fail(r, -EEXIST, "this client already has its region");
	n = region_sizes(r, q, &lay, &ok);
	if (!ok)
		return n;
	rc = charge_region(r, &lay, err, sizeof(err));
	if (rc < 0)
		return fail(r, rc, "%s", err);
	rc = pcmd_channel_create(&lay, c->max_outstanding, &ch);
	if (rc < 0) {
		credit_region(r, &lay);
		return fail(r, rc, "cannot create the shared region: %s", strerror(-rc));
	}
	err[0] = '\0';
	rc = d->plane_ops->region_add(d->plane, ch->base + lay.data_off, lay.data_bytes, q->host,
				      pcmd_token(c->key, PCMD_TOKEN_REGION), &c->region, err,
				      sizeof(err));
	if (rc < 0) {
		pcmd_channel_destroy(ch);
		credit_region(r, &lay);
		return fail(r, rc, "the data plane cannot use the region%s%s: %s",
			    q->host[0] ? " as host " : "", q->host, err[0] ? err : strerror(-rc));
	}
	rc = pcmd_client_start_data_path(c, ch);
	if (rc < 0) {
		d->plane_ops->region_release(d->plane, c->region);
		c->region_releasing = true;
		pcmd_channel_destroy(ch);
		return fail(r, rc, "cannot start the region's descriptor path: %s", strerror(-rc));
	}
	d->region_bytes += lay.region_bytes;
	p = ok_body(r, sizeof(*p));
	p->lay = lay;
	r->fds[0] = ch->memfd;
	r->fds[1] = ch->sq_efd;
	r->fds[2] = ch->cq_efd;
	*r->n_fds = PCMD_REGION_FDS;
	pcmd_client_intake(c);
	return finish(r, sizeof(*p), 0);
}

static size_t on_listen(struct req *r)
{
	const struct pcmd_req_listen *q = (const void *)r->in->msg;
	char err[PCMD_ERRTEXT_MAX];
	struct pcmd_rep_listen *p;
	uint32_t id;
	size_t n;
	bool ok;
	int rc;

	n = check_addr(r, q->addr, &ok);
	if (!ok)
		return n;
	rc = pcmd_flow_listen(r->c, q, &id, err, sizeof(err));
	if (rc < 0)
		return fail(r, rc, "%s", err);
	p = ok_body(r, sizeof(*p));
	p->listener_id = id;
	return finish(r, sizeof(*p), 0);
}

static size_t on_connect(struct req *r)
{
	const struct pcmd_req_connect *q = (const void *)r->in->msg;
	char err[PCMD_ERRTEXT_MAX];
	struct pcmd_rep_conn *p;
	uint32_t id;
	size_t n;
	bool ok;
	int rc;

	n = check_addr(r, q->addr, &ok);
	if (ok)
		n = check_opts(r, &q->opts, &ok);
	if (!ok)
		return n;
	rc = pcmd_flow_connect(r->c, q, &id, err, sizeof(err));
	if (rc < 0)
		return fail(r, rc, "%s", err);
	p = ok_body(r, sizeof(*p));
	p->conn_id = id;
	return finish(r, sizeof(*p), 0);
}

static size_t on_accept(struct req *r)
{
	const struct pcmd_req_accept *q = (const void *)r->in->msg;
	char err[PCMD_ERRTEXT_MAX];
	int rc;

	if (q->reserved)
		return fail(r, -EINVAL, "reserved is not zero");
	rc = pcmd_flow_accept(r->c, q, err, sizeof(err));
	if (rc < 0)
		return fail(r, rc, "%s", err);
	ok_body(r, sizeof(struct pcmd_reply_status));
	return finish(r, sizeof(struct pcmd_reply_status), 0);
}

static size_t on_close(struct req *r)
{
	const struct pcmd_req_close *q = (const void *)r->in->msg;
	char err[PCMD_ERRTEXT_MAX];
	int rc;

	if (q->flags & ~PCMD_CLOSE_ABORT)
		return fail(r, -EINVAL, "flags %#x: only PCMD_CLOSE_ABORT (1) is defined",
			    q->flags);
	rc = pcmd_flow_close(r->c, q, err, sizeof(err));
	if (rc < 0)
		return fail(r, rc, "%s", err);
	ok_body(r, sizeof(struct pcmd_reply_status));
	return finish(r, sizeof(struct pcmd_reply_status), 0);
}

static size_t on_peer(struct req *r)
{
	const struct pcmd_req_peer *q = (const void *)r->in->msg;
	struct pcmd_rep_peer *p;
	uint32_t index;

	if (q->reserved)
		return fail(r, -EINVAL, "reserved is not zero");
	if (pcmd_conn_find(r->c, q->conn_id, &index) < 0)
		return fail(r, -EBADF, "conn id %#x names no connection of this client",
			    q->conn_id);
	if (!r->c->conns[index].peer_cred.known)
		return fail(r, -ENOTCONN,
			    "conn id %#x: its other end left before pcmd paired the two",
			    q->conn_id);
	p = ok_body(r, sizeof(*p));
	p->peer = r->c->conns[index].peer_cred;
	return finish(r, sizeof(*p), 0);
}

static size_t on_set_policy(struct req *r)
{
	const struct pcmd_req_set_policy *q = (const void *)r->in->msg;
	char err[PCMD_ERRTEXT_MAX];
	uint32_t index;
	size_t n;
	bool ok;
	int rc;

	if (q->reserved)
		return fail(r, -EINVAL, "reserved is not zero");
	n = check_opts(r, &q->opts, &ok);
	if (!ok)
		return n;
	if (pcmd_conn_find(r->c, q->conn_id, &index) < 0)
		return fail(r, -EBADF, "conn id %#x names no connection of this client",
			    q->conn_id);
	rc = pcmd_flow_set_policy(r->c, index, &q->opts, err, sizeof(err));
	if (rc < 0)
		return fail(r, rc, "%s", err);
	ok_body(r, sizeof(struct pcmd_reply_status));
	return finish(r, sizeof(struct pcmd_reply_status), 0);
}

/*
 * What the sender of a query may see: an admin every user's clients, flows
 * and counters; any other user its own user's (the counters of its clients
 * and their closed flows; daemon-wide ones read 0).
 */
struct view {
	bool all;
	uint32_t uid;
	const struct pcmd_counters *k;
};

static void view_of(struct req *r, struct view *v)
{
	static const struct pcmd_counters none;
	struct pcmd *d = r->d;

	v->all = pcmd_access_admin(d->cfg, r->in->cred, r->c->groups, r->c->n_groups);
	v->uid = (uint32_t)r->in->cred->uid;
	v->k = v->all ? &d->counters : &none;
	for (uint32_t i = 0; !v->all && i < d->n_tenants; i++)
		if (d->tenants[i]->uid == v->uid)
			v->k = &d->tenants[i]->counters;
}

static bool visible(const struct view *v, const struct pcmd_client *c)
{
	return v->all || (!c->refused && c->cred.uid == v->uid);
}

static void view_totals(struct req *r, const struct view *v, struct pcmd_rep_stats *t)
{
	if (v->all)
		pcmd_clients_totals(r->d, t);
	else
		pcmd_clients_totals_of(r->d, v->uid, t);
}

static size_t on_status(struct req *r)
{
	struct pcmd *d = r->d;
	struct pcmd_rep_status *p = ok_body(r, sizeof(*p));
	struct pcmd_rep_stats t;
	struct view v;

	view_of(r, &v);
	view_totals(r, &v, &t);
	p->uptime_ns = pcmd_now_ns() - d->start_ns;
	p->goodput_bps = v.k->snap.goodput_bps;
	p->pid = (uint32_t)getpid();
	p->clients = (uint32_t)t.clients;
	p->flows = (uint32_t)t.flows;
	p->listeners = (uint32_t)t.listeners;
	p->policies = d->policies->n;
	p->rules = d->cfg->policies.n_rules;
	p->state = d->phase == PCMD_PHASE_RUNNING ? PCMD_STATE_RUNNING : PCMD_STATE_DRAINING;
	p->config_generation = d->generation;
	p->run_id = d->run_id;
	snprintf(p->datapath, sizeof(p->datapath), "%s",
		 pcmd_plane_datapath(d->plane_ops, d->plane, d->cfg));
	snprintf(p->version, sizeof(p->version), "%s", PCM_VERSION);
	snprintf(p->config_path, sizeof(p->config_path), "%.*s", (int)sizeof(p->config_path) - 1,
		 d->config_path);
	return finish(r, sizeof(*p), 0);
}

static size_t on_stats(struct req *r)
{
	struct pcmd *d = r->d;
	struct pcmd_rep_stats *p = ok_body(r, sizeof(*p));
	struct view v;

	view_of(r, &v);
	view_totals(r, &v, p); /* its st: 0, as ok_body() left it; finish() sets it */
	pcmd_stats_fill(&d->output, pcmd_now_ns() - d->start_ns, p);
	/* The output files' counts are daemon-wide: an admin's. */
	if (!v.all)
		p->records_dropped_lines = p->stats_dropped_lines = p->output_write_errors = 0;
	return finish(r, sizeof(*p), 0);
}

static size_t page_bounds(struct req *r, uint32_t per_page, uint32_t *max, bool *ok)
{
	const struct pcmd_req_page *q = (const void *)r->in->msg;

	*ok = false;
	if (q->max > per_page)
		return fail(r, -EINVAL, "max %u is above %u per page", q->max, per_page);
	*max = q->max ? q->max : per_page;
	*ok = true;
	return 0;
}

static size_t on_flows(struct req *r)
{
	const struct pcmd_req_page *q = (const void *)r->in->msg;
	struct pcmd *d = r->d;
	struct pcmd_rep_flows *p;
	uint32_t max, index = 0;
	struct view v;
	size_t n;
	bool ok;

	n = page_bounds(r, PCMD_FLOWS_PER_PAGE, &max, &ok);
	if (!ok)
		return n;
	p = ok_body(r, sizeof(*p));
	view_of(r, &v);
	for (uint32_t s = 0; s < d->n_slots; s++) {
		struct pcmd_client *c = d->slots[s];

		/* Other users' flows are an admin's business only. */
		if (!c || !c->conns || !visible(&v, c))
			continue;
		for (uint32_t i = 0; i < c->max_flows; i++) {
			if (!pcmd_conn_listed(&c->conns[i]))
				continue;
			if (index >= q->start && p->n < max)
				pcmd_flow_info(c, i, &p->flows[p->n++]);
			index++;
		}
	}
	p->total = index;
	p->next = q->start + p->n < index ? q->start + p->n : index;
	return finish(r, sizeof(*p) + p->n * sizeof(p->flows[0]), 0);
}

static size_t on_policy_list(struct req *r)
{
	const struct pcmd_req_page *q = (const void *)r->in->msg;
	struct pcmd_policies *pol = r->d->policies;
	struct pcmd_rep_policies *p;
	uint32_t max;
	size_t n;
	bool ok;

	n = page_bounds(r, PCMD_POLICIES_PER_PAGE, &max, &ok);
	if (!ok)
		return n;
	p = ok_body(r, sizeof(*p));
	for (uint32_t i = q->start; i < pol->n && p->n < max; i++) {
		struct pcmd_policy_info *e = &p->policies[p->n++];
		const struct pcmd_policy *it = pol->items[i];

		snprintf(e->name, sizeof(e->name), "%s", it->h.pkg->name);
		snprintf(e->source, sizeof(e->source), "%s", it->source);
		snprintf(e->arith, sizeof(e->arith), "%s", it->h.pkg->arith);
		e->flows = it->flows;
		e->builtin = it->builtin;
	}
	p->total = pol->n;
	p->next = q->start < pol->n ? q->start + p->n : pol->n;
	return finish(r, sizeof(*p) + p->n * sizeof(p->policies[0]), 0);
}

static size_t on_policy_load(struct req *r)
{
	const struct pcmd_req_policy_load *q = (const void *)r->in->msg;
	char err[PCMD_ERRTEXT_MAX];
	struct pcmd_rep_policy_load *p;
	struct pcmd_policy *pol;
	int rc;

	if (!terminated(q->path, sizeof(q->path)) || !q->path[0])
		return fail(r, -EINVAL, "path is empty or not NUL-terminated");
	rc = pcmd_policies_load(r->d->policies, q->path, true, &pol, err, sizeof(err));
	if (rc < 0)
		return fail(r, rc, "%s", err);
	pcmd_info("policy '%s' loaded from %s (uid %u)", pol->h.pkg->name, pol->source,
		  (unsigned)r->in->cred->uid);
	p = ok_body(r, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", pol->h.pkg->name);
	return finish(r, sizeof(*p), 0);
}

static size_t on_policy_unload(struct req *r)
{
	const struct pcmd_req_policy_unload *q = (const void *)r->in->msg;
	char err[PCMD_ERRTEXT_MAX];
	int rc;

	if (!terminated(q->name, sizeof(q->name)) || !q->name[0])
		return fail(r, -EINVAL, "name is empty or not NUL-terminated");
	rc = pcmd_policies_unload(r->d->policies, q->name, r->d->cfg, err, sizeof(err));
	if (rc < 0)
		return fail(r, rc, "%s", err);
	pcmd_info("policy '%s' unloaded (uid %u)", q->name, (unsigned)r->in->cred->uid);
	ok_body(r, sizeof(struct pcmd_reply_status));
	return finish(r, sizeof(struct pcmd_reply_status), 0);
}

static struct pcmd_client *find_flow(struct pcmd *d, uint32_t flow_id, uint32_t *index)
{
	for (uint32_t s = 0; s < d->n_slots; s++) {
		struct pcmd_client *c = d->slots[s];

		for (uint32_t i = 0; c && c->conns && i < c->max_flows; i++) {
			if (pcmd_conn_listed(&c->conns[i]) && c->conns[i].flow_id == flow_id) {
				*index = i;
				return c;
			}
		}
	}
	return NULL;
}

/* Set a rule's packages (until the next reload) and move the live flows it chose. */
static size_t set_rule(struct req *r, uint32_t rule, const struct pcmd_flow_opts *o)
{
	struct pcmd *d = r->d;
	struct pcmd_rule *ru = &d->cfg->policies.rules[rule];
	const struct pcmd_flow_opts keep = {.mode = PCMD_SHELL_DEFAULT};
	struct pcmd_rep_policy_set *p;
	char err[PCMD_ERRTEXT_MAX];
	uint32_t changed = 0;

	if (rule >= d->cfg->policies.n_rules)
		return fail(r, -ENOENT, "rule %u does not exist (the config has %u rules)", rule,
			    d->cfg->policies.n_rules);
	if ((o->policy[0] && !pcmd_policies_lookup(d->policies, o->policy)) ||
	    strchr(o->policy, '/') || strchr(o->lb_policy, '/'))
		return fail(r, -ENOENT,
			    "policy '%s' is not loaded (pcmctl policies load PATH first)",
			    o->policy);
	if (o->lb_policy[0] && strcmp(o->lb_policy, "none") != 0 &&
	    !pcmd_policies_lookup(d->policies, o->lb_policy))
		return fail(r, -ENOENT, "lb policy '%s' is not loaded", o->lb_policy);
	if (o->policy[0])
		snprintf(ru->policy, sizeof(ru->policy), "%s", o->policy);
	if (o->lb_policy[0])
		snprintf(ru->lb_policy, sizeof(ru->lb_policy), "%s", o->lb_policy);
	if (o->mode != PCMD_SHELL_DEFAULT)
		ru->mode = o->mode;
	pcmd_info("rule %u (%s) now runs %s%s%s (%s) until the next reload", rule, ru->peer,
		  ru->policy[0] ? ru->policy : d->cfg->policies.default_policy,
		  ru->lb_policy[0] ? " + " : "", ru->lb_policy, pcmd_shell_mode_name(ru->mode));
	for (uint32_t s = 0; s < d->n_slots; s++) {
		struct pcmd_client *c = d->slots[s];

		for (uint32_t i = 0; c && c->conns && i < c->max_flows; i++) {
			struct pcmd_conn *cn = &c->conns[i];

			if (cn->state != PCMD_CONN_ESTABLISHED || cn->choice.rule != (int)rule)
				continue;
			if (pcmd_flow_set_policy(c, i, &keep, err, sizeof(err)) == 0)
				changed++;
			else
				pcmd_warn("rule %u: flow %u kept its policy: %s", rule, cn->flow_id,
					  err);
		}
	}
	p = ok_body(r, sizeof(*p));
	p->flows_changed = changed;
	return finish(r, sizeof(*p), 0);
}

static size_t on_policy_set(struct req *r)
{
	const struct pcmd_req_policy_set *q = (const void *)r->in->msg;
	char err[PCMD_ERRTEXT_MAX];
	struct pcmd_rep_policy_set *p;
	struct pcmd_client *owner;
	uint32_t index;
	size_t n;
	bool ok;
	int rc;

	n = check_opts(r, &q->opts, &ok);
	if (!ok)
		return n;
	if (q->target == PCMD_TARGET_RULE)
		return set_rule(r, q->id, &q->opts);
	if (q->target != PCMD_TARGET_FLOW)
		return fail(r, -EINVAL, "target %u is neither 1 (flow) nor 2 (rule)", q->target);
	owner = find_flow(r->d, q->id, &index);
	if (!owner)
		return fail(r, -ENOENT, "no flow %u (see pcmctl flows)", q->id);
	rc = pcmd_flow_set_policy(owner, index, &q->opts, err, sizeof(err));
	if (rc < 0)
		return fail(r, rc, "%s", err);
	p = ok_body(r, sizeof(*p));
	p->flows_changed = 1;
	return finish(r, sizeof(*p), 0);
}

static size_t on_log_level(struct req *r)
{
	const struct pcmd_req_log_level *q = (const void *)r->in->msg;
	char who[96];

	if (q->reserved)
		return fail(r, -EINVAL, "reserved is not 0");
	if (q->level > PCMD_LOG_DEBUG)
		return fail(r, -EINVAL, "level %u is not one of 0 (error), 1 (warn), 2 (info), "
					"3 (debug)",
			    q->level);
	snprintf(who, sizeof(who), "uid %u (a reload sets log_level, %s, again)",
		 (unsigned)r->in->cred->uid, pcmd_log_level_name(r->d->cfg->log_level));
	pcmd_log_change_level(q->level, who);
	ok_body(r, sizeof(struct pcmd_reply_status));
	return finish(r, sizeof(struct pcmd_reply_status), 0);
}

/* ---- dispatch -------------------------------------------------------------------------- */

enum { NEED_APP = 1, NEED_ADMIN = 2 };

struct handler {
	size_t size;
	uint32_t needs;
	size_t (*fn)(struct req *r);
};

static const struct handler handlers[PCMD_MSG_TYPE_END] = {
    [PCMD_MSG_HELLO] = {sizeof(struct pcmd_req_hello), 0, on_hello},
    [PCMD_MSG_REGION] = {sizeof(struct pcmd_req_region), NEED_APP, on_region},
    [PCMD_MSG_LISTEN] = {sizeof(struct pcmd_req_listen), NEED_APP, on_listen},
    [PCMD_MSG_CONNECT] = {sizeof(struct pcmd_req_connect), NEED_APP, on_connect},
    [PCMD_MSG_ACCEPT] = {sizeof(struct pcmd_req_accept), NEED_APP, on_accept},
    [PCMD_MSG_CLOSE] = {sizeof(struct pcmd_req_close), NEED_APP, on_close},
    [PCMD_MSG_SET_POLICY] = {sizeof(struct pcmd_req_set_policy), NEED_APP, on_set_policy},
    [PCMD_MSG_STATUS] = {sizeof(struct pcmd_req_empty), 0, on_status},
    [PCMD_MSG_FLOWS] = {sizeof(struct pcmd_req_page), 0, on_flows},
    [PCMD_MSG_STATS] = {sizeof(struct pcmd_req_empty), 0, on_stats},
    [PCMD_MSG_POLICY_LIST] = {sizeof(struct pcmd_req_page), 0, on_policy_list},
    [PCMD_MSG_POLICY_LOAD] = {sizeof(struct pcmd_req_policy_load), NEED_ADMIN, on_policy_load},
    [PCMD_MSG_POLICY_UNLOAD] = {sizeof(struct pcmd_req_policy_unload), NEED_ADMIN,
				on_policy_unload},
    [PCMD_MSG_POLICY_SET] = {sizeof(struct pcmd_req_policy_set), NEED_ADMIN, on_policy_set},
    [PCMD_MSG_LOG_LEVEL] = {sizeof(struct pcmd_req_log_level), NEED_ADMIN, on_log_level},
    [PCMD_MSG_PEER] = {sizeof(struct pcmd_req_peer), NEED_APP, on_peer},
};

static size_t check_framing(struct req *r, bool *ok)
{
	const struct pcmd_request_in *in = r->in;

	*ok = false;
	if (in->len < sizeof(struct pcmd_msg_hdr))
		return fail(r, -EBADMSG,
			    "a message of %zu bytes is shorter than the %zu-byte header", in->len,
			    sizeof(struct pcmd_msg_hdr));
	if (r->hdr.magic != PCMD_PROTO_MAGIC)
		return fail(r, -EPROTO, "not a pcmd message (magic %#x)", r->hdr.magic);
	if (r->hdr.version != PCMD_PROTO_VERSION) {
		r->c->close_after_send = !r->c->hello_done;
		return fail(r, -EPROTONOSUPPORT,
			    "this client speaks pcmd protocol version %u and pcmd %s speaks "
			    "%u..%u: use a libpcmtransport and a pcmd of matching releases",
			    r->hdr.version, PCM_VERSION, PCMD_PROTO_VERSION_MIN,
			    PCMD_PROTO_VERSION);
	}
	if (in->truncated)
		return fail(r, -EMSGSIZE, "longer than any request (at most %d bytes)",
			    PCMD_RECV_BYTES);
	if (r->hdr.len != in->len)
		return fail(r, -EBADMSG, "the header says %u bytes but %zu arrived", r->hdr.len,
			    in->len);
	if (r->hdr.type == 0 || r->hdr.type >= PCMD_MSG_TYPE_END)
		return fail(r, -EBADMSG, "unknown message type %u", r->hdr.type);
	if (in->stray_fds || in->ctl_truncated)
		return fail(r, -EINVAL,
			    "the message carried file descriptors; pcmd takes none "
			    "from clients (they were closed)");
	*ok = true;
	return 0;
}

static size_t check_sender(struct req *r, const struct handler *h, bool *ok)
{
	char why[PCMD_ERRTEXT_MAX], name[32];
	const struct ucred *cred = r->in->cred;
	struct pcmd_client *c = r->c;

	*ok = false;
	/* A socket handed to another process speaks with that process's credentials. */
	if (r->in->has_cred && (cred->uid != c->cred.uid || cred->gid != c->cred.gid) &&
	    pcmd_access_check(r->d->cfg, cred, NULL, 0, why, sizeof(why)) < 0)
		return fail(r, -EACCES, "%s", why);
	if (!c->hello_done && r->hdr.type != PCMD_MSG_HELLO)
		return fail(r, -EPROTO, "send HELLO first");
	if (r->in->len != h->size)
		return fail(r, -EBADMSG, "%s is %zu bytes, not %zu",
			    msg_name(r->hdr.type, name, sizeof(name)), r->in->len, h->size);
	if ((h->needs & NEED_APP) && c->role != PCMD_ROLE_APP)
		return fail(r, -EPROTO, "%s needs an app client (HELLO with role 1)",
			    msg_name(r->hdr.type, name, sizeof(name)));
	if ((h->needs & NEED_ADMIN) && !pcmd_access_admin(r->d->cfg, cred, c->groups, c->n_groups))
		return fail(r, -EPERM,
			    "%s is for admins: uid %u is not in socket.admin_uids and "
			    "gid %u is not in socket.admin_gids",
			    msg_name(r->hdr.type, name, sizeof(name)), (unsigned)cred->uid,
			    (unsigned)cred->gid);
	*ok = true;
	return 0;
}

size_t pcmd_request_handle(struct pcmd_client *c, const struct pcmd_request_in *in, uint8_t *reply,
			   size_t cap, int *fds, int *n_fds)
{
	struct req r = {
	    .c = c, .d = c->d, .in = in, .reply = reply, .cap = cap, .fds = fds, .n_fds = n_fds};
	size_t n;
	bool ok;

	*n_fds = 0;
	c->requests++;
	c->d->counters.snap.control_requests++;
	memset(&r.hdr, 0, sizeof(r.hdr));
	memcpy(&r.hdr, in->msg, in->len < sizeof(r.hdr) ? in->len : sizeof(r.hdr));
	if (c->refused) {
		c->close_after_send = true;
		return fail(&r, c->refused, "%s", c->refusal);
	}
	n = check_framing(&r, &ok);
	if (ok)
		n = check_sender(&r, &handlers[r.hdr.type], &ok);
	if (ok)
		n = handlers[r.hdr.type].fn(&r);
	return n;
}
