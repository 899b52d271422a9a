/*
** Unit tests: the writer (src/blocks/writer.c): block framing, the END's
** totals, and the sticky first error of a write that fails (a full disk,
** a pipe whose reader left, the file-size limit), after which what was
** written before stays readable by the reader. Criterion runs each test
** in a process of its own: the writer's one output file is the test's.
*/
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maps/names.h"
#include "reallog.h"

#define VM_ID 1

/* Test thread. A MAPPING block for VM_ID with ncos COROUTINE records
** (IDs first, first + 1, ...) appended to b; with_vm: the VM record
** first. */
static void mapping(struct wbuf *b, int with_vm, uint64_t first, int ncos)
{
	size_t off = writer_block_begin(b);
	cr_assert_neq(off, (size_t)-1);
	uint8_t *p = wbuf_room(b, BLOCKS_ULEB_MAX);
	b->len = (size_t)(blocks_uleb_put(p, VM_ID) - b->p);
	if (with_vm)
		cr_assert_eq(names_put_vm(b, VM_ID, 7, 0, 0, 0), 0);
	for (int i = 0; i < ncos; i++)
		cr_assert_eq(names_put_coroutine(b, first + (uint64_t)i, 0), 0);
	writer_block_end(b, off, FORMAT_KIND_MAPPING);
}

/* Test thread, the writer lock held. Open the log: path, or descriptor fd
** (>= 0) named path. */
static void open_log(const char *path, int fd)
{
	struct writer_intro in = {
	    "LuaJIT test", "calls", FORMAT_COUNTER_MONO_NS, 0, 1000000000u,
	    {10, 20, 30},  NULL};
	char err[256];
	cr_assert_eq(writer_open(path, fd, &in, err, sizeof err), 0, "%s", err);
}

/* Test thread. Write the VM's MAPPING block (one batch). */
static void write_vm(void)
{
	struct wbuf b = {0};
	mapping(&b, 1, 0, 0);
	cr_assert_eq(writer_write(&b, 1, 0), 0);
	wbuf_free(&b);
}

/* Test thread. Write a batch of one block of ncos COROUTINE records; the
** writer's result. */
static int write_cos(uint64_t first, int ncos)
{
	struct wbuf b = {0};
	mapping(&b, 0, first, ncos);
	int rc = writer_write(&b, 1, 0);
	wbuf_free(&b);
	return rc;
}

/* What the decoder saw. */
struct seen {
	int vms, cos;
	struct decode_end end;
	int ended;
};

/* Test thread. Count a record. */
static int on_record(void *ud, struct decode_obj *o)
{
	struct seen *s = ud;
	s->vms += o->kind == FORMAT_REC_VM;
	s->cos += o->kind == FORMAT_REC_COROUTINE;
	return 0;
}

/* Test thread. Keep the END. */
static int on_end(void *ud, const struct decode_end *e)
{
	struct seen *s = ud;
	s->end = *e;
	s->ended = 1;
	return 0;
}

/* Test thread. Decode the log at path into s; decode_run's result. */
static int decode(const char *path, struct seen *s, char *err, size_t n)
{
	struct decode_sink sink = {.ud = s, .record = on_record, .end = on_end};
	memset(s, 0, sizeof *s);
	return rl_decode_file(path, &sink, err, n);
}

/* Test thread. A fresh temporary file's path (static buffer). */
static const char *tmp_path(void)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/ljlog-writer-XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	return path;
}

/* Blocks the writer frames are read back whole: the header's kind, length
** and payload checksum are what the reader checks, and two blocks built in
** one buffer keep their own offsets. */
Test(writer, blocks_framed_in_one_buffer_read_back_whole)
{
	struct wbuf b = {0};
	mapping(&b, 1, 0, 0);
	size_t first = b.len;
	mapping(&b, 0, 100, 3);
	struct blocks_header h;
	cr_assert_eq(blocks_header_parse(b.p, &h), 0);
	cr_assert_eq(h.kind, FORMAT_KIND_MAPPING);
	cr_assert_eq(h.length, first - FORMAT_HEADER_LEN);
	cr_assert(blocks_payload_ok(&h, b.p + FORMAT_HEADER_LEN));
	cr_assert_eq(blocks_header_parse(b.p + first, &h), 0);
	cr_assert_eq(h.length, b.len - first - FORMAT_HEADER_LEN);
	cr_assert(blocks_payload_ok(&h, b.p + first + FORMAT_HEADER_LEN));
	b.p[b.len - 1] ^= 1;
	cr_assert_not(blocks_payload_ok(&h, b.p + first + FORMAT_HEADER_LEN),
		      "a flipped payload bit is seen");
	wbuf_free(&b);
}

