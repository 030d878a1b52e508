// SPDX-License-Identifier: MIT
/*
 * test_dp_verbs_errors.c - the verbs datapath on a host without an RDMA
 * device (this machine, and CI): it is registered and complete, opening it
 * fails -ENODEV with a message that says what to do, by default and with a
 * device named, and the engine passes that message up unchanged. Its errors
 * on a real device are the rxe suite's (tests/rxe/checks/verbs-errors.sh).
 * Skips (77) on a host that has an RDMA device.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <infiniband/verbs.h>

#include "engine.h"

static int host_has_devices(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (list)
		ibv_free_device_list(list);
	return n > 0;
}

static void test_verbs_is_registered_and_complete(void **state)
{
	(void)state;
	assert_ptr_equal(xp_dp_find("verbs"), &xp_dp_verbs_ops);
	assert_int_equal(xp_dp_ops_check(&xp_dp_verbs_ops), 0);
	assert_ptr_equal(xp_dp_verbs_ops.boot, &xp_boot_tcp_ops);
	assert_non_null(strstr(xp_dp_names(), "verbs"));
}

static void test_no_device_fails_enodev_and_says_what_to_do(void **state)
{
	struct xp_dp_config cfg = { .gid_index = -1 };
	struct pcm_diag diag = { 0 };
	struct xp_dp *dp = NULL;

	(void)state;
	assert_int_equal(xp_dp_open(&xp_dp_verbs_ops, &cfg, &dp, &diag), -ENODEV);
	assert_null(dp);
	assert_non_null(strstr(diag.msg, "verbs: no RDMA device"));
	assert_non_null(strstr(diag.msg, "rdma link add rxe0 type rxe"));
	/* NULL config: the same defaults */
	memset(&diag, 0, sizeof(diag));
	assert_int_equal(xp_dp_open(&xp_dp_verbs_ops, NULL, &dp, &diag), -ENODEV);
	/* a device named: still no device at all, and the message says so first */
	cfg.device = "mlx5_0";
	assert_int_equal(xp_dp_open(&xp_dp_verbs_ops, &cfg, &dp, &diag), -ENODEV);
	assert_non_null(strstr(diag.msg, "no RDMA device"));
}

static void test_an_engine_on_verbs_passes_the_message_up(void **state)
{
	struct xp_engine_config cfg;
	struct xp_engine *e = NULL;
	struct pcm_diag diag = { 0 };

	(void)state;
	xp_engine_config_default(&cfg);
	cfg.dp_ops = &xp_dp_verbs_ops;
	cfg.progress = XP_PROGRESS_INLINE;
	assert_int_equal(xp_engine_create(&cfg, &e, &diag), -ENODEV);
	assert_null(e);
	assert_non_null(strstr(diag.msg, "verbs: no RDMA device"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verbs_is_registered_and_complete),
		cmocka_unit_test(test_no_device_fails_enodev_and_says_what_to_do),
		cmocka_unit_test(test_an_engine_on_verbs_passes_the_message_up),
	};

	if (host_has_devices()) {
		printf("SKIP: this host has an RDMA device; the rxe suite tests the errors on one\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
