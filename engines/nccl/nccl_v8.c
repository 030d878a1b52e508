// SPDX-License-Identifier: MIT
/*
 * nccl_v8.c - ncclNetPlugin_v8: NCCL's version 8 calls over the one implementation.
 *
 * Version 8 passes sizes as int (a negative one is NCCL's misuse) and has no per-connection
 * config; its properties lack forceFlush, vProps and the largest transfer sizes.
 */
#include "nccl_pcm.h"

static ncclResult_t v8_get_properties(int dev, ncclNetProperties_v8_t *props)
{
	ncclNetProperties_v9_t p;
	ncclResult_t rc = pcmn_get_properties(dev, &p);

	if (rc != ncclSuccess || !props)
		return rc != ncclSuccess ? rc : ncclInternalError;
	*props = (ncclNetProperties_v8_t){
		.name = p.name, .pciPath = p.pciPath, .guid = p.guid,
		.ptrSupport = p.ptrSupport, .regIsGlobal = p.regIsGlobal,
		.speed = p.speed, .port = p.port, .latency = p.latency,
		.maxComms = p.maxComms, .maxRecvs = p.maxRecvs,
		.netDeviceType = p.netDeviceType, .netDeviceVersion = p.netDeviceVersion,
	};
	return ncclSuccess;
}

static ncclResult_t v8_isend(void *send_comm, void *data, int size, int tag, void *mhandle,
			     void **request)
{
	if (size < 0)
		return ncclInternalError;
	return pcmn_isend(send_comm, data, (size_t)size, tag, mhandle, request);
}

static ncclResult_t v8_irecv(void *recv_comm, int n, void **data, int *sizes, int *tags,
			     void **mhandles, void **request)
{
	size_t wide[PCMN_MAX_RECVS];

	for (int i = 0; sizes && i < n && i < (int)PCMN_MAX_RECVS; i++) {
		if (sizes[i] < 0)
			return ncclInternalError;
		wide[i] = (size_t)sizes[i];
	}
	return pcmn_irecv(recv_comm, n, data, sizes ? wide : NULL, tags, mhandles, request);
}

const ncclNet_v8_t ncclNetPlugin_v8 = {
	.name = "pcm",
	.init = pcmn_init,
	.devices = pcmn_devices,
	.getProperties = v8_get_properties,
	.listen = pcmn_listen,
	.connect = pcmn_connect,
	.accept = pcmn_accept,
	.regMr = pcmn_reg_mr,
	.deregMr = pcmn_dereg_mr,
	.isend = v8_isend,
	.irecv = v8_irecv,
	.iflush = pcmn_iflush,
	.test = pcmn_test,
	.closeSend = pcmn_close_send,
	.closeRecv = pcmn_close_recv,
	.closeListen = pcmn_close_listen,
};
