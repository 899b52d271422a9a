#!/bin/sh
# Find the end-to-end tests that do not pass on their first try on a loaded
# machine: run them ROUNDS times (default 3) in a build, beside two
# CPU-bound processes, and list each test that failed at least once, with
# how often and where its log is kept.
#
# Usage: scripts/flakes.sh [-n ROUNDS] [-b BUILD_DIR] [-j JOBS] [TEST...]
#   -b BUILD_DIR  default build/ (a relative name is looked for in the
#                 current directory, then in the source tree); -b
#                 build-arm64 runs the arm64 build of scripts/arm64.sh
#                 under qemu-user as its `make check` does: the kernel's
#                 binfmt_misc entry (registered by scripts/arm64.sh, e.g.
#                 `sh scripts/arm64.sh --build-only`) runs the arm64
#                 programs, no other set-up; checked before the first round
#   -j JOBS       tests run at once (default: nproc)
#   TEST: names as in tests/e2e/Makefile.inc (tests/e2e/heap_trig.sh) or
#   bare (heap_trig); default: every end-to-end test but jitp.sh, jitp_off.sh
#   and soak.sh
#   (long, and judged by statistics of their own; run them by name).
# A test that leaves no result (the build broke, make was killed) counts
# as failed in that round.
# Exit status: 0 when every run passed, 1 when some test failed once or
# more, 2 for a usage error or a missing build.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=3 build=$top/build jobs=$(nproc)
usage() {
	sed -n '2,23s/^# \{0,1\}//p' "$0"
}
while [ $# -gt 0 ]; do
	case $1 in
	-n) [ $# -ge 2 ] || { usage >&2; exit 2; }; rounds=$2; shift 2 ;;
	-b) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$2; shift 2 ;;
	-j) [ $# -ge 2 ] || { usage >&2; exit 2; }; jobs=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "flakes.sh: unknown option '$1'; see 'scripts/flakes.sh --help'" >&2; exit 2 ;;
	*) break ;;
	esac
done
case $rounds in '' | *[!0-9]*) echo "flakes.sh: -n wants a number, not '$rounds'" >&2; exit 2 ;; esac
case $build in /*) ;; *) [ -f "$build/Makefile" ] || build=$top/$build ;; esac
[ -f "$build/Makefile" ] || { echo "flakes.sh: no build in $build (run scripts/setup.sh)" >&2; exit 2; }
build=$(cd "$build" && pwd)

# A build for another machine (build-arm64/): its programs run under
# qemu-user through binfmt_misc, as in scripts/arm64.sh; its luajit must
# run here before the rounds start.
host_cpu=$(sed -n 's/^host_cpu = //p' "$build/Makefile")
if [ -n "$host_cpu" ] && [ "$host_cpu" != "$(uname -m)" ]; then
	lj=$(sed -n 's/^LUAJIT_BIN = //p' "$build/Makefile")
	bf=/proc/sys/fs/binfmt_misc/qemu-$host_cpu
	head -n 1 "$bf" 2>/dev/null | grep -qx enabled || {
		echo "flakes.sh: $build is built for $host_cpu and no qemu runs its programs ($bf); run scripts/arm64.sh --build-only" >&2
		exit 2
	}
	out=$("$lj" -e 'io.write(jit.arch)' 2>&1) || {
		echo "flakes.sh: the $host_cpu luajit ($lj) does not run: $out" >&2
		exit 2
	}
	echo "flakes: $build is built for $host_cpu: its tests run under $(sed -n 's/^interpreter //p' "$bf")"
fi

if [ $# -gt 0 ]; then
	tests=
	for t in "$@"; do
		case $t in tests/*) ;; *) t=tests/e2e/${t%.sh}.sh ;; esac
		[ -f "$top/$t" ] || { echo "flakes.sh: no test $t" >&2; exit 2; }
		tests="$tests $t"
	done
else
	# E2E_TESTS' lines only (E2E_FILES lists scripts that are no tests:
	# lib.sh, nginx_site.sh).
	tests=$(awk '/^E2E_TESTS = /{on = 1; next}
		on && $1 ~ /^tests\/e2e\/[a-z0-9_]+\.sh$/ {print $1}
		on && !/\\$/ {on = 0}' "$top/tests/e2e/Makefile.inc" |
		grep -v -e '/jitp\.sh$' -e '/jitp_off\.sh$' -e '/soak\.sh$')
fi

# Two CPU-bound processes for the whole run (stopped at exit).
hogs=
for _ in 1 2; do
	sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
keep=$(mktemp -d "${TMPDIR:-/tmp}/ljlog-flakes.XXXXXX")
trap 'kill $hogs 2>/dev/null || true' EXIT INT TERM

make -s -C "$build" -j"$jobs" >/dev/null
n=$(echo "$tests" | wc -w)
echo "flakes: $n tests, $rounds rounds, beside 2 CPU-bound processes; logs of failures in $keep"
r=1
while [ "$r" -le "$rounds" ]; do
	start=$(date +%s)
	# shellcheck disable=SC2086
	make -s -C "$build" -j"$jobs" -k check TESTS="$(echo $tests)" \
		>"$keep/round$r.out" 2>&1 || true
	for t in $tests; do
		if [ ! -f "$build/$t.trs" ] || grep -q '^:test-result: \(FAIL\|ERROR\)' "$build/$t.trs"; then
			name=$(basename "$t" .sh)
			cp "$build/$t.log" "$keep/$name.round$r.log" 2>/dev/null || true
			echo "$name" >>"$keep/failed"
		fi
	done
	bad=$(grep -c . "$keep/failed" 2>/dev/null || true)
	echo "flakes: round $r of $rounds: $(($(date +%s) - start)) s, failures so far: ${bad:-0}"
	r=$((r + 1))
done

if [ ! -s "$keep/failed" ]; then
	echo "flakes: every test passed in each of $rounds rounds"
	exit 0
fi
echo "flakes: tests that failed at least once (runs failed of $rounds):"
sort "$keep/failed" | uniq -c | sort -rn | while read -r c name; do
	printf '  %-24s %d  (%s)\n' "$name" "$c" "$keep/$name.round*.log"
done
exit 1
