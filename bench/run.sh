#!/usr/bin/env bash
# ljlog benchmarks: each figure is a ratio measured side by side in one run,
# configurations interleaved, best of RUNS. Never used as a test threshold.
# Usage: bench/run.sh [calls|alloc|size|reader]...   (default: all)
# Times are CPU seconds (user + sys) of the measured process.
# Env: RUNS (default 5), LJLOG_BUILDDIR (default: build/ in the source tree).
set -eu
src=$(cd "$(dirname "$0")" && pwd)
b=${LJLOG_BUILDDIR:-$(cd "$src/.." && pwd)/build}
runs=${RUNS:-5}
luajit=${LUAJIT:-luajit}
export LUA_CPATH="$b/lua/?.so;$b/bench/.libs/?.so;;"
[ -e "$b/lua/ljlog.so" ] || { echo "bench: build first (no $b/lua/ljlog.so)" >&2; exit 2; }
[ -e "$b/bench/.libs/emptyhook.so" ] || { echo "bench: build first (no emptyhook.so)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# CPU seconds (user + sys) of one run of "$@", output discarded. CPU time,
# not wall time: other processes on a shared machine move it much less.
secs() {
	times >"$tmp/t0" # not in a pipe: a pipe's subshell has no children
	"$@" >/dev/null 2>&1
	times >"$tmp/t1"
	python3 - "$(tail -n 1 "$tmp/t0")" "$(tail -n 1 "$tmp/t1")" <<'PY'
import re, sys
def cpu(line):
    return sum(float(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", line))
print(f"{cpu(sys.argv[2]) - cpu(sys.argv[1]):.4f}")
PY
}

# best NAME...: best-of-$runs seconds for each config function cfg_NAME,
# interleaved so that machine noise hits all configurations alike.
declare -A best
measure() {
	local r name t
	for name in "$@"; do best[$name]=999999; done
	for ((r = 1; r <= runs; r++)); do
		for name in "$@"; do
			t=$(secs "cfg_$name")
			if python3 -c "import sys; sys.exit(0 if $t < ${best[$name]} else 1)"; then
				best[$name]=$t
			fi
		done
		printf '.' >&2
	done
	printf '\n' >&2
}
ratio() { python3 -c "print(f'{$1 / $2:.3f}')"; }

# -- calls: unprofiled vs empty C hook vs ljlog calls (JIT off in all) -------
cfg_calls_base() { "$luajit" "$src/calls.lua"; }
cfg_calls_hook() { "$luajit" -lemptyhook "$src/calls.lua"; }
cfg_calls_clock() { EMPTYHOOK_CLOCK=1 "$luajit" -lemptyhook "$src/calls.lua"; }
cfg_calls_ljlog() {
	LUAJIT_PROFILE="log:file=$tmp/calls.ljlog,nodefaults,calls" \
		"$luajit" -lljlog "$src/calls.lua"
}
bench_calls() {
	echo "== calls: call-heavy program, JIT off ($runs runs, best of)"
	measure calls_base calls_hook calls_clock calls_ljlog
	local base=${best[calls_base]} hook=${best[calls_hook]} lj=${best[calls_ljlog]}
	local clk=${best[calls_clock]}
	echo "unprofiled      ${base}s"
	echo "empty C hook    ${hook}s  ($(ratio "$hook" "$base")x)"
	echo "hook + clock    ${clk}s  ($(ratio "$clk" "$base")x: the floor for timed events)"
	echo "ljlog calls     ${lj}s  ($(ratio "$lj" "$base")x)"
	echo "ljlog overhead / empty-hook overhead: $(python3 -c "print(f'{($lj - $base) / max($hook - $base, 1e-9):.2f}')") (budget 1.5)"
	echo "clock-only overhead / empty-hook overhead: $(python3 -c "print(f'{($clk - $base) / max($hook - $base, 1e-9):.2f}')")"
}

# -- alloc: unprofiled vs ljlog alloc ----------------------------------------
cfg_alloc_base() { "$luajit" "$src/alloc.lua"; }
cfg_alloc_ljlog() {
	LUAJIT_PROFILE="log:file=$tmp/alloc.ljlog,nodefaults,alloc" \
		"$luajit" -lljlog "$src/alloc.lua"
}
bench_alloc() {
	echo "== alloc: allocation-heavy program, JIT on ($runs runs, best of)"
	measure alloc_base alloc_ljlog
	local base=${best[alloc_base]} lj=${best[alloc_ljlog]}
	echo "unprofiled      ${base}s"
	echo "ljlog alloc     ${lj}s  ($(ratio "$lj" "$base")x, budget 1.2x)"
	echo "log: $(stat -c %s "$tmp/alloc.ljlog") bytes"
}

# Events in a log, from the reader's JSON report.
events_of() { "$b/ljlog" report --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])'; }

# -- size: bytes per call event -------------------------------------------------
bench_size() {
	echo "== size: bytes per event, calls only"
	cfg_calls_ljlog >/dev/null 2>&1
	local bytes events
	bytes=$(stat -c %s "$tmp/calls.ljlog")
	events=$(events_of "$tmp/calls.ljlog")
	echo "log $bytes bytes, $events events: $(ratio "$bytes" "$events") bytes/event (budget about 3)"
}

# -- reader: decode rate ---------------------------------------------------------
cfg_reader_check() { "$b/ljlog" check "$tmp/calls.ljlog"; }
cfg_reader_report() { "$b/ljlog" report --json "$tmp/calls.ljlog"; }
bench_reader() {
	echo "== reader: decode rate on the calls log"
	[ -s "$tmp/calls.ljlog" ] || cfg_calls_ljlog
	local events
	events=$(events_of "$tmp/calls.ljlog")
	measure reader_check reader_report
	echo "check   ${best[reader_check]}s: $(python3 -c "print(f'{$events / ${best[reader_check]} / 1e6:.1f}')") M events/s"
	echo "report  ${best[reader_report]}s: $(python3 -c "print(f'{$events / ${best[reader_report]} / 1e6:.1f}')") M events/s"
}

what=${*:-calls alloc size reader}
for w in $what; do
	case $w in
	calls | alloc | size | reader) "bench_$w" ;;
	*) echo "bench: unknown benchmark '$w' (calls, alloc, size, reader)" >&2; exit 2 ;;
	esac
done
