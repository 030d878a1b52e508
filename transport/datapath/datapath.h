/* SPDX-License-Identifier: MIT */
/*
 * datapath.h - the one ops table every datapath implements (rdma-core
 * provider style), and the bootstrap table that exchanges connection blobs.
 *
 * A datapath instance (struct xp_dp) serves one engine: one core's writes
 * and control packets go out through it and its events come back through
 * it. Datapaths: "null" (in-process loopback, no wire cost), "softnic"
 * (raw UC-like QPs over the UET emulation, virtual time), "verbs"
 * (libibverbs). xp_dp_find() is the explicit registry.
 *
 * What a datapath provides (the core's vocabulary, core.h):
 *   memory      mr_reg/mr_dereg: a region with an lkey (local source) and an
 *               rkey; recv_key/recv_key_release: a receive's own rkey, over
 *               part of a region, which the engine releases when the
 *               receive's completion is handed out, so that a late
 *               duplicate chunk can never be placed into the receive that
 *               reuses the slot (docs/transport.md "Direct placement"). A
 *               datapath without XP_DP_CAP_RECV_KEYS returns the region's
 *               rkey: UC on it risks that hazard and the engine says so.
 *   paths       path_create: a data QP (UC, or RC with attr.rc), and the
 *               blob the peer needs to connect to it; path_connect: connect
 *               it to the peer's path from the peer's blob, towards a
 *               control peer. A path handle is the same for writes posted
 *               on it and for chunks arriving on it.
 *   control     local_addr: this instance's control address, as a blob;
 *               peer_open: the handle of a peer's control address
 *               (refcounted: connections to one peer share it, so the core
 *               batches their records into one packet); post_ctrl: one
 *               control packet to a peer, best effort (the core retransmits).
 *   data        post_writes: a burst of WRITE_WITH_IMM; it returns how many
 *               were posted, in order; a write not posted is dropped (the
 *               core recovers it as a loss). send_slots: how many writes may
 *               be posted now.
 *   events      poll: a burst of events: a chunk arrived (imm, length,
 *               path, CE), a control packet arrived (bytes valid until the
 *               next poll), a write finished or failed.
 *   blocking    wait_fd + arm: arm() returns 0 when nothing is pending and
 *               the fd will become readable when something arrives (then
 *               the engine may sleep on it), -EAGAIN when events are
 *               pending (poll again), -EOPNOTSUPP in virtual time.
 *   clock       now_ns: virtual for softnic, CLOCK_MONOTONIC otherwise.
 *
 * Errors are -errno; open, mr_reg, path_create, path_connect and peer_open
 * fill a pcm_diag naming the device, port, GID or peer involved.
 *
 * Threading: one instance is driven by one thread at a time (its engine).
 * Instances of one datapath may run on different threads and talk to each
 * other (null: across threads through lock-free rings).
 *
 * Bootstrap (struct xp_boot_ops): how two endpoints exchange connection
 * blobs (the core's id and nonce, the control address, every path's blob)
 * before a connection can bind. It is per endpoint, not per engine, and
 * asynchronous: dial() returns at once and its answer comes as an event.
 * null and softnic use the in-process name registry ("registry"); verbs a
 * TCP socket ("tcp", address "host:port").
 */
#ifndef XP_DATAPATH_H
#define XP_DATAPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core.h"
#include "spec.h" /* struct pcm_diag */
#include "xp_clock.h" /* xp_mono_ns(), the clock datapaths and engines read */

/* The largest path or control-address blob. */
#define XP_DP_BLOB_MAX 32
/* The largest bootstrap message (a connection blob: 64 paths' blobs and more). */
#define XP_BOOT_MSG_MAX 4096

struct xp_dp_blob {
	uint8_t len;
	uint8_t bytes[XP_DP_BLOB_MAX];
};

/* Capabilities (struct xp_dp_info.caps). */
#define XP_DP_CAP_RECV_KEYS (1u << 0)    /* recv_key() makes keys a release invalidates */
#define XP_DP_CAP_UC (1u << 1)           /* unreliable data paths (pcm's recovery) */
#define XP_DP_CAP_RC (1u << 2)           /* reliable data paths (attr.rc) */
#define XP_DP_CAP_ECN (1u << 3)          /* chunks arrive with a CE mark */
#define XP_DP_CAP_WRITE_DONE (1u << 4)   /* successful writes are reported (failures always) */
#define XP_DP_CAP_WAIT_FD (1u << 5)      /* wait_fd() + arm() block */
#define XP_DP_CAP_VIRTUAL_TIME (1u << 6) /* now_ns() is virtual: a driver steps the engines */

