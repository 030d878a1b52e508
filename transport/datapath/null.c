// SPDX-License-Identifier: MIT
/*
 * null.c - the "null" datapath: in-process loopback between instances with
 * no wire cost, to measure the engine itself.
 *
 * Instances live in a process-wide table of XP_NULL_MAX_INSTANCES slots. A
 * write posted on a path goes straight to the instance at the other end:
 * the sender checks the receiver's rkey, places the bytes (only with
 * cfg.copy: tests turn it on, the goodput benchmark leaves it off so that a
 * 64 KiB chunk costs an event, not a 64 KiB memcpy) and pushes a chunk event
 * onto the receiver's MPSC ring. Writes go through a send queue of
 * send_slots entries, as on a NIC: a receiver whose ring is full holds the
 * queue back (it is retried at every post and poll), and send_slots() tells
 * the engine how much room is left, so nothing is dropped for want of room
 * and a slow receiver slows its senders. Control packets are copied into the
 * receiver's control ring; a full one drops the packet (the core
 * retransmits). Nothing is lost, reordered or marked.
 *
 * Receive keys are real: each key is a slot with a generation. The sender
 * holds the slot's writer count while it checks and copies; releasing a key
 * clears it and waits for the writers to leave, so once recv_key_release()
 * returns no write can land in the buffer: a late duplicate is dropped
 * (stats.writes_bad_key), as a memory window would refuse it.
 *
 * An instance that closes leaves its table slot empty: senders enter a
 * slot (a busy count) before they touch the instance in it, and close waits
 * for them to leave, so a peer may close at any time.
 *
 * Addresses are real pointers: an lkey is not checked (the engine only
 * posts registered memory), an rkey is.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "bytes.h"
#include "datapath.h"
#include "keys.h"
#include "xp_ring.h"
#include "xp_wake.h"
#include "wire.h"

#define XP_NULL_MAX_INSTANCES 256
#define BLOB_MAGIC 0x4e /* 'N' */

#define DEFAULT_RECV_SLOTS 8192
#define DEFAULT_CTRL_SLOTS 512
#define DEFAULT_MAX_PATHS 65536
#define DEFAULT_MAX_KEYS 65536
#define DEFAULT_SEND_SLOTS 1024
#define NULL_DEFAULT_CTRL_MTU 1024 /* the core's default */
#define MAX_PEERS XP_NULL_MAX_INSTANCES

struct chunk_ev {
	uint32_t imm;
	uint32_t len;
	uint32_t path; /* the receiver's path handle; UINT32_MAX: refused, skip */
};

struct ctrl_hdr {
	uint32_t from;        /* the sender's instance slot */
	uint32_t incarnation; /* and its incarnation */
	uint32_t len;
	uint32_t pad;
};

struct path {
	bool in_use;
	bool connected;
	uint32_t peer_slot;
	uint32_t peer_incarnation;
	uint32_t peer_path;
	uint32_t next_free;
};

struct peer {
	uint32_t refs;
	bool in_use;
	uint32_t slot;
	uint32_t incarnation;
};

struct null_dp {
	struct xp_dp base;
	struct xp_dp_config cfg;
	uint32_t slot;
	uint32_t incarnation;
	struct xp_mpsc chunks;
	struct xp_mpsc ctrl;
	uint32_t ctrl_release; /* control slots handed out by the last poll */
	uint32_t ctrl_elem_bytes;
	int efd;
	_Atomic int armed;

	struct xp_keys keys;
	struct path *paths;
	uint32_t n_paths, cap_paths, path_free;
	struct peer peers[MAX_PEERS];
	uint32_t peer_of_slot[XP_NULL_MAX_INSTANCES]; /* handle + 1, 0: none */

	/* counters written by other instances' threads are atomic */
	_Atomic uint64_t writes_bad_key;
	_Atomic uint64_t wakeups;
	_Atomic uint64_t bytes_copied;
	struct xp_write *sq;   /* the send queue: a ring of cfg.send_slots */
	uint32_t sq_head, sq_n;
	struct xp_dp_stats st;
};

struct instance_slot {
	_Atomic(struct null_dp *) dp;
	_Atomic uint32_t busy;
};

