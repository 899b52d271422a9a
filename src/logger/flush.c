/*
** ljlog flush: a VM's raw buffer into MAPPING and EVENTS blocks, in two
** passes. The map pass (VM thread, mapper lock) puts IDs in place of the
** records' pointers while the objects live, and makes the MAPPING block;
** the encode pass (the writer thread, or the VM thread without one) turns
** the mapped records into an EVENTS block, reserving the worst case once,
** then emitting without checks. Neither writes: logger.c writes the
** MAPPING block, flushq.c the EVENTS block.
*/
#include "logger/flush.h"

#include <errno.h>
#include <string.h>

#include "logger/buf.h"
#include "logger/jitev.h"
#include "stat/clock.h"

_Static_assert(FORMAT_STRING_MAX <= BUF_TEXT_LEN_MASK,
	       "a text's length does not fit below its ID");

/* -- Encoding ----------------------------------------------------------------- */

/* Any thread. An op byte with a slot delta, escaped when large. */
static uint8_t *put_slot(uint8_t *p, unsigned op, int64_t delta)
{
	uint64_t z = blocks_zigzag(delta);
	if (z < FORMAT_SLOT_ESCAPE) {
		*p++ = (uint8_t)(op << FORMAT_OP_SHIFT | z);
		return p;
	}
	*p++ = (uint8_t)(op << FORMAT_OP_SHIFT | FORMAT_SLOT_ESCAPE);
	return blocks_uleb_put(p, z);
}

/* IDs an encoding pass mapped (allocation sites, ENTER's functions),
** direct-mapped by key and tag: allocation-heavy code allocates from a few
** sites over and over (binary-trees: from several traces in turn, which a
** memo of the last two missed 85% of the time), call-heavy code enters a
** few functions, and an ID found once in a pass stays valid for the rest
** of it (nothing is forgotten while m's lock is held). id 0: an empty
** entry. */
#define ID_MEMO 256
struct id_memo {
	uint64_t key[ID_MEMO], tag[ID_MEMO], id[ID_MEMO];
};

/* Caller holds m's lock. mapper_ref(m, kind, key, traceno) through the
** memo. */
static inline uint64_t memo_ref(struct mapper *m, struct id_memo *im,
				unsigned kind, uint64_t key, unsigned traceno)
{
	uint64_t tag = (uint64_t)kind << 32 | traceno;
	uint64_t h = (key ^ tag << 3) * 0x9e3779b97f4a7c15u;
	unsigned i = (unsigned)(h >> 56) & (ID_MEMO - 1);
	if (im->id[i] && key == im->key[i] && tag == im->tag[i])
		return im->id[i];
	uint64_t id = mapper_ref(m, kind, (uintptr_t)key, traceno);
	im->key[i] = key;
	im->tag[i] = tag;
	im->id[i] = id;
	return id;
}

/* -- Lost buffers ------------------------------------------------------------ */

/* Any thread, not the global lock's holder. See flush.h. A cold path:
** the records are counted one by one, by the family of their kind. */
void flush_lost(const uint64_t *w, const uint64_t *end)
{
	uint64_t fam[FORMAT_FAM__MAX] = {0};
	unsigned n;
	for (; w < end && (n = buf_rec_words(w)) != 0; w += n)
		fam[buf_rec_fam(w)]++;
	writer_lock();
	writer_count_lost(fam, 1);
	writer_unlock();
}

/* -- The map pass ---------------------------------------------------------------- */

/* Caller holds m's lock. The ID of an ALLOC/REALLOC's site key (x: its
** site word), 0 for a site without one. */
static inline uint64_t site_id(struct mapper *m, struct id_memo *im, uint64_t x,
			       uint64_t key)
{
	unsigned keykind = (unsigned)(x >> 4) & 15;
	if (keykind == MAPPER_NONE)
		return 0;
	return memo_ref(m, im, keykind, key,
			keykind == MAPPER_TRACE ? BUF_SITE_TRACENO(x) : 0);
}

