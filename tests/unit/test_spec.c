// SPDX-License-Identifier: MIT
/*
 * test_spec.c - the spec and fabric profile loaders, and the !eval expression
 * evaluator behind them: every field of a valid spec, every documented error
 * with its file:line:col and key, the limits, and the evaluator's C semantics.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../libpcm/expr.h"
#include "pcm/spec.h"

#define DATA(path) PCM_TEST_DATA_DIR "/" path
#define HEAD "algorithm:\n  name: x\n" /* two lines */

static struct pcm_fabric *fabric; /* tests/data/fabric/default.yaml */
static struct pcm_spec sentinel_spec;
#define SENTINEL (&sentinel_spec)

static int load_fabric(void **state)
{
	struct pcm_diag diag;

	(void)state;
	if (pcm_fabric_load(DATA("fabric/default.yaml"), &fabric, &diag)) {
		fprintf(stderr, "cannot load the default fabric: %s\n", diag.msg);
		return -1;
	}
	return 0;
}

static int free_fabric(void **state)
{
	(void)state;
	pcm_fabric_free(fabric);
	return 0;
}

/* Fails the test, showing the message, unless it starts with @prefix and contains @needle. */
static void check_diag(const char *msg, const char *prefix, const char *needle)
{
	bool ok = strncmp(msg, prefix, strlen(prefix)) == 0 && (!needle || strstr(msg, needle));

	if (!ok) {
		print_error("diagnostic: %s\nexpected prefix: %s\nand: %s\n", msg, prefix,
			    needle ? needle : "(nothing)");
		fail();
	}
}

static struct pcm_spec *parse_ok(const char *yaml)
{
	struct pcm_spec *spec = NULL;
	struct pcm_diag diag;
	int ret = pcm_spec_parse("x.yaml", yaml, strlen(yaml), fabric, &spec, &diag);

	if (ret) {
		print_error("unexpected error %d: %s\n", ret, diag.msg);
		fail();
	}
	assert_non_null(spec);
	return spec;
}

/* The spec must fail with -EINVAL, leave the out pointer alone, and say @prefix ... @needle. */
static void expect_error(const char *yaml, const char *prefix, const char *needle)
{
	struct pcm_spec *spec = SENTINEL;
	struct pcm_diag diag;
	int ret = pcm_spec_parse("x.yaml", yaml, strlen(yaml), fabric, &spec, &diag);

	if (ret != -EINVAL)
		print_error("returned %d: %s\n", ret, diag.msg);
	assert_int_equal(ret, -EINVAL);
	assert_ptr_equal(spec, SENTINEL);
	check_diag(diag.msg, prefix, needle);
}

static void expect_fabric_error(const char *yaml, const char *prefix, const char *needle)
{
	struct pcm_fabric *f = (struct pcm_fabric *)SENTINEL;
	struct pcm_diag diag;
	int ret = pcm_fabric_parse("f.yaml", yaml, strlen(yaml), &f, &diag);

	if (ret != -EINVAL)
		print_error("returned %d: %s\n", ret, diag.msg);
	assert_int_equal(ret, -EINVAL);
	assert_ptr_equal(f, (struct pcm_fabric *)SENTINEL);
	check_diag(diag.msg, prefix, needle);
}

static const struct pcm_fabric_entry *fabric_entry(const struct pcm_fabric *f, const char *name)
{
	for (unsigned i = 0; i < f->n_entries; i++) {
		if (strcmp(f->entries[i].name, name) == 0)
			return &f->entries[i];
	}
	fail_msg("no fabric entry %s", name);
	return NULL;
}

static void assert_loc(struct pcm_srcloc loc, unsigned line, unsigned col)
{
	assert_int_equal(loc.line, line);
	assert_int_equal(loc.col, col);
}

/* A valid spec --------------------------------------------------------------- */

static void test_full_spec_constants_keep_c_text_and_value(void **state)
{
	struct pcm_spec *spec = NULL;
	struct pcm_diag diag;
	const struct pcm_spec_constant *c;
	double min_cwnd = 4150, max_cwnd = 262926;

	(void)state;
	assert_int_equal(pcm_spec_load(DATA("spec/full.yaml"), fabric, &spec, &diag), 0);
	assert_string_equal(spec->path, DATA("spec/full.yaml"));
	assert_string_equal(spec->name, "full_probe");
	assert_string_equal(spec->description, "every spec feature");
	assert_int_equal(spec->n_constants, 7);
	c = spec->constants;

	assert_string_equal(c[0].name, "AI");
	assert_int_equal(c[0].type, PCM_NUM_FLOAT);
	assert_string_equal(c[0].value.c_expr, "1.0");
	assert_int_equal(c[0].value.num.type, PCM_NUM_FLOAT);
	assert_true(c[0].value.num.f == 1.0);
	assert_loc(c[0].loc, 8, 5);
	assert_loc(c[0].value.loc, 10, 12);

	assert_string_equal(c[1].value.c_expr, "FABRIC_LINK_MSS");
	assert_int_equal(c[1].value.num.type, PCM_NUM_UINT);
	assert_int_equal(c[1].value.num.u, 4096);

	assert_string_equal(c[3].name, "FS_ALPHA");
	assert_string_equal(c[3].value.c_expr, "(FS_RANGE / ((1.0 / sqrt(FABRIC_MIN_CWND)) - "
					       "(1.0 / sqrt(FABRIC_MAX_CWND))))");
	assert_true(fabs(c[3].value.num.f - 5.0 / (1 / sqrt(min_cwnd) - 1 / sqrt(max_cwnd))) <
		    1e-9);

	assert_string_equal(c[4].value.c_expr, "0xff");
	assert_int_equal(c[4].value.num.u, 255);
	assert_string_equal(c[5].value.c_expr, "(-3)");
	assert_int_equal(c[5].value.num.type, PCM_NUM_INT);
	assert_int_equal(c[5].value.num.i, -3);
	assert_string_equal(c[6].value.c_expr, "(PCM_RATE_ONE / 2)");
	assert_int_equal(c[6].value.num.u, PCM_RATE_ONE / 2);
	pcm_spec_free(spec);
}

static void test_full_spec_signals_have_every_field(void **state)
{
	struct pcm_spec *spec = NULL;
	struct pcm_diag diag;
	const struct pcm_spec_signal *s;

	(void)state;
	assert_int_equal(pcm_spec_load(DATA("spec/full.yaml"), fabric, &spec, &diag), 0);
	assert_int_equal(spec->n_signals, 5);
	s = spec->signals;

	assert_string_equal(s[0].name, "NUM_ACK");
	assert_int_equal(s[0].type, PCM_SIG_ACK);
	assert_int_equal(s[0].accum, PCM_SIG_ACCUM_SUM);
	assert_int_equal(s[0].trigger, PCM_SIG_TRIGGER_RAW);
	assert_int_equal(s[0].op, PCM_TRIG_OP_GE);
	assert_string_equal(s[0].threshold.c_expr, "1");
	assert_int_equal(s[0].threshold.num.u, 1);
	assert_true(s[0].reset_upon_trigger);
	assert_string_equal(s[0].initial.c_expr, "0");
	assert_int_equal(s[0].initial.num.u, 0);
	assert_loc(s[0].loc, 30, 5);
	assert_loc(s[0].type_loc, 31, 11);

	assert_int_equal(s[1].type, PCM_SIG_RTT);
	assert_int_equal(s[1].accum, PCM_SIG_ACCUM_MIN);
	assert_int_equal(s[1].trigger, PCM_SIG_TRIGGER_DELTA);
	assert_int_equal(s[1].op, PCM_TRIG_OP_LT);
	assert_string_equal(s[1].threshold.c_expr, "FABRIC_BRTT");
	assert_int_equal(s[1].threshold.num.u, 14022720);
	assert_false(s[1].reset_upon_trigger);
	assert_string_equal(s[1].initial.c_expr, "PCM_SIG_NO_TRIGGER");
	assert_true(s[1].initial.num.u == UINT64_MAX);

	assert_int_equal(s[2].accum, PCM_SIG_ACCUM_MAX);
	assert_int_equal(s[2].trigger, PCM_SIG_TRIGGER_MAGNITUDE);
	assert_int_equal(s[2].op, PCM_TRIG_OP_NE);
	assert_string_equal(s[2].threshold.c_expr, "(FABRIC_BDP * 2.0)");
	assert_int_equal(s[2].threshold.num.type, PCM_NUM_UINT);
	assert_int_equal(s[2].threshold.num.u, 2 * 175284);
	assert_false(s[2].reset_upon_trigger);

	/* A threshold without trigger_type is a RAW trigger (SDK compatibility). */
	assert_int_equal(s[3].accum, PCM_SIG_ACCUM_LAST);
	assert_int_equal(s[3].trigger, PCM_SIG_TRIGGER_RAW);
	assert_int_equal(s[3].op, PCM_TRIG_OP_BIT_AND);
	assert_string_equal(s[3].threshold.c_expr, "MASK");
	assert_int_equal(s[3].threshold.num.u, 255);
	assert_true(s[3].reset_upon_trigger);

	assert_int_equal(s[4].type, PCM_SIG_CREDIT_REQUEST);
	assert_int_equal(s[4].trigger, PCM_SIG_TRIGGER_NONE);
	assert_int_equal(s[4].op, PCM_TRIG_OP_GE);
	assert_string_equal(s[4].threshold.c_expr, "PCM_SIG_NO_TRIGGER");
	assert_true(s[4].threshold.num.u == PCM_SIG_NO_TRIGGER);
	pcm_spec_free(spec);
}

