/*
** Unit tests: src/util/ (the hash map, the string interner, ljlog's own
** threads, the loaded objects' symbols).
*/
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/dlfind.h"
#include "util/hmap.h"
#include "util/intern.h"
#include "util/util.h"

Test(hmap, get_ref_put_del)
{
	struct hmap m = HMAP_INIT;
	int added = -1;
	cr_assert_null(hmap_get(&m, 0x1000));
	cr_assert_eq(hmap_del(&m, 0x1000), 0);
	uint64_t *v = hmap_ref(&m, 0x1000, &added);
	cr_assert_not_null(v);
	cr_assert_eq(added, 1);
	cr_assert_eq(*v, 0);
	*v = 7;
	cr_assert_eq(*hmap_ref(&m, 0x1000, &added), 7);
	cr_assert_eq(added, 0);
	cr_assert_eq(hmap_put(&m, 0x1000, 9), 0);
	cr_assert_eq(*hmap_get(&m, 0x1000), 9);
	cr_assert_eq(m.count, 1);
	cr_assert_eq(hmap_del(&m, 0x1000), 1);
	cr_assert_eq(hmap_del(&m, 0x1000), 0);
	cr_assert_null(hmap_get(&m, 0x1000));
	hmap_free(&m);
	cr_assert_null(hmap_get(&m, 0x1000));
}

/* The pointer -> ID rule the mapper relies on: a freed address is removed,
** so a new object there is mapped afresh. */
Test(hmap, removed_key_is_absent_then_new)
{
	struct hmap m = HMAP_INIT;
	uint64_t addr = 0x7f0000001000;
	cr_assert_eq(hmap_put(&m, addr, 1), 0);
	cr_assert_eq(hmap_del(&m, addr), 1);
	cr_assert_null(hmap_get(&m, addr));
	cr_assert_eq(hmap_put(&m, addr, 2), 0);
	cr_assert_eq(*hmap_get(&m, addr), 2);
	hmap_free(&m);
}

/* Random inserts and removes (colliding runs, growth, backward-shift
** deletion) against a plain array as the reference. */
Test(hmap, matches_reference_under_churn)
{
	enum { N = 4096, STEPS = 200000 };
	static uint64_t ref[N]; /* value of key (i+1)*16, 0 = absent */
	struct hmap m = HMAP_INIT;
	size_t live = 0;
	srand(12345);
	for (int s = 0; s < STEPS; s++) {
		size_t i = (size_t)rand() % N;
		uint64_t key = (uint64_t)(i + 1) * 16;
		uint64_t *v = hmap_get(&m, key);
		if (ref[i]) {
			cr_assert(v && *v == ref[i], "step %d key %zu", s, i);
			cr_assert_eq(hmap_del(&m, key), 1);
			ref[i] = 0;
			live--;
		} else {
			cr_assert_null(v, "step %d key %zu", s, i);
			ref[i] = (uint64_t)s + 1;
			cr_assert_eq(hmap_put(&m, key, ref[i]), 0);
			live++;
		}
		cr_assert_eq(m.count, live);
	}
	for (size_t i = 0; i < N; i++) {
		uint64_t *v = hmap_get(&m, (uint64_t)(i + 1) * 16);
		cr_assert_eq(v ? *v : 0, ref[i]);
	}
	hmap_free(&m);
}

Test(intern, dense_indexes_in_first_use_order)
{
	struct intern t = INTERN_INIT;
	cr_assert_eq(intern_find(&t, "a", 1), -1);
	cr_assert_eq(intern_put(&t, "alpha", 5), 0);
	cr_assert_eq(intern_put(&t, "beta", 4), 1);
	cr_assert_eq(intern_put(&t, "alpha", 5), 0);
	cr_assert_eq(intern_put(&t, "", 0), 2);
	cr_assert_eq(intern_find(&t, "beta", 4), 1);
	cr_assert_eq(intern_find(&t, "bet", 3), -1);
	size_t len;
	cr_assert_str_eq(intern_str(&t, 1, &len), "beta");
	cr_assert_eq(len, 4);
	cr_assert_str_eq(intern_str(&t, 2, NULL), "");
	cr_assert_eq(intern_count(&t), 3);
	intern_free(&t);
	cr_assert_eq(intern_count(&t), 0);
}

