/*
** ljlog reader library, layer 3: processors fed by the decoder.
** Call trees and per-function stats, allocation sites, GC timeline, counts.
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
	void *st; /* processor state (private) */
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
	unsigned flags;		  /* PROFILE_* given to profile_new */
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

/* Any thread. Name of a function kind: "lua", "c", "fast", "internal". */
const char *profile_kind_name(unsigned kind);

/* -- One-call driver ---------------------------------------------------------- */

/* Any thread. Open path, decode it into a new profile, finish it. Returns
** what decode_run does (0 complete, -ENODATA truncated, -EBADMSG corrupt,
** ...) with *out filled whenever the file could be opened (a truncated or
** corrupt log gives the profile of its valid part); message in err. */
int profile_load(const char *path, unsigned flags, struct profile **out,
		 char *err, size_t errlen);

#endif
