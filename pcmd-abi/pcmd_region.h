/* SPDX-License-Identifier: MIT */
/*
 * pcmd_region.h - the layout of a client's shared-memory region and the two
 * descriptor rings in it, shared by pcmd (channel.c) and libpcmtransport's
 * daemon backend. Header-only: both sides must agree on every byte.
 *
 * Region (one sealed memfd per client, mapped MAP_SHARED by both):
 *
 *   0          struct pcmd_region_hdr: the layout (the REGION reply's struct,
 *              echoed) and the ring indices, each index on its own cache line
 *   sq_off     submission ring: sq_entries x struct pcmd_sqe (client -> pcmd)
 *   cq_off     completion ring: cq_entries x struct pcmd_cqe (pcmd -> client)
 *   data_off   data area: data_bytes of message buffers, page-aligned
 *
 * Each ring has one producer and one consumer. The producer owns the tail,
 * the consumer the head; each side keeps its own index privately and only
 * publishes it, so a peer that scribbles over the shared copy of an index it
 * does not own changes nothing on the other side. What a side reads from the
 * peer (the peer's index, an entry) is untrusted: pcmd checks that the
 * client's tail (SQ) is at most sq_entries ahead of its head and that the
 * client's head (CQ) is at most cq_entries behind its tail, and copies every
 * descriptor out of shared memory once before checking it (no double fetch).
 *
 * Doorbells are eventfds, one per direction, rung only when the consumer said
 * it is about to sleep (PCMD_RING_WAKE in the ring's flags word), as with
 * io_uring's SQ_NEED_WAKEUP: a busy consumer costs its producer no syscall.
 * The consumer sets the flag, fences, and re-checks the ring before sleeping;
 * the producer publishes, fences, and rings if the flag was set. With both
 * fences sequentially consistent, one of them always sees the other's write,
 * so no wake-up is lost. PCMD_RING_WAKE_ALWAYS makes the producer ring after
 * every publish (a client that hands the eventfd to its own epoll loop).
 * pcmd's consumer of the submission ring is the thread that runs the
 * client's descriptor path (intake.h): the engine thread of the client's
 * region (or the softnic fabric thread). Its doorbell is that thread's own
 * eventfd, and the thread arms the flag (sets it, fences, re-checks) after it
 * announced that it sleeps and before it sleeps on that eventfd, so the
 * protocol above holds unchanged; other clients and pcmd's control requests
 * may ring the same eventfd, which costs only a spurious look.
 *
 * Backpressure: pcmd takes a submission only when the completion ring has a
 * slot reserved for its completion, so a client that stops reading
 * completions stops its own intake and costs pcmd nothing more. When pcmd is
 * held back that way it sets PCMD_RING_SPACE on the completion ring; the
 * client's next release of completions sees it and rings pcmd's doorbell.
 */
#ifndef PCMD_REGION_H
#define PCMD_REGION_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "pcmd_proto.h"

#define PCMD_REGION_MAGIC 0x4e474552444d4350ull /* "PCMDREGN" */
#define PCMD_REGION_VERSION 2 /* 2: the header's layout echo is the REGION reply's struct */
#define PCMD_REGION_ALIGN 4096u
#define PCMD_RING_MIN_ENTRIES 8u
#define PCMD_RING_MAX_ENTRIES 65536u

/* Descriptor ops; the values are pcm_tp_op's. */
enum pcmd_desc_op {
	PCMD_OP_SEND = 1,
	PCMD_OP_RECV = 2,
	PCMD_OP_ACCEPT = 3,
	PCMD_OP_CONNECT = 4,
};

/* A submission: send @len bytes at @offset of the data area on @conn_id, or
 * receive up to @len bytes there. */
struct pcmd_sqe {
	uint8_t op;	   /* PCMD_OP_SEND or PCMD_OP_RECV */
	uint8_t flags;	   /* must be 0 */
	uint16_t reserved; /* must be 0 */
	uint32_t conn_id;
	uint64_t offset; /* from the start of the data area */
	uint64_t len;	 /* send: bytes; recv: capacity */
	uint64_t cookie; /* returned in the completion */
};

/* A completion: exactly one per accepted or rejected submission, and one per
 * CONNECT or ACCEPT request. */
struct pcmd_cqe {
	uint8_t op; /* enum pcmd_desc_op */
	uint8_t flags;
	uint16_t reserved;
	int32_t status;	  /* 0 or -errno */
	uint32_t conn_id; /* ACCEPT: the new connection */
	uint32_t reserved2;
	uint64_t cookie;
	uint64_t bytes; /* sent or received */
};

