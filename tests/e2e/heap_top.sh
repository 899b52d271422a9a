#!/usr/bin/env bash
# ljlog e2e: `ljlog heap --top`, readable paths, --by metatable|site and the
# holders of --diff, on a heap built by construction (heap_top.lua). The
# program measures each structure's bytes itself (collectgarbage("count")
# before and after building it with the GC stopped): HOLD's, PAIR's and
# WV's retained sizes and what --diff finds under NEW equal those figures
# exactly; Point's objects and bytes in --by metatable too.
. "$(dirname "$0")/lib.sh"

log=$T/top.ljlog
N=200
rc=0
profile "file=$log" "$E2E/heap_top.lua" "$N" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/err"; fail "heap_top.lua exited with status $rc"; }
check_complete "$log"
show "$T/out"
ljlog heap --top 1000000 --snapshot 1 --json "$log" >"$T/top.json" ||
	fail "ljlog heap --top --json failed"
ljlog heap --top 5 --snapshot 1 "$log" >"$T/top.txt" ||
	fail "ljlog heap --top failed"
ljlog heap --by metatable --snapshot 1 --json "$log" >"$T/mt.json" ||
	fail "ljlog heap --by metatable failed"
ljlog heap --diff 1 2 --json "$log" >"$T/diff.json" ||
	fail "ljlog heap --diff failed"

python3 - "$T/out" "$T/top.json" "$T/mt.json" "$T/diff.json" "$T/top.txt" <<'PY' || fail "see above"
import json, re, sys
out = dict(kv.split("=") for kv in open(sys.argv[1]).read().split())
M = {k: int(v) for k, v in out.items()}
top = json.load(open(sys.argv[2]))
mt = json.load(open(sys.argv[3]))
diff = json.load(open(sys.argv[4]))
txt = open(sys.argv[5]).read()
def rb(n):  # bytes as the text views show them (KiB, MiB: one decimal)
    if n < 1024:
        return "%d B" % n
    v, u = n / 1024, 0
    while v >= 1024 and u < 3:
        v, u = v / 1024, u + 1
    return "%.1f %s" % (v, ("KiB", "MiB", "GiB", "TiB")[u])
def die(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)
if top["snapshot"] != 1:
    die("--top names snapshot %r" % top["snapshot"])
by = {}
for e in top["top"]:
    for k in ("id", "type", "text", "self_bytes", "retained_bytes", "path"):
        if k not in e:
            die("--top entry without %s: %r" % (k, e))
    by.setdefault(e["path"], []).append(e)
rs = [e["retained_bytes"] for e in top["top"]]
if rs != sorted(rs, reverse=True):
    die("--top not in decreasing retained size")
def one(path, typ=None):
    xs = by.get(path, [])
    if typ:
        xs = [e for e in xs if e["type"] == typ]
    if len(xs) != 1:
        die("%d objects with path %r, not 1 (paths: %r)" %
            (len(xs), path, sorted(p for p in by if path.split(".")[1][:4] in p)[:20]))
    return xs[0]

# HOLD: retained == the program's own count of its bytes.
h = one("_G.HOLD", "table")
if h["retained_bytes"] != M["hold"]:
    die("_G.HOLD retains %d bytes, the program counted %d" % (h["retained_bytes"], M["hold"]))
s = one("_G.HOLD[17].name", "string")
if s["text"] != "hold-name-000017":
    die("_G.HOLD[17].name is %r" % s["text"])
print("ok: _G.HOLD retains %d bytes = collectgarbage delta; _G.HOLD[17].name found" % M["hold"])

# PAIR: the shared string is retained by neither a nor b, by PAIR.
p = one("_G.PAIR", "table")
a = one("_G.PAIR.a", "table")
b = one("_G.PAIR.b", "table")
if p["retained_bytes"] != M["pair"]:
    die("_G.PAIR retains %d, the program counted %d" % (p["retained_bytes"], M["pair"]))
for x in (a, b):
    if x["retained_bytes"] != x["self_bytes"]:
        die("a PAIR member retains %d bytes, more than itself (%d): the shared string counted" %
            (x["retained_bytes"], x["self_bytes"]))
sh = [e for e in top["top"] if e["text"].startswith("spairspair")]
if len(sh) != 1 or sh[0]["path"] not in ("_G.PAIR.a.s", "_G.PAIR.b.s") or sh[0]["self_bytes"] != 1028:
    die("the shared string: %r" % sh)
print("ok: _G.PAIR retains %d = delta; .a and .b retain only themselves" % M["pair"])

# WV: weak values retain nothing: WV retains itself and its metatable.
w = one("_G.WV", "table")
if w["retained_bytes"] != M["wv"]:
    die("_G.WV retains %d, the program counted %d (itself and its metatable)" % (w["retained_bytes"], M["wv"]))
ws = one("_G.WSTRONG", "table")
if ws["retained_bytes"] < 2000:
    die("_G.WSTRONG retains %d bytes, its payload is 2000+" % ws["retained_bytes"])
if [e for e in top["top"] if e["text"] == "weakly held only"]:
    die("the table held only by a weak value is listed: %r" % [e for e in top["top"] if e["text"] == "weakly held only"])
if top["unreachable_objects"] < 1:
    die("no object left out as unreached")
print("ok: _G.WV retains %d = delta (not _G.WSTRONG); the weakly held table is left out" % M["wv"])

# Upvalue and coroutine local.
up = [e for e in top["top"] if e["text"] == "upvalue cache"]
want = r"^upvalue cache of _G\.HANDLER \(.*heap_top\.lua:%d\)$" % M["handler_line"]
if len(up) != 1 or not re.match(want, up[0]["path"]):
    die("upvalue table: %r, want path /%s/" % (up, want))
