#!/usr/bin/env bash
# ljlog e2e: zones in the exports and the --zone filters.
# zones_export.lua spins in zone "spin" (function in_zone), then spins
# outside any zone (function out_zone). `folded --zone spin` must keep
# every in_zone sample of the unfiltered stacks (in_zone runs only inside
# the zone: the independent count) and no out_zone one, and sum to the
# report's zone samples; `report --zone spin` counts those samples; the
# pprof export's "zone" label (the innermost open zone) holds as many.
# zones.lua (zones A, B nested in A, 3 rounds, allocations at fixed lines):
# pprof's zone label splits the allocations as the sites' own counts say
# (innermost: A gets line LA's, B line LB's); the speedscope export has a
# "zones (VM 1)" profile with 3 balanced opens and closes per zone and the
# marks as zero-length frames, and speedscope's own importer loads it (when
# node, the tools and chromium are there). --zone nosuch exits 1 listing
# the log's zones.
. "$(dirname "$0")/lib.sh"

# Its checks follow where samples land: under ThreadSanitizer signals wait
# for the runtime's sync points and miss tight Lua loops (as sample_*.sh).
case ${LJLOG_TEST_PRELOAD:-} in
*tsan*) skip "the samples' places cannot be relied on under ThreadSanitizer" ;;
esac

# -- Samples: folded --zone, report --zone -----------------------------------
slog=$T/s.ljlog
profile "file=$slog,sample=1ms" "$E2E/zones_export.lua" >"$T/sout" 2>"$T/serr" ||
	{ show "$T/serr"; fail "the sampled run failed"; }
check_complete "$slog"
report_json "$slog" "$T/s.json"
spin=$(json_get "$T/s.json" '[z["samples"] for z in d["zones"] if z["name"] == "spin"][0]')
[ "$spin" -ge 1 ] || fail "no sample in zone spin"

ljlog folded "$slog" >"$T/all.folded" || fail "ljlog folded failed"
ljlog folded --zone spin "$slog" >"$T/spin.folded" 2>"$T/spin.err" ||
	{ show "$T/spin.err"; fail "ljlog folded --zone spin failed"; }
sum() { awk -v pat="$2" '$0 ~ pat { s += $NF } END { print s + 0 }' "$1"; }
in_all=$(sum "$T/all.folded" 'in_zone') out_all=$(sum "$T/all.folded" 'out_zone')
[ "$in_all" -ge 1 ] && [ "$out_all" -ge 1 ] ||
	fail "unfiltered stacks: in_zone $in_all, out_zone $out_all samples (want both > 0)"
expect_eq "folded --zone spin: the in_zone samples (all of them)" "$in_all" "$(sum "$T/spin.folded" 'in_zone')"
expect_eq "folded --zone spin: out_zone samples" 0 "$(sum "$T/spin.folded" 'out_zone')"
expect_eq "folded --zone spin: samples (report's zone samples)" "$spin" "$(sum "$T/spin.folded" '')"
ok "folded --zone spin: $spin samples, in_zone's $in_all all there, none of out_zone's $out_all"

ljlog report --zone spin --json "$slog" >"$T/rz.json" 2>"$T/rz.err" ||
	{ show "$T/rz.err"; fail "ljlog report --zone spin --json failed"; }
expect_eq "report --zone: zone_filter" spin "$(json_get "$T/rz.json" 'd["zone_filter"]')"
expect_eq "report --zone spin: samples" "$spin" "$(json_get "$T/rz.json" 'd["samples"]')"
expect_eq "report --zone spin: in_zone samples_total" "$in_all" \
	"$(json_get "$T/rz.json" 'sum(f["samples_total"] for f in d["functions"] if f["name"].startswith("in_zone"))')"
expect_eq "report --zone spin: out_zone samples_total" 0 \
	"$(json_get "$T/rz.json" 'sum(f["samples_total"] for f in d["functions"] if f["name"].startswith("out_zone"))')"
ljlog report --zone spin "$slog" >"$T/rz.txt" || fail "ljlog report --zone spin failed"
grep -q '^  zone filter: .*"spin"' "$T/rz.txt" || { show "$T/rz.txt"; fail "no zone filter line in the text report"; }
ok "report --zone spin: $spin samples, out_zone none"

# Unknown zone: exit 1, the known ones listed.
for cmd in report folded; do
	rc=0
	ljlog $cmd --zone nosuch "$slog" >/dev/null 2>"$T/nz.err" || rc=$?
	expect_eq "$cmd --zone nosuch: exit status" 1 "$rc"
	grep -q "no zone named 'nosuch'.*\"spin\"" "$T/nz.err" ||
		{ show "$T/nz.err"; fail "$cmd --zone nosuch: no message listing zone spin"; }
done
ok "--zone nosuch: exit 1, the log's zones listed"

# -- Allocations: a zones.lua log ---------------------------------------------
alog=$T/a.ljlog
profile "file=$alog,alloc" "$E2E/zones.lua" >"$T/aout" 2>"$T/aerr" ||
	{ show "$T/aerr"; fail "the allocating run failed"; }
read -r rounds _ <"$T/aout" || fail "zones.lua printed nothing"
report_json "$alog" "$T/a.json"
line_of() { grep -n -- "-- $1\$" "$E2E/zones.lua" | cut -d: -f1; }
site() { # LINE: alloc_count of the zones.lua site at LINE
	json_get "$T/a.json" "[s['alloc_count'] for s in d['alloc_sites'] if s['file'].endswith('zones.lua') and s['line'] == $1][0]"
}
ca=$(site "$(line_of LA)") cb=$(site "$(line_of LB)")
ljlog report --zone B --json "$alog" >"$T/aB.json" || fail "ljlog report --zone B failed"
expect_eq "report --zone B: allocations at line LB" "$cb" \
	"$(json_get "$T/aB.json" "sum(s['alloc_count'] for s in d['alloc_sites'] if s['file'].endswith('zones.lua') and s['line'] == $(line_of LB))")"