static void test_full_spec_controls_and_variable_slots(void **state)
{
	struct pcm_spec *spec = NULL;
	struct pcm_diag diag;
	const struct pcm_spec_control *c;
	const struct pcm_spec_variable *v;

	(void)state;
	assert_int_equal(pcm_spec_load(DATA("spec/full.yaml"), fabric, &spec, &diag), 0);
	assert_int_equal(spec->n_controls, 4);
	c = spec->controls;
	assert_int_equal(c[0].type, PCM_CTRL_CWND);
	assert_string_equal(c[0].initial.c_expr, "FABRIC_MAX_CWND");
	assert_int_equal(c[0].initial.num.u, 262926);
	assert_loc(c[0].type_loc, 61, 11);
	assert_int_equal(c[1].type, PCM_CTRL_RATE);
	assert_int_equal(c[1].initial.num.u, PCM_RATE_ONE);
	assert_int_equal(c[2].type, PCM_CTRL_EV);
	assert_string_equal(c[2].initial.c_expr, "0");
	assert_int_equal(c[3].type, PCM_CTRL_CUMULATIVE_CREDIT);
	assert_string_equal(c[3].initial.c_expr, "18446744073709551615");
	assert_true(c[3].initial.num.u == UINT64_MAX);

	assert_int_equal(spec->n_variables, 5);
	v = spec->variables;
	assert_int_equal(v[0].slot, 0);
	assert_int_equal(v[0].arr_len, 1);
	assert_int_equal(v[1].slot, 1);
	assert_int_equal(v[1].arr_len, 8);
	assert_int_equal(v[1].initial.num.u, 0);
	assert_int_equal(v[2].slot, 9);
	assert_int_equal(v[2].type, PCM_NUM_FLOAT);
	assert_string_equal(v[2].initial.c_expr, "(AI / 2)");
	assert_int_equal(v[2].initial.num.type, PCM_NUM_FLOAT);
	assert_true(v[2].initial.num.f == 0.5);
	assert_int_equal(v[3].slot, 10);
	assert_int_equal(v[3].initial.num.type, PCM_NUM_INT);
	assert_int_equal(v[3].initial.num.i, -3);
	assert_int_equal(v[4].slot, 11);
	assert_int_equal(v[4].arr_len, 4);
	assert_int_equal(v[4].initial.num.u, 7);
	assert_int_equal(spec->n_var_slots, 15);
	pcm_spec_free(spec);
}

static void test_all_trigger_ops_parse_to_their_enum(void **state)
{
	char yaml[4096];
	size_t n = (size_t)snprintf(yaml, sizeof(yaml), HEAD "signals:\n");
	struct pcm_spec *spec;

	(void)state;
	for (unsigned op = 0; op < PCM_TRIG_OP_COUNT; op++)
		n += (size_t)snprintf(yaml + n, sizeof(yaml) - n,
				      "  - name: S%u\n    type: PCM_SIG_ACK\n"
				      "    accumulation: PCM_SIG_ACCUM_SUM\n"
				      "    trigger_op: \"%s\"\n    trigger_threshold: 1\n",
				      op, pcm_trigger_op_text((pcm_trigger_op_t)op));
	spec = parse_ok(yaml);
	assert_int_equal(spec->n_signals, PCM_TRIG_OP_COUNT);
	for (unsigned op = 0; op < PCM_TRIG_OP_COUNT; op++)
		assert_int_equal(spec->signals[op].op, op);
	assert_null(pcm_trigger_op_text(PCM_TRIG_OP_COUNT));
	pcm_spec_free(spec);
}

static void test_all_signal_types_and_accumulators_parse(void **state)
{
	char yaml[8192];
	size_t n = (size_t)snprintf(yaml, sizeof(yaml), HEAD "signals:\n");
	struct pcm_spec *spec;

	(void)state;
	/* a MIN needs an initial value it can go below */
	for (unsigned t = 0; t < PCM_SIG_COUNT; t++)
		n += (size_t)snprintf(yaml + n, sizeof(yaml) - n,
				      "  - name: S%u\n    type: %s\n    accumulation: %s\n%s", t,
				      pcm_signal_name((pcm_signal_t)t),
				      pcm_accum_name((pcm_signal_accum_t)(t % 4)),
				      t % 4 == PCM_SIG_ACCUM_MIN ? "    initial_value: 1000\n" : "");
	spec = parse_ok(yaml);
	assert_int_equal(spec->n_signals, PCM_SIG_COUNT);
	for (unsigned t = 0; t < PCM_SIG_COUNT; t++) {
		assert_int_equal(spec->signals[t].type, t);
		assert_int_equal(spec->signals[t].accum, t % 4);
	}
	assert_string_equal(pcm_signal_name(PCM_SIG_QUEUE_DELAY), "PCM_SIG_QUEUE_DELAY");
	assert_null(pcm_signal_name(PCM_SIG_COUNT));
	assert_string_equal(pcm_control_name(PCM_CTRL_CUMULATIVE_CREDIT),
			    "PCM_CTRL_CUMULATIVE_CREDIT");
	assert_null(pcm_control_name(PCM_CTRL_COUNT));
	assert_null(pcm_accum_name(PCM_SIG_ACCUM_COUNT));
	assert_string_equal(pcm_trigger_name(PCM_SIG_TRIGGER_NONE), "PCM_SIG_TRIGGER_NONE");
	assert_null(pcm_trigger_name((pcm_signal_trigger_t)4));
	pcm_spec_free(spec);
}

static void test_absent_and_empty_lists_are_accepted(void **state)
{
	struct pcm_spec *spec;

	(void)state;
	spec = parse_ok(HEAD);
	assert_int_equal(spec->n_constants + spec->n_signals + spec->n_controls, 0);
	assert_int_equal(spec->n_variables + spec->n_var_slots, 0);
	assert_null(spec->description);
	pcm_spec_free(spec);
	spec = parse_ok(HEAD "constants: []\nsignals:\ncontrols: ~\nvariables: []\n");
	assert_int_equal(spec->n_signals, 0);
	pcm_spec_free(spec);
}

static void test_uint64_max_values_parse_exactly(void **state)
{
	struct pcm_spec *spec;

	(void)state;
	spec = parse_ok(HEAD "signals:\n"
			     "  - {name: A, type: PCM_SIG_ACK, accumulation: PCM_SIG_ACCUM_SUM,\n"
			     "     trigger_threshold: 18446744073709551615}\n"
			     "  - {name: B, type: PCM_SIG_ACK, accumulation: PCM_SIG_ACCUM_SUM,\n"
			     "     trigger_threshold: 0xFFFFFFFFFFFFFFFE}\n"
			     "  - {name: C, type: PCM_SIG_ACK, accumulation: PCM_SIG_ACCUM_SUM,\n"
			     "     trigger_threshold: PCM_SIG_REARM}\n"
			     "  - {name: D, type: PCM_SIG_ACK, accumulation: PCM_SIG_ACCUM_SUM,\n"
			     "     trigger_threshold: !eval \"PCM_SIG_NO_TRIGGER - 2\"}\n");
	assert_true(spec->signals[0].threshold.num.u == UINT64_MAX);
	assert_true(spec->signals[1].threshold.num.u == UINT64_MAX - 1);
	assert_true(spec->signals[2].threshold.num.u == PCM_SIG_REARM);
	assert_true(spec->signals[3].threshold.num.u == UINT64_MAX - 2);
	pcm_spec_free(spec);
}

static void test_reset_upon_trigger_accepts_strings_and_yaml_booleans(void **state)
{
	struct pcm_spec *spec;

	(void)state;
	spec = parse_ok(HEAD "signals:\n"
			     "  - {name: A, type: PCM_SIG_ACK, accumulation: PCM_SIG_ACCUM_SUM,"
			     " reset_upon_trigger: \"false\"}\n"
			     "  - {name: B, type: PCM_SIG_ACK, accumulation: PCM_SIG_ACCUM_SUM,"
			     " reset_upon_trigger: False}\n"
			     "  - {name: C, type: PCM_SIG_ACK, accumulation: PCM_SIG_ACCUM_SUM,"
			     " reset_upon_trigger: true}\n");
	assert_false(spec->signals[0].reset_upon_trigger);
	assert_false(spec->signals[1].reset_upon_trigger);
	assert_true(spec->signals[2].reset_upon_trigger);
	pcm_spec_free(spec);
}

/* `scope` (pcm extension): flow, the default, or instance; anything else is an error at its place. */
static void test_variable_scope_is_flow_or_instance(void **state)
{
	struct pcm_spec *spec;

	(void)state;
	spec = parse_ok(HEAD "variables:\n"
			     "  - {name: A, type: uint}\n"
			     "  - {name: B, type: uint, scope: flow}\n"
			     "  - {name: C, type: uint, scope: instance, arr_len: 2}\n"
			     "  - {name: D, type: float, scope: \"instance\", initial_value: 0.5}\n");
	assert_false(spec->variables[0].shared);
	assert_false(spec->variables[1].shared);
	assert_true(spec->variables[2].shared);
	assert_int_equal(spec->variables[2].arr_len, 2);
	assert_true(spec->variables[3].shared);
	pcm_spec_free(spec);
	expect_error(HEAD "variables:\n  - {name: A, type: uint, scope: port}\n",
		     "x.yaml:4:34: variables[0].scope: ",
		     "expected \"flow\" or \"instance\", found 'port'");
	expect_error(HEAD "variables:\n  - {name: A, type: uint, scope: [flow]}\n",
		     "x.yaml:4:34: variables[0].scope: ", "expected a scalar");
	expect_error(HEAD "variables:\n  - {name: A, type: uint, scoop: flow}\n",
		     "x.yaml:4:27: variables[0].scoop: ", "did you mean scope?");
}

/* The SDK's files carry a description on every item and quote their names. */
static void test_descriptions_and_quoted_values_as_the_sdk_writes_them(void **state)
{
	struct pcm_spec *spec;

	(void)state;
	spec = parse_ok("algorithm:\n  name: x\n  description: \"the package\"\n"
			"constants:\n  - name: MSS\n    type: uint\n    value: \"FABRIC_LINK_MSS\"\n"
			"    description: \"Maximum segment size\"\n"
			"signals:\n  - name: ACK\n    type: PCM_SIG_ACK\n"
			"    accumulation: PCM_SIG_ACCUM_SUM\n    trigger_threshold: '1'\n"
			"    description: ACKs\n"
			"controls:\n  - name: CWND\n    type: PCM_CTRL_CWND\n"
			"    initial_value: \"FABRIC_LINK_MSS\"\n    description: window\n"
			"variables:\n  - name: V\n    type: float\n    initial_value: \"0.5\"\n"
			"    description: \"a \\\"quoted\\\" ?\?/ description\"\n");
	assert_string_equal(spec->description, "the package");
	assert_int_equal(spec->constants[0].value.num.u, 4096);
	assert_string_equal(spec->constants[0].description, "Maximum segment size");
	assert_int_equal(spec->signals[0].threshold.num.u, 1);
	assert_string_equal(spec->signals[0].description, "ACKs");
	assert_int_equal(spec->controls[0].initial.num.u, 4096);
	assert_string_equal(spec->controls[0].description, "window");
	assert_true(spec->variables[0].initial.num.f == 0.5);
	assert_string_equal(spec->variables[0].description, "a \"quoted\" ?\?/ description");
	pcm_spec_free(spec);
	expect_error(HEAD "signals:\n  - name: A\n    type: PCM_SIG_ACK\n"
			  "    accumulation: PCM_SIG_ACCUM_SUM\n    description: [not, text]\n",
		     "x.yaml:7:18: signals[0].description: ", "expected a scalar, found a list");
}

