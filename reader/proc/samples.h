/*
** ljlog reader processors: timer samples and traces.
** The sample tree, samples per state, function and line, host symbols,
** compiled traces and trace aborts, and the views of a sample's stack.
**
** Every distinct stack, as the log gives it (host frames, Lua frames with
** their lines, trace, state), is a node of the sample tree with the number
** of samples that had it. samples_finish resolves host symbols to
** functions (a HOSTSYM at the address of a CFUNC is that C function) and
** counts per function and line from the merged stacks (samples_stack with
** SAMPLES_VIEW_MERGED, doc/format.txt "Merging a sample's stacks"):
**   samples        the function is the innermost Lua frame; in a sample
**                  without Lua frames, the innermost frame of its merged
**                  stack (a host function)
**   samples_total  the function is anywhere in the Lua-first stack (once
**                  per sample, whatever the recursion; not the host's way
**                  into the VM), or is the sample's self
**   by line        the innermost PROTO frame and the line it executes
**
** TRACE and HOSTSYM objects are found by ID in side tables of their own
** (decode_obj.user belongs to fnid).
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROC_SAMPLES_H
#define LJLOG_READER_PROC_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "decode/decode.h"
#include "proc/fnid.h"
#include "util/hmap.h"
#include "util/intern.h"

/* Sample-tree nodes past this many: deeper frames charge their parent. */
#define SAMPLES_MAX_NODES (1u << 22)

/* Frames of the sample tree: a tag in the top bits, then the value. */
#define SAMPLES_SF_SHIFT 61
#define SAMPLES_SF_STATE 1ull /* value: FORMAT_STATE_* */
#define SAMPLES_SF_HOST	 2ull /* value: index in hosts */
#define SAMPLES_SF_LUA	 3ull /* value: fn index << 32 | line */
#define SAMPLES_SF_TRACE 4ull /* value: index in traces */

/* One node of the sample tree: a distinct stack, read from the root (node
** 0): the host frames outside the outermost interpreter frame, the Lua
** frames, the other host frames (each part outermost first), the trace,
** the state. Leaves are states; samples are counted there. */
struct samples_node {
	uint32_t parent;  /* node index */
	uint64_t frame;	  /* SAMPLES_SF_* << SAMPLES_SF_SHIFT | value */
	uint64_t samples; /* samples whose stack ends here */
};

/* Samples of one function (after samples_finish; see the note above). */
struct samples_fn {
	uint64_t samples;	/* self */
	uint64_t samples_total; /* anywhere in the stack */
	/* Self with builtins' samples counted for the Lua function that
	** called them, as jit.profile counts them: a Lua function's own
	** and its builtins', a builtin's only where no Lua function called it
	** (a host calling it from C). */
	uint64_t samples_lua;
	/* Of a Lua function's samples_lua, the builtin (function index) that
	** held the most and how many (via_samples 0: none). */
	uint32_t via;
	uint64_t via_samples;
};

/* Samples at one line: the innermost PROTO frame and its line. */
struct samples_line {
	uint32_t fn; /* function index */
	uint64_t line;
	uint64_t samples;
};

/* One compiled trace (TRACE record). */
struct samples_trace {
	uint32_t id;	  /* TRACE ID */
	uint32_t vm;	  /* VM of its MAPPING block */
	uint64_t traceno; /* LuaJIT's number */
	uint32_t fn;	  /* function where it starts */
	uint64_t line;	  /* its first line */
	uint64_t root;	  /* traceno of its root trace, 0 for a root trace */
	uint64_t samples; /* samples in state trace with this trace */
	int stopped;	  /* a TRACE_STOP event named it */
};

/* Aborted trace recordings with one reason and message. */
struct samples_abort {
	uint64_t reason; /* LuaJIT's TraceError */
	char *message;	 /* up to its first NUL */
	uint64_t count;
};

/* One host symbol (HOSTSYM record). */
struct samples_host {
	uint64_t address;
	char *name, *object;
	uint64_t flags; /* FORMAT_HOST_VM */
	uint32_t fn;	/* function index (after samples_finish) */
	int vm_object;	/* in LuaJIT's object (named luajit* or
			** libluajit*), or the interpreter */
	int vm_inner;	/* and without a symbol: LuaJIT's own code, one
			** frame per run in SAMPLES_VIEW_LUA_FIRST */
};