expect_eq "report --zone B: allocations elsewhere in zones.lua" 0 \
	"$(json_get "$T/aB.json" "sum(s['alloc_count'] for s in d['alloc_sites'] if s['file'].endswith('zones.lua') and s['line'] != $(line_of LB))")"
ok "report --zone B: line LB's $cb allocations only"

# -- speedscope: the zones profile ---------------------------------------------
ljlog export -q -f speedscope -o "$T/a.speedscope.json" "$alog" || fail "export speedscope failed"
python3 - "$T/a.speedscope.json" "$rounds" <<'PY' || fail "speedscope zones profile (above)"
import json, sys
d = json.load(open(sys.argv[1])); rounds = int(sys.argv[2])
fr = [f["name"] for f in d["shared"]["frames"]]
zp = [p for p in d["profiles"] if p["name"].startswith("zones")]
assert [p["name"] for p in zp] == ["zones (VM 1)"], [p["name"] for p in d["profiles"]]
p = zp[0]
assert p["type"] == "evented" and p["unit"] == "nanoseconds", p["type"]
ev = [(e["type"], fr[e["frame"]]) for e in p["events"]]
for name in ("A", "B"):
    for t in "OC":
        n = ev.count((t, name))
        assert n == rounds, "%s %s: %d events, want %d" % (t, name, n, rounds)
stack, last = [], p["startValue"]
for e in p["events"]:
    assert e["at"] >= last, "time goes back at %r" % e
    last = e["at"]
    if e["type"] == "O":
        stack.append(e["frame"])
    else:
        assert stack and stack[-1] == e["frame"], "unbalanced close %r" % e
        stack.pop()
assert not stack and last <= p["endValue"], (stack, last, p["endValue"])
marks = [n for t, n in ev if t == "O" and n.startswith("mark: ")]
assert marks[:4] == ["mark: start", "mark: round 1", "mark: round 2", "mark: round 3"], marks
i = ev.index(("O", "mark: round 1"))
assert ev[i - 2:i + 3] == [("O", "A"), ("O", "B"), ("O", "mark: round 1"),
                           ("C", "mark: round 1"), ("C", "B")], ev[i - 2:i + 3]
print("zones (VM 1): %d events, balanced" % len(ev))
PY
ok "speedscope: zones (VM 1) with $rounds opens and closes of A and of B, balanced, marks inside B"
if command -v node >/dev/null 2>&1 && [ -x "${CHROMIUM:-/usr/bin/chromium}" ] &&
	[ -d "$TOOLS_MODULES/speedscope/dist/release" ]; then
	node_run "$E2E/speedscope_load.mjs" "$top_srcdir/tests/tools" "$T/a.speedscope.json" \
		>"$T/load" 2>"$T/load.err" || { show "$T/load.err"; fail "speedscope_load.mjs could not run"; }
	python3 "$E2E/export_check.py" loaded "$T/load" A B "mark: start" ||
		fail "speedscope's importer on the zones export"
	ok "speedscope's own importer loads it (A, B, mark: start)"
else
	echo "# speedscope's importer not run (node, tools or chromium missing)"
fi

# -- pprof: the zone label ------------------------------------------------------
need_go
gotool version >/dev/null 2>&1 || skip "'go version' does not run"
ljlog export -q -f pprof -o "$T/s.pb.gz" "$slog" || fail "export pprof (samples) failed"
ljlog export -q -f pprof -o "$T/a.pb.gz" "$alog" || fail "export pprof (allocations) failed"
tag() { # FILE INDEX ZONE [KEY]: pprof's -tags figure of KEY=ZONE (KEY: zone)
	gotool tool pprof -sample_index="$2" -tags "$1" 2>/dev/null |
		awk -v z="$3" -v k="${4:-zone}:" '$1 == k { on = 1; next }
			/^ *[a-z]+:/ { on = 0 } on && $NF == z { print $1 + 0; exit }'
}
total=$(json_get "$T/s.json" 'd["samples"]')
expect_eq "pprof: samples of VM 1 (all of them, zones or not)" "$total" "$(tag "$T/s.pb.gz" samples 1 vm)"
expect_eq "pprof: samples labelled zone=spin" "$spin" "$(tag "$T/s.pb.gz" samples spin)"
gotool tool pprof -sample_index=samples -tagfocus=zone=spin -top -nodecount=200 \
	"$T/s.pb.gz" >"$T/focus.txt" 2>/dev/null || fail "go tool pprof -tagfocus failed"
grep -q 'in_zone' "$T/focus.txt" || { show "$T/focus.txt"; fail "pprof -tagfocus=zone=spin: no in_zone"; }
if grep -q 'out_zone' "$T/focus.txt"; then show "$T/focus.txt"; fail "pprof -tagfocus=zone=spin: out_zone there"; fi
ok "pprof: $total samples, $spin with zone=spin (the report's), in_zone's, none of out_zone"
expect_eq "pprof: allocations labelled zone=A (innermost: line LA)" "$ca" "$(tag "$T/a.pb.gz" alloc_objects A)"
expect_eq "pprof: allocations labelled zone=B (line LB)" "$cb" "$(tag "$T/a.pb.gz" alloc_objects B)"
ok "pprof: alloc_objects by zone label: A $ca, B $cb (the sites' counts)"
