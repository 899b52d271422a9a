/*
** Test-only ljlog log builder: writes logs byte by byte from the format
** document, with the shared block codec, so reader tests can make any log.
** What the profiler itself writes is tested through the real encoder
** (test_flush.c: raw buffer words, the real mapper and flush encoder, the
** real decoder). This builder stays for what the real encoder never
** writes: corrupt, truncated and hostile logs, other format versions,
** exact IDs and addresses a reader test needs, and the synthetic logs of
** mklog; and for the INTRO, VM and END framing around test_flush's blocks.
*/
#ifndef LJLOG_TESTS_UNIT_LOGBUILD_H
#define LJLOG_TESTS_UNIT_LOGBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "blocks/blocks.h"

/* A growing byte buffer. */
struct lb {
	uint8_t *buf;
	size_t len, cap;
};

void lb_bytes(struct lb *b, const void *p, size_t n);
void lb_u8(struct lb *b, unsigned v);
void lb_uleb(struct lb *b, uint64_t v);
void lb_sleb(struct lb *b, int64_t v);
void lb_str(struct lb *b, const char *s);
void lb_free(struct lb *b);

/* A log: the file bytes and the totals END needs. */
struct lblog {
	struct lb file;
	uint64_t blocks;	  /* blocks written */
	uint64_t events;	  /* events in EVENTS blocks */
	uint64_t samples_dropped; /* dropped in SAMPLES blocks */
	uint64_t vms;		  /* VM records */
	uint64_t clock;		  /* next CLOCK counter */
	uint64_t clock_scale; /* CLOCK monotonic_ns = counter * clock_scale */
	uint64_t ts_shift;    /* INTRO fields */
	uint64_t counter_kind;
	uint64_t counter_hz;
	uint64_t version;	 /* INTRO version, 0 for FORMAT_VERSION */
	uint64_t stop_error;	 /* END (version 5): the write error, 0 none */
	const char *stop_reason; /* END (version 5): its text, NULL "" */
	uint64_t flush_waits;	 /* END (version 15) */
	uint64_t flush_wait_ns;
	/* END (version 17): buffers dropped, and their events by family
	** (FORMAT_FAM_*; events_dropped is their sum unless set apart by
	** events_dropped_adj, a wrong total for hostile logs). */
	uint64_t buffers_dropped;
	uint64_t fam_dropped[FORMAT_FAM__MAX];
	int64_t events_dropped_adj;
};

/* MAPPING payload under construction. */
struct lbmap {
	struct lb p;
	uint64_t vms;
	uint64_t version; /* TRACE records as this version writes them; 0:
			  ** FORMAT_VERSION */
};

/* EVENTS payload under construction (events only; header added later). */
struct lbev {
	struct lb p;
	uint64_t count;
	int64_t slot; /* encoder state: reset per block */
	uint64_t addr;
	uint64_t anext, fprev; /* version 12 guesses (doc/format.txt) */
	uint64_t version;      /* ALLOC and FREE as this version writes them; 0:
			  ** FORMAT_VERSION (set after ev_begin) */
	int allocs;	       /* ALLOC or FREE written (lblog_events checks
			  ** the log says the same version) */
	unsigned call;	       /* version 19: what compiled code called
		       ** (FORMAT_CALL_*) at the next trace sites */
};

/* Start a log: magic only (INTRO fields set to counter in ns, shift 0). */
void lblog_init(struct lblog *l);
void lblog_free(struct lblog *l);

/* Append a block of any kind with a correct header. */
void lblog_block(struct lblog *l, unsigned kind, const void *payload,
		 size_t len);

