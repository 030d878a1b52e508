/* SPDX-License-Identifier: MIT */
/*
 * channel.h - one client's shared-memory channel, pcmd's side: the sealed
 * memfd holding the two rings and the data area (layout in pcmd_region.h), the two
 * doorbell eventfds, intake of submissions with completion-slot reservation,
 * and the checks that keep every offset and length inside this client's data
 * area.
 *
 * Isolation: the channel owns its own copy of the layout and of its ring
 * indices; nothing the client writes into the shared header changes where pcmd
 * reads or writes. A descriptor is copied out once, then checked.
 *
 * One thread at a time owns a channel's rings: the thread that runs the
 * client's descriptor path (intake.h): the data plane's, with ports, or
 * pcmd's loop without. Whatever else writes a completion (pcmd's loop: CONNECT,
 * ACCEPT) hands it to that thread, so each ring keeps one producer and one
 * consumer.
 *
 * Backpressure: a submission is taken only with a completion slot reserved for
 * it (and at most max_outstanding reserved), so completions always fit and a
 * client that stops reading them only stops its own intake. pcmd's memory for
 * a client is fixed when the channel is made.
 */
#ifndef PCMD_CHANNEL_H
#define PCMD_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "pcmd_region.h"

struct pcmd_channel {
	int memfd;
	int sq_efd; /* client -> pcmd doorbell */
	int cq_efd; /* pcmd -> client doorbell */
	uint8_t *base;
	struct pcmd_region_layout lay;
	struct pcmd_ring sq; /* pcmd consumes */
	struct pcmd_ring cq; /* pcmd produces */
	uint32_t reserved;   /* completions promised and not yet written */
	uint32_t max_reserved;
	uint32_t unpublished; /* completions written since the last flush */
	uint32_t sq_released; /* the submission head last handed back */
	uint64_t cq_full_waits;
};

/* Why pcmd_channel_next() took nothing. */
enum pcmd_intake_stop {
	PCMD_INTAKE_EMPTY = 0,	     /* no submission waiting */
	PCMD_INTAKE_CQ_FULL = 1,     /* the client has not read its completions */
	PCMD_INTAKE_OUTSTANDING = 2, /* max_outstanding descriptors in flight */
};

/**
 * pcmd_channel_create() - make the memfd, map it, write the header, seal it
 * (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) and make the eventfds.
 * @lay: the layout (pcmd_region_layout_compute()).
 * @max_outstanding: descriptors in flight at most (capped at cq_entries).
 * @out: the channel.
 *
 * Return: 0, -ENOMEM, or the -errno of memfd_create, ftruncate, mmap, fcntl.
 */
int pcmd_channel_create(const struct pcmd_region_layout *lay, uint32_t max_outstanding,
			struct pcmd_channel **out);

/* Unmap, close the fds, free. */
void pcmd_channel_destroy(struct pcmd_channel *ch);

static inline uint8_t *pcmd_channel_data(const struct pcmd_channel *ch)
{
	return ch->base + ch->lay.data_off;
}

/**
 * pcmd_channel_next() - take the next submission, reserving its completion slot.
 * @ch: the channel.
 * @out: the descriptor, copied out of shared memory.
 * @why: when nothing was taken, enum pcmd_intake_stop.
 *
 * Return: 1 (taken), 0 (nothing taken, see @why), -EPROTO (the client's
 * ring indices are corrupt: it must be disconnected).
 */
int pcmd_channel_next(struct pcmd_channel *ch, struct pcmd_sqe *out, uint32_t *why);

/**
 * pcmd_channel_reserve() - reserve a completion slot for work that did not
 * come through the ring (CONNECT and ACCEPT requests).
 * @ch: the channel.
 *
 * Return: 0, -ENOBUFS (no room: the client must read its completions), -EPROTO.
 */
int pcmd_channel_reserve(struct pcmd_channel *ch);

/* Give back a reservation whose work never started. */
static inline void pcmd_channel_unreserve(struct pcmd_channel *ch)
{
	ch->reserved--;
}

/**
 * pcmd_channel_check_buffer() - is [offset, offset + len) inside the data area?
 * @ch: the channel.
 * @offset: from the start of the data area.
 * @len: bytes.
 *
 * Return: 0, -EFAULT (any byte outside, or the sum overflows).
 */
int pcmd_channel_check_buffer(const struct pcmd_channel *ch, uint64_t offset, uint64_t len);

/**
 * pcmd_channel_complete() - write one completion into a reserved slot.
 * @ch: the channel.
 * @cqe: the completion.
 *
 * Visible to the client at the next pcmd_channel_flush().
 */
void pcmd_channel_complete(struct pcmd_channel *ch, const struct pcmd_cqe *cqe);

/**
 * pcmd_channel_flush() - publish the written completions and ring the client's
 * doorbell if it sleeps; release taken submissions.
 * @ch: the channel.
 */
void pcmd_channel_flush(struct pcmd_channel *ch);

/**
 * pcmd_channel_arm() - before waiting on the submission doorbell: ask for a
 * doorbell on new submissions and, when intake stopped on a full completion
 * ring, on freed completion slots.
 * @ch: the channel.
 * @stopped: the reason intake last stopped (enum pcmd_intake_stop).
 *
 * Return: 1 if intake can go on at once (do not wait), 0 to wait, -EPROTO.
 */
int pcmd_channel_arm(struct pcmd_channel *ch, uint32_t stopped);

/* Intake stops on a full completion ring so far (any thread: the owner counts). */
static inline uint64_t pcmd_channel_cq_full_waits(const struct pcmd_channel *ch)
{
	return __atomic_load_n(&ch->cq_full_waits, __ATOMIC_RELAXED);
}

/* Reserved completion slots (outstanding work). */
static inline uint32_t pcmd_channel_outstanding(const struct pcmd_channel *ch)
{
	return ch->reserved;
}

#endif /* PCMD_CHANNEL_H */
