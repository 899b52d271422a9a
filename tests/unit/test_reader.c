/*
** Unit tests: reader/reader.c (block reader) and reader/decode.c (decoder).
*/
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "decode/decode.h"
#include "logbuild.h"

/* -- Helpers ------------------------------------------------------------------------ */

/* What a recording sink saw. */
struct seen {
	int intro, end, unknown, warnings;
	struct decode_intro in;
	struct decode_end e;
	struct decode_obj *objs[32];
	int nobj;
	struct decode_event ev[64];
	int nev;
	struct decode_events hdr[8];
	int nhdr;
	/* NAME records: the ID, its kind and its name then. */
	uint32_t renamed[4];
	unsigned renamed_kind[4];
	char renamed_to[4][32];
	int nrename;
};

static int s_intro(void *ud, const struct decode_intro *in)
{
	struct seen *s = ud;
	s->intro++;
	s->in = *in;
	return 0;
}

static int s_end(void *ud, const struct decode_end *e)
{
	struct seen *s = ud;
	s->end++;
	s->e = *e;
	return 0;
}

static int s_record(void *ud, struct decode_obj *o)
{
	struct seen *s = ud;
	if (s->nobj < 32)
		s->objs[s->nobj++] = o;
	return 0;
}

static int s_rename(void *ud, struct decode_obj *o)
{
	struct seen *s = ud;
	if (s->nrename < 4) {
		s->renamed[s->nrename] = o->id;
		s->renamed_kind[s->nrename] = o->kind;
		snprintf(s->renamed_to[s->nrename], sizeof s->renamed_to[0],
			 "%s",
			 o->kind == FORMAT_REC_PROTO ? o->u.proto.name.s
						     : o->u.cfunc.name.s);
		s->nrename++;
	}
	return 0;
}

static int s_events(void *ud, const struct decode_events *h)
{
	struct seen *s = ud;
	if (s->nhdr < 8)
		s->hdr[s->nhdr++] = *h;
	return 0;
}

static int s_event(void *ud, const struct decode_event *ev)
{
	struct seen *s = ud;
	if (s->nev < 64)
		s->ev[s->nev++] = *ev;
	return 0;
}

static int s_unknown(void *ud, const struct reader_block *b)
{
	((struct seen *)ud)->unknown++;
	return 0;
}

static void s_warn(void *ud, const char *msg)
{
	((struct seen *)ud)->warnings++;
}

/* Test thread. Decode path into s; returns decode_run's result, message in err. */
static int run(const char *path, struct seen *s, char *err, size_t errlen)
{
	struct reader *r;
	struct decode *d;
	struct decode_sink sink = {
	    .ud = s,
	    .intro = s_intro,
	    .end = s_end,
	    .record = s_record,
	    .rename = s_rename,
	    .events = s_events,
	    .event = s_event,
	    .unknown = s_unknown,
	    .warn = s_warn,
	};
	memset(s, 0, sizeof *s);
	cr_assert_eq(reader_open(&r, path, 0, err, errlen), 0, "%s", err);
	cr_assert_eq(decode_new(&d, &sink), 0);
	int rc = decode_run(r, d, err, errlen);
	/* Objects die with the decoder: keep what the tests look at. */
	static struct decode_obj keep[32];
	for (int i = 0; i < s->nobj; i++) {
		keep[i] = *s->objs[i];
		s->objs[i] = &keep[i];
	}
	for (int i = 0; i < s->nev; i++)
		s->ev[i].obj = NULL, s->ev[i].vmobj = NULL;
	decode_free(d);
	reader_close(r);
	unlink(path);
	return rc;
}

/* Test thread. A log with one VM, functions, a coroutine and one events block. */
static void standard_log(struct lblog *l, int with_end)
{
	struct lbmap m;
	struct lbev e;
	lblog_init(l);
	lblog_intro(l, 4242);
	map_begin(&m, 1);
	map_vm(&m, 1, 777, 50000, 0);
	map_co(&m, 2, FORMAT_CO_MAIN);
	map_proto(&m, 3, "@app.lua", 10, 5);
	map_cfunc(&m, 4, 0x7f0000001000ull, "io.write", "/usr/lib/liblua.so");
	map_ffunc(&m, 5, 17, "string.rep");
	lblog_mapping(l, &m);
	ev_begin(&e);
	ev_vm(&e, FORMAT_VM_ATTACH, 50000, 0);
	ev_switch(&e, 2, 1);
	ev_enter(&e, 1, 3, 10);
	ev_alloc(&e, FORMAT_SITE_LUA, 3, 12, 64, 0x10000, 5);
	ev_enter(&e, 40, 5, 3); /* slot delta 39: the sleb escape */
	ev_exit(&e, 1, 7);
	ev_realloc(&e, FORMAT_SITE_C, 4, 0, 0x10000, 64, 0x20000, 128, 2);
	ev_free(&e, 0x20000, 128, 1);
	ev_gc(&e, FORMAT_GC_PROPAGATE, 60000, 4);
	ev_vm(&e, FORMAT_VM_DETACH, 49000, 100);
	lblog_events(l, 1, 1000, &e);
	if (with_end)
		lblog_end(l);
}

/* -- Decoding ------------------------------------------------------------------------- */

/* Test thread. A log of version version with one VM (ID 1), a PROTO (3),
** and the events of e in one block from base_ts 1000. */
static void alloc_log(struct lblog *l, uint64_t version, struct lbev *e)
{
	struct lbmap m;
	lblog_init(l);
	lblog_intro_version(l, 4242, version);
	map_begin(&m, 1);
	map_vm(&m, 1, 777, 50000, 0);
	map_proto(&m, 3, "@app.lua", 10, 5);
	lblog_mapping(l, &m);
	lblog_events(l, 1, 1000, e);
	lblog_end(l);
}

/* Test thread. A log of version with events e must be refused as corrupt,
** saying msg. */
static void expect_corrupt(uint64_t version, struct lbev *e, const char *msg)
{
	struct lblog l;
	struct seen s;
	char err[512];
	alloc_log(&l, version, e);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	lblog_free(&l);
	cr_assert_not_null(strstr(err, msg), "%s", err);
}

