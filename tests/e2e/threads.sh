#!/usr/bin/env bash
# ljlog e2e: four threads, four VMs, one log.
# The C host runs thread.lua in N threads, each with its own VM attached
# with ljlog_attach (all attach before any runs). Thread K's chunk
# "=threadK" has names no other VM uses, so its exact counts show that its
# events were decoded against its own mappings; each VM's heap balance
# (heap_live = heap_detach) shows that all its allocation events are there
# and attributed to it.
. "$(dirname "$0")/lib.sh"

nt=${THREADS_N:-4}
shared_line=$(grep -n '^local function shared' "$E2E/thread.lua" | cut -d: -f1)
[ -n "$shared_line" ] || fail "no shared() in thread.lua"

run_host() { # LABEL HOST-OPTIONS...
	local label=$1 log=$T/threads.ljlog
	shift
	rm -f "$log"
	host --threads "$nt" --script "$E2E/thread.lua" \
		--options "file=$log,calls,alloc,gc,buffer=4k,flush=1ms" "$@" \
		>"$T/host.out" 2>"$T/host.err" ||
		{ show "$T/host.err"; fail "[$label] the host failed"; }
	check_complete "$log"
	report_json "$log" "$T/r.json"
	python3 - "$T/r.json" "$T/host.out" "$nt" "$E2E/thread.lua" "$shared_line" <<'EOF' ||
import json, re, sys
jpath, hostout, nt, script, shared_line = sys.argv[1:]
nt, shared_line = int(nt), int(shared_line)
d = json.load(open(jpath))
tids = {}
for ln in open(hostout):
    m = re.fullmatch(r"host: thread (\d+) tid (\d+) attached 1\n", ln)
    if m:
        tids[int(m.group(2))] = int(m.group(1))
bad = []
if len(tids) != nt:
    bad.append("the host printed %d attached threads, expected %d" % (len(tids), nt))
fn = {f["name"]: f for f in d["functions"]}
# Lua functions by chunk:line too, named ones ("fib (app.lua:4)") included.
for f in d["functions"]:
    if f["kind"] == "lua":
        fn.setdefault("%s:%d" % (f["file"], f["line"]), f)
def calls(name):
    return fn[name]["calls"] if name in fn else None
for k in range(1, nt + 1):
    for line, want in ((0, 1), (2, k), (1, k * 1000)):
        name = "thread%d:%d" % (k, line)
        alt = "=" + name
        got = calls(name) if name in fn else calls(alt)
        if got != want:
            bad.append("%s: expected %d calls, got %s" % (name, want, got))
want = 100 * sum(range(1, nt + 1))
got = calls("%s:%d" % (script, shared_line))
if got != want:
    bad.append("shared() summed over the VMs: expected %d calls, got %s" % (want, got))
if d["vms"] != nt or len(d["vm_list"]) != nt:
    bad.append("vms %r, vm_list has %d entries, expected %d" % (d["vms"], len(d["vm_list"]), nt))
if len({v["id"] for v in d["vm_list"]}) != len(d["vm_list"]):
    bad.append("VM ids repeat: %r" % [v["id"] for v in d["vm_list"]])
if {v["thread"] for v in d["vm_list"]} != set(tids):
    bad.append("VM threads %r, the host's threads %r" % (sorted(v["thread"] for v in d["vm_list"]), sorted(tids)))
for v in d["vm_list"]:
    if v["heap_live"] != v["heap_detach"]:
        bad.append("VM %d (thread %s): heap_live %d != heap_detach %d"
                   % (v["id"], tids.get(v["thread"]), v["heap_live"], v["heap_detach"]))
    if v["events"] <= 0 or v["coroutines"] < 1:
        bad.append("VM %d: events %d coroutines %d" % (v["id"], v["events"], v["coroutines"]))
if sum(v["events"] for v in d["vm_list"]) != d["events"]:
    bad.append("the VMs' events sum to %d, events is %d" % (sum(v["events"] for v in d["vm_list"]), d["events"]))
if sum(v["heap_live"] for v in d["vm_list"]) != d["heap"]["live"]:
    bad.append("the VMs' heap_live sum to %d, heap.live is %d" % (sum(v["heap_live"] for v in d["vm_list"]), d["heap"]["live"]))
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
EOF
		fail "[$label] per-VM checks failed (see above)"
	ok "[$label] $nt VMs in $nt threads: complete log, exact per-thread counts, per-VM heap balance, thread ids"
}

run_host "luaL_newstate, detached by lua_close"
run_host "malloc allocator, ljlog_detach" --malloc --detach
