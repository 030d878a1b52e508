// SPDX-License-Identifier: MIT
/*
 * test_dp_null.c - the null datapath (transport/datapath/null.c) and the
 * in-process bootstrap registry: placement through receive keys, refused
 * writes after a key's release, released key slots reused oldest first
 * (keys.c, shared with softnic), control packets between peers, the wait fd,
 * writers on another thread, and the registry's dial/answer/refuse.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "datapath.h"
#include "keys.h"

struct pair {
	struct xp_dp *a, *b;
	uint32_t peer_ab, peer_ba; /* a's handle of b, b's of a */
	uint32_t path_a, path_b;
};

static struct xp_dp *open_null(bool copy)
{
	struct xp_dp_config cfg = { .copy = copy, .recv_slots = 64 };
	struct pcm_diag diag;
	struct xp_dp *dp = NULL;

	assert_int_equal(xp_dp_open(&xp_dp_null_ops, &cfg, &dp, &diag), 0);
	return dp;
}

static void pair_open(struct pair *p, bool copy)
{
	struct xp_dp_blob addr_a, addr_b, blob_a, blob_b;
	struct xp_dp_path_attr attr = { 0 };
	struct pcm_diag diag;
	uint16_t ent;

	p->a = open_null(copy);
	p->b = open_null(copy);
	p->a->ops->local_addr(p->a, &addr_a);
	p->b->ops->local_addr(p->b, &addr_b);
	assert_int_equal(p->a->ops->peer_open(p->a, &addr_b, &p->peer_ab, &diag), 0);
	assert_int_equal(p->b->ops->peer_open(p->b, &addr_a, &p->peer_ba, &diag), 0);
	assert_int_equal(p->a->ops->path_create(p->a, &attr, &p->path_a, &ent, &blob_a, &diag), 0);
	assert_int_equal(p->b->ops->path_create(p->b, &attr, &p->path_b, &ent, &blob_b, &diag), 0);
	assert_int_equal(p->a->ops->path_connect(p->a, p->path_a, p->peer_ab, &blob_b, &diag), 0);
	assert_int_equal(p->b->ops->path_connect(p->b, p->path_b, p->peer_ba, &blob_a, &diag), 0);
}

static void pair_close(struct pair *p)
{
	xp_dp_close(p->a);
	xp_dp_close(p->b);
}

static struct xp_write write_to(const struct pair *p, const void *src, uint32_t len, uint64_t raddr,
				uint32_t rkey, uint32_t imm)
{
	struct xp_write w = { .path = p->path_a, .rkey = rkey, .imm = imm, .len = len };

	w.laddr = (uint64_t)(uintptr_t)src;
	w.raddr = raddr;
	return w;
}

/* A hot slot must not cycle alone: its generation would return after 4,095 receives. */
static void test_released_key_slots_are_reused_oldest_first(void **state)
{
	struct xp_keys t;
	uint32_t w[4], again[4];

	assert_int_equal(xp_keys_init(&t, 4), 0);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(xp_keys_alloc(&t, 0x1000u * i, 100, &w[i]), 0);
	assert_int_equal(xp_keys_alloc(&t, 0, 1, &again[0]), -ENOSPC);
	xp_keys_release(&t, w[2]);
	xp_keys_release(&t, w[0]);
	xp_keys_release(&t, w[3]);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(xp_keys_alloc(&t, 0x9000, 100, &again[i]), 0);
	/* in the order they were released, each with a new word */
	assert_int_equal(again[0] & XP_KEY_INDEX_MASK, w[2] & XP_KEY_INDEX_MASK);
	assert_int_equal(again[1] & XP_KEY_INDEX_MASK, w[0] & XP_KEY_INDEX_MASK);
	assert_int_equal(again[2] & XP_KEY_INDEX_MASK, w[3] & XP_KEY_INDEX_MASK);
	assert_int_not_equal(again[0], w[2]);
	/* an old word places nothing even though its slot is in use again */
	assert_false(xp_keys_place(&t, w[2], 0x2000, 10, NULL));
	assert_true(xp_keys_place(&t, again[0], 0x9000, 10, NULL));
	/* one release and one allocation at a time still walk every free slot */
	xp_keys_release(&t, again[1]);
	xp_keys_release(&t, again[2]);
	assert_int_equal(xp_keys_alloc(&t, 0, 1, &again[3]), 0);
	assert_int_equal(again[3] & XP_KEY_INDEX_MASK, again[1] & XP_KEY_INDEX_MASK);
	xp_keys_release(&t, again[3]);
	assert_int_equal(xp_keys_alloc(&t, 0, 1, &again[3]), 0);
	assert_int_equal(again[3] & XP_KEY_INDEX_MASK, again[2] & XP_KEY_INDEX_MASK);
	xp_keys_fini(&t);
}

