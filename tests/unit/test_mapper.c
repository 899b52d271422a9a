/*
** Unit tests: the mapper (src/maps/mapper.c) on a real LuaJIT VM, its
** MAPPING blocks read back by the real decoder. Each test is named after
** the bug it catches.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lualib.h"
#include "maps/mapper.h"
#include "maps/texit.h"
#include "reallog.h"

#define MAXREC 64

/* What the decoder defined, in the order it met the records. */
struct seen {
	int n;
	uint32_t id[MAXREC];
	unsigned kind[MAXREC];
	char name[MAXREC][64]; /* PROTO, CFUNC or FFUNC name; STRING text */
	uint64_t firstline[MAXREC];
	int nrename;
	uint32_t rename_id[MAXREC];
	char rename[MAXREC][64];
	int nev;
	unsigned evkind[MAXREC]; /* kind of each event's object */
};

/* Test thread. The name a record carries. */
static const char *rec_name(const struct decode_obj *o)
{
	switch (o->kind) {
	case FORMAT_REC_PROTO: return o->u.proto.name.s;
	case FORMAT_REC_CFUNC: return o->u.cfunc.name.s;
	case FORMAT_REC_FFUNC: return o->u.ffunc.name.s;
	case FORMAT_REC_STRING: return o->u.str.text.s;
	default: return "";
	}
}

/* Test thread. Keep a record. */
static int on_record(void *ud, struct decode_obj *o)
{
	struct seen *s = ud;
	if (o->kind == FORMAT_REC_VM || s->n == MAXREC)
		return 0;
	s->id[s->n] = o->id;
	s->kind[s->n] = o->kind;
	snprintf(s->name[s->n], sizeof s->name[0], "%s", rec_name(o));
	s->firstline[s->n] =
	    o->kind == FORMAT_REC_PROTO ? o->u.proto.firstline : 0;
	s->n++;
	return 0;
}

/* Test thread. Keep a NAME record's effect. */
static int on_rename(void *ud, struct decode_obj *o)
{
	struct seen *s = ud;
	if (s->nrename == MAXREC)
		return 0;
	s->rename_id[s->nrename] = o->id;
	snprintf(s->rename[s->nrename], sizeof s->rename[0], "%s", rec_name(o));
	s->nrename++;
	return 0;
}

/* Test thread. Keep the kind of each event's object (0: none). */
static int on_event(void *ud, const struct decode_event *ev)
{
	struct seen *s = ud;
	if (s->nev < MAXREC)
		s->evkind[s->nev++] = ev->obj ? ev->obj->kind : 0;
	return 0;
}

/* Test thread. The index of ID id among s's records, -1 when none. */
static int find(const struct seen *s, uint64_t id)
{
	for (int i = 0; i < s->n; i++)
		if (s->id[i] == id)
			return i;
	return -1;
}

/* A VM, its mapper and the log its blocks go to. */
struct rig {
	lua_State *L;
	struct mapper m;
	struct wbuf out;
	struct lblog log;
};

/* Test thread. A fresh VM with its libraries and a mapper for it. */
static void rig_init(struct rig *r)
{
	memset(r, 0, sizeof *r);
	r->L = luaL_newstate();
	cr_assert_not_null(r->L);
	luaL_openlibs(r->L);
	cr_assert_eq(mapper_init(&r->m, G(r->L), mapper_new_id()), 0);
	rl_start(&r->log, r->m.vm_id);
}

/* Test thread. Free the rig. */
static void rig_free(struct rig *r)
{
	mapper_free(&r->m);
	wbuf_free(&r->out);
	lblog_free(&r->log);
	lua_close(r->L);
}

/* Test thread. Start a pass into a fresh r->out (lock held). */
static void pass_begin(struct rig *r)
{
	r->out.len = 0;
	mapper_lock(&r->m);
	mapper_begin(&r->m, &r->out);
}

