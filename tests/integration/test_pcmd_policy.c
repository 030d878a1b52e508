// SPDX-License-Identifier: MIT
/*
 * test_pcmd_policy.c - policies in pcmd: per-destination rules choose a new
 * flow's package and shell mode; a package built by `pcmc build` is loaded,
 * listed, swapped onto live flows and unloaded (refused while a flow or the
 * config uses it); and swapping policies on flows that carry a stream, over
 * and over, loses and duplicates nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include "tp_util.h"

#ifndef PCMD_TEST_PKG_SO
#error "PCMD_TEST_PKG_SO must name the fixed_window test package"
#endif

static struct pcmd_proc pcmd;
static uint32_t seq = 100;

static int stop(void **state)
{
	return harness_finish(&pcmd);
}

static void start_or_fail(const char *yaml)
{
	if (harness_start(&pcmd, yaml, 0, NULL) != 0)
		fail_msg("pcmd did not start");
}

static int admin(void)
{
	int fd = harness_raw_connect(&pcmd);

	assert_true(fd >= 0);
	assert_int_equal(harness_raw_hello(fd, PCMD_ROLE_ADMIN), 0);
	return fd;
}

static int rpc_status(int fd, void *msg, uint16_t type, size_t len, void *rep, size_t cap,
		      char *text, size_t text_len)
{
	const struct pcmd_reply_error *e = rep;
	ssize_t n;

	harness_hdr(msg, type, len, ++seq);
	n = harness_raw_rpc(fd, msg, len, rep, cap);
	assert_true(n >= (ssize_t)sizeof(struct pcmd_reply_status));
	if (text)
		snprintf(text, text_len, "%s", e->st.status < 0 ? e->text : "");
	return e->st.status;
}

static int policy_load(int fd, const char *path, char *name, char *text)
{
	struct pcmd_req_policy_load q = {0};
	uint8_t rep[PCMD_MSG_MAX_BYTES];
	int st;

	snprintf(q.path, sizeof(q.path), "%s", path);
	st = rpc_status(fd, &q, PCMD_MSG_POLICY_LOAD, sizeof(q), rep, sizeof(rep), text, 256);
	if (st == 0 && name)
		snprintf(name, PCMD_POLICY_MAX, "%s", ((struct pcmd_rep_policy_load *)rep)->name);
	return st;
}

static int policy_unload(int fd, const char *name, char *text)
{
	struct pcmd_req_policy_unload q = {0};
	uint8_t rep[PCMD_MSG_MAX_BYTES];

	snprintf(q.name, sizeof(q.name), "%s", name);
	return rpc_status(fd, &q, PCMD_MSG_POLICY_UNLOAD, sizeof(q), rep, sizeof(rep), text, 256);
}

static int policy_set(int fd, uint32_t target, uint32_t id, const char *policy, uint32_t mode,
		      uint32_t *changed)
{
	struct pcmd_req_policy_set q = {.target = target, .id = id};
	uint8_t rep[PCMD_MSG_MAX_BYTES];
	int st;

	snprintf(q.opts.policy, sizeof(q.opts.policy), "%s", policy);
	q.opts.mode = mode;
	st = rpc_status(fd, &q, PCMD_MSG_POLICY_SET, sizeof(q), rep, sizeof(rep), NULL, 0);
	if (st == 0 && changed)
		*changed = ((struct pcmd_rep_policy_set *)rep)->flows_changed;
	return st;
}

/* All flows (one page is enough here). Return: their count. */
static uint32_t flows(int fd, struct pcmd_flow_info *out, uint32_t max)
{
	struct pcmd_req_page q = {.start = 0, .max = 0};
	uint8_t rep[PCMD_MSG_MAX_BYTES];
	struct pcmd_rep_flows *p = (void *)rep;

	assert_int_equal(rpc_status(fd, &q, PCMD_MSG_FLOWS, sizeof(q), rep, sizeof(rep), NULL, 0),
			 0);
	for (uint32_t i = 0; i < p->n && i < max; i++)
		out[i] = p->flows[i];
	return p->n < max ? p->n : max;
}

static int listed(int fd, const char *name, char *source)
{
	struct pcmd_req_page q = {0};
	uint8_t rep[PCMD_MSG_MAX_BYTES];
	struct pcmd_rep_policies *p = (void *)rep;

	assert_int_equal(
	    rpc_status(fd, &q, PCMD_MSG_POLICY_LIST, sizeof(q), rep, sizeof(rep), NULL, 0), 0);
	for (uint32_t i = 0; i < p->n; i++)
		if (strcmp(p->policies[i].name, name) == 0) {
			if (source)
				snprintf(source, PCMD_PATH_MAX, "%s", p->policies[i].source);
			return 1;
		}
	return 0;
}

