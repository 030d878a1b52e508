/* SPDX-License-Identifier: MIT */
/*
 * raw.h - the NIC's raw, UC-like queue pairs (raw.c), for the softnic
 * datapath; uet.h describes what they do.
 */
#ifndef PCM_UET_RAW_H
#define PCM_UET_RAW_H

#include "nic.h"

/* A message waiting in a raw QP's send queue. */
struct uet_rawmsg {
	uint64_t bytes;
	uint64_t cookie;
	uint32_t first_psn;
	uint32_t npkts;
	uint32_t sent;        /* packets handed to PCIe */
};

/* A raw queue pair: its send queue and pacing, and the receiver's message in progress. */
struct uet_rawqp {
	uint32_t id;
	uint32_t src, dst;
	uint16_t entropy;
	bool control;         /* control class: no egress-pool reservation, not trimmable */
	uint64_t rate_bps;    /* NIC pacing; 0: line rate */
	uint64_t ps_per_byte_q16;
	uint64_t next_ps;     /* paced: the earliest time of the next packet */
	uint32_t next_psn;
	struct uet_rawmsg *sq;
	uint32_t sq_head, sq_n, sq_cap;
	bool ready;           /* in its host's ready ring */
	bool pace_armed;
	uint32_t expected;    /* receiver: next PSN */
	uint32_t rx_first;    /* first PSN of the last message seen, UET_NONE before any */
	uint64_t rx_cookie;
	bool rx_active;
	bool rx_ce;           /* a packet of the message in progress was CE-marked */
};

/* A host's raw transmit state: QPs with packets to send, served round robin. */
struct uet_rawhost {
	uint32_t id;
	uint32_t *ready;      /* QP ids, a ring */
	uint32_t rq_head, rq_n, rq_cap;
	bool blocked;         /* the egress pool refused a packet */
	bool wake_armed;
};

struct uet_raw {
	struct uet_rawqp **qps;
	uint32_t n, cap;
	struct uet_rawhost *hosts;
	uint32_t n_hosts;
	uint64_t queued_pkts; /* in send queues, not yet handed to PCIe */
	struct uet_raw_ops ops;
};

int uet_raw_init(struct uet_raw *r, uint32_t n_hosts);
int uet_raw_qp_add(struct uet_raw *r, uint32_t src, uint32_t dst,
		   const struct uet_raw_qp_attr *attr);
int uet_raw_set_rate(struct uet_raw *r, uint32_t qp, uint64_t rate_bps);
int uet_raw_post(struct uet_raw *r, struct uet_nics *ns, uint32_t qp, uint64_t bytes,
		 uint64_t cookie);
/* A raw packet starts serialization on its NIC's port, ending at @end_ps. */
void uet_raw_tx_start(struct uet_raw *r, struct uet_nics *ns, struct uet_nic *nic,
		      const struct uet_pkt *pkt, uint64_t end_ps);
/* A raw packet arrived at @nic. */
void uet_raw_receive(struct uet_raw *r, struct uet_nics *ns, struct uet_nic *nic,
		     struct uet_pkt *pkt);
/* UET_EV_RAW_WAKE: @h's egress pool drained; UET_EV_RAW_PACE: @q's pacing gap is over. */
void uet_raw_wake(struct uet_raw *r, struct uet_nics *ns, struct uet_rawhost *h);
void uet_raw_pace(struct uet_raw *r, struct uet_nics *ns, struct uet_rawqp *q);
void uet_raw_fini(struct uet_raw *r);

#endif /* PCM_UET_RAW_H */
