/*
** ljlog sampling: a CPU-time timer per profiled VM thread, a signal handler
** that records into a lock-free signal buffer, and a helper thread that
** drains it into SAMPLES blocks (doc/format.txt).
**
** Files, by execution context:
**   sample_signal.c  signal context only: the handler, the Lua stack walk,
**                    the ring's producer (async-signal-safe code only)
**   sample_helper.c  the drainer (helper thread, or the VM thread before a
**                    sweep and at stop): mapping, host symbols, SAMPLES
**   sample.c         timers, handler install, start and stop (VM thread)
**   stacks.c         the drainer's table of stacks: each written once, as a
**                    STACK record (format 6)
**
** -- Locking ----------------------------------------------------------------
** Locks, in the order they may be taken (never the other way round):
**   1. smtx          (sample.c) the list of sampled VMs, the helper's pins,
**                    the handler table's writers. Nothing else is taken
**                    while it is held, but libunwind's first use.
**   2. s->hostlock   one drainer of a VM at a time, in time order.
**   3. mapper lock   (maps/mapper.h) the VM's pointer -> ID map and names.
**   4. writer lock   (blocks/writer.h) the output file.
** The signal handler takes none: it reads the handler table and the ring
** indexes with atomics.
**
** -- The ring's lifetime ------------------------------------------------------
** A VM's ring (and its struct sample_vm) may be freed only when no signal
** handler and no drainer can touch it. sample_stop, from any thread:
**   1. deletes the timer (no new signal is generated for the VM),
**   2. clears the VM's slot in the handler table (a handler that starts now
**      finds nothing),
**   3. waits until no handler is inside that slot (inflight counter, seq-cst
**      against the slot: a handler that loaded the VM has announced itself),
**   4. waits until the helper holds no pin on the VM (it drains outside smtx),
**   5. drains what is left under hostlock, then frees.
** So a host may stop sampling a VM from another thread than the sampled one,
** while signals still fly (tests/e2e/sample_detach.sh).
*/
#ifndef LJLOG_STAT_SAMPLE_H
#define LJLOG_STAT_SAMPLE_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "blocks/writer.h"
#include "maps/mapper.h"
#include "stat/stacks.h"
#include "stat/unwind.h"
#include "util/hmap.h"

/* Per-VM sampling state (inside the logger's per-VM state). */
struct sample_vm {
	int on;		      /* sampling this VM */
	int slot;	      /* index in the handler's VM table */
	int host;	      /* capture host (C) stacks */
	int checks;	      /* find the profile check a trace stops at */
	int32_t hook_disp;    /* &g->hookmask - dispatch (the checks' test) */
	global_State *g;      /* the VM (read by the handler) */
	struct mapper *map;   /* the VM's mapper (handed in at start) */
	timer_t timer;	      /* CLOCK_THREAD_CPUTIME_ID of the VM thread */
	pid_t tid;	      /* the sampled thread */
	uint64_t interval_ns; /* its timer's interval */
	uintptr_t stack_lo;   /* its stack, [lo, hi) */
	uintptr_t stack_hi;
	/* -- Signal buffer: the handler produces, one drainer consumes -- */
	uint8_t *ring; /* cap entries of entry_size bytes */
	size_t entry_size;
	uint32_t cap;	    /* power of two */
	uint32_t head;	    /* producer (atomic) */
	uint32_t tail;	    /* consumer (atomic) */
	uint32_t mapped;    /* entries up to here are mapped (mapper lock) */
	struct wbuf mapout; /* MAPPING block of a map pass (mapper lock) */
	uint64_t signals;   /* timer signals taken (atomic) */
	uint64_t dropped;   /* of them, dropped: buffer full (atomic) */
	uintptr_t stack_moving; /* a Lua stack being reallocated (atomic) */
	uint32_t busy;		/* ljlog works on the VM thread (atomic) */
	/* -- Drainer state (hostlock) ---------------------------------------- */
	pthread_mutex_t hostlock; /* one drainer at a time, in time order */
	uint64_t signals_done;	  /* signals already in SAMPLES blocks */
	uint64_t dropped_done;	  /* drops already in SAMPLES blocks */
	uint64_t t_prev;	  /* last sample's ts: time never goes back */
	uint64_t drained;	  /* helper only: its last drain (counter) */
	struct hmap hostmap;	  /* host symbol start -> HOSTSYM ID */
	struct stacks stacks;	  /* frames -> STACK ID */
	struct unwind_syms *syms; /* symbol cache */
	uintptr_t vm_lo, vm_hi;	  /* LuaJIT's interpreter code */
	uint64_t vm_sym;	  /* its HOSTSYM ID, 0 until mapped */
	struct wbuf out;	  /* blocks of a drain */
	struct wbuf enc;	  /* encoded samples of a drain */
	/* -- smtx ---------------------------------------------------------------- */
	int pins;		/* the helper is draining it outside smtx */
	uint64_t seen_signals;	/* signals at the helper's last look */
	uint64_t seen_ns;	/* monotonic ns of that look (0: none) */
	struct sample_vm *next; /* list of sampling VMs */
};