co = [e for e in top["top"] if e["text"] == "coroutine buf"]
want = r"^stack of coroutine _G\.CO \(.*heap_top\.lua:%d\) local buf$" % M["co_line"]
if len(co) != 1 or not re.match(want, co[0]["path"]):
    die("coroutine local's string: %r, want path /%s/" % (co, want))
print("ok: %s; %s" % (up[0]["path"], co[0]["path"]))

# Keys.
for path, text in (('_G.NAMED["a b"][1]', "under a b"), ('_G.NAMED["end"][1]', "under end")):
    if one(path, "string")["text"] != text:
        die("%s is not %r" % (path, text))
okey = one("_G.OKEY", "table")
one('_G.NAMED[<table #%d>][1]' % okey["id"], "string")
print('ok: keys as ["a b"], ["end"], [<table #%d>]' % okey["id"])

# Text form: the same first entry.
first = top["top"][0]
if not re.search(r"^\s*%d table\s+%s\s+%s  _G  " % (first["id"], re.escape(rb(first["self_bytes"])), re.escape(rb(first["retained_bytes"]))), txt, re.M):
    die("--top text has no line for %r:\n%s" % (first, txt))

# --by metatable: the three Points.
g = [x for x in mt["metatables"] if x["metatable"] == '__name "Point"']
if len(g) != 1 or g[0]["objects"] != 3 or g[0]["bytes"] != M["point"]:
    die("--by metatable Point: %r, the program made 3 of %d bytes" % (g, M["point"]))
g = [x for x in mt["metatables"] if x["metatable"] == "_G.CLASS2"]
if len(g) != 1 or g[0]["objects"] != 2:
    die("--by metatable _G.CLASS2: %r, want 2 objects" % g)
print("ok: --by metatable: Point 3 objects %d bytes = delta, _G.CLASS2 2" % M["point"])

# --diff: NEW is what grew under _G.
g = [x for x in diff["new_by_path"] if x["path"] == "_G.NEW"]
n = 2 * M["N"] + 1
if len(g) != 1 or g[0]["objects"] != n or g[0]["bytes"] != M["new"] or g[0]["holder"] != "_G":
    die("--diff _G.NEW: %r, the program made %d objects of %d bytes under _G" % (g, n, M["new"]))
if diff["has_sites"] is not True:
    die("--diff: no sites (the default options record allocations)")
ids = set(e["id"] for e in diff["new"])
if len(ids) < n:
    die("--diff lists %d new objects, fewer than NEW's %d" % (len(ids), n))
print("ok: --diff 1 2: _G.NEW held by _G, %d objects %d bytes = delta" % (n, M["new"]))
PY
ok "heap --top: retained sizes equal the program's own counts, readable paths"

# --path-to prints the same readable path first.
id=$(json_get "$T/top.json" '[e["id"] for e in d["top"] if e["path"] == "_G.HOLD[17].name"][0]')
line=$(ljlog heap --path-to "$id" --snapshot 1 "$log" | head -1)
expect_eq "--path-to $id, first line" "_G.HOLD[17].name" "$line"
ljlog heap --path-to "$id" --snapshot 1 --json "$log" >"$T/path.json" || fail "--path-to --json"
expect_eq "--path-to --json readable" "_G.HOLD[17].name" "$(json_get "$T/path.json" 'd["readable"]')"
ok "heap --path-to: _G.HOLD[17].name"

# --by site works on this log (sites: heap_site.sh); bad --top values are
# usage errors.
rc=0; ljlog heap --by site "$log" >"$T/site" 2>&1 || rc=$?
expect_eq "--by site: exit status" 0 "$rc"
grep -q "objects by allocation site" "$T/site" || fail "--by site: $(cat "$T/site")"
rc=0; ljlog heap --top 0 "$log" >/dev/null 2>"$T/e" || rc=$?
expect_eq "--top 0: exit status" 2 "$rc"
rc=0; ljlog heap --top 3 --diff 1 2 "$log" >/dev/null 2>"$T/e" || rc=$?
expect_eq "--top with --diff: exit status" 2 "$rc"
ok "heap --by site lists sites; bad --top: exit 2"

# --diff's largest new objects: N like coroutines, each at its own index of
# an old table, are one row (issue 38, 10: 20 identical rows); the other
# new table its own row.
n=20
like=$T/like.ljlog
profile "file=$like" "$E2E/heap_like.lua" "$n" >"$T/like.out" 2>"$T/like.err" ||
	{ show "$T/like.err"; fail "heap_like.lua failed under the profiler"; }
check_complete "$like"
ljlog heap --diff 1 2 -n 0 "$like" >"$T/like.txt" 2>&1 || { show "$T/like.txt"; fail "heap --diff 1 2 (heap_like)"; }
sed -n '/^largest new objects/,$p' "$T/like.txt" >"$T/like.rows"
grep -Eq "^ +$n +[0-9.]+ (B|KiB)  \(stack of main thread \(main chunk of .*heap_like.lua\) local cos\)\[\*\]  $n x thread, the largest #[0-9]+ \"coroutine\"\$" "$T/like.rows" ||
	{ show "$T/like.rows"; fail "heap --diff: no one row of the $n coroutines"; }
grep -Eq "local other  #[0-9]+ table " "$T/like.rows" ||
	{ show "$T/like.rows"; fail "heap --diff: no row of the other table"; }
! grep -q "local cos)\[[0-9]" "$T/like.rows" ||
	{ show "$T/like.rows"; fail "heap --diff: a coroutine in a row of its own"; }
ok "heap --diff: $n like coroutines in one row, the other table in its own"
