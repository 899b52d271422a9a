#!/usr/bin/env bash
# ljlog bench: several VMs at once. Debian's sysbench runs one LuaJIT VM per
# worker thread (tests/e2e/hosts_sysbench.lua: recursive Lua calls, a sort
# with a Lua comparator, gsub); ljlog is preloaded (man ljlog "PRELOAD").
# For 1 and 2 threads, each run's events per second relative to the
# unprofiled run of the same round, with calls, with sample=1ms and with
# both: when a family takes no global lock on its hot path, the ratio with
# 2 threads is the ratio with 1 (each VM pays only for itself). Runs
# rotate within a round; the median ratio of ROUNDS is printed.
#
# Usage: bench/vms.sh [-n ROUNDS] [-t SECONDS] [-o OPTIONS] [BUILD_DIR]
#        (default 5 rounds of 3 s runs, build/; -o nowriter: OPTIONS
#        added to each family's)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=5 secs=3 extra=
while [ $# -gt 0 ]; do
	case $1 in
	-n) rounds=$2; shift 2 ;;
	-o) extra=,$2; shift 2 ;;
	-t) secs=$2; shift 2 ;;
	-h | --help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
b=$(cd "${1:-$top/build}" && pwd)
lib=$b/.libs/libljlog.so
[ -e "$lib" ] || { echo "bench: build first (no $lib)" >&2; exit 2; }
sb=$(command -v sysbench) || { echo "bench: no sysbench (apt-get install sysbench)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ljlog-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
script=$top/tests/e2e/hosts_sysbench.lua

# events THREADS OPTIONS: events done in one run of $secs s (OPTIONS "":
# unprofiled).
events() {
	local pre= n
	[ -n "$2" ] && pre="env LD_PRELOAD=$lib LUAJIT_PROFILE=log:file=$tmp/v.ljlog,$2$extra"
	n=$($pre "$sb" "$script" --threads="$1" --events=0 --time="$secs" run 2>/dev/null |
		sed -n 's/^ *total number of events: *//p')
	[ -n "$n" ] || { echo "bench: sysbench --threads=$1 ($2) printed no event count" >&2; exit 1; }
	echo "$n"
}

families="calls sample=1ms calls,sample=1ms"
echo "sysbench, hosts_sysbench.lua, ${secs} s runs, $rounds rounds${extra:+, options +${extra#,}}: events done relative to unprofiled"
for th in 1 2; do
	: >"$tmp/r$th"
	for r in $(seq "$rounds"); do
		base=$(events "$th" "")
		line=$base
		for f in $families; do line="$line $(events "$th" "$f")"; done
		echo "$line" >>"$tmp/r$th"
		printf '.'
	done
done
echo
python3 - "$tmp/r1" "$tmp/r2" $families <<'PY'
import statistics, sys
r1, r2, fams = sys.argv[1], sys.argv[2], sys.argv[3:]
def rows(p):
    return [list(map(float, l.split())) for l in open(p) if l.strip()]
for th, p in (("1 thread ", r1), ("2 threads", r2)):
    rs = rows(p)
    base = statistics.median(r[0] for r in rs)
    cells = ["unprofiled %d events" % base]
    for i, f in enumerate(fams, 1):
        cells.append("%s %.3fx" % (f, statistics.median(r[i] / r[0] for r in rs)))
    print("  %s: %s" % (th, ", ".join(cells)))
PY
