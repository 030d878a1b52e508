// SPDX-License-Identifier: MIT
/*
 * verbs_dev.c - the verbs datapath's device, port and GID choice, and the
 * diagnostics of everything that can go wrong before a byte moves: no RDMA
 * device, a device this user may not open, a port that is not active, a
 * GID index out of range, empty or of the wrong family for the peer, a
 * registration past RLIMIT_MEMLOCK, a peer whose address does not resolve.
 * Each returns -errno and a pcm_diag that names the device, port, GID and
 * peer involved and says what to do.
 *
 * GID choice: the configured index, else the first RoCE v2 GID holding an
 * IPv4 address, else the first RoCE v2 GID, else index 0 (InfiniBand).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "verbs_int.h"

#define CAP_IPC_LOCK_BIT 14

void vb_gid_str(const union ibv_gid *gid, char *out, size_t n)
{
	char s[INET6_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, gid->raw, s, sizeof(s)))
		snprintf(s, sizeof(s), "?");
	snprintf(out, n, "%s", s);
}

bool vb_gid_is_v4(const union ibv_gid *gid)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(gid->raw, mapped, sizeof(mapped)) == 0;
}

void vb_where(const struct vb_dev *dev, char *out, size_t n)
{
	char g[INET6_ADDRSTRLEN];

	vb_gid_str(&dev->gid, g, sizeof(g));
	snprintf(out, n, "%s port %u GID[%d] %s", dev->name, dev->port, dev->gid_index, g);
}

static const char *gid_type_name(enum ibv_gid_type t)
{
	switch (t) {
	case IBV_GID_TYPE_IB:
		return "IB";
	case IBV_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	}
	return "?";
}

/* ---- the device --------------------------------------------------------------------------- */

static void list_names(struct ibv_device **list, int n, char *out, size_t cap)
{
	out[0] = '\0';
	for (int i = 0; i < n; i++)
		snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? ", " : "",
			 ibv_get_device_name(list[i]));
}

static int open_device(struct vb_dev *dev, const struct xp_dp_config *cfg, char *sysfs,
		       size_t sysfs_n, struct pcm_diag *diag)
{
	struct ibv_device **list, *pick = NULL;
	char names[256], cdev[128];
	int n = 0, err;

	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		err = errno;
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: no RDMA device: ibv_get_device_list() found none%s%s (load a "
			 "driver and its libibverbs provider; for soft-RoCE: modprobe rdma_rxe && "
			 "rdma link add rxe0 type rxe netdev eth0)",
			 err ? ": " : "", err ? strerror(err) : "");
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	for (int i = 0; i < n && !pick; i++)
		if (!cfg->device || strcmp(ibv_get_device_name(list[i]), cfg->device) == 0)
			pick = list[i];
	if (!pick) {
		list_names(list, n, names, sizeof(names));
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: no RDMA device named '%s' (found: %s)", cfg->device, names);
		ibv_free_device_list(list);
		return -ENODEV;
	}
	snprintf(dev->name, sizeof(dev->name), "%s", ibv_get_device_name(pick));
	snprintf(sysfs, sysfs_n, "%s", pick->ibdev_path);
	snprintf(cdev, sizeof(cdev), "/dev/infiniband/%s", pick->dev_name);
	errno = 0;
	dev->ctx = ibv_open_device(pick);
	err = errno;
	ibv_free_device_list(list);
	if (dev->ctx)
		return 0;
	/*
	 * libibverbs' errno is not reliable here: when open() of the node is
	 * refused it may try other ways and leave ENOENT. Ask the node itself.
	 */
	if (err == EACCES || err == EPERM || (access(cdev, R_OK | W_OK) < 0 && errno == EACCES)) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: %s: permission denied opening %s: this user needs read-write "
			 "access to it (rdma-core's udev rules give it to everyone; check its mode "
			 "and owner, or run in a group that may use it)",
			 dev->name, cdev);
		return -EPERM;
	}
	snprintf(diag->msg, sizeof(diag->msg), "verbs: %s: cannot open %s: %s", dev->name, cdev,
		 strerror(err ? err : ENODEV));
	return err ? -err : -ENODEV;
}

static uint64_t lane_gbps_x1000(uint8_t speed)
{
	switch (speed) {
	case 1: return 2500;    /* SDR */
	case 2: return 5000;    /* DDR */
	case 4: return 10000;   /* QDR, FDR10 */
	case 8: return 10000;
	case 16: return 14000;  /* FDR */
	case 32: return 25000;  /* EDR */
	case 64: return 50000;  /* HDR */
	case 128: return 100000; /* NDR */
	}
	return 2500;
}

static uint64_t lanes(uint8_t width)
{
	switch (width) {
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	}
	return 1;
}

static int read_numa_node(const char *sysfs)
{
	char path[320];
	FILE *f;
	int node = -1;

	snprintf(path, sizeof(path), "%s/device/numa_node", sysfs);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	return node;
}

