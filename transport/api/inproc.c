// SPDX-License-Identifier: MIT
/*
 * inproc.c - libpcmtransport's in-process backend (PCM_TP_BACKEND_INPROC):
 * the frontend's ops (backend.h) over the library's own engines
 * (transport/engine).
 *
 * An endpoint owns cfg->engines engines on one datapath and one bootstrap
 * (the datapath's: the in-process registry for null, TCP for verbs; softnic
 * runs inside pcmd and pcm-sim only, and is refused here with that advice).
 * A connection lives on one engine, the one with the fewest connections
 * when it is made. Regions are registered with every engine, so any
 * connection can use any region.
 *
 * Setup (engine_conn.c's protocol, with the bootstrap in between):
 *   connect   CONN_OPEN on the engine, dial with the local blob; the answer
 *             (seen by a later poll) binds it (CONN_BIND) or drops it
 *             (CONN_DROP); either way one CONNECT completion follows.
 *   accept    each accept() is one ACCEPT completion: the next dial that
 *             arrives while the endpoint listens is taken (CONN_ACCEPT, with
 *             the dialer's paths, reliability, shell mode and policy) and
 *             answered with the local blob, or refused with the error.
 * The dialer's policy is named in its blob. The listener runs a built-in
 * package of that name, or one this endpoint opened already; it never
 * opens a file a peer names, and falls back to its own default policy.
 *
 * Completions: the engines' completions and the setup's are translated into
 * a queue of the endpoint, from which the frontend's poll takes them. An
 * engine's cookie is the frontend's slot of the post. A closed connection's
 * engine CLOSE is a CLOSE in the queue behind its last completion: the
 * engine is done with it, and the frontend frees it (conn_free) once the
 * application has seen its end.
 *
 * Limits (pcm_tp_endpoint_limits()): each engine's core queues
 * POSTS_PER_CONN operations per connection and direction, and the endpoint
 * posts at most POSTS_PER_ENDPOINT in all, which every engine's pools of
 * operations and receive keys hold, so no post the frontend admits is
 * refused by an engine for lack of room.
 *
 * Progress: INLINE engines run in poll and wait on the caller's thread;
 * THREAD engines have their own threads, which wake the wait through the
 * endpoint's waiter (an eventfd).
 *
 * Locks: one mutex per endpoint guards setup, regions, the queue and the
 * bootstrap; sends and receives take no lock here (the engines' MPSC rings).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "blob.h"
#include "builtin.h"
#include "engine.h"
#include "tp_error.h"
#include "xp_accept_queue.h"

#define DEFAULT_POLICY "swift"
#define MAX_ENGINES 64u
#define MAX_INCOMING 64u    /* dials waiting for an accept() */
#define ENGINE_BATCH 64u
#define BOOT_BATCH 16
#define ALLOC_ALIGN 4096u
#define NS_PER_MS 1000000ull
#define KNOWN_FLAGS (PCM_TP_FLAG_NULL_NO_COPY | PCM_TP_FLAG_NO_SPIN)
/* Limits: within every engine's op pool (65,536) and receive keys (verbs: 4,096 windows). */
#define POSTS_PER_CONN 4096u
#define POSTS_PER_ENDPOINT 4096u
#define SUBMIT_WAIT_NS 1000000000ull

enum conn_state {
	CONN_DIALING = 1,
	CONN_UP = 2,
	CONN_CLOSING = 3,
};

struct ip_conn {
	struct tp_conn base;
	struct ip_ep *ep;
	uint32_t engine;
	uint32_t id;
	uint8_t state;           /* enum conn_state */
	bool hidden;             /* never handed out: freed here at its engine CLOSE */
	uint64_t slot;           /* connect()'s */
	struct pcm_tp_conn_info info; /* what it runs (pcm_tp_conn_query()) */
};

struct ip_region {
	struct tp_region base;
	bool owned;              /* pcm_tp_mem_alloc()'s: freed with it */
	uint32_t id[];           /* per engine */
};

struct incoming {
	uint64_t req;
	uint32_t len;
	char from[64];
	uint8_t msg[XP_BOOT_MSG_MAX];
};

struct pkg_ref {
	struct pcm_package_handle h;
	struct pkg_ref *next;
};

struct ip_ep {
	struct pcm_tp_endpoint base;
	pthread_mutex_t lock;
	const struct xp_dp_ops *dp;
	uint32_t n_eng;
	struct xp_engine *eng[MAX_ENGINES];
	struct ip_conn **by_id[MAX_ENGINES]; /* [engine][conn id] */
	uint32_t conns[MAX_ENGINES];          /* open, per engine */
	uint32_t max_conns;
	uint64_t max_message_bytes;
	bool inline_progress;
	struct xp_waiter waiter;
	struct xp_boot *boot;
	bool listening;
	struct xp_accept_queue accepts;       /* dials (struct incoming *) and accept() slots */
	struct tp_comp *q;                    /* ring of completions */
	uint32_t q_head, q_len, q_cap;
	struct pkg_ref *pkgs;
	char policy[XP_ENGINE_POLICY_NAME_MAX];
};

static struct ip_ep *ep_of(struct pcm_tp_endpoint *base)
{
	return (struct ip_ep *)base;
}

static struct ip_conn *conn_of(struct tp_conn *base)
{
	return (struct ip_conn *)base;
}

static struct ip_region *region_of(struct tp_region *base)
{
	return (struct ip_region *)base;
}

/* ---- the completion queue ------------------------------------------------------------------ */

