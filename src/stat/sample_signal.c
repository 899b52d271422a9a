/*
** ljlog sampling, signal context: the SIGPROF handler and what it reads.
** ASYNC-SIGNAL-SAFE CODE ONLY: nothing here allocates, locks, writes a
** file, or calls a function that might; errno is saved and restored. Every
** value read from a register or from the VM is range-checked as an integer
** before any pointer arithmetic on it (a stale register is no pointer).
*/
#define _GNU_SOURCE
#include "config.h"
#include "stat/sample_int.h"

#include <errno.h>
#include <string.h>
#include <ucontext.h>

#include "maps/texit.h"
#include "stat/clock.h"
#include "util/util.h"

#if LJLOG_SAMPLER
/* LuaJIT's interpreter keeps its state in fixed registers. x64 (src/
** vm_x64.dasc, "Fixed register assignments for the interpreter", non-
** Windows): BASE = rdx, PC = rbx, DISPATCH = r14; a leaf C call keeps BASE
** in rbp ("mov RB, BASE // Save BASE."). arm64 (src/vm_arm64.dasc, "Fixed
** register assignments for the interpreter"): BASE = x19, PC = x21, GL =
** x22 (the global_State; no dispatch register), all callee-saved, so a
** leaf call needs no save. Other targets and the non-GC64 frame layout
** have other assignments: refuse to build there rather than read the
** wrong registers. */
#if defined(__x86_64__) && LJ_GC64 && !LJ_TARGET_WINDOWS
#define UC_REG(uc, r) ((uintptr_t)(uc)->uc_mcontext.gregs[r])
#define UC_IP(uc)     UC_REG(uc, REG_RIP)
#define UC_SP(uc)     UC_REG(uc, REG_RSP)
#define REG_LJ_BASE   REG_RDX
#define REG_LJ_PC     REG_RBX
#define REG_LJ_RB     REG_RBP /* BASE's save across leaf calls */
/* Whether the interrupted code is the interpreter of g (its own register). */
#define UC_IS_VM(uc, g) (UC_REG(uc, REG_R14) == (uintptr_t)G2GG(g)->dispatch)
/* Lowest and highest user-space addresses a pointer can hold (47-bit user
** space). */
#define ADDR_MAX ((uintptr_t)1 << 47)
#elif defined(__aarch64__) && LJ_GC64
#define UC_REG(uc, r)	((uintptr_t)(uc)->uc_mcontext.regs[r])
#define UC_IP(uc)	((uintptr_t)(uc)->uc_mcontext.pc)
#define UC_SP(uc)	((uintptr_t)(uc)->uc_mcontext.sp)
#define REG_LJ_BASE	19
#define REG_LJ_PC	21
#define REG_LJ_RB	19 /* no save across leaf calls: BASE itself */
#define UC_IS_VM(uc, g) (UC_REG(uc, 22) == (uintptr_t)(g))
/* 48-bit user space (Linux arm64 with 4 KiB pages and 4 levels). */
#define ADDR_MAX	((uintptr_t)1 << 48)
#else
#error                                                                         \
    "ljlog's sampler reads LuaJIT's x64 or arm64 GC64 interpreter registers only"
#endif
#define ADDR_MIN 4096u

/* Async-signal-safe. Sample state of LuaJIT's vmstate. */
static unsigned state_of(int32_t st)
{
	if (st >= 0)
		return FORMAT_STATE_TRACE;
	switch (~st) {
	case LJ_VMST_INTERP: return FORMAT_STATE_INTERP;
	case LJ_VMST_C: return FORMAT_STATE_C;
	case LJ_VMST_GC: return FORMAT_STATE_GC;
	case LJ_VMST_EXIT: return FORMAT_STATE_EXIT;
	case LJ_VMST_RECORD: return FORMAT_STATE_RECORD;
	case LJ_VMST_OPT: return FORMAT_STATE_OPT;
	default: return FORMAT_STATE_ASM;
	}
}

/* Async-signal-safe. 1 when the slot address a lies in [lo, hi), slot
** aligned: the only test a frame pointer passes before it is used. */
static inline int in_stack(uintptr_t a, uintptr_t lo, uintptr_t hi)
{
	return a >= lo && a < hi && ((a - lo) % sizeof(TValue)) == 0;
}

/* Async-signal-safe. 1 when the integer a can be the address of an object
** aligned to al (a power of two): in user space, past the zero page. */
static inline int addr_ok(uintptr_t a, uintptr_t al)
{
	return a >= ADDR_MIN && a < ADDR_MAX && (a & (al - 1)) == 0;
}

