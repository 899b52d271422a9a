/*
** Unit tests: reader/cli/json.c (JSON strings and structure).
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Test thread. json_quote of s[0..len) as a malloc'd string. */
static char *quoted(const char *s, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	json_quote(f, s, len);
	fclose(f);
	return buf;
}

/* Test thread. Check one quoting. */
static void q(const char *in, size_t len, const char *want)
{
	char *got = quoted(in, len);
	cr_assert_str_eq(got, want);
	free(got);
}

Test(json, escapes_quotes_and_controls)
{
	q("plain", 5, "\"plain\"");
	q("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
	q("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"");
	q("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"");
	q("a\0b", 3, "\"a\\u0000b\"");
	q("", 0, "\"\"");
}

Test(json, utf8_kept_invalid_bytes_escaped)
{
	q("caf\xc3\xa9", 5, "\"caf\xc3\xa9\"");
	q("\xe2\x82\xac", 3, "\"\xe2\x82\xac\"");	  /* euro sign */
	q("\xf0\x9f\x98\x80", 4, "\"\xf0\x9f\x98\x80\""); /* emoji */
	q("\xff", 1, "\"\\u00ff\"");
	q("\xc3(", 2, "\"\\u00c3(\"");		/* bad continuation */
	q("\xc0\x80", 2, "\"\\u00c0\\u0080\""); /* overlong NUL */
	q("\xed\xa0\x80", 3, "\"\\u00ed\\u00a0\\u0080\""); /* surrogate */
	q("\xf4\x90\x80\x80", 4,
	  "\"\\u00f4\\u0090\\u0080\\u0080\"");	/* > U+10FFFF */
	q("\xe2\x82", 2, "\"\\u00e2\\u0082\""); /* cut short */
}

Test(json, structure_and_commas)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	struct json j;
	json_init(&j, f, 0);
	json_obj(&j, NULL);
	json_u64(&j, "a", 1);
	json_i64(&j, "b", -2);
	json_arr(&j, "c");
	json_bool(&j, NULL, 1);
	json_null(&j, NULL);
	json_obj(&j, NULL);
	json_close(&j, '}');
	json_close(&j, ']');
	json_cstr(&j, "d", "x\"y");
	json_arr(&j, "e");
	json_close(&j, ']');
	json_close(&j, '}');
	fclose(f);
	cr_assert_str_eq(
	    buf,
	    "{\"a\":1,\"b\":-2,\"c\":[true,null,{}],\"d\":\"x\\\"y\",\"e\":[]}\n");
	free(buf);
}
