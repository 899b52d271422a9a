/*
** ljlog reader library, layer 3: the profile, a façade over the processors.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "profile/profile_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/sort.h"

#define MAX_WARNINGS 64

/* -- Warnings ----------------------------------------------------------------- */

/* Keep a warning for the front end (a processor's or the
** decoder's). */
static void on_warn(void *ud, const char *msg)
{
	struct profile *p = ud;
	if (p->nwarn >= MAX_WARNINGS) {
		p->nwarn_dropped++;
		return;
	}
	char **w = realloc(p->warnings, (p->nwarn + 1) * sizeof *w);
	if (!w)
		return;
	p->warnings = w;
	if ((w[p->nwarn] = strdup(msg)))
		p->nwarn++;
}

/* Keep a formatted warning. */
static void add_warn(struct profile *p, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	on_warn(p, buf);
}

/* -- The profile's own sink: INTRO, END, clocks, VMs ------------------------ */

/* Keep a CLOCK pair: the earliest and the latest (one log's
** come in order; several logs' may not). */
static void clock_seen(struct profile *p, const struct decode_clock *c)
{
	if (!p->nclk++ || c->mono_ns < p->clk_first.mono_ns)
		p->clk_first = *c;
	if (c->mono_ns >= p->clk_last.mono_ns)
		p->clk_last = *c;
}

/* The VM with this ID, created when new; NULL when out of
** memory. */
static struct profile_vm *vm_get(struct profile *p, uint32_t id)
{
	int added;
	uint64_t *i = hmap_ref(&p->vmmap, (uint64_t)id + 1, &added);
	if (!i)
		return NULL;
	if (!added)
		return &p->vms[*i - 1];
	struct profile_vm *nv = realloc(p->vms, (p->nvm + 1) * sizeof *nv);
	if (!nv) {
		hmap_del(&p->vmmap, (uint64_t)id + 1);
		return NULL;
	}
	p->vms = nv;
	*i = ++p->nvm;
	memset(&nv[p->nvm - 1], 0, sizeof *nv);
	nv[p->nvm - 1].id = id;
	return &nv[p->nvm - 1];
}

/* INTRO block. */
static int on_intro(void *ud, const struct decode_intro *in)
{
	struct profile *p = ud;
	if (p->have_intro) { /* the next log (profile_decode_logs) */
		clock_seen(p, &in->clock);
		if (p->exe && strcmp(p->exe, in->exe.s) != 0 && !p->mixed_exe) {
			p->mixed_exe = 1;
			add_warn(p,
				 "logs of different programs merged: %s and %s",
				 p->exe, in->exe.s);
		}
		return 0;
	}
	narrow_intro(p, in);
	p->have_intro = 1;
	p->version = in->version;
	p->pid = in->pid;
	p->pointer_size = in->pointer_size;
	p->counter_kind = in->counter_kind;
	p->ts_shift = in->ts_shift;
	p->counter_hz = in->counter_hz;
	p->exe = strdup(in->exe.s);
	p->luajit_version = strdup(in->luajit_version.s);
	p->options = strdup(in->options.s);
	clock_seen(p, &in->clock);
	return p->exe && p->luajit_version && p->options ? 0 : -ENOMEM;
}

/* END block. */
static int on_end(void *ud, const struct decode_end *e)
{
	struct profile *p = ud;
	clock_seen(p, &e->clock);
	if (!p->have_end) {
		p->have_end = 1;
		p->end = *e;
		return 0;
	}
	/* The next log's (profile_decode_logs): the totals add up; the first
	** write error stands. */
	struct decode_end *t = &p->end;
	t->events += e->events;
	t->blocks += e->blocks;
	t->bytes += e->bytes;
	t->samples_dropped += e->samples_dropped;
	t->vms += e->vms;
	t->flush_waits += e->flush_waits;
	t->flush_wait_ns += e->flush_wait_ns;
	t->events_dropped += e->events_dropped;
	t->buffers_dropped += e->buffers_dropped;
	for (unsigned f = 0; f < FORMAT_FAM__MAX; f++)
		t->fam_dropped[f] += e->fam_dropped[f];
	if (!t->stop_error && e->stop_error) {
		t->stop_error = e->stop_error;
		memcpy(t->stop_reason, e->stop_reason, sizeof t->stop_reason);
	}
	t->clock = e->clock;
	return 0;
}

