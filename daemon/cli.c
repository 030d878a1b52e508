// SPDX-License-Identifier: MIT
/*
 * cli.c - pcmd's command line (pcmd(8)): the config file, overrides, the log
 * level, and --check-config, which runs every check a start would (it builds
 * pcmd's core as a start does: config, policies, io_uring, the data plane,
 * then the machine's preflight) and prints the first problem as
 * file:line:col: key: what is wrong.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "pcmd.h"
#include "preflight.h"

#ifndef PCM_VERSION
#define PCM_VERSION "unknown"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pcmd [-c FILE] [--socket PATH] [--datapath auto|softnic|verbs]\n"
		"            [--log-level error|warn|info|debug] [--set KEY=VALUE]...\n"
		"       pcmd --check-config [FILE] [--set KEY=VALUE]...\n"
		"       pcmd --version\n"
		"Runs the pcm transport daemon. Without -c, %s is read if it exists.\n"
		"See pcmd(8) and pcmd.conf(5).\n",
		PCMD_DEFAULT_CONFIG);
}

struct args {
	const char *config;
	bool check;
	bool help, version; /* pcmd_main() prints, frees and returns 0 */
	struct pcmd_overrides ovr;
};

static int add_override(struct args *a, const char *key, const char *value)
{
	char kv[PCMD_PATH_MAX + 128];
	int rc;

	if (key)
		snprintf(kv, sizeof(kv), "%s=%s", key, value);
	else
		snprintf(kv, sizeof(kv), "%s", value);
	rc = pcmd_overrides_add(&a->ovr, kv);
	if (rc == -EINVAL)
		fprintf(stderr, "pcmd: --set '%s': expected KEY=VALUE\n", value);
	else if (rc < 0)
		fprintf(stderr, "pcmd: more than %d overrides\n", PCMD_CFG_MAX_OVERRIDES);
	return rc;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	enum { OPT_CHECK = 256, OPT_SET, OPT_DATAPATH, OPT_VERSION };
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"check-config", no_argument, NULL, OPT_CHECK},
	    {"socket", required_argument, NULL, 's'},
	    {"log-level", required_argument, NULL, 'l'},
	    {"datapath", required_argument, NULL, OPT_DATAPATH},
	    {"set", required_argument, NULL, OPT_SET},
	    {"version", no_argument, NULL, OPT_VERSION},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int o, rc = 0;

	while (rc == 0 && (o = getopt_long(argc, argv, "c:s:l:h", opts, NULL)) != -1) {
		switch (o) {
		case 'c':
			a->config = optarg;
			break;
		case OPT_CHECK:
			a->check = true;
			break;
		case 's':
			rc = add_override(a, "socket.path", optarg);
			break;
		case 'l':
			rc = add_override(a, "log_level", optarg);
			break;
		case OPT_DATAPATH:
			rc = add_override(a, "datapath.kind", optarg);
			break;
		case OPT_SET:
			rc = add_override(a, NULL, optarg);
			break;
		case OPT_VERSION:
			a->version = true;
			return 0; /* nothing else is read */
		case 'h':
			a->help = true;
			return 0;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (rc == 0 && optind < argc && a->check && !a->config)
		a->config = argv[optind++];
	if (rc == 0 && optind < argc) {
		fprintf(stderr, "pcmd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -EINVAL;
	}
	if (!a->config && access(PCMD_DEFAULT_CONFIG, F_OK) == 0)
		a->config = PCMD_DEFAULT_CONFIG;
	return rc;
}

static int check_config(const struct args *a, const struct pcmd_plane_ops *plane)
{
	char err[PCMD_CFG_ERR_MAX];
	struct pcmd *d = NULL;
	int rc;

	rc = pcmd_create_core(a->config, &a->ovr, plane, &d, err, sizeof(err));
	if (rc == 0)
		rc = pcmd_preflight(d->cfg, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "%s\n", err);
	else
		printf("%s: OK (datapath %s, socket %s, %u rule(s), %u package(s) loaded)\n",
		       a->config ? a->config : "(defaults)",
		       pcmd_plane_datapath(d->plane_ops, d->plane, d->cfg), d->cfg->socket.path,
		       d->cfg->policies.n_rules, d->cfg->policies.n_load);
	pcmd_destroy(d);
	return rc < 0 ? 1 : 0;
}

int pcmd_main(int argc, char **argv, const struct pcmd_plane_ops *plane)
{
	struct args *a = calloc(1, sizeof(*a));
	char err[PCMD_CFG_ERR_MAX];
	struct pcmd *d;
	int rc;

	if (!a)
		return 1;
	pcmd_log_init(PCMD_LOG_INFO);
	if (parse_args(argc, argv, a) < 0) {
		free(a);
		return 2;
	}
	if (a->help || a->version) {
		if (a->help)
			usage(stdout);
		else
			printf("pcmd %s (control protocol %d)\n", PCM_VERSION, PCMD_PROTO_VERSION);
		free(a);
		return 0;
	}
	if (a->check) {
		rc = check_config(a, plane);
		free(a);
		return rc;
	}
	rc = pcmd_create(a->config, &a->ovr, plane, &d, err, sizeof(err));
	free(a);
	if (rc < 0) {
		pcmd_err("cannot start: %s", err);
		return 1;
	}
	rc = pcmd_run(d);
	pcmd_destroy(d);
	return rc < 0 ? 1 : 0;
}
