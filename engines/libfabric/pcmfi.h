/* SPDX-License-Identifier: MIT */
/*
 * pcmfi.h - the pcm libfabric provider's objects, shared by its files.
 *
 * The provider (libpcm-fi.so, named "pcm") is a connection-oriented core
 * provider (FI_EP_MSG) over libpcmtransport's public API. Its layers, lowest
 * first, each calling only those below it (anything upward goes through a
 * function pointer that the upper layer installs):
 *
 *   pcmfi_provider.c  the struct fi_provider and the settings from FI_PCM_*
 *   pcmfi_util.c      errno mapping, iovec copies, random keys, the clock
 *   pcmfi_wait.c      how a queue is waited on: doorbell, sread loop, wait fd
 *   pcmfi_cq.c        completion queues          pcmfi_eq.c  event queues
 *   pcmfi_mr.c        memory regions and the key table of a domain
 *   pcmfi_conn.c      one pcm connection: its ring of receives, its send
 *                     slots, operations cut into segments (pcmfi_wire.h)
 *   pcmfi_port.c      one libpcmtransport endpoint (in daemon mode: one
 *                     emulated host of pcmd's fabric), its listen name, and
 *                     the dispatch of its completions
 *   pcmfi_tx.c        an endpoint's transmit operations: checks, count, completion
 *   pcmfi_msg.c       fi_send/fi_recv and friends, message reassembly
 *   pcmfi_rma.c       fi_read/fi_write and friends, the target's side
 *   pcmfi_ep.c        active endpoints: binding, connect, accept, shutdown
 *   pcmfi_pep.c       passive endpoints: listen, connection requests, reject
 *   pcmfi_domain.c    domains          pcmfi_fabric.c  fabrics, progress, waits
 *   pcmfi_info.c      fi_getinfo: attributes, hints, addresses
 *   pcmfi_prov.c      fi_prov_ini()
 *
 * One mutex per fabric serializes every call into the provider
 * (FI_THREAD_SAFE); the functions below that take an object expect it held,
 * unless they say otherwise.
 */
#ifndef PCMFI_H
#define PCMFI_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <pcm/transport.h>

#include "pcmfi_wire.h"

#define PCMFI_NAME "pcm"
#define PCMFI_FABRIC_NAME "pcm"
#define PCMFI_IOV_MAX 4
#define PCMFI_CM_DATA_MAX 256   /* private data of connect, accept and reject */
#define PCMFI_INJECT_MAX 4096
#define PCMFI_QUEUE_DEFAULT 256 /* tx and rx operations per endpoint */
#define PCMFI_QUEUE_MAX 8192
#define PCMFI_KEY_BYTES 8
#define PCMFI_CQ_DATA_BYTES 8

#define PCMFI_CONTAINER(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* ---- pcmfi_provider.c: the provider and its settings --------------------------------- */

/* The settings, read from FI_PCM_* once at fi_prov_ini() (pcm-fi(7), "Environment"). */
struct pcmfi_config {
	enum pcm_tp_backend backend; /* FI_PCM_BACKEND: daemon (default) or inproc */
	char datapath[32];           /* FI_PCM_DATAPATH: in process (default null) */
	struct in_addr addr;         /* FI_PCM_ADDR: the IPv4 address naming endpoints */
	char policy[64];             /* FI_PCM_POLICY: CC package of dialed connections ("" default) */
	size_t region_bytes;         /* FI_PCM_REGION_MB: pcmd's shared region per endpoint */
	size_t segment_bytes;        /* FI_PCM_SEGMENT_SIZE: bytes per pcm message */
	unsigned ring;               /* FI_PCM_RING: receives posted per connection */
	unsigned slots;              /* FI_PCM_SLOTS: sends in flight per connection */
};

extern struct fi_provider pcmfi_prov;
extern struct pcmfi_config pcmfi_cfg;

void pcmfi_config_read(void);

/* ---- pcmfi_util.c ---------------------------------------------------------------------- */

int pcmfi_errno(int pcm_err);
size_t pcmfi_iov_len(const struct iovec *iov, size_t count);
size_t pcmfi_iov_copy_to(const struct iovec *iov, size_t count, uint64_t offset,
			 const void *src, size_t len);
