/*
** ljlog CLI: 'ljlog folded', stacks for flamegraph.pl (the lines are made
** by reader/proc/folded.c).
*/
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "proc/folded.h"
#include "profile/profile.h"
#include "util/intern.h"

static const char folded_usage[] =
    "usage: ljlog folded [--calls [--count] | --lua | --host | --host-only]\n"
    "                    [--lines] [--no-traces] [--zone NAME]\n"
    "                    [--base BASE]... [--focus RE] [--ignore RE]\n"
    "                    [--from T] [--to T] [--from-mark NAME] LOG...\n"
    "\n"
    "Print one line per stack, 'outer;inner;leaf COUNT', the input of\n"
    "flamegraph.pl. A log with timer samples gives sampled stacks (COUNT:\n"
    "samples); a log without gives call stacks (COUNT: self time in ns).\n"
    "\n"
    "Sampled stacks start at the root Lua function of their thread or\n"
    "coroutine (the main chunk): the host frames that lead into the VM\n"
    "(_start, main, lua_pcall, the interpreter) and C functions below the\n"
    "first Lua function (luajit's pmain) are left out. Then come the Lua\n"
    "frames, then the host (C) code the innermost one runs: after a C\n"
    "function, the C code it reaches outside LuaJIT (an FFI call's target,\n"
    "a module's own functions; LuaJIT's code is left out); after a Lua\n"
    "function, C code it called (FFI) with each run of LuaJIT's own unnamed\n"
    "code as one frame named for what the VM was doing: (interpreter),\n"
    "(luajit). A sample in the garbage collector or the JIT compiler ends\n"
    "in (gc) or (jit compiler). The trace a sample ran is not a frame. A\n"
    "sample without a Lua function is one such frame, '(STATE)' when idle\n"
    "or in ljlog ((idle), (ljlog)), or its host frames when it ran no Lua\n"
    "at all.\n"
    "\n"
    "  --calls       call stacks with self time from calls events (the\n"
    "                default for a log without samples)\n"
    "  --count       call stacks (implies --calls) with COUNT the number of\n"
    "                calls of the innermost function by that path\n"
    "  --host        each sample's host and Lua stacks merged whole: the\n"
    "                host frames outside the outermost LuaJIT interpreter\n"
    "                frame, then the Lua frames, then the host frames inside\n"
    "                the innermost interpreter frame (C code called from\n"
    "                Lua). Interpreter frames stand for the Lua frames and\n"
    "                are left out (a sample whose Lua stack could not be read\n"
    "                keeps one). A C function seen both as a Lua frame and as\n"
    "                the host frame next to it is printed once. A sample\n"
    "                running compiled code gets a 'trace N' frame on top of\n"
    "                its Lua frames; one with Lua frames but no interpreter\n"
    "                frame prints its host frames on top of its Lua frames\n"
    "                (and trace): C code called from compiled code, unwound\n"
    "                up to it. A sample with no frame at all is '(STATE)'\n"
    "  --lua         Lua frames only (and the trace)\n"
    "  --host-only   host frames only, as unwound (interpreter included)\n"
    "  --lines       Lua functions as 'chunk:line' of the line executing,\n"
    "                not the function's first line\n"
    "  --no-traces   no 'trace N' frames (--host, --lua)\n"
    "  --zone NAME   sampled stacks: only the samples taken while a zone\n"
    "                named NAME was open (anywhere in the zone stack); exit\n"
    "                1 when the log has no such zone (its zones are listed)\n" CLI_NARROW_HELP
    "  -h, --help    this help\n"
    "\n"
    "Several LOGs merge into one set of stacks (a stack's COUNT is the sum\n"
    "of its counts in each), as 'ljlog report' merges them.\n"
    "\n"
    "  --base BASE   compare with the log BASE (repeat it for several, which\n"
    "                merge): each stack of either once, 'stack BASECOUNT\n"
    "                COUNT', sorted by stack (flamegraph's difffolded.pl\n"
    "                format: flamegraph.pl draws it as a differential graph)\n"
    "\n"
    "Characters ';', ' ' and newline in function names print as '_'.\n"
    "Exit status as for 'ljlog report'.\n";

