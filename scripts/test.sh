#!/bin/sh
# The README's second command: set up, build, and pass every test: make check,
# the end-to-end tests against OpenResty's LuaJIT (build-lj2/), then the same
# suite under AddressSanitizer + UndefinedBehaviorSanitizer (and the nginx
# test against a luajit2 build with them), and the threaded tests under
# ThreadSanitizer, and last the suite for arm64 under qemu-user
# (scripts/arm64.sh). A build without the sampler runs its own test.
# Env: LJLOG_SKIP_SANITIZERS=1 runs only the plain suite (and arm64's);
# LJLOG_SKIP_ARM64=1 leaves out the arm64 pass.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
t0=$(date +%s)
# say WHAT: a phase's heading, with the seconds since the start.
say() { printf '\n== %s (at %d s)\n' "$*" $(($(date +%s) - t0)); }
"$top/scripts/setup.sh"
"$top/scripts/setup-tools.sh"
cd "$top"
jobs=$(nproc)

# The arm64 pass's set-up (its packages, qemu-user, binfmt_misc: mostly
# downloads and unpacking on a fresh machine) runs in the background while
# the native passes run; arm64_pass waits for it.
arm64_setup=
arm64_log=$top/build/arm64-setup.log
if [ "${LJLOG_SKIP_ARM64:-0}" != 1 ]; then
	"$top/scripts/arm64.sh" --install-only >"$arm64_log" 2>&1 &
	arm64_setup=$!
fi
src="$top/third_party/luajit-src"

. "$top/scripts/buildlib.sh"

say "make check (build/)"
cd "$top/build"
make -s -j"$jobs" check || { tail -n 80 test-suite.log; exit 1; }
cd "$top"

# A build without the sampler, as configure makes on machines other than
# x86_64 and aarch64 (man ljlog, MACHINES): the rest records, sample= says
# why it can't.
say "without the sampler (build-nosampler/, configure --disable-sampler)"
configure_in "$top/build-nosampler" "$top/configure" -q --disable-sampler \
	--with-luajit-src="$src"
make -s -j"$jobs"
# Its one test needs none of the test programs (the unit tests, the hosts).
make -s check TESTS=tests/e2e/nosampler.sh check_PROGRAMS= check_LTLIBRARIES= ||
	{ tail -n 80 test-suite.log; exit 1; }
cd "$top"

# OpenResty's LuaJIT (Debian's luajit2, unpacked by setup-tools.sh into
# tests/tools/luajit2, its source in third_party/luajit2-src): ljlog built
# against it in build-lj2/, the end-to-end tests run by its luajit and its
# libluajit (the C test hosts link it, with an rpath). Plain build only.
say "end-to-end tests against OpenResty's LuaJIT (luajit2, build-lj2/)"
lj2=$top/tests/tools/luajit2/usr
multi=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
# lj2_configure [VAR=VALUE...]: configure the current directory for it.
lj2_configure() {
	"$top/configure" -q --with-luajit-src="$top/third_party/luajit2-src" \
		LUAJIT_BIN="$lj2/bin/luajit" \
		LUAJIT_CFLAGS="-I$top/third_party/luajit2-src/src" \
		LUAJIT_LIBS="$lj2/lib/$multi/libluajit-5.1.so.2 -Wl,-rpath,$lj2/lib/$multi" \
		"$@"
}
# The long corpus tests (jitp, stackedges) run their smaller set here
# (LJLOG_E2E_REDUCED: the plain pass ran them whole); the reader's own
# tests are left out (E2E_VM_TESTS: the reader does not depend on the VM).
configure_in "$top/build-lj2" lj2_configure
make -s -j"$jobs"
LJLOG_E2E_REDUCED=1 make -s -j"$jobs" check TESTS='$(E2E_VM_TESTS)' ||
	{ tail -n 80 test-suite.log; exit 1; }
cd "$top"

# arm64_pass: the suite for arm64, cross-built in build-arm64/ and run
# under qemu-user (scripts/arm64.sh installs what it needs once per
# machine).
arm64_pass() {
	[ "${LJLOG_SKIP_ARM64:-0}" = 1 ] && return 0
	say "arm64 under qemu-user (scripts/arm64.sh, build-arm64/)"
	wait "$arm64_setup" || {
		cat "$arm64_log"
		echo "test: the arm64 set-up (scripts/arm64.sh --install-only) failed: its output above" >&2
		exit 1
	}
	cat "$arm64_log"
	"$top/scripts/arm64.sh"
}

if [ "${LJLOG_SKIP_SANITIZERS:-0}" = 1 ]; then
	arm64_pass
	say "all tests passed"
	exit 0
fi

# sanitized NAME FLAGS PRELOAD-LIB [make args...]: a VPATH build with FLAGS,
# for Debian's luajit, or for luajit2 when NAME starts with lj2-.
sanitized() {
	name=$1 flags=$2 lib=$3
	shift 3
	case $name in
	lj2-*) configure_in "$top/build-$name" lj2_configure \
		CFLAGS="-O1 -g -fno-omit-frame-pointer $flags" LDFLAGS="$flags" ;;
	*) configure_in "$top/build-$name" "$top/configure" -q --with-luajit-src="$src" \
		CFLAGS="-O1 -g -fno-omit-frame-pointer $flags" LDFLAGS="$flags" ;;
	esac
	make -s -j"$jobs"
	preload=$(gcc -print-file-name="$lib")
	LJLOG_TEST_PRELOAD="$preload" make -s -j"$jobs" check "$@" ||
		{ tail -n 120 test-suite.log; exit 1; }
	cd "$top"
}

# The whole suite; the long corpus tests (jitp, stackedges) run their
# smaller set (the plain pass ran them whole): the code they reach is the
# same, the rest of their corpus adds only time.
say "make check under ASan + UBSan"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
asan="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
export LJLOG_E2E_REDUCED=1
sanitized asan "$asan" libasan.so

# The real server (nginx's lua module runs on luajit2) under ASan + UBSan
# too: libljlog.so built for luajit2 with them, preloaded into nginx after
# the ASan runtime. The rest of the suite ran under them above.
say "nginx (luajit2) under ASan + UBSan"
sanitized lj2-asan "$asan" libasan.so TESTS=tests/e2e/nginx.sh \
	check_PROGRAMS= check_LTLIBRARIES=
unset ASAN_OPTIONS UBSAN_OPTIONS LJLOG_E2E_REDUCED

# The end-to-end tests where ljlog's threads do more than write the log
# (E2E_THREAD_TESTS, tests/e2e/Makefile.inc); Criterion's own runner (the
# unit tests) cannot start under a preloaded TSan runtime.
say "end-to-end tests under TSan"
TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1} \
	sanitized tsan "-fsanitize=thread" libtsan.so 'TESTS=$(E2E_THREAD_TESTS)'

arm64_pass
say "all tests passed"