/* pcm.h: a threshold of PCM_SIG_NO_TRIGGER means no trigger, whatever the type. */
static void test_no_trigger_threshold_arms_no_trigger(void **state)
{
	struct pcm_spec *spec;

	(void)state;
	spec = parse_ok(HEAD "signals:\n"
			     "  - {name: A, type: PCM_SIG_ACK, accumulation: PCM_SIG_ACCUM_SUM,\n"
			     "     trigger_threshold: PCM_SIG_NO_TRIGGER}\n"
			     "  - {name: B, type: PCM_SIG_ECN, accumulation: PCM_SIG_ACCUM_SUM,\n"
			     "     trigger_type: PCM_SIG_TRIGGER_DELTA, trigger_threshold: "
			     "PCM_SIG_NO_TRIGGER}\n"
			     "  - {name: C, type: PCM_SIG_NACK, accumulation: PCM_SIG_ACCUM_SUM,\n"
			     "     trigger_threshold: !eval \"PCM_SIG_NO_TRIGGER - 1\"}\n");
	assert_int_equal(spec->signals[0].trigger, PCM_SIG_TRIGGER_NONE);
	assert_int_equal(spec->signals[1].trigger, PCM_SIG_TRIGGER_NONE);
	assert_int_equal(spec->signals[2].trigger, PCM_SIG_TRIGGER_RAW);
	pcm_spec_free(spec);
}

/* Names the handler's C already has, from the compiler's view of the headers. */
static void test_names_the_c_library_or_compiler_define_are_reserved(void **state)
{
	static const struct {
		const char *name, *why;
	} cases[] = {
		{ "EIO", "<errno.h> defines it as a macro" },
		{ "uint32_t", "<stdint.h> declares or uses it" },
		{ "memset", "<string.h> declares or uses it" },
		{ "stdout", "<stdio.h> defines it as a macro" },
		{ "XXH64", "<xxhash.h> declares or uses it" },
		{ "unix", "the C compiler defines it as a macro" },
		{ "MAX", "<pcm_algo.h> defines it as a macro" },
		{ "_lower", "C reserves identifiers that start with '_' at file scope" },
		{ "BUILD_ALGO_X", "pcmc defines BUILD_ALGO_<ALGORITHM>" },
		{ "HANDLER_BUILD", "handler API" },
	};
	char yaml[256], why[160];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(yaml, sizeof(yaml), HEAD "variables:\n  - {name: %s, type: uint}\n",
			 cases[i].name);
		expect_error(yaml, "x.yaml:4:12: variables[0].name: ", cases[i].why);
		assert_true(pcm_name_is_reserved(cases[i].name, why, sizeof(why)));
	}
	/* The SDK's own names, and names the generated code used to take. */
	for (const char *const *n = (const char *const[]){ "MSS", "K", "C", "H", "ECN", "ACK",
							    "rec", "x", "valid", NULL };
	     *n; n++)
		assert_false(pcm_name_is_reserved(*n, why, sizeof(why)));
}

static void test_constants_convert_to_their_declared_type(void **state)
{
	struct pcm_spec *spec;

	(void)state;
	spec = parse_ok(HEAD "constants:\n"
			     "  - {name: F, type: float, value: 3}\n"
			     "  - {name: U, type: uint, value: !eval \"F * 2\"}\n"
			     "  - {name: N, type: int, value: !eval \"-(pcm_int)U\"}\n"
			     "  - {name: H, type: float, value: !eval \"F / 2\"}\n");
	assert_int_equal(spec->constants[0].value.num.type, PCM_NUM_FLOAT);
	assert_true(spec->constants[0].value.num.f == 3.0);
	assert_int_equal(spec->constants[1].value.num.type, PCM_NUM_UINT);
	assert_int_equal(spec->constants[1].value.num.u, 6);
	assert_int_equal(spec->constants[2].value.num.i, -6);
	/* F is a float constant, so F / 2 divides as floats. */
	assert_true(spec->constants[3].value.num.f == 1.5);
	pcm_spec_free(spec);
}

static void test_exactly_64_signals_are_accepted(void **state)
{
	char *yaml = malloc(64 * 100 + 64);
	size_t n = (size_t)sprintf(yaml, HEAD "signals:\n");
	struct pcm_spec *spec;

	(void)state;
	for (unsigned i = 0; i < PCM_SPEC_MAX_SIGNALS; i++)
		n += (size_t)sprintf(yaml + n, "  - name: S%u\n    type: PCM_SIG_ACK\n"
					       "    accumulation: PCM_SIG_ACCUM_SUM\n",
				     i);
	spec = parse_ok(yaml);
	assert_int_equal(spec->n_signals, 64);
	assert_string_equal(spec->signals[63].name, "S63");
	pcm_spec_free(spec);
	free(yaml);
}

static void test_65_signals_exceed_the_trigger_mask(void **state)
{
	char *yaml = malloc(65 * 100 + 64);
	size_t n = (size_t)sprintf(yaml, HEAD "signals:\n");

	(void)state;
	for (unsigned i = 0; i < PCM_SPEC_MAX_SIGNALS + 1; i++)
		n += (size_t)sprintf(yaml + n, "  - name: S%u\n    type: PCM_SIG_ACK\n"
					       "    accumulation: PCM_SIG_ACCUM_SUM\n",
				     i);
	/* The 65th item starts on line 4 + 64 * 3. */
	expect_error(yaml, "x.yaml:196:5: signals: ", "65 signals exceed the 64-bit trigger mask");
	free(yaml);
}

/* The tree's policies, with the tree's own profile (which adds FABRIC_NOMINAL_PKT_BYTES). */
static void test_every_policy_in_the_tree_loads(void **state)
{
	char dir_path[512], path[1024];
	struct pcm_fabric *tree_fabric = NULL;
	unsigned n_loaded = 0;
	struct pcm_diag fdiag;
	struct dirent *entry;
	DIR *dir;

	(void)state;
	snprintf(path, sizeof(path), "%s/policies/fabric/default.yaml", PCM_SOURCE_ROOT);
	if (pcm_fabric_load(path, &tree_fabric, &fdiag))
		fail_msg("%s", fdiag.msg);
	snprintf(dir_path, sizeof(dir_path), "%s/policies", PCM_SOURCE_ROOT);
	dir = opendir(dir_path);
	assert_non_null(dir);
	while ((entry = readdir(dir))) {
		size_t len = strlen(entry->d_name);
		struct pcm_spec *spec = NULL;
		struct pcm_diag diag;

		if (len < 6 || strcmp(entry->d_name + len - 5, ".yaml") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir_path, entry->d_name);
		if (pcm_spec_load(path, tree_fabric, &spec, &diag))
			fail_msg("%s", diag.msg);
		/* The file name is the algorithm name, which names the generated header. */
		assert_int_equal(strlen(spec->name), len - 5);
		assert_memory_equal(spec->name, entry->d_name, len - 5);
		pcm_spec_free(spec);
		n_loaded++;
	}
	closedir(dir);
	/* the policies' floor is at least the NIC's own, one full packet's window */
	assert_true(fabric_entry(tree_fabric, "FABRIC_MIN_CWND")->value.num.i >=
		    fabric_entry(tree_fabric, "FABRIC_NOMINAL_PKT_BYTES")->value.num.i);
	assert_int_equal(fabric_entry(tree_fabric, "FABRIC_NOMINAL_PKT_BYTES")->value.num.i, 4184);
	pcm_fabric_free(tree_fabric);
	assert_true(n_loaded >= 2);
}

/* Spec errors ---------------------------------------------------------------- */

static void test_unknown_signal_type_suggests_the_closest(void **state)
{
	struct pcm_spec *spec = SENTINEL;
	struct pcm_diag diag;

	(void)state;
	assert_int_equal(pcm_spec_load(DATA("spec/bad_signal_type.yaml"), fabric, &spec, &diag),
			 -EINVAL);
	assert_ptr_equal(spec, SENTINEL);
	check_diag(diag.msg, DATA("spec/bad_signal_type.yaml") ":11:11: signals[1].type: ",
		   "unknown signal type 'PCM_SIG_AKC'; did you mean PCM_SIG_ACK?");
	check_diag(diag.msg, DATA("spec/bad_signal_type.yaml"),
		   "(expected one of PCM_SIG_ACK, PCM_SIG_RTO, ");
}

static void test_duplicate_signal_name_reports_both_locations(void **state)
{
	expect_error(HEAD "signals:\n"
			  "  - name: FOO\n    type: PCM_SIG_ACK\n"
			  "    accumulation: PCM_SIG_ACCUM_SUM\n"
			  "  - name: FOO\n    type: PCM_SIG_ACK\n"
			  "    accumulation: PCM_SIG_ACCUM_SUM\n",
		     "x.yaml:7:11: signals[1].name: ",
		     "duplicate name 'FOO' (first defined at 4:11)");
	(void)state;
}

static void test_names_are_unique_across_sections(void **state)
{
	struct pcm_spec *spec = SENTINEL;
	struct pcm_diag diag;

	(void)state;
	assert_int_equal(pcm_spec_load(DATA("spec/duplicate_name.yaml"), fabric, &spec, &diag),
			 -EINVAL);
	check_diag(diag.msg, DATA("spec/duplicate_name.yaml") ":12:11: variables[1].name: ",
		   "duplicate name 'FOO' (first defined at 6:11)");
	expect_error(HEAD "constants:\n  - {name: K, type: uint, value: 1}\n"
			  "controls:\n  - {name: K, type: PCM_CTRL_CWND}\n",
		     "x.yaml:6:12: controls[0].name: ", "first defined at 4:12");
}

static void test_missing_algorithm_name_points_at_the_algorithm_mapping(void **state)
{
	(void)state;
	expect_error("algorithm:\n  description: no name\n", "x.yaml:2:3: algorithm.name: ",
		     "missing required key");
	expect_error("signals: []\n", "x.yaml:1:1: algorithm: ", "missing required key");
	expect_error("", "x.yaml:1:1: algorithm: ", "missing required key");
	expect_error("algorithm:\n  name:\n", "x.yaml:2:3: algorithm.name: ", "empty value");
	expect_error("algorithm: swift\n", "x.yaml:1:12: algorithm: ", "expected a mapping");
}

static void test_bad_number_names_the_literal(void **state)
{
	(void)state;
	expect_error(HEAD "constants:\n  - name: C\n    type: uint\n    value: 12x\n",
		     "x.yaml:6:12: constants[0].value: ", "bad number '12x'");
	expect_error(HEAD "constants:\n  - {name: C, type: uint, value: 99999999999999999999}\n",
		     "x.yaml:4:34: constants[0].value: ", "out of range");
	expect_error(HEAD "constants:\n  - {name: C, type: float, value: .inf}\n",
		     "x.yaml:4:35: constants[0].value: ", "bad number '.inf'");
}

