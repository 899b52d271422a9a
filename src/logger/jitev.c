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

/* VM thread only (trace event). Proto and line of the function at stack index fi and bytecode
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
	*line = ljwin_proto_line(pt, (BCPos)lua_tointeger(L, pi));
	return pt;
}

#define JITEV_KEY "ljlog.jitev" /* registry: {fn=, prev=, slot=} */

/* VM thread only, inside the vmevent. Pass the event on to the handler
** that was attached before ljlog's (-jv, -jdump): LuaJIT keeps one. */
static void chain(lua_State *L)
{
	int n = lua_gettop(L);
	if (!lua_checkstack(L, n + 3))
		return;
	lua_getfield(L, LUA_REGISTRYINDEX, JITEV_KEY);
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, "prev");
		if (lua_isfunction(L, -1)) {
			for (int i = 1; i <= n; i++)
				lua_pushvalue(L, i);
			(void)lua_pcall(L, n, 0, 0);
		}
	}
	lua_settop(L, n);
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
	chain(L);
	return 0;
}

/* VM thread only, Lua API context. Push jit.attach, or return -ENOTSUP
** with a message. */
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

/* VM thread only, Lua API context. The trace handler now in _VMEVENTS and its key (pushed: key, value), or
** nothing pushed (returns 0). */
static int current_trace_handler(lua_State *L, int regt)
{
	lua_getfield(L, LUA_REGISTRYINDEX, "_VMEVENTS");
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		return 0;
	}
	lua_getfield(L, regt, "slot");
	lua_pushvalue(L, -1);
	lua_rawget(L, -3);
	lua_remove(L, -3);
	return 1;
}

/* VM thread only, Lua API context. jit.attach(on_trace, "trace"), chained
** to the handler that was there. */
int jitev_start(lua_State *L, char *err, size_t errlen)
{
	int top = lua_gettop(L), r;
	if (!lua_checkstack(L, 10))
		return -ENOMEM;
	/* Before: every handler by key. */
	lua_newtable(L); /* top+1: the old _VMEVENTS, copied */
	lua_getfield(L, LUA_REGISTRYINDEX, "_VMEVENTS");
	if (lua_istable(L, -1)) {
		lua_pushnil(L);
		while (lua_next(L, -2)) {
			lua_pushvalue(L, -2);
			lua_insert(L, -2);
			lua_rawset(L, top + 1);
		}
	}
	lua_pop(L, 1);
	lua_pushcfunction(L, on_trace);
	int fn = lua_gettop(L);
	if ((r = push_attach(L, err, errlen)) < 0) {
		lua_settop(L, top);
		return r;
	}
	lua_pushvalue(L, fn);
	lua_pushliteral(L, "trace");
	if (lua_pcall(L, 2, 0, 0) != 0) {
		snprintf(err, errlen, "jit: jit.attach failed: %s",
			 lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
		lua_settop(L, top);
		return -EINVAL;
	}
	/* After: the key holding on_trace is the trace event's; what it held
	** before is the handler to chain to. */
	lua_createtable(L, 0, 3);
	int regt = lua_gettop(L);
	lua_pushvalue(L, fn);
	lua_setfield(L, regt, "fn");
	lua_getfield(L, LUA_REGISTRYINDEX, "_VMEVENTS");
	if (lua_istable(L, -1)) {
		lua_pushnil(L);
		while (lua_next(L, -2)) {
			if (lua_rawequal(L, -1, fn)) {
				lua_pushvalue(L, -2);
				lua_setfield(L, regt, "slot");
				lua_pushvalue(L, -2);
				lua_rawget(L, top + 1);
				lua_setfield(L, regt, "prev");
			}
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	lua_setfield(L, LUA_REGISTRYINDEX, JITEV_KEY);
	lua_settop(L, top);
	return 0;
}

/* VM thread only, Lua API context. Detach: put the previous handler back,
** or say that another one replaced ljlog's meanwhile. */
void jitev_stop(lua_State *L)
{
	int top = lua_gettop(L);
	if (!lua_checkstack(L, 8))
		return;
	lua_getfield(L, LUA_REGISTRYINDEX, JITEV_KEY);
	int regt = lua_gettop(L);
	if (lua_istable(L, regt) && current_trace_handler(L, regt)) {
		lua_getfield(L, regt, "fn");
		if (lua_rawequal(L, -1, -2)) {
			lua_getfield(L, LUA_REGISTRYINDEX, "_VMEVENTS");
			lua_getfield(L, regt, "slot");
			lua_getfield(L, regt, "prev");
			lua_rawset(L, -3);
			G(L)->vmevmask =
			    VMEVENT_NOCACHE; /* as jit.attach does */
		} else {
			fprintf(stderr,
				"ljlog: jit: another jit.attach(f, "
				"\"trace\") replaced ljlog's handler: "
				"trace events were lost from then on\n");
		}
	}
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, JITEV_KEY);
	lua_settop(L, top);
}

/* VM thread only, Lua API context. Have LuaJIT's recorder mark each new
** function (JITEV_FUNCS) or each new line (JITEV_LINES) in the traces it
** records from now on, as it does for its own profiler's modes (-jp=f,
** -jp=l): an IR_PROF check and a snapshot there (lj_record.c,
** rec_profile_ins). The snapshot is what lets a sample or an allocation in
** compiled code name its inlined functions (and, per line, its line); the
** check tests a hook bit only LuaJIT's own profiler sets, so it never exits
** the trace for ljlog. Traces already compiled are flushed to be recorded
** again. mode when set here (jitev_lines_off undoes it); 0 when a mode was
** set already (jit.p running) or this LuaJIT has no profiler. */
int jitev_lines_on(lua_State *L, int mode)
{
#if LJ_HASJIT && LJ_HASPROFILE
	jit_State *J = L2J(L);
	if (J->prof_mode)
		return 0;
	J->prof_mode = (char)mode;
	if (!(G(L)->hookmask & HOOK_GC))
		luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_FLUSH);
	return mode;
#else
	(void)L;
	(void)mode;
	return 0;
#endif
}

/* VM thread only. Undo jitev_lines_on of mode, unless LuaJIT's own
** profiler has set its mode since (it owns it then). Compiled traces keep
** their checks, which never fire for ljlog. */
void jitev_lines_off(lua_State *L, int mode)
{
#if LJ_HASJIT && LJ_HASPROFILE
	if (L2J(L)->prof_mode == mode)
		L2J(L)->prof_mode = 0;
#else
	(void)L;
	(void)mode;
#endif
}
