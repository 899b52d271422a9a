/*
** Unit tests: the ljlog CLI (exit statuses, check/report/dump output, the
** environment 'record' gives a program). Runs the built ljlog binary.
*/
#define XSTR(x)		   STR(x)
#define STR(x)		   #x
#define FORMAT_VERSION_STR XSTR(FORMAT_VERSION)
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "logbuild.h"

#ifndef BUILDDIR
#define BUILDDIR "."
#endif
#define LJLOG BUILDDIR "/ljlog"

/* Scratch files are named after their test: Criterion runs tests in
** parallel processes. */

/* Test thread. Run a shell command; its exit status (128+N for signal N). */
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int st = system(cmd);
	cr_assert_neq(st, -1);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Test thread. The contents of path (malloc'd, "" when missing). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);
	if (f) {
		size_t n = fread(buf, 1, (1 << 16) - 1, f);
		buf[n] = '\0';
		fclose(f);
	}
	return buf;
}

/* Test thread. Start l (format version, 0: the writer's) with INTRO and
** a MAPPING of VM 1, the prototype 2 of chunk at lines 3-4 and the main
** coroutine 3. */
static void one_vm_log(struct lblog *l, uint64_t version, const char *chunk)
{
	struct lbmap m;
	lblog_init(l);
	l->version = version;
	lblog_intro(l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 77, 1000, 0);
	map_proto(&m, 2, chunk, 3, 4);
	map_co(&m, 3, FORMAT_CO_MAIN);
	lblog_mapping(l, &m);
}

/* Test thread. A small complete log in a temp file; path is static. With
** stop, its END says a write error (ENOSPC) stopped it. */
static const char *small_log_stop(int with_end, int corrupt, int stop)
{
	struct lblog l;
	struct lbev e;
	one_vm_log(&l, 0, "@app \"x\".lua");
	ev_begin(&e);
	ev_vm(&e, FORMAT_VM_ATTACH, 1000, 0);
	ev_switch(&e, 3, 0);
	ev_enter(&e, 1, 2, 5);
	ev_alloc(&e, FORMAT_SITE_LUA, 2, 4, 64, 0x1000, 5);
	ev_exit(&e, 1, 1000000);
	ev_gc(&e, FORMAT_GC_PROPAGATE, 2000, 1);
	lblog_events(&l, 1, 0, &e);
	if (stop) {
		l.stop_error = 28;
		l.stop_reason = "No space left on device";
	}
	if (with_end)
		lblog_end(&l);
	if (corrupt)
		l.file.buf[l.file.len - 5] ^= 1;
	static char path[64];
	snprintf(path, sizeof path, "%s", lblog_write(&l));
	lblog_free(&l);
	return path;
}

/* Test thread. A small complete log (small_log_stop's events) whose END
** counts dropped events (version 17) of format version: 2 buffers, calls
** 8, alloc 3, zones 1; with stop, a write error stopped it; events_dropped
** off by adj (corrupt when not 0). path is static. */
static const char *lost_log(uint64_t version, int stop, int adj)
{
	struct lblog l;
	struct lbev e;
	one_vm_log(&l, version, "@app.lua");
	ev_begin(&e);
	ev_vm(&e, FORMAT_VM_ATTACH, 1000, 0);
	ev_switch(&e, 3, 0);
	ev_enter(&e, 1, 2, 5);
	ev_exit(&e, 1, 1000000);
	lblog_events(&l, 1, 0, &e);
	l.buffers_dropped = 2;
	l.fam_dropped[FORMAT_FAM_CALLS] = 8;
	l.fam_dropped[FORMAT_FAM_ALLOC] = 3;
	l.fam_dropped[FORMAT_FAM_ZONES] = 1;
	l.events_dropped_adj = adj;
	if (stop) {
		l.stop_error = 28;
		l.stop_reason = "No space left on device";
	}
	lblog_end(&l);
	static char path[64];
	snprintf(path, sizeof path, "%s", lblog_write(&l));
	lblog_free(&l);
	return path;
}

/* Test thread. small_log_stop without a write error. */
static const char *small_log(int with_end, int corrupt)
{
	return small_log_stop(with_end, corrupt, 0);
}

Test(cli, top_level)
{
	cr_assert_eq(sh(LJLOG " --help >/dev/null"), 0);
	cr_assert_eq(sh(LJLOG " --version | grep -q 'format version %d'",
			FORMAT_VERSION),
		     0);
	cr_assert_eq(sh(LJLOG " >/dev/null 2>&1"), 2);
	cr_assert_eq(sh(LJLOG " frobnicate 2>/dev/null"), 2);
	cr_assert_eq(sh(LJLOG " --frob 2>/dev/null"), 2);
	const char *cmds[] = {"dump",	"check",  "report", "record",
			      "folded", "export", "flame"};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		cr_assert_eq(sh(LJLOG " %s --help >/dev/null", cmds[i]), 0,
			     "%s", cmds[i]);
		cr_assert_eq(sh(LJLOG " %s --bogus >/dev/null 2>&1", cmds[i]),
			     2, "%s", cmds[i]);
	}
	cr_assert_eq(sh(LJLOG " check >/dev/null 2>&1"), 2);
	cr_assert_eq(sh(LJLOG " check /nonexistent/x.ljlog 2>/dev/null"), 2);
	cr_assert_eq(sh(LJLOG " report /nonexistent/x.ljlog 2>/dev/null"), 2);
	cr_assert_eq(sh(LJLOG " dump /nonexistent/x.ljlog 2>/dev/null"), 2);
	cr_assert_eq(sh(LJLOG " check --help | grep -q 'corrupt'"), 0);
}

