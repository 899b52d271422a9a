#!/usr/bin/env bash
# ljlog e2e: two real hosts that link LuaJIT dynamically (Debian's sysbench
# and knot-resolver's kresd), profiled by preload (man ljlog "PRELOAD"):
# LD_PRELOAD=libljlog.so and LUAJIT_PROFILE, nothing of ljlog in their
# scripts. Each runs with calls and with sample=1ms (JIT on). Checked:
#   - the output is the unprofiled run's (sysbench: but for its timing
#     lines; kresd: the answers to every query, its stdout and stderr, its
#     exit status after SIGTERM), but for ljlog's note that calls turned
#     the JIT off;
#   - the log is complete (`ljlog check`), with 3 VMs for sysbench (the
#     main thread's and one per worker thread) and 1 for kresd;
#   - calls: the exact call counts of the test functions, from the events
#     or queries sent and the constants of hosts_sysbench.lua and
#     hosts_kresd.conf; each named as `NAME (chunk:line)`, kresd's
#     worker.stats by its table path;
#   - sample: samples in the test chunk;
#   - last, separately ("names in sample-only logs", issue 24): in the
#     sample logs the hot test functions are named as in the calls logs,
#     Lua functions `NAME (chunk:line)`, C functions by table path
#     (`table.sort`, `worker.stats`), each message naming what was
#     expected and found.
# kresd: 127.0.0.1 on a free port, its cache and control socket in a temp
# rundir, no upstream (tests/e2e/hosts_kresd.conf answers every query
# itself); queries from a small python3 UDP client, one at a time; stopped
# by SIGTERM (kresd exits 0 and closes its Lua state: the log's END).
# Skips (77) unless sysbench and kresd are installed (Debian's sysbench,
# knot-resolver; scripts/setup-tools.sh installs them) and link
# libluajit-5.1.so.2, and unless ljlog is built for that LuaJIT (not for
# OpenResty's: build-lj2/).
. "$(dirname "$0")/lib.sh"

grep -q '^#define LJLOG_LUAJIT_OPENRESTY 1' "$top_builddir/config.h" 2>/dev/null &&
	skip "ljlog is built for OpenResty's LuaJIT; sysbench and kresd run Debian's"

lib=$top_builddir/.libs/libljlog.so
[ -e "$lib" ] || fail "no $lib"
SYSBENCH=${SYSBENCH:-$(command -v sysbench || true)}
KRESD=${KRESD:-$(command -v kresd || echo /usr/sbin/kresd)}
missing=
[ -n "$SYSBENCH" ] && [ -x "$SYSBENCH" ] || missing="sysbench (Debian sysbench)"
[ -x "$KRESD" ] || missing="${missing:+$missing and }kresd (Debian knot-resolver)"
[ -z "$missing" ] || skip "needs $missing"
for b in "$SYSBENCH" "$KRESD"; do
	! foreign "$b" || skip "$b is an $(uname -m) program and libljlog.so is built for another machine"
	ldd "$b" 2>/dev/null | grep -q 'libluajit-5\.1\.so\.2 => /' ||
		skip "$b does not link libluajit-5.1.so.2 dynamically"
done

sb_script=$E2E/hosts_sysbench.lua
kr_conf=$E2E/hosts_kresd.conf
sb_calls_events=1000 # events of the calls run (JIT off, every call logged)
sb_sample_events=30000 # of the sample run: about 1 s of CPU, ~250 samples
kr_calls_queries=1000
kr_calls_rounds=60 # HOSTS_KRESD_ROUNDS: mix calls per query
# Fewer queries with more work each: kresd ping-pongs with the client, and
# on a loaded machine its CPU time comes in short slices that the kernel's
# CPU-time timers sample rarely (ljlog weighs each sample by its intervals).
kr_sample_queries=1500
kr_sample_rounds=6000

# preloaded CMD...: CMD with the sanitizer runtime (if any) and libljlog.so
# preloaded, with a time limit.
preloaded() {
	timeout "$E2E_TIMEOUT" env LD_PRELOAD="${LJLOG_TEST_PRELOAD:+$LJLOG_TEST_PRELOAD }$lib" "$@"
}

