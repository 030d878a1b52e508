// SPDX-License-Identifier: MIT
/*
 * pcm-bench - pcm's benchmarks. Each result is one JSON line that carries its
 * parameters and, where there is one, the ratio against a baseline measured
 * in the same run. Figures are medians over interleaved runs, because these
 * machines are noisy.
 *
 *   pcm-bench handlers [--json] [--policy NAME|FILE.so] [--flows N] [--events N] [--runs N]
 *                      [--burst N] [--mode sync|async-relaxed|async-locked|async-bounded]
 *                      [--workers N] [--skew-bound N]
 *   pcm-bench validate-rtt-injection [--json] [--observations N] [--flows N] [--gap-ns N]
 *                      [--queue-ns N] [--skew-bound N] [--csv FILE]
 *   pcm-bench validate-arith --policy NAME [--scenario FILE] [--policy-dir DIR] [--seed N]
 *                      [--json]
 *   pcm-bench sim-scale [--scenario FILE] [--k K1,K2,...] [--rounds N] [--set KEY=VALUE]...
 *                      [--json]
 *   pcm-bench list
 *   pcm-bench goodput ... | latency ... (usage() below)
 *
 * This file is the command table and pcm-bench list; each subcommand lives
 * in its own file (bench.h), and what they share in bench_util.c and
 * bench_native.c, which call none of them.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "builtin.h"

static int cmd_list(int argc, char **argv)
{
	for (size_t i = 0; pcm_builtin_policies[i]; i++)
		printf("%-16s %s\n", pcm_builtin_policies[i]->name,
		       pcm_builtin_policies[i]->description);
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage:\n"
	      "  pcm-bench handlers [--json] [--policy NAME|FILE.so] [--flows N] [--events N]\n"
	      "                     [--runs N] [--burst N]\n"
	      "                     [--mode sync|async-relaxed|async-locked|async-bounded]\n"
	      "                     [--workers N] [--skew-bound N]\n"
	      "  pcm-bench validate-rtt-injection [--json] [--observations N] [--flows N]\n"
	      "                     [--gap-ns N] [--queue-ns N] [--skew-bound N] [--csv FILE]\n"
	      "  pcm-bench validate-arith --policy NAME [--scenario FILE] [--policy-dir DIR]\n"
	      "                     [--seed N] [--json]\n"
	      "  pcm-bench sim-scale [--scenario FILE] [--k K1,K2,...] [--rounds N]\n"
	      "                     [--set KEY=VALUE]... [--json]\n"
	      "  pcm-bench goodput [--datapath null|softnic|verbs] [--flows F] [--msg-size S]\n"
	      "                     [--depth D] [--chunk-size C] [--policy P] [--engines E] [--json]\n"
	      "                     [--mode sync|async-relaxed|async-locked|async-bounded]\n"
	      "                     [--seconds T] [--virtual-us U] [--link-gbps G]\n"
	      "                     [--progress inline|thread] [--spin-ns N]\n"
	      "                     async modes: [--async-workers N]\n"
	      "                     softnic: [--queue-bytes N]\n"
	      "                     verbs: [--device NAME] [--gid-index N] [--qp uc|rc]\n"
	      "                     two processes: [--listen HOST:PORT | --connect HOST:PORT]\n"
	      "                     [--seed N] (receiver listens, sender connects)\n"
	      "  pcm-bench goodput --via-daemon [--socket PATH | --pcmd PATH] [--msg-size S]\n"
	      "                     [--chunk-size C] [--policy P] [--seconds T] [--runs N]\n"
	      "                     [--wait auto|spin|block] [--json]\n"
	      "  pcm-bench latency [--datapath null] [--policy P] [--mode M] [--iters N] [--json]\n"
	      "                     [--progress inline|thread] [--spin-ns N]\n"
	      "  pcm-bench list\n",
	      f);
}

/* "goodput", or "goodput --via-daemon" (bench_via_daemon.c). */
static int cmd_goodput(int argc, char **argv)
{
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--via-daemon") == 0)
			return bench_goodput_via_daemon(argc, argv);
	return bench_goodput(argc, argv);
}

/*
 * The subcommands, each the entry point of its own file (bench.h); main()
 * only looks its first argument up here.
 */
static const struct bench_command {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "handlers", bench_handlers },
	{ "validate-rtt-injection", bench_validate_rtt_injection },
	{ "validate-arith", bench_validate_arith },
	{ "sim-scale", bench_sim_scale },
	{ "list", cmd_list },
	{ "goodput", cmd_goodput },
	{ "latency", bench_latency },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc, argv);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "pcm-bench: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
