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
#include "lj_ircall.h"

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

#define JITEV_KEY     "ljlog.jitev"  /* registry: {fn=, prev=, slot=} */
#define JITEV_REC_KEY "ljlog.jitrec" /* the same for the record handler */

/* VM thread only, inside the vmevent. Pass the event on to the handler
** that was attached before ljlog's (-jv, -jdump): LuaJIT keeps one per
** event. key: the registry entry of ljlog's handler. */
static void chain(lua_State *L, const char *key)
{
	int n = lua_gettop(L);
	if (!lua_checkstack(L, n + 3))
		return;
	lua_getfield(L, LUA_REGISTRYINDEX, key);
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
		logger_commit(vm,
			      buf_put_trace_start(p, ts, traceno, pt, line));
	} else if (strcmp(what, "stop") == 0) {
		jit_State *J = G2J(vm->g);
		GCtrace *T =
		    traceno < J->sizetrace ? traceref(J, traceno) : NULL;
		if (!T)
			return 0;
		p = logger_reserve(vm, NULL, ts);
		logger_commit(vm, buf_put_trace_stop(p, ts, traceno, T));
	} else if (strcmp(what, "abort") == 0) {
		pt = where(L, 3, 4, &line);
		int64_t info =
		    lua_isnumber(L, 6) ? (int64_t)lua_tointeger(L, 6) : -1;
		uint32_t reason = (uint32_t)lua_tointeger(L, 5);
		p = logger_reserve(vm, NULL, ts);
		logger_commit(vm, buf_put_trace_abort(p, ts, traceno, pt, line,
						      reason, info));
	} else if (strcmp(what, "flush") == 0) {
		p = logger_reserve(vm, NULL, ts);
		logger_commit(vm, buf_put_trace_flush(p, ts));
	}
	chain(L, JITEV_KEY);
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

/* VM thread only, Lua API context. The handler now in _VMEVENTS under the
** key of regt.slot (pushed: key, value), or
** nothing pushed (returns 0). */
static int current_handler(lua_State *L, int regt)
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

/* VM thread only, Lua API context. jit.attach(f, event), chained to the
** handler that was there; registered under key. 0 or -errno. */
static int attach(lua_State *L, lua_CFunction f, const char *event,
		  const char *key, char *err, size_t errlen)
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
	lua_pushcfunction(L, f);
	int fn = lua_gettop(L);
	if ((r = push_attach(L, err, errlen)) < 0) {
		lua_settop(L, top);
		return r;
	}
	lua_pushvalue(L, fn);
	lua_pushstring(L, event);
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
	lua_setfield(L, LUA_REGISTRYINDEX, key);
	lua_settop(L, top);
	return 0;
}

/* VM thread only, Lua API context. jit.attach(on_trace, "trace"), chained
** to the handler that was there. */
int jitev_start(lua_State *L, char *err, size_t errlen)
{
	return attach(L, on_trace, "trace", JITEV_KEY, err, errlen);
}

/* VM thread only, Lua API context. Detach ljlog's handler of event
** (registered under key): put the previous handler back, or say that
** another one replaced ljlog's meanwhile, and what was lost (lost). */
static void detach(lua_State *L, const char *event, const char *key,
		   const char *lost)
{
	int top = lua_gettop(L);
	if (!lua_checkstack(L, 8))
		return;
	lua_getfield(L, LUA_REGISTRYINDEX, key);
	int regt = lua_gettop(L);
	if (lua_istable(L, regt) && current_handler(L, regt)) {
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
				"ljlog: jit: another jit.attach(f, \"%s\") "
				"replaced ljlog's handler: %s from then on\n",
				event, lost);
		}
	}
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, key);
	lua_settop(L, top);
}

/* VM thread only, Lua API context. Detach the trace handler. */
void jitev_stop(lua_State *L)
{
	detach(L, "trace", JITEV_KEY, "trace events were lost");
}

#if LJ_HASJIT && LJ_HASPROFILE
/* VM thread only, Lua API context. Record traces in mode from now on (0:
** LuaJIT's own recording): those already compiled are flushed. */
static void record_in(lua_State *L, int mode)
{
	L2J(L)->prof_mode = (char)mode;
	if (!(G(L)->hookmask & HOOK_GC))
		luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_FLUSH);
}
#endif

