/*
** ljlog heap snapshots: walk a VM's object graph into HEAP blocks.
** Our own memory only (malloc): the VM's allocator, its mark bits and its
** metamethods are never touched, so a snapshot runs in any GC state.
** This file takes a snapshot (snap_take) and keeps the per-VM address map;
** the walk is snap_walk.c's, the records snap_rec.c's.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/snap_int.h"
#include "stat/clock.h"

/* -- The address map ----------------------------------------------------- */

/* Owner only. Rehash into twice the room (1024 slots at first). */
static int map_grow(struct snap_map *m)
{
	size_t cap = m->kv ? (m->mask + 1) * 2 : 1024;
	unsigned shift = 64;
	for (size_t c = cap; c > 1; c >>= 1)
		shift--;
	struct snap_map n = {calloc(cap * 2, sizeof(uint64_t)), cap - 1, 0,
			     shift};
	if (!n.kv)
		return -ENOMEM;
	for (size_t i = 0; m->kv && i <= m->mask; i++) {
		uint64_t k = m->kv[2 * i];
		if (!k)
			continue;
		size_t j = snap_map_home(&n, k);
		while (n.kv[2 * j])
			j = (j + 1) & n.mask;
		n.kv[2 * j] = k;
		n.kv[2 * j + 1] = m->kv[2 * i + 1];
		n.count++;
	}
	free(m->kv);
	*m = n;
	return 0;
}

/* Owner only. See snap.h. */
uint64_t *snap_map_ref(struct snap_map *m, uint64_t key, int *added)
{
	uint64_t *v = snap_map_get(m, key);
	*added = 0;
	if (v)
		return v;
	if (!m->kv || (m->count + 1) * 2 > m->mask + 1)
		if (map_grow(m) < 0)
			return NULL;
	size_t i = snap_map_home(m, key);
	while (m->kv[2 * i])
		i = (i + 1) & m->mask;
	m->kv[2 * i] = key;
	m->kv[2 * i + 1] = 0;
	m->count++;
	*added = 1;
	return &m->kv[2 * i + 1];
}

/* Owner only. See snap.h: backward-shift deletion. */
void snap_map_del(struct snap_map *m, uint64_t key)
{
	uint64_t *v = snap_map_get(m, key);
	if (!v)
		return;
	size_t i = (size_t)(v - 1 - m->kv) / 2;
	for (size_t j = (i + 1) & m->mask; m->kv[2 * j];
	     j = (j + 1) & m->mask) {
		size_t h = snap_map_home(m, m->kv[2 * j]);
		/* The entry at j may move to i when i lies between its home
		** and j (cyclically). */
		if (((j - h) & m->mask) >= ((j - i) & m->mask)) {
			m->kv[2 * i] = m->kv[2 * j];
			m->kv[2 * i + 1] = m->kv[2 * j + 1];
			i = j;
		}
	}
	m->kv[2 * i] = 0;
	m->kv[2 * i + 1] = 0;
	m->count--;
}

/* -- The snapshot -------------------------------------------------------------------- */

/* VM thread only. The VM's allocations that are no objects (close_state,
** lj_trace_freestate, lj_ctype_freestate, the stacks and buffers). */
static size_t parts(struct walk *w, struct part *p)
{
	global_State *g = w->g;
	size_t n = 0;
	uint64_t stacks = 0, bufs = 0;
	for (size_t i = 0; i < w->n; i++) {
		GCobj *o = w->v[i].o;
		if (o->gch.gct == (uint8_t)~LJ_TTHREAD)
			stacks += (uint64_t)o->th.stacksize * sizeof(TValue);
#if LJ_HASBUFFER
		else if (o->gch.gct == (uint8_t)~LJ_TUDATA &&
			 o->ud.udtype == UDTYPE_BUFFER) {
			SBufExt *sbx = (SBufExt *)uddata(&o->ud);
			if (!sbufiscoworborrow(sbx))
				bufs += sbufsz(sbx);
		}
#endif
	}
	p[n++] =
	    (struct part){"global state", sizeof(GG_State) - sizeof(lua_State)};
	p[n++] = (struct part){"string table",
			       (uint64_t)(g->str.mask + 1) * sizeof(GCRef)};
	p[n++] = (struct part){"temporary buffer", sbufsz(&g->tmpbuf)};
	p[n++] = (struct part){"stacks", stacks};
	p[n++] = (struct part){"string buffers", bufs};
#if LJ_HASJIT
	jit_State *J = G2J(g);
	p[n++] = (struct part){
	    "jit", (uint64_t)J->sizesnapmap * sizeof(SnapEntry) +
		       (uint64_t)J->sizesnap * sizeof(SnapShot) +
		       (uint64_t)(J->irtoplim - J->irbotlim) * sizeof(IRIns) +
		       (uint64_t)J->sizetrace * sizeof(GCRef)};
#endif
#if LJ_HASFFI
	CTState *cts = ctype_ctsG(g);
	if (cts)
		p[n++] = (struct part){
		    "ffi", sizeof(CTState) +
			       (uint64_t)cts->sizetab * sizeof(CType) +
			       (uint64_t)cts->cb.sizeid * sizeof(CTypeID1)};
#endif
#if LJ_64
	if (mref(g->gc.lightudseg, uint32_t)) {
		unsigned segnum =
		    g->gc.lightudnum ? (2u << lj_fls(g->gc.lightudnum)) : 2;
		p[n++] = (struct part){"lightuserdata segments",
				       (uint64_t)segnum * sizeof(uint32_t)};
	}
#endif
	return n;
}

/* VM thread only. See snap.h. */
int snap_take(struct snap_vm *s, lua_State *L, uint64_t vm_id, struct wbuf *out,
	      char *err, size_t errlen)
{
	uint64_t t0 = clock_mono_ns();
	struct writer_clock c;
	clock_pair_now(&c);
	global_State *g = G(L);
	struct walk w = {0};
	w.g = g;
	w.L = L;
	w.s = s;
	w.out = out;
	w.blk = (size_t)-1;
	w.vm_id = vm_id;
	w.sweeping = g->gc.state == GCSsweepstring || g->gc.state == GCSsweep;
	s->seq++;
	s->on = 1;

	/* Every object, then what the roots reach (our own marks). */
	snap_enumerate(&w);
	snap_roots(&w);
	while (w.sp && !w.err) {
		size_t i = w.stk[--w.sp], start = w.rn + 1;
		w.rec = 1;
		snap_refs(&w, w.v[i].o);
		/* Kept whole, or not replayed at all. */
		w.v[i].rstart =
		    w.rec && start <= UINT32_MAX ? (uint32_t)start : 0;
		w.rec = 0;
	}
	/* Write: objects with their references, roots, the summary. */
	w.emit = 1;
	uint64_t bytes = 0, unreached = 0;
	for (size_t i = 0; i < w.n && !w.err; i++) {
		snap_rec_object(&w, i);
		bytes += w.v[i].size;
		unreached += !w.v[i].reached;
	}
	snap_roots(&w);
	struct part p[16];
	size_t np = parts(&w, p);
	snap_rec_summary(&w, &c, bytes, unreached, p, np, t0);

	free(w.v);
	free(w.stk);
	free(w.fr);
	free(w.ri);
	if (w.err) {
		snprintf(err, errlen, "heap snapshot: out of memory");
		return w.err;
	}
	return (int)w.nblocks;
}

/* VM thread only. See snap.h. */
void snap_free(struct snap_vm *s)
{
	free(s->ids.kv);
	memset(&s->ids, 0, sizeof s->ids);
	s->on = 0;
}
