// SPDX-License-Identifier: MIT
/*
 * pcmc_cc.c - pcmc's use of the C compiler (see pcmc_cc.h).
 *
 * A package builds the way the SDK's CMake builds it, plus what pcm needs:
 *
 *   $CC $CFLAGS -std=gnu11 -O2 -fPIC -fvisibility=hidden -DHANDLER_BUILD
 *       -DBUILD_ALGO_<NAME> -D<arith>=1 -D... -I<scratch> -I<pcm headers>
 *       -I<package dirs> -I... -MD -MF dep -c source -o object
 *   $CC $CFLAGS -shared -o OUT.so objects $LDFLAGS -L... -Wl,--no-undefined
 *       -Wl,--as-needed -l... [-lxxhash] -lm
 *
 * Each source is compiled from a copy in the scratch directory, so that its
 * quoted includes look there (where only generated files are) and then in
 * pcm's directory before the package's: pcm's ABI headers win over files of
 * the same name in the package. The dependency files tell which headers the
 * package used: <xxhash.h> means libxxhash is linked, and the package's own
 * files are searched for pcm_fx, for the --arith note.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include "codegen.h"
#include "pcmc_cc.h"
#include "progdir.h"

extern char **environ;

#define MAX_ARGS 512

/* A command being built; on allocation failure @oom is set and adds are ignored. */
struct cmd {
	char *argv[MAX_ARGS + 1];
	int n;
	bool oom;
};

static void cmd_add(struct cmd *c, const char *arg)
{
	char *copy;

	if (c->oom || c->n == MAX_ARGS) {
		c->oom = true;
		return;
	}
	copy = strdup(arg);
	if (!copy) {
		c->oom = true;
		return;
	}
	c->argv[c->n++] = copy;
}

static void cmd_addf(struct cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void cmd_addf(struct cmd *c, const char *fmt, ...)
{
	char buf[PATH_MAX + 64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		c->oom = true;
		return;
	}
	cmd_add(c, buf);
}

static void cmd_free(struct cmd *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->argv[i]);
	c->n = 0;
}

/*
 * The words of $@var split as a shell would (quotes, backslashes), or
 * @fallback when unset or empty. Command substitution is refused.
 */
static int cmd_add_env_words(struct cmd *c, const char *var, const char *fallback)
{
	const char *value = getenv(var);
	wordexp_t we;
	int rc;

	if (!value || !*value) {
		if (fallback)
			cmd_add(c, fallback);
		return 0;
	}
	rc = wordexp(value, &we, WRDE_NOCMD);
	if (rc != 0) {
		fprintf(stderr, "pcmc: cannot split $%s='%s' into words%s\n", var, value,
			rc == WRDE_CMDSUB ? ": command substitution is not allowed" : "");
		return -EINVAL;
	}
	for (size_t i = 0; i < we.we_wordc; i++)
		cmd_add(c, we.we_wordv[i]);
	wordfree(&we);
	if (fallback && c->n == 0)
		cmd_add(c, fallback);
	return 0;
}

static bool env_mentions(const char *var, const char *needle)
{
	const char *value = getenv(var);

	return value && strstr(value, needle);
}

static void print_cmd(const struct cmd *c)
{
	for (int i = 0; i < c->n; i++)
		fprintf(stderr, "%s%s", i ? " " : "pcmc: ", c->argv[i]);
	fputc('\n', stderr);
}

static int cmd_run(struct cmd *c, bool verbose)
{
	pid_t pid;
	int status, rc;

	if (c->oom) {
		fprintf(stderr, "pcmc: out of memory building the compiler's command line\n");
		return -ENOMEM;
	}
	c->argv[c->n] = NULL;
	if (verbose)
		print_cmd(c);
	rc = posix_spawnp(&pid, c->argv[0], NULL, NULL, c->argv, environ);
	if (rc != 0) {
		fprintf(stderr, "pcmc: cannot run the C compiler '%s': %s (set $CC)\n", c->argv[0],
			strerror(rc));
		return -rc;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "pcmc: the C compiler failed on the package (see above)\n");
		return -EIO;
	}
	return 0;
}

/* pcm's headers ------------------------------------------------------------- */

static bool has_pcm_headers(const char *dir)
{
	char probe[PATH_MAX];

	return snprintf(probe, sizeof(probe), "%s/pcmh.h", dir) < (int)sizeof(probe) &&
	       access(probe, R_OK) == 0;
}

