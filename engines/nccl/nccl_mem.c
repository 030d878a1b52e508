// SPDX-License-Identifier: MIT
/*
 * nccl_mem.c - the plugin's memory: control blocks for CTS and hello messages, staging buffers
 * for daemon mode, and the registrations NCCL asks for (regMr, deregMr).
 *
 * libpcmtransport sends and receives only from registered memory. In process, any memory can be
 * registered (pcm_tp_mr_reg), so NCCL's host buffers are registered as they are and messages go
 * to and from them directly. Through pcmd, only pcmd's shared region can be used: regMr then
 * records the range; a message is copied into a staging buffer in the region
 * (pcm_tp_mem_alloc) as it goes out, a receive lands in one and test() sees the request done
 * only after the bytes are copied out. Staging is taken when the operation is posted in its
 * connection's lane: when the region is full, the operation waits there, accepted, until the
 * operations already posted complete and free room (so a group's held isends hold no room).
 *
 * Control blocks (PCMN_CTL_BYTES, one per comm) come from slabs of registered memory, so that
 * in process they cost one registration per slab, not per comm.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_pcm.h"

#define SLAB_BLOCKS 32u

struct free_block {
	struct free_block *next;
};

static struct free_block *free_blocks;
static void *zero_block;

static int add_slab(void)
{
	uint8_t *slab = pcm_tp_mem_alloc(pcmn_ctx.ep, (size_t)SLAB_BLOCKS * PCMN_CTL_BYTES);

	if (!slab) {
		PCMN_WARN("no registered memory for %u control blocks: %s", SLAB_BLOCKS,
			  pcm_tp_last_error());
		return -ENOMEM;
	}
	for (uint32_t i = SLAB_BLOCKS; i-- > 0;) {
		struct free_block *b = (struct free_block *)(slab + (size_t)i * PCMN_CTL_BYTES);

		b->next = free_blocks;
		free_blocks = b;
	}
	return 0;
}

void *pcmn_ctl_get(void)
{
	struct free_block *b;

	if (!free_blocks && add_slab() < 0)
		return NULL;
	b = free_blocks;
	free_blocks = b->next;
	memset(b, 0, PCMN_CTL_BYTES);
	return b;
}

void pcmn_ctl_put(void *blk)
{
	struct free_block *b = blk;

	if (!b)
		return;
	b->next = free_blocks;
	free_blocks = b;
}

void *pcmn_zero_buf(void)
{
	if (!zero_block)
		zero_block = pcmn_ctl_get();
	return zero_block;
}

void *pcmn_stage_get(size_t len)
{
	if (len == 0)
		return pcmn_zero_buf();
	return pcm_tp_mem_alloc(pcmn_ctx.ep, len);
}

void pcmn_stage_put(void *p)
{
	if (p && p != zero_block)
		pcm_tp_mem_free(pcmn_ctx.ep, p);
}

int pcmn_mr_find(const void *mh, const void *data, size_t len, struct pcm_tp_mr **out)
{
	const struct pcmn_mr *m = mh;
	const uint8_t *p = data;

	*out = NULL;
	if (!m)
		return 0;
	if (m->magic != PCMN_MR_MAGIC) {
		PCMN_WARN("mhandle %p is no registration of this plugin", mh);
		return -EINVAL;
	}
	if (len && (p < m->addr || len > m->len || (size_t)(p - m->addr) > m->len - len)) {
		PCMN_WARN("buffer %p + %zu bytes lies outside its registration %p + %zu bytes", data,
			  len, (void *)m->addr, m->len);
		return -EINVAL;
	}
	*out = m->mr;
	return 0;
}

static bool is_comm(void *comm)
{
	const struct pcmn_comm *c = comm;

	return c && c->magic == PCMN_COMM_MAGIC && c->kind != PCMN_LISTEN;
}

ncclResult_t pcmn_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	struct pcmn_mr *m;
	int rc = 0;

	if (!mhandle || !is_comm(comm) || (!data && size)) {
		PCMN_WARN("regMr: %s", !mhandle ? "no mhandle to fill" : !is_comm(comm) ?
			  "comm is no sendComm or recvComm of this plugin" : "NULL buffer");
		return ncclInternalError;
	}
	*mhandle = NULL;
	if (type != NCCL_PTR_HOST) {
		PCMN_WARN("regMr: memory type %#x: this plugin takes host memory only "
			  "(NCCL_PTR_HOST; its ptrSupport says so)", (unsigned)type);
		return ncclInternalError;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return ncclSystemError;
	*m = (struct pcmn_mr){ .magic = PCMN_MR_MAGIC, .addr = data, .len = size };
	pcmn_lock();
	if (pcmn_ctx.set.backend == PCMN_BACKEND_INPROC && size)
		rc = pcm_tp_mr_reg(pcmn_ctx.ep, data, size, &m->mr);
	pcmn_unlock();
	if (rc < 0) {
		PCMN_WARN("regMr %p + %zu bytes: %s (%s)", data, size, pcm_tp_strerror(rc),
			  pcm_tp_last_error());
		free(m);
		return pcmn_result(rc);
	}
	*mhandle = m;
	return ncclSuccess;
}

ncclResult_t pcmn_dereg_mr(void *comm, void *mhandle)
{
	struct pcmn_mr *m = mhandle;
	int rc = 0;

	if (!is_comm(comm) || !m || m->magic != PCMN_MR_MAGIC) {
		PCMN_WARN("deregMr: %s", !is_comm(comm) ? "comm is no sendComm or recvComm" :
			  "mhandle is no registration of this plugin");
		return ncclInternalError;
	}
	pcmn_lock();
	if (m->mr)
		rc = pcm_tp_mr_dereg(m->mr);
	pcmn_unlock();
	m->magic = 0;
	free(m);
	if (rc < 0) {
		PCMN_WARN("deregMr: %s (%s)", pcm_tp_strerror(rc), pcm_tp_last_error());
		return pcmn_result(rc);
	}
	return ncclSuccess;
}
