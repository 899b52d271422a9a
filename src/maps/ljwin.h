/*
** ljlog's window on LuaJIT internals: the one place that includes them.
** Built against the source tree of the same LuaJIT that runs (configure).
*/
#ifndef LJLOG_MAPS_LJWIN_H
#define LJLOG_MAPS_LJWIN_H

#include "lj_obj.h"
#include "lj_frame.h"
#include "lj_bc.h"
#include "lj_jit.h"
#include "lj_dispatch.h"
#include "lj_debug.h"
#include "lj_gc.h"
#include "lj_vmevent.h"
#if LJ_HASFFI
#include "lj_ctype.h"
#include "lj_cdata.h"
#endif
#include "lauxlib.h"
#include "luajit.h"

/* Version ljlog expects at attach (tests build a variant that differs). */
#ifndef LJLOG_EXPECT_VERSION
#define LJLOG_EXPECT_VERSION LUAJIT_VERSION
#endif

/* Any context. The function of the frame at stack slot `slot` of L. */
static inline GCfunc *ljwin_slot_func(lua_State *L, ptrdiff_t slot)
{
	TValue *frame = tvref(L->stack) + slot;
	return frame_func(frame);
}

/* Any context (the SIGPROF handler too). The function of frame, or NULL
** when its function slot does not hold a function right now (GC64 frames
** keep a tagged TValue there), or holds a payload that is no object's
** address (a stale or half-written slot): nothing is read through that.
** Caller: frame - 1 lies in L's stack. */
static inline GCfunc *ljwin_frame_func(TValue *frame)
{
	/* frame_func() would form &obj->fn (a member access) first. */
#if LJ_FR2
	if (!tvisfunc(frame - 1))
		return NULL;
	uintptr_t a = (uintptr_t)(gcrefu((frame - 1)->gcr) & LJ_GCVMASK);
#else
	uintptr_t a = (uintptr_t)gcrefu(frame->fr.func);
#endif
	if (a < 4096 || (a & 7) || a >= ((uintptr_t)1 << 47))
		return NULL;
	GCfunc *fn = (GCfunc *)a;
	return fn->c.gct == (uint8_t)~LJ_TFUNC ? fn : NULL;
}

/* Any context. Slot of L's current (top) frame, as lua_Debug i_ci. */
static inline uint32_t ljwin_top_slot(lua_State *L)
{
	return (uint32_t)((L->base - 1) - tvref(L->stack));
}

/* Any context. 1 when fn is dispatched as an ASM fast function: LuaJIT
** fires no return hook and no C wrapper for those. */
static inline int ljwin_is_asm_ff(global_State *g, GCfunc *fn)
{
	const BCIns *pc = mref(fn->c.pc, const BCIns);
	return pc != &g->bc_cfunc_ext && pc != &g->bc_cfunc_int;
}

/* Any context (the SIGPROF handler too). Source line of bytecode position
** pos in pt (lj_debug_line's algorithm over LuaJIT's compressed line info);
** 0 when unknown or none (a library function written in Lua, whose
** firstline is -1); firstline when the line info pointer is no address. */
static inline uint32_t ljwin_proto_line(GCproto *pt, BCPos pos)
{
	const void *li = proto_lineinfo(pt);
	if (pt->firstline < 0)
		return 0; /* a library function written in Lua: no lines */
	if ((uintptr_t)li < 4096 || pos > pt->sizebc)
		return (uint32_t)pt->firstline;
	if (pos == pt->sizebc)
		return (uint32_t)(pt->firstline + pt->numline);
	if (pos-- == 0)
		return (uint32_t)pt->firstline;
	if (pt->numline < 256)
		return (uint32_t)(pt->firstline + ((const uint8_t *)li)[pos]);
	if (pt->numline < 65536)
		return (uint32_t)(pt->firstline + ((const uint16_t *)li)[pos]);
	return (uint32_t)(pt->firstline + ((const uint32_t *)li)[pos]);
}

/* VM thread only, in the C function wrapper of ffi's __call metamethod
** (its first argument is the cdata called). The C function an FFI call
** calls, or 0 when not a function cdata; *name is its declared name (a
** function of ffi.C or an ffi.load library), or NULL. Reads only. */
static inline uintptr_t ljwin_ffi_target(lua_State *L, GCstr **name)
{
	*name = NULL;
#if LJ_HASFFI
	CTState *cts = ctype_ctsG(G(L));
	TValue *o = L->base;
	if (!cts || o >= L->top || !tviscdata(o))
		return 0;
	GCcdata *cd = cdataV(o);
	CType *ct = ctype_raw(cts, cd->ctypeid);
	CTSize sz = CTSIZE_PTR;
	if (ctype_isptr(ct->info)) {
		sz = ct->size;
		ct = ctype_rawchild(cts, ct);
	} else if (ctype_isfunc(ct->info) && gcref(ct->name)) {
		*name = gco2str(gcref(ct->name));
	}
	if (!ctype_isfunc(ct->info))
		return 0;
	return (uintptr_t)cdata_getptr(cdataptr(cd), sz);
#else
	(void)L;
	return 0;
#endif
}

#endif