static int q_push(struct ip_ep *ep, const struct tp_comp *e)
{
	if (ep->q_len == ep->q_cap) {
		uint32_t cap = ep->q_cap ? 2 * ep->q_cap : 256;
		struct tp_comp *n = malloc((size_t)cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (uint32_t i = 0; i < ep->q_len; i++)
			n[i] = ep->q[(ep->q_head + i) % ep->q_cap];
		free(ep->q);
		ep->q = n;
		ep->q_head = 0;
		ep->q_cap = cap;
	}
	ep->q[(ep->q_head + ep->q_len) % ep->q_cap] = *e;
	ep->q_len++;
	return 0;
}

static void q_complete(struct ip_ep *ep, enum pcm_tp_op op, int status, struct ip_conn *c,
		       uint64_t slot, uint64_t bytes)
{
	struct tp_comp e = { .op = op, .status = status, .conn = c ? &c->base : NULL,
			     .slot = slot, .bytes = bytes };

	/* an entry that does not fit is a lost completion: there is nothing better to do */
	if (q_push(ep, &e) < 0)
		abort();
}

/* ---- engine commands and control requests --------------------------------------------------- */

/*
 * Submit @cmd to engine @i. A full command ring is only a moment's: the
 * frontend admits no more posts than the core takes, so the engine drains
 * the ring at once (an INLINE one here, a THREAD one on its thread). Waiting
 * for that keeps -EAGAIN the limits' alone, the same in both backends.
 * Return: 0, -EAGAIN (the ring stayed full for SUBMIT_WAIT_NS: the engine is stuck).
 */
static int submit(struct ip_ep *ep, uint32_t i, const struct xp_cmd *cmd)
{
	uint64_t until = 0;
	int rc;

	while ((rc = xp_engine_submit(ep->eng[i], cmd)) == -EAGAIN) {
		uint64_t now = xp_mono_ns();

		if (!until)
			until = now + SUBMIT_WAIT_NS;
		else if (now > until)
			break;
		if (ep->inline_progress)
			xp_engine_progress(ep->eng[i]);
		else
			sched_yield();
	}
	return rc;
}

/* Run @ctl on engine @i and wait for it. Return: its status. */
static int ctl_run(struct ip_ep *ep, uint32_t i, struct xp_ctl *ctl)
{
	(void)xp_engine_ctl_run(ep->eng[i], ctl, 0); /* no timeout: it returns answered */
	if (ctl->status < 0 && ctl->diag.msg[0])
		pcm_tp_set_error(ctl->status, "%s", ctl->diag.msg);
	return ctl->status;
}

/* ---- policies ---------------------------------------------------------------------------------- */

static const struct pcm_package *pkg_known(const struct ip_ep *ep, const char *name)
{
	const struct pcm_package *builtin = pcm_package_find(pcm_builtin_policies, name);

	if (builtin)
		return builtin;
	for (const struct pkg_ref *r = ep->pkgs; r; r = r->next)
		if (strcmp(r->h.pkg->name, name) == 0)
			return r->h.pkg;
	return NULL;
}

/*
 * The package for @name: NULL for "none", a built-in or opened one by name,
 * else (unless @from_peer) a .so path opened now and kept until the endpoint
 * closes. Return: 0, or -ENOENT etc. with the last error set.
 */
static int pkg_resolve(struct ip_ep *ep, const char *name, const struct pcm_package **out)
{
	struct pkg_ref *r;
	char err[256];
	int rc;

	*out = NULL;
	if (strcmp(name, "none") == 0)
		return 0;
	*out = pkg_known(ep, name);
	if (*out)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return pcm_tp_set_error(-ENOMEM, "policy '%s': out of memory", name);
	rc = pcm_package_open(name, pcm_builtin_policies, &r->h, err, sizeof(err));
	if (rc < 0) {
		free(r);
		return pcm_tp_set_error(rc == -ENOENT ? -ENOENT : rc, "policy '%s': %s", name, err);
	}
	if (strlen(r->h.pkg->name) >= XP_BLOB_NAME_MAX) {
		pcm_package_close(&r->h);
		free(r);
		return pcm_tp_set_error(-EINVAL, "policy '%s': its name is longer than %d bytes",
					name, XP_BLOB_NAME_MAX - 1);
	}
	r->next = ep->pkgs;
	ep->pkgs = r;
	*out = r->h.pkg;
	return 0;
}

static int mode_of(enum pcm_tp_shell_mode m, struct xp_conn_opts *o)
{
	switch (m) {
	case PCM_TP_SHELL_SYNC:
		o->mode = XP_CC_PCM_SYNC;
		return 0;
	case PCM_TP_SHELL_ASYNC_RELAXED:
	case PCM_TP_SHELL_ASYNC_LOCKED:
	case PCM_TP_SHELL_ASYNC_BOUNDED:
		o->mode = XP_CC_PCM_ASYNC;
		o->async_mode = (enum pcm_async_mode)(m - PCM_TP_SHELL_ASYNC_RELAXED);
		return 0;
	default:
		return pcm_tp_set_error(-EINVAL, "shell mode %d is not one of pcm_tp_shell_mode",
					(int)m);
	}
}

static void name_pkg(char *dst, const struct pcm_package *pkg)
{
	snprintf(dst, XP_ENGINE_POLICY_NAME_MAX, "%s", pkg ? pkg->name : "none");
}

/* The engine's options for the public ones (NULL: every default). */
static int opts_resolve(struct ip_ep *ep, const struct pcm_tp_conn_opts *po,
			struct xp_conn_opts *o)
{
	const char *cc = po && po->policy ? po->policy : ep->policy;
	int rc;

	memset(o, 0, sizeof(*o));
	rc = mode_of(po ? po->mode : PCM_TP_SHELL_SYNC, o);
	if (rc == 0)
		rc = pkg_resolve(ep, cc, &o->cc);
	if (rc == 0 && po && po->lb_policy)
		rc = pkg_resolve(ep, po->lb_policy, &o->lb);
	if (rc < 0)
		return rc;
	if (o->lb && !o->cc)
		return pcm_tp_set_error(-EINVAL, "an LB policy ('%s') needs a CC policy",
					o->lb->name);
	if (po && po->paths > XP_MAX_PATHS)
		return pcm_tp_set_error(-EINVAL, "%u paths asked, at most %u", po->paths,
					XP_MAX_PATHS);
	if (po && po->no_progress_ms > PCM_TP_NO_PROGRESS_MS_MAX)
		return pcm_tp_set_error(-EINVAL, "no_progress_ms %u is above %u (an hour)",
					po->no_progress_ms, PCM_TP_NO_PROGRESS_MS_MAX);
	o->paths = po ? po->paths : 0;
	o->rc = po && po->reliable_connected;
	o->no_progress_ns = po ? po->no_progress_ms * 1000000ull : 0;
	name_pkg(o->cc_name, o->cc);
	name_pkg(o->lb_name, o->lb);
	return 0;
}

/* The listener's options from the dialer's blob: its mode and policies, where known here. */
static void opts_from_peer(struct ip_ep *ep, const struct xp_conn_blob *b, struct xp_conn_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = b->mode == 0 ? XP_CC_PCM_SYNC : XP_CC_PCM_ASYNC;
	o->async_mode = b->mode ? (enum pcm_async_mode)(b->mode - 1) : PCM_ASYNC_RELAXED;
	if (o->mode == XP_CC_PCM_ASYNC && o->async_mode >= PCM_ASYNC_MODE_COUNT)
		o->async_mode = PCM_ASYNC_RELAXED;
	o->cc = strcmp(b->cc, "none") == 0 ? NULL : pkg_known(ep, b->cc);
	if (!o->cc && strcmp(b->cc, "none") != 0)
		o->cc = pkg_known(ep, ep->policy);
	o->lb = o->cc && b->lb[0] ? pkg_known(ep, b->lb) : NULL;
	name_pkg(o->cc_name, o->cc);
	name_pkg(o->lb_name, o->lb);
}

/* What a connection with options @o runs, as pcm_tp_conn_query() says it. */
static void info_of(const struct xp_conn_opts *o, struct pcm_tp_conn_info *out)
{
	memset(out, 0, sizeof(*out));
	/* package names are shorter than PCM_NAME_MAX (64), the blob's longer field says less */
	snprintf(out->policy, sizeof(out->policy), "%.*s", PCM_TP_NAME_MAX - 1, o->cc_name);
	snprintf(out->lb_policy, sizeof(out->lb_policy), "%.*s", PCM_TP_NAME_MAX - 1,
		 o->lb ? o->lb_name : "");
	out->mode = o->mode == XP_CC_PCM_SYNC
			    ? PCM_TP_SHELL_SYNC
			    : (enum pcm_tp_shell_mode)(PCM_TP_SHELL_ASYNC_RELAXED + o->async_mode);
}

/* ---- endpoint ---------------------------------------------------------------------------------- */

static bool want_inline(const struct pcm_tp_config *cfg, uint32_t n_eng)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cfg->progress == PCM_TP_PROGRESS_INLINE)
		return true;
	if (cfg->progress == PCM_TP_PROGRESS_THREAD)
		return false;
	return cpus < 2 * (long)n_eng + 1;
}

