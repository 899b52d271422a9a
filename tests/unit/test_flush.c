/*
** Unit tests: the real flush encoder (src/logger/flush.c) with a real mapper
** on a real LuaJIT VM, read back by the real decoder (reader/decode*.c).
** Raw buffer words (logger/buf.h) go in; every record kind comes out as
** the decoder sees it, field by field, against the words written.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blocks/writer.h"
#include "decode/decode.h"
#include "lualib.h"
#include "logbuild.h"
#include "logger/buf.h"
#include "logger/flush.h"
#include "maps/mapper.h"
#include "maps/texit.h"
#include "stat/clock.h"

#define MAXEV 640

/* What the sink saw (objects copied: the decoder owns the originals). */
struct seen {
	struct decode_event ev[MAXEV];
	unsigned kind[MAXEV];  /* kind of ev[i].obj, 0 for none */
	char chunk[MAXEV][64]; /* PROTO chunk of ev[i].obj */
	uint64_t firstline[MAXEV];
	char msg[MAXEV][FORMAT_STRING_MAX + 1];
	int nev;
	uint32_t inl[MAXEV];	 /* frames of ev[i].texit (trace sites) */
	uint64_t traceno[MAXEV]; /* traceno of ev[i].trace */
	int ntrace;		 /* TRACE records */
	uint32_t trace_snaps;	 /* snapshots of the last TRACE record */
	uint32_t trace_frames;	 /* frames in them, all told */
};

/* Test thread. Copy an event. */
static int on_event(void *ud, const struct decode_event *ev)
{
	struct seen *s = ud;
	if (s->nev == MAXEV)
		return 0;
	int i = s->nev++;
	s->ev[i] = *ev;
	s->ev[i].obj = NULL;
	s->kind[i] = ev->obj ? ev->obj->kind : 0;
	s->ev[i].trace = NULL;
	s->ev[i].texit = NULL;
	s->inl[i] = ev->texit ? ev->texit->nframes : 0;
	s->traceno[i] = ev->trace ? ev->trace->u.trace.traceno : 0;
	if (ev->obj && ev->obj->kind == FORMAT_REC_PROTO) {
		snprintf(s->chunk[i], sizeof s->chunk[i], "%s",
			 ev->obj->u.proto.chunk.s);
		s->firstline[i] = ev->obj->u.proto.firstline;
	}
	if (ev->msg.s)
		snprintf(s->msg[i], sizeof s->msg[i], "%.*s", (int)ev->msg.len,
			 ev->msg.s);
	if (ev->obj && ev->obj->kind == FORMAT_REC_STRING)
		snprintf(s->msg[i], sizeof s->msg[i], "%.*s",
			 (int)ev->obj->u.str.text.len, ev->obj->u.str.text.s);
	return 0;
}

/* Test thread. Count TRACE records and their snapshots. */
static int on_record(void *ud, struct decode_obj *o)
{
	struct seen *s = ud;
	if (o->kind == FORMAT_REC_TRACE) {
		s->ntrace++;
		s->trace_snaps = o->u.trace.nexit;
		s->trace_frames = 0;
		for (uint32_t k = 0; k < o->u.trace.nexit; k++) {
			const struct decode_texit *sn = &o->u.trace.exits[k];
			s->trace_frames += sn->nframes;
			for (uint32_t j = 0; j < sn->nframes; j++)
				cr_assert_eq(sn->f[j].func->kind,
					     FORMAT_REC_PROTO);
		}
	}
	return 0;
}

/* A VM under test and its encoder state. */
struct rig {
	lua_State *L;
	struct mapper m;
	struct flush_enc fe;
	struct lblog log;
	uint64_t w[4096];
	size_t n;
	uint64_t t;
	uint64_t step; /* counter ticks from one record to the next */
};

