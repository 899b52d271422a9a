/*
** ljlog reader exports: speedscope's profiles of the whole log: the call
** tree (self time and calls by call path, cut to a depth within the
** budget), the allocation sites, the zones and marks per VM; and the
** frames all profiles share.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blocks/format.h"
#include "export/speedscope_int.h"

/* One O or C event of frame kind, a at ts; -ENOMEM. */
static int zone_ev(struct ss *s, struct json *j, unsigned kind, uint32_t a,
		   uint64_t ts, int close)
{
	int64_t f = speedscope_frame(s, kind, a, 0);
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
int speedscope_zones(struct ss *s, struct json *j)
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
int speedscope_alloc(struct ss *s, struct json *j)
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
		int64_t f = speedscope_frame(s, FR_FN, st->fn, 0);
		int64_t l = speedscope_frame(s, FR_SITE, st->fn, st->line);
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
int speedscope_calltree(struct ss *s, struct json *j, int calls)
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
						? speedscope_frame(s, FR_DEEP,
								   s->cut_depth,
								   0)
						: speedscope_frame(
						      s, FR_FN,
						      c->nodes[path[m]].fn, 0);
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
int speedscope_has_calltree(const struct calls *c)
{
	for (uint32_t n = 1; n < c->nnode; n++)
		if (c->nodes[n].self || c->nodes[n].calls)
			return 1;
	return 0;
}

/* Write the shared frames. */
void speedscope_frames(struct ss *s, struct json *j)
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
