/*
** Unit tests: src/stat/unwind (host stacks captured in a signal handler,
** unwound with libunwind afterwards, symbolized). Linked with -rdynamic so
** the exported unwind_test_* functions below have dynamic symbols.
*/
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#include "stat/unwind.h"

#define MAXIPS 64

enum { MODE_RAISE, MODE_SPIN };

static struct unwind_ctx cap;
static volatile sig_atomic_t want, got, mode, handler_errno;
static volatile unsigned long spins;
static uintptr_t stk_lo, stk_hi;
static size_t cap_max = UNWIND_STACK_MAX;

/* Signal handler (async-signal-safe). Capture once when asked to. */
static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	if (!want || got)
		return;
	errno = 77;
	unwind_capture(&cap, uc, stk_lo, stk_hi, cap_max);
	handler_errno = errno;
	got = 1;
}

/* Test thread. Install the SIGPROF handler; note this thread's stack. */
static void setup(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGPROF, &sa, NULL), 0);
	cr_assert_eq(unwind_stack_bounds(&stk_lo, &stk_hi), 0);
	cr_assert_lt(stk_lo, stk_hi);
	cr_assert(stk_lo <= (uintptr_t)&sa && (uintptr_t)&sa < stk_hi);
	want = got = 0;
	cap_max = UNWIND_STACK_MAX;
}

/* Test thread. Innermost test frame: get captured by raise() or, spinning,
** by the CPU-time timer. */
__attribute__((noinline)) int unwind_test_f3(void)
{
	want = 1;
	if (mode == MODE_RAISE)
		raise(SIGPROF);
	else
		while (!got)
			spins++;
	want = 0;
	__asm__ volatile("" ::: "memory");
	return (int)got;
}

/* Test thread. Middle test frame (no tail call: it adds to the result). */
__attribute__((noinline)) int unwind_test_f2(void)
{
	return unwind_test_f3() + 1;
}

/* Test thread. Outer test frame. */
__attribute__((noinline)) int unwind_test_f1(void)
{
	return unwind_test_f2() + 1;
}

/* Test thread. The test's caller frame, with a name. */
__attribute__((noinline)) int unwind_test_driver(void)
{
	return unwind_test_f1() + 1;
}

/* Test thread. Capture with the timer running, spinning in f3. */
static void capture_spin(void)
{
	struct itimerval it = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
	got = 0;
	mode = MODE_SPIN;
	cr_assert_eq(setitimer(ITIMER_PROF, &it, NULL), 0);
	unwind_test_driver();
	setitimer(ITIMER_PROF, &off, NULL);
	cr_assert(got);
}

/* Test thread. Capture from raise() in f3. */
static void capture_raise(void)
{
	got = 0;
	mode = MODE_RAISE;
	unwind_test_driver();
	cr_assert(got);
}

/* Test thread. Symbol name of ips[i] ("" or "?" when none). */
static const char *name_at(struct unwind_syms *s, const uintptr_t *ips, int i)
{
	struct unwind_sym sym;
	uintptr_t ip = i ? ips[i] - 1 : ips[i];
	if (unwind_symbolize(s, ip, &sym) < 0)
		return "?";
	return sym.name;
}

/* Test thread. Index of the first ips[] named name at or after from, or -1. */
static int find_name(struct unwind_syms *s, const uintptr_t *ips, int n,
		     int from, const char *name)
{
	int i;
	for (i = from; i < n; i++)
		if (!strcmp(name_at(s, ips, i), name))
			return i;
	return -1;
}

/* Test thread. f3, f2, f1, driver consecutive from index k, callers after. */
static void check_chain(const uintptr_t *ips, int n, int k)
{
	static const char *const want_names[] = {
	    "unwind_test_f3", "unwind_test_f2", "unwind_test_f1",
	    "unwind_test_driver"};
	struct unwind_syms *s;
	int i;
	cr_assert_eq(unwind_syms_new(&s), 0);
	if (k < 0)
		k = find_name(s, ips, n, 0, "unwind_test_f3");
	cr_assert_geq(k, 0, "no unwind_test_f3 among %d frames", n);
	for (i = 0; i < 4; i++) {
		cr_assert_lt(k + i, n, "stack ends at %s", want_names[i]);
		cr_assert_str_eq(name_at(s, ips, k + i), want_names[i],
				 "frame %d", k + i);
	}
	/* The test function, Criterion's runner, main, libc's start. */
	cr_assert_geq(n, k + 6, "only %d frames", n);
	unwind_syms_free(s);
}

