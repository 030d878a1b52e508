// SPDX-License-Identifier: MIT
/*
 * names.c - the spellings of pcm.h's enums as they appear in specs and in
 * generated code, both ways: enum value to name for messages and headers,
 * name to enum value for the spec loader, with a "did you mean" helper; and
 * which names a spec may not take.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "pcm/spec.h"
#include "reserved.h"

static const char *const signal_names[PCM_SIG_COUNT] = {
	[PCM_SIG_ACK] = "PCM_SIG_ACK",
	[PCM_SIG_RTO] = "PCM_SIG_RTO",
	[PCM_SIG_NACK] = "PCM_SIG_NACK",
	[PCM_SIG_ECN] = "PCM_SIG_ECN",
	[PCM_SIG_RTT] = "PCM_SIG_RTT",
	[PCM_SIG_DATA_TX] = "PCM_SIG_DATA_TX",
	[PCM_SIG_DATA_NACKED] = "PCM_SIG_DATA_NACKED",
	[PCM_SIG_IN_FLIGHT] = "PCM_SIG_IN_FLIGHT",
	[PCM_SIG_ELAPSED_TIME] = "PCM_SIG_ELAPSED_TIME",
	[PCM_SIG_ACK_EV] = "PCM_SIG_ACK_EV",
	[PCM_SIG_ECN_EV] = "PCM_SIG_ECN_EV",
	[PCM_SIG_NACK_EV] = "PCM_SIG_NACK_EV",
	[PCM_SIG_TX_READY_PKTS] = "PCM_SIG_TX_READY_PKTS",
	[PCM_SIG_TX_BACKLOG_BYTES] = "PCM_SIG_TX_BACKLOG_BYTES",
	[PCM_SIG_CNP] = "PCM_SIG_CNP",
	[PCM_SIG_TX_EVENT] = "PCM_SIG_TX_EVENT",
	[PCM_SIG_CREDIT_REQUEST] = "PCM_SIG_CREDIT_REQUEST",
	[PCM_SIG_QUEUE_DELAY] = "PCM_SIG_QUEUE_DELAY",
	[PCM_SIG_FLOW_SEED] = "PCM_SIG_FLOW_SEED",
	[PCM_SIG_BASE_RTT] = "PCM_SIG_BASE_RTT",
};

static const char *const control_names[PCM_CTRL_COUNT] = {
	[PCM_CTRL_CWND] = "PCM_CTRL_CWND",
	[PCM_CTRL_RATE] = "PCM_CTRL_RATE",
	[PCM_CTRL_EV] = "PCM_CTRL_EV",
	[PCM_CTRL_CUMULATIVE_CREDIT] = "PCM_CTRL_CUMULATIVE_CREDIT",
};

static const char *const accum_names[PCM_SIG_ACCUM_COUNT] = {
	[PCM_SIG_ACCUM_SUM] = "PCM_SIG_ACCUM_SUM",
	[PCM_SIG_ACCUM_MIN] = "PCM_SIG_ACCUM_MIN",
	[PCM_SIG_ACCUM_MAX] = "PCM_SIG_ACCUM_MAX",
	[PCM_SIG_ACCUM_LAST] = "PCM_SIG_ACCUM_LAST",
};

static const char *const trigger_names[PCM_SIG_TRIGGER_NONE + 1] = {
	[PCM_SIG_TRIGGER_RAW] = "PCM_SIG_TRIGGER_RAW",
	[PCM_SIG_TRIGGER_DELTA] = "PCM_SIG_TRIGGER_DELTA",
	[PCM_SIG_TRIGGER_MAGNITUDE] = "PCM_SIG_TRIGGER_MAGNITUDE",
	[PCM_SIG_TRIGGER_NONE] = "PCM_SIG_TRIGGER_NONE",
};

static const char *const trigger_op_texts[PCM_TRIG_OP_COUNT] = {
	[PCM_TRIG_OP_GT] = ">",	      [PCM_TRIG_OP_LT] = "<",	   [PCM_TRIG_OP_GE] = ">=",
	[PCM_TRIG_OP_LE] = "<=",      [PCM_TRIG_OP_EQ] = "==",	   [PCM_TRIG_OP_NE] = "!=",
	[PCM_TRIG_OP_BIT_AND] = "&",  [PCM_TRIG_OP_BIT_OR] = "|",  [PCM_TRIG_OP_BIT_XOR] = "^",
	[PCM_TRIG_OP_AND] = "&&",     [PCM_TRIG_OP_OR] = "||",
};

struct name_table {
	const char *const *names;
	unsigned n_spellings; /* how many of @names a spec may use */
};

