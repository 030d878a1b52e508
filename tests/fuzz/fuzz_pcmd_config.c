// SPDX-License-Identifier: MIT
/*
 * fuzz_pcmd_config.c - libFuzzer target for pcmd's config loader
 * (pcmd_config_load_buffer), with and without command-line overrides taken
 * from the input's tail. Oracles besides the sanitizers: a failure returns
 * -EINVAL or -ENOMEM with a message that names the buffer or the command
 * line; a success yields a config whose ranges and cross-key rules hold.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "pcmd_region.h"

#define NAME "fuzz.yaml"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(bool ok)
{
	if (!ok)
		abort();
}

static void check_ok(const struct pcmd_config *c)
{
	require(c->log_level <= PCMD_LOG_DEBUG);
	require(c->socket.path[0] == '/' && strlen(c->socket.path) < sizeof(c->socket.path));
	require(c->socket.mode <= 0777);
	require(c->datapath.kind <= PCMD_DATAPATH_VERBS && c->datapath.resolved != 0);
	require(c->limits.flows_per_client >= 1 && c->limits.flows_per_client <= 65535);
	require(pcmd_ring_entries_ok(c->limits.sq_entries));
	require(pcmd_ring_entries_ok(c->limits.cq_entries));
	require(c->limits.cq_entries >= c->limits.sq_entries);
	require(c->limits.memory_per_client_bytes <= c->limits.memory_total_bytes);
	require(c->limits.max_message_bytes <= c->limits.memory_per_client_bytes);
	require(c->policies.n_rules <= PCMD_CFG_MAX_RULES);
	for (uint32_t i = 0; i < c->policies.n_rules; i++) {
		const struct pcmd_rule *r = &c->policies.rules[i];

		require(r->peer[0] && r->match <= PCMD_MATCH_CIDR);
		require(r->mode < PCMD_SHELL_MODE_COUNT);
		require(r->match != PCMD_MATCH_CIDR ||
			r->prefix_bits <= (r->family == 2 ? 32u : 128u));
		(void)pcmd_rule_match(r, "10.1.2.3:4000");
		(void)pcmd_rule_match(r, "[fd00::1]:80");
		(void)pcmd_rule_match(r, "rack1-host");
	}
	require(!c->engines.n_cpus || c->engines.n_cpus == c->engines.count);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pcmd_config cfg;
	static struct pcmd_overrides ovr;
	char err[PCMD_CFG_ERR_MAX];
	const uint8_t *nl;
	size_t yaml_len = size;
	int rc;

	/* After a NUL: "key=value" lines as --set overrides. */
	memset(&ovr, 0, sizeof(ovr));
	nl = memchr(data, '\0', size);
	if (nl) {
		const char *p = (const char *)nl + 1, *end = (const char *)data + size;

		yaml_len = (size_t)(nl - data);
		while (p < end && ovr.n < 8) {
			const char *e = memchr(p, '\n', (size_t)(end - p));
			char kv[PCMD_PATH_MAX + 128];
			size_t n = (size_t)((e ? e : end) - p);

			if (n < sizeof(kv)) {
				memcpy(kv, p, n);
				kv[n] = '\0';
				if (!memchr(kv, '\0', n))
					pcmd_overrides_add(&ovr, kv);
			}
			p += n + 1;
		}
	}
	rc = pcmd_config_load_buffer(NAME, (const char *)data, yaml_len, &ovr, &cfg, err,
				     sizeof(err));
	if (rc < 0) {
		require(rc == -EINVAL || rc == -ENOMEM);
		require(strncmp(err, NAME, strlen(NAME)) == 0 ||
			strncmp(err, "command line", 12) == 0);
		return 0;
	}
	check_ok(&cfg);
	return 0;
}
