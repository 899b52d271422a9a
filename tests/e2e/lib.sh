# ljlog end-to-end tests: the shared shell library.
# Sourced by every tests/e2e/*.sh: paths, a temp dir, running luajit under
# the profiler, reading `ljlog report --json`, failing with a message.
#
# Environment (set by `make check`, see tests/e2e/Makefile.inc; defaults
# make a test runnable by hand from an in-tree build):
#   top_srcdir           where tests/e2e/*.lua live
#   top_builddir         where ljlog, lua/ljlog.so and tests/e2e/host live
#   LUAJIT               the luajit to run (default: luajit on PATH)
#   LJLOG_TEST_PRELOAD   preloaded into every luajit run (sanitizer runtime)
#   LJLOG_TEST_KEEP      keep the temp dir (its path is printed)
#   LJLOG_E2E_REDUCED    1: the long corpus tests (jitp, stackedges) run
#                        their smaller set, as under qemu-user (scripts/
#                        test.sh sets it for the luajit2 and ASan+UBSan
#                        passes, which repeat the suite on another build)

set -u
# Nothing from the caller's environment profiles or preloads our runs.
unset LUAJIT_PROFILE LUA_INIT LUA_INIT_5_1 LJLOG_MODULE_DIR

test_name=$(basename "$0" .sh)
e2e_here=$(cd "$(dirname "$0")" && pwd)
: "${top_srcdir:=$(cd "$e2e_here/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
# Canonical ("build/.." would show up in chunk names).
top_srcdir=$(cd "$top_srcdir" && pwd)
top_builddir=$(cd "$top_builddir" && pwd)
: "${LUAJIT:=luajit}"
# A luajit unpacked outside /usr (tests/tools/luajit2: OpenResty's) keeps its
# jit.* modules under its own prefix, not on its compiled-in path, which
# would find the system luajit's (jit.vmdef of another LuaJIT): they come
# first. Tests that set LUA_PATH keep it ("...;$LUA_PATH").
case $LUAJIT in
/usr/bin/* | /usr/local/bin/*) ;;
*/bin/*)
	for e2e_d in "${LUAJIT%/bin/*}"/share/luajit-2.1*; do
		[ -f "$e2e_d/jit/vmdef.lua" ] || continue
		LUA_PATH="$e2e_d/?.lua;${LUA_PATH:-;}"
		export LUA_PATH
	done
	;;
esac
: "${LJLOG_TEST_PRELOAD:=}"
E2E=$top_srcdir/tests/e2e
LJLOG=$top_builddir/ljlog
MODDIR=$top_builddir/lua
HOST=$top_builddir/tests/e2e/host
# Generous: a hung run fails the test instead of hanging `make check`.
e2e_timeout_given=${E2E_TIMEOUT:-}
E2E_TIMEOUT=${E2E_TIMEOUT:-120}

# -- Temp dir, cleaned up on exit --------------------------------------------

T=$(mktemp -d "${TMPDIR:-/tmp}/ljlog-e2e-$test_name.XXXXXX")
e2e_pids=
e2e_cleanup() {
	local p
	for p in $e2e_pids; do
		kill -9 "$p" 2>/dev/null
	done
	if [ -n "${LJLOG_TEST_KEEP:-}" ]; then
		echo "kept $T"
	else
		rm -rf "$T"
	fi
}
trap e2e_cleanup EXIT
trap 'exit 130' INT TERM

# python3 is Debian's (/usr/bin/python3, which scripts/setup.sh installs)
# whatever PATH finds first. A version manager's shim (pyenv's, on these
# machines) runs a dozen shell scripts before Python starts: 0.38 s a call
# against 0.03 s, and a test runs Python up to a few hundred times. A
# directory of its own in $T, first on PATH, so that scripts run with
# `#!/usr/bin/env python3` and Python's own children find it too.
if [ -x /usr/bin/python3 ]; then
	mkdir "$T/.python"
	ln -s /usr/bin/python3 "$T/.python/python3"
	PATH=$T/.python:$PATH
	export PATH
fi

# Remember a background pid so that cleanup kills it.
track_pid() {
	e2e_pids="$e2e_pids $1"
}

# -- Messages ------------------------------------------------------------------

# fail MESSAGE...: the test fails, saying what was expected and what came.
fail() {
	echo "FAIL: $test_name: $*" >&2
	exit 1
}

# skip MESSAGE...: the test cannot run here (a tool it needs is absent):
# automake's SKIP (exit 77), saying why.
skip() {
	echo "SKIP: $test_name: $*" >&2
	exit 77
}

# ok MESSAGE...: one line per thing checked.
ok() {
	echo "ok: $test_name: $*"
}

# show FILE [LABEL]: print a file's head into the test log (for failures).
show() {
	echo "---- ${2:-$1} ----" >&2
	head -c 4000 "$1" >&2
	echo "---- end ----" >&2
}

# A sanitized module in an unsanitized luajit needs its runtime preloaded.
if [ -z "$LJLOG_TEST_PRELOAD" ] && [ -e "$MODDIR/ljlog.so" ]; then
	e2e_san=$(readelf -d "$MODDIR/ljlog.so" 2>/dev/null |
		sed -n 's/.*Shared library: \[\(lib[at]san\)\.so.*/\1/p' | head -n 1)
	if [ -n "$e2e_san" ]; then
		echo "FAIL: $test_name: $MODDIR/ljlog.so links $e2e_san: run with" \
			"LJLOG_TEST_PRELOAD=\$(gcc -print-file-name=$e2e_san.so)" >&2
		exit 1
	fi
