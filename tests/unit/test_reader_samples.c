/*
** Unit tests: SAMPLES blocks, TRACE and HOSTSYM records, trace events in
** reader/decode.c, and the sample and trace processors of reader/profile.c.
*/
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode/decode.h"
#include "logbuild.h"
#include "proc/fnid.h"
#include "profile/profile.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

/* -- Recording sink ------------------------------------------------------------ */

/* A sample as the sink saw it (the decoder reuses its frame arrays). */
struct ssample {
	uint64_t ts, index;
	unsigned state;
	uint64_t missed;
	uint32_t trace, vm;
	uint32_t nlua, nhost;
	uint32_t lua[8];
	uint64_t line[8];
	uint32_t host[8];
};

/* What the sink saw. */
struct sseen {
	struct decode_samples hdr[4];
	int nhdr, ndone, warnings;
	struct ssample s[32];
	int ns;
	struct decode_obj objs[32]; /* copies: pointers in them are dead */
	char name[32][64], object[32][64]; /* HOSTSYM strings */
	int nobj;
	struct decode_event ev[16];
	char msg[16][64];
	int nev;
	char warn[256];
};

static int r_samples(void *ud, const struct decode_samples *h)
{
	struct sseen *s = ud;
	if (s->nhdr < 4)
		s->hdr[s->nhdr++] = *h;
	return 0;
}

static int r_sample(void *ud, const struct decode_sample *sm)
{
	struct sseen *s = ud;
	if (s->ns >= 32)
		return 0;
	struct ssample *x = &s->s[s->ns++];
	x->ts = sm->ts;
	x->index = sm->index;
	x->state = sm->state;
	x->missed = sm->missed;
	x->trace = sm->trace ? sm->trace->id : 0;
	x->vm = sm->vm;
	x->nlua = sm->nlua;
	x->nhost = sm->nhost;
	for (uint32_t i = 0; i < sm->nlua && i < 8; i++) {
		x->lua[i] = sm->lua[i].func->id;
		x->line[i] = sm->lua[i].line;
	}
	for (uint32_t i = 0; i < sm->nhost && i < 8; i++)
		x->host[i] = sm->host[i]->id;
	return 0;
}

static int r_samples_done(void *ud, const struct decode_samples *h)
{
	((struct sseen *)ud)->ndone++;
	return 0;
}

static int r_record(void *ud, struct decode_obj *o)
{
	struct sseen *s = ud;
	if (s->nobj >= 32)
		return 0;
	if (o->kind == FORMAT_REC_HOSTSYM) {
		snprintf(s->name[s->nobj], sizeof s->name[0], "%s",
			 o->u.host.name.s);
		snprintf(s->object[s->nobj], sizeof s->object[0], "%s",
			 o->u.host.object.s);
	}
	s->objs[s->nobj++] = *o;
	return 0;
}

static int r_event(void *ud, const struct decode_event *ev)
{
	struct sseen *s = ud;
	if (s->nev >= 16)
		return 0;
	s->ev[s->nev] = *ev;
	snprintf(s->msg[s->nev], sizeof s->msg[0], "%s",
		 ev->op == FORMAT_OP_VM && ev->lo == FORMAT_VM_TRACE_ABORT
		     ? ev->msg.s
		     : "");
	s->nev++;
	return 0;
}

static void r_warn(void *ud, const char *msg)
{
	struct sseen *s = ud;
	s->warnings++;
	snprintf(s->warn, sizeof s->warn, "%s", msg);
}

/* Test thread. Decode l into s; decode_run's result, message in err. The
** decoder's totals go to *samples and *dropped when not NULL. */
static int run(struct lblog *l, struct sseen *s, char *err, size_t errlen,
	       uint64_t *samples, uint64_t *dropped)
{
	struct reader *r;
	struct decode *d;
	struct decode_sink sink = {
	    .ud = s,
	    .record = r_record,
	    .event = r_event,
	    .samples = r_samples,
	    .sample = r_sample,
	    .samples_done = r_samples_done,
	    .warn = r_warn,
	};
	memset(s, 0, sizeof *s);
	const char *path = lblog_write(l);
	cr_assert_eq(reader_open(&r, path, 0, err, errlen), 0, "%s", err);
	cr_assert_eq(decode_new(&d, &sink), 0);
	int rc = decode_run(r, d, err, errlen);
	if (samples)
		*samples = decode_samples_total(d);
	if (dropped)
		*dropped = decode_dropped_total(d);
	decode_free(d);
	reader_close(r);
	unlink(path);
	return rc;
}

/* -- The standard sampled log -------------------------------------------------------- */

/* IDs of the standard mapping. */
enum {
	VM = 1,
	MAINCHUNK = 2, /* @app.lua, main chunk */
	F = 3,	       /* @app.lua:10 */
	G = 4,	       /* @lib.lua:5 */
	WRITE = 5,     /* CFUNC io.write at 0x5000 */
	REP = 6,       /* FFUNC string.rep */
	H_MAIN = 10,
	H_PCALL = 11,
	H_VM = 12,    /* the interpreter */
	H_WRITE = 13, /* l_write at 0x5000: io.write's own code */
	H_MEMCPY = 14,
	H_ANON = 15, /* no name, in libfoo.so */
	H_VM2 = 16,  /* a second interpreter frame symbol */
	T1 = 20,     /* trace 1 at app.lua:12 */
	T2 = 21,     /* trace 2 at app.lua:14, side of 1 */
};

/* Test thread. INTRO and the mapping: HOSTSYMs first, the CFUNC at the
** address of one of them in a later block. */
static uint64_t begin_version; /* INTRO version of begin's logs, 0: ours */

static void begin(struct lblog *l)
{
	struct lbmap m;
	lblog_init(l);
	l->version = begin_version;
	lblog_intro(l, 7);
	map_begin(&m, VM);
	map_vm(&m, VM, 100, 1000, 0);
	map_proto(&m, MAINCHUNK, "@app.lua", 0, 40);
	map_proto(&m, F, "@app.lua", 10, 8);
	map_proto(&m, G, "@lib.lua", 5, 4);
	map_hostsym(&m, H_MAIN, 0x1000, "main", "/usr/bin/luajit", 0);
	map_hostsym(&m, H_PCALL, 0x2000, "lua_pcall", "/usr/lib/libluajit.so",
		    0);
	map_hostsym(&m, H_VM, 0x3000, "(luajit interpreter)",
		    "/usr/lib/libluajit.so", FORMAT_HOST_VM);
	map_hostsym(&m, H_WRITE, 0x5000, "l_write", "/usr/lib/lua.so", 0);
	map_hostsym(&m, H_MEMCPY, 0x6000, "memcpy", "/lib/libc.so.6", 0);
	map_hostsym(&m, H_ANON, 0x7000, "", "/usr/lib/libfoo.so", 0);
	map_hostsym(&m, H_VM2, 0x3100, "(luajit interpreter)",
		    "/usr/lib/libluajit.so", FORMAT_HOST_VM | 6);
	map_trace(&m, T1, 1, F, 12, 0);
	map_trace(&m, T2, 2, F, 14, 1);
	lblog_mapping(l, &m);
	map_begin(&m, VM);
	map_cfunc(&m, WRITE, 0x5000, "io.write", "/usr/lib/lua.so");
	map_ffunc(&m, REP, 3, "string.rep");
	lblog_mapping(l, &m);
}

/* The standard samples (innermost frames first, as in the log). */
static const uint64_t L_F[] = {F, 12, MAINCHUNK, 30};
static const uint64_t L_WRITE[] = {WRITE, 0, F, 13, MAINCHUNK, 30};
static const uint64_t L_G[] = {G, 7, F, 12, MAINCHUNK, 30};
static const uint64_t L_REP[] = {REP, 0, F, 12, MAINCHUNK, 30};
static const uint64_t L_OUTERC[] = {F, 11, WRITE, 0};
static const uint64_t H_BASE[] = {H_VM, H_PCALL, H_MAIN};
static const uint64_t H_CALLC[] = {H_MEMCPY, H_WRITE, H_VM, H_PCALL, H_MAIN};
static const uint64_t H_FOO[] = {H_ANON, H_VM, H_PCALL, H_MAIN};
static const uint64_t H_OUTERC[] = {H_VM, H_WRITE, H_MAIN};
static const uint64_t H_NOVM[] = {H_MEMCPY, H_ANON};
static const uint64_t H_REENTER[] = {H_VM, H_ANON, H_VM2, H_PCALL, H_MAIN};

/* Test thread. The standard samples, 10 of them, 2 dropped. */
static void std_samples(struct lblog *l)
{
	struct lbsam s;
	sam_begin(&s);
	/* 0: interpreting F at line 12, called from the main chunk. */
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, L_F, 3, H_BASE);
	/* 1: in io.write (a CFUNC and, at its address, a HOSTSYM), memcpy. */
	sam_add(&s, 1, FORMAT_STATE_C, 0, 3, L_WRITE, 5, H_CALLC);
	/* 2: running trace 1; no host frames in compiled code. */
	sam_add(&s, 1, FORMAT_STATE_TRACE, T1, 2, L_F, 0, NULL);
	/* 3: idle, no frames at all. */
	sam_add(&s, 1, FORMAT_STATE_IDLE, 0, 0, NULL, 0, NULL);
	/* 4: GC with an unreadable Lua stack. */
	sam_add(&s, 1, FORMAT_STATE_GC, 0, 0, NULL, 3, H_BASE);
	/* 5: G at line 7. */
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 3, L_G, 3, H_BASE);
	/* 6: string.rep calling into an unnamed symbol of libfoo.so. */
	sam_add(&s, 1, FORMAT_STATE_C, 0, 3, L_REP, 4, H_FOO);
	/* 7: a C function (io.write) outermost, called from main. */
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, L_OUTERC, 3, H_OUTERC);
	/* 8: C code called from trace 1 (an FFI call): the host stack stops
	** at the compiled code, no interpreter frame. */
	sam_add(&s, 1, FORMAT_STATE_TRACE, T1, 2, L_F, 2, H_NOVM);
	/* 9: two interpreter frames with host code between them. */
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, L_F, 5, H_REENTER);
	lblog_samples(l, VM, 100, 4242, 2, &s);
}

/* Test thread. Trace events: one start and stop, three aborts, a flush. */
static void std_trace_events(struct lblog *l)
{
	struct lbev e;
	ev_begin(&e);
	ev_trace_start(&e, 1, F, 12, 1);
	ev_trace_stop(&e, T1, 1);
	ev_trace_abort(&e, 2, F, 14, 7, "NYI: bytecode 72", 1);
	ev_trace_abort(&e, 2, F, 14, 7, "NYI: bytecode 72", 1);
	ev_trace_abort(&e, 3, G, 6, 3, "loop unroll limit reached", 1);
	ev_trace_flush(&e, 1);
	lblog_events(l, VM, 0, &e);
}

