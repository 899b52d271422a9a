#!/usr/bin/env bash
# ljlog e2e: where the log goes (doc/ljlog.1 "OUTPUT"). file=|COMMAND
# streams the log into a shell command (gzip) and the reader reads the
# gzip-compressed log directly (a cut one says "truncated"); fd=N writes to
# an inherited descriptor; a descriptor that is not open, a command that
# exits at once or with an error, and a pipe whose reader leaves each give
# one message while the program runs on to its normal end. The file is made
# with the user's umask and close-on-exec (a program the profiled one execs
# inherits no log descriptor); a symlink at the path that belongs to another
# user is refused (as root: chown -h nobody), one of our own is followed.
# Call counts of f are checked against the program's own count (JIT off).
. "$(dirname "$0")/lib.sh"

prog=$E2E/outputs.lua
n=3000

# run LABEL OPTIONS [REDIRECTIONS via bash -c]: profile outputs.lua; the
# program must exit 0 with its last line intact.
expect_done() {
	local label=$1 out=$2
	grep -qx "done $n [0-9]*" "$out" ||
		fail "[$label] the program's output is not complete: '$(head -c 200 "$out")'"
}

# calls_of_f LOG: f's call count in the report.
calls_of_f() {
	report_json "$1" "$T/r.json"
	json_get "$T/r.json" 'fn["%s:5" % [f["file"] for f in d["functions"] if f["kind"] == "lua" and f["file"].endswith("outputs.lua")][0]]["calls"]'
}

# The shell of file=|COMMAND inherits the environment: under a preloaded
# ThreadSanitizer runtime, sh itself crashes (SIGSEGV, not ljlog's doing).
case ${LJLOG_TEST_PRELOAD:-} in
*tsan*) commands=0 ;;
*) commands=1 ;;
esac

# -- file=|COMMAND, and reading the gzip-compressed log --------------------------
if [ "$commands" = 1 ]; then
rc=0
profile "file=|gzip -c > '$T/a.ljlog.gz',nodefaults,calls" "$prog" $n >"$T/a.out" 2>"$T/a.err" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/a.err"; fail "[|gzip] the program exited with status $rc"; }
expect_done "|gzip" "$T/a.out"
[ "$(head -c 2 "$T/a.ljlog.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] ||
	fail "[|gzip] $T/a.ljlog.gz is not gzip data"
check_complete "$T/a.ljlog.gz"
expect_eq "[|gzip] calls of f in the gzip-compressed log" "$n" "$(calls_of_f "$T/a.ljlog.gz")"
gzip -dc "$T/a.ljlog.gz" >"$T/a.ljlog"
expect_eq "[|gzip] calls of f in the inflated log" "$n" "$(calls_of_f "$T/a.ljlog")"
ok "file=|gzip: the program ran to its end, the .gz log reads complete, f called $n times"

size=$(stat -c %s "$T/a.ljlog.gz")
head -c $((size * 2 / 3)) "$T/a.ljlog.gz" >"$T/cut.ljlog.gz"
rc=0
ljlog check "$T/cut.ljlog.gz" >"$T/cut.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q truncated "$T/cut.out" ||
	{ show "$T/cut.out"; fail "a cut .gz log: ljlog check exited $rc, want 1 (truncated)"; }
rc=0
ljlog dump --follow "$T/a.ljlog.gz" >"$T/fol.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q "cannot be followed" "$T/fol.out" ||
	{ show "$T/fol.out"; fail "dump --follow of a .gz log: want a clear refusal, got exit $rc"; }
ok "a cut .gz log reads as truncated; --follow refuses a .gz log clearly"

# -- A command that fails --------------------------------------------------------
for cmd in "exit 3" "true"; do
	rc=0
	profile "file=|$cmd,nodefaults,calls" "$prog" $n >"$T/c.out" 2>"$T/c.err" || rc=$?
	[ "$rc" -eq 0 ] || { show "$T/c.err"; fail "[|$cmd] the program exited with status $rc"; }
	expect_done "|$cmd" "$T/c.out"
	if [ "$cmd" = "exit 3" ]; then
		grep -q "command '|exit 3' exited with status 3" "$T/c.err" ||
			{ show "$T/c.err"; fail "[|exit 3] no message naming the command's status"; }
	fi
	[ "$(grep -c "^ljlog: writing" "$T/c.err")" -le 1 ] ||
		{ show "$T/c.err"; fail "[|$cmd] more than one write-error message"; }
done
ok "file=|exit 3 and file=|true: the program runs to its end, one message each"
else
	ok "(file=|COMMAND left out: sh does not run with ThreadSanitizer's runtime preloaded)"
fi