static struct instance_slot g_slots[XP_NULL_MAX_INSTANCES];
static _Atomic uint32_t g_incarnation;

/* ---- the instance table --------------------------------------------------------------------- */

static int slot_take(struct null_dp *n)
{
	for (uint32_t i = 0; i < XP_NULL_MAX_INSTANCES; i++) {
		struct null_dp *expect = NULL;

		if (atomic_compare_exchange_strong(&g_slots[i].dp, &expect, n)) {
			n->slot = i;
			return 0;
		}
	}
	return -ENOSPC;
}

static void slot_leave_wait(uint32_t i)
{
	atomic_store(&g_slots[i].dp, NULL);
	while (atomic_load(&g_slots[i].busy))
		;
}

/* Enter slot @i and return its instance if it is still incarnation @inc. */
static struct null_dp *slot_enter(uint32_t i, uint32_t inc)
{
	struct null_dp *n;

	atomic_fetch_add(&g_slots[i].busy, 1);
	n = atomic_load(&g_slots[i].dp);
	if (n && n->incarnation == inc)
		return n;
	atomic_fetch_sub_explicit(&g_slots[i].busy, 1, memory_order_release);
	return NULL;
}

static void slot_exit(uint32_t i)
{
	atomic_fetch_sub_explicit(&g_slots[i].busy, 1, memory_order_release);
}

/* ---- open / close ---------------------------------------------------------------------------- */

static uint32_t or_default(uint32_t v, uint32_t def)
{
	return v ? v : def;
}

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 2;

	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

static void null_close(struct xp_dp *dp)
{
	struct null_dp *n = (struct null_dp *)dp;

	if (n->slot != UINT32_MAX)
		slot_leave_wait(n->slot);
	xp_mpsc_fini(&n->chunks);
	xp_mpsc_fini(&n->ctrl);
	if (n->efd >= 0)
		close(n->efd);
	xp_keys_fini(&n->keys);
	free(n->paths);
	free(n->sq);
	free(n);
}

static int null_open(const struct xp_dp_config *cfg, struct xp_dp **out, struct pcm_diag *diag)
{
	struct xp_dp_config def = { 0 };
	struct null_dp *n;
	int rc;

	if (!cfg)
		cfg = &def;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->base.ops = &xp_dp_null_ops;
	n->cfg = *cfg;
	n->slot = UINT32_MAX;
	n->efd = -1;
	n->cfg.ctrl_mtu = or_default(cfg->ctrl_mtu, NULL_DEFAULT_CTRL_MTU);
	n->cfg.send_slots = or_default(cfg->send_slots, DEFAULT_SEND_SLOTS);
	n->cfg.max_paths = or_default(cfg->max_paths, DEFAULT_MAX_PATHS);
	n->cfg.max_keys = or_default(cfg->max_keys, DEFAULT_MAX_KEYS);
	if (n->cfg.ctrl_mtu > XP_WIRE_MAX_MTU || n->cfg.max_keys > XP_KEYS_MAX) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "null datapath: ctrl_mtu %u (max %u) or max_keys %u (max %u) too large",
			 n->cfg.ctrl_mtu, XP_WIRE_MAX_MTU, n->cfg.max_keys, XP_KEYS_MAX);
		free(n);
		return -EINVAL;
	}
	n->ctrl_elem_bytes = (uint32_t)sizeof(struct ctrl_hdr) + n->cfg.ctrl_mtu;
	rc = xp_mpsc_init(&n->chunks, pow2_at_least(or_default(cfg->recv_slots, DEFAULT_RECV_SLOTS)),
			  sizeof(struct chunk_ev));
	if (rc == 0)
		rc = xp_mpsc_init(&n->ctrl, DEFAULT_CTRL_SLOTS, n->ctrl_elem_bytes);
	if (rc == 0)
		rc = xp_keys_init(&n->keys, n->cfg.max_keys);
	n->sq = calloc(n->cfg.send_slots, sizeof(*n->sq));
	n->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (rc == 0 && (!n->sq || n->efd < 0))
		rc = n->efd < 0 ? -errno : -ENOMEM;
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "null datapath: engine %u: %s", cfg->engine,
			 strerror(-rc));
		goto err_close;
	}
	n->path_free = UINT32_MAX;
	n->incarnation = atomic_fetch_add(&g_incarnation, 1) + 1;
	rc = slot_take(n);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "null datapath: all %u instances of this process are open",
			 XP_NULL_MAX_INSTANCES);
		goto err_close;
	}
	*out = &n->base;
	return 0;