Test(cli, check_statuses)
{
	const char *p = small_log(1, 0);
	cr_assert_eq(
	    sh(LJLOG
	       " check %s | grep -q ': ok: complete, 4 blocks, 6 events, 1 VM'",
	       p),
	    0);
	cr_assert_eq(sh(LJLOG " check -q %s", p), 0);
	unlink(p);
	p = small_log(0, 0);
	cr_assert_eq(sh(LJLOG " check %s >/tmp/ljlog-cli-check-out", p), 1);
	char *out = slurp("/tmp/ljlog-cli-check-out");
	cr_assert_not_null(strstr(out, "truncated: file ends at offset"), "%s",
			   out);
	cr_assert_not_null(strstr(out, "valid up to offset"), "%s", out);
	free(out);
	unlink(p);
	p = small_log(1, 1);
	cr_assert_eq(sh(LJLOG " check %s >/tmp/ljlog-cli-check-out", p), 3);
	out = slurp("/tmp/ljlog-cli-check-out");
	cr_assert_not_null(strstr(out, "corrupt: block 3 (END) at offset"),
			   "%s", out);
	cr_assert_not_null(strstr(out, "payload checksum mismatch"), "%s", out);
	free(out);
	unlink(p);
	p = small_log_stop(1, 0, 1);
	cr_assert_eq(sh(LJLOG " check %s >/tmp/ljlog-cli-check-out", p), 4);
	out = slurp("/tmp/ljlog-cli-check-out");
	cr_assert_not_null(strstr(out, "stopped: writing the log failed at "
				       "offset"),
			   "%s", out);
	cr_assert_not_null(strstr(out, "No space left on device (errno 28)"),
			   "%s", out);
	cr_assert_not_null(
	    strstr(out, "complete up to there: 4 blocks, 6 events, 1 VM"), "%s",
	    out);
	free(out);
	cr_assert_eq(sh(LJLOG " report --json %s 2>/dev/null | grep -q "
			      "'\"reason\": \"No space left on device\"'",
			p),
		     0);
	cr_assert_eq(sh(LJLOG " report %s 2>&1 >/dev/null | grep -q 'where "
			      "writing it failed (No space left on device)'",
			p),
		     0);
	unlink(p);
	unlink("/tmp/ljlog-cli-check-out");
}

