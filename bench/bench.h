/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what pcm-bench's subcommands share: options, the ACK trace every
 * handler benchmark replays and the loops that feed it to a shell, the native
 * Swift baseline (bench_native.c), the helpers (bench_util.c), and each
 * subcommand's entry point.
 */
#ifndef PCM_BENCH_BENCH_H
#define PCM_BENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "async.h"
#include "native_swift.h"
#include "package.h"
#include "pcm_units.h"
#include "shell.h"

#define TRACE_LEN 65536u /* distinct events, replayed round-robin over the flows */
#define MAX_BURST 256

struct bench_opts {
	const char *policy; /* NULL: every built-in */
	uint32_t flows;
	uint64_t events;
	unsigned runs;
	uint32_t burst;
	bool json;
	bool async; /* --mode async-*: the asynchronous shell */
	enum pcm_async_mode async_mode;
	uint32_t workers;
	uint32_t skew_bound; /* async-bounded */
};

/* A compact ACK trace: what a NIC or transport would report per ACK. */
struct trace {
	uint32_t rtt_ns[TRACE_LEN];
	uint8_t flags[TRACE_LEN]; /* TRACE_* */
};

enum {
	TRACE_ECN = 1,
	TRACE_NACK = 2,
	TRACE_RTO = 4,
};

struct run_result {
	double seconds;
	double cpu_seconds; /* the calling thread's CPU time */
	uint64_t calls;
};

#define SIGBIT(x) ((pcm_uint)1 << PCM_SIG_##x)

/* Build the event a datapath hands the shell for trace entry @i. */
static inline void make_event(const struct trace *t, uint32_t i, struct pcm_event *ev)
{
	uint8_t f = t->flags[i];

	ev->valid = SIGBIT(ACK) | SIGBIT(DATA_TX) | SIGBIT(RTT) | SIGBIT(TX_EVENT) |
		    SIGBIT(TX_READY_PKTS);
	ev->values[PCM_SIG_ACK] = 1;
	ev->values[PCM_SIG_DATA_TX] = 4096;
	ev->values[PCM_SIG_RTT] = (pcm_uint)t->rtt_ns[i] * 1000;
	ev->values[PCM_SIG_TX_EVENT] = 1;
	/* the ACK opened the window for one packet: LB policies pick its entropy */
	ev->values[PCM_SIG_TX_READY_PKTS] = 1;
	/* rare, and one test: GCC's -O3 otherwise builds each mask in a register */
	if (__builtin_expect(f & (TRACE_ECN | TRACE_NACK | TRACE_RTO), 0)) {
		if (f & TRACE_ECN) {
			ev->valid |= SIGBIT(ECN) | SIGBIT(CNP);
			ev->values[PCM_SIG_ECN] = 1;
			ev->values[PCM_SIG_CNP] = 1;
		}
		if (f & TRACE_NACK) {
			ev->valid |= SIGBIT(NACK);
			ev->values[PCM_SIG_NACK] = 1;
		}
		if (f & TRACE_RTO) {
			ev->valid |= SIGBIT(RTO);
			ev->values[PCM_SIG_RTO] = 1;
		}
	}
}

static inline void make_native_event(const struct trace *t, uint32_t i,
				     struct native_swift_event *ev)
{
	uint8_t f = t->flags[i];

	ev->acks = 1;
	ev->nacks = (f & TRACE_NACK) != 0;
	ev->rtos = (f & TRACE_RTO) != 0;
	ev->has_rtt = true;
	ev->acked_bytes = 4096;
	ev->rtt_ps = (uint64_t)t->rtt_ns[i] * 1000;
}

/*
 * How a datapath hands a shell its events: one call per event, or bursts
 * gathered as a completion-queue poll would; one loop each for the sync and
 * the async shell (bench_feed_each(), bench_feed_bursts()). Callers pass a
 * constant @kind, so the inlined loop calls that shell directly.
 */
enum bench_shell_kind {
	BENCH_SHELL_SYNC,  /* struct pcm_shell */
	BENCH_SHELL_ASYNC, /* struct pcm_async */
};

/* The handler benchmarks' simulated clock, ps; it never goes back (bench_util.c). */
extern pcm_uint bench_now_ps;