/* VM thread only, Lua API context. Have LuaJIT's recorder mark each new
** function (JITEV_FUNCS) or each new line (JITEV_LINES) in the traces it
** records from now on, as it does for its own profiler's modes (-jp=f,
** -jp=l): an IR_PROF check and an exit there (lj_record.c,
** rec_profile_ins). The exit is what lets a sample or an allocation in
** compiled code name its inlined functions (and, per line, its line); the
** check tests a hook bit only LuaJIT's own profiler sets, so it never exits
** the trace for ljlog. Traces already compiled are flushed to be recorded
** again. mode when set here (jitev_lines_off undoes it); 0 when a mode was
** set already (jit.p running) or this LuaJIT has no profiler. */
int jitev_lines_on(lua_State *L, int mode)
{
#if LJ_HASJIT && LJ_HASPROFILE
	if (L2J(L)->prof_mode)
		return 0;
	record_in(L, mode);
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

/* -- Snapshots per line where the code allocates --------------------------- */

#if LJ_HASJIT && LJ_HASPROFILE
/* Operand modes of each bytecode, as LuaJIT's lj_bc_mode (not exported). */
static const uint16_t bc_modes[] = {BCDEF(BCMODE)};

#define MODE_A(op) ((BCMode)(bc_modes[op] & 7))
#define MODE_B(op) ((BCMode)((bc_modes[op] >> 3) & 15))
#define MODE_C(op) ((BCMode)((bc_modes[op] >> 7) & 15))

/* VM thread only, inside the record vmevent. The base of the function
** being recorded: the interpreter's (which the recorder reads), saved in
** the frame link of the protected call that runs the event's handler; NULL
** when the frames are not as expected. */
static TValue *recorded_base(lua_State *L, jit_State *J)
{
	TValue *fr = L->base - 1;
	if (frame_typep(fr) != FRAME_CP)
		return NULL;
	TValue *b = frame_prevd(fr) + 1;
	if (b <= tvref(L->stack) + 1 + LJ_FR2 || b >= fr)
		return NULL;
	return ljwin_frame_func(b - 1) == J->fn ? b : NULL;
}

/* VM thread only, inside the record vmevent. Whether the slot of base b
** (below the event's frame) holds a Lua function (whose instructions are
** recorded, and decided, one by one). */
static int lua_callee(lua_State *L, TValue *b, int32_t slot)
{
	if (!b || slot < 0 || b + slot >= L->base - 1 - LJ_FR2)
		return 0;
	return tvisfunc(b + slot) && isluafunc(funcV(b + slot));
}

/* VM thread only, inside the record vmevent. Whether a var operand of ins
** (mode m, slot n) holds a cdata: arithmetic, indexing and comparing
** cdata may box a result. */
static int cdata_in(lua_State *L, TValue *b, unsigned m, uint32_t n)
{
	return b && m == BCMvar && b + n < L->base - 1 - LJ_FR2 &&
	       tviscdata(b + n);
}

/* VM thread only, inside the record vmevent. Whether the instruction
** about to be recorded (at J->pc) may allocate: a new table, string or
** closure, a store that may grow a table, a call of anything but a Lua
** function (a fast function, C, a metamethod), an operand that is a
** cdata. A Lua function's own instructions are decided as they come. */
static int bc_allocates(lua_State *L, jit_State *J)
{
	BCIns ins = *J->pc;
	BCOp op = bc_op(ins);
	TValue *b = recorded_base(L, J);
	switch (op) {
	case BC_TNEW:
	case BC_TDUP:
	case BC_CAT:
	case BC_FNEW:
	case BC_TSETV:
	case BC_TSETS:
	case BC_TSETB:
	case BC_TSETM:
	case BC_GSET: return 1;
	case BC_CALL:
	case BC_CALLM:
	case BC_CALLT:
	case BC_CALLMT: return !lua_callee(L, b, (int32_t)bc_a(ins));
	case BC_ITERC: return !lua_callee(L, b, (int32_t)bc_a(ins) - 3);
	default: break;
	}
	if ((size_t)op >= sizeof bc_modes / sizeof *bc_modes)
		return 1;
	if (MODE_B(op) == BCMnone) /* A and D */
		return cdata_in(L, b, MODE_A(op), bc_a(ins)) ||
		       cdata_in(L, b, MODE_C(op), bc_d(ins));
	return cdata_in(L, b, MODE_A(op), bc_a(ins)) ||
	       cdata_in(L, b, MODE_B(op), bc_b(ins)) ||
	       cdata_in(L, b, MODE_C(op), bc_c(ins));
}

/* VM thread only, inside the record vmevent. Whether the IR [from, to) of
** the trace being recorded calls anything that may allocate (what
** bc_allocates did not foresee). */
static int ir_allocates(const GCtrace *T, IRRef from, IRRef to)
{
	for (IRRef ref = from; ref < to; ref++) {
		switch (T->ir[ref].o) {
		case IR_SNEW:
		case IR_XSNEW:
		case IR_TNEW:
		case IR_TDUP:
		case IR_CNEW:
		case IR_CNEWI:
		case IR_TOSTR:
		case IR_BUFPUT:
		case IR_BUFSTR:
		case IR_NEWREF:
		case IR_CALLN:
		case IR_CALLA:
		case IR_CALLL:
		case IR_CALLS:
		case IR_CALLXS: return 1;
		default: break;
		}
	}
	return 0;
}

/* VM thread only, inside the record vmevent, before LuaJIT records the
** instruction at J->pc. A new recording starts in r->base; one goes to
** an exit per line (from this instruction on, as LuaJIT's mode l) before
** its first instruction that may allocate, or after one that did. */
static void rec_decide(lua_State *L, jit_State *J, struct jitev_rec *r)
{
	GCtrace *T = &J->cur;
	/* lj_record_setup clears prev_pt; in mode l only it stays set. */
	if (!J->prev_pt && (T->traceno != r->traceno || T->nsnap < r->nexits)) {
		if (r->switched && J->prof_mode == JITEV_LINES)
			J->prof_mode = r->base;
		r->switched = 0;
		r->traceno = T->traceno;
		r->scan = REF_FIRST;
	}
	r->nexits = T->nsnap;
	if (r->scan < REF_FIRST || r->scan > T->nins)
		r->scan = T->nins < REF_FIRST ? REF_FIRST : T->nins;
	if (J->prof_mode == r->base && J->pt &&
	    (ir_allocates(T, r->scan, T->nins) || bc_allocates(L, J))) {
		J->prof_mode = JITEV_LINES;
		J->prev_line = -1; /* a check and exit here */
		r->switched = 1;
	}
	r->scan = T->nins;
}

/* VM thread only, inside LuaJIT's record vmevent. */
static int on_record(lua_State *L)
{
	struct logger_vm *vm = logger_vm_of(G(L));
	if (vm && vm->jit.rec.on)
		rec_decide(L, L2J(L), &vm->jit.rec);
	chain(L, JITEV_REC_KEY);
	return 0;
}
#endif

/* VM thread only, Lua API context. See jitev.h. */
int jitev_alloc_lines_on(lua_State *L, struct jitev_rec *r, int base, char *err,
			 size_t errlen)
{
	memset(r, 0, sizeof *r);
#if LJ_HASJIT && LJ_HASPROFILE
	if (L2J(L)->prof_mode)
		return 0;
	int e = attach(L, on_record, "record", JITEV_REC_KEY, err, errlen);
	if (e < 0)
		return e;
	r->on = 1;
	r->base = base;
	record_in(L, base);
	return 1;
#else
	(void)L;
	(void)base;
	(void)err;
	(void)errlen;
	return 0;
#endif
}

/* VM thread only, Lua API context. See jitev.h. */
void jitev_alloc_lines_off(lua_State *L, struct jitev_rec *r)
{
#if LJ_HASJIT && LJ_HASPROFILE
	if (!r->on)
		return;
	detach(L, "record", JITEV_REC_KEY,
	       "allocation lines in compiled code may be coarse");
	jit_State *J = L2J(L);
	if (J->prof_mode == r->base ||
	    (r->switched && J->prof_mode == JITEV_LINES))
		J->prof_mode = 0;
#else
	(void)L;
#endif
	r->on = 0;
}

#if LJ_HASJIT
/* VM thread only, Lua API context. jit.util.ircalladdr(id) of the table
** at index t, or 0. */
static uintptr_t ircalladdr(lua_State *L, int t, unsigned id)
{
	uintptr_t a = 0;
	lua_getfield(L, t, "ircalladdr");
	lua_pushinteger(L, (lua_Integer)id);
	if (lua_isfunction(L, -2) && lua_pcall(L, 1, 1, 0) == 0 &&
	    lua_type(L, -1) == LUA_TNUMBER)
		a = (uintptr_t)lua_tonumber(L, -1);
	lua_pop(L, 1);
	return a;
}
#endif

/* VM thread only, Lua API context. See jitev.h. jit.util is LuaJIT's own
** module (lib_jit.c), preloaded: taken from package.loaded or its
** loader, never through the program's require. */
void jitev_callees(lua_State *L, struct texit_callees *c)
{
	memset(c, 0, sizeof *c);
#if LJ_HASJIT
	int top = lua_gettop(L);
	if (!lua_checkstack(L, 6))
		return;
	lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
	lua_getfield(L, -1, "jit.util");
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		lua_getfield(L, LUA_REGISTRYINDEX, "_PRELOAD");
		if (!lua_istable(L, -1)) {
			lua_settop(L, top);
			return;
		}
		lua_getfield(L, -1, "jit.util");
		lua_pushstring(L, "jit.util");
		if (!lua_isfunction(L, -2) || lua_pcall(L, 1, 1, 0) != 0 ||
		    !lua_istable(L, -1)) {
			lua_settop(L, top);
			return;
		}
	}
	int t = lua_gettop(L);
	c->table[0] = ircalladdr(L, t, IRCALL_lj_tab_new1);
	c->table[1] = ircalladdr(L, t, IRCALL_lj_tab_new_ah);
	c->table[2] = ircalladdr(L, t, IRCALL_lj_tab_dup);
	c->newkey = ircalladdr(L, t, IRCALL_lj_tab_newkey);
	lua_settop(L, top);
#else
	(void)L;
#endif
}
