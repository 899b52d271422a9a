/*
** ljlog CLI: 'ljlog flame', a self-contained HTML flame graph (the page is
** made by reader/export/flame.c).
*/
#include "cli.h"

#include <getopt.h>
#include <string.h>

#include "export/flame.h"
#include "profile/profile.h"

static const char flame_usage[] =
    "usage: ljlog flame -o OUT [--title TITLE] [--host] [--base BASE]...\n"
    "                   [--focus RE] [--ignore RE] [--from T] [--to T]\n"
    "                   [--from-mark NAME] LOG...\n"
    "\n"
    "Write a flame graph of the LOG as one HTML file, OUT ('-':\n"
    "standard output): its script, style and data are inside, it makes no\n"
    "network request. Views, whichever the log has: samples (sampled\n"
    "stacks as 'ljlog folded' prints them: one root per thread or\n"
    "coroutine, its root Lua function), call time (self time\n"
    "by call path) and allocated bytes (by site: function, then line).\n"
    "Click a frame to zoom into it, type in the search box to highlight the\n"
    "frames whose names match (with their share of the view), switch\n"
    "between flame (root at the bottom) and icicle (root at the top).\n"
    "Stacks are aggregated into a tree before they are written: a log of\n"
    "millions of samples makes a page of its distinct paths.\n"
    "Several LOGs (the workers of a server, runs of a program) make one\n"
    "graph, as 'ljlog report' merges them.\n"
    "\n"
    "  -o, --output OUT   the file to write\n"
    "  -t, --title TITLE  the page's title (default: the log's file name)\n"
    "      --host         samples: host and Lua stacks merged whole, as\n"
    "                     'ljlog folded --host' prints them\n"
    "  -b, --base BASE    a differential graph against the log BASE\n"
    "                     (repeat it for several, which merge): frames as\n"
    "                     wide as LOG says, red where their share of the\n"
    "                     whole grew since BASE, blue where it shrank\n"
    "                     (deeper for more; the tooltip gives both)\n" CLI_NARROW_HELP
    "  -h, --help         this help\n"
    "\n"
    "OUT is written as OUT.tmp.PID and renamed when complete: a failed or\n"
    "interrupted run leaves no OUT.\n"
    "\n"
    "Exit status as for 'ljlog report'; 1 also when the log has nothing to\n"
    "show (no file is left), 2 when OUT cannot be written.\n";

/* The page's title and --host (the write callback takes no context). */
static const char *flame_title;
static int flame_host;
static const struct profile *flame_base; /* --base: the base profile */

/* Main thread. Write the page. */
static int write_flame(const struct profile *p, FILE *out)
{
	return export_flame(p, flame_base, flame_title, flame_host, out);
}

/* Main thread. 'ljlog flame'. */
int cli_flame(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"title", required_argument, NULL, 't'},
	    {"host", no_argument, NULL, 'H'},
	    {"base", required_argument, NULL, 'b'},
	    CLI_NARROW_OPTIONS,
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *outp = NULL, *title = NULL;
	static struct cli_bases bases;
	struct cli_narrow nw = {0};
	int o;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+:o:t:b:h", lo, NULL)) != -1) {
		int t = cli_narrow_opt("flame", &nw, o, optarg);
		if (t == 1)
			continue;
		if (t)
			return t;
		switch (o) {
		case 'b':
			if ((t = cli_base_add("flame", &bases, optarg)) >= 0)
				return t;
			break;
		case 'o': outp = optarg; break;
		case 't': title = optarg; break;
		case 'H': flame_host = 1; break;
		case 'h': fputs(flame_usage, stdout); return CLI_OK;
		case ':':
			cli_err("flame", "option '%s' needs a value",
				argv[optind - 1]);
			cli_see_help("flame");
			return CLI_USAGE;
		default:
			cli_err("flame", "unknown option '%s'",
				argv[optind - 1]);
			cli_see_help("flame");
			return CLI_USAGE;
		}
	}
	if (!outp) {
		cli_err("flame", "no output given: -o OUT ('-': standard "
				 "output)");
		return CLI_USAGE;
	}
	size_t npath;
	const char *const *paths = cli_files_arg("flame", argc, argv, &npath);
	if (!paths)
		return cli_file_rc;
	static char label[600];
	const char *path = cli_logs_label(paths, npath, label, sizeof label);
	struct profile *p;
	char err[512];
	int rc, st = cli_narrow_check("flame", &nw);
	if (st >= 0)
		return st;
	st = cli_load_narrow("flame", paths, npath, PROFILE_CALLTREE, &nw, &p,
			     &rc, err, sizeof err, 1);
	if (st >= 0)
		return st;
	struct profile *q = NULL;
	if (bases.n) {
		int brc;
		st = cli_load_bases("flame", &bases, PROFILE_CALLTREE, &nw, &q,
				    &brc, err, sizeof err);
		if (st >= 0) {
			profile_free(p);
			return st;
		}
		flame_base = q;
	}
	static char tbuf[1300];
	if (title)
		flame_title = title;
	else {
		const char *b = strrchr(path, '/');
		flame_title = b ? b + 1 : path;
		if (bases.n) {
			char bl[600];
			const char *bp =
			    cli_logs_label(bases.path, bases.n, bl, sizeof bl);
			const char *bb = strrchr(bp, '/');
			snprintf(tbuf, sizeof tbuf, "%s against %s",
				 flame_title, bb ? bb + 1 : bp);
			flame_title = tbuf;
		}
	}
	st = cli_export_write("flame", "a flame graph", path, outp, p,
			      write_flame, rc);
	profile_free(q);
	return st;
}
