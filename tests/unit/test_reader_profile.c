/*
** Unit tests: reader/profile.c (frames, allocation sites, GC, counts, time).
*/
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "logbuild.h"
#include "profile/profile.h"

/* IDs of the standard mapping. */
enum {
	VM = 1,
	A = 2,
	B = 3,
	C = 4,
	F = 5,
	X = 6,
	MAIN = 7,
	CO = 8,
	Y = 9,
	A2 = 10,
	PA = 11,
	RA = 12,
	YA = 13,
	LF = 14
};

/* Test thread. A log of format version with the standard mapping: Lua
** functions A, B, C (and A2, a second prototype of A's identity), fast
** functions F (coroutine.resume) and Y (coroutine.yield), C function X
** (pcall), assembler fast functions PA, RA, YA (CALLBACK) and LF (a leaf;
** in version 3, CALLBACK is not known and LF reads as they do). */
static void begin_version(struct lblog *l, uint64_t version)
{
	struct lbmap m;
	const uint64_t cb = FORMAT_FF_NOEXIT | FORMAT_FF_CALLBACK;
	lblog_init(l);
	/* PROTO records as this version writes them (a name from 4 on). */
	void (*proto)(struct lbmap *, uint64_t, const char *, uint64_t,
		      uint64_t) = version < 4 ? map_proto_v3 : map_proto;
	lblog_intro_version(l, 99, version);
	map_begin(&m, VM);
	map_vm(&m, VM, 555, 900, 0);
	proto(&m, A, "@t.lua", 1, 5);
	proto(&m, B, "@t.lua", 10, 5);
	proto(&m, C, "=stdin", 20, 5);
	map_ffunc(&m, F, 40, "coroutine.resume");
	map_cfunc(&m, X, 0x1000, "pcall", "/usr/bin/luajit");
	map_co(&m, MAIN, FORMAT_CO_MAIN);
	map_co(&m, CO, 0);
	map_ffunc(&m, Y, 41, "coroutine.yield");
	proto(&m, A2, "@t.lua", 1, 5);
	/* Assembler fast functions (NOEXIT): they never get an EXIT. */
	map_ffunc_flags(&m, PA, 42, "asm.pcall", cb);
	map_ffunc_flags(&m, RA, 43, "asm.resume", cb);
	map_ffunc_flags(&m, YA, 44, "asm.yield", cb);
	map_ffunc_asm(&m, LF, 45, "asm.leaf");
	lblog_mapping(l, &m);
}

/* Test thread. begin_version, this reader's version. */
static void begin(struct lblog *l)
{
	begin_version(l, FORMAT_VERSION);
}

/* Test thread. Finish l (with END unless cut), load it into a profile. */
static struct profile *load(struct lblog *l, int with_end, int want_rc)
{
	struct profile *p;
	char err[512];
	if (with_end)
		lblog_end(l);
	const char *path = lblog_write(l);
	int rc = profile_load(path, PROFILE_CALLTREE, &p, err, sizeof err);
	cr_assert_eq(rc, want_rc, "rc %d: %s", rc, err);
	cr_assert_not_null(p);
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

/* Test thread. Check calls, total and self (ns; the test clock is 1:1). */
static void expect(const struct profile *p, const char *name, uint64_t calls,
		   uint64_t total, uint64_t self)
{
	const struct profile_fn *f = fn(p, name);
	cr_assert_eq(f->calls, calls, "%s calls %llu", name,
		     (unsigned long long)f->calls);
	cr_assert_eq(profile_ns(p, f->total), total, "%s total %llu, want %llu",
		     name, (unsigned long long)profile_ns(p, f->total),
		     (unsigned long long)total);
	cr_assert_eq(profile_ns(p, f->self), self, "%s self %llu, want %llu",
		     name, (unsigned long long)profile_ns(p, f->self),
		     (unsigned long long)self);
}

/* -- Frames ---------------------------------------------------------------------------- */

Test(profile, nested_calls)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);	/* t 0 */
	ev_enter(&e, 2, B, 10); /* t 10 */
	ev_exit(&e, 2, 20);	/* t 30 */
	ev_exit(&e, 1, 10);	/* t 40 */
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "t.lua:1", 1, 40, 20);
	expect(p, "t.lua:10", 1, 20, 20);
	cr_assert_eq(p->calls.unmatched_exits, 0);
	profile_free(p);
}

Test(profile, tail_call_closes_caller)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);	/* t 0 */
	ev_enter(&e, 1, B, 10); /* t 10: A tail-calls B in its slot */
	ev_exit(&e, 1, 15);	/* t 25 */
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "t.lua:1", 1, 10, 10);
	expect(p, "t.lua:10", 1, 15, 15);
	profile_free(p);
}

