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
#include <errno.h>
#include <inttypes.h>
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
	l->record_slots = next;
}

static void emit_guarded_define(FILE *out, const char *name, const char *value)
{
	fprintf(out, "#ifndef %s\n#define %s %s\n#endif\n", name, name, value);
}

static const char *num_type_c(enum pcm_num_type t)
{
	switch (t) {
	case PCM_NUM_INT:
		return "pcm_int";
	case PCM_NUM_FLOAT:
		return "pcm_float";
	default:
		return "pcm_uint";
	}
}

static void emit_header_constants(const struct pcm_spec *spec, const struct pcm_fabric *fabric,
				  FILE *out)
{
	char typed[PCM_DIAG_MAX];

	/* Typed like constants, so C evaluates them as the loader did (64-bit). */
	fputs("/* Fabric profile */\n", out);
	for (unsigned i = 0; fabric && i < fabric->n_entries; i++) {
		const struct pcm_fabric_entry *e = &fabric->entries[i];

		snprintf(typed, sizeof(typed), "((%s)(%s))", num_type_c(e->value.num.type),
			 e->value.c_expr);
		emit_guarded_define(out, e->name, typed);
	}
	fputs("\n/* Constants */\n", out);
	for (unsigned i = 0; i < spec->n_constants; i++) {
		const struct pcm_spec_constant *c = &spec->constants[i];

		fprintf(out, "#define %s ((%s)(%s))\n", c->name, num_type_c(c->type),
			c->value.c_expr);
	}
}

static void emit_header_names(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	fprintf(out, "\n#define MASK_OFFSET %d\n#define SET_SIGNAL_MASK_OFFSET %d\n",
		PCM_REC_MASK_SLOT, PCM_REC_SET_MASK_SLOT);
	fprintf(out, "#define SIGNAL_OFFSET %u\n#define CONTROL_OFFSET %u\n#define VAR_OFFSET %u\n",
		l->sig_off, l->ctrl_off, l->var_off);
	fprintf(out, "#define PCM_HANDLER_SLOTS %u\n\n", l->handler_slots);

	fputs("/* Signals: each name is its bit in the trigger mask. */\n", out);
	for (unsigned i = 0; i < spec->n_signals; i++)
		fprintf(out, "#define %s ((pcm_uint)1 << %u)\n", spec->signals[i].name, i);

	fprintf(out, "\nenum %s_controls {\n", spec->name);
	for (unsigned i = 0; i < spec->n_controls; i++)
		fprintf(out, "\t%s = %u,\n", spec->controls[i].name, i);
	fprintf(out, "\t%s__CONTROL_COUNT = %u,\n};\n", spec->name, spec->n_controls);

	fprintf(out, "\nenum %s_variables {\n", spec->name);
	for (unsigned i = 0; i < spec->n_variables; i++)
		fprintf(out, "\t%s = %u,\n", spec->variables[i].name, spec->variables[i].slot);
	fprintf(out, "\t%s__VAR_SLOT_COUNT = %u,\n};\n", spec->name, spec->n_var_slots);
}

