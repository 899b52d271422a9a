/*
** ljlog reader processors: zones and marks (see zones.h).
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "proc/zones.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/heap.h"

struct zones_vm {
	uint32_t id;
	uint32_t *stack; /* open spans, outermost first */
	size_t depth, cap_stack;
	uint32_t *idx; /* its spans in PUSH order (t0 never decreases) */
	size_t n, cap;
	uint64_t last_ts; /* its last event */
};

/* Grow *p (of *cap elements of size sz) to hold n + 1. */
static int grow(void *pp, size_t *cap, size_t n, size_t sz)
{
	void **p = pp;
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 16;
	void *q = realloc(*p, nc * sz);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = nc;
	return 0;
}

/* An empty processor. */
void zones_init(struct zones *z)
{
	memset(z, 0, sizeof *z);
}

/* Free its memory. */
void zones_free(struct zones *z)
{
	for (size_t i = 0; i < z->nvm; i++) {
		free(z->vms[i].stack);
		free(z->vms[i].idx);
	}
	free(z->vms);
	free(z->names);
	free(z->spans);
	free(z->marks);
	free(z->smp);
	free(z->sites);
	hmap_free(&z->sitemap);
	hmap_free(&z->byid);
	intern_free(&z->strs);
	memset(z, 0, sizeof *z);
}

/* VM id's state, made on first use; NULL when out of memory. */
static struct zones_vm *vm_get(struct zones *z, uint32_t id)
{
	for (size_t i = 0; i < z->nvm; i++)
		if (z->vms[i].id == id)
			return &z->vms[i];
	if (grow(&z->vms, &z->cap_vm, z->nvm, sizeof *z->vms) < 0)
		return NULL;
	struct zones_vm *v = &z->vms[z->nvm++];
	memset(v, 0, sizeof *v);
	v->id = id;
	return v;
}

/* VM id's state, or NULL. */
static const struct zones_vm *vm_find(const struct zones *z, uint32_t id)
{
	for (size_t i = 0; i < z->nvm; i++)
		if (z->vms[i].id == id)
			return &z->vms[i];
	return NULL;
}

/* String index of a STRING object, interned by text. */
static int64_t str_of(struct zones *z, const struct decode_obj *o)
{
	uint64_t *v = hmap_get(&z->byid, o->id);
	if (v)
		return (int64_t)*v - 1;
	size_t before = intern_count(&z->strs);
	int64_t i = intern_put(&z->strs, o->u.str.text.s, o->u.str.text.len);
	if (i < 0 ||
	    grow(&z->names, &z->cap_names, (size_t)i, sizeof *z->names) < 0 ||
	    hmap_put(&z->byid, o->id, (uint64_t)i + 1) < 0)
		return -ENOMEM;
	if ((size_t)i >= before)
		memset(&z->names[i], 0, sizeof z->names[i]);
	return i;
}

/* Whether name is on v's stack below position k. */
static int below(const struct zones *z, const struct zones_vm *v, size_t k,
		 uint32_t name)
{
	for (size_t j = 0; j < k; j++)
		if (z->spans[v->stack[j]].name == name)
			return 1;
	return 0;
}

/* Close v's innermost span at ts. */
static void pop(struct zones *z, struct zones_vm *v, uint64_t ts, int open)
{
	struct zones_span *s = &z->spans[v->stack[--v->depth]];
	s->t1 = ts;
	s->open = open;
	if (!below(z, v, v->depth, s->name))
		z->names[s->name].time += ts - s->t0;
}

/* Charge an allocation to every zone name open on v, and to
** its site under the innermost one. 0 or -ENOMEM. */
static int charge(struct zones *z, struct zones_vm *v,
		  const struct decode_event *ev)
{
	uint64_t wc = 1, wb = ev->size;
	if (ev->vmobj && ev->vmobj->u.vm.alloc_rate)
		heap_weight(ev->size, ev->vmobj->u.vm.alloc_rate, &wc, &wb);
	for (size_t k = 0; k < v->depth; k++) {
		uint32_t name = z->spans[v->stack[k]].name;
		if (below(z, v, k, name))
			continue;
		z->names[name].alloc_count += wc;
		z->names[name].alloc_bytes += wb;
	}
	if (!z->site_src || !z->site_src->last_site)
		return 0;
	/* heap (fed first) looked this allocation's site up last. */
	uint32_t site = z->site_src->last_site - 1;
	uint32_t zone = z->spans[v->stack[v->depth - 1]].name;
	int added;
	uint64_t *ix =
	    hmap_ref(&z->sitemap, ((uint64_t)site + 1) << 32 | zone, &added);
	if (!ix)
		return -ENOMEM;
	if (added) {
		if (grow(&z->sites, &z->cap_site, z->nsite, sizeof *z->sites) <
		    0)
			return -ENOMEM;
		z->sites[z->nsite] = (struct zones_site){site, zone, 0, 0};
		*ix = ++z->nsite;
	}
	z->sites[*ix - 1].alloc_count += wc;
	z->sites[*ix - 1].alloc_bytes += wb;
	return 0;
}

/* A zone is pushed. */
static int push(struct zones *z, struct zones_vm *v,
		const struct decode_event *ev)
{
	int64_t name = str_of(z, ev->obj);
	if (name < 0 ||
	    grow(&z->spans, &z->cap_span, z->nspan, sizeof *z->spans) < 0 ||
	    grow(&v->stack, &v->cap_stack, v->depth, sizeof *v->stack) < 0 ||
	    grow(&v->idx, &v->cap, v->n, sizeof *v->idx) < 0)
		return -ENOMEM;
	uint32_t si = (uint32_t)z->nspan++;
	struct zones_span *s = &z->spans[si];
	s->vm = v->id;
	s->name = (uint32_t)name;
	s->depth = (uint32_t)v->depth;
	s->parent = v->depth ? v->stack[v->depth - 1] : UINT32_MAX;
	s->open = 1;
	s->t0 = s->t1 = ev->ts;
	v->stack[v->depth++] = si;
	v->idx[v->n++] = si;
	z->names[name].entries++;
	return 0;
}