/* -- Decoding ------------------------------------------------------------------------ */

Test(samples, records_decode_field_by_field)
{
	struct lblog l;
	struct sseen s;
	char err[512];
	begin(&l);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), 0, "%s", err);
	const struct decode_obj *t = NULL, *h = NULL, *v = NULL;
	int hi = 0;
	for (int i = 0; i < s.nobj; i++) {
		if (s.objs[i].id == T2)
			t = &s.objs[i];
		if (s.objs[i].id == H_VM)
			h = &s.objs[hi = i];
		if (s.objs[i].id == H_ANON)
			v = &s.objs[i];
	}
	cr_assert_not_null(t);
	cr_assert_eq(t->kind, FORMAT_REC_TRACE);
	cr_assert_eq(t->u.trace.traceno, 2);
	cr_assert_eq(t->u.trace.line, 14);
	cr_assert_eq(t->u.trace.root, 1);
	cr_assert_not_null(h);
	cr_assert_eq(h->kind, FORMAT_REC_HOSTSYM);
	cr_assert_eq(h->u.host.address, 0x3000);
	cr_assert_str_eq(s.name[hi], "(luajit interpreter)");
	cr_assert_str_eq(s.object[hi], "/usr/lib/libluajit.so");
	cr_assert_eq(h->u.host.flags, FORMAT_HOST_VM);
	cr_assert_eq(v->u.host.name.len, 0);
	cr_assert_str_eq(format_rec_name(FORMAT_REC_TRACE), "TRACE");
	cr_assert_str_eq(format_rec_name(FORMAT_REC_HOSTSYM), "HOSTSYM");
	lblog_free(&l);
}

Test(samples, samples_decode_field_by_field)
{
	struct lblog l;
	struct sseen s;
	char err[512];
	uint64_t total, dropped;
	begin(&l);
	std_samples(&l);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, &total, &dropped), 0, "%s",
		     err);
	cr_assert_eq(s.warnings, 0, "%s", s.warn);
	cr_assert_eq(s.nhdr, 1);
	cr_assert_eq(s.ndone, 1);
	const struct decode_samples *h = &s.hdr[0];
	cr_assert_eq(h->vm, VM);
	cr_assert_eq(h->count, 10);
	cr_assert_eq(h->base_ts, 100);
	cr_assert_eq(h->thread, 4242);
	cr_assert_eq(h->signals, 12);
	cr_assert_eq(h->dropped, 2);
	cr_assert_eq(h->clock.counter, 2000, "the builder's next CLOCK");
	cr_assert_eq(total, 10);
	cr_assert_eq(dropped, 2);

	cr_assert_eq(s.ns, 10);
	for (int i = 0; i < 10; i++) {
		cr_assert_eq(s.s[i].ts, 101 + (uint64_t)i, "sample %d", i);
		cr_assert_eq(s.s[i].index, (uint64_t)i);
		cr_assert_eq(s.s[i].vm, VM);
	}
	const struct ssample *x = &s.s[1];
	cr_assert_eq(x->state, FORMAT_STATE_C);
	cr_assert_eq(x->trace, 0);
	cr_assert_eq(x->nlua, 3);
	cr_assert_eq(x->lua[0], WRITE);
	cr_assert_eq(x->line[0], 0);
	cr_assert_eq(x->lua[1], F);
	cr_assert_eq(x->line[1], 13);
	cr_assert_eq(x->lua[2], MAINCHUNK);
	cr_assert_eq(x->line[2], 30);
	cr_assert_eq(x->nhost, 5);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(x->host[i], H_CALLC[i]);
	x = &s.s[2];
	cr_assert_eq(x->state, FORMAT_STATE_TRACE);
	cr_assert_eq(x->trace, T1);
	cr_assert_eq(x->nlua, 2);
	cr_assert_eq(x->nhost, 0);
	x = &s.s[3];
	cr_assert_eq(x->state, FORMAT_STATE_IDLE);
	cr_assert_eq(x->nlua, 0);
	cr_assert_eq(x->nhost, 0);
	cr_assert_eq(s.s[4].state, FORMAT_STATE_GC);
	cr_assert_eq(s.s[4].nlua, 0);
	cr_assert_eq(s.s[4].nhost, 3);
	lblog_free(&l);
}

Test(samples, trace_events_decode_field_by_field)
{
	struct lblog l;
	struct sseen s;
	char err[512];
	begin(&l);
	std_trace_events(&l);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), 0, "%s", err);
	cr_assert_eq(s.nev, 6);
	const struct decode_event *ev = s.ev;
	cr_assert_eq(ev[0].op, FORMAT_OP_VM);
	cr_assert_eq(ev[0].lo, FORMAT_VM_TRACE_START);
	cr_assert_eq(ev[0].traceno, 1);
	cr_assert_eq(ev[0].id, F);
	cr_assert_eq(ev[0].line, 12);
	cr_assert_eq(ev[0].ts, 1);
	cr_assert_eq(ev[1].lo, FORMAT_VM_TRACE_STOP);
	cr_assert_eq(ev[1].id, T1);
	cr_assert_eq(ev[2].lo, FORMAT_VM_TRACE_ABORT);
	cr_assert_eq(ev[2].traceno, 2);
	cr_assert_eq(ev[2].id, F);
	cr_assert_eq(ev[2].line, 14);
	cr_assert_eq(ev[2].reason, 7);
	cr_assert_str_eq(s.msg[2], "NYI: bytecode 72");
	cr_assert_eq(ev[4].reason, 3);
	cr_assert_eq(ev[4].id, G);
	cr_assert_str_eq(s.msg[4], "loop unroll limit reached");
	cr_assert_eq(ev[5].lo, FORMAT_VM_TRACE_FLUSH);
	cr_assert_eq(ev[5].ts, 6);
	cr_assert_str_eq(format_vm_name(FORMAT_VM_TRACE_ABORT), "TRACE_ABORT");
	lblog_free(&l);
}

/* Proto 0 (none): a trace aborted in a fast function or C function (seen
** under OpenResty's LuaJIT in tests/e2e/soak.sh). */
Test(samples, trace_abort_outside_lua_decodes)
{
	struct lblog l;
	struct sseen s;
	char err[512];
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_trace_start(&e, 5, 0, 0, 1);
	ev_trace_abort(&e, 5, 0, 0, 9, "NYI: FastFunc", 1);
	lblog_events(&l, VM, 0, &e);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), 0, "%s", err);
	cr_assert_eq(s.nev, 2);
	cr_assert_eq(s.ev[0].lo, FORMAT_VM_TRACE_START);
	cr_assert_eq(s.ev[0].id, 0);
	cr_assert_null(s.ev[0].obj);
	cr_assert_eq(s.ev[1].lo, FORMAT_VM_TRACE_ABORT);
	cr_assert_eq(s.ev[1].id, 0);
	cr_assert_null(s.ev[1].obj);
	cr_assert_eq(s.ev[1].reason, 9);
	cr_assert_str_eq(s.msg[1], "NYI: FastFunc");
	lblog_free(&l);
}

Test(samples, version_1_still_read)
{
	struct lblog l;
	struct sseen s;
	char err[512];
	struct lb p = {0};
	lblog_init(&l);
	lb_uleb(&p, 1);
	lb_uleb(&p, 8);
	lb_uleb(&p, 1);
	lb_str(&p, "x");
	lb_str(&p, "y");
	lb_str(&p, "");
	lb_uleb(&p, FORMAT_COUNTER_MONO_NS);
	lb_uleb(&p, 0);
	lb_uleb(&p, 0);
	lb_uleb(&p, 1);
	lb_uleb(&p, 1);
	lb_uleb(&p, 1);
	lblog_block(&l, FORMAT_KIND_INTRO, p.buf, p.len);
	lb_free(&p);
	l.version = 1; /* END of version 1: no stop fields */
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), 0, "%s", err);
	lblog_free(&l);
}

/* What names_record saw: PROTO names and display names by ID. */
struct pnames {
	struct fnid f;
	char name[8][64];
	char shown[8][96];
};

/* Test thread. A PROTO's name, as recorded and as fnid shows it. */
static int names_record(void *ud, struct decode_obj *o)
{
	struct pnames *pn = ud;
	struct decode_sink fs;
	fnid_sink(&pn->f, &fs);
	int rc = fs.record(fs.ud, o);
	if (o->kind == FORMAT_REC_PROTO && o->id < 8) {
		snprintf(pn->name[o->id], 64, "%s", o->u.proto.name.s);
		snprintf(pn->shown[o->id], 96, "%s",
			 pn->f.fns[o->user_idx - 1].name);
	}
	return rc;
}

/* Test thread. Decode a log of three PROTOs in version v. */
static void proto_names(uint64_t v, struct pnames *pn)
{
	struct lblog l;
	struct lbmap m;
	char err[256];
	struct reader *r;
	struct decode *d;
	struct decode_sink sink = {.ud = pn, .record = names_record};
	memset(pn, 0, sizeof *pn);
	fnid_init(&pn->f);
	lblog_init(&l);
	l.version = v;
	lblog_intro(&l, 7);
	map_begin(&m, 1);
	map_vm(&m, 1, 100, 1000, 0);
	if (v >= 4) {
		map_proto_named(&m, 2, "@x.lua", 3, 1, "a");
		map_proto_named(&m, 3, "@x.lua", 3, 1, "M:b");
		map_proto_named(&m, 4, "=[builtin]", 0, 0, "table.remove");
		map_proto_named(&m, 5, "@x.lua", 3, 1, "");
	} else {
		map_proto_v3(&m, 2, "@x.lua", 3, 1);
		map_proto_v3(&m, 3, "@x.lua", 3, 1);
	}
	lblog_mapping(&l, &m);
	lblog_end(&l);
	const char *path = lblog_write(&l);
	cr_assert_eq(reader_open(&r, path, 0, err, sizeof err), 0, "%s", err);
	cr_assert_eq(decode_new(&d, &sink), 0);
	cr_assert_eq(decode_run(r, d, err, sizeof err), 0, "%s", err);
	decode_free(d);
	reader_close(r);
	unlink(path);
	lblog_free(&l);
}

Test(samples, proto_names_by_version)
{
	struct pnames pn;
	proto_names(4, &pn);
	cr_assert_str_eq(pn.name[2], "a");
	cr_assert_str_eq(pn.shown[2], "a (x.lua:3)");
	cr_assert_str_eq(pn.shown[3], "M:b (x.lua:3)");
	cr_assert_str_eq(pn.shown[4], "table.remove");
	cr_assert_str_eq(pn.shown[5], "x.lua:3");
	/* One chunk:line, three names: three functions. */
	cr_assert_eq(pn.f.n, 4);
	fnid_free(&pn.f);
	/* Version 3: PROTO without a name, one function at x.lua:3. */
	proto_names(3, &pn);
	cr_assert_str_eq(pn.name[2], "");
	cr_assert_str_eq(pn.shown[2], "x.lua:3");
	cr_assert_str_eq(pn.shown[3], "x.lua:3");
	cr_assert_eq(pn.f.n, 1);
	fnid_free(&pn.f);
}

