// SPDX-License-Identifier: MIT
/*
 * pcmc - the handler package compiler.
 *
 *   pcmc build SPEC.yaml HANDLER.c [EXTRA.c...] [--fabric F.yaml] [--arith A]
 *              [--target T] -o OUT.so
 *   pcmc gen   SPEC.yaml HANDLER.c --symbol SYM --header OUT.h --unit OUT.c [...]
 *   pcmc check SPEC.yaml --target T [--fabric F.yaml]
 *   pcmc targets
 *
 * Extra C files are compiled alongside the handler and -l LIB links a library
 * (e.g. -l xxhash for an SDK helper header).
 *
 * build validates the spec, checks it against the target, writes the
 * accessor header and the pipeline unit into a scratch directory and runs the
 * C compiler ($CC, default cc) to make a shared object that pcmd, pcm-sim and
 * pcm-bench load. gen stops after writing the two files; meson uses it to
 * build the built-in policies through the same pipeline.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen.h"
#include "embedded.h"
#include "spec.h"
#include "target.h"

extern char **environ;

#define MAX_EXTRA_SOURCES 16
#define MAX_LIBS 8

struct pcmc_args {
	const char *cmd;
	const char *spec_path;
	const char *handler_path;
	const char *extra[MAX_EXTRA_SOURCES];
	int n_extra;
	const char *fabric_path;
	const char *target_name;
	const char *out_path;
	const char *symbol;
	const char *header_out;
	const char *unit_out;
	const char *keep_dir;
	const char *libs[MAX_LIBS];
	int n_libs;
	enum pcm_arith arith;
	bool export_entry;
};

static void usage(FILE *f)
{
	fputs("usage:\n"
	      "  pcmc build SPEC.yaml HANDLER.c [EXTRA.c...] [--fabric FABRIC.yaml]\n"
	      "             [--arith double|q16.16|q32.32|q42.22] [--target NAME] -o OUT.so\n"
	      "             [--keep-dir DIR] [-l LIB]...\n"
	      "  pcmc gen SPEC.yaml HANDLER.c --symbol SYM --header OUT.h --unit OUT.c\n"
	      "             [--fabric FABRIC.yaml] [--arith A] [--target NAME] [--export-entry]\n"
	      "  pcmc check SPEC.yaml --target NAME [--fabric FABRIC.yaml]\n"
	      "  pcmc targets\n"
	      "Without --fabric, the built-in default fabric profile is used.\n"
	      "The C compiler is $CC (default: cc).\n",
	      f);
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "f:a:t:o:s:H:U:k:l:eh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': a->fabric_path = optarg; break;
		case 't': a->target_name = optarg; break;
		case 'o': a->out_path = optarg; break;
		case 's': a->symbol = optarg; break;
		case 'H': a->header_out = optarg; break;
		case 'U': a->unit_out = optarg; break;
		case 'k': a->keep_dir = optarg; break;
		case 'l':
			if (a->n_libs == MAX_LIBS) {
				fprintf(stderr, "pcmc: more than %d -l libraries\n", MAX_LIBS);
				return -EINVAL;
			}
			a->libs[a->n_libs++] = optarg;
			break;
		case 'e': a->export_entry = true; break;
		case 'h': usage(stdout); exit(0);
		case 'a':
			if (pcm_arith_parse(optarg, &a->arith) < 0) {
				fprintf(stderr, "pcmc: --arith: unknown arithmetic '%s' "
						"(expected double, q16.16, q32.32 or q42.22)\n",
					optarg);
				return -EINVAL;
			}
			break;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	return 0;
}

static int collect_positionals(int argc, char **argv, struct pcmc_args *a)
{
	int n = argc - optind;

	if (n < 1) {
		fprintf(stderr, "pcmc %s: missing SPEC.yaml\n", a->cmd);
		return -EINVAL;
	}
	a->spec_path = argv[optind];
	if (n >= 2)
		a->handler_path = argv[optind + 1];
	for (int i = optind + 2; i < argc; i++) {
		if (a->n_extra == MAX_EXTRA_SOURCES) {
			fprintf(stderr, "pcmc: more than %d extra sources\n", MAX_EXTRA_SOURCES);
			return -EINVAL;
		}
		a->extra[a->n_extra++] = argv[i];
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

static int generate(const struct pcmc_args *a, const struct pcm_spec *spec,
		    const struct pcm_fabric *fabric, const char *header_path,
		    const char *unit_path, const char *symbol, bool export_entry)
{
	char handler_abs[PATH_MAX];
	struct pcm_codegen_opts opts = {
		.arith = a->arith,
		.symbol = symbol,
		.export_entry = export_entry,
		.handler_path = handler_abs,
	};
	int rc;

	if (!realpath(a->handler_path, handler_abs)) {
		rc = -errno;
		fprintf(stderr, "pcmc: cannot open handler '%s': %s\n", a->handler_path,
			strerror(errno));
		return rc;
	}
	rc = write_file(header_path, spec, fabric, &opts, true);
	if (rc == 0)
		rc = write_file(unit_path, spec, fabric, &opts, false);
	return rc;
}

static const char *include_dir(void)
{
	static const char *const candidates[] = { PCM_SOURCE_INCLUDE_DIR,
						  PCM_INSTALL_INCLUDE_DIR };
	const char *env = getenv("PCM_INCLUDE_DIR");
	char probe[PATH_MAX];

	if (env && *env)
		return env;
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		snprintf(probe, sizeof(probe), "%s/pcmh.h", candidates[i]);
		if (access(probe, R_OK) == 0)
			return candidates[i];
	}
	return PCM_INSTALL_INCLUDE_DIR;
}

static int run_compiler(char *const argv[])
{
	pid_t pid;
	int status, rc;

	rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (rc != 0) {
		fprintf(stderr, "pcmc: cannot run C compiler '%s': %s (set $CC)\n", argv[0],
			strerror(rc));
		return -rc;
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "pcmc: the C compiler failed on the package (see above)\n");
		return -EIO;
	}
	return 0;
}

static int compile_shared(const struct pcmc_args *a, const char *dir, const char *unit)
{
	char inc_gen[PATH_MAX + 2], inc_pkg[PATH_MAX + 2], inc_pcm[PATH_MAX + 2];
	char arith_def[64], handler_dir[PATH_MAX], libs[MAX_LIBS][PCM_NAME_MAX + 3];
	const char *cc = getenv("CC");
	char *argv[32 + MAX_EXTRA_SOURCES + MAX_LIBS];
	int n = 0;

	snprintf(handler_dir, sizeof(handler_dir), "%s", a->handler_path);
	snprintf(inc_gen, sizeof(inc_gen), "-I%s", dir);
	snprintf(inc_pkg, sizeof(inc_pkg), "-I%s", dirname(handler_dir));
	snprintf(inc_pcm, sizeof(inc_pcm), "-I%s", include_dir());
	snprintf(arith_def, sizeof(arith_def), "-D%s=1", pcm_arith_macro(a->arith));
	argv[n++] = (char *)(cc && *cc ? cc : "cc");
	argv[n++] = "-std=gnu11";
	argv[n++] = "-O2";
	argv[n++] = "-fPIC";
	argv[n++] = "-shared";
	argv[n++] = "-fvisibility=hidden";
	argv[n++] = inc_gen;
	argv[n++] = inc_pkg;
	argv[n++] = inc_pcm;
	argv[n++] = arith_def;
	argv[n++] = "-o";
	argv[n++] = (char *)a->out_path;
	argv[n++] = (char *)unit;
	for (int i = 0; i < a->n_extra; i++)
		argv[n++] = (char *)a->extra[i];
	for (int i = 0; i < a->n_libs; i++) {
		snprintf(libs[i], sizeof(libs[i]), "-l%s", a->libs[i]);
		argv[n++] = libs[i];
	}
	argv[n++] = "-lm";
	argv[n] = NULL;
	return run_compiler(argv);
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

static void remove_scratch(const char *dir, const char *header, const char *unit)
{
	unlink(header);
	unlink(unit);
	rmdir(dir);
}

static int cmd_build(const struct pcmc_args *a)
{
	char dir[PATH_MAX], header[PATH_MAX + 128], unit[PATH_MAX + 128], symbol[PCM_NAME_MAX + 16];
	struct pcm_fabric *fabric;
	struct pcm_spec *spec;
	int rc;

	if (!a->handler_path || !a->out_path) {
		fprintf(stderr, "pcmc build: needs SPEC.yaml HANDLER.c and -o OUT.so\n");
		return -EINVAL;
	}
	rc = load_inputs(a, &fabric, &spec);
	if (rc < 0)
		return rc;
	rc = make_scratch_dir(a, dir, sizeof(dir));
	if (rc < 0)
		goto out_free;
	snprintf(header, sizeof(header), "%s/%s.h", dir, spec->name);
	snprintf(unit, sizeof(unit), "%s/%s_pcmgen.c", dir, spec->name);
	snprintf(symbol, sizeof(symbol), "pcm_pkg_%s", spec->name);
	rc = generate(a, spec, fabric, header, unit, symbol, true);
	if (rc == 0)
		rc = compile_shared(a, dir, unit);
	if (rc == 0)
		printf("pcmc: built '%s' (%s, %s arithmetic%s%s) -> %s\n", spec->name,
		       spec->path, pcm_arith_name(a->arith), a->target_name ? ", target " : "",
		       a->target_name ? a->target_name : "", a->out_path);
	if (!a->keep_dir)
		remove_scratch(dir, header, unit);
out_free:
	pcm_spec_free(spec);
	pcm_fabric_free(fabric);
	return rc;
}

static int cmd_gen(const struct pcmc_args *a)
{
	struct pcm_fabric *fabric;
	struct pcm_spec *spec;
	int rc;

	if (!a->handler_path || !a->symbol || !a->header_out || !a->unit_out) {
		fprintf(stderr, "pcmc gen: needs SPEC.yaml HANDLER.c --symbol --header --unit\n");
		return -EINVAL;
	}
	rc = load_inputs(a, &fabric, &spec);
	if (rc < 0)
		return rc;
	rc = generate(a, spec, fabric, a->header_out, a->unit_out, a->symbol, a->export_entry);
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