# lua_line FILE PATTERN: the line of FILE's first line matching PATTERN.
lua_line() {
	local n
	n=$(grep -n -m 1 -- "$2" "$1" | cut -d: -f1)
	[ -n "$n" ] || fail "no line matching '$2' in $1"
	echo "$n"
}

# lua_const FILE NAME: the number in FILE's line `[local ]NAME = NUMBER`.
lua_const() {
	local v
	v=$(sed -n "s/^\(local \)\{0,1\}$2 = \([0-9][0-9]*\).*/\2/p" "$1" | head -n 1)
	[ -n "$v" ] || fail "no '$2 = NUMBER' in $1"
	echo "$v"
}

# same_stderr LABEL PLAIN PROFILED: PROFILED's stderr, without ljlog's
# note that calls turned the JIT off, is PLAIN's.
same_stderr() {
	grep -v "^ljlog: calls: turned the JIT compiler off" "$3" >"$3.cmp" || true
	cmp -s "$2" "$3.cmp" ||
		{ show "$2" "unprofiled stderr"; show "$3" "profiled stderr"; fail "[$1] stderr differs from the unprofiled run's"; }
}

# fn_calls JSON CHUNK LINE: calls of the Lua function at CHUNK:LINE.
fn_calls() {
	json_get "$1" "sum(f['calls'] for f in d['functions'] if f['kind'] == 'lua' and f['file'] == '$2' and f['line'] == $3)"
}

# fn_name JSON CHUNK LINE: the name of the Lua function at CHUNK:LINE
# ('(absent)' if the log has none).
fn_name() {
	json_get "$1" "([f['name'] for f in d['functions'] if f['kind'] == 'lua' and f['file'] == '$2' and f['line'] == $3] or ['(absent)'])[0]"
}

# c_calls JSON NAME: calls of the C or fast function named NAME.
c_calls() {
	json_get "$1" "sum(f['calls'] for f in d['functions'] if f['kind'] in ('c', 'fast') and f['name'] == '$2')"
}

# calls_named LABEL JSON CHUNK LINE NAME WANT: the Lua function at
# CHUNK:LINE is `NAME (CHUNK:LINE)` and called WANT times.
calls_named() {
	expect_eq "[$1] name of the function at $3:$4" "$5 ($3:$4)" "$(fn_name "$2" "$3" "$4")"
	expect_eq "[$1] calls of $5 ($3:$4)" "$6" "$(fn_calls "$2" "$3" "$4")"
}

# Names in the sample logs are checked last (see the end): the checks that
# pass today come first. Each entry: LABEL|JSON|CALLSJSON|lua|CHUNK|LINE|NAME
# or LABEL|JSON|CALLSJSON|c|NAME.
name_checks=$T/name_checks
: >"$name_checks"

# ============================== sysbench ==============================
# sysbench_run OUT [PROFILE]: the test script with 2 threads and a bounded
# number of events (EVENTS), preloaded with LUAJIT_PROFILE=PROFILE when
# given; OUT.out, OUT.err; fails unless sysbench exits 0.
sysbench_run() {
	local out=$1 prof=${2:-} rc=0
	if [ -n "$prof" ]; then
		LUAJIT_PROFILE=$prof preloaded "$SYSBENCH" "$sb_script" \
			--threads=2 --events="$EVENTS" --time=0 run >"$out.out" 2>"$out.err" || rc=$?
	else
		timeout "$E2E_TIMEOUT" "$SYSBENCH" "$sb_script" \
			--threads=2 --events="$EVENTS" --time=0 run >"$out.out" 2>"$out.err" || rc=$?
	fi
	[ "$rc" -eq 0 ] || { show "$out.err"; show "$out.out"; fail "sysbench ${prof:+(profiled: $prof) }exited with status $rc"; }
}

# sysbench_filtered OUT: OUT.out without its timing lines, sorted (the
# worker threads' lines may come before sysbench's "Threads started!" on a
# loaded machine).
sysbench_filtered() {
	grep -v -E '^ *(total time|min|avg|max|95th percentile|sum|events \(avg/stddev\)|execution time \(avg/stddev\)):' \
		"$1.out" | sort
}

