/*
** ljlog CLI: 'ljlog report --json': one object, the tables of the column
** model (report_cols.c) as arrays with every column and row.
*/
#include "report_int.h"

#include <errno.h>
#include <stdlib.h>

/* Main thread. A section as a JSON array of objects, every row; a column
** of a family that fams (report_recorded) says was not recorded is null
** in every row, not a count of 0. */
static void json_table(struct json *j, const struct profile *p,
		       const struct section *sec, const struct report_extra *x,
		       unsigned fams)
{
	const struct profile_diff *d = x ? x->diff : NULL;
	struct cell c = {0};
	size_t nrow;
	uint32_t *ix = sec->rows(p, &nrow);
	unsigned real = 0; /* the family bits, not the text's FAM_ ones */
	for (size_t f = 0; f < report_nfamily; f++)
		real |= report_families[f].bit;
	json_arr(j, sec->key);
	for (size_t i = 0; ix && i < nrow; i++) {
		json_obj(j, NULL);
		for (size_t k = 0; k < sec->ncol; k++) {
			const struct column *col = &sec->cols[k];
			unsigned need = col->fam & real;
			if (!col->key)
				continue;
			if (need && !(need & fams)) {
				json_null(j, col->key);
				continue;
			}
			report_cell_get(p, sec, col, ix[i], &c);
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
		if (d && sec == &report_sec_fns)
			report_diff_fn_json(j, d, ix[i]);
		if (x && x->nlog && sec == &report_sec_fns)
			report_bylog_fn_json(j, x, ix[i]);
		else if (d && sec == &report_sec_sites)
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
	report_sum(p, &t);
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
	json_cstr(&j, "timebase", report_timebase_name(p->timebase));
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
	/* Buffers lost whole (version 17): the events missing, by family. */
	json_u64(&j, "events_dropped", p->have_end ? p->end.events_dropped : 0);
	json_u64(&j, "buffers_dropped",
		 p->have_end ? p->end.buffers_dropped : 0);
	json_obj(&j, "events_dropped_by_family");
	for (unsigned f = 1; f < FORMAT_FAM__MAX; f++)
		json_u64(&j, format_fam_name(f),
			 p->have_end ? p->end.fam_dropped[f] : 0);
	json_close(&j, '}');
	json_u64(&j, "signals", s->signals);
	json_u64(&j, "intervals", s->intervals);
	{
		int wall;
		json_u64(&j, "interval_ns", report_sample_interval(p, &wall));
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
	json_u64(&j, "gc_ns", report_gc_busy_ns(p));
	json_u64(&j, "idle_ns", profile_ns(p, gc->phase[FORMAT_GC_PAUSE]));
	json_u64(&j, "peak_heap", gc->peak_heap);
	json_u64(&j, "events", gc->events);
	json_close(&j, '}');

	json_table(&j, p, &report_sec_fns, x, fams);
	json_table(&j, p, &report_sec_lines, NULL, fams);
	json_table(&j, p, &report_sec_traces, NULL, fams);
	json_table(&j, p, &report_sec_aborts, NULL, fams);
	json_table(&j, p, &report_sec_sites, x, fams);
	json_table(&j, p, &report_sec_vms, NULL, fams);
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
