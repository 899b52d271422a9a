/*
** ljlog reader processors: function identity.
** One function per identity, merged across IDs and VMs: a Lua function is
** its chunk and first line, a C function its name and object (or address),
** a fast function its name, a host function (known only from HOSTSYMs) its
** symbol and object, plus the pseudo-functions of allocation sites.
**
** fnid owns decode_obj.user_idx: for a PROTO, CFUNC or FFUNC object it is
** the function's index + 1 (fnid_of), set when the record is decoded. No
** other processor writes user or user_idx; fnid's sink goes first in a
** fan-out so that the others see the index already set.
**
** A NAME record (version 14) names a PROTO or CFUNC later: the function is
** called so from then on (what it counted before too), or, when another
** function has that identity already, the object is that function from
** then on (user_idx changes; what was counted before stays where it was).
** Names are read from fns at render time, never copied at decode time.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROC_FNID_H
#define LJLOG_READER_PROC_FNID_H

#include <stddef.h>
#include <stdint.h>

#include "decode/decode.h"
#include "util/hmap.h"
#include "util/intern.h"

/* Function kinds. */
enum fnid_kind {
	FNID_LUA,
	FNID_C,
	FNID_FAST,
	FNID_INTERNAL,
	FNID_HOST, /* host machine code known only from HOSTSYMs */
};

/* Pseudo-functions: allocation sites without a function; what LuaJIT was
** doing in a timer sample without a Lua function (GC samples are "(gc)"
** too). */
enum fnid_pseudo {
	FNID_PS_UNKNOWN,
	FNID_PS_GC,
	FNID_PS_JIT,
	FNID_PS_INTERNAL,
	FNID_PS_TRACE,
	FNID_PS_BEFORE,	  /* freed, allocated before the profiler attached */
	FNID_PS_COMPILER, /* samples: LuaJIT's JIT compiler */
	FNID_PS_INTERP,	  /* samples: its interpreter, no Lua frame read */
	FNID_PS_LUAJIT,	  /* samples: its other code */
	FNID_PS_LJLOG,	  /* allocations: ljlog's own objects */
	FNID_PS__MAX
};

/* One function identity. */
struct fnid_fn {
	char *name;    /* "app.lua:12", "string.rep", "io.write", "(gc)" */
	char *file;    /* Lua: chunk as shown; C: object; else "" */
	uint64_t line; /* Lua: firstline; else 0 */
	unsigned kind; /* FNID_* */
	int noexit;    /* an assembler fast function: never an EXIT */
	int callback;  /* noexit, and may call Lua in its frame (version 4) */
	uint32_t vm;   /* Lua: the VM whose record made it */
};

struct fnid {
	struct fnid_fn *fns; /* by index */
	size_t n, cap;
	struct intern keys; /* identity keys; a function may have several */
	uint32_t *keyfn;    /* by key index: the function's index */
	size_t keycap;
	struct hmap addr; /* CFUNC address -> index + 1 (the first one) */
	int64_t pseudo[FNID_PS__MAX]; /* index of each, or -1 */
};

/* An empty table. */
void fnid_init(struct fnid *f);

/* Free everything; the table is empty again. */
void fnid_free(struct fnid *f);

/* Fill sink so that a decoder's PROTO, CFUNC and FFUNC records
** get their functions (and user_idx), and NAME records rename them. */
void fnid_sink(struct fnid *f, struct decode_sink *sink);

/* The function of a PROTO, CFUNC or FFUNC object decoded
** through fnid's sink. */
static inline uint32_t fnid_of(const struct decode_obj *o)
{
	return o->user_idx - 1;
}

/* Index of a pseudo-function; -1 when out of memory. */
int64_t fnid_pseudo(struct fnid *f, enum fnid_pseudo ps);

/* Index of the site "trace N (started at line L)" of TRACE t
** (an allocation in it whose place is unknown); -1 when out of memory. */
int64_t fnid_trace(struct fnid *f, const struct decode_obj *t);

/* Index of the host function named after a HOSTSYM's symbol
** name (may be "") and object; -1 when out of memory. */
int64_t fnid_host(struct fnid *f, const char *name, const char *object);

/* Index of the first C function at address, or -1. */
int64_t fnid_at(const struct fnid *f, uint64_t address);

/* Name of a function kind: "lua", "c", "fast", "internal",
** "host". */
const char *fnid_kind_name(unsigned kind);

#endif
