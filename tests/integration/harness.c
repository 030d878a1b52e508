// SPDX-License-Identifier: MIT
/*
 * harness.c - running pcmd for the integration tests.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#ifndef PCMD_DAEMON
#error "PCMD_DAEMON must name the pcmd binary (the transport engine's data plane)"
#endif

/* The daemon under test: pcmd itself, or PCMD_TEST_DAEMON (pcmd-loopback for the
 * tests that check the seam's contract on the tests' loopback data plane). */
static const char *daemon_path(void)
{
	const char *s = getenv("PCMD_TEST_DAEMON");

	return s && s[0] ? s : PCMD_DAEMON;
}

static const char default_yaml[] = "log_level: debug\n"
				   "socket:\n"
				   "  path: @DIR@/pcmd.sock\n"
				   "  group: \"\"\n";

uint64_t harness_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

const char *harness_datapath(void)
{
	const char *s = getenv("PCMD_TEST_DATAPATH");

	return s && s[0] ? s : "softnic";
}

int harness_write_config(struct pcmd_proc *p, const char *yaml)
{
	const char *s = yaml ? yaml : default_yaml;
	FILE *f = fopen(p->config, "w");

	if (!f)
		return -errno;
	while (*s) {
		const char *dir = strstr(s, "@DIR@"), *dp = strstr(s, "@DATAPATH@");
		const char *at = dir && (!dp || dir < dp) ? dir : dp;

		if (!at)
			break;
		fwrite(s, 1, (size_t)(at - s), f);
		fputs(at == dir ? p->dir : harness_datapath(), f);
		s = at + (at == dir ? strlen("@DIR@") : strlen("@DATAPATH@"));
	}
	fputs(s, f);
	return fclose(f) == 0 ? 0 : -EIO;
}

static int open_notify(struct pcmd_proc *p)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	snprintf(p->notify, sizeof(p->notify), "%s/notify.sock", p->dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p->notify);
	p->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->notify_fd < 0 || bind(p->notify_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}

static int sock_ready(const struct pcmd_proc *p)
{
	int fd = harness_raw_connect(p);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static void exec_pcmd(struct pcmd_proc *p, const char *const *env, pid_t parent)
{
	int log = open(p->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	char notify_env[320];

	/* pcmd dies with the test, even when the test crashes before its teardown: a pcmd left
	 * behind (its engines spinning) would load the machine under every later test. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(126);
	if (log >= 0) {
		dup2(log, 2);
		dup2(log, 1);
	}
	if (p->notify[0]) {
		snprintf(notify_env, sizeof(notify_env), "NOTIFY_SOCKET=%s", p->notify);
		putenv(notify_env);
	}
	for (size_t i = 0; env && env[i]; i++)
		putenv((char *)env[i]);
#if defined(__SANITIZE_ADDRESS__)
	/* ASan keeps freed memory in quarantine (256 MB), which would read as growth in the
	 * RSS checks: pcmd under test reuses it at once instead. */
	{
		static char asan[512];

		snprintf(asan, sizeof(asan), "ASAN_OPTIONS=%s%squarantine_size_mb=0",
			 getenv("ASAN_OPTIONS") ? getenv("ASAN_OPTIONS") : "",
			 getenv("ASAN_OPTIONS") ? ":" : "");
		putenv(asan);
	}
#endif
	execl(daemon_path(), daemon_path(), "-c", p->config, (char *)NULL);
	_exit(127);
}

int harness_start(struct pcmd_proc *p, const char *yaml, int notify, const char *const *env)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->notify_fd = -1;
	snprintf(p->dir, sizeof(p->dir), "/tmp/pcmd-test-XXXXXX");
	if (!mkdtemp(p->dir))
		return -errno;
	snprintf(p->sock, sizeof(p->sock), "%s/pcmd.sock", p->dir);
	snprintf(p->config, sizeof(p->config), "%s/pcmd.yaml", p->dir);
	snprintf(p->log, sizeof(p->log), "%s/pcmd.log", p->dir);
	rc = harness_write_config(p, yaml);
	if (rc == 0 && notify)
		rc = open_notify(p);
	if (rc < 0)
		return rc;
	return harness_restart(p, env);
}

int harness_restart(struct pcmd_proc *p, const char *const *env)
{
	uint64_t deadline;
	int status;
	pid_t parent;

	parent = getpid();
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (p->pid == 0)
		exec_pcmd(p, env, parent);
	deadline = harness_now_ms() + 20000;
	while (harness_now_ms() < deadline) {
		if (sock_ready(p))
			return 0;
		if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
			fprintf(stderr, "pcmd exited early (status %#x)\n", status);
			harness_dump_log(p);
			p->pid = 0;
			return -ECHILD;
		}
		usleep(10000);
	}
	harness_dump_log(p);
	return -ETIMEDOUT;
}

