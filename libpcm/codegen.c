// SPDX-License-Identifier: MIT
/*
 * codegen.c - emit a package's accessor header and its specialised pipeline.
 *
 * The pipeline is written out per signal with every constant folded: which
 * event bit feeds which slot, which accumulator, which trigger and threshold,
 * which signals reset after a call. The compiler then sees straight-line
 * functions with the handler inlined into them, which is what lets a
 * portable handler cost about what a hand-written one does. Both shells run
 * these functions (package.h): the rules of accumulation, triggers, reset
 * and re-arm are each written once, below.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "codegen.h"
#include "package.h"

struct layout {
	unsigned sig_off;
	unsigned ctrl_off;
	unsigned var_off;
	unsigned handler_slots;
	unsigned record_slots;
	int ref_slot[PCM_SPEC_MAX_SIGNALS];   /* DELTA/MAGNITUDE reference, or -1 */
	int epoch_slot[PCM_SPEC_MAX_SIGNALS]; /* ELAPSED_TIME epoch, or -1 */
	unsigned shared_slots;                /* instance variables' slots (package.h) */
	int shared_ref;                       /* record slot of their area's address, or -1 */
	/* the asynchronous shell's shared memory (package.h) */
	unsigned window_slots;
	unsigned pub_slots;
	int win_slot[PCM_SPEC_MAX_SIGNALS];  /* window slot, or -1 for ELAPSED_TIME */
	int pub_value[PCM_SPEC_MAX_SIGNALS]; /* published value of a triggered signal, or -1 */
	int pub_ref[PCM_SPEC_MAX_SIGNALS];   /* published trigger reference, or -1 */
	int pub_epoch[PCM_SPEC_MAX_SIGNALS]; /* published epoch of a triggered timer, or -1 */
};

static const char *const arith_names[PCM_ARITH_KIND_COUNT] = {
	"double", "q16.16", "q32.32", "q42.22",
};

static const char *const arith_macros[PCM_ARITH_KIND_COUNT] = {
	"PCM_ARITH_DOUBLE", "PCM_ARITH_Q16_16", "PCM_ARITH_Q32_32", "PCM_ARITH_Q42_22",
};

int pcm_arith_parse(const char *name, enum pcm_arith *out)
{
	for (int i = 0; i < PCM_ARITH_KIND_COUNT; i++) {
		if (strcmp(name, arith_names[i]) == 0) {
			*out = (enum pcm_arith)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *pcm_arith_name(enum pcm_arith arith)
{
	return (unsigned)arith < PCM_ARITH_KIND_COUNT ? arith_names[arith] : NULL;
}

const char *pcm_arith_macro(enum pcm_arith arith)
{
	return (unsigned)arith < PCM_ARITH_KIND_COUNT ? arith_macros[arith] : NULL;
}

static bool has_reference(const struct pcm_spec_signal *s)
{
	return s->trigger == PCM_SIG_TRIGGER_DELTA || s->trigger == PCM_SIG_TRIGGER_MAGNITUDE;
}

static void compute_layout(const struct pcm_spec *spec, struct layout *l)
{
	unsigned next;

	l->sig_off = PCM_REC_SIGNALS_SLOT;
	l->ctrl_off = l->sig_off + spec->n_signals;
	l->var_off = l->ctrl_off + spec->n_controls;
	l->handler_slots = l->var_off + spec->n_var_slots;
	next = l->handler_slots;
	for (unsigned i = 0; i < spec->n_signals; i++) {
		const struct pcm_spec_signal *s = &spec->signals[i];

		l->ref_slot[i] = has_reference(s) ? (int)next++ : -1;
		l->epoch_slot[i] = s->type == PCM_SIG_ELAPSED_TIME ? (int)next++ : -1;
	}
	l->shared_slots = 0;
	for (unsigned i = 0; i < spec->n_variables; i++)
		l->shared_slots += spec->variables[i].shared ? spec->variables[i].arr_len : 0;
	l->shared_ref = l->shared_slots ? (int)next++ : -1;
	l->record_slots = next;
}

/*
 * Spec text in generated C ---------------------------------------------------
 *
 * A spec is input and the unit is code: nothing from the spec reaches the C
 * unescaped. Numbers are emitted as the loader's values, never as the spec's
 * expression text; names are C identifiers checked by the loader; other text
 * goes into string literals through pcm_codegen_write_c_string() or, in comments, through
 * emit_comment_text().
 */

/* Characters a string literal may carry as they are: no '?' (trigraphs), '"' or '\'. */
static bool string_safe(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr(" _-.,:;/+=()[]{}<>@#%^&*!~|'$", c) != NULL);
}

void pcm_codegen_write_c_string(FILE *out, const char *text)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++) {
		if (string_safe(*p))
			fputc(*p, out);
		else
			fprintf(out, "\\%03o", *p);
	}
	fputc('"', out);
}

/* The last component of @path with every unusual character made '_': comment-safe. */
static void emit_comment_text(FILE *out, const char *path)
{
	const char *base = strrchr(path, '/');

	for (const unsigned char *p = (const unsigned char *)(base ? base + 1 : path); *p; p++)
		fputc(isalnum(*p) || *p == '.' || *p == '-' || *p == '_' ? *p : '_', out);
}

/* A value as a typed C constant; -ERANGE for a float C cannot write (inf, nan). */
static int emit_num(FILE *out, const struct pcm_num *num)
{
	switch (num->type) {
	case PCM_NUM_UINT:
		fprintf(out, "((pcm_uint)UINT64_C(%" PRIu64 "))", num->u);
		return 0;
	case PCM_NUM_INT:
		if (num->i == INT64_MIN)
			fputs("((pcm_int)(-INT64_C(9223372036854775807) - 1))", out);
		else
			fprintf(out, "((pcm_int)INT64_C(%" PRId64 "))", num->i);
		return 0;
	case PCM_NUM_FLOAT:
		break;
	}
	if (!isfinite(num->f))
		return -ERANGE;
	/* 17 significant digits give the same double back. */
	fprintf(out, "((pcm_float)%.17g)", num->f);
	return 0;
}

