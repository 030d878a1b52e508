/* SPDX-License-Identifier: MIT */
/*
 * pcmfi_wire.h - what the pcm provider puts on a pcm connection.
 *
 * libpcmtransport carries whole messages, each into the peer's next posted
 * receive (FIFO). The provider keeps a ring of fixed-size receives posted on
 * every connection and cuts everything it sends into segments that fit one:
 * each pcm message is one segment, a 64-byte header and up to
 * (segment bytes - 64) bytes of payload. The header says what the segment
 * is: a connection-management message (the connect request with the
 * dialer's address and private data, the accept, the reject), a piece of a
 * libfabric message, a piece of an RMA write, a read request, a piece of a
 * read response, or the acknowledgement of a write.
 *
 * Segments of one operation go out in order and operations go out one after
 * another, so a message's pieces arrive contiguous (other operations' pieces
 * never come between them). The connect request and its accept say how
 * many bytes each side's receives hold; each side then sends segments no
 * longer than the other's. Header fields are in the host's byte order: both
 * ends run on machines of one byte order (as ofi_rxm above also assumes),
 * and the magic tells a peer of the other order from garbage.
 */
#ifndef PCMFI_WIRE_H
#define PCMFI_WIRE_H

#include <netinet/in.h>
#include <stdint.h>

#define PCMFI_WIRE_MAGIC 0x4650u /* "PF" */
#define PCMFI_WIRE_VERSION 1u
#define PCMFI_WIRE_HDR_BYTES 64u

enum pcmfi_wire_type {
	PCMFI_W_CM_REQ = 1,  /* dialer -> listener: struct pcmfi_wire_cm_req + private data */
	PCMFI_W_CM_ACCEPT,   /* listener -> dialer: private data */
	PCMFI_W_CM_REJECT,   /* listener -> dialer: private data; the connection ends */
	PCMFI_W_MSG,         /* a piece of a message: offset, total, data */
	PCMFI_W_WRITE,       /* a piece of an RMA write: addr + offset, key, total, op_id, data */
	PCMFI_W_READ_REQ,    /* read total bytes at addr, key; answer with op_id */
	PCMFI_W_READ_RESP,   /* a piece of a read's data at offset, or status */
	PCMFI_W_RMA_ACK,     /* write op_id applied (status 0) or refused */
	PCMFI_W_TYPE_MAX,
};

/* pcmfi_wire_hdr.flags */
#define PCMFI_WF_LAST (1u << 0)    /* the operation's last segment */
#define PCMFI_WF_CQ_DATA (1u << 1) /* data is remote CQ data */

struct pcmfi_wire_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t type;   /* enum pcmfi_wire_type */
	uint8_t flags;  /* PCMFI_WF_* */
	uint8_t pad[3];
	uint32_t len;   /* payload bytes after the header */
	int32_t status; /* READ_RESP, RMA_ACK: 0 or a negative FI_E* code */
	uint64_t total;  /* the operation's bytes */
	uint64_t offset; /* this segment's place in them */
	uint64_t addr;   /* RMA: the target address of the operation's first byte;
			  * CM_REQ, CM_ACCEPT: the bytes the sender's receives hold */
	uint64_t key;    /* RMA: the target region's key */
	uint64_t data;   /* remote CQ data (PCMFI_WF_CQ_DATA) */
	uint64_t op_id;  /* RMA: the initiator's operation, echoed in the answer */
};

_Static_assert(sizeof(struct pcmfi_wire_hdr) == PCMFI_WIRE_HDR_BYTES, "wire header size");

/* CM_REQ's payload before the dialer's private data. */
struct pcmfi_wire_cm_req {
	struct sockaddr_in src; /* the dialer's address (fi_getname of its endpoint) */
	uint32_t paramlen;
	uint32_t pad;
};

#endif /* PCMFI_WIRE_H */
