#!/usr/bin/env bash
# ljlog e2e: preload attach (doc: man ljlog "PRELOAD"). A host that links
# LuaJIT only and knows nothing of ljlog (tests/e2e/plainhost, as nginx's
# lua module) is profiled with LD_PRELOAD=libljlog.so and LUAJIT_PROFILE:
# every VM it makes (luaL_newstate, and lua_newstate with its own
# allocator) is attached, the log is complete, and f's calls and the host's
# C function's calls equal the counts the program itself makes (JIT off).
# Without LUAJIT_PROFILE, the preload writes nothing. Preloaded into
# programs without LuaJIT (true, sh, gzip), even with LD_BIND_NOW, nothing
# changes: libljlog.so leaves no strong undefined LuaJIT symbol.
. "$(dirname "$0")/lib.sh"

lib=$top_builddir/.libs/libljlog.so
[ -e "$lib" ] || fail "no $lib"
ph=$top_builddir/tests/e2e/plainhost
[ -x "$ph" ] || fail "the plain host is not built ($ph)"
prog=$E2E/preload.lua
n=2000

# preloaded CMD...: CMD with the sanitizer runtime (if any) and libljlog.so
# preloaded.
preloaded() {
	timeout "$E2E_TIMEOUT" env LD_PRELOAD="${LJLOG_TEST_PRELOAD:+$LJLOG_TEST_PRELOAD }$lib" "$@"
}

# -- Programs without LuaJIT are untouched -----------------------------------------
undef=$(nm -D --undefined-only "$lib" | awk '$1 == "U" && $2 ~ /^(lua|luaL|luaJIT)_/ {print $2}')
[ -z "$undef" ] || fail "libljlog.so needs LuaJIT symbols strongly: $undef"
if foreign sh; then
	echo "skip: sh and gzip are $(uname -m) programs and libljlog.so is built for another machine"
else
	for bindnow in "" 1; do
		out=$(LUAJIT_PROFILE="log:file=$T/none-%p.ljlog" LD_BIND_NOW=$bindnow \
			preloaded sh -c 'true && echo hi | gzip -c | gzip -dc' 2>&1) ||
			fail "sh/gzip with libljlog.so preloaded (LD_BIND_NOW='$bindnow') failed: $out"
		expect_eq "sh/gzip output with libljlog.so preloaded" "hi" "$out"
	done
	ls "$T"/none-*.ljlog >/dev/null 2>&1 && fail "a program without LuaJIT wrote a log"
	ok "true, sh and gzip run unchanged with libljlog.so preloaded (LD_BIND_NOW too), and write no log"
fi

# -- A host that links LuaJIT: every VM is profiled ------------------------------
for mode in "" --malloc; do
	label=${mode:-luaL_newstate}
	rm -f "$T/p.ljlog"
	rc=0
	LUAJIT_PROFILE="log:file=$T/p.ljlog,nodefaults,calls" \
		preloaded "$ph" $mode --vms 3 "$prog" $n >"$T/p.out" 2>"$T/p.err" || rc=$?
	[ "$rc" -eq 0 ] || { show "$T/p.err"; fail "[$label] the host exited with status $rc"; }
	for v in 1 2 3; do
		grep -qx "vm $v done $n [0-9.e+]*" "$T/p.out" || { show "$T/p.out"; fail "[$label] VM $v did not finish"; }
	done
	check_complete "$T/p.ljlog"
	report_json "$T/p.ljlog" "$T/p.json"
	expect_eq "[$label] VMs in the log" 3 "$(json_get "$T/p.json" 'd["vms"]')"
	expect_eq "[$label] calls of f (3 VMs)" $((3 * n)) \
		"$(json_get "$T/p.json" '[f for f in d["functions"] if f["kind"] == "lua" and f["file"].endswith("preload.lua") and f["line"] == 6][0]["calls"]')"
	expect_eq "[$label] calls of host.twice (3 VMs)" $((3 * n)) \
		"$(json_get "$T/p.json" 'sum(f["calls"] for f in d["functions"] if f["name"] == "host.twice")')"
	grep -q "running unprofiled\|already\|statically" "$T/p.err" && { show "$T/p.err"; fail "[$label] an attach failed"; }
	ok "[$label] 3 VMs attached by preload, f and host.twice each called $((3 * n)) times"
done

# -- A host with LuaJIT linked in statically: told so in one line ----------------
# The plain host again, linked with LuaJIT's static library and exporting
# its API (-Wl,-E, as LuaJIT's own luajit): the preload cannot reach its
# VMs and says so once; the host runs on unchanged and no log is written.
# (Without -Wl,-E nothing tells it from a program without LuaJIT.)
static_lib=$(cc -print-file-name=libluajit-5.1.a 2>/dev/null || true)
if foreign sh; then
	echo "skip: the static host is built by this machine's cc; libljlog.so is built for another"
elif [ ! -f "$static_lib" ]; then
	echo "skip: no libluajit-5.1.a (libluajit-5.1-dev) for the static host"
else
	sh_=$T/statichost
	cc -O1 $(pkg-config --cflags luajit) "$E2E/plainhost.c" -o "$sh_" -Wl,-E "$static_lib" -lm -ldl ||
		fail "cannot build the static host"
	"$sh_" "$prog" 10 >"$T/s.plain" 2>&1 || { show "$T/s.plain"; fail "the static host failed unprofiled"; }
	rc=0
	LUAJIT_PROFILE="log:file=$T/s.ljlog,calls" preloaded "$sh_" "$prog" 10 >"$T/s.out" 2>"$T/s.err" || rc=$?
	expect_eq "static host with the preload: exit status" 0 "$rc"
	cmp -s "$T/s.plain" "$T/s.out" || { show "$T/s.out"; fail "the static host's output changed under the preload"; }
	expect_eq "static host with the preload: stderr" \
		'ljlog: LD_PRELOAD: statichost has LuaJIT linked in statically, and the preload does not reach its VMs; load ljlog from Lua instead (luajit -lljlog, or require "ljlog")' \
		"$(cat "$T/s.err")"
	[ ! -e "$T/s.ljlog" ] || fail "the static host wrote a log"
	ok "a host with LuaJIT linked in statically: one line says the preload cannot reach it"
fi

# -- Without LUAJIT_PROFILE, nothing --------------------------------------------
(cd "$T" && preloaded "$ph" "$prog" 10 >"$T/q.out" 2>"$T/q.err") ||
	{ show "$T/q.err"; fail "the host failed with libljlog.so preloaded and no LUAJIT_PROFILE"; }
ls "$T"/*.ljlog 2>/dev/null | grep -v '/p.ljlog$' && fail "a log was written without LUAJIT_PROFILE"
[ -s "$T/q.err" ] && { show "$T/q.err"; fail "messages without LUAJIT_PROFILE"; }
ok "without LUAJIT_PROFILE the preloaded library writes nothing and says nothing"

# -- A bad LUAJIT_PROFILE: one message, the host runs on ---------------------------
rc=0
LUAJIT_PROFILE="log:bogus" preloaded "$ph" "$prog" 10 >"$T/r.out" 2>"$T/r.err" || rc=$?
[ "$rc" -eq 0 ] || { show "$T/r.err"; fail "[bad option] the host exited with status $rc"; }
grep -q "unknown option 'bogus'" "$T/r.err" || { show "$T/r.err"; fail "[bad option] no message"; }
ok "a bad LUAJIT_PROFILE is one message and the host runs unprofiled"
