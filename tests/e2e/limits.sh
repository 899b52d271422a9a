#!/usr/bin/env bash
# ljlog e2e: a log that cannot be written never harms the program.
# limits.lua runs profiled while its log meets, in turn: a file-size limit
# (ulimit -f, and one the program sets lower while it runs: SIGXFSZ,
# EFBIG), a FIFO whose reader leaves early (SIGPIPE,
# EPIPE, raised on the VM thread and on the sampler's helper thread) and a
# full file system (a 300 KB tmpfs in a private mount namespace: ENOSPC).
# A preloaded shim (wfail.c) adds a disk that fills exactly at a block
# boundary (the END then goes over the last batch written) and a device
# that fails every write (EIO: the log ends at its last complete block).
# Each time the program prints what it prints unprofiled and exits 0 (not
# 153 or 141), stderr carries exactly one message naming the error, and a
# regular file ends with an END that names it: `ljlog check` exits 4
# ("stopped"), with every block before it complete.
. "$(dirname "$0")/lib.sh"

prog=$E2E/limits.lua
luajit_plain "$prog" >"$T/want" 2>"$T/want.err" || { show "$T/want.err"; fail "limits.lua fails unprofiled"; }

# same_run LABEL STATUS: the profiled run's status and output are the
# unprofiled run's; its stderr has exactly one write-failure message.
same_run() {
	local label=$1 st=$2 what=$3
	[ "$st" = 0 ] || { show "$T/err"; fail "[$label] the program exited with status $st (128+$((st - 128)) is a signal), want 0"; }
	cmp -s "$T/want" "$T/out" || { show "$T/out"; fail "[$label] the program's output differs from its unprofiled run"; }
	local n
	n=$(grep -c "^ljlog: writing .* failed after [0-9]* bytes: $what" "$T/err")
	[ "$n" = 1 ] || { show "$T/err"; fail "[$label] want one message 'writing ... failed ...: $what' on stderr, got $n"; }
	ok "[$label] the program ran to its end (status 0, same output), one message: $(grep '^ljlog: writing' "$T/err")"
}