int pcm_codegen_header(const struct pcm_spec *spec, const struct pcm_fabric *fabric,
		       const struct pcm_codegen_opts *opts, FILE *out)
{
	struct layout l;

	compute_layout(spec, &l);
	fprintf(out, "/* Generated by pcmc from %s (%s arithmetic). Do not edit. */\n",
		spec->path ? spec->path : spec->name, pcm_arith_name(opts->arith));
	fprintf(out, "#ifndef PCM_GEN_%s_H\n#define PCM_GEN_%s_H\n\n", spec->name, spec->name);
	fprintf(out, "#if !defined(PCM_ARITH_DOUBLE) && !defined(PCM_ARITH_Q16_16) && "
		     "!defined(PCM_ARITH_Q32_32) && !defined(PCM_ARITH_Q42_22)\n"
		     "#define %s 1\n#endif\n",
		pcm_arith_macro(opts->arith));
	fprintf(out, "#define PCM_HANDLER_ENTRY %s_main\n\n", opts->symbol);
	fputs("#include \"pcm.h\"\n\n", out);
	/*
	 * Internal linkage: the handler's later `int algorithm_main()` definition
	 * inherits it (C11 6.2.2), so packages never collide when linked together
	 * and the compiler may inline the handler into its pipeline even in PIC code.
	 */
	fprintf(out, "static int %s_main(pcm_uint *snapshot) __attribute__((unused));\n\n",
		opts->symbol);
	emit_header_constants(spec, fabric, out);
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
	for (unsigned i = 0; i < spec->n_variables; i++) {
		const struct pcm_spec_variable *v = &spec->variables[i];

		fprintf(out, "\t{ \"%s\", %d, %u, %u, UINT64_C(%" PRIu64 ") },\n", v->name,
			v->type, v->slot, v->arr_len, v->initial.num.u);
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
	      "/* ELAPSED_TIME: time since the epoch, 0 when `now` is before it. */\n"
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
	if (l->epoch_slot[i] >= 0)
		fprintf(out, "%srec[%d] = now_ps;\n", indent, l->epoch_slot[i]);
}

/*
 * After the handler: a signal it wrote keeps the written value unless that
 * is PCM_SIG_REARM, which resets it; a signal it did not write is reset
 * when it is consumed (reset_upon_trigger). A reset also resets the
 * trigger reference and moves an ELAPSED_TIME epoch to now.
 */
static void emit_commit(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	fputs("\tconst pcm_uint written = rec[1];\n", out);
	for (unsigned i = 0; i < spec->n_signals; i++) {
		const struct pcm_spec_signal *s = &spec->signals[i];

		fprintf(out, "\tif ((written >> %u) & 1 ? rec[%u] == PCM_SIG_REARM : %d) {\n", i,
			l->sig_off + i, s->reset_upon_trigger);
		emit_reset_one(s, l, i, "\t\t", out);
		fputs("\t}\n", out);
	}
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
	fprintf(out, "\trec[0] = fired;\n\trec[1] = 0;\n\tconst int rc = %s_main(rec);\n",
		opts->symbol);
	emit_commit(spec, l, out);
	fputs("\treturn rc == PCM_SUCCESS ? 1 : -EIO;\n}\n\n"
	      "__attribute__((flatten)) static int pcm_gen_call(pcm_uint *rec, pcm_uint now_ps)\n{\n"
	      "\treturn pcm_gen_call_inline(rec, now_ps);\n}\n\n",
	      out);
}

static void emit_feed(const struct pcm_spec *spec, const struct layout *l, FILE *out)
{
	fputs("__attribute__((flatten)) static int pcm_gen_feed(pcm_uint *restrict rec, "
	      "const struct pcm_event *restrict ev, pcm_uint now_ps)\n{\n"
	      "\tconst pcm_uint valid = ev->valid;\n\n\t(void)valid;\n",
	      out);
	emit_accumulate(spec, l, IN_RECORD, out);
	fputs("\treturn pcm_gen_call_inline(rec, now_ps);\n}\n\n", out);
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
	fprintf(out, "\t.name = \"%s\",\n", spec->name);
	fputs("\t.description = ", out);
	fputc('"', out);
	for (const char *p = spec->description ? spec->description : ""; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', out);
		if (*p == '\n')
			fputs("\\n", out);
		else if ((unsigned char)*p >= 0x20)
			fputc(*p, out);
	}
	fputs("\",\n", out);
	fprintf(out, "\t.arith = \"%s\",\n", pcm_arith_name(opts->arith));
	fprintf(out, "\t.spec_path = \"%s\",\n", spec->path ? spec->path : "");
	fprintf(out, "\t.n_signals = %u,\n\t.n_controls = %u,\n\t.n_var_slots = %u,\n",
		spec->n_signals, spec->n_controls, spec->n_var_slots);
	fprintf(out, "\t.n_variables = %u,\n\t.handler_slots = %u,\n\t.record_slots = %u,\n",
		spec->n_variables, l->handler_slots, l->record_slots);
	fprintf(out, "\t.window_slots = %u,\n\t.pub_slots = %u,\n", l->window_slots, l->pub_slots);
	fprintf(out, "\t.signal_types = UINT64_C(0x%" PRIx64 "),\n", signal_type_mask(spec));
	fprintf(out, "\t.control_types = 0x%x,\n", control_type_mask(spec));
	emit_control_slots(spec, l, out);
	fputs("\t.signals = pcm_gen_signals,\n\t.controls = pcm_gen_controls,\n"
	      "\t.variables = pcm_gen_variables,\n",
	      out);
	fputs("\t.window_identity = pcm_gen_window_identity,\n", out);
	fputs("\t.ops = {\n\t\t.init = pcm_gen_init,\n\t\t.feed = pcm_gen_feed,\n"
	      "\t\t.call = pcm_gen_call,\n\t\t.handler = pcm_gen_handler,\n"
	      "\t\t.window_feed = pcm_gen_window_feed,\n\t\t.window_merge = pcm_gen_window_merge,\n"
	      "\t\t.window_merge_late = pcm_gen_window_merge_late,\n"
	      "\t\t.publish = pcm_gen_publish,\n\t},\n};\n",
	      out);
	if (opts->export_entry)
		fprintf(out, "\nPCM_GEN_EXPORT const struct pcm_package *const pcm_package_entry = &%s;\n",
			opts->symbol);
}

int pcm_codegen_unit(const struct pcm_spec *spec, const struct pcm_codegen_opts *opts, FILE *out)
{
	struct layout l;

	if (!opts->symbol || !opts->handler_path)
		return -EINVAL;
	compute_layout(spec, &l);
	compute_shared_layout(spec, &l);
	fprintf(out, "/* Generated by pcmc from %s (%s arithmetic). Do not edit. */\n",
		spec->path ? spec->path : spec->name, pcm_arith_name(opts->arith));
	fprintf(out, "#ifndef %s\n#define %s 1\n#endif\n", pcm_arith_macro(opts->arith),
		pcm_arith_macro(opts->arith));
	fputs("#include <errno.h>\n#include <string.h>\n\n", out);
	fputs("#define PCM_GEN_EXPORT __attribute__((visibility(\"default\")))\n", out);
	fprintf(out, "#include \"%s.h\"\n#include \"pcmh.h\"\n", spec->name);
	fprintf(out, "#include \"%s\"\n\n#include \"package.h\"\n\n", opts->handler_path);
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
	return ferror(out) ? -EIO : 0;
}
