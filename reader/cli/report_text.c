/*
** ljlog CLI: 'ljlog report', the text form: the tables of the column model
** (report_cols.c) with their columns of what the log recorded, and the
** prose around them (header, samples, traces, GC, totals).
*/
#include "report_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "logger/opts.h"
#include "proc/sort.h"

/* What the text report shows: the command's options and what the log
** recorded. */
struct view {
	size_t limit;  /* rows a limited table, 0 all */
	unsigned fams; /* OPTS_* and FAM_* shown */
	int sort;      /* REPORT_SORT_* of the function table */
};

/* Main thread. The column of sec at text position pos, or NULL. */
static const struct column *text_col(const struct section *sec, int pos)
{
	for (size_t i = 0; i < sec->ncol; i++)
		if (sec->cols[i].tpos == pos)
			return &sec->cols[i];
	return NULL;
}

/* Main thread. One value as text in a column (k > 0: after a separator). */
static void text_cell(const struct profile *p, const struct column *col,
		      size_t k, struct cell *c)
{
	char num[64];
	const char *s = num;
	if (k)
		fputs("  ", stdout);
	switch (col->type) {
	case COL_U64: snprintf(num, sizeof num, "%" PRIu64, c->u); break;
	case COL_I64: snprintf(num, sizeof num, "%" PRId64, c->i); break;
	case COL_TIME:
		cli_fmt_time(num, sizeof num, profile_ns(p, c->u));
		break;
	case COL_BYTES: cli_fmt_bytes(num, sizeof num, (int64_t)c->u); break;
	case COL_IBYTES: cli_fmt_bytes(num, sizeof num, c->i); break;
	case COL_PCT: snprintf(num, sizeof num, "%.1f%%", c->pct); break;
	case COL_OPT:
		if (c->none)
			s = "-";
		else
			cli_fmt_bytes(num, sizeof num, (int64_t)c->u);
		break;
	case COL_QSTR: cli_quote(stdout, c->s, strlen(c->s)); return;
	default: s = c->s; break;
	}
	printf("%*s", col->width, s);
}

/* Main thread. Whether a value is nothing: a number that is 0 (strings and
** shares do not count). */
static int cell_zero(const struct column *col, const struct cell *c)
{
	switch (col->type) {
	case COL_U64:
	case COL_TIME:
	case COL_BYTES: return c->u == 0;
	case COL_I64:
	case COL_IBYTES: return c->i == 0;
	case COL_OPT: return c->none || c->u == 0;
	default: return 1;
	}
}

/* Main thread. The text columns of sec that families fams show, in text
** order; returns how many (at most cap). */
static size_t text_cols(const struct section *sec, unsigned fams,
			const struct column **out, size_t cap)
{
	const struct column *col;
	size_t n = 0;
	for (int pos = 1; (col = text_col(sec, pos)) && n < cap; pos++)
		if (!col->fam || (col->fam & fams))
			out[n++] = col;
	return n;
}

/* Main thread. Whether row r of sec has nothing in all of its numbers
** (cols: the nc columns shown). */
static int row_zero(const struct profile *p, const struct section *sec,
		    const struct column **cols, size_t nc, uint32_t r,
		    struct cell *c)
{
	for (size_t k = 0; k < nc; k++) {
		report_cell_get(p, sec, cols[k], r, c);
		if (!cell_zero(cols[k], c))
			return 0;
	}
	return 1;
}

/* Main thread. The key of function f that sort orders the function table
** by (calls: calls were recorded: self and total are times, else samples). */
static uint64_t fn_key(const struct profile_fn *f, int sort, int calls)
{
	switch (sort) {
	case REPORT_SORT_SELF: return calls ? f->self : f->samples_self;
	case REPORT_SORT_TOTAL: return calls ? f->total : f->samples_total;
	case REPORT_SORT_CALLS: return f->calls;
	case REPORT_SORT_SAMPLES: return f->samples_self;
	default: return f->alloc_bytes;
	}
}