/* Binary keys (embedded NULs, equal prefixes) and growth past many
** rehashes keep every index. */
Test(intern, binary_keys_survive_growth)
{
	enum { N = 20000 };
	struct intern t = INTERN_INIT;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t key[3] = {i, 0, i * 2654435761u};
		cr_assert_eq(intern_put(&t, key, sizeof key), (int64_t)i);
	}
	for (uint32_t i = 0; i < N; i++) {
		uint32_t key[3] = {i, 0, i * 2654435761u};
		size_t len;
		const char *s;
		cr_assert_eq(intern_find(&t, key, sizeof key), (int64_t)i);
		s = intern_str(&t, i, &len);
		cr_assert_eq(len, sizeof key);
		cr_assert_eq(memcmp(s, key, len), 0);
	}
	cr_assert_eq(intern_find(&t, "x", 1), -1);
	intern_free(&t);
}

/* -- ljlog's own threads and fork ----------------------------------------------- */

static int began; /* (atomic) */

/* A thread slow to reach its first line (as under a sanitizer). */
static void *slow_thread(void *arg)
{
	struct timespec ts = {0, 30 * 1000000};
	(void)arg;
	nanosleep(&ts, NULL);
	__atomic_store_n(&began, 1, __ATOMIC_RELEASE);
	util_thread_begin();
	return NULL;
}

/* fork()'s prepare handler finds no thread of ljlog's own between its
** creation and its first line (the child would inherit the locks its
** start-up holds: the hang of fork.sh under AddressSanitizer). */
Test(thread, fork_prepare_waits_for_a_start)
{
	cr_assert_eq(util_thread_start(slow_thread), 0);
	util_thread_fork_prepare();
	cr_assert_eq(__atomic_load_n(&began, __ATOMIC_ACQUIRE), 1,
		     "prepare returned while a thread was starting");
	util_thread_fork_done();
}

/* Test thread (dlfind's callback). Keep the hit's fields (the strings
** copied). */
struct hitcopy {
	char object[4096], sym[256];
	int has_sym;
	uintptr_t base, start;
};

static int keep_hit(void *arg, const struct dlfind_hit *h)
{
	struct hitcopy *c = arg;
	snprintf(c->object, sizeof c->object, "%s", h->object);
	c->has_sym = h->sym != NULL;
	snprintf(c->sym, sizeof c->sym, "%s", h->sym ? h->sym : "");
	c->base = h->base;
	c->start = h->start;
	return 7; /* passed through */
}

Test(dlfind, as_dladdr)
{
	/* Exported functions of the C library, and inside them (not
	** strlen: an IFUNC, its address the unexported implementation's). */
	uintptr_t at[] = {(uintptr_t)getpid, (uintptr_t)qsort + 5,
			  (uintptr_t)pthread_create + 1, (uintptr_t)fopen};
	for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
		struct hitcopy c;
		Dl_info info;
		const ElfW(Sym) *sym = NULL;
		cr_assert(dladdr1((void *)at[k], &info, (void **)&sym,
				  RTLD_DL_SYMENT));
		cr_assert_eq(dlfind(at[k], keep_hit, &c), 7);
		cr_assert_str_eq(c.object, info.dli_fname);
		cr_assert_eq(c.base, (uintptr_t)info.dli_fbase);
		cr_assert(c.has_sym, "%s: no symbol", info.dli_sname);
		cr_assert_str_eq(c.sym, info.dli_sname);
		cr_assert_eq(c.start, (uintptr_t)info.dli_saddr);
	}
}

Test(dlfind, main_program_and_no_object)
{
	struct hitcopy c;
	void *anon;
	/* The test program itself: the loader names it "". */
	cr_assert_eq(dlfind((uintptr_t)keep_hit, keep_hit, &c), 7);
	cr_assert_str_eq(c.object, "");
	cr_assert_leq(c.base, (uintptr_t)keep_hit);
	/* Anonymous memory is in no object: the callback is not called. */
	anon = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(anon, MAP_FAILED);
	cr_assert_eq(dlfind((uintptr_t)anon + 8, keep_hit, &c), 0);
	cr_assert_eq(dlfind(0, keep_hit, &c), 0);
	munmap(anon, 4096);
}