static const struct name_table tables[] = {
	[PCM_NAMES_SIGNAL] = { signal_names, PCM_SIG_COUNT },
	[PCM_NAMES_CONTROL] = { control_names, PCM_CTRL_COUNT },
	[PCM_NAMES_ACCUM] = { accum_names, PCM_SIG_ACCUM_COUNT },
	[PCM_NAMES_TRIGGER] = { trigger_names, PCM_SIG_TRIGGER_NONE },
	[PCM_NAMES_TRIGGER_OP] = { trigger_op_texts, PCM_TRIG_OP_COUNT },
};

const char *pcm_signal_name(pcm_signal_t type)
{
	if ((unsigned)type >= PCM_SIG_COUNT)
		return NULL;
	return signal_names[type];
}

const char *pcm_control_name(pcm_control_t type)
{
	if ((unsigned)type >= PCM_CTRL_COUNT)
		return NULL;
	return control_names[type];
}

const char *pcm_accum_name(pcm_signal_accum_t accum)
{
	if ((unsigned)accum >= PCM_SIG_ACCUM_COUNT)
		return NULL;
	return accum_names[accum];
}

const char *pcm_trigger_name(pcm_signal_trigger_t trigger)
{
	if ((unsigned)trigger > PCM_SIG_TRIGGER_NONE)
		return NULL;
	return trigger_names[trigger];
}

const char *pcm_trigger_op_text(pcm_trigger_op_t op)
{
	if ((unsigned)op >= PCM_TRIG_OP_COUNT)
		return NULL;
	return trigger_op_texts[op];
}

int pcm_name_lookup(enum pcm_name_kind kind, const char *text, unsigned *value)
{
	const struct name_table *table = &tables[kind];

	for (unsigned i = 0; i < table->n_spellings; i++) {
		if (strcmp(table->names[i], text) == 0) {
			*value = i;
			return 0;
		}
	}
	return -ENOENT;
}

#define SUGGEST_MAX_LEN 40

/*
 * Edit distance counting a swap of two neighbours as one edit (optimal string
 * alignment), so "=>" is one edit from ">=". Both strings are at most
 * SUGGEST_MAX_LEN long.
 */
static unsigned edit_distance(const char *a, size_t len_a, const char *b, size_t len_b)
{
	unsigned rows[3][SUGGEST_MAX_LEN + 1];

	for (size_t j = 0; j <= len_b; j++)
		rows[0][j] = (unsigned)j;
	for (size_t i = 1; i <= len_a; i++) {
		unsigned *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *prev2 = rows[(i + 1) % 3];

		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= len_b; j++) {
			unsigned best = MIN(prev[j] + 1, cur[j - 1] + 1);

			best = MIN(best, prev[j - 1] + (a[i - 1] != b[j - 1]));
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
				best = MIN(best, prev2[j - 2] + 1);
			cur[j] = best;
		}
	}
	return rows[len_a % 3][len_b];
}

const char *pcm_closest_spelling(const char *const *spellings, unsigned n, const char *text)
{
	size_t len = strlen(text);
	const char *best = NULL;
	unsigned best_distance = 3; /* suggest only up to two edits away */
	bool best_same_len = false;

	if (len > SUGGEST_MAX_LEN)
		return NULL;
	for (unsigned i = 0; i < n; i++) {
		size_t candidate_len = strlen(spellings[i]);
		unsigned d;
		bool same_len = candidate_len == len;

		if (candidate_len > SUGGEST_MAX_LEN)
			continue;
		d = edit_distance(text, len, spellings[i], candidate_len);
		/* On a tie, a swap beats an insertion or a deletion. */
		if (d < len && (d < best_distance || (d == best_distance && same_len &&
						       !best_same_len))) {
			best = spellings[i];
			best_distance = d;
			best_same_len = same_len;
		}
	}
	return best;
}

