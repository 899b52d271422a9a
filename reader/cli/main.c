/*
** ljlog CLI: command dispatch, --help, --version, shared helpers.
*/
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blocks/format.h"
#include "profile/profile.h"

static const char usage_text[] =
    "usage: ljlog COMMAND [OPTIONS] FILE\n"
    "       ljlog record [-o FILE] [-e EVENTS] -- PROGRAM [ARGS...]\n"
    "\n"
    "Commands ('ljlog COMMAND --help' for each):\n"
    "  record   run a LuaJIT program under the profiler\n"
    "  report   per-function, allocation, GC, VM, sample and trace report\n"
    "           (--json, --leaks, --heap-interval, --zone)\n"
    "  folded   sampled stacks (or call stacks with self time), for\n"
    "           flamegraph.pl\n"
    "  export   the log in another tool's format (--format speedscope,\n"
    "           chrome, pprof, heapsnapshot)\n"
    "  flame    a self-contained HTML flame graph\n"
    "  annotate the source of the hot Lua functions, line by line\n"
    "  dump     every block, decoded (-v: every event and sample; --follow)\n"
    "  check    verify a log; exit status says complete/truncated/corrupt\n"
    "  heap     heap snapshots: list, --top retainers, --by type, site or\n"
    "           metatable, --path-to an object, --diff\n"
    "  top      live view of a growing log: top functions, GC share,\n"
    "           dropped samples\n"
    "\n"
    "Options:\n"
    "  -h, --help      this help; 'ljlog COMMAND --help' for a command\n"
    "  -V, --version   print the version\n"
    "\n"
    "Exit status: 0 success, 1 truncated or empty log, or nothing of what\n"
    "was asked (nothing to export, no such snapshot, object or zone), 2\n"
    "usage error, a file that cannot be opened or written, 3 corrupt log or\n"
    "not a log, 4 (check) a write error in the profiled program stopped the\n"
    "log, 5 (check) complete with losses (events dropped when ljlog ran out\n"
    "of memory); record passes the program's status through, 125 when no\n"
    "LuaJIT VM was profiled and the program exited 0.\n";

/* Main thread. Print "ljlog CMD: message" to stderr. */
void cli_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "ljlog %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Main thread. See cli.h. */
void cli_see_help(const char *cmd)
{
	fprintf(stderr, "see 'ljlog %s --help'\n", cmd);
}

/* Main thread. See cli.h. */
int cli_file_rc = CLI_USAGE;

/* Main thread. 0 when path may be a log; else the exit status after a
** one-line message: an empty file is 1 (as a truncated log), a file that
** does not start as a log (nor as a gzip stream) 3 (as a corrupt one). A
** file that cannot be read is left to the command. */
static int precheck(const char *cmd, const char *path)
{
	char b[FORMAT_MAGIC_LEN];
	struct stat st;
	FILE *f;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    !(f = fopen(path, "rb")))
		return 0;
	size_t n = fread(b, 1, sizeof b, f);
	fclose(f);
	if (n == 0 && st.st_size == 0) {
		cli_err(cmd, "%s is empty: no log was written to it", path);
		return CLI_TRUNCATED;
	}
	if (n >= 2 && (unsigned char)b[0] == 0x1f &&
	    (unsigned char)b[1] == 0x8b)
		return 0; /* gzip: the reader inflates it */
	if (memcmp(b, FORMAT_MAGIC, n) != 0) {
		cli_err(cmd,
			"%s is not an ljlog log (it does not start with the "
			"file magic)",
			path);
		return CLI_CORRUPT;
	}
	return 0;
}

/* Main thread. The one FILE left after the options, or NULL after a
** one-line message (cli_file_rc: the exit status). */
const char *cli_file_arg(const char *cmd, const char *usage, int argc,
			 char **argv)
{
	(void)usage;
	cli_file_rc = CLI_USAGE;
	if (argc - optind == 1) {
		int rc = precheck(cmd, argv[optind]);
		if (!rc)
			return argv[optind];
		cli_file_rc = rc;
		return NULL;
	}
	cli_err(cmd, argc - optind ? "one FILE only" : "no FILE given");
	cli_see_help(cmd);
	return NULL;
}

/* Main thread. The FILEs left after the options (argv + optind), each
** checked as cli_file_arg checks one; NULL after a message. */
const char *const *cli_files_arg(const char *cmd, int argc, char **argv,
				 size_t *n)
{
	cli_file_rc = CLI_USAGE;
	*n = 0;
	if (argc <= optind) {
		cli_err(cmd, "no FILE given");
		cli_see_help(cmd);
		return NULL;
	}
	for (int i = optind; i < argc; i++) {
		int rc = precheck(cmd, argv[i]);
		if (rc) {
			cli_file_rc = rc;
			return NULL;
		}
	}
	*n = (size_t)(argc - optind);
	return (const char *const *)argv + optind;
}

/* Main thread. See cli.h. */
int cli_files_check(const char *cmd, const char *path)
{
	return precheck(cmd, path);
}

