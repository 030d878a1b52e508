/* SPDX-License-Identifier: MIT */
/*
 * nccl_pcm.h - the one implementation behind libnccl-net-pcm.so's three tables (nccl_v8.c,
 * nccl_v9.c, nccl_v10.c): its objects, its wire formats and the calls between its files.
 *
 * The files, bottom up; each calls only those listed before it:
 *   nccl_ctx.c     the process's context: settings from the environment, its one
 *                  libpcmtransport endpoint, the lock, logging, each connection's ordered
 *                  queue of posts (a lane), and progress (poll, then each completion's handler)
 *   nccl_mem.c     memory: control blocks, staging buffers (daemon mode), regMr and deregMr
 *   nccl_comm.c    a communicator's life: the operations it holds, failure, close, freeing
 *   nccl_data.c    the message protocol: a CTS per irecv, isend matched by tag, test, iflush
 *   nccl_conn.c    listen, connect, accept: the handle, and the hello that routes a dial
 *   nccl_device.c  init, devices, getProperties
 *
 * Every call NCCL makes takes the context's lock (pcmn_lock()) for its whole length; progress
 * runs under it, so completions, posts and the objects below change under one lock.
 *
 * One NCCL comm is one libpcmtransport connection. Its receiver announces every irecv to the
 * sender with a CTS message {seq, n, tags, capacities} on the same connection (the reverse
 * direction), after posting the n receives in buffer order; the sender matches each isend's tag
 * to a buffer of the oldest CTS it has not filled, and sends the group's messages in buffer
 * order, so that pcm's FIFO matching puts each message into the buffer its tag names.
 */
#ifndef PCM_NCCL_PCM_H
#define PCM_NCCL_PCM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pcm/transport.h>

#include "nccl_net_abi.h"

#define PCMN_MAX_RECVS 8u /* buffers of one grouped irecv (maxRecvs) */
#define PCMN_RECV_REQUESTS NCCL_NET_MAX_REQUESTS /* a recvComm's irecvs and iflushes */
#define PCMN_SEND_REQUESTS (NCCL_NET_MAX_REQUESTS * PCMN_MAX_RECVS) /* a sendComm's isends */
#define PCMN_GROUPS NCCL_NET_MAX_REQUESTS /* CTSs a sender holds: one per outstanding irecv */
#define PCMN_ADDR_BYTES 64u
#define PCMN_CTL_BYTES 8192u /* a comm's control block: its CTS slots and hello */
#define PCMN_MAX_MSG_BYTES (256u << 20) /* 4,096 chunks of 64 KiB, pcmd's default limit too */

/* ---- wire formats (host byte order: both ends run on one host, or in one process) ------ */

#define PCMN_WIRE_VERSION 1u
#define PCMN_HANDLE_MAGIC 0x6e6d6370u /* "pcmn" */
#define PCMN_HELLO_MAGIC 0x6f6c6568u  /* "helo" */
#define PCMN_CTS_MAGIC 0x20737463u    /* "cts " */

struct pcmn_comm;

/* What listen() writes into NCCL's 128-byte handle, and connect() reads. */
struct pcmn_handle {
	uint32_t magic;
	uint16_t version;
	uint8_t backend;          /* the listener's enum pcmn_backend */
	uint8_t pad;
	uint64_t listen_id;       /* which listenComm of that process */
	char addr[PCMN_ADDR_BYTES]; /* where its endpoint listens */
	struct pcmn_comm *dialing; /* the dialer's own copy: its comm while connect() retries */
};
_Static_assert(sizeof(struct pcmn_handle) <= NCCL_NET_HANDLE_MAXSIZE, "handle too large");

/* The dialer's first message on a new connection: which listenComm it dialed. */
struct pcmn_hello {
	uint32_t magic;
	uint16_t version;
	uint16_t pad;
	uint64_t listen_id;
};

/* Receiver to sender, one per irecv: its n buffers in the order their receives were posted. */
struct pcmn_cts {
	uint32_t magic;
	uint32_t n;
	uint64_t seq; /* the irecv's number on this comm, from 0 */
	struct {
		int32_t tag;
		uint32_t pad;
		uint64_t cap; /* bytes */
	} buf[PCMN_MAX_RECVS];
};

