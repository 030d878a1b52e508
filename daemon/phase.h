/* SPDX-License-Identifier: MIT */
/*
 * phase.h - where pcmd is in its life: running, draining after SIGTERM,
 * aborting, done. Written by the daemon object (pcmd.c) on the loop; read
 * there, by the request and flow code, and by each client's descriptor path
 * on the data plane's threads (intake.c), which is why it is a header of its
 * own below all of them.
 */
#ifndef PCMD_PHASE_H
#define PCMD_PHASE_H

enum pcmd_phase {
	PCMD_PHASE_RUNNING = 1,
	PCMD_PHASE_DRAINING = 2, /* SIGTERM: no new clients or work; posted sends may finish */
	PCMD_PHASE_ABORTING = 3, /* every flow aborted; waiting for the data plane to close them */
	PCMD_PHASE_DONE = 4,
};

#endif /* PCMD_PHASE_H */
