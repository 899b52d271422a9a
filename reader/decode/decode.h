/*
** ljlog reader library, layer 2: the decoder.
** Decodes INTRO, END, MAPPING, EVENTS and SAMPLES payloads into a sink.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_DECODE_H
#define LJLOG_READER_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "block/reader.h"

/* IDs at or above this are corrupt (bounds the ID table). */
#define DECODE_MAX_ID (1u << 28)

/* A sample with more Lua or more host frames than this is corrupt. */
#define DECODE_MAX_FRAMES 4096u
/* Largest missed count of a sample (the writer's is 32 bits). */
#define DECODE_MAX_MISSED 0xffffffffu

/* A TRACE record with more snapshots than this is corrupt (LuaJIT counts a
** trace's snapshots in 16 bits, GCtrace.nsnap). */
#define DECODE_MAX_SNAPS 65535u

/* A string from the log: NUL-terminated copy, len may count inner NULs. */
struct decode_str {
	const char *s;
	size_t len;
};

/* CLOCK triple. */
struct decode_clock {
	uint64_t counter; /* raw counter, not shifted */
	uint64_t mono_ns; /* CLOCK_MONOTONIC */
	uint64_t real_ns; /* CLOCK_REALTIME */
};

/* INTRO payload. */
struct decode_intro {
	uint64_t version;
	uint64_t pointer_size;
	uint64_t pid;
	struct decode_str exe;
	struct decode_str luajit_version;
	struct decode_str options;
	uint64_t counter_kind; /* FORMAT_COUNTER_* */
	uint64_t ts_shift;     /* ts = counter >> ts_shift */
	uint64_t counter_hz;   /* 0 when unknown */
	struct decode_clock clock;
};

/* END payload. */
struct decode_end {
	uint64_t events;
	uint64_t blocks;
	uint64_t bytes;
	uint64_t samples_dropped;
	uint64_t vms;
	struct decode_clock clock;
	/* (version 5) The write error that stopped the log here, 0 when the
	** writer closed it; and the writer's text for it (NUL-terminated,
	** cut to fit). */
	uint64_t stop_error;
	char stop_reason[128];
	/* (version 15) Waits of VM threads for the writer thread: how many,
	** nanoseconds in all (0 before). */
	uint64_t flush_waits, flush_wait_ns;
	/* (version 17) Events of buffers dropped whole (out of memory), those
	** buffers, and the events by family (FORMAT_FAM_*; [0] unused): 0
	** before. */
	uint64_t events_dropped, buffers_dropped;
	uint64_t fam_dropped[FORMAT_FAM__MAX];
};

struct decode_texit;

/* One Lua frame of a sample. */
struct decode_lua_frame {
	struct decode_obj *func; /* PROTO, CFUNC or FFUNC */
	uint64_t line;		 /* line being executed (PROTO) */
};

/* One ID, defined by a MAPPING record; pointers stay valid until decode_free. */
struct decode_obj {
	uint32_t id;
	uint32_t vm;	/* vm of the MAPPING block that defined it */
	unsigned kind;	/* FORMAT_REC_* */
	uint64_t block; /* index of the defining block */
	union {
		struct {
			uint64_t thread, heap, flags;
			uint64_t alloc_rate; /* version 7; 0: exact */
		} vm;
		struct {
			struct decode_str chunk;
			uint64_t firstline, numline;
			struct decode_str name; /* version 4; "" unknown */
		} proto;
		struct {
			uint64_t address;
			struct decode_str name, object;
		} cfunc;
		struct {
			uint64_t ffid;
			struct decode_str name;
			uint64_t flags;
		} ffunc;
		struct {
			uint64_t flags;
		} co;
		struct {
			uint64_t traceno;	  /* LuaJIT's number (reused) */
			struct decode_obj *proto; /* PROTO where it starts */
			uint64_t line;		  /* its first line */
			uint64_t root;	/* traceno of its root trace, or 0 */
			uint32_t nexit; /* snapshots (version 3), each: */
			struct decode_texit *exits;
		} trace;
		struct {
			uint64_t address;
			struct decode_str name, object;
			uint64_t flags; /* FORMAT_HOST_VM */
		} host;
		struct {
			/* version 6: the frames this record adds (own_*),
			** innermost first, and the totals with the parent's
			** (nlua, nhost): a sample's frames are the own ones,
			** then the parent's, and so on up. Kept unexpanded:
			** memory in proportion to the log. */
			uint32_t nlua, nhost;
			uint32_t own_lua, own_host;
			struct decode_lua_frame *lua; /* own Lua frames */
			struct decode_obj **host;     /* own HOSTSYMs */
			struct decode_obj *parent;    /* or NULL */
		} stack;
		struct {
			struct decode_str text; /* version 9 */
		} str;
	} u;
	/* Decoder state of a VM object. */
	uint64_t last_ts;	 /* last event time */
	uint64_t last_sample_ts; /* last sample time */
	uint64_t events;	 /* events decoded */
	uint64_t samples;	 /* samples decoded */
	uint32_t co; /* current coroutine (0: none switched to yet) */
	/* Free for the sink (zero until it sets them). */
	void *user;
	uint32_t user_idx;
};

