// SPDX-License-Identifier: MIT
/*
 * engine.c - the engine object and its loop body (engine.h): commands in,
 * datapath events in, timers, the core's actions out to the datapath,
 * completions out to the application.
 *
 * One run (xp_engine_run_once):
 *   1. publish completions that waited for ring room;
 *   2. take up to 64 commands: posts go to the core (a refused post
 *      completes at once with its error), control requests to engine_conn.c;
 *   3. poll the datapath (up to 4 x 64 events) into the core;
 *   4. run the core's timers if one is due;
 *   5. drain the core: writes in bursts of at most the datapath's free send
 *      slots, control packets one by one, completions (a receive's key is
 *      released before its completion is published: "Direct placement");
 *   6. wake the application's waiter if anything was published.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine_int.h"

void xp_engine_config_default(struct xp_engine_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	xp_core_config_default(&cfg->core);
	cfg->progress = XP_PROGRESS_THREAD;
	cfg->cmd_slots = 1024;
	cfg->comp_slots = 4096;
	cfg->max_mrs = 1024;
	cfg->spin_ns = 20000;
	cfg->cpu = -1;
	cfg->cc_flows = 1024;
	cfg->async_workers = 1;
}

/* ---- completions -------------------------------------------------------------------------- */

static int overflow_push(struct xp_engine *e, const struct xp_engine_comp *c)
{
	if (e->ov_n == e->ov_cap) {
		uint32_t cap = e->ov_cap ? e->ov_cap * 2 : 256;
		struct xp_engine_comp *a = malloc((size_t)cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		for (uint32_t i = 0; i < e->ov_n; i++)
			a[i] = e->overflow[(e->ov_head + i) % e->ov_cap];
		free(e->overflow);
		e->overflow = a;
		e->ov_cap = cap;
		e->ov_head = 0;
	}
	e->overflow[(e->ov_head + e->ov_n) % e->ov_cap] = *c;
	e->ov_n++;
	XP_ENGINE_STAT_ADD(e, overflows, 1);
	return 0;
}

/* Publish one completion; it waits in the overflow FIFO while the ring is full. */
void xp_engine_complete(struct xp_engine *e, const struct xp_engine_comp *c)
{
	XP_ENGINE_STAT_ADD(e, completions, 1);
	if (e->ov_n == 0 && xp_spsc_push(&e->comps, c) == 0) {
		e->published = true;
		return;
	}
	if (overflow_push(e, c) < 0)
		abort(); /* cannot lose a completion; out of memory here is fatal */
}

static uint32_t overflow_flush(struct xp_engine *e)
{
	uint32_t n = 0;

	while (e->ov_n && xp_spsc_push(&e->comps, &e->overflow[e->ov_head]) == 0) {
		e->ov_head = (e->ov_head + 1) % e->ov_cap;
		e->ov_n--;
		n++;
	}
	if (n)
		e->published = true;
	return n;
}

/* A send's or receive's completion: to its port, or to the ring (@via enum eng_op_via). */
static void complete_op(struct xp_engine *e, uint8_t via, struct xp_port *port, uint8_t kind,
			int status, uint32_t conn, uint64_t cookie, uint64_t bytes)
{
	struct xp_engine_comp c = { .kind = kind, .status = status, .conn = conn,
				    .cookie = cookie, .bytes = bytes };

	if (via == EOP_PORT) {
		XP_ENGINE_STAT_ADD(e, completions, 1);
		port->ops->complete(port->arg, &c);
	} else if (via == EOP_RING) {
		xp_engine_complete(e, &c);
	}
}

/* ---- operations ---------------------------------------------------------------------------- */

static int op_alloc(struct xp_engine *e, uint64_t cookie)
{
	uint32_t i = e->op_free;

	if (i == UINT32_MAX)
		return -EAGAIN;
	e->op_free = e->ops[i].next_free;
	e->ops_used++;
	e->ops[i].cookie = cookie;
	e->ops[i].has_key = false;
	return (int)i;
}

static void op_free(struct xp_engine *e, uint32_t i)
{
	e->ops[i].next_free = e->op_free;
	e->op_free = i;
	e->ops_used--;
}

static bool mr_ok(const struct xp_engine *e, uint32_t mr, uint64_t addr, uint64_t len)
{
	const struct xp_dp_mr *m;
	uint64_t base;

	if (mr >= e->n_mrs || !e->mr_used[mr])
		return false;
	m = &e->mrs[mr];
	base = (uint64_t)(uintptr_t)m->addr;
	return addr >= base && len <= m->len && addr - base <= m->len - len;
}

void xp_engine_post(struct xp_engine *e, const struct xp_cmd *c, struct xp_port *port,
		    uint64_t now)
{
	bool recv = c->op == XP_CMD_RECV;
	uint8_t kind = recv ? XP_ECOMP_RECV : XP_ECOMP_SEND;
	uint8_t via = port ? EOP_PORT : EOP_RING;
	struct xp_buf buf = { .addr = c->addr, .len = c->len };
	int op, rc;

	if (!xp_engine_conn_ok(e, c->conn) || !mr_ok(e, c->mr, c->addr, c->len)) {
		rc = !xp_engine_conn_ok(e, c->conn) ? -ENOTCONN : -EINVAL;
		goto err;
	}
	op = op_alloc(e, c->cookie);
	if (op < 0) {
		rc = op;
		goto err;
	}
	e->ops[op].via = via;
	e->ops[op].port = port;
	if (recv) {
		rc = e->dp->ops->recv_key(e->dp, &e->mrs[c->mr], c->addr, c->len, &buf.key);
		if (rc < 0)
			goto err_op;
		e->ops[op].rkey = buf.key;
		e->ops[op].has_key = true;
		rc = xp_post_recv(e->core, c->conn, &buf, (uint64_t)op, now);
	} else {
		buf.key = e->mrs[c->mr].lkey;
		rc = xp_post_send(e->core, c->conn, &buf, (uint64_t)op, now);
	}
	if (rc == 0)
		return;
	if (e->ops[op].has_key)
		e->dp->ops->recv_key_release(e->dp, e->ops[op].rkey);
err_op:
	op_free(e, (uint32_t)op);
err:
	XP_ENGINE_STAT_ADD(e, post_errors, 1);
	complete_op(e, via, port, kind, rc, c->conn, c->cookie, 0);
}

static void cmd_close(struct xp_engine *e, const struct xp_cmd *c, uint64_t now)
{
	int rc;

	if (!xp_engine_conn_ok(e, c->conn)) {
		complete_op(e, EOP_RING, NULL, XP_ECOMP_CLOSE, -ENOTCONN, c->conn, c->cookie, 0);
		return;
	}
	if (c->close_mode == XP_CLOSE_ABORT)
		e->conns[c->conn].aborted = true;
	rc = xp_conn_close(e->core, c->conn, (enum xp_close_mode)c->close_mode, now);
	e->conns[c->conn].state = ECONN_CLOSING;
	if (rc < 0 && rc != -EALREADY)
		complete_op(e, EOP_RING, NULL, XP_ECOMP_CLOSE, rc, c->conn, c->cookie, 0);
}

static void cmd_ctl(struct xp_engine *e, struct xp_ctl *ctl, uint64_t now)
{
	bool notify = ctl->notify;
	uint64_t token = ctl->token;

	ctl->diag.msg[0] = '\0';
	xp_engine_ctl(e, ctl, now);
	/* After done is set the caller may free the request: read nothing of it after. */
	if (notify) {
		struct xp_engine_comp c = { .kind = XP_ECOMP_CTL, .status = ctl->status,
					    .conn = ctl->conn, .cookie = token, .ctl = ctl };

		atomic_store_explicit(&ctl->done, 1, memory_order_release);
		xp_engine_complete(e, &c);
	} else {
		atomic_store_explicit(&ctl->done, 1, memory_order_release);
	}
}

static uint32_t take_commands(struct xp_engine *e, uint64_t now)
{
	uint32_t n = 0;

	while (n < XP_ENGINE_CMD_BURST) {
		const struct xp_cmd *p = xp_mpsc_peek(&e->cmds);
		struct xp_cmd c;

		if (!p)
			break;
		c = *p;
		xp_mpsc_release(&e->cmds);
		n++;
		switch (c.op) {
		case XP_CMD_SEND:
		case XP_CMD_RECV:
			xp_engine_post(e, &c, NULL, now);
			break;
		case XP_CMD_CLOSE:
			cmd_close(e, &c, now);
			break;
		case XP_CMD_CTL:
			cmd_ctl(e, c.ctl, now);
			break;
		default:
			break;
		}
	}
	XP_ENGINE_STAT_ADD(e, commands, n);
	return n;
}

/* ---- the datapath --------------------------------------------------------------------------- */

static uint32_t poll_datapath(struct xp_engine *e, uint64_t now)
{
	uint32_t total = 0;

	for (uint32_t round = 0; round < XP_ENGINE_POLLS; round++) {
		int n = xp_dp_poll(e->dp, e->evs, XP_ENGINE_EVENT_BURST);

		for (int i = 0; i < n; i++) {
			const struct xp_dp_event *ev = &e->evs[i];

			switch (ev->kind) {
			case XP_DP_EV_CHUNK:
				xp_core_on_chunk(e->core, ev->imm, ev->len, ev->path, ev->ecn_ce,
						 now);
				break;
			case XP_DP_EV_CTRL:
				xp_core_on_ctrl(e->core, ev->peer, ev->bytes, ev->len, now);
				break;
			case XP_DP_EV_WRITE_DONE:
				xp_core_on_write_done(e->core, ev->token, ev->status, now);
				break;
			default:
				break;
			}
		}
		if (n <= 0)
			break;
		total += (uint32_t)n;
		if (n < XP_ENGINE_EVENT_BURST)
			break;
	}
	XP_ENGINE_STAT_ADD(e, events, total);
	return total;
}

static void on_core_completion(struct xp_engine *e, const struct xp_completion *c)
{
	struct eng_op *op;
	uint8_t kind;

	if (c->kind == XP_COMP_CLOSE) {
		xp_engine_conn_closed(e, c->conn, c->status);
		return;
	}
	op = &e->ops[c->cookie];
	kind = c->kind == XP_COMP_RECV ? XP_ECOMP_RECV : XP_ECOMP_SEND;
	if (op->has_key)
		e->dp->ops->recv_key_release(e->dp, op->rkey);
	complete_op(e, op->via, op->port, kind, c->status, c->conn, op->cookie, c->bytes);
	op_free(e, (uint32_t)c->cookie);
}

static uint32_t drain(struct xp_engine *e, uint64_t now)
{
	struct xp_batch b = { .acts = e->acts, .cap = XP_ENGINE_ACTIONS,
			      .ctrl_buf = e->ctrl_buf, .ctrl_cap = XP_ENGINE_CTRL_BUF };
	uint32_t total = 0;

	for (;;) {
		uint32_t slots = xp_dp_send_slots(e->dp), n, nw = 0;

		xp_batch_reset(&b, slots < XP_ENGINE_ACTIONS ? slots : XP_ENGINE_ACTIONS);
		n = xp_core_drain(e->core, now, &b);
		if (!n)
			break;
		total += n;
		for (uint32_t i = 0; i < b.n; i++) {
			const struct xp_action *a = &b.acts[i];

			switch (a->kind) {
			case XP_ACT_WRITE:
				e->writes[nw++] = a->u.write;
				break;
			case XP_ACT_CTRL:
				xp_dp_post_ctrl(e->dp, a->u.ctrl.peer, a->u.ctrl.bytes, a->u.ctrl.len);
				XP_ENGINE_STAT_ADD(e, ctrl_sent, 1);
				break;
			case XP_ACT_COMPLETE:
				on_core_completion(e, &a->u.comp);
				break;
			default:
				break;
			}
		}
		if (nw) {
			uint32_t posted = xp_dp_post_writes(e->dp, e->writes, nw);

			XP_ENGINE_STAT_ADD(e, writes, posted);
			XP_ENGINE_STAT_ADD(e, writes_dropped, nw - posted);
		}
	}
	return total;
}

static void wake_waiter(struct xp_engine *e)
{
	struct xp_waiter *w = e->cfg.waiter;

	e->published = false;
	if (!w)
		return;
	(void)xp_wake_ring(&w->waiting, w->efd); /* wake.h: paired with the waiter's arm */
}

uint32_t xp_engine_run_once(struct xp_engine *e, uint64_t now_ns)
{
	uint32_t work = 0;

	XP_ENGINE_STAT_ADD(e, runs, 1);
	work += overflow_flush(e);
	work += take_commands(e, now_ns);
	work += xp_engine_ports_intake(e, now_ns);
	work += poll_datapath(e, now_ns);
	if (now_ns >= xp_core_next_deadline(e->core)) {
		xp_core_timer(e->core, now_ns);
		work++;
	}
	work += drain(e, now_ns);
	if (e->published)
		wake_waiter(e);
	xp_engine_ports_flush(e);
	if (work)
		XP_ENGINE_STAT_ADD(e, busy_runs, 1);
	else
		XP_ENGINE_STAT_ADD(e, idle_polls, 1);
	return work;
}

uint32_t xp_engine_progress(struct xp_engine *e)
{
	uint32_t work;

	if (pthread_mutex_trylock(&e->run_lock) != 0)
		return 0;
	work = xp_engine_run_once(e, xp_dp_now_ns(e->dp));
	pthread_mutex_unlock(&e->run_lock);
	return work;
}

uint64_t xp_engine_next_deadline(const struct xp_engine *e)
{
	return xp_core_next_deadline(e->core);
}

/* ---- the application's side ----------------------------------------------------------------- */

int xp_engine_submit(struct xp_engine *e, const struct xp_cmd *cmd)
{
	if (xp_mpsc_push(&e->cmds, cmd, sizeof(*cmd)) < 0)
		return -EAGAIN;
	if (e->cfg.wake_runner) {
		e->cfg.wake_runner(e->cfg.wake_runner_arg); /* EXTERNAL: no thread of its own */
		return 0;
	}
	(void)xp_wake_ring(&e->sleeping, e->efd); /* wake.h: paired with the engine's arm */
	return 0;
}

uint32_t xp_engine_poll(struct xp_engine *e, struct xp_engine_comp *out, uint32_t max)
{
	uint32_t n = 0;

	while (n < max) {
		const struct xp_engine_comp *c = xp_spsc_peek(&e->comps);

		if (!c)
			break;
		out[n++] = *c;
		xp_spsc_release(&e->comps);
	}
	return n;
}

bool xp_engine_has_input(struct xp_engine *e)
{
	uint64_t tail = atomic_load_explicit(&e->cmds.tail, memory_order_acquire);

	return tail != e->cmds.head;
}

int xp_engine_prepare_wait(struct xp_engine *e, int *fd)
{
	int rc;

	if (pthread_mutex_trylock(&e->run_lock) != 0)
		return -EAGAIN;
	rc = e->dp->ops->arm(e->dp);
	if (rc == 0 && (e->ov_n || xp_engine_has_input(e)))
		rc = -EAGAIN;
	*fd = e->dp->ops->wait_fd(e->dp);
	pthread_mutex_unlock(&e->run_lock);
	return rc;
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static int check_config(const struct xp_engine_config *cfg, struct pcm_diag *diag)
{
	const char *bad = NULL;

	if (!cfg->dp_ops)
		bad = "no datapath";
	else if (cfg->cmd_slots < 2 || (cfg->cmd_slots & (cfg->cmd_slots - 1)))
		bad = "cmd_slots is not a power of two";
	else if (cfg->comp_slots < 2 || (cfg->comp_slots & (cfg->comp_slots - 1)))
		bad = "comp_slots is not a power of two";
	else if (!cfg->max_mrs || !cfg->cc_flows)
		bad = "max_mrs and cc_flows must be positive";
	else if (cfg->progress > XP_PROGRESS_EXTERNAL)
		bad = "unknown progress mode";
	else if (cfg->wake_runner && cfg->progress != XP_PROGRESS_EXTERNAL)
		bad = "wake_runner is for EXTERNAL progress only";
	if (bad) {
		snprintf(diag->msg, sizeof(diag->msg), "engine %u: %s", cfg->index, bad);
		return -EINVAL;
	}
	return 0;
}

/* The core's configuration, adjusted to the datapath. */
static void core_config(struct xp_engine *e, struct xp_core_config *c)
{
	*c = e->cfg.core;
	c->ctrl_mtu = e->info.ctrl_mtu;
	if (e->info.line_rate_bps)
		c->line_rate_bps = e->info.line_rate_bps;
	if (c->rto_min_ns < e->info.rto_min_ns)
		c->rto_min_ns = e->info.rto_min_ns;
	if (c->rto_initial_ns < c->rto_min_ns)
		c->rto_initial_ns = c->rto_min_ns;
	if (c->chunk_bytes > e->info.max_write_bytes)
		c->chunk_bytes = e->info.max_write_bytes;
	if (c->min_chunk_bytes > c->chunk_bytes)
		c->min_chunk_bytes = c->chunk_bytes;
	c->now_ns = xp_dp_now_ns(e->dp);
	c->seed ^= ((uint64_t)e->cfg.index + 1) * 0x9e3779b97f4a7c15ull;
}

/*
 * Everything the engine allocates, opened by the thread that will run it
 * (THREAD: the engine's own, placed first, so first-touch puts it on the
 * NIC's node).
 */
int xp_engine_init_state(struct xp_engine *e, struct pcm_diag *diag)
{
	struct xp_core_config cc;
	int rc;

	rc = xp_dp_open(e->cfg.dp_ops, &e->cfg.dp, &e->dp, diag);
	if (rc < 0)
		return rc;
	xp_dp_info(e->dp, &e->info);
	e->node = xp_place_node(e->info.numa_node);
	if (e->cfg.progress == XP_PROGRESS_THREAD)
		xp_place_thread(e->node, e->cfg.cpu);
	core_config(e, &cc);
	rc = xp_core_create(&cc, &e->core);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "engine %u: the core's configuration: %s",
			 e->cfg.index, strerror(-rc));
		return rc;
	}
	e->cfg.core = cc;
	xp_cc_table_init(&e->cc, pcm_target_find(e->info.target), e->cfg.cc_flows,
			 e->cfg.async_workers);
	e->cc.numa_node = e->node;
	e->cc.room_for = e->cfg.cc_room_for;
	if (e->cfg.progress != XP_PROGRESS_THREAD)
		e->cc.async_workers = 0; /* nobody else's thread: run the handlers inline */
	rc = xp_mpsc_init(&e->cmds, e->cfg.cmd_slots, sizeof(struct xp_cmd));
	if (rc == 0)
		rc = xp_spsc_init(&e->comps, e->cfg.comp_slots, sizeof(struct xp_engine_comp));
	if (rc < 0)
		goto nomem;
	e->conns = calloc(cc.max_conns, sizeof(*e->conns));
	e->n_ops = cc.ops;
	e->ops = calloc(e->n_ops, sizeof(*e->ops));
	e->n_mrs = e->cfg.max_mrs;
	e->mrs = calloc(e->n_mrs, sizeof(*e->mrs));
	e->mr_used = calloc(e->n_mrs, sizeof(*e->mr_used));
	e->acts = calloc(XP_ENGINE_ACTIONS, sizeof(*e->acts));
	e->ctrl_buf = malloc(XP_ENGINE_CTRL_BUF);
	e->writes = calloc(XP_ENGINE_ACTIONS, sizeof(*e->writes));
	e->evs = calloc(XP_ENGINE_EVENT_BURST, sizeof(*e->evs));
	if (!e->conns || !e->ops || !e->mrs || !e->mr_used || !e->acts || !e->ctrl_buf ||
	    !e->writes || !e->evs)
		goto nomem;
	for (uint32_t i = 0; i < e->n_ops; i++)
		e->ops[i].next_free = i + 1 < e->n_ops ? i + 1 : UINT32_MAX;
	e->op_free = 0;
	return 0;
nomem:
	snprintf(diag->msg, sizeof(diag->msg), "engine %u: out of memory", e->cfg.index);
	return -ENOMEM;
}

