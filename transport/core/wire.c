// SPDX-License-Identifier: MIT
/*
 * wire.c - control packet encoding and decoding (format in wire.h).
 *
 * One function, check_fields(), states every static range rule of a
 * decoded record; the encoder runs it before writing, so the core can never
 * emit a record its peer would reject.
 */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "imm.h"
#include "wire.h"

#define ECHO_VALID 0x8000u
#define ECHO_PARITY 0x4000u
#define ECHO_CE 0x2000u
#define ECHO_RESERVED 0x1000u
#define ECHO_CHUNK_MASK 0x0fffu
#define ACK_FLAG_DUP 0x01u
#define ACK_FLAG_COMPLETE 0x02u
#define ACK_FLAGS_KNOWN (ACK_FLAG_DUP | ACK_FLAG_COMPLETE)

#define put16(p, v) xp_put_be((p), (v), 2)
#define put32(p, v) xp_put_be((p), (v), 4)
#define put64(p, v) xp_put_be((p), (v), 8)
#define get16(p) ((uint16_t)xp_get_be((p), 2))
#define get32(p) ((uint32_t)xp_get_be((p), 4))
#define get64(p) xp_get_be((p), 8)

uint32_t xp_wire_rec_bytes(unsigned type)
{
	switch (type) {
	case XP_REC_ACK:
		return XP_WIRE_ACK_BYTES;
	case XP_REC_CTS:
		return XP_WIRE_CTS_BYTES;
	case XP_REC_CTS_ACK:
	case XP_REC_ABORT:
	case XP_REC_ABORT_ACK:
	case XP_REC_ACK_REQ:
	case XP_REC_FIN:
	case XP_REC_FIN_ACK:
	case XP_REC_RESET:
	case XP_REC_RESET_ACK:
	case XP_REC_KEEPALIVE:
	case XP_REC_KEEPALIVE_ACK:
		return XP_WIRE_SMALL_BYTES;
	default:
		return 0;
	}
}

/* The highest chunk index a SACK bitmap names, relative to cum, is cum + 64. */
static bool sack_in_range(uint16_t cum, uint64_t sack)
{
	unsigned top;

	if (!sack)
		return true;
	top = 63u - (unsigned)__builtin_clzll(sack); /* highest set bit */
	return (unsigned)cum + 1u + top < XP_MAX_CHUNKS;
}

static int check_ack(const struct xp_rec_ack *a, enum xp_drop *why)
{
	if (a->cum > XP_MAX_CHUNKS || !sack_in_range(a->cum, a->sack) ||
	    (a->echo_valid && a->echo_chunk >= XP_MAX_CHUNKS) || (a->complete && a->sack)) {
		*why = XP_DROP_REC_FIELD;
		return -EINVAL;
	}
	return 0;
}

/* Every static range rule of a record, on its decoded form. */
static int check_fields(const struct xp_rec *rec, enum xp_drop *why)
{
	if (rec->conn >= XP_MAX_CONNS || rec->nonce == 0) {
		*why = XP_DROP_REC_FIELD;
		return -EINVAL;
	}
	switch (rec->type) {
	case XP_REC_ACK:
		return check_ack(&rec->u.ack, why);
	case XP_REC_CTS:
		if (rec->u.cts.raddr + rec->u.cts.cap < rec->u.cts.raddr) {
			*why = XP_DROP_REC_FIELD;
			return -EINVAL;
		}
		return 0;
	case XP_REC_RESET:
		if (rec->u.reason == 0 || rec->u.reason >= XP_RESET_REASON_END) {
			*why = XP_DROP_REC_FIELD;
			return -EINVAL;
		}
		return 0;
	default:
		if (xp_wire_rec_bytes(rec->type))
			return 0; /* a small record: nothing beyond its head to check */
		*why = XP_DROP_CTRL_RECORD_TYPE;
		return -EINVAL;
	}
}

