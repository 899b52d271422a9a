/*
** ljlog protoname: the name a Lua programmer gives a function, read from
** the bytecode of the function that makes its closure (after its FNEW).
*/
#ifndef LJLOG_MAPS_PROTONAME_H
#define LJLOG_MAPS_PROTONAME_H

#include <stddef.h>

#include "maps/ljwin.h"

/* Called for each child prototype of a parent, with its name ("" when
** unknown). */
typedef int (*protoname_fn)(void *ud, GCproto *child, const char *name);

/* Caller keeps pt alive and reads only its immutable data (any thread,
** no Lua API). Name every child prototype pt makes a closure of: the
** global (GSET: "fib"), field (TSETS: "M.add", "M:get" when its first
** parameter is self), upvalue (USETV) or local it is stored into. Stops at
** and returns fn's first nonzero result, else 0. */
int protoname_children(GCproto *pt, protoname_fn fn, void *ud);

/* Any thread, pt alive. The name of local slot at bytecode position pc of
** pt, or NULL (no debug info, or a temporary). */
const char *protoname_local(const GCproto *pt, BCPos pc, BCReg slot);

/* Any thread, pt alive. 1 when pt's first parameter is `self` (a method:
** "M:get"). */
int protoname_is_method(const GCproto *pt);

/* Any thread, pt alive. The name of pt's upvalue idx, or NULL. */
const char *protoname_upvalue(const GCproto *pt, uint32_t idx);

/* Any thread, pt alive. A LuaJIT library function written in Lua (its
** firstline is -1): its library name ("table.remove"), else NULL. */
const char *protoname_builtin(const GCproto *pt);

#endif