Test(profile, error_unwinding_through_pcall)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0); /* t 0 */
	ev_enter(&e, 2, X, 5); /* t 5: pcall */
	ev_enter(&e, 3, B, 5); /* t 10 */
	ev_enter(&e, 4, C, 2); /* t 12: C raises an error */
	ev_exit(&e, 2, 8);     /* t 20: pcall returns; B and C never did */
	ev_exit(&e, 1, 10);    /* t 30 */
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "t.lua:1", 1, 30, 15);
	expect(p, "pcall", 1, 15, 5);
	expect(p, "t.lua:10", 1, 10, 2);
	expect(p, "stdin:20", 1, 8, 8);
	cr_assert_eq(fn(p, "pcall")->kind, FNID_C);
	cr_assert_str_eq(fn(p, "pcall")->file, "/usr/bin/luajit");
	cr_assert_eq(fn(p, "stdin:20")->kind, FNID_LUA);
	cr_assert_str_eq(fn(p, "stdin:20")->file, "stdin");
	cr_assert_eq(fn(p, "stdin:20")->line, 20);
	profile_free(p);
}

Test(profile, fast_function_closed_by_next_call)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0); /* t 0 */
	ev_enter(&e, 2, F, 5); /* t 5: fast function, no EXIT ever */
	ev_enter(&e, 2, B, 3); /* t 8: closes F */
	ev_exit(&e, 2, 4);     /* t 12 */
	ev_enter(&e, 2, F, 3); /* t 15 */
	ev_exit(&e, 1, 5);     /* t 20: closes F, then A */
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "coroutine.resume", 2, 8, 8);
	expect(p, "t.lua:1", 1, 20, 8);
	expect(p, "t.lua:10", 1, 4, 4);
	cr_assert_eq(fn(p, "coroutine.resume")->kind, FNID_FAST);
	profile_free(p);
}

Test(profile, recursion_counted_once)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);
	ev_enter(&e, 2, A, 10);
	ev_enter(&e, 3, A2, 10); /* another prototype, same identity */
	ev_exit(&e, 3, 10);
	ev_exit(&e, 2, 10);
	ev_exit(&e, 1, 10);
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "t.lua:1", 3, 50, 50);
	size_t n = 0;
	for (size_t i = 0; i < p->nfn; i++)
		n += !strcmp(p->fns[i].name, "t.lua:1");
	cr_assert_eq(n, 1, "A and A2 merge");
	profile_free(p);
}

Test(profile, frames_closed_at_detach_and_eof)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);
	ev_enter(&e, 2, B, 10);
	ev_vm(&e, FORMAT_VM_DETACH, 1234, 30); /* t 40 */
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "t.lua:1", 1, 40, 10);
	expect(p, "t.lua:10", 1, 30, 30);
	cr_assert(p->vms[0].has_detach);
	cr_assert_eq(p->vms[0].heap_detach, 1234);
	profile_free(p);

	/* A truncated log: closed at the last timestamp seen. */
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);
	ev_enter(&e, 2, B, 10);
	ev_gc(&e, FORMAT_GC_PAUSE, 0, 25); /* t 35 */
	lblog_events(&l, VM, 0, &e);
	p = load(&l, 0, -ENODATA);
	expect(p, "t.lua:1", 1, 35, 10);
	expect(p, "t.lua:10", 1, 25, 25);
	cr_assert_not(p->vms[0].has_detach);
	cr_assert_not(p->have_end);
	profile_free(p);
}

Test(profile, frames_span_blocks)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);
	ev_enter(&e, 7, B, 10);
	lblog_events(&l, VM, 100, &e);
	ev_begin(&e);
	ev_exit(&e, 7, 5); /* base 120: t 125 */
	ev_exit(&e, 1, 5); /* t 130 */
	lblog_events(&l, VM, 120, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "t.lua:1", 1, 30, 15);
	expect(p, "t.lua:10", 1, 15, 15);
	profile_free(p);
}

Test(profile, coroutine_switches)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_switch(&e, MAIN, 0);
	ev_enter(&e, 1, A, 0);	/* t 0, main */
	ev_enter(&e, 2, F, 10); /* t 10: coroutine.resume */
	ev_switch(&e, CO, 1);	/* t 11 */
	ev_enter(&e, 1, B, 1);	/* t 12, in CO */
	ev_enter(&e, 2, Y, 8);	/* t 20: coroutine.yield */
	ev_switch(&e, MAIN, 1); /* t 21: back in main, resume returns */
	ev_exit(&e, 1, 9);	/* t 30: closes resume, then A */
	ev_switch(&e, CO, 20);	/* t 50: resumed again */
	ev_exit(&e, 1, 10);	/* t 60: closes yield, then B */
	ev_switch(&e, MAIN, 1); /* t 61 */
	ev_vm(&e, FORMAT_VM_DETACH, 0, 39); /* t 100 */
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "t.lua:1", 1, 30, 10);
	expect(p, "coroutine.resume", 1, 20, 11);
	expect(p, "t.lua:10", 1, 19, 8);
	expect(p, "coroutine.yield", 1, 11, 11);
	cr_assert_eq(p->coroutines, 2);
	cr_assert_eq(p->vms[0].coroutines, 2);
	profile_free(p);
}