/* Async-signal-safe. Lua function fn's prototype, and the bytecode's bounds
** as integers, *lo its first instruction and *hi one past its last; NULL
** when fn's bytecode pointer (fn->l.pc, read from the VM) does not lead to
** a prototype. funcproto(fn) is fn->l.pc - sizeof(GCproto): no pointer is
** formed from the word before it is checked, nor from sizebc. */
static GCproto *proto_of(GCfunc *fn, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t bc = (uintptr_t)fn->l.pc.ptr64;
	/* GCproto is 8-aligned and a multiple of 8 bytes: so is bc. */
	if (bc < ADDR_MIN + sizeof(GCproto) || !addr_ok(bc, 8))
		return NULL;
	GCproto *pt = (GCproto *)(bc - sizeof(GCproto));
	uintptr_t n = pt->sizebc;
	if (pt->gct != (uint8_t)~LJ_TPROTO || n == 0 || n > LJ_MAX_BCINS ||
	    n > (ADDR_MAX - bc) / sizeof(BCIns))
		return NULL;
	*lo = bc;
	*hi = bc + n * sizeof(BCIns);
	return pt;
}

/* Async-signal-safe. 1 when the integer pc is a return or current PC of
** bytecode [lo, hi): it points past an instruction of it (LuaJIT's PCs
** point to the instruction after the one executing). */
static inline int pc_in(uintptr_t pc, uintptr_t lo, uintptr_t hi)
{
	return pc > lo && pc <= hi && ((pc - lo) & (sizeof(BCIns) - 1)) == 0;
}

/* Async-signal-safe. The frame of the Lua function that called the frame
** at slot address fa, its link being the return PC pc; 0 when that is not
** what the stack holds (a fast function may have written results over its
** frame). pc is not trusted: the caller sits 1 + LJ_FR2 + A slots below,
** A the register of its CALL, and a candidate is taken only if it holds a
** Lua function whose bytecode contains pc; only then is the CALL (the
** instruction before pc) read, to check A. Invariants: lo <= every
** candidate < fa; pc is only an integer until pc_in() holds. */
static uintptr_t lua_caller(uintptr_t fa, uintptr_t pc, uintptr_t lo)
{
	if (!addr_ok(pc, sizeof(BCIns)))
		return 0; /* a number or a tagged value, not a PC */
	for (unsigned ra = 0; ra < 256; ra++) {
		uintptr_t back = (1 + LJ_FR2 + ra) * sizeof(TValue);
		if (fa - lo < back)
			break;
		uintptr_t pa = fa - back;
		GCfunc *fn = ljwin_frame_func((TValue *)pa);
		uintptr_t bc, end;
		if (!fn || !isluafunc(fn) || !proto_of(fn, &bc, &end))
			continue;
		if (pc_in(pc, bc, end) &&
		    bc_a(*(const BCIns *)(pc - sizeof(BCIns))) == ra)
			return pa;
	}
	return 0;
}