fi

# -- Running things -------------------------------------------------------------

# luajit ARGS...: the installed luajit with our module on LUA_CPATH, the
# sanitizer runtime preloaded when asked, and a time limit.
luajit() {
	if [ -n "$LJLOG_TEST_PRELOAD" ]; then
		LUA_CPATH="$MODDIR/?.so;;" timeout "$E2E_TIMEOUT" \
			env LD_PRELOAD="$LJLOG_TEST_PRELOAD" "$LUAJIT" "$@"
	else
		LUA_CPATH="$MODDIR/?.so;;" timeout "$E2E_TIMEOUT" "$LUAJIT" "$@"
	fi
}

# luajit_plain ARGS...: luajit without our module path and without a
# preload: the reference run of a program, unprofiled.
luajit_plain() {
	env -u LUAJIT_PROFILE timeout "$E2E_TIMEOUT" "$LUAJIT" "$@"
}

# anchor_run OUT ERR RUN ARGS...: RUN ARGS (RUN is luajit_plain, or luajit
# where a sanitized test library is loaded), stdout to OUT and stderr to
# ERR, for a run under LuaJIT's own profiler, jit.profile, an anchor the
# tests compare ljlog with. A run that has not ended after E2E_TIMEOUT
# seconds is killed and run again, three tries in all, each hang said in
# the test's log. jit.profile itself hangs now and then with the JIT on:
# luacheck under sample_jitprofile.lua, 3 runs in about 4,000, on Debian
# 12's LuaJIT, whose process spins in compiled code. It is the anchor's
# fault and costs the test its comparison, not ljlog's: ljlog's own runs
# (luajit, profile) get no second try.
anchor_run() {
	local out=$1 err=$2 try rc
	shift 2
	for try in 1 2 3; do
		"$@" >"$out" 2>"$err"
		rc=$?
		[ "$rc" -eq 124 ] || return "$rc"
		echo "info: $test_name: a run under jit.profile had not ended after" \
			"$E2E_TIMEOUT s (try $try of 3, killed): $*"
	done
	return "$rc"
}

# profile OPTIONS ARGS...: run `luajit -lljlog ARGS` with
# LUAJIT_PROFILE=log:OPTIONS (OPTIONS names the file).
profile() {
	local o=$1
	shift
	LUAJIT_PROFILE="log:$o" luajit -lljlog "$@"
}

