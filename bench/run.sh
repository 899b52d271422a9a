#!/usr/bin/env bash
# ljlog benchmarks: each figure is a ratio measured side by side in one run,
# configurations interleaved, best of RUNS. Never used as a test threshold.
# Usage: bench/run.sh [calls|alloc|size|reader|sample|sample_bytes|costs|alloc_costs|snapshot|budgets]...
#        (default: all)
# Times are CPU seconds (user + sys) of the measured process (the sample
# benchmark also shows wall-clock seconds).
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

# cpu_wall CMD...: "CPU WALL" seconds of one run of "$@", output discarded.
cpu_wall() {
	local w0 w1
	times >"$tmp/t0"
	w0=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	w1=$(date +%s.%N)
	times >"$tmp/t1"
	python3 - "$(tail -n 1 "$tmp/t0")" "$(tail -n 1 "$tmp/t1")" "$w0" "$w1" <<'PY'
import re, sys
def cpu(line):
    return sum(float(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", line))
print(f"{cpu(sys.argv[2]) - cpu(sys.argv[1]):.4f} {float(sys.argv[4]) - float(sys.argv[3]):.4f}")
PY
}

# measure_both NAME...: like measure, best CPU seconds in best[NAME] and
# best wall-clock seconds in wall[NAME] (each the best of its own); every
# run's "CPU WALL" in runs_of[NAME], in round order, for paired ratios.
declare -A wall runs_of
measure_both() {
	local r name t c w
	for name in "$@"; do best[$name]=999999; wall[$name]=999999; runs_of[$name]=; done
	for ((r = 1; r <= runs; r++)); do
		for name in "$@"; do
			t=$(cpu_wall "cfg_$name")
			c=${t% *} w=${t#* }
			runs_of[$name]="${runs_of[$name]} $c:$w"
			if python3 -c "import sys; sys.exit(0 if $c < ${best[$name]} else 1)"; then
				best[$name]=$c
			fi
			if python3 -c "import sys; sys.exit(0 if $w < ${wall[$name]} else 1)"; then
				wall[$name]=$w
			fi
		done
		printf '.' >&2
	done
	printf '\n' >&2
}

# paired NAME BASE: median over the rounds of NAME's time / BASE's time in
# the same round, "CPU WALL" (cancels the machine's slow drifts).
paired() {
	python3 - "${runs_of[$1]}" "${runs_of[$2]}" <<'PY'
import statistics, sys
a = [tuple(map(float, x.split(":"))) for x in sys.argv[1].split()]
b = [tuple(map(float, x.split(":"))) for x in sys.argv[2].split()]
cpu = statistics.median(x[0] / y[0] for x, y in zip(a, b))
wall = statistics.median(x[1] / y[1] for x, y in zip(a, b))
print(f"{cpu:.3f} {wall:.3f}")
PY
}

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
	echo "ljlog overhead / empty-hook overhead: $(python3 -c "print(f'{($lj - $base) / max($hook - $base, 1e-9):.2f}')") (budget 2.0)"
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

# -- sample: unprofiled vs ljlog sampling vs LuaJIT's jit.p (JIT on) ----------
cfg_sample_base() { "$luajit" "$src/sample.lua"; }
cfg_sample_cpu() {
	LUAJIT_PROFILE="log:file=$tmp/sample.ljlog,sample=1ms" \
		"$luajit" -lljlog "$src/sample.lua"
}
cfg_sample_wall() {
	LUAJIT_PROFILE="log:file=$tmp/sample_wall.ljlog,sample=1ms,wall" \
		"$luajit" -lljlog "$src/sample.lua"
}
cfg_sample_nohost() {
	LUAJIT_PROFILE="log:file=$tmp/sample_nohost.ljlog,sample=1ms,wall,nohost" \
		"$luajit" -lljlog "$src/sample.lua"
}
cfg_sample_10k() {
	LUAJIT_PROFILE="log:file=$tmp/sample_10k.ljlog,sample=100us,wall" \
		"$luajit" -lljlog "$src/sample.lua"
}
cfg_sample_fixed() {
	LUAJIT_PROFILE="log:file=$tmp/sample_fixed.ljlog,sample=1s,wall" \
		"$luajit" -lljlog "$src/sample.lua"
}
cfg_sample_jp() { "$luajit" -jp=i1 "$src/sample.lua"; }
# Samples (+ dropped) in a log, from the reader's JSON report.
samples_of() {
	"$b/ljlog" report --json "$1" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print("%d samples, %d dropped" % (d.get("samples", 0), d.get("samples_dropped", 0)))'
}
bench_sample() {
	echo "== sample: compute-bound program, JIT on ($runs runs, best of; CPU includes ljlog's helper thread)"
	measure_both sample_base sample_fixed sample_cpu sample_wall sample_nohost sample_10k sample_jp
	local base=${best[sample_base]} wbase=${wall[sample_base]} c w
	local p
	echo "best of: the best time of each; paired: median over the rounds of the"
	echo "ratio to the unprofiled run of the same round"
	printf '%-34s %8s %7s %7s  %8s %7s %7s\n' "" "CPU s" "best" "paired" "wall s" "best" "paired"
	for c in "unprofiled:sample_base" "ljlog sample=1s,wall (fixed costs):sample_fixed" \
		"ljlog sample=1ms (CPU clock):sample_cpu" \
		"ljlog sample=1ms,wall:sample_wall" "ljlog sample=1ms,wall,nohost:sample_nohost" \
		"ljlog sample=100us,wall (10 kHz):sample_10k" "jit.p -jp=i1:sample_jp"; do
		w=${c##*:}
		p=$(paired "$w" sample_base)
		printf '%-34s %8s %7s %7s  %8s %7s %7s\n' "${c%:*}" "${best[$w]}" "$(ratio "${best[$w]}" "$base")" "${p% *}" \
			"${wall[$w]}" "$(ratio "${wall[$w]}" "$wbase")" "${p#* }"
	done
	echo "budget: ljlog sample=1ms with host stacks at most 1.02x unprofiled"
	echo "logs: 1ms CPU $(samples_of "$tmp/sample.ljlog"); 1ms wall $(samples_of "$tmp/sample_wall.ljlog"); 10 kHz $(samples_of "$tmp/sample_10k.ljlog")"
	# The cost of one sample (handler + helper), from the 10 kHz run's paired
	# ratio: less noisy than the 1 kHz ratio, whose overhead is below the
	# machine's jitter.
	local n10k
	n10k=$("$b/ljlog" report --json "$tmp/sample_10k.ljlog" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("samples", 0) + d.get("samples_dropped", 0))')
	p=$(paired sample_10k sample_base)
	python3 - "${p% *}" "$base" "$n10k" <<'PY'
import sys
r10k, base, n = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
if n > 0:
    us = (r10k - 1) * base / n * 1e6
    print(f"per sample (10 kHz run): {us:.1f} us of CPU -> at 1 kHz {us / 1e6 * 1000 * 100:.2f}% of a CPU second")
PY
}

# -- sample_bytes: log bytes per sample, 1 kHz wall clock, host stacks --------
# Per sample: the whole file; the SAMPLES blocks (headers included); the
# STACK records (format 6: each distinct stack written once); the two
# together, what a sample costs. Read from the blocks and MAPPING records.
bytes_per_sample() {
	python3 - "$1" <<'PY'
import struct, sys
f = open(sys.argv[1], "rb").read()
def uleb(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 127) << s; s += 7
        if c < 128: return v, i
def skip_str(b, i):
    n, i = uleb(b, i); return i + n
def ulebs(b, i, n):
    for _ in range(n): _, i = uleb(b, i)
    return i
off, version, nsamples, by = 8, 0, 0, {"samples": 0, "stack": 0}
while off + 16 <= len(f):
    kind, ln = f[off + 2], struct.unpack_from("<I", f, off + 4)[0]
    b, end = f[off + 16:off + 16 + ln], off + 16 + ln
    if kind == 1: version = uleb(b, 0)[0]
    elif kind == 5:
        by["samples"] += 16 + ln; nsamples += uleb(b, uleb(b, 0)[1])[0]
    elif kind == 3:
        _, i = uleb(b, 0)
        while i < len(b):
            at, rk = i, b[i]; i = ulebs(b, i + 1, 1)
            if rk == 1: i = ulebs(b, i, 4 if version >= 7 else 3)
            elif rk == 2:
                i = ulebs(b, skip_str(b, i), 2)
                if version >= 4: i = skip_str(b, i)
            elif rk in (3, 7):
                i = skip_str(b, skip_str(b, ulebs(b, i, 1)))
                if rk == 7: i = ulebs(b, i, 1)
            elif rk == 4: i = ulebs(b, skip_str(b, ulebs(b, i, 1)), 1)
            elif rk == 5: i = ulebs(b, i, 1)
            elif rk == 6:
                i = ulebs(b, i, 4)
                if version >= 3:
                    ns, i = uleb(b, i)
                    for _ in range(ns):
                        _, i = uleb(b, i); nf, i = uleb(b, i); i = ulebs(b, i, 2 * nf)
            elif rk == 8:
                i = ulebs(b, i, 1); nl, i = uleb(b, i); i = ulebs(b, i, 2 * nl)
                nh, i = uleb(b, i); i = ulebs(b, i, nh); by["stack"] += i - at
            elif rk == 9: i = skip_str(b, i)
            else: sys.exit(f"bench: unknown MAPPING record kind {rk} at offset {off}")
    off = end
n = max(nsamples, 1)
print(f"{nsamples} samples (format {version}): file {len(f) / n:.1f} B/sample, "
      f"SAMPLES blocks {by['samples'] / n:.1f}, STACK records {by['stack'] / n:.1f}, "
      f"samples + stacks {(by['samples'] + by['stack']) / n:.1f}")
PY
}
bench_sample_bytes() {
	echo "== sample_bytes: log bytes per sample, sample=1ms,wall with host stacks"
	LUAJIT_PROFILE="log:file=$tmp/bytes_sn.ljlog,sample=1ms,wall" \
		"$luajit" -lljlog "$src/sample.lua" >/dev/null
	printf '%-28s ' "spectral-norm (sample.lua):"
	bytes_per_sample "$tmp/bytes_sn.ljlog"
	LUAJIT_PROFILE="log:file=$tmp/bytes_bt.ljlog,sample=1ms,wall" \
		"$luajit" -lljlog "$src/binarytrees.lua" 16 >/dev/null
	printf '%-28s ' "binary-trees 16:"
	bytes_per_sample "$tmp/bytes_bt.ljlog"
}

# -- costs: three programs, each unprofiled vs attached vs sampled vs alloc
# vs jit.p (JIT on in all): what merely attaching costs, what sampling and
# exact allocation tracking cost, against LuaJIT's own profiler.
cost_prog() {
	case $1 in
	bt) echo "$src/binarytrees.lua 17" ;;
	str) echo "$src/strings.lua 300000" ;;
	sn) echo "$src/spectral.lua 3000" ;;
	esac
}
for p in bt str sn; do
	eval "cfg_${p}_base() { \"\$luajit\" \$(cost_prog $p); }"
	eval "cfg_${p}_attach() { LUAJIT_PROFILE=\"log:file=\$tmp/$p-attach.ljlog,nodefaults\" \"\$luajit\" -lljlog \$(cost_prog $p); }"
	eval "cfg_${p}_sample() { LUAJIT_PROFILE=\"log:file=\$tmp/$p-sample.ljlog,sample=1ms\" \"\$luajit\" -lljlog \$(cost_prog $p); }"
	eval "cfg_${p}_alloc() { LUAJIT_PROFILE=\"log:file=\$tmp/$p-alloc.ljlog,nodefaults,alloc\" \"\$luajit\" -lljlog \$(cost_prog $p); }"
	eval "cfg_${p}_jitp() { \"\$luajit\" -jp=i1 \$(cost_prog $p); }"
	eval "cfg_${p}_lines() { LUAJIT_PROFILE=\"log:file=\$tmp/$p-lines.ljlog,sample=1ms,lines\" \"\$luajit\" -lljlog \$(cost_prog $p); }"
	eval "cfg_${p}_a512() { LUAJIT_PROFILE=\"log:file=\$tmp/$p-a512.ljlog,nodefaults,alloc=512k\" \"\$luajit\" -lljlog \$(cost_prog $p); }"
done
bench_costs() {
	local p name c w r
	echo "== costs: binary-trees (allocation-heavy), strings, spectral-norm (no allocation); JIT on; $runs rounds"
	echo "paired: median over the rounds of the ratio to the unprofiled run of the same round (CPU, wall)"
	for p in bt str sn; do
		case $p in bt) name=binary-trees ;; str) name=strings ;; sn) name=spectral-norm ;; esac
		measure_both ${p}_base ${p}_attach ${p}_sample ${p}_alloc ${p}_jitp
		printf '%s (%s): unprofiled %ss CPU, %ss wall\n' "$name" "$(cost_prog $p | sed "s|$src/||")" "${best[${p}_base]}" "${wall[${p}_base]}"
		for c in "ljlog nodefaults (attached):attach" "ljlog sample=1ms:sample" "ljlog nodefaults,alloc:alloc" "jit.p -jp=i1:jitp"; do
			w=${p}_${c##*:}
			r=$(paired "$w" "${p}_base")
			printf '  %-30s CPU %sx  wall %sx\n' "${c%:*}" "${r% *}" "${r#* }"
		done
		# Everything sampling wrote (samples, their stacks, names), per sample.
		python3 - "$tmp/$p-sample.ljlog" "$("$b/ljlog" report --json "$tmp/$p-sample.ljlog" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("samples", 0))')" <<'PY'
import os, sys
size, n = os.path.getsize(sys.argv[1]), int(sys.argv[2])
print(f"  sample=1ms log: {size} bytes, {n} samples: {size / n:.1f} bytes per sample" if n else "  sample=1ms log: no samples")
PY
	done
}

