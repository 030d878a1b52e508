// SPDX-License-Identifier: MIT
/*
 * test_pipeline_diff.c - the two shells run one pipeline: a differential test.
 *
 * The same seeded stream of events and ticks goes through the synchronous
 * shell and through the asynchronous one in each snapshot mode, the
 * asynchronous workers polled until nothing is pending after every event, so
 * the two must agree exactly: after each event, every signal, control and
 * variable of the flow, and the count of calls and errors. It runs every
 * built-in policy and test package, then randomly generated packages built
 * with `pcmc build`: their specs draw every accumulator, trigger type and
 * operator, thresholds, reset flags and timers; their handlers write signals
 * with signed deltas, re-arm them, set controls and variables from what
 * they saw, and sometimes fail. The events carry huge samples (SUM
 * saturation) and `now` sometimes goes backwards.
 *
 *   PCM_DIFF_SPECS=N  random packages (default 24; suite `slow`: 400)
 *   PCM_DIFF_SEED=S   first package's seed (default 1)
 * A failing package names its seed, the event and the slot that differed,
 * and keeps its spec and handler in the scratch directory.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "async.h"
#include "builtin.h"
#include "shell.h"
#include "test_util.h"

extern const struct pcm_package pcm_pkg_accum_probe;
extern const struct pcm_package pcm_pkg_pair_probe;
extern const struct pcm_package pcm_pkg_trigger_probe;
extern const struct pcm_package pcm_pkg_writer_probe;

#define BIT(t) ((pcm_uint)1 << (t))
#define MSS 4096
#define FLOWS 3
#define PCMC PCM_BUILD_ROOT "/cli/pcmc"
#define FABRIC PCM_SOURCE_ROOT "/policies/fabric/default.yaml"

static char scratch[256];

/* ---- one package through both shells ------------------------------------------------------ */

static pcm_uint random_value(unsigned type, uint64_t *rng, bool huge)
{
	uint64_t r = tu_xorshift(rng);

	if (huge && r % 997 == 0)
		return UINT64_MAX - r % 100; /* drives SUMs into saturation */
	switch (type) {
	case PCM_SIG_RTT:
	case PCM_SIG_QUEUE_DELAY:
		return 10000000 + (r >> 8) % 30000000 + ((r >> 40) % 20 == 0 ? 500000000 : 0);
	case PCM_SIG_DATA_TX:
	case PCM_SIG_DATA_NACKED:
	case PCM_SIG_TX_BACKLOG_BYTES:
		return ((r >> 8) % 3) * MSS;
	case PCM_SIG_IN_FLIGHT:
		return (r >> 8) % 11;
	default:
		return (r >> 8) % 5;
	}
}

struct diff_run {
	const struct pcm_package *pkg;
	const char *label;
	uint64_t seed;
	uint32_t events;
	bool huge;        /* saturating samples: policies would loop on them, probes do not */
	bool time_goes_back;
};

static struct pcm_async *make_async(const struct pcm_package *pkg, enum pcm_async_mode mode)
{
	struct pcm_async_config cfg;
	struct pcm_async *as = NULL;
	struct pcm_diag diag;

	pcm_async_config_default(&cfg);
	cfg.mode = mode;
	cfg.n_workers = 2;
	if (pcm_async_create(pkg, NULL, FLOWS, 0, &cfg, &as, &diag) != 0)
		fail_msg("%s: %s", pkg->name, diag.msg);
	return as;
}

static void compare_flow(const struct diff_run *r, struct pcm_shell *sh, struct pcm_async *as,
			 uint32_t flow, uint64_t step)
{
	const pcm_uint *rec = pcm_shell_record(sh, flow);
	pcm_uint s[8192];

	assert_true(r->pkg->handler_slots <= 8192);
	assert_int_equal(pcm_async_flow_peek(as, flow, s), 0);
	for (uint32_t i = PCM_REC_SIGNALS_SLOT; i < r->pkg->handler_slots; i++)
		if (rec[i] != s[i])
			fail_msg("%s (seed %" PRIu64 ") %s: event %" PRIu64 ", flow %u, slot %u: "
				 "sync %llu, async %llu",
				 r->label, r->seed, pcm_async_mode_name(pcm_async_get_mode(as)), step,
				 flow, i, (unsigned long long)rec[i], (unsigned long long)s[i]);
}