static void test_write_lands_through_a_receive_key_and_is_refused_after_release(void **state)
{
	static uint8_t src[4096], dst[8192];
	struct xp_dp_mr mr_src, mr_dst;
	struct xp_dp_event ev[8];
	struct pcm_diag diag;
	struct xp_dp_stats st;
	struct pair p;
	struct xp_write w;
	uint32_t rkey;

	pair_open(&p, true);
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(p.a->ops->mr_reg(p.a, src, sizeof(src), &mr_src, &diag), 0);
	assert_int_equal(p.b->ops->mr_reg(p.b, dst, sizeof(dst), &mr_dst, &diag), 0);
	assert_int_equal(p.b->ops->recv_key(p.b, &mr_dst, (uintptr_t)dst + 1024, 4096, &rkey), 0);
	/* a key outside its region is refused */
	assert_int_equal(p.b->ops->recv_key(p.b, &mr_dst, (uintptr_t)dst + 6000, 4096, &rkey + 0) ==
				 -EINVAL,
			 1);
	assert_int_equal(p.b->ops->recv_key(p.b, &mr_dst, (uintptr_t)dst + 1024, 4096, &rkey), 0);

	w = write_to(&p, src, 4096, (uintptr_t)dst + 1024, rkey, 0x1234);
	assert_int_equal(xp_dp_post_writes(p.a, &w, 1), 1);
	assert_int_equal(xp_dp_poll(p.b, ev, 8), 1);
	assert_int_equal(ev[0].kind, XP_DP_EV_CHUNK);
	assert_int_equal(ev[0].imm, 0x1234);
	assert_int_equal(ev[0].len, 4096);
	assert_int_equal(ev[0].path, p.path_b);
	assert_memory_equal(dst + 1024, src, 4096);
	assert_int_equal(dst[1023], 0);

	/* past the key's range: refused, nothing written */
	w = write_to(&p, src, 4096, (uintptr_t)dst + 2048, rkey, 1);
	assert_int_equal(xp_dp_post_writes(p.a, &w, 1), 1);
	assert_int_equal(xp_dp_poll(p.b, ev, 8), 0);

	/* after the release a duplicate cannot land */
	memset(dst, 0, sizeof(dst));
	p.b->ops->recv_key_release(p.b, rkey);
	w = write_to(&p, src, 4096, (uintptr_t)dst + 1024, rkey, 2);
	assert_int_equal(xp_dp_post_writes(p.a, &w, 1), 1);
	assert_int_equal(xp_dp_poll(p.b, ev, 8), 0);
	assert_int_equal(dst[1024], 0);
	p.b->ops->stats(p.b, &st);
	assert_int_equal(st.writes_bad_key, 2);
	assert_int_equal(st.chunks_delivered, 1);
	assert_int_equal(st.bytes_copied, 4096);

	p.a->ops->mr_dereg(p.a, &mr_src);
	p.b->ops->mr_dereg(p.b, &mr_dst);
	pair_close(&p);
}

static void test_without_copy_only_the_event_moves(void **state)
{
	static uint8_t src[64], dst[64];
	struct xp_dp_mr mr;
	struct xp_dp_event ev[2];
	struct pcm_diag diag;
	struct pair p;
	struct xp_write w;

	pair_open(&p, false);
	memset(src, 0xab, sizeof(src));
	assert_int_equal(p.b->ops->mr_reg(p.b, dst, sizeof(dst), &mr, &diag), 0);
	w = write_to(&p, src, 64, (uintptr_t)dst, mr.rkey, 9);
	assert_int_equal(xp_dp_post_writes(p.a, &w, 1), 1);
	assert_int_equal(xp_dp_poll(p.b, ev, 2), 1);
	assert_int_equal(ev[0].len, 64);
	assert_int_equal(dst[0], 0);
	pair_close(&p);
}