static int emit_header_constants(const struct pcm_spec *spec, const struct pcm_fabric *fabric,
				 FILE *out)
{
	int ret = 0;

	fputs("/* Fabric profile */\n", out);
	for (unsigned i = 0; fabric && i < fabric->n_entries && ret == 0; i++) {
		const struct pcm_fabric_entry *e = &fabric->entries[i];

		fprintf(out, "#ifndef %s\n#define %s ", e->name, e->name);
		ret = emit_num(out, &e->value.num);
		fputs("\n#endif\n", out);
	}
	fputs("\n/* Constants */\n", out);
	for (unsigned i = 0; i < spec->n_constants && ret == 0; i++) {
		fprintf(out, "#define %s ", spec->constants[i].name);
		ret = emit_num(out, &spec->constants[i].value.num);
		fputc('\n', out);
	}
	return ret;
}

/*
 * The accessor families of pcmh.h: get_signal(N) pastes N onto "pcm_sig_", and
 * so on. A name is defined for its own family; for every other family it is
 * a PCM_NAME_MIXUP() that says what the name is and which accessors it takes.
 */
enum family { FAM_SIG, FAM_CTL, FAM_VAR_U, FAM_VAR_I, FAM_VAR_F, FAM_ARR_U, FAM_COUNT };

static const char *const family_prefix[FAM_COUNT] = {
	"pcm_sig_", "pcm_ctl_", "pcm_var_u_", "pcm_var_i_", "pcm_var_f_", "pcm_arr_u_",
};

/* What a name of each kind is, and the accessors it takes. */
struct kind {
	int family; /* -1: no accessor family (constants, int and float arrays) */
	const char *what;
	const char *use;
};

static const struct kind kind_constant = { -1, "a constant",
					   "a constant is used by its name, without an accessor" };
static const struct kind kind_signal = { FAM_SIG, "a signal",
					 "use get_signal(), set_signal() or update_signal()" };
static const struct kind kind_control = { FAM_CTL, "a control",
					  "use get_control() or set_control()" };
static const struct kind kind_var[3] = {
	[PCM_NUM_UINT] = { FAM_VAR_U, "a uint variable",
			   "use get_var(), get_var_uint(), set_var_uint(), get_var_fx() or "
			   "set_var_fx()" },
	[PCM_NUM_INT] = { FAM_VAR_I, "an int variable", "use get_var_int() or set_var_int()" },
	[PCM_NUM_FLOAT] = { FAM_VAR_F, "a float variable",
			    "use get_var_float() or set_var_float()" },
};
static const struct kind kind_arr[3] = {
	[PCM_NUM_UINT] = { FAM_ARR_U, "a uint array", "use get_arr_uint() or set_arr_uint()" },
	[PCM_NUM_INT] = { -1, "an int array", "the handler API has accessors for uint arrays only" },
	[PCM_NUM_FLOAT] = { -1, "a float array",
			    "the handler API has accessors for uint arrays only" },
};

/* What each family's accessors expect, for the message. */
static const char *const family_wants[FAM_COUNT] = {
	"a signal", "a control", "a uint variable", "an int variable", "a float variable",
	"a uint array",
};

static void emit_mixups(FILE *out, const char *name, const struct kind *k)
{
	for (int f = 0; f < FAM_COUNT; f++) {
		if (f == k->family)
			continue;
		/* Names are C identifiers: safe inside the string literal. */
		fprintf(out, "#define %s%s PCM_NAME_MIXUP(\"%s is %s, not %s: %s\")\n",
			family_prefix[f], name, name, k->what, family_wants[f], k->use);
	}
}

static const struct kind *variable_kind(const struct pcm_spec_variable *v)
{
	return v->is_array ? &kind_arr[v->type] : &kind_var[v->type];
}

static void emit_offsets(const struct layout *l, FILE *out)
{
	fprintf(out, "\n#define MASK_OFFSET %d\n#define SET_SIGNAL_MASK_OFFSET %d\n",
		PCM_REC_MASK_SLOT, PCM_REC_SET_MASK_SLOT);
	fprintf(out, "#define SIGNAL_OFFSET %u\n#define CONTROL_OFFSET %u\n#define VAR_OFFSET %u\n",
		l->sig_off, l->ctrl_off, l->var_off);
	fprintf(out, "#define PCM_HANDLER_SLOTS %u\n", l->handler_slots);
}

/* An enum of @n entries, each written by @entry; none at all for 0 (C has no empty enum). */
static void emit_enum(FILE *out, const char *comment, unsigned n,
		      void (*entry)(FILE *, const struct pcm_spec *, unsigned),
		      const struct pcm_spec *spec)
{
	if (n == 0)
		return;
	fprintf(out, "\n/* %s */\nenum {\n", comment);
	for (unsigned i = 0; i < n; i++)
		entry(out, spec, i);
	fputs("};\n", out);
}

static void signal_bit(FILE *out, const struct pcm_spec *spec, unsigned i)
{
	fprintf(out, "\t%s = %s << %u,\n", spec->signals[i].name, i < 31 ? "1" : "(pcm_uint)1", i);
}

/* Entry @i of the controls, then of the variables. */
static void plain_index(FILE *out, const struct pcm_spec *spec, unsigned i)
{
	if (i < spec->n_controls)
		fprintf(out, "\t%s = %u,\n", spec->controls[i].name, i);
	else
		fprintf(out, "\t%s = %u,\n", spec->variables[i - spec->n_controls].name,
			spec->variables[i - spec->n_controls].slot);
}

/* Entry @i of the signals, then the controls, then the variables. */
static void pasted_index(FILE *out, const struct pcm_spec *spec, unsigned i)
{
	const struct pcm_spec_variable *v;
	const struct kind *k;

	if (i < spec->n_signals) {
		fprintf(out, "\t%s%s = %u,\n", family_prefix[FAM_SIG], spec->signals[i].name, i);
		return;
	}
	i -= spec->n_signals;
	if (i < spec->n_controls) {
		fprintf(out, "\t%s%s = %u,\n", family_prefix[FAM_CTL], spec->controls[i].name, i);
		return;
	}
	v = &spec->variables[i - spec->n_controls];
	k = variable_kind(v);
	/* An int or float array has no accessor: it takes no pasted name. */
	fprintf(out, "\t%s%s = %u,\n", k->family >= 0 ? family_prefix[k->family] : "pcm_noacc_",
		v->name, v->slot);
}

