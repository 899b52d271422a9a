/*
** Unit tests: the heap snapshot walk (src/heap/snap.c) of a real VM holding
** objects the test made, its HEAP blocks read back by the real decoder:
** the objects, their references and the summary's counts against what the
** test built.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/snap.h"
#include "lj_str.h"
#include "lualib.h"
#include "reallog.h"

#define VM_ID 1

/* One reference, copied out of the decoder. */
struct ref {
	unsigned kind;
	char name[32];
	uint64_t target;
};

/* One object, copied. */
struct obj {
	uint64_t snapshot, id, size;
	unsigned type; /* FORMAT_HTYPE_*, without the unreachable bit */
	int unreachable;
	char text[64];
	struct ref *refs;
	uint32_t nref;
};

/* What the decoder saw of the snapshots. */
struct seen {
	struct obj *o;
	size_t n, cap;
	int roots, main_root, registry_root;
	struct decode_hsummary sum[2];
	int nsum;
};

/* Test thread. Copy a heap object and its references. */
static int on_obj(void *ud, const struct decode_hobj *h)
{
	struct seen *s = ud;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->o = realloc(s->o, s->cap * sizeof *s->o);
		cr_assert_not_null(s->o);
	}
	struct obj *o = &s->o[s->n++];
	memset(o, 0, sizeof *o);
	o->snapshot = h->snapshot;
	o->id = h->id;
	o->size = h->size;
	o->type = h->type & ~FORMAT_HTYPE_UNREACHABLE;
	o->unreachable = (h->type & FORMAT_HTYPE_UNREACHABLE) ||
			 (h->flags & FORMAT_HOBJ_UNREACHABLE);
	snprintf(o->text, sizeof o->text, "%.*s", (int)h->textlen, h->text);
	o->nref = h->nref;
	o->refs = calloc(h->nref + 1, sizeof *o->refs);
	for (uint32_t i = 0; i < h->nref; i++) {
		const struct decode_href *r = &h->refs[i];
		o->refs[i].kind = r->kind;
		o->refs[i].target = r->target;
		snprintf(o->refs[i].name, sizeof o->refs[i].name, "%.*s",
			 (int)r->namelen, r->name ? r->name : "");
	}
	return 0;
}

/* Test thread. Count the roots. */
static int on_root(void *ud, const struct decode_hroot *r)
{
	struct seen *s = ud;
	s->roots++;
	s->main_root += r->namelen == 11 && !memcmp(r->name, "main thread", 11);
	s->registry_root += r->namelen == 8 && !memcmp(r->name, "registry", 8);
	return 0;
}

/* Test thread. Keep a summary. */
static int on_summary(void *ud, const struct decode_hsummary *h)
{
	struct seen *s = ud;
	cr_assert_lt(s->nsum, 2);
	s->sum[s->nsum++] = *h;
	return 0;
}

/* Test thread. Free what s holds. */
static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->o[i].refs);
	free(s->o);
}

/* Test thread. Take nsnap snapshots of L and decode them into s. */
static void snap_decode(lua_State *L, int nsnap, struct seen *s)
{
	struct snap_vm sv;
	struct lblog log;
	char err[512];
	memset(&sv, 0, sizeof sv);
	memset(s, 0, sizeof *s);
	rl_start(&log, VM_ID);
	for (int k = 0; k < nsnap; k++) {
		struct wbuf out = {0};
		int nb = snap_take(&sv, L, VM_ID, &out, err, sizeof err);
		cr_assert_gt(nb, 0, "snap_take: %s", err);
		rl_add(&log, &out, 0);
		wbuf_free(&out);
	}
	snap_free(&sv);
	struct decode_sink sink = {.ud = s,
				   .heap_obj = on_obj,
				   .heap_root = on_root,
				   .heap_summary = on_summary};
	int rc = rl_decode(&log, &sink, NULL, err, sizeof err);
	cr_assert_eq(rc, 0, "decode: %s", err);
	lblog_free(&log);
}