#define PCMD_RING_WAKE 1u	 /* consumer sleeps: ring its doorbell once */
#define PCMD_RING_WAKE_ALWAYS 2u /* consumer polls the eventfd: ring after every publish */
#define PCMD_RING_SPACE 4u	 /* producer waits for room: the consumer rings the producer */

/* One cache line per shared index, so the two sides never share a line. */
struct pcmd_ring_word {
	_Atomic uint32_t v;
	uint8_t pad[60];
};

struct pcmd_ring_ctl {
	struct pcmd_ring_word head;  /* written by the consumer */
	struct pcmd_ring_word tail;  /* written by the producer */
	struct pcmd_ring_word flags; /* PCMD_RING_WAKE*, PCMD_RING_SPACE: set by one side, cleared
				      * by the other */
};

struct pcmd_region_hdr {
	uint64_t magic;	  /* PCMD_REGION_MAGIC */
	uint32_t version; /* PCMD_REGION_VERSION */
	uint32_t reserved;
	struct pcmd_region_layout lay; /* the layout the REGION reply carried */
	uint8_t pad[8];
	struct pcmd_ring_ctl sq;
	struct pcmd_ring_ctl cq;
};

static inline int pcmd_ring_entries_ok(uint32_t n)
{
	return n >= PCMD_RING_MIN_ENTRIES && n <= PCMD_RING_MAX_ENTRIES && (n & (n - 1)) == 0;
}

static inline uint64_t pcmd_align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/**
 * pcmd_region_layout_compute() - where the rings and the data area sit.
 * @data_bytes: size of the data area (rounded up to PCMD_REGION_ALIGN).
 * @sq_entries: submission ring entries (power of two).
 * @cq_entries: completion ring entries (power of two, >= @sq_entries).
 * @out: the layout.
 *
 * Both sides compute it; the client checks the daemon's REGION reply against it.
 *
 * Return: 0, -EINVAL (entries not a power of two in range, cq < sq, or a size
 * that does not fit in 64 bits).
 */
static inline int pcmd_region_layout_compute(uint64_t data_bytes, uint32_t sq_entries,
					     uint32_t cq_entries, struct pcmd_region_layout *out)
{
	uint64_t sq_bytes, cq_bytes;

	if (!pcmd_ring_entries_ok(sq_entries) || !pcmd_ring_entries_ok(cq_entries) ||
	    cq_entries < sq_entries || data_bytes == 0 || data_bytes > (1ull << 46))
		return -EINVAL;
	sq_bytes = (uint64_t)sq_entries * sizeof(struct pcmd_sqe);
	cq_bytes = (uint64_t)cq_entries * sizeof(struct pcmd_cqe);
	out->sq_entries = sq_entries;
	out->cq_entries = cq_entries;
	out->sq_off = pcmd_align_up(sizeof(struct pcmd_region_hdr), PCMD_REGION_ALIGN);
	out->cq_off = out->sq_off + pcmd_align_up(sq_bytes, PCMD_REGION_ALIGN);
	out->data_off = out->cq_off + pcmd_align_up(cq_bytes, PCMD_REGION_ALIGN);
	out->data_bytes = pcmd_align_up(data_bytes, PCMD_REGION_ALIGN);
	out->region_bytes = out->data_off + out->data_bytes;
	return 0;
}

/* One side's view of one ring. @local is this side's own index (the tail for a
 * producer, the head for a consumer); the shared copy is only ever written. */
struct pcmd_ring {
	struct pcmd_ring_ctl *ctl;
	uint8_t *entries;
	uint32_t mask;
	uint32_t entry_bytes;
	uint32_t local;
};

static inline void pcmd_ring_init(struct pcmd_ring *r, struct pcmd_ring_ctl *ctl, void *entries,
				  uint32_t n_entries, uint32_t entry_bytes)
{
	r->ctl = ctl;
	r->entries = entries;
	r->mask = n_entries - 1;
	r->entry_bytes = entry_bytes;
	r->local = 0;
}

static inline uint32_t pcmd_ring_size(const struct pcmd_ring *r)
{
	return r->mask + 1;
}

/**
 * pcmd_ring_used() - producer side: entries published and not yet consumed.
 * @r: the producer's view.
 *
 * Return: 0..size, or -EPROTO when the consumer's head is not within one ring
 * of the producer's tail (the peer wrote nonsense).
 */
