/*
** ljlog reader exports: speedscope's file format
** (https://www.speedscope.app/file-format-schema.json).
**
** Two sampled profiles of the call tree: a sample per call path (the call
** tree's nodes), weighing its self time, then its calls; the evented
** profiles per coroutine (the frames calls_obs opens and closes) when they
** fit in a share of the budget (export_budget), else none, with a note;
** one sampled profile per VM (Lua-first stacks, or merged ones with
** export_opts.host, each sample weighing the timer intervals it stands
** for; speedscope's samples carry no labels, so the trace a sample ran is
** left out), one sampled profile in bytes
** of the allocation sites, and per VM with zones or marks one evented
** profile "zones (VM n)": each zone (ljlog.zone) a frame opened and closed
** at its times (one still open at the end closes at the VM's last event),
** each mark a zero-length frame "mark: TEXT" (speedscope has no instant
** events). The frames are shared, each with its file and
** line. A profile's events are written together, so the pass spills them
** to a temporary file in chunks, per profile: memory stays in proportion
** to the profiles, not to the log. This file makes the pass, the profiles
** per coroutine and VM and the file; speedscope_prof.c the profiles of the
** call tree, the sites and the zones, and the shared frames.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "config.h"
#include "export/export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blocks/format.h"
#include "export/speedscope_int.h"

/* -- Collecting --------------------------------------------------------------- */

/* The map key of a profile. */
static uint64_t track_key(uint32_t vm, uint32_t co, int sampled)
{
	return (((uint64_t)vm << 33) | ((uint64_t)co << 1) |
		(unsigned)sampled) +
	       1;
}

/* The profile (vm, co, sampled), made when new; NULL when out
** of memory. */
static struct track *track_get(struct ss *s, uint32_t vm, uint32_t co,
			       int sampled)
{
	struct track *t = s->last;
	if (t && t->vm == vm && t->co == co && t->sampled == sampled)
		return t;
	int added;
	uint64_t *slot =
	    hmap_ref(&s->trackmap, track_key(vm, co, sampled), &added);
	if (!slot)
		return NULL;
	if (!added)
		return s->last = s->tracks[*slot - 1];
	struct track **nt = realloc(s->tracks, (s->ntrack + 1) * sizeof *nt);
	t = NULL;
	if (!nt || !(t = calloc(1, sizeof *t)) ||
	    !(t->buf = malloc(CHUNK * sizeof *t->buf))) {
		if (nt)
			s->tracks = nt;
		free(t);
		hmap_del(&s->trackmap, track_key(vm, co, sampled));
		return NULL;
	}
	s->tracks = nt;
	t->vm = vm;
	t->co = co;
	t->sampled = sampled;
	s->tracks[s->ntrack++] = t;
	*slot = s->ntrack;
	return s->last = t;
}

/* Append a record to t, spilling its full chunk first. */
static void track_add(struct ss *s, struct track *t, uint64_t ts, uint32_t a,
		      uint32_t b)
{
	if (t->n == CHUNK) {
		if (!s->spill && !(s->spill = tmpfile())) {
			s->err = -errno;
			return;
		}
		if (t->nchunk == t->chunkcap) {
			size_t cap = t->chunkcap ? t->chunkcap * 2 : 8;
			uint64_t *c = realloc(t->chunks, cap * sizeof *c);
			if (!c) {
				s->err = -ENOMEM;
				return;
			}
			t->chunks = c;
			t->chunkcap = cap;
		}
		if (fseeko(s->spill, 0, SEEK_END) < 0) {
			s->err = -errno;
			return;
		}
		t->chunks[t->nchunk++] = (uint64_t)ftello(s->spill);
		if (fwrite(t->buf, sizeof *t->buf, CHUNK, s->spill) != CHUNK) {
			s->err = -EIO;
			return;
		}
		t->n = 0;
	}
	t->buf[t->n].t = ts;
	t->buf[t->n].a = a;
	t->buf[t->n].b = b;
	t->n++;
	t->count++;
}

/* 1 when the evented profiles are left out: their events
** would take more than half the budget. */
static int evented_full(struct ss *s)
{
	if (s->no_evented)
		return 1;
	if (++s->nev * EV_BYTES <= export_budget(&s->x) / 2)
		return 0;
	s->no_evented = 1;
	return 1;
}

/* calls_obs: a frame opens on a coroutine's track. */
static void on_open(void *ud, uint32_t vm, uint32_t co, uint32_t fn, uint64_t t,
		    int resumed)
{
	struct ss *s = ud;
	struct track *tr;
	(void)resumed;
	if (s->err || evented_full(s))
		return;
	if (!(tr = track_get(s, vm, co, 0)))
		s->err = -ENOMEM;
	else
		track_add(s, tr, t, fn, 0);
}

