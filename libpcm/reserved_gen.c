// SPDX-License-Identifier: MIT
/*
 * reserved_gen.c - build-time tool: the names a spec may not use, read from
 * what the C compiler itself sees.
 *
 *   pcm-reserved-gen OUTPUT.c LIBC.i PCM.i
 *
 * LIBC.i is `cc -E -dD` of a probe that includes every header a handler may
 * include after its generated header (the C11 library and <xxhash.h>): every
 * macro it defines and every identifier it mentions is taken, because a spec
 * constant is a macro and would rewrite any of them. PCM.i is the same for
 * pcm's handler-facing headers, which generated headers include before the
 * spec's names: only their macros matter there. Names starting with '_' are
 * left out (C reserves them at file scope, and the loader refuses them by
 * rule), and so are pcm_ and PCM_ names (refused by rule too).
 *
 * The output is a table sorted by strcmp() for bsearch(), each name with the
 * header it came from and whether it is a macro there.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strdup(), strndup() */
#endif
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
#define MAX_ORIGINS 256
#define NAME_MAX_LEN 128

struct name {
	char *text;
	size_t seq; /* order of discovery, to keep the first origin */
	unsigned origin;
	bool macro;
};

struct table {
	struct name *names;
	size_t n, cap;
	char *origins[MAX_ORIGINS];
	unsigned n_origins;
};

/* Where the scanner is: the stack of files the line markers describe. */
struct scan {
	char *files[MAX_DEPTH];
	unsigned depth;
};

static void die(const char *what)
{
	fprintf(stderr, "pcm-reserved-gen: %s: %s\n", what, strerror(errno ? errno : EINVAL));
	exit(1);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 20, len = 0, n;
	char *buf = malloc(cap + 1);

	if (!f || !buf)
		die(path);
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			if (!buf)
				die(path);
		}
	}
	if (ferror(f))
		die(path);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

static bool is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Names the loader refuses by rule anyway. */
static bool refused_by_rule(const char *s, size_t len)
{
	return s[0] == '_' || (len >= 4 && (strncmp(s, "pcm_", 4) == 0 || strncmp(s, "PCM_", 4) == 0));
}

/* "<stdio.h>" for "/usr/include/stdio.h"; "the C compiler" for "<built-in>". */
static unsigned origin_of(struct table *t, const char *file)
{
	char label[NAME_MAX_LEN + 3];
	const char *base = strrchr(file, '/');

	if (file[0] == '<')
		snprintf(label, sizeof(label), "the C compiler");
	else
		snprintf(label, sizeof(label), "<%.*s>", NAME_MAX_LEN - 1, base ? base + 1 : file);
	for (unsigned i = 0; i < t->n_origins; i++) {
		if (strcmp(t->origins[i], label) == 0)
			return i;
	}
	if (t->n_origins == MAX_ORIGINS)
		die("too many headers");
	t->origins[t->n_origins] = strdup(label);
	if (!t->origins[t->n_origins])
		die("strdup");
	return t->n_origins++;
}

static void add_name(struct table *t, const char *s, size_t len, const char *file, bool macro)
{
	struct name *n;

	if (len >= NAME_MAX_LEN || refused_by_rule(s, len))
		return;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 4096;
		t->names = realloc(t->names, t->cap * sizeof(*t->names));
		if (!t->names)
			die("realloc");
	}
	n = &t->names[t->n];
	n->text = strndup(s, len);
	if (!n->text)
		die("strndup");
	n->seq = t->n++;
	n->origin = origin_of(t, file);
	n->macro = macro;
}

/*
 * The file a name is charged to: the header the probe included directly
 * (depth 1), so that messages name <stdio.h> rather than <bits/types/FILE.h>;
 * for the compiler's predefined macros, the compiler.
 */
static const char *charged_file(const struct scan *sc)
{
	if (sc->depth >= 2)
		return sc->files[1];
	return sc->depth == 1 ? sc->files[0] : "<built-in>";
}

/* `# 12 "file" 1 3 4`: flag 1 enters the file, flag 2 returns to it. */
static void line_marker(struct scan *sc, const char *line)
{
	const char *q = strchr(line, '"'), *end;
	char *file;
	int flag = 0;

	if (!q)
		return;
	end = strchr(q + 1, '"');
	if (!end)
		return;
	file = strndup(q + 1, (size_t)(end - q - 1));
	if (!file)
		die("strndup");
	sscanf(end + 1, "%d", &flag);
	if (flag == 1 && sc->depth < MAX_DEPTH) {
		sc->files[sc->depth++] = file;
		return;
	}
	if (flag == 2 && sc->depth > 1)
		free(sc->files[--sc->depth]);
	if (sc->depth == 0)
		sc->depth = 1;
	free(sc->files[sc->depth - 1]);
	sc->files[sc->depth - 1] = file;
}

