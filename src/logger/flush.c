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

/* Worst-case encoded bytes per raw buffer word (a word becomes at most one
** 10-byte uleb; the op byte and escapes fit in the slack). */
#define ENC_PER_WORD 11

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

/* Mapper kinds of ENTER's function, by record kind from BUF_ENTER_LUA. */
static const uint8_t enter_kind[] = {MAPPER_PROTO, MAPPER_CFUNC, MAPPER_FFUNC};

/* Caller holds m's lock, in a pass. Put IDs in place of the pointers of
** the records [w, end) (buf.h, "Mapped records"). */
static void map_events(struct mapper *m, uint64_t *w, const uint64_t *end)
{
	struct id_memo im;
	/* The last ENTER's function and its ID: recursion enters the same
	** one again and again. */
	uint64_t last_key = 0, last_id = 0;
	unsigned last_kind = 0, len;
	memset(im.id, 0, sizeof im.id);
	while (w < end) {
		uint64_t x = BUF_X(w[0]);
		unsigned kind = BUF_KIND(w[0]);
		/* The commonest records first: EXIT and FREE name nothing. */
		if (kind == BUF_EXIT) {
			w += 2; /* buf_words[BUF_EXIT] */
			continue;
		}
		if (kind == BUF_FREE) {
			w += 3; /* buf_words[BUF_FREE] */
			continue;
		}
		if (kind - BUF_ENTER_LUA <= BUF_ENTER_FF - BUF_ENTER_LUA) {
			if (w[2] != last_key || kind != last_kind) {
				last_id = memo_ref(
				    m, &im, enter_kind[kind - BUF_ENTER_LUA],
				    w[2], 0);
				last_key = w[2];
				last_kind = kind;
			}
			w[2] = last_id;
			w += 3; /* buf_words[BUF_ENTER_*] */
			continue;
		}
		if (kind == BUF_ALLOC) {
			w[2] = site_id(m, &im, x, w[2]);
			w += 5; /* buf_words[BUF_ALLOC] */
			continue;
		}
		switch (kind) {
		case BUF_REALLOC: w[2] = site_id(m, &im, x, w[2]); break;
		case BUF_SWITCH:
			w[2] =
			    mapper_ref(m, MAPPER_COROUTINE, (uintptr_t)w[2], 0);
			break;
		case BUF_TRACE_START:
		case BUF_TRACE_ABORT:
			if (w[2])
				w[2] = mapper_ref(m, MAPPER_PROTO,
						  (uintptr_t)w[2], 0);
			break;
		case BUF_TRACE_STOP:
			w[2] = mapper_ref(m, MAPPER_TRACE, (uintptr_t)w[2],
					  (unsigned)x);
			break;
		case BUF_ZONE_PUSH:
		case BUF_MARK:
			len = (unsigned)(x & BUF_TEXT_LEN_MASK);
			w[0] = BUF_W0(
			    kind,
			    len | mapper_string(m, (const char *)(w + 2), len)
				      << BUF_TEXT_ID_SHIFT);
			break;
		}
		w += buf_rec_words(w);
	}
}

/* Caller holds m's lock. See flush.h. */
int flush_map(struct mapper *m, uint64_t *w, const uint64_t *end,
	      struct wbuf *out)
{
	mapper_assert_held(m);
	mapper_begin(m, out);
	map_events(m, w, end);
	return mapper_end(m);
}

/* -- The encode pass ---------------------------------------------------------------- */

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
	char msg[160];
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

/* Bytes an abort's message may add beyond the per-word reservation. */
#define ABORT_EXTRA (BLOCKS_ULEB_MAX * 2 + 160)

