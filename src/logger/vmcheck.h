/*
** ljlog VM check: is the running LuaJIT the one ljlog was built for (its
** version, its flavour, and probes of the internal layout ljlog reads)?
*/
#ifndef LJLOG_LOGGER_VMCHECK_H
#define LJLOG_LOGGER_VMCHECK_H

#include <stddef.h>

#include "maps/ljwin.h"

/* VM thread only, Lua API context. The running jit.version, into buf, or
** NULL when the jit module does not say; *openresty: 1 when its jit module
** is OpenResty's (jit.prngstate), 0 when not, -1 when it cannot tell. */
const char *vmcheck_version(lua_State *L, char *buf, size_t len,
			    int *openresty);

/* VM thread only, Lua API context. 0 when L's VM is the LuaJIT ljlog was
** built for; -EPROTO with a message in err when not. */
int vmcheck(lua_State *L, char *err, size_t errlen);

#endif
