/*
** Unit tests: the names (src/maps/names.c): package.loaded's scan, the
** names of fast and C functions, and the MAPPING records that carry them,
** read back field by field by the real decoder. (Names from bytecode:
** test_protoname.c.)
*/
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "lualib.h"
#include "maps/names.h"
#include "reallog.h"

#define VM_ID  1
#define MAXOBJ 16

/* The decoder's objects, kept: each test decodes one log. */
static struct decode *dec;

/* Test thread. A MAPPING block of VM_ID around the records put, into log;
** then decode it (into dec). */
static void decode_records(struct wbuf *recs)
{
	struct lblog log;
	struct wbuf b = {0};
	char err[512];
	size_t off = writer_block_begin(&b);
	uint8_t *p = wbuf_room(&b, BLOCKS_ULEB_MAX + recs->len);
	p = blocks_uleb_put(p, VM_ID);
	memcpy(p, recs->p, recs->len);
	b.len = (size_t)(p - b.p) + recs->len;
	writer_block_end(&b, off, FORMAT_KIND_MAPPING);
	rl_start(&log, VM_ID);
	rl_add(&log, &b, 0);
	struct decode_sink sink = {0};
	int rc = rl_decode(&log, &sink, &dec, err, sizeof err);
	cr_assert_eq(rc, 0, "decode: %s", err);
	lblog_free(&log);
	wbuf_free(&b);
}

/* Test thread. The object the log defined as id, of kind. */
static struct decode_obj *obj(uint64_t id, unsigned kind)
{
	struct decode_obj *o = decode_lookup(dec, id);
	cr_assert_not_null(o, "ID %llu", (unsigned long long)id);
	cr_assert_eq(o->kind, kind, "ID %llu", (unsigned long long)id);
	return o;
}

/* Test thread. Free dec. */
static void fini(void)
{
	decode_free(dec);
	dec = NULL;
}

TestSuite(names, .fini = fini);

/* Test thread. A C function no table names, with no dynamic symbol. */
static int hidden_cfn(lua_State *L)
{
	(void)L;
	return 0;
}

/* Test thread. The ffid of the library function at global path a.b. */
static unsigned ffid_of(lua_State *L, const char *lib, const char *fn)
{
	lua_getglobal(L, lib);
	lua_getfield(L, -1, fn);
	GCfunc *f = (GCfunc *)(uintptr_t)lua_topointer(L, -1);
	lua_pop(L, 2);
	cr_assert_gt(f->c.ffid, FF_C, "%s.%s is a fast function", lib, fn);
	return f->c.ffid;
}