/* Test thread. A fresh VM, a mapper for it and a log with INTRO. */
static void rig_init(struct rig *r)
{
	memset(r, 0, sizeof *r);
	r->L = luaL_newstate();
	cr_assert_not_null(r->L);
	luaL_openlibs(r->L);
	cr_assert_eq(mapper_init(&r->m, G(r->L), mapper_new_id()), 0);
	lblog_init(&r->log);
	lblog_intro(&r->log, 42);
	struct lbmap vm;
	map_begin(&vm, r->m.vm_id);
	map_vm(&vm, r->m.vm_id, 1, 0, 0);
	lblog_mapping(&r->log, &vm);
	r->t = 1000;
	r->step = 16;
}

/* Test thread. Append a raw record: kind, x, then the payload words; each
** record r->step counter ticks after the one before. */
static void rec(struct rig *r, unsigned kind, uint64_t x, uint64_t a,
		uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	uint64_t words[] = {
	    BUF_W0(kind, x), r->t << CLOCK_TS_SHIFT, a, b, c, d, e};
	unsigned n = buf_rec_words(words);
	cr_assert_leq(r->n + n, sizeof r->w / sizeof r->w[0]);
	memcpy(r->w + r->n, words, n * sizeof(uint64_t));
	r->n += n;
	r->t += r->step;
}

/* Test thread. Map the records so far (the mapper's lock held, as flush
** does), then encode them with the real encoder into the log; clear them. */
static void rig_flush(struct rig *r)
{
	struct wbuf out = {0};
	struct writer_clock c = {r->t << CLOCK_TS_SHIFT, 5000, 6000};
	uint64_t nev = 0;
	mapper_lock(&r->m);
	int nb = flush_map(&r->m, r->w, r->w + r->n, &out);
	mapper_unlock(&r->m);
	cr_assert_geq(nb, 0, "flush_map: %d", nb);
	int re = flush_encode(&r->fe, &r->m, r->w, r->w + r->n, &c, &nev);
	cr_assert_eq(re, 0, "flush_encode: %d", re);
	cr_assert_not_null(r->fe.block);
	lb_bytes(&r->log.file, out.p, out.len);
	lb_bytes(&r->log.file, r->fe.block, r->fe.block_len);
	r->log.blocks += (uint64_t)nb + 1;
	r->log.events += nev;
	r->n = 0;
	free(out.p);
}

/* Test thread. END, then decode the whole log into s. */
static void rig_decode(struct rig *r, struct seen *s)
{
	struct decode_sink sink = {
	    .ud = s, .event = on_event, .record = on_record};
	struct reader *rd;
	struct decode *d;
	char err[512];
	memset(s, 0, sizeof *s);
	lblog_end(&r->log);
	const char *path = lblog_write(&r->log);
	cr_assert_eq(reader_open(&rd, path, 0, err, sizeof err), 0, "%s", err);
	cr_assert_eq(decode_new(&d, &sink), 0);
	int rc = decode_run(rd, d, err, sizeof err);
	cr_assert_eq(rc, 0, "decode: %s", err);
	decode_free(d);
	reader_close(rd);
	unlink(path);
}

/* Test thread. Free the rig. */
static void rig_free(struct rig *r)
{
	flush_enc_free(&r->fe);
	mapper_free(&r->m);
	lblog_free(&r->log);
	lua_close(r->L);
}

/* Test thread. The GCproto of the Lua function a chunk returns (kept
** alive in the registry). */
static GCproto *proto_of(lua_State *L, const char *code, const char *name)
{
	cr_assert_eq(luaL_loadbuffer(L, code, strlen(code), name), 0);
	cr_assert_eq(lua_pcall(L, 0, 1, 0), 0);
	GCfunc *fn = (GCfunc *)(uintptr_t)lua_topointer(L, -1);
	cr_assert(isluafunc(fn));
	luaL_ref(L, LUA_REGISTRYINDEX);
	return funcproto(fn);
}

/* Test thread. A C function to name. */
static int cfn(lua_State *L)
{
	(void)L;
	return 0;
}

