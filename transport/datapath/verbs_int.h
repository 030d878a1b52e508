/* SPDX-License-Identifier: MIT */
/*
 * verbs_int.h - the verbs datapath's internals, shared by its files:
 *   verbs.c       the ops table, open/close, data paths (UC/RC QPs), writes,
 *                 polling, the wait fd
 *   verbs_dev.c   device, port and GID choice; the diagnostics of a failed
 *                 open or registration
 *   verbs_qp.c    QP state transitions (INIT, then RTR and RTS towards a peer)
 *   verbs_keys.c  memory regions and per-receive keys (memory windows)
 *   verbs_ctrl.c  the control channel: one UD QP, its buffers, the peers
 *   verbs_sq.c    send-queue accounting (signalled every Nth)
 *   verbs_map.c   the u32 hash map behind the lookups
 * docs/transport.md "The verbs datapath" is the contract.
 */
#ifndef XP_VERBS_INT_H
#define XP_VERBS_INT_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "bytes.h"
#include "datapath.h"
#include "verbs_map.h"

#define VB_POLL_BATCH 32      /* CQEs per ibv_poll_cq() */
#define VB_STASH 16           /* CQEs arm() may find and keep for the next poll */
#define VB_SIGNAL_EVERY 16    /* a data or control send is signalled at least this often */
#define VB_GRH_BYTES 40       /* what a UD receive holds before the payload */
#define VB_QKEY 0x78700001u   /* the control QPs' Q_Key */
#define VB_HOP_LIMIT 64
#define VB_MAX_PEERS 1024

/* Send-queue accounting of one QP (verbs_sq.c). */
struct vb_sq {
	uint32_t depth;       /* WRs its send queue holds */
	uint32_t outstanding; /* posted and not known complete */
	uint32_t unsignalled; /* posted unsignalled since the last signalled one */
	uint16_t *marks;      /* ring of depth: how many WRs each signalled one completes */
	uint32_t mark_head, mark_count;
};

int vb_sq_init(struct vb_sq *sq, uint32_t depth);
void vb_sq_fini(struct vb_sq *sq);
/* Whether the next WR must be signalled (@last: the last one for this QP for now). */
bool vb_sq_must_signal(const struct vb_sq *sq, bool last);
void vb_sq_posted(struct vb_sq *sq, bool signalled);
/* A signalled WR completed: the WRs it covers. */
uint32_t vb_sq_completed(struct vb_sq *sq);
/* The QP failed or went: every WR outstanding, forgotten. */
uint32_t vb_sq_reset(struct vb_sq *sq);

/* What verbs_dev.c found. */
struct vb_dev {
	struct ibv_context *ctx;
	char name[64];
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
	bool roce;            /* Ethernet link layer: a GRH on every packet */
	uint16_t lid;
	enum ibv_mtu mtu;     /* the port's active MTU */
	uint32_t mtu_bytes;
	uint32_t max_msg_bytes;
	uint64_t line_rate_bps;
	int numa_node;
	struct ibv_device_attr attr;
};

/* A control peer: a UD destination, or a source seen on the control QP. */
struct vb_peer {
	bool in_use;
	uint32_t refs;        /* peer_open()s not yet closed; 0: may be evicted */
	struct ibv_ah *ah;    /* NULL: seen only as a source so far */
	uint32_t qpn;
	union ibv_gid gid;
	uint16_t lid;
	uint32_t key;         /* its hash in ctrl.peer_map */
};

struct vb_ctrl {
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;         /* recv_depth receive slots, then send_depth send slots */
	uint32_t mtu;         /* the largest control packet */
	uint32_t recv_depth, send_depth;
	uint32_t send_next;   /* the send slot the next packet takes */
	struct vb_sq sq;
	uint32_t *handed;     /* receive slots handed out by the last poll */
	uint32_t n_handed;
	struct vb_peer *peers;
	struct vb_map peer_map; /* hash of (GID, QPN) -> peer; collisions checked in full */
	uint32_t evict_next;
};

struct vb_key {
	struct ibv_mw *mw;
	uint32_t rkey;        /* while bound */
	uintptr_t mr;         /* the region it is bound in, while bound */
	bool bound;
	uint32_t next_free;
};

struct vb_region {
	struct ibv_mr *mr;
	struct vb_region *next, *prev;
};

struct vb_keys {
	bool use_mw;          /* memory windows per receive (else the region's rkey) */
	struct ibv_qp *qp;    /* binds are posted here: a UC QP connected to itself */
	struct ibv_cq *cq;
	struct vb_key *keys;
	uint32_t n_keys, max_keys;
	uint32_t free, free_tail, n_free; /* FIFO of unbound windows, UINT32_MAX: empty */
	struct vb_map by_rkey;
	struct vb_region *regions;
	uint64_t binds, unbinds;
};