err_close:
	null_close(&n->base);
	return rc;
}

static void null_info(struct xp_dp *dp, struct xp_dp_info *info)
{
	struct null_dp *n = (struct null_dp *)dp;

	memset(info, 0, sizeof(*info));
	info->name = "null";
	info->target = "softnic"; /* the CPU transport's signals, none of a NIC's */
	info->caps = XP_DP_CAP_RECV_KEYS | XP_DP_CAP_UC | XP_DP_CAP_RC | XP_DP_CAP_WAIT_FD;
	info->numa_node = -1;
	info->line_rate_bps = 1600ull * 1000 * 1000 * 1000; /* 1.6 Tbit/s: nothing is paced below */
	info->rto_min_ns = 1000000;                          /* a thread may be descheduled */
	info->ctrl_mtu = n->cfg.ctrl_mtu;
	info->max_write_bytes = XP_CHUNK_BYTES_MAX;
	info->max_paths = n->cfg.max_paths;
	info->send_slots = n->cfg.send_slots;
}

static void null_stats(struct xp_dp *dp, struct xp_dp_stats *st)
{
	struct null_dp *n = (struct null_dp *)dp;

	*st = n->st;
	st->writes_bad_key = atomic_load(&n->writes_bad_key);
	st->wakeups = atomic_load(&n->wakeups);
	st->bytes_copied = atomic_load(&n->bytes_copied);
}

/* ---- memory ---------------------------------------------------------------------------------- */

static int null_mr_reg(struct xp_dp *dp, void *addr, size_t len, struct xp_dp_mr *mr,
		       struct pcm_diag *diag)
{
	struct null_dp *n = (struct null_dp *)dp;
	char who[48];

	snprintf(who, sizeof(who), "null datapath: engine %u", n->cfg.engine);
	return xp_keys_mr_reg(&n->keys, who, addr, len, mr, diag);
}

static void null_mr_dereg(struct xp_dp *dp, struct xp_dp_mr *mr)
{
	xp_keys_release(&((struct null_dp *)dp)->keys, (uint32_t)mr->handle);
}

static int null_recv_key(struct xp_dp *dp, const struct xp_dp_mr *mr, uint64_t addr, uint64_t len,
			 uint32_t *rkey)
{
	return xp_keys_recv_key(&((struct null_dp *)dp)->keys, mr, addr, len, rkey);
}

static void null_recv_key_release(struct xp_dp *dp, uint32_t rkey)
{
	xp_keys_release(&((struct null_dp *)dp)->keys, rkey);
}

/* ---- addresses, peers, paths --------------------------------------------------------------- */

/* Blobs: magic u8, slot u8, incarnation u32, then (paths) the handle u32 (bytes.h). */
#define put32(p, v) xp_put_be((p), (v), 4)
#define get32(p) ((uint32_t)xp_get_be((p), 4))

static void null_local_addr(struct xp_dp *dp, struct xp_dp_blob *addr)
{
	struct null_dp *n = (struct null_dp *)dp;

	addr->len = 6;
	addr->bytes[0] = BLOB_MAGIC;
	addr->bytes[1] = (uint8_t)n->slot;
	put32(addr->bytes + 2, n->incarnation);
}

static int parse_addr(const struct xp_dp_blob *b, uint8_t want_len, uint32_t *slot,
		      uint32_t *inc)
{
	if (b->len != want_len || b->bytes[0] != BLOB_MAGIC)
		return -EINVAL;
	*slot = b->bytes[1];
	*inc = get32(b->bytes + 2);
	return 0;
}

/* A peer entry to take: a free one, else one no connection holds. */
static int peer_entry_take(struct null_dp *n)
{
	for (uint32_t i = 0; i < MAX_PEERS; i++)
		if (!n->peers[i].in_use)
			return (int)i;
	for (uint32_t i = 0; i < MAX_PEERS; i++)
		if (!n->peers[i].refs)
			return (int)i;
	return -ENOSPC;
}