/* What the map pass keeps from one record to the next. */
struct map {
	struct mapper *m;
	struct id_memo im;
	/* The last ENTER's function and its ID: recursion enters the same
	** one again and again. */
	uint64_t last_key, last_id;
	unsigned last_kind;
};

/* Mapper kinds of ENTER's function, by record kind from BUF_ENTER_LUA. */
static const uint8_t enter_kind[] = {MAPPER_PROTO, MAPPER_CFUNC, MAPPER_FFUNC};

/* Map steps, one per record group (BUF_RECS' map column): put IDs in
** place of the pointers of record w of kind. */

/* Caller holds m's lock. EXIT, FREE, GC, ...: nothing to map. */
static inline void map_none(struct map *s, uint64_t *w, unsigned kind)
{
}

/* Caller holds m's lock. ENTER_*: the function's ID. */
static inline void map_enter(struct map *s, uint64_t *w, unsigned kind)
{
	if (w[2] != s->last_key || kind != s->last_kind) {
		s->last_id = memo_ref(
		    s->m, &s->im, enter_kind[kind - BUF_ENTER_LUA], w[2], 0);
		s->last_key = w[2];
		s->last_kind = kind;
	}
	w[2] = s->last_id;
}

/* Caller holds m's lock. ALLOC, REALLOC: the site key's ID. */
static inline void map_site(struct map *s, uint64_t *w, unsigned kind)
{
	w[2] = site_id(s->m, &s->im, BUF_X(w[0]), w[2]);
}

/* Caller holds m's lock. SWITCH: the coroutine's ID. */
static inline void map_co(struct map *s, uint64_t *w, unsigned kind)
{
	w[2] = mapper_ref(s->m, MAPPER_COROUTINE, (uintptr_t)w[2], 0);
}

/* Caller holds m's lock. TRACE_START, TRACE_ABORT: the prototype's. */
static inline void map_proto(struct map *s, uint64_t *w, unsigned kind)
{
	if (w[2])
		w[2] = mapper_ref(s->m, MAPPER_PROTO, (uintptr_t)w[2], 0);
}

/* Caller holds m's lock. TRACE_STOP: the trace's ID. */
static inline void map_trace(struct map *s, uint64_t *w, unsigned kind)
{
	w[2] = mapper_ref(s->m, MAPPER_TRACE, (uintptr_t)w[2],
			  (unsigned)BUF_X(w[0]));
}

/* Caller holds m's lock. ZONE_PUSH, MARK: the text's STRING ID in x. */
static inline void map_text(struct map *s, uint64_t *w, unsigned kind)
{
	unsigned len = (unsigned)(BUF_X(w[0]) & BUF_TEXT_LEN_MASK);
	uint64_t id = mapper_string(s->m, (const char *)(w + BUF_TEXT_AT), len);
	w[0] = BUF_W0(kind, len | id << BUF_TEXT_ID_SHIFT);
}

/* Caller holds m's lock, in a pass. Map the record at w by its kind's
** step (BUF_RECS); its words, 0 for a record of no kind. */
static inline unsigned map_one(struct map *s, uint64_t *w)
{
	switch (BUF_KIND(w[0])) {
#define MAP_CASE(kind, words, text, map, enc, fam)                             \
	case BUF_##kind: {                                                     \
		unsigned n = text ? buf_rec_words(w) : words;                  \
		map_##map(s, w, BUF_##kind);                                   \
		return n;                                                      \
	}
		BUF_RECS(MAP_CASE)
#undef MAP_CASE
	}
	UTIL_DEBUG_ASSERT(!"a record of no kind");
	return 0;
}

