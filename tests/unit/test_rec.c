/*
** Unit tests: the raw record table (src/logger/buf.h, BUF_RECS). Each
** kind's writer (buf_put_*) writes the words the table says and no more,
** the encoder (src/logger/flush.c) consumes exactly those, its worst case
** fits the room it reserves (flush.h), and a record past the buffer's end
** is caught (built with LJLOG_DEBUG, as debug builds are).
*/
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks/writer.h"
#include "logger/buf.h"
#include "logger/flush.h"
#include "maps/mapper.h"
#include "stat/clock.h"

/* Words of each kind, by kind, from the table. */
static const unsigned table_words[BUF_KINDS] = {
#define WORDS(kind, words, text, map, enc, fam) [BUF_##kind] = words,
    BUF_RECS(WORDS)
#undef WORDS
};

/* 1 for the kinds whose text follows, from the table. */
static const unsigned table_text[BUF_KINDS] = {
#define TEXT(kind, words, text, map, enc, fam) [BUF_##kind] = text,
    BUF_RECS(TEXT)
#undef TEXT
};

#define SENTINEL 0x5a5a5a5a5a5a5a5au
#define ROOM	 64

/* Texts of every length a record may carry (the rest of the bytes 0). */
static const char TEXT_BYTES[BUF_TEXT_LEN_MASK + 1] = "a zone's name";

/* Test thread. Write a record of kind at p with every field v (a text
** of len bytes for a text record) through its writer; its end. */
static uint64_t *put(uint64_t *p, unsigned kind, uint64_t ts, uint64_t v,
		     size_t len)
{
	const void *ptr = (const void *)(uintptr_t)v;
	switch (kind) {
	case BUF_ENTER_LUA:
	case BUF_ENTER_C:
	case BUF_ENTER_FF: return buf_put_enter(p, kind, v, ts, v);
	case BUF_EXIT: return buf_put_exit(p, v, ts);
	case BUF_ALLOC: return buf_put_alloc(p, ts, v, v, v, v);
	case BUF_FREE: return buf_put_free(p, ts, v, v);
	case BUF_REALLOC: return buf_put_realloc(p, ts, v, v, v, v, v, v);
	case BUF_GC: return buf_put_gc(p, ts, (unsigned)v & 31, v);
	case BUF_SWITCH: return buf_put_switch(p, ts, ptr);
	case BUF_ATTACH:
	case BUF_DETACH: return buf_put_vm(p, kind, ts, v);
	case BUF_TRACE_START:
		return buf_put_trace_start(p, ts, (unsigned)v, ptr,
					   (uint32_t)v);
	case BUF_TRACE_STOP: return buf_put_trace_stop(p, ts, (unsigned)v, ptr);
	case BUF_TRACE_ABORT:
		/* info -1: a message without a fast function's name */
		return buf_put_trace_abort(p, ts, (unsigned)v, ptr, (uint32_t)v,
					   (uint32_t)v, -1);
	case BUF_TRACE_FLUSH: return buf_put_trace_flush(p, ts);
	case BUF_ZONE_POP: return buf_put_text(p, kind, ts, NULL, 0);
	case BUF_ZONE_PUSH:
	case BUF_MARK: return buf_put_text(p, kind, ts, TEXT_BYTES, len);
	}
	cr_assert_fail("kind %u has no writer in this test", kind);
	return p;
}

Test(rec, every_kind_writes_the_words_of_the_table)
{
	for (unsigned kind = 1; kind < BUF_KINDS; kind++) {
		for (size_t len = 0; len < sizeof TEXT_BYTES; len++) {
			uint64_t buf[ROOM];
			for (unsigned i = 0; i < ROOM; i++)
				buf[i] = SENTINEL;
			uint64_t *end = put(buf, kind, 1, 7, len);
			size_t n = (size_t)(end - buf);
			size_t want = table_words[kind];
			if (table_text[kind])
				want += BUF_TEXT_WORDS(len);
			cr_assert_eq(n, want, "kind %u (len %zu): %zu words",
				     kind, len, n);
			cr_assert_eq(buf_rec_words(buf), want, "kind %u", kind);
			cr_assert_eq(BUF_KIND(buf[0]), kind);
			for (unsigned i = (unsigned)n; i < ROOM; i++)
				cr_assert_eq(buf[i], SENTINEL,
					     "kind %u wrote word %u", kind, i);
			if (!table_text[kind])
				break; /* one length is enough */
		}
		cr_assert_leq(table_words[kind], BUF_REC_MAX);
	}
}