# -- alloc_costs: binary-trees unprofiled vs exact alloc vs sampled
# alloc=512k (JIT on), paired medians; log bytes per allocation and the
# sampled estimate of the bytes allocated against the exact count.
cfg_ac_base() { "$luajit" "$src/binarytrees.lua" 16; }
cfg_ac_exact() {
	LUAJIT_PROFILE="log:file=$tmp/ac-exact.ljlog,nodefaults,alloc" \
		"$luajit" -lljlog "$src/binarytrees.lua" 16
}
cfg_ac_sampled() {
	LUAJIT_PROFILE="log:file=$tmp/ac-sampled.ljlog,nodefaults,alloc=512k" \
		"$luajit" -lljlog "$src/binarytrees.lua" 16
}
bench_alloc_costs() {
	local r c w
	echo "== alloc_costs: binary-trees 16, JIT on; $runs rounds"
	echo "paired: median over the rounds of the ratio to the unprofiled run of the same round (CPU, wall)"
	measure_both ac_base ac_exact ac_sampled
	printf 'unprofiled %ss CPU, %ss wall\n' "${best[ac_base]}" "${wall[ac_base]}"
	for c in "alloc (exact):ac_exact:budget 1.3x" "alloc=512k (sampled):ac_sampled:budget 1.03x"; do
		w=${c#*:}
		w=${w%%:*}
		r=$(paired "$w" ac_base)
		printf '  %-22s CPU %sx  wall %sx  (%s)\n' "${c%%:*}" "${r% *}" "${r#* }" "${c##*:}"
	done
	# Bytes per allocation: the log over the allocations the program made
	# (the exact log's count); estimates of the sampled log against it.
	"$b/ljlog" report --json "$tmp/ac-exact.ljlog" >"$tmp/ac-exact.json"
	"$b/ljlog" report --json "$tmp/ac-sampled.ljlog" >"$tmp/ac-sampled.json"
	python3 - "$tmp/ac-exact.ljlog" "$tmp/ac-exact.json" "$tmp/ac-sampled.ljlog" "$tmp/ac-sampled.json" <<'PY'
import json, os, sys
ex, exj, sa, saj = sys.argv[1:5]
e, s = json.load(open(exj)), json.load(open(saj))
n = e["heap"]["alloc_count"]
print(f"  exact log:   {os.path.getsize(ex)} bytes, {e['events']} events, {n} allocations: "
      f"{os.path.getsize(ex) / n:.2f} bytes per allocation")
print(f"  sampled log: {os.path.getsize(sa)} bytes, {s['events']} events: "
      f"{os.path.getsize(sa) / n:.4f} bytes per allocation")
for k in ("alloc_bytes", "alloc_count"):
    a, b = e["heap"][k], s["heap"][k]
    print(f"  {k}: exact {a}, sampled estimate {b} ({(b - a) / a * 100:+.2f}%)")
# The heap live at exit differs from run to run (when the GC last ran):
# the sampled run's estimate against its own VM's count at detach.
v = s["vm_list"][0]
if v["heap_detach"] is not None:
    a, b = v["heap_detach"], v["heap_live"]
    print(f"  live at exit (sampled run): LuaJIT's count {a}, estimate {b} ({(b - a) / a * 100:+.2f}%)")
PY
}

# Heap snapshots: the VM's pause per million objects and the log's bytes
# per object (ljlog heap --json, best of RUNS snapshots).
bench_snapshot() {
	local log=$tmp/snap.ljlog n=${SNAP_OBJECTS:-1000000} kind
	for kind in tables strings; do
		LUAJIT_PROFILE="log:file=$log,nodefaults" "$luajit" -lljlog "$src/snapshot.lua" "$n" "$runs" "$kind" >/dev/null
		case $kind in
		tables) echo "snapshot ($n empty tables, $runs snapshots):" ;;
		strings) echo "snapshot ($((n / 2)) tables with a string each, $runs snapshots):" ;;
		esac
		"$b/ljlog" heap --json "$log" | python3 -c '