Test(reader, version_12_alloc_and_free_decode_field_by_field)
{
	/* Blocks where the guesses hold (5 and 3 bytes an event without
	** dt), blocks elsewhere, a dt after a run of none, a REALLOC
	** between them (from addr, changing neither guess). */
	static const uint64_t a[] = {0x10000, 0x10048, 0x10090, 0x50000};
	static const uint64_t sz[] = {64, 64, 20, 100};
	struct lblog l;
	struct lbev e;
	struct seen s;
	char err[512];
	ev_begin(&e);
	for (int i = 0; i < 4; i++)
		ev_alloc(&e, FORMAT_SITE_LUA, 3, 11 + (uint64_t)i, sz[i], a[i],
			 i == 3 ? 7 : 0);
	ev_realloc(&e, FORMAT_SITE_LUA, 3, 20, 0x50000, 100, 0x60000, 200, 0);
	ev_free(&e, 0x10090, 20, 0);
	ev_free(&e, 0x10048, 64, 0); /* 0x10090 - chunk(64): the guess */
	ev_free(&e, 0x10000, 64, 3);
	ev_alloc(&e, FORMAT_SITE_LUA, 3, 30, 64, 0x100d8,
		 0); /* off the guess */
	cr_assert_eq(e.p.buf[0], FORMAT_OP_ALLOC << FORMAT_OP_SHIFT |
				     FORMAT_SITE_LUA | FORMAT_ALLOC_NODT);
	alloc_log(&l, FORMAT_VERSION, &e);
	int rc = run(lblog_write(&l), &s, err, sizeof err);
	lblog_free(&l);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(s.nev, 9);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(s.ev[i].op, FORMAT_OP_ALLOC);
		cr_assert_eq(s.ev[i].lo, FORMAT_SITE_LUA,
			     "the flag is no kind");
		cr_assert_eq(s.ev[i].id, 3);
		cr_assert_eq(s.ev[i].line, 11 + (uint64_t)i);
		cr_assert_eq(s.ev[i].size, sz[i]);
		cr_assert_eq(s.ev[i].addr, a[i], "alloc %d", i);
		cr_assert_eq(s.ev[i].ts, i == 3 ? 1007 : 1000);
	}
	cr_assert_eq(s.ev[4].op, FORMAT_OP_REALLOC);
	cr_assert_eq(s.ev[4].old_addr, 0x50000);
	cr_assert_eq(s.ev[4].addr, 0x60000);
	cr_assert_eq(s.ev[4].size, 200);
	const uint64_t fa[] = {0x10090, 0x10048, 0x10000}, fs[] = {20, 64, 64};
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(s.ev[5 + i].op, FORMAT_OP_FREE);
		cr_assert_eq(s.ev[5 + i].addr, fa[i], "free %d", i);
		cr_assert_eq(s.ev[5 + i].size, fs[i]);
	}
	cr_assert_eq(s.ev[7].ts, 1010);
	cr_assert_eq(s.ev[8].addr, 0x100d8);
	cr_assert_eq(s.ev[8].ts, 1010);
}

Test(reader, version_12_flags_are_checked_by_version)
{
	struct lblog l;
	struct lbev e;
	struct seen s;
	char err[512];
	/* FREE's lo is 0 or 1 in version 12... */
	ev_begin(&e);
	lb_u8(&e.p, FORMAT_OP_FREE << FORMAT_OP_SHIFT | 2);
	lb_uleb(&e.p, 64);
	lb_sleb(&e.p, 0);
	lb_uleb(&e.p, 0);
	e.count++;
	expect_corrupt(12, &e, "FREE with lo not 0 or 1");
	/* ... and 0 before; nor has an ALLOC a flag there. */
	ev_begin(&e);
	e.version = 11;
	lb_u8(&e.p, FORMAT_OP_FREE << FORMAT_OP_SHIFT | FORMAT_FREE_NODT);
	lb_sleb(&e.p, 0x1000);
	lb_uleb(&e.p, 64);
	e.count++;
	expect_corrupt(11, &e, "FREE with lo not 0");
	ev_begin(&e);
	e.version = 11;
	lb_u8(&e.p, FORMAT_OP_ALLOC << FORMAT_OP_SHIFT | FORMAT_SITE_LUA |
			FORMAT_ALLOC_NODT);
	lb_uleb(&e.p, 3);
	lb_uleb(&e.p, 1);
	lb_uleb(&e.p, 64);
	lb_sleb(&e.p, 0x1000);
	lb_uleb(&e.p, 0);
	e.count++;
	expect_corrupt(11, &e, "unknown site kind");
	/* A version 11 log of the same events reads as version 11 wrote it. */
	ev_begin(&e);
	e.version = 11;
	ev_alloc(&e, FORMAT_SITE_LUA, 3, 1, 64, 0x10000, 0);
	ev_free(&e, 0x10000, 64, 2);
	alloc_log(&l, 11, &e);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), 0, "%s", err);
	lblog_free(&l);
	cr_assert_eq(s.nev, 2);
	cr_assert_eq(s.ev[0].addr, 0x10000);
	cr_assert_eq(s.ev[1].addr, 0x10000);
	cr_assert_eq(s.ev[1].ts, 1002);
}

Test(reader, site_kind_ljlog_from_version_18)
{
	/* ljlog's own objects (version 18): site 0, the kind kept. */
	struct lblog l;
	struct lbev e;
	struct seen s;
	char err[512];
	ev_begin(&e);
	ev_alloc(&e, FORMAT_SITE_LJLOG, 0, 0, 40, 0x10000, 0);
	ev_free(&e, 0x10000, 40, 1);
	alloc_log(&l, 18, &e);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), 0, "%s", err);
	lblog_free(&l);
	cr_assert_eq(s.nev, 2);
	cr_assert_eq(s.ev[0].lo, FORMAT_SITE_LJLOG);
	cr_assert_null(s.ev[0].obj);
	cr_assert_eq(s.ev[0].size, 40);
	/* Not before version 18, and never with a site. */
	ev_begin(&e);
	e.version = 17;
	ev_alloc(&e, FORMAT_SITE_LJLOG, 0, 0, 40, 0x10000, 0);
	expect_corrupt(17, &e, "site kind ljlog before version 18");
	ev_begin(&e);
	ev_alloc(&e, FORMAT_SITE_LJLOG, 3, 0, 40, 0x10000, 0);
	expect_corrupt(18, &e, "this site kind takes site 0");
}

