/* SPDX-License-Identifier: MIT */
/*
 * blob.h - the connection blob two endpoints exchange through the bootstrap
 * before a connection binds: the core's connection id and nonce, the
 * control address, each path's entropy and datapath blob, the reliability
 * mode and the CC policy the dialer chose.
 *
 * Wire format (big-endian), every field range-checked on decode (the blob
 * comes from another host over the TCP bootstrap: untrusted):
 *
 *   magic u16 = 0x5842 ("XB"), version u8 = 1, flags u8 (bit 0: RC; others 0)
 *   conn_id u16 (< 16384), n_paths u8 (1..64), mode u8 (0 sync, 1 relaxed,
 *   2 locked, 3 bounded), nonce u32 (!= 0)
 *   ctrl: len u8 (1..32), bytes
 *   cc name: len u8 (0..127), bytes (no NUL)     lb name: the same
 *   n_paths x { entropy u16, len u8 (1..32), bytes }
 *
 * and nothing after the last path.
 */
#ifndef XP_BLOB_H
#define XP_BLOB_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"
#include "datapath.h"

#define XP_BLOB_MAGIC 0x5842
#define XP_BLOB_VERSION 1
#define XP_BLOB_NAME_MAX 127

struct xp_conn_blob {
	uint32_t conn_id;
	uint32_t nonce;
	uint32_t n_paths;
	bool rc;
	uint8_t mode;
	struct xp_dp_blob ctrl;
	char cc[XP_BLOB_NAME_MAX + 1];
	char lb[XP_BLOB_NAME_MAX + 1];
	uint16_t entropy[XP_MAX_PATHS];
	struct xp_dp_blob paths[XP_MAX_PATHS];
};

/**
 * xp_blob_encode() - write @b into @out.
 * @b: the blob; its fields must be in range.
 * @out: the message.
 * @cap: its size (XP_BOOT_MSG_MAX always suffices).
 *
 * Return: the length, or -EINVAL (a field out of range), -ENOSPC.
 */
int xp_blob_encode(const struct xp_conn_blob *b, uint8_t *out, uint32_t cap);

/**
 * xp_blob_decode() - read a blob from untrusted bytes.
 * @in: the message.
 * @len: its length.
 * @b: the blob.
 * @why: on failure, the field that was wrong.
 *
 * Return: 0, -EBADMSG.
 */
int xp_blob_decode(const uint8_t *in, uint32_t len, struct xp_conn_blob *b, const char **why);

#endif /* XP_BLOB_H */
