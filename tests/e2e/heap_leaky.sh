#!/usr/bin/env bash
# ljlog e2e: the first screen answers "what holds memory", on a leak as
# users write it (heap_leaky.lua: a cache that never evicts N sessions, a
# weak memo, M temporary strings left to the GC). Checked against the
# program's own counts:
#  - heap --diff 1 2 -n 10 is short, and its first grouped line is the
#    cache's sessions table with +N objects; the JSON says the same; its
#    largest new objects are the N sessions in one row;
#  - heap --top picks the largest snapshot (2, not the exit one, taken when
#    nothing holds the local cache) and says so;
#  - report --leaks splits by snapshot 2: the temporaries' site
#    (string.format) is garbage with exactly M objects, not a leak, and the
#    sessions' site is held; without a snapshot it says figures may
#    include garbage; without alloc it exits 2 naming the family;
#  - the kept gmatch iterator is "string.gmatch (iterator)";
#  - heap_holders.lua: at exit, a global cache, a module's, an upvalue's
#    and (when the program ends in os.exit) a main-chunk local's are named
#    by the paths the program writes (_G.GCACHE,
#    package.loaded.holdmod.cache, upvalue upcache of _G.lookup or the
#    local upcache, local localcache); when the main chunk returned, its
#    local's cache is reached by no root (garbage);
#  - heap_code.lua: a cache that only a trace's constant reaches at exit
#    is shown as held by compiled code; the program's own path, when
#    there is one, wins over a shorter one through code.
. "$(dirname "$0")/lib.sh"

prog=$E2E/heap_leaky.lua
N=20000
log=$T/leaky.ljlog
profile "file=$log,nodefaults,calls,alloc,gc,snapshot=exit" "$prog" $N >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "heap_leaky.lua failed"; }
expect_eq "program output" "$N	$N	alpha" "$(cat "$T/out")"
M=$(cut -f2 "$T/out")
check_complete "$log"

# --diff: short, the cache first.
ljlog heap --diff 1 2 -n 10 "$log" >"$T/diff.txt" || fail "heap --diff -n 10"
ljlog heap --diff 1 2 --json "$log" >"$T/diff.json" || fail "heap --diff --json"
show "$T/diff.txt"
lines=$(wc -l <"$T/diff.txt")
[ "$lines" -le 25 ] || fail "heap --diff -n 10: $lines lines"
# The N sessions, one index each, are one row of the largest new objects
# (they were N rows, cut at 10).
grep -Eq "^ +$((2 * N)) +[0-9.]+ MiB  \(stack of main thread \(.*\) local Cache\)\.sessions\[\*\]  $N x table, the largest #" "$T/diff.txt" ||
	fail "heap --diff -n 10: the $N sessions are not one row of the largest new objects"
g=$(grep -A1 "^growth by holding path" "$T/diff.txt" | tail -1)
case $g in
"  "*"local Cache).sessions: +$N objects, +"*) ;;
*) fail "heap --diff: first grouped line '$g', want the cache's sessions with +$N objects" ;;
esac
python3 - "$T/diff.json" "$N" <<'PY' || fail "see above"
import json, sys
d, N = json.load(open(sys.argv[1])), int(sys.argv[2])
h = sorted(d["new_by_holder"], key=lambda x: -x["bytes"])[0]
if not h["holder"].endswith("local Cache).sessions") or h.get("top_objects") != N:
    print("FAIL: biggest holder %r, want Cache.sessions with %d top objects" % (h, N), file=sys.stderr)
    sys.exit(1)
if h["objects"] < N or d["objects_to"] - d["objects_from"] < h["objects"]:
    print("FAIL: holder objects %r, totals %d -> %d" % (h, d["objects_from"], d["objects_to"]), file=sys.stderr)
    sys.exit(1)
print("ok: --diff JSON: Cache.sessions holds %d new objects (%d in all)" % (N, h["objects"]))
PY
ok "heap --diff -n 10: $lines lines, first group: $g"