/* Caller holds m's lock, in a pass. Put IDs in place of the pointers of
** the records [w, end) (buf.h, "Mapped records"). */
static void map_events(struct mapper *m, uint64_t *w, const uint64_t *end)
{
	struct map s;
	s.m = m;
	s.last_key = s.last_id = 0;
	s.last_kind = 0;
	memset(s.im.id, 0, sizeof s.im.id);
	while (w < end) {
		unsigned kind = BUF_KIND(w[0]), n;
		/* The commonest records first, a branch each, as encode_events
		** does; EXIT and FREE name nothing. */
		if (kind == BUF_EXIT) {
			w += BUF_EXIT_WORDS;
		} else if (kind == BUF_FREE) {
			w += BUF_FREE_WORDS;
		} else if (kind - BUF_ENTER_LUA <=
			   BUF_ENTER_FF - BUF_ENTER_LUA) {
			map_enter(&s, w, kind);
			w += BUF_ENTER_LUA_WORDS;
		} else if (kind == BUF_ALLOC) {
			map_site(&s, w, kind);
			w += BUF_ALLOC_WORDS;
		} else if ((n = map_one(&s, w)) != 0) {
			w += n;
		} else {
			return;
		}
	}
}

/* Caller holds m's lock. See flush.h. */
int flush_map(struct mapper *m, uint64_t *w, const uint64_t *end,
	      struct wbuf *out)
{
	mapper_assert_held(m);
	mapper_begin(m, out);
	map_events(m, w, end);
	int r = mapper_end(m);
	if (r < 0)
		flush_lost(w, end);
	return r;
}

/* -- The encode pass ---------------------------------------------------------------- */

/* What the encode pass keeps from one record to the next: the decoder's
** state (doc/format.txt, "Decoder state"), and where the room reserved
** for it ends. */
struct enc {
	int64_t slot;
	uint64_t addr;
	/* Version 12 guesses: where the next ALLOC's block starts (just past
	** the last one's chunk), and the last FREE's address (the sweep frees
	** blocks from the newest down). */
	uint64_t anext, fprev;
	uint8_t *lim; /* end of the room reserved in fe->scratch */
	struct flush_enc *fe;
	struct mapper *m;
	const uint64_t *end; /* end of the records */
};

/* Any thread. The op byte of a VM event vm (FORMAT_VM_*). */
static inline uint8_t *put_vm(uint8_t *p, unsigned vm)
{
	*p++ = (uint8_t)(FORMAT_OP_VM << FORMAT_OP_SHIFT | vm);
	return p;
}

/* Any thread. Site of an ALLOC/REALLOC: kind in the op byte (with flag:
** FORMAT_ALLOC_NODT for an ALLOC without dt, else 0), then ID and line. */
static inline uint8_t *put_site(uint8_t *p, unsigned op, unsigned flag,
				uint64_t x, uint64_t id)
{
	*p++ = (uint8_t)(op << FORMAT_OP_SHIFT | (x & 15) | flag);
	p = blocks_uleb_put(p, id);
	return blocks_uleb_put(p, BUF_SITE_LINE(x));
}

/* Not m's lock holder. A trace abort's reason and message (a fast
** function's name, under m's lock). */
static uint8_t *put_abort(struct mapper *m, uint8_t *p, const uint64_t *w)
{
	char msg[FLUSH_ABORT_MSG];
	unsigned reason = (unsigned)(w[3] >> 32);
	int64_t info = (int64_t)w[4];
	char ffb[128];
	const char *ff = NULL;
	if (info > 0 && info < 256) {
		mapper_lock(m);
		ff = names_ffname(&m->names, (unsigned)info, ffb, sizeof ffb);
		mapper_unlock(m);
	}
	jitev_message(reason, info, ff, msg, sizeof msg);
	p = blocks_uleb_put(p, reason);
	return blocks_str_put(p, msg, strlen(msg));
}

/* Encode steps, one per record group (BUF_RECS' enc column): record w
** of kind at p, then its dt; the end, NULL when out of memory. */

/* Owner of e->fe. FREE (dt only when not 0). */
static inline uint8_t *enc_free(struct enc *e, uint8_t *p, const uint64_t *w,
				uint64_t dt, unsigned kind)
{
	uint64_t x = BUF_X(w[0]);
	*p++ = (uint8_t)(FORMAT_OP_FREE << FORMAT_OP_SHIFT |
			 (dt ? 0 : FORMAT_FREE_NODT));
	p = blocks_uleb_put(p, x);
	p = blocks_sleb_put(p, (int64_t)(w[2] - (e->fprev - format_chunk(x))));
	e->addr = e->fprev = w[2];
	return dt ? blocks_uleb_put(p, dt) : p; /* dt only when not 0 */
}

