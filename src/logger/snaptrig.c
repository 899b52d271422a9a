/*
** ljlog snapshot triggers.
** A trigger (the SIGUSR1/2 handler on whatever thread the signal lands on,
** the timer thread, a mapping pass that wants names) only sets a request
** bit in the VM's work word: an atomic OR, nothing of LuaJIT's. The VM's
** own thread sees the word in the allocator wrapper (snaptrig_poll) and
** there, outside any hook, the GC, a trace exit and the recorder, saves
** the program's hook and arms a count hook, which does the work at the
** next instruction and puts the program's hook back. So LuaJIT's hook
** fields, dispatch table and recorder state are written by the VM's
** thread only, as they are when the program calls debug.sethook. (LuaJIT's
** own profiler sets its hook bit from a signal handler instead, which can
** lose an update to hookmask the VM is making at that moment.)
** The handler and the timer find the VMs in a fixed table of slots (no
** lock: the handler may interrupt anything); a detach empties its slot,
** then waits until no handler or timer pass is inside the table.
*/
#include "logger/snaptrig.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "logger/logger.h"
#include "util/util.h"

#define SLOTS 64

static struct logger_vm *slots[SLOTS]; /* VMs with a trigger (atomic) */
static int inside;		       /* handlers and timer passes inside */
static pthread_mutex_t setup = PTHREAD_MUTEX_INITIALIZER; /* below */
static struct sigaction old_act[2];			  /* USR1, USR2 */
static int sig_users[2];				  /* VMs using each */
static int timer_started;

/* A look for names costs the VM's whole memory: the next one waits this
** many times as long as the last one took, and at least NAMES_GAP_NS. */
#define NAMES_COST_FACTOR 50
#define NAMES_GAP_NS	  250000000u

/* Any context (a signal handler too). See snaptrig.h. */
void snaptrig_request(struct logger_vm *vm, unsigned work)
{
	__atomic_fetch_or(&vm->trig.work, work, __ATOMIC_RELEASE);
}

/* Any thread, the mapper lock held. See snaptrig.h. */
void snaptrig_names(void *ud)
{
	struct logger_vm *vm = ud;
	if (clock_mono_ns() >= vm->trig.names_next)
		snaptrig_request(vm, SNAPTRIG_NAMES);
}

/* VM thread only. 1 when g may have its hook changed here: not inside a
** hook, a vmevent handler or a __gc finalizer (LuaJIT's own profiler's
** guard), not in the GC or a trace exit (their own VM states), and not
** while the JIT records, optimizes or assembles a trace (lua_sethook
** would abort it from inside the recorder). */
static int hook_settable(global_State *g)
{
	int32_t st = g->vmstate;
	if (g->hookmask & (HOOK_ACTIVE | HOOK_VMEVENT | HOOK_GC))
		return 0;
	if (st == ~LJ_VMST_GC || st == ~LJ_VMST_EXIT)
		return 0;
#if LJ_HASJIT
	if (G2J(g)->state != LJ_TRACE_IDLE)
		return 0;
#endif
	return 1;
}

/* VM thread only (allocator wrapper). See snaptrig.h. */
void snaptrig_poll(struct logger_vm *vm)
{
	struct snaptrig_vm *t = &vm->trig;
	global_State *g = vm->g;
	if (t->armed) {
		if (g->hookf == logger_snap_hook)
			return; /* fires at the next instruction */
		/* The program's debug.sethook replaced it: that hook stays,
		** and is the one to save. */
		t->armed = 0;
	}
	if (!hook_settable(g))
		return;
	t->oldf = g->hookf;
	t->oldmask = g->hookmask & HOOK_EVENTMASK;
	t->oldcount = (int)g->hookcstart;
	t->oldleft = (int)g->hookcount;
	t->armed = 1;
	lua_sethook(mainthread(g), logger_snap_hook, t->oldmask | LUA_MASKCOUNT,
		    1);
}

