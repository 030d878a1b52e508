// SPDX-License-Identifier: MIT
/*
 * spec.c - load a handler package spec and a fabric profile from YAML.
 *
 * Two passes over the text. libyaml's event parser goes first, to reject what
 * its document API would accept silently: anchors and aliases (an alias bomb
 * expands exponentially when walked), extra documents, and nesting or node
 * counts no spec needs, which would only cost time and memory. The document API
 * then builds the node tree, whose marks give every diagnostic its line and
 * column. The walk follows the spec's fixed schema, so its depth never
 * depends on the input, and each list is checked against its limit before
 * anything is allocated for it. The list sections (constants, signals,
 * controls, variables) are rows of one table, sections[]: parse_section()
 * applies the rules they share once, and each row's item parser only its own.
 * A spec and a fabric profile are two document types of one loader
 * (parse_document(), load_document()).
 *
 * Nothing is published until the whole file is valid: on error the caller's
 * pointer is left alone and everything built so far is freed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "expr.h"
#include "pcm/spec.h"

#define MAX_FILE_BYTES (1u << 20)
#define KEY_MAX 96   /* "signals[63].reset_upon_trigger" and the like */
#define SHOWN_MAX 48 /* longest piece of input quoted in a message */
#define MAX_FIELDS 10
#define MAX_YAML_DEPTH 32     /* a spec needs 3 levels */
#define MAX_YAML_NODES 100000 /* a spec at every limit has about 40000 */
#define EVAL_TAG "!eval"
#define STD_TAG_PREFIX "tag:yaml.org,2002:"
#define WANT_ANY_TYPE (-1) /* keep a value's own type (fabric entries) */

#define STR_(x) #x
#define STR(x) STR_(x)

struct name_entry {
	const char *name;
	struct pcm_srcloc loc;
};

struct loader {
	const char *label; /* the file name diagnostics start with */
	struct pcm_diag *diag;
	yaml_document_t doc;
	bool have_doc;
	/* What names in values resolve to, in this order. */
	const struct pcm_spec_constant *constants;
	unsigned n_constants;
	/* While constants are resolved in dependency order (NULL after). */
	bool *const_resolved;
	int *const_waits_on;		/* the constant each one last waited for */
	yaml_node_t **const_value_nodes;
	int pending_constant;		/* set when resolve_name() returns -EAGAIN */
	const struct pcm_fabric *fabric;
	bool no_fabric_profile; /* a spec loaded without one: say so when FABRIC_* is unknown */
	bool missed_fabric_name; /* an !eval asked for a FABRIC_* name without a profile */
	/* Every spec name so far, to keep them unique. */
	struct name_entry *names;
	unsigned n_names;
	unsigned cap_names;
	uint32_t n_var_slots;
};

/* Diagnostics -------------------------------------------------------------- */

static struct pcm_srcloc node_loc(const yaml_node_t *node)
{
	struct pcm_srcloc loc = { (unsigned)node->start_mark.line + 1,
				  (unsigned)node->start_mark.column + 1 };
	return loc;
}

static struct pcm_srcloc mark_loc(yaml_mark_t mark)
{
	struct pcm_srcloc loc = { (unsigned)mark.line + 1, (unsigned)mark.column + 1 };
	return loc;
}

