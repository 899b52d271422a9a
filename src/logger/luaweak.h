/*
** ljlog: LuaJIT's API, looked up at run time. libljlog.so does not link
** LuaJIT: it uses the LuaJIT of the process it is loaded into. Preloaded
** (LD_PRELOAD) into a process without LuaJIT (a shell, gzip, the programs a
** server runs), a strong undefined reference would stop that process at
** load ("symbol lookup error"); a weak one is bound at load too when the
** program is linked with -z now (Debian's nginx): to NULL, since the lua
** module and its LuaJIT are dlopen()ed later, and the first call jumps to
** 0. So every LuaJIT function ljlog calls goes through a pointer that
** luaweak_resolve() fills by dlsym() once LuaJIT is there (at a VM's first
** attach, at require "ljlog", when the preload arms a new VM). Included in
** every core file by the build (-include), before LuaJIT's headers: their
** declarations, with the name in parentheses, declare the pointers.
** tests/e2e/preload.sh checks that libljlog.so leaves no LuaJIT symbol
** undefined; tests/e2e/nginx.sh runs the -z now host.
*/
#ifndef LJLOG_LOGGER_LUAWEAK_H
#define LJLOG_LOGGER_LUAWEAK_H

#define luaJIT_setmode (*ljlog_p_luaJIT_setmode)
#define luaL_register (*ljlog_p_luaL_register)
#define luaL_where (*ljlog_p_luaL_where)
#define lua_checkstack (*ljlog_p_lua_checkstack)
#define lua_concat (*ljlog_p_lua_concat)
#define lua_createtable (*ljlog_p_lua_createtable)
#define lua_error (*ljlog_p_lua_error)
#define lua_gc (*ljlog_p_lua_gc)
#define lua_getallocf (*ljlog_p_lua_getallocf)
#define lua_getfield (*ljlog_p_lua_getfield)
#define lua_gethook (*ljlog_p_lua_gethook)
#define lua_gethookcount (*ljlog_p_lua_gethookcount)
#define lua_gethookmask (*ljlog_p_lua_gethookmask)
#define lua_gettop (*ljlog_p_lua_gettop)
#define lua_insert (*ljlog_p_lua_insert)
#define lua_iscfunction (*ljlog_p_lua_iscfunction)
#define lua_isnumber (*ljlog_p_lua_isnumber)
#define lua_newuserdata (*ljlog_p_lua_newuserdata)
#define lua_next (*ljlog_p_lua_next)
#define lua_objlen (*ljlog_p_lua_objlen)
#define lua_pcall (*ljlog_p_lua_pcall)
#define lua_pushboolean (*ljlog_p_lua_pushboolean)
#define lua_pushcclosure (*ljlog_p_lua_pushcclosure)
#define lua_pushinteger (*ljlog_p_lua_pushinteger)
#define lua_pushlightuserdata (*ljlog_p_lua_pushlightuserdata)
#define lua_pushlstring (*ljlog_p_lua_pushlstring)
#define lua_pushnil (*ljlog_p_lua_pushnil)
#define lua_pushnumber (*ljlog_p_lua_pushnumber)
#define lua_pushstring (*ljlog_p_lua_pushstring)
#define lua_pushvalue (*ljlog_p_lua_pushvalue)
#define lua_rawequal (*ljlog_p_lua_rawequal)
#define lua_rawget (*ljlog_p_lua_rawget)
#define lua_rawgeti (*ljlog_p_lua_rawgeti)
#define lua_rawset (*ljlog_p_lua_rawset)
#define lua_rawseti (*ljlog_p_lua_rawseti)
#define lua_remove (*ljlog_p_lua_remove)
#define lua_setallocf (*ljlog_p_lua_setallocf)
#define lua_setfield (*ljlog_p_lua_setfield)
#define lua_sethook (*ljlog_p_lua_sethook)
#define lua_setmetatable (*ljlog_p_lua_setmetatable)
#define lua_settop (*ljlog_p_lua_settop)
#define lua_toboolean (*ljlog_p_lua_toboolean)
#define lua_tointeger (*ljlog_p_lua_tointeger)
#define lua_tolstring (*ljlog_p_lua_tolstring)
#define lua_tonumber (*ljlog_p_lua_tonumber)
#define lua_topointer (*ljlog_p_lua_topointer)
#define lua_type (*ljlog_p_lua_type)
#define lua_typename (*ljlog_p_lua_typename)

/* The LuaJIT functions above, by name, for the resolver (luaweak.c). */
#define LUAWEAK_NAMES(X) \
	X(luaJIT_setmode) \
	X(luaL_register) \
	X(luaL_where) \
	X(lua_checkstack) \
	X(lua_concat) \
	X(lua_createtable) \
	X(lua_error) \
	X(lua_gc) \
	X(lua_getallocf) \
	X(lua_getfield) \
	X(lua_gethook) \
	X(lua_gethookcount) \
	X(lua_gethookmask) \
	X(lua_gettop) \
	X(lua_insert) \
	X(lua_iscfunction) \
	X(lua_isnumber) \
	X(lua_newuserdata) \
	X(lua_next) \
	X(lua_objlen) \
	X(lua_pcall) \
	X(lua_pushboolean) \
	X(lua_pushcclosure) \
	X(lua_pushinteger) \
	X(lua_pushlightuserdata) \
	X(lua_pushlstring) \
	X(lua_pushnil) \
	X(lua_pushnumber) \
	X(lua_pushstring) \
	X(lua_pushvalue) \
	X(lua_rawequal) \
	X(lua_rawget) \
	X(lua_rawgeti) \
	X(lua_rawset) \
	X(lua_rawseti) \
	X(lua_remove) \
	X(lua_setallocf) \
	X(lua_setfield) \
	X(lua_sethook) \
	X(lua_setmetatable) \
	X(lua_settop) \
	X(lua_toboolean) \
	X(lua_tointeger) \
	X(lua_tolstring) \
	X(lua_tonumber) \
	X(lua_topointer) \
	X(lua_type) \
	X(lua_typename)

/* Any thread. Fill the pointers from the LuaJIT in the process (searched
** globally, then in the object that defines hint, a LuaJIT function, when
** not NULL); once they are all found, later calls return at once. 0 or
** -ENOSYS (a function not found: no LuaJIT here). */
int luaweak_resolve(void *hint);

#endif
