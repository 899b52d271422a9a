/*
** ljlog names: what a mapped pointer is called, copied out of the VM once,
** and the MAPPING records that carry it.
*/
#ifndef LJLOG_MAPS_NAMES_H
#define LJLOG_MAPS_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "blocks/writer.h"
#include "maps/ljwin.h"
#include "util/hmap.h"

/* The chunk of a PROTO record for a library function written in Lua. */
#define NAMES_BUILTIN_CHUNK "=[builtin]"

/* Names found in package.loaded, per VM (inside its mapper: the mapper's
** lock guards them once the VM is attached). */
struct names {
	char *ff[256];	 /* library functions by ffid ("string.rep") */
	uint8_t cb[256]; /* by ffid: found under a name of callback_ff */
	struct hmap c;	 /* plain C function -> 1 + index in cname */
	char **cname;	 /* their names ("mymod.fn") */
	size_t nc, capc; /* in cname */
	lua_CFunction require_f; /* `require`: rescan after it returns */
	unsigned ff_agree;	 /* library functions whose ffid LuaJIT's */
	unsigned ff_disagree;	 /* list (ljlog_ffnames) gives, or not */
};

/* Owner only (attach, detach, a rescan's scratch copy). Free the names'
** memory. */
void names_free(struct names *n);

/* VM thread only, where the Lua API may be called. Walk package.loaded one
** level deep and remember the names of library and C functions. */
void names_scan(struct names *n, lua_State *L);

/* Caller holds dst's mapper lock (VM thread). Move into dst the names of
** src it lacks (src is left to names_free). */
void names_merge(struct names *dst, struct names *src);

/* VM thread only, before the VM is attached (no other reader yet) or with
** its mapper's lock held. Name C function f (if it has no name yet). */
void names_add_c(struct names *n, lua_CFunction f, const char *name);

/* Any thread (n under its owner's rule, or NULL). The name of fast
** function ffid, into buf: "string.rep", "ipairs (iterator)", "file:read",
** "ffi call"; "builtin #N" when nothing names it. Returns buf. */
const char *names_ffname(const struct names *n, unsigned ffid, char *buf,
			 size_t cap);

/* Any thread. The ffid of LuaJIT's raw fast function name
** ("ffi.meta.__call"), or -1 when this LuaJIT has none. */
int names_ffid(const char *raw);

/* MAPPING records, appended to b; 0 or -ENOMEM (names_put_cfunc: 1 when a
** table named the function, 0 when only the loader did). Context: the
** caller owns b; for the records that read VM objects or names (PROTO,
** CFUNC, FFUNC), the caller holds the VM's mapper lock (VM thread or the
** sampler's drainer) and the objects are alive (mapped before the GC
** sweeps). */
int names_put_vm(struct wbuf *b, uint64_t id, pid_t tid, uint64_t heap,
		 unsigned flags, uint64_t alloc_rate);
int names_put_proto(struct wbuf *b, uint64_t id, GCproto *pt, const char *name);
int names_put_cfunc(struct wbuf *b, uint64_t id, const struct names *n,
		    uintptr_t f);
int names_put_ffunc(struct wbuf *b, uint64_t id, const struct names *n,
		    unsigned ffid, unsigned flags);
int names_put_coroutine(struct wbuf *b, uint64_t id, unsigned flags);
/* A NAME record: a name found after the function's record. */
int names_put_name(struct wbuf *b, uint64_t id, const char *name);
/* A TRACE record's snapshots: for snapshot k, its machine-code offset
** mcofs[k] and nfr[k] frames, outermost first, taken in turn from ids (PROTO
** IDs, defined before) and lines. */
struct names_exits {
	unsigned nsnap;
	const uint32_t *mcofs;
	const uint8_t *nfr;
	const uint64_t *ids;
	const uint32_t *lines;
	const uint32_t *alines; /* 3 per snapshot: aline, tline, kline */
};
int names_put_trace(struct wbuf *b, uint64_t id, unsigned traceno,
		    uint64_t proto, uint32_t line, unsigned root,
		    const struct names_exits *sn);
int names_put_hostsym(struct wbuf *b, uint64_t id, uintptr_t address,
		      const char *name, const char *object, unsigned flags);

#endif
