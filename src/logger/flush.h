/*
** ljlog flush: map the buffer's pointers to IDs (VM thread), then encode
** (writer thread); neither writes: logger.c writes the MAPPING block,
** flushq.c the EVENTS block (on the writer thread, or the VM's when
** synchronous).
*/
#ifndef LJLOG_LOGGER_FLUSH_H
#define LJLOG_LOGGER_FLUSH_H

#include <stdint.h>

#include "blocks/writer.h"
#include "maps/mapper.h"

/* The encoder's room, reserved once for a buffer of n words: n *
** FLUSH_ENC_PER_WORD + FLUSH_ENC_SLACK bytes (a word becomes at most one
** 10-byte uleb; the op byte and escapes fit in the slack), and for a trace
** abort FLUSH_ABORT_EXTRA more (its reason and a message of at most
** FLUSH_ABORT_MSG bytes). Debug builds check that it holds. */
#define FLUSH_ENC_PER_WORD 11
#define FLUSH_ENC_SLACK	   64
#define FLUSH_ABORT_MSG	   160
#define FLUSH_ABORT_EXTRA  (BLOCKS_ULEB_MAX * 2 + FLUSH_ABORT_MSG)

/* What the encoder keeps from one flush to the next. */
struct flush_enc {
	uint64_t t_prev;      /* last encoded ts: time never goes back */
	struct wbuf scratch;  /* the EVENTS block of one flush, framed there */
	const uint8_t *block; /* after flush_encode: that block, in scratch */
	size_t block_len;
};

/* Caller holds m's lock. The map pass: put IDs in place of the pointers
** of the raw buffer records [w, end) (buf.h) of m's VM, the MAPPING block
** for IDs made now (mapper_begin/end) appended to out. The number of
** blocks appended (0 or 1), or -ENOMEM (out is then as it was, and the
** records are to be dropped: IDs in them may be forgotten; they are
** counted lost, flush_lost). Reads the VM objects the records point to:
** call before the GC can free them. Takes the global lock when it fails:
** not its holder. */
int flush_map(struct mapper *m, uint64_t *w, const uint64_t *end,
	      struct wbuf *out);

/* Owner of fe, holding neither m's lock (taken for a trace abort's
** message) nor the global lock (taken when it fails).
** The encode pass: the records [w, end) that flush_map mapped, into an
** EVENTS block stamped with the CLOCK triple c in fe->block (fe->block_len
** bytes, valid until the next call), to be written after the MAPPING
** block of their map pass. 0 with *nevents set, or -ENOMEM (fe->block
** NULL; the records are counted lost, flush_lost). Reads nothing of the
** VM. */
int flush_encode(struct flush_enc *fe, struct mapper *m, const uint64_t *w,
		 const uint64_t *end, const struct writer_clock *c,
		 uint64_t *nevents);

/* Any thread, not the global lock's holder. Count the records [w, end)
** (mapped or not) and their buffer as dropped whole (END events_dropped,
** buffers_dropped and the events by family, doc/format.txt). */
void flush_lost(const uint64_t *w, const uint64_t *end);

/* Owner only. Free the encoder's memory. */
void flush_enc_free(struct flush_enc *fe);

#endif
