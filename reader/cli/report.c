/*
** ljlog CLI: 'ljlog report' (text or --json).
** One model, two renderers: each table of the report is a section, its
** columns described once (heading and width for text, key for JSON, type,
** accessor); text_table and json_table walk the same columns, so the two
** forms cannot drift. The prose around the tables (header, states, GC,
** totals) is written by each renderer from the same profile fields.
*/
#include "cli.h"

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "logger/opts.h"
#include "profile/profile.h"
#include "proc/sort.h"

/* -- The model ---------------------------------------------------------------- */

/* Column types: how a value prints. */
enum col_type {
	COL_U64,    /* a count */
	COL_I64,    /* a signed count */
	COL_TIME,   /* ts units: text "12.345 ms" or "1.234 s", JSON ns */
	COL_BYTES,  /* bytes: text with a unit (KiB, MiB), JSON as is */
	COL_IBYTES, /* signed bytes: text with a unit, JSON as is */
	COL_PCT,    /* a share: text only, "12.5%" */
	COL_STR,    /* a string */
	COL_QSTR,   /* a string: text quoted (cli_quote), JSON as a string */
	COL_OPT,    /* bytes or nothing: text "-", JSON null */
	COL_BOOL,   /* JSON only: true or false */
};

/* One value. Strings are valid until the next accessor call on the cell. */
struct cell {
	uint64_t u;
	int64_t i;
	double pct;
	const char *s;
	int none;  /* COL_OPT: no value */
	char *buf; /* room for made strings (cell_printf) */
	size_t cap;
};

/* One column of a section. */
struct column {
	const char *head; /* text heading, NULL: not in text */
	int width;	  /* text: right-aligned in width; 0: last, as is */
	int tpos;	  /* text: position, 1 first (0: not in text) */
	const char *key;  /* JSON key, NULL: not in JSON */
	unsigned type;	  /* COL_* */
	void (*get)(const struct profile *p, uint32_t row, struct cell *c);
	size_t off;   /* get NULL: the uint64_t field (COL_I64: int64_t) at off
		       in the row */
	unsigned fam; /* text: shown only when these OPTS_* families were
			 recorded (0: always); JSON keeps every key */
};

/* One table: a row set and its columns. */
struct section {
	const char *key;   /* JSON array, NULL: text only */
	const char *title; /* text: printf format of the row count (%zu) and
			      the order (%s) */
	int limited;	   /* text: at most -n rows, rows with nothing in
			      every number left out */
	uint32_t *(*rows)(const struct profile *p, size_t *n);	 /* sorted */
	const void *(*row)(const struct profile *p, uint32_t i); /* row i */
	const struct column *cols;
	size_t ncol;
};

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
static struct {
	uint64_t fn_self, fn_alloc, site_alloc;
} share;

/* Main thread. n as a percentage of total. */
static double pct(uint64_t n, uint64_t total)
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
/* Main thread. A function's self samples, as a share. */
GET(fn_samples_pct)
{
	c->pct = pct(FN->samples, p->smp.samples);
}
/* Main thread. A function's self time, as a share of all functions'. */
GET(fn_self_pct)
{
	c->pct = pct(FN->self, share.fn_self);
}
/* Main thread. A function's alloc bytes, as a share of all functions'. */
GET(fn_alloc_pct)
{
	c->pct = pct(FN->alloc_bytes, share.fn_alloc);
}
/* Main thread. A site's alloc bytes, as a share of all sites'. */
GET(site_alloc_pct)
{
	c->pct = pct(SITE->alloc_bytes, share.site_alloc);
}
/* Main thread. A function's samples anywhere in the stack, as a share. */
GET(fn_total_pct)
{
	c->pct = pct(FN->samples_total, p->smp.samples);
}

