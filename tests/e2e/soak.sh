#!/usr/bin/env bash
# ljlog e2e: a soak. The real programs of realprogs.sh (luacheck and LDoc
# over Penlight's sources, Debian's lua-check, lua-ldoc and lua-penlight;
# skipped, 77, without them) run again and again under the profiler: sampled
# at 10 kHz with the JIT on (`sample=100us,wall,jit`) and under
# `calls,alloc,gc`; and the C host runs sample_thread.lua in 4 threads, each
# VM sampled at 10 kHz with the JIT on. Every profiled run must:
#  - exit as the unprofiled run does, with the same stdout, the same stderr
#    (but ljlog's own "ljlog: " lines) and, for LDoc, the same HTML tree;
#  - leave a log that `ljlog check` passes (complete and valid);
# and the host must exit 0, attach every thread and print nothing on stderr.
# A crash in the SIGPROF handler, a sanitizer report (scripts/test.sh
# re-runs this under ASan + UBSan, halting on the first error, and under
# TSan) or a torn log fails it.
#
# Rounds: SOAK_ROUNDS (default 3; 2 under a sanitizer, whose runs are
# several times slower). SOAK_MINUTES=M instead repeats rounds until M
# minutes have passed, records each failure as a finding instead of stopping
# (its files are kept in SOAK_FINDINGS, default BUILDDIR/soak-findings) and
# prints a summary: `make soak` (scripts/soak.sh) runs it so.
. "$(dirname "$0")/lib.sh"

san=
case $LJLOG_TEST_PRELOAD in
*asan*) san=asan ;;
*tsan*) san=tsan ;;
esac
minutes=${SOAK_MINUTES:-0}
# Under qemu-user 3 rounds took 276 s: 1 there.
rounds=${SOAK_ROUNDS:-$([ -n "$san" ] && echo 2 || echo 3)}
[ -n "${SOAK_ROUNDS:-}" ] || ! emulated || rounds=1
findings_dir=${SOAK_FINDINGS:-$top_builddir/soak-findings}
nthreads=${SOAK_THREADS:-4}

# Where the packages put things, a private HOME (lib.sh).
realprogs_find

# Inputs smaller than realprogs.sh's: many runs, each short.
lc_in=
for f in List lexer utils; do
	[ -f "$pl_dir/$f.lua" ] || fail "no $pl_dir/$f.lua in lua-penlight"
	lc_in="$lc_in $pl_dir/$f.lua"
done
mkdir -p "$T/src/pl"
for f in Date List Map class compat lexer path pretty utils; do
	cp "$pl_dir/$f.lua" "$T/src/pl/" || fail "no $pl_dir/$f.lua in lua-penlight"
done
lc_args="--no-config --no-color -j1$lc_in"
ldoc_args="--testing -d $T/doc $T/src/pl"

# -- Running and checking ------------------------------------------------------

nruns=0 nsamples=0 nfindings=0 t0=$(date +%s)

# finding LABEL MESSAGE FILES...: a failed check. In a timed soak its files
# are copied to the findings directory and the soak goes on; otherwise the
# test fails.
finding() {
	local label=$1 msg=$2 dir
	shift 2
	echo "FINDING: $test_name: [$label] $msg" >&2
	if [ "$minutes" = 0 ]; then
		local f
		for f in "$@"; do
			case $f in *.ljlog) continue ;; esac
			[ -f "$f" ] && show "$f"
		done
		fail "[$label] $msg"
	fi
	nfindings=$((nfindings + 1))
	dir=$findings_dir/$nfindings
	mkdir -p "$dir"
	echo "[$label] $msg" >"$dir/what"
	cp -r "$@" "$dir/" 2>/dev/null
	return 0
}

# run PROG LABEL CMD...: run CMD (LDoc's doc dir emptied first, kept after
# as doc.PROG.LABEL); leaves $T/PROG.LABEL.{out,err,rc}.
run() {
	local prog=$1 label=$2 rc=0
	shift 2
	rm -rf "$T/doc" "$T/doc.$prog.$label"
	"$@" >"$T/$prog.$label.out" 2>"$T/$prog.$label.err" || rc=$?
	echo "$rc" >"$T/$prog.$label.rc"
	[ -d "$T/doc" ] && mv "$T/doc" "$T/doc.$prog.$label"
	return 0
}

# same_as_plain PROG LABEL: status, stdout, stderr (but "ljlog: " lines)
# and doc tree as the unprofiled run's; 1 (after a finding) if not.
same_as_plain() {
	local prog=$1 label=$2 want got p=$T/$1.$2
	want=$(cat "$T/$prog.plain.rc")
	got=$(cat "$p.rc")
	if [ "$got" != "$want" ]; then
		finding "$prog $label" "exit status $got$([ "$got" -gt 128 ] && echo " (signal $((got - 128)))"), unprofiled $want" "$p.err" "$p.out"
		return 1
	fi
	if ! cmp -s "$T/$prog.plain.out" "$p.out"; then
		finding "$prog $label" "stdout differs from the unprofiled run's" "$p.out" "$T/$prog.plain.out"
		return 1
	fi
	grep -v '^ljlog: ' "$p.err" >"$p.err2" || true
	if ! cmp -s "$T/$prog.plain.err" "$p.err2"; then
		finding "$prog $label" "stderr differs from the unprofiled run's" "$p.err" "$T/$prog.plain.err"
		return 1
	fi
	if [ -d "$T/doc.$prog.plain" ] &&
		! diff -r "$T/doc.$prog.plain" "$T/doc.$prog.$label" >"$p.docdiff" 2>&1; then
		finding "$prog $label" "the generated documentation differs from the unprofiled run's" "$p.docdiff"
		return 1
	fi
	return 0
}

