// SPDX-License-Identifier: MIT
/*
 * test_pcmc.c - `pcmc build` as a package build, on packages written with
 * the PCM SDK's constructs (tests/data): descriptions, quoted values and
 * forward references; a second C file that picks its header with
 * #ifdef BUILD_ALGO_<NAME>; a helper header from -I that hashes with xxhash,
 * linked without -l; a float variable named like a local; -D, -L, -l, $CC
 * with words and $CFLAGS; pcm's ABI headers winning over the package's; name
 * mix-ups failing at build; spec text that cannot inject C; names that
 * collide refused by `pcmc check`, and names that cannot collide any more
 * working; the --arith note; the tutorial package of pcm-handler(7).
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
#include <xxhash.h>

#include "package.h"
#include "scratch_dir.h"
#include "shell.h"

#define PCMC PCM_BUILD_ROOT "/cli/pcmc"
#define PCM_SIM PCM_BUILD_ROOT "/cli/sim/pcm-sim"
#define DATA PCM_TEST_DATA_DIR
#define CMD_MAX 4096
#define OUT_MAX 65536

static char out[OUT_MAX];

/* Run a shell command; return its exit status, with stdout and stderr in out[]. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run(const char *fmt, ...)
{
	char cmd[CMD_MAX];
	va_list ap;
	size_t n;
	FILE *p;
	int st;

	va_start(ap, fmt);
	n = (size_t)vsnprintf(cmd, sizeof(cmd) - 8, fmt, ap);
	va_end(ap);
	assert_true(n < sizeof(cmd) - 8);
	strcat(cmd, " 2>&1");
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void expect_in_output(const char *needle)
{
	if (!strstr(out, needle))
		fail_msg("expected \"%s\" in:\n%s", needle, out);
}

/* Build with `pcmc build @args -o scratch/@name.so`; fail the test if it fails. */
static const char *build_ok(const char *name, const char *env, const char *args)
{
	static char so[512];

	snprintf(so, sizeof(so), "%s/%s.so", scratch, name);
	if (run("%s %s build %s -o %s", env, PCMC, args, so) != 0)
		fail_msg("pcmc build %s failed:\n%s", args, out);
	return so;
}

/* Build DATA/@dir/@name.yaml and .c (plus @extra) and load it in a one-flow shell. */
struct loaded;
static void load(const char *so, struct loaded *l);

static void load_package(const char *dir, const char *name, const char *extra,
			 struct loaded *l)
{
	char args[1024];

	snprintf(args, sizeof(args), "%s/%s/%s.yaml %s/%s/%s.c %s", DATA, dir, name, DATA, dir,
		 name, extra);
	load(build_ok(name, "", args), l);
}

/* A loaded package in a one-flow shell. */
struct loaded {
	struct pcm_package_handle h;
	struct pcm_shell *sh;
};