static inline __attribute__((always_inline)) void
bench_feed(enum bench_shell_kind kind, void *shell, uint32_t flow, const struct pcm_event *ev,
	   pcm_uint now_ps)
{
	if (kind == BENCH_SHELL_SYNC)
		pcm_shell_feed(shell, flow, ev, now_ps);
	else
		pcm_async_feed(shell, flow, ev, now_ps);
}

static inline __attribute__((always_inline)) void
bench_feed_burst(enum bench_shell_kind kind, void *shell, const struct pcm_flow_event *evs,
		 uint32_t n)
{
	if (kind == BENCH_SHELL_SYNC)
		pcm_shell_feed_burst(shell, evs, n);
	else
		pcm_async_feed_burst(shell, evs, n);
}

/* Feed @events events of @t to @shell one by one, round-robin over @flows flows. */
static inline __attribute__((always_inline)) void
bench_feed_each(enum bench_shell_kind kind, void *shell, const struct trace *t, uint64_t events,
		uint32_t flows)
{
	struct pcm_event ev = { 0 };
	uint32_t flow = 0;

	for (uint64_t n = 0; n < events; n++) {
		make_event(t, (uint32_t)n & (TRACE_LEN - 1), &ev);
		bench_feed(kind, shell, flow, &ev, bench_now_ps += 1000);
		flow = flow + 1 == flows ? 0 : flow + 1;
	}
}

/*
 * The same in bursts of @burst events gathered in @batch (MAX_BURST entries);
 * shaped as bench_native.c's run_native_bursts(): the two differ only in the
 * event and the call.
 */
static inline __attribute__((always_inline)) void
bench_feed_bursts(enum bench_shell_kind kind, void *shell, struct pcm_flow_event *batch,
		  const struct trace *t, uint64_t events, uint32_t flows, uint32_t burst)
{
	uint32_t flow = 0, fill = 0;

	for (uint64_t n = 0; n < events; n++) {
		batch[fill].flow = flow;
		batch[fill].now_ps = bench_now_ps += 1000;
		make_event(t, (uint32_t)n & (TRACE_LEN - 1), &batch[fill].ev);
		if (++fill == burst) {
			bench_feed_burst(kind, shell, batch, fill);
			fill = 0;
		}
		flow = flow + 1 == flows ? 0 : flow + 1;
	}
	if (fill)
		bench_feed_burst(kind, shell, batch, fill);
}

/* bench_util.c: the helpers every subcommand may call; it calls none of them. */

uint64_t bench_xorshift64(uint64_t *s);
double bench_now_s(void);
/*
 * CPU time of the calling thread and of the whole process: on a shared
 * machine a thread may run a fraction of the wall-clock time, and its CPU
 * time is what it cost.
 */
