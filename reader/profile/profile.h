/*
** ljlog reader library, layer 3: the profile, a façade over the processors.
** Wires fnid, calls, heap and samples (reader/proc/) behind one fan-out
** sink, keeps what the INTRO and END blocks say, chooses the time base,
** and joins what each processor counted per function and per VM into the
** rows a report shows.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROFILE_H
#define LJLOG_READER_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "decode/decode.h"
#include "proc/calls.h"
#include "proc/fanout.h"
#include "proc/fnid.h"
#include "proc/heap.h"
#include "proc/samples.h"
#include "proc/zones.h"
#include "util/hmap.h"

/*
** Times are kept in ts units (counter >> ts_shift) and converted with
** profile_ns() once profile_finish() has chosen the time base. What each
** number means is said by the processor that counts it: proc/calls.h
** (frames, time), proc/heap.h (allocations, GC), proc/samples.h (samples,
** traces, stack views).
*/

/* profile_new flags. */
#define PROFILE_CALLTREE 0x1u /* build the call tree (calls.nodes) too */
/* A builtin's (fast or C function's) self samples stay its own; without it
** they count for the Lua function that called it, as jit.profile counts
** them (profile_fn.samples_self). */
#define PROFILE_BUILTINS 0x2u

/* Time base chosen by profile_finish. */
enum profile_timebase {
	PROFILE_TB_CLOCKS,  /* first and last CLOCK pairs */
	PROFILE_TB_HZ,	    /* INTRO counter_hz */
	PROFILE_TB_NS,	    /* the counter is in ns (CLOCK_MONOTONIC) */
	PROFILE_TB_ASSUMED, /* nothing to go by: 1 tick = 1 ns */
};

/* One function: its identity (fnid) and its counts (calls, heap, samples),
** joined by profile_finish. */
struct profile_fn {
	const char *name; /* owned by fnid */
	const char *file;
	uint64_t line;
	unsigned kind; /* FNID_* */
	uint64_t calls;
	uint64_t total; /* ts units */
	uint64_t self;	/* ts units */
	uint64_t alloc_count, alloc_bytes;
	uint64_t free_count, free_bytes;
	uint64_t samples;	/* self: see proc/samples.h */
	uint64_t samples_total; /* anywhere in the stack */
	/* Self with builtins' samples counted for their Lua caller, and the
	** builtin (function index) with the most of them, how many (0: none;
	** proc/samples.h). */
	uint64_t samples_lua;
	uint32_t via;
	uint64_t via_samples;
	/* The self samples the report ranks by: samples with
	** PROFILE_BUILTINS, else samples_lua. */
	uint64_t samples_self;
};

/* One VM: from its records and blocks, then (profile_finish) heap and
** samples. */
struct profile_vm {
	uint32_t id;
	uint64_t thread;
	uint64_t flags;	      /* VM record flags */
	uint64_t events;      /* events in its EVENTS blocks */
	uint64_t coroutines;  /* COROUTINE records of this VM */
	uint64_t heap_attach; /* ATTACH event, else VM record */
	uint64_t heap_detach; /* DETACH event (has_detach) */
	int has_detach;
	uint64_t alloc_count, alloc_bytes;
	uint64_t free_count, free_bytes;
	int64_t live;	  /* heap_attach + alloc_bytes - free_bytes */
	int64_t peak;	  /* highest live seen */
	uint64_t gc_peak; /* highest heap in GC events */
	uint64_t samples; /* samples of this VM */
	/* The timer intervals they stand for (proc/samples.h). */
	uint64_t intervals;
};

/* One log of a profile: profile_decode_logs decodes several into one
** profile (one for profile_decode), as one program's. */
struct profile_log {
	char *file;	  /* its path (owned) */
	uint64_t pid;	  /* INTRO: the process that wrote it (0: none) */
	uint64_t version; /* INTRO: format version */
	char *exe;	  /* INTRO: the executable (owned; NULL: no INTRO) */
	/* CLOCK_MONOTONIC of its first and last CLOCK pairs (INTRO, block
	** headers, END), and the time between them. */
	uint64_t first_ns, last_ns, duration_ns;
	uint64_t nclk;
	uint32_t idbase; /* its IDs, VMs' too, are the log's plus this */
	uint32_t maxid;	 /* the largest ID it defined */
	int rc;		 /* decoding it: 0 complete, -ENODATA truncated, ... */
	char err[256];	 /* what went wrong ("" nothing) */
};