Test(cli, report_json_and_text)
{
	const char *p = small_log(1, 0);
	cr_assert_eq(
	    sh(LJLOG " report --json %s >/tmp/ljlog-cli-report-out", p), 0);
	char *out = slurp("/tmp/ljlog-cli-report-out");
	const char *want[] = {
	    "\"version\": " FORMAT_VERSION_STR,
	    "\"complete\": true",
	    "\"vms\": 1",
	    "\"coroutines\": 1",
	    "\"events\": 6",
	    "\"attach\": 1000",
	    "\"alloc_bytes\": 64",
	    "\"live\": 1064",
	    "\"peak_heap\": 2000",
	    "\"name\": \"app \\\"x\\\".lua:3\"",
	    "\"kind\": \"lua\"",
	    "\"file\": \"app \\\"x\\\".lua\"",
	    "\"line\": 3",
	    "\"calls\": 1",
	    "\"total_ns\": 1000005",
	    "\"heap_detach\": null",
	    "\"heap_live\": 1064",
	    "\"phase_ns\"",
	    "\"sweepstring\"",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_assert_not_null(strstr(out, want[i]), "no %s in\n%s",
				   want[i], out);
	free(out);
	cr_assert_eq(sh(LJLOG " report %s | grep -q 'app \"x\".lua:3'", p), 0);
	cr_assert_eq(sh(LJLOG " folded %s | grep -q '^app_\"x\".lua:3 '", p),
		     0);
	cr_assert_eq(sh(LJLOG " dump -v %s | grep -q 'ENTER slot 1 func 2'", p),
		     0);
	cr_assert_eq(sh(LJLOG " dump -H %s | grep -c '^block' | grep -q 4", p),
		     0);
	unlink(p);

	/* Truncated: reported, with a warning, status 0; complete false. */
	p = small_log(0, 0);
	cr_assert_eq(
	    sh(LJLOG
	       " report --json %s 2>/tmp/ljlog-cli-report-err >/tmp/ljlog-cli-report-out",
	       p),
	    0);
	out = slurp("/tmp/ljlog-cli-report-out");
	cr_assert_not_null(strstr(out, "\"complete\": false"), "%s", out);
	cr_assert_not_null(strstr(out, "\"events\": 6"), "%s", out);
	free(out);
	out = slurp("/tmp/ljlog-cli-report-err");
	cr_assert_not_null(strstr(out, "truncated"), "%s", out);
	free(out);
	cr_assert_eq(sh(LJLOG " dump %s >/dev/null 2>&1", p), 1);
	unlink(p);
	p = small_log(1, 1);
	cr_assert_eq(sh(LJLOG " report %s >/dev/null 2>&1", p), 3);
	cr_assert_eq(sh(LJLOG " dump %s >/dev/null 2>&1", p), 3);
	unlink(p);
	unlink("/tmp/ljlog-cli-report-out");
	unlink("/tmp/ljlog-cli-report-err");
}

Test(cli, record_validates_before_running)
{
	unlink("/tmp/ljlog-cli-val-ran");
	cr_assert_eq(
	    sh(LJLOG
	       " record -e bogus -- touch /tmp/ljlog-cli-val-ran 2>/tmp/ljlog-cli-val-err"),
	    2);
	cr_assert_neq(access("/tmp/ljlog-cli-val-ran", F_OK), 0,
		      "program not run");
	char *out = slurp("/tmp/ljlog-cli-val-err");
	cr_assert_not_null(strstr(out, "unknown option 'bogus'"), "%s", out);
	cr_assert_not_null(strstr(out, "valid:"), "%s", out);
	free(out);
	cr_assert_eq(sh(LJLOG " record -e flush=10 -- true 2>/dev/null"), 2);
	cr_assert_eq(sh(LJLOG " record -o '' -- true 2>/dev/null"), 2);
	cr_assert_eq(sh(LJLOG " record 2>/dev/null"), 2);
	cr_assert_eq(sh(LJLOG " record -o 2>/dev/null"), 2);
	unlink("/tmp/ljlog-cli-val-err");
}

Test(cli, record_environment_and_status)
{
	const char *show =
	    "-- sh -c 'printf \"%s|%s|%s\" \"$LUAJIT_PROFILE\" "
	    "\"$LUA_CPATH\" \"$LUA_INIT\" >/tmp/ljlog-cli-env-env; exit 7'";
	cr_assert_eq(
	    sh("env -u LUA_CPATH -u LUA_INIT LJLOG_MODULE_DIR=/opt/m " LJLOG
	       " record -o /tmp/o-%%p.ljlog -e calls,flush=100ms %s 2>/dev/null",
	       show),
	    7);
	char *out = slurp("/tmp/ljlog-cli-env-env");
	cr_assert_str_eq(out, "log:file=/tmp/o-%p.ljlog,calls,flush=100ms|"
			      "/opt/m/?.so;;|require(\"ljlog\")");
	free(out);

	cr_assert_eq(
	    sh("LUA_CPATH='/x/?.so' LUA_INIT='print(1)' LJLOG_MODULE_DIR=/opt/m " LJLOG
	       " record %s 2>/dev/null",
	       show),
	    7);
	out = slurp("/tmp/ljlog-cli-env-env");
	cr_assert_str_eq(
	    out, "log|/opt/m/?.so;/x/?.so|require(\"ljlog\")\nprint(1)");
	free(out);

	cr_assert_eq(
	    sh("env -u LUA_CPATH LUA_INIT='@/tmp/in \"it\".lua' LJLOG_MODULE_DIR=/opt/m " LJLOG
	       " record -e alloc %s 2>/dev/null",
	       show),
	    7);
	out = slurp("/tmp/ljlog-cli-env-env");
	cr_assert_str_eq(
	    out, "log:alloc|/opt/m/?.so;;|"
		 "require(\"ljlog\") dofile(\"/tmp/in \\\"it\\\".lua\")");
	free(out);
	unlink("/tmp/ljlog-cli-env-env");

	/* Without LJLOG_MODULE_DIR: the build tree's lua/ next to ljlog. The
	** shell exits 0 without a VM: 125, no LuaJIT VM was profiled. */
	show =
	    "-- sh -c 'printf \"%s\" \"$LUA_CPATH\" >/tmp/ljlog-cli-env-env'";
	if (access(BUILDDIR "/lua/ljlog.so", F_OK) == 0) {
		cr_assert_eq(sh("env -u LJLOG_MODULE_DIR -u LUA_CPATH " LJLOG
				" record %s 2>/dev/null",
				show),
			     125);
		out = slurp("/tmp/ljlog-cli-env-env");
		cr_assert_not_null(strstr(out, "/lua/?.so;;"), "%s", out);
		free(out);
		unlink("/tmp/ljlog-cli-env-env");
	}

	cr_assert_eq(sh("LJLOG_MODULE_DIR=/opt/m " LJLOG
			" record -- sh -c 'kill -TERM $$' 2>/dev/null"),
		     128 + 15);
	cr_assert_eq(
	    sh("LJLOG_MODULE_DIR=/opt/m " LJLOG
	       " record -- /nonexistent/program 2>/tmp/ljlog-cli-env-err"),
	    127);
	out = slurp("/tmp/ljlog-cli-env-err");
	cr_assert_not_null(strstr(out, "cannot run '/nonexistent/program'"),
			   "%s", out);
	free(out);
	unlink("/tmp/ljlog-cli-env-err");
}

/* -- Samples ------------------------------------------------------------------------ */

/* Test thread. A complete log with samples and trace events: main calls
** lua_pcall into the interpreter, which runs app.lua:10 (F) at line 12,
** F calls io.write (a CFUNC, and a HOSTSYM at its address) into memcpy;
** one sample in trace 1, one idle. Path is static. */
static const char *sampled_log(void)
{
	struct lblog l;
	struct lbmap m;
	struct lbev e;
	struct lbsam s;
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 77, 1000, 0);
	map_proto(&m, 2, "@app.lua", 0, 40);
	map_proto(&m, 3, "@app.lua", 10, 8);
	map_cfunc(&m, 4, 0x5000, "io.write", "/usr/lib/lua.so");
	map_hostsym(&m, 10, 0x1000, "main", "/usr/bin/luajit", 0);
	map_hostsym(&m, 11, 0x2000, "lua_pcall", "/usr/lib/libluajit.so", 0);
	map_hostsym(&m, 12, 0x3000, "(luajit interpreter)",
		    "/usr/lib/libluajit.so", FORMAT_HOST_VM);
	map_hostsym(&m, 13, 0x5000, "l_write", "/usr/lib/lua.so", 0);
	map_hostsym(&m, 14, 0x6000, "memcpy", "/lib/libc.so.6", 0);
	map_hostsym(&m, 15, 0x7000, "", "/usr/lib/libfoo.so", 0);
	map_trace(&m, 20, 1, 3, 12, 0);
	lblog_mapping(&l, &m);
	ev_begin(&e);
	ev_trace_start(&e, 1, 3, 12, 1);
	ev_trace_stop(&e, 20, 1);
	ev_trace_abort(&e, 2, 3, 14, 7, "NYI: bytecode \"72\"", 1);
	ev_trace_flush(&e, 1);
	lblog_events(&l, 1, 0, &e);
	static const uint64_t lf[] = {3, 12, 2, 30};
	static const uint64_t lw[] = {4, 0, 3, 13, 2, 30};
	static const uint64_t hb[] = {12, 11, 10};
	static const uint64_t hw[] = {14, 13, 12, 11, 10};
	static const uint64_t ha[] = {15, 12, 11, 10};
	sam_begin(&s);
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, lf, 3, hb);
	sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 2, lf, 3, hb);
	sam_add(&s, 1, FORMAT_STATE_C, 0, 3, lw, 5, hw);
	sam_add(&s, 1, FORMAT_STATE_TRACE, 20, 2, lf, 0, NULL);
	sam_add(&s, 1, FORMAT_STATE_IDLE, 0, 0, NULL, 0, NULL);
	sam_add(&s, 1, FORMAT_STATE_C, 0, 2, lf, 4, ha);
	lblog_samples(&l, 1, 100, 77, 2, &s);
	lblog_end(&l);
	static char path[64];
	snprintf(path, sizeof path, "%s", lblog_write(&l));
	lblog_free(&l);
	return path;
}

