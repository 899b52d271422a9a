#!/usr/bin/env bash
# ljlog e2e: a process that ends abruptly leaves a log that is whole up to
# its last complete block: `ljlog check` says truncated (exit 1), never
# corrupt, and `ljlog report` reads it.
#  - _exit() without lua_close at several moments (before the first flush,
#    after a few, after many), with flush=1ms;
#  - SIGKILL while the writer is inside a flush: the log goes through a pipe
#    whose reader stops reading, so the writer (the program's thread for a
#    MAPPING, ljlog's writer thread for EVENTS) blocks in write() with part
#    of a block written; the reader then drains what it got.
. "$(dirname "$0")/lib.sh"

prog=$E2E/cutshort.lua
work_line=$(grep -n '^local function work' "$prog" | cut -d: -f1)

# truncated_ok LOG LABEL: check exit 1 saying truncated; report exit 0.
truncated_ok() {
	local rc=0
	ljlog check "$1" >"$T/check.out" 2>&1 || rc=$?
	[ "$rc" -eq 1 ] || { show "$T/check.out"; fail "$2: ljlog check: expected exit 1 (truncated), got $rc"; }
	grep -q 'truncated' "$T/check.out" || { show "$T/check.out"; fail "$2: check does not say truncated"; }
	grep -qi 'corrupt' "$T/check.out" && { show "$T/check.out"; fail "$2: check says corrupt"; }
	rc=0
	ljlog report --json "$1" >"$T/r.json" 2>"$T/r.err" || rc=$?
	[ "$rc" -eq 0 ] || { show "$T/r.err"; fail "$2: ljlog report: exit $rc"; }
	expect_eq "$2: report's complete" false "$(json_get "$T/r.json" 'd["complete"]')"
}

for rounds in 0 1 50 2000; do
	log=$T/exit$rounds.ljlog
	rc=0
	profile "file=$log,calls,alloc,gc,flush=1ms" "$prog" "$rounds" >"$T/out" 2>"$T/err" || rc=$?
	expect_eq "_exit after $rounds rounds: exit status" 3 "$rc"
	truncated_ok "$log" "_exit after $rounds rounds"
	calls=$(json_get "$T/r.json" "fn.get('$prog:$work_line', {}).get('calls', 0)")
	[ "$calls" -le "$rounds" ] || fail "_exit after $rounds rounds: $calls calls of work(), more than made"
	echo "  _exit after $rounds rounds: $calls calls of work() in the complete blocks"
done
ok "_exit without lua_close after 0, 1, 50 and 2000 rounds: truncated (exit 1), never corrupt; report reads what landed"

# -- SIGKILL inside a flush -------------------------------------------------------
# The shell of file=|COMMAND inherits the environment: under a preloaded
# ThreadSanitizer runtime sh itself crashes (outputs.sh).
case ${LJLOG_TEST_PRELOAD:-} in
*tsan*)
	ok "(SIGKILL inside a flush left out under ThreadSanitizer: it needs file=|COMMAND)"
	exit 0
	;;
esac

# The pipe's reader copies PAUSE bytes into the log, then stops reading until
# $T/go exists, then copies the rest. The writer fills the pipe and blocks
# in write(), in the middle of a block.
cat >"$T/reader.py" <<'PY'
import os, sys, time
out, got, go, pause = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
n = 0
with open(out, "wb") as f:
    while n < pause:
        b = os.read(0, min(65536, pause - n))
        if not b:
            break
        f.write(b); n += len(b)
    f.flush()
    open(got, "w").write("%d\n" % n)
    while not os.path.exists(go):
        time.sleep(0.01)
    while True:
        b = os.read(0, 65536)
        if not b:
            break
        f.write(b)
open(got + ".done", "w").close()
PY
log=$T/killed.ljlog
# in_write PID: a thread of the process (the program's, or ljlog's writer
# thread) is blocked writing to the full pipe.
in_write() {
	local t w s
	for t in /proc/"$1"/task/*; do
		w=$(cat "$t/wchan" 2>/dev/null || true)
		s=$(cut -d' ' -f1 "$t/syscall" 2>/dev/null || true)
		case $w in *pipe_write* | *pipe_wait*) return 0 ;; esac
		[ "$(uname -m)" = x86_64 ] && [ "$s" = 1 ] && return 0
		[ "$(uname -m)" = aarch64 ] && [ "$s" = 64 ] && return 0
	done
	return 1
}
profile_bg "file=|python3 $T/reader.py $log $T/got $T/go 200000,calls,alloc,gc,flush=1ms,buffer=64k" \
	"$prog" 100 "" spin >"$T/spin.out" 2>"$T/spin.err"
pid=$BG_PID
wait_for 60 test -s "$T/got" || fail "the pipe's reader never got its first bytes: $(cat "$T/spin.err")"
wait_for 60 in_write "$pid" || fail "the profiled program never blocked in write() (wchan $(cat /proc/"$pid"/task/*/wchan 2>/dev/null | tr '\0' ' '))"
kill -9 "$pid"
rc=0
wait "$pid" || rc=$?
expect_eq "exit status of the program killed inside a flush" 137 "$rc"
touch "$T/go"
wait_for 60 test -e "$T/got.done" || fail "the pipe's reader did not finish"
size=$(stat -c %s "$log")
[ "$size" -gt 200000 ] || fail "the log has $size bytes: the writer was not inside a block when killed"
truncated_ok "$log" "SIGKILL inside a flush"
calls=$(json_get "$T/r.json" "fn.get('$prog:$work_line', {}).get('calls', 0)")
[ "$calls" -gt 0 ] || fail "SIGKILL inside a flush: no calls of work() in the blocks before it"
ok "SIGKILL while blocked in a flush's write(): $size bytes, truncated (exit 1), $calls calls of work() readable"
