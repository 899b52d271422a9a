/*
** ljlog reader library, layer 3: processors fed by the decoder.
** Call trees and per-function stats, allocation sites, GC timeline, counts,
** sample stacks and traces.
*/
#ifndef LJLOG_READER_PROFILE_H
#define LJLOG_READER_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "decode.h"

/*
** Times are kept in ts units (counter >> ts_shift) and converted with
** profile_ns() once profile_finish() has chosen the time base.
**
** Frames follow doc/format.txt ("Frames (calls)"), one stack per coroutine.
** A coroutine that yields is suspended: its open frames stop counting until
** it is resumed, while the time it runs counts for the frames of the
** coroutines that resumed it (they are waiting in coroutine.resume).
** Total time counts each moment once per VM, whatever the recursion.
**
** Samples: every distinct stack, as the log gives it (host frames, Lua
** frames with their lines, trace, state), is a node of the sample tree with
** the number of samples that had it. profile_finish resolves host symbols to
** functions (a HOSTSYM at the address of a CFUNC is that C function) and
** counts per function and line from the merged stacks (profile_stack with
** PROFILE_VIEW_MERGED, doc/format.txt "Merging a sample's stacks"):
**   samples        the function is the innermost Lua frame; in a sample
**                  without Lua frames, the innermost frame of its merged
**                  stack (a host function)
**   samples_total  the function is anywhere in the merged stack (once per
**                  sample, whatever the recursion)
**   by line        the innermost PROTO frame and the line it executes
*/

/* profile_new flags. */
#define PROFILE_CALLTREE 0x1u /* build the call tree (nodes) too */

/* Call-tree nodes past this many: deeper calls charge their parent's node. */
#define PROFILE_MAX_NODES (1u << 22)

/* Function kinds. */
enum profile_fn_kind {
	PROFILE_FN_LUA,
	PROFILE_FN_C,
	PROFILE_FN_FAST,
	PROFILE_FN_INTERNAL,
	PROFILE_FN_HOST, /* host machine code known only from HOSTSYMs */
};

/* Time base chosen by profile_finish. */
enum profile_timebase {
	PROFILE_TB_CLOCKS,  /* first and last CLOCK pairs */
	PROFILE_TB_HZ,	    /* INTRO counter_hz */
	PROFILE_TB_NS,	    /* the counter is in ns (CLOCK_MONOTONIC) */
	PROFILE_TB_ASSUMED, /* nothing to go by: 1 tick = 1 ns */
};

/* One function identity (merged across IDs and VMs). */
struct profile_fn {
	char *name;    /* "app.lua:12", "string.rep", "io.write", "(gc)" */
	char *file;    /* Lua: chunk as shown; C: object; else "" */
	uint64_t line; /* Lua: firstline; else 0 */
	unsigned kind; /* PROFILE_FN_* */
	int noexit;    /* an assembler fast function: never an EXIT */
	uint64_t calls;
	uint64_t total; /* ts units */
	uint64_t self;	/* ts units */
	uint64_t alloc_count, alloc_bytes;
	uint64_t free_count, free_bytes;
	uint64_t samples;	/* self: see the note at the top */
	uint64_t samples_total; /* anywhere in the stack */
};

/* Samples at one line: the innermost PROTO frame and its line. */
struct profile_line {
	uint32_t fn; /* index in fns */
	uint64_t line;
	uint64_t samples;
};

/* One compiled trace (TRACE record). */
struct profile_trace {
	uint32_t id;	  /* TRACE ID */
	uint32_t vm;	  /* VM of its MAPPING block */
	uint64_t traceno; /* LuaJIT's number */
	uint32_t fn;	  /* function where it starts (index in fns) */
	uint64_t line;	  /* its first line */
	uint64_t root;	  /* traceno of its root trace, 0 for a root trace */
	uint64_t samples; /* samples in state trace with this trace */
	int stopped;	  /* a TRACE_STOP event named it */
};

/* Aborted trace recordings with one reason and message. */
struct profile_abort {
	uint64_t reason; /* LuaJIT's TraceError */
	char *message;
	uint64_t count;
};

/* One host symbol (HOSTSYM record). */
struct profile_host {
	uint64_t address;
	char *name, *object;
	uint64_t flags; /* FORMAT_HOST_VM */
	uint32_t fn;	/* index in fns (after profile_finish) */
};