struct vb_path {
	struct ibv_qp *qp;    /* NULL: a free slot */
	bool rc;
	bool connected;
	bool failed;          /* a completion in error: writes on it fail */
	uint32_t qpn;
	uint32_t psn;
	uint32_t peer;
	uint32_t burst_gen;   /* post_writes(): the call that saw its last write */
	struct vb_sq sq;
	uint32_t next_free;
};

struct vb_dp {
	struct xp_dp base;
	struct xp_dp_config cfg;
	struct vb_dev dev;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_srq *srq;
	uint32_t srq_depth, srq_to_post;
	uint32_t max_inline;
	uint32_t send_cap, send_used;
	uint32_t unacked_send_events, unacked_recv_events;

	struct vb_path *paths;
	uint32_t n_paths, cap_paths, path_free;
	struct vb_map path_by_qpn;
	uint32_t burst_gen;

	struct vb_ctrl ctrl;
	struct vb_keys keys;

	/* CQEs arm() found, for the next poll */
	struct ibv_wc stash_send[VB_STASH], stash_recv[VB_STASH];
	uint32_t n_stash_send, n_stash_recv, stash_send_at, stash_recv_at;
	/* write failures found at post time, for the next poll */
	struct xp_dp_event *failed;
	uint32_t n_failed, cap_failed;

	struct xp_dp_stats st;
};

static inline struct vb_dp *to_vb(struct xp_dp *dp)
{
	return (struct vb_dp *)dp;
}

/* CLOCK_MONOTONIC in ns: the datapath's clock, and its deadlines. */
static inline uint64_t vb_mono_ns(void)
{
	return xp_mono_ns();
}

/* verbs_dev.c */
int vb_dev_open(struct vb_dev *dev, const struct xp_dp_config *cfg, struct pcm_diag *diag);
void vb_dev_close(struct vb_dev *dev);
void vb_gid_str(const union ibv_gid *gid, char *out, size_t n);
bool vb_gid_is_v4(const union ibv_gid *gid);
/* Where this instance is, for messages: "rxe0 port 1 GID[1] ::ffff:10.0.2.15". */
void vb_where(const struct vb_dev *dev, char *out, size_t n);
/* Explain a failed registration or pinning (-ENOMEM past RLIMIT_MEMLOCK...). */
int vb_diag_pin(const struct vb_dev *dev, const char *what, size_t bytes, int err,
		struct pcm_diag *diag);
/* The same-family check of a peer's GID against ours. */
int vb_check_peer_gid(const struct vb_dev *dev, const union ibv_gid *peer, const char *what,
		      struct pcm_diag *diag);
/* -errno of a failed modify_qp/create_ah towards @peer, with the diag. */
int vb_diag_unreachable(const struct vb_dev *dev, const char *what, const union ibv_gid *peer,
			uint32_t qpn, int err, struct pcm_diag *diag);

/* verbs_keys.c */
int vb_keys_open(struct vb_dp *d, struct pcm_diag *diag);
void vb_keys_close(struct vb_dp *d);
int vb_mr_reg(struct xp_dp *dp, void *addr, size_t len, struct xp_dp_mr *mr,
	      struct pcm_diag *diag);
void vb_mr_dereg(struct xp_dp *dp, struct xp_dp_mr *mr);
int vb_recv_key(struct xp_dp *dp, const struct xp_dp_mr *mr, uint64_t addr, uint64_t len,
		uint32_t *rkey);
void vb_recv_key_release(struct xp_dp *dp, uint32_t rkey);

/* verbs_ctrl.c */
int vb_ctrl_open(struct vb_dp *d, struct pcm_diag *diag);
void vb_ctrl_close(struct vb_dp *d);
void vb_ctrl_repost(struct vb_dp *d);
/* A control QP completion: fills *ev and returns 1 for a packet, else 0. */
int vb_ctrl_recv_done(struct vb_dp *d, const struct ibv_wc *wc, struct xp_dp_event *ev);
void vb_ctrl_send_done(struct vb_dp *d, const struct ibv_wc *wc);
void vb_local_addr(struct xp_dp *dp, struct xp_dp_blob *addr);
int vb_peer_open(struct xp_dp *dp, const struct xp_dp_blob *addr, uint32_t *peer,
		 struct pcm_diag *diag);
void vb_peer_close(struct xp_dp *dp, uint32_t peer);
int vb_post_ctrl(struct xp_dp *dp, uint32_t peer, const void *bytes, uint32_t len);

/* verbs_qp.c */
/* Move @qp RESET -> INIT on this instance's port, with remote @access. */
int vb_qp_init(struct vb_dp *d, struct ibv_qp *qp, int access);
/* Move @qp INIT -> RTR -> RTS towards (@gid, @lid, @qpn, @psn); RC with its timers. */
int vb_qp_connect(struct vb_dp *d, struct ibv_qp *qp, bool rc, uint32_t local_psn,
		  const union ibv_gid *gid, uint16_t lid, uint32_t qpn, uint32_t psn,
		  enum ibv_mtu mtu);

#endif /* XP_VERBS_INT_H */
