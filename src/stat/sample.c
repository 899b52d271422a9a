/*
** ljlog sampling: timers, the handler's installation, start and stop, and
** the helper thread's list of VMs. The handler is in sample_signal.c, the
** drainer in sample_helper.c; sample.h says who runs what, the lock order
** and the ring's lifetime.
*/
#define _GNU_SOURCE
#include "config.h"
#include "stat/sample_int.h"

#include <errno.h>
#include <libunwind.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat/clock.h"
#include "util/util.h"

/* -- Process-wide state --------------------------------------------------------- */

struct sample_vm *sample_slots[SAMPLE_SLOTS]; /* the handler's table */
uint32_t sample_inflight[SAMPLE_SLOTS];	      /* handlers inside a slot */

static pthread_mutex_t smtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t unpinned = PTHREAD_COND_INITIALIZER; /* with smtx */
static struct sample_vm *sampling; /* VMs being sampled (smtx) */
static int helper_started;	   /* (smtx) */
static int helper_idle;		   /* helper rounds with nothing (smtx) */
static int handler_set;		   /* (smtx) */
static int clash_said;		   /* (atomic) */

/* -- The helper's list ------------------------------------------------------------ */

/* Helper thread, caller holds smtx. See sample_int.h. */
uint64_t sample_wake_after(struct sample_vm *s, uint64_t now)
{
	uint64_t sig = __atomic_load_n(&s->signals, __ATOMIC_RELAXED);
	uint64_t lo = s->interval_ns * SAMPLE_WAKE_FEW,
		 hi = s->interval_ns * SAMPLE_WAKE_MANY, w = lo;
	if (s->seen_ns && now > s->seen_ns) {
		uint64_t got = sig - s->seen_signals;
		w = got ? (now - s->seen_ns) / got * SAMPLE_BATCH : hi;
	}
	s->seen_signals = sig;
	s->seen_ns = now;
	return w < lo ? lo : w > hi ? hi : w;
}

/* Helper thread. Pin the sampled VMs; -1: leave. */
int sample_pin_all(struct sample_vm **vms, int max, uint64_t *wake_ns)
{
	int n = 0;
	uint64_t wake = SAMPLE_WAKE_MAX_NS, now = clock_mono_ns();
	pthread_mutex_lock(&smtx);
	if (!sampling && ++helper_idle > 2) {
		helper_started = 0;
		pthread_mutex_unlock(&smtx);
		return -1;
	}
	if (sampling)
		helper_idle = 0;
	for (struct sample_vm *s = sampling; s && n < max; s = s->next) {
		s->pins++;
		vms[n++] = s;
		uint64_t w = sample_wake_after(s, now);
		if (w < wake)
			wake = w;
	}
	pthread_mutex_unlock(&smtx);
	*wake_ns = wake < SAMPLE_WAKE_MIN_NS ? SAMPLE_WAKE_MIN_NS : wake;
	return n;
}

/* Helper thread. Unpin; say once when our handler was replaced. */
void sample_unpin_all(struct sample_vm **vms, int n)
{
	struct sigaction cur;
	pthread_mutex_lock(&smtx);
	for (int i = 0; i < n; i++)
		vms[i]->pins--;
	pthread_cond_broadcast(&unpinned);
	/* Someone replaced our handler (jit.p, the program itself). */
	if (n && sigaction(SIGPROF, NULL, &cur) == 0 &&
	    cur.sa_sigaction != sample_on_signal &&
	    !__atomic_exchange_n(&clash_said, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "ljlog: sample: another SIGPROF handler "
				"replaced ljlog's (jit.p or the program's "
				"own): samples stop\n");
	pthread_mutex_unlock(&smtx);
}

/* -- Start, stop ------------------------------------------------------------------ */

static void release(struct sample_vm *s);

/* Any thread (fork's prepare handler). See sample.h. Lock order as the
** helper's: smtx before a hostlock (the helper holds no hostlock while it
** waits for smtx). */
void sample_fork_prepare(void)
{
	pthread_mutex_lock(&smtx);
	for (struct sample_vm *s = sampling; s; s = s->next)
		pthread_mutex_lock(&s->hostlock);
}

/* Any thread (fork's parent handler). See sample.h. */
void sample_fork_parent(void)
{
	for (struct sample_vm *s = sampling; s; s = s->next)
		pthread_mutex_unlock(&s->hostlock);
	pthread_mutex_unlock(&smtx);
}

/* Child side of fork(), single-threaded: see sample.h. The locks the
** prepare handler took (this thread) are let go; the condition's waiters
** are gone: made anew. */
void sample_fork_child(void)
{
	pthread_cond_init(&unpinned, NULL);
	for (struct sample_vm *s = sampling; s; s = s->next) {
		pthread_mutex_unlock(&s->hostlock);
		__atomic_store_n(&sample_slots[s->slot], NULL,
				 __ATOMIC_RELAXED);
		s->pins = 0;
		s->on = 0;
		release(s);
	}
	sampling = NULL;
	helper_started = 0;
	pthread_mutex_unlock(&smtx);
}

/* Caller holds smtx. Install the handler once; refuse to take SIGPROF from
** a program that handles it itself. */
static int handler_install(char *err, size_t errlen)
{
	struct sigaction sa, old;
	if (handler_set)
		return 0;
	if (sigaction(SIGPROF, NULL, &old) == 0 && old.sa_handler != SIG_DFL &&
	    old.sa_handler != SIG_IGN) {
		snprintf(err, errlen,
			 "sample: the program handles SIGPROF itself (jit.p, "
			 "a profiler, its own timer): ljlog's timer signal "
			 "would clash with it; not sampling");
		return -EBUSY;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = sample_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) < 0) {
		int e = errno;
		snprintf(err, errlen, "sample: sigaction: %s", strerror(e));
		return -e;
	}
	util_own_init();
	handler_set = 1; /* kept for good: a late signal must find it */
	return 0;
}

