/*
** ljlog reader library, layer 3: several logs into one profile.
** The logs of the workers of a server, or of the processes of a fleet, are
** decoded one after another into one profile: each log's IDs get a base
** of their own (its VMs, coroutines and traces stay apart), functions
** merge by identity (fnid), and with more than one log every time goes to
** CLOCK_MONOTONIC nanoseconds by the log's own CLOCK pairs, so that durations of
** logs written with different counters add up. One decoding pass at a
** time; the state lives in the pass's locals.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "profile/profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks/format.h"
#include "block/reader.h"

/* One log being decoded: where its data goes and how its times convert. */
struct logs_one {
	struct decode_sink next; /* the profile's, or the caller's fan-out */
	struct profile *p;
	struct profile_log *log;
	unsigned shift;	     /* INTRO ts_shift */
	uint64_t counter0;   /* INTRO clock counter */
	uint64_t mono0;	     /* INTRO clock CLOCK_MONOTONIC ns */
	double ns_per_count; /* ns per counter tick */
	unsigned npair;	     /* CLOCK pairs in first and last */
	struct decode_clock first, last;
};

/* Keep the earliest and the latest CLOCK pair of a log, as profile.c's
** clock_seen does for a log decoded on its own. */
static void pair_seen(struct logs_one *o, const struct decode_clock *c)
{
	if (!o->npair++ || c->mono_ns < o->first.mono_ns)
		o->first = *c;
	if (c->mono_ns >= o->last.mono_ns)
		o->last = *c;
}

/* The CLOCK pairs of path's EVENTS, SAMPLES and END blocks into o: a pass
** that reads their payloads' heads only. A log decoded on its own
** converts its ticks by its first and last pairs (profile.c, timebase);
** its times in a merge then convert by the same rate, not by the
** INTRO's counter_hz, a 250 us calibration that a loaded machine can put
** 0.2% off. */
static void log_pairs(struct logs_one *o, const char *path)
{
	struct reader *r;
	struct reader_block b;
	struct decode_clock c;
	char err[READER_ERR_MAX];
	if (reader_open(&r, path, 0, err, sizeof err) < 0)
		return;
	while (reader_next(r, &b) == 1)
		if ((b.h.kind == FORMAT_KIND_END ||
		     b.h.kind == FORMAT_KIND_EVENTS ||
		     b.h.kind == FORMAT_KIND_SAMPLES) &&
		    reader_payload(r, &b) == 0 &&
		    decode_block_clock(&b, &c) == 0)
			pair_seen(o, &c);
	reader_close(r);
}

/* ts (the log's units) as CLOCK_MONOTONIC ns. */
static uint64_t conv(const struct logs_one *o, uint64_t ts)
{
	double d =
	    ((double)(ts << o->shift) - (double)o->counter0) * o->ns_per_count;
	double ns = (double)o->mono0 + d;
	return ns <= 0 ? 0 : ns >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(ns);
}

/* A CLOCK pair in the profile's units, which are CLOCK_MONOTONIC ns: its
** counter is its monotonic time. (Its counter converted as a ts is, where
** a log's rate is counter_hz, would make the merged pairs disagree by that
** rate's error, and the profile's time base, which the pairs set, scale
** every log's times by it.) */
static struct decode_clock conv_clock(const struct decode_clock *c)
{
	struct decode_clock r = *c;
	r.counter = c->mono_ns;
	return r;
}

/* A CLOCK pair of the log: its first and last times. */
static void seen(struct profile_log *l, const struct decode_clock *c)
{
	if (!l->nclk++ || c->mono_ns < l->first_ns)
		l->first_ns = c->mono_ns;
	if (c->mono_ns > l->last_ns)
		l->last_ns = c->mono_ns;
}

/* INTRO: the log's facts and its conversion to ns. */
static int on_intro(void *ud, const struct decode_intro *in)
{
	struct logs_one *o = ud;
	struct profile_log *l = o->log;
	l->pid = in->pid;
	l->version = in->version;
	free(l->exe);
	if (!(l->exe = strdup(in->exe.s ? in->exe.s : "")))
		return -ENOMEM;
	o->shift = (unsigned)in->ts_shift;
	o->counter0 = in->clock.counter;
	o->mono0 = in->clock.mono_ns;
	pair_seen(o, &in->clock);
	if (in->counter_kind == FORMAT_COUNTER_MONO_NS) {
		o->ns_per_count = 1.0;
		o->counter0 = o->mono0; /* the counter is the clock */
	} else if (o->npair >= 2 && o->last.counter > o->first.counter &&
		   o->last.mono_ns > o->first.mono_ns) {
		o->ns_per_count = (double)(o->last.mono_ns - o->first.mono_ns) /
				  (double)(o->last.counter - o->first.counter);
	} else if (in->counter_hz) {
		o->ns_per_count = 1e9 / (double)in->counter_hz;
	} else {
		o->ns_per_count = 1.0;
		if (o->next.warn) {
			char w[600];
			snprintf(w, sizeof w,
				 "%s: no counter rate in its INTRO: its "
				 "ticks are taken as ns",
				 l->file);
			o->next.warn(o->next.ud, w);
		}
	}
	seen(l, &in->clock);
	if (!o->next.intro)
		return 0;
	struct decode_intro x = *in;
	x.clock = conv_clock(&in->clock);
	x.counter_kind = FORMAT_COUNTER_MONO_NS;
	x.ts_shift = 0;
	x.counter_hz = 1000000000u;
	return o->next.intro(o->next.ud, &x);
}