/* Free everything: the engines first, so nothing writes into a region any more. */
static void ep_free(struct ip_ep *ep)
{
	for (uint32_t i = 0; i < ep->n_eng; i++) {
		xp_engine_destroy(ep->eng[i]);
		if (ep->by_id[i])
			for (uint32_t k = 0; k < ep->max_conns; k++)
				free(ep->by_id[i][k]);
		free(ep->by_id[i]);
	}
	for (uint32_t i = 0; i < ep->q_len; i++) { /* released, or failed to connect, unseen */
		struct tp_comp *e = &ep->q[(ep->q_head + i) % ep->q_cap];

		if (e->op == PCM_TP_OP_CLOSE || (e->op == PCM_TP_OP_CONNECT && e->status < 0))
			free(e->conn);
	}
	while (ep->base.regions) {
		struct ip_region *m = region_of(ep->base.regions);

		ep->base.regions = m->base.next;
		if (m->owned)
			free(m->base.addr);
		free(m);
	}
	for (uint64_t in = 0; xp_accept_queue_take_dial(&ep->accepts, &in);)
		free((struct incoming *)(uintptr_t)in);
	xp_accept_queue_fini(&ep->accepts);
	if (ep->boot)
		ep->boot->ops->destroy(ep->boot);
	while (ep->pkgs) {
		struct pkg_ref *r = ep->pkgs;

		ep->pkgs = r->next;
		pcm_package_close(&r->h);
		free(r);
	}
	if (ep->waiter.efd >= 0)
		close(ep->waiter.efd);
	free(ep->q);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
}

