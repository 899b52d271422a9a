/*
** ljlog jit: trace events from jit.attach (start, stop, abort, flush).
*/
#ifndef LJLOG_LOGGER_JITEV_H
#define LJLOG_LOGGER_JITEV_H

#include <stddef.h>
#include <stdint.h>

#include "maps/ljwin.h"
#include "maps/texit.h"

/* VM thread only, Lua API context. Attach the trace event callback to L's
** VM; 0 or -errno with a message in err. */
int jitev_start(lua_State *L, char *err, size_t errlen);

/* VM thread only, Lua API context. Detach it again. */
void jitev_stop(lua_State *L);

/* Exit modes of LuaJIT's recorder (its profiler's, jit.p -jp=f / l): where
** a trace gets a check and an exit state (LuaJIT: a snapshot). */
#define JITEV_FUNCS 'f' /* a check and exit where the function changes */
#define JITEV_LINES 'l' /* ... where the line changes */

/* VM thread only, Lua API context. Have the traces recorded from now on
** carry exits in mode (JITEV_FUNCS or JITEV_LINES); the mode when set
** here, 0 when not. */
int jitev_lines_on(lua_State *L, int mode);

/* VM thread only. Undo jitev_lines_on of mode (if still ljlog's). */
void jitev_lines_off(lua_State *L, int mode);

/* A side trace that remakes allocations its parent sank (LuaJIT's
** allocation sinking: lj_snap_replay makes them at the side trace's start,
** before its first exit): where the constructor was in the parent. */
/* A VM's exits per line where it allocates (jitev_alloc_lines_on), read
** and kept by its record events. */
struct jitev_rec {
	int on;		  /* the record handler decides the mode */
	int base;	  /* the mode elsewhere: 0 or JITEV_FUNCS */
	int switched;	  /* this recording went to JITEV_LINES */
	uint32_t traceno; /* the recording last seen: its number, */
	uint32_t nexits;  /* its exits (T->nsnap) */
	uint32_t scan;	  /* and the IR instructions looked at */
};

/* A VM's JIT policy and trace modes, as its attach set them (inside the
** logger's per-VM state, as jit); its detach undoes them. */
struct jitev_vm {
	int off;	      /* ljlog turned the JIT compiler off (calls) */
	int events;	      /* trace events attached (jitev_start) */
	int exits;	      /* exit mode set (JITEV_FUNCS, _LINES), or 0 */
	struct jitev_rec rec; /* alloc: an exit per line where it allocates */
	struct texit_callees callees; /* alloc=RATE: what compiled code calls */
};

/* VM thread only, Lua API context. Where LuaJIT's table constructors and
** key insertion are (jit.util.ircalladdr), into c; zeros when not told. */
void jitev_callees(lua_State *L, struct texit_callees *c);

/* VM thread only, Lua API context. With alloc: an exit per line only in
** the traces that may allocate. Traces are recorded in mode base (0, or
** JITEV_FUNCS with sample), and a record handler (chained like the trace
** handler) switches a recording to JITEV_LINES before its first
** instruction that may allocate. 1 when on; 0 when a mode was set already
** (jit.p running) or this LuaJIT has no profiler; -errno with a message in
** err. */
int jitev_alloc_lines_on(lua_State *L, struct jitev_rec *r, int base, char *err,
			 size_t errlen);

/* VM thread only, Lua API context. Undo jitev_alloc_lines_on. */
void jitev_alloc_lines_off(lua_State *L, struct jitev_rec *r);

/* Any thread. The message of LuaJIT trace error number reason (TraceError)
** with its info (a number, or -1), into buf. */
const char *jitev_message(unsigned reason, int64_t info, const char *ffname,
			  char *buf, size_t len);

#endif
