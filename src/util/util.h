/*
** ljlog util: the bottom layer's small helpers, shared by writer, logger,
** sampler and reader. Depends on nothing of ljlog.
*/
#ifndef LJLOG_UTIL_UTIL_H
#define LJLOG_UTIL_UTIL_H

#include <stdint.h>
#include <sys/types.h>

#define UTIL_LIKELY(x)	 __builtin_expect(!!(x), 1)
#define UTIL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define UTIL_NOINLINE	 __attribute__((noinline))

/* Checks too dear for release builds, where ljlog never aborts the program
** it profiles: on with -DLJLOG_DEBUG, and in AddressSanitizer builds. */
#if defined(LJLOG_DEBUG) || defined(__SANITIZE_ADDRESS__)
#include <assert.h>
#define UTIL_DEBUG_ASSERT(x) assert(x)
#else
#define UTIL_DEBUG_ASSERT(x) ((void)sizeof(x)) /* x not evaluated */
#endif

/* Any context, async-signal-safe. The calling thread's kernel thread ID. */
pid_t util_tid(void);

/* ljlog's own machine code, [lo, hi): the executable segment of the shared
** object ljlog is loaded as; 0, 0 when ljlog is linked into the program
** (its code is then not told apart), or before util_own_init. */
extern uintptr_t util_own_lo, util_own_hi;

/* Any thread, not in a signal handler. Find ljlog's own code, once; called
** before anything reads the range (attach, the sampler's install). */
void util_own_init(void);

/* ljlog's own threads (the writer, the sampler's helper, the snapshot
** timer): detached, blocking every signal of the program's. Before its
** first line a new thread runs the C library's and a sanitizer's start-up,
** which may hold their locks (AddressSanitizer's allocator, which unlike
** the C library's does not take its locks around fork); a fork() then
** would leave them held in the child, and the child's first thread would
** wait on them for ever. So fork's prepare handler waits until every
** started thread has reached its first line, and no thread starts until
** fork returns. (A thread's tear-down, after its last line, is not waited
** for: the helper and the writer end only when nothing is profiled.) */

/* Any thread, not in a signal handler. Start main as a thread of ljlog's
** own; main calls util_thread_begin() first. 0 or -errno. */
int util_thread_start(void *(*main)(void *));

/* One of ljlog's own threads, its first line. */
void util_thread_begin(void);

/* The forking thread (fork's prepare handler, after every lock under which
** threads are started): wait until no thread is starting, and hold off new
** starts until util_thread_fork_done. */
void util_thread_fork_prepare(void);

/* The forking thread, parent or child side of fork(): starts may go on. */
void util_thread_fork_done(void);

/* Any context, async-signal-safe. 1 when ip lies in ljlog's own code. */
static inline int util_in_own(uintptr_t ip)
{
	return ip >= util_own_lo && ip < util_own_hi;
}

#endif
