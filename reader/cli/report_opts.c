/*
** ljlog CLI: 'ljlog report', the command: its usage, options and the
** families of events a log recorded (from its options string); report_text.c
** and report_json.c render the text and JSON forms.
*/
#include "report_int.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "logger/opts.h"
#include "profile/profile.h"

static const char report_usage[] =
    "usage: ljlog report [--json] [-n N] [--sort KEY] [--builtins] [-v]\n"
    "                    [--leaks] [--heap-interval T] [--zone NAME]\n"
    "                    [--base BASE]...\n"
    "                    [--focus RE] [--ignore RE] [--from T] [--to T]\n"
    "                    [--from-mark NAME] [--callers F | --callees F]\n"
    "                    LOG...\n"
    "\n"
    "Report on an ljlog log: per function (calls, total and self time,\n"
    "allocations and frees charged to it), allocation sites, GC cycles and\n"
    "time per phase, per VM (thread, events, coroutines, heap at attach, at\n"
    "detach and computed), totals. A truncated log is reported up to where\n"
    "it ends, with a warning.\n"
    "\n"
    "Several LOGs (one per worker of a server, w-*.ljlog; runs of a\n"
    "program) make one report: functions and sites merge by name, chunk\n"
    "and line across processes and VMs, and calls, samples, time and\n"
    "allocations add up; each VM stays its own. A truncated or corrupt log\n"
    "among them counts up to where it stops, and the report names it (JSON:\n"
    "\"logs\": [{\"file\", \"pid\", \"exe\", \"duration_ns\", ...}]).\n"
    "Logs of different programs are merged with a warning.\n"
    "\n"
    "With timer samples: samples per function (self: the function is the\n"
    "innermost Lua function, and a builtin's samples (string.gsub,\n"
    "table.sort, a C function) count for the Lua function that called it,\n"
    "which the table names with its share, as jit.profile counts them;\n"
    "for a sample without Lua frames the innermost host frame; total:\n"
    "anywhere in the merged stack), per line (the innermost Lua function\n"
    "and the line it executes), per state; samples,\n"
    "dropped, signals. With trace events: compiled traces (number, start,\n"
    "root trace, samples running it), aborts grouped by reason, flushes.\n"
    "\n"
    "With zones (ljlog.zone, ljlog_zone): per zone name, its entries,\n"
    "inclusive time, samples and allocations (a zone holds its nested\n"
    "zones' figures); marks (ljlog.mark) with their time and text\n"
    "(JSON: \"zones\", \"marks\").\n"
    "\n"
    "With alloc=RATE (sampled allocation), allocation figures are estimates\n"
    "and the report says so (JSON: \"alloc_sampled\": {\"rate\": N}).\n"
    "\n"
    "  -j, --json      one JSON object instead of text; it always holds\n"
    "                  \"live_sites\" (live at the end by site, as --leaks)\n"
    "  -n, --limit N   text: at most N rows a table (default 20, 0 all);\n"
    "                  rows with nothing in every number are left out\n"
    "                  (--leaks: default all; --heap-interval: sites per\n"
    "                  interval, default 5)\n"
    "  -s, --sort KEY  text: the function table's order: self (time, or\n"
    "                  samples without calls), total, calls, samples or\n"
    "                  alloc (bytes); default self, without calls or\n"
    "                  samples alloc\n"
    "  -v, --verbose   text: the header adds the LuaJIT version, format\n"
    "                  version, options and time base\n"
    "  -l, --leaks     text: only what is live at the end of the log (or at\n"
    "                  the VM's detach) by allocation site: objects and\n"
    "                  bytes, sorted by bytes\n"
    "  -i, --heap-interval T\n"
    "                  live bytes by site at the end of each interval T\n"
    "                  (100ms, 1s) of the run, with the change since the\n"
    "                  interval before; text: only that view, JSON: adds\n"
    "                  \"heap_intervals\" [{time_ns, live_bytes, sites}]\n"
    "  -z, --zone NAME only the samples taken and the allocations made while\n"
    "                  a zone named NAME was open (anywhere in the zone\n"
    "                  stack); calls, time, frees and GC stay the whole\n"
    "                  log's (JSON: \"zone_filter\": NAME)\n"
    "  -b, --base BASE compare with the log BASE (repeat it for several,\n"
    "                  which merge): tables of functions and allocation\n"
    "                  sites by the largest change, run less base (JSON:\n"
    "                  \"delta\" on each function and site, \"base\",\n"
    "                  \"base_only_functions\", \"base_only_sites\")\n"
    "      --by-log    JSON: each function also has \"by_log\": its figures\n"
    "                  in each LOG alone ({\"log\": index in \"logs\", calls,\n"
    "                  time, samples, allocations})\n"
    "      --builtins  text: a builtin's samples are its own, a row of its\n"
    "                  own, not its Lua caller's (JSON has both: \"samples\",\n"
    "                  and \"samples_lua\" with \"via\", \"via_samples\")\n"
    "      --callers F only the tree of who called the functions whose names\n"
    "                  match F (a regular expression): calls, time and\n"
    "                  samples by caller path, callers indented below\n"
    "      --callees F only the tree of what they called (paths below F)\n" CLI_NARROW_HELP
    "  -h, --help      this help\n"
    "\n"
    "Exit status: 0 report printed (complete or truncated log), 1 no zone\n"
    "named as --zone says (the log's zones are listed), 2 usage error or\n"
    "file cannot be opened, 3 corrupt log (the part before the corruption\n"
    "is reported).\n";

