// SPDX-License-Identifier: MIT
/*
 * engine_thread.c - an engine's own thread (XP_PROGRESS_THREAD): started by
 * xp_engine_create() (engine.c), it opens everything on the NIC's node
 * (engine_state.c), then runs the loop body (engine_run.c) until stopped.
 *
 * Idle backoff: after its last work the thread busy-polls for spin_ns (a
 * command or a chunk arriving then is seen within one loop, well under a
 * microsecond), then sleeps in ppoll() on its command eventfd and the
 * datapath's wait fd, until one is readable or the core's next timer is
 * due. Sleeping is safe against lost wake-ups: the thread announces it
 * (arms `sleeping`), then re-checks the command ring and arms the datapath
 * (which refuses if events are pending); a submitter publishes its command,
 * then rings `sleeping` (xp_wake.h: a seq_cst read-modify-write on both sides),
 * so at least one of them sees the other. Ports (port.h) are armed in the same
 * window: each asks its owner for a doorbell on this thread's eventfd and
 * looks again (xp_ring.h's WAKE protocol), so a submission published after
 * the look rings the eventfd the thread is about to sleep on. The cost of
 * a wake-up from sleep is an eventfd write plus a scheduler wake-up:
 * measured by pcm-bench latency (docs/transport.md "Engines").
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine_int.h"

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void sleep_until_work(struct xp_engine *e, uint64_t now)
{
	uint64_t deadline = xp_core_next_deadline(e->core), v;
	struct pollfd pfd[2] = { { .fd = e->efd, .events = POLLIN } };
	struct timespec ts, *tsp = NULL;
	nfds_t n = 1;
	int rc;

	/*
	 * A seq_cst read-modify-write on the flag, paired with the submitter's
	 * (xp_engine_submit()): whichever comes second sees the other's side.
	 * (A fence would do on the hardware, but TSan does not model fences.)
	 */
	xp_wake_arm(&e->sleeping);
	if (xp_engine_has_input(e) || e->ov_n || atomic_load(&e->stop) ||
	    xp_engine_ports_arm(e)) {
		atomic_store(&e->sleeping, 0);
		return;
	}
	rc = e->dp->ops->arm(e->dp);
	if (rc == -EAGAIN) {
		atomic_store(&e->sleeping, 0);
		return;
	}
	if (rc == 0) {
		pfd[1] = (struct pollfd){ .fd = e->dp->ops->wait_fd(e->dp), .events = POLLIN };
		n = 2;
	}
	if (deadline != UINT64_MAX) {
		uint64_t wait = deadline > now ? deadline - now : 0;

		ts.tv_sec = (time_t)(wait / 1000000000ull);
		ts.tv_nsec = (long)(wait % 1000000000ull);
		tsp = &ts;
	} else if (rc != 0) {
		/* a datapath that cannot block: sleep briefly between polls */
		ts = (struct timespec){ 0, 50000 };
		tsp = &ts;
	}
	XP_ENGINE_STAT_ADD(e, sleeps, 1);
	atomic_store_explicit(&e->asleep_until_ns,
			      tsp ? now + (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec
				  : UINT64_MAX,
			      memory_order_relaxed);
	(void)ppoll(pfd, n, tsp, NULL);
	atomic_store_explicit(&e->asleep_until_ns, 0, memory_order_relaxed);
	atomic_store(&e->sleeping, 0);
	if (read(e->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: woken by the datapath or the timer */
	}
}

static void *thread_main(void *arg)
{
	struct xp_engine *e = arg;
	uint64_t idle_since = 0;
	int rc = xp_engine_init_state(e, &e->start_diag);

	e->start_rc = rc;
	if (rc < 0) {
		xp_engine_fini_state(e);
		sem_post(&e->started);
		return NULL;
	}
	sem_post(&e->started);
	while (!atomic_load_explicit(&e->stop, memory_order_relaxed)) {
		uint64_t now = xp_dp_now_ns(e->dp);

		if (xp_engine_run_once(e, now)) {
			idle_since = 0;
			continue;
		}
		if (!idle_since)
			idle_since = now;
		if (now - idle_since < e->cfg.spin_ns) {
			cpu_relax();
			continue;
		}
		sleep_until_work(e, now);
		idle_since = 0;
	}
	return NULL;
}

int xp_engine_thread_start(struct xp_engine *e, struct pcm_diag *diag)
{
	int rc;

	sem_init(&e->started, 0, 0);
	rc = -pthread_create(&e->thread, NULL, thread_main, e);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "engine %u: pthread_create: %s",
			 e->cfg.index, strerror(-rc));
		sem_destroy(&e->started);
		return rc;
	}
	while (sem_wait(&e->started) < 0)
		;
	sem_destroy(&e->started);
	rc = e->start_rc;
	if (rc < 0) {
		pthread_join(e->thread, NULL);
		*diag = e->start_diag;
		return rc; /* the thread freed its state */
	}
	e->has_thread = true;
	return 0;
}

void xp_engine_thread_stop(struct xp_engine *e)
{
	uint64_t one = 1;

	atomic_store(&e->stop, 1);
	if (write(e->efd, &one, sizeof(one)) < 0) {
		/* saturated: the thread wakes anyway */
	}
	pthread_join(e->thread, NULL);
}
