// SPDX-License-Identifier: MIT
/*
 * test_pcmd_service.c - pcmd as a service: the uid/gid policy, SIGHUP
 * reloads (a bad config is rejected with file:line:col: key and the old one
 * keeps running), sd_notify (READY, STATUS, RELOADING, STOPPING, WATCHDOG)
 * through a NOTIFY_SOCKET of the test's, and SIGTERM in drain and abort
 * modes, where every outstanding descriptor completes before pcmd exits 0,
 * with the one error pcmd(8) gives for work a stop cuts off (-ECONNABORTED)
 * on the datapath PCMD_TEST_DATAPATH names (meson runs softnic and null).
 */
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "harness.h"
#include "tp_util.h"

static struct pcmd_proc pcmd;

static void start_or_fail(const char *yaml, int notify, const char *const *env)
{
	if (harness_start(&pcmd, yaml, notify, env) != 0)
		fail_msg("pcmd did not start");
}

static int stop(void **state)
{
	return harness_finish(&pcmd);
}

/* ---- credentials ------------------------------------------------------------------------ */

static void test_uid_not_in_allow_list_is_refused_with_reason(void **state)
{
	static const char yaml[] = "socket:\n"
				   "  path: \"@DIR@/pcmd.sock\"\n"
				   "  group: \"\"\n"
				   "  admin_uids: []\n"
				   "  allow_uids: [4000000]\n";
	struct pcm_tp_endpoint *ep;
	char want[64];
	int rc;

	start_or_fail(yaml, 0, NULL);
	rc = tp_open(pcmd.sock, 1u << 20, &ep);
	assert_int_equal(rc, -EACCES);
	printf("refused: %s\n", pcm_tp_last_error());
	snprintf(want, sizeof(want), "uid %u / gid %u may not use pcmd", (unsigned)getuid(),
		 (unsigned)getgid());
	assert_non_null(strstr(pcm_tp_last_error(), want));
	assert_non_null(strstr(pcm_tp_last_error(), "pcmd.yaml:5:"));
	assert_non_null(strstr(pcm_tp_last_error(), "[4000000]"));
	assert_true(harness_log_has(&pcmd, "refused a client"));
}

static void test_gid_not_in_allow_list_is_refused_and_listed_gid_accepted(void **state)
{
	char yaml[512];
	struct pcm_tp_endpoint *ep;

	snprintf(yaml, sizeof(yaml),
		 "socket:\n  path: \"@DIR@/pcmd.sock\"\n  group: \"\"\n  admin_uids: []\n"
		 "  allow_gids: [4000001]\n");
	start_or_fail(yaml, 0, NULL);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &ep), -EACCES);
	assert_non_null(strstr(pcm_tp_last_error(), "socket.allow_gids"));
	harness_stop(&pcmd, SIGTERM, 10000);
	harness_cleanup(&pcmd);
	/* Our own gid is let in. */
	snprintf(yaml, sizeof(yaml),
		 "socket:\n  path: \"@DIR@/pcmd.sock\"\n  group: \"\"\n  admin_uids: []\n"
		 "  allow_gids: [4000001, %u]\n",
		 (unsigned)getgid());
	start_or_fail(yaml, 0, NULL);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &ep), 0);
	pcm_tp_endpoint_close(ep);
}