size_t pcmfi_iov_copy_from(const struct iovec *iov, size_t count, uint64_t offset, void *dst,
			   size_t len);
uint64_t pcmfi_random64(void);
int64_t pcmfi_now_ms(void);

/* ---- pcmfi_wait.c: how a queue is waited on --------------------------------------------- */

struct pcmfi_fabric;

struct pcmfi_wait {
	enum fi_wait_obj obj;
	int bell;     /* an eventfd rung when an entry is added while someone may sleep */
	int sleepers; /* threads in sread(); FI_WAIT_FD counts one for good */
	int epfd;     /* FI_WAIT_FD: the bell and every port's pcm_tp_fd() */
};

int pcmfi_wait_check(enum fi_wait_obj obj);
int pcmfi_wait_open(struct pcmfi_fabric *fab, struct pcmfi_wait *w, enum fi_wait_obj obj);
void pcmfi_wait_close(struct pcmfi_fabric *fab, struct pcmfi_wait *w);
void pcmfi_wait_ring(struct pcmfi_wait *w);
void pcmfi_wait_drain(struct pcmfi_wait *w);
int pcmfi_wait_control(const struct pcmfi_wait *w, int command, void *arg);
ssize_t pcmfi_wait_read(struct pcmfi_fabric *fab, struct pcmfi_wait *w, int timeout_ms,
			ssize_t (*take)(void *arg), void *arg, unsigned *signaled);
const char *pcmfi_strerror(int prov_errno, char *buf, size_t len);

/* ---- pcmfi_fabric.c: the fabric --------------------------------------------------------- */

struct pcmfi_port;
struct pcmfi_conn;

struct pcmfi_fabric {
	struct fid_fabric fab;
	pthread_mutex_t lock;
	struct pcmfi_port *ports; /* pcmfi_port.c's list */
	struct pcmfi_conn *conns; /* pcmfi_conn.c's list of live connections */
	unsigned refs;            /* domains, peps and eqs open on it */
	/* installed by pcmfi_fabric.c, called by the queues without naming it */
	void (*progress)(struct pcmfi_fabric *fab);
	int (*wait)(struct pcmfi_fabric *fab, struct pcmfi_wait *w, int timeout_ms);
	int (*arm)(struct pcmfi_fabric *fab); /* make the ports' fds wake their waiters */
	/* the wait fds (epoll) that every port's fd joins */
	int waitfds[64];
	unsigned n_waitfds;
};

int pcmfi_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);

/* ---- pcmfi_cq.c, pcmfi_eq.c: the queues -------------------------------------------------- */

struct pcmfi_cqe {
	struct fi_cq_err_entry e; /* a success uses the fields up to tag */
	bool is_err;
};

struct pcmfi_cq {
	struct fid_cq cq;
	struct pcmfi_fabric *fab;
	struct pcmfi_domain *dom;
	enum fi_cq_format format;
	struct pcmfi_wait w;
	struct pcmfi_cqe *q; /* a ring that grows: completions are never dropped */
	size_t cap, head, count;
	unsigned signaled;   /* fi_cq_signal() calls not yet seen by an sread() */
	unsigned refs;       /* endpoints bound */
};

int pcmfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq_fid,
		  void *context);
void pcmfi_cq_write(struct pcmfi_cq *cq, void *context, uint64_t flags, size_t len, void *buf,
		    uint64_t data);
void pcmfi_cq_write_err(struct pcmfi_cq *cq, void *context, uint64_t flags, int err,
			int prov_errno, size_t len, size_t olen);

struct pcmfi_eqe {
	struct pcmfi_eqe *next;
	uint32_t event;
	bool is_err;
	bool owns_info;            /* a FI_CONNREQ whose fi_info nobody has read yet */
	size_t len;                /* bytes of buf (an event) */
	struct fi_eq_err_entry err; /* an error; err_data owned by the entry */
	uint8_t buf[];
};

struct pcmfi_eq {
	struct fid_eq eq;
	struct pcmfi_fabric *fab;
	struct pcmfi_wait w;
	struct pcmfi_eqe *head, *tail;
	void *last_err_data;  /* handed out by the last fi_eq_readerr() */
	unsigned refs;
};

int pcmfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq_fid,
		  void *context);
int pcmfi_eq_push(struct pcmfi_eq *eq, uint32_t event, const void *buf, size_t len);
int pcmfi_eq_push_cm(struct pcmfi_eq *eq, uint32_t event, fid_t fid, struct fi_info *info,
		     const void *data, size_t datalen);
int pcmfi_eq_push_err(struct pcmfi_eq *eq, fid_t fid, void *context, int err, int prov_errno,
		      const void *err_data, size_t err_data_size);

/* ---- pcmfi_mr.c, pcmfi_domain.c ------------------------------------------------------------ */

struct pcmfi_domain;

struct pcmfi_mr {
	struct fid_mr mr;
	struct pcmfi_domain *dom;
	uint8_t *base;     /* the registered range */
	size_t len;
	uint64_t access;   /* FI_READ, FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE, ... */
	uint64_t offset;   /* without FI_MR_VIRT_ADDR: the remote address of base */
	struct pcmfi_mr *next_in_bucket;
};

struct pcmfi_domain {
	struct fid_domain dom;
	struct pcmfi_fabric *fab;
	struct fi_info *info;
	uint64_t mr_mode;
	struct pcmfi_mr **mr_table; /* hash of keys */
	size_t mr_buckets, mr_count;
	unsigned refs; /* endpoints, cqs, mrs open on it */
};

int pcmfi_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_domain **domain, void *context);
extern struct fi_ops_mr pcmfi_mr_ops;
int pcmfi_mr_table_init(struct pcmfi_domain *dom);
void pcmfi_mr_table_fini(struct pcmfi_domain *dom);
int pcmfi_mr_target(struct pcmfi_domain *dom, uint64_t key, uint64_t addr, uint64_t len,
		    uint64_t access, uint8_t **out);

/* ---- pcmfi_conn.c: one pcm connection ---------------------------------------------------- */

enum pcmfi_wr_kind { PCMFI_WR_ACCEPT = 1, PCMFI_WR_CONNECT, PCMFI_WR_RX, PCMFI_WR_TX };

/* A pcm operation's cookie: what completed. */
struct pcmfi_wr {
	enum pcmfi_wr_kind kind;
	void *owner;    /* the port (ACCEPT) or the connection */
	uint32_t index; /* RX, TX: the slot */
};

struct pcmfi_op;
typedef void (*pcmfi_op_done_fn)(struct pcmfi_op *op, int status);
/* Copy @len payload bytes at @offset into @dst. Return: 0 or a negative FI_E* code. */
typedef int (*pcmfi_op_fill_fn)(struct pcmfi_op *op, uint64_t offset, void *dst, size_t len);

/* Something to send: one or more segments, then one call of done(). */
struct pcmfi_op {
	struct pcmfi_op *next;
	struct pcmfi_wire_hdr hdr; /* type, flags but LAST, total, addr, key, data, op_id, status */
	uint64_t payload;    /* bytes to send after the headers (a read request: none) */
	pcmfi_op_fill_fn fill;
	pcmfi_op_done_fn done;
	uint64_t cut;        /* payload bytes cut into segments so far */
	uint32_t in_flight;  /* segments posted, not completed */
	bool all_cut;
	int status;          /* the first failure, or 0 */
	/* the owner's (pcmfi_msg.c, pcmfi_rma.c, pcmfi_ep.c, pcmfi_pep.c) */
	void *owner;
	void *context;
	uint64_t cq_flags;
	bool want_comp;
	bool silent;         /* an inject: no completion, not even an error */
	struct iovec iov[PCMFI_IOV_MAX];
	size_t iov_count;
	uint64_t received;   /* a read: response bytes placed */
	uint8_t *copy;       /* inject or CM data: the bytes, owned */
};

