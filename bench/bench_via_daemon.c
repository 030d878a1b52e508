// SPDX-License-Identifier: MIT
/*
 * bench_via_daemon.c - pcm-bench goodput --via-daemon: the cost of going
 * through pcmd, against the in-process library on the same datapath,
 * measured in the same invocation.
 *
 * Both sides run one connection through the public API (pcm/transport.h)
 * between two endpoints of this process, keeping DEPTH messages of S bytes
 * in flight and DEPTH receives posted, with one of two ways to wait
 * (--wait):
 *   auto   (default) spin when the CPUs this process may run on are at least
 *          the busy-polling threads spin needs (SPIN_THREADS: this one and
 *          two engines), else block: with fewer CPUs than pollers, spinning
 *          threads take turns on a core and the figures measure the
 *          scheduler's time slices, not either path (bench/RESULTS.md: on
 *          2 vCPUs both sides move more data blocking than spinning);
 *   spin   both endpoints busy-polled by this thread, engine
 *          threads busy-polling 20 us after their last work: the lowest
 *          latency, but every thread's CPU time is mostly polling;
 *   block  a thread per endpoint (this one receives, another sends), each
 *          sleeping in pcm_tp_wait() when it has nothing to do, and engine
 *          threads that never spin (PCM_TP_FLAG_NO_SPIN in process,
 *          engines.spin_ns: 0 in pcmd; pcmd's loop always sleeps in
 *          io_uring): every CPU nanosecond is work or a wake-up, so the CPU
 *          cost per chunk compares the two paths' work.
 * The two sides:
 *   in process  PCM_TP_BACKEND_INPROC, datapath null (bytes copied), one
 *               engine thread per endpoint;
 *   daemon      PCM_TP_BACKEND_DAEMON through a pcmd on datapath null with
 *               two engines (one per client region, round robin), started
 *               here on a private socket in a temporary directory, or the
 *               one at --socket.
 * Runs alternate (in process, daemon, ...) --runs times; each figure is the
 * median over the runs. A chunk is a chunk_bytes piece of a received
 * message. Wall cost per chunk = run time / chunks received; CPU cost per
 * chunk = CPU time of this process (its engine threads included) plus, in
 * daemon mode, of the pcmd it started (/proc/PID/stat, all threads), over
 * the chunks. daemon_ratio is the wall cost per chunk in daemon mode over
 * the in-process one; daemon_cpu_ratio the same for CPU (null when pcmd's
 * CPU time cannot be read: --socket).
 *
 * The policy defaults to newreno: pcmd always runs a CC package ("none" is
 * not one), and on the lossless null datapath Swift's delay target holds
 * both sides near 1 Gbit/s, which would hide pcmd's cost; newreno's window
 * keeps growing there, so the datapath and pcmd are what is measured.
 *
 * One JSON line: the in-process fields of pcm-bench goodput, then the daemon's
 * and the ratios.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "pcm/transport.h"

#define DEPTH 8	  /* messages in flight, and receives posted */
#define SPIN_THREADS 3 /* --wait spin's busy pollers: this thread and two engines */
#define MAX_RUNS 31
#define OPEN_WAIT_MS 5000

struct vd_opts {
	uint64_t msg_size;
	uint32_t chunk_size;
	double seconds;
	uint32_t runs;
	const char *policy;
	const char *socket; /* NULL: start a pcmd */
	const char *pcmd;   /* NULL: next to pcm-bench */
	bool json;
	bool block;         /* --wait block */
};

/* One side's figures of one run. */
struct vd_run {
	double wall_ns_per_chunk;
	double cpu_ns_per_chunk; /* < 0: not measured */
	double sleeps_per_chunk; /* voluntary context switches (a thread blocked); < 0: not measured */
	double goodput_gbps;
};

struct vd_pcmd {
	pid_t pid;
	char dir[64];
	char sock[128];
	char config[128];
};

static uint64_t vd_clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of every thread of @pid, from /proc/PID/stat (clock ticks); -1: unreadable. */
static int64_t proc_cpu_ns(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long utime, stime;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the name may hold spaces; fields 14 and 15 follow state */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
			 &stime) != 2)
		return -1;
	return (int64_t)((utime + stime) * (1000000000ull / (unsigned long long)sysconf(_SC_CLK_TCK)));
}