# sysbench_mode LABEL OPTIONS: an unprofiled and a profiled run with
# LUAJIT_PROFILE=log:file=$T/sb-LABEL.ljlog,OPTIONS of EVENTS events; same
# output, complete log, 3 VMs; leaves $T/sb-LABEL.json.
sysbench_mode() {
	local label=sysbench/$1 log=$T/sb-$1.ljlog
	sysbench_run "$T/sb-$1-plain"
	sysbench_run "$T/sb-$1" "log:file=$log,$2"
	grep -qx "    total number of events: *$EVENTS" "$T/sb-$1-plain.out" ||
		{ show "$T/sb-$1-plain.out"; fail "[$label] the unprofiled run did not make $EVENTS events"; }
	[ "$(grep -c '^hosts_sysbench: thread done, every result right$' "$T/sb-$1.out")" -eq 2 ] ||
		{ show "$T/sb-$1.out"; fail "[$label] expected 2 lines 'hosts_sysbench: thread done, every result right'"; }
	sysbench_filtered "$T/sb-$1-plain" >"$T/sb-$1-plain.cmp"
	sysbench_filtered "$T/sb-$1" >"$T/sb-$1.cmp"
	cmp -s "$T/sb-$1-plain.cmp" "$T/sb-$1.cmp" ||
		{ diff "$T/sb-$1-plain.cmp" "$T/sb-$1.cmp" >&2; fail "[$label] the output differs from the unprofiled run's (timing lines left out)"; }
	same_stderr "$label" "$T/sb-$1-plain.err" "$T/sb-$1.err"
	check_complete "$log"
	report_json "$log" "$T/sb-$1.json"
	expect_eq "[$label] VMs in the log (main thread + 2 worker threads)" 3 "$(json_get "$T/sb-$1.json" 'd["vms"]')"
	ok "[$label] $EVENTS events, 2 threads: same output as unprofiled, complete log, 3 VMs"
}