Test(flush, every_event_kind_field_by_field)
{
	struct rig r;
	struct seen s;
	rig_init(&r);
	lua_State *L = r.L;
	GCproto *pt = proto_of(L, "\n\nreturn function() end", "@app.lua");
	lua_State *co = lua_newthread(L);
	luaL_ref(L, LUA_REGISTRYINDEX);
	lua_getglobal(L, "math");
	lua_getfield(L, -1, "abs");
	GCfunc *abs = (GCfunc *)(uintptr_t)lua_topointer(L, -1);
	lua_pop(L, 2);
	unsigned ffid = abs->c.ffid;
	mapper_lock(&r.m);
	names_scan(&r.m.names, L);
	mapper_unlock(&r.m);

	uint64_t site = FORMAT_SITE_LUA | MAPPER_PROTO << 4 | 7u << 8;
	rec(&r, BUF_ATTACH, 0, 4096, 0, 0, 0, 0);
	rec(&r, BUF_ENTER_LUA, 3, (uintptr_t)pt, 0, 0, 0, 0);
	rec(&r, BUF_ENTER_C, 5, (uintptr_t)cfn, 0, 0, 0, 0);
	rec(&r, BUF_EXIT, 5, 0, 0, 0, 0, 0);
	rec(&r, BUF_ENTER_FF, 4, ffid | MAPPER_FF_ASM, 0, 0, 0, 0);
	rec(&r, BUF_ALLOC, site, (uintptr_t)pt, 0x10000, 48, 0, 0);
	rec(&r, BUF_REALLOC, site, (uintptr_t)pt, 0x10000, 48, 0x20000, 96);
	rec(&r, BUF_FREE, 96, 0x20000, 0, 0, 0, 0);
	rec(&r, BUF_GC, FORMAT_GC_ATOMIC, 8192, 0, 0, 0, 0);
	rec(&r, BUF_SWITCH, 0, (uintptr_t)co, 0, 0, 0, 0);
	rec(&r, BUF_TRACE_START, 9, (uintptr_t)pt, 3, 0, 0, 0);
	rec(&r, BUF_TRACE_ABORT, 9, (uintptr_t)pt, 3 | (uint64_t)7 << 32, 0, 0,
	    0);
	rec(&r, BUF_TRACE_FLUSH, 0, 0, 0, 0, 0, 0);
	rec(&r, BUF_EXIT, 3, 0, 0, 0, 0, 0);
	rec(&r, BUF_DETACH, 0, 2048, 0, 0, 0, 0);
	rig_flush(&r);
	rig_decode(&r, &s);

	cr_assert_eq(s.nev, 15);
	for (int i = 0; i < s.nev; i++)
		cr_assert_eq(s.ev[i].ts, 1000 + 16u * (unsigned)i, "event %d",
			     i);
	cr_assert_eq(s.ev[0].op, FORMAT_OP_VM);
	cr_assert_eq(s.ev[0].lo, FORMAT_VM_ATTACH);
	cr_assert_eq(s.ev[0].heap, 4096);
	cr_assert_eq(s.ev[1].op, FORMAT_OP_ENTER);
	cr_assert_eq(s.ev[1].slot, 3);
	cr_assert_eq(s.kind[1], FORMAT_REC_PROTO);
	cr_assert_str_eq(s.chunk[1], "@app.lua");
	cr_assert_eq(s.firstline[1], 3);
	cr_assert_eq(s.ev[2].op, FORMAT_OP_ENTER);
	cr_assert_eq(s.ev[2].slot, 5);
	cr_assert_eq(s.kind[2], FORMAT_REC_CFUNC);
	cr_assert_eq(s.ev[3].op, FORMAT_OP_EXIT);
	cr_assert_eq(s.ev[3].slot, 5);
	cr_assert_eq(s.ev[4].op, FORMAT_OP_ENTER);
	cr_assert_eq(s.ev[4].slot, 4);
	cr_assert_eq(s.kind[4], FORMAT_REC_FFUNC);
	cr_assert_eq(s.ev[5].op, FORMAT_OP_ALLOC);
	cr_assert_eq(s.ev[5].lo, FORMAT_SITE_LUA);
	cr_assert_eq(s.ev[5].id, s.ev[1].id, "the site is the PROTO");
	cr_assert_eq(s.ev[5].line, 7);
	cr_assert_eq(s.ev[5].addr, 0x10000);
	cr_assert_eq(s.ev[5].size, 48);
	cr_assert_eq(s.ev[6].op, FORMAT_OP_REALLOC);
	cr_assert_eq(s.ev[6].old_addr, 0x10000);
	cr_assert_eq(s.ev[6].old_size, 48);
	cr_assert_eq(s.ev[6].addr, 0x20000);
	cr_assert_eq(s.ev[6].size, 96);
	cr_assert_eq(s.ev[7].op, FORMAT_OP_FREE);
	cr_assert_eq(s.ev[7].addr, 0x20000);
	cr_assert_eq(s.ev[7].size, 96);
	cr_assert_eq(s.ev[8].op, FORMAT_OP_GC);
	cr_assert_eq(s.ev[8].lo, FORMAT_GC_ATOMIC);
	cr_assert_eq(s.ev[8].heap, 8192);
	cr_assert_eq(s.ev[9].op, FORMAT_OP_SWITCH);
	cr_assert_eq(s.kind[9], FORMAT_REC_COROUTINE);
	cr_assert_eq(s.ev[9].co, s.ev[9].id);
	cr_assert_eq(s.ev[10].lo, FORMAT_VM_TRACE_START);
	cr_assert_eq(s.ev[10].traceno, 9);
	cr_assert_eq(s.ev[10].id, s.ev[1].id);
	cr_assert_eq(s.ev[10].line, 3);
	cr_assert_eq(s.ev[11].lo, FORMAT_VM_TRACE_ABORT);
	cr_assert_eq(s.ev[11].traceno, 9);
	cr_assert_eq(s.ev[11].reason, 7);
	cr_assert_neq(s.msg[11][0], '\0', "an abort carries its message");
	cr_assert_eq(s.ev[12].lo, FORMAT_VM_TRACE_FLUSH);
	cr_assert_eq(s.ev[13].op, FORMAT_OP_EXIT);
	cr_assert_eq(s.ev[13].slot, 3);
	cr_assert_eq(s.ev[14].lo, FORMAT_VM_DETACH);
	cr_assert_eq(s.ev[14].heap, 2048);
	rig_free(&r);
}