static int query_port(struct vb_dev *dev, uint8_t port, struct ibv_port_attr *pa,
		      struct pcm_diag *diag)
{
	int err;

	if (port == 0 || port > dev->attr.phys_port_cnt) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: %s has %u port%s; port %u does not exist", dev->name,
			 dev->attr.phys_port_cnt, dev->attr.phys_port_cnt == 1 ? "" : "s", port);
		return -EINVAL;
	}
	err = ibv_query_port(dev->ctx, port, pa);
	if (err) {
		snprintf(diag->msg, sizeof(diag->msg), "verbs: %s port %u: ibv_query_port: %s",
			 dev->name, port, strerror(err));
		return -err;
	}
	if (pa->state != IBV_PORT_ACTIVE) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: %s port %u is %s, not ACTIVE (is its link up? ibv_devinfo shows "
			 "it)",
			 dev->name, port, ibv_port_state_str(pa->state));
		return -ENETDOWN;
	}
	return 0;
}

/* ---- the GID ------------------------------------------------------------------------------ */

static void list_gids(const struct ibv_gid_entry *e, ssize_t n, uint8_t port, char *out,
		      size_t cap)
{
	char g[INET6_ADDRSTRLEN];
	int shown = 0;

	out[0] = '\0';
	for (ssize_t i = 0; i < n; i++) {
		if (e[i].port_num != port)
			continue;
		vb_gid_str(&e[i].gid, g, sizeof(g));
		snprintf(out + strlen(out), cap - strlen(out), "%s%u %s (%s)", shown++ ? ", " : "",
			 e[i].gid_index, g, gid_type_name(e[i].gid_type));
	}
	if (!shown)
		snprintf(out, cap, "none");
}

static const struct ibv_gid_entry *default_gid(const struct ibv_gid_entry *e, ssize_t n,
					       uint8_t port)
{
	const struct ibv_gid_entry *v2 = NULL, *any = NULL;

	for (ssize_t i = 0; i < n; i++) {
		if (e[i].port_num != port)
			continue;
		if (!any || e[i].gid_index < any->gid_index)
			any = &e[i];
		if (e[i].gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (vb_gid_is_v4(&e[i].gid))
			return &e[i];
		if (!v2)
			v2 = &e[i];
	}
	return v2 ? v2 : any;
}

static int choose_gid(struct vb_dev *dev, const struct ibv_port_attr *pa, int want,
		      struct pcm_diag *diag)
{
	size_t cap = (size_t)pa->gid_tbl_len * dev->attr.phys_port_cnt;
	struct ibv_gid_entry *e;
	const struct ibv_gid_entry *pick = NULL;
	char valid[320];
	ssize_t n;
	int rc = 0;

	if (want >= 0 && want >= pa->gid_tbl_len) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: GID index %d is out of range on %s port %u (its table has %d "
			 "entries)",
			 want, dev->name, dev->port, pa->gid_tbl_len);
		return -EINVAL;
	}
	e = calloc(cap ? cap : 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	n = ibv_query_gid_table(dev->ctx, e, cap, 0);
	if (n < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "verbs: %s port %u: reading the GID table: %s",
			 dev->name, dev->port, strerror((int)-n));
		rc = (int)n;
		goto out;
	}
	for (ssize_t i = 0; want >= 0 && i < n && !pick; i++)
		if (e[i].port_num == dev->port && e[i].gid_index == (uint32_t)want)
			pick = &e[i];
	if (want < 0)
		pick = default_gid(e, n, dev->port);
	if (!pick) {
		list_gids(e, n, dev->port, valid, sizeof(valid));
		if (want >= 0)
			snprintf(diag->msg, sizeof(diag->msg),
				 "verbs: GID index %d on %s port %u is empty (valid: %s)", want,
				 dev->name, dev->port, valid);
		else
			snprintf(diag->msg, sizeof(diag->msg),
				 "verbs: %s port %u has no GID (is an address configured on its "
				 "netdev?)",
				 dev->name, dev->port);
		rc = -EINVAL;
		goto out;
	}
	if (dev->roce && pick->gid_type == IBV_GID_TYPE_ROCE_V1) {
		list_gids(e, n, dev->port, valid, sizeof(valid));
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: GID index %u on %s port %u is RoCE v1, which pcm does not use; "
			 "choose a RoCE v2 one (valid: %s)",
			 pick->gid_index, dev->name, dev->port, valid);
		rc = -EINVAL;
		goto out;
	}
	dev->gid_index = (int)pick->gid_index;
	dev->gid = pick->gid;
out:
	free(e);
	return rc;
}

