/* SPDX-License-Identifier: MIT */
/*
 * codegen.h - what pcmc emits for a package: the accessor header a handler
 * includes as "<algorithm>.h", and the translation unit that wraps the
 * handler in a pipeline specialised for its spec (see package.h).
 */
#ifndef PCM_CODEGEN_H
#define PCM_CODEGEN_H

#include <stdbool.h>
#include <stdio.h>

#include "spec.h"

enum pcm_arith {
	PCM_ARITH_KIND_DOUBLE = 0,
	PCM_ARITH_KIND_Q16_16,
	PCM_ARITH_KIND_Q32_32,
	PCM_ARITH_KIND_Q42_22,
	PCM_ARITH_KIND_COUNT,
};

struct pcm_codegen_opts {
	enum pcm_arith arith;
	/* C symbol of the exported struct pcm_package, e.g. "pcm_pkg_swift". */
	const char *symbol;
	/* Also export it as `pcm_package_entry`, for shared objects. */
	bool export_entry;
	/*
	 * Path of the handler source the unit #includes (absolute is safest); it
	 * may not contain '"', '\\' or a line break, which #include cannot name.
	 */
	const char *handler_path;
};

/**
 * pcm_arith_parse() - map "double", "q16.16", "q32.32", "q42.22" to enum pcm_arith.
 *
 * Return: 0, or -EINVAL for an unknown name.
 */
int pcm_arith_parse(const char *name, enum pcm_arith *out);

/* "double", "q16.16", ...; the C macro selecting it ("PCM_ARITH_Q16_16"). */
const char *pcm_arith_name(enum pcm_arith arith);
const char *pcm_arith_macro(enum pcm_arith arith);

/**
 * pcm_codegen_header() - write "<algorithm>.h": pcm's handler API, the fabric
 * and spec constants as typed values, snapshot offsets, signal bits, control
 * and variable indices, and the per-kind names the accessors of pcmh.h paste
 * a name onto (with a compile error for a name of another kind).
 *
 * No spec text is emitted as code: numbers are the loader's values, names are
 * checked C identifiers, the spec's path appears only in a sanitized comment.
 *
 * Return: 0, -ERANGE for a float constant C cannot write, -EIO on a write error.
 */
int pcm_codegen_header(const struct pcm_spec *spec, const struct pcm_fabric *fabric,
		       const struct pcm_codegen_opts *opts, FILE *out);

/**
 * pcm_codegen_unit() - write the C unit that defines the package's
 * specialised init/feed pipeline and struct pcm_package, then includes the
 * header and the handler (last, so that neither can change the pipeline).
 * Strings from the spec (description, path) are escaped into C literals.
 *
 * Return: 0, -EINVAL (missing symbol, missing or un-#include-able handler
 * path), -EIO on a write error.
 */
int pcm_codegen_unit(const struct pcm_spec *spec, const struct pcm_codegen_opts *opts, FILE *out);

/**
 * pcm_codegen_write_c_string() - write @text as a C string literal that means
 * @text whatever it holds: letters, digits and harmless punctuation as they
 * are, every other byte (quotes, backslashes, '?' of a trigraph, line breaks,
 * non-ASCII) as a three-digit octal escape.
 * @out: where to write.
 * @text: the text; NULL writes "".
 */
void pcm_codegen_write_c_string(FILE *out, const char *text);

#endif /* PCM_CODEGEN_H */