/* Test thread. Append a ZONE_PUSH or MARK record with its text, as
** zones.c lays it out. */
static void rec_text(struct rig *r, unsigned kind, const char *text)
{
	size_t len = strlen(text), tw = BUF_TEXT_WORDS(len);
	cr_assert_leq(r->n + 2 + tw, sizeof r->w / sizeof r->w[0]);
	r->w[r->n] = BUF_W0(kind, len);
	r->w[r->n + 1] = r->t << CLOCK_TS_SHIFT;
	if (tw)
		r->w[r->n + 1 + tw] = 0;
	memcpy(r->w + r->n + 2, text, len);
	r->n += 2 + tw;
	r->t += r->step;
}

Test(flush, zone_and_mark_texts_keep_their_ids_after_the_map_pass)
{
	/* The map pass puts a text's STRING ID in its record's x, above the
	** length: the encode pass must still step over the text (0 to 255
	** bytes, 0 to 32 words) and write the ID, the same text twice one
	** ID. */
	struct rig r;
	static struct seen s;
	static const char *texts[] = {"", "a", "eight ch", "nine char",
				      "the longest"};
	char longest[FORMAT_STRING_MAX + 1];
	memset(longest, 'z', FORMAT_STRING_MAX);
	longest[FORMAT_STRING_MAX] = '\0';
	rig_init(&r);
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 5; i++)
			rec_text(&r, i & 1 ? BUF_MARK : BUF_ZONE_PUSH,
				 i == 4 ? longest : texts[i]);
		rec(&r, BUF_ZONE_POP, 0, 0, 0, 0, 0, 0);
	}
	rig_flush(&r);
	rig_decode(&r, &s);
	cr_assert_eq(s.nev, 12);
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 5; i++) {
			const struct decode_event *e = &s.ev[k * 6 + i];
			cr_assert_eq(e->op, FORMAT_OP_VM);
			cr_assert_eq(e->lo, i & 1 ? FORMAT_VM_MARK
						  : FORMAT_VM_ZONE_PUSH);
			cr_assert_str_eq(s.msg[k * 6 + i],
					 i == 4 ? longest : texts[i]);
			cr_assert_eq(e->id, s.ev[i].id, "one text, one ID");
		}
		cr_assert_eq(s.ev[k * 6 + 5].lo, FORMAT_VM_ZONE_POP);
	}
	rig_free(&r);
}

