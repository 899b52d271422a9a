#!/usr/bin/env bash
# ljlog e2e: zones and marks (ljlog.zone, ljlog.mark; format 9).
# zones.lua allocates fixed-size tables at three lines: in zone A, in zone
# B nested in A, outside any zone, in 3 rounds, with the JIT and the GC
# off. The report's per-zone allocations must equal the allocation sites'
# own totals for those lines (the independent count: the heap processor,
# by site), inclusive (A holds B's); entries are exact; marks come in
# order with their texts (a long one cut to 255 bytes); a zone popped too
# often is a Lua error with its message and writes no event; unprofiled,
# the same program runs. zones_spin.lua spins in zone "spin" with samples.
# The chrome export shows the zones as B/E slices and the marks as instants.
. "$(dirname "$0")/lib.sh"

log=$T/z.ljlog
profile "file=$log,alloc" "$E2E/zones.lua" >"$T/out" 2>"$T/err" ||
	{ show "$T/err"; fail "the profiled run failed"; }
read -r rounds na nb no msg <"$T/out" || fail "zones.lua printed nothing"
pl=$(grep -n -- '-- POP$' "$E2E/zones.lua" | cut -d: -f1)
expect_eq "error of a zone popped too often" \
	"$E2E/zones.lua:$pl: ljlog.zone(): no zone to pop" "$msg"
check_complete "$log"
report_json "$log" "$T/r.json"

# The sites' own counts at the three lines (by the line's comment).
line_of() { grep -n -- "-- $1\$" "$E2E/zones.lua" | cut -d: -f1; }
la=$(line_of LA) lb=$(line_of LB) lo=$(line_of LO)
site() { # LINE FIELD: the alloc_sites row of zones.lua at LINE
	json_get "$T/r.json" "[s['$2'] for s in d['alloc_sites'] if s['file'].endswith('zones.lua') and s['line'] == $1][0]"
}
ca=$(site "$la" alloc_count) cb=$(site "$lb" alloc_count) co=$(site "$lo" alloc_count)
ba=$(site "$la" alloc_bytes) bb=$(site "$lb" alloc_bytes)
# The sites saw what the program did (one table per iteration).
expect_eq "allocations at line $la (zone A)" $((rounds * na)) "$ca"
expect_eq "allocations at line $lb (zone B)" $((rounds * nb)) "$cb"
expect_eq "allocations at line $lo (no zone)" $((rounds * no)) "$co"

zone() { # NAME FIELD
	json_get "$T/r.json" "[z['$2'] for z in d['zones'] if z['name'] == '$1'][0]"
}
expect_eq "zones" "['A', 'B']" "$(json_get "$T/r.json" 'sorted(z["name"] for z in d["zones"])')"
expect_eq "zone A entries" "$rounds" "$(zone A entries)"
expect_eq "zone B entries" "$rounds" "$(zone B entries)"
expect_eq "zone B alloc_count" "$cb" "$(zone B alloc_count)"
expect_eq "zone B alloc_bytes" "$bb" "$(zone B alloc_bytes)"
expect_eq "zone A alloc_count (A's and B's sites)" $((ca + cb)) "$(zone A alloc_count)"
expect_eq "zone A alloc_bytes (A's and B's sites)" $((ba + bb)) "$(zone A alloc_bytes)"
[ "$(json_get "$T/r.json" '[z for z in d["zones"] if z["name"] == "A"][0]["time_ns"] >= [z for z in d["zones"] if z["name"] == "B"][0]["time_ns"] > 0')" = true ] ||
	fail "zone times: A (inclusive) must hold B's, B's > 0: $(json_get "$T/r.json" 'd["zones"]')"
ok "zones A, B: $rounds entries each; allocations A $((ca + cb)) = sites $ca + $cb, B $cb; outside $co in no zone"

long=$(printf 'x%.0s' $(seq 255))
expect_eq "marks in order" "['start', 'round 1', 'round 2', 'round 3', '$long']" \
	"$(json_get "$T/r.json" '[m["text"] for m in d["marks"]]')"
[ "$(json_get "$T/r.json" 'all(a["time_ns"] <= b["time_ns"] for a, b in zip(d["marks"], d["marks"][1:]))')" = true ] ||
	fail "marks' times go back: $(json_get "$T/r.json" 'd["marks"]')"
# The failed pop wrote nothing: 2 pops per round.
ljlog dump -v "$log" >"$T/dump" || fail "ljlog dump -v failed"
expect_eq "ZONE_POP events" $((2 * rounds)) "$(grep -c ' VM ZONE_POP$' "$T/dump")"
expect_eq "ZONE_PUSH events" $((2 * rounds)) "$(grep -c ' VM ZONE_PUSH ' "$T/dump")"
grep -q '^  STRING [0-9]* "A"$' "$T/dump" || fail "no STRING record \"A\" in the dump"
ok "marks in order (the long one cut to 255 bytes); the pop of an empty stack: '$msg', no event"

