/*
** ljlog sampling, signal context: the SIGPROF handler and what it reads.
** ASYNC-SIGNAL-SAFE CODE ONLY: nothing here allocates, locks, writes a
** file, or calls a function that might; errno is saved and restored. Every
** value read from a register or from the VM is range-checked as an integer
** before any pointer arithmetic on it (a stale register is no pointer).
*/
#define _GNU_SOURCE
#include "stat/sample_int.h"

#include <errno.h>
#include <ucontext.h>

#include "stat/clock.h"
#include "util/util.h"

/* LuaJIT's x64 interpreter keeps its state in fixed registers (src/
** vm_x64.dasc, "Fixed register assignments for the interpreter", non-
** Windows): BASE = rdx, PC = rbx, DISPATCH = r14. Other targets and the
** non-GC64 frame layout have other assignments: refuse to build there
** rather than read the wrong registers. */
#if !defined(__x86_64__) || !LJ_GC64 || LJ_TARGET_WINDOWS
#error "ljlog's sampler reads LuaJIT's x64 GC64 interpreter registers only"
#endif
#define REG_LJ_BASE	REG_RDX
#define REG_LJ_PC	REG_RBX
#define REG_LJ_DISPATCH REG_R14

/* Lowest and highest user-space addresses a pointer can hold (x64, 47-bit
** user space). */
#define ADDR_MIN 4096u
#define ADDR_MAX ((uintptr_t)1 << 47)

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

/* Async-signal-safe. The frame of the Lua function that called the frame
** at slot address fa, its link being the return PC pc; 0 when that is not
** what the stack holds (a fast function may have written results over its
** frame). pc is not trusted: the caller sits 1 + LJ_FR2 + A slots below,
** A the register of its CALL, and a candidate is taken only if it holds a
** Lua function whose bytecode contains pc; only then is the CALL read, to
** check A. Invariant: lo <= every candidate < fa. */
static uintptr_t lua_caller(uintptr_t fa, const BCIns *pc, uintptr_t lo)
{
	uintptr_t a = (uintptr_t)pc;
	if (a < ADDR_MIN || a >= ADDR_MAX || (a & 3))
		return 0; /* a number or a tagged value, not a PC */
	for (unsigned ra = 0; ra < 256; ra++) {
		uintptr_t back = (1 + LJ_FR2 + ra) * sizeof(TValue);
		if (fa - lo < back)
			break;
		uintptr_t pa = fa - back;
		GCfunc *fn = ljwin_frame_func((TValue *)pa);
		if (!fn || !isluafunc(fn))
			continue;
		GCproto *pt = funcproto(fn);
		const BCIns *bc = proto_bc(pt);
		if (a > (uintptr_t)bc && a <= (uintptr_t)(bc + pt->sizebc) &&
		    bc_a(pc[-1]) == ra)
			return pa;
	}
	return 0;
}

/* Async-signal-safe. Read L's Lua frames into e, innermost first, from
** base (the frame base, as read from a register or L) and pc (the top Lua
** frame's PC, or NULL). Invariants of the walk: every frame address is an
** integer checked to lie slot-aligned in [stack + LJ_FR2, stack end)
** before it becomes a pointer; each step goes strictly down; a top Lua
** frame whose PC is not in its prototype gives no frames at all (never
** guess). */
static unsigned walk(lua_State *L, uintptr_t base, const BCIns *pc,
		     struct sample_entry *e)
{
	uintptr_t stack = (uintptr_t)tvref(L->stack);
	uintptr_t lo = stack + LJ_FR2 * sizeof(TValue);
	uintptr_t hi = stack + (uintptr_t)L->stacksize * sizeof(TValue);
	unsigned n = 0;
	if (stack < ADDR_MIN || stack >= ADDR_MAX || hi <= lo)
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
			GCproto *pt = funcproto(fn);
			const BCIns *bc = proto_bc(pt);
			uintptr_t a = (uintptr_t)pc;
			f->kind = MAPPER_PROTO;
			f->key = (uintptr_t)pt;
			if (pc && a > (uintptr_t)bc &&
			    a <= (uintptr_t)(bc + pt->sizebc))
				f->line = ljwin_proto_line(
				    pt, proto_bcpos(pt, pc) - 1);
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
			pc = frame_pc(prev);
			pa = lua_caller(pa, pc, lo);
			if (!pa)
				break;
		} else {
			uintptr_t d = (uintptr_t)frame_sized(prev);
			pc = NULL;
			if (d > pa - lo)
				break;
			pa -= d;
		}
		if (pa >= fa)
			break; /* no progress: not a frame chain */
		fa = pa;
	}
	return n;
}