/* In a child: become @uid/@gid and try to open an endpoint. Exit: 0 opened, 1 refused. */
static int try_as(uid_t uid, gid_t gid, char *why, size_t len)
{
	int pfd[2], status, rc;
	pid_t pid;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		struct pcm_tp_endpoint *ep;

		close(pfd[0]);
		if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0)
			_exit(3);
		rc = tp_open(pcmd.sock, 1u << 20, &ep);
		if (write(pfd[1], pcm_tp_last_error(), strlen(pcm_tp_last_error()) + 1) < 0)
			_exit(4);
		_exit(rc == 0 ? 0 : rc == -EACCES ? 1 : 2);
	}
	close(pfd[1]);
	memset(why, 0, len);
	if (read(pfd[0], why, len - 1) < 0)
		why[0] = '\0';
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_other_user_is_refused_by_pcmd_not_just_the_file_mode(void **state)
{
	/* Mode 0666 so the kernel lets the other user connect and pcmd itself must refuse. */
	static const char yaml[] = "socket:\n"
				   "  path: \"@DIR@/pcmd.sock\"\n"
				   "  group: \"\"\n"
				   "  mode: \"0666\"\n"
				   "  admin_uids: []\n"
				   "  allow_uids: [0]\n";
	char why[512];
	int rc;

	if (getuid() != 0) {
		printf("skipped: changing uid needs root\n");
		skip();
	}
	start_or_fail(yaml, 0, NULL);
	assert_int_equal(chmod(pcmd.dir, 0755), 0);
	rc = try_as(65534, 65534, why, sizeof(why));
	printf("uid 65534: %s\n", why);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(why, "uid 65534 / gid 65534 may not use pcmd"));
	assert_int_equal(try_as(0, 0, why, sizeof(why)), 0);
}

/* ---- SIGHUP ----------------------------------------------------------------------------- */

static const char good_v1[] = "log_level: debug\n"
			      "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
			      "policies:\n"
			      "  default: swift\n"
			      "  rules:\n"
			      "    - {peer: \"rack1-*\", policy: newreno}\n";

static const char bad_key[] = "log_level: debug\n"
			      "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
			      "limits:\n"
			      "  flows_per_client: 0\n";

static const char bad_policy[] = "log_level: debug\n"
				 "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
				 "policies:\n"
				 "  rules:\n"
				 "    - {peer: \"x\", policy: no_such_policy}\n";

static const char good_v2[] = "log_level: debug\n"
			      "socket: {path: \"@DIR@/pcmd-moved.sock\", group: \"\"}\n"
			      "policies:\n"
			      "  default: swift\n"
			      "  rules:\n"
			      "    - {peer: \"rack1-*\", policy: cubic}\n"
			      "    - {peer: \"10.0.0.0/8\", policy: dctcp}\n";

static int wait_log(const char *needle, int timeout_ms)
{
	uint64_t deadline = harness_now_ms() + (uint64_t)timeout_ms;

	while (harness_now_ms() < deadline) {
		if (harness_log_has(&pcmd, needle))
			return 1;
		usleep(10000);
	}
	return 0;
}

/* The running config's generation and rule count, as pcmd reports them. */
static void expect_config(uint32_t generation, uint32_t rules)
{
	struct pcmd_rep_status st;

	assert_int_equal(harness_status(&pcmd, &st), 0);
	assert_int_equal(st.config_generation, generation);
	assert_int_equal(st.rules, rules);
}

static void test_sighup_with_bad_config_keeps_the_old_one(void **state)
{
	struct pcm_tp_endpoint *ep;
	char notes[8192] = "";

	start_or_fail(good_v1, 1, NULL);
	assert_true(harness_notify_read(&pcmd, notes, sizeof(notes), 5000, "READY=1"));
	expect_config(1, 1);

	assert_int_equal(harness_write_config(&pcmd, bad_key), 0);
	kill(pcmd.pid, SIGHUP);
	assert_true(wait_log("reload rejected", 5000));
	assert_true(harness_log_has(&pcmd, "pcmd.yaml:4:21: limits.flows_per_client: 0 is "
					   "outside 1..65535"));
	assert_true(harness_notify_read(&pcmd, notes, sizeof(notes), 5000, "RELOADING=1"));
	expect_config(1, 1);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &ep), 0);
	pcm_tp_endpoint_close(ep);

	assert_int_equal(harness_write_config(&pcmd, bad_policy), 0);
	kill(pcmd.pid, SIGHUP);
	assert_true(wait_log("policies.rules[0].policy: no policy named 'no_such_policy'", 5000));
	expect_config(1, 1);

	/* A good one is applied; a restart-only change is kept back and said so. */
	assert_int_equal(harness_write_config(&pcmd, good_v2), 0);
	kill(pcmd.pid, SIGHUP);
	assert_true(wait_log("configuration reloaded", 5000));
	assert_true(harness_log_has(&pcmd, "socket.path changed; it takes effect when pcmd "
					   "restarts"));
	expect_config(2, 2);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &ep), 0);
	pcm_tp_endpoint_close(ep);
}