static int engines_create(struct ip_ep *ep, const struct pcm_tp_config *cfg)
{
	for (uint32_t i = 0; i < ep->n_eng; i++) {
		struct xp_engine_config ec;
		struct pcm_diag diag = { { 0 } };
		int rc;

		xp_engine_config_default(&ec);
		ec.dp_ops = ep->dp;
		ec.dp.device = cfg->device;
		ec.dp.port = cfg->port;
		ec.dp.gid_index = cfg->gid_index;
		ec.dp.engine = i;
		ec.dp.copy = !(cfg->flags & PCM_TP_FLAG_NULL_NO_COPY);
		if (cfg->flags & PCM_TP_FLAG_NO_SPIN)
			ec.spin_ns = 0;
		ec.index = i;
		ec.progress = ep->inline_progress ? XP_PROGRESS_INLINE : XP_PROGRESS_THREAD;
		ec.waiter = &ep->waiter;
		ec.cc_room_for = pcm_builtin_policies; /* any built-in swaps in place */
		if (cfg->chunk_bytes)
			ec.core.chunk_bytes = cfg->chunk_bytes;
		ec.core.max_queued = POSTS_PER_CONN;
		rc = xp_engine_create(&ec, &ep->eng[i], &diag);
		if (rc < 0)
			return pcm_tp_set_error(rc, "datapath '%s', engine %u: %s", ep->dp->name, i,
						diag.msg[0] ? diag.msg : strerror(-rc));
		ep->max_conns = ec.core.max_conns;
		ep->max_message_bytes = xp_core_max_msg_bytes(xp_engine_core(ep->eng[i]));
		ep->by_id[i] = calloc(ep->max_conns, sizeof(*ep->by_id[i]));
		if (!ep->by_id[i])
			return pcm_tp_set_error(-ENOMEM, "out of memory for the connection table");
	}
	return 0;
}

static int check_config(const struct pcm_tp_config *cfg)
{
	if (!cfg->datapath)
		return pcm_tp_set_error(-EINVAL, "no datapath named (one of: %s)", xp_dp_names());
	if (!xp_dp_find(cfg->datapath))
		return pcm_tp_set_error(-ENODEV, "no datapath '%s' in this build (one of: %s)",
					cfg->datapath, xp_dp_names());
	if (strcmp(cfg->datapath, "softnic") == 0)
		return pcm_tp_set_error(-EOPNOTSUPP,
					"datapath 'softnic' is an emulated fabric that runs inside "
					"pcmd and pcm-sim, not in process: open the endpoint through "
					"pcmd (PCM_TP_BACKEND_DAEMON, with pcmd's datapath softnic), or "
					"use datapath 'null' in process");
	if (cfg->engines > MAX_ENGINES)
		return pcm_tp_set_error(-EINVAL, "%u engines asked, at most %u", cfg->engines,
					MAX_ENGINES);
	if (cfg->chunk_bytes > XP_CHUNK_BYTES_MAX)
		return pcm_tp_set_error(-EINVAL, "chunk_bytes %u is above the largest, %u",
					cfg->chunk_bytes, XP_CHUNK_BYTES_MAX);
	if ((unsigned)cfg->progress > PCM_TP_PROGRESS_INLINE)
		return pcm_tp_set_error(-EINVAL, "progress %d is not one of pcm_tp_progress",
					(int)cfg->progress);
	if (cfg->flags & ~KNOWN_FLAGS)
		return pcm_tp_set_error(-EINVAL, "unknown flags 0x%x", cfg->flags & ~KNOWN_FLAGS);
	if (cfg->policy && strlen(cfg->policy) >= XP_ENGINE_POLICY_NAME_MAX)
		return pcm_tp_set_error(-EINVAL, "policy name longer than %d bytes",
					XP_ENGINE_POLICY_NAME_MAX - 1);
	return 0;
}

static int ip_endpoint_open(const struct pcm_tp_config *cfg, struct pcm_tp_endpoint **out)
{
	const struct pcm_package *dflt;
	struct pcm_diag diag = { { 0 } };
	struct ip_ep *ep;
	int rc = check_config(cfg);

	if (rc < 0)
		return rc;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return pcm_tp_set_error(-ENOMEM, "out of memory for the endpoint");
	ep->base.ops = &pcm_tp_inproc_ops;
	pthread_mutex_init(&ep->lock, NULL);
	ep->dp = xp_dp_find(cfg->datapath);
	ep->n_eng = cfg->engines ? cfg->engines : 1;
	ep->inline_progress = want_inline(cfg, ep->n_eng);
	snprintf(ep->policy, sizeof(ep->policy), "%s", cfg->policy ? cfg->policy : DEFAULT_POLICY);
	ep->waiter.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ep->waiter.efd < 0)
		rc = pcm_tp_set_error(-errno, "eventfd: %s", strerror(errno));
	if (rc == 0)
		rc = pkg_resolve(ep, ep->policy, &dflt);
	if (rc == 0 && (rc = ep->dp->boot->create(&ep->boot, &diag)) < 0)
		pcm_tp_set_error(rc, "bootstrap '%s': %s", ep->dp->boot->name, diag.msg);
	if (rc == 0)
		rc = engines_create(ep, cfg);
	if (rc < 0) {
		ep_free(ep);
		return rc;
	}
	*out = &ep->base;
	return 0;
}

static void ip_endpoint_close(struct pcm_tp_endpoint *base)
{
	ep_free(ep_of(base));
}

static void ip_limits(struct pcm_tp_endpoint *base, struct pcm_tp_limits *out)
{
	*out = (struct pcm_tp_limits){ .sends_per_conn = POSTS_PER_CONN,
				       .recvs_per_conn = POSTS_PER_CONN,
				       .posts_per_endpoint = POSTS_PER_ENDPOINT,
				       .max_message_bytes = ep_of(base)->max_message_bytes };
}

/* ---- listen, connect, accept ------------------------------------------------------------------ */

