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

/* Any context. The function of frame, or NULL when its function slot does
** not hold a function right now (GC64 frames keep a tagged TValue there). */
static inline GCfunc *ljwin_frame_func(TValue *frame)
{
#if LJ_FR2
	if (!tvisfunc(frame - 1))
		return NULL;
#endif
	GCfunc *fn = frame_func(frame);
	return fn && fn->c.gct == (uint8_t)~LJ_TFUNC ? fn : NULL;
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

/* Any context. Source line of bytecode position pos in pt (lj_debug_line's
** algorithm over LuaJIT's compressed line info); 0 when unknown. */
static inline uint32_t ljwin_proto_line(GCproto *pt, BCPos pos)
{
	const void *li = proto_lineinfo(pt);
	if (!li || pos > pt->sizebc)
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

#endif
