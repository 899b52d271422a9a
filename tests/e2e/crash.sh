#!/usr/bin/env bash
# ljlog e2e: damaged logs.
# SIGKILL mid-run: the log is valid up to its last block; `ljlog check` says
# truncated (exit 1) and `ljlog report` still reports it. A torn tail (the
# file cut inside a block) is truncated too. One flipped byte inside a
# middle block's payload: `ljlog check` says corrupt (exit 3) and names that
# block, found from `ljlog dump` of the intact file.
. "$(dirname "$0")/lib.sh"

# -- SIGKILL ------------------------------------------------------------------

log=$T/killed.ljlog
profile_bg "file=$log,calls,alloc,gc,flush=20ms" "$E2E/spin.lua" "$T/stop" 120 >"$T/spin.out" 2>"$T/spin.err"
pid=$BG_PID

# Blocks have landed once dump (block headers only) shows two EVENTS
# blocks: spin.lua calls work() from its start, flushing every 20 ms.
work_line=$(grep -n '^local function work' "$E2E/spin.lua" | cut -d: -f1)
landed() {
	[ -s "$log" ] || return 1
	[ "$("$LJLOG" dump "$log" 2>/dev/null | grep -c ': EVENTS')" -ge 2 ]
}
[ -x "$LJLOG" ] || fail "the ljlog CLI is not built ($LJLOG)"
wait_for 30 landed || fail "no EVENTS blocks in $log after 30 s"
kill -0 "$pid" 2>/dev/null || fail "spin.lua ended before it was killed: $(cat "$T/spin.err")"
kill -9 "$pid"
rc=0
wait "$pid" || rc=$?
expect_eq "exit status of the killed program" 137 "$rc"
ok "killed spin.lua with SIGKILL after events landed"

rc=0
ljlog check "$log" >"$T/check.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { show "$T/check.out"; fail "ljlog check on a killed run: expected exit 1 (truncated), got $rc"; }
ok "ljlog check on the killed run: exit 1 (truncated, valid)"

rc=0
ljlog report -n 0 "$log" >"$T/report.out" 2>"$T/report.err" || rc=$?
expect_eq "ljlog report on the killed run: exit status" 0 "$rc"
grep -q "spin.lua:$work_line" "$T/report.out" ||
	{ show "$T/report.out"; fail "ljlog report on the killed run does not show spin.lua:$work_line"; }
report_json "$log" "$T/r.json"
expect_eq "report --json complete on the killed run" false "$(json_get "$T/r.json" 'd["complete"]')"
[ "$(json_get "$T/r.json" "fn['$E2E/spin.lua:$work_line']['calls'] > 0")" = true ] ||
	fail "report --json on the killed run: no calls of work()"
ok "ljlog report on the killed run: exit 0, shows work(), complete=false"

# A torn tail: the killed log without its last 5 bytes, as a crash inside
# a write would leave it.
size=$(stat -c %s "$log")
head -c $((size - 5)) "$log" >"$T/torn.ljlog"
rc=0
ljlog check "$T/torn.ljlog" >"$T/check.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { show "$T/check.out"; fail "ljlog check on a torn tail: expected exit 1, got $rc"; }
rc=0
ljlog report "$T/torn.ljlog" >/dev/null 2>&1 || rc=$?
expect_eq "ljlog report on a torn tail: exit status" 0 "$rc"
ok "a torn tail: check exit 1, report exit 0"

# -- One flipped byte -------------------------------------------------------------

good=$T/good.ljlog
profile "file=$good,calls,alloc,gc,buffer=4k" "$E2E/calls.lua" >/dev/null 2>"$T/err" ||
	{ show "$T/err"; fail "the calls.lua run failed"; }
check_complete "$good"
ljlog dump "$good" >"$T/dump.out" 2>&1 || fail "ljlog dump of an intact log failed"

# The blocks as dump shows them ("block N at offset O: KIND, L bytes"),
# checked against an independent walk of the block headers.
python3 - "$T/dump.out" "$good" >"$T/pick" <<'EOF' || fail "the blocks of the intact log (see above)"
import re, struct, sys
dump, path = sys.argv[1:]
blocks = [(int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4)))
          for m in re.finditer(r"^block (\d+) at offset (\d+): (\w+), (\d+) bytes",
                               open(dump).read(), re.M)]
data = open(path, "rb").read()
walk, off = [], 8
while off < len(data):
    sync, kind, flags, length = struct.unpack_from("<HBBI", data, off)
    assert sync == 0xB10C, "bad sync at %d" % off
    walk.append((off, length))
    off += 16 + length
if [(b[1], b[3]) for b in blocks] != walk:
    print("dump's blocks %r\ndiffer from the headers %r" % (blocks[:10], walk[:10]), file=sys.stderr)
    sys.exit(1)
events = [b for b in blocks if b[2] == "EVENTS"]
if len(events) < 5:
    print("only %d EVENTS blocks" % len(events), file=sys.stderr)
    sys.exit(1)
idx, off, kind, length = events[len(events) // 2]
print(idx, off, length, len(blocks))
EOF
read -r bidx boff blen nblocks <"$T/pick"
ok "ljlog dump lists the $nblocks blocks of the intact log at the offsets of their headers"

# Flip one byte in the middle of that block's payload (header: 16 bytes).
flip() { # IN OUT OFFSET
	python3 - "$@" <<'EOF'
import sys
src, dst, off = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = bytearray(open(src, "rb").read())
b[off] ^= 0x5A
open(dst, "wb").write(b)
EOF
}
flip "$good" "$T/flipped.ljlog" $((boff + 16 + blen / 2))
rc=0
ljlog check "$T/flipped.ljlog" >"$T/check.out" 2>&1 || rc=$?
[ "$rc" -eq 3 ] || { show "$T/check.out"; fail "ljlog check with a flipped payload byte in block $bidx: expected exit 3, got $rc"; }
grep -Eq "block $bidx([^0-9]|\$)|offset $boff([^0-9]|\$)" "$T/check.out" ||
	{ show "$T/check.out"; fail "ljlog check does not name block $bidx (offset $boff)"; }
ok "a flipped byte in block $bidx's payload (offset $boff): check exit 3, names the block"

# And one in that block's header (its length field): corrupt at that offset.
flip "$good" "$T/flipped2.ljlog" $((boff + 5))
rc=0
ljlog check "$T/flipped2.ljlog" >"$T/check.out" 2>&1 || rc=$?
[ "$rc" -eq 3 ] || { show "$T/check.out"; fail "ljlog check with a flipped header byte in block $bidx: expected exit 3, got $rc"; }
grep -Eq "block $bidx([^0-9]|\$)|offset $boff([^0-9]|\$)" "$T/check.out" ||
	{ show "$T/check.out"; fail "ljlog check does not name block $bidx (offset $boff) for a bad header"; }
ok "a flipped byte in block $bidx's header: check exit 3, names the block"