static inline int64_t pcmd_ring_used(const struct pcmd_ring *r)
{
	uint32_t head = atomic_load_explicit(&r->ctl->head.v, memory_order_acquire);
	uint32_t used = r->local - head;

	return used > pcmd_ring_size(r) ? -EPROTO : (int64_t)used;
}

/* Producer: write one entry at the private tail; pcmd_ring_publish() shows it.
 * The caller has checked there is room. */
static inline void pcmd_ring_put(struct pcmd_ring *r, const void *entry)
{
	memcpy(r->entries + (size_t)(r->local & r->mask) * r->entry_bytes, entry, r->entry_bytes);
	r->local++;
}

/**
 * pcmd_ring_publish() - producer: make every put entry visible, and say
 * whether the consumer wants its doorbell rung.
 * @r: the producer's view.
 *
 * Return: 1 if the caller must write the consumer's eventfd, else 0.
 */
static inline int pcmd_ring_publish(struct pcmd_ring *r)
{
	uint32_t f;

	atomic_store_explicit(&r->ctl->tail.v, r->local, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	f = atomic_load_explicit(&r->ctl->flags.v, memory_order_relaxed);
	if (f & PCMD_RING_WAKE_ALWAYS)
		return 1;
	if (!(f & PCMD_RING_WAKE))
		return 0;
	f = atomic_fetch_and_explicit(&r->ctl->flags.v, ~PCMD_RING_WAKE, memory_order_relaxed);
	return (f & PCMD_RING_WAKE) != 0;
}

/**
 * pcmd_ring_avail() - consumer side: entries ready to be taken.
 * @r: the consumer's view.
 *
 * Return: 0..size, or -EPROTO when the producer's tail is more than one ring
 * ahead of the consumer's head.
 */
static inline int64_t pcmd_ring_avail(const struct pcmd_ring *r)
{
	uint32_t tail = atomic_load_explicit(&r->ctl->tail.v, memory_order_acquire);
	uint32_t n = tail - r->local;

	return n > pcmd_ring_size(r) ? -EPROTO : (int64_t)n;
}

/* Consumer: copy the entry at the private head out and step past it. The
 * caller has checked pcmd_ring_avail() > 0. */
static inline void pcmd_ring_get(struct pcmd_ring *r, void *out)
{
	memcpy(out, r->entries + (size_t)(r->local & r->mask) * r->entry_bytes, r->entry_bytes);
	r->local++;
}

/**
 * pcmd_ring_release() - consumer: hand the taken entries' slots back.
 * @r: the consumer's view.
 *
 * Return: 1 if the producer waits for room and the caller must ring the
 * producer's doorbell, else 0.
 */
static inline int pcmd_ring_release(struct pcmd_ring *r)
{
	uint32_t f;

	atomic_store_explicit(&r->ctl->head.v, r->local, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	f = atomic_load_explicit(&r->ctl->flags.v, memory_order_relaxed);
	if (!(f & PCMD_RING_SPACE))
		return 0;
	f = atomic_fetch_and_explicit(&r->ctl->flags.v, ~PCMD_RING_SPACE, memory_order_relaxed);
	return (f & PCMD_RING_SPACE) != 0;
}

/**
 * pcmd_ring_want_space() - producer: ask to be rung when the consumer frees slots.
 * @r: the producer's view.
 *
 * Return: the entries still in use (if below the size, room appeared meanwhile
 * and the caller need not wait), or -EPROTO.
 */
static inline int64_t pcmd_ring_want_space(struct pcmd_ring *r)
{
	atomic_fetch_or_explicit(&r->ctl->flags.v, PCMD_RING_SPACE, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	return pcmd_ring_used(r);
}

/**
 * pcmd_ring_arm() - consumer: ask for a doorbell before sleeping.
 * @r: the consumer's view.
 *
 * Return: the entries that arrived meanwhile (sleep only if 0), or -EPROTO.
 */
static inline int64_t pcmd_ring_arm(struct pcmd_ring *r)
{
	atomic_fetch_or_explicit(&r->ctl->flags.v, PCMD_RING_WAKE, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	return pcmd_ring_avail(r);
}

/* Consumer: ring after every publish (1) or only when armed (0). */
static inline void pcmd_ring_wake_always(struct pcmd_ring *r, int on)
{
	if (on)
		atomic_fetch_or_explicit(&r->ctl->flags.v, PCMD_RING_WAKE_ALWAYS,
					 memory_order_seq_cst);
	else
		atomic_fetch_and_explicit(&r->ctl->flags.v, ~PCMD_RING_WAKE_ALWAYS,
					  memory_order_seq_cst);
}

#endif /* PCMD_REGION_H */