/* A control block: CTS slots (one per request or held group), then the hello. */
#define PCMN_CTL_HELLO_OFF (PCMN_GROUPS * sizeof(struct pcmn_cts))
_Static_assert(PCMN_CTL_HELLO_OFF + sizeof(struct pcmn_hello) <= PCMN_CTL_BYTES, "ctl block");

/* ---- the context (nccl_ctx.c) ------------------------------------------------------------ */

enum pcmn_backend {
	PCMN_BACKEND_DAEMON = 1, /* through pcmd: buffers staged in its shared region */
	PCMN_BACKEND_INPROC = 2, /* the library's own engines: NCCL's buffers registered as they are */
};

struct pcmn_settings {
	enum pcmn_backend backend;   /* $PCM_NCCL_BACKEND: daemon (default) or inproc */
	char datapath[32];           /* $PCM_NCCL_DATAPATH (inproc): default null */
	size_t region_bytes;         /* $PCM_NCCL_REGION_MB (daemon): default 128 */
	char policy[64];             /* $PCM_NCCL_POLICY: the connections' CC package; "" default */
};

struct pcmn_op;
struct pcm_tp_completion;

/* An operation's handler: called once, with its completion (or one made up when dropped). */
typedef void (*pcmn_done_fn)(struct pcmn_op *op, const struct pcm_tp_completion *c);

enum pcmn_op_kind {
	PCMN_OP_RECV = 0,
	PCMN_OP_SEND = 1,
	PCMN_OP_CLOSE = 2, /* pcm_tp_conn_close(): its handler runs as soon as pcm takes it */
};

/* One libpcmtransport post; its address is the post's cookie. */
struct pcmn_op {
	pcmn_done_fn done;
	/* run once just before the post (daemon mode: take a staging buffer); -EAGAIN: not yet,
	 * the operation waits in its lane */
	int (*prepare)(struct pcmn_op *op);
	void *owner;            /* the request, comm or slot it belongs to */
	uint32_t index;         /* which of the owner's buffers or slots */
	uint8_t kind;           /* enum pcmn_op_kind */
	void *buf;
	size_t len;
	struct pcm_tp_mr *mr;   /* NULL: the endpoint finds the region */
	struct pcmn_op *next;   /* in its lane's queue */
};

/* One connection's posts in the order they were made: what pcm refuses for now (-EAGAIN)
 * waits here, and everything behind it too, so that FIFO matching holds; a close comes last. */
struct pcmn_lane {
	struct pcm_tp_conn *conn;
	struct pcmn_op *head, *tail;
	struct pcmn_lane *next_pending; /* in the context's list of lanes with a queue */
	bool pending;
};

/* Something freed at the end of progress, when no walk over lanes is under way. */
struct pcmn_reap {
	struct pcmn_reap *next;
	void (*fn)(struct pcmn_reap *r);
};

struct pcmn_ctx {
	pthread_mutex_t lock;
	bool ready;
	ncclDebugLogger_t log;
	struct pcmn_settings set;
	struct pcm_tp_endpoint *ep;
	char addr[PCMN_ADDR_BYTES]; /* where the endpoint listens, once a listen() asked */
	size_t max_msg_bytes;
	struct pcmn_lane *pending;
	struct pcmn_reap *graveyard;
};

extern struct pcmn_ctx pcmn_ctx;

/**
 * pcmn_ctx_init() - read the settings and open the endpoint, once per process.
 * @log: NCCL's logger (kept; a later call replaces it).
 *
 * Return: 0, -EINVAL (a bad setting), or the endpoint's open error; it is logged.
 */
int pcmn_ctx_init(ncclDebugLogger_t log);

void pcmn_lock(void);
void pcmn_unlock(void);

