// SPDX-License-Identifier: MIT
/*
 * shell.c - the synchronous shell's setup, flow management and slow paths.
 * The per-event path, pcm_shell_feed(), is inline in shell.h and calls the
 * package's generated feed() on the flow's slot; a burst is one call to the
 * package's generated feed_burst() per run of flows of one package.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell.h"

static int fits(const void *arg, const struct pcm_package *pkg, struct pcm_diag *diag)
{
	const struct pcm_shell *shell = arg;

	if (pkg->record_slots <= shell->record_slots)
		return 0;
	snprintf(diag->msg, sizeof(diag->msg),
		 "package '%s': its record needs %u slots, the shell reserved %u per flow", pkg->name,
		 pkg->record_slots, shell->record_slots);
	return -E2BIG;
}

int pcm_shell_package_add(struct pcm_shell *shell, const struct pcm_package *pkg,
			  struct pcm_diag *diag)
{
	return pcm_pkgset_add(&shell->pkgs, pkg, NULL, diag);
}

static uint32_t largest_record(const struct pcm_shell_config *cfg)
{
	uint32_t slots = cfg->record_slots;

	for (uint32_t i = 0; i < cfg->n_packages; i++)
		if (cfg->packages[i] && cfg->packages[i]->record_slots > slots)
			slots = cfg->packages[i]->record_slots;
	return slots;
}

static int check_config(const struct pcm_shell_config *cfg, struct pcm_diag *diag)
{
	if (!cfg->packages || cfg->n_packages == 0 || cfg->n_packages > PCM_SHELL_MAX_PACKAGES) {
		snprintf(diag->msg, sizeof(diag->msg), "package count %u is outside 1..%u",
			 cfg->n_packages, PCM_SHELL_MAX_PACKAGES);
		return -EINVAL;
	}
	if (cfg->max_flows == 0 || cfg->max_flows > PCM_SHELL_MAX_FLOWS) {
		snprintf(diag->msg, sizeof(diag->msg), "flow count %u is outside 1..%u",
			 cfg->max_flows, PCM_SHELL_MAX_FLOWS);
		return -EINVAL;
	}
	return 0;
}

int pcm_shell_create_cfg(const struct pcm_shell_config *cfg, struct pcm_shell **out,
			 struct pcm_diag *diag)
{
	struct pcm_shell *shell;
	int rc;

	diag->msg[0] = '\0';
	rc = check_config(cfg, diag);
	if (rc < 0)
		return rc;
	shell = calloc(1, sizeof(*shell));
	if (!shell)
		return -ENOMEM;
	shell->record_slots = largest_record(cfg);
	pcm_pkgset_init(&shell->pkgs, cfg->target, fits, shell, cfg->n_instances);
	if (shell->pkgs.n_instances > 1) {
		shell->instance_of = calloc(cfg->max_flows, sizeof(*shell->instance_of));
		rc = shell->instance_of ? 0 : -ENOMEM;
	}
	for (uint32_t i = 0; i < cfg->n_packages && rc == 0; i++)
		rc = pcm_pkgset_add(&shell->pkgs, cfg->packages[i], NULL, diag);
	if (rc == 0)
		rc = pcm_flowtab_init(&shell->tab, cfg->max_flows,
				      sizeof(struct pcm_flow_slot) +
					      shell->record_slots * sizeof(pcm_uint),
				      0, 1, NULL);
	if (rc == 0)
		shell->slots = (struct pcm_slot_table){
			.slots = shell->tab.slots,
			.slot_bytes = shell->tab.slot_bytes,
			.max_flows = shell->tab.max_flows,
		};
	if (rc < 0) {
		if (rc == -ENOMEM)
			snprintf(diag->msg, sizeof(diag->msg), "out of memory for %u flows",
				 cfg->max_flows);
		pcm_pkgset_fini(&shell->pkgs);
		free(shell->instance_of);
		free(shell);
		return rc;
	}
	*out = shell;
	return 0;
}

int pcm_shell_create_filled(const struct pcm_shell_config *cfg, pcm_uint now_ps,
			    struct pcm_shell **out, struct pcm_diag *diag)
{
	struct pcm_shell *shell;
	int rc = pcm_shell_create_cfg(cfg, &shell, diag);

	if (rc < 0)
		return rc;
	for (uint32_t f = 0; rc == 0 && f < cfg->max_flows; f++)
		rc = pcm_shell_flow_add_at(shell, f, cfg->packages[0], now_ps);
	if (rc < 0) {
		if (rc == -ENOMEM)
			snprintf(diag->msg, sizeof(diag->msg), "out of memory for %u flows",
				 cfg->max_flows);
		pcm_shell_destroy(shell);
		return rc;
	}
	*out = shell;
	return 0;
}

int pcm_shell_create(const struct pcm_package *pkg, const struct pcm_target *target,
		     uint32_t n_flows, pcm_uint now_ps, struct pcm_shell **out,
		     struct pcm_diag *diag)
{
	struct pcm_shell_config cfg = {
		.packages = &pkg, .n_packages = 1, .target = target, .max_flows = n_flows,
	};

	return pcm_shell_create_filled(&cfg, now_ps, out, diag);
}

void pcm_shell_destroy(struct pcm_shell *shell)
{
	if (!shell)
		return;
	pcm_flowtab_fini(&shell->tab);
	pcm_pkgset_fini(&shell->pkgs);
	free(shell->instance_of);
	free(shell);
}

/* ---- flows -------------------------------------------------------------------------------- */

