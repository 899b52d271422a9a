/*
** ljlog e2e: an LD_PRELOAD shim that counts SIGPROF deliveries on its own.
** It wraps sigaction(): a SIGPROF handler being installed (ljlog's) is
** kept, and a trampoline that counts each delivery and calls it is
** installed instead; queries see the wrapped handler, not the trampoline.
** At exit the count is written to the file named by $LJLOG_SIGCOUNT_FILE.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Not instrumented: a sanitizer runtime preloaded before the shim calls
** its sigaction() while it is still starting up. */
#define NOSAN __attribute__((no_sanitize("address", "thread", "undefined")))

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*action_fn)(int, siginfo_t *, void *);

static sigaction_fn real_sigaction; /* libc's (or the next preload's) */
static action_fn wrapped;	    /* the handler the trampoline calls */
static uint64_t delivered;	    /* SIGPROF taken by the trampoline */
static uint64_t installs;	    /* handlers wrapped */
static uint64_t overruns;	    /* their timers' si_overrun, summed */

/* Async-signal-safe. Count, then run the wrapped handler. */
NOSAN static void trampoline(int sig, siginfo_t *si, void *uc)
{
	action_fn h = __atomic_load_n(&wrapped, __ATOMIC_ACQUIRE);
	__atomic_fetch_add(&delivered, 1, __ATOMIC_RELAXED);
	if (si && si->si_code == SI_TIMER && si->si_overrun > 0)
		__atomic_fetch_add(&overruns, (uint64_t)si->si_overrun,
				   __ATOMIC_RELAXED);
	if (h)
		h(sig, si, uc);
}

/* Any thread. sigaction with SIGPROF handlers wrapped. */
NOSAN int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction mine;
	action_fn prev;
	int r;
	if (!real_sigaction)
		real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	if (sig != SIGPROF)
		return real_sigaction(sig, act, old);
	prev = __atomic_load_n(&wrapped, __ATOMIC_ACQUIRE);
	if (act && (act->sa_flags & SA_SIGINFO) &&
	    act->sa_sigaction != trampoline) {
		mine = *act;
		mine.sa_sigaction = trampoline;
		__atomic_store_n(&wrapped, act->sa_sigaction, __ATOMIC_RELEASE);
		__atomic_fetch_add(&installs, 1, __ATOMIC_RELAXED);
		act = &mine;
	}
	r = real_sigaction(sig, act, old);
	if (r == 0 && old && (old->sa_flags & SA_SIGINFO) &&
	    old->sa_sigaction == trampoline)
		old->sa_sigaction = prev;
	return r;
}

/* Process exit. "delivered N installs M overruns K" into
** $LJLOG_SIGCOUNT_FILE. */
NOSAN __attribute__((destructor)) static void sigcount_write(void)
{
	const char *path = getenv("LJLOG_SIGCOUNT_FILE");
	char line[128];
	int fd, n;
	if (!path || !*path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	n = snprintf(
	    line, sizeof line, "delivered %llu installs %llu overruns %llu\n",
	    (unsigned long long)__atomic_load_n(&delivered, __ATOMIC_RELAXED),
	    (unsigned long long)__atomic_load_n(&installs, __ATOMIC_RELAXED),
	    (unsigned long long)__atomic_load_n(&overruns, __ATOMIC_RELAXED));
	if (write(fd, line, (size_t)n) != n)
		perror("sigcount");
	close(fd);
}
