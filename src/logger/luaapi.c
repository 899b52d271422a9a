/*
** ljlog front doors: the C API (ljlog.h) and the Lua module (require "ljlog").
** Loading the module with LUAJIT_PROFILE set attaches to the loading VM.
*/
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ljlog.h"
#include "logger/logger.h"
#include "logger/zones.h"

static __thread char errmsg[512];

/* -- C API ----------------------------------------------------------------------- */

/* VM thread only. Start profiling L's VM. */
int ljlog_attach(lua_State *L, const char *options)
{
	errmsg[0] = '\0';
	return logger_attach(L, options, errmsg, sizeof errmsg);
}

/* VM thread only. Stop profiling L's VM. */
int ljlog_detach(lua_State *L)
{
	errmsg[0] = '\0';
	return logger_detach(L, errmsg, sizeof errmsg);
}

/* VM thread only. 1 while L's VM is profiled. */
int ljlog_running(lua_State *L)
{
	return logger_vm_of(G(L)) != NULL;
}

/* VM thread only. Write a heap snapshot of L's VM. */
int ljlog_snapshot(lua_State *L)
{
	struct logger_vm *vm = logger_vm_of(G(L));
	errmsg[0] = '\0';
	if (!vm) {
		snprintf(errmsg, sizeof errmsg, "not profiling this Lua VM");
		return -ENOENT;
	}
	return logger_snapshot(vm, L, errmsg, sizeof errmsg);
}

/* VM thread only. Push zone name on L's VM's zone stack; NULL pops. */
int ljlog_zone(lua_State *L, const char *name)
{
	struct logger_vm *vm = logger_vm_of(G(L));
	errmsg[0] = '\0';
	if (!vm) {
		snprintf(errmsg, sizeof errmsg, "not profiling this Lua VM");
		return -ENOENT;
	}
	if (logger_zone(vm, name, name ? strlen(name) : 0) < 0) {
		snprintf(errmsg, sizeof errmsg, "ljlog_zone: no zone to pop");
		return -EINVAL;
	}
	return 0;
}

/* VM thread only. Drop a mark with text in L's VM's log. */
int ljlog_mark(lua_State *L, const char *text)
{
	struct logger_vm *vm = logger_vm_of(G(L));
	errmsg[0] = '\0';
	if (!vm) {
		snprintf(errmsg, sizeof errmsg, "not profiling this Lua VM");
		return -ENOENT;
	}
	if (!text) {
		snprintf(errmsg, sizeof errmsg, "ljlog_mark: text is NULL");
		return -EINVAL;
	}
	logger_mark(vm, text, strlen(text));
	return 0;
}

/* Any thread. The calling thread's last message. */
const char *ljlog_errmsg(void)
{
	return errmsg;
}

/* -- Lua API ----------------------------------------------------------------------- */

/* VM thread only, Lua API context. Build "k,k=v" from an options table
** at index idx. */
static int opts_from_table(lua_State *L, int idx, char *out, size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		int w = 0;
		if (lua_type(L, -2) != LUA_TSTRING) {
			lua_pop(L, 2);
			snprintf(out, len, "option keys must be strings");
			return -EINVAL;
		}
		const char *k = lua_tostring(L, -2);
		switch (lua_type(L, -1)) {
		case LUA_TBOOLEAN:
			if (lua_toboolean(L, -1))
				w = snprintf(out + n, len - n, "%s%s",
					     n ? "," : "", k);
			break;
		case LUA_TSTRING:
		case LUA_TNUMBER:
			w = snprintf(out + n, len - n, "%s%s=%s", n ? "," : "",
				     k, lua_tostring(L, -1));
			break;
		default:
			lua_pop(L, 2);
			snprintf(
			    out, len,
			    "option '%s' must be true, a string or a number",
			    k);
			return -EINVAL;
		}
		if (w < 0 || (size_t)w >= len - n) {
			lua_pop(L, 2);
			snprintf(out, len, "options too long");
			return -EINVAL;
		}
		n += (size_t)w;
		lua_pop(L, 1);
	}
	return 0;
}

/* VM thread only, Lua API context. Return nil, msg. */
static int fail(lua_State *L, const char *msg)
{
	lua_pushnil(L);
	lua_pushstring(L, msg);
	return 2;
}

