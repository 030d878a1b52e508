/* SPDX-License-Identifier: MIT */
/*
 * harness_net.h - a net plugin as NCCL sees it: the library opened as NCCL opens it, one of its
 * versioned tables looked up, and that table's calls made in one form for every version
 * (sizes as size_t, the v10 extras filled as NCCL fills them).
 */
#ifndef PCM_HARNESS_NET_H
#define PCM_HARNESS_NET_H

#include <stddef.h>

#include "nccl_net_abi.h"

struct hnet {
	int version; /* 8, 9 or 10 */
	union {
		const ncclNet_v8_t *v8;
		const ncclNet_v9_t *v9;
		const ncclNet_v10_t *v10;
	} t;
};

/* Properties, whatever the version (v9+ fields zero for v8). */
struct hnet_props {
	const char *name;
	const char *pci_path;
	int ptr_support, reg_is_global, speed, port, max_comms, max_recvs;
	int dev_type, dev_version;
	int vndevs, vdev0;
	size_t max_p2p, max_coll;
};

/*
 * Open libnccl-net-$NCCL_NET_PLUGIN.so as NCCL does (dlopen RTLD_NOW | RTLD_LOCAL, found on the
 * library path). Return: the handle, or NULL with the reason in @err.
 */
void *hnet_open_library(char *err, size_t cap);

/* Look up ncclNetPlugin_v<version> in @lib. Return: 0, or -1 with the reason in @err. */
int hnet_load(struct hnet *n, void *lib, int version, char *err, size_t cap);

const char *hnet_name(const struct hnet *n);
ncclResult_t hnet_init(const struct hnet *n, ncclDebugLogger_t log);
ncclResult_t hnet_devices(const struct hnet *n, int *ndev);
ncclResult_t hnet_props(const struct hnet *n, int dev, struct hnet_props *p);
ncclResult_t hnet_listen(const struct hnet *n, int dev, void *handle, void **lcomm);
ncclResult_t hnet_connect(const struct hnet *n, int dev, void *handle, void **scomm);
ncclResult_t hnet_accept(const struct hnet *n, void *lcomm, void **rcomm);
ncclResult_t hnet_reg_mr(const struct hnet *n, void *comm, void *data, size_t size, int type,
			 void **mh);
ncclResult_t hnet_dereg_mr(const struct hnet *n, void *comm, void *mh);
ncclResult_t hnet_isend(const struct hnet *n, void *scomm, void *data, size_t size, int tag,
			void *mh, void **req);
/* *req on entry as NCCL sets it (NULL, or NCCL_NET_OPTIONAL_RECV_COMPLETION); v8 plugins get
 * NULL, as NCCL's v8 layer passes them. */
ncclResult_t hnet_irecv(const struct hnet *n, void *rcomm, int count, void **data, size_t *sizes,
			int *tags, void **mh, void **req);
ncclResult_t hnet_iflush(const struct hnet *n, void *rcomm, int count, void **data, int *sizes,
			 void **mh, void **req);
ncclResult_t hnet_test(const struct hnet *n, void *req, int *done, int *sizes);
ncclResult_t hnet_close_send(const struct hnet *n, void *scomm);
ncclResult_t hnet_close_recv(const struct hnet *n, void *rcomm);
ncclResult_t hnet_close_listen(const struct hnet *n, void *lcomm);

#endif /* PCM_HARNESS_NET_H */
