// SPDX-License-Identifier: MIT
/*
 * package.c - validating package descriptors, reading a record's controls,
 * the handoff of a live policy swap, and opening packages, built-in by name
 * or from a shared object built by `pcmc build`.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "package.h"

/* Instance variables: within the variable slots, their area's address in an auxiliary slot. */
static int validate_shared(const struct pcm_package *pkg, const char **why)
{
	uint32_t slots = 0;
	bool ok = pkg->shared_ref_slot >= pkg->handler_slots &&
		  pkg->shared_ref_slot < pkg->record_slots && pkg->variables;

	if (!pkg->n_shared_slots)
		return 0;
	for (uint32_t i = 0; ok && i < pkg->n_variables; i++) {
		const struct pcm_pkg_variable *v = &pkg->variables[i];

		if (!v->shared)
			continue;
		ok = v->shared_slot == slots && v->slot + v->arr_len <= pkg->n_var_slots;
		slots += v->arr_len;
	}
	if (ok && slots == pkg->n_shared_slots)
		return 0;
	*why = "instance-variable layout does not match the variables";
	return -EINVAL;
}

static int validate_counts(const struct pcm_package *pkg, const char **why)
{
	uint32_t elapsed = 0;

	if (pkg->n_signals > 64) {
		*why = "more than 64 signals";
		return -EINVAL;
	}
	if (pkg->n_controls > 0 && !pkg->controls) {
		*why = "controls table missing";
		return -EINVAL;
	}
	if (pkg->n_signals > 0 && !pkg->signals) {
		*why = "signals table missing";
		return -EINVAL;
	}
	if (pkg->handler_slots != 2 + pkg->n_signals + pkg->n_controls + pkg->n_var_slots ||
	    pkg->record_slots < pkg->handler_slots) {
		*why = "record layout does not match the signal, control and variable counts";
		return -EINVAL;
	}
	for (uint32_t i = 0; i < pkg->n_signals; i++)
		elapsed += pkg->signals[i].type == PCM_SIG_ELAPSED_TIME;
	if (pkg->window_slots != pkg->n_signals - elapsed ||
	    (pkg->window_slots && !pkg->window_identity) || pkg->pub_slots > 3 * pkg->n_signals) {
		*why = "window or published-slot layout does not match the signals";
		return -EINVAL;
	}
	for (int t = 0; t < PCM_CTRL_COUNT; t++) {
		if (pkg->control_slot[t] >= (int)pkg->handler_slots) {
			*why = "control slot outside the record";
			return -EINVAL;
		}
	}
	return validate_shared(pkg, why);
}

static bool ops_complete(const struct pcm_package_ops *ops)
{
	return ops->init && ops->feed && ops->feed_burst && ops->call && ops->handler &&
	       ops->window_feed && ops->window_merge && ops->window_merge_late && ops->publish;
}

int pcm_package_validate(const struct pcm_package *pkg, const char **why)
{
	if (!pkg) {
		*why = "no descriptor";
		return -EINVAL;
	}
	if (pkg->abi_version != PCM_PACKAGE_ABI_VERSION) {
		*why = "built for another package ABI version; rebuild it with this pcmc";
		return -EPROTO;
	}
	if (!pkg->name || !pkg->arith || !ops_complete(&pkg->ops)) {
		*why = "descriptor incomplete (name, arith or an op missing)";
		return -EINVAL;
	}
	return validate_counts(pkg, why);
}

void pcm_package_controls(const struct pcm_package *pkg, const pcm_uint *rec,
			  struct pcm_control_set *out)
{
	out->mask = 0;
	for (int t = 0; t < PCM_CTRL_COUNT; t++) {
		int slot = pkg->control_slot[t];

		out->value[t] = slot >= 0 ? rec[slot] : 0;
		out->mask |= (pcm_uint)(slot >= 0) << t;
	}
}

void pcm_package_shared_init(const struct pcm_package *pkg, pcm_uint *area)
{
	for (uint32_t i = 0; pkg->n_shared_slots && i < pkg->n_variables; i++) {
		const struct pcm_pkg_variable *v = &pkg->variables[i];

		for (uint32_t k = 0; v->shared && k < v->arr_len; k++)
			area[v->shared_slot + k] = v->initial;
	}
}

