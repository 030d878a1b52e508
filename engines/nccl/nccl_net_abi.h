/* SPDX-License-Identifier: MIT */
/*
 * nccl_net_abi.h - NCCL's network plugin interface, versions 8, 9 and 10, as declared here.
 *
 * NCCL loads libnccl-net-<NCCL_NET_PLUGIN>.so with dlopen(RTLD_NOW | RTLD_LOCAL) and looks up
 * the symbols ncclNetPlugin_v<N>, each a table of calls of one version. These declarations are
 * written from the interface NCCL documents in its repository (the net plugin README and the
 * ext-net/ headers of NCCL 2.20 to 2.29): the same field order and types, so that a table built
 * here is the one NCCL reads. NCCL's own headers are not needed to build the plugin.
 *
 * What changed between the versions we export:
 *   v8   isend/irecv take int sizes; properties without forceFlush, vProps or max sizes.
 *   v9   isend/irecv take size_t sizes; properties add forceFlush, vProps (NIC fusion) and
 *        maxP2pBytes/maxCollBytes; a makeVDevice call. NCCL may pass *request ==
 *        NCCL_NET_OPTIONAL_RECV_COMPLETION into irecv (v8 plugins never see it).
 *   v10  init takes a profiler callback; connect takes a per-connection config (traffic
 *        class); isend/irecv take profiler handles. Properties are laid out as in v9.
 * The test call's sizes stay int in every version.
 *
 * The type names are NCCL's (typedefs, unlike the rest of pcm), so that each table reads as the
 * interface it implements.
 */
#ifndef PCM_NCCL_NET_ABI_H
#define PCM_NCCL_NET_ABI_H

#include <stddef.h>
#include <stdint.h>

#define NCCL_NET_HANDLE_MAXSIZE 128 /* bytes of the handle listen() fills and connect() reads */
#define NCCL_NET_MAX_REQUESTS 32    /* requests a comm must hold at once (v7 and later) */
#define NCCL_NET_OPTIONAL_RECV_COMPLETION 0x1 /* *request on entry to irecv (v9+): LL/LL128 */
#define NCCL_NET_MAX_DEVS_PER_NIC 4 /* vProps.devs[] (v9, v10) */

#define NCCL_PTR_HOST 0x1
#define NCCL_PTR_CUDA 0x2
#define NCCL_PTR_DMABUF 0x4

#define NCCL_NET_DEVICE_INVALID_VERSION 0x0

typedef enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,
	ncclInternalError = 3,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclRemoteError = 6,
} ncclResult_t;

typedef enum {
	NCCL_LOG_NONE = 0,
	NCCL_LOG_VERSION = 1,
	NCCL_LOG_WARN = 2,
	NCCL_LOG_INFO = 3,
	NCCL_LOG_ABORT = 4,
	NCCL_LOG_TRACE = 5,
} ncclDebugLogLevel;

/* Subsystem flags of a log line: this plugin logs as NCCL_INIT or NCCL_NET. */
#define NCCL_INIT 1ul
#define NCCL_NET 16ul

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file,
				  int line, const char *fmt, ...);
typedef ncclResult_t (*ncclProfilerCallback_t)(void **eHandle, int type, void *phandle,
					       int64_t pluginId, void *extData);

typedef enum {
	NCCL_NET_DEVICE_HOST = 0,
	NCCL_NET_DEVICE_UNPACK = 1,
} ncclNetDeviceType;

/* Device offload (a GPU reading the network directly); this plugin offers none. */
struct ncclNetDeviceHandle {
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	void *handle;
	size_t size;
	int needsProxyProgress;
};
typedef struct ncclNetDeviceHandle ncclNetDeviceHandle_v8_t;
typedef struct ncclNetDeviceHandle ncclNetDeviceHandle_v9_t;
typedef struct ncclNetDeviceHandle ncclNetDeviceHandle_v10_t;

typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int regIsGlobal;
	int speed;          /* Mbit/s */
	int port;
	float latency;      /* us */
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
} ncclNetProperties_v8_t;

typedef struct {
	int ndevs;
	int devs[NCCL_NET_MAX_DEVS_PER_NIC];
} ncclNetVDeviceProps_v9_t;
typedef ncclNetVDeviceProps_v9_t ncclNetVDeviceProps_v10_t;

typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int regIsGlobal;
	int forceFlush;
	int speed;          /* Mbit/s */
	int port;
	float latency;      /* us */
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	ncclNetVDeviceProps_v9_t vProps;
	size_t maxP2pBytes;
	size_t maxCollBytes;
} ncclNetProperties_v9_t;
typedef ncclNetProperties_v9_t ncclNetProperties_v10_t; /* same layout in v10 */

typedef struct {
	int trafficClass; /* -1: undefined */
} ncclNetCommConfig_v10_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v8_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v8_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v8_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
				    int fd, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, int size, int tag, void *mhandle,
			      void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, int *sizes, int *tags,
			      void **mhandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
			       void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
} ncclNet_v8_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v9_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v9_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v9_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
				    int fd, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
			      void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
			       void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
	ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v9_t *props);
} ncclNet_v9_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v10_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, ncclNetCommConfig_v10_t *config, void *handle,
				void **sendComm, ncclNetDeviceHandle_v10_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v10_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
				    int fd, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
			      void *phandle, void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **phandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
			       void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
	ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v10_t *props);
} ncclNet_v10_t;

#endif /* PCM_NCCL_NET_ABI_H */