static void run_diff(const struct diff_run *r, enum pcm_async_mode mode)
{
	struct pcm_async *as = make_async(r->pkg, mode);
	uint64_t rng = r->seed * 0x2545f4914f6cdd1dull + 1 + (uint64_t)mode, sync_errors = 0;
	struct pcm_shell *sh = NULL;
	struct pcm_async_stats st;
	struct pcm_shell_stats ss;
	struct pcm_diag diag;
	pcm_uint now = 1000000, types = r->pkg->signal_types;

	assert_int_equal(pcm_shell_create(r->pkg, NULL, FLOWS, 0, &sh, &diag), 0);
	for (uint64_t step = 0; step < r->events; step++) {
		uint32_t flow = (uint32_t)(tu_xorshift(&rng) % FLOWS);
		struct pcm_event ev = { 0 };
		int rc;

		if (r->time_goes_back && tu_xorshift(&rng) % 13 == 0)
			now -= tu_xorshift(&rng) % 400000;
		else
			now += tu_xorshift(&rng) % 300000;
		if (tu_xorshift(&rng) % 10 == 0) {
			rc = pcm_shell_tick(sh, flow, now);
			pcm_async_tick(as, flow, now);
		} else {
			ev.valid = tu_xorshift(&rng) & (types | BIT(PCM_SIG_TX_EVENT));
			for (unsigned t = 0; t < PCM_SIG_COUNT; t++)
				ev.values[t] = random_value(t, &rng, r->huge);
			rc = pcm_shell_feed(sh, flow, &ev, now);
			pcm_async_feed(as, flow, &ev, now);
		}
		sync_errors += rc < 0;
		while (pcm_async_poll(as, 0, 64) + pcm_async_poll(as, 1, 64) > 0)
			;
		compare_flow(r, sh, as, flow, step);
	}
	assert_int_equal(pcm_async_stats(as, UINT32_MAX, &st), 0);
	pcm_shell_stats(sh, &ss);
	if (st.handler_calls != ss.handler_calls || st.handler_errors != sync_errors)
		fail_msg("%s (seed %" PRIu64 ") %s: sync made %llu calls (%llu errors), async %llu "
			 "(%llu)",
			 r->label, r->seed, pcm_async_mode_name(mode),
			 (unsigned long long)ss.handler_calls, (unsigned long long)sync_errors,
			 (unsigned long long)st.handler_calls,
			 (unsigned long long)st.handler_errors);
	for (uint32_t f = 0; f < FLOWS; f++) {
		struct pcm_control_set a, b;

		assert_int_equal(pcm_shell_controls(sh, f, &a), 0);
		assert_int_equal(pcm_async_controls(as, f, &b), 0);
		assert_int_equal(a.mask, b.mask);
		assert_memory_equal(a.value, b.value, sizeof(a.value));
	}
	pcm_shell_destroy(sh);
	pcm_async_destroy(as);
}

static void run_all_modes(const struct diff_run *r)
{
	for (unsigned m = 0; m < PCM_ASYNC_MODE_COUNT; m++)
		run_diff(r, (enum pcm_async_mode)m);
}

static void test_builtin_policies_and_probes_agree_in_both_shells(void **state)
{
	const struct pcm_package *probes[] = { &pcm_pkg_accum_probe, &pcm_pkg_pair_probe,
					       &pcm_pkg_trigger_probe, &pcm_pkg_writer_probe };

	for (size_t k = 0; k < sizeof(probes) / sizeof(probes[0]); k++) {
		struct diff_run r = { .pkg = probes[k], .label = probes[k]->name, .seed = k + 1,
				      .events = 3000, .huge = true, .time_goes_back = true };

		run_all_modes(&r);
	}
	for (size_t k = 0; pcm_builtin_policies[k]; k++) {
		struct diff_run r = { .pkg = pcm_builtin_policies[k],
				      .label = pcm_builtin_policies[k]->name, .seed = 100 + k,
				      .events = 3000, .time_goes_back = true };

		run_all_modes(&r);
	}
}

/* ---- random packages ---------------------------------------------------------------------- */

static const char *const accum_names[] = { "PCM_SIG_ACCUM_SUM", "PCM_SIG_ACCUM_MIN",
					   "PCM_SIG_ACCUM_MAX", "PCM_SIG_ACCUM_LAST" };