/* calls_obs: a frame closes. */
static void on_close(void *ud, uint32_t vm, uint32_t co, uint32_t fn,
		     uint64_t t, int suspended)
{
	struct ss *s = ud;
	struct track *tr;
	(void)suspended;
	if (s->err || evented_full(s))
		return;
	if (!(tr = track_get(s, vm, co, 0)))
		s->err = -ENOMEM;
	else
		track_add(s, tr, t, fn, 1);
}

/* A sample: its node in the sample tree (the samples
** processor saw it first). */
static int on_sample(void *ud, const struct decode_sample *sm)
{
	struct ss *s = ud;
	struct track *tr;
	if (s->err)
		return s->err;
	if (!(tr = track_get(s, sm->vm, 0, 1)))
		return s->err = -ENOMEM;
	track_add(
	    s, tr, sm->ts, samples_last_node(&s->x.p->smp),
	    (uint32_t)(sm->missed > UINT32_MAX ? UINT32_MAX : sm->missed));
	return s->err;
}

/* -- Reading back ------------------------------------------------------------- */

/* Call fn on each record of t in order; stops at a non-zero
** return or a read error. */
static int track_each(struct ss *s, struct track *t,
		      int (*fn)(struct ss *s, const struct rec *r, void *ud),
		      void *ud)
{
	struct rec *chunk = NULL;
	int rc = 0;
	if (t->nchunk && !(chunk = malloc(CHUNK * sizeof *chunk)))
		return -ENOMEM;
	for (size_t c = 0; c < t->nchunk && !rc; c++) {
		if (fseeko(s->spill, (off_t)t->chunks[c], SEEK_SET) < 0 ||
		    fread(chunk, sizeof *chunk, CHUNK, s->spill) != CHUNK) {
			rc = -EIO;
			break;
		}
		for (uint32_t i = 0; i < CHUNK && !rc; i++)
			rc = fn(s, &chunk[i], ud);
	}
	for (uint32_t i = 0; i < t->n && !rc; i++)
		rc = fn(s, &t->buf[i], ud);
	free(chunk);
	return rc;
}

/* Index of the shared frame (kind, a, line); -ENOMEM. */
int64_t speedscope_frame(struct ss *s, unsigned kind, uint32_t a, uint64_t line)
{
	uint8_t key[16];
	uint32_t k = kind;
	memcpy(key, &k, 4);
	memcpy(key + 4, &a, 4);
	memcpy(key + 8, &line, 8);
	int64_t i = intern_put(&s->frames, key, sizeof key);
	return i < 0 ? -ENOMEM : i;
}

/* State of writing one profile's events. */
struct ev_state {
	struct json *j;
	uint32_t depth;
	double last;
};

/* One evented record as an O or C event. */
static int write_ev(struct ss *s, const struct rec *r, void *ud)
{
	struct ev_state *e = ud;
	int64_t f = speedscope_frame(s, FR_FN, r->a, 0);
	if (f < 0)
		return (int)f;
	if (r->b && !e->depth)
		return 0; /* calls_obs nests: cannot happen */
	e->depth += r->b ? -1u : 1u;
	e->last = export_ns(&s->x, r->t);
	json_obj(e->j, NULL);
	json_cstr(e->j, "type", r->b ? "C" : "O");
	json_u64(e->j, "frame", (uint64_t)f);
	json_num(e->j, "at", e->last);
	json_close(e->j, '}');
	return 0;
}

/* First record's time of t. */
static int first_ts(struct ss *s, const struct rec *r, void *ud)
{
	(void)s;
	*(uint64_t *)ud = r->t;
	return 1;
}

/* Write an evented profile. */
static int write_evented(struct ss *s, struct json *j, struct track *t)
{
	char name[160], vm[64];
	uint64_t t0 = 0;
	int rc = track_each(s, t, first_ts, &t0);
	if (rc < 0)
		return rc;
	profile_vm_label(s->x.p, t->vm, vm, sizeof vm);
	if (t->co == 0)
		snprintf(name, sizeof name, "%s %s", vm,
			 calls_vm_co0_main(&s->x.p->calls, t->vm)
			     ? "main coroutine"
			     : "coroutine running at start");
	else
		snprintf(name, sizeof name, "%s coroutine %u", vm, t->co);
	json_obj(j, NULL);
	json_cstr(j, "type", "evented");
	json_cstr(j, "name", name);
	json_cstr(j, "unit", "nanoseconds");
	json_num(j, "startValue", export_ns(&s->x, t0));
	json_arr(j, "events");
	struct ev_state e = {j, 0, export_ns(&s->x, t0)};
	if ((rc = track_each(s, t, write_ev, &e)) < 0)
		return rc;
	json_close(j, ']');
	json_num(j, "endValue", e.last);
	json_close(j, '}');
	return 0;
}

