// SPDX-License-Identifier: MIT
/*
 * test_codegen.c - what pcmc emits and builds: the accessor header's
 * offsets, bits and indices; shared objects built by `pcmc build` in every
 * arithmetic, loaded and run; and pcmc's rejections (capability check, bad
 * spec) with their messages and exit codes.
 */
#include <errno.h>
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

#include "builtin.h"
#include "codegen.h"
#include "package.h"
#include "scratch_dir.h"
#include "shell.h"
#include "test_util.h"

#define PCMC PCM_BUILD_ROOT "/cli/pcmc"
#define FABRIC PCM_SOURCE_ROOT "/policies/fabric/default.yaml"


static const char small_spec[] = "algorithm:\n"
				 "  name: small\n"
				 "constants:\n"
				 "  - name: TWICE_MSS\n"
				 "    type: uint\n"
				 "    value: !eval \"2 * FABRIC_LINK_MSS\"\n"
				 "signals:\n"
				 "  - name: A\n"
				 "    type: PCM_SIG_ACK\n"
				 "    accumulation: PCM_SIG_ACCUM_SUM\n"
				 "    trigger_threshold: 1\n"
				 "  - name: B\n"
				 "    type: PCM_SIG_RTT\n"
				 "    accumulation: PCM_SIG_ACCUM_LAST\n"
				 "controls:\n"
				 "  - name: C0\n"
				 "    type: PCM_CTRL_RATE\n"
				 "  - name: C1\n"
				 "    type: PCM_CTRL_CWND\n"
				 "variables:\n"
				 "  - name: V0\n"
				 "    type: float\n"
				 "  - name: ARR\n"
				 "    type: uint\n"
				 "    arr_len: 4\n"
				 "  - name: V1\n"
				 "    type: int\n";

static char *render_header(enum pcm_arith arith)
{
	struct pcm_codegen_opts opts = { .arith = arith, .symbol = "pcm_pkg_small" };
	struct pcm_fabric *fabric;
	struct pcm_spec *spec;
	struct pcm_diag diag;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(pcm_fabric_load(FABRIC, &fabric, &diag), 0);
	if (pcm_spec_parse("small.yaml", small_spec, sizeof(small_spec) - 1, fabric, &spec,
			   &diag) < 0)
		fail_msg("%s", diag.msg);
	f = open_memstream(&buf, &len);
	assert_int_equal(pcm_codegen_header(spec, fabric, &opts, f), 0);
	fclose(f);
	pcm_spec_free(spec);
	pcm_fabric_free(fabric);
	return buf;
}

static void test_header_places_signals_controls_variables_at_fixed_offsets(void **state)
{
	char *h = render_header(PCM_ARITH_KIND_DOUBLE);

	assert_non_null(strstr(h, "#define MASK_OFFSET 0\n"));
	assert_non_null(strstr(h, "#define SET_SIGNAL_MASK_OFFSET 1\n"));
	assert_non_null(strstr(h, "#define SIGNAL_OFFSET 2\n"));
	assert_non_null(strstr(h, "#define CONTROL_OFFSET 4\n"));
	assert_non_null(strstr(h, "#define VAR_OFFSET 6\n"));
	assert_non_null(strstr(h, "#define PCM_HANDLER_SLOTS 12\n"));
	assert_non_null(strstr(h, "\tA = 1 << 0,\n\tB = 1 << 1,\n"));
	assert_non_null(strstr(h, "\tC0 = 0,\n\tC1 = 1,\n"));
	assert_non_null(strstr(h, "\tV0 = 0,\n\tARR = 1,\n\tV1 = 5,\n"));
	/* What the accessors paste names onto, one prefix per kind and type. */
	assert_non_null(strstr(h, "\tpcm_sig_A = 0,\n\tpcm_sig_B = 1,\n"));
	assert_non_null(strstr(h, "\tpcm_ctl_C0 = 0,\n\tpcm_ctl_C1 = 1,\n"));
	assert_non_null(strstr(h, "\tpcm_var_f_V0 = 0,\n\tpcm_arr_u_ARR = 1,\n\tpcm_var_i_V1 = 5,\n"));
	/* Values, not the spec's expression text. */
	assert_non_null(strstr(h, "#define TWICE_MSS ((pcm_uint)UINT64_C(8192))\n"));
	assert_non_null(strstr(h, "#define FABRIC_LINK_MSS ((pcm_int)INT64_C(4096))\n"));
	assert_null(strstr(h, "2 * FABRIC_LINK_MSS"));
	assert_non_null(strstr(h, "#define PCM_ARITH_DOUBLE 1"));
	assert_non_null(strstr(h, "#define PCM_HANDLER_ENTRY pcm_pkg_small_main"));
	free(h);
}

