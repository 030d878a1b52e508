// SPDX-License-Identifier: MIT
/*
 * package.c - validating package descriptors and opening packages, built-in
 * by name or from a shared object built by `pcmc build`.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "package.h"

static int validate_counts(const struct pcm_package *pkg, const char **why)
{
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
	for (int t = 0; t < PCM_CTRL_COUNT; t++) {
		if (pkg->control_slot[t] >= (int)pkg->handler_slots) {
			*why = "control slot outside the record";
			return -EINVAL;
		}
	}
	return 0;
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
	if (!pkg->name || !pkg->arith || !pkg->ops.init || !pkg->ops.feed || !pkg->ops.handler ||
	    !pkg->ops.feed_burst) {
		*why = "descriptor incomplete (name, arith or an op missing)";
		return -EINVAL;
	}
	return validate_counts(pkg, why);
}

static bool looks_like_path(const char *s)
{
	size_t n = strlen(s);

	return strchr(s, '/') || (n > 3 && strcmp(s + n - 3, ".so") == 0);
}

static int open_builtin(const char *name, const struct pcm_package *const *builtins,
			struct pcm_package_handle *out, char *err, size_t err_len)
{
	for (size_t i = 0; builtins && builtins[i]; i++) {
		if (strcmp(builtins[i]->name, name) == 0) {
			out->pkg = builtins[i];
			out->dl = NULL;
			return 0;
		}
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
