/*
** ljlog unwind: host (C) stacks captured in a signal handler and unwound
** later, with libunwind, by a helper thread; symbols for their addresses.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stat/unwind.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__aarch64__)
#define UNWIND_HOST 1 /* host stacks are captured and unwound here */
#include <libunwind.h>
#endif

#include "util/dlfind.h"
#include "util/hmap.h"
#include "util/intern.h"

/* The walk reads a process's own code and data through these, never through
** a plain load the sanitizers would instrument: a garbage capture may point
** into another variable's red zone, or at a word another thread writes (a
** signal handler's atomic counter, seen by ThreadSanitizer in soak.sh),
** which is harmless here: the value is only a guess to check. */
#if defined(__clang__) || defined(__GNUC__)
#define NO_SANITIZE                                                            \
	__attribute__((no_sanitize("address", "undefined", "thread")))
#else
#define NO_SANITIZE
#endif

/* -- Capture (signal handler) -------------------------------------------- */

#if defined(__x86_64__)
/* Async-signal-safe. Copy n bytes that no sanitizer may check (the stack
** holds other frames' red zones) and no compiler may turn into a call. */
NO_SANITIZE static void copy_raw(void *dst, const void *src, size_t n)
{
	/* The kernel clears DF on signal delivery; the ABI keeps it clear. */
	__asm__ volatile("rep movsb"
			 : "+D"(dst), "+S"(src), "+c"(n)
			 :
			 : "memory");
}
#elif defined(__aarch64__)
/* Async-signal-safe. As above: words, then the bytes left; the empty asm
** keeps the compiler from making the loop a call to memcpy. */
NO_SANITIZE static void copy_raw(void *dst, const void *src, size_t n)
{
	uint64_t *d = dst;
	const uint64_t *s = src;
	for (; n >= 8; n -= 8) {
		*d++ = *s++;
		__asm__ volatile("" ::: "memory");
	}
	uint8_t *db = (uint8_t *)d;
	const uint8_t *sb = (const uint8_t *)s;
	while (n--) {
		*db++ = *sb++;
		__asm__ volatile("" ::: "memory");
	}
}
#endif

/* Any thread, outside signal context. The calling thread's stack bounds. */
int unwind_stack_bounds(uintptr_t *lo, uintptr_t *hi)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	int rc = pthread_getattr_np(pthread_self(), &attr);
	if (rc)
		return -rc;
	rc = pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	if (rc)
		return -rc;
	*lo = (uintptr_t)addr;
	*hi = (uintptr_t)addr + size;
	return 0;
}

/* Async-signal-safe. Registers and the top of the stack from a ucontext. */
void unwind_capture(struct unwind_ctx *c, const void *ucontext, uintptr_t lo,
		    uintptr_t hi, size_t max_bytes)
{
	int saved = errno;
	c->sp = 0;
	c->len = 0;
#if UNWIND_HOST
	const ucontext_t *uc = ucontext;
	size_t n;
	uintptr_t sp;
	int i;
#if defined(__x86_64__)
	static const uint8_t greg[UNWIND_NREGS] = {
	    REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI,
	    REG_RBP, REG_RSP, REG_R8,  REG_R9,	REG_R10, REG_R11,
	    REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP};
	for (i = 0; i < UNWIND_NREGS; i++)
		c->regs[i] = (uint64_t)uc->uc_mcontext.gregs[greg[i]];
#else /* aarch64: x0..x30, then sp and pc */
	for (i = 0; i < 31; i++)
		c->regs[i] = (uint64_t)uc->uc_mcontext.regs[i];
	c->regs[UNWIND_REG_SP] = (uint64_t)uc->uc_mcontext.sp;
	c->regs[UNWIND_REG_IP] = (uint64_t)uc->uc_mcontext.pc;
#endif
	sp = (uintptr_t)c->regs[UNWIND_REG_SP];
	c->sp = sp;
	if (sp < lo || sp >= hi)
		goto out; /* not on this thread's stack: registers only */
	n = hi - sp;
	if (n > max_bytes)
		n = max_bytes;
	if (n > UNWIND_STACK_MAX)
		n = UNWIND_STACK_MAX;
	copy_raw(c->stack, (const void *)sp, n);
	c->len = (uint32_t)n;
out:
#else
	(void)ucontext;
	(void)lo;
	(void)hi;
	(void)max_bytes;
	memset(c->regs, 0, sizeof c->regs);
#endif
	errno = saved;
}

