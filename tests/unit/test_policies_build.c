// SPDX-License-Identifier: MIT
/*
 * test_policies_build.c - the policy library as a whole: which datapaths
 * each package runs on (the capability table the catalogue states), and
 * that every package builds with `pcmc build` in each fixed-point format,
 * loads, and runs one mixed trace: integer policies (load balancers, eqds)
 * give exactly the double build's outputs, the others stay close to it in
 * Q42.22 and Q32.32 and inside their control's range in Q16.16.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy_harness.h"
#include "test_util.h"

#define PCMC PCM_BUILD_ROOT "/cli/pcmc"
#define FABRIC PCM_SOURCE_ROOT "/policies/fabric/default.yaml"

/* The policy library and where each package runs. */
struct entry {
	const char *name;
	bool verbs; /* also softnic: the CPU transport's signals and controls */
	bool doca;
	bool integer; /* no pcm_fx state: every arithmetic gives the same outputs */
};

static const struct entry library[] = {
	{ "cubic", true, false, false },   { "dcqcn", false, true, false },
	{ "dctcp", true, false, false },   { "doca_ecn_aimd", false, true, true },
	{ "ecmp_static", true, false, true }, { "eqds", false, false, true },
	{ "mprdma", true, false, false },
	{ "newreno", true, false, false }, { "nscc", true, false, false },
	{ "ops", true, false, true },	   { "reps", true, false, true },
	{ "smartt", true, false, false },  { "strack", true, false, true },
	{ "timely", true, true, false },   { "uec_dctcp", true, false, false },
};

#define N_LIB (sizeof(library) / sizeof(library[0]))

static const struct pcm_package *builtin(const char *name)
{
	struct pcm_package_handle h;
	char err[256];

	assert_int_equal(pcm_package_open(name, pcm_builtin_policies, &h, err, sizeof(err)), 0);
	return h.pkg;
}

static void test_every_policy_runs_on_the_targets_its_catalogue_entry_names(void **state)
{
	for (size_t i = 0; i < N_LIB; i++) {
		const struct pcm_package *pkg = builtin(library[i].name);
		struct pcm_diag diag;

		assert_int_equal(pcm_target_check_package(pcm_target_find("uet"), pkg, &diag), 0);
		assert_int_equal(pcm_target_check_package(pcm_target_find("verbs"), pkg, &diag),
				 library[i].verbs ? 0 : -ENOTSUP);
		assert_int_equal(pcm_target_check_package(pcm_target_find("softnic"), pkg, &diag),
				 library[i].verbs ? 0 : -ENOTSUP);
		assert_int_equal(pcm_target_check_package(pcm_target_find("doca"), pkg, &diag),
				 library[i].doca ? 0 : -ENOTSUP);
	}
}

static void test_every_builtin_policy_is_in_the_library_table(void **state)
{
	unsigned n = 0;

	for (size_t k = 0; pcm_builtin_policies[k]; k++) {
		const char *name = pcm_builtin_policies[k]->name;
		bool found = strcmp(name, "swift") == 0;

		for (size_t i = 0; i < N_LIB && !found; i++)
			found = strcmp(library[i].name, name) == 0;
		if (!found)
			fail_msg("built-in policy %s is not in this test's table", name);
		n++;
	}
	assert_int_equal(n, N_LIB + 1);
}

/* One mixed trace that touches every signal some policy of the library reads. */
#define TRACE_EVENTS 20000

struct run {
	pcm_uint ctl[TRACE_EVENTS][PCM_CTRL_COUNT];
	int errors;
};

static void make_event(uint64_t *s, uint64_t *queue_ps, struct pcm_event *ev)
{
	uint64_t r = ph_rand(s);
	unsigned kind = r % 100;

	memset(ev, 0, sizeof(*ev));
	if (r % 7 == 0 && *queue_ps < 40 * US)
		*queue_ps += (r >> 8) % (3 * US);
	else if (r % 5 == 0 && *queue_ps >= 2 * US)
		*queue_ps -= (r >> 8) % (2 * US);
	if (kind < 60) {
		ph_set(ev, PCM_SIG_ACK, 1);
		ph_set(ev, PCM_SIG_DATA_TX, F_MSS);
		ph_set(ev, PCM_SIG_RTT, F_BRTT + *queue_ps);
		ph_set(ev, PCM_SIG_ACK_EV, (r >> 16) % 48);
		ph_set(ev, PCM_SIG_QUEUE_DELAY, *queue_ps / 4);
		ph_set(ev, PCM_SIG_IN_FLIGHT, 100000);
		if ((r >> 24) % 10 < (*queue_ps > 20 * US ? 4 : 1)) {
			ph_set(ev, PCM_SIG_ECN, 1);
			ph_set(ev, PCM_SIG_CNP, 1);
			ph_set(ev, PCM_SIG_ECN_EV, (r >> 16) % 48);
		}
	} else if (kind < 88) {
		ph_set(ev, PCM_SIG_TX_READY_PKTS, 1);
		ph_set(ev, PCM_SIG_TX_EVENT, 1);
	} else if (kind < 90) {
		ph_set(ev, PCM_SIG_NACK, 1);
		ph_set(ev, PCM_SIG_DATA_NACKED, F_MSS);
		ph_set(ev, PCM_SIG_NACK_EV, (r >> 16) % 48 | ((r >> 30) % 2 ? 1u << 16 : 0));
	} else if (kind < 93) {
		ph_set(ev, PCM_SIG_CREDIT_REQUEST, (r >> 16) % 65536);
	} else if (kind == 93 && (r >> 40) % 8 == 0) {
		ph_set(ev, PCM_SIG_RTO, 1);
	}
}

