/*
** ljlog CLI: 'ljlog top', a live view of a growing log, refreshed every
** interval: the top functions by samples, self time or allocated bytes over
** the last interval and in total, the GC share, dropped samples.
*/
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "decode/decode.h"
#include "logger/opts.h"
#include "profile/profile.h"
#include "proc/sort.h"

static const char top_usage[] =
    "usage: ljlog top [-d SECS] [-n N] [-s KEY] [--once] FILE\n"
    "\n"
    "A live view of a log that a running program writes, refreshed every\n"
    "interval: header (file, VMs, elapsed log time, samples, dropped\n"
    "samples, GC share of the samples and of the time) and the top\n"
    "functions with their samples (innermost Lua function, with the\n"
    "builtins it calls, as 'ljlog report' counts them), self time,\n"
    "allocated bytes and calls over the last interval and in total. Ends\n"
    "with a final frame at the END block; works on a finished log too.\n"
    "On a terminal the screen is redrawn; otherwise each frame is printed\n"
    "as plain text after a '== frame N' line.\n"
    "\n"
    "  -d, --interval SECS  refresh period (default 1, fractions allowed)\n"
    "  -n, --top N          rows (default 20, or what fits the terminal;\n"
    "                       0 all)\n"
    "  -s, --sort KEY       samples, self (time; also 'time'), calls or\n"
    "                       alloc (bytes); default samples when the log\n"
    "                       has samples, else self, else alloc\n"
    "  -1, --once           read the log as it is now, print the totals once\n"
    "                       and exit\n"
    "  -h, --help           this help\n"
    "\n"
    "Columns of families the log did not record are left out; times are\n"
    "in ms or s, bytes in B, KiB, MiB or GiB. The final frame shows what\n"
    "'ljlog report' shows.\n"
    "\n"
    "Exit status: 0 the END block was read, or (--once) the log is still\n"
    "being written (its writer runs: the frame says 'live'), 1 the log\n"
    "stops without one and its writer is gone, 2 usage error or file\n"
    "cannot be opened, 3 corrupt.\n";

enum { SORT_AUTO, SORT_SAMPLES, SORT_TIME, SORT_ALLOC, SORT_CALLS };

/* What one function had at a frame. */
struct top_row {
	uint64_t samples, self, alloc, calls;
};

/* Top state. */
struct top {
	const char *path;
	struct profile *p;
	int finished;	      /* profile_finish done: read p->fns */
	int tty;	      /* redraw a terminal */
	int sort_opt;	      /* SORT_* given, or SORT_AUTO */
	int sort;	      /* SORT_* of this frame */
	size_t limit;	      /* rows, 0 all */
	double interval;      /* s */
	struct timespec next; /* next frame is due */
	struct timespec last; /* when the previous frame was printed */
	uint64_t frames;
	uint64_t pid; /* writer (INTRO) */
	int writer_gone;
	int once; /* --once: read the log as it is now */
	/* Live samples by function index (innermost Lua function). */
	uint64_t *smp;
	size_t nsmp;
	uint64_t smp_other; /* no Lua frame: attributed at the end */
	/* Each function at the previous frame, and now. */
	struct top_row *prev, *cur;
	size_t nprev, ncur;
};

/* -- Live counts -------------------------------------------------------------- */

/* Main thread. INTRO: the writer's pid. */
static int on_intro(void *ud, const struct decode_intro *in)
{
	struct top *t = ud;
	t->pid = in->pid;
	return 0;
}

/* Main thread. A sample: count it for its innermost Lua function (a
** builtin's for the Lua function that called it, as the report counts
** it), else for its innermost frame. */
static int on_sample(void *ud, const struct decode_sample *s)
{
	struct top *t = ud;
	if (!s->nlua || !s->lua[0].func->user_idx) {
		t->smp_other++;
		return 0;
	}
	uint32_t fn = fnid_of(s->lua[0].func);
	for (size_t i = 0; i < s->nlua && s->lua[i].func->user_idx; i++) {
		uint32_t f = fnid_of(s->lua[i].func);
		if (f < t->p->fnid.n && t->p->fnid.fns[f].kind == FNID_LUA) {
			fn = f;
			break;
		}
	}
	if (fn >= t->nsmp) {
		size_t n = t->nsmp ? t->nsmp : 64;
		while (n <= fn)
			n *= 2;
		uint64_t *a = realloc(t->smp, n * sizeof *a);
		if (!a)
			return -ENOMEM;
		memset(a + t->nsmp, 0, (n - t->nsmp) * sizeof *a);
		t->smp = a;
		t->nsmp = n;
	}
	t->smp[fn]++;
	return 0;
}

