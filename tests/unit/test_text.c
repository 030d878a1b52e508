// SPDX-License-Identifier: MIT
/*
 * test_text.c - outside text on its way to a terminal, a CSV file or a JSON
 * document (pcm_text.h): the attack of a peer name holding a comma, a newline
 * and an escape sequence stays one field in each form; UTF-8 is kept and
 * bytes that are not UTF-8 are escaped; a buffer too small is cut at a whole
 * character or escape (a CSV field not at all); the _MAX sizes suffice for
 * every byte value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pcm_text.h"

#define ATTACK "evil,1,2\n666,\"forged\"\x1b[31mRED\r\x7f"

static void test_visible_escapes_controls_and_keeps_the_rest(void **state)
{
	char out[256];
	size_t n;

	(void)state;
	n = pcm_text_visible(out, sizeof(out), ATTACK);
	assert_int_equal(n, strlen(out));
	assert_string_equal(out, "evil,1,2\\x0a666,\"forged\"\\x1b[31mRED\\x0d\\x7f");
	pcm_text_visible(out, sizeof(out), "h\xc3\xa9llo \xe2\x82\xac \\ storage-0");
	assert_string_equal(out, "h\xc3\xa9llo \xe2\x82\xac \\ storage-0");
	/* C1 (U+009B, CSI), a bidi override (U+202E), a line separator (U+2028). */
	pcm_text_visible(out, sizeof(out), "a\xc2\x9b" "b\xe2\x80\xae" "c\xe2\x80\xa8");
	assert_string_equal(out, "a\\xc2\\x9bb\\xe2\\x80\\xaec\\xe2\\x80\\xa8");
	/* Not UTF-8: a lone continuation byte, an overlong '/', a surrogate, a cut sequence. */
	pcm_text_visible(out, sizeof(out), "\x80\xc0\xaf\xed\xa0\x80\xe2\x82");
	assert_string_equal(out, "\\x80\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x82");
}

static void test_csv_quotes_as_rfc4180_says(void **state)
{
	char out[256];

	(void)state;
	pcm_text_csv(out, sizeof(out), "host0");
	assert_string_equal(out, "host0");
	pcm_text_csv(out, sizeof(out), ATTACK);
	assert_string_equal(out, "\"evil,1,2\\x0a666,\"\"forged\"\"\\x1b[31mRED\\x0d\\x7f\"");
	pcm_text_csv(out, sizeof(out), "say \"hi\"");
	assert_string_equal(out, "\"say \"\"hi\"\"\"");
	/* No room for the whole field: nothing, never a field without its closing quote. */
	assert_int_equal(pcm_text_csv(out, 8, "a,bcdefgh"), 0);
	assert_string_equal(out, "");
}

static void test_json_escapes_and_stays_utf8(void **state)
{
	char out[256];

	(void)state;
	pcm_text_json(out, sizeof(out), ATTACK);
	assert_string_equal(out,
			    "evil,1,2\\u000a666,\\\"forged\\\"\\u001b[31mRED\\u000d\\u007f");
	pcm_text_json(out, sizeof(out), "\\ \xc3\xa9 \xc2\x85 \xe2\x80\xa9 \xff");
	assert_string_equal(out, "\\\\ \xc3\xa9 \\u0085 \\u2029 \\u00ff");
}

static void test_cut_at_a_whole_character_or_escape(void **state)
{
	char out[8];

	(void)state;
	/* "ab" fits, the escape of \n (4 bytes) would not with the NUL after "abc". */
	assert_int_equal(pcm_text_visible(out, 7, "abc\nd"), 3);
	assert_string_equal(out, "abc");
	/* A 3-byte character is never split. */
	assert_int_equal(pcm_text_visible(out, 4, "ab\xe2\x82\xac"), 2);
	assert_string_equal(out, "ab");
	assert_int_equal(pcm_text_json(out, 1, "abc"), 0);
	assert_string_equal(out, "");
	assert_int_equal(pcm_text_visible(out, 0, "abc"), 0);
}

/* Every byte value, at every position of a short string: the _MAX sizes hold it all. */
static void test_max_sizes_suffice_for_every_byte(void **state)
{
	char src[4], out[PCM_TEXT_JSON_MAX(3) + PCM_TEXT_CSV_MAX(3)];

	(void)state;
	for (unsigned b = 1; b < 256; b++) {
		for (unsigned pos = 0; pos < 3; pos++) {
			memset(src, b == 'x' ? 'y' : 'x', 3);
			src[pos] = (char)b;
			src[3] = '\0';
			size_t n = pcm_text_visible(out, PCM_TEXT_VISIBLE_MAX(3), src);

			assert_int_equal(n, strlen(out));
			assert_non_null(strchr(out, src[pos == 0 ? 2 : 0]));
			assert_true(pcm_text_json(out, PCM_TEXT_JSON_MAX(3), src) > 0);
			assert_true(pcm_text_csv(out, PCM_TEXT_CSV_MAX(3), src) > 0);
			for (const char *p = out; *p; p++)
				assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_visible_escapes_controls_and_keeps_the_rest),
	    cmocka_unit_test(test_csv_quotes_as_rfc4180_says),
	    cmocka_unit_test(test_json_escapes_and_stays_utf8),
	    cmocka_unit_test(test_cut_at_a_whole_character_or_escape),
	    cmocka_unit_test(test_max_sizes_suffice_for_every_byte),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
