/*
** ljlog CLI: 'ljlog report' (text or --json).
*/
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

static const char report_usage[] =
    "usage: ljlog report [--json] [-n N] FILE\n"
    "\n"
    "Report on an ljlog log: per function (calls, total and self time,\n"
    "allocations and frees charged to it), allocation sites, GC cycles and\n"
    "time per phase, per VM (thread, events, coroutines, heap at attach, at\n"
    "detach and computed), totals. A truncated log is reported up to where\n"
    "it ends, with a warning.\n"
    "\n"
    "With timer samples: samples per function (self: the function is the\n"
    "innermost Lua frame, or for a sample without Lua frames the innermost\n"
    "host frame; total: anywhere in the merged stack), per line (the\n"
    "innermost Lua function and the line it executes), per state; samples,\n"
    "dropped, signals. With trace events: compiled traces (number, start,\n"
    "root trace, samples running it), aborts grouped by reason, flushes.\n"
    "\n"
    "  -j, --json      one JSON object instead of text\n"
    "  -n, --limit N   text: at most N functions and sites (default all)\n"
    "  -h, --help      this help\n"
    "\n"
    "Exit status: 0 report printed (complete or truncated log), 2 usage\n"
    "error or file cannot be opened, 3 corrupt log (the part before the\n"
    "corruption is reported).\n";

/* -- Helpers ------------------------------------------------------------------- */

