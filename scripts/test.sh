#!/bin/sh
# The README's second command: set up, build, and pass every test: make check,
# then the same suite under AddressSanitizer + UndefinedBehaviorSanitizer, and
# the threaded tests under ThreadSanitizer.
# Env: LJLOG_SKIP_SANITIZERS=1 runs only the plain suite.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
"$top/scripts/setup-tools.sh"
cd "$top"
jobs=$(nproc)
src="$top/third_party/luajit-src"

say() { printf '\n== %s\n' "$*"; }

say "make check (build/)"
cd "$top/build"
make -s -j"$jobs" check || { tail -n 80 test-suite.log; exit 1; }
cd "$top"

[ "${LJLOG_SKIP_SANITIZERS:-0}" = 1 ] && exit 0

# sanitized NAME FLAGS PRELOAD-LIB [make args...]: a VPATH build with FLAGS.
sanitized() {
	name=$1 flags=$2 lib=$3
	shift 3
	dir="$top/build-$name"
	mkdir -p "$dir"
	cd "$dir"
	if [ ! -f Makefile ] || [ "$top/configure" -nt config.status ]; then
		"$top/configure" -q --with-luajit-src="$src" \
			CFLAGS="-O1 -g -fno-omit-frame-pointer $flags" LDFLAGS="$flags"
	fi
	make -s -j"$jobs"
	preload=$(gcc -print-file-name="$lib")
	LJLOG_TEST_PRELOAD="$preload" make -s -j"$jobs" check "$@" ||
		{ tail -n 120 test-suite.log; exit 1; }
	cd "$top"
}

say "make check under ASan + UBSan"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	sanitized asan "-fsanitize=address,undefined -fno-sanitize-recover=undefined" libasan.so

# The end-to-end tests (the threaded host among them); Criterion's own
# runner cannot start under a preloaded TSan runtime.
say "end-to-end tests under TSan"
TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1} \
	sanitized tsan "-fsanitize=thread" libtsan.so 'TESTS=$(E2E_TESTS)'

say "all tests passed"