/* Test thread. End the pass; its block, if any, goes to the log. Returns
** mapper_end's result. */
static int pass_end(struct rig *r)
{
	int rc = mapper_end(&r->m);
	mapper_unlock(&r->m);
	cr_assert_geq(rc, 0, "mapper_end: %d", rc);
	if (rc > 0)
		rl_add(&r->log, &r->out, 0);
	else
		cr_assert_eq(r->out.len, 0, "no block, no bytes");
	return rc;
}

/* Test thread. Decode the log so far into s. */
static void rig_decode(struct rig *r, struct seen *s)
{
	struct decode_sink sink = {.ud = s,
				   .record = on_record,
				   .rename = on_rename,
				   .event = on_event};
	char err[512];
	memset(s, 0, sizeof *s);
	int rc = rl_decode(&r->log, &sink, NULL, err, sizeof err);
	cr_assert_eq(rc, 0, "decode: %s", err);
}

/* Test thread. The prototype of the function code returns, kept alive in
** the registry. */
static GCproto *proto_of(lua_State *L, const char *code, const char *chunk)
{
	cr_assert_eq(luaL_loadbuffer(L, code, strlen(code), chunk), 0);
	cr_assert_eq(lua_pcall(L, 0, 1, 0), 0);
	GCfunc *fn = (GCfunc *)(uintptr_t)lua_topointer(L, -1);
	cr_assert(isluafunc(fn));
	luaL_ref(L, LUA_REGISTRYINDEX);
	return funcproto(fn);
}

/* Test thread. The prototype of chunk code itself (not run), kept alive. */
static GCproto *chunk_of(lua_State *L, const char *code, const char *chunk)
{
	cr_assert_eq(luaL_loadbuffer(L, code, strlen(code), chunk), 0);
	GCfunc *fn = (GCfunc *)(uintptr_t)lua_topointer(L, -1);
	luaL_ref(L, LUA_REGISTRYINDEX);
	return funcproto(fn);
}

/* Test thread. A C function no table names. */
static int lonely_cfn(lua_State *L)
{
	(void)L;
	return 0;
}

/* An object born at a freed object's address is another object: a
** prototype freed by the GC sweep (mapper_proto_freed) or a coroutine freed
** (mapper_forget) must not lend its ID, else the new one's events read as
** the dead one's, under its name and chunk. */
Test(mapper, reused_address_after_free_gets_new_id)
{
	struct rig r;
	struct seen s;
	rig_init(&r);
	GCproto *pt = proto_of(r.L, "return function() end", "@a.lua");
	lua_State *co = lua_newthread(r.L);
	luaL_ref(r.L, LUA_REGISTRYINDEX);

	pass_begin(&r);
	uint64_t p1 = mapper_ref(&r.m, MAPPER_PROTO, (uintptr_t)pt, 0);
	uint64_t c1 = mapper_ref(&r.m, MAPPER_COROUTINE, (uintptr_t)co, 0);
	cr_assert_eq(pass_end(&r), 1);
	cr_assert(p1 && c1 && p1 != c1);

	/* Alive: the same IDs, nothing written. */
	pass_begin(&r);
	cr_assert_eq(mapper_ref(&r.m, MAPPER_PROTO, (uintptr_t)pt, 0), p1);
	cr_assert_eq(mapper_ref(&r.m, MAPPER_COROUTINE, (uintptr_t)co, 0), c1);
	cr_assert_eq(pass_end(&r), 0, "no record for a known object");

	/* Freed (the memory stays: a new object at the same address). */
	mapper_proto_freed(&r.m, pt);
	mapper_forget(&r.m, (uintptr_t)co);
	pass_begin(&r);
	uint64_t p2 = mapper_ref(&r.m, MAPPER_PROTO, (uintptr_t)pt, 0);
	uint64_t c2 = mapper_ref(&r.m, MAPPER_COROUTINE, (uintptr_t)co, 0);
	cr_assert_eq(pass_end(&r), 1);
	cr_assert_neq(p2, p1, "a reused address keeps the dead one's ID");
	cr_assert_neq(c2, c1);

	rig_decode(&r, &s);
	cr_assert_eq(s.n, 4, "%d records", s.n);
	int i1 = find(&s, p1), i2 = find(&s, p2);
	cr_assert(i1 >= 0 && i2 > i1);
	cr_assert_eq(s.kind[i2], FORMAT_REC_PROTO);
	cr_assert_eq(s.kind[find(&s, c2)], FORMAT_REC_COROUTINE);
	rig_free(&r);
}

