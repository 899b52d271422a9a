/*
** Unit tests: the SIGPROF handler's capture (src/stat/sample_signal.c) on a
** fake interrupted context, over a real VM's stack that the test fills with
** genuine frames and with hostile ones (register values that are no
** addresses, function slots that lead nowhere). Each must give the frames
** that are there, or none, and never read through an unchecked pointer.
*/
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <string.h>
#include <ucontext.h>

#include "lualib.h"
#include "stat/sample_int.h"

/* A VM, a sampler record for it, and an interrupted context that sits in
** the interpreter's code (the handler then reads BASE and PC registers). */
struct rig {
	lua_State *L;
	global_State *g;
	int32_t vmstate;
	struct sample_vm s;
	struct sample_entry e;
	ucontext_t uc;
	TValue *free; /* first of the stack slots above L->top the test uses */
};

static struct rig R;

#define NFREE  32
#define RIP_VM 0x18000

/* The interrupted context's registers that the handler reads, as
** sample_signal.c maps them (LuaJIT's vm_x64.dasc, vm_arm64.dasc). */
#if defined(__aarch64__)
#define SET_IP(v)   (R.uc.uc_mcontext.pc = (v))
#define SET_VM()    (R.uc.uc_mcontext.regs[22] = (uintptr_t)R.g)
#define SET_BASE(v) (R.uc.uc_mcontext.regs[19] = (v))
#define SET_PC(v)   (R.uc.uc_mcontext.regs[21] = (v))
#else
#define SET_IP(v) (R.uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(v))
#define SET_VM()                                                               \
	(R.uc.uc_mcontext.gregs[REG_R14] =                                     \
	     (greg_t)(uintptr_t)G2GG(R.g)->dispatch)
#define SET_BASE(v) (R.uc.uc_mcontext.gregs[REG_RDX] = (greg_t)(v))
#define SET_PC(v)   (R.uc.uc_mcontext.gregs[REG_RBX] = (greg_t)(v))
#endif

/* Test thread. Set R up: a fresh VM, its state "in the interpreter". */
static void rig_init(void)
{
	memset(&R, 0, sizeof R);
	R.L = luaL_newstate();
	cr_assert_not_null(R.L);
	luaL_openlibs(R.L);
	lua_checkstack(R.L, NFREE + 8);
	R.g = G(R.L);
	R.s.g = R.g;
	cr_assert_eq(unwind_stack_bounds(&R.s.stack_lo, &R.s.stack_hi), 0);
	R.s.vm_lo = RIP_VM - 0x1000;
	R.s.vm_hi = RIP_VM + 0x1000;
	SET_IP(RIP_VM);
	SET_VM();
	setgcref(R.g->cur_L, obj2gco(R.L));
	R.vmstate = R.g->vmstate;
	R.g->vmstate = ~LJ_VMST_INTERP;
}

/* Test thread. The scratch slots: above everything on the stack. */
static TValue *scratch(void)
{
	TValue *o = R.L->top + 2;
	cr_assert(o + NFREE <= tvref(R.L->stack) + R.L->stacksize);
	for (int i = 0; i < NFREE; i++)
		setnilV(&o[i]);
	R.free = o;
	return o;
}

/* Test thread. Undo rig_init. */
static void rig_fini(void)
{
	if (R.free)
		for (int i = 0; i < NFREE; i++)
			setnilV(&R.free[i]);
	R.g->vmstate = R.vmstate;
	lua_close(R.L);
}

TestSuite(sample, .init = rig_init, .fini = rig_fini);

/* Test thread. One capture with BASE = base and PC = pc; the Lua frames
** read. */
static unsigned capture(uintptr_t base, uintptr_t pc)
{
	SET_BASE(base);
	SET_PC(pc);
	R.e.nlua = 0xffff;
	sample_capture(&R.s, &R.e, &R.uc);
	cr_assert_eq(R.e.state, FORMAT_STATE_INTERP);
	return R.e.nlua;
}