int vb_dev_open(struct vb_dev *dev, const struct xp_dp_config *cfg, struct pcm_diag *diag)
{
	struct ibv_port_attr pa;
	char sysfs[256];
	int rc;

	*dev = (struct vb_dev){ .numa_node = -1 };
	rc = open_device(dev, cfg, sysfs, sizeof(sysfs), diag);
	if (rc < 0)
		return rc;
	rc = ibv_query_device(dev->ctx, &dev->attr);
	if (rc) {
		snprintf(diag->msg, sizeof(diag->msg), "verbs: %s: ibv_query_device: %s", dev->name,
			 strerror(rc));
		rc = -rc;
		goto err_close;
	}
	dev->port = cfg->port ? cfg->port : 1;
	rc = query_port(dev, dev->port, &pa, diag);
	if (rc < 0)
		goto err_close;
	dev->roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	dev->lid = pa.lid;
	dev->mtu = pa.active_mtu;
	dev->mtu_bytes = 128u << pa.active_mtu; /* IBV_MTU_256 = 1 */
	dev->max_msg_bytes = pa.max_msg_sz;
	dev->line_rate_bps = lane_gbps_x1000(pa.active_speed) * lanes(pa.active_width) * 1000000ull;
	dev->numa_node = read_numa_node(sysfs);
	rc = choose_gid(dev, &pa, cfg->gid_index, diag);
	if (rc < 0)
		goto err_close;
	return 0;
err_close:
	vb_dev_close(dev);
	return rc;
}

void vb_dev_close(struct vb_dev *dev)
{
	if (dev->ctx)
		ibv_close_device(dev->ctx);
	dev->ctx = NULL;
}

/* ---- diagnostics of later steps ------------------------------------------------------------ */

/* From /proc/self/status: whether CAP_IPC_LOCK is effective, and the bytes pinned (VmPin). */
static void read_status(bool *ipc_lock, unsigned long long *pinned_bytes)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	*ipc_lock = false;
	*pinned_bytes = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "CapEff: %llx", &v) == 1)
			*ipc_lock = (v >> CAP_IPC_LOCK_BIT) & 1;
		else if (sscanf(line, "VmPin: %llu kB", &v) == 1)
			*pinned_bytes = v * 1024;
	}
	fclose(f);
}

int vb_diag_pin(const struct vb_dev *dev, const char *what, size_t bytes, int err,
		struct pcm_diag *diag)
{
	unsigned long long pinned;
	struct rlimit rl = { 0 };
	bool ipc_lock;
	char where[160];

	vb_where(dev, where, sizeof(where));
	read_status(&ipc_lock, &pinned);
	getrlimit(RLIMIT_MEMLOCK, &rl);
	if ((err == ENOMEM || err == EAGAIN) && !ipc_lock && rl.rlim_cur != RLIM_INFINITY &&
	    pinned + bytes > rl.rlim_cur) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: %s: registering %s (%zu bytes) needs them pinned, but "
			 "RLIMIT_MEMLOCK is %llu bytes (%llu pinned already) and this process lacks "
			 "CAP_IPC_LOCK: raise the limit (ulimit -l, systemd LimitMEMLOCK=, "
			 "docker --ulimit memlock=-1)",
			 where, what, bytes, (unsigned long long)rl.rlim_cur, pinned);
		return -ENOMEM;
	}
	snprintf(diag->msg, sizeof(diag->msg), "verbs: %s: registering %s (%zu bytes): %s", where,
		 what, bytes, strerror(err));
	return -err;
}

int vb_check_peer_gid(const struct vb_dev *dev, const union ibv_gid *peer, const char *what,
		      struct pcm_diag *diag)
{
	char where[160], g[INET6_ADDRSTRLEN];

	if (!dev->roce || vb_gid_is_v4(&dev->gid) == vb_gid_is_v4(peer))
		return 0;
	vb_where(dev, where, sizeof(where));
	vb_gid_str(peer, g, sizeof(g));
	snprintf(diag->msg, sizeof(diag->msg),
		 "verbs: %s: %s: the peer's GID %s is %s but ours is %s: use the GID index of an "
		 "address of the same family (ibv_devinfo -v lists them)",
		 where, what, g, vb_gid_is_v4(peer) ? "IPv4" : "IPv6",
		 vb_gid_is_v4(&dev->gid) ? "IPv4" : "IPv6");
	return -EINVAL;
}

int vb_diag_unreachable(const struct vb_dev *dev, const char *what, const union ibv_gid *peer,
			uint32_t qpn, int err, struct pcm_diag *diag)
{
	char where[160], g[INET6_ADDRSTRLEN];

	vb_where(dev, where, sizeof(where));
	vb_gid_str(peer, g, sizeof(g));
	if (err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "verbs: %s: %s: peer GID %s (QPN %#x) is unreachable: its address did not "
			 "resolve (%s; no route, or no neighbour answered)",
			 where, what, g, qpn, strerror(err));
		return -EHOSTUNREACH;
	}
	snprintf(diag->msg, sizeof(diag->msg), "verbs: %s: %s towards peer GID %s (QPN %#x): %s",
		 where, what, g, qpn, strerror(err));
	return -err;
}
