/*
** ljlog snapshot triggers.
** The signal handler and the timer thread find the VMs in a fixed table
** of slots (no lock: the handler may interrupt anything) and call
** lua_sethook, which in LuaJIT only stores a few fields and updates the
** dispatch table (what LuaJIT's own profiler does from its timer thread).
** A detach empties its slot, then waits until no handler or timer pass is
** inside the table.
*/
#include "logger/snaptrig.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "logger/logger.h"

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

/* Any context (a signal handler too). Arm vm's hook to do work (SNAPTRIG_*):
** the next instruction the VM runs calls it. */
static void arm(struct logger_vm *vm, unsigned work)
{
	__atomic_fetch_or(&vm->trig.work, work, __ATOMIC_ACQ_REL);
	if (__atomic_exchange_n(&vm->trig.armed, 1, __ATOMIC_ACQ_REL))
		return; /* armed already: its saved hook is the program's */
	global_State *g = vm->g;
	int mask = g->hookmask & HOOK_EVENTMASK;
	__atomic_store_n(&vm->trig.oldf, g->hookf, __ATOMIC_RELAXED);
	__atomic_store_n(&vm->trig.oldmask, mask, __ATOMIC_RELAXED);
	__atomic_store_n(&vm->trig.oldcount, (int)g->hookcstart,
			 __ATOMIC_RELAXED);
	/* Published before the hook can run (it runs after lua_sethook). */
	__atomic_store_n(&vm->trig.ready, 1, __ATOMIC_RELEASE);
	lua_sethook(mainthread(g), logger_snap_hook, mask | LUA_MASKCOUNT, 1);
}

/* Any thread, the mapper lock held. See snaptrig.h. */
void snaptrig_names(void *ud)
{
	struct logger_vm *vm = ud;
	if (clock_mono_ns() >= vm->trig.names_next)
		arm(vm, SNAPTRIG_NAMES);
}

/* VM thread only (the hook armed above). Put the previous hook back, pass
** it its event, do the work. */
void logger_snap_hook(lua_State *L, lua_Debug *ar)
{
	struct logger_vm *vm = logger_vm_of(G(L));
	if (!vm) {
		lua_sethook(L, NULL, 0, 0);
		return;
	}
	(void)__atomic_load_n(&vm->trig.ready, __ATOMIC_ACQUIRE);
	lua_Hook f = __atomic_load_n(&vm->trig.oldf, __ATOMIC_RELAXED);
	lua_sethook(L, f, __atomic_load_n(&vm->trig.oldmask, __ATOMIC_RELAXED),
		    __atomic_load_n(&vm->trig.oldcount, __ATOMIC_RELAXED));
	unsigned work =
	    __atomic_exchange_n(&vm->trig.work, 0, __ATOMIC_ACQ_REL);
	__atomic_store_n(&vm->trig.ready, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&vm->trig.armed, 0, __ATOMIC_RELEASE);
	if (ar->event != LUA_HOOKCOUNT && f)
		f(L, ar);
	if (work & SNAPTRIG_NAMES) {
		uint64_t t0 = clock_mono_ns();
		logger_look_names(vm, L);
		uint64_t t1 = clock_mono_ns(),
			 gap = (t1 - t0) * NAMES_COST_FACTOR;
		mapper_lock(&vm->map);
		vm->trig.names_next =
		    t1 + (gap > NAMES_GAP_NS ? gap : NAMES_GAP_NS);
		mapper_unlock(&vm->map);
	}
	char err[256];
	if ((work & SNAPTRIG_SNAPSHOT) &&
	    logger_snapshot(vm, L, err, sizeof err) < 0)
		fprintf(stderr, "ljlog: snapshot: %s\n", err);
}

/* Async-signal-safe. SIGUSR1/SIGUSR2: arm every VM that asked for it. */
static void on_signal(int sig)
{
	int saved = errno;
	__atomic_add_fetch(&inside, 1, __ATOMIC_ACQ_REL);
	for (int i = 0; i < SLOTS; i++) {
		struct logger_vm *vm =
		    __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE);
		if (vm && vm->trig.signal == sig)
			arm(vm, SNAPTRIG_SNAPSHOT);
	}
	__atomic_sub_fetch(&inside, 1, __ATOMIC_ACQ_REL);
	errno = saved;
}

/* Timer thread. Arm each VM whose interval passed; sleep until the next
** one is due (100 ms at most, to see new VMs). */
static void *timer_main(void *arg)
{
	(void)arg;
	for (;;) {
		uint64_t now = clock_mono_ns(), next = now + 100000000u;
		__atomic_add_fetch(&inside, 1, __ATOMIC_ACQ_REL);
		for (int i = 0; i < SLOTS; i++) {
			struct logger_vm *vm =
			    __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE);
			if (!vm || !vm->trig.ns)
				continue;
			if (now >= vm->trig.due) {
				arm(vm, SNAPTRIG_SNAPSHOT);
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
	pthread_t t;
	pthread_attr_t a;
	sigset_t all, old;
	if (timer_started)
		return 0;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	/* The timer thread takes no signal of the program's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, &a, timer_main, NULL) == 0)
		timer_started = 1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
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

/* VM thread only. See snaptrig.h. */
void snaptrig_stop(struct logger_vm *vm)
{
	if (vm->trig.slot >= 0 && (vm->trig.ns || vm->trig.signal)) {
		pthread_mutex_lock(&setup);
		__atomic_store_n(&slots[vm->trig.slot], NULL, __ATOMIC_RELEASE);
		while (__atomic_load_n(&inside, __ATOMIC_ACQUIRE))
			sched_yield();
		if (vm->trig.signal)
			signal_give(vm->trig.signal);
		pthread_mutex_unlock(&setup);
		vm->trig.slot = -1;
	}
	/* Armed but not fired: the program's hook back. */
	__atomic_store_n(&vm->trig.work, 0, __ATOMIC_RELEASE);
	if (__atomic_exchange_n(&vm->trig.armed, 0, __ATOMIC_ACQ_REL) &&
	    vm->g->hookf == logger_snap_hook)
		lua_sethook(mainthread(vm->g), vm->trig.oldf, vm->trig.oldmask,
			    vm->trig.oldcount);
}
