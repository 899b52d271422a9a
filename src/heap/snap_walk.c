/*
** ljlog heap snapshots: the walk of a VM's objects. Two passes: the mark
** pass reaches every object from the roots (our own marks) and keeps each
** one's reference targets; the write pass meets the same references in
** the same order and hands them to snap_rec.c. Sizes as LuaJIT frees
** objects; references by type as the GC traverses them.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/snap_int.h"
#include "maps/protoname.h"

/* -- Sizes ----------------------------------------------------------------- */

/* VM thread only. Bytes LuaJIT frees with o (gc_freefunc). */
static uint64_t obj_size(global_State *g, GCobj *o)
{
	switch (o->gch.gct) {
	case ~LJ_TSTR: /* "" lives in the global state */
		return &o->str == &g->strempty ? 0 : lj_str_size(o->str.len);
	case ~LJ_TUPVAL: return sizeof(GCupval);
	case ~LJ_TTHREAD: return sizeof(lua_State);
	case ~LJ_TPROTO: return o->pt.sizept;
	case ~LJ_TFUNC:
		return isluafunc(&o->fn) ? sizeLfunc((MSize)o->fn.l.nupvalues)
					 : sizeCfunc((MSize)o->fn.c.nupvalues);
#if LJ_HASJIT
	case ~LJ_TTRACE: {
		GCtrace *T = (GCtrace *)o;
		return ((sizeof(GCtrace) + 7) & ~7) +
		       (T->nins - T->nk) * sizeof(IRIns) +
		       T->nsnap * sizeof(SnapShot) +
		       T->nsnapmap * sizeof(SnapEntry);
	}
#endif
#if LJ_HASFFI
	case ~LJ_TCDATA: {
		GCcdata *cd = &o->cd;
		if (cdataisv(cd))
			return sizecdatav(cd);
		CType *ct = ctype_raw(ctype_ctsG(g), cd->ctypeid);
		return sizeof(GCcdata) +
		       (ctype_hassize(ct->info) ? ct->size : CTSIZE_PTR);
	}
#endif
	case ~LJ_TTAB: {
		GCtab *t = &o->tab;
		uint64_t sz = 0;
		if (t->hmask > 0)
			sz += (uint64_t)(t->hmask + 1) * sizeof(Node);
		if (t->asize > 0 && LJ_MAX_COLOSIZE != 0 && t->colo <= 0)
			sz += (uint64_t)t->asize * sizeof(TValue);
		if (LJ_MAX_COLOSIZE != 0 && t->colo)
			sz += sizetabcolo((uint32_t)t->colo & 0x7f);
		else
			sz += sizeof(GCtab);
		return sz;
	}
	case ~LJ_TUDATA: return sizeudata(&o->ud);
	default: return 0;
	}
}

/* -- Objects ----------------------------------------------------------------- */

/* The per-VM map holds, for each address, the object's heap ID (high 32
** bits) and its index + 1 in the snapshot that last saw it (low 32 bits):
** one lookup finds both. The index is this snapshot's when it names this
** object here. */
#define IDX_MASK 0xffffffffull

/* VM thread only. Index + 1 of o in this snapshot, looked up by key (its
** base address), 0 when not in it. */
static size_t find_at(struct walk *w, GCobj *o, uintptr_t key)
{
	uint64_t *x = snap_map_get(&w->s->ids, key);
	size_t i = x ? (size_t)(*x & IDX_MASK) : 0;
	return i && i <= w->n && w->v[i - 1].o == o ? i : 0;
}

/* VM thread only. Index + 1 of o in this snapshot, 0 when not in it. */
static size_t find(struct walk *w, GCobj *o)
{
	return find_at(w, o, obj_base(o));
}

/* VM thread only. Add o (once); its index + 1, or 0 when out of memory. */
static size_t add(struct walk *w, GCobj *o)
{
	int added = 0;
	uint64_t *x = snap_map_ref(&w->s->ids, obj_base(o), &added);
	if (!x) {
		w->err = -ENOMEM;
		return 0;
	}
	if (added) {
		*x = ++w->s->next_id << 32;
	} else {
		size_t i = (size_t)(*x & IDX_MASK);
		if (i && i <= w->n && w->v[i - 1].o == o)
			return i;
	}
	if (w->n == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 4096;
		struct obj *nv = realloc(w->v, nc * sizeof *nv);
		if (!nv) {
			w->err = -ENOMEM;
			return 0;
		}
		w->v = nv;
		w->cap = nc;
	}
	struct obj *ob = &w->v[w->n++];
	ob->o = o;
	ob->size = obj_size(w->g, o);
	ob->reached = 0;
	ob->rstart = 0;
	ob->id = *x >> 32;
	*x = (*x & ~IDX_MASK) | w->n;
	return w->n;
}

