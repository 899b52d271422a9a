#!/usr/bin/env bash
# ljlog e2e: a real server profiled by preload (man ljlog "PRELOAD", "FORK").
# Debian's nginx with lua-nginx-module on luajit2 (OpenResty's LuaJIT,
# unpacked privately into tests/tools/nginx-lua by scripts/setup-tools.sh)
# runs with LD_PRELOAD=libljlog.so and LUAJIT_PROFILE=log:file=w-%p.ljlog:
# its configuration has nothing of ljlog, only its own handler. Requests go
# over the loopback with curl, bounded in number and time; every response
# names the worker that served it (ngx.worker.pid()), which is the
# independent count. Checked:
#   - each worker (and the master, and the process nginx started as before
#     it became a daemon) writes a log of its own, named by its pid, whose
#     INTRO has that pid; after a graceful quit (SIGQUIT) every log passes
#     `ljlog check` (complete, END);
#   - in each worker's log, handle's calls equal the responses that worker
#     sent; over all workers they equal the requests sent (calls: the JIT is
#     off, as ljlog does by default);
#   - `ljlog dump --follow` on a worker's log shows EVENTS blocks while the
#     worker serves, before the quit;
#   - with sample=1ms, the workers' logs have samples, some in busy();
#   - preloaded without LUAJIT_PROFILE, nginx serves and no log is written.
# Skips (77) unless ljlog is built for OpenResty's LuaJIT (config.h's
# LJLOG_LUAJIT_OPENRESTY) and nginx, curl and the private module are there.
. "$(dirname "$0")/lib.sh"

grep -q '^#define LJLOG_LUAJIT_OPENRESTY 1' "$top_builddir/config.h" 2>/dev/null ||
	skip "ljlog is built for LuaJIT, not OpenResty's LuaJIT that nginx's lua module runs on (configure --with-luajit-src=third_party/luajit2-src)"
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
[ -x "$NGINX" ] || skip "needs nginx (Debian nginx-light; scripts/setup-tools.sh installs it)"
command -v curl >/dev/null 2>&1 || skip "needs curl (scripts/setup-tools.sh installs it)"
NGXLUA=$top_srcdir/tests/tools/nginx-lua
luamod=$NGXLUA/usr/lib/nginx/modules/ngx_http_lua_module.so
ndkmod=$NGXLUA/usr/lib/nginx/modules/ndk_http_module.so
ljdir=$NGXLUA/usr/lib/x86_64-linux-gnu
resty=$NGXLUA/usr/share/lua/5.1
for f in "$luamod" "$ndkmod" "$ljdir/libluajit-5.1.so.2" "$resty/resty/core.lua"; do
	[ -e "$f" ] || skip "needs nginx's lua module on luajit2 in tests/tools/nginx-lua (scripts/setup-tools.sh unpacks it): no $f"
done
lib=$top_builddir/.libs/libljlog.so
[ -e "$lib" ] || fail "no $lib"

nreq=200 # requests of the counted run
# The site (tests/e2e/nginx_site.sh): the handler and the server's own
# configuration, nothing of ljlog; as root the workers run as nobody and
# write their logs into $T/logs.
. "$E2E/nginx_site.sh"
nginx_site "$T" "$NGXLUA"

MASTER=
WORKERS=

# Stop a server left running (a failed check): its master and workers.
ngx_kill() {
	local p
	for p in $MASTER $WORKERS; do
		kill -9 "$p" 2>/dev/null
	done
}
trap 'ngx_kill; e2e_cleanup' EXIT

# ngx_start LABEL [PROFILE]: start nginx (a daemon) preloaded, with
# LUAJIT_PROFILE=PROFILE when given; sets MASTER and WORKERS (from the
# error log's "start worker process PID").
ngx_start() {
	local label=$1 rc=0 prof=${2:-}
	rm -f "$T/nginx.pid"
	: >"$T/error.log"
	env ${prof:+LUAJIT_PROFILE="$prof"} \
		LD_PRELOAD="${LJLOG_TEST_PRELOAD:+$LJLOG_TEST_PRELOAD }$lib" \
		LD_LIBRARY_PATH="$ljdir" \
		timeout "$E2E_TIMEOUT" "$NGINX" -p "$T" -c "$T/nginx.conf" -e "$T/error.log" \
		>"$T/start.out" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || { show "$T/start.out"; show "$T/error.log"; fail "[$label] nginx did not start (status $rc)"; }
	wait_for 30 test -s "$T/nginx.pid" || { show "$T/error.log"; fail "[$label] no pid file"; }
	MASTER=$(cat "$T/nginx.pid")
	two_workers() { [ "$(grep -c 'start worker process [0-9]' "$T/error.log")" -ge 2 ]; }
	wait_for 30 two_workers || { show "$T/error.log"; fail "[$label] nginx started no 2 workers"; }
	WORKERS=$(sed -n 's/.*start worker process \([0-9]*\).*/\1/p' "$T/error.log" | sort -n | tr '\n' ' ')
	track_pid "$MASTER"
	grep -q 'running unprofiled' "$T/start.out" "$T/error.log" &&
		{ show "$T/start.out"; show "$T/error.log"; fail "[$label] ljlog did not attach"; }
	return 0
}

