/*
** ljlog file format constants, shared by the writer and the reader.
** doc/format.txt is the source of truth; tests/unit/test_format.c checks this.
*/
#ifndef LJLOG_BLOCKS_FORMAT_H
#define LJLOG_BLOCKS_FORMAT_H

#include <stdint.h>

/* -- Version changelog ---------------------------------------------------- */
/* 1: INTRO, END, MAPPING, EVENTS; calls, alloc, gc, coroutine, VM events.
** 2: SAMPLES blocks, TRACE and HOSTSYM records, trace events.
** 3: TRACE snapshots' frames; pcofs in state 7 samples.
** 4: PROTO records end with the function's name; FFUNC flag CALLBACK;
**    NOEXIT frames without it end at the next event.
** 5: END's stop_error and stop_reason (a write error stopped the log).
** 6: STACK records; a sample names its STACK, trace fields in state 7 only;
**    ALLOC/REALLOC trace sites name the TRACE and where in its code.
** 7: VM records end with alloc_rate (sampled allocation, alloc=RATE).
** 8: HEAP blocks (heap snapshots).
** 9: zones and marks: STRING records, VM events ZONE_PUSH, ZONE_POP, MARK.
** 10: OBJECT records give their block's address (allocation sites).
** 11: a sample's state may carry FORMAT_STATE_MISSED and the timer
**     intervals merged into it.
** 12: ALLOC and FREE without dt when it is 0 (FORMAT_ALLOC_NODT,
**     FORMAT_FREE_NODT); their addresses from a guess (format_chunk);
**     FREE's size before its address.
** 13: block header flag FORMAT_FLAG_XXH3: the payload checksum is XXH3's
**     (low 32 bits), set by the writer on every block.
** 14: a sample with a trace carries chkofs (the profile check its code
**     stops at next); FORMAT_STATE_TRACED: a trace outside state 7;
**     NAME records (a name found after the function's record); sample
**     state FORMAT_STATE_LJLOG (ljlog's own work on the VM's thread).
** 15: END ends with flush_waits and flush_wait_ns (the writer thread).
** 16: HEAP OBJECT IDs, reference targets and array indexes as differences
**     (sleb); a table's sizes as numbers before its text; UNREACHABLE in
**     the type byte (FORMAT_HTYPE_UNREACHABLE), no flags byte.
** 17: END ends with events_dropped, buffers_dropped and the dropped
**     events by family (FORMAT_FAM_*): buffers lost whole to an
**     out-of-memory error.
** 18: site kind FORMAT_SITE_LJLOG: an allocation made by one of ljlog's own
**     C functions (its objects, not the program's).
** 19: a TRACE snapshot ends with aline, the line its code allocates on
**     (0: not known); an allocation in compiled code is charged to it. */
#define FORMAT_VERSION 19

/* -- File and block header ------------------------------------------------- */
#define FORMAT_MAGIC	   "LJLOG\r\n\x1a"
#define FORMAT_MAGIC_LEN   8
#define FORMAT_SYNC	   0xB10Cu
#define FORMAT_HEADER_LEN  16
#define FORMAT_MAX_PAYLOAD (64u << 20)

/* Block header flags (version 13; other bits: a reader ignores them). */
#define FORMAT_FLAG_XXH3 1u /* payload checksum: XXH3-64, low 32 bits */

/* Block kinds. */
enum format_kind {
	FORMAT_KIND_INTRO = 1,
	FORMAT_KIND_END = 2,
	FORMAT_KIND_MAPPING = 3,
	FORMAT_KIND_EVENTS = 4,
	FORMAT_KIND_SAMPLES = 5,
	FORMAT_KIND_HEAP = 6,
};

/* Counter kinds (INTRO counter_kind). */
enum format_counter {
	FORMAT_COUNTER_TSC = 1,
	FORMAT_COUNTER_MONO_NS = 2,
};

/* MAPPING record kinds. */
enum format_rec {
	FORMAT_REC_VM = 1,
	FORMAT_REC_PROTO = 2,
	FORMAT_REC_CFUNC = 3,
	FORMAT_REC_FFUNC = 4,
	FORMAT_REC_COROUTINE = 5,
	FORMAT_REC_TRACE = 6,
	FORMAT_REC_HOSTSYM = 7,
	FORMAT_REC_STACK = 8,
	FORMAT_REC_STRING = 9,
	FORMAT_REC_NAME = 10,
};

