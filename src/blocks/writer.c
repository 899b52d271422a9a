/*
** ljlog writer: block building and the process's one output file.
*/
#include "blocks/writer.h"

#include "blocks/target.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* -- Byte buffers -------------------------------------------------------------- */

/* Owner thread only. Grow b for n more bytes (cold path of wbuf_room). */
uint8_t *wbuf_grow(struct wbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p)
		return NULL;
	b->p = p;
	b->cap = cap;
	return b->p + b->len;
}

/* Owner thread only. Free the buffer's memory. */
void wbuf_free(struct wbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* Owner thread only. Start a block: reserves its header. */
size_t writer_block_begin(struct wbuf *b)
{
	if (!wbuf_room(b, FORMAT_HEADER_LEN))
		return (size_t)-1;
	size_t off = b->len;
	b->len += FORMAT_HEADER_LEN;
	return off;
}

/* Owner thread only. Finish the block started at off: packs its header. */
void writer_block_end(struct wbuf *b, size_t off, unsigned kind)
{
	uint8_t *hdr = b->p + off;
	size_t len = b->len - off - FORMAT_HEADER_LEN;
	blocks_header_pack(hdr, kind, hdr + FORMAT_HEADER_LEN, (uint32_t)len);
}

/* Any thread. See writer.h. */
uint8_t *writer_head_put(uint8_t *p, uint64_t vm, uint64_t count,
			 uint64_t base_ts, const struct writer_clock *c)
{
	p = blocks_uleb_put(p, vm);
	p = blocks_uleb_put(p, count);
	p = blocks_uleb_put(p, base_ts);
	p = blocks_uleb_put(p, c->counter);
	p = blocks_uleb_put(p, c->mono_ns);
	return blocks_uleb_put(p, c->real_ns);
}

/* -- The output file (global lock) ------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Room kept under a file-size limit for the END that says why the log
** stops (an END is under 400 bytes). */
#define END_ROOM 512u

static struct {
	int fd;	     /* -1 when closed */
	pid_t child; /* file=|COMMAND: its shell (blocks/target.h) */
	int reopen;  /* forked child: open out.path at the first write */
	const struct wbuf *pre; /* and write these blocks after its INTRO */
	int err;		/* sticky -errno */
	int regular;		/* a regular file: a torn tail can be cut off */
	/* Bytes the log may reach: RLIMIT_FSIZE less END_ROOM, else
	** UINT64_MAX. */
	uint64_t limit;
	/* Reads the CLOCK of the END a write error makes. */
	void (*now)(struct writer_clock *c);
	uint64_t bytes;	  /* bytes written */
	uint64_t blocks;  /* blocks written */
	uint64_t events;  /* events in EVENTS blocks written */
	uint64_t vms;	  /* VMs attached over the run */
	uint64_t dropped; /* samples dropped */
	/* Events of buffers dropped whole (out of memory), by family
	** (FORMAT_FAM_*, [0] the total); those buffers. */
	uint64_t lost[FORMAT_FAM__MAX], lost_bufs;
	uint64_t waits;	  /* a VM thread waited for the writer thread */
	uint64_t wait_ns; /* for so long, all told */
	/* bytes, blocks and events before the last batch written */
	uint64_t last_bytes, last_blocks, last_events;
	char path[4096];
} out = {.fd = -1};

/* Any thread. Take the global lock. */
void writer_lock(void)
{
	pthread_mutex_lock(&lock);
}

/* Any thread. Release the global lock. */
void writer_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

/* The INTRO of the log, kept for a forked child's own log. */
static struct writer_intro intro;
static char intro_version[256], intro_options[4096];

/* Caller holds the global lock. 1 while an output file is open (or a
** forked child's is to be opened at its first write). */
int writer_is_open(void)
{
	return out.fd >= 0 || out.reopen;
}

/* Caller holds the global lock. The open file's path. */
const char *writer_path(void)
{
	return out.fd >= 0 || out.reopen ? out.path : "";
}

/* Caller holds the global lock. write(2) with SIGPIPE and SIGXFSZ blocked
** in this thread: a signal the write raises (a pipe's reader gone, a
** file-size limit reached) is taken back before the mask is restored, so
** it never reaches the program; one that was pending before is left alone.
** The kernel raises SIGPIPE even for a write that returns a short count (the
** reader left midway), so what is pending is compared before and after,
** whatever the result. Bytes written, or -1 with errno. */
static ssize_t write_quiet(int fd, const uint8_t *p, size_t n)
{
	static const int sigs[] = {SIGPIPE, SIGXFSZ};
	sigset_t quiet, old, before, after;
	sigemptyset(&quiet);
	sigaddset(&quiet, SIGPIPE);
	sigaddset(&quiet, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &quiet, &old);
	sigemptyset(&before);
	sigpending(&before);
	ssize_t w = write(fd, p, n);
	int e = errno;
	sigemptyset(&after);
	sigpending(&after);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		if (!sigismember(&after, sigs[i]) ||
		    sigismember(&before, sigs[i]))
			continue;
		sigset_t one;
		struct timespec zero = {0, 0};
		sigemptyset(&one);
		sigaddset(&one, sigs[i]);
		while (sigtimedwait(&one, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return w;
}

/* Caller holds the global lock. Write all of p with one write(2),
** retrying only on EINTR and short writes. */
static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write_quiet(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Owner thread only. A CLOCK triple at p. */
static uint8_t *put_clock(uint8_t *p, const struct writer_clock *c)
{
	p = blocks_uleb_put(p, c->counter);
	p = blocks_uleb_put(p, c->mono_ns);
	return blocks_uleb_put(p, c->real_ns);
}

/* Child side of fork(), single-threaded. See writer.h. */
void writer_fork_child(const char *path, const struct wbuf *pre, unsigned nvms)
{
	pthread_mutex_init(&lock, NULL);
	if (out.fd >= 0)
		close(out.fd);
	out.fd = -1;
	out.child = 0; /* the parent's command, not ours to wait for */
	out.reopen = path != NULL;
	out.pre = pre;
	out.vms = nvms;
	if (path)
		snprintf(out.path, sizeof out.path, "%s", path);
}
/* Caller holds the global lock. Note whether fd is a regular file, and the
** size the log may reach under RLIMIT_FSIZE. */
static void set_limit(int fd)
{
	struct stat st;
	struct rlimit rl;
	out.regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	out.limit = UINT64_MAX;
	if (out.regular && getrlimit(RLIMIT_FSIZE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		out.limit = rl.rlim_cur > END_ROOM ? rl.rlim_cur - END_ROOM : 0;
}

/* Caller holds the global lock. Append an END block to b: the totals so
** far, CLOCK c, and (version 5) the error that stopped the log, 0 when it
** was closed. 0 or -ENOMEM. */
static int put_end(struct wbuf *b, const struct writer_clock *c, int stop)
{
	const char *why = stop ? strerror(-stop) : "";
	size_t wl = strlen(why);
	size_t off = writer_block_begin(b);
	uint8_t *p =
	    off == (size_t)-1
		? NULL
		: wbuf_room(b, 160 + wl +
				   (3 + 2 * FORMAT_FAM__MAX) * BLOCKS_ULEB_MAX);
	if (!p)
		return -ENOMEM;
	p = blocks_uleb_put(p, out.events);
	p = blocks_uleb_put(p, out.blocks);
	p = blocks_uleb_put(p, out.bytes);
	p = blocks_uleb_put(p, out.dropped);
	p = blocks_uleb_put(p, out.vms);
	p = put_clock(p, c);
	p = blocks_uleb_put(p, (uint64_t)-stop);
	p = blocks_str_put(p, why, wl);
	p = blocks_uleb_put(p, out.waits);
	p = blocks_uleb_put(p, out.wait_ns);
	unsigned nfam = 0;
	for (unsigned f = 1; f < FORMAT_FAM__MAX; f++)
		nfam += out.lost[f] != 0;
	p = blocks_uleb_put(p, out.lost[0]);
	p = blocks_uleb_put(p, out.lost_bufs);
	p = blocks_uleb_put(p, nfam);
	for (unsigned f = 1; f < FORMAT_FAM__MAX; f++)
		if (out.lost[f]) {
			p = blocks_uleb_put(p, f);
			p = blocks_uleb_put(p, out.lost[f]);
		}
	b->len = (size_t)(p - b->p);
	writer_block_end(b, off, FORMAT_KIND_END);
	return 0;
}

/* Caller holds the global lock. Write an END naming r at out.bytes, over
** whatever torn bytes lie there (space the file already holds), and cut
** the file just after it. 0 or -errno. */
static int end_at(int r)
{
	struct wbuf b = {0};
	struct writer_clock c = {0, 0, 0};
	if (out.now)
		out.now(&c);
	int rc = put_end(&b, &c, r);
	if (rc == 0 && lseek(out.fd, (off_t)out.bytes, SEEK_SET) < 0)
		rc = -errno;
	if (rc == 0)
		rc = write_all(out.fd, b.p, b.len);
	if (rc == 0 && ftruncate(out.fd, (off_t)(out.bytes + b.len)) < 0)
		rc = -errno;
	wbuf_free(&b);
	return rc;
}

/* Caller holds the global lock. The write error r (-errno) stops the log:
** one message; a regular file is cut back to its last complete block and
** ends with an END that names r. The END is written over the torn tail
** first. On a full disk or at a file-size limit (one the program set
** while it ran, under what the writer read at start), when that tail is
** too short to hold it, it goes over the last batch of blocks written
** instead (their events are lost too: bytes the file holds can be
** overwritten without new space). If no END can be written, the file
** ends at its last intact block boundary, as after a crash. */
static void stop(int r)
{
	out.err = r;
	int limited = r == -EFBIG && out.limit != UINT64_MAX;
	fprintf(stderr,
		"ljlog: writing '%s' failed after %llu bytes: %s%s; the "
		"program goes on, the log is readable up to there\n",
		out.path, (unsigned long long)out.bytes, strerror(-r),
		limited ? " (the file-size limit, ulimit -f)" : "");
	if (!out.regular)
		return; /* a pipe or a device: nothing to cut, nobody to tell */
	if (end_at(r) == 0)
		return;
	if ((r == -ENOSPC || r == -EDQUOT || r == -EFBIG) &&
	    out.last_bytes < out.bytes) {
		out.bytes = out.last_bytes;
		out.blocks = out.last_blocks;
		out.events = out.last_events;
		if (end_at(r) == 0)
			return;
		/* That batch may now hold a torn END: it goes too. */
	}
	(void)!ftruncate(out.fd, (off_t)out.bytes);
}

/* Caller holds the global lock. Open the target (blocks/target.h) and write
** magic + INTRO. */
int writer_open(const char *path, int fd, const struct writer_intro *in,
		char *err, size_t errlen)
{
	struct wbuf b = {0};
	struct target t;
	char exe[4096];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (el < 0)
		el = 0;
	exe[el] = '\0';
	size_t vl = strlen(in->luajit_version), ol = strlen(in->options);

	if (in != &intro) {
		intro = *in;
		snprintf(intro_version, sizeof intro_version, "%s",
			 in->luajit_version);
		snprintf(intro_options, sizeof intro_options, "%s",
			 in->options);
		intro.luajit_version = intro_version;
		intro.options = intro_options;
	}
	int r = target_open(&t, path, fd, err, errlen);
	if (r < 0)
		return r;
	fd = t.fd;
	uint8_t *p = wbuf_room(&b, FORMAT_MAGIC_LEN);
	if (!p)
		goto nomem;
	memcpy(p, FORMAT_MAGIC, FORMAT_MAGIC_LEN);
	b.len += FORMAT_MAGIC_LEN;
	size_t off = writer_block_begin(&b);
	p = off == (size_t)-1 ? NULL
			      : wbuf_room(&b, 128 + (size_t)el + vl + ol);
	if (!p)
		goto nomem;
	p = blocks_uleb_put(p, FORMAT_VERSION);
	p = blocks_uleb_put(p, sizeof(void *));
	p = blocks_uleb_put(p, (uint64_t)getpid());
	p = blocks_str_put(p, exe, (size_t)el);
	p = blocks_str_put(p, in->luajit_version, vl);
	p = blocks_str_put(p, in->options, ol);
	p = blocks_uleb_put(p, in->counter_kind);
	p = blocks_uleb_put(p, in->ts_shift);
	p = blocks_uleb_put(p, in->counter_hz);
	p = put_clock(p, &in->clock);
	b.len = (size_t)(p - b.p);
	writer_block_end(&b, off, FORMAT_KIND_INTRO);
	r = write_all(fd, b.p, b.len);
	if (r < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", path,
			 strerror(-r));
		target_close(&t, path);
		wbuf_free(&b);
		return r;
	}
	out.fd = fd;
	out.child = t.child;
	out.err = 0;
	out.now = in->now;
	set_limit(fd);
	out.bytes = out.last_bytes = b.len;
	out.blocks = out.last_blocks = 1;
	out.last_events = 0;
	out.events = 0;
	if (in != &intro) /* a forked child's VMs are counted already */
		out.vms = 0;
	out.dropped = 0;
	memset(out.lost, 0, sizeof out.lost);
	out.lost_bufs = 0;
	out.waits = out.wait_ns = 0;
	snprintf(out.path, sizeof out.path, "%s", path);
	wbuf_free(&b);
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	target_close(&t, path);
	wbuf_free(&b);
	return -ENOMEM;
}

/* Caller holds the global lock. Write the blocks in b with one write(2). */
int writer_write(const struct wbuf *b, unsigned nblocks, uint64_t nevents)
{
	return writer_write_bytes(b->p, b->len, nblocks, nevents);
}

/* Caller holds the global lock. See writer.h. */
int writer_write_bytes(const uint8_t *p, size_t n, unsigned nblocks,
		       uint64_t nevents)
{
	if (out.fd < 0 && out.reopen) {
		/* A forked child's first write: its own log, its own INTRO. */
		char path[sizeof out.path], err[512];
		snprintf(path, sizeof path, "%s", out.path);
		out.reopen = 0;
		if (intro.now)
			intro.now(&intro.clock);
		if (writer_open(path, -1, &intro, err, sizeof err) < 0)
			fprintf(stderr,
				"ljlog: forked child %ld: %s; it runs "
				"unprofiled\n",
				(long)getpid(), err);
		else if (out.pre && out.pre->len &&
			 writer_write(out.pre, out.vms, 0) < 0)
			return out.err;
	}
	if (out.fd < 0)
		return -EBADF;
	if (out.err)
		return out.err;
	int r = out.bytes > out.limit || n > out.limit - out.bytes
		    ? -EFBIG
		    : write_all(out.fd, p, n);
	if (r < 0) {
		stop(r);
		return r;
	}
	out.last_bytes = out.bytes;
	out.last_blocks = out.blocks;
	out.last_events = out.events;
	out.bytes += n;
	out.blocks += nblocks;
	out.events += nevents;
	return 0;
}

/* Caller holds the global lock. Count n more dropped samples. */
void writer_count_dropped(uint64_t n)
{
	out.dropped += n;
}

/* Caller holds the global lock. See writer.h. */
void writer_count_lost(const uint64_t *fam, uint64_t buffers)
{
	for (unsigned f = 1; f < FORMAT_FAM__MAX; f++) {
		out.lost[f] += fam[f];
		out.lost[0] += fam[f];
	}
	out.lost_bufs += buffers;
}

/* Caller holds the global lock. See writer.h. */
void writer_count_waits(uint64_t n, uint64_t ns)
{
	out.waits += n;
	out.wait_ns += ns;
}

/* Caller holds the global lock. Count one more VM attached over the run. */
void writer_count_vm(void)
{
	out.vms++;
}

/* Caller holds the global lock. Write the END block and close. */
int writer_close(const struct writer_clock *c)
{
	if (out.fd < 0)
		return -EBADF;
	if (!out.err) {
		struct wbuf b = {0};
		if (put_end(&b, c, 0) == 0)
			writer_write(&b, 1, 0);
		else
			out.err = -ENOMEM;
		wbuf_free(&b);
	}
	/* A write failure was reported when it happened; target_close says
	** if the close fails or the command does. */
	struct target t = {out.fd, out.child};
	int r = target_close(&t, out.path);
	out.fd = -1;
	out.child = 0;
	return r;
}
