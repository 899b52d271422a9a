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
#include "profile.h"

static const char usage_text[] =
    "usage: ljlog COMMAND [OPTIONS] FILE\n"
    "       ljlog record [-o FILE] [-e EVENTS] -- PROGRAM [ARGS...]\n"
    "\n"
    "Commands:\n"
    "  record   run a LuaJIT program under the profiler\n"
    "  report   per-function, allocation, GC, VM, sample and trace report\n"
    "           (--json)\n"
    "  folded   sampled stacks (or call stacks with self time), for\n"
    "           flamegraph.pl\n"
    "  export   the log in another tool's format (--format speedscope,\n"
    "           chrome, pprof)\n"
    "  flame    a self-contained HTML flame graph\n"
    "  dump     every block, decoded (-v: every event and sample; --follow)\n"
    "  check    verify a log; exit status says complete/truncated/corrupt\n"
    "  heap     heap snapshots: list, by type, path to an object, diff\n"
    "  top      live view of a growing log: top functions, GC share,\n"
    "           dropped samples\n"
    "\n"
    "Options:\n"
    "  -h, --help      this help; 'ljlog COMMAND --help' for a command\n"
    "  -V, --version   print the version\n"
    "\n"
    "Exit status: 0 success, 1 truncated log, 2 usage error or file cannot\n"
    "be opened, 3 corrupt log; record passes the program's status through.\n";

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

/* Main thread. The one FILE left after the options, or NULL after a usage
** message. */
const char *cli_file_arg(const char *cmd, const char *usage, int argc,
			 char **argv)
{
	if (argc - optind == 1)
		return argv[optind];
	cli_err(cmd, argc - optind ? "one FILE only" : "no FILE given");
	fputs(usage, stderr);
	return NULL;
}

/* Main thread. Load path into a profile, warn on stderr; exit status or -1
** to go on. */
int cli_load(const char *cmd, const char *path, unsigned flags,
	     struct profile **p, int *rc, char *err, size_t errlen,
	     int quiet_warnings)
{
	*rc = profile_load(path, flags, p, err, errlen);
	if (!*p) {
		cli_err(cmd, "%s", err);
		return CLI_USAGE;
	}
	if (*rc == -ENODATA)
		cli_err(cmd,
			"warning: log truncated, reporting what is there: %s",
			err);
	else if (*rc == -ENOMEM || (*rc < 0 && cli_status(*rc) == CLI_USAGE)) {
		cli_err(cmd, "%s", err);
		profile_free(*p);
		return CLI_USAGE;
	} else if (*rc != 0)
		cli_err(cmd, "corrupt log, reporting the part before: %s", err);
	else if ((*p)->have_end && (*p)->end.stop_error)
		cli_err(cmd,
			"warning: the log stops at offset %llu, where writing "
			"it failed (%s): what came after is not in it",
			(unsigned long long)(*p)->end.bytes,
			(*p)->end.stop_reason);
	if (!quiet_warnings)
		for (size_t i = 0; i < (*p)->nwarn; i++)
			cli_err(cmd, "warning: %s", (*p)->warnings[i]);
	return -1;
}

/* Main thread. Write profile p (loaded from path) with write() to outp
** ('-': stdout) and free p; what = the format, for messages; rc is the
** load's result. A failed write leaves no partial file. Exit status. */
int cli_export_write(const char *cmd, const char *what, const char *path,
		     const char *outp, struct profile *p,
		     int (*write)(const struct profile *p, FILE *out), int rc)
{
	int tostdout = !strcmp(outp, "-");
	FILE *out = tostdout ? stdout : fopen(outp, "wb");
	if (!out) {
		cli_err(cmd, "cannot write %s: %s", outp, strerror(errno));
		profile_free(p);
		return CLI_USAGE;
	}
	/* Only a regular file is removed on failure (never /dev/null). */
	struct stat sb;
	int regular =
	    !tostdout && fstat(fileno(out), &sb) == 0 && S_ISREG(sb.st_mode);
	int e = write(p, out);
	int saved = errno;
	if (fflush(out) != 0 && !e) {
		e = -EIO;
		saved = errno;
	}
	if (!tostdout && fclose(out) != 0 && !e) {
		e = -EIO;
		saved = errno;
	}
	profile_free(p);
	if (e == 0)
		return rc == 0 || rc == -ENODATA ? CLI_OK : CLI_CORRUPT;
	if (regular)
		unlink(outp);
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
** "1.5 KiB", "12.0 MiB", "1.25 GiB"; buf of len. */
const char *cli_fmt_bytes(char *buf, size_t len, int64_t n)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB"};
	uint64_t a = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;
	const char *sign = n < 0 ? "-" : "";
	double v = (double)a / 1024;
	int u = 0;
	if (a < 1024) {
		snprintf(buf, len, "%s%" PRIu64 " B", sign, a);
		return buf;
	}
	while (u < 2 && v >= 1023.95) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u == 2 ? "%s%.2f %s" : "%s%.1f %s", sign, v,
		 unit[u]);
	return buf;
}

/* Main thread. Dispatch to a command. */
int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
	    {"check", cli_check},   {"dump", cli_dump},
	    {"export", cli_export}, {"flame", cli_flame},
	    {"folded", cli_folded}, {"record", cli_record},
	    {"report", cli_report}, {"heap", cli_heap},
	    {"top", cli_top},
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