int harness_stop(struct pcmd_proc *p, int sig, int timeout_ms)
{
	uint64_t deadline = harness_now_ms() + (uint64_t)timeout_ms;
	int status;

	if (p->pid <= 0)
		return -1;
	kill(p->pid, sig);
	while (harness_now_ms() < deadline) {
		if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
			p->pid = 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		usleep(5000);
	}
	kill(p->pid, SIGKILL);
	waitpid(p->pid, &status, 0);
	p->pid = 0;
	return -1;
}

void harness_cleanup(struct pcmd_proc *p)
{
	char path[600];
	struct dirent *e;
	DIR *d;

	if (p->pid > 0)
		harness_stop(p, SIGKILL, 5000);
	if (getenv("PCMD_TEST_KEEP")) {
		fprintf(stderr, "kept %s (PCMD_TEST_KEEP)\n", p->dir);
		return;
	}
	if (p->notify_fd >= 0)
		close(p->notify_fd);
	d = opendir(p->dir);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", p->dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(p->dir);
}

int harness_finish(struct pcmd_proc *p)
{
	int rc = p->pid > 0 ? harness_stop(p, SIGTERM, 10000) : 0;

	if (rc != 0) {
		fprintf(stderr, "pcmd exited with status %d\n", rc);
		harness_dump_log(p);
	}
	harness_cleanup(p);
	return rc == 0 ? 0 : -1;
}

void harness_dump_log(const struct pcmd_proc *p)
{
	char buf[4096];
	size_t n;
	FILE *f = fopen(p->log, "r");

	if (!f)
		return;
	fprintf(stderr, "---- pcmd log (%s) ----\n", p->log);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
	fprintf(stderr, "---- end of pcmd log ----\n");
	fclose(f);
}

int harness_log_has(const struct pcmd_proc *p, const char *needle)
{
	char *buf;
	long n;
	int found = 0;
	FILE *f = fopen(p->log, "r");

	if (!f)
		return 0;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n)
		found = strstr(buf, needle) != NULL;
	free(buf);
	fclose(f);
	return found;
}

static long status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	long v = -1;
	size_t klen = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0)
			v = strtol(line + klen, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

long harness_rss_kb(pid_t pid)
{
	return status_kb(pid, "VmRSS:");
}

long harness_vm_kb(pid_t pid)
{
	return status_kb(pid, "VmSize:");
}

int harness_fd_count(pid_t pid)
{
	return harness_fds_on(pid, NULL);
}

int harness_fds_on(pid_t pid, const char *path)
{
	char dir[64], link[300], target[PATH_MAX];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		if (!path) {
			n++;
			continue;
		}
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue; /* closed while listed */
		target[len] = '\0';
		n += strcmp(target, path) == 0;
	}
	if (d)
		closedir(d);
	return d ? n : -1;
}

int harness_wait_fds(pid_t pid, int want, int timeout_ms)
{
	uint64_t deadline = harness_now_ms() + (uint64_t)timeout_ms;
	int n = harness_fd_count(pid);

	while (n != want && harness_now_ms() < deadline) {
		usleep(5000);
		n = harness_fd_count(pid);
	}
	return n;
}

int harness_settled_fds(pid_t pid)
{
	uint64_t deadline = harness_now_ms() + 5000;
	int n = harness_fd_count(pid), same = 0;

	while (same < 5 && harness_now_ms() < deadline) {
		int m;

		usleep(20000);
		m = harness_fd_count(pid);
		same = m == n ? same + 1 : 0;
		n = m;
	}
	return n;
}

int harness_map_count(pid_t pid)
{
	char path[64], line[512];
	int n = 0;
	FILE *f;

	/* Only the clients' regions: a sanitizer's allocator maps and unmaps at will. */
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, "memfd:pcmd-client") != NULL;
	if (f)
		fclose(f);
	return f ? n : -1;
}

int harness_notify_read(struct pcmd_proc *p, char *buf, size_t len, int wait_ms, const char *until)
{
	uint64_t deadline = harness_now_ms() + (uint64_t)wait_ms;
	size_t used = strlen(buf);

	while (harness_now_ms() < deadline) {
		struct pollfd pfd = {.fd = p->notify_fd, .events = POLLIN};
		ssize_t n;

		if (until && strstr(buf, until))
			return 1;
		if (used + 2 >= len)
			break; /* full: what came is kept, nothing is written past @len */
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		n = recv(p->notify_fd, buf + used, len - used - 2, 0);
		if (n > 0) {
			used += (size_t)n;
			buf[used++] = '\n';
			buf[used] = '\0';
		}
	}
	return until ? strstr(buf, until) != NULL : 1;
}