/* Owner of fe. Encode the mapped events of [w, end) into fe->scratch,
** which has room for ENC_PER_WORD bytes a word left (plus slack): their
** count in *count, the first timestamp in *base; 0 or -ENOMEM. */
static int encode_events(struct flush_enc *fe, struct mapper *m,
			 const uint64_t *w, const uint64_t *end, uint64_t *base,
			 uint8_t *p, uint64_t *countp)
{
	uint64_t count = 0, prev_t, addr = 0;
	/* Version 12 guesses: where the next ALLOC's block starts (just past
	** the last one's chunk), and the last FREE's address (the sweep frees
	** blocks from the newest down). */
	uint64_t anext = 0, fprev = 0;
	int64_t slot = 0;

	*base = prev_t = w[1] >> CLOCK_TS_SHIFT;
	if (*base < fe->t_prev)
		*base = prev_t = fe->t_prev; /* a counter that went back */
	while (w < end) {
		uint64_t w0 = w[0], x = BUF_X(w0);
		unsigned kind = BUF_KIND(w0);
		uint64_t t = w[1] >> CLOCK_TS_SHIFT, dt = 0;
		if (t > prev_t)
			dt = t - prev_t, prev_t = t;
		/* The commonest records first, then the rest. */
		if (kind == BUF_FREE) {
			*p++ = (uint8_t)(FORMAT_OP_FREE << FORMAT_OP_SHIFT |
					 (dt ? 0 : FORMAT_FREE_NODT));
			p = blocks_uleb_put(p, x);
			p = blocks_sleb_put(
			    p, (int64_t)(w[2] - (fprev - format_chunk(x))));
			addr = fprev = w[2];
			w += 3; /* buf_words[BUF_FREE] */
			goto next_sized;
		}
		if (kind == BUF_ALLOC) {
			p = put_site(p, FORMAT_OP_ALLOC,
				     dt ? 0 : FORMAT_ALLOC_NODT, x, w[2]);
			p = blocks_uleb_put(p, w[4]);
			p = blocks_sleb_put(p, (int64_t)(w[3] - anext));
			addr = w[3];
			anext = addr + format_chunk(w[4]);
			w += 5; /* buf_words[BUF_ALLOC] */
			goto next_sized;
		}
		if (kind == BUF_EXIT) {
			p = put_slot(p, FORMAT_OP_EXIT, (int64_t)x - slot);
			slot = (int64_t)x;
			w += 2; /* buf_words[BUF_EXIT] */
			goto next;
		}
		if (kind - BUF_ENTER_LUA <= BUF_ENTER_FF - BUF_ENTER_LUA) {
			p = put_slot(p, FORMAT_OP_ENTER, (int64_t)x - slot);
			slot = (int64_t)x;
			p = blocks_uleb_put(p, w[2]);
			w += 3; /* buf_words[BUF_ENTER_*] */
			goto next;
		}
		switch (kind) {
		case BUF_REALLOC:
			p = put_site(p, FORMAT_OP_REALLOC, 0, x, w[2]);
			p = blocks_sleb_put(p, (int64_t)(w[3] - addr));
			p = blocks_uleb_put(p, w[4]);
			p = blocks_sleb_put(p, (int64_t)(w[5] - w[3]));
			p = blocks_uleb_put(p, w[6]);
			addr = w[5];
			break;
		case BUF_GC:
			*p++ = (uint8_t)(FORMAT_OP_GC << FORMAT_OP_SHIFT |
					 (x & 31));
			p = blocks_uleb_put(p, w[2]);
			break;
		case BUF_SWITCH:
			*p++ = FORMAT_OP_SWITCH << FORMAT_OP_SHIFT;
			p = blocks_uleb_put(p, w[2]);
			break;
		case BUF_TRACE_ABORT:
			/* Its message may outgrow the per-word room: make
			** room for it and for the rest of the buffer. */
			fe->scratch.len = (size_t)(p - fe->scratch.p);
			p = wbuf_room(&fe->scratch,
				      (size_t)(end - w) * ENC_PER_WORD +
					  ABORT_EXTRA + 64);
			if (!p)
				return -ENOMEM;
			/* fall through */
		case BUF_TRACE_START:
			*p++ = (uint8_t)(FORMAT_OP_VM << FORMAT_OP_SHIFT |
					 (kind == BUF_TRACE_START
					      ? FORMAT_VM_TRACE_START
					      : FORMAT_VM_TRACE_ABORT));
			p = blocks_uleb_put(p, x);
			p = blocks_uleb_put(p, w[2]);
			p = blocks_uleb_put(p, (uint32_t)w[3]);
			if (kind == BUF_TRACE_ABORT)
				p = put_abort(m, p, w);
			break;
		case BUF_TRACE_STOP:
			*p++ = (uint8_t)(FORMAT_OP_VM << FORMAT_OP_SHIFT |
					 FORMAT_VM_TRACE_STOP);
			p = blocks_uleb_put(p, w[2]);
			break;
		case BUF_TRACE_FLUSH:
			*p++ = (uint8_t)(FORMAT_OP_VM << FORMAT_OP_SHIFT |
					 FORMAT_VM_TRACE_FLUSH);
			break;
		case BUF_ZONE_PUSH:
		case BUF_MARK:
			*p++ =
			    (uint8_t)(FORMAT_OP_VM << FORMAT_OP_SHIFT |
				      (kind == BUF_MARK ? FORMAT_VM_MARK
							: FORMAT_VM_ZONE_PUSH));
			p = blocks_uleb_put(p, x >> BUF_TEXT_ID_SHIFT);
			break;
		case BUF_ZONE_POP:
			*p++ = (uint8_t)(FORMAT_OP_VM << FORMAT_OP_SHIFT |
					 FORMAT_VM_ZONE_POP);
			break;
		case BUF_ATTACH:
		case BUF_DETACH:
			*p++ =
			    (uint8_t)(FORMAT_OP_VM << FORMAT_OP_SHIFT |
				      (kind == BUF_DETACH ? FORMAT_VM_DETACH
							  : FORMAT_VM_ATTACH));
			p = blocks_uleb_put(p, w[2]);
			break;
		}
		w += buf_rec_words(w);
	next:
		p = blocks_uleb_put(p, dt);
		count++;
		continue;
	next_sized: /* ALLOC and FREE: dt only when not 0 */
		if (dt)
			p = blocks_uleb_put(p, dt);
		count++;
	}
	fe->t_prev = prev_t;
	fe->scratch.len = (size_t)(p - fe->scratch.p);
	*countp = count;
	return 0;
}

/* Room before the events in fe->scratch for the EVENTS block's header and
** the six ulebs of its payload's head: the block is framed in place. */
#define EVENTS_HEAD (FORMAT_HEADER_LEN + 6 * BLOCKS_ULEB_MAX)

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
	    wbuf_room(&fe->scratch, EVENTS_HEAD + words * ENC_PER_WORD + 64);
	if (!p)
		return -ENOMEM;
	fe->scratch.len = EVENTS_HEAD;
	if (encode_events(fe, m, w, end, &base, p + EVENTS_HEAD, &count) < 0) {
		fe->t_prev = t_prev;
		return -ENOMEM;
	}

	uint8_t head[6 * BLOCKS_ULEB_MAX], *q = head;
	q = blocks_uleb_put(q, m->vm_id); /* set at attach, never again */
	q = blocks_uleb_put(q, count);
	q = blocks_uleb_put(q, base);
	q = blocks_uleb_put(q, c->counter);
	q = blocks_uleb_put(q, c->mono_ns);
	q = blocks_uleb_put(q, c->real_ns);
	size_t hl = (size_t)(q - head);
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