/* Main thread. Fill t->cur with what each function has now. */
static int snapshot(struct top *t)
{
	struct profile *p = t->p;
	size_t n = t->finished ? p->nfn : p->fnid.n;
	struct top_row *r = calloc(n ? n : 1, sizeof *r);
	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (t->finished) {
			r[i].samples = p->fns[i].samples_self;
			r[i].self = p->fns[i].self;
			r[i].alloc = p->fns[i].alloc_bytes;
			r[i].calls = p->fns[i].calls;
			continue;
		}
		r[i].samples = i < t->nsmp ? t->smp[i] : 0;
		r[i].self = calls_fn_get(&p->calls, i)->self;
		r[i].alloc = heap_fn_get(&p->heap, i)->alloc_bytes;
		r[i].calls = calls_fn_get(&p->calls, i)->calls;
	}
	free(t->cur);
	t->cur = r;
	t->ncur = n;
	return 0;
}

/* -- Printing ----------------------------------------------------------------- */

/* Main thread. x - y, 0 when y is larger (a live count the end revised). */
static uint64_t sub0(uint64_t x, uint64_t y)
{
	return x > y ? x - y : 0;
}

/* Main thread. The previous value of function i's row. */
static const struct top_row *prev_row(const struct top *t, uint32_t i)
{
	static const struct top_row zero;
	return i < t->nprev ? &t->prev[i] : &zero;
}

/* Main thread. The sort key of a row. */
static uint64_t key(const struct top *t, const struct top_row *r)
{
	switch (t->sort) {
	case SORT_SAMPLES: return r->samples;
	case SORT_TIME: return r->self;
	case SORT_CALLS: return r->calls;
	default: return r->alloc;
	}
}

/* Main thread. Order: key total desc, key of the interval desc, name. */
static int cmp_row(uint32_t a, uint32_t b, const void *ctx)
{
	const struct top *t = ctx;
	const struct top_row *x = &t->cur[a], *y = &t->cur[b];
	int c;
	if ((c = sort_desc_u64(key(t, x), key(t, y))) ||
	    (c = sort_desc_u64(sub0(key(t, x), key(t, prev_row(t, a))),
			       sub0(key(t, y), key(t, prev_row(t, b))))))
		return c;
	return strcmp(t->p->fnid.fns[a].name, t->p->fnid.fns[b].name);
}

/* Main thread. Rows shown: the key is not zero. */
static int keep_row(uint32_t i, const void *ctx)
{
	const struct top *t = ctx;
	return key(t, &t->cur[i]) != 0;
}

/* Main thread. Seconds from a to b. */
static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Main thread. Time in the GC (the phases but the pause between cycles), ns. */
static uint64_t gc_ns(const struct profile *p)
{
	uint64_t ns = 0;
	for (unsigned i = 0; i < FORMAT_GC__MAX; i++)
		if (i != FORMAT_GC_PAUSE)
			ns += profile_ns(p, p->heap.gc.phase[i]);
	return ns;
}

/* Main thread. The heading of the table: the columns of the families
** fams recorded (two spaces between columns: a column's value may hold
** one, "1.5 ms"). */
static void heading(unsigned fams)
{
	if (fams & OPTS_SAMPLE)
		printf("%9s  %9s  ", "smp.last", "smp.total");
	if (fams & OPTS_CALLS)
		printf("%11s  %11s  ", "self.last", "self.total");
	if (fams & OPTS_ALLOC)
		printf("%11s  %11s  ", "alloc.last", "alloc.total");
	if (fams & OPTS_CALLS)
		printf("%10s  %10s  ", "calls.last", "calls");
	printf("function\n");
}

