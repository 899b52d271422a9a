#!/usr/bin/env bash
# ljlog bench: CPU-time sampling on a machine with more runnable threads
# than cores. tests/e2e/sample_split.lua splits its time 75:25 between f
# and g by construction; this prints f's share as ljlog (thread CPU clock,
# and wall clock) and jit.p (-jp=f, 1 ms) see it, beside HOGS CPU-bound
# processes, when the program counts its rounds and when it reads its CPU
# clock (os.clock) at the end of every round. Then the same question
# without LuaJIT: bench/cputimer_skew.c, the kernel's timers alone.
# An accuracy study for the man page ("sample"), never a test threshold.
#
# Usage: bench/load_split.sh [-n REPEATS] [-H HOGS] [BUILD_DIR]
#        (default 2 repeats, 2 hogs, build/)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
reps=2 hogs_n=2
while [ $# -gt 0 ]; do
	case $1 in
	-n) reps=$2; shift 2 ;;
	-H) hogs_n=$2; shift 2 ;;
	-h | --help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
b=$(cd "${1:-$top/build}" && pwd)
[ -e "$b/lua/ljlog.so" ] || { echo "bench: build first (no $b/lua/ljlog.so)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ljlog-bench.XXXXXX")
hogs=
trap 'kill $hogs 2>/dev/null || true; rm -rf "$tmp"' EXIT
export LUA_CPATH="$b/lua/?.so;;"
prog=$top/tests/e2e/sample_split.lua
fline=$(grep -n '^local function f(' "$prog" | cut -d: -f1)
gline=$(grep -n '^local function g(' "$prog" | cut -d: -f1)
${CC:-cc} -O1 -o "$tmp/skew" "$top/bench/cputimer_skew.c"

# share LOG: f's share of the samples in f and g.
share() {
	"$b/ljlog" report --json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
by = {f["line"]: f["samples"] for f in d["functions"] if f["kind"] == "lua"}
f, g = by.get(int(sys.argv[1]), 0), by.get(int(sys.argv[2]), 0)
print("%.1f%% (%d samples)" % (100.0 * f / max(f + g, 1), f + g))' "$fline" "$gline"
}

for _ in $(seq "$hogs_n"); do
	sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
echo "beside $hogs_n CPU-bound processes, on $(nproc) cores; f's share, 75% by construction"
for i in $(seq "$reps"); do
	for arg in 1000 cpu=4.5; do
		case $arg in cpu=*) how="os.clock() every round" ;; *) how="$arg rounds, no clock read" ;; esac
		LUAJIT_PROFILE="log:file=$tmp/c.ljlog,sample=1ms" luajit -lljlog "$prog" on "$arg" >/dev/null
		echo "  [$i] $how: ljlog sample=1ms (thread CPU clock): $(share "$tmp/c.ljlog")"
		LUAJIT_PROFILE="log:file=$tmp/w.ljlog,sample=1ms,wall" luajit -lljlog "$prog" on "$arg" >/dev/null
		echo "  [$i] $how: ljlog sample=1ms,wall: $(share "$tmp/w.ljlog")"
		luajit -jp=fi1,"$tmp/jp.txt" "$prog" on "$arg" >/dev/null
		echo "  [$i] $how: jit.p -jp=f (process CPU clock): $(awk '$2 == "f" { print $1 }' "$tmp/jp.txt")"
	done
done
# Units of work for a round of about 4.3 ms, as sample_split.lua's here.
rounds=$("$tmp/skew" thread none 0.5 1000000 | sed 's/.*, \([0-9]*\) rounds/\1/')
units=$(python3 -c "print(int(1e6 * 0.0043 / (0.5 / $rounds)))")
echo "the kernel's CPU-time timers alone (bench/cputimer_skew.c, $units units):"
for i in $(seq "$reps"); do
	for action in none clock yield; do
		for clock in thread process; do
			echo "  [$i] $("$tmp/skew" "$clock" "$action" 4 "$units")"
		done
	done
done