/* -- Loaded objects ------------------------------------------------------ */

/* The loader's counters of objects added and removed. */
struct dlgen {
	unsigned long long adds, subs;
	int ok;
};

/* Drainer (dl_iterate_phdr callback). Read the counters, stop. */
static int gen_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct dlgen *g = data;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
			sizeof(info->dlpi_subs)) {
		g->adds = info->dlpi_adds;
		g->subs = info->dlpi_subs;
		g->ok = 1;
	}
	return 1;
}

/* Drainer (the sampler's hostlock held: helper thread, or a VM thread at
** stop). The loader's counters (ok = 0 if it keeps none). */
static struct dlgen dl_generation(void)
{
	struct dlgen g = {0, 0, 0};
	dl_iterate_phdr(gen_cb, &g);
	return g;
}

#if UNWIND_HOST

/* One PT_LOAD segment of a loaded object. */
struct seg {
	uintptr_t lo, hi; /* [lo, hi) */
	int flags;	  /* PF_R, PF_X */
};

/* The unwinder: one libunwind address space and what its accessors read. */
static struct {
	pthread_mutex_t lock;
	int ready;		 /* 1: as is set up, -1: it failed */
	unw_addr_space_t as;	 /* remote-style space over a capture */
	unw_accessors_t *local;	 /* the local space's accessors */
	struct seg *segs;	 /* sorted by lo */
	size_t nsegs, capsegs;	 /* used, allocated */
	unsigned long long adds; /* dlpi_adds when segs were collected */
	unsigned long long subs; /* dlpi_subs when segs were collected */
	int known;		 /* adds/subs hold a reading */
} U = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* What one walk reads: passed to the accessors as libunwind's as_arg. */
struct walk {
	const struct unwind_ctx *c;
	uint32_t len;	   /* c->len, clamped */
	int lookup_failed; /* find_proc_info failed during this step */
};

/* Drainer (dl_iterate_phdr callback). Append an object's segments. */
static int segs_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	int i;
	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct seg *s;
		if (ph->p_type != PT_LOAD || ph->p_memsz == 0 ||
		    !(ph->p_flags & (PF_R | PF_X)))
			continue;
		if (U.nsegs == U.capsegs) {
			size_t cap = U.capsegs ? 2 * U.capsegs : 64;
			s = realloc(U.segs, cap * sizeof *s);
			if (!s) {
				*(int *)data = -ENOMEM;
				return 1;
			}
			U.segs = s;
			U.capsegs = cap;
		}
		s = &U.segs[U.nsegs++];
		s->lo = info->dlpi_addr + ph->p_vaddr;
		s->hi = s->lo + ph->p_memsz;
		s->flags = (int)ph->p_flags;
	}
	return 0;
}

/* Any thread (qsort). Order segments by address. */
static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Drainer, U.lock held. Recollect the segments if objects came or
** went; flush libunwind's cache then. */
static void segs_refresh(void)
{
	struct dlgen g = dl_generation();
	int err = 0;
	if (g.ok && U.known && g.adds == U.adds && g.subs == U.subs)
		return;
	U.nsegs = 0;
	dl_iterate_phdr(segs_cb, &err);
	qsort(U.segs, U.nsegs, sizeof *U.segs, seg_cmp);
	U.adds = g.adds;
	U.subs = g.subs;
	U.known = g.ok && !err; /* otherwise recollect next time */
	unw_flush_cache(U.as, 0, 0);
}