/* Main thread. Function i's row, the columns heading shows. */
static void row(const struct top *t, unsigned fams, uint32_t i)
{
	const struct profile *p = t->p;
	const struct top_row *c = &t->cur[i], *o = prev_row(t, i);
	char a[32], b[32];
	if (fams & OPTS_SAMPLE)
		printf("%9" PRIu64 "  %9" PRIu64 "  ",
		       sub0(c->samples, o->samples), c->samples);
	if (fams & OPTS_CALLS)
		printf("%11s  %11s  ",
		       cli_fmt_time(a, sizeof a,
				    profile_ns(p, sub0(c->self, o->self))),
		       cli_fmt_time(b, sizeof b, profile_ns(p, c->self)));
	if (fams & OPTS_ALLOC)
		printf("%11s  %11s  ",
		       cli_fmt_bytes(a, sizeof a,
				     (int64_t)sub0(c->alloc, o->alloc)),
		       cli_fmt_bytes(b, sizeof b, (int64_t)c->alloc));
	if (fams & OPTS_CALLS)
		printf("%10" PRIu64 "  %10" PRIu64 "  ",
		       sub0(c->calls, o->calls), c->calls);
	printf("%s\n", p->fnid.fns[i].name);
}

/* Main thread. Print one frame; state: "live", "end", "truncated",
** "corrupt". */
static int frame(struct top *t, const char *state)
{
	struct profile *p = t->p;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!t->finished)
		profile_timebase_now(p);
	if (snapshot(t) < 0)
		return -ENOMEM;
	t->sort = t->sort_opt;
	if (t->sort == SORT_AUTO) { /* again each frame: the log grows */
		int calls = 0;
		for (size_t i = 0; i < t->ncur && !calls; i++)
			calls = t->cur[i].calls != 0;
		t->sort = p->smp.samples ? SORT_SAMPLES
			  : calls	 ? SORT_TIME
					 : SORT_ALLOC;
	}
	uint64_t calls = 0, allocs = 0;
	for (size_t i = 0; i < t->ncur; i++) {
		calls += t->cur[i].calls;
		allocs += t->cur[i].alloc;
	}
	unsigned fams = report_recorded(p, calls, allocs);
	size_t n;
	uint32_t *ix = sort_index_where(t->ncur, keep_row, cmp_row, t, &n);
	if (!ix)
		return -ENOMEM;
	t->frames++;
	if (t->tty)
		fputs("\033[H\033[2J", stdout);
	else
		printf("%s== frame %" PRIu64 " (%s) ==\n",
		       t->frames > 1 ? "\n" : "", t->frames, state);
	uint64_t dur = p->duration_ns;
	const struct samples *s = &p->smp;
	printf("ljlog top: %s (%s)%s\n", t->path, state,
	       p->have_end && p->end.stop_error ? ", stopped by a write error"
						: "");
	printf("vms %zu, elapsed %.3f s, samples %" PRIu64 ", dropped %" PRIu64
	       ", gc ",
	       p->nvm, (double)dur / 1e9, s->samples, s->samples_dropped);
	if (s->samples)
		printf("%.1f%% of samples",
		       100.0 * (double)s->state[FORMAT_STATE_GC] /
			   (double)s->samples);
	else
		printf("n/a of samples");
	if (p->heap.gc.events && dur)
		printf(", %.1f%% of time\n",
		       100.0 * (double)gc_ns(p) / (double)dur);
	else
		printf(", n/a of time (no gc events)\n");
	static const char *const sname[] = {"", "samples", "self time",
					    "alloc bytes", "calls"};
	if (t->frames > 1)
		printf("sorted by %s; last = the last %.1f s, total = since "
		       "the start\n",
		       sname[t->sort], secs(&t->last, &now));
	else
		printf("sorted by %s; last = total = since the start\n",
		       sname[t->sort]);
	heading(fams);
	size_t shown = t->limit && t->limit < n ? t->limit : n;
	for (size_t k = 0; k < shown; k++)
		row(t, fams, ix[k]);
	if (shown < n)
		printf("… and %zu more (-n 0 for all)\n", n - shown);
	if (!t->finished && t->smp_other)
		printf("(%" PRIu64 " samples without a Lua frame are "
		       "attributed at the end)\n",
		       t->smp_other);
	fflush(stdout);
	free(ix);
	free(t->prev);
	t->prev = t->cur;
	t->nprev = t->ncur;
	t->cur = NULL;
	t->ncur = 0;
	t->last = now;
	return 0;
}

/* Main thread. The next frame is due one interval after now. */
static void due(struct top *t, const struct timespec *now)
{
	long long ns = (long long)now->tv_nsec + (long long)(t->interval * 1e9);
	t->next.tv_sec = now->tv_sec + (time_t)(ns / 1000000000);
	t->next.tv_nsec = (long)(ns % 1000000000);
}

