/*
** ljlog util: small helpers (see util.h).
*/
#define _GNU_SOURCE
#include "util/util.h"

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

uintptr_t util_own_lo, util_own_hi; /* util.h */

static pthread_mutex_t tmtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t begun = PTHREAD_COND_INITIALIZER; /* with tmtx */
static unsigned starting; /* threads made that have not begun (tmtx) */

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

/* -- ljlog's own threads ------------------------------------------------------------ */

/* Any thread, not in a signal handler. See util.h. The thread inherits a
** mask of every signal. */
int util_thread_start(void *(*main)(void *))
{
	pthread_t t;
	pthread_attr_t a;
	sigset_t all, old;
	int r;
	if ((r = pthread_attr_init(&a)) != 0)
		return -r;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_mutex_lock(&tmtx);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if ((r = pthread_create(&t, &a, main, NULL)) == 0)
		starting++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_unlock(&tmtx);
	pthread_attr_destroy(&a);
	return -r;
}

/* One of ljlog's own threads, its first line. See util.h. */
void util_thread_begin(void)
{
	pthread_mutex_lock(&tmtx);
	starting--;
	pthread_cond_broadcast(&begun);
	pthread_mutex_unlock(&tmtx);
}

/* The forking thread (fork's prepare handler). See util.h. */
void util_thread_fork_prepare(void)
{
	pthread_mutex_lock(&tmtx);
	while (starting)
		pthread_cond_wait(&begun, &tmtx);
}

/* The forking thread, either side of fork(). See util.h. The child is
** single-threaded: no waiter is left on the condition. */
void util_thread_fork_done(void)
{
	pthread_mutex_unlock(&tmtx);
}
