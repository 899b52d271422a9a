/*
** ljlog snapshot triggers: snapshot=exit, snapshot=INTERVAL and
** snapshot=SIGNAL. A signal or the interval timer only asks (a bit in an
** atomic word); the VM's thread arms a count hook when it next allocates,
** and the hook takes the snapshot at the next instruction boundary and
** puts the program's hook back.
*/
#ifndef LJLOG_LOGGER_SNAPTRIG_H
#define LJLOG_LOGGER_SNAPTRIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "maps/ljwin.h"

struct logger_vm;
struct opts;

/* What the armed hook does (snaptrig_vm.work). */
#define SNAPTRIG_SNAPSHOT 1u /* take a heap snapshot */
#define SNAPTRIG_NAMES	  2u /* look for functions' names */

/* A VM's snapshot triggers (inside the logger's per-VM state, as trig).
** Requests go idle (work 0) -> asked (work != 0: any thread or a signal
** handler ORs a bit in) -> armed (the VM thread, in snaptrig_poll, saved
** the program's hook and put ours in place) -> the hook's run (the
** program's hook back, armed 0, then work taken: a request after that
** arms anew). Only work is shared: the signal handler reads signal; the
** timer thread reads ns and owns due once the VM is in the table; the
** rest is the VM thread's. */
struct snaptrig_vm {
	int at_detach;	     /* snapshot=exit: one at detach (and at exit) */
	uint64_t ns;	     /* snapshot=INTERVAL, 0 none */
	uint64_t due;	     /* next one (CLOCK_MONOTONIC ns; timer thread) */
	int signal;	     /* snapshot=SIGNAL, 0 none */
	int slot;	     /* its slot in snaptrig.c's table, -1 none */
	unsigned work;	     /* asked for: SNAPTRIG_* (atomic, any thread) */
	int armed;	     /* our hook is in place (VM thread) */
	uint64_t names_next; /* no look for names before (monotonic ns;
			     ** mapper lock) */
	lua_Hook oldf;	     /* the program's hook it replaced (VM thread) */
	int oldmask, oldcount;
	int oldleft; /* the program's count hook's countdown then */
};

/* Any context (a signal handler too): lock-free, async-signal-safe. Ask
** vm's VM thread for work (SNAPTRIG_*): its next allocator call arms the
** hook that does it. */
void snaptrig_request(struct logger_vm *vm, unsigned work);

/* Any thread, vm's mapper lock held (its want callback: mapper.h). Some
** functions were written without their names: ask the VM thread to look
** for them, at most every so often (a look reads the whole VM). */
void snaptrig_names(void *vm);

/* VM thread only (attach, after the VM is live). Start vm's triggers;
** 0 or -errno with a message in err (the VM stays attached). */
int snaptrig_start(struct logger_vm *vm, const struct opts *o, char *err,
		   size_t errlen);

/* VM thread only (the allocator wrapper, when vm->trig.work is not 0).
** Arm the hook that does the work asked for, where LuaJIT's hook may be
** changed (else a later call does); put it back in place when the
** program's debug.sethook replaced it before it fired. */
void snaptrig_poll(struct logger_vm *vm);

/* The thread calling fork(), in the logger's prepare handler: no VM's
** triggers start or stop until snaptrig_fork_parent or _child. */
void snaptrig_fork_prepare(void);

/* Parent side of fork(). */
void snaptrig_fork_parent(void);

/* Child side of fork(), single-threaded; tid: the thread that forked, as
** the VMs it attached still name it. The triggers of the other threads' VMs
** are dropped (their signals given back), the timer thread, gone with
** the fork, is started again for the VMs that have an interval, and no
** handler or timer pass counts as inside. 0, or -EAGAIN when the timer
** thread cannot start (those VMs take no more interval snapshots). */
int snaptrig_fork_child(pid_t tid);

/* VM thread only (detach, before anything is restored). Stop vm's
** triggers: no signal or timer reaches vm after this returns; an armed
** hook is taken back. Returns the work asked for and not done
** (SNAPTRIG_*). */
unsigned snaptrig_stop(struct logger_vm *vm);

#endif
