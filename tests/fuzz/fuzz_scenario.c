// SPDX-License-Identifier: MIT
/*
 * fuzz_scenario.c - libFuzzer target for uet_scenario_parse(), the pcm-sim
 * scenario loader, and uet_scenario_write(), its writer.
 *
 * Besides the sanitizers, the oracles are the loader's contract: a failure
 * returns -EINVAL or -ENOMEM, leaves the out pointer alone and names the
 * buffer, a line and a column ("fuzz.yaml:L:C: "); a success yields a
 * scenario within the loader's limits, which the writer turns into a file
 * that reads back as the same scenario.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uet.h"

#define NAME "fuzz.yaml"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(bool ok)
{
	if (!ok)
		abort();
}

/* "fuzz.yaml:LINE:COL: " */
static bool names_a_place(const char *msg)
{
	unsigned line, col;
	char colon;

	return strncmp(msg, NAME ":", strlen(NAME ":")) == 0 &&
	       sscanf(msg + strlen(NAME ":"), "%u:%u%c", &line, &col, &colon) == 3 &&
	       colon == ':' && line >= 1 && col >= 1;
}

static void check_limits(const struct uet_scenario *scn)
{
	require(scn->n_policies >= 1 && scn->n_policies <= UET_MAX_POLICIES);
	require(scn->n_rules <= UET_MAX_RULES && scn->n_failures <= UET_MAX_FAILURES);
	require(!scn->has_lb || scn->lb_policy < scn->n_policies);
	for (uint32_t i = 0; i < scn->n_rules; i++)
		require(scn->rules[i].policy < scn->n_policies);
	for (uint32_t i = 0; i < scn->n_flows; i++) {
		require(scn->flows[i].policy < (int32_t)scn->n_policies);
		require(scn->flows[i].src != scn->flows[i].dst);
	}
	for (uint32_t i = 0; i < scn->n_failures; i++)
		require(scn->failures[i].until_ps > scn->failures[i].at_ps);
	require(scn->shell_mode != UET_SHELL_ASYNC || scn->delay_events >= 1);
	require(scn->nic.rdma_data_mss >= 1 && scn->nic.ack_every_nth >= 1);
}

static char *written(const struct uet_scenario *scn, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	require(f != NULL);
	require(uet_scenario_write(scn, f) == 0);
	require(fclose(f) == 0);
	return buf;
}

/* The writer's file reads back as the same scenario: written again, the same text. */
static void check_round_trip(const struct uet_scenario *scn)
{
	struct uet_scenario *back = NULL;
	struct pcm_diag diag;
	size_t la, lb;
	char *a = written(scn, &la), *b;

	require(uet_scenario_parse(NAME, a, la, &back, &diag) == 0);
	b = written(back, &lb);
	require(la == lb && memcmp(a, b, la) == 0);
	uet_scenario_free(back);
	free(a);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uet_scenario *const sentinel = (struct uet_scenario *)&sentinel;
	struct uet_scenario *scn = sentinel;
	struct pcm_diag diag;
	int ret = uet_scenario_parse(NAME, (const char *)data, size, &scn, &diag);

	if (ret < 0) {
		require(ret == -EINVAL || ret == -ENOMEM);
		require(scn == sentinel);
		require(ret == -ENOMEM || names_a_place(diag.msg));
		return 0;
	}
	check_limits(scn);
	check_round_trip(scn);
	uet_scenario_free(scn);
	return 0;
}
