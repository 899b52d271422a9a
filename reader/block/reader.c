/*
** ljlog reader library, layer 1: the block reader.
** Reads through one buffer with pread(2); never trusts a length from the file.
** Any thread: every function works on the structs its caller passes and
** keeps no state of its own, so one thread per struct is enough.
*/
#define _GNU_SOURCE /* O_TMPFILE, mkostemp */
#include "block/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* Read-ahead while the caller skips payloads: a page, not a payload. */
#define SKIP_READAHEAD 4096u

struct reader {
	int fd;		     /* the file */
	unsigned flags;	     /* READER_FOLLOW */
	uint8_t *buf;	     /* file bytes [buf_off, buf_off + len) */
	size_t cap;	     /* bytes allocated at buf */
	size_t len;	     /* bytes held */
	uint64_t buf_off;    /* file offset of buf[0] */
	size_t readahead;    /* bytes asked of each read */
	uint64_t next;	     /* offset of the next block header */
	uint64_t valid_end;  /* end of the last block known good */
	uint64_t nblocks;    /* blocks returned */
	uint64_t bytes_read; /* bytes read from the file */
	int magic_ok;	     /* the file magic was checked */
	int seen_end;	     /* the END block was returned */
	int fail;	     /* sticky error, 0 if none */
	int have_cur;	     /* cur is the last block returned */
	int cur_loaded;	     /* its payload was read */
	int skipping;	     /* the caller skips payloads: read headers only */
	struct reader_block cur;  /* the last block returned */
	reader_wait_fn wait;	  /* follow mode: keep waiting? */
	void *wait_ud;		  /* its argument */
	unsigned poll_ms;	  /* follow mode: poll period */
	char err[READER_ERR_MAX]; /* message of the last error */
};

/* -- Errors ------------------------------------------------------------------ */

/* Record a message and the (sticky) error code. */
static int fail(struct reader *r, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof r->err, fmt, ap);
	va_end(ap);
	r->fail = code;
	return code;
}

/* "EVENTS", or "kind 9" for a kind this reader does not know. */
static const char *kind_str(unsigned kind, char *buf, size_t len)
{
	const char *n = format_kind_name(kind);
	if (strcmp(n, "?") != 0)
		return n;
	snprintf(buf, len, "kind %u", kind);
	return buf;
}

/* -- Buffer ------------------------------------------------------------------ */

/* Make [off, off + n) buffered; 0, -ENODATA (*have bytes from
** off are there, the file ends sooner) or -errno. */
static int fill(struct reader *r, uint64_t off, size_t n, size_t *have)
{
	if (off >= r->buf_off && off - r->buf_off <= r->len) {
		size_t skip = (size_t)(off - r->buf_off);
		if (r->len - skip >= n) {
			*have = r->len - skip;
			return 0;
		}
		if (skip) {
			memmove(r->buf, r->buf + skip, r->len - skip);
			r->len -= skip;
			r->buf_off = off;
		}
	} else {
		r->buf_off = off;
		r->len = 0;
	}
	size_t ahead = r->readahead;
	if (r->skipping && ahead > SKIP_READAHEAD)
		ahead = SKIP_READAHEAD;
	size_t want = n > ahead ? n : ahead;
	if (want > r->cap && want > n && !(r->flags & READER_FOLLOW)) {
		/* Before growing the buffer: read ahead no further than the
		** file ends (a 3 KiB log gets no 1 MiB buffer). */
		struct stat st;
		if (fstat(r->fd, &st) == 0 && (uint64_t)st.st_size >= off) {
			uint64_t left = (uint64_t)st.st_size - off;
			if (left < want)
				want = left > n ? (size_t)left : n;
		}
	}
	if (want > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		while (cap < want)
			cap *= 2;
		uint8_t *nb = realloc(r->buf, cap);
		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->cap = cap;
	}
	while (r->len < n) {
		ssize_t k = pread(r->fd, r->buf + r->len, want - r->len,
				  (off_t)(r->buf_off + r->len));
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			break;
		r->len += (size_t)k;
		r->bytes_read += (uint64_t)k;
	}
	*have = r->len;
	return r->len >= n ? 0 : -ENODATA;
}

