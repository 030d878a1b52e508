// SPDX-License-Identifier: MIT
/*
 * plane_engine_ctl.c - the engine data plane's requests to its engines:
 * commands into an engine's ring (waiting for room), and control requests
 * (region registration, connection setup, a policy swap, region release)
 * that the engine thread answers within microseconds. pcmd's loop waits for
 * that answer, so that errors reach the client with its request.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "fabric_softnic.h"
#include "log.h"
#include "plane_engine_int.h"

/*
 * How long a control request may take before pcmd gives up on the engine. Registering a
 * client's region (XP_CTL_MR_REG, ibv_reg_mr on rdma_rxe) took 3.9 s and 4.2 s in the rxe
 * suite's TCG guest at a host load average of 16, and over 5 s (the old bound, which
 * aborted pcmd) in another boot: 30 s, so that only an engine that stopped answering ends
 * pcmd.
 */
#define CTL_TIMEOUT_NS (30ull * 1000 * 1000 * 1000)
/* A control request this slow is logged: pcmd's loop serves no one else meanwhile. */
#define CTL_SLOW_MS 1000

void pcmd_eng_submit(struct pcmd_plane *pl, uint32_t engine, const struct xp_cmd *cmd)
{
	while (xp_engine_submit(pl->engines[engine], cmd) == -EAGAIN) {
		if (pl->fabric)
			pcmd_fabric_kick(
			    pl->fabric); /* a full ring: make sure its runner is awake */
		sched_yield(); /* the engine thread empties its ring without waiting for us */
	}
}

int pcmd_eng_ctl_run(struct pcmd_plane *pl, uint32_t engine, struct xp_ctl *ctl)
{
	uint64_t start_ns = xp_mono_ns(), took_ms;

	if (xp_engine_ctl_run(pl->engines[engine], ctl, CTL_TIMEOUT_NS) < 0) {
		pcmd_err("data plane: engine %u did not answer a control request (op %u) in %llu s",
			 engine, ctl->op, CTL_TIMEOUT_NS / 1000000000ull);
		abort(); /* the engine still owns @ctl: nothing safe is left to do */
	}
	took_ms = (xp_mono_ns() - start_ns) / 1000000;
	if (took_ms >= CTL_SLOW_MS)
		pcmd_warn("data plane: engine %u took %llu ms to answer a control request (op %u)",
			  engine, (unsigned long long)took_ms, ctl->op);
	if (ctl->status < 0 && ctl->diag.msg[0])
		pcmd_warn("data plane: engine %u: %s", engine, ctl->diag.msg);
	return ctl->status;
}
