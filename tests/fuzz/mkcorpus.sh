#!/usr/bin/env bash
# ljlog fuzzing: remake the seed corpus (tests/fuzz/corpus/) from real logs.
# Usage: tests/fuzz/mkcorpus.sh BUILDDIR    (after make and
#        make tests/e2e/host in BUILDDIR)
# Every file is a log the real profiler wrote, small (buffer=4k, short runs),
# one per event family and mix: calls, alloc, gc, jit, heap snapshots
# (with allocation sites), zones, samples with and without host stacks,
# samples with the JIT on (TRACE records with snapshots), coroutines, several VMs in threads (tests/e2e/host), the Lua
# API, a log a write error stopped (ulimit -f), and a log cut inside a
# block. The inline_*.ljlog files are version 4 logs (samples with their
# frames inline) an older ljlog wrote; they stay, as the reader still reads
# them. The libFuzzer run adds its own finds
# to a corpus of its own, not to this one.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: mkcorpus.sh BUILDDIR}" && pwd)
out=$top/tests/fuzz/corpus
prog=corpus.lua
export LUA_CPATH="$build/lua/?.so;;"
unset LUA_INIT LUAJIT_PROFILE

mkdir -p "$out"
cd "$top/tests/fuzz"
find "$out" -name '*.ljlog' ! -name 'inline_*' -delete

# log NAME OPTIONS [ARGS...]: profile corpus.lua ARGS with OPTIONS.
log() {
	local name=$1 opts=$2
	shift 2
	LUAJIT_PROFILE="log:file=$out/$name.ljlog,buffer=4k,$opts" \
		luajit -lljlog "$prog" "$@" >/dev/null 2>&1
}

# host NAME N OPTIONS [HOST-OPTIONS...]: N threads, one VM each.
host() {
	local name=$1 n=$2 opts=$3
	shift 3
	"$build/tests/e2e/host" --threads "$n" --script "$top/tests/e2e/thread.lua" \
		--options "file=$out/$name.ljlog,buffer=4k,$opts" "$@" >/dev/null 2>&1
}

log calls calls 0 1
log calls_flush calls,flush=1ms 0 1
log calls_keepjit calls,keepjit,jit 0 1
log alloc alloc 0 1
log gc gc,alloc 0 8
log alloc_gc alloc,gc 0 1
log alloc_sampled alloc=1k,gc 0 8
log jit jit 5 1
log sample sample=1ms 30 1
log sample_nohost sample=1ms,nohost,wall 20 1
log sample_wall sample=1ms,wall 20 1
log sample_jit sample=1ms,jit,wall 40 1
log sample_jit_alloc sample=1ms,jit,alloc,wall 1 1
log all calls,alloc,gc,jit,sample=1ms,wall 1 1
log nodefaults nodefaults,calls 0 1
LUAJIT_PROFILE="log:file=$out/coroutines.ljlog,buffer=4k,calls" \
	luajit -lljlog "$top/tests/e2e/coroutines.lua" 1 /dev/null 60 >/dev/null 2>&1
luajit "$top/tests/e2e/names_start.lua" "$out/luaapi.ljlog" >/dev/null 2>&1
host threads2 2 calls,flush=1ms
host threads3_sample 3 sample=1ms,wall,jit,gc
host threads2_detach 2 calls --malloc --detach

# Heap snapshots (HEAP blocks, version 8): the Lua API and snapshot=exit.
LUAJIT_PROFILE="log:file=$out/heap.ljlog,buffer=4k,alloc,snapshot=exit" \
	luajit -lljlog -e 'local l = require "ljlog" local t = {}
		for i = 1, 20 do t[i] = {i, "s" .. i} end
		W = setmetatable({}, {__mode = "k"}) W[t] = t
		assert(l.snapshot())' >/dev/null 2>&1

# Heap objects with their blocks' addresses (version 10), joined with the
# ALLOC events before them: two snapshots, objects added between them.
LUAJIT_PROFILE="log:file=$out/heap_site.ljlog,buffer=4k,alloc" \
	luajit -lljlog "$top/tests/e2e/heap_site.lua" 12 6 4 0 >/dev/null 2>&1

# Zones and marks (version 9): STRING records, ZONE_PUSH/POP, MARK, with
# allocations and samples inside them.
LUAJIT_PROFILE="log:file=$out/zones.ljlog,buffer=4k,alloc,calls,sample=1ms" \
	luajit -lljlog "$top/tests/e2e/zones.lua" >/dev/null 2>&1

# A log stopped by a write error: its END names the error (version 5).
(
	ulimit -f 4
	log stopped calls,alloc 0 1
)

# A log cut inside a block (a writer that died mid-write).
size=$(stat -c %s "$out/calls.ljlog")
head -c $((size * 2 / 3)) "$out/calls.ljlog" >"$out/cut.ljlog"

for f in "$out"/*.ljlog; do
	[ -s "$f" ] || { echo "mkcorpus: $f is empty" >&2; exit 1; }
done
ls -l "$out"
du -sh "$out"
