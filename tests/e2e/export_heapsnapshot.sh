#!/usr/bin/env bash
# ljlog e2e: `ljlog export --format heapsnapshot` files open in Chrome
# DevTools' own heap snapshot loader (heap-snapshot-toolkit, DevTools'
# front end code, run by heapsnapshot_load.mjs). export_heapsnapshot.lua
# builds _G.HOLD (NT tables of NS distinct strings) between two snapshots
# with the GC stopped and prints what collectgarbage("count") grew by.
# Checked: both snapshots load with no problem reported; the objects
# (odd node IDs) and their self sizes are `ljlog heap --json`'s objects and
# bytes, all nodes LuaJIT's gc_total; HOLD's retained size (DevTools'
# dominator tree) is the Lua-side count; DevTools' comparison of the two by
# node ID adds exactly NT+1 tables and NT*NS strings and removes nothing,
# and the added IDs are HOLD and what hangs from it. Bad input: a log with
# no snapshot (exit 1, no file), no -o (exit 2), a snapshot index beyond
# the log's (exit 1), a truncated log (a warning, the complete snapshot).
# Skips when node or heap-snapshot-toolkit is absent.
. "$(dirname "$0")/lib.sh"
TOOLS=$top_srcdir/tests/tools
command -v node >/dev/null 2>&1 || skip "needs node (scripts/setup-tools.sh installs it)"
[ -d "$TOOLS_MODULES/heap-snapshot-toolkit" ] ||
	skip "needs heap-snapshot-toolkit in $TOOLS_MODULES (scripts/setup-tools.sh installs it)"

NT=7
NS=9
log=$T/h.ljlog
profile "file=$log,nodefaults,calls" "$E2E/export_heapsnapshot.lua" "$NT" "$NS" >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "export_heapsnapshot.lua failed"; }
check_complete "$log"
read -r delta ok1 ok2 <"$T/out"
expect_eq "ljlog.snapshot() returns" "true true" "$ok1 $ok2"
ljlog heap --json "$log" >"$T/list.json" || fail "ljlog heap --json failed"

ljlog export -q -f heapsnapshot --snapshot 1 -o "$T/1.heapsnapshot" "$log" 2>"$T/e1" ||
	{ show "$T/e1"; fail "export --snapshot 1 failed"; }
ljlog export -q -f heapsnapshot -o "$T/2.heapsnapshot" "$log" 2>"$T/e2" ||
	{ show "$T/e2"; fail "export (the last snapshot) failed"; }
node_run "$E2E/heapsnapshot_load.mjs" "$TOOLS" "$T/1.heapsnapshot" "$T/2.heapsnapshot" \
	>"$T/load.json" 2>"$T/load.err" || { show "$T/load.err"; fail "DevTools' loader failed"; }

python3 - "$T/load.json" "$T/list.json" "$T/1.heapsnapshot" "$T/2.heapsnapshot" \
	"$NT" "$NS" "$delta" "$E2E/export_heapsnapshot.lua" <<'PY' || fail "see above"
import json, sys
ld = json.load(open(sys.argv[1]))
lst = json.load(open(sys.argv[2]))["snapshots"]
raw = [json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))]
NT, NS, delta = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
bad = []
if len(lst) != 2:
    bad.append("ljlog heap lists %d snapshots, the program took 2" % len(lst))
for k, s in (("a", lst[0]), ("b", lst[-1])):
    f = ld[k]
    if f["problems"]:
        bad.append("%s: DevTools reported %r" % (k, f["problems"]))
    if f["objects"] != s["objects"] or f["objects_self"] != s["bytes"]:
        bad.append("%s: DevTools has %d objects of %d bytes, ljlog heap %d of %d"
                   % (k, f["objects"], f["objects_self"], s["objects"], s["bytes"]))
    for what in ("self_total", "total_size", "root_retained", "statistics_total"):
        if f[what] != s["gc_total"]:
            bad.append("%s: DevTools' %s %d, gc_total %d" % (k, what, f[what], s["gc_total"]))
b = ld["b"]
if not b["hold"] or b["hold"]["name"] != "table" or b["hold"]["type"] != "object":
    bad.append("HOLD: %r, want an object named table" % b["hold"])
