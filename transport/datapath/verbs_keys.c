// SPDX-License-Identifier: MIT
/*
 * verbs_keys.c - the verbs datapath's memory: regions (ibv_reg_mr, lkey and
 * rkey) and each receive's own rkey, a type 1 memory window bound over the
 * receive's buffer.
 *
 * Why windows: on UC, a late duplicate of a chunk is placed by the NIC
 * before software sees it; if it lands after its receive completed, it
 * overwrites memory the application owns again (docs/transport.md "Direct
 * placement"). A window per receive, invalidated when the receive's
 * completion is handed out, makes the NIC refuse it instead: after
 * recv_key_release() returns, a write carrying that rkey places nothing.
 *
 * Type 1 windows belong to the protection domain, so chunks of one receive
 * may arrive on any of the connection's paths (a type 2 window would be
 * tied to one QP). A bind is a work request on a QP: this file keeps one
 * UC QP connected to itself for binds and unbinds, with its own CQ, and
 * waits for each to complete, so that a key handed out is valid at once
 * and a released one is dead before the call returns. A bind and an unbind
 * (a bind of length 0, which also gives the window a new rkey) each cost
 * one post and one completion (about 18 and 11 us on rxe under TCG).
 *
 * Without windows (a device without IBV_DEVICE_MEM_WINDOW, or
 * cfg.no_recv_keys), recv_key() returns the region's rkey and
 * XP_DP_CAP_RECV_KEYS is not set: UC then carries the hazard; RC is safe
 * (it never delivers a duplicate).
 *
 * Windows are reused oldest-unbound first, and only once KEY_REUSE_MIN of
 * them wait (or max_keys exist): a type 1 window's rkey changes only in its
 * low 8 bits, by one per bind and per unbind, so a window's rkey comes back
 * after 128 uses of it; reuse in FIFO order spreads that over at least
 * 128 x 256 receives, where a LIFO would bring a hot window's rkey back
 * after 128.
 *
 * The residue: a window is checked at the first packet of a write, so a
 * write whose first packet passed just before the unbind may still place
 * its later packets. That needs a duplicate already on the wire when its
 * receive completes; the core's checks still refuse it as a chunk.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verbs_int.h"
#include "xp_range.h"

#define DEFAULT_MAX_KEYS 4096
#define BIND_WAIT_NS (5ull * 1000 * 1000 * 1000)
#define KEY_QP_DEPTH 4
#define KEY_REUSE_MIN 256

/* Whether this device binds type 1 windows: its flags say so and one allocates. */
static bool probe_mw(struct vb_dp *d)
{
	struct ibv_mw *mw;

	if (!(d->dev.attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) || d->dev.attr.max_mw <= 0)
		return false;
	mw = ibv_alloc_mw(d->pd, IBV_MW_TYPE_1);
	if (!mw)
		return false;
	ibv_dealloc_mw(mw);
	return true;
}

static int key_qp_open(struct vb_dp *d, struct pcm_diag *diag)
{
	struct vb_keys *k = &d->keys;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = KEY_QP_DEPTH, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	char where[160];
	int rc;

	vb_where(&d->dev, where, sizeof(where));
	k->cq = ibv_create_cq(d->dev.ctx, KEY_QP_DEPTH, NULL, NULL, 0);
	if (!k->cq) {
		rc = -errno;
		snprintf(diag->msg, sizeof(diag->msg), "verbs: %s: the window CQ: %s", where,
			 strerror(-rc));
		return rc;
	}
	ia.send_cq = k->cq;
	ia.recv_cq = k->cq;
	k->qp = ibv_create_qp(d->pd, &ia);
	if (!k->qp) {
		rc = -errno;
		snprintf(diag->msg, sizeof(diag->msg), "verbs: %s: the window QP: %s", where,
			 strerror(-rc));
		return rc;
	}
	rc = vb_qp_init(d, k->qp, 0);
	if (rc == 0)
		rc = vb_qp_connect(d, k->qp, false, 0, &d->dev.gid, d->dev.lid, k->qp->qp_num, 0,
				   d->dev.mtu);
	if (rc < 0)
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: %s: connecting the window QP to itself: %s", where, strerror(-rc));
	return rc;
}