/* Main thread. Print a sampled stack and its samples. */
static int print_line(void *ud, const char *line, size_t len, uint64_t n)
{
	fwrite(line, 1, len, stdout);
	printf(" %" PRIu64 "\n", n);
	return 0;
}

/* What to print of a profile: call paths (by calls, or by self time) or
** sampled stacks in a view. */
struct fold_what {
	int calls, count;
	unsigned view, flags; /* SAMPLES_VIEW_*, SAMPLES_ST_* */
};

/* A call path's self time in ns (none when it rounds to 0) to fn. */
struct fold_ns {
	const struct profile *p;
	folded_emit fn;
	void *ud;
};

/* Main thread. Pass a call path on with its self time in ns. */
static int emit_ns(void *ud, const char *line, size_t len, uint64_t ticks)
{
	struct fold_ns *x = ud;
	uint64_t ns = profile_ns(x->p, ticks);
	return ns ? x->fn(x->ud, line, len, ns) : 0;
}

/* Main thread. Every stack of p as w says, with its weight, to fn. 0,
** -ENOMEM or fn's return. */
static int fold_each(const struct profile *p, const struct fold_what *w,
		     folded_emit fn, void *ud)
{
	struct fold_ns x = {p, fn, ud};
	if (w->calls && w->count)
		return folded_calls(&p->calls, &p->fnid, FOLDED_CALLS, fn, ud);
	if (w->calls)
		return folded_calls(&p->calls, &p->fnid, FOLDED_SELF, emit_ns,
				    &x);
	return folded_samples(&p->smp, w->view, w->flags, fn, ud);
}

/* Two profiles' stacks: each distinct line once, its weight on each side
** (0 the base, 1 the run). */
struct fold_diff {
	struct intern keys;
	uint64_t *n[2];
	size_t cap;
	int side;
};

/* Main thread. Add a stack's weight to the side being read. */
static int diff_add(void *ud, const char *line, size_t len, uint64_t n)
{
	struct fold_diff *d = ud;
	int64_t k = intern_put(&d->keys, line, len);
	if (k < 0)
		return -ENOMEM;
	if ((size_t)k >= d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 1024;
		for (int s = 0; s < 2; s++) {
			uint64_t *v = realloc(d->n[s], cap * sizeof *v);
			if (!v)
				return -ENOMEM;
			memset(v + d->cap, 0, (cap - d->cap) * sizeof *v);
			d->n[s] = v;
		}
		d->cap = cap;
	}
	d->n[d->side][k] += n;
	return 0;
}

/* Main thread. qsort order of stack lines (by their text). */
static const struct intern *sort_keys;
static int cmp_key(const void *a, const void *b)
{
	return strcmp(intern_str(sort_keys, *(const uint32_t *)a, NULL),
		      intern_str(sort_keys, *(const uint32_t *)b, NULL));
}

/* Main thread. 'folded --base': every stack of the base (q) and of the run
** (p) as "stack BASE RUN", sorted; 0 or -ENOMEM. */
static int print_diff(const struct profile *q, const struct profile *p,
		      const struct fold_what *w)
{
	struct fold_diff d;
	int rc;
	memset(&d, 0, sizeof d);
	if ((rc = fold_each(q, w, diff_add, &d)) == 0) {
		d.side = 1;
		rc = fold_each(p, w, diff_add, &d);
	}
	size_t n = intern_count(&d.keys);
	uint32_t *ix = rc ? NULL : malloc((n ? n : 1) * sizeof *ix);
	if (!rc && !ix)
		rc = -ENOMEM;
	if (!rc) {
		for (size_t i = 0; i < n; i++)
			ix[i] = (uint32_t)i;
		sort_keys = &d.keys;
		qsort(ix, n, sizeof *ix, cmp_key);
		for (size_t i = 0; i < n; i++) {
			size_t len;
			const char *s = intern_str(&d.keys, ix[i], &len);
			fwrite(s, 1, len, stdout);
			printf(" %" PRIu64 " %" PRIu64 "\n", d.n[0][ix[i]],
			       d.n[1][ix[i]]);
		}
	}
	free(ix);
	free(d.n[0]);
	free(d.n[1]);
	intern_free(&d.keys);
	return rc;
}