/* The END counts what was written: blocks, bytes, VMs and waits; the
** reader checks each against the log and refuses a log whose END lies. */
Test(writer, end_counts_what_was_written)
{
	const char *path = tmp_path();
	struct seen s;
	char err[512];
	struct writer_clock c = {40, 50, 60};
	writer_lock();
	open_log(path, -1);
	cr_assert(writer_is_open());
	cr_assert_str_eq(writer_path(), path);
	write_vm();
	writer_count_vm();
	cr_assert_eq(write_cos(10, 5), 0);
	writer_count_waits(2, 500);
	cr_assert_eq(writer_close(&c), 0);
	cr_assert_not(writer_is_open());
	writer_unlock();
	cr_assert_eq(decode(path, &s, err, sizeof err), 0, "%s", err);
	cr_assert_eq(s.vms, 1);
	cr_assert_eq(s.cos, 5);
	cr_assert(s.ended);
	cr_assert_eq(s.end.blocks, 3, "INTRO and two MAPPING");
	cr_assert_eq(s.end.vms, 1);
	cr_assert_eq(s.end.stop_error, 0);
	cr_assert_eq(s.end.flush_waits, 2);
	cr_assert_eq(s.end.flush_wait_ns, 500);
	cr_assert_eq(s.end.clock.mono_ns, 50);
	unlink(path);
}

/* a151f74: on a full disk the writer keeps its first error (sticky): a
** later write is dropped even when the disk has room again, so the log
** never holds a gap, and what was written before stays readable, up to a
** block boundary. The disk fills up under the writer: its descriptor
** becomes /dev/full after the first batch. */
Test(writer, full_disk_keeps_first_error_and_earlier_blocks,
     .init = cr_redirect_stderr)
{
	const char *path = tmp_path();
	struct seen s;
	char err[512];
	int fd = open(path, O_RDWR | O_TRUNC);
	int full = open("/dev/full", O_WRONLY);
	cr_assert(fd >= 0 && full >= 0);
	writer_lock();
	open_log(path, fd);
	write_vm();
	cr_assert_eq(write_cos(10, 4), 0);
	off_t good = lseek(fd, 0, SEEK_CUR);
	int keep = dup(fd);
	cr_assert_eq(dup2(full, fd), fd);
	cr_assert_eq(write_cos(20, 4), -ENOSPC);
	cr_assert_eq(dup2(keep, fd), fd, "room again");
	cr_assert_eq(write_cos(30, 4), -ENOSPC, "the first error stays");
	struct writer_clock c = {0, 0, 0};
	writer_close(&c);
	writer_unlock();
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, good, "nothing written after the error");
	int rc = decode(path, &s, err, sizeof err);
	cr_assert_eq(rc, -ENODATA, "cut at a block boundary: %d %s", rc, err);
	cr_assert_eq(s.vms, 1);
	cr_assert_eq(s.cos, 4, "the blocks before the error");
	close(keep);
	close(full);
	unlink(path);
}

/* 52e49b1: a pipe whose reader left raised SIGPIPE in the profiled
** program, which died of it. The write fails with EPIPE, kept: later
** writes are dropped; the signal never reaches the program; what the
** reader took before decodes. */
Test(writer, closed_pipe_is_sticky_epipe_without_sigpipe,
     .init = cr_redirect_stderr)
{
	int p[2];
	uint8_t got[65536];
	cr_assert_eq(pipe(p), 0);
	writer_lock();
	open_log("pipe", p[1]);
	write_vm();
	cr_assert_eq(write_cos(10, 4), 0);
	ssize_t n = read(p[0], got, sizeof got);
	cr_assert_gt(n, 0);
	close(p[0]);
	cr_assert_eq(write_cos(20, 4), -EPIPE);
	cr_assert_eq(write_cos(30, 4), -EPIPE, "the first error stays");
	struct writer_clock c = {0, 0, 0};
	writer_close(&c);
	writer_unlock();
	sigset_t pend;
	sigemptyset(&pend);
	sigpending(&pend);
	cr_assert_not(sigismember(&pend, SIGPIPE), "SIGPIPE left pending");

	const char *path = tmp_path();
	FILE *f = fopen(path, "wb");
	cr_assert_eq(fwrite(got, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	struct seen s;
	char err[512];
	cr_assert_eq(decode(path, &s, err, sizeof err), -ENODATA, "%s", err);
	cr_assert_eq(s.vms, 1);
	cr_assert_eq(s.cos, 4);
	unlink(path);
}

/* 52e49b1: under a file-size limit (ulimit -f) a write past it raised
** SIGXFSZ, and the log had no room left for an END. The writer stops
** short of the limit: the log ends with an END naming EFBIG, every block
** before it whole. */
Test(writer, file_size_limit_ends_with_an_end_naming_efbig,
     .init = cr_redirect_stderr)
{
	const char *path = tmp_path();
	struct rlimit old, rl;
	struct seen s;
	char err[512];
	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	rl = old;
	rl.rlim_cur = 4096;
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	writer_lock();
	open_log(path, -1);
	write_vm();
	int ok = 0, rc;
	while ((rc = write_cos(100 + 100 * (uint64_t)ok, 100)) == 0)
		ok++;
	cr_assert_eq(rc, -EFBIG);
	cr_assert_geq(ok, 2);
	cr_assert_eq(write_cos(1, 1), -EFBIG, "the first error stays");
	struct writer_clock c = {0, 0, 0};
	writer_close(&c);
	writer_unlock();
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	cr_assert_eq(decode(path, &s, err, sizeof err), 0, "%s", err);
	cr_assert(s.ended);
	cr_assert_eq(s.end.stop_error, EFBIG);
	cr_assert_eq(s.cos, 100 * ok);
	unlink(path);
}