Test(profile, noexit_ends_when_its_callee_returns)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);	 /* t 0 */
	ev_enter(&e, 2, PA, 10); /* t 10: pcall */
	ev_enter(&e, 3, B, 10);	 /* t 20 */
	ev_exit(&e, 3, 10);	 /* t 30: B returns, so does pcall */
	ev_enter(&e, 2, C, 10);	 /* t 40 */
	ev_exit(&e, 2, 5);	 /* t 45 */
	ev_exit(&e, 1, 5);	 /* t 50 */
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "asm.pcall", 1, 20, 10);
	expect(p, "t.lua:10", 1, 10, 10);
	expect(p, "stdin:20", 1, 5, 5);
	expect(p, "t.lua:1", 1, 50, 25);
	cr_assert_eq(p->calls.unmatched_exits, 0);
	profile_free(p);
}

Test(profile, noexit_yield_and_resume_end_on_switch)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_switch(&e, MAIN, 0);
	ev_enter(&e, 1, A, 0);		    /* t 0, main */
	ev_enter(&e, 2, RA, 10);	    /* t 10: coroutine.resume */
	ev_switch(&e, CO, 1);		    /* t 11 */
	ev_enter(&e, 1, B, 1);		    /* t 12, in CO */
	ev_enter(&e, 2, YA, 8);		    /* t 20: coroutine.yield */
	ev_switch(&e, MAIN, 1);		    /* t 21: resume returns */
	ev_exit(&e, 1, 9);		    /* t 30: A returns */
	ev_switch(&e, CO, 20);		    /* t 50: yield returns */
	ev_exit(&e, 1, 10);		    /* t 60: B returns */
	ev_switch(&e, MAIN, 1);		    /* t 61 */
	ev_vm(&e, FORMAT_VM_DETACH, 0, 39); /* t 100 */
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "t.lua:1", 1, 30, 19);
	/* self 10..12: CO has no frame of its own until B (t 12) */
	expect(p, "asm.resume", 1, 11, 2);
	expect(p, "t.lua:10", 1, 19, 18);
	expect(p, "asm.yield", 1, 1, 1);
	cr_assert_eq(p->calls.unmatched_exits, 0);
	profile_free(p);
}

/* Test thread. Index of the function named name (fails when missing). */
static uint32_t fidx(const struct profile *p, const char *name)
{
	for (size_t i = 0; i < p->fnid.n; i++)
		if (!strcmp(p->fnid.fns[i].name, name))
			return (uint32_t)i;
	cr_assert_fail("no function %s", name);
	return 0;
}

/* Test thread. Calls of callee made from caller (call-tree nodes whose
** parent is caller's). */
static uint64_t edge(const struct profile *p, const char *caller,
		     const char *callee)
{
	uint32_t a = fidx(p, caller), b = fidx(p, callee);
	uint64_t n = 0;
	for (size_t i = 1; i < p->calls.nnode; i++) {
		const struct calls_node *nd = &p->calls.nodes[i];
		if (nd->fn == b && nd->parent &&
		    p->calls.nodes[nd->parent].fn == a)
			n += nd->calls;
	}
	return n;
}

/* Test thread. A loop `for ... in iter do B() end` in A, iter a leaf fast
** function LF, ending with LF called again and A returning. */
static void leaf_loop(struct lbev *e)
{
	ev_begin(e);
	ev_enter(e, 1, A, 0);	/* t 0 */
	ev_enter(e, 3, LF, 10); /* t 10: the iterator */
	ev_enter(e, 5, B, 5);	/* t 15: the loop body's call */
	ev_exit(e, 5, 10);	/* t 25 */
	ev_enter(e, 3, LF, 5);	/* t 30 */
	ev_enter(e, 5, B, 2);	/* t 32 */
	ev_exit(e, 5, 8);	/* t 40 */
	ev_enter(e, 3, LF, 10); /* t 50: the loop ends */
	ev_exit(e, 1, 10);	/* t 60 */
}

Test(profile, leaf_fast_function_ends_at_next_event)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	leaf_loop(&e);
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "asm.leaf", 3, 17, 17);
	expect(p, "t.lua:10", 2, 18, 18);
	expect(p, "t.lua:1", 1, 60, 25);
	cr_assert_eq(edge(p, "t.lua:1", "t.lua:10"), 2);
	cr_assert_eq(edge(p, "asm.leaf", "t.lua:10"), 0);
	cr_assert_eq(edge(p, "t.lua:1", "asm.leaf"), 3);
	cr_assert_eq(p->calls.unmatched_exits, 0);
	profile_free(p);
}

Test(profile, leaf_rule_not_in_version_3)
{
	struct lblog l;
	struct lbev e;
	begin_version(&l, 3);
	leaf_loop(&e);
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	/* As read before version 4: B under the iterator, which returns with
	** it (t 10..25, 30..40, 50..60). */
	expect(p, "asm.leaf", 3, 35, 17);
	expect(p, "t.lua:10", 2, 18, 18);
	cr_assert_eq(edge(p, "asm.leaf", "t.lua:10"), 2);
	cr_assert_eq(edge(p, "t.lua:1", "t.lua:10"), 0);
	profile_free(p);
}