/* Frames of the sample tree: a tag in the top bits, then the value. */
#define PROFILE_SF_SHIFT 61
#define PROFILE_SF_STATE 1ull /* value: FORMAT_STATE_* */
#define PROFILE_SF_HOST	 2ull /* value: index in hosts */
#define PROFILE_SF_LUA	 3ull /* value: fn index << 32 | line */
#define PROFILE_SF_TRACE 4ull /* value: index in traces */

/* One node of the sample tree: a distinct stack, read from the root (node
** 0): the host frames outside the outermost interpreter frame, the Lua
** frames, the other host frames (each part outermost first), the trace,
** the state. Leaves are states; samples are counted there. */
struct profile_snode {
	uint32_t parent;  /* node index */
	uint64_t frame;	  /* PROFILE_SF_* << PROFILE_SF_SHIFT | value */
	uint64_t samples; /* samples whose stack ends here */
};

/* One allocation site: a function and a line. */
struct profile_site {
	uint32_t fn; /* index in fns */
	uint64_t line;
	uint64_t alloc_count, alloc_bytes;
	uint64_t free_count, free_bytes;
};

/* One call-tree node: a call path. Node 0 is the root. Only with
** PROFILE_CALLTREE. */
struct profile_node {
	uint32_t parent; /* node index */
	uint32_t fn;	 /* index in fns (root: UINT32_MAX) */
	uint64_t calls;
	uint64_t self; /* ts units */
};

/* One VM. */
struct profile_vm {
	uint32_t id;
	uint64_t thread;
	uint64_t flags; /* VM record flags */
	uint64_t events;
	uint64_t coroutines;  /* COROUTINE records of this VM */
	uint64_t heap_attach; /* ATTACH event, else VM record */
	uint64_t heap_detach; /* DETACH event (has_detach) */
	int has_detach;
	uint64_t alloc_count, alloc_bytes;
	uint64_t free_count, free_bytes;
	int64_t live;	  /* heap_attach + alloc_bytes - free_bytes */
	int64_t peak;	  /* highest live seen */
	uint64_t gc_peak; /* highest heap in GC events */
	uint64_t first_ts, last_ts;
	int has_ts;
	uint64_t samples; /* samples of this VM */
	void *st;	  /* processor state (private) */
};

/* GC timeline, over all VMs. */
struct profile_gc {
	uint64_t events;
	uint64_t cycles;
	uint64_t phase[FORMAT_GC__MAX]; /* ts units */
	uint64_t peak_heap;
};

/* Everything the processors produce. */
struct profile {
	struct profile_fn *fns;
	size_t nfn;
	struct profile_site *sites;
	size_t nsite;
	struct profile_node *nodes;
	size_t nnode;
	struct profile_vm **vms;
	size_t nvm;
	struct profile_gc gc;
	uint64_t events;
	uint64_t coroutines;
	uint64_t unmatched_exits; /* EXIT with no frame at its slot (entered
					   before the profiler attached) */
	/* Samples. */
	uint64_t samples;	  /* samples decoded */
	uint64_t samples_dropped; /* dropped (SAMPLES blocks; END if more) */
	uint64_t signals;	  /* samples + samples_dropped */
	uint64_t state[FORMAT_STATE__MAX]; /* samples per state */
	struct profile_snode *snodes;	   /* the sample tree */
	size_t nsnode;
	struct profile_line *lines; /* after profile_finish */
	size_t nline;
	struct profile_host *hosts;
	size_t nhost;
	/* Traces. */
	struct profile_trace *traces;
	size_t ntrace;
	struct profile_abort *aborts;
	size_t nabort;
	uint64_t trace_starts, trace_stops, trace_aborts, trace_flushes;
	unsigned flags; /* PROFILE_* given to profile_new */
	/* From the INTRO and END blocks (strings owned by the profile). */
	int have_intro;
	uint64_t version, pid, pointer_size, counter_kind, ts_shift, counter_hz;
	char *exe, *luajit_version, *options;
	int have_end;
	struct decode_end end;
	/* Time base (after profile_finish). */
	unsigned timebase;  /* PROFILE_TB_* */
	double ns_per_tick; /* one ts unit in ns */
	uint64_t duration_ns;
	struct decode_clock clk_first, clk_last;
	unsigned nclk;
	/* Warnings (decoder and processors), for the front end to print. */
	char **warnings;
	size_t nwarn;
	void *priv;
};

/* Any thread. New, empty profile (flags: PROFILE_*); 0 or -ENOMEM. */
int profile_new(struct profile **out, unsigned flags);

