/* SPDX-License-Identifier: MIT */
/*
 * bench_rig.h - what pcm-bench goodput and latency (bench_transport.c) and
 * the two-process goodput over verbs (bench_pair.c) share: the options, and
 * the rig (engines and flows driven by this thread) with its helpers
 * (bench_rig.c).
 */
#ifndef PCM_BENCH_RIG_H
#define PCM_BENCH_RIG_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "engine.h"

#define DEPTH 8 /* messages in flight per flow, and receives posted */
#define MAX_FLOWS 256
#define MAX_ENGINES 64

struct xp_softnic_world;
struct xp_cc_pcm;

struct tp_opts {
	const char *datapath;
	const char *policy;
	const char *mode;
	uint32_t flows;
	uint64_t msg_size;
	uint32_t chunk_size;
	uint32_t engines;
	double seconds;       /* null, verbs: wall time per run */
	uint64_t virtual_us;  /* softnic: emulated time per run */
	uint64_t link_gbps;   /* softnic */
	uint64_t queue_bytes; /* softnic: each switch port's queue; 0: the scenario's (one BDP) */
	uint32_t iters;       /* latency: round trips per size */
	bool threads;         /* null: engine threads instead of INLINE progress */
	int64_t spin_ns;      /* threads: busy-poll this long before sleeping (-1: default) */
	bool json;
	const char *device;   /* verbs: the device; NULL: the first */
	int gid_index;        /* verbs: the GID index; < 0: the first RoCE v2 GID */
	bool rc;              /* verbs: RC data QPs (else UC) */
	const char *listen;   /* verbs, two processes: the receiver's HOST:PORT */
	const char *connect;  /* verbs, two processes: the sender dials this HOST:PORT */
	uint64_t seed;        /* two processes: the payload pattern's seed */
	uint32_t async_workers; /* async modes: worker threads of the PCM binding; 0: inline */
};

struct tp_flow {
	int se, re;           /* engine indexes */
	uint32_t sconn, rconn;
	uint8_t *sbuf, *rbuf;
	uint32_t smr, rmr;
	uint64_t sends_out, recvs_out;
	uint64_t bytes_done;
	uint64_t cookie;
};

struct tp_rig {
	const struct tp_opts *o;
	const struct xp_dp_ops *dp;
	struct xp_softnic_world *w;
	struct xp_engine *e[MAX_ENGINES];
	uint32_t n_e;
	struct tp_flow f[MAX_FLOWS];
	uint32_t n_f;
	struct xp_conn_opts copts;
	struct xp_cc_pcm *pcm;  /* --async-workers: the binding whose workers have threads */
	bool measuring;
	uint64_t stop_ns;
};

/* clock @c in ns. */
uint64_t tp_clock_ns(clockid_t c);
/* @r's time in ns: the emulation's (softnic) or CLOCK_MONOTONIC. */
uint64_t tp_rig_now(const struct tp_rig *r);
/* One round of progress on every engine of @r (INLINE or EXTERNAL progress). */
void tp_rig_step(struct tp_rig *r);
/* Run @ctl on engine @e until done; Return: its status (diagnostic printed). */
int tp_ctl_sync(struct tp_rig *r, int e, struct xp_ctl *ctl);
/* Register [@addr, +@len) with engine @e; Return: 0 or -errno (printed). */
int tp_reg(struct tp_rig *r, int e, void *addr, size_t len, uint32_t *mr);
/* Submit @cmd to engine @e, stepping while its ring is full. */
void tp_submit(struct tp_rig *r, int e, const struct xp_cmd *cmd);
/* --policy, --mode and --qp into @c; Return: 0 or -EINVAL (printed). */
int tp_parse_policy(const struct tp_opts *o, struct xp_conn_opts *c);
/* @n engines on @r->dp; Return: 0 or -errno (printed). */
int tp_make_engines(struct tp_rig *r, uint32_t n, bool copy);
/* Destroy @r's engines, buffers and world (not @r). */
void tp_rig_free(struct tp_rig *r);

#endif /* PCM_BENCH_RIG_H */