Test(profile, leaf_fast_function_ends_at_switch_and_tail_call)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_switch(&e, MAIN, 0);
	ev_enter(&e, 1, A, 0);	 /* t 0 */
	ev_enter(&e, 2, LF, 10); /* t 10 */
	ev_switch(&e, CO, 3);	 /* t 13: LF ended */
	ev_enter(&e, 1, C, 1);	 /* t 14, in CO */
	ev_exit(&e, 1, 6);	 /* t 20 */
	ev_switch(&e, MAIN, 0);	 /* t 20 */
	ev_enter(&e, 2, LF, 10); /* t 30: tostring */
	ev_enter(&e, 2, B, 4);	 /* t 34: its __tostring, a tail call */
	ev_exit(&e, 2, 6);	 /* t 40 */
	ev_exit(&e, 1, 10);	 /* t 50 */
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "asm.leaf", 2, 7, 7);
	expect(p, "t.lua:10", 1, 6, 6);
	cr_assert_eq(edge(p, "t.lua:1", "t.lua:10"), 1);
	cr_assert_eq(p->calls.unmatched_exits, 0);
	profile_free(p);
}

Test(profile, pcall_returns_with_its_leaf_callee)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);	 /* t 0 */
	ev_enter(&e, 2, PA, 10); /* t 10: pcall(type, x) */
	ev_enter(&e, 4, LF, 2);	 /* t 12: type */
	ev_enter(&e, 4, B, 3);	 /* t 15: A's next call, at type's slot */
	ev_exit(&e, 4, 5);	 /* t 20 */
	ev_exit(&e, 1, 10);	 /* t 30 */
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "asm.pcall", 1, 5, 2);
	expect(p, "asm.leaf", 1, 3, 3);
	cr_assert_eq(edge(p, "t.lua:1", "t.lua:10"), 1);
	cr_assert_eq(edge(p, "asm.pcall", "t.lua:10"), 0);
	cr_assert_eq(p->calls.unmatched_exits, 0);
	profile_free(p);
}

Test(profile, frames_before_first_switch_belong_to_main)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);	 /* t 0: no SWITCH yet */
	ev_enter(&e, 2, F, 10);	 /* t 10 */
	ev_switch(&e, CO, 0);	 /* t 10 */
	ev_enter(&e, 1, B, 0);	 /* t 10 */
	ev_switch(&e, MAIN, 10); /* t 20: CO yields to main (seen first now) */
	ev_exit(&e, 1, 10);	 /* t 30 in main: closes F and A */
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	expect(p, "t.lua:1", 1, 30, 10);
	expect(p, "coroutine.resume", 1, 20, 10);
	expect(p, "t.lua:10", 1, 10, 10);
	profile_free(p);
}

Test(profile, unmatched_exit_counted)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_exit(&e, 3, 0); /* a frame entered before attach */
	ev_enter(&e, 1, A, 5);
	ev_exit(&e, 1, 5);
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	cr_assert_eq(p->calls.unmatched_exits, 1);
	expect(p, "t.lua:1", 1, 5, 5);
	profile_free(p);
}

Test(profile, call_tree_nodes)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);
	ev_enter(&e, 2, B, 10);
	ev_exit(&e, 2, 5);
	ev_enter(&e, 2, B, 5);
	ev_exit(&e, 2, 5);
	ev_enter(&e, 2, C, 5);
	ev_exit(&e, 2, 5);
	ev_exit(&e, 1, 5);
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	cr_assert_eq(p->calls.nnode, 4, "root, A, A>B, A>C");
	for (size_t i = 1; i < p->calls.nnode; i++) {
		const struct calls_node *n = &p->calls.nodes[i];
		const char *name = p->fns[n->fn].name;
		if (!strcmp(name, "t.lua:10")) {
			cr_assert_eq(n->calls, 2);
			cr_assert_eq(profile_ns(p, n->self), 10);
			cr_assert_str_eq(
			    p->fns[p->calls.nodes[n->parent].fn].name,
			    "t.lua:1");
		} else if (!strcmp(name, "t.lua:1")) {
			cr_assert_eq(n->parent, 0);
			cr_assert_eq(profile_ns(p, n->self), 25);
		}
	}
	profile_free(p);
}

/* -- Allocations ------------------------------------------------------------------------- */

/* Test thread. Site of fn at line, or NULL. */
static const struct heap_site *site(const struct profile *p, const char *name,
				    uint64_t line)
{
	for (size_t i = 0; i < p->heap.nsite; i++) {
		const struct heap_site *s = &p->heap.sites[i];
		if (!strcmp(p->fns[s->fn].name, name) && s->line == line)
			return s;
	}
	return NULL;
}

