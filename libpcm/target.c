// SPDX-License-Identifier: MIT
/*
 * target.c - the capability descriptors of the datapaths pcm knows, and the
 * check of a package against one.
 *
 * The tables say what each datapath really measures and enforces:
 * - uet: the emulated UET NIC sees every packet, trims (as NACKs), ECN marks
 *   (also reported as CNPs), transmit bursts, entropy values, receiver
 *   credit requests and its base-RTT probes, and enforces all controls.
 * - every datapath but doca hands each flow a FLOW_SEED (a hash of the flow's
 *   identity), so load balancers that start together draw apart.
 * - verbs/softnic: the CPU transport sees chunk ACKs, RTT, ECN echo (with
 *   the entropy of the path of a CE-marked chunk the ACK echoes: ECN_EV),
 *   losses detected by RACK (NACK) and timeouts, but no per-packet trims,
 *   CNPs or credit requests, and cannot grant receiver credit.
 * - doca: a DOCA PCC-style NIC runs per coalesced CNP/TX/ACK/NACK/RTT event
 *   and enforces a rate only.
 * - reference: everything; for tests and benchmarks of the shells alone.
 * Instance variables (`scope: instance`) need nothing of a datapath: the
 * shells keep them (pcm-handler(7)), so no target refuses them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "target.h"

#define SIG(x) ((pcm_uint)1 << PCM_SIG_##x)
#define CTRL(x) (1u << PCM_CTRL_##x)

static const struct pcm_target target_uet = {
	.name = "uet",
	.description = "emulated Ultra Ethernet NIC (per-ACK handlers on the NIC)",
	.signals = SIG(ACK) | SIG(RTO) | SIG(NACK) | SIG(ECN) | SIG(RTT) | SIG(DATA_TX) |
		   SIG(DATA_NACKED) | SIG(IN_FLIGHT) | SIG(ELAPSED_TIME) | SIG(ACK_EV) |
		   SIG(ECN_EV) | SIG(NACK_EV) | SIG(TX_READY_PKTS) | SIG(TX_BACKLOG_BYTES) |
		   SIG(CNP) | SIG(TX_EVENT) | SIG(CREDIT_REQUEST) | SIG(QUEUE_DELAY) |
		   SIG(FLOW_SEED) | SIG(BASE_RTT),
	.controls = CTRL(CWND) | CTRL(RATE) | CTRL(EV) | CTRL(CUMULATIVE_CREDIT),
};

#define CPU_TRANSPORT_SIGNALS                                                                      \
	(SIG(ACK) | SIG(RTO) | SIG(NACK) | SIG(ECN) | SIG(RTT) | SIG(DATA_TX) | SIG(DATA_NACKED) | \
	 SIG(IN_FLIGHT) | SIG(ELAPSED_TIME) | SIG(ACK_EV) | SIG(ECN_EV) | SIG(NACK_EV) |            \
	 SIG(TX_READY_PKTS) | SIG(TX_BACKLOG_BYTES) | SIG(QUEUE_DELAY) | SIG(FLOW_SEED))

static const struct pcm_target target_verbs = {
	.name = "verbs",
	.description = "CPU transport over libibverbs queue pairs (per-chunk handlers)",
	.signals = CPU_TRANSPORT_SIGNALS,
	.controls = CTRL(CWND) | CTRL(RATE) | CTRL(EV),
};

static const struct pcm_target target_softnic = {
	.name = "softnic",
	.description = "CPU transport over the emulated fabric's UC-like queue pairs",
	.signals = CPU_TRANSPORT_SIGNALS,
	.controls = CTRL(CWND) | CTRL(RATE) | CTRL(EV),
};

static const struct pcm_target target_doca = {
	.name = "doca",
	.description = "DOCA PCC-style NIC: coalesced CNP/TX/ACK/NACK/RTT events, rate only",
	.signals = SIG(CNP) | SIG(TX_EVENT) | SIG(ACK) | SIG(NACK) | SIG(RTT) | SIG(ELAPSED_TIME),
	.controls = CTRL(RATE),
};

static const struct pcm_target target_reference = {
	.name = "reference",
	.description = "every signal and control; for tests and benchmarks of the shells",
	.signals = ((pcm_uint)1 << PCM_SIG_COUNT) - 1,
	.controls = (1u << PCM_CTRL_COUNT) - 1,
};

const struct pcm_target *const pcm_targets[] = {
	&target_uet, &target_verbs, &target_softnic, &target_doca, &target_reference, NULL,
};

const struct pcm_target *pcm_target_find(const char *name)
{
	for (size_t i = 0; pcm_targets[i]; i++)
		if (strcmp(pcm_targets[i]->name, name) == 0)
			return pcm_targets[i];
	return NULL;
}

/* Append one line to @diag, keeping it NUL-terminated when full. */
static void diag_append(struct pcm_diag *diag, const char *line)
{
	size_t used = strlen(diag->msg);

	snprintf(diag->msg + used, sizeof(diag->msg) - used, "%s%s", used ? "\n" : "", line);
}

