/* SPDX-License-Identifier: MIT */
/*
 * tp_util.h - the integration tests' use of libpcmtransport (daemon mode):
 * open an endpoint on a pcmd, wait for one completion, and a seeded sender
 * and receiver that check every byte of every message.
 */
#ifndef PCMD_TEST_TP_UTIL_H
#define PCMD_TEST_TP_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "pcm/transport.h"

int tp_open(const char *sock, size_t region_bytes, struct pcm_tp_endpoint **out);

/*
 * Poll until a completion of @op arrives (others are stored in @other if not NULL,
 * up to *n_other). Return: 0, -ETIMEDOUT.
 */
int tp_wait_op(struct pcm_tp_endpoint *ep, enum pcm_tp_op op, struct pcm_tp_completion *out,
	       int timeout_ms);

/*
 * @b listens on @addr and accepts; @a connects (with @opts, may be NULL). Return: 0 with both
 * ends, or the first failing status (-ETIMEDOUT when a completion never came).
 */
int tp_pair(struct pcm_tp_endpoint *a, struct pcm_tp_endpoint *b, const char *addr,
	    const struct pcm_tp_conn_opts *opts, struct pcm_tp_conn **ca, struct pcm_tp_conn **cb);

/*
 * One @len-byte message of seeded bytes from @a (@ca) to @b (@cb), checked on arrival.
 * Return: 0, the failing status, or -EIO when the bytes differ.
 */
int tp_exchange(struct pcm_tp_endpoint *a, struct pcm_tp_conn *ca, struct pcm_tp_endpoint *b,
		struct pcm_tp_conn *cb, size_t len, uint64_t seed);

/* Size of message @k of a seeded stream: 0..max_bytes, with the edge sizes first. */
size_t tp_msg_size(uint64_t seed, uint32_t k, size_t max_bytes);

struct tp_stream {
	uint64_t seed;
	uint32_t first;	 /* index of the first message (a stream sent in parts) */
	uint32_t n_msgs; /* messages in this part */
	size_t max_bytes;
	uint32_t window; /* messages in flight */
	uint64_t bytes;	 /* out: bytes moved */
	uint32_t done;	 /* out: messages completed */
	int first_error; /* out: first failing completion status, 0 if none */
	char why[256];	 /* out: what went wrong */
};

/*
 * Connect to @addr and send the stream. Return: 0 when every send completed with
 * success; -EIO otherwise (why says which).
 */
int tp_send_stream(struct pcm_tp_endpoint *ep, const char *addr, struct tp_stream *s);

/* Send (@send_side) or receive one part of a stream on an established conn. */
int tp_stream_on(struct pcm_tp_endpoint *ep, struct pcm_tp_conn *conn, int send_side,
		 struct tp_stream *s);

/*
 * Listen on @addr (unless NULL: already listening), accept one connection and
 * receive the stream, checking each message's size and bytes. @ready (if >= 0)
 * gets one byte written once listening. Return: 0 or -EIO.
 */
int tp_recv_stream(struct pcm_tp_endpoint *ep, const char *addr, int ready, struct tp_stream *s);

#endif /* PCMD_TEST_TP_UTIL_H */