static void load(const char *so, struct loaded *l)
{
	struct pcm_diag diag;
	char err[512];

	if (pcm_package_open(so, NULL, &l->h, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(pcm_shell_create(l->h.pkg, NULL, 1, 0, &l->sh, &diag), 0);
}

static void unload(struct loaded *l)
{
	pcm_shell_destroy(l->sh);
	pcm_package_close(&l->h);
}

static pcm_uint var(struct loaded *l, const char *name)
{
	const struct pcm_package *pkg = l->h.pkg;
	unsigned var_off = PCM_REC_SIGNALS_SLOT + pkg->n_signals + pkg->n_controls;

	for (uint32_t i = 0; i < pkg->n_variables; i++)
		if (strcmp(pkg->variables[i].name, name) == 0)
			return pcm_shell_record(l->sh, 0)[var_off + pkg->variables[i].slot];
	fail_msg("no variable %s", name);
	return 0;
}

static double var_float(struct loaded *l, const char *name)
{
	pcm_uint u = var(l, name);
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

static pcm_uint control(struct loaded *l, pcm_control_t type)
{
	pcm_uint v;

	assert_int_equal(pcm_shell_control(l->sh, 0, type, &v), 0);
	return v;
}

static int feed(struct loaded *l, pcm_signal_t type, pcm_uint value, pcm_uint now_ps)
{
	struct pcm_event ev = { .valid = (pcm_uint)1 << type };

	ev.values[type] = value;
	return pcm_shell_feed(l->sh, 0, &ev, now_ps);
}

static int feed2(struct loaded *l, pcm_signal_t a, pcm_uint va, pcm_signal_t b, pcm_uint vb,
		 pcm_uint now_ps)
{
	struct pcm_event ev = { .valid = ((pcm_uint)1 << a) | ((pcm_uint)1 << b) };

	ev.values[a] = va;
	ev.values[b] = vb;
	return pcm_shell_feed(l->sh, 0, &ev, now_ps);
}

static pcm_uint xxh64_of(pcm_uint v)
{
	return (pcm_uint)XXH64(&v, sizeof(v), 0);
}

/* SDK constructs ------------------------------------------------------------- */

static const char *build_tcp(const char *name, const char *extra)
{
	char args[2048];

	snprintf(args, sizeof(args),
		 "%s/sdk_tcp/%s.yaml %s/sdk_tcp/%s.c %s/sdk_tcp/tcp_shared.c -I %s/sdk_tcp/include "
		 "--target uet %s",
		 DATA, name, DATA, name, DATA, DATA, extra);
	return build_ok(name, "", args);
}

/*
 * reno_like: descriptions, a quoted value, INIT_PKTS naming a constant below
 * it, growth in tcp_shared.c, FLOW_HASH from -I include/ with xxhash.
 */
static void test_sdk_style_package_with_shared_c_file_and_helper_header_runs(void **state)
{
	struct loaded l;

	load(build_tcp("reno_like", ""), &l);
	expect_in_output("libxxhash"); /* it includes <xxhash.h>: linked without -l */
	assert_int_equal(control(&l, PCM_CTRL_CWND), 4 * 4096); /* INIT_PKTS = 2 * 2 */
	for (unsigned i = 0; i < 4; i++) /* slow start to SSTHRESH = 8 */
		assert_int_equal(feed(&l, PCM_SIG_ACK, 1, i + 1), 1);
	assert_int_equal(control(&l, PCM_CTRL_CWND), 8 * 4096);
	for (unsigned i = 0; i < 8; i++) /* one window of ACKs: +1 */
		assert_int_equal(feed(&l, PCM_SIG_ACK, 1, i + 10), 1);
	assert_int_equal(control(&l, PCM_CTRL_CWND), 9 * 4096);
	assert_int_equal(var(&l, "ACKED_TOTAL"), 0);
	assert_int_equal(var(&l, "LAST_HASH"), xxh64_of(9));
	assert_int_equal(feed(&l, PCM_SIG_NACK, 1, 100), 1);
	assert_int_equal(control(&l, PCM_CTRL_CWND), 4 * 4096);
	assert_int_equal(var(&l, "SSTHRESH"), 4);
	assert_int_equal(var(&l, "LAST_HASH"), xxh64_of(4));
	unload(&l);
}

/*
 * ecn_like keeps SSTHRESH and ACKED_TOTAL at other slots than reno_like: the
 * shared file reads them right only through ecn_like.h, which it includes
 * because pcmc defined BUILD_ALGO_ECN_LIKE. (With reno_like.h it would read
 * SSTHRESH from MARKED_CALLS, 0, and grow by one window instead of 16.)
 */
static void test_build_algo_define_selects_the_header_of_the_package_built(void **state)
{
	struct loaded l;

	load(build_tcp("ecn_like", "-D ECN_CUT_SHIFT=2"), &l);
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(feed(&l, PCM_SIG_ACK, 1, i + 1), 1);
	assert_int_equal(control(&l, PCM_CTRL_CWND), 32 * 4096);
	assert_int_equal(feed2(&l, PCM_SIG_ACK, 1, PCM_SIG_ECN, 1, 100), 1);
	assert_int_equal(control(&l, PCM_CTRL_CWND), 24 * 4096); /* 32 - 32 >> 2 */
	assert_int_equal(var(&l, "MARKED_CALLS"), 1);
	unload(&l);
	/* Without the -D the package says what it needs. */
	assert_int_equal(run("%s build %s/sdk_tcp/ecn_like.yaml %s/sdk_tcp/ecn_like.c "
			     "%s/sdk_tcp/tcp_shared.c -o %s/nope.so",
			     PCMC, DATA, DATA, DATA, scratch),
			 1);
	expect_in_output("build ecn_like with -D ECN_CUT_SHIFT=N");
}

/* The SDK's cubic: `pcm_float K = get_var_float(K);` means the variable K. */
static void test_float_variable_named_like_a_local_means_the_variable(void **state)
{
	struct loaded l;

	load_package("sdk_float_index", "float_index", "", &l);
	assert_int_equal(feed(&l, PCM_SIG_ACK, 1, 1), 1);
	assert_true(var_float(&l, "K") == 4.0); /* 2 * 1.5 + 1 */
	assert_int_equal(control(&l, PCM_CTRL_CWND), 4000);
	assert_int_equal(feed(&l, PCM_SIG_ACK, 1, 2), 1);
	assert_true(var_float(&l, "K") == 9.0);
	assert_int_equal(control(&l, PCM_CTRL_CWND), 9000);
	assert_int_equal(var(&l, "SCALE"), 1000);
	unload(&l);
}

/* Compiler flags and environment ------------------------------------------------ */

static void make_scale_library(void)
{
	assert_int_equal(run("cc -c -fPIC %s/sdk_tcp/lib/scale_helper.c -o %s/scale_helper.o && "
			     "ar rcs %s/libpcmtestscale.a %s/scale_helper.o",
			     DATA, scratch, scratch, scratch),
			 0);
}

static pcm_uint flags_probe_rate(const char *env, const char *flags)
{
	char args[1024];
	struct loaded l;
	pcm_uint rate;

	snprintf(args, sizeof(args), "%s/pkg_flags/flags_probe.yaml %s/pkg_flags/flags_probe.c %s",
		 DATA, DATA, flags);
	load(build_ok("flags_probe", env, args), &l);
	assert_int_equal(feed(&l, PCM_SIG_ACK, 1, 1), 1);
	rate = control(&l, PCM_CTRL_RATE);
	unload(&l);
	return rate;
}

static void test_build_takes_d_l_flags_cc_with_words_and_cflags(void **state)
{
	char flags[1024];

	make_scale_library();
	assert_int_equal(flags_probe_rate("", ""), 0);
	snprintf(flags, sizeof(flags), "-D FROM_D=4 -DUSE_SCALE_LIB -L %s -l pcmtestscale",
		 scratch);
	/* RATE = FROM_CC * 1000 + FROM_CFLAGS * 100 + FROM_D * 10 + 3 * 1 */
	assert_int_equal(flags_probe_rate("CC='cc -DFROM_CC=7 -Wall' "
					  "CFLAGS='-DFROM_CFLAGS=5 -Wextra'",
					  flags),
			 7543);
	assert_int_equal(flags_probe_rate("CC=cc CFLAGS=-DFROM_CFLAGS=2", "-DFROM_D=1"), 210);
}

static void test_undefined_symbols_fail_the_build_not_the_load(void **state)
{
	assert_int_equal(run("%s build %s/pkg_flags/flags_probe.yaml %s/pkg_flags/flags_probe.c "
			     "-D USE_SCALE_LIB -o %s/undef.so",
			     PCMC, DATA, DATA, scratch),
			 1);
	expect_in_output("pcm_test_scale");
	expect_in_output("the C compiler failed");
}

static void test_bad_cc_and_include_dir_are_named(void **state)
{
	char args[1024];

	snprintf(args, sizeof(args), "%s/pkg_flags/flags_probe.yaml %s/pkg_flags/flags_probe.c "
		 "-o %s/x.so", DATA, DATA, scratch);
	assert_int_equal(run("CC='no-such-compiler -O1' %s build %s", PCMC, args), 1);
	expect_in_output("cannot run the C compiler 'no-such-compiler'");
	assert_int_equal(run("CC='cc $(true)' %s build %s", PCMC, args), 1);
	expect_in_output("command substitution is not allowed");
	assert_int_equal(run("PCM_INCLUDE_DIR=/nonexistent %s build %s", PCMC, args), 1);
	expect_in_output("$PCM_INCLUDE_DIR (/nonexistent) has no pcmh.h");
	assert_int_equal(run("PCM_INCLUDE_DIR=%s/libpcm/uninstalled %s build %s", PCM_BUILD_ROOT,
			     PCMC, args),
			 0);
}

/* Files named pcm.h, pcmh.h, package.h, pcm_fx.h and shadow_abi.h beside the handler are #errors. */
static void test_pcm_abi_headers_win_over_same_named_package_files(void **state)
{
	struct loaded l;

	load_package("shadow_abi", "shadow_abi", "", &l);
	assert_int_equal(feed(&l, PCM_SIG_ACK, 3, 1), 1);
	assert_int_equal(control(&l, PCM_CTRL_CWND), 4099);
	unload(&l);
}

/* Mix-ups -------------------------------------------------------------------- */

static void expect_mixup(const char *handler, const char *message)
{
	assert_int_equal(run("%s build %s/mixup/mixup.yaml %s/mixup/%s.c -o %s/mixup.so", PCMC,
			     DATA, DATA, handler, scratch),
			 1);
	expect_in_output(message);
	expect_in_output(handler); /* the error points at the handler's line */
}

static void test_name_kind_mixups_fail_at_build_naming_the_name_and_kind(void **state)
{
	char args[1024];

	snprintf(args, sizeof(args), "%s/mixup/mixup.yaml %s/mixup/correct.c", DATA, DATA);
	build_ok("mixup_ok", "", args);
	expect_mixup("control_as_signal", "CWND_BYTES is a control, not a signal: use "
					  "get_control() or set_control()");
	expect_mixup("signal_as_control", "NUM_ECN is a signal, not a control: use get_signal(), "
					  "set_signal() or update_signal()");
	expect_mixup("float_as_uint", "GAIN is a float variable, not a uint variable: use "
				      "get_var_float() or set_var_float()");
	expect_mixup("array_as_scalar", "HIST is a uint array, not a uint variable: use "
					"get_arr_uint() or set_arr_uint()");
	expect_mixup("constant_as_variable", "MSS is a constant, not a uint variable");
}

/* Spec text and names ---------------------------------------------------------- */

static void test_spec_path_and_descriptions_cannot_inject_c(void **state)
{
	/* ?\? keeps this file's own -std=c11 build from reading a trigraph. */
	static const char want_description[] =
		"a trigraph ?\?/\" int injected_desc; /* \\ and \"quotes\", */ a ?\?= line\n"
		"break, and \xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9";
	char spec[512], so[512], err[512];
	struct pcm_package_handle h;

	/* Directories "x*" and " int injected; ", file "*y.yaml": a comment closed and reopened. */
	snprintf(spec, sizeof(spec), "%s/x*/ int injected; /*y.yaml", scratch);
	assert_int_equal(run("mkdir -p '%s/x*/ int injected; ' && cp %s/inject/inject.yaml '%s'",
			     scratch, DATA, spec),
			 0);
	snprintf(so, sizeof(so), "%s/inject.so", scratch);
	/* -std=c11: trigraphs on, so ??/ would be a backslash in an unescaped string. */
	if (run("CFLAGS='-std=c11 -Wall' %s build '%s' %s/inject/inject.c -o %s", PCMC, spec, DATA,
		so) != 0)
		fail_msg("%s", out);
	assert_int_equal(run("nm -a %s | grep -c injected", so), 1); /* grep found nothing */
	assert_string_equal(out, "0\n");
	assert_int_equal(pcm_package_open(so, NULL, &h, err, sizeof(err)), 0);
	assert_string_equal(h.pkg->description, want_description);
	assert_string_equal(h.pkg->spec_path, spec);
	pcm_package_close(&h);
}

static void test_colliding_names_are_refused_by_pcmc_check(void **state)
{
	static const struct {
		const char *spec, *message;
	} cases[] = {
		{ "libc_macro", "'EIO' is reserved: <errno.h> defines it as a macro" },
		{ "libc_type", "'uint32_t' is reserved: <stdint.h> declares or uses it" },
		{ "libc_function", "'memset' is reserved: <string.h> declares or uses it" },
		{ "compiler_macro", "'linux' is reserved: the C compiler defines it as a macro" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(run("%s check %s/collide/%s.yaml --target uet", PCMC, DATA,
				     cases[i].spec),
				 1);
		expect_in_output(cases[i].message);
		expect_in_output(":6:11: ");
	}
}

/* rec, x, fired, valid, written, now_ps, <algo>__CONTROL_COUNT: harmless now. */
static void test_names_of_generated_code_cannot_collide(void **state)
{
	struct pcm_shell_stats st;
	struct loaded l;

	load_package("collide", "generated_names", "--target uet", &l);
	assert_int_equal(feed2(&l, PCM_SIG_ACK, 2, PCM_SIG_RTT, 777, 5), 1);
	assert_int_equal(var(&l, "valid"), 2);
	assert_int_equal(var(&l, "written"), 777);
	assert_int_equal(control(&l, PCM_CTRL_CWND), 2000);
	/* More than `cur` ACKs: the handler fails and the shell says -EIO. */
	assert_int_equal(feed(&l, PCM_SIG_ACK, 5, 6), -EIO);
	pcm_shell_stats(l.sh, &st);
	assert_int_equal(st.handler_errors, 1);
	assert_int_equal(var(&l, "valid"), 7);
	assert_int_equal(var(&l, "now_ps"), 2);
	unload(&l);
}

/* --arith ---------------------------------------------------------------------- */

static void test_arith_without_pcm_fx_is_reported_as_having_no_effect(void **state)
{
	char args[1024];

	snprintf(args, sizeof(args), "%s/sdk_float_index/float_index.yaml "
		 "%s/sdk_float_index/float_index.c --arith q16.16", DATA, DATA);
	build_ok("float_index_q16", "", args);
	expect_in_output("warning: --arith q16.16 has no effect on 'float_index'");
	expect_in_output("float variables in double: K");
	snprintf(args, sizeof(args), "%s/policies/swift.yaml %s/policies/swift.c --arith q16.16",
		 PCM_SOURCE_ROOT, PCM_SOURCE_ROOT);
	build_ok("swift_q16", "", args);
	assert_null(strstr(out, "has no effect"));
	expect_in_output("float constants in double:"); /* a note, not a warning */
}

/* The tutorial of pcm-handler(7) --------------------------------------------------- */

/* Write the fenced block marked `file="@name"` in pcm-handler.7.md to scratch/@name. */
static void extract_tutorial_file(const char *name)
{
	char marker[128], line[1024], path[512];
	FILE *doc = fopen(PCM_SOURCE_ROOT "/docs/pcm-handler.7.md", "r"), *f = NULL;
	bool in_block = false, found = false;

	assert_non_null(doc);
	snprintf(marker, sizeof(marker), "file=\"%s\"}", name);
	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	while (fgets(line, sizeof(line), doc)) {
		if (in_block && strncmp(line, "```", 3) == 0) {
			in_block = false;
			fclose(f);
			f = NULL;
		} else if (in_block) {
			fputs(line, f);
		} else if (strncmp(line, "```", 3) == 0 && strstr(line, marker)) {
			in_block = found = true;
			f = fopen(path, "w");
			assert_non_null(f);
		}
	}
	fclose(doc);
	if (!found)
		fail_msg("pcm-handler.7.md has no block %s", marker);
	assert_false(in_block);
}

static void test_tutorial_package_builds_and_completes_the_incast(void **state)
{
	char args[1024];
	const char *so;

	extract_tutorial_file("first_window.yaml");
	extract_tutorial_file("first_window.c");
	snprintf(args, sizeof(args), "%s/first_window.yaml %s/first_window.c --target uet",
		 scratch, scratch);
	so = build_ok("first_window", "", args);
	assert_int_equal(run("%s %s/scenarios/incast-8.yaml --policy %s", PCM_SIM,
			     PCM_SOURCE_ROOT, so),
			 0);
	expect_in_output("8 of 8 flows completed");
	expect_in_output("handler calls");
	expect_in_output("(errors 0)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sdk_style_package_with_shared_c_file_and_helper_header_runs),
		cmocka_unit_test(test_build_algo_define_selects_the_header_of_the_package_built),
		cmocka_unit_test(test_float_variable_named_like_a_local_means_the_variable),
		cmocka_unit_test(test_build_takes_d_l_flags_cc_with_words_and_cflags),
		cmocka_unit_test(test_undefined_symbols_fail_the_build_not_the_load),
		cmocka_unit_test(test_bad_cc_and_include_dir_are_named),
		cmocka_unit_test(test_pcm_abi_headers_win_over_same_named_package_files),
		cmocka_unit_test(test_name_kind_mixups_fail_at_build_naming_the_name_and_kind),
		cmocka_unit_test(test_spec_path_and_descriptions_cannot_inject_c),
		cmocka_unit_test(test_colliding_names_are_refused_by_pcmc_check),
		cmocka_unit_test(test_names_of_generated_code_cannot_collide),
		cmocka_unit_test(test_arith_without_pcm_fx_is_reported_as_having_no_effect),
		cmocka_unit_test(test_tutorial_package_builds_and_completes_the_incast),
	};

	return cmocka_run_group_tests(tests, make_scratch, remove_scratch);
}
