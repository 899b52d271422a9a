/*
** ljlog jitpatch: take the line checks of LuaJIT's profiler out of the
** machine code of a trace, keeping the snapshots they brought.
*/
#ifndef LJLOG_LOGGER_JITPATCH_H
#define LJLOG_LOGGER_JITPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "maps/ljwin.h"

/* Where the checks point: what makes a byte pattern one of them. */
struct jitpatch_where {
	uintptr_t hookmask;	     /* &global_State.hookmask */
	uintptr_t dispatch;	     /* GG's dispatch (RID_DISPATCH, GC64) */
	const uintptr_t *stubs;	     /* exit stub groups (0: none) */
	unsigned nstubs;	     /* entries in stubs */
	unsigned spacing, per_group; /* exit stub layout */
};

/* Longest and shortest check: test byte [hookmask], imm8 + jnz rel32. */
#define JITPATCH_MIN 11
#define JITPATCH_MAX 14

/* Any thread. The line checks in code[0..len), as if code were at address
** base: each as offset << 4 | length, at most max of them, in order.
** Returns how many there are (may exceed max). */
size_t jitpatch_find(const uint8_t *code, size_t len, uintptr_t base,
		     const struct jitpatch_where *w, uint32_t *found,
		     size_t max);

/* Any thread. Fill p[0..n) (JITPATCH_MIN <= n <= JITPATCH_MAX) with two
** long NOPs that LuaJIT's instruction length decoder reads as such. */
void jitpatch_nop(uint8_t *p, size_t n);

/* VM thread only, inside the trace "stop" vmevent. Replace T's line
** checks with NOPs: the number replaced, or -errno (nothing changed). */
int jitpatch_trace(jit_State *J, GCtrace *T);

#endif