/* A decode sink. One event. */
static int on_event(void *ud, const struct decode_event *ev)
{
	struct zones *z = ud;
	struct zones_vm *v = vm_get(z, ev->vm);
	if (!v)
		return -ENOMEM;
	v->last_ts = ev->ts;
	switch (ev->op) {
	case FORMAT_OP_ALLOC:
	case FORMAT_OP_REALLOC: return v->depth ? charge(z, v, ev) : 0;
	case FORMAT_OP_VM: break;
	default: return 0;
	}
	switch (ev->lo) {
	case FORMAT_VM_ZONE_PUSH: return push(z, v, ev);
	case FORMAT_VM_ZONE_POP:
		if (v->depth) /* the writer never pops an empty stack */
			pop(z, v, ev->ts, 0);
		return 0;
	case FORMAT_VM_MARK: {
		int64_t t = str_of(z, ev->obj);
		if (t < 0 || grow(&z->marks, &z->cap_mark, z->nmark,
				  sizeof *z->marks) < 0)
			return -ENOMEM;
		z->marks[z->nmark++] =
		    (struct zones_mark){ev->vm, (uint32_t)t, ev->ts};
		return 0;
	}
	case FORMAT_VM_DETACH:
		while (v->depth)
			pop(z, v, ev->ts, 1);
		return 0;
	}
	return 0;
}

/* A decode sink. One sample: kept for zones_finish. */
static int on_sample(void *ud, const struct decode_sample *s)
{
	struct zones *z = ud;
	if (grow(&z->smp, &z->cap_smp, z->nsmp, sizeof *z->smp) < 0)
		return -ENOMEM;
	uint32_t node = z->leaf_src ? samples_last_node(z->leaf_src) : 0;
	z->smp[z->nsmp++] = (struct zones_smp){s->vm, node, UINT32_MAX, s->ts};
	return 0;
}

/* Fill sink so that a decoder feeds z. */
void zones_sink(struct zones *z, struct decode_sink *sink)
{
	memset(sink, 0, sizeof *sink);
	sink->ud = z;
	sink->event = on_event;
	sink->sample = on_sample;
}

/* End of input. */
int zones_finish(struct zones *z)
{
	if (z->finished)
		return 0;
	z->finished = 1;
	for (size_t i = 0; i < z->nvm; i++) {
		struct zones_vm *v = &z->vms[i];
		while (v->depth)
			pop(z, v, v->last_ts, 1);
	}
	for (size_t i = 0; i < z->nsmp; i++) {
		const struct zones_span *s =
		    zones_at(z, z->smp[i].vm, z->smp[i].ts);
		if (s) {
			z->samples_in++;
			z->smp[i].zone = s->name;
		}
		/* Each name once: a name is counted at its outermost span. */
		for (; s; s = s->parent == UINT32_MAX ? NULL
						      : &z->spans[s->parent]) {
			int outer = 0;
			for (const struct zones_span *q = s;
			     q->parent != UINT32_MAX;) {
				q = &z->spans[q->parent];
				if (q->name == s->name) {
					outer = 1;
					break;
				}
			}
			if (!outer)
				z->names[s->name].samples++;
		}
	}
	return 0;
}

/* The text of string index i. */
const char *zones_str(const struct zones *z, uint32_t i)
{
	return intern_str(&z->strs, i, NULL);
}

/* Whether string index i names a zone. */
int zones_is_zone(const struct zones *z, uint32_t i)
{
	return z->names[i].entries != 0;
}

/* Innermost span of vm open at ts. */
const struct zones_span *zones_at(const struct zones *z, uint32_t vm,
				  uint64_t ts)
{
	const struct zones_vm *v = vm_find(z, vm);
	if (!v || !v->n)
		return NULL;
	/* The last span pushed at or before ts. */
	size_t lo = 0, hi = v->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (z->spans[v->idx[mid]].t0 <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct zones_span *s = &z->spans[v->idx[lo - 1]];
	/* Spans nest: the innermost open one is it or one of its parents. */
	while (s && s->t1 <= ts)
		s = s->parent == UINT32_MAX ? NULL : &z->spans[s->parent];
	return s;
}

/* Whether vm is in a zone named name at ts. */
int zones_in(const struct zones *z, uint32_t vm, uint64_t ts, uint32_t name)
{
	for (const struct zones_span *s = zones_at(z, vm, ts); s;
	     s = s->parent == UINT32_MAX ? NULL : &z->spans[s->parent])
		if (s->name == name)
			return 1;
	return 0;
}

/* While decoding. Whether vm is in a zone named name now. */
int zones_open_now(const struct zones *z, uint32_t vm, const char *name)
{
	int64_t i = intern_find(&z->strs, name, strlen(name));
	const struct zones_vm *v = vm_find(z, vm);
	if (i < 0 || !v)
		return 0;
	for (size_t k = 0; k < v->depth; k++)
		if (z->spans[v->stack[k]].name == (uint32_t)i)
			return 1;
	return 0;
}

/* String index of a zone name, or -1. */
int64_t zones_find(const struct zones *z, const char *name)
{
	int64_t i = intern_find(&z->strs, name, strlen(name));
	return i >= 0 && zones_is_zone(z, (uint32_t)i) ? i : -1;
}