void xp_wire_begin(struct xp_wire_writer *w, uint8_t *buf, uint32_t cap)
{
	w->buf = buf;
	w->cap = cap < XP_WIRE_MAX_MTU ? cap : XP_WIRE_MAX_MTU;
	w->len = XP_WIRE_HDR_BYTES;
	w->n = 0;
}

static void encode_ack(uint8_t *p, const struct xp_rec_ack *a)
{
	uint16_t echo = 0;

	if (a->echo_valid)
		echo = (uint16_t)(ECHO_VALID | (a->echo_parity ? ECHO_PARITY : 0) |
				  (a->echo_ce ? ECHO_CE : 0) | (a->echo_chunk & ECHO_CHUNK_MASK));
	put32(p + 8, a->msg_seq);
	put16(p + 12, a->cum);
	put16(p + 14, echo);
	put64(p + 16, a->sack);
	put32(p + 24, a->hold_ns);
	put16(p + 28, a->ce);
	p[30] = (uint8_t)((a->dup_seen ? ACK_FLAG_DUP : 0) | (a->complete ? ACK_FLAG_COMPLETE : 0));
	p[31] = 0;
}

int xp_wire_put(struct xp_wire_writer *w, const struct xp_rec *rec)
{
	uint32_t size = xp_wire_rec_bytes(rec->type);
	enum xp_drop why;
	uint8_t *p;

	if (!size || check_fields(rec, &why) < 0)
		return -EINVAL;
	if (w->len + size > w->cap || w->n == UINT8_MAX)
		return -ENOSPC;
	p = w->buf + w->len;
	memset(p, 0, size);
	p[0] = rec->type;
	p[1] = (uint8_t)size;
	put16(p + 2, rec->conn);
	put32(p + 4, rec->nonce);
	switch (rec->type) {
	case XP_REC_ACK:
		encode_ack(p, &rec->u.ack);
		break;
	case XP_REC_CTS:
		put32(p + 8, rec->u.cts.msg_seq);
		put32(p + 12, rec->u.cts.rkey);
		put64(p + 16, rec->u.cts.raddr);
		put64(p + 24, rec->u.cts.cap);
		break;
	case XP_REC_CTS_ACK:
	case XP_REC_ABORT:
	case XP_REC_ABORT_ACK:
	case XP_REC_ACK_REQ:
		put32(p + 8, rec->u.msg_seq);
		break;
	case XP_REC_FIN:
		put32(p + 8, rec->u.fin.sends_total);
		put32(p + 12, rec->u.fin.recvs_total);
		break;
	case XP_REC_RESET:
		put32(p + 8, rec->u.reason);
		break;
	default: /* FIN_ACK, RESET_ACK, KEEPALIVE, KEEPALIVE_ACK: no body */
		break;
	}
	w->len += size;
	w->n++;
	return 0;
}

uint32_t xp_wire_finish(struct xp_wire_writer *w)
{
	if (!w->n)
		return 0;
	put16(w->buf, XP_WIRE_MAGIC);
	w->buf[2] = XP_WIRE_VERSION;
	w->buf[3] = (uint8_t)w->n;
	put16(w->buf + 4, (uint16_t)w->len);
	put16(w->buf + 6, 0);
	return w->len;
}

static int fail(enum xp_drop *why, enum xp_drop reason)
{
	*why = reason;
	return -EINVAL;
}

int xp_wire_open(struct xp_wire_reader *r, const void *buf, size_t len, uint32_t mtu,
		 enum xp_drop *why)
{
	const uint8_t *p = buf;
	uint32_t off = XP_WIRE_HDR_BYTES, n, seen = 0;