/* The peer handle of instance @slot, incarnation @inc, made on first sight. */
static int peer_for_slot(struct null_dp *n, uint32_t slot, uint32_t inc, uint32_t *out)
{
	uint32_t h = n->peer_of_slot[slot];
	struct peer *p;
	int i;

	if (h && n->peers[h - 1].incarnation == inc) {
		*out = h - 1;
		return 0;
	}
	i = peer_entry_take(n);
	if (i < 0)
		return i;
	p = &n->peers[i];
	if (p->in_use && n->peer_of_slot[p->slot] == (uint32_t)i + 1)
		n->peer_of_slot[p->slot] = 0;
	*p = (struct peer){ .in_use = true, .slot = slot, .incarnation = inc };
	n->peer_of_slot[slot] = (uint32_t)i + 1;
	*out = (uint32_t)i;
	return 0;
}

static int null_peer_open(struct xp_dp *dp, const struct xp_dp_blob *addr, uint32_t *peer,
			  struct pcm_diag *diag)
{
	struct null_dp *n = (struct null_dp *)dp;
	uint32_t slot, inc;
	int rc = parse_addr(addr, 6, &slot, &inc);

	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "null datapath: not a null address");
		return rc;
	}
	rc = peer_for_slot(n, slot, inc, peer);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "null datapath: peer %u: no peer slot free",
			 slot);
		return rc;
	}
	n->peers[*peer].refs++;
	return 0;
}

static void null_peer_close(struct xp_dp *dp, uint32_t peer)
{
	struct null_dp *n = (struct null_dp *)dp;

	if (peer < MAX_PEERS && n->peers[peer].in_use && n->peers[peer].refs)
		n->peers[peer].refs--;
}

static int null_path_create(struct xp_dp *dp, const struct xp_dp_path_attr *attr, uint32_t *path,
			    uint16_t *entropy, struct xp_dp_blob *blob, struct pcm_diag *diag)
{
	struct null_dp *n = (struct null_dp *)dp;
	uint32_t h;

	if (n->path_free != UINT32_MAX) {
		h = n->path_free;
		n->path_free = n->paths[h].next_free;
	} else {
		if (n->n_paths == n->cfg.max_paths) {
			snprintf(diag->msg, sizeof(diag->msg),
				 "null datapath: engine %u: all %u paths are in use",
				 n->cfg.engine, n->cfg.max_paths);
			return -ENOSPC;
		}
		if (n->n_paths == n->cap_paths) {
			uint32_t cap = n->cap_paths ? n->cap_paths * 2 : 16;
			struct path *p = realloc(n->paths, (size_t)cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			n->paths = p;
			n->cap_paths = cap;
		}
		h = n->n_paths++;
	}
	n->paths[h] = (struct path){ .in_use = true };
	*path = h;
	*entropy = attr->entropy ? attr->entropy : (uint16_t)(h + 1);
	null_local_addr(dp, blob);
	blob->len = 10;
	put32(blob->bytes + 6, h);
	return 0;
}

static int null_path_connect(struct xp_dp *dp, uint32_t path, uint32_t peer,
			     const struct xp_dp_blob *remote, struct pcm_diag *diag)
{
	struct null_dp *n = (struct null_dp *)dp;
	uint32_t slot, inc;
	struct path *p;

	if (path >= n->n_paths || !n->paths[path].in_use || peer >= MAX_PEERS ||
	    !n->peers[peer].in_use || parse_addr(remote, 10, &slot, &inc) < 0 ||
	    slot != n->peers[peer].slot || inc != n->peers[peer].incarnation) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "null datapath: path %u: the peer's path blob does not name peer %u", path,
			 peer);
		return -EINVAL;
	}
	p = &n->paths[path];
	p->connected = true;
	p->peer_slot = slot;
	p->peer_incarnation = inc;
	p->peer_path = get32(remote->bytes + 6);
	return 0;
}