static struct pcm_tp_conn *connect_to(struct pcm_tp_endpoint *a, struct pcm_tp_endpoint *b,
				      const char *addr, const char *policy)
{
	struct pcm_tp_conn_opts o = {.policy = policy};
	struct pcm_tp_conn *ca, *cb;
	int rc = tp_pair(a, b, addr, policy ? &o : NULL, &ca, &cb);

	if (rc)
		fail_msg("connect to %s: %d", addr, rc);
	return ca;
}

static const struct pcmd_flow_info *find_peer(const struct pcmd_flow_info *f, uint32_t n,
					      const char *peer)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(f[i].peer, peer) == 0)
			return &f[i];
	fail_msg("no flow to %s", peer);
	return NULL;
}

static void test_rules_choose_policy_and_mode_per_destination(void **state)
{
	static const char yaml[] =
	    "log_level: debug\n"
	    "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
	    "policies:\n"
	    "  default: swift\n"
	    "  rules:\n"
	    "    - {peer: \"10.0.0.0/8\", policy: dctcp, mode: async_bounded}\n"
	    "    - {peer: \"rack1-*\", policy: cubic}\n";
	static const char *const addrs[] = {"10.1.2.3:7000", "rack1-host7", "elsewhere",
					    "rack1-explicit"};
	struct pcm_tp_endpoint *a, *b[4];
	struct pcmd_flow_info f[16];
	const struct pcmd_flow_info *x;
	uint32_t n;
	int fd;

	start_or_fail(yaml);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &a), 0);
	/* One listening endpoint per address: accept takes from an endpoint's only listener. */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(tp_open(pcmd.sock, 1u << 20, &b[i]), 0);
		connect_to(a, b[i], addrs[i], i == 3 ? "newreno" : NULL);
	}
	fd = admin();
	n = flows(fd, f, 16);
	assert_int_equal(n, 8); /* four each way */
	x = find_peer(f, n, "10.1.2.3:7000");
	assert_string_equal(x->policy, "dctcp");
	assert_int_equal(x->mode, PCMD_SHELL_ASYNC_BOUNDED);
	assert_int_equal(x->rule, 0);
	x = find_peer(f, n, "rack1-host7");
	assert_string_equal(x->policy, "cubic");
	assert_int_equal(x->mode, PCMD_SHELL_SYNC);
	assert_int_equal(x->rule, 1);
	x = find_peer(f, n, "elsewhere");
	assert_string_equal(x->policy, "swift");
	assert_int_equal(x->rule, -1);
	x = find_peer(f, n, "rack1-explicit");
	assert_string_equal(x->policy, "newreno"); /* the connect's own choice wins */
	close(fd);
	pcm_tp_endpoint_close(a);
	for (int i = 0; i < 4; i++)
		pcm_tp_endpoint_close(b[i]);
}

static void test_loaded_package_swaps_in_and_unloads_only_when_unused(void **state)
{
	static const char yaml[] = "log_level: debug\n"
				   "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n";
	struct pcm_tp_endpoint *a, *b;
	struct pcmd_flow_info f[4];
	char name[PCMD_POLICY_MAX], text[256], source[PCMD_PATH_MAX];
	uint32_t n;
	int fd;

	start_or_fail(yaml);
	fd = admin();
	assert_int_equal(policy_load(fd, PCMD_TEST_PKG_SO, name, text), 0);
	assert_string_equal(name, "fixed_window");
	assert_int_equal(policy_load(fd, PCMD_TEST_PKG_SO, name, text), 0); /* again: the same */
	assert_true(listed(fd, "fixed_window", source));
	assert_non_null(strstr(source, "fixed_window"));
	/* A file that exists but is no shared object: pcmd's own config, which every machine
	 * running this test has (unlike /etc/hostname, absent from a minimal root). */
	assert_int_equal(policy_load(fd, pcmd.config, NULL, text), -ELIBBAD);
	printf("not a package: %s\n", text);
	assert_int_equal(policy_load(fd, "/nonexistent/x.so", NULL, text), -ENOENT);
	assert_int_equal(policy_unload(fd, "swift", text), -EPERM);

	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &a), 0);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &b), 0);
	connect_to(a, b, "fw", "fixed_window");
	n = flows(fd, f, 4);
	assert_int_equal(n, 2);
	assert_string_equal(find_peer(f, n, "fw")->policy, "fixed_window");
	/* the accepted flow runs the dialer's package too (pcm_transport(3)) */
	assert_string_equal(f[0].policy, "fixed_window");
	assert_string_equal(f[1].policy, "fixed_window");
	assert_int_equal(policy_unload(fd, "fixed_window", text), -EBUSY);
	assert_non_null(strstr(text, "used by 2 flow(s)"));
	/* Move both flows off it, and it goes. */
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(policy_set(fd, PCMD_TARGET_FLOW, f[i].flow_id, "cubic",
					    PCMD_SHELL_DEFAULT, NULL),
				 0);
	assert_int_equal(policy_unload(fd, "fixed_window", text), 0);
	assert_false(listed(fd, "fixed_window", NULL));
	n = flows(fd, f, 4);
	assert_string_equal(find_peer(f, n, "fw")->policy, "cubic");
	close(fd);
	pcm_tp_endpoint_close(a);
	pcm_tp_endpoint_close(b);
}

