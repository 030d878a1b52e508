/* SPDX-License-Identifier: MIT */
/*
 * imm.h - the 32-bit immediate of a data chunk's WRITE_WITH_IMM.
 *
 *   [31]     last chunk of its message
 *   [30]     transmission parity: 0 for the first transmission of the chunk,
 *            flipping on each retransmission (lets the receiver's ACK name
 *            the transmission it saw, for Karn's rule)
 *   [29:16]  the receiver's connection id (14 bits)
 *   [15:12]  message slot: message sequence number mod 16 (4 bits)
 *   [11:0]   chunk index within the message (12 bits)
 *
 * The limits this sets, per engine (one core): 16,384 connections, 4,096
 * chunks per message, and 16 message slots per connection, of which at
 * most XP_MSG_WINDOW = 8 messages are in flight: the receiver advertises
 * receive k only once receive k - 8 has finished. The other half is the
 * guard against a stale chunk: on UC a chunk of message k can be placed by
 * the NIC under k's key just before the key is released and reach the core
 * (through the completion queue) after k completed; with 16 in flight the
 * slot could then already hold k + 16, which would count the chunk while
 * its bytes sit in k's buffer. With 8 in flight, k + 16 starts only after
 * k + 8 finished, and every chunk of k + 8 was written after k's key died,
 * so it is reported after the stale chunk, which therefore finds the slot
 * still remembering k (recv.c). A chunk still on the wire when its key dies
 * is refused by the datapath (per-receive keys, datapath.h). The value is
 * carried in network byte order on the wire (verbs' imm_data is big-endian);
 * these helpers work on the host-order value.
 *
 * Every bit pattern decodes to in-range fields; whether they name a live
 * connection, an active slot and a chunk inside the window is the receiver's
 * check (recv.c), since that needs its state.
 */
#ifndef XP_IMM_H
#define XP_IMM_H

#include <stdbool.h>
#include <stdint.h>

#define XP_IMM_CONN_BITS 14
#define XP_IMM_SLOT_BITS 4
#define XP_IMM_CHUNK_BITS 12

#define XP_MAX_CONNS (1u << XP_IMM_CONN_BITS)    /* 16384 connections per engine */
#define XP_MSG_SLOTS (1u << XP_IMM_SLOT_BITS)    /* 16 message slots per connection */
#define XP_MSG_WINDOW (XP_MSG_SLOTS / 2)         /* 8 messages in flight per connection */
#define XP_MAX_CHUNKS (1u << XP_IMM_CHUNK_BITS)  /* 4096 chunks per message */

#define XP_IMM_LAST (1u << 31)
#define XP_IMM_PARITY (1u << 30)
#define XP_IMM_CONN_SHIFT 16
#define XP_IMM_SLOT_SHIFT 12

struct xp_imm {
	uint16_t conn;  /* receiver's connection id, < XP_MAX_CONNS */
	uint8_t slot;   /* message slot, < XP_MSG_SLOTS */
	uint16_t chunk; /* chunk index, < XP_MAX_CHUNKS */
	bool last;
	bool parity;
};

/**
 * xp_imm_encode() - the immediate of @f; each field is masked to its width.
 * @f: the fields.
 *
 * Return: the 32-bit immediate, host order.
 */
static inline uint32_t xp_imm_encode(const struct xp_imm *f)
{
	return (f->last ? XP_IMM_LAST : 0) | (f->parity ? XP_IMM_PARITY : 0) |
	       ((uint32_t)(f->conn & (XP_MAX_CONNS - 1)) << XP_IMM_CONN_SHIFT) |
	       ((uint32_t)(f->slot & (XP_MSG_SLOTS - 1)) << XP_IMM_SLOT_SHIFT) |
	       (uint32_t)(f->chunk & (XP_MAX_CHUNKS - 1));
}

/**
 * xp_imm_decode() - split immediate @imm into its fields (every word decodes).
 * @imm: the immediate, host order.
 * @f: the fields.
 */
static inline void xp_imm_decode(uint32_t imm, struct xp_imm *f)
{
	f->last = imm & XP_IMM_LAST;
	f->parity = imm & XP_IMM_PARITY;
	f->conn = (uint16_t)((imm >> XP_IMM_CONN_SHIFT) & (XP_MAX_CONNS - 1));
	f->slot = (uint8_t)((imm >> XP_IMM_SLOT_SHIFT) & (XP_MSG_SLOTS - 1));
	f->chunk = (uint16_t)(imm & (XP_MAX_CHUNKS - 1));
}

#endif /* XP_IMM_H */
