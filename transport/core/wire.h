/* SPDX-License-Identifier: MIT */
/*
 * wire.h - the control channel's packet format: encode, and decode with full
 * range checks.
 *
 * A control packet goes from one engine's core to a peer engine's core and
 * carries records for any number of connections between the two (ACKs are
 * batched per peer this way). Every integer is big-endian.
 *
 *   packet header (8 B): magic u16 = 0x7870 ("xp"), version u8 = 1,
 *                        n_records u8 (>= 1), length u16 (whole packet),
 *                        reserved u16 = 0
 *   record header (8 B): type u8, size u8 (bytes, fixed per type),
 *                        dst_conn u16 (< 16384), dst_nonce u32 (!= 0)
 *
 *   ACK      32 B  msg_seq u32, cum u16, echo u16, sack u64, hold_ns u32,
 *                  ce u16, flags u8, reserved u8
 *                  echo: bit 15 valid, 14 parity, 13 CE, 12 reserved,
 *                  11..0 chunk index; all zero unless valid.
 *                  cum: chunks received in order (index of the first
 *                  missing chunk, 0..4096); sack bit j: chunk cum+1+j.
 *                  flags: bit 0 duplicate seen, bit 1 message complete.
 *   CTS      32 B  msg_seq u32, rkey u32, raddr u64, cap u64
 *   CTS_ACK  16 B  msg_seq u32, reserved u32     (sender holds that CTS)
 *   ABORT    16 B  msg_seq u32, reserved u32     (message longer than its receive)
 *   ABORT_ACK 16 B msg_seq u32, reserved u32     (receiver saw that ABORT)
 *   ACK_REQ  16 B  msg_seq u32, reserved u32     (sender asks for an ACK record)
 *   FIN      16 B  sends_total u32, recvs_total u32
 *   FIN_ACK  16 B  reserved u64
 *   RESET    16 B  reason u32 (enum xp_reset_reason), reserved u32
 *   RESET_ACK 16 B reserved u64
 *   KEEPALIVE 16 B reserved u64              (are you there? an idle connection waiting)
 *   KEEPALIVE_ACK 16 B reserved u64          (here)
 *
 * Decoding checks the packet's structure first, as a whole (xp_wire_open):
 * a packet that fails is dropped before any record is looked at. Each record
 * then gets its static field checks (xp_wire_next); one that fails is
 * skipped alone. Checks that need connection state are the core's.
 */
#ifndef XP_WIRE_H
#define XP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drop.h"

#define XP_WIRE_MAGIC 0x7870
#define XP_WIRE_VERSION 1
#define XP_WIRE_HDR_BYTES 8
#define XP_WIRE_MIN_MTU 64   /* smallest control MTU a core accepts */
#define XP_WIRE_MAX_MTU 4096 /* largest: n_records is a u8 */
#define XP_WIRE_ACK_BYTES 32
#define XP_WIRE_CTS_BYTES 32
#define XP_WIRE_SMALL_BYTES 16

enum xp_rec_type {
	XP_REC_ACK = 1,
	XP_REC_CTS = 2,
	XP_REC_CTS_ACK = 3,
	XP_REC_ABORT = 4,
	XP_REC_ACK_REQ = 5,
	XP_REC_FIN = 6,
	XP_REC_FIN_ACK = 7,
	XP_REC_RESET = 8,
	XP_REC_RESET_ACK = 9,
	XP_REC_ABORT_ACK = 10,
	XP_REC_KEEPALIVE = 11,
	XP_REC_KEEPALIVE_ACK = 12,
	XP_REC_TYPE_END,
};

enum xp_reset_reason {
	XP_RESET_ABORT = 1,   /* the peer application aborted the connection */
	XP_RESET_TIMEOUT = 2, /* the peer gave up: no progress */
	XP_RESET_IO = 3,      /* the peer's datapath failed a write */
	XP_RESET_CLOSED = 4,  /* the connection is gone at the peer */
	XP_RESET_REASON_END,
};

/* Chunks a message may have beyond its cumulative ACK: the ACK record's SACK bitmap. */
#define XP_WIN 64

struct xp_rec_ack {
	uint32_t msg_seq;
	uint16_t cum;        /* 0..4096 */
	uint16_t echo_chunk; /* < 4096, when echo_valid */
	bool echo_valid;
	bool echo_parity;
	bool echo_ce;        /* the echoed chunk arrived CE-marked */
	bool dup_seen;
	bool complete;       /* implies sack == 0 */
	uint64_t sack;
	uint32_t hold_ns;    /* echoed chunk's arrival to this record's emission */
	uint16_t ce;         /* CE-marked chunks since the previous ACK record */
};

struct xp_rec_cts {
	uint32_t msg_seq;
	uint32_t rkey;
	uint64_t raddr;
	uint64_t cap; /* raddr + cap does not overflow */
};

struct xp_rec_fin {
	uint32_t sends_total; /* messages the sender of the FIN ever posted */
	uint32_t recvs_total; /* receives it ever posted */
};

struct xp_rec {
	uint8_t type; /* enum xp_rec_type */
	uint16_t conn;
	uint32_t nonce;
	union {
		struct xp_rec_ack ack;
		struct xp_rec_cts cts;
		uint32_t msg_seq; /* CTS_ACK, ABORT, ABORT_ACK, ACK_REQ */
		struct xp_rec_fin fin;
		uint32_t reason;  /* RESET */
	} u;
};

/**
 * xp_wire_rec_bytes() - bytes of a record of @type on the wire, or 0 for an unknown type.
 */
uint32_t xp_wire_rec_bytes(unsigned type);

struct xp_wire_writer {
	uint8_t *buf;
	uint32_t cap;
	uint32_t len;
	uint32_t n;
};

/**
 * xp_wire_begin() - start a packet in @buf.
 * @w: the writer.
 * @buf: where the packet goes.
 * @cap: its size; at most XP_WIRE_MAX_MTU bytes are used.
 */
void xp_wire_begin(struct xp_wire_writer *w, uint8_t *buf, uint32_t cap);

/**
 * xp_wire_put() - append one record.
 * @w: the writer.
 * @rec: the record; its fields must be in range (the encoder checks).
 *
 * Return: 0, -ENOSPC if it does not fit (the packet is unchanged), -EINVAL
 * for a record that would not decode.
 */
int xp_wire_put(struct xp_wire_writer *w, const struct xp_rec *rec);

/**
 * xp_wire_finish() - write the header; return the packet's length, or 0 if it holds no record.
 */
uint32_t xp_wire_finish(struct xp_wire_writer *w);

struct xp_wire_reader {
	const uint8_t *buf;
	uint32_t len;
	uint32_t off;
};

/**
 * xp_wire_open() - check a received packet's structure.
 * @r: the reader, set up on success.
 * @buf: the bytes.
 * @len: how many.
 * @mtu: the largest packet accepted.
 * @why: on failure, the reason.
 *
 * Return: 0, or -EINVAL (the whole packet is to be dropped).
 */
int xp_wire_open(struct xp_wire_reader *r, const void *buf, size_t len, uint32_t mtu,
		 enum xp_drop *why);

/**
 * xp_wire_next() - decode the next record of an opened packet.
 * @r: the reader.
 * @rec: the record.
 * @why: when the record fails its field checks, the reason.
 *
 * Return: 1 with @rec filled, 0 at the end, -EINVAL for a record to skip
 * (the next call goes on with the following one).
 */
int xp_wire_next(struct xp_wire_reader *r, struct xp_rec *rec, enum xp_drop *why);

#endif /* XP_WIRE_H */
