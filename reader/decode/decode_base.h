/*
** ljlog reader library: the decoder's base, shared by every file of the
** decoder and by none outside it (users of the library see decode.h).
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
**
** The decoder's files call one way, top down; no file calls one above it:
**
**   decode.c          public API, the kind table, decode_block, decode_run
**     | decode_kinds.h: one decoder per block kind, nothing else
**     v
**   decode_intro.c    INTRO, END
**   decode_map.c      MAPPING: one decoder per record kind (a table)
**   decode_events.c   EVENTS (hot): one decoder per event op (a table)
**   decode_samples.c  SAMPLES (hot): a sample's parts, one function each
**   decode_heap.c     HEAP: OBJECT, ROOT and SUMMARY records
**     | decode_base.h: this header
**     v
**   decode_base.c     the decoder's state, the arena and the ID table,
**                     errors with their offsets, the field readers of a
**                     cursor, trace exits
**
** decode.c stands on decode_base.h too (errors, the ID table, the state).
** The per-kind files never call each other nor decode.c; decode_base.c
** calls none of them. A new block kind is a decoder in its own file, its
** line in decode_kinds.h and its row in decode.c's kind table.
*/
#ifndef LJLOG_READER_DECODE_BASE_H
#define LJLOG_READER_DECODE_BASE_H

#include "decode/decode.h"
#include "util/hmap.h"
#include "util/util.h"

#define PAGE_BITS   12
#define PAGE_SIZE   (1u << PAGE_BITS)
#define ARENA_CHUNK (64u << 10)
#define ERR_MAX	    400

/* ID table budget: past the first PAGES_FREE pages (32 KiB each), one more
** page per PAGE_OBJS objects defined; an object whose page is over budget
** goes to the sparse map instead. Memory stays in proportion to the records
** however sparse the IDs (IDs 4096 apart would take a page each: 32 KiB
** for a 6-byte record). */
#define PAGES_FREE 16u
#define PAGE_OBJS  256u

/* Arena chunk: objects and strings live until decode_free. */
struct chunk {
	struct chunk *next;
	size_t used, size;
	uint8_t mem[];
};

/* A decoder: its sink, the objects of one log, what the blocks so far
** held, and buffers the hot kinds reuse. */
struct decode {
	struct decode_sink sink;    /* where data goes */
	struct decode_obj ***pages; /* ID table: pages of PAGE_SIZE entries */
	size_t npages;		    /* entries at pages */
	size_t pages_used;	    /* pages allocated */
	uint64_t nobjs;		    /* objects in the ID table */
	struct hmap sparse;	    /* ID -> object, pages over budget */
	struct chunk *arena;	    /* newest chunk first */
	struct decode_intro intro;  /* copy of the INTRO block */
	struct decode_end end;	    /* copy of the END block */
	int have_intro, have_end;
	unsigned seen_once;	      /* bit per kind seen (kinds < 32) */
	uint64_t events;	      /* events in EVENTS blocks so far */
	uint64_t vms;		      /* VM records so far */
	uint64_t samples;	      /* samples in SAMPLES blocks so far */
	uint64_t dropped;	      /* their dropped fields, summed */
	uint64_t sblocks;	      /* SAMPLES blocks so far */
	uint32_t idbase;	      /* added to IDs the sink sees */
	uint32_t maxid;		      /* the largest ID defined (raw) */
	struct decode_lua_frame *lua; /* a sample's frames, reused */
	struct decode_obj **host;     /* (DECODE_MAX_FRAMES each) */
	char *msg;		      /* TRACE_ABORT message, NUL-terminated */
	size_t msgcap;
	struct decode_href *hrefs; /* a heap object's references, reused */
	char htext[320]; /* a table's text (version 16: made from its sizes) */
	size_t hrefcap;
	char err[ERR_MAX]; /* last error */
};

/* Cursor over one payload, for the cold block kinds. */
struct decode_cur {
	const uint8_t *p, *start, *end;
	const char *field; /* the field that failed */
};

/* -- Hot-path field readers -------------------------------------------- */

/* Read a uleb into v over locals p and end (the hot kinds keep their
** cursor in registers): one-byte fast path, else the shared codec; on a
** bad integer, p stays and fail runs (a statement that leaves: return,
** goto). */
#define DEC_ULEB(v, fail)                                                      \
	do {                                                                   \
		if (UTIL_LIKELY(p < end && *p < 0x80)) {                       \
			(v) = *p++;                                            \
		} else {                                                       \
			const uint8_t *q_ = p;                                 \
			if (blocks_uleb_get(&q_, end, &(v)) < 0)               \
				fail;                                          \
			p = q_;                                                \
		}                                                              \
	} while (0)

/* The same for a sleb. */
#define DEC_SLEB(v, fail)                                                      \
	do {                                                                   \
		uint64_t u_;                                                   \
		DEC_ULEB(u_, fail);                                            \
		(v) = blocks_unzigzag(u_);                                     \
	} while (0)

/* -- decode_base.c -------------------------------------------------------- */

void *dec_alloc(struct decode *d, size_t n);
struct decode_obj *dec_lookup_sparse(const struct decode *d, uint64_t id);
int dec_str(struct decode *d, const char *s, size_t len,
	    struct decode_str *out);
int dec_insert(struct decode *d, struct decode_obj *obj);
int dec_corrupt(struct decode *d, const struct reader_block *b, int code,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void dec_warn(struct decode *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int dec_get_u(struct decode_cur *c, const char *name, uint64_t *v);
int dec_get_s(struct decode *d, struct decode_cur *c, const char *name,
	      struct decode_str *out);
int dec_get_clock(struct decode_cur *c, struct decode_clock *k);
int dec_bad_field(struct decode *d, const struct reader_block *b,
		  struct decode_cur *c, int rc);
int dec_check_tail(struct decode *d, const struct reader_block *b,
		   struct decode_cur *c, const char *what);

/* The object with this ID, NULL if undefined (hot path: a
** page; the sparse map only when the page has no such ID). */
static inline struct decode_obj *dec_lookup(const struct decode *d, uint64_t id)
{
	uint64_t pg = id >> PAGE_BITS;
	struct decode_obj *o = NULL;
	if (UTIL_LIKELY(pg < d->npages) && d->pages[pg])
		o = d->pages[pg][id & (PAGE_SIZE - 1)];
	if (UTIL_UNLIKELY(!o) && d->sparse.count)
		o = dec_lookup_sparse(d, id);
	return o;
}

/* Any ID read from the log: its object, NULL if out of range or
** undefined (ID 0 is never defined). */
static inline struct decode_obj *dec_find(const struct decode *d, uint64_t id)
{
	return id < DECODE_MAX_ID ? dec_lookup(d, id) : NULL;
}

/* Whether o is a function: a PROTO, CFUNC or FFUNC. */
static inline int dec_is_func(const struct decode_obj *o)
{
	return o->kind == FORMAT_REC_PROTO || o->kind == FORMAT_REC_CFUNC ||
	       o->kind == FORMAT_REC_FFUNC;
}

#endif