/* Test thread. Compile src and leave the function on the stack; its
** GCfunc. */
static GCfunc *compile(const char *src)
{
	cr_assert_eq(luaL_loadstring(R.L, src), 0, "%s", lua_tostring(R.L, -1));
	return (GCfunc *)(uintptr_t)lua_topointer(R.L, -1);
}

/* Test thread. The frame link of a C frame that leads to the stack's
** bottom (its first slot after the GC64 dummy, where the walk ends: the
** thread's root), from the frame at link. */
static void link_bottom(TValue *link)
{
	uintptr_t lo = (uintptr_t)(tvref(R.L->stack) + LJ_FR2);
	link->u64 = (uint64_t)FRAME_C + ((uintptr_t)link - lo);
}

/* Test thread. Store function fn in slot o (GC64: a tagged value). */
static void set_fn(TValue *o, const void *fn)
{
	o->it64 = ((uint64_t)LJ_TFUNC << 47) | (uint64_t)(uintptr_t)fn;
}

/* A Lua function whose bytecode pointer leads nowhere: funcproto() of it
** is 8 - sizeof(GCproto), no object. */
static GCfunc *fake_fn(uintptr_t pc)
{
	static GCfunc fake;
	memset(&fake, 0, sizeof fake);
	fake.l.gct = (uint8_t)~LJ_TFUNC;
	fake.l.ffid = FF_LUA;
	fake.l.pc.ptr64 = pc;
	return &fake;
}

/* Three lines: instruction 2 (KSHORT b) is on line 2. */
static const char chunk3[] = "local a = 1\nlocal b = 2\nreturn a + b\n";

/* The rig reaches the walk: a genuine top frame is read, with its line.
** (Without this, the tests below could pass by never walking.) */
Test(sample, genuine_top_frame_is_read)
{
	GCfunc *fn = compile(chunk3);
	GCproto *pt = funcproto(fn);
	TValue *o = scratch();
	set_fn(&o[0], fn);
	link_bottom(&o[1]);
	cr_assert_eq(capture((uintptr_t)&o[2], (uintptr_t)(proto_bc(pt) + 3)),
		     1);
	cr_expect_eq(R.e.lua[0].kind, MAPPER_PROTO);
	cr_expect_eq(R.e.lua[0].key, (uintptr_t)pt);
	cr_expect_eq(R.e.lua[0].line, 2);
	/* A PC outside the function's bytecode: no frames, no guess. */
	cr_expect_eq(capture((uintptr_t)&o[2], (uintptr_t)proto_bc(pt)), 0);
	cr_expect_eq(capture((uintptr_t)&o[2], 1), 0);
}

/* BASE holds a C argument or a number (the first report: base 0x1, and
** base - 1 slot overflowed): no frames. */
Test(sample, base_register_not_in_stack)
{
	uintptr_t stack = (uintptr_t)tvref(R.L->stack);
	uintptr_t end = stack + R.L->stacksize * sizeof(TValue);
	uintptr_t bad[] = {1,
			   8,
			   4096,
			   stack,
			   stack + 8,
			   stack + 3 * 8 + 3,
			   end + 8,
			   (uintptr_t)-8,
			   (uintptr_t)1 << 47,
			   (uintptr_t)&R};
	scratch();
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_expect_eq(capture(bad[i], 0x1234), 0, "base %#lx",
			     (unsigned long)bad[i]);
}

/* A function-tagged slot whose payload is no address (a half-written or
** stale slot): read nothing through it. */
Test(sample, function_slot_payload_not_an_address)
{
	TValue *o = scratch();
	uintptr_t bad[] = {0x10, 0x1001, 4095};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		set_fn(&o[0], (const void *)bad[i]);
		link_bottom(&o[1]);
		cr_expect_eq(capture((uintptr_t)&o[2], 0), 0, "payload %#lx",
			     (unsigned long)bad[i]);
	}
}