/* -- Corruption -------------------------------------------------------------------- */

/* Test thread. The standard mapping, then one SAMPLES block of the samples
** in s with the given header, then END; decode it. A version 5 log: these
** corrupt the inline frames (a version 6 sample names a STACK, below). */
static int bad_samples(struct lbsam *s, uint64_t vm, uint64_t count,
		       uint64_t signals, uint64_t dropped, size_t cut,
		       char *err, size_t errlen)
{
	struct lblog l;
	struct sseen seen;
	begin_version = 5;
	begin(&l);
	begin_version = 0;
	s->p.len -= cut;
	lblog_samples_raw(&l, vm, count, 0, 1, signals, dropped, s);
	lblog_end(&l);
	int rc = run(&l, &seen, err, errlen, NULL, NULL);
	lblog_free(&l);
	return rc;
}

/* Test thread. One sample with these fields is corrupt, and the message
** names the SAMPLES block (block 3) and says want. */
static void one_bad(unsigned state, uint64_t trace, uint64_t nlua,
		    const uint64_t *lua, uint64_t nhost, const uint64_t *host,
		    const char *want)
{
	struct lbsam s;
	char err[512];
	sam_begin(&s);
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, L_F, 3, H_BASE);
	sam_add(&s, 1, state, trace, nlua, lua, nhost, host);
	int rc = bad_samples(&s, VM, 2, 2, 0, 0, err, sizeof err);
	cr_assert_eq(rc, -EBADMSG, "%s: rc %d (%s)", want, rc, err);
	cr_assert_not_null(strstr(err, "block 3 (SAMPLES) at offset"), "%s",
			   err);
	cr_assert_not_null(strstr(err, "sample 1 of 2"), "%s", err);
	cr_assert_not_null(strstr(err, want), "want '%s' in: %s", want, err);
}

Test(samples, bad_ids_are_corrupt)
{
	static const uint64_t undef_lua[] = {99, 1};
	static const uint64_t host_as_lua[] = {H_MAIN, 1};
	static const uint64_t undef_host[] = {H_VM, 98};
	static const uint64_t proto_as_host[] = {F};
	one_bad(FORMAT_STATE_TRACE, 97, 2, L_F, 0, NULL,
		"trace ID used before definition (ID 97)");
	one_bad(FORMAT_STATE_TRACE, F, 2, L_F, 0, NULL,
		"trace is not a TRACE (ID 3)");
	one_bad(FORMAT_STATE_INTERP, T1, 2, L_F, 0, NULL,
		"a trace ID outside state 7 (trace) (ID 20)");
	one_bad(FORMAT_STATE_INTERP, 0, 1, undef_lua, 0, NULL,
		"Lua frame func ID used before definition (ID 99)");
	one_bad(FORMAT_STATE_INTERP, 0, 1, host_as_lua, 0, NULL,
		"Lua frame func is not a function (ID 10)");
	one_bad(FORMAT_STATE_INTERP, 0, 0, NULL, 2, undef_host,
		"host frame sym ID used before definition (ID 98)");
	one_bad(FORMAT_STATE_INTERP, 0, 0, NULL, 1, proto_as_host,
		"host frame sym is not a HOSTSYM (ID 3)");
	one_bad(FORMAT_STATE__MAX, 0, 0, NULL, 0, NULL,
		"(state 10) at payload offset");
	one_bad(200, 0, 0, NULL, 0, NULL, "unknown state");
}

Test(samples, absurd_frame_counts_are_corrupt)
{
	struct lbsam s;
	char err[512];
	/* nlua 4097: refused before reading the frames. */
	sam_begin(&s);
	lb_uleb(&s.p, 1);
	lb_u8(&s.p, FORMAT_STATE_INTERP);
	lb_uleb(&s.p, 0);
	lb_uleb(&s.p, DECODE_MAX_FRAMES + 1);
	for (int i = 0; i < 10; i++)
		lb_uleb(&s.p, 0);
	cr_assert_eq(bad_samples(&s, VM, 1, 1, 0, 0, err, sizeof err),
		     -EBADMSG);
	cr_assert_not_null(
	    strstr(err, "more Lua frames than the reader accepts (4097, at "
			"most 4096)"),
	    "%s", err);
	/* nhost 2^40. */
	sam_begin(&s);
	lb_uleb(&s.p, 1);
	lb_u8(&s.p, FORMAT_STATE_INTERP);
	lb_uleb(&s.p, 0);
	lb_uleb(&s.p, 0);
	lb_uleb(&s.p, 1ull << 40);
	for (int i = 0; i < 10; i++)
		lb_uleb(&s.p, 0);
	cr_assert_eq(bad_samples(&s, VM, 1, 1, 0, 0, err, sizeof err),
		     -EBADMSG);
	cr_assert_not_null(strstr(err, "more host frames"), "%s", err);
	/* 4096 frames of each are fine. */
	uint64_t *lua = malloc(2 * DECODE_MAX_FRAMES * sizeof *lua);
	uint64_t *host = malloc(DECODE_MAX_FRAMES * sizeof *host);
	for (unsigned i = 0; i < DECODE_MAX_FRAMES; i++) {
		lua[2 * i] = F;
		lua[2 * i + 1] = 12;
		host[i] = H_PCALL;
	}
	sam_begin(&s);
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, DECODE_MAX_FRAMES, lua,
		DECODE_MAX_FRAMES, host);
	cr_assert_eq(bad_samples(&s, VM, 1, 1, 0, 0, err, sizeof err), 0, "%s",
		     err);
	free(lua);
	free(host);
}

Test(samples, header_and_length_errors_are_corrupt)
{
	struct lbsam s;
	char err[512];
	/* signals != count + dropped. */
	sam_begin(&s);
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, L_F, 3, H_BASE);
	cr_assert_eq(bad_samples(&s, VM, 1, 5, 3, 0, err, sizeof err),
		     -EBADMSG);
	cr_assert_not_null(strstr(err, "block 3 (SAMPLES)"), "%s", err);
	cr_assert_not_null(strstr(err, "signals 5 is not count 1 + dropped 3"),
			   "%s", err);
	/* count + dropped overflowing 64 bits. */
	sam_begin(&s);
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, L_F, 3, H_BASE);
	cr_assert_eq(bad_samples(&s, VM, 1, 0, UINT64_MAX, 0, err, sizeof err),
		     -EBADMSG);
	cr_assert_not_null(strstr(err, "is not count 1 + dropped"), "%s", err);
	/* Samples of an undefined VM, and of a PROTO. */
	sam_begin(&s);
	cr_assert_eq(bad_samples(&s, 77, 0, 0, 0, 0, err, sizeof err),
		     -EBADMSG);
	cr_assert_not_null(strstr(err, "samples of VM ID 77, which is not "
				       "defined before use"),
			   "%s", err);
	sam_begin(&s);
	cr_assert_eq(bad_samples(&s, F, 0, 0, 0, 0, err, sizeof err), -EBADMSG);
	cr_assert_not_null(strstr(err, "which is not a VM"), "%s", err);
	/* Frames past the payload end: the last host frame cut. */
	sam_begin(&s);
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, L_F, 3, H_BASE);
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, L_F, 3, H_BASE);
	cr_assert_eq(bad_samples(&s, VM, 2, 2, 0, 1, err, sizeof err),
		     -EBADMSG);
	cr_assert_not_null(strstr(err, "block 3 (SAMPLES)"), "%s", err);
	cr_assert_not_null(strstr(err, "sample 1 of 2"), "%s", err);
	cr_assert_not_null(strstr(err, "field 'host frame sym' runs past the "
				       "payload end"),
			   "%s", err);
	/* ... a Lua frame's line cut. */
	sam_begin(&s);
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, L_F, 0, NULL);
	cr_assert_eq(bad_samples(&s, VM, 1, 1, 0, 2, err, sizeof err),
		     -EBADMSG);
	cr_assert_not_null(strstr(err, "field 'Lua frame line' runs past"),
			   "%s", err);
	/* count says more samples than there are, or fewer. */
	sam_begin(&s);
	for (int i = 0; i < 4; i++)
		sam_add(&s, 1, FORMAT_STATE_IDLE, 0, 0, NULL, 0, NULL);
	cr_assert_eq(bad_samples(&s, VM, 5, 5, 0, 0, err, sizeof err),
		     -EBADMSG);
	cr_assert_not_null(strstr(err, "count 5 samples cannot fit"), "%s",
			   err);
	sam_begin(&s);
	for (int i = 0; i < 4; i++)
		sam_add(&s, 1, FORMAT_STATE_IDLE, 0, 0, NULL, 0, NULL);
	cr_assert_eq(bad_samples(&s, VM, 3, 3, 0, 0, err, sizeof err),
		     -EBADMSG);
	cr_assert_not_null(strstr(err, "5 bytes left after the 3 samples"),
			   "%s", err);
}

Test(samples, bad_trace_records_and_events_are_corrupt)
{
	struct lblog l;
	struct lbmap m;
	struct lbev e;
	struct sseen s;
	char err[512];
	/* A TRACE whose proto is not defined, then one whose proto is a VM. */
	for (int k = 0; k < 2; k++) {
		lblog_init(&l);
		lblog_intro(&l, 1);
		map_begin(&m, VM);
		map_vm(&m, VM, 1, 0, 0);
		map_trace(&m, 5, 1, k ? VM : 9, 1, 0);
		lblog_mapping(&l, &m);
		cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL),
			     -EBADMSG);
		cr_assert_not_null(strstr(err, "block 1 (MAPPING)"), "%s", err);
		cr_assert_not_null(strstr(err, k ? "proto ID 1 is not a PROTO"
						 : "proto ID 9 is not defined"),
				   "%s", err);
		lblog_free(&l);
	}
	/* TRACE_STOP naming a PROTO; TRACE_START with an undefined proto;
	** TRACE_ABORT whose message runs past the payload; sub-kind 9, the
	** first unknown one (6 to 8 are zones and marks since version 9). */
	for (int k = 0; k < 4; k++) {
		begin(&l);
		ev_begin(&e);
		ev_trace_flush(&e, 1);
		if (k == 0)
			ev_trace_stop(&e, F, 1);
		else if (k == 1)
			ev_trace_start(&e, 4, 55, 1, 1);
		else if (k == 2) {
			ev_trace_abort(&e, 4, F, 1, 2, "too long", 1);
			e.p.len -= 4;
		} else {
			lb_u8(&e.p, FORMAT_OP_VM << FORMAT_OP_SHIFT | 9);
			lb_uleb(&e.p, 0);
			e.count++;
		}
		lblog_events(&l, VM, 0, &e);
		cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), -EBADMSG,
			     "case %d", k);
		cr_assert_not_null(strstr(err, "block 3 (EVENTS)"), "%s", err);
		const char *want[] = {
		    "event 1 of 2 (VM TRACE_STOP) at payload offset",
		    "proto ID used before definition (ID 55)",
		    "field 'message' runs past",
		    "unknown VM event",
		};
		cr_assert_not_null(strstr(err, want[k]), "case %d: %s", k, err);
		lblog_free(&l);
	}
}

