/* SPDX-License-Identifier: MIT */
/*
 * verbs_blob.h - the two blobs the verbs datapath exchanges with a peer at
 * connection setup (through the bootstrap, so untrusted bytes): a path
 * blob per data QP and a control address per instance. Pure encoding and
 * decoding, no device: the decoders are what the fuzz target feeds.
 *
 *   path blob, 27 bytes:      'P' (0x50), flags (bit 0: RC, others 0),
 *                             QPN u24 (!= 0), PSN u24, LID u16,
 *                             active MTU (enum ibv_mtu: 1..5), GID[16]
 *   control address, 23 bytes: 'U' (0x55), version 1, QPN u24 (!= 0),
 *                             LID u16, GID[16]
 *
 * Integers are big-endian (bytes.h). Every field is checked; a blob that
 * decodes re-encodes to the same bytes.
 */
#ifndef VB_BLOB_H
#define VB_BLOB_H

#include <stdbool.h>
#include <stdint.h>

#include "datapath.h"

#define VB_PATH_BLOB_BYTES 27
#define VB_CTRL_BLOB_BYTES 23

struct vb_path_blob {
	bool rc;
	uint32_t qpn;  /* 24 bits */
	uint32_t psn;  /* 24 bits */
	uint16_t lid;
	uint8_t mtu;   /* enum ibv_mtu */
	uint8_t gid[16];
};

struct vb_ctrl_blob {
	uint32_t qpn;  /* 24 bits, the UD QP */
	uint16_t lid;
	uint8_t gid[16];
};

/* Write @p into @b (27 bytes); fields are masked to their widths. */
void vb_path_blob_encode(const struct vb_path_blob *p, struct xp_dp_blob *b);

/**
 * vb_path_blob_decode() - check and split a peer's path blob.
 * @b: the bytes, untrusted.
 * @p: the fields, on success.
 * @why: on failure, which check failed ("length", "magic", "flags", "QPN 0", "MTU").
 *
 * Return: 0, or -EINVAL.
 */
int vb_path_blob_decode(const struct xp_dp_blob *b, struct vb_path_blob *p, const char **why);

/* Write @c into @b (23 bytes); fields are masked to their widths. */
void vb_ctrl_blob_encode(const struct vb_ctrl_blob *c, struct xp_dp_blob *b);

/**
 * vb_ctrl_blob_decode() - check and split a peer's control address.
 * @b: the bytes, untrusted.
 * @c: the fields, on success.
 * @why: on failure, which check failed ("length", "magic", "version", "QPN 0").
 *
 * Return: 0, or -EINVAL.
 */
int vb_ctrl_blob_decode(const struct xp_dp_blob *b, struct vb_ctrl_blob *c, const char **why);

#endif /* VB_BLOB_H */