Test(flush, ids_are_defined_once_across_flushes)
{
	struct rig r;
	struct seen s;
	rig_init(&r);
	GCproto *pt = proto_of(r.L, "return function() end", "@a.lua");
	rec(&r, BUF_ENTER_LUA, 2, (uintptr_t)pt, 0, 0, 0, 0);
	rig_flush(&r);
	rec(&r, BUF_EXIT, 2, 0, 0, 0, 0, 0);
	rec(&r, BUF_ENTER_LUA, 2, (uintptr_t)pt, 0, 0, 0, 0);
	rig_flush(&r);
	/* A redefined ID would make the decoder fail: it must not. */
	rig_decode(&r, &s);
	cr_assert_eq(s.nev, 3);
	cr_assert_eq(s.ev[0].id, s.ev[2].id);
	cr_assert(s.ev[1].ts > s.ev[0].ts, "time goes on across flushes");
	rig_free(&r);
}

Test(flush, many_sites_in_one_pass_keep_their_ids)
{
	/* More sites than the encoder's memo has entries, in turn, twice:
	** entries collide and are replaced, and every ALLOC must still name
	** its own PROTO and line. */
	enum { NSITE = 300 };
	static GCproto *pt[NSITE];
	struct rig r;
	static struct seen s;
	char code[64], name[32];
	rig_init(&r);
	for (int i = 0; i < NSITE; i++) {
		snprintf(name, sizeof name, "@s%d.lua", i);
		snprintf(code, sizeof code, "return function() end");
		pt[i] = proto_of(r.L, code, name);
	}
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < NSITE; i++)
			rec(&r, BUF_ALLOC,
			    FORMAT_SITE_LUA | MAPPER_PROTO << 4 |
				(uint64_t)(i + 1) << 8,
			    (uintptr_t)pt[i], 0x10000 + 64u * (unsigned)i, 32,
			    0, 0);
	rig_flush(&r);
	rig_decode(&r, &s);
	cr_assert_eq(s.nev, 2 * NSITE);
	for (int j = 0; j < s.nev; j++) {
		int i = j % NSITE;
		snprintf(name, sizeof name, "@s%d.lua", i);
		cr_assert_eq(s.ev[j].op, FORMAT_OP_ALLOC);
		cr_assert_eq(s.kind[j], FORMAT_REC_PROTO, "event %d", j);
		cr_assert_str_eq(s.chunk[j], name, "event %d", j);
		cr_assert_eq(s.ev[j].line, (uint64_t)i + 1, "event %d", j);
		cr_assert_eq(s.ev[j].id, s.ev[i].id, "event %d", j);
	}
	rig_free(&r);
}

