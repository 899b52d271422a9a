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
** to the profiles, not to the log.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "config.h"
#include "export/export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blocks/format.h"
#include "proc/samples.h"
#include "util/hmap.h"
#include "util/intern.h"

/* Records a profile keeps in memory before spilling them. */
#define CHUNK 1024u

/* One event or sample, as spilled. */
struct rec {
	uint64_t t; /* ts units */
	uint32_t a; /* evented: function index; sampled: sample-tree node */
	uint32_t b; /* evented: 0 open, 1 close; sampled: missed intervals */
};

/* One profile being collected. */
struct track {
	uint32_t vm;
	uint32_t co; /* calls_obs track; sampled: 0 */
	int sampled;
	struct rec *buf; /* up to CHUNK, then spilled */
	uint32_t n;
	uint64_t *chunks; /* offsets of its full chunks in the spill file */
	size_t nchunk, chunkcap;
	uint64_t count; /* records */
};

/* Frame kinds (the key of a shared frame: kind, a, line). */
enum { FR_FN, FR_TRACE, FR_STATE, FR_SITE, FR_ZONE, FR_MARK, FR_VM, FR_DEEP };

/* Bytes an evented O or C event takes at most, about; bytes a weight
** does. */
#define EV_BYTES     48u
#define WEIGHT_BYTES 24u

struct ss {
	struct export_pass x;
	FILE *spill;
	struct track **tracks;
	size_t ntrack;
	struct hmap trackmap;	  /* key(vm, co, sampled) -> index + 1 */
	struct track *last;	  /* the track of the last record */
	struct intern frames;	  /* (kind, a, line) -> frame index */
	int err;		  /* first error (sticky) */
	struct samples_frame *st; /* one sample's frames */
	uint64_t nev;		  /* evented records so far */
	int no_evented;		  /* past the budget: evented left out */
	uint32_t cut_depth;	  /* call paths cut at this depth, 0 none */
};

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
static int64_t frame_of(struct ss *s, unsigned kind, uint32_t a, uint64_t line)
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
	int64_t f = frame_of(s, FR_FN, r->a, 0);
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
		case SAMPLES_FR_FN: fi = frame_of(s, FR_FN, f->fn, 0); break;
		case SAMPLES_FR_TRACE:
			fi = frame_of(s, FR_TRACE, f->idx, 0);
			break;
		case SAMPLES_FR_VM: fi = frame_of(s, FR_VM, f->idx, 0); break;
		default: fi = frame_of(s, FR_STATE, f->idx, 0); break;
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

/* One O or C event of frame kind, a at ts; -ENOMEM. */
static int zone_ev(struct ss *s, struct json *j, unsigned kind, uint32_t a,
		   uint64_t ts, int close)
{
	int64_t f = frame_of(s, kind, a, 0);
	if (f < 0)
		return (int)f;
	json_obj(j, NULL);
	json_cstr(j, "type", close ? "C" : "O");
	json_u64(j, "frame", (uint64_t)f);
	json_num(j, "at", export_ns(&s->x, ts));
	json_close(j, '}');
	return 0;
}

/* The marks of vm from *mi on with ts before t (all when
** every is set), as zero-length frames. */
static int zone_marks(struct ss *s, struct json *j, uint32_t vm, size_t *mi,
		      uint64_t t, int every)
{
	const struct zones *z = &s->x.p->zones;
	for (; *mi < z->nmark; ++*mi) {
		const struct zones_mark *m = &z->marks[*mi];
		if (m->vm != vm)
			continue;
		if (!every && m->ts >= t)
			break;
		int rc = zone_ev(s, j, FR_MARK, m->text, m->ts, 0);
		if (rc || (rc = zone_ev(s, j, FR_MARK, m->text, m->ts, 1)))
			return rc;
	}
	return 0;
}

