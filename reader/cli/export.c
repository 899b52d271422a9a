/*
** ljlog CLI: 'ljlog export', the log in the format of a tool users open.
** One row per format; the writers are in reader/export/.
*/
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/export.h"
#include "export/heapsnapshot.h"
#include "export/pprof.h"
#include "logger/opts.h"
#include "profile/profile.h"

/* Logs bigger than this get a progress line (when stderr is a terminal). */
#define PROGRESS_MIN_BYTES (4u << 20)

/* Main thread. See cli.h. */
uint64_t cli_sample_interval(const char *options, int *wall)
{
	struct opts o;
	char err[256];
	*wall = 0;
	if (!options || opts_parse(options, &o, err, sizeof err) ||
	    !(o.events & OPTS_SAMPLE))
		return 0;
	*wall = o.wall;
	return o.sample_ns;
}

/* --host, for pprof (the write callback takes no context). */
static int export_host;

/* export -q: no note on what pprof leaves out (fmt_pprof takes no
** context). */
static int pprof_quiet;

/* export --base, for pprof: the base profile (fmt_pprof takes no context). */
static const struct profile *pprof_base;

/* Main thread. Write p as pprof to out. */
static int fmt_pprof(const struct profile *p, FILE *out)
{
	struct pprof_opts po = {0};
	po.host = export_host;
	po.base = pprof_base;
	if (p->have_intro)
		po.period_ns = cli_sample_interval(p->options, &po.wall);
	int rc = export_pprof(p, &po, out);
	if (rc == 0 && !pprof_quiet) {
		fputs("ljlog export: note: pprof leaves out:\n", stderr);
		for (const char *s = export_pprof_omits; *s;) {
			const char *e = strchr(s, '\n');
			fprintf(stderr, "  %.*s\n", (int)(e - s), s);
			s = e + 1;
		}
	}
	return rc;
}

/* One format. write NULL: pprof, written from the loaded profile. */
struct format {
	const char *name;
	const char *what;     /* for --help */
	const char *left_out; /* said on stderr, and in the man page */
	int (*write)(const char *path, FILE *out, const struct export_opts *o,
		     char *err, size_t errlen);
	int need_out; /* -o required (a big or binary file) */
	int heap;     /* takes --snapshot K */
};