Test(flush, allocations_where_expected_take_few_bytes)
{
	/* 50 blocks made one after another in the same clock window, freed
	** from the newest down (as LuaJIT's allocator and sweep do): version
	** 12 writes each ALLOC in 5 bytes (op, site, line, size, address on
	** its guess) and each FREE in 3, without dt (version 11: 7 and 5). */
	enum { N = 50 };
	struct rig r;
	static struct seen s;
	rig_init(&r);
	GCproto *pt = proto_of(r.L, "return function() end", "@a.lua");
	uint64_t site = FORMAT_SITE_LUA | MAPPER_PROTO << 4 | 7u << 8;
	rec(&r, BUF_ALLOC, site, (uintptr_t)pt, 0x8000, 16, 0, 0);
	rig_flush(&r); /* the PROTO's MAPPING goes out with this one */
	size_t len0 = r.log.file.len;
	r.step = 0;
	for (int i = 0; i < N; i++)
		rec(&r, BUF_ALLOC, site, (uintptr_t)pt,
		    0x10000 + 72u * (unsigned)i, 64, 0, 0);
	for (int i = N; i-- > 0;)
		rec(&r, BUF_FREE, 64, 0x10000 + 72u * (unsigned)i, 0, 0, 0, 0);
	rig_flush(&r);
	size_t len = r.log.file.len - len0;
	/* The block's own header and the payload's (VM, count, times,
	** clock) take under 64 bytes; the first ALLOC and FREE miss. As
	** written: 430 bytes; version 11 would take over 600. */
	cr_assert_leq(len, 64 + 5 * N + 3 * N + 2 * 4, "%zu bytes", len);
	rig_decode(&r, &s);
	cr_assert_eq(s.nev, 1 + 2 * N);
	for (int i = 0; i < N; i++) {
		cr_assert_eq(s.ev[1 + i].addr, 0x10000 + 72u * (unsigned)i);
		cr_assert_eq(s.ev[1 + i].size, 64);
		cr_assert_eq(s.ev[1 + N + i].op, FORMAT_OP_FREE);
		cr_assert_eq(s.ev[1 + N + i].addr,
			     0x10000 + 72u * (unsigned)(N - 1 - i));
		cr_assert_eq(s.ev[1 + N + i].ts, s.ev[1].ts);
	}
	rig_free(&r);
}

/* Test thread. Run code (a loop the JIT compiles) as chunk name; its
** first compiled trace. */
static GCtrace *run_compiled(lua_State *L, const char *code, const char *name)
{
	cr_assert_eq(luaL_loadbuffer(L, code, strlen(code), name), 0);
	cr_assert_eq(lua_pcall(L, 0, 1, 0), 0);
	jit_State *J = G2J(G(L));
	GCtrace *T = NULL;
	for (MSize i = 1; i < J->sizetrace && !T; i++)
		if (gcref(J->trace[i]))
			T = gco2trace(gcref(J->trace[i]));
	cr_assert_not_null(T, "the loop was compiled");
	return T;
}

Test(flush, trace_stop_writes_the_trace_with_its_snapshots)
{
	struct rig r;
	struct seen s;
	rig_init(&r);
	lua_State *L = r.L;
	/* A loop the JIT compiles, calling a function it inlines. */
	const char *code = "local function f(x) return x * 2 end\n"
			   "local s = 0\n"
			   "for i = 1, 2000 do s = s + f(i) end\n"
			   "return s\n";
	GCtrace *T = run_compiled(L, code, "@loop.lua");
	cr_assert_gt(T->nsnap, 0);
	rec(&r, BUF_TRACE_STOP, T->traceno, (uintptr_t)T, 0, 0, 0, 0);
	rig_flush(&r);
	rig_decode(&r, &s);
	cr_assert_eq(s.nev, 1);
	cr_assert_eq(s.ev[0].lo, FORMAT_VM_TRACE_STOP);
	cr_assert_eq(s.ntrace, 1);
	cr_assert_eq(s.trace_snaps, T->nsnap, "every snapshot written");
	cr_assert_geq(s.trace_frames, T->nsnap,
		      "a frame per snapshot at least");
	rig_free(&r);
}