/* @flags: PCM_TP_LISTEN_ANY_USER changes nothing here (a name is this process's). */
static int ip_listen(struct pcm_tp_endpoint *base, const char *addr, uint32_t flags)
{
	struct ip_ep *ep = ep_of(base);
	struct pcm_diag diag = { { 0 } };
	int rc;

	(void)flags;
	if (!addr || !addr[0])
		return pcm_tp_set_error(-EINVAL, "listen: no address");
	pthread_mutex_lock(&ep->lock);
	if (ep->listening)
		rc = pcm_tp_set_error(-EADDRINUSE, "listen '%s': this endpoint listens already",
				      addr);
	else if ((rc = xp_accept_queue_init(&ep->accepts, MAX_INCOMING)) < 0)
		pcm_tp_set_error(rc, "listen '%s': out of memory", addr);
	else if ((rc = ep->boot->ops->listen(ep->boot, addr, &diag)) < 0) {
		pcm_tp_set_error(rc, "listen '%s': %s", addr, diag.msg[0] ? diag.msg : strerror(-rc));
		xp_accept_queue_fini(&ep->accepts);
	} else
		ep->listening = true;
	pthread_mutex_unlock(&ep->lock);
	return rc;
}

static uint32_t engine_pick(const struct ip_ep *ep)
{
	uint32_t best = 0;

	for (uint32_t i = 1; i < ep->n_eng; i++)
		if (ep->conns[i] < ep->conns[best])
			best = i;
	return best;
}

static struct ip_conn *conn_new(struct ip_ep *ep, uint32_t engine, uint32_t id, uint8_t state)
{
	struct ip_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->base.ep = &ep->base;
	c->ep = ep;
	c->engine = engine;
	c->id = id;
	c->state = state;
	ep->by_id[engine][id] = c;
	ep->conns[engine]++;
	return c;
}

/* Forget @c: its engine connection is gone, or hidden from it. */
static void conn_forget(struct ip_ep *ep, struct ip_conn *c)
{
	ep->by_id[c->engine][c->id] = NULL;
	ep->conns[c->engine]--;
}

static int ip_connect(struct pcm_tp_endpoint *base, const char *addr,
		      const struct pcm_tp_conn_opts *o, uint64_t slot, struct tp_conn **out)
{
	struct ip_ep *ep = ep_of(base);
	struct pcm_diag diag = { { 0 } };
	struct xp_ctl *ctl;
	struct ip_conn *c;
	uint32_t i;
	int rc;

	ctl = xp_ctl_new(XP_CTL_CONN_OPEN);
	if (!ctl)
		return pcm_tp_set_error(-ENOMEM, "connect: out of memory");
	pthread_mutex_lock(&ep->lock);
	rc = opts_resolve(ep, o, &ctl->opts);
	i = engine_pick(ep);
	if (rc == 0)
		rc = ctl_run(ep, i, ctl);
	if (rc < 0)
		goto out;
	c = conn_new(ep, i, ctl->conn, CONN_DIALING);
	if (!c) {
		rc = pcm_tp_set_error(-ENOMEM, "connect: out of memory");
	} else {
		c->slot = slot;
		info_of(&ctl->opts, &c->info);
		*out = &c->base;
		rc = ep->boot->ops->dial(ep->boot, addr, ctl->msg, ctl->msg_len,
					 (uint64_t)(uintptr_t)c, &diag);
		if (rc < 0) {
			pcm_tp_set_error(rc, "connect '%s': %s", addr,
					 diag.msg[0] ? diag.msg : strerror(-rc));
			conn_forget(ep, c);
			free(c);
		}
	}
	if (rc < 0) {
		int err = rc;

		ctl->op = XP_CTL_CONN_DROP;
		ctl_run(ep, i, ctl);
		rc = err;
	}
out:
	pthread_mutex_unlock(&ep->lock);
	free(ctl);
	return rc;
}

/* The answer to our dial came: bind, or drop; one CONNECT completion either way. */
static void dial_answered(struct ip_ep *ep, const struct xp_boot_event *ev)
{
	struct ip_conn *c = (struct ip_conn *)(uintptr_t)ev->token;
	struct xp_ctl *ctl = xp_ctl_new(XP_CTL_CONN_BIND);
	int rc = ev->status;

	if (!ctl)
		rc = -ENOMEM;
	if (rc == 0 && ev->len > sizeof(ctl->peer_msg))
		rc = -EBADMSG;
	if (rc == 0) {
		ctl->conn = c->id;
		memcpy(ctl->peer_msg, ev->msg, ev->len);
		ctl->peer_len = ev->len;
		rc = ctl_run(ep, c->engine, ctl);
	} else if (ctl) {
		pcm_tp_set_error(rc, "connect: %s refused: %s", ev->from, strerror(-rc));
		ctl->op = XP_CTL_CONN_DROP;
		ctl->conn = c->id;
		ctl_run(ep, c->engine, ctl);
	}
	free(ctl);
	if (rc == 0) {
		c->state = CONN_UP;
	} else {
		conn_forget(ep, c); /* the frontend frees it */
	}
	q_complete(ep, PCM_TP_OP_CONNECT, rc, c, c->slot, 0);
}

