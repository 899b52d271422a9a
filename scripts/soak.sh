#!/bin/sh
# ljlog soak: tests/e2e/soak.sh for SOAK_MINUTES minutes (default 10),
# counting failures as findings instead of stopping, then a summary (runs,
# samples, minutes, findings). Run by `make soak` with the build directory
# it was started in; uses the ASan + UBSan build (build-asan/ beside the
# source, as scripts/test.sh makes it, or BUILDDIR itself when it is one)
# when there is one, else BUILDDIR. Findings: BUILDDIR/soak-findings/.
# Usage: scripts/soak.sh BUILDDIR
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)

# sanitized DIR: 1 when DIR's module links the ASan runtime.
sanitized() {
	[ -e "$1/lua/ljlog.so" ] && readelf -d "$1/lua/ljlog.so" 2>/dev/null | grep -q 'libasan\.so'
}
dir=$build
if ! sanitized "$dir" && [ -f "$top/build-asan/Makefile" ]; then
	echo "soak: bringing $top/build-asan up to date"
	make -s -C "$top/build-asan" >/dev/null
	make -s -C "$top/build-asan" tests/e2e/host >/dev/null
	dir=$top/build-asan
fi
if sanitized "$dir"; then
	export LJLOG_TEST_PRELOAD="$(gcc -print-file-name=libasan.so)"
	export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}"
	export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
	echo "soak: ASan + UBSan build $dir"
else
	echo "soak: no ASan build (scripts/test.sh makes build-asan/): plain build $dir"
fi
[ -x "$dir/tests/e2e/host" ] || make -s -C "$dir" tests/e2e/host >/dev/null
export SOAK_MINUTES="${SOAK_MINUTES:-10}"
export SOAK_FINDINGS="${SOAK_FINDINGS:-$build/soak-findings}"
export top_srcdir="$top" top_builddir="$dir"
export LUAJIT="${LUAJIT:-$(sed -n 's/^LUAJIT_BIN = //p' "$dir/Makefile")}"
# Each run gets the e2e time limit; the soak as a whole has none.
exec bash "$top/tests/e2e/soak.sh"