/* Any thread. Free everything (NULL is fine). */
void profile_free(struct profile *p);

/* Any thread. Fill sink so that a decoder feeds p. */
void profile_sink(struct profile *p, struct decode_sink *sink);

/* Any thread. End of input: close the frames and GC phases still open at
** each VM's last timestamp and choose the time base. 0 or -ENOMEM. */
int profile_finish(struct profile *p);

/* Any thread. ts units to ns (after profile_finish). */
uint64_t profile_ns(const struct profile *p, uint64_t ticks);

/* Any thread. Function indices sorted by self time, then alloc bytes, then
** name; caller frees. NULL when out of memory. */
uint32_t *profile_sorted_fns(const struct profile *p);

/* Any thread. Site indices sorted by alloc bytes; caller frees. */
uint32_t *profile_sorted_sites(const struct profile *p);

/* Any thread. Function indices with samples (samples_total > 0), sorted by
** samples, then samples_total, then name; *n gets their number. Caller
** frees; NULL when out of memory. */
uint32_t *profile_sorted_fns_samples(const struct profile *p, size_t *n);

/* Any thread. Line indices sorted by samples; caller frees. */
uint32_t *profile_sorted_lines(const struct profile *p);

/* Any thread. Trace indices sorted by samples, then definition; caller
** frees. */
uint32_t *profile_sorted_traces(const struct profile *p);

/* Any thread. Abort indices sorted by count; caller frees. */
uint32_t *profile_sorted_aborts(const struct profile *p);

/* Any thread. Name of a function kind: "lua", "c", "fast", "internal",
** "host". */
const char *profile_kind_name(unsigned kind);

/* -- Sample stacks -------------------------------------------------------------- */

/* Views of a sample's stack (profile_stack). */
enum profile_view {
	PROFILE_VIEW_MERGED, /* doc/format.txt "Merging a sample's stacks" */
	PROFILE_VIEW_LUA,    /* the Lua frames (and the trace) only */
	PROFILE_VIEW_HOST,   /* the host frames only, interpreter included */
};

/* profile_stack flags. */
#define PROFILE_ST_LINES   0x1u /* Lua functions as the line they execute */
#define PROFILE_ST_NOTRACE 0x2u /* no "trace N" frame */

/* Frame kinds of a view. */
enum profile_fr_kind {
	PROFILE_FR_FN,	  /* a function: fn */
	PROFILE_FR_LINE,  /* a line being executed: fn and line */
	PROFILE_FR_TRACE, /* the trace running: trace */
	PROFILE_FR_STATE, /* a sample with no frame in the view: state */
};

/* One frame of a view. */
struct profile_frame {
	unsigned kind; /* PROFILE_FR_* */
	uint32_t fn;   /* FN, LINE: index in fns */
	uint64_t line; /* LINE */
	uint32_t idx;  /* TRACE: index in traces; STATE: FORMAT_STATE_* */
};

/* Frames a view can have at most (out of profile_stack needs this room). */
#define PROFILE_STACK_MAX (2 * DECODE_MAX_FRAMES + 4)

/* Any thread, after profile_finish. The frames of sample-tree node `node`
** in `view` (PROFILE_ST_* flags), outermost first, into out (room for
** PROFILE_STACK_MAX); returns their number. A stack with no frame in the
** view is one PROFILE_FR_STATE frame. Merged view: the host frames outside
** the outermost interpreter frame, the Lua frames, the trace, the host
** frames inside the innermost interpreter frame; a C function seen both
** as a Lua frame and, next to it, as a host frame is one frame; without
** an interpreter frame, the Lua frames, the trace, then the host frames
** (C code called from Lua, unwound only up to compiled code); without Lua
** frames, the innermost interpreter frame stands for them. */
size_t profile_stack(const struct profile *p, uint32_t node, unsigned view,
		     unsigned flags, struct profile_frame *out);

/* Any thread. A frame's name: the function's name, "chunk:line",
** "trace N", "(state)". */
void profile_frame_name(const struct profile *p, const struct profile_frame *f,
			char *buf, size_t len);

/* -- One-call driver ---------------------------------------------------------- */

/* Any thread. Open path, decode it into a new profile, finish it. Returns
** what decode_run does (0 complete, -ENODATA truncated, -EBADMSG corrupt,
** ...) with *out filled whenever the file could be opened (a truncated or
** corrupt log gives the profile of its valid part); message in err. */
int profile_load(const char *path, unsigned flags, struct profile **out,
		 char *err, size_t errlen);

#endif