static int diag_at(struct loader *ld, struct pcm_srcloc loc, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "file:line:col: key: what is wrong"; returns -EINVAL. */
static int diag_at(struct loader *ld, struct pcm_srcloc loc, const char *key, const char *fmt, ...)
{
	char *msg = ld->diag->msg;
	int used;
	va_list ap;

	used = snprintf(msg, PCM_DIAG_MAX, "%s:%u:%u: %s%s", ld->label, loc.line, loc.col,
			key ? key : "", key && key[0] ? ": " : "");
	if (used < 0 || used >= PCM_DIAG_MAX - 1)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(msg + used, (size_t)(PCM_DIAG_MAX - used), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Input text as a message may quote it: printable, and cut short with "...". */
static const char *shown(char *buf, size_t size, const char *text, size_t len)
{
	size_t n = 0, i;

	for (i = 0; i < len && n + 4 < size && i < SHOWN_MAX; i++) {
		unsigned char c = (unsigned char)text[i];

		buf[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (i < len && n + 4 <= size) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}

static const char *node_kind(const yaml_node_t *node)
{
	switch (node->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

/* "section[index]"; sections are short literals, so this never truncates. */
static void item_key(char *buf, const char *section, unsigned index)
{
	snprintf(buf, KEY_MAX, "%.40s[%u]", section, index);
}

/* "where.field", or "field" at the top level; cut short at KEY_MAX - 1. */
static void field_key(char *buf, const char *where, const char *field)
{
	size_t n = 0;

	for (const char *s = where; *s && n < KEY_MAX - 1; s++)
		buf[n++] = *s;
	if (where[0] && n < KEY_MAX - 1)
		buf[n++] = '.';
	for (const char *s = field; *s && n < KEY_MAX - 1; s++)
		buf[n++] = *s;
	buf[n] = '\0';
}

/* YAML ----------------------------------------------------------------------- */

static struct pcm_srcloc offset_loc(const unsigned char *buf, size_t len, size_t offset)
{
	struct pcm_srcloc loc = { 1, 1 };

	for (size_t i = 0; i < offset && i < len; i++) {
		if (buf[i] == '\n') {
			loc.line++;
			loc.col = 1;
		} else {
			loc.col++;
		}
	}
	return loc;
}

static int yaml_error(struct loader *ld, const yaml_parser_t *parser, const unsigned char *buf,
		      size_t len)
{
	struct pcm_srcloc loc = mark_loc(parser->problem_mark);
	const char *problem = parser->problem ? parser->problem : "unknown error";

	/* libyaml leaves the error unset on some of its allocation failures. */
	if (parser->error == YAML_MEMORY_ERROR || parser->error == YAML_NO_ERROR)
		return -ENOMEM;
	if (parser->error == YAML_READER_ERROR)
		return diag_at(ld, offset_loc(buf, len, parser->problem_offset), NULL,
			       "YAML syntax error: %s", problem);
	if (parser->context)
		return diag_at(ld, loc, NULL, "YAML syntax error: %s (%s at %u:%u)", problem,
			       parser->context, (unsigned)parser->context_mark.line + 1,
			       (unsigned)parser->context_mark.column + 1);
	return diag_at(ld, loc, NULL, "YAML syntax error: %s", problem);
}

static const yaml_char_t *event_anchor(const yaml_event_t *event)
{
	switch (event->type) {
	case YAML_SCALAR_EVENT:
		return event->data.scalar.anchor;
	case YAML_SEQUENCE_START_EVENT:
		return event->data.sequence_start.anchor;
	case YAML_MAPPING_START_EVENT:
		return event->data.mapping_start.anchor;
	default:
		return NULL;
	}
}

struct prescan {
	unsigned n_documents;
	unsigned n_nodes;
	unsigned depth; /* open sequences and mappings */
};

static int check_event(struct loader *ld, const yaml_event_t *event, struct prescan *scan)
{
	const yaml_char_t *anchor = event_anchor(event);
	struct pcm_srcloc loc = mark_loc(event->start_mark);
	char buf[SHOWN_MAX + 4];

	if ((event->type == YAML_SCALAR_EVENT || event->type == YAML_SEQUENCE_START_EVENT ||
	     event->type == YAML_MAPPING_START_EVENT) &&
	    ++scan->n_nodes > MAX_YAML_NODES)
		return diag_at(ld, loc, NULL, "more than %d YAML nodes", MAX_YAML_NODES);
	if (event->type == YAML_SEQUENCE_START_EVENT || event->type == YAML_MAPPING_START_EVENT) {
		if (++scan->depth > MAX_YAML_DEPTH)
			return diag_at(ld, loc, NULL, "YAML nesting deeper than %d levels",
				       MAX_YAML_DEPTH);
	} else if (event->type == YAML_SEQUENCE_END_EVENT ||
		   event->type == YAML_MAPPING_END_EVENT) {
		scan->depth--;
	}

	if (event->type == YAML_ALIAS_EVENT) {
		const char *name = (const char *)event->data.alias.anchor;

		return diag_at(ld, loc, NULL,
			       "YAML aliases (*%s) are not supported; quote a value that starts "
			       "with '*'",
			       shown(buf, sizeof(buf), name, strlen(name)));
	}
	if (anchor)
		return diag_at(ld, loc, NULL,
			       "YAML anchors (&%s) are not supported; quote a value that starts "
			       "with '&'",
			       shown(buf, sizeof(buf), (const char *)anchor,
				     strlen((const char *)anchor)));
	if (event->type == YAML_DOCUMENT_START_EVENT && ++scan->n_documents > 1)
		return diag_at(ld, loc, NULL, "a second YAML document; the file must hold one");
	return 0;
}

/*
 * The first pass: syntax, and what the document API would accept but we do
 * not. The depth and node limits also bound the work and memory of the
 * second pass; libyaml's own work grows with the square of the nesting depth
 * of flow collections.
 */
static int yaml_prescan(struct loader *ld, const unsigned char *buf, size_t len)
{
	struct prescan scan = { 0 };
	yaml_parser_t parser;
	yaml_event_t event;
	bool done = false;
	int ret = 0;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, buf, len);
	while (!done && ret == 0) {
		if (!yaml_parser_parse(&parser, &event)) {
			ret = yaml_error(ld, &parser, buf, len);
			break;
		}
		ret = check_event(ld, &event, &scan);
		done = event.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&event);
	}
	yaml_parser_delete(&parser);
	return ret;
}

static int yaml_load(struct loader *ld, const char *text, size_t len)
{
	const unsigned char *buf = (const unsigned char *)text;
	struct pcm_srcloc start = { 1, 1 };
	yaml_parser_t parser;
	int ret;

	if (len > MAX_FILE_BYTES)
		return diag_at(ld, start, NULL, "the file is %zu bytes, over the limit of 1 MiB",
			       len);
	ret = yaml_prescan(ld, buf, len);
	if (ret)
		return ret;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, buf, len);
	if (yaml_parser_load(&parser, &ld->doc))
		ld->have_doc = true;
	else
		ret = yaml_error(ld, &parser, buf, len);
	yaml_parser_delete(&parser);
	return ret;
}

static yaml_node_t *get_node(struct loader *ld, int index)
{
	return yaml_document_get_node(&ld->doc, index);
}

static bool is_standard_tag(const yaml_node_t *node)
{
	return node->tag && strncmp((const char *)node->tag, STD_TAG_PREFIX,
				    strlen(STD_TAG_PREFIX)) == 0;
}

static bool is_eval_tag(const yaml_node_t *node)
{
	return node->tag && strcmp((const char *)node->tag, EVAL_TAG) == 0;
}

/* An empty value, ~ or null: treated as if the key were absent. */
static bool is_null(const yaml_node_t *node)
{
	const char *text = NULL;

	if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
	    !is_standard_tag(node))
		return false;
	text = (const char *)node->data.scalar.value;
	return strcmp(text, "") == 0 || strcmp(text, "~") == 0 || strcmp(text, "null") == 0 ||
	       strcmp(text, "Null") == 0 || strcmp(text, "NULL") == 0;
}

static int check_tag(struct loader *ld, const yaml_node_t *node, const char *key)
{
	char buf[SHOWN_MAX + 4];
	const char *tag = node->tag ? (const char *)node->tag : "";

	if (is_standard_tag(node))
		return 0;
	if (is_eval_tag(node))
		return diag_at(ld, node_loc(node), key, "!eval is only allowed on values");
	return diag_at(ld, node_loc(node), key,
		       "unsupported YAML tag '%s'; quote a value that starts with '!'",
		       shown(buf, sizeof(buf), tag, strlen(tag)));
}

/* The text of a scalar that is plain text, not a value; no tag, no NUL inside. */
static int scalar_text(struct loader *ld, const yaml_node_t *node, const char *key,
		       const char **text)
{
	int ret;

	if (node->type != YAML_SCALAR_NODE)
		return diag_at(ld, node_loc(node), key, "expected a scalar, found %s",
			       node_kind(node));
	ret = check_tag(ld, node, key);
	if (ret)
		return ret;
	if (strlen((const char *)node->data.scalar.value) != node->data.scalar.length)
		return diag_at(ld, node_loc(node), key, "contains a NUL character");
	*text = (const char *)node->data.scalar.value;
	return 0;
}

/* Mappings with a fixed set of keys -------------------------------------------- */

struct fields {
	const char *const *keys;
	unsigned n_keys;
	yaml_node_t *key[MAX_FIELDS];	/* the key as written, if present */
	yaml_node_t *value[MAX_FIELDS]; /* NULL when absent or null */
};

static int find_key(const struct fields *f, const char *text)
{
	for (unsigned k = 0; k < f->n_keys; k++) {
		if (strcmp(f->keys[k], text) == 0)
			return (int)k;
	}
	return -1;
}

static void key_list(const struct fields *f, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned k = 0; k < f->n_keys && used < size; k++) {
		int n = snprintf(buf + used, size - used, "%s%s", k ? ", " : "", f->keys[k]);

		if (n < 0)
			return;
		used += (size_t)n;
	}
}

static int unknown_key(struct loader *ld, const yaml_node_t *key_node, const char *where,
		       const char *text, const struct fields *f)
{
	char key[KEY_MAX], buf[SHOWN_MAX + 4], expected[200];
	const char *closest = pcm_closest_spelling(f->keys, f->n_keys, text);

	field_key(key, where, shown(buf, sizeof(buf), text, strlen(text)));
	key_list(f, expected, sizeof(expected));
	if (closest)
		return diag_at(ld, node_loc(key_node), key, "unknown key; did you mean %s?",
			       closest);
	return diag_at(ld, node_loc(key_node), key, "unknown key (expected %s)", expected);
}

/* One item of a list section (parse_section()), as the section's parser sees it. */
struct item {
	yaml_node_t *node; /* its mapping */
	unsigned index;
	char where[KEY_MAX]; /* "signals[3]": what its keys' diagnostics start with */
	struct fields f;     /* its fields, by the section's keys */
};

/* Sort a mapping's pairs into @f by key; unknown and repeated keys are errors. */
static int collect_fields(struct loader *ld, yaml_node_t *map, const char *where,
			  struct fields *f)
{
	char key[KEY_MAX];

	for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *key_node = get_node(ld, pair->key);
		yaml_node_t *value_node = get_node(ld, pair->value);
		const char *text = NULL;
		int k, ret;

		if (!key_node || !value_node)
			return diag_at(ld, node_loc(map), where, "malformed YAML mapping");
		ret = scalar_text(ld, key_node, where[0] ? where : NULL, &text);
		if (ret)
			return ret;
		k = find_key(f, text);
		if (k < 0)
			return unknown_key(ld, key_node, where, text, f);
		if (f->key[k]) {
			struct pcm_srcloc first = node_loc(f->key[k]);

			field_key(key, where, f->keys[k]);
			return diag_at(ld, node_loc(key_node), key,
				       "duplicate key (first at %u:%u)", first.line, first.col);
		}
		f->key[k] = key_node;
		f->value[k] = is_null(value_node) ? NULL : value_node;
	}
	return 0;
}

/* A field that must be present and not empty. */
static int required_field(struct loader *ld, const yaml_node_t *map, const struct fields *f,
			  unsigned k, const char *where, yaml_node_t **out)
{
	char key[KEY_MAX];

	field_key(key, where, f->keys[k]);
	if (!f->key[k])
		return diag_at(ld, node_loc(map), key, "missing required key");
	if (!f->value[k])
		return diag_at(ld, node_loc(f->key[k]), key, "empty value");
	*out = f->value[k];
	return 0;
}

/* An optional `description`: text for people, kept for tools, never parsed. */
static int description_field(struct loader *ld, const struct fields *f, unsigned k,
			     const char *where, char **out)
{
	char key[KEY_MAX];
	const char *text = NULL;
	int ret;

	if (!f->value[k])
		return 0;
	field_key(key, where, f->keys[k]);
	ret = scalar_text(ld, f->value[k], key, &text);
	if (ret)
		return ret;
	*out = strdup(text);
	return *out ? 0 : -ENOMEM;
}

/* Names ---------------------------------------------------------------------- */

/* A C identifier of at most PCM_NAME_MAX - 1 characters, copied into @name. */
static int identifier_field(struct loader *ld, const yaml_node_t *node, const char *key,
			    char name[PCM_NAME_MAX])
{
	char buf[SHOWN_MAX + 4];
	const char *text = NULL;
	size_t len;
	int ret = scalar_text(ld, node, key, &text);

	if (ret)
		return ret;
	len = strlen(text);
	if (!pcm_is_identifier(text, len))
		return diag_at(ld, node_loc(node), key, "'%s' is not a C identifier",
			       shown(buf, sizeof(buf), text, len));
	if (len >= PCM_NAME_MAX)
		return diag_at(ld, node_loc(node), key, "'%s' is longer than %d characters",
			       shown(buf, sizeof(buf), text, len), PCM_NAME_MAX - 1);
	memcpy(name, text, len + 1);
	return 0;
}

static int remember_name(struct loader *ld, const char *name, struct pcm_srcloc loc)
{
	if (ld->n_names == ld->cap_names) {
		unsigned cap = ld->cap_names ? 2 * ld->cap_names : 64;
		struct name_entry *names = realloc(ld->names, cap * sizeof(*names));

		if (!names)
			return -ENOMEM;
		ld->names = names;
		ld->cap_names = cap;
	}
	ld->names[ld->n_names].name = name;
	ld->names[ld->n_names].loc = loc;
	ld->n_names++;
	return 0;
}

/* A field of @it that must be present and not empty, with its "where.key" for diagnostics. */
static int item_field(struct loader *ld, const struct item *it, unsigned k, char key[KEY_MAX],
		      yaml_node_t **node)
{
	field_key(key, it->where, it->f.keys[k]);
	return required_field(ld, it->node, &it->f, k, it->where, node);
}

/* The `name` of a constant, signal, control or variable: unique and not reserved. */
static int spec_name_field(struct loader *ld, const struct item *it, unsigned k,
			   char name[PCM_NAME_MAX])
{
	char key[KEY_MAX], why[160];
	yaml_node_t *node = NULL;
	struct pcm_srcloc loc;
	int ret = item_field(ld, it, k, key, &node);

	if (ret)
		return ret;
	ret = identifier_field(ld, node, key, name);
	if (ret)
		return ret;
	loc = node_loc(node);
	if (pcm_name_is_reserved(name, why, sizeof(why)))
		return diag_at(ld, loc, key, "'%s' is reserved: %s", name, why);
	for (unsigned i = 0; i < ld->n_names; i++) {
		if (strcmp(ld->names[i].name, name) == 0)
			return diag_at(ld, loc, key, "duplicate name '%s' (first defined at %u:%u)",
				       name, ld->names[i].loc.line, ld->names[i].loc.col);
	}
	return remember_name(ld, name, loc);
}

/* Enumerations --------------------------------------------------------------- */

static int enum_field(struct loader *ld, const yaml_node_t *node, const char *key,
		      enum pcm_name_kind kind, const char *what, unsigned *value)
{
	char buf[SHOWN_MAX + 4], expected[400], hint[80] = "";
	const char *text, *closest;
	int ret = scalar_text(ld, node, key, &text);

	if (ret)
		return ret;
	if (pcm_name_lookup(kind, text, value) == 0)
		return 0;
	closest = pcm_name_closest(kind, text);
	if (closest)
		snprintf(hint, sizeof(hint), "; did you mean %s?", closest);
	pcm_name_list(kind, expected, sizeof(expected));
	return diag_at(ld, node_loc(node), key, "unknown %s '%s'%s (expected one of %s)", what,
		       shown(buf, sizeof(buf), text, strlen(text)), hint, expected);
}

static int num_type_field(struct loader *ld, const yaml_node_t *node, const char *key,
			  enum pcm_num_type *type)
{
	static const enum pcm_num_type types[] = { PCM_NUM_UINT, PCM_NUM_INT, PCM_NUM_FLOAT };
	char buf[SHOWN_MAX + 4];
	const char *text = NULL;
	int ret = scalar_text(ld, node, key, &text);

	if (ret)
		return ret;
	for (unsigned i = 0; i < 3; i++) {
		if (strcmp(text, pcm_num_type_name(types[i])) == 0) {
			*type = types[i];
			return 0;
		}
	}
	return diag_at(ld, node_loc(node), key, "unknown type '%s' (expected uint, int or float)",
		       shown(buf, sizeof(buf), text, strlen(text)));
}

static int bool_field(struct loader *ld, const yaml_node_t *node, const char *key, bool *value)
{
	static const char *const trues[] = { "true", "True", "TRUE" };
	static const char *const falses[] = { "false", "False", "FALSE" };
	char buf[SHOWN_MAX + 4];
	const char *text = NULL;
	int ret = scalar_text(ld, node, key, &text);

	if (ret)
		return ret;
	if (pcm_in_list(trues, 3, text) || pcm_in_list(falses, 3, text)) {
		*value = pcm_in_list(trues, 3, text);
		return 0;
	}
	return diag_at(ld, node_loc(node), key, "expected \"true\" or \"false\", found '%s'",
		       shown(buf, sizeof(buf), text, strlen(text)));
}

/* Values --------------------------------------------------------------------- */

static int resolve_name(struct loader *ld, const char *name, size_t len, struct pcm_num *out)
{
	for (unsigned i = 0; i < ld->n_constants; i++) {
		const struct pcm_spec_constant *c = &ld->constants[i];

		if (strlen(c->name) != len || memcmp(c->name, name, len) != 0)
			continue;
		if (ld->const_resolved && !ld->const_resolved[i]) {
			ld->pending_constant = (int)i;
			return -EAGAIN; /* evaluate it first, then come back */
		}
		*out = c->value.num;
		return 0;
	}
	for (unsigned i = 0; ld->fabric && i < ld->fabric->n_entries; i++) {
		const struct pcm_fabric_entry *e = &ld->fabric->entries[i];

		if (strlen(e->name) == len && memcmp(e->name, name, len) == 0) {
			*out = e->value.num;
			return 0;
		}
	}
	return pcm_expr_builtin(name, len, out);
}

static int expr_lookup(void *ctx, const char *name, size_t len, struct pcm_num *out)
{
	struct loader *ld = ctx;
	int ret = resolve_name(ld, name, len, out);

	if (ret == -ENOENT && ld->no_fabric_profile && len > 7 && memcmp(name, "FABRIC_", 7) == 0)
		ld->missed_fabric_name = true;
	return ret;
}

static const char *unknown_name_hint(const struct loader *ld, const char *name)
{
	if (ld->no_fabric_profile && pcm_has_prefix(name, "FABRIC_"))
		return " (no fabric profile was given)";
	return "";
}

/* C text of @len bytes, with line breaks made spaces so it fits on a #define line. */
static char *c_text(const char *text, size_t len, bool parenthesize)
{
	char *s = malloc(len + 3);
	size_t n = 0;

	if (!s)
		return NULL;
	if (parenthesize)
		s[n++] = '(';
	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		s[n++] = (c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\v') ? ' ' : c;
	}
	if (parenthesize)
		s[n++] = ')';
	s[n] = '\0';
	return s;
}

static int eval_value(struct loader *ld, const yaml_node_t *node, const char *key,
		      const char *text, size_t len, struct pcm_num *num)
{
	struct pcm_expr_error err;
	char buf[SHOWN_MAX + 4];
	int ret = pcm_expr_eval(text, len, expr_lookup, ld, num, &err);

	if (ret != -EINVAL)
		return ret;
	return diag_at(ld, node_loc(node), key, "!eval: %s at column %u of \"%s\"%s", err.msg,
		       err.col, shown(buf, sizeof(buf), text, len),
		       ld->missed_fabric_name ? " (no fabric profile was given)" : "");
}

static int plain_value(struct loader *ld, const yaml_node_t *node, const char *key,
		       const char *text, size_t len, struct pcm_num *num)
{
	char buf[SHOWN_MAX + 4];
	int ret;

	if (pcm_is_identifier(text, len)) {
		ret = resolve_name(ld, text, len, num);
		if (ret == -ENOENT)
			return diag_at(ld, node_loc(node), key, "unknown name '%s'%s",
				       shown(buf, sizeof(buf), text, len),
				       unknown_name_hint(ld, text));
		return ret;
	}
	ret = pcm_number_parse(text, len, num);
	if (ret == -EINVAL)
		return diag_at(ld, node_loc(node), key,
			       "bad number '%s' (expected a number, a name or !eval \"<C "
			       "expression>\")",
			       shown(buf, sizeof(buf), text, len));
	if (ret == -ERANGE)
		return diag_at(ld, node_loc(node), key, "number '%s' is out of range",
			       shown(buf, sizeof(buf), text, len));
	return ret;
}

static bool is_negative(const struct pcm_num *num)
{
	return (num->type == PCM_NUM_INT && num->i < 0) ||
	       (num->type == PCM_NUM_FLOAT && num->f < 0);
}

static int convert_value(struct loader *ld, const yaml_node_t *node, const char *key,
			 enum pcm_num_type type, struct pcm_num *num)
{
	char value[48];
	int ret;

	pcm_num_format(num, value, sizeof(value));
	ret = pcm_num_convert(num, type);
	if (ret == -EDOM)
		return diag_at(ld, node_loc(node), key, "value %s is not an integer for type %s",
			       value, pcm_num_type_name(type));
	if (ret == -ERANGE && type == PCM_NUM_UINT && is_negative(num))
		return diag_at(ld, node_loc(node), key, "value %s is negative for type uint",
			       value);
	if (ret == -ERANGE)
		return diag_at(ld, node_loc(node), key, "value %s is out of range for type %s",
			       value, pcm_num_type_name(type));
	return ret;
}

/*
 * A value: a number, a name, or !eval "<C expression>". @want is the type to
 * convert to, or WANT_ANY_TYPE. c_expr is set last, so a failure allocates nothing.
 */
static int value_field(struct loader *ld, const yaml_node_t *node, const char *key, int want,
		       struct pcm_value *out)
{
	bool eval = is_eval_tag(node);
	struct pcm_num num;
	const char *text = NULL;
	size_t len;
	int ret;

	if (node->type != YAML_SCALAR_NODE)
		return diag_at(ld, node_loc(node), key,
			       "expected a number, a name or !eval \"<C expression>\", found %s",
			       node_kind(node));
	text = (const char *)node->data.scalar.value;
	len = node->data.scalar.length;
	if (!eval) {
		ret = check_tag(ld, node, key);
		if (ret)
			return ret;
	}
	if (strlen(text) != len)
		return diag_at(ld, node_loc(node), key, "contains a NUL character");
	if (len > PCM_EXPR_MAX_LEN)
		return diag_at(ld, node_loc(node), key, "value is longer than %d characters",
			       PCM_EXPR_MAX_LEN);
	if (eval)
		ret = eval_value(ld, node, key, text, len, &num);
	else
		ret = plain_value(ld, node, key, text, len, &num);
	if (ret == 0 && want != WANT_ANY_TYPE)
		ret = convert_value(ld, node, key, (enum pcm_num_type)want, &num);
	if (ret)
		return ret;
	/* A signed literal is parenthesized too: "X - -1" must not become "X --1". */
	out->c_expr = c_text(text, len, eval || text[0] == '-' || text[0] == '+');
	if (!out->c_expr)
		return -ENOMEM;
	out->num = num;
	out->loc = node_loc(node);
	return 0;
}

/* An optional value field, or the default "0" of @type at @loc. */
static int value_field_or_zero(struct loader *ld, const struct item *it, unsigned k,
			       enum pcm_num_type type, struct pcm_srcloc loc, struct pcm_value *out)
{
	char key[KEY_MAX];

	if (it->f.value[k]) {
		field_key(key, it->where, it->f.keys[k]);
		return value_field(ld, it->f.value[k], key, (int)type, out);
	}
	out->c_expr = strdup("0");
	if (!out->c_expr)
		return -ENOMEM;
	out->num.type = type;
	out->num.u = 0;
	if (type == PCM_NUM_FLOAT)
		out->num.f = 0.0;
	out->loc = loc;
	return 0;
}

/* Lists ---------------------------------------------------------------------- */

/*
 * A list section, or none (absent or null): check its shape and its length
 * against @limit before anything is allocated for it.
 */
static int open_list(struct loader *ld, const yaml_node_t *node, const char *section,
		     unsigned limit, const char *limit_text, unsigned *count)
{
	size_t n;

	*count = 0;
	if (!node)
		return 0;
	if (node->type != YAML_SEQUENCE_NODE)
		return diag_at(ld, node_loc(node), section, "expected a list, found %s",
			       node_kind(node));
	n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
	if (n > limit) {
		yaml_node_t *extra = get_node(ld, node->data.sequence.items.start[limit]);

		return diag_at(ld, extra ? node_loc(extra) : node_loc(node), section,
			       "%zu %s exceed %s", n, section, limit_text);
	}
	*count = (unsigned)n;
	return 0;
}

static int list_item(struct loader *ld, const yaml_node_t *list, unsigned i, const char *section,
		     yaml_node_t **item)
{
	char key[KEY_MAX];
	yaml_node_t *node = get_node(ld, list->data.sequence.items.start[i]);

	if (!node)
		return diag_at(ld, node_loc(list), section, "malformed YAML list");
	if (node->type != YAML_MAPPING_NODE) {
		item_key(key, section, i);
		return diag_at(ld, node_loc(node), key, "expected a mapping, found %s",
			       node_kind(node));
	}
	*item = node;
	return 0;
}

static void *alloc_items(unsigned count, size_t size, int *ret)
{
	void *items;

	*ret = 0;
	if (count == 0)
		return NULL;
	items = calloc(count, size);
	if (!items)
		*ret = -ENOMEM;
	return items;
}

/*
 * A list section of the spec, a row of sections[] below. parse_section()
 * applies the rules every section shares: the list's shape and limit, each
 * item a mapping of the section's keys, and its errors' "section[i].key"
 * prefix.
 */
struct section {
	const char *name;
	unsigned limit;
	const char *limit_text; /* what "N <name> exceed ..." exceeds */
	const char *const *keys;
	unsigned n_keys;
	size_t item_size;
	/* Optional: before the first item, and after the last (@ret: how the items went). */
	int (*begin)(struct loader *ld, struct pcm_spec *spec);
	int (*end)(struct loader *ld, struct pcm_spec *spec, int ret);
	/* The item's fields, already sorted by key, into @out. */
	int (*parse)(struct loader *ld, const struct item *it, void *out);
};

static int parse_section_item(struct loader *ld, const struct section *s, const yaml_node_t *list,
			      unsigned i, void *out)
{
	struct item it = { .index = i, .f = { .keys = s->keys, .n_keys = s->n_keys } };
	int ret = list_item(ld, list, i, s->name, &it.node);

	if (ret)
		return ret;
	item_key(it.where, s->name, i);
	ret = collect_fields(ld, it.node, it.where, &it.f);
	return ret ? ret : s->parse(ld, &it, out);
}

/* A field of an item that must be present: one of the names of @kind. */
static int required_enum(struct loader *ld, const struct item *it, unsigned k,
			 enum pcm_name_kind kind, const char *what, unsigned *value)
{
	char key[KEY_MAX];
	yaml_node_t *node = NULL;
	int ret = item_field(ld, it, k, key, &node);

	return ret ? ret : enum_field(ld, node, key, kind, what, value);
}

/* The schema: each mapping's keys, in the order "expected ..." lists them. ---- */

enum { ALGO_NAME, ALGO_DESCRIPTION, ALGO_N_FIELDS };
static const char *const algorithm_keys[ALGO_N_FIELDS] = { "name", "description" };

enum { CONST_NAME, CONST_TYPE, CONST_VALUE, CONST_DESCRIPTION, CONST_N_FIELDS };
static const char *const constant_keys[CONST_N_FIELDS] = { "name", "type", "value",
							   "description" };

enum {
	SIG_NAME,
	SIG_TYPE,
	SIG_ACCUM,
	SIG_TRIGGER_TYPE,
	SIG_TRIGGER_OP,
	SIG_THRESHOLD,
	SIG_RESET,
	SIG_INITIAL,
	SIG_DESCRIPTION,
	SIG_N_FIELDS,
};

static const char *const signal_keys[SIG_N_FIELDS] = {
	"name",		  "type",	       "accumulation",	     "trigger_type",
	"trigger_op",	  "trigger_threshold", "reset_upon_trigger", "initial_value",
	"description",
};

enum { CTRL_NAME, CTRL_TYPE, CTRL_INITIAL, CTRL_DESCRIPTION, CTRL_N_FIELDS };
static const char *const control_keys[CTRL_N_FIELDS] = { "name", "type", "initial_value",
							 "description" };

enum { VAR_NAME, VAR_TYPE, VAR_INITIAL, VAR_ARR_LEN, VAR_SCOPE, VAR_DESCRIPTION, VAR_N_FIELDS };
static const char *const variable_keys[VAR_N_FIELDS] = { "name",  "type",	 "initial_value",
							 "arr_len", "scope", "description" };

enum { TOP_ALGORITHM, TOP_CONSTANTS, TOP_SIGNALS, TOP_CONTROLS, TOP_VARIABLES, TOP_N_FIELDS };
static const char *const top_keys[TOP_N_FIELDS] = { "algorithm", "constants", "signals",
						    "controls", "variables" };

/* algorithm ------------------------------------------------------------------ */

static int parse_algorithm(struct loader *ld, const yaml_node_t *root, const struct fields *top,
			   unsigned k, struct pcm_spec *spec)
{
	struct fields f = { .keys = algorithm_keys, .n_keys = ALGO_N_FIELDS };
	yaml_node_t *node = NULL;
	int ret = required_field(ld, root, top, k, "", &node);

	if (ret)
		return ret;
	if (node->type != YAML_MAPPING_NODE)
		return diag_at(ld, node_loc(node), "algorithm",
			       "expected a mapping with name and description, found %s",
			       node_kind(node));
	ret = collect_fields(ld, node, "algorithm", &f);
	if (ret == 0)
		ret = required_field(ld, node, &f, ALGO_NAME, "algorithm", &node);
	if (ret == 0)
		ret = identifier_field(ld, node, "algorithm.name", spec->name);
	if (ret == 0)
		ret = description_field(ld, &f, ALGO_DESCRIPTION, "algorithm", &spec->description);
	return ret;
}

/* constants ------------------------------------------------------------------ */

/* Everything but the value, which may name constants further down. */
static int parse_constant(struct loader *ld, const struct item *it, void *out)
{
	struct pcm_spec_constant *c = out;
	char key[KEY_MAX];
	yaml_node_t *node = NULL;
	int ret;

	c->loc = node_loc(it->node);
	ret = spec_name_field(ld, it, CONST_NAME, c->name);
	if (ret == 0)
		ret = item_field(ld, it, CONST_TYPE, key, &node);
	if (ret == 0)
		ret = num_type_field(ld, node, key, &c->type);
	if (ret == 0)
		ret = description_field(ld, &it->f, CONST_DESCRIPTION, it->where, &c->description);
	if (ret == 0)
		ret = required_field(ld, it->node, &it->f, CONST_VALUE, it->where,
				     &ld->const_value_nodes[it->index]);
	return ret;
}

static int eval_constant(struct loader *ld, struct pcm_spec_constant *c, unsigned i)
{
	char where[KEY_MAX], key[KEY_MAX];

	item_key(where, "constants", i);
	field_key(key, where, "value");
	return value_field(ld, ld->const_value_nodes[i], key, (int)c->type, &c->value);
}

/*
 * Constants that wait on each other: follow what each one waits for from the
 * first of them until a constant repeats, and name the loop.
 */
static int report_cycle(struct loader *ld, const struct pcm_spec *spec)
{
	int seen_at[PCM_SPEC_MAX_CONSTANTS], path[PCM_SPEC_MAX_CONSTANTS];
	char where[KEY_MAX], key[KEY_MAX], names[PCM_DIAG_MAX / 2] = "";
	unsigned n = 0, first, lowest;
	size_t used = 0;
	int cur = 0;

	for (unsigned i = 0; i < spec->n_constants; i++)
		seen_at[i] = -1;
	while (ld->const_resolved[cur])
		cur++;
	while (seen_at[cur] < 0) {
		seen_at[cur] = (int)n;
		path[n++] = cur;
		cur = ld->const_waits_on[cur];
	}
	first = (unsigned)seen_at[cur];
	lowest = (unsigned)path[first];
	for (unsigned k = first; k <= n && used < sizeof(names); k++) {
		int c = k < n ? path[k] : path[first];
		int w = snprintf(names + used, sizeof(names) - used, "%s%s", k > first ? " -> " : "",
				 spec->constants[c].name);

		used += w > 0 ? (size_t)w : 0;
		if (k < n && (unsigned)path[k] < lowest)
			lowest = (unsigned)path[k];
	}
	item_key(where, "constants", lowest);
	field_key(key, where, "value");
	if (n - first == 1)
		return diag_at(ld, node_loc(ld->const_value_nodes[lowest]), key,
			       "constant '%s' refers to itself", spec->constants[lowest].name);
	return diag_at(ld, node_loc(ld->const_value_nodes[lowest]), key,
		       "constants refer to each other in a cycle: %s", names);
}

/*
 * Evaluate the constants in dependency order, as the SDK does: a constant
 * whose value names one not evaluated yet waits for it and is tried again
 * once it is known. Each attempt either succeeds or finds a new constant to
 * wait for, so the work is bounded by the references; what is left at the
 * end waits in a cycle.
 */
static int resolve_constants(struct loader *ld, struct pcm_spec *spec)
{
	unsigned n = spec->n_constants, left = n;
	bool progress = true;
	int ret = 0;

	while (left && progress && ret == 0) {
		progress = false;
		for (unsigned i = 0; i < n && ret == 0; i++) {
			int w = ld->const_waits_on[i];

			if (ld->const_resolved[i] || (w >= 0 && !ld->const_resolved[w]))
				continue;
			ret = eval_constant(ld, &spec->constants[i], i);
			if (ret == -EAGAIN) {
				ld->const_waits_on[i] = ld->pending_constant;
				ret = 0;
			} else if (ret == 0) {
				ld->const_resolved[i] = true;
				left--;
				progress = true;
			}
		}
	}
	if (ret == 0 && left)
		ret = report_cycle(ld, spec);
	return ret;
}

static int alloc_constant_state(struct loader *ld, unsigned n)
{
	ld->const_resolved = calloc(n, sizeof(*ld->const_resolved));
	ld->const_waits_on = malloc(n * sizeof(*ld->const_waits_on));
	ld->const_value_nodes = calloc(n, sizeof(*ld->const_value_nodes));
	if (!ld->const_resolved || !ld->const_waits_on || !ld->const_value_nodes)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		ld->const_waits_on[i] = -1;
	return 0;
}

static void free_constant_state(struct loader *ld)
{
	free(ld->const_resolved);
	free(ld->const_waits_on);
	free(ld->const_value_nodes);
	ld->const_resolved = NULL;
	ld->const_waits_on = NULL;
	ld->const_value_nodes = NULL;
}

static int constants_begin(struct loader *ld, struct pcm_spec *spec)
{
	ld->constants = spec->constants;
	ld->n_constants = spec->n_constants;
	return spec->n_constants ? alloc_constant_state(ld, spec->n_constants) : 0;
}

/* The values, once every constant's name is known. */
static int constants_end(struct loader *ld, struct pcm_spec *spec, int ret)
{
	if (ret == 0)
		ret = resolve_constants(ld, spec);
	free_constant_state(ld);
	return ret;
}

/* signals -------------------------------------------------------------------- */

/* trigger_type, trigger_op and trigger_threshold; a threshold alone means RAW (SDK). */
static int parse_trigger(struct loader *ld, const struct item *it, struct pcm_spec_signal *sig)
{
	const struct fields *f = &it->f;
	char key[KEY_MAX];
	unsigned value = PCM_TRIG_OP_GE;
	int ret = 0;

	sig->trigger = f->value[SIG_THRESHOLD] ? PCM_SIG_TRIGGER_RAW : PCM_SIG_TRIGGER_NONE;
	if (f->value[SIG_TRIGGER_TYPE]) {
		field_key(key, it->where, "trigger_type");
		if (!f->value[SIG_THRESHOLD])
			return diag_at(ld, node_loc(f->value[SIG_TRIGGER_TYPE]), key,
				       "a trigger_type needs a trigger_threshold");
		ret = required_enum(ld, it, SIG_TRIGGER_TYPE, PCM_NAMES_TRIGGER, "trigger type",
				    &value);
		sig->trigger = (pcm_signal_trigger_t)value;
	}
	value = PCM_TRIG_OP_GE;
	if (ret == 0 && f->value[SIG_TRIGGER_OP])
		ret = required_enum(ld, it, SIG_TRIGGER_OP, PCM_NAMES_TRIGGER_OP,
				    "trigger operator", &value);
	sig->op = (pcm_trigger_op_t)value;
	if (ret)
		return ret;
	if (f->value[SIG_THRESHOLD]) {
		field_key(key, it->where, "trigger_threshold");
		ret = value_field(ld, f->value[SIG_THRESHOLD], key, PCM_NUM_UINT,
				  &sig->threshold);
		/* pcm.h: this threshold means "no trigger", whatever the trigger_type. */
		if (ret == 0 && sig->threshold.num.u == PCM_SIG_NO_TRIGGER)
			sig->trigger = PCM_SIG_TRIGGER_NONE;
		return ret;
	}
	sig->threshold.c_expr = strdup("PCM_SIG_NO_TRIGGER");
	if (!sig->threshold.c_expr)
		return -ENOMEM;
	sig->threshold.num.type = PCM_NUM_UINT;
	sig->threshold.num.u = PCM_SIG_NO_TRIGGER;
	sig->threshold.loc = sig->loc;
	return 0;
}

/*
 * MIN keeps the smallest sample, so from 0 it can never change: the SDK's
 * default initial value makes a MIN signal that silently stays 0.
 */
static int check_min_initial(struct loader *ld, const struct item *it,
			     const struct pcm_spec_signal *sig)
{
	unsigned k = it->f.value[SIG_INITIAL] ? SIG_INITIAL : SIG_ACCUM;
	char key[KEY_MAX];

	if (sig->accum != PCM_SIG_ACCUM_MIN || sig->initial.num.u != 0)
		return 0;
	field_key(key, it->where, it->f.keys[k]);
	return diag_at(ld, node_loc(it->f.value[k]), key,
		       "a MIN accumulator starting at 0 never changes; give signal '%s' an "
		       "initial_value above every sample it will see, e.g. 0xFFFFFFFFFFFFFFFF",
		       sig->name);
}

static int parse_signal(struct loader *ld, const struct item *it, void *out)
{
	struct pcm_spec_signal *sig = out;
	char key[KEY_MAX];
	unsigned value;
	int ret;

	sig->loc = node_loc(it->node);
	sig->reset_upon_trigger = true;
	ret = spec_name_field(ld, it, SIG_NAME, sig->name);
	if (ret == 0)
		ret = required_enum(ld, it, SIG_TYPE, PCM_NAMES_SIGNAL, "signal type", &value);
	if (ret)
		return ret;
	sig->type = (pcm_signal_t)value;
	sig->type_loc = node_loc(it->f.value[SIG_TYPE]);
	ret = required_enum(ld, it, SIG_ACCUM, PCM_NAMES_ACCUM, "accumulation", &value);
	if (ret)
		return ret;
	sig->accum = (pcm_signal_accum_t)value;
	ret = parse_trigger(ld, it, sig);
	if (ret == 0 && it->f.value[SIG_RESET]) {
		field_key(key, it->where, "reset_upon_trigger");
		ret = bool_field(ld, it->f.value[SIG_RESET], key, &sig->reset_upon_trigger);
	}
	if (ret == 0)
		ret = value_field_or_zero(ld, it, SIG_INITIAL, PCM_NUM_UINT, sig->loc,
					  &sig->initial);
	if (ret == 0)
		ret = description_field(ld, &it->f, SIG_DESCRIPTION, it->where, &sig->description);
	if (ret == 0)
		ret = check_min_initial(ld, it, sig);
	return ret;
}

/* controls ------------------------------------------------------------------- */

static int parse_control(struct loader *ld, const struct item *it, void *out)
{
	struct pcm_spec_control *ctrl = out;
	unsigned value;
	int ret;

	ctrl->loc = node_loc(it->node);
	ret = spec_name_field(ld, it, CTRL_NAME, ctrl->name);
	if (ret == 0)
		ret = required_enum(ld, it, CTRL_TYPE, PCM_NAMES_CONTROL, "control type", &value);
	if (ret)
		return ret;
	ctrl->type = (pcm_control_t)value;
	ctrl->type_loc = node_loc(it->f.value[CTRL_TYPE]);
	ret = description_field(ld, &it->f, CTRL_DESCRIPTION, it->where, &ctrl->description);
	if (ret)
		return ret;
	return value_field_or_zero(ld, it, CTRL_INITIAL, PCM_NUM_UINT, ctrl->loc, &ctrl->initial);
}

/* variables ------------------------------------------------------------------ */

static int parse_arr_len(struct loader *ld, const yaml_node_t *node, const char *where,
			 uint32_t *arr_len)
{
	struct pcm_value value = { 0 };
	char key[KEY_MAX];
	int ret;

	field_key(key, where, "arr_len");
	ret = value_field(ld, node, key, PCM_NUM_UINT, &value);
	free(value.c_expr);
	if (ret)
		return ret;
	if (value.num.u == 0)
		return diag_at(ld, node_loc(node), key, "an array needs at least 1 slot");
	if (value.num.u > PCM_SPEC_MAX_ARR_LEN)
		return diag_at(ld, node_loc(node), key, "%" PRIu64 " exceeds the limit of %d",
			       value.num.u, PCM_SPEC_MAX_ARR_LEN);
	*arr_len = (uint32_t)value.num.u;
	return 0;
}

/* `scope: flow` (the default, the SDK's only kind) or `scope: instance` (pcm extension). */
static int scope_field(struct loader *ld, const struct item *it, bool *shared)
{
	char buf[SHOWN_MAX + 4];
	char key[KEY_MAX];
	const char *text = NULL;
	int ret;

	if (!it->f.value[VAR_SCOPE])
		return 0;
	field_key(key, it->where, "scope");
	ret = scalar_text(ld, it->f.value[VAR_SCOPE], key, &text);
	if (ret)
		return ret;
	if (strcmp(text, "flow") == 0 || strcmp(text, "instance") == 0) {
		*shared = text[0] == 'i';
		return 0;
	}
	return diag_at(ld, node_loc(it->f.value[VAR_SCOPE]), key,
		       "expected \"flow\" or \"instance\", found '%s'",
		       shown(buf, sizeof(buf), text, strlen(text)));
}

static int parse_variable(struct loader *ld, const struct item *it, void *out)
{
	struct pcm_spec_variable *var = out;
	yaml_node_t *node = NULL, *len_node = it->f.value[VAR_ARR_LEN];
	char key[KEY_MAX];
	int ret;

	var->loc = node_loc(it->node);
	var->arr_len = 1;
	ret = spec_name_field(ld, it, VAR_NAME, var->name);
	if (ret == 0)
		ret = item_field(ld, it, VAR_TYPE, key, &node);
	if (ret == 0)
		ret = num_type_field(ld, node, key, &var->type);
	if (ret == 0 && len_node) {
		var->is_array = true;
		ret = parse_arr_len(ld, len_node, it->where, &var->arr_len);
	}
	if (ret == 0)
		ret = scope_field(ld, it, &var->shared);
	if (ret == 0)
		ret = description_field(ld, &it->f, VAR_DESCRIPTION, it->where, &var->description);
	if (ret)
		return ret;
	var->slot = ld->n_var_slots;
	if (var->arr_len > PCM_SPEC_MAX_VAR_SLOTS - ld->n_var_slots)
		return diag_at(ld, node_loc(len_node ? len_node : it->node), it->where,
			       "variables need %u slots, over the limit of %d",
			       ld->n_var_slots + var->arr_len, PCM_SPEC_MAX_VAR_SLOTS);
	ld->n_var_slots += var->arr_len;
	return value_field_or_zero(ld, it, VAR_INITIAL, var->type, var->loc, &var->initial);
}

static int variables_end(struct loader *ld, struct pcm_spec *spec, int ret)
{
	spec->n_var_slots = ld->n_var_slots;
	return ret;
}

/* The spec ------------------------------------------------------------------- */

/* The list sections by top-level key, in the order they are parsed. */
static const struct section sections[TOP_N_FIELDS] = {
	[TOP_CONSTANTS] = { .name = "constants", .limit = PCM_SPEC_MAX_CONSTANTS,
			    .limit_text = "the limit of " STR(PCM_SPEC_MAX_CONSTANTS),
			    .keys = constant_keys, .n_keys = CONST_N_FIELDS,
			    .item_size = sizeof(struct pcm_spec_constant), .begin = constants_begin,
			    .end = constants_end, .parse = parse_constant },
	[TOP_SIGNALS] = { .name = "signals", .limit = PCM_SPEC_MAX_SIGNALS,
			  .limit_text = "the " STR(PCM_SPEC_MAX_SIGNALS) "-bit trigger mask",
			  .keys = signal_keys, .n_keys = SIG_N_FIELDS,
			  .item_size = sizeof(struct pcm_spec_signal), .parse = parse_signal },
	[TOP_CONTROLS] = { .name = "controls", .limit = PCM_SPEC_MAX_CONTROLS,
			   .limit_text = "the limit of " STR(PCM_SPEC_MAX_CONTROLS),
			   .keys = control_keys, .n_keys = CTRL_N_FIELDS,
			   .item_size = sizeof(struct pcm_spec_control), .parse = parse_control },
	[TOP_VARIABLES] = { .name = "variables", .limit = PCM_SPEC_MAX_VAR_SLOTS,
			    .limit_text = "the limit of " STR(PCM_SPEC_MAX_VAR_SLOTS)
					  " variable slots",
			    .keys = variable_keys, .n_keys = VAR_N_FIELDS,
			    .item_size = sizeof(struct pcm_spec_variable), .end = variables_end,
			    .parse = parse_variable },
};

/* Hand @spec the @n zeroed items of the section under top-level key @k. */
static void publish_items(struct pcm_spec *spec, unsigned k, void *items, unsigned n)
{
	switch (k) {
	case TOP_CONSTANTS:
		spec->constants = items;
		spec->n_constants = n;
		break;
	case TOP_SIGNALS:
		spec->signals = items;
		spec->n_signals = n;
		break;
	case TOP_CONTROLS:
		spec->controls = items;
		spec->n_controls = n;
		break;
	default:
		spec->variables = items;
		spec->n_variables = n;
		break;
	}
}

static int parse_section(struct loader *ld, unsigned k, const yaml_node_t *list,
			 struct pcm_spec *spec)
{
	const struct section *s = &sections[k];
	unsigned n;
	char *items;
	int ret = open_list(ld, list, s->name, s->limit, s->limit_text, &n);

	if (ret)
		return ret;
	items = alloc_items(n, s->item_size, &ret);
	if (ret)
		return ret;
	publish_items(spec, k, items, n);
	if (s->begin)
		ret = s->begin(ld, spec);
	for (unsigned i = 0; i < n && ret == 0; i++)
		ret = parse_section_item(ld, s, list, i, items + i * s->item_size);
	return s->end ? s->end(ld, spec, ret) : ret;
}

static int parse_spec_root(struct loader *ld, void *obj)
{
	struct pcm_spec *spec = obj;
	struct fields f = { .keys = top_keys, .n_keys = TOP_N_FIELDS };
	yaml_node_t *root = yaml_document_get_root_node(&ld->doc);
	struct pcm_srcloc start = { 1, 1 };
	int ret;

	if (!root || is_null(root))
		return diag_at(ld, start, "algorithm", "missing required key (the spec is empty)");
	if (root->type != YAML_MAPPING_NODE)
		return diag_at(ld, node_loc(root), NULL,
			       "expected a mapping with keys algorithm, constants, signals, "
			       "controls and variables, found %s",
			       node_kind(root));
	ret = collect_fields(ld, root, "", &f);
	if (ret == 0)
		ret = parse_algorithm(ld, root, &f, TOP_ALGORITHM, spec);
	for (unsigned k = TOP_CONSTANTS; k < TOP_N_FIELDS && ret == 0; k++)
		ret = parse_section(ld, k, f.value[k], spec);
	return ret;
}

void pcm_spec_free(struct pcm_spec *spec)
{
	if (!spec)
		return;
	for (unsigned i = 0; spec->constants && i < spec->n_constants; i++) {
		free(spec->constants[i].value.c_expr);
		free(spec->constants[i].description);
	}
	for (unsigned i = 0; spec->signals && i < spec->n_signals; i++) {
		free(spec->signals[i].threshold.c_expr);
		free(spec->signals[i].initial.c_expr);
		free(spec->signals[i].description);
	}
	for (unsigned i = 0; spec->controls && i < spec->n_controls; i++) {
		free(spec->controls[i].initial.c_expr);
		free(spec->controls[i].description);
	}
	for (unsigned i = 0; spec->variables && i < spec->n_variables; i++) {
		free(spec->variables[i].initial.c_expr);
		free(spec->variables[i].description);
	}
	free(spec->constants);
	free(spec->signals);
	free(spec->controls);
	free(spec->variables);
	free(spec->description);
	free(spec->path);
	free(spec);
}

/* The fabric profile ------------------------------------------------------------ */

static int fabric_name(struct loader *ld, const yaml_node_t *key_node,
		       const struct pcm_fabric *fabric, const struct pcm_srcloc *key_locs,
		       char name[PCM_NAME_MAX])
{
	char buf[SHOWN_MAX + 4];
	const char *text = NULL;
	struct pcm_srcloc loc = node_loc(key_node);
	int ret = scalar_text(ld, key_node, NULL, &text);

	if (ret)
		return ret;
	shown(buf, sizeof(buf), text, strlen(text));
	if (!pcm_has_prefix(text, "FABRIC_") || !pcm_is_identifier(text, strlen(text)))
		return diag_at(ld, loc, buf, "fabric profile names are C identifiers starting "
					     "with FABRIC_");
	if (strlen(text) >= PCM_NAME_MAX)
		return diag_at(ld, loc, buf, "longer than %d characters", PCM_NAME_MAX - 1);
	for (unsigned i = 0; i < fabric->n_entries; i++) {
		if (strcmp(fabric->entries[i].name, text) == 0)
			return diag_at(ld, loc, buf, "duplicate name (first defined at %u:%u)",
				       key_locs[i].line, key_locs[i].col);
	}
	memcpy(name, text, strlen(text) + 1);
	return 0;
}

static int parse_fabric_root(struct loader *ld, void *obj)
{
	struct pcm_srcloc key_locs[PCM_FABRIC_MAX_ENTRIES];
	yaml_node_t *root = yaml_document_get_root_node(&ld->doc);
	struct pcm_fabric *fabric = obj;
	yaml_node_pair_t *pairs;
	size_t n;

	ld->fabric = fabric; /* its values see the entries before them */

	if (!root || is_null(root))
		return 0;
	if (root->type != YAML_MAPPING_NODE)
		return diag_at(ld, node_loc(root), NULL,
			       "expected a mapping of FABRIC_* names to values, found %s",
			       node_kind(root));
	pairs = root->data.mapping.pairs.start;
	n = (size_t)(root->data.mapping.pairs.top - pairs);
	if (n > PCM_FABRIC_MAX_ENTRIES) {
		yaml_node_t *extra = get_node(ld, pairs[PCM_FABRIC_MAX_ENTRIES].key);

		return diag_at(ld, extra ? node_loc(extra) : node_loc(root), NULL,
			       "%zu entries exceed the limit of %d", n, PCM_FABRIC_MAX_ENTRIES);
	}
	for (size_t i = 0; i < n; i++) {
		struct pcm_fabric_entry *entry = &fabric->entries[fabric->n_entries];
		yaml_node_t *key_node = get_node(ld, pairs[i].key);
		yaml_node_t *value_node = get_node(ld, pairs[i].value);
		int ret;

		if (!key_node || !value_node)
			return diag_at(ld, node_loc(root), NULL, "malformed YAML mapping");
		ret = fabric_name(ld, key_node, fabric, key_locs, entry->name);
		if (ret == 0 && is_null(value_node))
			ret = diag_at(ld, node_loc(key_node), entry->name, "empty value");
		if (ret == 0)
			ret = value_field(ld, value_node, entry->name, WANT_ANY_TYPE,
					  &entry->value);
		if (ret)
			return ret;
		key_locs[fabric->n_entries++] = node_loc(key_node);
	}
	return 0;
}

void pcm_fabric_free(struct pcm_fabric *fabric)
{
	if (!fabric)
		return;
	for (unsigned i = 0; i < fabric->n_entries; i++)
		free(fabric->entries[i].value.c_expr);
	free(fabric->path);
	free(fabric);
}

static void loader_init(struct loader *ld, const char *label, struct pcm_diag *diag)
{
	memset(ld, 0, sizeof(*ld));
	ld->label = label ? label : "<buffer>";
	ld->diag = diag;
	diag->msg[0] = '\0';
}

static int invalid_arguments(struct loader *ld)
{
	snprintf(ld->diag->msg, sizeof(ld->diag->msg), "%s: invalid arguments", ld->label);
	return -EINVAL;
}

static int loader_finish(struct loader *ld, int ret)
{
	if (ld->have_doc)
		yaml_document_delete(&ld->doc);
	free(ld->names);
	if (ret == -ENOMEM && ld->diag->msg[0] == '\0')
		snprintf(ld->diag->msg, sizeof(ld->diag->msg), "%s: out of memory", ld->label);
	return ret;
}

/* Documents ------------------------------------------------------------------ */

static void spec_free(void *obj)
{
	pcm_spec_free(obj);
}

static void fabric_free(void *obj)
{
	pcm_fabric_free(obj);
}

/* What a document is loaded into: a spec or a fabric profile. */
struct doc_type {
	size_t size;
	size_t path_at; /* offsetof its `char *path` */
	bool own_fabric; /* a profile: its values see its own entries, never another profile's */
	int (*parse_root)(struct loader *ld, void *obj);
	void (*free)(void *obj);
};

static const struct doc_type spec_doc = {
	.size = sizeof(struct pcm_spec),
	.path_at = offsetof(struct pcm_spec, path),
	.parse_root = parse_spec_root,
	.free = spec_free,
};

static const struct doc_type fabric_doc = {
	.size = sizeof(struct pcm_fabric),
	.path_at = offsetof(struct pcm_fabric, path),
	.own_fabric = true,
	.parse_root = parse_fabric_root,
	.free = fabric_free,
};

/*
 * @buf as a new document of @type named @name, whose names see @fabric's;
 * *@out is set only when the whole document is valid.
 */
static int parse_document(const char *name, const char *buf, size_t len,
			  const struct doc_type *type, const struct pcm_fabric *fabric, void **out,
			  struct pcm_diag *diag)
{
	struct pcm_diag scratch;
	struct loader ld;
	char **path;
	void *obj;
	int ret;

	loader_init(&ld, name, diag ? diag : &scratch);
	ld.fabric = fabric;
	ld.no_fabric_profile = !type->own_fabric && !fabric;
	if (!out || (!buf && len))
		return invalid_arguments(&ld);
	obj = calloc(1, type->size);
	if (!obj)
		return loader_finish(&ld, -ENOMEM);
	path = (char **)((char *)obj + type->path_at);
	*path = strdup(ld.label);
	ret = *path ? yaml_load(&ld, buf ? buf : "", len) : -ENOMEM;
	if (ret == 0)
		ret = type->parse_root(&ld, obj);
	ret = loader_finish(&ld, ret);
	if (ret) {
		type->free(obj);
		return ret;
	}
	*out = obj;
	return 0;
}

int pcm_spec_parse(const char *name, const char *buf, size_t len, const struct pcm_fabric *fabric,
		   struct pcm_spec **out, struct pcm_diag *diag)
{
	void *spec;
	int ret = parse_document(name, buf, len, &spec_doc, fabric, out ? &spec : NULL, diag);

	if (ret == 0)
		*out = spec;
	return ret;
}

int pcm_fabric_parse(const char *name, const char *buf, size_t len, struct pcm_fabric **out,
		     struct pcm_diag *diag)
{
	void *fabric;
	int ret = parse_document(name, buf, len, &fabric_doc, NULL, out ? &fabric : NULL, diag);

	if (ret == 0)
		*out = fabric;
	return ret;
}

/* Files ---------------------------------------------------------------------- */

/* The file's real size, not what was read of it: reading stops past the limit. */
static int too_large(int fd, const char *path, size_t read_bytes, struct pcm_diag *diag)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uintmax_t)st.st_size >= read_bytes)
		snprintf(diag->msg, sizeof(diag->msg),
			 "%s:1:1: the file is %jd bytes, over the limit of 1 MiB (%u bytes)", path,
			 (intmax_t)st.st_size, MAX_FILE_BYTES);
	else
		snprintf(diag->msg, sizeof(diag->msg),
			 "%s:1:1: the input is over the limit of 1 MiB (%u bytes)", path,
			 MAX_FILE_BYTES);
	return -EINVAL;
}