struct xp_dp_config {
	const char *device;   /* verbs: the device name; NULL: the first one */
	uint8_t port;         /* verbs: the port; 0: 1 */
	int gid_index;        /* verbs: the GID index; < 0: the first RoCE v2 GID */
	uint32_t engine;      /* the index of the engine this instance serves */
	uint32_t send_slots;  /* writes outstanding at once; 0: the datapath's default */
	uint32_t recv_slots;  /* chunk events buffered; 0: the default */
	uint32_t ctrl_mtu;    /* the largest control packet; 0: the core's default */
	uint32_t max_paths;   /* paths this instance may create; 0: the default */
	uint32_t max_keys;    /* regions + receive keys at once; 0: the default */
	bool copy;            /* null: copy chunk bytes (tests) or only move events (goodput) */
	bool no_recv_keys;    /* verbs: hand out the region's rkey even where memory windows exist */
	void *world;          /* softnic: the emulated fabric (softnic.h) */
	uint32_t host;        /* softnic: this instance's host in the fabric */
};

struct xp_dp_info {
	const char *name;
	const char *target;      /* the PCM capability target (target.h) CC packages run against */
	uint32_t caps;           /* XP_DP_CAP_* */
	int numa_node;           /* the NIC's node; -1: unknown or not a device */
	uint64_t line_rate_bps;  /* what PCM_RATE_ONE means */
	uint64_t rto_min_ns;     /* an RTO floor that suits this datapath's RTTs */
	uint32_t ctrl_mtu;       /* the control packet size both ends use */
	uint32_t max_write_bytes;
	uint32_t max_paths;
	uint32_t send_slots;     /* capacity of send_slots() */
};

struct xp_dp_mr {
	void *addr;
	size_t len;
	uint32_t lkey;
	uint32_t rkey;        /* the whole region (a datapath without receive keys hands this out) */
	uintptr_t handle;     /* the datapath's own */
};

struct xp_dp_path_attr {
	bool rc;              /* reliable connected (else unreliable) */
	uint16_t entropy;     /* a hint; the datapath picks what its NIC can (path_create says) */
	uint32_t index;       /* the path's index within its connection */
};

enum xp_dp_event_kind {
	XP_DP_EV_CHUNK = 1,      /* a WRITE_WITH_IMM arrived and was placed */
	XP_DP_EV_CTRL = 2,       /* a control packet arrived */
	XP_DP_EV_WRITE_DONE = 3, /* a posted write finished (status 0) or failed */
};

struct xp_dp_event {
	uint8_t kind;          /* enum xp_dp_event_kind */
	bool ecn_ce;           /* CHUNK: CE-marked */
	uint32_t imm;          /* CHUNK: host order */
	uint32_t len;          /* CHUNK: bytes placed; CTRL: packet length */
	uint32_t path;         /* CHUNK: the local path handle it arrived on */
	uint32_t peer;         /* CTRL: the local handle of the peer it came from */
	int32_t status;        /* WRITE_DONE: 0 or -errno */
	uint64_t token;        /* WRITE_DONE: the write's token */
	const uint8_t *bytes;  /* CTRL: valid until the next poll of this instance */
};

/* Counters a datapath keeps (all optional: unused ones stay 0). */
struct xp_dp_stats {
	uint64_t writes_posted;
	uint64_t writes_full;      /* not posted: no send slot */
	uint64_t writes_bad_key;   /* dropped at the receiver: key unknown, released or too short */
	uint64_t writes_lost;      /* lost on the wire (softnic) */
	uint64_t chunks_delivered;
	uint64_t ctrl_sent;
	uint64_t ctrl_dropped;     /* no room, or lost */
	uint64_t ctrl_received;
	uint64_t bytes_copied;
	uint64_t wakeups;          /* fd writes that woke a sleeping instance */
};

struct xp_dp;

struct xp_dp_ops {
	const char *name;
	const struct xp_boot_ops *boot; /* how its endpoints exchange connection blobs */

