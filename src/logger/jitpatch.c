/*
** ljlog jitpatch: take the line checks of LuaJIT's profiler out of the
** machine code of a trace, keeping the snapshots they brought.
**
** With prof_mode 'l' (jitev_lines_on) LuaJIT's recorder puts an IR_PROF
** guard and a snapshot on each new line of a trace. The snapshot is what
** ljlog wants: it names the line and the inlined frames of a sample or an
** allocation in compiled code. The guard (lj_asm_x86.h, asm_prof) is
**
**     test byte [&g->hookmask], HOOK_PROFILE
**     jnz  ->exit stub
**
** and only fires for LuaJIT's own profiler, which ljlog never starts. Yet
** in a tight loop these pairs cost as much as the loop (spectral-norm: 5
** pairs in an 18-instruction loop, +35 to +59% CPU time). So each pair is
** overwritten with long NOPs once the trace is committed: the snapshots
** and their machine code offsets stay as they were.
**
** The NOPs must stay readable by LuaJIT's own instruction length decoder
** (asm_x86_inslen), which lj_asm_patchexit uses to walk a parent trace
** when it links a side trace: 0F 1F /0 with an optional 66 prefix is in
** its tables. A pair is only taken when every byte is what asm_prof
** writes, its address is this VM's hookmask and its jump lands on an exit
** stub; anything else stays as it is. x86-64 only; elsewhere the checks
** stay.
*/
#include "logger/jitpatch.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lj_target.h"

/* -- Finding the checks -------------------------------------------------- */

/* Any thread. Little-endian 32-bit signed value at p. */
static int32_t le32(const uint8_t *p)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return (int32_t)v;
}

/* Any thread. Whether address a is the start of an exit stub. */
static int is_stub(const struct jitpatch_where *w, uintptr_t a)
{
	for (unsigned i = 0; i < w->nstubs; i++) {
		uintptr_t s = w->stubs[i];
		if (s && a >= s &&
		    a < s + (uintptr_t)w->spacing * w->per_group &&
		    (a - s) % w->spacing == 0)
			return 1;
	}
	return 0;
}

/* Any thread. Length of the test instruction at code[i] if it is
** "test byte [hookmask], HOOK_PROFILE" in one of the forms emit_rma
** writes, else 0. */
static size_t test_len(const uint8_t *code, size_t len, size_t i,
		       uintptr_t base, const struct jitpatch_where *w)
{
	const uint8_t *p = code + i;
	size_t left = len - i;
	intptr_t dofs = (intptr_t)(w->hookmask - w->dispatch);
	/* GC64: [DISPATCH + disp32] or [DISPATCH + disp8], DISPATCH = r14. */
	if (left >= 8 && p[0] == 0x41 && p[1] == 0xf6 && p[2] == 0x86 &&
	    p[7] == HOOK_PROFILE && le32(p + 3) == dofs)
		return 8;
	if (left >= 5 && p[0] == 0x41 && p[1] == 0xf6 && p[2] == 0x46 &&
	    p[4] == HOOK_PROFILE && (int8_t)p[3] == dofs)
		return 5;
	/* Non-GC64: [abs32] (SIB, no base) or [rip + rel32]. */
	if (left >= 8 && p[0] == 0xf6 && p[1] == 0x04 && p[2] == 0x25 &&
	    p[7] == HOOK_PROFILE &&
	    (uintptr_t)(intptr_t)le32(p + 3) == w->hookmask)
		return 8;
	if (left >= 7 && p[0] == 0xf6 && p[1] == 0x05 && p[6] == HOOK_PROFILE &&
	    base + i + 7 + (uintptr_t)(intptr_t)le32(p + 2) == w->hookmask)
		return 7;
	return 0;
}

size_t jitpatch_find(const uint8_t *code, size_t len, uintptr_t base,
		     const struct jitpatch_where *w, uint32_t *found,
		     size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i + JITPATCH_MIN <= len; i++) {
		size_t t = test_len(code, len, i, base, w);
		if (!t || i + t + 6 > len)
			continue;
		const uint8_t *j = code + i + t;
		uintptr_t to =
		    base + i + t + 6 + (uintptr_t)(intptr_t)le32(j + 2);
		if (j[0] != 0x0f || j[1] != 0x85 || !is_stub(w, to))
			continue;
		if (n < max)
			found[n] = (uint32_t)i << 4 | (uint32_t)(t + 6);
		n++;
		i += t + 6 - 1;
	}
	return n;
}

void jitpatch_nop(uint8_t *p, size_t n)
{
	/* 6 to 9 bytes, then 5: 0F 1F /0 with a SIB and a disp8 or disp32,
	** at most one 66 prefix. One NOP with more prefixes, or a short jump
	** over the bytes, made spectral-norm slower (1.27x and 1.29x against
	** 1.06x on this machine's AMD EPYC). */
	static const uint8_t first[4][9] = {
	    {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00},
	    {0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00},
	    {0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
	    {0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
	};
	static const uint8_t five[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
	memcpy(p, first[n - JITPATCH_MIN], n - 5);
	memcpy(p + n - 5, five, 5);
}

/* -- Patching a trace ---------------------------------------------------- */

#if LJ_TARGET_X64 && LJ_HASJIT

#define MAX_CHECKS 1024

int jitpatch_trace(jit_State *J, GCtrace *T)
{
	uint32_t found[MAX_CHECKS];
	uintptr_t stubs[LJ_MAX_EXITSTUBGR];
	struct jitpatch_where w;
	uint8_t *mc = (uint8_t *)T->mcode, *area = (uint8_t *)J->mcarea;
	size_t len = T->szmcode;
	if (!len || mc < area || mc + len > area + J->szmcarea)
		return -EINVAL; /* not in the area just committed */
	for (unsigned i = 0; i < LJ_MAX_EXITSTUBGR; i++)
		stubs[i] = (uintptr_t)J->exitstubgroup[i];
	w.hookmask = (uintptr_t)&J2G(J)->hookmask;
	w.dispatch = (uintptr_t)J2GG(J)->dispatch;
	w.stubs = stubs;
	w.nstubs = LJ_MAX_EXITSTUBGR;
	w.spacing = EXITSTUB_SPACING;
	w.per_group = EXITSTUBS_PER_GROUP;
	size_t n = jitpatch_find(mc, len, (uintptr_t)mc, &w, found, MAX_CHECKS);
	if (n == 0)
		return 0;
	if (n > MAX_CHECKS)
		n = MAX_CHECKS; /* the rest stay */
	/* LuaJIT keeps the area executable and not writable between traces,
	** unless built without LUAJIT_SECURITY_MCODE (then it is RWX). */
	int prot = J->mcprot;
	if (!(prot & PROT_EXEC))
		return -EINVAL; /* not the committed state asm leaves */
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)mc & ~(uintptr_t)(pg - 1);
	uintptr_t hi = ((uintptr_t)mc + len + pg - 1) & ~(uintptr_t)(pg - 1);
	int writable = (prot & PROT_WRITE) != 0;
	if (!writable &&
	    mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) < 0)
		return -errno;
	for (size_t k = 0; k < n; k++)
		jitpatch_nop(mc + (found[k] >> 4), found[k] & 15);
	if (!writable && mprotect((void *)lo, hi - lo, prot) < 0) {
		/* Cannot happen (it was prot a moment ago); the code is right
		** but not executable: LuaJIT's own failure path is a panic. */
		return -errno;
	}
	return (int)n;
}

#else

int jitpatch_trace(jit_State *J, GCtrace *T)
{
	(void)J;
	(void)T;
	return 0;
}

#endif