/* Version 6: a trace site is the TRACE and where in its code; the snapshot
** there gives the function and line, the trace itself stands when it is
** not known. */
Test(profile, trace_site_resolved_through_snapshots)
{
	enum { T = 30 };
	struct lblog l;
	struct lbmap m;
	struct lbev e;
	/* snapshot 0 at +0: C at line 21; snapshot 1 at +40: A (line 3)
	** inlined into C (line 22); snapshot 2 at +60: no frames known. */
	const uint64_t snaps[] = {0, 1, C, 21, 40, 2, C, 22, A, 3, 60, 0};
	begin(&l);
	map_begin(&m, VM);
	map_trace_snaps(&m, T, 3, C, 21, 0, 3, snaps);
	lblog_mapping(&l, &m);
	ev_begin(&e);
	ev_alloc(&e, FORMAT_SITE_TRACE, T, 1 + 50, 100, 0x1000, 1);
	ev_alloc(&e, FORMAT_SITE_TRACE, T, 1 + 40, 100, 0x2000, 1);
	ev_alloc(&e, FORMAT_SITE_TRACE, T, 1 + 39, 10, 0x3000, 1);
	ev_alloc(&e, FORMAT_SITE_TRACE, T, 0, 7, 0x4000, 1);
	ev_alloc(&e, FORMAT_SITE_TRACE, T, 1 + 60, 5, 0x5000, 1);
	ev_alloc(&e, FORMAT_SITE_TRACE, 0, 0, 3, 0x6000, 1);
	ev_realloc(&e, FORMAT_SITE_TRACE, T, 1 + 45, 0x3000, 10, 0x7000, 20, 1);
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	const struct heap_site *s = site(p, "t.lua:1", 3);
	cr_assert_not_null(s, "the inlined function's line");
	cr_assert_eq(s->alloc_count, 3);
	cr_assert_eq(s->alloc_bytes, 220);
	s = site(p, "stdin:20", 21);
	cr_assert_not_null(s, "the function the trace started in");
	cr_assert_eq(s->alloc_bytes, 10);
	cr_assert_eq(s->free_bytes, 10, "the REALLOC's old half");
	s = site(p, "trace 3 (started at line 21)", 0);
	cr_assert_not_null(s, "an unknown offset: the trace, never a line");
	cr_assert_eq(s->alloc_bytes, 7 + 5);
	cr_assert_str_eq(p->fns[s->fn].file, "stdin");
	cr_assert_eq(fn(p, "(trace)")->alloc_bytes, 3);
	cr_assert_null(site(p, "stdin:20", 0));
	profile_free(p);
}

/* Version 19: a trace site's line is its snapshot's line for what the
** code called (a table constructor, a key insertion), else its aline, in
** the snapshot's innermost frame or (up) in that frame's caller, 0 when
** not known; before, the innermost frame's line. */
Test(profile, trace_site_line_is_the_snapshots_allocation_line)
{
	enum { T = 30 };
	/* snapshot 0 at +0: C at 21, its tables on 24 and its new keys on
	** 26 (anything: not known); snapshot 1 at +40: A (line 3) inlined
	** into C (line 22), at A's return: C allocates on 25 after it;
	** snapshot 2 at +60: C at 23, line not known. */
	const uint64_t snaps[] = {0,  1, C, 21, 40, 2, C,
				  22, A, 3, 60, 1,  C, 23};
	const uint64_t alines[] = {0, 24, 26, 2 * 25 + 1, 0, 0, 0, 0, 0};
	for (uint64_t v = 18; v <= 19; v++) {
		struct lblog l;
		struct lbmap m;
		struct lbev e;
		begin_version(&l, v);
		map_begin(&m, VM);
		m.version = v;
		map_trace_snaps_al(&m, T, 3, C, 21, 0, 3, snaps, alines);
		lblog_mapping(&l, &m);
		ev_begin(&e);
		e.version = v;
		e.call = FORMAT_CALL_TABLE;
		ev_alloc(&e, FORMAT_SITE_TRACE, T, 1 + 10, 100, 0x1000, 1);
		e.call = FORMAT_CALL_NEWKEY;
		ev_alloc(&e, FORMAT_SITE_TRACE, T, 1 + 10, 1000, 0x5000, 1);
		e.call = FORMAT_CALL_ANY;
		ev_alloc(&e, FORMAT_SITE_TRACE, T, 1 + 10, 5, 0x9000, 1);
		ev_alloc(&e, FORMAT_SITE_TRACE, T, 1 + 45, 10, 0x2000, 1);
		e.call = FORMAT_CALL_TABLE; /* no tline there: its aline */
		ev_alloc(&e, FORMAT_SITE_TRACE, T, 1 + 70, 1, 0x3000, 1);
		lblog_events(&l, VM, 0, &e);
		struct profile *p = load(&l, 1, 0);
		if (v == 19) {
			cr_assert_eq(site(p, "stdin:20", 24)->alloc_bytes, 100,
				     "the table constructor's line");
			cr_assert_eq(site(p, "stdin:20", 26)->alloc_bytes, 1000,
				     "the new key's line");
			cr_assert_eq(site(p, "stdin:20", 25)->alloc_bytes, 10,
				     "the caller's line, after A returned");
			cr_assert_eq(site(p, "stdin:20", 0)->alloc_bytes, 5 + 1,
				     "not known: no line");
			cr_assert_null(site(p, "t.lua:1", 3));
			cr_assert_null(site(p, "stdin:20", 21));
		} else {
			cr_assert_eq(site(p, "stdin:20", 21)->alloc_bytes,
				     100 + 1000 + 5);
			cr_assert_eq(site(p, "t.lua:1", 3)->alloc_bytes, 10);
			cr_assert_eq(site(p, "stdin:20", 23)->alloc_bytes, 1);
		}
		profile_free(p);
	}
	/* up in a snapshot of one frame: corrupt. */
	struct lblog l;
	struct lbmap m;
	begin(&l);
	map_begin(&m, VM);
	map_trace_snaps_al(&m, T, 3, C, 21, 0, 1, snaps,
			   (const uint64_t[]){2 * 24 + 1, 0, 0});
	lblog_mapping(&l, &m);
	profile_free(load(&l, 1, -EBADMSG));
}