static void test_a_full_receiver_holds_the_send_queue_back_without_loss(void **state)
{
	static uint8_t dst[64];
	struct xp_write w[2000];
	struct xp_dp_event ev[100];
	struct xp_dp_mr mr;
	struct pcm_diag diag;
	struct pair p;

	pair_open(&p, false);
	assert_int_equal(p.b->ops->mr_reg(p.b, dst, sizeof(dst), &mr, &diag), 0);
	for (uint32_t i = 0; i < 2000; i++)
		w[i] = write_to(&p, dst, 1, (uintptr_t)dst, mr.rkey, i);
	/* the send queue takes 1,024; the receiver's ring holds 64 of them */
	assert_int_equal(xp_dp_send_slots(p.a), 1024);
	assert_int_equal(xp_dp_post_writes(p.a, w, 2000), 1024);
	assert_int_equal(xp_dp_send_slots(p.a), 64); /* those went at once */
	assert_int_equal(xp_dp_poll(p.b, ev, 100), 64);
	for (uint32_t i = 0; i < 64; i++)
		assert_int_equal(ev[i].imm, i);
	/* the sender's next poll moves more along, in order */
	assert_int_equal(xp_dp_poll(p.a, ev, 100), 0);
	assert_int_equal(xp_dp_send_slots(p.a), 128);
	assert_int_equal(xp_dp_poll(p.b, ev, 100), 64);
	assert_int_equal(ev[0].imm, 64);
	pair_close(&p);
}

static void test_control_packets_name_their_peer_and_stay_valid_until_the_next_poll(void **state)
{
	struct xp_dp_event ev[4];
	struct pair p;
	const char *msg1 = "hello", *msg2 = "world!";

	pair_open(&p, true);
	assert_int_equal(xp_dp_post_ctrl(p.a, p.peer_ab, msg1, 5), 0);
	assert_int_equal(xp_dp_post_ctrl(p.a, p.peer_ab, msg2, 6), 0);
	assert_int_equal(xp_dp_poll(p.b, ev, 4), 2);
	assert_int_equal(ev[0].kind, XP_DP_EV_CTRL);
	assert_int_equal(ev[0].peer, p.peer_ba);
	/* more arrive while the first two are held: those stay intact */
	assert_int_equal(xp_dp_post_ctrl(p.a, p.peer_ab, "x", 1), 0);
	assert_memory_equal(ev[0].bytes, msg1, 5);
	assert_memory_equal(ev[1].bytes, msg2, 6);
	assert_int_equal(xp_dp_poll(p.b, ev, 4), 1);
	assert_int_equal(ev[0].len, 1);
	/* too long for the peer's MTU */
	{
		static uint8_t big[2048];

		assert_int_equal(xp_dp_post_ctrl(p.a, p.peer_ab, big, sizeof(big)), -EMSGSIZE);
	}
	pair_close(&p);
}

