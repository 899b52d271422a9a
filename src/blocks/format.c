/*
** ljlog file format names: one table per enum of format.h, indexed by value.
** Writer and reader print these; tests/unit/test_format.c walks every table
** against doc/format.txt, so a name exists in exactly one place.
*/
#include "blocks/format.h"

#define NAME_OF(tab, v)                                                        \
	((v) < sizeof(tab) / sizeof((tab)[0]) && (tab)[v] ? (tab)[v] : "?")

static const char *const kind_names[] = {
    [FORMAT_KIND_INTRO] = "INTRO",     [FORMAT_KIND_END] = "END",
    [FORMAT_KIND_MAPPING] = "MAPPING", [FORMAT_KIND_EVENTS] = "EVENTS",
    [FORMAT_KIND_SAMPLES] = "SAMPLES", [FORMAT_KIND_HEAP] = "HEAP",
};

static const char *const counter_names[] = {
    [FORMAT_COUNTER_TSC] = "tsc",
    [FORMAT_COUNTER_MONO_NS] = "monotonic ns",
};

static const char *const rec_names[] = {
    [FORMAT_REC_VM] = "VM",
    [FORMAT_REC_PROTO] = "PROTO",
    [FORMAT_REC_CFUNC] = "CFUNC",
    [FORMAT_REC_FFUNC] = "FFUNC",
    [FORMAT_REC_COROUTINE] = "COROUTINE",
    [FORMAT_REC_TRACE] = "TRACE",
    [FORMAT_REC_HOSTSYM] = "HOSTSYM",
    [FORMAT_REC_STACK] = "STACK",
    [FORMAT_REC_STRING] = "STRING",
    [FORMAT_REC_NAME] = "NAME",
};

static const char *const op_names[] = {
    [FORMAT_OP_ENTER] = "ENTER",     [FORMAT_OP_EXIT] = "EXIT",
    [FORMAT_OP_ALLOC] = "ALLOC",     [FORMAT_OP_FREE] = "FREE",
    [FORMAT_OP_REALLOC] = "REALLOC", [FORMAT_OP_GC] = "GC",
    [FORMAT_OP_SWITCH] = "SWITCH",   [FORMAT_OP_VM] = "VM",
};

static const char *const vm_names[] = {
    [FORMAT_VM_ATTACH] = "ATTACH",
    [FORMAT_VM_DETACH] = "DETACH",
    [FORMAT_VM_TRACE_START] = "TRACE_START",
    [FORMAT_VM_TRACE_STOP] = "TRACE_STOP",
    [FORMAT_VM_TRACE_ABORT] = "TRACE_ABORT",
    [FORMAT_VM_TRACE_FLUSH] = "TRACE_FLUSH",
    [FORMAT_VM_ZONE_PUSH] = "ZONE_PUSH",
    [FORMAT_VM_ZONE_POP] = "ZONE_POP",
    [FORMAT_VM_MARK] = "MARK",
};

static const char *const state_names[FORMAT_STATE__MAX] = {
    [FORMAT_STATE_INTERP] = "interp", [FORMAT_STATE_C] = "c",
    [FORMAT_STATE_GC] = "gc",	      [FORMAT_STATE_EXIT] = "exit",
    [FORMAT_STATE_RECORD] = "record", [FORMAT_STATE_OPT] = "opt",
    [FORMAT_STATE_ASM] = "asm",	      [FORMAT_STATE_TRACE] = "trace",
    [FORMAT_STATE_IDLE] = "idle",     [FORMAT_STATE_LJLOG] = "ljlog",
};

static const char *const site_names[FORMAT_SITE__MAX] = {
    [FORMAT_SITE_UNKNOWN] = "unknown",
    [FORMAT_SITE_LUA] = "lua",
    [FORMAT_SITE_C] = "c",
    [FORMAT_SITE_TRACE] = "trace",
    [FORMAT_SITE_GC] = "gc",
    [FORMAT_SITE_JIT] = "jit",
    [FORMAT_SITE_INTERNAL] = "internal",
    [FORMAT_SITE_LJLOG] = "ljlog",
};

static const char *const gc_phase_names[FORMAT_GC__MAX] = {
    [FORMAT_GC_PAUSE] = "pause",   [FORMAT_GC_PROPAGATE] = "propagate",
    [FORMAT_GC_ATOMIC] = "atomic", [FORMAT_GC_SWEEPSTRING] = "sweepstring",
    [FORMAT_GC_SWEEP] = "sweep",   [FORMAT_GC_FINALIZE] = "finalize",
};