/* Main thread. The function as text shows it: its name, and its object or [builtin]. */
GET(fn_label)
{
	const struct profile_fn *f = FN;
	if ((f->kind == FNID_C || f->kind == FNID_HOST) && f->file[0])
		cell_printf(c, "%s [%s]", f->name, f->file);
	else if (f->kind == FNID_FAST)
		cell_printf(c, "%s [builtin]", f->name);
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
	if (f->kind == FNID_LUA)
		cell_printf(c, "%.599s line %" PRIu64, f->name, SITE->line);
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
/* Main thread. A line's samples, as a share. */
GET(line_pct)
{
	c->pct = pct(LINE->samples, p->smp.samples);
}

/* Main thread. A line as text shows it: "app.lua:12 (function app.lua:10)". */
GET(line_label)
{
	const struct profile_fn *f = &p->fns[LINE->fn];
	if (!cell_printf(c, "%s:%" PRIu64 " (function %s)", f->file, LINE->line,
			 f->name))
		c->s = f->file;
}

/* Main thread. Where a trace starts: "app.lua:12". */
GET(trace_start)
{
	const char *file = p->fns[TRACE->fn].file;
	if (!cell_printf(c, "%s:%" PRIu64, file, TRACE->line))
		c->s = file;
}

/* Main thread. The VM a trace belongs to (its MAPPING block's). */
GET(trace_vm)
{
	uint32_t local;
	profile_id_log(p, TRACE->vm, &local);
	c->u = local;
}
/* Main thread. The log a trace is of (several logs). */
GET(trace_log)
{
	uint32_t local;
	c->u = profile_id_log(p, TRACE->vm, &local);
}

/* Main thread. An abort's message. */
GET(abort_message)
{
	c->s = ABORT->message;
}

/* Main thread. A VM's ID. */
GET(vm_id)
{
	uint32_t local;
	profile_id_log(p, VM->id, &local);
	c->u = local;
}
/* Main thread. The log a VM is of (several logs). */
GET(vm_log)
{
	uint32_t local;
	c->u = profile_id_log(p, VM->id, &local);
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
static uint32_t *rows_fns(const struct profile *p, size_t *n)
{
	*n = p->nfn;
	return profile_sorted_fns(p);
}

/* Main thread. Rows: functions with samples. */
static uint32_t *rows_fns_samples(const struct profile *p, size_t *n)
{
	return samples_sorted_fns(&p->smp, n);
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

/* Main thread. Row i of the functions. */
static const void *row_fn(const struct profile *p, uint32_t r)
{
	return FN;
}

/* Main thread. Row i of the allocation sites. */
static const void *row_site(const struct profile *p, uint32_t r)
{
	return SITE;
}

/* Main thread. Row i of the lines. */
static const void *row_line(const struct profile *p, uint32_t r)
{
	return LINE;
}

/* Main thread. Row i of the traces. */
static const void *row_trace(const struct profile *p, uint32_t r)
{
	return TRACE;
}

/* Main thread. Row i of the aborts. */
static const void *row_abort(const struct profile *p, uint32_t r)
{
	return ABORT;
}

/* Main thread. Row i of the VMs. */
static const void *row_vm(const struct profile *p, uint32_t r)
{
	return VM;
}

/* Main thread. The value of col in row r of sec. */
static void cell_get(const struct profile *p, const struct section *sec,
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

/* A column family that is not an option: sample columns shown where calls
** were not recorded. */
#define FAM_SAMPLES_ONLY 0x10000u
/* Columns shown when the log has several VMs; when there are several logs. */
#define FAM_MULTI_VM  0x20000u
#define FAM_MULTI_LOG 0x40000u

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
    {"self", 10, 5, "samples", COL_U64, FIELD(struct profile_fn, samples),
     FAM_SAMPLES_ONLY},
    {"self%", 6, 6, NULL, COL_PCT, fn_samples_pct, 0, FAM_SAMPLES_ONLY},
    {"total", 10, 7, "samples_total", COL_U64,
     FIELD(struct profile_fn, samples_total), FAM_SAMPLES_ONLY},
    {"total%", 6, 8, NULL, COL_PCT, fn_total_pct, 0, FAM_SAMPLES_ONLY},
    {"function", 0, 12, NULL, COL_STR, fn_label, 0, 0},
};

static const struct column fn_sample_cols[] = {
    {"self", 10, 1, NULL, COL_U64, FIELD(struct profile_fn, samples), 0},
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

static const struct section sec_fns =
    SECTION("functions",
	    "\nFunctions: %zu, by %s (self: in the function itself, total: "
	    "with its callees)\n",
	    1, rows_fns, row_fn, fn_cols);
static const struct section sec_fns_alloc = SECTION(
    "functions", "\nFunctions: %zu, by %s\n", 1, rows_fns, row_fn, fn_cols);
static const struct section sec_fns_samples =
    SECTION("functions",
	    "\nFunctions: %zu, by %s (self: innermost Lua frame, total: "
	    "anywhere in the stack)\n",
	    1, rows_fns, row_fn, fn_cols);
static const struct section sec_fn_samples =
    SECTION(NULL,
	    "  by function: %zu (self: innermost Lua frame; total: anywhere "
	    "in the stack)\n",
	    1, rows_fns_samples, row_fn, fn_sample_cols);
static const struct section sec_lines =
    SECTION("samples_by_line",
	    "  by line: %zu (innermost Lua function, line executing)\n", 1,
	    rows_lines, row_line, line_cols);
static const struct section sec_traces =
    SECTION("traces", NULL, 1, rows_traces, row_trace, trace_cols);
static const struct section sec_aborts =
    SECTION("trace_aborts", "  aborts by reason:\n", 1, rows_aborts, row_abort,
	    abort_cols);
static const struct section sec_sites =
    SECTION("alloc_sites", "\nAllocation sites: %zu, by alloc bytes\n", 1,
	    rows_sites, row_site, site_cols);
static const struct section sec_vms =
    SECTION("vm_list", "\nVMs: %zu\n", 0, rows_vms, row_vm, vm_cols);

/* Main thread. Totals over VMs. */
struct totals {
	uint64_t attach, alloc_count, alloc_bytes, free_count, free_bytes;
	uint64_t calls;
	int64_t live, peak;
};

/* Main thread. Sum the VMs and functions. */
static void sum(const struct profile *p, struct totals *t)
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
static const char *timebase_name(unsigned tb)
{
	switch (tb) {
	case PROFILE_TB_CLOCKS: return "clock pairs";
	case PROFILE_TB_HZ: return "counter_hz";
	case PROFILE_TB_NS: return "counter in ns";
	}
	return "assumed 1 tick = 1 ns";
}

/* -- Text ---------------------------------------------------------------------- */

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
		cell_get(p, sec, cols[k], r, c);
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
	case REPORT_SORT_SELF: return calls ? f->self : f->samples;
	case REPORT_SORT_TOTAL: return calls ? f->total : f->samples_total;
	case REPORT_SORT_CALLS: return f->calls;
	case REPORT_SORT_SAMPLES: return f->samples;
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
	if (sec->rows == rows_fns)
		ix = sort_fns(p, v, ix, nrow);
	if (sec->limited && ix) {
		for (size_t i = 0; i < nrow; i++)
			zero += row_zero(p, sec, cols, nc, ix[i], &c);
		if (zero == nrow)
			goto out;
	}
	if (sec->title)
		printf(sec->title, nrow, sort_name(v));
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
			cell_get(p, sec, cols[k], ix[i], &c);
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

/* Main thread. The sampling interval the log's options asked for (ns; 0
** when unknown); *wall: of wall-clock time, not CPU time. */
static uint64_t sample_interval(const struct profile *p, int *wall)
{
	*wall = 0;
	return p->have_intro ? cli_sample_interval(p->options, wall) : 0;
}

/* Main thread. The samples part: totals, states, functions (when the
** function table does not show them already), lines. */
static void text_samples(const struct profile *p, const struct view *v)
{
	const struct samples *s = &p->smp;
	char a[32], b[32];
	int wall;
	uint64_t iv = sample_interval(p, &wall);
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
			       pct(s->state[i], s->samples));
	if (!(v->fams & FAM_SAMPLES_ONLY))
		text_table(p, &sec_fn_samples, v);
	text_table(p, &sec_lines, v);
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
	text_table(p, &sec_traces, v);
	if (s->nabort)
		text_table(p, &sec_aborts, v);
}

/* Main thread. Time inside GC cycles in ns: the phases from propagate to
** finalize, without LuaJIT's "pause" state, which is the idle time between
** cycles. The GC is incremental: the program runs inside a cycle too. */
static uint64_t gc_busy_ns(const struct profile *p)
{
	uint64_t ns = 0;
	for (unsigned i = 0; i < FORMAT_GC__MAX; i++)
		if (i != FORMAT_GC_PAUSE)
			ns += profile_ns(p, p->heap.gc.phase[i]);
	return ns;
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
		       timebase_name(p->timebase), p->ns_per_tick);
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
	sum(p, &t);
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
	memset(&share, 0, sizeof share);
	for (size_t i = 0; i < p->nfn; i++) {
		share.fn_self += p->fns[i].self;
		share.fn_alloc += p->fns[i].alloc_bytes;
	}
	for (size_t i = 0; i < p->heap.nsite; i++)
		share.site_alloc += p->heap.sites[i].alloc_bytes;

	if (fams & (OPTS_CALLS | OPTS_ALLOC | OPTS_SAMPLE))
		text_table(p,
			   fams & OPTS_CALLS	? &sec_fns
			   : fams & OPTS_SAMPLE ? &sec_fns_samples
						: &sec_fns_alloc,
			   &v);
	if (fams & OPTS_ALLOC)
		text_table(p, &sec_sites, &v);
	text_samples(p, &v);
	text_traces(p, &v);
	report_zones_text(p, o->limit);

	const struct heap_gc *gc = &p->heap.gc;
	if (fams & OPTS_GC) {
		printf("\nGC: %" PRIu64 " cycles, %s inside cycles, peak "
		       "heap %s, %" PRIu64 " GC events\n"
		       "  (the GC is incremental: the program runs between its "
		       "steps inside a cycle;\n"
		       "  samples in state gc measure the collector itself)\n",
		       gc->cycles, cli_fmt_time(a, sizeof a, gc_busy_ns(p)),
		       cli_fmt_bytes(b, sizeof b, (int64_t)gc->peak_heap),
		       gc->events);
		for (unsigned i = 0; i < FORMAT_GC__MAX; i++)
			if (i != FORMAT_GC_PAUSE)
				printf(
				    "  %-12s %12s\n", format_gc_phase_name(i),
				    cli_fmt_time(a, sizeof a,
						 profile_ns(p, gc->phase[i])));
		printf("  idle between cycles (LuaJIT's \"pause\" state) %s\n",
		       cli_fmt_time(a, sizeof a,
				    profile_ns(p, gc->phase[FORMAT_GC_PAUSE])));
	}

	text_table(p, &sec_vms, &v);

	printf("\nTotals: %zu VMs, %" PRIu64 " coroutines, %" PRIu64
	       " events, %" PRIu64 " calls, %" PRIu64 " samples\n",
	       p->nvm, p->coroutines, p->events, t.calls, p->smp.samples);
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

/* -- JSON ---------------------------------------------------------------------- */

/* Main thread. A section as a JSON array of objects, every row. */
static void json_table(struct json *j, const struct profile *p,
		       const struct section *sec, const struct report_extra *x)
{
	const struct profile_diff *d = x ? x->diff : NULL;
	struct cell c = {0};
	size_t nrow;
	uint32_t *ix = sec->rows(p, &nrow);
	json_arr(j, sec->key);
	for (size_t i = 0; ix && i < nrow; i++) {
		json_obj(j, NULL);
		for (size_t k = 0; k < sec->ncol; k++) {
			const struct column *col = &sec->cols[k];
			if (!col->key)
				continue;
			cell_get(p, sec, col, ix[i], &c);
			switch (col->type) {
			case COL_I64:
			case COL_IBYTES: json_i64(j, col->key, c.i); break;
			case COL_TIME:
				json_u64(j, col->key, profile_ns(p, c.u));
				break;
			case COL_STR:
			case COL_QSTR: json_cstr(j, col->key, c.s); break;
			case COL_OPT:
				if (c.none)
					json_null(j, col->key);
				else
					json_u64(j, col->key, c.u);
				break;
			case COL_BOOL: json_bool(j, col->key, c.u != 0); break;
			default: json_u64(j, col->key, c.u); break;
			}
		}
		if (d && sec == &sec_fns)
			report_diff_fn_json(j, d, ix[i]);
		if (x && x->nlog && sec == &sec_fns)
			report_bylog_fn_json(j, x, ix[i]);
		else if (d && sec == &sec_sites)
			report_diff_site_json(j, d, ix[i]);
		json_close(j, '}');
	}
	json_close(j, ']');
	free(ix);
	free(c.buf);
}

/* Main thread. The JSON report: one object. */
void report_json(const struct profile *p, int rc, const char *err,
		 uint64_t iv_ns, const struct report_extra *x)
{
	const struct profile_diff *diff = x ? x->diff : NULL;
	struct json j;
	struct totals t;
	const struct samples *s = &p->smp;
	const struct heap_gc *gc = &p->heap.gc;
	sum(p, &t);
	json_init(&j, stdout, 1);
	json_obj(&j, NULL);
	json_u64(&j, "version", p->have_intro ? p->version : 0);
	json_bool(&j, "complete", rc == 0);
	json_bool(&j, "truncated", rc == -ENODATA);
	if (p->only_str)
		json_cstr(&j, "zone_filter", p->only_str);
	else
		json_null(&j, "zone_filter");
	/* A log that a write error ended: complete up to there, with its END;
	** the error names why nothing follows. */
	if (!rc && p->have_end && p->end.stop_error) {
		json_obj(&j, "stopped");
		json_u64(&j, "offset", p->end.bytes);
		json_u64(&j, "errno", p->end.stop_error);
		json_cstr(&j, "reason", p->end.stop_reason);
		json_close(&j, '}');
	} else {
		json_null(&j, "stopped");
	}
	if (rc)
		json_cstr(&j, "error", err);
	else
		json_null(&j, "error");
	json_u64(&j, "pid", p->pid);
	json_cstr(&j, "executable", p->exe);
	json_cstr(&j, "luajit_version", p->luajit_version);
	json_cstr(&j, "options", p->options);
	json_cstr(&j, "timebase", timebase_name(p->timebase));
	json_u64(&j, "duration_ns", p->duration_ns);
	report_logs_json(&j, p);
	report_narrow_json(&j, p);
	json_u64(&j, "vms", p->nvm);
	json_u64(&j, "coroutines", p->coroutines);
	json_u64(&j, "events", p->events);
	json_u64(&j, "calls", t.calls);
	json_u64(&j, "unmatched_exits", p->calls.unmatched_exits);
	json_u64(&j, "samples", s->samples);
	json_u64(&j, "samples_dropped", s->samples_dropped);
	json_u64(&j, "flush_waits", p->have_end ? p->end.flush_waits : 0);
	json_u64(&j, "flush_wait_ns", p->have_end ? p->end.flush_wait_ns : 0);
	json_u64(&j, "signals", s->signals);
	json_u64(&j, "intervals", s->intervals);
	{
		int wall;
		json_u64(&j, "interval_ns", sample_interval(p, &wall));
	}
	json_obj(&j, "states");
	for (unsigned i = 0; i < FORMAT_STATE__MAX; i++)
		json_u64(&j, format_state_name(i), s->state[i]);
	json_close(&j, '}');
	json_u64(&j, "ljlog_intervals", s->state_intervals[FORMAT_STATE_LJLOG]);
	json_u64(&j, "trace_flushes", s->trace_flushes);
	unsigned fams =
	    report_recorded(p, t.calls, t.alloc_count + t.free_count);
	json_obj(&j, "recorded");
	for (size_t i = 0; i < report_nfamily; i++)
		json_bool(&j, report_families[i].name,
			  (fams & report_families[i].bit) != 0);
	json_close(&j, '}');

	json_obj(&j, "heap");
	json_u64(&j, "attach", t.attach);
	json_u64(&j, "alloc_count", t.alloc_count);
	json_u64(&j, "alloc_bytes", t.alloc_bytes);
	json_u64(&j, "free_count", t.free_count);
	json_u64(&j, "free_bytes", t.free_bytes);
	json_i64(&j, "live", t.live);
	json_i64(&j, "peak", t.peak);
	json_close(&j, '}');

	json_obj(&j, "gc");
	json_u64(&j, "cycles", gc->cycles);
	json_obj(&j, "phase_ns");
	for (unsigned i = 0; i < FORMAT_GC__MAX; i++)
		json_u64(&j, format_gc_phase_name(i),
			 profile_ns(p, gc->phase[i]));
	json_close(&j, '}');
	json_u64(&j, "gc_ns", gc_busy_ns(p));
	json_u64(&j, "idle_ns", profile_ns(p, gc->phase[FORMAT_GC_PAUSE]));
	json_u64(&j, "peak_heap", gc->peak_heap);
	json_u64(&j, "events", gc->events);
	json_close(&j, '}');

	json_table(&j, p, &sec_fns, x);
	json_table(&j, p, &sec_lines, NULL);
	json_table(&j, p, &sec_traces, NULL);
	json_table(&j, p, &sec_aborts, NULL);
	json_table(&j, p, &sec_sites, x);
	json_table(&j, p, &sec_vms, NULL);
	report_zones_json(&j, p);
	leaks_json_sampled(&j, p);
	leaks_json(&j, p);
	if (iv_ns)
		leaks_json_intervals(&j, p, iv_ns);
	if (diff)
		report_diff_json(&j, diff);

	json_arr(&j, "warnings");
	for (size_t i = 0; i < p->nwarn; i++)
		json_cstr(&j, NULL, p->warnings[i]);
	json_close(&j, ']');
	json_close(&j, '}');
}