elif b["hold"]["retained"] != delta:
    bad.append("HOLD's retained size %d, collectgarbage('count') grew by %d"
               % (b["hold"]["retained"], delta))
if ld["a"]["hold"]:
    bad.append("HOLD is a table in snapshot 1 already: %r" % ld["a"]["hold"])
want = {"table": NT + 1, "(string)": NT * NS}
got = {n: (d["added"], d["removed"]) for n, d in ld["diff"].items()
       if d["added"] or d["removed"]}
if got != {n: (c, 0) for n, c in want.items()}:
    bad.append("DevTools' comparison: %r, want %r added" % (got, want))
for n, c in want.items():
    d = ld["b"]["classes"][n]["count"] - ld["a"]["classes"][n]["count"]
    if d != c:
        bad.append("class summary: %s grew by %d, want %d" % (n, d, c))

# The added IDs: those of B that A lacks, and HOLD with what it holds.
def nodes(d):
    nf = len(d["snapshot"]["meta"]["node_fields"])
    n = d["nodes"]
    return [n[i:i + nf] for i in range(0, len(n), nf)], nf
na, _ = nodes(raw[0])
nb, nf = nodes(raw[1])
ida = {x[2] for x in na}
new = {x[2] for x in nb if x[2] not in ida}
added = set()
for d in ld["diff"].values():
    added |= set(d["added_ids"])
if added != new:
    bad.append("added IDs %r, the IDs B has and A lacks %r" % (sorted(added), sorted(new)))
# Walk B's element edges down from HOLD.
first, e = [], 0
for x in nb:
    first.append(e)
    e += x[4] * 3
ordinal = {x[2]: i for i, x in enumerate(nb)}
edges = raw[1]["edges"]
def elems(i):
    return [edges[first[i] + 3 * k + 2] // nf for k in range(nb[i][4])
            if edges[first[i] + 3 * k] == 1]
hold = ordinal[b["hold"]["id"]]
sub = {hold}
for t in elems(hold):
    sub.add(t)
    sub |= set(elems(t))
subids = {nb[i][2] for i in sub}
if subids != new:
    bad.append("HOLD and what it holds %r, the new IDs %r" % (sorted(subids), sorted(new)))
# Element edges by index, strings by their text: HOLD[i][j] == "hold-i-j".
strs = raw[1]["strings"]
def elem_map(i):
    return {edges[first[i] + 3 * k + 1]: edges[first[i] + 3 * k + 2] // nf
            for k in range(nb[i][4]) if edges[first[i] + 3 * k] == 1}
hm = elem_map(hold)
if sorted(hm) != list(range(1, NT + 1)):
    bad.append("HOLD's elements %r, want 1..%d" % (sorted(hm), NT))
for i, t in hm.items():
    tm = elem_map(t)
    got = {j: (nb[v][0], strs[nb[v][1]]) for j, v in tm.items()}
    exp = {j: (2, "hold-%d-%d" % (i, j)) for j in range(1, NS + 1)}
    if got != exp:
        bad.append("HOLD[%d]: %r, want %r" % (i, got, exp))
        break
# The function that built it: closure, named as the program names it.
lua = sys.argv[8]
line = next(n for n, l in enumerate(open(lua), 1) if l.startswith("local function build"))
want_fn = "build (%s:%d)" % (lua, line)
types = raw[1]["snapshot"]["meta"]["node_types"][0]
fns = [x for x in nb if strs[x[1]] == want_fn]
if len(fns) != 1 or types[fns[0][0]] != "closure":
    bad.append("%d nodes named %r (want one closure)" % (len(fns), want_fn))
if any(x[2] % 2 == 0 for x in nb if x[2] in new):
    bad.append("an added node has an even (synthetic) ID")
if bad:
    print("FAIL: " + "\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("ok: %d+%d objects, %d bytes of objects, %d in all; HOLD retains %d bytes;"
      " HOLD[i][j] named by index, its strings by text; %s is a closure"
      % (ld["a"]["objects"], ld["b"]["objects"] - ld["a"]["objects"],
         ld["b"]["objects_self"], ld["b"]["self_total"], delta, want_fn))