/* Log through NCCL's logger (NET subsystem) as @func:@line; nothing without a logger. */
void pcmn_log(ncclDebugLogLevel level, const char *func, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define PCMN_WARN(...) pcmn_log(NCCL_LOG_WARN, __func__, __LINE__, __VA_ARGS__)
#define PCMN_INFO(...) pcmn_log(NCCL_LOG_INFO, __func__, __LINE__, __VA_ARGS__)

/* NCCL's code for a libpcmtransport error. */
ncclResult_t pcmn_result(int err);

/* Post what waits in the lanes, take every completion ready and run its handler, then free
 * what was deferred. */
void pcmn_progress(void);

/* Free @r (its fn) at the end of the next pcmn_progress(). */
void pcmn_defer_free(struct pcmn_reap *r);

/**
 * pcmn_lane_post() - post @op on @l's connection now, or queue it behind what waits.
 *
 * Return: 0 (posted or queued; its handler runs once either way), or the post's error
 * (the handler does not run).
 */
int pcmn_lane_post(struct pcmn_lane *l, struct pcmn_op *op);

/* Run @op's handler with @status, as if pcm had completed it so. */
void pcmn_op_fail(struct pcmn_op *op, int status);

/* Take @l's queued operations out (their handlers have not run); return the first. */
struct pcmn_op *pcmn_lane_take(struct pcmn_lane *l);

/* ---- memory (nccl_mem.c) ------------------------------------------------------------------- */

#define PCMN_MR_MAGIC 0x72636d70u

/* What regMr hands NCCL. */
struct pcmn_mr {
	uint32_t magic;
	uint8_t *addr;
	size_t len;
	struct pcm_tp_mr *mr; /* in process: the registration; daemon mode: NULL (staged) */
};

/* Registered memory that 0-byte posts name (nothing is written into it), or NULL. */
void *pcmn_zero_buf(void);

/* A zeroed control block of PCMN_CTL_BYTES in registered memory, or NULL. */
void *pcmn_ctl_get(void);
void pcmn_ctl_put(void *blk);

/* Daemon mode: @len bytes of the shared region to stage a message in (NULL: full for now). */
void *pcmn_stage_get(size_t len);
void pcmn_stage_put(void *p);

/**
 * pcmn_mr_find() - the registration to post [@data, @data + @len) with.
 * @mh: regMr's handle, or NULL.
 * @out: the libpcmtransport region (NULL: the endpoint finds it, or staged).
 *
 * Return: 0, or -EINVAL (@mh is no handle, or does not hold the range); logged.
 */
int pcmn_mr_find(const void *mh, const void *data, size_t len, struct pcm_tp_mr **out);

ncclResult_t pcmn_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle);
ncclResult_t pcmn_dereg_mr(void *comm, void *mhandle);

/* ---- communicators (nccl_comm.c) ----------------------------------------------------------- */

#define PCMN_COMM_MAGIC 0x6d6d6f63u
#define PCMN_REQ_MAGIC 0x71657270u

enum pcmn_kind {
	PCMN_LISTEN = 1,
	PCMN_SEND = 2,
	PCMN_RECV = 3,
};

enum pcmn_state {
	PCMN_DIALING = 1,   /* send: connect posted */
	PCMN_HELLO_WAIT,    /* recv: accepted, its hello not yet here */
	PCMN_UNCLAIMED,     /* recv: routed to its listenComm, not yet accept()ed */
	PCMN_READY,
	PCMN_FAILED,        /* error says why */
};

enum pcmn_req_kind {
	PCMN_REQ_SEND = 1,
	PCMN_REQ_RECV = 2,
	PCMN_REQ_FLUSH = 3,
};

/* What test() is given: the head of a send or a (grouped) receive request. */
struct pcmn_req {
	uint32_t magic;       /* PCMN_REQ_MAGIC while NCCL holds it, 0 when free */
	uint8_t kind;         /* enum pcmn_req_kind */
	uint8_t n;            /* buffers */
	uint16_t pending;     /* operations not yet complete */
	int status;           /* the first error, or 0 */
	struct pcmn_comm *comm;
};

struct pcmn_send_req {
	struct pcmn_req r;
	size_t size;
	void *stage;          /* daemon mode: the staged copy, freed at completion */
	struct pcmn_op op;
};

struct pcmn_recv_req {
	struct pcmn_req r;
	size_t sizes[PCMN_MAX_RECVS];  /* bytes received per buffer */
	void *user[PCMN_MAX_RECVS];    /* NCCL's buffers */
	void *stage[PCMN_MAX_RECVS];   /* daemon mode: where they are received first */
	struct pcmn_op ops[PCMN_MAX_RECVS + 1]; /* the n receives, then the CTS send */
};

/* One irecv's CTS as the sender holds it. */
struct pcmn_group {
	uint64_t seq;
	bool valid;
	uint8_t n;
	uint8_t assigned;     /* buffers an isend took */
	uint8_t posted;       /* buffers sent, in order */
	int32_t tags[PCMN_MAX_RECVS];
	uint64_t caps[PCMN_MAX_RECVS];
	struct pcmn_send_req *req[PCMN_MAX_RECVS];
};

