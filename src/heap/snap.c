/*
** ljlog heap snapshots: walk a VM's object graph into HEAP blocks.
** Our own memory only (malloc): the VM's allocator, its mark bits and its
** metamethods are never touched, so a snapshot runs in any GC state.
*/
#include "heap/snap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lj_str.h"
#include "lj_buf.h"
#include "lj_ir.h"
#include "lj_tab.h"
#include "maps/protoname.h"
#include "stat/clock.h"

/* A HEAP block is closed once its payload passes this many bytes. */
#define BLOCK_SOFT (1u << 20)

/* No bytecode position (lj_debug.c). */
#define NO_BCPOS (~(BCPos)0)

/* Bytes of a string's text in its OBJECT record. */
#define TEXT_STR 32

/* One object of the snapshot. */
struct obj {
	GCobj *o;
	uint64_t id;   /* heap ID */
	uint64_t size; /* bytes, as LuaJIT frees it */
	uint8_t reached;
	uint32_t rstart; /* its reference targets in walk.ri from here + 1 */
};

/* The name of a reference, by kind (FORMAT_HREF_*). */
struct rname {
	unsigned kind;
	int weak;
	uint64_t n;    /* index, slot, IR ref */
	const char *s; /* name text (NULL: "") */
	size_t len;    /* its length */
	GCobj *keyobj; /* FIELD_OBJ: the key; STACK: the frame's function */
};

struct walk {
	global_State *g;
	lua_State *L; /* the thread taking the snapshot */
	struct snap_vm *s;
	struct obj *v; /* objects */
	size_t n, cap;
	uint32_t *stk; /* work stack of indexes */
	size_t sp, scap;
	int sweeping; /* the GC is sweeping: dead objects are not read */
	int emit;     /* 0: mark pass, 1: write pass */
	int err;      /* first error */
	struct wbuf *out;
	size_t blk;	/* offset of the open block, (size_t)-1 none */
	uintptr_t addr; /* the block's last OBJECT's addr (0 at its start) */
	uint64_t pid;	/* and its heap ID (version 16: IDs as differences) */
	uint64_t cur;	/* its last reference's target (its own ID at first) */
	uint64_t aprev; /* its last array reference's index */
	unsigned nblocks;
	uint64_t vm_id;
	TValue **fr; /* frames of one thread, innermost first */
	size_t nfr, frcap;
	/* The mark pass keeps each walked object's reference targets (index +
	** 1, in the order refs() meets them) so that the write pass, which
	** meets the same ones in the same order, needs no address lookup. */
	uint32_t *ri;
	size_t rn, rcap;
	int rec;     /* mark pass: keeping them (0: stopped, out of memory) */
	size_t rcur; /* write pass: the next to replay + 1, 0 none */
};

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

/* VM thread only. The address LuaJIT allocated o at (a VLA cdata starts
** before its header): what the allocator sees freed. */
static uintptr_t obj_base(GCobj *o)
{
#if LJ_HASFFI
	if (o->gch.gct == (uint8_t)~LJ_TCDATA && cdataisv(&o->cd))
		return (uintptr_t)memcdatav(&o->cd);
#endif
	return (uintptr_t)o;
}

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

/* -- Output ------------------------------------------------------------------ */

/* VM thread only. Room for n bytes in the open block, or NULL (err set). */
static uint8_t *room(struct walk *w, size_t n)
{
	uint8_t *p = w->err ? NULL : wbuf_room(w->out, n);
	if (!p)
		w->err = -ENOMEM;
	return p;
}

static void put_u8(struct walk *w, unsigned v)
{
	uint8_t *p = room(w, 1);
	if (p) {
		*p = (uint8_t)v;
		w->out->len++;
	}
}

static void put_uleb(struct walk *w, uint64_t v)
{
	uint8_t *p = room(w, BLOCKS_ULEB_MAX);
	if (p)
		w->out->len = (size_t)(blocks_uleb_put(p, v) - w->out->p);
}

static void put_sleb(struct walk *w, int64_t v)
{
	uint8_t *p = room(w, BLOCKS_ULEB_MAX);
	if (p)
		w->out->len = (size_t)(blocks_sleb_put(p, v) - w->out->p);
}

static void put_str(struct walk *w, const char *s, size_t len)
{
	uint8_t *p = room(w, BLOCKS_ULEB_MAX + len);
	if (p)
		w->out->len = (size_t)(blocks_str_put(p, s, len) - w->out->p);
}

/* VM thread only. Open a HEAP block when none is open. */
static void block_open(struct walk *w)
{
	if (w->blk != (size_t)-1 || w->err)
		return;
	w->blk = writer_block_begin(w->out);
	if (w->blk == (size_t)-1) {
		w->err = -ENOMEM;
		return;
	}
	put_uleb(w, w->vm_id);
	put_uleb(w, w->s->seq);
	w->addr = 0;
	w->pid = 0;
}