/* A Lua function whose bytecode pointer is no prototype's: the top frame
** is not read (funcproto would point below address 0, or at a block
** that is not a GCproto). */
Test(sample, function_bytecode_pointer_not_a_prototype)
{
	static uint64_t junk[64];
	TValue *o = scratch();
	uintptr_t bad[] = {8, 0, (uintptr_t)-4,
			   (uintptr_t)&junk[32],      /* readable, no GCproto */
			   (uintptr_t)&junk[32] + 4}; /* and misaligned */
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		set_fn(&o[0], fake_fn(bad[i]));
		link_bottom(&o[1]);
		cr_expect_eq(capture((uintptr_t)&o[2], bad[i] + 4), 0,
			     "l.pc %#lx", (unsigned long)bad[i]);
		cr_expect_eq(capture((uintptr_t)&o[2], 0), 0, "l.pc %#lx",
			     (unsigned long)bad[i]);
	}
}

/* The caller of a Lua frame is found by its CALL: the candidates below the
** callee are tried one by one, hostile ones among them. */
Test(sample, caller_found_past_hostile_candidates)
{
	GCfunc *caller = compile("local a, b, c = 1, 2, 3\n"
				 "local f = ...\n"
				 "f()\n"
				 "return a + b + c\n");
	GCproto *cpt = funcproto(caller);
	GCfunc *callee = compile(chunk3);
	GCproto *pt = funcproto(callee);
	const BCIns *cbc = proto_bc(cpt);
	BCPos call = 0;
	while (call < cpt->sizebc && bc_op(cbc[call]) != BC_CALL)
		call++;
	cr_assert_lt(call, cpt->sizebc, "no CALL in the caller");
	unsigned ra = bc_a(cbc[call]);
	cr_assert_geq(ra, 2, "the CALL's A leaves no room for a candidate");

	/* Caller: function at o[0], link o[1], base o[2]; its CALL's
	** register A holds the callee, A + 1 the callee's link. */
	TValue *o = scratch();
	set_fn(&o[0], caller);
	link_bottom(&o[1]);
	TValue *cbase = &o[2];
	set_fn(&cbase[ra], callee);
	cbase[ra + 1].u64 = (uint64_t)(uintptr_t)&cbc[call + 1]; /* FRAME_LUA */
	uintptr_t base = (uintptr_t)&cbase[ra + 2];
	uintptr_t pc = (uintptr_t)(proto_bc(pt) + 3);

	cr_assert_eq(capture(base, pc), 2);
	cr_expect_eq(R.e.lua[1].key, (uintptr_t)cpt);
	cr_expect_eq(R.e.lua[1].line, 3);

	/* A hostile candidate nearer than the caller (tried first): a Lua
	** function whose bytecode pointer leads nowhere; then one whose
	** payload is no address. The caller is still found. */
	set_fn(&cbase[ra - 2], fake_fn(8));
	cr_expect_eq(capture(base, pc), 2);
	set_fn(&cbase[ra - 2], (const void *)0x18);
	cr_expect_eq(capture(base, pc), 2);

	/* A return PC that is a number, or points into no caller's
	** bytecode: no frames. (It gave the callee alone, a stack from no
	** root: "select" or "coroutine.resume" as a sample's outermost
	** frame, found by tests/e2e/stackedges.sh.) */
	cbase[ra + 1].u64 = 0x1000; /* FRAME_LUA, but no PC */
	cr_expect_eq(capture(base, pc), 0);
	cbase[ra + 1].u64 = (uint64_t)(uintptr_t)(proto_bc(pt) + 1);
	cr_expect_eq(capture(base, pc), 0);
}

/* A frame whose link leads below the stack's bottom is no frame of a
** whole stack: while coroutine.resume returned, its link slot held a
** result, true (a vararg frame as large as the address space, by its
** type bits), and the sample came out as "coroutine.resume" alone, from
** no root (tests/e2e/stackedges.sh). A C frame as large as the stack
** is the same. No frames. */
Test(sample, link_that_leads_below_the_bottom_gives_no_stack)
{
	GCfunc *fn = compile(chunk3);
	GCproto *pt = funcproto(fn);
	TValue *o = scratch();
	uintptr_t pc = (uintptr_t)(proto_bc(pt) + 3);
	set_fn(&o[0], fn);
	link_bottom(&o[1]);
	cr_assert_eq(capture((uintptr_t)&o[2], pc), 1, "the rig's stack");
	setboolV(&o[1], 1);
	cr_expect_eq(capture((uintptr_t)&o[2], pc), 0, "link: true");
	o[1].u64 = (uint64_t)FRAME_C + ((uint64_t)R.L->stacksize << 3);
	cr_expect_eq(capture((uintptr_t)&o[2], pc), 0,
		     "link: a C frame "
		     "as large as the stack");
}