static void emit_header_names(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	emit_offsets(l, out);
	emit_enum(out, "Signals: each name is its bit in the trigger mask.", spec->n_signals,
		  signal_bit, spec);
	emit_enum(out, "Controls and variables: each name is its index.",
		  spec->n_controls + spec->n_variables, plain_index, spec);
	emit_enum(out, "What the accessors paste a name onto (pcmh.h).",
		  spec->n_signals + spec->n_controls + spec->n_variables, pasted_index, spec);
	fputs("\n/* A name given to an accessor of another kind: a compile error. */\n", out);
	for (unsigned i = 0; i < spec->n_constants; i++)
		emit_mixups(out, spec->constants[i].name, &kind_constant);
	for (unsigned i = 0; i < spec->n_signals; i++)
		emit_mixups(out, spec->signals[i].name, &kind_signal);
	for (unsigned i = 0; i < spec->n_controls; i++)
		emit_mixups(out, spec->controls[i].name, &kind_control);
	for (unsigned i = 0; i < spec->n_variables; i++)
		emit_mixups(out, spec->variables[i].name, variable_kind(&spec->variables[i]));
}

int pcm_codegen_header(const struct pcm_spec *spec, const struct pcm_fabric *fabric,
		       const struct pcm_codegen_opts *opts, FILE *out)
{
	struct layout l;
	int ret;

	compute_layout(spec, &l);
	fputs("/* Generated by pcmc from ", out);
	emit_comment_text(out, spec->path ? spec->path : spec->name);
	fprintf(out, " (%s arithmetic). Do not edit. */\n", pcm_arith_name(opts->arith));
	fprintf(out, "#ifndef PCM_GEN_%s_H\n#define PCM_GEN_%s_H\n\n", spec->name, spec->name);
	fprintf(out, "#if !defined(PCM_ARITH_DOUBLE) && !defined(PCM_ARITH_Q16_16) && "
		     "!defined(PCM_ARITH_Q32_32) && !defined(PCM_ARITH_Q42_22)\n"
		     "#define %s 1\n#endif\n",
		pcm_arith_macro(opts->arith));
	/* pcmh.h may have come first, with its default entry name. */
	fprintf(out, "#undef PCM_HANDLER_ENTRY\n#define PCM_HANDLER_ENTRY %s_main\n\n",
		opts->symbol);
	/* pcm's headers first: the spec's names, below, cannot rewrite them. */
	fputs("#include \"pcm.h\"\n#include \"pcmh.h\"\n\n", out);
	/*
	 * Internal linkage: the handler's later `int algorithm_main()` definition
	 * inherits it (C11 6.2.2), so packages never collide when linked together
	 * and the compiler may inline the handler into its pipeline even in PIC code.
	 */
	fprintf(out, "static int %s_main(pcm_uint *snapshot) __attribute__((unused));\n\n",
		opts->symbol);
	ret = emit_header_constants(spec, fabric, out);
	if (ret)
		return ret;
	emit_header_names(spec, &l, out);
	fprintf(out, "\n#endif /* PCM_GEN_%s_H */\n", spec->name);
	return ferror(out) ? -EIO : 0;
}

static void emit_tables(const struct pcm_spec *spec, FILE *out)
{
	fputs("static const struct pcm_pkg_signal pcm_gen_signals[] = {\n", out);
	for (unsigned i = 0; i < spec->n_signals; i++) {
		const struct pcm_spec_signal *s = &spec->signals[i];

		fprintf(out,
			"\t{ \"%s\", %d, %d, %d, %d, %s, UINT64_C(%" PRIu64 "), UINT64_C(%" PRIu64
			") },\n",
			s->name, s->type, s->accum, s->trigger, s->op,
			s->reset_upon_trigger ? "true" : "false", s->threshold.num.u,
			s->initial.num.u);
	}
	fputs("\t{ 0 },\n};\n\nstatic const struct pcm_pkg_control pcm_gen_controls[] = {\n", out);
	for (unsigned i = 0; i < spec->n_controls; i++) {
		const struct pcm_spec_control *c = &spec->controls[i];

		fprintf(out, "\t{ \"%s\", %d, UINT64_C(%" PRIu64 ") },\n", c->name, c->type,
			c->initial.num.u);
	}
	fputs("\t{ 0 },\n};\n\nstatic const struct pcm_pkg_variable pcm_gen_variables[] = {\n", out);
	for (unsigned i = 0, shared = 0; i < spec->n_variables; i++) {
		const struct pcm_spec_variable *v = &spec->variables[i];

		fprintf(out, "\t{ \"%s\", %d, %u, %u, UINT64_C(%" PRIu64 "), %s, %u },\n", v->name,
			v->type, v->slot, v->arr_len, v->initial.num.u, v->shared ? "true" : "false",
			v->shared ? shared : 0);
		shared += v->shared ? v->arr_len : 0;
	}
	fputs("\t{ 0 },\n};\n\n", out);
}

static void emit_init(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	fputs("static void pcm_gen_init(pcm_uint *rec, pcm_uint now_ps)\n{\n", out);
	fprintf(out, "\tmemset(rec, 0, %u * sizeof(pcm_uint));\n", l->record_slots);
	fputs("\t(void)now_ps;\n", out);
	for (unsigned i = 0; i < spec->n_signals; i++) {
		const struct pcm_spec_signal *s = &spec->signals[i];

		fprintf(out, "\trec[%u] = UINT64_C(%" PRIu64 ");\n", l->sig_off + i,
			s->initial.num.u);
		if (l->ref_slot[i] >= 0)
			fprintf(out, "\trec[%d] = UINT64_C(%" PRIu64 ");\n", l->ref_slot[i],
				s->initial.num.u);
		if (l->epoch_slot[i] >= 0)
			fprintf(out, "\trec[%d] = now_ps;\n", l->epoch_slot[i]);
	}
	for (unsigned i = 0; i < spec->n_controls; i++)
		fprintf(out, "\trec[%u] = UINT64_C(%" PRIu64 ");\n", l->ctrl_off + i,
			spec->controls[i].initial.num.u);
	for (unsigned i = 0; i < spec->n_variables; i++) {
		const struct pcm_spec_variable *v = &spec->variables[i];

		for (unsigned k = 0; k < v->arr_len; k++)
			fprintf(out, "\trec[%u] = UINT64_C(%" PRIu64 ");\n", l->var_off + v->slot + k,
				v->initial.num.u);
	}
	fputs("}\n\n", out);
}