/* A MAPPING record: VMs and their coroutines. */
static int on_record(void *ud, struct decode_obj *o)
{
	struct profile *p = ud;
	struct profile_vm *v;
	switch (o->kind) {
	case FORMAT_REC_VM:
		if (!(v = vm_get(p, o->id)))
			return -ENOMEM;
		v->thread = o->u.vm.thread;
		v->flags = o->u.vm.flags;
		break;
	case FORMAT_REC_COROUTINE:
		if (!(v = vm_get(p, o->vm)))
			return -ENOMEM;
		v->coroutines++;
		p->coroutines++;
		break;
	}
	return 0;
}

/* An EVENTS block begins. */
static int on_events(void *ud, const struct decode_events *h)
{
	clock_seen(ud, &h->clock);
	return 0;
}

/* An EVENTS block ends. */
static int on_events_done(void *ud, const struct decode_events *h)
{
	struct profile *p = ud;
	const uint64_t *i = hmap_get(&p->vmmap, (uint64_t)h->vm + 1);
	if (i)
		p->vms[*i - 1].events += h->count;
	p->events += h->count;
	return 0;
}

/* A SAMPLES block begins. */
static int on_samples(void *ud, const struct decode_samples *h)
{
	clock_seen(ud, &h->clock);
	return 0;
}

/* -- Public ------------------------------------------------------------------- */

/* New, empty profile: the processors behind one fan-out. */
int profile_new(struct profile **out, unsigned flags)
{
	struct profile *p = calloc(1, sizeof *p);
	struct decode_sink s;
	*out = NULL;
	if (!p)
		return -ENOMEM;
	fnid_init(&p->fnid);
	heap_init(&p->heap, &p->fnid);
	samples_init(&p->smp, &p->fnid, on_warn, p);
	zones_init(&p->zones);
	p->zones.leaf_src = &p->smp;
	p->zones.site_src = &p->heap;
	if (calls_init(&p->calls, &p->fnid, (flags & PROFILE_CALLTREE) != 0,
		       on_warn, p) < 0) {
		profile_free(p);
		return -ENOMEM;
	}
	p->flags = flags;
	p->ns_per_tick = 1.0;
	/* fnid first: the others read the function index it sets. */
	fanout_init(&p->fan);
	fnid_sink(&p->fnid, &s);
	fanout_add(&p->fan, &s);
	memset(&s, 0, sizeof s);
	s.ud = p;
	s.intro = on_intro;
	s.end = on_end;
	s.record = on_record;
	s.events = on_events;
	s.events_done = on_events_done;
	s.samples = on_samples;
	s.warn = on_warn;
	fanout_add(&p->fan, &s);
	calls_sink(&p->calls, &s);
	fanout_add(&p->fan, &s);
	heap_sink(&p->heap, &s);
	fanout_add(&p->fan, &s);
	samples_sink(&p->smp, &s);
	fanout_add(&p->fan, &s);
	zones_sink(&p->zones, &s);
	fanout_add(&p->fan, &s);
	*out = p;
	return 0;
}

/* Free everything. */
void profile_free(struct profile *p)
{
	if (!p)
		return;
	calls_free(&p->calls);
	heap_free(&p->heap);
	samples_free(&p->smp);
	zones_free(&p->zones);
	fnid_free(&p->fnid);
	for (size_t i = 0; i < p->nwarn; i++)
		free(p->warnings[i]);
	free(p->warnings);
	free(p->fns);
	free(p->vms);
	hmap_free(&p->vmmap);
	free(p->exe);
	free(p->luajit_version);
	free(p->options);
	free(p->only_str);
	narrow_free(p);
	for (size_t i = 0; i < p->nlog; i++) {
		free(p->logs[i].file);
		free(p->logs[i].exe);
	}
	free(p->logs);
	free(p);
}

/* The profile whose fan-out is ud. */
static struct profile *of_fan(void *ud)
{
	return (struct profile *)((char *)ud - offsetof(struct profile, fan));
}

/* A decode sink (profile_only, profile_narrow). An event:
** allocations outside the zone are dropped, and allocations and frees
** outside the window. */
static int only_event(void *ud, const struct decode_event *ev)
{
	struct profile *p = of_fan(ud);
	if (p->only_z &&
	    (ev->op == FORMAT_OP_ALLOC || ev->op == FORMAT_OP_REALLOC) &&
	    !zones_open_now(&p->zones, ev->vm, p->only_str))
		return 0;
	if (p->narrow && !narrow_event(p, ev))
		return 0;
	return p->fan_sink.event(ud, ev);
}