static void test_values_must_fit_their_type(void **state)
{
	(void)state;
	expect_error(HEAD "constants:\n  - {name: C, type: uint, value: 1.5}\n",
		     "x.yaml:4:34: constants[0].value: ",
		     "value 1.5 is not an integer for type uint");
	expect_error(HEAD "constants:\n  - {name: C, type: uint, value: -1}\n",
		     "x.yaml:4:34: constants[0].value: ", "value -1 is negative for type uint");
	expect_error(HEAD "constants:\n  - {name: C, type: int, value: 0xFFFFFFFFFFFFFFFF}\n",
		     "x.yaml:4:33: constants[0].value: ", "out of range for type int");
	expect_error(HEAD "signals:\n  - {name: S, type: PCM_SIG_ACK, "
			  "accumulation: PCM_SIG_ACCUM_SUM, trigger_threshold: !eval \"-1\"}\n",
		     "x.yaml:4:86: signals[0].trigger_threshold: ", "negative for type uint");
	expect_error(HEAD "controls:\n  - {name: C, type: PCM_CTRL_CWND, initial_value: 0.5}\n",
		     "x.yaml:4:51: controls[0].initial_value: ", "not an integer");
	expect_error(HEAD "variables:\n  - {name: V, type: int, initial_value: 9.25}\n",
		     "x.yaml:4:41: variables[0].initial_value: ", "not an integer for type int");
}

static void test_arr_len_over_the_limit_is_rejected(void **state)
{
	struct pcm_spec *spec = SENTINEL;
	struct pcm_diag diag;

	(void)state;
	expect_error(HEAD "variables:\n  - name: V\n    type: uint\n    arr_len: 5000\n",
		     "x.yaml:6:14: variables[0].arr_len: ", "5000 exceeds the limit of 1024");
	expect_error(HEAD "variables:\n  - {name: V, type: uint, arr_len: 0}\n",
		     "x.yaml:4:36: variables[0].arr_len: ", "at least 1");
	assert_int_equal(pcm_spec_load(DATA("spec/arr_len_too_large.yaml"), fabric, &spec, &diag),
			 -EINVAL);
	check_diag(diag.msg, DATA("spec/arr_len_too_large.yaml") ":11:14: variables[1].arr_len: ",
		   "5000 exceeds the limit of 1024");
}

static void test_variable_slots_are_limited_in_total(void **state)
{
	char *yaml = malloc(8 * 64 + 64);
	size_t n = (size_t)sprintf(yaml, HEAD "variables:\n");

	(void)state;
	/* Five arrays of 1024 slots: the fifth crosses 4096. */
	for (unsigned i = 0; i < 5; i++)
		n += (size_t)sprintf(yaml + n, "  - {name: A%u, type: uint, arr_len: 1024}\n", i);
	expect_error(yaml, "x.yaml:8:37: variables[4]: ", "5120 slots, over the limit of 4096");
	free(yaml);
}

static void test_eval_unknown_name_reports_its_column(void **state)
{
	struct pcm_spec *spec = SENTINEL;
	struct pcm_diag diag;

	(void)state;
	expect_error(HEAD "constants:\n  - name: C\n    type: uint\n"
			  "    value: !eval \"2 * FABRIC_FOO\"\n",
		     "x.yaml:6:12: constants[0].value: ",
		     "!eval: unknown name 'FABRIC_FOO' at column 5 of \"2 * FABRIC_FOO\"");
	assert_int_equal(pcm_spec_load(DATA("spec/unknown_fabric_name.yaml"), fabric, &spec, &diag),
			 -EINVAL);
	check_diag(diag.msg, DATA("spec/unknown_fabric_name.yaml") ":11:12: constants[1].value: ",
		   "unknown name 'FABRIC_FOO' at column 5");
}

static void test_fabric_names_without_a_profile_say_so(void **state)
{
	struct pcm_spec *spec = SENTINEL;
	struct pcm_diag diag;
	const char *yaml = HEAD "constants:\n  - {name: C, type: uint, value: FABRIC_BDP}\n";

	(void)state;
	assert_int_equal(pcm_spec_parse("x.yaml", yaml, strlen(yaml), NULL, &spec, &diag),
			 -EINVAL);
	check_diag(diag.msg, "x.yaml:4:34: constants[0].value: ",
		   "unknown name 'FABRIC_BDP' (no fabric profile was given)");
}

static void test_constants_resolve_in_dependency_order(void **state)
{
	struct pcm_spec *spec;

	(void)state;
	/* The SDK's nscc names constants defined further down. */
	spec = parse_ok(HEAD "constants:\n"
			     "  - {name: A, type: float, value: !eval \"0.5 * B * C\"}\n"
			     "  - {name: B, type: uint, value: !eval \"C + D\"}\n"
			     "  - {name: C, type: uint, value: D}\n"
			     "  - {name: D, type: uint, value: !eval \"FABRIC_LINK_MSS / 1024\"}\n"
			     "signals:\n  - {name: S, type: PCM_SIG_ACK, accumulation: "
			     "PCM_SIG_ACCUM_SUM, trigger_threshold: B}\n");
	assert_int_equal(spec->constants[3].value.num.u, 4);
	assert_int_equal(spec->constants[2].value.num.u, 4);
	assert_int_equal(spec->constants[1].value.num.u, 8);
	assert_true(spec->constants[0].value.num.f == 16.0);
	assert_int_equal(spec->signals[0].threshold.num.u, 8);
	pcm_spec_free(spec);
}

static void test_constant_cycles_are_errors_that_name_the_constants(void **state)
{
	(void)state;
	expect_error(HEAD "constants:\n  - {name: A, type: uint, value: !eval \"A + 1\"}\n",
		     "x.yaml:4:34: constants[0].value: ", "constant 'A' refers to itself");
	expect_error(HEAD "constants:\n"
			  "  - {name: OK, type: uint, value: 1}\n"
			  "  - {name: A, type: uint, value: !eval \"B + OK\"}\n"
			  "  - {name: B, type: uint, value: !eval \"2 * C\"}\n"
			  "  - {name: C, type: uint, value: A}\n",
		     "x.yaml:5:34: constants[1].value: ",
		     "constants refer to each other in a cycle: A -> B -> C -> A");
	/* A constant that waits on a cycle is not part of it. */
	expect_error(HEAD "constants:\n"
			  "  - {name: W, type: uint, value: X}\n"
			  "  - {name: X, type: uint, value: Y}\n"
			  "  - {name: Y, type: uint, value: X}\n",
		     "x.yaml:5:34: constants[1].value: ",
		     "constants refer to each other in a cycle: X -> Y -> X");
	/* Unknown names are still unknown, wherever they are. */
	expect_error(HEAD "constants:\n  - {name: A, type: uint, value: !eval \"B * 2\"}\n"
			  "  - {name: B, type: uint, value: !eval \"NOPE\"}\n",
		     "x.yaml:5:34: constants[1].value: ", "unknown name 'NOPE' at column 1");
}

static void test_eval_errors_are_reported_with_the_key(void **state)
{
	(void)state;
	expect_error(HEAD "constants:\n"
			  "  - {name: C, type: uint, value: !eval \"FABRIC_BDP / 0\"}\n",
		     "x.yaml:4:34: constants[0].value: ", "division by zero at column 12");
	expect_error(HEAD "constants:\n  - {name: C, type: uint, value: !eval \"(1 + 2\"}\n",
		     "x.yaml:4:34: constants[0].value: ",
		     "expected ')' but found the end of the expression at column 7");
	expect_error(HEAD "constants:\n  - {name: C, type: uint, value: !eval \"\"}\n",
		     "x.yaml:4:34: constants[0].value: ", "expected a value");
}

static void test_yaml_syntax_errors_report_the_position(void **state)
{
	struct pcm_spec *spec = SENTINEL;
	struct pcm_diag diag;

	(void)state;
	expect_error(HEAD "signals: [ {name: A\n", "x.yaml:4:1: ", "YAML syntax error: ");
	expect_error("algorithm:\n  name: x\n bad: 1\n", "x.yaml:3:", "YAML syntax error: ");
	assert_int_equal(pcm_spec_load(DATA("spec/yaml_syntax.yaml"), fabric, &spec, &diag),
			 -EINVAL);
	check_diag(diag.msg, DATA("spec/yaml_syntax.yaml") ":6:1: ", "YAML syntax error: ");
}

static void test_aliases_and_anchors_are_rejected(void **state)
{
	struct pcm_spec *spec = SENTINEL;
	struct pcm_diag diag;

	(void)state;
	assert_int_equal(pcm_spec_load(DATA("spec/alias_bomb.yaml"), fabric, &spec, &diag),
			 -EINVAL);
	check_diag(diag.msg, DATA("spec/alias_bomb.yaml") ":3:4: ",
		   "anchors (&a) are not supported");
	expect_error(HEAD "signals:\n  - {name: *x}\n", "x.yaml:4:12: ", "aliases (*x)");
	expect_error(HEAD "constants: &l []\n", "x.yaml:3:12: ", "anchors (&l)");
}

static void test_unknown_keys_are_named(void **state)
{
	(void)state;
	expect_error(HEAD "signal:\n  - name: A\n", "x.yaml:3:1: signal: ",
		     "unknown key; did you mean signals?");
	expect_error(HEAD "handlers: []\n", "x.yaml:3:1: handlers: ",
		     "unknown key (expected algorithm, constants, signals, controls, variables)");
	expect_error(HEAD "signals:\n  - name: A\n    type: PCM_SIG_ACK\n"
			  "    accumulation: PCM_SIG_ACCUM_SUM\n    trigger_treshold: 3\n",
		     "x.yaml:7:5: signals[0].trigger_treshold: ",
		     "unknown key; did you mean trigger_threshold?");
	expect_error(HEAD "signals:\n  - name: A\n    kind: PCM_SIG_ACK\n",
		     "x.yaml:5:5: signals[0].kind: ",
		     "unknown key (expected name, type, accumulation, trigger_type, trigger_op, "
		     "trigger_threshold, reset_upon_trigger, initial_value, description)");
	expect_error(HEAD "signals:\n  - name: A\n    type: PCM_SIG_ACK\n"
			  "    accumulation: PCM_SIG_ACCUM_SUM\n    trigger_opp: \">\"\n",
		     "x.yaml:7:5: signals[0].trigger_opp: ", "unknown key; did you mean trigger_op?");
	expect_error(HEAD "constants:\n  - {name: A, type: uint, value: 1, descripton: x}\n",
		     "x.yaml:4:37: constants[0].descripton: ",
		     "unknown key; did you mean description?");
	expect_error("algorithm:\n  name: x\n  version: 2\n", "x.yaml:3:3: algorithm.version: ",
		     "unknown key");
}

