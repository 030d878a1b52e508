// SPDX-License-Identifier: MIT
/*
 * verbs_blob.c - the verbs datapath's path blob and control address,
 * encoded and checked (verbs_blob.h).
 */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "verbs_blob.h"

#define PATH_MAGIC 0x50
#define PATH_FLAG_RC 0x01
#define CTRL_MAGIC 0x55
#define CTRL_VERSION 1
#define MTU_MIN 1 /* IBV_MTU_256 */
#define MTU_MAX 5 /* IBV_MTU_4096 */
#define U24_MASK 0xffffffu

void vb_path_blob_encode(const struct vb_path_blob *p, struct xp_dp_blob *b)
{
	b->len = VB_PATH_BLOB_BYTES;
	b->bytes[0] = PATH_MAGIC;
	b->bytes[1] = p->rc ? PATH_FLAG_RC : 0;
	xp_put_be(b->bytes + 2, p->qpn & U24_MASK, 3);
	xp_put_be(b->bytes + 5, p->psn & U24_MASK, 3);
	xp_put_be(b->bytes + 8, p->lid, 2);
	b->bytes[10] = p->mtu;
	memcpy(b->bytes + 11, p->gid, 16);
}

int vb_path_blob_decode(const struct xp_dp_blob *b, struct vb_path_blob *p, const char **why)
{
	const uint8_t *x = b->bytes;

	if (b->len != VB_PATH_BLOB_BYTES)
		*why = "length";
	else if (x[0] != PATH_MAGIC)
		*why = "magic";
	else if (x[1] & ~PATH_FLAG_RC)
		*why = "flags";
	else if (!xp_get_be(x + 2, 3))
		*why = "QPN 0";
	else if (x[10] < MTU_MIN || x[10] > MTU_MAX)
		*why = "MTU";
	else
		*why = NULL;
	if (*why)
		return -EINVAL;
	p->rc = x[1] & PATH_FLAG_RC;
	p->qpn = (uint32_t)xp_get_be(x + 2, 3);
	p->psn = (uint32_t)xp_get_be(x + 5, 3);
	p->lid = (uint16_t)xp_get_be(x + 8, 2);
	p->mtu = x[10];
	memcpy(p->gid, x + 11, 16);
	return 0;
}

void vb_ctrl_blob_encode(const struct vb_ctrl_blob *c, struct xp_dp_blob *b)
{
	b->len = VB_CTRL_BLOB_BYTES;
	b->bytes[0] = CTRL_MAGIC;
	b->bytes[1] = CTRL_VERSION;
	xp_put_be(b->bytes + 2, c->qpn & U24_MASK, 3);
	xp_put_be(b->bytes + 5, c->lid, 2);
	memcpy(b->bytes + 7, c->gid, 16);
}

int vb_ctrl_blob_decode(const struct xp_dp_blob *b, struct vb_ctrl_blob *c, const char **why)
{
	const uint8_t *x = b->bytes;

	if (b->len != VB_CTRL_BLOB_BYTES)
		*why = "length";
	else if (x[0] != CTRL_MAGIC)
		*why = "magic";
	else if (x[1] != CTRL_VERSION)
		*why = "version";
	else if (!xp_get_be(x + 2, 3))
		*why = "QPN 0";
	else
		*why = NULL;
	if (*why)
		return -EINVAL;
	c->qpn = (uint32_t)xp_get_be(x + 2, 3);
	c->lid = (uint16_t)xp_get_be(x + 5, 2);
	memcpy(c->gid, x + 7, 16);
	return 0;
}