/* How many times @needle occurs in @s. */
static int count_of(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_sd_notify_ready_status_reloading_stopping_and_watchdog(void **state)
{
	static const char *const env[] = {"WATCHDOG_USEC=200000", NULL};
	char notes[16384] = "";
	uint64_t deadline;
	int watchdogs;

	start_or_fail(good_v1, 1, env);
	assert_true(harness_notify_read(&pcmd, notes, sizeof(notes), 5000, "READY=1"));
	assert_true(harness_notify_read(&pcmd, notes, sizeof(notes), 5000,
					"STATUS=running: 0 clients, 0 flows, goodput"));
	kill(pcmd.pid, SIGHUP);
	assert_true(harness_notify_read(&pcmd, notes, sizeof(notes), 5000, "RELOADING=1"));
	assert_non_null(strstr(notes, "MONOTONIC_USEC="));
	/* Until the third keep-alive, however long a loaded machine takes: not a count of those
	 * that happen to arrive within a fixed second. */
	deadline = harness_now_ms() + 20000;
	while ((watchdogs = count_of(notes, "WATCHDOG=1")) < 3 && harness_now_ms() < deadline)
		harness_notify_read(&pcmd, notes, sizeof(notes), 100, NULL);
	assert_true(watchdogs >= 3);
	assert_int_equal(harness_stop(&pcmd, SIGTERM, 10000), 0);
	harness_notify_read(&pcmd, notes, sizeof(notes), 200, NULL);
	assert_non_null(strstr(notes, "STOPPING=1"));
	printf("notify: %d WATCHDOG=1 at WATCHDOG_USEC=200000; READY, STATUS, "
	       "RELOADING, STOPPING seen\n",
	       watchdogs);
}

/* ---- SIGTERM ---------------------------------------------------------------------------- */

static void pair(struct pcm_tp_endpoint **a, struct pcm_tp_endpoint **b, struct pcm_tp_conn **ca,
		 struct pcm_tp_conn **cb)
{
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, a), 0);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, b), 0);
	assert_int_equal(tp_pair(*a, *b, "stop", NULL, ca, cb), 0);
}

/* Descriptors pcmd has taken from its clients' rings so far. */
static uint64_t descriptors_taken(void)
{
	struct pcmd_rep_stats st;

	assert_int_equal(harness_stats(&pcmd, &st), 0);
	return st.descriptors_ok;
}

static uint64_t descriptors_wanted;

static int took_the_wanted(const struct pcmd_rep_stats *s)
{
	return s->descriptors_ok >= descriptors_wanted;
}

/* Until pcmd has taken @n descriptors in all (what was posted reached it), not a fixed wait. */
static void wait_descriptors_taken(uint64_t n)
{
	struct pcmd_rep_stats st;

	descriptors_wanted = n;
	if (!harness_wait_stats(&pcmd, took_the_wanted, 20000, &st))
		fail_msg("pcmd took %llu descriptors, not %llu, in 20 s",
			 (unsigned long long)st.descriptors_ok, (unsigned long long)n);
}