import json, os, sys
s = json.load(sys.stdin)["snapshots"]
objs = s[0]["objects"]
best = min(x["pause_ns"] for x in s)
nbytes = s[0]["bytes"]
size = os.path.getsize(sys.argv[1])
print(f"  {objs} objects, {nbytes} bytes; best pause {best / 1e6:.1f} ms: {best / 1e6 / objs * 1e6:.1f} ms per million objects ({objs / best * 1e3:.2f} M objects/s; budget 5)")
print(f"  log {size} bytes for {len(s)} snapshots: {size / (objs * len(s)):.1f} bytes per object (budget 24)")
' "$log"
	done
}

# -- budgets: the cost budgets of the issues side by side: unprofiled vs
# nodefaults (attached) vs sample=1ms (a snapshot per function) vs
# sample=1ms,lines vs jit.p (LuaJIT's own, a snapshot per function) vs
# alloc vs alloc=512k, on the three programs of costs (JIT on), paired
# medians.
bench_budgets() {
	local p name c w r
	echo "== budgets: binary-trees, strings, spectral-norm; JIT on; $runs rounds"
	echo "paired: median over the rounds of the ratio to the unprofiled run of the same round (CPU, wall)"
	for p in bt str sn; do
		case $p in bt) name=binary-trees ;; str) name=strings ;; sn) name=spectral-norm ;; esac
		measure_both ${p}_base ${p}_attach ${p}_sample ${p}_lines ${p}_jitp ${p}_alloc ${p}_a512
		printf '%s (%s): unprofiled %ss CPU, %ss wall\n' "$name" "$(cost_prog $p | sed "s|$src/||")" "${best[${p}_base]}" "${wall[${p}_base]}"
		for c in "nodefaults (attached):attach:1.01x" "sample=1ms:sample:1.03x bt, 1.02x sn" \
			"sample=1ms,lines:lines:none; a snapshot per line" "jit.p -jp=i1:jitp:none; LuaJIT's own, mode f" \
			"nodefaults,alloc:alloc:1.3x bt" "nodefaults,alloc=512k:a512:1.03x bt"; do
			w=${p}_${c#*:}
			w=${w%%:*}
			r=$(paired "$w" "${p}_base")
			printf '  %-24s CPU %sx  wall %sx  (budget %s)\n' "${c%%:*}" "${r% *}" "${r#* }" "${c##*:}"
		done
	done
}

what=${*:-calls alloc size reader sample sample_bytes costs alloc_costs snapshot}
for w in $what; do
	case $w in
	calls | alloc | size | reader | sample | sample_bytes | costs | alloc_costs | snapshot | budgets) "bench_$w" ;;
	*) echo "bench: unknown benchmark '$w' (calls, alloc, size, reader, sample, sample_bytes, costs, alloc_costs, snapshot, budgets)" >&2; exit 2 ;;
	esac
done