/* Sort context: the profile, the key, the default order's ranks. */
struct fn_order {
	const struct profile *p;
	int sort, calls;
	const uint32_t *rank;
};

/* Main thread. Functions by the key, larger first; ties in the default
** order. */
static int by_key(uint32_t a, uint32_t b, const void *ctx)
{
	const struct fn_order *o = ctx;
	int c = sort_desc_u64(fn_key(&o->p->fns[a], o->sort, o->calls),
			      fn_key(&o->p->fns[b], o->sort, o->calls));
	return c ? c : sort_asc_u64(o->rank[a], o->rank[b]);
}

/* Main thread. The function rows ix (all nrow of them, default order)
** reordered by v->sort; ix itself when there is nothing to do. */
static uint32_t *sort_fns(const struct profile *p, const struct view *v,
			  uint32_t *ix, size_t nrow)
{
	if (!ix || v->sort == REPORT_SORT_DEFAULT)
		return ix;
	struct fn_order o = {p, v->sort, (v->fams & OPTS_CALLS) != 0, NULL};
	uint32_t *rank = malloc((nrow ? nrow : 1) * sizeof *rank);
	if (!rank)
		return ix;
	for (size_t i = 0; i < nrow; i++)
		rank[ix[i]] = (uint32_t)i;
	o.rank = rank;
	uint32_t *s = sort_index(nrow, by_key, &o);
	free(rank);
	if (!s)
		return ix;
	free(ix);
	return s;
}

/* Main thread. What the function table is sorted by, in words. */
static const char *sort_name(const struct view *v)
{
	int calls = (v->fams & OPTS_CALLS) != 0;
	int sort = v->sort;
	if (sort == REPORT_SORT_DEFAULT)
		sort = calls		       ? REPORT_SORT_SELF
		       : v->fams & OPTS_SAMPLE ? REPORT_SORT_SAMPLES
					       : REPORT_SORT_ALLOC;
	switch (sort) {
	case REPORT_SORT_SELF: return calls ? "self time" : "self samples";
	case REPORT_SORT_TOTAL: return calls ? "total time" : "total samples";
	case REPORT_SORT_CALLS: return "calls";
	case REPORT_SORT_SAMPLES: return "self samples";
	default: return "alloc bytes";
	}
}

/* Main thread. A section as a text table: title, heading, rows, the
** columns of the families v->fams shows. A limited section leaves out its
** rows with nothing in every number (nothing at all: the whole section)
** and shows at most v->limit rows, then a line saying how many more. */
static void text_table(const struct profile *p, const struct section *sec,
		       const struct view *v)
{
	const struct column *cols[32];
	struct cell c = {0};
	size_t nrow, nc = text_cols(sec, v->fams, cols, 32);
	size_t shown = 0, more = 0, zero = 0;
	uint32_t *ix = sec->rows(p, &nrow);
	if (sec->rows == report_rows_fns)
		ix = sort_fns(p, v, ix, nrow);
	if (sec->limited && ix) {
		for (size_t i = 0; i < nrow; i++)
			zero += row_zero(p, sec, cols, nc, ix[i], &c);
		if (zero == nrow)
			goto out;
	}
	if (sec->title) /* a title takes the count, the order, what self is */
		printf(sec->title, nrow, sort_name(v),
		       p->flags & PROFILE_BUILTINS
			   ? "innermost Lua frame, a builtin its own"
			   : "innermost Lua function, with the builtins it "
			     "calls");
	for (size_t k = 0; k < nc; k++)
		printf("%s%*s", k ? "  " : "", cols[k]->width, cols[k]->head);
	putchar('\n');
	for (size_t i = 0; ix && i < nrow; i++) {
		if (sec->limited && row_zero(p, sec, cols, nc, ix[i], &c))
			continue;
		if (sec->limited && v->limit && shown == v->limit) {
			more++;
			continue;
		}
		for (size_t k = 0; k < nc; k++) {
			report_cell_get(p, sec, cols[k], ix[i], &c);
			text_cell(p, cols[k], k, &c);
		}
		putchar('\n');
		shown++;
	}
	if (more && zero)
		printf("  … and %zu more (-n 0 for all); %zu rows with nothing "
		       "left out\n",
		       more, zero);
	else if (more)
		printf("  … and %zu more (-n 0 for all)\n", more);
	else if (zero)
		printf("  (%zu rows with nothing left out)\n", zero);
out:
	free(ix);
	free(c.buf);
}

