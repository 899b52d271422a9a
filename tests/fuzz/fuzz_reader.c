/*
** ljlog fuzzing: the whole reader fed arbitrary bytes (libFuzzer).
** Block reader, decoder, every processor and every front end of the CLI.
*/

/*
** What one input goes through: the bytes are a log file (a memfd, read by
** path as the CLI reads a log). First the block reader alone, with the
** smallest read-ahead and every other payload skipped (its buffer moves
** and its skip path); then the CLI commands as library calls, stdout to
** /dev/null: check, dump -v, dump --headers, report, report --json, and
** folded in its views (sampled, --calls --count, --lua --lines
** --no-traces, --host). report and folded go through profile_load, so
** through the decoder and the fnid, calls, heap, samples and stacks
** processors. A crash, a sanitizer report, a leak or a time out is a bug.
**
** Checksums. Every block carries XXH32 checksums of its header and of its
** payload, so a byte changed at random is nearly always caught by the
** checksum check and the decoder behind it never sees it. The harness
** decodes its input exactly as given (a file that crashes it crashes
** `ljlog check FILE` too, and lands in the corpus as a valid-looking log);
** it is the custom mutator below that keeps most mutants checksum-clean:
**   - 3 times in 4 it mutates the payload of one block (libFuzzer's own
**     mutations on that payload alone), writes the new length into the
**     block header and recomputes both checksums of every block: the
**     decoder meets bad varints, counts, IDs and strings in blocks that
**     pass the reader's checks;
**   - otherwise it mutates the whole file (headers, lengths, sync, magic)
**     and fixes the checksums only half of the time, so the block reader
**     keeps meeting bad checksums, torn tails and bad lengths too.
** The cross-over joins the first blocks of one log to the last blocks of
** another (checksums stay valid): records of one run, events of another.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>

#include "blocks/format.h"
#include "cli/cli.h"
#include "block/reader.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

#define MAX_BLOCKS 4096

static int memfd = -1;	  /* the input, as a file */
static char path[64];	  /* its name under /proc/self/fd */
static uint8_t *scratch;  /* the mutator's payload copy */
static size_t scratchcap; /* bytes at scratch */

/* -- Blocks of an input ------------------------------------------------------ */

/* Any thread. Little-endian u32 at p. */
static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Any thread. Store v at p, little-endian. */
static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Any thread. Offsets of the whole blocks of data (header and payload
** inside size), at most max; returns their number. */
static size_t blocks_of(const uint8_t *data, size_t size, size_t *off,
			size_t max)
{
	size_t n = 0, o = FORMAT_MAGIC_LEN;
	while (n < max && o + FORMAT_HEADER_LEN <= size) {
		uint32_t len = get_u32(data + o + 4);
		if (len > size - o - FORMAT_HEADER_LEN)
			break;
		off[n++] = o;
		o += FORMAT_HEADER_LEN + len;
	}
	return n;
}

/* Any thread. Recompute both checksums of every whole block of data. */
static void fix_checksums(uint8_t *data, size_t size)
{
	static size_t off[MAX_BLOCKS];
	size_t n = blocks_of(data, size, off, MAX_BLOCKS);
	for (size_t i = 0; i < n; i++) {
		uint8_t *h = data + off[i];
		uint32_t len = get_u32(h + 4);
		put_u32(h + 8, XXH32(h + FORMAT_HEADER_LEN, len, 0));
		put_u32(h + 12, XXH32(h, 12, 0));
	}
}

/* Any thread. Next pseudo-random number of the mutator's seed. */
static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* -- libFuzzer entry points -------------------------------------------------- */

/* Fuzzer thread. Mutate one block's payload (keeping the file's shape and
** checksums) or the whole file; see the comment at the top. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	static size_t off[MAX_BLOCKS];
	unsigned s = seed;
	size_t n = blocks_of(data, size, off, MAX_BLOCKS);
	if (n == 0 || next_rand(&s) % 4 == 0) {
		size = LLVMFuzzerMutate(data, size, max_size);
		if (next_rand(&s) % 2)
			fix_checksums(data, size);
		return size;
	}
	size_t k = next_rand(&s) % n;
	uint8_t *h = data + off[k];
	size_t len = get_u32(h + 4);
	size_t head = off[k] + FORMAT_HEADER_LEN, tail = size - head - len;
	size_t room = max_size - head - tail; /* the payload may grow to */
	/* LLVMFuzzerMutate falls back to 1 byte when no mutation applies,
	** even for a max_size of 0: an empty payload in a file already at
	** max_size grew by a byte past data (the one crash of the first
	** hour-long run: an INTRO of length 0, in the mutator, not the
	** reader). */
	if (len == 0 || room == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	if (scratchcap < room + 1) {
		uint8_t *p = realloc(scratch, room + 1);
		if (!p)
			return size;
		scratch = p;
		scratchcap = room + 1;
	}
	memcpy(scratch, h + FORMAT_HEADER_LEN, len);
	size_t nlen = LLVMFuzzerMutate(scratch, len, room);
	if (nlen > room)
		nlen = room;
	memmove(data + head + nlen, data + head + len, tail);
	memcpy(data + head, scratch, nlen);
	put_u32(h + 4, (uint32_t)nlen);
	size = head + nlen + tail;
	fix_checksums(data, size);
	return size;
}