# ngx_quit LABEL: graceful quit (SIGQUIT to the master); wait for the
# master and the workers to be gone.
ngx_quit() {
	local p
	kill -QUIT "$MASTER" || fail "[$1] the master $MASTER is gone before the quit"
	gone() {
		for p in $MASTER $WORKERS; do
			kill -0 "$p" 2>/dev/null && return 1
		done
		return 0
	}
	wait_for 60 gone || { show "$T/error.log"; fail "[$1] nginx did not quit within 60 s"; }
	MASTER= WORKERS=
}

# requests N WORK OUT: N requests (8 at a time, new connections, 10 s
# each at most) with ?work=WORK; the response lines appended to OUT; fails
# unless all N came back.
requests() {
	local n=$1 work=$2 out=$3 before
	before=$(wc -l <"$out" 2>/dev/null || echo 0)
	seq "$n" | timeout "$E2E_TIMEOUT" xargs -P 8 -n 25 sh -c '
		for i; do printf "url = \"http://127.0.0.1:'"$port"'/?work='"$work"'&i=%s\"\n" "$i"; done |
		curl -sS -m 10 -H "Connection: close" -K - ' sh >>"$out" 2>"$T/curl.err" ||
		{ show "$T/curl.err"; fail "curl failed"; }
	expect_eq "responses to $n requests" "$n" $(($(wc -l <"$out") - before))
}

# calls_of LOG: handle's calls in LOG (0 when absent).
calls_of() {
	report_json "$1" "$T/r.json"
	json_get "$T/r.json" "sum(f['calls'] for f in d['functions'] if f['kind'] == 'lua' and f['file'].endswith('handler.lua') and f['line'] == 11)"
}

# logs_ok LABEL PREFIX: after the quit, the master and every worker have a
# log ($T/logs/PREFIX-PID.ljlog).
logs_ok() {
	local p
	for p in $master $started_workers; do
		[ -e "$T/logs/$2-$p.ljlog" ] || { ls -l "$T/logs" >&2; fail "[$1] no log of process $p ($2-$p.ljlog)"; }
	done
}

# -- Calls: per worker and in all ---------------------------------------------------
ngx_start calls "log:file=$T/logs/w-%p.ljlog,calls,flush=100ms"
started_workers=$WORKERS master=$MASTER
: >"$T/resp"
requests "$nreq" 0 "$T/resp"

# dump --follow on a worker's log while requests are served: a background
# stream of requests (bounded: at most 2000, stopped once blocks are seen).
# A worker that served and has a log: it is opened at the worker's first
# write, at its first event once flush=100ms has passed since the master's
# last flush (the child inherits that time): a worker that served only
# within those 100 ms writes at its next request. Up to 40 more rounds.
w1=
for _ in $(seq 40); do
	for p in $(sed -n 's/^pid \([0-9]*\) .*/\1/p' "$T/resp" | sort -u); do
		[ -e "$T/logs/w-$p.ljlog" ] && { w1=$p; break; }
	done
	[ -n "$w1" ] && break
	sleep 0.1
	requests 8 0 "$T/resp"
done
[ -n "$w1" ] || { ls -l "$T/logs" >&2; fail "no worker that served has a log after 40 more rounds of requests"; }
: >"$T/resp2"
(
	i=0
	while [ ! -e "$T/stop" ] && [ "$i" -lt 80 ]; do
		requests 25 0 "$T/resp2"
		i=$((i + 1))
	done
) >/dev/null 2>"$T/bg.err" &
bgreq=$!
track_pid "$bgreq"
timeout "$E2E_TIMEOUT" "$LJLOG" dump --follow "$T/logs/w-$w1.ljlog" >"$T/follow.out" 2>"$T/follow.err" &
fpid=$!
track_pid "$fpid"
# Blocks written after dump started: more EVENTS than the log had.
n0=$(ljlog dump -H "$T/logs/w-$w1.ljlog" 2>/dev/null | grep -c ': EVENTS')
more_events() { [ "$(grep -c ': EVENTS' "$T/follow.out")" -gt "$n0" ]; }
if ! wait_for 60 more_events; then
	show "$T/follow.out"
	show "$T/follow.err"
	fail "ljlog dump --follow showed no new EVENTS block of worker $w1 within 60 s of requests"
