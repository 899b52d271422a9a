/*
** ljlog preload attach: LD_PRELOAD=libljlog.so with LUAJIT_PROFILE set
** profiles every VM that a host linking LuaJIT dynamically creates
** (nginx's lua module, any embedder), with no change to the host.
**
** libljlog.so defines luaL_newstate and lua_newstate; preloaded, they come
** first in the process's symbol search and pass to LuaJIT's own (RTLD_NEXT).
** The new VM gets a one-shot count hook: at its first Lua instruction the
** host has opened its libraries and registered its own functions (so they
** are named), and ljlog attaches there. Loaded as a Lua module (RTLD_LOCAL)
** libljlog interposes nothing; a host that links libljlog and calls
** ljlog_attach itself before running Lua code is left as it is. A program
** with LuaJIT linked in statically makes its VMs with its own copy, which
** no preload reaches: when it exports LuaJIT's API (-Wl,-E, as LuaJIT's
** own luajit and Tarantool do), one line at load says so.
*/
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ljlog.h"
#include "logger/logger.h"

typedef lua_State *(*newstate_fn)(lua_Alloc f, void *ud);
typedef lua_State *(*lnewstate_fn)(void);

/* VM thread only, in LuaJIT's hook. Attach at the VM's first instruction
** (once: the hook removes itself). */
static void first_instruction(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	lua_sethook(L, NULL, 0, 0);
	const char *env = logger_env_options();
	if (!env || logger_vm_of(G(L)))
		return;
	char err[512];
	logger_keep_open(); /* later VMs join this log */
	if (logger_attach(L, env, err, sizeof err) < 0)
		fprintf(stderr,
			"ljlog: LUAJIT_PROFILE: %s; running unprofiled\n", err);
}

/* VM thread only. A VM was just made by real (LuaJIT's function): attach
** at its first instruction when LUAJIT_PROFILE asks and nothing hooks it
** yet. LuaJIT's API is looked up first: in a host linked with -z now whose
** LuaJIT came with a dlopen()ed module (nginx), it was not there at load. */
static lua_State *arm(lua_State *L, void *real)
{
	const char *env = L ? logger_env_options() : NULL;
	if (env && luaweak_resolve(real) == 0 && !logger_vm_of(G(L)) &&
	    !lua_gethook(L)) {
		logger_pin();
		lua_sethook(L, first_instruction, LUA_MASKCOUNT, 1);
	}
	return L;
}

/* VM thread only. LuaJIT's lua_newstate, then arm. */
LJLOG_API lua_State *lua_newstate(lua_Alloc f, void *ud)
{
	static newstate_fn real;
	newstate_fn r = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	if (!r) {
		r = (newstate_fn)dlsym(RTLD_NEXT, "lua_newstate");
		__atomic_store_n(&real, r, __ATOMIC_RELEASE);
	}
	return r ? arm(r(f, ud), (void *)r) : NULL;
}

/* VM thread only. LuaJIT's luaL_newstate, then arm. */
LJLOG_API lua_State *luaL_newstate(void)
{
	static lnewstate_fn real;
	lnewstate_fn r = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	if (!r) {
		r = (lnewstate_fn)dlsym(RTLD_NEXT, "luaL_newstate");
		__atomic_store_n(&real, r, __ATOMIC_RELEASE);
	}
	return r ? arm(r(), (void *)r) : NULL;
}

/* Load time. Whether the address in ud lies in the program itself, the
** first object dl_iterate_phdr reports (callback: stops there). */
static int in_program(struct dl_phdr_info *info, size_t size, void *ud)
{
	uintptr_t *a = ud;
	(void)size;
	for (int k = 0; k < info->dlpi_phnum; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && *a >= lo && *a - lo < ph->p_memsz)
			return 1;
	}
	return -1;
}

/* Load time. Whether the program itself defines the symbol name. */
static int program_defines(const char *name)
{
	uintptr_t a = (uintptr_t)dlsym(RTLD_DEFAULT, name);
	return a && dl_iterate_phdr(in_program, &a) == 1;
}

/* Load time (constructor). Preloaded (LD_PRELOAD names libljlog) with
** LUAJIT_PROFILE set into a program whose own code defines LuaJIT's API
** (luaL_newstate, and luaJIT_setmode, which no host takes the address of):
** say in one line that the preload does not reach its VMs. */
__attribute__((constructor)) static void static_luajit_check(void)
{
	const char *pre = getenv("LD_PRELOAD");
	if (!pre || !strstr(pre, "libljlog") || !logger_env_options() ||
	    !program_defines("luaL_newstate") ||
	    !program_defines("luaJIT_setmode"))
		return;
	fprintf(stderr,
		"ljlog: LD_PRELOAD: %s has LuaJIT linked in statically, and "
		"the preload does not reach its VMs; load ljlog from Lua "
		"instead (luajit -lljlog, or require \"ljlog\")\n",
		program_invocation_short_name);
}
