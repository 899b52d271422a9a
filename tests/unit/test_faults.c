/*
** Unit tests: the out-of-memory rollbacks of a mapper pass
** (src/maps/mapper.c), a flush (src/logger/flush.c) and a sample drain
** (src/stat/sample_helper.c). The test is linked with
** -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=strdup:
** ljlog's objects come from its convenience libraries, linked statically,
** so their calls reach the wrappers below (LuaJIT, a shared library with
** its own allocator, and Criterion do not). Each sweep makes the Nth
** allocation of the call under test fail, for every N until the call
** makes no more, then checks that the call rolled back (its documented
** result, its output as it was), that the next call succeeds and its blocks
** decode whole, and that every block allocated was freed.
*/
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logger/buf.h"
#include "logger/flush.h"
#include "lualib.h"
#include "maps/mapper.h"
#include "reallog.h"
#include "stat/clock.h"
#include "stat/sample_int.h"

/* -- The allocator, wrapped ---------------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);

static long left = -1; /* allocations that succeed before one fails;
			** -1: none fails */
static int sticky;     /* after the first failure, every one fails */
static int fired;      /* an allocation failed since fault_arm */
static long seen;      /* allocations since fault_arm */
static long live;      /* blocks the wrappers handed out, not freed */

/* Test thread. 1 when this allocation is to fail. */
static int fault_now(void)
{
	if (left < 0)
		return 0;
	seen++;
	if (fired && sticky)
		return 1;
	if (fired || left-- > 0)
		return 0;
	fired = 1;
	return 1;
}

/* Any thread. malloc, failing when told. */
void *__wrap_malloc(size_t n)
{
	void *p = fault_now() ? NULL : __real_malloc(n);
	live += p != NULL;
	return p;
}

/* Any thread. calloc, failing when told. */
void *__wrap_calloc(size_t n, size_t size)
{
	void *p = fault_now() ? NULL : __real_calloc(n, size);
	live += p != NULL;
	return p;
}

/* Any thread. realloc, failing when told (p is then left alone). */
void *__wrap_realloc(void *p, size_t n)
{
	void *q = fault_now() ? NULL : __real_realloc(p, n);
	live += q && !p;
	return q;
}

/* Any thread. free. */
void __wrap_free(void *p)
{
	live -= p != NULL;
	__real_free(p);
}

/* Any thread. strdup through the wrapped malloc. */
char *__wrap_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = __wrap_malloc(n);
	return d ? memcpy(d, s, n) : NULL;
}

/* Test thread. Make the allocation after n more fail (and with
** every_one, all after it too). */
static void fault_arm(long n, int every_one)
{
	fired = 0;
	seen = 0;
	sticky = every_one;
	left = n;
}

/* Test thread. Stop failing; 1 when an allocation failed. */
static int fault_disarm(void)
{
	left = -1;
	return fired;
}

/* Allocations a sweep tries at most (a call makes far fewer). */
#define SWEEP_MAX 4000

/* -- A VM with one object of each kind the mapper maps ---------------------- */

struct vm {
	lua_State *L;
	GCproto *chunk; /* a chunk with named children */
	GCtrace *T;	/* a trace of its loop */
	lua_State *co;
	uintptr_t ff; /* math.abs's key */
};

/* Test thread. A C function no table names. */
static int lonely_cfn(lua_State *L)
{
	(void)L;
	return 0;
}

/* Test thread. Make the VM and its objects. */
static void vm_init(struct vm *v)
{
	static const char code[] = "local M = {}\n"
				   "function M.run() end\n"
				   "local function helper(x) return x + 1 end\n"
				   "local s = 0\n"
				   "for i = 1, 2000 do s = helper(s) end\n"
				   "return M\n";
	memset(v, 0, sizeof *v);
	v->L = luaL_newstate();
	cr_assert_not_null(v->L);
	luaL_openlibs(v->L);
	lua_State *L = v->L;
	cr_assert_eq(luaL_loadbuffer(L, code, strlen(code), "@faults.lua"), 0);
	v->chunk = funcproto((GCfunc *)(uintptr_t)lua_topointer(L, -1));
	lua_pushvalue(L, -1);
	luaL_ref(L, LUA_REGISTRYINDEX);
	cr_assert_eq(lua_pcall(L, 0, 1, 0), 0);
	lua_pop(L, 1);
	jit_State *J = G2J(G(L));
	for (MSize i = 1; i < J->sizetrace && !v->T; i++)
		if (gcref(J->trace[i]))
			v->T = gco2trace(gcref(J->trace[i]));
	cr_assert_not_null(v->T, "the loop was compiled");
	v->co = lua_newthread(L);
	luaL_ref(L, LUA_REGISTRYINDEX);
	lua_getglobal(L, "math");
	lua_getfield(L, -1, "abs");
	v->ff =
	    ((GCfunc *)(uintptr_t)lua_topointer(L, -1))->c.ffid | MAPPER_FF_ASM;
	lua_pop(L, 2);
}