/* How a connection reports to its owner (an endpoint, or a pep's pending request). */
struct pcmfi_conn_ops {
	/* the dial completed: 0, or a negative FI_E* code (the connection is dead then) */
	void (*connected)(struct pcmfi_conn *c, int status);
	/* a segment arrived. Return: 0 (taken), 1 (keep it: only a MSG, delivered
	 * again by pcmfi_conn_drain()), or a negative FI_E* code (fails the connection). */
	int (*recv)(struct pcmfi_conn *c, const struct pcmfi_wire_hdr *h, const uint8_t *payload);
	/* the connection failed (err < 0: FI_ECONNRESET when the peer left) */
	void (*failed)(struct pcmfi_conn *c, int err);
};

enum pcmfi_conn_state {
	PCMFI_CONN_DIALING = 1, /* pcm_tp_connect() posted */
	PCMFI_CONN_OPEN,        /* a pcm connection: the ring is posted */
	PCMFI_CONN_CLOSED,      /* pcm_tp_conn_close() done or due; reaping */
};

struct pcmfi_rx_slot {
	uint8_t *buf;
	struct pcmfi_wr wr;
	bool posted;  /* a receive is posted into it */
	bool filled;  /* completed, waiting its turn */
	bool kept;    /* holds a MSG segment waiting for its receive */
	uint32_t bytes;
	uint32_t next; /* the next slot in posting order, or UINT32_MAX */
};

struct pcmfi_tx_slot {
	uint8_t *buf;
	struct pcmfi_wr wr;
	struct pcmfi_op *op; /* NULL: free (or its op is gone) */
	bool busy;
};

struct pcmfi_conn {
	struct pcmfi_conn *next; /* the fabric's list */
	struct pcmfi_fabric *fab;
	struct pcmfi_port *port;
	struct pcm_tp_conn *tp;
	enum pcmfi_conn_state state;
	struct pcmfi_wr connect_wr;
	const struct pcmfi_conn_ops *ops; /* NULL once released */
	void *owner;
	unsigned outstanding; /* pcm operations posted, not completed */
	bool close_due;       /* pcm_tp_conn_close() said -EAGAIN: retry */
	bool rx_retry;        /* pcm_tp_recv() said -EAGAIN: repost at the next progress */
	bool failed;
	struct pcmfi_rx_slot *rx;
	uint32_t rx_first, rx_last; /* posting order of the posted and filled slots */
	uint32_t stall_first, stall_last; /* MSG segments kept for their receive */
	struct pcmfi_tx_slot *tx;
	unsigned tx_busy;
	size_t tx_seg;  /* bytes per segment sent: ours, or fewer if the peer's receives hold less */
	struct pcmfi_op *txq, *txq_tail; /* operations still to cut */
	uint8_t *mem;  /* every slot's buffer, pcm_tp_mem_alloc()'d */
};

int pcmfi_conn_dial(struct pcmfi_port *port, const char *name, const struct pcmfi_conn_ops *ops,
		    void *owner, struct pcmfi_conn **out);
int pcmfi_conn_accepted(struct pcmfi_port *port, struct pcm_tp_conn *tp,
			const struct pcmfi_conn_ops *ops, void *owner, struct pcmfi_conn **out);
void pcmfi_conn_set_owner(struct pcmfi_conn *c, const struct pcmfi_conn_ops *ops, void *owner);
void pcmfi_conn_send(struct pcmfi_conn *c, struct pcmfi_op *op);
void pcmfi_conn_drain(struct pcmfi_conn *c);
void pcmfi_conn_release(struct pcmfi_conn *c);
void pcmfi_conn_fail(struct pcmfi_conn *c, int err);
void pcmfi_conn_progress(struct pcmfi_conn *c);
void pcmfi_conn_completion(struct pcmfi_wr *wr, const struct pcm_tp_completion *comp);
void pcmfi_conn_port_dead(struct pcmfi_port *port, int err);
void pcmfi_conn_forget_all(struct pcmfi_fabric *fab);
int pcmfi_conn_peer_segment(struct pcmfi_conn *c, uint64_t bytes);
struct pcmfi_op *pcmfi_op_new(uint8_t type, size_t copy_bytes);
int pcmfi_op_fill_iov(struct pcmfi_op *op, uint64_t offset, void *dst, size_t len);
void pcmfi_op_free(struct pcmfi_op *op);

/* ---- pcmfi_port.c: one libpcmtransport endpoint --------------------------------------- */