int vb_keys_open(struct vb_dp *d, struct pcm_diag *diag)
{
	struct vb_keys *k = &d->keys;
	int rc;

	k->max_keys = d->cfg.max_keys ? d->cfg.max_keys : DEFAULT_MAX_KEYS;
	k->free = UINT32_MAX;
	k->free_tail = UINT32_MAX;
	k->use_mw = !d->cfg.no_recv_keys && probe_mw(d);
	if (!k->use_mw)
		return 0;
	if ((uint64_t)k->max_keys > (uint64_t)d->dev.attr.max_mw)
		k->max_keys = (uint32_t)d->dev.attr.max_mw;
	k->keys = calloc(k->max_keys, sizeof(*k->keys));
	if (!k->keys)
		return -ENOMEM;
	rc = vb_map_init(&k->by_rkey, k->max_keys);
	if (rc < 0)
		return rc;
	return key_qp_open(d, diag);
}

/* Busy-wait for the one outstanding bind's completion. */
static int wait_bind(struct vb_keys *k)
{
	uint64_t deadline = 0;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(k->cq, 1, &wc)) == 0) {
		uint64_t now = vb_mono_ns();

		if (!deadline)
			deadline = now + BIND_WAIT_NS;
		else if (now > deadline)
			return -ETIMEDOUT;
	}
	if (n < 0)
		return -EIO;
	return wc.status == IBV_WC_SUCCESS ? 0 : -EIO;
}

static int mw_bind(struct vb_keys *k, struct vb_key *key, struct ibv_mr *mr, uint64_t addr,
		uint64_t len)
{
	struct ibv_mw_bind b = {
		.wr_id = 0,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = addr, .length = len,
			       .mw_access_flags = len ? IBV_ACCESS_REMOTE_WRITE : 0 },
	};
	int rc = ibv_bind_mw(k->qp, key->mw, &b);

	if (rc)
		return -rc;
	return wait_bind(k);
}

/* Unbind @key (a zero-length bind); a window that will not unbind is freed instead. */
static void unbind(struct vb_keys *k, struct vb_key *key)
{
	struct ibv_mr *mr = ((struct vb_region *)key->mr)->mr;

	vb_map_del(&k->by_rkey, key->rkey);
	key->bound = false;
	k->unbinds++;
	if (mw_bind(k, key, mr, (uint64_t)(uintptr_t)mr->addr, 0) == 0)
		return;
	ibv_dealloc_mw(key->mw); /* deallocation invalidates too */
	key->mw = NULL;
}

static void key_put(struct vb_keys *k, uint32_t i)
{
	k->keys[i].next_free = UINT32_MAX;
	if (k->free_tail == UINT32_MAX)
		k->free = i;
	else
		k->keys[k->free_tail].next_free = i;
	k->free_tail = i;
	k->n_free++;
}

/* The oldest unbound window once enough wait (else a new one, while there is room). */
static int key_take(struct vb_dp *d, uint32_t *out)
{
	struct vb_keys *k = &d->keys;
	uint32_t i = k->free;

	if (i != UINT32_MAX && (k->n_free >= KEY_REUSE_MIN || k->n_keys == k->max_keys)) {
		k->free = k->keys[i].next_free;
		if (k->free == UINT32_MAX)
			k->free_tail = UINT32_MAX;
		k->n_free--;
	} else {
		if (k->n_keys == k->max_keys)
			return -ENOSPC;
		i = k->n_keys++;
	}
	if (!k->keys[i].mw)
		k->keys[i].mw = ibv_alloc_mw(d->pd, IBV_MW_TYPE_1);
	if (!k->keys[i].mw) {
		int rc = -errno;

		key_put(k, i);
		return rc ? rc : -ENOMEM;
	}
	*out = i;
	return 0;
}

int vb_mr_reg(struct xp_dp *dp, void *addr, size_t len, struct xp_dp_mr *mr,
	      struct pcm_diag *diag)
{
	struct vb_dp *d = to_vb(dp);
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct vb_region *r;
	char where[160];

