/*
** ljlog CLI: the commands and what they share.
** Front ends only: all decoding is in the reader library.
*/
#ifndef LJLOG_READER_CLI_CLI_H
#define LJLOG_READER_CLI_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export/json.h"

/* Exit statuses shared by the commands. */
enum {
	CLI_OK = 0,	   /* complete and valid */
	CLI_TRUNCATED = 1, /* valid but truncated (or a writer that died) */
	CLI_USAGE = 2,	   /* usage error, or the file cannot be opened */
	CLI_CORRUPT = 3,   /* corrupt log */
	CLI_STOPPED = 4,   /* valid, ended early by the writer's write error */
	CLI_LOSSES = 5,	   /* complete and valid, but events were dropped */
};

/* Main thread. The commands: argv[0] is the command name. */
int cli_dump(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_record(int argc, char **argv);
int cli_folded(int argc, char **argv);
int cli_export(int argc, char **argv);
int cli_annotate(int argc, char **argv);

/* Main thread. The sampling interval (ns) a log's INTRO options name; 0
** when they name none or do not parse; *wall: of wall-clock time. */
uint64_t cli_sample_interval(const char *options, int *wall);
int cli_flame(int argc, char **argv);
int cli_heap(int argc, char **argv);
int cli_top(int argc, char **argv);

struct decode_sink;

/* Main thread. 'ljlog dump' of HEAP blocks into sink: every object,
** reference and root when verbose, the summary always. */
void cli_dump_heap_sink(struct decode_sink *s, int verbose);

/* Main thread. Print "ljlog CMD: message" to stderr. */
void cli_err(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Main thread. The one FILE left after the options (argv[optind]), or NULL
** after a one-line message on stderr, the caller then returning
** cli_file_rc: CLI_USAGE (no FILE, two), CLI_TRUNCATED (an empty file) or
** CLI_CORRUPT (not a log): every reading command says the same. */
const char *cli_file_arg(const char *cmd, const char *usage, int argc,
			 char **argv);
extern int cli_file_rc;

/* Main thread. After a usage error: "see 'ljlog CMD --help'" on stderr. */
void cli_see_help(const char *cmd);

/* Main thread. Follow mode (dump --follow, top): 1 when the writer of a
** log (INTRO pid, 0 before it is known) is gone, so that a log that stops
** growing will not grow again. */
int cli_writer_gone(uint64_t pid);

/* Main thread. Exit status for a reader library result (0, -ENODATA, ...). */
int cli_status(int rc);

struct profile;

/* Main thread. Load path into a new profile (profile_load with flags),
** print its troubles to stderr (warnings too unless quiet_warnings); the
** exit status to return, or -1 to go on with *p, *rc and err filled. */
int cli_load(const char *cmd, const char *path, unsigned flags,
	     struct profile **p, int *rc, char *err, size_t errlen,
	     int quiet_warnings);

/* Main thread. The FILEs left after the options (one or more, each
** checked as cli_file_arg checks one), *n of them; NULL after a message,
** the caller then returning cli_file_rc. */
const char *const *cli_files_arg(const char *cmd, int argc, char **argv,
				 size_t *n);

/* Main thread. 0 when path may be a log (as cli_file_arg checks one), else
** the exit status after a one-line message. */
int cli_files_check(const char *cmd, const char *path);

/* Main thread. cli_load for several logs merged into one profile
** (profile_decode_logs): each log's trouble is said with its name; *rc is
** the worst. */
int cli_load_logs(const char *cmd, const char *const *paths, size_t n,
		  unsigned flags, struct profile **p, int *rc, char *err,
		  size_t errlen, int quiet_warnings);

/* Main thread. cli_load_logs into *p, a new profile the caller has set up
** (profile_narrow, ...); freed and NULL when the exit status is returned. */
int cli_load_into(const char *cmd, const char *const *paths, size_t n,
		  struct profile **p, int *rc, char *err, size_t errlen,
		  int quiet_warnings);

/* -- Narrowing (narrow.c): --focus, --ignore, --from, --to, --from-mark ---- */

enum {
	CLI_O_FOCUS = 0x1000,
	CLI_O_IGNORE,
	CLI_O_FROM,
	CLI_O_TO,
	CLI_O_FROM_MARK,
};

/* clang-format off */
/* The long options, for a command's getopt_long table. */
#define CLI_NARROW_OPTIONS                                                     \
	{"focus", required_argument, NULL, CLI_O_FOCUS},                       \
	    {"ignore", required_argument, NULL, CLI_O_IGNORE},                 \
	    {"from", required_argument, NULL, CLI_O_FROM},                     \
	    {"to", required_argument, NULL, CLI_O_TO},                         \
	    {"from-mark", required_argument, NULL, CLI_O_FROM_MARK}

/* Their help lines. */
#define CLI_NARROW_HELP                                                        \
	"  --focus REGEX   only the stacks through a frame whose name\n"        \
	"                  matches (samples; call paths; a site by its\n"       \
	"                  function), as pprof's -focus\n"                      \
	"  --ignore REGEX  without the stacks through a frame that matches\n"   \
	"  --from T, --to T  only what happened from T to T after the (first)\n" \
	"                  log's start (500ms, 2s): samples, allocations,\n"    \
	"                  frees, calls entered, time; GC and zones whole\n"    \
	"  --from-mark NAME  T counts from the first mark NAME (ljlog.mark)\n"
/* clang-format on */

/* What they say. */
struct cli_narrow {
	const char *focus, *ignore, *from_mark;
	uint64_t from_ns, to_ns;
	int from_set, to_set;
};

/* The window they make, from the first log's start (to: UINT64_MAX). */
struct cli_window {
	int win;
	uint64_t from_ns, to_ns;
};

/* Main thread. Take option o (getopt's return) with arg into n: 1 taken,
** 0 not a narrowing option, CLI_USAGE after a message. */
int cli_narrow_opt(const char *cmd, struct cli_narrow *n, int o,
		   const char *arg);

/* Main thread. Whether any narrowing was asked for. */
int cli_narrow_any(const struct cli_narrow *n);

/* Main thread. -1 when the options agree, else the exit status after a
** message. */
int cli_narrow_check(const char *cmd, const struct cli_narrow *n);

/* Main thread. The window of n over the logs (a first pass finds
** --from-mark's mark); -1, or the exit status after a message (1: no
** such mark, the marks listed). */
int cli_narrow_window(const char *cmd, const char *const *paths, size_t npath,
		      const struct cli_narrow *n, struct cli_window *w);

/* --base BASE, repeated: the base logs of a comparison. */
#define CLI_MAX_BASES 256
struct cli_bases {
	const char *path[CLI_MAX_BASES];
	size_t n;
};

/* Main thread. One more --base path: -1, or CLI_USAGE after a message. */
int cli_base_add(const char *cmd, struct cli_bases *b, const char *path);

/* Main thread. Check and load the base logs into *q as cli_load_narrow
** loads (quietly: the run's warnings were said); -1, or the exit status
** after a message. */
int cli_load_bases(const char *cmd, const struct cli_bases *b, unsigned flags,
		   const struct cli_narrow *nw, struct profile **q, int *rc,
		   char *err, size_t errlen);

/* Main thread. cli_load_logs, narrowed as n says (call paths filtered on
** the call tree: PROFILE_CALLTREE is added with --focus or --ignore). */
int cli_load_narrow(const char *cmd, const char *const *paths, size_t npath,
		    unsigned flags, const struct cli_narrow *n,
		    struct profile **p, int *rc, char *err, size_t errlen,
		    int quiet_warnings);

/* Main thread. How to name the logs in a heading: the one path, or "A and
** N more logs" (in buf of len). */
const char *cli_logs_label(const char *const *paths, size_t n, char *buf,
			   size_t len);

/* Main thread. Write profile p (loaded from path, with result rc) with
** write() to outp ('-': standard output), free p and say what went wrong
** (write returns 0, -ENODATA: nothing to export, -EIO: errno says, or
** -ENOMEM); what names the format. A failed write leaves no partial file
** (a regular file is removed; /dev/null and the like are not).
** The exit status. */
int cli_export_write(const char *cmd, const char *what, const char *path,
		     const char *outp, struct profile *p,
		     int (*write)(const struct profile *p, FILE *out), int rc);

/* An export's output: OUT.tmp.PID renamed to OUT at the end (out.c). */
struct cli_out {
	FILE *f;	  /* write here */
	const char *path; /* OUT ('-': standard output) */
	char tmp[4096];	  /* the temporary file, "" none */
};

/* Main thread. Open OUT for writing ('-': standard output; a file that is
** not regular, such as /dev/null, in place; else a temporary file next to
** it, removed on SIGINT, SIGTERM and SIGHUP); -1, or CLI_USAGE after a
** message. */
int cli_out_open(const char *cmd, const char *outp, struct cli_out *o);

/* Main thread. Close o: with keep, flush and rename the temporary file to
** OUT; else (or when that fails) remove it. 0 or -errno. */
int cli_out_close(struct cli_out *o, int keep);

/* Any thread. Print s[0..len) to f as a C-like quoted string. */
void cli_quote(FILE *f, const char *s, size_t len);

/* Any thread. A time (ns) with its unit, ms under a second, else s; and
** a byte count with its binary unit (B, KiB, MiB, GiB). buf of len. */
const char *cli_fmt_time(char *buf, size_t len, uint64_t ns);
const char *cli_fmt_bytes(char *buf, size_t len, int64_t n);

/* Any thread. END's dropped events (version 17) as text: "12 events
** (calls 8, alloc 4)"; "" when none. buf of len. */
struct decode_end;
const char *cli_fmt_dropped(char *buf, size_t len, const struct decode_end *e);

/* Any thread. cli_fmt_bytes with how: CLI_BYTES_TIB, one decimal and
** units up to TiB (the heap views); CLI_BYTES_PLUS, a "+" before a
** positive count (changes). */
enum { CLI_BYTES_TIB = 1, CLI_BYTES_PLUS = 2 };
const char *cli_fmt_bytes_as(char *buf, size_t len, int64_t n, unsigned how);

/* -- Heap views of 'ljlog report' (leaks.c) ----------------------------------- */

/* Main thread. The estimate note / "alloc_sampled" of a sampled log. */
void leaks_text_sampled(const struct profile *p);
void leaks_json_sampled(struct json *j, const struct profile *p);

/* Main thread. --leaks: live at the end by site (text: at most limit rows,
** 0 all); "live_sites" in JSON. */
void leaks_text(const struct profile *p, const char *path, size_t limit);

/* Main thread. 0 when p has allocation events, else CLI_USAGE after a
** message that names view ("--leaks") and the family to record. */
int leaks_need_alloc(const struct profile *p, const char *view);
void leaks_json(struct json *j, const struct profile *p);

/* Main thread. --heap-interval: parse INTERVAL (ns, 0 after a message);
** decode the logs again into a profile that snapshots the heap every ns
** (exit status, or -1 with *out filled); the views. */
uint64_t leaks_parse_interval(const char *s);
int leaks_load_intervals(const struct profile *first, const char *const *paths,
			 size_t n, uint64_t ns, struct profile **out);
void leaks_text_intervals(const struct profile *p, uint64_t ns, size_t limit);
void leaks_json_intervals(struct json *j, const struct profile *p, uint64_t ns);

/* -- 'ljlog report' (report_cols.c, report_text.c, report_json.c, ...) ---- */

/* The orders of the text report's function table (--sort). */
enum {
	REPORT_SORT_DEFAULT, /* self time, else samples, else alloc bytes */
	REPORT_SORT_SELF,
	REPORT_SORT_TOTAL,
	REPORT_SORT_CALLS,
	REPORT_SORT_SAMPLES,
	REPORT_SORT_ALLOC,
};

/* The text report's options. */
struct report_opts {
	size_t limit; /* rows a table (0 all) */
	int sort;     /* REPORT_SORT_* */
	int verbose;  /* the header's details: options, time base */
};

/* Main thread. Several logs (report_logs.c): the text header's first
** lines, and JSON "logs" (one a log, always). */
void report_logs_text(const struct profile *p);
void report_logs_json(struct json *j, const struct profile *p);

/* Main thread. 'report --callers F' (callers set) or '--callees F' of p
** (loaded with PROFILE_CALLTREE): the indented tree, at most limit
** children a node (0 all). The exit status (1: no function F ran). */
int report_tree_text(const struct profile *p, const char *f, int callers,
		     size_t limit);

/* Main thread. A narrowed report (--focus, --from, ...): its header line
** (none otherwise), and JSON "narrowed" (null otherwise). */
void report_narrow_text(const struct profile *p);
void report_narrow_json(struct json *j, const struct profile *p);

/* Main thread. The text report and the JSON one (iv_ns: --heap-interval,
** 0 none) of p, loaded from path with result rc and message err. */
void report_text(const struct profile *p, const char *path, int rc,
		 const char *err, const struct report_opts *o);
struct profile_diff;

/* What a JSON report adds to p's own: the changes against a base
** (--base), each function's figures per log (--by-log: each log alone,
** matched to p). */
struct report_extra {
	const struct profile_diff *diff; /* or NULL */
	const struct profile_diff *logs; /* nlog matches: p against log i */
	size_t nlog;
};

void report_json(const struct profile *p, int rc, const char *err,
		 uint64_t iv_ns, const struct report_extra *x);

/* Main thread. --by-log: function fn's "by_log" array (report_logs.c). */
void report_bylog_fn_json(struct json *j, const struct report_extra *x,
			  uint32_t fn);

/* Main thread. 'report --base' (report_diff.c): the text (the tables of
** changes, at most limit rows each, 0 all), a function's and a site's
** JSON "delta" (in report_json's rows when given a diff), and the JSON
** "base", "base_only_functions" and "base_only_sites". */
void report_diff_text(const struct profile_diff *d, const char *label,
		      const char *blabel, size_t limit);
void report_diff_fn_json(struct json *j, const struct profile_diff *d,
			 uint32_t fn);
void report_diff_site_json(struct json *j, const struct profile_diff *d,
			   uint32_t site);
void report_diff_json(struct json *j, const struct profile_diff *d);

/* The families of events a report knows (OPTS_* bits), by option name. */
struct report_family {
	unsigned bit;
	const char *name;
	const char *why; /* the header's hint when it was not recorded */
};
extern const struct report_family report_families[];
extern const size_t report_nfamily;

/* Main thread. The families recorded: those the INTRO's options name, and
** any whose events are in the log (calls, allocs: the log's totals). */
unsigned report_recorded(const struct profile *p, uint64_t calls,
			 uint64_t allocs);

/* Main thread. report_recorded with the log's totals. */
unsigned report_recorded_all(const struct profile *p);

/* -- Zones and marks of 'ljlog report' (report_zones.c) --------------------- */

/* Main thread. The zones table and the marks (text: at most limit rows of
** each, 0 all; nothing when the log has none); JSON: "zones", "marks". */
void report_zones_text(const struct profile *p, size_t limit);
void report_zones_json(struct json *j, const struct profile *p);

/* Main thread. A second pass over the logs keeping only the samples and
** allocations made while zone name was open (profile_only), first being
** the profile of the logs; *out the new profile. -1 done, else an exit
** status (message printed; an unknown zone is 1, listing the known ones). */
int cli_zone_load(const char *cmd, const char *const *paths, size_t n,
		  const struct profile *first, const char *name,
		  struct profile **out);

#endif
