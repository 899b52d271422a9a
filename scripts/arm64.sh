#!/bin/sh
# ljlog for arm64 (aarch64 Linux), cross-built on this x86-64 Debian machine
# and run under qemu-user: the test suite, or the example.
# Usage: scripts/arm64.sh [--example | --build-only | --install-only]
#        (as root, or with sudo)
#   (none)        set up, build in build-arm64/, run `make check` there
#                 (but the reader's own end-to-end tests)
#   --example     set up, build, profile examples/demo.lua under the arm64
#                 luajit with sample=1ms,wall and print the report (read by
#                 the arm64 ljlog)
#   --build-only  set up and build
#   --install-only  set up (what scripts/test.sh runs in the background
#                 while the other passes run)
# Installs, once per machine (skipped when present): the arm64 dpkg
# architecture; gcc-aarch64-linux-gnu, qemu-user-static; the arm64 libraries
# ljlog links (libc6-dev, libluajit-5.1-dev, libunwind-dev, libxxhash-dev,
# zlib1g-dev) and lua-filesystem (tests/e2e/realprogs.sh); the kernel's
# binfmt_misc entry that runs arm64 programs with qemu-aarch64-static.
# Unpacks privately into tests/tools/arm64 (they can't sit beside their
# amd64 versions): luajit:arm64 (its binary conflicts) and Criterion with
# its libraries (libnanomsg5 has no Multi-Arch field).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
deps="$top/third_party"
tools="$top/tests/tools/arm64"
multi=aarch64-linux-gnu
. "$top/scripts/aptsrc.sh"
. "$top/scripts/buildlib.sh"

say() { printf 'arm64: %s\n' "$*" >&2; }
die() { printf 'arm64: error: %s\n' "$*" >&2; exit 1; }

mode=check
case ${1:-} in
"") ;;
--example) mode=example ;;
--build-only) mode=build ;;
--install-only) mode=install ;;
-h | --help)
	sed -n '2,21s/^# \{0,1\}//p' "$0"
	exit 0
	;;
*) die "unknown option '$1' (--example, --build-only, --install-only, --help)" ;;
esac

[ "$(dpkg --print-architecture)" = amd64 ] ||
	die "this script cross-builds from an amd64 Debian machine; on arm64 itself use scripts/setup.sh"

# The amd64 set-up first: its packages and the LuaJIT source (the same
# version as the arm64 library's: Multi-Arch packages share one version).
"$top/scripts/setup.sh" --no-build

# -- Packages --------------------------------------------------------------------
pkgs="gcc-aarch64-linux-gnu qemu-user-static libc6-dev:arm64 libluajit-5.1-dev:arm64
libunwind-dev:arm64 libxxhash-dev:arm64 zlib1g-dev:arm64 lua-filesystem:arm64"
apt_root $pkgs
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	say "adding the dpkg architecture arm64"
	$sudo dpkg --add-architecture arm64
fi
# shellcheck disable=SC2086
apt_install_missing $pkgs

# luajit:arm64's binary conflicts with luajit's; Criterion's libnanomsg5
# has no Multi-Arch field. Unpacked, never installed; the tests link
# Criterion with an rpath into the unpacked tree.
lj=$tools/usr/bin/luajit
crit="libcriterion-dev:arm64 libcriterion3:arm64 libnanomsg5:arm64 libgit2-1.5:arm64
libhttp-parser2.9:arm64 libmbedcrypto7:arm64 libmbedx509-1:arm64 libmbedtls14:arm64
libpcre2-8-0:arm64 libssh2-1:arm64 libffi8:arm64 libssl3:arm64"
if [ ! -x "$lj" ] || [ ! -f "$tools/usr/include/criterion/criterion.h" ]; then
	say "unpacking luajit:arm64 and Criterion (arm64) into tests/tools/arm64"
	rm -rf "$tools"
	mkdir -p "$tools"
	# shellcheck disable=SC2086
	apt_unpack "$tools" luajit:arm64 $crit
	[ -x "$lj" ] || die "no $lj in the unpacked luajit:arm64"
fi

# -- binfmt_misc: arm64 programs run by qemu-aarch64-static ---------------------
# The static qemu: the dynamic one (qemu-user) would take an arm64
# LD_PRELOAD for itself, and asserts in cpu_exec after fork. Flag F: the
# kernel opens the interpreter now, so it works in any mount namespace.
bf=/proc/sys/fs/binfmt_misc
want=/usr/bin/qemu-aarch64-static
if ! grep -qx "interpreter $want" "$bf/qemu-aarch64" 2>/dev/null ||
	! grep -q '^flags:.*F' "$bf/qemu-aarch64" 2>/dev/null; then
	mountpoint -q "$bf" || $sudo mount -t binfmt_misc binfmt_misc "$bf" ||
		die "cannot mount binfmt_misc on $bf (a container without the privilege?)"
	if [ -e "$bf/qemu-aarch64" ]; then
		say "replacing the binfmt entry qemu-aarch64 ($(sed -n 's/^interpreter //p' "$bf/qemu-aarch64")) with $want"
		echo -1 | $sudo tee "$bf/qemu-aarch64" >/dev/null
	fi
	conf=/usr/lib/binfmt.d/qemu-aarch64.conf
	[ -f "$conf" ] || die "no $conf (qemu-user-static)"
	say "registering $want for arm64 programs (binfmt_misc)"
	sed "s#:[^:]*:[A-Z]*\$#:$want:F#" "$conf" | $sudo tee "$bf/register" >/dev/null ||
		die "cannot register qemu-aarch64 in $bf"
fi
out=$("$lj" -e 'io.write(jit.arch)' 2>&1) || die "the arm64 luajit does not run under qemu: $out"
[ "$out" = arm64 ] || die "the arm64 luajit says jit.arch = '$out'"

[ "$mode" = install ] && exit 0

# -- Build -----------------------------------------------------------------------
cd "$top"
autoreconf_stale
lib="$tools/usr/lib/$multi"
configure_in "$top/build-arm64" env PKG_CONFIG=pkg-config \
	PKG_CONFIG_LIBDIR="/usr/lib/$multi/pkgconfig:/usr/share/pkgconfig" \
	../configure -q --host=$multi --with-luajit-src="$deps/luajit-src" \
	LUAJIT_BIN="$lj" \
	CRITERION_CFLAGS="-isystem $tools/usr/include" \
	CRITERION_LIBS="-L$lib -lcriterion -Wl,--disable-new-dtags -Wl,-rpath,$lib"
say "make (build-arm64/)"
make -s -j"$(nproc)" >/dev/null

case $mode in
build) exit 0 ;;
example)
	log=${LJLOG_EXAMPLE_OUT:-"$top/example-arm64.ljlog"}
	rm -f "$log"
	say "profiling examples/demo.lua with the arm64 luajit (sample=1ms,wall)"
	LUA_CPATH="$top/build-arm64/lua/?.so;;" \
		LUAJIT_PROFILE="log:file=$log,sample=1ms,wall" \
		"$lj" -lljlog "$top/examples/demo.lua" >/dev/null
	exec "$top/build-arm64/ljlog" report "$log"
	;;
esac

say "make check (build-arm64/, under qemu-aarch64-static)"
start=$(date +%s)
# All but the reader's own end-to-end tests (E2E_READER_TESTS: portable C
# that reads files; the unit tests read logs on arm64 too), which took
# about 5 minutes of qemu's.
tests=$(make -s print-arch-tests)
make -s -j"$(nproc)" check TESTS="$tests" || { tail -n 80 test-suite.log; exit 1; }
say "make check passed in $(($(date +%s) - start)) s"