/* Owner of e->fe. ALLOC (dt only when not 0). */
static inline uint8_t *enc_alloc(struct enc *e, uint8_t *p, const uint64_t *w,
				 uint64_t dt, unsigned kind)
{
	p = put_site(p, FORMAT_OP_ALLOC, dt ? 0 : FORMAT_ALLOC_NODT,
		     BUF_X(w[0]), w[2]);
	p = blocks_uleb_put(p, w[4]);
	p = blocks_sleb_put(p, (int64_t)(w[3] - e->anext));
	e->addr = w[3];
	e->anext = e->addr + format_chunk(w[4]);
	return dt ? blocks_uleb_put(p, dt) : p; /* dt only when not 0 */
}

/* Owner of e->fe. EXIT. */
static inline uint8_t *enc_exit(struct enc *e, uint8_t *p, const uint64_t *w,
				uint64_t dt, unsigned kind)
{
	int64_t x = (int64_t)BUF_X(w[0]);
	p = put_slot(p, FORMAT_OP_EXIT, x - e->slot);
	e->slot = x;
	return blocks_uleb_put(p, dt);
}

/* Owner of e->fe. ENTER_*. */
static inline uint8_t *enc_enter(struct enc *e, uint8_t *p, const uint64_t *w,
				 uint64_t dt, unsigned kind)
{
	int64_t x = (int64_t)BUF_X(w[0]);
	p = put_slot(p, FORMAT_OP_ENTER, x - e->slot);
	e->slot = x;
	p = blocks_uleb_put(p, w[2]);
	return blocks_uleb_put(p, dt);
}

/* Owner of e->fe. REALLOC. */
static inline uint8_t *enc_realloc(struct enc *e, uint8_t *p, const uint64_t *w,
				   uint64_t dt, unsigned kind)
{
	p = put_site(p, FORMAT_OP_REALLOC, 0, BUF_X(w[0]), w[2]);
	p = blocks_sleb_put(p, (int64_t)(w[3] - e->addr));
	p = blocks_uleb_put(p, w[4]);
	p = blocks_sleb_put(p, (int64_t)(w[5] - w[3]));
	p = blocks_uleb_put(p, w[6]);
	e->addr = w[5];
	return blocks_uleb_put(p, dt);
}

/* Owner of e->fe. GC. */
static inline uint8_t *enc_gc(struct enc *e, uint8_t *p, const uint64_t *w,
			      uint64_t dt, unsigned kind)
{
	*p++ = (uint8_t)(FORMAT_OP_GC << FORMAT_OP_SHIFT | (BUF_X(w[0]) & 31));
	p = blocks_uleb_put(p, w[2]);
	return blocks_uleb_put(p, dt);
}

/* Owner of e->fe. SWITCH. */
static inline uint8_t *enc_switch(struct enc *e, uint8_t *p, const uint64_t *w,
				  uint64_t dt, unsigned kind)
{
	*p++ = FORMAT_OP_SWITCH << FORMAT_OP_SHIFT;
	p = blocks_uleb_put(p, w[2]);
	return blocks_uleb_put(p, dt);
}

/* Owner of e->fe. ATTACH, DETACH. */
static inline uint8_t *enc_vm(struct enc *e, uint8_t *p, const uint64_t *w,
			      uint64_t dt, unsigned kind)
{
	p = put_vm(p, kind == BUF_DETACH ? FORMAT_VM_DETACH : FORMAT_VM_ATTACH);
	p = blocks_uleb_put(p, w[2]);
	return blocks_uleb_put(p, dt);
}

/* Owner of e->fe. TRACE_START. */
static inline uint8_t *enc_trace_start(struct enc *e, uint8_t *p,
				       const uint64_t *w, uint64_t dt,
				       unsigned kind)
{
	p = put_vm(p, FORMAT_VM_TRACE_START);
	p = blocks_uleb_put(p, BUF_X(w[0]));
	p = blocks_uleb_put(p, w[2]);
	p = blocks_uleb_put(p, (uint32_t)w[3]);
	return blocks_uleb_put(p, dt);
}

