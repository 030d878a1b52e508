// SPDX-License-Identifier: MIT
/*
 * test_target.c - capability descriptors: the built-in policies pass where
 * their signals and controls exist, and a package that needs a missing
 * signal or control is rejected with its name and spec location.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "builtin.h"
#include "spec.h"
#include "target.h"

static struct pcm_fabric *fabric;

static int load_fabric(void **state)
{
	struct pcm_diag diag;

	return pcm_fabric_load(PCM_SOURCE_ROOT "/policies/fabric/default.yaml", &fabric, &diag);
}

static int free_fabric(void **state)
{
	pcm_fabric_free(fabric);
	return 0;
}

static struct pcm_spec *load_policy_spec(const char *name)
{
	char path[512];
	struct pcm_spec *spec = NULL;
	struct pcm_diag diag;

	snprintf(path, sizeof(path), "%s/policies/%s.yaml", PCM_SOURCE_ROOT, name);
	if (pcm_spec_load(path, fabric, &spec, &diag) < 0)
		fail_msg("%s", diag.msg);
	return spec;
}

static void test_swift_runs_on_uet_verbs_softnic_not_doca(void **state)
{
	struct pcm_spec *spec = load_policy_spec("swift");
	struct pcm_diag diag;

	assert_int_equal(pcm_target_check_spec(pcm_target_find("uet"), spec, &diag), 0);
	assert_int_equal(pcm_target_check_spec(pcm_target_find("verbs"), spec, &diag), 0);
	assert_int_equal(pcm_target_check_spec(pcm_target_find("softnic"), spec, &diag), 0);
	assert_int_equal(pcm_target_check_spec(pcm_target_find("doca"), spec, &diag), -ENOTSUP);
	assert_non_null(strstr(diag.msg, "cannot enforce PCM_CTRL_CWND"));
	assert_non_null(strstr(diag.msg, "'CWND_BYTES'"));
	assert_non_null(strstr(diag.msg, "swift.yaml:"));
	/* DOCA also has no DATA_TX, RTO or ECN-style byte counts */
	assert_non_null(strstr(diag.msg, "PCM_SIG_DATA_TX"));
	assert_non_null(strstr(diag.msg, "PCM_SIG_RTO"));
	pcm_spec_free(spec);
}

static void test_doca_ecn_aimd_needs_cnp_which_verbs_lacks(void **state)
{
	struct pcm_spec *spec = load_policy_spec("doca_ecn_aimd");
	struct pcm_diag diag;
	char where[64];

	assert_int_equal(pcm_target_check_spec(pcm_target_find("doca"), spec, &diag), 0);
	assert_int_equal(pcm_target_check_spec(pcm_target_find("uet"), spec, &diag), 0);
	assert_int_equal(pcm_target_check_spec(pcm_target_find("verbs"), spec, &diag), -ENOTSUP);
	assert_non_null(strstr(diag.msg, "does not provide PCM_SIG_CNP"));
	assert_non_null(strstr(diag.msg, "'NUM_CNP'"));
	/* points at the `type:` value of the first signal */
	snprintf(where, sizeof(where), "doca_ecn_aimd.yaml:%u:%u: signals[0].type",
		 spec->signals[0].type_loc.line, spec->signals[0].type_loc.col);
	assert_non_null(strstr(diag.msg, where));
	assert_true(spec->signals[0].type_loc.line > 0);
	pcm_spec_free(spec);
}

static void test_builtin_packages_checked_at_load_time(void **state)
{
	struct pcm_diag diag;

	for (size_t i = 0; pcm_builtin_policies[i]; i++)
		assert_int_equal(pcm_target_check_package(pcm_target_find("reference"),
							   pcm_builtin_policies[i], &diag),
				 0);
	for (size_t i = 0; pcm_builtin_policies[i]; i++) {
		const struct pcm_package *pkg = pcm_builtin_policies[i];

		if (strcmp(pkg->name, "swift") != 0)
			continue;
		assert_int_equal(pcm_target_check_package(pcm_target_find("doca"), pkg, &diag),
				 -ENOTSUP);
		assert_non_null(strstr(diag.msg, "package 'swift'"));
		assert_non_null(strstr(diag.msg, "PCM_CTRL_CWND"));
	}
}

static void test_unknown_target_is_not_found(void **state)
{
	assert_null(pcm_target_find("infiniband9000"));
	assert_non_null(pcm_target_find("reference"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swift_runs_on_uet_verbs_softnic_not_doca),
		cmocka_unit_test(test_doca_ecn_aimd_needs_cnp_which_verbs_lacks),
		cmocka_unit_test(test_builtin_packages_checked_at_load_time),
		cmocka_unit_test(test_unknown_target_is_not_found),
	};

	return cmocka_run_group_tests(tests, load_fabric, free_fabric);
}