/* Drainer, U.lock held. Whether [a, a + n) lies in one segment with
** all of flags. */
static int segs_cover(uintptr_t a, size_t n, int flags)
{
	size_t lo = 0, hi = U.nsegs;
	while (lo < hi) { /* the last segment starting at or below a */
		size_t mid = lo + (hi - lo) / 2;
		if (U.segs[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	const struct seg *s = &U.segs[lo - 1];
	return a < s->hi && s->hi - a >= n && (s->flags & flags) == flags;
}

/* -- libunwind accessors over a capture ------------------------------------ */

/* Drainer (the sampler's hostlock held: helper thread, or a VM thread at
** stop). One word of a loaded object's memory, unchecked by the
** sanitizers (a red zone is a valid place for garbage to point). */
NO_SANITIZE static unw_word_t load_word(uintptr_t a)
{
	typedef unw_word_t __attribute__((aligned(1), may_alias)) uword;
	return *(const volatile uword *)a;
}

/* Drainer (libunwind). Read a word: from the stack copy, else from a
** loaded object's readable segment, else fail. Never writes. */
static int acc_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val,
		   int write, void *arg)
{
	const struct walk *w = arg;
	uintptr_t off = (uintptr_t)addr - w->c->sp;
	(void)as;
	if (write)
		return -UNW_EREADONLYREG;
	if (off < w->len && w->len - off >= sizeof *val) {
		memcpy(val, w->c->stack + off, sizeof *val);
		return 0;
	}
	if (segs_cover((uintptr_t)addr, sizeof *val, PF_R)) {
		*val = load_word((uintptr_t)addr);
		return 0;
	}
	return -UNW_EINVAL;
}

/* Drainer (libunwind). A captured register; read-only. */
static int acc_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val,
		   int write, void *arg)
{
	const struct walk *w = arg;
	(void)as;
	if (reg < 0 || reg >= UNWIND_NREGS)
		return -UNW_EBADREG;
	if (write)
		return -UNW_EREADONLYREG;
	*val = w->c->regs[reg];
	return 0;
}

/* Drainer (libunwind). Floating-point registers are not captured. */
static int acc_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val,
		     int write, void *arg)
{
	(void)as;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

/* Drainer (libunwind). A capture is never resumed. */
static int acc_resume(unw_addr_space_t as, unw_cursor_t *cur, void *arg)
{
	(void)as;
	(void)cur;
	(void)arg;
	return -UNW_EINVAL;
}

/* Drainer (libunwind). Names come from unwind_symbolize instead. */
static int acc_proc_name(unw_addr_space_t as, unw_word_t ip, char *buf,
			 size_t len, unw_word_t *off, void *arg)
{
	(void)as;
	(void)ip;
	(void)buf;
	(void)len;
	(void)off;
	(void)arg;
	return -UNW_ENOINFO;
}

/* Drainer (libunwind). No dynamically registered unwind info. */
static int acc_dyn_list(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as;
	(void)addr;
	(void)arg;
	return -UNW_ENOINFO;
}

/* Drainer (libunwind). The local lookup of an address's unwind info
** (.eh_frame_hdr of the object holding it), noting a failure: libunwind would
** then guess a frame from %rbp, and a guessed frame ends the walk. */
static int acc_find(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
		    int need, void *arg)
{
	struct walk *w = arg;
	int rc = -UNW_ENOINFO;
	if (segs_cover((uintptr_t)ip, 1, PF_X))
		rc = U.local->find_proc_info(as, ip, pi, need, arg);
	if (rc < 0)
		w->lookup_failed = 1;
	return rc;
}

/* Drainer (libunwind). Release what acc_find handed out. */
static void acc_put(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	U.local->put_unwind_info(as, pi, arg);
}

/* Drainer, U.lock held. Set the address space up once. */
static int space_init(void)
{
	unw_accessors_t acc;
	if (U.ready)
		return U.ready > 0 ? 0 : -ENOSYS;
	U.ready = -1;
	U.local = unw_get_accessors(unw_local_addr_space);
	if (!U.local || !U.local->find_proc_info || !U.local->put_unwind_info)
		return -ENOSYS;
	memset(&acc, 0, sizeof acc);
	acc.find_proc_info = acc_find;
	acc.put_unwind_info = acc_put;
	acc.get_dyn_info_list_addr = acc_dyn_list;
	acc.access_mem = acc_mem;
	acc.access_reg = acc_reg;
	acc.access_fpreg = acc_fpreg;
	acc.resume = acc_resume;
	acc.get_proc_name = acc_proc_name;
	U.as = unw_create_addr_space(&acc, 0);
	if (!U.as)
		return -ENOMEM;
	/* Cache the parsed unwind rules by IP (without it a walk costs six
	** times more). Debian builds libunwind without per-thread caches, so
	** each step takes the cache lock, which blocks signals around it:
	** two sigprocmask calls a frame, most of a walk's cost. */
	unw_set_caching_policy(U.as, UNW_CACHE_GLOBAL);
	unw_set_cache_size(U.as, 1024, 0);
	U.ready = 1;
	return 0;
}

/* -- Unwinding ------------------------------------------------------------- */

/* Drainer, the loader's list locked (see unwind_ips). Walk a capture. */
static int walk_capture(const struct unwind_ctx *c, uintptr_t *ips, int max)
{
	struct walk w = {c, c->len, 0};
	unw_cursor_t cur;
	unw_word_t ip, sp, prev_sp;
	int n = 0;
	if (max <= 0 || c->regs[UNWIND_REG_IP] == 0)
		return 0;
	if (w.len > UNWIND_STACK_MAX)
		w.len = UNWIND_STACK_MAX;
	ip = c->regs[UNWIND_REG_IP];
	ips[n++] = (uintptr_t)ip;
	pthread_mutex_lock(&U.lock);
	if (space_init() < 0)
		goto out;
	segs_refresh();
	if (!segs_cover((uintptr_t)ip, 1, PF_X))
		goto out; /* JIT code or garbage: no unwind info, no guess */
	/* A remote cursor starts with the exact IP (no "return address - 1"). */
	if (unw_init_remote(&cur, U.as, &w) < 0)
		goto out;
	prev_sp = c->regs[UNWIND_REG_SP];
	while (n < max) {
		w.lookup_failed = 0;
		if (unw_step(&cur) <= 0 || w.lookup_failed)
			break;
		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0 ||
		    unw_get_reg(&cur, UNW_REG_SP, &sp) < 0)
			break;
		if (ip == ips[n - 1] && sp == prev_sp)
			break; /* no progress */
		prev_sp = sp;
		ips[n++] = (uintptr_t)ip;
		if (!segs_cover((uintptr_t)ip, 1, PF_X))
			break; /* returns into JIT code or garbage: stop here */
	}
out:
	pthread_mutex_unlock(&U.lock);
	return n;
}