/* Async-signal-safe. Fill entry e for s's VM, interrupted with context uc. */
static void capture(struct sample_vm *s, struct sample_entry *e,
		    const ucontext_t *uc)
{
	global_State *g = s->g;
	int32_t st = g->vmstate;
	lua_State *L = gcref(g->cur_L) ? &gcref(g->cur_L)->th : NULL;
	uintptr_t base = 0;
	const BCIns *pc = NULL;

	e->ts = clock_now();
	e->state = (uint8_t)state_of(st);
	e->trace = 0;
	e->pc = 0;
	e->nlua = 0;
	/* The VM runs on this thread only if its C frame is on this thread's
	** stack: a VM that moved to another thread is not read from here. */
	uintptr_t cf = L ? (uintptr_t)cframe_raw(L->cframe) : 0;
	if (L && cf && (cf < s->stack_lo || cf >= s->stack_hi))
		L = NULL;
	uintptr_t rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	if (!L) {
		e->state = FORMAT_STATE_IDLE;
	} else if (e->state == FORMAT_STATE_TRACE) {
		jit_State *J = G2J(g);
		if ((MSize)st < J->sizetrace && gcref(J->trace[st])) {
			e->trace = (uintptr_t)gcref(J->trace[st]);
			e->traceno = (uint32_t)st;
			e->pc = rip; /* in its code, or in C it called */
		}
		base = (uintptr_t)mref(g->jit_base, TValue);
	} else if (e->state == FORMAT_STATE_C && !cf) {
		e->state = FORMAT_STATE_IDLE; /* in the host, no Lua call */
	} else if (e->state == FORMAT_STATE_INTERP && rip >= s->vm_lo &&
		   rip < s->vm_hi &&
		   (uint64_t)uc->uc_mcontext.gregs[REG_LJ_DISPATCH] ==
		       (uint64_t)(uintptr_t)G2GG(g)->dispatch) {
		/* In the interpreter's own code (not a C helper it called):
		** its BASE and PC registers are newer than L->base. */
		base = (uintptr_t)uc->uc_mcontext.gregs[REG_LJ_BASE];
		pc = (const BCIns *)(uintptr_t)uc->uc_mcontext.gregs[REG_LJ_PC];
	} else if (e->state != FORMAT_STATE_EXIT) {
		/* Called out of the interpreter: base and PC were saved. */
		base = (uintptr_t)L->base;
		pc = cf ? cframe_pc((void *)cf) : NULL;
	}
	/* Not while L's stack is being reallocated: until LuaJIT has moved
	** L->stack, the old block may be freed under us. */
	uintptr_t moving = __atomic_load_n(&s->stack_moving, __ATOMIC_RELAXED);
	if (L && base && (!moving || moving != (uintptr_t)tvref(L->stack)))
		e->nlua = (uint16_t)walk(L, base, pc, e);
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
			capture(s, sample_entry_at(s, head), ucv);
			__atomic_store_n(&s->head, head + 1, __ATOMIC_RELEASE);
		}
	}
	__atomic_fetch_sub(&sample_inflight[slot], 1, __ATOMIC_SEQ_CST);
	errno = saved;
}
