/*
** ljlog per-VM event buffer: raw records of 64-bit words.
** Records hold raw pointers; flush (logger/flush.c) maps and encodes them.
** Mapped records: flush_map rewrites a buffer in place, each pointer
** replaced by its ID (ENTER's function, an ALLOC's or REALLOC's site key
** (0 for none), SWITCH's coroutine, a trace event's prototype or trace),
** a text record's ID in its x (BUF_TEXT_ID_SHIFT).
*/
#ifndef LJLOG_LOGGER_BUF_H
#define LJLOG_LOGGER_BUF_H

#include <stdint.h>

/* Record kinds: word 0 = kind | x << 8, word 1 = counter, then the rest. */
enum buf_rec {
	BUF_ENTER_LUA = 1, /* x slot, GCproto* */
	BUF_ENTER_C,	   /* x slot, lua_CFunction */
	BUF_ENTER_FF,	   /* x slot, ffid */
	BUF_EXIT,	   /* x slot */
	BUF_ALLOC,	   /* x site, site key, addr, size */
	BUF_FREE,	   /* x size, addr */
	BUF_REALLOC, /* x site, site key, old addr, old size, new addr, new size */
	BUF_GC,	     /* x phase, heap */
	BUF_SWITCH,	 /* lua_State* */
	BUF_ATTACH,	 /* heap */
	BUF_DETACH,	 /* heap */
	BUF_TRACE_START, /* x traceno, GCproto*, line */
	BUF_TRACE_STOP,	 /* x traceno, GCtrace* */
	BUF_TRACE_ABORT, /* x traceno, GCproto*, line | reason << 32, info */
	BUF_TRACE_FLUSH, /* (nothing) */
	BUF_ZONE_PUSH,	 /* x length, then the name's bytes (BUF_TEXT_WORDS) */
	BUF_ZONE_POP,	 /* (nothing) */
	BUF_MARK,	 /* x length, then the text's bytes (BUF_TEXT_WORDS) */
};

/* Words of text a ZONE_PUSH or MARK record carries after its two words;
** its x: the text's length (at most FORMAT_STRING_MAX), and once mapped
** (flush_map), its STRING's ID above. */
#define BUF_TEXT_WORDS(len) (((len) + 7) / 8)
#define BUF_TEXT_LEN_MASK   0xffu
#define BUF_TEXT_ID_SHIFT   8

/* Words in the largest record, and the room kept free before a flush:
** a record plus the SWITCH that may precede it. */
#define BUF_REC_MAX 7
#define BUF_SLACK   (BUF_REC_MAX + 3)

/* Site word (x of ALLOC/REALLOC): site kind | key kind (mapper_key) << 4
** | line << 8. A trace site (key kind MAPPER_TRACE) has, in place of the
** line, 1 + the offset into the trace's code (32 bits; 0 unknown), then
** the trace's number (16 bits: LuaJIT numbers at most 65535 traces). */
#define BUF_SITE_TRACE(ofs, traceno)                                           \
	(((uint64_t)(ofs)&0xffffffffu) << 8 | (uint64_t)(traceno) << 40)
#define BUF_SITE_LINE(x)                                                       \
	(((x) >> 4 & 15) == MAPPER_TRACE ? (x) >> 8 & 0xffffffffu : (x) >> 8)
#define BUF_SITE_TRACENO(x) ((unsigned)((x) >> 40 & 0xffff))

#define BUF_W0(kind, x)	    ((uint64_t)(kind) | ((uint64_t)(x) << 8))
#define BUF_KIND(w0)	    ((unsigned)((w0)&0xff))
#define BUF_X(w0)	    ((w0) >> 8)

/* Words of each record kind, indexed by kind (the fixed part). */
extern const uint8_t buf_words[];

/* Any thread. Words of the record starting at w (text included). */
static inline unsigned buf_rec_words(const uint64_t *w)
{
	unsigned kind = BUF_KIND(w[0]);
	unsigned n = buf_words[kind];
	if (kind == BUF_ZONE_PUSH || kind == BUF_MARK)
		n += (unsigned)BUF_TEXT_WORDS(BUF_X(w[0]) & BUF_TEXT_LEN_MASK);
	return n;
}

#endif
