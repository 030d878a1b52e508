// SPDX-License-Identifier: MIT
/*
 * nccl_ctx.c - the plugin's context in a process: its settings (from the environment), its one
 * libpcmtransport endpoint, the lock every NCCL call takes, logging through NCCL's logger, the
 * lanes (each connection's posts in order), and progress.
 *
 * NCCL (v8 to v10) initializes a net plugin once per process and never finalizes it, so the
 * endpoint lives as long as the process: in daemon mode it is this process's client of pcmd
 * (one emulated host on pcmd's softnic fabric), in process it runs the library's own engines.
 *
 * Progress is driven by NCCL's calls (test, isend, irecv, connect, accept): each one posts what
 * waits in the lanes and takes the completions ready, running each operation's handler. No
 * thread of the plugin's own runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "nccl_pcm.h"

#define POLL_BATCH 32
#define POLL_ROUNDS 8 /* batches taken per progress call at most */
#define DEFAULT_REGION_MB 128u
#define MAX_REGION_MB 65536u

struct pcmn_ctx pcmn_ctx = { .lock = PTHREAD_MUTEX_INITIALIZER };

void pcmn_lock(void)
{
	pthread_mutex_lock(&pcmn_ctx.lock);
}

void pcmn_unlock(void)
{
	pthread_mutex_unlock(&pcmn_ctx.lock);
}

void pcmn_log(ncclDebugLogLevel level, const char *func, int line, const char *fmt, ...)
{
	ncclDebugLogger_t log = __atomic_load_n(&pcmn_ctx.log, __ATOMIC_ACQUIRE);
	char text[512];
	va_list ap;

	if (!log)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log(level, NCCL_NET, func, line, "NET/pcm: %s", text);
}

ncclResult_t pcmn_result(int err)
{
	switch (err) {
	case 0:
		return ncclSuccess;
	case -ECONNRESET:
	case -ECONNREFUSED:
	case -ESHUTDOWN:
		return ncclRemoteError;
	case -EMSGSIZE:
		return ncclInvalidUsage;
	default:
		return ncclSystemError;
	}
}

/* ---- settings ----------------------------------------------------------------------------- */

static int copy_setting(const char *name, const char *value, char *out, size_t cap)
{
	if (strlen(value) >= cap) {
		PCMN_WARN("$%s (%s) is longer than %zu characters", name, value, cap - 1);
		return -EINVAL;
	}
	snprintf(out, cap, "%s", value);
	return 0;
}

static int read_region_mb(struct pcmn_settings *s)
{
	const char *v = getenv("PCM_NCCL_REGION_MB");
	unsigned long mb = DEFAULT_REGION_MB;
	char *end;

	if (v) {
		errno = 0;
		mb = strtoul(v, &end, 10);
		if (errno || end == v || *end || mb < 1 || mb > MAX_REGION_MB) {
			PCMN_WARN("$PCM_NCCL_REGION_MB=%s: want 1 .. %u (MiB of pcmd's shared region)",
				  v, MAX_REGION_MB);
			return -EINVAL;
		}
	}
	s->region_bytes = (size_t)mb << 20;
	return 0;
}

static int read_settings(struct pcmn_settings *s)
{
	const char *backend = getenv("PCM_NCCL_BACKEND");
	const char *datapath = getenv("PCM_NCCL_DATAPATH");
	const char *policy = getenv("PCM_NCCL_POLICY");

	memset(s, 0, sizeof(*s));
	if (!backend || !*backend || strcmp(backend, "daemon") == 0) {
		s->backend = PCMN_BACKEND_DAEMON;
	} else if (strcmp(backend, "inproc") == 0) {
		s->backend = PCMN_BACKEND_INPROC;
	} else {
		PCMN_WARN("$PCM_NCCL_BACKEND=%s: want daemon (through pcmd, the default) or inproc",
			  backend);
		return -EINVAL;
	}
	if (copy_setting("PCM_NCCL_DATAPATH", datapath && *datapath ? datapath : "null",
			 s->datapath, sizeof(s->datapath)) < 0 ||
	    copy_setting("PCM_NCCL_POLICY", policy ? policy : "", s->policy, sizeof(s->policy)) < 0)
		return -EINVAL;
	return read_region_mb(s);
}

