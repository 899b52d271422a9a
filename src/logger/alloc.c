/*
** ljlog allocator wrapper.
** Every free of a mapped address forgets its ID; entering a sweep phase
** flushes first, because sweeping frees prototypes, coroutines and traces.
*/
#define _GNU_SOURCE /* secure_getenv */
#include "logger/alloc.h"

#include <stdlib.h>

#include "logger/logger.h"
#include "maps/texit.h"

#define MIN_MAPPED                                                             \
	(sizeof(GCproto) < sizeof(lua_State) ? sizeof(GCproto)                 \
					     : sizeof(lua_State))

/* Every Lua stack (LuaJIT's smallest: LJ_STACK_START + LJ_STACK_EXTRA
** slots) is at least MIN_MAPPED bytes: a smaller block is no stack. */
_Static_assert((LUA_MINSTACK * 2 + 5) * sizeof(TValue) >= MIN_MAPPED,
	       "a Lua stack may be smaller than MIN_MAPPED");

/* -- Records ------------------------------------------------------------------- */

/* VM thread only (allocator). The ALLOC record of np (nsize bytes) at x
** (site word) with its key, at p (from logger_reserve). */
static inline __attribute__((always_inline)) void
put_alloc(struct logger_vm *vm, uint64_t *p, uint64_t ts, uint64_t x,
	  uint64_t key, void *np, size_t nsize)
{
	logger_commit(
	    vm, buf_put_alloc(p, ts, x, key, (uint64_t)(uintptr_t)np, nsize));
}

/* VM thread only (allocator). The FREE record of ptr (osize bytes). */
static inline __attribute__((always_inline)) void
put_free(struct logger_vm *vm, uint64_t *p, uint64_t ts, void *ptr,
	 size_t osize)
{
	logger_commit(vm, buf_put_free(p, ts, (uint64_t)(uintptr_t)ptr, osize));
}

/* -- Sites ---------------------------------------------------------------------- */

/* Any thread (attach). See alloc.h. */
unsigned alloc_trace_scan_words(void)
{
	const char *e = secure_getenv("LJLOG_TEST_TRACE_SCAN");
	if (!e || !*e)
		return ALLOC_TRACE_SCAN;
	unsigned long n = strtoul(e, NULL, 10);
	return n > ALLOC_TRACE_SCAN ? ALLOC_TRACE_SCAN : (unsigned)n;
}

/* VM thread only, inside an allocation made by C code that trace code
** [lo, lo + len) called. 1 + the offset into that code of the call's
** return address minus 1 (as a sample's pcofs), from the first word on the
** C stack above this frame that points into the trace; 0 when none does
** within vm->trace_scan words. The word where the last one was found is
** tried first: the C code between a trace and here is mostly the same
** (lj_tab_new1, lj_mem_newgco). Words above the return address belong to
** the trace's frame and the interpreter's, which hold no address in a
** trace's code (it is entered by a jump). The words read belong to the
** callers' frames: not instrumented (their redzones are not ours). */
static UTIL_NOINLINE __attribute__((no_sanitize_address)) uint64_t
trace_retofs(struct logger_vm *vm, uintptr_t lo, uintptr_t len)
{
	const uintptr_t *sp = __builtin_frame_address(0);
	unsigned n = vm->trace_scan, i = vm->trace_slot;
	uintptr_t v = sp[i];
	if (UTIL_LIKELY(i < n && v > lo && v - lo < len))
		return v - lo;
	for (i = 0; i < n; i++) {
		v = sp[i];
		if (v > lo && v - lo < len) {
			vm->trace_slot = i;
			return v - lo;
		}
	}
	return 0;
}

#if LJ_TARGET_ARM64
/* VM thread only (allocator). The trace whose code holds address v, or
** NULL. Its machine code areas first: a word outside them is no trace's. */
static GCtrace *trace_holding(jit_State *J, uintptr_t v)
{
	int in = 0;
	for (MCLink *l = (MCLink *)J->mcarea; l && !in; l = (MCLink *)l->next)
		in = v > (uintptr_t)l && v - (uintptr_t)l < l->size;
	if (!in)
		return NULL;
	for (MSize k = 1; k < J->sizetrace; k++) {
		GCtrace *T = traceref(J, k);
		uintptr_t lo = T ? (uintptr_t)T->mcode : 0;
		if (T && v > lo && v - lo < T->szmcode)
			return T;
	}
	return NULL;
}