/* A decode sink (profile_only, profile_narrow). A sample:
** dropped outside the zone, or when the window or filters leave it out. */
static int only_sample(void *ud, const struct decode_sample *s)
{
	struct profile *p = of_fan(ud);
	if (p->only_z && !zones_in(p->only_z, s->vm, s->ts, p->only_name))
		return 0;
	if (p->narrow && !narrow_sample(p, s))
		return 0;
	return p->fan_sink.sample(ud, s);
}

/* Keep only what happened in a zone (see profile.h). */
int profile_only(struct profile *p, const struct profile *first, uint32_t name)
{
	free(p->only_str);
	p->only_z = &first->zones;
	p->only_name = name;
	p->only_str = strdup(zones_str(&first->zones, name));
	return p->only_str ? 0 : -ENOMEM;
}

/* Fill sink so that a decoder feeds p. */
void profile_sink(struct profile *p, struct decode_sink *sink)
{
	fanout_sink(&p->fan, sink);
	if (!p->only_z && !p->narrow)
		return;
	p->fan_sink = *sink;
	sink->event = only_event;
	sink->sample = only_sample;
}

/* Choose the time base and the duration. */
static void timebase(struct profile *p, int warn)
{
	uint64_t first = UINT64_MAX, last = 0, f, l;
	for (size_t i = 0; i < p->nvm; i++)
		if (calls_vm_span(&p->calls, p->vms[i].id, &f, &l)) {
			if (f < first)
				first = f;
			if (l > last)
				last = l;
		}
	p->ts_first = first == UINT64_MAX ? 0 : first;
	double per_counter = 1.0;
	if (p->nclk >= 2 && p->clk_last.counter > p->clk_first.counter &&
	    p->clk_last.mono_ns > p->clk_first.mono_ns) {
		per_counter =
		    (double)(p->clk_last.mono_ns - p->clk_first.mono_ns) /
		    (double)(p->clk_last.counter - p->clk_first.counter);
		p->timebase = PROFILE_TB_CLOCKS;
	} else if (p->counter_hz) {
		per_counter = 1e9 / (double)p->counter_hz;
		p->timebase = PROFILE_TB_HZ;
	} else if (p->counter_kind == FORMAT_COUNTER_MONO_NS) {
		p->timebase = PROFILE_TB_NS;
	} else {
		p->timebase = PROFILE_TB_ASSUMED;
		if (warn) /* once, at the end */
			add_warn(p, "no CLOCK pairs and no counter_hz to "
				    "convert time: assuming 1 tick = 1 ns");
	}
	p->ns_per_tick = per_counter * (double)(1ull << p->ts_shift);
	if (p->timebase == PROFILE_TB_CLOCKS)
		p->duration_ns = p->clk_last.mono_ns - p->clk_first.mono_ns;
	else if (last >= first && first != UINT64_MAX)
		p->duration_ns = profile_ns(p, last - first);
}

/* Join each function's and each VM's counts into their rows. */
static int join(struct profile *p)
{
	size_t n = p->fnid.n;
	struct profile_fn *fns = calloc(n ? n : 1, sizeof *fns);
	if (!fns)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const struct fnid_fn *id = &p->fnid.fns[i];
		const struct calls_fn *c = calls_fn_get(&p->calls, i);
		const struct heap_fn *h = heap_fn_get(&p->heap, i);
		const struct samples_fn *s = samples_fn_get(&p->smp, i);
		struct profile_fn *f = &fns[i];
		f->name = id->name;
		f->file = id->file;
		f->line = id->line;
		f->kind = id->kind;
		f->calls = c->calls;
		f->total = c->total;
		f->self = c->self;
		f->alloc_count = h->alloc_count;
		f->alloc_bytes = h->alloc_bytes;
		f->free_count = h->free_count;
		f->free_bytes = h->free_bytes;
		f->samples = s->samples;
		f->samples_total = s->samples_total;
		f->samples_lua = s->samples_lua;
		f->via = s->via;
		f->via_samples = s->via_samples;
		f->samples_self =
		    p->flags & PROFILE_BUILTINS ? s->samples : s->samples_lua;
	}
	free(p->fns);
	p->fns = fns;
	p->nfn = n;
	for (size_t i = 0; i < p->nvm; i++) {
		struct profile_vm *v = &p->vms[i];
		const struct heap_vm *h = heap_vm_get(&p->heap, v->id);
		v->samples = samples_vm_count(&p->smp, v->id);
		v->intervals = samples_vm_intervals(&p->smp, v->id);
		if (!h)
			continue;
		v->heap_attach = h->heap_attach;
		v->heap_detach = h->heap_detach;
		v->has_detach = h->has_detach;
		v->alloc_count = h->alloc_count;
		v->alloc_bytes = h->alloc_bytes;
		v->free_count = h->free_count;
		v->free_bytes = h->free_bytes;
		v->live = h->live;
		v->peak = h->peak;
		v->gc_peak = h->gc_peak;
	}
	return 0;
}