/* The evented profile of vm's zones and marks: the spans in
** the order they were pushed, each closed before the next one that is
** not nested in it opens; marks merged by time. */
static int write_zones_vm(struct ss *s, struct json *j, uint32_t vm)
{
	const struct zones *z = &s->x.p->zones;
	char name[128], vml[64];
	uint64_t t0 = UINT64_MAX, t1 = 0;
	size_t mi = 0, depth = 0, cap = 0;
	uint32_t *stack = NULL;
	int rc = 0;
	for (size_t i = 0; i < z->nspan; i++)
		if (z->spans[i].vm == vm) {
			t0 = z->spans[i].t0 < t0 ? z->spans[i].t0 : t0;
			t1 = z->spans[i].t1 > t1 ? z->spans[i].t1 : t1;
		}
	for (size_t i = 0; i < z->nmark; i++)
		if (z->marks[i].vm == vm) {
			t0 = z->marks[i].ts < t0 ? z->marks[i].ts : t0;
			t1 = z->marks[i].ts > t1 ? z->marks[i].ts : t1;
		}
	snprintf(name, sizeof name, "zones (%s)",
		 profile_vm_label(s->x.p, vm, vml, sizeof vml));
	json_obj(j, NULL);
	json_cstr(j, "type", "evented");
	json_cstr(j, "name", name);
	json_cstr(j, "unit", "nanoseconds");
	json_num(j, "startValue", export_ns(&s->x, t0));
	json_arr(j, "events");
	for (size_t i = 0; i < z->nspan && !rc; i++) {
		const struct zones_span *sp = &z->spans[i];
		if (sp->vm != vm)
			continue;
		/* Close what sp is not nested in. */
		while (depth && stack[depth - 1] != sp->parent && !rc) {
			const struct zones_span *o = &z->spans[stack[--depth]];
			if (!(rc = zone_marks(s, j, vm, &mi, o->t1, 0)))
				rc = zone_ev(s, j, FR_ZONE, o->name, o->t1, 1);
		}
		if (rc || (rc = zone_marks(s, j, vm, &mi, sp->t0, 0)))
			break;
		if (depth == cap) {
			cap = cap ? cap * 2 : 16;
			uint32_t *ns = realloc(stack, cap * sizeof *ns);
			if (!ns) {
				rc = -ENOMEM;
				break;
			}
			stack = ns;
		}
		stack[depth++] = (uint32_t)i;
		rc = zone_ev(s, j, FR_ZONE, sp->name, sp->t0, 0);
	}
	while (depth && !rc) {
		const struct zones_span *o = &z->spans[stack[--depth]];
		if (!(rc = zone_marks(s, j, vm, &mi, o->t1, 0)))
			rc = zone_ev(s, j, FR_ZONE, o->name, o->t1, 1);
	}
	if (!rc)
		rc = zone_marks(s, j, vm, &mi, 0, 1);
	free(stack);
	if (rc)
		return rc;
	json_close(j, ']');
	json_num(j, "endValue", export_ns(&s->x, t1));
	json_close(j, '}');
	return 0;
}

/* A "zones (VM n)" profile per VM with zones or marks, in
** order of VM ID. */
static int write_zones(struct ss *s, struct json *j)
{
	const struct zones *z = &s->x.p->zones;
	uint64_t prev = 0; /* VM ID + 1 written last */
	for (;;) {
		uint64_t next = UINT64_MAX; /* the smallest VM ID + 1 > prev */
		for (size_t i = 0; i < z->nspan; i++)
			if (z->spans[i].vm + 1ull > prev &&
			    z->spans[i].vm + 1ull < next)
				next = z->spans[i].vm + 1ull;
		for (size_t i = 0; i < z->nmark; i++)
			if (z->marks[i].vm + 1ull > prev &&
			    z->marks[i].vm + 1ull < next)
				next = z->marks[i].vm + 1ull;
		if (next == UINT64_MAX)
			return 0;
		int rc = write_zones_vm(s, j, (uint32_t)(next - 1));
		if (rc)
			return rc;
		prev = next;
	}
}