/* ---- the endpoint --------------------------------------------------------------------------- */

static int open_endpoint(struct pcmn_ctx *x)
{
	struct pcm_tp_config cfg = {
		.backend = x->set.backend == PCMN_BACKEND_DAEMON ? PCM_TP_BACKEND_DAEMON
								   : PCM_TP_BACKEND_INPROC,
		.datapath = x->set.datapath,
		.daemon_region_bytes = x->set.region_bytes,
		.policy = x->set.policy[0] ? x->set.policy : NULL,
	};
	const char *sock = getenv("PCMD_SOCKET");
	int rc = pcm_tp_endpoint_open(&cfg, &x->ep);

	if (rc < 0) {
		if (x->set.backend == PCMN_BACKEND_DAEMON)
			PCMN_WARN("no endpoint through pcmd at %s with a region of %zu MiB: %s (%s); "
				  "is pcmd running there (PCMD_SOCKET), does it allow the region "
				  "(PCM_NCCL_REGION_MB)? PCM_NCCL_BACKEND=inproc needs no pcmd",
				  sock && *sock ? sock : "/run/pcmd/pcmd.sock",
				  x->set.region_bytes >> 20, pcm_tp_strerror(rc),
				  pcm_tp_last_error());
		else
			PCMN_WARN("cannot open an in-process endpoint on datapath '%s': %s (%s)",
				  x->set.datapath, pcm_tp_strerror(rc), pcm_tp_last_error());
		x->ep = NULL;
	}
	return rc;
}

/* The address every listen() of this process shares: unique on one pcmd, or in one process. */
static void make_addr(struct pcmn_ctx *x)
{
	uint32_t nonce = 0;

	if (getrandom(&nonce, sizeof(nonce), GRND_NONBLOCK) != sizeof(nonce))
		nonce = (uint32_t)(uintptr_t)x ^ (uint32_t)getpid();
	snprintf(x->addr, sizeof(x->addr), "nccl-pcm.%ld.%08" PRIx32, (long)getpid(), nonce);
}

int pcmn_ctx_init(ncclDebugLogger_t log)
{
	struct pcmn_ctx *x = &pcmn_ctx;
	int rc;

	__atomic_store_n(&x->log, log, __ATOMIC_RELEASE); /* logging reads it without the lock */
	if (x->ready)
		return 0;
	rc = read_settings(&x->set);
	if (rc < 0)
		return rc;
	rc = open_endpoint(x);
	if (rc < 0)
		return rc;
	make_addr(x);
	x->max_msg_bytes = PCMN_MAX_MSG_BYTES;
	if (x->set.backend == PCMN_BACKEND_DAEMON && x->set.region_bytes / 4 < x->max_msg_bytes)
		x->max_msg_bytes = x->set.region_bytes / 4; /* a message is staged whole */
	x->ready = true;
	PCMN_INFO("backend %s%s%s, largest message %zu bytes, listening as %s once asked",
		  x->set.backend == PCMN_BACKEND_DAEMON ? "daemon (pcmd)" : "inproc, datapath ",
		  x->set.backend == PCMN_BACKEND_DAEMON ? "" : x->set.datapath,
		  x->set.policy[0] ? ", policy from $PCM_NCCL_POLICY" : "", x->max_msg_bytes,
		  x->addr);
	return 0;
}

/* ---- lanes ---------------------------------------------------------------------------------- */

void pcmn_op_fail(struct pcmn_op *op, int status)
{
	struct pcm_tp_completion c = {
		.op = op->kind == PCMN_OP_SEND ? PCM_TP_OP_SEND : PCM_TP_OP_RECV,
		.status = status,
		.cookie = (uint64_t)(uintptr_t)op,
	};

	op->done(op, &c);
}