/* Caller holds smtx (libunwind's first use initialises it). LuaJIT's
** interpreter code: the unwind info's procedure around a bytecode handler
** (one FDE covers the whole VM), else the dispatch table's range. */
static void vm_range(struct sample_vm *s)
{
	ASMFunction *d = G2GG(s->g)->dispatch;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	unw_proc_info_t pi;
	for (unsigned i = 0; i < GG_LEN_DDISP; i++) {
		uintptr_t a = (uintptr_t)
		    d[GG_LEN_DDISP + i < GG_LEN_DISP ? GG_LEN_DDISP + i : i];
		if (a && a < lo)
			lo = a;
		if (a > hi)
			hi = a;
	}
	s->vm_lo = lo;
	s->vm_hi = hi + 4096;
	if (unw_get_proc_info_by_ip(unw_local_addr_space,
				    (unw_word_t)d[GG_LEN_DDISP + BC_ADDVV], &pi,
				    NULL) == 0 &&
	    pi.start_ip < pi.end_ip) {
		s->vm_lo = pi.start_ip;
		s->vm_hi = pi.end_ip;
	}
}

/* Caller holds smtx. Start the helper thread unless it runs. */
static int helper_start(char *err, size_t errlen)
{
	int r;
	if (helper_started)
		return 0;
	if ((r = util_thread_start(sample_helper_main)) < 0) {
		snprintf(err, errlen, "sample: helper thread: %s",
			 strerror(-r));
		return r;
	}
	helper_started = 1;
	helper_idle = 0;
	return 0;
}

/* VM thread only. Free what sample_start allocated. */
static void release(struct sample_vm *s)
{
	free(s->ring);
	s->ring = NULL;
	hmap_free(&s->hostmap);
	stacks_free(&s->stacks);
	if (s->syms)
		unwind_syms_free(s->syms);
	s->syms = NULL;
	wbuf_free(&s->out);
	wbuf_free(&s->enc);
	wbuf_free(&s->mapout);
	s->on = 0;
}

/* Caller holds smtx. A free slot of the handler's table, or -1. */
static int slot_take(void)
{
	for (int i = 0; i < SAMPLE_SLOTS; i++)
		if (!__atomic_load_n(&sample_slots[i], __ATOMIC_RELAXED))
			return i;
	return -1;
}

/* VM thread only. A timer on this thread's CPU time (or wall clock),
** signalling this thread with s's slot. 0 or -errno. */
static int timer_start(struct sample_vm *s, uint64_t interval_ns, int wall)
{
	struct sigevent sev;
	struct itimerspec it;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev._sigev_un._tid = s->tid;
	sev.sigev_signo = SIGPROF;
	sev.sigev_value.sival_int = s->slot;
	it.it_interval.tv_sec = (time_t)(interval_ns / 1000000000u);
	it.it_interval.tv_nsec = (long)(interval_ns % 1000000000u);
	it.it_value = it.it_interval;
	if (timer_create(wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &sev,
			 &s->timer) < 0)
		return -errno;
	if (timer_settime(s->timer, 0, &it, NULL) < 0) {
		int r = -errno;
		timer_delete(s->timer);
		return r;
	}
	return 0;
}