/* EVENTS block header. */
struct decode_events {
	uint32_t vm;
	struct decode_obj *vmobj;
	uint64_t count;
	uint64_t base_ts;
	struct decode_clock clock;
	const struct reader_block *block;
};

/* One event. Fields an op does not use hold stale values. */
struct decode_event {
	unsigned op;  /* FORMAT_OP_* */
	unsigned lo;  /* site kind (ALLOC, REALLOC), phase (GC), sub (VM) */
	uint64_t ts;  /* absolute: base_ts + the dts so far */
	uint32_t vm;  /* VM ID */
	uint32_t co;  /* current coroutine (after a SWITCH: the new one) */
	int64_t slot; /* ENTER, EXIT */
	uint32_t id;  /* ENTER func, ALLOC/REALLOC site, SWITCH coroutine,
		      ** ZONE_PUSH name and MARK text (a STRING) */
	struct decode_obj *obj;	  /* the object named by id (NULL for ID 0) */
	struct decode_obj *vmobj; /* the VM */
	uint64_t line;		  /* ALLOC, REALLOC */
	/* ALLOC, REALLOC of site kind 3 in version 6 and later: the TRACE
	** running (or NULL), 1 + the offset into its code (or 0), and the
	** snapshot there (or NULL). With a snapshot, obj is the PROTO of
	** its frame afr - 1 (version 19: the innermost or its caller;
	** before, the innermost) and line the snapshot's allocation line
	** (version 19: 0 when not known) or that frame's line (before), its
	** outer frames the inlined callers; without one, obj is the TRACE
	** (when known) and line 0. */
	struct decode_obj *trace;
	uint64_t pcofs;
	const struct decode_texit *texit;
	uint64_t addr;	       /* ALLOC, FREE; REALLOC: the new address */
	uint64_t size;	       /* ALLOC, FREE; REALLOC: the new size */
	uint64_t old_addr;     /* REALLOC */
	uint64_t old_size;     /* REALLOC */
	uint64_t heap;	       /* GC, VM ATTACH and DETACH */
	uint64_t traceno;      /* TRACE_START, TRACE_ABORT */
	uint64_t reason;       /* TRACE_ABORT: LuaJIT's TraceError */
	struct decode_str msg; /* TRACE_ABORT: valid during the call */
	uint64_t index;	       /* event number in its block */
};

/* SAMPLES block header. */
struct decode_samples {
	uint32_t vm;
	struct decode_obj *vmobj;
	uint64_t count;
	uint64_t base_ts;
	struct decode_clock clock;
	uint64_t thread;  /* OS thread sampled */
	uint64_t signals; /* = count + dropped */
	uint64_t dropped;
	const struct reader_block *block;
};

/* A trace's exit state, a "snapshot" in LuaJIT and in the TRACE record
** (version 3), which ljlog calls an exit: where its machine code starts and the Lua frames it stands for, outermost first. */
struct decode_texit {
	uint64_t mcofs;
	uint32_t nframes;
	struct decode_lua_frame *f;
	int has_aline;	   /* version 19: */
	uint64_t aline[3]; /* the line its code allocates on, by what the
			   ** code called (FORMAT_CALL_*), 0: not known, */
	uint32_t afr;	   /* in frame f[afr - 1] (nframes, or one less) */
};

/* The snapshot of TRACE t holding byte offset ofs of its code:
** the last one starting at or before it (the first when none does; NULL
** when t has none), as LuaJIT's unwinder picks it. */
const struct decode_texit *decode_trace_exit(const struct decode_obj *t,
					     uint64_t ofs);