/* Main thread. 'folded --base': load the base logs as p was loaded and
** print both; 0, -ENOMEM, or an exit status (> 0) after a message. */
static int folded_base(const struct profile *p, const struct fold_what *w,
		       const struct cli_bases *bases,
		       const struct cli_narrow *nw)
{
	struct profile *q;
	char err[512];
	int rc, st;
	st = cli_load_bases("folded", bases, w->calls ? PROFILE_CALLTREE : 0,
			    nw, &q, &rc, err, sizeof err);
	if (st >= 0)
		return st;
	int e = print_diff(q, p, w);
	profile_free(q);
	return e;
}

/* The long options of 'ljlog folded'. */
enum {
	O_CALLS = 256,
	O_COUNT,
	O_LUA,
	O_HOST,
	O_HOSTONLY,
	O_LINES,
	O_NOTRACES,
	O_ZONE,
	O_BASE
};

/* What the command line asks for. */
struct folded_args {
	int calls, count, view; /* view: SAMPLES_VIEW_*, -1 none given */
	unsigned flags;		/* SAMPLES_ST_* */
	const char *zone;
	struct cli_bases bases;
	struct cli_narrow nw;
};

/* Main thread. Take option o (getopt's, with optarg) into a: -1, or the
** exit status (--help, a usage error after a message). */
static int take_opt(struct folded_args *a, int o, char **argv)
{
	int v;
	switch (o) {
	case O_CALLS: a->calls = 1; break;
	case O_COUNT: a->count = 1; break;
	case O_LUA:
	case O_HOST:
	case O_HOSTONLY:
		v = o == O_LUA	  ? SAMPLES_VIEW_LUA
		    : o == O_HOST ? SAMPLES_VIEW_MERGED
				  : SAMPLES_VIEW_HOST;
		if (a->view >= 0 && a->view != v) {
			cli_err("folded", "--lua, --host and "
					  "--host-only exclude each "
					  "other");
			return CLI_USAGE;
		}
		a->view = v;
		break;
	case O_LINES: a->flags |= SAMPLES_ST_LINES; break;
	case O_NOTRACES: a->flags |= SAMPLES_ST_NOTRACE; break;
	case O_ZONE: a->zone = optarg; break;
	case O_BASE: return cli_base_add("folded", &a->bases, optarg);
	case 'h': fputs(folded_usage, stdout); return CLI_OK;
	default:
		if (optopt == O_ZONE)
			cli_err("folded", "--zone needs a zone name");
		else if (optopt == O_BASE)
			cli_err("folded", "--base needs a log");
		else
			cli_err("folded", "unknown option '%s'",
				argv[optind - 1]);
		cli_see_help("folded");
		return CLI_USAGE;
	}
	return -1;
}

/* Main thread. Read the options into a: -1, or the exit status. */
static int parse_opts(int argc, char **argv, struct folded_args *a)
{
	static const struct option lo[] = {
	    {"calls", no_argument, NULL, O_CALLS},
	    {"count", no_argument, NULL, O_COUNT},
	    {"lua", no_argument, NULL, O_LUA},
	    {"host", no_argument, NULL, O_HOST},
	    {"host-only", no_argument, NULL, O_HOSTONLY},
	    {"lines", no_argument, NULL, O_LINES},
	    {"no-traces", no_argument, NULL, O_NOTRACES},
	    {"zone", required_argument, NULL, O_ZONE},
	    {"base", required_argument, NULL, O_BASE},
	    CLI_NARROW_OPTIONS,
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int o, t;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
		if ((t = cli_narrow_opt("folded", &a->nw, o, optarg)) == 1)
			continue;
		if (t || (t = take_opt(a, o, argv)) >= 0)
			return t;
	}
	return -1;
}

