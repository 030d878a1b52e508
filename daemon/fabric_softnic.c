// SPDX-License-Identifier: MIT
/*
 * fabric_softnic.c - pcmd's embedded softnic fabric and its thread
 * (fabric_softnic.h says how time and sleeping work).
 *
 * Requests (attach, detach) come from pcmd's loop one at a time: the loop
 * publishes one under the lock, kicks the thread, and waits on the condition
 * variable; the thread serves it between two rounds of the engines, so the
 * world is never touched by two threads. Waking is the engines' own scheme
 * (engine_thread.c): the thread announces that it sleeps with an atomic
 * exchange, then looks at the engines' command rings and the request once
 * more; a submitter publishes its command, then reads the flag with an RMW
 * (pcmd_fabric_kick()), so one of them always sees the other. The clients'
 * submission rings (their engines' ports) are armed in that same window
 * (pcmd_region.h's WAKE flag: set, fence, look again), and the clients ring this
 * thread's eventfd, so a descriptor published after the look wakes it.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "fabric_softnic.h"
#include "log.h"
#include "port.h"
#include "softnic_driver.h"
#include "xp_wake.h"
#include "uet.h"

enum fabric_op {
	FABRIC_ATTACH = 1,
	FABRIC_DETACH = 2,
};

struct fabric_req {
	uint32_t op; /* enum fabric_op */
	uint32_t host;
	const struct xp_engine_config *ec;
	struct xp_engine *engine;
	struct pcm_diag diag;
	int rc;
	bool done;
};

struct pcmd_fabric {
	struct xp_softnic_world *w;
	uint32_t n_hosts;
	struct xp_engine **by_host; /* the fabric thread's; NULL: the host is free */
	struct xp_engine **run;	    /* the attached engines, dense, for the driver */
	uint32_t n_run;
	uint64_t wall0_ns; /* CLOCK_MONOTONIC at virtual time 0 */
	_Atomic uint64_t now_ns;

	pthread_t thread;
	int efd;
	_Atomic int sleeping;
	_Atomic int stop;
	_Atomic int pending; /* req is set */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fabric_req *req;
};

/* ---- the thread ---------------------------------------------------------------------------- */

static void serve_attach(struct pcmd_fabric *f, struct fabric_req *r)
{
	uint32_t host = r->ec->dp.host;

	if (host >= f->n_hosts || f->by_host[host]) {
		snprintf(r->diag.msg, sizeof(r->diag.msg), "host%u %s", host,
			 host < f->n_hosts ? "is attached already" : "is not on the fabric");
		r->rc = host < f->n_hosts ? -EADDRINUSE : -EINVAL;
		return;
	}
	r->rc = xp_engine_create(r->ec, &r->engine, &r->diag);
	if (r->rc < 0)
		return;
	f->by_host[host] = r->engine;
	f->run[f->n_run++] = r->engine;
}

static void serve_detach(struct pcmd_fabric *f, struct fabric_req *r)
{
	struct xp_engine *e = r->host < f->n_hosts ? f->by_host[r->host] : NULL;

	if (!e) {
		r->rc = -ENOENT;
		return;
	}
	for (uint32_t i = 0; i < f->n_run; i++)
		if (f->run[i] == e) {
			f->run[i] = f->run[--f->n_run];
			break;
		}
	f->by_host[r->host] = NULL;
	xp_engine_destroy(e);
	r->rc = 0;
}

static void serve_request(struct pcmd_fabric *f)
{
	struct fabric_req *r;

	if (!atomic_load_explicit(&f->pending, memory_order_acquire))
		return;
	pthread_mutex_lock(&f->lock);
	r = f->req;
	if (r) {
		if (r->op == FABRIC_ATTACH)
			serve_attach(f, r);
		else
			serve_detach(f, r);
		r->done = true;
		f->req = NULL;
		atomic_store(&f->pending, 0);
		pthread_cond_broadcast(&f->cond);
	}
	pthread_mutex_unlock(&f->lock);
}

static bool has_input(struct pcmd_fabric *f)
{
	if (atomic_load(&f->pending) || atomic_load(&f->stop))
		return true;
	for (uint32_t i = 0; i < f->n_run; i++)
		if (xp_engine_has_input(f->run[i]))
			return true;
	/* Ports last: each arms its client's doorbell (this thread's efd), then looks again. */
	for (uint32_t i = 0; i < f->n_run; i++)
		if (xp_engine_ports_arm(f->run[i]))
			return true;
	return false;
}