static void null_path_destroy(struct xp_dp *dp, uint32_t path)
{
	struct null_dp *n = (struct null_dp *)dp;

	if (path >= n->n_paths || !n->paths[path].in_use)
		return;
	n->paths[path] = (struct path){ .next_free = n->path_free };
	n->path_free = path;
}

/* ---- data ------------------------------------------------------------------------------------ */

/* After publishing: wake the receiver if it armed (xp_wake.h, paired with null_arm()). */
static void wake(struct null_dp *r)
{
	if (xp_wake_ring(&r->armed, r->efd))
		atomic_fetch_add_explicit(&r->wakeups, 1, memory_order_relaxed);
}

static uint32_t null_send_slots(struct xp_dp *dp)
{
	struct null_dp *n = (struct null_dp *)dp;

	return n->cfg.send_slots - n->sq_n;
}

/* How many writes from @w on go to the instance that path @w[0] reaches. */
static uint32_t same_peer_run(const struct null_dp *n, const struct xp_write *w, uint32_t cnt)
{
	const struct path *p0 = &n->paths[w[0].path];
	uint32_t i = 1;

	for (; i < cnt; i++) {
		const struct path *p;

		if (w[i].path >= n->n_paths)
			break;
		p = &n->paths[w[i].path];
		if (!p->connected || p->peer_slot != p0->peer_slot ||
		    p->peer_incarnation != p0->peer_incarnation)
			break;
	}
	return i;
}

/*
 * Post the writes of @w that go to the instance of path @w[0] (connected);
 * return how many (fewer when its ring fills).
 */
static uint32_t post_run(struct null_dp *n, const struct xp_write *w, uint32_t cnt)
{
	const struct path *p0 = &n->paths[w[0].path];
	uint32_t run = same_peer_run(n, w, cnt), i = 0;
	struct null_dp *r = slot_enter(p0->peer_slot, p0->peer_incarnation);

	if (!r)
		return run; /* the peer is gone: its writes are lost, as on a wire */
	for (; i < run; i++) {
		struct chunk_ev *ev;
		uint64_t pos;

		ev = xp_mpsc_claim(&r->chunks, &pos);
		if (!ev)
			break;
		ev->imm = w[i].imm;
		ev->len = w[i].len;
		ev->path = n->paths[w[i].path].peer_path;
		if (!xp_keys_place(&r->keys, w[i].rkey, w[i].raddr, w[i].len,
				   n->cfg.copy ? (const void *)(uintptr_t)w[i].laddr : NULL)) {
			ev->path = UINT32_MAX;
			atomic_fetch_add_explicit(&r->writes_bad_key, 1, memory_order_relaxed);
		} else if (n->cfg.copy) {
			atomic_fetch_add_explicit(&r->bytes_copied, w[i].len, memory_order_relaxed);
		}
		xp_mpsc_publish(&r->chunks, pos);
	}
	if (i)
		wake(r);
	slot_exit(p0->peer_slot);
	return i;
}

/* Hand queued writes to their receivers, in order, until one has no room. */
static void sq_flush(struct null_dp *n)
{
	while (n->sq_n) {
		uint32_t run = n->cfg.send_slots - n->sq_head, k;
		const struct xp_write *x = &n->sq[n->sq_head];

		if (run > n->sq_n)
			run = n->sq_n;
		if (x->path >= n->n_paths || !n->paths[x->path].connected)
			k = 1; /* no such path (destroyed since): lost */
		else
			k = post_run(n, x, run);
		if (k == 0) {
			n->st.writes_full++;
			return;
		}
		n->sq_head = (n->sq_head + k) % n->cfg.send_slots;
		n->sq_n -= k;
	}
}

static uint32_t null_post_writes(struct xp_dp *dp, const struct xp_write *w, uint32_t cnt)
{
	struct null_dp *n = (struct null_dp *)dp;
	uint32_t room = n->cfg.send_slots - n->sq_n, take = cnt < room ? cnt : room;

	for (uint32_t i = 0; i < take; i++)
		n->sq[(n->sq_head + n->sq_n + i) % n->cfg.send_slots] = w[i];
	n->sq_n += take;
	n->st.writes_posted += take;
	sq_flush(n);
	return take;
}

