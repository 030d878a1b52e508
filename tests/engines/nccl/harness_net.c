// SPDX-License-Identifier: MIT
/*
 * harness_net.c - a net plugin's table of one version, called as NCCL calls it.
 *
 * NCCL finds the plugin by name (libnccl-net-<NCCL_NET_PLUGIN>.so on the library path), looks
 * up ncclNetPlugin_v<N> and goes through that table only. Where versions differ, this file
 * passes what NCCL's layer for that version passes: int sizes to v8 (and NULL in *request, as
 * NCCL clears NCCL_NET_OPTIONAL_RECV_COMPLETION for v8 plugins), size_t sizes to v9 and v10, a
 * config with an undefined traffic class to v10's connect, and NULL profiler handles.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_net.h"

/* The same call through whichever table @n holds (the calls whose arguments agree). */
#define CALL(n, fn, ...)                                                                   \
	((n)->version == 8 ? (n)->t.v8->fn(__VA_ARGS__)                                    \
			   : (n)->version == 9 ? (n)->t.v9->fn(__VA_ARGS__) : (n)->t.v10->fn(__VA_ARGS__))

void *hnet_open_library(char *err, size_t cap)
{
	const char *plugin = getenv("NCCL_NET_PLUGIN");
	char name[256];
	void *lib;

	snprintf(name, sizeof(name), "libnccl-net-%s.so", plugin && *plugin ? plugin : "pcm");
	lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		snprintf(err, cap, "dlopen %s: %s", name, dlerror());
	return lib;
}

int hnet_load(struct hnet *n, void *lib, int version, char *err, size_t cap)
{
	char sym[32];
	const void *t;

	snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", version);
	t = dlsym(lib, sym);
	if (!t || (version != 8 && version != 9 && version != 10)) {
		snprintf(err, cap, "dlsym %s: %s", sym, t ? "not a version this harness knows" :
			 dlerror());
		return -1;
	}
	n->version = version;
	if (version == 8)
		n->t.v8 = t;
	else if (version == 9)
		n->t.v9 = t;
	else
		n->t.v10 = t;
	return 0;
}

const char *hnet_name(const struct hnet *n)
{
	return n->version == 8 ? n->t.v8->name : n->version == 9 ? n->t.v9->name : n->t.v10->name;
}

ncclResult_t hnet_init(const struct hnet *n, ncclDebugLogger_t log)
{
	if (n->version == 10)
		return n->t.v10->init(log, NULL);
	return n->version == 9 ? n->t.v9->init(log) : n->t.v8->init(log);
}

ncclResult_t hnet_devices(const struct hnet *n, int *ndev)
{
	return CALL(n, devices, ndev);
}

static void props_v9(struct hnet_props *p, const ncclNetProperties_v9_t *q)
{
	*p = (struct hnet_props){
		.name = q->name, .pci_path = q->pciPath, .ptr_support = q->ptrSupport,
		.reg_is_global = q->regIsGlobal, .speed = q->speed, .port = q->port,
		.max_comms = q->maxComms, .max_recvs = q->maxRecvs,
		.dev_type = q->netDeviceType, .dev_version = q->netDeviceVersion,
		.vndevs = q->vProps.ndevs, .vdev0 = q->vProps.devs[0],
		.max_p2p = q->maxP2pBytes, .max_coll = q->maxCollBytes,
	};
}

ncclResult_t hnet_props(const struct hnet *n, int dev, struct hnet_props *p)
{
	ncclNetProperties_v8_t p8;
	ncclNetProperties_v9_t p9;
	ncclResult_t rc;

	if (n->version != 8) {
		rc = n->version == 9 ? n->t.v9->getProperties(dev, &p9)
				     : n->t.v10->getProperties(dev, &p9);
		if (rc == ncclSuccess)
			props_v9(p, &p9);
		return rc;
	}
	rc = n->t.v8->getProperties(dev, &p8);
	if (rc == ncclSuccess)
		*p = (struct hnet_props){
			.name = p8.name, .pci_path = p8.pciPath, .ptr_support = p8.ptrSupport,
			.reg_is_global = p8.regIsGlobal, .speed = p8.speed, .port = p8.port,
			.max_comms = p8.maxComms, .max_recvs = p8.maxRecvs,
			.dev_type = p8.netDeviceType, .dev_version = p8.netDeviceVersion,
		};
	return rc;
}