/* One sample. The frame arrays belong to the decoder and are reused by the
** next sample: a sink copies what it keeps. */
struct decode_sample {
	uint64_t ts;		  /* absolute: base_ts + the dts so far */
	unsigned state;		  /* FORMAT_STATE_* */
	struct decode_obj *trace; /* TRACE (state 7, flag 0x40), else NULL */
	uint64_t missed;  /* timer intervals merged into it (version 11) */
	uint64_t pcofs;	  /* state 7: 1 + offset into the trace's code, or 0 */
	uint64_t chkofs;  /* version 14: 1 + offset of the profile check the
			  ** code stops at next (jit.p's), or 0: the frames
			  ** are the snapshot's there (or at pcofs) */
	uint32_t inlined; /* innermost Lua frames from the trace's snapshot */
	uint32_t nlua, nhost;
	const struct decode_lua_frame *lua; /* innermost first */
	struct decode_obj *const *host;	    /* HOSTSYMs, innermost first */
	struct decode_obj *stack; /* its STACK (version 6), else NULL */
	uint32_t vm;
	struct decode_obj *vmobj;
	uint64_t index; /* sample number in its block */
};

/* -- Heap snapshots (HEAP blocks, version 7) --------------------------------- */

/* One reference of a heap object. Strings point into the payload: valid
** during the sink's call. */
struct decode_href {
	unsigned kind;	  /* FORMAT_HREF_* (without the weak bit) */
	int weak;	  /* from a weak table */
	uint64_t n;	  /* ARRAY index, UPVALUE index, STACK slot, CONST
			  ** index, TRACE_CONST IR ref */
	const char *name; /* FIELD_STR/NUM/OTHER key, UPVALUE and STACK
			  ** local name, TRACE role ("" none) */
	size_t namelen;
	uint64_t key;	 /* FIELD_OBJ key object, STACK frame function (0) */
	uint64_t target; /* heap ID */
};

/* A heap object (OBJECT record) with its references. */
struct decode_hobj {
	uint32_t vm;
	uint64_t snapshot; /* the VM's snapshot number, from 1 */
	uint64_t id;	   /* heap ID (per VM) */
	uint64_t addr;	   /* its block's address (version 10; has_addr) */
	int has_addr;
	unsigned type; /* FORMAT_HTYPE_* */
	uint64_t size;
	unsigned flags; /* FORMAT_HOBJ_* */
	const char *text;
	size_t textlen;
	uint32_t nref;
	const struct decode_href *refs; /* the decoder's, reused */
	const struct reader_block *block;
};

/* A root of a heap snapshot (ROOT record). */
struct decode_hroot {
	uint32_t vm;
	uint64_t snapshot;
	const char *name;
	size_t namelen;
	uint64_t target;
};

#define DECODE_HEAP_PARTS 32u /* SUMMARY parts, at most */

/* The end of a heap snapshot (SUMMARY record). */
struct decode_hsummary {
	uint32_t vm;
	uint64_t snapshot;
	struct decode_clock clock; /* when it started */
	unsigned gcstate;	   /* FORMAT_GC_* the GC was in */
	uint64_t objects, bytes;   /* objects and the sum of their sizes */
	uint64_t unreachable;	   /* objects no root reaches */
	uint64_t gc_total;	   /* LuaJIT's heap total (g->gc.total) */
	uint32_t nparts;	   /* allocations that are no objects */
	struct {
		const char *name;
		size_t namelen;
		uint64_t bytes;
	} part[DECODE_HEAP_PARTS];
	uint64_t other;	   /* the parts' sum */
	uint64_t pause_ns; /* the walk's time */
	const struct reader_block *block;
};

/* Where decoded data goes. Every callback is optional; a non-zero return
** stops decoding and is returned by decode_block. */
struct decode_sink {
	void *ud;
	int (*intro)(void *ud, const struct decode_intro *in);
	int (*end)(void *ud, const struct decode_end *e);
	int (*mapping)(void *ud, uint32_t vm, const struct reader_block *b);
	int (*record)(void *ud, struct decode_obj *obj);
	/* A NAME record (version 14) named obj, a PROTO or CFUNC defined
	** before: its u.proto.name or u.cfunc.name is the new name (the
	** record's, even ""); no new ID. */
	int (*rename)(void *ud, struct decode_obj *obj);
	int (*events)(void *ud, const struct decode_events *h);
	int (*event)(void *ud, const struct decode_event *ev);
	int (*events_done)(void *ud, const struct decode_events *h);
	int (*samples)(void *ud, const struct decode_samples *h);
	int (*sample)(void *ud, const struct decode_sample *s);
	int (*samples_done)(void *ud, const struct decode_samples *h);
	int (*heap_obj)(void *ud, const struct decode_hobj *o);
	int (*heap_root)(void *ud, const struct decode_hroot *r);
	int (*heap_summary)(void *ud, const struct decode_hsummary *s);
	int (*unknown)(void *ud, const struct reader_block *b);
	void (*warn)(void *ud, const char *msg);
};