# profile_bg OPTIONS ARGS...: profile in the background, without a time
# limit; BG_PID is the luajit process itself (tracked: killed at exit).
profile_bg() {
	local o=$1
	shift
	if [ -n "$LJLOG_TEST_PRELOAD" ]; then
		LUAJIT_PROFILE="log:$o" LUA_CPATH="$MODDIR/?.so;;" \
			env LD_PRELOAD="$LJLOG_TEST_PRELOAD" "$LUAJIT" -lljlog "$@" &
	else
		LUAJIT_PROFILE="log:$o" LUA_CPATH="$MODDIR/?.so;;" \
			"$LUAJIT" -lljlog "$@" &
	fi
	BG_PID=$!
	track_pid "$BG_PID"
}

# ljlog ARGS...: the CLI from the build tree, with a time limit. The CLI is
# linked with the sanitizers of its build (no preload needed).
ljlog() {
	[ -x "$LJLOG" ] || fail "the ljlog CLI is not built ($LJLOG)"
	timeout "$E2E_TIMEOUT" "$LJLOG" "$@"
}

# host ARGS...: the C host program (tests/e2e/host.c).
host() {
	[ -x "$HOST" ] || fail "the host program is not built ($HOST)"
	timeout "$E2E_TIMEOUT" "$HOST" "$@"
}

# -- Checking logs ------------------------------------------------------------------

# check_complete LOG: `ljlog check` exits 0.
check_complete() {
	local rc=0
	ljlog check "$1" >"$T/check.out" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		show "$T/check.out" "ljlog check $1"
		fail "ljlog check $1: expected exit 0 (complete, valid), got $rc"
	fi
}

# report_json LOG OUT: `ljlog report --json LOG > OUT`, exit 0 and JSON.
report_json() {
	local rc=0
	ljlog report --json "$1" >"$2" 2>"$2.err" || rc=$?
	if [ "$rc" -ne 0 ]; then
		show "$2.err" "ljlog report --json $1 (stderr)"
		fail "ljlog report --json $1: expected exit 0, got $rc"
	fi
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$2" \
		2>"$2.perr" || { show "$2"; fail "ljlog report --json $1: not JSON: $(cat "$2.perr")"; }
}

# json_get FILE EXPR: print a Python expression over the JSON object d
# (functions by name: fn["name"]), e.g. json_get r.json 'd["heap"]["live"]'.
# Integers print as integers, booleans as true/false.
json_get() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
fn = {f["name"]: f for f in d.get("functions", [])}
# Lua functions also by chunk:line, named ones too ("fib (app.lua:4)").
for f in d.get("functions", []):
    if f["kind"] == "lua":
        fn.setdefault("%s:%d" % (f["file"], f["line"]), f)
v = eval(sys.argv[2])
if isinstance(v, bool):
    print("true" if v else "false")
elif isinstance(v, float) and v.is_integer():
    print(int(v))
else:
    print(v)
EOF
}

# expect_eq WHAT EXPECTED GOT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# wait_for SECONDS COMMAND...: poll COMMAND every 50 ms until it succeeds;
# 1 on time out.
wait_for() {
	local n=$(($1 * 20))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.05
		n=$((n - 1))
	done
	return 1
}

# -- Call counts against the hook counter ------------------------------------------