Test(reader, valid_log_decodes_field_by_field)
{
	struct lblog l;
	struct seen s;
	char err[512];
	standard_log(&l, 1);
	int rc = run(lblog_write(&l), &s, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(s.intro, 1);
	cr_assert_eq(s.in.version, FORMAT_VERSION);
	cr_assert_eq(s.in.pointer_size, 8);
	cr_assert_eq(s.in.pid, 4242);
	cr_assert_eq(s.in.counter_kind, FORMAT_COUNTER_MONO_NS);
	cr_assert_eq(s.in.counter_hz, 1000000000);
	cr_assert_eq(s.in.clock.counter, 0);
	cr_assert_eq(s.nobj, 5);
	cr_assert_eq(s.objs[0]->kind, FORMAT_REC_VM);
	cr_assert_eq(s.objs[0]->id, 1);
	cr_assert_eq(s.objs[0]->u.vm.thread, 777);
	cr_assert_eq(s.objs[0]->u.vm.heap, 50000);
	cr_assert_eq(s.objs[1]->kind, FORMAT_REC_COROUTINE);
	cr_assert_eq(s.objs[1]->u.co.flags, FORMAT_CO_MAIN);
	cr_assert_eq(s.objs[2]->kind, FORMAT_REC_PROTO);
	cr_assert_eq(s.objs[2]->u.proto.firstline, 10);
	cr_assert_eq(s.objs[2]->u.proto.numline, 5);
	cr_assert_eq(s.objs[3]->u.cfunc.address, 0x7f0000001000ull);
	cr_assert_eq(s.objs[4]->u.ffunc.ffid, 17);
	cr_assert_eq(s.nhdr, 1);
	cr_assert_eq(s.hdr[0].vm, 1);
	cr_assert_eq(s.hdr[0].count, 10);
	cr_assert_eq(s.hdr[0].base_ts, 1000);

	cr_assert_eq(s.nev, 10);
	const struct decode_event *ev = s.ev;
	cr_assert_eq(ev[0].op, FORMAT_OP_VM);
	cr_assert_eq(ev[0].lo, FORMAT_VM_ATTACH);
	cr_assert_eq(ev[0].heap, 50000);
	cr_assert_eq(ev[0].ts, 1000);
	cr_assert_eq(ev[0].co, 0, "no coroutine before the first SWITCH");
	cr_assert_eq(ev[1].op, FORMAT_OP_SWITCH);
	cr_assert_eq(ev[1].id, 2);
	cr_assert_eq(ev[1].co, 2);
	cr_assert_eq(ev[1].ts, 1001);
	cr_assert_eq(ev[2].op, FORMAT_OP_ENTER);
	cr_assert_eq(ev[2].slot, 1);
	cr_assert_eq(ev[2].id, 3);
	cr_assert_eq(ev[2].ts, 1011);
	cr_assert_eq(ev[2].co, 2);
	cr_assert_eq(ev[2].vm, 1);
	cr_assert_eq(ev[3].op, FORMAT_OP_ALLOC);
	cr_assert_eq(ev[3].lo, FORMAT_SITE_LUA);
	cr_assert_eq(ev[3].id, 3);
	cr_assert_eq(ev[3].line, 12);
	cr_assert_eq(ev[3].size, 64);
	cr_assert_eq(ev[3].addr, 0x10000);
	cr_assert_eq(ev[4].op, FORMAT_OP_ENTER);
	cr_assert_eq(ev[4].slot, 40);
	cr_assert_eq(ev[4].id, 5);
	cr_assert_eq(ev[5].op, FORMAT_OP_EXIT);
	cr_assert_eq(ev[5].slot, 1);
	cr_assert_eq(ev[5].ts, 1026);
	cr_assert_eq(ev[6].op, FORMAT_OP_REALLOC);
	cr_assert_eq(ev[6].lo, FORMAT_SITE_C);
	cr_assert_eq(ev[6].id, 4);
	cr_assert_eq(ev[6].old_addr, 0x10000);
	cr_assert_eq(ev[6].old_size, 64);
	cr_assert_eq(ev[6].addr, 0x20000);
	cr_assert_eq(ev[6].size, 128);
	cr_assert_eq(ev[7].op, FORMAT_OP_FREE);
	cr_assert_eq(ev[7].addr, 0x20000);
	cr_assert_eq(ev[7].size, 128);
	cr_assert_eq(ev[8].op, FORMAT_OP_GC);
	cr_assert_eq(ev[8].lo, FORMAT_GC_PROPAGATE);
	cr_assert_eq(ev[8].heap, 60000);
	cr_assert_eq(ev[9].op, FORMAT_OP_VM);
	cr_assert_eq(ev[9].lo, FORMAT_VM_DETACH);
	cr_assert_eq(ev[9].heap, 49000);
	cr_assert_eq(ev[9].ts, 1000 + 0 + 1 + 10 + 5 + 3 + 7 + 2 + 1 + 4 + 100);

	cr_assert_eq(s.end, 1);
	cr_assert_eq(s.e.events, 10);
	cr_assert_eq(s.e.blocks, 3);
	cr_assert_eq(s.e.vms, 1);
	cr_assert_eq(s.warnings, 0);
	lblog_free(&l);
}

Test(reader, decoder_state_resets_per_block)
{
	struct lblog l;
	struct lbmap m;
	struct lbev e;
	struct seen s;
	char err[512];
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 0, 0);
	map_proto(&m, 2, "=stdin", 0, 0);
	lblog_mapping(&l, &m);
	ev_begin(&e);
	ev_enter(&e, 5, 2, 1);
	ev_alloc(&e, FORMAT_SITE_LUA, 2, 1, 8, 0x5000, 1);
	lblog_events(&l, 1, 100, &e);
	ev_begin(&e);
	ev_enter(&e, 6, 2, 1);	   /* delta from 0 again */
	ev_free(&e, 0x5000, 8, 1); /* delta from address 0 again */
	lblog_events(&l, 1, 200, &e);
	lblog_end(&l);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), 0, "%s", err);
	cr_assert_eq(s.nev, 4);
	cr_assert_eq(s.ev[2].slot, 6);
	cr_assert_eq(s.ev[2].ts, 201);
	cr_assert_eq(s.ev[3].addr, 0x5000);
	lblog_free(&l);
}

/* -- Truncation and corruption -------------------------------------------------------- */

Test(reader, truncated_tail_every_cut)
{
	struct lblog l;
	struct seen s;
	char err[512];
	standard_log(&l, 1);
	size_t full = l.file.len;
	/* Find the block offsets by walking the headers. */
	size_t offs[8], n = 0;
	for (size_t o = FORMAT_MAGIC_LEN; o < full;) {
		struct blocks_header h;
		cr_assert_eq(blocks_header_parse(l.file.buf + o, &h), 0);
		offs[n++] = o;
		o += FORMAT_HEADER_LEN + h.length;
	}
	cr_assert_eq(n, 4);
	for (size_t cut = 0; cut < full; cut++) {
		struct lblog t = l;
		t.file.len = cut;
		int rc = run(lblog_write(&t), &s, err, sizeof err);
		cr_assert_eq(rc, -ENODATA, "cut at %zu: rc %d (%s)", cut, rc,
			     err);
		if (cut < FORMAT_MAGIC_LEN) {
			cr_assert_not_null(strstr(err, "magic"), "%s", err);
			continue;
		}
		/* The message names the offset of the block it stops in. */
		size_t b = 0;
		while (b + 1 < n && offs[b + 1] <= cut)
			b++;
		char want[64];
		snprintf(want, sizeof want, "offset %zu",
			 cut == offs[b] ? cut : offs[b]);
		cr_assert_not_null(strstr(err, want), "cut %zu: %s (want %s)",
				   cut, err, want);
	}
	lblog_free(&l);
}

Test(reader, no_end_block_is_truncated)
{
	struct lblog l;
	struct seen s;
	char err[512];
	standard_log(&l, 0);
	size_t len = l.file.len;
	int rc = run(lblog_write(&l), &s, err, sizeof err);
	cr_assert_eq(rc, -ENODATA, "%s", err);
	char want[64];
	snprintf(want, sizeof want, "ends at offset %zu", len);
	cr_assert_not_null(strstr(err, want), "%s", err);
	cr_assert_not_null(strstr(err, "without an END block"), "%s", err);
	cr_assert_eq(s.nev, 10, "everything before is decoded");
	lblog_free(&l);
}

