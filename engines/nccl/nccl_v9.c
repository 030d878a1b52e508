// SPDX-License-Identifier: MIT
/*
 * nccl_v9.c - ncclNetPlugin_v9: NCCL's version 9 calls over the one implementation.
 *
 * Version 9 passes sizes as size_t and may hand irecv *request ==
 * NCCL_NET_OPTIONAL_RECV_COMPLETION (pcmn_irecv always writes a request or NULL). Its properties
 * add vProps (this device alone: no NIC fusion, so no makeVDevice) and the largest transfer
 * sizes; version 10 reads the same layout (pcmn_properties_v9()).
 */
#include "nccl_pcm.h"

ncclResult_t pcmn_properties_v9(int dev, ncclNetProperties_v9_t *props)
{
	struct pcmn_props p;
	ncclResult_t rc = pcmn_get_properties(dev, &p);

	if (rc != ncclSuccess || !props)
		return rc != ncclSuccess ? rc : ncclInternalError;
	*props = (ncclNetProperties_v9_t){
		.name = (char *)p.name,
		.ptrSupport = p.ptr_support,
		.speed = p.speed_mbps,
		.port = 1,
		.maxComms = p.max_comms,
		.maxRecvs = p.max_recvs,
		.netDeviceType = NCCL_NET_DEVICE_HOST,
		.netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION,
		.vProps = { .ndevs = 1, .devs = { dev } },
		.maxP2pBytes = p.max_msg_bytes,
		.maxCollBytes = p.max_msg_bytes,
	};
	return ncclSuccess;
}

const ncclNet_v9_t ncclNetPlugin_v9 = {
	.name = "pcm",
	.init = pcmn_init,
	.devices = pcmn_devices,
	.getProperties = pcmn_properties_v9,
	.listen = pcmn_listen,
	.connect = pcmn_connect,
	.accept = pcmn_accept,
	.regMr = pcmn_reg_mr,
	.deregMr = pcmn_dereg_mr,
	.isend = pcmn_isend,
	.irecv = pcmn_irecv,
	.iflush = pcmn_iflush,
	.test = pcmn_test,
	.closeSend = pcmn_close_send,
	.closeRecv = pcmn_close_recv,
	.closeListen = pcmn_close_listen,
};