#define FORMAT_VM_JIT_OFF  1u	/* VM record flags, bit 0 */
#define FORMAT_CO_MAIN	   1u	/* COROUTINE record flags, bit 0 */
#define FORMAT_FF_NOEXIT   1u	/* FFUNC record flags, bit 0: no EXIT ever */
#define FORMAT_FF_CALLBACK 2u	/* FFUNC bit 1 (v4): NOEXIT, may call Lua */
#define FORMAT_HOST_VM	   1u	/* HOSTSYM record flags, bit 0: interpreter */
#define FORMAT_STRING_MAX  255u /* zone names, mark texts: bytes kept */

/* -- Events ------------------------------------------------------------------ */
/* First byte of an event: op in the high 3 bits, lo in the low 5. */
#define FORMAT_OP_SHIFT	   5
#define FORMAT_LO_MASK	   31u
#define FORMAT_SLOT_ESCAPE 31u /* lo value: an sleb slot delta follows */

/* Version 12: an ALLOC whose lo has this bit (above its site kind), or a
** FREE whose lo is FORMAT_FREE_NODT, has no dt (it is 0). */
#define FORMAT_ALLOC_NODT 16u
#define FORMAT_FREE_NODT  1u

/* Version 12: the bytes LuaJIT's allocator takes for a block of size bytes
** (its chunk: 8 bytes of header, 8-byte aligned, 32 at least), from which
** ALLOC and FREE addresses are guessed. A guess only: any address still
** encodes, a wrong guess costs bytes. */
static inline uint64_t format_chunk(uint64_t size)
{
	return size < 23 ? 32 : (size + 15) & ~(uint64_t)7;
}

enum format_op {
	FORMAT_OP_ENTER = 0,
	FORMAT_OP_EXIT = 1,
	FORMAT_OP_ALLOC = 2,
	FORMAT_OP_FREE = 3,
	FORMAT_OP_REALLOC = 4,
	FORMAT_OP_GC = 5,
	FORMAT_OP_SWITCH = 6,
	FORMAT_OP_VM = 7,
};

/* VM event sub-kinds (lo of FORMAT_OP_VM). */
enum format_vm_sub {
	FORMAT_VM_ATTACH = 0,
	FORMAT_VM_DETACH = 1,
	FORMAT_VM_TRACE_START = 2,
	FORMAT_VM_TRACE_STOP = 3,
	FORMAT_VM_TRACE_ABORT = 4,
	FORMAT_VM_TRACE_FLUSH = 5,
	FORMAT_VM_ZONE_PUSH = 6,
	FORMAT_VM_ZONE_POP = 7,
	FORMAT_VM_MARK = 8,
};

/* Sample states (SAMPLES). */
enum format_state {
	FORMAT_STATE_INTERP = 0,
	FORMAT_STATE_C = 1,
	FORMAT_STATE_GC = 2,
	FORMAT_STATE_EXIT = 3,
	FORMAT_STATE_RECORD = 4,
	FORMAT_STATE_OPT = 5,
	FORMAT_STATE_ASM = 6,
	FORMAT_STATE_TRACE = 7,
	FORMAT_STATE_IDLE = 8,
	FORMAT_STATE_LJLOG = 9,
	FORMAT_STATE__MAX
};

/* Flag of a sample's state byte (version 11): a uleb missed follows it. */
#define FORMAT_STATE_MISSED 0x80
/* Version 14: a sample in another state than 7 with a trace and pcofs
** (the collector called from compiled code). */
#define FORMAT_STATE_TRACED 0x40

/* Allocation site kinds (lo of ALLOC and REALLOC). */
enum format_site {
	FORMAT_SITE_UNKNOWN = 0,
	FORMAT_SITE_LUA = 1,
	FORMAT_SITE_C = 2,
	FORMAT_SITE_TRACE = 3,
	FORMAT_SITE_GC = 4,
	FORMAT_SITE_JIT = 5,
	FORMAT_SITE_INTERNAL = 6,
	FORMAT_SITE_LJLOG = 7,
	FORMAT_SITE__MAX
};

