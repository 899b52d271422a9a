/*
** ljlog snapshot triggers: snapshot=exit, snapshot=INTERVAL and
** snapshot=SIGNAL. A signal or the interval timer only arms a count hook;
** the hook takes the snapshot on the VM's thread, at its next instruction
** boundary, and puts the previous hook back.
*/
#ifndef LJLOG_LOGGER_SNAPTRIG_H
#define LJLOG_LOGGER_SNAPTRIG_H

#include <stddef.h>
#include <stdint.h>

#include "maps/ljwin.h"

struct logger_vm;
struct opts;

/* What the armed hook does (snaptrig_vm.work). */
#define SNAPTRIG_SNAPSHOT 1u /* take a heap snapshot */
#define SNAPTRIG_NAMES	  2u /* look for functions' names */

/* A VM's snapshot triggers (inside the logger's per-VM state, as trig).
** The armed hook goes idle (armed 0) -> arming (armed 1: arm() saves the
** hook it replaces, from any thread) -> ready (ready 1, published) -> its
** run on the VM thread (ready 0, then armed 0: idle). Other threads: the
** signal handler reads signal; the timer thread reads ns and owns due once
** the VM is in the table; either arms the hook, as does a mapping pass
** (snaptrig_names, any thread, the mapper lock held). */
struct snaptrig_vm {
	int at_detach;	     /* snapshot=exit: one at detach (and at exit) */
	uint64_t ns;	     /* snapshot=INTERVAL, 0 none */
	uint64_t due;	     /* next one (CLOCK_MONOTONIC ns; timer thread) */
	int signal;	     /* snapshot=SIGNAL, 0 none */
	int slot;	     /* its slot in snaptrig.c's table, -1 none */
	int armed;	     /* the hook is armed (atomic) */
	unsigned work;	     /* what it does: SNAPTRIG_* (atomic) */
	uint64_t names_next; /* no look for names before (monotonic ns;
			     ** mapper lock) */
	lua_Hook oldf;	     /* the hook it replaced */
	int oldmask, oldcount;
	/* The three above are written (arming thread), then published:
	** the hook reads them after an acquire load of this (atomic). */
	int ready;
};

/* Any thread, vm's mapper lock held (its want callback: mapper.h). Some
** functions were written without their names: arm the hook to look for
** them, at most every so often (a look reads the whole VM). */
void snaptrig_names(void *vm);

/* VM thread only (attach, after the VM is live). Start vm's triggers;
** 0 or -errno with a message in err (the VM stays attached). */
int snaptrig_start(struct logger_vm *vm, const struct opts *o, char *err,
		   size_t errlen);

/* VM thread only (detach, before anything is restored). Stop vm's
** triggers: no signal or timer reaches vm after this returns; an armed
** hook is taken back. */
void snaptrig_stop(struct logger_vm *vm);

#endif