/* Every record the names write reads back as written, field by field:
** the writer's and the reader's layouts are one (doc/format.txt). */
Test(names, every_record_decodes_field_by_field)
{
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	const char *code = "\n\nreturn 1\n";
	cr_assert_eq(luaL_loadbuffer(L, code, strlen(code), "@rec.lua"), 0);
	GCproto *pt = funcproto((GCfunc *)(uintptr_t)lua_topointer(L, -1));
	struct names n = {0};
	names_scan(&n, L);
	unsigned abs = ffid_of(L, "math", "abs");
	struct wbuf b = {0};
	uint32_t mcofs[1] = {12}, lines[1] = {3}, alines[3] = {2 * 4, 5, 0};
	uint8_t nfr[1] = {1};
	uint64_t ids[1] = {10};
	struct names_exits sn = {1, mcofs, nfr, ids, lines, alines};
	cr_assert_eq(names_put_proto(&b, 10, pt, "main"), 0);
	cr_assert_eq(names_put_cfunc(&b, 11, &n, (uintptr_t)hidden_cfn), 0);
	cr_assert_eq(names_put_ffunc(&b, 12, &n, abs, 0), 0);
	cr_assert_eq(names_put_coroutine(&b, 13, FORMAT_CO_MAIN), 0);
	cr_assert_eq(names_put_trace(&b, 14, 5, 10, 2, 0, &sn), 0);
	cr_assert_eq(names_put_hostsym(&b, 15, 0x4000, "f", "/lib/x.so", 0), 0);
	cr_assert_eq(names_put_name(&b, 10, "renamed"), 0);
	decode_records(&b);

	struct decode_obj *o = obj(10, FORMAT_REC_PROTO);
	cr_assert_str_eq(o->u.proto.chunk.s, "@rec.lua");
	cr_assert_eq(o->u.proto.firstline, 0, "a main chunk starts at 0");
	cr_assert_eq(o->u.proto.numline, pt->numline);
	cr_assert_str_eq(o->u.proto.name.s, "renamed", "the NAME record's");
	o = obj(11, FORMAT_REC_CFUNC);
	cr_assert_eq(o->u.cfunc.address, (uintptr_t)hidden_cfn);
	o = obj(12, FORMAT_REC_FFUNC);
	cr_assert_eq(o->u.ffunc.ffid, abs);
	cr_assert_str_eq(o->u.ffunc.name.s, "math.abs");
	cr_assert_eq(o->u.ffunc.flags, 0);
	cr_assert_eq(obj(13, FORMAT_REC_COROUTINE)->u.co.flags, FORMAT_CO_MAIN);
	o = obj(14, FORMAT_REC_TRACE);
	cr_assert_eq(o->u.trace.traceno, 5);
	cr_assert_eq(o->u.trace.proto->id, 10);
	cr_assert_eq(o->u.trace.line, 2);
	cr_assert_eq(o->u.trace.nexit, 1);
	cr_assert_eq(o->u.trace.exits[0].mcofs, 12);
	cr_assert_eq(o->u.trace.exits[0].nframes, 1);
	cr_assert_eq(o->u.trace.exits[0].f[0].line, 3);
	cr_assert(o->u.trace.exits[0].has_aline);
	cr_assert_eq(o->u.trace.exits[0].aline[FORMAT_CALL_ANY], 4,
		     "its code allocates on 4");
	cr_assert_eq(o->u.trace.exits[0].aline[FORMAT_CALL_TABLE], 5,
		     "its tables on 5");
	cr_assert_eq(o->u.trace.exits[0].aline[FORMAT_CALL_NEWKEY], 0,
		     "its new keys on no line known");
	cr_assert_eq(o->u.trace.exits[0].afr, 1, "in its own frame");
	o = obj(15, FORMAT_REC_HOSTSYM);
	cr_assert_eq(o->u.host.address, 0x4000);
	cr_assert_str_eq(o->u.host.name.s, "f");
	cr_assert_str_eq(o->u.host.object.s, "/lib/x.so");
	wbuf_free(&b);
	names_free(&n);
	lua_close(L);
}

/* 8930385: a C function with no symbol (a stripped executable's, or a
** static one) was named by a bare address. It reads "object+0xOFFSET",
** and names_put_cfunc says no table named it. */
Test(names, c_function_without_symbol_is_named_by_object_and_offset)
{
	struct names n = {0};
	struct wbuf b = {0};
	cr_assert_eq(names_put_cfunc(&b, 20, &n, (uintptr_t)hidden_cfn), 0);
	decode_records(&b);
	struct decode_obj *o = obj(20, FORMAT_REC_CFUNC);
	const char *obj = o->u.cfunc.object.s, *base = strrchr(obj, '/');
	char want[512];
	cr_assert_neq(obj[0], '\0', "the object is known");
	snprintf(want, sizeof want, "%s+0x", base ? base + 1 : obj);
	cr_assert_eq(strncmp(o->u.cfunc.name.s, want, strlen(want)), 0,
		     "%s in %s", o->u.cfunc.name.s, obj);
	wbuf_free(&b);
}

/* A module's C function found in package.loaded is named after its
** module and key, and the record says a table named it; `require` is
** noted (a rescan follows it). */
Test(names, scan_names_module_functions_and_notes_require)
{
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "loaded");
	lua_newtable(L);
	lua_pushcfunction(L, hidden_cfn);
	lua_setfield(L, -2, "go");
	lua_setfield(L, -2, "mymod");
	lua_pop(L, 2);
	struct names n = {0};
	names_scan(&n, L);
	cr_assert_not_null(n.require_f);
	unsigned rep = ffid_of(L, "string", "rep");
	cr_assert_str_eq(n.ff[rep], "string.rep", "a module before _G");
	struct wbuf b = {0};
	cr_assert_eq(names_put_cfunc(&b, 30, &n, (uintptr_t)hidden_cfn), 1);
	decode_records(&b);
	cr_assert_str_eq(obj(30, FORMAT_REC_CFUNC)->u.cfunc.name.s, "mymod.go");
	wbuf_free(&b);
	names_free(&n);
	lua_close(L);
}

