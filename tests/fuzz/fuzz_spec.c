// SPDX-License-Identifier: MIT
/*
 * fuzz_spec.c - libFuzzer target for pcm_spec_parse(), pcm_fabric_parse() and
 * the !eval expression evaluator.
 *
 * Each input is parsed as a fabric profile, as a spec against a fixed profile
 * and against the input's own profile (or none when it does not parse), and
 * as a bare expression. Besides the sanitizers, the oracles are the loader's contract:
 * a failure returns -EINVAL or -ENOMEM, leaves the out pointer alone and
 * starts its message with the buffer's name; a success yields a spec whose
 * limits, enum values, slot layout and value types all hold, whose names are
 * not reserved, and whose generated header and unit keep every string
 * literal and comment on its line, closed, and free of trigraphs: spec text
 * never becomes code.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../libpcm/expr.h"
#include "pcm/codegen.h"
#include "pcm/spec.h"

#define NAME "fuzz.yaml"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char default_fabric_yaml[] = "FABRIC_LINK_RATE_GBPS: 100\n"
					  "FABRIC_HOP_COUNT: 6\n"
					  "FABRIC_LINK_MSS: 4096\n"
					  "FABRIC_LINK_MTU: 4150\n"
					  "FABRIC_BDP: 175284\n"
					  "FABRIC_MIN_CWND: 4150\n"
					  "FABRIC_MAX_CWND: 262926\n"
					  "FABRIC_TRTT: 24539760\n"
					  "FABRIC_BRTT: 14022720\n";

static struct pcm_fabric *default_fabric;

static void require(bool ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct pcm_diag diag;

	(void)argc;
	(void)argv;
	require(pcm_fabric_parse("default", default_fabric_yaml, strlen(default_fabric_yaml),
				 &default_fabric, &diag) == 0);
	return 0;
}

static void check_failure(int ret, const void *out, const void *sentinel,
			  const struct pcm_diag *diag)
{
	require(ret == -EINVAL || ret == -ENOMEM);
	require(out == sentinel);
	require(strncmp(diag->msg, NAME ":", strlen(NAME ":")) == 0);
	require(memchr(diag->msg, '\0', sizeof(diag->msg)) != NULL);
}

static void check_name(const char *name)
{
	size_t len = strnlen(name, PCM_NAME_MAX);

	require(len > 0 && len < PCM_NAME_MAX);
	require(pcm_is_identifier(name, len));
}

static void check_spec_name(const char *name)
{
	char why[160];

	check_name(name);
	require(!pcm_name_is_reserved(name, why, sizeof(why)));
}

static void check_value(const struct pcm_value *value, enum pcm_num_type type)
{
	require(value->c_expr != NULL);
	require(value->num.type == type);
	require(value->loc.line >= 1 && value->loc.col >= 1);
}

static void check_signal(const struct pcm_spec_signal *s)
{
	check_spec_name(s->name);
	require(pcm_signal_name(s->type) != NULL);
	require(pcm_accum_name(s->accum) != NULL);
	require(pcm_trigger_name(s->trigger) != NULL);
	require(pcm_trigger_op_text(s->op) != NULL);
	check_value(&s->threshold, PCM_NUM_UINT);
	check_value(&s->initial, PCM_NUM_UINT);
}

static void check_spec(const struct pcm_spec *spec)
{
	uint32_t slots = 0;

	check_name(spec->name);
	require(spec->n_constants <= PCM_SPEC_MAX_CONSTANTS);
	require(spec->n_signals <= PCM_SPEC_MAX_SIGNALS);
	require(spec->n_controls <= PCM_SPEC_MAX_CONTROLS);
	for (unsigned i = 0; i < spec->n_constants; i++) {
		check_spec_name(spec->constants[i].name);
		check_value(&spec->constants[i].value, spec->constants[i].type);
	}
	for (unsigned i = 0; i < spec->n_signals; i++)
		check_signal(&spec->signals[i]);
	for (unsigned i = 0; i < spec->n_controls; i++) {
		check_spec_name(spec->controls[i].name);
		require(pcm_control_name(spec->controls[i].type) != NULL);
		check_value(&spec->controls[i].initial, PCM_NUM_UINT);
	}
	for (unsigned i = 0; i < spec->n_variables; i++) {
		const struct pcm_spec_variable *v = &spec->variables[i];

		check_spec_name(v->name);
		check_value(&v->initial, v->type);
		require(v->arr_len >= 1 && v->arr_len <= PCM_SPEC_MAX_ARR_LEN);
		require(v->slot == slots);
		slots += v->arr_len;
	}
	require(slots == spec->n_var_slots && slots <= PCM_SPEC_MAX_VAR_SLOTS);
}

/*
 * A lexer over generated C just good enough for the oracle: string and
 * character literals and comments open and close on one line, and no "??"
 * (a trigraph's start) appears inside a literal.
 */
