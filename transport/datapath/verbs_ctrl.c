// SPDX-License-Identifier: MIT
/*
 * verbs_ctrl.c - the verbs datapath's control channel: one UD QP per
 * instance, shared by every connection to every peer.
 *
 * A control packet is one UD SEND of at most one MTU (the port's active
 * MTU, 1,024 B on rxe over a 1,500-byte netdev; cfg.ctrl_mtu may ask for
 * less). UD is unreliable, and the core retransmits what matters (CTS, FIN,
 * ABORT, RESET; ACK records on ACK_REQ), so a lost or unreceivable packet
 * (no receive posted) costs a retransmission, never correctness.
 *
 * Addresses: this instance's control address is {GID, UD QPN}; a peer is
 * reached through an address handle made from its address at peer_open()
 * (which, on RoCE, resolves the peer's MAC: up to a second, then
 * -EHOSTUNREACH). Arriving packets are attributed to a peer by the source
 * GID in their GRH (on RoCE v2 over IPv4, an IPv4 header in the GRH's last
 * 20 bytes) and the source QPN. A source never opened gets a peer entry
 * without an address handle, so that the core can check "from its peer"
 * (an unknown source never matches a bound connection) and nothing blocks
 * on address resolution in poll(). Entries no connection holds are
 * recycled when the table is full, so a flood of forged sources can only
 * make packets from unopened sources be dropped.
 *
 * Buffers: one registered area, recv_depth slots of GRH + MTU, then
 * send_depth slots of MTU. A packet handed out by poll() stays valid until
 * the next poll(), which reposts its slot. Sends are signalled every
 * VB_SIGNAL_EVERY (verbs_sq.c) or when the queue is nearly full, and take
 * send slots in FIFO order (a send queue completes in order). Small
 * packets go inline.
 *
 * Blob (control address): verbs_blob.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_blob.h"
#include "verbs_int.h"
#include "wire.h"
#define DEFAULT_CTRL_MTU 1024
#define CTRL_RECV_DEPTH 256
#define CTRL_SEND_DEPTH 128

static uint8_t *recv_slot(struct vb_ctrl *c, uint32_t i)
{
	return c->buf + (size_t)i * (VB_GRH_BYTES + c->mtu);
}

static uint8_t *send_slot(struct vb_ctrl *c, uint32_t i)
{
	return c->buf + (size_t)c->recv_depth * (VB_GRH_BYTES + c->mtu) + (size_t)i * c->mtu;
}

static int post_recvs(struct vb_ctrl *c, const uint32_t *slots, uint32_t n)
{
	struct ibv_recv_wr wr[VB_POLL_BATCH], *bad;
	struct ibv_sge sge[VB_POLL_BATCH];

	while (n) {
		uint32_t k = n < VB_POLL_BATCH ? n : VB_POLL_BATCH;

		for (uint32_t i = 0; i < k; i++) {
			sge[i] = (struct ibv_sge){ .addr = (uintptr_t)recv_slot(c, slots[i]),
						   .length = VB_GRH_BYTES + c->mtu,
						   .lkey = c->mr->lkey };
			wr[i] = (struct ibv_recv_wr){ .wr_id = slots[i], .sg_list = &sge[i],
						      .num_sge = 1,
						      .next = i + 1 < k ? &wr[i + 1] : NULL };
		}
		if (ibv_post_recv(c->qp, wr, &bad))
			return -EIO;
		slots += k;
		n -= k;
	}
	return 0;
}

static int ud_connect(struct vb_dp *d)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0,
				 .port_num = d->dev.port, .qkey = VB_QKEY };
	int rc = ibv_modify_qp(d->ctrl.qp, &a,
			       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);

	if (rc)
		return -rc;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	rc = ibv_modify_qp(d->ctrl.qp, &a, IBV_QP_STATE);
	if (rc)
		return -rc;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0 };
	rc = ibv_modify_qp(d->ctrl.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return rc ? -rc : 0;
}

static int ctrl_mtu_pick(struct vb_dp *d, struct pcm_diag *diag)
{
	uint32_t want = d->cfg.ctrl_mtu;
	char where[160];

	if (!want)
		want = d->dev.mtu_bytes < DEFAULT_CTRL_MTU ? d->dev.mtu_bytes : DEFAULT_CTRL_MTU;
	if (want < XP_WIRE_MIN_MTU || want > d->dev.mtu_bytes || want > XP_WIRE_MAX_MTU) {
		vb_where(&d->dev, where, sizeof(where));
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: %s: ctrl_mtu %u does not fit: a control packet is one UD message "
			 "of %u to %u bytes (the port's active MTU)",
			 where, want, XP_WIRE_MIN_MTU, d->dev.mtu_bytes);
		return -EINVAL;
	}
	d->ctrl.mtu = want;
	return 0;
}

int vb_ctrl_open(struct vb_dp *d, struct pcm_diag *diag)
{
	struct vb_ctrl *c = &d->ctrl;
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_UD, .send_cq = d->send_cq,
				       .recv_cq = d->recv_cq };
	uint32_t *slots;
	size_t bytes;
	char where[160];
	int rc;

	vb_where(&d->dev, where, sizeof(where));
	rc = ctrl_mtu_pick(d, diag);
	if (rc < 0)
		return rc;
	c->recv_depth = CTRL_RECV_DEPTH;
	c->send_depth = CTRL_SEND_DEPTH;
	bytes = (size_t)c->recv_depth * (VB_GRH_BYTES + c->mtu) + (size_t)c->send_depth * c->mtu;
	c->buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
	c->handed = calloc(c->recv_depth, sizeof(*c->handed));
	c->peers = calloc(VB_MAX_PEERS, sizeof(*c->peers));
	if (!c->buf || !c->handed || !c->peers || vb_map_init(&c->peer_map, VB_MAX_PEERS) < 0 ||
	    vb_sq_init(&c->sq, c->send_depth) < 0)
		return -ENOMEM;
	c->mr = ibv_reg_mr(d->pd, c->buf, bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr)
		return vb_diag_pin(&d->dev, "the control buffers", bytes, errno ? errno : ENOMEM,
				   diag);
	ia.cap = (struct ibv_qp_cap){ .max_send_wr = c->send_depth, .max_recv_wr = c->recv_depth,
				      .max_send_sge = 1, .max_recv_sge = 1,
				      .max_inline_data = d->max_inline };
	c->qp = ibv_create_qp(d->pd, &ia);
	if (!c->qp) {
		rc = -errno;
		snprintf(diag->msg, sizeof(diag->msg), "verbs: %s: creating the UD control QP: %s",
			 where, strerror(-rc));
		return rc;
	}
	rc = ud_connect(d);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "verbs: %s: the UD control QP to RTS: %s",
			 where, strerror(-rc));
		return rc;
	}
	slots = calloc(c->recv_depth, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->recv_depth; i++)
		slots[i] = i;
	rc = post_recvs(c, slots, c->recv_depth);
	free(slots);
	if (rc < 0)
		snprintf(diag->msg, sizeof(diag->msg), "verbs: %s: posting control receives: %s",
			 where, strerror(-rc));
	return rc;
}

void vb_ctrl_close(struct vb_dp *d)
{
	struct vb_ctrl *c = &d->ctrl;

	for (uint32_t i = 0; c->peers && i < VB_MAX_PEERS; i++)
		if (c->peers[i].ah)
			ibv_destroy_ah(c->peers[i].ah);
	if (c->qp)
		ibv_destroy_qp(c->qp);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	free(c->buf);
	free(c->handed);
	free(c->peers);
	vb_map_fini(&c->peer_map);
	vb_sq_fini(&c->sq);
	*c = (struct vb_ctrl){ 0 };
}

/* ---- peers -------------------------------------------------------------------------------- */

