/*
** ljlog jit: trace events from jit.attach.
** The callback runs inside LuaJIT's vmevent (no hooks, no C wrapper) and
** only records into the VM's event buffer.
*/
#include "logger/jitev.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "logger/logger.h"

/* LuaJIT's trace error messages, by TraceError number. */
static const char *const trerr[] = {
#define TREDEF(name, msg) msg,
#include "lj_traceerr.h"
#undef TREDEF
};

/* Any thread. The message of trace error reason with its info. */
const char *jitev_message(unsigned reason, int64_t info, const char *ffname,
			  char *buf, size_t len)
{
	const char *t = reason < sizeof trerr / sizeof *trerr ? trerr[reason]
							      : "unknown error";
	const char *pct = strchr(t, '%');
	if (!pct || (pct[1] != 'd' && pct[1] != 's')) {
		snprintf(buf, len, "%s", t);
	} else if (pct[1] == 's' && ffname) {
		snprintf(buf, len, "%.*s%s%s", (int)(pct - t), t, ffname,
			 pct + 2);
	} else {
		snprintf(buf, len, "%.*s%lld%s", (int)(pct - t), t,
			 (long long)info, pct + 2);
	}
	return buf;
}

/* Proto and line of the function at stack index fi and bytecode
** position at index pi (arguments of the vmevent). */
static GCproto *where(lua_State *L, int fi, int pi, uint32_t *line)
{
	*line = 0;
	if (!lua_isfunction(L, fi))
		return NULL;
	GCfunc *fn = (GCfunc *)(uintptr_t)lua_topointer(L, fi);
	if (!isluafunc(fn))
		return NULL;
	GCproto *pt = funcproto(fn);
	*line = lj_proto_line(pt, (BCPos)lua_tointeger(L, pi));
	return pt;
}

/* VM thread only, inside LuaJIT's trace vmevent: record the event. */
static int on_trace(lua_State *L)
{
	struct logger_vm *vm = logger_vm_of(G(L));
	const char *what = lua_tostring(L, 1);
	if (!vm || !what)
		return 0;
	uint64_t ts = clock_now(), *p;
	unsigned traceno = (unsigned)lua_tointeger(L, 2);
	uint32_t line;
	GCproto *pt;
	if (strcmp(what, "start") == 0) {
		pt = where(L, 3, 4, &line);
		p = logger_reserve(vm, NULL, ts);
		p[0] = BUF_W0(BUF_TRACE_START, traceno);
		p[1] = ts;
		p[2] = (uint64_t)(uintptr_t)pt;
		p[3] = line;
		vm->bp = p + 4;
	} else if (strcmp(what, "stop") == 0) {
		jit_State *J = G2J(vm->g);
		GCtrace *T =
		    traceno < J->sizetrace ? traceref(J, traceno) : NULL;
		if (!T)
			return 0;
		p = logger_reserve(vm, NULL, ts);
		p[0] = BUF_W0(BUF_TRACE_STOP, traceno);
		p[1] = ts;
		p[2] = (uint64_t)(uintptr_t)T;
		vm->bp = p + 3;
	} else if (strcmp(what, "abort") == 0) {
		pt = where(L, 3, 4, &line);
		int64_t info =
		    lua_isnumber(L, 6) ? (int64_t)lua_tointeger(L, 6) : -1;
		p = logger_reserve(vm, NULL, ts);
		p[0] = BUF_W0(BUF_TRACE_ABORT, traceno);
		p[1] = ts;
		p[2] = (uint64_t)(uintptr_t)pt;
		p[3] = line | (uint64_t)(uint32_t)lua_tointeger(L, 5) << 32;
		p[4] = (uint64_t)info;
		vm->bp = p + 5;
	} else if (strcmp(what, "flush") == 0) {
		p = logger_reserve(vm, NULL, ts);
		p[0] = BUF_W0(BUF_TRACE_FLUSH, 0);
		p[1] = ts;
		vm->bp = p + 2;
	}
	return 0;
}

/* Push jit.attach, or return -ENOTSUP with a message. */
static int push_attach(lua_State *L, char *err, size_t errlen)
{
	lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
	lua_getfield(L, -1, "jit");
	if (!lua_istable(L, -1)) {
		lua_pop(L, 2);
		snprintf(err, errlen, "jit: this VM has no 'jit' module");
		return -ENOTSUP;
	}
	lua_getfield(L, -1, "attach");
	lua_remove(L, -2);
	lua_remove(L, -2);
	if (!lua_isfunction(L, -1)) {
		lua_pop(L, 1);
		snprintf(err, errlen, "jit: no jit.attach in this LuaJIT");
		return -ENOTSUP;
	}
	return 0;
}

/* VM thread only, Lua API context. jit.attach(on_trace, "trace"). */
int jitev_start(lua_State *L, char *err, size_t errlen)
{
	int top = lua_gettop(L), r;
	if (!lua_checkstack(L, 6))
		return -ENOMEM;
	if ((r = push_attach(L, err, errlen)) < 0)
		return r;
	lua_pushcfunction(L, on_trace);
	lua_pushliteral(L, "trace");
	if (lua_pcall(L, 2, 0, 0) != 0) {
		snprintf(err, errlen, "jit: jit.attach failed: %s",
			 lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
		lua_settop(L, top);
		return -EINVAL;
	}
	lua_settop(L, top);
	return 0;
}

/* VM thread only, Lua API context. jit.attach(on_trace): detach. */
void jitev_stop(lua_State *L)
{
	char err[128];
	int top = lua_gettop(L);
	if (!lua_checkstack(L, 6) || push_attach(L, err, sizeof err) < 0)
		return;
	lua_pushcfunction(L, on_trace);
	(void)lua_pcall(L, 1, 0, 0);
	lua_settop(L, top);
}
