/* SPDX-License-Identifier: MIT */
/*
 * events.h - the types of the emulation's DES events and what each carries.
 * The fabric serves ARRIVE and PORT_FREE, the NIC the rest; the run
 * (sim.c) dispatches them.
 */
#ifndef PCM_UET_EVENTS_H
#define PCM_UET_EVENTS_H

enum uet_ev_type {
	UET_EV_ARRIVE = 1,   /* obj: packet reaching pkt->node */
	UET_EV_PORT_FREE,    /* obj: port whose serializer is free */
	UET_EV_FETCH_DONE,   /* obj: data packet whose payload arrived over PCIe */
	UET_EV_TX_PASS,      /* obj: NIC, transmit process (prefetch buffer drained) */
	UET_EV_POOL_WAKE,    /* obj: NIC, egress pool drained to half */
	UET_EV_ACK_RELEASE,  /* obj: ACK packet held for the PCIe service time */
	UET_EV_RTO,          /* obj: PDC whose earliest retransmission timer is due */
	UET_EV_PACE,         /* obj: group, pacing gap elapsed */
	UET_EV_MSG_POST,     /* arg: message id */
	UET_EV_STATS,        /* NDStatsReportInterval tick */
	UET_EV_FLOW_SAMPLE,  /* cwnd/rate sample tick */
	UET_EV_LINK,         /* obj: failure, arg: 1 down / 0 up */
	UET_EV_TICK,         /* obj: group whose package has ELAPSED_TIME triggers */
	UET_EV_CREDIT_TICK,  /* obj: NIC whose receiver-credit instance has demand */
	UET_EV_DOORBELL,     /* obj: PDC whose message's doorbell delay is over */
	UET_EV_CREDIT_RETRY, /* obj: group stopped for want of credit, asking again */
	UET_EV_RAW_WAKE,     /* obj: raw host whose egress pool drained to half */
	UET_EV_RAW_PACE,     /* obj: raw QP whose pacing gap is over */
	UET_EV_COUNT,
};

#endif /* PCM_UET_EVENTS_H */