Test(reader, valid_end_reported)
{
	struct lblog l;
	char err[512];
	struct reader *r;
	struct reader_block b;
	standard_log(&l, 1);
	size_t cut = l.file.len - 3; /* inside the END payload */
	l.file.len = cut;
	const char *path = lblog_write(&l);
	cr_assert_eq(reader_open(&r, path, 0, err, sizeof err), 0);
	int rc, blocks = 0;
	while ((rc = reader_next(r, &b)) > 0 &&
	       (rc = reader_payload(r, &b)) == 0)
		blocks++;
	cr_assert_eq(rc, -ENODATA);
	cr_assert_eq(blocks, 3);
	cr_assert_eq(reader_valid_end(r), b.offset,
		     "valid up to the END block");
	cr_assert_eq(reader_next(r, &b), -ENODATA, "the error is sticky");
	reader_close(r);
	unlink(path);
	lblog_free(&l);
}

Test(reader, flipped_payload_byte_is_corrupt)
{
	struct lblog l;
	struct seen s;
	char err[512];
	standard_log(&l, 1);
	/* Block 2 is EVENTS: flip a byte in its payload. */
	size_t o = FORMAT_MAGIC_LEN;
	struct blocks_header h;
	for (int i = 0; i < 2; i++) {
		blocks_header_parse(l.file.buf + o, &h);
		o += FORMAT_HEADER_LEN + h.length;
	}
	size_t events_off = o;
	l.file.buf[o + FORMAT_HEADER_LEN + 3] ^= 0x40;
	int rc = run(lblog_write(&l), &s, err, sizeof err);
	cr_assert_eq(rc, -EBADMSG, "%s", err);
	char want[128];
	snprintf(want, sizeof want,
		 "block 2 (EVENTS) at offset %zu: payload checksum mismatch",
		 events_off);
	cr_assert_str_eq(err, want);
	cr_assert_eq(s.nev, 0, "no event of a corrupt block is decoded");
	lblog_free(&l);
}

Test(reader, flipped_header_byte_is_corrupt)
{
	struct lblog l;
	struct seen s;
	char err[512];
	standard_log(&l, 1);
	size_t o = FORMAT_MAGIC_LEN;
	struct blocks_header h;
	blocks_header_parse(l.file.buf + o, &h);
	o += FORMAT_HEADER_LEN + h.length; /* block 1, MAPPING */
	l.file.buf[o + 5] ^= 0x01;	   /* its length */
	int rc = run(lblog_write(&l), &s, err, sizeof err);
	cr_assert_eq(rc, -EBADMSG, "%s", err);
	char want[96];
	snprintf(want, sizeof want,
		 "block 1 at offset %zu: header checksum mismatch", o);
	cr_assert_str_eq(err, want);
	l.file.buf[o + 5] ^= 0x01;
	l.file.buf[o] ^= 0xff; /* sync */
	rc = run(lblog_write(&l), &s, err, sizeof err);
	cr_assert_eq(rc, -EBADMSG);
	cr_assert_not_null(strstr(err, "bad block header (sync"), "%s", err);
	lblog_free(&l);
}

Test(reader, bad_magic_and_structure)
{
	struct lblog l;
	struct seen s;
	char err[512];
	standard_log(&l, 1);
	l.file.buf[1] = 'X';
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "offset 0: bad file magic"), "%s", err);
	lblog_free(&l);

	/* First block not INTRO. */
	struct lbmap m;
	lblog_init(&l);
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 0, 0);
	lblog_mapping(&l, &m);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "first block must be INTRO"), "%s", err);
	lblog_free(&l);

	/* Data after END. */
	standard_log(&l, 1);
	lb_u8(&l.file, 0);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "data after the END block"), "%s", err);
	lblog_free(&l);

	/* Two INTROs. */
	lblog_init(&l);
	lblog_intro(&l, 1);
	lblog_intro(&l, 1);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "second INTRO"), "%s", err);
	lblog_free(&l);
}

Test(reader, length_over_limit_is_corrupt)
{
	struct lblog l;
	struct seen s;
	char err[512];
	lblog_init(&l);
	lblog_intro(&l, 1);
	uint8_t hdr[FORMAT_HEADER_LEN];
	blocks_header_pack(hdr, FORMAT_KIND_EVENTS, "", 0);
	uint32_t len = FORMAT_MAX_PAYLOAD + 1;
	memcpy(hdr + 4, &len, 4); /* little-endian host */
	/* Recompute the header checksum so only the length is wrong. */
	uint32_t hc = XXH32(hdr, 12, 0);
	memcpy(hdr + 12, &hc, 4);
	size_t off = l.file.len;
	lb_bytes(&l.file, hdr, sizeof hdr);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	char want[96];
	snprintf(want, sizeof want,
		 "block 1 (EVENTS) at offset %zu: payload length", off);
	cr_assert_not_null(strstr(err, want), "%s", err);
	cr_assert_not_null(strstr(err, "over the limit"), "%s", err);
	lblog_free(&l);
}

/* Test thread. A log whose only EVENTS block is e (VM 1, PROTO 2, COROUTINE 3). */
static int decode_events_log(struct lbev *e, struct seen *s, char *err,
			     size_t errlen)
{
	struct lblog l;
	struct lbmap m;
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 0, 0);
	map_proto(&m, 2, "@a.lua", 1, 1);
	map_co(&m, 3, 0);
	lblog_mapping(&l, &m);
	lblog_events(&l, 1, 0, e);
	lblog_end(&l);
	int rc = run(lblog_write(&l), s, err, errlen);
	lblog_free(&l);
	return rc;
}

Test(reader, id_used_before_definition_is_corrupt)
{
	struct lbev e;
	struct seen s;
	char err[512];
	ev_begin(&e);
	ev_enter(&e, 1, 2, 1);
	ev_enter(&e, 2, 9, 1); /* 9 is not defined */
	cr_assert_eq(decode_events_log(&e, &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "block 2 (EVENTS)"), "%s", err);
	cr_assert_not_null(strstr(err, "event 1 of 2 (ENTER)"), "%s", err);
	cr_assert_not_null(strstr(err, "used before definition (ID 9)"), "%s",
			   err);

	ev_begin(&e);
	ev_switch(&e, 2, 1); /* a PROTO, not a COROUTINE */
	cr_assert_eq(decode_events_log(&e, &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "not a COROUTINE"), "%s", err);

	ev_begin(&e);
	ev_alloc(&e, FORMAT_SITE_LUA, 77, 1, 8, 0x100, 1);
	cr_assert_eq(decode_events_log(&e, &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "site ID used before definition"), "%s",
			   err);

	/* Events of an undefined VM. */
	struct lblog l;
	lblog_init(&l);
	lblog_intro(&l, 1);
	ev_begin(&e);
	ev_gc(&e, 0, 1, 1);
	lblog_events(&l, 5, 0, &e);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "VM ID 5, which is not defined"), "%s",
			   err);
	lblog_free(&l);
}