/* VM thread only. Close the open block (force), or when it is large. */
static void block_close(struct walk *w, int force)
{
	if (w->blk == (size_t)-1 || w->err)
		return;
	if (!force && w->out->len - w->blk < BLOCK_SOFT)
		return;
	writer_block_end(w->out, w->blk, FORMAT_KIND_HEAP);
	w->blk = (size_t)-1;
	w->nblocks++;
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

/* VM thread only. 1 when o must not be read: the GC is sweeping and o is
** dead (what it points to may be freed already). */
static int is_dead(struct walk *w, GCobj *o)
{
	return w->sweeping && isdead(w->g, o);
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

/* VM thread only. One reference to target, named by r. */
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
	put_u8(w, r->kind | (r->weak ? FORMAT_HREF_WEAK : 0));
	switch (r->kind) {
	case FORMAT_HREF_ARRAY: /* from the one before (in order) */
		put_sleb(w, (int64_t)(r->n - w->aprev));
		w->aprev = r->n;
		break;
	case FORMAT_HREF_CONST:
	case FORMAT_HREF_TRACE_CONST: put_uleb(w, r->n); break;
	case FORMAT_HREF_FIELD_STR:
	case FORMAT_HREF_FIELD_NUM:
	case FORMAT_HREF_FIELD_OTHER:
	case FORMAT_HREF_TRACE: put_str(w, r->s ? r->s : "", r->len); break;
	case FORMAT_HREF_FIELD_OBJ: put_uleb(w, id_of(w, r->keyobj)); break;
	case FORMAT_HREF_UPVALUE:
		put_uleb(w, r->n);
		put_str(w, r->s ? r->s : "", r->len);
		break;
	case FORMAT_HREF_STACK:
		put_uleb(w, r->n);
		put_uleb(w, id_of(w, r->keyobj));
		put_str(w, r->s ? r->s : "", r->len);
		break;
	default: break;
	}
	/* From the reference before (the object's own ID at first): a
	** table's array slots hold objects made one after the other. */
	uint64_t id = target_id(w, target);
	put_sleb(w, (int64_t)(id - w->cur));
	w->cur = id;
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

/* Any context. The table r holds, or NULL (no member access through a
** null pointer, as tabref() would make). */
static GCtab *tab_of(GCRef r)
{
	GCobj *o = gcref(r);
	return o ? &o->tab : NULL;
}

/* VM thread only. t's string-keyed field `name`, or NULL (a raw lookup:
** no metamethod, no cache written). */
static cTValue *field(GCtab *t, const char *name, size_t len)
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
	cTValue *mode = field(mt, "__mode", 6);
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

/* VM thread only. Every reference of o. */
static void refs(struct walk *w, GCobj *o)
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
	block_open(w);
	put_u8(w, FORMAT_HEAP_ROOT);
	put_str(w, name, strlen(name));
	put_uleb(w, id_of(w, o));
}

/* VM thread only. Every root the GC marks from (gc_mark_start, the
** finalizer list, the trace being recorded). */
static void roots(struct walk *w)
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

/* -- Objects' text ---------------------------------------------------------------- */

/* VM thread only. "name" of metatable mt: its __name field, else "". */
static size_t mt_name(GCtab *mt, char *buf, size_t cap)
{
	cTValue *tv = field(mt, "__name", 6);
	if (!tv || !tvisstr(tv))
		return 0;
	return (size_t)snprintf(buf, cap, " mt %.*s", (int)strV(tv)->len,
				strVdata(tv));
}

/* VM thread only. The short text of o's OBJECT record, into buf. */
static size_t obj_text(struct walk *w, GCobj *o, char *buf, size_t cap)
{
	int n = 0;
	switch (o->gch.gct) {
	case ~LJ_TSTR: {
		size_t len = o->str.len < TEXT_STR ? o->str.len : TEXT_STR;
		memcpy(buf, strdata(&o->str), len);
		return len;
	}
	case ~LJ_TUPVAL:
		n = snprintf(buf, cap, "%s", o->uv.closed ? "closed" : "open");
		break;
	case ~LJ_TTHREAD:
		n = snprintf(buf, cap, "%s",
			     &o->th == mainthread(w->g) ? "main thread"
							: "coroutine");
		break;
	case ~LJ_TPROTO: {
		const char *c = strdata(proto_chunkname(&o->pt));
		n = snprintf(buf, cap, "%.200s:%u",
			     c + (*c == '@' || *c == '='),
			     (unsigned)o->pt.firstline);
		break;
	}
	case ~LJ_TFUNC:
		if (isluafunc(&o->fn)) {
			GCproto *pt = funcproto(&o->fn);
			const char *c = strdata(proto_chunkname(pt));
			n = snprintf(buf, cap, "%.200s:%u",
				     c + (*c == '@' || *c == '='),
				     (unsigned)pt->firstline);
		} else if (o->fn.c.ffid > FF_C) {
			n = snprintf(buf, cap, "builtin #%u",
				     (unsigned)o->fn.c.ffid);
		} else {
			n = snprintf(buf, cap, "C %p",
				     (void *)(uintptr_t)o->fn.c.f);
		}
		break;
	case ~LJ_TTRACE:
		n = snprintf(buf, cap, "trace %u",
			     (unsigned)((GCtrace *)o)->traceno);
		break;
#if LJ_HASFFI
	case ~LJ_TCDATA:
		n = snprintf(buf, cap, "ctype %u", (unsigned)o->cd.ctypeid);
		break;
#endif
	case ~LJ_TTAB: /* its sizes are numbers before the text */
		if (!is_dead(w, o))
			n = (int)mt_name(tab_of(o->tab.metatable), buf, cap);
		break;
	case ~LJ_TUDATA:
		n = snprintf(buf, cap, "%u bytes", (unsigned)o->ud.len);
		if (!is_dead(w, o) && n > 0 && (size_t)n < cap)
			n += (int)mt_name(tab_of(o->ud.metatable), buf + n,
					  cap - (size_t)n);
		break;
	default: break;
	}
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* -- The snapshot -------------------------------------------------------------------- */

/* VM thread only. Every object the VM holds: the GC's list (the main
** thread and userdata included), the finalizer list, the strings and the
** open upvalues. */
static void enumerate(struct walk *w)
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

/* A named allocation that is no object. */
struct part {
	const char *name;
	uint64_t bytes;
};

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

/* VM thread only. Write object i's OBJECT record with its references. */
static void emit_obj(struct walk *w, size_t i)
{
	char text[256];
	struct obj *ob = &w->v[i];
	block_open(w);
	put_u8(w, FORMAT_HEAP_OBJECT);
	put_sleb(w, (int64_t)(ob->id - w->pid));
	w->pid = w->cur = ob->id;
	w->aprev = 0;
	uintptr_t a = obj_base(ob->o);
	put_sleb(w, (int64_t)(a - w->addr));
	w->addr = a;
	put_u8(w, ((unsigned)(ob->o->gch.gct - (uint8_t)~LJ_TSTR) + 1) |
		      (ob->reached ? 0 : FORMAT_HTYPE_UNREACHABLE));
	put_uleb(w, ob->size);
	if (ob->o->gch.gct == (uint8_t)~LJ_TTAB) {
		GCtab *t = &ob->o->tab;
		put_uleb(w, t->asize);
		put_uleb(w, t->hmask ? (uint64_t)t->hmask + 1 : 0);
	}
	size_t tl = obj_text(w, ob->o, text, sizeof text);
	put_str(w, text, tl);
	w->rcur = ob->rstart;
	refs(w, ob->o);
	w->rcur = 0;
	put_u8(w, 0);
	block_close(w, 0);
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
	enumerate(&w);
	roots(&w);
	while (w.sp && !w.err) {
		size_t i = w.stk[--w.sp], start = w.rn + 1;
		w.rec = 1;
		refs(&w, w.v[i].o);
		/* Kept whole, or not replayed at all. */
		w.v[i].rstart =
		    w.rec && start <= UINT32_MAX ? (uint32_t)start : 0;
		w.rec = 0;
	}
	/* Write: objects with their references, roots, the summary. */
	w.emit = 1;
	uint64_t bytes = 0, unreached = 0;
	for (size_t i = 0; i < w.n && !w.err; i++) {
		emit_obj(&w, i);
		bytes += w.v[i].size;
		unreached += !w.v[i].reached;
	}
	roots(&w);
	struct part p[16];
	size_t np = parts(&w, p);
	block_open(&w);
	put_u8(&w, FORMAT_HEAP_SUMMARY);
	put_uleb(&w, c.counter);
	put_uleb(&w, c.mono_ns);
	put_uleb(&w, c.real_ns);
	put_u8(&w, g->gc.state);
	put_uleb(&w, w.n);
	put_uleb(&w, bytes);
	put_uleb(&w, unreached);
	put_uleb(&w, g->gc.total);
	put_uleb(&w, np);
	for (size_t i = 0; i < np; i++) {
		put_str(&w, p[i].name, strlen(p[i].name));
		put_uleb(&w, p[i].bytes);
	}
	put_uleb(&w, clock_mono_ns() - t0);
	block_close(&w, 1);

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