/* Main thread. The samples part: totals, states, functions (when the
** function table does not show them already), lines. */
static void text_samples(const struct profile *p, const struct view *v)
{
	const struct samples *s = &p->smp;
	char a[32], b[32];
	int wall;
	uint64_t iv = report_sample_interval(p, &wall);
	if (!s->samples && !s->signals) {
		if ((v->fams & OPTS_SAMPLE) && iv)
			printf("\nSamples: none (the program ran %s; the timer "
			       "fires every %s of %s time)\n",
			       cli_fmt_time(a, sizeof a, p->duration_ns),
			       cli_fmt_time(b, sizeof b, iv),
			       wall ? "wall-clock" : "CPU");
		return;
	}
	printf("\nSamples: %" PRIu64 " (%" PRIu64 " dropped, %" PRIu64
	       " signals)\n",
	       s->samples, s->samples_dropped, s->signals);
	if (iv && s->samples) {
		printf("  they stand for %" PRIu64 " timer intervals of %s: "
		       "%s of %s time\n",
		       s->intervals, cli_fmt_time(a, sizeof a, iv),
		       cli_fmt_time(b, sizeof b, s->intervals * iv),
		       wall	    ? "wall-clock"
		       : p->nvm > 1 ? "the threads' CPU"
				    : "the thread's CPU");
		/* The kernel checks CPU-time timers at its tick (4 ms at
		** 250 Hz): one signal then counts the intervals it merged. */
		if (s->intervals > s->samples + s->samples / 20)
			printf("  (a signal came every %.1f intervals: the "
			       "kernel fires timers no faster than its "
			       "tick)\n",
			       (double)s->intervals / (double)s->samples);
	}
	uint64_t own = s->state[FORMAT_STATE_LJLOG];
	if (own && iv)
		printf(
		    "  ljlog's own work: %" PRIu64 " samples, %s "
		    "(writing the log, heap snapshots): not the program's\n",
		    own,
		    cli_fmt_time(a, sizeof a,
				 s->state_intervals[FORMAT_STATE_LJLOG] * iv));
	printf("  by state:\n");
	for (unsigned i = 0; i < FORMAT_STATE__MAX; i++)
		if (s->state[i])
			printf("    %-8s %10" PRIu64 " %6.1f%%\n",
			       format_state_name(i), s->state[i],
			       report_pct(s->state[i], s->samples));
	if (!(v->fams & FAM_SAMPLES_ONLY))
		text_table(p, &report_sec_fn_samples, v);
	text_table(p, &report_sec_lines, v);
}

/* Main thread. The traces part: compiled traces, aborts, flushes. */
static void text_traces(const struct profile *p, const struct view *v)
{
	const struct samples *s = &p->smp;
	if (!s->ntrace && !s->trace_starts && !s->trace_aborts &&
	    !s->trace_flushes)
		return;
	printf("\nTraces: %zu compiled, %" PRIu64 " started, %" PRIu64
	       " aborted, %" PRIu64 " flush%s\n",
	       s->ntrace, s->trace_starts, s->trace_aborts, s->trace_flushes,
	       s->trace_flushes == 1 ? "" : "es");
	text_table(p, &report_sec_traces, v);
	if (s->nabort)
		text_table(p, &report_sec_aborts, v);
}