fib_n=$(lua_const "$sb_script" FIB_N)
steps=$(lua_const "$sb_script" STEPS)
fib_calls=$(python3 -c "
a, b = 0, 1
for _ in range($fib_n + 1): a, b = b, a + b
print(2 * a - 1)") # fib(n) makes 2*fib(n+1)-1 calls
l_fib=$(lua_line "$sb_script" '^local function fib(')
l_less=$(lua_line "$sb_script" '^local function less(')
l_step=$(lua_line "$sb_script" '^function M\.step(')
l_work=$(lua_line "$sb_script" '^function work(')
l_event=$(lua_line "$sb_script" '^function event(')

# -- sysbench, calls --
EVENTS=$sb_calls_events
sysbench_mode calls calls
j=$T/sb-calls.json
calls_named sysbench/calls "$j" "$sb_script" "$l_event" event "$EVENTS"
calls_named sysbench/calls "$j" "$sb_script" "$l_work" work "$EVENTS"
calls_named sysbench/calls "$j" "$sb_script" "$l_step" M.step $((EVENTS * steps))
calls_named sysbench/calls "$j" "$sb_script" "$l_fib" fib $((EVENTS * fib_calls))
expect_eq "[sysbench/calls] name of the function at $sb_script:$l_less" "less ($sb_script:$l_less)" "$(fn_name "$j" "$sb_script" "$l_less")"
expect_eq "[sysbench/calls] calls of table.sort" $((EVENTS * steps)) "$(c_calls "$j" table.sort)"
g=$(c_calls "$j" string.gsub)
[ "$g" -ge $((EVENTS * steps)) ] || fail "[sysbench/calls] calls of string.gsub: expected at least $((EVENTS * steps)), got $g"
ok "[sysbench/calls] exact counts: event, work $EVENTS, M.step, table.sort $((EVENTS * steps)), fib $((EVENTS * fib_calls)) ($fib_calls per event), named NAME (chunk:line)"

# -- sysbench, sample --
EVENTS=$sb_sample_events
sysbench_mode sample sample=1ms
j=$T/sb-sample.json
s=$(json_get "$j" "sum(f['samples'] for f in d['functions'] if f['kind'] == 'lua' and f['file'] == '$sb_script')")
[ "$s" -gt 0 ] || fail "[sysbench/sample] no sample in $sb_script's functions"
ok "[sysbench/sample] $(json_get "$j" 'd["samples"]') samples, $s in $sb_script's functions"
for e in "$l_fib fib" "$l_less less" "$l_step M.step" "$l_work work" "$l_event event"; do
	echo "sysbench/sample|$j|$T/sb-calls.json|lua|$sb_script|${e% *}|${e#* }" >>"$name_checks"
done
for c in table.sort string.gsub; do
	echo "sysbench/sample|$j|$T/sb-calls.json|c|$c" >>"$name_checks"
done

# ============================== kresd ==============================
# The DNS client: `ready PORT` exits 0 once a query for ready.invalid. is
# refused (kresd answers), `run PORT N` sends N A queries for
# q0..q199.hosts.test., one at a time (10 s each at most, no retry), and
# prints one line per answer.
cat >"$T/dnsq.py" <<'EOF'
import socket, struct, sys

def query(sock, port, qid, name):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    q += b"\0" + struct.pack(">HH", 1, 1)
    sock.sendto(q, ("127.0.0.1", port))
    while True:
        r = sock.recv(4096)
        if len(r) >= 12 and struct.unpack(">H", r[:2])[0] == qid:
            break
    flags, _, an = struct.unpack(">HHH", r[2:8])
    rcode = flags & 15
    ip = ".".join(str(b) for b in r[-4:]) if rcode == 0 and an >= 1 else "-"
    return rcode, an, ip

mode, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if mode == "port":
    # A port free for UDP and TCP on 127.0.0.1.
    for _ in range(50):
        s.bind(("127.0.0.1", 0))
        p = s.getsockname()[1]
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            t.bind(("127.0.0.1", p))
            print(p)
            sys.exit(0)
        except OSError:
            s.close()
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        finally:
            t.close()
    sys.exit(1)
if mode == "ready":
    s.settimeout(0.5)
    try:
        rcode, _, _ = query(s, port, 1, "ready.invalid")
    except OSError:
        sys.exit(1)
    sys.exit(0 if rcode == 5 else 2)
s.settimeout(10)
for i in range(int(sys.argv[3])):
    name = "q%d.hosts.test" % (i % 200)
    try:
        rcode, an, ip = query(s, port, i % 65535 + 1, name)
    except OSError as e:
        sys.exit("query %d (%s): %s" % (i + 1, name, e))
    print("%s rcode %d answers %d %s" % (name, rcode, an, ip))
EOF

KR_PID=
trap '[ -n "$KR_PID" ] && kill -9 "$KR_PID" 2>/dev/null; e2e_cleanup' EXIT

# kresd_run OUT QUERIES ROUNDS [PROFILE]: kresd in the foreground (in the
# background of this shell) on a free port of 127.0.0.1, in the rundir
# OUT.run, preloaded with LUAJIT_PROFILE=PROFILE when given; once it
# answers, QUERIES queries (OUT.answers), then SIGTERM; fails unless it
# exits 0. OUT.out, OUT.err: its stdout and stderr.
kresd_run() {
	local out=$1 n=$2 rounds=$3 prof=${4:-} port rc
	port=$(timeout 30 python3 "$T/dnsq.py" port 0) || fail "no free port on 127.0.0.1"
	rm -rf "$out.run" "$out.rc" "$out.pid"
	mkdir "$out.run"
	(
		set +e
		sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$out.pid" \
			env ${prof:+LUAJIT_PROFILE="$prof"} \
			${prof:+LD_PRELOAD="${LJLOG_TEST_PRELOAD:+$LJLOG_TEST_PRELOAD }$lib"} \
			HOSTS_KRESD_PORT="$port" HOSTS_KRESD_ROUNDS="$rounds" \
			"$KRESD" -n -c "$kr_conf" "$out.run" </dev/null >"$out.out" 2>"$out.err"
		echo $? >"$out.rc"
	) &
	wait_for 30 test -s "$out.pid" || fail "kresd did not start"
	KR_PID=$(cat "$out.pid")
	# Up to 60 s for kresd to answer (loading its modules and the config,
	# under ljlog, on a loaded machine), unless it exits first.
	kresd_up() {
		[ -e "$out.rc" ] || python3 "$T/dnsq.py" ready "$port"
	}
	wait_for 60 kresd_up || { show "$out.err"; fail "kresd${prof:+ (profiled: $prof)} did not answer on 127.0.0.1:$port within 60 s"; }
	[ -e "$out.rc" ] && { show "$out.err"; fail "kresd${prof:+ (profiled: $prof)} exited with status $(cat "$out.rc") before answering"; }
	timeout "$E2E_TIMEOUT" python3 "$T/dnsq.py" run "$port" "$n" >"$out.answers" 2>"$out.qerr" ||
		{ show "$out.qerr"; show "$out.err"; fail "the DNS client failed against kresd${prof:+ (profiled: $prof)}"; }
	kill -TERM "$KR_PID" || fail "kresd $KR_PID is gone before SIGTERM"
	wait_for 60 test -s "$out.rc" || { show "$out.err"; fail "kresd did not exit within 60 s of SIGTERM"; }
	KR_PID=
	rc=$(cat "$out.rc")
	[ "$rc" -eq 0 ] || { show "$out.err"; fail "kresd${prof:+ (profiled: $prof)} exited with status $rc after SIGTERM, expected 0"; }
}

# kresd_mode LABEL OPTIONS QUERIES ROUNDS: an unprofiled and a profiled run
# with LUAJIT_PROFILE=log:file=$T/kr-LABEL.ljlog,OPTIONS; the same answers,
# all NOERROR with one address, the same stdout and stderr, a complete log
# with 1 VM; leaves $T/kr-LABEL.json.
kresd_mode() {
	local label=kresd/$1 log=$T/kr-$1.ljlog
	kresd_run "$T/kr-$1-plain" "$3" "$4"
	kresd_run "$T/kr-$1" "$3" "$4" "log:file=$log,$2"
	expect_eq "[$label] NOERROR answers with one address (unprofiled)" "$3" \
		"$(grep -c '^q[0-9]*\.hosts\.test rcode 0 answers 1 198\.51\.100\.[0-9]*$' "$T/kr-$1-plain.answers")"
	cmp -s "$T/kr-$1-plain.answers" "$T/kr-$1.answers" ||
		{ diff "$T/kr-$1-plain.answers" "$T/kr-$1.answers" | head -n 20 >&2; fail "[$label] the answers differ from the unprofiled run's"; }
	cmp -s "$T/kr-$1-plain.out" "$T/kr-$1.out" ||
		{ show "$T/kr-$1-plain.out" "unprofiled stdout"; show "$T/kr-$1.out" "profiled stdout"; fail "[$label] kresd's stdout differs from the unprofiled run's"; }
	same_stderr "$label" "$T/kr-$1-plain.err" "$T/kr-$1.err"
	check_complete "$log"
	report_json "$log" "$T/kr-$1.json"
	expect_eq "[$label] VMs in the log" 1 "$(json_get "$T/kr-$1.json" 'd["vms"]')"
	ok "[$label] $3 queries: the same answers as unprofiled, exit 0 after SIGTERM, complete log, 1 VM"
}

stats_calls=$(lua_const "$kr_conf" STATS_CALLS)
l_mix=$(lua_line "$kr_conf" '^local function mix(')
l_answer=$(lua_line "$kr_conf" '^function H\.answer(')
l_rule=$(lua_line "$kr_conf" '^function hosts_rule(')

# -- kresd, calls --
q=$kr_calls_queries
kresd_mode calls calls "$q" "$kr_calls_rounds"
j=$T/kr-calls.json
calls_named kresd/calls "$j" "$kr_conf" "$l_answer" H.answer "$q"
calls_named kresd/calls "$j" "$kr_conf" "$l_mix" mix $((q * kr_calls_rounds))
expect_eq "[kresd/calls] name of the function at $kr_conf:$l_rule" "hosts_rule ($kr_conf:$l_rule)" "$(fn_name "$j" "$kr_conf" "$l_rule")"
r=$(fn_calls "$j" "$kr_conf" "$l_rule")
[ "$r" -ge "$q" ] || fail "[kresd/calls] calls of hosts_rule: expected at least $q (one per query), got $r"
expect_eq "[kresd/calls] calls of worker.stats" $((q * stats_calls)) "$(c_calls "$j" worker.stats)"
expect_eq "[kresd/calls] object of worker.stats" "$KRESD" \
	"$(json_get "$j" "[f['file'] for f in d['functions'] if f['name'] == 'worker.stats'][0]")"
ok "[kresd/calls] exact counts: H.answer $q, mix $((q * kr_calls_rounds)), worker.stats $((q * stats_calls)) ([kresd]); hosts_rule $r (queries and readiness probes)"

# -- kresd, sample --
q=$kr_sample_queries
kresd_mode sample sample=1ms "$q" "$kr_sample_rounds"
j=$T/kr-sample.json
s=$(json_get "$j" "sum(f['samples'] for f in d['functions'] if f['kind'] == 'lua' and f['file'] == '$kr_conf')")
[ "$s" -gt 0 ] || fail "[kresd/sample] no sample in $kr_conf's functions"
ok "[kresd/sample] $(json_get "$j" 'd["samples"]') samples, $s in $kr_conf's functions"
for e in "$l_mix mix" "$l_answer H.answer" "$l_rule hosts_rule"; do
	echo "kresd/sample|$j|$T/kr-calls.json|lua|$kr_conf|${e% *}|${e#* }" >>"$name_checks"
done
echo "kresd/sample|$j|$T/kr-calls.json|c|worker.stats" >>"$name_checks"

# ===================== names in sample-only logs =====================
# Every hot test function, with samples in the sample log, named as in the
# calls log: sysbench's script and kresd's config ran their chunks before
# their functions were sampled (their names come from the chunk's bytecode
# when it was freed, or from a look through the VM), and kresd's C
# function worker.stats has no symbol (only a table names it).
# ThreadSanitizer runs a signal handler late, at the next call it
# intercepts, which LuaJIT's machine code never makes: under it the
# samples land elsewhere, and which functions have them means nothing.
case $LJLOG_TEST_PRELOAD in
*tsan*)
	ok "names in sample-only logs: not checked under ThreadSanitizer (samples land late)"
	exit 0
	;;
