#!/usr/bin/env bash
# ljlog e2e: a sunk allocation is charged to its constructor's line (issue
# 24). alloc_sink.lua makes a table on one line that escapes on the next
# every fourth iteration; with allocation sinking (LuaJIT's default) the
# JIT makes it only where it escapes: in the side trace compiled at that
# exit (its start replays the parent's sunk allocations), or, when no side
# trace is compiled (-Ohotexit high), when the exit restores the snapshot.
# Ground truth: the JIT off, where each table is made on its constructor's
# line. Under `alloc`, `ljlog report --leaks` (what lives at the end, by
# site) must give each constructor line the same objects and bytes as with
# the JIT off, and the escaping line only what it makes itself (the list's
# growth), in four runs: JIT off, JIT on, JIT on with exits only
# (-Ohotexit=1000000), JIT on without sinking (-O-sink).
. "$(dirname "$0")/lib.sh"

prog=$E2E/alloc_sink.lua
n=4000
line_of() { grep -n -- "$1" "$prog" | head -n 1 | cut -d: -f1; }
la_new=$(line_of 'ARRAY CONSTRUCTOR') la_esc=$(line_of 'ARRAY ESCAPES')
lh_new=$(line_of 'HASH CONSTRUCTOR') lh_esc=$(line_of 'HASH ESCAPES')
[ -n "$la_new" ] && [ -n "$lh_esc" ] || fail "no marker lines in $prog"

luajit_plain "$prog" "$n" >"$T/plain.out" 2>"$T/plain.err" ||
	{ show "$T/plain.err"; fail "the unprofiled run failed"; }
expect_eq "kept tables (unprofiled)" "$((n / 4))	$((n / 4))" "$(cat "$T/plain.out")"

# leaks LABEL LINE: "objects bytes" of the live-at-end site at LINE of the
# program (summed over the functions there), from $T/LABEL.json.
leaks() {
	json_get "$T/$1.json" "' '.join(str(sum(s[k] for s in d['live_sites'] if s.get('line') == $2 and s.get('file', '').endswith('alloc_sink.lua'))) for k in ('live_count', 'live_bytes'))"
}

for run in off:-joff on: exits:-Ohotexit=1000000 nosink:-O-sink; do
	label=${run%%:*} opt=${run#*:}
	profile "file=$T/$label.ljlog,alloc" $opt "$prog" "$n" >"$T/$label.out" 2>"$T/$label.err" ||
		{ show "$T/$label.err"; fail "[$label] the profiled run failed"; }
	cmp -s "$T/plain.out" "$T/$label.out" || fail "[$label] output '$(cat "$T/$label.out")'"
	check_complete "$T/$label.ljlog"
	report_json "$T/$label.ljlog" "$T/$label.json"
done
json_get "$T/off.json" "d['live_sites'][0]" >/dev/null 2>&1 ||
	fail "no live_sites in the JIT-off report"
for l in "$la_new" "$lh_new"; do
	ref=$(leaks off "$l")
	[ "${ref%% *}" -ge $((n / 4)) ] ||
		fail "JIT off: line $l has $ref live (objects bytes), expected at least $((n / 4)) objects"
	for label in on exits nosink; do
		expect_eq "[$label] live objects and bytes of the constructor at line $l (as with the JIT off)" \
			"$ref" "$(leaks "$label" "$l")"
	done
done
for l in "$la_esc" "$lh_esc"; do
	ref=$(leaks off "$l")
	for label in on exits nosink; do
		expect_eq "[$label] live objects and bytes at the escaping line $l (as with the JIT off)" \
			"$ref" "$(leaks "$label" "$l")"
	done
done
ok "sunk tables at their constructor's line: $(leaks on "$la_new") (array), $(leaks on "$lh_new") (hash), as with the JIT off, side traces or exits"