/* END. */
static int on_end(void *ud, const struct decode_end *e)
{
	struct logs_one *o = ud;
	struct decode_end x = *e;
	seen(o->log, &e->clock);
	x.clock = conv_clock(&e->clock);
	return o->next.end ? o->next.end(o->next.ud, &x) : 0;
}

/* Pass-throughs: no time in them. */
static int on_mapping(void *ud, uint32_t vm, const struct reader_block *b)
{
	struct logs_one *o = ud;
	return o->next.mapping ? o->next.mapping(o->next.ud, vm, b) : 0;
}

static int on_record(void *ud, struct decode_obj *obj)
{
	struct logs_one *o = ud;
	return o->next.record ? o->next.record(o->next.ud, obj) : 0;
}

static int on_rename(void *ud, struct decode_obj *obj)
{
	struct logs_one *o = ud;
	return o->next.rename ? o->next.rename(o->next.ud, obj) : 0;
}

static int on_heap_obj(void *ud, const struct decode_hobj *h)
{
	struct logs_one *o = ud;
	return o->next.heap_obj ? o->next.heap_obj(o->next.ud, h) : 0;
}

static int on_heap_root(void *ud, const struct decode_hroot *r)
{
	struct logs_one *o = ud;
	return o->next.heap_root ? o->next.heap_root(o->next.ud, r) : 0;
}

static int on_unknown(void *ud, const struct reader_block *b)
{
	struct logs_one *o = ud;
	return o->next.unknown ? o->next.unknown(o->next.ud, b) : 0;
}

static void on_warn(void *ud, const char *msg)
{
	struct logs_one *o = ud;
	if (o->next.warn)
		o->next.warn(o->next.ud, msg);
}

/* Block headers: base time and CLOCK pair. */
static int events_hdr(struct logs_one *o, const struct decode_events *h,
		      int (*fn)(void *, const struct decode_events *))
{
	if (!fn)
		return 0;
	struct decode_events x = *h;
	x.base_ts = conv(o, h->base_ts);
	x.clock = conv_clock(&h->clock);
	return fn(o->next.ud, &x);
}

static int on_events(void *ud, const struct decode_events *h)
{
	struct logs_one *o = ud;
	seen(o->log, &h->clock);
	return events_hdr(o, h, o->next.events);
}

static int on_events_done(void *ud, const struct decode_events *h)
{
	return events_hdr(ud, h, ((struct logs_one *)ud)->next.events_done);
}

static int samples_hdr(struct logs_one *o, const struct decode_samples *h,
		       int (*fn)(void *, const struct decode_samples *))
{
	if (!fn)
		return 0;
	struct decode_samples x = *h;
	x.base_ts = conv(o, h->base_ts);
	x.clock = conv_clock(&h->clock);
	return fn(o->next.ud, &x);
}

static int on_samples(void *ud, const struct decode_samples *h)
{
	struct logs_one *o = ud;
	seen(o->log, &h->clock);
	return samples_hdr(o, h, o->next.samples);
}

static int on_samples_done(void *ud, const struct decode_samples *h)
{
	return samples_hdr(ud, h, ((struct logs_one *)ud)->next.samples_done);
}

/* One event, one sample, one heap summary: their times. */
static int on_event(void *ud, const struct decode_event *ev)
{
	struct logs_one *o = ud;
	struct decode_event x = *ev;
	x.ts = conv(o, ev->ts);
	return o->next.event(o->next.ud, &x);
}

static int on_sample(void *ud, const struct decode_sample *s)
{
	struct logs_one *o = ud;
	struct decode_sample x = *s;
	x.ts = conv(o, s->ts);
	return o->next.sample(o->next.ud, &x);
}

static int on_heap_summary(void *ud, const struct decode_hsummary *s)
{
	struct logs_one *o = ud;
	if (!o->next.heap_summary)
		return 0;
	struct decode_hsummary x = *s;
	seen(o->log, &s->clock);
	x.clock = conv_clock(&s->clock);
	return o->next.heap_summary(o->next.ud, &x);
}