/* Everything. */
struct profile {
	/* The processors, fed in this order by fan. */
	struct fnid fnid;
	struct calls calls;
	struct heap heap;
	struct samples smp;
	struct zones zones;
	struct fanout fan;
	/* Joined rows (after profile_finish). */
	struct profile_fn *fns;
	size_t nfn;
	struct profile_vm *vms; /* in order of first record */
	size_t nvm;
	struct hmap vmmap; /* VM ID + 1 -> index in vms + 1 */
	uint64_t events;
	uint64_t coroutines;
	unsigned flags; /* PROFILE_* given to profile_new */
	/* From the INTRO and END blocks (strings owned by the profile). */
	int have_intro;
	uint64_t version, pid, pointer_size, counter_kind, ts_shift, counter_hz;
	char *exe, *luajit_version, *options;
	int mixed_exe; /* logs of different executables (warned) */
	int have_end;
	struct decode_end end; /* several logs: their totals added */
	/* Time base (after profile_finish). */
	unsigned timebase;  /* PROFILE_TB_* */
	double ns_per_tick; /* one ts unit in ns */
	uint64_t duration_ns;
	uint64_t ts_first; /* the first event's ts, over all VMs (0: none) */
	struct decode_clock clk_first, clk_last;
	unsigned nclk;
	/* Warnings (decoder and processors), for the front end to print. */
	char **warnings;
	size_t nwarn;
	size_t nwarn_dropped;
	int opened; /* profile_decode could open the file */
	/* The logs decoded into it, in order (profile_decode_logs). With
	** more than one, every time is CLOCK_MONOTONIC ns (ts_shift 0). */
	struct profile_log *logs;
	size_t nlog;
	/* profile_only: keep only the samples and allocations in a zone. */
	const struct zones *only_z;  /* a finished profile's (while decoding) */
	uint32_t only_name;	     /* the zone's string index in only_z */
	char *only_str;		     /* its name (owned; NULL: no filter) */
	struct decode_sink fan_sink; /* the fan-out's own, wrapped */
	/* profile_narrow: a time window and stack filters. */
	int narrow; /* any of them (the sink is wrapped) */
	int win;    /* a window, from the first log's start: */
	uint64_t win_from_ns, win_to_ns; /* (to: UINT64_MAX none) */
	uint64_t win_lo, win_hi;	 /* in ts units, from the first INTRO */
	void *focus, *ignore;		 /* compiled regex_t, or NULL */
	char *focus_re, *ignore_re;	 /* their text (owned), or NULL */
	uint64_t narrowed;		 /* samples the filters left out */
};

/* New, empty profile (flags: PROFILE_*); 0 or -ENOMEM. */
int profile_new(struct profile **out, unsigned flags);

/* Free everything (NULL is fine). */
void profile_free(struct profile *p);

/* Before decoding into p (new): let through only the samples
** taken while the zone named name (string index in first, a finished
** profile of the same log) was open, anywhere in the zone stack, and only
** the allocations (ALLOC, REALLOC) made while it was open, as p's own
** zones processor sees it when it comes. Everything else passes. first
** must outlive the decoding only. 0 or -ENOMEM. */
int profile_only(struct profile *p, const struct profile *first, uint32_t name);

/* Before decoding into p (new): keep what happened in a time
** window (win: from from_ns to to_ns after the first log's start, to_ns
** UINT64_MAX for its end) and only the stacks through a frame matching
** focus and through none matching ignore (POSIX extended regular
** expressions; NULL none), with pprof's meanings:
** - timer samples outside the window, or whose frames (Lua functions as
**   the report names them, host symbols, the state's "(gc)"...) do not
**   pass, are left out, and counted in p->narrowed;
** - allocations and frees outside the window are left out;
** - calls count when their ENTER is in the window, and time only inside
**   it; with focus or ignore (p made with PROFILE_CALLTREE), the call
**   paths that do not pass are left out of the tree and of the
**   functions' calls, self and total time (profile_finish recounts
**   them from the tree);
** - an allocation site passes when its function's name does (a site has
**   no stack);
** - GC and zones stay the whole log's.
** 0, or -EINVAL with the message in err (a bad expression), -ENOMEM. */
int profile_narrow(struct profile *p, const char *focus, const char *ignore,
		   int win, uint64_t from_ns, uint64_t to_ns, char *err,
		   size_t errlen);