/* Test thread. The object of snapshot snap with ID id. */
static struct obj *by_id(struct seen *s, uint64_t snap, uint64_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->o[i].snapshot == snap && s->o[i].id == id)
			return &s->o[i];
	cr_assert_fail("no object %llu", (unsigned long long)id);
	return NULL;
}

/* Test thread. The object of snapshot snap of type with text, or NULL. */
static struct obj *by_text(struct seen *s, uint64_t snap, unsigned type,
			   const char *text)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->o[i].snapshot == snap && s->o[i].type == type &&
		    !strcmp(s->o[i].text, text))
			return &s->o[i];
	return NULL;
}

/* Test thread. The target of o's reference of kind named name, 0 when
** none. */
static uint64_t ref_to(const struct obj *o, unsigned kind, const char *name)
{
	for (uint32_t i = 0; i < o->nref; i++)
		if (o->refs[i].kind == kind &&
		    (!name || !strcmp(o->refs[i].name, name)))
			return o->refs[i].target;
	return 0;
}

/* Test thread. The table of snapshot snap holding field name -> a string
** with text, or NULL. */
static struct obj *holder_of(struct seen *s, uint64_t snap, const char *name,
			     const struct obj *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->o[i].snapshot == snap &&
		    s->o[i].type == FORMAT_HTYPE_TABLE &&
		    ref_to(&s->o[i], FORMAT_HREF_FIELD_STR, name) == str->id)
			return &s->o[i];
	return NULL;
}

/* The objects the program made: a global table holding a string and a
** closure over an upvalue. */
static const char prog[] = "holder = { s = 'snapshot test string',\n"
			   "  f = (function() local up = {}\n"
			   "    return function() return up end end)() }\n"
			   "collectgarbage('collect'); collectgarbage('stop')\n"
			   "do local junk = { 'garbage' } end\n";

/* Test thread. A VM that ran prog. */
static lua_State *vm_with_objects(void)
{
	lua_State *L = luaL_newstate();
	luaL_openlibs(L);
	cr_assert_eq(luaL_loadbuffer(L, prog, strlen(prog), "@snap.lua"), 0);
	cr_assert_eq(lua_pcall(L, 0, 0, 0), 0);
	return L;
}

/* The walk finds every object the program made with its references: the
** table's fields lead to the string and the closure, the closure to its
** prototype and its (closed) upvalue, the globals to the table; a table
** nothing reaches any more is there, marked unreachable; the roots the GC
** marks from are named. Guards f985003 and 9a36d8a (the write pass
** replays the targets the mark pass found: each must name the object it
** meets) and 475fcde (a table without a metatable read through a null
** reference: UBSan). */
Test(snap, objects_and_references_are_what_the_program_built)
{
	lua_State *L = vm_with_objects();
	struct seen s;
	snap_decode(L, 1, &s);
	struct obj *str =
	    by_text(&s, 1, FORMAT_HTYPE_STRING, "snapshot test string");
	cr_assert_not_null(str);
	cr_assert_eq(str->size, lj_str_size(20), "as LuaJIT frees it");
	struct obj *tab = holder_of(&s, 1, "s", str);
	cr_assert_not_null(tab, "the table holding the string");
	cr_assert_not(tab->unreachable);
	struct obj *fn = by_id(&s, 1, ref_to(tab, FORMAT_HREF_FIELD_STR, "f"));
	cr_assert_eq(fn->type, FORMAT_HTYPE_FUNCTION);
	cr_assert_str_eq(fn->text, "snap.lua:3", "the closure, not its maker");
	struct obj *pt = by_id(&s, 1, ref_to(fn, FORMAT_HREF_PROTO, NULL));
	cr_assert_eq(pt->type, FORMAT_HTYPE_PROTO);
	struct obj *uv = by_id(&s, 1, ref_to(fn, FORMAT_HREF_UPVALUE, NULL));
	cr_assert_eq(uv->type, FORMAT_HTYPE_UPVALUE);
	cr_assert_str_eq(uv->text, "closed");
	cr_assert_eq(by_id(&s, 1, ref_to(uv, FORMAT_HREF_VALUE, NULL))->type,
		     FORMAT_HTYPE_TABLE);
	/* The globals hold the table. */
	struct obj *hname = by_text(&s, 1, FORMAT_HTYPE_STRING, "holder");
	cr_assert_not_null(hname);
	int held = 0;
	for (size_t i = 0; i < s.n; i++)
		held |=
		    ref_to(&s.o[i], FORMAT_HREF_FIELD_STR, "holder") == tab->id;
	cr_assert(held, "a table holds holder");
	struct obj *junk = by_text(&s, 1, FORMAT_HTYPE_STRING, "garbage");
	cr_assert_not_null(junk);
	int tabs = 0, unreached = 0;
	for (size_t i = 0; i < s.n; i++)
		if (s.o[i].type == FORMAT_HTYPE_TABLE &&
		    ref_to(&s.o[i], FORMAT_HREF_ARRAY, NULL) == junk->id) {
			tabs++;
			unreached += s.o[i].unreachable;
		}
	cr_assert_geq(tabs, 1, "the dropped table is there");
	cr_assert_eq(unreached, tabs, "the dropped table, unreachable");
	cr_assert_eq(s.main_root, 1);
	cr_assert_eq(s.registry_root, 1);
	seen_free(&s);
	lua_close(L);
}