Test(samples, end_samples_dropped_checked)
{
	struct lblog l;
	struct sseen s;
	char err[512];
	/* Fewer than the SAMPLES blocks hold: corrupt. */
	begin(&l);
	std_samples(&l);
	l.samples_dropped = 1;
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), -EBADMSG);
	cr_assert_not_null(strstr(err, "block 5 (END)"), "%s", err);
	cr_assert_not_null(strstr(err, "END counts 1 samples dropped, the "
				       "SAMPLES blocks count 2"),
			   "%s", err);
	lblog_free(&l);
	/* More: dropped after the last block; a warning. */
	begin(&l);
	std_samples(&l);
	l.samples_dropped = 5;
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), 0, "%s", err);
	cr_assert_eq(s.warnings, 1);
	cr_assert_not_null(strstr(s.warn, "END counts 5 samples dropped, the "
					  "SAMPLES blocks 2"),
			   "%s", s.warn);
	lblog_free(&l);
}

Test(samples, state_names_follow_the_document)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/doc/format.txt", SRCDIR);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	char line[256];
	int in = 0, n = 0;
	while (fgets(line, sizeof line, f)) {
		if (!strncmp(line, "Sample states", 13)) {
			in = 1;
			continue;
		}
		if (!in)
			continue;
		unsigned v;
		char name[32];
		if (sscanf(line, "  %u %31s", &v, name) != 2)
			break;
		cr_assert_str_eq(format_state_name(v), name, "state %u", v);
		n++;
	}
	fclose(f);
	cr_assert_eq(n, FORMAT_STATE__MAX);
	cr_assert_str_eq(format_state_name(FORMAT_STATE__MAX), "?");
}

/* -- Processors --------------------------------------------------------------------- */

/* Test thread. Finish l with END, load it into a profile (flags). */
static struct profile *load(struct lblog *l, unsigned flags)
{
	struct profile *p;
	char err[512];
	lblog_end(l);
	const char *path = lblog_write(l);
	int rc = profile_load(path, flags, &p, err, sizeof err);
	cr_assert_eq(rc, 0, "rc %d: %s", rc, err);
	unlink(path);
	lblog_free(l);
	return p;
}

/* Test thread. The function named name (fails when missing). */
static const struct profile_fn *fn(const struct profile *p, const char *name)
{
	for (size_t i = 0; i < p->nfn; i++)
		if (!strcmp(p->fns[i].name, name))
			return &p->fns[i];
	cr_assert_fail("no function %s", name);
	return NULL;
}

/* Test thread. Check a function's kind and sample counts. */
static void expect(const struct profile *p, const char *name, unsigned kind,
		   uint64_t self, uint64_t total)
{
	const struct profile_fn *f = fn(p, name);
	cr_assert_eq(f->kind, kind, "%s kind %s", name,
		     fnid_kind_name(f->kind));
	cr_assert_eq(f->samples, self, "%s self %llu, want %llu", name,
		     (unsigned long long)f->samples, (unsigned long long)self);
	cr_assert_eq(f->samples_total, total, "%s total %llu, want %llu", name,
		     (unsigned long long)f->samples_total,
		     (unsigned long long)total);
}

/* Test thread. Samples at file:line (0 when none). */
static uint64_t at_line(const struct profile *p, const char *file,
			uint64_t line)
{
	for (size_t i = 0; i < p->smp.nline; i++)
		if (p->smp.lines[i].line == line &&
		    !strcmp(p->fns[p->smp.lines[i].fn].file, file))
			return p->smp.lines[i].samples;
	return 0;
}

Test(samples, counts_by_function_line_and_state)
{
	struct lblog l;
	begin(&l);
	std_samples(&l);
	struct profile *p = load(&l, 0);
	cr_assert_eq(p->smp.samples, 10);
	cr_assert_eq(p->smp.samples_dropped, 2);
	cr_assert_eq(p->smp.signals, 12);
	cr_assert_eq(p->smp.state[FORMAT_STATE_INTERP], 4);
	cr_assert_eq(p->smp.state[FORMAT_STATE_C], 2);
	cr_assert_eq(p->smp.state[FORMAT_STATE_TRACE], 2);
	cr_assert_eq(p->smp.state[FORMAT_STATE_IDLE], 1);
	cr_assert_eq(p->smp.state[FORMAT_STATE_GC], 1);
	cr_assert_eq(p->vms[0].samples, 10);

	/* Self: the innermost Lua frame (samples 0, 2, 8, 9 in F; 7 too). */
	expect(p, "app.lua:10", FNID_LUA, 5, 8);
	expect(p, "main chunk (app.lua)", FNID_LUA, 0, 7);
	expect(p, "lib.lua:5", FNID_LUA, 1, 1);
	expect(p, "string.rep", FNID_FAST, 1, 1);
	/* io.write: innermost in sample 1; its HOSTSYM (l_write, same
	** address) is the same function. Outermost in 7, below the first
	** Lua function: the host's way in (as luajit's pmain), which totals
	** leave out as the Lua-first view does. */
	expect(p, "io.write", FNID_C, 1, 1);
	for (size_t i = 0; i < p->nfn; i++)
		cr_assert_str_neq(p->fns[i].name, "l_write");
	/* Host functions: total wherever the Lua-first view has them (C code
	** a Lua function reaches, not the host's way into the VM: main and
	** lua_pcall have none); self only in a sample without Lua frames (4:
	** the interpreter stands for the unreadable Lua stack). */
	expect(p, "main", FNID_HOST, 0, 0);
	expect(p, "lua_pcall", FNID_HOST, 0, 0);
	expect(p, "memcpy", FNID_HOST, 0, 2);
	expect(p, "[libfoo.so]", FNID_HOST, 0, 2);
	/* Sample 4, in the collector without a Lua frame, is charged to
	** what LuaJIT was doing, as the Lua-first view ends it: (gc). */
	expect(p, "(luajit interpreter)", FNID_HOST, 0, 0);
	expect(p, "(gc)", FNID_INTERNAL, 1, 1);
	cr_assert_str_eq(fn(p, "[libfoo.so]")->file, "/usr/lib/libfoo.so");

	/* By line: the innermost PROTO frame (F under io.write at 13, under
	** string.rep at 12). */
	cr_assert_eq(at_line(p, "app.lua", 12), 5);
	cr_assert_eq(at_line(p, "app.lua", 13), 1);
	cr_assert_eq(at_line(p, "app.lua", 11), 1);
	cr_assert_eq(at_line(p, "lib.lua", 7), 1);
	cr_assert_eq(p->smp.nline, 4);
	uint32_t *ix = samples_sorted_lines(&p->smp);
	cr_assert_eq(p->smp.lines[ix[0]].line, 12);
	free(ix);

	/* samples_lua, the report's self (profile_new without
	** PROFILE_BUILTINS): the samples in string.rep and io.write, both
	** called from F, count for F, as jit.profile counts them; F's via is
	** the first of the two builtins seen. Builtins keep none. */
	const struct profile_fn *f = fn(p, "app.lua:10");
	cr_assert_eq(f->samples_lua, 7);
	cr_assert_eq(f->samples_self, 7);
	cr_assert_eq(f->via_samples, 1);
	cr_assert(!strcmp(p->fns[f->via].name, "string.rep") ||
		  !strcmp(p->fns[f->via].name, "io.write"));
	cr_assert_eq(fn(p, "string.rep")->samples_lua, 0);
	cr_assert_eq(fn(p, "io.write")->samples_self, 0);
	cr_assert_eq(fn(p, "lib.lua:5")->samples_lua, 1);
	cr_assert_eq(fn(p, "lib.lua:5")->via_samples, 0);
	cr_assert_eq(fn(p, "(gc)")->samples_lua, 1);
	uint64_t own = 0, lua = 0;
	for (size_t i = 0; i < p->nfn; i++) {
		own += p->fns[i].samples;
		lua += p->fns[i].samples_lua;
	}
	cr_assert_eq(lua, own, "every sample once: %llu, %llu",
		     (unsigned long long)lua, (unsigned long long)own);

	size_t n;
	ix = profile_sorted_fns_samples(p, &n);
	cr_assert_eq(n, 8); /* not main and lua_pcall */
	cr_assert_str_eq(p->fns[ix[0]].name, "app.lua:10");
	free(ix);
	profile_free(p);
}

/* Test thread. Three samples, the last two with intervals merged into
** them (version 11): 3, then 300 (a two-byte uleb). */
static void missed_samples(struct lblog *l)
{
	struct lbsam s;
	sam_begin(&s);
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, L_F, 3, H_BASE);
	s.missed = 3;
	sam_add(&s, 1, FORMAT_STATE_TRACE, T1, 2, L_F, 0, NULL);
	s.missed = 300;
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 3, L_G, 3, H_BASE);
	lblog_samples(l, VM, 100, 4242, 0, &s);
}

Test(samples, missed_intervals_decode_and_count)
{
	struct lblog l;
	struct sseen s;
	char err[512];
	begin(&l);
	missed_samples(&l);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), 0, "%s", err);
	cr_assert_eq(s.ns, 3);
	cr_assert_eq(s.s[0].missed, 0);
	cr_assert_eq(s.s[1].missed, 3);
	cr_assert_eq(s.s[2].missed, 300);
	/* The flag is no part of the state; the fields after it still read. */
	cr_assert_eq(s.s[1].state, FORMAT_STATE_TRACE);
	cr_assert_eq(s.s[1].trace, T1);
	cr_assert_eq(s.s[2].state, FORMAT_STATE_INTERP);
	cr_assert_eq(s.s[2].nlua, 3);
	cr_assert_eq(s.s[2].lua[0], G);
	lblog_free(&l);

	begin(&l);
	missed_samples(&l);
	struct profile *p = load(&l, 0);
	cr_assert_eq(p->smp.samples, 3);
	cr_assert_eq(p->smp.intervals, 3 + 3 + 300);
	cr_assert_eq(samples_vm_intervals(&p->smp, VM), 306);
	cr_assert_eq(samples_vm_count(&p->smp, VM), 3);
	profile_free(p);
}

