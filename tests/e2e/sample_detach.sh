#!/usr/bin/env bash
# ljlog e2e: a VM whose sampling is stopped from another thread while timer
# signals still reach the sampled thread (sample.h, "The ring's lifetime").
# The host (sample_detach.c) runs 200 rounds of: thread A attaches a VM with
# sample=100us,wall and runs Lua, thread B detaches and closes it while A
# spins in C taking signals. Without the wait for handlers still inside the
# VM's slot, B frees the ring under a running handler (ASan: use after
# free). Checked: the host exits 0, the log is complete, END counts every
# VM, and samples were taken in every round's VM (not under TSan, which
# runs handlers late).
. "$(dirname "$0")/lib.sh"

tsan=
case $LJLOG_TEST_PRELOAD in *tsan*) tsan=1 ;; esac
bin=$top_builddir/tests/e2e/sample_detach
[ -x "$bin" ] || fail "not built: $bin"
rounds=${SAMPLE_DETACH_ROUNDS:-200}
log=$T/detach.ljlog
timeout "$E2E_TIMEOUT" "$bin" --log "$log" --rounds "$rounds" \
	>"$T/out" 2>"$T/err" || { show "$T/err"; fail "the host failed"; }
grep -qx "rounds $rounds failures 0" "$T/out" || { show "$T/out"; fail "the host reported failures"; }
check_complete "$log"
ljlog dump "$log" >"$T/dump" 2>"$T/dump.err" || { show "$T/dump.err"; fail "ljlog dump failed"; }
python3 - "$T/dump" "$rounds" "$tsan" <<'PY' || fail "log checks failed (see above)"
import re, sys
path, rounds, tsan = sys.argv[1], int(sys.argv[2]), sys.argv[3]
vms, sampled, end_vms = set(), {}, None
kind = None
for ln in open(path):
    m = re.match(r"block \d+ at offset \d+: (\w+)", ln)
    if m:
        kind = m.group(1)
        continue
    m = re.match(r"\s+VM (\d+) thread (\d+) ", ln)
    if kind == "MAPPING" and m:
        vms.add(int(m.group(1)))
    m = re.match(r"\s+vm (\d+), (\d+) samples,", ln)
    if kind == "SAMPLES" and m:
        sampled[int(m.group(1))] = sampled.get(int(m.group(1)), 0) + int(m.group(2))
    m = re.search(r"\bvms (\d+)", ln)
    if kind == "END" and m:
        end_vms = int(m.group(1))
bad = []
if len(vms) != rounds + 1:
    bad.append("%d VM records, expected %d" % (len(vms), rounds + 1))
if end_vms != rounds + 1:
    bad.append("END counts %s VMs, expected %d" % (end_vms, rounds + 1))
with_samples = sum(1 for v in sampled.values() if v > 0)
if not tsan and with_samples < rounds * 9 // 10:
    bad.append("only %d of %d sampled VMs have samples" % (with_samples, rounds))
for b in bad:
    print("  " + b)
print("  %d VMs, %d with samples, %d samples" % (len(vms), with_samples, sum(sampled.values())))
sys.exit(1 if bad else 0)
PY
ok "$rounds cross-thread detaches under signals: clean, complete log"
