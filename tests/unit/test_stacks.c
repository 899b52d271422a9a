/*
** Unit tests: the sampler's stack table (src/stat/stacks.c) and version 6
** samples. The same samples are written twice: inline (version 5, the
** test log builder) and by the real stack table (version 6, STACK records
** ahead of each SAMPLES block, as the helper writes them); the real reader
** must see the same frames in every sample, and give the same folded
** stacks, from both.
*/
#include <criterion/criterion.h>
#include <sys/stat.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode/decode.h"
#include "logbuild.h"
#include "profile/profile.h"
#include "proc/folded.h"
#include "stat/stacks.h"

/* IDs of the mapping: a VM, NPROTO prototypes, NSYM host symbols, a
** trace. The stack table's own IDs come from the process-wide counter,
** which starts far above (see reserve_ids). */
enum { VM = 1, P0 = 2, NPROTO = 12, H0 = 20, NSYM = 10, TR = 40 };

/* Test thread. Deterministic pseudo-random numbers. */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

/* One sample as captured: state, trace fields, frames innermost first. */
struct cap {
	unsigned state;
	uint64_t trace, pcofs;
	unsigned nlua, nhost;
	uint64_t lua[2 * STACKS_LUA_MAX];
	uint64_t host[STACKS_HOST_MAX];
};

/* Test thread. A sample shaped like a real program's: a main chunk, a
** recursion of a few functions at a few lines (binary-trees), an innermost
** line that varies, and host frames (the allocator under the GC, an FFI
** call) in varying depth; some in a trace, some idle. */
static void capture(struct cap *c, unsigned maxdepth)
{
	memset(c, 0, sizeof *c);
	c->state = (unsigned)rnd(9);
	unsigned depth = c->state == FORMAT_STATE_IDLE ? 0
			 : rnd(8) ? 1 + (unsigned)rnd(maxdepth)
				  : 0;
	/* outermost first into a scratch, then reversed */
	uint64_t fr[2 * STACKS_LUA_MAX];
	unsigned rec = P0 + 1 + (unsigned)rnd(2);
	for (unsigned i = 0; i < depth; i++) {
		fr[2 * i] = i == 0 ? P0 : i < 3 ? P0 + 3 + i : rec;
		fr[2 * i + 1] = i + 1 == depth ? rnd(12) : 5 + (i & 1);
	}
	for (unsigned i = 0; i < depth; i++) {
		c->lua[2 * i] = fr[2 * (depth - 1 - i)];
		c->lua[2 * i + 1] = fr[2 * (depth - 1 - i) + 1];
	}
	c->nlua = depth;
	if (c->state == FORMAT_STATE_TRACE) {
		c->trace = rnd(4) ? TR : 0;
		c->pcofs = rnd(3) ? 1 + rnd(600) : 0;
		if (depth)
			c->lua[1] = 0; /* compiled code: no line */
	} else if (c->state != FORMAT_STATE_IDLE || rnd(2)) {
		unsigned nh = (unsigned)rnd(9);
		for (unsigned j = 0; j < nh; j++)
			c->host[j] = H0 + (rnd(3) ? 3 : rnd(NSYM));
		c->nhost = nh;
	}
}

/* Test thread. The log's INTRO (version) and mapping. */
static void begin(struct lblog *l, uint64_t version)
{
	struct lbmap m;
	char name[16];
	lblog_init(l);
	l->version = version;
	lblog_intro(l, 7);
	map_begin(&m, VM);
	m.version = version;
	map_vm(&m, VM, 100, 1000, 0);
	for (unsigned i = 0; i < NPROTO; i++) {
		snprintf(name, sizeof name, "f%u", i);
		map_proto_named(&m, P0 + i, "@app.lua", 10 * i, 9, name);
	}
	for (unsigned i = 0; i < NSYM; i++) {
		snprintf(name, sizeof name, "sym%u", i);
		map_hostsym(&m, H0 + i, 0x1000 * (i + 1), name, "/usr/bin/x",
			    i == 0 ? FORMAT_HOST_VM : 0);
	}
	static const uint64_t snaps[] = {0, 1,	    P0 + 3, 51,	    300,
					 2, P0 + 3, 52,	    P0 + 4, 7};
	map_trace_snaps(&m, TR, 1, P0 + 3, 50, 0, 2, snaps);
	lblog_mapping(l, &m);
}

