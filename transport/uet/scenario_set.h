/* SPDX-License-Identifier: MIT */
/*
 * scenario_set.h - settings laid over a scenario's YAML document before the
 * reader reads it (scenario_set.c; uet_scenario_load_set()).
 */
#ifndef PCM_UET_SCENARIO_SET_H
#define PCM_UET_SCENARIO_SET_H

#include <yaml.h>

#include "uet.h"

/**
 * uet_scenario_overlay() - lay @sets over @doc, in order: each value's nodes
 * replace the node at its key path, or are added with the keys the path
 * lacked.
 * @doc: the scenario's document (an empty one gets a mapping).
 * @sets: the settings, @n_sets of them.
 * @node_file: set to an array, by node index (0-based), of the file each
 *             node came from: NULL for the scenario's own nodes, a setting's
 *             file for the nodes it added; NULL when @n_sets is 0. Free it.
 * @diag: "file:line:col: key: what is wrong", at the setting, on failure.
 *
 * Return: 0, -EINVAL (a malformed path, a value that is not YAML, a path
 * through something that is not a mapping or to a list item the scenario
 * lacks), -ENOMEM.
 */
int uet_scenario_overlay(yaml_document_t *doc, const struct uet_scenario_set *sets, size_t n_sets,
			 const char ***node_file, struct pcm_diag *diag);

#endif /* PCM_UET_SCENARIO_SET_H */
