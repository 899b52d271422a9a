/*
** Test-only: a log around blocks the real profiler code made, read by the
** real decoder (see reallog.h).
*/
#include "reallog.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Test thread. INTRO and the VM record. */
void rl_start(struct lblog *l, uint64_t vm_id)
{
	struct lbmap vm;
	lblog_init(l);
	lblog_intro(l, 42);
	map_begin(&vm, vm_id);
	map_vm(&vm, vm_id, 1, 0, 0);
	lblog_mapping(l, &vm);
}

/* Test thread. Append framed blocks, counting them by their headers. */
void rl_add_bytes(struct lblog *l, const void *p, size_t n, uint64_t nevents)
{
	const uint8_t *b = p;
	size_t off = 0;
	while (off < n) {
		struct blocks_header h;
		cr_assert_leq(off + FORMAT_HEADER_LEN, n, "a torn header");
		cr_assert_eq(blocks_header_parse(b + off, &h), 0,
			     "a bad header at %zu", off);
		off += FORMAT_HEADER_LEN + h.length;
		cr_assert_leq(off, n, "a torn payload");
		l->blocks++;
	}
	lb_bytes(&l->file, p, n);
	l->events += nevents;
}

/* Test thread. Append the blocks of b. */
void rl_add(struct lblog *l, const struct wbuf *b, uint64_t nevents)
{
	rl_add_bytes(l, b->p, b->len, nevents);
}

/* Test thread. Decode the file at path into sink (and keep the decoder). */
static int decode_path(const char *path, const struct decode_sink *sink,
		       struct decode **keep, char *err, size_t errlen)
{
	struct reader *rd;
	struct decode *d;
	err[0] = '\0';
	cr_assert_eq(reader_open(&rd, path, 0, err, errlen), 0, "%s", err);
	cr_assert_eq(decode_new(&d, sink), 0);
	int rc = decode_run(rd, d, err, errlen);
	reader_close(rd);
	if (keep)
		*keep = d;
	else
		decode_free(d);
	return rc;
}

/* Test thread. END, then decode. */
int rl_decode(struct lblog *l, const struct decode_sink *sink,
	      struct decode **keep, char *err, size_t errlen)
{
	lblog_end(l);
	const char *path = lblog_write(l);
	int rc = decode_path(path, sink, keep, err, errlen);
	unlink(path);
	return rc;
}

/* Test thread. Decode the log at path. */
int rl_decode_file(const char *path, const struct decode_sink *sink, char *err,
		   size_t errlen)
{
	return decode_path(path, sink, NULL, err, errlen);
}