Test(samples, missed_flag_before_version_11_is_corrupt)
{
	struct lblog l;
	struct sseen s;
	char err[512];
	begin_version = 10;
	begin(&l);
	begin_version = 0;
	missed_samples(&l);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), -EBADMSG);
	cr_assert_not_null(strstr(err, "sample 1 of 3"), "%s", err);
	cr_assert_not_null(strstr(err, "unknown state"), "%s", err);
	lblog_free(&l);

	/* Version 11: a count past 32 bits is no overrun the writer keeps. */
	struct lbsam sm;
	begin(&l);
	sam_begin(&sm);
	sm.missed = 1ull << 33;
	sam_add(&sm, 1, FORMAT_STATE_INTERP, 0, 2, L_F, 3, H_BASE);
	lblog_samples(&l, VM, 100, 4242, 0, &sm);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), -EBADMSG);
	cr_assert_not_null(strstr(err, "missed intervals out of range"), "%s",
			   err);
	lblog_free(&l);
}

Test(samples, cfunc_before_hostsym_also_merges)
{
	struct lblog l;
	struct lbmap m;
	struct lbsam s;
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, VM);
	map_vm(&m, VM, 1, 0, 0);
	map_cfunc(&m, WRITE, 0x5000, "io.write", "/usr/lib/lua.so");
	map_hostsym(&m, H_VM, 0x3000, "vm", "luajit", FORMAT_HOST_VM);
	map_hostsym(&m, H_WRITE, 0x5000, "l_write", "/usr/lib/lua.so", 0);
	lblog_mapping(&l, &m);
	static const uint64_t lua[] = {WRITE, 0};
	static const uint64_t host[] = {H_WRITE, H_VM};
	sam_begin(&s);
	sam_add(&s, 1, FORMAT_STATE_C, 0, 1, lua, 2, host);
	sam_add(&s, 1, FORMAT_STATE_C, 0, 0, NULL, 1, host);
	lblog_samples(&l, VM, 0, 1, 0, &s);
	struct profile *p = load(&l, 0);
	expect(p, "io.write", FNID_C, 2, 2);
	cr_assert_eq(p->nfn, 2, "io.write and the interpreter");
	profile_free(p);
}

/* -- NAME records (version 14) ----------------------------------------------- */

/* IDs of the NAME logs (VM is the first VM). */
enum {
	VM2 = 40,
	NP = 41,  /* PROTO @app.lua:4 */
	NX1 = 42, /* CFUNC at 0x401234 of VM, "host+0x1234" */
	NX2 = 43, /* CFUNC at 0x401234 of VM2, "worker.stats" */
	NX3 = 44, /* CFUNC at 0x401234 of VM2, "host+0x1234" */
	NH = 45,  /* HOSTSYM at 0x401234, no symbol */
};

/* Test thread. n samples of vm with one Lua frame, func (at line). */
static void name_samples(struct lblog *l, uint64_t vm, uint64_t func,
			 uint64_t line, int n)
{
	const uint64_t lua[] = {func, line};
	struct lbsam s;
	sam_begin(&s);
	for (int i = 0; i < n; i++)
		sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 1, lua, 0, NULL);
	lblog_samples(l, vm, 100, 1, 0, &s);
}

/* Test thread. A NAME of id in a MAPPING block of vm. */
static void name_block(struct lblog *l, uint64_t vm, uint64_t id,
		       const char *name)
{
	struct lbmap m;
	map_begin(&m, vm);
	map_name(&m, id, name);
	lblog_mapping(l, &m);
}

/* Test thread. The functions named name. */
static int named(const struct profile *p, const char *name)
{
	int n = 0;
	for (size_t i = 0; i < p->nfn; i++)
		n += !strcmp(p->fns[i].name, name);
	return n;
}

/* Test thread. A log with VM and PROTO NP @app.lua:4 (named pname), two
** calls of it (10 ticks each) and three samples in it at line 5. */
static void proto_log(struct lblog *l, const char *pname)
{
	struct lbmap m;
	struct lbev e;
	lblog_init(l);
	lblog_intro(l, 1);
	map_begin(&m, VM);
	map_vm(&m, VM, 1, 0, 0);
	map_proto_named(&m, NP, "@app.lua", 4, 3, pname);
	lblog_mapping(l, &m);
	ev_begin(&e);
	ev_enter(&e, 1, NP, 1);
	ev_exit(&e, 1, 10);
	ev_enter(&e, 1, NP, 1);
	ev_exit(&e, 1, 10);
	lblog_events(l, VM, 0, &e);
	name_samples(l, VM, NP, 5, 3);
}

Test(samples, name_after_proto_renames_it_with_its_counts)
{
	struct lblog l;
	proto_log(&l, "");
	name_block(&l, VM, NP, "fib");
	struct profile *p = load(&l, 0);
	const struct profile_fn *f = fn(p, "fib (app.lua:4)");
	cr_assert_eq(f->kind, FNID_LUA);
	cr_assert_str_eq(f->file, "app.lua");
	cr_assert_eq(f->line, 4);
	cr_assert_eq(f->calls, 2);
	cr_assert_eq(f->total, 20);
	cr_assert_eq(f->self, 20);
	cr_assert_eq(f->samples, 3);
	cr_assert_eq(f->samples_total, 3);
	cr_assert_eq(named(p, "app.lua:4"), 0, "the old name is gone");
	cr_assert_eq(at_line(p, "app.lua", 5), 3);
	profile_free(p);
}

/* sysbench's shape: each thread's VM loads the same script. VM 1 wrote
** its PROTO before the name was known (a NAME follows), VM 2 after. One
** function of both VMs' samples, whichever order the records come in. */
Test(samples, unnamed_and_named_protos_of_two_vms_are_one_function)
{
	enum { NP2 = 46 };
	for (int order = 0; order < 2; order++) {
		struct lblog l;
		struct lbmap m;
		proto_log(&l, "");
		if (order == 1)
			name_block(&l, VM, NP, "fib");
		map_begin(&m, VM2);
		map_vm(&m, VM2, 2, 0, 0);
		map_proto_named(&m, NP2, "@app.lua", 4, 3, "fib");
		lblog_mapping(&l, &m);
		name_samples(&l, VM2, NP2, 6, 4);
		if (order == 0)
			name_block(&l, VM, NP, "fib");
		name_samples(&l, VM, NP, 5, 2);
		struct profile *p = load(&l, 0);
		const struct profile_fn *f = fn(p, "fib (app.lua:4)");
		cr_assert_eq(named(p, "fib (app.lua:4)"), 1, "order %d", order);
		cr_assert_eq(named(p, "app.lua:4"), 0, "order %d", order);
		cr_assert_eq(f->samples, 3 + 4 + 2, "order %d", order);
		cr_assert_eq(f->calls, 2);
		profile_free(p);
	}
}

Test(samples, empty_name_keeps_the_name_there)
{
	struct lblog l;
	proto_log(&l, "fib");
	name_block(&l, VM, NP, "");
	struct profile *p = load(&l, 0);
	cr_assert_eq(fn(p, "fib (app.lua:4)")->calls, 2);
	cr_assert_eq(named(p, "app.lua:4"), 0);
	profile_free(p);
	/* A later NAME replaces an earlier one. */
	proto_log(&l, "");
	name_block(&l, VM, NP, "fib");
	name_block(&l, VM, NP, "M.fib");
	p = load(&l, 0);
	cr_assert_eq(fn(p, "M.fib (app.lua:4)")->samples, 3);
	cr_assert_eq(named(p, "fib (app.lua:4)"), 0);
	profile_free(p);
}

/* Test thread. VM with CFUNC NX1 "host+0x1234" and HOSTSYM NH at its
** address; VM2. */
static void cfunc_log(struct lblog *l)
{
	struct lbmap m;
	lblog_init(l);
	lblog_intro(l, 1);
	map_begin(&m, VM);
	map_vm(&m, VM, 1, 0, 0);
	map_cfunc(&m, NX1, 0x401234, "host+0x1234", "/usr/bin/host");
	map_hostsym(&m, NH, 0x401234, "", "/usr/bin/host", 0);
	lblog_mapping(l, &m);
	map_begin(&m, VM2);
	map_vm(&m, VM2, 2, 0, 0);
	lblog_mapping(l, &m);
}

/* Test thread. A CFUNC record in a MAPPING block of vm. */
static void cfunc_block(struct lblog *l, uint64_t vm, uint64_t id,
			const char *name)
{
	struct lbmap m;
	map_begin(&m, vm);
	map_cfunc(&m, id, 0x401234, name, "/usr/bin/host");
	lblog_mapping(l, &m);
}

Test(samples, name_points_cfunc_at_another_vms_named_one)
{
	struct lblog l;
	cfunc_log(&l);
	name_samples(&l, VM, NX1, 0, 1);
	/* VM2 knew the name when it met the function. */
	cfunc_block(&l, VM2, NX2, "worker.stats");
	name_samples(&l, VM2, NX2, 0, 2);
	name_block(&l, VM, NX1, "worker.stats");
	name_samples(&l, VM, NX1, 0, 3);
	/* A sample in its code without a Lua frame: the HOSTSYM at its
	** address is the function too. */
	struct lbsam s;
	const uint64_t host[] = {NH};
	sam_begin(&s);
	sam_add(&s, 1, FORMAT_STATE_C, 0, 0, NULL, 1, host);
	lblog_samples(&l, VM, 100, 1, 0, &s);
	struct profile *p = load(&l, 0);
	cr_assert_eq(named(p, "worker.stats"), 1);
	const struct profile_fn *f = fn(p, "worker.stats");
	cr_assert_eq(f->kind, FNID_C);
	cr_assert_str_eq(f->file, "/usr/bin/host");
	cr_assert_eq(f->samples, 2 + 3 + 1,
		     "VM2's, VM's after the NAME, "
		     "and the host frame's");
	/* The sample before the NAME stays where it was counted. */
	cr_assert_eq(fn(p, "host+0x1234")->samples, 1);
	profile_free(p);
}

Test(samples, name_renames_cfunc_in_place_and_later_records_join_it)
{
	struct lblog l;
	cfunc_log(&l);
	name_samples(&l, VM, NX1, 0, 1);
	name_block(&l, VM, NX1, "worker.stats");
	name_samples(&l, VM, NX1, 0, 3);
	/* VM2 met it after the NAME: with the name, and (NX3) before it
	** knew the name itself. */
	cfunc_block(&l, VM2, NX2, "worker.stats");
	cfunc_block(&l, VM2, NX3, "host+0x1234");
	name_samples(&l, VM2, NX2, 0, 2);
	name_samples(&l, VM2, NX3, 0, 4);
	struct profile *p = load(&l, 0);
	cr_assert_eq(named(p, "worker.stats"), 1);
	cr_assert_eq(fn(p, "worker.stats")->samples, 1 + 3 + 2 + 4);
	cr_assert_eq(named(p, "host+0x1234"), 0);
	profile_free(p);
}

