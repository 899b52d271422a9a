#!/usr/bin/env bash
# ljlog e2e: a privileged host is not turned against its owner. A set-user-ID
# root copy of luajit (with -lljlog) and of the C test host (linked with
# libljlog, whose preload attach reads LUAJIT_PROFILE), run by an
# unprivileged user the test creates, with LUAJIT_PROFILE=log:file=PATH and
# file=|COMMAND: the program runs unprofiled and says so once, no command
# runs, no file appears. The program's own ljlog.start{} / ljlog_attach
# still profile (the program asks for it, not its invoker).
# Runs where the suite runs as root (else skipped).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (to make set-user-ID copies and a user)"
# ThreadSanitizer's runtime may re-execute the program to change its
# address layout, which a set-user-ID program cannot do.
case ${LJLOG_TEST_PRELOAD:-} in
*tsan*) skip "set-user-ID programs under ThreadSanitizer (its runtime re-executes them)" ;;
esac
command -v useradd >/dev/null && command -v runuser >/dev/null ||
	skip "needs useradd and runuser"

user=ljlog-secure-test
made_user=0
if ! id -u "$user" >/dev/null 2>&1; then
	useradd --system --no-create-home --shell /usr/sbin/nologin "$user" ||
		fail "useradd $user failed"
	made_user=1
fi
[ "$(id -u "$user")" != 0 ] || fail "$user is root"
cleanup_user() { [ "$made_user" = 1 ] && userdel "$user" 2>/dev/null; }
trap 'cleanup_user; e2e_cleanup' EXIT

# The user reaches $T/d (traverse only above it); out/ is root's, 0755: only
# the set-user-ID process could write there.
chmod 711 "$T"
D=$T/d
mkdir -p "$D/lua" "$D/out"
chmod 755 "$D" "$D/lua" "$D/out"
lj=$(command -v "$LUAJIT")
cp "$lj" "$D/luajit-suid"
cp "$MODDIR/ljlog.so" "$D/lua/ljlog.so"
chmod 644 "$D/lua/ljlog.so"
chown root:root "$D/luajit-suid"
chmod 4755 "$D/luajit-suid"
as_user() { runuser -u "$user" -- env -u LD_PRELOAD "$@"; }

# Is set-user-ID in force here (not a nosuid mount)? The copy writes into
# out/, which the user alone cannot.
as_user LUA_CPATH="$D/lua/?.so;;" "$D/luajit-suid" \
	-e "assert(io.open('$D/out/probe', 'w')):close()" 2>"$T/probe.err" || true
[ -f "$D/out/probe" ] || skip "set-user-ID is not in force here: $(head -c 300 "$T/probe.err")"
rm -f "$D/out/probe"
as_user sh -c "echo x >'$D/out/probe'" 2>/dev/null && fail "the user can write $D/out: the test proves nothing"
ok "a set-user-ID root copy of luajit, run by $user, can write where $user cannot"

# nothing_written LABEL ERRFILE: no file in out/, one message on stderr.
nothing_written() {
	local left
	left=$(ls -A "$D/out")
	[ -z "$left" ] || fail "$1: files appeared in out/: $left"
	[ "$(grep -c 'secure-execution mode' "$2")" = 1 ] ||
		{ show "$2"; fail "$1: expected one line about secure-execution mode on stderr"; }
	grep -q 'LUAJIT_PROFILE ignored' "$2" || { show "$2"; fail "$1: the message does not say LUAJIT_PROFILE is ignored"; }
}

