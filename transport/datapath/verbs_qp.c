// SPDX-License-Identifier: MIT
/*
 * verbs_qp.c - the verbs datapath's QP state transitions: RESET -> INIT,
 * then INIT -> RTR -> RTS towards a remote QP, with the RC timers. Used by
 * the data paths (verbs.c) and by the memory-window QP connected to itself
 * (verbs_keys.c).
 */
#include "verbs_int.h"

/*
 * RC: ACK timeout 4.096 us x 2^17 = 537 ms, 6 retries (7 means "forever" to
 * rdma_rxe: an RC write to a peer that is gone would never fail), so a dead
 * peer is declared after about 3.8 s; RNR retried forever. The timeout is
 * long because the NIC's own retries have to outlast a stalled peer: with
 * 2^14 (67 ms, 470 ms in all) a soft-RoCE peer on a loaded host (rxe in the
 * qemu VM at load average 17) ran out of retries in the middle of a 4 MiB
 * RC transfer and the connection failed. A lost packet is resent on the
 * responder's sequence NAK well before the timeout; only a lost tail waits
 * for it.
 */
#define RC_TIMEOUT 17
#define RC_RETRY_CNT 6
#define RC_RNR_RETRY 7
#define RC_MIN_RNR_TIMER 1

int vb_qp_init(struct vb_dp *d, struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0,
				 .port_num = d->dev.port, .qp_access_flags = access };

	return -ibv_modify_qp(qp, &a,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int vb_qp_connect(struct vb_dp *d, struct ibv_qp *qp, bool rc, uint32_t local_psn,
		  const union ibv_gid *gid, uint16_t lid, uint32_t qpn, uint32_t psn,
		  enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu,
		.dest_qp_num = qpn,
		.rq_psn = psn,
		.ah_attr = { .is_global = 1,
			     .grh = { .dgid = *gid, .sgid_index = (uint8_t)d->dev.gid_index,
				      .hop_limit = VB_HOP_LIMIT },
			     .dlid = lid,
			     .port_num = d->dev.port },
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	int err;

	if (rc) {
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = RC_MIN_RNR_TIMER;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	err = ibv_modify_qp(qp, &a, mask);
	if (err)
		return -err;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = local_psn };
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (rc) {
		a.timeout = RC_TIMEOUT;
		a.retry_cnt = RC_RETRY_CNT;
		a.rnr_retry = RC_RNR_RETRY;
		a.max_rd_atomic = 1;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	err = ibv_modify_qp(qp, &a, mask);
	return err ? -err : 0;
}
