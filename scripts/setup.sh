#!/bin/sh
# ljlog set-up: Debian packages, the matching LuaJIT source tree, and the build.
# Usage: scripts/setup.sh [--no-build]    (run as root, or with sudo available)
# Builds in build/: build/ljlog, build/lua/ljlog.so.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
deps="$top/third_party"
. "$top/scripts/aptsrc.sh"
. "$top/scripts/buildlib.sh"
# lua-check, lua-ldoc, lua-penlight: the real programs of tests/e2e/realprogs.sh;
# lua-markdown: the real program of tests/e2e/ranking.sh;
# clang, libclang-rt-dev (libFuzzer, sanitizers): the reader's fuzzer, tests/fuzz.
# strace: tests/e2e/vmheap.sh counts the VM allocator's heap trims.
pkgs="luajit libluajit-5.1-dev libunwind-dev libxxhash-dev zlib1g-dev libcriterion-dev
autoconf automake libtool pkg-config make gcc dpkg-dev xz-utils python3
clang libclang-rt-dev strace
lua-check lua-ldoc lua-penlight lua-markdown"

say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

apt_root $pkgs

# -- Debian packages ---------------------------------------------------------
# shellcheck disable=SC2086
apt_install_missing $pkgs

# -- LuaJIT source matching the installed luajit -------------------------------
# A private apt configuration with deb-src lines (scripts/aptsrc.sh).
ver=$(dpkg-query -W -f='${Version}' luajit)
src="$deps/luajit-$ver"
if [ ! -f "$src/src/lj_obj.h" ]; then
	say "fetching LuaJIT source $ver (apt-get source)"
	apt_source "$deps" dl luajit "$ver" "$src"
fi
# Left alone when it is right: builds may read through it meanwhile
# (scripts/test.sh runs scripts/arm64.sh's set-up beside its passes).
[ "$(readlink "$deps/luajit-src" 2>/dev/null)" = "luajit-$ver" ] ||
	ln -sfn "luajit-$ver" "$deps/luajit-src"

[ "${1:-}" = "--no-build" ] && exit 0

# -- Build, out of the source tree: build/ (sanitizer builds sit beside it) ---
cd "$top"
if [ -f config.status ]; then
	say "the source tree is configured in place; cleaning it for out-of-tree builds"
	make -s distclean >/dev/null 2>&1 || rm -f config.status
fi
autoreconf_stale
# shellcheck disable=SC2086
configure_in "$top/build" ../configure -q --with-luajit-src="$deps/luajit-src" \
	${LJLOG_CONFIGURE_FLAGS:-}
say "make (build/)"
make -s -j"$(nproc)" >/dev/null