int harness_raw_connect(const struct pcmd_proc *p)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p->sock);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

ssize_t harness_raw_rpc(int fd, const void *msg, size_t len, void *reply, size_t cap)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	ssize_t n;

	if (len && send(fd, msg, len, MSG_NOSIGNAL) < 0 && errno != EPIPE)
		return -errno;
	for (;;) {
		if (poll(&pfd, 1, 10000) <= 0)
			return -ETIMEDOUT;
		n = recv(fd, reply, cap, 0);
		if (n < 0)
			return -errno;
		/* Skip notices: the tests look at replies. */
		if ((size_t)n >= sizeof(struct pcmd_msg_hdr) &&
		    ((const struct pcmd_msg_hdr *)reply)->type == PCMD_MSG_NOTICE)
			continue;
		return n;
	}
}

void harness_hdr(struct pcmd_msg_hdr *h, uint16_t type, size_t len, uint32_t seq)
{
	h->magic = PCMD_PROTO_MAGIC;
	h->version = PCMD_PROTO_VERSION;
	h->type = type;
	h->len = (uint32_t)len;
	h->seq = seq;
}

int harness_raw_hello(int fd, uint32_t role)
{
	struct pcmd_req_hello q = {
	    .version_min = PCMD_PROTO_VERSION, .version_max = PCMD_PROTO_VERSION, .role = role};
	uint8_t rep[PCMD_MSG_MAX_BYTES];
	ssize_t n;

	harness_hdr(&q.hdr, PCMD_MSG_HELLO, sizeof(q), 1);
	snprintf(q.name, sizeof(q.name), "raw test client");
	n = harness_raw_rpc(fd, &q, sizeof(q), rep, sizeof(rep));
	if (n < (ssize_t)sizeof(struct pcmd_reply_status))
		return n < 0 ? (int)n : -EPROTO;
	return ((struct pcmd_reply_status *)rep)->status;
}

/* splitmix64: a cheap, well-mixed sequence for test data. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void harness_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = mix(seed ^ (i / 8));
		size_t n = len - i < 8 ? len - i : 8;

		memcpy(p + i, &v, n);
	}
}

int harness_check(const void *buf, size_t len, uint64_t seed, size_t *first_bad)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = mix(seed ^ (i / 8));
		size_t n = len - i < 8 ? len - i : 8;

		if (memcmp(p + i, &v, n) != 0) {
			for (size_t j = 0; j < n; j++)
				if (p[i + j] != ((uint8_t *)&v)[j]) {
					*first_bad = i + j;
					break;
				}
			return -1;
		}
	}
	return 0;
}

static int admin_query(const struct pcmd_proc *p, uint16_t type, void *out, size_t len)
{
	struct pcmd_req_empty q;
	uint8_t rep[PCMD_MSG_MAX_BYTES];
	int fd = harness_raw_connect(p), rc;
	ssize_t n;

	if (fd < 0)
		return fd;
	rc = harness_raw_hello(fd, PCMD_ROLE_ADMIN);
	if (rc == 0) {
		harness_hdr(&q.hdr, type, sizeof(q), 2);
		n = harness_raw_rpc(fd, &q, sizeof(q), rep, sizeof(rep));
		if (n != (ssize_t)len)
			rc = n < 0 ? (int)n : -EPROTO;
		else
			memcpy(out, rep, len);
	}
	close(fd);
	return rc;
}

int harness_stats(const struct pcmd_proc *p, struct pcmd_rep_stats *out)
{
	return admin_query(p, PCMD_MSG_STATS, out, sizeof(*out));
}

int harness_status(const struct pcmd_proc *p, struct pcmd_rep_status *out)
{
	return admin_query(p, PCMD_MSG_STATUS, out, sizeof(*out));
}

int harness_wait_stats(const struct pcmd_proc *p, int (*cond)(const struct pcmd_rep_stats *),
		       int timeout_ms, struct pcmd_rep_stats *last)
{
	uint64_t deadline = harness_now_ms() + (uint64_t)timeout_ms;

	while (harness_now_ms() < deadline) {
		if (harness_stats(p, last) == 0 && cond(last))
			return 1;
		usleep(10000);
	}
	return 0;
}