/* Test thread. A mapper for v's VM with its names, and one pass before
** (the FFUNC's ID is older than the passes under test). */
static void mapper_up(struct mapper *m, struct vm *v, struct lblog *log)
{
	struct wbuf b = {0};
	cr_assert_eq(mapper_init(m, G(v->L), mapper_new_id()), 0);
	mapper_lock(m);
	names_scan(&m->names, v->L);
	mapper_begin(m, &b);
	cr_assert_neq(mapper_ref(m, MAPPER_FFUNC, v->ff, 0), 0);
	cr_assert_eq(mapper_end(m), 1);
	mapper_unlock(m);
	rl_start(log, m->vm_id);
	rl_add(log, &b, 0);
	wbuf_free(&b);
}

/* Test thread. The decoder's verdict on log; every id of ids[n] is
** defined, of kind kinds[i]. */
static void log_check(struct lblog *log, const uint64_t *ids,
		      const unsigned *kinds, int n, const char *what, long at)
{
	struct decode_sink sink = {0};
	struct decode *d;
	char err[512];
	int rc = rl_decode(log, &sink, &d, err, sizeof err);
	cr_assert_eq(rc, 0, "%s, allocation %ld failing: %s", what, at, err);
	for (int i = 0; i < n; i++) {
		struct decode_obj *o = decode_lookup(d, ids[i]);
		cr_assert_not_null(o, "%s, allocation %ld: ID %d undefined",
				   what, at, i);
		cr_assert_eq(o->kind, kinds[i]);
	}
	decode_free(d);
}

/* -- A mapper pass ---------------------------------------------------------- */

#define NKEYS 6
static const unsigned pass_kinds[NKEYS] = {
    FORMAT_REC_PROTO,	  FORMAT_REC_CFUNC, FORMAT_REC_FFUNC,
    FORMAT_REC_COROUTINE, FORMAT_REC_TRACE, FORMAT_REC_STRING};

/* Test thread, m's lock held. One pass over every kind into out; the IDs
** into ids; mapper_end's result. */
static int one_pass(struct mapper *m, struct vm *v, struct wbuf *out,
		    uint64_t *ids)
{
	mapper_begin(m, out);
	ids[0] = mapper_ref(m, MAPPER_PROTO, (uintptr_t)v->chunk, 0);
	ids[1] = mapper_ref(m, MAPPER_CFUNC, (uintptr_t)lonely_cfn, 0);
	ids[2] = mapper_ref(m, MAPPER_FFUNC, v->ff, 0);
	ids[3] = mapper_ref(m, MAPPER_COROUTINE, (uintptr_t)v->co, 0);
	ids[4] = mapper_ref(m, MAPPER_TRACE, (uintptr_t)v->T, v->T->traceno);
	ids[5] = mapper_string(m, "a zone", 6);
	return mapper_end(m);
}

