// SPDX-License-Identifier: MIT
/*
 * policy.c - the registry of handler packages pcmd can run, and the rule
 * lookup that picks a new flow's packages. Packages come from libpcm's
 * loader (pcm_package_open) and are checked against the datapath's
 * capability target (pcm_target_check_package) before any flow may use them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "policy.h"
#include "target.h"

static bool looks_like_path(const char *s)
{
	size_t n = strlen(s);

	return strchr(s, '/') || (n > 3 && strcmp(s + n - 3, ".so") == 0);
}

static int append(struct pcmd_policies *p, struct pcmd_policy *pol)
{
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 32;
		struct pcmd_policy **items = realloc(p->items, cap * sizeof(*items));

		if (!items)
			return -ENOMEM;
		p->items = items;
		p->cap = cap;
	}
	p->items[p->n++] = pol;
	return 0;
}

int pcmd_policies_create(const char *target_name, struct pcmd_policies **out)
{
	struct pcmd_policies *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->target = pcm_target_find(target_name);
	if (!p->target) {
		free(p);
		return -EINVAL;
	}
	for (size_t i = 0; pcm_builtin_policies[i]; i++) {
		struct pcmd_policy *pol = calloc(1, sizeof(*pol));

		if (!pol || append(p, pol) < 0) {
			free(pol);
			pcmd_policies_destroy(p);
			return -ENOMEM;
		}
		pol->h.pkg = pcm_builtin_policies[i];
		pol->builtin = true;
		snprintf(pol->source, sizeof(pol->source), "built-in");
	}
	*out = p;
	return 0;
}

void pcmd_policies_destroy(struct pcmd_policies *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n; i++) {
		pcm_package_close(&p->items[i]->h);
		free(p->items[i]);
	}
	free(p->items);
	free(p);
}

struct pcmd_policy *pcmd_policies_find(struct pcmd_policies *p, const char *name)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (strcmp(p->items[i]->h.pkg->name, name) == 0)
			return p->items[i];
	return NULL;
}

static struct pcmd_policy *find_source(struct pcmd_policies *p, const char *real)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (!p->items[i]->builtin && strcmp(p->items[i]->source, real) == 0)
			return p->items[i];
	return NULL;
}

static int check_target(const struct pcmd_policies *p, const struct pcm_package *pkg, char *err,
			size_t err_len)
{
	struct pcm_diag diag;

	if (pcm_target_check_package(p->target, pkg, &diag) == 0)
		return 0;
	snprintf(err, err_len, "policy '%s' cannot run on the %s datapath: %s", pkg->name,
		 p->target->name, diag.msg);
	return -ENOTSUP;
}

int pcmd_policies_load(struct pcmd_policies *p, const char *path, bool admin,
		       struct pcmd_policy **out, char *err, size_t err_len)
{
	struct pcmd_policy *pol;
	struct pcm_package_handle h;
	char real[PATH_MAX];
	int rc;

	if (strlen(path) >= PCMD_PATH_MAX || !realpath(path, real) ||
	    strlen(real) >= PCMD_PATH_MAX) {
		rc = errno ? -errno : -ENAMETOOLONG;
		snprintf(err, err_len, "cannot open package '%s': %s", path, strerror(-rc));
		return rc;
	}
	pol = find_source(p, real);
	if (pol) {
		pol->admin_loaded |= admin;
		*out = pol;
		return 0;
	}
	rc = pcm_package_open(real, NULL, &h, err, err_len);
	if (rc < 0)
		return rc;
	if (pcmd_policies_find(p, h.pkg->name)) {
		snprintf(err, err_len,
			 "'%s' holds package '%s', but a policy of that name is already loaded; "
			 "rename its algorithm.name or unload the other one",
			 real, h.pkg->name);
		pcm_package_close(&h);
		return -EEXIST;
	}
	rc = check_target(p, h.pkg, err, err_len);
	if (rc < 0) {
		pcm_package_close(&h);
		return rc;
	}
	pol = calloc(1, sizeof(*pol));
	if (!pol || append(p, pol) < 0) {
		free(pol);
		pcm_package_close(&h);
		return -ENOMEM;
	}
	pol->h = h;
	pol->admin_loaded = admin;
	snprintf(pol->source, sizeof(pol->source), "%s", real);
	*out = pol;
	return 0;
}

struct pcmd_policy *pcmd_policies_lookup(struct pcmd_policies *p, const char *spec)
{
	char real[PATH_MAX];

	if (!looks_like_path(spec))
		return pcmd_policies_find(p, spec);
	if (!realpath(spec, real))
		return NULL;
	return find_source(p, real);
}

static bool spec_names(struct pcmd_policies *p, const char *spec, const struct pcmd_policy *pol)
{
	return spec[0] && pcmd_policies_lookup(p, spec) == pol;
}

/* The config location that names @pol, or NULL. */
static const struct pcmd_cfg_loc *named_by(struct pcmd_policies *p, const struct pcmd_config *cfg,
					   const struct pcmd_policy *pol)
{
	static const struct pcmd_cfg_loc none = {0, 0, false};

	if (spec_names(p, cfg->policies.default_policy, pol))
		return &cfg->policies.default_loc;
	if (spec_names(p, cfg->policies.default_lb, pol))
		return &none;
	for (uint32_t i = 0; i < cfg->policies.n_load; i++)
		if (spec_names(p, cfg->policies.load[i], pol))
			return &cfg->policies.load_loc[i];
	for (uint32_t i = 0; i < cfg->policies.n_rules; i++) {
		const struct pcmd_rule *r = &cfg->policies.rules[i];

		if (spec_names(p, r->policy, pol))
			return &r->policy_loc;
		if (spec_names(p, r->lb_policy, pol))
			return &r->lb_loc;
	}
	return NULL;
}