/* The helper's wake-up: SAMPLE_BATCH signals at the rate seen, within
** SAMPLE_WAKE_FEW and SAMPLE_WAKE_MANY intervals. */
/* The ring holds 100 ms of wall-clock samples (the helper may wait that
** long for a core: realprogs lost 609 of 1064 at 250us with 128 entries);
** CPU-time timers keep SAMPLE_RING, which a kernel tick bounds. */
Test(sample, ring_holds_100ms_of_wall_clock_samples)
{
	const uint64_t us = 1000;
	cr_assert_eq(sample_ring_cap(1000 * us, 0), SAMPLE_RING);
	cr_assert_eq(sample_ring_cap(10 * us, 0), SAMPLE_RING);
	cr_assert_eq(sample_ring_cap(1000 * us, 1), 128);
	cr_assert_eq(sample_ring_cap(250 * us, 1), 512);
	cr_assert_eq(sample_ring_cap(100 * us, 1), 1024);
	cr_assert_eq(sample_ring_cap(10 * us, 1), SAMPLE_RING_MAX);
}

Test(sample, helper_wakes_for_a_batch_at_the_rate_seen)
{
	struct sample_vm s;
	const uint64_t ms = 1000000;
	memset(&s, 0, sizeof s);
	s.interval_ns = ms;
	uint64_t t = 1000 * ms;
	cr_expect_eq(sample_wake_after(&s, t), SAMPLE_WAKE_FEW * ms,
		     "first look: soon");
	t += 16 * ms; /* nothing came */
	cr_expect_eq(sample_wake_after(&s, t), SAMPLE_WAKE_MANY * ms);
	s.signals += 8; /* a CPU timer at a 250 Hz tick: one per 4 ms */
	t += 32 * ms;
	cr_expect_eq(sample_wake_after(&s, t), SAMPLE_WAKE_MANY * ms,
		     "a batch would take 128 ms: capped");
	s.signals += 64; /* a wall timer: one per interval */
	t += 64 * ms;
	cr_expect_eq(sample_wake_after(&s, t), SAMPLE_BATCH * ms);
	s.signals += 640; /* faster than the timer can fire */
	t += 64 * ms;
	cr_expect_eq(sample_wake_after(&s, t), SAMPLE_WAKE_FEW * ms);
}

/* -- The profile check a trace's code stops at ------------------------------- */

#if defined(__aarch64__)
#define TEST_DISP 0x2f0	      /* the hook mask's offset in global_State */
#define FILLER	  0xd503201fu /* nop */

/* Test thread. Write the arm64 check (ldrb w30, [x22, #disp]; tst w30,
** #HOOK_PROFILE; b.ne) at code + at. */
static void put_check(uint8_t *code, size_t at, int32_t disp)
{
	uint32_t w[3] = {0x39400000u | (uint32_t)disp << 10 | 22u << 5 | 30u,
			 0x721903dfu, 0x54000001u};
	memcpy(code + at, w, sizeof w);
}

/* Test thread. The check at code + at tests another bit (tst w30, #0x40). */
static void spoil_bit(uint8_t *code, size_t at)
{
	uint32_t w = 0x721a03dfu;
	memcpy(code + at + 4, &w, 4);
}

/* Test thread. The check at code + at reads through another register
** (x21). */
static void spoil_reg(uint8_t *code, size_t at)
{
	code[at] = (uint8_t)((code[at] & 0x1f) | (21u & 7) << 5);
	code[at + 1] = (uint8_t)((code[at + 1] & ~3u) | 21u >> 3);
}
#else
#define TEST_DISP -0xeef      /* the hook mask from the dispatch table */
#define FILLER	  0x90909090u /* nop */