/* Sleep until kicked or for @wait_ns (UINT64_MAX: until kicked). */
static void fabric_sleep(struct pcmd_fabric *f, uint64_t wait_ns)
{
	struct pollfd pfd = {.fd = f->efd, .events = POLLIN};
	struct timespec ts, *tsp = NULL;
	uint64_t v;

	xp_wake_arm(&f->sleeping);
	if (has_input(f)) {
		atomic_store(&f->sleeping, 0);
		return;
	}
	if (wait_ns != UINT64_MAX) {
		ts.tv_sec = (time_t)(wait_ns / 1000000000ull);
		ts.tv_nsec = (long)(wait_ns % 1000000000ull);
		tsp = &ts;
	}
	(void)ppoll(&pfd, 1, tsp, NULL);
	atomic_store(&f->sleeping, 0);
	if (read(f->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: woken by the timeout */
	}
}

static void advance(struct pcmd_fabric *f, uint64_t t_ns)
{
	if (xp_softnic_advance(f->w, t_ns) < 0) {
		pcmd_err("softnic fabric: out of memory in the emulation");
		abort(); /* the world cannot lose a packet it holds */
	}
	atomic_store_explicit(&f->now_ns, xp_softnic_now_ns(f->w), memory_order_relaxed);
}

/*
 * After a round without work (or too many at one instant): advance to the
 * next instant if the wall clock has reached it, else sleep until it (or a
 * kick) and advance to the wall clock's time, capped at that instant.
 */
static void next_instant(struct pcmd_fabric *f, uint64_t now, bool busy)
{
	uint64_t next = xp_softnic_next_instant(f->w, f->run, f->n_run);
	uint64_t wall = pcmd_now_ns() - f->wall0_ns;

	if (next != UINT64_MAX && next <= now)
		next = now + 1;
	if (busy) /* work at one instant without end: force time on */
		next = now + 1;
	if (next <= wall) {
		advance(f, next);
		return;
	}
	fabric_sleep(f, next == UINT64_MAX ? UINT64_MAX : next - wall);
	wall = pcmd_now_ns() - f->wall0_ns;
	if (wall > now)
		advance(f, wall < next ? wall : next);
}

static void *fabric_main(void *arg)
{
	struct pcmd_fabric *f = arg;
	uint32_t rounds = 0;

	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		uint64_t now = xp_softnic_now_ns(f->w);
		uint32_t work;

		serve_request(f);
		work = xp_softnic_run_round(f->run, f->n_run, now);
		if (work && ++rounds < XP_SOFTNIC_SAME_INSTANT_ROUNDS)
			continue;
		rounds = 0;
		next_instant(f, now, work != 0);
	}
	return NULL;
}

/* ---- requests ------------------------------------------------------------------------------ */

static void request(struct pcmd_fabric *f, struct fabric_req *r)
{
	pthread_mutex_lock(&f->lock);
	f->req = r;
	atomic_store_explicit(&f->pending, 1, memory_order_release);
	pthread_mutex_unlock(&f->lock);
	pcmd_fabric_kick(f);
	pthread_mutex_lock(&f->lock);
	while (!r->done)
		pthread_cond_wait(&f->cond, &f->lock);
	pthread_mutex_unlock(&f->lock);
}

int pcmd_fabric_attach(struct pcmd_fabric *f, const struct xp_engine_config *ec,
		       struct xp_engine **out, struct pcm_diag *diag)
{
	struct fabric_req r = {.op = FABRIC_ATTACH, .ec = ec};

	request(f, &r);
	if (r.rc < 0) {
		*diag = r.diag;
		return r.rc;
	}
	*out = r.engine;
	return 0;
}

void pcmd_fabric_detach(struct pcmd_fabric *f, uint32_t host)
{
	struct fabric_req r = {.op = FABRIC_DETACH, .host = host};

	request(f, &r);
	if (r.rc < 0)
		pcmd_err("softnic fabric: host%u was not attached", host);
}

void pcmd_fabric_kick(struct pcmd_fabric *f)
{
	(void)xp_wake_ring(&f->sleeping, f->efd); /* wake.h: paired with fabric_sleep() */
}

int pcmd_fabric_doorbell_fd(const struct pcmd_fabric *f)
{
	return f->efd;
}

uint32_t pcmd_fabric_hosts(const struct pcmd_fabric *f)
{
	return f->n_hosts;
}

void *pcmd_fabric_world(struct pcmd_fabric *f)
{
	return f->w;
}

uint64_t pcmd_fabric_now_ns(const struct pcmd_fabric *f)
{
	return atomic_load_explicit(&f->now_ns, memory_order_relaxed);
}