struct samples {
	struct fnid *fnid;	  /* the functions (host functions are added) */
	uint64_t samples;	  /* samples decoded */
	uint64_t samples_dropped; /* dropped (SAMPLES blocks; END if more) */
	uint64_t signals;	  /* samples + samples_dropped */
	uint64_t intervals; /* timer intervals the samples stand for: each 1
			    ** + the intervals merged into it (version 11) */
	uint64_t state[FORMAT_STATE__MAX];	     /* samples per state */
	uint64_t state_intervals[FORMAT_STATE__MAX]; /* their intervals */
	struct samples_node *nodes;		     /* the sample tree */
	size_t nnode, nodecap;
	struct samples_fn *fns; /* by function index (after samples_finish) */
	size_t nfn;
	struct samples_line *lines; /* after samples_finish */
	size_t nline, linecap;
	struct samples_host *hosts;
	size_t nhost, hostcap;
	struct samples_trace *traces;
	size_t ntrace, tracecap;
	struct samples_abort *aborts;
	size_t nabort, abortcap;
	uint64_t trace_starts, trace_stops, trace_aborts, trace_flushes;
	/* Processor state. */
	struct intern nodekeys;	 /* (parent, frame) -> node - 1 */
	struct intern linekeys;	 /* (fn, line) -> line index */
	struct intern abortkeys; /* (reason, message) -> abort index */
	struct hmap objs;	 /* TRACE or HOSTSYM ID -> index + 1 */
	struct hmap vmsamples;	 /* VM ID + 1 -> samples */
	struct hmap vmintervals; /* VM ID + 1 -> intervals */
	struct hmap leafvm;	 /* leaf node << 32 | VM ID -> samples */
	uint64_t end_dropped;	 /* END's samples_dropped */
	uint64_t nodes_capped;	 /* frames past SAMPLES_MAX_NODES */
	uint64_t *rawf;		 /* one sample's frames */
	uint64_t *lastf;	 /* the previous sample's frames */
	uint32_t *lastn;	 /* and their nodes */
	uint32_t nlast;
	void (*warn)(void *ud, const char *msg);
	void *warn_ud;
};

/* Start s over the functions of fnid; warnings go to warn(ud)
** (NULL: none). */
void samples_init(struct samples *s, struct fnid *fnid,
		  void (*warn)(void *ud, const char *msg), void *ud);

/* Free everything. */
void samples_free(struct samples *s);

/* Fill sink so that a decoder's records, trace events,
** samples and END feed s. */
void samples_sink(struct samples *s, struct decode_sink *sink);

/* End of input: drops counted only by END, host functions,
** counts per function and line. 0 or -ENOMEM. */
int samples_finish(struct samples *s);

/* Samples of function fn (zero when none). */
const struct samples_fn *samples_fn_get(const struct samples *s, uint32_t fn);

/* The sample-tree node (a leaf: its state) of the sample the
** sink saw last; 0 before any. A sink after s's in a fan-out reads it for
** the sample being decoded. */
static inline uint32_t samples_last_node(const struct samples *s)
{
	return s->nlast ? s->lastn[s->nlast - 1] : 0;
}

/* Samples of VM id. */
uint64_t samples_vm_count(const struct samples *s, uint32_t id);

/* Timer intervals the samples of VM id stand for. */
uint64_t samples_vm_intervals(const struct samples *s, uint32_t id);

/* The samples of each leaf node by VM: calls fn(ud, node, vm,
** samples) for every pair, in no particular order; a non-zero return stops
** and is returned. */
int samples_each_leaf_vm(const struct samples *s,
			 int (*fn)(void *ud, uint32_t node, uint32_t vm,
				   uint64_t samples),
			 void *ud);

/* Line indices sorted by samples, then function name, then
** line; caller frees. */
uint32_t *samples_sorted_lines(const struct samples *s);

/* Trace indices sorted by samples, then definition; caller
** frees. */
uint32_t *samples_sorted_traces(const struct samples *s);

/* Abort indices sorted by count, reason, message; caller
** frees. */
uint32_t *samples_sorted_aborts(const struct samples *s);

