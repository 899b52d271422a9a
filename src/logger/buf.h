/*
** ljlog per-VM event buffer: raw records of 64-bit words, and their one
** table (BUF_RECS): each kind's size, the layout of its words beside it.
** Writers (alloc.c, hooks.c, jitev.c, zones.c, logger.c, logger.h) build
** records with the buf_put_* below, flush.c reads them back through the
** same table: a size is written nowhere else.
** Records hold raw pointers; flush (logger/flush.c) maps and encodes them.
** Mapped records: flush_map rewrites a buffer in place, each pointer
** replaced by its ID (ENTER's function, an ALLOC's or REALLOC's site key
** (0 for none), SWITCH's coroutine, a trace event's prototype or trace),
** a text record's ID in its x (BUF_TEXT_ID_SHIFT).
*/
#ifndef LJLOG_LOGGER_BUF_H
#define LJLOG_LOGGER_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "blocks/format.h"
#include "util/util.h"

/* The records. Every one starts w0 = kind | x << 8 (BUF_W0), w1 = counter
** (clock_now); then the words listed. Columns: kind, words (text
** records: before the text, BUF_TEXT_WORDS), text follows, flush.c's map
** and encode steps (map_<map>, enc_<enc>), the event family it counts
** in when dropped (FORMAT_FAM_<fam>, END). */
/* clang-format off */
#define BUF_RECS(X)                                                           \
/* kind        words text map   enc          fam         w0 x; w2...      */ \
X(ENTER_LUA,   3,    0,   enter, enter,       CALLS)      /* slot; GCproto* */ \
X(ENTER_C,     3,    0,   enter, enter,       CALLS)      /* slot; C func.  */ \
X(ENTER_FF,    3,    0,   enter, enter,       CALLS)      /* slot; ffid     */ \
X(EXIT,        2,    0,   none,  exit,        CALLS)      /* slot           */ \
X(ALLOC,       5,    0,   site,  alloc,       ALLOC)      /* site; key,     */ \
                                                          /* addr, size     */ \
X(FREE,        3,    0,   none,  free,        ALLOC)      /* size; addr     */ \
X(REALLOC,     7,    0,   site,  realloc,     ALLOC)      /* site; key, old */ \
                                          /* addr, old size, addr, size     */ \
X(GC,          3,    0,   none,  gc,          GC)         /* phase; heap    */ \
X(SWITCH,      3,    0,   co,    switch,      COROUTINES) /* -; lua_State*  */ \
X(ATTACH,      3,    0,   none,  vm,          VM)         /* -; heap        */ \
X(DETACH,      3,    0,   none,  vm,          VM)         /* -; heap        */ \
X(TRACE_START, 4,    0,   proto, trace_start, JIT)        /* traceno;       */ \
                                                          /* GCproto*, line */ \
X(TRACE_STOP,  3,    0,   trace, trace_stop,  JIT)        /* traceno;       */ \
                                                          /* GCtrace*       */ \
X(TRACE_ABORT, 5,    0,   proto, trace_abort, JIT)        /* traceno;       */ \
                           /* GCproto*, line | reason<<32, info             */ \
X(TRACE_FLUSH, 2,    0,   none,  trace_flush, JIT)        /* -              */ \
X(ZONE_PUSH,   2,    1,   text,  text,        ZONES)      /* length; name   */ \
X(ZONE_POP,    2,    0,   none,  zone_pop,    ZONES)      /* -              */ \
X(MARK,        2,    1,   text,  text,        ZONES)      /* length; text   */
/* clang-format on */

/* Record kinds, from 1: BUF_ENTER_LUA ... */
/* clang-format off */
enum buf_rec {
	BUF_NONE,
#define BUF_KIND_(kind, words, text, map, enc, fam) BUF_##kind,
	BUF_RECS(BUF_KIND_)
#undef BUF_KIND_
	BUF_KINDS
};
/* clang-format on */

/* Words of each kind: BUF_ENTER_LUA_WORDS ... (text records: before the
** text). */
enum {
#define BUF_WORDS_(kind, words, text, map, enc, fam) BUF_##kind##_WORDS = words,
	BUF_RECS(BUF_WORDS_)
#undef BUF_WORDS_
};

/* Words of text a ZONE_PUSH or MARK record carries after its two words;
** its x: the text's length (at most FORMAT_STRING_MAX), and once mapped
** (flush_map), its STRING's ID above. */
#define BUF_TEXT_WORDS(len) (((len) + 7) / 8)
#define BUF_TEXT_LEN_MASK   0xffu
#define BUF_TEXT_ID_SHIFT   8
#define BUF_TEXT_AT	    BUF_ZONE_PUSH_WORDS /* the text's first word */

/* Words in the largest fixed record, and the room kept free before a
** flush: a record plus the SWITCH that may precede it. */
#define BUF_REC_MAX BUF_REALLOC_WORDS
#define BUF_SLACK   (BUF_REC_MAX + BUF_SWITCH_WORDS)

