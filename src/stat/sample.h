/*
** ljlog sampling: a CPU-time timer per profiled VM thread, a signal handler
** that records into a lock-free signal buffer, and a helper thread that
** drains it into SAMPLES blocks (doc/format.txt).
*/
#ifndef LJLOG_STAT_SAMPLE_H
#define LJLOG_STAT_SAMPLE_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "blocks/writer.h"
#include "maps/maps.h"
#include "stat/unwind.h"

struct logger_vm;
struct sample_entry;

/* Per-VM sampling state, inside struct logger_vm. */
struct sample_vm {
	int on;		    /* sampling this VM */
	int slot;	    /* index in the handler's VM table */
	int host;	    /* capture host (C) stacks */
	timer_t timer;	    /* CLOCK_THREAD_CPUTIME_ID of the VM thread */
	pid_t tid;	    /* the sampled thread */
	uintptr_t stack_lo; /* its stack, [lo, hi) */
	uintptr_t stack_hi;
	/* -- Signal buffer: the handler produces, one drainer consumes -- */
	uint8_t *ring; /* cap entries of entry_size bytes */
	size_t entry_size;
	uint32_t cap;		/* power of two */
	uint32_t head;		/* producer (atomic) */
	uint32_t tail;		/* consumer (atomic) */
	uint32_t mapped;	/* entries up to here are mapped (maplock) */
	uint64_t signals;	/* timer signals taken (atomic) */
	uint64_t dropped;	/* of them, dropped: buffer full (atomic) */
	uintptr_t stack_moving; /* a Lua stack being reallocated (atomic) */
	/* -- Drainer state (hostlock) ---------------------------------------- */
	pthread_mutex_t hostlock; /* one drainer at a time, in time order */
	pthread_mutex_t maplock;  /* vm->map: drainer vs the VM thread */
	uint64_t signals_done;	  /* signals already in SAMPLES blocks */
	uint64_t dropped_done;	  /* drops already in SAMPLES blocks */
	uint64_t t_prev;	  /* last sample's ts: time never goes back */
	struct maps hostmap;	  /* host symbol start -> HOSTSYM ID */
	struct unwind_syms *syms; /* symbol cache */
	uintptr_t vm_lo, vm_hi;	  /* LuaJIT's interpreter code */
	uint64_t vm_sym;	  /* its HOSTSYM ID, 0 until mapped */
	struct wbuf out;	  /* blocks of a drain */
	struct wbuf enc;	  /* encoded samples of a drain */
	struct logger_vm *next;	  /* list of sampling VMs (smtx) */
};

/* VM thread only. Start sampling vm every interval_ns of its thread's CPU
** time (wall: of wall-clock time); 0 or -errno with a message in err (the
** VM is then not sampled). CPU-time timers fire at most once per kernel
** tick (CONFIG_HZ); wall-clock timers are high resolution. */
int sample_start(struct logger_vm *vm, uint64_t interval_ns, int host, int wall,
		 char *err, size_t errlen);

/* VM thread only. Stop the timer, drain what is left, free the buffer. */
void sample_stop(struct logger_vm *vm);

/* VM thread only (GC about to sweep). Map the pending samples' Lua keys
** now: they name objects the sweep may free. The helper writes them. */
void sample_drain_now(struct logger_vm *vm);

/* VM thread only (exit). Map and write every pending sample now. */
void sample_flush_now(struct logger_vm *vm);

/* VM thread only. Lock / unlock vm->map against the drainer (no-ops when
** vm is not sampled). */
void sample_map_lock(struct logger_vm *vm);
void sample_map_unlock(struct logger_vm *vm);

#endif