Test(unwind, spin_in_f3_interrupted_by_timer)
{
	uintptr_t ips[MAXIPS];
	int round, n;
	setup();
	for (round = 0; round < 20; round++) {
		capture_spin();
		cr_assert_eq(cap.len, (uint32_t)(stk_hi - cap.sp < cap_max
						     ? stk_hi - cap.sp
						     : cap_max));
		n = unwind_ips(&cap, ips, MAXIPS);
		cr_assert_eq(ips[0], cap.regs[UNWIND_REG_IP]);
		check_chain(ips, n, 0); /* exact IP: f3 innermost */
	}
}

Test(unwind, raise_in_f3)
{
	uintptr_t ips[MAXIPS];
	int n;
	setup();
	capture_raise();
	cr_assert_eq(handler_errno, 77, "unwind_capture changed errno");
	n = unwind_ips(&cap, ips, MAXIPS);
	check_chain(ips, n, -1);
	/* At most max, and a prefix of the full walk. */
	for (int max = 1; max <= n; max++) {
		uintptr_t few[MAXIPS];
		cr_assert_eq(unwind_ips(&cap, few, max), max);
		cr_assert_eq(memcmp(few, ips, max * sizeof *ips), 0);
	}
	cr_assert_eq(unwind_ips(&cap, ips, 0), 0);
}

Test(unwind, short_copies)
{
	uintptr_t ips[MAXIPS], full[MAXIPS];
	int n, nfull;
	setup();
	capture_raise();
	nfull = unwind_ips(&cap, full, MAXIPS);
	cap_max = 64;
	capture_raise();
	cr_assert_eq(cap.len, 64);
	n = unwind_ips(&cap, ips, MAXIPS);
	cr_assert(n >= 1 && n < nfull, "%d frames of %d", n, nfull);
	cap_max = 0;
	capture_raise();
	cr_assert_eq(cap.len, 0);
	cr_assert_eq(unwind_ips(&cap, ips, MAXIPS), 1);
	/* A stack pointer outside the given stack: registers only. */
	cap_max = UNWIND_STACK_MAX;
	stk_hi = stk_lo + 1;
	capture_raise();
	cr_assert_eq(cap.len, 0);
	cr_assert_eq(unwind_ips(&cap, ips, MAXIPS), 1);
}

/* Sampled thread. Note its own stack, get captured in f3. */
static void *sampled_thread(void *arg)
{
	(void)arg;
	cr_assert_eq(unwind_stack_bounds(&stk_lo, &stk_hi), 0);
	capture_raise();
	return NULL;
}