# stopped LABEL LOG ERRNO TEXT [MAXBYTES]: check says "stopped" (exit 4) at
# the END naming the error; the blocks before it hold events.
stopped() {
	local label=$1 log=$2 errno=$3 text=$4 max=${5:-}
	local st=0
	ljlog check "$log" >"$T/check" 2>&1 || st=$?
	[ "$st" = 4 ] || { show "$T/check"; fail "[$label] ljlog check exited $st, want 4 (stopped by a write error)"; }
	grep -q "stopped: writing the log failed at offset [0-9]*: $text (errno $errno)" "$T/check" ||
		{ show "$T/check"; fail "[$label] check does not name the error ($text, errno $errno)"; }
	local events
	events=$(sed -n 's/.*complete up to there: [0-9]* blocks, \([0-9]*\) events.*/\1/p' "$T/check")
	[ "${events:-0}" -gt 0 ] || { show "$T/check"; fail "[$label] no events before the END"; }
	local size
	size=$(stat -c %s "$log")
	if [ -n "$max" ] && [ "$size" -gt "$max" ]; then
		fail "[$label] the log is $size bytes, over the limit of $max"
	fi
	report_json "$log" "$T/r.json"
	python3 - "$T/r.json" "$errno" "$text" "$size" <<'PY' || fail "[$label] report --json: wrong 'stopped' (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
s = d.get("stopped")
want_errno, text, size = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
bad = []
if not d.get("complete"):
    bad.append("complete is %r" % d.get("complete"))
if not isinstance(s, dict) or s.get("errno") != want_errno or s.get("reason") != text:
    bad.append("stopped is %r" % (s,))
elif not 0 < s["offset"] < size:
    bad.append("stopped.offset %d not inside the %d-byte file" % (s["offset"], size))
if bad:
    print("; ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
	ok "[$label] check: $(head -1 "$T/check" | sed 's/^[^:]*: //'); $events events before it; log $size bytes"
}

# 1. A file-size limit: 200 KB (bash counts ulimit -f in 1024-byte blocks).
log=$T/limit.ljlog
st=0
(
	ulimit -f 200
	profile "file=$log,calls,alloc" "$prog" >"$T/out" 2>"$T/err"
) || st=$?
same_run "ulimit -f 200" "$st" "File too large (the file-size limit, ulimit -f)"
stopped "ulimit -f 200" "$log" 27 "File too large" 204800

# 1b. The program lowers its own limit halfway, under what the writer read
# at start: a write meets EFBIG and raises SIGXFSZ.
log=$T/setrlimit.ljlog
st=0
profile "file=$log,calls,alloc" "$prog" "$log" >"$T/out" 2>"$T/err" || st=$?
same_run "setrlimit halfway" "$st" "File too large"
stopped "setrlimit halfway" "$log" 27 "File too large"

# 2. A FIFO whose reader takes 30 KB and leaves, with the sampler's helper
# thread writing too. Nothing to cut: the program must just live on.
mkfifo "$T/fifo"
head -c 30000 "$T/fifo" >"$T/fifo.got" &
track_pid $!
st=0
profile "file=$T/fifo,calls,alloc,sample=500us" "$prog" >"$T/out" 2>"$T/err" || st=$?
same_run "FIFO, reader leaves" "$st" "Broken pipe"
[ "$(stat -c %s "$T/fifo.got")" = 30000 ] || fail "[FIFO] the reader got $(stat -c %s "$T/fifo.got") bytes, want 30000"

# 3. A full file system: a 300 KB tmpfs in a private mount namespace (root,
# or an unprivileged user namespace). The log is copied out before the
# namespace goes.
mkdir -p "$T/mnt"
if unshare -m true 2>/dev/null; then ns="unshare -m"; elif unshare -rm true 2>/dev/null; then ns="unshare -rm"; else ns=; fi
if [ -z "$ns" ] || ! $ns sh -c 'mount -t tmpfs -o size=300k tmpfs "$1"' sh "$T/mnt" 2>"$T/mnt.err"; then
	echo "skip: [ENOSPC] no private mount namespace here ($(cat "$T/mnt.err" 2>/dev/null)): the full-disk case is not run"
else
	st=0
	# shellcheck disable=SC2016
	$ns sh -c 'mount -t tmpfs -o size=300k tmpfs "$1" || exit 99; d=$1 out=$2; shift 2
		"$@"; st=$?; cp "$d/full.ljlog" "$out"; exit $st' sh "$T/mnt" "$T/full.ljlog" \
		env LUAJIT_PROFILE="log:file=$T/mnt/full.ljlog,calls,alloc" LUA_CPATH="$MODDIR/?.so;;" \
		${LJLOG_TEST_PRELOAD:+LD_PRELOAD=$LJLOG_TEST_PRELOAD} timeout "$E2E_TIMEOUT" "$LUAJIT" -lljlog "$prog" \
		>"$T/out" 2>"$T/err" || st=$?
	same_run "tmpfs 300k, ENOSPC" "$st" "No space left on device"
	stopped "tmpfs 300k, ENOSPC" "$T/full.ljlog" 28 "No space left on device" 307200
fi

# 4. A disk full exactly where a batch of blocks would start (wfail.c: the
# 6th write fails and writes nothing; bytes already in the file can be
# overwritten). No torn tail to hold the END: it goes over the last batch
# written, so the log stops before the offset the message names.
shim=$top_builddir/tests/e2e/.libs/wfail.so
[ -e "$shim" ] || fail "the shim is not built ($shim)"
wrun() { # ERRNO LOG
	local st=0
	WFAIL_PATH=/$(basename "$2") WFAIL_CALLS=5 WFAIL_ERRNO=$1 LUAJIT_PROFILE="log:file=$2,calls,alloc,buffer=64k,flush=0" \
		LUA_CPATH="$MODDIR/?.so;;" LD_PRELOAD="${LJLOG_TEST_PRELOAD:+$LJLOG_TEST_PRELOAD }$shim" \
		timeout "$E2E_TIMEOUT" "$LUAJIT" -lljlog "$prog" >"$T/out" 2>"$T/err" || st=$?
	return $st
}
# The same with a file-size limit met exactly there (EFBIG: the program
# lowered it, the writer read none at start; 1b met this by chance).
for what in "28:disk full:No space left on device" "27:file-size limit:File too large"; do
	errno=${what%%:*} text=${what##*:} label=${what#*:}
	label="${label%%:*} at a block boundary"
	st=0
	wrun "$errno" "$T/boundary$errno.ljlog" || st=$?
	same_run "$label" "$st" "$text"
	stopped "$label" "$T/boundary$errno.ljlog" "$errno" "$text"
	failed_at=$(sed -n "s/^ljlog: writing .* failed after \([0-9]*\) bytes.*/\1/p" "$T/err")
	end_at=$(json_get "$T/r.json" '"%d" % d["stopped"]["offset"]')
	[ "$end_at" -lt "$failed_at" ] ||
		fail "[$label] the END is at offset $end_at, want it over the last batch, before $failed_at"
	ok "[$label] the END went over the last batch: offset $end_at < $failed_at"
done

# 5. A device that fails every write from the 6th on (EIO): nothing can be
# written, not even an END; the file ends exactly at its last complete
# block, which check calls truncated there.
st=0
wrun 5 "$T/eio.ljlog" || st=$?
same_run "EIO" "$st" "Input/output error"
failed_at=$(sed -n "s/^ljlog: writing .* failed after \([0-9]*\) bytes.*/\1/p" "$T/err")
st=0
ljlog check "$T/eio.ljlog" >"$T/check" 2>&1 || st=$?
[ "$st" = 1 ] || { show "$T/check"; fail "[EIO] ljlog check exited $st, want 1 (truncated)"; }
grep -q "valid up to offset $failed_at:" "$T/check" || { show "$T/check"; fail "[EIO] check does not say the log is valid up to offset $failed_at"; }
[ "$(stat -c %s "$T/eio.ljlog")" = "$failed_at" ] || fail "[EIO] the log is $(stat -c %s "$T/eio.ljlog") bytes, want $failed_at (its complete blocks)"
ok "[EIO] the log ends at its last complete block ($failed_at bytes); check: truncated there"