/* The sink that converts one log's data for o->next. */
static void one_sink(struct logs_one *o, struct decode_sink *s)
{
	memset(s, 0, sizeof *s);
	s->ud = o;
	s->intro = on_intro;
	s->end = on_end;
	s->mapping = on_mapping;
	s->record = on_record;
	s->rename = on_rename;
	s->events = on_events;
	s->event = o->next.event ? on_event : NULL;
	s->events_done = on_events_done;
	s->samples = on_samples;
	s->sample = o->next.sample ? on_sample : NULL;
	s->samples_done = on_samples_done;
	s->heap_obj = on_heap_obj;
	s->heap_root = on_heap_root;
	s->heap_summary = on_heap_summary;
	s->unknown = on_unknown;
	s->warn = on_warn;
}

/* What the one log of p says of itself (its INTRO in, or
** NULL), when it was decoded straight into p. */
static void one_facts(const struct profile *p, struct profile_log *l,
		      const struct decode_intro *in)
{
	if (in) {
		l->pid = in->pid;
		l->version = in->version;
		l->exe = strdup(in->exe.s ? in->exe.s : "");
	}
	if (p->nclk) {
		l->nclk = p->nclk;
		l->first_ns = p->clk_first.mono_ns;
		l->last_ns = p->clk_last.mono_ns;
	}
}

/* Decode the one log o->log (opened as r) with IDs from base,
** through o's conversion (more than one log) or straight into o->next;
** its result (0, -ENODATA, ...), message in o->log->err. */
static int decode_one(struct logs_one *o, struct reader *r, uint32_t base,
		      int rebase)
{
	struct decode_sink s = o->next;
	struct decode *d;
	struct profile_log *l = o->log;
	int rc;
	if (rebase) {
		log_pairs(o, l->file);
		one_sink(o, &s);
	}
	if ((rc = decode_new(&d, &s)) < 0) {
		snprintf(l->err, sizeof l->err, "out of memory");
		return rc;
	}
	decode_set_idbase(d, base);
	l->idbase = base;
	rc = decode_run(r, d, l->err, sizeof l->err);
	if (rc == -ENOMEM)
		snprintf(l->err, sizeof l->err, "out of memory");
	l->maxid = decode_max_id(d);
	if (!rebase)
		one_facts(o->p, l, decode_intro(d));
	decode_free(d);
	if (l->last_ns > l->first_ns)
		l->duration_ns = l->last_ns - l->first_ns;
	return rc;
}

/* See profile.h. */
size_t profile_id_log(const struct profile *p, uint32_t id, uint32_t *local)
{
	size_t i = p->nlog;
	while (i > 1 && id < p->logs[i - 1].idbase)
		i--;
	i = i ? i - 1 : 0;
	*local = i < p->nlog ? id - p->logs[i].idbase : id;
	return i;
}

/* See profile.h. */
const char *profile_vm_label(const struct profile *p, uint32_t vm, char *buf,
			     size_t len)
{
	uint32_t local;
	size_t i = profile_id_log(p, vm, &local);
	if (p->nlog > 1)
		snprintf(buf, len, "VM %u of pid %llu", local,
			 (unsigned long long)p->logs[i].pid);
	else
		snprintf(buf, len, "VM %u", vm);
	return buf;
}

/* How bad a result is: 0 fine, 1 truncated, 2 corrupt, 3 out
** of memory or an error of the system. */
static int severity(int rc)
{
	return rc == 0 ? 0 : rc == -ENODATA ? 1 : rc == -ENOMEM ? 3 : 2;
}

/* See profile.h. */
int profile_decode_logs(struct profile *p, const char *const *paths, size_t n,
			const struct decode_sink *sink, char *err,
			size_t errlen)
{
	struct decode_sink own;
	uint64_t base = 0;
	int rc = 0, worst = 0;
	if (!sink) {
		profile_sink(p, &own);
		sink = &own;
	}
	if (!(p->logs = calloc(n ? n : 1, sizeof *p->logs))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct profile_log *l = &p->logs[p->nlog];
		struct logs_one o = {.next = *sink, .p = p, .log = l};
		struct reader *r;
		int one;
		if (!(l->file = strdup(paths[i]))) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		p->nlog++;
		if ((one = reader_open(&r, paths[i], 0, l->err,
				       sizeof l->err)) < 0) {
			snprintf(err, errlen, "%s", l->err);
			l->rc = one;
			return one;
		}
		p->opened = 1;
		if (base + DECODE_MAX_ID > UINT32_MAX) {
			reader_close(r);
			snprintf(l->err, sizeof l->err,
				 "too many IDs in the logs before it to merge "
				 "it (%llu)",
				 (unsigned long long)base);
			snprintf(err, errlen, "%s: %s", paths[i], l->err);
			return l->rc = -E2BIG;
		}
		one = decode_one(&o, r, (uint32_t)base, n > 1);
		reader_close(r);
		l->rc = one;
		base += (uint64_t)l->maxid + 1;
		if (severity(one) > worst) {
			worst = severity(one);
			rc = one;
			snprintf(err, errlen, "%s%s%s", n > 1 ? paths[i] : "",
				 n > 1 ? ": " : "", l->err);
		}
		if (one == -ENOMEM)
			break;
	}
	if (profile_finish(p) < 0 && rc == 0) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
	}
	return rc;
}