/* State of writing one sampled profile. */
struct smp_state {
	struct json *j;
	int weights; /* this pass writes the weights */
	uint64_t prev, n;
	double first_w, total;
	double iv; /* the sampling interval (ns), 0 unknown */
};

/* A sample's weight: the timer intervals it stands for times
** the interval (its thread's CPU time, or wall-clock time with wall);
** without a known interval, the time since the one before (the first
** weighs what the second does). */
static double smp_weight(struct ss *s, struct smp_state *m, const struct rec *r)
{
	if (m->iv > 0)
		return (1.0 + r->b) * m->iv;
	double w = m->n ? export_ns(&s->x, r->t) - export_ns(&s->x, m->prev)
			: m->first_w;
	m->prev = r->t;
	m->n++;
	return w < 0 ? 0 : w;
}

/* One sample: its stack or its weight. */
static int write_smp(struct ss *s, const struct rec *r, void *ud)
{
	struct smp_state *m = ud;
	if (m->weights) {
		double w = smp_weight(s, m, r);
		json_num(m->j, NULL, w);
		m->total += w;
		return 0;
	}
	size_t n =
	    samples_stack(&s->x.p->smp, r->a,
			  s->x.opts && s->x.opts->host ? SAMPLES_VIEW_MERGED
						       : SAMPLES_VIEW_LUA_FIRST,
			  0, s->st);
	json_arr(m->j, NULL);
	for (size_t i = 0; i < n; i++) {
		const struct samples_frame *f = &s->st[i];
		int64_t fi;
		switch (f->kind) {
		case SAMPLES_FR_FN:
			fi = speedscope_frame(s, FR_FN, f->fn, 0);
			break;
		case SAMPLES_FR_TRACE:
			fi = speedscope_frame(s, FR_TRACE, f->idx, 0);
			break;
		case SAMPLES_FR_VM:
			fi = speedscope_frame(s, FR_VM, f->idx, 0);
			break;
		default: fi = speedscope_frame(s, FR_STATE, f->idx, 0); break;
		}
		if (fi < 0)
			return (int)fi;
		json_u64(m->j, NULL, (uint64_t)fi);
	}
	json_close(m->j, ']');
	return 0;
}

/* The first two sample times of t, for the first weight. */
static int two_ts(struct ss *s, const struct rec *r, void *ud)
{
	uint64_t *v = ud;
	(void)s;
	v[v[2]++] = r->t;
	return v[2] == 2;
}

/* Write a sampled profile of a VM's timer samples. */
static int write_sampled(struct ss *s, struct json *j, struct track *t)
{
	char name[128];
	uint64_t two[3] = {0, 0, 0};
	int rc = track_each(s, t, two_ts, two);
	if (rc < 0)
		return rc;
	struct smp_state m = {j, 0, 0, 0, 1e6, 0, 0};
	const struct profile *p = s->x.p;
	int wall;
	if (s->x.opts && s->x.opts->sample_interval && p->have_intro)
		m.iv = (double)s->x.opts->sample_interval(p->options, &wall);
	if (two[2] == 2)
		m.first_w = export_ns(&s->x, two[1]) - export_ns(&s->x, two[0]);
	char vm[64];
	snprintf(name, sizeof name, "%s samples",
		 profile_vm_label(p, t->vm, vm, sizeof vm));
	json_obj(j, NULL);
	json_cstr(j, "type", "sampled");
	json_cstr(j, "name", name);
	json_cstr(j, "unit", "nanoseconds");
	json_u64(j, "startValue", 0);
	json_arr(j, "samples");
	if ((rc = track_each(s, t, write_smp, &m)) < 0)
		return rc;
	json_close(j, ']');
	json_arr(j, "weights");
	m.weights = 1;
	if ((rc = track_each(s, t, write_smp, &m)) < 0)
		return rc;
	json_close(j, ']');
	json_num(j, "endValue", m.total);
	json_close(j, '}');
	return 0;
}

/* Profiles in order: by VM, evented (track 0 first, then by
** coroutine ID), then sampled. */
static int track_cmp(const void *pa, const void *pb)
{
	const struct track *a = *(struct track *const *)pa;
	const struct track *b = *(struct track *const *)pb;
	if (a->vm != b->vm)
		return a->vm < b->vm ? -1 : 1;
	if (a->sampled != b->sampled)
		return a->sampled - b->sampled;
	return a->co < b->co ? -1 : a->co > b->co;
}