/* VM thread only (allocator). The depth cache's entry for return address
** r. */
static struct alloc_depth *depth_slot(struct logger_vm *vm, uintptr_t r)
{
	return &vm->trace_depths[(r >> 2) * 0x9e3779b97f4a7c15ull >> 56 &
				 (ALLOC_DEPTHS - 1)];
}

/* VM thread only (allocator). Whether a call from return address r with
** C stack depth d below its trace's frame has been seen: 1 yes, -1 not
** at that depth (r was seen at others), 0 r not seen. */
static int depth_known(struct logger_vm *vm, uintptr_t r, uint32_t d)
{
	struct alloc_depth *e = depth_slot(vm, r);
	if (e->ret != r)
		return 0;
	return e->depth[0] == d || e->depth[1] == d ? 1 : -1;
}

/* VM thread only (allocator). Remember a call from r at depth d. */
static void depth_learn(struct logger_vm *vm, uintptr_t r, uint32_t d)
{
	struct alloc_depth *e = depth_slot(vm, r);
	if (e->ret != r)
		*e = (struct alloc_depth){r, {d, d}};
	else if (e->depth[0] != d)
		e->depth[1] = e->depth[0], e->depth[0] = d;
}

/* VM thread only (allocator), in compiled code on arm64, whose VM stores
** trace 0 in vmstate (vm_arm64.dasc: "Traces on ARM64 don't store the
** trace #, so use 0"). The trace the allocating C code was called from,
** with the return address into it in *ret; NULL when not found. The stack
** is read from the interpreter's C frame cf down to this frame, and a word
** counts only in the slot where the trace it points into has its callee
** save it (texit_ret_slot). Two traces with spill areas of different
** sizes can both pass, one word stale: the running trace's callee's
** frame, and the C frames below down to this one, take as much stack
** (cf - here - 16 - T->spadjust) as on the call's earlier runs. That
** depth is learnt from the calls where one word passes, or one is left
** once those seen before at other depths are set aside; where several
** pass, the one seen at this depth is taken, else the highest left. The
** words read belong to the callers' frames: not instrumented (their
** redzones are not ours). */
static UTIL_NOINLINE __attribute__((no_sanitize_address)) GCtrace *
trace_by_ret(struct logger_vm *vm, jit_State *J, uintptr_t *ret)
{
	lua_State *L = gco2th(gcref(vm->g->cur_L));
	uintptr_t lo = (uintptr_t)__builtin_frame_address(0);
	uintptr_t cf = (uintptr_t)cframe_raw(L->cframe);
	if (!vm->trace_scan || cf <= lo + 24 || cf - lo > 65536)
		return NULL;
	uint32_t below = (uint32_t)(cf - lo - 16);
	GCtrace *first = NULL, *left = NULL, *known = NULL;
	uintptr_t r0 = 0, rl = 0, rk = 0;
	int nleft = 0;
	for (uintptr_t p = cf - 24; p >= lo && !known; p -= 8) {
		uintptr_t v = *(const uintptr_t *)p;
		GCtrace *T = trace_holding(J, v);
		if (!T || !texit_ret_slot(T, cf, p, v))
			continue;
		if (!first)
			first = T, r0 = v;
		int k = depth_known(vm, v, below - T->spadjust);
		if (k > 0)
			known = T, rk = v;
		else if (k == 0 && !nleft++)
			left = T, rl = v;
	}
	if (known) {
		*ret = rk;
		return known;
	}
	if (nleft == 1)
		depth_learn(vm, rl, below - left->spadjust);
	*ret = left ? rl : r0;
	return left ? left : first;
}
#endif

