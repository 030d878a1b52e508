// SPDX-License-Identifier: MIT
/*
 * pcmfi_nosys.c - the calls the pcm provider does not offer, each answering
 * -FI_ENOSYS: tagged messages (ofi_rxm adds them on top), atomics,
 * collectives, and the fid calls an object has no use for. libfabric's
 * inline wrappers call through these tables without checking for NULL, so
 * every slot is filled.
 */
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_tagged.h>

#include "pcmfi.h"

int pcmfi_nosys_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
			 void *context)
{
	return -FI_ENOSYS;
}

int pcmfi_nosys_tostr(const struct fid *fid, char *buf, size_t len)
{
	return -FI_ENOSYS;
}

int pcmfi_nosys_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops,
			void *context)
{
	return -FI_ENOSYS;
}

int pcmfi_nosys_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int pcmfi_nosys_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

/* ---- tagged ---------------------------------------------------------------------------- */

static ssize_t t_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src,
		      uint64_t tag, uint64_t ignore, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t t_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
		       fi_addr_t src, uint64_t tag, uint64_t ignore, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t t_recvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t t_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest,
		      uint64_t tag, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t t_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
		       fi_addr_t dest, uint64_t tag, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t t_sendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t t_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest,
			uint64_t tag)
{
	return -FI_ENOSYS;
}

static ssize_t t_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			  uint64_t data, fi_addr_t dest, uint64_t tag, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t t_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data,
			    fi_addr_t dest, uint64_t tag)
{
	return -FI_ENOSYS;
}

struct fi_ops_tagged pcmfi_nosys_tagged = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = t_recv,
	.recvv = t_recvv,
	.recvmsg = t_recvmsg,
	.send = t_send,
	.sendv = t_sendv,
	.sendmsg = t_sendmsg,
	.inject = t_inject,
	.senddata = t_senddata,
	.injectdata = t_injectdata,
};

/* ---- atomics ---------------------------------------------------------------------------- */

static ssize_t a_write(struct fid_ep *ep, const void *buf, size_t count, void *desc,
		       fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
		       enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t a_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
			fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t a_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t a_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest,
			uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op)
{
	return -FI_ENOSYS;
}

static ssize_t a_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			   void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
			   uint64_t key, enum fi_datatype dt, enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t a_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			    size_t count, struct fi_ioc *resultv, void **result_desc,
			    size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			    enum fi_datatype dt, enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t a_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			      struct fi_ioc *resultv, void **result_desc, size_t result_count,
			      uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t a_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			   const void *compare, void *compare_desc, void *result,
			   void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
			   enum fi_datatype dt, enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t a_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			    size_t count, const struct fi_ioc *comparev, void **compare_desc,
			    size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			    size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			    enum fi_datatype dt, enum fi_op op, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t a_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			      const struct fi_ioc *comparev, void **compare_desc,
			      size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			      size_t result_count, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int a_valid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op, size_t *count)
{
	return -FI_ENOSYS;
}

struct fi_ops_atomic pcmfi_nosys_atomic = {
	.size = sizeof(struct fi_ops_atomic),
	.write = a_write,
	.writev = a_writev,
	.writemsg = a_writemsg,
	.inject = a_inject,
	.readwrite = a_readwrite,
	.readwritev = a_readwritev,
	.readwritemsg = a_readwritemsg,
	.compwrite = a_compwrite,
	.compwritev = a_compwritev,
	.compwritemsg = a_compwritemsg,
	.writevalid = a_valid,
	.readwritevalid = a_valid,
	.compwritevalid = a_valid,
};

/* ---- collectives -------------------------------------------------------------------------- */

static ssize_t c_barrier(struct fid_ep *ep, fi_addr_t coll, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t c_broadcast(struct fid_ep *ep, void *buf, size_t count, void *desc,
			   fi_addr_t coll, fi_addr_t root, enum fi_datatype dt, uint64_t flags,
			   void *context)
{
	return -FI_ENOSYS;
}

static ssize_t c_alltoall(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			  void *result, void *result_desc, fi_addr_t coll, enum fi_datatype dt,
			  uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t c_allreduce(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			   void *result, void *result_desc, fi_addr_t coll, enum fi_datatype dt,
			   enum fi_op op, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t c_reduce(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			void *result, void *result_desc, fi_addr_t coll, fi_addr_t root,
			enum fi_datatype dt, enum fi_op op, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t c_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			 void *result, void *result_desc, fi_addr_t coll, fi_addr_t root,
			 enum fi_datatype dt, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t c_msg(struct fid_ep *ep, const struct fi_msg_collective *msg,
		     struct fi_ioc *resultv, void **result_desc, size_t result_count,
		     uint64_t flags)
{
	return -FI_ENOSYS;
}

static ssize_t c_barrier2(struct fid_ep *ep, fi_addr_t coll, uint64_t flags, void *context)
{
	return -FI_ENOSYS;
}

struct fi_ops_collective pcmfi_nosys_collective = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = c_barrier,
	.broadcast = c_broadcast,
	.alltoall = c_alltoall,
	.allreduce = c_allreduce,
	.allgather = c_alltoall,
	.reduce_scatter = c_allreduce,
	.reduce = c_reduce,
	.scatter = c_scatter,
	.gather = c_scatter,
	.msg = c_msg,
	.barrier2 = c_barrier2,
};
