/*
** ljlog flush queue: the writer thread (see flushq.h). One queue for the
** process, first in first out; the queue's lock guards it, each VM's free
** list and count of buffers handed over, and the thread's state. The
** writer thread takes no lock while it encodes, then the global lock to
** write (and the VM's mapper for a trace abort's message): a VM thread
** never waits for the queue while it holds either.
*/
#define _GNU_SOURCE /* secure_getenv */
#include "logger/flushq.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "stat/clock.h"
#include "util/util.h"

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER; /* a buffer queued */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER; /* one written */
static struct flushq_buf *head, **tailp = &head;
static int running;	  /* the writer thread runs in this process */
static int failed;	  /* it could not be started: VMs write themselves */
static int busy;	  /* it is writing a buffer it took */
static int holding;	  /* fork() in progress: nothing is handed over */
static unsigned nvms;	  /* VMs set up and not freed: the thread ends at 0 */
static unsigned delay_us; /* test knob: LJLOG_TEST_WRITER_DELAY_US */

/* The owner of q->fe (see flushq.h). Encode b's records and write their
** EVENTS block. */
static void write_buf(struct flushq_vm *q, struct flushq_buf *b)
{
	uint64_t n = 0;
	if (flush_encode(&q->fe, q->map, b->words, b->end, &b->c, &n) < 0)
		return; /* out of memory: the events are lost (and counted:
			** END's events_dropped), the log sound */
	writer_lock();
	if (writer_is_open())
		writer_write_bytes(q->fe.block, q->fe.block_len, 1, n);
	writer_unlock();
}

/* The writer thread. Take the queue's buffers in turn, write them, give
** each back to its VM; end when no VM is left (the next one's first
** hand-over starts another). */
static void *writer_main(void *arg)
{
	(void)arg;
	util_thread_begin();
	pthread_mutex_lock(&qlock);
	for (;;) {
		while (!head && nvms)
			pthread_cond_wait(&work, &qlock);
		if (!head)
			break;
		struct flushq_buf *b = head;
		if (!(head = b->next))
			tailp = &head;
		busy = 1;
		pthread_mutex_unlock(&qlock);
		if (UTIL_UNLIKELY(delay_us)) {
			struct timespec ts = {0, (long)delay_us * 1000};
			nanosleep(&ts, NULL);
		}
		write_buf(b->q, b);
		pthread_mutex_lock(&qlock);
		busy = 0;
		b->q->queued--;
		b->next = b->q->free;
		b->q->free = b;
		pthread_cond_broadcast(&done);
	}
	running = 0;
	pthread_mutex_unlock(&qlock);
	return NULL;
}

/* Caller holds qlock. Start the writer thread unless it runs (or could
** not be started); 0 or -errno. */
static int start_locked(void)
{
	if (running)
		return 0;
	if (failed)
		return -EAGAIN;
	const char *e = secure_getenv("LJLOG_TEST_WRITER_DELAY_US");
	delay_us = e ? (unsigned)strtoul(e, NULL, 10) % 1000000u : 0;
	int r = util_thread_start(writer_main);
	if (r < 0) {
		failed = 1;
		return r;
	}
	running = 1;
	return 0;
}

/* VM thread only (attach). See flushq.h. */
uint64_t *flushq_init(struct flushq_vm *q, struct mapper *map, size_t bytes,
		      int sync)
{
	q->map = map;
	q->bytes = bytes;
	q->sync = sync;
	for (unsigned i = 0; i < FLUSHQ_DEPTH; i++)
		q->bufs[i].q = q;
	if (!(q->bufs[0].words = malloc(bytes)))
		return NULL;
	q->nbufs = 1;
	q->cur = &q->bufs[0];
	pthread_mutex_lock(&qlock);
	nvms++;
	pthread_mutex_unlock(&qlock);
	return q->cur->words;
}

