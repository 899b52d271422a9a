/*
** ljlog CLI: 'ljlog check', integrity and invariants as an exit status.
*/
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "decode/decode.h"

static const char check_usage[] =
    "usage: ljlog check [-q] FILE\n"
    "\n"
    "Verify an ljlog log: file magic, block headers and checksums, every ID\n"
    "defined before use, of the right kind and never redefined, events and\n"
    "samples well-formed and inside their block (sample states known, frame\n"
    "counts bounded, signals = count + dropped), the END block present and\n"
    "its totals (events, blocks, bytes) consistent. END samples_dropped\n"
    "below the sum of the SAMPLES blocks' dropped is corrupt; above it, a\n"
    "warning (samples dropped after the last SAMPLES block). END's dropped\n"
    "events (buffers ljlog lost when out of memory) must add up over their\n"
    "families.\n"
    "\n"
    "  -q, --quiet   print nothing, only set the exit status\n"
    "  -h, --help    this help\n"
    "\n"
    "Exit status:\n"
    "  0  complete and valid\n"
    "  1  valid but truncated (the writer died: a crash, a kill); prints where\n"
    "     it ends; or an empty file\n"
    "  2  usage error, or the file cannot be opened\n"
    "  3  corrupt: prints the block, its kind and offset, and the reason; or\n"
    "     not a log at all (no file magic)\n"
    "  4  valid, but stopped early by a write error in the profiled program\n"
    "     (disk full, file-size limit, ...): its END names the error and\n"
    "     the offset; everything before it is complete\n"
    "  5  complete and valid, with losses: ljlog ran out of memory and\n"
    "     dropped buffers of events; prints how many events are missing\n"
    "     and from which families\n";

/* Check state: counts for the summary line, and the quiet flag. */
struct check {
	int quiet;
	uint64_t unknown;
};

/* Main thread. A decoder warning: shown unless quiet. */
static void on_warn(void *ud, const char *msg)
{
	struct check *c = ud;
	if (!c->quiet)
		printf("warning: %s\n", msg);
}

/* Main thread. A block of a kind this reader does not know. */
static int on_unknown(void *ud, const struct reader_block *b)
{
	struct check *c = ud;
	c->unknown++;
	return 0;
}

/* Main thread. What END says is missing (version 17), if anything. */
static void say_losses(const char *path, const struct decode_end *end)
{
	char m[256];
	if (!end->events_dropped)
		return;
	printf("%s: %s %s missing: ljlog ran out of memory and dropped %llu "
	       "buffer%s\n",
	       path, cli_fmt_dropped(m, sizeof m, end),
	       end->events_dropped == 1 ? "is" : "are",
	       (unsigned long long)end->buffers_dropped,
	       end->buffers_dropped == 1 ? "" : "s");
}

/* Main thread. 'ljlog check'. */
int cli_check(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct check c = {0, 0};
	int o;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+qh", lo, NULL)) != -1) {
		switch (o) {
		case 'q': c.quiet = 1; break;
		case 'h': fputs(check_usage, stdout); return CLI_OK;
		default:
			cli_err("check", "unknown option '%s'",
				argv[optind - 1]);
			cli_see_help("check");
			return CLI_USAGE;
		}
	}
	const char *path = cli_file_arg("check", check_usage, argc, argv);
	if (!path)
		return cli_file_rc;
	char err[512];
	struct reader *r;
	struct decode *d;
	struct decode_sink sink;
	struct reader_block b;
	int rc = reader_open(&r, path, 0, err, sizeof err);
	if (rc < 0) {
		cli_err("check", "%s", err);
		return CLI_USAGE;
	}
	memset(&sink, 0, sizeof sink);
	sink.ud = &c;
	sink.warn = on_warn;
	sink.unknown = on_unknown;
	if (decode_new(&d, &sink) < 0) {
		reader_close(r);
		cli_err("check", "out of memory");
		return CLI_USAGE;
	}
	/* Every payload is read and verified, unknown kinds included. */
	err[0] = '\0';
	while ((rc = reader_next(r, &b)) > 0) {
		if ((rc = reader_payload(r, &b)) < 0)
			break;
		if ((rc = decode_block(d, &b)) != 0) {
			snprintf(err, sizeof err, "%s", decode_error(d));
			break;
		}
	}
	if (rc < 0 && !err[0])
		snprintf(err, sizeof err, "%s", reader_error(r));
	int status = cli_status(rc);
	const struct decode_end *end = decode_end(d);
	if (status == CLI_OK && end && end->stop_error)
		status = CLI_STOPPED;
	else if (status == CLI_OK && end && end->events_dropped)
		status = CLI_LOSSES;
	if (!c.quiet) {
		unsigned long long blocks =
		    (unsigned long long)reader_blocks(r);
		unsigned long long events =
		    (unsigned long long)decode_events_total(d);
		unsigned long long vms =
		    (unsigned long long)decode_vms_total(d);
		unsigned long long samples =
		    (unsigned long long)decode_samples_total(d);
		unsigned long long dropped =
		    (unsigned long long)decode_dropped_total(d);
		char sbuf[96] = "";
		if (samples || dropped || decode_samples_blocks(d))
			snprintf(sbuf, sizeof sbuf,
				 ", %llu samples (%llu dropped)", samples,
				 dropped);
		switch (status) {
		case CLI_OK:
		case CLI_LOSSES:
			printf(
			    "%s: ok%s: complete, %llu blocks, %llu events, %llu "
			    "VM%s%s%s\n",
			    path, status == CLI_LOSSES ? " with losses" : "",
			    blocks, events, vms, vms == 1 ? "" : "s", sbuf,
			    c.unknown ? ", unknown block kinds skipped" : "");
			break;
		case CLI_STOPPED:
			printf("%s: stopped: writing the log failed at offset "
			       "%llu: %s (errno %llu); the program went on "
			       "without it\n",
			       path, (unsigned long long)end->bytes,
			       end->stop_reason,
			       (unsigned long long)end->stop_error);
			printf("%s: complete up to there: %llu blocks, %llu "
			       "events, %llu VM%s%s\n",
			       path, blocks, events, vms, vms == 1 ? "" : "s",
			       sbuf);
			break;
		case CLI_TRUNCATED:
			printf("%s: truncated: %s\n", path, err);
			printf(
			    "%s: valid up to offset %llu: %llu events%s in the "
			    "complete blocks before it\n",
			    path, (unsigned long long)reader_valid_end(r),
			    events, sbuf);
			break;
		case CLI_CORRUPT: printf("%s: corrupt: %s\n", path, err); break;
		default: cli_err("check", "%s", err); break;
		}
		/* Losses: in a complete log (5), and in a stopped one (4). */
		if (status == CLI_LOSSES || status == CLI_STOPPED)
			say_losses(path, end);
	}
	decode_free(d);
	reader_close(r);
	return status;
}