typedef void (*pcmfi_accept_fn)(void *arg, struct pcmfi_port *port, struct pcm_tp_conn *tp,
				int status);

struct pcmfi_port {
	struct pcmfi_port *next;
	struct pcmfi_fabric *fab;
	struct pcm_tp_endpoint *tp;
	struct sockaddr_in name; /* where it listens (sin_port 0: it does not) */
	char name_str[32];
	bool listening;
	bool loopback;  /* dials this process's own listeners */
	bool dead;      /* pcmd went away */
	int fd;         /* pcm_tp_fd(), or -1 before the first arming */
	struct pcmfi_wr accept_wr;
	bool accept_posted;
	pcmfi_accept_fn on_accept; /* NULL: refuse what is accepted */
	void *accept_arg;
};

int pcmfi_port_listen(struct pcmfi_fabric *fab, struct sockaddr_in *addr, pcmfi_accept_fn fn,
		      void *arg, struct pcmfi_port **out);
int pcmfi_port_for_dial(struct pcmfi_fabric *fab, const struct sockaddr_in *dest,
			struct pcmfi_port **out);
void pcmfi_port_stop(struct pcmfi_port *port);
int pcmfi_port_poll(struct pcmfi_port *port);
int pcmfi_port_arm(struct pcmfi_port *port);
int pcmfi_port_wait(struct pcmfi_port *port, int timeout_ms);
void pcmfi_port_check(struct pcmfi_port *port, int rc);
void pcmfi_ports_close(struct pcmfi_fabric *fab);
void pcmfi_addr_name(const struct sockaddr_in *a, char *buf, size_t len);

/* ---- pcmfi_ep.c, pcmfi_msg.c, pcmfi_rma.c: active endpoints -------------------------- */

struct pcmfi_pep;
struct pcmfi_connreq;

enum pcmfi_ep_state {
	PCMFI_EP_IDLE = 0,
	PCMFI_EP_CONNECTING, /* fi_connect() called, no answer yet */
	PCMFI_EP_ACCEPTING,  /* fi_accept() called, the accept is on its way */
	PCMFI_EP_CONNECTED,
	PCMFI_EP_SHUTDOWN,   /* fi_shutdown(), a reject, a failure or the peer's leaving */
};

/* A posted receive. */
struct pcmfi_recv {
	struct pcmfi_recv *next;
	void *context;
	struct iovec iov[PCMFI_IOV_MAX];
	size_t iov_count;
	size_t cap;
	bool want_comp;
};

struct pcmfi_ep {
	struct fid_ep ep;
	struct pcmfi_domain *dom;
	struct pcmfi_fabric *fab;
	struct fi_info *info;
	enum pcmfi_ep_state state;
	bool enabled;
	struct pcmfi_eq *eq;
	struct pcmfi_cq *tx_cq, *rx_cq;
	bool tx_selective, rx_selective;
	uint64_t tx_op_flags, rx_op_flags;
	size_t tx_size, rx_size;
	size_t tx_used, rx_used;  /* operations posted and not yet completed */
	struct sockaddr_in src, peer;
	struct pcmfi_conn *conn;
	struct pcmfi_connreq *req; /* fi_endpoint() of a connection request */
	struct pcmfi_recv *rq, *rq_tail; /* posted receives, in order */
	/* the message being received (its first segment matched a receive) */
	struct pcmfi_recv *cur;
	uint64_t cur_total, cur_got;
	uint64_t cur_data;
	bool cur_has_data;
	/* reads and writes waiting for the target's answer */
	struct pcmfi_op *rma_wait;
	uint64_t next_op_id;
	/* the write being received: its first failure */
	int write_status;
};

/* A transmit operation as a call asks for it (pcmfi_tx.c). */
struct pcmfi_tx_req {
	uint8_t type;                /* PCMFI_W_MSG, PCMFI_W_WRITE or PCMFI_W_READ_REQ */
	const struct iovec *iov;
	size_t count;
	const struct fi_rma_iov *rma; /* the remote range of a read or write */
	uint64_t flags;              /* the call's: FI_INJECT, FI_COMPLETION, FI_REMOTE_CQ_DATA */
	uint64_t allowed;            /* the flags the call takes */
	uint64_t data;
	void *context;
	bool silent;                 /* an inject: no completion, not even an error */
	uint64_t cq_flags;           /* its completion's flags */
	pcmfi_op_done_fn done;
};

