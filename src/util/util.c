/*
** ljlog util: small helpers (see util.h).
*/
#define _GNU_SOURCE
#include "util/util.h"

#include <link.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

uintptr_t util_own_lo, util_own_hi; /* util.h */

/* Any context, async-signal-safe. The calling thread's kernel thread ID. */
pid_t util_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Any thread (dl_iterate_phdr callback). When this function lies in the
** object info describes, and that object is not the program (named "",
** first), its executable segment around it is ljlog's own code; 1 stops. */
static int own_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)own_cb;
	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || me < lo ||
		    me - lo >= ph->p_memsz)
			continue;
		if (info->dlpi_name && info->dlpi_name[0]) {
			util_own_lo = lo;
			util_own_hi = lo + ph->p_memsz;
		}
		return 1;
	}
	return 0;
}

/* Any thread (pthread_once). */
static void own_find(void)
{
	dl_iterate_phdr(own_cb, NULL);
}

/* Any thread, not in a signal handler. See util.h. */
void util_own_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, own_find);
}