/* Reads at most MAX_FILE_BYTES + 1 bytes, enough to tell that a file is too large. */
static int read_file(const char *path, char **text, size_t *len, struct pcm_diag *diag)
{
	size_t cap = 64 * 1024, used = 0;
	char *buf = NULL, errbuf[128];
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(diag->msg, sizeof(diag->msg), "cannot open '%s': %s", path,
			 strerror_r(-ret, errbuf, sizeof(errbuf)));
		return ret;
	}
	buf = malloc(cap);
	if (!buf)
		ret = -ENOMEM;
	while (ret == 0) {
		ssize_t n;

		if (used == cap) {
			char *bigger = realloc(buf, 2 * cap);

			if (!bigger) {
				ret = -ENOMEM;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(diag->msg, sizeof(diag->msg), "cannot read '%s': %s", path,
				 strerror_r(-ret, errbuf, sizeof(errbuf)));
			break;
		}
		used += (size_t)n;
		if (n == 0 || used > MAX_FILE_BYTES)
			break;
	}
	if (ret == 0 && used > MAX_FILE_BYTES)
		ret = too_large(fd, path, used, diag);
	close(fd);
	if (ret == -ENOMEM)
		snprintf(diag->msg, sizeof(diag->msg), "cannot read '%s': out of memory", path);
	if (ret) {
		free(buf);
		return ret;
	}
	*text = buf;
	*len = used;
	return 0;
}

