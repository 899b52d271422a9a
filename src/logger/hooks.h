/*
** ljlog calls: the call/return hook and the C function wrapper.
*/
#ifndef LJLOG_LOGGER_HOOKS_H
#define LJLOG_LOGGER_HOOKS_H

#include "maps/ljwin.h"

/* VM thread only. lua_Hook for LUA_MASKCALL | LUA_MASKRET: records ENTER of
** Lua and fast functions, EXIT of Lua functions. */
void hooks_call(lua_State *L, lua_Debug *ar);

/* VM thread only. LuaJIT C function wrapper (g->wrapf): records ENTER and
** EXIT of C functions around the call. */
int hooks_wrap(lua_State *L, lua_CFunction f);

#endif
