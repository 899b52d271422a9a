/*
** ljlog: LuaJIT's API, referenced weakly. libljlog.so does not link LuaJIT:
** it uses the LuaJIT of the process it is loaded into. Preloaded
** (LD_PRELOAD) into a process without LuaJIT (a shell, gzip, the programs a
** server runs), a strong undefined reference would stop that process at
** load ("symbol lookup error"); a weak one stays NULL and is never called,
** since no VM exists. Included in every core file by the build
** (-include); tests/e2e/preload.sh checks that nothing in libljlog.so is
** left strongly undefined from LuaJIT.
*/
#ifndef LJLOG_LOGGER_LUAWEAK_H
#define LJLOG_LOGGER_LUAWEAK_H

#pragma weak luaJIT_setmode
#pragma weak luaL_register
#pragma weak lua_checkstack
#pragma weak lua_createtable
#pragma weak lua_gc
#pragma weak lua_getallocf
#pragma weak lua_getfield
#pragma weak lua_gethook
#pragma weak lua_gethookcount
#pragma weak lua_gethookmask
#pragma weak lua_gettop
#pragma weak lua_insert
#pragma weak lua_iscfunction
#pragma weak lua_isnumber
#pragma weak lua_newuserdata
#pragma weak lua_next
#pragma weak lua_objlen
#pragma weak lua_pcall
#pragma weak lua_pushboolean
#pragma weak lua_pushcclosure
#pragma weak lua_pushinteger
#pragma weak lua_pushlightuserdata
#pragma weak lua_pushlstring
#pragma weak lua_pushnil
#pragma weak lua_pushnumber
#pragma weak lua_pushstring
#pragma weak lua_pushvalue
#pragma weak lua_rawequal
#pragma weak lua_rawget
#pragma weak lua_rawgeti
#pragma weak lua_rawset
#pragma weak lua_rawseti
#pragma weak lua_remove
#pragma weak lua_setallocf
#pragma weak lua_setfield
#pragma weak lua_sethook
#pragma weak lua_setmetatable
#pragma weak lua_settop
#pragma weak lua_toboolean
#pragma weak lua_tointeger
#pragma weak lua_tolstring
#pragma weak lua_tonumber
#pragma weak lua_topointer
#pragma weak lua_type
#pragma weak lua_typename

#endif
