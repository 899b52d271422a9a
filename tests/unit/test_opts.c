/*
** Unit tests: src/logger/opts (the LUAJIT_PROFILE grammar).
*/
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "logger/opts.h"

/* Test thread. Parse s, expecting success. */
static struct opts ok(const char *s)
{
	struct opts o;
	char err[512];
	int rc = opts_parse(s, &o, err, sizeof err);
	cr_assert_eq(rc, 0, "'%s' failed: %s", s ? s : "(null)", err);
	cr_assert_str_eq(err, "", "no message on success");
	return o;
}

/* Test thread. Parse s, expecting -EINVAL; the message into err. */
static void bad(const char *s, char *err, size_t len)
{
	struct opts o;
	cr_assert_eq(opts_parse(s, &o, err, len), -EINVAL, "'%s' accepted", s);
	cr_assert_neq(err[0], '\0', "'%s': no message", s);
}

Test(opts, defaults)
{
	const char *forms[] = {"log", "", "log:", NULL};
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		struct opts o = ok(forms[i]);
		cr_assert_eq(o.events, OPTS_DEFAULTS);
		cr_assert_eq(o.keepjit, 0);
		cr_assert_eq(o.buffer, OPTS_DEFAULT_BUFFER);
		cr_assert_eq(o.flush_ns, OPTS_DEFAULT_FLUSH_NS);
		cr_assert_str_eq(o.file, OPTS_DEFAULT_FILE);
	}
	cr_assert_str_eq(OPTS_DEFAULT_FILE, "ljlog-%p.ljlog");
}

Test(opts, families)
{
	cr_assert_eq(ok("log:nodefaults,calls").events, OPTS_CALLS);
	cr_assert_eq(ok("log:nodefaults,alloc").events, OPTS_ALLOC);
	cr_assert_eq(ok("log:nodefaults,gc").events, OPTS_GC);
	cr_assert_eq(ok("log:calls,nodefaults,alloc").events,
		     OPTS_CALLS | OPTS_ALLOC);
	cr_assert_eq(ok("log:nodefaults").events, 0);
	/* Named families replace the default set. */
	cr_assert_eq(ok("log:calls").events, OPTS_CALLS);
	cr_assert_eq(ok("calls,alloc").events, OPTS_CALLS | OPTS_ALLOC);
	cr_assert_eq(ok("log:keepjit").keepjit, 1);
	cr_assert_eq(ok("log:vmtrim").vmtrim, 1);
	cr_assert_eq(ok("log:sample,nolines").nolines, 1);
	cr_assert_eq(ok("log:sample").nolines, 0);
	cr_assert_eq(ok("log:sample").lines, 0);
	cr_assert_eq(ok("log:sample,lines").lines, 1);
	/* The last of lines and nolines wins. */
	cr_assert_eq(ok("log:sample,lines,nolines").lines, 0);
	cr_assert_eq(ok("log:sample,lines,nolines").nolines, 1);
	cr_assert_eq(ok("log:sample,nolines,lines").lines, 1);
	cr_assert_eq(ok("log:sample,nolines,lines").nolines, 0);
	cr_assert_eq(ok("log:vmtrim").events, OPTS_DEFAULTS);
	cr_assert_eq(ok("log:calls").vmtrim, 0);
	cr_assert_eq(ok("log:nowriter").nowriter, 1);
	cr_assert_eq(ok("log:nowriter").events, OPTS_DEFAULTS);
	cr_assert_eq(ok("log:calls").nowriter, 0);
	cr_assert_eq(ok("log:keepjit").events, OPTS_DEFAULTS);
	cr_assert_eq(ok("log:calls,,alloc,").events, OPTS_CALLS | OPTS_ALLOC);
	cr_assert_eq(ok("log:sample").events, OPTS_SAMPLE);
	cr_assert_eq(ok("log:sample,jit").events, OPTS_SAMPLE | OPTS_JIT);
	cr_assert_eq(ok("log:calls,alloc,gc,sample,jit").events,
		     OPTS_CALLS | OPTS_ALLOC | OPTS_GC | OPTS_SAMPLE |
			 OPTS_JIT);
	/* The default set: samples, GC phases, sampled allocation. */
	cr_assert_eq(ok("log:file=x").events,
		     OPTS_SAMPLE | OPTS_GC | OPTS_ALLOC);
	cr_assert_eq(ok("log:file=x").alloc_rate, 512u << 10);
	cr_assert_eq(ok("log:file=x").sample_ns, 1000000u);
	cr_assert_eq(ok("log:alloc").alloc_rate, 0);
	cr_assert_eq(ok("log:wall,alloc=4k").alloc_rate, 4096);
	cr_assert_eq(ok("log:nodefaults").alloc_rate, 0);
}

