/*
** ljlog reader processors: heap snapshots.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#include "proc/hsnap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/fanout.h"

/* See hsnap.h. */
void hsnap_init(struct hsnap *h, size_t k1, size_t k2, int edges)
{
	memset(h, 0, sizeof *h);
	h->keep[0].index = k1;
	h->keep[0].edges = edges & 1;
	h->keep[1].index = k2;
	h->keep[1].edges = (edges & 2) != 0;
}

/* See hsnap.h. */
void hsnap_sites(struct hsnap *h, const struct heap *heap)
{
	h->heap = heap;
}

/* See hsnap.h. */
const char *hsnap_nosite_why(const struct hsnap *h, const struct hsnap_one *s)
{
	if (!s->addrs)
		return "this log's HEAP objects carry no addresses (format "
		       "version 8 or 9), so no ALLOC can be matched with them";
	if (!h->heap)
		return "allocation events not read";
	if (!s->allocs)
		return "the VM recorded no allocations before the snapshot (run "
		       "with the alloc option)";
	if (s->alloc_rate)
		return "allocation not sampled (alloc=RATE: only sampled "
		       "objects have sites), or allocated before ljlog "
		       "attached";
	return "allocated before ljlog attached";
}

/* Free a kept snapshot. */
static void keep_free(struct hsnap_keep *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].text);
	for (size_t i = 0; i < k->ne; i++)
		free(k->e[i].name);
	free(k->v);
	free(k->e);
	hmap_free(&k->byid);
}

/* See hsnap.h. */
void hsnap_free(struct hsnap *h)
{
	keep_free(&h->keep[0]);
	keep_free(&h->keep[1]);
	free(h->s);
	for (size_t i = 0; i < h->nff; i++)
		free(h->ffname[i]);
	free(h->ffname);
}

/* The snapshot (vm, seq) in progress, started when new. */
static struct hsnap_one *current(struct hsnap *h, uint32_t vm, uint64_t seq)
{
	if (h->n && h->s[h->n - 1].vm == vm && h->s[h->n - 1].seq == seq &&
	    !h->s[h->n - 1].complete)
		return &h->s[h->n - 1];
	if (h->n == h->cap) {
		size_t nc = h->cap ? h->cap * 2 : 16;
		struct hsnap_one *ns = realloc(h->s, nc * sizeof *ns);
		if (!ns)
			return NULL;
		h->s = ns;
		h->cap = nc;
	}
	struct hsnap_one *s = &h->s[h->n++];
	memset(s, 0, sizeof *s);
	s->vm = vm;
	s->seq = seq;
	return s;
}

/* The kept snapshot the current one is, or NULL. */
static struct hsnap_keep *kept(struct hsnap *h)
{
	for (int i = 0; i < 2; i++)
		if (h->keep[i].index && h->keep[i].index == h->n)
			return &h->keep[i];
	return NULL;
}

