/*
** ljlog logger: per-VM state, attach and detach.
** One struct logger_vm per global_State, owned by the thread running the VM
** (hooks, C wrapper, allocator, flush): no lock on the hot path. Other
** threads touch only these parts of it:
**   map      under the mapper's lock: the sampler's helper (a drain), the
**            writer thread (an encode, flushq.h)
**   q        the writer thread's side of the buffers (flushq.h)
**   s        the sampler's signal handler and helper (stat/sample.h)
**   trig     snaptrig.c's signal handler and timer thread, and a mapping
**            pass, ask for work (work: atomic) and the timer thread
**            writes due; the hook is armed on the VM thread (snaptrig.h)
**   tid, next, id  the registry, under the global lock (writer_lock):
**            at_exit, a forked child's handler (which, single-threaded,
**            also resets the VMs of the thread that forked)
*/
#ifndef LJLOG_LOGGER_LOGGER_H
#define LJLOG_LOGGER_LOGGER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "blocks/writer.h"
#include "heap/snap.h"
#include "logger/alloc.h"
#include "logger/buf.h"
#include "logger/flush.h"
#include "logger/flushq.h"
#include "logger/jitev.h"
#include "logger/opts.h"
#include "logger/snaptrig.h"
#include "logger/vmheap.h"
#include "maps/ljwin.h"
#include "maps/mapper.h"
#include "stat/clock.h"
#include "stat/sample.h"
#include "util/addrset.h"
#include "util/rng.h"
#include "util/util.h"

/* The lifecycle of a logger_vm; logger.c changes it in one place
** (vm_become), as:
**   ATTACHING -> RUNNING      logger_attach: the VM's allocator is ours
**   any -> FLUSHING -> back   logger_flush (none nested: a guard)
**   any -> FORKED -> RUNNING  a forked child's handler; its first flush
**                             maps the stack of fork_L first
** A detach is no state of its own: it runs in RUNNING or FORKED (a child
** that detaches before its first flush maps fork_L's stack at the
** detach's flush), and frees the state at its end. at_exit writes a
** DETACH and leaves its VMs as they are: the process ends. */
enum logger_state {
	LOGGER_ATTACHING, /* being set up: calloc's zero */
	LOGGER_RUNNING,	  /* recording */
	LOGGER_FLUSHING,  /* inside logger_flush */
	LOGGER_FORKED	  /* a forked child's, before its first flush */
};

struct logger_vm {
	/* -- Hot: the recorders ---------------------------------------------- */
	uint64_t *bp;		    /* next free word of the buffer */
	uint64_t *bend;		    /* flush when bp reaches it */
	uint64_t flush_at;	    /* counter value of the next timed flush */
	lua_State *last_L;	    /* coroutine of the last record */
	global_State *g;	    /* the VM */
	struct vmheap_mstate *heap; /* its allocator, kept from trimming */
	unsigned events;	    /* OPTS_* families */
	uint64_t ts_last;	    /* latest clock read (allocation events) */
	uint32_t ts_left;	    /* allocator calls before the next read */
	int64_t alloc_left;	    /* alloc=RATE: bytes to the next sample */
	uint64_t alloc_rate;	    /* alloc=RATE, 0: every allocation */
	struct addrset sampled;	    /* alloc=RATE: blocks recorded, live */
	struct rng rng;		    /* alloc=RATE: the countdowns */
	uint8_t gcstate;	    /* last GC state seen by the allocator */
	uint8_t state;		    /* enum logger_state */
	int ffi_call_ffid; /* ffid of ffi's __call (an FFI call), -1 none */
	uintptr_t ffi_seen[16]; /* FFI targets already named (by address) */
	/* -- Saved VM state, restored at detach -------------------------------- */
	lua_Alloc orig_alloc;	  /* the VM's allocator */
	void *orig_ud;		  /* and its opaque pointer */
	lua_CFunction orig_wrapf; /* C function wrapper before ours */
	BCIns orig_bc_ext;	  /* g->bc_cfunc_ext before ours */
	BCIns orig_bc_int;	  /* g->bc_cfunc_int before ours */
	struct jitev_vm jit;	  /* JIT policy, trace modes (jitev.h) */
	/* -- Cold ---------------------------------------------------------------- */
	uint64_t *buf;		 /* the buffer being filled (q's) */
	size_t buf_words;	 /* its size in words */
	uint64_t flush_ticks;	 /* flush interval in counter ticks, 0 none */
	uint64_t id;		 /* VM ID in the log */
	pid_t tid;		 /* thread that attached */
	struct mapper map;	 /* pointer -> ID, names (shared with s) */
	struct flushq_vm q;	 /* buffers, the writer thread's side */
	struct wbuf out;	 /* blocks of a flush */
	unsigned trace_scan;	 /* stack words searched in traces (alloc.c) */
	unsigned trace_slot;	 /* where the last return address was found */
	unsigned vm_flags;	 /* its VM record's flags (FORMAT_VM_*) */
	uint64_t sample_ns;	 /* sample: interval, 0 when not sampling */
	unsigned sample_flags;	 /* sample: SAMPLE_HOST, _WALL, _CHECKS */
	unsigned zone_depth;	 /* zones open (ljlog.zone) */
	lua_State *fork_L;	 /* the coroutine running at fork (FORKED) */
	struct logger_vm *next;	 /* registry of attached VMs */
	struct sample_vm s;	 /* sampling (stat/sample.h) */
	struct snap_vm snap;	 /* heap snapshots' IDs (heap/snap.h) */
	struct snaptrig_vm trig; /* snapshot triggers (snaptrig.h) */
#if defined(__aarch64__)
	/* -- Allocation sites in traces, arm64 (alloc.c, trace_by_ret) --------- */
	struct alloc_depth trace_depths[ALLOC_DEPTHS];
#endif
};