/* The summary counts what the OBJECT records hold: objects, their bytes,
** the unreachable ones; and the VM's own total, read without allocating
** through the VM (a snapshot runs in any GC state). */
Test(snap, summary_counts_match_the_objects_written)
{
	lua_State *L = vm_with_objects();
	uint64_t total = G(L)->gc.total;
	struct seen s;
	snap_decode(L, 1, &s);
	cr_assert_eq(s.nsum, 1);
	uint64_t bytes = 0, unreached = 0;
	for (size_t i = 0; i < s.n; i++) {
		bytes += s.o[i].size;
		unreached += s.o[i].unreachable;
	}
	cr_assert_eq(s.sum[0].objects, s.n);
	cr_assert_eq(s.sum[0].bytes, bytes);
	cr_assert_eq(s.sum[0].unreachable, unreached);
	cr_assert_geq(unreached, 1);
	cr_assert_eq(s.sum[0].gc_total, total, "the walk allocated in the VM");
	cr_assert_eq(G(L)->gc.total, total);
	cr_assert_gt(s.sum[0].nparts, 0);
	uint64_t other = 0;
	for (uint32_t k = 0; k < s.sum[0].nparts; k++)
		other += s.sum[0].part[k].bytes;
	cr_assert_eq(s.sum[0].other, other);
	seen_free(&s);
	lua_close(L);
}

/* Two snapshots compare object by object: an object keeps its heap ID
** from one snapshot to the next while its address is not freed. */
Test(snap, objects_keep_their_ids_across_snapshots)
{
	lua_State *L = vm_with_objects();
	struct seen s;
	snap_decode(L, 2, &s);
	cr_assert_eq(s.nsum, 2);
	cr_assert_eq(s.sum[0].snapshot, 1);
	cr_assert_eq(s.sum[1].snapshot, 2);
	cr_assert_eq(s.sum[0].objects, s.sum[1].objects);
	struct obj *a =
	    by_text(&s, 1, FORMAT_HTYPE_STRING, "snapshot test string");
	struct obj *b =
	    by_text(&s, 2, FORMAT_HTYPE_STRING, "snapshot test string");
	cr_assert(a && b);
	cr_assert_eq(a->id, b->id);
	struct obj *ta = holder_of(&s, 1, "s", a),
		   *tb = holder_of(&s, 2, "s", b);
	cr_assert(ta && tb);
	cr_assert_eq(ta->id, tb->id);
	seen_free(&s);
	lua_close(L);
}