/* VM thread only (allocator). The site of an allocation made by the
** function running on the current coroutine (see site_of); rec: the VM
** says RECORD (see site_rec), where anything but a Lua function's frame
** with its PC is the recorder's own. */
static inline __attribute__((always_inline)) uint64_t
frame_site(struct logger_vm *vm, void *ptr, uint64_t *key, lua_State **co,
	   int rec)
{
	global_State *g = vm->g;
	lua_State *L = &gcref(g->cur_L)->th;
	if (!gcref(g->cur_L))
		return rec ? FORMAT_SITE_JIT : FORMAT_SITE_INTERNAL;
	TValue *stack = tvref(L->stack), *base = L->base;
	/* The Lua stack itself is being reallocated: don't read frames. */
	if (ptr == (void *)stack)
		return rec ? FORMAT_SITE_JIT : FORMAT_SITE_INTERNAL;
	if (base <= stack + 1 + LJ_FR2 || base > tvref(L->maxstack))
		return rec ? FORMAT_SITE_JIT : FORMAT_SITE_INTERNAL;
	/* A fast function may have written its results over its own frame
	** before it allocates (an error message): check the slot's type tag
	** before following it. */
	GCfunc *fn = ljwin_frame_func(base - 1);
	if (!fn)
		return rec ? FORMAT_SITE_JIT : FORMAT_SITE_UNKNOWN;
	if (rec && !isluafunc(fn))
		return FORMAT_SITE_JIT;
	/* One of ljlog's own C functions (luaopen_ljlog, its module's): the
	** objects it makes are ljlog's. */
	if (!isluafunc(fn) && util_in_own((uintptr_t)fn->c.f))
		return FORMAT_SITE_LJLOG;
	*co = L;
	if (isluafunc(fn)) {
		GCproto *pt = funcproto(fn);
		void *cf = cframe_raw(L->cframe);
		const BCIns *pc = cf ? cframe_pc(cf) : NULL, *bc = proto_bc(pt);
		/* The saved PC must lie in this function, else the frame is
		** not what it seems: say unknown rather than a wrong name. */
		if (!(pc > bc && pc <= bc + pt->sizebc)) {
			*co = NULL;
			return rec ? FORMAT_SITE_JIT : FORMAT_SITE_UNKNOWN;
		}
		uint32_t line = ljwin_proto_line(pt, proto_bcpos(pt, pc) - 1);
		*key = (uint64_t)(uintptr_t)pt;
		return FORMAT_SITE_LUA | MAPPER_PROTO << 4 |
		       (uint64_t)line << 8;
	}
	if (fn->c.ffid > FF_C) {
		*key =
		    fn->c.ffid | (ljwin_is_asm_ff(g, fn) ? MAPPER_FF_ASM : 0);
		return FORMAT_SITE_C | MAPPER_FFUNC << 4;
	}
	*key = (uint64_t)(uintptr_t)fn->c.f;
	return FORMAT_SITE_C | MAPPER_CFUNC << 4;
}

/* VM thread only (allocator), vmstate RECORD. While a trace is recorded,
** vmstate stays RECORD when the interpreter runs the instruction just
** recorded: an allocation made there is the Lua function's, at its line.
** The recorder itself runs inside lj_vm_cpcall, whose C frame saves no PC
** of the function: the PC check of frame_site tells them apart. */
static UTIL_NOINLINE uint64_t site_rec(struct logger_vm *vm, void *ptr,
				       uint64_t *key, lua_State **co)
{
	return frame_site(vm, ptr, key, co, 1);
}

/* VM thread only (allocator). The site of a table or cdata that trace T
** sank and makes now where it escapes: in T's code where the constructor
** was (texit_sunk), so that its line is the constructor's, as with the
** JIT off (or -O-sink), not the line where it escapes. */
static uint64_t trace_site(GCtrace *T, uint32_t mcofs, unsigned cls,
			   uint64_t *key)
{
	*key = (uint64_t)(uintptr_t)T;
	return FORMAT_SITE_TRACE | MAPPER_TRACE << 4 |
	       BUF_SITE_TRACE((uint64_t)mcofs + 1, (uint64_t)T->traceno) |
	       BUF_SITE_CLASS(cls);
}

/* VM thread only (allocator), vmstate EXIT, a new block. A trace exit
** restores its snapshot (lj_snap_restore), making the allocations the
** trace sank that the snapshot holds: charge them to their constructor.
** 0 when the exit's snapshot sank none. */
static UTIL_NOINLINE uint64_t site_unsink(struct logger_vm *vm, uint64_t *key)
{
	jit_State *J = G2J(vm->g);
	GCtrace *T = J->parent && J->parent < J->sizetrace
			 ? traceref(J, J->parent)
			 : NULL;
	uint32_t mcofs;
	unsigned cls;
	if (!T || !texit_sunk(T, (SnapNo)J->exitno, &mcofs, &cls))
		return 0;
	return trace_site(T, mcofs, cls, key);
}

