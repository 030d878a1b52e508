// SPDX-License-Identifier: MIT
/*
 * test_pcmd_ring.c - the shared ring layout and operations (pcmd-abi/pcmd_region.h)
 * and pcmd's side of a channel (daemon/channel.c): FIFO order across index
 * wrap-around, corrupt peer indices detected, doorbell flags (rung only when
 * armed, or always), the producer's wait for space, the region layout and its
 * sealing, buffer bounds, and intake held back by completion-slot reservation.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "channel.h"
#include "pcmd_region.h"

struct pair {
	struct pcmd_ring_ctl ctl;
	struct pcmd_sqe slots[16];
	struct pcmd_ring prod, cons;
};

static void pair_init(struct pair *p, uint32_t start)
{
	memset(p, 0, sizeof(*p));
	pcmd_ring_init(&p->prod, &p->ctl, p->slots, 16, sizeof(struct pcmd_sqe));
	pcmd_ring_init(&p->cons, &p->ctl, p->slots, 16, sizeof(struct pcmd_sqe));
	/* Start near the 32-bit wrap so the test crosses it. */
	p->prod.local = p->cons.local = start;
	atomic_store(&p->ctl.head.v, start);
	atomic_store(&p->ctl.tail.v, start);
}

static void test_ring_is_fifo_across_index_wrap(void **state)
{
	struct pair p;
	uint64_t next_in = 0, next_out = 0;

	pair_init(&p, 0xfffffff0u);
	for (int round = 0; round < 100; round++) {
		int n = 1 + round % 16;

		for (int i = 0; i < n && pcmd_ring_used(&p.prod) < 16; i++) {
			struct pcmd_sqe e = {.cookie = next_in++};

			pcmd_ring_put(&p.prod, &e);
		}
		pcmd_ring_publish(&p.prod);
		while (pcmd_ring_avail(&p.cons) > 0) {
			struct pcmd_sqe e;

			pcmd_ring_get(&p.cons, &e);
			assert_int_equal(e.cookie, next_out++);
		}
		pcmd_ring_release(&p.cons);
	}
	assert_int_equal(next_in, next_out);
	assert_true(p.prod.local < 0xfffffff0u); /* wrapped */
}

static void test_ring_detects_peer_indices_out_of_range(void **state)
{
	struct pair p;

	pair_init(&p, 5);
	atomic_store(&p.ctl.tail.v, 5 + 17); /* a producer claiming more than the ring holds */
	assert_int_equal(pcmd_ring_avail(&p.cons), -EPROTO);
	atomic_store(&p.ctl.tail.v, 5 + 16);
	assert_int_equal(pcmd_ring_avail(&p.cons), 16);
	atomic_store(&p.ctl.tail.v, 4); /* behind the consumer */
	assert_int_equal(pcmd_ring_avail(&p.cons), -EPROTO);
	atomic_store(&p.ctl.head.v, 6); /* a consumer ahead of what was produced */
	assert_int_equal(pcmd_ring_used(&p.prod), -EPROTO);
	atomic_store(&p.ctl.head.v, 5 - 16);
	assert_int_equal(pcmd_ring_used(&p.prod), 16);
}

static void test_doorbell_only_when_consumer_sleeps_or_asks_always(void **state)
{
	struct pcmd_sqe e = {0};
	struct pair p;

	pair_init(&p, 0);
	pcmd_ring_put(&p.prod, &e);
	assert_int_equal(pcmd_ring_publish(&p.prod), 0); /* consumer busy: no doorbell */
	assert_int_equal(pcmd_ring_arm(&p.cons), 1);	 /* work already there: do not sleep */
	pcmd_ring_get(&p.cons, &e);
	pcmd_ring_release(&p.cons);
	assert_int_equal(pcmd_ring_arm(&p.cons), 0); /* empty: sleep, flag set */
	pcmd_ring_put(&p.prod, &e);
	assert_int_equal(pcmd_ring_publish(&p.prod), 1); /* ring once... */
	pcmd_ring_put(&p.prod, &e);
	assert_int_equal(pcmd_ring_publish(&p.prod), 0); /* ...not again */
	pcmd_ring_wake_always(&p.cons, 1);
	pcmd_ring_put(&p.prod, &e);
	assert_int_equal(pcmd_ring_publish(&p.prod), 1);
	pcmd_ring_put(&p.prod, &e);
	assert_int_equal(pcmd_ring_publish(&p.prod), 1);
	pcmd_ring_wake_always(&p.cons, 0);
	pcmd_ring_put(&p.prod, &e);
	assert_int_equal(pcmd_ring_publish(&p.prod), 0);
}

