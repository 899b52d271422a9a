#!/bin/sh
# ljlog bench: what each family costs, side by side in the same rounds
# (bench/paired.py: paired CPU-time ratios to the unprofiled run, with a 90%
# interval), on an allocation-heavy benchmark (binary-trees), a string one,
# a tight numeric loop (spectral-norm, beside jit.p -jp=f, LuaJIT's own
# profiler) and a real program (luacheck over Penlight's 39 modules).
# The README's "Costs" table quotes it. Never a test threshold.
#
# Usage: bench/defaults.sh [-n ROUNDS] [BUILD_DIR]   (default 11, build/)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=11
[ "${1:-}" = -n ] && { rounds=$2; shift 2; }
b=$(cd "${1:-$top/build}" && pwd)
[ -e "$b/lua/ljlog.so" ] || { echo "bench: build first (no $b/lua/ljlog.so)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ljlog-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export LUA_CPATH="$b/lua/?.so;;"
lj=luajit
p() { echo "env LUAJIT_PROFILE=log:file=$tmp/$1.ljlog$2 $lj -lljlog"; }

# run TITLE PROGRAM...: the families on one program (its exit status is
# not judged: luacheck exits 1 when it warns).
run() {
	title=$1
	shift
	set -- "$@" "|| true"
	echo "== $title"
	python3 "$top/bench/paired.py" -n "$rounds" \
		base="$lj $*" \
		jitp="$lj -jp=f $*" \
		default="$(p d '') $*" \
		sample="$(p s ,sample) $*" \
		alloc512k="$(p a ,nodefaults,alloc=512k) $*" \
		gc="$(p g ,gc) $*" \
		calls="$(p c ,calls) $*" \
		alloc="$(p e ,nodefaults,alloc) $*" \
		-- base
}

run "binary-trees 16" "$top/bench/binarytrees.lua" 16
run "strings 300000" "$top/bench/strings.lua" 300000
run "spectral-norm 3000" "$top/bench/spectral.lua" 3000
lc=$(luajit -e 'print(package.searchpath("luacheck.main", "/usr/share/lua/5.1/?.lua;" .. package.path) or "")' 2>/dev/null || true)
pl=/usr/share/lua/5.1/pl
if [ -n "$lc" ] && [ -d "$pl" ]; then
	cat >"$tmp/lc.lua" <<'EOF'
package.path = "/usr/share/lua/5.1/?.lua;/usr/share/lua/5.1/?/init.lua;" .. package.path
package.cpath = package.cpath .. ";/usr/lib/x86_64-linux-gnu/lua/5.1/?.so"
arg[0] = "luacheck"
require "luacheck.main"
EOF
	run "luacheck over Penlight" "$tmp/lc.lua" --no-config --no-color -j1 \
		"$pl/*.lua" ">/dev/null"
else
	echo "== luacheck over Penlight: left out (lua-check, lua-penlight not installed)"
fi