/* Every kind a pass maps gets one record, in the pass's own MAPPING block
** written ahead of the events that use it; the ID cache of a pass and the
** map across passes never define an ID twice (the reader takes a second
** definition of an ID for a corrupt log). */
Test(mapper, each_object_recorded_once_ahead_of_its_events)
{
	struct rig r;
	struct seen s;
	rig_init(&r);
	GCproto *pt = proto_of(r.L, "\nreturn function() end", "@b.lua");
	lua_State *co = lua_newthread(r.L);
	luaL_ref(r.L, LUA_REGISTRYINDEX);
	lua_getglobal(r.L, "math");
	lua_getfield(r.L, -1, "abs");
	GCfunc *abs = (GCfunc *)(uintptr_t)lua_topointer(r.L, -1);
	lua_pop(r.L, 2);
	uintptr_t ff = abs->c.ffid | MAPPER_FF_ASM;
	mapper_lock(&r.m);
	names_scan(&r.m.names, r.L);
	mapper_unlock(&r.m);

	uint64_t id[5];
	for (int round = 0; round < 2; round++) {
		pass_begin(&r);
		for (int twice = 0; twice < 2; twice++) {
			uint64_t got[5] = {
			    mapper_ref(&r.m, MAPPER_PROTO, (uintptr_t)pt, 0),
			    mapper_ref(&r.m, MAPPER_CFUNC,
				       (uintptr_t)lonely_cfn, 0),
			    mapper_ref(&r.m, MAPPER_FFUNC, ff, 0),
			    mapper_ref(&r.m, MAPPER_COROUTINE, (uintptr_t)co,
				       0),
			    mapper_string(&r.m, "zone text", 9)};
			for (int k = 0; k < 5; k++) {
				cr_assert_neq(got[k], 0);
				if (round || twice)
					cr_assert_eq(got[k], id[k], "kind %d",
						     k);
				id[k] = got[k];
			}
		}
		cr_assert_eq(pass_end(&r), round ? 0 : 1);
	}
	/* Events after the MAPPING block name the objects by their IDs. */
	struct lbev ev;
	ev_begin(&ev);
	ev_switch(&ev, id[3], 1);
	ev_enter(&ev, 1, id[0], 1);
	ev_enter(&ev, 2, id[1], 1);
	ev_exit(&ev, 2, 1);
	ev_enter(&ev, 2, id[2], 1);
	ev_exit(&ev, 2, 1);
	ev_exit(&ev, 1, 1);
	lblog_events(&r.log, r.m.vm_id, 100, &ev);
	rig_decode(&r, &s);
	static const unsigned evkinds[] = {FORMAT_REC_COROUTINE,
					   FORMAT_REC_PROTO,
					   FORMAT_REC_CFUNC,
					   0,
					   FORMAT_REC_FFUNC,
					   0,
					   0};
	cr_assert_eq(s.nev, 7);
	for (int i = 0; i < s.nev; i++)
		if (evkinds[i])
			cr_assert_eq(s.evkind[i], evkinds[i], "event %d", i);
	cr_assert_eq(s.n, 5, "%d records", s.n);
	static const unsigned kinds[5] = {
	    FORMAT_REC_PROTO, FORMAT_REC_CFUNC, FORMAT_REC_FFUNC,
	    FORMAT_REC_COROUTINE, FORMAT_REC_STRING};
	for (int k = 0; k < 5; k++) {
		int i = find(&s, id[k]);
		cr_assert_geq(i, 0, "ID of kind %d defined", k);
		cr_assert_eq(s.kind[i], kinds[k]);
	}
	cr_assert_eq(s.firstline[find(&s, id[0])], 2);
	cr_assert_str_eq(s.name[find(&s, id[2])], "math.abs");
	cr_assert_str_eq(s.name[find(&s, id[4])], "zone text");
	rig_free(&r);
}