/* What unwind_ips asks of walk_cb, and its answer. */
struct walk_call {
	const struct unwind_ctx *c;
	uintptr_t *ips;
	int max, n;
};

/* Drainer (dl_iterate_phdr callback, the loader's list locked). Walk the
** capture once, then stop. */
static int walk_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct walk_call *a = data;
	(void)info;
	(void)size;
	a->n = walk_capture(a->c, a->ips, a->max);
	return 1;
}

/* Drainer (the sampler's hostlock held: helper thread, or a VM thread at
** stop). Walk a capture; see the header. The walk reads the unwind tables
** and code of the objects the capture's frames are in, well after the
** signal: within a dl_iterate_phdr callback, which holds the loader's
** list, so that no object is unmapped meanwhile (lua_close unloading a C
** module while the helper still walked a stack in it: the program died of
** SIGSEGV in 2 of 6 runs of sample_dlclose.lua on arm64 under qemu-user).
** The loader's lock is recursive: the walk's own dl_iterate_phdr calls
** (segs_refresh, libunwind's lookups) take it again. */
int unwind_ips(const struct unwind_ctx *c, uintptr_t *ips, int max)
{
	struct walk_call a = {c, ips, max, 0};
	dl_iterate_phdr(walk_cb, &a);
	return a.n;
}

#else

/* Drainer (the sampler's hostlock held: helper thread, or a VM thread at
** stop). No host unwinding on this architecture. */
int unwind_ips(const struct unwind_ctx *c, uintptr_t *ips, int max)
{
	(void)c;
	(void)ips;
	(void)max;
	return 0;
}

#endif

/* -- Symbols ------------------------------------------------------------- */

/* One cached address: its symbol, or that it is in no object. */
struct symslot {
	int found;	       /* 0: -ENOENT */
	struct unwind_sym sym; /* when found (strings from the interner) */
};

struct unwind_syms {
	struct hmap index;   /* ip -> 1 + its slot in tab */
	struct symslot *tab; /* cached addresses */
	size_t used, cap;    /* in tab */
	struct intern strs;  /* names and paths, each held once */
	const char *exe;     /* path of the main program, once known */
	struct dlgen gen;    /* loader counters the cache is valid for */
};