/* Main thread. How a report names the logs: the one path, or the first
** and how many more. */
const char *cli_logs_label(const char *const *paths, size_t n, char *buf,
			   size_t len)
{
	if (n == 1)
		return paths[0];
	snprintf(buf, len, "%s and %zu more log%s", paths[0], n - 1,
		 n > 2 ? "s" : "");
	return buf;
}

/* Main thread. What went wrong with one log of several, on stderr. */
static void log_trouble(const char *cmd, const struct profile_log *l)
{
	if (l->rc == -ENODATA)
		cli_err(cmd,
			"warning: %s: log truncated, reporting what is there: "
			"%s",
			l->file, l->err);
	else if (l->rc && cli_status(l->rc) == CLI_CORRUPT)
		cli_err(cmd, "%s: corrupt log, reporting the part before: %s",
			l->file, l->err);
	else if (l->rc)
		cli_err(cmd, "%s: %s", l->file, l->err);
}

/* Main thread. Load paths into a profile, warn on stderr; exit status or
** -1 to go on. */
int cli_load_logs(const char *cmd, const char *const *paths, size_t n,
		  unsigned flags, struct profile **p, int *rc, char *err,
		  size_t errlen, int quiet_warnings)
{
	if (profile_new(p, flags) < 0) {
		*p = NULL;
		cli_err(cmd, "out of memory");
		return CLI_USAGE;
	}
	return cli_load_into(cmd, paths, n, p, rc, err, errlen, quiet_warnings);
}

/* Main thread. See cli.h. */
int cli_load_into(const char *cmd, const char *const *paths, size_t n,
		  struct profile **p, int *rc, char *err, size_t errlen,
		  int quiet_warnings)
{
	*rc = profile_decode_logs(*p, paths, n, NULL, err, errlen);
	if (!(*p)->opened) {
		cli_err(cmd, "%s", err);
		profile_free(*p);
		*p = NULL;
		return CLI_USAGE;
	}
	if (*rc == -ENOMEM || (*rc < 0 && cli_status(*rc) == CLI_USAGE)) {
		cli_err(cmd, "%s", err);
		profile_free(*p);
		*p = NULL;
		return CLI_USAGE;
	}
	if (n > 1) {
		for (size_t i = 0; i < (*p)->nlog; i++)
			log_trouble(cmd, &(*p)->logs[i]);
	} else if (*rc == -ENODATA)
		cli_err(cmd,
			"warning: log truncated, reporting what is there: %s",
			err);
	else if (*rc != 0)
		cli_err(cmd, "corrupt log, reporting the part before: %s", err);
	if (*rc == 0 && (*p)->have_end && (*p)->end.stop_error)
		cli_err(cmd,
			"warning: the log stops at offset %llu, where writing "
			"it failed (%s): what came after is not in it",
			(unsigned long long)(*p)->end.bytes,
			(*p)->end.stop_reason);
	if (*rc == 0 && (*p)->have_end && (*p)->end.events_dropped) {
		char m[256];
		cli_err(cmd,
			"warning: %s %s missing: ljlog ran out of memory and "
			"dropped %" PRIu64 " buffer%s; the counts are short",
			cli_fmt_dropped(m, sizeof m, &(*p)->end),
			(*p)->end.events_dropped == 1 ? "is" : "are",
			(*p)->end.buffers_dropped,
			(*p)->end.buffers_dropped == 1 ? "" : "s");
	}
	if (!quiet_warnings)
		for (size_t i = 0; i < (*p)->nwarn; i++)
			cli_err(cmd, "warning: %s", (*p)->warnings[i]);
	return -1;
}

/* Main thread. Load path into a profile, warn on stderr; exit status or -1
** to go on. */
int cli_load(const char *cmd, const char *path, unsigned flags,
	     struct profile **p, int *rc, char *err, size_t errlen,
	     int quiet_warnings)
{
	return cli_load_logs(cmd, &path, 1, flags, p, rc, err, errlen,
			     quiet_warnings);
}

/* Main thread. Write profile p (loaded from path) with write() to outp
** ('-': stdout) and free p; what = the format, for messages; rc is the
** load's result. A failed write leaves no partial file. Exit status. */
int cli_export_write(const char *cmd, const char *what, const char *path,
		     const char *outp, struct profile *p,
		     int (*write)(const struct profile *p, FILE *out), int rc)
{
	struct cli_out out;
	if (cli_out_open(cmd, outp, &out) >= 0) {
		profile_free(p);
		return CLI_USAGE;
	}
	int e = write(p, out.f);
	int saved = errno;
	profile_free(p);
	if (e == 0 && (e = cli_out_close(&out, 1)) < 0) {
		saved = -e;
		e = -EIO;
	} else if (e != 0)
		cli_out_close(&out, 0);
	if (e == 0)
		return rc == 0 || rc == -ENODATA ? CLI_OK : CLI_CORRUPT;
	if (e == -ENODATA)
		cli_err(cmd,
			"nothing to export as %s in %s: no samples, no "
			"allocations, no calls",
			what, path);
	else if (e == -EIO)
		cli_err(cmd, "cannot write %s: %s", outp, strerror(saved));
	else
		cli_err(cmd, "out of memory");
	/* Nothing to export: 1, as for every format of 'export'. */
	return e == -ENODATA ? CLI_TRUNCATED : CLI_USAGE;
}