/* VM thread only (allocator), in side trace T, at 1 + ofs of its code.
** Before its first snapshot, a side trace remakes what its parent sank at
** the exit it starts from (lj_snap_replay): the constructor's site in the
** parent; else 0 (T's own site). */
static UTIL_NOINLINE uint64_t site_replay(jit_State *J, GCtrace *T,
					  uint64_t ofs, uint64_t *key)
{
	uint32_t mcofs;
	unsigned cls;
	SnapNo e;
	GCtrace *P;
	if ((T->nsnap < 2 || ofs - 1 < texit_ofs(T, 1)) &&
	    (P = texit_parent(J, T, &e)) != NULL &&
	    texit_sunk(P, e, &mcofs, &cls))
		return trace_site(P, mcofs, cls, key);
	return 0;
}

/* VM thread only (allocator). Site word (buf.h) of an allocation happening
** now; *key gets the site's pointer or ffid. ptr is the block being
** reallocated (or NULL). In compiled code: the running trace, and where in
** it from the return address of its call into the allocating C code (the
** reader maps it to the snapshot there: with the per-line snapshots that
** jitev.c has the traces that may allocate carry, the allocating line). */
static inline __attribute__((always_inline)) uint64_t
site_of(struct logger_vm *vm, void *ptr, uint64_t *key, lua_State **co)
{
	global_State *g = vm->g;
	int32_t st = g->vmstate;
	*co = NULL;
	if (st >= 0) { /* compiled code: the running trace, where in it */
		jit_State *J = G2J(g);
		GCtrace *T = (MSize)st < J->sizetrace ? traceref(J, st) : NULL;
		uint64_t ofs;
#if LJ_TARGET_ARM64
		if (!T) {
			uintptr_t r = 0;
			if (!(T = trace_by_ret(vm, J, &r)))
				return FORMAT_SITE_TRACE;
			st = (int32_t)T->traceno;
			ofs = r - (uintptr_t)T->mcode;
		} else
#endif
		{
			if (!T)
				return FORMAT_SITE_TRACE;
			ofs = trace_retofs(vm, (uintptr_t)T->mcode, T->szmcode);
		}
		uint64_t rx;
		if (UTIL_UNLIKELY(T->root) && ofs &&
		    (rx = site_replay(J, T, ofs, key)) != 0)
			return rx;
		*key = (uint64_t)(uintptr_t)T;
		/* Sampled: what the code called, which the snapshot's
		** lines (texit_alloc_lines) tell apart. */
		uint64_t cls =
		    vm->alloc_rate && ofs
			? texit_call_class(T, (uint32_t)ofs, &vm->jit.callees)
			: TEXIT_ANY;
		return FORMAT_SITE_TRACE | MAPPER_TRACE << 4 |
		       BUF_SITE_TRACE(ofs, (uint64_t)st) | BUF_SITE_CLASS(cls);
	}
	switch (~st) {
	case LJ_VMST_GC: return FORMAT_SITE_GC;
	case LJ_VMST_EXIT:
		if (!ptr) {
			uint64_t x = site_unsink(vm, key);
			if (x)
				return x;
		}
		break;
	case LJ_VMST_RECORD: return site_rec(vm, ptr, key, co);
	case LJ_VMST_OPT:
	case LJ_VMST_ASM: return FORMAT_SITE_JIT;
	default: break;
	}
	return frame_site(vm, ptr, key, co, 0);
}

/* -- GC phases ------------------------------------------------------------------- */

/* VM thread only. The GC moved to another phase since the last call. */
static UTIL_NOINLINE void gc_changed(struct logger_vm *vm)
{
	global_State *g = vm->g;
	uint8_t st = g->gc.state;
	vm->gcstate = st;
	if (vm->events & OPTS_GC) {
		uint64_t ts = clock_now();
		uint64_t *p = logger_reserve(vm, NULL, ts);
		logger_commit(vm, buf_put_gc(p, ts, st, g->gc.total));
	}
	/* Sweeping frees prototypes, coroutines and traces that the buffers
	** (events and samples) may name. */
	if (st == GCSsweepstring || st == GCSsweep)
		logger_before_sweep(vm);
}

/* VM thread only (allocator), in the sweep. 1 when the block ptr of osize
** bytes being freed is a prototype: its header says so, and its own size
** is osize (lj_func_freeproto frees pt->sizept bytes), its bytecode and
** constants inside it. Another block (a table's array, a buffer) would
** have to hold all of that by chance. */
static int is_proto(void *ptr, size_t osize)
{
	GCproto *pt = ptr;
	if (osize < sizeof(GCproto) || pt->gct != (uint8_t)~LJ_TPROTO ||
	    pt->sizept != osize || pt->sizebc == 0 ||
	    pt->sizebc > (osize - sizeof(GCproto)) / sizeof(BCIns))
		return 0;
	uintptr_t k = (uintptr_t)mref(pt->k, void), p = (uintptr_t)ptr;
	return k > p && k <= p + osize &&
	       (size_t)pt->sizekgc * sizeof(GCRef) <= k - p;
}