# calls_match PROG OPTIONS [ARGS...]: run PROG under hookcount.lua (a
# debug.sethook call counter, JIT off) and under ljlog with OPTIONS; the
# output must be the same, the log complete, and every Lua function the
# hook saw (any chunk: files, load()ed strings, binary chunks) and every
# library function hookcount.lua names must have exactly the hook's count
# in `ljlog report --json`, with no Lua function the hook did not see. The
# log has one coroutine per coroutine.create/wrap plus the main one (PROG
# resumes each coroutine it makes at least once). Leaves $T/calls.ljlog,
# $T/calls.json.
calls_match() {
	local prog=$1 opts=$2 rc=0
	shift 2
	rm -f "$T/calls.ljlog" "$T/hook.txt"
	luajit_plain "$E2E/hookcount.lua" "$T/hook.txt" "$prog" "$@" >"$T/hook.out" 2>"$T/hook.err" ||
		{ show "$T/hook.err"; fail "$prog: the hook counter run failed"; }
	profile "file=$T/calls.ljlog,$opts" "$prog" "$@" >"$T/prof.out" 2>"$T/prof.err" || rc=$?
	if [ "$rc" -ne 0 ]; then
		show "$T/prof.err"
		fail "$prog: the profiled run exited with status $rc$([ "$rc" -gt 128 ] && echo " (signal $((rc - 128)))"), unprofiled 0"
	fi
	cmp -s "$T/hook.out" "$T/prof.out" ||
		fail "$prog: the output differs under ljlog: '$(head -c 300 "$T/hook.out")' vs '$(head -c 300 "$T/prof.out")'"
	check_complete "$T/calls.ljlog"
	report_json "$T/calls.ljlog" "$T/calls.json"
	python3 - "$T/hook.txt" "$T/calls.json" "$E2E/hookcount.lua" "$test_name" <<'PY' ||
import json, sys, urllib.parse
hook_path, json_path, hookcount, test = sys.argv[1:]
d = json.load(open(json_path))

def chunk(src, short_src):
    """A chunk name as the reader shows it: no leading '@' or '=', and
    source text (load() of a string without a name) the way LuaJIT's
    debug.getinfo short_src shows it."""
    return src[1:] if src[:1] in "@=" else short_src

want_lua, want_lib = {}, {}
for ln in open(hook_path, encoding="latin-1"):
    kind, n, rest = ln.rstrip("\n").split(" ", 2)
    if kind == "lua":
        line, src, short = rest.split(" ")
        name = chunk(urllib.parse.unquote(src, encoding="latin-1"),
                     urllib.parse.unquote(short, encoding="latin-1"))
        if name != hookcount:
            want_lua[(name, int(line))] = int(n)
    else:
        want_lib[rest] = int(n)

def show(key):
    """A function's key for a message: long chunk names abridged."""
    name = "%s:%d" % key
    if len(name) <= 100:
        return name
    return "%s...%s (%d bytes)" % (name[:40], name[-30:], len(name))

got_lua, got_named, bad = {}, {}, []
for f in d["functions"]:
    if f["kind"] != "lua" or f["file"] == hookcount:
        continue
    key = (f["file"], f["line"])
    # Functions that share chunk:line differ by name ("NAME (chunk:line)"):
    # the hook counts them as one.
    named = f["name"].endswith(" (%s:%d)" % key) or (
        key[1] == 0 and f["name"].endswith("main chunk (%s)" % key[0]))
    if f["name"] in got_named.setdefault(key, set()):
        bad.append("two entries for %s" % show(key))
    got_named[key].add(f["name"])
    got_lua[key] = got_lua.get(key, 0) + f["calls"]
    if f["name"] != "%s:%d" % key and not named:
        bad.append("name %r, expected %r, NAME (%s) or main chunk (CHUNK)" % (show((f["name"], 0)), show(key), show(key)))
for key in sorted(set(want_lua) | set(got_lua)):
    w, g = want_lua.get(key), got_lua.get(key)
    if w != g and not (w is None and g == 0):
        bad.append("%s: hook counted %s calls, ljlog reports %s" % (show(key), w, g))

byname = {f["name"]: f for f in d["functions"]}
for name, w in sorted(want_lib.items()):
    f = byname.get(name)
    g = f["calls"] if f else None
    if f and f["kind"] not in ("c", "fast"):
        bad.append("%s: kind %r, expected c or fast" % (name, f["kind"]))
    if w != g:
        bad.append("%s: hook counted %s calls, ljlog reports %s" % (name, w, g))

want_co = 1 + want_lib.get("coroutine.create", 0) + want_lib.get("coroutine.wrap", 0)
for where, got in (("coroutines", d["coroutines"]),
                   ("vm_list[0].coroutines", d["vm_list"][0]["coroutines"])):
    if got != want_co:
        bad.append("%s: expected %d (main + create + wrap), got %s" % (where, want_co, got))
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print("ok: %s: %d Lua functions, exact counts (%d calls)"
      % (test, len(want_lua), sum(want_lua.values())))
print("ok: %s: library functions, exact counts: %s"
      % (test, ", ".join("%s=%d" % kv for kv in sorted(want_lib.items()))))
print("ok: %s: %d coroutines (main + coroutine.create + coroutine.wrap)" % (test, want_co))
PY
		fail "$prog: call counts differ from the hook's (see above)"
}

