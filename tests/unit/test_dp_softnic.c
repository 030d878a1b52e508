// SPDX-License-Identifier: MIT
/*
 * test_dp_softnic.c - the softnic datapath on its own: instances on hosts of
 * an emulated fabric, writes placed byte-exact through receive keys, a
 * released key refusing a late write, control packets naming their peer,
 * send slots and records returning, and the errors that name what is wrong.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "datapath.h"
#include "softnic.h"
#include "uet.h"

struct rig {
	struct xp_softnic_world *w;
	struct xp_dp *a, *b;
	uint32_t pa, pb;       /* a's path to b, b's path from a */
	struct xp_dp_mr mr;    /* b's region */
	uint8_t dst[65536];
	uint8_t src[65536];
};

static void rig_open(struct rig *r)
{
	struct uet_scenario *scn = calloc(1, sizeof(*scn));
	struct xp_softnic_config cfg = { .seed = 3 };
	struct xp_dp_config dc = { 0 };
	struct xp_dp_path_attr attr = { 0 };
	struct xp_dp_blob ba, bb, addr;
	struct pcm_diag diag;
	uint16_t ent;
	uint32_t peer;

	memset(r, 0, sizeof(*r));
	uet_scenario_defaults(scn);
	snprintf(scn->name, sizeof(scn->name), "test");
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "none");
	scn->topo.kind = UET_TOPO_INCAST;
	scn->topo.senders = 1; /* hosts 0 and 1 */
	cfg.scn = scn;
	assert_int_equal(xp_softnic_world_create(&cfg, &r->w, &diag), 0);
	uet_scenario_free(scn); /* the world keeps its own copy */
	dc.world = r->w;
	dc.host = 0;
	assert_int_equal(xp_dp_open(&xp_dp_softnic_ops, &dc, &r->a, &diag), 0);
	dc.host = 1;
	assert_int_equal(xp_dp_open(&xp_dp_softnic_ops, &dc, &r->b, &diag), 0);
	assert_int_equal(r->a->ops->path_create(r->a, &attr, &r->pa, &ent, &ba, &diag), 0);
	assert_int_equal(r->b->ops->path_create(r->b, &attr, &r->pb, &ent, &bb, &diag), 0);
	r->b->ops->local_addr(r->b, &addr);
	assert_int_equal(r->a->ops->peer_open(r->a, &addr, &peer, &diag), 0);
	assert_int_equal(r->a->ops->path_connect(r->a, r->pa, peer, &bb, &diag), 0);
	assert_int_equal(r->b->ops->mr_reg(r->b, r->dst, sizeof(r->dst), &r->mr, &diag), 0);
}

static void rig_close(struct rig *r)
{
	xp_dp_close(r->a);
	xp_dp_close(r->b);
	xp_softnic_world_destroy(r->w);
}

/* Advance the world until @dp has an event or nothing is left; return the events polled. */
static int poll_until(struct rig *r, struct xp_dp *dp, struct xp_dp_event *ev, uint32_t max)
{
	for (int i = 0; i < 100000; i++) {
		int n = xp_dp_poll(dp, ev, max);
		uint64_t t = xp_softnic_next_event_ns(r->w);

		if (n)
			return n;
		if (t == UINT64_MAX)
			return 0;
		assert_int_equal(xp_softnic_advance(r->w, t), 0);
	}
	return 0;
}

static struct xp_write write_of(struct rig *r, uint32_t rkey, uint64_t off, uint32_t len,
				uint32_t imm)
{
	return (struct xp_write){ .path = r->pa, .rkey = rkey, .imm = imm, .len = len,
				  .laddr = (uintptr_t)r->src,
				  .raddr = (uintptr_t)r->dst + off };
}