	int (*open)(const struct xp_dp_config *cfg, struct xp_dp **out, struct pcm_diag *diag);
	void (*close)(struct xp_dp *dp);
	void (*info)(struct xp_dp *dp, struct xp_dp_info *info);
	void (*stats)(struct xp_dp *dp, struct xp_dp_stats *stats);

	int (*mr_reg)(struct xp_dp *dp, void *addr, size_t len, struct xp_dp_mr *mr,
		      struct pcm_diag *diag);
	void (*mr_dereg)(struct xp_dp *dp, struct xp_dp_mr *mr);
	int (*recv_key)(struct xp_dp *dp, const struct xp_dp_mr *mr, uint64_t addr, uint64_t len,
			uint32_t *rkey);
	void (*recv_key_release)(struct xp_dp *dp, uint32_t rkey);

	void (*local_addr)(struct xp_dp *dp, struct xp_dp_blob *addr);
	int (*peer_open)(struct xp_dp *dp, const struct xp_dp_blob *addr, uint32_t *peer,
			 struct pcm_diag *diag);
	void (*peer_close)(struct xp_dp *dp, uint32_t peer);

	int (*path_create)(struct xp_dp *dp, const struct xp_dp_path_attr *attr, uint32_t *path,
			   uint16_t *entropy, struct xp_dp_blob *blob, struct pcm_diag *diag);
	int (*path_connect)(struct xp_dp *dp, uint32_t path, uint32_t peer,
			    const struct xp_dp_blob *remote, struct pcm_diag *diag);
	void (*path_destroy)(struct xp_dp *dp, uint32_t path);

	uint32_t (*send_slots)(struct xp_dp *dp);
	uint32_t (*post_writes)(struct xp_dp *dp, const struct xp_write *w, uint32_t n);
	int (*post_ctrl)(struct xp_dp *dp, uint32_t peer, const void *bytes, uint32_t len);
	int (*poll)(struct xp_dp *dp, struct xp_dp_event *ev, uint32_t max);
	int (*wait_fd)(struct xp_dp *dp);
	int (*arm)(struct xp_dp *dp);
	uint64_t (*now_ns)(struct xp_dp *dp);
};

/* Every instance starts with this: the ops that serve it. */
struct xp_dp {
	const struct xp_dp_ops *ops;
};

extern const struct xp_dp_ops xp_dp_null_ops;
extern const struct xp_dp_ops xp_dp_softnic_ops;
extern const struct xp_dp_ops xp_dp_verbs_ops;

/**
 * xp_dp_find() - a datapath by name, from the explicit table of those built.
 * @name: "null", "softnic", "verbs".
 *
 * Return: its ops, or NULL.
 */
const struct xp_dp_ops *xp_dp_find(const char *name);

/**
 * xp_dp_names() - the names of the datapaths built, for messages.
 *
 * Return: "null, softnic, verbs" (those built), a static string.
 */
const char *xp_dp_names(void);

/**
 * xp_dp_ops_check() - check at registration that a table is complete.
 * @ops: the table.
 *
 * Return: 0, -EINVAL (an op or the name is missing).
 */
int xp_dp_ops_check(const struct xp_dp_ops *ops);

/**
 * xp_dp_open() - open an instance of datapath @ops.
 * @ops: the datapath.
 * @cfg: configuration (NULL: defaults).
 * @out: the instance.
 * @diag: on failure, what is wrong, naming the device, port or GID.
 *
 * Return: 0 or the datapath's -errno (-ENODEV no such device, -EPERM, -ENOMEM
 * a memlock limit too low, -EINVAL a bad port or GID, ...).
 */
int xp_dp_open(const struct xp_dp_ops *ops, const struct xp_dp_config *cfg, struct xp_dp **out,
	       struct pcm_diag *diag);

/**
 * xp_dp_close() - close an instance: every path, peer, key and region it holds goes. NULL is
 * a no-op.
 */
static inline void xp_dp_close(struct xp_dp *dp)
{
	if (dp)
		dp->ops->close(dp);
}

static inline void xp_dp_info(struct xp_dp *dp, struct xp_dp_info *info)
{
	dp->ops->info(dp, info);
}

static inline uint32_t xp_dp_send_slots(struct xp_dp *dp)
{
	return dp->ops->send_slots(dp);
}