static const char *const trigger_names[] = { "PCM_SIG_TRIGGER_RAW", "PCM_SIG_TRIGGER_DELTA",
					     "PCM_SIG_TRIGGER_MAGNITUDE" };
static const char *const op_texts[] = { ">", "<", ">=", "<=", "==", "!=", "&", "|", "^", "&&",
					"||" };
static const char *const control_names[] = { "PCM_CTRL_CWND", "PCM_CTRL_RATE", "PCM_CTRL_EV",
					     "PCM_CTRL_CUMULATIVE_CREDIT" };
/* signal types the random events carry, ELAPSED_TIME (a timer) among them */
static const char *const type_names[] = {
	"PCM_SIG_ACK",	   "PCM_SIG_NACK",	   "PCM_SIG_ECN",	"PCM_SIG_RTT",
	"PCM_SIG_DATA_TX", "PCM_SIG_IN_FLIGHT",	   "PCM_SIG_ELAPSED_TIME", "PCM_SIG_ACK_EV",
	"PCM_SIG_TX_READY_PKTS", "PCM_SIG_TX_BACKLOG_BYTES", "PCM_SIG_CNP", "PCM_SIG_QUEUE_DELAY",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_RSIG 12

struct rspec {
	unsigned n_sig, n_ctrl, n_var;
	bool elapsed[MAX_RSIG];
};

static uint64_t pick(uint64_t *rng, uint64_t n)
{
	return tu_xorshift(rng) % n;
}

static void write_signal(FILE *f, uint64_t *rng, unsigned i, struct rspec *rs)
{
	unsigned type = (unsigned)pick(rng, COUNT(type_names));
	unsigned accum = (unsigned)pick(rng, 4);

	rs->elapsed[i] = strcmp(type_names[type], "PCM_SIG_ELAPSED_TIME") == 0;
	fprintf(f, "  - name: S%u\n    type: %s\n    accumulation: %s\n", i, type_names[type],
		accum_names[accum]);
	if (accum == 1) /* MIN needs room to go down */
		fprintf(f, "    initial_value: %s\n", pick(rng, 2) ? "0xFFFFFFFFFFFFFFFF" : "40000000");
	else if (pick(rng, 4) == 0)
		fprintf(f, "    initial_value: %llu\n", (unsigned long long)pick(rng, 8));
	if (pick(rng, 3) != 0) {
		unsigned trig = rs->elapsed[i] ? 0 : (unsigned)pick(rng, 3);
		uint64_t thr = rs->elapsed[i] ? 1000000 + pick(rng, 3000000) : pick(rng, 12);

		fprintf(f, "    trigger_type: %s\n    trigger_op: \"%s\"\n    trigger_threshold: %llu\n",
			trigger_names[trig], op_texts[pick(rng, COUNT(op_texts))],
			(unsigned long long)thr);
	}
	if (pick(rng, 3) == 0)
		fputs("    reset_upon_trigger: \"false\"\n", f);
}

static void write_spec(const char *path, const char *name, uint64_t *rng, struct rspec *rs)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	rs->n_sig = 1 + (unsigned)pick(rng, MAX_RSIG);
	fprintf(f, "algorithm:\n  name: %s\nsignals:\n", name);
	for (unsigned i = 0; i < rs->n_sig; i++)
		write_signal(f, rng, i, rs);
	/* one control of each drawn type, so that every control is observable */
	rs->n_ctrl = 0;
	fputs("controls:\n", f);
	for (unsigned k = 0; k < 4; k++) {
		if (pick(rng, 2) || (k == 3 && !rs->n_ctrl)) {
			fprintf(f, "  - name: C%u\n    type: %s\n    initial_value: %llu\n", rs->n_ctrl++,
				control_names[k], (unsigned long long)pick(rng, 100));
		}
	}
	rs->n_var = 1 + (unsigned)pick(rng, 3);
	fputs("variables:\n", f);
	for (unsigned v = 0; v < rs->n_var; v++)
		fprintf(f, "  - name: V%u\n    type: uint\n", v);
	fclose(f);
}