struct pcmn_send_side {
	uint64_t next_seq;    /* the group isends are matched against */
	struct pcmn_group groups[PCMN_GROUPS];   /* by seq mod PCMN_GROUPS */
	struct pcmn_op cts_ops[PCMN_GROUPS];     /* receives of CTSs, one per slot */
	struct pcmn_op hello_op;
	struct pcmn_send_req reqs[PCMN_SEND_REQUESTS];
};

struct pcmn_recv_side {
	uint64_t next_seq;
	struct pcmn_op hello_op;
	struct pcmn_recv_req reqs[PCMN_RECV_REQUESTS]; /* request i sends its CTS from slot i */
};

struct pcmn_listen_side {
	uint64_t id;
	struct pcmn_comm *ready;  /* connections that dialed it, not yet accept()ed */
	struct pcmn_comm *next;   /* in nccl_conn.c's list of listenComms */
};

struct pcmn_comm {
	uint32_t magic;
	uint8_t kind;         /* enum pcmn_kind */
	uint8_t state;        /* enum pcmn_state */
	bool closed;          /* NCCL closed it; freed once it holds no operation */
	int error;            /* PCMN_FAILED: why */
	struct pcmn_lane lane;
	uint32_t held;        /* operations posted or queued, not yet complete */
	uint8_t *ctl;         /* control block (send, recv) */
	struct pcmn_op setup_op; /* connect()'s completion */
	struct pcmn_op close_op;
	struct pcmn_comm *next;  /* in a listenComm's ready list */
	struct pcmn_reap reap;
	union {
		struct pcmn_send_side *send;
		struct pcmn_recv_side *recv;
		struct pcmn_listen_side listen;
	};
};

/* A new comm of @kind (with its side and control block), or NULL. */
struct pcmn_comm *pcmn_comm_new(enum pcmn_kind kind);

/* @p as a comm of @kind, or NULL (logged) when it is none. */
struct pcmn_comm *pcmn_comm_of(void *p, enum pcmn_kind kind, const char *call);

/* Post @op on @c's connection, held by @c until its handler calls pcmn_comm_release(). */
int pcmn_comm_post(struct pcmn_comm *c, struct pcmn_op *op);
void pcmn_comm_hold(struct pcmn_comm *c);
void pcmn_comm_release(struct pcmn_comm *c);

/* Mark @c failed with @err; its queued operations complete with it. */
void pcmn_comm_fail(struct pcmn_comm *c, int err);

/* Close @c's connection and free @c once its operations have completed. */
void pcmn_comm_close(struct pcmn_comm *c);

/* ---- the message protocol (nccl_data.c) ---------------------------------------------------- */

/* A sendComm just connected: post its CTS receives. Return: 0 or -errno. */
int pcmn_send_start(struct pcmn_comm *c);

ncclResult_t pcmn_isend(void *comm, void *data, size_t size, int tag, void *mhandle,
			void **request);
ncclResult_t pcmn_irecv(void *comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
			void **request);
ncclResult_t pcmn_iflush(void *comm, int n, void **data, int *sizes, void **mhandles,
			 void **request);
ncclResult_t pcmn_test(void *request, int *done, int *sizes);

/* ---- connections (nccl_conn.c) --------------------------------------------------------------- */

/* connect and accept ignore @dev_comm: no device offload (netDeviceType HOST). */
ncclResult_t pcmn_listen(int dev, void *handle, void **listen_comm);
ncclResult_t pcmn_connect(int dev, void *handle, void **send_comm,
			  struct ncclNetDeviceHandle **dev_comm);
ncclResult_t pcmn_accept(void *listen_comm, void **recv_comm,
			 struct ncclNetDeviceHandle **dev_comm);
ncclResult_t pcmn_close_send(void *send_comm);
ncclResult_t pcmn_close_recv(void *recv_comm);
ncclResult_t pcmn_close_listen(void *listen_comm);

/* ---- the device (nccl_device.c) -------------------------------------------------------------- */

ncclResult_t pcmn_init(ncclDebugLogger_t log);
ncclResult_t pcmn_devices(int *ndev);

/* The device's properties in the v9 and v10 layout (nccl_v8.c takes its fields from them). */
ncclResult_t pcmn_get_properties(int dev, ncclNetProperties_v9_t *props);

#endif /* PCM_NCCL_PCM_H */
