// SPDX-License-Identifier: MIT
/*
 * scenario_set.c - settings laid over a scenario file before it is read
 * (pcm-sim --set, pcm-sim sweep's set:): each names a key path into the
 * scenario ("topology.link_rate", "nic.DataRate", "failures[0].until") and
 * gives its value as YAML text. The value's nodes are copied into the
 * scenario's YAML document at that path, replacing what the file had there
 * or adding the keys it lacked; the reader then reads the document as if the
 * file had said so, so a setting is checked by the same key tables as the
 * file (an unknown key, a wrong value). Every node a setting added is
 * remembered with the file that setting came from, and keeps the line and
 * column it had there: the reader's messages about it point at the setting,
 * not at the scenario.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "scenario_set.h"

/* Where a setting is, for messages: "file:line:col: key". */
static int set_fail(struct pcm_diag *diag, const struct uet_scenario_set *s, uint32_t line,
		    uint32_t col, const char *what)
{
	uet_diag_set(diag, "%s:%u:%u: %s: %s", s->file, line, col, s->key, what);
	return -EINVAL;
}

static yaml_node_t *node_at(yaml_document_t *doc, int index)
{
	return yaml_document_get_node(doc, index);
}

static void set_marks(yaml_document_t *doc, int index, yaml_mark_t start, yaml_mark_t end)
{
	yaml_node_t *n = node_at(doc, index);

	n->start_mark = start;
	n->end_mark = end;
}

/* A copy of node @src of @from in @to, marks kept. Return: its index, 0 without memory. */
static int copy_node(yaml_document_t *to, yaml_document_t *from, const yaml_node_t *src)
{
	int idx = 0;

	switch (src->type) {
	case YAML_SCALAR_NODE:
		idx = yaml_document_add_scalar(to, NULL, src->data.scalar.value,
					       (int)src->data.scalar.length,
					       src->data.scalar.style);
		break;
	case YAML_SEQUENCE_NODE:
		idx = yaml_document_add_sequence(to, NULL, src->data.sequence.style);
		for (yaml_node_item_t *it = src->data.sequence.items.start;
		     idx && it < src->data.sequence.items.top; it++) {
			int item = copy_node(to, from, node_at(from, *it));

			if (!item || !yaml_document_append_sequence_item(to, idx, item))
				return 0;
		}
		break;
	case YAML_MAPPING_NODE:
		idx = yaml_document_add_mapping(to, NULL, src->data.mapping.style);
		for (yaml_node_pair_t *p = src->data.mapping.pairs.start;
		     idx && p < src->data.mapping.pairs.top; p++) {
			int k = copy_node(to, from, node_at(from, p->key));
			int v = k ? copy_node(to, from, node_at(from, p->value)) : 0;

			if (!v || !yaml_document_append_mapping_pair(to, idx, k, v))
				return 0;
		}
		break;
	case YAML_NO_NODE:
		break;
	}
	if (idx)
		set_marks(to, idx, src->start_mark, src->end_mark);
	return idx;
}

/*
 * The value of @s, parsed and copied into @doc. Its text is read as if it
 * began at line s->line of its file, so that the marks are the file's.
 * Return: the new node's index, -EINVAL (in @diag), -ENOMEM.
 */
static int add_value(yaml_document_t *doc, const struct uet_scenario_set *s,
		     struct pcm_diag *diag)
{
	size_t pad = s->line > 1 ? s->line - 1 : 0, len = strlen(s->value);
	yaml_parser_t parser;
	yaml_document_t vdoc;
	char *text = malloc(pad + len + 1);
	int idx = -ENOMEM;

	if (!text)
		return -ENOMEM;
	memset(text, '\n', pad);
	memcpy(text + pad, s->value, len + 1);
	if (!yaml_parser_initialize(&parser))
		goto out;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, pad + len);
	if (!yaml_parser_load(&parser, &vdoc)) {
		char what[PCM_DIAG_MAX / 2];

		snprintf(what, sizeof(what), "YAML: %s",
			 parser.problem ? parser.problem : "cannot parse");
		idx = set_fail(diag, s, (uint32_t)parser.problem_mark.line + 1,
			       (uint32_t)parser.problem_mark.column + 1, what);
		yaml_parser_delete(&parser);
		goto out;
	}
	if (!yaml_document_get_root_node(&vdoc))
		idx = set_fail(diag, s, s->line, 1, "no value");
	else
		idx = copy_node(doc, &vdoc, yaml_document_get_root_node(&vdoc));
	if (idx == 0)
		idx = -ENOMEM;
	yaml_document_delete(&vdoc);
	yaml_parser_delete(&parser);
out:
	free(text);
	return idx;
}

/* A key node for name @name of @s, marked at the setting's key. Return: its index, 0. */
static int add_key(yaml_document_t *doc, const struct uet_scenario_set *s, const char *name)
{
	yaml_mark_t m = { .line = s->key_line ? s->key_line - 1 : 0,
			  .column = s->key_col ? s->key_col - 1 : 0 };
	int idx = yaml_document_add_scalar(doc, NULL, (const yaml_char_t *)name, -1,
					   YAML_PLAIN_SCALAR_STYLE);

	if (idx)
		set_marks(doc, idx, m, m);
	return idx;
}