/* Version 6: a trace site names a TRACE, not a PROTO. */
Test(profile, trace_site_must_be_a_trace)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_alloc(&e, FORMAT_SITE_TRACE, C, 20, 4, 0x6000, 1);
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, -EBADMSG);
	profile_free(p);
}

Test(profile, free_attributed_to_allocating_site)
{
	struct lblog l;
	struct lbev e;
	begin_version(&l, 5); /* a trace site names a PROTO before version 6 */
	ev_begin(&e);
	e.version = 5;
	ev_vm(&e, FORMAT_VM_ATTACH, 1000, 0);
	ev_alloc(&e, FORMAT_SITE_LUA, A, 5, 100, 0x1000, 1);
	ev_alloc(&e, FORMAT_SITE_C, X, 0, 50, 0x2000, 1);
	ev_free(&e, 0x1000, 100, 1);
	ev_realloc(&e, FORMAT_SITE_LUA, B, 12, 0x2000, 50, 0x3000, 80, 1);
	ev_free(&e, 0x9999, 10, 1);
	ev_alloc(&e, FORMAT_SITE_GC, 0, 0, 16, 0x4000, 1);
	ev_free(&e, 0x3000, 80, 1);
	ev_alloc(&e, FORMAT_SITE_TRACE, 0, 0, 8, 0x5000, 1);
	ev_alloc(&e, FORMAT_SITE_TRACE, C, 20, 4, 0x6000, 1);
	ev_vm(&e, FORMAT_VM_DETACH, 1234, 1);
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	const struct profile_fn *f = fn(p, "t.lua:1");
	cr_assert_eq(f->alloc_count, 1);
	cr_assert_eq(f->alloc_bytes, 100);
	cr_assert_eq(f->free_count, 1);
	cr_assert_eq(f->free_bytes, 100);
	f = fn(p, "pcall");
	cr_assert_eq(f->alloc_bytes, 50);
	cr_assert_eq(f->free_count, 1, "the REALLOC's old half is pcall's");
	cr_assert_eq(f->free_bytes, 50);
	f = fn(p, "t.lua:10");
	cr_assert_eq(f->alloc_count, 1);
	cr_assert_eq(f->alloc_bytes, 80);
	cr_assert_eq(f->free_bytes, 80);
	f = fn(p, "(before attach)");
	cr_assert_eq(f->free_count, 1);
	cr_assert_eq(f->free_bytes, 10);
	cr_assert_eq(f->kind, FNID_INTERNAL);
	cr_assert_eq(fn(p, "(gc)")->alloc_bytes, 16);
	cr_assert_eq(fn(p, "(trace)")->alloc_bytes, 8);
	cr_assert_eq(fn(p, "stdin:20")->alloc_bytes, 4, "a trace with a PROTO");

	const struct profile_vm *v = &p->vms[0];
	cr_assert_eq(v->heap_attach, 1000,
		     "the ATTACH event, not the VM record");
	cr_assert_eq(v->alloc_bytes, 100 + 50 + 80 + 16 + 8 + 4);
	cr_assert_eq(v->free_bytes, 100 + 50 + 10 + 80);
	cr_assert_eq(v->live, 1000 + 258 - 240);
	cr_assert_eq(v->peak, 1000 + 150);
	cr_assert_eq(v->heap_detach, 1234);

	/* Sites keep the line. */
	int found = 0;
	for (size_t i = 0; i < p->heap.nsite; i++) {
		const struct heap_site *s = &p->heap.sites[i];
		if (!strcmp(p->fns[s->fn].name, "t.lua:10")) {
			cr_assert_eq(s->line, 12);
			cr_assert_eq(s->alloc_bytes, 80);
			found = 1;
		}
	}
	cr_assert(found);
	profile_free(p);
}