# --top: the largest snapshot by default, which is 2 (3 is at exit).
ljlog heap --json "$log" >"$T/list.json" || fail "heap --json"
expect_eq "snapshots" 3 "$(json_get "$T/list.json" 'len(d["snapshots"])')"
for k in 2 3; do
	ljlog heap --top 1 --snapshot $k --json "$log" >"$T/top$k.json" || fail "heap --top --snapshot $k"
done
r2=$(json_get "$T/top2.json" 'd["reachable_bytes"]')
r3=$(json_get "$T/top3.json" 'd["reachable_bytes"]')
[ "$r2" -gt "$r3" ] || fail "snapshot 2 reaches $r2 bytes, 3 reaches $r3: the program holds more in 2"
ljlog heap --top 5 --json "$log" >"$T/top.json" || fail "heap --top --json"
expect_eq "--top default snapshot" 2 "$(json_get "$T/top.json" 'd["snapshot"]')"
ljlog heap --top 5 "$log" >"$T/top.txt" || fail "heap --top"
grep -q "^snapshot 2 of 3 (the largest" "$T/top.txt" || { show "$T/top.txt"; fail "--top does not say it picked 2, the largest"; }
grep -q "local Cache).sessions" "$T/top.txt" || { show "$T/top.txt"; fail "--top: no Cache.sessions"; }
ok "heap --top: snapshot 2 of 3, the largest ($r2 bytes reached, exit snapshot $r3)"

# The gmatch iterator by its name.
ljlog heap --top 1000000 --json "$log" >"$T/all.json" || fail "heap --top all"
expect_eq "the kept iterator" "string.gmatch (iterator)" \
	"$(json_get "$T/all.json" '[e["text"] for e in d["top"] if e["path"].endswith("local words")][0]')"
ok "heap: the gmatch iterator is string.gmatch (iterator)"

# --leaks with a snapshot: the temporaries are garbage, the sessions held.
ljlog report --leaks -n 5 "$log" >"$T/leaks.txt" || fail "report --leaks"
show "$T/leaks.txt"
grep -q "^snapshot 2 of 3 (the largest" "$T/leaks.txt" || fail "--leaks does not name its snapshot"
live=$(sed -n '/^Live at the end/,/^Garbage in snapshot/p' "$T/leaks.txt")
garbage=$(sed -n '/^Garbage in snapshot/,/^Total/p' "$T/leaks.txt")
if grep -q "string.format" <<<"$live"; then fail "--leaks lists the temporaries' site as live: $live"; fi
grep -Eq "^ +$M +[0-9.]+ (B|KiB|MiB)  string\.format\$" <<<"$garbage" ||
	fail "--leaks: no garbage row of $M objects at string.format: $garbage"
grep -Eq "^ +[0-9]+ +[0-9.]+ (B|KiB|MiB) +$((2 * N)) +[0-9.]+ (B|KiB|MiB)  main chunk \(.*heap_leaky\.lua\) line $(grep -n 'local s = {id' "$prog" | cut -d: -f1)\$" <<<"$live" ||
	fail "--leaks: the sessions' line is not held with $((2 * N)) objects (table and string each): $live"
ok "report --leaks: string.format's $M temporaries are garbage, the sessions held"

# Without a snapshot: one line says so; without alloc: exit 2.
profile "file=$T/nosnap.ljlog,nodefaults,alloc" "$prog" 100 nosnap >/dev/null 2>"$T/err" || { show "$T/err"; fail "nosnap run"; }
ljlog report --leaks "$T/nosnap.ljlog" >"$T/ns.txt" || fail "report --leaks, no snapshot"
grep -q "^no heap snapshot: live figures may include garbage.*while the program runs" "$T/ns.txt" ||
	{ show "$T/ns.txt"; fail "--leaks without a snapshot does not say figures may include garbage"; }
profile "file=$T/noalloc.ljlog,nodefaults,calls,gc" "$prog" 100 >/dev/null 2>"$T/err" || { show "$T/err"; fail "noalloc run"; }
for v in --leaks "--heap-interval 10ms"; do
	rc=0; ljlog report $v "$T/noalloc.ljlog" >"$T/na.txt" 2>"$T/na.err" || rc=$?
	expect_eq "report $v without alloc: exit status" 2 "$rc"
	grep -q "this log has no allocation events; record with -e alloc" "$T/na.err" ||
		{ show "$T/na.err"; fail "report $v without alloc: message"; }