/* VM thread only, no lock held. A buffer to fill: a written one, else a
** new one while fewer than FLUSHQ_DEPTH, else the first one written. */
static struct flushq_buf *next_buf(struct flushq_vm *q)
{
	struct flushq_buf *b;
	pthread_mutex_lock(&qlock);
	if ((b = q->free) != NULL) {
		q->free = b->next;
		pthread_mutex_unlock(&qlock);
		return b;
	}
	pthread_mutex_unlock(&qlock);
	if (q->nbufs < FLUSHQ_DEPTH &&
	    (q->bufs[q->nbufs].words = malloc(q->bytes)) != NULL)
		return &q->bufs[q->nbufs++];
	uint64_t t0 = clock_mono_ns();
	pthread_mutex_lock(&qlock);
	while (!(b = q->free))
		pthread_cond_wait(&done, &qlock);
	q->free = b->next;
	pthread_mutex_unlock(&qlock);
	uint64_t waited = clock_mono_ns() - t0;
	writer_lock();
	writer_count_waits(1, waited);
	writer_unlock();
	return b;
}

/* VM thread only, no lock held. See flushq.h. */
uint64_t *flushq_submit(struct flushq_vm *q, const uint64_t *end,
			const struct writer_clock *c)
{
	struct flushq_buf *b = q->cur;
	b->end = end;
	b->c = *c;
	pthread_mutex_lock(&qlock);
	while (holding)
		pthread_cond_wait(&done, &qlock);
	/* The VM's own thread writes it at once (none of the VM's buffers
	** queued: its order is kept) when asked to; when it holds few
	** events, under FLUSHQ_MIN_WORDS and a quarter of the buffer
	** (encoding them costs less than waking the writer and moving the
	** buffer to its core: a GC cycle's flush before the sweep); when
	** the writer is busy with other VMs' buffers (one writer is never
	** what several busy VMs wait for); and when no thread can be had. */
	size_t words = (size_t)(end - b->words), cap = q->bytes / 8 / 4;
	if (q->sync ||
	    (!q->queued &&
	     (words < (cap < FLUSHQ_MIN_WORDS ? cap : FLUSHQ_MIN_WORDS) ||
	      head || busy)) ||
	    start_locked() < 0) {
		pthread_mutex_unlock(&qlock);
		write_buf(q, b);
		return b->words;
	}
	b->next = NULL;
	*tailp = b;
	tailp = &b->next;
	q->queued++;
	pthread_cond_signal(&work);
	pthread_mutex_unlock(&qlock);
	q->cur = next_buf(q);
	return q->cur->words;
}

/* VM thread only, no lock held. See flushq.h. */
void flushq_drain(struct flushq_vm *q)
{
	pthread_mutex_lock(&qlock);
	while (q->queued)
		pthread_cond_wait(&done, &qlock);
	pthread_mutex_unlock(&qlock);
}

/* Any thread, no lock held. See flushq.h. */
void flushq_drain_all(void)
{
	pthread_mutex_lock(&qlock);
	while (head || busy)
		pthread_cond_wait(&done, &qlock);
	pthread_mutex_unlock(&qlock);
}

/* VM thread only, after flushq_drain. See flushq.h. */
void flushq_free(struct flushq_vm *q)
{
	if (q->nbufs) { /* set up: one VM less */
		pthread_mutex_lock(&qlock);
		if (--nvms == 0)
			pthread_cond_signal(&work);
		pthread_mutex_unlock(&qlock);
	}
	for (unsigned i = 0; i < FLUSHQ_DEPTH; i++) {
		free(q->bufs[i].words);
		q->bufs[i].words = NULL;
	}
	q->nbufs = 0;
	q->cur = q->free = NULL;
	flush_enc_free(&q->fe);
}

/* The forking thread (fork's prepare handler). See flushq.h. */
void flushq_fork_prepare(void)
{
	pthread_mutex_lock(&qlock);
	holding = 1;
	while (head || busy)
		pthread_cond_wait(&done, &qlock);
}

/* The forking thread (fork's parent handler). See flushq.h. */
void flushq_fork_parent(void)
{
	holding = 0;
	pthread_cond_broadcast(&done);
	pthread_mutex_unlock(&qlock);
}

/* Child side of fork(), single-threaded. See flushq.h. Nothing was queued
** (the prepare handler waited), the thread is gone; the queue's lock,
** which this thread took in the prepare handler, is let go (the
** conditions' waiters are gone: made anew). Only the kept VMs are set up
** now: the writer thread ends when they are freed. */
void flushq_fork_child(unsigned kept)
{
	nvms = kept;
	pthread_cond_init(&work, NULL);
	pthread_cond_init(&done, NULL);
	head = NULL;
	tailp = &head;
	running = failed = busy = holding = 0;
	pthread_mutex_unlock(&qlock);
}