Test(unwind, captured_in_one_thread_unwound_in_another)
{
	uintptr_t ips[MAXIPS];
	pthread_t t;
	int n, k;
	struct unwind_syms *s;
	setup();
	cr_assert_eq(pthread_create(&t, NULL, sampled_thread, NULL), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert(cap.sp >= stk_lo && cap.sp < stk_hi);
	n = unwind_ips(&cap, ips, MAXIPS);
	cr_assert_eq(unwind_syms_new(&s), 0);
	k = find_name(s, ips, n, 0, "unwind_test_driver");
	cr_assert_geq(k, 3, "%d frames", n);
	cr_assert_str_eq(name_at(s, ips, k - 3), "unwind_test_f3");
	/* Above the driver: the thread's start routine, then libc's. */
	cr_assert_geq(n, k + 2, "%d frames", n);
	unwind_syms_free(s);
}

/* Test thread. xorshift64* */
static uint64_t rnd(void)
{
	static uint64_t x = 0x9e3779b97f4a7c15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	return x * 0x2545f4914f6cdd1dull;
}

/* Test thread. A random word: often an address in some loaded code or in the
** copy, to drive the unwinder further than pure noise would. */
static uint64_t garbage_word(const struct unwind_ctx *c)
{
	static const void *code[5];
	uint64_t r = rnd();
	code[0] = (const void *)unwind_test_f1;
	code[1] = (const void *)raise;
	code[2] = (const void *)memcpy;
	code[3] = (const void *)unwind_ips;
	code[4] = (const void *)dladdr;
	switch (r & 7) {
	case 0:
	case 1:
	case 2:
		return (uint64_t)(uintptr_t)code[(r >> 3) % 5] +
		       ((r >> 16) & 0xffff) - 0x8000;
	case 3:
	case 4: return c->sp + ((r >> 8) % (UNWIND_STACK_MAX + 64));
	case 5: return (r >> 8) & 0xff;
	default: return rnd();
	}
}

Test(unwind, garbage_never_crashes)
{
	static struct unwind_ctx g;
	uintptr_t ips[MAXIPS];
	int iter, i, n, deep = 0;
	for (iter = 0; iter < 10000; iter++) {
		uint64_t *w = (uint64_t *)g.stack;
		uint32_t words;
		g.sp = (iter & 1) ? (uintptr_t)rnd()
				  : (uintptr_t)&iter - (rnd() & 0xfff8);
		g.len = (iter % 17 == 0) ? (uint32_t)rnd()
					 : (uint32_t)(rnd() % UNWIND_STACK_MAX);
		words =
		    (g.len < UNWIND_STACK_MAX ? g.len : UNWIND_STACK_MAX) / 8;
		if (words > 512)
			words = 512; /* the rest keeps older garbage */
		for (i = 0; i < (int)words; i++)
			w[i] = garbage_word(&g);
		for (i = 0; i < UNWIND_NREGS; i++)
			g.regs[i] = garbage_word(&g);
		if (iter & 2)
			g.regs[UNWIND_REG_SP] = g.sp;
		n = unwind_ips(&g, ips, (int)(rnd() % (MAXIPS + 1)));
		cr_assert(n >= 0 && n <= MAXIPS);
		for (i = 0; i + 1 < n; i++) {
			Dl_info info;
			cr_assert(dladdr((void *)ips[i], &info),
				  "walk went on past %#lx, in no object",
				  (unsigned long)ips[i]);
		}
		deep += n > 2;
	}
	cr_log_info("garbage: %d of 10000 walks went past 2 frames", deep);
}

Test(unwind, corrupted_real_stacks)
{
	static struct unwind_ctx real;
	uintptr_t ips[MAXIPS];
	int iter, i, n, nreal;
	setup();
	capture_raise();
	real = cap;
	nreal = unwind_ips(&real, ips, MAXIPS);
	for (iter = 0; iter < 5000; iter++) {
		uint32_t words = real.len / 8;
		cap = real;
		/* A few words of the used stack, or a register, go bad. */
		for (i = 0; i < 1 + iter % 4; i++) {
			uint64_t r = rnd();
			if (r & 1)
				cap.regs[(r >> 1) % UNWIND_NREGS] =
				    garbage_word(&cap);
			else
				((uint64_t *)
				     cap.stack)[(r >> 1) % (words / 4 + 1)] =
				    garbage_word(&cap);
		}
		n = unwind_ips(&cap, ips, MAXIPS);
		cr_assert(n >= 0 && n <= MAXIPS);
		for (i = 0; i + 1 < n; i++) {
			Dl_info info;
			cr_assert(dladdr((void *)ips[i], &info),
				  "walk went on past %#lx, in no object",
				  (unsigned long)ips[i]);
		}
	}
	cr_assert_eq(unwind_ips(&real, ips, MAXIPS), nreal);
}

/* Test thread. Leaf called from generated code: capture from raise(). */
__attribute__((noinline)) int unwind_test_leaf(void)
{
	want = 1;
	raise(SIGPROF);
	want = 0;
	__asm__ volatile("" ::: "memory");
	return (int)got + 1;
}

Test(unwind, anonymous_code_stops_the_walk)
{
#if defined(__aarch64__)
	/* stp x29, x30, [sp, #-16]!; mov x29, sp; ldr x16, leaf; blr x16;
	** ldp x29, x30, [sp], #16; ret; leaf: .quad (at 24) */
	static const uint32_t tmpl[] = {0xa9bf7bfd, 0x910003fd, 0x58000090,
					0xd63f0200, 0xa8c17bfd, 0xd65f03c0};
	const size_t leaf_at = 24;
#else
	/* sub $8,%rsp; movabs $leaf,%rax; call *%rax; add $8,%rsp; ret */
	static const uint8_t tmpl[] = {
	    0x48, 0x83, 0xec, 0x08, 0x48, 0xb8, 0,    0,    0,	  0,   0,
	    0,	  0,	0,    0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0xc3};
	const size_t leaf_at = 6;
#endif
	/* Either way the call returns to code + 16. */
	uintptr_t ips[MAXIPS], leaf = (uintptr_t)unwind_test_leaf;
	struct unwind_syms *s;
	uint8_t *code;
	int n, k;
	setup();
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		cr_skip_test("no executable anonymous mapping: %s",
			     strerror(errno));
	memcpy(code, tmpl, sizeof tmpl);
	memcpy(code + leaf_at, &leaf, sizeof leaf);
	__builtin___clear_cache((char *)code, (char *)code + 64);

	/* Innermost frame in anonymous code: that IP alone. */
	capture_raise();
	cap.regs[UNWIND_REG_IP] = (uintptr_t)code + 16;
	n = unwind_ips(&cap, ips, MAXIPS);
	cr_assert_eq(n, 1);
	cr_assert_eq(ips[0], (uintptr_t)code + 16);

	/* C called from anonymous code: the walk ends at its return address. */
	got = 0;
	cr_assert_eq(((int (*)(void))code)(), 2);
	n = unwind_ips(&cap, ips, MAXIPS);
	cr_assert_eq(unwind_syms_new(&s), 0);
	k = find_name(s, ips, n, 0, "unwind_test_leaf");
	cr_assert_geq(k, 0);
	cr_assert_eq(n, k + 2, "%d frames, leaf at %d", n, k);
	cr_assert_eq(ips[k + 1], (uintptr_t)code + 16);
	unwind_syms_free(s);
	munmap(code, 4096);
}

/* Test thread. A function with no dynamic symbol (static). */
__attribute__((noinline)) static int hidden_fn(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

Test(unwind, symbolize)
{
	struct unwind_syms *s;
	struct unwind_sym a, b;
	uintptr_t f1 = (uintptr_t)unwind_test_f1;
	uintptr_t hid = (uintptr_t)hidden_fn;
	void *anon;
	cr_assert_eq(hidden_fn(1), 4);
	cr_assert_eq(unwind_syms_new(&s), 0);

	cr_assert_eq(unwind_symbolize(s, f1 + 1, &a), 0);
	cr_assert_str_eq(a.name, "unwind_test_f1");
	cr_assert_eq(a.start, f1);
	cr_assert(strstr(a.object, "test_unwind"), "object %s", a.object);
	cr_assert_eq(a.object[0], '/', "object %s", a.object);
	cr_assert_leq(a.base, f1);
	/* Cached: the same strings. */
	cr_assert_eq(unwind_symbolize(s, f1 + 1, &b), 0);
	cr_assert_eq(a.name, b.name);
	cr_assert_eq(a.object, b.object);

	/* A shared library's exported function. */
	cr_assert_eq(unwind_symbolize(s, (uintptr_t)unwind_syms_new, &b), 0);
	cr_assert_str_eq(b.name, "unwind_syms_new");
	cr_assert_eq(unwind_symbolize(s, (uintptr_t)getpid, &b), 0);
	cr_assert(strstr(b.object, "libc"), "object %s", b.object);

	/* No dynamic symbol: no name rather than a neighbour's. */
	cr_assert_eq(unwind_symbolize(s, hid, &b), 0);
	cr_assert_str_eq(b.name, "");
	cr_assert_eq(b.start, 0);
	cr_assert_eq(b.object, a.object);

	/* In no object. */
	anon = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(anon, MAP_FAILED);
	cr_assert_eq(unwind_symbolize(s, (uintptr_t)anon + 8, &b), -ENOENT);
	cr_assert_eq(unwind_symbolize(s, (uintptr_t)anon + 8, &b), -ENOENT);
	cr_assert_eq(unwind_symbolize(s, 0, &b), -ENOENT);
	munmap(anon, 4096);

	/* Many addresses: the cache grows and keeps answering. */
	for (uintptr_t ip = f1; ip < f1 + 5000; ip++)
		cr_assert_eq(unwind_symbolize(s, ip, &b), 0);
	cr_assert_eq(unwind_symbolize(s, f1 + 1, &b), 0);
	cr_assert_str_eq(b.name, "unwind_test_f1");
	unwind_syms_free(s);
}

/* Test thread. What dladdr says of ip, as unwind_symbolize reports it:
** the symbol only when ip lies inside it. 0, or -ENOENT (in no object). */
static int by_dladdr(uintptr_t ip, struct unwind_sym *o, const char **path)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (!dladdr1((void *)ip, &info, (void **)&sym, RTLD_DL_SYMENT))
		return -ENOENT;
	o->base = (uintptr_t)info.dli_fbase;
	o->name = "";
	o->start = 0;
	*path = info.dli_fname;
	if (sym && info.dli_sname && info.dli_saddr) {
		uintptr_t a = (uintptr_t)info.dli_saddr;
		if (a <= ip &&
		    (sym->st_size ? ip - a < sym->st_size : ip == a)) {
			o->name = info.dli_sname;
			o->start = a;
		}
	}
	return 0;
}

Test(unwind, symbolize_as_dladdr)
{
	/* Around functions of the C library, across the gaps between its
	** segments and past its ends. */
	uintptr_t at[] = {(uintptr_t)getpid, (uintptr_t)qsort,
			  (uintptr_t)dlopen, (uintptr_t)pthread_create,
			  (uintptr_t)strerror};
	struct unwind_syms *s;
	int named = 0, found = 0;
	cr_assert_eq(unwind_syms_new(&s), 0);
	for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
		for (uintptr_t ip = at[k] - 65536; ip < at[k] + 65536;
		     ip += 29) {
			struct unwind_sym want, got;
			const char *path;
			int rc = by_dladdr(ip, &want, &path);
			cr_assert_eq(unwind_symbolize(s, ip, &got), rc, "%#lx",
				     (unsigned long)ip);
			if (rc < 0)
				continue;
			found++;
			named += want.name[0] != '\0';
			cr_assert_str_eq(got.name, want.name, "%#lx",
					 (unsigned long)ip);
			cr_assert_eq(got.start, want.start);
			cr_assert_eq(got.base, want.base);
			cr_assert_str_eq(got.object, path);
		}
	}
	cr_assert_gt(found, 10000, "%d addresses found", found);
	cr_assert_gt(named, 1000, "%d addresses named", named);
	unwind_syms_free(s);
}