Test(reader, redefined_id_is_corrupt)
{
	struct lblog l;
	struct lbmap m;
	struct seen s;
	char err[512];
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 0, 0);
	map_proto(&m, 2, "@a.lua", 1, 1);
	lblog_mapping(&l, &m);
	map_begin(&m, 1);
	map_cfunc(&m, 2, 0x1234, "f", "x.so");
	lblog_mapping(&l, &m);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "block 2 (MAPPING)"), "%s", err);
	cr_assert_not_null(
	    strstr(err, "redefines ID 2 (a PROTO defined in block 1)"), "%s",
	    err);
	lblog_free(&l);
}

Test(reader, absurd_id_is_corrupt)
{
	struct lblog l;
	struct lbmap m;
	struct seen s;
	char err[512];
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 0, 0);
	map_proto(&m, DECODE_MAX_ID, "@a.lua", 1, 1);
	lblog_mapping(&l, &m);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "out of range"), "%s", err);
	lblog_free(&l);

	/* The largest valid ID works (and allocates one page, not the table). */
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, DECODE_MAX_ID - 1);
	map_vm(&m, DECODE_MAX_ID - 1, 1, 0, 0);
	lblog_mapping(&l, &m);
	lblog_end(&l);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), 0, "%s", err);
	lblog_free(&l);
}

/* Test thread. A log of version with VM 1, PROTO 2, CFUNC 3, TRACE 4 (at
** 2) and STACK 5 (no frames) in block 1, then in block 2 a NAME of ID 2
** ("fib") and a NAME of id ("stats"); decode it into s (the renames
** record the object's name as the sink sees it). */
static int name_log(uint64_t version, uint64_t id, struct seen *s, char *err,
		    size_t errlen)
{
	struct lblog l;
	struct lbmap m;
	lblog_init(&l);
	lblog_intro_version(&l, 1, version);
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 0, 0);
	map_proto(&m, 2, "@app.lua", 4, 3);
	map_cfunc(&m, 3, 0x401234, "host+0x1234", "/usr/bin/host");
	map_trace(&m, 4, 1, 2, 5, 0);
	lb_u8(&m.p, FORMAT_REC_STACK);
	lb_uleb(&m.p, 5);
	lb_uleb(&m.p, 0); /* parent */
	lb_uleb(&m.p, 0); /* nlua */
	lb_uleb(&m.p, 0); /* nhost */
	lblog_mapping(&l, &m);
	map_begin(&m, 1);
	map_name(&m, 2, "fib");
	map_name(&m, id, "stats");
	lblog_mapping(&l, &m);
	lblog_end(&l);
	int rc = run(lblog_write(&l), s, err, errlen);
	lblog_free(&l);
	return rc;
}

Test(reader, name_record_renames_proto_and_cfunc)
{
	struct seen s;
	char err[512];
	cr_assert_eq(name_log(FORMAT_VERSION, 3, &s, err, sizeof err), 0, "%s",
		     err);
	/* No new ID: the 5 records of block 1, then two renames. */
	cr_assert_eq(s.nobj, 5);
	cr_assert_eq(s.nrename, 2);
	cr_assert_eq(s.renamed[0], 2);
	cr_assert_eq(s.renamed_kind[0], FORMAT_REC_PROTO);
	cr_assert_str_eq(s.renamed_to[0], "fib");
	cr_assert_eq(s.renamed[1], 3);
	cr_assert_eq(s.renamed_kind[1], FORMAT_REC_CFUNC);
	cr_assert_str_eq(s.renamed_to[1], "stats");
}

Test(reader, name_of_undefined_trace_or_stack_id_is_corrupt)
{
	struct seen s;
	char err[512];
	cr_assert_eq(name_log(FORMAT_VERSION, 9, &s, err, sizeof err),
		     -EBADMSG);
	cr_assert_not_null(strstr(err, "block 2 (MAPPING)"), "%s", err);
	/* The second record: kind, ID 2, "fib" (5 bytes) after the vm. */
	cr_assert_not_null(strstr(err, "NAME record at payload offset 7: ID 9 "
				       "is not defined before use"),
			   "%s", err);
	cr_assert_eq(name_log(FORMAT_VERSION, 4, &s, err, sizeof err),
		     -EBADMSG);
	cr_assert_not_null(strstr(err, "NAME record at payload offset 7: ID 4 "
				       "is a TRACE, not a PROTO or CFUNC"),
			   "%s", err);
	cr_assert_eq(name_log(FORMAT_VERSION, 5, &s, err, sizeof err),
		     -EBADMSG);
	cr_assert_not_null(strstr(err, "NAME record at payload offset 7: ID 5 "
				       "is a STACK, not a PROTO or CFUNC"),
			   "%s", err);
	cr_assert_eq(s.nrename, 1, "the first NAME went through");
}

Test(reader, name_before_version_14_is_corrupt)
{
	struct seen s;
	char err[512];
	cr_assert_eq(name_log(13, 3, &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "block 2 (MAPPING)"), "%s", err);
	cr_assert_not_null(
	    strstr(err, "unknown record kind 10 at payload offset 1"), "%s",
	    err);
	cr_assert_eq(s.nrename, 0);
}

Test(reader, mapping_for_undefined_vm_is_corrupt)
{
	struct lblog l;
	struct lbmap m;
	struct seen s;
	char err[512];
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 4);
	map_proto(&m, 2, "@a.lua", 1, 1);
	lblog_mapping(&l, &m);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(
	    strstr(err, "MAPPING for VM ID 4, which is not defined"), "%s",
	    err);
	lblog_free(&l);
}

Test(reader, event_past_payload_end_is_corrupt)
{
	struct lbev e;
	struct seen s;
	char err[512];
	ev_begin(&e);
	ev_enter(&e, 1, 2, 1);
	ev_alloc(&e, FORMAT_SITE_LUA, 2, 1, 8, 0x100, 1);
	e.p.len -=
	    2; /* the ALLOC's last fields are cut; checksum still right */
	cr_assert_eq(decode_events_log(&e, &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "event 1 of 2 (ALLOC)"), "%s", err);
	cr_assert_not_null(strstr(err, "runs past the payload end"), "%s", err);

	/* count says more events than there are. */
	ev_begin(&e);
	ev_enter(&e, 1, 2, 1);
	ev_enter(&e, 2, 2, 1);
	ev_enter(&e, 3, 2, 1);
	e.count = 4;
	cr_assert_eq(decode_events_log(&e, &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "payload ends after 3 of 4 events"),
			   "%s", err);

	/* count says fewer. */
	ev_begin(&e);
	ev_enter(&e, 1, 2, 1);
	ev_exit(&e, 1, 1);
	e.count = 1;
	cr_assert_eq(decode_events_log(&e, &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "left after the 1 events"), "%s", err);

	/* A string longer than its payload, in a MAPPING. */
	struct lblog l;
	struct lbmap m;
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 0, 0);
	map_proto(&m, 2, "@abcdef.lua", 1, 1);
	m.p.len -= 6; /* cut inside the chunk string */
	lblog_mapping(&l, &m);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "PROTO chunk"), "%s", err);
	lblog_free(&l);
}