/* VM thread only (allocator), before the block ptr of osize bytes is
** freed. 1 when it may be an object the mapper maps by address: a
** prototype, coroutine or trace, as its GC header says (any other block,
** a table's array or a string, cannot be; its bytes may say so by chance,
** which costs a lookup only). A prototype the sweep frees names its
** children (sample-only logs meet them after their chunk is gone:
** mapper_proto_freed). */
static inline int freeing(struct logger_vm *vm, void *ptr, size_t osize)
{
	if (osize < MIN_MAPPED)
		return 0;
	uint8_t gct = ((GCobj *)ptr)->gch.gct;
	if (gct == (uint8_t)~LJ_TPROTO) {
		if (UTIL_UNLIKELY(vm->g->gc.state == GCSsweep) &&
		    is_proto(ptr, osize)) {
			mapper_proto_freed(&vm->map, (GCproto *)ptr);
			return 0; /* forgotten there */
		}
		return 1;
	}
	return gct == (uint8_t)~LJ_TTHREAD || gct == (uint8_t)~LJ_TTRACE;
}

/* VM thread only. ptr was freed: an object born at the same address is
** another object (new ID, and a SWITCH even if it is a coroutine). mapped:
** what freeing() said of it (the mapper's lock is taken only then). */
static inline void forget(struct logger_vm *vm, void *ptr, size_t osize,
			  int mapped)
{
	if (UTIL_UNLIKELY(vm->snap.on))
		snap_forget(&vm->snap, ptr);
	/* Only prototypes (>= sizeof(GCproto)), coroutines (exactly
	** sizeof(lua_State)) and traces are mapped by address. */
	if (osize < MIN_MAPPED || !mapped)
		return;
	mapper_forget(&vm->map, (uintptr_t)ptr);
	if (UTIL_UNLIKELY(ptr == (void *)vm->last_L))
		vm->last_L = NULL;
}

/* VM thread only. Remember a Lua stack about to be reallocated (or forget
** an earlier one: by the next allocator call LuaJIT has stored the new
** one). A stack grown in place frees nothing: forgotten at once (below). */
static inline __attribute__((always_inline)) void
mark_stack_move(struct logger_vm *vm, void *ptr, size_t nsize)
{
	global_State *g = vm->g;
	lua_State *L = gcref(g->cur_L) ? &gcref(g->cur_L)->th : NULL;
	uintptr_t m = 0;
	if (ptr && nsize && L && ptr == (void *)tvref(L->stack))
		m = (uintptr_t)ptr;
	sample_stack_moving(&vm->s, m);
}

/* -- The allocator ----------------------------------------------------------------- */

/* VM thread only. A snapshot trigger or a mapping pass asked for work
** (snaptrig.h): the wrappers' fast paths go to alloc_full, which arms the
** hook that does it. */
static inline __attribute__((always_inline)) int
trig_asked(struct logger_vm *vm)
{
	return __atomic_load_n(&vm->trig.work, __ATOMIC_RELAXED) != 0;
}

/* VM thread only. alloc=RATE: the allocator call when it records a FREE of
** a sampled block or samples the new one (doc/format.txt, "Sampled
** allocation"), or has a mapped address to forget. The prologue of
** alloc_full has run. */
static void *alloc_sampled(struct logger_vm *vm, void *ptr, size_t osize,
			   size_t nsize)
{
	uint64_t x = 0, key = 0, *p;
	lua_State *co = NULL;
	int was = ptr && addrset_has(&vm->sampled, (uintptr_t)ptr), take = 0;
	if (nsize && (vm->alloc_left -= (int64_t)nsize) <= 0) {
		take = 1;
		vm->alloc_left = (int64_t)rng_exp(&vm->rng, vm->alloc_rate);
		x = site_of(vm, ptr, &key, &co); /* before the stack moves */
	}
	int mapped = nsize == 0 && ptr ? freeing(vm, ptr, osize) : 0;
	void *np = vm->orig_alloc(vm->orig_ud, ptr, osize, nsize);
	if (UTIL_UNLIKELY(vm->s.on) && np == ptr)
		sample_stack_moving(&vm->s, 0);
	if (nsize == 0 && ptr)
		forget(vm, ptr, osize, mapped);
	if (nsize && !np)
		return np; /* failed: the old block is still there */
	if (was) {
		uint64_t ts = clock_now();
		addrset_del(&vm->sampled, (uintptr_t)ptr);
		p = logger_reserve(vm, NULL, ts);
		put_free(vm, p, ts, ptr, osize);
	}
	/* A block whose address could not be kept is not recorded: its free
	** would not be. */
	if (take && addrset_add(&vm->sampled, (uintptr_t)np) == 0) {
		uint64_t ts = clock_now();
		p = logger_reserve(vm, co, ts);
		put_alloc(vm, p, ts, x, key, np, nsize);
	}
	return np;
}