static void test_duplicate_keys_are_rejected(void **state)
{
	(void)state;
	expect_error(HEAD "constants:\n  - name: A\n    name: B\n",
		     "x.yaml:5:5: constants[0].name: ", "duplicate key (first at 4:5)");
	expect_error(HEAD "algorithm:\n  name: y\n", "x.yaml:3:1: algorithm: ", "duplicate key");
}

static void test_structure_errors_name_what_was_found(void **state)
{
	(void)state;
	expect_error("- algorithm\n", "x.yaml:1:1: ", "expected a mapping with keys algorithm");
	expect_error(HEAD "signals: {name: A}\n", "x.yaml:3:10: signals: ",
		     "expected a list, found a mapping");
	expect_error(HEAD "signals:\n  - PCM_SIG_ACK\n", "x.yaml:4:5: signals[0]: ",
		     "expected a mapping, found a scalar");
	expect_error(HEAD "signals:\n  - name: [A, B]\n", "x.yaml:4:11: signals[0].name: ",
		     "expected a scalar, found a list");
	expect_error(HEAD "constants:\n  - {name: C, type: uint, value: [1]}\n",
		     "x.yaml:4:34: constants[0].value: ", "found a list");
	expect_error(HEAD "controls:\n  - {name: C, type: !eval PCM_CTRL_CWND}\n",
		     "x.yaml:4:21: controls[0].type: ", "!eval is only allowed on values");
	expect_error(HEAD "signals:\n  - name: S\n    type: PCM_SIG_ACK\n"
			  "    accumulation: PCM_SIG_ACCUM_SUM\n    trigger_op: !=\n",
		     "x.yaml:7:17: signals[0].trigger_op: ",
		     "unsupported YAML tag '!='; quote a value that starts with '!'");
	expect_error("algorithm:\n  name: x\n---\nalgorithm:\n  name: y\n", "x.yaml:3:1: ",
		     "a second YAML document");
	expect_error(HEAD "constants:\n  - {name: \"A\\0B\", type: uint, value: 1}\n",
		     "x.yaml:4:12: constants[0].name: ", "contains a NUL character");
}

static void test_enum_fields_reject_unknown_spellings(void **state)
{
	(void)state;
	expect_error(HEAD "signals:\n  - {name: S, type: PCM_SIG_ACK, accumulation: SUM}\n",
		     "x.yaml:4:48: signals[0].accumulation: ",
		     "unknown accumulation 'SUM' (expected one of PCM_SIG_ACCUM_SUM");
	expect_error(HEAD "signals:\n  - {name: S, type: PCM_SIG_ACK, accumulation: "
			  "PCM_SIG_ACCUM_SUM, trigger_type: PCM_SIG_TRIGGER_NONE, "
			  "trigger_threshold: 1}\n",
		     "x.yaml:4:81: signals[0].trigger_type: ",
		     "unknown trigger type 'PCM_SIG_TRIGGER_NONE'");
	expect_error(HEAD "signals:\n  - {name: S, type: PCM_SIG_ACK, accumulation: "
			  "PCM_SIG_ACCUM_SUM, trigger_op: \"=>\", trigger_threshold: 1}\n",
		     "x.yaml:4:79: signals[0].trigger_op: ",
		     "unknown trigger operator '=>'; did you mean >=?");
	expect_error(HEAD "controls:\n  - {name: C, type: PCM_CTRL_WINDOW}\n",
		     "x.yaml:4:21: controls[0].type: ", "unknown control type 'PCM_CTRL_WINDOW'");
	expect_error(HEAD "variables:\n  - {name: V, type: double}\n",
		     "x.yaml:4:21: variables[0].type: ",
		     "unknown type 'double' (expected uint, int or float)");
	expect_error(HEAD "signals:\n  - {name: S, type: PCM_SIG_ACK, accumulation: "
			  "PCM_SIG_ACCUM_SUM, reset_upon_trigger: yes}\n",
		     "x.yaml:4:87: signals[0].reset_upon_trigger: ",
		     "expected \"true\" or \"false\", found 'yes'");
}

static void test_trigger_type_needs_a_threshold(void **state)
{
	(void)state;
	expect_error(HEAD "signals:\n  - name: S\n    type: PCM_SIG_ACK\n"
			  "    accumulation: PCM_SIG_ACCUM_SUM\n"
			  "    trigger_type: PCM_SIG_TRIGGER_RAW\n",
		     "x.yaml:7:19: signals[0].trigger_type: ", "needs a trigger_threshold");
}

static void test_required_item_keys_are_enforced(void **state)
{
	(void)state;
	expect_error(HEAD "signals:\n  - {name: S, type: PCM_SIG_ACK}\n",
		     "x.yaml:4:5: signals[0].accumulation: ", "missing required key");
	expect_error(HEAD "constants:\n  - {name: C, value: 1}\n",
		     "x.yaml:4:5: constants[0].type: ", "missing required key");
	expect_error(HEAD "constants:\n  - {name: C, type: uint}\n",
		     "x.yaml:4:5: constants[0].value: ", "missing required key");
	expect_error(HEAD "variables:\n  - {type: uint}\n", "x.yaml:4:5: variables[0].name: ",
		     "missing required key");
}

static void test_names_must_be_short_c_identifiers_and_not_reserved(void **state)
{
	char yaml[256];

	(void)state;
	expect_error(HEAD "variables:\n  - {name: 2FAST, type: uint}\n",
		     "x.yaml:4:12: variables[0].name: ", "'2FAST' is not a C identifier");
	expect_error(HEAD "variables:\n  - {name: my-var, type: uint}\n",
		     "x.yaml:4:12: variables[0].name: ", "not a C identifier");
	snprintf(yaml, sizeof(yaml), HEAD "variables:\n  - {name: %s, type: uint}\n",
		 "A234567890123456789012345678901234567890123456789012345678901234");
	expect_error(yaml, "x.yaml:4:12: variables[0].name: ", "longer than 63 characters");
	expect_error(HEAD "variables:\n  - {name: int, type: uint}\n",
		     "x.yaml:4:12: variables[0].name: ", "'int' is reserved: it is a C keyword");
	expect_error(HEAD "variables:\n  - {name: get_signal, type: uint}\n",
		     "x.yaml:4:12: variables[0].name: ",
		     "'get_signal' is reserved: <pcmh.h> defines it as a macro");
	expect_error(HEAD "variables:\n  - {name: VAR_OFFSET, type: uint}\n",
		     "x.yaml:4:12: variables[0].name: ", "handler API");
	expect_error(HEAD "constants:\n  - {name: FABRIC_BDP, type: uint, value: 1}\n",
		     "x.yaml:4:12: constants[0].name: ", "belong to the fabric profile");
	expect_error(HEAD "constants:\n  - {name: PCM_X, type: uint, value: 1}\n",
		     "x.yaml:4:12: constants[0].name: ", "belong to pcm");
	expect_error("algorithm:\n  name: uec-dctcp\n", "x.yaml:2:9: algorithm.name: ",
		     "'uec-dctcp' is not a C identifier");
}

static void test_list_limits_are_checked_before_allocation(void **state)
{
	size_t size = 300 * 64 + 64;
	char *yaml = malloc(size);
	size_t n = (size_t)sprintf(yaml, HEAD "constants:\n");

	(void)state;
	for (unsigned i = 0; i < PCM_SPEC_MAX_CONSTANTS + 1; i++)
		n += (size_t)sprintf(yaml + n, "  - {name: C%u, type: uint, value: %u}\n", i, i);
	expect_error(yaml, "x.yaml:260:5: constants: ", "257 constants exceed the limit of 256");
	n = (size_t)sprintf(yaml, HEAD "controls:\n");
	for (unsigned i = 0; i < PCM_SPEC_MAX_CONTROLS + 1; i++)
		n += (size_t)sprintf(yaml + n, "  - {name: K%u, type: PCM_CTRL_CWND}\n", i);
	expect_error(yaml, "x.yaml:20:5: controls: ", "17 controls exceed the limit of 16");
	free(yaml);
}

static void test_missing_file_returns_enoent_with_its_name(void **state)
{
	struct pcm_spec *spec = SENTINEL;
	struct pcm_fabric *f = (struct pcm_fabric *)SENTINEL;
	struct pcm_diag diag;

	(void)state;
	assert_int_equal(pcm_spec_load(DATA("spec/no_such_file.yaml"), fabric, &spec, &diag),
			 -ENOENT);
	assert_ptr_equal(spec, SENTINEL);
	check_diag(diag.msg, "cannot open '" DATA("spec/no_such_file.yaml") "'",
		   ": No such file or directory");
	assert_int_equal(pcm_fabric_load(DATA("fabric/no_such_file.yaml"), &f, &diag), -ENOENT);
	assert_ptr_equal(f, (struct pcm_fabric *)SENTINEL);
}

static void test_inputs_over_one_mib_are_rejected(void **state)
{
	size_t len = (1u << 20) + 1;
	char *yaml = malloc(len);
	struct pcm_spec *spec = SENTINEL;
	struct pcm_diag diag;
	char path[] = "/tmp/test_spec_big_XXXXXX";
	int fd;

	(void)state;
	memset(yaml, '#', len);
	yaml[len - 1] = '\n';
	assert_int_equal(pcm_spec_parse("x.yaml", yaml, len, fabric, &spec, &diag), -EINVAL);
	check_diag(diag.msg, "x.yaml:1:1: ", "over the limit of 1 MiB");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_true(write(fd, yaml, len) == (ssize_t)len);
	close(fd);
	assert_int_equal(pcm_spec_load(path, fabric, &spec, &diag), -EINVAL);
	assert_ptr_equal(spec, SENTINEL);
	check_diag(diag.msg, path, "the file is 1048577 bytes, over the limit of 1 MiB");
	unlink(path);
	free(yaml);
}

/* The size named is the file's, not what was read of it (reading stops past 1 MiB). */
static void test_input_size_error_names_the_file_size(void **state)
{
	size_t len = 2097174; /* past the 2 MiB the reader's buffer doubles to */
	char *yaml = malloc(len), path[] = "/tmp/test_spec_big_XXXXXX";
	struct pcm_spec *spec = SENTINEL;
	struct pcm_diag diag;
	int fd;

	(void)state;
	memset(yaml, '#', len);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_true(write(fd, yaml, len) == (ssize_t)len);
	close(fd);
	assert_int_equal(pcm_spec_load(path, fabric, &spec, &diag), -EINVAL);
	check_diag(diag.msg, path, ":1:1: the file is 2097174 bytes, over the limit of 1 MiB");
	unlink(path);
	free(yaml);
}

/* Fabric profiles ------------------------------------------------------------ */