const char *pcm_name_closest(enum pcm_name_kind kind, const char *text)
{
	return pcm_closest_spelling(tables[kind].names, tables[kind].n_spellings, text);
}

void pcm_name_list(enum pcm_name_kind kind, char *buf, size_t size)
{
	const struct name_table *table = &tables[kind];
	size_t used = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	for (unsigned i = 0; i < table->n_spellings && used < size; i++) {
		int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", table->names[i]);

		if (n < 0)
			return;
		used += (size_t)n;
	}
}

/* Reserved names ------------------------------------------------------------- */

/* C's keywords through C23; the reserved table adds the library's names. */
static const char *const c_keywords[] = {
	"alignas",  "alignof",	"asm",	    "auto",	"bool",	     "break",
	"case",	    "char",	"const",    "constexpr", "continue", "default",
	"do",	    "double",	"else",	    "enum",	"extern",    "false",
	"float",    "for",	"goto",	    "if",	"inline",    "int",
	"long",	    "nullptr",	"register", "restrict", "return",    "short",
	"signed",   "sizeof",	"static",   "static_assert", "struct", "switch",
	"thread_local", "true", "typedef",  "typeof",	"typeof_unqual", "union",
	"unsigned", "void",	"volatile", "while",
};

/*
 * Names the handler API expands to, the generated header defines or pcmc
 * passes with -D: not macros of pcm's headers, so not in the reserved table.
 */
static const char *const api_names[] = {
	"CONTROL_OFFSET", "HANDLER_BUILD", "MASK_OFFSET", "SET_SIGNAL_MASK_OFFSET",
	"SIGNAL_OFFSET",  "VAR_OFFSET",
	"snapshot", /* what every accessor reads: ALGO_CTX_ARGS's parameter */
};

bool pcm_in_list(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i], name) == 0)
			return true;
	}
	return false;
}

bool pcm_has_prefix(const char *name, const char *prefix)
{
	return strncmp(name, prefix, strlen(prefix)) == 0;
}

/* Rules on the name's shape, or NULL. */
static const char *prefix_reason(const char *name)
{
	if (pcm_has_prefix(name, "FABRIC_"))
		return "names starting with FABRIC_ belong to the fabric profile";
	if (pcm_has_prefix(name, "PCM_") || pcm_has_prefix(name, "pcm_"))
		return "names starting with PCM_ or pcm_ belong to pcm";
	if (pcm_has_prefix(name, "BUILD_ALGO_"))
		return "pcmc defines BUILD_ALGO_<ALGORITHM> for the package, as the SDK's build does";
	if (name[0] == '_')
		return "C reserves identifiers that start with '_' at file scope";
	return NULL;
}

static int compare_reserved(const void *key, const void *entry)
{
	return strcmp(key, ((const struct pcm_reserved_name *)entry)->name);
}

bool pcm_name_is_reserved(const char *name, char *why, size_t size)
{
	const char *rule = prefix_reason(name);
	const struct pcm_reserved_name *hit;

	if (rule) {
		snprintf(why, size, "%s", rule);
		return true;
	}
	if (pcm_in_list(c_keywords, sizeof(c_keywords) / sizeof(c_keywords[0]), name)) {
		snprintf(why, size, "it is a C keyword");
		return true;
	}
	if (pcm_in_list(api_names, sizeof(api_names) / sizeof(api_names[0]), name)) {
		snprintf(why, size, "it is a name of the handler API");
		return true;
	}
	hit = bsearch(name, pcm_reserved_names, pcm_reserved_names_count,
		      sizeof(pcm_reserved_names[0]), compare_reserved);
	if (!hit)
		return false;
	snprintf(why, size, "%s %s", pcm_reserved_origins[hit->origin],
		 hit->macro ? "defines it as a macro" : "declares or uses it");
	return true;
}
