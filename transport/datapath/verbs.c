// SPDX-License-Identifier: MIT
/*
 * verbs.c - the "verbs" datapath: pcm's chunks as RDMA WRITE_WITH_IMM over
 * libibverbs (any RDMA device; tested on soft-RoCE, rdma_rxe).
 *
 * One instance per engine: one protection domain, one completion channel,
 * a send CQ and a receive CQ, one shared receive queue for every data QP,
 * one UD QP for control packets (verbs_ctrl.c) and, where the device has
 * memory windows, a QP for binding them (verbs_keys.c).
 *
 * Data paths are UC or RC QPs (attr.rc), created in INIT with a random
 * starting PSN and connected to the peer's path from its blob (RTR, RTS;
 * verbs_qp.c).
 * A chunk is one RDMA_WRITE_WITH_IMM: the bytes go to {raddr, rkey} and
 * the immediate (big-endian on the wire, host order in the core) arrives
 * in the receiver's completion. Each such write consumes one receive at the
 * receiver, so the SRQ holds recv_slots receives without buffers (a WR
 * with no scatter list), reposted in batches as their completions are
 * polled; when it runs dry, UC drops the write silently (pcm's recovery
 * resends it) and RC answers RNR NAK (retried forever: rnr_retry 7).
 *
 * Send queues: every data QP's send queue holds send_slots WRs, the same
 * number the instance lets be outstanding in all (send_slots()), so that no
 * one QP can overflow. WRs are unsignalled except every VB_SIGNAL_EVERY-th
 * and the last one posted to a QP in a burst (verbs_sq.c); a signalled
 * completion frees the slots of the WRs before it. Writes to one QP that
 * follow each other in a burst are chained into one ibv_post_send(). Short
 * writes go inline. Successful writes are not reported (no
 * XP_DP_CAP_WRITE_DONE); a failed one (RC: retries exceeded, a remote
 * access error; a flushed WR of a QP in error) is reported with its token,
 * and its path is failed: every later write on it is reported failed too.
 *
 * Polling: send completions first (they free slots), then receives, in
 * batches of VB_POLL_BATCH. Blocking: wait_fd() is the completion channel's
 * fd (non-blocking); arm() takes the events that woke it (acked in
 * batches), requests a notification on both CQs, then polls once: CQEs
 * found there are kept for the next poll() and arm() says -EAGAIN.
 *
 * On rdma_rxe a write is at most one MTU (max_write_bytes()): its UC
 * responder stops accepting writes on a QP that lost part of one.
 *
 * Time is CLOCK_MONOTONIC. RTT is measured in software by the core (ACK
 * echoes): rxe has no completion timestamps. CQ moderation is not used (it
 * only delays the events an idle engine sleeps on; rxe has none anyway).
 *
 * Blob (path): verbs_blob.h.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "verbs_blob.h"
#include "verbs_int.h"

#define DEFAULT_SEND_SLOTS 128
#define DEFAULT_RECV_SLOTS 2048
#define DEFAULT_MAX_PATHS 4096
#define WANT_INLINE_BYTES 128
#define CQ_MARGIN 64
#define ACK_EVENTS_EVERY 64

/* rdma_rxe's vendor id (soft-RoCE reports no real vendor). */
#define RXE_VENDOR_ID 0xffffff

/* ---- open / close --------------------------------------------------------------------------- */

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static int post_srq(struct vb_dp *d, uint32_t n)
{
	struct ibv_recv_wr wr[VB_POLL_BATCH], *bad;

	while (n) {
		uint32_t k = n < VB_POLL_BATCH ? n : VB_POLL_BATCH;

		for (uint32_t i = 0; i < k; i++)
			wr[i] = (struct ibv_recv_wr){ .num_sge = 0,
						      .next = i + 1 < k ? &wr[i + 1] : NULL };
		if (ibv_post_srq_recv(d->srq, wr, &bad))
			return -EIO;
		n -= k;
	}
	return 0;
}