/* A prototype has no pointer to its parent: its name comes from the
** parent's bytecode, so children are mapped with their parent, in the same
** block, named; a sample-only log meets a child alone and must still find
** it named. */
Test(mapper, children_mapped_with_their_parent_get_its_names)
{
	struct rig r;
	struct seen s;
	rig_init(&r);
	GCproto *pt = chunk_of(r.L,
			       "local M = {}\n"
			       "function M.run() end\n"
			       "local function helper() end\n"
			       "return M, helper\n",
			       "@c.lua");
	pass_begin(&r);
	uint64_t id = mapper_ref(&r.m, MAPPER_PROTO, (uintptr_t)pt, 0);
	cr_assert_eq(pass_end(&r), 1);
	rig_decode(&r, &s);
	cr_assert_eq(s.n, 3, "the chunk and its two children, %d", s.n);
	cr_assert_eq(find(&s, id), 0, "the parent first");
	int run = -1, helper = -1;
	for (int i = 0; i < s.n; i++) {
		if (s.firstline[i] == 2)
			run = i;
		if (s.firstline[i] == 3)
			helper = i;
	}
	cr_assert(run > 0 && helper > 0);
	cr_assert_str_eq(s.name[run], "M.run");
	cr_assert_str_eq(s.name[helper], "helper");
	rig_free(&r);
}

/* A name found after its function was written unnamed goes out as a NAME
** record in the next pass (format 14), once; the reader renames the ID
** its events already use. */
Test(mapper, name_found_late_goes_out_once_in_the_next_pass)
{
	struct rig r;
	struct seen s;
	rig_init(&r);
	pass_begin(&r);
	uint64_t id = mapper_ref(&r.m, MAPPER_CFUNC, (uintptr_t)lonely_cfn, 0);
	cr_assert_eq(pass_end(&r), 1);

	mapper_lock(&r.m);
	mapper_name(&r.m, (uintptr_t)lonely_cfn, "mylib.lonely", 1);
	mapper_name(&r.m, (uintptr_t)lonely_cfn, "other.name", 1);
	mapper_unlock(&r.m);
	pass_begin(&r);
	cr_assert_eq(pass_end(&r), 1, "a block for the NAME record alone");
	pass_begin(&r);
	cr_assert_eq(pass_end(&r), 0, "written once");

	rig_decode(&r, &s);
	cr_assert_eq(s.nrename, 1);
	cr_assert_eq(s.rename_id[0], id);
	cr_assert_str_eq(s.rename[0], "mylib.lonely", "the first name wins");
	rig_free(&r);
}

/* 9e06898: put_proto read the name a freed parent had left for a child
** (pending) after freeing it. The name is used once, for the child's own
** record; a new object at the child's address does not inherit it. */
Test(mapper, pending_name_of_a_freed_parent_is_used_once)
{
	struct rig r;
	struct seen s;
	rig_init(&r);
	GCproto *child = proto_of(r.L, "return function() end", "@d.lua");
	mapper_lock(&r.m);
	mapper_name(&r.m, (uintptr_t)child, "from_parent", 1);
	mapper_unlock(&r.m);
	pass_begin(&r);
	uint64_t id1 = mapper_ref(&r.m, MAPPER_PROTO, (uintptr_t)child, 0);
	cr_assert_eq(pass_end(&r), 1);
	mapper_proto_freed(&r.m, child);
	pass_begin(&r);
	uint64_t id2 = mapper_ref(&r.m, MAPPER_PROTO, (uintptr_t)child, 0);
	cr_assert_eq(pass_end(&r), 1);
	rig_decode(&r, &s);
	cr_assert_str_eq(s.name[find(&s, id1)], "from_parent");
	cr_assert_str_eq(s.name[find(&s, id2)], "", "not inherited");
	rig_free(&r);
}

/* Test thread. Run code (a loop the JIT compiles); its first trace. */
static GCtrace *run_compiled(lua_State *L, const char *code)
{
	cr_assert_eq(luaL_loadbuffer(L, code, strlen(code), "@loop.lua"), 0);
	cr_assert_eq(lua_pcall(L, 0, 1, 0), 0);
	jit_State *J = G2J(G(L));
	for (MSize i = 1; i < J->sizetrace; i++)
		if (gcref(J->trace[i]))
			return gco2trace(gcref(J->trace[i]));
	cr_assert_fail("the loop was not compiled");
	return NULL;
}