static int admit(struct pcm_shell *shell, const struct pcm_package *pkg)
{
	struct pcm_diag diag;

	return pcm_shell_package_add(shell, pkg, &diag);
}

/* Bind the record of @flow (slot @f) to its instance's area for its package (package.h). */
static void bind_instance(struct pcm_shell *shell, uint32_t flow, struct pcm_flow_slot *f)
{
	uint32_t instance = shell->instance_of ? shell->instance_of[flow] : 0;

	if (f->pkg->n_shared_slots)
		pcm_package_bind_shared(f->pkg, f->rec,
					pcm_pkgset_shared(&shell->pkgs,
							  pcm_pkgset_find(&shell->pkgs, f->pkg),
							  instance));
}

static void start_flow(struct pcm_shell *shell, uint32_t flow, const struct pcm_package *pkg,
		       pcm_uint now_ps)
{
	struct pcm_flow_slot *f = (struct pcm_flow_slot *)pcm_flowtab_slot(&shell->tab, flow);

	pkg->ops.init(f->rec, now_ps);
	f->pkg = pkg;
	if (shell->instance_of)
		shell->instance_of[flow] = 0;
	bind_instance(shell, flow, f);
}

/* Add a flow at *@flow (@at) or at the lowest free handle, stored in *@flow. */
static int add_flow(struct pcm_shell *shell, const struct pcm_package *pkg, pcm_uint now_ps,
		    uint32_t *flow, bool at)
{
	int rc = admit(shell, pkg);

	if (rc == 0)
		rc = at ? pcm_flowtab_add_at(&shell->tab, 0, *flow) :
			  pcm_flowtab_add(&shell->tab, 0, flow);
	if (rc == 0)
		start_flow(shell, *flow, pkg, now_ps);
	return rc;
}

int pcm_shell_flow_add(struct pcm_shell *shell, const struct pcm_package *pkg, pcm_uint now_ps,
		       uint32_t *flow)
{
	return add_flow(shell, pkg, now_ps, flow, false);
}

int pcm_shell_flow_add_at(struct pcm_shell *shell, uint32_t flow, const struct pcm_package *pkg,
			  pcm_uint now_ps)
{
	return add_flow(shell, pkg, now_ps, &flow, true);
}

int pcm_shell_flow_remove(struct pcm_shell *shell, uint32_t flow)
{
	struct pcm_flow_slot *f = pcm_shell_slot(shell, flow);

	if (!f)
		return -ENOENT;
	atomic_fetch_add_explicit(&shell->retired_calls,
				  atomic_load_explicit(&f->calls, memory_order_relaxed),
				  memory_order_relaxed);
	f->pkg = NULL;
	return pcm_flowtab_remove(&shell->tab, flow);
}

int pcm_shell_flow_reset(struct pcm_shell *shell, uint32_t flow, pcm_uint now_ps)
{
	struct pcm_flow_slot *f = pcm_shell_slot(shell, flow);

	if (!f)
		return -ENOENT;
	f->pkg->ops.init(f->rec, now_ps);
	bind_instance(shell, flow, f);
	return 0;
}