/* Owner of e->fe, not m's lock holder. TRACE_ABORT: its message may
** outgrow the per-word room, so room is made for it and for the rest of
** the records. */
static inline uint8_t *enc_trace_abort(struct enc *e, uint8_t *p,
				       const uint64_t *w, uint64_t dt,
				       unsigned kind)
{
	struct wbuf *b = &e->fe->scratch;
	size_t room = (size_t)(e->end - w) * FLUSH_ENC_PER_WORD +
		      FLUSH_ABORT_EXTRA + FLUSH_ENC_SLACK;
	b->len = (size_t)(p - b->p);
	if (!(p = wbuf_room(b, room)))
		return NULL;
	e->lim = p + room;
	p = put_vm(p, FORMAT_VM_TRACE_ABORT);
	p = blocks_uleb_put(p, BUF_X(w[0]));
	p = blocks_uleb_put(p, w[2]);
	p = blocks_uleb_put(p, (uint32_t)w[3]);
	p = put_abort(e->m, p, w);
	return blocks_uleb_put(p, dt);
}

/* Owner of e->fe. TRACE_STOP. */
static inline uint8_t *enc_trace_stop(struct enc *e, uint8_t *p,
				      const uint64_t *w, uint64_t dt,
				      unsigned kind)
{
	p = put_vm(p, FORMAT_VM_TRACE_STOP);
	p = blocks_uleb_put(p, w[2]);
	return blocks_uleb_put(p, dt);
}

/* Owner of e->fe. TRACE_FLUSH. */
static inline uint8_t *enc_trace_flush(struct enc *e, uint8_t *p,
				       const uint64_t *w, uint64_t dt,
				       unsigned kind)
{
	p = put_vm(p, FORMAT_VM_TRACE_FLUSH);
	return blocks_uleb_put(p, dt);
}

/* Owner of e->fe. ZONE_PUSH, MARK. */
static inline uint8_t *enc_text(struct enc *e, uint8_t *p, const uint64_t *w,
				uint64_t dt, unsigned kind)
{
	p = put_vm(p, kind == BUF_MARK ? FORMAT_VM_MARK : FORMAT_VM_ZONE_PUSH);
	p = blocks_uleb_put(p, BUF_X(w[0]) >> BUF_TEXT_ID_SHIFT);
	return blocks_uleb_put(p, dt);
}

/* Owner of e->fe. ZONE_POP. */
static inline uint8_t *enc_zone_pop(struct enc *e, uint8_t *p,
				    const uint64_t *w, uint64_t dt,
				    unsigned kind)
{
	p = put_vm(p, FORMAT_VM_ZONE_POP);
	return blocks_uleb_put(p, dt);
}

/* Owner of e->fe. Encode the record at *wp by its kind's step (BUF_RECS)
** at p, then step *wp past it; the end, NULL when out of memory or for a
** record of no kind. */
static inline uint8_t *encode_one(struct enc *e, uint8_t *p,
				  const uint64_t **wp, uint64_t dt)
{
	const uint64_t *w = *wp;
	switch (BUF_KIND(w[0])) {
#define ENC_CASE(kind, words, text, map, enc, fam)                             \
	case BUF_##kind:                                                       \
		*wp = w + (text ? buf_rec_words(w) : words);                   \
		return enc_##enc(e, p, w, dt, BUF_##kind);
		BUF_RECS(ENC_CASE)
#undef ENC_CASE
	}
	UTIL_DEBUG_ASSERT(!"a record of no kind");
	return NULL;
}

