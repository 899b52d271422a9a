/*
** ljlog reader library, layer 1: the block reader.
** Sequential, buffered, skips payloads by length, follows a growing file.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#ifndef LJLOG_READER_READER_H
#define LJLOG_READER_READER_H

#include <stddef.h>
#include <stdint.h>

#include "blocks/blocks.h"

/*
** Return values, shared by the reader library (0/-errno):
**   reader_next   1 a block, 0 the END block was read and the file ends there,
**                 -ENODATA truncated (the file ends inside a block or without
**                 an END block; everything before reader_valid_end() is valid),
**                 -EBADMSG corrupt, other -errno an I/O error.
** Messages name the byte offset: "block 7 (EVENTS) at offset 12345: ...".
*/

#define READER_FOLLOW		 0x1u /* wait for a growing file instead of truncating */

#define READER_DEFAULT_READAHEAD (1u << 20)
#define READER_DEFAULT_POLL_MS	 50u
#define READER_ERR_MAX		 320

struct reader;

/* One block, as returned by reader_next. */
struct reader_block {
	uint64_t offset;	/* file offset of the block header */
	uint64_t index;		/* block number, 0 for the INTRO block */
	struct blocks_header h; /* kind, flags, length, payload checksum */
	const uint8_t
	    *payload; /* set by reader_payload; valid until the next call */
};

/* Follow mode: called each time the reader waits at the end of the file;
** return 0 to keep waiting, < 0 to stop (the log is then truncated). */
typedef int (*reader_wait_fn)(void *ud, uint64_t file_size);

/* Open path for reading; 0 or -errno,
** with a message in err. flags: READER_FOLLOW. */
int reader_open(struct reader **out, const char *path, unsigned flags,
		char *err, size_t errlen);

/* Close and free (NULL is fine). */
void reader_close(struct reader *r);

/* Follow mode: callback polled at the tail, and the poll period. */
void reader_set_wait(struct reader *r, reader_wait_fn fn, void *ud,
		     unsigned poll_ms);

/* Bytes read ahead per read(2) (at least a block header). */
void reader_set_readahead(struct reader *r, size_t bytes);

/* Read and verify the next block header (not its payload: a
** caller that does not call reader_payload skips it unread). See above. */
int reader_next(struct reader *r, struct reader_block *b);

/* Read the payload of the block reader_next returned and verify
** its checksum; 0, -ENODATA (truncated), -EBADMSG (corrupt) or -errno. */
int reader_payload(struct reader *r, struct reader_block *b);

/* The message of the last error ("" if none). */
const char *reader_error(const struct reader *r);

/* Offset just past the last block known good (header verified,
** payload verified or skipped): where the valid part of the file ends. */
uint64_t reader_valid_end(const struct reader *r);

/* Blocks returned so far. */
uint64_t reader_blocks(const struct reader *r);

/* Bytes read from the file so far (for tests and benchmarks). */
uint64_t reader_bytes_read(const struct reader *r);

/* 1 once the END block has been returned. */
int reader_seen_end(const struct reader *r);

#endif