/* What compiled code called when it allocated (version 19: the low two
** bits of a trace site's line; src/maps/texit.h, TEXIT_*). */
enum {
	FORMAT_CALL_ANY = 0,	/* anything, or not known */
	FORMAT_CALL_TABLE = 1,	/* LuaJIT's table constructor */
	FORMAT_CALL_NEWKEY = 2, /* its key insertion */
};

/* GC phases (lo of FORMAT_OP_GC), LuaJIT's GCS* order. */
enum format_gc_phase {
	FORMAT_GC_PAUSE = 0,
	FORMAT_GC_PROPAGATE = 1,
	FORMAT_GC_ATOMIC = 2,
	FORMAT_GC_SWEEPSTRING = 3,
	FORMAT_GC_SWEEP = 4,
	FORMAT_GC_FINALIZE = 5,
	FORMAT_GC__MAX
};

/* Event families of END's dropped events (version 17). */
enum format_fam {
	FORMAT_FAM_CALLS = 1,
	FORMAT_FAM_ALLOC = 2,
	FORMAT_FAM_GC = 3,
	FORMAT_FAM_COROUTINES = 4,
	FORMAT_FAM_JIT = 5,
	FORMAT_FAM_VM = 6,
	FORMAT_FAM_ZONES = 7,
	FORMAT_FAM_SAMPLE = 8,
	FORMAT_FAM__MAX
};

/* -- Heap snapshots (HEAP blocks, version 7) ------------------------------- */
enum format_heap_rec {
	FORMAT_HEAP_OBJECT = 1,
	FORMAT_HEAP_ROOT = 2,
	FORMAT_HEAP_SUMMARY = 3,
};

/* Object types (OBJECT type): LuaJIT's GC types in its own order. */
enum format_htype {
	FORMAT_HTYPE_STRING = 1,
	FORMAT_HTYPE_UPVALUE = 2,
	FORMAT_HTYPE_THREAD = 3,
	FORMAT_HTYPE_PROTO = 4,
	FORMAT_HTYPE_FUNCTION = 5,
	FORMAT_HTYPE_TRACE = 6,
	FORMAT_HTYPE_CDATA = 7,
	FORMAT_HTYPE_TABLE = 8,
	FORMAT_HTYPE_USERDATA = 9,
	FORMAT_HTYPE__MAX
};

#define FORMAT_HOBJ_UNREACHABLE 1u /* OBJECT flags, bit 0 */
/* Version 16: no flags byte; UNREACHABLE is the type byte's bit 7. */
#define FORMAT_HTYPE_UNREACHABLE 0x80u
#define FORMAT_HREF_WEAK	 0x80u /* reference kind byte, bit 7 */

/* Reference kinds (low 7 bits of a reference's first byte; 0 ends). */
enum format_href {
	FORMAT_HREF_ARRAY = 1,
	FORMAT_HREF_FIELD_STR = 2,
	FORMAT_HREF_FIELD_NUM = 3,
	FORMAT_HREF_FIELD_OBJ = 4,
	FORMAT_HREF_FIELD_OTHER = 5,
	FORMAT_HREF_KEY = 6,
	FORMAT_HREF_METATABLE = 7,
	FORMAT_HREF_ENV = 8,
	FORMAT_HREF_UPVALUE = 9,
	FORMAT_HREF_VALUE = 10,
	FORMAT_HREF_STACK = 11,
	FORMAT_HREF_PROTO = 12,
	FORMAT_HREF_CONST = 13,
	FORMAT_HREF_TRACE_CONST = 14,
	FORMAT_HREF_CHUNKNAME = 15,
	FORMAT_HREF_TRACE = 16,
	FORMAT_HREF_OPENUPVAL = 17,
	FORMAT_HREF_BUFFER = 18,
	FORMAT_HREF__MAX
};

/* -- Names (format.c) ------------------------------------------------------ */
/* One table per enum, indexed by value; "?" for a value the table lacks. */
const char *format_kind_name(unsigned kind);
const char *format_counter_name(unsigned counter);
const char *format_rec_name(unsigned kind);
const char *format_op_name(unsigned op);
const char *format_vm_name(unsigned sub);
const char *format_state_name(unsigned state);
const char *format_site_name(unsigned site);
const char *format_gc_phase_name(unsigned phase);
const char *format_fam_name(unsigned fam);
const char *format_htype_name(unsigned type);
const char *format_href_name(unsigned kind);

#endif