Test(profile, heap_attach_from_vm_record)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_alloc(&e, FORMAT_SITE_INTERNAL, 0, 0, 10, 0x10, 1);
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	cr_assert_eq(p->vms[0].heap_attach, 900);
	cr_assert_eq(p->vms[0].live, 910);
	cr_assert_eq(fn(p, "(internal)")->alloc_bytes, 10);
	profile_free(p);
}

/* -- GC ---------------------------------------------------------------------------------- */

Test(profile, gc_cycles_and_phases)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_gc(&e, FORMAT_GC_PAUSE, 100, 0);	  /* t 0 */
	ev_gc(&e, FORMAT_GC_PROPAGATE, 200, 10);  /* t 10: cycle 1 */
	ev_gc(&e, FORMAT_GC_ATOMIC, 300, 10);	  /* t 20 */
	ev_gc(&e, FORMAT_GC_SWEEPSTRING, 250, 5); /* t 25 */
	ev_gc(&e, FORMAT_GC_SWEEP, 240, 5);	  /* t 30 */
	ev_gc(&e, FORMAT_GC_FINALIZE, 150, 10);	  /* t 40 */
	ev_gc(&e, FORMAT_GC_PAUSE, 120, 5);	  /* t 45 */
	ev_gc(&e, FORMAT_GC_PROPAGATE, 500, 55);  /* t 100: cycle 2 */
	ev_gc(&e, FORMAT_GC_PAUSE, 110, 50);	  /* t 150 */
	ev_vm(&e, FORMAT_VM_DETACH, 110, 50);	  /* t 200 */
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	cr_assert_eq(p->heap.gc.cycles, 2);
	cr_assert_eq(profile_ns(p, p->heap.gc.phase[FORMAT_GC_PAUSE]),
		     10 + 55 + 50);
	cr_assert_eq(profile_ns(p, p->heap.gc.phase[FORMAT_GC_PROPAGATE]),
		     10 + 50);
	cr_assert_eq(profile_ns(p, p->heap.gc.phase[FORMAT_GC_ATOMIC]), 5);
	cr_assert_eq(profile_ns(p, p->heap.gc.phase[FORMAT_GC_SWEEPSTRING]), 5);
	cr_assert_eq(profile_ns(p, p->heap.gc.phase[FORMAT_GC_SWEEP]), 10);
	cr_assert_eq(profile_ns(p, p->heap.gc.phase[FORMAT_GC_FINALIZE]), 5);
	cr_assert_eq(p->heap.gc.peak_heap, 500);
	cr_assert_eq(p->heap.gc.events, 9);
	profile_free(p);
}

/* -- Counts and time --------------------------------------------------------------------- */

Test(profile, counts_and_two_vms)
{
	struct lblog l;
	struct lbev e;
	struct lbmap m;
	begin(&l);
	map_begin(&m, 20);
	map_vm(&m, 20, 556, 0, FORMAT_VM_JIT_OFF);
	map_co(&m, 21, FORMAT_CO_MAIN);
	map_proto(&m, 22, "@t.lua", 1, 5); /* same identity as A, other VM */
	lblog_mapping(&l, &m);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);
	ev_exit(&e, 1, 10);
	lblog_events(&l, VM, 0, &e);
	ev_begin(&e);
	ev_enter(&e, 1, 22, 0);
	ev_exit(&e, 1, 7);
	ev_switch(&e, 21, 1);
	lblog_events(&l, 20, 5, &e);
	struct profile *p = load(&l, 1, 0);
	cr_assert_eq(p->nvm, 2);
	cr_assert_eq(p->events, 5);
	cr_assert_eq(p->coroutines, 3);
	cr_assert_eq(p->vms[0].events, 2);
	cr_assert_eq(p->vms[1].events, 3);
	cr_assert_eq(p->vms[1].thread, 556);
	cr_assert_eq(p->vms[1].coroutines, 1);
	expect(p, "t.lua:1", 2, 17, 17);
	cr_assert(p->have_end);
	cr_assert_eq(p->pid, 99);
	cr_assert_str_eq(p->exe, "/usr/bin/luajit");
	profile_free(p);
}

Test(profile, time_base_from_clock_pairs)
{
	struct lblog l;
	struct lbev e;
	lblog_init(&l);
	l.clock_scale = 3; /* 1 counter tick = 3 ns */
	l.ts_shift = 2;	   /* 1 ts unit = 4 ticks */
	lblog_intro(&l, 1);
	struct lbmap m;
	map_begin(&m, VM);
	map_vm(&m, VM, 1, 0, 0);
	map_proto(&m, A, "@t.lua", 1, 5);
	lblog_mapping(&l, &m);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);
	ev_exit(&e, 1, 10);
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	cr_assert_eq(p->timebase, PROFILE_TB_CLOCKS);
	expect(p, "t.lua:1", 1, 120, 120);
	cr_assert_eq(p->duration_ns, 3 * 2000,
		     "INTRO clock 0 to END clock 2000");
	profile_free(p);

	/* Only the INTRO clock (a log cut early): counter_hz. */
	lblog_init(&l);
	l.counter_kind = FORMAT_COUNTER_TSC;
	l.counter_hz = 500000000; /* 2 ns a tick */
	lblog_intro(&l, 1);
	p = load(&l, 0, -ENODATA);
	cr_assert_eq(p->timebase, PROFILE_TB_HZ);
	cr_assert_eq(profile_ns(p, 10), 20);
	profile_free(p);

	/* Nothing at all: 1 tick = 1 ns, with a warning. */
	lblog_init(&l);
	l.counter_kind = FORMAT_COUNTER_TSC;
	l.counter_hz = 0;
	lblog_intro(&l, 1);
	p = load(&l, 0, -ENODATA);
	cr_assert_eq(p->timebase, PROFILE_TB_ASSUMED);
	cr_assert_eq(profile_ns(p, 10), 10);
	cr_assert_gt(p->nwarn, 0);
	cr_assert_not_null(strstr(p->warnings[p->nwarn - 1], "1 tick = 1 ns"));
	profile_free(p);
}