	if (!p || len < XP_WIRE_HDR_BYTES)
		return fail(why, XP_DROP_CTRL_SHORT);
	if (len > mtu || len > XP_WIRE_MAX_MTU)
		return fail(why, XP_DROP_CTRL_OVERSIZE);
	if (get16(p) != XP_WIRE_MAGIC)
		return fail(why, XP_DROP_CTRL_MAGIC);
	if (p[2] != XP_WIRE_VERSION)
		return fail(why, XP_DROP_CTRL_VERSION);
	if (get16(p + 4) != len || get16(p + 6) != 0)
		return fail(why, XP_DROP_CTRL_LENGTH);
	n = p[3];
	/* Walk the record headers: every size must be its type's, and they must tile the packet. */
	while (off < len) {
		uint32_t size;

		if (len - off < 2)
			return fail(why, XP_DROP_CTRL_RECORD_SIZE);
		size = xp_wire_rec_bytes(p[off]);
		if (!size)
			return fail(why, XP_DROP_CTRL_RECORD_TYPE);
		if (p[off + 1] != size || len - off < size)
			return fail(why, XP_DROP_CTRL_RECORD_SIZE);
		off += size;
		seen++;
	}
	if (n == 0 || seen != n)
		return fail(why, XP_DROP_CTRL_COUNT);
	r->buf = p;
	r->len = (uint32_t)len;
	r->off = XP_WIRE_HDR_BYTES;
	return 0;
}

static int decode_ack(const uint8_t *p, struct xp_rec_ack *a, enum xp_drop *why)
{
	uint16_t echo = get16(p + 14);

	if ((echo & ECHO_RESERVED) || (!(echo & ECHO_VALID) && echo) ||
	    (p[30] & ~ACK_FLAGS_KNOWN) || p[31])
		return fail(why, XP_DROP_REC_RESERVED);
	a->msg_seq = get32(p + 8);
	a->cum = get16(p + 12);
	a->echo_valid = echo & ECHO_VALID;
	a->echo_parity = echo & ECHO_PARITY;
	a->echo_ce = echo & ECHO_CE;
	a->echo_chunk = echo & ECHO_CHUNK_MASK;
	a->sack = get64(p + 16);
	a->hold_ns = get32(p + 24);
	a->ce = get16(p + 28);
	a->dup_seen = p[30] & ACK_FLAG_DUP;
	a->complete = p[30] & ACK_FLAG_COMPLETE;
	return 0;
}

/* Decode the body of a record whose header and size are already checked. */
static int decode_body(const uint8_t *p, struct xp_rec *rec, enum xp_drop *why)
{
	switch (rec->type) {
	case XP_REC_ACK:
		return decode_ack(p, &rec->u.ack, why);
	case XP_REC_CTS:
		rec->u.cts.msg_seq = get32(p + 8);
		rec->u.cts.rkey = get32(p + 12);
		rec->u.cts.raddr = get64(p + 16);
		rec->u.cts.cap = get64(p + 24);
		return 0;
	case XP_REC_CTS_ACK:
	case XP_REC_ABORT:
	case XP_REC_ABORT_ACK:
	case XP_REC_ACK_REQ:
		rec->u.msg_seq = get32(p + 8);
		return get32(p + 12) ? fail(why, XP_DROP_REC_RESERVED) : 0;
	case XP_REC_FIN:
		rec->u.fin.sends_total = get32(p + 8);
		rec->u.fin.recvs_total = get32(p + 12);
		return 0;
	case XP_REC_RESET:
		rec->u.reason = get32(p + 8);
		return get32(p + 12) ? fail(why, XP_DROP_REC_RESERVED) : 0;
	default: /* FIN_ACK, RESET_ACK, KEEPALIVE, KEEPALIVE_ACK */
		return get64(p + 8) ? fail(why, XP_DROP_REC_RESERVED) : 0;
	}
}

int xp_wire_next(struct xp_wire_reader *r, struct xp_rec *rec, enum xp_drop *why)
{
	const uint8_t *p;
	uint32_t size;

	if (r->off >= r->len)
		return 0;
	p = r->buf + r->off;
	size = p[1]; /* checked by xp_wire_open() */
	r->off += size;
	memset(rec, 0, sizeof(*rec));
	rec->type = p[0];
	rec->conn = get16(p + 2);
	rec->nonce = get32(p + 4);
	if (decode_body(p, rec, why) < 0)
		return -EINVAL;
	if (check_fields(rec, why) < 0)
		return -EINVAL;
	return 1;
}