# Text report: the zones table and the marks.
ljlog report "$log" >"$T/r.txt" || fail "ljlog report failed"
grep -q '^Zones: 2 ' "$T/r.txt" || { show "$T/r.txt"; fail "no 'Zones: 2' section in the text report"; }
grep -q '"round 2"$' "$T/r.txt" || { show "$T/r.txt"; fail "mark 'round 2' not in the text report"; }

# Chrome trace: B/E on the zones track, marks as instants.
ljlog export --format chrome -o "$T/z.json" "$log" || fail "export chrome failed"
python3 - "$T/z.json" <<'PY' || fail "chrome export: zones or marks missing (above)"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
         if e.get("ph") == "M" and e.get("name") == "thread_name"}
zt = [k for k, v in names.items() if v == "zones"]
assert len(zt) == 1, "one 'zones' track: %r" % names
z = [e for e in ev if (e.get("pid"), e.get("tid")) == zt[0] and e["ph"] in "BE"]
seq = [(e["ph"], e["name"]) for e in z]
assert seq == [("B", "A"), ("B", "B"), ("E", "B"), ("E", "A")] * 3, seq
assert all(a["ts"] <= b["ts"] for a, b in zip(z, z[1:])), "zone times go back"
marks = [e["name"] for e in ev if e.get("ph") == "i" and e.get("cat") == "mark"]
assert marks[:4] == ["start", "round 1", "round 2", "round 3"], marks
PY
ok "chrome export: 3 x B A, B B, E B, E A on the zones track; the marks as instants"

# Unprofiled: the same program runs, zone/mark are no-ops (no error).
luajit "$E2E/zones.lua" >"$T/plain" 2>"$T/plain.err" ||
	{ show "$T/plain.err"; fail "zones.lua failed unprofiled"; }
read -r _ _ _ _ pmsg <"$T/plain"
expect_eq "unprofiled: zone() on an empty stack" none "$pmsg"
ok "unprofiled: ljlog.zone and ljlog.mark are no-ops"

# Samples in a zone: every sample in spin() is in zone spin, and the
# zone's others are few (the calls around spin(); ljlog's own zone calls
# are in no zone). Not a share of the run: the start-up before the zone
# costs what the machine makes it cost (under qemu-user, loaded, 3 of 27
# samples fell there). Not under ThreadSanitizer: there signals wait for
# the runtime's sync points and miss tight Lua loops (the sample_*.sh
# tests skip there too).
case ${LJLOG_TEST_PRELOAD:-} in
*tsan*) ok "zone samples: not checked under ThreadSanitizer" ;;
*)
slog=$T/spin.ljlog
profile "file=$slog,sample=1ms" "$E2E/zones_spin.lua" >"$T/sout" 2>"$T/serr" ||
	{ show "$T/serr"; fail "the sampled run failed"; }
report_json "$slog" "$T/s.json"
# ljlog's own work (its zone calls, its loading: state ljlog) is shown
# apart, in no zone: the program's samples are the rest.
total=$(json_get "$T/s.json" 'd["samples"] - d["states"].get("ljlog", 0)')
spin=$(json_get "$T/s.json" '[z["samples"] for z in d["zones"] if z["name"] == "spin"][0]')
fn=$(json_get "$T/s.json" "sum(f['samples_total'] for f in d['functions'] if f['kind'] == 'lua' and f['file'].endswith('zones_spin.lua') and f['line'] == 4)")
[ "$fn" -ge 1 ] || fail "no sample in spin() (of $total)"
[ "$spin" -ge "$fn" ] || fail "zone spin has $spin samples, fewer than spin()'s $fn"
[ $((spin - fn)) -le 2 ] || [ $(((spin - fn) * 20)) -le "$spin" ] ||
	fail "zone spin has $spin samples, $((spin - fn)) of them outside spin() (more than 2 and 5%)"
ok "zone spin: $spin samples ($fn in spin(), every one of them) of $total"
	;;
esac

# The C API (tests/e2e/host.c --zones): ljlog_zone before attach is
# -ENOENT, a zone "host" around the script with a mark, a pop of the empty
# stack is -EINVAL (the host fails otherwise).
hlog=$T/host.ljlog
host --threads 1 --script "$E2E/thread.lua" --options "file=$hlog,alloc" \
	--zones >"$T/hout" 2>"$T/herr" || { show "$T/herr"; fail "host --zones failed"; }
report_json "$hlog" "$T/h.json"
expect_eq "C API: zones" "[('host', 1)]" "$(json_get "$T/h.json" '[(z["name"], z["entries"]) for z in d["zones"]]')"
expect_eq "C API: marks" "['host mark']" "$(json_get "$T/h.json" '[m["text"] for m in d["marks"]]')"
[ "$(json_get "$T/h.json" 'd["zones"][0]["alloc_count"] > 0')" = true ] ||
	fail "C API: no allocation in zone host (the script allocates)"
ok "C API: ljlog_zone/ljlog_mark (-ENOENT unattached, -EINVAL on an empty stack)"