/* Test thread. A log of one call of A lasting 10 ticks, its ticks 3 ns
** by its CLOCK pairs and 1e9 / hz ns by its counter_hz (a calibration gone
** wrong unless hz is 333333333), with or without its END; written to a
** file, path returned (malloc'd). */
static char *scaled_log(uint64_t hz, int with_end)
{
	struct lblog l;
	struct lbev e;
	struct lbmap m;
	lblog_init(&l);
	l.counter_kind = FORMAT_COUNTER_TSC;
	l.counter_hz = hz;
	l.clock_scale = 3;
	lblog_intro(&l, 1);
	map_begin(&m, VM);
	map_vm(&m, VM, 1, 0, 0);
	map_proto(&m, A, "@t.lua", 1, 5);
	lblog_mapping(&l, &m);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);
	ev_exit(&e, 1, 10);
	lblog_events(&l, VM, 0, &e);
	if (with_end)
		lblog_end(&l);
	char *path = strdup(lblog_write(&l));
	lblog_free(&l);
	return path;
}

/* Bug: a merge converted each log's ticks by its INTRO's counter_hz, and
** the log on its own by its CLOCK pairs; under a loaded sanitizer run the
** two were 0.16% apart and the merged self times were not the sums. The
** merged CLOCK pairs' counters, converted by that rate, also set the
** profile's time base, scaling every log by whichever logs held the first
** and the last pair. */
Test(profile, merged_time_base_is_each_logs_own)
{
	char *full = scaled_log(1000000000, 1),
	     *cut = scaled_log(1000000000, 0);
	char *right = scaled_log(333333333, 1), err[512];
	struct profile *p;
	cr_assert_eq(profile_load(full, PROFILE_CALLTREE, &p, err, sizeof err),
		     0, "%s", err);
	expect(p, "t.lua:1", 1, 30, 30);
	profile_free(p);

	const char *two[] = {full, right};
	cr_assert_eq(profile_new(&p, PROFILE_CALLTREE), 0);
	cr_assert_eq(profile_decode_logs(p, two, 2, NULL, err, sizeof err), 0,
		     "%s", err);
	expect(p, "t.lua:1", 2, 60, 60);
	profile_free(p);

	/* A log cut before its END: its INTRO's and its EVENTS' pairs. */
	cr_assert_eq(profile_load(cut, PROFILE_CALLTREE, &p, err, sizeof err),
		     -ENODATA, "%s", err);
	expect(p, "t.lua:1", 1, 30, 30);
	profile_free(p);
	const char *mixed[] = {full, cut};
	cr_assert_eq(profile_new(&p, PROFILE_CALLTREE), 0);
	cr_assert_eq(profile_decode_logs(p, mixed, 2, NULL, err, sizeof err),
		     -ENODATA, "%s", err);
	expect(p, "t.lua:1", 2, 60, 60);
	profile_free(p);
	unlink(full);
	unlink(cut);
	unlink(right);
	free(full);
	free(cut);
	free(right);
}

Test(profile, sorted_by_self_then_alloc)
{
	struct lblog l;
	struct lbev e;
	begin(&l);
	ev_begin(&e);
	ev_enter(&e, 1, A, 0);
	ev_enter(&e, 2, B, 5);
	ev_exit(&e, 2, 30);
	ev_exit(&e, 1, 5);
	ev_alloc(&e, FORMAT_SITE_GC, 0, 0, 10, 0x10, 0);
	ev_alloc(&e, FORMAT_SITE_JIT, 0, 0, 20, 0x20, 0);
	lblog_events(&l, VM, 0, &e);
	struct profile *p = load(&l, 1, 0);
	uint32_t *ix = profile_sorted_fns(p);
	cr_assert_str_eq(p->fns[ix[0]].name, "t.lua:10");
	cr_assert_str_eq(p->fns[ix[1]].name, "t.lua:1");
	cr_assert_str_eq(p->fns[ix[2]].name, "(jit)");
	cr_assert_str_eq(p->fns[ix[3]].name, "(gc)");
	free(ix);
	profile_free(p);
}