/* Test thread. The output of cmd (a format with one %s: the log), through
** a scratch file of its own (tests run in parallel). */
static char *out_of(const char *cmd, const char *log)
{
	char full[1024], tmp[64];
	snprintf(tmp, sizeof tmp, "/tmp/ljlog-cli-smp-XXXXXX");
	int fd = mkstemp(tmp);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(full, sizeof full, cmd, log);
	cr_assert_eq(sh("%s >%s 2>&1", full, tmp), 0, "%s", full);
	char *out = slurp(tmp);
	unlink(tmp);
	return out;
}

/* Test thread. out holds the whole line want. */
static void has_line(const char *out, const char *want)
{
	size_t n = strlen(want);
	for (const char *s = out; (s = strstr(s, want)); s++)
		if ((s == out || s[-1] == '\n') && s[n] == '\n')
			return;
	cr_assert_fail("no line '%s' in:\n%s", want, out);
}

Test(cli, samples_check_and_dump)
{
	const char *p = sampled_log();
	char *out = out_of(LJLOG " check %s", p);
	cr_assert_not_null(strstr(out, ": ok: complete, 6 blocks, 4 events, 1 "
				       "VM, 6 samples (2 dropped)"),
			   "%s", out);
	free(out);
	out = out_of(LJLOG " dump -v %s", p);
	const char *want[] = {
	    "block 3 at offset",
	    ": MAPPING, ",
	    "  STACK 1048578 lua 3 [4:0 3:13 2:30] host 5 [14 13 12 11 10]",
	    "block 4 at offset",
	    ": SAMPLES, ",
	    "  vm 1, 6 samples, base_ts 100, thread 77, signals 8, dropped 2",
	    "  TRACE 20 traceno 1 proto 3 (app.lua:10) line 12 root 0",
	    "  HOSTSYM 12 address 0x3000 name \"(luajit interpreter)\" object "
	    "\"/usr/lib/libluajit.so\" flags 0x1 (vm)",
	    "VM TRACE_START traceno 1 proto 3 (app.lua:10) line 12",
	    "VM TRACE_STOP trace 20 traceno 1",
	    "VM TRACE_ABORT traceno 2 proto 3 (app.lua:10) line 14 reason 7 "
	    "\"NYI: bytecode \\\"72\\\"\"",
	    "VM TRACE_FLUSH",
	    "    ts 103 state c stack 1048578 lua 3 [io.write, app.lua:13, app.lua:30] host 5 "
	    "[memcpy+/lib/libc.so.6, l_write+/usr/lib/lua.so, (luajit "
	    "interpreter)+/usr/lib/libluajit.so, "
	    "lua_pcall+/usr/lib/libluajit.so, main+/usr/bin/luajit]",
	    "    ts 104 state trace stack 1048579 trace 20 (traceno 1) lua 2 "
	    "[app.lua:12, "
	    "app.lua:30] host 0 []",
	    "    ts 105 state idle lua 0 [] host 0 []",
	    "0x7000+/usr/lib/libfoo.so",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_assert_not_null(strstr(out, want[i]), "no '%s' in\n%s",
				   want[i], out);
	free(out);
	/* Without -v: the block's header line, no samples. */
	out = out_of(LJLOG " dump %s", p);
	cr_assert_not_null(strstr(out, "6 samples, base_ts 100"), "%s", out);
	cr_assert_null(strstr(out, "state idle"), "%s", out);
	free(out);
	unlink(p);
}

Test(cli, samples_report)
{
	const char *p = sampled_log();
	char *out = out_of(LJLOG " report --json %s", p);
	const char *want[] = {
	    "\"samples\": 6,",
	    "\"samples_dropped\": 2,",
	    "\"signals\": 8,",
	    "\"states\": {\n    \"interp\": 2,\n    \"c\": 2,\n    \"gc\": "
	    "0,\n    \"exit\": 0,\n    \"record\": 0,\n    \"opt\": 0,\n    "
	    "\"asm\": 0,\n    \"trace\": 1,\n    \"idle\": 1,\n    "
	    "\"ljlog\": 0\n  }",
	    "\"ljlog_intervals\": 0,",
	    "\"trace_flushes\": 1,",
	    "\"name\": \"app.lua:10\",\n      \"kind\": \"lua\",",
	    "\"samples\": 4,\n      \"samples_total\": 5,\n      "
	    "\"samples_lua\": 5,\n      \"via\": \"io.write\",\n      "
	    "\"via_samples\": 1\n",
	    "\"name\": \"memcpy\",\n      \"kind\": \"host\",\n      \"file\": "
	    "\"/lib/libc.so.6\"",
	    "\"name\": \"[libfoo.so]\",\n      \"kind\": \"host\"",
	    "\"samples_by_line\": [\n    {\n      \"name\": \"app.lua:10\",\n "
	    "     \"file\": \"app.lua\",\n      \"line\": 12,\n      "
	    "\"samples\": 4\n    },\n    {\n      \"name\": \"app.lua:10\",\n  "
	    "    \"file\": \"app.lua\",\n      \"line\": 13,\n      "
	    "\"samples\": 1\n    }\n  ]",
	    "\"traces\": [\n    {\n      \"log\": 0,\n      \"vm\": 1,\n"
	    "      \"traceno\": 1,\n"
	    "      \"name\": "
	    "\"app.lua:12\",\n      \"root\": 0,\n      \"samples\": 1\n    "
	    "}\n  ]",
	    "\"trace_aborts\": [\n    {\n      \"reason\": 7,\n      "
	    "\"message\": \"NYI: bytecode \\\"72\\\"\",\n      \"count\": 1\n  "
	    "  }\n  ]",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_assert_not_null(strstr(out, want[i]), "no '%s' in\n%s",
				   want[i], out);
	cr_assert_null(strstr(out, "l_write"), "%s", out);
	free(out);

	out = out_of(LJLOG " report %s", p);
	const char *text[] = {
	    "Samples: 6 (2 dropped, 8 signals)",
	    "    interp            2   33.3%",
	    /* io.write's sample counts for app.lua:10, which called it. */
	    "\n         5   83.3%           5   83.3%  app.lua:10, 20% in "
	    "io.write\n",
	    "\n         0    0.0%           1   16.7%  io.write "
	    "[/usr/lib/lua.so]\n",
	    "\n         0    0.0%           1   16.7%  memcpy "
	    "[/lib/libc.so.6]\n",
	    /* A frame without a symbol: its object once (issue 38, 7). */
	    "\n         0    0.0%           1   16.7%  [/usr/lib/libfoo.so]\n",
	    "\n         4   66.7%  app.lua:12 (function app.lua:10)\n",
	    "Traces: 1 compiled, 1 started, 1 aborted, 1 flush",
	    "\n       1         0           1  app.lua:12\n",
	    "\n       1         7  \"NYI: bytecode \\\"72\\\"\"\n",
	    "  heap@attach  heap@detach",
	    "\n     1         77            4          6       0       1000 B "
	    "           -       1000 B       1000 B\n",
	    "  heap: 1000 B at attach + 0 B allocated (0 allocs) - 0 B freed",
	};
	for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
		cr_assert_not_null(strstr(out, text[i]), "no '%s' in\n%s",
				   text[i], out);
	/* The default header: the program, no time base; -v adds it. */
	cr_assert_eq(
	    strncmp(out, "ljlog report: /usr/bin/luajit (pid 1), ran ", 43), 0,
	    "%s", out);
	cr_assert_null(strstr(out, "time base"), "%s", out);
	free(out);
	out = out_of(LJLOG " report -v %s", p);
	cr_assert_not_null(strstr(out, "\n  time base: "), "%s", out);
	free(out);
	/* --builtins: io.write's sample is its own again. */
	out = out_of(LJLOG " report --builtins %s", p);
	const char *own[] = {
	    "(self: innermost Lua frame, a builtin its own; total: anywhere "
	    "in the stack)",
	    "\n         4   66.7%           5   83.3%  app.lua:10\n",
	    "\n         1   16.7%           1   16.7%  io.write "
	    "[/usr/lib/lua.so]\n",
	};
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		cr_assert_not_null(strstr(out, own[i]), "no '%s' in\n%s",
				   own[i], out);
	free(out);
	unlink(p);
}

Test(cli, samples_folded)
{
	const char *p = sampled_log();
	/* Default on a log with samples: Lua-first stacks (no way in, no
	** trace frame; the C code io.write and the Lua function reach). */
	char *out = out_of(LJLOG " folded %s", p);
	has_line(out, "main_chunk_(app.lua);app.lua:10 3");
	has_line(out, "main_chunk_(app.lua);app.lua:10;io.write;memcpy 1");
	has_line(out, "(idle) 1");
	has_line(out, "main_chunk_(app.lua);app.lua:10;[libfoo.so] 1");
	cr_assert_null(strstr(out, "main;"), "%s", out);
	cr_assert_null(strstr(out, "trace"), "%s", out);
	cr_assert_null(strstr(out, "l_write"), "%s", out);
	free(out);

	/* --host: merged sampled stacks. */
	out = out_of(LJLOG " folded --host %s", p);
	has_line(out, "main;lua_pcall;main_chunk_(app.lua);app.lua:10 2");
	has_line(
	    out,
	    "main;lua_pcall;main_chunk_(app.lua);app.lua:10;io.write;memcpy 1");
	has_line(out, "main_chunk_(app.lua);app.lua:10;trace 1 1");
	has_line(out, "(idle) 1");
	has_line(
	    out,
	    "main;lua_pcall;main_chunk_(app.lua);app.lua:10;[libfoo.so] 1");
	cr_assert_null(strstr(out, "l_write"), "%s", out);
	cr_assert_null(strstr(out, "interpreter"), "%s", out);
	free(out);

	out = out_of(LJLOG " folded --host --no-traces %s", p);
	has_line(out, "main_chunk_(app.lua);app.lua:10 1");
	cr_assert_null(strstr(out, "trace"), "%s", out);
	free(out);

	out = out_of(LJLOG " folded --lua %s", p);
	has_line(out, "main_chunk_(app.lua);app.lua:10 3");
	has_line(out, "main_chunk_(app.lua);app.lua:10;io.write 1");
	has_line(out, "main_chunk_(app.lua);app.lua:10;trace 1 1");
	has_line(out, "(idle) 1");
	free(out);

	out = out_of(LJLOG " folded --host-only %s", p);
	has_line(out, "main;lua_pcall;(luajit_interpreter) 2");
	has_line(out, "main;lua_pcall;(luajit_interpreter);io.write;memcpy 1");
	has_line(out, "main;lua_pcall;(luajit_interpreter);[libfoo.so] 1");
	has_line(out, "(trace) 1");
	has_line(out, "(idle) 1");
	free(out);

	out = out_of(LJLOG " folded --lines %s", p);
	has_line(out, "app.lua:30;app.lua:12 3");
	has_line(out, "app.lua:30;app.lua:13;io.write;memcpy 1");
	free(out);

	out = out_of(LJLOG " folded --host --lines %s", p);
	has_line(out, "main;lua_pcall;app.lua:30;app.lua:12 2");
	has_line(out, "main;lua_pcall;app.lua:30;app.lua:13;io.write;memcpy 1");
	free(out);

	out = out_of(LJLOG " folded --lua --lines --no-traces %s", p);
	has_line(out, "app.lua:30;app.lua:12 4");
	free(out);

	/* --calls: the call stacks (this log has no calls events). */
	out = out_of(LJLOG " folded --calls %s", p);
	cr_assert_str_eq(out, "");
	free(out);

	cr_assert_eq(sh(LJLOG " folded --calls --lua %s 2>/dev/null", p), 2);
	cr_assert_eq(sh(LJLOG " folded --lua --host %s 2>/dev/null", p), 2);
	cr_assert_eq(sh(LJLOG " folded --host --host-only %s 2>/dev/null", p),
		     2);
	/* Two logs (here the same one twice) merge: each count doubles. */
	char two[512];
	snprintf(two, sizeof two, "%s %s", p, p);
	out = out_of(LJLOG " folded --lua --lines --no-traces %s", two);
	has_line(out, "app.lua:30;app.lua:12 8");
	free(out);
	cr_assert_eq(sh(LJLOG " folded --help | grep -q -- --no-traces"), 0);
	unlink(p);

	/* No samples: call stacks by default; a sample view says so. */
	p = small_log(1, 0);
	out = out_of(LJLOG " folded %s", p);
	cr_assert_not_null(strstr(out, "app_\"x\".lua:3 "), "%s", out);
	free(out);
	out = out_of(LJLOG " folded --lua %s", p);
	cr_assert_not_null(strstr(out, "no samples"), "%s", out);
	free(out);
	/* --count: calls by path instead of self time (implies --calls). */
	out = out_of(LJLOG " folded --count %s", p);
	cr_assert_str_eq(out, "app_\"x\".lua:3 1\n");
	free(out);
	out = out_of(LJLOG " folded --calls --count %s", p);
	cr_assert_str_eq(out, "app_\"x\".lua:3 1\n");
	free(out);
	cr_assert_eq(sh(LJLOG " folded --count --lua %s 2>/dev/null", p), 2);
	cr_assert_eq(sh(LJLOG " folded --help | grep -q -- --count"), 0);
	unlink(p);
}

/* -- Heap snapshots and allocation sites -------------------------------------- */

/* Test thread. One OBJECT record without references. */
static void hobj(struct lb *p, struct lbheap *h, uint64_t id, unsigned type,
		 uint64_t size, uint64_t addr, const char *text)
{
	lbh_obj(p, h, id, addr, type, size, 0, text);
	lb_u8(p, 0);
}

/* Test thread. A log of the given format version with PROTO 2 ("@t.lua")
** allocating: 0x1000 (line 3, 64 bytes), 0x2000 (line 3, freed, then line
** 9, 48 bytes), 0x5000 (line 5, then reallocated to 0x3000 at line 7, 40
** bytes); then one snapshot in two HEAP blocks: table #1 at 0x3000, table
** #2 at 0x1000, string #3 at 0x2000; string #4 at 0x4000 (no block) and
** string #5 at 0x5000 (moved away). Path static. */
static const char *site_log(uint64_t version)
{
	struct lblog l;
	struct lbmap m;
	struct lbev e;
	struct lb p = {0};
	struct lbheap h;
	lblog_init(&l);
	lblog_intro_version(&l, 1, version);
	map_begin(&m, 1);
	map_vm(&m, 1, 77, 1000, 0);
	map_proto(&m, 2, "@t.lua", 1, 20);
	map_co(&m, 3, FORMAT_CO_MAIN);
	lblog_mapping(&l, &m);
	ev_begin(&e);
	e.version = version;
	ev_alloc(&e, FORMAT_SITE_LUA, 2, 3, 64, 0x1000, 1);
	ev_alloc(&e, FORMAT_SITE_LUA, 2, 3, 64, 0x2000, 1);
	ev_free(&e, 0x2000, 64, 1);
	ev_alloc(&e, FORMAT_SITE_LUA, 2, 9, 48, 0x2000, 1);
	ev_alloc(&e, FORMAT_SITE_LUA, 2, 5, 10, 0x5000, 1);
	ev_realloc(&e, FORMAT_SITE_LUA, 2, 7, 0x5000, 10, 0x3000, 40, 1);
	lblog_events(&l, 1, 0, &e);
	lb_uleb(&p, 1); /* vm */
	lb_uleb(&p, 1); /* snapshot */
	lbh_begin(&h, version);
	hobj(&p, &h, 1, FORMAT_HTYPE_TABLE, 40, 0x3000, "array 0 hash 1");
	hobj(&p, &h, 2, FORMAT_HTYPE_TABLE, 64, 0x1000, "array 2 hash 0");
	hobj(&p, &h, 3, FORMAT_HTYPE_STRING, 48, 0x2000, "s3");
	lblog_block(&l, FORMAT_KIND_HEAP, p.buf, p.len);
	p.len = 0;
	lbh_begin(&h, version); /* each HEAP block starts from 0 */
	lb_uleb(&p, 1);
	lb_uleb(&p, 1);
	hobj(&p, &h, 4, FORMAT_HTYPE_STRING, 30, 0x4000, "s4");
	hobj(&p, &h, 5, FORMAT_HTYPE_STRING, 10, 0x5000, "s5");
	lb_u8(&p, FORMAT_HEAP_SUMMARY);
	for (int i = 0; i < 3; i++)
		lb_uleb(&p, 100); /* CLOCK */
	lb_u8(&p, 0);		  /* gc_state */
	lb_uleb(&p, 5);		  /* objects */
	lb_uleb(&p, 192);	  /* bytes */
	lb_uleb(&p, 0);		  /* unreachable */
	lb_uleb(&p, 192);	  /* gc_total */
	lb_uleb(&p, 0);		  /* nparts */
	lb_uleb(&p, 1);		  /* pause_ns */
	lblog_block(&l, FORMAT_KIND_HEAP, p.buf, p.len);
	lb_free(&p);
	lblog_end(&l);
	static char path[64];
	snprintf(path, sizeof path, "%s", lblog_write(&l));
	lblog_free(&l);
	return path;
}

Test(cli, heap_by_site)
{
	const char *p = site_log(FORMAT_VERSION);
	cr_assert_eq(sh(LJLOG " check %s >/dev/null", p), 0);
	char *out = out_of(LJLOG " heap --by site %s", p);
	has_line(out, "         1       64 B  t.lua:1 line 3");
	has_line(out, "         1       48 B  t.lua:1 line 9");
	has_line(out, "         1       40 B  t.lua:1 line 7");
	has_line(out, "         2       40 B  (no site: allocated before "
		      "ljlog attached)");
	cr_assert_lt(strstr(out, "line 3"), strstr(out, "line 9"), "%s", out);
	cr_assert_lt(strstr(out, "line 9"), strstr(out, "line 7"), "%s", out);
	free(out);
	out = out_of(LJLOG " heap --by site --snapshot 1 --json %s", p);
	cr_assert_not_null(strstr(out, "\"has_sites\": true"), "%s", out);
	cr_assert_not_null(strstr(out, "\"site\": \"t.lua:1 line 7\",\n"
				       "      \"function\": \"t.lua:1\",\n"
				       "      \"kind\": \"lua\",\n"
				       "      \"file\": \"t.lua\",\n"
				       "      \"line\": 7,\n"
				       "      \"objects\": 1,\n"
				       "      \"bytes\": 40"),
			   "%s", out);
	cr_assert_not_null(strstr(out, "\"no_site_objects\": 2,\n"
				       "  \"no_site_bytes\": 40,"),
			   "%s", out);
	free(out);
	/* dump shows each object's address. */
	out = out_of(LJLOG " dump -v %s", p);
	has_line(out, "    object #5 string size 10 at 0x5000 \"s5\"");
	has_line(out,
		 "    object #1 table size 40 at 0x3000 \"array 0 hash 1\"");
	free(out);
	unlink(p);
}

Test(cli, heap_version_9_has_no_sites)
{
	const char *p = site_log(9);
	cr_assert_eq(sh(LJLOG " check %s >/dev/null", p), 0);
	char out_path[64];
	snprintf(out_path, sizeof out_path, "/tmp/ljlog-cli-v9-XXXXXX");
	int fd = mkstemp(out_path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(sh(LJLOG " heap --by site %s >%s 2>&1", p, out_path), 1);
	char *out = slurp(out_path);
	has_line(out, "snapshot 1: no sites: this log's HEAP objects carry no "
		      "addresses (format version 8 or 9), so no ALLOC can be "
		      "matched with them");
	free(out);
	cr_assert_eq(
	    sh(LJLOG " heap --by site --json %s >%s 2>&1", p, out_path), 1);
	out = slurp(out_path);
	cr_assert_not_null(strstr(out, "\"has_sites\": false"), "%s", out);
	cr_assert_not_null(strstr(out, "\"no_site_objects\": 5"), "%s", out);
	free(out);
	unlink(out_path);
	/* The rest reads as before. */
	out = out_of(LJLOG " heap --by type %s", p);
	has_line(out, "table               2      104 B");
	has_line(out, "string              3       88 B");
	free(out);
	out = out_of(LJLOG " dump -v %s", p);
	has_line(out, "    object #5 string size 10 \"s5\"");
	free(out);
	unlink(p);
}

/* -- NAME records (version 14) ----------------------------------------------- */

/* Test thread. A log of pid: PROTO 2 @app.lua:4 without a name, a call of
** it and three samples in it; then (from *cut on) a NAME of it ("fib"),
** two more samples, END. */
static void name_log(struct lblog *l, uint64_t pid, size_t *cut)
{
	struct lbmap m;
	struct lbev e;
	struct lbsam s;
	const uint64_t lua[] = {2, 5};
	lblog_init(l);
	lblog_intro(l, pid);
	map_begin(&m, 1);
	map_vm(&m, 1, 77, 1000, 0);
	map_proto(&m, 2, "@app.lua", 4, 3);
	lblog_mapping(l, &m);
	ev_begin(&e);
	ev_enter(&e, 1, 2, 5);
	ev_exit(&e, 1, 1000);
	lblog_events(l, 1, 0, &e);
	sam_begin(&s);
	for (int i = 0; i < 3; i++)
		sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 1, lua, 0, NULL);
	lblog_samples(l, 1, 2000, 77, 0, &s);
	*cut = l->file.len;
	map_begin(&m, 1);
	map_name(&m, 2, "fib");
	lblog_mapping(l, &m);
	sam_begin(&s);
	for (int i = 0; i < 2; i++)
		sam_add(&s, 1, FORMAT_STATE_INTERP, 0, 1, lua, 0, NULL);
	lblog_samples(l, 1, 3000, 77, 0, &s);
	lblog_end(l);
}

Test(cli, name_in_dump_and_reports)
{
	struct lblog l;
	size_t cut;
	name_log(&l, 1, &cut);
	const char *p = lblog_write(&l);
	lblog_free(&l);
	char *out = out_of(LJLOG " dump %s", p);
	has_line(out, "  PROTO 2 chunk \"@app.lua\" firstline 4 numline 3 name "
		      "\"\"");
	has_line(out, "  NAME 2 \"fib\"");
	free(out);
	/* Reports are made at the end: the last name. */
	out = out_of(LJLOG " report --json %s", p);
	cr_assert_not_null(strstr(out, "\"name\": \"fib (app.lua:4)\",\n      "
				       "\"kind\": \"lua\""),
			   "%s", out);
	cr_assert_null(strstr(out, "\"app.lua:4\""), "%s", out);
	free(out);
	out = out_of(LJLOG " folded %s", p);
	has_line(out, "fib_(app.lua:4) 5");
	free(out);
	out = out_of(LJLOG " top --once -n 0 %s", p);
	cr_assert_not_null(strstr(out, "  fib (app.lua:4)\n"), "%s", out);
	free(out);
	unlink(p);
}

/* Test thread. Wait up to 20 s for path to hold want; its contents. */
static char *wait_for(const char *path, const char *want)
{
	for (int i = 0;; i++) {
		char *s = slurp(path);
		if (strstr(s, want) || i == 2000)
			return s;
		free(s);
		usleep(10000);
	}
}

Test(cli, top_shows_a_name_that_comes_later)
{
	struct lblog l;
	size_t cut;
	char log[64], out[80], st[80];
	snprintf(log, sizeof log, "/tmp/ljlog-cli-top-name-XXXXXX");
	int fd = mkstemp(log);
	cr_assert_geq(fd, 0);
	/* This process writes it: top follows it while we live. */
	name_log(&l, (uint64_t)getpid(), &cut);
	cr_assert_eq(write(fd, l.file.buf, cut), (ssize_t)cut);
	snprintf(out, sizeof out, "%s.out", log);
	snprintf(st, sizeof st, "%s.st", log);
	cr_assert_eq(sh("(" LJLOG " top -d 0.05 -n 0 %s >%s 2>&1; "
			"echo $? >%s.tmp; mv %s.tmp %s) &",
			log, out, st, st, st),
		     0);
	/* A frame before the NAME: the function has no name yet. */
	char *s = wait_for(out, "  app.lua:4\n");
	cr_assert_not_null(strstr(s, "  app.lua:4\n"), "%s", s);
	free(s);
	cr_assert_eq(write(fd, l.file.buf + cut, l.file.len - cut),
		     (ssize_t)(l.file.len - cut));
	close(fd);
	lblog_free(&l);
	s = wait_for(st, "\n");
	cr_assert_str_eq(s, "0\n");
	free(s);
	/* The frame at the END block: the name, the samples before it too. */
	s = slurp(out);
	const char *last = strstr(s, "(end) ==");
	cr_assert_not_null(last, "%s", s);
	cr_assert_not_null(strstr(last, "  fib (app.lua:4)\n"), "%s", s);
	cr_assert_not_null(strstr(last, "samples 5,"), "%s", s);
	cr_assert_null(strstr(last, "  app.lua:4\n"), "%s", s);
	free(s);
	unlink(log);
	unlink(out);
	unlink(st);
}

/* Version 17: a log whose END counts dropped events is complete with
** losses (check: status 5, what is missing); report says it in text and
** JSON, dump shows the fields; a version 16 END has none. */
Test(cli, check_and_report_losses)
{
	const char *p = lost_log(0, 0, 0);
	const char *o = "/tmp/ljlog-cli-losses-out",
		   *e = "/tmp/ljlog-cli-losses-err";
	cr_assert_eq(sh(LJLOG " check %s >%s", p, o), 5);
	char *out = slurp(o);
	cr_assert_not_null(
	    strstr(out, ": ok with losses: complete, 4 blocks, 4 events, 1 VM"),
	    "%s", out);
	cr_assert_not_null(strstr(out, ": 12 events (calls 8, alloc 3, zones "
				       "1) are missing: ljlog ran out of "
				       "memory and dropped 2 buffers\n"),
			   "%s", out);
	free(out);
	cr_assert_eq(sh(LJLOG " check -q %s >%s", p, o), 5);
	out = slurp(o);
	cr_assert_str_eq(out, "");
	free(out);

	cr_assert_eq(sh(LJLOG " report %s >%s 2>%s", p, o, e), 0);
	out = slurp(o);
	cr_assert_not_null(strstr(out,
				  "  missing: 12 events (calls 8, alloc 3, "
				  "zones 1), in 2 buffers ljlog dropped "
				  "when out of memory"),
			   "%s", out);
	free(out);
	out = slurp(e);
	cr_assert_not_null(strstr(out, "warning: 12 events (calls 8, alloc 3, "
				       "zones 1) are missing"),
			   "%s", out);
	free(out);
	cr_assert_eq(sh(LJLOG " report --json %s >%s 2>/dev/null", p, o), 0);
	out = slurp(o);
	const char *want[] = {
	    "\"events_dropped\": 12",
	    "\"buffers_dropped\": 2",
	    "\"events_dropped_by_family\": {",
	    "\"calls\": 8",
	    "\"alloc\": 3",
	    "\"zones\": 1",
	    "\"gc\": 0",
	    "\"sample\": 0",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_assert_not_null(strstr(out, want[i]), "no %s in\n%s",
				   want[i], out);
	free(out);
	cr_assert_eq(sh(LJLOG " dump %s | grep -q 'events_dropped 12, "
			      "buffers_dropped 2, calls 8, alloc 3, zones 1'",
			p),
		     0);
	unlink(p);

	/* Stopped by a write error, with losses: 4, and the losses said. */
	p = lost_log(0, 1, 0);
	cr_assert_eq(sh(LJLOG " check %s >%s", p, o), 4);
	out = slurp(o);
	cr_assert_not_null(strstr(out, "stopped: writing the log failed"), "%s",
			   out);
	cr_assert_not_null(strstr(out, "12 events (calls 8, alloc 3, zones "
				       "1) are missing"),
			   "%s", out);
	free(out);
	unlink(p);

	/* Families that do not add up to events_dropped: corrupt. */
	p = lost_log(0, 0, 1);
	cr_assert_eq(sh(LJLOG " check %s >%s", p, o), 3);
	out = slurp(o);
	cr_assert_not_null(strstr(out, "corrupt: "), "%s", out);
	cr_assert_not_null(strstr(out, "END counts 13 dropped events, its "
				       "families 12"),
			   "%s", out);
	free(out);
	unlink(p);

	/* Version 16: no such fields, nothing dropped, status 0. */
	p = lost_log(16, 0, 0);
	cr_assert_eq(sh(LJLOG " check %s >%s", p, o), 0);
	out = slurp(o);
	cr_assert_not_null(strstr(out, ": ok: complete"), "%s", out);
	free(out);
	cr_assert_eq(sh(LJLOG " report --json %s 2>/dev/null | grep -q "
			      "'\"events_dropped\": 0'",
			p),
		     0);
	unlink(p);
	unlink(o);
	unlink(e);
}