static void check_generated_c(const char *text, size_t len)
{
	enum { CODE, STRING, CHAR, COMMENT } state = CODE;

	for (size_t i = 0; i < len; i++) {
		char c = text[i], next = i + 1 < len ? text[i + 1] : '\0';

		require(c != '\0');
		switch (state) {
		case CODE:
			if (c == '"')
				state = STRING;
			else if (c == '\'')
				state = CHAR;
			else if (c == '/' && next == '*') {
				state = COMMENT;
				i++;
			}
			break;
		case STRING:
		case CHAR:
			require(c != '\n' && !(c == '?' && next == '?'));
			if (c == '\\')
				i++;
			else if ((state == STRING && c == '"') || (state == CHAR && c == '\''))
				state = CODE;
			break;
		case COMMENT:
			require(c != '\n');
			if (c == '*' && next == '/') {
				state = CODE;
				i++;
			}
			break;
		}
	}
	require(state == CODE);
}

static void fuzz_codegen(const struct pcm_spec *spec, const struct pcm_fabric *fabric)
{
	struct pcm_codegen_opts opts = {
		.symbol = "pcm_pkg_fuzz",
		.export_entry = true,
		.handler_path = "handler.c",
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	for (int unit = 0; unit < 2; unit++) {
		f = open_memstream(&text, &len);
		require(f != NULL);
		ret = unit ? pcm_codegen_unit(spec, &opts, f) : pcm_codegen_header(spec, fabric,
										   &opts, f);
		require(fclose(f) == 0);
		require(ret == 0);
		check_generated_c(text, len);
		free(text);
		text = NULL;
	}
}

static void fuzz_spec(const char *buf, size_t len, const struct pcm_fabric *fabric)
{
	struct pcm_spec sentinel, *spec = &sentinel;
	struct pcm_diag diag;
	int ret = pcm_spec_parse(NAME, buf, len, fabric, &spec, &diag);

	if (ret) {
		check_failure(ret, spec, &sentinel, &diag);
		return;
	}
	check_spec(spec);
	fuzz_codegen(spec, fabric);
	pcm_spec_free(spec);
}

static int fabric_lookup(void *ctx, const char *name, size_t len, struct pcm_num *out)
{
	const struct pcm_fabric *fabric = ctx;

	for (unsigned i = 0; i < fabric->n_entries; i++) {
		if (strlen(fabric->entries[i].name) == len &&
		    memcmp(fabric->entries[i].name, name, len) == 0) {
			*out = fabric->entries[i].value.num;
			return 0;
		}
	}
	return pcm_expr_builtin(name, len, out);
}

static void fuzz_expr(const char *buf, size_t len)
{
	struct pcm_expr_error err;
	struct pcm_num num;
	int ret;

	if (len > PCM_EXPR_MAX_LEN)
		len = PCM_EXPR_MAX_LEN;
	ret = pcm_expr_eval(buf, len, fabric_lookup, default_fabric, &num, &err);
	require(ret == 0 || ret == -EINVAL || ret == -ENOMEM);
	if (ret == -EINVAL)
		require(err.col >= 1 && err.col <= len + 1 && err.msg[0] != '\0');
	if (ret == 0 && num.type == PCM_NUM_FLOAT)
		require(num.f - num.f == 0); /* finite */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct pcm_fabric sentinel, *fabric = &sentinel;
	struct pcm_diag diag;
	int ret;

	ret = pcm_fabric_parse(NAME, buf, size, &fabric, &diag);
	if (ret) {
		check_failure(ret, fabric, &sentinel, &diag);
		fabric = NULL;
	} else {
		for (unsigned i = 0; i < fabric->n_entries; i++) {
			check_name(fabric->entries[i].name);
			require(fabric->entries[i].value.c_expr != NULL);
		}
	}
	fuzz_spec(buf, size, default_fabric);
	fuzz_spec(buf, size, fabric); /* the input's own profile, or none */
	pcm_fabric_free(fabric);
	fuzz_expr(buf, size);
	return 0;
}