/* End of input: close what is open, choose the time base. */
int profile_finish(struct profile *p)
{
	int rc = 0;
	calls_finish(&p->calls);
	heap_finish(&p->heap);
	timebase(p, 1);
	if (zones_finish(&p->zones) < 0) {
		add_warn(p, "out of memory counting the samples in zones");
		rc = -ENOMEM;
	}
	if (samples_finish(&p->smp) < 0) {
		add_warn(p, "out of memory counting the samples");
		rc = -ENOMEM;
	}
	if (p->nwarn_dropped)
		add_warn(p, "%zu more warnings not shown", p->nwarn_dropped);
	if (join(p) < 0 || narrow_finish(p) < 0)
		rc = -ENOMEM;
	return rc;
}

/* The time base of what was decoded so far. */
void profile_timebase_now(struct profile *p)
{
	timebase(p, 0);
}

/* ts units to ns. */
uint64_t profile_ns(const struct profile *p, uint64_t ticks)
{
	double ns = (double)ticks * p->ns_per_tick + 0.5;
	return ns >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)ns;
}

/* Sort order of functions: self desc, samples desc, alloc
** bytes desc, name. */
static int cmp_fn(uint32_t a, uint32_t b, const void *ctx)
{
	const struct profile *p = ctx;
	const struct profile_fn *x = &p->fns[a], *y = &p->fns[b];
	int c;
	if ((c = sort_desc_u64(x->self, y->self)) ||
	    (c = sort_desc_u64(x->samples_self, y->samples_self)) ||
	    (c = sort_desc_u64(x->samples_total, y->samples_total)) ||
	    (c = sort_desc_u64(x->alloc_bytes, y->alloc_bytes)))
		return c;
	return strcmp(x->name, y->name);
}

/* Function indices sorted for reports; caller frees. */
uint32_t *profile_sorted_fns(const struct profile *p)
{
	return sort_index(p->nfn, cmp_fn, p);
}

/* Whether function i has samples. */
static int has_samples(uint32_t i, const void *ctx)
{
	const struct profile *p = ctx;
	return p->fns[i].samples_total || p->fns[i].samples_self;
}

/* Sort order of functions by samples: self (samples_self) desc, total
** desc, name. */
static int cmp_fn_samples(uint32_t a, uint32_t b, const void *ctx)
{
	const struct profile *p = ctx;
	const struct profile_fn *x = &p->fns[a], *y = &p->fns[b];
	int c;
	if ((c = sort_desc_u64(x->samples_self, y->samples_self)) ||
	    (c = sort_desc_u64(x->samples_total, y->samples_total)))
		return c;
	return strcmp(x->name, y->name);
}

/* Functions with samples, sorted by samples; *n their number; caller
** frees. */
uint32_t *profile_sorted_fns_samples(const struct profile *p, size_t *n)
{
	return sort_index_where(p->nfn, has_samples, cmp_fn_samples, p, n);
}

/* -- One-call driver ---------------------------------------------------------- */

/* Open, decode and finish a profile of path. */
int profile_load(const char *path, unsigned flags, struct profile **out,
		 char *err, size_t errlen)
{
	struct profile *p;
	int rc;
	*out = NULL;
	if ((rc = profile_new(&p, flags)) < 0) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	rc = profile_decode(p, path, err, errlen);
	if (p->opened) {
		*out = p;
		return rc;
	}
	profile_free(p);
	return rc;
}

/* Decode path into the new profile p and finish it. */
int profile_decode(struct profile *p, const char *path, char *err,
		   size_t errlen)
{
	return profile_decode_logs(p, &path, 1, NULL, err, errlen);
}
