/*
** ljlog CLI: 'ljlog report' over several logs: the logs' list (text
** header, JSON "logs"), and each function's figures per log (--by-log).
*/
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

/* Main thread. How a log's decoding ended, in a word. */
static const char *log_state(const struct profile_log *l)
{
	return l->rc == 0			  ? "complete"
	       : l->rc == -ENODATA		  ? "TRUNCATED"
	       : cli_status(l->rc) == CLI_CORRUPT ? "CORRUPT"
						  : "unread";
}

/* Main thread. The text header's first lines for several logs: the
** program(s), the span from the first start to the last end, one line a
** log. */
void report_logs_text(const struct profile *p)
{
	char d[32];
	printf("ljlog report: %zu logs", p->nlog);
	if (p->have_intro)
		printf(" of %s%s", p->exe, p->mixed_exe ? " and others" : "");
	printf(", %s from the first start to the last end\n",
	       cli_fmt_time(d, sizeof d, p->duration_ns));
	for (size_t i = 0; i < p->nlog; i++) {
		const struct profile_log *l = &p->logs[i];
		printf("  log %zu: %s, pid %" PRIu64 ", ran %s, %s", i, l->file,
		       l->pid, cli_fmt_time(d, sizeof d, l->duration_ns),
		       log_state(l));
		if (l->rc)
			printf(": %s", l->err);
		if (p->mixed_exe && l->exe)
			printf(" (%s)", l->exe);
		putchar('\n');
	}
}

/* Main thread. See cli.h: one object per log the function ran in. */
void report_bylog_fn_json(struct json *j, const struct report_extra *x,
			  uint32_t fn)
{
	json_arr(j, "by_log");
	for (size_t i = 0; i < x->nlog; i++) {
		const struct profile_diff *d = &x->logs[i];
		uint32_t k = d->fn_b[fn];
		if (k == UINT32_MAX)
			continue;
		const struct profile_fn *f = &d->b->fns[k];
		if (!f->calls && !f->samples_total && !f->alloc_count &&
		    !f->total)
			continue;
		json_obj(j, NULL);
		json_u64(j, "log", i);
		json_u64(j, "calls", f->calls);
		json_u64(j, "self_ns", profile_ns(d->b, f->self));
		json_u64(j, "total_ns", profile_ns(d->b, f->total));
		json_u64(j, "samples", f->samples);
		json_u64(j, "samples_total", f->samples_total);
		json_u64(j, "alloc_count", f->alloc_count);
		json_u64(j, "alloc_bytes", f->alloc_bytes);
		json_close(j, '}');
	}
	json_close(j, ']');
}

/* Main thread. The header line of a narrowed report (none otherwise). */
void report_narrow_text(const struct profile *p)
{
	char a[32], b[32];
	if (!p->narrow)
		return;
	printf("  narrowed:");
	if (p->focus_re)
		printf(" --focus '%s'", p->focus_re);
	if (p->ignore_re)
		printf(" --ignore '%s'", p->ignore_re);
	if (p->win) {
		printf(" from %s", cli_fmt_time(a, sizeof a, p->win_from_ns));
		if (p->win_to_ns != UINT64_MAX)
			printf(" to %s",
			       cli_fmt_time(b, sizeof b, p->win_to_ns));
		printf(" after the start");
	}
	printf(": %" PRIu64 " samples left out\n", p->narrowed);
}

/* Main thread. JSON "narrowed": what narrowed the report, or null. */
void report_narrow_json(struct json *j, const struct profile *p)
{
	if (!p->narrow) {
		json_null(j, "narrowed");
		return;
	}
	json_obj(j, "narrowed");
	if (p->focus_re)
		json_cstr(j, "focus", p->focus_re);
	else
		json_null(j, "focus");
	if (p->ignore_re)
		json_cstr(j, "ignore", p->ignore_re);
	else
		json_null(j, "ignore");
	if (p->win) {
		json_u64(j, "from_ns", p->win_from_ns);
		if (p->win_to_ns != UINT64_MAX)
			json_u64(j, "to_ns", p->win_to_ns);
		else
			json_null(j, "to_ns");
	} else {
		json_null(j, "from_ns");
		json_null(j, "to_ns");
	}
	json_u64(j, "samples_left_out", p->narrowed);
	json_close(j, '}');
}

/* Main thread. JSON "logs": one object a log. */
void report_logs_json(struct json *j, const struct profile *p)
{
	json_arr(j, "logs");
	for (size_t i = 0; i < p->nlog; i++) {
		const struct profile_log *l = &p->logs[i];
		json_obj(j, NULL);
		json_cstr(j, "file", l->file);
		json_u64(j, "pid", l->pid);
		if (l->exe)
			json_cstr(j, "exe", l->exe);
		else
			json_null(j, "exe");
		json_u64(j, "version", l->version);
		json_u64(j, "duration_ns", l->duration_ns);
		json_bool(j, "complete", l->rc == 0);
		json_bool(j, "truncated", l->rc == -ENODATA);
		if (l->rc)
			json_cstr(j, "error", l->err);
		else
			json_null(j, "error");
		json_close(j, '}');
	}
	json_close(j, ']');
}