static const char *skip_literal(const char *p)
{
	char quote = *p++;

	while (*p && *p != quote && *p != '\n') {
		if (*p == '\\' && p[1])
			p++;
		p++;
	}
	return *p == quote ? p + 1 : p;
}

/* A pp-number: a digit, or '.' and a digit, then digits, letters, '.', and signs after e/p. */
static const char *skip_number(const char *p)
{
	p++;
	while (is_ident_char(*p) || *p == '.' ||
	       ((*p == '+' || *p == '-') && strchr("eEpP", p[-1])))
		p++;
	return p;
}

static void scan_tokens(struct table *t, const struct scan *sc, const char *p, const char *end)
{
	const char *file = charged_file(sc);

	while (p < end) {
		if (*p == '"' || *p == '\'') {
			p = skip_literal(p);
		} else if (isdigit((unsigned char)*p) ||
			   (*p == '.' && isdigit((unsigned char)p[1]))) {
			p = skip_number(p);
		} else if (is_ident_start(*p)) {
			const char *s = p;

			while (is_ident_char(*p))
				p++;
			add_name(t, s, (size_t)(p - s), file, false);
		} else {
			p++;
		}
	}
}

static void scan_define(struct table *t, const struct scan *sc, const char *p)
{
	const char *s;

	while (*p == ' ' || *p == '\t')
		p++;
	s = p;
	while (is_ident_char(*p))
		p++;
	if (p > s && is_ident_start(*s))
		add_name(t, s, (size_t)(p - s), charged_file(sc), true);
}

static void scan_file(struct table *t, const char *path, bool macros_only)
{
	struct scan sc = { 0 };
	char *text = read_all(path), *line = text;

	while (*line) {
		char *nl = strchr(line, '\n'), *p = line;

		if (!nl)
			nl = line + strlen(line);
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#') {
			p++;
			while (*p == ' ')
				p++;
			if (isdigit((unsigned char)*p))
				line_marker(&sc, p);
			else if (strncmp(p, "define", 6) == 0 && (p[6] == ' ' || p[6] == '\t'))
				scan_define(t, &sc, p + 6);
		} else if (!macros_only) {
			scan_tokens(t, &sc, p, nl);
		}
		line = *nl ? nl + 1 : nl;
	}
	for (unsigned i = 0; i < sc.depth; i++)
		free(sc.files[i]);
	free(text);
}

/* By name; for one name, a macro first, then the first header seen. */
static int compare_names(const void *a, const void *b)
{
	const struct name *x = a, *y = b;
	int c = strcmp(x->text, y->text);

	if (c)
		return c;
	if (x->macro != y->macro)
		return x->macro ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void write_table(struct table *t, const char *path)
{
	FILE *out = fopen(path, "w");
	size_t kept = 0;

	if (!out)
		die(path);
	qsort(t->names, t->n, sizeof(*t->names), compare_names);
	fputs("/* Generated by pcm-reserved-gen from the C compiler's view of the headers. */\n"
	      "#include \"reserved.h\"\n\n"
	      "const char *const pcm_reserved_origins[] = {\n",
	      out);
	for (unsigned i = 0; i < t->n_origins; i++)
		fprintf(out, "\t\"%s\",\n", t->origins[i]);
	fputs("};\n\nconst struct pcm_reserved_name pcm_reserved_names[] = {\n", out);
	for (size_t i = 0; i < t->n; i++) {
		if (i && strcmp(t->names[i].text, t->names[i - 1].text) == 0)
			continue;
		fprintf(out, "\t{ \"%s\", %u, %s },\n", t->names[i].text, t->names[i].origin,
			t->names[i].macro ? "true" : "false");
		kept++;
	}
	fprintf(out, "};\n\nconst size_t pcm_reserved_names_count = %zu;\n", kept);
	if (fclose(out) != 0)
		die(path);
}

static void free_table(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->names[i].text);
	for (unsigned i = 0; i < t->n_origins; i++)
		free(t->origins[i]);
	free(t->names);
}

int main(int argc, char **argv)
{
	struct table t = { 0 };

	if (argc != 4) {
		fprintf(stderr, "usage: pcm-reserved-gen OUTPUT.c LIBC.i PCM.i\n");
		return 2;
	}
	scan_file(&t, argv[2], false);
	scan_file(&t, argv[3], true);
	write_table(&t, argv[1]);
	free_table(&t);
	return 0;
}