static void test_sigterm_drains_posted_sends_then_aborts_the_rest(void **state)
{
	static const char yaml[] = "log_level: debug\n"
				   "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
				   "datapath: {kind: @DATAPATH@}\n"
				   "shutdown: {mode: drain, drain_timeout_ms: 3000}\n";
	struct pcm_tp_endpoint *a, *b;
	struct pcm_tp_conn *ca, *cb;
	struct pcm_tp_completion c;
	uint8_t *x, *y;
	uint64_t base;
	pid_t pid;
	int status;

	start_or_fail(yaml, 0, NULL);
	pair(&a, &b, &ca, &cb);
	x = pcm_tp_mem_alloc(a, 4096);
	y = pcm_tp_mem_alloc(b, 4096);
	/* A send nobody has received yet, and a receive on the sender's side that never ends. */
	base = descriptors_taken();
	assert_int_equal(pcm_tp_send(ca, NULL, x, 4096, 10), 0);
	assert_int_equal(pcm_tp_recv(ca, NULL, x, 4096, 11), 0);
	wait_descriptors_taken(base + 2);
	pid = pcmd.pid;
	kill(pid, SIGTERM);
	/* While draining, the peer posts its receive: the send finishes normally. */
	assert_true(wait_log("stopping (drain)", 20000));
	assert_int_equal(pcm_tp_recv(cb, NULL, y, 4096, 12), 0);
	assert_int_equal(tp_wait_op(a, PCM_TP_OP_SEND, &c, 5000), 0);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.cookie, 10);
	assert_int_equal(tp_wait_op(b, PCM_TP_OP_RECV, &c, 5000), 0);
	assert_int_equal(c.status, 0);
	/* Then the rest is aborted, with the error in the client's completion. */
	assert_int_equal(tp_wait_op(a, PCM_TP_OP_RECV, &c, 5000), 0);
	assert_int_equal(c.status, -ECONNABORTED);
	assert_int_equal(c.cookie, 11);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	pcmd.pid = 0;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* New work after the stop is refused: at once once the hang-up was seen, else it
	 * completes with -ESHUTDOWN; then poll and wait say -ESHUTDOWN, and so does a post. */
	status = pcm_tp_send(ca, NULL, x, 1, 13);
	assert_true(status == 0 || status == -ESHUTDOWN);
	if (status == 0) {
		assert_int_equal(tp_wait_op(a, PCM_TP_OP_SEND, &c, 5000), 0);
		assert_int_equal(c.status, -ESHUTDOWN);
	}
	assert_int_equal(pcm_tp_wait(a, 200), -ESHUTDOWN);
	assert_int_equal(pcm_tp_poll(a, &c, 1), -ESHUTDOWN);
	assert_int_equal(pcm_tp_send(ca, NULL, x, 1, 14), -ESHUTDOWN);
	pcm_tp_endpoint_close(a);
	pcm_tp_endpoint_close(b);
}

static void test_sigterm_in_abort_mode_fails_outstanding_work_at_once(void **state)
{
	static const char yaml[] = "log_level: debug\n"
				   "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
				   "datapath: {kind: @DATAPATH@}\n"
				   "shutdown: {mode: abort}\n";
	struct pcm_tp_endpoint *a, *b;
	struct pcm_tp_conn *ca, *cb;
	struct pcm_tp_completion c;
	uint8_t *x;
	uint64_t base;
	pid_t pid;
	int status;

	start_or_fail(yaml, 0, NULL);
	pair(&a, &b, &ca, &cb);
	x = pcm_tp_mem_alloc(a, 4096);
	base = descriptors_taken();
	assert_int_equal(pcm_tp_send(ca, NULL, x, 4096, 20), 0);
	wait_descriptors_taken(base + 1);
	pid = pcmd.pid;
	kill(pid, SIGTERM);
	assert_int_equal(tp_wait_op(a, PCM_TP_OP_SEND, &c, 5000), 0);
	assert_int_equal(c.status, -ECONNABORTED);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	pcmd.pid = 0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(harness_log_has(&pcmd, "stopping (abort)"));
	pcm_tp_endpoint_close(a);
	pcm_tp_endpoint_close(b);
	(void)cb;
}

/* ---- outputs and the command line ------------------------------------------------------ */

static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (int)n;
}

/* read_file(), cut after the last newline: a line being written is not read half. */
static int read_complete_lines(const char *path, char *buf, size_t len)
{
	int n = read_file(path, buf, len);

	while (n > 0 && buf[n - 1] != '\n')
		buf[--n] = '\0';
	return n;
}

/*
 * Wait until @path holds at least @want complete lines and @needle in one of
 * them. Return: 1, or 0 after @timeout_ms.
 */