/* Test thread. Take the stack table's IDs above the mapping's. */
static void reserve_ids(void)
{
	extern uint64_t mapper_new_id(void);
	while (mapper_new_id() < 1000)
		;
}

/* Test thread. Append the version 6 blocks of n samples: the STACK
** records the table t makes (a MAPPING block), then the SAMPLES block. */
static void put_v6(struct lblog *l, struct stacks *t, const struct cap *c,
		   size_t n)
{
	struct wbuf b = {0};
	struct lb p = {0}, s = {0};
	for (size_t i = 0; i < n; i++) {
		uint64_t id = 0;
		if (c[i].nlua || c[i].nhost)
			id = stacks_ref(t, &b, c[i].lua, c[i].nlua, c[i].host,
					c[i].nhost);
		cr_assert(c[i].nlua + c[i].nhost == 0 || id, "out of memory");
		lb_uleb(&s, 1000);
		lb_u8(&s, c[i].state);
		lb_uleb(&s, id);
		if (c[i].state == FORMAT_STATE_TRACE) {
			lb_uleb(&s, c[i].trace);
			lb_uleb(&s, c[i].pcofs);
			lb_uleb(&s, 0); /* chkofs (version 14): unknown */
		}
	}
	if (b.len) {
		lb_uleb(&p, VM);
		lb_bytes(&p, b.p, b.len);
		lblog_block(l, FORMAT_KIND_MAPPING, p.buf, p.len);
		lb_free(&p);
	}
	struct lbsam sm = {.p = s, .count = n};
	lblog_samples(l, VM, 0, 1, 0, &sm);
	wbuf_free(&b);
}

/* Test thread. Append the version 5 block of the same samples. */
static void put_v5(struct lblog *l, const struct cap *c, size_t n)
{
	struct lbsam sm;
	sam_begin(&sm);
	for (size_t i = 0; i < n; i++)
		sam_add_pc(&sm, 1000, c[i].state, c[i].trace, c[i].pcofs,
			   c[i].nlua, c[i].lua, c[i].nhost, c[i].host);
	lblog_samples(l, VM, 0, 1, 0, &sm);
}

/* What a sink saw: every sample's fields and frames, as words. */
struct seen {
	uint64_t *w;
	size_t n, cap;
	uint64_t samples, stacks;
};

static void put(struct seen *s, uint64_t v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4096;
		s->w = realloc(s->w, s->cap * sizeof *s->w);
		cr_assert_not_null(s->w);
	}
	s->w[s->n++] = v;
}

static int on_sample(void *ud, const struct decode_sample *sm)
{
	struct seen *s = ud;
	put(s, ~0ull);
	put(s, sm->ts);
	put(s, sm->state);
	put(s, sm->trace ? sm->trace->id : 0);
	put(s, sm->pcofs);
	put(s, sm->inlined);
	put(s, sm->nlua);
	for (uint32_t i = 0; i < sm->nlua; i++) {
		put(s, sm->lua[i].func->id);
		put(s, sm->lua[i].line);
	}
	put(s, sm->nhost);
	for (uint32_t i = 0; i < sm->nhost; i++)
		put(s, sm->host[i]->id);
	s->samples++;
	return 0;
}

static int on_record(void *ud, struct decode_obj *o)
{
	if (o->kind == FORMAT_REC_STACK)
		((struct seen *)ud)->stacks++;
	return 0;
}

/* Test thread. Finish l, write it; its path (static). */
static const char *finish(struct lblog *l)
{
	static char path[2][64];
	static int k;
	lblog_end(l);
	k ^= 1;
	snprintf(path[k], sizeof path[k], "%s", lblog_write(l));
	lblog_free(l);
	return path[k];
}

