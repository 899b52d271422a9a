/*
** ljlog CLI: 'ljlog report', the model: each table of the report is a
** section, its columns described once (heading and width for text, key for
** JSON, type, accessor); report_text.c and report_json.c walk the same
** columns, so the two forms cannot drift. Also the figures both forms
** print around the tables (totals, time base, sampling interval, GC time).
*/
#include "report_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "logger/opts.h"

/* Main thread. Make c->s from a format (NULL when out of memory). */
static const char *cell_printf(struct cell *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *cell_printf(struct cell *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(c->buf, c->cap, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n >= c->cap) {
		char *b = realloc(c->buf, (size_t)n + 1);
		if (!b)
			return c->s = NULL;
		c->buf = b;
		c->cap = (size_t)n + 1;
		va_start(ap, fmt);
		vsnprintf(c->buf, c->cap, fmt, ap);
		va_end(ap);
	}
	return c->s = n < 0 ? NULL : c->buf;
}

/* Main thread. What the text report's shares are of (report_text sets
** it): the functions' self time and alloc bytes, the sites' alloc bytes. */
struct report_share report_share;

/* Main thread. n as a percentage of total. */
double report_pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

/* Accessors of the values that are not a field of the row. */
#define GET(name)                                                              \
	static void name(const struct profile *p, uint32_t r, struct cell *c)
#define FN    (&p->fns[r])
#define SITE  (&p->heap.sites[r])
#define LINE  (&p->smp.lines[r])
#define TRACE (&p->smp.traces[r])
#define ABORT (&p->smp.aborts[r])
#define VM    (&p->vms[r])

/* Main thread. A function's name. */
GET(fn_name)
{
	c->s = FN->name;
}
/* Main thread. A function's kind. */
GET(fn_kind)
{
	c->s = fnid_kind_name(FN->kind);
}
/* Main thread. A function's file or object. */
GET(fn_file)
{
	c->s = FN->file;
}
/* Main thread. A function's self samples (the report's: samples_self), as
** a share of all samples. */
GET(fn_samples_pct)
{
	c->pct = report_pct(FN->samples_self, p->smp.samples);
}
/* Main thread. The builtin a function's samples_lua were most in ("" when
** none). */
GET(fn_via)
{
	c->s = FN->via_samples ? p->fns[FN->via].name : "";
}
/* Main thread. A function's self time, as a share of all functions'. */
GET(fn_self_pct)
{
	c->pct = report_pct(FN->self, report_share.fn_self);
}
/* Main thread. A function's alloc bytes, as a share of all functions'. */
GET(fn_alloc_pct)
{
	c->pct = report_pct(FN->alloc_bytes, report_share.fn_alloc);
}
/* Main thread. A site's alloc bytes, as a share of all sites'. */
GET(site_alloc_pct)
{
	c->pct = report_pct(SITE->alloc_bytes, report_share.site_alloc);
}
/* Main thread. A function's samples anywhere in the stack, as a report_share. */
GET(fn_total_pct)
{
	c->pct = report_pct(FN->samples_total, p->smp.samples);
}

/* Main thread. Whether f is named only by its object, "[libc.so.6]" for
** "/lib/.../libc.so.6" (fnid_host without a symbol). */
static bool fn_is_bare_object(const struct profile_fn *f)
{
	const char *base = strrchr(f->file, '/');
	base = base ? base + 1 : f->file;
	size_t n = strlen(base);
	return f->name[0] == '[' && strlen(f->name) == n + 2 &&
	       !strncmp(f->name + 1, base, n) && f->name[n + 1] == ']';
}

/* Main thread. The function as text shows it: its name, and its object or
** [builtin] (a frame without a symbol: its object, once); a Lua function
** whose self samples hold a builtin's, the builtin and its share of them
** ("f (app.lua:3), 90% in string.gsub"). */
GET(fn_label)
{
	const struct profile_fn *f = FN;
	uint64_t in = f->samples_self == f->samples_lua ? f->via_samples : 0;
	if ((f->kind == FNID_C || f->kind == FNID_HOST) && f->file[0] &&
	    fn_is_bare_object(f))
		cell_printf(c, "[%s]", f->file);
	else if ((f->kind == FNID_C || f->kind == FNID_HOST) && f->file[0])
		cell_printf(c, "%s [%s]", f->name, f->file);
	else if (f->kind == FNID_FAST)
		cell_printf(c, "%s [builtin]", f->name);
	else if (in && f->samples_self)
		cell_printf(c, "%s, %.0f%% in %s", f->name,
			    report_pct(in, f->samples_self),
			    p->fns[f->via].name);
	else
		c->s = f->name;
	if (!c->s)
		c->s = f->name;
}

/* Main thread. A site's function. */
GET(site_fn)
{
	c->s = p->fns[SITE->fn].name;
}
/* Main thread. A site's function's kind. */
GET(site_kind)
{
	c->s = fnid_kind_name(p->fns[SITE->fn].kind);
}
/* Main thread. A site's file or object. */
GET(site_file)
{
	c->s = p->fns[SITE->fn].file;
}

/* Main thread. A site as text shows it: "app.lua:3 line 5", or the function (cut to 599
** bytes, as it always was). */
GET(site_label)
{
	const struct profile_fn *f = &p->fns[SITE->fn];
	if (f->kind == FNID_LUA && SITE->line)
		cell_printf(c, "%.599s line %" PRIu64, f->name, SITE->line);
	else if (f->kind == FNID_LUA)
		cell_printf(c, "%.599s line ?", f->name);
	else
		cell_printf(c, "%.599s", f->name);
	if (!c->s)
		c->s = f->name;
	else if (strlen(c->s) > 599)
		c->buf[599] = 0;
}

/* Main thread. A line's function. */
GET(line_fn)
{
	c->s = p->fns[LINE->fn].name;
}
/* Main thread. A line's file. */
GET(line_file)
{
	c->s = p->fns[LINE->fn].file;
}
/* Main thread. A line's samples, as a report_share. */
GET(line_pct)
{
	c->pct = report_pct(LINE->samples, p->smp.samples);
}

/* Main thread. A line as text shows it: "app.lua:12 (function app.lua:10)",
** "app.lua:30 (main chunk)"; line 0, a sample at no line known:
** "app.lua:? (function ...)". */
GET(line_label)
{
	const struct profile_fn *f = &p->fns[LINE->fn];
	int chunk = f->kind == FNID_LUA && f->line == 0;
	const char *pre = chunk ? DECODE_MAIN_CHUNK : "function ";
	const char *nm = chunk ? "" : f->name;
	const char *ok = LINE->line
			     ? cell_printf(c, "%s:%" PRIu64 " (%s%s)", f->file,
					   LINE->line, pre, nm)
			     : cell_printf(c, "%s:? (%s%s)", f->file, pre, nm);
	if (!ok)
		c->s = f->file;
}

/* Main thread. Where a trace starts: "app.lua:12". */
GET(trace_start)
{
	const char *file = p->fns[TRACE->fn].file;
	if (!cell_printf(c, "%s:%" PRIu64, file, TRACE->line))
		c->s = file;
}

/* Main thread. Of the profile's VM ID id: the ID in its own log, or with
** log the index of that log (several logs). */
static uint64_t id_part(const struct profile *p, uint32_t id, int log)
{
	uint32_t local;
	size_t l = profile_id_log(p, id, &local);
	return log ? l : local;
}

/* Main thread. The VM a trace belongs to (its MAPPING block's). */
GET(trace_vm)
{
	c->u = id_part(p, TRACE->vm, 0);
}
/* Main thread. The log a trace is of (several logs). */
GET(trace_log)
{
	c->u = id_part(p, TRACE->vm, 1);
}

/* Main thread. An abort's message. */
GET(abort_message)
{
	c->s = ABORT->message;
}

/* Main thread. A VM's ID. */
GET(vm_id)
{
	c->u = id_part(p, VM->id, 0);
}
/* Main thread. The log a VM is of (several logs). */
GET(vm_log)
{
	c->u = id_part(p, VM->id, 1);
}
/* Main thread. Whether a VM ran with the JIT off. */
GET(vm_jit_off)
{
	c->u = (VM->flags & FORMAT_VM_JIT_OFF) != 0;
}

/* Main thread. A VM's heap at DETACH, if it detached. */
GET(vm_detach)
{
	c->none = !VM->has_detach;
	c->u = VM->heap_detach;
}

/* Main thread. Rows: functions (each row set sorted as its table shows
** it; caller frees). */
uint32_t *report_rows_fns(const struct profile *p, size_t *n)
{
	*n = p->nfn;
	return profile_sorted_fns(p);
}

/* Main thread. Rows: functions with samples. */
static uint32_t *rows_fns_samples(const struct profile *p, size_t *n)
{
	return profile_sorted_fns_samples(p, n);
}

/* Main thread. Rows: allocation sites. */
static uint32_t *rows_sites(const struct profile *p, size_t *n)
{
	*n = p->heap.nsite;
	return heap_sorted_sites(&p->heap);
}

/* Main thread. Rows: lines with samples. */
static uint32_t *rows_lines(const struct profile *p, size_t *n)
{
	*n = p->smp.nline;
	return samples_sorted_lines(&p->smp);
}

/* Main thread. Rows: compiled traces. */
static uint32_t *rows_traces(const struct profile *p, size_t *n)
{
	*n = p->smp.ntrace;
	return samples_sorted_traces(&p->smp);
}

/* Main thread. Rows: trace aborts. */
static uint32_t *rows_aborts(const struct profile *p, size_t *n)
{
	*n = p->smp.nabort;
	return samples_sorted_aborts(&p->smp);
}

/* Main thread. Rows: VMs, in order of first record. */
static uint32_t *rows_vms(const struct profile *p, size_t *n)
{
	uint32_t *ix = malloc((p->nvm ? p->nvm : 1) * sizeof *ix);
	*n = p->nvm;
	for (size_t i = 0; ix && i < p->nvm; i++)
		ix[i] = (uint32_t)i;
	return ix;
}

/* Row r of a row set, for report_cell_get (its expression is of p, r). */
#define ROW(name, expr)                                                        \
	static const void *name(const struct profile *p, uint32_t r)           \
	{                                                                      \
		return expr;                                                   \
	}

/* Main thread. Row r of the functions, sites, lines, traces, aborts, VMs. */
ROW(row_fn, FN)
ROW(row_site, SITE)
ROW(row_line, LINE)
ROW(row_trace, TRACE)
ROW(row_abort, ABORT)
ROW(row_vm, VM)

/* Main thread. The value of col in row r of sec. */
void report_cell_get(const struct profile *p, const struct section *sec,
		     const struct column *col, uint32_t r, struct cell *c)
{
	const char *row;
	if (col->get) {
		col->get(p, r, c);
		return;
	}
	row = sec->row(p, r);
	if (col->type == COL_I64 || col->type == COL_IBYTES)
		memcpy(&c->i, row + col->off, sizeof c->i);
	else
		memcpy(&c->u, row + col->off, sizeof c->u);
}

/* A column read from a 64-bit field of the row (checked at compile time). */
#define FIELD(type, f)                                                         \
	NULL, offsetof(type, f) +                                              \
		  0 * sizeof(char[sizeof(((type *)0)->f) == 8 ? 1 : -1])

#define NCOL(a) (sizeof(a) / sizeof(a)[0])

static const struct column fn_cols[] = {
    {NULL, 0, 0, "name", COL_STR, fn_name, 0, 0},
    {NULL, 0, 0, "kind", COL_STR, fn_kind, 0, 0},
    {NULL, 0, 0, "file", COL_STR, fn_file, 0, 0},
    {NULL, 0, 0, "line", COL_U64, FIELD(struct profile_fn, line), 0},
    {"calls", 10, 4, "calls", COL_U64, FIELD(struct profile_fn, calls),
     OPTS_CALLS},
    {"total", 11, 3, "total_ns", COL_TIME, FIELD(struct profile_fn, total),
     OPTS_CALLS},
    {"self", 11, 1, "self_ns", COL_TIME, FIELD(struct profile_fn, self),
     OPTS_CALLS},
    {"self%", 6, 2, NULL, COL_PCT, fn_self_pct, 0, OPTS_CALLS},
    {"allocs", 9, 9, "alloc_count", COL_U64,
     FIELD(struct profile_fn, alloc_count), OPTS_ALLOC},
    {"alloc bytes", 11, 10, "alloc_bytes", COL_BYTES,
     FIELD(struct profile_fn, alloc_bytes), OPTS_ALLOC},
    {"alloc%", 6, 11, NULL, COL_PCT, fn_alloc_pct, 0, OPTS_ALLOC},
    /* Frees: JSON only (the text's sites table has them by site). */
    {NULL, 0, 0, "free_count", COL_U64, FIELD(struct profile_fn, free_count),
     OPTS_ALLOC},
    {NULL, 0, 0, "free_bytes", COL_U64, FIELD(struct profile_fn, free_bytes),
     OPTS_ALLOC},
    /* Sample columns: in this table only without calls (with calls, the
    ** samples part has its own table by function). */
    {"self", 10, 5, NULL, COL_U64, FIELD(struct profile_fn, samples_self),
     FAM_SAMPLES_ONLY},
    {NULL, 0, 0, "samples", COL_U64, FIELD(struct profile_fn, samples), 0},
    {"self%", 6, 6, NULL, COL_PCT, fn_samples_pct, 0, FAM_SAMPLES_ONLY},
    {"total", 10, 7, "samples_total", COL_U64,
     FIELD(struct profile_fn, samples_total), FAM_SAMPLES_ONLY},
    {"total%", 6, 8, NULL, COL_PCT, fn_total_pct, 0, FAM_SAMPLES_ONLY},
    {NULL, 0, 0, "samples_lua", COL_U64, FIELD(struct profile_fn, samples_lua),
     0},
    {NULL, 0, 0, "via", COL_STR, fn_via, 0, 0},
    {NULL, 0, 0, "via_samples", COL_U64, FIELD(struct profile_fn, via_samples),
     0},
    {"function", 0, 12, NULL, COL_STR, fn_label, 0, 0},
};

static const struct column fn_sample_cols[] = {
    {"self", 10, 1, NULL, COL_U64, FIELD(struct profile_fn, samples_self), 0},
    {"self%", 6, 2, NULL, COL_PCT, fn_samples_pct, 0, 0},
    {"total", 10, 3, NULL, COL_U64, FIELD(struct profile_fn, samples_total), 0},
    {"total%", 6, 4, NULL, COL_PCT, fn_total_pct, 0, 0},
    {"function", 0, 5, NULL, COL_STR, fn_label, 0, 0},
};

static const struct column line_cols[] = {
    {NULL, 0, 0, "name", COL_STR, line_fn, 0, 0},
    {NULL, 0, 0, "file", COL_STR, line_file, 0, 0},
    {NULL, 0, 0, "line", COL_U64, FIELD(struct samples_line, line), 0},
    {"samples", 10, 1, "samples", COL_U64, FIELD(struct samples_line, samples),
     0},
    {"%", 6, 2, NULL, COL_PCT, line_pct, 0, 0},
    {"line", 0, 3, NULL, COL_STR, line_label, 0, 0},
};

static const struct column trace_cols[] = {
    {"log", 4, 1, "log", COL_U64, trace_log, 0, FAM_MULTI_LOG},
    {"vm", 4, 2, "vm", COL_U64, trace_vm, 0, FAM_MULTI_VM},
    {"traceno", 8, 3, "traceno", COL_U64, FIELD(struct samples_trace, traceno),
     0},
    {"start", 0, 6, "name", COL_STR, trace_start, 0, 0},
    {"root", 8, 4, "root", COL_U64, FIELD(struct samples_trace, root), 0},
    {"samples", 10, 5, "samples", COL_U64, FIELD(struct samples_trace, samples),
     0},
};

static const struct column abort_cols[] = {
    {"reason", 8, 2, "reason", COL_U64, FIELD(struct samples_abort, reason), 0},
    {"message", 0, 3, "message", COL_QSTR, abort_message, 0, 0},
    {"count", 8, 1, "count", COL_U64, FIELD(struct samples_abort, count), 0},
};

static const struct column site_cols[] = {
    {NULL, 0, 0, "function", COL_STR, site_fn, 0, 0},
    {NULL, 0, 0, "kind", COL_STR, site_kind, 0, 0},
    {NULL, 0, 0, "file", COL_STR, site_file, 0, 0},
    {NULL, 0, 0, "line", COL_U64, FIELD(struct heap_site, line), 0},
    {"allocs", 9, 1, "alloc_count", COL_U64,
     FIELD(struct heap_site, alloc_count), 0},
    {"alloc bytes", 11, 2, "alloc_bytes", COL_BYTES,
     FIELD(struct heap_site, alloc_bytes), 0},
    {"alloc%", 6, 3, NULL, COL_PCT, site_alloc_pct, 0, 0},
    {"frees", 9, 4, "free_count", COL_U64, FIELD(struct heap_site, free_count),
     0},
    {"free bytes", 11, 5, "free_bytes", COL_BYTES,
     FIELD(struct heap_site, free_bytes), 0},
    {"site", 0, 6, NULL, COL_STR, site_label, 0, 0},
};

static const struct column vm_cols[] = {
    {"log", 4, 1, "log", COL_U64, vm_log, 0, FAM_MULTI_LOG},
    {"id", 6, 2, "id", COL_U64, vm_id, 0, 0},
    {"thread", 9, 3, "thread", COL_U64, FIELD(struct profile_vm, thread), 0},
    {"events", 11, 4, "events", COL_U64, FIELD(struct profile_vm, events), 0},
    {"samples", 9, 5, "samples", COL_U64, FIELD(struct profile_vm, samples),
     OPTS_SAMPLE},
    {NULL, 0, 0, "intervals", COL_U64, FIELD(struct profile_vm, intervals),
     OPTS_SAMPLE},
    {"coros", 6, 6, "coroutines", COL_U64, FIELD(struct profile_vm, coroutines),
     0},
    {"heap@attach", 11, 7, "heap_attach", COL_BYTES,
     FIELD(struct profile_vm, heap_attach), 0},
    {"heap@detach", 11, 8, "heap_detach", COL_OPT, vm_detach, 0, 0},
    {"heap live", 11, 9, "heap_live", COL_IBYTES,
     FIELD(struct profile_vm, live), OPTS_ALLOC},
    {"peak", 11, 10, "heap_peak", COL_IBYTES, FIELD(struct profile_vm, peak),
     OPTS_ALLOC},
    {NULL, 0, 0, "alloc_bytes", COL_U64, FIELD(struct profile_vm, alloc_bytes),
     0},
    {NULL, 0, 0, "free_bytes", COL_U64, FIELD(struct profile_vm, free_bytes),
     0},
    {NULL, 0, 0, "gc_peak_heap", COL_U64, FIELD(struct profile_vm, gc_peak), 0},
    {NULL, 0, 0, "jit_off", COL_BOOL, vm_jit_off, 0, 0},
};

#define SECTION(key, title, limited, rows, row, cols)                          \
	{                                                                      \
		key, title, limited, rows, row, cols, NCOL(cols)               \
	}

const struct section report_sec_fns =
    SECTION("functions",
	    "\nFunctions: %zu, by %s (self: in the function itself, total: "
	    "with its callees)\n",
	    1, report_rows_fns, row_fn, fn_cols);
const struct section report_sec_fns_alloc =
    SECTION("functions", "\nFunctions: %zu, by %s\n", 1, report_rows_fns,
	    row_fn, fn_cols);
const struct section report_sec_fns_samples =
    SECTION("functions",
	    "\nFunctions: %zu, by %s (self: %s; total: anywhere in the "
	    "stack)\n",
	    1, report_rows_fns, row_fn, fn_cols);
const struct section report_sec_fn_samples =
    SECTION(NULL,
	    "  by function: %zu%.0s (self: %s; total: anywhere in the "
	    "stack)\n",
	    1, rows_fns_samples, row_fn, fn_sample_cols);
const struct section report_sec_lines =
    SECTION("samples_by_line",
	    "  by line: %zu (innermost Lua function, line executing; ?: not "
	    "known)\n",
	    1, rows_lines, row_line, line_cols);
const struct section report_sec_traces =
    SECTION("traces", NULL, 1, rows_traces, row_trace, trace_cols);
const struct section report_sec_aborts =
    SECTION("trace_aborts", "  aborts by reason:\n", 1, rows_aborts, row_abort,
	    abort_cols);
const struct section report_sec_sites =
    SECTION("alloc_sites", "\nAllocation sites: %zu, by alloc bytes\n", 1,
	    rows_sites, row_site, site_cols);
const struct section report_sec_vms =
    SECTION("vm_list", "\nVMs: %zu\n", 0, rows_vms, row_vm, vm_cols);

/* Main thread. Sum the VMs and functions. */
void report_sum(const struct profile *p, struct totals *t)
{
	memset(t, 0, sizeof *t);
	for (size_t i = 0; i < p->nvm; i++) {
		const struct profile_vm *v = &p->vms[i];
		t->attach += v->heap_attach;
		t->alloc_count += v->alloc_count;
		t->alloc_bytes += v->alloc_bytes;
		t->free_count += v->free_count;
		t->free_bytes += v->free_bytes;
		t->live += v->live;
		t->peak += v->peak;
	}
	for (size_t i = 0; i < p->nfn; i++)
		t->calls += p->fns[i].calls;
}

/* Main thread. Description of the time base. */
const char *report_timebase_name(unsigned tb)
{
	switch (tb) {
	case PROFILE_TB_CLOCKS: return "clock pairs";
	case PROFILE_TB_HZ: return "counter_hz";
	case PROFILE_TB_NS: return "counter in ns";
	}
	return "assumed 1 tick = 1 ns";
}

/* Main thread. The sampling interval the log's options asked for (ns; 0
** when unknown); *wall: of wall-clock time, not CPU time. */
uint64_t report_sample_interval(const struct profile *p, int *wall)
{
	*wall = 0;
	return p->have_intro ? cli_sample_interval(p->options, wall) : 0;
}

/* Main thread. Time inside GC cycles in ns: the phases from propagate to
** finalize, without LuaJIT's "pause" state, which is the idle time between
** cycles. The GC is incremental: the program runs inside a cycle too. */
uint64_t report_gc_busy_ns(const struct profile *p)
{
	uint64_t ns = 0;
	for (unsigned i = 0; i < FORMAT_GC__MAX; i++)
		if (i != FORMAT_GC_PAUSE)
			ns += profile_ns(p, p->heap.gc.phase[i]);
	return ns;
}