/* VM thread only. Push index i to the work stack. */
static void push(struct walk *w, size_t i)
{
	if (w->sp == w->scap) {
		size_t nc = w->scap ? w->scap * 2 : 4096;
		uint32_t *ns = realloc(w->stk, nc * sizeof *ns);
		if (!ns) {
			w->err = -ENOMEM;
			return;
		}
		w->stk = ns;
		w->scap = nc;
	}
	w->stk[w->sp++] = (uint32_t)i;
}

/* VM thread only. Mark pass: reach o; its index + 1 (0: out of memory). */
static size_t reach(struct walk *w, GCobj *o)
{
	/* Added already, at enumeration: found by o itself, which is its base
	** but for a VLA cdata's, without reading o (a cache miss per
	** reference). No other allocation starts where o is. */
	size_t i = find_at(w, o, (uintptr_t)o);
	if (!i)
		i = add(w, o);
	if (i && !w->v[i - 1].reached) {
		w->v[i - 1].reached = 1;
		push(w, i - 1);
	}
	return i;
}

/* VM thread only. Mark pass: keep the target index + 1 i of the object
** being walked; 0 when it cannot be kept (its replay is then off). */
static int keep_target(struct walk *w, size_t i)
{
	if (w->rn == w->rcap) {
		size_t nc = w->rcap ? w->rcap * 2 : 4096;
		uint32_t *nr =
		    nc < UINT32_MAX ? realloc(w->ri, nc * sizeof *nr) : NULL;
		if (!nr)
			return 0;
		w->ri = nr;
		w->rcap = nc;
	}
	w->ri[w->rn++] = (uint32_t)i;
	return 1;
}

/* VM thread only. The heap ID of o (0 when unknown). */
static uint64_t id_of(struct walk *w, GCobj *o)
{
	size_t i = o ? find(w, o) : 0;
	return i ? w->v[i - 1].id : 0;
}

/* VM thread only. Write pass: the heap ID of target, the next kept one
** when it is that object (else looked up). */
static uint64_t target_id(struct walk *w, GCobj *target)
{
	if (w->rcur && w->rcur <= w->rn) {
		size_t i = w->ri[w->rcur++ - 1];
		if (i && i <= w->n && w->v[i - 1].o == target)
			return w->v[i - 1].id;
	}
	return id_of(w, target);
}

/* VM thread only. One reference to target, named by r: reach it (mark
** pass), or write it (write pass). */
static void ref(struct walk *w, const struct rname *r, GCobj *target)
{
	if (!target)
		return;
	if (!w->emit) {
		size_t i = reach(w, target);
		if (w->rec && !(i && keep_target(w, i)))
			w->rec = 0;
		return;
	}
	uint64_t key =
	    r->kind == FORMAT_HREF_FIELD_OBJ || r->kind == FORMAT_HREF_STACK
		? id_of(w, r->keyobj)
		: 0;
	snap_rec_ref(w, r, key, target_id(w, target));
}

/* VM thread only. A reference to the object a TValue holds, if any. */
static void ref_tv(struct walk *w, const struct rname *r, cTValue *tv)
{
	if (tvisgcv(tv))
		ref(w, r, gcV(tv));
}

/* VM thread only. Plain reference of kind k. */
static void ref_k(struct walk *w, unsigned k, GCobj *target)
{
	struct rname r = {k, 0, 0, NULL, 0, NULL};
	ref(w, &r, target);
}

/* -- References by type -------------------------------------------------------- */

/* VM thread only. See snap_int.h. */
cTValue *snap_field(GCtab *t, const char *name, size_t len)
{
	if (!t || t->hmask == 0)
		return NULL;
	Node *node = noderef(t->node);
	for (MSize i = 0; i <= t->hmask; i++) {
		Node *nd = &node[i];
		if (!tvisnil(&nd->val) && tvisstr(&nd->key)) {
			GCstr *k = strV(&nd->key);
			if (k->len == len && !memcmp(strdata(k), name, len))
				return &nd->val;
		}
	}
	return NULL;
}

