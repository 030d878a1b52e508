// SPDX-License-Identifier: MIT
/*
 * channel.c - the memfd region, its rings and doorbells, pcmd's side.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "channel.h"
#include "xp_range.h"

static void write_header(struct pcmd_channel *ch)
{
	struct pcmd_region_hdr *h = (struct pcmd_region_hdr *)ch->base;

	h->magic = PCMD_REGION_MAGIC;
	h->version = PCMD_REGION_VERSION;
	h->lay = ch->lay;
	pcmd_ring_init(&ch->sq, &h->sq, ch->base + ch->lay.sq_off, ch->lay.sq_entries,
		       sizeof(struct pcmd_sqe));
	pcmd_ring_init(&ch->cq, &h->cq, ch->base + ch->lay.cq_off, ch->lay.cq_entries,
		       sizeof(struct pcmd_cqe));
}

static int make_memfd(const struct pcmd_region_layout *lay, int *out)
{
	int fd = memfd_create("pcmd-client", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int rc;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)lay->region_bytes) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	*out = fd;
	return 0;
}

int pcmd_channel_create(const struct pcmd_region_layout *lay, uint32_t max_outstanding,
			struct pcmd_channel **out)
{
	struct pcmd_channel *ch = calloc(1, sizeof(*ch));
	void *base;
	int rc;

	if (!ch)
		return -ENOMEM;
	ch->lay = *lay;
	ch->memfd = ch->sq_efd = ch->cq_efd = -1;
	ch->max_reserved = max_outstanding < lay->cq_entries ? max_outstanding : lay->cq_entries;
	rc = make_memfd(lay, &ch->memfd);
	if (rc < 0)
		goto err_free;
	base = mmap(NULL, lay->region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ch->memfd, 0);
	if (base == MAP_FAILED) {
		rc = -errno;
		goto err_close;
	}
	ch->base = base;
	write_header(ch);
	/* The client may map it but never resize it: a shrink would fault pcmd. */
	if (fcntl(ch->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		rc = -errno;
		goto err_unmap;
	}
	ch->sq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ch->cq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ch->sq_efd < 0 || ch->cq_efd < 0) {
		rc = -errno;
		goto err_unmap;
	}
	*out = ch;
	return 0;

err_unmap:
	munmap(ch->base, lay->region_bytes);
err_close:
	if (ch->sq_efd >= 0)
		close(ch->sq_efd);
	if (ch->cq_efd >= 0)
		close(ch->cq_efd);
	close(ch->memfd);
err_free:
	free(ch);
	return rc;
}

void pcmd_channel_destroy(struct pcmd_channel *ch)
{
	if (!ch)
		return;
	munmap(ch->base, ch->lay.region_bytes);
	close(ch->memfd);
	close(ch->sq_efd);
	close(ch->cq_efd);
	free(ch);
}

/* Completion slots free for new reservations, or -EPROTO. */
static int64_t cq_room(const struct pcmd_channel *ch)
{
	int64_t used = pcmd_ring_used(&ch->cq);

	if (used < 0)
		return used;
	return (int64_t)pcmd_ring_size(&ch->cq) - used - ch->reserved;
}

int pcmd_channel_reserve(struct pcmd_channel *ch)
{
	int64_t room = cq_room(ch);

	if (room < 0)
		return (int)room;
	if (room == 0 || ch->reserved >= ch->max_reserved)
		return -ENOBUFS;
	ch->reserved++;
	return 0;
}

int pcmd_channel_next(struct pcmd_channel *ch, struct pcmd_sqe *out, uint32_t *why)
{
	int64_t avail = pcmd_ring_avail(&ch->sq), room;

	if (avail < 0)
		return (int)avail;
	if (avail == 0) {
		*why = PCMD_INTAKE_EMPTY;
		return 0;
	}
	if (ch->reserved >= ch->max_reserved) {
		*why = PCMD_INTAKE_OUTSTANDING;
		return 0;
	}
	room = cq_room(ch);
	if (room < 0)
		return (int)room;
	if (room == 0) {
		*why = PCMD_INTAKE_CQ_FULL;
		/* one writer (the intake's owner); pcmd's loop reads it for stats */
		__atomic_store_n(&ch->cq_full_waits, ch->cq_full_waits + 1, __ATOMIC_RELAXED);
		return 0;
	}
	pcmd_ring_get(&ch->sq, out);
	ch->reserved++;
	return 1;
}

int pcmd_channel_check_buffer(const struct pcmd_channel *ch, uint64_t offset, uint64_t len)
{
	return xp_range_within(offset, len, ch->lay.data_bytes) ? 0 : -EFAULT;
}

void pcmd_channel_complete(struct pcmd_channel *ch, const struct pcmd_cqe *cqe)
{
	/* Always reserved: a completion without a slot is a bug in pcmd, not the client. */
	if (ch->reserved == 0)
		abort();
	ch->reserved--;
	pcmd_ring_put(&ch->cq, cqe);
	ch->unpublished++;
}

static void ring_doorbell(int efd)
{
	uint64_t one = 1;

	/* EAGAIN only when the counter is saturated: the client is woken anyway. */
	if (write(efd, &one, sizeof(one)) < 0)
		return;
}

void pcmd_channel_flush(struct pcmd_channel *ch)
{
	/* An engine flushes after every run, busy or not: touch the client's lines only for news. */
	if (ch->sq.local != ch->sq_released) {
		pcmd_ring_release(&ch->sq);
		ch->sq_released = ch->sq.local;
	}
	if (!ch->unpublished)
		return;
	ch->unpublished = 0;
	if (pcmd_ring_publish(&ch->cq))
		ring_doorbell(ch->cq_efd);
}

int pcmd_channel_arm(struct pcmd_channel *ch, uint32_t stopped)
{
	int64_t avail, used;

	if (stopped == PCMD_INTAKE_CQ_FULL) {
		used = pcmd_ring_want_space(&ch->cq);
		if (used < 0)
			return (int)used;
		if ((int64_t)pcmd_ring_size(&ch->cq) - used - ch->reserved > 0)
			return 1;
		return 0;
	}
	if (stopped == PCMD_INTAKE_OUTSTANDING)
		return 0; /* a completion from the data plane restarts intake */
	avail = pcmd_ring_arm(&ch->sq);
	if (avail < 0)
		return (int)avail;
	return avail > 0;
}