/* Main thread. The families recorded: those the INTRO's options name
** (parsed by the logger's own parser), and any whose events are in the
** log (an option string this version cannot parse, an older log). */
unsigned report_recorded(const struct profile *p, uint64_t calls,
			 uint64_t allocs)
{
	struct opts o;
	char err[256];
	unsigned f = 0;
	if (p->have_intro && opts_parse(p->options, &o, err, sizeof err) == 0)
		f = o.events;
	if (calls)
		f |= OPTS_CALLS;
	if (allocs)
		f |= OPTS_ALLOC;
	if (p->heap.gc.events)
		f |= OPTS_GC;
	if (p->smp.samples || p->smp.signals)
		f |= OPTS_SAMPLE;
	if (p->smp.trace_starts || p->smp.trace_aborts || p->smp.trace_flushes)
		f |= OPTS_JIT;
	return f;
}

/* Main thread. See cli.h. */
unsigned report_recorded_all(const struct profile *p)
{
	struct totals t;
	report_sum(p, &t);
	return report_recorded(p, t.calls, t.alloc_count + t.free_count);
}

/* The families a report knows, by option name, and why to record each. */
const struct report_family report_families[] = {
    {OPTS_CALLS, "calls",
     "add -e calls for exact counts; it turns the JIT off"},
    {OPTS_ALLOC, "alloc", "add -e alloc"},
    {OPTS_GC, "gc", "add -e gc"},
    {OPTS_SAMPLE, "sample", "add -e sample for where the time goes"},
    {OPTS_JIT, "jit", "add -e jit for traces"},
};
const size_t report_nfamily = sizeof report_families / sizeof *report_families;

/* The --sort keys, by REPORT_SORT_* (1 on). */
static const char *const sort_keys[] = {NULL,	 "self",    "total",
					"calls", "samples", "alloc"};

/* Main thread. The REPORT_SORT_* a --sort word names, -1 for none. */
static int sort_parse(const char *w)
{
	for (int i = 1; i < (int)(sizeof sort_keys / sizeof *sort_keys); i++)
		if (!strcmp(w, sort_keys[i]))
			return i;
	return -1;
}

/* Main thread. Whether the log recorded what --sort orders by: -1 yes,
** else CLI_USAGE after a message. */
static int sort_check(const struct profile *p, int sort)
{
	uint64_t calls = 0, allocs = 0;
	for (size_t i = 0; i < p->nfn; i++) {
		calls += p->fns[i].calls;
		allocs += p->fns[i].alloc_count;
	}
	unsigned f = report_recorded(p, calls, allocs);
	unsigned need = sort == REPORT_SORT_CALLS     ? OPTS_CALLS
			: sort == REPORT_SORT_SAMPLES ? OPTS_SAMPLE
			: sort == REPORT_SORT_ALLOC   ? OPTS_ALLOC
			: sort			      ? OPTS_CALLS | OPTS_SAMPLE
						      : 0;
	if (!need || (f & need))
		return -1;
	cli_err("report", "--sort %s: the log did not record %s",
		sort_keys[sort],
		need == (OPTS_CALLS | OPTS_SAMPLE) ? "calls or samples"
		: need == OPTS_CALLS		   ? "calls"
		: need == OPTS_SAMPLE		   ? "samples"
						   : "allocations");
	return CLI_USAGE;
}

