/*
** Test-only: a log around blocks the real profiler code made (the mapper,
** the names, the flush, heap snapshots), read by the real decoder. The
** INTRO, the VM record and the END come from logbuild.h.
*/
#ifndef LJLOG_TESTS_UNIT_REALLOG_H
#define LJLOG_TESTS_UNIT_REALLOG_H

#include <stddef.h>
#include <stdint.h>

#include "blocks/writer.h"
#include "decode/decode.h"
#include "logbuild.h"

/* Test thread. Start l: INTRO, then a MAPPING block with VM vm_id's
** record. */
void rl_start(struct lblog *l, uint64_t vm_id);

/* Test thread. Append the framed blocks of b (counted by their headers,
** which must be whole); nevents: the events they hold. */
void rl_add(struct lblog *l, const struct wbuf *b, uint64_t nevents);

/* Test thread. The same for n bytes at p. */
void rl_add_bytes(struct lblog *l, const void *p, size_t n, uint64_t nevents);

/* Test thread. END, then decode l into sink: decode_run's result, its
** message in err. The decoder goes to *keep (the caller frees it) when
** keep is not NULL, for decode_lookup. */
int rl_decode(struct lblog *l, const struct decode_sink *sink,
	      struct decode **keep, char *err, size_t errlen);

/* Test thread. Decode the log in the file path into sink: decode_run's
** result, its message in err. */
int rl_decode_file(const char *path, const struct decode_sink *sink, char *err,
		   size_t errlen);

#endif