ncclResult_t hnet_listen(const struct hnet *n, int dev, void *handle, void **lcomm)
{
	return CALL(n, listen, dev, handle, lcomm);
}

ncclResult_t hnet_connect(const struct hnet *n, int dev, void *handle, void **scomm)
{
	ncclNetDeviceHandle_v8_t *dev_comm = NULL; /* no device offload asked */
	ncclNetCommConfig_v10_t config = { .trafficClass = -1 };

	if (n->version == 10)
		return n->t.v10->connect(dev, &config, handle, scomm, &dev_comm);
	return n->version == 9 ? n->t.v9->connect(dev, handle, scomm, &dev_comm)
			       : n->t.v8->connect(dev, handle, scomm, &dev_comm);
}

ncclResult_t hnet_accept(const struct hnet *n, void *lcomm, void **rcomm)
{
	ncclNetDeviceHandle_v8_t *dev_comm = NULL;

	return CALL(n, accept, lcomm, rcomm, &dev_comm);
}

ncclResult_t hnet_reg_mr(const struct hnet *n, void *comm, void *data, size_t size, int type,
			 void **mh)
{
	return CALL(n, regMr, comm, data, size, type, mh);
}

ncclResult_t hnet_dereg_mr(const struct hnet *n, void *comm, void *mh)
{
	return CALL(n, deregMr, comm, mh);
}

ncclResult_t hnet_isend(const struct hnet *n, void *scomm, void *data, size_t size, int tag,
			void *mh, void **req)
{
	if (n->version == 10)
		return n->t.v10->isend(scomm, data, size, tag, mh, NULL, req);
	if (n->version == 9)
		return n->t.v9->isend(scomm, data, size, tag, mh, req);
	if (size > INT_MAX)
		return ncclInternalError;
	return n->t.v8->isend(scomm, data, (int)size, tag, mh, req);
}

ncclResult_t hnet_irecv(const struct hnet *n, void *rcomm, int count, void **data, size_t *sizes,
			int *tags, void **mh, void **req)
{
	void *phandles[NCCL_NET_MAX_REQUESTS] = { 0 };
	int narrow[NCCL_NET_MAX_REQUESTS];

	if (n->version == 10)
		return n->t.v10->irecv(rcomm, count, data, sizes, tags, mh, phandles, req);
	if (n->version == 9)
		return n->t.v9->irecv(rcomm, count, data, sizes, tags, mh, req);
	for (int i = 0; i < count && i < NCCL_NET_MAX_REQUESTS; i++) {
		if (sizes[i] > INT_MAX)
			return ncclInternalError;
		narrow[i] = (int)sizes[i];
	}
	if (*req == (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION)
		*req = NULL;
	return n->t.v8->irecv(rcomm, count, data, narrow, tags, mh, req);
}

ncclResult_t hnet_iflush(const struct hnet *n, void *rcomm, int count, void **data, int *sizes,
			 void **mh, void **req)
{
	return CALL(n, iflush, rcomm, count, data, sizes, mh, req);
}

ncclResult_t hnet_test(const struct hnet *n, void *req, int *done, int *sizes)
{
	return CALL(n, test, req, done, sizes);
}

ncclResult_t hnet_close_send(const struct hnet *n, void *scomm)
{
	return CALL(n, closeSend, scomm);
}

ncclResult_t hnet_close_recv(const struct hnet *n, void *rcomm)
{
	return CALL(n, closeRecv, rcomm);
}

ncclResult_t hnet_close_listen(const struct hnet *n, void *lcomm)
{
	return CALL(n, closeListen, lcomm);
}
