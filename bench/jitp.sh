#!/usr/bin/env bash
# ljlog against LuaJIT's own profiler: the table of shares, program by
# program (tests/e2e/jitp.sh checks them; this prints them on longer runs).
# Each program of tests/e2e/jitp/ (and luacheck over Penlight when Debian's
# lua-check and lua-penlight are there) runs under jit.profile (mode f,
# 1 ms) and under ljlog (sample=1ms), JIT on and off; for every Lua
# function with 5% of either's samples: jit.p's share, ljlog's, the
# difference and its standard error.
# Usage: bench/jitp.sh [PROGRAM...]   (default: the whole corpus)
# Env: LUAJIT (default luajit), LJLOG_BUILDDIR (default build/), CPU
#      (seconds of CPU per run, default 8: about 2000 samples of jit.p's)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
b=${LJLOG_BUILDDIR:-$src/build}
luajit=${LUAJIT:-luajit}
[ -e "$b/lua/ljlog.so" ] || { echo "bench: build first (no $b/lua/ljlog.so)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
progs=()
if [ $# -gt 0 ]; then
	for p in "$@"; do progs+=("$p=$src/tests/e2e/jitp/$p.lua:SCALE"); done
else
	for f in "$src"/tests/e2e/jitp/*.lua; do
		progs+=("$(basename "$f" .lua)=$f:SCALE")
	done
	lc=$(command -v luacheck || true)
	pl=$("$luajit" -e 'print((package.searchpath("pl.utils", package.path) or ""):match("^(.*)/utils%.lua$") or "")')
	if [ -n "$lc" ] && [ -n "$pl" ]; then
		args=--no-config:--no-color:-j1
		for f in List class compat lexer path utils; do args="$args:$pl/$f.lua"; done
		progs+=("luacheck=$(readlink -f "$lc"):$args")
	fi
fi
python3 "$src/tests/e2e/jitp_harness.py" --luajit "$luajit" --ljlog "$b/ljlog" \
	--moddir "$b/lua" --jitprofile "$src/tests/e2e/sample_jitprofile.lua" \
	--tmp "$tmp" --cpu "${CPU:-8}" \
	--group pcall_error=18+42 --group gsub_callback=24+37 \
	--group sort_cmp=18+25 --truth nbody --unjudged recursion:on \
	"${progs[@]}"