/* The first signal of @pkg with @type and @accum, or -1. */
static int find_signal(const struct pcm_package *pkg, uint8_t type, uint8_t accum)
{
	for (uint32_t i = 0; i < pkg->n_signals; i++)
		if (pkg->signals[i].type == type && pkg->signals[i].accum == accum)
			return (int)i;
	return -1;
}

void pcm_package_handoff(const struct pcm_package *from, const pcm_uint *from_rec,
			 const struct pcm_package *to, pcm_uint *to_rec, pcm_uint now_ps)
{
	to->ops.init(to_rec, now_ps);
	for (int t = 0; t < PCM_CTRL_COUNT; t++)
		if (from->control_slot[t] >= 0 && to->control_slot[t] >= 0)
			to_rec[to->control_slot[t]] = from_rec[from->control_slot[t]];
	for (uint32_t j = 0; j < to->n_signals; j++) {
		const struct pcm_pkg_signal *q = &to->signals[j];
		int i;

		if (q->type == PCM_SIG_ELAPSED_TIME)
			continue;
		i = find_signal(from, q->type, q->accum);
		if (i >= 0 && from_rec[PCM_REC_SIGNALS_SLOT + i] != from->signals[i].initial)
			to_rec[PCM_REC_SIGNALS_SLOT + j] = from_rec[PCM_REC_SIGNALS_SLOT + i];
	}
}

static bool looks_like_path(const char *s)
{
	size_t n = strlen(s);

	return strchr(s, '/') || (n > 3 && strcmp(s + n - 3, ".so") == 0);
}

const struct pcm_package *pcm_package_find(const struct pcm_package *const *table,
					   const char *name)
{
	for (size_t i = 0; table && table[i]; i++)
		if (strcmp(table[i]->name, name) == 0)
			return table[i];
	return NULL;
}

static int open_builtin(const char *name, const struct pcm_package *const *builtins,
			struct pcm_package_handle *out, char *err, size_t err_len)
{
	const struct pcm_package *pkg = pcm_package_find(builtins, name);

	if (pkg) {
		out->pkg = pkg;
		out->dl = NULL;
		return 0;
	}
	snprintf(err, err_len, "no built-in policy named '%s' (try `pcm-bench list` or a .so path)",
		 name);
	return -ENOENT;
}

static int open_shared(const char *path, struct pcm_package_handle *out, char *err,
		       size_t err_len)
{
	const struct pcm_package *const *entry;
	const char *why;
	void *dl;
	int rc;

	if (access(path, R_OK) < 0) {
		rc = -errno;
		snprintf(err, err_len, "cannot open package '%s': %s", path, strerror(errno));
		return rc;
	}
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		snprintf(err, err_len, "cannot load package '%s': %s", path, dlerror());
		return -ELIBBAD;
	}
	entry = dlsym(dl, "pcm_package_entry");
	if (!entry || !*entry) {
		snprintf(err, err_len,
			 "'%s' has no pcm_package_entry symbol; build it with `pcmc build`", path);
		dlclose(dl);
		return -ELIBBAD;
	}
	rc = pcm_package_validate(*entry, &why);
	if (rc < 0) {
		snprintf(err, err_len, "package '%s' rejected: %s", path, why);
		dlclose(dl);
		return rc;
	}
	out->pkg = *entry;
	out->dl = dl;
	return 0;
}

int pcm_package_open(const char *name_or_path, const struct pcm_package *const *builtins,
		     struct pcm_package_handle *out, char *err, size_t err_len)
{
	if (looks_like_path(name_or_path))
		return open_shared(name_or_path, out, err, err_len);
	return open_builtin(name_or_path, builtins, out, err, err_len);
}

void pcm_package_close(struct pcm_package_handle *h)
{
	if (h->dl)
		dlclose(h->dl);
	h->dl = NULL;
	h->pkg = NULL;
}