int pcm_target_check_spec(const struct pcm_target *target, const struct pcm_spec *spec,
			  struct pcm_diag *diag)
{
	char line[PCM_DIAG_MAX];
	int missing = 0;

	diag->msg[0] = '\0';
	for (unsigned i = 0; i < spec->n_signals; i++) {
		const struct pcm_spec_signal *s = &spec->signals[i];

		if (target->signals & ((pcm_uint)1 << s->type))
			continue;
		snprintf(line, sizeof(line),
			 "%s:%u:%u: signals[%u].type: target '%s' does not provide %s "
			 "(needed by signal '%s')",
			 spec->path, s->type_loc.line, s->type_loc.col, i, target->name,
			 pcm_signal_name(s->type), s->name);
		diag_append(diag, line);
		missing++;
	}
	for (unsigned i = 0; i < spec->n_controls; i++) {
		const struct pcm_spec_control *c = &spec->controls[i];

		if (target->controls & (1u << c->type))
			continue;
		snprintf(line, sizeof(line),
			 "%s:%u:%u: controls[%u].type: target '%s' cannot enforce %s "
			 "(needed by control '%s')",
			 spec->path, c->type_loc.line, c->type_loc.col, i, target->name,
			 pcm_control_name(c->type), c->name);
		diag_append(diag, line);
		missing++;
	}
	return missing ? -ENOTSUP : 0;
}

int pcm_target_check_package(const struct pcm_target *target, const struct pcm_package *pkg,
			     struct pcm_diag *diag)
{
	char line[PCM_DIAG_MAX];
	int missing = 0;

	diag->msg[0] = '\0';
	for (uint32_t i = 0; i < pkg->n_signals; i++) {
		const struct pcm_pkg_signal *s = &pkg->signals[i];

		if (target->signals & ((pcm_uint)1 << s->type))
			continue;
		snprintf(line, sizeof(line),
			 "package '%s': target '%s' does not provide %s (needed by signal '%s')",
			 pkg->name, target->name, pcm_signal_name((pcm_signal_t)s->type), s->name);
		diag_append(diag, line);
		missing++;
	}
	for (uint32_t i = 0; i < pkg->n_controls; i++) {
		const struct pcm_pkg_control *c = &pkg->controls[i];

		if (target->controls & (1u << c->type))
			continue;
		snprintf(line, sizeof(line),
			 "package '%s': target '%s' cannot enforce %s (needed by control '%s')",
			 pkg->name, target->name, pcm_control_name((pcm_control_t)c->type),
			 c->name);
		diag_append(diag, line);
		missing++;
	}
	return missing ? -ENOTSUP : 0;
}

int pcm_target_admit_package(const struct pcm_target *target, const struct pcm_package *pkg,
			     struct pcm_diag *diag)
{
	const char *why;
	int rc = pcm_package_validate(pkg, &why);

	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "package '%s': %s",
			 pkg && pkg->name ? pkg->name : "?", why);
		return rc;
	}
	return target ? pcm_target_check_package(target, pkg, diag) : 0;
}