PY
ok "DevTools loads both snapshots: objects, bytes and gc_total as ljlog heap says, HOLD retains what Lua counted ($delta bytes)"
ok "DevTools' comparison adds $((NT + 1)) tables and $((NT * NS)) strings (HOLD's), removes nothing"

# Bad input. A log with no snapshot: exit 1, no file.
profile "file=$T/none.ljlog,nodefaults" -e "local x = {}" >/dev/null 2>"$T/none.err" ||
	{ show "$T/none.err"; fail "the run without snapshot failed"; }
rc=0
ljlog export -q -f heapsnapshot -o "$T/none.heapsnapshot" "$T/none.ljlog" 2>"$T/e" || rc=$?
expect_eq "no snapshot: exit status" 1 "$rc"
grep -q "holds no heap snapshot" "$T/e" || { show "$T/e"; fail "no snapshot: no message"; }
[ ! -e "$T/none.heapsnapshot" ] || fail "no snapshot: a file was left"
ok "a log with no snapshot: exit 1, $(cat "$T/e")"

rc=0
(cd "$T" && ljlog export -q -f heapsnapshot "$log") >"$T/o" 2>"$T/e" || rc=$?
expect_eq "no -o: exit status" 2 "$rc"
grep -q "no output given: --format heapsnapshot needs -o OUT" "$T/e" || { show "$T/e"; fail "no -o: no message"; }
[ ! -s "$T/o" ] || fail "no -o: something was written"
ok "no -o: exit 2, $(cat "$T/e")"

rc=0
ljlog export -q -f heapsnapshot --snapshot 3 -o "$T/3.heapsnapshot" "$log" 2>"$T/e" || rc=$?
expect_eq "--snapshot 3 of 2: exit status" 1 "$rc"
[ ! -e "$T/3.heapsnapshot" ] || fail "--snapshot 3: a file was left"
grep -q "no snapshot 3" "$T/e" || { show "$T/e"; fail "--snapshot 3: no message"; }
ok "--snapshot beyond the log's: exit 1, $(cat "$T/e")"

# A truncated log: cut in the middle of the last HEAP block (snapshot 2);
# snapshot 1, complete, is exported, with a warning.
ljlog dump "$log" >"$T/dump" || fail "ljlog dump failed"
read -r off len < <(sed -n 's/^block [0-9]* at offset \([0-9]*\): HEAP, \([0-9]*\) bytes$/\1 \2/p' "$T/dump" | tail -n 1)
[ -n "$len" ] || { show "$T/dump"; fail "no HEAP block in ljlog dump"; }
head -c $((off + 16 + len / 2)) "$log" >"$T/cut.ljlog"
rc=0
ljlog export -q -f heapsnapshot -o "$T/cut.heapsnapshot" "$T/cut.ljlog" 2>"$T/e" || rc=$?
expect_eq "truncated log: exit status" 0 "$rc"
grep -q "warning: log truncated" "$T/e" || { show "$T/e"; fail "truncated log: no warning"; }
# The same nodes and edges as snapshot 1's from the whole log (names may
# differ: MAPPING records after the cut name more functions).
python3 - "$T/cut.heapsnapshot" "$T/1.heapsnapshot" <<'PY' || fail "truncated log: the export is not snapshot 1's"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
def shape(d):
    n, e = d["nodes"], d["edges"]
    return ([v for i, v in enumerate(n) if i % 7 != 1], e[0::3], e[2::3])
if shape(a) != shape(b):
    sys.exit(1)
PY
rc=0
ljlog export -q -f heapsnapshot -s 2 -o "$T/cut2.heapsnapshot" "$T/cut.ljlog" 2>"$T/e" || rc=$?
expect_eq "truncated log, --snapshot 2: exit status" 1 "$rc"
[ ! -e "$T/cut2.heapsnapshot" ] || fail "truncated log, --snapshot 2: a file was left"
ok "a log cut inside snapshot 2: snapshot 1 exported with a warning; --snapshot 2: exit 1"