/* VM thread only. The VM's ljlog state, or NULL when not attached: our
** allocator wrapper's opaque pointer is the state. */
static inline struct logger_vm *logger_vm_of(global_State *g)
{
	return alloc_is_wrapper(g->allocf) ? (struct logger_vm *)g->allocd
					   : NULL;
}

/* VM thread only. Attach to L's VM with options (LUAJIT_PROFILE syntax);
** 0 or -errno with a message in err. */
int logger_attach(lua_State *L, const char *options, char *err, size_t errlen);

/* VM thread only. Flush, write the VM's DETACH, restore the VM; when it was
** the last VM, write the END block. 0 or -errno with a message in err. */
int logger_detach(lua_State *L, char *err, size_t errlen);

/* Any thread. The log stays open when the last VM detaches, for the VMs a
** process makes later (preload attach: a server's VMs come and go); the
** END is written at exit. */
void logger_keep_open(void);

/* Any thread. LUAJIT_PROFILE, or NULL when unset or empty, or when the
** process runs in secure-execution mode (AT_SECURE: set-user-ID,
** set-group-ID, file capabilities): its invoker must not choose what the
** process writes or runs with its privileges. Then says so on stderr,
** once per process. The explicit API (ljlog.start, ljlog_attach) stays. */
const char *logger_env_options(void);

/* Any context. Keep this shared object loaded for the life of the process:
** hooks and the allocator point into it. */
void logger_pin(void);

/* VM thread only. Take a heap snapshot of vm's VM from L and write it
** (HEAP blocks); 0 or -errno with a message in err. */
int logger_snapshot(struct logger_vm *vm, lua_State *L, char *err,
		    size_t errlen);

/* VM thread only: the count hook a snapshot trigger arms (snaptrig.c). */
void logger_snap_hook(lua_State *L, lua_Debug *ar);

/* VM thread only, the VM stopped between two instructions (a hook). Look
** for the names of the functions written without one and write what is
** found (NAME records). */
void logger_look_names(struct logger_vm *vm, lua_State *L);

/* VM thread only. Write the NAME records found since the last mapping
** pass (one that found nothing else to write). */
void logger_write_names(struct logger_vm *vm);

/* VM thread only. Map vm's buffered events and write their MAPPING, then
** hand them to the writer thread (flushq.h), which encodes and writes the
** EVENTS; go on with another buffer. Must run before the GC frees anything
** the buffer points to. */
void logger_flush(struct logger_vm *vm);

/* VM thread only (allocator wrapper). The GC is about to sweep: map every
** pointer the event buffer and the signal buffer hold, while the objects
** live. */
void logger_before_sweep(struct logger_vm *vm);

/* -- Hot path: record helpers (VM thread only) ------------------------------ */

/* VM thread only. Buffer full or flush interval passed (cold path). */
void logger_flush_full(struct logger_vm *vm);

/* VM thread only. Room for one record made at counter ts by coroutine L
** (a SWITCH is written first when L changed). Returns where to write. */
static inline uint64_t *logger_reserve(struct logger_vm *vm, lua_State *L,
				       uint64_t ts)
{
	if (UTIL_UNLIKELY(vm->bp >= vm->bend || ts >= vm->flush_at))
		logger_flush_full(vm);
	vm->ts_last = ts;
	if (UTIL_UNLIKELY(L != vm->last_L && L)) {
		vm->bp = buf_put_switch(vm->bp, ts, L);
		vm->last_L = L;
	}
	return vm->bp;
}

/* VM thread only. The records written from logger_reserve's pointer end
** at end: make it vm->bp (debug builds: abort when past the buffer). */
static inline void logger_commit(struct logger_vm *vm, uint64_t *end)
{
	vm->bp = buf_end(end, vm->buf + vm->buf_words);
}

/* Allocator calls that may share one clock read (doc/format.txt). */
#define LOGGER_ALLOC_CLOCK_EVERY 16

/* VM thread only. The time for an allocation event: the latest clock read,
** refreshed every LOGGER_ALLOC_CLOCK_EVERY calls (the clock is the dearest
** part of an event on some machines). */
static inline uint64_t logger_alloc_clock(struct logger_vm *vm)
{
	if (UTIL_UNLIKELY(vm->ts_left == 0)) {
		vm->ts_left = LOGGER_ALLOC_CLOCK_EVERY;
		vm->ts_last = clock_now();
	}
	vm->ts_left--;
	return vm->ts_last;
}

#endif
