// SPDX-License-Identifier: MIT
/*
 * fuzz_verbs_blob.c - libFuzzer target for the verbs datapath's connection
 * setup blobs (verbs_blob.h): the path blob of each data QP and the control
 * address, the bytes a peer sends through the bootstrap.
 *
 * The input is the blob itself: its length (capped at 255, what the length
 * byte holds) and up to XP_DP_BLOB_MAX bytes, the rest of the buffer zero.
 * Both decoders read it. Oracles, besides ASan/UBSan: a refusal names the
 * check that failed; an accepted blob has every field in range (QPN 1 to
 * 2^24 - 1, MTU 1 to 5) and re-encodes to exactly its own bytes, so the
 * decoder accepts nothing it does not fully account for.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_blob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort();
}

static void path_blob(const struct xp_dp_blob *in)
{
	struct vb_path_blob f;
	struct xp_dp_blob out = { 0 };
	const char *why = NULL;

	if (vb_path_blob_decode(in, &f, &why) < 0) {
		check(why != NULL);
		return;
	}
	check(why == NULL);
	check(f.qpn >= 1 && f.qpn <= 0xffffff && f.psn <= 0xffffff);
	check(f.mtu >= 1 && f.mtu <= 5);
	vb_path_blob_encode(&f, &out);
	check(out.len == in->len && memcmp(out.bytes, in->bytes, out.len) == 0);
}

static void ctrl_blob(const struct xp_dp_blob *in)
{
	struct vb_ctrl_blob f;
	struct xp_dp_blob out = { 0 };
	const char *why = NULL;

	if (vb_ctrl_blob_decode(in, &f, &why) < 0) {
		check(why != NULL);
		return;
	}
	check(why == NULL);
	check(f.qpn >= 1 && f.qpn <= 0xffffff);
	vb_ctrl_blob_encode(&f, &out);
	check(out.len == in->len && memcmp(out.bytes, in->bytes, out.len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_dp_blob in = { 0 };

	in.len = (uint8_t)(size > 255 ? 255 : size);
	memcpy(in.bytes, data, size < XP_DP_BLOB_MAX ? size : XP_DP_BLOB_MAX);
	path_blob(&in);
	ctrl_blob(&in);
	return 0;
}