/* VM thread only. Start sampling g. */
int sample_start(struct sample_vm *s, global_State *g, struct mapper *map,
		 uint64_t interval_ns, unsigned flags, char *err, size_t errlen)
{
	int r, host = !!(flags & SAMPLE_HOST);
	memset(s, 0, sizeof *s);
#if !LJLOG_SAMPLER
	snprintf(err, errlen, "sample: %s", LJLOG_NO_SAMPLER_WHY);
	return -ENOTSUP;
#endif
	s->slot = -1;
	s->g = g;
	s->map = map;
	s->host = host;
	s->checks = !!(flags & SAMPLE_CHECKS) &&
		    sample_hook_disp(g, &s->hook_disp) == 0;
	s->tid = util_tid();
	s->interval_ns = interval_ns;
	s->cap = sample_ring_cap(interval_ns, !!(flags & SAMPLE_WALL));
	/* The host copy is cut to SAMPLE_STACK bytes of the unwind_ctx. */
	s->entry_size =
	    sizeof(struct sample_entry) +
	    (host ? sizeof(struct unwind_ctx) - UNWIND_STACK_MAX + SAMPLE_STACK
		  : 0);
	s->entry_size = (s->entry_size + 63) & ~(size_t)63;
	if (unwind_stack_bounds(&s->stack_lo, &s->stack_hi) < 0) {
		snprintf(err, errlen,
			 "sample: cannot find this thread's stack");
		return -EINVAL;
	}
	if (!(s->ring = calloc(s->cap, s->entry_size)) ||
	    unwind_syms_new(&s->syms) < 0) {
		snprintf(err, errlen,
			 "sample: out of memory for the signal buffer");
		release(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->hostlock, NULL);

	pthread_mutex_lock(&smtx);
	vm_range(s);
	if ((r = handler_install(err, errlen)) < 0)
		goto fail_locked;
	if ((s->slot = slot_take()) < 0) {
		snprintf(err, errlen,
			 "sample: more than %d VMs sampled at once",
			 SAMPLE_SLOTS);
		r = -EMFILE;
		goto fail_locked;
	}
	if ((r = helper_start(err, errlen)) < 0)
		goto fail_locked;
	s->on = 1;
	__atomic_store_n(&sample_slots[s->slot], s, __ATOMIC_SEQ_CST);
	s->next = sampling;
	sampling = s;
	pthread_mutex_unlock(&smtx);

	if ((r = timer_start(s, interval_ns, !!(flags & SAMPLE_WALL))) < 0) {
		snprintf(err, errlen, "sample: timer: %s", strerror(-r));
		s->timer = 0;
		sample_stop(s);
		return r;
	}
	s->on = 2; /* the timer runs */
	return 0;
fail_locked:
	pthread_mutex_unlock(&smtx);
	pthread_mutex_destroy(&s->hostlock);
	release(s);
	return r;
}

/* Any thread. Stop sampling: the steps of sample.h, "The ring's
** lifetime". */
void sample_stop(struct sample_vm *s)
{
	if (!s->on)
		return;
	if (s->on == 2)
		timer_delete(s->timer); /* 1 */
	pthread_mutex_lock(&smtx);
	__atomic_store_n(&sample_slots[s->slot], NULL,
			 __ATOMIC_SEQ_CST); /* 2 */
	for (struct sample_vm **pp = &sampling; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	while (s->pins) /* 4 */
		pthread_cond_wait(&unpinned, &smtx);
	pthread_mutex_unlock(&smtx);
	/* 3: a handler that loaded s has raised the slot's count first. */
	while (__atomic_load_n(&sample_inflight[s->slot], __ATOMIC_SEQ_CST))
		sched_yield();
	pthread_mutex_lock(&s->hostlock); /* 5 */
	sample_drain(s);
	pthread_mutex_unlock(&s->hostlock);
	pthread_mutex_destroy(&s->hostlock);
	release(s);
}

/* VM thread only. Map the signal buffer's pending samples now (before a
** sweep): their objects may be freed next. Unwinding and writing them is
** left to the helper thread. */
void sample_map_pending(struct sample_vm *s)
{
	if (!s->on)
		return;
	mapper_lock(s->map);
	sample_map_locked(s);
	mapper_unlock(s->map);
}

/* VM thread only (exit). Map and write everything pending now. */
void sample_flush_now(struct sample_vm *s)
{
	if (!s->on)
		return;
	pthread_mutex_lock(&s->hostlock);
	sample_drain(s);
	pthread_mutex_unlock(&s->hostlock);
}