/* Test thread. Decode the log at path into s (must be complete). */
static void decode_into(const char *path, struct seen *s)
{
	struct reader *r;
	struct decode *d;
	char err[512];
	struct decode_sink sink = {
	    .ud = s, .sample = on_sample, .record = on_record};
	memset(s, 0, sizeof *s);
	cr_assert_eq(reader_open(&r, path, 0, err, sizeof err), 0, "%s", err);
	cr_assert_eq(decode_new(&d, &sink), 0);
	int rc = decode_run(r, d, err, sizeof err);
	cr_assert_eq(rc, 0, "%s: rc %d: %s", path, rc, err);
	decode_free(d);
	reader_close(r);
}

/* Folded lines, concatenated. */
struct text {
	char *p;
	size_t len, cap;
};

static int emit(void *ud, const char *line, size_t len, uint64_t weight)
{
	struct text *t = ud;
	char num[32];
	int nn =
	    snprintf(num, sizeof num, " %llu\n", (unsigned long long)weight);
	if (t->len + len + (size_t)nn + 1 > t->cap) {
		t->cap = 2 * (t->len + len + (size_t)nn + 1);
		t->p = realloc(t->p, t->cap);
		cr_assert_not_null(t->p);
	}
	memcpy(t->p + t->len, line, len);
	memcpy(t->p + t->len + len, num, (size_t)nn + 1);
	t->len += len + (size_t)nn;
	return 0;
}

/* Test thread. The folded stacks of the log at path in every view, as
** `ljlog folded` prints them. */
static char *folded(const char *path)
{
	struct profile *p;
	struct text t = {0};
	char err[512];
	int rc = profile_load(path, 0, &p, err, sizeof err);
	cr_assert_eq(rc, 0, "rc %d: %s", rc, err);
	for (unsigned v = SAMPLES_VIEW_MERGED; v <= SAMPLES_VIEW_HOST; v++)
		for (unsigned f = 0; f < 4; f++)
			cr_assert_eq(folded_samples(&p->smp, v, f, emit, &t),
				     0);
	profile_free(p);
	return t.p ? t.p : strdup("");
}

/* Test thread. n samples (maxdepth Lua frames at most) in blocks of
** batch, written both ways: the reader must see the same. The number of
** STACK records read goes to *stacks. */
static void both_ways(size_t n, size_t batch, unsigned maxdepth,
		      uint64_t *stacks)
{
	struct cap *c = malloc(n * sizeof *c);
	struct lblog l5, l6;
	struct stacks t = {0};
	struct seen s5, s6;
	cr_assert_not_null(c);
	reserve_ids();
	for (size_t i = 0; i < n; i++)
		capture(&c[i], maxdepth);
	begin(&l5, 5);
	begin(&l6, FORMAT_VERSION);
	for (size_t i = 0; i < n; i += batch) {
		size_t k = n - i < batch ? n - i : batch;
		put_v5(&l5, c + i, k);
		put_v6(&l6, &t, c + i, k);
	}
	const char *p5 = finish(&l5), *p6 = finish(&l6);
	decode_into(p5, &s5);
	decode_into(p6, &s6);
	cr_assert_eq(s5.samples, n);
	cr_assert_eq(s6.samples, n);
	cr_assert_eq(s5.n, s6.n, "%zu words, %zu", s5.n, s6.n);
	for (size_t i = 0; i < s5.n; i++)
		cr_assert_eq(s5.w[i], s6.w[i], "word %zu: %llu, %llu", i,
			     (unsigned long long)s5.w[i],
			     (unsigned long long)s6.w[i]);
	char *f5 = folded(p5), *f6 = folded(p6);
	cr_assert_gt(strlen(f5), 0);
	cr_assert_str_eq(f5, f6);
	*stacks = s6.stacks;
	cr_assert_eq(s6.stacks, t.defined);
	free(f5);
	free(f6);
	free(s5.w);
	free(s6.w);
	unlink(p5);
	unlink(p6);
	stacks_free(&t);
	free(c);
}

