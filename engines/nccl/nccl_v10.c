// SPDX-License-Identifier: MIT
/*
 * nccl_v10.c - ncclNetPlugin_v10: NCCL's version 10 calls over the one implementation.
 *
 * Version 10 adds a profiler callback to init, a per-connection config (a traffic class) to
 * connect and profiler handles to isend and irecv; this plugin records no profiler events and
 * has no traffic classes (the connection's CC package comes from $PCM_NCCL_POLICY). Properties
 * are laid out as in version 9.
 */
#include "nccl_pcm.h"

static ncclResult_t v10_init(ncclDebugLogger_t log, ncclProfilerCallback_t profiler)
{
	(void)profiler;
	return pcmn_init(log);
}

static ncclResult_t v10_connect(int dev, ncclNetCommConfig_v10_t *config, void *handle,
				void **send_comm, ncclNetDeviceHandle_v10_t **dev_comm)
{
	(void)config;
	return pcmn_connect(dev, handle, send_comm, dev_comm);
}

static ncclResult_t v10_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
			      void *phandle, void **request)
{
	(void)phandle;
	return pcmn_isend(send_comm, data, size, tag, mhandle, request);
}

static ncclResult_t v10_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **phandles, void **request)
{
	(void)phandles;
	return pcmn_irecv(recv_comm, n, data, sizes, tags, mhandles, request);
}

const ncclNet_v10_t ncclNetPlugin_v10 = {
	.name = "pcm",
	.init = v10_init,
	.devices = pcmn_devices,
	.getProperties = pcmn_get_properties,
	.listen = pcmn_listen,
	.connect = v10_connect,
	.accept = pcmn_accept,
	.regMr = pcmn_reg_mr,
	.deregMr = pcmn_dereg_mr,
	.isend = v10_isend,
	.irecv = v10_irecv,
	.iflush = pcmn_iflush,
	.test = pcmn_test,
	.closeSend = pcmn_close_send,
	.closeRecv = pcmn_close_recv,
	.closeListen = pcmn_close_listen,
};