static uint32_t clamp_u32(uint32_t v, int max)
{
	return max > 0 && v > (uint32_t)max ? (uint32_t)max : v;
}

static int fail(struct vb_dp *d, struct pcm_diag *diag, const char *what, int err)
{
	char where[160];

	vb_where(&d->dev, where, sizeof(where));
	snprintf(diag->msg, sizeof(diag->msg), "verbs: %s: %s: %s", where, what, strerror(err));
	return -err;
}

static int create_queues(struct vb_dp *d, struct pcm_diag *diag)
{
	const struct ibv_device_attr *at = &d->dev.attr;
	struct ibv_srq_init_attr sa = { 0 };
	int send_cqe, recv_cqe, rc;

	d->chan = ibv_create_comp_channel(d->dev.ctx);
	if (!d->chan)
		return fail(d, diag, "ibv_create_comp_channel", errno);
	rc = set_nonblock(d->chan->fd);
	if (rc == 0)
		rc = set_nonblock(d->dev.ctx->async_fd);
	if (rc < 0)
		return fail(d, diag, "making the event fds non-blocking", -rc);
	/* A failing QP may flush every WR it holds while new ones complete: twice the slots. */
	send_cqe = (int)(2 * d->send_cap + 128 + CQ_MARGIN);
	recv_cqe = (int)(d->srq_depth + 256 + CQ_MARGIN);
	if (send_cqe > at->max_cqe || recv_cqe > at->max_cqe) {
		char what[96];

		snprintf(what, sizeof(what), "CQs of %d and %d entries (send_slots %u, recv_slots %u)",
			 send_cqe, recv_cqe, d->send_cap, d->srq_depth);
		return fail(d, diag, what, EINVAL);
	}
	d->send_cq = ibv_create_cq(d->dev.ctx, send_cqe, NULL, d->chan, 0);
	d->recv_cq = d->send_cq ? ibv_create_cq(d->dev.ctx, recv_cqe, NULL, d->chan, 0) : NULL;
	if (!d->recv_cq)
		return fail(d, diag, "ibv_create_cq", errno);
	if (at->max_srq <= 0)
		return fail(d, diag, "no shared receive queue on this device", EOPNOTSUPP);
	sa.attr.max_wr = d->srq_depth;
	sa.attr.max_sge = 1;
	d->srq = ibv_create_srq(d->pd, &sa);
	if (!d->srq)
		return fail(d, diag, "ibv_create_srq", errno);
	rc = post_srq(d, d->srq_depth);
	return rc < 0 ? fail(d, diag, "posting the shared receives", -rc) : 0;
}

static void ack_events(struct vb_dp *d, bool all)
{
	if (d->unacked_send_events && (all || d->unacked_send_events >= ACK_EVENTS_EVERY)) {
		ibv_ack_cq_events(d->send_cq, d->unacked_send_events);
		d->unacked_send_events = 0;
	}
	if (d->unacked_recv_events && (all || d->unacked_recv_events >= ACK_EVENTS_EVERY)) {
		ibv_ack_cq_events(d->recv_cq, d->unacked_recv_events);
		d->unacked_recv_events = 0;
	}
}

static void verbs_close(struct xp_dp *dp)
{
	struct vb_dp *d = to_vb(dp);

	for (uint32_t i = 0; i < d->n_paths; i++)
		if (d->paths[i].qp) {
			ibv_destroy_qp(d->paths[i].qp);
			vb_sq_fini(&d->paths[i].sq);
		}
	vb_keys_close(d);
	vb_ctrl_close(d);
	if (d->srq)
		ibv_destroy_srq(d->srq);
	ack_events(d, true);
	if (d->send_cq)
		ibv_destroy_cq(d->send_cq);
	if (d->recv_cq)
		ibv_destroy_cq(d->recv_cq);
	if (d->chan)
		ibv_destroy_comp_channel(d->chan);
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	vb_dev_close(&d->dev);
	vb_map_fini(&d->path_by_qpn);
	free(d->paths);
	free(d->failed);
	free(d);
}

