#!/usr/bin/env bash
# ljlog e2e: a fork in a process with VMs on two threads (man ljlog "FORK").
# forkhost (forkhost.c) attaches ljlog_attach to a VM on its main thread
# (f, 100 calls) and to one on a second thread (h NO times, then spin()
# until told to stop: it spins while the main thread forks). The child
# keeps only the main thread's VM: it calls g NC times, and
#   detach: detaches its VM and waits. Its log is closed then (END), while
#           it lives: it lists its own VM only, g's NC calls, no f, h or
#           spin. The child then exits; its log is not written again.
#   exit:   with flush=20ms, calls tick() each ms until the test has seen
#           g's NC calls in its log, then _exits: no END, the events up to
#           the last flush are there (g's NC calls), the log valid up to
#           its end.
# The parent's log is complete: its two VMs, f 100 + NP, h NO and spin()
# as many calls as the host counted, no g.
. "$(dirname "$0")/lib.sh"

FORKHOST=$top_builddir/tests/e2e/forkhost
[ -x "$FORKHOST" ] || fail "the host program is not built ($FORKHOST)"
np=200
nc=500
no=300

# ThreadSanitizer cannot start threads in the child of a threaded process
# (fork.sh): there the VMs write their own logs, and nothing is sampled.
nw=
tsan=0
case ${LJLOG_TEST_PRELOAD:-} in *tsan*) nw=,nowriter tsan=1 ;; esac

# forkhost ARGS...: the host, with the sanitizer's runtime (it links the
# instrumented libljlog) and a time limit.
forkhost() {
	timeout "$E2E_TIMEOUT" "$FORKHOST" "$@"
}

# calls JSON CHUNK LINE: calls of the Lua function at CHUNK:LINE (0 absent).
calls() {
	json_get "$1" "sum(f['calls'] for f in d['functions'] if f['kind'] == 'lua' and f['file'] == '$2' and f['line'] == $3)"
}

# start LABEL MODE OPTIONS: run forkhost in the background; HOST_PID, OUT.
start() {
	local label=$1 mode=$2 o=$3
	OUT=$T/$label.out
	rm -f "$T/release"
	forkhost --options "$o$nw" --mode "$mode" --release "$T/release" \
		--parent $np --child $nc --other $no >"$OUT" 2>"$T/$label.err" &
	HOST_PID=$!
	track_pid "$HOST_PID"
}

# finish LABEL: let the child go, wait for the host; PARENT, CHILD, SPINS.
finish() {
	local label=$1 rc=0 st
	touch "$T/release"
	wait "$HOST_PID" || rc=$?
	[ "$rc" -eq 0 ] || { show "$T/$label.err"; show "$OUT"; fail "[$label] forkhost exited with status $rc"; }
	read -r _ PARENT _ CHILD _ st _ SPINS < <(grep '^parent ' "$OUT")
	[ "${st:-}" = 0 ] || { show "$OUT"; fail "[$label] no parent line, or the child failed"; }
	[ "${SPINS:-0}" -gt 0 ] || fail "[$label] the second thread did not spin"
}

# check_parent LABEL LOG: the parent's log, complete, both VMs' counts.
check_parent() {
	local label=$1 log=$2
	check_complete "$log"
	report_json "$log" "$T/p.json"
	expect_eq "[$label] parent: VMs" 2 "$(json_get "$T/p.json" 'd["vms"]')"
	expect_eq "[$label] parent: calls of f" $((100 + np)) "$(calls "$T/p.json" parent 2)"
	expect_eq "[$label] parent: calls of h" $no "$(calls "$T/p.json" other 2)"
	expect_eq "[$label] parent: calls of spin" "$SPINS" "$(calls "$T/p.json" other 5)"
	expect_eq "[$label] parent: calls of g" 0 "$(calls "$T/p.json" child 2)"
	ok "[$label] parent: complete, 2 VMs, f $((100 + np)), h $no, spin $SPINS, no g"
}

# check_child LABEL JSON: the child's log holds its own VM and g's calls.
check_child() {
	local label=$1 j=$2
	expect_eq "[$label] child: the INTRO's pid" "$CHILD" "$(json_get "$j" 'd["pid"]')"
	expect_eq "[$label] child: VMs" 1 "$(json_get "$j" 'd["vms"]')"
	expect_eq "[$label] child: VM list" 1 "$(json_get "$j" 'len(d["vm_list"])')"
	expect_eq "[$label] child: the VM's thread" "$CHILD" "$(json_get "$j" 'd["vm_list"][0]["thread"]')"
	expect_eq "[$label] child: calls of g" $nc "$(calls "$j" child 2)"
	expect_eq "[$label] child: calls of f" 0 "$(calls "$j" parent 2)"
	expect_eq "[$label] child: calls of h" 0 "$(calls "$j" other 2)"
	expect_eq "[$label] child: calls of spin" 0 "$(calls "$j" other 5)"
}