static const char *const fam_names[FORMAT_FAM__MAX] = {
    [FORMAT_FAM_CALLS] = "calls", [FORMAT_FAM_ALLOC] = "alloc",
    [FORMAT_FAM_GC] = "gc",	  [FORMAT_FAM_COROUTINES] = "coroutines",
    [FORMAT_FAM_JIT] = "jit",	  [FORMAT_FAM_VM] = "vm",
    [FORMAT_FAM_ZONES] = "zones", [FORMAT_FAM_SAMPLE] = "sample",
};

static const char *const htype_names[FORMAT_HTYPE__MAX] = {
    [FORMAT_HTYPE_STRING] = "string",	  [FORMAT_HTYPE_UPVALUE] = "upvalue",
    [FORMAT_HTYPE_THREAD] = "thread",	  [FORMAT_HTYPE_PROTO] = "proto",
    [FORMAT_HTYPE_FUNCTION] = "function", [FORMAT_HTYPE_TRACE] = "trace",
    [FORMAT_HTYPE_CDATA] = "cdata",	  [FORMAT_HTYPE_TABLE] = "table",
    [FORMAT_HTYPE_USERDATA] = "userdata",
};

static const char *const href_names[FORMAT_HREF__MAX] = {
    [FORMAT_HREF_ARRAY] = "array",
    [FORMAT_HREF_FIELD_STR] = "field",
    [FORMAT_HREF_FIELD_NUM] = "field",
    [FORMAT_HREF_FIELD_OBJ] = "field",
    [FORMAT_HREF_FIELD_OTHER] = "field",
    [FORMAT_HREF_KEY] = "key",
    [FORMAT_HREF_METATABLE] = "metatable",
    [FORMAT_HREF_ENV] = "environment",
    [FORMAT_HREF_UPVALUE] = "upvalue",
    [FORMAT_HREF_VALUE] = "value",
    [FORMAT_HREF_STACK] = "stack",
    [FORMAT_HREF_PROTO] = "prototype",
    [FORMAT_HREF_CONST] = "constant",
    [FORMAT_HREF_TRACE_CONST] = "trace constant",
    [FORMAT_HREF_CHUNKNAME] = "chunk name",
    [FORMAT_HREF_TRACE] = "trace",
    [FORMAT_HREF_OPENUPVAL] = "open upvalue",
    [FORMAT_HREF_BUFFER] = "buffer",
};

/* Any context. Heap object type name: "string", ..., "userdata"; "?". */
const char *format_htype_name(unsigned type)
{
	return NAME_OF(htype_names, type);
}

/* Any context. Heap reference kind name (without the weak bit); "?". */
const char *format_href_name(unsigned kind)
{
	return NAME_OF(href_names, kind);
}

/* Any context. Block kind name: "INTRO", ..., "SAMPLES"; "?" when unknown. */
const char *format_kind_name(unsigned kind)
{
	return NAME_OF(kind_names, kind);
}

/* Any context. INTRO counter_kind name: "tsc", "monotonic ns"; "?". */
const char *format_counter_name(unsigned counter)
{
	return NAME_OF(counter_names, counter);
}

/* Any context. MAPPING record kind name: "VM", ..., "HOSTSYM"; "?". */
const char *format_rec_name(unsigned kind)
{
	return NAME_OF(rec_names, kind);
}

/* Any context. Event op name: "ENTER", ..., "VM"; "?". */
const char *format_op_name(unsigned op)
{
	return NAME_OF(op_names, op);
}

/* Any context. VM event sub-kind name: "ATTACH", ..., "TRACE_FLUSH"; "?". */
const char *format_vm_name(unsigned sub)
{
	return NAME_OF(vm_names, sub);
}

/* Any context. Sample state name: "interp", ..., "idle"; "?". */
const char *format_state_name(unsigned state)
{
	return NAME_OF(state_names, state);
}

/* Any context. Allocation site kind name: "unknown", "lua", ...; "?". */
const char *format_site_name(unsigned site)
{
	return NAME_OF(site_names, site);
}

/* Any context. GC phase name: "pause", ..., "finalize"; "?". */
const char *format_gc_phase_name(unsigned phase)
{
	return NAME_OF(gc_phase_names, phase);
}

/* Any context. Event family name (END, version 17): "calls", ...; "?". */
const char *format_fam_name(unsigned fam)
{
	return NAME_OF(fam_names, fam);
}
