/*
** ljlog reader library: one decoder per block kind, the rows of the kind
** table in decode.c (the only caller). Each lives in its own file and
** stands on decode_base.h alone (the layering is drawn there).
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_DECODE_KINDS_H
#define LJLOG_READER_DECODE_KINDS_H

#include "decode/decode_base.h"

/* Each decodes the payload under cursor c of block b into d's sink: 0,
** -EBADMSG (corrupt, the message in d->err), -ENOTSUP, -ENOMEM or a
** sink's non-zero return. */

/* decode_intro.c: the first and the last block of a log. */
int dec_intro(struct decode *d, const struct reader_block *b,
	      struct decode_cur *c);
int dec_end(struct decode *d, const struct reader_block *b,
	    struct decode_cur *c);

/* decode_map.c: IDs and what they stand for. */
int dec_mapping(struct decode *d, const struct reader_block *b,
		struct decode_cur *c);

/* decode_events.c: timed events of one VM (hot). */
int dec_events(struct decode *d, const struct reader_block *b,
	       struct decode_cur *c);

/* decode_samples.c: stack samples of one VM (hot). */
int dec_samples(struct decode *d, const struct reader_block *b,
		struct decode_cur *c);

/* decode_heap.c: one heap snapshot's records. */
int dec_heap(struct decode *d, const struct reader_block *b,
	     struct decode_cur *c);

#endif
