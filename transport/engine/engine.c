// SPDX-License-Identifier: MIT
/*
 * engine.c - the engine object (engine.h): its configuration, creation and
 * destruction, the application's side of its rings (submit, poll, prepare
 * to wait), and introspection.
 *
 * The engine's files, one concept each; a file calls only files below it:
 *   engine.c         this file: create, destroy (and the teardown at process exit), submit,
 *                    poll;
 *   engine_thread.c  THREAD progress: the engine's own thread and its sleep;
 *   engine_state.c   what an engine allocates (datapath, core, rings, tables);
 *   engine_run.c     the loop body, xp_engine_run_once();
 *   engine_conn.c    control requests: regions, a connection's setup and end;
 *   port.c           the port table (port.h);
 *   engine_op.c      operations: posts to the core and their completions;
 *   engine_comp.c    completions to the application (ring and overflow FIFO).
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

/* ---- the application's side ----------------------------------------------------------------- */

int xp_engine_submit(struct xp_engine *e, const struct xp_cmd *cmd)
{
	if (xp_mpsc_push(&e->cmds, cmd, sizeof(*cmd)) < 0)
		return -EAGAIN;
	if (e->cfg.wake_runner) {
		e->cfg.wake_runner(e->cfg.wake_runner_arg); /* EXTERNAL: no thread of its own */
		return 0;
	}
	(void)xp_wake_ring(&e->sleeping, e->efd); /* xp_wake.h: paired with the engine's arm */
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

uint64_t xp_engine_next_deadline(const struct xp_engine *e)
{
	return xp_core_next_deadline(e->core);
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

/*
 * The process's live engines: when it exits with some alive (an application that never
 * closed its endpoint), each still resets its peers, so that they learn of it at once.
 */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xp_engine *live_engines;
static pthread_once_t exit_hook_once = PTHREAD_ONCE_INIT;

/* Stop @e's runner (its thread; an INLINE engine's lock), then reset its peers. */
static void teardown_at_exit(struct xp_engine *e)
{
	if (e->pid != getpid() || e->torn_down || e->cfg.progress == XP_PROGRESS_EXTERNAL)
		return; /* a fork's copy, done already, or a driver's (softnic: in-process peers) */
	if (e->has_thread) {
		xp_engine_thread_stop(e);
		e->has_thread = false;
	} else if (pthread_mutex_trylock(&e->run_lock) != 0) {
		return; /* another thread is running it as the process exits */
	}
	xp_engine_reset_peers(e);
	if (e->cfg.progress == XP_PROGRESS_INLINE)
		pthread_mutex_unlock(&e->run_lock);
}

static void at_exit(void)
{
	pthread_mutex_lock(&live_lock);
	for (struct xp_engine *e = live_engines; e; e = e->live_next)
		teardown_at_exit(e);
	pthread_mutex_unlock(&live_lock);
}

static void install_exit_hook(void)
{
	atexit(at_exit);
}

static void live_add(struct xp_engine *e)
{
	pthread_once(&exit_hook_once, install_exit_hook);
	e->pid = getpid();
	pthread_mutex_lock(&live_lock);
	e->live_next = live_engines;
	live_engines = e;
	pthread_mutex_unlock(&live_lock);
}

static void live_remove(struct xp_engine *e)
{
	pthread_mutex_lock(&live_lock);
	for (struct xp_engine **p = &live_engines; *p; p = &(*p)->live_next)
		if (*p == e) {
			*p = e->live_next;
			break;
		}
	pthread_mutex_unlock(&live_lock);
}

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
		rc = xp_engine_thread_start(e, diag);
		if (rc < 0)
			goto err_free;
	} else {
		rc = xp_engine_init_state(e, diag);
		if (rc < 0) {
			xp_engine_fini_state(e);
			goto err_free;
		}
	}
	live_add(e);
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
	if (!e)
		return;
	live_remove(e);
	if (e->has_thread)
		xp_engine_thread_stop(e);
	if (e->core)
		xp_engine_reset_peers(e);
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