/* Test thread. A pass with allocation n failing: it fails whole (out as it
** was) or succeeds; names found before the next pass go out with it, and
** the next pass defines every ID it hands out. Returns 1 when allocation n
** was reached. */
static int pass_with_fault(struct vm *v, long n, int every_one)
{
	struct mapper m;
	struct lblog log;
	struct wbuf out = {0};
	uint64_t ids[NKEYS];
	long live0 = live;
	mapper_up(&m, v, &log);
	/* Bytes of an earlier block in out: a failed pass keeps them. */
	uint8_t *p = wbuf_room(&out, 5);
	memcpy(p, "keep!", 5);
	out.len = 5;

	mapper_lock(&m);
	fault_arm(n, every_one);
	int rc = one_pass(&m, v, &out, ids);
	int hit = fault_disarm();
	if (rc < 0) {
		cr_assert_eq(rc, -ENOMEM, "allocation %ld: %d", n, rc);
		cr_assert_eq(out.len, 5, "allocation %ld: out cut back", n);
		cr_assert_eq(memcmp(out.p, "keep!", 5), 0);
	} else {
		cr_assert(hit || rc == 1);
		rl_add_bytes(&log, out.p + 5, out.len - 5, 0);
	}
	/* A name found between two passes (namewalk, a parent's sweep). */
	mapper_name(&m, (uintptr_t)lonely_cfn, "late.cfn", 1);
	mapper_name(&m, (uintptr_t)v->chunk, "late.chunk", 0);
	out.len = 0;
	cr_assert_eq(one_pass(&m, v, &out, ids), 1, "allocation %ld", n);
	mapper_unlock(&m);
	rl_add(&log, &out, 0);
	for (int k = 0; k < NKEYS; k++)
		cr_assert_neq(ids[k], 0, "allocation %ld, key %d", n, k);
	log_check(&log, ids, pass_kinds, NKEYS, "pass", n);
	lblog_free(&log);
	wbuf_free(&out);
	mapper_free(&m);
	cr_assert_eq(live, live0, "allocation %ld: %ld blocks leaked", n,
		     live - live0);
	return hit;
}

/* The IDs a failed pass made are forgotten with its cut block; so must be
** what it noted of them: a name found before the next pass, for an ID the
** failed pass noted as written without one, went out as a NAME record of
** an ID no record defines, and the reader refused the log from there. */
Test(faults, mapper_pass_rolls_back_at_every_allocation)
{
	struct vm v;
	long n, most = 0;
	vm_init(&v);
	for (int every_one = 0; every_one < 2; every_one++) {
		for (n = 0; n < SWEEP_MAX && pass_with_fault(&v, n, every_one);
		     n++)
			;
		cr_assert_lt(n, SWEEP_MAX);
		most = n > most ? n : most;
		cr_log_info("%ld allocations, every_one %d", n, every_one);
	}
	cr_assert_geq(most, 5, "a pass allocates (%ld)", most);
	lua_close(v.L);
}

/* -- A flush ---------------------------------------------------------------- */

/* Raw buffer records (logger/buf.h), and the events they hold by family
** (FORMAT_FAM_*, as doc/format.txt lists them: the test's own count). */
struct words {
	uint64_t w[256];
	size_t n;
	uint64_t t;
	uint64_t events, fam[FORMAT_FAM__MAX];
};

/* Each record kind's event family, from doc/format.txt ("Event
** families"), not from buf.h's table. */
static const unsigned kind_fam[BUF_KINDS] = {
    [BUF_ENTER_LUA] = FORMAT_FAM_CALLS,	  [BUF_ENTER_C] = FORMAT_FAM_CALLS,
    [BUF_ENTER_FF] = FORMAT_FAM_CALLS,	  [BUF_EXIT] = FORMAT_FAM_CALLS,
    [BUF_ALLOC] = FORMAT_FAM_ALLOC,	  [BUF_FREE] = FORMAT_FAM_ALLOC,
    [BUF_REALLOC] = FORMAT_FAM_ALLOC,	  [BUF_GC] = FORMAT_FAM_GC,
    [BUF_SWITCH] = FORMAT_FAM_COROUTINES, [BUF_ATTACH] = FORMAT_FAM_VM,
    [BUF_DETACH] = FORMAT_FAM_VM,	  [BUF_TRACE_START] = FORMAT_FAM_JIT,
    [BUF_TRACE_STOP] = FORMAT_FAM_JIT,	  [BUF_TRACE_ABORT] = FORMAT_FAM_JIT,
    [BUF_TRACE_FLUSH] = FORMAT_FAM_JIT,	  [BUF_ZONE_PUSH] = FORMAT_FAM_ZONES,
    [BUF_ZONE_POP] = FORMAT_FAM_ZONES,	  [BUF_MARK] = FORMAT_FAM_ZONES,
};

/* Test thread. Count one event of kind in r. */
static void count(struct words *r, unsigned kind)
{
	cr_assert(kind_fam[kind] != 0, "kind %u has no family", kind);
	r->events++;
	r->fam[kind_fam[kind]]++;
	r->t += 16;
}