/* Owner of fe. Encode the mapped events of [w, end) at p in fe->scratch,
** which has room for FLUSH_ENC_PER_WORD bytes a word left (plus
** FLUSH_ENC_SLACK): their count in *countp, the first timestamp in *base;
** 0 or -ENOMEM. */
static int encode_events(struct flush_enc *fe, struct mapper *m,
			 const uint64_t *w, const uint64_t *end, uint64_t *base,
			 uint8_t *p, uint64_t *countp)
{
	struct enc e = {.fe = fe, .m = m, .end = end};
	uint64_t count = 0, prev_t;

	e.lim = p + (size_t)(end - w) * FLUSH_ENC_PER_WORD + FLUSH_ENC_SLACK;
	*base = prev_t = w[1] >> CLOCK_TS_SHIFT;
	if (*base < fe->t_prev)
		*base = prev_t = fe->t_prev; /* a counter that went back */
	for (; w < end; count++) {
		uint64_t t = w[1] >> CLOCK_TS_SHIFT, dt = 0;
		unsigned kind = BUF_KIND(w[0]);
		if (t > prev_t)
			dt = t - prev_t, prev_t = t;
		/* The commonest records first, a branch each: a jump through
		** the table for every record made the encoder 1.5 to 2 times
		** slower (a call and allocation mix, 2026-11). */
		if (kind == BUF_FREE) {
			p = enc_free(&e, p, w, dt, kind);
			w += BUF_FREE_WORDS;
		} else if (kind == BUF_ALLOC) {
			p = enc_alloc(&e, p, w, dt, kind);
			w += BUF_ALLOC_WORDS;
		} else if (kind == BUF_EXIT) {
			p = enc_exit(&e, p, w, dt, kind);
			w += BUF_EXIT_WORDS;
		} else if (kind - BUF_ENTER_LUA <=
			   BUF_ENTER_FF - BUF_ENTER_LUA) {
			p = enc_enter(&e, p, w, dt, kind);
			w += BUF_ENTER_LUA_WORDS;
		} else if (!(p = encode_one(&e, p, &w, dt))) {
			return -ENOMEM;
		}
		UTIL_DEBUG_ASSERT(p <= e.lim);
	}
	fe->t_prev = prev_t;
	fe->scratch.len = (size_t)(p - fe->scratch.p);
	*countp = count;
	return 0;
}

/* Room before the events in fe->scratch for the EVENTS block's header and
** its payload's head: the block is framed in place. */
#define EVENTS_HEAD (FORMAT_HEADER_LEN + WRITER_HEAD_MAX)

/* Owner of fe, not m's lock holder. See flush.h. The EVENTS block is
** framed in place in fe->scratch (no copy: an allocation-heavy program's
** log is hundreds of MB). */
int flush_encode(struct flush_enc *fe, struct mapper *m, const uint64_t *w,
		 const uint64_t *end, const struct writer_clock *c,
		 uint64_t *nevents)
{
	size_t words = (size_t)(end - w);
	uint64_t base, count, t_prev = fe->t_prev;

	fe->block = NULL;
	fe->block_len = 0;
	if (words == 0)
		return -EINVAL;
	fe->scratch.len = 0;
	uint8_t *p =
	    wbuf_room(&fe->scratch, EVENTS_HEAD + words * FLUSH_ENC_PER_WORD +
					FLUSH_ENC_SLACK);
	if (!p) {
		flush_lost(w, end);
		return -ENOMEM;
	}
	fe->scratch.len = EVENTS_HEAD;
	if (encode_events(fe, m, w, end, &base, p + EVENTS_HEAD, &count) < 0) {
		fe->t_prev = t_prev;
		flush_lost(w, end);
		return -ENOMEM;
	}

	/* m->vm_id: set at attach, never again */
	uint8_t head[WRITER_HEAD_MAX];
	size_t hl =
	    (size_t)(writer_head_put(head, m->vm_id, count, base, c) - head);
	uint8_t *blk = fe->scratch.p + EVENTS_HEAD - hl - FORMAT_HEADER_LEN;
	memcpy(blk + FORMAT_HEADER_LEN, head, hl);
	size_t len = (size_t)(fe->scratch.p + fe->scratch.len - blk);
	blocks_header_pack(blk, FORMAT_KIND_EVENTS, blk + FORMAT_HEADER_LEN,
			   (uint32_t)(len - FORMAT_HEADER_LEN));
	fe->block = blk;
	fe->block_len = len;
	*nevents = count;
	return 0;
}

/* Owner only. Free the encoder's memory. */
void flush_enc_free(struct flush_enc *fe)
{
	wbuf_free(&fe->scratch);
}