static const struct format formats[] = {
    {"chrome",
     "Chrome trace events (JSON) for Perfetto (ui.perfetto.dev) and\n"
     "                  chrome://tracing: a process per VM, a track per\n"
     "                  coroutine with its calls as slices, GC phases, the\n"
     "                  heap size as a counter, samples and JIT trace events\n"
     "                  as instants; cut at 8x the log's size (a note\n"
     "                  says where)",
     "samples carry their Lua stack only (no host frames); allocations "
     "and frees are not in it (the heap counter moves at GC events); "
     "timestamps use the INTRO block's counter rate",
     export_chrome, 0, 0},
    {"speedscope",
     "speedscope's JSON (speedscope.app): the calls as two sampled\n"
     "                  profiles, self time and calls by call path (and,\n"
     "                  for a small log, an evented profile per\n"
     "                  coroutine), a sampled profile per VM (Lua-first\n"
     "                  stacks, weighed by the timer intervals each\n"
     "                  stands for), allocated bytes per site",
     "GC phases, the heap over time, frees and JIT trace events are not "
     "in it (try --format chrome); a coroutine's evented frames close "
     "when it yields and open again when it is resumed; the call-tree "
     "profiles merge VMs and coroutines",
     export_speedscope, 0, 0},
    {"pprof",
     "profile.proto, gzipped, for 'go tool pprof' (needs -o):\n"
     "                  samples/count and cpu/nanoseconds (or wall) by\n"
     "                  Lua-first stack, labels vm, thread, state, trace;\n"
     "                  alloc_objects/count, alloc_space/bytes,\n"
     "                  inuse_objects/count, inuse_space/bytes by site;\n"
     "                  calls/count and time/nanoseconds (self) by call\n"
     "                  path (pick one: -sample_index=NAME)",
     NULL, NULL, 1, 0},
    {"heapsnapshot",
     "Chrome DevTools' .heapsnapshot (JSON, needs -o) of one heap\n"
     "                  snapshot (--snapshot K, default the last), for\n"
     "                  the Memory tab, memlab, heap-snapshot-toolkit:\n"
     "                  objects with their sizes and references, roots\n"
     "                  under a node per kind, node IDs kept across\n"
     "                  snapshots (2 x heap ID + 1) for comparisons",
     "allocation stacks and timelines (the snapshot has none); values "
     "that are no objects (numbers, booleans) are not nodes; the "
     "allocations that are no objects (string table, stacks, ...) are "
     "one node each under \"(VM allocations)\"",
     export_heapsnapshot, 1, 1},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

/* Main thread. Print the usage, with the formats, to f. */
static void usage(FILE *f)
{
	fputs(
	    "usage: ljlog export --format FORMAT [-o OUT] [--host] [--base BASE]...\n"
	    "                    [--focus RE] [--ignore RE] [--from T] [--to T]\n"
	    "                    [--from-mark NAME] LOG...\n"
	    "       ljlog export --format heapsnapshot [--snapshot K] -o OUT "
	    "LOG\n"
	    "\n"
	    "Write the LOG in the format of a tool: OUT ('-', the default,\n"
	    "is standard output). Several LOGs (workers, runs) are merged\n"
	    "into one profile, as 'ljlog report' merges them; each VM stays\n"
	    "its own. Formats:\n",
	    f);
	for (size_t i = 0; i < NFORMATS; i++)
		fprintf(f, "  %-14s  %s\n", formats[i].name, formats[i].what);
	fputs(
	    "\n"
	    "  -f, --format FORMAT  the format (required)\n"
	    "  -o, --output OUT     where to write ('-': standard output)\n"
	    "  -s, --snapshot K     heapsnapshot: the snapshot's index K, as\n"
	    "                       'ljlog heap' lists them (default: the last\n"
	    "                       complete one)\n"
	    "      --host           samples (pprof, speedscope): each sample's\n"
	    "                       host and Lua stacks merged whole, as\n"
	    "                       'ljlog folded --host' prints them (with\n"
	    "                       'trace N' frames); by default stacks are\n"
	    "                       Lua-first, as 'ljlog folded' prints them\n"
	    "                       (pprof: the trace as label 'trace')\n"
	    "  -b, --base BASE      pprof: subtract the log BASE (repeat it for\n"
	    "                       several, which merge): its samples follow\n"
	    "                       with every value negated, as 'go tool\n"
	    "                       pprof -diff_base' shows two profiles\n"
	    "  -q, --quiet          no note on what the format leaves out\n"
	    "\n"
	    "Narrowing (not heapsnapshot):\n" CLI_NARROW_HELP "\n"
	    "  -h, --help           this help\n"
	    "\n"
	    "Each format says on stderr what it leaves out. A truncated log\n"
	    "is exported up to where it ends, with a warning. A progress\n"
	    "line shows on stderr when it is a terminal and the log is over\n"
	    "4 MB.\n"
	    "\n"
	    "What an export makes from the events stays under 8x the log's\n"
	    "size: speedscope aggregates the calls by call path (evented\n"
	    "profiles only for a small log), chrome leaves the events past\n"
	    "the limit out, with a note. OUT is written as OUT.tmp.PID and\n"
	    "renamed when complete: a failed or interrupted export leaves no\n"
	    "OUT (after SIGKILL, OUT.tmp.PID stays).\n"
	    "\n"
	    "Exit status: 0 written, 1 an empty log, or the log holds nothing\n"
	    "to export in that format (heapsnapshot: no such complete\n"
	    "snapshot; no file is left), 2 usage error, a file that cannot be\n"
	    "read or written, 3 corrupt log (what came before the damage is\n"
	    "written) or not a log.\n",
	    f);
}

/* What the command line asks for. */
struct export_args {
	const char *fmtname, *outpath, *snap;
	int have_out, quiet;
	struct cli_bases bases;
	struct cli_narrow nw;
	const struct format *fmt;
	size_t snapk; /* --snapshot, 0 none */
	const char *const *paths;
	size_t npath;
	const char *path; /* the logs named in messages */
	char label[600];
};

/* Main thread. Read the options into a: -1, or the exit status (--help,
** a usage error after a message). */
static int parse_opts(int argc, char **argv, struct export_args *a)
{
	static const struct option lo[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"snapshot", required_argument, NULL, 's'},
	    {"host", no_argument, NULL, 'H'},
	    {"base", required_argument, NULL, 'b'},
	    CLI_NARROW_OPTIONS,
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int o, t;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "f:o:s:b:qh", lo, NULL)) != -1) {
		if ((t = cli_narrow_opt("export", &a->nw, o, optarg)) == 1)
			continue;
		if (t)
			return t;
		switch (o) {
		case 'b':
			if ((t = cli_base_add("export", &a->bases, optarg)) >=
			    0)
				return t;
			break;
		case 'f': a->fmtname = optarg; break;
		case 'o':
			a->outpath = optarg;
			a->have_out = 1;
			break;
		case 'q': a->quiet = 1; break;
		case 's': a->snap = optarg; break;
		case 'H': export_host = 1; break;
		case 'h': usage(stdout); return CLI_OK;
		default:
			if (optopt && strchr("fosb", optopt))
				cli_err("export", "option '%s' needs a value",
					argv[optind - 1]);
			else
				cli_err("export", "unknown option '%s'",
					argv[optind - 1]);
			cli_see_help("export");
			return CLI_USAGE;
		}
	}
	return -1;
}