void xp_engine_fini_state(struct xp_engine *e)
{
	if (e->conns)
		xp_engine_conn_release_all(e);
	for (uint32_t i = 0; e->mr_used && i < e->n_mrs; i++)
		if (e->mr_used[i])
			e->dp->ops->mr_dereg(e->dp, &e->mrs[i]);
	/* Answer control requests nobody will run. */
	while (e->cmds.slots) {
		struct xp_cmd *c = xp_mpsc_peek(&e->cmds);

		if (!c)
			break;
		if (c->op == XP_CMD_CTL) {
			c->ctl->status = -ESHUTDOWN;
			atomic_store_explicit(&c->ctl->done, 1, memory_order_release);
		}
		xp_mpsc_release(&e->cmds);
	}
	xp_core_destroy(e->core);
	e->core = NULL;
	xp_cc_table_fini(&e->cc);
	xp_dp_close(e->dp);
	e->dp = NULL;
	xp_mpsc_fini(&e->cmds);
	xp_spsc_fini(&e->comps);
	free(e->conns);
	free(e->ops);
	free(e->mrs);
	free(e->mr_used);
	free(e->acts);
	free(e->ctrl_buf);
	free(e->writes);
	free(e->evs);
	free(e->overflow);
	free(e->ports);
	e->conns = NULL;
}

