#!/usr/bin/env bash
# ljlog e2e: coroutines freed by the GC while the profiler runs.
# coroutines.lua makes 5,000 coroutines, drops most of them suspended and
# collects garbage often, so lua_States named in the buffer are freed and
# their addresses reused. The counts of body(), step(), coroutine.yield and
# coroutine.resume, and the number of coroutines in the log, must equal the
# program's own counts. Under luajit, and in the C host with a malloc
# allocator, where AddressSanitizer catches any read of a freed coroutine.
. "$(dirname "$0")/lib.sh"

prog=$E2E/coroutines.lua
n=${COROUTINES_N:-5000}
opts="calls,alloc,gc,buffer=4k,flush=1ms"
body_line=$(grep -n '^local function body' "$prog" | cut -d: -f1)
step_line=$(grep -n '^local function step' "$prog" | cut -d: -f1)

check_counts() { # LOG COUNTS LABEL
	check_complete "$1"
	report_json "$1" "$T/r.json"
	python3 - "$T/r.json" "$2" "$prog" "$body_line" "$step_line" <<'EOF' || fail "$3: counts differ (see above)"
import json, sys
jpath, counts, prog, body_line, step_line = sys.argv[1:]
d = json.load(open(jpath))
want = dict((k, int(v)) for k, v in (ln.split() for ln in open(counts)))
fn = {f["name"]: f for f in d["functions"]}
# Lua functions by chunk:line too, named ones ("fib (app.lua:4)") included.
for f in d["functions"]:
    if f["kind"] == "lua":
        fn.setdefault("%s:%d" % (f["file"], f["line"]), f)
names = {"body": "%s:%s" % (prog, body_line), "step": "%s:%s" % (prog, step_line),
         "coroutine.yield": "coroutine.yield", "coroutine.resume": "coroutine.resume"}
bad = []
for k, name in names.items():
    got = fn[name]["calls"] if name in fn else None
    if got != want[k]:
        bad.append("%s: the program counted %d calls, ljlog reports %s" % (name, want[k], got))
for where, got in (("coroutines", d["coroutines"]), ("vm_list[0].coroutines", d["vm_list"][0]["coroutines"])):
    if got != want["coroutines"]:
        bad.append("%s: the program ran %d coroutines (main included), ljlog reports %s"
                   % (where, want["coroutines"], got))
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("ok: coroutines: %s" % ", ".join("%s=%d" % kv for kv in sorted(want.items())))
EOF
}

profile "file=$T/lj.ljlog,$opts" "$prog" 1 "$T/lj.txt" "$n" 2>"$T/lj.err" ||
	{ show "$T/lj.err"; fail "the profiled luajit run failed"; }
check_counts "$T/lj.ljlog" "$T/lj.txt" luajit
ok "luajit with its own allocator: exact counts and coroutines"

host --malloc --script "$prog" --options "file=$T/host.ljlog,$opts" \
	-- "$T/host.txt" "$n" >"$T/host.out" 2>"$T/host.err" ||
	{ show "$T/host.err"; fail "the host run (malloc allocator) failed"; }
check_counts "$T/host.ljlog" "$T/host.txt" host
ok "C host with lua_newstate(malloc allocator): exact counts and coroutines"