fi
kill -0 "$w1" 2>/dev/null || fail "worker $w1 ended before its blocks were seen"
kill -0 "$fpid" 2>/dev/null || fail "ljlog dump --follow ended while worker $w1 ran"
grep -q ': END' "$T/follow.out" && fail "ljlog dump --follow saw END before the quit"
touch "$T/stop"
wait "$bgreq" || { show "$T/bg.err"; fail "the background requests failed"; }
ok "ljlog dump --follow on worker $w1's log showed $(($(grep -c ': EVENTS' "$T/follow.out") - n0)) new EVENTS blocks while it served"

ngx_quit calls
logs_ok calls w
rc=0
wait "$fpid" || rc=$?
expect_eq "ljlog dump --follow exit status after the worker's END" 0 "$rc"
grep -q ': END' "$T/follow.out" || fail "ljlog dump --follow did not show worker $w1's END"

total=0
sent=$(($(wc -l <"$T/resp") + $(wc -l <"$T/resp2")))
for f in "$T"/logs/w-*.ljlog; do
	p=${f##*/w-}
	p=${p%.ljlog}
	check_complete "$f"
	c=$(calls_of "$f")
	expect_eq "pid in the INTRO of $f" "$p" "$(json_get "$T/r.json" 'd["pid"]')"
	served=$(cat "$T/resp" "$T/resp2" | grep -c "^pid $p " || true)
	expect_eq "calls of handle in w-$p.ljlog (responses from pid $p)" "$served" "$c"
	total=$((total + c))
	case " $started_workers " in
	*" $p "*) ok "worker $p: complete log, handle called $c times = its responses" ;;
	*) ok "process $p (master$([ "$p" = "$master" ] || echo "'s parent, before the daemon")): complete log, no handle calls" ;;
	esac
done
expect_eq "calls of handle over all workers (requests sent)" "$sent" "$total"
nlogs=$(ls "$T"/logs/w-*.ljlog | wc -l)
ok "$sent requests: handle's calls over $nlogs logs = $total, each log complete after SIGQUIT"

# -- Sampling in the workers ---------------------------------------------------------
rm -f "$T"/logs/*.ljlog
ngx_start sample "log:file=$T/logs/s-%p.ljlog,sample=1ms"
: >"$T/resp3"
requests 100 20000 "$T/resp3"
started_workers=$WORKERS master=$MASTER
ngx_quit sample
logs_ok sample s
samples=0 busy=0
for p in $started_workers; do
	f=$T/logs/s-$p.ljlog
	check_complete "$f"
	report_json "$f" "$T/r.json"
	s=$(json_get "$T/r.json" 'd["samples"]')
	b=$(json_get "$T/r.json" "sum(f['samples_total'] for f in d['functions'] if f['kind'] == 'lua' and f['file'].endswith('handler.lua') and f['line'] == 3)")
	samples=$((samples + s)) busy=$((busy + b))
done
for f in "$T"/logs/s-*.ljlog; do check_complete "$f"; done
[ "$samples" -gt 0 ] || fail "[sample] no samples in the workers' logs"
[ "$busy" -gt 0 ] || fail "[sample] no sample in busy() in the workers' logs"
ok "sample=1ms: the workers' logs have $samples samples, $busy in busy()"

# -- Preloaded without LUAJIT_PROFILE: nothing ----------------------------------------
rm -f "$T"/logs/*.ljlog
ngx_start none
: >"$T/resp4"
requests 20 0 "$T/resp4"
ngx_quit none
ls "$T"/logs/*.ljlog >/dev/null 2>&1 && { ls -l "$T/logs" >&2; fail "a log was written without LUAJIT_PROFILE"; }
grep -q 'ljlog:' "$T/error.log" "$T/start.out" && { show "$T/error.log"; fail "ljlog said something without LUAJIT_PROFILE"; }
ok "preloaded without LUAJIT_PROFILE: 20 requests served, no log, no message"
