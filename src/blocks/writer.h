/*
** ljlog writer: block building and the process's one output file.
** The global lock serialises writers; every batch of blocks is one write(2).
*/
#ifndef LJLOG_BLOCKS_WRITER_H
#define LJLOG_BLOCKS_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "blocks/blocks.h"
#include "util/util.h"

/* Growable byte buffer for building blocks. */
struct wbuf {
	uint8_t *p;
	size_t len;
	size_t cap;
};

/* Owner thread only. Make room for n more bytes; pointer to write at, or
** NULL when out of memory. */
static inline uint8_t *wbuf_room(struct wbuf *b, size_t n)
{
	extern uint8_t *wbuf_grow(struct wbuf * b, size_t n);
	if (UTIL_UNLIKELY(b->len + n > b->cap))
		return wbuf_grow(b, n);
	return b->p + b->len;
}

/* Owner thread only. Free the buffer's memory. */
void wbuf_free(struct wbuf *b);

/* Owner thread only. Start a block: reserves its header; returns the
** block's offset in b, or (size_t)-1 when out of memory. */
size_t writer_block_begin(struct wbuf *b);

/* Owner thread only. Finish the block started at off: packs its header. */
void writer_block_end(struct wbuf *b, size_t off, unsigned kind);

/* A CLOCK triple (doc/format.txt), read by the caller: the writer reads
** no clock itself. */
struct writer_clock {
	uint64_t counter; /* raw counter */
	uint64_t mono_ns; /* CLOCK_MONOTONIC */
	uint64_t real_ns; /* CLOCK_REALTIME */
};

/* Worst-case bytes of a block head (writer_head_put). */
#define WRITER_HEAD_MAX (6 * BLOCKS_ULEB_MAX)

/* Any thread. Put at p (room for WRITER_HEAD_MAX) the head an EVENTS or a
** SAMPLES payload starts with (doc/format.txt): vm, count, base_ts and
** the CLOCK c. Returns the end. */
uint8_t *writer_head_put(uint8_t *p, uint64_t vm, uint64_t count,
			 uint64_t base_ts, const struct writer_clock *c);

/* What the INTRO block says. */
struct writer_intro {
	const char *luajit_version;
	const char *options;
	unsigned counter_kind;	   /* FORMAT_COUNTER_* */
	unsigned ts_shift;	   /* timestamps are counter >> ts_shift */
	uint64_t counter_hz;	   /* counter ticks per second, 0 unknown */
	struct writer_clock clock; /* now */
	/* Caller holds the global lock: reads a CLOCK triple for the END the
	** writer writes itself when a write error stops the log (NULL: zeros). */
	void (*now)(struct writer_clock *c);
};

/* Any thread. Take / release the global lock. */
void writer_lock(void);
void writer_unlock(void);

/* Caller holds the global lock. 1 while an output file is open. */
int writer_is_open(void);

/* Caller holds the global lock. The open file's path ("" when closed). */
const char *writer_path(void);

/* Child side of fork(), single-threaded: the log is the parent's, closed
** here without an END. path: the child's own log, opened at the child's
** first write with an INTRO of its own, then pre's blocks (the VM records
** of the nvms VMs that go on; pre must outlive the writer); NULL: the
** child writes nothing. */
void writer_fork_child(const char *path, const struct wbuf *pre, unsigned nvms);

/* Caller holds the global lock. Open the log (blocks/target.h: fd >= 0 an
** inherited descriptor named by path, else path "|COMMAND" or a file) and
** write magic + INTRO; 0 or -errno with a message in err. */
int writer_open(const char *path, int fd, const struct writer_intro *in,
		char *err, size_t errlen);

/* Caller holds the global lock. Write the blocks in b (nblocks of them,
** holding nevents events) with one write(2). SIGPIPE and SIGXFSZ that the
** write provokes never reach the program. A failure is kept (sticky): the
** file is cut back to its last complete block and closed with an END that
** names the error (best effort), one message goes to stderr, later writes
** are dropped. A file-size limit (RLIMIT_FSIZE) counts as that error just
** before the log would reach it, so the END always fits. 0 or the sticky
** -errno. */
int writer_write(const struct wbuf *b, unsigned nblocks, uint64_t nevents);

/* Caller holds the global lock. writer_write of the n bytes at p. */
int writer_write_bytes(const uint8_t *p, size_t n, unsigned nblocks,
		       uint64_t nevents);

/* Caller holds the global lock. Count n more dropped samples (END). */
void writer_count_dropped(uint64_t n);

/* Caller holds the global lock. Count buffers more buffers of events
** dropped whole (out of memory), fam[f] events of family f
** (FORMAT_FAM_*, fam[0] unused) in them (END events_dropped, version 17). */
void writer_count_lost(const uint64_t *fam, uint64_t buffers);

/* Caller holds the global lock. Count n more waits of a VM thread for the
** writer thread, ns nanoseconds in all (END flush_waits, flush_wait_ns). */
void writer_count_waits(uint64_t n, uint64_t ns);

/* Caller holds the global lock. Count one more VM attached over the run. */
void writer_count_vm(void);

/* Caller holds the global lock. Write the END block (with the CLOCK triple
** c, read now; none when a write error already ended the log) and close.
** 0, or -errno when closing failed (a write failure is reported once, when
** it happens). */
int writer_close(const struct writer_clock *c);

#endif