/* The inline size the device grants a data QP, found on a throwaway QP. */
static uint32_t probe_inline(struct vb_dp *d)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = d->send_cq, .recv_cq = d->recv_cq, .srq = d->srq,
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 1, .max_send_sge = 1, .max_inline_data = WANT_INLINE_BYTES },
	};
	struct ibv_qp *qp = ibv_create_qp(d->pd, &ia);

	if (!qp)
		return 0;
	ibv_destroy_qp(qp);
	return ia.cap.max_inline_data;
}

static int verbs_open(const struct xp_dp_config *cfg, struct xp_dp **out, struct pcm_diag *diag)
{
	struct xp_dp_config def = { .gid_index = -1 };
	struct vb_dp *d;
	int rc;

	if (!cfg)
		cfg = &def;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->base.ops = &xp_dp_verbs_ops;
	d->cfg = *cfg;
	d->path_free = UINT32_MAX;
	rc = vb_dev_open(&d->dev, cfg, diag);
	if (rc < 0)
		goto err;
	d->send_cap = clamp_u32(cfg->send_slots ? cfg->send_slots : DEFAULT_SEND_SLOTS,
				d->dev.attr.max_qp_wr);
	d->srq_depth = clamp_u32(cfg->recv_slots ? cfg->recv_slots : DEFAULT_RECV_SLOTS,
				 d->dev.attr.max_srq_wr);
	d->cfg.max_paths = cfg->max_paths ? cfg->max_paths : DEFAULT_MAX_PATHS;
	if (d->send_cap > UINT16_MAX) {
		rc = fail(d, diag, "send_slots above 65535", EINVAL);
		goto err;
	}
	d->pd = ibv_alloc_pd(d->dev.ctx);
	if (!d->pd) {
		rc = fail(d, diag, "ibv_alloc_pd", errno);
		goto err;
	}
	rc = create_queues(d, diag);
	if (rc < 0)
		goto err;
	d->max_inline = probe_inline(d);
	d->cap_failed = 2 * d->send_cap;
	d->failed = calloc(d->cap_failed, sizeof(*d->failed));
	rc = d->failed ? vb_map_init(&d->path_by_qpn, d->cfg.max_paths) : -ENOMEM;
	if (rc < 0) {
		rc = fail(d, diag, "allocating the path tables", -rc);
		goto err;
	}
	rc = vb_ctrl_open(d, diag);
	if (rc == 0)
		rc = vb_keys_open(d, diag);
	if (rc < 0)
		goto err;
	*out = &d->base;
	return 0;
err:
	verbs_close(&d->base);
	return rc;
}

/*
 * The largest write: the port's message limit, except on rdma_rxe, whose
 * UC responder refuses every later write on a QP once a middle or last
 * packet of a multi-packet write was lost (it waits for a continuation
 * that never comes): there a chunk is one packet, one MTU.
 */
static uint32_t max_write_bytes(const struct vb_dp *d)
{
	uint32_t max = d->dev.max_msg_bytes < XP_CHUNK_BYTES_MAX ? d->dev.max_msg_bytes
								 : XP_CHUNK_BYTES_MAX;

	if (d->dev.attr.vendor_id == RXE_VENDOR_ID && d->dev.mtu_bytes < max)
		max = d->dev.mtu_bytes;
	return max;
}

static void verbs_info(struct xp_dp *dp, struct xp_dp_info *info)
{
	struct vb_dp *d = to_vb(dp);

	*info = (struct xp_dp_info){
		.name = "verbs",
		.target = "verbs",
		.caps = XP_DP_CAP_UC | XP_DP_CAP_RC | XP_DP_CAP_WAIT_FD |
			(d->keys.use_mw ? XP_DP_CAP_RECV_KEYS : 0),
		.numa_node = d->dev.numa_node,
		.line_rate_bps = d->dev.line_rate_bps,
		.rto_min_ns = 1000000, /* a software engine on a shared host; RTTs reach ms on rxe */
		.ctrl_mtu = d->ctrl.mtu,
		.max_write_bytes = max_write_bytes(d),
		.max_paths = d->cfg.max_paths,
		.send_slots = d->send_cap,
	};
}

