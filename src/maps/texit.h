/*
** ljlog trace exits: the Lua frames a trace's machine code stands for.
** LuaJIT calls a trace's exit states snapshots (SnapShot, lj_snap.c) and
** numbers its exits by them; ljlog calls them exits ("texit") and keeps
** "snapshot" for heap snapshots.
** LuaJIT inlines the Lua functions a trace calls; the frames it would rebuild
** on an exit, and the bytecode PC it would resume at, are kept per snapshot
** (lj_snap.c). Each snapshot also records where its machine code starts
** (SnapShot.mcofs), so an address in a trace maps to the snapshot at or
** before it, as LuaJIT's own unwinder does (lj_trace.c, lj_trace_unwind).
** Read only while the trace is surely alive: under the mapper's lock, before
** the sweep that frees it (sample.h, "Locking").
*/
#ifndef LJLOG_MAPS_TEXIT_H
#define LJLOG_MAPS_TEXIT_H

#include <stdint.h>

#include "maps/ljwin.h"

#define TEXIT_MAX_FRAMES 32 /* frames per snapshot kept; deeper: outermost */

/* One frame of a snapshot: the prototype and the line being executed. */
struct texit_frame {
	GCproto *pt;
	uint32_t line;
};

/* Caller keeps T alive. Where snapshot i's machine code starts: a byte
** offset into T's code. LuaJIT counts SnapShot.mcofs in MCode units (lj_jit.h:
** bytes on x86, 4-byte instructions on arm64); the log and the samples'
** offsets count bytes on every machine. */
static inline uint32_t texit_ofs(const GCtrace *T, SnapNo i)
{
	return (uint32_t)T->snap[i].mcofs * (uint32_t)sizeof(MCode);
}

/* Caller keeps T alive. The Lua frames of T's snapshot i, outermost first,
** into out (at most max, the innermost kept); their count. A frame whose
** prototype cannot be told (a PC in no prototype the trace references) is
** left out. The innermost frame's line is the resume PC's, except at a
** function's entry (its header: a `local function f(` line, where compiled
** code does nothing), where it is the line of the first bytecode after. */
int texit_frames(GCtrace *T, SnapNo i, struct texit_frame *out, int max);

/* Caller keeps T alive. The snapshot whose machine code holds byte offset
** ofs of T's code: the last one starting at or before it. */
SnapNo texit_at(const GCtrace *T, uint32_t ofs);

/* Caller keeps T alive. Where the first allocation that T sank (LuaJIT's
** allocation sinking: the table or cdata is made only where it escapes,
** at an exit or in a side trace) among those snapshot e restores was in
** T's code: the start of the snapshot's code holding the sunk instruction
** (a byte offset), whose frames name the constructor's line, into *mcofs.
** 1 when snapshot e has one, else 0. */
int texit_sunk(const GCtrace *T, SnapNo e, uint32_t *mcofs);

#if LJ_TARGET_ARM64
/* Bytes below a trace's stack frame that may hold the return address into
** it, saved by the C function the trace called (GCC puts the saved link
** register below that function's locals: a few words for lj_tab_new1 and
** kin; a little more for a larger frame). */
#define TEXIT_CALLEE_BYTES 256

/* Any context (async-signal-safe). arm64 only: 1 when the word v, a return
** address into T's code found at stack slot p, is where the C function T
** called from v - 4 saved it. A trace runs on the interpreter's C frame cf
** (cframe_raw(L->cframe)) less 16 bytes (vm_arm64.dasc, BC_JLOOP: "sub sp,
** sp, #16 // See SPS_FIXED") less its spill area (T->spadjust); the callee
** saves the link register just below that, at the place its prologue
** says (read from the `bl` at v - 4 to the callee's first instructions),
** or, where that can't be read (a `blr`, an unusual prologue), anywhere
** within TEXIT_CALLEE_BYTES. A word that points into T's code anywhere
** else is a stale one: left by another call in a slot this one did not
** write. A stale word can sit in its own trace's slot too: a trace with a
** smaller spill area than the running one left it in the running trace's
** spill slots (seldom all written), or one with a larger area in the
** running callee's frame. */
int texit_ret_slot(const GCtrace *T, uintptr_t cf, uintptr_t p, uintptr_t v);
#endif

#endif