/* The probe library's function, while it is open; 0 while it is not. */
static uintptr_t probe_fn;

static int probe_done, probe_seen; /* cycles done; lookups finished */

/* Test thread. Open and close the probe library n times. */
static void *probe_cycle(void *arg)
{
	int n = *(int *)arg;
	for (int i = 0; i < n; i++) {
		void *h = dlopen(UNWIND_PROBE, RTLD_NOW | RTLD_LOCAL);
		cr_assert_not_null(h, "%s", dlerror());
		__atomic_store_n(&probe_fn,
				 (uintptr_t)dlsym(h, "unwind_probe_fn"),
				 __ATOMIC_RELEASE);
		/* Every other time, close only once a lookup finished; else
		** at once, racing the lookups. */
		while (i % 2 == 0 &&
		       __atomic_load_n(&probe_seen, __ATOMIC_ACQUIRE) <= i / 2)
			sched_yield();
		__atomic_store_n(&probe_fn, 0, __ATOMIC_RELEASE);
		cr_assert_eq(dlclose(h), 0);
	}
	__atomic_store_n(&probe_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

Test(unwind, symbolize_an_object_that_closes)
{
	struct unwind_syms *s;
	struct unwind_sym b;
	pthread_t t;
	uintptr_t f;
	int n = 3000, named = 0, gone = 0;
	void *h = dlopen(UNWIND_PROBE, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "%s", dlerror());
	f = (uintptr_t)dlsym(h, "unwind_probe_fn");
	cr_assert_eq(unwind_syms_new(&s), 0);
	cr_assert_eq(unwind_symbolize(s, f + 1, &b), 0);
	cr_assert_str_eq(b.name, "unwind_probe_fn");
	cr_assert_str_eq(b.object, UNWIND_PROBE);
	cr_assert_eq(dlclose(h), 0);
	/* Closed: the loader's counters moved, the cache is dropped and the
	** address is in no object. */
	cr_assert_eq(unwind_symbolize(s, f + 1, &b), -ENOENT);

	/* Closed by another thread while symbolized: the name is read
	** whole before the object goes (AddressSanitizer catches a read of
	** the loader's freed name), or the address is in no object. */
	cr_assert_eq(pthread_create(&t, NULL, probe_cycle, &n), 0);
	while (!__atomic_load_n(&probe_done, __ATOMIC_ACQUIRE)) {
		uintptr_t ip = __atomic_load_n(&probe_fn, __ATOMIC_ACQUIRE);
		int rc;
		if (!ip)
			continue;
		rc = unwind_symbolize(s, ip + 1, &b);
		if (rc == -ENOENT) {
			gone++;
			continue;
		}
		cr_assert_eq(rc, 0);
		__atomic_add_fetch(&probe_seen, 1, __ATOMIC_RELEASE);
		/* Another object may be at the address by now. */
		if (!strcmp(b.object, UNWIND_PROBE)) {
			cr_assert_str_eq(b.name, "unwind_probe_fn");
			named++;
		}
	}
	pthread_join(t, NULL);
	cr_assert_gt(named, 0, "%d lookups named it, %d found nothing", named,
		     gone);
	unwind_syms_free(s);
}
