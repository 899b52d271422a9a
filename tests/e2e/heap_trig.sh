#!/usr/bin/env bash
# ljlog e2e: heap snapshot triggers (snapshot=exit, INTERVAL, SIGUSR2 and
# their '+' combinations), a snapshot taken while the JIT records a trace,
# and four VMs in threads each snapshotting its own heap. Every snapshot's
# objects and parts add up to LuaJIT's heap total.
. "$(dirname "$0")/lib.sh"

# sums LOG: the dump of LOG into $T/dump, each snapshot's identity checked;
# prints the number of snapshots.
sums() {
	$LJLOG dump -v "$1" >"$T/dump" || fail "ljlog dump -v $1"
	python3 - "$T/dump" "$E2E" <<'PY' || fail "the sums of $1"
import sys
sys.path.insert(0, sys.argv[2])
import heapdump
snaps = heapdump.parse(sys.argv[1])
for i, s in enumerate(snaps):
    heapdump.check_sums(s, "snapshot %d" % (i + 1))
print(len(snaps))
PY
}

# snapshots LOG: how many `ljlog heap --json` lists (0 while unreadable).
snapshots() {
	$LJLOG heap --json "$1" 2>/dev/null |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin)["snapshots"]))' 2>/dev/null || echo 0
}

# at_least LOG N: the log lists N snapshots or more (for wait_for).
at_least() {
	[ "$(snapshots "$1")" -ge "$2" ]
}

# -- snapshot=exit: at lua_close, and at os.exit without it --------------------
for how in close exit; do
	log=$T/exit_$how.ljlog
	if [ $how = close ]; then
		profile "file=$log,nodefaults,snapshot=exit" -e 'HELD = {1, 2, 3}' >"$T/out" 2>"$T/err"
	else
		profile "file=$log,nodefaults,snapshot=exit" -e 'HELD = {1, 2, 3} os.exit(0)' >"$T/out" 2>"$T/err"
	fi || { show "$T/err"; fail "snapshot=exit ($how): the run failed"; }
	check_complete "$log"
	expect_eq "snapshot=exit ($how): snapshots" 1 "$(sums "$log")"
	ok "snapshot=exit ($how): one snapshot, objects + parts == gc_total"
done

# -- snapshot=SIGUSR2 (and exit): one snapshot per signal -----------------------
log=$T/sig.ljlog
rm -f "$T/ready" "$T/stop"
profile_bg "file=$log,nodefaults,snapshot=exit+SIGUSR2" "$E2E/heap_loop.lua" "$T/ready" "$T/stop" >"$T/out" 2>"$T/err"
wait_for 20 test -e "$T/ready" || fail "heap_loop.lua did not start"
for k in 1 2; do
	kill -USR2 "$BG_PID"
	wait_for 20 at_least "$log" "$k" || fail "no snapshot $k after kill -USR2 (log has $(snapshots "$log"))"
done
touch "$T/stop"
rc=0
wait "$BG_PID" || rc=$?
expect_eq "SIGUSR2 run: exit status" 0 "$rc"
expect_eq "SIGUSR2 run: output" stopped "$(cat "$T/out")"
check_complete "$log"
expect_eq "snapshot=exit+SIGUSR2: two signals and the exit" 3 "$(sums "$log")"
python3 - "$T/dump" "$E2E" <<'PY' || fail "the looping program's table in each snapshot"
import sys
sys.path.insert(0, sys.argv[2])
import heapdump
for s in heapdump.parse(sys.argv[1]):
    g = heapdump.globals_of(s)
    t = s["objs"][g.ref(".LOOPT")[0]]
    if len([r for r in t.refs if r[0] == "array"]) < 1000:
        sys.exit("LOOPT has %d array references" % len(t.refs))
PY
ok "snapshot=exit+SIGUSR2: kill -USR2 twice on a looping program gives two snapshots, the exit a third"

# -- snapshot=INTERVAL -----------------------------------------------------------
log=$T/interval.ljlog
rm -f "$T/ready" "$T/stop"
profile_bg "file=$log,nodefaults,snapshot=50ms" "$E2E/heap_loop.lua" "$T/ready" "$T/stop" >"$T/out" 2>"$T/err"
wait_for 20 test -e "$T/ready" || fail "heap_loop.lua did not start"
wait_for 30 at_least "$log" 3 || fail "fewer than 3 snapshots with snapshot=50ms"
touch "$T/stop"
wait "$BG_PID" || fail "the snapshot=50ms run failed"
check_complete "$log"
n=$(sums "$log")
[ "$n" -ge 3 ] || fail "snapshot=50ms: $n snapshots"
ok "snapshot=50ms: $n snapshots of a looping program, each adding up"

# -- A snapshot while the JIT records a trace ----------------------------------
log=$T/record.ljlog
rm -f "$T/ready" "$T/stop"
touch "$T/stop"
profile "file=$log,nodefaults" "$E2E/heap_loop.lua" "$T/ready" "$T/stop" record >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "the recording run failed"; }
check_complete "$log"
n=$(sums "$log")
[ "$n" -ge 1 ] || fail "no snapshot from the trace-start event"
grep -q '^    root "trace being recorded" -> #' "$T/dump" || fail "no 'trace being recorded' root"
ok "$n snapshot(s) taken while the JIT records a trace: its start prototype is a root, the sums hold"

# -- Options ---------------------------------------------------------------------------
for bad in snapshot=SIGKILL snapshot=exit+ snapshot=0 snapshot; do
	profile "file=$T/bad.ljlog,$bad" -e 'print("ran")' >"$T/out" 2>"$T/err" || fail "$bad: the program failed"
	expect_eq "$bad: the program still runs" ran "$(cat "$T/out")"
	grep -q "snapshot" "$T/err" || fail "$bad: no message naming the option: $(cat "$T/err")"
done
ok "bad snapshot= values: a message, the program runs unprofiled"

# -- Four VMs in threads, each its own snapshot at lua_close ----------------------
log=$T/threads.ljlog
host --threads 4 --script "$E2E/heap_thread.lua" --options "file=$log,nodefaults,snapshot=exit" \
	>"$T/host.out" 2>"$T/host.err" || { show "$T/host.err"; fail "the host failed"; }
check_complete "$log"
expect_eq "threads: snapshots" 4 "$(sums "$log")"
python3 - "$T/dump" "$E2E" <<'PY' || fail "threads: each VM's own heap"
import sys
sys.path.insert(0, sys.argv[2])
import heapdump
snaps = heapdump.parse(sys.argv[1])
if len(set(s["vm"] for s in snaps)) != 4:
    sys.exit("snapshots of %d VMs" % len(set(s["vm"] for s in snaps)))
ks = []
for s in snaps:
    g = heapdump.globals_of(s)
    mine = s["objs"][g.ref(".MINE")[0]]
    arr = [r[3] for r in mine.refs if r[0] == "array"]
    first = s["objs"][arr[0]]
    k = len(arr) // 1000
    # Each element {K, i}: an array of numbers, no references.
    if len(arr) != k * 1000 or any(s["objs"][i].type != "table" for i in arr):
        sys.exit("VM %d: MINE holds %d references" % (s["vm"], len(arr)))
    ks.append(k)
if sorted(ks) != [1, 2, 3, 4]:
    sys.exit("MINE sizes %r, want 1000..4000" % sorted(ks))
PY
ok "four VMs in threads: four snapshots, each of its own VM's heap (MINE of 1000..4000 tables)"