/* Main thread. Print a frame when one is due (now, with force). */
static int tick(struct top *t, int force)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!force && secs(&t->next, &now) < 0)
		return 0;
	due(t, &now);
	return frame(t, "live");
}

/* Main thread. Follow mode at the tail: a frame when due; give up once the
** writer is gone. */
static int on_wait(void *ud, uint64_t size)
{
	struct top *t = ud;
	/* The first frame as soon as the reader has caught up. */
	if (tick(t, !t->frames) < 0)
		return -1;
	if (cli_writer_gone(t->pid)) {
		t->writer_gone = 1;
		return -1;
	}
	return 0;
}

/* -- Terminal ----------------------------------------------------------------- */

static const char tty_enter[] = "\033[?1049h\033[?25l";
static const char tty_leave[] = "\033[?25h\033[?1049l";

/* Async-signal-safe. SIGINT, SIGTERM on a terminal: restore it, exit. */
static void on_signal(int sig)
{
	ssize_t w = write(STDOUT_FILENO, tty_leave, sizeof tty_leave - 1);
	(void)w;
	_exit(128 + sig);
}

/* Main thread. Rows that fit the terminal (default 20). */
static size_t tty_rows(void)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 8)
		return ws.ws_row - 7;
	return 20;
}

/* -- Command ------------------------------------------------------------------ */

