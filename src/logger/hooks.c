/*
** ljlog calls: the call/return hook and the C function wrapper.
** LuaJIT fires call hooks for every function but return hooks only for Lua
** functions; C functions get their EXIT from the wrapper, fast functions
** none (doc/format.txt, "Frames").
*/
#include "logger/hooks.h"

#include <string.h>

#include "logger/logger.h"

/* VM thread only. lua_Hook for calls and returns. */
void hooks_call(lua_State *L, lua_Debug *ar)
{
	struct logger_vm *vm = logger_vm_of(G(L));
	if (UTIL_UNLIKELY(!vm))
		return;
	uint64_t ts = clock_now();
	uint64_t slot = (uint64_t)ar->i_ci;
	TValue *frame = tvref(L->stack) + slot;
	uint64_t *p;
	if (ar->event == LUA_HOOKCALL) {
		GCfunc *fn = frame_func(frame);
		unsigned kind;
		uint64_t what;
		if (isluafunc(fn)) {
			kind = BUF_ENTER_LUA;
			what = (uint64_t)(uintptr_t)funcproto(fn);
		} else if (ljwin_is_asm_ff(vm->g, fn)) {
			kind = BUF_ENTER_FF;
			what = fn->c.ffid | MAPPER_FF_ASM;
		} else {
			return; /* a C function: hooks_wrap records it */
		}
		p = logger_reserve(vm, L, ts);
		logger_commit(vm, buf_put_enter(p, kind, slot, ts, what));
	} else {
		/* A vararg function returns from the frame FUNCV moved up;
		** its ENTER was at the frame below (frame_prevd). */
		if (frame_isvarg(frame))
			slot -= (uint64_t)frame_sized(frame) / sizeof(TValue);
		p = logger_reserve(vm, L, ts);
		logger_commit(vm, buf_put_exit(p, slot, ts));
	}
}

/* VM thread only. Names of modules loaded since: scanned without a lock
** (the scan allocates), merged under the mapper's lock. */
static UTIL_NOINLINE void rescan(struct logger_vm *vm, lua_State *L)
{
	struct names fresh;
	memset(&fresh, 0, sizeof fresh);
	names_scan(&fresh, L);
	mapper_names_merge(&vm->map, &fresh);
	names_free(&fresh);
}

/* VM thread only, in the wrapper of ffi's __call. The C function the FFI
** call calls (named once after its declaration), or 0. */
static UTIL_NOINLINE uintptr_t ffi_target(struct logger_vm *vm, lua_State *L)
{
	GCstr *name;
	uintptr_t a = ljwin_ffi_target(L, &name);
	uintptr_t *seen = &vm->ffi_seen[(a >> 4) & 15];
	if (a && *seen != a) {
		*seen = a;
		if (name)
			mapper_names_add_c(&vm->map, a, strdata(name));
	}
	return a;
}

/* VM thread only. C function wrapper: ENTER, the call, EXIT. */
int hooks_wrap(lua_State *L, lua_CFunction f)
{
	global_State *g = G(L);
	struct logger_vm *vm = logger_vm_of(g);
	int (*prev)(lua_State *, lua_CFunction) = NULL;
	int n;
	/* LuaJIT runs no hooks inside a hook or a __gc finalizer: record no
	** C calls there either, or the calls would hang off the wrong frame. */
	if (UTIL_UNLIKELY(!vm || hook_active(g)))
		return f(L);
	uint64_t slot = ljwin_top_slot(L);
	GCfunc *fn = ljwin_slot_func(L, (ptrdiff_t)slot);
	/* An FFI call is the C function it calls, where it can be told. */
	uintptr_t ffi = UTIL_UNLIKELY(fn->c.ffid == vm->ffi_call_ffid)
			    ? ffi_target(vm, L)
			    : 0;
	uint64_t ts = clock_now();
	uint64_t *p = logger_reserve(vm, L, ts);
	/* Library functions in C (string.rep, print) are named by ffid. */
	unsigned kind = BUF_ENTER_C;
	uint64_t what = ffi ? ffi : (uint64_t)(uintptr_t)f;
	if (!ffi && fn->c.ffid > FF_C)
		kind = BUF_ENTER_FF, what = fn->c.ffid;
	p = buf_put_enter(p, kind, slot, ts, what);
	logger_commit(vm, p);
	/* Chain to a wrapper the program set for its own C functions. */
	if (UTIL_UNLIKELY(vm->orig_wrapf != NULL) &&
	    mref(fn->c.pc, const BCIns) == &g->bc_cfunc_ext)
		prev = (int (*)(lua_State *, lua_CFunction))(
			   void (*)(void))vm->orig_wrapf;
	n = prev ? prev(L, f) : f(L);
	/* f may have detached (ljlog.stop, lua_close's finalizers): look again. */
	vm = logger_vm_of(g);
	if (UTIL_LIKELY(vm != NULL)) {
		if (UTIL_UNLIKELY(f == vm->map.names.require_f))
			rescan(vm, L); /* a module may be new */
		ts = clock_now();
		p = logger_reserve(vm, L, ts);
		logger_commit(vm, buf_put_exit(p, slot, ts));
	}
	return n;
}
