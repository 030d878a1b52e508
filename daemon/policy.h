/* SPDX-License-Identifier: MIT */
/*
 * policy.h - pcmd's policy registry: the built-in handler packages plus the
 * shared objects (`pcmc build`) loaded at run time, each checked against the
 * capability target of the datapath in use; which flows use which; and the
 * choice of a new flow's policy from the config's per-destination rules.
 *
 * A package in use by a flow, or named by the running config, cannot be
 * unloaded. A package that a failed reload loaded is unloaded again, so a
 * rejected config leaves the registry as it was.
 */
#ifndef PCMD_POLICY_H
#define PCMD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "package.h"
#include "pcmd_proto.h"

struct pcm_target;

struct pcmd_policy {
	struct pcm_package_handle h;
	char source[PCMD_PATH_MAX]; /* "built-in" or the .so's real path */
	uint32_t flows;		    /* flows using it as CC or LB */
	bool builtin;
	bool admin_loaded; /* loaded by `pcmctl policies load`: kept across reloads */
};

struct pcmd_policies {
	const struct pcm_target *target; /* the datapath's capabilities */
	uint32_t n, cap;
	struct pcmd_policy **items; /* sorted: built-ins first, then by load order */
	uint64_t swaps;
};

/* A flow's choice, from the request, its rule, or the defaults. */
struct pcmd_policy_choice {
	struct pcmd_policy *cc;
	struct pcmd_policy *lb; /* NULL: none */
	uint32_t mode;		/* enum pcmd_shell_mode */
	uint32_t skew_bound;
	uint32_t no_progress_ms; /* the flow's no-progress limit; 0: the engine's default (5 s) */
	int rule; /* the rule that chose, -1 none */
};

/**
 * pcmd_policies_create() - a registry holding every built-in package.
 * @target_name: the capability target packages are checked against
 *               ("softnic", "verbs").
 * @out: the registry.
 *
 * Return: 0, -ENOMEM, -EINVAL (unknown target).
 */
int pcmd_policies_create(const char *target_name, struct pcmd_policies **out);

void pcmd_policies_destroy(struct pcmd_policies *p);

/* Return: the policy whose package is named @name, or NULL. */
struct pcmd_policy *pcmd_policies_find(struct pcmd_policies *p, const char *name);

/**
 * pcmd_policies_load() - dlopen a package built by `pcmc build` and check it.
 * @p: the registry.
 * @path: the .so.
 * @admin: loaded by an operator (kept across reloads) rather than by the config.
 * @out: the policy (the existing one if this file is already loaded).
 * @err: on failure, what is wrong with which file.
 * @err_len: its size.
 *
 * Return: 0, -ENOENT, -ELIBBAD, -EPROTO, -ENOTSUP (target lacks a signal or
 * control the package needs), -EEXIST (another package has that name), -ENOMEM.
 */
int pcmd_policies_load(struct pcmd_policies *p, const char *path, bool admin,
		       struct pcmd_policy **out, char *err, size_t err_len);

/**
 * pcmd_policies_unload() - unload a loaded package.
 * @p: the registry.
 * @name: its name.
 * @cfg: the running config (a package it names stays).
 * @err: why not.
 * @err_len: its size.
 *
 * Return: 0, -ENOENT, -EPERM (built-in), -EBUSY (flows or the config use it).
 */
int pcmd_policies_unload(struct pcmd_policies *p, const char *name, const struct pcmd_config *cfg,
			 char *err, size_t err_len);

/**
 * pcmd_policies_prepare() - load and check every package @cfg names
 * (policies.load, the defaults, each rule). On failure the packages this call
 * loaded are unloaded again.
 * @p: the registry.
 * @cfg: the config.
 * @err: "file:line:col: key: what is wrong".
 * @err_len: its size.
 *
 * Return: 0, or the first failure's -errno.
 */
int pcmd_policies_prepare(struct pcmd_policies *p, const struct pcmd_config *cfg, char *err,
			  size_t err_len);

/**
 * pcmd_policies_gc() - unload config-loaded packages that no flow uses and
 * @cfg no longer names (after a reload).
 * @p: the registry.
 * @cfg: the config now running.
 */
void pcmd_policies_gc(struct pcmd_policies *p, const struct pcmd_config *cfg);

/**
 * pcmd_policies_lookup() - a policy by name or by a config's .so path (already
 * prepared); app clients name policies, only the config names paths.
 * @p: the registry.
 * @spec: a package name, or a path the config listed.
 *
 * Return: the policy, or NULL.
 */
struct pcmd_policy *pcmd_policies_lookup(struct pcmd_policies *p, const char *spec);

/**
 * pcmd_policies_choose() - the policy of a new flow to @peer, or of a change:
 * fields the request leaves empty come from the first matching rule, then the
 * defaults.
 * @p: the registry.
 * @cfg: the running config.
 * @peer: the peer address.
 * @req: the request's options (may be NULL).
 * @out: the choice.
 * @err: what is wrong ("no policy named 'x'"...).
 * @err_len: its size.
 *
 * Return: 0, -ENOENT (unknown policy), -EPERM (a path from a client), -EINVAL (mode).
 */
int pcmd_policies_choose(struct pcmd_policies *p, const struct pcmd_config *cfg, const char *peer,
			 const struct pcmd_flow_opts *req, struct pcmd_policy_choice *out,
			 char *err, size_t err_len);

/* Count a flow's use of its choice (+1) or its end (-1). */
void pcmd_policy_choice_hold(const struct pcmd_policy_choice *c, int delta);

#endif /* PCMD_POLICY_H */