/* VM thread only. A table's references (gc_traverse_tab). */
static void refs_tab(struct walk *w, GCtab *t)
{
	GCtab *mt = tab_of(t->metatable);
	int wk = 0, wv = 0;
	cTValue *mode = snap_field(mt, "__mode", 6);
	if (mode && tvisstr(mode)) {
		const char *m = strVdata(mode);
		wk = strchr(m, 'k') != NULL;
		wv = strchr(m, 'v') != NULL;
	}
#if LJ_HASFFI
	CTState *cts = ctype_ctsG(w->g);
	if (cts && cts->finalizer == t && (wk || wv)) {
		wk = 1;
		wv = 0;
	}
#endif
	if (mt)
		ref_k(w, FORMAT_HREF_METATABLE, obj2gco(mt));
	for (MSize i = 0; i < t->asize; i++) {
		struct rname r = {FORMAT_HREF_ARRAY, wv, i, NULL, 0, NULL};
		ref_tv(w, &r, arrayslot(t, i));
	}
	if (t->hmask == 0)
		return;
	Node *node = noderef(t->node);
	for (MSize i = 0; i <= t->hmask; i++) {
		Node *nd = &node[i];
		if (tvisnil(&nd->val))
			continue;
		if (tvisgcv(&nd->val)) {
			struct rname r = {0, wv, 0, NULL, 0, NULL};
			char num[64];
			if (tvisstr(&nd->key)) {
				r.kind = FORMAT_HREF_FIELD_STR;
				r.s = strVdata(&nd->key);
				r.len = strV(&nd->key)->len;
			} else if (tvisnumber(&nd->key)) {
				r.kind = FORMAT_HREF_FIELD_NUM;
				int l = snprintf(num, sizeof num, "%.17g",
						 numberVnum(&nd->key));
				r.s = num;
				r.len = (size_t)l;
			} else if (tvisgcv(&nd->key)) {
				r.kind = FORMAT_HREF_FIELD_OBJ;
				r.keyobj = gcV(&nd->key);
			} else {
				r.kind = FORMAT_HREF_FIELD_OTHER;
				if (tvisbool(&nd->key))
					r.s = tvistrue(&nd->key) ? "true"
								 : "false";
				else
					r.s = "lightuserdata";
				r.len = strlen(r.s);
			}
			ref(w, &r, gcV(&nd->val));
		}
		if (tvisgcv(&nd->key)) {
			struct rname r = {
			    FORMAT_HREF_KEY, wk, 0, NULL, 0, NULL};
			ref(w, &r, gcV(&nd->key));
		}
	}
}

/* VM thread only. A function's references (gc_traverse_func). */
static void refs_func(struct walk *w, GCfunc *fn)
{
	ref_k(w, FORMAT_HREF_ENV, gcref(fn->c.env));
	if (isluafunc(fn)) {
		GCproto *pt = funcproto(fn);
		ref_k(w, FORMAT_HREF_PROTO, obj2gco(pt));
		for (uint32_t i = 0; i < fn->l.nupvalues; i++) {
			const char *nm = protoname_upvalue(pt, i);
			struct rname r = {FORMAT_HREF_UPVALUE, 0,   i, nm,
					  nm ? strlen(nm) : 0, NULL};
			ref(w, &r, gcref(fn->l.uvptr[i]));
		}
	} else {
		for (uint32_t i = 0; i < fn->c.nupvalues; i++) {
			struct rname r = {
			    FORMAT_HREF_UPVALUE, 0, i, NULL, 0, NULL};
			ref_tv(w, &r, &fn->c.upvalue[i]);
		}
	}
}

/* VM thread only. A trace's references (gc_traverse_trace). */
static void refs_trace(struct walk *w, GCtrace *T)
{
#if LJ_HASJIT
	jit_State *J = G2J(w->g);
	if (T->traceno == 0)
		return;
	for (IRRef i = T->nk; i < REF_TRUE; i++) {
		IRIns *ir = &T->ir[i];
		if (ir->o == IR_KGC) {
			struct rname r = {FORMAT_HREF_TRACE_CONST,
					  0,
					  REF_BIAS - i,
					  NULL,
					  0,
					  NULL};
			ref(w, &r, ir_kgc(ir));
		}
		if (irt_is64(ir->t) && ir->o != IR_KNULL)
			i++;
	}
	static const char *const role[] = {"link", "nextroot", "nextside"};
	TraceNo1 no[3] = {T->link, T->nextroot, T->nextside};
	for (int k = 0; k < 3; k++) {
		if (!no[k] || no[k] >= J->sizetrace || no[k] == T->traceno ||
		    !traceref(J, no[k]) || traceref(J, no[k]) == &J->cur)
			continue; /* the trace being recorded is no object */
		struct rname r = {FORMAT_HREF_TRACE, 0,	  0, role[k],
				  strlen(role[k]),   NULL};
		ref(w, &r, obj2gco(traceref(J, no[k])));
	}
	ref_k(w, FORMAT_HREF_PROTO, gcref(T->startpt));
#else
	(void)w;
	(void)T;
#endif
}