/* Test thread. Append a record of kind with x and payload words (up to
** REALLOC's five). */
static void rec5(struct words *r, unsigned kind, uint64_t x, uint64_t a,
		 uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
	uint64_t words[] = {
	    BUF_W0(kind, x), r->t << CLOCK_TS_SHIFT, a, b, c, d, e};
	unsigned n = buf_rec_words(words);
	cr_assert(n >= 2 && n <= 7, "kind %u: %u words", kind, n);
	memcpy(r->w + r->n, words, n * sizeof(uint64_t));
	r->n += n;
	count(r, kind);
}

/* Test thread. Append a record of kind with x and up to 3 payload words. */
static void rec(struct words *r, unsigned kind, uint64_t x, uint64_t a,
		uint64_t b, uint64_t c)
{
	rec5(r, kind, x, a, b, c, 0, 0);
}

/* Test thread. Append a MARK or ZONE_PUSH record (kind) with its text. */
static void rec_text(struct words *r, unsigned kind, const char *text)
{
	size_t len = strlen(text), tw = BUF_TEXT_WORDS(len);
	uint64_t *p = r->w + r->n;
	p[0] = BUF_W0(kind, len);
	p[1] = r->t << CLOCK_TS_SHIFT;
	p[BUF_TEXT_AT + tw - 1] = 0;
	memcpy(p + BUF_TEXT_AT, text, len);
	r->n += buf_rec_words(p);
	count(r, kind);
}

/* Test thread. A buffer's records of every kind, a trace abort (its
** message grows the encoder's room) and texts. */
static void fill(struct words *r, struct vm *v)
{
	uint64_t site = FORMAT_SITE_LUA | MAPPER_PROTO << 4 | 7u << 8;
	memset(r, 0, sizeof *r);
	r->t = 1000;
	rec(r, BUF_ATTACH, 0, 4096, 0, 0);
	rec(r, BUF_ENTER_LUA, 3, (uintptr_t)v->chunk, 0, 0);
	rec(r, BUF_ENTER_C, 5, (uintptr_t)lonely_cfn, 0, 0);
	rec(r, BUF_EXIT, 5, 0, 0, 0);
	rec(r, BUF_ENTER_FF, 4, v->ff, 0, 0);
	rec(r, BUF_ALLOC, site, (uintptr_t)v->chunk, 0x10000, 48);
	rec5(r, BUF_REALLOC, site, (uintptr_t)v->chunk, 0x10000, 48, 0x20000,
	     96);
	rec(r, BUF_FREE, 96, 0x20000, 0, 0);
	rec(r, BUF_GC, FORMAT_GC_PROPAGATE, 8192, 0, 0);
	rec(r, BUF_SWITCH, 0, (uintptr_t)v->co, 0, 0);
	rec(r, BUF_TRACE_START, 9, (uintptr_t)v->chunk, 3, 0);
	rec(r, BUF_TRACE_STOP, v->T->traceno, (uintptr_t)v->T, 0, 0);
	rec(r, BUF_TRACE_ABORT, 9, (uintptr_t)v->chunk, 3 | (uint64_t)7 << 32,
	    0);
	rec(r, BUF_TRACE_FLUSH, 0, 0, 0, 0);
	rec_text(r, BUF_ZONE_PUSH, "a zone");
	rec_text(r, BUF_MARK, "a mark");
	rec(r, BUF_ZONE_POP, 0, 0, 0, 0);
	rec(r, BUF_EXIT, 3, 0, 0, 0);
	rec(r, BUF_DETACH, 0, 2048, 0, 0);
	uint64_t sum = 0;
	for (unsigned f = 1; f < FORMAT_FAM__MAX; f++) {
		cr_assert(f == FORMAT_FAM_SAMPLE || r->fam[f],
			  "family %u: no event", f);
		sum += r->fam[f];
	}
	cr_assert_eq(sum, r->events);
}

/* Events fill() records. */
#define FILL_EVENTS 19

/* -- END's counts of what was dropped --------------------------------------- */

static void log_open(const char *path, struct mapper *m);

/* Test thread. A log file at path (made), opened by the writer with m's
** VM record: failures count what they drop into its END. */
static void counted_open(char *path, struct mapper *m)
{
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	writer_lock();
	log_open(path, m);
	writer_unlock();
}

/* The END a sink saw. */
struct end_seen {
	int seen;
	struct decode_end e;
};