static uint32_t peer_hash(const union ibv_gid *gid, uint32_t qpn)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (int i = 0; i < 16; i++)
		h = (h ^ gid->raw[i]) * 16777619u;
	for (int i = 0; i < 3; i++)
		h = (h ^ ((qpn >> (8 * i)) & 0xff)) * 16777619u;
	return h;
}

/*
 * The peer (@gid, @qpn), made if new (evicting one nobody holds when the
 * table is full). Return: its handle, or -ENOSPC.
 */
static int peer_find_or_add(struct vb_ctrl *c, const union ibv_gid *gid, uint32_t qpn)
{
	uint32_t h = peer_hash(gid, qpn), i;
	struct vb_peer *p;

	if (vb_map_get(&c->peer_map, h, &i)) {
		p = &c->peers[i];
		if (p->qpn == qpn && memcmp(&p->gid, gid, sizeof(*gid)) == 0)
			return (int)i;
		if (p->refs)
			return -ENOSPC; /* a 32-bit hash collision with a peer in use */
		/* a collision with an idle entry: take its place */
	} else {
		for (i = 0; i < VB_MAX_PEERS && c->peers[i].in_use; i++)
			;
		for (uint32_t n = 0; i == VB_MAX_PEERS && n < VB_MAX_PEERS; n++) {
			uint32_t j = (c->evict_next + n) % VB_MAX_PEERS;

			if (!c->peers[j].refs)
				i = j;
		}
		if (i == VB_MAX_PEERS)
			return -ENOSPC;
		c->evict_next = (i + 1) % VB_MAX_PEERS;
	}
	p = &c->peers[i];
	if (p->in_use) {
		vb_map_del(&c->peer_map, p->key);
		if (p->ah)
			ibv_destroy_ah(p->ah);
	}
	*p = (struct vb_peer){ .in_use = true, .qpn = qpn, .gid = *gid, .key = h };
	vb_map_put(&c->peer_map, h, i); /* cannot fail: as many map entries as peers */
	return (int)i;
}