# log_ok LABEL LOG [sampled]: `ljlog check LOG` exits 0 (and, sampled, it
# counts samples); adds its samples to the count. 1 (after a finding) if not.
log_ok() {
	local label=$1 log=$2 sampled=${3:-} rc=0 n
	ljlog check "$log" >"$log.check" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		finding "$label" "ljlog check: exit $rc, expected 0" "$log.check" "$log"
		return 1
	fi
	n=$(sed -n 's/.* \([0-9][0-9]*\) samples.*/\1/p' "$log.check" | head -n 1)
	if [ -n "$sampled" ] && [ "${n:-0}" -eq 0 ]; then
		finding "$label" "sampled, but the log has no samples" "$log.check"
		return 1
	fi
	nsamples=$((nsamples + ${n:-0}))
	return 0
}

# profiled PROG LABEL OPTIONS SCRIPT ARGS...: one profiled run, checked.
profiled() {
	local prog=$1 label=$2 opts=$3 log=$T/$1.$2.ljlog
	shift 3
	rm -f "$log"
	run "$prog" "$label" profile "file=$log,$opts" "$@"
	nruns=$((nruns + 1))
	same_as_plain "$prog" "$label" &&
		log_ok "$prog $label" "$log" $([ "$label" = sample ] && echo sampled) ||
		return 0
	# Keep nothing of a good run: a long soak makes thousands.
	rm -f "$log" "$log.check"
	rm -rf "$T/doc.$prog.$label"
}

# threaded LABEL JIT: the C host, $nthreads VMs sampled at 10 kHz at once.
threaded() {
	local label="host $1" log=$T/host.$1.ljlog rc=0 n
	rm -f "$log"
	host --threads "$nthreads" --script "$E2E/sample_thread.lua" \
		--options "file=$log,sample=100us,wall,jit" -- "$2" \
		>"$T/host.out" 2>"$T/host.err" || rc=$?
	nruns=$((nruns + 1))
	n=$(grep -c '^host: thread [0-9]* tid [0-9]* attached 1$' "$T/host.out")
	if [ "$rc" -ne 0 ] || [ -s "$T/host.err" ] || [ "$n" != "$nthreads" ]; then
		finding "$label" "host: exit $rc, $n of $nthreads threads attached, stderr $(wc -c <"$T/host.err") bytes" \
			"$T/host.err" "$T/host.out"
		return 0
	fi
	log_ok "$label" "$log" sampled || return 0
	grep -q " $nthreads VMs" "$log.check" ||
		finding "$label" "ljlog check does not count $nthreads VMs" "$log.check"
	rm -f "$log" "$log.check"
}

# -- The soak ------------------------------------------------------------------

run luacheck plain luajit_plain "$lc_bin" $lc_args
run ldoc plain luajit_plain "$ldoc_bin" $ldoc_args
# luacheck exits 1: it finds warnings in Penlight.
[ -s "$T/luacheck.plain.out" ] && [ "$(cat "$T/luacheck.plain.rc")" = 1 ] ||
	{ show "$T/luacheck.plain.err"; fail "luacheck: the unprofiled run failed"; }
[ "$(cat "$T/ldoc.plain.rc")" = 0 ] && [ -f "$T/doc.ldoc.plain/index.html" ] ||
	{ show "$T/ldoc.plain.err"; fail "ldoc: the unprofiled run failed"; }

[ "$minutes" = 0 ] || rm -rf "$findings_dir"
round=0
while :; do
	round=$((round + 1))
	# shellcheck disable=SC2086
	{
		profiled luacheck sample "sample=100us,wall,jit" -jon "$lc_bin" $lc_args
		profiled ldoc sample "sample=100us,wall,jit" -jon "$ldoc_bin" $ldoc_args
		profiled luacheck calls "calls,alloc,gc" "$lc_bin" $lc_args
		profiled ldoc calls "calls,alloc,gc" "$ldoc_bin" $ldoc_args
	}
	threaded on on
	threaded off off
	elapsed=$(($(date +%s) - t0))
	if [ "$minutes" != 0 ]; then
		echo "soak: round $round: $nruns runs, $nsamples samples, $((elapsed / 60)) min $((elapsed % 60)) s, $nfindings findings"
		[ "$elapsed" -ge $((minutes * 60)) ] && break
	else
		[ "$round" -ge "$rounds" ] && break
	fi
done

summary="$nruns profiled runs in $round rounds, $nsamples samples, $((elapsed / 60)) min $((elapsed % 60)) s, $nfindings findings${san:+ (under $san)}"
if [ "$minutes" != 0 ]; then
	echo "soak: summary: $summary"
	if [ "$nfindings" -ne 0 ]; then
		echo "soak: findings kept in $findings_dir"
		exit 1
	fi
	exit 0
fi
ok "$summary: every run exited as unprofiled with the same output, every log complete"
