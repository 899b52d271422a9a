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

#include "blocks/format.h"
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

/* What compiled code called when it allocated, told from the call (the
** log's FORMAT_CALL_*): */
enum {
	TEXIT_ANY = FORMAT_CALL_ANY,	   /* anything */
	TEXIT_TABLE = FORMAT_CALL_TABLE,   /* LuaJIT's table constructors */
	TEXIT_NEWKEY = FORMAT_CALL_NEWKEY, /* its key insertion (NEWREF) */
	TEXIT_CLASSES
};

/* Where those functions are (jit.util.ircalladdr); newkey 0: not known. */
struct texit_callees {
	uintptr_t table[3]; /* lj_tab_new1, lj_tab_new_ah, lj_tab_dup */
	uintptr_t newkey;   /* lj_tab_newkey */
};

/* Caller keeps T alive. The lines of what snapshot i's code allocates, by
** class (TEXIT_*) into lines[TEXIT_CLASSES]: the line of every bytecode
** of that class in the stretch the snapshot's code compiles (its PCs up
** to the next snapshot's, in its innermost function), and for TEXIT_ANY,
** where no bytecode may allocate, the line of every bytecode there; 0
** when they are on several lines or the stretch can't be told (LuaJIT
** keeps no PC per IR instruction, and several lines may share a
** snapshot; and for a side trace's first snapshot, whose code remakes
** what its parent sank first). Returns 1 when the lines are in the caller of the
** snapshot's innermost frame (the snapshot is at a return, its code the
** caller's after it), else 0. */
int texit_alloc_lines(GCtrace *T, SnapNo i, uint32_t *lines);

/* Any context (async-signal-safe). The class (TEXIT_*) of the function
** that T's code called from the call that returns to byte offset ofs of
** its code, read from that call (x64: call rel32, or mov rax, imm64 and
** call rax; arm64: bl): TEXIT_ANY when it is none of c's or can't be
** read. */
unsigned texit_call_class(const GCtrace *T, uint32_t ofs,
			  const struct texit_callees *c);

/* Caller keeps T alive. The snapshot whose machine code holds byte offset
** ofs of T's code: the last one starting at or before it. */
SnapNo texit_at(const GCtrace *T, uint32_t ofs);

/* Caller keeps T alive (and so its parent). Side trace T's parent and the
** exit of the parent's it starts from, as LuaJIT's recorder keeps them in
** T's first IR instruction (IR_BASE: lj_record.c, lj_record_setup): the
** parent, *exitno set; NULL for a root trace. */
GCtrace *texit_parent(jit_State *J, const GCtrace *T, SnapNo *exitno);

/* Caller keeps T alive. Where the first allocation that T sank (LuaJIT's
** allocation sinking: the table or cdata is made only where it escapes,
** at an exit or in a side trace) among those snapshot e restores was in
** T's code: the start of the snapshot's code holding the sunk instruction
** (a byte offset), whose frames name the constructor's line, into *mcofs,
** and its class into *cls (TEXIT_TABLE for a table, else TEXIT_ANY). 1
** when snapshot e has one, else 0. */
int texit_sunk(const GCtrace *T, SnapNo e, uint32_t *mcofs, unsigned *cls);

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
