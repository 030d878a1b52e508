// SPDX-License-Identifier: MIT
/*
 * verbs_errors.c - rxe-verbs-errors CASE DEV: provoke one of the verbs
 * datapath's clear errors on a real device and check its -errno and its
 * message (checks/verbs-errors.sh runs every case inside the rxe VM; the
 * host, which has no device, covers "no device" in tests/unit).
 *
 * Cases:
 *   no-device     a device name that does not exist: -ENODEV, the message
 *                 names it and lists the devices found;
 *   permission    the caller may not open DEV's uverbs node (the script
 *                 makes it so): -EPERM naming /dev/infiniband/...;
 *   memlock       RLIMIT_MEMLOCK lowered with setrlimit() in a process
 *                 without CAP_IPC_LOCK: a region past it fails -ENOMEM and
 *                 says RLIMIT_MEMLOCK;
 *   gid           a GID index past the table (-EINVAL, "out of range") and
 *                 an empty one inside it (-EINVAL, "is empty", listing the
 *                 valid ones);
 *   unreachable   a control peer and a path towards an address nobody has
 *                 (-EHOSTUNREACH or the RTR/address-handle failure, naming
 *                 the peer's GID); an RC write to a QP that does not exist
 *                 fails -ETIMEDOUT (retries exhausted); a bootstrap dial to
 *                 a port nobody listens on is answered -ECONNREFUSED.
 * Exit: 0 all as expected, 1 not (what came instead), 2 usage, 3 setup.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "datapath.h"

/* Offsets of the GID in the verbs blobs (verbs.c, verbs_ctrl.c: "Blob"). */
#define PATH_BLOB_GID_AT 11
#define CTRL_BLOB_GID_AT 7
#define NOBODY_IPV4_LAST 99 /* x.y.z.99: in the netdev's subnet, no host has it */

static int failures;

static void expect(const char *what, int got, int want, const struct pcm_diag *diag,
		   const char *needle)
{
	bool ok = got == want && strstr(diag->msg, needle);

	printf("%s %s: %d (%s) '%s'\n", ok ? "ok" : "FAIL", what, got,
	       got < 0 ? strerror(-got) : "no error", diag->msg);
	if (!ok) {
		printf("  wanted %d (%s) and a message containing '%s'\n", want, strerror(-want),
		       needle);
		failures++;
	}
}

static int open_dev(const char *dev, int gid_index, struct xp_dp **dp, struct pcm_diag *diag)
{
	struct xp_dp_config cfg = { .device = dev, .gid_index = gid_index };

	memset(diag, 0, sizeof(*diag));
	return xp_dp_open(&xp_dp_verbs_ops, &cfg, dp, diag);
}

static struct xp_dp *must_open(const char *dev)
{
	struct pcm_diag diag;
	struct xp_dp *dp = NULL;
	int rc = open_dev(dev, -1, &dp, &diag);

	if (rc < 0) {
		fprintf(stderr, "opening %s: %s (%s)\n", dev, strerror(-rc), diag.msg);
		exit(3);
	}
	return dp;
}

static void case_no_device(const char *dev)
{
	struct pcm_diag diag;
	struct xp_dp *dp = NULL;

	expect("a device that does not exist", open_dev("pcm_nosuch9", -1, &dp, &diag), -ENODEV,
	       &diag, "no RDMA device named 'pcm_nosuch9' (found: ");
	if (!strstr(diag.msg, dev)) {
		printf("FAIL: the message does not list %s\n", dev);
		failures++;
	}
}

static void case_permission(const char *dev)
{
	struct pcm_diag diag;
	struct xp_dp *dp = NULL;

	expect("a device this user may not open", open_dev(dev, -1, &dp, &diag), -EPERM, &diag,
	       "permission denied opening /dev/infiniband/uverbs");
}

static void case_memlock(const char *dev)
{
	enum { LIMIT = 1 << 20, REGION = 8 << 20 };
	struct rlimit rl = { .rlim_cur = LIMIT, .rlim_max = LIMIT };
	struct xp_dp *dp = must_open(dev);
	struct pcm_diag diag = { 0 };
	struct xp_dp_mr mr;
	void *buf = aligned_alloc(4096, REGION);

	if (!buf || setrlimit(RLIMIT_MEMLOCK, &rl) < 0) {
		perror("setrlimit(RLIMIT_MEMLOCK)");
		exit(3);
	}
	memset(buf, 1, REGION);
	expect("a region past RLIMIT_MEMLOCK", dp->ops->mr_reg(dp, buf, REGION, &mr, &diag),
	       -ENOMEM, &diag, "RLIMIT_MEMLOCK is 1048576 bytes");
	/* and what fits still registers */
	memset(&diag, 0, sizeof(diag));
	if (dp->ops->mr_reg(dp, buf, 64 << 10, &mr, &diag) == 0)
		dp->ops->mr_dereg(dp, &mr);
	else {
		printf("FAIL: a 64 KiB region under the limit: %s\n", diag.msg);
		failures++;
	}
	xp_dp_close(dp);
	free(buf);
}

static void case_gid(const char *dev)
{
	struct pcm_diag diag;
	struct xp_dp *dp = NULL;

	expect("a GID index past the table", open_dev(dev, 4000, &dp, &diag), -EINVAL, &diag,
	       "out of range");
	expect("an empty GID index", open_dev(dev, 7, &dp, &diag), -EINVAL, &diag,
	       "GID index 7 on ");
	if (!strstr(diag.msg, "is empty (valid: ") || !strstr(diag.msg, "RoCE v2")) {
		printf("FAIL: the message does not list the valid GIDs\n");
		failures++;
	}
}