void vb_local_addr(struct xp_dp *dp, struct xp_dp_blob *addr)
{
	struct vb_dp *d = to_vb(dp);

	struct vb_ctrl_blob f = { .qpn = d->ctrl.qp->qp_num, .lid = d->dev.lid };

	memcpy(f.gid, d->dev.gid.raw, 16);
	vb_ctrl_blob_encode(&f, addr);
}

static int make_ah(struct vb_dp *d, struct vb_peer *p, struct pcm_diag *diag)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.grh = { .dgid = p->gid, .sgid_index = (uint8_t)d->dev.gid_index,
			 .hop_limit = VB_HOP_LIMIT },
		.dlid = p->lid,
		.port_num = d->dev.port,
	};

	errno = 0;
	p->ah = ibv_create_ah(d->pd, &a);
	if (p->ah)
		return 0;
	return vb_diag_unreachable(&d->dev, "the control address handle", &p->gid, p->qpn,
				   errno ? errno : EINVAL, diag);
}

int vb_peer_open(struct xp_dp *dp, const struct xp_dp_blob *addr, uint32_t *peer,
		 struct pcm_diag *diag)
{
	struct vb_dp *d = to_vb(dp);
	struct vb_ctrl *c = &d->ctrl;
	struct vb_ctrl_blob f;
	const char *why;
	union ibv_gid gid;
	char where[160];
	int i, rc;

	vb_where(&d->dev, where, sizeof(where));
	if (vb_ctrl_blob_decode(addr, &f, &why) < 0) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: %s: not a verbs control address (%u bytes; bad %s)", where,
			 addr->len, why);
		return -EINVAL;
	}
	memcpy(gid.raw, f.gid, 16);
	rc = vb_check_peer_gid(&d->dev, &gid, "control peer", diag);
	if (rc < 0)
		return rc;
	i = peer_find_or_add(c, &gid, f.qpn);
	if (i < 0) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: %s: all %u control peers are in use", where, VB_MAX_PEERS);
		return i;
	}
	c->peers[i].lid = f.lid;
	if (!c->peers[i].ah) {
		rc = make_ah(d, &c->peers[i], diag);
		if (rc < 0)
			return rc;
	}
	c->peers[i].refs++;
	*peer = (uint32_t)i;
	return 0;
}

void vb_peer_close(struct xp_dp *dp, uint32_t peer)
{
	struct vb_ctrl *c = &to_vb(dp)->ctrl;

	/* The address handle stays cached for the next connection to that peer. */
	if (peer < VB_MAX_PEERS && c->peers[peer].in_use && c->peers[peer].refs)
		c->peers[peer].refs--;
}

/* ---- packets ------------------------------------------------------------------------------ */