static void verbs_stats(struct xp_dp *dp, struct xp_dp_stats *st)
{
	*st = to_vb(dp)->st;
}

/* ---- paths ---------------------------------------------------------------------------------- */

static struct vb_path *path_get(struct vb_dp *d, uint32_t h)
{
	return h < d->n_paths && d->paths[h].qp ? &d->paths[h] : NULL;
}

static int path_slot(struct vb_dp *d, uint32_t *out)
{
	if (d->path_free != UINT32_MAX) {
		*out = d->path_free;
		d->path_free = d->paths[*out].next_free;
		return 0;
	}
	if (d->n_paths == d->cfg.max_paths)
		return -ENOSPC;
	if (d->n_paths == d->cap_paths) {
		uint32_t cap = d->cap_paths ? d->cap_paths * 2 : 16;
		struct vb_path *p = realloc(d->paths, (size_t)cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		d->paths = p;
		d->cap_paths = cap;
	}
	*out = d->n_paths++;
	d->paths[*out] = (struct vb_path){ 0 };
	return 0;
}

static void path_slot_free(struct vb_dp *d, uint32_t h)
{
	d->paths[h] = (struct vb_path){ .next_free = d->path_free };
	d->path_free = h;
}

static uint32_t random_psn(struct vb_dp *d, uint32_t qpn)
{
	uint64_t x = vb_mono_ns() ^ ((uint64_t)qpn << 32) ^ (uintptr_t)d;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x & 0xffffff;
}

static void path_blob(const struct vb_dp *d, const struct vb_path *p, struct xp_dp_blob *b)
{
	struct vb_path_blob f = { .rc = p->rc, .qpn = p->qpn, .psn = p->psn, .lid = d->dev.lid,
				  .mtu = (uint8_t)d->dev.mtu };

	memcpy(f.gid, d->dev.gid.raw, 16);
	vb_path_blob_encode(&f, b);
}

static int verbs_path_create(struct xp_dp *dp, const struct xp_dp_path_attr *attr, uint32_t *path,
			     uint16_t *entropy, struct xp_dp_blob *blob, struct pcm_diag *diag)
{
	struct vb_dp *d = to_vb(dp);
	struct ibv_qp_init_attr ia = {
		.send_cq = d->send_cq, .recv_cq = d->recv_cq, .srq = d->srq,
		.qp_type = attr->rc ? IBV_QPT_RC : IBV_QPT_UC,
		.sq_sig_all = 0,
		.cap = { .max_send_wr = d->send_cap, .max_send_sge = 1,
			 .max_inline_data = d->max_inline },
	};
	struct vb_path *p;
	uint32_t h;
	int rc = path_slot(d, &h);

	if (rc < 0)
		return fail(d, diag, rc == -ENOSPC ? "every path (max_paths) is in use" : "paths",
			    -rc);
	p = &d->paths[h];
	p->qp = ibv_create_qp(d->pd, &ia);
	if (!p->qp) {
		rc = fail(d, diag, attr->rc ? "creating an RC QP" : "creating a UC QP", errno);
		path_slot_free(d, h);
		return rc;
	}
	p->rc = attr->rc;
	p->qpn = p->qp->qp_num;
	p->psn = random_psn(d, p->qpn);
	rc = vb_sq_init(&p->sq, d->send_cap);
	if (rc == 0)
		rc = vb_qp_init(d, p->qp, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (rc == 0)
		rc = vb_map_put(&d->path_by_qpn, p->qpn, h);
	if (rc < 0) {
		rc = fail(d, diag, "setting up a data QP", -rc);
		ibv_destroy_qp(p->qp);
		vb_sq_fini(&p->sq);
		path_slot_free(d, h);
		return rc;
	}
	path_blob(d, p, blob);
	*path = h;
	/* On RoCE v2 the UDP source port (what ECMP hashes) follows the QP. */
	*entropy = (uint16_t)(p->qpn ? p->qpn : 1);
	return 0;
}

static int verbs_path_connect(struct xp_dp *dp, uint32_t path, uint32_t peer,
			      const struct xp_dp_blob *remote, struct pcm_diag *diag)
{
	struct vb_dp *d = to_vb(dp);
	struct vb_path *p = path_get(d, path);
	const struct vb_peer *pe = peer < VB_MAX_PEERS && d->ctrl.peers[peer].in_use
					   ? &d->ctrl.peers[peer]
					   : NULL;
	struct vb_path_blob f;
	const char *why;
	union ibv_gid gid;
	char what[64], where[160];
	int rc;

	vb_where(&d->dev, where, sizeof(where));
	if (!p || p->connected || !pe) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: %s: path %u %s or peer %u unknown", where, path,
			 p && p->connected ? "already connected" : "unknown", peer);
		return -EINVAL;
	}
	if (vb_path_blob_decode(remote, &f, &why) < 0) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: %s: path %u: not a verbs path blob (%u bytes; bad %s)", where, path,
			 remote->len, why);
		return -EINVAL;
	}
	memcpy(gid.raw, f.gid, 16);
	if (f.rc != p->rc || memcmp(&gid, &pe->gid, sizeof(gid)) != 0) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: %s: path %u: the peer's path is %s and %s peer %u's control "
			 "address; ours is %s",
			 where, path, f.rc ? "RC" : "UC",
			 memcmp(&gid, &pe->gid, sizeof(gid)) ? "not on" : "on", peer,
			 p->rc ? "RC" : "UC");
		return -EINVAL;
	}
	snprintf(what, sizeof(what), "path %u (%s QPN %#x) to RTR/RTS", path, p->rc ? "RC" : "UC",
		 p->qpn);
	rc = vb_check_peer_gid(&d->dev, &gid, what, diag);
	if (rc < 0)
		return rc;
	rc = vb_qp_connect(d, p->qp, p->rc, p->psn, &gid, f.lid, f.qpn, f.psn,
			   f.mtu < (uint32_t)d->dev.mtu ? (enum ibv_mtu)f.mtu : d->dev.mtu);
	if (rc < 0)
		return vb_diag_unreachable(&d->dev, what, &gid, f.qpn, -rc, diag);
	p->connected = true;
	p->peer = peer;
	return 0;
}

