/* SPDX-License-Identifier: MIT */
/*
 * raw.h - the NIC's raw, UC-like queue pairs (raw.c), for the softnic
 * datapath; uet.h describes what they do.
 */
#ifndef PCM_UET_RAW_H
#define PCM_UET_RAW_H

#include "nic.h"

/* A raw queue pair: sender PSNs and the receiver's message in progress. */
struct uet_rawqp {
	uint32_t src, dst;
	uint16_t entropy;
	uint32_t next_psn;
	uint32_t expected;    /* receiver: next PSN */
	uint32_t rx_first;    /* first PSN of the last message seen, UET_NONE before any */
	uint64_t rx_cookie;
	bool rx_active;
};

struct uet_raw {
	struct uet_rawqp *qps;
	uint32_t n, cap;
	struct uet_raw_ops ops;
};

int uet_raw_qp_add(struct uet_raw *r, uint32_t n_hosts, uint32_t src, uint32_t dst,
		   uint16_t entropy);
int uet_raw_post(struct uet_raw *r, struct uet_nics *ns, uint32_t qp, uint64_t bytes,
		 uint64_t cookie);
/* A raw packet starts serialization on its NIC's port. */
void uet_raw_tx_start(struct uet_nics *ns, struct uet_nic *nic, const struct uet_pkt *pkt);
/* A raw packet arrived at @nic. */
void uet_raw_receive(struct uet_raw *r, struct uet_nics *ns, struct uet_nic *nic,
		     struct uet_pkt *pkt);
void uet_raw_fini(struct uet_raw *r);

#endif /* PCM_UET_RAW_H */
