// SPDX-License-Identifier: MIT
/*
 * shell.c - the synchronous shell's setup and its slow paths. The per-event
 * path, pcm_shell_feed(), is inline in shell.h and calls the package's
 * generated pipeline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "shell.h"

static int check_package(const struct pcm_package *pkg, const struct pcm_target *target,
			 struct pcm_diag *diag)
{
	const char *why;

	if (pcm_package_validate(pkg, &why) < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "package '%s': %s",
			 pkg && pkg->name ? pkg->name : "?", why);
		return -EINVAL;
	}
	if (target)
		return pcm_target_check_package(target, pkg, diag);
	return 0;
}

/* Records live in anonymous memory so a million idle flows cost only their pages. */
static pcm_uint *records_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int pcm_shell_create(const struct pcm_package *pkg, const struct pcm_target *target,
		     uint32_t n_flows, pcm_uint now_ps, struct pcm_shell **out,
		     struct pcm_diag *diag)
{
	struct pcm_shell *shell;
	int rc;

	diag->msg[0] = '\0';
	if (n_flows == 0 || n_flows > PCM_SHELL_MAX_FLOWS) {
		snprintf(diag->msg, sizeof(diag->msg), "flow count %u is outside 1..%u", n_flows,
			 PCM_SHELL_MAX_FLOWS);
		return -EINVAL;
	}
	rc = check_package(pkg, target, diag);
	if (rc < 0)
		return rc;
	shell = calloc(1, sizeof(*shell));
	if (!shell)
		return -ENOMEM;
	shell->pkg = pkg;
	shell->n_flows = n_flows;
	shell->record_slots = pkg->record_slots;
	shell->records_bytes = (size_t)n_flows * pkg->record_slots * sizeof(pcm_uint);
	shell->records = records_alloc(shell->records_bytes);
	if (!shell->records) {
		free(shell);
		return -ENOMEM;
	}
	for (uint32_t f = 0; f < n_flows; f++)
		pkg->ops.init(pcm_shell_record(shell, f), now_ps);
	*out = shell;
	return 0;
}

void pcm_shell_destroy(struct pcm_shell *shell)
{
	if (!shell)
		return;
	munmap(shell->records, shell->records_bytes);
	free(shell);
}

int pcm_shell_tick(struct pcm_shell *shell, uint32_t flow, pcm_uint now_ps)
{
	static const struct pcm_event empty;

	return pcm_shell_feed(shell, flow, &empty, now_ps);
}

int pcm_shell_control(const struct pcm_shell *shell, uint32_t flow, pcm_control_t type,
		      pcm_uint *value)
{
	int slot;

	if (flow >= shell->n_flows)
		return -ERANGE;
	if ((unsigned)type >= PCM_CTRL_COUNT)
		return -ENOENT;
	slot = shell->pkg->control_slot[type];
	if (slot < 0)
		return -ENOENT;
	*value = shell->records[(size_t)flow * shell->record_slots + (size_t)slot];
	return 0;
}

int pcm_shell_flow_reset(struct pcm_shell *shell, uint32_t flow, pcm_uint now_ps)
{
	if (flow >= shell->n_flows)
		return -ERANGE;
	shell->pkg->ops.init(pcm_shell_record(shell, flow), now_ps);
	return 0;
}