/* Test thread (decoder sink). Keep the END. */
static int on_end(void *ud, const struct decode_end *e)
{
	struct end_seen *s = ud;
	s->seen = 1;
	s->e = *e;
	return 0;
}

/* Test thread. Close the log at path, read it back and check its END's
** dropped counts, field by field, against the events the test put in the
** dropped buffers (lost: NULL when none was), then remove it. */
static void counted_check(const char *path, const struct words *lost,
			  uint64_t buffers, const char *what, long at)
{
	struct writer_clock c;
	struct end_seen es = {0};
	struct decode_sink sink = {0};
	char err[512];
	clock_pair_now(&c);
	writer_lock();
	cr_assert_eq(writer_close(&c), 0);
	writer_unlock();
	sink.ud = &es;
	sink.end = on_end;
	int rc = rl_decode_file(path, &sink, err, sizeof err);
	cr_assert_eq(rc, 0, "%s, allocation %ld: %s", what, at, err);
	cr_assert(es.seen, "%s, allocation %ld: no END", what, at);
	cr_assert_eq(es.e.events_dropped, lost ? lost->events : 0,
		     "%s, allocation %ld: events_dropped %llu", what, at,
		     (unsigned long long)es.e.events_dropped);
	cr_assert_eq(es.e.buffers_dropped, lost ? buffers : 0,
		     "%s, allocation %ld: buffers_dropped %llu", what, at,
		     (unsigned long long)es.e.buffers_dropped);
	for (unsigned f = 1; f < FORMAT_FAM__MAX; f++)
		cr_assert_eq(es.e.fam_dropped[f], lost ? lost->fam[f] : 0,
			     "%s, allocation %ld: %s dropped %llu", what, at,
			     format_fam_name(f),
			     (unsigned long long)es.e.fam_dropped[f]);
	unlink(path);
}

/* Test thread. A flush with allocation n failing: a failed map pass leaves
** out as it was (the records are dropped); a failed encode leaves no
** block and the time base as it was (the MAPPING block is written, the
** events are lost); the next flush succeeds and the log decodes whole.
** Returns 1 when allocation n was reached. */
static int flush_with_fault(struct vm *v, long n, int every_one)
{
	struct mapper m;
	struct lblog log;
	struct flush_enc fe = {0};
	struct wbuf out = {0};
	struct words r;
	struct writer_clock c = {1 << 20, 5000, 6000};
	uint64_t nev = 0;
	char path[] = "/tmp/ljlog-faults-XXXXXX";
	long live0 = live;
	mapper_up(&m, v, &log);
	counted_open(path, &m);
	fill(&r, v);
	struct words lost = r; /* the records before the map pass */
	mapper_lock(&m);
	fault_arm(n, every_one);
	int nb = flush_map(&m, r.w, r.w + r.n, &out), re = -1;
	mapper_unlock(&m);
	if (nb >= 0)
		re = flush_encode(&fe, &m, r.w, r.w + r.n, &c, &nev);
	int hit = fault_disarm();
	int dropped = nb < 0 || re < 0;
	if (nb < 0) {
		cr_assert_eq(nb, -ENOMEM, "allocation %ld: %d", n, nb);
		cr_assert_eq(out.len, 0, "allocation %ld: out cut back", n);
	} else {
		rl_add(&log, &out, 0);
		if (re == 0)
			rl_add_bytes(&log, fe.block, fe.block_len, nev);
		else
			cr_assert(re == -ENOMEM && !fe.block && !fe.t_prev,
				  "allocation %ld: %d", n, re);
	}
	/* The next flush, on a new buffer's records. */
	fill(&r, v);
	out.len = 0;
	mapper_lock(&m);
	nb = flush_map(&m, r.w, r.w + r.n, &out);
	mapper_unlock(&m);
	cr_assert_geq(nb, 0, "allocation %ld", n);
	cr_assert_eq(flush_encode(&fe, &m, r.w, r.w + r.n, &c, &nev), 0);
	cr_assert_eq(nev, FILL_EVENTS);
	rl_add(&log, &out, 0);
	rl_add_bytes(&log, fe.block, fe.block_len, nev);
	log_check(&log, NULL, NULL, 0, "flush", n);
	/* A failed map pass or encode dropped the first buffer: END counts
	** its events, by family; else nothing. */
	counted_check(path, dropped ? &lost : NULL, 1, "flush", n);
	lblog_free(&log);
	wbuf_free(&out);
	flush_enc_free(&fe);
	mapper_free(&m);
	cr_assert_eq(live, live0, "allocation %ld: %ld blocks leaked", n,
		     live - live0);
	return hit;
}