# -- detach: the child's log is closed at its last detach ---------------------------
# run_detach LABEL OPTIONS (OPTIONS names no file).
run_detach() {
	local label=$1 o=$2 line log size
	start "$label" detach "file=$T/$label-%p.ljlog,$o"
	wait_for 120 grep -q '^child .* detached' "$OUT" ||
		{ show "$T/$label.err"; fail "[$label] the child did not detach"; }
	line=$(grep '^child ' "$OUT")
	CHILD=$(echo "$line" | cut -d' ' -f2)
	[ "$(echo "$line" | cut -d' ' -f4)" = 0 ] || { show "$T/$label.err"; fail "[$label] the child's detach failed"; }
	log=$T/$label-$CHILD.ljlog
	kill -0 "$CHILD" 2>/dev/null || fail "[$label] the child is gone before the test read its log"
	check_complete "$log"
	ljlog dump "$log" >"$T/dump.txt" 2>&1 || { show "$T/dump.txt"; fail "[$label] ljlog dump of the child's log failed"; }
	grep -q ': END' "$T/dump.txt" || { show "$T/dump.txt"; fail "[$label] the child's log has no END block after its last detach"; }
	report_json "$log" "$T/c.json"
	check_child "$label" "$T/c.json"
	kill -0 "$CHILD" 2>/dev/null || fail "[$label] the child is gone before the test read its log"
	ok "[$label] child $CHILD, alive: its log closed at its last detach (END, check 0), 1 VM, g $nc, no f, h or spin"
	size=$(stat -c %s "$log")
	finish "$label"
	expect_eq "[$label] child: log size after exit" "$size" "$(stat -c %s "$log")"
	check_complete "$log"
	ok "[$label] the child's exit wrote nothing more"
	check_parent "$label" "$T/$label-$PARENT.ljlog"
}

run_detach detach "nodefaults,calls,buffer=64k"
[ "$tsan" = 1 ] || run_detach sampled "nodefaults,calls,sample=1ms,buffer=64k"

# -- exit: flush= writes the child's events; _exit loses none older ------------------
label=exit
start "$label" exit "file=$T/$label-%p.ljlog,nodefaults,calls,flush=20ms"
wait_for 120 grep -q '^child .* ran' "$OUT" ||
	{ show "$T/$label.err"; fail "[$label] the child did not run"; }
CHILD=$(grep '^child ' "$OUT" | cut -d' ' -f2)
log=$T/$label-$CHILD.ljlog
# The condition: g's calls and a tick() after them reach the log by a
# timed flush (the child calls tick() each ms: its events bring the
# flushes due).
seen() {
	[ -s "$log" ] || return 1
	ljlog report --json "$log" >"$T/c.json" 2>/dev/null || return 1
	[ "$(calls "$T/c.json" child 2)" = "$nc" ] &&
		[ "$(calls "$T/c.json" child 5)" -gt 0 ]
}
wait_for 120 seen || { show "$T/$label.err"; fail "[$label] g's $nc calls never reached the child's log (flush=20ms)"; }
finish "$label"
# Valid, cut short: check and dump say 1 (truncated: no END, the writer
# gone), not 3 (corrupt).
rc=0
ljlog check "$log" >"$T/check.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { show "$T/check.out"; fail "[$label] ljlog check after _exit: expected 1 (valid, no END), got $rc"; }
rc=0
ljlog dump "$log" >"$T/dump.txt" 2>"$T/dump.err" || rc=$?
[ "$rc" -eq 1 ] || { show "$T/dump.err"; fail "[$label] ljlog dump after _exit: expected 1 (valid, no END), got $rc"; }
grep -q 'without an END block' "$T/dump.err" ||
	{ show "$T/dump.err"; fail "[$label] ljlog dump: not the message of a log without END"; }
! grep -q ': END' "$T/dump.txt" || fail "[$label] an END block after _exit"
report_json "$log" "$T/c.json"
check_child "$label" "$T/c.json"
ticks=$(calls "$T/c.json" child 5)
[ "$ticks" -gt 0 ] || fail "[$label] no call of tick in the child's log"
ok "[$label] child $CHILD _exited: its log, cut at the last flush, holds 1 VM, g $nc, tick $ticks, no f, h or spin"
check_parent "$label" "$T/$label-$PARENT.ljlog"