static inline uint32_t xp_dp_post_writes(struct xp_dp *dp, const struct xp_write *w, uint32_t n)
{
	return dp->ops->post_writes(dp, w, n);
}

static inline int xp_dp_post_ctrl(struct xp_dp *dp, uint32_t peer, const void *bytes, uint32_t len)
{
	return dp->ops->post_ctrl(dp, peer, bytes, len);
}

static inline int xp_dp_poll(struct xp_dp *dp, struct xp_dp_event *ev, uint32_t max)
{
	return dp->ops->poll(dp, ev, max);
}

static inline uint64_t xp_dp_now_ns(struct xp_dp *dp)
{
	return dp->ops->now_ns(dp);
}

/* ---- bootstrap ---------------------------------------------------------------------------- */

enum xp_boot_event_kind {
	XP_BOOT_EV_INCOMING = 1, /* a peer dialed our listening address: answer() it */
	XP_BOOT_EV_ANSWERED = 2, /* the answer to our dial(): status, and the peer's message */
};

struct xp_boot_event {
	uint8_t kind;          /* enum xp_boot_event_kind */
	int32_t status;        /* ANSWERED: 0, -ECONNREFUSED (nothing listens), the peer's refusal */
	uint64_t token;        /* ANSWERED: dial()'s token */
	uint64_t req;          /* INCOMING: the request to answer */
	uint32_t len;
	const uint8_t *msg;    /* valid until the next poll of this bootstrap */
	char from[64];         /* who: "host:port", the dialer's registry name, for messages */
};

struct xp_boot;

struct xp_boot_ops {
	const char *name;
	int (*create)(struct xp_boot **out, struct pcm_diag *diag);
	void (*destroy)(struct xp_boot *b);
	/* Accept dials at @addr (a datapath-specific string). */
	int (*listen)(struct xp_boot *b, const char *addr, struct pcm_diag *diag);
	/* Send @msg to whoever listens at @addr; the answer comes as XP_BOOT_EV_ANSWERED. */
	int (*dial)(struct xp_boot *b, const char *addr, const void *msg, uint32_t len,
		    uint64_t token, struct pcm_diag *diag);
	/* Answer incoming request @req with @status and, when 0, @msg. */
	int (*answer)(struct xp_boot *b, uint64_t req, int status, const void *msg, uint32_t len);
	int (*poll)(struct xp_boot *b, struct xp_boot_event *ev, int max);
	/* Readable when poll() may have events. */
	int (*fd)(struct xp_boot *b);
};

/* Every bootstrap starts with this. */
struct xp_boot {
	const struct xp_boot_ops *ops;
};

/* The in-process name registry (null, softnic): boot_registry.c. */
extern const struct xp_boot_ops xp_boot_registry_ops;
/* TCP ("host:port"; the verbs datapath's): boot_tcp.c. */
extern const struct xp_boot_ops xp_boot_tcp_ops;

/**
 * xp_boot_tcp_port() - the port a TCP bootstrap listens on (useful after
 * listening on port 0).
 * @b: a bootstrap of xp_boot_tcp_ops.
 *
 * Return: the port, -ENOTCONN (not listening), -EINVAL (not a TCP bootstrap).
 */
int xp_boot_tcp_port(struct xp_boot *b);

/**
 * xp_boot_tcp_set_timeout() - the deadline of each phase of an exchange
 * (connect and send, wait for the answer; read a request, wait for
 * answer(), send the answer); default 10 s. Applies to phases that start
 * after the call.
 * @b: a bootstrap of xp_boot_tcp_ops.
 * @timeout_ns: > 0.
 *
 * Return: 0, -EINVAL.
 */
int xp_boot_tcp_set_timeout(struct xp_boot *b, uint64_t timeout_ns);

/**
 * xp_boot_tcp_counters() - what a TCP bootstrap refused: frames that failed
 * their checks, incoming connections closed because too many were pending.
 * @b: a bootstrap of xp_boot_tcp_ops (another gives zeros).
 * @bad_frames: filled in.
 * @refused_busy: filled in.
 */
void xp_boot_tcp_counters(struct xp_boot *b, uint64_t *bad_frames, uint64_t *refused_busy);

#endif /* XP_DATAPATH_H */