/* 6055ed8: a fast function run without an EXIT (an assembler one) that
** calls Lua back in its own frame (pcall, coroutine.resume) must say so
** (CALLBACK), else the reader closes its frame before its callees run;
** one that calls nothing back (math.abs) must not. */
Test(names, fast_functions_that_call_lua_get_the_callback_flag)
{
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	struct names n = {0};
	names_scan(&n, L);
	lua_getglobal(L, "pcall");
	unsigned pcall = ((GCfunc *)(uintptr_t)lua_topointer(L, -1))->c.ffid;
	lua_pop(L, 1);
	unsigned resume = ffid_of(L, "coroutine", "resume");
	unsigned abs = ffid_of(L, "math", "abs");
	struct wbuf b = {0};
	names_put_ffunc(&b, 40, &n, pcall, FORMAT_FF_NOEXIT);
	names_put_ffunc(&b, 41, &n, resume, FORMAT_FF_NOEXIT);
	names_put_ffunc(&b, 42, &n, abs, FORMAT_FF_NOEXIT);
	names_put_ffunc(&b, 43, &n, pcall, 0);
	decode_records(&b);
	const uint64_t both = FORMAT_FF_NOEXIT | FORMAT_FF_CALLBACK;
	cr_assert_eq(obj(40, FORMAT_REC_FFUNC)->u.ffunc.flags, both);
	cr_assert_eq(obj(41, FORMAT_REC_FFUNC)->u.ffunc.flags, both);
	cr_assert_eq(obj(42, FORMAT_REC_FFUNC)->u.ffunc.flags,
		     FORMAT_FF_NOEXIT);
	cr_assert_eq(obj(43, FORMAT_REC_FFUNC)->u.ffunc.flags, 0,
		     "with an EXIT the frame ends by itself");
	wbuf_free(&b);
	names_free(&n);
	lua_close(L);
}

/* 23a80c6: fast functions read as a Lua programmer writes them, not as
** LuaJIT's build names them; one nothing names is "builtin #N". */
Test(names, fast_function_names_read_as_lua_code_says_them)
{
	static const char *const pairs[][2] = {
	    {"ipairs_aux", "ipairs (iterator)"},
	    {"io.method.read", "file:read"},
	    {"coroutine.wrap_aux", "coroutine.wrap (function)"},
	    {"math.abs", "math.abs"},
	};
	char buf[64];
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		int ffid = names_ffid(pairs[i][0]);
		cr_assert_gt(ffid, 0, "%s in LuaJIT's list", pairs[i][0]);
		cr_assert_str_eq(
		    names_ffname(NULL, (unsigned)ffid, buf, sizeof buf),
		    pairs[i][1]);
	}
	cr_assert_eq(names_ffid("no.such.function"), -1);
	cr_assert_str_eq(names_ffname(NULL, 255, buf, sizeof buf),
			 "builtin #255");
}

/* The first name of a C function wins (a scan's alias or an FFI
** declaration later never renames it); a rescan's names merge in without
** renaming either. */
Test(names, first_c_name_wins_and_merge_adds_only_new_ones)
{
	struct names a = {0}, fresh = {0};
	struct wbuf b = {0};
	names_add_c(&a, hidden_cfn, "first.name");
	names_add_c(&a, hidden_cfn, "second.name");
	names_add_c(&fresh, hidden_cfn, "fresh.name");
	names_add_c(&fresh, (lua_CFunction)(uintptr_t)fini, "fresh.fini");
	names_merge(&a, &fresh);
	names_free(&fresh);
	cr_assert_eq(names_put_cfunc(&b, 50, &a, (uintptr_t)hidden_cfn), 1);
	cr_assert_eq(names_put_cfunc(&b, 51, &a, (uintptr_t)fini), 1);
	decode_records(&b);
	cr_assert_str_eq(obj(50, FORMAT_REC_CFUNC)->u.cfunc.name.s,
			 "first.name");
	cr_assert_str_eq(obj(51, FORMAT_REC_CFUNC)->u.cfunc.name.s,
			 "fresh.fini");
	wbuf_free(&b);
	names_free(&a);
}
