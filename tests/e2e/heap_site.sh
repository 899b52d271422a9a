#!/usr/bin/env bash
# ljlog e2e: allocation sites of heap snapshot objects (`ljlog heap --by
# site`, the sites of `--diff`), format version 10. heap_site.lua builds,
# with the JIT off and the GC stopped, 300 tables at one line and 150
# fresh strings at another, snapshots, adds 70 tables at a third line and
# snapshots again; it measures each structure's bytes itself
# (collectgarbage("count") deltas). Checked:
#  - --by site --json: exactly 300 tables of those bytes at the tables'
#    line and exactly 150 strings of those bytes at the strings' line;
#    the groups and the objects without a site add up to the snapshot;
#  - the same figures from our own join of `ljlog dump -v`'s ALLOC,
#    REALLOC and FREE lines with the OBJECT lines' addresses and sizes;
#  - --diff 1 2: the new objects by site are exactly the 70 tables at
#    the third line, text and JSON;
#  - cdata of lj_cdata_newv (VLA, over-aligned), whose block starts before
#    the object, have their ffi.new site like plain ones;
#  - alloc=RATE: only sampled objects have sites, counted as they are (no
#    estimate) and said so; without alloc: no sites, exit status 1.
. "$(dirname "$0")/lib.sh"

lua=$E2E/heap_site.lua
line_of() { grep -n -- "-- @site $1\$" "$lua" | cut -d: -f1; }
TL=$(line_of tables)
SL=$(line_of strings)
AL=$(line_of added)
[ -n "$TL" ] && [ -n "$SL" ] && [ -n "$AL" ] || fail "no @site lines in $lua"

log=$T/site.ljlog
rc=0
profile "file=$log,alloc" "$lua" 300 150 70 >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/err"; fail "heap_site.lua exited with status $rc"; }
check_complete "$log"
show "$T/out"
ljlog heap --json "$log" >"$T/list.json" || fail "ljlog heap --json"
ljlog heap --by site --snapshot 1 --json "$log" >"$T/s1.json" ||
	fail "ljlog heap --by site --snapshot 1 --json"
ljlog heap --by site --snapshot 1 "$log" >"$T/s1.txt" ||
	fail "ljlog heap --by site --snapshot 1"
ljlog heap --by site --json "$log" >"$T/s2.json" ||
	fail "ljlog heap --by site --json (the last snapshot)"
ljlog heap --diff 1 2 --json "$log" >"$T/diff.json" || fail "ljlog heap --diff --json"
ljlog heap --diff 1 2 "$log" >"$T/diff.txt" || fail "ljlog heap --diff"
ljlog dump -v "$log" >"$T/dump" || fail "ljlog dump -v"

python3 - "$T/out" "$T/list.json" "$T/s1.json" "$T/s2.json" "$T/diff.json" \
	"$T/s1.txt" "$T/diff.txt" "$T/dump" "$TL" "$SL" "$AL" <<'PY' || fail "see above"
import json, re, sys
M = {k: int(v) for k, v in (kv.split("=") for kv in open(sys.argv[1]).read().split())}
lst, s1, s2, diff = (json.load(open(p)) for p in sys.argv[2:6])
s1txt, difftxt = open(sys.argv[6]).read(), open(sys.argv[7]).read()
dump = sys.argv[8]
TL, SL, AL = (int(x) for x in sys.argv[9:12])
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

def at(groups, line):
    g = [x for x in groups if x["kind"] == "lua" and x["line"] == line and
         x["file"].endswith("heap_site.lua")]
    if len(g) != 1:
        die("%d site groups at heap_site.lua line %d: %r" % (len(g), line, groups[:8]))
    x = g[0]
    if x["site"] != "%s line %d" % (x["function"], line):
        die("site text %r, not its function and line" % x["site"])
    return x

# --by site, snapshot 1: the tables and the strings, exactly.
if s1["snapshot"] != 1 or s1["has_sites"] is not True or s1["alloc_sampled"] is not None:
    die("--by site snapshot 1 header: %r" % {k: s1[k] for k in s1 if k != "sites"})
t = at(s1["sites"], TL)
if (t["objects"], t["bytes"]) != (M["tn"], M["tbytes"]):
    die("tables' site: %d objects %d bytes, the program made %d of %d bytes" %
        (t["objects"], t["bytes"], M["tn"], M["tbytes"]))
s = at(s1["sites"], SL)
if (s["objects"], s["bytes"]) != (M["sn"], M["sbytes"]):
    die("strings' site: %d objects %d bytes, the program made %d of %d bytes" %
        (s["objects"], s["bytes"], M["sn"], M["sbytes"]))