/* sample_start's flags. */
#define SAMPLE_HOST   1u /* record host (C) stacks */
#define SAMPLE_WALL   2u /* wall-clock time, not the thread's CPU time */
#define SAMPLE_CHECKS 4u /* in compiled code, the profile check it stops at */

/* VM thread only. Start sampling the VM g (whose IDs map holds) every
** interval_ns of this thread's CPU time (SAMPLE_WALL: of wall-clock time);
** 0 or -errno with a message in err (the VM is then not sampled).
** CPU-time timers fire at most once per kernel tick (CONFIG_HZ);
** wall-clock timers are high resolution. */
int sample_start(struct sample_vm *s, global_State *g, struct mapper *map,
		 uint64_t interval_ns, unsigned flags, char *err,
		 size_t errlen);

/* Any thread (see "The ring's lifetime"). Stop the timer, wait for the
** handler and the helper to let go, drain what is left, free the buffer. */
void sample_stop(struct sample_vm *s);

/* Any thread, in fork()'s prepare handler. Hold the helper out of its
** work until the fork is done: take smtx, then every sampled VM's
** hostlock, under which alone the helper drains (and allocates). A child
** then never inherits a helper's half-made map or an allocator lock it
** held (AddressSanitizer's allocator, unlike glibc's, is not made safe
** across fork). sample_fork_parent lets go; the child starts anew. */
void sample_fork_prepare(void);

/* Any thread, in fork()'s parent handler: undo sample_fork_prepare. */
void sample_fork_parent(void);

/* Child side of fork(), single-threaded (the logger calls it first): no
** helper thread, no timers, and the parent's threads may have held the
** locks. Every VM stops sampling and its buffers are freed; the logger
** starts sampling again for the VMs of the thread that forked. */
void sample_fork_child(void);

/* VM thread only (GC about to sweep). Map the pending samples' Lua keys
** now: they name objects the sweep may free. The helper writes them. */
void sample_map_pending(struct sample_vm *s);

/* VM thread only (exit). Map and write every pending sample now. */
void sample_flush_now(struct sample_vm *s);

/* VM thread only. ljlog starts (+1) or ends (-1) work of its own on the
** VM's thread (a flush, a heap snapshot): samples meanwhile are its, state
** FORMAT_STATE_LJLOG, not the program's. Nests. */
static inline void sample_busy(struct sample_vm *s, int d)
{
	__atomic_add_fetch(&s->busy, (uint32_t)d, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* VM thread only (allocator). The Lua stack at stack is being reallocated
** (0: no longer): the handler must not walk it meanwhile. */
static inline void sample_stack_moving(struct sample_vm *s, uintptr_t stack)
{
	__atomic_store_n(&s->stack_moving, stack, __ATOMIC_RELAXED);
}

#endif