Test(samples, traces_aborts_and_flushes)
{
	struct lblog l;
	begin(&l);
	std_trace_events(&l);
	std_samples(&l);
	struct lbsam s;
	sam_begin(&s);
	for (int i = 0; i < 3; i++)
		sam_add(&s, 1, FORMAT_STATE_TRACE, T2, 2, L_F, 0, NULL);
	sam_add(&s, 1, FORMAT_STATE_TRACE, 0, 2, L_F, 0, NULL);
	lblog_samples(&l, VM, 200, 1, 0, &s);
	struct profile *p = load(&l, 0);
	cr_assert_eq(p->smp.ntrace, 2);
	cr_assert_eq(p->smp.trace_starts, 1);
	cr_assert_eq(p->smp.trace_stops, 1);
	cr_assert_eq(p->smp.trace_aborts, 3);
	cr_assert_eq(p->smp.trace_flushes, 1);
	uint32_t *ix = samples_sorted_traces(&p->smp);
	const struct samples_trace *t = &p->smp.traces[ix[0]];
	cr_assert_eq(t->traceno, 2);
	cr_assert_eq(t->samples, 3);
	cr_assert_eq(t->root, 1);
	cr_assert_eq(t->line, 14);
	cr_assert_str_eq(p->fns[t->fn].file, "app.lua");
	cr_assert_eq(t->stopped, 0);
	t = &p->smp.traces[ix[1]];
	cr_assert_eq(t->traceno, 1);
	cr_assert_eq(t->samples, 2);
	cr_assert_eq(t->stopped, 1);
	free(ix);
	cr_assert_eq(p->smp.nabort, 2);
	ix = samples_sorted_aborts(&p->smp);
	cr_assert_eq(p->smp.aborts[ix[0]].count, 2);
	cr_assert_eq(p->smp.aborts[ix[0]].reason, 7);
	cr_assert_str_eq(p->smp.aborts[ix[0]].message, "NYI: bytecode 72");
	cr_assert_eq(p->smp.aborts[ix[1]].count, 1);
	cr_assert_str_eq(p->smp.aborts[ix[1]].message,
			 "loop unroll limit reached");
	free(ix);
	cr_assert_eq(p->smp.state[FORMAT_STATE_TRACE], 6);
	profile_free(p);
}

Test(samples, dropped_only_in_end_counted)
{
	struct lblog l;
	begin(&l);
	std_samples(&l);
	l.samples_dropped = 7; /* 5 more than the blocks say */
	struct profile *p = load(&l, 0);
	cr_assert_eq(p->smp.samples_dropped, 7);
	cr_assert_eq(p->smp.signals, 17);
	profile_free(p);
}

/* -- Merged stacks -------------------------------------------------------------------- */

/* Test thread. The stacks of p in view, one "a;b;c N" per sample-tree leaf,
** joined with newlines, in node order. */
static char *stacks(const struct profile *p, unsigned view, unsigned flags)
{
	struct samples_frame *fr = malloc(SAMPLES_STACK_MAX * sizeof *fr);
	char *out = calloc(1, 1 << 16);
	size_t len = 0;
	for (uint32_t n = 1; n < p->smp.nnode; n++) {
		if (!p->smp.nodes[n].samples)
			continue;
		size_t nf = samples_stack(&p->smp, n, view, flags, fr);
		for (size_t i = 0; i < nf; i++) {
			char name[256];
			samples_frame_name(&p->smp, &fr[i], name, sizeof name);
			len += (size_t)snprintf(out + len, (1 << 16) - len,
						"%s%s", i ? ";" : "", name);
		}
		len += (size_t)snprintf(
		    out + len, (1 << 16) - len, " %llu\n",
		    (unsigned long long)p->smp.nodes[n].samples);
	}
	free(fr);
	return out;
}

/* Test thread. have holds the line want (whole). */
static void has_line(const char *have, const char *want)
{
	size_t n = strlen(want);
	for (const char *s = have; (s = strstr(s, want)); s++)
		if ((s == have || s[-1] == '\n') && s[n] == '\n')
			return;
	cr_assert_fail("no line '%s' in:\n%s", want, have);
}

Test(samples, merged_stacks)
{
	struct lblog l;
	begin(&l);
	std_samples(&l);
	struct profile *p = load(&l, 0);
	char *s = stacks(p, SAMPLES_VIEW_MERGED, 0);
	/* Host frames outside the interpreter, then Lua, outermost first. */
	has_line(s, "main;lua_pcall;main chunk (app.lua);app.lua:10 1");
	/* io.write once (CFUNC and HOSTSYM), then the C code it calls. */
	has_line(
	    s,
	    "main;lua_pcall;main chunk (app.lua);app.lua:10;io.write;memcpy 1");
	/* The trace on top of its Lua frames. */
	has_line(s, "main chunk (app.lua);app.lua:10;trace 1 1");
	has_line(s, "(idle) 1");
	/* No Lua frames: the interpreter stands for them. */
	has_line(s, "main;lua_pcall;(luajit interpreter) 1");
	has_line(s,
		 "main;lua_pcall;main chunk (app.lua);app.lua:10;lib.lua:5 1");
	has_line(s, "main;lua_pcall;main chunk (app.lua);app.lua:10;string.rep;"
		    "[libfoo.so] 1");
	/* The C function outermost: the host frame outside is the same. */
	has_line(s, "main;io.write;app.lua:10 1");
	/* No interpreter frame: C code called from compiled code, on top. */
	has_line(
	    s, "main chunk (app.lua);app.lua:10;trace 1;[libfoo.so];memcpy 1");
	/* Host code between two interpreter frames is left out. */
	has_line(s, "main;lua_pcall;main chunk (app.lua);app.lua:10 1");
	cr_assert_null(strstr(s, "l_write"), "%s", s);
	free(s);

	s = stacks(p, SAMPLES_VIEW_MERGED, SAMPLES_ST_NOTRACE);
	has_line(s, "main chunk (app.lua);app.lua:10 1");
	has_line(s, "main chunk (app.lua);app.lua:10;[libfoo.so];memcpy 1");
	cr_assert_null(strstr(s, "trace"), "%s", s);
	free(s);

	s = stacks(p, SAMPLES_VIEW_MERGED, SAMPLES_ST_LINES);
	has_line(s, "main;lua_pcall;app.lua:30;app.lua:12 1");
	has_line(s, "main;lua_pcall;app.lua:30;app.lua:13;io.write;memcpy 1");
	has_line(s, "app.lua:30;app.lua:12;trace 1 1");
	has_line(s, "main;lua_pcall;app.lua:30;app.lua:12;lib.lua:7 1");
	free(s);

	s = stacks(p, SAMPLES_VIEW_LUA, 0);
	has_line(s, "main chunk (app.lua);app.lua:10 1");
	has_line(s, "main chunk (app.lua);app.lua:10;io.write 1");
	has_line(s, "main chunk (app.lua);app.lua:10;trace 1 1");
	has_line(s, "(gc) 1");
	has_line(s, "(idle) 1");
	has_line(s, "io.write;app.lua:10 1");
	cr_assert_null(strstr(s, "main;"), "%s", s);
	free(s);

	s = stacks(p, SAMPLES_VIEW_HOST, 0);
	has_line(s, "main;lua_pcall;(luajit interpreter) 1");
	has_line(s, "main;lua_pcall;(luajit interpreter);io.write;memcpy 1");
	has_line(s, "(trace) 1");
	has_line(s, "main;io.write;(luajit interpreter) 1");
	has_line(s, "[libfoo.so];memcpy 1");
	has_line(s, "main;lua_pcall;(luajit interpreter);[libfoo.so];"
		    "(luajit interpreter) 1");
	cr_assert_null(strstr(s, "app.lua"), "%s", s);
	free(s);
	profile_free(p);
}