/* VM thread only (the hook snaptrig_poll armed). Put the program's hook
** back, pass it its event, do the work asked for. */
void logger_snap_hook(lua_State *L, lua_Debug *ar)
{
	struct logger_vm *vm = logger_vm_of(G(L));
	if (!vm) {
		lua_sethook(L, NULL, 0, 0);
		return;
	}
	struct snaptrig_vm *t = &vm->trig;
	global_State *g = G(L);
	lua_Hook f = t->oldf;
	int count_due = 0;
	lua_sethook(L, f, t->oldmask, t->oldcount);
	t->armed = 0;
	if (t->oldmask & LUA_MASKCOUNT) {
		/* The program's count hook went on counting down meanwhile:
		** ours took one instruction (a count event) or none. */
		int left = t->oldleft - (ar->event == LUA_HOOKCOUNT);
		if (left <= 0)
			count_due = 1;
		else
			g->hookcount = (int32_t)left;
	}
	if (f && (ar->event != LUA_HOOKCOUNT || count_due))
		f(L, ar);
	/* After the hook is back: a request from here on arms it anew. */
	unsigned work = __atomic_exchange_n(&t->work, 0, __ATOMIC_ACQUIRE);
	if (work & SNAPTRIG_NAMES) {
		uint64_t t0 = clock_mono_ns();
		logger_look_names(vm, L);
		uint64_t t1 = clock_mono_ns(),
			 gap = (t1 - t0) * NAMES_COST_FACTOR;
		mapper_lock(&vm->map);
		t->names_next = t1 + (gap > NAMES_GAP_NS ? gap : NAMES_GAP_NS);
		mapper_unlock(&vm->map);
	}
	char err[256];
	if ((work & SNAPTRIG_SNAPSHOT) &&
	    logger_snapshot(vm, L, err, sizeof err) < 0)
		fprintf(stderr, "ljlog: snapshot: %s\n", err);
}

/* Async-signal-safe. SIGUSR1/SIGUSR2: a snapshot of every VM that asked
** for one. */
static void on_signal(int sig)
{
	int saved = errno;
	__atomic_add_fetch(&inside, 1, __ATOMIC_ACQ_REL);
	for (int i = 0; i < SLOTS; i++) {
		struct logger_vm *vm =
		    __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE);
		if (vm && vm->trig.signal == sig)
			snaptrig_request(vm, SNAPTRIG_SNAPSHOT);
	}
	__atomic_sub_fetch(&inside, 1, __ATOMIC_ACQ_REL);
	errno = saved;
}

/* Timer thread. Ask each VM whose interval passed for a snapshot; sleep until the next
** one is due (100 ms at most, to see new VMs). */
static void *timer_main(void *arg)
{
	(void)arg;
	util_thread_begin();
	for (;;) {
		uint64_t now = clock_mono_ns(), next = now + 100000000u;
		__atomic_add_fetch(&inside, 1, __ATOMIC_ACQ_REL);
		for (int i = 0; i < SLOTS; i++) {
			struct logger_vm *vm =
			    __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE);
			if (!vm || !vm->trig.ns)
				continue;
			if (now >= vm->trig.due) {
				snaptrig_request(vm, SNAPTRIG_SNAPSHOT);
				vm->trig.due += vm->trig.ns;
				if (vm->trig.due <= now)
					vm->trig.due = now + vm->trig.ns;
			}
			if (vm->trig.due < next)
				next = vm->trig.due;
		}
		__atomic_sub_fetch(&inside, 1, __ATOMIC_ACQ_REL);
		uint64_t d = next > now ? next - now : 0;
		struct timespec ts = {(time_t)(d / 1000000000u),
				      (long)(d % 1000000000u)};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	return NULL;
}

/* Caller holds setup. One more VM triggered by sig (SIGUSR1, SIGUSR2):
** the first puts on_signal in place. */
static void signal_take(int sig)
{
	int k = sig == SIGUSR2;
	if (sig_users[k]++ == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(sig, &sa, &old_act[k]);
	}
}

/* Caller holds setup. One VM fewer triggered by sig: the last puts the
** program's action back. */
static void signal_give(int sig)
{
	int k = sig == SIGUSR2;
	if (--sig_users[k] == 0)
		sigaction(sig, &old_act[k], NULL);
}

