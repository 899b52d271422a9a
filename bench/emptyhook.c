/*
** Benchmark baseline: an empty C call/return hook, the cost of LuaJIT's own
** hook dispatch that ljlog's calls logging is measured against.
*/
#include <stdint.h>
#include <stdlib.h>

#include "lua.h"
#include "lauxlib.h"
#include "stat/clock.h"

static uint64_t sink;

static void empty(lua_State *L, lua_Debug *ar)
{
	(void)L;
	(void)ar;
}

/* The floor for a timed event: the hook reads ljlog's clock and nothing else. */
static void clockonly(lua_State *L, lua_Debug *ar)
{
	(void)L;
	(void)ar;
	sink += clock_now();
}

/* require "emptyhook": installs the empty hook on the loading VM
** (EMPTYHOOK_CLOCK=1: the clock-only hook). */
__attribute__((visibility("default"))) int luaopen_emptyhook(lua_State *L)
{
	const char *c = getenv("EMPTYHOOK_CLOCK");
	lua_sethook(L, c && *c == '1' ? clockonly : empty,
		    LUA_MASKCALL | LUA_MASKRET, 0);
	lua_pushboolean(L, 1);
	return 1;
}