done
ok "report --leaks: no snapshot says so; no alloc: exit 2, 'record with -e alloc'"

# Held through compiled code: said so, and only when no path of the
# program's own reaches (the JIT makes run's trace: JIT on, 100000 calls).
for how in code global; do
	profile "file=$T/code-$how.ljlog,nodefaults,snapshot=exit" "$E2E/heap_code.lua" $how \
		>/dev/null 2>"$T/err" || { show "$T/err"; fail "heap_code.lua $how"; }
	ljlog heap --top 1000000 --json "$T/code-$how.ljlog" >"$T/code.json" || fail "heap --top ($how)"
	path=$(json_get "$T/code.json" '[e["path"] for e in d["top"] if e["type"] == "table" and e["text"].startswith("array 1025")][0]')
	case $how in
	code) want="[compiled code] upvalue cache of constant of trace N (.../heap_code.lua:8)"
		re='^\[compiled code\] upvalue cache of constant of trace [0-9]+ \(.*/heap_code\.lua:8\)$' ;;
	global) want="_G.keep.a.b.c.d.e.cache" re='^_G\.keep\.a\.b\.c\.d\.e\.cache$' ;;
	esac
	[[ $path =~ $re ]] || fail "heap_code.lua $how: the cache's path is '$path', want '$want'"
	id=$(json_get "$T/code.json" '[e["id"] for e in d["top"] if e["type"] == "table" and e["text"].startswith("array 1025")][0]')
	ljlog heap --path-to "$id" --json "$T/code-$how.ljlog" >"$T/pathto.json" || fail "heap --path-to $id ($how)"
	path=$(json_get "$T/pathto.json" 'd["readable"]')
	[[ $path =~ $re ]] || fail "heap_code.lua $how: --path-to $id says '$path', want '$want'"
done
ok "heap: a cache only a trace reaches is held by compiled code; a path of the program's own wins"

# Holders as the program writes them, at exit.
for how in exit ret; do
	profile "file=$T/hold-$how.ljlog,nodefaults,snapshot=exit" "$E2E/heap_holders.lua" $how \
		>"$T/out" 2>"$T/err" || { show "$T/err"; fail "heap_holders.lua $how"; }
	expect_eq "heap_holders.lua $how: output" 2000 "$(cat "$T/out")"
	ljlog heap --top 1000000 --json "$T/hold-$how.ljlog" >"$T/hold.json" || fail "heap --top ($how)"
	python3 - "$T/hold.json" "$how" <<'PY' || fail "heap_holders.lua $how: holders (see above)"
import json, re, sys
d, how = json.load(open(sys.argv[1])), sys.argv[2]
# the caches: tables with an array part of at least N + 1 (LuaJIT sizes it
# up to a power of two plus one)
caches = [e["path"] for e in d["top"] if e["type"] == "table" and
          re.fullmatch(r"array \d+ hash 0", e["text"]) and int(e["text"].split()[1]) > 2000]
want = [r"_G\.GCACHE", r"package\.loaded\.holdmod\.cache",
        r"(upvalue upcache of _G\.lookup \(.*heap_holders\.lua:16\)|stack of main thread \(main chunk of .*heap_holders\.lua\) local upcache)"]
if how == "exit":
    want.append(r"stack of main thread \(main chunk of .*heap_holders\.lua\) local localcache")
bad = [w for w in want if not any(re.fullmatch(w, c) for c in caches)]
if len(caches) != len(want) or bad:
    print("FAIL: [%s] caches held %r; no match for %r" % (how, caches, bad))
    sys.exit(1)
print("ok: [%s] %s" % (how, "; ".join(caches)))
PY
done
ok "heap: holders at exit by the program's own paths (global, package.loaded, upvalue, a main-chunk local while the main chunk runs)"