/* -- Command ------------------------------------------------------------------- */

/* Main thread. 'report --base': load the base logs, match them to p (the
** run, loaded from label with result rc) and print the changes; frees p.
** The exit status. */
static int report_base(struct profile *p, int rc, const char *err,
		       const struct cli_bases *bases,
		       const struct cli_narrow *nw, const char *label,
		       int as_json, size_t limit)
{
	struct profile *q;
	struct profile_diff d;
	char berr[512], blabel[600];
	int brc;
	int st = cli_load_bases("report", bases, p->flags & PROFILE_BUILTINS,
				nw, &q, &brc, berr, sizeof berr);
	if (st >= 0) {
		profile_free(p);
		return st;
	}
	if (profile_diff_new(&d, p, q) < 0) {
		cli_err("report", "out of memory");
		profile_free(q);
		profile_free(p);
		return CLI_USAGE;
	}
	if (as_json)
		report_json(p, rc, err, 0, &(struct report_extra){&d, NULL, 0});
	else
		report_diff_text(&d, label,
				 cli_logs_label(bases->path, bases->n, blabel,
						sizeof blabel),
				 limit);
	profile_diff_free(&d);
	profile_free(q);
	profile_free(p);
	if (rc != 0 && rc != -ENODATA)
		return CLI_CORRUPT;
	return brc == 0 || brc == -ENODATA ? CLI_OK : CLI_CORRUPT;
}

/* Long options without a short form. */
enum { O_CALLERS = 0x2000, O_CALLEES, O_BYLOG, O_BUILTINS };

/* Main thread. --by-log: the JSON report of p (the logs merged) with each
** function's figures in each log alone; frees p. The exit status. */
static int report_by_log(struct profile *p, int rc, const char *err,
			 const char *const *paths, size_t npath)
{
	struct profile **one = calloc(npath, sizeof *one);
	struct profile_diff *d = calloc(npath, sizeof *d);
	int st = -1;
	for (size_t i = 0; one && d && i < npath && st < 0; i++) {
		char e[512];
		int r;
		if (profile_new(&one[i], 0) < 0 ||
		    ((r = profile_decode_logs(one[i], &paths[i], 1, NULL, e,
					      sizeof e)) < 0 &&
		     (!one[i]->opened || r == -ENOMEM)) ||
		    profile_diff_new(&d[i], p, one[i]) < 0) {
			cli_err("report", "--by-log: %s: %s", paths[i],
				one[i] && one[i]->opened ? "out of memory" : e);
			st = CLI_USAGE;
		}
	}
	if (!one || !d) {
		cli_err("report", "out of memory");
		st = CLI_USAGE;
	}
	if (st < 0)
		report_json(p, rc, err, 0,
			    &(struct report_extra){NULL, d, npath});
	for (size_t i = 0; one && d && i < npath; i++) {
		profile_diff_free(&d[i]);
		profile_free(one[i]);
	}
	free(one);
	free(d);
	profile_free(p);
	if (st >= 0)
		return st;
	return rc == 0 || rc == -ENODATA ? CLI_OK : CLI_CORRUPT;
}

/* What the command line asks for. */
struct report_args {
	int as_json, leaks, limit_given, by_log, builtins;
	uint64_t iv_ns; /* --heap-interval, 0 none */
	struct report_opts ro;
	const char *zone;
	struct cli_bases bases;
	struct cli_narrow nw;
	const char *tree_f; /* --callers or --callees F */
	int tree_callers;
	const char *const *paths;
	size_t npath;
	const char *path; /* the logs named in messages */
	char label[600];
};

/* What an option that lacks its value is told. */
static const struct {
	int opt;
	const char *msg;
} needs[] = {
    {'z', "--zone needs a zone name"},
    {'n', "-n needs a number"},
    {'s', "--sort needs a key: self, total, calls, samples or alloc"},
    {'i', "--heap-interval needs an interval, like 100ms"},
};

