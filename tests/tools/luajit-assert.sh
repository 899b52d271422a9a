#!/bin/sh
# Build, once per LuaJIT source tree, a luajit with LuaJIT's own
# assertions (LUA_USE_ASSERT, LUA_USE_APICHECK) from the tree the build in
# $top_builddir (default: the current directory) was configured with, and
# print the path of its luajit binary. The tree is copied: the copy is
# built, not the tree ljlog reads. Prints "skip: REASON" when the build is
# for another machine (a cross build: its luajit would not run here).
# Cached in tests/tools/luajit-assert/NAME (NAME: the tree's folder).
# Usage: [top_builddir=BUILD] sh tests/tools/luajit-assert.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${top_builddir:-.}
mk=$build/Makefile
[ -f "$mk" ] || { echo "luajit-assert.sh: no Makefile in $build" >&2; exit 2; }
src=$(sed -n 's/^LUAJIT_SRC = //p' "$mk")
host=$(sed -n 's/^host_cpu = //p' "$mk")
buildcpu=$(sed -n 's/^build_cpu = //p' "$mk")
if [ "$host" != "$buildcpu" ]; then
	echo "skip: a build for $host on $buildcpu"
	exit 0
fi
tree=${src%/src}
[ -f "$tree/src/lj_obj.h" ] || { echo "luajit-assert.sh: no LuaJIT source at $tree" >&2; exit 2; }
name=$(basename "$(cd "$tree" && pwd -P)")
out=$here/luajit-assert/$name
if [ ! -x "$out/src/luajit" ]; then
	mkdir -p "$here/luajit-assert"
	tmp=$(mktemp -d "$here/luajit-assert/.build.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	cp -R "$tree/." "$tmp/"
	echo "luajit-assert.sh: building $name with LUA_USE_ASSERT, LUA_USE_APICHECK" >&2
	make -C "$tmp" -j"$(nproc)" -s XCFLAGS="-DLUA_USE_ASSERT -DLUA_USE_APICHECK" \
		>"$tmp.log" 2>&1 || { tail -n 30 "$tmp.log" >&2; rm -f "$tmp.log"; exit 1; }
	rm -f "$tmp.log"
	rm -rf "$out"
	mv "$tmp" "$out" 2>/dev/null || [ -x "$out/src/luajit" ]
fi
echo "$out/src/luajit"
