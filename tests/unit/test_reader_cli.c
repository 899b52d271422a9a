/*
** Unit tests: the ljlog CLI (exit statuses, check/report/dump output, the
** environment 'record' gives a program). Runs the built ljlog binary.
*/
#define XSTR(x) STR(x)
#define STR(x) #x
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

/* Test thread. A small complete log in a temp file; path is static. */
static const char *small_log(int with_end, int corrupt)
{
	struct lblog l;
	struct lbmap m;
	struct lbev e;
	lblog_init(&l);
	lblog_intro(&l, 1);
	map_begin(&m, 1);
	map_vm(&m, 1, 77, 1000, 0);
	map_proto(&m, 2, "@app \"x\".lua", 3, 4);
	map_co(&m, 3, FORMAT_CO_MAIN);
	lblog_mapping(&l, &m);
	ev_begin(&e);
	ev_vm(&e, FORMAT_VM_ATTACH, 1000, 0);
	ev_switch(&e, 3, 0);
	ev_enter(&e, 1, 2, 5);
	ev_alloc(&e, FORMAT_SITE_LUA, 2, 4, 64, 0x1000, 5);
	ev_exit(&e, 1, 1000000);
	ev_gc(&e, FORMAT_GC_PROPAGATE, 2000, 1);
	lblog_events(&l, 1, 0, &e);
	if (with_end)
		lblog_end(&l);
	if (corrupt)
		l.file.buf[l.file.len - 5] ^= 1;
	static char path[64];
	snprintf(path, sizeof path, "%s", lblog_write(&l));
	lblog_free(&l);
	return path;
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
	const char *cmds[] = {"dump", "check", "report", "record", "folded"};
	for (size_t i = 0; i < 5; i++) {
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
	cr_assert_eq(sh(LJLOG " record -o a,b -- true 2>/dev/null"), 2);
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

	/* Without LJLOG_MODULE_DIR: the build tree's lua/ next to ljlog. */
	show =
	    "-- sh -c 'printf \"%s\" \"$LUA_CPATH\" >/tmp/ljlog-cli-env-env'";
	if (access(BUILDDIR "/lua/ljlog.so", F_OK) == 0) {
		cr_assert_eq(sh("env -u LJLOG_MODULE_DIR -u LUA_CPATH " LJLOG
				" record %s 2>/dev/null",
				show),
			     0);
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