/* Main thread. Say what is wrong with the option getopt could not take
** (the last of argv before optind); CLI_USAGE. */
static int bad_option(char **argv)
{
	const char *msg = NULL;
	for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++)
		if (optopt == needs[i].opt)
			msg = needs[i].msg;
	if (msg)
		cli_err("report", "%s", msg);
	else
		cli_err("report", "unknown option '%s'", argv[optind - 1]);
	cli_see_help("report");
	return CLI_USAGE;
}

/* Main thread. Take option o (getopt's, with optarg) into a: -1, or the
** exit status (--help, a usage error after a message). */
static int take_opt(struct report_args *a, int o, char **argv)
{
	char *e;
	switch (o) {
	case O_BYLOG: a->by_log = 1; break;
	case O_BUILTINS: a->builtins = 1; break;
	case O_CALLERS:
	case O_CALLEES:
		if (a->tree_f) {
			cli_err("report", "one --callers or --callees "
					  "at a time");
			return CLI_USAGE;
		}
		a->tree_f = optarg;
		a->tree_callers = o == O_CALLERS;
		break;
	case 'b': return cli_base_add("report", &a->bases, optarg);
	case 'j': a->as_json = 1; break;
	case 'n':
		a->ro.limit = strtoul(optarg, &e, 10);
		a->limit_given = 1;
		if (!*optarg || *e || *optarg == '-') {
			cli_err("report", "-n wants a number, not '%s'",
				optarg);
			return CLI_USAGE;
		}
		break;
	case 's':
		if ((a->ro.sort = sort_parse(optarg)) < 0) {
			cli_err("report",
				"--sort: '%s' is not self, total, "
				"calls, samples or alloc",
				optarg);
			return CLI_USAGE;
		}
		break;
	case 'v': a->ro.verbose = 1; break;
	case 'l': a->leaks = 1; break;
	case 'i':
		if (!(a->iv_ns = leaks_parse_interval(optarg)))
			return CLI_USAGE;
		break;
	case 'z': a->zone = optarg; break;
	case 'h': fputs(report_usage, stdout); return CLI_OK;
	default: return bad_option(argv);
	}
	return -1;
}

/* Main thread. Read the options into a: -1, or the exit status. */
static int parse_opts(int argc, char **argv, struct report_args *a)
{
	static const struct option lo[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"limit", required_argument, NULL, 'n'},
	    {"sort", required_argument, NULL, 's'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"leaks", no_argument, NULL, 'l'},
	    {"heap-interval", required_argument, NULL, 'i'},
	    {"zone", required_argument, NULL, 'z'},
	    {"base", required_argument, NULL, 'b'},
	    {"callers", required_argument, NULL, O_CALLERS},
	    {"callees", required_argument, NULL, O_CALLEES},
	    {"by-log", no_argument, NULL, O_BYLOG},
	    {"builtins", no_argument, NULL, O_BUILTINS},
	    CLI_NARROW_OPTIONS,
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int o, t;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+jn:s:vli:z:b:h", lo, NULL)) !=
	       -1) {
		if ((t = cli_narrow_opt("report", &a->nw, o, optarg)) == 1)
			continue;
		if (t || (t = take_opt(a, o, argv)) >= 0)
			return t;
	}
	return -1;
}

/* Main thread. Whether the options go together: -1, or the exit status
** after a message. */
static int check_opts(const struct report_args *a)
{
	int other = a->zone || a->iv_ns || a->leaks; /* the heap views */
	if (a->zone && a->iv_ns) {
		cli_err("report", "--zone and --heap-interval cannot be "
				  "combined (yet)");
		return CLI_USAGE;
	}
	if (cli_narrow_any(&a->nw) && other) {
		cli_err("report", "--focus, --ignore, --from, --to and "
				  "--from-mark take no --zone, --heap-interval "
				  "or --leaks (yet)");
		return CLI_USAGE;
	}
	int st = cli_narrow_check("report", &a->nw);
	if (st >= 0)
		return st;
	if (a->tree_f && (other || a->bases.n || a->as_json)) {
		cli_err("report", "--callers and --callees print their tree "
				  "alone: no --json, --zone, --heap-interval, "
				  "--leaks or --base (yet)");
		return CLI_USAGE;
	}
	if (a->by_log && (!a->as_json || a->zone || a->iv_ns || a->bases.n ||
			  a->tree_f || cli_narrow_any(&a->nw))) {
		cli_err("report", "--by-log adds to --json, of whole logs: no "
				  "--zone, --heap-interval, --base, --callers, "
				  "--callees or narrowing (yet)");
		return CLI_USAGE;
	}
	if (a->bases.n && other) {
		cli_err("report", "--base compares whole logs: it takes no "
				  "--zone, --heap-interval or --leaks (yet)");
		return CLI_USAGE;
	}
	return -1;
}