/* Async-signal-safe. Read L's Lua frames into e, innermost first, from
** base (the frame base, as read from a register or L) and pc (the top Lua
** frame's PC, or 0). Invariants of the walk:
**  - every frame address is an integer checked to lie slot-aligned in
**    [stack + LJ_FR2 slots, stack end) before it becomes a pointer; a link
**    (a frame size) is checked against the distance to the stack's bottom
**    before it is subtracted;
**  - each step goes strictly down, so the walk ends;
**  - a function is read only through a function-tagged slot whose payload
**    is an address (ljwin_frame_func), a prototype only through proto_of, a PC
**    only once pc_in() has placed it inside that prototype's bytecode;
**  - a top Lua frame whose PC is not in its prototype gives no frames at
**    all (never guess);
**  - so does a walk that stops short of the stack's bottom frame (at lo)
**    and of SAMPLE_LUA_MAX frames (a frame that is no function's, a
**    caller its CALL does not find, no progress, a link that leads below
**    the bottom): a stack is whole from the thread's root or not given.
**    (Samples read while a caller could not be found came out as "select"
**    or "coroutine.resume" alone, stacks from no root. So did one read
**    while coroutine.resume returned: its frame's link slot held a
**    result, true, which reads as a vararg frame as large as the address
**    space, and was taken for the bottom. Every real stack's walk ends
**    at lo.)
** What it cannot check: that a function-tagged slot below the frame base
** names a live object. It does so while the stack is not being moved (the
** caller checks stack_moving): the GC marks every slot below L->top, and
** L->top is at or above every frame base the walk starts from. */
static unsigned walk(lua_State *L, uintptr_t base, uintptr_t pc,
		     struct sample_entry *e)
{
	uintptr_t stack = (uintptr_t)tvref(L->stack);
	uintptr_t lo = stack + LJ_FR2 * sizeof(TValue);
	uintptr_t size = L->stacksize;
	unsigned n = 0;
	if (!addr_ok(stack, sizeof(TValue)) || size == 0 ||
	    size > (ADDR_MAX - stack) / sizeof(TValue))
		return 0;
	uintptr_t hi = stack + size * sizeof(TValue);
	if (hi <= lo)
		return 0;
	/* base - 1 slot is the frame: base must be inside, past lo. */
	if (!in_stack(base, lo + sizeof(TValue), hi + sizeof(TValue)))
		return 0;
	uintptr_t fa = base - sizeof(TValue);
	while (n < SAMPLE_LUA_MAX && in_stack(fa, lo, hi)) {
		TValue *frame = (TValue *)fa;
		GCfunc *fn = ljwin_frame_func(frame);
		struct sample_frame *f = &e->lua[n];
		if (!fn)
			break;
		f->line = 0;
		if (isluafunc(fn)) {
			uintptr_t bc, end;
			GCproto *pt = proto_of(fn, &bc, &end);
			if (!pt)
				break; /* not a function's frame: stop */
			f->kind = MAPPER_PROTO;
			f->key = (uintptr_t)pt;
			if (pc && pc_in(pc, bc, end))
				f->line = ljwin_proto_line(
				    pt, (BCPos)((pc - bc) / sizeof(BCIns)) - 1);
			else if (n == 0 && pc)
				return 0; /* the frame is not what it seems */
		} else if (fn->c.ffid > FF_C) {
			f->kind = MAPPER_FFUNC;
			f->key =
			    fn->c.ffid |
			    (ljwin_is_asm_ff(G(L), fn) ? MAPPER_FF_ASM : 0);
		} else {
			f->kind = MAPPER_CFUNC;
			f->key = (uintptr_t)fn->c.f;
		}
		n++;
		/* To the caller. A vararg frame first leads to the same call's
		** original frame. Links are sizes: check before subtracting. */
		uintptr_t pa = fa;
		if (frame_isvarg(frame)) {
			uintptr_t d = (uintptr_t)frame_sized(frame);
			if (d > pa - lo)
				break;
			pa -= d;
		}
		if (!in_stack(pa, lo, hi))
			break;
		TValue *prev = (TValue *)pa;
		if (frame_islua(prev)) {
			pc = (uintptr_t)frame_ftsz(prev);
			pa = lua_caller(pa, pc, lo);
			if (!pa)
				break;
		} else {
			uintptr_t d = (uintptr_t)frame_sized(prev);
			pc = 0;
			/* A continuation (a stitched trace's call of a C
			** function, a metamethod) keeps the caller's return
			** PC 1 + LJ_FR2 slots below (frame_contpc): an
			** integer until pc_in() places it in the caller. */
			if (frame_iscont(prev) &&
			    pa - stack >= (1 + LJ_FR2) * sizeof(TValue))
				pc = (uintptr_t)frame_pc(prev - 1 - LJ_FR2);
			if (d > pa - lo)
				break;
			pa -= d;
		}
		if (pa >= fa)
			break; /* no progress: not a frame chain */
		fa = pa;
	}
	return n == SAMPLE_LUA_MAX || fa == lo ? n : 0;
}

/* -- Compiled code ----------------------------------------------------------- */

/* Stack words searched for a return address into compiled code (C code
** called from a trace: an FFI call, or the collector, whose frames lie
** between). */
#define TRACE_SCAN_WORDS 1024
/* MCode areas looked at (J->mcarea's chain), read once per sample. */
#define TRACE_SCAN_AREAS 64

#if defined(__x86_64__)
/* A profile check, x64 (lj_asm_x86.h, asm_prof): `test byte [DISPATCH +
** disp], HOOK_PROFILE`, then the jnz to its exit. DISPATCH is r14 (REX.B;
** ModRM reg /0 for TEST, rm 110); disp is 32 bits (ModRM 0x86) as g lies
** far below the dispatch table in GG_State, or 8 bits (ModRM 0x46). These
** bytes with that displacement are found in no other code LuaJIT makes
** (nothing else reads the hook mask) and, as a 32-bit match, not by
** chance. */
#define CHECK_LEN  8
#define CHECK_STEP 1 /* instructions start anywhere */

