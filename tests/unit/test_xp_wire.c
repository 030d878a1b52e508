// SPDX-License-Identifier: MIT
/*
 * test_xp_wire.c - control packets: every record type round-trips, the
 * encoder refuses what the decoder would reject, and each way a packet or a
 * record can be malformed is caught with its own reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "wire.h"

static struct xp_rec sample(uint8_t type)
{
	struct xp_rec r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.conn = 0x3ffe;
	r.nonce = 0xdeadbeef;
	switch (type) {
	case XP_REC_ACK:
		r.u.ack = (struct xp_rec_ack){ .msg_seq = 0xfffffff0, .cum = 100, .echo_chunk = 123,
					       .echo_valid = true, .echo_parity = true,
					       .echo_ce = true, .dup_seen = true,
					       .sack = 0x8000000000000005ull, .hold_ns = 77777,
					       .ce = 9 };
		break;
	case XP_REC_CTS:
		r.u.cts = (struct xp_rec_cts){ .msg_seq = 42, .rkey = 0x1234, .raddr = 1ull << 40,
					       .cap = 1ull << 30 };
		break;
	case XP_REC_FIN:
		r.u.fin.sends_total = 17;
		r.u.fin.recvs_total = 19;
		break;
	case XP_REC_RESET:
		r.u.reason = XP_RESET_TIMEOUT;
		break;
	case XP_REC_CTS_ACK:
	case XP_REC_ABORT:
	case XP_REC_ACK_REQ:
		r.u.msg_seq = 0x80000001;
		break;
	default:
		break;
	}
	return r;
}

static uint32_t encode(const struct xp_rec *recs, unsigned n, uint8_t *buf, uint32_t cap)
{
	struct xp_wire_writer w;

	xp_wire_begin(&w, buf, cap);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(xp_wire_put(&w, &recs[i]), 0);
	return xp_wire_finish(&w);
}

static void test_every_record_type_round_trips(void **state)
{
	struct xp_rec in[XP_REC_TYPE_END - 1], out;
	struct xp_wire_reader r;
	uint8_t buf[XP_WIRE_MAX_MTU];
	enum xp_drop why;
	uint32_t len;

	for (unsigned t = 1; t < XP_REC_TYPE_END; t++)
		in[t - 1] = sample((uint8_t)t);
	len = encode(in, XP_REC_TYPE_END - 1, buf, sizeof(buf));
	assert_int_equal(xp_wire_open(&r, buf, len, XP_WIRE_MAX_MTU, &why), 0);
	for (unsigned t = 1; t < XP_REC_TYPE_END; t++) {
		assert_int_equal(xp_wire_next(&r, &out, &why), 1);
		assert_memory_equal(&out, &in[t - 1], sizeof(out));
	}
	assert_int_equal(xp_wire_next(&r, &out, &why), 0);
}

static void test_records_batch_until_the_mtu(void **state)
{
	struct xp_rec a = sample(XP_REC_ACK);
	struct xp_wire_writer w;
	uint8_t buf[1024];
	unsigned n = 0;

	xp_wire_begin(&w, buf, sizeof(buf));
	while (xp_wire_put(&w, &a) == 0)
		n++;
	assert_int_equal(n, (1024 - XP_WIRE_HDR_BYTES) / XP_WIRE_ACK_BYTES);
	assert_true(xp_wire_finish(&w) <= 1024);
	assert_int_equal(xp_wire_put(&w, &a), -ENOSPC);
}

static void test_encoder_refuses_records_the_decoder_rejects(void **state)
{
	struct xp_wire_writer w;
	uint8_t buf[256];
	struct xp_rec r;

	xp_wire_begin(&w, buf, sizeof(buf));
	r = sample(XP_REC_ACK);
	r.u.ack.cum = 4097;
	assert_int_equal(xp_wire_put(&w, &r), -EINVAL);
	r = sample(XP_REC_ACK);
	r.u.ack.cum = 4090;
	r.u.ack.sack = 1ull << 10; /* chunk 4101 */
	assert_int_equal(xp_wire_put(&w, &r), -EINVAL);
	r = sample(XP_REC_ACK);
	r.u.ack.complete = true; /* with a SACK bitmap */
	assert_int_equal(xp_wire_put(&w, &r), -EINVAL);
	r = sample(XP_REC_CTS);
	r.u.cts.raddr = UINT64_MAX - 10;
	assert_int_equal(xp_wire_put(&w, &r), -EINVAL);
	r = sample(XP_REC_RESET);
	r.u.reason = 0;
	assert_int_equal(xp_wire_put(&w, &r), -EINVAL);
	r = sample(XP_REC_FIN);
	r.nonce = 0;
	assert_int_equal(xp_wire_put(&w, &r), -EINVAL);
	r.nonce = 1;
	r.conn = 16384;
	assert_int_equal(xp_wire_put(&w, &r), -EINVAL);
	r.type = 0;
	assert_int_equal(xp_wire_put(&w, &r), -EINVAL);
	assert_int_equal(xp_wire_finish(&w), 0); /* nothing went in */
}

/* A valid two-record packet to corrupt. */
static uint32_t good_packet(uint8_t *buf)
{
	struct xp_rec recs[2] = { sample(XP_REC_ACK), sample(XP_REC_FIN) };

	return encode(recs, 2, buf, XP_WIRE_MAX_MTU);
}

static enum xp_drop open_fails(const uint8_t *buf, size_t len, uint32_t mtu)
{
	struct xp_wire_reader r;
	enum xp_drop why = XP_DROP_COUNT;

	assert_int_equal(xp_wire_open(&r, buf, len, mtu, &why), -EINVAL);
	return why;
}