/* Copy s[0..len) NUL-terminated. */
static char *dup(const char *s, size_t len)
{
	char *p = malloc(len + 1);
	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

/* Keep one edge (r's fields; a root when kind is 0). */
static int add_edge(struct hsnap_keep *k, uint64_t src,
		    const struct decode_href *r)
{
	if (k->ne == k->ecap) {
		size_t nc = k->ecap ? k->ecap * 2 : 1024;
		struct hsnap_edge *ne = realloc(k->e, nc * sizeof *ne);
		if (!ne)
			return -ENOMEM;
		k->e = ne;
		k->ecap = nc;
	}
	char *l = dup(r->name ? r->name : "", r->name ? r->namelen : 0);
	if (!l)
		return -ENOMEM;
	k->e[k->ne++] = (struct hsnap_edge){
	    src,     r->target, l,    r->name ? r->namelen : 0,
	    r->kind, r->weak,	r->n, r->key};
	return 0;
}

static int on_intro(void *ud, const struct decode_intro *in)
{
	struct hsnap *h = ud;
	h->intro_ns = in->clock.mono_ns;
	h->version = in->version;
	return 0;
}

/* Snapshot s (of vm) is read now: what the heap processor
** knows of its VM's allocations. */
static void vm_state(struct hsnap *h, struct hsnap_one *s, uint32_t vm)
{
	const struct heap_vm *v = h->heap ? heap_vm_get(h->heap, vm) : NULL;
	s->addrs = h->version >= 10;
	s->allocs = v ? v->alloc_count : 0;
	s->alloc_rate = v ? v->alloc_rate : 0;
}

/* The site index + 1 of the live block at addr of vm, 0 none. */
static uint32_t site_at(const struct hsnap *h, uint32_t vm, uint64_t addr)
{
	const struct heap_vm *v = h->heap ? heap_vm_get(h->heap, vm) : NULL;
	const uint64_t *x = v && addr ? hmap_get(&v->blocks, addr) : NULL;
	return x ? (uint32_t)*x : 0;
}

static int on_obj(void *ud, const struct decode_hobj *o)
{
	struct hsnap *h = ud;
	struct hsnap_one *s = current(h, o->vm, o->snapshot);
	if (!s)
		return h->err = -ENOMEM;
	vm_state(h, s, o->vm);
	s->n[o->type]++;
	s->b[o->type] += o->size;
	if (o->flags & FORMAT_HOBJ_UNREACHABLE)
		s->unreachable_bytes += o->size;
	struct hsnap_keep *k = kept(h);
	if (!k)
		return 0;
	if (k->n == k->cap) {
		size_t nc = k->cap ? k->cap * 2 : 1024;
		struct hsnap_obj *nv = realloc(k->v, nc * sizeof *nv);
		if (!nv)
			return h->err = -ENOMEM;
		k->v = nv;
		k->cap = nc;
	}
	char *t = dup(o->text, o->textlen);
	if (!t || hmap_put(&k->byid, o->id, k->n + 1) < 0) {
		free(t);
		return h->err = -ENOMEM;
	}
	uint64_t addr = o->has_addr ? o->addr : 0;
	k->v[k->n++] = (struct hsnap_obj){
	    o->id, o->type,    o->flags, o->size,
	    t,	   o->textlen, addr,	 site_at(h, o->vm, addr)};
	if (!k->edges)
		return 0;
	for (uint32_t i = 0; i < o->nref; i++)
		if (add_edge(k, o->id, &o->refs[i]) < 0)
			return h->err = -ENOMEM;
	return 0;
}

static int on_root(void *ud, const struct decode_hroot *r)
{
	struct hsnap *h = ud;
	if (!current(h, r->vm, r->snapshot))
		return h->err = -ENOMEM;
	struct hsnap_keep *k = kept(h);
	if (k && k->edges) {
		struct decode_href root;
		memset(&root, 0, sizeof root);
		root.name = r->name;
		root.namelen = r->namelen;
		root.target = r->target;
		if (add_edge(k, 0, &root) < 0)
			return h->err = -ENOMEM;
	}
	return 0;
}

static int on_summary(void *ud, const struct decode_hsummary *x)
{
	struct hsnap *h = ud;
	struct hsnap_one *s = current(h, x->vm, x->snapshot);
	if (!s)
		return h->err = -ENOMEM;
	s->time_ns =
	    x->clock.mono_ns > h->intro_ns ? x->clock.mono_ns - h->intro_ns : 0;
	s->objects = x->objects;
	s->bytes = x->bytes;
	s->unreachable = x->unreachable;
	s->gc_total = x->gc_total;
	s->other = x->other;
	s->pause_ns = x->pause_ns;
	s->gcstate = x->gcstate;
	s->complete = 1;
	vm_state(h, s, x->vm);
	return 0;
}

/* A MAPPING or NAME record: keep the names of FFUNCs. */
static int on_record(void *ud, struct decode_obj *o)
{
	struct hsnap *h = ud;
	if (o->kind != FORMAT_REC_FFUNC || !o->u.ffunc.name.len ||
	    o->u.ffunc.ffid >= HSNAP_FFID_MAX)
		return 0;
	size_t f = (size_t)o->u.ffunc.ffid;
	if (f >= h->nff) {
		char **nv = realloc(h->ffname, (f + 1) * sizeof *nv);
		if (!nv)
			return h->err = -ENOMEM;
		memset(nv + h->nff, 0, (f + 1 - h->nff) * sizeof *nv);
		h->ffname = nv;
		h->nff = f + 1;
	}
	char *t = dup(o->u.ffunc.name.s, o->u.ffunc.name.len);
	if (!t)
		return h->err = -ENOMEM;
	free(h->ffname[f]);
	h->ffname[f] = t;
	return 0;
}

/* See hsnap.h. */
void hsnap_finish(struct hsnap *h)
{
	for (int i = 0; i < 2; i++) {
		struct hsnap_keep *k = &h->keep[i];
		for (size_t j = 0; j < k->n; j++) {
			struct hsnap_obj *o = &k->v[j];
			unsigned f;
			int end = 0;
			if (o->type != FORMAT_HTYPE_FUNCTION ||
			    sscanf(o->text, "builtin #%u%n", &f, &end) != 1 ||
			    (size_t)end != o->textlen || f >= h->nff ||
			    !h->ffname[f])
				continue;
			char *t = dup(h->ffname[f], strlen(h->ffname[f]));
			if (!t) {
				h->err = -ENOMEM;
				return;
			}
			free(o->text);
			o->text = t;
			o->textlen = strlen(t);
		}
	}
}

/* See hsnap.h. */
void hsnap_sink(struct hsnap *h, struct decode_sink *s)
{
	s->ud = h;
	s->intro = on_intro;
	s->record = on_record;
	s->rename = on_record;
	s->heap_obj = on_obj;
	s->heap_root = on_root;
	s->heap_summary = on_summary;
}

/* See hsnap.h. */
void hsnap_label(const struct decode_href *r, char *buf, size_t cap)
{
	int nl = (int)(r->namelen > 120 ? 120 : r->namelen);
	const char *nm = r->name;
	switch (r->kind) {
	case FORMAT_HREF_ARRAY:
		snprintf(buf, cap, "[%llu]", (unsigned long long)r->n);
		break;
	case FORMAT_HREF_FIELD_STR: snprintf(buf, cap, ".%.*s", nl, nm); break;
	case FORMAT_HREF_FIELD_NUM:
	case FORMAT_HREF_FIELD_OTHER:
		snprintf(buf, cap, "[%.*s]", nl, nm);
		break;
	case FORMAT_HREF_FIELD_OBJ:
		snprintf(buf, cap, "[#%llu]", (unsigned long long)r->key);
		break;
	case FORMAT_HREF_UPVALUE:
		if (nl)
			snprintf(buf, cap, "(upvalue %.*s)", nl, nm);
		else
			snprintf(buf, cap, "(upvalue %llu)",
				 (unsigned long long)r->n);
		break;
	case FORMAT_HREF_STACK:
		snprintf(buf, cap, "(stack %llu%s%.*s of #%llu)",
			 (unsigned long long)r->n, nl ? " " : "", nl, nm,
			 (unsigned long long)r->key);
		break;
	case FORMAT_HREF_CONST:
	case FORMAT_HREF_TRACE_CONST:
		snprintf(buf, cap, "(%s %llu)", format_href_name(r->kind),
			 (unsigned long long)r->n);
		break;
	case FORMAT_HREF_TRACE:
		snprintf(buf, cap, "(trace %.*s)", nl, nm);
		break;
	default: snprintf(buf, cap, "(%s)", format_href_name(r->kind)); break;
	}
}

/* See hsnap.h. */
void hsnap_edge_label(const struct hsnap_edge *e, char *buf, size_t cap)
{
	if (!e->kind) {
		snprintf(buf, cap, "%s", e->name);
		return;
	}
	struct decode_href r = {e->kind,    e->weak, e->n,  e->name,
				e->namelen, e->key,  e->dst};
	hsnap_label(&r, buf, cap);
}

/* See hsnap.h. */
const struct hsnap_obj *hsnap_find(const struct hsnap_keep *k, uint64_t id)
{
	uint64_t *x = id ? hmap_get(&k->byid, id) : NULL;
	return x ? &k->v[*x - 1] : NULL;
}

/* Order edges by source. */
static int by_src(const void *a, const void *b)
{
	const struct hsnap_edge *x = *(const struct hsnap_edge *const *)a;
	const struct hsnap_edge *y = *(const struct hsnap_edge *const *)b;
	return x->src < y->src ? -1 : x->src > y->src;
}

/* hsnap_path's step: object index o's references of code (code 1) or of
** the program's (0) to objects not reached yet, queued after q[qt); the
** new qt. e: the references sorted by source, first: source ID + 1 ->
** index + 1 in e. */
static size_t path_step(const struct hsnap_keep *k,
			const struct hsnap_edge *const *e,
			const struct hmap *first, const struct hsnap_edge **via,
			size_t *q, size_t o, size_t qt, int code)
{
	uint64_t src = k->v[o].id;
	uint64_t *f = hmap_get(first, src + 1);
	for (size_t i = f ? *f - 1 : k->ne; i < k->ne && e[i]->src == src;
	     i++) {
		uint64_t *x = hmap_get(&k->byid, e[i]->dst);
		if (x && !via[*x - 1] && hsnap_code_ref(e[i]->kind) == code) {
			via[*x - 1] = e[i];
			q[qt++] = *x - 1;
		}
	}
	return qt;
}

/* See hsnap.h: breadth first from the roots over strong and
** weak references alike. */
long hsnap_path(const struct hsnap_keep *k, uint64_t id,
		const struct hsnap_edge ***out)
{
	const struct hsnap_edge **e = malloc((k->ne + 1) * sizeof *e);
	const struct hsnap_edge **via = calloc(k->n + 1, sizeof *via);
	size_t *q = malloc((k->n + 1) * sizeof *q);
	struct hmap first = HMAP_INIT; /* src -> first edge index + 1 */
	long rc = 0;
	*out = NULL;
	if (!e || !via || !q)
		goto oom;
	for (size_t i = 0; i < k->ne; i++)
		e[i] = &k->e[i];
	qsort(e, k->ne, sizeof *e, by_src);
	for (size_t i = k->ne; i-- > 0;)
		if (hmap_put(&first, e[i]->src + 1, i + 1) < 0)
			goto oom;
	size_t qh = 0, qt = 0;
	uint64_t *r = hmap_get(&first, 1);
	for (size_t i = r ? *r - 1 : k->ne; i < k->ne && e[i]->src == 0; i++) {
		uint64_t *x = hmap_get(&k->byid, e[i]->dst);
		if (x && !via[*x - 1]) {
			via[*x - 1] = e[i];
			q[qt++] = *x - 1;
		}
	}
	/* The program's references breadth first; then those of code from
	** the nodes that tier reached seed the next one. */
	uint64_t *t = hmap_get(&k->byid, id);
	for (size_t tier = 0;;) {
		while (qh < qt)
			qt = path_step(k, e, &first, via, q, q[qh++], qt, 0);
		size_t end = qt;
		if (t && via[*t - 1])
			break;
		for (size_t j = tier; j < end; j++)
			qt = path_step(k, e, &first, via, q, q[j], qt, 1);
		if (qt == end)
			break;
		tier = end;
	}
	if (t && via[*t - 1]) {
		size_t n = 0;
		for (uint64_t cur = id; cur;) {
			const struct hsnap_edge *s =
			    via[hmap_get(&k->byid, cur)[0] - 1];
			e[n++] = s;
			cur = s->src;
			if (n > k->n)
				break;
		}
		for (size_t i = 0; i < n / 2; i++) {
			const struct hsnap_edge *x = e[i];
			e[i] = e[n - 1 - i];
			e[n - 1 - i] = x;
		}
		rc = (long)n;
		*out = e;
		e = NULL;
	}
	free(e);
	free(via);
	free(q);
	hmap_free(&first);
	return rc;
oom:
	free(e);
	free(via);
	free(q);
	hmap_free(&first);
	return -ENOMEM;
}

/* See hsnap.h. */
void hsnap_sink_sites(struct hsnap *h, struct heap *hp, struct fanout *fan,
		      struct decode_sink *s)
{
	struct decode_sink one;
	memset(s, 0, sizeof *s);
	if (!hp) {
		hsnap_sink(h, s);
		return;
	}
	fanout_init(fan);
	memset(&one, 0, sizeof one);
	fnid_sink(hp->fnid, &one);
	fanout_add(fan, &one);
	memset(&one, 0, sizeof one);
	heap_sink(hp, &one);
	fanout_add(fan, &one);
	memset(&one, 0, sizeof one);
	hsnap_sink(h, &one);
	fanout_add(fan, &one);
	fanout_sink(fan, s);
	hsnap_sites(h, hp);
}