esac
python3 - "$name_checks" "$test_name" <<'PY' || fail "names in sample-only logs: see the lines above"
import json, sys
checks, test = sys.argv[1:]
cache = {}
def load(p):
    if p not in cache:
        cache[p] = json.load(open(p))["functions"]
    return cache[p]
bad = 0
for row in open(checks):
    f = row.rstrip("\n").split("|")
    label, js, calls_js, kind = f[:4]
    fns = load(js)
    if kind == "lua":
        chunk, line, name = f[4], int(f[5]), f[6]
        want = "%s (%s:%d)" % (name, chunk, line)
        got = [x for x in fns if x["kind"] == "lua" and x["file"] == chunk and x["line"] == line]
        if not got:
            print("FAIL: %s: [%s] expected %r with samples; found no function at %s:%d"
                  % (test, label, want, chunk, line), file=sys.stderr)
            bad += 1
        elif got[0]["name"] != want or got[0]["samples_total"] == 0:
            print("FAIL: %s: [%s] expected %r with samples; found %r (%d samples, %d self)"
                  % (test, label, want, got[0]["name"], got[0]["samples_total"], got[0]["samples"]), file=sys.stderr)
            bad += 1
        else:
            print("ok: %s: [%s] %r (%d samples)" % (test, label, want, got[0]["samples_total"]))
    else:
        want = f[4]
        got = [x for x in fns if x["name"] == want and x["samples_total"] > 0]
        if got:
            print("ok: %s: [%s] C function %r (%d samples)" % (test, label, want, got[0]["samples_total"]))
            continue
        # What the sample log has instead: the sampled C functions of the
        # object the calls log names for it.
        obj = [x["file"] for x in load(calls_js) if x["name"] == want]
        cand = sorted((x for x in fns if obj and x["kind"] == "c" and x["file"] == obj[0]
                       and x["samples_total"] > 0), key=lambda x: -x["samples_total"])
        found = ", ".join("%r (%d samples)" % (x["name"], x["samples_total"]) for x in cand[:3])
        print("FAIL: %s: [%s] expected C function %r with samples; found %s"
              % (test, label, want, ("in [%s]: %s" % (obj[0], found)) if found
                 else "no sampled C function of its object %s" % (obj[0] if obj else "(not in the calls log)")),
              file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
PY
ok "names in sample-only logs: every hot test function named as in the calls logs"