Test(faults, flush_rolls_back_at_every_allocation)
{
	struct vm v;
	long n, most = 0;
	vm_init(&v);
	for (int every_one = 0; every_one < 2; every_one++) {
		for (n = 0; n < SWEEP_MAX && flush_with_fault(&v, n, every_one);
		     n++)
			;
		cr_assert_lt(n, SWEEP_MAX);
		most = n > most ? n : most;
		cr_log_info("%ld allocations, every_one %d", n, every_one);
	}
	cr_assert_geq(most, 10, "a flush allocates (%ld)", most);
	lua_close(v.L);
}

/* -- A sample drain ------------------------------------------------------------ */

/* Bytes of a ring entry with its host stack copy, as sample_start makes
** them. */
#define ENTRY_SIZE                                                             \
	((sizeof(struct sample_entry) + sizeof(struct unwind_ctx) -            \
	  UNWIND_STACK_MAX + SAMPLE_STACK + 63) &                              \
	 ~(size_t)63)
#define RING	 8 /* entries */
#define NSAMPLES 3 /* a drain's */

/* A host stack captured in a signal handler, for every entry. */
static struct unwind_ctx cap;
static uintptr_t stk_lo, stk_hi;

/* Signal handler. Capture the interrupted context. */
static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	unwind_capture(&cap, uc, stk_lo, stk_hi, SAMPLE_STACK);
}

/* Test thread. Capture this thread's stack, raising SIGUSR1 from here
** (its address range stands for the interpreter's: a HOSTSYM of its own). */
__attribute__((noinline)) static void capture_here(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	cr_assert_eq(unwind_stack_bounds(&stk_lo, &stk_hi), 0);
	raise(SIGUSR1);
	cr_assert_gt(cap.len, 0, "a stack was captured");
	/* The unwinder's table of loaded objects, made once for the
	** process: not a drain's. */
	uintptr_t ips[8];
	cr_assert_gt(unwind_ips(&cap, ips, 8), 0);
}

/* Test thread. NSAMPLES entries at the ring's head: Lua frames of each
** kind, one in the trace's code, each with the host stack. */
static void ring_fill(struct sample_vm *s, struct vm *v)
{
	for (int i = 0; i < NSAMPLES; i++) {
		struct sample_entry *e = sample_entry_at(s, s->head);
		memset(e, 0, sizeof *e);
		e->ts = clock_now();
		e->state = FORMAT_STATE_INTERP;
		e->nlua = 2;
		e->lua[0] = (struct sample_frame){
		    {(uintptr_t)v->chunk}, 3, MAPPER_PROTO};
		e->lua[1] =
		    i == 1 ? (struct sample_frame){{(uintptr_t)lonely_cfn},
						   0,
						   MAPPER_CFUNC}
			   : (struct sample_frame){{v->ff}, 0, MAPPER_FFUNC};
		if (i == 2) {
			e->state = FORMAT_STATE_TRACE;
			e->trace = (uintptr_t)v->T;
			e->traceno = v->T->traceno;
			e->pc = (uintptr_t)v->T->mcode + 4;
			e->at = e->pc;
		}
		memcpy(e->host, &cap, ENTRY_SIZE - sizeof *e);
		s->head++;
	}
}

/* Test thread. A sampler record over m with an empty ring (no timer, no
** signal: sample_drain is called by hand). */
static void sampler_up(struct sample_vm *s, struct mapper *m)
{
	memset(s, 0, sizeof *s);
	s->map = m;
	s->host = 1;
	s->tid = 7;
	s->cap = RING;
	s->entry_size = ENTRY_SIZE;
	s->ring = calloc(RING, ENTRY_SIZE);
	cr_assert_not_null(s->ring);
	cr_assert_eq(unwind_syms_new(&s->syms), 0);
	s->vm_lo = (uintptr_t)capture_here;
	s->vm_hi = s->vm_lo + 4096;
}