bs = [x["bytes"] for x in s1["sites"]]
if bs != sorted(bs, reverse=True):
    die("--by site not largest first")
snap1 = lst["snapshots"][0]
n = sum(x["objects"] for x in s1["sites"]) + s1["no_site_objects"]
b = sum(x["bytes"] for x in s1["sites"]) + s1["no_site_bytes"]
if (n, b) != (snap1["objects"], snap1["bytes"]):
    die("sites + no site: %d objects %d bytes; the snapshot has %d, %d" %
        (n, b, snap1["objects"], snap1["bytes"]))
if s1["no_site_objects"] == 0 or "before ljlog attached" not in s1["no_site_why"]:
    die("objects without a site: %d (%r)" % (s1["no_site_objects"], s1["no_site_why"]))
if not re.search(r"\n +%d +%s  main chunk \(.*heap_site\.lua\) line %d\n" % (M["tn"], re.escape(rb(M["tbytes"])), TL), s1txt):
    die("--by site text has no row for the tables:\n" + s1txt)
if "(no site: allocated before ljlog attached)" not in s1txt:
    die("--by site text: no row for objects without a site:\n" + s1txt)
print("ok: --by site: %d tables (%d bytes) at line %d, %d strings (%d bytes) at line %d" %
      (M["tn"], M["tbytes"], TL, M["sn"], M["sbytes"], SL))

# Snapshot 2 (the default: the last) has the added tables at their line.
a = at(s2["sites"], AL)
if s2["snapshot"] != 2 or (a["objects"], a["bytes"]) != (M["an"], M["abytes"]):
    die("snapshot 2, added tables' site: %r" % a)
if at(s2["sites"], TL)["objects"] != M["tn"]:
    die("snapshot 2 lost tables at line %d" % TL)

# Our own join: dump -v's ALLOC/REALLOC/FREE lines (in file order) give the
# live blocks; each OBJECT line's address picks its block's site.
EV = re.compile(r"^    ts \d+ co \d+ (ALLOC|REALLOC|FREE) (.*)$")
OBJ = re.compile(r"^    object #(\d+) (\w+) size (\d+)(?: unreachable)? at 0x([0-9a-f]+) ")
SUM = re.compile(r"^  vm \d+, snapshot (\d+):")
live, joined, cur = {}, {}, {}
for l in open(dump, encoding="utf-8", errors="replace"):
    m = EV.match(l)
    if m:
        rest = m[2]
        site = re.match(r"site (\w+) \d+ \((.*)\) line (\d+) ", rest)
        if m[1] in ("FREE", "REALLOC"):
            old = re.search(r"(?:old|addr) 0x([0-9a-f]+)", rest)
            live.pop(int(old[1], 16), None)
        if m[1] in ("ALLOC", "REALLOC"):
            new = re.search(r"(?:new|addr) 0x([0-9a-f]+) size", rest)
            live[int(new[1], 16)] = (site[1], site[2], int(site[3])) if site else None
        continue
    m = OBJ.match(l)
    if m:
        st = live.get(int(m[4], 16))
        if st and st[0] == "lua" and st[1].endswith("heap_site.lua)"):
            c = cur.setdefault(st[2], [0, 0, set()])
            c[0] += 1
            c[1] += int(m[3])
            c[2].add(m[2])
        continue
    m = SUM.match(l)
    if m:
        joined[int(m[1])], cur = cur, {}
if len(joined) != 2:
    die("dump -v: %d snapshots, not 2" % len(joined))
for line, name, grp, types in ((TL, "tables", t, {"table"}), (SL, "strings", s, {"string"})):
    c = joined[1].get(line)
    if not c or c[0] != grp["objects"] or c[1] != grp["bytes"] or c[2] != types:
        die("dump -v join, %s at line %d: %r; ljlog heap --by site: %d objects %d bytes" %
            (name, line, c, grp["objects"], grp["bytes"]))
print("ok: our own join of dump -v's events and objects gives the same figures")

# --diff 1 2: the new objects by site are the added tables, exactly.
if diff["has_sites"] is not True:
    die("--diff: has_sites %r" % diff["has_sites"])
ns = [x for x in diff["new_by_site"] if x["objects"]]
if len(ns) != 1:
    die("--diff: new objects at %d sites, not 1: %r" % (len(ns), ns))
x = ns[0]
if (x["line"], x["objects"], x["bytes"]) != (AL, M["an"], M["abytes"]) or x["kind"] != "lua":
    die("--diff new by site: %r; the program added %d tables of %d bytes at line %d" %
        (x, M["an"], M["abytes"], AL))