# -- fd=N ----------------------------------------------------------------------
rc=0
profile "fd=7,nodefaults,calls" "$prog" $n "$T/fds7.txt" >"$T/b.out" 2>"$T/b.err" 7>"$T/b.ljlog" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/b.err"; fail "[fd=7] the program exited with status $rc"; }
expect_done "fd=7" "$T/b.out"
check_complete "$T/b.ljlog"
expect_eq "[fd=7] calls of f" "$n" "$(calls_of_f "$T/b.ljlog")"
grep -q " 7 -> " "$T/fds7.txt" && { show "$T/fds7.txt"; fail "[fd=7] an exec'd program inherited descriptor 7"; }
ok "fd=7: complete log, f called $n times, the descriptor is close-on-exec"

rc=0
profile "fd=7,nodefaults,calls" "$prog" $n >"$T/d.out" 2>"$T/d.err" 7>&- || rc=$?
[ "$rc" -eq 0 ] || { show "$T/d.err"; fail "[fd=7 closed] the program exited with status $rc"; }
expect_done "fd=7 closed" "$T/d.out"
grep -q "fd=7: descriptor 7 is not open; running unprofiled" "$T/d.err" ||
	{ show "$T/d.err"; fail "[fd=7 closed] no clear message"; }
rc=0
profile "fd=x,nodefaults,calls" "$prog" $n >"$T/d.out" 2>"$T/d.err" || rc=$?
[ "$rc" -eq 0 ] && grep -q "bad descriptor in 'fd=x'" "$T/d.err" ||
	{ show "$T/d.err"; fail "[fd=x] want exit 0 and a clear message, got $rc"; }
ok "fd=7 not open and fd=x: one clear message, the program runs unprofiled"

# A pipe whose reader leaves after 100 bytes: no SIGPIPE death.
set +e
( profile "fd=7,nodefaults,calls" "$prog" 200000 7>&1 >"$T/e.out" 2>"$T/e.err" ) | head -c 100 >/dev/null
st=${PIPESTATUS[0]}
set -e
[ "$st" -eq 0 ] || { show "$T/e.err"; fail "[fd=7 | head -c 100] the program exited with status $st"; }
grep -qx "done 200000 [0-9]*" "$T/e.out" || fail "[fd=7 | head] the program's output is not complete"
[ "$(grep -c "Broken pipe" "$T/e.err")" -eq 1 ] || { show "$T/e.err"; fail "[fd=7 | head] want one 'Broken pipe' message"; }
ok "fd=7 into a pipe whose reader leaves: one message, the program runs to its end"

# -- The file itself: umask, close-on-exec, symlinks -----------------------------------
for um in 077 002; do
	rm -f "$T/u.ljlog"
	( umask $um && profile "file=$T/u.ljlog,nodefaults,calls" "$prog" 10 >/dev/null 2>"$T/u.err" ) ||
		{ show "$T/u.err"; fail "[umask $um] the program failed"; }
	want=$(printf '%o' $((0666 & ~0$um)))
	expect_eq "[umask $um] the log's mode" "$want" "$(stat -c %a "$T/u.ljlog")"
done
ok "the log is created 0666 less the umask (077: 600, 002: 664)"

profile "file=$T/f.ljlog,nodefaults,calls" "$prog" 10 "$T/fds.txt" >/dev/null 2>"$T/f.err" ||
	{ show "$T/f.err"; fail "[close-on-exec] the program failed"; }
grep -q '/f\.ljlog$' "$T/fds.txt" && { show "$T/fds.txt"; fail "an exec'd program inherited the log's descriptor"; }
ok "a program the profiled one execs inherits no log descriptor"

ln -s "$T/mine.ljlog" "$T/mylink.ljlog"
profile "file=$T/mylink.ljlog,nodefaults,calls" "$prog" $n >"$T/g.out" 2>"$T/g.err" ||
	{ show "$T/g.err"; fail "[own symlink] the program failed"; }
check_complete "$T/mine.ljlog"
ok "a symlink of our own at the path is followed"

if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	ln -s "$T/theirs.ljlog" "$T/link.ljlog"
	chown -h nobody "$T/link.ljlog"
	rc=0
	profile "file=$T/link.ljlog,nodefaults,calls" "$prog" $n >"$T/h.out" 2>"$T/h.err" || rc=$?
	[ "$rc" -eq 0 ] || { show "$T/h.err"; fail "[foreign symlink] the program exited with status $rc"; }
	expect_done "foreign symlink" "$T/h.out"
	grep -q "refusing to write '$T/link.ljlog': it is a symbolic link that belongs to another user" "$T/h.err" ||
		{ show "$T/h.err"; fail "[foreign symlink] no clear refusal"; }
	[ ! -e "$T/theirs.ljlog" ] || fail "[foreign symlink] the link's target was created"
	ok "a symlink that belongs to another user is refused, the program runs unprofiled"
else
	ok "(not root: the foreign symlink case needs chown -h, left out)"
fi