static void test_default_fabric_has_the_sdk_values(void **state)
{
	(void)state;
	assert_int_equal(fabric->n_entries, 9);
	assert_string_equal(fabric->entries[0].name, "FABRIC_LINK_RATE_GBPS");
	assert_int_equal(fabric_entry(fabric, "FABRIC_LINK_MSS")->value.num.i, 4096);
	assert_int_equal(fabric_entry(fabric, "FABRIC_LINK_MSS")->value.num.type, PCM_NUM_INT);
	assert_string_equal(fabric_entry(fabric, "FABRIC_LINK_MSS")->value.c_expr, "4096");
	assert_int_equal(fabric_entry(fabric, "FABRIC_BDP")->value.num.i, 175284);
	assert_int_equal(fabric_entry(fabric, "FABRIC_BRTT")->value.num.i, 14022720);
	assert_int_equal(fabric_entry(fabric, "FABRIC_TRTT")->value.num.i, 24539760);
	assert_loc(fabric_entry(fabric, "FABRIC_HOP_COUNT")->value.loc, 5, 19);
}

static void test_fabric_eval_uses_earlier_entries(void **state)
{
	struct pcm_fabric *f = NULL;
	struct pcm_diag diag;

	(void)state;
	assert_int_equal(pcm_fabric_load(DATA("fabric/derived.yaml"), &f, &diag), 0);
	assert_int_equal(f->n_entries, 7);
	assert_int_equal(fabric_entry(f, "FABRIC_BDP")->value.num.i, 500000);
	assert_string_equal(fabric_entry(f, "FABRIC_BDP")->value.c_expr,
			    "(FABRIC_LINK_RATE_GBPS * FABRIC_BRTT / 8000)");
	assert_int_equal(fabric_entry(f, "FABRIC_MIN_CWND")->value.num.i, 4096);
	assert_int_equal(fabric_entry(f, "FABRIC_MAX_CWND")->value.num.i, 500000 + 8192);
	assert_int_equal(fabric_entry(f, "FABRIC_ECN_KMIN_FRAC")->value.num.type, PCM_NUM_FLOAT);
	pcm_fabric_free(f);
}

static void test_fabric_errors_name_the_entry(void **state)
{
	struct pcm_fabric *f = (struct pcm_fabric *)SENTINEL;
	struct pcm_diag diag;

	(void)state;
	assert_int_equal(pcm_fabric_load(DATA("fabric/forward_reference.yaml"), &f, &diag),
			 -EINVAL);
	check_diag(diag.msg, DATA("fabric/forward_reference.yaml") ":4:13: FABRIC_BDP: ",
		   "unknown name 'FABRIC_BRTT' at column 25");
	assert_int_equal(pcm_fabric_load(DATA("fabric/bad_prefix.yaml"), &f, &diag), -EINVAL);
	check_diag(diag.msg, DATA("fabric/bad_prefix.yaml") ":4:1: LINK_MTU: ",
		   "starting with FABRIC_");
	assert_ptr_equal(f, (struct pcm_fabric *)SENTINEL);
	expect_fabric_error("FABRIC_A: 1\nFABRIC_A: 2\n", "f.yaml:2:1: FABRIC_A: ",
			    "duplicate name (first defined at 1:1)");
	expect_fabric_error("- FABRIC_A\n", "f.yaml:1:1: ", "expected a mapping of FABRIC_* names");
	expect_fabric_error("FABRIC_A: [1]\n", "f.yaml:1:11: FABRIC_A: ", "found a list");
	expect_fabric_error("FABRIC_A:\n", "f.yaml:1:1: FABRIC_A: ", "empty value");
	expect_fabric_error("FABRIC_A: 4k\n", "f.yaml:1:11: FABRIC_A: ", "bad number '4k'");
	expect_fabric_error("FABRIC_A: !eval \"1 +\"\n", "f.yaml:1:11: FABRIC_A: ",
			    "expected a value but found the end of the expression at column 4");
}

static void test_fabric_entry_count_is_limited(void **state)
{
	char *yaml = malloc(200 * 32);
	size_t n = 0;

	(void)state;
	for (unsigned i = 0; i < PCM_FABRIC_MAX_ENTRIES + 1; i++)
		n += (size_t)sprintf(yaml + n, "FABRIC_E%u: %u\n", i, i);
	expect_fabric_error(yaml, "f.yaml:129:1: ", "129 entries exceed the limit of 128");
	free(yaml);
}

static void test_empty_fabric_profile_has_no_entries(void **state)
{
	struct pcm_fabric *f = NULL;
	struct pcm_diag diag;

	(void)state;
	assert_int_equal(pcm_fabric_parse("f.yaml", "# nothing\n", 10, &f, &diag), 0);
	assert_int_equal(f->n_entries, 0);
	assert_string_equal(f->path, "f.yaml");
	pcm_fabric_free(f);
}

/* The expression evaluator --------------------------------------------------- */

static int test_lookup(void *ctx, const char *name, size_t len, struct pcm_num *out)
{
	(void)ctx;
	if (len == 3 && memcmp(name, "TEN", 3) == 0) {
		out->type = PCM_NUM_INT;
		out->i = 10;
		return 0;
	}
	if (len == 4 && memcmp(name, "HALF", 4) == 0) {
		out->type = PCM_NUM_FLOAT;
		out->f = 0.5;
		return 0;
	}
	return pcm_expr_builtin(name, len, out);
}

static struct pcm_num eval_ok(const char *text)
{
	struct pcm_expr_error err;
	struct pcm_num num = { 0 };
	int ret = pcm_expr_eval(text, strlen(text), test_lookup, NULL, &num, &err);

	if (ret)
		fail_msg("\"%s\": %s at column %u", text, err.msg, err.col);
	return num;
}

static void assert_int_result(const char *text, int64_t want)
{
	struct pcm_num num = eval_ok(text);

	if (num.type != PCM_NUM_INT || num.i != want)
		fail_msg("\"%s\": type %d value %lld, want int %lld", text, num.type,
			 (long long)num.i, (long long)want);
}

static void assert_uint_result(const char *text, uint64_t want)
{
	struct pcm_num num = eval_ok(text);

	if (num.type != PCM_NUM_UINT || num.u != want)
		fail_msg("\"%s\": type %d value %llu, want uint %llu", text, num.type,
			 (unsigned long long)num.u, (unsigned long long)want);
}

static void assert_float_result(const char *text, double want)
{
	struct pcm_num num = eval_ok(text);

	if (num.type != PCM_NUM_FLOAT || fabs(num.f - want) > 1e-12 * fabs(want))
		fail_msg("\"%s\": type %d value %.17g, want float %.17g", text, num.type, num.f,
			 want);
}

static void assert_expr_error(const char *text, unsigned col, const char *needle)
{
	struct pcm_expr_error err;
	struct pcm_num num;
	int ret = pcm_expr_eval(text, strlen(text), test_lookup, NULL, &num, &err);

	if (ret != -EINVAL || err.col != col || !strstr(err.msg, needle))
		fail_msg("\"%s\": ret %d col %u \"%s\"; want col %u \"%s\"", text, ret, err.col,
			 err.msg, col, needle);
}

static void test_expr_follows_c_precedence(void **state)
{
	(void)state;
	assert_int_result("1 + 2 * 3", 7);
	assert_int_result("(1 + 2) * 3", 9);
	assert_int_result("1 << 2 + 1", 8);
	assert_int_result("7 & 3 == 3", 1);
	assert_int_result("6 ^ 3 | 8", 13);
	assert_int_result("10 - 4 - 3", 3);
	assert_int_result("100 / 10 / 5", 2);
	assert_int_result("-2 * -3", 6);
	assert_int_result("!0 + !5 + ~0", 0);
	assert_int_result("1 < 2 == 2 > 1", 1);
	assert_int_result("0 ? 1 : 2 ? 3 : 4", 3);
	assert_int_result("1 || 0 && 0", 1);
	assert_float_result("TEN % 4 + TEN / 4", 4.5);
	assert_float_result("-7 / 2", -3.5);
	assert_int_result("-8 / 2", -4);
	assert_int_result("-7 % 2", -1);
	assert_int_result("-8 >> 1", -4);
	assert_int_result("0x10 + 010 + 10", 34);
}

/* The SDK evaluates specs in Python: / is true division; exact quotients stay integers. */
static void test_expr_integer_division_is_the_sdks_true_division(void **state)
{
	(void)state;
	assert_float_result("7 / 2", 3.5);
	assert_int_result("8 / 2", 4);
	assert_uint_result("(pcm_uint)TEN * 2 / 4", 5);
	assert_float_result("12000000 / 1000000000000 * 12500000000", 150000.0);
	assert_uint_result("(pcm_uint)(10000000 / 4096)", 2441);
	assert_float_result("(TEN / 4) * 2", 5.0);
	assert_expr_error("7 / 0", 3, "division by zero");
	assert_expr_error("(7 / 2) << 1", 9, "operands of '<<' must be integers");
}

static void test_expr_promotes_like_c(void **state)
{
	(void)state;
	assert_float_result("7 / 2.0", 3.5);
	assert_float_result("(pcm_float)7 / 2", 3.5);
	assert_float_result("(double)TEN / 4", 2.5);
	assert_float_result("TEN * HALF", 5.0);
	assert_uint_result("(pcm_uint)-1", UINT64_MAX);
	assert_uint_result("(uint64_t)3.99", 3);
	assert_int_result("(int64_t)-3.99", -3);
	assert_int_result("(pcm_int)18446744073709551615u", -1);
	assert_int_result("-1 < 1u", 0); /* -1 converts to unsigned */
	assert_uint_result("1u - 2", UINT32_MAX); /* unsigned int arithmetic */
	assert_uint_result("(pcm_uint)1 - 2", UINT64_MAX);
	assert_uint_result("18446744073709551615", UINT64_MAX);
	assert_uint_result("0xFFFFFFFFFFFFFFFF", UINT64_MAX);
	assert_int_result("9223372036854775807", INT64_MAX);
	assert_uint_result("5ull + 1UL + 2lu", 8);
	assert_float_result("MIN(1, 2.5)", 1.0);
	assert_int_result("MAX(-1, 3)", 3);
	assert_uint_result("MAX(-1, 3u)", UINT32_MAX);
	assert_uint_result("MAX(-1, (pcm_uint)3)", UINT64_MAX);
	assert_float_result("1 ? 2 : 3.0", 2.0);
	assert_float_result(".5 + 5. + 1e3 + 2.5E-1", 1005.75);
	assert_uint_result("PCM_RATE_ONE", 1u << 20);
	assert_int_result("2.5 > 2", 1);
}

