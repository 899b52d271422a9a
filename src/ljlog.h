/*
** ljlog: a logging profiler for LuaJIT. Public C API for hosts that embed
** LuaJIT. Link with -lljlog (pkg-config ljlog).
*/
#ifndef LJLOG_H
#define LJLOG_H

#ifdef __cplusplus
extern "C" {
#endif

#define LJLOG_API __attribute__((visibility("default")))

typedef struct lua_State lua_State;

/* Start profiling L's VM. options: the LUAJIT_PROFILE syntax, as in
** "log:file=out.ljlog,calls,alloc" (the "log:" prefix may be left out).
** Returns 0, or a negative errno; ljlog_errmsg() then says why. The VM
** keeps running unprofiled on failure. Call from the thread running L. */
LJLOG_API int ljlog_attach(lua_State *L, const char *options);

/* Stop profiling L's VM: flush, restore the VM; the last VM to detach
** closes the log. 0 or a negative errno (see ljlog_errmsg()). */
LJLOG_API int ljlog_detach(lua_State *L);

/* 1 while L's VM is profiled, else 0. */
LJLOG_API int ljlog_running(lua_State *L);

/* Write a heap snapshot of L's VM into the log: every live object, its
** references, and the VM's heap total. Call from the thread running L,
** outside any allocation (not from a __gc). 0 or a negative errno
** (-ENOENT: L's VM is not profiled; see ljlog_errmsg()). */
LJLOG_API int ljlog_snapshot(lua_State *L);

/* Zones (as LuaJIT's jit.zone): push a zone named name on L's VM's zone
** stack, or pop the innermost one when name is NULL. Samples and
** allocations between a push and its pop are counted in the zone by the
** reader. Names longer than 255 bytes are cut to 255. 0 or a negative
** errno: -ENOENT when L's VM is not profiled, -EINVAL when popping an
** empty stack (nothing is recorded). Call from the thread running L. */
LJLOG_API int ljlog_zone(lua_State *L, const char *name);

/* Drop a mark (an instant with a text, cut to 255 bytes) in L's VM's log.
** 0 or a negative errno (-ENOENT: L's VM is not profiled). */
LJLOG_API int ljlog_mark(lua_State *L, const char *text);

/* The message of the calling thread's last failed ljlog call ("" if none). */
LJLOG_API const char *ljlog_errmsg(void);

/* The Lua module's entry point (require "ljlog"). */
LJLOG_API int luaopen_ljlog(lua_State *L);

#ifdef __cplusplus
}
#endif

#endif
