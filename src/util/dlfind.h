/*
** ljlog dlfind: which loaded object, and which of its exported functions,
** holds an address; read under the dynamic loader's lock, so that an
** object another thread closes cannot go while its names are read.
** dladdr returns pointers into the loader's and the object's memory that
** a dlclose may free as soon as it returns (a C module unloaded by
** lua_close, a library ffi.load opened and the collector closed).
*/
#ifndef LJLOG_UTIL_DLFIND_H
#define LJLOG_UTIL_DLFIND_H

#include <stdint.h>

/* What dlfind found. The strings are copies, valid only during the
** callback. */
struct dlfind_hit {
	const char *object; /* the object's path; "" for the main program */
	uintptr_t base;	    /* where its mapping starts (dladdr's dli_fbase) */
	const char *sym;    /* the exported symbol holding the address (the
			       one dladdr names), or NULL */
	uintptr_t start;    /* where sym starts; 0 with no sym */
};

/* Any thread, not in a signal handler; never inside another dl_iterate_phdr
** callback. Look ip up among the loaded objects; if one holds it, call
** fn(arg, hit) while the loader's list is locked (fn must not call dlopen,
** dlclose, dladdr or dl_iterate_phdr) and return what fn returns, which
** should be positive or a negative errno. 0 when no object holds ip;
** -ENOMEM when the names could not be copied. */
int dlfind(uintptr_t ip, int (*fn)(void *arg, const struct dlfind_hit *hit),
	   void *arg);

#endif