if diff["new_no_site_objects"] != 0:
    die("--diff: %d new objects without a site" % diff["new_no_site_objects"])
if not re.search(r"new objects by allocation site:\n +objects +bytes +site\n +%d +%s  .*line %d\n" %
                 (M["an"], re.escape(rb(M["abytes"])), AL), difftxt):
    die("--diff text, sites:\n" + difftxt[:2000])
print("ok: --diff 1 2: %d new tables, %d bytes, all at line %d" % (M["an"], M["abytes"], AL))
PY
ok "heap --by site and --diff: exact counts and bytes at the program's lines"

# cdata: 5 VLAs, 4 over-aligned and 3 plain, all ffi.new's (a fast
# function: its name is the site).
clog=$T/cdata.ljlog
profile "file=$clog,alloc" -e '
	local ffi, ljlog = require "ffi", require "ljlog"
	jit.off()
	collectgarbage("stop")
	ffi.cdef[[typedef struct { int a; } __attribute__((aligned(64))) al64_t;]]
	V = {}
	for i = 1, 5 do V[i] = ffi.new("int[?]", 100 + i) end
	for i = 6, 9 do V[i] = ffi.new("al64_t") end
	for i = 10, 12 do V[i] = ffi.new("int[4]") end
	ljlog.snapshot()' >/dev/null 2>"$T/cerr" || { show "$T/cerr"; fail "the cdata program failed"; }
ljlog heap --by site --json "$clog" >"$T/c.json" || fail "--by site, cdata"
ljlog heap --by type --json "$clog" >"$T/ct.json" || fail "--by type, cdata"
expect_eq "cdata objects" 12 "$(json_get "$T/ct.json" '[t["objects"] for t in d["types"] if t["type"] == "cdata"][0]')"
expect_eq "cdata at ffi.new's site" 12 "$(json_get "$T/c.json" '[s["objects"] for s in d["sites"] if s["site"] == "ffi.new"][0]')"
ok "heap --by site: VLA and over-aligned cdata have their ffi.new site"

# Sampled allocation: only sampled objects have sites, not scaled.
slog=$T/sampled.ljlog
profile "file=$slog,alloc=4096" "$lua" 300 150 70 >"$T/sout" 2>"$T/serr" ||
	{ show "$T/serr"; fail "heap_site.lua (alloc=4096) failed"; }
ljlog heap --by site --snapshot 1 --json "$slog" >"$T/ss.json" || fail "--by site, sampled"
ljlog heap --by site --snapshot 1 "$slog" >"$T/ss.txt" || fail "--by site text, sampled"
python3 - "$T/ss.json" "$T/ss.txt" "$TL" <<'PY' || fail "see above"
import json, sys
d, txt, TL = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), int(sys.argv[3])
def die(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)
if d["alloc_sampled"] != {"rate": 4096, "estimate": False}:
    die("alloc_sampled: %r" % d["alloc_sampled"])
t = [x for x in d["sites"] if x["kind"] == "lua" and x["line"] == TL]
# Each table is 64 bytes: a sampled one counts once, as itself.
if t and (t[0]["objects"] >= 300 or t[0]["bytes"] != 64 * t[0]["objects"]):
    die("sampled tables' site: %r (scaled?)" % t[0])
if "not sampled" not in d["no_site_why"] or d["no_site_objects"] == 0:
    die("sampled: no_site %d %r" % (d["no_site_objects"], d["no_site_why"]))
if "SAMPLED" not in txt or "not estimates" not in txt:
    die("sampled text says nothing of sampling:\n" + txt)
print("ok: alloc=4096: %d of 300 tables sampled, counted as they are" % (t[0]["objects"] if t else 0))
PY
ok "heap --by site with alloc=RATE: only sampled objects, not scaled"

# Without alloc: says to record it (exit status 2).
nlog=$T/noalloc.ljlog
profile "file=$nlog,calls" "$lua" 30 15 7 >/dev/null 2>"$T/nerr" ||
	{ show "$T/nerr"; fail "heap_site.lua (calls only) failed"; }
rc=0; ljlog heap --by site "$nlog" >"$T/ns.txt" 2>&1 || rc=$?
expect_eq "--by site without alloc: exit status" 2 "$rc"
grep -q "this log has no allocation events; record with -e alloc" "$T/ns.txt" || fail "--by site without alloc: $(cat "$T/ns.txt")"
ljlog heap --diff 1 2 --json "$nlog" >"$T/nd.json" || fail "--diff without alloc"
expect_eq "--diff without alloc: has_sites" false "$(json_get "$T/nd.json" 'd["has_sites"]')"
ok "heap --by site without alloc: record with -e alloc, exit 2"
