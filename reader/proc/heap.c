/*
** ljlog reader processors: the heap.
** One pass; no allocation per event except when a table grows.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "proc/heap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/sort.h"
#include "util/util.h"

/* Lines of sites are cut to this. */
#define LINE_MAX_KEY ((1ull << 40) - 1)

/* Start h. */
void heap_init(struct heap *h, struct fnid *fnid)
{
	memset(h, 0, sizeof *h);
	h->fnid = fnid;
}

/* Free everything. */
void heap_free(struct heap *h)
{
	for (size_t i = 0; i < h->nvm; i++) {
		hmap_free(&h->vms[i]->blocks);
		free(h->vms[i]);
	}
	free(h->vms);
	for (size_t i = 0; i < h->niv; i++)
		free(h->ivs[i].sites);
	free(h->ivs);
	free(h->fns);
	free(h->sites);
	intern_free(&h->sitekeys);
	hmap_free(&h->vmmap);
	memset(h, 0, sizeof *h);
}

/* The allocations of function fn. */
const struct heap_fn *heap_fn_get(const struct heap *h, uint32_t fn)
{
	static const struct heap_fn zero;
	return fn < h->nfn ? &h->fns[fn] : &zero;
}

/* See heap.h. */
void heap_site_text(const struct heap *h, uint32_t s, char *buf, size_t len)
{
	const struct heap_site *st = &h->sites[s];
	const struct fnid_fn *f = &h->fnid->fns[st->fn];
	if (f->kind == FNID_LUA && st->line)
		snprintf(buf, len, "%s line %llu", f->name,
			 (unsigned long long)st->line);
	else if (f->kind == FNID_LUA)
		snprintf(buf, len, "%s line ?", f->name);
	else
		snprintf(buf, len, "%s", f->name);
}

/* VM id, or NULL. */
const struct heap_vm *heap_vm_get(const struct heap *h, uint32_t id)
{
	const uint64_t *i = hmap_get(&h->vmmap, (uint64_t)id + 1);
	return i ? h->vms[*i - 1] : NULL;
}

/* VM id, created when new; NULL when out of memory. */
static struct heap_vm *vm_get(struct heap *h, uint32_t id)
{
	struct heap_vm *v = (struct heap_vm *)heap_vm_get(h, id);
	if (v)
		return v;
	struct heap_vm **nv = realloc(h->vms, (h->nvm + 1) * sizeof *nv);
	if (!nv)
		return NULL;
	h->vms = nv;
	if (!(v = calloc(1, sizeof *v)) ||
	    hmap_put(&h->vmmap, (uint64_t)id + 1, h->nvm + 1) < 0) {
		free(v);
		return NULL;
	}
	v->id = id;
	v->gc_phase = -1;
	h->vms[h->nvm++] = v;
	return v;
}

/* The allocations of fn, the table grown to cover it; NULL
** when out of memory. */
static struct heap_fn *fn_row(struct heap *h, uint32_t fn)
{
	if (UTIL_UNLIKELY(fn >= h->nfn)) {
		size_t n = h->nfn ? h->nfn : 256;
		while (n <= fn)
			n *= 2;
		struct heap_fn *f = realloc(h->fns, n * sizeof *f);
		if (!f)
			return NULL;
		memset(f + h->nfn, 0, (n - h->nfn) * sizeof *f);
		h->fns = f;
		h->nfn = n;
	}
	return &h->fns[fn];
}

/* Site index for (fn, line); -1 when out of memory. */
static int64_t site_get(struct heap *h, uint32_t fn, uint64_t line)
{
	if (line > LINE_MAX_KEY)
		line = LINE_MAX_KEY;
	if (UTIL_LIKELY(h->last_site && fn == h->last_fn &&
			line == h->last_line))
		return h->last_site - 1;
	uint8_t key[12];
	memcpy(key, &fn, 4);
	memcpy(key + 4, &line, 8);
	int64_t s = intern_find(&h->sitekeys, key, sizeof key);
	if (s < 0) {
		if (h->nsite == h->sitecap) {
			size_t cap = h->sitecap ? h->sitecap * 2 : 256;
			struct heap_site *ns =
			    realloc(h->sites, cap * sizeof *ns);
			if (!ns)
				return -1;
			h->sites = ns;
			h->sitecap = cap;
		}
		s = (int64_t)h->nsite;
		if (intern_put(&h->sitekeys, key, sizeof key) != s)
			return -1;
		memset(&h->sites[s], 0, sizeof h->sites[s]);
		h->sites[s].fn = fn;
		h->sites[s].line = line;
		h->nsite++;
	}
	h->last_fn = fn;
	h->last_line = line;
	h->last_site = (uint32_t)s + 1;
	return s;
}

