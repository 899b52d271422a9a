/*
** ljlog CLI: 'ljlog export', a log in another tool's format (the writers
** are in reader/export/, one row of the format table each).
*/
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "export/pprof.h"
#include "logger/opts.h"
#include "profile.h"

static const char export_usage[] =
    "usage: ljlog export --format FORMAT -o OUT FILE\n"
    "\n"
    "Write the log FILE in another tool's format to OUT ('-': standard\n"
    "output).\n"
    "\n"
    "Formats:\n"
    "  pprof   profile.proto, gzipped, for 'go tool pprof' (and other\n"
    "          readers of pprof profiles). One profile with the sample types\n"
    "          the log has: samples/count and cpu/nanoseconds (wall/\n"
    "          nanoseconds for a log sampled with 'wall') from timer samples,\n"
    "          by merged stack, with labels vm, thread and state;\n"
    "          alloc_objects/count, alloc_space/bytes, inuse_objects/count,\n"
    "          inuse_space/bytes from allocations, by site (a function and\n"
    "          a line; inuse: what each site allocated and is still live at\n"
    "          the end); calls/count and time/nanoseconds (self time) from\n"
    "          calls, by call path. Pick one with 'go tool pprof\n"
    "          -sample_index=NAME'; the default is cpu (or wall), else time,\n"
    "          else alloc_space.\n"
    "\n"
    "  -f, --format FORMAT   the format (above)\n"
    "  -o, --output OUT      the file to write\n"
    "  -h, --help            this help\n"
    "\n"
    "Exit status as for 'ljlog report'; 2 also when the log has nothing to\n"
    "export or OUT cannot be written.\n";

/* Main thread. Write p as pprof to out. */
static int fmt_pprof(const struct profile *p, FILE *out)
{
	struct pprof_opts po = {0};
	struct opts o;
	char err[256];
	if (p->have_intro && opts_parse(p->options, &o, err, sizeof err) == 0 &&
	    (o.events & OPTS_SAMPLE)) {
		po.period_ns = o.sample_ns;
		po.wall = o.wall;
	}
	int rc = export_pprof(p, &po, out);
	if (rc == 0) {
		fputs("ljlog export: note: pprof leaves out:\n", stderr);
		for (const char *s = export_pprof_omits; *s;) {
			const char *e = strchr(s, '\n');
			fprintf(stderr, "  %.*s\n", (int)(e - s), s);
			s = e + 1;
		}
	}
	return rc;
}

/* The formats. */
static const struct {
	const char *name;
	unsigned flags; /* PROFILE_* the writer needs */
	int (*write)(const struct profile *p, FILE *out);
} formats[] = {
    {"pprof", PROFILE_CALLTREE, fmt_pprof},
};

/* Main thread. 'ljlog export'. */
int cli_export(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *fmt = NULL, *outp = NULL;
	int o;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+:f:o:h", lo, NULL)) != -1) {
		switch (o) {
		case 'f': fmt = optarg; break;
		case 'o': outp = optarg; break;
		case 'h': fputs(export_usage, stdout); return CLI_OK;
		case ':':
			cli_err("export", "option '%s' needs a value",
				argv[optind - 1]);
			fputs(export_usage, stderr);
			return CLI_USAGE;
		default:
			cli_err("export", "unknown option '%s'",
				argv[optind - 1]);
			fputs(export_usage, stderr);
			return CLI_USAGE;
		}
	}
	size_t fi, nf = sizeof formats / sizeof formats[0];
	if (!fmt) {
		cli_err("export", "no --format given (formats: pprof)");
		return CLI_USAGE;
	}
	for (fi = 0; fi < nf && strcmp(formats[fi].name, fmt); fi++)
		;
	if (fi == nf) {
		cli_err("export", "unknown format '%s' (formats: pprof)", fmt);
		return CLI_USAGE;
	}
	if (!outp) {
		cli_err("export", "no output given: -o OUT ('-': standard "
				  "output)");
		return CLI_USAGE;
	}
	const char *path = cli_file_arg("export", export_usage, argc, argv);
	if (!path)
		return CLI_USAGE;
	struct profile *p;
	char err[512];
	int rc, st = cli_load("export", path, formats[fi].flags, &p, &rc, err,
			      sizeof err, 1);
	if (st >= 0)
		return st;
	return cli_export_write("export", formats[fi].name, path, outp, p,
				formats[fi].write, rc);
}
