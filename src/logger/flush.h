/*
** ljlog flush: map the buffer's pointers to IDs, encode, write.
*/
#ifndef LJLOG_LOGGER_FLUSH_H
#define LJLOG_LOGGER_FLUSH_H

#include <stdint.h>

#include "blocks/writer.h"
#include "maps/mapper.h"

/* What the encoder keeps from one flush to the next. */
struct flush_enc {
	uint64_t t_prev;      /* last encoded ts: time never goes back */
	struct wbuf scratch;  /* the EVENTS block of one flush, framed there */
	const uint8_t *block; /* after flush_encode: that block, in scratch */
	size_t block_len;
};

/* Caller holds m's lock. Encode the raw buffer records [w, end) (buf.h)
** of m's VM: a MAPPING block for IDs made now (mapper_begin/end) appended
** to out, and the EVENTS block stamped with the CLOCK triple c in
** fe->block (fe->block_len bytes, valid until the next call): written
** after out's blocks. The number of MAPPING blocks appended (0 or 1) with
** *nevents set, or -ENOMEM (out is then as it was, fe->block NULL). Reads
** the VM objects the records point to: call before the GC can free them. */
int flush_encode(struct flush_enc *fe, struct mapper *m, const uint64_t *w,
		 const uint64_t *end, const struct writer_clock *c,
		 struct wbuf *out, uint64_t *nevents);

/* Owner only. Free the encoder's memory. */
void flush_enc_free(struct flush_enc *fe);

#endif