/* Drainer (the sampler's hostlock held: helper thread, or a VM thread at
** stop). The one copy of string str held by s, or NULL (no memory). */
static const char *intern(struct unwind_syms *s, const char *str)
{
	int64_t k = intern_put(&s->strs, str, strlen(str));
	return k < 0 ? NULL : intern_str(&s->strs, (uint32_t)k, NULL);
}

/* Sampler start (VM thread; no drainer yet). A new symbol cache. */
int unwind_syms_new(struct unwind_syms **out)
{
	struct unwind_syms *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	*out = s;
	return 0;
}

/* Sampler stop (any thread; no drainer any more). Free a symbol cache
** and its strings. */
void unwind_syms_free(struct unwind_syms *s)
{
	if (!s)
		return;
	hmap_free(&s->index);
	intern_free(&s->strs);
	free(s->tab);
	free(s);
}

/* Drainer (the sampler's hostlock held: helper thread, or a VM thread at
** stop). Forget every cached address (objects came or went). */
static void forget_all(struct unwind_syms *s)
{
	hmap_free(&s->index);
	s->used = 0;
}

/* Drainer (the sampler's hostlock held: helper thread, or a VM thread at
** stop). A new slot for ip, or NULL (no memory). */
static struct symslot *slot_new(struct unwind_syms *s, uintptr_t ip)
{
	if (s->used == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		struct symslot *t = realloc(s->tab, cap * sizeof *t);
		if (!t)
			return NULL;
		s->tab = t;
		s->cap = cap;
	}
	if (hmap_put(&s->index, ip, s->used + 1) < 0)
		return NULL;
	return &s->tab[s->used++];
}

/* Drainer (the sampler's hostlock held: helper thread, or a VM thread at
** stop). Path of the main program (the loader names it "", dladdr by
** argv[0]). */
static const char *exe_path(struct unwind_syms *s, const char *fallback)
{
	char buf[4096];
	ssize_t n;
	if (s->exe)
		return s->exe;
	n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return intern(s, fallback ? fallback : "");
	buf[n] = '\0';
	s->exe = intern(s, buf);
	return s->exe;
}

/* Where resolve puts what dlfind finds. */
struct resolved {
	struct unwind_syms *s;
	struct unwind_sym *o;
};

/* Drainer (dlfind's callback, the loader's list locked). Copy the hit's
** names into the cache's strings: 1, or -ENOMEM. */
static int resolve_hit(void *arg, const struct dlfind_hit *h)
{
	struct resolved *r = arg;
	r->o->base = h->base;
	r->o->start = h->start;
	r->o->name = intern(r->s, h->sym ? h->sym : "");
	r->o->object =
	    h->object[0] ? intern(r->s, h->object) : exe_path(r->s, "");
	return r->o->name && r->o->object ? 1 : -ENOMEM;
}

/* Drainer (the sampler's hostlock held: helper thread, or a VM thread at
** stop). Look ip up among the loaded objects. 1 found, 0 in no object,
** -ENOMEM. Through dlfind, not dladdr: an object another thread closes
** meanwhile (ffi.load's library collected, lua_close unloading C modules)
** is read whole before it goes, or not found. */
static int resolve(struct unwind_syms *s, uintptr_t ip, struct unwind_sym *o)
{
	struct resolved r = {s, o};
	return dlfind(ip, resolve_hit, &r);
}

/* Drainer (the sampler's hostlock held: helper thread, or a VM thread at
** stop). The function holding ip, cached; see the header. */
int unwind_symbolize(struct unwind_syms *s, uintptr_t ip,
		     struct unwind_sym *out)
{
	struct dlgen g = dl_generation();
	struct symslot *e;
	int rc;
	if (!ip)
		return -ENOENT;
	if (!g.ok || g.adds != s->gen.adds || g.subs != s->gen.subs) {
		/* Objects came or went: an address may now mean another. */
		forget_all(s);
		s->gen = g;
	}
	uint64_t *k = hmap_get(&s->index, ip);
	if (k) {
		e = &s->tab[*k - 1];
	} else {
		struct unwind_sym sym = {0, 0, NULL, NULL};
		rc = resolve(s, ip, &sym);
		if (rc < 0)
			return rc;
		if (!(e = slot_new(s, ip)))
			return -ENOMEM;
		e->found = rc;
		e->sym = sym;
	}
	if (!e->found)
		return -ENOENT;
	*out = e->sym;
	return 0;
}