/*
 * The pipeline, emitted once per package and run by both shells. Each step
 * is written by one emitter; where the synchronous record and the
 * asynchronous window differ, the emitter takes a `where` that says which
 * memory a signal's value lives in, so the rules themselves exist once.
 */
enum where {
	IN_RECORD, /* the flow record: the sync shell, and the async worker's copy */
	IN_WINDOW, /* the async datapath: the window combined with the published slots */
};

static void emit_helpers(FILE *out)
{
	fputs("#define PCM_GEN_HELPER static PCM_FORCE_INLINE __attribute__((unused))\n"
	      "PCM_GEN_HELPER pcm_uint pcm_gen_sat_add(pcm_uint a, pcm_uint b)\n{\n"
	      "\tpcm_uint s;\n\n\treturn __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;\n}\n\n"
	      "PCM_GEN_HELPER pcm_uint pcm_gen_min(pcm_uint a, pcm_uint b)\n{\n"
	      "\treturn b < a ? b : a;\n}\n\n"
	      "PCM_GEN_HELPER pcm_uint pcm_gen_max(pcm_uint a, pcm_uint b)\n{\n"
	      "\treturn b > a ? b : a;\n}\n\n"
	      "PCM_GEN_HELPER pcm_uint pcm_gen_abs_diff(pcm_uint a, pcm_uint b)\n{\n"
	      "\treturn a >= b ? a - b : b - a;\n}\n\n"
	      "/* ELAPSED_TIME: time since the flow started, 0 when `now` is before it. */\n"
	      "PCM_GEN_HELPER pcm_uint pcm_gen_since(pcm_uint now, pcm_uint epoch)\n{\n"
	      "\tpcm_uint d;\n\n"
	      "\treturn __builtin_sub_overflow(now, epoch, &d) ? 0 : d;\n}\n\n",
	      out);
}

static void emit_handler_entry(const struct pcm_codegen_opts *opts, FILE *out)
{
	fprintf(out, "static int pcm_gen_handler(pcm_uint *snapshot)\n{\n\treturn %s_main(snapshot);\n}\n\n",
		opts->symbol);
}

/* Lay out the window and the published slots of the asynchronous shell. */
static void compute_shared_layout(const struct pcm_spec *spec, struct layout *l)
{
	l->window_slots = 0;
	l->pub_slots = 0;
	for (unsigned i = 0; i < spec->n_signals; i++) {
		const struct pcm_spec_signal *s = &spec->signals[i];
		bool triggered = s->trigger != PCM_SIG_TRIGGER_NONE;

		l->win_slot[i] = l->epoch_slot[i] < 0 ? (int)l->window_slots++ : -1;
		l->pub_value[i] = triggered && l->win_slot[i] >= 0 ? (int)l->pub_slots++ : -1;
		l->pub_ref[i] = l->ref_slot[i] >= 0 ? (int)l->pub_slots++ : -1;
		l->pub_epoch[i] = triggered && l->epoch_slot[i] >= 0 ? (int)l->pub_slots++ : -1;
	}
}

/*
 * `a` combined with `b` by @accum: what accumulating sample (or window) b
 * onto value a gives. LAST takes b only where @present says it was sampled.
 */
static void emit_combine(pcm_signal_accum_t accum, const char *a, const char *b,
			 const char *present, FILE *out)
{
	switch (accum) {
	case PCM_SIG_ACCUM_SUM:
		fprintf(out, "pcm_gen_sat_add(%s, %s)", a, b);
		return;
	case PCM_SIG_ACCUM_MIN:
		fprintf(out, "pcm_gen_min(%s, %s)", a, b);
		return;
	case PCM_SIG_ACCUM_MAX:
		fprintf(out, "pcm_gen_max(%s, %s)", a, b);
		return;
	default:
		fprintf(out, "(%s ? %s : %s)", present, b, a);
	}
}

static pcm_uint window_identity(pcm_signal_accum_t accum)
{
	return accum == PCM_SIG_ACCUM_MIN ? UINT64_MAX : 0;
}

static void emit_window_identity(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	fputs("static const pcm_uint pcm_gen_window_identity[] = {", out);
	for (unsigned i = 0; i < spec->n_signals; i++)
		if (l->win_slot[i] >= 0)
			fprintf(out, " UINT64_C(%" PRIu64 "),", window_identity(spec->signals[i].accum));
	fputs(" 0 };\n\n", out);
}

/* Accumulate one event: into the record (sync) or into the window (async datapath). */
static void emit_accumulate(const struct pcm_spec *spec, const struct layout *l, enum where w,
			    FILE *out)
{
	char slot[64], cur[96];

	for (unsigned i = 0; i < spec->n_signals; i++) {
		const struct pcm_spec_signal *s = &spec->signals[i];

		if (l->epoch_slot[i] >= 0) {
			/* in the window flavour `now` lives in the shell's flow header */
			if (w == IN_RECORD)
				fprintf(out, "\trec[%u] = pcm_gen_since(now_ps, rec[%d]);\n",
					l->sig_off + i, l->epoch_slot[i]);
			continue;
		}
		if (w == IN_RECORD) {
			snprintf(slot, sizeof(slot), "rec[%u]", l->sig_off + i);
			snprintf(cur, sizeof(cur), "%s", slot);
		} else {
			snprintf(slot, sizeof(slot), "&win[%d]", l->win_slot[i]);
			snprintf(cur, sizeof(cur), "PCM_SHARED_LOAD(%s)", slot);
		}
		fprintf(out, "\tif (valid & ((pcm_uint)1 << %d)) {\n\t\tconst pcm_uint v = ev->values[%d];\n",
			s->type, s->type);
		if (s->accum == PCM_SIG_ACCUM_LAST && w == IN_RECORD) {
			fprintf(out, "\t\t%s = v;\n\t}\n", slot);
			continue;
		}
		if (s->accum == PCM_SIG_ACCUM_LAST) {
			fprintf(out, "\t\tPCM_SHARED_STORE(%s, v);\n\t\tpres |= (pcm_uint)1 << %d;\n\t}\n",
				slot, l->win_slot[i]);
			continue;
		}
		fprintf(out, "\t\tconst pcm_uint cur = %s;\n\n", cur);
		if (w == IN_RECORD)
			fprintf(out, "\t\t%s = ", slot);
		else
			fprintf(out, "\t\tPCM_SHARED_STORE(%s, ", slot);
		emit_combine(s->accum, "cur", "v", "1", out);
		fputs(w == IN_RECORD ? ";\n\t}\n" : ");\n\t}\n", out);
	}
}

