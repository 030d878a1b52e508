// SPDX-License-Identifier: MIT
/*
 * pcmc - the handler package compiler.
 *
 *   pcmc build SPEC.yaml HANDLER.c [EXTRA.c...] [--fabric F.yaml] [--arith A]
 *              [--target T] [-I DIR] [-D NAME[=VALUE]] [-L DIR] [-l LIB]
 *              -o OUT.so
 *   pcmc gen   SPEC.yaml HANDLER.c --symbol SYM --header OUT.h --unit OUT.c [...]
 *   pcmc check SPEC.yaml --target T [--fabric F.yaml]
 *   pcmc targets
 *
 * build validates the spec, checks it against the target, writes the
 * accessor header and the pipeline unit into a scratch directory and builds a
 * shared object that pcmd, pcm-sim and pcm-bench load, the way the SDK's
 * build does (pcmc_cc.c). gen stops after writing the two files; meson uses
 * it to build the built-in policies through the same pipeline.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen.h"
#include "embedded.h"
#include "pcmc_cc.h"
#include "spec.h"
#include "target.h"

struct pcmc_args {
	const char *cmd;
	const char *spec_path;
	const char *sources[PCMC_MAX_SOURCES]; /* the handler, then extra C files */
	int n_sources;
	const char *fabric_path;
	const char *target_name;
	const char *out_path;
	const char *symbol;
	const char *header_out;
	const char *unit_out;
	const char *keep_dir;
	struct pcmc_list include_dirs;
	struct pcmc_list defines;
	struct pcmc_list lib_dirs;
	struct pcmc_list libs;
	enum pcm_arith arith;
	bool export_entry;
	bool verbose;
};

static void usage(FILE *f)
{
	fputs("usage:\n"
	      "  pcmc build SPEC.yaml HANDLER.c [EXTRA.c...] -o OUT.so [--fabric FABRIC.yaml]\n"
	      "             [--arith double|q16.16|q32.32|q42.22] [--target NAME]\n"
	      "             [-I DIR]... [-D NAME[=VALUE]]... [-L DIR]... [-l LIB]...\n"
	      "             [--keep-dir DIR] [-v]\n"
	      "  pcmc gen SPEC.yaml HANDLER.c --symbol SYM --header OUT.h --unit OUT.c\n"
	      "             [--fabric FABRIC.yaml] [--arith A] [--target NAME] [--export-entry]\n"
	      "  pcmc check SPEC.yaml --target NAME [--fabric FABRIC.yaml]\n"
	      "  pcmc targets\n"
	      "Without --fabric, the built-in default fabric profile is used.\n"
	      "build defines HANDLER_BUILD and BUILD_ALGO_<NAME>, links libm and, when the\n"
	      "package includes <xxhash.h>, libxxhash. The C compiler is $CC (default cc),\n"
	      "with $CFLAGS, and $LDFLAGS when linking; pcm's headers are found beside\n"
	      "pcmc, through pkg-config, or in $PCM_INCLUDE_DIR.\n",
	      f);
}

static int list_add(struct pcmc_list *l, const char *flag, const char *value)
{
	if (l->n == PCMC_MAX_FLAGS) {
		fprintf(stderr, "pcmc: more than %d %s options\n", PCMC_MAX_FLAGS, flag);
		return -EINVAL;
	}
	l->items[l->n++] = value;
	return 0;
}

static int parse_arith(const char *name, enum pcm_arith *out)
{
	if (pcm_arith_parse(name, out) == 0)
		return 0;
	fprintf(stderr, "pcmc: --arith: unknown arithmetic '%s' "
			"(expected double, q16.16, q32.32 or q42.22)\n",
		name);
	return -EINVAL;
}