	if (!addr || !len) {
		vb_where(&d->dev, where, sizeof(where));
		snprintf(diag->msg, sizeof(diag->msg), "verbs: %s: a region needs an address and a "
			 "length (got %p, %zu bytes)", where, addr, len);
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (d->keys.use_mw)
		access |= IBV_ACCESS_MW_BIND;
	r->mr = ibv_reg_mr(d->pd, addr, len, access);
	if (!r->mr) {
		int err = errno ? errno : ENOMEM;

		free(r);
		return vb_diag_pin(&d->dev, "a region", len, err, diag);
	}
	r->next = d->keys.regions;
	if (r->next)
		r->next->prev = r;
	d->keys.regions = r;
	*mr = (struct xp_dp_mr){ .addr = addr, .len = len, .lkey = r->mr->lkey,
				 .rkey = r->mr->rkey, .handle = (uintptr_t)r };
	return 0;
}

static void region_free(struct vb_dp *d, struct vb_region *r)
{
	struct vb_keys *k = &d->keys;

	for (uint32_t i = 0; i < k->n_keys; i++)
		if (k->keys[i].bound && k->keys[i].mr == (uintptr_t)r) {
			unbind(k, &k->keys[i]);
			key_put(k, i);
		}
	ibv_dereg_mr(r->mr);
	if (r->prev)
		r->prev->next = r->next;
	else
		k->regions = r->next;
	if (r->next)
		r->next->prev = r->prev;
	free(r);
}

void vb_mr_dereg(struct xp_dp *dp, struct xp_dp_mr *mr)
{
	if (mr->handle)
		region_free(to_vb(dp), (struct vb_region *)mr->handle);
	mr->handle = 0;
}

int vb_recv_key(struct xp_dp *dp, const struct xp_dp_mr *mr, uint64_t addr, uint64_t len,
		uint32_t *rkey)
{
	struct vb_dp *d = to_vb(dp);
	struct vb_keys *k = &d->keys;
	struct vb_region *r = (struct vb_region *)mr->handle;
	uint64_t base = (uint64_t)(uintptr_t)mr->addr;
	struct vb_key *key;
	uint32_t i = 0;
	int rc;

	if (!r || addr < base || !xp_range_within(addr - base, len, mr->len))
		return -EINVAL;
	if (!k->use_mw || len == 0) {
		*rkey = mr->rkey; /* a zero-length write places nothing: no window needed */
		return 0;
	}
	rc = key_take(d, &i);
	if (rc < 0)
		return rc;
	key = &k->keys[i];
	rc = mw_bind(k, key, r->mr, addr, len);
	if (rc < 0) {
		key_put(k, i);
		return rc;
	}
	key->rkey = key->mw->rkey;
	key->mr = (uintptr_t)r;
	key->bound = true;
	k->binds++;
	rc = vb_map_put(&k->by_rkey, key->rkey, i);
	if (rc < 0) {
		unbind(k, key);
		key_put(k, i);
		return rc;
	}
	*rkey = key->rkey;
	return 0;
}

void vb_recv_key_release(struct xp_dp *dp, uint32_t rkey)
{
	struct vb_keys *k = &to_vb(dp)->keys;
	uint32_t i;

	if (!k->use_mw || !vb_map_get(&k->by_rkey, rkey, &i) || !k->keys[i].bound)
		return; /* a region's rkey, or released already */
	unbind(k, &k->keys[i]);
	key_put(k, i);
}

void vb_keys_close(struct vb_dp *d)
{
	struct vb_keys *k = &d->keys;

	while (k->regions)
		region_free(d, k->regions);
	for (uint32_t i = 0; i < k->n_keys; i++)
		if (k->keys[i].mw)
			ibv_dealloc_mw(k->keys[i].mw);
	if (k->qp)
		ibv_destroy_qp(k->qp);
	if (k->cq)
		ibv_destroy_cq(k->cq);
	vb_map_fini(&k->by_rkey);
	free(k->keys);
	*k = (struct vb_keys){ 0 };
}
