/*
** ljlog reader exports: the decoding pass the writers share, and the
** progress line.
*/
#include "export/export.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "blocks/format.h"
#include "reader.h"

/* Any thread. INTRO: time 0 and the rate to use during the pass. */
static int on_intro(void *ud, const struct decode_intro *in)
{
	struct export_pass *x = ud;
	double per_counter = 1.0;
	if (in->counter_hz)
		per_counter = 1e9 / (double)in->counter_hz;
	x->have_intro = 1;
	x->t0 = in->clock.counter >> in->ts_shift;
	x->ns_per_tick = per_counter * (double)(1ull << in->ts_shift);
	return x->sink.intro ? x->sink.intro(x->sink.ud, in) : 0;
}

/* Any thread. Show how far the pass is, when the percentage changed. */
static void progress(struct export_pass *x, const struct reader_block *b)
{
	if (!x->opts || !x->opts->progress || !x->size || !b)
		return;
	int pc = (int)((b->offset + b->h.length) * 100 / x->size);
	if (pc > 100)
		pc = 100;
	if (pc == x->shown)
		return;
	x->shown = pc;
	fprintf(stderr, "\rljlog export: reading %d%% of %.1f MB", pc,
		(double)x->size / 1e6);
	fflush(stderr);
}

/* Any thread. Block ends: progress. */
static int on_events_done(void *ud, const struct decode_events *h)
{
	progress(ud, h->block);
	return 0;
}

/* Any thread. SAMPLES block ends: progress. */
static int on_samples_done(void *ud, const struct decode_samples *h)
{
	progress(ud, h->block);
	return 0;
}

/* Any thread. Decode path into a new profile, with the writer's sink and
** observer. */
int export_pass_run(struct export_pass *x, const char *path,
		    const struct export_opts *o, char *err, size_t errlen)
{
	struct reader *r;
	struct decode *d;
	struct decode_sink ps, sink, own;
	struct fanout fan;
	struct stat st;
	int rc;
	x->p = NULL;
	x->opts = o;
	x->shown = -1;
	x->ns_per_tick = 1.0;
	if ((rc = reader_open(&r, path, 0, err, errlen)) < 0)
		return rc;
	x->size = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
	if ((rc = profile_new(&x->p, x->flags)) < 0) {
		reader_close(r);
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	x->p->calls.obs = x->obs;
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
	if ((rc = decode_new(&d, &sink)) < 0) {
		reader_close(r);
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	rc = decode_run(r, d, err, errlen);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	decode_free(d);
	reader_close(r);
	if (x->shown >= 0)
		fputs("\r\033[K", stderr);
	if (profile_finish(x->p) < 0 && rc == 0) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
	}
	return rc;
}

/* Any thread. Free the pass's profile. */
void export_pass_free(struct export_pass *x)
{
	profile_free(x->p);
	x->p = NULL;
}

/* Any thread. See export.h. */
uint64_t export_budget(const struct export_pass *x)
{
	uint64_t b = x->size * EXPORT_SIZE_RATIO;
	return b < EXPORT_MIN_BUDGET ? EXPORT_MIN_BUDGET : b;
}