static void remove_at(struct pcmd_policies *p, uint32_t i)
{
	pcm_package_close(&p->items[i]->h);
	free(p->items[i]);
	memmove(&p->items[i], &p->items[i + 1], (p->n - i - 1) * sizeof(p->items[0]));
	p->n--;
}

int pcmd_policies_unload(struct pcmd_policies *p, const char *name, const struct pcmd_config *cfg,
			 char *err, size_t err_len)
{
	const struct pcmd_cfg_loc *loc;
	char where[PCMD_CFG_PATH_MAX + 32];

	for (uint32_t i = 0; i < p->n; i++) {
		struct pcmd_policy *pol = p->items[i];

		if (strcmp(pol->h.pkg->name, name) != 0)
			continue;
		if (pol->builtin) {
			snprintf(err, err_len, "'%s' is built in; it cannot be unloaded", name);
			return -EPERM;
		}
		if (pol->flows) {
			snprintf(
			    err, err_len,
			    "'%s' is used by %u flow(s); move them first (pcmctl policies set)",
			    name, pol->flows);
			return -EBUSY;
		}
		loc = named_by(p, cfg, pol);
		if (loc) {
			snprintf(err, err_len, "'%s' is named by the config at %s; change it there",
				 name, pcmd_config_where(cfg, loc, where, sizeof(where)));
			return -EBUSY;
		}
		remove_at(p, i);
		return 0;
	}
	snprintf(err, err_len, "no loaded policy named '%s'", name);
	return -ENOENT;
}

/* A package named by the config: a .so path is loaded, a name must exist. */
static int prepare_spec(struct pcmd_policies *p, const struct pcmd_config *cfg, const char *spec,
			const char *key, const struct pcmd_cfg_loc *loc, bool lb, char *err,
			size_t err_len)
{
	char where[PCMD_CFG_PATH_MAX + 32], why[PCMD_CFG_ERR_MAX];
	struct pcmd_policy *pol = NULL;
	int rc = 0;

	if (!spec[0] || (lb && strcmp(spec, "none") == 0))
		return 0;
	if (looks_like_path(spec)) {
		rc = pcmd_policies_load(p, spec, false, &pol, why, sizeof(why));
	} else {
		pol = pcmd_policies_find(p, spec);
		if (!pol) {
			snprintf(why, sizeof(why),
				 "no policy named '%s' (a built-in name, or a .so built by pcmc)",
				 spec);
			rc = -ENOENT;
		} else {
			rc = check_target(p, pol->h.pkg, why, sizeof(why));
		}
	}
	if (rc == 0 && lb && !(pol->h.pkg->control_types & (1u << PCM_CTRL_EV))) {
		snprintf(why, sizeof(why),
			 "policy '%s' sets no EV control, so it cannot balance load",
			 pol->h.pkg->name);
		rc = -EINVAL;
	}
	if (rc < 0)
		snprintf(err, err_len, "%s: %s: %s",
			 pcmd_config_where(cfg, loc, where, sizeof(where)), key, why);
	return rc;
}