/* Caller holds setup. Start the timer thread, once per process; 0 or
** -EAGAIN. */
static int timer_start(void)
{
	if (timer_started)
		return 0;
	/* The timer thread takes no signal of the program's. */
	if (util_thread_start(timer_main) == 0)
		timer_started = 1;
	return timer_started ? 0 : -EAGAIN;
}

/* VM thread only. See snaptrig.h. */
int snaptrig_start(struct logger_vm *vm, const struct opts *o, char *err,
		   size_t errlen)
{
	struct snaptrig_vm *t = &vm->trig;
	t->at_detach = o->snap_exit;
	if (!o->snap_ns && !o->snap_signal)
		return 0;
	t->ns = o->snap_ns;
	t->due = clock_mono_ns() + o->snap_ns;
	t->signal = o->snap_signal;
	t->slot = -1;
	int r = 0;
	pthread_mutex_lock(&setup);
	for (int i = 0; i < SLOTS && t->slot < 0; i++)
		if (!slots[i])
			t->slot = i;
	if (t->slot < 0) {
		snprintf(err, errlen,
			 "snapshot: more than %d VMs with snapshot triggers",
			 SLOTS);
		r = -ENOSPC;
		goto out;
	}
	if (o->snap_signal)
		signal_take(o->snap_signal);
	if (o->snap_ns && (r = timer_start()) < 0) {
		snprintf(err, errlen,
			 "snapshot: cannot start the timer thread");
		t->ns = 0;
	}
	/* Registered only with a trigger left: snaptrig_stop empties the
	** slot of a VM with one, and the handlers must never see a freed VM. */
	if (t->ns || t->signal)
		__atomic_store_n(&slots[t->slot], vm, __ATOMIC_RELEASE);
	else
		t->slot = -1;
out:
	pthread_mutex_unlock(&setup);
	return r;
}

/* The thread calling fork(). See snaptrig.h. */
void snaptrig_fork_prepare(void)
{
	pthread_mutex_lock(&setup);
}

/* Parent side of fork(). See snaptrig.h. */
void snaptrig_fork_parent(void)
{
	pthread_mutex_unlock(&setup);
}

/* Child side of fork(), single-threaded. See snaptrig.h. A timer pass or
** handler on another thread at the fork left inside above 0: with it,
** the child's snaptrig_stop would wait for ever. */
int snaptrig_fork_child(pid_t tid)
{
	int timed = 0, r = 0;
	__atomic_store_n(&inside, 0, __ATOMIC_RELEASE);
	for (int i = 0; i < SLOTS; i++) {
		struct logger_vm *vm = slots[i];
		if (!vm)
			continue;
		if (vm->tid != tid) {
			slots[i] = NULL;
			if (vm->trig.signal)
				signal_give(vm->trig.signal);
			continue;
		}
		timed |= vm->trig.ns != 0;
	}
	timer_started = 0;
	if (timed)
		r = timer_start();
	pthread_mutex_unlock(&setup);
	return r;
}

/* VM thread only. See snaptrig.h. */
unsigned snaptrig_stop(struct logger_vm *vm)
{
	struct snaptrig_vm *t = &vm->trig;
	if (t->slot >= 0 && (t->ns || t->signal)) {
		pthread_mutex_lock(&setup);
		__atomic_store_n(&slots[t->slot], NULL, __ATOMIC_RELEASE);
		while (__atomic_load_n(&inside, __ATOMIC_ACQUIRE))
			sched_yield();
		if (t->signal)
			signal_give(t->signal);
		pthread_mutex_unlock(&setup);
		t->slot = -1;
	}
	/* Armed but not fired: the program's hook back. */
	if (t->armed && vm->g->hookf == logger_snap_hook)
		lua_sethook(mainthread(vm->g), t->oldf, t->oldmask,
			    t->oldcount);
	t->armed = 0;
	return __atomic_exchange_n(&t->work, 0, __ATOMIC_ACQUIRE);
}