/* An allocation of size at addr by the event's site. */
static int alloc_at(struct heap *h, struct heap_vm *v,
		    const struct decode_event *ev, uint64_t addr, uint64_t size)
{
	const struct decode_obj *o = ev->obj;
	struct fnid *fi = h->fnid;
	int64_t fn, s;
	switch (ev->lo) {
	case FORMAT_SITE_LUA:
	case FORMAT_SITE_C:
		fn = o ? (int64_t)fnid_of(o) : fnid_pseudo(fi, FNID_PS_UNKNOWN);
		break;
	case FORMAT_SITE_TRACE: /* PROTO (resolved; version 5), TRACE */
		fn = !o ? fnid_pseudo(fi, FNID_PS_TRACE)
		     : o->kind == FORMAT_REC_TRACE ? fnid_trace(fi, o)
						   : (int64_t)fnid_of(o);
		break;
	case FORMAT_SITE_GC: fn = fnid_pseudo(fi, FNID_PS_GC); break;
	case FORMAT_SITE_JIT: fn = fnid_pseudo(fi, FNID_PS_JIT); break;
	case FORMAT_SITE_INTERNAL:
		fn = fnid_pseudo(fi, FNID_PS_INTERNAL);
		break;
	case FORMAT_SITE_LJLOG: fn = fnid_pseudo(fi, FNID_PS_LJLOG); break;
	default: fn = fnid_pseudo(fi, FNID_PS_UNKNOWN); break;
	}
	if (fn < 0)
		return -ENOMEM;
	uint64_t line = ev->lo == FORMAT_SITE_C ? 0 : ev->line;
	struct heap_fn *f = fn_row(h, (uint32_t)fn);
	if (!f || (s = site_get(h, (uint32_t)fn, o ? line : 0)) < 0)
		return -ENOMEM;
	uint64_t wc = 1, wb = size;
	if (UTIL_UNLIKELY(v->alloc_rate))
		heap_weight(size, v->alloc_rate, &wc, &wb);
	struct heap_site *st = &h->sites[s];
	st->alloc_count += wc;
	st->alloc_bytes += wb;
	st->records++;
	st->live_count += (int64_t)wc;
	st->live_bytes += (int64_t)wb;
	f->alloc_count += wc;
	f->alloc_bytes += wb;
	v->alloc_count += wc;
	v->alloc_bytes += wb;
	v->net += (int64_t)wb;
	if (v->net > v->peak_net)
		v->peak_net = v->net;
	if (addr && hmap_put(&v->blocks, addr, (uint64_t)s + 1) < 0)
		return -ENOMEM;
	return 0;
}

/* A free of size at addr, charged to the site that allocated it. */
static int free_at(struct heap *h, struct heap_vm *v, uint64_t addr,
		   uint64_t size)
{
	const uint64_t *b = addr ? hmap_get(&v->blocks, addr) : NULL;
	int64_t s;
	if (b) {
		s = (int64_t)*b - 1;
		hmap_del(&v->blocks, addr);
	} else {
		int64_t fn = fnid_pseudo(h->fnid, FNID_PS_BEFORE);
		if (fn < 0 || (s = site_get(h, (uint32_t)fn, 0)) < 0)
			return -ENOMEM;
	}
	uint64_t wc = 1, wb = size;
	if (UTIL_UNLIKELY(v->alloc_rate))
		heap_weight(size, v->alloc_rate, &wc, &wb);
	struct heap_site *st = &h->sites[s];
	struct heap_fn *f = fn_row(h, st->fn);
	if (!f)
		return -ENOMEM;
	st->free_count += wc;
	st->free_bytes += wb;
	st->live_count -= (int64_t)wc;
	st->live_bytes -= (int64_t)wb;
	f->free_count += wc;
	f->free_bytes += wb;
	v->free_count += wc;
	v->free_bytes += wb;
	v->net -= (int64_t)wb;
	return 0;
}