double bench_thread_cpu_s(void);
double bench_process_cpu_s(void);
/* Sorts @v. */
double bench_median(double *v, unsigned n);
int bench_parse_u64(const char *flag, const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* The same for a 32-bit option (@max <= UINT32_MAX). */
int bench_parse_u32(const char *flag, const char *s, uint32_t min, uint32_t max, uint32_t *out);

/**
 * bench_run_piped() - run the program at path @argv[0] with @argv, handing
 * its stdout (and its stderr, with @merge_stderr; else that goes to ours) to
 * @chunk as it comes, to the end, then wait for it.
 *
 * Return: its exit status (128 + the signal that killed it), or -errno when
 * it could not be started.
 */
int bench_run_piped(char *const argv[], bool merge_stderr,
		    void (*chunk)(void *ctx, const char *data, size_t n), void *ctx);

/**
 * bench_installed_data() - the path of share/pcm/@rel in the install this
 * program belongs to: the datadir meson configured when it is absolute, else
 * that datadir relative to this program's directory (a relocatable prefix).
 * Nothing is checked for existence.
 * @rel: the file under share/pcm ("scenarios/x.yaml").
 * @out: the path, @len bytes.
 *
 * Return: 0, -ENAMETOOLONG, -ENOENT (this program's directory is unknown).
 */
int bench_installed_data(const char *rel, char *out, size_t len);

/* bench_flags.c */
/*
 * A flag's size, rate or duration (pcm-units(7)) as a whole number of @unit,
 * in @min..@max; a bare number is in @unit. Prints what is wrong.
 */
int bench_parse_in(const char *flag, const char *s, enum pcm_unit_kind kind, const char *unit,
		   uint64_t min, uint64_t max, uint64_t *out);
/* A flag's duration in seconds, in (0, @max]; a bare number is seconds. Prints what is wrong. */
int bench_parse_seconds(const char *flag, const char *s, double max, double *out);

/* bench_native.c: the native Swift baseline of the handler benchmarks. */

#define BENCH_MAX_RUNS 64

/* The baseline of one benchmark: its flows, and its figures run by run. */
struct bench_baseline {
	struct native_swift_flow *flows; /* NULL: the package has no baseline */
	struct native_swift_params params;
	uint32_t n_flows;
	uint32_t burst; /* events per burst; 1: one call per event */
	double ns[BENCH_MAX_RUNS], cpu_ns[BENCH_MAX_RUNS]; /* per event, wall and CPU time */
};

/*
 * The baseline of @pkg (only Swift in double has one) over @flows flows, fed
 * @burst events at a time. Return: 0, -ENOMEM. Release with bench_baseline_fini().
 */
int bench_baseline_init(struct bench_baseline *b, const struct pcm_package *pkg, uint32_t flows,
			uint32_t burst);
/* One run of @events events of @t, recorded as measured run @run (-1: a warm-up). */
void bench_baseline_run(struct bench_baseline *b, const struct trace *t, uint64_t events, int run);
/* The medians of the first @runs runs (sorts them), per event; 0 without a baseline. */
void bench_baseline_medians(struct bench_baseline *b, unsigned runs, double *ns, double *cpu_ns);
void bench_baseline_fini(struct bench_baseline *b);
/* A PCM shell's figures, run by run: per event (wall and CPU time) and calls per second. */
struct bench_figures {
	double ns[BENCH_MAX_RUNS], cpu_ns[BENCH_MAX_RUNS], mcalls[BENCH_MAX_RUNS];
};

/*
 * Record measured run @run of @events events, which took @seconds (@cpu_seconds
 * of the feeding thread's time) and made @calls handler calls.
 */
void bench_figures_record(struct bench_figures *f, int run, uint64_t events, double seconds,
			  double cpu_seconds, uint64_t calls);
/* One run of a PCM shell over @events events, recorded as measured run @run (-1: a warm-up). */
typedef void (*bench_run_fn)(void *ctx, uint64_t events, int run);
/*
 * Warm both sides up with @events / 4 events, then alternate @runs runs of
 * @run and of @native, so that noise hits both alike.
 */
void bench_interleave(bench_run_fn run, void *ctx, struct bench_baseline *native,
		      const struct trace *t, uint64_t events, unsigned runs);
/* "  native N ns  ratio R" after a figure of @ns per event, when @native_ns > 0. */
void bench_print_ratio_text(double ns, double native_ns);
/* ,"@native_key":N,"@ratio_key":R in a JSON line, when @native_ns > 0. */
void bench_print_ratio_json(const char *native_key, const char *ratio_key, double ns,
			    double native_ns);

/* The subcommands: pcm-bench.c's command table names these, and nothing else calls them. */

/* pcm-bench handlers (bench_handlers.c) */
int bench_handlers(int argc, char **argv);

/* bench_async.c: handlers --mode async-* (called by bench_handlers.c), validate-rtt-injection */
int bench_async_handlers(const struct pcm_package *pkg, const struct bench_opts *o,
			 const struct trace *t);
int bench_validate_rtt_injection(int argc, char **argv);

/* bench_arith.c */
int bench_validate_arith(int argc, char **argv);

/* bench_simscale.c: pcm-sim's speed as the fat tree grows */
int bench_sim_scale(int argc, char **argv);

/* pcm-bench goodput / latency (bench_transport.c): the transport engine over a datapath. */
int bench_goodput(int argc, char **argv);
int bench_latency(int argc, char **argv);
/* pcm-bench goodput --via-daemon (bench_via_daemon.c): in process against through pcmd. */
int bench_goodput_via_daemon(int argc, char **argv);

#endif /* PCM_BENCH_BENCH_H */