/* Make @blob's IPv4-mapped GID at @at point to x.y.z.NOBODY_IPV4_LAST. */
static void retarget(struct xp_dp_blob *blob, int at)
{
	blob->bytes[at + 15] = NOBODY_IPV4_LAST;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* An RC write to a QP number nobody has, on our own reachable GID. */
static void rc_write_to_nowhere(struct xp_dp *dp)
{
	struct xp_dp_path_attr attr = { .rc = true };
	struct xp_dp_blob self, blob;
	struct pcm_diag diag = { 0 };
	struct xp_dp_event ev[8];
	struct xp_dp_mr mr;
	static uint8_t buf[4096];
	uint32_t path, peer;
	uint16_t ent;
	int rc = -1;

	dp->ops->local_addr(dp, &self);
	if (dp->ops->peer_open(dp, &self, &peer, &diag) < 0 ||
	    dp->ops->path_create(dp, &attr, &path, &ent, &blob, &diag) < 0 ||
	    dp->ops->mr_reg(dp, buf, sizeof(buf), &mr, &diag) < 0) {
		printf("FAIL: setting up the RC write: %s\n", diag.msg);
		failures++;
		return;
	}
	/* QPN bytes 2..4 of the path blob: one no QP has (ours plus a large offset) */
	blob.bytes[2] ^= 0x5a;
	if (dp->ops->path_connect(dp, path, peer, &blob, &diag) < 0) {
		printf("FAIL: connecting an RC path to a missing QP: %s\n", diag.msg);
		failures++;
		return;
	}
	{
		struct xp_write w = { .path = path, .laddr = (uintptr_t)buf, .lkey = mr.lkey,
				      .raddr = (uintptr_t)buf, .rkey = mr.rkey, .len = 512,
				      .imm = 1, .token = 77 };

		if (dp->ops->post_writes(dp, &w, 1) != 1) {
			printf("FAIL: the RC write was not posted\n");
			failures++;
			return;
		}
	}
	for (uint64_t end = mono_ns() + 30ull * 1000000000; mono_ns() < end && rc == -1;) {
		int n = dp->ops->poll(dp, ev, 8);

		for (int i = 0; i < n; i++) {
			if (ev[i].kind == XP_DP_EV_WRITE_DONE && ev[i].token == 77)
				rc = ev[i].status;
		}
	}
	memset(&diag, 0, sizeof(diag));
	snprintf(diag.msg, sizeof(diag.msg), "write token 77 completed");
	expect("an RC write to a QP that does not exist", rc, -ETIMEDOUT, &diag, "token 77");
	dp->ops->path_destroy(dp, path);
	dp->ops->peer_close(dp, peer);
	dp->ops->mr_dereg(dp, &mr);
}

static void dial_nobody(const char *host)
{
	struct pcm_diag diag = { 0 };
	struct xp_boot_event ev;
	struct xp_boot *b = NULL;
	char addr[96];
	int rc = xp_boot_tcp_ops.create(&b, &diag);

	snprintf(addr, sizeof(addr), "%s:9", host); /* discard: nothing listens in the VM */
	if (rc == 0)
		rc = b->ops->dial(b, addr, "x", 1, 5, &diag);
	for (uint64_t end = mono_ns() + 20ull * 1000000000; rc == 0 && mono_ns() < end;) {
		if (b->ops->poll(b, &ev, 1) == 1) {
			rc = ev.status;
			break;
		}
	}
	snprintf(diag.msg, sizeof(diag.msg), "bootstrap dial to %s answered", addr);
	expect("a bootstrap dial to a port nobody listens on", rc, -ECONNREFUSED, &diag, addr);
	if (b)
		b->ops->destroy(b);
}

static void case_unreachable(const char *dev, const char *host)
{
	struct xp_dp *dp = must_open(dev);
	struct xp_dp_blob ctrl;
	struct pcm_diag diag = { 0 };
	uint32_t peer;
	int rc;

	dp->ops->local_addr(dp, &ctrl);
	retarget(&ctrl, CTRL_BLOB_GID_AT);
	rc = dp->ops->peer_open(dp, &ctrl, &peer, &diag);
	expect("a control peer at an address nobody has", rc, -EHOSTUNREACH, &diag,
	       "is unreachable");
	if (!strstr(diag.msg, "peer GID ::ffff:")) {
		printf("FAIL: the message does not name the peer's GID\n");
		failures++;
	}
	if (rc == 0)
		dp->ops->peer_close(dp, peer);
	rc_write_to_nowhere(dp);
	xp_dp_close(dp);
	dial_nobody(host);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rxe-verbs-errors no-device|permission|memlock|gid|"
				"unreachable DEV [HOST]\n");
		return 2;
	}
	if (strcmp(argv[1], "no-device") == 0)
		case_no_device(argv[2]);
	else if (strcmp(argv[1], "permission") == 0)
		case_permission(argv[2]);
	else if (strcmp(argv[1], "memlock") == 0)
		case_memlock(argv[2]);
	else if (strcmp(argv[1], "gid") == 0)
		case_gid(argv[2]);
	else if (strcmp(argv[1], "unreachable") == 0 && argc == 4)
		case_unreachable(argv[2], argv[3]);
	else
		return 2;
	return failures ? 1 : 0;
}