Test(opts, sample_interval_and_host)
{
	struct opts o = ok("log:sample");
	cr_assert_eq(o.sample_ns, OPTS_DEFAULT_SAMPLE_NS);
	cr_assert_eq(o.sample_ns, 1000000ull, "the documented default: 1ms");
	cr_assert_eq(o.nohost, 0, "host stacks are on by default");
	cr_assert_eq(ok("log:sample=100us").sample_ns, 100000ull);
	cr_assert_eq(ok("log:sample=250ms").events, OPTS_SAMPLE);
	cr_assert_eq(ok("log:sample,nohost").nohost, 1);
	cr_assert_eq(ok("log:sample,nohost,host").nohost, 0);
}

Test(opts, file_buffer_flush)
{
	struct opts o = ok("log:file=/tmp/out-%p.ljlog,buffer=64k,flush=100ms");
	cr_assert_str_eq(o.file, "/tmp/out-%p.ljlog");
	cr_assert_eq(o.buffer, 64u << 10);
	cr_assert_eq(o.flush_ns, 100000000ull);
	o = ok("log:file=a,file=b");
	cr_assert_str_eq(o.file, "b", "the last file= wins");
	o = ok("log:file=|gzip > x.gz");
	cr_assert_str_eq(o.file, "|gzip > x.gz");
	/* A comma in a value is "\,", a backslash before one "\\" (issue
	** 38, 10); a lone backslash stays. */
	o = ok("log:file=a\\,b.ljlog,calls");
	cr_assert_str_eq(o.file, "a,b.ljlog");
	cr_assert_eq(o.events, OPTS_CALLS);
	o = ok("log:file=x\\\\,calls");
	cr_assert_str_eq(o.file, "x\\");
	cr_assert_eq(o.events, OPTS_CALLS);
	cr_assert_str_eq(ok("log:file=c:\\tmp").file, "c:\\tmp");
	cr_assert_str_eq(ok("log:file=|gzip -c\\,>y.gz").file,
			 "|gzip -c,>y.gz");
	cr_assert_eq(ok("log:buffer=1m").buffer, 1u << 20);
	cr_assert_eq(ok("log:flush=0").flush_ns, 0);
	cr_assert_eq(ok("log").fd, -1, "no fd= means none");
	cr_assert_eq(ok("log:fd=3").fd, 3);
	cr_assert_eq(ok("log:fd=0").fd, 0);
}

Test(opts, durations)
{
	uint64_t ns;
	cr_assert_eq(opts_parse_duration("100ms", 5, &ns), 0);
	cr_assert_eq(ns, 100000000ull);
	cr_assert_eq(opts_parse_duration("1s", 2, &ns), 0);
	cr_assert_eq(ns, 1000000000ull);
	cr_assert_eq(opts_parse_duration("500us", 5, &ns), 0);
	cr_assert_eq(ns, 500000ull);
	cr_assert_eq(opts_parse_duration("250ns", 5, &ns), 0);
	cr_assert_eq(ns, 250ull);
	cr_assert_eq(opts_parse_duration("0", 1, &ns), 0);
	cr_assert_eq(ns, 0);
	/* Length bounds the parse: "1s" out of "1sx". */
	cr_assert_eq(opts_parse_duration("1sx", 2, &ns), 0);
	cr_assert_eq(ns, 1000000000ull);
	const char *badv[] = {"10", "ms",  "1h",   "-1",
			      "",   "1 s", "1.5s", "99999999999999999999s"};
	for (size_t i = 0; i < sizeof badv / sizeof badv[0]; i++)
		cr_assert_eq(opts_parse_duration(badv[i], strlen(badv[i]), &ns),
			     -EINVAL, "'%s'", badv[i]);
}

Test(opts, sizes)
{
	uint64_t b;
	cr_assert_eq(opts_parse_size("4096", 4, &b), 0);
	cr_assert_eq(b, 4096);
	cr_assert_eq(opts_parse_size("64k", 3, &b), 0);
	cr_assert_eq(b, 65536);
	cr_assert_eq(opts_parse_size("1m", 2, &b), 0);
	cr_assert_eq(b, 1u << 20);
	cr_assert_eq(opts_parse_size("1g", 2, &b), 0);
	cr_assert_eq(b, 1u << 30);
	cr_assert_eq(opts_parse_size("64K", 3, &b), 0);
	cr_assert_eq(b, 65536);
	const char *badv[] = {"k",   "1t",  "",
			      "-4k", "1mm", "18446744073709551615k"};
	for (size_t i = 0; i < sizeof badv / sizeof badv[0]; i++)
		cr_assert_eq(opts_parse_size(badv[i], strlen(badv[i]), &b),
			     -EINVAL, "'%s'", badv[i]);
}

