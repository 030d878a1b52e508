/* SPDX-License-Identifier: MIT */
/*
 * sim.h - one run of the emulation (sim.c): the event queue, the packet
 * pool, the fabric, the NICs and raw queue pairs, the messages, and the
 * bookkeeping of the run. It sits on top: it builds the others, tells the
 * fabric how to reach the hosts, and dispatches every event.
 */
#ifndef PCM_UET_SIM_H
#define PCM_UET_SIM_H

#include "fabric.h"
#include "nic.h"
#include "raw.h"

struct uet_sim {
	const struct uet_scenario *scn;
	uint64_t seed;
	struct uet_mem mem;      /* the run's state is cut from here (mem.h) */
	struct uet_des des;
	struct uet_rng rng;
	struct uet_pkt_pool pkts;
	struct uet_fabric fab;
	struct uet_nics ns;
	struct uet_raw raw;
	struct uet_hooks hooks;
	struct uet_msg_info *msgs;
	uint32_t n_msgs, cap_msgs;
	bool started;
	bool warm;     /* prefetch in stages (sim.c), decided at the start */
	enum uet_prefetch prefetch;
	int start_rc;                 /* uet_sim_start()'s, kept with its diagnostic */
	struct pcm_diag start_diag;
	uint64_t stop_ps;
	uint64_t last_stats_ps;
	uint64_t flow_sample_ps;
	char warnings[1024];     /* derived settings that work but are likely not meant */
};

#endif /* PCM_UET_SIM_H */