Test(reader, bad_event_fields_are_corrupt)
{
	struct lbev e;
	struct seen s;
	char err[512];
	/* Slot below 0. */
	ev_begin(&e);
	ev_exit(&e, -1, 1);
	cr_assert_eq(decode_events_log(&e, &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "slot below 0"), "%s", err);
	/* GC phase 6. */
	ev_begin(&e);
	ev_gc(&e, 6, 0, 1);
	cr_assert_eq(decode_events_log(&e, &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "unknown GC phase"), "%s", err);
	/* Site kind 8 (7 is ljlog's, version 18). */
	ev_begin(&e);
	ev_alloc(&e, FORMAT_SITE__MAX, 0, 0, 8, 0x100, 1);
	cr_assert_eq(decode_events_log(&e, &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "unknown site kind"), "%s", err);
	/* A lua site naming a coroutine. */
	ev_begin(&e);
	ev_alloc(&e, FORMAT_SITE_LUA, 3, 0, 8, 0x100, 1);
	cr_assert_eq(decode_events_log(&e, &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "not a PROTO"), "%s", err);
	/* Time going back across blocks of a VM. */
	struct lblog l;
	struct lbmap m;
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 0, 0);
	lblog_mapping(&l, &m);
	ev_begin(&e);
	ev_gc(&e, 0, 0, 50);
	lblog_events(&l, 1, 100, &e);
	ev_begin(&e);
	ev_gc(&e, 1, 0, 1);
	lblog_events(&l, 1, 120, &e);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(
	    strstr(err, "base_ts 120 is before the last event time 150"), "%s",
	    err);
	lblog_free(&l);
}

Test(reader, end_totals_checked)
{
	struct lblog l;
	struct seen s;
	char err[512];
	standard_log(&l, 0);
	l.events += 1;
	lblog_end(&l);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(
	    strstr(err, "END counts 11 events, the EVENTS blocks hold 10"),
	    "%s", err);
	lblog_free(&l);

	standard_log(&l, 0);
	l.blocks += 1;
	lblog_end(&l);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "END counts 4 blocks"), "%s", err);
	lblog_free(&l);
}

Test(reader, end_names_write_error)
{
	struct lblog l;
	struct seen s;
	char err[512];
	standard_log(&l, 0);
	l.stop_error = 28;
	l.stop_reason = "No space left on device";
	lblog_end(&l);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), 0, "%s", err);
	cr_assert_eq(s.e.stop_error, 28);
	cr_assert_str_eq(s.e.stop_reason, "No space left on device");
	lblog_free(&l);

	/* Closed by the writer: stop_error 0, no reason. */
	standard_log(&l, 0);
	l.stop_error = 0;
	l.stop_reason = NULL;
	lblog_end(&l);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), 0, "%s", err);
	cr_assert_eq(s.e.stop_error, 0);
	cr_assert_str_eq(s.e.stop_reason, "");
	lblog_free(&l);

	/* Version 4: END has no stop fields. */
	lblog_init(&l);
	l.version = 4;
	lblog_intro(&l, 1);
	lblog_end(&l);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), 0, "%s", err);
	cr_assert_eq(s.e.stop_error, 0);
	lblog_free(&l);
}

Test(reader, end_counts_writer_waits)
{
	struct lblog l;
	struct seen s;
	char err[512];
	standard_log(&l, 0);
	l.flush_waits = 7;
	l.flush_wait_ns = 123456789;
	lblog_end(&l);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), 0, "%s", err);
	cr_assert_eq(s.e.flush_waits, 7);
	cr_assert_eq(s.e.flush_wait_ns, 123456789);
	lblog_free(&l);

	/* Version 14: END ends at stop_reason; no waits. */
	lblog_init(&l);
	l.version = 14;
	lblog_intro(&l, 1);
	l.flush_waits = 7; /* not written: version 14 */
	lblog_end(&l);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), 0, "%s", err);
	cr_assert_eq(s.e.flush_waits, 0);
	cr_assert_eq(s.e.flush_wait_ns, 0);
	lblog_free(&l);
}

Test(reader, unknown_kind_skipped)
{
	struct lblog l;
	struct seen s;
	char err[512];
	standard_log(&l, 0);
	lblog_block(&l, 99, "whatever", 8);
	lblog_end(&l);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), 0, "%s", err);
	cr_assert_eq(s.unknown, 1);
	cr_assert_eq(s.warnings, 1, "reported as a warning");
	cr_assert_eq(s.e.blocks, 4, "counted among the blocks");
	lblog_free(&l);
}

Test(reader, unsupported_version)
{
	struct lblog l;
	struct seen s;
	char err[512];
	struct lb p = {0};
	lblog_init(&l);
	lb_uleb(&p, FORMAT_VERSION + 1);
	lblog_block(&l, FORMAT_KIND_INTRO, p.buf, p.len);
	lb_free(&p);
	cr_assert_eq(run(lblog_write(&l), &s, err, sizeof err), -ENOTSUP);
	char want[64];
	snprintf(want, sizeof want, "format version %d is not supported",
		 FORMAT_VERSION + 1);
	cr_assert_not_null(strstr(err, want), "%s", err);
	lblog_free(&l);
}

/* -- Skipping and following ------------------------------------------------------------- */

Test(reader, skip_by_length_reads_no_payload)
{
	struct lblog l;
	char err[512];
	struct reader *r;
	struct reader_block b;
	static uint8_t big[1 << 20];
	lblog_init(&l);
	lblog_intro(&l, 1);
	for (int i = 0; i < 8; i++)
		lblog_block(&l, 99, big, sizeof big);
	lblog_end(&l);
	const char *path = lblog_write(&l);
	cr_assert_eq(reader_open(&r, path, 0, err, sizeof err), 0);
	reader_set_readahead(r, FORMAT_HEADER_LEN);
	int rc, n = 0;
	while ((rc = reader_next(r, &b)) > 0)
		n++;
	cr_assert_eq(rc, 0, "%s", reader_error(r));
	cr_assert_eq(n, 10);
	cr_assert_eq(
	    reader_bytes_read(r), FORMAT_MAGIC_LEN + 10 * FORMAT_HEADER_LEN,
	    "read %llu bytes", (unsigned long long)reader_bytes_read(r));
	reader_close(r);

	/* With the default read-ahead, still far less than the file. */
	cr_assert_eq(reader_open(&r, path, 0, err, sizeof err), 0);
	while ((rc = reader_next(r, &b)) > 0)
		;
	cr_assert_eq(rc, 0);
	cr_assert_lt(reader_bytes_read(r), l.file.len / 2);
	reader_close(r);

	/* And the decoder is never handed a skipped payload. */
	struct seen s;
	cr_assert_eq(run(path, &s, err, sizeof err), 0, "%s", err);
	cr_assert_eq(s.unknown, 8);
	lblog_free(&l);
}

