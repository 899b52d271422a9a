/*
** ljlog reader exports: a minimal JSON writer (strings escaped, commas
** tracked).
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "export/json.h"

#include <inttypes.h>
#include <string.h>

/* -- Strings ------------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at s (len bytes left), 0 if
** the bytes there are not one (overlong, surrogate, past U+10FFFF, cut). */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	unsigned c = s[0];
	size_t n;
	uint32_t cp, min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Write s[0..len) as a JSON string literal. */
void json_quote(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	putc('"', f);
	for (size_t i = 0; i < len;) {
		unsigned c = p[i];
		size_t n;
		switch (c) {
		case '"':
			fputs("\\\"", f);
			i++;
			continue;
		case '\\':
			fputs("\\\\", f);
			i++;
			continue;
		case '\n':
			fputs("\\n", f);
			i++;
			continue;
		case '\r':
			fputs("\\r", f);
			i++;
			continue;
		case '\t':
			fputs("\\t", f);
			i++;
			continue;
		case '\b':
			fputs("\\b", f);
			i++;
			continue;
		case '\f':
			fputs("\\f", f);
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
		} else if ((n = utf8_len(p + i, len - i)) == 0) {
			fprintf(f, "\\u%04x", c); /* invalid UTF-8: the byte */
			i++;
		} else {
			fwrite(p + i, 1, n, f);
			i += n;
		}
	}
	putc('"', f);
}

/* -- Writer ------------------------------------------------------------------- */

/* Start writing to f. */
void json_init(struct json *j, FILE *f, int pretty)
{
	memset(j, 0, sizeof *j);
	j->f = f;
	j->pretty = pretty;
	j->first[0] = 1;
}

/* Comma, indentation and key before a member. */
static void member(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		putc(',', j->f);
	j->first[j->depth] = 0;
	if (j->pretty && j->depth > 0) {
		putc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	if (key) {
		json_quote(j->f, key, strlen(key));
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

/* Open a container. */
static void open_c(struct json *j, const char *key, char c)
{
	member(j, key);
	putc(c, j->f);
	if (j->depth < 31)
		j->depth++;
	j->first[j->depth] = 1;
}

/* Open an object. */
void json_obj(struct json *j, const char *key)
{
	open_c(j, key, '{');
}

/* Open an array. */
void json_arr(struct json *j, const char *key)
{
	open_c(j, key, '[');
}

/* Close the innermost container with c ('}' or ']'). */
void json_close(struct json *j, char c)
{
	int empty = j->first[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (j->pretty && !empty) {
		putc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	putc(c, j->f);
	if (j->depth == 0)
		putc('\n', j->f);
}

/* A string member. */
void json_str(struct json *j, const char *key, const char *s, size_t len)
{
	member(j, key);
	json_quote(j->f, s ? s : "", s ? len : 0);
}

/* A NUL-terminated string member. */
void json_cstr(struct json *j, const char *key, const char *s)
{
	json_str(j, key, s, s ? strlen(s) : 0);
}

/* An unsigned member. */
void json_u64(struct json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

/* A signed member. */
void json_i64(struct json *j, const char *key, int64_t v)
{
	member(j, key);
	fprintf(j->f, "%" PRId64, v);
}

/* A boolean member. */
void json_bool(struct json *j, const char *key, int v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

/* A null member. */
void json_null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

/* Write v with up to 3 decimals, trailing zeros dropped. */
void json_put_num(FILE *f, double v)
{
	char buf[64];
	if (!(v == v) || v > 1e300 || v < -1e300)
		v = 0;
	int n = snprintf(buf, sizeof buf, "%.3f", v);
	while (n > 0 && buf[n - 1] == '0')
		n--;
	if (n > 0 && buf[n - 1] == '.')
		n--;
	if (n == 2 && buf[0] == '-' && buf[1] == '0')
		buf[0] = '0', n = 1; /* -0 */
	fwrite(buf, 1, (size_t)n, f);
}

/* A number member. */
void json_num(struct json *j, const char *key, double v)
{
	member(j, key);
	json_put_num(j->f, v);
}