static void run_trace(const struct pcm_package *pkg, struct run *out)
{
	struct pcm_shell *sh;
	struct pcm_diag diag;
	struct pcm_event ev;
	uint64_t s = 0x7ace, queue = 0, now = 0;

	assert_int_equal(pcm_shell_create(pkg, pcm_target_find("uet"), 1, 0, &sh, &diag), 0);
	out->errors = 0;
	for (unsigned i = 0; i < TRACE_EVENTS; i++) {
		make_event(&s, &queue, &ev);
		now += US / 2;
		out->errors += pcm_shell_feed(sh, 0, &ev, now) < 0;
		for (int t = 0; t < PCM_CTRL_COUNT; t++) {
			pcm_uint v = 0;

			pcm_shell_control(sh, 0, (pcm_control_t)t, &v);
			out->ctl[i][t] = v;
		}
	}
	pcm_shell_destroy(sh);
}

static double mean_of(const struct run *r, int t)
{
	double sum = 0;

	for (unsigned i = 0; i < TRACE_EVENTS; i++)
		sum += (double)r->ctl[i][t];
	return sum / TRACE_EVENTS;
}

static void check_format(const struct entry *e, const struct pcm_package *pkg,
			 const struct run *ref, const struct run *got, const char *fmt)
{
	assert_int_equal(got->errors, 0);
	for (int t = 0; t < PCM_CTRL_COUNT; t++) {
		double m_ref, m_got, rel;

		if (pkg->control_slot[t] < 0)
			continue;
		if (e->integer || t == PCM_CTRL_EV) {
			for (unsigned i = 0; i < TRACE_EVENTS; i++)
				if (got->ctl[i][t] != ref->ctl[i][t])
					fail_msg(
					    "%s %s: control %d differs from double at event %u",
					    e->name, fmt, t, i);
			continue;
		}
		m_ref = mean_of(ref, t);
		m_got = mean_of(got, t);
		rel = fabs(m_got - m_ref) / m_ref;
		print_message("%-10s %-7s control %d: mean %.1f vs double %.1f (%+.3f%%)\n",
			      e->name, fmt, t, m_got, m_ref, 100.0 * (m_got - m_ref) / m_ref);
		for (unsigned i = 0; i < TRACE_EVENTS; i++) {
			if (t == PCM_CTRL_CWND &&
			    (got->ctl[i][t] < F_MIN_CWND - F_MSS || got->ctl[i][t] > F_MAX_CWND))
				fail_msg("%s %s: window %llu at event %u", e->name, fmt,
					 (unsigned long long)got->ctl[i][t], i);
			if (t == PCM_CTRL_RATE)
				assert_true(got->ctl[i][t] >= 1 && got->ctl[i][t] <= PCM_RATE_ONE);
		}
		if (strcmp(fmt, "q16.16") != 0)
			assert_true(rel < 0.005);
	}
}

static void test_every_policy_builds_and_runs_in_every_arithmetic(void **state)
{
	static const char *const formats[] = { "q42.22", "q32.32", "q16.16" };
	static struct run ref, got;
	char dir[] = "/tmp/pcm-policies-XXXXXX";

	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < N_LIB; i++) {
		const struct entry *e = &library[i];

		run_trace(builtin(e->name), &ref);
		assert_int_equal(ref.errors, 0);
		for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
			struct pcm_package_handle h;
			char so[512], cmd[2048], out[8192], err[512];

			snprintf(so, sizeof(so), "%s/%s-%s.so", dir, e->name, formats[f]);
			snprintf(cmd, sizeof(cmd),
				 "%s build %s/policies/%s.yaml %s/policies/%s.c --fabric %s "
				 "--arith %s --target uet -o %s",
				 PCMC, PCM_SOURCE_ROOT, e->name, PCM_SOURCE_ROOT, e->name, FABRIC,
				 formats[f], so);
			if (tu_run(cmd, out, sizeof(out)) != 0)
				fail_msg("pcmc build %s %s failed:\n%s", e->name, formats[f], out);
			assert_int_equal(pcm_package_open(so, NULL, &h, err, sizeof(err)), 0);
			assert_string_equal(h.pkg->arith, formats[f]);
			run_trace(h.pkg, &got);
			check_format(e, h.pkg, &ref, &got, formats[f]);
			pcm_package_close(&h);
			unlink(so);
		}
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_policy_runs_on_the_targets_its_catalogue_entry_names),
		cmocka_unit_test(test_every_builtin_policy_is_in_the_library_table),
		cmocka_unit_test(test_every_policy_builds_and_runs_in_every_arithmetic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