static int prepare_all(struct pcmd_policies *p, const struct pcmd_config *cfg, char *err,
		       size_t err_len)
{
	static const struct pcmd_cfg_loc none = {0, 0, false};
	char key[64];
	int rc;

	for (uint32_t i = 0; i < cfg->policies.n_load; i++) {
		snprintf(key, sizeof(key), "policies.load[%u]", i);
		rc = prepare_spec(p, cfg, cfg->policies.load[i], key, &cfg->policies.load_loc[i],
				  false, err, err_len);
		if (rc < 0)
			return rc;
	}
	rc = prepare_spec(p, cfg, cfg->policies.default_policy, "policies.default",
			  &cfg->policies.default_loc, false, err, err_len);
	if (rc == 0)
		rc = prepare_spec(p, cfg, cfg->policies.default_lb, "policies.default_lb", &none,
				  true, err, err_len);
	for (uint32_t i = 0; rc == 0 && i < cfg->policies.n_rules; i++) {
		const struct pcmd_rule *r = &cfg->policies.rules[i];

		snprintf(key, sizeof(key), "policies.rules[%u].policy", i);
		rc = prepare_spec(p, cfg, r->policy, key, &r->policy_loc, false, err, err_len);
		snprintf(key, sizeof(key), "policies.rules[%u].lb", i);
		if (rc == 0)
			rc =
			    prepare_spec(p, cfg, r->lb_policy, key, &r->lb_loc, true, err, err_len);
	}
	return rc;
}

int pcmd_policies_prepare(struct pcmd_policies *p, const struct pcmd_config *cfg, char *err,
			  size_t err_len)
{
	uint32_t n_before = p->n;
	int rc = prepare_all(p, cfg, err, err_len);

	if (rc < 0)
		while (p->n > n_before)
			remove_at(p, p->n - 1);
	return rc;
}

void pcmd_policies_gc(struct pcmd_policies *p, const struct pcmd_config *cfg)
{
	for (uint32_t i = p->n; i-- > 0;) {
		struct pcmd_policy *pol = p->items[i];

		if (!pol->builtin && !pol->admin_loaded && !pol->flows && !named_by(p, cfg, pol))
			remove_at(p, i);
	}
}

static int choose_one(struct pcmd_policies *p, const char *spec, const char *what, bool lb,
		      struct pcmd_policy **out, char *err, size_t err_len)
{
	struct pcmd_policy *pol = pcmd_policies_lookup(p, spec);

	if (!pol) {
		snprintf(err, err_len, "%s: no policy named '%s' (see `pcmctl policies`)", what,
			 spec);
		return -ENOENT;
	}
	if (lb && !(pol->h.pkg->control_types & (1u << PCM_CTRL_EV))) {
		snprintf(err, err_len,
			 "%s: policy '%s' sets no EV control, so it cannot balance load", what,
			 spec);
		return -EINVAL;
	}
	*out = pol;
	return check_target(p, pol->h.pkg, err, err_len);
}

int pcmd_policies_choose(struct pcmd_policies *p, const struct pcmd_config *cfg, const char *peer,
			 const struct pcmd_flow_opts *req, struct pcmd_policy_choice *out,
			 char *err, size_t err_len)
{
	int rule = pcmd_config_find_rule(cfg, peer);
	const struct pcmd_rule *r = rule >= 0 ? &cfg->policies.rules[rule] : NULL;
	const char *cc = cfg->policies.default_policy, *lb = cfg->policies.default_lb;
	int rc;

	memset(out, 0, sizeof(*out));
	out->rule = rule;
	out->mode = r ? r->mode : cfg->policies.mode;
	out->skew_bound = r ? r->skew_bound : cfg->policies.skew_bound;
	out->no_progress_ms = req && req->no_progress_ms ? req->no_progress_ms
			      : r			 ? r->no_progress_ms
							 : 0;
	if (r && r->policy[0])
		cc = r->policy;
	if (r && r->lb_policy[0])
		lb = r->lb_policy;
	if (req && (looks_like_path(req->policy) || looks_like_path(req->lb_policy))) {
		snprintf(err, err_len,
			 "a connection names a policy pcmd has, never a file, admins' included: "
			 "load the .so first (pcmctl policies load PATH, an admin's operation), "
			 "then name the policy it loaded");
		return -EPERM;
	}
	if (req && req->policy[0])
		cc = req->policy;
	if (req && req->lb_policy[0])
		lb = req->lb_policy;
	if (req && req->mode != PCMD_SHELL_DEFAULT) {
		if (req->mode >= PCMD_SHELL_MODE_COUNT) {
			snprintf(err, err_len, "shell mode %u is not one of 0..%u", req->mode,
				 PCMD_SHELL_MODE_COUNT - 1);
			return -EINVAL;
		}
		out->mode = req->mode;
	}
	rc = choose_one(p, cc, "policy", false, &out->cc, err, err_len);
	if (rc == 0 && lb[0] && strcmp(lb, "none") != 0)
		rc = choose_one(p, lb, "lb policy", true, &out->lb, err, err_len);
	return rc;
}

void pcmd_policy_choice_hold(const struct pcmd_policy_choice *c, int delta)
{
	if (c->cc)
		c->cc->flows += (uint32_t)delta;
	if (c->lb)
		c->lb->flows += (uint32_t)delta;
}