/* A TRACE record names the PROTOs of its start and of its snapshots'
** frames: they are written before it, in the same block. */
Test(mapper, trace_prototypes_are_written_before_the_trace)
{
	struct rig r;
	struct seen s;
	rig_init(&r);
	GCtrace *T = run_compiled(r.L, "local function f(x) return x + 1 end\n"
				       "local s = 0\n"
				       "for i = 1, 2000 do s = f(s) end\n"
				       "return s\n");
	pass_begin(&r);
	uint64_t id = mapper_ref(&r.m, MAPPER_TRACE, (uintptr_t)T, T->traceno);
	cr_assert_eq(pass_end(&r), 1);
	rig_decode(&r, &s);
	int t = find(&s, id);
	cr_assert_eq(t, s.n - 1, "the TRACE last");
	cr_assert_geq(t, 1, "after a PROTO at least");
	for (int i = 0; i < t; i++)
		cr_assert_eq(s.kind[i], FORMAT_REC_PROTO);
	rig_free(&r);
}

/* Test thread. Set snapshot i of T to resume at pc (GC64: the PC above
** the low byte, lj_jit.h, snap_pc); the value it had. */
static uint64_t set_resume_pc(GCtrace *T, SnapNo i, const BCIns *pc)
{
	SnapShot *snap = &T->snap[i];
	SnapEntry *at = &T->snapmap[snap->mapofs + snap->nent];
	uint64_t was, v;
	memcpy(&was, at, sizeof was);
	v = ((uint64_t)(uintptr_t)pc << 8) | (was & 0xff);
	memcpy(at, &v, sizeof v);
	return was;
}

/* A trace that stitches around a C or fast function has snapshots that
** resume in that function's frame, at a pseudo-instruction in LuaJIT's
** global state (lj_dispatch.c, bcff), in no prototype. The frames' search
** walked back from it for a function header and left the mapping (a
** crash under ASan in sample_stop.sh). Here the pseudo-instruction opens a
** page after an inaccessible one: the frame is left out, nothing read. */
Test(mapper, exit_resuming_in_a_fast_function_is_not_walked_back)
{
	struct rig r;
	rig_init(&r);
	GCtrace *T = run_compiled(r.L, "local function f(x) return x + 1 end\n"
				       "local s = 0\n"
				       "for i = 1, 2000 do s = f(s) end\n"
				       "return s\n");
	struct texit_frame fr[TEXIT_MAX_FRAMES];
	int before = texit_frames(T, 0, fr, TEXIT_MAX_FRAMES);
	cr_assert_geq(before, 1, "snapshot 0 resumes in the loop's chunk");
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(m, MAP_FAILED);
	cr_assert_eq(mprotect(m, pg, PROT_NONE), 0);
	BCIns *ff = (BCIns *)(void *)(m + pg);
	ff[0] = BCINS_AD(BC__MAX + 1, 0, 0); /* a fast function's, as bcff */
	uint64_t was = set_resume_pc(T, 0, ff);
	int n = texit_frames(T, 0, fr, TEXIT_MAX_FRAMES);
	memcpy(&T->snapmap[T->snap[0].mapofs + T->snap[0].nent], &was,
	       sizeof was); /* as it was, for the VM's own exits */
	cr_assert_eq(n, before - 1, "the C frame left out, the rest kept");
	for (int k = 0; k < n; k++)
		cr_assert_not_null(fr[k].pt);
	munmap(m, 2 * pg);
	rig_free(&r);
}