/* Test thread. Free what sampler_up and the drains allocated. */
static void sampler_down(struct sample_vm *s)
{
	free(s->ring);
	hmap_free(&s->hostmap);
	stacks_free(&s->stacks);
	unwind_syms_free(s->syms);
	wbuf_free(&s->out);
	wbuf_free(&s->enc);
	wbuf_free(&s->mapout);
}

/* Test thread, the writer lock held. Open the log at path with INTRO and
** the VM record of m. */
static void log_open(const char *path, struct mapper *m)
{
	struct writer_intro in = {
	    "LuaJIT test", "sample", CLOCK_KIND, CLOCK_TS_SHIFT, 0,
	    {0, 0, 0},	   NULL};
	struct wbuf b = {0};
	char err[256];
	clock_pair_now(&in.clock);
	cr_assert_eq(writer_open(path, -1, &in, err, sizeof err), 0, "%s", err);
	size_t off = writer_block_begin(&b);
	uint8_t *p = wbuf_room(&b, BLOCKS_ULEB_MAX);
	b.len = (size_t)(blocks_uleb_put(p, m->vm_id) - b.p);
	cr_assert_eq(names_put_vm(&b, m->vm_id, 7, 0, 0, 0), 0);
	writer_block_end(&b, off, FORMAT_KIND_MAPPING);
	writer_count_vm();
	cr_assert_eq(writer_write(&b, 1, 0), 0);
	wbuf_free(&b);
}

/* Test thread. A drain with allocation n failing: its samples may be
** lost, never the log's soundness; the next drain's samples are all there.
** Returns 1 when allocation n was reached. */
static int drain_with_fault(struct vm *v, long n, int every_one)
{
	struct mapper m;
	struct sample_vm s;
	char path[] = "/tmp/ljlog-faults-XXXXXX";
	int fd = mkstemp(path);
	long live0 = live;
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(mapper_init(&m, G(v->L), mapper_new_id()), 0);
	sampler_up(&s, &m);
	writer_lock();
	log_open(path, &m);
	writer_unlock();

	ring_fill(&s, v);
	fault_arm(n, every_one);
	sample_drain(&s);
	int hit = fault_disarm();
	cr_assert_eq(s.tail, s.head, "allocation %ld: the ring emptied", n);
	uint64_t first = s.signals_done;
	cr_assert(first == 0 || first == NSAMPLES);
	/* A failed drain lost its NSAMPLES samples, one buffer (ring_fill's
	** count). */
	struct words lost = {.events = NSAMPLES};
	lost.fam[FORMAT_FAM_SAMPLE] = NSAMPLES;
	ring_fill(&s, v);
	sample_drain(&s);
	cr_assert_eq(s.signals_done, first + NSAMPLES, "allocation %ld", n);
	cr_assert_neq(s.vm_sym, 0, "the interpreter's HOSTSYM was made");

	counted_check(path, first == 0 ? &lost : NULL, 1, "drain", n);
	sampler_down(&s);
	mapper_free(&m);
	cr_assert_eq(live, live0, "allocation %ld: %ld blocks leaked", n,
		     live - live0);
	return hit;
}

/* A drain that ran out of memory while mapping kept the IDs the failed
** pass had handed to its first entries, which the pass then forgot with
** its cut MAPPING block: their samples named undefined IDs and the reader
** refused the log from there. */
Test(faults, sample_drain_rolls_back_at_every_allocation)
{
	struct vm v;
	long n, most = 0;
	vm_init(&v);
	capture_here();
	for (int every_one = 0; every_one < 2; every_one++) {
		for (n = 0; n < SWEEP_MAX && drain_with_fault(&v, n, every_one);
		     n++)
			;
		cr_assert_lt(n, SWEEP_MAX);
		most = n > most ? n : most;
		cr_log_info("%ld allocations, every_one %d", n, every_one);
	}
	cr_assert_geq(most, 10, "a drain allocates (%ld)", most);
	lua_close(v.L);
}

/* The wrappers reach ljlog's own code (linked from its convenience
** libraries): else every sweep above would pass without failing once. */
Test(faults, wrapped_allocator_reaches_the_library)
{
	struct wbuf b = {0};
	fault_arm(0, 0);
	uint8_t *p = wbuf_room(&b, 16);
	cr_assert(fault_disarm(), "wbuf_grow's realloc was not wrapped");
	cr_assert_null(p);
	cr_assert_eq(seen, 1);
}
