// SPDX-License-Identifier: MIT
/*
 * nccl_v9.c - ncclNetPlugin_v9: NCCL's version 9 calls over the one implementation.
 *
 * Version 9 passes sizes as size_t and may hand irecv *request ==
 * NCCL_NET_OPTIONAL_RECV_COMPLETION (pcmn_irecv always writes a request or NULL). Its properties
 * add vProps (this device alone: no NIC fusion, so no makeVDevice) and the largest transfer
 * sizes, in the layout pcmn_get_properties() fills (version 10's too). Every call is the
 * implementation's own.
 */
#include "nccl_pcm.h"

const ncclNet_v9_t ncclNetPlugin_v9 = {
	.name = "pcm",
	.init = pcmn_init,
	.devices = pcmn_devices,
	.getProperties = pcmn_get_properties,
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