/* -- Stack views -------------------------------------------------------------- */

/* Views of a sample's stack (samples_stack). */
enum samples_view {
	SAMPLES_VIEW_MERGED,	/* doc/format.txt "Merging a sample's stacks" */
	SAMPLES_VIEW_LUA,	/* the Lua frames (and the trace) only */
	SAMPLES_VIEW_HOST,	/* the host frames only, interpreter included */
	SAMPLES_VIEW_LUA_FIRST, /* Lua frames from the root Lua function,
				** then what the leaf runs (see below) */
};

/* samples_stack flags. */
#define SAMPLES_ST_LINES   0x1u /* Lua functions as the line they execute */
#define SAMPLES_ST_NOTRACE 0x2u /* no "trace N" frame */

/* Frame kinds of a view. */
enum samples_fr_kind {
	SAMPLES_FR_FN,	  /* a function: fn */
	SAMPLES_FR_LINE,  /* a line being executed: fn and line */
	SAMPLES_FR_TRACE, /* the trace running: trace */
	SAMPLES_FR_STATE, /* a sample with no frame in the view: state */
	SAMPLES_FR_VM,	  /* LuaJIT's own code: idx, the sample's state */
};

/* One frame of a view. */
struct samples_frame {
	unsigned kind; /* SAMPLES_FR_* */
	uint32_t fn;   /* FN, LINE: function index */
	uint64_t line; /* LINE */
	uint32_t idx;  /* TRACE: index in traces; STATE, VM: FORMAT_STATE_* */
};

/* Frames a view can have at most (out of samples_stack needs this room). */
#define SAMPLES_STACK_MAX (2 * DECODE_MAX_FRAMES + 4)

/* After samples_finish. The frames of sample-tree node `node`
** in `view` (SAMPLES_ST_* flags), outermost first, into out (room for
** SAMPLES_STACK_MAX); returns their number. A stack with no frame in the
** view is one SAMPLES_FR_STATE frame. Merged view: the host frames outside
** the outermost interpreter frame, the Lua frames, the trace, the host
** frames inside the innermost interpreter frame; a C function seen both
** as a Lua frame and, next to it, as a host frame is one frame; without
** an interpreter frame, the Lua frames, the trace, then the host frames
** (C code called from Lua, unwound only up to compiled code); without Lua
** frames, the innermost interpreter frame stands for them.
** Lua-first view (what a profile of Lua code shows): each stack starts at
** its thread's or coroutine's root Lua function: host frames outside the
** VM (_start, main, lua_pcall, the interpreter) and C functions below the
** first Lua function (luajit's pmain) are left out. Then the Lua frames.
** Then the host frames inside the innermost interpreter frame (or,
** without one, all of them: C code called from compiled code) as in the
** merged view, but: after a C function (a leaf as far as LuaJIT goes),
** LuaJIT's own frames are left out (the C code it reaches, an FFI call's
** target, stays); after a Lua function, each run of LuaJIT's own unnamed
** code is one SAMPLES_FR_VM frame. A sample in the collector or the JIT
** compiler ends in one SAMPLES_FR_VM frame, whatever ran inside. No trace
** frame (see samples_node_trace). A sample without a Lua function is one
** SAMPLES_FR_VM frame (a SAMPLES_FR_STATE one when idle or in ljlog), or,
** with no Lua frame and no interpreter frame either, its host frames (the
** host's own code). */
size_t samples_stack(const struct samples *s, uint32_t node, unsigned view,
		     unsigned flags, struct samples_frame *out);

/* After samples_finish. Index in traces of the trace that
** sample-tree node `node` ran, -1 for none. */
int64_t samples_node_trace(const struct samples *s, uint32_t node);

/* A SAMPLES_FR_VM frame's name for state (FORMAT_STATE_*):
** "(gc)", "(jit compiler)", "(interpreter)" or "(luajit)". */
const char *samples_vm_label(unsigned state);

/* A frame's name: the function's name, "chunk:line",
** "trace N", "(state)", and for SAMPLES_FR_VM "(gc)", "(jit compiler)",
** "(interpreter)" or "(luajit)". */
void samples_frame_name(const struct samples *s, const struct samples_frame *f,
			char *buf, size_t len);

#endif