/* Main thread. Whether the options go together (--count implies --calls):
** -1, or the exit status after a message. */
static int check_opts(struct folded_args *a)
{
	int sample_opt = a->view >= 0 || a->flags;
	if (a->count && sample_opt) {
		cli_err("folded", "--count weighs call stacks: it takes no "
				  "sample option (--lua, --host, --host-only, "
				  "--lines, --no-traces)");
		return CLI_USAGE;
	}
	if (a->count)
		a->calls = 1;
	if (a->calls && sample_opt) {
		cli_err("folded", "--calls takes no sample option (--lua, "
				  "--host, --host-only, --lines, "
				  "--no-traces)");
		return CLI_USAGE;
	}
	if (a->zone && a->calls) {
		cli_err("folded", "--zone keeps sampled stacks only: it takes "
				  "no --calls or --count");
		return CLI_USAGE;
	}
	if (a->zone && cli_narrow_any(&a->nw)) {
		cli_err("folded", "--zone takes no --focus, --ignore, --from, "
				  "--to or --from-mark (yet)");
		return CLI_USAGE;
	}
	int nst = cli_narrow_check("folded", &a->nw);
	if (nst >= 0)
		return nst;
	if (a->zone && a->bases.n) {
		cli_err("folded", "--base compares whole logs: it takes no "
				  "--zone (yet)");
		return CLI_USAGE;
	}
	return -1;
}

/* Main thread. --zone: a second pass over the logs, on the zones of the
** first (*pp, replaced): -1, or the exit status (*pp freed). rc: the
** first pass's result; path: the logs named in messages. */
static int zone_pass(const struct folded_args *a, const char *const *paths,
		     size_t npath, const char *path, int rc,
		     struct profile **pp)
{
	struct profile *q;
	int st = cli_zone_load("folded", paths, npath, *pp, a->zone, &q);
	profile_free(*pp);
	if (st >= 0)
		return st;
	*pp = q;
	if (!q->smp.samples) {
		cli_err("folded", "no samples in zone '%s' of %s", a->zone,
			path);
		profile_free(q);
		return rc == 0 || rc == -ENODATA ? CLI_TRUNCATED : CLI_CORRUPT;
	}
	return -1;
}

/* Main thread. Print the stacks of p (result rc; sampling: a sample
** option was given) as a asks, p freed; the exit status. */
static int print_folded(const struct folded_args *a, struct profile *p, int rc,
			int sampling, const char *path)
{
	int e = 0;
	struct fold_what w = {
	    a->calls || (!sampling && !p->smp.samples), a->count,
	    a->view >= 0 ? (unsigned)a->view : SAMPLES_VIEW_LUA_FIRST,
	    a->flags};
	if (a->bases.n)
		e = folded_base(p, &w, &a->bases, &a->nw);
	else if (!w.calls && !p->smp.samples)
		cli_err("folded", "no samples in %s (try --calls)", path);
	else
		e = fold_each(p, &w, print_line, NULL);
	profile_free(p);
	if (e > 0) /* folded_base's exit status */
		return e;
	if (e < 0) {
		cli_err("folded", "out of memory");
		return CLI_USAGE;
	}
	return rc == 0 || rc == -ENODATA ? CLI_OK : CLI_CORRUPT;
}

/* Main thread. 'ljlog folded'. */
int cli_folded(int argc, char **argv)
{
	static struct folded_args a; /* the bases are large */
	int st;
	memset(&a, 0, sizeof a);
	a.view = -1;
	if ((st = parse_opts(argc, argv, &a)) >= 0 ||
	    (st = check_opts(&a)) >= 0)
		return st;
	size_t npath;
	const char *const *paths = cli_files_arg("folded", argc, argv, &npath);
	if (!paths)
		return cli_file_rc;
	char label[600];
	const char *path = cli_logs_label(paths, npath, label, sizeof label);
	/* The call tree is only needed for --calls, or for the default on a
	** log that turns out to have no samples. */
	int sampling = a.view >= 0 || a.flags || a.zone;
	struct profile *p;
	char err[512];
	int rc;
	st = cli_load_narrow("folded", paths, npath,
			     sampling ? 0 : PROFILE_CALLTREE, &a.nw, &p, &rc,
			     err, sizeof err, 1);
	if (st >= 0)
		return st;
	if (a.zone && (st = zone_pass(&a, paths, npath, path, rc, &p)) >= 0)
		return st;
	return print_folded(&a, p, rc, sampling, path);
}