ssize_t pcmfi_tx_post(struct pcmfi_ep *ep, const struct pcmfi_tx_req *r);
void pcmfi_tx_complete(struct pcmfi_ep *ep, struct pcmfi_op *op, int status);
extern struct fi_ops_msg pcmfi_msg_ops;
extern struct fi_ops_rma pcmfi_rma_ops;
int pcmfi_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep_fid,
		  void *context);
int pcmfi_msg_on_segment(struct pcmfi_ep *ep, const struct pcmfi_wire_hdr *h,
			 const uint8_t *payload);
void pcmfi_msg_flush(struct pcmfi_ep *ep, int err);
int pcmfi_rma_on_segment(struct pcmfi_ep *ep, const struct pcmfi_wire_hdr *h,
			 const uint8_t *payload);
void pcmfi_rma_flush(struct pcmfi_ep *ep, int err);

/**
 * pcmfi_ep_can_send() - whether @ep may post a send, read or write now.
 *
 * Return: 0, -FI_EAGAIN (its connect is not answered yet) or -FI_ENOTCONN.
 */
static inline int pcmfi_ep_can_send(const struct pcmfi_ep *ep)
{
	switch (ep->state) {
	case PCMFI_EP_CONNECTED:
	case PCMFI_EP_ACCEPTING:
		return 0;
	case PCMFI_EP_CONNECTING:
		return -FI_EAGAIN;
	default:
		return -FI_ENOTCONN;
	}
}

/* ---- pcmfi_pep.c: passive endpoints and connection requests ------------------------ */

struct pcmfi_pep {
	struct fid_pep pep;
	struct pcmfi_fabric *fab;
	struct fi_info *info;
	struct pcmfi_eq *eq;
	struct pcmfi_port *port;
	struct sockaddr_in addr;
	struct pcmfi_connreq *reqs; /* pending: before their CONNREQ is answered */
};

/* A connection request: the handle in a FI_CONNREQ event's fi_info. */
struct pcmfi_connreq {
	struct fid fid; /* FI_CLASS_CONNREQ */
	struct pcmfi_connreq *next;
	struct pcmfi_pep *pep;   /* NULL once the pep is closed */
	struct pcmfi_conn *conn; /* NULL once the dialer went away */
	struct sockaddr_in peer;
	bool reported;           /* its FI_CONNREQ is on the EQ */
};

int pcmfi_pep_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep,
		   void *context);
void pcmfi_connreq_taken(struct pcmfi_connreq *req);
int pcmfi_pep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen);

/* ---- pcmfi_info.c ------------------------------------------------------------------------ */

int pcmfi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
		  const struct fi_info *hints, struct fi_info **info);
const char *pcmfi_domain_name(void);

/* ---- pcmfi_nosys.c: the operations this provider refuses ------------------------------- */

extern struct fi_ops_tagged pcmfi_nosys_tagged;
extern struct fi_ops_atomic pcmfi_nosys_atomic;
extern struct fi_ops_collective pcmfi_nosys_collective;
int pcmfi_nosys_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
			 void *context);
int pcmfi_nosys_tostr(const struct fid *fid, char *buf, size_t len);
int pcmfi_nosys_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops,
			void *context);
int pcmfi_nosys_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int pcmfi_nosys_control(struct fid *fid, int command, void *arg);
/*
 * A fid's struct fi_ops: its own @close, and @bind and @control its own or
 * pcmfi_nosys_*; what no pcmfi fid provides (ops_open, tostr, ops_set) is
 * named here once.
 */
#define PCMFI_FI_OPS(close_fn, bind_fn, control_fn)                                             \
	{                                                                                         \
		.size = sizeof(struct fi_ops), .close = (close_fn), .bind = (bind_fn),            \
		.control = (control_fn), .ops_open = pcmfi_nosys_ops_open,                        \
		.tostr = pcmfi_nosys_tostr, .ops_set = pcmfi_nosys_ops_set,                       \
	}

#endif /* PCMFI_H */