static void test_a_write_arrives_byte_exact_through_its_receive_key(void **state)
{
	struct xp_dp_event ev[4];
	struct xp_dp_info info;
	struct xp_write w;
	struct rig r;
	uint32_t rkey;

	rig_open(&r);
	for (size_t i = 0; i < sizeof(r.src); i++)
		r.src[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(r.b->ops->recv_key(r.b, &r.mr, (uintptr_t)r.dst, 40000, &rkey), 0);
	w = write_of(&r, rkey, 0, 40000, 0x1234);
	assert_int_equal(xp_dp_post_writes(r.a, &w, 1), 1);
	memset(r.src, 0, sizeof(r.src)); /* the NIC copied it at the post */
	assert_int_equal(poll_until(&r, r.b, ev, 4), 1);
	assert_int_equal(ev[0].kind, XP_DP_EV_CHUNK);
	assert_int_equal(ev[0].imm, 0x1234);
	assert_int_equal(ev[0].len, 40000);
	assert_int_equal(ev[0].path, r.pb);
	for (size_t i = 0; i < 40000; i++)
		assert_int_equal(r.dst[i], (uint8_t)(i * 7 + 1));
	xp_dp_info(r.a, &info);
	assert_int_equal(xp_dp_send_slots(r.a), info.send_slots);
	assert_int_equal(xp_softnic_records(r.w), 0);
	rig_close(&r);
}

static void test_a_released_receive_key_refuses_a_late_write(void **state)
{
	struct xp_dp_event ev[4];
	struct xp_dp_stats st;
	struct xp_write w;
	struct rig r;
	uint32_t rkey;

	rig_open(&r);
	memset(r.src, 0xab, sizeof(r.src));
	assert_int_equal(r.b->ops->recv_key(r.b, &r.mr, (uintptr_t)r.dst, 4096, &rkey), 0);
	r.b->ops->recv_key_release(r.b, rkey);
	w = write_of(&r, rkey, 0, 4096, 1);
	assert_int_equal(xp_dp_post_writes(r.a, &w, 1), 1);
	/* beyond the key's end, with a live key */
	assert_int_equal(r.b->ops->recv_key(r.b, &r.mr, (uintptr_t)r.dst, 4096, &rkey), 0);
	w = write_of(&r, rkey, 2048, 4096, 2);
	assert_int_equal(xp_dp_post_writes(r.a, &w, 1), 1);
	assert_int_equal(poll_until(&r, r.b, ev, 4), 0);
	r.b->ops->stats(r.b, &st);
	assert_int_equal(st.writes_bad_key, 2);
	assert_int_equal(st.chunks_delivered, 0);
	for (size_t i = 0; i < sizeof(r.dst); i++)
		assert_int_equal(r.dst[i], 0);
	assert_int_equal(xp_softnic_records(r.w), 0);
	rig_close(&r);
}

static void test_control_packets_arrive_naming_their_peer(void **state)
{
	struct xp_dp_event ev[4];
	struct xp_dp_blob addr;
	struct pcm_diag diag;
	struct rig r;
	uint32_t peer, back;

	rig_open(&r);
	r.b->ops->local_addr(r.b, &addr);
	assert_int_equal(r.a->ops->peer_open(r.a, &addr, &peer, &diag), 0);
	assert_int_equal(xp_dp_post_ctrl(r.a, peer, "hello", 5), 0);
	assert_int_equal(poll_until(&r, r.b, ev, 4), 1);
	assert_int_equal(ev[0].kind, XP_DP_EV_CTRL);
	assert_int_equal(ev[0].len, 5);
	assert_memory_equal(ev[0].bytes, "hello", 5);
	back = ev[0].peer;
	/* the receiver answers through the handle it was given */
	assert_int_equal(xp_dp_post_ctrl(r.b, back, "hi", 2), 0);
	assert_int_equal(poll_until(&r, r.a, ev, 4), 1);
	assert_int_equal(ev[0].kind, XP_DP_EV_CTRL);
	assert_memory_equal(ev[0].bytes, "hi", 2);
	assert_int_equal(xp_dp_post_ctrl(r.a, 999, "x", 1), -EINVAL);
	rig_close(&r);
}

static void test_bad_requests_are_refused_naming_what_is_wrong(void **state)
{
	struct xp_dp_path_attr rc = { .rc = true };
	struct xp_dp_config dc = { 0 };
	struct xp_dp_blob blob = { .len = 3 }, out;
	struct pcm_diag diag;
	struct xp_dp *x = NULL;
	uint16_t ent;
	uint32_t path;
	struct rig r;

	rig_open(&r);
	dc.world = r.w;
	dc.host = 1;
	assert_int_equal(xp_dp_open(&xp_dp_softnic_ops, &dc, &x, &diag), -EADDRINUSE);
	assert_non_null(strstr(diag.msg, "host 1"));
	dc.host = 7;
	assert_int_equal(xp_dp_open(&xp_dp_softnic_ops, &dc, &x, &diag), -EINVAL);
	assert_non_null(strstr(diag.msg, "host 7"));
	dc.world = NULL;
	assert_int_equal(xp_dp_open(&xp_dp_softnic_ops, &dc, &x, &diag), -EINVAL);
	assert_non_null(strstr(diag.msg, "world"));
	assert_int_equal(r.a->ops->path_create(r.a, &rc, &path, &ent, &out, &diag), -EOPNOTSUPP);
	assert_non_null(strstr(diag.msg, "RC"));
	assert_int_equal(r.a->ops->path_connect(r.a, r.pa, 0, &blob, &diag), -EINVAL);
	assert_int_equal(r.b->ops->path_connect(r.b, r.pb, 0, &blob, &diag), -EINVAL);
	assert_non_null(strstr(diag.msg, "3 bytes"));
	assert_int_equal(r.a->ops->peer_open(r.a, &blob, &path, &diag), -EINVAL);
	rig_close(&r);
}

static void test_the_table_finds_softnic(void **state)
{
	assert_ptr_equal(xp_dp_find("softnic"), &xp_dp_softnic_ops);
	assert_int_equal(xp_dp_ops_check(&xp_dp_softnic_ops), 0);
	assert_non_null(strstr(xp_dp_names(), "softnic"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_write_arrives_byte_exact_through_its_receive_key),
		cmocka_unit_test(test_a_released_receive_key_refuses_a_late_write),
		cmocka_unit_test(test_control_packets_arrive_naming_their_peer),
		cmocka_unit_test(test_bad_requests_are_refused_naming_what_is_wrong),
		cmocka_unit_test(test_the_table_finds_softnic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
