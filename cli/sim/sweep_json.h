/* SPDX-License-Identifier: MIT */
/*
 * sweep_json.h - reading a JSON record as flat (path, value) leaves
 * (sweep_json.c), for the sweep's summary.csv.
 */
#ifndef PCM_SIM_SWEEP_JSON_H
#define PCM_SIM_SWEEP_JSON_H

#include <stddef.h>

/*
 * Called for each leaf: @path its keys joined by '.' (list items by their
 * index: "set.topology.link_rate", "result.fct_us.max"), @value its text
 * (a string unescaped; a number, true, false as written; null as "").
 * Return nonzero to stop.
 */
typedef int (*sweep_json_leaf_fn)(void *ctx, const char *path, const char *value);

/**
 * sweep_json_leaves() - call @fn on each leaf of the JSON value in @text.
 * @text: one JSON value (a record line), NUL-terminated.
 * @fn: the callback.
 * @ctx: its argument.
 *
 * Return: 0, -EINVAL (not JSON, or nested deeper than 16), -ENOMEM, or the
 * callback's nonzero value.
 */
int sweep_json_leaves(const char *text, sweep_json_leaf_fn fn, void *ctx);

#endif /* PCM_SIM_SWEEP_JSON_H */