/* Main thread. The GC part: the collector's own time first (its samples),
** then the cycles' spans, which the program's own time between the
** collector's steps is part of (the GC is incremental). */
static void text_gc(const struct profile *p, unsigned fams)
{
	const struct heap_gc *gc = &p->heap.gc;
	const struct samples *s = &p->smp;
	char a[32], b[32];
	printf("\nGC: %" PRIu64 " cycles, peak heap %s, %" PRIu64
	       " GC events\n",
	       gc->cycles, cli_fmt_bytes(b, sizeof b, (int64_t)gc->peak_heap),
	       gc->events);
	if ((fams & OPTS_SAMPLE) && s->samples)
		printf("  the collector itself: %" PRIu64 " of %" PRIu64
		       " samples, %.1f%% (state gc)\n",
		       s->state[FORMAT_STATE_GC], s->samples,
		       report_pct(s->state[FORMAT_STATE_GC], s->samples));
	else
		printf("  the collector itself: not measured (its samples "
		       "in state gc do: add -e sample)\n");
	printf("  cycles span %s of the run's %s: the GC is incremental, the "
	       "program\n  runs between its steps, and a phase's span "
	       "below counts that time too\n",
	       cli_fmt_time(a, sizeof a, report_gc_busy_ns(p)),
	       cli_fmt_time(b, sizeof b, p->duration_ns));
	for (unsigned i = 0; i < FORMAT_GC__MAX; i++)
		if (i != FORMAT_GC_PAUSE)
			printf("  %-12s %12s\n", format_gc_phase_name(i),
			       cli_fmt_time(a, sizeof a,
					    profile_ns(p, gc->phase[i])));
	printf("  idle between cycles (LuaJIT's \"pause\" state) %s\n",
	       cli_fmt_time(a, sizeof a,
			    profile_ns(p, gc->phase[FORMAT_GC_PAUSE])));
}

/* Main thread. The report's first lines: the program, how long it ran,
** what the log holds, what was not recorded and why; the JIT turned off. */
static void text_header(const struct profile *p, const char *path, int rc,
			const char *err, unsigned fams, int verbose)
{
	char d[32];
	if (p->nlog > 1)
		report_logs_text(p);
	else {
		printf("ljlog report: ");
		if (p->have_intro)
			printf("%s (pid %" PRIu64 "), ", p->exe, p->pid);
		printf("ran %s (log %s, ",
		       cli_fmt_time(d, sizeof d, p->duration_ns), path);
		if (rc == 0)
			printf("complete)\n");
		else
			printf("%s: %s)\n",
			       rc == -ENODATA ? "TRUNCATED" : "CORRUPT", err);
	}
	if (verbose && p->have_intro)
		printf("  %s, format version %" PRIu64 ", options: %s\n",
		       p->luajit_version, p->version, p->options);
	if (verbose)
		printf("  time base: %s (%.4f ns per tick)\n",
		       report_timebase_name(p->timebase), p->ns_per_tick);
	report_narrow_text(p);
	if (p->only_str) {
		printf("  zone filter: only samples and allocations while "
		       "zone ");
		cli_quote(stdout, p->only_str, strlen(p->only_str));
		printf(" was open (calls, time, frees, GC: whole log)\n");
	}
	printf("  recorded:");
	int none = 1;
	for (size_t i = 0; i < report_nfamily; i++)
		if (fams & report_families[i].bit) {
			printf(" %s", report_families[i].name);
			none = 0;
		}
	printf("%s\n", none ? " nothing" : "");
	none = 1;
	for (size_t i = 0; i < report_nfamily; i++)
		if (!(fams & report_families[i].bit)) {
			printf("%s %s (%s)", none ? "  not recorded:" : ",",
			       report_families[i].name, report_families[i].why);
			none = 0;
		}
	if (!none)
		putchar('\n');
	size_t off = 0;
	for (size_t i = 0; i < p->nvm; i++)
		off += (p->vms[i].flags & FORMAT_VM_JIT_OFF) != 0;
	if (off)
		printf(
		    "  JIT off%s: recording calls turns LuaJIT's compiler off, "
		    "so functions it would compile\n"
		    "  or inline (math.sqrt...) show their interpreter cost; "
		    "record without calls (-e sample,gc) to see the JIT's "
		    "profile\n",
		    off < p->nvm ? " in some VMs" : "");
	leaks_text_sampled(p);
}