static void verbs_path_destroy(struct xp_dp *dp, uint32_t path)
{
	struct vb_dp *d = to_vb(dp);
	struct vb_path *p = path_get(d, path);

	if (!p)
		return;
	/* Completions of its WRs still in the CQ name a QP number no path has: ignored. */
	d->send_used -= vb_sq_reset(&p->sq);
	vb_map_del(&d->path_by_qpn, p->qpn);
	ibv_destroy_qp(p->qp);
	vb_sq_fini(&p->sq);
	path_slot_free(d, path);
}

/* ---- writes --------------------------------------------------------------------------------- */

static uint32_t verbs_send_slots(struct xp_dp *dp)
{
	struct vb_dp *d = to_vb(dp);

	return d->send_cap - d->send_used;
}

/* Report write @token failed at the next poll (a full queue drops the report: see cap_failed). */
static void fail_later(struct vb_dp *d, uint64_t token, int status)
{
	if (d->n_failed < d->cap_failed)
		d->failed[d->n_failed++] = (struct xp_dp_event){ .kind = XP_DP_EV_WRITE_DONE,
								 .status = status,
								 .token = token };
}

static void path_fail(struct vb_dp *d, struct vb_path *p)
{
	if (p->failed)
		return;
	p->failed = true;
	d->send_used -= vb_sq_reset(&p->sq);
}