/* The flow's value of signal @i, as a C expression. */
static void emit_signal_value(const struct pcm_spec *spec, const struct layout *l, unsigned i,
			      enum where w, FILE *out)
{
	char pub[64], win[64], present[64];

	if (w == IN_RECORD) {
		fprintf(out, "rec[%u]", l->sig_off + i);
		return;
	}
	if (l->epoch_slot[i] >= 0) {
		fprintf(out, "pcm_gen_since(now_ps, PCM_SHARED_LOAD(&pub[%d]))", l->pub_epoch[i]);
		return;
	}
	snprintf(pub, sizeof(pub), "PCM_SHARED_LOAD(&pub[%d])", l->pub_value[i]);
	snprintf(win, sizeof(win), "PCM_SHARED_LOAD(&win[%d])", l->win_slot[i]);
	snprintf(present, sizeof(present), "(pres & ((pcm_uint)1 << %d))", l->win_slot[i]);
	emit_combine(spec->signals[i].accum, pub, win, present, out);
}

static void emit_reference(const struct layout *l, unsigned i, enum where w, FILE *out)
{
	if (w == IN_RECORD)
		fprintf(out, "rec[%d]", l->ref_slot[i]);
	else
		fprintf(out, "PCM_SHARED_LOAD(&pub[%d])", l->pub_ref[i]);
}

static const char *op_expr(pcm_trigger_op_t op)
{
	static const char *const exprs[PCM_TRIG_OP_COUNT] = {
		"(x > t)", "(x < t)", "(x >= t)", "(x <= t)", "(x == t)", "(x != t)",
		"((x & t) != 0)", "((x | t) != 0)", "((x ^ t) != 0)", "(x != 0 && t != 0)",
		"(x != 0 || t != 0)",
	};

	return (unsigned)op < PCM_TRIG_OP_COUNT ? exprs[op] : "0";
}

/*
 * Evaluate the triggers into `fired`. RAW compares the value, DELTA the value
 * minus its reference mod 2^64 (as the SDK's reference VM does), MAGNITUDE
 * their distance.
 */
static void emit_triggers(const struct pcm_spec *spec, const struct layout *l, enum where w,
			  FILE *out)
{
	fputs("\tpcm_uint fired = 0;\n", out);
	for (unsigned i = 0; i < spec->n_signals; i++) {
		const struct pcm_spec_signal *s = &spec->signals[i];

		if (s->trigger == PCM_SIG_TRIGGER_NONE)
			continue;
		fprintf(out, "\t{\n\t\tconst pcm_uint t = UINT64_C(%" PRIu64 "), v = ",
			s->threshold.num.u);
		emit_signal_value(spec, l, i, w, out);
		fputs(";\n\t\tconst pcm_uint x = ", out);
		if (s->trigger == PCM_SIG_TRIGGER_RAW) {
			fputs("v", out);
		} else {
			fputs(s->trigger == PCM_SIG_TRIGGER_DELTA ? "v - " : "pcm_gen_abs_diff(v, ",
			      out);
			emit_reference(l, i, w, out);
			if (s->trigger == PCM_SIG_TRIGGER_MAGNITUDE)
				fputc(')', out);
		}
		fprintf(out, ";\n\n\t\tif (%s)\n\t\t\tfired |= (pcm_uint)1 << %u;\n\t}\n",
			op_expr(s->op), i);
	}
}

static void emit_reset_one(const struct pcm_spec_signal *s, const struct layout *l, unsigned i,
			   const char *indent, FILE *out)
{
	fprintf(out, "%srec[%u] = UINT64_C(%" PRIu64 ");\n", indent, l->sig_off + i,
		s->initial.num.u);
	if (l->ref_slot[i] >= 0)
		fprintf(out, "%srec[%d] = UINT64_C(%" PRIu64 ");\n", indent, l->ref_slot[i],
			s->initial.num.u);
}

/*
 * An ELAPSED_TIME signal after the handler, as in the SDK: its value is the
 * clock's (time since the flow started), so neither consumption nor a write
 * changes it. PCM_SIG_REARM (pcm's own) moves its trigger reference to now,
 * which restarts a DELTA timer's period.
 */
static void emit_commit_elapsed(const struct layout *l, unsigned i, FILE *out)
{
	fprintf(out, "\tif ((written >> %u) & 1) {\n", i);
	if (l->ref_slot[i] >= 0)
		fprintf(out, "\t\tif (rec[%u] == PCM_SIG_REARM)\n"
			     "\t\t\trec[%d] = pcm_gen_since(now_ps, rec[%d]);\n",
			l->sig_off + i, l->ref_slot[i], l->epoch_slot[i]);
	fprintf(out, "\t\trec[%u] = pcm_gen_since(now_ps, rec[%d]);\n\t}\n", l->sig_off + i,
		l->epoch_slot[i]);
}

/*
 * After the handler: a signal it wrote keeps the written value unless that
 * is PCM_SIG_REARM, which resets it; a signal it did not write is reset
 * when it is consumed (reset_upon_trigger). A reset also resets the
 * trigger reference. ELAPSED_TIME is the clock (emit_commit_elapsed()).
 */