/* Main thread. ts units as milliseconds. */
static double ms(const struct profile *p, uint64_t ticks)
{
	return (double)profile_ns(p, ticks) / 1e6;
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

/* Main thread. A site's description: "app.lua:3 line 5" or the function. */
static void site_name(const struct profile *p, const struct heap_site *s,
		      char *buf, size_t len)
{
	const struct profile_fn *f = &p->fns[s->fn];
	if (f->kind == FNID_LUA)
		snprintf(buf, len, "%s line %" PRIu64, f->name, s->line);
	else
		snprintf(buf, len, "%s", f->name);
}

/* -- Text ---------------------------------------------------------------------- */

/* Main thread. n as a percentage of total. */
static double pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

/* Main thread. The samples section: totals, states, functions, lines. */
static void text_samples(const struct profile *p, size_t limit)
{
	if (!p->smp.samples && !p->smp.signals)
		return;
	printf("\nSamples: %" PRIu64 " (%" PRIu64 " dropped, %" PRIu64
	       " signals)\n",
	       p->smp.samples, p->smp.samples_dropped, p->smp.signals);
	printf("  by state:\n");
	for (unsigned i = 0; i < FORMAT_STATE__MAX; i++)
		if (p->smp.state[i])
			printf("    %-8s %10" PRIu64 " %6.1f%%\n",
			       decode_state_name(i), p->smp.state[i],
			       pct(p->smp.state[i], p->smp.samples));

	size_t nf, n;
	uint32_t *ix = samples_sorted_fns(&p->smp, &nf);
	n = limit && limit < nf ? limit : nf;
	printf("  by function: %zu (self: innermost Lua frame; total: "
	       "anywhere in the stack)\n",
	       nf);
	printf("%10s %7s %10s %7s  %s\n", "self", "self%", "total", "total%",
	       "function");
	for (size_t i = 0; ix && i < n; i++) {
		const struct profile_fn *f = &p->fns[ix[i]];
		printf("%10" PRIu64 " %6.1f%% %10" PRIu64 " %6.1f%%  %s",
		       f->samples, pct(f->samples, p->smp.samples),
		       f->samples_total, pct(f->samples_total, p->smp.samples),
		       f->name);
		if ((f->kind == FNID_C || f->kind == FNID_HOST) && f->file[0])
			printf(" [%s]", f->file);
		else if (f->kind == FNID_FAST)
			printf(" [builtin]");
		putchar('\n');
	}
	if (n < nf)
		printf("  ... %zu more (use -n 0)\n", nf - n);
	free(ix);

	ix = samples_sorted_lines(&p->smp);
	n = limit && limit < p->smp.nline ? limit : p->smp.nline;
	printf("  by line: %zu (innermost Lua function, line executing)\n",
	       p->smp.nline);
	printf("%10s %7s  %s\n", "samples", "%", "line");
	for (size_t i = 0; ix && i < n; i++) {
		const struct samples_line *l = &p->smp.lines[ix[i]];
		const struct profile_fn *f = &p->fns[l->fn];
		printf("%10" PRIu64 " %6.1f%%  %s:%" PRIu64 " (function %s)\n",
		       l->samples, pct(l->samples, p->smp.samples), f->file,
		       l->line, f->name);
	}
	if (n < p->smp.nline)
		printf("  ... %zu more (use -n 0)\n", p->smp.nline - n);
	free(ix);
}

/* Main thread. The traces section: compiled traces, aborts, flushes. */
static void text_traces(const struct profile *p, size_t limit)
{
	if (!p->smp.ntrace && !p->smp.trace_starts && !p->smp.trace_aborts &&
	    !p->smp.trace_flushes)
		return;
	printf("\nTraces: %zu compiled, %" PRIu64 " started, %" PRIu64
	       " aborted, %" PRIu64 " flush%s\n",
	       p->smp.ntrace, p->smp.trace_starts, p->smp.trace_aborts,
	       p->smp.trace_flushes, p->smp.trace_flushes == 1 ? "" : "es");
	uint32_t *ix = samples_sorted_traces(&p->smp);
	size_t n = limit && limit < p->smp.ntrace ? limit : p->smp.ntrace;
	printf("%8s %8s %10s  %s\n", "traceno", "root", "samples", "start");
	for (size_t i = 0; ix && i < n; i++) {
		const struct samples_trace *t = &p->smp.traces[ix[i]];
		printf("%8" PRIu64 " %8" PRIu64 " %10" PRIu64 "  %s:%" PRIu64
		       "\n",
		       t->traceno, t->root, t->samples, p->fns[t->fn].file,
		       t->line);
	}
	if (n < p->smp.ntrace)
		printf("  ... %zu more (use -n 0)\n", p->smp.ntrace - n);
	free(ix);
	if (!p->smp.nabort)
		return;
	printf("  aborts by reason:\n");
	printf("%8s %8s  %s\n", "count", "reason", "message");
	ix = samples_sorted_aborts(&p->smp);
	n = limit && limit < p->smp.nabort ? limit : p->smp.nabort;
	for (size_t i = 0; ix && i < n; i++) {
		const struct samples_abort *a = &p->smp.aborts[ix[i]];
		printf("%8" PRIu64 " %8" PRIu64 "  ", a->count, a->reason);
		cli_quote(stdout, a->message, strlen(a->message));
		putchar('\n');
	}
	if (n < p->smp.nabort)
		printf("  ... %zu more (use -n 0)\n", p->smp.nabort - n);
	free(ix);
}

/* Main thread. The text report. */
static void text(const struct profile *p, const char *path, int rc,
		 const char *err, size_t limit)
{
	struct totals t;
	sum(p, &t);
	printf("ljlog report: %s\n", path);
	if (p->have_intro) {
		printf("  pid %" PRIu64 ", %s, %s, format version %" PRIu64
		       "\n",
		       p->pid, p->exe, p->luajit_version, p->version);
		printf("  options: %s\n", p->options);
	}
	if (rc == 0)
		printf("  log complete (END block)\n");
	else
		printf("  log %s: %s\n",
		       rc == -ENODATA ? "TRUNCATED" : "CORRUPT", err);
	printf("  duration %.3f ms, time base: %s (%.4f ns per tick)\n",
	       (double)p->duration_ns / 1e6, timebase_name(p->timebase),
	       p->ns_per_tick);

	uint32_t *ix = profile_sorted_fns(p);
	size_t n = p->nfn;
	if (limit && limit < n)
		n = limit;
	printf(
	    "\nFunctions: %zu (sorted by self time, then samples, then alloc "
	    "bytes)\n",
	    p->nfn);
	printf("%12s %12s %10s %9s %13s %9s %13s  %s\n", "self ms", "total ms",
	       "calls", "allocs", "alloc bytes", "frees", "free bytes",
	       "function");
	for (size_t i = 0; ix && i < n; i++) {
		const struct profile_fn *f = &p->fns[ix[i]];
		printf("%12.3f %12.3f %10" PRIu64 " %9" PRIu64 " %13" PRIu64
		       " %9" PRIu64 " %13" PRIu64 "  %s",
		       ms(p, f->self), ms(p, f->total), f->calls,
		       f->alloc_count, f->alloc_bytes, f->free_count,
		       f->free_bytes, f->name);
		if ((f->kind == FNID_C || f->kind == FNID_HOST) && f->file[0])
			printf(" [%s]", f->file);
		else if (f->kind == FNID_FAST)
			printf(" [builtin]");
		putchar('\n');
	}
	if (n < p->nfn)
		printf("  ... %zu more (use -n 0)\n", p->nfn - n);
	free(ix);

	ix = heap_sorted_sites(&p->heap);
	n = p->heap.nsite;
	if (limit && limit < n)
		n = limit;
	printf("\nAllocation sites: %zu (sorted by alloc bytes)\n",
	       p->heap.nsite);
	printf("%9s %13s %9s %13s  %s\n", "allocs", "alloc bytes", "frees",
	       "free bytes", "site");
	for (size_t i = 0; ix && i < n; i++) {
		const struct heap_site *s = &p->heap.sites[ix[i]];
		char buf[600];
		site_name(p, s, buf, sizeof buf);
		printf("%9" PRIu64 " %13" PRIu64 " %9" PRIu64 " %13" PRIu64
		       "  %s\n",
		       s->alloc_count, s->alloc_bytes, s->free_count,
		       s->free_bytes, buf);
	}
	if (n < p->heap.nsite)
		printf("  ... %zu more (use -n 0)\n", p->heap.nsite - n);
	free(ix);

	text_samples(p, limit);
	text_traces(p, limit);

	printf("\nGC: %" PRIu64 " cycles, peak heap %" PRIu64 " bytes, %" PRIu64
	       " GC events\n",
	       p->heap.gc.cycles, p->heap.gc.peak_heap, p->heap.gc.events);
	for (unsigned i = 0; i < FORMAT_GC__MAX; i++)
		printf("  %-12s %12.3f ms\n", decode_gc_phase_name(i),
		       ms(p, p->heap.gc.phase[i]));

	printf("\nVMs: %zu\n", p->nvm);
	printf("%6s %9s %11s %9s %6s %13s %13s %13s %13s\n", "id", "thread",
	       "events", "samples", "coros", "heap@attach", "heap@detach",
	       "heap live", "peak");
	for (size_t i = 0; i < p->nvm; i++) {
		const struct profile_vm *v = &p->vms[i];
		char det[24];
		if (v->has_detach)
			snprintf(det, sizeof det, "%" PRIu64, v->heap_detach);
		else
			snprintf(det, sizeof det, "-");
		printf("%6u %9" PRIu64 " %11" PRIu64 " %9" PRIu64 " %6" PRIu64
		       " %13" PRIu64 " %13s %13" PRId64 " %13" PRId64 "\n",
		       v->id, v->thread, v->events, v->samples, v->coroutines,
		       v->heap_attach, det, v->live, v->peak);
	}

	printf("\nTotals: %zu VMs, %" PRIu64 " coroutines, %" PRIu64
	       " events, %" PRIu64 " calls, %" PRIu64 " samples\n",
	       p->nvm, p->coroutines, p->events, t.calls, p->smp.samples);
	if (p->calls.unmatched_exits)
		printf("  %" PRIu64 " returns from frames entered before the "
		       "profiler attached\n",
		       p->calls.unmatched_exits);
	printf("  heap: %" PRIu64 " at attach + %" PRIu64 " allocated (%" PRIu64
	       " allocs) - %" PRIu64 " freed (%" PRIu64 " frees) = %" PRId64
	       " live, peak %" PRId64 "\n",
	       t.attach, t.alloc_bytes, t.alloc_count, t.free_bytes,
	       t.free_count, t.live, t.peak);
}

/* -- JSON ---------------------------------------------------------------------- */

/* Main thread. The JSON report: one object. */
static void json(const struct profile *p, int rc, const char *err)
{
	struct json j;
	struct totals t;
	sum(p, &t);
	json_init(&j, stdout, 1);
	json_obj(&j, NULL);
	json_u64(&j, "version", p->have_intro ? p->version : 0);
	json_bool(&j, "complete", rc == 0);
	json_bool(&j, "truncated", rc == -ENODATA);
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
	json_u64(&j, "vms", p->nvm);
	json_u64(&j, "coroutines", p->coroutines);
	json_u64(&j, "events", p->events);
	json_u64(&j, "calls", t.calls);
	json_u64(&j, "unmatched_exits", p->calls.unmatched_exits);
	json_u64(&j, "samples", p->smp.samples);
	json_u64(&j, "samples_dropped", p->smp.samples_dropped);
	json_u64(&j, "signals", p->smp.signals);
	json_obj(&j, "states");
	for (unsigned i = 0; i < FORMAT_STATE__MAX; i++)
		json_u64(&j, decode_state_name(i), p->smp.state[i]);
	json_close(&j, '}');
	json_u64(&j, "trace_flushes", p->smp.trace_flushes);

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
	json_u64(&j, "cycles", p->heap.gc.cycles);
	json_obj(&j, "phase_ns");
	for (unsigned i = 0; i < FORMAT_GC__MAX; i++)
		json_u64(&j, decode_gc_phase_name(i),
			 profile_ns(p, p->heap.gc.phase[i]));
	json_close(&j, '}');
	json_u64(&j, "peak_heap", p->heap.gc.peak_heap);
	json_u64(&j, "events", p->heap.gc.events);
	json_close(&j, '}');

	uint32_t *ix = profile_sorted_fns(p);
	json_arr(&j, "functions");
	for (size_t i = 0; ix && i < p->nfn; i++) {
		const struct profile_fn *f = &p->fns[ix[i]];
		json_obj(&j, NULL);
		json_cstr(&j, "name", f->name);
		json_cstr(&j, "kind", fnid_kind_name(f->kind));
		json_cstr(&j, "file", f->file);
		json_u64(&j, "line", f->line);
		json_u64(&j, "calls", f->calls);
		json_u64(&j, "total_ns", profile_ns(p, f->total));
		json_u64(&j, "self_ns", profile_ns(p, f->self));
		json_u64(&j, "alloc_count", f->alloc_count);
		json_u64(&j, "alloc_bytes", f->alloc_bytes);
		json_u64(&j, "free_count", f->free_count);
		json_u64(&j, "free_bytes", f->free_bytes);
		json_u64(&j, "samples", f->samples);
		json_u64(&j, "samples_total", f->samples_total);
		json_close(&j, '}');
	}
	json_close(&j, ']');
	free(ix);

	ix = samples_sorted_lines(&p->smp);
	json_arr(&j, "samples_by_line");
	for (size_t i = 0; ix && i < p->smp.nline; i++) {
		const struct samples_line *l = &p->smp.lines[ix[i]];
		const struct profile_fn *f = &p->fns[l->fn];
		json_obj(&j, NULL);
		json_cstr(&j, "name", f->name);
		json_cstr(&j, "file", f->file);
		json_u64(&j, "line", l->line);
		json_u64(&j, "samples", l->samples);
		json_close(&j, '}');
	}
	json_close(&j, ']');
	free(ix);

	ix = samples_sorted_traces(&p->smp);
	json_arr(&j, "traces");
	for (size_t i = 0; ix && i < p->smp.ntrace; i++) {
		const struct samples_trace *t = &p->smp.traces[ix[i]];
		const char *file = p->fns[t->fn].file;
		size_t len = strlen(file) + 32;
		char *name = malloc(len);
		if (name)
			snprintf(name, len, "%s:%" PRIu64, file, t->line);
		json_obj(&j, NULL);
		json_u64(&j, "traceno", t->traceno);
		json_cstr(&j, "name", name ? name : file);
		free(name);
		json_u64(&j, "root", t->root);
		json_u64(&j, "samples", t->samples);
		json_close(&j, '}');
	}
	json_close(&j, ']');
	free(ix);

	ix = samples_sorted_aborts(&p->smp);
	json_arr(&j, "trace_aborts");
	for (size_t i = 0; ix && i < p->smp.nabort; i++) {
		const struct samples_abort *a = &p->smp.aborts[ix[i]];
		json_obj(&j, NULL);
		json_u64(&j, "reason", a->reason);
		json_cstr(&j, "message", a->message);
		json_u64(&j, "count", a->count);
		json_close(&j, '}');
	}
	json_close(&j, ']');
	free(ix);

	ix = heap_sorted_sites(&p->heap);
	json_arr(&j, "alloc_sites");
	for (size_t i = 0; ix && i < p->heap.nsite; i++) {
		const struct heap_site *s = &p->heap.sites[ix[i]];
		const struct profile_fn *f = &p->fns[s->fn];
		json_obj(&j, NULL);
		json_cstr(&j, "function", f->name);
		json_cstr(&j, "kind", fnid_kind_name(f->kind));
		json_cstr(&j, "file", f->file);
		json_u64(&j, "line", s->line);
		json_u64(&j, "alloc_count", s->alloc_count);
		json_u64(&j, "alloc_bytes", s->alloc_bytes);
		json_u64(&j, "free_count", s->free_count);
		json_u64(&j, "free_bytes", s->free_bytes);
		json_close(&j, '}');
	}
	json_close(&j, ']');
	free(ix);

	json_arr(&j, "vm_list");
	for (size_t i = 0; i < p->nvm; i++) {
		const struct profile_vm *v = &p->vms[i];
		json_obj(&j, NULL);
		json_u64(&j, "id", v->id);
		json_u64(&j, "thread", v->thread);
		json_u64(&j, "events", v->events);
		json_u64(&j, "samples", v->samples);
		json_u64(&j, "coroutines", v->coroutines);
		json_u64(&j, "heap_attach", v->heap_attach);
		if (v->has_detach)
			json_u64(&j, "heap_detach", v->heap_detach);
		else
			json_null(&j, "heap_detach");
		json_i64(&j, "heap_live", v->live);
		json_i64(&j, "heap_peak", v->peak);
		json_u64(&j, "alloc_bytes", v->alloc_bytes);
		json_u64(&j, "free_bytes", v->free_bytes);
		json_u64(&j, "gc_peak_heap", v->gc_peak);
		json_bool(&j, "jit_off", (v->flags & FORMAT_VM_JIT_OFF) != 0);
		json_close(&j, '}');
	}
	json_close(&j, ']');

	json_arr(&j, "warnings");
	for (size_t i = 0; i < p->nwarn; i++)
		json_cstr(&j, NULL, p->warnings[i]);
	json_close(&j, ']');
	json_close(&j, '}');
}

/* -- Commands ------------------------------------------------------------------- */

/* Main thread. 'ljlog report'. */
int cli_report(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"limit", required_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int as_json = 0, o;
	size_t limit = 0;
	char *e;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+jn:h", lo, NULL)) != -1) {
		switch (o) {
		case 'j': as_json = 1; break;
		case 'n':
			limit = strtoul(optarg, &e, 10);
			if (!*optarg || *e) {
				cli_err("report", "-n wants a number, not '%s'",
					optarg);
				return CLI_USAGE;
			}
			break;
		case 'h': fputs(report_usage, stdout); return CLI_OK;
		default:
			if (optopt == 'n')
				cli_err("report", "-n needs a number");
			else
				cli_err("report", "unknown option '%s'",
					argv[optind - 1]);
			fputs(report_usage, stderr);
			return CLI_USAGE;
		}
	}
	const char *path = cli_file_arg("report", report_usage, argc, argv);
	if (!path)
		return CLI_USAGE;
	struct profile *p;
	char err[512];
	int rc, st = cli_load("report", path, 0, &p, &rc, err, sizeof err, 0);
	if (st >= 0)
		return st;
	if (as_json)
		json(p, rc, err);
	else
		text(p, path, rc, err, limit);
	profile_free(p);
	return rc == 0 || rc == -ENODATA ? CLI_OK : CLI_CORRUPT;
}
