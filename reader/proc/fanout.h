/*
** ljlog reader processors: the fan-out sink.
** Holds up to FANOUT_MAX decode sinks and forwards each decoder callback to
** each, in the order they were added, so that a front end plugs in only the
** processors it needs.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_PROC_FANOUT_H
#define LJLOG_READER_PROC_FANOUT_H

#include "decode/decode.h"

#define FANOUT_MAX 8

struct fanout {
	struct decode_sink sinks[FANOUT_MAX];
	unsigned n;
};

/* An empty fan-out. */
void fanout_init(struct fanout *f);

/* Add a sink (copied); later sinks see each callback after the
** earlier ones. 0, or -ENOSPC when FANOUT_MAX sinks are there. */
int fanout_add(struct fanout *f, const struct decode_sink *s);

/* Fill sink so that a decoder feeds every sink of f (f must
** outlive the decoder). A callback goes to each sink that has it until one
** returns non-zero, which is returned; warnings go to every sink. */
void fanout_sink(struct fanout *f, struct decode_sink *sink);

#endif