/* Take dial @in for the oldest accept(): one ACCEPT completion. */
static void accept_one(struct ip_ep *ep, const struct incoming *in, uint64_t slot)
{
	struct xp_ctl *ctl = xp_ctl_new(XP_CTL_CONN_ACCEPT);
	struct xp_conn_blob peer;
	const char *why = "";
	uint32_t i = engine_pick(ep);
	struct ip_conn *c = NULL;
	int rc = ctl ? xp_blob_decode(in->msg, in->len, &peer, &why) : -ENOMEM;

	if (rc < 0 && ctl)
		pcm_tp_set_error(rc, "accept: %s sent a malformed connection blob ('%s')", in->from,
				 why);
	if (rc == 0) {
		opts_from_peer(ep, &peer, &ctl->opts);
		memcpy(ctl->peer_msg, in->msg, in->len);
		ctl->peer_len = in->len;
		rc = ctl_run(ep, i, ctl);
	}
	if (rc == 0) {
		c = conn_new(ep, i, ctl->conn, CONN_UP);
		if (c)
			info_of(&ctl->opts, &c->info);
		if (!c) {
			struct xp_cmd close = { .op = XP_CMD_CLOSE, .close_mode = XP_CLOSE_ABORT,
						.conn = ctl->conn };

			rc = -ENOMEM;
			submit(ep, i, &close);
		}
	}
	if (rc == 0)
		rc = ep->boot->ops->answer(ep->boot, in->req, 0, ctl->msg, ctl->msg_len);
	else
		ep->boot->ops->answer(ep->boot, in->req, rc, NULL, 0);
	if (rc < 0 && c) {
		struct xp_cmd close = { .op = XP_CMD_CLOSE, .close_mode = XP_CLOSE_ABORT,
					.conn = c->id };

		c->state = CONN_CLOSING;
		c->hidden = true;
		submit(ep, i, &close);
		c = NULL;
	}
	free(ctl);
	q_complete(ep, PCM_TP_OP_ACCEPT, rc, c, slot, 0);
}

/* Pair waiting dials with waiting accept()s, oldest first (xp_accept_queue.h). */
static void accepts_match(struct ip_ep *ep)
{
	uint64_t in, cookie;

	while (xp_accept_queue_match(&ep->accepts, &in, &cookie)) {
		accept_one(ep, (struct incoming *)(uintptr_t)in, cookie);
		free((struct incoming *)(uintptr_t)in);
	}
}

static void dial_arrived(struct ip_ep *ep, const struct xp_boot_event *ev)
{
	struct incoming *in;

	if (!ep->listening || xp_accept_queue_full(&ep->accepts) || ev->len > XP_BOOT_MSG_MAX ||
	    !(in = calloc(1, sizeof(*in)))) {
		ep->boot->ops->answer(ep->boot, ev->req, -ECONNREFUSED, NULL, 0);
		return;
	}
	in->req = ev->req;
	in->len = ev->len;
	memcpy(in->msg, ev->msg, ev->len);
	snprintf(in->from, sizeof(in->from), "%s", ev->from);
	(void)xp_accept_queue_dial(&ep->accepts, (uintptr_t)in); /* not full: looked at above */
}

static int ip_accept(struct pcm_tp_endpoint *base, uint64_t slot)
{
	struct ip_ep *ep = ep_of(base);
	int rc = 0;

	pthread_mutex_lock(&ep->lock);
	if (!ep->listening)
		rc = pcm_tp_set_error(-EINVAL, "accept: the endpoint does not listen");
	else if (xp_accept_queue_accept(&ep->accepts, slot) < 0)
		rc = pcm_tp_set_error(-ENOMEM, "accept: out of memory");
	else
		accepts_match(ep);
	pthread_mutex_unlock(&ep->lock);
	return rc;
}

/* ---- connections ------------------------------------------------------------------------------ */

static int ip_conn_close(struct tp_conn *base)
{
	struct ip_conn *c = conn_of(base);
	struct ip_ep *ep = c->ep;
	struct xp_cmd cmd = { .op = XP_CMD_CLOSE, .close_mode = XP_CLOSE_ABORT, .conn = c->id };
	int rc;

	pthread_mutex_lock(&ep->lock);
	if (c->state != CONN_UP)
		rc = pcm_tp_set_error(-ENOTCONN, "close: the connection is closed already");
	else if ((rc = submit(ep, c->engine, &cmd)) == 0)
		c->state = CONN_CLOSING;
	else
		pcm_tp_set_error(rc, "close: engine %u takes no command (its ring stays full)",
				 c->engine);
	pthread_mutex_unlock(&ep->lock);
	return rc;
}

static void ip_conn_free(struct tp_conn *base)
{
	free(conn_of(base));
}

static int ip_conn_set_policy(struct tp_conn *base, const struct pcm_tp_conn_opts *o)
{
	struct ip_conn *c = conn_of(base);
	struct ip_ep *ep = c->ep;
	struct xp_ctl *ctl = xp_ctl_new(XP_CTL_SET_CC);
	int rc;

	if (!ctl)
		return pcm_tp_set_error(-ENOMEM, "set_policy: out of memory");
	pthread_mutex_lock(&ep->lock);
	if (c->state != CONN_UP)
		rc = pcm_tp_set_error(-ENOTCONN, "set_policy: the connection is not established");
	else
		rc = opts_resolve(ep, o, &ctl->opts);
	if (rc == 0) {
		ctl->conn = c->id;
		rc = ctl_run(ep, c->engine, ctl);
	}
	if (rc == 0)
		info_of(&ctl->opts, &c->info);
	pthread_mutex_unlock(&ep->lock);
	free(ctl);
	return rc;
}

static int ip_conn_query(struct tp_conn *base, struct pcm_tp_conn_info *out)
{
	struct ip_conn *c = conn_of(base);

	pthread_mutex_lock(&c->ep->lock);
	*out = c->info;
	pthread_mutex_unlock(&c->ep->lock);
	return 0;
}

/*
 * In process both ends of a null or softnic connection are in this process (the registry
 * bootstrap): the peer's credentials are its own. A verbs peer is another machine's.
 */