/* A GC event: the phase before it ends at t. */
static void gc_event(struct heap *h, struct heap_vm *v,
		     const struct decode_event *ev, uint64_t t)
{
	if (v->gc_phase >= 0)
		h->gc.phase[v->gc_phase] += t - v->gc_since;
	if (v->gc_phase != (int)ev->lo && ev->lo != FORMAT_GC_PAUSE &&
	    (v->gc_phase == FORMAT_GC_PAUSE ||
	     (v->gc_phase > 0 && (int)ev->lo < v->gc_phase)))
		h->gc.cycles++; /* after pause, or wrapped past it */
	v->gc_phase = (int)ev->lo;
	v->gc_since = t;
	h->gc.events++;
	if (ev->heap > h->gc.peak_heap)
		h->gc.peak_heap = ev->heap;
	if (ev->heap > v->gc_peak)
		v->gc_peak = ev->heap;
}

/* Close v's GC phase at t. */
static void gc_close(struct heap *h, struct heap_vm *v, uint64_t t)
{
	if (v->gc_phase >= 0) {
		h->gc.phase[v->gc_phase] += t - v->gc_since;
		v->gc_phase = -1;
	}
}

/* -- Intervals ------------------------------------------------------------------ */

/* Start the intervals. */
void heap_interval(struct heap *h, uint64_t origin, uint64_t ticks)
{
	h->iv_ticks = ticks ? ticks : 1;
	h->iv_next = origin + h->iv_ticks;
}

/* The live heap now, as the interval ending at ts. */
static int iv_take(struct heap *h, uint64_t ts)
{
	if (h->niv >= HEAP_IV_MAX)
		return -E2BIG;
	if (h->niv == h->ivcap) {
		size_t cap = h->ivcap ? h->ivcap * 2 : 64;
		struct heap_iv *n = realloc(h->ivs, cap * sizeof *n);
		if (!n)
			return -ENOMEM;
		h->ivs = n;
		h->ivcap = cap;
	}
	struct heap_iv *iv = &h->ivs[h->niv];
	size_t k = 0;
	memset(iv, 0, sizeof *iv);
	iv->ts = ts;
	for (size_t i = 0; i < h->nvm; i++)
		iv->live_bytes +=
		    (int64_t)h->vms[i]->heap_attach + h->vms[i]->net;
	for (size_t i = 0; i < h->nsite; i++)
		k += h->sites[i].live_bytes != 0;
	if (k && !(iv->sites = malloc(k * sizeof *iv->sites)))
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < h->nsite; i++)
		if (h->sites[i].live_bytes) {
			iv->sites[k].site = (uint32_t)i;
			iv->sites[k++].live_bytes = h->sites[i].live_bytes;
		}
	iv->nsite = k;
	h->niv++;
	return 0;
}

/* An event at ts: end the intervals it has passed. */
static void iv_reach(struct heap *h, uint64_t ts)
{
	while (ts >= h->iv_next && !h->iv_error) {
		h->iv_error = iv_take(h, h->iv_next);
		h->iv_next += h->iv_ticks;
	}
}

/* One event (hot path). */
static int on_event(void *ud, const struct decode_event *ev)
{
	struct heap *h = ud;
	struct heap_vm *v = h->last_vm;
	if (UTIL_UNLIKELY(h->iv_ticks) && ev->ts >= h->iv_next)
		iv_reach(h, ev->ts);
	if (UTIL_UNLIKELY(!v || v->id != ev->vm)) {
		if (!(v = vm_get(h, ev->vm)))
			return -ENOMEM;
		h->last_vm = v;
	}
	v->last_ts = ev->ts;
	v->has_ts = 1;
	switch (ev->op) {
	case FORMAT_OP_ALLOC: return alloc_at(h, v, ev, ev->addr, ev->size);
	case FORMAT_OP_FREE: return free_at(h, v, ev->addr, ev->size);
	case FORMAT_OP_REALLOC:
		if ((ev->old_addr || ev->old_size) &&
		    free_at(h, v, ev->old_addr, ev->old_size) < 0)
			return -ENOMEM;
		return alloc_at(h, v, ev, ev->addr, ev->size);
	case FORMAT_OP_GC: gc_event(h, v, ev, ev->ts); break;
	case FORMAT_OP_VM:
		if (ev->lo == FORMAT_VM_ATTACH) {
			if (!v->has_attach_event) {
				v->heap_attach = ev->heap;
				v->has_attach_event = 1;
			}
		} else if (ev->lo == FORMAT_VM_DETACH) {
			v->heap_detach = ev->heap;
			v->has_detach = 1;
			gc_close(h, v, ev->ts);
		}
		break;
	}
	return 0;
}

