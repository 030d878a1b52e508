// SPDX-License-Identifier: MIT
/*
 * nccl_device.c - NCCL's init, devices and getProperties, whatever the version asking.
 *
 * The plugin offers one device: this process's libpcmtransport endpoint. init() fails (and NCCL
 * falls back to its own networks) when the endpoint cannot be opened, e.g. pcmd is not running.
 *
 * Properties. Host memory only (NCCL_PTR_HOST): no GPU memory is registered, no device
 * offload. maxRecvs 8: an irecv may group up to 8 tagged buffers. speed is nominal (100 Gbit/s,
 * the softnic fabric's default link): libpcmtransport does not report a link rate. maxComms
 * 1,024: pcmd's default flows per client (limits.flows_per_client), one flow per comm.
 */
#include <errno.h>

#include "nccl_pcm.h"

#define SPEED_MBPS 100000
#define MAX_COMMS 1024

ncclResult_t pcmn_init(ncclDebugLogger_t log)
{
	int rc;

	pcmn_lock();
	rc = pcmn_ctx_init(log);
	pcmn_unlock();
	return rc == 0 ? ncclSuccess : rc == -EINVAL ? ncclInvalidUsage : ncclSystemError;
}

ncclResult_t pcmn_devices(int *ndev)
{
	if (!ndev)
		return ncclInternalError;
	pcmn_lock();
	*ndev = pcmn_ctx.ready ? 1 : 0;
	pcmn_unlock();
	return ncclSuccess;
}

ncclResult_t pcmn_get_properties(int dev, ncclNetProperties_v9_t *props)
{
	bool ready;

	pcmn_lock();
	ready = pcmn_ctx.ready;
	pcmn_unlock();
	if (!props || dev != 0 || !ready) {
		PCMN_WARN("getProperties(%d): %s", dev, !ready ? "before init" :
			  !props ? "NULL properties" : "no such device (there is one: 0)");
		return ncclInternalError;
	}
	/* the settings were set once by init, under the lock just taken */
	*props = (ncclNetProperties_v9_t){
		.name = pcmn_ctx.set.backend == PCMN_BACKEND_DAEMON ? "pcm-daemon" : "pcm-inproc",
		.ptrSupport = NCCL_PTR_HOST,
		.speed = SPEED_MBPS,
		.port = 1,
		.maxComms = MAX_COMMS,
		.maxRecvs = (int)PCMN_MAX_RECVS,
		.netDeviceType = NCCL_NET_DEVICE_HOST,
		.netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION,
		.vProps = { .ndevs = 1, .devs = { dev } }, /* no NIC fusion */
		.maxP2pBytes = pcmn_ctx.max_msg_bytes,
		.maxCollBytes = pcmn_ctx.max_msg_bytes,
	};
	return ncclSuccess;
}
