/*
** ljlog e2e: a C Lua module whose functions have no dynamic symbol (they
** are static), loaded after ljlog attached: only a table reaches them.
** require "names_cmod" gives {work = f, inner = {spin = g}}:
** work(n), inner.spin(n)   n rounds of integer arithmetic, a number back
*/
#include <stdint.h>

#include <lauxlib.h>
#include <lua.h>

/* Any thread. n rounds of a linear congruential generator. */
static uint64_t churn(int64_t n, uint64_t x)
{
	volatile uint64_t v = x;
	for (int64_t i = 0; i < n; i++)
		v = v * 6364136223846793005u + 1442695040888963407u;
	return v;
}

/* Any thread. work(n). */
static int l_work(lua_State *L)
{
	int64_t n = (int64_t)luaL_checknumber(L, 1);
	lua_pushnumber(L, (lua_Number)(churn(n, 1) >> 33));
	return 1;
}

/* Any thread. inner.spin(n). */
static int l_spin(lua_State *L)
{
	int64_t n = (int64_t)luaL_checknumber(L, 1);
	lua_pushnumber(L, (lua_Number)(churn(n, 7) >> 33));
	return 1;
}

/* Any thread. The module table. */
int luaopen_names_cmod(lua_State *L)
{
	lua_createtable(L, 0, 2);
	lua_pushcfunction(L, l_work);
	lua_setfield(L, -2, "work");
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, l_spin);
	lua_setfield(L, -2, "spin");
	lua_setfield(L, -2, "inner");
	return 1;
}