static int parse_options(int argc, char **argv, struct pcmc_args *a)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' },
		{ "arith", required_argument, NULL, 'a' },
		{ "target", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "symbol", required_argument, NULL, 's' },
		{ "header", required_argument, NULL, 'H' },
		{ "unit", required_argument, NULL, 'U' },
		{ "keep-dir", required_argument, NULL, 'k' },
		{ "library", required_argument, NULL, 'l' },
		{ "export-entry", no_argument, NULL, 'e' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc = 0;

	while (rc == 0 && (c = getopt_long(argc, argv, "f:a:t:o:s:H:U:k:l:I:D:L:evh", opts,
					   NULL)) != -1) {
		switch (c) {
		case 'f': a->fabric_path = optarg; break;
		case 't': a->target_name = optarg; break;
		case 'o': a->out_path = optarg; break;
		case 's': a->symbol = optarg; break;
		case 'H': a->header_out = optarg; break;
		case 'U': a->unit_out = optarg; break;
		case 'k': a->keep_dir = optarg; break;
		case 'I': rc = list_add(&a->include_dirs, "-I", optarg); break;
		case 'D': rc = list_add(&a->defines, "-D", optarg); break;
		case 'L': rc = list_add(&a->lib_dirs, "-L", optarg); break;
		case 'l': rc = list_add(&a->libs, "-l", optarg); break;
		case 'e': a->export_entry = true; break;
		case 'v': a->verbose = true; break;
		case 'h': usage(stdout); exit(0);
		case 'a': rc = parse_arith(optarg, &a->arith); break;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	return rc;
}

static int collect_positionals(int argc, char **argv, struct pcmc_args *a)
{
	int n = argc - optind;

	if (n < 1) {
		fprintf(stderr, "pcmc %s: missing SPEC.yaml\n", a->cmd);
		return -EINVAL;
	}
	a->spec_path = argv[optind];
	for (int i = optind + 1; i < argc; i++) {
		if (a->n_sources == PCMC_MAX_SOURCES) {
			fprintf(stderr, "pcmc: more than %d C sources\n", PCMC_MAX_SOURCES);
			return -EINVAL;
		}
		a->sources[a->n_sources++] = argv[i];
	}
	return 0;
}

static int load_fabric(const char *path, struct pcm_fabric **out)
{
	struct pcm_diag diag;
	int rc;

	if (path)
		rc = pcm_fabric_load(path, out, &diag);
	else
		rc = pcm_fabric_parse("<built-in default fabric>", pcm_embedded_fabric_default,
				      pcm_embedded_fabric_default_len, out, &diag);
	if (rc < 0)
		fprintf(stderr, "pcmc: %s\n", diag.msg);
	return rc;
}

static int check_target(const char *name, const struct pcm_spec *spec)
{
	const struct pcm_target *target = pcm_target_find(name);
	struct pcm_diag diag;

	if (!target) {
		fprintf(stderr, "pcmc: --target: unknown target '%s' (run `pcmc targets`)\n",
			name);
		return -EINVAL;
	}
	if (pcm_target_check_spec(target, spec, &diag) < 0) {
		fprintf(stderr, "%s\npcmc: '%s' cannot run on target '%s'\n", diag.msg,
			spec->path, name);
		return -ENOTSUP;
	}
	return 0;
}

static int load_inputs(const struct pcmc_args *a, struct pcm_fabric **fabric,
		       struct pcm_spec **spec)
{
	struct pcm_diag diag;
	int rc;

	rc = load_fabric(a->fabric_path, fabric);
	if (rc < 0)
		return rc;
	rc = pcm_spec_load(a->spec_path, *fabric, spec, &diag);
	if (rc < 0) {
		fprintf(stderr, "%s\n", diag.msg);
		pcm_fabric_free(*fabric);
		return rc;
	}
	if (a->target_name) {
		rc = check_target(a->target_name, *spec);
		if (rc < 0) {
			pcm_spec_free(*spec);
			pcm_fabric_free(*fabric);
		}
	}
	return rc;
}

static int write_file(const char *path, const struct pcm_spec *spec,
		      const struct pcm_fabric *fabric, const struct pcm_codegen_opts *opts,
		      bool header)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f) {
		rc = -errno;
		fprintf(stderr, "pcmc: cannot write '%s': %s\n", path, strerror(errno));
		return rc;
	}
	rc = header ? pcm_codegen_header(spec, fabric, opts, f) : pcm_codegen_unit(spec, opts, f);
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (rc < 0)
		fprintf(stderr, "pcmc: writing '%s' failed: %s\n", path, strerror(-rc));
	return rc;
}

/* @handler_include: what the unit #includes for the handler. */
static int generate(const struct pcmc_args *a, const struct pcm_spec *spec,
		    const struct pcm_fabric *fabric, const char *header_path,
		    const char *unit_path, const char *symbol, const char *handler_include,
		    bool export_entry)
{
	struct pcm_codegen_opts opts = {
		.arith = a->arith,
		.symbol = symbol,
		.export_entry = export_entry,
		.handler_path = handler_include,
	};
	int rc = write_file(header_path, spec, fabric, &opts, true);

	if (rc == 0)
		rc = write_file(unit_path, spec, fabric, &opts, false);
	return rc;
}