/* Main thread. The text report. */
void report_text(const struct profile *p, const char *path, int rc,
		 const char *err, const struct report_opts *o)
{
	struct totals t;
	struct view v = {o->limit, 0, o->sort};
	char a[32], b[32], c[32], d[32], e[32];
	report_sum(p, &t);
	unsigned fams =
	    report_recorded(p, t.calls, t.alloc_count + t.free_count);
	text_header(p, path, rc, err, fams, o->verbose);
	if ((fams & OPTS_SAMPLE) && !(fams & OPTS_CALLS))
		fams |= FAM_SAMPLES_ONLY;
	if (p->nvm > 1)
		fams |= FAM_MULTI_VM;
	if (p->nlog > 1)
		fams |= FAM_MULTI_LOG;
	v.fams = fams;
	memset(&report_share, 0, sizeof report_share);
	for (size_t i = 0; i < p->nfn; i++) {
		report_share.fn_self += p->fns[i].self;
		report_share.fn_alloc += p->fns[i].alloc_bytes;
	}
	for (size_t i = 0; i < p->heap.nsite; i++)
		report_share.site_alloc += p->heap.sites[i].alloc_bytes;

	if (fams & (OPTS_CALLS | OPTS_ALLOC | OPTS_SAMPLE))
		text_table(p,
			   fams & OPTS_CALLS	? &report_sec_fns
			   : fams & OPTS_SAMPLE ? &report_sec_fns_samples
						: &report_sec_fns_alloc,
			   &v);
	if (fams & OPTS_ALLOC)
		text_table(p, &report_sec_sites, &v);
	text_samples(p, &v);
	text_traces(p, &v);
	report_zones_text(p, o->limit);

	if (fams & OPTS_GC)
		text_gc(p, fams);

	text_table(p, &report_sec_vms, &v);

	printf("\nTotals: %zu VMs, %" PRIu64 " coroutines, %" PRIu64
	       " events, %" PRIu64 " calls, %" PRIu64 " samples\n",
	       p->nvm, p->coroutines, p->events, t.calls, p->smp.samples);
	if (p->have_end && p->end.events_dropped) {
		char m[256];
		printf("  missing: %s, in %" PRIu64 " buffer%s ljlog dropped "
		       "when out of memory: the counts above are short\n",
		       cli_fmt_dropped(m, sizeof m, &p->end),
		       p->end.buffers_dropped,
		       p->end.buffers_dropped == 1 ? "" : "s");
	}
	if (p->have_end && p->end.flush_waits)
		printf(
		    "  the program waited %s for ljlog's writer thread (%" PRIu64
		    " times all its buffers were queued): a larger "
		    "buffer= helps\n",
		    cli_fmt_time(a, sizeof a, p->end.flush_wait_ns),
		    p->end.flush_waits);
	if (p->calls.unmatched_exits)
		printf("  %" PRIu64 " returns from frames entered before the "
		       "profiler attached\n",
		       p->calls.unmatched_exits);
	if (fams & OPTS_ALLOC)
		printf("  heap: %s at attach + %s allocated (%" PRIu64
		       " allocs) - %s freed (%" PRIu64 " frees) = %s live, "
		       "peak %s\n",
		       cli_fmt_bytes(a, sizeof a, (int64_t)t.attach),
		       cli_fmt_bytes(b, sizeof b, (int64_t)t.alloc_bytes),
		       t.alloc_count,
		       cli_fmt_bytes(c, sizeof c, (int64_t)t.free_bytes),
		       t.free_count, cli_fmt_bytes(d, sizeof d, t.live),
		       cli_fmt_bytes(e, sizeof e, t.peak));
}