/*
 * Post the chain @wr[0..n) on @p, signalling those verbs_sq.c says must be
 * (@last[i]: wr[i] is the last of this burst on @p). Return: n (those the
 * QP refused are reported failed at the next poll).
 */
static uint32_t post_chain(struct vb_dp *d, struct vb_path *p, struct ibv_send_wr *wr,
			   const bool *last, uint32_t n)
{
	struct vb_sq shadow = p->sq;
	struct ibv_send_wr *bad = NULL;
	uint32_t ok = n;

	for (uint32_t i = 0; i < n; i++) {
		bool sig = vb_sq_must_signal(&shadow, last[i]);

		if (sig)
			wr[i].send_flags |= IBV_SEND_SIGNALED;
		shadow.unsignalled = sig ? 0 : shadow.unsignalled + 1;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	if (ibv_post_send(p->qp, wr, &bad))
		ok = bad ? (uint32_t)(bad - wr) : 0;
	for (uint32_t i = 0; i < ok; i++)
		vb_sq_posted(&p->sq, wr[i].send_flags & IBV_SEND_SIGNALED);
	d->send_used += ok;
	if (ok < n) {
		/* a QP that refuses a WR is broken: fail it, and these writes with it */
		path_fail(d, p);
		for (uint32_t i = ok; i < n; i++)
			fail_later(d, wr[i].wr_id, -EIO);
	}
	return n;
}

/* Mark, for each path, the last write of this window that goes to it. */
static void mark_last_writes(struct vb_dp *d, const struct xp_write *w, uint32_t n, bool *last)
{
	d->burst_gen++;
	for (uint32_t i = n; i-- > 0;) {
		struct vb_path *p = path_get(d, w[i].path);

		last[i] = p && p->burst_gen != d->burst_gen;
		if (p)
			p->burst_gen = d->burst_gen;
	}
}

static void build_write(struct vb_dp *d, const struct xp_write *x, struct ibv_send_wr *wr,
			struct ibv_sge *sge)
{
	*sge = (struct ibv_sge){ .addr = x->laddr, .length = x->len, .lkey = x->lkey };
	*wr = (struct ibv_send_wr){
		.wr_id = x->token,
		.sg_list = sge,
		.num_sge = x->len ? 1 : 0,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = x->len && x->len <= d->max_inline ? IBV_SEND_INLINE : 0,
		.imm_data = htobe32(x->imm),
		.wr.rdma = { .remote_addr = x->raddr, .rkey = x->rkey },
	};
}

static uint32_t verbs_post_writes(struct xp_dp *dp, const struct xp_write *w, uint32_t cnt)
{
	struct vb_dp *d = to_vb(dp);
	struct ibv_send_wr wr[VB_POLL_BATCH];
	struct ibv_sge sge[VB_POLL_BATCH];
	bool last[VB_POLL_BATCH], chain_last[VB_POLL_BATCH];
	uint32_t room = d->send_cap - d->send_used, done = 0;

	if (cnt > room) {
		d->st.writes_full++;
		cnt = room;
	}
	while (done < cnt) {
		uint32_t n = cnt - done < VB_POLL_BATCH ? cnt - done : VB_POLL_BATCH, k = 0;
		struct vb_path *run = NULL;

		mark_last_writes(d, w + done, n, last);
		for (uint32_t i = 0; i < n; i++) {
			const struct xp_write *x = &w[done + i];
			struct vb_path *p = path_get(d, x->path);

			if (!p || !p->connected || p->failed) {
				/* lost; on a failed path the core must hear of it (RC never resends) */
				if (p && p->failed)
					fail_later(d, x->token, -EIO);
				continue;
			}
			if (run && p != run) {
				post_chain(d, run, wr, chain_last, k);
				k = 0;
			}
			run = p;
			build_write(d, x, &wr[k], &sge[k]);
			chain_last[k++] = last[i];
		}
		if (k)
			post_chain(d, run, wr, chain_last, k);
		done += n;
	}
	d->st.writes_posted += done;
	return done;
}

/* ---- completions ------------------------------------------------------------------------------ */

static int wc_errno(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_RETRY_EXC_ERR:
		return -ETIMEDOUT; /* RC: the peer never acknowledged (unreachable, or gone) */
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return -ENOBUFS;
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_LOC_PROT_ERR:
		return -EACCES;
	case IBV_WC_WR_FLUSH_ERR:
		return -ECANCELED; /* flushed: its QP failed earlier */
	default:
		return -EIO;
	}
}