/* The file at @path as a document of @type (see parse_document()). */
static int load_document(const char *path, const struct doc_type *type,
			 const struct pcm_fabric *fabric, void **out, struct pcm_diag *diag)
{
	struct pcm_diag scratch;
	char *text = NULL;
	size_t len = 0;
	int ret;

	if (!diag)
		diag = &scratch;
	if (!path || !out) {
		snprintf(diag->msg, sizeof(diag->msg), "invalid arguments");
		return -EINVAL;
	}
	ret = read_file(path, &text, &len, diag);
	if (ret)
		return ret;
	ret = parse_document(path, text, len, type, fabric, out, diag);
	free(text);
	return ret;
}

int pcm_spec_load(const char *path, const struct pcm_fabric *fabric, struct pcm_spec **out,
		  struct pcm_diag *diag)
{
	void *spec;
	int ret = load_document(path, &spec_doc, fabric, out ? &spec : NULL, diag);

	if (ret == 0)
		*out = spec;
	return ret;
}

int pcm_fabric_load(const char *path, struct pcm_fabric **out, struct pcm_diag *diag)
{
	void *fabric;
	int ret = load_document(path, &fabric_doc, NULL, out ? &fabric : NULL, diag);

	if (ret == 0)
		*out = fabric;
	return ret;
}
