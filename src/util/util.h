/*
** ljlog util: the bottom layer's small helpers, shared by writer, logger,
** sampler and reader. Depends on nothing of ljlog.
*/
#ifndef LJLOG_UTIL_UTIL_H
#define LJLOG_UTIL_UTIL_H

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

#endif