int pcm_shell_flow_swap(struct pcm_shell *shell, uint32_t flow, const struct pcm_package *pkg,
			pcm_uint now_ps)
{
	struct pcm_flow_slot *f = pcm_shell_slot(shell, flow);
	pcm_uint *next;
	int rc;

	if (!f)
		return -ENOENT;
	rc = admit(shell, pkg);
	if (rc < 0)
		return rc;
	next = malloc(pkg->record_slots * sizeof(pcm_uint));
	if (!next)
		return -ENOMEM;
	pcm_package_handoff(f->pkg, f->rec, pkg, next, now_ps);
	memcpy(f->rec, next, pkg->record_slots * sizeof(pcm_uint));
	f->pkg = pkg;
	bind_instance(shell, flow, f);
	free(next);
	return 0;
}

int pcm_shell_flow_instance(struct pcm_shell *shell, uint32_t flow, uint32_t instance)
{
	struct pcm_flow_slot *f = pcm_shell_slot(shell, flow);

	if (!f)
		return -ENOENT;
	if (instance >= shell->pkgs.n_instances)
		return -ERANGE;
	if (shell->instance_of)
		shell->instance_of[flow] = instance;
	bind_instance(shell, flow, f);
	return 0;
}

/* ---- per-event slow paths ----------------------------------------------------------------- */

uint32_t pcm_shell_feed_burst(struct pcm_shell *shell, const struct pcm_flow_event *evs,
			      uint32_t n)
{
	uint32_t i = 0, errors = 0;

	while (i < n) {
		const struct pcm_flow_slot *f = pcm_shell_slot(shell, evs[i].flow);

		if (!f)
			break;
		/* feeds evs[i] at least: its flow is live and runs f->pkg */
		i += f->pkg->ops.feed_burst(f->pkg, &shell->slots, evs + i, n - i, &errors);
	}
	if (__builtin_expect(errors != 0, 0))
		atomic_fetch_add_explicit(&shell->errors, errors, memory_order_relaxed);
	return i;
}

int pcm_shell_tick(struct pcm_shell *shell, uint32_t flow, pcm_uint now_ps)
{
	static const struct pcm_event empty;

	return pcm_shell_feed(shell, flow, &empty, now_ps);
}

int pcm_shell_control(const struct pcm_shell *shell, uint32_t flow, pcm_control_t type,
		      pcm_uint *value)
{
	struct pcm_flow_slot *f = pcm_shell_slot(shell, flow);

	if (!f || (unsigned)type >= PCM_CTRL_COUNT || f->pkg->control_slot[type] < 0)
		return -ENOENT;
	*value = f->rec[f->pkg->control_slot[type]];
	return 0;
}

int pcm_shell_controls(const struct pcm_shell *shell, uint32_t flow, struct pcm_control_set *out)
{
	struct pcm_flow_slot *f = pcm_shell_slot(shell, flow);

	if (!f)
		return -ENOENT;
	pcm_package_controls(f->pkg, f->rec, out);
	out->seq = atomic_load_explicit(&f->calls, memory_order_relaxed);
	return 0;
}

/* ---- accounting --------------------------------------------------------------------------- */

static void add_calls(void *arg, uint32_t flow, unsigned char *slot, unsigned char *priv)
{
	const struct pcm_flow_slot *f = (const struct pcm_flow_slot *)slot;

	*(uint64_t *)arg += atomic_load_explicit(&f->calls, memory_order_relaxed);
}

void pcm_shell_stats(struct pcm_shell *shell, struct pcm_shell_stats *out)
{
	uint64_t calls = 0;

	pcm_flowtab_for_each(&shell->tab, add_calls, &calls);
	out->handler_calls =
		calls + atomic_load_explicit(&shell->retired_calls, memory_order_relaxed);
	out->handler_errors = atomic_load_explicit(&shell->errors, memory_order_relaxed);
	out->flows = pcm_flowtab_n_live(&shell->tab);
}

size_t pcm_shell_bytes_per_flow(const struct pcm_shell *shell)
{
	return shell->tab.slot_bytes;
}

size_t pcm_shell_bytes(struct pcm_shell *shell)
{
	return pcm_flowtab_bytes(&shell->tab) + sizeof(*shell);
}