int vb_post_ctrl(struct xp_dp *dp, uint32_t peer, const void *bytes, uint32_t len)
{
	struct vb_dp *d = to_vb(dp);
	struct vb_ctrl *c = &d->ctrl;
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .num_sge = 1 }, *bad;
	struct ibv_sge sge;
	const struct vb_peer *p;
	bool last, inl;
	int rc;

	if (peer >= VB_MAX_PEERS || !c->peers[peer].in_use || !c->peers[peer].ah)
		return -EINVAL;
	if (len > c->mtu)
		return -EMSGSIZE;
	if (c->sq.outstanding >= c->send_depth) {
		d->st.ctrl_dropped++;
		return -EAGAIN;
	}
	p = &c->peers[peer];
	inl = len <= d->max_inline;
	sge = (struct ibv_sge){ .addr = (uintptr_t)bytes, .length = len, .lkey = c->mr->lkey };
	if (!inl) {
		memcpy(send_slot(c, c->send_next), bytes, len);
		sge.addr = (uintptr_t)send_slot(c, c->send_next);
	}
	last = c->sq.outstanding + 1 + VB_SIGNAL_EVERY > c->send_depth;
	wr.send_flags = (inl ? IBV_SEND_INLINE : 0) |
			(vb_sq_must_signal(&c->sq, last) ? IBV_SEND_SIGNALED : 0);
	wr.sg_list = &sge;
	wr.wr.ud.ah = p->ah;
	wr.wr.ud.remote_qpn = p->qpn;
	wr.wr.ud.remote_qkey = VB_QKEY;
	rc = ibv_post_send(c->qp, &wr, &bad);
	if (rc) {
		d->st.ctrl_dropped++;
		return -rc;
	}
	vb_sq_posted(&c->sq, wr.send_flags & IBV_SEND_SIGNALED);
	c->send_next = (c->send_next + 1) % c->send_depth;
	d->st.ctrl_sent++;
	return 0;
}

void vb_ctrl_send_done(struct vb_dp *d, const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_SUCCESS) {
		vb_sq_completed(&d->ctrl.sq);
		return;
	}
	/* A failed control send: lost like a dropped packet, and its WRs flush. */
	d->st.ctrl_dropped++;
	vb_sq_reset(&d->ctrl.sq);
}

/* The source GID of a UD packet from its GRH area (untrusted bytes). */
static bool grh_source(const uint8_t *grh, union ibv_gid *src)
{
	if ((grh[0] >> 4) == 6) { /* an IPv6 header or IB GRH: the source at byte 8 */
		memcpy(src->raw, grh + 8, 16);
		return true;
	}
	if ((grh[20] >> 4) == 4) { /* RoCE v2 over IPv4: the IPv4 header in the last 20 bytes */
		memset(src->raw, 0, 10);
		src->raw[10] = 0xff;
		src->raw[11] = 0xff;
		memcpy(src->raw + 12, grh + 20 + 12, 4);
		return true;
	}
	return false;
}

int vb_ctrl_recv_done(struct vb_dp *d, const struct ibv_wc *wc, struct xp_dp_event *ev)
{
	struct vb_ctrl *c = &d->ctrl;
	uint32_t slot = (uint32_t)wc->wr_id;
	union ibv_gid src;
	uint8_t *b;
	int peer;

	if (slot >= c->recv_depth)
		return 0; /* not ours: cannot happen */
	b = recv_slot(c, slot);
	if (wc->status != IBV_WC_SUCCESS || wc->byte_len < VB_GRH_BYTES ||
	    wc->byte_len > VB_GRH_BYTES + c->mtu || !(wc->wc_flags & IBV_WC_GRH) ||
	    !grh_source(b, &src) || (peer = peer_find_or_add(c, &src, wc->src_qp & 0xffffff)) < 0) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			d->st.ctrl_dropped++;
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			post_recvs(c, &slot, 1);
		return 0;
	}
	c->handed[c->n_handed++] = slot;
	*ev = (struct xp_dp_event){ .kind = XP_DP_EV_CTRL,
				    .len = wc->byte_len - VB_GRH_BYTES,
				    .peer = (uint32_t)peer,
				    .bytes = b + VB_GRH_BYTES };
	d->st.ctrl_received++;
	return 1;
}

void vb_ctrl_repost(struct vb_dp *d)
{
	struct vb_ctrl *c = &d->ctrl;

	if (c->n_handed && post_recvs(c, c->handed, c->n_handed) == 0)
		c->n_handed = 0;
}
