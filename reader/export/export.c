/*
** ljlog reader exports: the decoding pass the writers share, and the
** progress line.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "export/export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blocks/format.h"
#include "block/reader.h"

/* INTRO: time 0 and the rate to use during the pass. */
static int on_intro(void *ud, const struct decode_intro *in)
{
	struct export_pass *x = ud;
	double per_counter = 1.0;
	if (x->nintro++) { /* the next log: times are ns since the first's */
		x->done += x->sizes ? x->sizes[x->nintro - 2] : 0;
		return x->sink.intro ? x->sink.intro(x->sink.ud, in) : 0;
	}
	if (in->counter_hz)
		per_counter = 1e9 / (double)in->counter_hz;
	x->have_intro = 1;
	x->t0 = in->clock.counter >> in->ts_shift;
	x->ns_per_tick = per_counter * (double)(1ull << in->ts_shift);
	return x->sink.intro ? x->sink.intro(x->sink.ud, in) : 0;
}

/* Show how far the pass is, when the percentage changed. */
static void progress(struct export_pass *x, const struct reader_block *b)
{
	if (!x->opts || !x->opts->progress || !x->size || !b)
		return;
	int pc = (int)((x->done + b->offset + b->h.length) * 100 / x->size);
	if (pc > 100)
		pc = 100;
	if (pc == x->shown)
		return;
	x->shown = pc;
	fprintf(stderr, "\rljlog export: reading %d%% of %.1f MB", pc,
		(double)x->size / 1e6);
	fflush(stderr);
}

/* Block ends: progress. */
static int on_events_done(void *ud, const struct decode_events *h)
{
	progress(ud, h->block);
	return 0;
}

/* SAMPLES block ends: progress. */
static int on_samples_done(void *ud, const struct decode_samples *h)
{
	progress(ud, h->block);
	return 0;
}

/* Decode path into a new profile, with the writer's sink and
** observer. */
int export_pass_run(struct export_pass *x, const char *path,
		    const struct export_opts *o, char *err, size_t errlen)
{
	struct decode_sink ps, sink, own;
	struct fanout fan;
	struct stat st;
	const char *one[1] = {path};
	const char *const *paths = o && o->npath ? o->paths : one;
	size_t n = o && o->npath ? o->npath : 1;
	int rc;
	x->p = NULL;
	x->opts = o;
	x->shown = -1;
	x->ns_per_tick = 1.0;
	x->size = x->done = 0;
	x->nintro = 0;
	if (!(x->sizes = calloc(n, sizeof *x->sizes))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (stat(paths[i], &st) == 0)
			x->size += x->sizes[i] = (uint64_t)st.st_size;
	if ((rc = profile_new(&x->p, x->flags)) < 0) {
		free(x->sizes);
		x->sizes = NULL;
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	x->p->calls.obs = x->obs;
	if (o && o->narrow &&
	    (rc = profile_narrow(x->p, o->focus, o->ignore, o->win, o->from_ns,
				 o->to_ns, err, errlen)) < 0) {
		free(x->sizes);
		x->sizes = NULL;
		profile_free(x->p);
		x->p = NULL;
		return rc;
	}
	/* The profile's processors first (fnid sets the function indices the
	** writer reads), then the writer, then the pass's own. */
	fanout_init(&fan);
	profile_sink(x->p, &ps);
	fanout_add(&fan, &ps);
	own = x->sink;
	own.intro = NULL;
	fanout_add(&fan, &own);
	memset(&ps, 0, sizeof ps);
	ps.ud = x;
	ps.intro = on_intro;
	ps.events_done = on_events_done;
	ps.samples_done = on_samples_done;
	fanout_add(&fan, &ps);
	fanout_sink(&fan, &sink);
	rc = profile_decode_logs(x->p, paths, n, &sink, err, errlen);
	free(x->sizes);
	x->sizes = NULL;
	if (x->shown >= 0)
		fputs("\r\033[K", stderr);
	if (!x->p->opened) {
		profile_free(x->p);
		x->p = NULL;
	}
	return rc;
}

/* Free the pass's profile. */
void export_pass_free(struct export_pass *x)
{
	profile_free(x->p);
	x->p = NULL;
}

/* See export.h. */
uint64_t export_budget(const struct export_pass *x)
{
	uint64_t b = x->size * EXPORT_SIZE_RATIO;
	return b < EXPORT_MIN_BUDGET ? EXPORT_MIN_BUDGET : b;
}