/* VM thread (start). See sample_int.h. disp: from the dispatch table. */
int sample_hook_disp(global_State *g, int32_t *disp)
{
	intptr_t d =
	    (intptr_t)((char *)&g->hookmask - (char *)G2GG(g)->dispatch);
	if (d != (intptr_t)(int32_t)d)
		return -ENOTSUP;
	*disp = (int32_t)d;
	return 0;
}

/* Async-signal-safe. 1 when a profile check starts at p (p + CHECK_LEN in
** the code). */
static inline int check_at(const uint8_t *p, int32_t disp)
{
	if (p[0] != 0x41 || p[1] != 0xf6)
		return 0;
	if (p[2] == 0x86)
		return p[7] == HOOK_PROFILE &&
		       (int32_t)((uint32_t)p[3] | (uint32_t)p[4] << 8 |
				 (uint32_t)p[5] << 16 | (uint32_t)p[6] << 24) ==
			   disp;
	return p[2] == 0x46 && p[4] == HOOK_PROFILE && (int8_t)p[3] == disp;
}
#else
/* A profile check, arm64 (lj_asm_arm64.h, asm_prof and emit_lsptr):
** `ldrb w30, [x22, #disp]` (RID_TMP is the link register, GL is x22, disp
** the hook mask's offset in global_State, a 12-bit unsigned offset), then
** `tst w30, #HOOK_PROFILE` and the b.ne to its exit. Nothing else LuaJIT
** makes reads the hook mask. */
#define CHECK_LEN  8
#define CHECK_STEP 4 /* aligned 4-byte instructions */
#define CHECK_LDRB (0x39400000u | 22u << 5 | 30u) /* ldrb w30, [x22, #0] */
#define CHECK_TST  0x721903dfu			  /* tst w30, #0x80 */
_Static_assert(HOOK_PROFILE == 0x80, "CHECK_TST's immediate is HOOK_PROFILE");

/* VM thread (start). See sample_int.h. disp: from g. */
int sample_hook_disp(global_State *g, int32_t *disp)
{
	intptr_t d = (intptr_t)((char *)&g->hookmask - (char *)g);
	if (d < 0 || d > 4095)
		return -ENOTSUP;
	*disp = (int32_t)d;
	return 0;
}

/* Async-signal-safe. 1 when a profile check starts at p (4-byte aligned;
** p + CHECK_LEN in the code). */
static inline int check_at(const uint8_t *p, int32_t disp)
{
	const uint32_t *w = (const uint32_t *)(const void *)p;
	return w[0] == (CHECK_LDRB | (uint32_t)disp << 10) && w[1] == CHECK_TST;
}
#endif

/* Async-signal-safe. The first check starting in [from, to) whose bytes
** lie below end; 0 when none. */
static uintptr_t find_check(uintptr_t from, uintptr_t to, uintptr_t end,
			    int32_t disp)
{
	if (end - from < CHECK_LEN || from >= end)
		return 0;
	if (to > end - CHECK_LEN + 1)
		to = end - CHECK_LEN + 1;
	from = (from + CHECK_STEP - 1) & ~(uintptr_t)(CHECK_STEP - 1);
	for (uintptr_t a = from; a < to; a += CHECK_STEP)
		if (check_at((const uint8_t *)a, disp))
			return a;
	return 0;
}

/* Async-signal-safe. See sample_int.h. A check that x lies inside of has
** been passed. The loop goes back to mcloop; a trace that links to itself
** (tail-, up- or down-recursion) to its start. */
uintptr_t sample_next_check(const GCtrace *T, int32_t disp, uintptr_t x)
{
	uintptr_t lo = (uintptr_t)T->mcode, end = lo + T->szmcode, c;
	if (!addr_ok(lo, 1) || x < lo || x >= end)
		return 0;
	if ((c = find_check(x, end, end, disp)) != 0)
		return c;
	if (T->linktype == LJ_TRLINK_LOOP ||
	    (T->link == T->traceno && T->linktype != LJ_TRLINK_NONE)) {
		/* Round the loop: its first check (none: the code never
		** stops there, say unknown). */
		uintptr_t back =
		    lo + (T->linktype == LJ_TRLINK_LOOP ? T->mcloop : 0);
		return back < x ? find_check(back, x, end, disp) : 0;
	}
	/* It leaves: its last state, if it has checks at all. */
	return find_check(lo, x, end, disp) ? end : 0;
}

