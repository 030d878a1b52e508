// SPDX-License-Identifier: MIT
/*
 * ctl_wait.c - make a control request, run it on an engine and wait for its
 * answer, for the threads that own no engine (the in-process endpoint,
 * pcmd's loop).
 *
 * Control requests are rare (setup, regions, a policy swap, a figures read)
 * and the engine answers one within microseconds of taking it, so the
 * waiter yields its CPU between looks rather than sleeping: with two cores,
 * a spinning waiter would hold the one the engine thread needs. An INLINE
 * engine has no thread of its own: the waiter runs it.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "engine_int.h"

struct xp_ctl *xp_ctl_new(uint8_t op)
{
	struct xp_ctl *ctl = calloc(1, sizeof(*ctl));

	if (ctl)
		ctl->op = op;
	return ctl;
}

static void wait_turn(struct xp_engine *e)
{
	if (e->cfg.progress == XP_PROGRESS_INLINE)
		(void)xp_engine_progress(e);
	else
		sched_yield();
}

static bool late(uint64_t start_ns, uint64_t timeout_ns)
{
	return timeout_ns && xp_mono_ns() - start_ns > timeout_ns;
}

int xp_engine_ctl_run(struct xp_engine *e, struct xp_ctl *ctl, uint64_t timeout_ns)
{
	struct xp_cmd cmd = {.op = XP_CMD_CTL, .ctl = ctl};
	uint64_t start_ns = timeout_ns ? xp_mono_ns() : 0;

	ctl->notify = false;
	atomic_store(&ctl->done, 0);
	/* A full command ring empties on the engine's own: only the answer is timed. */
	while (xp_engine_submit(e, &cmd) == -EAGAIN)
		wait_turn(e);
	while (!atomic_load_explicit(&ctl->done, memory_order_acquire)) {
		if (late(start_ns, timeout_ns))
			return -ETIMEDOUT;
		wait_turn(e);
	}
	return 0;
}