/* Main thread. The format a->fmtname names into a->fmt: -1, or CLI_USAGE
** after a message. */
static int find_format(struct export_args *a)
{
	if (!a->fmtname) {
		cli_err("export", "no --format given");
		cli_see_help("export");
		return CLI_USAGE;
	}
	for (size_t i = 0; i < NFORMATS; i++)
		if (!strcmp(a->fmtname, formats[i].name))
			a->fmt = &formats[i];
	if (!a->fmt) {
		cli_err("export", "unknown format '%s' (formats:", a->fmtname);
		for (size_t i = 0; i < NFORMATS; i++)
			fprintf(stderr, " %s", formats[i].name);
		fputs(")\n", stderr);
		return CLI_USAGE;
	}
	return -1;
}

/* Main thread. --snapshot into a->snapk: -1, or CLI_USAGE after a
** message. */
static int parse_snapshot(struct export_args *a)
{
	const char *snap = a->snap;
	char *e;
	if (!snap)
		return -1;
	unsigned long long v = strtoull(snap, &e, 10);
	if (!a->fmt->heap) {
		cli_err("export", "--snapshot is for --format "
				  "heapsnapshot only");
		return CLI_USAGE;
	}
	if (!*snap || *e || snap[0] == '-' || v == 0) {
		cli_err("export",
			"--snapshot '%s': not a snapshot index (1, 2, "
			"... as 'ljlog heap' lists them)",
			snap);
		return CLI_USAGE;
	}
	a->snapk = (size_t)v;
	return -1;
}

/* Main thread. Whether the options go with the format and the logs: -1,
** or the exit status after a message. */
static int check_args(struct export_args *a)
{
	const struct format *fmt = a->fmt;
	if (a->bases.n && fmt->write) {
		cli_err("export",
			"--base is for --format pprof (report, folded "
			"and flame take it too)");
		return CLI_USAGE;
	}
	if (fmt->heap && cli_narrow_any(&a->nw)) {
		cli_err("export",
			"--format %s takes no --focus, --ignore, "
			"--from, --to or --from-mark (a snapshot is "
			"one moment)",
			fmt->name);
		return CLI_USAGE;
	}
	int nst = cli_narrow_check("export", &a->nw);
	if (nst >= 0)
		return nst;
	if (fmt->heap && a->npath > 1) {
		cli_err("export",
			"--format %s takes one log (a snapshot is "
			"one VM's heap)",
			fmt->name);
		return CLI_USAGE;
	}
	if ((nst = parse_snapshot(a)) >= 0)
		return nst;
	if (fmt->need_out && !a->have_out) {
		cli_err("export",
			"no output given: --format %s needs -o OUT ('-': "
			"standard output)",
			fmt->name);
		return CLI_USAGE;
	}
	return -1;
}

/* Main thread. pprof: binary, from the loaded profile (and the bases'). */
static int run_pprof(const struct export_args *a)
{
	struct profile *p, *q = NULL;
	char perr[512];
	int prc, pst = cli_load_narrow("export", a->paths, a->npath,
				       PROFILE_CALLTREE, &a->nw, &p, &prc, perr,
				       sizeof perr, 1);
	if (pst >= 0)
		return pst;
	pprof_quiet = a->quiet;
	if (a->bases.n) {
		int brc;
		pst = cli_load_bases("export", &a->bases, PROFILE_CALLTREE,
				     &a->nw, &q, &brc, perr, sizeof perr);
		if (pst >= 0) {
			profile_free(p);
			return pst;
		}
		pprof_base = q;
	}
	pst = cli_export_write("export", a->fmt->name, a->path, a->outpath, p,
			       fmt_pprof, prc);
	profile_free(q);
	return pst;
}

