/* SPDX-License-Identifier: MIT */
/*
 * pcm.h - types and enums shared by handlers, shells and datapaths.
 *
 * The numeric values of every enum here are part of the handler package
 * contract: they match the public PCM SDK so that a package written for it
 * compiles unchanged. New signal and control types are appended after the
 * SDK's, never inserted.
 *
 * Units: every time-valued signal (RTT, ELAPSED_TIME, QUEUE_DELAY) and every
 * `now` handed to a shell is in picoseconds, the fabric profile's unit
 * (FABRIC_BRTT is in ps). Byte-valued signals are bytes.
 */
#ifndef PCM_PCM_H
#define PCM_PCM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t pcm_uint;
typedef int64_t pcm_int;
typedef double pcm_float;

#define PCM_FORCE_INLINE inline __attribute__((always_inline))

#ifndef STATIC_ASSERT
#define STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* MIN and MAX, except in a handler package's build (see pcm_minmax.h). */
#ifndef HANDLER_BUILD
#include "pcm_minmax.h"
#endif

/* Return codes of algorithm_main(). */
typedef enum pcm_err {
	PCM_SUCCESS = 0,
	PCM_ERROR = 1,
} pcm_err_t;

/* Signal types: what a datapath measures. Values 0..13 are the SDK's. */
typedef enum pcm_signal {
	PCM_SIG_ACK = 0,               /* ACKs received (count) */
	PCM_SIG_RTO = 1,               /* retransmission timeouts (count) */
	PCM_SIG_NACK = 2,              /* NACKs received (count) */
	PCM_SIG_ECN = 3,               /* ECN-echoing ACKs (count) */
	PCM_SIG_RTT = 4,               /* RTT sample, ps */
	PCM_SIG_DATA_TX = 5,           /* bytes acknowledged */
	PCM_SIG_DATA_NACKED = 6,       /* bytes NACKed */
	PCM_SIG_IN_FLIGHT = 7,         /* bytes in flight */
	PCM_SIG_ELAPSED_TIME = 8,      /* ps since the flow started (see pcm-handler(7)) */
	PCM_SIG_ACK_EV = 9,            /* entropy value of the last ACK */
	PCM_SIG_ECN_EV = 10,           /* entropy value of the last ECN-marked ACK */
	PCM_SIG_NACK_EV = 11,          /* entropy value of the last NACK */
	PCM_SIG_TX_READY_PKTS = 12,    /* packets ready to send (LB demand) */
	PCM_SIG_TX_BACKLOG_BYTES = 13, /* bytes waiting to be sent */
	/* pcm extensions */
	PCM_SIG_CNP = 14,              /* congestion notification packets (count) */
	PCM_SIG_TX_EVENT = 15,         /* transmit bursts completed (count), DOCA-style */
	PCM_SIG_CREDIT_REQUEST = 16,   /* receiver: bytes a sender asks credit for */
	PCM_SIG_QUEUE_DELAY = 17,      /* receiver-reported queueing/service delay, ps */
	PCM_SIG_FLOW_SEED = 18,        /* per-flow constant, never 0, that tells flows apart */
	PCM_SIG_BASE_RTT = 19,         /* the flow's base RTT as the datapath measured it, ps */
	PCM_SIG_COUNT = 20,
} pcm_signal_t;

/* Accumulators. */
typedef enum signal_accum {
	PCM_SIG_ACCUM_SUM = 0,
	PCM_SIG_ACCUM_MIN = 1,
	PCM_SIG_ACCUM_MAX = 2,
	PCM_SIG_ACCUM_LAST = 3,
	PCM_SIG_ACCUM_COUNT = 4,
} pcm_signal_accum_t;

/* Trigger comparison modes. PCM_SIG_TRIGGER_NONE marks a signal without one. */
typedef enum signal_trigger {
	PCM_SIG_TRIGGER_RAW = 0,
	PCM_SIG_TRIGGER_DELTA = 1,
	PCM_SIG_TRIGGER_MAGNITUDE = 2,
	PCM_SIG_TRIGGER_NONE = 3,
} pcm_signal_trigger_t;

/* Trigger operators, in the spec's spelling order: > < >= <= == != & | ^ && || */
typedef enum pcm_trigger_op {
	PCM_TRIG_OP_GT = 0,
	PCM_TRIG_OP_LT,
	PCM_TRIG_OP_GE,
	PCM_TRIG_OP_LE,
	PCM_TRIG_OP_EQ,
	PCM_TRIG_OP_NE,
	PCM_TRIG_OP_BIT_AND,
	PCM_TRIG_OP_BIT_OR,
	PCM_TRIG_OP_BIT_XOR,
	PCM_TRIG_OP_AND,
	PCM_TRIG_OP_OR,
	PCM_TRIG_OP_COUNT,
} pcm_trigger_op_t;

/* Control types: what a datapath enforces. Values 0..2 are the SDK's. */
typedef enum pcm_control {
	PCM_CTRL_CWND = 0,              /* congestion window, bytes */
	PCM_CTRL_RATE = 1,              /* pacing rate, PCM_RATE_ONE = line rate */
	PCM_CTRL_EV = 2,                /* entropy value for the next packet */
	PCM_CTRL_CUMULATIVE_CREDIT = 3, /* receiver: cumulative bytes of credit granted */
	PCM_CTRL_COUNT = 4,
} pcm_control_t;

/* A handler writes this to a signal to re-arm it: reset to its initial value
 * and reset its trigger reference. */
#define PCM_SIG_REARM (UINT64_MAX - 1)
/* A trigger threshold of this value means "no trigger". */
#define PCM_SIG_NO_TRIGGER (UINT64_MAX)

/*
 * Entropy values are 16-bit (a UDP source port). In PCM_SIG_NACK_EV, bit 16
 * marks a NACK for a packet trimmed on the last hop, the path-feedback
 * distinction REPS needs; datapaths without trimming never set it.
 */
#define PCM_EV_NACK_LAST_HOP ((pcm_uint)1 << 16)
#define PCM_EV_MASK ((pcm_uint)0xffff)

/* Rate control scale: PCM_RATE_ONE is 100% of line rate (DOCA PCC's 1 << 20). */
#define PCM_RATE_ONE ((pcm_uint)1 << 20)

#endif /* PCM_PCM_H */