#define BUF_FITS_(kind, words, text, map, enc, fam)                            \
	_Static_assert(words >= 2 && words <= BUF_REC_MAX,                     \
		       #kind " does not fit BUF_SLACK");
BUF_RECS(BUF_FITS_)
#undef BUF_FITS_
/* Kinds that share a writer share a size. */
_Static_assert(BUF_ENTER_C_WORDS == BUF_ENTER_LUA_WORDS &&
		   BUF_ENTER_FF_WORDS == BUF_ENTER_LUA_WORDS &&
		   BUF_DETACH_WORDS == BUF_ATTACH_WORDS &&
		   BUF_MARK_WORDS == BUF_ZONE_PUSH_WORDS &&
		   BUF_ZONE_POP_WORDS == BUF_ZONE_PUSH_WORDS,
	       "kinds written alike differ in size");

/* Site word (x of ALLOC/REALLOC): site kind | key kind (mapper_key) << 4
** | line << 8 (56 bits: BUF_W0 keeps them). A trace site (key kind
** MAPPER_TRACE) has, in place of the line, 1 + the offset into the
** trace's code (30 bits; 0 unknown: LuaJIT's machine code areas are far
** smaller), what the code called (2 bits, TEXIT_*: BUF_SITE_CLASS), then
** the trace's number (16 bits: LuaJIT numbers at most 65535 traces). Its
** line in the log is 4 x (1 + offset) + that class (doc/format.txt, "Site
** kinds"). */
#define BUF_SITE_TRACE(ofs, traceno)                                           \
	(((uint64_t)(ofs)&0x3fffffffu) << 8 | (uint64_t)(traceno) << 40)
#define BUF_SITE_CLASS(cls) ((uint64_t)(cls) << 38)
#define BUF_SITE_LINE(x)                                                       \
	(((x) >> 4 & 15) == MAPPER_TRACE                                       \
	     ? ((x) >> 8 & 0x3fffffffu) << 2 | ((x) >> 38 & 3)                 \
	     : (x) >> 8)
#define BUF_SITE_TRACENO(x) ((unsigned)((x) >> 40 & 0xffff))

#define BUF_W0(kind, x)	    ((uint64_t)(kind) | ((uint64_t)(x) << 8))
#define BUF_KIND(w0)	    ((unsigned)((w0)&0xff))
#define BUF_X(w0)	    ((w0) >> 8)

/* Any thread. Words of the record starting at w (text included); 0 for
** no record kind. */
static inline unsigned buf_rec_words(const uint64_t *w)
{
	switch (BUF_KIND(w[0])) {
#define BUF_CASE_(kind, words, text, map, enc, fam)                            \
	case BUF_##kind:                                                       \
		return words + (text ? (unsigned)BUF_TEXT_WORDS(               \
					   BUF_X(w[0]) & BUF_TEXT_LEN_MASK)    \
				     : 0);
		BUF_RECS(BUF_CASE_)
#undef BUF_CASE_
	}
	return 0;
}

/* Any thread. The event family (FORMAT_FAM_*) of the record starting at
** w; 0 for no record kind. */
static inline unsigned buf_rec_fam(const uint64_t *w)
{
	switch (BUF_KIND(w[0])) {
#define BUF_FAM_(kind, words, text, map, enc, fam)                             \
	case BUF_##kind: return FORMAT_FAM_##fam;
		BUF_RECS(BUF_FAM_)
#undef BUF_FAM_
	}
	return 0;
}

/* -- Writing a record --------------------------------------------------------- */

/* Each puts one record at p (room for BUF_REC_MAX words: logger_reserve)
** and returns its end; the caller makes that vm->bp (logger_commit). */

#define BUF_INLINE static inline __attribute__((always_inline))

/* VM thread only. ENTER_LUA, ENTER_C or ENTER_FF (kind) of what. */
BUF_INLINE uint64_t *buf_put_enter(uint64_t *p, unsigned kind, uint64_t slot,
				   uint64_t ts, uint64_t what)
{
	p[0] = BUF_W0(kind, slot);
	p[1] = ts;
	p[2] = what;
	return p + BUF_ENTER_LUA_WORDS;
}

/* VM thread only. EXIT. */
BUF_INLINE uint64_t *buf_put_exit(uint64_t *p, uint64_t slot, uint64_t ts)
{
	p[0] = BUF_W0(BUF_EXIT, slot);
	p[1] = ts;
	return p + BUF_EXIT_WORDS;
}

/* VM thread only (allocator). ALLOC of size bytes at addr, site word x. */
BUF_INLINE uint64_t *buf_put_alloc(uint64_t *p, uint64_t ts, uint64_t x,
				   uint64_t key, uint64_t addr, uint64_t size)
{
	p[0] = BUF_W0(BUF_ALLOC, x);
	p[1] = ts;
	p[2] = key;
	p[3] = addr;
	p[4] = size;
	return p + BUF_ALLOC_WORDS;
}

/* VM thread only (allocator). FREE of size bytes at addr. */
BUF_INLINE uint64_t *buf_put_free(uint64_t *p, uint64_t ts, uint64_t addr,
				  uint64_t size)
{
	p[0] = BUF_W0(BUF_FREE, size);
	p[1] = ts;
	p[2] = addr;
	return p + BUF_FREE_WORDS;
}

/* VM thread only (allocator). REALLOC of oaddr (osize bytes) to addr. */
BUF_INLINE uint64_t *buf_put_realloc(uint64_t *p, uint64_t ts, uint64_t x,
				     uint64_t key, uint64_t oaddr,
				     uint64_t osize, uint64_t addr,
				     uint64_t size)
{
	p[0] = BUF_W0(BUF_REALLOC, x);
	p[1] = ts;
	p[2] = key;
	p[3] = oaddr;
	p[4] = osize;
	p[5] = addr;
	p[6] = size;
	return p + BUF_REALLOC_WORDS;
}

/* VM thread only. GC entering phase, heap bytes. */
BUF_INLINE uint64_t *buf_put_gc(uint64_t *p, uint64_t ts, unsigned phase,
				uint64_t heap)
{
	p[0] = BUF_W0(BUF_GC, phase);
	p[1] = ts;
	p[2] = heap;
	return p + BUF_GC_WORDS;
}

/* VM thread only. SWITCH to coroutine L. */
BUF_INLINE uint64_t *buf_put_switch(uint64_t *p, uint64_t ts, const void *L)
{
	p[0] = BUF_W0(BUF_SWITCH, 0);
	p[1] = ts;
	p[2] = (uint64_t)(uintptr_t)L;
	return p + BUF_SWITCH_WORDS;
}

/* VM thread only. ATTACH or DETACH (kind), heap bytes. */
BUF_INLINE uint64_t *buf_put_vm(uint64_t *p, unsigned kind, uint64_t ts,
				uint64_t heap)
{
	p[0] = BUF_W0(kind, 0);
	p[1] = ts;
	p[2] = heap;
	return p + BUF_ATTACH_WORDS;
}

/* VM thread only. TRACE_START of traceno at pt's line. */
BUF_INLINE uint64_t *buf_put_trace_start(uint64_t *p, uint64_t ts,
					 unsigned traceno, const void *pt,
					 uint32_t line)
{
	p[0] = BUF_W0(BUF_TRACE_START, traceno);
	p[1] = ts;
	p[2] = (uint64_t)(uintptr_t)pt;
	p[3] = line;
	return p + BUF_TRACE_START_WORDS;
}

/* VM thread only. TRACE_STOP of traceno, the GCtrace T. */
BUF_INLINE uint64_t *buf_put_trace_stop(uint64_t *p, uint64_t ts,
					unsigned traceno, const void *T)
{
	p[0] = BUF_W0(BUF_TRACE_STOP, traceno);
	p[1] = ts;
	p[2] = (uint64_t)(uintptr_t)T;
	return p + BUF_TRACE_STOP_WORDS;
}

/* VM thread only. TRACE_ABORT of traceno at pt's line: reason, info. */
BUF_INLINE uint64_t *buf_put_trace_abort(uint64_t *p, uint64_t ts,
					 unsigned traceno, const void *pt,
					 uint32_t line, uint32_t reason,
					 int64_t info)
{
	p[0] = BUF_W0(BUF_TRACE_ABORT, traceno);
	p[1] = ts;
	p[2] = (uint64_t)(uintptr_t)pt;
	p[3] = line | (uint64_t)reason << 32;
	p[4] = (uint64_t)info;
	return p + BUF_TRACE_ABORT_WORDS;
}

/* VM thread only. TRACE_FLUSH. */
BUF_INLINE uint64_t *buf_put_trace_flush(uint64_t *p, uint64_t ts)
{
	p[0] = BUF_W0(BUF_TRACE_FLUSH, 0);
	p[1] = ts;
	return p + BUF_TRACE_FLUSH_WORDS;
}

/* VM thread only. ZONE_PUSH or MARK (kind) with the len bytes of s
** (len <= BUF_TEXT_LEN_MASK; room for BUF_TEXT_WORDS(len) words more),
** or ZONE_POP (s NULL, len 0). */
BUF_INLINE uint64_t *buf_put_text(uint64_t *p, unsigned kind, uint64_t ts,
				  const char *s, size_t len)
{
	size_t tw = s ? BUF_TEXT_WORDS(len) : 0;
	p[0] = BUF_W0(kind, s ? len : 0);
	p[1] = ts;
	if (tw) {
		p[BUF_TEXT_AT + tw - 1] = 0; /* the last word's padding */
		memcpy(p + BUF_TEXT_AT, s, len);
	}
	return p + BUF_ZONE_PUSH_WORDS + tw;
}

/* Any thread. end, the end of records written into a buffer whose last
** word is before lim: debug builds abort when past it. */
BUF_INLINE uint64_t *buf_end(uint64_t *end, const uint64_t *lim)
{
	UTIL_DEBUG_ASSERT(end <= lim);
	return end;
}

#endif