static void emit_commit(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	fputs("\tconst pcm_uint written = rec[1];\n", out);
	for (unsigned i = 0; i < spec->n_signals; i++) {
		const struct pcm_spec_signal *s = &spec->signals[i];

		if (l->epoch_slot[i] >= 0) {
			emit_commit_elapsed(l, i, out);
			continue;
		}
		fprintf(out, "\tif ((written >> %u) & 1 ? rec[%u] == PCM_SIG_REARM : %d) {\n", i,
			l->sig_off + i, s->reset_upon_trigger);
		emit_reset_one(s, l, i, "\t\t", out);
		fputs("\t}\n", out);
	}
}

/*
 * The instance variables around the handler (package.h): copied @in from the
 * flow's instance area into the record before it runs, and out after. A
 * record bound to no area (address 0) keeps its own values.
 */
static void emit_shared_copy(const struct pcm_spec *spec, const struct layout *l, bool in,
			     FILE *out)
{
	unsigned area = 0;

	if (l->shared_ref < 0)
		return;
	if (in)
		fprintf(out, "\tpcm_uint *const shared = (pcm_uint *)(uintptr_t)rec[%d];\n\n",
			l->shared_ref);
	fputs("\tif (shared) {\n", out);
	for (unsigned i = 0; i < spec->n_variables; i++) {
		const struct pcm_spec_variable *v = &spec->variables[i];

		for (unsigned k = 0; v->shared && k < v->arr_len; k++, area++) {
			if (in)
				fprintf(out, "\t\trec[%u] = shared[%u];\n", l->var_off + v->slot + k,
					area);
			else
				fprintf(out, "\t\tshared[%u] = rec[%u];\n", area,
					l->var_off + v->slot + k);
		}
	}
	fputs("\t}\n", out);
}

/*
 * call(): the pipeline after accumulation, on a record. The sync shell's
 * feed() runs it inline after accumulating; the async worker runs it on its
 * copy of the record after folding the window in.
 */
static void emit_call(const struct pcm_spec *spec, const struct layout *l,
		      const struct pcm_codegen_opts *opts, FILE *out)
{
	fputs("static PCM_FORCE_INLINE int pcm_gen_call_inline(pcm_uint *restrict rec, "
	      "pcm_uint now_ps)\n{\n\t(void)now_ps;\n",
	      out);
	emit_triggers(spec, l, IN_RECORD, out);
	fputs("\tif (!fired)\n\t\treturn 0;\n", out);
	for (unsigned i = 0; i < spec->n_signals; i++)
		if (l->ref_slot[i] >= 0)
			fprintf(out, "\tif (fired & ((pcm_uint)1 << %u))\n\t\trec[%d] = rec[%u];\n", i,
				l->ref_slot[i], l->sig_off + i);
	emit_shared_copy(spec, l, true, out);
	fprintf(out, "\trec[0] = fired;\n\trec[1] = 0;\n\tconst int rc = %s_main(rec);\n",
		opts->symbol);
	emit_shared_copy(spec, l, false, out);
	emit_commit(spec, l, out);
	fputs("\treturn rc == PCM_SUCCESS ? 1 : -EIO;\n}\n\n"
	      "__attribute__((flatten)) static int pcm_gen_call(pcm_uint *rec, pcm_uint now_ps)\n{\n"
	      "\treturn pcm_gen_call_inline(rec, now_ps);\n}\n\n",
	      out);
}

/*
 * feed(): the sync shell's per-event entry, accumulate then call(), which
 * counts the flow's handler calls itself (in the branch that ran the
 * handler, so an event that fires nothing costs nothing more).
 */
static void emit_feed(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	fputs("static PCM_FORCE_INLINE int pcm_gen_feed_inline(struct pcm_flow_slot *restrict slot, "
	      "const struct pcm_event *restrict ev, pcm_uint now_ps)\n{\n"
	      "\tpcm_uint *restrict rec = slot->rec;\n"
	      "\tconst pcm_uint valid = ev->valid;\n\n\t(void)valid;\n",
	      out);
	emit_accumulate(spec, l, IN_RECORD, out);
	fputs("\tconst int rc = pcm_gen_call_inline(rec, now_ps);\n\n"
	      "\tif (rc != 0)\n\t\tpcm_slot_count_call(slot);\n\treturn rc;\n}\n\n"
	      "__attribute__((flatten)) static int pcm_gen_feed(struct pcm_flow_slot *slot, "
	      "const struct pcm_event *ev, pcm_uint now_ps)\n{\n"
	      "\treturn pcm_gen_feed_inline(slot, ev, now_ps);\n}\n\n",
	      out);
}

/*
 * feed_burst(): the loop over a burst, compiled with the pipeline inlined
 * into it, so that a run of events for this package's flows pays one call
 * into the package, not one per event. Two loops rather than a test per
 * event: the first runs while there is an event PCM_BURST_PREFETCH ahead
 * whose slot it fetches, the second finishes the burst.
 */
static void emit_feed_burst(FILE *out)
{
	fputs("static PCM_FORCE_INLINE bool pcm_gen_burst_step(const struct pcm_package *self, "
	      "const struct pcm_slot_table *tab,\n\tconst struct pcm_flow_event *e, "
	      "uint32_t *errors)\n{\n"
	      "\tstruct pcm_flow_slot *slot;\n\n"
	      "\tif (__builtin_expect(e->flow >= tab->max_flows, 0))\n\t\treturn false;\n"
	      "\tslot = pcm_slot_at(tab, e->flow);\n"
	      "\tif (__builtin_expect(slot->pkg != self, 0))\n\t\treturn false;\n"
	      "\tif (__builtin_expect(pcm_gen_feed_inline(slot, &e->ev, e->now_ps) < 0, 0))\n"
	      "\t\t(*errors)++;\n\treturn true;\n}\n\n"
	      "__attribute__((flatten)) static uint32_t pcm_gen_feed_burst("
	      "const struct pcm_package *self,\n\tconst struct pcm_slot_table *table, "
	      "const struct pcm_flow_event *evs, uint32_t n, uint32_t *errors)\n{\n"
	      "\tconst struct pcm_slot_table tab = *table;\n"
	      "\tconst uint32_t ahead = n > PCM_BURST_PREFETCH ? n - PCM_BURST_PREFETCH : 0;\n"
	      "\tuint32_t i = 0;\n\n"
	      "\tfor (; i < ahead; i++) {\n"
	      "\t\tpcm_slot_prefetch(&tab, evs[i + PCM_BURST_PREFETCH].flow);\n"
	      "\t\tif (!pcm_gen_burst_step(self, &tab, &evs[i], errors))\n\t\t\treturn i;\n"
	      "\t}\n"
	      "\tfor (; i < n; i++)\n"
	      "\t\tif (!pcm_gen_burst_step(self, &tab, &evs[i], errors))\n\t\t\treturn i;\n"
	      "\treturn n;\n}\n\n",
	      out);
}

