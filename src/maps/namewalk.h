/*
** ljlog namewalk: names of functions found by looking through a VM while
** it stops between two instructions: the prototypes that make their
** closures (their bytecode, as protoname reads it), and the tables and
** upvalues that hold them ("vim.split", "worker.stats", "fib").
*/
#ifndef LJLOG_MAPS_NAMEWALK_H
#define LJLOG_MAPS_NAMEWALK_H

#include <stdint.h>

#include "maps/ljwin.h"

/* Tables looked into at most, and how deep from a root. */
#define NAMEWALK_MAX_TABLES 50000
#define NAMEWALK_MAX_DEPTH  4

/* What a walk is after: wanted(ud, key) says whether a function is (key: a
** GCproto* for a Lua function, the lua_CFunction for a C function);
** found(ud, key, name, sure) names one (it is then no longer wanted):
** sure from the bytecode that made it (the name calls mode gives), not
** from a table path. */
struct namewalk_fns {
	int (*wanted)(void *ud, uintptr_t key);
	void (*found)(void *ud, uintptr_t key, const char *name, int sure);
	void *ud;
	int lua; /* a Lua function is wanted: read the prototypes */
};

/* VM thread only, the VM stopped between two instructions (a hook): no
** object moves or is freed meanwhile. Reads the VM's memory only: no Lua
** API call, no allocation from the VM. Names what it can of the wanted
** functions: first from the bytecode of every prototype on the VM's object
** list that makes closures (the names calls mode gives), then by where
** package.loaded's modules and the globals hold them, through tables and
** Lua functions' upvalues. */
void namewalk_run(lua_State *L, const struct namewalk_fns *fns);

#endif