/* VM thread only. A prototype's references (gc_traverse_proto). */
static void refs_proto(struct walk *w, GCproto *pt)
{
	ref_k(w, FORMAT_HREF_CHUNKNAME, obj2gco(proto_chunkname(pt)));
	for (ptrdiff_t i = -(ptrdiff_t)pt->sizekgc; i < 0; i++) {
		struct rname r = {
		    FORMAT_HREF_CONST, 0, (uint64_t)(-i - 1), NULL, 0, NULL};
		ref(w, &r, proto_kgc(pt, i));
	}
#if LJ_HASJIT
	jit_State *J = G2J(w->g);
	if (pt->trace && pt->trace < J->sizetrace && traceref(J, pt->trace) &&
	    traceref(J, pt->trace) != &J->cur) {
		struct rname r = {FORMAT_HREF_TRACE, 0, 0, "root", 4, NULL};
		ref(w, &r, obj2gco(traceref(J, pt->trace)));
	}
#endif
}

/* VM thread only. The bytecode position frame fr (index k in w->fr)
** executes, or NO_BCPOS (lj_debug.c's debug_framepc, the simple cases). */
static BCPos frame_pos(struct walk *w, lua_State *th, size_t k, GCfunc *fn)
{
	const BCIns *ins = NULL;
	if (!isluafunc(fn))
		return NO_BCPOS;
	if (k == 0) {
		void *cf = th == w->L ? cframe_raw(th->cframe) : NULL;
		if (cf && (char *)cframe_pc(cf) != (char *)cframe_L(cf))
			ins = cframe_pc(cf);
	} else {
		TValue *next = w->fr[k - 1];
		if (frame_islua(next))
			ins = frame_pc(next);
		else if (frame_iscont(next))
			ins = frame_contpc(next);
	}
	GCproto *pt = funcproto(fn);
	const BCIns *bc = proto_bc(pt);
	if (!ins || ins <= bc || ins > bc + pt->sizebc)
		return NO_BCPOS;
	return proto_bcpos(pt, ins) - 1;
}

/* VM thread only. A thread's references (gc_traverse_thread): its stack
** up to its top, each slot named by its frame and local. */
static void refs_thread(struct walk *w, lua_State *th)
{
	TValue *bot = tvref(th->stack), *top = th->top;
	ref_k(w, FORMAT_HREF_ENV, gcref(th->env));
	for (GCobj *uv = gcref(th->openupval); uv; uv = gcref(uv->gch.nextgc))
		ref_k(w, FORMAT_HREF_OPENUPVAL, uv);
	w->nfr = 0;
	if (w->emit)
		for (TValue *f = th->base - 1; f > bot + LJ_FR2;
		     f = frame_prev(f)) {
			if (w->nfr == w->frcap) {
				size_t nc = w->frcap ? w->frcap * 2 : 64;
				TValue **nf = realloc(w->fr, nc * sizeof *nf);
				if (!nf) {
					w->err = -ENOMEM;
					break;
				}
				w->fr = nf;
				w->frcap = nc;
			}
			w->fr[w->nfr++] = f;
		}
	size_t k = 0;
	BCPos pos = NO_BCPOS;
	GCfunc *fn = NULL;
	for (TValue *o = bot + 1 + LJ_FR2; o < top; o++) {
		if (!tvisgcv(o))
			continue;
		struct rname r = {
		    FORMAT_HREF_STACK, 0, (uint64_t)(o - bot), NULL, 0, NULL};
		if (w->emit && w->nfr) {
			/* The innermost frame below o, from the outermost. */
			size_t j = w->nfr;
			while (j > 0 && w->fr[j - 1] < o)
				j--;
			if (j < w->nfr) {
				if (j != k || !fn) {
					k = j;
					fn = frame_func(w->fr[k]);
					pos = frame_pos(w, th, k, fn);
				}
				r.keyobj = obj2gco(fn);
				BCReg slot = (BCReg)(o - (w->fr[k] + 1));
				const char *nm =
				    pos != NO_BCPOS
					? protoname_local(funcproto(fn), pos,
							  slot)
					: NULL;
				if (nm) {
					r.s = nm;
					r.len = strlen(nm);
				}
			}
		}
		ref(w, &r, gcV(o));
	}
}

/* VM thread only. A userdata's references (gc_mark). */
static void refs_udata(struct walk *w, GCudata *ud)
{
	ref_k(w, FORMAT_HREF_METATABLE, gcref(ud->metatable));
	ref_k(w, FORMAT_HREF_ENV, gcref(ud->env));
#if LJ_HASBUFFER
	if (ud->udtype == UDTYPE_BUFFER) {
		SBufExt *sbx = (SBufExt *)uddata(ud);
		if (sbufiscow(sbx) && gcref(sbx->cowref))
			ref_k(w, FORMAT_HREF_BUFFER, gcref(sbx->cowref));
	}
#endif
}