static int ip_conn_peer(struct tp_conn *base, struct pcm_tp_peer *out)
{
	struct ip_conn *c = conn_of(base);

	if (strcmp(c->ep->boot->ops->name, "registry") != 0)
		return pcm_tp_set_error(-EOPNOTSUPP,
					"peer credentials: the %s bootstrap's peer is another "
					"machine's process",
					c->ep->boot->ops->name);
	*out = (struct pcm_tp_peer){
	    .uid = (uint32_t)getuid(), .gid = (uint32_t)getgid(), .pid = (int32_t)getpid()};
	return 0;
}

/* ---- memory ------------------------------------------------------------------------------------ */

/* Register [addr, addr + len) with every engine. Under the lock. */
static int region_make(struct ip_ep *ep, void *addr, size_t len, bool owned,
		       struct ip_region **out)
{
	struct ip_region *m = calloc(1, sizeof(*m) + ep->n_eng * sizeof(uint32_t));
	struct xp_ctl *ctl = xp_ctl_new(XP_CTL_MR_REG);
	uint32_t i;
	int rc = 0;

	if (!m || !ctl) {
		rc = pcm_tp_set_error(-ENOMEM, "mr_reg: out of memory");
		goto out;
	}
	for (i = 0; i < ep->n_eng && rc == 0; i++) {
		ctl->op = XP_CTL_MR_REG;
		ctl->addr = addr;
		ctl->len = len;
		rc = ctl_run(ep, i, ctl);
		m->id[i] = ctl->mr;
	}
	if (rc < 0) {
		for (uint32_t k = 0; k + 1 < i; k++) {
			ctl->op = XP_CTL_MR_DEREG;
			ctl->mr = m->id[k];
			ctl_run(ep, k, ctl);
		}
		goto out;
	}
	m->base.addr = addr;
	m->base.len = len;
	m->owned = owned;
	*out = m;
	m = NULL;
out:
	free(m);
	free(ctl);
	return rc;
}

static int ip_region_add(struct pcm_tp_endpoint *base, void *addr, size_t len,
			 struct tp_region **out)
{
	struct ip_ep *ep = ep_of(base);
	struct ip_region *m;
	int rc;

	pthread_mutex_lock(&ep->lock);
	rc = region_make(ep, addr, len, false, &m);
	pthread_mutex_unlock(&ep->lock);
	if (rc == 0)
		*out = &m->base;
	return rc;
}

static int ip_region_alloc(struct pcm_tp_endpoint *base, size_t len, struct tp_region **out)
{
	struct ip_ep *ep = ep_of(base);
	size_t rounded = (len + ALLOC_ALIGN - 1) / ALLOC_ALIGN * ALLOC_ALIGN;
	void *p = rounded >= len ? aligned_alloc(ALLOC_ALIGN, rounded) : NULL;
	struct ip_region *m;
	int rc;

	if (!p)
		return pcm_tp_set_error(-ENOMEM, "mem_alloc: no %zu bytes", len);
	pthread_mutex_lock(&ep->lock);
	rc = region_make(ep, p, rounded, true, &m);
	pthread_mutex_unlock(&ep->lock);
	if (rc < 0) {
		free(p);
		return rc;
	}
	*out = &m->base;
	return 0;
}

/* Deregister @r from every engine and free it. */
static void ip_region_remove(struct tp_region *r)
{
	struct ip_region *m = region_of(r);
	struct ip_ep *ep = ep_of(r->ep);
	struct xp_ctl *ctl = xp_ctl_new(XP_CTL_MR_DEREG);

	pthread_mutex_lock(&ep->lock);
	for (uint32_t i = 0; ctl && i < ep->n_eng; i++) {
		ctl->op = XP_CTL_MR_DEREG;
		ctl->mr = m->id[i];
		ctl_run(ep, i, ctl);
	}
	pthread_mutex_unlock(&ep->lock);
	free(ctl);
	if (m->owned)
		free(r->addr);
	free(m);
}

/* ---- data ------------------------------------------------------------------------------------------ */

static int ip_post(struct tp_conn *base, enum pcm_tp_op op, struct tp_region *r, const void *buf,
		   size_t len, uint64_t slot)
{
	struct ip_conn *c = conn_of(base);
	struct ip_ep *ep = c->ep;
	struct xp_cmd cmd;
	int rc;

	if (c->state != CONN_UP)
		return pcm_tp_set_error(-ENOTCONN, "%s: the connection is closed",
					op == PCM_TP_OP_SEND ? "send" : "recv");
	cmd = (struct xp_cmd){ .op = op == PCM_TP_OP_SEND ? XP_CMD_SEND : XP_CMD_RECV,
			       .conn = c->id, .mr = region_of(r)->id[c->engine],
			       .addr = (uint64_t)(uintptr_t)(buf ? buf : r->addr), .len = len,
			       .cookie = slot };
	rc = submit(ep, c->engine, &cmd);
	if (rc < 0)
		pcm_tp_set_error(rc, "%s: engine %u takes no command (its ring stays full)",
				 op == PCM_TP_OP_SEND ? "send" : "recv", c->engine);
	return rc;
}

/* ---- completions ------------------------------------------------------------------------------- */

static int status_of(int32_t s)
{
	return s == -ECANCELED ? -ECONNABORTED : s;
}

static void translate(struct ip_ep *ep, uint32_t i, const struct xp_engine_comp *e)
{
	struct ip_conn *c = e->conn < ep->max_conns ? ep->by_id[i][e->conn] : NULL;

	if (!c)
		return; /* a control request's */
	switch (e->kind) {
	case XP_ECOMP_SEND:
	case XP_ECOMP_RECV:
		q_complete(ep, e->kind == XP_ECOMP_SEND ? PCM_TP_OP_SEND : PCM_TP_OP_RECV,
			   status_of(e->status), c, e->cookie, e->bytes);
		break;
	case XP_ECOMP_CLOSE:
		conn_forget(ep, c);
		if (c->hidden)
			free(c);
		else /* the engine is done with it: the frontend frees it */
			q_complete(ep, PCM_TP_OP_CLOSE, 0, c, 0, 0);
		break;
	default:
		break;
	}
}