Test(samples, lua_first_stacks)
{
	struct lblog l;
	begin(&l);
	std_samples(&l);
	struct profile *p = load(&l, 0);
	char *s = stacks(p, SAMPLES_VIEW_LUA_FIRST, 0);
	/* From the main chunk: no way in, no trace frame. */
	has_line(s, "main chunk (app.lua);app.lua:10 1");
	/* After a C function, the C code it reaches outside LuaJIT (io.write's
	** own frame is the function itself). */
	has_line(s, "main chunk (app.lua);app.lua:10;io.write;memcpy 1");
	has_line(s, "main chunk (app.lua);app.lua:10;string.rep;[libfoo.so] 1");
	has_line(s, "main chunk (app.lua);app.lua:10;lib.lua:5 1");
	has_line(s, "(idle) 1");
	/* The GC without Lua frames: what the VM was doing. */
	has_line(s, "(gc) 1");
	/* A C function below the first Lua function is the host's way in. */
	has_line(s, "app.lua:10 1");
	/* C code called from compiled code (not LuaJIT's): kept. */
	has_line(s, "main chunk (app.lua);app.lua:10;[libfoo.so];memcpy 1");
	cr_assert_null(strstr(s, "main;"), "%s", s);
	cr_assert_null(strstr(s, "trace"), "%s", s);
	cr_assert_null(strstr(s, "l_write"), "%s", s);
	cr_assert_null(strstr(s, "interpreter"), "%s", s);
	free(s);
	s = stacks(p, SAMPLES_VIEW_LUA_FIRST, SAMPLES_ST_LINES);
	has_line(s, "app.lua:30;app.lua:13;io.write;memcpy 1");
	has_line(s, "app.lua:30;app.lua:12;lib.lua:7 1");
	free(s);
	profile_free(p);

	/* As luajit runs a script: pmain, a C function, below the main
	** chunk; luajit's own code unnamed, in the executable and in
	** libluajit. */
	enum { PMAIN = 30, H_START = 31, H_LJ = 32, H_LJLIB = 33 };
	struct lbmap m;
	struct lbsam sm;
	begin(&l);
	map_begin(&m, VM);
	map_hostsym(&m, H_START, 0x800, "_start", "/usr/bin/luajit", 0);
	map_hostsym(&m, H_LJ, 0x900, "", "/usr/bin/luajit", 0);
	map_hostsym(&m, H_LJLIB, 0x4000, "",
		    "/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2", 0);
	map_cfunc(&m, PMAIN, 0x9000, "luajit+0x9000", "/usr/bin/luajit");
	lblog_mapping(&l, &m);
	static const uint64_t lua[] = {F, 12, MAINCHUNK, 30, PMAIN, 0};
	static const uint64_t lua_c[] = {WRITE,	    0,	F,     13,
					 MAINCHUNK, 30, PMAIN, 0};
	static const uint64_t h_interp[] = {H_LJ, H_LJLIB, H_VM,   H_PCALL,
					    H_LJ, H_VM2,   H_MAIN, H_START};
	static const uint64_t h_gc[] = {H_LJ, H_ANON, H_LJ};
	static const uint64_t h_c[] = {H_LJLIB, H_WRITE, H_VM,	 H_PCALL,
				       H_VM2,	H_MAIN,	 H_START};
	static const uint64_t h_trace[] = {H_LJLIB, H_MEMCPY, H_LJ};
	sam_begin(&sm);
	sam_add(&sm, 1, FORMAT_STATE_INTERP, 0, 3, lua, 8, h_interp);
	sam_add(&sm, 1, FORMAT_STATE_TRACE, T1, 3, lua, 0, NULL);
	sam_add(&sm, 1, FORMAT_STATE_GC | FORMAT_STATE_TRACED, T1, 3, lua, 3,
		h_gc);
	sam_add(&sm, 1, FORMAT_STATE_ASM, 0, 3, lua, 7, h_c);
	sam_add(&sm, 1, FORMAT_STATE_C, 0, 4, lua_c, 7, h_c);
	sam_add(&sm, 1, FORMAT_STATE_TRACE, T1, 3, lua, 3, h_trace);
	lblog_samples(&l, VM, 100, 4242, 0, &sm);
	p = load(&l, 0);
	s = stacks(p, SAMPLES_VIEW_LUA_FIRST, 0);
	/* A run of unnamed VM frames is one frame, named by the state. */
	has_line(s, "main chunk (app.lua);app.lua:10;(interpreter) 1");
	has_line(s, "main chunk (app.lua);app.lua:10 1");
	/* The collector (called from the trace), the compiler: whatever
	** runs inside. */
	has_line(s, "main chunk (app.lua);app.lua:10;(gc) 1");
	has_line(s, "main chunk (app.lua);app.lua:10;(jit compiler) 1");
	/* ... and none of LuaJIT's code (libluajit's, l_write is io.write). */
	has_line(s, "main chunk (app.lua);app.lua:10;io.write 1");
	has_line(s,
		 "main chunk (app.lua);app.lua:10;(luajit);memcpy;(luajit) 1");
	cr_assert_null(strstr(s, "luajit+0x"), "%s", s);
	cr_assert_null(strstr(s, "_start"), "%s", s);
	free(s);
	/* --host keeps them all. */
	s = stacks(p, SAMPLES_VIEW_MERGED, 0);
	has_line(s, "_start;main;luajit+0x9000;main chunk (app.lua);app.lua:10;"
		    "[libluajit-5.1.so.2];[luajit] 1");
	has_line(s, "luajit+0x9000;main chunk (app.lua);app.lua:10;trace 1 1");
	free(s);
	/* The trace is there for labels: three samples ran trace 1. */
	int traced = 0;
	for (uint32_t n = 1; n < p->smp.nnode; n++) {
		int64_t t = samples_node_trace(&p->smp, n);
		if (p->smp.nodes[n].samples && t >= 0) {
			cr_assert_eq(p->smp.traces[t].traceno, 1);
			traced += (int)p->smp.nodes[n].samples;
		}
	}
	cr_assert_eq(traced, 3);
	profile_free(p);
}

Test(samples, stack_tree_shares_prefixes)
{
	struct lblog l;
	struct lbsam s;
	begin(&l);
	sam_begin(&s);
	for (int i = 0; i < 100; i++)
		sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, L_F, 3, H_BASE);
	for (int i = 0; i < 50; i++)
		sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 3, L_G, 3, H_BASE);
	lblog_samples(&l, VM, 0, 1, 0, &s);
	struct profile *p = load(&l, 0);
	/* root; main, lua_pcall (outside the interpreter); the main chunk;
	** F at 12; then the interpreter and the state under F (100) and
	** under G at 7 (50). */
	cr_assert_eq(p->smp.nnode, 10);
	expect(p, "app.lua:10", FNID_LUA, 100, 150);
	expect(p, "lib.lua:5", FNID_LUA, 50, 50);
	profile_free(p);
}

/* -- Robustness ------------------------------------------------------------------------ */

/* Test thread. Deterministic pseudo-random numbers. */
static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

Test(samples, mutated_sample_logs_never_crash)
{
	struct lblog l;
	begin(&l);
	std_trace_events(&l);
	std_samples(&l);
	std_samples(&l);
	lblog_end(&l);
	struct samples_frame *fr = malloc(SAMPLES_STACK_MAX * sizeof *fr);
	for (int it = 0; it < 2000; it++) {
		struct lblog t = l;
		t.file.buf = malloc(l.file.len);
		memcpy(t.file.buf, l.file.buf, l.file.len);
		int flips = 1 + (int)(rnd() % 4);
		for (int k = 0; k < flips; k++) {
			size_t at = FORMAT_MAGIC_LEN +
				    rnd() % (l.file.len - FORMAT_MAGIC_LEN);
			t.file.buf[at] = (uint8_t)rnd();
		}
		/* Checksums made right: the decoder sees the damage. */
		for (size_t o = FORMAT_MAGIC_LEN; o < l.file.len;) {
			struct blocks_header h;
			blocks_header_parse(l.file.buf + o, &h);
			blocks_header_pack(t.file.buf + o, h.kind,
					   t.file.buf + o + FORMAT_HEADER_LEN,
					   h.length);
			o += FORMAT_HEADER_LEN + h.length;
		}
		const char *path = lblog_write(&t);
		struct profile *p;
		char err[512];
		int rc = profile_load(path, 0, &p, err, sizeof err);
		cr_assert(rc == 0 || rc == -ENODATA || rc == -EBADMSG ||
			      rc == -ENOTSUP,
			  "iteration %d: rc %d (%s)", it, rc, err);
		for (uint32_t n = 1; n < p->smp.nnode; n++)
			for (unsigned v = 0; v < 3; v++)
				cr_assert_leq(
				    samples_stack(&p->smp, n, v, v, fr),
				    SAMPLES_STACK_MAX);
		profile_free(p);
		unlink(path);
		free(t.file.buf);
	}
	free(fr);
	lblog_free(&l);
}

/* Test thread. A log's INTRO and the start of its MAPPING: VM, the main
** chunk and F (the trace tests add their trace and what it inlines). */
static void trace_head(struct lblog *l, struct lbmap *m)
{
	lblog_init(l);
	lblog_intro(l, 7);
	map_begin(m, VM);
	map_vm(m, VM, 100, 1000, 0);
	map_proto(m, MAINCHUNK, "@app.lua", 0, 40);
	map_proto(m, F, "@app.lua", 10, 8);
}

/* A sample in a trace takes its innermost frames from the trace's snapshot
** at or before its offset (pcofs - 1), in place of the line-0 frame read
** from memory; without an offset the frames stay as read. */
Test(samples, trace_snapshots_give_inlined_frames)
{
	static const uint64_t snaps[] = {0, 1, F, 11, 40, 2, F, 12, G, 6};
	static const uint64_t mem[] = {F, 0, MAINCHUNK, 30};
	struct lblog l;
	struct lbmap m;
	struct lbsam sm;
	struct sseen s;
	char err[256];
	trace_head(&l, &m);
	map_proto(&m, G, "@lib.lua", 5, 4);
	map_trace_snaps(&m, T1, 1, F, 11, 0, 2, snaps);
	lblog_mapping(&l, &m);
	sam_begin(&sm);
	sam_add_pc(&sm, 1, FORMAT_STATE_TRACE, T1, 1 + 50, 2, mem, 0, NULL);
	sam_add_pc(&sm, 1, FORMAT_STATE_TRACE, T1, 1 + 40, 2, mem, 0, NULL);
	sam_add_pc(&sm, 1, FORMAT_STATE_TRACE, T1, 1 + 39, 2, mem, 0, NULL);
	sam_add_pc(&sm, 1, FORMAT_STATE_TRACE, T1, 0, 2, mem, 0, NULL);
	lblog_samples(&l, VM, 100, 100, 0, &sm);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), 0, "%s", err);
	cr_assert_eq(s.ns, 4);
	for (int i = 0; i < 2; i++) { /* snapshot 1: G:6 inside F:12 */
		cr_assert_eq(s.s[i].nlua, 3, "sample %d", i);
		cr_assert_eq(s.s[i].lua[0], G);
		cr_assert_eq(s.s[i].line[0], 6);
		cr_assert_eq(s.s[i].lua[1], F);
		cr_assert_eq(s.s[i].line[1], 12);
		cr_assert_eq(s.s[i].lua[2], MAINCHUNK);
		cr_assert_eq(s.s[i].line[2], 30);
	}
	cr_assert_eq(s.s[2].nlua, 2); /* snapshot 0: F:11 */
	cr_assert_eq(s.s[2].lua[0], F);
	cr_assert_eq(s.s[2].line[0], 11);
	cr_assert_eq(s.s[2].lua[1], MAINCHUNK);
	cr_assert_eq(s.s[3].nlua, 2); /* no offset: as read */
	cr_assert_eq(s.s[3].lua[0], F);
	cr_assert_eq(s.s[3].line[0], 0);
	lblog_free(&l);
}

/* A sample in a trace without an offset (in the VM's code the trace
** called: an exit's handler) reads the function from memory, its line
** unknown. A function written on one line (numline 0, a comparator) has
** no other line: the sample is on it. Others stay unknown (0, shown ?). */
Test(samples, one_line_function_has_its_line_without_an_offset)
{
	enum { ONE = 7 }; /* @app.lua:30, one line */
	static const uint64_t snaps[] = {0, 1, F, 11};
	static const uint64_t one[] = {ONE, 0, F, 0, MAINCHUNK, 0};
	struct lblog l;
	struct lbmap m;
	struct lbsam sm;
	struct sseen s;
	char err[256];
	trace_head(&l, &m);
	map_proto(&m, ONE, "@app.lua", 30, 0);
	map_trace_snaps(&m, T1, 1, F, 11, 0, 1, snaps);
	lblog_mapping(&l, &m);
	sam_begin(&sm);
	sam_add_pc(&sm, 1, FORMAT_STATE_TRACE, T1, 0, 3, one, 0, NULL);
	lblog_samples(&l, VM, 100, 100, 0, &sm);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), 0, "%s", err);
	cr_assert_eq(s.ns, 1);
	cr_assert_eq(s.s[0].nlua, 3);
	cr_assert_eq(s.s[0].lua[0], ONE);
	cr_assert_eq(s.s[0].line[0], 30);
	cr_assert_eq(s.s[0].lua[1], F); /* eight lines: not known */
	cr_assert_eq(s.s[0].line[1], 0);
	cr_assert_eq(s.s[0].lua[2], MAINCHUNK); /* firstline 0: not known */
	cr_assert_eq(s.s[0].line[2], 0);
	lblog_free(&l);
}