int xp_engine_create(const struct xp_engine_config *cfg, struct xp_engine **out,
		     struct pcm_diag *diag)
{
	struct xp_engine *e;
	int rc = check_config(cfg, diag);

	if (rc < 0)
		return rc;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->cfg = *cfg;
	e->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&e->run_lock, NULL);
	if (e->efd < 0) {
		rc = -errno;
		snprintf(diag->msg, sizeof(diag->msg), "engine %u: eventfd: %s", cfg->index,
			 strerror(errno));
		goto err_free;
	}
	if (cfg->progress == XP_PROGRESS_THREAD) {
		sem_init(&e->started, 0, 0);
		rc = -pthread_create(&e->thread, NULL, xp_engine_thread_main, e);
		if (rc < 0) {
			snprintf(diag->msg, sizeof(diag->msg), "engine %u: pthread_create: %s",
				 cfg->index, strerror(-rc));
			sem_destroy(&e->started);
			goto err_free;
		}
		while (sem_wait(&e->started) < 0)
			;
		sem_destroy(&e->started);
		rc = e->start_rc;
		if (rc < 0) {
			pthread_join(e->thread, NULL);
			*diag = e->start_diag;
			goto err_free; /* the thread freed its state */
		}
		e->has_thread = true;
	} else {
		rc = xp_engine_init_state(e, diag);
		if (rc < 0) {
			xp_engine_fini_state(e);
			goto err_free;
		}
	}
	*out = e;
	return 0;