/* A MAPPING record: a VM's heap at attach. */
static int on_record(void *ud, struct decode_obj *o)
{
	struct heap *h = ud;
	struct heap_vm *v;
	if (o->kind != FORMAT_REC_VM)
		return 0;
	if (!(v = vm_get(h, o->id)))
		return -ENOMEM;
	if (!v->has_attach_event)
		v->heap_attach = o->u.vm.heap;
	v->alloc_rate = o->u.vm.alloc_rate;
	if (v->alloc_rate > h->sampled)
		h->sampled = v->alloc_rate;
	return 0;
}

/* Fill sink: VM records and events. */
void heap_sink(struct heap *h, struct decode_sink *sink)
{
	memset(sink, 0, sizeof *sink);
	sink->ud = h;
	sink->record = on_record;
	sink->event = on_event;
}

/* End of input. */
void heap_finish(struct heap *h)
{
	uint64_t last = 0;
	for (size_t i = 0; i < h->nvm; i++) {
		struct heap_vm *v = h->vms[i];
		if (v->has_ts)
			gc_close(h, v, v->last_ts);
		if (v->has_ts && v->last_ts > last)
			last = v->last_ts;
		v->live = (int64_t)v->heap_attach + v->net;
		v->peak = (int64_t)v->heap_attach + v->peak_net;
	}
	/* The last interval ends with the log (at its last event). */
	if (h->iv_ticks && !h->iv_error)
		h->iv_error = iv_take(h, last);
}

/* Sampled estimate of one allocation. */
void heap_weight(uint64_t size, uint64_t rate, uint64_t *count, uint64_t *bytes)
{
	*count = 1;
	*bytes = size;
	if (!rate || !size)
		return;
	/* The chance that a block of size bytes is sampled, with an
	** exponential countdown of mean rate, is 1 - exp(-size / rate). */
	double f = 1.0 / -expm1(-(double)size / (double)rate);
	*count = (uint64_t)llround(f);
	*bytes = (uint64_t)llround(f * (double)size);
}

/* Sort order of live sites: live bytes desc, count desc, name,
** line. */
static int cmp_live(uint32_t a, uint32_t b, const void *ctx)
{
	const struct heap *h = ctx;
	const struct heap_site *x = &h->sites[a], *y = &h->sites[b];
	int c;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes > y->live_bytes ? -1 : 1;
	if (x->live_count != y->live_count)
		return x->live_count > y->live_count ? -1 : 1;
	c = strcmp(h->fnid->fns[x->fn].name, h->fnid->fns[y->fn].name);
	return c ? c : sort_asc_u64(x->line, y->line);
}

/* Whether site i has anything live. */
static int keep_live(uint32_t i, const void *ctx)
{
	const struct heap *h = ctx;
	return h->sites[i].live_count || h->sites[i].live_bytes;
}

/* Live sites, sorted by live bytes; caller frees. */
uint32_t *heap_sorted_live(const struct heap *h, size_t *n)
{
	return sort_index_where(h->nsite, keep_live, cmp_live, h, n);
}

/* Sort order of sites: alloc bytes desc, count desc, function
** name, line. */
static int cmp_site(uint32_t a, uint32_t b, const void *ctx)
{
	const struct heap *h = ctx;
	const struct heap_site *x = &h->sites[a], *y = &h->sites[b];
	int c;
	if ((c = sort_desc_u64(x->alloc_bytes, y->alloc_bytes)) ||
	    (c = sort_desc_u64(x->alloc_count, y->alloc_count)))
		return c;
	c = strcmp(h->fnid->fns[x->fn].name, h->fnid->fns[y->fn].name);
	return c ? c : sort_asc_u64(x->line, y->line);
}

/* Site indices sorted by alloc bytes; caller frees. */
uint32_t *heap_sorted_sites(const struct heap *h)
{
	return sort_index(h->nsite, cmp_site, h);
}