/* SAMPLES payload under construction (samples only; header added later).
** sam_add writes each sample both ways: inline frames (versions 2 to 5)
** into p, and (version 6) a STACK record of its own into stacks and the
** sample naming it into p6; lblog_samples picks by the log's version.
** Bytes a test writes into p itself are taken as they are. */
struct lbsam {
	struct lb p;
	uint64_t count;
	struct lb p6;	  /* version 6 samples */
	struct lb stacks; /* their STACK records */
	int v6;		  /* sam_add wrote p6 */
	uint64_t missed;  /* the next sam_add's missed (version 11 flag) */
	uint64_t chkofs;  /* the next sam_add's chkofs (version 14) */
};

/* STACK IDs the builder makes: from here up (a test's own IDs are lower). */
#define LB_STACK_ID0 (1u << 20)

/* Append a standard INTRO (FORMAT_VERSION, pid, counter in ns, CLOCK). */
void lblog_intro(struct lblog *l, uint64_t pid);
/* The same, saying another format version. */
void lblog_intro_version(struct lblog *l, uint64_t pid, uint64_t version);

/* Append an END with correct totals (samples_dropped: the SAMPLES blocks'). */
void lblog_end(struct lblog *l);

/* Write to a fresh temporary file; returns its path (static buffer). */
const char *lblog_write(const struct lblog *l);

/* MAPPING records. */
void map_begin(struct lbmap *m, uint64_t vm);
void map_vm(struct lbmap *m, uint64_t id, uint64_t thread, uint64_t heap,
	    uint64_t flags);
void map_vm_rate(struct lbmap *m, uint64_t id, uint64_t thread, uint64_t heap,
		 uint64_t flags, uint64_t alloc_rate);
void map_proto(struct lbmap *m, uint64_t id, const char *chunk,
	       uint64_t firstline, uint64_t numline);
void map_proto_v3(struct lbmap *m, uint64_t id, const char *chunk,
		  uint64_t firstline, uint64_t numline);
void map_proto_named(struct lbmap *m, uint64_t id, const char *chunk,
		     uint64_t firstline, uint64_t numline, const char *name);
void map_cfunc(struct lbmap *m, uint64_t id, uint64_t addr, const char *name,
	       const char *object);
void map_ffunc_asm(struct lbmap *m, uint64_t id, uint64_t ffid,
		   const char *name);
void map_ffunc_flags(struct lbmap *m, uint64_t id, uint64_t ffid,
		     const char *name, uint64_t flags);
void map_ffunc(struct lbmap *m, uint64_t id, uint64_t ffid, const char *name);
void map_co(struct lbmap *m, uint64_t id, uint64_t flags);
void map_trace(struct lbmap *m, uint64_t id, uint64_t traceno, uint64_t proto,
	       uint64_t line, uint64_t root);
/* snaps: per snapshot mcofs, nframes, then (proto, line) pairs. */
void map_trace_snaps(struct lbmap *m, uint64_t id, uint64_t traceno,
		     uint64_t proto, uint64_t line, uint64_t root,
		     uint64_t nsnap, const uint64_t *snaps);
/* The same with each snapshot's aline, tline and kline (version 19: 2 x
** line + up, line, line) from alines, three per snapshot; NULL: 2 x its
** innermost frame's line, 0, 0. */
void map_trace_snaps_al(struct lbmap *m, uint64_t id, uint64_t traceno,
			uint64_t proto, uint64_t line, uint64_t root,
			uint64_t nsnap, const uint64_t *snaps,
			const uint64_t *alines);
void map_hostsym(struct lbmap *m, uint64_t id, uint64_t addr, const char *name,
		 const char *object, uint64_t flags);
/* NAME (version 14): a PROTO or CFUNC defined before gets its name. */
void map_name(struct lbmap *m, uint64_t id, const char *name);
void lblog_mapping(struct lblog *l, struct lbmap *m);

/* Events, with absolute slots and addresses (the builder makes deltas). */
void ev_begin(struct lbev *e);
void ev_enter(struct lbev *e, int64_t slot, uint64_t func, uint64_t dt);
void ev_exit(struct lbev *e, int64_t slot, uint64_t dt);
void ev_alloc(struct lbev *e, unsigned site_kind, uint64_t site, uint64_t line,
	      uint64_t size, uint64_t addr, uint64_t dt);
