// SPDX-License-Identifier: MIT
/*
 * pcmfi_provider.c - the provider's struct fi_provider and its settings.
 *
 * The settings are libfabric parameters of provider "pcm", so they come from
 * FI_PCM_<NAME> and `fi_info -e` lists them with their help. They are read
 * once, when libfabric loads the provider (fi_prov_ini()). The entry points
 * of the struct are filled in by pcmfi_prov.c, so that this file, which every
 * other one names for logging, names none of them.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pcmfi.h"

struct fi_provider pcmfi_prov = {
	.name = PCMFI_NAME,
	.version = FI_VERSION(0, 1),
	.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
};

struct pcmfi_config pcmfi_cfg;

/* The provider's parameters (FI_PCM_*), as fi_info -e lists them. */
static const struct {
	const char *name;
	enum fi_param_type type;
	const char *help;
} params[] = {
	{"backend", FI_PARAM_STRING,
	 "Where the transport runs: daemon (through pcmd, the default; each process is its own "
	 "host of pcmd's fabric) or inproc (the process's own engines)."},
	{"datapath", FI_PARAM_STRING,
	 "In process (FI_PCM_BACKEND=inproc): the datapath, null (default), softnic or verbs."},
	{"addr", FI_PARAM_STRING,
	 "The IPv4 address in this process's endpoint names (default 127.0.0.1); with pcmd on "
	 "verbs, this host's address."},
	{"policy", FI_PARAM_STRING,
	 "The CC package of the connections this process dials (default: pcmd's rules and "
	 "default)."},
	{"region_mb", FI_PARAM_SIZE_T, "MiB of pcmd's shared region per endpoint (default 64)."},
	{"segment_size", FI_PARAM_SIZE_T,
	 "Bytes per pcm message, header included (4096..1048576, default 65536)."},
	{"ring", FI_PARAM_SIZE_T, "Receives kept posted per connection (1..8, default 8)."},
	{"slots", FI_PARAM_SIZE_T, "Sends in flight per connection (1..8, default 8)."},
};

static void define_params(void)
{
	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++)
		fi_param_define(&pcmfi_prov, params[i].name, params[i].type, params[i].help);
}

static size_t clamp_size(size_t v, size_t lo, size_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void read_strings(void)
{
	char *s = NULL;

	if (fi_param_get_str(&pcmfi_prov, "backend", &s) == 0 && s) {
		if (!strcasecmp(s, "inproc"))
			pcmfi_cfg.backend = PCM_TP_BACKEND_INPROC;
		else if (strcasecmp(s, "daemon"))
			FI_WARN(&pcmfi_prov, FI_LOG_CORE,
				"FI_PCM_BACKEND=%s: not daemon or inproc; using daemon\n", s);
	}
	s = NULL;
	if (fi_param_get_str(&pcmfi_prov, "datapath", &s) == 0 && s)
		snprintf(pcmfi_cfg.datapath, sizeof(pcmfi_cfg.datapath), "%s", s);
	s = NULL;
	if (fi_param_get_str(&pcmfi_prov, "addr", &s) == 0 && s &&
	    inet_pton(AF_INET, s, &pcmfi_cfg.addr) != 1) {
		FI_WARN(&pcmfi_prov, FI_LOG_CORE,
			"FI_PCM_ADDR=%s: not an IPv4 address; using 127.0.0.1\n", s);
		inet_pton(AF_INET, "127.0.0.1", &pcmfi_cfg.addr);
	}
	s = NULL;
	if (fi_param_get_str(&pcmfi_prov, "policy", &s) == 0 && s)
		snprintf(pcmfi_cfg.policy, sizeof(pcmfi_cfg.policy), "%s", s);
}

/**
 * pcmfi_config_read() - define the FI_PCM_* parameters and read them.
 */
void pcmfi_config_read(void)
{
	size_t v;

	pcmfi_cfg = (struct pcmfi_config){
		.backend = PCM_TP_BACKEND_DAEMON,
		.datapath = "null",
		.region_bytes = 64u << 20,
		.segment_bytes = 65536,
		.ring = 8,
		.slots = 8,
	};
	inet_pton(AF_INET, "127.0.0.1", &pcmfi_cfg.addr);
	define_params();
	read_strings();
	if (fi_param_get_size_t(&pcmfi_prov, "region_mb", &v) == 0)
		pcmfi_cfg.region_bytes = clamp_size(v, 4, 4096) << 20;
	if (fi_param_get_size_t(&pcmfi_prov, "segment_size", &v) == 0)
		pcmfi_cfg.segment_bytes = clamp_size(v, 4096, 1u << 20);
	if (fi_param_get_size_t(&pcmfi_prov, "ring", &v) == 0)
		pcmfi_cfg.ring = (unsigned)clamp_size(v, 1, 8);
	if (fi_param_get_size_t(&pcmfi_prov, "slots", &v) == 0)
		pcmfi_cfg.slots = (unsigned)clamp_size(v, 1, 8);
}