# The module's attach (luaopen_ljlog) reads LUAJIT_PROFILE. A sanitizer's
# runtime, preloaded for the instrumented module, is dropped by the dynamic
# linker for a set-user-ID program: that part runs in the plain pass.
if [ -z "$LJLOG_TEST_PRELOAD" ]; then
	for opt in "file=$D/out/root.ljlog" "file=|touch $D/out/ran"; do
		as_user LUA_CPATH="$D/lua/?.so;;" LUAJIT_PROFILE="log:$opt,calls" \
			"$D/luajit-suid" -lljlog -e 'print("ran")' >"$T/m.out" 2>"$T/m.err" ||
			{ show "$T/m.err"; fail "luajit -lljlog ($opt) failed"; }
		[ "$(cat "$T/m.out")" = ran ] || fail "luajit -lljlog ($opt): output changed: $(cat "$T/m.out")"
		nothing_written "luajit -lljlog, LUAJIT_PROFILE=log:$opt" "$T/m.err"
		echo "  stderr: $(cat "$T/m.err")"
	done
	ok "set-user-ID luajit -lljlog: LUAJIT_PROFILE (file=PATH, file=|COMMAND) ignored, one line, output unchanged"

	# The program's own request stays.
	as_user LUA_CPATH="$D/lua/?.so;;" LUAJIT_PROFILE="log:file=|touch $D/out/ran" \
		"$D/luajit-suid" -e "
		local ljlog = require('ljlog')
		assert(ljlog.start({ file = '$D/out/api.ljlog', calls = true }))
		local function f() return 1 end
		for _ = 1, 10 do f() end
		ljlog.stop()" >"$T/a.out" 2>"$T/a.err" || { show "$T/a.err"; fail "ljlog.start in a set-user-ID luajit failed"; }
	[ ! -e "$D/out/ran" ] || fail "the command of LUAJIT_PROFILE ran"
	check_complete "$D/out/api.ljlog"
	ok "set-user-ID luajit: the program's own ljlog.start{} still writes its log"
	rm -f "$D/out/api.ljlog"
else
	ok "(set-user-ID luajit -lljlog left out under a sanitizer: the dynamic linker drops its preloaded runtime)"
fi

# The C host links libljlog: its lua_newstate is ljlog's preload attach.
cp "$HOST" "$D/host-suid"
chown root:root "$D/host-suid"
chmod 4755 "$D/host-suid"
echo 'local function f() return 1 end for _ = 1, 10 do f() end print("ran")' >"$D/s.lua"
chmod 644 "$D/s.lua"
# Does this host's lua_newstate go through libljlog's preload attach? Not
# when the linker put LuaJIT's library first (the luajit2 build): then
# there is nothing here to turn against its owner.
LUAJIT_PROFILE="log:file=$T/ctl.ljlog,calls" "$HOST" --script "$D/s.lua" >/dev/null 2>&1 ||
	fail "the host failed unprofiled"
if [ ! -s "$T/ctl.ljlog" ]; then
	ok "(set-user-ID host with LUAJIT_PROFILE left out: this host's VMs do not go through libljlog's lua_newstate, so LUAJIT_PROFILE does nothing here even without set-user-ID)"
else
	for opt in "file=$D/out/host.ljlog" "file=|touch $D/out/ran"; do
		as_user LUAJIT_PROFILE="log:$opt,calls" "$D/host-suid" --script "$D/s.lua" \
			>"$T/h.out" 2>"$T/h.err" || { show "$T/h.err"; fail "the host ($opt) failed"; }
		grep -q '^ran' "$T/h.out" || { show "$T/h.out"; fail "the host ($opt): the script did not run"; }
		nothing_written "set-user-ID host, LUAJIT_PROFILE=log:$opt" "$T/h.err"
	done
	ok "set-user-ID host linked with libljlog: LUAJIT_PROFILE ignored (preload attach), one line"
fi

as_user LUAJIT_PROFILE="log:file=|touch $D/out/ran" "$D/host-suid" --script "$D/s.lua" \
	--options "file=$D/out/host-api.ljlog,calls" >"$T/h.out" 2>"$T/h.err" ||
	{ show "$T/h.err"; fail "the host with --options failed"; }
[ ! -e "$D/out/ran" ] || fail "the command of LUAJIT_PROFILE ran"
check_complete "$D/out/host-api.ljlog"
ok "set-user-ID host: its own ljlog_attach still writes its log"