/* Sleep for ms milliseconds (restarts after signals). */
static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* fill(), waiting at the tail in follow mode until the bytes
** land or the wait callback gives up (then one last try). */
static int fill_wait(struct reader *r, uint64_t off, size_t n, size_t *have)
{
	int last = 0;
	for (;;) {
		int rc = fill(r, off, n, have);
		if (rc != -ENODATA || !(r->flags & READER_FOLLOW) || last)
			return rc;
		if (r->wait && r->wait(r->wait_ud, off + *have) < 0)
			last =
			    1; /* the writer may have just finished: retry once */
		else
			sleep_ms(r->poll_ms);
	}
}

/* -- Compressed logs ----------------------------------------------------------- */

/* A gzip-compressed log (file=|gzip>out.ljlog.gz): inflate fd
** into an unlinked temporary file (TMPDIR, else /tmp) and return that, so
** the reader keeps reading with pread in constant memory. A cut gzip
** stream keeps what inflated: the block reader then says where the log is
** truncated. New fd (fd is closed) or -errno with a message in err. */
static int gunzip_fd(int fd, const char *path, char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int out = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (out < 0) {
		char tmpl[4096];
		snprintf(tmpl, sizeof tmpl, "%s/ljlog-gunzip.XXXXXX", dir);
		out = mkostemp(tmpl, O_CLOEXEC);
		if (out >= 0)
			unlink(tmpl);
	}
	if (out < 0) {
		int e = errno;
		snprintf(err, errlen,
			 "%s: cannot make a temporary file in %s to inflate "
			 "the gzip-compressed log: %s",
			 path, dir, strerror(e));
		close(fd);
		return -e;
	}
	gzFile gz = gzdopen(fd, "rb");
	if (!gz) {
		snprintf(err, errlen, "%s: out of memory", path);
		close(fd);
		close(out);
		return -ENOMEM;
	}
	static char chunk[1 << 16];
	int n, e = 0;
	while ((n = gzread(gz, chunk, sizeof chunk)) > 0)
		for (int off = 0; off < n && !e;) {
			ssize_t w = write(out, chunk + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				e = errno;
			else
				off += (int)w;
		}
	gzclose(gz); /* closes fd */
	if (e) {
		snprintf(err, errlen,
			 "%s: cannot write the inflated log to %s: %s", path,
			 dir, strerror(e));
		close(out);
		return -e;
	}
	return out;
}

/* -- Public ------------------------------------------------------------------ */

/* Open path for reading; 0 or -errno with a message in err. */
int reader_open(struct reader **out, const char *path, unsigned flags,
		char *err, size_t errlen)
{
	struct reader *r = calloc(1, sizeof *r);
	*out = NULL;
	if (!r) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		free(r);
		return -e;
	}
	struct stat st;
	if (fstat(r->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: is a directory", path);
		close(r->fd);
		free(r);
		return -EISDIR;
	}
	unsigned char magic[2];
	if (pread(r->fd, magic, 2, 0) == 2 && magic[0] == 0x1f &&
	    magic[1] == 0x8b) {
		if (flags & READER_FOLLOW) {
			snprintf(err, errlen,
				 "%s: a gzip-compressed log cannot be followed "
				 "while it grows; follow the uncompressed log",
				 path);
			close(r->fd);
			free(r);
			return -EINVAL;
		}
		if ((r->fd = gunzip_fd(r->fd, path, err, errlen)) < 0) {
			int e = r->fd;
			free(r);
			return e;
		}
	}
	r->flags = flags;
	r->readahead = READER_DEFAULT_READAHEAD;
	r->poll_ms = READER_DEFAULT_POLL_MS;
	*out = r;
	return 0;
}

/* Close and free (NULL is fine). */
void reader_close(struct reader *r)
{
	if (!r)
		return;
	close(r->fd);
	free(r->buf);
	free(r);
}

/* Follow mode: callback polled at the tail, and the poll period. */
void reader_set_wait(struct reader *r, reader_wait_fn fn, void *ud,
		     unsigned poll_ms)
{
	r->wait = fn;
	r->wait_ud = ud;
	r->poll_ms = poll_ms ? poll_ms : READER_DEFAULT_POLL_MS;
}

/* Bytes read ahead per read(2) (at least a block header). */
void reader_set_readahead(struct reader *r, size_t bytes)
{
	r->readahead = bytes < FORMAT_HEADER_LEN ? FORMAT_HEADER_LEN : bytes;
}

/* Check the 8-byte file magic at offset 0. */
static int check_magic(struct reader *r)
{
	size_t have;
	int rc = fill_wait(r, 0, FORMAT_MAGIC_LEN, &have);
	if (rc < 0 && rc != -ENODATA)
		return fail(r, rc, "offset 0: read error: %s", strerror(-rc));
	size_t cmp = have < FORMAT_MAGIC_LEN ? have : FORMAT_MAGIC_LEN;
	if (memcmp(r->buf, FORMAT_MAGIC, cmp) != 0)
		return fail(r, -EBADMSG,
			    "offset 0: bad file magic (not an ljlog log)");
	if (rc == -ENODATA)
		return fail(r, -ENODATA,
			    "file ends at offset %zu inside the %d-byte file "
			    "magic",
			    have, FORMAT_MAGIC_LEN);
	r->magic_ok = 1;
	r->next = r->valid_end = FORMAT_MAGIC_LEN;
	return 0;
}

/* Nothing at r->next: if the file ends inside the skipped
** payload of the previous block, record that truncation; else 0. */
static int skipped_payload_cut(struct reader *r)
{
	char kb[24];
	struct stat st;
	if (r->have_cur && fstat(r->fd, &st) == 0 &&
	    (uint64_t)st.st_size < r->next) {
		const struct reader_block *c = &r->cur;
		uint64_t present =
		    (uint64_t)st.st_size - c->offset - FORMAT_HEADER_LEN;
		r->valid_end = c->offset;
		return fail(r, -ENODATA,
			    "file ends inside block %llu (%s) at offset %llu: "
			    "payload of %u bytes, %llu present",
			    (unsigned long long)c->index,
			    kind_str(c->h.kind, kb, sizeof kb),
			    (unsigned long long)c->offset, c->h.length,
			    (unsigned long long)present);
	}
	return 0;
}

/* The file ends at r->next, a block boundary, or inside the
** skipped payload before it. Returns the truncation error. */
static int truncated_at_boundary(struct reader *r)
{
	int rc = skipped_payload_cut(r);
	if (rc < 0)
		return rc;
	return fail(
	    r, -ENODATA,
	    "file ends at offset %llu after %llu blocks, without an END "
	    "block",
	    (unsigned long long)r->next, (unsigned long long)r->nblocks);
}

/* Read and verify the next block header. */
int reader_next(struct reader *r, struct reader_block *b)
{
	char kb[24];
	size_t have;
	int rc;

	if (r->fail)
		return r->fail;
	if (!r->magic_ok && (rc = check_magic(r)) < 0)
		return rc;
	if (r->have_cur && !r->cur_loaded)
		r->skipping = 1; /* the last payload was not asked for */
	if (r->seen_end) {
		rc = fill(r, r->next, 1, &have);
		if (rc == 0)
			return fail(r, -EBADMSG,
				    "offset %llu: data after the END block",
				    (unsigned long long)r->next);
		if (rc != -ENODATA)
			return fail(r, rc, "offset %llu: read error: %s",
				    (unsigned long long)r->next, strerror(-rc));
		if ((rc = skipped_payload_cut(r)) < 0) {
			r->seen_end = 0;
			return rc;
		}
		r->valid_end = r->next;
		r->have_cur = 0;
		return 0;
	}
	rc = fill_wait(r, r->next, FORMAT_HEADER_LEN, &have);
	if (rc == -ENODATA) {
		if (have == 0)
			return truncated_at_boundary(r);
		r->valid_end = r->next;
		return fail(
		    r, -ENODATA,
		    "file ends inside the header of block %llu at offset "
		    "%llu (%zu of %d bytes)",
		    (unsigned long long)r->nblocks, (unsigned long long)r->next,
		    have, FORMAT_HEADER_LEN);
	}
	if (rc < 0)
		return fail(r, rc, "offset %llu: read error: %s",
			    (unsigned long long)r->next, strerror(-rc));
	r->valid_end = r->next; /* the previous payload is all there */
	r->have_cur = 0;

	const uint8_t *hp = r->buf + (r->next - r->buf_off);
	unsigned long long idx = (unsigned long long)r->nblocks;
	unsigned long long off = (unsigned long long)r->next;
	memset(b, 0, sizeof *b);
	if (hp[0] != (FORMAT_SYNC & 0xff) || hp[1] != (FORMAT_SYNC >> 8))
		return fail(r, -EBADMSG,
			    "block %llu at offset %llu: bad block header (sync "
			    "%02X %02X, expected %02X %02X)",
			    idx, off, hp[0], hp[1], FORMAT_SYNC & 0xff,
			    FORMAT_SYNC >> 8);
	rc = blocks_header_parse(hp, &b->h);
	if (rc == -EFBIG)
		return fail(r, -EBADMSG,
			    "block %llu (%s) at offset %llu: payload length %u "
			    "over the limit of %u bytes",
			    idx, kind_str(b->h.kind, kb, sizeof kb), off,
			    b->h.length, FORMAT_MAX_PAYLOAD);
	if (rc < 0)
		return fail(
		    r, -EBADMSG,
		    "block %llu at offset %llu: header checksum mismatch", idx,
		    off);
	if (r->nblocks == 0 && b->h.kind != FORMAT_KIND_INTRO)
		return fail(
		    r, -EBADMSG,
		    "block 0 (%s) at offset %llu: the first block must be "
		    "INTRO",
		    kind_str(b->h.kind, kb, sizeof kb), off);
	if (r->nblocks > 0 && b->h.kind == FORMAT_KIND_INTRO)
		return fail(r, -EBADMSG,
			    "block %llu (INTRO) at offset %llu: a second INTRO "
			    "block",
			    idx, off);
	b->offset = r->next;
	b->index = r->nblocks++;
	r->next += FORMAT_HEADER_LEN + (uint64_t)b->h.length;
	r->cur = *b;
	r->have_cur = 1;
	r->cur_loaded = 0;
	if (b->h.kind == FORMAT_KIND_END)
		r->seen_end = 1;
	return 1;
}

/* Read and verify the payload of the block just returned. */
int reader_payload(struct reader *r, struct reader_block *b)
{
	char kb[24];
	size_t have;
	if (r->fail)
		return r->fail;
	if (!r->have_cur || r->cur.offset != b->offset)
		return -EINVAL;
	uint64_t off = b->offset + FORMAT_HEADER_LEN;
	r->skipping = 0;
	int rc = fill_wait(r, off, b->h.length, &have);
	if (rc == -ENODATA) {
		r->valid_end = b->offset;
		r->seen_end = 0;
		return fail(r, -ENODATA,
			    "file ends inside block %llu (%s) at offset %llu: "
			    "payload of %u bytes, %zu present",
			    (unsigned long long)b->index,
			    kind_str(b->h.kind, kb, sizeof kb),
			    (unsigned long long)b->offset, b->h.length, have);
	}
	if (rc < 0)
		return fail(r, rc, "offset %llu: read error: %s",
			    (unsigned long long)off, strerror(-rc));
	b->payload = r->buf + (off - r->buf_off);
	if (!blocks_payload_ok(&b->h, b->payload)) {
		b->payload = NULL;
		return fail(r, -EBADMSG,
			    "block %llu (%s) at offset %llu: payload checksum "
			    "mismatch",
			    (unsigned long long)b->index,
			    kind_str(b->h.kind, kb, sizeof kb),
			    (unsigned long long)b->offset);
	}
	r->valid_end = r->next;
	r->cur_loaded = 1;
	return 0;
}

/* The message of the last error ("" if none). */
const char *reader_error(const struct reader *r)
{
	return r->err;
}

/* Offset just past the last block known good. */
uint64_t reader_valid_end(const struct reader *r)
{
	return r->valid_end;
}

/* Blocks returned so far. */
uint64_t reader_blocks(const struct reader *r)
{
	return r->nblocks;
}

/* Bytes read from the file so far. */
uint64_t reader_bytes_read(const struct reader *r)
{
	return r->bytes_read;
}

/* 1 once the END block has been returned. */
int reader_seen_end(const struct reader *r)
{
	return r->seen_end;
}