err_free:
	if (e->efd >= 0)
		close(e->efd);
	pthread_mutex_destroy(&e->run_lock);
	free(e);
	return rc;
}

void xp_engine_destroy(struct xp_engine *e)
{
	uint64_t one = 1;

	if (!e)
		return;
	if (e->has_thread) {
		atomic_store(&e->stop, 1);
		if (write(e->efd, &one, sizeof(one)) < 0) {
			/* saturated: the thread wakes anyway */
		}
		pthread_join(e->thread, NULL);
	}
	xp_engine_fini_state(e);
	close(e->efd);
	pthread_mutex_destroy(&e->run_lock);
	free(e);
}

/* ---- introspection --------------------------------------------------------------------------- */

struct xp_dp *xp_engine_dp(struct xp_engine *e)
{
	return e->dp;
}

struct xp_core *xp_engine_core(struct xp_engine *e)
{
	return e->core;
}

void xp_engine_stats(const struct xp_engine *e, struct xp_engine_stats *st)
{
	const uint64_t *src = (const uint64_t *)&e->st;
	uint64_t *dst = (uint64_t *)st;

	/* every member is a u64 counter; each read atomically (the engine's thread counts) */
	_Static_assert(sizeof(*st) % sizeof(uint64_t) == 0, "xp_engine_stats: u64 members only");
	for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void xp_engine_memory(const struct xp_engine *e, struct xp_engine_memory *m)
{
	size_t per_conn = sizeof(struct eng_conn);
	uint32_t max = e->cfg.core.max_conns;

	memset(m, 0, sizeof(*m));
	m->core_total = xp_core_bytes_total(e->core);
	m->core_per_conn = xp_core_bytes_per_conn(e->core);
	/* paths: a handle per path at the default count */
	m->engine_per_conn = per_conn + XP_ENGINE_DEFAULT_PATHS * sizeof(uint32_t);
	m->engine_total = (size_t)max * per_conn + (size_t)e->n_ops * sizeof(struct eng_op) +
			  (size_t)e->n_mrs * (sizeof(struct xp_dp_mr) + 1) +
			  (size_t)e->cfg.cmd_slots * e->cmds.stride +
			  (size_t)e->cfg.comp_slots * sizeof(struct xp_engine_comp) +
			  XP_ENGINE_ACTIONS * (sizeof(struct xp_action) + sizeof(struct xp_write)) +
			  XP_ENGINE_CTRL_BUF;
	m->cc_per_flow = xp_cc_table_bytes_per_flow(&e->cc);
	m->conns = e->conns_open;
	m->max_conns = max;
}

void xp_engine_describe(const struct xp_engine *e, char *buf, size_t len)
{
	uint64_t until = atomic_load_explicit(&e->asleep_until_ns, memory_order_relaxed);
	uint64_t now = xp_mono_ns();
	struct xp_engine_stats st;
	char asleep[64];

	xp_engine_stats(e, &st);
	if (!e->has_thread)
		snprintf(asleep, sizeof(asleep), "no thread");
	else if (!until)
		snprintf(asleep, sizeof(asleep), "thread awake");
	else if (until == UINT64_MAX)
		snprintf(asleep, sizeof(asleep), "thread asleep, no deadline");
	else
		snprintf(asleep, sizeof(asleep), "thread asleep, deadline in %lld us",
			 (long long)(until - now) / 1000);
	snprintf(buf, len,
		 "engine %u: %s, sleeping flag %d; commands %llu submitted, %llu taken; "
		 "completions %llu published, %llu taken, %llu overflowed; runs %llu, sleeps %llu, "
		 "events %llu, writes %llu, ctrl %llu, post errors %llu",
		 e->cfg.index, asleep, atomic_load(&e->sleeping),
		 (unsigned long long)atomic_load(&e->cmds.tail), (unsigned long long)st.commands,
		 (unsigned long long)atomic_load(&e->comps.tail),
		 (unsigned long long)atomic_load(&e->comps.head), (unsigned long long)st.overflows,
		 (unsigned long long)st.runs, (unsigned long long)st.sleeps,
		 (unsigned long long)st.events, (unsigned long long)st.writes,
		 (unsigned long long)st.ctrl_sent, (unsigned long long)st.post_errors);
}

bool xp_engine_idle(const struct xp_engine *e)
{
	struct xp_core_usage u;

	xp_core_usage(e->core, &u);
	return e->conns_open == 0 && e->ov_n == 0 && u.conns_open == 0 &&
	       u.conns_quarantined == 0 && u.ops == 0 && u.send_msgs == 0 && u.recv_msgs == 0 &&
	       u.in_flight_bytes == 0 && u.timers_armed == 0 && u.paced == 0 &&
	       u.completions_pending == 0 && e->ops_used == 0;
}