/* One send completion; Return: events written to @ev (0 or 1). */
static uint32_t on_send_wc(struct vb_dp *d, const struct ibv_wc *wc, struct xp_dp_event *ev)
{
	struct vb_path *p;
	uint32_t h;

	if (wc->qp_num == d->ctrl.qp->qp_num) {
		vb_ctrl_send_done(d, wc);
		return 0;
	}
	if (!vb_map_get(&d->path_by_qpn, wc->qp_num, &h) || !(p = path_get(d, h)))
		return 0; /* a path destroyed since */
	if (wc->status == IBV_WC_SUCCESS) {
		d->send_used -= vb_sq_completed(&p->sq);
		return 0;
	}
	path_fail(d, p);
	*ev = (struct xp_dp_event){ .kind = XP_DP_EV_WRITE_DONE, .status = wc_errno(wc->status),
				    .token = wc->wr_id };
	return 1;
}

/* One receive completion; Return: events written to @ev (0 or 1). */
static uint32_t on_recv_wc(struct vb_dp *d, const struct ibv_wc *wc, struct xp_dp_event *ev)
{
	uint32_t h;

	if (wc->qp_num == d->ctrl.qp->qp_num)
		return (uint32_t)vb_ctrl_recv_done(d, wc, ev);
	d->srq_to_post++; /* every data completion took one shared receive */
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			d->st.writes_bad_key++; /* UC with an SRQ: a write the rkey refused */
		return 0;
	}
	if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
	    !vb_map_get(&d->path_by_qpn, wc->qp_num, &h) || !path_get(d, h))
		return 0; /* not a chunk, or its path is gone */
	*ev = (struct xp_dp_event){ .kind = XP_DP_EV_CHUNK, .imm = be32toh(wc->imm_data),
				    .len = wc->byte_len, .path = h };
	d->st.chunks_delivered++;
	return 1;
}

typedef uint32_t (*wc_fn)(struct vb_dp *d, const struct ibv_wc *wc, struct xp_dp_event *ev);

/* Drain what arm() stashed, then @cq, into at most @max events. */
static uint32_t drain_cq(struct vb_dp *d, struct ibv_cq *cq, struct ibv_wc *stash, uint32_t *n_stash,
			 uint32_t *stash_at, wc_fn fn, struct xp_dp_event *ev, uint32_t max)
{
	struct ibv_wc wc[VB_POLL_BATCH];
	uint32_t k = 0, used = 0;

	while (*stash_at < *n_stash && used < max) {
		k += fn(d, &stash[(*stash_at)++], ev + k);
		used++;
	}
	if (*stash_at == *n_stash)
		*stash_at = *n_stash = 0;
	while (used < max && !*n_stash) {
		int want = (int)(max - used < VB_POLL_BATCH ? max - used : VB_POLL_BATCH);
		int n = ibv_poll_cq(cq, want, wc);

		for (int i = 0; i < n; i++)
			k += fn(d, &wc[i], ev + k);
		used += n > 0 ? (uint32_t)n : 0;
		if (n < want)
			break;
	}
	return k;
}

static void repost_srq(struct vb_dp *d)
{
	if (d->srq_to_post && post_srq(d, d->srq_to_post) == 0)
		d->srq_to_post = 0;
}