static int wait_file_lines(const char *path, const char *needle, int want, int timeout_ms)
{
	uint64_t deadline = harness_now_ms() + (uint64_t)timeout_ms;
	static char buf[65536];

	while (harness_now_ms() < deadline) {
		int lines = 0;

		if (read_complete_lines(path, buf, sizeof(buf)) > 0) {
			for (const char *c = buf; *c; c++)
				lines += *c == '\n';
			if (lines >= want && strstr(buf, needle))
				return 1;
		}
		usleep(10000);
	}
	return 0;
}

static void test_stats_and_records_files_are_written(void **state)
{
	static const char yaml[] = "log_level: info\n"
				   "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
				   "output:\n"
				   "  stats_path: \"@DIR@/stats.jsonl\"\n"
				   "  stats_interval_ms: 50\n"
				   "  records_path: \"@DIR@/flows.csv\"\n";
	struct pcm_tp_endpoint *a, *b;
	struct pcm_tp_conn *ca, *cb;
	char path[400], buf[65536], *line, *last = NULL;
	int lines = 0;

	start_or_fail(yaml, 0, NULL);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &a), 0);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &b), 0);
	assert_int_equal(tp_pair(a, b, "rec-peer", NULL, &ca, &cb), 0);
	assert_int_equal(tp_exchange(a, ca, b, cb, 5000, 1), 0);
	assert_int_equal(pcm_tp_conn_close(ca), 0);
	/* Until three stats lines (50 ms apart) and the closed flow's row are written,
	 * however long a loaded machine takes: not a fixed 300 ms. */
	snprintf(path, sizeof(path), "%s/flows.csv", pcmd.dir);
	assert_true(wait_file_lines(path, ",rec-peer,swift,,sync,", 1, 20000));
	snprintf(path, sizeof(path), "%s/stats.jsonl", pcmd.dir);
	assert_true(wait_file_lines(path, "\"tx_bytes\":5000", 3, 20000));
	assert_true(read_complete_lines(path, buf, sizeof(buf)) > 0);
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"), lines++) {
		assert_true(line[0] == '{' && line[strlen(line) - 1] == '}');
		assert_non_null(strstr(line, "\"uptime_ns\":"));
		last = line;
	}
	assert_true(lines >= 3 && last);
	printf("stats file: %d lines at 50 ms; last: %.120s...\n", lines, last);
	/* Both ends of the pair opened a flow; 5000 bytes went each way's counter. */
	assert_non_null(strstr(last, "\"flows_opened\":2"));
	assert_non_null(strstr(last, "\"tx_bytes\":5000"));
	snprintf(path, sizeof(path), "%s/flows.csv", pcmd.dir);
	assert_true(read_complete_lines(path, buf, sizeof(buf)) > 0);
	printf("records:\n%s", buf);
	assert_non_null(strstr(buf, "flow_id,client_id,pid,uid,peer,policy,lb_policy,mode"));
	/* The flow to rec-peer closed: its row, with its 5000 bytes sent. */
	assert_non_null(strstr(buf, ",rec-peer,swift,,sync,"));
	assert_non_null(strstr(buf, ",5000,0,1,0\n"));
	pcm_tp_endpoint_close(a);
	pcm_tp_endpoint_close(b);
}