/* Write the file. */
static int write_all(struct ss *s, FILE *out)
{
	struct json j;
	char name[512];
	const struct profile *p = s->x.p;
	int rc = 0;
	if (s->ntrack)
		qsort(s->tracks, s->ntrack, sizeof *s->tracks, track_cmp);
	json_init(&j, out, 0);
	json_obj(&j, NULL);
	json_cstr(&j, "$schema",
		  "https://www.speedscope.app/file-format-schema.json");
	json_cstr(&j, "exporter", "ljlog " PACKAGE_VERSION);
	snprintf(name, sizeof name, "%s (pid %llu)",
		 p->exe && p->exe[0] ? p->exe : "ljlog log",
		 (unsigned long long)p->pid);
	json_cstr(&j, "name", name);
	json_u64(&j, "activeProfileIndex", 0);
	json_arr(&j, "profiles");
	if (speedscope_has_calltree(&p->calls) &&
	    ((rc = speedscope_calltree(s, &j, 0)) < 0 ||
	     (rc = speedscope_calltree(s, &j, 1)) < 0))
		return rc;
	int show = s->x.opts && s->x.opts->progress;
	for (size_t i = 0; i < s->ntrack && !rc; i++) {
		if (show) {
			fprintf(stderr,
				"\rljlog export: writing profile %zu of %zu",
				i + 1, s->ntrack);
			fflush(stderr);
		}
		if (s->tracks[i]->sampled)
			rc = write_sampled(s, &j, s->tracks[i]);
		else if (!s->no_evented)
			rc = write_evented(s, &j, s->tracks[i]);
	}
	if (show)
		fputs("\r\033[K", stderr);
	if (!rc)
		rc = speedscope_zones(s, &j);
	if (!rc && p->heap.nsite)
		rc = speedscope_alloc(s, &j);
	if (rc)
		return rc;
	json_close(&j, ']');
	json_obj(&j, "shared");
	speedscope_frames(s, &j);
	json_close(&j, '}');
	json_close(&j, '}');
	return 0;
}

/* Say what was left out to stay within the budget. */
static void note(struct ss *s, const struct export_opts *o)
{
	int n = 0;
	o->note[0] = 0;
	if (s->no_evented)
		n = snprintf(
		    o->note, o->notelen,
		    "the calls are too many for evented profiles "
		    "(over %llu KB of events): they are in the profiles "
		    "\"call time\" and \"calls\" (by call path) only",
		    (unsigned long long)(export_budget(&s->x) / 2 >> 10));
	if (s->cut_depth && n >= 0 && (size_t)n < o->notelen)
		snprintf(o->note + n, o->notelen - (size_t)n,
			 "%scall paths deeper than %u calls end in a frame "
			 "\"(calls deeper than %u)\"",
			 n ? "; " : "", s->cut_depth, s->cut_depth);
}

/* Whether the heap processor saw allocated bytes. */
static int has_alloc(const struct heap *h)
{
	for (size_t i = 0; i < h->nsite; i++)
		if (h->sites[i].alloc_bytes)
			return 1;
	return 0;
}

/* Write path's log as a speedscope file. */
int export_speedscope(const char *path, FILE *out, const struct export_opts *o,
		      char *err, size_t errlen)
{
	struct ss s;
	memset(&s, 0, sizeof s);
	s.x.sink.ud = &s;
	s.x.sink.sample = on_sample;
	s.x.obs.ud = &s;
	s.x.obs.open = on_open;
	s.x.obs.close = on_close;
	s.x.flags = PROFILE_CALLTREE;
	int rc = export_pass_run(&s.x, path, o, err, errlen), wrc = 0;
	if (s.x.p && !s.err && rc != -ENOMEM) {
		if (!s.ntrack && !has_alloc(&s.x.p->heap) &&
		    !speedscope_has_calltree(&s.x.p->calls)) {
			snprintf(err, errlen,
				 "%s has no calls, samples or allocations to "
				 "export (record with calls, sample or alloc)",
				 path);
			wrc = EXPORT_EMPTY;
		} else if (!(s.st = malloc(SAMPLES_STACK_MAX * sizeof *s.st)))
			wrc = -ENOMEM;
		else
			wrc = write_all(&s, out);
		if (!wrc && o && o->note)
			note(&s, o);
	}
	if (s.err && !wrc)
		wrc = s.err;
	if (wrc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (wrc < 0 && wrc != EXPORT_EMPTY)
		snprintf(err, errlen, "writing the export: %s", strerror(-wrc));
	for (size_t i = 0; i < s.ntrack; i++) {
		free(s.tracks[i]->buf);
		free(s.tracks[i]->chunks);
		free(s.tracks[i]);
	}
	free(s.tracks);
	free(s.st);
	hmap_free(&s.trackmap);
	intern_free(&s.frames);
	if (s.spill)
		fclose(s.spill);
	export_pass_free(&s.x);
	return wrc ? wrc : rc;
}