# -- Programs of another machine ---------------------------------------------------

# elf_machine FILE: FILE's ELF machine number (62 x86-64, 183 aarch64).
elf_machine() {
	od -An -tu2 -j18 -N2 "$1" 2>/dev/null | tr -d ' '
}

# foreign PROGRAM: 0 when PROGRAM (a path or a command) is built for
# another machine than ljlog's library: an arm64 build tested under
# qemu-user (scripts/arm64.sh) next to this machine's own programs. A
# library preloaded into it is not loaded ("cannot be preloaded").
foreign() {
	local p=$1
	case $p in */*) ;; *) p=$(command -v "$p") || return 1 ;; esac
	p=$(readlink -f "$p")
	[ "$(elf_machine "$p")" != "$(elf_machine "$top_builddir/.libs/libljlog.so")" ]
}

# emulated: 0 when ljlog's programs run under an emulator: built for
# another machine than the shell's (scripts/arm64.sh: qemu-user, where the
# sampler's helper thread, unwinding host stacks, runs about 20 times
# slower than the program's own code).
emulated() {
	foreign sh
}

# E2E_EMULATED: 1 under an emulator, 0 natively, for the tests' Python.
E2E_EMULATED=0
! emulated || E2E_EMULATED=1
export E2E_EMULATED

# Under qemu-user a run with calls (the JIT off) of a program the native
# build runs in 2 s took 105 s alone, and more beside other tests.
[ -n "$e2e_timeout_given" ] || ! emulated || E2E_TIMEOUT=600

# reduced: 0 when the long corpus tests run their smaller set: under an
# emulator, or in a pass that repeats the suite (LJLOG_E2E_REDUCED=1).
reduced() {
	[ "${LJLOG_E2E_REDUCED:-0}" = 1 ] || emulated
}

# -- The real programs (realprogs.sh, soak.sh) ----------------------------------

# modpath MODULE: where the installed luajit finds MODULE ('' if nowhere).
modpath() {
	"$LUAJIT" -e "print(package.searchpath('$1', package.path) or '')"
}

# realprogs_find: Debian's luacheck, LDoc and Penlight as the installed
# luajit finds them: sets lc_main, ldoc_mod, lc_bin, ldoc_bin (the scripts,
# resolved) and pl_dir; skips the test (77) when a package is missing. Then
# gives the test a private HOME (luacheck reads ~/.config/luacheck) and its
# own LDoc style sheet directory (/tmp/ldoc$HOME, '/' as '_'), removed at
# exit.
realprogs_find() {
	local pl_utils
	lc_main=$(modpath luacheck.main)
	ldoc_mod=$(modpath ldoc.doc)
	pl_utils=$(modpath pl.utils)
	lc_bin=$(command -v luacheck || true)
	ldoc_bin=$(command -v ldoc || true)
	if [ -z "$lc_main" ] || [ -z "$ldoc_mod" ] || [ -z "$pl_utils" ] ||
		[ -z "$lc_bin" ] || [ -z "$ldoc_bin" ]; then
		echo "SKIP: $test_name: needs Debian's lua-check, lua-ldoc and lua-penlight (scripts/setup.sh installs them)"
		exit 77
	fi
	lc_bin=$(readlink -f "$lc_bin")
	ldoc_bin=$(readlink -f "$ldoc_bin")
	grep -q 'luacheck.main' "$lc_bin" || fail "$lc_bin does not start luacheck.main"
	head -c 2000 "$ldoc_bin" | grep -q 'ldoc' || fail "$ldoc_bin is not LDoc's script"
	pl_dir=$(dirname "$pl_utils")
	export HOME=$T/home
	mkdir -p "$HOME"
	ldoc_tmp=/tmp/ldoc$(printf '%s' "$HOME" | tr '/\\: ' '____')
	trap 'rm -rf "$ldoc_tmp"; e2e_cleanup' EXIT
}

# realprogs_inputs: after realprogs_find, what luacheck and LDoc read in
# realprogs.sh, jitp.sh and alloc_lines.sh: lc_files, six of Penlight's
# files (one path per word), and LDoc's input $T/src/pl, a copy of twenty
# of them (its output goes to $T/doc; both made).
realprogs_inputs() {
	local f
	lc_files=
	for f in List class compat lexer path utils; do
		[ -f "$pl_dir/$f.lua" ] || fail "no $pl_dir/$f.lua in lua-penlight"
		lc_files="$lc_files $pl_dir/$f.lua"
	done
	mkdir -p "$T/src/pl" "$T/doc"
	for f in Date List Map MultiMap OrderedMap Set app array2d class compat \
		comprehension config data dir file func lapp lexer path pretty; do
		cp "$pl_dir/$f.lua" "$T/src/pl/" || fail "no $pl_dir/$f.lua in lua-penlight"
	done
}

# -- Export tools: Go's pprof, node with playwright-core, Chromium ----------------
# Tools that read our exports. They run without LJLOG_TEST_PRELOAD (that is
# for luajit runs only: an uninstrumented luajit loading an instrumented
# module) and without any LD_PRELOAD of the caller's.


# need_go: skip unless Go (go tool pprof) is installed.
need_go() {
	command -v go >/dev/null 2>&1 ||
		skip "needs Go for 'go tool pprof' (Debian golang-go; scripts/setup-tools.sh installs it)"
	mkdir -p "$T/go/home" "$T/go/cache" "$T/go/path"
}

# gotool ARGS...: `go ARGS` with a private HOME, GOCACHE and GOPATH in $T
# and no network (GOPROXY=off), with a time limit.
gotool() {
	env -u LD_PRELOAD HOME="$T/go/home" GOCACHE="$T/go/cache" \
		GOPATH="$T/go/path" GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local \
		timeout "$E2E_TIMEOUT" go "$@"
}

# pprof_script: $T/pprof, a script that runs `go tool pprof ARGS` as
# gotool does (pprof_check.py takes it as its PPROF_CMD).
pprof_script() {
	cat >"$T/pprof" <<EOF
#!/bin/sh
exec env -u LD_PRELOAD HOME="$T/go/home" GOCACHE="$T/go/cache" \
	GOPATH="$T/go/path" GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local \
	timeout "$E2E_TIMEOUT" go tool pprof "\$@"
EOF
	chmod +x "$T/pprof"
}

# need_browser: skip unless node, playwright-core (tests/tools/node_modules)
# and Chromium ($CHROMIUM, default /usr/bin/chromium) are there.
TOOLS_MODULES=$top_srcdir/tests/tools/node_modules
: "${CHROMIUM:=/usr/bin/chromium}"
need_browser() {
	TOOLS=$top_srcdir/tests/tools
	command -v node >/dev/null 2>&1 ||
		skip "needs node (scripts/setup-tools.sh installs it)"
	[ -d "$TOOLS_MODULES/playwright-core" ] ||
		skip "needs playwright-core in $TOOLS_MODULES (scripts/setup-tools.sh installs it)"
	[ -x "$CHROMIUM" ] ||
		skip "needs Chromium at $CHROMIUM (scripts/setup-tools.sh installs it)"
}

# need_speedscope: need_browser, and speedscope's built app in
# tests/tools/node_modules (scripts/setup-tools.sh installs it).
need_speedscope() {
	need_browser
	[ -d "$TOOLS_MODULES/speedscope/dist/release" ] ||
		skip "needs speedscope in $TOOLS_MODULES (scripts/setup-tools.sh installs it)"
}

# node_run ARGS...: node with tests/tools' modules, CHROMIUM set, a time
# limit.
node_run() {
	env -u LD_PRELOAD NODE_PATH="$TOOLS_MODULES" CHROMIUM="$CHROMIUM" \
		timeout "$E2E_TIMEOUT" node "$@"
}