/* Everything the engines and the bootstrap have for us, into the queue. Under the lock. */
static void gather(struct ip_ep *ep)
{
	struct xp_boot_event bev[BOOT_BATCH];
	struct xp_engine_comp ec[ENGINE_BATCH];
	int nb;

	for (uint32_t i = 0; i < ep->n_eng; i++) {
		uint32_t n;

		if (ep->inline_progress)
			xp_engine_progress(ep->eng[i]);
		while ((n = xp_engine_poll(ep->eng[i], ec, ENGINE_BATCH)) > 0)
			for (uint32_t k = 0; k < n; k++)
				translate(ep, i, &ec[k]);
	}
	while ((nb = ep->boot->ops->poll(ep->boot, bev, BOOT_BATCH)) > 0) {
		for (int k = 0; k < nb; k++) {
			if (bev[k].kind == XP_BOOT_EV_ANSWERED)
				dial_answered(ep, &bev[k]);
			else if (bev[k].kind == XP_BOOT_EV_INCOMING)
				dial_arrived(ep, &bev[k]);
		}
		accepts_match(ep);
		if (nb < BOOT_BATCH)
			break;
	}
}

static int ip_poll(struct pcm_tp_endpoint *base, struct tp_comp *out, int max)
{
	struct ip_ep *ep = ep_of(base);
	int n = 0;

	pthread_mutex_lock(&ep->lock);
	gather(ep);
	while (ep->q_len && n < max) {
		out[n++] = ep->q[ep->q_head];
		ep->q_head = (ep->q_head + 1) % ep->q_cap;
		ep->q_len--;
	}
	pthread_mutex_unlock(&ep->lock);
	return n;
}

/*
 * Sleep until an fd of the engines or the bootstrap is readable, the next
 * engine deadline, or @until_ns. INLINE engines sleep on their datapath's
 * fd when it can block; THREAD engines wake the waiter.
 */
static void sleep_once(struct ip_ep *ep, uint64_t until_ns)
{
	struct pollfd pfd[MAX_ENGINES + 2];
	uint64_t now = xp_mono_ns(), wake = until_ns;
	nfds_t n = 0;
	int fd;

	pfd[n++] = (struct pollfd){ .fd = ep->boot->ops->fd(ep->boot), .events = POLLIN };
	pfd[n++] = (struct pollfd){ .fd = ep->waiter.efd, .events = POLLIN };
	for (uint32_t i = 0; ep->inline_progress && i < ep->n_eng; i++) {
		int rc = xp_engine_prepare_wait(ep->eng[i], &fd);
		uint64_t d = xp_engine_next_deadline(ep->eng[i]);

		if (rc == -EAGAIN)
			return; /* work waits: do not sleep */
		if (rc == -EOPNOTSUPP)
			wake = now; /* cannot block: poll again */
		else
			pfd[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (d < wake)
			wake = d;
	}
	if (!ep->inline_progress) {
		xp_wake_arm(&ep->waiter.waiting); /* wake.h: then the last look */
		pthread_mutex_lock(&ep->lock);
		gather(ep);
		if (ep->q_len)
			wake = now;
		pthread_mutex_unlock(&ep->lock);
	}
	if (wake > now)
		poll(pfd, n, (int)((wake - now + NS_PER_MS - 1) / NS_PER_MS));
	if (!ep->inline_progress) {
		uint64_t v;

		atomic_store(&ep->waiter.waiting, 0);
		if (read(ep->waiter.efd, &v, sizeof(v)) < 0)
			v = 0; /* nothing was written: fine */
	}
}

static int ip_wait(struct pcm_tp_endpoint *base, int timeout_ms)
{
	struct ip_ep *ep = ep_of(base);
	uint64_t until = timeout_ms < 0 ? UINT64_MAX
					: xp_mono_ns() + (uint64_t)timeout_ms * NS_PER_MS;

	for (;;) {
		bool ready;

		pthread_mutex_lock(&ep->lock);
		gather(ep);
		ready = ep->q_len > 0;
		pthread_mutex_unlock(&ep->lock);
		if (ready)
			return 0;
		if (xp_mono_ns() >= until)
			return -ETIMEDOUT;
		sleep_once(ep, until);
	}
}

static int ip_fd(struct pcm_tp_endpoint *base)
{
	struct ip_ep *ep = ep_of(base);

	if (ep->inline_progress)
		return pcm_tp_set_error(-EOPNOTSUPP,
					"inline progress: no fd (completions need pcm_tp_poll())");
	xp_wake_arm(&ep->waiter.waiting); /* armed: the next publication writes it */
	return ep->waiter.efd;
}

const struct pcm_tp_backend_ops pcm_tp_inproc_ops = {
	.name = "inproc",
	.endpoint_open = ip_endpoint_open,
	.endpoint_close = ip_endpoint_close,
	.listen = ip_listen,
	.connect = ip_connect,
	.accept = ip_accept,
	.limits = ip_limits,
	.conn_close = ip_conn_close,
	.conn_free = ip_conn_free,
	.conn_set_policy = ip_conn_set_policy,
	.conn_peer = ip_conn_peer,
	.conn_query = ip_conn_query,
	.region_add = ip_region_add,
	.region_alloc = ip_region_alloc,
	.region_remove = ip_region_remove,
	.post = ip_post,
	.poll = ip_poll,
	.wait = ip_wait,
	.fd = ip_fd,
};