/* Write the allocation sites as a sampled profile in bytes:
** one sample per site, its function then its line. */
static int write_alloc(struct ss *s, struct json *j)
{
	const struct heap *h = &s->x.p->heap;
	uint64_t total = 0;
	json_obj(j, NULL);
	json_cstr(j, "type", "sampled");
	json_cstr(j, "name", "allocations (bytes allocated per site)");
	json_cstr(j, "unit", "bytes");
	json_u64(j, "startValue", 0);
	json_arr(j, "samples");
	for (size_t i = 0; i < h->nsite; i++) {
		const struct heap_site *st = &h->sites[i];
		if (!st->alloc_bytes)
			continue;
		int64_t f = frame_of(s, FR_FN, st->fn, 0);
		int64_t l = frame_of(s, FR_SITE, st->fn, st->line);
		if (f < 0 || l < 0)
			return -ENOMEM;
		json_arr(j, NULL);
		json_u64(j, NULL, (uint64_t)f);
		json_u64(j, NULL, (uint64_t)l);
		json_close(j, ']');
	}
	json_close(j, ']');
	json_arr(j, "weights");
	for (size_t i = 0; i < h->nsite; i++)
		if (h->sites[i].alloc_bytes) {
			json_u64(j, NULL, h->sites[i].alloc_bytes);
			total += h->sites[i].alloc_bytes;
		}
	json_close(j, ']');
	json_u64(j, "endValue", total);
	json_close(j, '}');
	return 0;
}

/* The depth to cut the call paths at (0: none) so that the
** stacks of each call-tree profile take at most an eighth of the budget;
** depth
** of each node in d (a node comes after its parent). */
static uint32_t cut_depth(struct ss *s, const uint32_t *d, uint32_t maxd)
{
	const struct calls *c = &s->x.p->calls;
	uint64_t *h = calloc((size_t)maxd + 1, sizeof *h), n = 0;
	uint64_t max = export_budget(&s->x) / 8, eb = 1;
	if (!h)
		return 0;
	/* An entry: a frame index (under the frames there can be) and ','. */
	for (uint64_t v = s->x.p->fnid.n + intern_count(&s->frames) + 1; v;
	     v /= 10)
		eb++;
	for (uint32_t i = 1; i < c->nnode; i++)
		if (c->nodes[i].self || c->nodes[i].calls) {
			h[d[i]]++;
			n++;
		}
	uint32_t cut = 0;
	for (uint32_t k = maxd; k >= 1; k--) {
		uint64_t bytes = n * WEIGHT_BYTES;
		for (uint32_t i = 1; i <= maxd; i++)
			bytes += h[i] * eb * (i < k + 1 ? i : k + 1);
		if (bytes <= max) {
			cut = k == maxd ? 0 : k;
			break;
		}
		cut = k;
	}
	free(h);
	return cut;
}

/* Write the call tree as a sampled profile: a sample per call
** path, weighing its self time in nanoseconds (calls: its innermost
** function's calls by that path, unit "none"). Paths deeper than the cut
** (cut_depth) end at the cut in a frame "(calls deeper than N)" that
** weighs their self time (calls). */
static int write_calltree(struct ss *s, struct json *j, int calls)
{
	const struct calls *c = &s->x.p->calls;
	uint32_t *d = malloc(c->nnode * sizeof *d), maxd = 0;
	uint64_t *deep = NULL;
	uint32_t *path = NULL;
	double total = 0;
	int rc = -ENOMEM;
	if (!d)
		return rc;
	d[0] = 0;
	for (uint32_t n = 1; n < c->nnode; n++) {
		d[n] = d[c->nodes[n].parent] + 1;
		maxd = d[n] > maxd ? d[n] : maxd;
	}
	if (!calls)
		s->cut_depth = cut_depth(s, d, maxd);
	if (!(path = malloc(((size_t)maxd + 2) * sizeof *path)))
		goto done;
	if (s->cut_depth) {
		/* The self time of the nodes past the cut, on their ancestor
		** at the cut. */
		if (!(deep = calloc(c->nnode, sizeof *deep)))
			goto done;
		for (uint32_t n = 1; n < c->nnode; n++) {
			uint32_t a = n;
			uint64_t w =
			    calls ? c->nodes[n].calls : c->nodes[n].self;
			if (d[n] <= s->cut_depth || !w)
				continue;
			while (d[a] > s->cut_depth)
				a = c->nodes[a].parent;
			deep[a] += w;
		}
	}
	json_obj(j, NULL);
	json_cstr(j, "type", "sampled");
	json_cstr(j, "name",
		  calls ? "calls (by call path)"
			: "call time (self time by call path)");
	json_cstr(j, "unit", calls ? "none" : "nanoseconds");
	json_u64(j, "startValue", 0);
	json_arr(j, "samples");
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t n = 1; n < c->nnode; n++) {
			uint64_t self =
			    d[n] <= s->cut_depth || !s->cut_depth
				? (calls ? c->nodes[n].calls : c->nodes[n].self)
				: 0;
			uint64_t dp = deep ? deep[n] : 0;
			for (int k = 0; k < 2; k++) {
				uint64_t w = k ? dp : self;
				if (!w)
					continue;
				if (pass) {
					double ns =
					    calls
						? (double)w
						: (double)profile_ns(s->x.p, w);
					json_num(j, NULL, ns);
					total += ns;
					continue;
				}
				size_t m = 0;
				if (k)
					path[m++] = UINT32_MAX;
				for (uint32_t a = n; a; a = c->nodes[a].parent)
					path[m++] = a;
				json_arr(j, NULL);
				while (m--) {
					int64_t f =
					    path[m] == UINT32_MAX
						? frame_of(s, FR_DEEP,
							   s->cut_depth, 0)
						: frame_of(s, FR_FN,
							   c->nodes[path[m]].fn,
							   0);
					if (f < 0)
						goto done;
					json_u64(j, NULL, (uint64_t)f);
				}
				json_close(j, ']');
			}
		}
		json_close(j, ']');
		if (!pass)
			json_arr(j, "weights");
	}
	json_num(j, "endValue", total);
	json_close(j, '}');
	rc = 0;