/* J's machine code areas, read once per sample: a scan of the stack
** tests every word against them, and reading LuaJIT's list of areas for
** each word cost more than the timer's period on a VM with many areas
** (luajit2 on luacheck, at 250 us: the program made no progress). */
struct mcareas {
	uintptr_t lo[TRACE_SCAN_AREAS], hi[TRACE_SCAN_AREAS];
	uintptr_t min, max; /* [min, max) spans them all */
	int n;
};

/* Async-signal-safe. Read J's machine code areas (the first
** TRACE_SCAN_AREAS of its list) into m. */
static void mcareas_read(jit_State *J, struct mcareas *m)
{
	uintptr_t mc = (uintptr_t)J->mcarea;
	m->n = 0;
	m->min = UINTPTR_MAX;
	m->max = 0;
	for (int k = 0; k < TRACE_SCAN_AREAS && addr_ok(mc, 8); k++) {
		const MCLink *l = (const MCLink *)mc;
		uintptr_t size = l->size;
		if (size > ADDR_MAX - mc)
			break;
		m->lo[m->n] = mc;
		m->hi[m->n++] = mc + size;
		if (mc < m->min)
			m->min = mc;
		if (mc + size > m->max)
			m->max = mc + size;
		mc = (uintptr_t)l->next;
	}
}

/* Async-signal-safe. 1 when a lies in one of the areas of m (past an
** area's first byte, its link). */
static int in_mcode(const struct mcareas *m, uintptr_t a)
{
	if (a <= m->min || a >= m->max)
		return 0;
	for (int k = 0; k < m->n; k++)
		if (a > m->lo[k] && a < m->hi[k])
			return 1;
	return 0;
}

/* Async-signal-safe. The nearest word at or above sp (below hi) that is a
** return address into compiled code: into T's when T is given, else into
** any of J's machine code areas; 0 when none within TRACE_SCAN_WORDS.
** Calls from a trace push it in the trace's own frame, above the callee's.
** The words read belong to other frames: not ours to instrument. */
__attribute__((no_sanitize("address", "undefined", "thread"))) static uintptr_t
return_into(jit_State *J, const GCtrace *T, uintptr_t sp, uintptr_t hi)
{
	uintptr_t lo = T ? (uintptr_t)T->mcode : 0;
	uintptr_t len = T ? T->szmcode : 0;
	struct mcareas m;
	if (!addr_ok(sp, sizeof(uintptr_t)) || sp >= hi)
		return 0;
	m.n = 0;
	m.min = m.max = 0;
	if (!T)
		mcareas_read(J, &m);
	uintptr_t words = (hi - sp) / sizeof(uintptr_t);
	if (words > TRACE_SCAN_WORDS)
		words = TRACE_SCAN_WORDS;
	const uintptr_t *w = (const uintptr_t *)sp;
	for (uintptr_t i = 0; i < words; i++) {
		uintptr_t v = w[i];
		if (T ? v > lo && v - lo <= len : in_mcode(&m, v))
			return v;
	}
	return 0;
}

/* Async-signal-safe. The live trace whose code holds the return address
** v (a call's last byte is v - 1), or NULL. */
static GCtrace *trace_of(jit_State *J, uintptr_t v)
{
	uintptr_t tr = (uintptr_t)J->trace;
	MSize n = J->sizetrace;
	if (!addr_ok(tr, sizeof(GCRef)))
		return NULL;
	for (MSize k = 1; k < n; k++) {
		GCtrace *T = (GCtrace *)gcref(J->trace[k]);
		if (!T || !addr_ok((uintptr_t)T, 8))
			continue;
		uintptr_t lo = (uintptr_t)T->mcode;
		if (v > lo && v - lo <= T->szmcode)
			return T;
	}
	return NULL;
}

/* Async-signal-safe. The return address into a trace of the C code
** interrupted with stack pointer sp (the VM's C frame at cf, the stack's
** top at hi), its trace in *Tp; 0 when none is found. x64: the nearest
** such word above sp (a call pushes it in the trace's own frame). arm64:
** the stack read down from cf, the first word in the slot where the C
** function the trace called saves it (texit_ret_slot). A stale word of a
** trace with a smaller spill area may come first (alloc.c, trace_by_ret,
** tells them apart by the depth of the call, which a sample can't). */
__attribute__((no_sanitize("address", "undefined", "thread"))) static uintptr_t
trace_call(jit_State *J, uintptr_t cf, uintptr_t sp, uintptr_t hi, GCtrace **Tp)
{
#if LJ_TARGET_ARM64
	*Tp = NULL;
	if (!addr_ok(sp, sizeof(uintptr_t)) || cf <= sp + 24 || cf > hi ||
	    (cf & 7) || cf - sp > TRACE_SCAN_WORDS * sizeof(uintptr_t))
		return 0;
	struct mcareas m;
	mcareas_read(J, &m);
	for (uintptr_t p = cf - 24; p >= sp; p -= sizeof(uintptr_t)) {
		uintptr_t v = *(const uintptr_t *)p;
		GCtrace *T = in_mcode(&m, v) ? trace_of(J, v) : NULL;
		if (T && texit_ret_slot(T, cf, p, v)) {
			*Tp = T;
			return v;
		}
	}
	return 0;
#else
	uintptr_t r = return_into(J, NULL, sp, hi);
	*Tp = r ? trace_of(J, r) : NULL;
	return *Tp ? r : 0;
#endif
}