/* The pair of mapping @map whose key is @name, or NULL. */
static yaml_node_pair_t *find_pair(yaml_document_t *doc, int map, const char *name)
{
	yaml_node_t *m = node_at(doc, map);

	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = node_at(doc, p->key);

		if (k && k->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, name) == 0)
			return p;
	}
	return NULL;
}

/* One step of a key path: a name, and an item index (-1: none), e.g. "failures[2]". */
struct step {
	char name[64];
	long item;
	bool last;
};

/* The next step of @path from *@pos. Return: 0, -EINVAL (a malformed path). */
static int next_step(const char *path, size_t *pos, struct step *st)
{
	const char *s = path + *pos, *dot = strchr(s, '.');
	size_t n = dot ? (size_t)(dot - s) : strlen(s);
	const char *br = memchr(s, '[', n);
	size_t name_len = br ? (size_t)(br - s) : n;
	char *end;

	if (!name_len || name_len >= sizeof(st->name))
		return -EINVAL;
	memcpy(st->name, s, name_len);
	st->name[name_len] = '\0';
	st->item = -1;
	if (br) {
		st->item = strtol(br + 1, &end, 10);
		if (end == br + 1 || *end != ']' || end + 1 != s + n || st->item < 0)
			return -EINVAL;
	}
	st->last = !dot;
	*pos += n + (dot ? 1 : 0);
	return 0;
}

/*
 * The node @st names under mapping @map, made if it is missing (a mapping,
 * or the value when @st is the path's last step); a last step's node is
 * replaced by @value. Return: the node's index, -EINVAL, -ENOMEM.
 */
static int descend(yaml_document_t *doc, int map, const struct step *st, int value,
		   const struct uet_scenario_set *s, struct pcm_diag *diag)
{
	yaml_node_pair_t *p = find_pair(doc, map, st->name);
	yaml_node_t *seq;
	int child, k;

	if (!p) {
		if (st->item >= 0) {
			char what[160];

			snprintf(what, sizeof(what), "the scenario has no '%s' list to index",
				 st->name);
			return set_fail(diag, s, s->key_line, s->key_col, what);
		}
		k = add_key(doc, s, st->name);
		child = st->last ? value
				 : yaml_document_add_mapping(doc, NULL, YAML_BLOCK_MAPPING_STYLE);
		if (!k || !child || !yaml_document_append_mapping_pair(doc, map, k, child))
			return -ENOMEM;
		if (!st->last)
			set_marks(doc, child, node_at(doc, k)->start_mark, node_at(doc, k)->end_mark);
		return child;
	}
	if (st->item < 0) {
		if (st->last)
			p->value = value;
		return p->value;
	}
	seq = node_at(doc, p->value);
	if (!seq || seq->type != YAML_SEQUENCE_NODE ||
	    st->item >= seq->data.sequence.items.top - seq->data.sequence.items.start) {
		char what[160];

		snprintf(what, sizeof(what), "the scenario's '%s' has no item %ld", st->name,
			 st->item);
		return set_fail(diag, s, s->key_line, s->key_col, what);
	}
	if (st->last)
		seq->data.sequence.items.start[st->item] = value;
	return seq->data.sequence.items.start[st->item];
}

/* Lay setting @s over @doc. Return: 0, -EINVAL, -ENOMEM. */
static int apply(yaml_document_t *doc, const struct uet_scenario_set *s, struct pcm_diag *diag)
{
	int node = 1, value = add_value(doc, s, diag);
	size_t pos = 0;

	if (value < 0)
		return value;
	for (;;) {
		const yaml_node_t *n = node_at(doc, node);
		struct step st;

		if (next_step(s->key, &pos, &st) < 0)
			return set_fail(diag, s, s->key_line, s->key_col,
					"not a key path (names joined by '.', a list item as "
					"name[N]: topology.link_rate, failures[0].at)");
		if (!n || n->type != YAML_MAPPING_NODE) {
			char what[160];

			snprintf(what, sizeof(what), "cannot set '%s': what holds it in the "
						     "scenario is not a mapping",
				 st.name);
			return set_fail(diag, s, s->key_line, s->key_col, what);
		}
		node = descend(doc, node, &st, value, s, diag);
		if (node < 0 || st.last)
			return node < 0 ? node : 0;
	}
}

int uet_scenario_overlay(yaml_document_t *doc, const struct uet_scenario_set *sets, size_t n_sets,
			 const char ***node_file, struct pcm_diag *diag)
{
	size_t before, after;
	const char **files;

	*node_file = NULL;
	if (!n_sets)
		return 0;
	if (!yaml_document_get_root_node(doc) &&
	    !yaml_document_add_mapping(doc, NULL, YAML_BLOCK_MAPPING_STYLE))
		return -ENOMEM;
	before = (size_t)(doc->nodes.top - doc->nodes.start);
	/* every node from here on is a setting's; each setting's nodes follow the last's */
	files = NULL;
	for (size_t i = 0; i < n_sets; i++) {
		size_t first = (size_t)(doc->nodes.top - doc->nodes.start);
		const char **grown;
		int rc = apply(doc, &sets[i], diag);

		if (rc < 0) {
			free(files);
			return rc;
		}
		after = (size_t)(doc->nodes.top - doc->nodes.start);
		grown = realloc(files, after * sizeof(*files));
		if (!grown) {
			free(files);
			return -ENOMEM;
		}
		files = grown;
		for (size_t k = i ? first : 0; k < after; k++)
			files[k] = k < before ? NULL : sets[i].file;
	}
	*node_file = files;
	return 0;
}