/* VM thread only. See snap_int.h. */
void snap_refs(struct walk *w, GCobj *o)
{
	if (is_dead(w, o))
		return;
	switch (o->gch.gct) {
	case ~LJ_TUPVAL: {
		struct rname r = {FORMAT_HREF_VALUE, 0, 0, NULL, 0, NULL};
		ref_tv(w, &r, uvval(&o->uv));
		break;
	}
	case ~LJ_TTHREAD: refs_thread(w, &o->th); break;
	case ~LJ_TPROTO: refs_proto(w, &o->pt); break;
	case ~LJ_TFUNC: refs_func(w, &o->fn); break;
	case ~LJ_TTRACE: refs_trace(w, (GCtrace *)o); break;
	case ~LJ_TTAB: refs_tab(w, &o->tab); break;
	case ~LJ_TUDATA: refs_udata(w, &o->ud); break;
	default: break;
	}
}

/* -- Roots ---------------------------------------------------------------------- */

/* VM thread only. One root: reach it, or write its ROOT record. */
static void root(struct walk *w, const char *name, GCobj *o)
{
	if (!o)
		return;
	if (!w->emit) {
		reach(w, o);
		return;
	}
	snap_rec_root(w, name, id_of(w, o));
}

/* VM thread only. See snap_int.h: the roots of gc_mark_start, the
** finalizer list, the trace being recorded. */
void snap_roots(struct walk *w)
{
	global_State *g = w->g;
	char nm[48];
	root(w, "main thread", obj2gco(mainthread(g)));
	root(w, "main thread env", gcref(mainthread(g)->env));
	if (tvisgcv(&g->registrytv))
		root(w, "registry", gcV(&g->registrytv));
	for (int i = 0; i < GCROOT_MAX; i++) {
		GCobj *o = gcref(g->gcroot[i]);
		if (!o)
			continue;
		if (i < GCROOT_BASEMT)
			snprintf(nm, sizeof nm, "metamethod name %d", i);
		else if (i <= GCROOT_BASEMT_NUM)
			snprintf(nm, sizeof nm, "base metatable %d",
				 i - GCROOT_BASEMT);
		else
			snprintf(nm, sizeof nm, "%s",
				 i == GCROOT_IO_INPUT ? "io input"
						      : "io output");
		root(w, nm, o);
	}
	GCobj *last = gcref(g->gc.mmudata);
	if (last) {
		GCobj *o = last;
		do {
			o = gcref(o->gch.nextgc);
			root(w, "finalizer pending", o);
		} while (o != last);
	}
#if LJ_HASJIT
	jit_State *J = G2J(g);
	if (J->state != LJ_TRACE_IDLE && J->cur.traceno) {
		GCtrace *T = &J->cur;
		for (IRRef i = T->nk; T->ir && i < REF_TRUE; i++) {
			IRIns *ir = &T->ir[i];
			if (ir->o == IR_KGC)
				root(w, "trace being recorded", ir_kgc(ir));
			if (irt_is64(ir->t) && ir->o != IR_KNULL)
				i++;
		}
		root(w, "trace being recorded", gcref(T->startpt));
	}
#endif
}

/* -- Every object ---------------------------------------------------------------- */

/* VM thread only. See snap_int.h. */
void snap_enumerate(struct walk *w)
{
	global_State *g = w->g;
	for (GCobj *o = gcref(g->gc.root); o && !w->err;
	     o = gcref(o->gch.nextgc))
		add(w, o);
	GCobj *last = gcref(g->gc.mmudata);
	if (last) {
		GCobj *o = last;
		do {
			o = gcref(o->gch.nextgc);
			add(w, o);
		} while (o != last && !w->err);
	}
	for (MSize i = 0; i <= g->str.mask && !w->err; i++)
		for (GCobj *o =
			 (GCobj *)(gcrefu(g->str.tab[i]) & ~(uintptr_t)1);
		     o; o = gcref(o->gch.nextgc))
			add(w, o);
	size_t n = w->n;
	for (size_t i = 0; i < n && !w->err; i++) {
		GCobj *o = w->v[i].o;
		if (o->gch.gct != (uint8_t)~LJ_TTHREAD || is_dead(w, o))
			continue;
		for (GCobj *uv = gcref(o->th.openupval); uv;
		     uv = gcref(uv->gch.nextgc))
			add(w, uv);
	}
}