/* Async-signal-safe. e is a sample in trace T (e->trace set), interrupted
** at rip with stack pointer sp: where its code is (rip, or the return
** address into T of the C code it called, minus 1: ret when the caller
** found it, else the nearest above sp) into e->at, and the check it stops
** at next into e->chk (when s looks for them). */
static void trace_where(struct sample_vm *s, struct sample_entry *e,
			const GCtrace *T, uintptr_t rip, uintptr_t sp,
			uintptr_t ret)
{
	uintptr_t lo = (uintptr_t)T->mcode, x = rip;
	if (!(rip >= lo && rip - lo < T->szmcode)) {
		uintptr_t r = ret ? ret : return_into(NULL, T, sp, s->stack_hi);
		x = r ? r - 1 : 0;
	}
	e->at = x;
	e->chk = x && s->checks ? sample_next_check(T, s->hook_disp, x) : 0;
}

/* Async-signal-safe. The interpreter is between a Lua call's new frame and
** its first instruction, or between a return's PC and the caller's frame:
** BASE is the callee's frame and PC its frame link, the return PC into
** the caller (vm_x64.dasc, BC_CALL: the link is stored before PC moves to
** the callee; BC_RET: PC is loaded from it before BASE moves). 1 for a
** call, 2 for a return (rip in the code of the RET instructions, which
** lies between their static dispatch entries and FORI's, in opcode
** order); 0 when neither. base and pc are integers: base is checked to
** lie in L's stack first. */
static int in_call(global_State *g, lua_State *L, uintptr_t base, uintptr_t pc,
		   uintptr_t rip)
{
	uintptr_t stack = (uintptr_t)tvref(L->stack);
	uintptr_t size = L->stacksize;
	if (!addr_ok(stack, sizeof(TValue)) || size == 0 ||
	    size > (ADDR_MAX - stack) / sizeof(TValue))
		return 0;
	uintptr_t lo = stack + (1 + LJ_FR2) * sizeof(TValue);
	if (!in_stack(base, lo + sizeof(TValue),
		      stack + size * sizeof(TValue) + sizeof(TValue)))
		return 0;
	TValue *frame = (TValue *)(base - sizeof(TValue));
	if (!frame_islua(frame) || (uintptr_t)frame_pc(frame) != pc)
		return 0;
	ASMFunction *sd = G2GG(g)->dispatch + GG_LEN_DDISP;
	uintptr_t r0 = (uintptr_t)sd[BC_RETM], r1 = (uintptr_t)sd[BC_FORI];
	return r0 < r1 && rip >= r0 && rip < r1 ? 2 : 1;
}

/* Async-signal-safe. Drop e's innermost Lua frame (a returning callee). */
static void drop_innermost(struct sample_entry *e)
{
	for (unsigned k = 1; k < e->nlua; k++)
		e->lua[k - 1] = e->lua[k];
	e->nlua--;
}

/* Async-signal-safe. The interpreter called a leaf C function (lj_tab_len
** for #t, and the like) without saving BASE and PC in L and its C frame
** (vm_x64.dasc: "mov RB, BASE // Save BASE."): they are still in
** registers the callee saves (PC in rbx, BASE in rbp, or still in rdx).
** Only a BASE whose function holds PC is taken (walk's check), as in the
** interpreter's own code. The frames' count, 0 when neither fits. */
static unsigned leaf_walk(lua_State *L, const ucontext_t *uc,
			  struct sample_entry *e)
{
	uintptr_t pc = UC_REG(uc, REG_LJ_PC);
	unsigned n = 0;
	if (!pc)
		return 0;
	n = walk(L, UC_REG(uc, REG_LJ_RB), pc, e);
	if (!n)
		n = walk(L, UC_REG(uc, REG_LJ_BASE), pc, e);
	return n;
}