static int make_scratch_dir(const struct pcmc_args *a, char *dir, size_t len)
{
	if (a->keep_dir) {
		snprintf(dir, len, "%s", a->keep_dir);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "pcmc: cannot create '%s': %s\n", dir, strerror(errno));
			return -errno;
		}
		return 0;
	}
	snprintf(dir, len, "%s/pcmc.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "pcmc: cannot create a scratch directory: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

static void remove_scratch(const struct pcmc_package *pkg, const char *header)
{
	pcmc_remove_outputs(pkg);
	unlink(header);
	unlink(pkg->unit);
	rmdir(pkg->scratch);
}

/* Names of the spec's float constants or variables, for the --arith note. */
static void float_names(const struct pcm_spec *spec, bool variables, char *out, size_t len)
{
	size_t used = 0;
	unsigned n = variables ? spec->n_variables : spec->n_constants;

	out[0] = '\0';
	for (unsigned i = 0; i < n && used < len; i++) {
		const char *name = variables ? spec->variables[i].name : spec->constants[i].name;
		bool is_float = variables ? spec->variables[i].type == PCM_NUM_FLOAT
					  : spec->constants[i].type == PCM_NUM_FLOAT;
		int w = is_float ? snprintf(out + used, len - used, "%s%s", used ? ", " : "", name)
				 : 0;

		used += w > 0 ? (size_t)w : 0;
	}
}

/*
 * --arith selects the pcm_fx format; pcm_float stays double. Say so, so that
 * runs of a package that computes on pcm_float with C operators are not taken
 * for a fixed-point study.
 */
static void note_arith(const struct pcmc_args *a, const struct pcm_spec *spec,
		       const struct pcmc_package_facts *facts)
{
	char consts[512], vars[512];

	if (a->arith == PCM_ARITH_KIND_DOUBLE)
		return;
	float_names(spec, false, consts, sizeof(consts));
	float_names(spec, true, vars, sizeof(vars));
	if (!facts->uses_fx)
		fprintf(stderr,
			"pcmc: warning: --arith %s has no effect on '%s': it uses no pcm_fx values "
			"(pcm_fx_*, get_var_fx, set_var_fx), so all its arithmetic, C operators on "
			"pcm_float included, stays in double\n",
			pcm_arith_name(a->arith), spec->name);
	else if (consts[0] || vars[0])
		fprintf(stderr,
			"pcmc: note: --arith %s applies to pcm_fx values only; in '%s' these stay "
			"pcm_float (double)\n",
			pcm_arith_name(a->arith), spec->name);
	else
		return;
	if (consts[0])
		fprintf(stderr, "pcmc:   float constants in double: %s\n", consts);
	if (vars[0])
		fprintf(stderr, "pcmc:   float variables in double: %s\n", vars);
}

static int build_package(const struct pcmc_args *a, const struct pcm_spec *spec,
			 const struct pcm_fabric *fabric, const char *dir)
{
	char header[PATH_MAX + 128], unit[PATH_MAX + 128], symbol[PCM_NAME_MAX + 16];
	char handler_copy[32];
	struct pcmc_package pkg = {
		.name = spec->name,
		.arith_macro = pcm_arith_macro(a->arith),
		.scratch = dir,
		.unit = unit,
		.n_sources = a->n_sources,
		.include_dirs = &a->include_dirs,
		.defines = &a->defines,
		.lib_dirs = &a->lib_dirs,
		.libs = &a->libs,
		.out_path = a->out_path,
		.verbose = a->verbose,
	};
	struct pcmc_package_facts facts;
	int rc;

	memcpy(pkg.sources, a->sources, sizeof(a->sources));
	snprintf(header, sizeof(header), "%s/%s.h", dir, spec->name);
	snprintf(unit, sizeof(unit), "%s/%s_pcmgen.c", dir, spec->name);
	snprintf(symbol, sizeof(symbol), "pcm_pkg_%s", spec->name);
	pcmc_copy_name(0, handler_copy, sizeof(handler_copy));
	rc = pcmc_copy_sources(&pkg);
	if (rc == 0)
		rc = generate(a, spec, fabric, header, unit, symbol, handler_copy, true);
	if (rc == 0)
		rc = pcmc_compile_package(&pkg, &facts);
	if (rc == 0) {
		note_arith(a, spec, &facts);
		printf("pcmc: built '%s' (%s, %s arithmetic%s%s%s) -> %s\n", spec->name,
		       spec->path, pcm_arith_name(a->arith), a->target_name ? ", target " : "",
		       a->target_name ? a->target_name : "", facts.linked_xxhash ? ", libxxhash" : "",
		       a->out_path);
	}
	if (!a->keep_dir)
		remove_scratch(&pkg, header);
	return rc;
}

static int cmd_build(const struct pcmc_args *a)
{
	char dir[PATH_MAX];
	struct pcm_fabric *fabric;
	struct pcm_spec *spec;
	int rc;

	if (a->n_sources < 1 || !a->out_path) {
		fprintf(stderr, "pcmc build: needs SPEC.yaml HANDLER.c and -o OUT.so\n");
		return -EINVAL;
	}
	rc = load_inputs(a, &fabric, &spec);
	if (rc < 0)
		return rc;
	rc = make_scratch_dir(a, dir, sizeof(dir));
	if (rc == 0)
		rc = build_package(a, spec, fabric, dir);
	pcm_spec_free(spec);
	pcm_fabric_free(fabric);
	return rc;
}

static int cmd_gen(const struct pcmc_args *a)
{
	char handler_abs[PATH_MAX];
	struct pcm_fabric *fabric;
	struct pcm_spec *spec;
	int rc;

	if (a->n_sources != 1 || !a->symbol || !a->header_out || !a->unit_out) {
		fprintf(stderr, "pcmc gen: needs SPEC.yaml HANDLER.c --symbol --header --unit\n");
		return -EINVAL;
	}
	if (!realpath(a->sources[0], handler_abs)) {
		rc = -errno;
		fprintf(stderr, "pcmc: cannot open handler '%s': %s\n", a->sources[0],
			strerror(errno));
		return rc;
	}
	rc = load_inputs(a, &fabric, &spec);
	if (rc < 0)
		return rc;
	rc = generate(a, spec, fabric, a->header_out, a->unit_out, a->symbol, handler_abs,
		      a->export_entry);
	pcm_spec_free(spec);
	pcm_fabric_free(fabric);
	return rc;
}

/* A signal whose value can go down: a LAST or MIN accumulator, or bytes in flight. */
static bool can_decrease(const struct pcm_spec_signal *s)
{
	return s->accum == PCM_SIG_ACCUM_LAST || s->accum == PCM_SIG_ACCUM_MIN ||
	       s->type == PCM_SIG_IN_FLIGHT;
}

/*
 * DELTA is the value minus its reference mod 2^64, as the SDK's reference VM
 * computes it, so on a signal that goes down by one it reads 2^64 - 1.
 */
static void warn_delta_wraparound(const struct pcm_spec *spec)
{
	for (unsigned i = 0; i < spec->n_signals; i++) {
		const struct pcm_spec_signal *s = &spec->signals[i];

		if (s->trigger != PCM_SIG_TRIGGER_DELTA || !can_decrease(s))
			continue;
		fprintf(stderr,
			"%s:%u:%u: signals[%u] '%s': warning: DELTA trigger on a signal that can "
			"decrease (%s, %s): value - reference is taken mod 2^64, so a decrease fires "
			"'%s %llu'; use PCM_SIG_TRIGGER_MAGNITUDE to fire on a change either way\n",
			spec->path, s->loc.line, s->loc.col, i, s->name, pcm_signal_name(s->type),
			pcm_accum_name(s->accum), pcm_trigger_op_text(s->op),
			(unsigned long long)s->threshold.num.u);
	}
}

static int cmd_check(const struct pcmc_args *a)
{
	struct pcm_fabric *fabric;
	struct pcm_spec *spec;
	int rc;

	if (!a->target_name) {
		fprintf(stderr, "pcmc check: needs --target NAME (run `pcmc targets`)\n");
		return -EINVAL;
	}
	rc = load_inputs(a, &fabric, &spec);
	if (rc < 0)
		return rc;
	warn_delta_wraparound(spec);
	printf("pcmc: '%s' (%s) passes the capability check for target '%s'\n", spec->name,
	       spec->path, a->target_name);
	pcm_spec_free(spec);
	pcm_fabric_free(fabric);
	return 0;
}

static void print_bits(const char *label, pcm_uint bits, unsigned count,
		       const char *(*name)(unsigned))
{
	printf("  %s:", label);
	for (unsigned i = 0; i < count; i++)
		if (bits & ((pcm_uint)1 << i))
			printf(" %s", name(i));
	putchar('\n');
}

static const char *signal_name_u(unsigned i)
{
	return pcm_signal_name((pcm_signal_t)i);
}

static const char *control_name_u(unsigned i)
{
	return pcm_control_name((pcm_control_t)i);
}

static int cmd_targets(void)
{
	for (size_t i = 0; pcm_targets[i]; i++) {
		const struct pcm_target *t = pcm_targets[i];

		printf("%s: %s\n", t->name, t->description);
		print_bits("signals", t->signals, PCM_SIG_COUNT, signal_name_u);
		print_bits("controls", t->controls, PCM_CTRL_COUNT, control_name_u);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pcmc_args a = { .arith = PCM_ARITH_KIND_DOUBLE };
	int rc;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	a.cmd = argv[1];
	if (strcmp(a.cmd, "targets") == 0)
		return cmd_targets();
	optind = 2;
	if (parse_options(argc, argv, &a) < 0 || collect_positionals(argc, argv, &a) < 0)
		return 2;
	if (strcmp(a.cmd, "build") == 0)
		rc = cmd_build(&a);
	else if (strcmp(a.cmd, "gen") == 0)
		rc = cmd_gen(&a);
	else if (strcmp(a.cmd, "check") == 0)
		rc = cmd_check(&a);
	else {
		fprintf(stderr, "pcmc: unknown command '%s'\n", a.cmd);
		usage(stderr);
		return 2;
	}
	return rc < 0 ? 1 : 0;
}
