#!/usr/bin/env bash
# ljlog e2e: attaching leaves LuaJIT's heap as it is unprofiled. LuaJIT's
# allocator trims the top of its newest heap segment (mremap to a smaller
# size, no move) when it is not pinned; unprofiled, luajit's heap is one
# pinned segment and binary-trees trims nothing. ljlog's libraries and
# buffers, mapped below the heap, split it, and the new segment was trimmed
# and faulted back in again and again (src/logger/vmheap.h). Every mode must
# trim no more than the unprofiled run; 'vmtrim' (LuaJIT's trimming left
# alone) is the control that shows the check can fail.
. "$(dirname "$0")/lib.sh"

if [ -n "$LJLOG_TEST_PRELOAD" ]; then
	echo "skip: $test_name: a preloaded sanitizer runtime maps its own memory and changes the heap's layout"
	exit 77
fi
# Under qemu-user the guest's memory map is laid out by qemu, and strace
# sees qemu's system calls: the split heap shows up in some runs only
# (the control trimmed 0 to 2 times), so the check can't be shown to fail.
! emulated || skip "under qemu-user the heap's layout is qemu's: the control does not show the split heap reliably"
command -v strace >/dev/null 2>&1 || fail "strace is not installed (scripts/setup.sh installs it)"

prog=$top_srcdir/bench/binarytrees.lua
depth=14

# trims OUT CMD...: run CMD under strace; OUT gets its output; prints the
# number of segment trims (mremap shrinking in place).
trims() {
	local out=$1
	shift
	timeout "$E2E_TIMEOUT" strace -f -qq -e trace=mremap -o "$T/strace" "$@" >"$out" 2>"$T/err" ||
		{ show "$T/err"; fail "'$*' failed under strace"; }
	python3 - "$T/strace" <<'PY'
import re, sys
n = 0
for line in open(sys.argv[1]):
    m = re.search(r"mremap\(0x[0-9a-f]+, (\d+), (\d+), 0\) = 0x", line)
    if m and int(m.group(2)) < int(m.group(1)):
        n += 1
print(n)
PY
}

plain=$(trims "$T/plain.out" env -u LUAJIT_PROFILE "$LUAJIT" "$prog" $depth)
[ -s "$T/plain.out" ] || fail "the unprofiled run printed nothing"
ok "unprofiled: $plain trims"

run() {
	LUAJIT_PROFILE="log:file=$T/$2.ljlog,$1" LUA_CPATH="$MODDIR/?.so;;" \
		trims "$T/$2.out" "$LUAJIT" -lljlog "$prog" $depth
}

ctl=$(run "nodefaults,vmtrim" control)
[ "$ctl" -gt "$plain" ] ||
	fail "control (vmtrim): $ctl trims, unprofiled $plain: the split heap this test guards against did not show up here"
ok "control, LuaJIT's trimming left alone (vmtrim): $ctl trims"

i=0
for opts in nodefaults "sample=1ms" "nodefaults,alloc" "calls,alloc,gc"; do
	i=$((i + 1))
	n=$(run "$opts" "m$i")
	cmp -s "$T/plain.out" "$T/m$i.out" || fail "[$opts] output differs from the unprofiled run"
	check_complete "$T/m$i.ljlog"
	[ "$n" -le "$plain" ] || fail "[$opts] $n heap trims, unprofiled $plain"
	ok "[$opts] $n trims (unprofiled $plain), same output"
done