/* `pkg-config --variable=includedir pcm`, or "" when that fails. */
static void pkg_config_includedir(char *out, size_t len)
{
	char *argv[] = { "pkg-config", "--variable=includedir", "pcm", NULL };
	posix_spawn_file_actions_t fa;
	int fds[2], status;
	ssize_t n = 0;
	pid_t pid;

	out[0] = '\0';
	if (pipe(fds) < 0)
		return;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", 0, 0);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) == 0) {
		close(fds[1]);
		fds[1] = -1;
		n = read(fds[0], out, len - 1);
		waitpid(pid, &status, 0);
		if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			n = 0;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	out[n > 0 ? n : 0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* @dir made canonical into @out, for the compiler's messages. */
static int found_dir(const char *dir, char *out, size_t len)
{
	char real[PATH_MAX];
	const char *shown = realpath(dir, real) ? real : dir;

	return snprintf(out, len, "%s", shown) < (int)len ? 0 : -ENAMETOOLONG;
}

int pcmc_include_dir(char *out, size_t len)
{
	const char *env = getenv("PCM_INCLUDE_DIR");
	char dir[PATH_MAX], candidate[PATH_MAX + 64], pc[PATH_MAX];

	if (env && *env) {
		if (has_pcm_headers(env))
			return found_dir(env, out, len);
		fprintf(stderr, "pcmc: $PCM_INCLUDE_DIR (%s) has no pcmh.h\n", env);
		return -ENOENT;
	}
	pcm_prog_dir(dir, sizeof(dir));
	/* Installed: PCM_INCLUDEDIR_FROM_BINDIR is relative to bindir, or absolute. */
	if (PCM_INCLUDEDIR_FROM_BINDIR[0] == '/')
		snprintf(candidate, sizeof(candidate), "%s/pcm", PCM_INCLUDEDIR_FROM_BINDIR);
	else
		snprintf(candidate, sizeof(candidate), "%s/%s/pcm", dir, PCM_INCLUDEDIR_FROM_BINDIR);
	if (dir[0] && has_pcm_headers(candidate))
		return found_dir(candidate, out, len);
	/* Uninstalled: the build tree's copies (libpcm/uninstalled/meson.build). */
	snprintf(candidate, sizeof(candidate), "%s/../libpcm/uninstalled", dir);
	if (dir[0] && has_pcm_headers(candidate))
		return found_dir(candidate, out, len);
	pkg_config_includedir(pc, sizeof(pc));
	snprintf(candidate, sizeof(candidate), "%s/pcm", pc);
	if (pc[0] && has_pcm_headers(candidate))
		return found_dir(candidate, out, len);
	fprintf(stderr,
		"pcmc: cannot find pcm's headers (pcmh.h): not in $PCM_INCLUDE_DIR, beside this "
		"program (%s/%s/pcm, or %s/../libpcm/uninstalled in a build tree), nor through "
		"`pkg-config --variable=includedir pcm`; set PCM_INCLUDE_DIR\n",
		dir, PCM_INCLUDEDIR_FROM_BINDIR, dir);
	return -ENOENT;
}

/* Copies ----------------------------------------------------------------------- */

void pcmc_copy_name(int i, char *out, size_t len)
{
	snprintf(out, len, "pcm_src_%d.c", i);
}

static void scratch_path(const struct pcmc_package *pkg, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", pkg->scratch, name);
}

static int copy_one(const struct pcmc_package *pkg, int i)
{
	char name[32], path[PATH_MAX + 40], buf[65536];
	FILE *in = fopen(pkg->sources[i], "rb"), *out;
	size_t n;
	int rc = 0;

	if (!in) {
		rc = -errno;
		fprintf(stderr, "pcmc: cannot open '%s': %s\n", pkg->sources[i], strerror(errno));
		return rc;
	}
	pcmc_copy_name(i, name, sizeof(name));
	scratch_path(pkg, name, path, sizeof(path));
	out = fopen(path, "w");
	if (!out) {
		rc = -errno;
		fprintf(stderr, "pcmc: cannot write '%s': %s\n", path, strerror(errno));
		fclose(in);
		return rc;
	}
	/* Diagnostics and __FILE__ keep naming the package's own file. */
	fputs("#line 1 ", out);
	pcm_codegen_write_c_string(out, pkg->sources[i]);
	fputc('\n', out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	if (ferror(in))
		rc = -EIO;
	fclose(in);
	if (fclose(out) != 0 && rc == 0)
		rc = -EIO;
	if (rc)
		fprintf(stderr, "pcmc: copying '%s' to '%s' failed\n", pkg->sources[i], path);
	return rc;
}

int pcmc_copy_sources(const struct pcmc_package *pkg)
{
	int rc = 0;

	for (int i = 0; i < pkg->n_sources && rc == 0; i++)
		rc = copy_one(pkg, i);
	return rc;
}

void pcmc_remove_outputs(const struct pcmc_package *pkg)
{
	char name[32], path[PATH_MAX + 40];

	for (int i = 0; i < pkg->n_sources; i++) {
		pcmc_copy_name(i, name, sizeof(name));
		scratch_path(pkg, name, path, sizeof(path));
		unlink(path);
		snprintf(name, sizeof(name), "pcm_obj_%d.o", i);
		scratch_path(pkg, name, path, sizeof(path));
		unlink(path);
		snprintf(name, sizeof(name), "pcm_obj_%d.d", i);
		scratch_path(pkg, name, path, sizeof(path));
		unlink(path);
	}
}

/* Compiling ------------------------------------------------------------------- */

/* The package's own directories: where its sources are, as real paths. */
struct dirs {
	char path[PCMC_MAX_SOURCES + PCMC_MAX_FLAGS][PATH_MAX];
	int n;
};

static void dirs_add(struct dirs *d, const char *file_or_dir, bool is_file)
{
	char real[PATH_MAX], copy[PATH_MAX];

	snprintf(copy, sizeof(copy), "%s", file_or_dir);
	if (!realpath(is_file ? dirname(copy) : copy, real))
		return;
	for (int i = 0; i < d->n; i++) {
		if (strcmp(d->path[i], real) == 0)
			return;
	}
	if (d->n < (int)(sizeof(d->path) / sizeof(d->path[0])))
		snprintf(d->path[d->n++], PATH_MAX, "%s", real);
}

static void package_dirs(const struct pcmc_package *pkg, struct dirs *own, struct dirs *all)
{
	own->n = 0;
	for (int i = 0; i < pkg->n_sources; i++)
		dirs_add(own, pkg->sources[i], true);
	*all = *own;
	for (int i = 0; i < pkg->include_dirs->n; i++)
		dirs_add(all, pkg->include_dirs->items[i], false);
}

static void add_common_flags(struct cmd *c, const struct pcmc_package *pkg, const char *pcm_inc,
			     const struct dirs *own)
{
	char upper[128];
	size_t i;

	for (i = 0; pkg->name[i] && i < sizeof(upper) - 1; i++)
		upper[i] = (char)(pkg->name[i] >= 'a' && pkg->name[i] <= 'z' ? pkg->name[i] - 32
									     : pkg->name[i]);
	upper[i] = '\0';
	cmd_add(c, "-std=gnu11");
	cmd_add(c, "-O2");
	cmd_add(c, "-fPIC");
	cmd_add(c, "-fvisibility=hidden");
	cmd_add(c, "-DHANDLER_BUILD");
	cmd_addf(c, "-DBUILD_ALGO_%s", upper);
	cmd_addf(c, "-D%s=1", pkg->arith_macro);
	for (int k = 0; k < pkg->defines->n; k++)
		cmd_addf(c, "-D%s", pkg->defines->items[k]);
	cmd_addf(c, "-I%s", pkg->scratch);
	cmd_addf(c, "-I%s", pcm_inc);
	for (int k = 0; k < own->n; k++)
		cmd_addf(c, "-I%s", own->path[k]);
	for (int k = 0; k < pkg->include_dirs->n; k++)
		cmd_addf(c, "-I%s", pkg->include_dirs->items[k]);
}

/* Translation unit @i: 0 is the generated unit (with the handler), then the extra sources. */
static int compile_one(const struct pcmc_package *pkg, int i, const char *pcm_inc,
		       const struct dirs *own)
{
	char name[32], src[PATH_MAX + 40], obj[PATH_MAX + 40], dep[PATH_MAX + 40];
	struct cmd c = { 0 };
	int rc;

	if (i == 0) {
		snprintf(src, sizeof(src), "%s", pkg->unit);
	} else {
		pcmc_copy_name(i, name, sizeof(name));
		scratch_path(pkg, name, src, sizeof(src));
	}
	snprintf(name, sizeof(name), "pcm_obj_%d.o", i);
	scratch_path(pkg, name, obj, sizeof(obj));
	snprintf(name, sizeof(name), "pcm_obj_%d.d", i);
	scratch_path(pkg, name, dep, sizeof(dep));
	rc = cmd_add_env_words(&c, "CC", "cc");
	if (rc == 0)
		rc = cmd_add_env_words(&c, "CFLAGS", NULL);
	if (rc == 0) {
		add_common_flags(&c, pkg, pcm_inc, own);
		cmd_add(&c, "-MD");
		cmd_add(&c, "-MF");
		cmd_add(&c, dep);
		cmd_add(&c, "-c");
		cmd_add(&c, src);
		cmd_add(&c, "-o");
		cmd_add(&c, obj);
		rc = cmd_run(&c, pkg->verbose);
	}
	cmd_free(&c);
	return rc;
}

/* Make's dependency syntax: words split by blanks, "\ " a space, "\<newline>" a blank. */
static char *next_dep(char **cursor)
{
	char *p = *cursor, *word, *w;

	while (*p == ' ' || *p == '\t' || *p == '\n' || (*p == '\\' && p[1] == '\n'))
		p += *p == '\\' ? 2 : 1;
	if (!*p)
		return NULL;
	word = w = p;
	while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
		if (*p == '\\' && p[1] == '\n')
			break;
		if (*p == '\\' && p[1] == ' ')
			p++;
		*w++ = *p++;
	}
	if (*p)
		p++;
	*w = '\0';
	*cursor = p;
	return word;
}

static bool under_dir(const char *path, const struct dirs *d)
{
	char real[PATH_MAX];

	if (!realpath(path, real))
		return false;
	for (int i = 0; i < d->n; i++) {
		size_t n = strlen(d->path[i]);

		if (strncmp(real, d->path[i], n) == 0 && real[n] == '/')
			return true;
	}
	return false;
}

/* Whether a file of the package's own uses fixed point (a plain text search). */
static bool mentions_fx(const char *path)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "pcm_fx") || strstr(line, "_var_fx") || strstr(line, "pcm_algo_");
	fclose(f);
	return found;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static void read_deps(const struct pcmc_package *pkg, int i, const struct dirs *all,
		      struct pcmc_package_facts *facts)
{
	char name[32], dep[PATH_MAX + 40], *text, *cursor, *word;
	FILE *f;
	long size;

	snprintf(name, sizeof(name), "pcm_obj_%d.d", i);
	scratch_path(pkg, name, dep, sizeof(dep));
	f = fopen(dep, "r");
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	text = size > 0 ? calloc(1, (size_t)size + 1) : NULL;
	if (text && fread(text, 1, (size_t)size, f) == (size_t)size) {
		cursor = strchr(text, ':');
		cursor = cursor ? cursor + 1 : text + size;
		while ((word = next_dep(&cursor)) != NULL) {
			if (strcmp(base_name(word), "xxhash.h") == 0)
				facts->linked_xxhash = true;
			if (strncmp(base_name(word), "pcm_src_", 8) == 0 || under_dir(word, all))
				facts->uses_fx |= mentions_fx(word);
		}
	}
	free(text);
	fclose(f);
}

static bool listed(const struct pcmc_list *l, const char *item)
{
	for (int i = 0; i < l->n; i++) {
		if (strcmp(l->items[i], item) == 0)
			return true;
	}
	return false;
}

static int link_package(const struct pcmc_package *pkg, const struct pcmc_package_facts *facts)
{
	char name[32], obj[PATH_MAX + 40];
	struct cmd c = { 0 };
	int rc = cmd_add_env_words(&c, "CC", "cc");

	if (rc == 0)
		rc = cmd_add_env_words(&c, "CFLAGS", NULL);
	if (rc == 0) {
		cmd_add(&c, "-shared");
		cmd_add(&c, "-o");
		cmd_add(&c, pkg->out_path);
		for (int i = 0; i < pkg->n_sources; i++) {
			snprintf(name, sizeof(name), "pcm_obj_%d.o", i);
			scratch_path(pkg, name, obj, sizeof(obj));
			cmd_add(&c, obj);
		}
		rc = cmd_add_env_words(&c, "LDFLAGS", NULL);
	}
	if (rc == 0) {
		for (int i = 0; i < pkg->lib_dirs->n; i++)
			cmd_addf(&c, "-L%s", pkg->lib_dirs->items[i]);
		/* A missing library fails here, not when the package is loaded. A
		 * sanitizer's runtime comes with the program, so it is let through. */
		if (!env_mentions("CC", "-fsanitize") && !env_mentions("CFLAGS", "-fsanitize") &&
		    !env_mentions("LDFLAGS", "-fsanitize"))
			cmd_add(&c, "-Wl,--no-undefined");
		cmd_add(&c, "-Wl,--as-needed");
		for (int i = 0; i < pkg->libs->n; i++)
			cmd_addf(&c, "-l%s", pkg->libs->items[i]);
		if (facts->linked_xxhash && !listed(pkg->libs, "xxhash"))
			cmd_add(&c, "-lxxhash");
		cmd_add(&c, "-lm");
		rc = cmd_run(&c, pkg->verbose);
	}
	cmd_free(&c);
	return rc;
}

int pcmc_compile_package(const struct pcmc_package *pkg, struct pcmc_package_facts *facts)
{
	static struct dirs own, all; /* large; pcmc builds one package per run */
	char pcm_inc[PATH_MAX];
	int rc = pcmc_include_dir(pcm_inc, sizeof(pcm_inc));

	memset(facts, 0, sizeof(*facts));
	if (rc)
		return rc;
	package_dirs(pkg, &own, &all);
	/* Unit 0 holds the handler (source 0); sources 1.. are their own units. */
	for (int i = 0; i < pkg->n_sources && rc == 0; i++) {
		rc = compile_one(pkg, i, pcm_inc, &own);
		if (rc == 0)
			read_deps(pkg, i, &all, facts);
	}
	if (rc == 0)
		rc = link_package(pkg, facts);
	return rc;
}