static bool has_last(const struct pcm_spec *spec, const struct layout *l)
{
	for (unsigned i = 0; i < spec->n_signals; i++)
		if (l->win_slot[i] >= 0 && spec->signals[i].accum == PCM_SIG_ACCUM_LAST)
			return true;
	return false;
}

/*
 * The asynchronous datapath's step: accumulate into the window, whose last
 * slot is the mask of LAST slots sampled (written after them), then, when
 * asked, evaluate the triggers on the flow's value.
 */
static void emit_window_feed(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	bool last = has_last(spec, l);

	fputs("static pcm_uint pcm_gen_window_feed(_Atomic pcm_uint *restrict win, "
	      "const _Atomic pcm_uint *restrict pub,\n\tconst struct pcm_event *restrict ev, "
	      "pcm_uint now_ps, bool triggers)\n{\n"
	      "\tconst pcm_uint valid = ev->valid;\n",
	      out);
	if (last)
		fprintf(out, "\tconst pcm_uint pres0 = PCM_SHARED_LOAD(&win[%u]);\n", l->window_slots);
	fprintf(out, "\tpcm_uint pres = %s;\n\n\t(void)valid;\n\t(void)pub;\n\t(void)now_ps;\n"
		     "\t(void)pres;\n",
		last ? "pres0" : "0");
	emit_accumulate(spec, l, IN_WINDOW, out);
	if (last)
		fprintf(out, "\tif (pres != pres0)\n\t\tPCM_SHARED_STORE(&win[%u], pres);\n",
			l->window_slots);
	fputs("\tif (!triggers)\n\t\treturn 0;\n", out);
	emit_triggers(spec, l, IN_WINDOW, out);
	fputs("\treturn fired;\n}\n\n", out);
}

static void emit_window_merge(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	char a[32], b[32], present[64];

	fputs("static void pcm_gen_window_merge(pcm_uint *restrict rec, const pcm_uint *restrict win, "
	      "pcm_uint present,\n\tpcm_uint now_ps)\n{\n"
	      "\t(void)win;\n\t(void)present;\n\t(void)now_ps;\n",
	      out);
	for (unsigned i = 0; i < spec->n_signals; i++) {
		if (l->win_slot[i] < 0) {
			fprintf(out, "\trec[%u] = pcm_gen_since(now_ps, rec[%d]);\n", l->sig_off + i,
				l->epoch_slot[i]);
			continue;
		}
		snprintf(a, sizeof(a), "rec[%u]", l->sig_off + i);
		snprintf(b, sizeof(b), "win[%d]", l->win_slot[i]);
		snprintf(present, sizeof(present), "((present >> %d) & 1)", l->win_slot[i]);
		fprintf(out, "\t%s = ", a);
		emit_combine(spec->signals[i].accum, a, b, present, out);
		fputs(";\n", out);
	}
	fputs("}\n\n", out);
}

static void emit_window_merge_late(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	char a[32], b[32];

	fputs("static void pcm_gen_window_merge_late(pcm_uint *restrict rec, "
	      "const pcm_uint *restrict read,\n\tpcm_uint read_present, "
	      "const pcm_uint *restrict fin, pcm_uint fin_present)\n{\n"
	      "\t(void)rec;\n\t(void)read;\n\t(void)read_present;\n\t(void)fin;\n"
	      "\t(void)fin_present;\n",
	      out);
	for (unsigned i = 0; i < spec->n_signals; i++) {
		const struct pcm_spec_signal *s = &spec->signals[i];
		int w = l->win_slot[i];

		if (w < 0)
			continue;
		snprintf(a, sizeof(a), "rec[%u]", l->sig_off + i);
		snprintf(b, sizeof(b), "fin[%d]", w);
		if (s->accum == PCM_SIG_ACCUM_SUM) {
			fprintf(out, "\t%s = pcm_gen_sat_add(%s, fin[%d] - read[%d]);\n", a, a, w, w);
		} else if (s->accum == PCM_SIG_ACCUM_LAST) {
			fprintf(out, "\tif (((fin_present >> %d) & 1) && (!((read_present >> %d) & 1) || "
				     "fin[%d] != read[%d]))\n\t\t%s = %s;\n", w, w, w, w, a, b);
		} else {
			fprintf(out, "\tif (fin[%d] != read[%d])\n\t\t%s = ", w, w, a);
			emit_combine(s->accum, a, b, "1", out);
			fputs(";\n", out);
		}
	}
	fputs("}\n\n", out);
}

static void emit_publish_slot(int pub, unsigned src, FILE *out)
{
	if (pub >= 0)
		fprintf(out, "\tif (PCM_SHARED_LOAD(&pub[%d]) != rec[%u])\n"
			     "\t\tPCM_SHARED_STORE(&pub[%d], rec[%u]);\n", pub, src, pub, src);
}

static void emit_publish(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	fputs("static void pcm_gen_publish(_Atomic pcm_uint *restrict pub, "
	      "const pcm_uint *restrict rec)\n{\n\t(void)pub;\n\t(void)rec;\n",
	      out);
	for (unsigned i = 0; i < spec->n_signals; i++) {
		emit_publish_slot(l->pub_value[i], l->sig_off + i, out);
		emit_publish_slot(l->pub_ref[i], (unsigned)l->ref_slot[i], out);
		emit_publish_slot(l->pub_epoch[i], (unsigned)l->epoch_slot[i], out);
	}
	fputs("}\n\n", out);
}