/* Async-signal-safe. Make e a sample of ljlog's own work: no frames. */
static void own_work(struct sample_entry *e)
{
	e->state = FORMAT_STATE_LJLOG;
	e->trace = 0;
	e->pc = e->at = e->chk = 0;
	e->nlua = 0;
}

/* Async-signal-safe. Fill entry e for s's VM, interrupted with context uc
** (sample_int.h). What it reads from the VM and from registers: g and
** g->cur_L (set by LuaJIT, stable while its thread is interrupted); the C
** frame L->cframe, used only when it lies in this thread's stack with room
** for a whole frame; a trace number, used only below J->sizetrace and with
** an array that is an address; base and PC as integers, for walk(). */
void sample_capture(struct sample_vm *s, struct sample_entry *e,
		    const void *ucv)
{
	const ucontext_t *uc = ucv;
	global_State *g = s->g;
	int32_t st = g->vmstate;
	lua_State *L = gcref(g->cur_L) ? &gcref(g->cur_L)->th : NULL;
	uintptr_t base = 0, pc = 0;

	e->ts = clock_now();
	e->state = (uint8_t)state_of(st);
	if (__atomic_load_n(&s->busy, __ATOMIC_RELAXED) ||
	    util_in_own(UC_IP(uc))) {
		/* ljlog's own work (a flush, a snapshot, or its code in the
		** program's calls: the allocator wrapper): no frames. */
		own_work(e);
		return;
	}
	e->trace = 0;
	e->pc = 0;
	e->at = 0;
	e->chk = 0;
	e->nlua = 0;
	/* The VM runs on this thread only if its C frame is on this thread's
	** stack: a VM that moved to another thread is not read from here. */
	uintptr_t cf = L ? (uintptr_t)cframe_raw(L->cframe) : 0;
	if (L && cf &&
	    (cf < s->stack_lo || cf >= s->stack_hi ||
	     s->stack_hi - cf < CFRAME_SIZE || (cf & 7)))
		L = NULL;
	uintptr_t rip = UC_IP(uc);
	if (!L) {
		e->state = FORMAT_STATE_IDLE;
	} else if (e->state == FORMAT_STATE_TRACE) {
		/* The trace array grows only while recording (vmstate
		** RECORD), never while a trace runs. */
		jit_State *J = G2J(g);
		uintptr_t tr = (uintptr_t)J->trace;
		GCtrace *T = NULL;
		if ((MSize)st < J->sizetrace && addr_ok(tr, sizeof(GCRef)))
			T = (GCtrace *)gcref(J->trace[st]);
#if LJ_TARGET_ARM64
		/* arm64's VM stores trace 0 (vm_arm64.dasc: "Traces on
		** ARM64 don't store the trace #, so use 0"): the trace whose
		** code holds the PC, else the one the C code it called
		** returns into (the link register, then the stack: see
		** trace_call). */
		uintptr_t ret = 0;
		if (!T && !(T = trace_of(J, rip + 1)) &&
		    !(T = trace_of(J, ret = UC_REG(uc, 30))))
			ret = trace_call(J, cf, UC_SP(uc), s->stack_hi, &T);
#else
		uintptr_t ret = 0;
#endif
		if (T) {
			e->trace = (uintptr_t)T;
			e->traceno = T->traceno;
			e->pc = rip; /* in its code, or in C it called */
			trace_where(s, e, T, rip, UC_SP(uc), ret);
		}
		base = (uintptr_t)mref(g->jit_base, TValue);
	} else if (e->state == FORMAT_STATE_GC && mref(g->jit_base, TValue)) {
		/* The collector, called from a trace: vmstate no longer
		** says which. The sample is the trace's, as jit.p charges
		** it to the trace's next check. */
		uintptr_t sp = UC_SP(uc);
		GCtrace *T;
		uintptr_t r = trace_call(G2J(g), cf, sp, s->stack_hi, &T);
		if (T) {
			e->trace = (uintptr_t)T;
			e->traceno = T->traceno;
			e->pc = rip;
			trace_where(s, e, T, r - 1, sp, r);
		}
		if (e->trace)
			base = (uintptr_t)mref(g->jit_base, TValue);
		else
			base = (uintptr_t)L->base,
			pc = cf ? (uintptr_t)cframe_pc((void *)cf) : 0;
	} else if (e->state == FORMAT_STATE_C && !cf) {
		e->state = FORMAT_STATE_IDLE; /* in the host, no Lua call */
	} else if (e->state == FORMAT_STATE_INTERP && rip >= s->vm_lo &&
		   rip < s->vm_hi && UC_IS_VM(uc, g)) {
		/* In the interpreter's own code (not a C helper it called):
		** its BASE and PC registers are newer than L->base. They are
		** integers: between two bytecodes the interpreter uses rdx
		** as a C argument, rbx as a frame link. */
		base = UC_REG(uc, REG_LJ_BASE);
		pc = UC_REG(uc, REG_LJ_PC);
	} else if (e->state != FORMAT_STATE_EXIT) {
		/* Called out of the interpreter: base and PC were saved. */
		base = (uintptr_t)L->base;
		pc = cf ? (uintptr_t)cframe_pc((void *)cf) : 0;
	}
	/* Not while L's stack is being reallocated: until LuaJIT has moved
	** L->stack, the old block may be freed under us. */
	uintptr_t moving = __atomic_load_n(&s->stack_moving, __ATOMIC_RELAXED);
	if (L && base && (!moving || moving != (uintptr_t)tvref(L->stack))) {
		e->nlua = (uint16_t)walk(L, base, pc, e);
		int c = !e->nlua && pc && e->state == FORMAT_STATE_INTERP
			    ? in_call(g, L, base, pc, rip)
			    : 0;
		/* The function jit.p charges: the next to run an instruction,
		** the callee of a call, the caller of a return. */
		if (c && (e->nlua = (uint16_t)walk(L, base, 0, e)) > 1 &&
		    c == 2)
			drop_innermost(e);
		if (!e->nlua && e->state == FORMAT_STATE_INTERP &&
		    !(rip >= s->vm_lo && rip < s->vm_hi))
			e->nlua = (uint16_t)leaf_walk(L, uc, e);
	}
	/* Inside one of ljlog's own C functions (luaopen_ljlog, its
	** module's, the log's close), in code they call: ljlog's work too. */
	if (e->nlua && e->lua[0].kind == MAPPER_CFUNC &&
	    util_in_own(e->lua[0].key)) {
		own_work(e);
		return;
	}
	if (s->host)
		unwind_capture(e->host, uc, s->stack_lo, s->stack_hi,
			       SAMPLE_STACK);
}