/* A mapper the encoder may be given: it reads its VM ID only (no trace
** abort here names a fast function). */
static struct mapper *fake_mapper(void)
{
	static struct mapper m;
	m.vm_id = 1;
	return &m;
}

/* Test thread. Encode the n words of w; the EVENTS block's event count,
** its events' bytes in *ev_bytes. */
static uint64_t encode(const uint64_t *w, size_t n, size_t *ev_bytes)
{
	struct flush_enc fe;
	struct writer_clock c = {1, 2, 3};
	uint64_t nev = 0;
	memset(&fe, 0, sizeof fe);
	cr_assert_eq(flush_encode(&fe, fake_mapper(), w, w + n, &c, &nev), 0);
	uint8_t head[WRITER_HEAD_MAX];
	size_t hl =
	    (size_t)(writer_head_put(head, 1, nev, w[1] >> CLOCK_TS_SHIFT, &c) -
		     head);
	*ev_bytes = fe.block_len - FORMAT_HEADER_LEN - hl;
	flush_enc_free(&fe);
	return nev;
}

Test(rec, the_encoder_consumes_the_words_of_the_table)
{
	/* Each kind between two EXITs: a size read wrong would make the
	** encoder take the second EXIT for something else, or miss it. */
	for (unsigned kind = 1; kind < BUF_KINDS; kind++) {
		uint64_t buf[ROOM], *p = buf;
		size_t bytes;
		p = buf_put_exit(p, 3, 16);
		p = put(p, kind, 32, 5, 11);
		p = buf_put_exit(p, 3, 48);
		cr_assert_eq(encode(buf, (size_t)(p - buf), &bytes), 3,
			     "kind %u", kind);
	}
}

Test(rec, the_worst_case_fits_the_room_reserved)
{
	/* Every field at its largest, and the largest dt. */
	for (unsigned kind = 1; kind < BUF_KINDS; kind++) {
		uint64_t buf[ROOM], *p = buf;
		size_t bytes;
		p = buf_put_exit(p, 0, 0);
		uint64_t *rec = p;
		p = put(p, kind, UINT64_MAX, UINT64_MAX, BUF_TEXT_LEN_MASK);
		/* x: a text's length, and the largest ID above it */
		rec[0] |= UINT64_MAX << 8;
		/* Addresses as far as can be from the decoder's guesses. */
		if (kind == BUF_ALLOC || kind == BUF_REALLOC)
			rec[3] = (uint64_t)1 << 63, rec[5] = 0;
		if (kind == BUF_FREE)
			rec[2] = (uint64_t)1 << 63;
		size_t words = (size_t)(p - buf) - BUF_EXIT_WORDS;
		size_t exit_bytes;
		encode(buf, BUF_EXIT_WORDS, &exit_bytes);
		encode(buf, (size_t)(p - buf), &bytes);
		size_t room = words * FLUSH_ENC_PER_WORD;
		if (kind == BUF_TRACE_ABORT)
			room += FLUSH_ABORT_EXTRA;
		if (getenv("TEST_REC_SHOW"))
			printf("kind %u: %zu of %zu bytes\n", kind,
			       bytes - exit_bytes, room);
		cr_assert_leq(bytes - exit_bytes, room,
			      "kind %u: %zu bytes for %zu words", kind,
			      bytes - exit_bytes, words);
	}
}

Test(rec, a_record_at_the_buffers_end_is_kept)
{
	uint64_t buf[8];
	cr_assert_eq(buf_end(buf + 8, buf + 8), buf + 8);
}

Test(rec, a_record_past_the_buffers_end_aborts, .signal = SIGABRT)
{
	/* A buffer of 8 words in 16: the record really lands in memory. */
	uint64_t buf[16];
	uint64_t *p = buf_put_exit(buf + 7, 0, 0);
	buf_end(p, buf + 8);
}