Test(stacks, same_frames_same_id)
{
	static const uint64_t lua[] = {P0 + 1, 7, P0, 3};
	static const uint64_t host[] = {H0 + 1, H0};
	struct stacks t = {0};
	struct wbuf b = {0};
	uint64_t a = stacks_ref(&t, &b, lua, 2, host, 2);
	size_t len = b.len;
	cr_assert_neq(a, 0);
	cr_assert_eq(stacks_ref(&t, &b, lua, 2, host, 2), a);
	cr_assert_eq(b.len, len, "nothing written for a known stack");
	cr_assert_neq(stacks_ref(&t, &b, lua, 2, host, 1), a);
	cr_assert_neq(stacks_ref(&t, &b, lua, 1, host, 2), a);
	cr_assert_neq(stacks_ref(&t, &b, lua + 2, 1, NULL, 0), a);
	cr_assert_eq(stacks_ref(&t, &b, lua, 2, host, 2), a);
	stacks_reset(&t);
	uint64_t again = stacks_ref(&t, &b, lua, 2, host, 2);
	cr_assert(again != a && again != 0, "forgotten: defined anew");
	stacks_free(&t);
	wbuf_free(&b);
}

Test(stacks, a_new_stack_extends_a_known_one)
{
	static const uint64_t lua[] = {P0 + 2, 9, P0 + 1, 5, P0 + 1, 5, P0, 3};
	static const uint64_t host[] = {H0 + 3, H0 + 3, H0 + 2};
	struct stacks t = {0};
	struct wbuf b = {0};
	(void)stacks_ref(&t, &b, lua, 4, host, 2);
	size_t len = b.len;
	/* One host frame more: kind, ID, parent, 0 Lua frames, 1 host. */
	(void)stacks_ref(&t, &b, lua, 4, host, 3);
	cr_assert_leq(b.len - len, 1 + 2 * 3 + 1 + 1 + 1, "%zu bytes",
		      b.len - len);
	cr_assert_eq(b.p[len], FORMAT_REC_STACK);
	stacks_free(&t);
	wbuf_free(&b);
}

/* A steady program: few stacks, most samples name a known one. */
Test(stacks, samples_read_the_same_both_ways)
{
	uint64_t n;
	both_ways(3000, 32, 12, &n);
	cr_assert_lt(n, 3000, "%llu stacks", (unsigned long long)n);
}

/* Deep stacks, and more than the table keeps: it forgets and defines the
** stacks it meets again, under new IDs. */
Test(stacks, a_full_table_forgets_and_nothing_is_lost)
{
	uint64_t n;
	both_ways(6000, 64, STACKS_LUA_MAX, &n);
	cr_assert_gt(n, STACKS_MAX, "%llu stacks", (unsigned long long)n);
}

/* A STACK in a version 5 log is an unknown record; a sample naming an
** undefined ID, or one that is not a STACK, is corrupt; so is a STACK
** whose parent is not a STACK. */
Test(stacks, bad_stacks_are_corrupt)
{
	struct lblog l;
	struct lbmap m;
	struct lb s = {0};
	struct reader *r;
	struct decode *d;
	struct decode_sink sink = {0};
	char err[512];
	const char *want[] = {
	    "stack ID used before definition (ID 500)",
	    "stack is not a STACK (ID 2)",
	    "STACK record 501: parent ID 2 is not a STACK",
	    "STACK record 501: Lua frame 0 func ID 20 is not a function",
	    "unknown record kind 8",
	};
	for (int k = 0; k < 5; k++) {
		begin(&l, k == 4 ? 5 : FORMAT_VERSION);
		map_begin(&m, VM);
		lb_u8(&m.p, FORMAT_REC_STACK);
		lb_uleb(&m.p, 501);
		lb_uleb(&m.p, k == 2 ? P0 : 0);
		lb_uleb(&m.p, 1);
		lb_uleb(&m.p, k == 3 ? H0 : P0);
		lb_uleb(&m.p, 4);
		lb_uleb(&m.p, 0);
		lblog_mapping(&l, &m);
		lb_uleb(&s, 1);
		lb_u8(&s, FORMAT_STATE_INTERP);
		lb_uleb(&s, k == 0 ? 500 : k == 1 ? P0 : 501);
		struct lbsam sm = {.p = s, .count = 1};
		memset(&s, 0, sizeof s);
		lblog_samples(&l, VM, 0, 1, 0, &sm);
		const char *path = finish(&l);
		cr_assert_eq(reader_open(&r, path, 0, err, sizeof err), 0);
		cr_assert_eq(decode_new(&d, &sink), 0);
		cr_assert_eq(decode_run(r, d, err, sizeof err), -EBADMSG,
			     "case %d", k);
		cr_assert_not_null(strstr(err, want[k]), "case %d: %s", k, err);
		decode_free(d);
		reader_close(r);
		unlink(path);
	}
}