/* Main thread. Decode path into t->p (follow unless once), printing frames. The
** reader library's result; message in err. */
static int run(struct top *t, int once, char *err, size_t errlen)
{
	struct reader *r;
	struct decode *d;
	struct decode_sink sink, mine;
	struct reader_block b;
	int rc =
	    reader_open(&r, t->path, once ? 0 : READER_FOLLOW, err, errlen);
	if (rc < 0)
		return rc;
	memset(&mine, 0, sizeof mine);
	mine.ud = t;
	mine.intro = on_intro;
	mine.sample = on_sample;
	if (fanout_add(&t->p->fan, &mine) < 0) {
		reader_close(r);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	profile_sink(t->p, &sink);
	if ((rc = decode_new(&d, &sink)) < 0) {
		reader_close(r);
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	t->p->opened = 1;
	if (!once) {
		unsigned poll = (unsigned)(t->interval * 1000 / 4);
		reader_set_wait(r, on_wait, t,
				poll < 1    ? 1
				: poll > 50 ? 50
					    : poll);
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		due(t, &now); /* a finished log: the final frame only */
	}
	err[0] = '\0';
	while ((rc = reader_next(r, &b)) > 0) {
		if (!decode_kind(b.h.kind))
			continue; /* unknown kind: skipped by length */
		if ((rc = reader_payload(r, &b)) < 0)
			break;
		if ((rc = decode_block(d, &b)) != 0) {
			snprintf(err, errlen, "%s", decode_error(d));
			break;
		}
		if (!once && (rc = tick(t, 0)) < 0)
			break;
	}
	if (rc < 0 && !err[0])
		snprintf(err, errlen, "%s",
			 rc == -ENOMEM ? "out of memory" : reader_error(r));
	decode_free(d);
	reader_close(r);
	return rc;
}

/* The --sort keys (time has two names). */
static const struct {
	const char *name;
	int sort;
} sorts[] = {
    {"samples", SORT_SAMPLES}, {"time", SORT_TIME},   {"self", SORT_TIME},
    {"calls", SORT_CALLS},     {"alloc", SORT_ALLOC},
};

/* Main thread. -d's seconds into t->interval: -1, or CLI_USAGE after a
** message. */
static int parse_interval(struct top *t, const char *s)
{
	char *end;
	errno = 0;
	t->interval = strtod(s, &end);
	if (errno || end == s || *end ||
	    !(t->interval > 0 && t->interval <= 86400)) {
		cli_err("top",
			"-d: '%s' is not a number of seconds "
			"(more than 0, at most 86400)",
			s);
		return CLI_USAGE;
	}
	return -1;
}

/* Main thread. -n's row count into t->limit: -1, or CLI_USAGE after a
** message. */
static int parse_rows(struct top *t, const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-') {
		cli_err("top", "-n: '%s' is not a row count", s);
		return CLI_USAGE;
	}
	t->limit = (size_t)v;
	return -1;
}

/* Main thread. --sort's key into t->sort_opt: -1, or CLI_USAGE after a
** message. */
static int parse_sort(struct top *t, const char *s)
{
	for (size_t i = 0; i < sizeof sorts / sizeof sorts[0]; i++)
		if (!strcmp(s, sorts[i].name)) {
			t->sort_opt = sorts[i].sort;
			return -1;
		}
	cli_err("top", "--sort: '%s' is not samples, self, calls or alloc", s);
	return CLI_USAGE;
}

/* Main thread. Read the options into t, *once (--once) and *limit_given:
** -1, or the exit status (--help, a usage error after a message). */
static int parse_opts(int argc, char **argv, struct top *t, int *once,
		      int *limit_given)
{
	static const struct option lo[] = {
	    {"interval", required_argument, NULL, 'd'},
	    {"top", required_argument, NULL, 'n'},
	    {"sort", required_argument, NULL, 's'},
	    {"once", no_argument, NULL, '1'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int o, st = -1;
	opterr = 0;
	while (st < 0 &&
	       (o = getopt_long(argc, argv, "+d:n:s:1h", lo, NULL)) != -1) {
		switch (o) {
		case 'd': st = parse_interval(t, optarg); break;
		case 'n':
			st = parse_rows(t, optarg);
			*limit_given = 1;
			break;
		case 's': st = parse_sort(t, optarg); break;
		case '1': *once = 1; break;
		case 'h': fputs(top_usage, stdout); return CLI_OK;
		default:
			if (optopt && strchr("dns", optopt))
				cli_err("top", "option '%s' needs a value",
					argv[optind - 1]);
			else
				cli_err("top", "unknown option '%s'",
					argv[optind - 1]);
			cli_see_help("top");
			return CLI_USAGE;
		}
	}
	return st;
}

/* Main thread. After the log: leave the terminal, print the final frame
** and say how the log ended (status: cli_status of the run; err: its
** message); the exit status. */
static int finish(struct top *t, int status, char *err, size_t errlen)
{
	static const char *const state[] = {"end", "truncated", "error",
					    "corrupt", "end"};
	/* --once on a log its writer still writes: not truncated, live. */
	int live = t->once && status == CLI_TRUNCATED && t->pid &&
		   !cli_writer_gone(t->pid);
	if (live)
		status = CLI_OK;
	if (profile_finish(t->p) < 0 && status == CLI_OK) {
		snprintf(err, errlen, "out of memory");
		status = CLI_USAGE;
	}
	t->finished = 1;
	if (t->tty) {
		fputs(tty_leave, stdout);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		t->tty = 0; /* the final frame stays on the screen */
	}
	if (frame(t, live ? "live" : state[status]) < 0) {
		cli_err("top", "out of memory");
		status = CLI_USAGE;
	}
	if (status == CLI_TRUNCATED && t->writer_gone)
		cli_err("top",
			"warning: the writer (pid %" PRIu64 ") is gone and "
			"the log stops without an END block: %s",
			t->pid, err);
	else if (status == CLI_TRUNCATED)
		cli_err("top", "warning: truncated: %s", err);
	else if (status == CLI_CORRUPT)
		cli_err("top", "corrupt log, showing the part before: %s", err);
	else if (status != CLI_OK)
		cli_err("top", "%s", err);
	return status;
}

/* Main thread. 'ljlog top'. */
int cli_top(int argc, char **argv)
{
	struct top t;
	int once = 0, limit_given = 0, st;
	memset(&t, 0, sizeof t);
	t.interval = 1.0;
	t.limit = 20;
	if ((st = parse_opts(argc, argv, &t, &once, &limit_given)) >= 0)
		return st;
	if (!(t.path = cli_file_arg("top", top_usage, argc, argv)))
		return cli_file_rc;
	if (profile_new(&t.p, 0) < 0) {
		cli_err("top", "out of memory");
		return CLI_USAGE;
	}
	t.once = once;
	t.tty = !once && isatty(STDOUT_FILENO);
	if (t.tty && !limit_given)
		t.limit = tty_rows();
	if (t.tty) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		fputs(tty_enter, stdout);
	}
	char err[512];
	int rc = run(&t, once, err, sizeof err);
	if (!t.p->opened) {
		cli_err("top", "%s", err);
		profile_free(t.p);
		return CLI_USAGE;
	}
	st = finish(&t, cli_status(rc), err, sizeof err);
	free(t.smp);
	free(t.prev);
	free(t.cur);
	profile_free(t.p);
	return st;
}