static void test_expr_unsuffixed_literals_are_32_bit_ints(void **state)
{
	(void)state;
	assert_expr_error("1 << 40", 3, "shift count 40 is out of range 0..31 (unsuffixed");
	assert_expr_error("65536 * 65536", 7, "integer overflow in '*' (unsuffixed literals");
	assert_expr_error("2147483647 + 1", 12, "integer overflow in '+'");
	assert_uint_result("1ull << 40", 1ull << 40);
	assert_int_result("1l << 40", 1ll << 40);
	assert_uint_result("(pcm_uint)1 << 63", 1ull << 63);
	assert_uint_result("65536 * 65536u", 0); /* unsigned int wraps */
	assert_uint_result("4294967295u + 1", 0);
	assert_uint_result("~0u", UINT32_MAX);
	assert_int_result("~0", -1);
	assert_int_result("2147483648", 2147483648ll); /* too big for int: long */
	assert_uint_result("0x80000000", 0x80000000u); /* hex: unsigned int */
	assert_int_result("-2147483648", -2147483648ll);
	assert_int_result("0x80000000 + TEN", 0x80000000ll + 10); /* long holds unsigned int */
	assert_int_result("TEN * 1000000000", 10000000000ll);    /* names are 64-bit */
	assert_int_result("-1 < 1u", 0);
	assert_int_result("-1 < (pcm_int)1u", 1);
}

static void test_expr_math_functions(void **state)
{
	(void)state;
	assert_float_result("sqrt(16)", 4.0);
	assert_float_result("log(exp(2.0))", 2.0);
	assert_float_result("fabs(-2)", 2.0);
	assert_float_result("fmin(3, HALF) + fmax(3, HALF)", 3.5);
	assert_float_result("sqrt(sqrt(sqrt(256.0)))", 2.0);
	/* every function of math, as Python computes it */
	assert_float_result("acos(1) + asin(0) + atan(0) + cos(0) + sin(0) + tan(0)", 1.0);
	assert_float_result("acosh(1) + asinh(0) + atanh(0) + cosh(0) + sinh(0) + tanh(0)", 1.0);
	assert_float_result("atan2(1, 1) * 4", 3.14159265358979323846);
	assert_float_result("cbrt(27)", 3.0);
	assert_float_result("copysign(2, -0.0)", -2.0);
	assert_float_result("degrees(pi) + radians(180)", 180.0 + 3.14159265358979323846);
	assert_float_result("erf(0) + erfc(0)", 1.0);
	assert_float_result("exp(0) + exp2(10) + expm1(0)", 1025.0);
	assert_float_result("fmod(-7, 3)", -1.0);
	assert_float_result("gamma(5) + lgamma(1)", 24.0);
	assert_float_result("hypot(3, 4) + hypot(2, 3, 6)", 12.0);
	assert_float_result("ldexp(0.75, 4)", 12.0);
	assert_float_result("log(8, 2) + log2(1024) + log10(1000) + log1p(0)", 16.0);
	assert_float_result("nextafter(1, 2) - 1", 2.220446049250313e-16);
	assert_float_result("remainder(7, 4)", -1.0);
	assert_float_result("ulp(1.0)", 2.220446049250313e-16);
	assert_float_result("pi + e + tau", 3 * 3.14159265358979323846 + 2.718281828459045);
	assert_int_result("isclose(0.1 + 0.2, 0.3) + isfinite(1) + isinf(inf) + isnan(nan)", 4);
	assert_int_result("isclose(1, 1.001)", 0);
	/* integers where Python returns integers */
	assert_int_result("floor(2.7) + ceil(2.2) + trunc(-2.7)", 3);
	assert_int_result("floor(-2.5)", -3);
	assert_int_result("ceil(TEN)", 10);
	assert_int_result("gcd(12, 18, -8) + gcd()", 2);
	assert_int_result("lcm(4, 6, 10) + lcm()", 61);
	assert_int_result("isqrt(99)", 9);
	assert_int_result("factorial(20)", 2432902008176640000ll);
	assert_int_result("comb(52, 5) + comb(3, 5)", 2598960);
	assert_int_result("perm(5, 2) + perm(4)", 44);
}

/* Python's numeric built-ins, with Python's types: the SDK's evaluator has them in scope. */
static void test_expr_python_builtins(void **state)
{
	(void)state;
	assert_int_result("min(3, 1, 2)", 1);
	assert_int_result("min(1, 2.5)", 1); /* the argument itself, not its common type */
	assert_float_result("max(1, 2.5, -TEN)", 2.5);
	assert_int_result("max(2, 2.0)", 2); /* the first of equals */
	assert_int_result("abs(-7) + abs(TEN)", 17);
	assert_float_result("abs(-HALF)", 0.5);
	assert_int_result("round(2.5) + round(3.5) + round(-2.5)", 4); /* half to even: 2 + 4 - 2 */
	assert_int_result("round(0.4999999999999999)", 0);
	assert_float_result("round(2.675, 2)", 2.67); /* 2.675 is 2.67499999... */
	assert_float_result("round(1234.5678, -2)", 1200.0);
	assert_int_result("round(1250, -2) + round(1350, -2)", 2600); /* 1200 + 1400 */
	assert_int_result("round(TEN, 3)", 10);
	assert_int_result("int(7 / 2) + int(-3.99) + int(TEN)", 10);
	assert_float_result("float(7)", 7.0);
	assert_int_result("bool(HALF) + bool(0) + bool(-1)", 2);
	/* math's pow, which the SDK's scope puts over the built-in: a float */
	assert_float_result("pow(2, 10)", 1024.0);
	assert_float_result("pow(2, 64)", 18446744073709551616.0);
	assert_float_result("pow(2, -1)", 0.5);
	assert_uint_result("(pcm_uint)ceil(pow(2.0 * 12 / 0.4, 1.0 / 3.0))", 4); /* cubic.yaml */
}

static void test_expr_python_errors(void **state)
{
	(void)state;
	assert_expr_error("sqrt(-1)", 1, "sqrt(): math domain error");
	assert_expr_error("log(0)", 1, "log(): math domain error");
	assert_expr_error("log(8, 1)", 1, "log(): float division by zero");
	assert_expr_error("exp(1000)", 1, "exp(): math range error");
	assert_expr_error("gamma(-2)", 1, "gamma(): math domain error");
	assert_expr_error("fmod(1, 0)", 1, "fmod(): math domain error");
	assert_expr_error("pow(0.0, -1)", 1, "pow(): math domain error");
	assert_expr_error("pow(-8, 1.0 / 3)", 1, "pow(): math domain error");
	assert_expr_error("pow(10, 400)", 1, "pow(): math range error");
	assert_expr_error("pow(2, 3, 5)", 1, "pow() takes 2 arguments, not 3");
	assert_expr_error("factorial(21)", 1, "factorial(): the integer result is out of 64-bit");
	assert_expr_error("factorial(-1)", 1, "not defined for negative values");
	assert_expr_error("gcd(4, 2.0)", 1, "gcd(): a float cannot be interpreted as an integer");
	/* each argument that the table marks as an integer, and only those */
	assert_expr_error("lcm(4, 6, 2.0)", 1, "lcm(): a float cannot be interpreted as an integer");
	assert_expr_error("isqrt(4.0)", 1, "isqrt(): a float cannot be interpreted as an integer");
	assert_expr_error("factorial(3.0)", 1, "factorial(): a float cannot be interpreted");
	assert_expr_error("comb(5.0, 2)", 1, "comb(): a float cannot be interpreted as an integer");
	assert_expr_error("comb(5, 2.0)", 1, "comb(): a float cannot be interpreted as an integer");
	assert_expr_error("perm(5.0)", 1, "perm(): a float cannot be interpreted as an integer");
	assert_expr_error("ldexp(1, 2.0)", 1, "ldexp(): a float cannot be interpreted as an integer");
	assert_expr_error("round(2.5, 1.0)", 1, "round(): a float cannot be interpreted as an integer");
	assert_float_result("ldexp(1.5, 2)", 6.0);
	assert_int_result("round(2.5)", 2);
	assert_expr_error("isqrt(-1)", 1, "must be nonnegative");
	assert_expr_error("int(inf)", 1, "int(): cannot convert float infinity to integer");
	assert_expr_error("floor(nan)", 1, "floor(): cannot convert float NaN to integer");
	assert_expr_error("floor(1e300)", 1, "out of 64-bit range");
	assert_expr_error("inf", 1, "the value is infinite");
	assert_expr_error("min(1)", 1, "min() takes at least 2 arguments, not 1");
	assert_expr_error("round(1, 2, 3)", 1, "round() takes at most 2 arguments, not 3");
	assert_expr_error("round()", 1, "round() takes at least 1 argument, not 0");
	assert_expr_error("MIN(1, 2, 3)", 1, "MIN() takes 2 arguments, not 3");
	assert_expr_error("sum(1, 2)", 1, "sum() takes an iterable; !eval has no lists");
	assert_expr_error("frexp(1.5)", 1, "frexp() returns a tuple");
	assert_expr_error("len(1)", 1, "unknown function 'len' (!eval has Python's built-ins");
	/* the SDK's package that failed: momentum.yaml's MAXIMUM_CWND_BYTES */
	assert_int_result("min(TEN * 262926, 175284)", 175284);
	/* what C would not evaluate is not an error, as before */
	assert_int_result("0 ? sqrt(-1) : factorial(3)", 6);
}