static int verbs_poll(struct xp_dp *dp, struct xp_dp_event *ev, uint32_t max)
{
	struct vb_dp *d = to_vb(dp);
	uint32_t k = 0;

	vb_ctrl_repost(d);
	if (d->n_failed) {
		k = d->n_failed < max ? d->n_failed : max;
		memcpy(ev, d->failed, k * sizeof(*ev));
		memmove(d->failed, d->failed + k, (d->n_failed - k) * sizeof(*ev));
		d->n_failed -= k;
	}
	/* Send completions first: they free the slots the next drain fills. */
	k += drain_cq(d, d->send_cq, d->stash_send, &d->n_stash_send, &d->stash_send_at, on_send_wc,
		      ev + k, max - k);
	k += drain_cq(d, d->recv_cq, d->stash_recv, &d->n_stash_recv, &d->stash_recv_at, on_recv_wc,
		      ev + k, max - k);
	repost_srq(d);
	return (int)k;
}

/* ---- blocking ---------------------------------------------------------------------------------- */

static void take_async_events(struct vb_dp *d)
{
	struct ibv_async_event ae;
	uint32_t h;

	while (ibv_get_async_event(d->dev.ctx, &ae) == 0) {
		bool qp_error = ae.event_type == IBV_EVENT_QP_FATAL ||
				ae.event_type == IBV_EVENT_QP_REQ_ERR ||
				ae.event_type == IBV_EVENT_QP_ACCESS_ERR;

		if (qp_error && vb_map_get(&d->path_by_qpn, ae.element.qp->qp_num, &h) &&
		    path_get(d, h))
			path_fail(d, &d->paths[h]);
		ibv_ack_async_event(&ae);
	}
}

static void take_cq_events(struct vb_dp *d)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	while (ibv_get_cq_event(d->chan, &cq, &cq_ctx) == 0) {
		if (cq == d->send_cq)
			d->unacked_send_events++;
		else
			d->unacked_recv_events++;
		d->st.wakeups++;
	}
	ack_events(d, false);
}

static int verbs_arm(struct xp_dp *dp)
{
	struct vb_dp *d = to_vb(dp);
	int n, m;

	take_cq_events(d);
	take_async_events(d);
	repost_srq(d);
	if (d->n_failed || d->n_stash_send || d->n_stash_recv)
		return -EAGAIN;
	if (ibv_req_notify_cq(d->send_cq, 0) || ibv_req_notify_cq(d->recv_cq, 0))
		return -EIO;
	/* What completed before the request raises no event: look once more. */
	n = ibv_poll_cq(d->send_cq, VB_STASH, d->stash_send);
	m = ibv_poll_cq(d->recv_cq, VB_STASH, d->stash_recv);
	d->n_stash_send = n > 0 ? (uint32_t)n : 0;
	d->n_stash_recv = m > 0 ? (uint32_t)m : 0;
	return n > 0 || m > 0 ? -EAGAIN : 0;
}

static int verbs_wait_fd(struct xp_dp *dp)
{
	return to_vb(dp)->chan->fd;
}

static uint64_t verbs_now_ns(struct xp_dp *dp)
{
	return vb_mono_ns();
}

const struct xp_dp_ops xp_dp_verbs_ops = {
	.name = "verbs",
	.boot = &xp_boot_tcp_ops,
	.open = verbs_open,
	.close = verbs_close,
	.info = verbs_info,
	.stats = verbs_stats,
	.mr_reg = vb_mr_reg,
	.mr_dereg = vb_mr_dereg,
	.recv_key = vb_recv_key,
	.recv_key_release = vb_recv_key_release,
	.local_addr = vb_local_addr,
	.peer_open = vb_peer_open,
	.peer_close = vb_peer_close,
	.path_create = verbs_path_create,
	.path_connect = verbs_path_connect,
	.path_destroy = verbs_path_destroy,
	.send_slots = verbs_send_slots,
	.post_writes = verbs_post_writes,
	.post_ctrl = vb_post_ctrl,
	.poll = verbs_poll,
	.wait_fd = verbs_wait_fd,
	.arm = verbs_arm,
	.now_ns = verbs_now_ns,
};