/* Test thread. Write the x64 check (test byte [r14+disp32], HOOK_PROFILE;
** jnz) at code + at. */
static void put_check(uint8_t *code, size_t at, int32_t disp)
{
	const uint8_t head[] = {0x41, 0xf6, 0x86};
	memcpy(code + at, head, sizeof head);
	memcpy(code + at + 3, &disp, 4);
	code[at + 7] = HOOK_PROFILE;
	code[at + 8] = 0x0f, code[at + 9] = 0x85; /* jnz rel32 */
}

/* Test thread. The check at code + at tests another bit. */
static void spoil_bit(uint8_t *code, size_t at)
{
	code[at + 7] = 0x40;
}

/* Test thread. The check at code + at reads through another register
** (ModRM rm 111). */
static void spoil_reg(uint8_t *code, size_t at)
{
	code[at + 2] = 0x87;
}
#endif

/* Test thread. Fill code with no-ops. */
static void fill(uint8_t *code, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i += 4)
		memcpy(code + i, &(uint32_t){FILLER}, 4);
}

/* sample_next_check on code made up for it: the check on from an address,
** round a loop (to mcloop, or to the start when the trace links to
** itself), the code's end when the trace leaves, 0 without checks. Code
** that only looks like a check (another displacement, another mask bit,
** another register) is none. */
Test(sample, next_check_in_machine_code)
{
	const int32_t disp = TEST_DISP;
	_Alignas(4) uint8_t code[400];
	fill(code, sizeof code);
	put_check(code, 40, disp);
	put_check(code, 120, disp);
	put_check(code, 300, disp);
	put_check(code, 200, disp + 1); /* another displacement */
	put_check(code, 220, disp);
	spoil_bit(code, 220);
	put_check(code, 240, disp);
	spoil_reg(code, 240);
	GCtrace T;
	memset(&T, 0, sizeof T);
	T.mcode = code;
	T.szmcode = sizeof code;
	T.traceno = 3;
	T.link = 3;
	T.linktype = LJ_TRLINK_LOOP;
	T.mcloop = 100;
	uintptr_t c = (uintptr_t)code;
	cr_assert_eq(sample_next_check(&T, disp, c + 0), c + 40);
	cr_assert_eq(sample_next_check(&T, disp, c + 40), c + 40);
	cr_assert_eq(sample_next_check(&T, disp, c + 41), c + 120);
	cr_assert_eq(sample_next_check(&T, disp, c + 130), c + 300);
	/* Past the last check: round the loop from 100, to 120. */
	cr_assert_eq(sample_next_check(&T, disp, c + 301), c + 120);
	cr_assert_eq(sample_next_check(&T, disp, c + 399), c + 120);
	/* Tail recursion: from the start, to 40. */
	T.linktype = LJ_TRLINK_TAILREC;
	cr_assert_eq(sample_next_check(&T, disp, c + 301), c + 40);
	/* Leaves (to the interpreter, or another trace): its end. */
	T.linktype = LJ_TRLINK_RETURN;
	T.link = 0;
	cr_assert_eq(sample_next_check(&T, disp, c + 301), c + sizeof code);
	cr_assert_eq(sample_next_check(&T, disp, c + 130), c + 300);
	/* Outside the code: unknown. */
	cr_assert_eq(sample_next_check(&T, disp, c + sizeof code), 0);
	cr_assert_eq(sample_next_check(&T, disp, c - 1), 0);
	/* No check at all: unknown, wherever. */
	fill(code, sizeof code);
	cr_assert_eq(sample_next_check(&T, disp, c + 10), 0);
	T.linktype = LJ_TRLINK_LOOP;
	cr_assert_eq(sample_next_check(&T, disp, c + 300), 0);
	/* A loop whose checks are all before it: it never stops again. */
	put_check(code, 40, disp);
	cr_assert_eq(sample_next_check(&T, disp, c + 300), 0);
	cr_assert_eq(sample_next_check(&T, disp, c + 10), c + 40);
}