/* Prepare and post @op; a close taken is complete at once (its handler runs). */
static int post_now(struct pcmn_lane *l, struct pcmn_op *op)
{
	uint64_t cookie = (uint64_t)(uintptr_t)op;
	int rc;

	if (op->prepare) {
		rc = op->prepare(op);
		if (rc < 0)
			return rc;
		op->prepare = NULL;
	}
	switch (op->kind) {
	case PCMN_OP_SEND:
		return pcm_tp_send(l->conn, op->mr, op->buf, op->len, cookie);
	case PCMN_OP_RECV:
		return pcm_tp_recv(l->conn, op->mr, op->buf, op->len, cookie);
	default:
		rc = pcm_tp_conn_close(l->conn);
		if (rc != -EAGAIN)
			pcmn_op_fail(op, rc);
		return rc == -EAGAIN ? rc : 0;
	}
}

int pcmn_lane_post(struct pcmn_lane *l, struct pcmn_op *op)
{
	op->next = NULL;
	if (!l->head) {
		int rc = post_now(l, op);

		if (rc != -EAGAIN)
			return rc;
	}
	if (l->tail)
		l->tail->next = op;
	else
		l->head = op;
	l->tail = op;
	if (!l->pending) {
		l->pending = true;
		l->next_pending = pcmn_ctx.pending;
		pcmn_ctx.pending = l;
	}
	return 0;
}

static void unlink_pending(struct pcmn_lane *l)
{
	for (struct pcmn_lane **p = &pcmn_ctx.pending; *p; p = &(*p)->next_pending)
		if (*p == l) {
			*p = l->next_pending;
			break;
		}
	l->pending = false;
	l->next_pending = NULL;
}

struct pcmn_op *pcmn_lane_take(struct pcmn_lane *l)
{
	struct pcmn_op *head = l->head;

	l->head = l->tail = NULL;
	if (l->pending)
		unlink_pending(l);
	return head;
}

/* Post @l's queue from its head until pcm refuses for now; a hard error fails that operation. */
static void lane_flush(struct pcmn_lane *l)
{
	while (l->head) {
		struct pcmn_op *op = l->head;
		int rc = post_now(l, op);

		if (rc == -EAGAIN)
			return;
		l->head = op->next;
		if (!l->head)
			l->tail = NULL;
		if (rc < 0)
			pcmn_op_fail(op, rc);
	}
}

/*
 * Flush every lane with a queue. A handler run from here (a post failed at once) may take
 * another lane's queue: such a lane stays allocated until pcmn_progress() reaps it, and a walk
 * cut short by it leaves the rest for the next progress.
 */
static void flush_pending(void)
{
	struct pcmn_lane **p = &pcmn_ctx.pending;

	while (*p) {
		struct pcmn_lane *l = *p;

		lane_flush(l);
		if (*p != l)
			continue;
		if (l->head) {
			p = &l->next_pending;
		} else {
			*p = l->next_pending;
			l->pending = false;
			l->next_pending = NULL;
		}
	}
}

void pcmn_defer_free(struct pcmn_reap *r)
{
	r->next = pcmn_ctx.graveyard;
	pcmn_ctx.graveyard = r;
}

static void reap(void)
{
	while (pcmn_ctx.graveyard) {
		struct pcmn_reap *r = pcmn_ctx.graveyard;

		pcmn_ctx.graveyard = r->next;
		r->fn(r);
	}
}

void pcmn_progress(void)
{
	struct pcm_tp_completion c[POLL_BATCH];

	if (!pcmn_ctx.ep)
		return;
	flush_pending();
	for (int round = 0; round < POLL_ROUNDS; round++) {
		int n = pcm_tp_poll(pcmn_ctx.ep, c, POLL_BATCH);

		if (n < 0) {
			PCMN_WARN("poll: %s (%s)", pcm_tp_strerror(n), pcm_tp_last_error());
			break;
		}
		for (int i = 0; i < n; i++) {
			struct pcmn_op *op = (struct pcmn_op *)(uintptr_t)c[i].cookie;

			/* a closed connection's last word (its close op completed when posted) */
			if (c[i].op != PCM_TP_OP_CLOSE)
				op->done(op, &c[i]);
		}
		if (n)
			flush_pending();
		if (n < POLL_BATCH)
			break;
	}
	reap();
}