/* VM thread only. The allocator call with all it may have to record. */
static UTIL_NOINLINE void *alloc_full(struct logger_vm *vm, void *ptr,
				      size_t osize, size_t nsize)
{
	uint64_t x = 0, key = 0;
	lua_State *co = NULL;
	void *np;

	vmheap_keep(vm->heap);
	if (UTIL_UNLIKELY(vm->g->gc.state != vm->gcstate))
		gc_changed(vm);
	if (UTIL_UNLIKELY(trig_asked(vm)))
		snaptrig_poll(vm);
	/* The sampler must not walk a Lua stack that is being reallocated,
	** until LuaJIT has stored the new one (seen by the handler). */
	if (UTIL_UNLIKELY(vm->s.on))
		mark_stack_move(vm, ptr, nsize);
	int mapped = nsize == 0 && ptr ? freeing(vm, ptr, osize) : 0;
	if (!(vm->events & OPTS_ALLOC)) {
		np = vm->orig_alloc(vm->orig_ud, ptr, osize, nsize);
		if (UTIL_UNLIKELY(vm->s.on) && np == ptr)
			sample_stack_moving(&vm->s, 0);
		if (nsize == 0 && ptr)
			forget(vm, ptr, osize, mapped);
		return np;
	}
	if (vm->alloc_rate)
		return alloc_sampled(vm, ptr, osize, nsize);
	if (nsize)
		x = site_of(vm, ptr, &key, &co); /* before the stack may move */
	np = vm->orig_alloc(vm->orig_ud, ptr, osize, nsize);
	if (UTIL_UNLIKELY(vm->s.on) && np == ptr)
		sample_stack_moving(&vm->s, 0);
	uint64_t ts = logger_alloc_clock(vm);
	uint64_t *p;
	if (nsize == 0) {
		if (!ptr)
			return np;
		forget(vm, ptr, osize, mapped);
		p = logger_reserve(vm, NULL, ts);
		put_free(vm, p, ts, ptr, osize);
	} else if (!np) {
		return np; /* failed: LuaJIT raises its memory error */
	} else if (!ptr) {
		p = logger_reserve(vm, co, ts);
		put_alloc(vm, p, ts, x, key, np, nsize);
	} else {
		p = logger_reserve(vm, co, ts);
		logger_commit(
		    vm, buf_put_realloc(p, ts, x, key, (uint64_t)(uintptr_t)ptr,
					osize, (uint64_t)(uintptr_t)np, nsize));
	}
	return np;
}

/* VM thread only. lua_Alloc wrapper when nothing is recorded (no family):
** no buffered record names an object, so frees need not be seen, nor GC
** phases; only the heap is kept from trimming (vmheap.h), and after a
** heap snapshot, frees are forgotten by its IDs (alloc_full). */
void *alloc_lua_bare(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct logger_vm *vm = ud;
	if (UTIL_UNLIKELY(vm->snap.on || trig_asked(vm)))
		return alloc_full(vm, ptr, osize, nsize);
	if (ptr) /* LuaJIT trims only when it frees */
		vmheap_keep(vm->heap);
	return vm->orig_alloc(vm->orig_ud, ptr, osize, nsize);
}

