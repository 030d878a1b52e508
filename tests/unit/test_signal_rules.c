// SPDX-License-Identifier: MIT
/*
 * test_signal_rules.c - spec rules about signals that would otherwise fail
 * silently:
 *   - a MIN signal left at initial value 0 never changes: the loader
 *     rejects it, naming the file, line and column of the key at fault;
 *   - DELTA is computed mod 2^64, so on a signal that can decrease (LAST,
 *     MIN, IN_FLIGHT) a decrease fires `>= T`: `pcmc check` warns, with the
 *     location, and points at MAGNITUDE; the pipeline really does wrap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "codegen.h"
#include "shell.h"
#include "spec.h"
#include "test_util.h"

#define PCMC PCM_BUILD_ROOT "/cli/pcmc"

static int load(const char *yaml, struct pcm_diag *diag)
{
	struct pcm_spec *spec = NULL;
	int rc = pcm_spec_parse("x.yaml", yaml, strlen(yaml), NULL, &spec, diag);

	pcm_spec_free(spec);
	return rc;
}

static void test_min_signal_from_zero_is_rejected_at_its_key(void **state)
{
	static const char explicit_zero[] = "algorithm:\n  name: m\nsignals:\n"
					    "  - name: RTT_MIN\n    type: PCM_SIG_RTT\n"
					    "    accumulation: PCM_SIG_ACCUM_MIN\n"
					    "    initial_value: 0\n";
	static const char default_zero[] = "algorithm:\n  name: m\nsignals:\n"
					   "  - name: RTT_MIN\n    type: PCM_SIG_RTT\n"
					   "    accumulation: PCM_SIG_ACCUM_MIN\n";
	static const char from_max[] = "algorithm:\n  name: m\nsignals:\n"
				       "  - name: RTT_MIN\n    type: PCM_SIG_RTT\n"
				       "    accumulation: PCM_SIG_ACCUM_MIN\n"
				       "    initial_value: 0xFFFFFFFFFFFFFFFF\n";
	struct pcm_diag diag;

	assert_int_equal(load(explicit_zero, &diag), -EINVAL);
	assert_non_null(strstr(diag.msg, "x.yaml:7:20: signals[0].initial_value:"));
	assert_non_null(strstr(diag.msg, "'RTT_MIN'"));
	assert_int_equal(load(default_zero, &diag), -EINVAL);
	assert_non_null(strstr(diag.msg, "x.yaml:6:19: signals[0].accumulation:"));
	assert_int_equal(load(from_max, &diag), 0);
}

static void check_spec(const char *yaml, char *out, size_t out_len)
{
	char path[] = "/tmp/pcm-delta-XXXXXX.yaml", cmd[1024];
	int fd = mkstemps(path, 5);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s check %s --target reference", PCMC, path);
	assert_int_equal(tu_run(cmd, out, out_len), 0);
	unlink(path);
}

static void test_pcmc_check_warns_of_delta_on_a_signal_that_can_decrease(void **state)
{
	static const char in_flight[] = "algorithm:\n  name: d\nsignals:\n"
					"  - name: INF\n    type: PCM_SIG_IN_FLIGHT\n"
					"    accumulation: PCM_SIG_ACCUM_SUM\n"
					"    trigger_type: PCM_SIG_TRIGGER_DELTA\n"
					"    trigger_threshold: 10\n";
	static const char last[] = "algorithm:\n  name: d\nsignals:\n"
				   "  - name: OTHER\n    type: PCM_SIG_ACK\n"
				   "    accumulation: PCM_SIG_ACCUM_SUM\n"
				   "  - name: RTT\n    type: PCM_SIG_RTT\n"
				   "    accumulation: PCM_SIG_ACCUM_LAST\n"
				   "    trigger_type: PCM_SIG_TRIGGER_DELTA\n"
				   "    trigger_threshold: 10\n";
	static const char growing[] = "algorithm:\n  name: d\nsignals:\n"
				      "  - name: BYTES\n    type: PCM_SIG_DATA_TX\n"
				      "    accumulation: PCM_SIG_ACCUM_SUM\n"
				      "    trigger_type: PCM_SIG_TRIGGER_DELTA\n"
				      "    trigger_threshold: 10\n";
	static const char magnitude[] = "algorithm:\n  name: d\nsignals:\n"
					"  - name: RTT\n    type: PCM_SIG_RTT\n"
					"    accumulation: PCM_SIG_ACCUM_LAST\n"
					"    trigger_type: PCM_SIG_TRIGGER_MAGNITUDE\n"
					"    trigger_threshold: 10\n";
	char out[4096];

	check_spec(in_flight, out, sizeof(out));
	assert_non_null(strstr(out, ":4:5: signals[0] 'INF': warning: DELTA trigger"));
	assert_non_null(strstr(out, "PCM_SIG_TRIGGER_MAGNITUDE"));
	check_spec(last, out, sizeof(out));
	assert_non_null(strstr(out, ":7:5: signals[1] 'RTT': warning"));
	assert_non_null(strstr(out, "PCM_SIG_ACCUM_LAST"));
	check_spec(growing, out, sizeof(out));
	assert_null(strstr(out, "warning"));
	check_spec(magnitude, out, sizeof(out));
	assert_null(strstr(out, "warning"));
}

/* What the warning is about: IN_FLIGHT from 100 down to 99 fires DELTA >= 10, as in the SDK's VM. */
extern const struct pcm_package pcm_pkg_trigger_probe;

static void test_delta_of_a_decrease_wraps_and_fires(void **state)
{
	struct pcm_shell *sh;
	struct pcm_diag diag;
	struct pcm_event ev = { .valid = (pcm_uint)1 << PCM_SIG_DATA_TX };
	const struct pcm_package *pkg = &pcm_pkg_trigger_probe;
	pcm_uint *rec;
	int delta = -1;

	for (uint32_t i = 0; i < pkg->n_signals; i++)
		if (strcmp(pkg->signals[i].name, "T_DELTA") == 0)
			delta = (int)i;
	assert_true(delta >= 0);
	assert_int_equal(pcm_shell_create(pkg, NULL, 1, 0, &sh, &diag), 0);
	rec = pcm_shell_record(sh, 0);
	/* T_DELTA is a SUM of DATA_TX with DELTA >= 10; a handler write lowers it below its reference */
	ev.values[PCM_SIG_DATA_TX] = 12;
	assert_int_equal(pcm_shell_feed(sh, 0, &ev, 1), 1);
	assert_true(rec[PCM_REC_MASK_SLOT] & ((pcm_uint)1 << delta));
	rec[PCM_REC_SIGNALS_SLOT + delta] -= 1; /* as update_signal(T_DELTA, -1) would */
	ev.values[PCM_SIG_DATA_TX] = 0;
	assert_int_equal(pcm_shell_feed(sh, 0, &ev, 2), 1);
	assert_true(rec[PCM_REC_MASK_SLOT] & ((pcm_uint)1 << delta));
	pcm_shell_destroy(sh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_min_signal_from_zero_is_rejected_at_its_key),
		cmocka_unit_test(test_pcmc_check_warns_of_delta_on_a_signal_that_can_decrease),
		cmocka_unit_test(test_delta_of_a_decrease_wraps_and_fires),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