static void test_package_named_by_config_is_not_unloaded(void **state)
{
	static const char yaml[] = "log_level: debug\n"
				   "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
				   "policies:\n"
				   "  load: [\"" PCMD_TEST_PKG_SO "\"]\n"
				   "  rules:\n"
				   "    - {peer: \"fw-*\", policy: fixed_window}\n";
	char text[256];
	int fd;

	start_or_fail(yaml);
	fd = admin();
	assert_true(listed(fd, "fixed_window", NULL));
	assert_int_equal(policy_unload(fd, "fixed_window", text), -EBUSY);
	printf("%s\n", text);
	assert_non_null(strstr(text, "named by the config at"));
	assert_non_null(strstr(text, "pcmd.yaml:4:"));
	close(fd);
}

static int stream_child(int send_side, const char *addr, int ready)
{
	struct tp_stream s = {.seed = 31, .n_msgs = 400, .max_bytes = 512u << 10, .window = 8};
	struct pcm_tp_endpoint *ep;
	int rc;

	if (tp_open(pcmd.sock, 32u << 20, &ep) < 0)
		return 2;
	rc = send_side ? tp_send_stream(ep, addr, &s) : tp_recv_stream(ep, addr, ready, &s);
	if (rc < 0)
		fprintf(stderr, "%s: %s\n", send_side ? "sender" : "receiver", s.why);
	else
		printf("%s: %u messages, %llu bytes%s\n", send_side ? "sender" : "receiver", s.done,
		       (unsigned long long)s.bytes, send_side ? "" : ", byte-exact");
	fflush(stdout);
	pcm_tp_endpoint_close(ep);
	return rc < 0 ? 1 : 0;
}

static void test_policy_swap_under_load_loses_nothing(void **state)
{
	static const char yaml[] = "log_level: info\n"
				   "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
				   "datapath: {chunk_bytes: 8192}\n"
				   "policies:\n"
				   "  load: [\"" PCMD_TEST_PKG_SO "\"]\n"
				   "  rules:\n"
				   "    - {peer: \"swap-*\", policy: newreno}\n";
	static const char *const names[] = {"cubic", "dctcp", "fixed_window", "swift"};
	static const uint32_t modes[] = {PCMD_SHELL_SYNC, PCMD_SHELL_ASYNC_RELAXED,
					 PCMD_SHELL_ASYNC_LOCKED, PCMD_SHELL_ASYNC_BOUNDED};
	struct pcmd_flow_info f[8];
	struct pcmd_rep_stats st;
	uint64_t swaps = 0, round = 0;
	int ready[2], fd, status;
	pid_t rx, tx;
	char c;

	start_or_fail(yaml);
	assert_int_equal(pipe(ready), 0);
	rx = fork();
	if (rx == 0)
		_exit(stream_child(0, "swap-rx", ready[1]));
	assert_int_equal(read(ready[0], &c, 1), 1);
	tx = fork();
	if (tx == 0)
		_exit(stream_child(1, "swap-rx", -1));
	fd = admin();
	while (waitpid(tx, &status, WNOHANG) == 0) {
		uint32_t n = flows(fd, f, 8), changed = 0;

		for (uint32_t i = 0; i < n; i++) {
			int rc = policy_set(fd, PCMD_TARGET_FLOW, f[i].flow_id,
					    names[(round + i) % 4], modes[round % 4], NULL);

			/* A flow may close between the list and the swap. */
			assert_true(rc == 0 || rc == -ENOTCONN || rc == -ENOENT);
			swaps += rc == 0;
		}
		if (round % 5 == 0 && policy_set(fd, PCMD_TARGET_RULE, 0, names[round % 4],
						 PCMD_SHELL_DEFAULT, &changed) == 0)
			swaps += changed;
		round++;
	}
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(waitpid(rx, &status, 0), rx);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(harness_stats(&pcmd, &st), 0);
	printf("%llu policy swaps in %llu rounds while 400 messages streamed; pcmd counted "
	       "%llu\n",
	       (unsigned long long)swaps, (unsigned long long)round,
	       (unsigned long long)st.policy_swaps);
	assert_true(swaps >= 20);
	assert_int_equal(st.policy_swaps, swaps);
	close(fd);
	close(ready[0]);
	close(ready[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_rules_choose_policy_and_mode_per_destination, stop),
	    cmocka_unit_test_teardown(test_loaded_package_swaps_in_and_unloads_only_when_unused,
				      stop),
	    cmocka_unit_test_teardown(test_package_named_by_config_is_not_unloaded, stop),
	    cmocka_unit_test_teardown(test_policy_swap_under_load_loses_nothing, stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
