/*
** ljlog util: small helpers (see util.h).
*/
#define _GNU_SOURCE
#include "util/util.h"

#include <sys/syscall.h>
#include <unistd.h>

/* Any context, async-signal-safe. The calling thread's kernel thread ID. */
pid_t util_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}
