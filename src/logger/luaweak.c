/*
** ljlog: the pointers to LuaJIT's API that luaweak.h names, filled by
** dlsym() from the LuaJIT of the process (see luaweak.h for why).
*/
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "lua.h"
#include "lauxlib.h"
#include "luajit.h"

/* The pointers luaweak.h declares (through LuaJIT's own declarations). */
#define LUAWEAK_DEFINE(n) __typeof__(n) n;
LUAWEAK_NAMES(LUAWEAK_DEFINE)
#undef LUAWEAK_DEFINE

static pthread_mutex_t resolve_lock = PTHREAD_MUTEX_INITIALIZER;
static int resolved;

/* Caller holds resolve_lock. NAME from the global scope, then from the
** object handle (when not NULL); NULL when neither has it. */
static void *find(const char *name, void *handle)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	if (!p && handle)
		p = dlsym(handle, name);
	return p;
}

/* Any thread. See luaweak.h. */
int luaweak_resolve(void *hint)
{
	void *handle = NULL;
	Dl_info info;
	int missing = 0;

	if (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&resolve_lock);
	if (!resolved) {
		if (hint && dladdr(hint, &info) && info.dli_fname)
			handle = dlopen(info.dli_fname,
					RTLD_LAZY | RTLD_NOLOAD);
#define LUAWEAK_FIND(n)                                                        \
	if (!ljlog_p_##n)                                                      \
		*(void **)&ljlog_p_##n = find(#n, handle);                     \
	if (!ljlog_p_##n)                                                      \
		missing = 1;
		LUAWEAK_NAMES(LUAWEAK_FIND)
#undef LUAWEAK_FIND
		if (handle)
			dlclose(handle);
		if (!missing)
			__atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&resolve_lock);
	return missing ? -ENOSYS : 0;
}

/* Load time (constructor). What is there already: a program that links
** LuaJIT (luajit, a unit test) has it all before any Lua code runs. */
__attribute__((constructor)) static void resolve_at_load(void)
{
	(void)luaweak_resolve(NULL);
}
