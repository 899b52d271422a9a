/*
** ljlog reader exports: a minimal JSON writer (strings escaped, commas
** tracked), shared by `ljlog report --json` and the exports.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_EXPORT_JSON_H
#define LJLOG_READER_EXPORT_JSON_H

#include <stdint.h>
#include <stdio.h>

/* A JSON writer: tracks commas, nothing else. */
struct json {
	FILE *f;
	int depth;
	int first[32]; /* per depth: no member written yet */
	int pretty;
};

/* Start writing to f. */
void json_init(struct json *j, FILE *f, int pretty);

/* Open an object/array, as a member named key (NULL in arrays). */
void json_obj(struct json *j, const char *key);
void json_arr(struct json *j, const char *key);

/* Close the innermost object or array. */
void json_close(struct json *j, char c);

/* Members/elements (key NULL inside arrays). */
void json_str(struct json *j, const char *key, const char *s, size_t len);
void json_cstr(struct json *j, const char *key, const char *s);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);

/* Write s[0..len) as a JSON string literal: control characters
** and quotes escaped, bytes that are not valid UTF-8 as \u00XX. */
void json_quote(FILE *f, const char *s, size_t len);

/* A number member: a double, in a form that keeps 3 decimals
** (no inf or nan: 0). */
void json_num(struct json *j, const char *key, double v);

/* Write v as json_num does. */
void json_put_num(FILE *f, double v);

#endif
