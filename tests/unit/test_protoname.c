/*
** Unit tests: src/maps/protoname.c on prototypes a real LuaJIT VM compiled
** from source, each naming way of Lua; names_ffname's library names.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "lualib.h"
#include "maps/names.h"
#include "maps/protoname.h"

#define MAXN 32

/* The names protoname_children gave, by the child's firstline. */
struct got {
	int n;
	int line[MAXN];
	char name[MAXN][64];
};

/* Test thread. Remember one child's name. */
static int collect(void *ud, GCproto *child, const char *name)
{
	struct got *g = ud;
	if (g->n < MAXN) {
		g->line[g->n] = (int)child->firstline;
		snprintf(g->name[g->n], sizeof g->name[0], "%s", name);
		g->n++;
	}
	return 0;
}

/* Test thread. The prototype of src compiled as a main chunk (L keeps it:
** the function is left on the stack). */
static GCproto *compile(lua_State *L, const char *src)
{
	cr_assert_eq(luaL_loadstring(L, src), 0, "%s", lua_tostring(L, -1));
	GCfunc *fn = (GCfunc *)(uintptr_t)lua_topointer(L, -1);
	return funcproto(fn);
}

/* Test thread. The name got for the child at line, or NULL. */
static const char *at_line(const struct got *g, int line)
{
	for (int i = 0; i < g->n; i++)
		if (g->line[i] == line)
			return g->name[i];
	return NULL;
}

static const char src[] =
    "function gfun() end\n"		 /* 1 global */
    "local function lfun() end\n"	 /* 2 local function */
    "local lvar = function() end\n"	 /* 3 local = function */
    "local M = {}\n"			 /* 4 */
    "function M.add(a, b) end\n"	 /* 5 field */
    "function M:get() end\n"		 /* 6 method */
    "local up\n"			 /* 7 */
    "local function setup()\n"		 /* 8 */
    "  up = function() end\n"		 /* 9 upvalue */
    "end\n"				 /* 10 */
    "pcall(function() end)\n"		 /* 11 argument: unnamed */
    "local t = { f = function() end }\n" /* 12 constructor field */
    "M.sub = {}\n"			 /* 13 */
    "function M.sub.deep() end\n"	 /* 14 nested field */
    "return gfun, lfun, lvar, up, t, setup\n";

Test(protoname, every_way_of_naming)
{
	lua_State *L = luaL_newstate();
	GCproto *pt = compile(L, src);
	struct got g = {0};
	cr_assert_eq(protoname_children(pt, collect, &g), 0);
	cr_assert_eq(g.n, 9, "%d children", g.n);
	cr_assert_str_eq(at_line(&g, 1), "gfun");
	cr_assert_str_eq(at_line(&g, 2), "lfun");
	cr_assert_str_eq(at_line(&g, 3), "lvar");
	cr_assert_str_eq(at_line(&g, 5), "M.add");
	cr_assert_str_eq(at_line(&g, 6), "M:get");
	cr_assert_str_eq(at_line(&g, 8), "setup");
	cr_assert_str_eq(at_line(&g, 11), "");
	cr_assert_str_eq(at_line(&g, 12), "f");
	cr_assert_str_eq(at_line(&g, 14), "M.sub.deep");
	/* The upvalue store is in setup's bytecode. */
	GCproto *setup = NULL;
	for (ptrdiff_t i = -1; i >= -(ptrdiff_t)pt->sizekgc; i--) {
		GCobj *o = proto_kgc(pt, i);
		if (o->gch.gct == ~LJ_TPROTO && o->pt.firstline == 8)
			setup = &o->pt;
	}
	cr_assert_not_null(setup);
	struct got g2 = {0};
	cr_assert_eq(protoname_children(setup, collect, &g2), 0);
	cr_assert_eq(g2.n, 1);
	cr_assert_str_eq(at_line(&g2, 9), "up");
	cr_assert_str_eq(protoname_upvalue(setup, 0), "up");
	lua_close(L);
}