static int null_post_ctrl(struct xp_dp *dp, uint32_t peer, const void *bytes, uint32_t len)
{
	struct null_dp *n = (struct null_dp *)dp;
	const struct peer *p;
	struct null_dp *r;
	struct ctrl_hdr *h;
	uint64_t pos;
	int rc = 0;

	if (peer >= MAX_PEERS || !n->peers[peer].in_use)
		return -EINVAL;
	p = &n->peers[peer];
	r = slot_enter(p->slot, p->incarnation);
	if (!r) {
		n->st.ctrl_dropped++;
		return 0; /* gone: lost */
	}
	if (len > r->cfg.ctrl_mtu) {
		rc = -EMSGSIZE;
	} else if (!(h = xp_mpsc_claim(&r->ctrl, &pos))) {
		n->st.ctrl_dropped++;
		rc = -EAGAIN;
	} else {
		h->from = n->slot;
		h->incarnation = n->incarnation;
		h->len = len;
		memcpy(h + 1, bytes, len);
		xp_mpsc_publish(&r->ctrl, pos);
		n->st.ctrl_sent++;
		wake(r);
	}
	slot_exit(p->slot);
	return rc;
}

static int null_poll(struct xp_dp *dp, struct xp_dp_event *ev, uint32_t max)
{
	struct null_dp *n = (struct null_dp *)dp;
	uint32_t k = 0;

	sq_flush(n);
	for (; n->ctrl_release; n->ctrl_release--)
		xp_mpsc_release(&n->ctrl);
	/* Control packets are handed out in place, their slots released at the next poll. */
	while (k < max) {
		const struct ctrl_hdr *h = xp_mpsc_peek_at(&n->ctrl, n->ctrl_release);
		uint32_t peer;

		if (!h)
			break;
		n->ctrl_release++;
		if (peer_for_slot(n, h->from, h->incarnation, &peer) < 0)
			continue; /* every peer slot pinned by a connection: lost */
		ev[k++] = (struct xp_dp_event){ .kind = XP_DP_EV_CTRL,
						.len = h->len,
						.peer = peer,
						.bytes = (const uint8_t *)(h + 1) };
		n->st.ctrl_received++;
	}
	while (k < max) {
		const struct chunk_ev *c = xp_mpsc_peek(&n->chunks);

		if (!c)
			break;
		if (c->path != UINT32_MAX) {
			ev[k++] = (struct xp_dp_event){ .kind = XP_DP_EV_CHUNK,
							.imm = c->imm,
							.len = c->len,
							.path = c->path };
			n->st.chunks_delivered++;
		}
		xp_mpsc_release(&n->chunks);
	}
	return (int)k;
}

static int null_wait_fd(struct xp_dp *dp)
{
	return ((struct null_dp *)dp)->efd;
}

static int null_arm(struct xp_dp *dp)
{
	struct null_dp *n = (struct null_dp *)dp;
	uint64_t v;

	if (read(n->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	xp_wake_arm(&n->armed); /* wake.h: paired with wake() */
	if (n->sq_n || xp_mpsc_ready(&n->chunks) || xp_mpsc_peek_at(&n->ctrl, n->ctrl_release)) {
		atomic_store(&n->armed, 0);
		return -EAGAIN;
	}
	return 0;
}

static uint64_t null_now_ns(struct xp_dp *dp)
{
	return xp_mono_ns();
}

const struct xp_dp_ops xp_dp_null_ops = {
	.name = "null",
	.boot = &xp_boot_registry_ops,
	.open = null_open,
	.close = null_close,
	.info = null_info,
	.stats = null_stats,
	.mr_reg = null_mr_reg,
	.mr_dereg = null_mr_dereg,
	.recv_key = null_recv_key,
	.recv_key_release = null_recv_key_release,
	.local_addr = null_local_addr,
	.peer_open = null_peer_open,
	.peer_close = null_peer_close,
	.path_create = null_path_create,
	.path_connect = null_path_connect,
	.path_destroy = null_path_destroy,
	.send_slots = null_send_slots,
	.post_writes = null_post_writes,
	.post_ctrl = null_post_ctrl,
	.poll = null_poll,
	.wait_fd = null_wait_fd,
	.arm = null_arm,
	.now_ns = null_now_ns,
};