/* Fill sink so that a decoder feeds p (every processor). */
void profile_sink(struct profile *p, struct decode_sink *sink);

/* End of input: close the frames and GC phases still open at
** each VM's last timestamp, choose the time base, count the samples, join
** the rows. 0 or -ENOMEM. */
int profile_finish(struct profile *p);

/* Choose the time base from what was decoded so far (without
** finishing), so that profile_ns converts the figures of a log still being
** read. */
void profile_timebase_now(struct profile *p);

/* ts units to ns (after profile_finish). */
uint64_t profile_ns(const struct profile *p, uint64_t ticks);

/* Function indices sorted by self time, then samples, then
** alloc bytes, then name; caller frees. NULL when out of memory. */
uint32_t *profile_sorted_fns(const struct profile *p);
/* Functions with samples, sorted by samples_self, then samples_total;
** *n their number; caller frees; NULL when out of memory. */
uint32_t *profile_sorted_fns_samples(const struct profile *p, size_t *n);

/* Open path and decode it into p (new, from profile_new, perhaps
** with a processor set up: heap_interval), then finish it. Returns what
** profile_load does; p->opened says whether the file could be opened. */
int profile_decode(struct profile *p, const char *path, char *err,
		   size_t errlen);

/* Decode the logs paths[0..n) one after another into p (new,
** as for profile_decode), feeding sink (NULL: profile_sink's; a caller's
** own fan-out that holds it, to see the logs too), then finish p. Each
** log's IDs get a base of their own (decode_set_idbase), so that its
** VMs, coroutines and traces stay its own, while functions merge by
** identity (proc/fnid.h). With more than one log, its times go to
** CLOCK_MONOTONIC ns by its INTRO (counter_hz and clock pair), and p
** counts in ns. p->logs says what each gave. Returns 0 when every log
** was complete, else the first corrupt log's result (-EBADMSG, ...), else
** -ENODATA (one was truncated), or -ENOMEM; err names the log. A log
** that cannot be opened stops here (-errno; p->opened 0 when it was the
** first). */
int profile_decode_logs(struct profile *p, const char *const *paths, size_t n,
			const struct decode_sink *sink, char *err,
			size_t errlen);

/* The log an ID of p came from (an index into p->logs, 0
** without logs) and the ID in that log's own numbering (*local). */
size_t profile_id_log(const struct profile *p, uint32_t id, uint32_t *local);

/* A VM as a view names it, in buf of len: "VM 1", or with
** several logs "VM 1 of pid 123" (the ID in its own log). */
const char *profile_vm_label(const struct profile *p, uint32_t vm, char *buf,
			     size_t len);

/* -- Two profiles side by side (profile_diff.c) -------------------------------- */

/* A profile a and its base b: each function and allocation site of one
** with the index of the same one in the other (UINT32_MAX: none there).
** Functions are the same when their kind, name, file and line are;
** sites when their functions and lines are. */
struct profile_diff {
	const struct profile *a, *b;
	uint32_t *fn_b;	  /* by a's function index: b's */
	uint32_t *fn_a;	  /* by b's function index: a's */
	uint32_t *site_b; /* by a's site index (heap.sites): b's */
	uint32_t *site_a; /* by b's site index: a's */
};

/* Match a (finished) against b (finished); 0 or -ENOMEM. */
int profile_diff_new(struct profile_diff *d, const struct profile *a,
		     const struct profile *b);

/* Free the matches (a zeroed d is fine). */
void profile_diff_free(struct profile_diff *d);

/* -- One-call driver ---------------------------------------------------------- */

/* Open path, decode it into a new profile, finish it. Returns
** what decode_run does (0 complete, -ENODATA truncated, -EBADMSG corrupt,
** ...) with *out filled whenever the file could be opened (a truncated or
** corrupt log gives the profile of its valid part); message in err. */
int profile_load(const char *path, unsigned flags, struct profile **out,
		 char *err, size_t errlen);

#endif