/* Test thread. Stop at the first callback error. */
static int stop(void *ud, GCproto *child, const char *name)
{
	(*(int *)ud)++;
	return -12;
}

Test(protoname, callback_error_stops)
{
	lua_State *L = luaL_newstate();
	int n = 0;
	cr_assert_eq(protoname_children(compile(L, src), stop, &n), -12);
	cr_assert_eq(n, 1);
	/* A chunk without children has none to name. */
	n = 0;
	cr_assert_eq(protoname_children(compile(L, "return 1"), stop, &n), 0);
	cr_assert_eq(n, 0);
	lua_close(L);
}

Test(protoname, locals_and_builtins)
{
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	GCproto *pt = compile(L, "local a, b = 1, 2\nreturn a + b\n");
	/* At the return, slot 0 is a and slot 1 is b. */
	BCPos last = pt->sizebc - 1;
	cr_assert_str_eq(protoname_local(pt, last, 0), "a");
	cr_assert_str_eq(protoname_local(pt, last, 1), "b");
	cr_assert_null(protoname_local(pt, last, 5));
	cr_assert_null(protoname_builtin(pt));
	/* table.remove is written in Lua inside LuaJIT. */
	lua_getglobal(L, "table");
	lua_getfield(L, -1, "remove");
	GCfunc *fn = (GCfunc *)(uintptr_t)lua_topointer(L, -1);
	if (isluafunc(fn))
		cr_assert_str_eq(protoname_builtin(funcproto(fn)),
				 "table.remove");
	lua_close(L);
}

Test(protoname, library_function_names)
{
	char buf[64];
	int ipairs_aux = names_ffid("ipairs_aux");
	cr_assert_gt(ipairs_aux, 1, "this LuaJIT lists no fast functions");
	cr_assert_str_eq(names_ffname(NULL, (unsigned)ipairs_aux, buf, 64),
			 "ipairs (iterator)");
	cr_assert_str_eq(
	    names_ffname(NULL, names_ffid("string.gmatch_aux"), buf, 64),
	    "string.gmatch (iterator)");
	cr_assert_str_eq(
	    names_ffname(NULL, names_ffid("coroutine.wrap_aux"), buf, 64),
	    "coroutine.wrap (function)");
	cr_assert_str_eq(
	    names_ffname(NULL, names_ffid("io.method.read"), buf, 64),
	    "file:read");
	cr_assert_str_eq(names_ffname(NULL, names_ffid("string.rep"), buf, 64),
			 "string.rep");
	int call = names_ffid("ffi.meta.__call");
	if (call > 0)
		cr_assert_str_eq(names_ffname(NULL, (unsigned)call, buf, 64),
				 "ffi call");
	cr_assert_str_eq(names_ffname(NULL, 250, buf, 64), "builtin #250");
	cr_assert_eq(names_ffid("no such function"), -1);
}

Test(protoname, library_list_agrees_with_the_vm)
{
	lua_State *L = luaL_newstate();
	struct names n;
	char buf[64];
	memset(&n, 0, sizeof n);
	luaL_openlibs(L);
	names_scan(&n, L);
	cr_assert_gt(n.ff_agree, 50, "%u agree", n.ff_agree);
	cr_assert_eq(n.ff_disagree, 0);
	/* A list the VM contradicts is not used: package.loaded's names. */
	n.ff_disagree = n.ff_agree;
	int rep = names_ffid("string.rep");
	cr_assert_str_eq(names_ffname(&n, (unsigned)rep, buf, 64),
			 "string.rep");
	char want[32];
	int aux = names_ffid("ipairs_aux");
	snprintf(want, sizeof want, "builtin #%d", aux);
	cr_assert_str_eq(names_ffname(&n, (unsigned)aux, buf, 64), want);
	names_free(&n);
	lua_close(L);
}