static void test_producer_waiting_for_space_is_rung_by_release(void **state)
{
	struct pcmd_sqe e = {0};
	struct pair p;

	pair_init(&p, 0);
	for (int i = 0; i < 16; i++)
		pcmd_ring_put(&p.prod, &e);
	pcmd_ring_publish(&p.prod);
	assert_int_equal(pcmd_ring_want_space(&p.prod), 16); /* full: wait */
	pcmd_ring_get(&p.cons, &e);
	assert_int_equal(pcmd_ring_release(&p.cons), 1); /* ring the producer once */
	pcmd_ring_get(&p.cons, &e);
	assert_int_equal(pcmd_ring_release(&p.cons), 0);
}

static void test_layout_is_page_aligned_and_rejects_bad_sizes(void **state)
{
	struct pcmd_region_layout l;

	assert_int_equal(pcmd_region_layout_compute(100, 8, 16, &l), 0);
	assert_int_equal(l.sq_off % PCMD_REGION_ALIGN, 0);
	assert_int_equal(l.cq_off % PCMD_REGION_ALIGN, 0);
	assert_int_equal(l.data_off % PCMD_REGION_ALIGN, 0);
	assert_true(l.sq_off >= sizeof(struct pcmd_region_hdr));
	assert_true(l.cq_off >= l.sq_off + 8 * sizeof(struct pcmd_sqe));
	assert_true(l.data_off >= l.cq_off + 16 * sizeof(struct pcmd_cqe));
	assert_int_equal(l.data_bytes, 4096);
	assert_int_equal(l.region_bytes, l.data_off + 4096);
	assert_int_equal(pcmd_region_layout_compute(100, 12, 16, &l), -EINVAL);
	assert_int_equal(pcmd_region_layout_compute(100, 16, 8, &l), -EINVAL);
	assert_int_equal(pcmd_region_layout_compute(100, 4, 8, &l), -EINVAL);
	assert_int_equal(pcmd_region_layout_compute(0, 8, 8, &l), -EINVAL);
	assert_int_equal(pcmd_region_layout_compute(1ull << 50, 8, 8, &l), -EINVAL);
	assert_int_equal(pcmd_region_layout_compute(100, 131072, 131072, &l), -EINVAL);
}

static struct pcmd_channel *make(uint32_t sq, uint32_t cq, uint32_t outstanding)
{
	struct pcmd_region_layout l;
	struct pcmd_channel *ch;

	assert_int_equal(pcmd_region_layout_compute(1u << 16, sq, cq, &l), 0);
	assert_int_equal(pcmd_channel_create(&l, outstanding, &ch), 0);
	return ch;
}