static void test_arm_refuses_with_events_pending_and_the_fd_wakes(void **state)
{
	struct xp_dp_event ev[4];
	struct pollfd pfd;
	struct pair p;

	pair_open(&p, true);
	assert_int_equal(p.b->ops->arm(p.b), 0);
	pfd = (struct pollfd){ .fd = p.b->ops->wait_fd(p.b), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(xp_dp_post_ctrl(p.a, p.peer_ab, "z", 1), 0);
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	assert_int_equal(p.b->ops->arm(p.b), -EAGAIN);
	assert_int_equal(xp_dp_poll(p.b, ev, 4), 1);
	/* the packet handed out (its slot still held) is not a pending event */
	assert_int_equal(p.b->ops->arm(p.b), 0);
	assert_int_equal(xp_dp_poll(p.b, ev, 4), 0);
	pair_close(&p);
}

struct writer {
	struct pair *p;
	uint8_t *dst;
	uint32_t rkey;
	uint32_t n;
	uint32_t send_slots; /* the queue's capacity: all free once everything left */
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	static uint8_t src[256];

	for (uint32_t i = 0; i < w->n;) {
		struct xp_write x = write_to(w->p, src, 256, (uintptr_t)w->dst, w->rkey, i);

		i += xp_dp_post_writes(w->p->a, &x, 1);
	}
	/* The send queue drains only when its owner posts or polls, as a NIC's. */
	while (xp_dp_send_slots(w->p->a) < w->send_slots) {
		struct xp_dp_event ev[4];

		(void)xp_dp_poll(w->p->a, ev, 4);
	}
	return NULL;
}

static void test_writes_from_another_thread_arrive_in_order(void **state)
{
	static uint8_t dst[256];
	struct xp_dp_event ev[64];
	struct xp_dp_mr mr;
	struct pcm_diag diag;
	struct writer w;
	struct pair p;
	pthread_t th;
	uint32_t got = 0;

	pair_open(&p, true);
	assert_int_equal(p.b->ops->mr_reg(p.b, dst, sizeof(dst), &mr, &diag), 0);
	w = (struct writer){ .p = &p, .dst = dst, .rkey = mr.rkey, .n = 20000,
			    .send_slots = xp_dp_send_slots(p.a) };
	assert_int_equal(pthread_create(&th, NULL, writer_main, &w), 0);
	while (got < w.n) {
		int k = xp_dp_poll(p.b, ev, 64);

		for (int i = 0; i < k; i++)
			assert_int_equal(ev[i].imm, got++);
	}
	pthread_join(th, NULL);
	pair_close(&p);
}

static void test_a_closed_peer_loses_writes_without_harm(void **state)
{
	static uint8_t src[16];
	struct xp_write w;
	struct pair p;

	pair_open(&p, true);
	xp_dp_close(p.b);
	w = write_to(&p, src, 16, 0, 1, 0);
	assert_int_equal(xp_dp_post_writes(p.a, &w, 1), 1);
	assert_int_equal(xp_dp_post_ctrl(p.a, p.peer_ab, "q", 1), 0);
	xp_dp_close(p.a);
}

static void test_registry_dials_answers_and_refuses(void **state)
{
	const struct xp_boot_ops *o = &xp_boot_registry_ops;
	struct xp_boot *l, *d;
	struct xp_boot_event ev[4];
	struct pcm_diag diag;

	assert_int_equal(o->create(&l, &diag), 0);
	assert_int_equal(o->create(&d, &diag), 0);
	assert_int_equal(o->listen(l, "svc", &diag), 0);
	assert_int_equal(o->listen(d, "svc", &diag), -EADDRINUSE);
	assert_non_null(strstr(diag.msg, "svc"));

	assert_int_equal(o->dial(d, "nobody", "x", 1, 5, &diag), 0);
	assert_int_equal(o->poll(d, ev, 4), 1);
	assert_int_equal(ev[0].kind, XP_BOOT_EV_ANSWERED);
	assert_int_equal(ev[0].status, -ECONNREFUSED);
	assert_int_equal(ev[0].token, 5);

	assert_int_equal(o->dial(d, "svc", "ping", 4, 7, &diag), 0);
	assert_int_equal(o->poll(l, ev, 4), 1);
	assert_int_equal(ev[0].kind, XP_BOOT_EV_INCOMING);
	assert_int_equal(ev[0].len, 4);
	assert_memory_equal(ev[0].msg, "ping", 4);
	assert_int_equal(o->answer(l, ev[0].req, 0, "pong!", 5), 0);
	assert_int_equal(o->answer(l, ev[0].req, 0, "pong!", 5), -ENOENT);
	assert_int_equal(o->poll(d, ev, 4), 1);
	assert_int_equal(ev[0].status, 0);
	assert_int_equal(ev[0].token, 7);
	assert_memory_equal(ev[0].msg, "pong!", 5);

	/* a listener that goes with a request pending refuses it */
	assert_int_equal(o->dial(d, "svc", "again", 5, 8, &diag), 0);
	o->destroy(l);
	assert_int_equal(o->poll(d, ev, 4), 1);
	assert_int_equal(ev[0].status, -ECONNREFUSED);
	assert_int_equal(ev[0].token, 8);
	o->destroy(d);
}

static void test_the_table_finds_null_and_checks_completeness(void **state)
{
	struct xp_dp_ops broken = xp_dp_null_ops;

	assert_ptr_equal(xp_dp_find("null"), &xp_dp_null_ops);
	assert_null(xp_dp_find("nosuch"));
	assert_int_equal(xp_dp_ops_check(&xp_dp_null_ops), 0);
	broken.arm = NULL;
	assert_int_equal(xp_dp_ops_check(&broken), -EINVAL);
	assert_non_null(strstr(xp_dp_names(), "null"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_lands_through_a_receive_key_and_is_refused_after_release),
		cmocka_unit_test(test_released_key_slots_are_reused_oldest_first),
		cmocka_unit_test(test_without_copy_only_the_event_moves),
		cmocka_unit_test(test_a_full_receiver_holds_the_send_queue_back_without_loss),
		cmocka_unit_test(
			test_control_packets_name_their_peer_and_stay_valid_until_the_next_poll),
		cmocka_unit_test(test_arm_refuses_with_events_pending_and_the_fd_wakes),
		cmocka_unit_test(test_writes_from_another_thread_arrive_in_order),
		cmocka_unit_test(test_a_closed_peer_loses_writes_without_harm),
		cmocka_unit_test(test_registry_dials_answers_and_refuses),
		cmocka_unit_test(test_the_table_finds_null_and_checks_completeness),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