/* ---- create and destroy -------------------------------------------------------------------- */

/* The built-in fabric: datapath.softnic.hosts hosts on one switch at link_gbps. */
static struct uet_scenario *builtin_topology(const struct pcmd_config *cfg)
{
	struct uet_scenario *scn = calloc(1, sizeof(*scn));
	uint64_t rate = (uint64_t)cfg->datapath.softnic_link_gbps * 1000000000ull;

	if (!scn)
		return NULL;
	uet_scenario_defaults(scn);
	snprintf(scn->name, sizeof(scn->name), "pcmd");
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "none");
	scn->topo.kind = UET_TOPO_INCAST;
	scn->topo.senders = cfg->datapath.softnic_hosts - 1;
	scn->topo.link_rate_bps = rate;
	scn->nic.data_rate_bps = rate;
	return scn;
}

static int load_topology(const struct pcmd_config *cfg, struct uet_scenario **out, char *err,
			 size_t err_len)
{
	struct pcmd_cfg_loc loc = pcmd_config_key_loc(cfg, "datapath.softnic.topology");
	struct pcm_diag diag = {0};
	char where[PCMD_CFG_PATH_MAX + 32];
	int rc;

	if (!cfg->datapath.softnic_topology[0]) {
		*out = builtin_topology(cfg);
		return *out ? 0 : -ENOMEM;
	}
	rc = uet_scenario_load(cfg->datapath.softnic_topology, out, &diag);
	if (rc < 0)
		snprintf(err, err_len, "%s: datapath.softnic.topology: %s",
			 pcmd_config_where(cfg, &loc, where, sizeof(where)),
			 diag.msg[0] ? diag.msg : strerror(-rc));
	return rc;
}

static int start_thread(struct pcmd_fabric *f)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = -pthread_create(&f->thread, NULL, fabric_main, f);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static void fabric_free(struct pcmd_fabric *f)
{
	for (uint32_t i = 0; i < f->n_run; i++)
		xp_engine_destroy(f->run[i]);
	xp_softnic_world_destroy(f->w);
	if (f->efd >= 0)
		close(f->efd);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	free(f->by_host);
	free(f->run);
	free(f);
}

int pcmd_fabric_create(const struct pcmd_config *cfg, struct pcmd_fabric **out, char *err,
		       size_t err_len)
{
	struct pcmd_fabric *f = calloc(1, sizeof(*f));
	struct xp_softnic_config sc = {.seed = cfg->datapath.softnic_seed,
				       .dup_ppm = cfg->datapath.softnic_dup_ppm,
				       .delay_ppm = cfg->datapath.softnic_delay_ppm,
				       .delay_ns = (uint64_t)cfg->datapath.softnic_delay_us * 1000};
	struct uet_scenario *scn = NULL;
	struct pcm_diag diag = {0};
	int rc;

	if (!f)
		return -ENOMEM;
	f->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	rc = f->efd < 0 ? -errno : load_topology(cfg, &scn, err, err_len);
	if (rc == 0) {
		sc.scn = scn;
		rc = xp_softnic_world_create(&sc, &f->w, &diag);
		if (rc < 0)
			snprintf(err, err_len, "datapath.softnic: the emulated fabric: %s",
				 diag.msg[0] ? diag.msg : strerror(-rc));
	}
	uet_scenario_free(scn);
	if (rc == 0) {
		f->n_hosts = uet_sim_n_hosts(xp_softnic_sim(f->w));
		f->by_host = calloc(f->n_hosts, sizeof(*f->by_host));
		f->run = calloc(f->n_hosts, sizeof(*f->run));
		rc = f->by_host && f->run ? 0 : -ENOMEM;
	}
	if (rc == 0) {
		f->wall0_ns = pcmd_now_ns();
		rc = start_thread(f);
		if (rc < 0)
			snprintf(err, err_len, "softnic fabric: pthread_create: %s", strerror(-rc));
	}
	if (rc < 0) {
		fabric_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

void pcmd_fabric_destroy(struct pcmd_fabric *f)
{
	uint64_t one = 1;

	if (!f)
		return;
	atomic_store(&f->stop, 1);
	if (write(f->efd, &one, sizeof(one)) < 0) {
		/* saturated: the thread wakes anyway */
	}
	pthread_join(f->thread, NULL);
	pcmd_info("softnic fabric: stopped at %.3f s of emulated time after %.3f s of wall time",
		  (double)xp_softnic_now_ns(f->w) / 1e9,
		  (double)(pcmd_now_ns() - f->wall0_ns) / 1e9);
	fabric_free(f);
}