/* Async-signal-safe. The timer signal: one sample into the VM's buffer.
** The inflight count is raised before the slot is read, so a stopper that
** cleared the slot and then sees it at 0 knows no handler holds the VM. */
void sample_on_signal(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	(void)sig;
	if (si->si_code != SI_TIMER || si->si_value.sival_int < 0 ||
	    si->si_value.sival_int >= SAMPLE_SLOTS) {
		errno = saved;
		return;
	}
	int slot = si->si_value.sival_int;
	__atomic_fetch_add(&sample_inflight[slot], 1, __ATOMIC_SEQ_CST);
	struct sample_vm *s =
	    __atomic_load_n(&sample_slots[slot], __ATOMIC_SEQ_CST);
	if (s && s->tid == util_tid()) {
		uint32_t head = __atomic_load_n(&s->head, __ATOMIC_RELAXED);
		uint32_t tail = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
		__atomic_fetch_add(&s->signals, 1, __ATOMIC_RELAXED);
		if (head - tail >= s->cap) {
			__atomic_fetch_add(&s->dropped, 1, __ATOMIC_RELAXED);
		} else {
			struct sample_entry *e = sample_entry_at(s, head);
			sample_capture(s, e, ucv);
			/* A CPU-time timer fires at the kernel's tick: at 1 ms
			** and 250 Hz, one signal stands for 4 intervals. */
			e->missed =
			    si->si_overrun > 0 ? (uint32_t)si->si_overrun : 0;
			__atomic_store_n(&s->head, head + 1, __ATOMIC_RELEASE);
		}
	}
	__atomic_fetch_sub(&sample_inflight[slot], 1, __ATOMIC_SEQ_CST);
	errno = saved;
}

#else /* !LJLOG_SAMPLER: a machine whose registers ljlog does not know */

/* VM thread (start). See sample_int.h. */
int sample_hook_disp(global_State *g, int32_t *disp)
{
	return -ENOTSUP;
}

/* Async-signal-safe. See sample_int.h. */
uintptr_t sample_next_check(const GCtrace *T, int32_t disp, uintptr_t x)
{
	return 0;
}

/* Async-signal-safe. See sample_int.h. Never called: sample_start fails. */
void sample_capture(struct sample_vm *s, struct sample_entry *e,
		    const void *ucontext)
{
	memset(e, 0, sizeof *e);
}

/* Async-signal-safe. See sample_int.h. Never installed. */
void sample_on_signal(int sig, siginfo_t *si, void *ucv)
{
}
#endif
