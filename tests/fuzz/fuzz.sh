#!/usr/bin/env bash
# ljlog fuzzing: the reader under libFuzzer (tests/fuzz/fuzz_reader.c).
# Short run (make check): every file of tests/fuzz/regress/ (inputs that
# once crashed the reader) and of the seed corpus tests/fuzz/corpus/ (real
# logs) goes through the harness once, then FUZZ_RUNS inputs (1500) of
# fuzzing from the seeds, from the random seed FUZZ_SEED (1): nearly the
# same inputs on every run. Long run (--long, `make fuzz`): FUZZ_TIME seconds
# (3600), one fuzzing process at a time that goes on after a crash, with
# the corpus it grows kept in tests/fuzz/work/ of the build dir.
# A crash, sanitizer report, leak, time out (10 s) or single allocation
# over 64 MiB (for an input of 64 KiB at most) fails it; the input is saved
# in tests/fuzz/artifacts/ of the build dir (replay:
# tests/fuzz/fuzz_reader FILE, or ljlog check FILE).
# Skipped (77) when configure found no clang with libFuzzer, and in the
# sanitizer re-runs of scripts/test.sh: the fuzzer has its own ASan+UBSan.
set -u
shopt -s nullglob
here=$(cd "$(dirname "$0")" && pwd)
: "${top_srcdir:=$(cd "$here/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
FZ=$top_builddir/tests/fuzz/fuzz_reader
long=0
[ "${1:-}" = --long ] && long=1

if [ -n "${LJLOG_TEST_PRELOAD:-}" ]; then
	echo "SKIP: fuzz: a sanitizer re-run (the fuzzer carries its own ASan+UBSan)"
	exit 77
fi
if [ ! -x "$FZ" ]; then
	echo "SKIP: fuzz: $FZ not built (configure found no clang with libFuzzer)"
	exit 77
fi

seeds=$top_srcdir/tests/fuzz/corpus
regress=$top_srcdir/tests/fuzz/regress
art=$top_builddir/tests/fuzz/artifacts
mkdir -p "$art"
T=$(mktemp -d "${TMPDIR:-/tmp}/ljlog-fuzz.XXXXXX")
trap 'rm -rf "$T"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# -close_fd_mask=3: the commands' own output and messages are not wanted;
# libFuzzer and the sanitizers still report (on a copy of stderr).
opts="-close_fd_mask=3 -timeout=10 -malloc_limit_mb=64 -rss_limit_mb=2048
-max_len=65536 -artifact_prefix=$art/"

fail() {
	echo "FAIL: fuzz: $*" >&2
	exit 1
}

# The seeds are real logs of this format: each reads as it was made (a
# format change must remake them: tests/fuzz/mkcorpus.sh BUILDDIR).
ljlog=$top_builddir/ljlog
for f in "$seeds"/*.ljlog; do
	case ${f##*/} in
	cut.ljlog) want=1 ;;     # cut inside a block: truncated
	stopped.ljlog) want=4 ;; # a write error stopped it
	*) want=0 ;;
	esac
	"$ljlog" check "$f" >"$T/check.out" 2>&1
	got=$?
	[ "$got" = "$want" ] || {
		cat "$T/check.out" >&2
		fail "seed ${f##*/}: ljlog check exits $got, not $want (remake the corpus: tests/fuzz/mkcorpus.sh BUILDDIR)"
	}
done
echo "ok: fuzz: every seed checks as made"

# Every regression input and every seed, once each.
inputs=("$seeds"/*)
[ -d "$regress" ] && inputs+=("$regress"/*)
# shellcheck disable=SC2086
"$FZ" $opts "${inputs[@]}" >"$T/replay.log" 2>&1 || {
	tail -n 60 "$T/replay.log" >&2
	fail "an input of tests/fuzz/regress or tests/fuzz/corpus fails the harness"
}
echo "ok: fuzz: ${#inputs[@]} regression and seed inputs replayed without a report"

if [ "$long" = 1 ]; then
	time=${FUZZ_TIME:-3600}
	work=$top_builddir/tests/fuzz/work/corpus
	mkdir -p "$work"
	before=$(ls "$art" | wc -l)
	echo "fuzz: $time s, corpus $work, crashes to $art"
	# shellcheck disable=SC2086
	nice -n 10 "$FZ" $opts -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
		-ignore_ooms=1 -max_total_time="$time" "$work" "$seeds" 2>&1 |
		tee "$T/fuzz.log"
	after=$(ls "$art" | wc -l)
	[ "$after" = "$before" ] ||
		fail "$((after - before)) new input(s) in $art: $(ls -t "$art" | head -n 5 | tr '\n' ' ')"
	echo "ok: fuzz: $time s without a crash"
	exit 0
fi

# A fixed number of runs from a fixed seed (FUZZ_RUNS, FUZZ_SEED), not a
# time: make check explores nearly the same inputs on every machine and
# every run, however loaded (two runs here: coverage 3794 and 3784, the
# rest from paths the harness itself does not fix, such as hash order).
# With a time and a random seed, a fresh clone's run found a new crash
# that many runs before had not. New inputs are `make fuzz`'s (its long
# runs keep their corpus), and each one fixed goes to regress/.
runs=${FUZZ_RUNS:-1500}
seed=${FUZZ_SEED:-1}
mkdir -p "$T/corpus"
# shellcheck disable=SC2086
"$FZ" $opts -seed="$seed" -runs="$runs" -print_final_stats=1 \
	"$T/corpus" "$seeds" >"$T/fuzz.log" 2>&1
rc=$?
grep -E '^#[0-9]+.*(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss' \
	"$T/fuzz.log"
if [ "$rc" != 0 ]; then
	tail -n 80 "$T/fuzz.log" >&2
	fail "the fuzzer found a crash in $runs runs from seed $seed (exit $rc); input saved in $art"
fi
echo "ok: fuzz: $runs runs from seed $seed and $(ls "$seeds" | wc -l) seeds without a crash"