/* A STACK that extends a deep one costs what its record adds, not its
** parent's frames again: a chain of 4000 one-frame STACKs, then 20000
** STACKs of no frame of their own under the deepest (about 7 bytes each;
** copying the parent's frames would hold 64 KiB each, 1.3 GB in all). The
** heap the decoder holds stays in proportion to the log, and a sample of
** the deepest STACK still reads all 4000 frames. */
Test(stacks, deep_parents_are_not_copied)
{
	enum { DEPTH = 4000, WIDE = 20000, BATCH = 1000, ID0 = 1000 };
	struct lblog l;
	struct lbmap m;
	struct lb s = {0};
	struct reader *r;
	struct decode *d;
	struct seen seen = {0};
	struct decode_sink sink = {.sample = on_sample, .ud = &seen};
	char err[512];
	begin(&l, FORMAT_VERSION);
	for (unsigned k = 0; k < DEPTH + WIDE; k++) {
		if (k % BATCH == 0)
			map_begin(&m, VM);
		lb_u8(&m.p, FORMAT_REC_STACK);
		lb_uleb(&m.p, ID0 + k);
		lb_uleb(&m.p, k == 0	  ? 0
			      : k < DEPTH ? ID0 + k - 1
					  : ID0 + DEPTH - 1);
		lb_uleb(&m.p, k < DEPTH);
		if (k < DEPTH) {
			lb_uleb(&m.p, P0 + k % NPROTO);
			lb_uleb(&m.p, 10 * (k % NPROTO) + 1);
		}
		lb_uleb(&m.p, 0);
		if (k % BATCH == BATCH - 1)
			lblog_mapping(&l, &m);
	}
	lb_uleb(&s, 1);
	lb_u8(&s, FORMAT_STATE_INTERP);
	lb_uleb(&s, ID0 + DEPTH + WIDE - 1);
	struct lbsam sm = {.p = s, .count = 1};
	lblog_samples(&l, VM, 0, 1, 0, &sm);
	const char *path = finish(&l);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	size_t before = lb_heap_in_use();
	cr_assert_eq(reader_open(&r, path, 0, err, sizeof err), 0, "%s", err);
	cr_assert_eq(decode_new(&d, &sink), 0);
	cr_assert_eq(decode_run(r, d, err, sizeof err), 0, "%s", err);
	size_t now = lb_heap_in_use(), held = now > before ? now - before : 0;
	cr_assert_eq(seen.samples, 1);
	/* ~0, ts, state, trace, pcofs, inlined, nlua, then func, line... */
	cr_assert_eq(seen.w[6], DEPTH, "the sample has %llu Lua frames",
		     (unsigned long long)seen.w[6]);
	cr_assert_eq(seen.w[7], P0 + (DEPTH - 1) % NPROTO, "innermost");
	cr_assert_eq(seen.w[7 + 2 * (DEPTH - 1)], P0, "outermost");
	cr_assert_lt(held, 64 * (size_t)st.st_size + (8u << 20),
		     "decoder holds %zu bytes for a %lld-byte log", held,
		     (long long)st.st_size);
	free(seen.w);
	decode_free(d);
	reader_close(r);
	unlink(path);
}