/* Run pcmd with @args; its stdout and stderr into @out. Return: its exit status. */
static int run_pcmd(const char *const *args, char *out, size_t len)
{
	char *argv[16] = {(char *)PCMD_DAEMON};
	int pfd[2], status;
	ssize_t n, used = 0;
	pid_t pid;

	for (int i = 0; args[i] && i < 14; i++)
		argv[i + 1] = (char *)args[i];
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		execv(PCMD_DAEMON, argv);
		_exit(127);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], out + used, len - 1 - (size_t)used)) > 0)
		used += n;
	out[used] = '\0';
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_command_line_checks_and_overrides(void **state)
{
	char dir[] = "/tmp/pcmd-cli-XXXXXX", cfg[256], out[4096], want[128];
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(cfg, sizeof(cfg), "%s/pcmd.yaml", dir);
	f = fopen(cfg, "w");
	fprintf(f, "socket:\n  path: %s/pcmd.sock\n  group: \"\"\nlimits:\n  backlog: 8\n", dir);
	fclose(f);
	assert_int_equal(run_pcmd((const char *[]){"--check-config", cfg, NULL}, out, sizeof(out)),
			 0);
	snprintf(want, sizeof(want), ": OK (datapath softnic, socket %s/pcmd.sock", dir);
	assert_non_null(strstr(out, want));
	/* -s is --set socket.path, and it wins over the file. */
	assert_int_equal(
	    run_pcmd((const char *[]){"--check-config", cfg, "-s", "/tmp/other.sock", NULL}, out,
		     sizeof(out)),
	    0);
	assert_non_null(strstr(out, "socket /tmp/other.sock"));
	assert_int_equal(
	    run_pcmd((const char *[]){"--check-config", cfg, "--set", "limits.backlog=0", NULL},
		     out, sizeof(out)),
	    1);
	assert_non_null(strstr(out, "command line: --set limits.backlog: 0 is outside 1..4096"));
	assert_int_equal(
	    run_pcmd((const char *[]){"--check-config", cfg, "--log-level", "loud", NULL}, out,
		     sizeof(out)),
	    1);
	assert_non_null(strstr(out, "command line: --set log_level: 'loud' is not one of"));
	/* verbs without a device fails the check as it fails a start (below). */
	assert_int_equal(
	    run_pcmd((const char *[]){"--check-config", cfg, "--datapath", "verbs", NULL}, out,
		     sizeof(out)),
	    1);
	assert_non_null(strstr(out, "datapath"));
	assert_non_null(strstr(out, "verbs"));
	assert_int_equal(run_pcmd((const char *[]){"--set", "oops", NULL}, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "expected KEY=VALUE"));
	assert_int_equal(run_pcmd((const char *[]){"--version", NULL}, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "control protocol %d", PCMD_PROTO_VERSION);
	assert_non_null(strstr(out, want));
	assert_int_equal(run_pcmd((const char *[]){"--help", "--set", "oops", NULL}, out, sizeof(out)),
			 0);
	assert_non_null(strstr(out, "usage: pcmd"));
	/* A daemon that cannot start says why and exits 1. */
	assert_int_equal(run_pcmd((const char *[]){"-c", cfg, "-s", "/nonexistent-dir/x.sock",
						   "--set", "socket.group=", NULL},
				  out, sizeof(out)),
			 1);
	assert_non_null(strstr(out, "cannot start: command line: socket.path: cannot create files in "
				    "/nonexistent-dir: No such file or directory"));
	/* verbs, named outright, on a machine without a device (or a pcmd without verbs):
	 * refused at start, naming the datapath ("not built into this pcmd (built: ...)"). */
	snprintf(out, sizeof(out), "%s/x.sock", dir);
	{
		char sock[300];

		snprintf(sock, sizeof(sock), "%s", out);
		assert_int_equal(run_pcmd((const char *[]){"-c", cfg, "-s", sock, "--set",
							   "socket.group=", "--datapath", "verbs",
							   NULL},
					  out, sizeof(out)),
				 1);
	}
	printf("verbs without a device: %s", out);
	assert_non_null(strstr(out, "cannot start: datapath"));
	assert_non_null(strstr(out, "verbs"));
	unlink(cfg);
	rmdir(dir);
}

/*
 * datapath.softnic.topology: a scenario file's fabric gives pcmd its hosts
 * (leaf-spine.yaml: 4 leaves of 8); a file that does not parse stops pcmd at
 * start with pcmd's file:line:col and key and the scenario's own line.
 */
static void test_softnic_topology_file_sets_the_hosts_and_a_bad_one_is_refused(void **state)
{
	static const char good[] =
	    "log_level: info\n"
	    "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n"
	    "datapath:\n"
	    "  kind: softnic\n"
	    "  softnic: {topology: \"" PCM_SOURCE_ROOT "/scenarios/leaf-spine.yaml\"}\n";
	char dir[] = "/tmp/pcmd-topo-XXXXXX", cfg[256], bad[256], sock[300], out[4096];
	FILE *f;

	if (getenv("PCMD_TEST_DAEMON") && getenv("PCMD_TEST_DAEMON")[0]) {
		printf("skipped: the loopback data plane builds no fabric\n");
		skip();
	}
	start_or_fail(good, 0, NULL);
	assert_true(harness_log_has(&pcmd, "the emulated softnic fabric, 32 hosts"));
	assert_int_equal(harness_finish(&pcmd), 0);

	assert_non_null(mkdtemp(dir));
	snprintf(bad, sizeof(bad), "%s/bad.yaml", dir);
	snprintf(cfg, sizeof(cfg), "%s/pcmd.yaml", dir);
	snprintf(sock, sizeof(sock), "%s/pcmd.sock", dir);
	f = fopen(bad, "w");
	assert_non_null(f);
	fputs("topology:\n  kind: leaf_spine\n", f);
	fclose(f);
	f = fopen(cfg, "w");
	assert_non_null(f);
	fprintf(f,
		"socket: {path: \"%s\", group: \"\"}\ndatapath:\n  kind: softnic\n"
		"  softnic:\n    topology: \"%s\"\n",
		sock, bad);
	fclose(f);
	assert_int_equal(run_pcmd((const char *[]){"-c", cfg, NULL}, out, sizeof(out)), 1);
	printf("a bad topology: %s", out);
	assert_non_null(strstr(out, "pcmd.yaml:5:15: datapath.softnic.topology: "));
	assert_non_null(strstr(out, "bad.yaml:2:3: topology.kind: unknown key"));
	unlink(bad);
	unlink(cfg);
	rmdir(dir);
}

static void test_log_level_flag_controls_debug_lines(void **state)
{
	static const char quiet[] = "log_level: warn\n"
				    "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n";
	static const char loud[] = "log_level: debug\n"
				   "socket: {path: \"@DIR@/pcmd.sock\", group: \"\"}\n";
	struct pcm_tp_endpoint *ep;

	start_or_fail(quiet, 0, NULL);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &ep), 0);
	pcm_tp_endpoint_close(ep);
	usleep(100000);
	assert_false(harness_log_has(&pcmd, "debug:"));
	assert_false(harness_log_has(&pcmd, "info:"));
	assert_int_equal(harness_finish(&pcmd), 0);
	start_or_fail(loud, 0, NULL);
	assert_int_equal(tp_open(pcmd.sock, 1u << 20, &ep), 0);
	pcm_tp_endpoint_close(ep);
	usleep(100000);
	assert_true(harness_log_has(&pcmd, "pcmd: debug: client 1 connected"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_uid_not_in_allow_list_is_refused_with_reason, stop),
	    cmocka_unit_test_teardown(test_gid_not_in_allow_list_is_refused_and_listed_gid_accepted,
				      stop),
	    cmocka_unit_test_teardown(test_other_user_is_refused_by_pcmd_not_just_the_file_mode,
				      stop),
	    cmocka_unit_test_teardown(test_sighup_with_bad_config_keeps_the_old_one, stop),
	    cmocka_unit_test_teardown(test_sd_notify_ready_status_reloading_stopping_and_watchdog,
				      stop),
	    cmocka_unit_test_teardown(test_sigterm_drains_posted_sends_then_aborts_the_rest, stop),
	    cmocka_unit_test_teardown(test_sigterm_in_abort_mode_fails_outstanding_work_at_once,
				      stop),
	    cmocka_unit_test_teardown(test_stats_and_records_files_are_written, stop),
	    cmocka_unit_test(test_command_line_checks_and_overrides),
	    cmocka_unit_test_teardown(
		test_softnic_topology_file_sets_the_hosts_and_a_bad_one_is_refused, stop),
	    cmocka_unit_test_teardown(test_log_level_flag_controls_debug_lines, stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