Test(opts, bad_options_name_it_and_list_valid)
{
	char err[512];
	const char *valid = opts_valid_list();
	bad("log:bogus", err, sizeof err);
	cr_assert_not_null(strstr(err, "bogus"), "%s", err);
	cr_assert_not_null(strstr(err, valid), "%s", err);
	bad("log:calls,allocs", err, sizeof err);
	cr_assert_not_null(strstr(err, "'allocs'"), "%s", err);
	cr_assert_not_null(strstr(err, valid), "%s", err);
	bad("log:buffer=1", err, sizeof err);
	cr_assert_not_null(strstr(err, "buffer=1"), "%s", err);
	cr_assert_not_null(strstr(err, valid), "%s", err);
	bad("log:buffer=2g", err, sizeof err);
	cr_assert_not_null(strstr(err, "buffer=2g"), "%s", err);
	bad("log:flush=10", err, sizeof err);
	cr_assert_not_null(strstr(err, "flush=10"), "%s", err);
	cr_assert_not_null(strstr(err, valid), "%s", err);
	bad("log:file", err, sizeof err);
	cr_assert_not_null(strstr(err, "'file'"), "%s", err);
	bad("log:file=", err, sizeof err);
	cr_assert_not_null(strstr(err, "file="), "%s", err);
	bad("log:sample=50us", err, sizeof err);
	cr_assert_not_null(strstr(err, "sample=50us"), "%s", err);
	cr_assert_not_null(strstr(err, "100us"), "%s", err);
	bad("log:sample=2s", err, sizeof err);
	cr_assert_not_null(strstr(err, "sample=2s"), "%s", err);
	bad("log:fd=x", err, sizeof err);
	cr_assert_not_null(strstr(err, "bad descriptor in 'fd=x'"), "%s", err);
	bad("log:fd=", err, sizeof err);
	cr_assert_not_null(strstr(err, "fd="), "%s", err);
	bad("log:fd=-1", err, sizeof err);
	bad("log:fd=3x", err, sizeof err);
	bad("log:fd", err, sizeof err);
	cr_assert_not_null(strstr(err, "'fd'"), "%s", err);
	bad("log:colour=red", err, sizeof err);
	cr_assert_not_null(strstr(err, "colour=red"), "%s", err);
	bad("perf:calls", err, sizeof err);
	cr_assert_not_null(strstr(err, "perf"), "%s", err);
	for (const char *w = "calls"; w; w = NULL)
		cr_assert_not_null(strstr(valid, w));
	cr_assert_not_null(strstr(valid, "file=PATH"));
	cr_assert_not_null(strstr(valid, "flush=INTERVAL"));
}

Test(opts, message_fits_small_buffer)
{
	struct opts o;
	char err[16];
	cr_assert_eq(opts_parse("log:bogus", &o, err, sizeof err), -EINVAL);
	cr_assert_lt(strlen(err), sizeof err);
	cr_assert_eq(opts_parse("log:bogus", &o, NULL, 0), -EINVAL);
}

Test(opts, expand_pid)
{
	char out[64];
	cr_assert_eq(opts_expand_file("ljlog-%p.ljlog", 4242, out, sizeof out),
		     0);
	cr_assert_str_eq(out, "ljlog-4242.ljlog");
	cr_assert_eq(opts_expand_file("%p/%p", 7, out, sizeof out), 0);
	cr_assert_str_eq(out, "7/7");
	cr_assert_eq(opts_expand_file("100%%-%p", 1, out, sizeof out), 0);
	cr_assert_str_eq(out, "100%-1");
	cr_assert_eq(opts_expand_file("plain", 1, out, sizeof out), 0);
	cr_assert_str_eq(out, "plain");
	cr_assert_eq(opts_expand_file("x%p", 123456, out, 7), -ENAMETOOLONG);
	cr_assert_eq(opts_expand_file("x%p", 123456, out, 8), 0);
	cr_assert_str_eq(out, "x123456");
}

Test(opts, snapshot_triggers)
{
	struct opts o = ok("log:snapshot=exit");
	cr_assert_eq(o.snap_exit, 1);
	cr_assert_eq(o.snap_ns, 0);
	cr_assert_eq(o.snap_signal, 0);
	o = ok("snapshot=exit+30s+SIGUSR2,calls");
	cr_assert_eq(o.snap_exit, 1);
	cr_assert_eq(o.snap_ns, 30000000000ull);
	cr_assert_eq(o.snap_signal, SIGUSR2);
	cr_assert_eq(o.events, OPTS_CALLS);
	o = ok("snapshot=500ms+USR1");
	cr_assert_eq(o.snap_exit, 0);
	cr_assert_eq(o.snap_ns, 500000000ull);
	cr_assert_eq(o.snap_signal, SIGUSR1);
	o = ok("calls");
	cr_assert_eq(o.snap_exit + o.snap_signal, 0);
	cr_assert_eq(o.snap_ns, 0);
	char err[512];
	const char *b[] = {
	    "snapshot",	      "snapshot=",	"snapshot=exit+",
	    "snapshot=+exit", "snapshot=a++b",	"snapshot=SIGKILL",
	    "snapshot=0",     "snapshot=999us", "snapshot=exit+x"};
	for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
		bad(b[i], err, sizeof err);
		cr_assert_not_null(strstr(err, "snapshot"), "'%s': %s", b[i],
				   err);
	}
}
