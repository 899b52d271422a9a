/*
** ljlog CLI: the commands and what they share.
** Front ends only: all decoding is in the reader library.
*/
#ifndef LJLOG_READER_CLI_CLI_H
#define LJLOG_READER_CLI_CLI_H

#include <stdint.h>
#include <stdio.h>

/* Exit statuses shared by the commands. */
enum {
	CLI_OK = 0,	   /* complete and valid */
	CLI_TRUNCATED = 1, /* valid but truncated (or a writer that died) */
	CLI_USAGE = 2,	   /* usage error, or the file cannot be opened */
	CLI_CORRUPT = 3,   /* corrupt log */
	CLI_STOPPED = 4,   /* valid, ended early by the writer's write error */
};

/* Main thread. The commands: argv[0] is the command name. */
int cli_dump(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_record(int argc, char **argv);
int cli_folded(int argc, char **argv);
int cli_heap(int argc, char **argv);

struct decode_sink;

/* Main thread. 'ljlog dump' of HEAP blocks into sink: every object,
** reference and root when verbose, the summary always. */
void cli_dump_heap_sink(struct decode_sink *s, int verbose);

/* Main thread. Print "ljlog CMD: message" to stderr. */
void cli_err(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Main thread. The one FILE left after the options (argv[optind]), or NULL
** after a usage message on stderr (the caller returns CLI_USAGE). */
const char *cli_file_arg(const char *cmd, const char *usage, int argc,
			 char **argv);

/* Main thread. Exit status for a reader library result (0, -ENODATA, ...). */
int cli_status(int rc);

struct profile;

/* Main thread. Load path into a new profile (profile_load with flags),
** print its troubles to stderr (warnings too unless quiet_warnings); the
** exit status to return, or -1 to go on with *p, *rc and err filled. */
int cli_load(const char *cmd, const char *path, unsigned flags,
	     struct profile **p, int *rc, char *err, size_t errlen,
	     int quiet_warnings);

/* Any thread. Print s[0..len) to f as a C-like quoted string. */
void cli_quote(FILE *f, const char *s, size_t len);

/* -- JSON ------------------------------------------------------------------- */

/* A JSON writer: tracks commas, nothing else. */
struct json {
	FILE *f;
	int depth;
	int first[32]; /* per depth: no member written yet */
	int pretty;
};

/* Any thread. Start writing to f. */
void json_init(struct json *j, FILE *f, int pretty);

/* Any thread. Open an object/array, as a member named key (NULL in arrays). */
void json_obj(struct json *j, const char *key);
void json_arr(struct json *j, const char *key);

/* Any thread. Close the innermost object or array. */
void json_close(struct json *j, char c);

/* Any thread. Members/elements (key NULL inside arrays). */
void json_str(struct json *j, const char *key, const char *s, size_t len);
void json_cstr(struct json *j, const char *key, const char *s);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);

/* Any thread. Write s[0..len) as a JSON string literal: control characters
** and quotes escaped, bytes that are not valid UTF-8 as \u00XX. */
void json_quote(FILE *f, const char *s, size_t len);

#endif