Test(reader, skipped_payload_cut_is_truncated)
{
	struct lblog l;
	char err[512];
	struct reader *r;
	struct reader_block b;
	static uint8_t big[4096];
	lblog_init(&l);
	lblog_intro(&l, 1);
	size_t off = l.file.len;
	lblog_block(&l, 99, big, sizeof big);
	l.file.len -= 100;
	const char *path = lblog_write(&l);
	cr_assert_eq(reader_open(&r, path, 0, err, sizeof err), 0);
	reader_set_readahead(r, FORMAT_HEADER_LEN);
	int rc;
	while ((rc = reader_next(r, &b)) > 0)
		;
	cr_assert_eq(rc, -ENODATA);
	char want[96];
	snprintf(want, sizeof want,
		 "file ends inside block 1 (kind 99) at offset %zu", off);
	cr_assert_not_null(strstr(reader_error(r), want), "%s",
			   reader_error(r));
	cr_assert_eq(reader_valid_end(r), off);
	reader_close(r);
	unlink(path);
	lblog_free(&l);
}

/* Follow test: each wait appends the next piece of the log. */
struct grow {
	int fd;
	const struct lblog *l;
	size_t written, step;
	int waits;
};

static int grow_wait(void *ud, uint64_t size)
{
	struct grow *g = ud;
	g->waits++;
	if (g->written >= g->l->file.len)
		return -1; /* nothing more will come */
	size_t n = g->l->file.len - g->written;
	if (n > g->step)
		n = g->step;
	cr_assert_eq(write(g->fd, g->l->file.buf + g->written, n), (ssize_t)n);
	g->written += n;
	return 0;
}

Test(reader, follow_growing_file)
{
	struct lblog l;
	char err[512];
	struct reader *r;
	struct decode *d;
	struct seen s;
	struct decode_sink sink = {.ud = &s, .event = s_event, .end = s_end};
	standard_log(&l, 1);
	char path[] = "/tmp/ljlog-follow-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	struct grow g = {fd, &l, 0, 7, 0};
	memset(&s, 0, sizeof s);
	cr_assert_eq(reader_open(&r, path, READER_FOLLOW, err, sizeof err), 0);
	reader_set_wait(r, grow_wait, &g, 1);
	cr_assert_eq(decode_new(&d, &sink), 0);
	int rc = decode_run(r, d, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(s.nev, 10);
	cr_assert_eq(s.end, 1);
	cr_assert_gt(g.waits, 10, "it waited for the bytes");
	decode_free(d);
	reader_close(r);

	/* A writer that stops without END: truncated once the wait gives up. */
	lblog_free(&l);
	standard_log(&l, 0);
	cr_assert_eq(ftruncate(fd, 0), 0);
	lseek(fd, 0, SEEK_SET);
	g.written = 0;
	g.l = &l;
	cr_assert_eq(reader_open(&r, path, READER_FOLLOW, err, sizeof err), 0);
	reader_set_wait(r, grow_wait, &g, 1);
	cr_assert_eq(decode_new(&d, &sink), 0);
	rc = decode_run(r, d, err, sizeof err);
	cr_assert_eq(rc, -ENODATA, "%s", err);
	cr_assert_not_null(strstr(err, "without an END block"), "%s", err);
	decode_free(d);
	reader_close(r);
	close(fd);
	unlink(path);
	lblog_free(&l);
}

/* -- Names ------------------------------------------------------------------------------- */

Test(reader, chunk_names)
{
	char out[128];
	struct decode_str s;
	s.s = "@app.lua", s.len = 8;
	decode_chunk_name(&s, out, sizeof out);
	cr_assert_str_eq(out, "app.lua");
	s.s = "=stdin", s.len = 6;
	decode_chunk_name(&s, out, sizeof out);
	cr_assert_str_eq(out, "stdin");
	s.s = "return 1", s.len = 8;
	decode_chunk_name(&s, out, sizeof out);
	cr_assert_str_eq(out, "[string \"return 1\"]");
	s.s = "local x = 1\nreturn x", s.len = strlen(s.s);
	decode_chunk_name(&s, out, sizeof out);
	cr_assert_str_eq(out, "[string \"local x = 1...\"]");
	/* Like LuaJIT's lj_debug_shortname: up to 48 bytes kept whole, else
	** 45 and "...". */
	s.s = "local a_very_long_variable_name = some_function_call(1, 2, 3)";
	s.len = strlen(s.s);
	decode_chunk_name(&s, out, sizeof out);
	cr_assert_str_eq(
	    out,
	    "[string \"local a_very_long_variable_name = some_functi...\"]");
	s.s = "return 12345678901234567890123456789012345678901"; /* 48 */
	s.len = strlen(s.s);
	decode_chunk_name(&s, out, sizeof out);
	cr_assert_str_eq(
	    out,
	    "[string \"return 12345678901234567890123456789012345678901\"]");
	s.s = "a\tb", s.len = 3; /* any control character ends the line */
	decode_chunk_name(&s, out, sizeof out);
	cr_assert_str_eq(out, "[string \"a...\"]");
	s.s = "", s.len = 0;
	decode_chunk_name(&s, out, sizeof out);
	cr_assert_str_eq(out, "[string \"\"]");
}

/* -- Robustness ------------------------------------------------------------------------ */

#include "profile/profile.h"

/* Test thread. Deterministic pseudo-random numbers. */
static uint64_t fuzz_rng = 0x9E3779B97F4A7C15ull;
static uint64_t fuzz_next(void)
{
	fuzz_rng ^= fuzz_rng << 13;
	fuzz_rng ^= fuzz_rng >> 7;
	fuzz_rng ^= fuzz_rng << 17;
	return fuzz_rng;
}

Test(reader, mutated_logs_never_crash)
{
	struct lblog l;
	struct lbmap m;
	struct lbev e;
	standard_log(&l, 0);
	map_begin(&m, 1);
	map_co(&m, 20, 0);
	map_proto(&m, 21, "return 1", 0, 1);
	lblog_mapping(&l, &m);
	ev_begin(&e);
	for (int i = 0; i < 50; i++) {
		ev_switch(&e, i & 1 ? 20 : 2, 1);
		ev_enter(&e, 1 + i % 5, i & 1 ? 21 : 3, 2);
		ev_alloc(&e, FORMAT_SITE_LUA, 3, 4, 16,
			 0x1000 + 16 * (uint64_t)i, 1);
		ev_gc(&e, (unsigned)i % FORMAT_GC__MAX, 100, 1);
		ev_exit(&e, 1 + i % 3, 1);
		ev_free(&e, 0x1000 + 16 * (uint64_t)(i / 2), 16, 1);
	}
	lblog_events(&l, 1, 5000, &e);
	lblog_end(&l);

	for (int it = 0; it < 3000; it++) {
		struct lblog t = l;
		t.file.buf = malloc(l.file.len);
		memcpy(t.file.buf, l.file.buf, l.file.len);
		int fix =
		    it % 4 != 0; /* most runs: checksums made right again */
		int flips = 1 + (int)(fuzz_next() % 6);
		for (int k = 0; k < flips; k++) {
			size_t at =
			    FORMAT_MAGIC_LEN +
			    fuzz_next() % (l.file.len - FORMAT_MAGIC_LEN);
			t.file.buf[at] ^= (uint8_t)(1u << (fuzz_next() % 8));
			if (fuzz_next() % 4 == 0)
				t.file.buf[at] = (uint8_t)fuzz_next();
		}
		if (fix) {
			/* Re-pack every header over its original kind and length. */
			for (size_t o = FORMAT_MAGIC_LEN; o < l.file.len;) {
				struct blocks_header h;
				blocks_header_parse(l.file.buf + o, &h);
				blocks_header_pack(t.file.buf + o, h.kind,
						   t.file.buf + o +
						       FORMAT_HEADER_LEN,
						   h.length);
				o += FORMAT_HEADER_LEN + h.length;
			}
		}
		if (fuzz_next() % 5 == 0)
			t.file.len =
			    FORMAT_MAGIC_LEN +
			    fuzz_next() % (l.file.len - FORMAT_MAGIC_LEN);
		const char *path = lblog_write(&t);
		struct profile *p;
		char err[512];
		int rc =
		    profile_load(path, PROFILE_CALLTREE, &p, err, sizeof err);
		cr_assert(rc == 0 || rc == -ENODATA || rc == -EBADMSG ||
			      rc == -ENOTSUP,
			  "iteration %d: rc %d (%s)", it, rc, err);
		cr_assert_not_null(p);
		if (rc)
			cr_assert_neq(err[0], '\0', "iteration %d: no message",
				      it);
		profile_free(p);
		unlink(path);
		free(t.file.buf);
	}
	lblog_free(&l);
}

/* -- Memory on hostile input ------------------------------------------------- */
/* A count or an ID from the file never sizes an allocation by itself: what
** the decoder holds stays in proportion to the bytes it decoded. Measured
** as the heap in use (malloc's own count, or ASan's under ASan) while the
** decoder still holds everything. */

/* Test thread. Decode path (then unlink it); *held gets the heap the
** reader and decoder hold at the end, *found whether ID `id` is defined
** then. Returns decode_run's result, message in err. */
static int run_heap(const char *path, uint64_t id, size_t *held, int *found,
		    char *err, size_t errlen)
{
	struct reader *r;
	struct decode *d;
	size_t before = lb_heap_in_use();
	cr_assert_eq(reader_open(&r, path, 0, err, errlen), 0, "%s", err);
	cr_assert_eq(decode_new(&d, NULL), 0);
	int rc = decode_run(r, d, err, errlen);
	size_t now = lb_heap_in_use();
	*held = now > before ? now - before : 0;
	*found = decode_lookup(d, id) != NULL;
	decode_free(d);
	reader_close(r);
	unlink(path);
	return rc;
}

Test(reader, sparse_ids_take_no_page_each)
{
	/* 16384 COROUTINE records 4096 IDs apart: 6 bytes each, and each in
	** a page of its own (32 KiB: 512 MiB for a 98 KiB block) if the ID
	** table gave every page its memory. */
	enum { N = 16384, STEP = 4096 };
	struct lblog l;
	struct lbmap m;
	struct lbev e;
	char err[512];
	size_t held;
	int found;
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 0, 0);
	for (uint64_t k = 1; k <= N; k++)
		map_co(&m, k * STEP, 0);
	lblog_mapping(&l, &m);
	/* Every one of them is still found: switch to the first and last. */
	ev_begin(&e);
	ev_switch(&e, STEP, 1);
	ev_switch(&e, (uint64_t)N * STEP, 1);
	lblog_events(&l, 1, 10, &e);
	lblog_end(&l);
	int rc = run_heap(lblog_write(&l), (uint64_t)(N / 2) * STEP, &held,
			  &found, err, sizeof err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert(found, "ID %u not found", (N / 2) * STEP);
	cr_assert_lt(held, 32u << 20,
		     "the decoder holds %zu bytes for %d records", held, N);
	lblog_free(&l);

	/* A redefinition of a sparse ID is still one. */
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 0, 0);
	for (uint64_t k = 1; k <= N; k++)
		map_co(&m, k * STEP, 0);
	map_co(&m, (uint64_t)N * STEP, 0);
	lblog_mapping(&l, &m);
	rc = run_heap(lblog_write(&l), STEP, &held, &found, err, sizeof err);
	cr_assert_eq(rc, -EBADMSG);
	cr_assert_not_null(strstr(err, "redefines ID 67108864"), "%s", err);
	lblog_free(&l);
}