done:
	free(d);
	free(deep);
	free(path);
	return rc;
}

/* Whether the call tree has self time to show. */
static int has_calltree(const struct calls *c)
{
	for (uint32_t n = 1; n < c->nnode; n++)
		if (c->nodes[n].self || c->nodes[n].calls)
			return 1;
	return 0;
}

/* Write the shared frames. */
static void write_frames(struct ss *s, struct json *j)
{
	const struct fnid *fi = &s->x.p->fnid;
	const struct samples *sm = &s->x.p->smp;
	char name[512];
	json_arr(j, "frames");
	for (size_t i = 0; i < intern_count(&s->frames); i++) {
		const uint8_t *key =
		    (const uint8_t *)intern_str(&s->frames, (uint32_t)i, NULL);
		uint32_t kind, a;
		uint64_t line;
		memcpy(&kind, key, 4);
		memcpy(&a, key + 4, 4);
		memcpy(&line, key + 8, 8);
		json_obj(j, NULL);
		const struct fnid_fn *fn = NULL;
		if (kind == FR_FN || kind == FR_SITE)
			fn = &fi->fns[a];
		if (kind == FR_FN) {
			json_cstr(j, "name", fn->name);
			line = fn->line;
		} else if (kind == FR_SITE) {
			snprintf(name, sizeof name, "%s line %llu", fn->name,
				 (unsigned long long)line);
			json_cstr(j, "name", name);
		} else if (kind == FR_TRACE) {
			const struct samples_trace *tr = &sm->traces[a];
			snprintf(name, sizeof name, "trace %llu",
				 (unsigned long long)tr->traceno);
			json_cstr(j, "name", name);
			fn = &fi->fns[tr->fn];
			line = tr->line;
		} else if (kind == FR_ZONE) {
			json_cstr(j, "name", zones_str(&s->x.p->zones, a));
		} else if (kind == FR_DEEP) {
			snprintf(name, sizeof name, "(calls deeper than %u)",
				 a);
			json_cstr(j, "name", name);
		} else if (kind == FR_MARK) {
			snprintf(name, sizeof name, "mark: %s",
				 zones_str(&s->x.p->zones, a));
			json_cstr(j, "name", name);
		} else if (kind == FR_VM) {
			json_cstr(j, "name", samples_vm_label(a));
		} else {
			snprintf(name, sizeof name, "(%s)",
				 format_state_name(a));
			json_cstr(j, "name", name);
		}
		if (fn && fn->file && fn->file[0])
			json_cstr(j, "file", fn->file);
		if (fn && line)
			json_u64(j, "line", line);
		json_close(j, '}');
	}
	json_close(j, ']');
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
	if (has_calltree(&p->calls) && ((rc = write_calltree(s, &j, 0)) < 0 ||
					(rc = write_calltree(s, &j, 1)) < 0))
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
		rc = write_zones(s, &j);
	if (!rc && p->heap.nsite)
		rc = write_alloc(s, &j);
	if (rc)
		return rc;
	json_close(&j, ']');
	json_obj(&j, "shared");
	write_frames(s, &j);
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
		    !has_calltree(&s.x.p->calls)) {
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