static void test_header_selects_requested_arithmetic(void **state)
{
	char *h = render_header(PCM_ARITH_KIND_Q16_16);

	assert_non_null(strstr(h, "#define PCM_ARITH_Q16_16 1"));
	assert_null(strstr(h, "#define PCM_ARITH_DOUBLE"));
	free(h);
}

static void test_arith_names_round_trip(void **state)
{
	enum pcm_arith a;

	for (int i = 0; i < PCM_ARITH_KIND_COUNT; i++) {
		assert_int_equal(pcm_arith_parse(pcm_arith_name((enum pcm_arith)i), &a), 0);
		assert_int_equal(a, i);
	}
	assert_int_equal(pcm_arith_parse("q8.8", &a), -EINVAL);
}

static void build_swift(const char *arith, char *so, size_t so_len)
{
	char cmd[1024], out[4096];

	snprintf(so, so_len, "%s/swift-%s.so", scratch, arith);
	snprintf(cmd, sizeof(cmd),
		 "%s build %s/policies/swift.yaml %s/policies/swift.c --fabric %s --arith %s "
		 "--target uet -o %s",
		 PCMC, PCM_SOURCE_ROOT, PCM_SOURCE_ROOT, FABRIC, arith, so);
	if (tu_run(cmd, out, sizeof(out)) != 0)
		fail_msg("pcmc build failed:\n%s", out);
	assert_non_null(strstr(out, "pcmc: built 'swift'"));
}

static void feed_acks(struct pcm_shell *sh, unsigned n, uint64_t rtt_ns)
{
	struct pcm_event ev = { .valid = (1u << PCM_SIG_ACK) | (1u << PCM_SIG_DATA_TX) |
					 (1u << PCM_SIG_RTT) };

	ev.values[PCM_SIG_ACK] = 1;
	ev.values[PCM_SIG_DATA_TX] = 4096;
	ev.values[PCM_SIG_RTT] = rtt_ns * 1000;
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(pcm_shell_feed(sh, 0, &ev, (uint64_t)(i + 1) * 1000000), 1);
}

static pcm_uint cwnd_after(const struct pcm_package *pkg, unsigned low, unsigned high)
{
	struct pcm_shell *sh;
	struct pcm_diag diag;
	pcm_uint cwnd;

	assert_int_equal(pcm_shell_create(pkg, pcm_target_find("uet"), 1, 0, &sh, &diag), 0);
	feed_acks(sh, low, 15000);
	feed_acks(sh, high, 90000);
	assert_int_equal(pcm_shell_control(sh, 0, PCM_CTRL_CWND, &cwnd), 0);
	pcm_shell_destroy(sh);
	return cwnd;
}

static void test_pcmc_build_shared_object_matches_builtin(void **state)
{
	struct pcm_package_handle so, builtin;
	char path[512], err[512];

	build_swift("double", path, sizeof(path));
	assert_int_equal(pcm_package_open(path, NULL, &so, err, sizeof(err)), 0);
	assert_int_equal(pcm_package_open("swift", pcm_builtin_policies, &builtin, err,
					  sizeof(err)),
			 0);
	assert_string_equal(so.pkg->name, "swift");
	assert_string_equal(so.pkg->arith, "double");
	assert_int_equal(so.pkg->record_slots, builtin.pkg->record_slots);
	assert_int_equal(cwnd_after(so.pkg, 300, 200), cwnd_after(builtin.pkg, 300, 200));
	pcm_package_close(&so);
}

static void test_pcmc_builds_every_fixed_point_format(void **state)
{
	static const char *const formats[] = { "q42.22", "q32.32", "q16.16" };
	struct pcm_package_handle h;
	char path[512], err[512];
	struct pcm_package_handle ref;
	pcm_uint ref_cwnd;

	assert_int_equal(pcm_package_open("swift", pcm_builtin_policies, &ref, err, sizeof(err)),
			 0);
	ref_cwnd = cwnd_after(ref.pkg, 300, 200);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		pcm_uint cwnd;

		build_swift(formats[i], path, sizeof(path));
		assert_int_equal(pcm_package_open(path, NULL, &h, err, sizeof(err)), 0);
		assert_string_equal(h.pkg->arith, formats[i]);
		cwnd = cwnd_after(h.pkg, 300, 200);
		print_message("swift %s: cwnd %llu bytes (double: %llu)\n", formats[i],
			      (unsigned long long)cwnd, (unsigned long long)ref_cwnd);
		/* within the fabric's window clamp, and near the double result */
		assert_true(cwnd >= 4150 && cwnd <= 262926);
		if (strcmp(formats[i], "q16.16") != 0)
			assert_true(cwnd > ref_cwnd - ref_cwnd / 100 && cwnd < ref_cwnd + ref_cwnd / 100);
		pcm_package_close(&h);
	}
}