static void emit_pipeline(const struct pcm_spec *spec, const struct layout *l,
			  const struct pcm_codegen_opts *opts, FILE *out)
{
	emit_window_identity(spec, l, out);
	emit_call(spec, l, opts, out);
	emit_feed(spec, l, out);
	emit_feed_burst(out);
	emit_window_feed(spec, l, out);
	emit_window_merge(spec, l, out);
	emit_window_merge_late(spec, l, out);
	emit_publish(spec, l, out);
}

static pcm_uint signal_type_mask(const struct pcm_spec *spec)
{
	pcm_uint m = 0;

	for (unsigned i = 0; i < spec->n_signals; i++)
		m |= (pcm_uint)1 << spec->signals[i].type;
	return m;
}

static unsigned control_type_mask(const struct pcm_spec *spec)
{
	unsigned m = 0;

	for (unsigned i = 0; i < spec->n_controls; i++)
		m |= 1u << spec->controls[i].type;
	return m;
}

static void emit_control_slots(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	fputs("\t.control_slot = {", out);
	for (int t = 0; t < PCM_CTRL_COUNT; t++) {
		int slot = -1;

		for (unsigned i = 0; i < spec->n_controls && slot < 0; i++)
			if (spec->controls[i].type == (pcm_control_t)t)
				slot = (int)(l->ctrl_off + i);
		fprintf(out, " %d,", slot);
	}
	fputs(" },\n", out);
}

static void emit_descriptor(const struct pcm_spec *spec, const struct layout *l,
			    const struct pcm_codegen_opts *opts, FILE *out)
{
	fprintf(out, "PCM_GEN_EXPORT const struct pcm_package %s = {\n", opts->symbol);
	fputs("\t.abi_version = PCM_PACKAGE_ABI_VERSION,\n", out);
	fputs("\t.name = ", out);
	pcm_codegen_write_c_string(out, spec->name);
	fputs(",\n\t.description = ", out);
	pcm_codegen_write_c_string(out, spec->description);
	fprintf(out, ",\n\t.arith = \"%s\",\n", pcm_arith_name(opts->arith));
	fputs("\t.spec_path = ", out);
	pcm_codegen_write_c_string(out, spec->path);
	fputs(",\n", out);
	fprintf(out, "\t.n_signals = %u,\n\t.n_controls = %u,\n\t.n_var_slots = %u,\n",
		spec->n_signals, spec->n_controls, spec->n_var_slots);
	fprintf(out, "\t.n_variables = %u,\n\t.handler_slots = %u,\n\t.record_slots = %u,\n",
		spec->n_variables, l->handler_slots, l->record_slots);
	fprintf(out, "\t.window_slots = %u,\n\t.pub_slots = %u,\n", l->window_slots, l->pub_slots);
	fprintf(out, "\t.n_shared_slots = %u,\n\t.shared_ref_slot = %d,\n", l->shared_slots,
		l->shared_ref < 0 ? 0 : l->shared_ref);
	fprintf(out, "\t.signal_types = UINT64_C(0x%" PRIx64 "),\n", signal_type_mask(spec));
	fprintf(out, "\t.control_types = 0x%x,\n", control_type_mask(spec));
	emit_control_slots(spec, l, out);
	fputs("\t.signals = pcm_gen_signals,\n\t.controls = pcm_gen_controls,\n"
	      "\t.variables = pcm_gen_variables,\n",
	      out);
	fputs("\t.window_identity = pcm_gen_window_identity,\n", out);
	fputs("\t.ops = {\n\t\t.init = pcm_gen_init,\n\t\t.feed = pcm_gen_feed,\n"
	      "\t\t.feed_burst = pcm_gen_feed_burst,\n"
	      "\t\t.call = pcm_gen_call,\n\t\t.handler = pcm_gen_handler,\n"
	      "\t\t.window_feed = pcm_gen_window_feed,\n\t\t.window_merge = pcm_gen_window_merge,\n"
	      "\t\t.window_merge_late = pcm_gen_window_merge_late,\n"
	      "\t\t.publish = pcm_gen_publish,\n\t},\n};\n",
	      out);
	if (opts->export_entry)
		fprintf(out, "\nPCM_GEN_EXPORT const struct pcm_package *const pcm_package_entry = &%s;\n",
			opts->symbol);
}

/* A path an #include "..." can name: header names have no escapes. */
static bool includable(const char *path)
{
	return path[0] && !strpbrk(path, "\"\\\n\r");
}

int pcm_codegen_unit(const struct pcm_spec *spec, const struct pcm_codegen_opts *opts, FILE *out)
{
	struct layout l;

	if (!opts->symbol || !opts->handler_path || !includable(opts->handler_path))
		return -EINVAL;
	compute_layout(spec, &l);
	compute_shared_layout(spec, &l);
	fputs("/* Generated by pcmc from ", out);
	emit_comment_text(out, spec->path ? spec->path : spec->name);
	fprintf(out, " (%s arithmetic). Do not edit. */\n", pcm_arith_name(opts->arith));
	fprintf(out, "#ifndef %s\n#define %s 1\n#endif\n", pcm_arith_macro(opts->arith),
		pcm_arith_macro(opts->arith));
	fputs("#include <errno.h>\n#include <string.h>\n\n#include \"package.h\"\n\n", out);
	fputs("#define PCM_GEN_EXPORT __attribute__((visibility(\"default\")))\n", out);
	fprintf(out, "static int %s_main(pcm_uint *snapshot);\n", opts->symbol);
	fprintf(out, "extern const struct pcm_package %s;\n", opts->symbol);
	if (opts->export_entry)
		fputs("extern const struct pcm_package *const pcm_package_entry;\n", out);
	fputc('\n', out);
	emit_helpers(out);
	emit_handler_entry(opts, out);
	emit_tables(spec, out);
	emit_init(spec, &l, out);
	emit_pipeline(spec, &l, opts, out);
	emit_descriptor(spec, &l, opts, out);
	/*
	 * The package last: the pipeline above uses none of its names, so neither
	 * the spec's names nor the handler's macros can change what it means.
	 */
	fprintf(out, "\n#include \"%s.h\"\n#include \"%s\"\n", spec->name, opts->handler_path);
	return ferror(out) ? -EIO : 0;
}