/* VM thread only. lua_Alloc wrapper without alloc. Most calls of an
** allocation-heavy program record nothing: they go straight to the VM's
** allocator (a tail call), the rest through alloc_full. */
void *alloc_lua_plain(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct logger_vm *vm = ud;
	/* Nothing to record, no new GC phase, no stack mark to clear,
	** no work asked for. */
	if (UTIL_LIKELY(
		vm->g->gc.state == vm->gcstate &&
		!__atomic_load_n(&vm->s.stack_moving, __ATOMIC_RELAXED) &&
		!trig_asked(vm))) {
		if (!ptr) /* an allocation: LuaJIT trims only when it frees */
			return vm->orig_alloc(vm->orig_ud, ptr, osize, nsize);
		/* Nothing mapped at ptr, nor a Lua stack (smaller than any). */
		if (osize < MIN_MAPPED && !vm->snap.on) {
			vmheap_keep(vm->heap);
			return vm->orig_alloc(vm->orig_ud, ptr, osize, nsize);
		}
	}
	return alloc_full(vm, ptr, osize, nsize);
}

/* VM thread only. lua_Alloc wrapper with alloc=RATE: nothing to record
** when the countdown does not run out and ptr is no sampled block (and no
** new GC phase, no stack mark). */
void *alloc_lua_rate(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct logger_vm *vm = ud;
	if (UTIL_LIKELY(
		vm->alloc_left > (int64_t)nsize &&
		vm->g->gc.state == vm->gcstate &&
		!__atomic_load_n(&vm->s.stack_moving, __ATOMIC_RELAXED) &&
		!trig_asked(vm))) {
		if (!ptr) {
			vm->alloc_left -= (int64_t)nsize;
			return vm->orig_alloc(vm->orig_ud, ptr, osize, nsize);
		}
		if (osize < MIN_MAPPED &&
		    !addrset_has(&vm->sampled, (uintptr_t)ptr)) {
			vm->alloc_left -= (int64_t)nsize;
			vmheap_keep(vm->heap);
			return vm->orig_alloc(vm->orig_ud, ptr, osize, nsize);
		}
	}
	return alloc_full(vm, ptr, osize, nsize);
}

/* VM thread only (alloc_lua_exact). Record the free of ptr, then free it:
** a tail call. Its own function: a free needs fewer registers saved than
** a new block. */
static UTIL_NOINLINE void *exact_free(struct logger_vm *vm, void *ptr,
				      size_t osize)
{
	vmheap_keep(vm->heap);
	uint64_t ts = logger_alloc_clock(vm);
	uint64_t *p = logger_reserve(vm, NULL, ts);
	put_free(vm, p, ts, ptr, osize);
	int mapped = freeing(vm, ptr, osize);
	forget(vm, ptr, osize, mapped);
	return vm->orig_alloc(vm->orig_ud, ptr, osize, 0);
}

/* VM thread only (alloc_lua_exact). Make a new block of nsize bytes and
** record it: its site and room are found before it is made (the site
** before the Lua stack may move). */
static UTIL_NOINLINE void *exact_new(struct logger_vm *vm, size_t nsize)
{
	uint64_t key = 0;
	lua_State *co = NULL;
	uint64_t x = site_of(vm, NULL, &key, &co);
	uint64_t ts = logger_alloc_clock(vm);
	uint64_t *p = logger_reserve(vm, co, ts);
	void *np = vm->orig_alloc(vm->orig_ud, NULL, 0, nsize);
	if (UTIL_LIKELY(np != NULL)) /* else LuaJIT raises its memory error */
		put_alloc(vm, p, ts, x, key, np, nsize);
	return np;
}

/* VM thread only. lua_Alloc wrapper with exact alloc. A new block or a
** free, with no new GC phase, no sampler and no heap snapshot to tell, is
** recorded by exact_new or exact_free; the rest goes through alloc_full. */
void *alloc_lua_exact(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct logger_vm *vm = ud;
	if (UTIL_UNLIKELY(vm->g->gc.state != vm->gcstate || vm->s.on ||
			  vm->snap.on || trig_asked(vm)))
		return alloc_full(vm, ptr, osize, nsize);
	if (!ptr) {
		if (UTIL_LIKELY(nsize != 0))
			return exact_new(vm, nsize);
	} else if (!nsize) {
		return exact_free(vm, ptr, osize);
	}
	return alloc_full(vm, ptr, osize, nsize);
}

/* Any thread (attach). See alloc.h. */
lua_Alloc alloc_wrapper(unsigned events, uint64_t rate)
{
	if (events & OPTS_ALLOC)
		return rate ? alloc_lua_rate : alloc_lua_exact;
	return events ? alloc_lua_plain : alloc_lua_bare;
}