/* Main thread. The logs' total size, checking that each can be read
** (before OUT is made: a typo leaves no empty file); -1 after a
** message. */
static off_t logs_size(const struct export_args *a)
{
	off_t total = 0;
	struct stat st;
	for (size_t i = 0; i < a->npath; i++) {
		if (access(a->paths[i], R_OK) != 0) {
			cli_err("export", "cannot open %s: %s", a->paths[i],
				strerror(errno));
			return -1;
		}
		if (stat(a->paths[i], &st) == 0)
			total += st.st_size;
	}
	return total;
}

/* Main thread. The writer's options from a (total: the logs' size); -1,
** or the exit status after a message. */
static int writer_opts(const struct export_args *a, off_t total,
		       struct export_opts *opts)
{
	memset(opts, 0, sizeof *opts);
	opts->snapshot = a->snapk;
	opts->host = export_host;
	opts->sample_interval = cli_sample_interval;
	opts->progress = isatty(2) && total > (off_t)PROGRESS_MIN_BYTES;
	if (a->npath > 1) {
		opts->paths = a->paths;
		opts->npath = a->npath;
	}
	if (cli_narrow_any(&a->nw)) {
		struct cli_window w;
		int wst =
		    cli_narrow_window("export", a->paths, a->npath, &a->nw, &w);
		if (wst >= 0)
			return wst;
		opts->narrow = 1;
		opts->win = w.win;
		opts->from_ns = w.from_ns;
		opts->to_ns = w.to_ns;
		opts->focus = a->nw.focus;
		opts->ignore = a->nw.ignore;
	}
	return -1;
}

/* Main thread. The exit status for the writer's result rc (message err,
** size note note), after saying what it means. */
static int write_status(const struct export_args *a, int rc, const char *err,
			const char *note)
{
	int st_rc;
	if (rc == EXPORT_EMPTY) {
		cli_err("export", "%s", err);
		return CLI_TRUNCATED;
	}
	if (rc == 0)
		st_rc = CLI_OK;
	else if (rc == -ENODATA) {
		cli_err("export",
			"warning: log truncated, exporting what is "
			"there: %s",
			err);
		st_rc = CLI_OK;
	} else if (rc == -EBADMSG || rc == -ENOTSUP) {
		cli_err("export", "corrupt log, exported the part before: %s",
			err);
		st_rc = CLI_CORRUPT;
	} else {
		cli_err("export", "%s", err);
		return CLI_USAGE;
	}
	if (note[0])
		cli_err("export", "note: to stay under %ux the log's size: %s",
			EXPORT_SIZE_RATIO, note);
	if (!a->quiet)
		cli_err("export", "note: the %s format leaves out: %s",
			a->fmt->name, a->fmt->left_out);
	return st_rc;
}

/* Main thread. The text formats: the writer streams the logs into OUT. */
static int run_stream(const struct export_args *a)
{
	off_t total = logs_size(a);
	if (total < 0)
		return CLI_USAGE;
	struct cli_out out;
	if (cli_out_open("export", a->outpath, &out) >= 0)
		return CLI_USAGE;
	struct export_opts opts;
	int wst = writer_opts(a, total, &opts);
	if (wst >= 0) {
		cli_out_close(&out, 0);
		return wst;
	}
	char err[512], note[512] = "";
	opts.note = note;
	opts.notelen = sizeof note;
	int rc = a->fmt->write(a->paths[0], out.f, &opts, err, sizeof err);
	int keep =
	    rc == 0 || rc == -ENODATA || rc == -EBADMSG || rc == -ENOTSUP;
	int crc = cli_out_close(&out, keep);
	if (keep && crc < 0) {
		snprintf(err, sizeof err, "cannot write %s: %s",
			 strcmp(a->outpath, "-") ? a->outpath
						 : "standard output",
			 strerror(-crc));
		rc = -EIO;
	}
	return write_status(a, rc, err, note);
}

/* Main thread. 'ljlog export'. */
int cli_export(int argc, char **argv)
{
	static struct export_args a; /* the bases are large */
	int st;
	memset(&a, 0, sizeof a);
	a.outpath = "-";
	if ((st = parse_opts(argc, argv, &a)) >= 0 ||
	    (st = find_format(&a)) >= 0)
		return st;
	a.paths = cli_files_arg("export", argc, argv, &a.npath);
	if (!a.paths)
		return cli_file_rc;
	a.path = cli_logs_label(a.paths, a.npath, a.label, sizeof a.label);
	if ((st = check_args(&a)) >= 0)
		return st;
	return a.fmt->write ? run_stream(&a) : run_pprof(&a);
}