/* Bug: a side trace that returns from the function it started in (F)
** into its caller (the main chunk) has snapshots whose outermost frame is
** the caller; the sample read F (line 0) then the main chunk from memory,
** and only F was replaced: main;main. The frames down to the snapshot's
** outermost function go. */
Test(samples, trace_returned_below_its_start)
{
	static const uint64_t snaps[] = {0, 1, F, 11, 40, 1, MAINCHUNK, 35};
	static const uint64_t mem[] = {F, 0, MAINCHUNK, 30};
	struct lblog l;
	struct lbmap m;
	struct lbsam sm;
	struct sseen s;
	char err[256];
	trace_head(&l, &m);
	map_trace_snaps(&m, T1, 1, F, 11, 0, 2, snaps);
	lblog_mapping(&l, &m);
	sam_begin(&sm);
	sam_add_pc(&sm, 1, FORMAT_STATE_TRACE, T1, 1 + 45, 2, mem, 0, NULL);
	sam_add_pc(&sm, 1, FORMAT_STATE_TRACE, T1, 1 + 5, 2, mem, 0, NULL);
	lblog_samples(&l, VM, 100, 100, 0, &sm);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), 0, "%s", err);
	cr_assert_eq(s.ns, 2);
	cr_assert_eq(s.s[0].nlua, 1, "%u frames", s.s[0].nlua);
	cr_assert_eq(s.s[0].lua[0], MAINCHUNK);
	cr_assert_eq(s.s[0].line[0], 35);
	cr_assert_eq(s.s[1].nlua, 2); /* in F: F:11 replaces F */
	cr_assert_eq(s.s[1].lua[0], F);
	cr_assert_eq(s.s[1].line[0], 11);
	cr_assert_eq(s.s[1].lua[1], MAINCHUNK);
	lblog_free(&l);
}

/* Bug: a trace recorded with F returning into the main chunk (snapshot
** 1) also runs when another caller, G, called F: the return's guard exits
** there. A sample in F before that guard whose next check is past it
** (chkofs in snapshot 1) was charged to the main chunk, and the stack
** read G -> main chunk, an edge the program never has (luacheck's
** parse_id -> test_and_skip_token). The check's snapshot must fit the
** stack in memory; else the snapshot at the sampled offset. */
Test(samples, next_check_past_a_return_to_another_caller)
{
	static const uint64_t snaps[] = {0, 1, F, 11, 40, 1, MAINCHUNK, 35};
	static const uint64_t by_g[] = {F, 0, G, 6};
	static const uint64_t by_main[] = {F, 0, MAINCHUNK, 30};
	struct lblog l;
	struct lbmap m;
	struct lbsam sm;
	struct sseen s;
	char err[256];
	trace_head(&l, &m);
	map_proto(&m, G, "@lib.lua", 5, 4);
	map_trace_snaps(&m, T1, 1, F, 11, 0, 2, snaps);
	lblog_mapping(&l, &m);
	sam_begin(&sm);
	sm.chkofs = 1 + 45;
	sam_add_pc(&sm, 1, FORMAT_STATE_TRACE, T1, 1 + 10, 2, by_g, 0, NULL);
	sm.chkofs = 1 + 45;
	sam_add_pc(&sm, 1, FORMAT_STATE_TRACE, T1, 1 + 10, 2, by_main, 0, NULL);
	lblog_samples(&l, VM, 100, 100, 0, &sm);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), 0, "%s", err);
	cr_assert_eq(s.ns, 2);
	cr_assert_eq(s.s[0].nlua, 2, "%u frames", s.s[0].nlua); /* G's F */
	cr_assert_eq(s.s[0].lua[0], F);
	cr_assert_eq(s.s[0].line[0], 11);
	cr_assert_eq(s.s[0].lua[1], G);
	cr_assert_eq(s.s[0].line[1], 6);
	cr_assert_eq(s.s[1].nlua, 1); /* the main chunk's: the check's */
	cr_assert_eq(s.s[1].lua[0], MAINCHUNK);
	cr_assert_eq(s.s[1].line[0], 35);
	lblog_free(&l);
}

/* When neither the check's snapshot nor the one at the sampled offset
** fits the stack in memory. The trace started in G (called by F),
** returned below it into F (snapshot 1) and links to itself; snapshot 2
** has no frame, and 3 is in G again. (a) Past snapshot 2, the check round
** the loop is in G again, which F calls: F stays (LDoc's xpcall ->
** parse.lua:256 -> mt.__call lost its middle frame). (b) The collector
** called from compiled code, the same offsets: the trace was found from a
** return address that may be an older call's; memory's frames stand.
** (c) No check, in G: a call at the trace's base replaced F (a tail
** call, luacheck's parse_function -> new_inner_node): F goes. (d) A
** function ONE that the trace reached by other calls than this one's:
** the code runs at pcofs, and the check past it lies behind guards this
** call fails; the snapshot at pcofs (luajit2 on luacheck: the check's
** snapshot gave parse_subexpression -> statements.function). */
Test(samples, trace_frames_when_no_snapshot_fits)
{
	enum { ONE = 7 }; /* @app.lua:30, one line */
	static const uint64_t snaps[] = {0,  1,	 G, 6,	40, 1, F,
					 12, 60, 0, 80, 1,  G, 7};
	static const uint64_t mem[] = {F, 0, MAINCHUNK, 30};
	static const uint64_t one[] = {ONE, 0, MAINCHUNK, 30};
	static const struct {
		unsigned state;
		const uint64_t *mem;
		uint64_t pcofs, chkofs;
		uint32_t nlua;
		uint64_t fn[3], line[3];
	} want[] = {
	    {FORMAT_STATE_TRACE,
	     mem,
	     70,
	     1 + 5,
	     3,
	     {G, F, MAINCHUNK},
	     {6, 0, 30}},
	    {FORMAT_STATE_GC | FORMAT_STATE_TRACED,
	     mem,
	     70,
	     1 + 5,
	     2,
	     {F, MAINCHUNK},
	     {0, 30}},
	    {FORMAT_STATE_TRACE, mem, 10, 0, 2, {G, MAINCHUNK}, {6, 30}},
	    {FORMAT_STATE_TRACE, one, 45, 1 + 85, 2, {F, MAINCHUNK}, {12, 30}},
	};
	struct lblog l;
	struct lbmap m;
	struct lbsam sm;
	struct sseen s;
	char err[256];
	trace_head(&l, &m);
	map_proto(&m, G, "@lib.lua", 5, 4);
	map_proto(&m, ONE, "@app.lua", 30, 0);
	map_trace_snaps(&m, T1, 1, G, 6, 0, 4, snaps);
	lblog_mapping(&l, &m);
	sam_begin(&sm);
	size_t nw = sizeof want / sizeof want[0];
	for (size_t i = 0; i < nw; i++) {
		sm.chkofs = want[i].chkofs;
		sam_add_pc(&sm, 1, want[i].state, T1, 1 + want[i].pcofs, 2,
			   want[i].mem, 0, NULL);
	}
	lblog_samples(&l, VM, 100, 100, 0, &sm);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), 0, "%s", err);
	cr_assert_eq(s.ns, (int)nw);
	for (size_t i = 0; i < nw; i++) {
		cr_assert_eq(s.s[i].nlua, want[i].nlua, "sample %zu: %u frames",
			     i, s.s[i].nlua);
		for (uint32_t k = 0; k < want[i].nlua; k++) {
			cr_assert_eq(s.s[i].lua[k], want[i].fn[k],
				     "sample %zu frame %u", i, k);
			cr_assert_eq(s.s[i].line[k], want[i].line[k],
				     "sample %zu frame %u", i, k);
		}
	}
	lblog_free(&l);
}

/* Version 14: a sample in a trace says which profile check its code
** stops at next (chkofs), and takes its frames from the snapshot holding
** that check, as LuaJIT's profiler charges it; without one (0), from the
** snapshot at its offset. inl.lua's shape: F inlines G, and G's snapshot
** covers F's own code after G returns (no snapshot before the next
** check): the check's snapshot is F's. The collector called from a trace
** (flag 0x40) reads the same. */
Test(samples, trace_samples_go_to_the_next_check)
{
	/* Snapshots: 0 at 0 (F:11), 1 at 40 (G:6 in F:12), 2 at 80 (F:13). */
	static const uint64_t snaps[] = {0,  1, F, 11, 40, 2, F,
					 12, G, 6, 80, 1,  F, 13};
	static const uint64_t mem[] = {F, 0, MAINCHUNK, 30};
	static const struct {
		unsigned state;
		uint64_t pcofs, chkofs, fn, line;
	} want[] = {
	    {FORMAT_STATE_TRACE, 60, 0, G, 6},	      /* no check: at pcofs */
	    {FORMAT_STATE_TRACE, 60, 1 + 10, F, 11},  /* check in 0 */
	    {FORMAT_STATE_TRACE, 10, 1 + 85, F, 13},  /* check in 2 */
	    {FORMAT_STATE_TRACE, 10, 1 + 200, F, 13}, /* the end: the last */
	    {FORMAT_STATE_GC | FORMAT_STATE_TRACED, 60, 1 + 10, F, 11},
	    {FORMAT_STATE_GC | FORMAT_STATE_TRACED, 10, 1 + 45, G, 6},
	};
	struct lblog l;
	struct lbmap m;
	struct lbsam sm;
	struct sseen s;
	char err[256];
	trace_head(&l, &m);
	map_proto(&m, G, "@lib.lua", 5, 4);
	map_trace_snaps(&m, T1, 1, F, 11, 0, 3, snaps);
	lblog_mapping(&l, &m);
	sam_begin(&sm);
	size_t nw = sizeof want / sizeof want[0];
	for (size_t i = 0; i < nw; i++) {
		sm.chkofs = want[i].chkofs;
		sam_add_pc(&sm, 1, want[i].state, T1, 1 + want[i].pcofs, 2, mem,
			   0, NULL);
	}
	lblog_samples(&l, VM, 100, 100, 0, &sm);
	lblog_end(&l);
	cr_assert_eq(run(&l, &s, err, sizeof err, NULL, NULL), 0, "%s", err);
	cr_assert_eq(s.ns, (int)nw);
	for (size_t i = 0; i < nw; i++) {
		cr_assert_eq(s.s[i].state,
			     want[i].state & ~(unsigned)FORMAT_STATE_TRACED,
			     "sample %zu", i);
		cr_assert_eq(s.s[i].trace, T1, "sample %zu", i);
		cr_assert_eq(s.s[i].lua[0], want[i].fn, "sample %zu", i);
		cr_assert_eq(s.s[i].line[0], want[i].line, "sample %zu", i);
		cr_assert_eq(s.s[i].lua[s.s[i].nlua - 1], MAINCHUNK);
	}
	lblog_free(&l);
}