static void test_channel_memfd_is_sealed_and_header_written(void **state)
{
	struct pcmd_channel *ch = make(8, 16, 100);
	const struct pcmd_region_hdr *h = (const void *)ch->base;

	assert_int_equal(fcntl(ch->memfd, F_GET_SEALS) &
			     (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
			 F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	assert_int_equal(ftruncate(ch->memfd, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(h->magic, PCMD_REGION_MAGIC);
	assert_int_equal(h->version, PCMD_REGION_VERSION);
	assert_memory_equal(&h->lay, &ch->lay, sizeof(ch->lay));
	assert_int_equal(h->lay.sq_entries, 8);
	assert_int_equal(h->lay.cq_entries, 16);
	assert_int_equal(h->lay.data_bytes, 1u << 16);
	assert_int_equal(ch->max_reserved, 16); /* outstanding capped at the completion ring */
	pcmd_channel_destroy(ch);
}

static void test_buffer_bounds_are_the_data_area(void **state)
{
	struct pcmd_channel *ch = make(8, 8, 8);
	uint64_t n = ch->lay.data_bytes;

	assert_int_equal(pcmd_channel_check_buffer(ch, 0, n), 0);
	assert_int_equal(pcmd_channel_check_buffer(ch, n, 0), 0);
	assert_int_equal(pcmd_channel_check_buffer(ch, n - 1, 1), 0);
	assert_int_equal(pcmd_channel_check_buffer(ch, n, 1), -EFAULT);
	assert_int_equal(pcmd_channel_check_buffer(ch, 0, n + 1), -EFAULT);
	assert_int_equal(pcmd_channel_check_buffer(ch, UINT64_MAX, 2), -EFAULT);
	assert_int_equal(pcmd_channel_check_buffer(ch, 1, UINT64_MAX), -EFAULT);
	pcmd_channel_destroy(ch);
}

/* The client's view of a channel, through the same shared memory. */
static void client_rings(struct pcmd_channel *ch, struct pcmd_ring *sq, struct pcmd_ring *cq)
{
	struct pcmd_region_hdr *h = (struct pcmd_region_hdr *)ch->base;

	pcmd_ring_init(sq, &h->sq, ch->base + ch->lay.sq_off, ch->lay.sq_entries,
		       sizeof(struct pcmd_sqe));
	pcmd_ring_init(cq, &h->cq, ch->base + ch->lay.cq_off, ch->lay.cq_entries,
		       sizeof(struct pcmd_cqe));
}

static void test_intake_holds_back_when_completions_are_not_read(void **state)
{
	struct pcmd_channel *ch = make(8, 8, 100);
	struct pcmd_ring sq, cq;
	struct pcmd_sqe e = {.op = PCMD_OP_SEND};
	struct pcmd_cqe done = {0};
	uint32_t why;
	int taken = 0;

	client_rings(ch, &sq, &cq);
	for (int i = 0; i < 8; i++)
		pcmd_ring_put(&sq, &e);
	pcmd_ring_publish(&sq);
	while (pcmd_channel_next(ch, &e, &why) == 1) {
		taken++;
		pcmd_channel_complete(ch, &done);
	}
	pcmd_channel_flush(ch);
	assert_int_equal(taken, 8);
	/* 8 more, but the client read none of the 8 completions: nothing is taken. */
	for (int i = 0; i < 8; i++)
		pcmd_ring_put(&sq, &e);
	pcmd_ring_publish(&sq);
	assert_int_equal(pcmd_channel_next(ch, &e, &why), 0);
	assert_int_equal(why, PCMD_INTAKE_CQ_FULL);
	assert_int_equal(pcmd_channel_arm(ch, why), 0); /* wait, and asked to be rung */
	/* The client reads one: its release rings pcmd, and one more can be taken. */
	pcmd_ring_get(&cq, &done);
	assert_int_equal(pcmd_ring_release(&cq), 1);
	assert_int_equal(pcmd_channel_next(ch, &e, &why), 1);
	assert_int_equal(pcmd_channel_next(ch, &e, &why), 0);
	assert_int_equal(pcmd_channel_outstanding(ch), 1);
	pcmd_channel_destroy(ch);
}

static void test_intake_stops_at_max_outstanding(void **state)
{
	struct pcmd_channel *ch = make(8, 16, 3);
	struct pcmd_ring sq, cq;
	struct pcmd_sqe e = {.op = PCMD_OP_RECV};
	uint32_t why;

	client_rings(ch, &sq, &cq);
	for (int i = 0; i < 8; i++)
		pcmd_ring_put(&sq, &e);
	pcmd_ring_publish(&sq);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pcmd_channel_next(ch, &e, &why), 1);
	assert_int_equal(pcmd_channel_next(ch, &e, &why), 0);
	assert_int_equal(why, PCMD_INTAKE_OUTSTANDING);
	assert_int_equal(pcmd_channel_reserve(ch), -ENOBUFS);
	pcmd_channel_destroy(ch);
}

static void test_corrupt_client_indices_are_a_protocol_error(void **state)
{
	struct pcmd_channel *ch = make(8, 8, 8);
	struct pcmd_ring sq, cq;
	struct pcmd_sqe e;
	uint32_t why;

	client_rings(ch, &sq, &cq);
	atomic_store(&sq.ctl->tail.v, 9);
	assert_int_equal(pcmd_channel_next(ch, &e, &why), -EPROTO);
	atomic_store(&sq.ctl->tail.v, 1);
	atomic_store(&cq.ctl->head.v, 100); /* a completion head ahead of pcmd's tail */
	assert_int_equal(pcmd_channel_next(ch, &e, &why), -EPROTO);
	assert_int_equal(pcmd_channel_reserve(ch), -EPROTO);
	pcmd_channel_destroy(ch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ring_is_fifo_across_index_wrap),
	    cmocka_unit_test(test_ring_detects_peer_indices_out_of_range),
	    cmocka_unit_test(test_doorbell_only_when_consumer_sleeps_or_asks_always),
	    cmocka_unit_test(test_producer_waiting_for_space_is_rung_by_release),
	    cmocka_unit_test(test_layout_is_page_aligned_and_rejects_bad_sizes),
	    cmocka_unit_test(test_channel_memfd_is_sealed_and_header_written),
	    cmocka_unit_test(test_buffer_bounds_are_the_data_area),
	    cmocka_unit_test(test_intake_holds_back_when_completions_are_not_read),
	    cmocka_unit_test(test_intake_stops_at_max_outstanding),
	    cmocka_unit_test(test_corrupt_client_indices_are_a_protocol_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
