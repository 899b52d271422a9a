/*
** ljlog reader processors: a chain of heap references as a path a Lua
** programmer reads: _G.HOLD[17].name, package.loaded.app.cache,
** upvalue cache of _G.handler (app.lua:10), stack of coroutine _G.co
** (co.lua:3) local buf, metatable of _G.obj.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROC_HPATH_H
#define LJLOG_READER_PROC_HPATH_H

#include <stddef.h>

#include "proc/hsnap.h"

/* The path of the references e[0..n) (root first, from k)
** into buf (NUL-terminated, cut with "..." when longer than cap); cut:
** the path lacks its first references. */
void hpath_render(const struct hsnap_keep *k, const struct hsnap_edge *const *e,
		  size_t n, int cut, char *buf, size_t cap);

/* A table key's text as a path step: ".name" for an
** identifier, ["a b"] for other strings, into buf. */
void hpath_key(const char *s, size_t len, char *buf, size_t cap);

#endif