/* Fuzzer thread. The magic and first blocks of one input, then the blocks
** of the other from one of its blocks on (not its INTRO). */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1,
				 const uint8_t *d2, size_t s2, uint8_t *out,
				 size_t max_out, unsigned int seed)
{
	static size_t o1[MAX_BLOCKS], o2[MAX_BLOCKS];
	unsigned s = seed;
	size_t n1 = blocks_of(d1, s1, o1, MAX_BLOCKS);
	size_t n2 = blocks_of(d2, s2, o2, MAX_BLOCKS);
	if (n1 == 0 || n2 < 2)
		return 0;
	size_t i = 1 + next_rand(&s) % n1; /* blocks kept from d1 */
	size_t j = 1 + next_rand(&s) % (n2 - 1);
	size_t a = i < n1 ? o1[i] : s1, b = s2 - o2[j];
	if (a > max_out)
		a = max_out;
	if (b > max_out - a)
		b = max_out - a;
	memcpy(out, d1, a);
	memcpy(out + a, d2 + o2[j], b);
	return a + b;
}

/* Fuzzer thread. Once: the memfd, and stdout to /dev/null. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	memfd = memfd_create("ljlog-fuzz", MFD_CLOEXEC);
	if (memfd < 0) {
		perror("fuzz_reader: memfd_create");
		abort();
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
	if (!freopen("/dev/null", "w", stdout)) {
		perror("fuzz_reader: /dev/null");
		abort();
	}
	return 0;
}

/* Fuzzer thread. The block reader alone: smallest read-ahead, the payload
** of every other block read, the others skipped. */
static void read_blocks(void)
{
	char err[READER_ERR_MAX];
	struct reader *r;
	struct reader_block b;
	if (reader_open(&r, path, 0, err, sizeof err) < 0)
		abort();
	reader_set_readahead(r, 0);
	while (reader_next(r, &b) == 1)
		if (b.index % 2 == 0 && reader_payload(r, &b) < 0)
			break;
	(void)reader_valid_end(r);
	reader_close(r);
}

/* Fuzzer thread. Run a CLI command (argv NULL-terminated); its exit status
** must be one the CLI documents (usage: also 2, for an export with nothing
** to write). */
static void run_st(int (*cmd)(int, char **), const char **argv, int usage)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	optind = 0; /* getopt starts over */
	int rc = cmd(argc, (char **)argv);
	fflush(stdout);
	if (rc != CLI_OK && rc != CLI_TRUNCATED && rc != CLI_CORRUPT &&
	    rc != CLI_STOPPED && !(usage && rc == CLI_USAGE)) {
		fprintf(stderr, "fuzz_reader: %s exited %d\n", argv[0], rc);
		abort();
	}
}

/* Fuzzer thread. A command that reads the log. */
static void run(int (*cmd)(int, char **), const char **argv)
{
	run_st(cmd, argv, 0);
}

/* Fuzzer thread. One input through the reader and every front end. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (ftruncate(memfd, 0) < 0 ||
	    pwrite(memfd, data, size, 0) != (ssize_t)size) {
		perror("fuzz_reader: memfd");
		abort();
	}
	read_blocks();
	run(cli_check, (const char *[]){"check", path, NULL});
	run(cli_dump, (const char *[]){"dump", "-v", path, NULL});
	run(cli_dump, (const char *[]){"dump", "--headers", path, NULL});
	run(cli_report, (const char *[]){"report", path, NULL});
	run(cli_report, (const char *[]){"report", "--json", path, NULL});
	run(cli_folded, (const char *[]){"folded", path, NULL});
	run(cli_folded,
	    (const char *[]){"folded", "--calls", "--count", path, NULL});
	run(cli_folded, (const char *[]){"folded", "--lua", "--lines",
					 "--no-traces", path, NULL});
	run(cli_folded, (const char *[]){"folded", "--host", path, NULL});
	run_st(cli_export,
	       (const char *[]){"export", "--format", "pprof", "-o",
				"/dev/null", path, NULL},
	       1);
	run_st(cli_export,
	       (const char *[]){"export", "--format", "heapsnapshot", "-q",
				"-o", "/dev/null", path, NULL},
	       1);
	run_st(cli_flame,
	       (const char *[]){"flame", "-o", "/dev/null", path, NULL}, 1);
	/* Heap snapshots joined with the allocation events (usage: no such
	** snapshot). */
	run_st(cli_heap, (const char *[]){"heap", "--by", "site", path, NULL},
	       1);
	run_st(
	    cli_heap,
	    (const char *[]){"heap", "--diff", "1", "2", "--json", path, NULL},
	    1);
	return 0;
}