void ev_free(struct lbev *e, uint64_t addr, uint64_t size, uint64_t dt);
void ev_realloc(struct lbev *e, unsigned site_kind, uint64_t site,
		uint64_t line, uint64_t old_addr, uint64_t old_size,
		uint64_t new_addr, uint64_t new_size, uint64_t dt);
void ev_gc(struct lbev *e, unsigned phase, uint64_t heap, uint64_t dt);
void ev_switch(struct lbev *e, uint64_t co, uint64_t dt);
void ev_vm(struct lbev *e, unsigned sub, uint64_t heap, uint64_t dt);
void ev_trace_start(struct lbev *e, uint64_t traceno, uint64_t proto,
		    uint64_t line, uint64_t dt);
void ev_trace_stop(struct lbev *e, uint64_t trace, uint64_t dt);
void ev_trace_abort(struct lbev *e, uint64_t traceno, uint64_t proto,
		    uint64_t line, uint64_t reason, const char *msg,
		    uint64_t dt);
void ev_trace_flush(struct lbev *e, uint64_t dt);

/* Append an EVENTS block: vm, count, base_ts, CLOCK, then the events. */
void lblog_events(struct lblog *l, uint64_t vm, uint64_t base_ts,
		  struct lbev *e);

/* Samples. lua: nlua (func, line) pairs, innermost first; host: nhost
** HOSTSYM IDs, innermost first. */
void sam_begin(struct lbsam *s);
void sam_add(struct lbsam *s, uint64_t dt, unsigned state, uint64_t trace,
	     uint64_t nlua, const uint64_t *lua, uint64_t nhost,
	     const uint64_t *host);
void sam_add_pc(struct lbsam *s, uint64_t dt, unsigned state, uint64_t trace,
		uint64_t pcofs, uint64_t nlua, const uint64_t *lua,
		uint64_t nhost, const uint64_t *host);

/* Append a SAMPLES block: vm, count, base_ts, CLOCK, thread, signals
** (count + dropped), dropped, then the samples; in version 6, a MAPPING
** block of vm with their STACK records first. */
void lblog_samples(struct lblog *l, uint64_t vm, uint64_t base_ts,
		   uint64_t thread, uint64_t dropped, struct lbsam *s);

/* The same with every header field given (count and signals too). */
void lblog_samples_raw(struct lblog *l, uint64_t vm, uint64_t count,
		       uint64_t base_ts, uint64_t thread, uint64_t signals,
		       uint64_t dropped, struct lbsam *s);

/* Test thread. Bytes of heap in use now (malloc's own count, or ASan's
** under ASan): what a reader holds, for tests of its memory. */
size_t lb_heap_in_use(void);

/* HEAP records of one block, for any format version: what the fields are
** differences from (addresses since version 10; IDs, targets and array
** indexes since 16). */
struct lbheap {
	uint64_t version;
	uint64_t addr, pid;  /* the block's last OBJECT's */
	uint64_t cur, aprev; /* the OBJECT's last reference's target, index */
};

/* Test thread. A HEAP block's records start (version 0: FORMAT_VERSION). */
void lbh_begin(struct lbheap *h, uint64_t version);

/* Test thread. An OBJECT record's head (its references follow, then a 0
** byte). A table's text "array N hash M[ mt NAME]" gives its sizes in
** version 16. */
void lbh_obj(struct lb *p, struct lbheap *h, uint64_t id, uint64_t addr,
	     unsigned type, uint64_t size, unsigned flags, const char *text);

/* Test thread. An array reference's index (after its kind byte). */
void lbh_index(struct lb *p, struct lbheap *h, uint64_t index);

/* Test thread. A reference's target (its last field). */
void lbh_target(struct lb *p, struct lbheap *h, uint64_t target);

#endif