/* Test thread. Whether a snapshot of T has its innermost frame on line
** fline (in function firstline ffirst) and its code allocating on line
** aline, of that frame (up 0) or of its caller (up 1); 0 when none.
** Every snapshot's allocation line is also checked against never (unless
** 0), a line where nothing allocates. */
static int has_alloc_line(GCtrace *T, uint32_t ffirst, uint32_t fline,
			  uint32_t aline, int up, uint32_t never)
{
	int found = 0;
	for (SnapNo k = 0; k < T->nsnap; k++) {
		struct texit_frame fr[TEXIT_MAX_FRAMES];
		int n = texit_frames(T, k, fr, TEXIT_MAX_FRAMES);
		uint32_t als[TEXIT_CLASSES];
		int u = texit_alloc_lines(T, k, als);
		uint32_t al = als[TEXIT_ANY];
		cr_assert(!never || al != never,
			  "snapshot %u: line %u allocates nothing", k, never);
		if (n > 0 && fr[n - 1].pt->firstline == ffirst &&
		    fr[n - 1].line == fline && al == aline && u == up)
			found = 1;
	}
	return found;
}

/* LuaJIT snapshots after a store, not per line: the code of the trace's
** first snapshot (line 4) makes line 5's table. Its frame's line (the
** allocation line before version 19) named line 4, where nothing is
** allocated. */
Test(mapper, allocation_in_a_trace_is_on_its_line_not_the_snapshots)
{
	struct rig r;
	rig_init(&r);
	GCtrace *T = run_compiled(r.L, "local keep = {}\n"
				       "local n = 0\n"
				       "for i = 1, 2000 do\n"
				       "  local x = i * 3\n"
				       "  local s = {x, x}\n"
				       "  n = n + #s\n"
				       "  keep[i % 8 + 1] = s\n"
				       "end\n"
				       "return n\n");
	cr_assert(has_alloc_line(T, 0, 4, 5, 0, 4),
		  "a snapshot on line 4 whose code allocates on line 5");
	rig_free(&r);
}

/* With a check where the function changes (mode f, as with sample),
** LuaJIT puts a return's snapshot at the return and none after it in the
** caller: the table the caller makes next (line 6) was charged to the
** returning function's line 2. */
Test(mapper, allocation_after_a_return_is_the_callers)
{
	struct rig r;
	rig_init(&r);
	L2J(r.L)->prof_mode = 'f';
	GCtrace *T = run_compiled(r.L, "local keep = {}\n"
				       "local function get(t) return t.v end\n"
				       "local n = 0\n"
				       "for i = 1, 2000 do\n"
				       "  local v = get(keep)\n"
				       "  keep[i % 8 + 1] = {v}\n"
				       "  n = n + i\n"
				       "end\n"
				       "return n\n");
	L2J(r.L)->prof_mode = 0;
	cr_assert(has_alloc_line(T, 2, 2, 6, 1, 0),
		  "get's return (line 2), its caller allocating on line 6");
	rig_free(&r);
}

/* A table constructor and a store of a new key into it share a snapshot
** (LuaJIT takes one after the store, not per line): its code allocates on
** two lines. What the code called tells them apart: the constructor's
** line for LuaJIT's table constructors, the store's for its key
** insertion, neither for anything else. */
Test(mapper, a_constructor_and_a_store_have_their_own_lines)
{
	struct rig r;
	rig_init(&r);
	GCtrace *T = run_compiled(r.L, "local keep = {}\n"
				       "for i = 1, 2000 do\n"
				       "  local t = {}\n"
				       "  t.line = i\n"
				       "  keep[i % 8 + 1] = t\n"
				       "end\n"
				       "return #keep\n");
	int found = 0;
	for (SnapNo k = 0; k < T->nsnap; k++) {
		uint32_t al[TEXIT_CLASSES];
		int up = texit_alloc_lines(T, k, al);
		cr_assert_eq(up, 0);
		if (al[TEXIT_TABLE] == 3 && al[TEXIT_NEWKEY] == 4 &&
		    al[TEXIT_ANY] == 0)
			found = 1;
		cr_assert(al[TEXIT_TABLE] == 0 || al[TEXIT_TABLE] == 3,
			  "snapshot %u: tables on line %u", k, al[TEXIT_TABLE]);
	}
	cr_assert(found, "a snapshot whose code makes the table (line 3) and "
			 "stores its first key (line 4)");
	rig_free(&r);
}