/* A handler that depends on everything it sees and writes signals in every way the API allows. */
static void write_handler(const char *path, const char *name, uint64_t *rng,
			  const struct rspec *rs)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "#include \"%s.h\"\n#include \"pcmh.h\"\n\nint algorithm_main()\n{\n"
		   "\tpcm_uint m = get_signal_trigger_mask(), acc = m;\n\n",
		name);
	for (unsigned i = 0; i < rs->n_sig; i++)
		fprintf(f, "\tacc = acc * 31 + get_signal(S%u);\n", i);
	for (unsigned c = 0; c < rs->n_ctrl; c++)
		fprintf(f, "\tacc = acc * 7 + get_control(C%u);\n", c);
	for (unsigned v = 0; v < rs->n_var; v++)
		fprintf(f, "\tset_var_uint(V%u, get_var_uint(V%u) * 3 + acc + %u);\n", v, v, v);
	for (unsigned i = 0; i < rs->n_sig; i++) {
		if (rs->elapsed[i])
			continue;
		switch (pick(rng, 5)) {
		case 0:
			fprintf(f, "\tif (m & S%u)\n\t\tupdate_signal(S%u, -(pcm_int)(acc %% 3));\n",
				(unsigned)pick(rng, rs->n_sig), i);
			break;
		case 1:
			fprintf(f, "\tif (acc %% 5 == 0)\n\t\tset_signal(S%u, PCM_SIG_REARM);\n", i);
			break;
		case 2:
			fprintf(f, "\tif (acc %% 4 == 1)\n\t\tset_signal(S%u, acc %% 1000);\n", i);
			break;
		case 3:
			fprintf(f, "\tupdate_signal(S%u, acc %% 2);\n", i);
			break;
		default:
			break;
		}
	}
	for (unsigned c = 0; c < rs->n_ctrl; c++)
		fprintf(f, "\tset_control(C%u, get_control(C%u) + acc %% 100);\n", c, c);
	fputs("\treturn acc % 53 == 0 ? PCM_ERROR : PCM_SUCCESS;\n}\n", f);
	fclose(f);
}

static void run_random_package(uint64_t seed)
{
	char name[64], spec[512], handler[512], so[512], cmd[2048], out[8192], err[512];
	uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 7;
	struct pcm_package_handle h;
	struct rspec rs;

	snprintf(name, sizeof(name), "rspec_%" PRIu64, seed);
	snprintf(spec, sizeof(spec), "%s/%s.yaml", scratch, name);
	snprintf(handler, sizeof(handler), "%s/%s.c", scratch, name);
	snprintf(so, sizeof(so), "%s/%s.so", scratch, name);
	write_spec(spec, name, &rng, &rs);
	write_handler(handler, name, &rng, &rs);
	snprintf(cmd, sizeof(cmd), "%s build %s %s --fabric %s --target reference -o %s", PCMC,
		 spec, handler, FABRIC, so);
	if (tu_run(cmd, out, sizeof(out)) != 0)
		fail_msg("random package %" PRIu64 ": pcmc build failed:\n%s", seed, out);
	assert_int_equal(pcm_package_open(so, NULL, &h, err, sizeof(err)), 0);
	{
		struct diff_run r = { .pkg = h.pkg, .label = spec, .seed = seed, .events = 1500,
				      .huge = true, .time_goes_back = true };

		run_all_modes(&r);
	}
	pcm_package_close(&h);
	unlink(spec);
	unlink(handler);
	unlink(so);
}

static void test_random_packages_agree_in_both_shells(void **state)
{
	const char *n_env = getenv("PCM_DIFF_SPECS"), *s_env = getenv("PCM_DIFF_SEED");
	uint64_t n = n_env ? strtoull(n_env, NULL, 10) : 24;
	uint64_t first = s_env ? strtoull(s_env, NULL, 10) : 1;

	for (uint64_t seed = first; seed < first + n; seed++)
		run_random_package(seed);
	print_message("%" PRIu64 " random packages agree event by event in all three modes\n", n);
}

static int make_scratch(void **state)
{
	snprintf(scratch, sizeof(scratch), "/tmp/pcm-test-diff.XXXXXX");
	return mkdtemp(scratch) ? 0 : -1;
}

static int remove_scratch(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rmdir '%s' 2>/dev/null", scratch);
	return system(cmd) < 0 ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_policies_and_probes_agree_in_both_shells),
		cmocka_unit_test(test_random_packages_agree_in_both_shells),
	};

	return cmocka_run_group_tests(tests, make_scratch, remove_scratch);
}