/* Main thread. 1 when the log's writer (pid, 0: not known yet) is gone. */
int cli_writer_gone(uint64_t pid)
{
	return pid && pid <= INT32_MAX && kill((pid_t)pid, 0) < 0 &&
	       errno == ESRCH;
}

/* Main thread. Exit status for a reader library result. */
int cli_status(int rc)
{
	if (rc == 0)
		return CLI_OK;
	if (rc == -ENODATA)
		return CLI_TRUNCATED;
	if (rc == -EBADMSG || rc == -ENOTSUP)
		return CLI_CORRUPT;
	return CLI_USAGE; /* I/O error: the file cannot be read */
}

/* Any thread. Print s[0..len) to f as a C-like quoted string. */
void cli_quote(FILE *f, const char *s, size_t len)
{
	putc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			putc(c, f);
	}
	putc('"', f);
}

/* Any thread. A time in ns as text with its unit: "12.345 ms" under a
** second, "1.234 s" from one on; buf of len. */
const char *cli_fmt_time(char *buf, size_t len, uint64_t ns)
{
	if (ns >= 1000000000u)
		snprintf(buf, len, "%.3f s", (double)ns / 1e9);
	else
		snprintf(buf, len, "%.3f ms", (double)ns / 1e6);
	return buf;
}

/* Any thread. A signed byte count as text with its binary unit: "512 B",
** "1.5 KiB", "12.0 MiB", "1.25 GiB" (CLI_BYTES_TIB: "1.2 GiB", up to TiB;
** CLI_BYTES_PLUS: "+" before a positive one); buf of len. */
const char *cli_fmt_bytes_as(char *buf, size_t len, int64_t n, unsigned how)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
	int tib = (how & CLI_BYTES_TIB) != 0;
	uint64_t a = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;
	const char *sign = n < 0 ? "-" : how & CLI_BYTES_PLUS ? "+" : "";
	double v = (double)a / 1024, next = tib ? 1024 : 1023.95;
	int u = 0, top = tib ? 3 : 2;
	if (a < 1024) {
		snprintf(buf, len, "%s%" PRIu64 " B", sign, a);
		return buf;
	}
	while (u < top && v >= next) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, !tib && u == 2 ? "%s%.2f %s" : "%s%.1f %s", sign, v,
		 unit[u]);
	return buf;
}

/* Any thread. See cli.h. */
const char *cli_fmt_bytes(char *buf, size_t len, int64_t n)
{
	return cli_fmt_bytes_as(buf, len, n, 0);
}

/* Any thread. See cli.h. */
const char *cli_fmt_dropped(char *buf, size_t len, const struct decode_end *e)
{
	size_t n = 0;
	buf[0] = '\0';
	if (!e->events_dropped)
		return buf;
	n += (size_t)snprintf(buf, len, "%" PRIu64 " event%s (",
			      e->events_dropped,
			      e->events_dropped == 1 ? "" : "s");
	const char *sep = "";
	for (unsigned f = 1; f < FORMAT_FAM__MAX && n < len; f++)
		if (e->fam_dropped[f]) {
			n += (size_t)snprintf(buf + n, len - n, "%s%s %" PRIu64,
					      sep, format_fam_name(f),
					      e->fam_dropped[f]);
			sep = ", ";
		}
	if (n < len)
		snprintf(buf + n, len - n, ")");
	return buf;
}

/* Main thread. Dispatch to a command. */
int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
	    {"annotate", cli_annotate}, {"check", cli_check},
	    {"dump", cli_dump},		{"export", cli_export},
	    {"flame", cli_flame},	{"folded", cli_folded},
	    {"record", cli_record},	{"report", cli_report},
	    {"heap", cli_heap},		{"top", cli_top},
	};
	if (argc < 2) {
		fputs(usage_text, stderr);
		return CLI_USAGE;
	}
	const char *c = argv[1];
	if (!strcmp(c, "-h") || !strcmp(c, "--help") || !strcmp(c, "help")) {
		fputs(usage_text, stdout);
		return CLI_OK;
	}
	if (!strcmp(c, "-V") || !strcmp(c, "--version")) {
		printf("ljlog %s (log format version %d)\n", PACKAGE_VERSION,
		       FORMAT_VERSION);
		return CLI_OK;
	}
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (!strcmp(c, cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	if (c[0] == '-')
		fprintf(stderr, "ljlog: unknown option '%s'\n", c);
	else
		fprintf(stderr, "ljlog: unknown command '%s'\n", c);
	fputs("commands: record, report, folded, export, flame, dump, check, "
	      "heap, top; try 'ljlog --help'\n",
	      stderr);
	return CLI_USAGE;
}