static void test_malformed_packets_are_dropped_whole_by_reason(void **state)
{
	uint8_t buf[XP_WIRE_MAX_MTU + 8], bad[XP_WIRE_MAX_MTU + 8];
	uint32_t len = good_packet(buf);

	assert_int_equal(open_fails(buf, 0, 1024), XP_DROP_CTRL_SHORT);
	assert_int_equal(open_fails(NULL, 8, 1024), XP_DROP_CTRL_SHORT);
	assert_int_equal(open_fails(buf, 7, 1024), XP_DROP_CTRL_SHORT);
	assert_int_equal(open_fails(buf, len, len - 1), XP_DROP_CTRL_OVERSIZE);
	assert_int_equal(open_fails(buf, XP_WIRE_MAX_MTU + 1, UINT32_MAX), XP_DROP_CTRL_OVERSIZE);
	memcpy(bad, buf, len);
	bad[0] ^= 1;
	assert_int_equal(open_fails(bad, len, 1024), XP_DROP_CTRL_MAGIC);
	memcpy(bad, buf, len);
	bad[2] = 2;
	assert_int_equal(open_fails(bad, len, 1024), XP_DROP_CTRL_VERSION);
	/* truncated: the header's length no longer matches */
	assert_int_equal(open_fails(buf, len - 1, 1024), XP_DROP_CTRL_LENGTH);
	memcpy(bad, buf, len);
	bad[7] = 1; /* reserved */
	assert_int_equal(open_fails(bad, len, 1024), XP_DROP_CTRL_LENGTH);
	memcpy(bad, buf, len);
	bad[3] = 3; /* says three records, holds two */
	assert_int_equal(open_fails(bad, len, 1024), XP_DROP_CTRL_COUNT);
	memcpy(bad, buf, len);
	bad[XP_WIRE_HDR_BYTES] = 99; /* unknown type */
	assert_int_equal(open_fails(bad, len, 1024), XP_DROP_CTRL_RECORD_TYPE);
	memcpy(bad, buf, len);
	bad[XP_WIRE_HDR_BYTES + 1] = 16; /* an ACK is 32 B */
	assert_int_equal(open_fails(bad, len, 1024), XP_DROP_CTRL_RECORD_SIZE);
	/* header only, no records */
	memcpy(bad, buf, 8);
	bad[3] = 0;
	bad[4] = 0;
	bad[5] = 8;
	assert_int_equal(open_fails(bad, 8, 1024), XP_DROP_CTRL_COUNT);
}

/* Corrupt byte @off of the packet's first record; that record fails with @why, the second is intact. */
static void expect_record_dropped(uint32_t off, uint8_t value, enum xp_drop expect)
{
	uint8_t buf[XP_WIRE_MAX_MTU];
	uint32_t len = good_packet(buf);
	struct xp_wire_reader r;
	struct xp_rec rec;
	enum xp_drop why = XP_DROP_COUNT;

	buf[XP_WIRE_HDR_BYTES + off] = value;
	assert_int_equal(xp_wire_open(&r, buf, len, 1024, &why), 0);
	assert_int_equal(xp_wire_next(&r, &rec, &why), -EINVAL);
	assert_int_equal(why, expect);
	assert_int_equal(xp_wire_next(&r, &rec, &why), 1);
	assert_int_equal(rec.type, XP_REC_FIN);
	assert_int_equal(rec.u.fin.sends_total, 17);
	assert_int_equal(xp_wire_next(&r, &rec, &why), 0);
}

static void test_bad_fields_drop_only_their_record(void **state)
{
	expect_record_dropped(2, 0xff, XP_DROP_REC_FIELD);    /* conn id >= 16384 */
	expect_record_dropped(12, 0x20, XP_DROP_REC_FIELD);   /* cum 8192 + ... > 4096 */
	expect_record_dropped(14, 0x90, XP_DROP_REC_RESERVED);/* echo reserved bit */
	expect_record_dropped(30, 0x04, XP_DROP_REC_RESERVED);/* unknown ACK flag */
	expect_record_dropped(31, 0x01, XP_DROP_REC_RESERVED);/* reserved byte */
	expect_record_dropped(30, 0x03, XP_DROP_REC_FIELD);   /* complete with a SACK bitmap */
}

static void test_nonce_zero_and_unset_echo_are_rejected(void **state)
{
	uint8_t buf[XP_WIRE_MAX_MTU];
	uint32_t len = good_packet(buf);
	struct xp_wire_reader r;
	struct xp_rec rec;
	enum xp_drop why;

	memset(buf + XP_WIRE_HDR_BYTES + 4, 0, 4); /* nonce 0 */
	assert_int_equal(xp_wire_open(&r, buf, len, 1024, &why), 0);
	assert_int_equal(xp_wire_next(&r, &rec, &why), -EINVAL);
	assert_int_equal(why, XP_DROP_REC_FIELD);
	len = good_packet(buf);
	buf[XP_WIRE_HDR_BYTES + 14] = 0x00; /* echo "not valid" ... */
	buf[XP_WIRE_HDR_BYTES + 15] = 0x07; /* ... but carrying a chunk */
	assert_int_equal(xp_wire_open(&r, buf, len, 1024, &why), 0);
	assert_int_equal(xp_wire_next(&r, &rec, &why), -EINVAL);
	assert_int_equal(why, XP_DROP_REC_RESERVED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_record_type_round_trips),
		cmocka_unit_test(test_records_batch_until_the_mtu),
		cmocka_unit_test(test_encoder_refuses_records_the_decoder_rejects),
		cmocka_unit_test(test_malformed_packets_are_dropped_whole_by_reason),
		cmocka_unit_test(test_bad_fields_drop_only_their_record),
		cmocka_unit_test(test_nonce_zero_and_unset_echo_are_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