/* An allocation in compiled code: the TRACE and 1 + the offset written,
** read back as the snapshot there (its innermost frame, an inlined
** function) or, without an offset, as the trace itself. */
Test(flush, alloc_in_a_trace_resolves_through_its_snapshot)
{
	struct rig r;
	struct seen s;
	rig_init(&r);
	lua_State *L = r.L;
	const char *code = "local function f(i) return { i } end\n"
			   "local t = {}\n"
			   "for i = 1, 2000 do t[i % 8 + 1] = f(i) end\n"
			   "return #t\n";
	GCtrace *T = run_compiled(L, code, "@alloc.lua");
	/* The snapshot with the most frames: f inlined into the chunk. */
	struct texit_frame fr[TEXIT_MAX_FRAMES], best[TEXIT_MAX_FRAMES];
	int nbest = 0;
	SnapNo k = 0;
	for (SnapNo i = 0; i < T->nsnap; i++) {
		int n = texit_frames(T, i, fr, TEXIT_MAX_FRAMES);
		if (n > nbest)
			nbest = n, k = i, memcpy(best, fr, sizeof fr);
	}
	cr_assert_geq(nbest, 2, "a snapshot inside f");
	uint64_t ofs = 1 + texit_ofs(T, k); /* bytes */
	/* the last snapshot starting at or before the offset */
	while (k + 1 < T->nsnap && T->snap[k + 1].mcofs == T->snap[k].mcofs)
		k++;
	nbest = texit_frames(T, k, best, TEXIT_MAX_FRAMES);
	uint32_t als[TEXIT_CLASSES];
	int up = texit_alloc_lines(T, k, als);
	uint32_t aline = als[TEXIT_ANY];
	uint64_t x = FORMAT_SITE_TRACE | MAPPER_TRACE << 4 |
		     BUF_SITE_TRACE(ofs, T->traceno);
	rec(&r, BUF_ALLOC, x, (uintptr_t)T, 0x1000, 24, 0, 0);
	rec(&r, BUF_REALLOC, x, (uintptr_t)T, 0x1000, 24, 0x2000, 48);
	x = FORMAT_SITE_TRACE | MAPPER_TRACE << 4 |
	    BUF_SITE_TRACE(0, T->traceno);
	rec(&r, BUF_ALLOC, x, (uintptr_t)T, 0x3000, 16, 0, 0);
	rec(&r, BUF_ALLOC, FORMAT_SITE_TRACE, 0, 0x4000, 8, 0, 0);
	rig_flush(&r);
	rig_decode(&r, &s);
	cr_assert_eq(s.nev, 4);
	cr_assert_eq(s.ntrace, 1, "the TRACE record, once");
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(s.ev[i].lo, FORMAT_SITE_TRACE);
		cr_assert_eq(s.ev[i].pcofs, ofs, "event %d", i);
		cr_assert_eq(s.traceno[i], T->traceno);
		cr_assert_eq(s.inl[i], (uint32_t)nbest);
		cr_assert_eq(s.kind[i], FORMAT_REC_PROTO);
		cr_assert_str_eq(s.chunk[i], "@alloc.lua");
		cr_assert_eq(
		    s.firstline[i], best[nbest - 1 - up].pt->firstline,
		    "the innermost frame's function (or its caller's)");
		cr_assert_eq(s.ev[i].line, aline, "the snapshot's aline");
	}
	if (up)
		cr_assert_eq(s.firstline[0], 0, "the chunk, after f's return");
	else
		cr_assert_eq(s.firstline[0], 1, "f, inlined");
	cr_assert_eq(s.ev[1].addr, 0x2000);
	cr_assert_eq(s.ev[1].old_size, 24);
	cr_assert_eq(s.ev[2].pcofs, 0);
	cr_assert_eq(s.kind[2], FORMAT_REC_TRACE, "unknown offset: the trace");
	cr_assert_eq(s.traceno[2], T->traceno);
	cr_assert_eq(s.ev[2].line, 0);
	cr_assert_eq(s.kind[3], 0, "no trace readable: site 0");
	cr_assert_eq(s.ev[3].size, 8);
	rig_free(&r);
}