static void test_expr_errors_report_their_column(void **state)
{
	char deep[200];

	(void)state;
	assert_expr_error("1 +", 4, "expected a value but found the end of the expression");
	assert_expr_error("(1 + 2", 7, "expected ')'");
	assert_expr_error("1 2", 3, "expected an operator but found '2'");
	assert_expr_error("2 * NOPE", 5, "unknown name 'NOPE'");
	assert_expr_error("1 / 0", 3, "division by zero");
	assert_expr_error("1.0 / 0", 5, "division by zero");
	assert_expr_error("5 % (TEN - 10)", 3, "modulo by zero");
	assert_expr_error("1 << 64", 3, "shift count 64 is out of range");
	assert_expr_error("1 >> -1", 3, "shift count -1 is out of range");
	assert_expr_error("-1 << 2", 4, "left shift of a negative value");
	assert_expr_error("9223372036854775807 + 1", 21, "integer overflow in '+'");
	assert_expr_error("(-9223372036854775807 - 1) / -1", 28, "integer overflow in '/'");
	assert_expr_error("-(-9223372036854775807 - 1)", 1, "integer overflow in '-'");
	assert_expr_error("1 @ 2", 3, "unexpected character '@'");
	assert_expr_error("12x", 1, "bad number '12x'");
	assert_expr_error("1.5f", 1, "bad number '1.5f'");
	assert_expr_error("99999999999999999999", 1, "too large");
	assert_expr_error("cbrtt(8)", 1, "unknown function 'cbrtt'");
	assert_expr_error("sqrt(1, 2)", 1, "sqrt() takes 1 argument, not 2");
	assert_expr_error("pow(2)", 1, "pow() takes 2 arguments, not 1");
	assert_expr_error("2.5 % 2", 5, "operands of '%' must be integers");
	assert_expr_error("1.0 << 2", 5, "must be integers");
	assert_expr_error("~1.5", 1, "the operand of '~' must be an integer");
	assert_expr_error("sqrt(-1)", 1, "sqrt(): math domain error");
	assert_expr_error("1e308 * 10", 7, "floating-point overflow");
	assert_expr_error("(pcm_uint)-1.0", 1, "out of range for a cast to uint");
	assert_expr_error("pcm_uint + 1", 1, "type name 'pcm_uint' outside a cast");
	assert_expr_error("(pcm_uint 1", 11, "expected ')' after the type name");
	assert_expr_error("1 ? 2", 6, "expected ':'");
	assert_expr_error("MIN(1 2)", 7, "expected ',' or ')'");
	assert_expr_error("", 1, "expected a value");
	memset(deep, '(', 65);
	deep[65] = '1';
	memset(deep + 66, ')', 65);
	deep[131] = '\0';
	assert_expr_error(deep, 65, "nests deeper than 64 levels");
}

static void test_expr_skips_operands_c_does_not_evaluate(void **state)
{
	(void)state;
	assert_int_result("0 && 1 / 0", 0);
	assert_int_result("1 || 1 << 99", 1);
	assert_int_result("1 ? 2 : 1 / 0", 2);
	assert_int_result("0 ? sqrt(-1) > 0 : 7", 7);
	/* A name must still exist where C would not evaluate it. */
	assert_expr_error("0 && NOPE", 6, "unknown name 'NOPE'");
}

static void test_expr_depth_is_bounded_for_huge_inputs(void **state)
{
	size_t len = PCM_EXPR_MAX_LEN;
	char *text = malloc(len + 2);
	struct pcm_expr_error err;
	struct pcm_num num;

	(void)state;
	memset(text, '(', len);
	assert_int_equal(pcm_expr_eval(text, len, NULL, NULL, &num, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "nests deeper"));
	memset(text, '-', len);
	assert_int_equal(pcm_expr_eval(text, len, NULL, NULL, &num, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "nests deeper"));
	memset(text, '1', len + 1);
	assert_int_equal(pcm_expr_eval(text, len + 1, NULL, NULL, &num, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "longer than 4096"));
	free(text);
}

static void test_plain_numbers_parse_with_a_sign(void **state)
{
	struct pcm_num num;

	(void)state;
	assert_int_equal(pcm_number_parse("-5", 2, &num), 0);
	assert_int_equal(num.type, PCM_NUM_INT);
	assert_int_equal(num.i, -5);
	assert_int_equal(pcm_number_parse("-9223372036854775808", 20, &num), 0);
	assert_true(num.type == PCM_NUM_INT && num.i == INT64_MIN);
	assert_int_equal(pcm_number_parse("-9223372036854775809", 20, &num), -ERANGE);
	assert_int_equal(pcm_number_parse("+0x10", 5, &num), 0);
	assert_int_equal(num.i, 16);
	assert_int_equal(pcm_number_parse("-2.5e1", 6, &num), 0);
	assert_true(num.type == PCM_NUM_FLOAT && num.f == -25.0);
	assert_int_equal(pcm_number_parse("", 0, &num), -EINVAL);
	assert_int_equal(pcm_number_parse("-", 1, &num), -EINVAL);
	assert_int_equal(pcm_number_parse("1 ", 2, &num), -EINVAL);
	assert_int_equal(pcm_number_parse("08", 2, &num), -EINVAL);
	assert_int_equal(pcm_number_parse("1e999", 5, &num), -ERANGE);
}

static void test_num_convert_is_exact(void **state)
{
	struct pcm_num num = { .type = PCM_NUM_FLOAT };

	(void)state;
	num.f = 4.0;
	assert_int_equal(pcm_num_convert(&num, PCM_NUM_UINT), 0);
	assert_int_equal(num.u, 4);
	num.type = PCM_NUM_FLOAT;
	num.f = 4.5;
	assert_int_equal(pcm_num_convert(&num, PCM_NUM_INT), -EDOM);
	num.f = 18446744073709551616.0;
	assert_int_equal(pcm_num_convert(&num, PCM_NUM_UINT), -ERANGE);
	num.f = -1.0;
	assert_int_equal(pcm_num_convert(&num, PCM_NUM_UINT), -ERANGE);
	num.type = PCM_NUM_UINT;
	num.u = UINT64_MAX;
	assert_int_equal(pcm_num_convert(&num, PCM_NUM_INT), -ERANGE);
	num.type = PCM_NUM_INT;
	num.i = -2;
	assert_int_equal(pcm_num_convert(&num, PCM_NUM_FLOAT), 0);
	assert_true(num.type == PCM_NUM_FLOAT && num.f == -2.0);
}

static void test_name_lookup_and_suggestions(void **state)
{
	unsigned value;
	char list[128];

	(void)state;
	assert_int_equal(pcm_name_lookup(PCM_NAMES_TRIGGER_OP, "||", &value), 0);
	assert_int_equal(value, PCM_TRIG_OP_OR);
	assert_int_equal(pcm_name_lookup(PCM_NAMES_TRIGGER, "PCM_SIG_TRIGGER_NONE", &value),
			 -ENOENT);
	assert_string_equal(pcm_name_closest(PCM_NAMES_CONTROL, "PCM_CTRL_CWN"), "PCM_CTRL_CWND");
	assert_null(pcm_name_closest(PCM_NAMES_SIGNAL, "SOMETHING_ELSE"));
	pcm_name_list(PCM_NAMES_ACCUM, list, sizeof(list));
	assert_string_equal(list, "PCM_SIG_ACCUM_SUM, PCM_SIG_ACCUM_MIN, PCM_SIG_ACCUM_MAX, "
				  "PCM_SIG_ACCUM_LAST");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_spec_constants_keep_c_text_and_value),
		cmocka_unit_test(test_full_spec_signals_have_every_field),
		cmocka_unit_test(test_full_spec_controls_and_variable_slots),
		cmocka_unit_test(test_all_trigger_ops_parse_to_their_enum),
		cmocka_unit_test(test_all_signal_types_and_accumulators_parse),
		cmocka_unit_test(test_absent_and_empty_lists_are_accepted),
		cmocka_unit_test(test_uint64_max_values_parse_exactly),
		cmocka_unit_test(test_reset_upon_trigger_accepts_strings_and_yaml_booleans),
		cmocka_unit_test(test_variable_scope_is_flow_or_instance),
		cmocka_unit_test(test_descriptions_and_quoted_values_as_the_sdk_writes_them),
		cmocka_unit_test(test_no_trigger_threshold_arms_no_trigger),
		cmocka_unit_test(test_names_the_c_library_or_compiler_define_are_reserved),
		cmocka_unit_test(test_constants_convert_to_their_declared_type),
		cmocka_unit_test(test_exactly_64_signals_are_accepted),
		cmocka_unit_test(test_65_signals_exceed_the_trigger_mask),
		cmocka_unit_test(test_every_policy_in_the_tree_loads),
		cmocka_unit_test(test_unknown_signal_type_suggests_the_closest),
		cmocka_unit_test(test_duplicate_signal_name_reports_both_locations),
		cmocka_unit_test(test_names_are_unique_across_sections),
		cmocka_unit_test(test_missing_algorithm_name_points_at_the_algorithm_mapping),
		cmocka_unit_test(test_bad_number_names_the_literal),
		cmocka_unit_test(test_values_must_fit_their_type),
		cmocka_unit_test(test_arr_len_over_the_limit_is_rejected),
		cmocka_unit_test(test_variable_slots_are_limited_in_total),
		cmocka_unit_test(test_eval_unknown_name_reports_its_column),
		cmocka_unit_test(test_fabric_names_without_a_profile_say_so),
		cmocka_unit_test(test_constants_resolve_in_dependency_order),
		cmocka_unit_test(test_constant_cycles_are_errors_that_name_the_constants),
		cmocka_unit_test(test_eval_errors_are_reported_with_the_key),
		cmocka_unit_test(test_yaml_syntax_errors_report_the_position),
		cmocka_unit_test(test_aliases_and_anchors_are_rejected),
		cmocka_unit_test(test_unknown_keys_are_named),
		cmocka_unit_test(test_duplicate_keys_are_rejected),
		cmocka_unit_test(test_structure_errors_name_what_was_found),
		cmocka_unit_test(test_enum_fields_reject_unknown_spellings),
		cmocka_unit_test(test_trigger_type_needs_a_threshold),
		cmocka_unit_test(test_required_item_keys_are_enforced),
		cmocka_unit_test(test_names_must_be_short_c_identifiers_and_not_reserved),
		cmocka_unit_test(test_list_limits_are_checked_before_allocation),
		cmocka_unit_test(test_missing_file_returns_enoent_with_its_name),
		cmocka_unit_test(test_inputs_over_one_mib_are_rejected),
		cmocka_unit_test(test_input_size_error_names_the_file_size),
		cmocka_unit_test(test_default_fabric_has_the_sdk_values),
		cmocka_unit_test(test_fabric_eval_uses_earlier_entries),
		cmocka_unit_test(test_fabric_errors_name_the_entry),
		cmocka_unit_test(test_fabric_entry_count_is_limited),
		cmocka_unit_test(test_empty_fabric_profile_has_no_entries),
		cmocka_unit_test(test_expr_follows_c_precedence),
		cmocka_unit_test(test_expr_integer_division_is_the_sdks_true_division),
		cmocka_unit_test(test_expr_promotes_like_c),
		cmocka_unit_test(test_expr_unsuffixed_literals_are_32_bit_ints),
		cmocka_unit_test(test_expr_math_functions),
		cmocka_unit_test(test_expr_python_builtins),
		cmocka_unit_test(test_expr_python_errors),
		cmocka_unit_test(test_expr_errors_report_their_column),
		cmocka_unit_test(test_expr_skips_operands_c_does_not_evaluate),
		cmocka_unit_test(test_expr_depth_is_bounded_for_huge_inputs),
		cmocka_unit_test(test_plain_numbers_parse_with_a_sign),
		cmocka_unit_test(test_num_convert_is_exact),
		cmocka_unit_test(test_name_lookup_and_suggestions),
	};

	return cmocka_run_group_tests(tests, load_fabric, free_fabric);
}
