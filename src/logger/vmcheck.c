/*
** ljlog VM check: the running LuaJIT against the one ljlog was built for.
** A mismatch is a message and an unprofiled VM, never a wrong read.
*/
#include "config.h"

#include "logger/vmcheck.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Which LuaJIT ljlog was built for, in messages. */
#if LJLOG_LUAJIT_OPENRESTY
#define FLAVOUR "OpenResty's LuaJIT"
#else
#define FLAVOUR "LuaJIT"
#endif

/* VM thread only, Lua API context. See vmcheck.h. */
const char *vmcheck_version(lua_State *L, char *buf, size_t len, int *openresty)
{
	const char *v = NULL;
	int top = lua_gettop(L);
	*openresty = -1;
	lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, "jit");
		if (lua_istable(L, -1)) {
			lua_getfield(L, -1, "prngstate");
			*openresty = lua_isfunction(L, -1);
			lua_pop(L, 1);
			lua_getfield(L, -1, "version");
			if (lua_type(L, -1) == LUA_TSTRING) {
				snprintf(buf, len, "%s", lua_tostring(L, -1));
				v = buf;
			}
		}
	}
	lua_settop(L, top);
	return v;
}

/* VM thread only, Lua API context. The version and flavour L's VM runs
** against ljlog's; 0, or -EPROTO with a message in err. *v: its version,
** or NULL when its jit module does not say. */
static int check_version(lua_State *L, char *vbuf, size_t vlen, const char **v,
			 char *err, size_t errlen)
{
	int openresty;
	*v = vmcheck_version(L, vbuf, vlen, &openresty);
	if (openresty >= 0 && openresty != LJLOG_LUAJIT_OPENRESTY) {
		snprintf(err, errlen,
			 "LuaJIT mismatch: this program runs %s '%s' but ljlog "
			 "was built for %s (source %s), whose internal layout "
			 "differs; build ljlog with --with-luajit-src naming "
			 "this LuaJIT's source; not profiling",
			 openresty ? "OpenResty's LuaJIT" : "LuaJIT",
			 *v ? *v : "(version unknown)", FLAVOUR,
			 LJLOG_LUAJIT_SRC_VERSION);
		return -EPROTO;
	}
	if (*v && strcmp(*v, LJLOG_EXPECT_VERSION) != 0) {
		snprintf(
		    err, errlen,
		    "LuaJIT mismatch: this program runs '%s' but ljlog was "
		    "built for '%s' (LuaJIT source %s); not profiling",
		    *v, LJLOG_EXPECT_VERSION, LJLOG_LUAJIT_SRC_VERSION);
		return -EPROTO;
	}
	return 0;
}

/* VM thread only, Lua API context. The probe of L's VM that fails (an
** internal read against what the public API says), or NULL. */
static const char *probe_layout(lua_State *L)
{
	global_State *g = G(L);
	void *ud;
	if (L->gct != (uint8_t)~LJ_TTHREAD ||
	    mainthread(g)->gct != (uint8_t)~LJ_TTHREAD)
		return "thread type tags";
	if (lua_getallocf(L, &ud) != g->allocf || ud != g->allocd)
		return "allocator fields";
	if (g->strempty.gct != (uint8_t)~LJ_TSTR || g->strempty.len != 0)
		return "empty string";
	if (lua_gethook(L) != g->hookf ||
	    lua_gethookmask(L) != (g->hookmask & HOOK_EVENTMASK))
		return "hook fields";
	if (lua_gc(L, LUA_GCCOUNT, 0) != (int)(g->gc.total >> 10) ||
	    lua_gc(L, LUA_GCCOUNTB, 0) != (int)(g->gc.total & 0x3ff))
		return "heap size";
	if (L->base < tvref(L->stack) || L->top < L->base ||
	    L->top > tvref(L->maxstack))
		return "stack fields";
	/* A fast function from the library table (hosts replace globals:
	** nginx's lua module puts a C function of its own in print). */
	const char *probe = NULL;
	int top = lua_gettop(L);
	lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
	if (lua_istable(L, -1))
		lua_getfield(L, -1, "string");
	if (lua_istable(L, -1))
		lua_getfield(L, -1, "byte");
	if (lua_isfunction(L, -1)) {
		GCfunc *fn = (GCfunc *)(uintptr_t)lua_topointer(L, -1);
		if (fn->c.gct != (uint8_t)~LJ_TFUNC || fn->c.ffid <= FF_C)
			probe = "function layout";
	}
	lua_settop(L, top);
	return probe;
}

/* VM thread only, Lua API context. See vmcheck.h. */
int vmcheck(lua_State *L, char *err, size_t errlen)
{
	char vbuf[128];
	const char *v, *probe;
	int r = check_version(L, vbuf, sizeof vbuf, &v, err, errlen);
	if (r < 0)
		return r;
	if ((probe = probe_layout(L)) != NULL) {
		snprintf(err, errlen,
			 "LuaJIT mismatch: this program's LuaJIT (%s) does not "
			 "have the internal layout ljlog was built for (%s, "
			 "source %s): probe '%s' failed; not profiling",
			 v ? v : "version unknown", LJLOG_EXPECT_VERSION,
			 LJLOG_LUAJIT_SRC_VERSION, probe);
		return -EPROTO;
	}
	return 0;
}