/*
 * Voluntary context switches of every thread of @pid (each is a thread that
 * blocked, and so a wake-up someone paid for), from /proc/PID/task/TID/status;
 * -1: unreadable.
 */
static int64_t proc_sleeps(pid_t pid)
{
	char path[96], line[128];
	int64_t total = 0;
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((de = readdir(dir))) {
		unsigned long long v;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/status", (int)pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue; /* a thread that ended meanwhile */
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
				total += (int64_t)v;
		fclose(f);
	}
	closedir(dir);
	return total;
}

/* ---- the private pcmd ----------------------------------------------------------------------- */

/* pcmd next to this pcm-bench: the build tree's daemon/pcmd, else the installed bin/pcmd. */
static int find_pcmd(char *out, size_t len)
{
	static const char *const rel[] = {"/../daemon/pcmd", "/pcmd"};
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -errno;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		int n_out = snprintf(out, len, "%s%s", self, rel[i]);

		if (n_out > 0 && (size_t)n_out < len && access(out, X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

static int write_config(const struct vd_opts *o, struct vd_pcmd *d)
{
	FILE *f = fopen(d->config, "w");

	if (!f)
		return -errno;
	fprintf(f,
		"log_level: warn\n"
		"socket: {path: \"%s\", group: \"\"}\n"
		"datapath: {kind: \"null\", chunk_bytes: %u, paths: 1}\n"
		"engines: {count: 2, spin_ns: %u}\n",
		d->sock, o->chunk_size, o->block ? 0u : 20000u);
	return fclose(f) == 0 ? 0 : -errno;
}

static int pcmd_start(const struct vd_opts *o, struct vd_pcmd *d)
{
	char bin[PATH_MAX];
	int rc;

	if (o->pcmd)
		snprintf(bin, sizeof(bin), "%s", o->pcmd);
	else if (find_pcmd(bin, sizeof(bin)) < 0) {
		fprintf(stderr, "pcm-bench: --via-daemon: no pcmd next to pcm-bench "
				"(../daemon/pcmd or ./pcmd); name one with --pcmd or a running one "
				"with --socket\n");
		return -ENOENT;
	}
	snprintf(d->dir, sizeof(d->dir), "/tmp/pcm-bench-XXXXXX");
	if (!mkdtemp(d->dir))
		return -errno;
	snprintf(d->sock, sizeof(d->sock), "%s/pcmd.sock", d->dir);
	snprintf(d->config, sizeof(d->config), "%s/pcmd.yaml", d->dir);
	rc = write_config(o, d);
	if (rc < 0)
		return rc;
	fflush(stdout);
	d->pid = fork();
	if (d->pid < 0)
		return -errno;
	if (d->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM); /* never outlive the benchmark */
		execl(bin, bin, "-c", d->config, (char *)NULL);
		fprintf(stderr, "pcm-bench: exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	return 0;
}

static void pcmd_stop(struct vd_pcmd *d)
{
	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		waitpid(d->pid, NULL, 0);
	}
	if (d->config[0])
		unlink(d->config);
	if (d->sock[0])
		unlink(d->sock);
	if (d->dir[0])
		rmdir(d->dir);
}

/* ---- one run ------------------------------------------------------------------------------- */

struct vd_side {
	const struct vd_opts *o;
	struct pcm_tp_endpoint *ep[2]; /* 0 sends, 1 receives */
	struct pcm_tp_conn *conn[2];
	uint8_t *buf[2];
	uint64_t bytes, chunks;
	bool measuring;
	_Atomic bool stop;   /* --wait block: the sending thread ends */
	_Atomic int failed;  /* --wait block: the sending thread saw a failure */
};

static int open_endpoint(const struct vd_opts *o, const char *sock, struct pcm_tp_endpoint **ep)
{
	struct pcm_tp_config cfg = {.chunk_bytes = o->chunk_size,
				    .daemon_region_bytes = DEPTH * o->msg_size + (1u << 20)};
	uint64_t until = vd_clock_ns(CLOCK_MONOTONIC) + OPEN_WAIT_MS * 1000000ull;
	int rc;

	if (sock) {
		cfg.backend = PCM_TP_BACKEND_DAEMON;
		cfg.daemon_socket = sock;
	} else {
		cfg.backend = PCM_TP_BACKEND_INPROC;
		cfg.datapath = "null";
		cfg.progress = PCM_TP_PROGRESS_THREAD;
		cfg.flags = o->block ? PCM_TP_FLAG_NO_SPIN : 0;
	}
	/* a pcmd just started may not listen yet */
	while ((rc = pcm_tp_endpoint_open(&cfg, ep)) < 0 && sock &&
	       vd_clock_ns(CLOCK_MONOTONIC) < until)
		usleep(10000);
	if (rc < 0)
		fprintf(stderr, "pcm-bench: open (%s): %s\n", sock ? "daemon" : "in process",
			pcm_tp_last_error());
	return rc;
}

/*
 * Wait for the CONNECT completion on endpoint 0 and the ACCEPT on endpoint 1,
 * polling both (the in-process bootstrap progresses in pcm_tp_poll()).
 */
static int wait_setup(struct vd_side *s)
{
	static const enum pcm_tp_op want[2] = {PCM_TP_OP_CONNECT, PCM_TP_OP_ACCEPT};
	uint64_t until = vd_clock_ns(CLOCK_MONOTONIC) + OPEN_WAIT_MS * 1000000ull;
	bool done[2] = {false, false};

	while (!(done[0] && done[1])) {
		if (vd_clock_ns(CLOCK_MONOTONIC) >= until)
			return -ETIMEDOUT;
		for (int side = 0; side < 2; side++) {
			struct pcm_tp_completion c;

			if (pcm_tp_poll(s->ep[side], &c, 1) != 1 || c.op != want[side])
				continue;
			if (c.status < 0)
				return c.status;
			s->conn[side] = c.conn;
			done[side] = true;
		}
	}
	return 0;
}

static int side_connect(const struct vd_opts *o, struct vd_side *s, const char *addr)
{
	struct pcm_tp_conn_opts copts = {.policy = o->policy, .paths = 1};
	int rc;

	if (pcm_tp_listen(s->ep[1], addr) < 0 || pcm_tp_accept(s->ep[1], 1) < 0 ||
	    pcm_tp_connect(s->ep[0], addr, &copts, 2) < 0) {
		fprintf(stderr, "pcm-bench: connect %s: %s\n", addr, pcm_tp_last_error());
		return -1;
	}
	rc = wait_setup(s);
	if (rc < 0)
		fprintf(stderr, "pcm-bench: connect %s: %s\n", addr, pcm_tp_strerror(rc));
	return rc;
}

static int post(const struct vd_opts *o, struct vd_side *s, int side, uint64_t k)
{
	uint8_t *p = s->buf[side] + (k % DEPTH) * o->msg_size;

	return side ? pcm_tp_recv(s->conn[1], NULL, p, o->msg_size, k)
		    : pcm_tp_send(s->conn[0], NULL, p, o->msg_size, k);
}

/*
 * Take completions on endpoint @side and repost each. Return: how many, -1
 * on a failed completion.
 */
static int pump_side(const struct vd_opts *o, struct vd_side *s, int side)
{
	struct pcm_tp_completion c[32];
	int n = pcm_tp_poll(s->ep[side], c, 32);

	for (int i = 0; i < n; i++) {
		if (c[i].status < 0) {
			fprintf(stderr, "pcm-bench: %s failed: %s\n", side ? "receive" : "send",
				pcm_tp_strerror(c[i].status));
			return -1;
		}
		if (side && s->measuring) {
			s->bytes += c[i].bytes;
			s->chunks += (c[i].bytes + o->chunk_size - 1) / o->chunk_size;
		}
		if (post(o, s, side, c[i].cookie + DEPTH) < 0)
			return -1;
	}
	return n;
}

/* Take completions on both endpoints and repost each; false on a failed completion. */
static bool pump(const struct vd_opts *o, struct vd_side *s)
{
	for (int side = 0; side < 2; side++)
		if (pump_side(o, s, side) < 0)
			return false;
	return true;
}

/* --wait block: endpoint @side's turn, sleeping (up to 10 ms) when it had nothing. */
static int pump_or_sleep(const struct vd_opts *o, struct vd_side *s, int side)
{
	int n = pump_side(o, s, side);

	if (n == 0) {
		int rc = pcm_tp_wait(s->ep[side], 10);

		if (rc < 0 && rc != -ETIMEDOUT) {
			fprintf(stderr, "pcm-bench: wait: %s\n", pcm_tp_strerror(rc));
			return -1;
		}
	}
	return n;
}

/* --wait block: the sending endpoint's thread. */
static void *sender_main(void *arg)
{
	struct vd_side *s = arg;

	while (!atomic_load(&s->stop))
		if (pump_or_sleep(s->o, s, 0) < 0) {
			atomic_store(&s->failed, 1);
			break;
		}
	return NULL;
}

/* Run for @ns: spin on both endpoints, or (--wait block) receive while the sender thread sends. */
static bool run_for(const struct vd_opts *o, struct vd_side *s, uint64_t ns)
{
	uint64_t until = vd_clock_ns(CLOCK_MONOTONIC) + ns;

	while (vd_clock_ns(CLOCK_MONOTONIC) < until) {
		if (!o->block && !pump(o, s))
			return false;
		if (o->block && (pump_or_sleep(o, s, 1) < 0 || atomic_load(&s->failed)))
			return false;
	}
	return true;
}

/* One run: @sock NULL in process, else through the pcmd there (@pcmd_pid: its CPU, or 0). */
static int run_once(const struct vd_opts *o, const char *sock, pid_t pcmd_pid, uint32_t i,
		    struct vd_run *out)
{
	struct vd_side s = {.o = o};
	pthread_t sender;
	bool sending = false;
	char addr[64];
	uint64_t t0, t1, cpu0, cpu1;
	int64_t d0 = 0, d1 = 0, z0, z1, y0 = 0, y1 = 0;
	int rc = -1;

	snprintf(addr, sizeof(addr), "pcm-bench-%d-%s-%u", (int)getpid(), sock ? "d" : "p", i);
	for (int side = 0; side < 2; side++)
		if (open_endpoint(o, sock, &s.ep[side]) < 0)
			goto out;
	if (side_connect(o, &s, addr) < 0)
		goto out;
	for (int side = 0; side < 2; side++) {
		s.buf[side] = pcm_tp_mem_alloc(s.ep[side], DEPTH * o->msg_size);
		if (!s.buf[side])
			goto out;
	}
	for (uint64_t k = 0; k < DEPTH; k++)
		if (post(o, &s, 1, k) < 0 || post(o, &s, 0, k) < 0)
			goto out;
	if (o->block) {
		if (pthread_create(&sender, NULL, sender_main, &s) != 0)
			goto out;
		sending = true;
	}
	/* warm up for a tenth of the run, then measure */
	if (!run_for(o, &s, (uint64_t)(o->seconds * 1e8)))
		goto out;
	s.measuring = true;
	t0 = vd_clock_ns(CLOCK_MONOTONIC);
	cpu0 = vd_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	z0 = proc_sleeps(getpid());
	if (pcmd_pid) {
		d0 = proc_cpu_ns(pcmd_pid);
		y0 = proc_sleeps(pcmd_pid);
	}
	if (!run_for(o, &s, (uint64_t)(o->seconds * 1e9)))
		goto out;
	t1 = vd_clock_ns(CLOCK_MONOTONIC);
	cpu1 = vd_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	z1 = proc_sleeps(getpid());
	if (pcmd_pid) {
		d1 = proc_cpu_ns(pcmd_pid);
		y1 = proc_sleeps(pcmd_pid);
	}
	if (!s.chunks) {
		fprintf(stderr, "pcm-bench: no message arrived in %.3f s\n", o->seconds);
		goto out;
	}
	out->wall_ns_per_chunk = (double)(t1 - t0) / (double)s.chunks;
	out->goodput_gbps = (double)s.bytes * 8 / ((double)(t1 - t0));
	out->cpu_ns_per_chunk = -1;
	if (!sock || (pcmd_pid && d0 >= 0 && d1 >= 0))
		out->cpu_ns_per_chunk = ((double)(cpu1 - cpu0) + (double)(d1 - d0)) /
					(double)s.chunks;
	out->sleeps_per_chunk = -1;
	if (z0 >= 0 && z1 >= 0 && (!sock || (pcmd_pid && y0 >= 0 && y1 >= 0)))
		out->sleeps_per_chunk = (double)(z1 - z0 + y1 - y0) / (double)s.chunks;
	rc = 0;
out:
	if (sending) {
		atomic_store(&s.stop, true);
		pthread_join(sender, NULL);
	}
	/*
	 * Close the endpoints, which frees their memory once their engines are
	 * gone; never pcm_tp_mem_free() a buffer with posts outstanding. The
	 * sender first: in process its engine copies into the receiver's
	 * buffers, so those must outlive it.
	 */
	for (int side = 0; side < 2; side++)
		if (s.ep[side])
			pcm_tp_endpoint_close(s.ep[side]);
	return rc;
}

/* ---- medians and the line ------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of field @off (a double) of @n runs; negative if any run lacks it. */
static double median_of(const struct vd_run *r, uint32_t n, size_t off)
{
	double v[MAX_RUNS];

	for (uint32_t i = 0; i < n; i++) {
		memcpy(&v[i], (const char *)&r[i] + off, sizeof(double));
		if (v[i] < 0)
			return -1;
	}
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void print_ratio(const char *name, double num, double den)
{
	if (num >= 0 && den > 0)
		printf(",\"%s\":%.4f", name, num / den);
	else
		printf(",\"%s\":null", name);
}

/* @v with @decimals, or null when not measured (< 0). */
static void print_fixed(const char *name, double v, int decimals)
{
	if (v >= 0)
		printf(",\"%s\":%.*f", name, decimals, v);
	else
		printf(",\"%s\":null", name);
}

static void print_cpu(const char *name, double v)
{
	print_fixed(name, v, 1);
}

static void print_line(const struct vd_opts *o, const struct vd_run *in, const struct vd_run *dm)
{
	uint32_t n = o->runs;
	double in_wall = median_of(in, n, offsetof(struct vd_run, wall_ns_per_chunk));
	double dm_wall = median_of(dm, n, offsetof(struct vd_run, wall_ns_per_chunk));
	double in_cpu = median_of(in, n, offsetof(struct vd_run, cpu_ns_per_chunk));
	double dm_cpu = median_of(dm, n, offsetof(struct vd_run, cpu_ns_per_chunk));
	double in_sleeps = median_of(in, n, offsetof(struct vd_run, sleeps_per_chunk));
	double dm_sleeps = median_of(dm, n, offsetof(struct vd_run, sleeps_per_chunk));
	double in_gbps = median_of(in, n, offsetof(struct vd_run, goodput_gbps));
	double dm_gbps = median_of(dm, n, offsetof(struct vd_run, goodput_gbps));

	printf("{\"bench\":\"goodput\",\"datapath\":\"null\",\"policy\":\"%s\",\"mode\":\"sync\","
	       "\"flows\":1,\"msg_size\":%" PRIu64 ",\"chunk_size\":%u,\"engines\":2,"
	       "\"goodput_gbps\":%.3f,\"chunks_per_s\":%.0f",
	       o->policy, o->msg_size, o->chunk_size, in_gbps, 1e9 / in_wall);
	print_cpu("cpu_ns_per_chunk", in_cpu);
	printf(",\"time\":\"wall\",\"seconds\":%.6f,\"runs\":%u,\"via_daemon\":true,"
	       "\"wait\":\"%s\",\"daemon_goodput_gbps\":%.3f,\"daemon_chunks_per_s\":%.0f,"
	       "\"wall_ns_per_chunk\":%.1f,\"daemon_wall_ns_per_chunk\":%.1f",
	       o->seconds, n, o->block ? "block" : "spin", dm_gbps, 1e9 / dm_wall, in_wall,
	       dm_wall);
	print_cpu("daemon_cpu_ns_per_chunk", dm_cpu);
	print_ratio("daemon_ratio", dm_wall, in_wall);
	print_ratio("daemon_cpu_ratio", dm_cpu, in_cpu);
	print_fixed("sleeps_per_chunk", in_sleeps, 3);
	print_fixed("daemon_sleeps_per_chunk", dm_sleeps, 3);
	printf("}\n");
	fflush(stdout);
}

/* ---- options ------------------------------------------------------------------------------ */

/* --wait auto: block unless every busy poller of --wait spin can have a CPU of its own. */
static bool auto_block(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return true;
	return CPU_COUNT(&set) < SPIN_THREADS;
}

static int parse_vd_opts(int argc, char **argv, struct vd_opts *o)
{
	static const struct option opts[] = {
	    {"via-daemon", no_argument, NULL, 'V'},  {"msg-size", required_argument, NULL, 's'},
	    {"chunk-size", required_argument, NULL, 'c'}, {"seconds", required_argument, NULL, 't'},
	    {"runs", required_argument, NULL, 'r'},  {"policy", required_argument, NULL, 'p'},
	    {"socket", required_argument, NULL, 'S'}, {"pcmd", required_argument, NULL, 'D'},
	    {"datapath", required_argument, NULL, 'd'}, {"json", no_argument, NULL, 'j'},
	    {"wait", required_argument, NULL, 'w'},  {NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c;

	*o = (struct vd_opts){.msg_size = 1 << 20, .chunk_size = 65536, .seconds = 1.0, .runs = 3,
			      .policy = "newreno", .block = auto_block()};
	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'V': break;
		case 'j': o->json = true; break;
		case 'p': o->policy = optarg; break;
		case 'S': o->socket = optarg; break;
		case 'D': o->pcmd = optarg; break;
		case 'w':
			if (strcmp(optarg, "spin") && strcmp(optarg, "block") &&
			    strcmp(optarg, "auto")) {
				fprintf(stderr, "pcm-bench goodput --via-daemon: --wait %s: auto, "
						"spin or block\n", optarg);
				return -EINVAL;
			}
			o->block = strcmp(optarg, "auto") == 0 ? auto_block()
							       : strcmp(optarg, "block") == 0;
			break;
		case 'd':
			if (strcmp(optarg, "null") != 0) {
				fprintf(stderr, "pcm-bench goodput --via-daemon: --datapath %s: only "
						"null is measured through pcmd (both sides need the "
						"same datapath on the wall clock; softnic runs in "
						"emulated time)\n", optarg);
				return -EINVAL;
			}
			break;
		case 's':
			if (bench_parse_in("--msg-size", optarg, PCM_UNIT_SIZE, "B", 1, 64ull << 20,
					   &o->msg_size) < 0)
				return -EINVAL;
			break;
		case 'c':
			if (bench_parse_in("--chunk-size", optarg, PCM_UNIT_SIZE, "B", 4096, 1u << 20,
					   &v) < 0)
				return -EINVAL;
			o->chunk_size = (uint32_t)v;
			break;
		case 'r':
			if (bench_parse_u32("--runs", optarg, 1, MAX_RUNS, &o->runs) < 0)
				return -EINVAL;
			break;
		case 't':
			if (bench_parse_seconds("--seconds", optarg, 600, &o->seconds) < 0)
				return -EINVAL;
			break;
		default: return -EINVAL;
		}
	}
	return 0;
}

int bench_goodput_via_daemon(int argc, char **argv)
{
	struct vd_run in[MAX_RUNS], dm[MAX_RUNS];
	struct vd_pcmd d = {0};
	struct vd_opts o;
	const char *sock;
	int rc = 1;

	if (parse_vd_opts(argc, argv, &o) < 0)
		return 2;
	if (!o.socket && pcmd_start(&o, &d) < 0)
		goto out;
	sock = o.socket ? o.socket : d.sock;
	for (uint32_t i = 0; i < o.runs; i++)
		if (run_once(&o, NULL, 0, i, &in[i]) < 0 || run_once(&o, sock, d.pid, i, &dm[i]) < 0)
			goto out;
	print_line(&o, in, dm);
	rc = 0;
out:
	if (!o.socket)
		pcmd_stop(&d);
	return rc;
}