static void test_pcmc_rejects_package_missing_target_control(void **state)
{
	char cmd[1024], out[4096];

	snprintf(cmd, sizeof(cmd),
		 "%s build %s/policies/swift.yaml %s/policies/swift.c --target doca -o %s/x.so",
		 PCMC, PCM_SOURCE_ROOT, PCM_SOURCE_ROOT, scratch);
	assert_int_equal(tu_run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "target 'doca' cannot enforce PCM_CTRL_CWND"));
	assert_non_null(strstr(out, "swift.yaml:"));
	snprintf(cmd, sizeof(cmd), "%s/x.so", scratch);
	assert_int_equal(access(cmd, F_OK), -1);
	snprintf(cmd, sizeof(cmd), "%s check %s/policies/doca_ecn_aimd.yaml --target verbs", PCMC,
		 PCM_SOURCE_ROOT);
	assert_int_equal(tu_run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "does not provide PCM_SIG_CNP"));
	snprintf(cmd, sizeof(cmd), "%s check %s/policies/doca_ecn_aimd.yaml --target doca", PCMC,
		 PCM_SOURCE_ROOT);
	assert_int_equal(tu_run(cmd, out, sizeof(out)), 0);
}

static void test_pcmc_reports_bad_spec_with_location(void **state)
{
	char spec[512], cmd[1024], out[4096];
	FILE *f;

	snprintf(spec, sizeof(spec), "%s/bad.yaml", scratch);
	f = fopen(spec, "w");
	assert_non_null(f);
	fputs("algorithm:\n  name: bad\nsignals:\n  - name: X\n    type: PCM_SIG_AKC\n"
	      "    accumulation: PCM_SIG_ACCUM_SUM\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s build %s %s/policies/swift.c -o %s/bad.so", PCMC, spec,
		 PCM_SOURCE_ROOT, scratch);
	assert_int_equal(tu_run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "bad.yaml:5:"));
	assert_non_null(strstr(out, "PCM_SIG_AKC"));
	snprintf(cmd, sizeof(cmd), "%s build %s/policies/swift.yaml %s/policies/swift.c "
		 "--arith q8.8 -o %s/bad.so", PCMC, PCM_SOURCE_ROOT, PCM_SOURCE_ROOT, scratch);
	assert_int_equal(tu_run(cmd, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "unknown arithmetic 'q8.8'"));
}

static void test_pcmc_reports_handler_compile_errors(void **state)
{
	char handler[512], cmd[1024], out[8192];
	FILE *f;

	snprintf(handler, sizeof(handler), "%s/broken.c", scratch);
	f = fopen(handler, "w");
	assert_non_null(f);
	fputs("#include \"swift.h\"\n#include \"pcmh.h\"\n"
	      "int algorithm_main() { return get_signal(NO_SUCH_SIGNAL); }\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s build %s/policies/swift.yaml %s -o %s/broken.so", PCMC,
		 PCM_SOURCE_ROOT, handler, scratch);
	assert_int_equal(tu_run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "NO_SUCH_SIGNAL"));
	assert_non_null(strstr(out, "the C compiler failed"));
}

static void test_package_open_rejects_non_packages(void **state)
{
	struct pcm_package_handle h;
	char err[512], path[512];
	FILE *f;

	assert_int_equal(pcm_package_open("/nonexistent/x.so", NULL, &h, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/x.so"));
	assert_int_equal(pcm_package_open("nosuchpolicy", pcm_builtin_policies, &h, err,
					  sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "nosuchpolicy"));
	snprintf(path, sizeof(path), "%s/garbage.so", scratch);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	assert_int_equal(pcm_package_open(path, NULL, &h, err, sizeof(err)), -ELIBBAD);
	assert_non_null(strstr(err, "garbage.so"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_places_signals_controls_variables_at_fixed_offsets),
		cmocka_unit_test(test_header_selects_requested_arithmetic),
		cmocka_unit_test(test_arith_names_round_trip),
		cmocka_unit_test(test_pcmc_build_shared_object_matches_builtin),
		cmocka_unit_test(test_pcmc_builds_every_fixed_point_format),
		cmocka_unit_test(test_pcmc_rejects_package_missing_target_control),
		cmocka_unit_test(test_pcmc_reports_bad_spec_with_location),
		cmocka_unit_test(test_pcmc_reports_handler_compile_errors),
		cmocka_unit_test(test_package_open_rejects_non_packages),
	};

	return cmocka_run_group_tests(tests, make_scratch, remove_scratch);
}