/* Main thread. The second passes over the logs that --leaks,
** --heap-interval and --zone ask for, replacing *pp: -1, or the exit
** status (*pp freed). */
static int second_passes(const struct report_args *a, struct profile **pp)
{
	struct profile *p = *pp, *q;
	int st;
	if ((a->leaks || a->iv_ns) &&
	    (st = leaks_need_alloc(p,
				   a->leaks ? "--leaks" : "--heap-interval"))) {
		profile_free(p);
		return st;
	}
	if (a->iv_ns) { /* a second pass, on the first one's time base */
		st = leaks_load_intervals(p, a->paths, a->npath, a->iv_ns, &q);
		profile_free(p);
		if (st >= 0)
			return st;
		*pp = p = q;
	}
	if (a->zone) { /* a second pass, on the first one's zones */
		st =
		    cli_zone_load("report", a->paths, a->npath, p, a->zone, &q);
		profile_free(p);
		if (st >= 0)
			return st;
		*pp = q;
	}
	return -1;
}

/* Main thread. The report of p (result rc, message err) as a asks, p
** freed; the exit status. */
static int render(const struct report_args *a, struct profile *p, int rc,
		  const char *err)
{
	int st;
	if (a->bases.n)
		return report_base(p, rc, err, &a->bases, &a->nw, a->path,
				   a->as_json, a->ro.limit);
	if (a->by_log && !a->leaks)
		return report_by_log(p, rc, err, a->paths, a->npath);
	size_t limit = a->limit_given ? a->ro.limit : 0;
	if (a->as_json)
		report_json(p, rc, err, a->iv_ns, NULL);
	else if (a->leaks || a->iv_ns) {
		if (a->leaks)
			leaks_text(p, a->path, limit);
		else
			printf("ljlog report --heap-interval: %s\n", a->path);
		if (a->iv_ns)
			leaks_text_intervals(p, a->iv_ns, limit);
	} else if ((st = sort_check(p, a->ro.sort)) >= 0) {
		profile_free(p);
		return st;
	} else
		report_text(p, a->path, rc, err, &a->ro);
	profile_free(p);
	return rc == 0 || rc == -ENODATA ? CLI_OK : CLI_CORRUPT;
}

/* Main thread. 'ljlog report'. */
int cli_report(int argc, char **argv)
{
	static struct report_args a; /* the bases are large */
	struct profile *p;
	char err[512];
	int rc, st;
	memset(&a, 0, sizeof a);
	a.ro = (struct report_opts){20, REPORT_SORT_DEFAULT, 0};
	if ((st = parse_opts(argc, argv, &a)) >= 0)
		return st;
	a.paths = cli_files_arg("report", argc, argv, &a.npath);
	if (!a.paths)
		return cli_file_rc;
	a.path = cli_logs_label(a.paths, a.npath, a.label, sizeof a.label);
	if ((st = check_opts(&a)) >= 0)
		return st;
	st = cli_load_narrow("report", a.paths, a.npath,
			     (a.tree_f ? PROFILE_CALLTREE : 0) |
				 (a.builtins ? PROFILE_BUILTINS : 0),
			     &a.nw, &p, &rc, err, sizeof err, 0);
	if (st >= 0)
		return st;
	if (a.tree_f) {
		st = report_tree_text(p, a.tree_f, a.tree_callers,
				      a.limit_given ? a.ro.limit : 20);
		profile_free(p);
		return st != CLI_OK		   ? st
		       : rc == 0 || rc == -ENODATA ? CLI_OK
						   : CLI_CORRUPT;
	}
	if ((st = second_passes(&a, &p)) >= 0)
		return st;
	return render(&a, p, rc, err);
}