struct decode;

/* New decoder feeding sink (copied); 0 or -ENOMEM. */
int decode_new(struct decode **out, const struct decode_sink *sink);

/* Free the decoder and every object (NULL is fine). */
void decode_free(struct decode *d);

/* Decode one block (payload from reader_payload; NULL only for a
** kind the decoder skips); 0, -EBADMSG (corrupt), -ENOTSUP (a format
** version this reader does not read), -ENOMEM or a sink's non-zero return. */
int decode_block(struct decode *d, const struct reader_block *b);

/* Message of the last error ("" if none). */
const char *decode_error(const struct decode *d);

/* The object with this ID, NULL if undefined. */
struct decode_obj *decode_lookup(const struct decode *d, uint64_t id);

/* Before the first block: the IDs the sink sees (decode_obj
** id and vm, and every vm field) are the log's plus base, so that the logs
** of several processes decoded into one sink never share an ID (one log's
** IDs run from 1 to DECODE_MAX_ID - 1). decode_lookup still takes the
** log's own IDs. */
void decode_set_idbase(struct decode *d, uint32_t base);

/* The largest ID the log defined so far (its own numbering),
** 0 for none: the next log's base is at least base + this + 1. */
uint32_t decode_max_id(const struct decode *d);

/* The INTRO block, NULL before it. */
const struct decode_intro *decode_intro(const struct decode *d);

/* The CLOCK pair of an END, EVENTS or SAMPLES block b whose payload was
** read, without decoding the log before it: 0, -ENOENT for a block of
** another kind, or -EBADMSG when the fields are cut. */
int decode_block_clock(const struct reader_block *b, struct decode_clock *out);

/* The END block, NULL before it. */
const struct decode_end *decode_end(const struct decode *d);

/* -- Block kinds -------------------------------------------------------------- */
/* One row per block kind this reader knows; decode_block, `ljlog dump` and
** `ljlog check` all go through it. A kind without a row is unknown (skipped
** by length, with a warning), never taken for another kind. */
#define DECODE_KIND_ONCE   1u /* at most one per log */
#define DECODE_KIND_FIRST  2u /* may (must) come before INTRO: INTRO itself */
#define DECODE_KIND_HEADER 4u /* `dump --headers` still decodes it */

struct decode_cur; /* a cursor over one payload (decode_base.h) */

struct decode_kind {
	unsigned kind;	/* FORMAT_KIND_*; its name is format_kind_name() */
	unsigned flags; /* DECODE_KIND_* */
	int (*decode)(struct decode *d, const struct reader_block *b,
		      struct decode_cur *c);
};

/* The row of a block kind, NULL when this reader lacks it. */
const struct decode_kind *decode_kind(unsigned kind);

/* The i-th row of the kind table, NULL past the last. */
const struct decode_kind *decode_kind_at(size_t i);

/* Totals so far: events decoded, VM records, samples decoded,
** samples dropped (SAMPLES dropped fields), SAMPLES blocks. */
uint64_t decode_events_total(const struct decode *d);
uint64_t decode_vms_total(const struct decode *d);
uint64_t decode_samples_total(const struct decode *d);
uint64_t decode_dropped_total(const struct decode *d);
uint64_t decode_samples_blocks(const struct decode *d);

/* -- Driver ------------------------------------------------------------------ */

/* Read every block of r into d. Returns 0 (complete: END read),
** -ENODATA (truncated), -EBADMSG (corrupt), -ENOTSUP, or -errno; the message
** (naming the offset) goes to err. */
int decode_run(struct reader *r, struct decode *d, char *err, size_t errlen);

/* -- Names ------------------------------------------------------------------- */
/* Enum names are format_*_name() in blocks/format.h. */

/* Chunk name as Lua shows it: "@app.lua" -> "app.lua",
** "=stdin" -> "stdin", source text -> [string "first line..."]. */
void decode_chunk_name(const struct decode_str *chunk, char *out, size_t len);

/* The chunk of a library function written in Lua (version 4). */
#define DECODE_BUILTIN_CHUNK "=[builtin]"

/* A PROTO as a Lua programmer reads it, at line (its firstline
** for the function itself): "fib (app.lua:4)", "app.lua:4" when it has no
** name, "table.remove" for a library function written in Lua, "main chunk
** (app.lua)" for a chunk's own function (firstline 0), "m (main chunk of
** app.lua)" when it has a name. */
#define DECODE_MAIN_CHUNK "main chunk"
void decode_proto_name(const struct decode_obj *o, uint64_t line, char *out,
		       size_t len);

#endif