/* VM thread only, Lua API. ljlog.start([options]) -> true | nil, message */
static int l_start(lua_State *L)
{
	char buf[OPTS_FILE_MAX + 512], err[512];
	const char *opt = "";
	if (lua_istable(L, 1)) {
		if (opts_from_table(L, 1, buf, sizeof buf) < 0)
			return fail(L, buf);
		opt = buf;
	} else if (lua_type(L, 1) == LUA_TSTRING) {
		opt = lua_tostring(L, 1);
	} else if (!lua_isnoneornil(L, 1)) {
		return fail(L,
			    "ljlog.start: options must be a string or a table");
	}
	if (logger_attach(L, opt, err, sizeof err) < 0)
		return fail(L, err);
	lua_pushboolean(L, 1);
	return 1;
}

/* VM thread only, Lua API. ljlog.stop() -> true | nil, message */
static int l_stop(lua_State *L)
{
	char err[512];
	if (logger_detach(L, err, sizeof err) < 0)
		return fail(L, err);
	lua_pushboolean(L, 1);
	return 1;
}

/* VM thread only, Lua API. ljlog.running() -> boolean */
static int l_running(lua_State *L)
{
	lua_pushboolean(L, logger_vm_of(G(L)) != NULL);
	return 1;
}

/* VM thread only, Lua API. ljlog.snapshot() -> true | nil, message */
static int l_snapshot(lua_State *L)
{
	if (ljlog_snapshot(L) < 0)
		return fail(L, ljlog_errmsg());
	lua_pushboolean(L, 1);
	return 1;
}

/* VM thread only, Lua API context. Raise msg as an error at the caller of
** the C function (its chunk and line, as Lua's own errors). */
static int caller_error(lua_State *L, const char *msg)
{
	luaL_where(L, 1);
	lua_pushstring(L, msg);
	lua_concat(L, 2);
	return lua_error(L);
}

/* VM thread only, Lua API. ljlog.zone(name) pushes a zone, ljlog.zone()
** pops one; nothing returned. A no-op when the VM is not profiled. */
static int l_zone(lua_State *L)
{
	struct logger_vm *vm = logger_vm_of(G(L));
	size_t len = 0;
	const char *name = NULL;
	if (!vm)
		return 0;
	if (!lua_isnoneornil(L, 1)) {
		if (lua_type(L, 1) != LUA_TSTRING)
			return caller_error(L,
					    "ljlog.zone(): the name must be a "
					    "string (or nothing, to pop)");
		name = lua_tolstring(L, 1, &len);
	}
	if (logger_zone(vm, name, len) < 0)
		return caller_error(L, "ljlog.zone(): no zone to pop");
	return 0;
}

/* VM thread only, Lua API. ljlog.mark(text): nothing returned. A no-op
** when the VM is not profiled. */
static int l_mark(lua_State *L)
{
	struct logger_vm *vm = logger_vm_of(G(L));
	size_t len;
	if (!vm)
		return 0;
	if (lua_type(L, 1) != LUA_TSTRING)
		return caller_error(L,
				    "ljlog.mark(): the text must be a string");
	const char *text = lua_tolstring(L, 1, &len);
	logger_mark(vm, text, len);
	return 0;
}

/* VM thread only. require "ljlog": the module table; attaches when
** LUAJIT_PROFILE is set and this VM is not profiled yet. */
int luaopen_ljlog(lua_State *L)
{
	static const luaL_Reg fns[] = {{"start", l_start},
				       {"stop", l_stop},
				       {"running", l_running},
				       {"snapshot", l_snapshot},
				       {"zone", l_zone},
				       {"mark", l_mark},
				       {NULL, NULL}};
	if (luaweak_resolve(NULL) < 0) /* its own caller is LuaJIT */
		return 0;
	logger_pin();
	const char *env = logger_env_options();
	if (env && !logger_vm_of(G(L))) {
		char err[512];
		if (logger_attach(L, env, err, sizeof err) < 0)
			fprintf(
			    stderr,
			    "ljlog: LUAJIT_PROFILE: %s; running unprofiled\n",
			    err);
	}
	lua_newtable(L);
	luaL_register(L, NULL, fns);
	lua_pushstring(L, PACKAGE_VERSION);
	lua_setfield(L, -2, "version");
	return 1;
}
