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

struct logger_vm;
struct opts;

/* What the armed hook does (logger_vm.snap_work). */
#define SNAPTRIG_SNAPSHOT 1u /* take a heap snapshot */
#define SNAPTRIG_NAMES	  2u /* look for functions' names */

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