Test(reader, trace_snapshot_count_claim_refused)
{
	/* A TRACE record claiming 16 Mi snapshots, with the 32 MiB they
	** would need at 2 bytes each (0 bytes: a snapshot at mcofs 0 with no
	** frames, repeated): refused by its count, before 384 MiB of
	** snapshot table are allocated. */
	enum { NSNAP = 16 << 20 };
	struct lblog l;
	struct lbmap m;
	char err[512];
	size_t held;
	int found;
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 0, 0);
	map_proto(&m, 2, "@t.lua", 1, 10);
	map_trace_snaps(&m, 3, 1, 2, 1, 0, 0, NULL);
	m.p.len--; /* nsnap 0 -> NSNAP */
	lb_uleb(&m.p, NSNAP);
	uint8_t *zeros = calloc(2 * (size_t)NSNAP, 1);
	cr_assert_not_null(zeros);
	lb_bytes(&m.p, zeros, 2 * (size_t)NSNAP);
	free(zeros);
	lblog_mapping(&l, &m);
	lblog_end(&l);
	int rc = run_heap(lblog_write(&l), 3, &held, &found, err, sizeof err);
	cr_assert_eq(rc, -EBADMSG, "%d: %s", rc, err);
	cr_assert_not_null(strstr(err, "TRACE record 3: 16777216 snapshots, "
				       "more than the reader accepts (65535)"),
			   "%s", err);
	/* The reader's buffer holds the 32 MiB block (in up to twice that:
	** it doubles); nothing else big. */
	cr_assert_lt(held, (64u << 20) + (16u << 20),
		     "the decoder holds %zu bytes", held);
	lblog_free(&l);

	/* A snapshot claiming more frames than the bytes left can hold is
	** refused before its frame table is allocated. */
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 1, 0, 0);
	map_proto(&m, 2, "@t.lua", 1, 10);
	map_trace_snaps(&m, 3, 1, 2, 1, 0, 1, (const uint64_t[]){0, 1, 2, 1});
	m.p.len -= 6; /* nframes 1 -> 4000, one frame left, no alines */
	lb_uleb(&m.p, 4000);
	lb_uleb(&m.p, 2); /* proto */
	lb_uleb(&m.p, 1); /* line */
	lblog_mapping(&l, &m);
	rc = run_heap(lblog_write(&l), 3, &held, &found, err, sizeof err);
	cr_assert_eq(rc, -EBADMSG);
	cr_assert_not_null(strstr(err, "TRACE record 3 snapshot 0: 4000 "
				       "frames cannot fit in the payload"),
			   "%s", err);
	lblog_free(&l);
}
