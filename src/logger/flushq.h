/*
** ljlog flush queue: the writer thread. A VM thread maps its buffer
** (flush_map, under the mapper) and writes the MAPPING block itself; it then
** hands the mapped buffer to this queue and goes on with a fresh one. One
** thread per process encodes each handed buffer into its EVENTS block
** (flush_encode) and writes it, in the order handed over: each VM's blocks
** stay in order, and a MAPPING is out before the EVENTS that use it.
** Memory is bounded: a VM has at most FLUSHQ_DEPTH buffers; when all are
** handed over, its thread waits for the writer, and the waits are counted
** (END flush_waits). A crash loses the buffers still queued.
*/
#ifndef LJLOG_LOGGER_FLUSHQ_H
#define LJLOG_LOGGER_FLUSHQ_H

#include <stddef.h>
#include <stdint.h>

#include "blocks/writer.h"
#include "logger/flush.h"
#include "maps/mapper.h"

/* Buffers a VM may have: the one it fills and those handed over. */
#define FLUSHQ_DEPTH 4

/* Words below which (and below a quarter of the buffer) a VM's thread
** encodes and writes its buffer itself: waking the writer and moving the
** buffer to its core costs about as much as encoding 32 KiB of records
** (bench/strings.lua with gc, a flush of a few events at each of 700 GC
** cycles: 1.148x CPU handed over, 1.030x written in place). */
#define FLUSHQ_MIN_WORDS 4096

/* One buffer and, once handed over, the mapped records it holds. */
struct flushq_buf {
	uint64_t *words;	 /* the buffer, NULL until first needed */
	const uint64_t *end;	 /* handed over: records [words, end) */
	struct writer_clock c;	 /* handed over: the flush's CLOCK */
	struct flushq_buf *next; /* in the queue, or in the VM's free list */
	struct flushq_vm *q;	 /* its VM's */
};

/* A VM's side of the queue. Fields marked (queue) are under the queue's
** lock; fe is the writer thread's while buffers are queued, else the VM
** thread's. */
struct flushq_vm {
	struct flush_enc fe;	/* the encode pass's state */
	struct mapper *map;	/* for the encode pass (abort messages) */
	size_t bytes;		/* each buffer's size */
	int sync;		/* encode and write on the VM thread */
	unsigned nbufs;		/* buffers allocated (VM thread) */
	struct flushq_buf *cur; /* the one being filled (VM thread) */
	struct flushq_buf bufs[FLUSHQ_DEPTH];
	struct flushq_buf *free; /* written, to be filled again (queue) */
	unsigned queued;	 /* handed over, not yet written (queue) */
};

/* VM thread only (attach). Set up q for map's VM with buffers of bytes
** bytes (sync: no writer thread for this VM); the first buffer, or NULL
** when out of memory. */
uint64_t *flushq_init(struct flushq_vm *q, struct mapper *map, size_t bytes,
		      int sync);

/* VM thread only, no lock held. Hand over the mapped records [buffer, end)
** of the buffer being filled, whose MAPPING is out, with the flush's CLOCK
** c; the buffer to fill next. Waits while all the VM's buffers are handed
** over. The same buffer when this thread wrote it at once, none of the
** VM's being queued: sync, few words (FLUSHQ_MIN_WORDS), the writer
** busy with other VMs' buffers, or no writer thread to be had. */
uint64_t *flushq_submit(struct flushq_vm *q, const uint64_t *end,
			const struct writer_clock *c);

/* VM thread only, no lock held. Wait until every buffer q handed over is
** written: what the VM writes next comes after its events. */
void flushq_drain(struct flushq_vm *q);

/* Any thread, no lock held. Wait until the writer thread has written
** every buffer handed over (before the END). */
void flushq_drain_all(void);

/* VM thread only, after flushq_drain (q's buffers are its own again).
** Free q's buffers and encoder. */
void flushq_free(struct flushq_vm *q);

/* fork() handlers. Prepare (the forking thread): wait until the writer
** thread is idle and hold it (and every VM's hand-over) so. Parent: let
** go. Child (single-threaded): no writer thread; a VM's next hand-over
** starts one. kept: the VMs set up that live on in the child (the
** forking thread's; the other threads' are gone): the count the thread
** waits on to end. */
void flushq_fork_prepare(void);
void flushq_fork_parent(void);
void flushq_fork_child(unsigned kept);

#endif
